use crate::error::{Error, Result};
#[cfg(not(feature = "std"))]
use crate::math::float::FloatMath as _;
use alloc::format;

/// The largest number of probes any filter here accepts. k grows as log2(1/p)·ln 2 / ln 2 ≈
/// log2(1/p); 64 probes already means p ≈ 2^-64, far below anything measurable.
pub const MAX_HASHES: u32 = 64;

/// `(ln 2)^2`, the constant in the classic sizing formula.
pub const LN2_SQUARED: f64 = core::f64::consts::LN_2 * core::f64::consts::LN_2;

/// Check that `p` is a usable target FPR: finite and strictly between 0 and 1.
pub fn validate_fpr(p: f64) -> Result<f64> {
    if p.is_finite() && p > 0.0 && p < 1.0 {
        Ok(p)
    } else {
        Err(Error::InvalidFpr(p))
    }
}

/// Check that `n` (expected items) is at least 1.
pub fn validate_items(n: u64) -> Result<u64> {
    if n == 0 { Err(Error::ZeroItems) } else { Ok(n) }
}

/// Check a probe count: `1..=MAX_HASHES`.
pub fn validate_hashes(k: u32) -> Result<u32> {
    if (1..=MAX_HASHES).contains(&k) {
        Ok(k)
    } else {
        Err(Error::invalid(
            "hashes",
            format!("must be between 1 and {MAX_HASHES} (got {k})"),
        ))
    }
}

/// Bits for `n` items at a chosen `bits_per_item`: `m = ceil(n · bits_per_item)`.
pub fn bits_for_bits_per_item(n: u64, bits_per_item: f64) -> Result<u64> {
    let n = validate_items(n)?;
    if !(bits_per_item.is_finite() && bits_per_item > 0.0) {
        return Err(Error::invalid(
            "bits_per_item",
            format!("must be a positive finite number (got {bits_per_item})"),
        ));
    }
    bits_from_f64((n as f64 * bits_per_item).ceil())
}

/// `bits` (a computed table size, already rounded up) as a `u64`: [`Error::SizeOverflow`] at or
/// past 2^64 bits; at least 1.
pub fn bits_from_f64(bits: f64) -> Result<u64> {
    // 2^64 is exactly representable; anything at or past it does not fit a u64.
    if bits >= 18_446_744_073_709_551_616.0 {
        return Err(Error::SizeOverflow(format!(
            "{bits:e} bits do not fit in 64 bits"
        )));
    }
    Ok((bits as u64).max(1))
}

/// The information-theoretic lower bound for any approximate-membership structure:
/// `log2(1/p)` bits per item (Carter et al. 1978). 9.97 / 6.64 / 5.06 at 0.1 / 1 / 3 %.
pub fn lower_bound_bits_per_item(p: f64) -> Result<f64> {
    let p = validate_fpr(p)?;
    Ok(-p.log2())
}

/// Smallest bits/item (to 1e-6) at which `fpr`, decreasing in bits/item, reaches `p`:
/// `hi` doubles until `fpr(hi) ≤ p` (`None` once it passes `cap`), then `[lo, hi]` is
/// bisected. The search every bisection-sized layout shares.
pub fn smallest_density(
    fpr: impl Fn(f64) -> f64,
    p: f64,
    mut lo: f64,
    mut hi: f64,
    cap: f64,
) -> Option<f64> {
    // `hi` doubles at most 64 times: past any cap a caller gives (every one is finite and
    // below 2^60 times its start), so a broken step stops instead of looping.
    for _ in 0..64 {
        if fpr(hi) <= p {
            break;
        }
        hi *= 2.0;
        if hi > cap {
            return None;
        }
    }
    // At most `cap` ≤ 2^40 wide, the bracket is below 1e-6 after 60 halvings: the bound of 100
    // steps is never reached by a correct step, and stops a broken one instead of looping.
    for _ in 0..100 {
        if hi - lo <= 1e-6 {
            break;
        }
        let mid = 0.5 * (lo + hi);
        if fpr(mid) > p { lo = mid } else { hi = mid }
    }
    Some(hi)
}

/// Where the Poisson sums stop: the mass beyond `λ + 12√λ + 40` is below 1e-18.
pub fn poisson_upper(lambda: f64) -> u64 {
    (lambda + 12.0 * lambda.sqrt() + 40.0).ceil() as u64
}

/// `(i, Pois(i; λ))` for `i = 0, 1, 2, …` (without end: callers take what they need, most
/// to [`poisson_upper`]) — the weights of every sum over a block's load in this module.
/// [`PoissonPmf::new`] computes each as `exp(−λ + i·ln λ − ln i!)`;
/// [`PoissonPmf::by_recurrence`] as `Pois(i − 1)·λ/i` while `e^−λ` is a normal f64 (λ below
/// 600; at most about two ulps more per step), which spares an `exp` and a `ln` per term.
#[derive(Clone, Debug)]
pub struct PoissonPmf {
    lambda: f64,
    ln_lambda: f64,
    /// `ln i!` so far (logarithm form only).
    ln_fact: f64,
    /// The last weight (recurrence form only).
    pois: f64,
    recur: bool,
    i: usize,
}

impl PoissonPmf {
    /// The weights of `Pois(λ)`, each from its logarithm.
    pub fn new(lambda: f64) -> Self {
        PoissonPmf {
            lambda,
            ln_lambda: lambda.ln(),
            ln_fact: 0.0,
            pois: 0.0,
            recur: false,
            i: 0,
        }
    }

    /// The weights of `Pois(λ)`, each from the one before while `e^−λ` is normal.
    pub fn by_recurrence(lambda: f64) -> Self {
        PoissonPmf {
            recur: lambda < 600.0,
            ..PoissonPmf::new(lambda)
        }
    }
}

