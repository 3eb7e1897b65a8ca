//! The split-block Bloom filter (SBBF) of the Parquet format specification
//! (`parquet-format/BloomFilter.md`; Impala's runtime filters; Putze, Sanders & Singler 2007
//! for the blocking, the "split" Bloom filter of Broder & Mitzenmacher 2004, §2.1, inside a
//! block).
//!
//! Layout: blocks of `B = 256` bits, eight 32-bit words each; a key sets exactly one bit in
//! each word of one block. So given `i` keys in a block, a non-member's bit in one word is
//! set with probability `1 − (1 − 1/32)^i` (one probe against `i` independent uniform
//! throws into 32 bits: no occupancy correction is needed, unlike a 512-bit block probed `k`
//! times), the eight words are independent, and the number of keys in the block a non-member
//! lands in is Poisson with mean `λ = 256 / bits_per_item`:
//!
//! `FPR = Σ_i Pois(i; λ) · (1 − (31/32)^i)^8`.
//!
//! It needs 10.53 bits/item at 1 %, 16.89 at 0.1 %, 8.20 at 3 %; the spec's 11.54 bits/value
//! for "about 0.5 %" gives 0.65 % (its 11.54 comes from the unblocked approximation below,
//! which ignores the Poisson spread of block loads).
//!
//! Parquet writers size differently: with the classic unblocked approximation
//! `c = −8 / ln(1 − p^(1/8))` bits per distinct value (the spec's "Build a Bloom filter"),
//! rounded to a power-of-two byte count between [`SBBF_MIN_BYTES`] and [`SBBF_MAX_BYTES`];
//! [`sbbf_parquet_bytes`] reproduces that rule. The approximation ignores the block-load
//! spread (9.68 bits/item at 1 %, where the layout really gives 1.46 %); the power-of-two
//! rounding usually adds enough slack to hide it.

use alloc::format;
use bloomlab_core::error::{Error, Result};
#[cfg(not(feature = "std"))]
use bloomlab_core::math::float::FloatMath as _;
use bloomlab_core::math::{
    PoissonPmf, bits_for_bits_per_item, poisson_upper, validate_fpr, validate_items,
};

/// Bits per SBBF block.
pub const SBBF_BLOCK_BITS: u32 = 256;
/// Bytes per SBBF block.
pub const SBBF_BLOCK_BYTES: u64 = 32;
/// Smallest bitset the Parquet specification allows: one block.
pub const SBBF_MIN_BYTES: u64 = 32;
/// Largest bitset the Parquet specification allows: 128 MiB.
pub const SBBF_MAX_BYTES: u64 = 128 * 1024 * 1024;

/// Expected FPR of a split-block Bloom filter at `bits_per_item = m/n`:
/// `Σ_i Pois(i; λ) · (1 − (31/32)^i)^8`, `λ = 256 / bits_per_item` (derivation in the module
/// docs). 1.0 for a density that is not a positive finite number.
///
/// ```
/// use bloomlab_sbbf::math::sbbf_fpr;
/// assert!((sbbf_fpr(10.53) - 0.01).abs() < 2e-5);
/// assert!(sbbf_fpr(16.0) < sbbf_fpr(10.0) && sbbf_fpr(10.0) < sbbf_fpr(8.0));
/// ```
pub fn sbbf_fpr(bits_per_item: f64) -> f64 {
    let Some(lambda) = keys_per_block(bits_per_item) else {
        return 1.0;
    };
    let miss = (31.0f64 / 32.0).ln(); // ln(1 − 1/32)
    let mut total = 0.0;
    for (i, pois) in PoissonPmf::new(lambda).take(poisson_upper(lambda) as usize + 1) {
        let word_hit = 1.0 - (miss * i as f64).exp();
        total += pois * word_hit.powi(8);
    }
    total.min(1.0)
}

