//! Every sizing and accuracy formula of the workspace, in one place.
//!
//! Variants call these functions; nobody re-derives `m`, `k` or an FPR inline. Each function
//! names its source or gives the one-line derivation. Notation: `n` items, `m` bits, `k`
//! probes per key, `p` the target false-positive rate (FPR).

use crate::error::{Error, Result};

mod sbbf;
pub use sbbf::*;

/// The largest number of probes any filter here accepts. k grows as log2(1/p)·ln 2 / ln 2 ≈
/// log2(1/p); 64 probes already means p ≈ 2^-64, far below anything measurable.
pub const MAX_HASHES: u32 = 64;

/// `(ln 2)^2`, the constant in the classic sizing formula.
const LN2_SQUARED: f64 = std::f64::consts::LN_2 * std::f64::consts::LN_2;

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

fn bits_from_f64(bits: f64) -> Result<u64> {
    // 2^64 is exactly representable; anything at or past it does not fit a u64.
    if bits >= 18_446_744_073_709_551_616.0 {
        return Err(Error::SizeOverflow(format!(
            "{bits:e} bits do not fit in 64 bits"
        )));
    }
    Ok((bits as u64).max(1))
}

/// Optimal probe count for `m` bits and `n` items: `k = round((m/n)·ln 2)`, at least 1 and at
/// most [`MAX_HASHES`] (derivative of (1 − e^(−kn/m))^k in k vanishes at k = (m/n) ln 2).
pub fn classic_hashes(m: u64, n: u64) -> u32 {
    let n = n.max(1) as f64;
    let k = (m as f64 / n * std::f64::consts::LN_2).round();
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

/// The information-theoretic lower bound for any approximate-membership structure:
/// `log2(1/p)` bits per item (Carter et al. 1978). 9.97 / 6.64 / 5.06 at 0.1 / 1 / 3 %.
pub fn lower_bound_bits_per_item(p: f64) -> Result<f64> {
    let p = validate_fpr(p)?;
    Ok(-p.log2())
}

/// Design capacity implied by `m` and `k`: the `n` for which `k` is optimal,
/// `n = m·ln 2 / k` (invert k = (m/n)·ln 2). At this load about half the bits are set.
pub fn classic_capacity(m: u64, k: u32) -> u64 {
    ((m as f64 * std::f64::consts::LN_2 / f64::from(k.max(1))).floor() as u64).max(1)
}

// ---------------------------------------------------------------------------------------
// Blocked Bloom filter (Putze, Sanders, Singler 2007, "Cache-, hash- and space-efficient
// Bloom filters", §3).
// ---------------------------------------------------------------------------------------

/// Expected FPR of a blocked Bloom filter with `block_bits`-bit blocks, `k` probes per key
/// (all inside one block) and `bits_per_item = m/n`.
///
/// The number of keys in the block a non-member picks is Poisson with mean
/// `λ = block_bits / bits_per_item`; given `i` keys in a block of `B` bits, a probe hits a set
/// bit with probability `1 − (1 − 1/B)^(k·i)`. So `FPR = Σ_i Pois(i; λ) · (1 − (1 − 1/B)^(k·i))^k`.
pub fn blocked_fpr(bits_per_item: f64, k: u32, block_bits: u32) -> f64 {
    if !(bits_per_item.is_finite() && bits_per_item > 0.0) || block_bits == 0 {
        return 1.0;
    }
    let b = f64::from(block_bits);
    let lambda = b / bits_per_item;
    if lambda > 20.0 * b {
        // ≥ 20·B keys per block on average: every bit is set with overwhelming probability
        // (and the sum below would take λ terms, unbounded as bits/item → 0).
        return 1.0;
    }
    let miss_one = (1.0 - 1.0 / b).ln(); // ln(1 − 1/B)
    // Sum far enough into the tail that the remaining Poisson mass is below 1e-18.
    let upper = (lambda + 12.0 * lambda.sqrt() + 40.0).ceil() as u64;
    let mut ln_fact = 0.0f64; // ln(i!)
    let mut total = 0.0;
    for i in 0..=upper {
        if i > 0 {
            ln_fact += (i as f64).ln();
        }
        let ln_pmf = -lambda + i as f64 * lambda.ln() - ln_fact;
        let hit = 1.0 - (miss_one * f64::from(k) * i as f64).exp();
        total += ln_pmf.exp() * hit.powi(k as i32);
    }
    total.min(1.0)
}

/// The `k` that minimises [`blocked_fpr`] at `bits_per_item` (searched over 1..=MAX_HASHES;
/// inside a block the optimum is below the classic (m/n)·ln 2 once blocks get crowded).
pub fn blocked_best_hashes(bits_per_item: f64, block_bits: u32) -> u32 {
    (1..=MAX_HASHES)
        .min_by(|&a, &b| {
            blocked_fpr(bits_per_item, a, block_bits).total_cmp(&blocked_fpr(
                bits_per_item,
                b,
                block_bits,
            ))
        })
        .unwrap_or(1)
}

/// Smallest bits/item (to 1e-6) at which a blocked filter with its best `k` reaches FPR `p`,
/// with that `k`. Bisection on the monotone map bits/item → best FPR.
/// 1 % → ≈ 9.90 bits/item; 0.1 % → ≈ 15.49; 3 % → ≈ 7.42 (512-bit blocks).
pub fn blocked_bits_per_item(p: f64, block_bits: u32) -> Result<(f64, u32)> {
    let p = validate_fpr(p)?;
    if block_bits == 0 {
        return Err(Error::invalid("block_bits", "must be positive"));
    }
    let best = |bpi: f64| blocked_fpr(bpi, blocked_best_hashes(bpi, block_bits), block_bits);
    // The blocked filter never needs fewer bits than the classic one.
    let mut lo = classic_bits_per_item(p)? * 0.99;
    let mut hi = lo * 2.0 + 8.0;
    while best(hi) > p {
        hi *= 2.0;
        if hi > 4096.0 {
            return Err(Error::invalid(
                "fpr",
                format!("{p} is not reachable with {block_bits}-bit blocks"),
            ));
        }
    }
    while hi - lo > 1e-6 {
        let mid = 0.5 * (lo + hi);
        if best(mid) > p { lo = mid } else { hi = mid }
    }
    Ok((hi, blocked_best_hashes(hi, block_bits)))
}

// ---------------------------------------------------------------------------------------
// Cuckoo filter (Fan, Andersen, Kaminsky, Mitzenmacher 2014, "Cuckoo Filter: Practically
// Better Than Bloom", §4).
// ---------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------
// Scalable Bloom filter (Almeida, Baquero, Preguiça, Hutchison 2007, "Scalable Bloom
// Filters", §4).
// ---------------------------------------------------------------------------------------

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
    let m = bits_from_f64((n as f64 * k / std::f64::consts::LN_2).ceil())?;
    Ok((m, scalable_stage_hashes(p)?))
}

