//! The scalable Bloom filter: a chain of classic stages, each with a tighter FPR, so the
//! compound FPR stays below the target however many stages grow.
//!
//! Source: Almeida, Baquero, Preguiça & Hutchison 2007 ("Scalable Bloom Filters", §4).
//!
//! Worked figure: with a 1 % target and ratio 0.5, stage 0 gets 0.5 %, stage 1 0.25 %, and
//! the stage FPRs sum to the target.
//!
//! ```
//! use bloomlab_scalable::math::{compound_fpr, scalable_stage_fpr};
//! assert!((scalable_stage_fpr(0.01, 0.5, 0) - 0.005).abs() < 1e-15);
//! let total = compound_fpr((0..60).map(|i| scalable_stage_fpr(0.01, 0.5, i)));
//! assert!(total <= 0.01);
//! ```

use alloc::format;
use bloomlab_core::error::{Error, Result};
#[cfg(not(feature = "std"))]
use bloomlab_core::math::float::FloatMath as _;
use bloomlab_core::math::*;

/// FPR of stage `i` (0-based) for an overall target `p` and tightening ratio `r`:
/// `p0·r^i` with `p0 = p·(1 − r)`, so that Σ p0·r^i = p0/(1 − r) = p.
pub fn scalable_stage_fpr(p: f64, r: f64, stage: u32) -> f64 {
    p * (1.0 - r) * r.powi(stage as i32)
}

/// Probes per key of a scalable stage with FPR `p_i`: `k = ceil(log2(1/p_i))`
/// (Almeida et al. 2007, §4: a stage whose bits are at most half set then answers a
/// non-member "maybe" with probability ≤ (1/2)^k ≤ p_i). Errors when `p_i` is not in (0, 1)
/// or needs more than [`MAX_HASHES`] probes.
pub fn scalable_stage_hashes(stage_fpr: f64) -> Result<u32> {
    let p = validate_fpr(stage_fpr)?;
    let k = (-p.log2()).ceil().max(1.0);
    if k > f64::from(MAX_HASHES) {
        return Err(Error::invalid(
            "fpr",
            format!("a stage FPR of {p:e} needs {k} probes, more than {MAX_HASHES}"),
        ));
    }
    Ok(k as u32)
}

/// Size of a scalable stage for `n_i` items at stage FPR `p_i`: `(m, k)` from
/// [`scalable_stage_bits`] and [`scalable_stage_hashes`]. A size that overflows is reported
/// as [`Error::SizeOverflow`] before a probe count past [`MAX_HASHES`] is reported.
pub fn scalable_stage_size(stage_items: u64, stage_fpr: f64) -> Result<(u64, u32)> {
    let n = validate_items(stage_items)?;
    let p = validate_fpr(stage_fpr)?;
    let k = (-p.log2()).ceil().max(1.0);
    let m = bits_from_f64((n as f64 * k / core::f64::consts::LN_2).ceil())?;
    Ok((m, scalable_stage_hashes(p)?))
}

/// Bits of a scalable stage for `n_i` items with `k` probes: `m = ceil(n_i·k / ln 2)`, so that
/// after `n_i` inserts the expected fill `1 − e^(−k·n_i/m)` is exactly 1/2 — the stage's
/// capacity and its growth trigger coincide. Errors on `n_i = 0` or an `m` past `u64`.
pub fn scalable_stage_bits(stage_items: u64, hashes: u32) -> Result<u64> {
    let n = validate_items(stage_items)?;
    bits_from_f64((n as f64 * f64::from(hashes.max(1)) / core::f64::consts::LN_2).ceil())
}

/// Compound FPR of a chain whose stages have FPRs `stage_fprs`: `1 − Π(1 − p_i)` (a
/// non-member is negative only if every stage says no; stages hash independently enough).
pub fn compound_fpr(stage_fprs: impl IntoIterator<Item = f64>) -> f64 {
    1.0 - stage_fprs
        .into_iter()
        .map(|p| 1.0 - p.clamp(0.0, 1.0))
        .product::<f64>()
}

#[cfg(test)]
mod tests {
    use super::*;

    use bloomlab_conformance::close;

    #[test]
    fn scalable_stage_sizing() {
        // 1 % target, r = 0.5: stage 0 at 0.5 % needs k = ceil(7.64) = 8.
        assert_eq!(
            scalable_stage_hashes(scalable_stage_fpr(0.01, 0.5, 0)).unwrap(),
            8
        );
        assert_eq!(
            scalable_stage_hashes(scalable_stage_fpr(0.01, 0.5, 3)).unwrap(),
            11
        );
        assert_eq!(scalable_stage_hashes(0.5).unwrap(), 1);
        assert!(scalable_stage_hashes(1e-30).is_err());
        assert!(scalable_stage_hashes(0.0).is_err());
        let m = scalable_stage_bits(1000, 8).unwrap();
        assert_eq!(m, (1000.0 * 8.0 / std::f64::consts::LN_2).ceil() as u64);
        // At n_i inserts the expected fill is 1/2, so the FPR is (1/2)^k ≤ p_i.
        let fill = 1.0 - (-8.0 * 1000.0 / m as f64).exp();
        assert!(close(fill, 0.5, 1e-3));
        assert!(matches!(
            scalable_stage_bits(u64::MAX, 8),
            Err(Error::SizeOverflow(_))
        ));
        assert!(scalable_stage_bits(0, 8).is_err());
        assert_eq!(scalable_stage_size(1000, 0.005).unwrap(), (m, 8));
        assert!(matches!(
            scalable_stage_size(1 << 62, 1e-300),
            Err(Error::SizeOverflow(_))
        ));
        assert!(matches!(
            scalable_stage_size(10, 1e-300),
            Err(Error::InvalidParameter { .. })
        ));
        assert!(matches!(
            scalable_stage_size(10, 0.0),
            Err(Error::InvalidFpr(_))
        ));
    }

    #[test]
    fn scalable_stages_sum_to_target() {
        let (p, r) = (0.01, 0.5);
        let total: f64 = (0..60).map(|i| scalable_stage_fpr(p, r, i)).sum();
        assert!(close(total, p, 1e-12));
        let compound = compound_fpr((0..60).map(|i| scalable_stage_fpr(p, r, i)));
        assert!(compound <= p);
        assert!(compound > 0.99 * p);
    }
}
