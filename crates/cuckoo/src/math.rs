//! The cuckoo filter: `f`-bit fingerprints in buckets of `b` slots, two candidate buckets
//! per key.
//!
//! Source: Fan, Andersen, Kaminsky & Mitzenmacher 2014 ("Cuckoo Filter: Practically Better
//! Than Bloom", §4): a lookup compares at most `2b` fingerprints, so FPR ≤ 2b/2^f.
//!
//! Worked figure: with buckets of 4, a 1 % target needs 10-bit fingerprints.
//!
//! ```
//! assert_eq!(bloomlab_cuckoo::math::cuckoo_fingerprint_bits(0.01, 4).unwrap(), 10);
//! ```

use alloc::format;
use bloomlab_core::error::{Error, Result};
#[cfg(not(feature = "std"))]
use bloomlab_core::math::float::FloatMath as _;
use bloomlab_core::math::*;

/// Fingerprint bits for FPR `p` with `bucket_size` slots per bucket: `f = ceil(log2(2b/p))`
/// (a lookup compares against at most 2b fingerprints, each matching with probability 2^(−f),
/// so FPR ≤ 2b/2^f). 10 bits at 1 %, 13 at 0.1 %, 9 at 3 % for b = 4.
pub fn cuckoo_fingerprint_bits(p: f64, bucket_size: u32) -> Result<u32> {
    let p = validate_fpr(p)?;
    if bucket_size == 0 {
        return Err(Error::invalid("bucket_size", "must be positive"));
    }
    Ok((2.0 * f64::from(bucket_size) / p).log2().ceil().max(1.0) as u32)
}

/// Upper bound on a cuckoo filter's FPR at full occupancy: `1 − (1 − 2^(−f))^(2b)`.
/// At load α only α·2b slots are occupied on average: pass `load` to scale the count.
pub fn cuckoo_fpr(fingerprint_bits: u32, bucket_size: u32, load: f64) -> f64 {
    let slots = 2.0 * f64::from(bucket_size) * load.clamp(0.0, 1.0);
    1.0 - (1.0 - (-(f64::from(fingerprint_bits))).exp2()).powf(slots)
}

/// Bits per item of a cuckoo filter with `f`-bit fingerprints at load `α`: `f/α`.
pub fn cuckoo_bits_per_item(fingerprint_bits: u32, load: f64) -> f64 {
    f64::from(fingerprint_bits) / load
}

/// Number of buckets for `n` items at most `load` full with `bucket_size` slots each:
/// `ceil(n / (b·α))`, at least 1. No power-of-two rounding, so the table has
/// `b·ceil(n/(b·α)) < n/α + b` slots: bits/item = f·slots/n ≤ f/α + b·f/n.
/// Errors on `n = 0`, a load outside (0, 1], `bucket_size = 0`, or a count past `u64`.
pub fn cuckoo_buckets(n: u64, bucket_size: u32, load: f64) -> Result<u64> {
    let n = validate_items(n)?;
    if bucket_size == 0 {
        return Err(Error::invalid("bucket_size", "must be positive"));
    }
    if !(load.is_finite() && load > 0.0 && load <= 1.0) {
        return Err(Error::invalid(
            "load",
            format!("must be in (0, 1] (got {load})"),
        ));
    }
    bits_from_f64((n as f64 / (f64::from(bucket_size) * load)).ceil())
}

/// FPR of a cuckoo filter whose fingerprints are uniform over the `2^f − 1` non-zero values
/// (0 marks an empty slot), at load `α` with `bucket_size` slots per bucket.
///
/// A non-member is positive when one of the occupied slots of its two buckets holds its
/// fingerprint; each does with probability `q = 1/(2^f − 1)`, and the two buckets hold
/// `2b·α` fingerprints on average, so FPR = `1 − (1 − q)^(2bα)` (Fan et al. 2014, §4, with
/// `2^f` replaced by the `2^f − 1` usable values). Averaging over the occupancy instead of
/// plugging in its mean changes the result by a factor `1 + O(q)`.
pub fn cuckoo_fpr_nonzero(fingerprint_bits: u32, bucket_size: u32, load: f64) -> f64 {
    if fingerprint_bits == 0 {
        return 1.0;
    }
    let values = (f64::from(fingerprint_bits)).exp2() - 1.0;
    let slots = 2.0 * f64::from(bucket_size) * load.clamp(0.0, 1.0);
    1.0 - (1.0 - 1.0 / values).powf(slots)
}