/// Bits of a scalable stage for `n_i` items with `k` probes: `m = ceil(n_i·k / ln 2)`, so that
/// after `n_i` inserts the expected fill `1 − e^(−k·n_i/m)` is exactly 1/2 — the stage's
/// capacity and its growth trigger coincide. Errors on `n_i = 0` or an `m` past `u64`.
pub fn scalable_stage_bits(stage_items: u64, hashes: u32) -> Result<u64> {
    let n = validate_items(stage_items)?;
    bits_from_f64((n as f64 * f64::from(hashes.max(1)) / std::f64::consts::LN_2).ceil())
}

/// Compound FPR of a chain whose stages have FPRs `stage_fprs`: `1 − Π(1 − p_i)` (a
/// non-member is negative only if every stage says no; stages hash independently enough).
pub fn compound_fpr(stage_fprs: impl IntoIterator<Item = f64>) -> f64 {
    1.0 - stage_fprs
        .into_iter()
        .map(|p| 1.0 - p.clamp(0.0, 1.0))
        .product::<f64>()
}

// ---------------------------------------------------------------------------------------
// Blocked Bloom filter, exact within-block occupancy. `blocked_fpr` above treats the bits of a
// block as independent, (1 − (1 − 1/B)^(k·i))^k; the number of distinct bits set in a block is
// random, and E[(X/B)^k] exceeds (E[X]/B)^k (Jensen). For 512-bit blocks the gap is +0.6 % at
// k = 5–6 and +2.2 % at k = 9, enough to miss a 0.1 % target. These functions keep the Poisson
// mixture over block loads and replace the bit-independence step by the exact occupancy
// distribution of k·i independent uniform throws into B bits.
// ---------------------------------------------------------------------------------------

