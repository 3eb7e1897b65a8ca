//! The `f64` functions the formulas call (`ln`, `exp`, `powi`, `ceil`, …) for a build without
//! std, where `f64` has no such methods: [`FloatMath`] gives them to `f64`, from the `libm`
//! crate.
//!
//! The formulas are written once, as method calls (`x.ln()`). With the `std` feature `f64`'s
//! own methods answer them — an inherent method is always chosen before a trait's, and the
//! trait is not even imported then — so a std build computes exactly what it computed before
//! this module existed. Without std, each module of the formulas imports [`FloatMath`] and the
//! same calls reach `libm`. `ceil`, `floor`, `round`, `sqrt` and `mul_add` are exact or
//! correctly rounded in both; `ln`, `exp`, `powf` and the others may differ from std's (the
//! platform's C library) in the last bit, so a size that falls exactly on a rounding boundary
//! could come out one unit apart. Every byte format records the sizes it was built with, so a
//! filter built without std reads and answers the same everywhere.
//!
//! Measured: over 11 item counts (1 to 10^6) × 13 target FPRs (0.5 to 10^-9), every filter of
//! the workspace that builds without std came out with the same size, parameters and bytes
//! either way; of the expected-FPR estimates, one differed in its last bits (the scalable
//! filter at n = 100, p = 0.5, by 4 units in the last place). `.ci/cross nostd` repeats the
//! comparison (`crates/bloomlab/examples/sizing_digest.rs`).
//!
//! ```
//! use bloomlab_core::math::float::FloatMath;
//!
//! // The trait's functions, called by path (a method call would reach std's own here).
//! assert_eq!(FloatMath::ceil(2.25_f64), 3.0);
//! assert_eq!(FloatMath::powi(1.5_f64, 3), 3.375);
//! assert!((FloatMath::ln(core::f64::consts::E) - 1.0_f64).abs() < 1e-15);
//! ```

/// The `f64` methods of std the formulas use, from `libm` (see the [module docs](self)).
pub trait FloatMath: Sized {
    /// Natural logarithm (`libm::log`).
    fn ln(self) -> Self;
    /// `ln(1 + x)`, accurate near 0 (`libm::log1p`).
    fn ln_1p(self) -> Self;
    /// Base-2 logarithm (`libm::log2`).
    fn log2(self) -> Self;
    /// Base-10 logarithm (`libm::log10`).
    fn log10(self) -> Self;
    /// `e^x` (`libm::exp`).
    fn exp(self) -> Self;
    /// `e^x − 1`, accurate near 0 (`libm::expm1`).
    fn exp_m1(self) -> Self;
    /// `2^x` (`libm::exp2`).
    fn exp2(self) -> Self;
    /// `x^y` (`libm::pow`).
    fn powf(self, y: Self) -> Self;
    /// `x^n` by repeated squaring, the algorithm of compiler-rt's `__powidf2`, which std's
    /// `powi` calls at run time.
    fn powi(self, n: i32) -> Self;
    /// Square root, correctly rounded (`libm::sqrt`).
    fn sqrt(self) -> Self;
    /// `x·a + b` with one rounding (`libm::fma`).
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// The smallest integer not below `x` (`libm::ceil`).
    fn ceil(self) -> Self;
    /// The largest integer not above `x` (`libm::floor`).
    fn floor(self) -> Self;
    /// The nearest integer, halves away from zero (`libm::round`).
    fn round(self) -> Self;
}

impl FloatMath for f64 {
    #[inline]
    fn ln(self) -> f64 {
        libm::log(self)
    }
    #[inline]
    fn ln_1p(self) -> f64 {
        libm::log1p(self)
    }
    #[inline]
    fn log2(self) -> f64 {
        libm::log2(self)
    }
    #[inline]
    fn log10(self) -> f64 {
        libm::log10(self)
    }
    #[inline]
    fn exp(self) -> f64 {
        libm::exp(self)
    }
    #[inline]
    fn exp_m1(self) -> f64 {
        libm::expm1(self)
    }
    #[inline]
    fn exp2(self) -> f64 {
        libm::exp2(self)
    }
    #[inline]
    fn powf(self, y: f64) -> f64 {
        libm::pow(self, y)
    }
    fn powi(self, n: i32) -> f64 {
        let mut a = self;
        let mut b = n;
        let mut r = 1.0;
        // `b` halves each round (towards zero), so 32 rounds always reach 0: a bounded loop,
        // so that a fault here gives a wrong answer rather than a hang.
        for _ in 0..32 {
            if b & 1 != 0 {
                r *= a;
            }
            b /= 2;
            if b == 0 {
                break;
            }
            a *= a;
        }
        if n < 0 { 1.0 / r } else { r }
    }
    #[inline]
    fn sqrt(self) -> f64 {
        libm::sqrt(self)
    }
    #[inline]
    fn mul_add(self, a: f64, b: f64) -> f64 {
        libm::fma(self, a, b)
    }
    #[inline]
    fn ceil(self) -> f64 {
        libm::ceil(self)
    }
    #[inline]
    fn floor(self) -> f64 {
        libm::floor(self)
    }
    #[inline]
    fn round(self) -> f64 {
        libm::round(self)
    }
}

#[cfg(test)]
mod tests {
    use super::FloatMath;

    /// Where std's result is exact or correctly rounded, `libm`'s is the same to the bit. The
    /// others: each library is within one unit in the last place of the true value (their
    /// stated bounds), so the two are at most two units apart; `powi` is the same algorithm
    /// as std's (each of its at most 2·log2|n| + 1 products rounds once).
    #[test]
    fn agrees_with_std() {
        let ulps = |a: f64, b: f64| (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs();
        let mut x = 0.000_123_f64;
        while x < 1e6 {
            for v in [x, -x] {
                assert_eq!(FloatMath::ceil(v), v.ceil());
                assert_eq!(FloatMath::floor(v), v.floor());
                assert_eq!(FloatMath::round(v), v.round());
                assert_eq!(FloatMath::mul_add(v, 1.5, 0.25), v.mul_add(1.5, 0.25));
            }
            assert_eq!(FloatMath::sqrt(x), x.sqrt());
            for n in [-7, -1, 0, 1, 2, 3, 8, 13] {
                let (ours, theirs) = (FloatMath::powi(x, n), x.powi(n));
                assert!(
                    ulps(ours, theirs) <= 2 * u64::from(n.unsigned_abs()),
                    "{x}^{n}"
                );
            }
            assert!(ulps(FloatMath::ln(x), x.ln()) <= 2, "ln {x}");
            assert!(ulps(FloatMath::log2(x), x.log2()) <= 2, "log2 {x}");
            assert!(ulps(FloatMath::log10(x), x.log10()) <= 2, "log10 {x}");
            let y = x.log2().clamp(-30.0, 30.0);
            assert!(ulps(FloatMath::exp(y), y.exp()) <= 2, "exp {y}");
            assert!(ulps(FloatMath::exp2(y), y.exp2()) <= 2, "exp2 {y}");
            assert!(
                ulps(FloatMath::powf(x, 0.37), x.powf(0.37)) <= 2,
                "{x}^0.37"
            );
            let z = (x - 1.0).clamp(-0.9, 30.0);
            assert!(ulps(FloatMath::ln_1p(z), z.ln_1p()) <= 2, "ln_1p {z}");
            assert!(ulps(FloatMath::exp_m1(z), z.exp_m1()) <= 2, "exp_m1 {z}");
            x *= 1.37;
        }
    }
}