/// The mean keys per block, `λ = 256 / bits_per_item`, where the sums over block loads are
/// worth taking: `None` for a density that is not a positive finite number, or for ≥ 5 120
/// keys per block on average, where every word is full with overwhelming probability (and a
/// sum would take λ terms, unbounded as bits/item → 0).
fn keys_per_block(bits_per_item: f64) -> Option<f64> {
    let lambda = f64::from(SBBF_BLOCK_BITS) / bits_per_item;
    let usable = bits_per_item.is_finite() && bits_per_item > 0.0;
    (usable && lambda <= 20.0 * f64::from(SBBF_BLOCK_BITS)).then_some(lambda)
}

/// Variance, over the blocks of a filter at `bits_per_item`, of a block's own FPR
/// `F_b = Π_j x_j/32` (`x_j` the set bits of word `j`): what makes one filter's realised FPR
/// differ from [`sbbf_fpr`], by a relative `√(Var/blocks)/FPR` (≈ 2–3 % at 10^5 items and
/// 10 bits/item, as much as a 10^6-probe binomial error, so an FPR test must include it).
///
/// Given `i` keys in the block, the words are independent one-probe filters of `i` throws
/// into 32 bits, so `E[F_b² | i] = (E[(x/32)²])^8` with the occupancy moments
/// `E[x] = 32·(1 − q^i)`, `E[x(x−1)] = 32·31·(1 − 2q^i + (30/32)^i)`, `q = 31/32` (Feller
/// vol. 1 §II.11); then `Var = Σ_i Pois(i; λ)·E[F_b² | i] − FPR²`. Treating the blocks as
/// independent overstates the variance of their mean slightly (multinomial loads are
/// negatively correlated).
pub fn sbbf_block_fpr_variance(bits_per_item: f64) -> f64 {
    let Some(lambda) = keys_per_block(bits_per_item) else {
        return 0.0;
    };
    let mut second = 0.0;
    for (i, w) in PoissonPmf::new(lambda).take(poisson_upper(lambda) as usize + 1) {
        let fi = i as f64;
        let q1 = (31.0f64 / 32.0).powf(fi);
        let q2 = (30.0f64 / 32.0).powf(fi);
        let mean = 32.0 * (1.0 - q1);
        let falling = 32.0 * 31.0 * (1.0 - 2.0 * q1 + q2);
        let m2 = (falling + mean) / 1024.0; // E[(x/32)^2]
        second += w * m2.powi(8);
    }
    let f = sbbf_fpr(bits_per_item);
    (second - f * f).max(0.0)
}

/// Smallest bits/item (to 1e-6) at which [`sbbf_fpr`] reaches `p`; bisection on the monotone
/// map bits/item → FPR. 1 % → 10.53, 0.1 % → 16.89, 3 % → 8.20.
pub fn sbbf_bits_per_item(p: f64) -> Result<f64> {
    let p = validate_fpr(p)?;
    // As λ → 0 the FPR falls like λ·(1/32)^8, so every p in (0, 1) is reachable; the cap on
    // `hi` only guards against a p so small that the density overflows any table.
    bloomlab_core::math::smallest_density(sbbf_fpr, p, 1e-3, 16.0, 1e12).ok_or_else(|| {
        Error::invalid(
            "fpr",
            format!("{p} is not reachable with a split-block filter"),
        )
    })
}

/// Blocks for `n` items at `bits_per_item`: `⌈⌈n · bits_per_item⌉ / 256⌉`, at least 1.
pub fn sbbf_blocks(n: u64, bits_per_item: f64) -> Result<u64> {
    Ok(bits_for_bits_per_item(n, bits_per_item)?.div_ceil(u64::from(SBBF_BLOCK_BITS)))
}

/// Parquet's size rule for a byte count: clamp to [[`SBBF_MIN_BYTES`], [`SBBF_MAX_BYTES`]],
/// then round up to a power of two.
pub fn sbbf_parquet_round_bytes(bytes: u64) -> u64 {
    bytes
        .clamp(SBBF_MIN_BYTES, SBBF_MAX_BYTES)
        .next_power_of_two()
}