/// Largest block for which [`blocked_fpr_exact`] runs the exact occupancy computation
/// (O(B · k · λ) work); larger blocks fall back to [`blocked_fpr`], whose bit-independence
/// approximation becomes exact as B grows.
pub const BLOCKED_EXACT_MAX_BITS: u32 = 4096;

/// Expected FPR of a blocked Bloom filter with `block_bits`-bit blocks and `k` probes per key
/// drawn independently and uniformly (repeats allowed) inside one block, at `bits_per_item`.
///
/// `FPR = Σ_i Pois(i; λ) · E[(X_i/B)^k]`, `λ = B / bits_per_item`, where `X_i` is the number
/// of distinct bits set by `k·i` uniform throws into `B` bits (a non-member's k probes each
/// hit a set bit with probability X/B). `X` evolves as a Markov chain: a throw into a block
/// with `x` ones sets a new bit with probability `(B − x)/B` (classical occupancy, Feller vol. 1
/// §II.11). At 512 bits: 0.1022 % at (15.49 b/item, k = 9) where [`blocked_fpr`] says 0.1000 %.
pub fn blocked_fpr_exact(bits_per_item: f64, k: u32, block_bits: u32) -> f64 {
    if block_bits > BLOCKED_EXACT_MAX_BITS {
        return blocked_fpr(bits_per_item, k, block_bits);
    }
    if !(bits_per_item.is_finite() && bits_per_item > 0.0) || block_bits == 0 || k == 0 {
        return 1.0;
    }
    let lambda = f64::from(block_bits) / bits_per_item;
    if lambda > 20.0 * f64::from(block_bits) {
        // ≥ 20·B keys per block on average: P(a given block has an unset bit) ≤ B·e^(−20k),
        // so every probe hits a set bit (and the sum below would take λ terms).
        return 1.0;
    }
    let terms = blocked_occupancy_terms(k, block_bits, poisson_upper(lambda));
    poisson_mixture(lambda, &terms)
}

/// Where the Poisson sums stop: the mass beyond `λ + 12√λ + 40` is below 1e-18.
fn poisson_upper(lambda: f64) -> u64 {
    (lambda + 12.0 * lambda.sqrt() + 40.0).ceil() as u64
}

/// `terms[i] = E[(X_i/B)^k]` for `i = 0..=max_keys`, where `X_i` is the number of distinct bits
/// set by `k·i` independent uniform throws into `B` bits. A Markov chain on `x`: a throw into a
/// block with `x` ones sets a new bit with probability `(B − x)/B`. Independent of the density,
/// so one pass serves every `λ`.
fn blocked_occupancy_terms(k: u32, block_bits: u32, max_keys: u64) -> Vec<f64> {
    let bb = block_bits as usize;
    let b = f64::from(block_bits);
    let mut dist = vec![0.0f64; bb + 1]; // dist[x] = P(X = x)
    dist[0] = 1.0;
    let pw: Vec<f64> = (0..=bb).map(|x| (x as f64 / b).powi(k as i32)).collect();
    let mut reach = 0usize; // largest x with non-zero probability
    let mut terms = Vec::with_capacity(max_keys as usize + 1);
    for _ in 0..=max_keys {
        terms.push(dist[..=reach].iter().zip(&pw).map(|(d, p)| d * p).sum());
        // One more key: k more throws.
        for _ in 0..k {
            reach = (reach + 1).min(bb);
            for x in (1..=reach).rev() {
                dist[x] = dist[x] * (x as f64 / b) + dist[x - 1] * ((bb - x + 1) as f64 / b);
            }
            dist[0] = 0.0;
        }
    }
    terms
}

/// `Σ_i Pois(i; λ) · terms[i]` over the available terms.
fn poisson_mixture(lambda: f64, terms: &[f64]) -> f64 {
    let mut ln_fact = 0.0f64;
    let mut total = 0.0;
    for (i, t) in terms.iter().enumerate() {
        if i > 0 {
            ln_fact += (i as f64).ln();
        }
        total += (-lambda + i as f64 * lambda.ln() - ln_fact).exp() * t;
    }
    total.min(1.0)
}