impl Iterator for PoissonPmf {
    type Item = (usize, f64);

    fn next(&mut self) -> Option<(usize, f64)> {
        let i = self.i;
        self.i += 1;
        let pois = if self.recur {
            self.pois = if i == 0 {
                (-self.lambda).exp()
            } else {
                self.pois * (self.lambda / i as f64)
            };
            self.pois
        } else {
            if i > 0 {
                self.ln_fact += (i as f64).ln();
            }
            (-self.lambda + i as f64 * self.ln_lambda - self.ln_fact).exp()
        };
        Some((i, pois))
    }
}

/// `|a − b| ≤ tol`, the tests' comparison.
#[cfg(test)]
pub(crate) fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::*;

    #[test]
    fn lower_bound() {
        assert!(close(
            lower_bound_bits_per_item(0.001).unwrap(),
            9.966,
            0.001
        ));
        assert!(close(
            lower_bound_bits_per_item(0.01).unwrap(),
            6.644,
            0.001
        ));
        assert!(close(
            lower_bound_bits_per_item(0.03).unwrap(),
            5.059,
            0.001
        ));
    }

    #[test]
    fn poisson_weights_are_the_pmf_in_both_forms() {
        // Pois(i; λ) = e^−λ λ^i / i!, computed directly with a running product.
        for lambda in [0.25f64, 3.5, 40.0] {
            let mut direct: f64 = (-lambda).exp();
            let upper = poisson_upper(lambda) as usize;
            let logs: Vec<_> = PoissonPmf::new(lambda).take(upper).collect();
            let recs: Vec<_> = PoissonPmf::by_recurrence(lambda).take(upper).collect();
            let mut total = 0.0;
            for i in 0..upper {
                if i > 0 {
                    direct *= lambda / i as f64;
                }
                for (j, w) in [logs[i], recs[i]] {
                    assert_eq!(j, i);
                    assert!(close(w, direct, 1e-12 * direct.max(1e-300)), "{lambda} {i}");
                }
                // Below λ = 600 the recurrence form is that product, to the bit.
                assert_eq!(recs[i].1.to_bits(), direct.to_bits(), "{lambda} {i}");
                total += logs[i].1;
            }
            assert!(close(total, 1.0, 1e-12), "{lambda}: {total}");
        }
        assert_eq!(poisson_upper(100.0), 260);
        // Past it (e^−λ not a normal f64) the recurrence would give zeros: the logarithms
        // answer there, in either form.
        let far: f64 = PoissonPmf::by_recurrence(800.0)
            .take(poisson_upper(800.0) as usize)
            .map(|(_, w)| w)
            .sum();
        assert!(close(far, 1.0, 1e-9), "{far}");
    }

    #[test]
    fn smallest_density_finds_where_a_falling_rate_meets_the_target() {
        let rate = |bits: f64| (-bits * core::f64::consts::LN_2).exp(); // 2^−bits
        let got = smallest_density(rate, 2f64.powi(-10), 1.0, 2.0, 1e3).unwrap();
        assert!(got >= 10.0 && got - 10.0 <= 1e-6, "{got}");
        // A bracket that already holds the answer is bisected; a cap below it gives none.
        let one = smallest_density(rate, 0.5, 0.5, 4.0, 1e3).unwrap();
        assert!(one >= 1.0 && one - 1.0 <= 1e-6, "{one}");
        assert_eq!(smallest_density(rate, 2f64.powi(-10), 1.0, 2.0, 8.0), None);
        // The cap bounds the doubled end: 2, 4, 8, 16 passes 12 before it reaches the answer,
        // but not 16.
        assert_eq!(smallest_density(rate, 2f64.powi(-10), 1.0, 2.0, 12.0), None);
        assert!(smallest_density(rate, 2f64.powi(-10), 1.0, 2.0, 16.0).is_some());
        // The bisection stops at 1e-6: about 20 halvings of a bracket 8 wide, not 100.
        let calls = core::cell::Cell::new(0);
        let counted = |bits: f64| {
            calls.set(calls.get() + 1);
            rate(bits)
        };
        smallest_density(counted, 2f64.powi(-10), 8.0, 16.0, 1e3).unwrap();
        assert!(calls.get() <= 30, "{} evaluations", calls.get());
    }

    #[test]
    fn bit_counts_fit_or_are_refused() {
        assert_eq!(bits_for_bits_per_item(1_000, 9.5), Ok(9_500));
        assert!(bits_for_bits_per_item(1_000, -1.0).is_err());
        assert_eq!(bits_from_f64(0.0), Ok(1));
        assert_eq!(bits_from_f64(1e6), Ok(1_000_000));
        assert!(matches!(
            bits_from_f64(2f64.powi(64)),
            Err(Error::SizeOverflow(_))
        ));
        assert_eq!(bits_from_f64(2f64.powi(63)), Ok(1 << 63));
    }

    #[test]
    fn invalid_parameters_are_errors() {
        for p in bloomlab_conformance::INVALID_FPRS {
            assert!(
                matches!(classic_bits(10, p), Err(Error::InvalidFpr(_))),
                "{p}"
            );
            assert!(lower_bound_bits_per_item(p).is_err());
        }
        assert_eq!(classic_bits(0, 0.01), Err(Error::ZeroItems));
        assert!(matches!(
            classic_bits(u64::MAX, 1e-300),
            Err(Error::SizeOverflow(_))
        ));
        assert!(bits_for_bits_per_item(10, 0.0).is_err());
        assert!(bits_for_bits_per_item(10, f64::NAN).is_err());
        assert!(validate_hashes(0).is_err());
        assert!(validate_hashes(MAX_HASHES + 1).is_err());
    }
}