/// Bitset bytes a Parquet writer allocates for `ndv` distinct values at false-positive
/// probability `fpp`: `bits = ⌊−8·ndv / ln(1 − fpp^(1/8))⌋` (the spec's per-value formula),
/// `⌊bits/8⌋` bytes, then [`sbbf_parquet_round_bytes`]. This is the rule of the Apache Arrow
/// Rust writer (`Sbbf::new_with_ndv_fpp`, checked against it in the SBBF crate's tests) and of
/// parquet-java's `BlockSplitBloomFilter.optimalNumOfBits`.
///
/// ```
/// use bloomlab_sbbf::math::sbbf_parquet_bytes;
/// assert_eq!(sbbf_parquet_bytes(10_000, 0.01).unwrap(), 16 * 1024);
/// assert_eq!(sbbf_parquet_bytes(1_000_000, 0.01).unwrap(), 2 * 1024 * 1024);
/// ```
pub fn sbbf_parquet_bytes(ndv: u64, fpp: f64) -> Result<u64> {
    let ndv = validate_items(ndv)?;
    let fpp = validate_fpr(fpp)?;
    let bits = -8.0 * ndv as f64 / (1.0 - fpp.powf(1.0 / 8.0)).ln();
    // Saturating float → integer conversion; anything past the cap is clamped anyway.
    let bytes = (bits as u64) / 8;
    Ok(sbbf_parquet_round_bytes(bytes))
}

