use crate::error::Result;
#[cfg(not(feature = "std"))]
use crate::math::float::FloatMath as _;
use crate::math::*;

/// Bits per item a classic Bloom filter needs for FPR `p` at the optimal `k`:
/// `−ln p / (ln 2)^2` (Bloom 1970; at the optimum k = (m/n)·ln 2, FPR = 2^(−k), so
/// m/n = log2(1/p)/ln 2). Independent of `n`: 9.585 at 1 %, +4.79 per 10× lower `p`.
pub fn classic_bits_per_item(p: f64) -> Result<f64> {
    let p = validate_fpr(p)?;
    Ok(-p.ln() / LN2_SQUARED)
}

/// Classic sizing: `m = ceil(−n·ln p / (ln 2)^2)` bits for `n` items at FPR `p`
/// (seed 000, "Sizing"). Errors on `n = 0`, a bad `p`, or an `m` that overflows `u64`.
pub fn classic_bits(n: u64, p: f64) -> Result<u64> {
    let n = validate_items(n)?;
    let bits = (n as f64 * classic_bits_per_item(p)?).ceil();
    bits_from_f64(bits)
}

/// Optimal probe count for `m` bits and `n` items: `k = round((m/n)·ln 2)`, at least 1 and at
/// most [`MAX_HASHES`] (derivative of (1 − e^(−kn/m))^k in k vanishes at k = (m/n) ln 2).
pub fn classic_hashes(m: u64, n: u64) -> u32 {
    let n = n.max(1) as f64;
    let k = (m as f64 / n * core::f64::consts::LN_2).round();
    (k as u32).clamp(1, MAX_HASHES)
}

/// Expected FPR of a classic filter after `n` distinct inserts: `(1 − e^(−k·n/m))^k`
/// (each of the m bits stays zero with probability (1 − 1/m)^(kn) ≈ e^(−kn/m); a non-member
/// is positive when all k of its probes hit ones).
pub fn classic_fpr(m: u64, k: u32, n: u64) -> f64 {
    if m == 0 {
        return 1.0;
    }
    (1.0 - (-(f64::from(k)) * n as f64 / m as f64).exp()).powi(k as i32)
}

/// FPR observed from the fill: `(X/m)^k` where `fill = X/m` is the fraction of set bits
/// (a non-member's k probes each land on a set bit with probability X/m).
pub fn fpr_from_fill(fill: f64, k: u32) -> f64 {
    fill.clamp(0.0, 1.0).powi(k as i32)
}

/// Estimated number of distinct items from the number of set bits `ones`
/// (Swamidass & Baldi 2007): `n̂ = −(m/k)·ln(1 − X/m)`. Infinite when every bit is set.
pub fn estimate_cardinality(m: u64, k: u32, ones: u64) -> f64 {
    if m == 0 || k == 0 {
        return 0.0;
    }
    let fill = ones.min(m) as f64 / m as f64;
    if fill >= 1.0 {
        return f64::INFINITY;
    }
    -(m as f64 / f64::from(k)) * (1.0 - fill).ln()
}

/// Design capacity implied by `m` and `k`: the `n` for which `k` is optimal,
/// `n = m·ln 2 / k` (invert k = (m/n)·ln 2). At this load about half the bits are set.
pub fn classic_capacity(m: u64, k: u32) -> u64 {
    ((m as f64 * core::f64::consts::LN_2 / f64::from(k.max(1))).floor() as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_and_estimate_invert_the_sizing() {
        // n = m·ln 2 / k, floored; k = 0 counts as 1; never below one item.
        assert_eq!(classic_capacity(9_586, 7), 949);
        assert_eq!(classic_capacity(100, 0), 69);
        assert_eq!(classic_capacity(1, 7), 1);
        // An empty table (m or k zero) estimates nothing.
        assert_eq!(estimate_cardinality(0, 7, 5), 0.0);
        assert_eq!(estimate_cardinality(100, 0, 5), 0.0);
    }

    #[test]
    fn seed_002_table() {
        // target → (bits/item, k) as printed in seed 002: 0.1 % → 14.4, 10; 1 % → 9.6, 7; 10 % → 4.8, 3.
        for (p, bpi, k) in [(0.001, 14.4, 10), (0.01, 9.6, 7), (0.1, 4.8, 3)] {
            let got = classic_bits_per_item(p).unwrap();
            assert!(close(got, bpi, 0.05), "p={p}: {got}");
            let m = classic_bits(1_000_000, p).unwrap();
            assert_eq!(classic_hashes(m, 1_000_000), k, "p={p}");
        }
        // Reference figures to two decimals.
        assert!(close(classic_bits_per_item(0.01).unwrap(), 9.585, 0.001));
        assert!(close(classic_bits_per_item(0.03).unwrap(), 7.298, 0.001));
        assert!(close(classic_bits_per_item(0.001).unwrap(), 14.378, 0.001));
        assert_eq!(classic_hashes(classic_bits(1000, 0.03).unwrap(), 1000), 5);
    }

    #[test]
    fn size_at_a_million_items() {
        // Seed 002: 1.14 MB at 1 %, 1.71 MB at 0.1 %, 0.57 MB at 10 % for 10^6 items (MB = 10^6 bytes... of 2^20).
        let mb = |p| classic_bits(1_000_000, p).unwrap() as f64 / 8.0 / (1 << 20) as f64;
        assert!(close(mb(0.01), 1.14, 0.01));
        assert!(close(mb(0.001), 1.71, 0.01));
        assert!(close(mb(0.1), 0.57, 0.01));
    }

    #[test]
    fn ten_times_lower_fpr_costs_4_79_bits() {
        let d = classic_bits_per_item(0.001).unwrap() - classic_bits_per_item(0.01).unwrap();
        assert!(close(d, 10f64.log2() / std::f64::consts::LN_2, 1e-9));
        assert!(close(d, 4.79, 0.005));
    }

    #[test]
    fn expected_fpr_matches_target_at_design_load() {
        for p in [0.001, 0.01, 0.03] {
            let n = 1_000_000;
            let m = classic_bits(n, p).unwrap();
            let k = classic_hashes(m, n);
            let fpr = classic_fpr(m, k, n);
            // Rounding k costs at most a few percent relative.
            assert!(close(fpr / p, 1.0, 0.05), "p={p}: {fpr}");
        }
    }

    #[test]
    fn overfill_matches_seed() {
        // Seed 000: a 1 % filter at 2× load ≈ 16 %, at 4× ≈ 68 %.
        let n = 1_000_000;
        let m = classic_bits(n, 0.01).unwrap();
        let k = classic_hashes(m, n);
        assert!(close(classic_fpr(m, k, 2 * n), 0.16, 0.01));
        assert!(close(classic_fpr(m, k, 4 * n), 0.68, 0.01));
    }

    #[test]
    fn fill_formulas_invert_each_other() {
        let (m, k, n) = (1 << 20, 7u32, 100_000u64);
        let expected_ones = m as f64 * (1.0 - (-(k as f64) * n as f64 / m as f64).exp());
        let est = estimate_cardinality(m, k, expected_ones.round() as u64);
        assert!(close(est, n as f64, 5.0), "{est}");
        assert_eq!(estimate_cardinality(m, k, 0), 0.0);
        assert_eq!(estimate_cardinality(m, k, m), f64::INFINITY);
        assert!(close(fpr_from_fill(0.5, 7), 0.0078125, 1e-12));
        assert!(close(
            fpr_from_fill(expected_ones / m as f64, k),
            classic_fpr(m, k, n),
            1e-12
        ));
    }
}