#[cfg(test)]
mod tests {
    use super::*;

    use bloomlab_conformance::close;

    #[test]
    fn cuckoo_fingerprints() {
        assert_eq!(cuckoo_fingerprint_bits(0.01, 4).unwrap(), 10);
        assert_eq!(cuckoo_fingerprint_bits(0.001, 4).unwrap(), 13);
        assert_eq!(cuckoo_fingerprint_bits(0.03, 4).unwrap(), 9);
        assert!(cuckoo_fpr(10, 4, 1.0) <= 0.01);
        assert!(close(cuckoo_bits_per_item(10, 0.95), 10.526, 0.001));
    }

    #[test]
    fn cuckoo_sizing_without_power_of_two_rounding() {
        // ceil(n / 3.8) buckets at 95 % load with 4 slots.
        assert_eq!(cuckoo_buckets(1, 4, 0.95).unwrap(), 1);
        assert_eq!(cuckoo_buckets(38, 4, 0.95).unwrap(), 10);
        assert_eq!(cuckoo_buckets(39, 4, 0.95).unwrap(), 11);
        assert_eq!(cuckoo_buckets(10_000_000, 4, 0.95).unwrap(), 2_631_579);
        for n in [1u64, 7, 1000, 123_457, 10_000_000] {
            let slots = 4 * cuckoo_buckets(n, 4, 0.95).unwrap();
            assert!(slots as f64 >= n as f64 / 0.95);
            assert!((slots as f64) < n as f64 / 0.95 + 4.0);
        }
        assert!(cuckoo_buckets(0, 4, 0.95).is_err());
        assert!(cuckoo_buckets(10, 0, 0.95).is_err());
        assert!(cuckoo_buckets(10, 4, 0.0).is_err());
        assert!(cuckoo_buckets(10, 4, 1.5).is_err());
        assert!(matches!(
            cuckoo_buckets(u64::MAX, 4, 0.01),
            Err(Error::SizeOverflow(_))
        ));
    }

    #[test]
    fn cuckoo_fpr_with_reserved_zero() {
        // One occupied slot matches with probability 1/(2^f − 1).
        assert!(close(
            cuckoo_fpr_nonzero(10, 4, 1.0 / 8.0),
            1.0 / 1023.0,
            1e-15
        ));
        // Full table: 8 slots; slightly above the 2^-f form, below the 2b/2^f bound at 1 %.
        let full = cuckoo_fpr_nonzero(10, 4, 1.0);
        assert!(full > cuckoo_fpr(10, 4, 1.0) && full < 0.01);
        assert!(close(full / cuckoo_fpr(10, 4, 1.0), 1.0, 0.002));
        assert_eq!(cuckoo_fpr_nonzero(10, 4, 0.0), 0.0);
    }

    #[test]
    fn invalid_fprs_are_errors() {
        for p in bloomlab_conformance::INVALID_FPRS {
            assert!(cuckoo_fingerprint_bits(p, 4).is_err(), "{p}");
        }
    }

    #[test]
    fn a_cuckoo_table_refuses_a_load_of_zero_or_past_one() {
        for load in [0.0, -0.5, 1.0001, f64::NAN, f64::INFINITY] {
            match cuckoo_buckets(1000, 4, load) {
                Err(Error::InvalidParameter { name: "load", .. }) => {}
                other => panic!("load {load}: {other:?}"),
            }
        }
        // ceil(n / (b·α)) buckets.
        assert_eq!(cuckoo_buckets(1000, 4, 1.0).unwrap(), 250);
        assert_eq!(cuckoo_buckets(1000, 4, 0.5).unwrap(), 500);
        assert_eq!(cuckoo_buckets(1001, 4, 0.95).unwrap(), 264);
    }
}