/// Distinct keys estimated from one block's set bits: each of its eight words is a one-probe
/// Bloom filter of 32 bits over the block's keys, so with `x̄ = ones / 8` bits per word,
/// `î = ln(1 − x̄/32) / ln(1 − 1/32)` (Swamidass & Baldi 2007 with m = 32, k = 1, averaged
/// over the words). Infinite for a full block.
pub fn sbbf_block_keys_estimate(ones: u32) -> f64 {
    let per_word = f64::from(ones.min(SBBF_BLOCK_BITS)) / 8.0;
    if per_word >= 32.0 {
        return f64::INFINITY;
    }
    (1.0 - per_word / 32.0).ln() / (31.0f64 / 32.0).ln()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The same sum by brute force over a long Poisson tail, with the pmf built up by products.
    fn fpr_direct(bpi: f64) -> f64 {
        let lambda = 256.0 / bpi;
        let mut pmf = (-lambda).exp();
        let mut total = 0.0;
        for i in 0..2000u32 {
            if i > 0 {
                pmf *= lambda / f64::from(i);
            }
            total += pmf * (1.0 - (31.0f64 / 32.0).powi(i as i32)).powi(8);
        }
        total
    }

    #[test]
    fn fpr_matches_the_direct_sum() {
        for bpi in [4.0, 8.0, 10.0, 10.55, 16.0, 24.0] {
            let (a, b) = (sbbf_fpr(bpi), fpr_direct(bpi));
            assert!((a / b - 1.0).abs() < 1e-10, "{bpi}: {a} vs {b}");
        }
        assert_eq!(sbbf_fpr(0.0), 1.0);
        assert_eq!(sbbf_fpr(f64::NAN), 1.0);
        assert_eq!(sbbf_fpr(1e-9), 1.0);
    }

    #[test]
    fn anchor_densities() {
        for (p, want) in [(0.01, 10.53), (0.001, 16.89), (0.03, 8.20)] {
            let bpi = sbbf_bits_per_item(p).unwrap();
            assert!((bpi - want).abs() < 0.01, "{p}: {bpi}");
            assert!(sbbf_fpr(bpi) <= p && sbbf_fpr(bpi - 1e-3) > p);
        }
        // The spec's 11.54 bits/value for "about 0.5 %".
        let p = sbbf_fpr(11.54);
        assert!((0.0064..0.0066).contains(&p), "{p}");
        // The writers' approximation at 1 %: 9.68 bits/value, really 1.46 %.
        assert!((sbbf_fpr(9.68) - 0.0146).abs() < 1e-4);
        assert!(sbbf_bits_per_item(0.0).is_err() && sbbf_bits_per_item(1.0).is_err());
    }

    #[test]
    fn parquet_rule() {
        assert_eq!(sbbf_parquet_round_bytes(0), 32);
        assert_eq!(sbbf_parquet_round_bytes(33), 64);
        assert_eq!(sbbf_parquet_round_bytes(u64::MAX), SBBF_MAX_BYTES);
        // The table in the Arrow Rust documentation (NDV, FPP → blocks).
        for (ndv, fpp, blocks) in [
            (10_000, 0.1, 256),
            (10_000, 0.01, 512),
            (10_000, 0.001, 1024),
            (100_000, 0.01, 4096),
            (100_000, 0.0001, 16_384),
            (1_000_000, 0.000001, 262_144),
        ] {
            assert_eq!(sbbf_parquet_bytes(ndv, fpp).unwrap(), blocks * 32);
        }
        assert_eq!(sbbf_parquet_bytes(u64::MAX, 1e-9).unwrap(), SBBF_MAX_BYTES);
        assert!(matches!(sbbf_parquet_bytes(0, 0.01), Err(Error::ZeroItems)));
        assert!(matches!(
            sbbf_parquet_bytes(1, f64::NAN),
            Err(Error::InvalidFpr(_))
        ));
        assert_eq!(sbbf_blocks(1000, 10.0).unwrap(), 40);
        assert!(sbbf_blocks(u64::MAX, 1e9).is_err());
    }

    #[test]
    fn block_variance_matches_a_direct_computation() {
        // E[(x/32)^2] by the occupancy distribution itself (Markov chain over throws).
        for bpi in [8.0f64, 10.0, 16.0] {
            let lambda = 256.0 / bpi;
            let (mut first, mut second) = (0.0, 0.0);
            let mut dist = vec![0.0f64; 33];
            dist[0] = 1.0;
            let mut pmf = (-lambda).exp();
            for i in 0..400u32 {
                if i > 0 {
                    pmf *= lambda / f64::from(i);
                    for x in (1..=32).rev() {
                        dist[x] =
                            dist[x] * (x as f64 / 32.0) + dist[x - 1] * ((33 - x) as f64 / 32.0);
                    }
                    dist[0] = 0.0;
                }
                let m1: f64 = dist
                    .iter()
                    .enumerate()
                    .map(|(x, d)| d * x as f64 / 32.0)
                    .sum();
                let m2: f64 = dist
                    .iter()
                    .enumerate()
                    .map(|(x, d)| d * (x as f64 / 32.0).powi(2))
                    .sum();
                first += pmf * m1.powi(8);
                second += pmf * m2.powi(8);
            }
            let var = sbbf_block_fpr_variance(bpi);
            assert!((first / sbbf_fpr(bpi) - 1.0).abs() < 1e-9);
            assert!(
                (var / (second - first * first) - 1.0).abs() < 1e-6,
                "{bpi}: {var}"
            );
        }
        assert_eq!(sbbf_block_fpr_variance(f64::NAN), 0.0);
    }

    #[test]
    fn block_estimate_inverts_the_mean_fill() {
        // i keys fill a 32-bit word to 32·(1 − (31/32)^i) on average.
        for i in [1.0f64, 5.0, 20.0] {
            let ones = (8.0 * 32.0 * (1.0 - (31.0f64 / 32.0).powf(i))).round() as u32;
            assert!((sbbf_block_keys_estimate(ones) - i).abs() < 0.2 * i.max(1.0));
        }
        assert_eq!(sbbf_block_keys_estimate(0), 0.0);
        assert!(sbbf_block_keys_estimate(256).is_infinite());
    }
}
