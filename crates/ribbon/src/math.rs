//! The Ribbon filter: a linear system over GF(2) solved in a band of width `w`, `r` result
//! bits per key.
//!
//! Source: Dillinger & Walzer 2021 ("Ribbon filter: practically smaller than Bloom and
//! Xor"): FPR `2^−r`, and the slot overhead that keeps construction succeeding.
//!
//! Worked figure: a 1 % target needs 7 result bits (2^−7 ≈ 0.78 %).
//!
//! ```
//! assert_eq!(bloomlab_ribbon::math::ribbon_result_bits(0.01).unwrap(), 7);
//! ```

use alloc::format;
use bloomlab_core::error::{Error, Result};
#[cfg(not(feature = "std"))]
use bloomlab_core::math::float::FloatMath as _;
use bloomlab_core::math::*;

/// Largest Ribbon result width `r` (the FPR floor is `2^-32`).
pub const RIBBON_MAX_RESULT_BITS: u32 = 32;

/// Slot overhead per decade of `n` of the Ribbon sizing ([`ribbon_slot_overhead`]).
pub const RIBBON_OVERHEAD_PER_DECADE: f64 = 0.008;

/// Ribbon result bits for a target FPR `p`: `r = ceil(log2(1/p))`, so the FPR `2^-r ≤ p`
/// (a non-member's row meets `r` independent uniform parities; Dillinger & Walzer §2).
/// Errors: `p` not in (0, 1), or below `2^-32`.
pub fn ribbon_result_bits(p: f64) -> Result<u32> {
    validate_fpr(p)?;
    let mut r = (-p.log2()).ceil().max(1.0);
    // Guard the rounding of log2 at exact powers of two: 2^-r must not exceed p.
    if (-r).exp2() > p {
        r += 1.0;
    }
    if r > f64::from(RIBBON_MAX_RESULT_BITS) {
        return Err(Error::invalid(
            "fpr",
            format!("{p} needs more than {RIBBON_MAX_RESULT_BITS} result bits"),
        ));
    }
    Ok(r as u32)
}

/// Ribbon slot overhead `m/n − 1` for `n` keys with `w = 128`: `0.008 · log10 n`. The
/// overhead banding needs grows with `log n / w` (Dillinger & Walzer §4); the constant was
/// measured with the Ribbon filter (`docs/design/ribbon.md`) so that one seed succeeds with
/// probability at least 0.9.
pub fn ribbon_slot_overhead(n: u64) -> f64 {
    RIBBON_OVERHEAD_PER_DECADE * (n.max(1) as f64).log10()
}

/// Ribbon slots for `n` keys in a band of width `w`: 0 for `n = 0`, else
/// `n·(1 + ribbon_slot_overhead(n))` rounded up to a multiple of `w`, at least `w`.
pub fn ribbon_slots(n: u64, w: u64) -> Result<u64> {
    if n == 0 {
        return Ok(0);
    }
    let want = (n as f64 * (1.0 + ribbon_slot_overhead(n))).ceil();
    if want >= (1u64 << 60) as f64 {
        return Err(Error::SizeOverflow(format!("{n} keys need {want} slots")));
    }
    Ok((want as u64).div_ceil(w).max(1) * w)
}

#[cfg(test)]
mod ribbon_tests {
    use super::*;

    #[test]
    fn ribbon_sizing() {
        // The result bits of a target: `tests/ribbon.rs`, through `result_bits_for`. The
        // slots: whole blocks of 128, 10^4 · 1.032 = 10 320 → 81 blocks.
        for (n, want) in [(0, 0), (1, 128), (10_000, 10_368)] {
            assert_eq!(ribbon_slots(n, 128).unwrap(), want, "{n} keys");
        }
    }

    #[test]
    fn result_bits_at_and_just_below_each_power_of_two() {
        // At p = 2^-r exactly, r bits reach p. One ulp below it they do not (2^-r > p), so
        // r + 1 are needed; there -log2(p) = r + 2^-52/ln 2 rounds to r in f64, which only
        // the guard after the ceiling catches. Known answers from the definition: the
        // smallest r with 2^-r <= p, counted by halving.
        for r in 1..=RIBBON_MAX_RESULT_BITS {
            let p = (-f64::from(r)).exp2();
            assert_eq!(ribbon_result_bits(p).unwrap(), r, "2^-{r}");
            let below = f64::from_bits(p.to_bits() - 1);
            let mut want = 0;
            let mut fpr = 1.0f64;
            while fpr > below {
                fpr /= 2.0;
                want += 1;
            }
            if want <= RIBBON_MAX_RESULT_BITS {
                assert_eq!(
                    ribbon_result_bits(below).unwrap(),
                    want,
                    "just below 2^-{r}"
                );
                assert_eq!(want, r + 1);
            } else {
                assert!(ribbon_result_bits(below).is_err(), "just below 2^-{r}");
            }
        }
    }
}