/// Smallest bits/item (to 1e-4) at which a blocked filter reaches FPR `p` by
/// [`blocked_fpr_exact`], with the best `k` (searched next to [`blocked_bits_per_item`]'s `k`,
/// from k − 1 to k + 1). 1 % → 9.92 bits/item (k = 6), 0.1 % → 15.55 (k = 9), 3 % → 7.43
/// (k = 5) at 512 bits.
pub fn blocked_bits_per_item_exact(p: f64, block_bits: u32) -> Result<(f64, u32)> {
    let (start, k0) = blocked_bits_per_item(p, block_bits)?;
    if block_bits > BLOCKED_EXACT_MAX_BITS {
        return Ok((start, k0));
    }
    let b = f64::from(block_bits);
    let mut best: Option<(f64, u32)> = None;
    for k in k0.saturating_sub(1).max(1)..=(k0 + 1).min(MAX_HASHES) {
        // The exact FPR is never below the approximation, so `start` is a lower bound on the
        // density, i.e. `B/start` an upper bound on λ: one occupancy pass covers the search.
        let terms = blocked_occupancy_terms(k, block_bits, poisson_upper(b / start));
        let fpr = |bpi: f64| poisson_mixture(b / bpi, &terms);
        let (mut lo, mut hi) = (start, start * 1.05);
        while fpr(hi) > p {
            lo = hi;
            hi *= 1.5;
            if hi > 4096.0 {
                break;
            }
        }
        if hi > 4096.0 {
            continue;
        }
        while hi - lo > 1e-4 {
            let mid = 0.5 * (lo + hi);
            if fpr(mid) > p {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        if best.is_none_or(|(bb, _)| hi < bb) {
            best = Some((hi, k));
        }
    }
    best.ok_or_else(|| {
        Error::invalid(
            "fpr",
            format!("{p} is not reachable with {block_bits}-bit blocks"),
        )
    })
}

#[cfg(test)]
mod blocked_exact_tests {
    use super::*;

    #[test]
    fn exact_blocked_fpr_matches_an_independent_computation() {
        // Values from a separate implementation of the same occupancy recursion (Python,
        // float64): (bits/item, k) → exact FPR; and the bit-independence figure beside it.
        for (bpi, k, want) in [
            (15.488, 9, 0.001_021_983),
            (9.896, 6, 0.010_092_190),
            (7.415, 5, 0.030_184_514),
            (16.0, 10, 0.000_846_120),
            (8.0, 5, 0.023_263_376),
        ] {
            let got = blocked_fpr_exact(bpi, k, 512);
            assert!((got / want - 1.0).abs() < 1e-6, "{bpi}/{k}: {got}");
            assert!(got > blocked_fpr(bpi, k, 512));
        }
        // Overfull blocks answer "maybe" to everything.
        assert_eq!(blocked_fpr_exact(1e-9, 1, 512), 1.0);
        // Large blocks fall back to the approximation.
        assert_eq!(
            blocked_fpr_exact(10.0, 7, 1 << 20),
            blocked_fpr(10.0, 7, 1 << 20)
        );
        assert_eq!(blocked_fpr_exact(f64::NAN, 7, 512), 1.0);
    }

    #[test]
    fn exact_sizing_meets_the_target() {
        for (p, lo, hi) in [(0.001, 15.49, 15.7), (0.01, 9.90, 10.0), (0.03, 7.42, 7.5)] {
            let (bpi, k) = blocked_bits_per_item_exact(p, 512).unwrap();
            assert!(bpi > lo && bpi < hi, "{p}: {bpi}");
            assert!(blocked_fpr_exact(bpi, k, 512) <= p);
            assert!(blocked_fpr_exact(bpi - 1e-3, k, 512) > p * 0.999);
        }
        assert!(blocked_bits_per_item_exact(f64::NAN, 512).is_err());
        assert!(blocked_bits_per_item_exact(1e-100, 512).is_err());
    }
}

// ---------------------------------------------------------------------------------------
// Counting Bloom filter (Fan, Cao, Almeida, Broder 2000, "Summary Cache: a scalable wide-area
// Web cache sharing protocol", §5.2: how many bits a counter needs).
// ---------------------------------------------------------------------------------------

/// Mean of one counter of a counting filter after `n` distinct inserts of `k` probes into `m`
/// counters: `λ = k·n/m` (each of the k·n increments picks a counter uniformly). At the
/// optimal load λ = ln 2.
pub fn counting_counter_mean(m: u64, k: u32, n: u64) -> f64 {
    if m == 0 {
        return 0.0;
    }
    f64::from(k) * n as f64 / m as f64
}

/// Probability that one given counter has reached at least `threshold` after `n` distinct
/// inserts: the Poisson tail `P(X ≥ j)` with `λ = k·n/m` (the Binomial(k·n, 1/m) count of
/// increments a counter receives, for large m). Fan et al. 2000: at the optimal load
/// (λ = ln 2) `P(X = 16)` ≈ 6.8·10^-17 and the tail `P(X ≥ 16)` ≈ 7.1·10^-17.
/// For a counter sticky at 15 the chance of getting stuck is `P(X ≥ 15)`.
pub fn counting_counter_tail(m: u64, k: u32, n: u64, threshold: u32) -> f64 {
    let lambda = counting_counter_mean(m, k, n);
    if threshold == 0 {
        return 1.0;
    }
    if lambda <= 0.0 {
        return 0.0;
    }
    let j = f64::from(threshold);
    if lambda > j {
        // The tail is large: 1 − P(X < j) is accurate, and the upward sum below would start
        // from a term that underflows once λ is in the hundreds.
        let mut ln_fact = 0.0f64;
        let mut below = 0.0;
        for i in 0..threshold {
            if i > 1 {
                ln_fact += f64::from(i).ln();
            }
            below += (-lambda + f64::from(i) * lambda.ln() - ln_fact).exp();
        }
        return (1.0 - below).clamp(0.0, 1.0);
    }
    // P(X ≥ j) = Σ_{i ≥ j} e^(−λ) λ^i / i!, summed from j upward until the terms vanish
    // (not as 1 − Σ_{i < j}, which cancels catastrophically for tiny tails).
    let mut ln_fact = 0.0f64;
    for i in 2..=threshold {
        ln_fact += f64::from(i).ln();
    }
    let mut term = (-lambda + j * lambda.ln() - ln_fact).exp();
    let mut total = 0.0;
    let mut i = j;
    while term > total * 1e-18 && i < j + 10_000.0 {
        total += term;
        i += 1.0;
        term *= lambda / i;
    }
    total.min(1.0)
}

/// Fan et al.'s union bound on any of `m` counters reaching `threshold` at the optimal load:
/// `Pr(max c ≥ j) ≤ m·(e·ln 2 / j)^j` (§5.2). For 4-bit counters (j = 16) that is
/// ≈ 1.37·10^-15 · m.
pub fn counting_overflow_bound(m: u64, threshold: u32) -> f64 {
    if threshold == 0 {
        return 1.0;
    }
    let j = f64::from(threshold);
    let per_counter = (std::f64::consts::E * std::f64::consts::LN_2 / j).powf(j);
    (m as f64 * per_counter).min(1.0)
}

#[cfg(test)]
mod counting_tests {
    use super::*;

    #[test]
    fn counting_overflow_matches_fan_et_al() {
        // At the optimal load λ = k·n/m = ln 2; reference.md: P(counter ≥ 16) ≈ 6.8e-17 and a
        // whole filter overflows with probability ≤ 1.4e-15·m.
        let (m, k) = (1_000_000u64, 7u32);
        let n = classic_capacity(m, k);
        assert!((counting_counter_mean(m, k, n) - std::f64::consts::LN_2).abs() < 1e-5);
        // 6.8e-17 is the leading term P(X = 16) = e^(−ln 2)·(ln 2)^16/16! = 6.785e-17; the
        // tail adds the factor 1 + λ/17 + λ²/(17·18) + … ≈ 1.042.
        let p16 = counting_counter_tail(m, k, n, 16);
        let point = counting_counter_tail(m, k, n, 16) - counting_counter_tail(m, k, n, 17);
        assert!((point / 6.785e-17 - 1.0).abs() < 0.01, "{point:e}");
        assert!((p16 / point - 1.042).abs() < 0.002, "{p16:e}");
        let bound = counting_overflow_bound(1, 16);
        assert!((bound / 1.37e-15 - 1.0).abs() < 0.01, "{bound:e}");
        assert!(p16 < bound);
        // The Poisson tail from 0 and 1 is 1 and 1 − e^(−λ).
        assert!((counting_counter_tail(m, k, n, 0) - 1.0).abs() < 1e-12);
        let p1 = counting_counter_tail(m, k, n, 1);
        assert!(
            (p1 - (1.0 - (-std::f64::consts::LN_2).exp())).abs() < 1e-6,
            "{p1}"
        );
        // Heavier load, larger tail; empty filter, no tail.
        assert!(counting_counter_tail(m, k, 10 * n, 15) > counting_counter_tail(m, k, n, 15));
        assert_eq!(counting_counter_tail(m, k, 0, 15), 0.0);
        // Far past the design load almost every counter is stuck; the tail must not underflow.
        assert!(counting_counter_tail(m, k, 1000 * m, 15) > 0.999_999);
        // Both branches agree where they meet (λ = j): P(Pois(15) ≥ 15) = 0.5343.
        let at = counting_counter_tail(1, 1, 15, 15);
        let above = counting_counter_tail(1_000_000, 1, 15_000_001, 15);
        assert!((at - 0.534_3).abs() < 1e-4, "{at}");
        assert!((above - at).abs() < 1e-4, "{above}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
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
    fn invalid_parameters_are_errors() {
        for p in [
            0.0,
            1.0,
            -0.5,
            1.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ] {
            assert!(
                matches!(classic_bits(10, p), Err(Error::InvalidFpr(_))),
                "{p}"
            );
            assert!(lower_bound_bits_per_item(p).is_err());
            assert!(blocked_bits_per_item(p, 512).is_err());
            assert!(cuckoo_fingerprint_bits(p, 4).is_err());
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

    #[test]
    fn blocked_matches_published_figures() {
        // reference.md: best-k blocked FPR at 8/10/12/16 b/item = 2.31 / 0.957 / 0.407 / 0.0825 %.
        for (bpi, want) in [
            (8.0, 0.0231),
            (10.0, 0.00957),
            (12.0, 0.00407),
            (16.0, 0.000825),
        ] {
            let k = blocked_best_hashes(bpi, 512);
            let got = blocked_fpr(bpi, k, 512);
            assert!(close(got / want, 1.0, 0.01), "{bpi} b/item: {got} (k={k})");
        }
        // RocksDB's FastLocalBloom: 10 b/key with 6 probes → 0.957 %; k = 7 ties it to 0.05 %.
        assert!(close(blocked_fpr(10.0, 6, 512), 0.00957, 0.00001));
        assert!(blocked_fpr(10.0, 6, 512) / blocked_fpr(10.0, 7, 512) < 1.0005);
        // At 16 b/key fewer probes than the classic optimum (11) are best.
        assert!(blocked_best_hashes(16.0, 512) < classic_hashes(16, 1));
        for (p, want) in [(0.001, 15.49), (0.01, 9.90), (0.03, 7.42)] {
            let (bpi, _) = blocked_bits_per_item(p, 512).unwrap();
            assert!(close(bpi, want, 0.01), "{p}: {bpi}");
        }
        // A block as large as the whole filter behaves like the classic filter.
        let classic = classic_fpr(1 << 30, 7, (1u64 << 30) / 10);
        assert!(close(blocked_fpr(10.0, 7, 1 << 30) / classic, 1.0, 0.01));
    }

    #[test]
    fn blocked_formulas_return_promptly_for_absurd_densities() {
        // λ = 512 / 1e-300 would otherwise mean ~1e302 loop iterations.
        assert_eq!(blocked_fpr(1e-300, 7, 512), 1.0);
        assert_eq!(blocked_fpr_exact(1e-300, 7, 512), 1.0);
        assert_eq!(blocked_best_hashes(1e-300, 512), 1);
    }

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
