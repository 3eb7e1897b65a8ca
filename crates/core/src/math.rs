//! Every sizing and accuracy formula of the workspace, in one place.
//!
//! Variants call these functions; nobody re-derives `m`, `k` or an FPR inline. Each function
//! names its source or gives the one-line derivation. Notation: `n` items, `m` bits, `k`
//! probes per key, `p` the target false-positive rate (FPR).

use std::borrow::Cow;

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
    let mut total = 0.0;
    for (i, pois) in PoissonPmf::new(lambda).take(poisson_upper(lambda) as usize + 1) {
        let hit = 1.0 - (miss_one * f64::from(k) * i as f64).exp();
        total += pois * hit.powi(k as i32);
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
    let lo = classic_bits_per_item(p)? * 0.99;
    let hi = smallest_density(best, p, lo, lo * 2.0 + 8.0, 4096.0).ok_or_else(|| {
        Error::invalid(
            "fpr",
            format!("{p} is not reachable with {block_bits}-bit blocks"),
        )
    })?;
    Ok((hi, blocked_best_hashes(hi, block_bits)))
}

/// Smallest bits/item (to 1e-6) at which `fpr`, decreasing in bits/item, reaches `p`:
/// `hi` doubles until `fpr(hi) ≤ p` (`None` once it passes `cap`), then `[lo, hi]` is
/// bisected. The search every bisection-sized layout shares.
pub(crate) fn smallest_density(
    fpr: impl Fn(f64) -> f64,
    p: f64,
    mut lo: f64,
    mut hi: f64,
    cap: f64,
) -> Option<f64> {
    while fpr(hi) > p {
        hi *= 2.0;
        if hi > cap {
            return None;
        }
    }
    while hi - lo > 1e-6 {
        let mid = 0.5 * (lo + hi);
        if fpr(mid) > p { lo = mid } else { hi = mid }
    }
    Some(hi)
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
/// hit a set bit with probability X/B). Evaluated in closed form, O(k²) work whatever the
/// density ([`blocked_fpr_closed`]); [`blocked_fpr_markov`] is the O(λ·k·B) reference it was
/// checked against (1e-6 relative, 1e-12 absolute below 1e-6, for 1 ≤ k ≤ 16 and
/// 1 ≤ bits/item ≤ 64). At 512 bits: 0.1022 % at (15.49 b/item, k = 9) where
/// [`blocked_fpr`] says 0.1000 %.
pub fn blocked_fpr_exact(bits_per_item: f64, k: u32, block_bits: u32) -> f64 {
    if block_bits > BLOCKED_EXACT_MAX_BITS {
        return blocked_fpr(bits_per_item, k, block_bits);
    }
    blocked_fpr_closed(bits_per_item, k, block_bits)
}

/// [`blocked_fpr_exact`] in closed form: with `λ = B / bits_per_item` and Poisson block loads,
///
/// `FPR = Σ_{j=1..k} S(k,j)·(B)_j/B^k · Σ_{l=0..j} (−1)^l·C(j,l)·exp(λ·((1 − l/B)^k − 1))`
///
/// where `S` are Stirling numbers of the second kind and `(B)_j = B(B−1)…(B−j+1)`. Derivation:
/// `(X/B)^k = Σ_j S(k,j)·(X)_j / B^k` (falling factorials), `E[(X)_j] = (B)_j ·
/// P(j given bits all set)`, that probability by inclusion–exclusion over which of the `j`
/// bits stay unset, `Σ_l (−1)^l C(j,l) E[(1 − l/B)^{k·i}]`, and the Poisson generating
/// function `E[z^i] = exp(λ(z − 1))` removes the sum over block loads `i`. `k + 1`
/// exponentials and O(k²) additions; the `exp` terms enter as `expm1` (the constant part of
/// each alternating sum cancels exactly). The alternating sums lose digits when the result is
/// tiny (large `k`, sparse filters: in f64 the absolute error is near 1e-12 at k = 16), so
/// the sum tracks its own rounding bound and, when that is not below 1e-7 of the result,
/// is redone in double-double arithmetic (≈ 106 bits; 3.5 / 7 / 11 µs at k = 14 / 20 / 27,
/// the f64 sum 1.4 / 2.4 / 3.3 µs), which holds 1e-7 while the terms' magnitude is at most
/// 10^25 times the result — every filter with an FPR above about 10^-15. Past that (far
/// sparser filters) the occupancy chain [`blocked_fpr_markov`] gives the value, in about
/// 35 µs. The result is clamped to `[0, 1]`.
pub fn blocked_fpr_closed(bits_per_item: f64, k: u32, block_bits: u32) -> f64 {
    closed_form(bits_per_item, k, block_bits, true)
}

/// The closed form; with `precise = false` the f64 sum is returned even where it has lost
/// digits (for a first pass of the sizing search, which then refines with `precise`).
#[allow(clippy::needless_range_loop)] // j and l index three arrays and enter the arithmetic
fn closed_form(bits_per_item: f64, k: u32, block_bits: u32, precise: bool) -> f64 {
    let Sums::F64 {
        mut total,
        magnitude,
        lambda,
        k,
    } = closed_form_sums(bits_per_item, k, block_bits)
    else {
        return 1.0;
    };
    // Each e[l] carries a relative error of about one ulp, so the sum is good to about
    // ε·magnitude. When that is not 1e-7 of the result, redo it in double-double, and where
    // even that cancels too far (results far below 1e-16), run the occupancy chain.
    if precise && total < magnitude * f64::EPSILON * 1e7 {
        total = match dd::blocked_fpr_closed_checked(lambda, k, f64::from(block_bits)) {
            Some((f, _)) => f,
            None => blocked_fpr_markov(bits_per_item, k as u32, block_bits),
        };
    }
    total.clamp(0.0, 1.0)
}

/// The closed form's f64 sum, or where it answers 1 without one.
enum Sums {
    /// Invalid parameters, or at least 20·B keys per block: the FPR is 1 (to f64).
    Saturated,
    /// The f64 sum, the sum of its terms' absolute values, and the `λ` and `k` it used.
    F64 {
        total: f64,
        magnitude: f64,
        lambda: f64,
        k: usize,
    },
}

/// The f64 sums of [`closed_form`], unclamped, with their magnitude (see [`Sums`]).
#[allow(clippy::needless_range_loop)] // j and l index three arrays and enter the arithmetic
fn closed_form_sums(bits_per_item: f64, k: u32, block_bits: u32) -> Sums {
    if !(bits_per_item.is_finite() && bits_per_item > 0.0) || block_bits == 0 || k == 0 {
        return Sums::Saturated;
    }
    let b = f64::from(block_bits);
    let lambda = b / bits_per_item;
    if !lambda.is_finite() || lambda > 20.0 * b {
        // ≥ 20·B keys per block on average: P(a given block has an unset bit) ≤ B·e^(−20k).
        return Sums::Saturated;
    }
    let k = k.min(MAX_HASHES) as usize;
    let coef = closed_form_coefficients(k, b);
    // e[l] = exp(λ((1 − l/B)^k − 1)) − 1 for l = 1..=k; (1 − l/B)^k − 1 = expm1(k·ln(1 − l/B)).
    let mut e = [0.0f64; MAX_HASHES as usize + 1];
    for (l, el) in e.iter_mut().enumerate().take(k + 1).skip(1) {
        let q_minus_1 = if (l as f64) < b {
            (k as f64 * (-(l as f64) / b).ln_1p()).exp_m1()
        } else {
            -1.0
        };
        *el = (lambda * q_minus_1).exp_m1();
    }
    let mut binom = [0.0f64; MAX_HASHES as usize + 1]; // row j of Pascal's triangle
    binom[0] = 1.0;
    let (mut total, mut magnitude) = (0.0, 0.0);
    for j in 1..=k {
        for l in (1..=j).rev() {
            binom[l] += binom[l - 1];
        }
        // Σ_l (−1)^l C(j, l) e[l] (the l = 0 term and the constants cancel).
        let (mut inner, mut size) = (0.0, 0.0);
        for l in 1..=j {
            let t = binom[l] * e[l];
            inner += if l % 2 == 0 { t } else { -t };
            size += t.abs();
        }
        total += coef[j] * inner;
        magnitude += coef[j] * size;
    }
    Sums::F64 {
        total,
        magnitude,
        lambda,
        k,
    }
}

/// `coef[j] = S(k, j)·(B)_j / B^k` for `j = 0..=k` (Stirling numbers of the second kind by
/// `S(n, j) = j·S(n−1, j) + S(n−1, j−1)`; all factors positive).
fn closed_form_coefficients(k: usize, b: f64) -> [f64; MAX_HASHES as usize + 1] {
    let mut stirling = [0.0f64; MAX_HASHES as usize + 1];
    stirling[0] = 1.0;
    for n in 1..=k {
        for j in (1..=n).rev() {
            stirling[j] = j as f64 * stirling[j] + stirling[j - 1];
        }
        stirling[0] = 0.0;
    }
    let mut coef = [0.0f64; MAX_HASHES as usize + 1];
    let mut falling = 1.0f64; // (B)_j / B^j
    for j in 1..=k {
        falling *= (b - (j - 1) as f64).max(0.0) / b;
        coef[j] = stirling[j] * falling * b.powi(j as i32 - k as i32);
    }
    coef
}

/// Double-double arithmetic (a value is an unevaluated sum `hi + lo`, ≈ 106 bits;
/// Dekker 1971, with the error-free transformations of Knuth's TwoSum and an FMA TwoProduct)
/// for the closed-form blocked FPR where its alternating sums cancel most of their digits.
mod dd {
    #[derive(Clone, Copy, Debug)]
    struct Dd(f64, f64);

    fn two_sum(a: f64, b: f64) -> Dd {
        let s = a + b;
        let bb = s - a;
        Dd(s, (a - (s - bb)) + (b - bb))
    }

    fn quick(a: f64, b: f64) -> Dd {
        let s = a + b;
        Dd(s, b - (s - a))
    }

    impl Dd {
        fn add(self, o: Dd) -> Dd {
            let s = two_sum(self.0, o.0);
            let t = two_sum(self.1, o.1);
            let u = quick(s.0, s.1 + t.0);
            quick(u.0, u.1 + t.1)
        }
        fn neg(self) -> Dd {
            Dd(-self.0, -self.1)
        }
        fn mul(self, o: Dd) -> Dd {
            let p = self.0 * o.0;
            let e = self.0.mul_add(o.0, -p);
            quick(p, e + (self.0 * o.1 + self.1 * o.0))
        }
        fn mul_f(self, f: f64) -> Dd {
            self.mul(Dd(f, 0.0))
        }
        fn div_f(self, f: f64) -> Dd {
            let q1 = self.0 / f;
            let r = self.add(Dd(q1, 0.0).mul_f(f).neg());
            quick(q1, r.0 / f)
        }
        #[cfg(test)]
        fn powi(self, mut n: usize) -> Dd {
            let (mut base, mut acc) = (self, Dd(1.0, 0.0));
            while n > 0 {
                if n & 1 == 1 {
                    acc = acc.mul(base);
                }
                base = base.mul(base);
                n >>= 1;
            }
            acc
        }
    }

    /// `e^x − 1` for `|x| ≤ 1`: Taylor series of `e^(x/2^10) − 1` (ten terms reach 2^-110),
    /// then ten doublings `expm1(2y) = expm1(y)·(expm1(y) + 2)`, which lose no digits near 0.
    #[cfg(test)]
    fn expm1_small(x: Dd) -> Dd {
        const HALVINGS: i32 = 10;
        let y = Dd(x.0 / 1024.0, x.1 / 1024.0);
        // Horner: y·(1 + y·(1/2! + y·(1/3! + … + y/11!))), the reciprocal factorials in
        // double-double, computed once (ten divisions fewer per call than term by term).
        let inv = inverse_factorials();
        let mut sum = inv[11];
        for m in (1..=10).rev() {
            sum = sum.mul(y).add(inv[m]);
        }
        let mut sum = sum.mul(y);
        for _ in 0..HALVINGS {
            sum = sum.mul(sum.add(Dd(2.0, 0.0)));
        }
        sum
    }

    /// `1/m!` for `m = 0..=11` in double-double.
    fn inverse_factorials() -> &'static [Dd; 12] {
        static T: std::sync::OnceLock<[Dd; 12]> = std::sync::OnceLock::new();
        T.get_or_init(|| {
            let mut t = [Dd(1.0, 0.0); 12];
            for m in 1..12 {
                t[m] = t[m - 1].div_f(m as f64);
            }
            t
        })
    }

    /// `e^x − 1`: [`expm1_small`] near 0, else `2^n·e^r − 1` with `x = n·ln 2 + r`.
    #[cfg(test)]
    fn expm1(x: Dd) -> Dd {
        if x.0.abs() <= 1.0 {
            return expm1_small(x);
        }
        if x.0 < -800.0 {
            return Dd(-1.0, 0.0);
        }
        const LN2: Dd = Dd(std::f64::consts::LN_2, 2.319_046_813_846_299_6e-17);
        let n = (x.0 / LN2.0).round();
        let r = x.add(LN2.mul_f(n).neg());
        let scale = 2f64.powi(n as i32);
        let e = expm1_small(r).add(Dd(1.0, 0.0));
        Dd(e.0 * scale, e.1 * scale).add(Dd(-1.0, 0.0))
    }

    /// The closed form of `blocked_fpr_closed` with the previous arrangement — every `exp`
    /// term by [`expm1`], each inner alternating sum in double-double, `coef` in f64 — kept
    /// as the reference the faster [`blocked_fpr_closed`] is tested against.
    #[cfg(test)]
    #[allow(clippy::needless_range_loop)] // as in `closed_form`
    pub(super) fn blocked_fpr_closed_reference(lambda: f64, k: usize, b: f64, coef: &[f64]) -> f64 {
        let mut e = [Dd(0.0, 0.0); super::MAX_HASHES as usize + 1];
        for (l, el) in e.iter_mut().enumerate().take(k + 1).skip(1) {
            // (1 − l/B)^k − 1, then λ·that, then expm1.
            let base = Dd(1.0, 0.0).add(Dd(l as f64, 0.0).div_f(b).neg());
            let q_minus_1 = base.powi(k).add(Dd(-1.0, 0.0));
            *el = expm1(q_minus_1.mul_f(lambda));
        }
        let mut binom = [0.0f64; super::MAX_HASHES as usize + 1];
        binom[0] = 1.0;
        let mut total = Dd(0.0, 0.0);
        for j in 1..=k {
            for l in (1..=j).rev() {
                binom[l] += binom[l - 1];
            }
            let mut inner = Dd(0.0, 0.0);
            for l in 1..=j {
                let t = e[l].mul_f(binom[l]);
                inner = inner.add(if l % 2 == 0 { t } else { t.neg() });
            }
            total = total.add(inner.mul_f(coef[j]));
        }
        total.0 + total.1
    }

    const W: usize = super::MAX_HASHES as usize + 1;

    /// The closed form's outer sums folded into one weight per `l`:
    /// `w[l] = Σ_{j=l..k} S(k,j)·(B)_j/B^k · C(j,l)`, all in double-double (the alternating
    /// sum over `l` then cancels against weights as precise as its terms). They depend on
    /// `k` and `B` only; for 512-bit blocks each `k`'s row is computed once per process.
    fn weights(k: usize, b: f64) -> [Dd; W] {
        static W512: [std::sync::OnceLock<[Dd; W]>; W] = [const { std::sync::OnceLock::new() }; W];
        if b == 512.0 {
            return *W512[k].get_or_init(|| compute_weights(k, b));
        }
        compute_weights(k, b)
    }

    #[allow(clippy::needless_range_loop)] // j and l index three arrays
    fn compute_weights(k: usize, b: f64) -> [Dd; W] {
        // Stirling numbers of the second kind S(k, j), row by row.
        let mut stirling = [Dd(0.0, 0.0); W];
        stirling[0] = Dd(1.0, 0.0);
        for n in 1..=k {
            for j in (1..=n).rev() {
                stirling[j] = stirling[j].mul_f(j as f64).add(stirling[j - 1]);
            }
            stirling[0] = Dd(0.0, 0.0);
        }
        // coef[j] = S(k, j)·(B)_j / B^k: (B)_j / B^j by factors (B − i)/B, then B^(j − k).
        let mut coef = [Dd(0.0, 0.0); W];
        let mut falling = Dd(1.0, 0.0);
        for j in 1..=k {
            falling = falling.mul(Dd((b - (j - 1) as f64).max(0.0), 0.0).div_f(b));
            let mut c = stirling[j].mul(falling);
            for _ in j..k {
                c = c.div_f(b);
            }
            coef[j] = c;
        }
        // w[l] = Σ_j coef[j]·C(j, l), the binomials row by row (exact in double-double).
        let mut binom = [Dd(0.0, 0.0); W];
        binom[0] = Dd(1.0, 0.0);
        let mut w = [Dd(0.0, 0.0); W];
        for j in 1..=k {
            for l in (1..=j).rev() {
                binom[l] = binom[l].add(binom[l - 1]);
            }
            for l in 1..=j {
                w[l] = w[l].add(coef[j].mul(binom[l]));
            }
        }
        w
    }

    /// [`expm1`] of every `x[l]`, `l` in `1..=k`, into `out[l]`: the same operations on each
    /// element (so the same results, and errors as smooth in `x` as the closed form's
    /// differences need), run as one pass per step over all elements instead of one element
    /// after another. Each step of a double-double Horner chain waits for the last, about 15
    /// cycles; `k` independent chains side by side keep the core busy instead (the closed
    /// form's evaluation took 2.7× less time this way).
    #[allow(clippy::needless_range_loop)] // three arrays indexed together
    fn expm1_each(x: &[Dd; W], k: usize, out: &mut [Dd; W]) {
        const LN2: Dd = Dd(std::f64::consts::LN_2, 2.319_046_813_846_299_6e-17);
        const HALVINGS: i32 = 10;
        let inv = inverse_factorials();
        // `x = n·ln 2 + r` where |x| > 1, as `expm1` reduces it; `n = 0`, `r = x` elsewhere.
        let mut n = [0.0f64; W];
        let mut y = [Dd(0.0, 0.0); W];
        for l in 1..=k {
            let r = if x[l].0.abs() <= 1.0 || x[l].0 < -800.0 {
                x[l]
            } else {
                n[l] = (x[l].0 / LN2.0).round();
                x[l].add(LN2.mul_f(n[l]).neg())
            };
            y[l] = Dd(r.0 / 1024.0, r.1 / 1024.0);
        }
        // `expm1_small` of every `r`, step by step.
        let mut sum = [inv[11]; W];
        for m in (1..=10).rev() {
            for l in 1..=k {
                sum[l] = sum[l].mul(y[l]).add(inv[m]);
            }
        }
        for l in 1..=k {
            sum[l] = sum[l].mul(y[l]);
        }
        for _ in 0..HALVINGS {
            for l in 1..=k {
                sum[l] = sum[l].mul(sum[l].add(Dd(2.0, 0.0)));
            }
        }
        for l in 1..=k {
            out[l] = if x[l].0 < -800.0 {
                Dd(-1.0, 0.0)
            } else if n[l] == 0.0 {
                sum[l]
            } else {
                let scale = 2f64.powi(n[l] as i32);
                let e = sum[l].add(Dd(1.0, 0.0));
                Dd(e.0 * scale, e.1 * scale).add(Dd(-1.0, 0.0))
            };
        }
    }

    #[test]
    fn expm1_each_is_expm1_element_by_element() {
        // The same operations, so the same bits, for arguments in every branch.
        let mut x = [Dd(0.0, 0.0); W];
        for (l, v) in x.iter_mut().enumerate().skip(1) {
            *v = Dd(-(l as f64).powf(1.9) * 0.05, 1e-18 * l as f64);
        }
        x[3] = Dd(-900.0, 0.0);
        x[5] = Dd(0.75, 0.0);
        let mut out = [Dd(0.0, 0.0); W];
        expm1_each(&x, W - 1, &mut out);
        for l in 1..W {
            let want = expm1(x[l]);
            assert_eq!((out[l].0, out[l].1), (want.0, want.1), "x = {:?}", x[l]);
        }
    }

    /// The closed form of `blocked_fpr_closed` in double-double, and its derivative in `λ`:
    /// `F = Σ_l (−1)^l·w[l]·e[l]` with `e[l] = exp(λ(q_l − 1)) − 1`, `q_l = (1 − l/B)^k`
    /// (by repeated squaring, exact to double-double since `1 − l/B` is), and
    /// `dF/dλ = Σ_l (−1)^l·w[l]·(q_l − 1)·(e[l] + 1)`. O(k) per call with the weights cached
    /// ([`weights`]), every `l`'s powers and exponential computed side by side
    /// ([`expm1_each`]).
    #[allow(clippy::needless_range_loop)] // as in `closed_form`
    #[cfg(test)]
    pub(super) fn blocked_fpr_closed(lambda: f64, k: usize, b: f64) -> (f64, f64) {
        let (f, slope, _) = blocked_fpr_closed_with_magnitude(lambda, k, b);
        (f, slope)
    }

    /// How far the double-double sum may cancel and still hold 1e-7 of its result: its
    /// error is about 10^-32 of its magnitude (measured against 60-digit values: 0.6–9·10^-33
    /// times magnitude ÷ result at seven points up to a ratio of 6·10^24), so 10^25 keeps
    /// 1e-7 — itself thirty times finer than the sizing's resolution needs (10^-4 bits/item
    /// on a few hundred, where `ln FPR` moves about 0.1 per bit/item).
    pub(super) const MAX_CANCELLATION: f64 = 1e25;

    /// [`blocked_fpr_closed`] where it holds 1e-7 of its result (see [`MAX_CANCELLATION`]),
    /// `None` where the cancellation leaves fewer digits.
    pub(super) fn blocked_fpr_closed_checked(lambda: f64, k: usize, b: f64) -> Option<(f64, f64)> {
        let (f, slope, magnitude) = blocked_fpr_closed_with_magnitude(lambda, k, b);
        (f > 0.0 && f * MAX_CANCELLATION >= magnitude).then_some((f, slope))
    }

    /// [`blocked_fpr_closed`] and the magnitude of its sum, `Σ_l w[l]·|e[l]|`.
    #[allow(clippy::needless_range_loop)] // as in `closed_form`
    pub(super) fn blocked_fpr_closed_with_magnitude(
        lambda: f64,
        k: usize,
        b: f64,
    ) -> (f64, f64, f64) {
        let w = weights(k, b);
        // q_l − 1 for every l: (1 − l/B)^k by the bits of k, all l side by side.
        let mut base = [Dd(0.0, 0.0); W];
        let mut q = [Dd(1.0, 0.0); W];
        for l in 1..=k {
            base[l] = Dd(1.0, 0.0).add(Dd(l as f64, 0.0).div_f(b).neg());
        }
        let mut bits = k;
        while bits > 0 {
            for l in 1..=k {
                if bits & 1 == 1 {
                    q[l] = q[l].mul(base[l]);
                }
                base[l] = base[l].mul(base[l]);
            }
            bits >>= 1;
        }
        let mut x = [Dd(0.0, 0.0); W];
        for l in 1..=k {
            q[l] = q[l].add(Dd(-1.0, 0.0));
            x[l] = q[l].mul_f(lambda);
        }
        let mut e = [Dd(0.0, 0.0); W];
        expm1_each(&x, k, &mut e);
        let (mut total, mut slope, mut magnitude) = (Dd(0.0, 0.0), Dd(0.0, 0.0), 0.0);
        for l in 1..=k {
            let t = w[l].mul(e[l]);
            let u = w[l].mul(q[l]).mul(e[l].add(Dd(1.0, 0.0)));
            magnitude += t.0.abs();
            if l % 2 == 0 {
                (total, slope) = (total.add(t), slope.add(u));
            } else {
                (total, slope) = (total.add(t.neg()), slope.add(u.neg()));
            }
        }
        (total.0 + total.1, slope.0 + slope.1, magnitude)
    }
}

/// [`blocked_fpr_exact`] by the occupancy Markov chain: `X` evolves as a chain where a throw
/// into a block with `x` ones sets a new bit with probability `(B − x)/B` (classical
/// occupancy, Feller vol. 1 §II.11), mixed over Poisson block loads. O(λ·k·B) work — up to a
/// second for crowded filters, about 35 µs for the sparse ones whose value the closed form
/// hands here (one throw updates only the occupancies that still carry mass, in vector lanes:
/// `simd::occupancy_step`) — kept as the independent reference [`blocked_fpr_closed`] is
/// tested against, and itself tested against a plain chain that drops nothing. `k` above
/// [`MAX_HASHES`] counts as [`MAX_HASHES`], as in [`blocked_fpr_exact`].
pub fn blocked_fpr_markov(bits_per_item: f64, k: u32, block_bits: u32) -> f64 {
    if !(bits_per_item.is_finite() && bits_per_item > 0.0) || block_bits == 0 || k == 0 {
        return 1.0;
    }
    let lambda = f64::from(block_bits) / bits_per_item;
    if lambda > 20.0 * f64::from(block_bits) {
        return 1.0;
    }
    // The chain and the Poisson mixture in one pass, stopping once the block loads not yet
    // reached can add no more than 1e-10 of the sum (their terms are at most 1, so the
    // Poisson tail bounds them); the chain updates only the occupancies that still carry
    // mass (see `Occupancy`). For sparse filters with many probes, where the closed form
    // hands its value here, about 35 µs (33–37 µs at 215 bits/item with k = 29, at 1130 with
    // k = 39 and at 3842 with k = 45; about 900 throws, most of them two to a pass).
    // As in the closed form: more than MAX_HASHES probes count as MAX_HASHES (which also keeps
    // the work per key bounded).
    let k = k.min(MAX_HASHES);
    let mut terms = OccupancyTerms::new(block_bits, k..=k, OCCUPANCY_DROP);
    terms.mixture(k, lambda, 1e-10).fpr.min(1.0)
}

/// Where the Poisson sums stop: the mass beyond `λ + 12√λ + 40` is below 1e-18.
fn poisson_upper(lambda: f64) -> u64 {
    (lambda + 12.0 * lambda.sqrt() + 40.0).ceil() as u64
}

/// `(i, Pois(i; λ))` for `i = 0, 1, 2, …` (without end: callers take what they need, most
/// to [`poisson_upper`]) — the weights of every sum over a block's load in this module.
/// [`PoissonPmf::new`] computes each as `exp(−λ + i·ln λ − ln i!)`;
/// [`PoissonPmf::by_recurrence`] as `Pois(i − 1)·λ/i` while `e^−λ` is a normal f64 (λ below
/// 600; at most about two ulps more per step), which spares an `exp` and a `ln` per term.
struct PoissonPmf {
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
    fn new(lambda: f64) -> Self {
        PoissonPmf {
            lambda,
            ln_lambda: lambda.ln(),
            ln_fact: 0.0,
            pois: 0.0,
            recur: false,
            i: 0,
        }
    }

    fn by_recurrence(lambda: f64) -> Self {
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

/// `terms[i] = E[(X_i/B)^k]` for `i = 0..=max_keys`, where `X_i` is the number of distinct bits
/// set by `k·i` independent uniform throws into `B` bits. Independent of the density, so one
/// pass serves every `λ`.
#[cfg(test)]
fn blocked_occupancy_terms(k: u32, block_bits: u32, max_keys: u64) -> Vec<f64> {
    let mut terms = OccupancyTerms::new(block_bits, k..=k, OCCUPANCY_DROP);
    terms.extend(0, max_keys as usize);
    terms.ks.swap_remove(0).terms
}

/// The occupancy chain of one block: `dist[x] = P(X = x)` for the number `X` of distinct bits
/// set among `B` after some number of uniform throws, one throw at a time (a throw into a
/// block with `x` ones sets a new bit with probability `(B − x)/B`). How many probes a key
/// makes does not enter: after `m` throws it is the distribution of `i` keys' bits for every
/// `k` with `k·i = m`, so one chain serves several `k` ([`OccupancyTerms`]).
struct Occupancy {
    dist: Vec<f64>,
    /// `x/B`: the chance that a throw into a block with `x` ones sets none.
    stay: Cow<'static, [f64]>,
    /// `(B − x + 1)/B` at index `x`: the chance that a throw into `x − 1` ones makes `x`.
    grow: Cow<'static, [f64]>,
    /// The same for two throws at index `x`: from `x` ones `(x/B)²`, from `x − 1`
    /// `(B − x + 1)(2x − 1)/B²` (new then old, or old then new), from `x − 2`
    /// `(B − x + 2)(B − x + 1)/B²`.
    stay2: Cow<'static, [f64]>,
    grow1: Cow<'static, [f64]>,
    grow2: Cow<'static, [f64]>,
    /// The occupancies still carrying mass: `low..=reach`. Those that fall under `cutoff`, at
    /// either end, are dropped (set to zero) and their mass added to `dropped`: every
    /// expectation of a function within `[0, 1]` computed from the chain is then short of its
    /// exact value by at most `dropped`.
    low: usize,
    reach: usize,
    cutoff: f64,
    dropped: f64,
}

/// The mass below which [`blocked_fpr_markov`]'s chain drops an occupancy: what it drops
/// stays below 1e-290 in all.
const OCCUPANCY_DROP: f64 = 1e-300;

/// The same for the sizing's chains ([`Chains`]), which compare FPRs with targets the sizing
/// accepts, 3·10^-25 and above: a few thousand throws drop below 10^-36 in all, 10^-11 of
/// the smallest target, and every comparison adds what was dropped. The window of live
/// occupancies is narrower than with 1e-300 (at k = 38 and 938 bits/item about 300 wide
/// there); with 1e-60 the sizing took about half the time it took with 1e-300.
const SIZING_DROP: f64 = 1e-40;

/// [`Occupancy`]'s coefficients at occupancy `x` of a block of `bb` bits, in the order
/// `[stay, grow, stay2, grow1, grow2]` (see there). A `const fn`, so that the 512-bit block's
/// are a table built at compile time ([`OCCUPANCY_512`]).
const fn throw_coefficients(x: usize, bb: usize) -> [f64; 5] {
    let b = bb as f64;
    let stay = x as f64 / b;
    // `(B − x + 1)/B`, from `x − 1` ones (at `x = 0`, where nothing comes from below, the
    // value is never used: kept as at `x = 1`).
    let grow = (bb + 1 - if x == 0 { 1 } else { x }) as f64 / b;
    let grow1 = if x == 0 {
        0.0
    } else {
        ((bb + 1 - x) as f64 / b) * ((2.0 * x as f64 - 1.0) / b)
    };
    // From `x − 2` ones, so nothing at `x < 2`.
    let grow2 = if x < 2 {
        0.0
    } else {
        ((bb + 2 - x) as f64 / b) * ((bb + 1 - x) as f64 / b)
    };
    [stay, grow, stay * stay, grow1, grow2]
}

/// [`throw_coefficients`] for every occupancy of a 512-bit block (the blocked filter's), one
/// row per kind: computing them cost a division or two per occupancy and chain (this table
/// and the first `(x/B)^k` by squaring instead of one `powi` per occupancy took the sizing
/// below 5·10^-14 from 37–39 µs to 31 on average, the throw body of `simd::occupancy_step`
/// as now in both).
static OCCUPANCY_512: [[f64; 513]; 5] = {
    let mut table = [[0.0f64; 513]; 5];
    let mut x = 0;
    while x <= 512 {
        let c = throw_coefficients(x, 512);
        let mut kind = 0;
        while kind < 5 {
            table[kind][x] = c[kind];
            kind += 1;
        }
        x += 1;
    }
    table
};

impl Occupancy {
    fn new(block_bits: u32, cutoff: f64) -> Self {
        let bb = block_bits as usize;
        let mut dist = vec![0.0f64; bb + 1];
        dist[0] = 1.0;
        let [stay, grow, stay2, grow1, grow2] = if bb == 512 {
            OCCUPANCY_512.each_ref().map(|row| Cow::Borrowed(&row[..]))
        } else {
            let mut rows: [Vec<f64>; 5] = Default::default();
            for x in 0..=bb {
                for (row, c) in rows.iter_mut().zip(throw_coefficients(x, bb)) {
                    row.push(c);
                }
            }
            rows.map(Cow::Owned)
        };
        Occupancy {
            dist,
            stay,
            grow,
            stay2,
            grow1,
            grow2,
            low: 0,
            reach: 0,
            cutoff,
            dropped: 0.0,
        }
    }

    /// `E[(X/B)^k]` from `pw[x] = (x/B)^k` (a non-member's chance to hit only set bits).
    /// Eight partial sums side by side: one running sum would wait for each addition in turn
    /// (four cycles each), a few hundred per term.
    fn expect(&self, pw: &[f64]) -> f64 {
        const W: usize = 8;
        let (low, reach) = (self.low, self.reach);
        let (dist, pw) = (&self.dist[low..=reach], &pw[low..=reach]);
        let mut acc = [0.0f64; W];
        let (d8, p8) = (dist.chunks_exact(W), pw.chunks_exact(W));
        let (dr, pr) = (d8.remainder(), p8.remainder());
        for (d, p) in d8.zip(p8) {
            for i in 0..W {
                acc[i] += d[i] * p[i];
            }
        }
        for (i, (d, p)) in dr.iter().zip(pr).enumerate() {
            acc[i] += d * p;
        }
        ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]))
    }

    /// One more throw.
    fn throw(&mut self) {
        let bb = self.dist.len() - 1;
        self.reach = (self.reach + 1).min(bb);
        let lo = self.low.max(1);
        crate::simd::occupancy_step(
            &mut self.dist[lo - 1..=self.reach],
            [&self.stay[lo..=self.reach], &self.grow[lo..=self.reach]],
        );
        if self.low == 0 {
            self.dist[0] = 0.0;
        }
        self.trim();
    }

    /// Two more throws in one pass over the window (half the passes and stores, a quarter
    /// fewer loads, a sixth fewer multiplications and additions; the same distribution to
    /// rounding). Needs `low ≥ 2` (the chain's first throws go one at a time).
    fn throw_two(&mut self) {
        let bb = self.dist.len() - 1;
        assert!(self.low >= 2, "the first throws go one at a time");
        self.reach = (self.reach + 2).min(bb);
        let (lo, hi) = (self.low, self.reach);
        crate::simd::occupancy_step(
            &mut self.dist[lo - 2..=hi],
            [
                &self.stay2[lo..=hi],
                &self.grow1[lo..=hi],
                &self.grow2[lo..=hi],
            ],
        );
        self.trim();
    }

    /// Drop the occupancies under the cutoff at both ends of the window.
    fn trim(&mut self) {
        while self.low < self.reach && self.dist[self.low] < self.cutoff {
            self.dropped += self.dist[self.low];
            self.dist[self.low] = 0.0;
            self.low += 1;
        }
        while self.reach > self.low && self.dist[self.reach] < self.cutoff {
            self.dropped += self.dist[self.reach];
            self.dist[self.reach] = 0.0;
            self.reach -= 1;
        }
    }
}

/// `E[(X_i/B)^k]` for every block load `i` a Poisson mixture reaches, for each of a few `k`,
/// from one [`Occupancy`] chain: the chain advances only as far as a mixture asks, and at
/// every multiple of a tracked `k` records that `k`'s term. The sizing compares neighbouring
/// `k`s at densities where the closed form has no digit left; one chain for all of them
/// costs what one of them did.
struct OccupancyTerms {
    chain: Occupancy,
    ks: Vec<KTerms>,
}

/// One tracked `k` of [`OccupancyTerms`]: `pw[x] = (x/B)^k`, the terms so far, and the
/// throws left until the next one.
struct KTerms {
    k: u32,
    pw: Vec<f64>,
    terms: Vec<f64>,
    due: u32,
}

impl OccupancyTerms {
    /// Track every `k` of `ks` (each at least 1), dropping occupancies below `cutoff`.
    fn new(block_bits: u32, ks: std::ops::RangeInclusive<u32>, cutoff: f64) -> Self {
        let chain = Occupancy::new(block_bits, cutoff);
        let frac = &chain.stay; // x/B
        // `(x/B)^k` by squaring for the first `k`, all occupancies side by side (`powi` per
        // occupancy cost several µs), then one product per next `k`.
        let first = *ks.start();
        let (mut pw, mut base, mut e) = (vec![1.0f64; frac.len()], frac.to_vec(), first);
        loop {
            if e & 1 == 1 {
                pw.iter_mut().zip(&base).for_each(|(p, b)| *p *= b);
            }
            e >>= 1;
            if e == 0 {
                break;
            }
            base.iter_mut().for_each(|b| *b *= *b);
        }
        let mut tracked: Vec<KTerms> = Vec::new();
        for k in ks {
            if k > first {
                pw.iter_mut().zip(frac.iter()).for_each(|(p, f)| *p *= f);
            }
            // No keys: no bit set, no false positive (`pw[0] = 0` for every k ≥ 1).
            tracked.push(KTerms {
                k,
                pw: pw.clone(),
                terms: vec![0.0],
                due: k,
            });
        }
        OccupancyTerms { chain, ks: tracked }
    }

    /// Advance until the `index`-th tracked `k` has its term for `keys` keys per block.
    fn extend(&mut self, index: usize, keys: usize) {
        while self.ks[index].terms.len() <= keys {
            // Two throws at once unless a tracked `k` is due after the first.
            let two = self.chain.low >= 2 && self.ks.iter().all(|t| t.due >= 2);
            let n = if two {
                self.chain.throw_two();
                2
            } else {
                self.chain.throw();
                1
            };
            for t in &mut self.ks {
                t.due -= n;
                if t.due == 0 {
                    t.terms.push(self.chain.expect(&t.pw));
                    t.due = t.k;
                }
            }
        }
    }

    /// The FPR at `λ` keys per block for a tracked `k`, `Σ_i Pois(i; λ)·E[(X_i/B)^k]`, and
    /// its derivative in `λ`, `Σ_i Pois(i; λ)·(i/λ − 1)·E[(X_i/B)^k]`: summed until the loads
    /// not reached can add at most `rel` of the sum (their terms are at most 1, so the
    /// Poisson tail `Pois(i)·r/(1 − r)`, `r = λ/(i + 1) < 1`, bounds them), and at most to
    /// [`poisson_upper`]`(λ)`; and by how much the FPR may exceed the sum: the mass the chain
    /// has dropped so far plus that tail bound where the sum stopped. Panics if `k` is not
    /// tracked.
    fn mixture(&mut self, k: u32, lambda: f64, rel: f64) -> Mixture {
        let index = self.ks.iter().position(|t| t.k == k).expect("a tracked k");
        let (mut total, mut slope, mut tail) = (0.0f64, 0.0f64, 0.0f64);
        // (The sizing's λ stays below about 10: the weights by recurrence.)
        let weights = PoissonPmf::by_recurrence(lambda).take(poisson_upper(lambda) as usize + 1);
        for (i, pois) in weights {
            self.extend(index, i);
            let w = pois * self.ks[index].terms[i];
            total += w;
            slope += w * (i as f64 / lambda - 1.0);
            let r = lambda / (i as f64 + 1.0);
            tail = if r < 1.0 { pois * r / (1.0 - r) } else { 1.0 };
            if r < 0.5 && tail <= rel * total {
                break;
            }
        }
        Mixture {
            fpr: total,
            slope,
            slack: self.chain.dropped + tail,
        }
    }
}

/// What [`OccupancyTerms::mixture`] finds: the FPR as summed, its derivative in `λ`, and by
/// how much the exact FPR may exceed the sum (the mass the chain dropped and the Poisson tail
/// where the sum stopped; the f64 rounding of the sum, about 10^-13 of it, is not counted —
/// the sizing's answer lies a quarter of its resolution above the root, about 10^-8 of the
/// FPR below `p` or more).
#[derive(Clone, Copy, Debug)]
struct Mixture {
    fpr: f64,
    slope: f64,
    slack: f64,
}

/// The exact FPR by the plainest occupancy chain: the whole distribution over `0..=B`
/// every throw, no occupancy dropped, the Poisson mixture to [`poisson_upper`] with no
/// early stop — the reference the windowed, shared chains are checked against.
#[cfg(test)]
fn plain_chain_fpr(bits_per_item: f64, k: u32, block_bits: u32) -> f64 {
    let (bb, b) = (block_bits as usize, f64::from(block_bits));
    let lambda = b / bits_per_item;
    let mut dist = vec![0.0f64; bb + 1];
    dist[0] = 1.0;
    let mut total = 0.0f64;
    for (i, pois) in PoissonPmf::new(lambda).take(poisson_upper(lambda) as usize + 1) {
        if i > 0 {
            for _ in 0..k {
                for x in (1..=bb).rev() {
                    dist[x] = dist[x] * (x as f64 / b) + dist[x - 1] * ((bb - x + 1) as f64 / b);
                }
                dist[0] = 0.0;
            }
        }
        let term: f64 = (0..=bb)
            .map(|x| dist[x] * (x as f64 / b).powi(k as i32))
            .sum();
        total += pois * term;
    }
    total
}

/// `Σ_i Pois(i; λ) · terms[i]` over the available terms (the tests' reference mixture).
#[cfg(test)]
fn poisson_mixture(lambda: f64, terms: &[f64]) -> f64 {
    let total: f64 = PoissonPmf::new(lambda)
        .zip(terms)
        .map(|((_, pois), t)| pois * t)
        .sum();
    total.min(1.0)
}

/// Smallest bits/item (to 1e-4) at which a blocked filter reaches FPR `p` by
/// [`blocked_fpr_exact`], with the best `k`. 1 % → 9.92 bits/item (k = 6), 0.1 % → 15.55
/// (k = 9), 3 % → 7.43 (k = 5) at 512 bits.
///
/// For each `k` the density is found by a safeguarded regula falsi (Illinois) on
/// `ln FPR − ln p`, which is nearly linear in bits/item, bracketed below by the classic
/// density (a blocked filter never needs fewer bits); `k` walks from the classic optimum
/// towards fewer probes while that lowers the density (the optimum is unimodal in `k`).
/// About ten closed-form evaluations per `k` and three or four `k`s: microseconds. Below
/// 3·10^-5, where the closed form needs double-double sums (3.5–11 µs each), Newton's
/// method from a fitted start and one comparison per neighbouring `k` settle it in 3–6 of
/// them (`blocked_best_density_precise`; `cargo run --release -p bloomlab-blocked --example
/// sizing` prints the times).
/// Where the f64 sum's terms exceed a result near `p` by more than `CHAIN_ABOVE` (10^21) (from
/// about 5·10^-14 down; past 10^-15 the double-double sums have no digit left at all) the
/// occupancy chain sizes the filter: one chain serves every `k` within two of a fitted guess
/// (`Chains`; the distribution of set bits after `m` throws does not depend on how many
/// throws a key makes), grows only as far as the Poisson mixture at the current density
/// needs, drops occupancies below 1e-40 and adds what it dropped, and the mixture's cut-off
/// tail, to every comparison with `p`. `examples/sizing` (fastest of five calls, the machine
/// in its faster state): 9–30 µs from 1.6·10^-5 to 1.6·10^-13, 25–42 µs from 5·10^-14 to
/// 5·10^-25 (it took 1.4–23 ms below 1.6·10^-16 with one chain per `k` and guesses that were
/// off by up to five probes there); what 4096 bits/item cannot reach, below about 3·10^-25,
/// is refused in 25–26 µs; about 40 % slower while the machine runs slow. Figures and
/// history in the blocked crate's docs.
pub fn blocked_bits_per_item_exact(p: f64, block_bits: u32) -> Result<(f64, u32)> {
    let p = validate_fpr(p)?;
    if block_bits == 0 {
        return Err(Error::invalid("block_bits", "must be positive"));
    }
    if block_bits > BLOCKED_EXACT_MAX_BITS {
        return blocked_bits_per_item(p, block_bits);
    }
    let floor = classic_bits_per_item(p)?;
    let k_classic = ((floor * std::f64::consts::LN_2).round() as u32).clamp(1, MAX_HASHES);
    if p < DOUBLE_DOUBLE_BELOW {
        // Where the f64 sums have lost their digits, straight to the double-double pass:
        // Newton's method per `k` from a fitted start, `k` settled by one comparison per
        // neighbour (see `blocked_best_density_precise`). If it does not settle — where no
        // density up to 4096 bits/item reaches `p` — the target is refused: the bracketed
        // search below would spend seconds of evaluations to say the same.
        return blocked_best_density_precise(p, block_bits, floor).ok_or_else(|| {
            Error::invalid(
                "fpr",
                format!(
                    "{p} is not reachable with {block_bits}-bit blocks (no density up to \
                     4096 bits/item found)"
                ),
            )
        });
    }
    // First pass with the plain f64 closed form (fast; a few digits short where the FPR is
    // tiny), from the classic optimum's k; then the precise pass from what it found.
    let rough = blocked_best_density(p, block_bits, k_classic, floor, false, SIZING_TOL);
    let best = match rough {
        // The f64 sum was good to 1e-7 at the answer: the precise pass would find the same.
        Some((d, k))
            if closed_form(d, k, block_bits, false) == closed_form(d, k, block_bits, true) =>
        {
            rough
        }
        Some((d, k)) => {
            blocked_best_density(p, block_bits, k, (d * 0.999).max(floor), true, SIZING_TOL)
        }
        None => None,
    }
    .or_else(|| blocked_best_density(p, block_bits, k_classic, floor, true, SIZING_TOL));
    best.ok_or_else(|| {
        Error::invalid(
            "fpr",
            format!("{p} is not reachable with {block_bits}-bit blocks"),
        )
    })
}

/// Below this target the sizing goes straight to the double-double closed form
/// ([`blocked_best_density_precise`]): from about here down (at 512 bits, 1.4·10^-5 needed
/// it, 5·10^-5 did not) the f64 alternating sums no longer hold 1e-7 of the result, so the
/// f64 search at full resolution only wandered in their rounding noise (70–170 evaluations)
/// before the precise pass started again from its answer.
const DOUBLE_DOUBLE_BELOW: f64 = 3e-5;

/// The sizing's resolution in bits/item: each density is the smallest to within this, from
/// above.
const SIZING_TOL: f64 = 1e-4;

/// [`blocked_best_density`] with the double-double closed form and few evaluations: a start
/// from [`blocked_density_hint`] and [`blocked_k_hint`], the density for that `k` by
/// Newton's method ([`blocked_density_newton`]: the double-double sum gives the FPR's
/// derivative too), then `k` moves while a neighbour beats it — which one comparison decides:
/// a neighbour `k'` needs fewer bits exactly when its FPR at the current density is already
/// below `p` (the FPR falls as bits grow). `None` if Newton's method does not settle (the
/// caller then refuses the target).
fn blocked_best_density_precise(p: f64, block_bits: u32, floor: f64) -> Option<(f64, u32)> {
    let start = blocked_density_hint(p).max(floor);
    let mut k = blocked_k_hint(start);
    let mut chains = Chains::new(block_bits, k);
    // One choice of method for the whole walk, from the f64 sum's terms at the start: where
    // they exceed a result near `p` by more than `CHAIN_ABOVE`, the chain from the start.
    // (Below 10^-15 the ratio is far past it at 512 bits: no need to look.)
    chains.first = (block_bits == 512 && p < 1e-15)
        || match closed_form_sums(start, k, block_bits) {
            Sums::F64 { magnitude, .. } => magnitude > p * CHAIN_ABOVE,
            Sums::Saturated => false,
        };
    let mut d = blocked_density_newton(p, k, block_bits, start, floor, &mut chains)?;
    for dir in [-1i64, 1] {
        let mut moved = false;
        loop {
            let next = i64::from(k) + dir;
            if !(1..=i64::from(MAX_HASHES)).contains(&next)
                || fpr_to_compare(p, d, next as u32, block_bits, &mut chains) >= p
            {
                break;
            }
            let kk = next as u32;
            let dd = blocked_density_newton(p, kk, block_bits, d, floor, &mut chains)?;
            if dd >= d {
                break;
            }
            (k, d, moved) = (kk, dd, true);
        }
        if moved {
            break;
        }
    }
    Some((d, k))
}

/// The occupancy chain's terms for the sizing's `k`s, for where the double-double sum costs
/// more or cancels too far (see [`CHAIN_ABOVE`]): one [`OccupancyTerms`] chain for the `k`s
/// within [`CHAIN_BAND`] of the first guess, built the first time one is asked for (most
/// targets never need it); a `k` outside gets a chain of its own, kept for the rest of the
/// walk.
struct Chains {
    block_bits: u32,
    band: std::ops::RangeInclusive<u32>,
    shared: Option<OccupancyTerms>,
    others: Vec<OccupancyTerms>,
    /// The walk sizes by the chain from the start (see [`CHAIN_ABOVE`]).
    first: bool,
}

/// Where the f64 closed form's terms exceed a result near the target by more than this, the
/// sizing runs the occupancy chain from the start instead of Newton's method on the
/// double-double sums. Those hold 1e-7 of the result up to a ratio of 10^25
/// (`dd::MAX_CANCELLATION`), but from here on their few evaluations (10–20 µs each at k ≥ 27)
/// cost about as much as the shared chain or more; one choice per call, because a walk that
/// started on the sums and ended on the chain paid for both (57–69 µs where the switch fell).
/// Chosen when the chain took 40–49 µs from 5·10^-14 down (single throws; `examples/sizing`:
/// 5·10^-13 sized in 28 µs by the sums, 1.6·10^-13 in 29 by the sums, 5·10^-14 in 46–49 by the
/// chain). With the final chain the switch matters little: in one process, 10^21 against
/// 10^22 in six alternating rounds (5·10^-13 to 5·10^-15, where 5·10^-14 changes sides) read
/// 29–30 µs at 5·10^-14 either way.
const CHAIN_ABOVE: f64 = 1e21;

/// How far from the first guess at `k` the sizing's shared chain tracks `k`: the fitted
/// guess is off by at most one below 10^-15 (see [`blocked_k_hint`]), and the walk compares
/// one more.
const CHAIN_BAND: u32 = 2;

impl Chains {
    fn new(block_bits: u32, k: u32) -> Self {
        let band = k.saturating_sub(CHAIN_BAND).max(1)..=(k + CHAIN_BAND).min(MAX_HASHES);
        Chains {
            block_bits,
            band,
            shared: None,
            others: Vec::new(),
            first: false,
        }
    }

    /// Whether `k`'s FPR should come from the chain without trying the closed form: the walk
    /// chose the chain from the start, or the shared chain runs already (the double-double
    /// sums gave out for a neighbouring `k`, and would here too) and tracks `k`.
    fn preferred(&self, k: u32) -> bool {
        self.first || (self.shared.is_some() && self.band.contains(&k))
    }

    /// The FPR at `λ` keys per block with `k` probes, to 1e-10 ([`OccupancyTerms::mixture`]):
    /// far inside the sizing's resolution, 1e-4 bits/item, which moves the FPR by 2·10^-7 of
    /// itself or more (the least near 4096 bits/item).
    fn mixture(&mut self, k: u32, lambda: f64) -> Mixture {
        const REL: f64 = 1e-10;
        let bb = self.block_bits;
        let terms = if self.band.contains(&k) {
            let band = self.band.clone();
            self.shared
                .get_or_insert_with(|| OccupancyTerms::new(bb, band, SIZING_DROP))
        } else {
            let at = match self.others.iter().position(|t| t.ks[0].k == k) {
                Some(i) => i,
                None => {
                    self.others
                        .push(OccupancyTerms::new(bb, k..=k, SIZING_DROP));
                    self.others.len() - 1
                }
            };
            &mut self.others[at]
        };
        terms.mixture(k, lambda, REL)
    }
}

/// A first guess at the best `k` for a 512-bit blocked filter of `bits_per_item`:
/// `round(7.3·ln(bits/item) − 10.3)` up to 330 bits/item, fitted to the exact optimum at 210
/// targets from 3·10^-5 down to 10^-15 (off by one at 35 of them, all near a tie between two
/// `k`s), and `round(5.402·ln(bits/item) + 0.396)` above, fitted at 140 targets from 10^-15
/// down to 3·10^-25 (off by one at 18; the first formula was off by up to five there). Only a
/// start: the callers walk `k` to the optimum whatever the guess.
fn blocked_k_hint(bits_per_item: f64) -> u32 {
    let ln_d = bits_per_item.max(1.0).ln();
    let k = if bits_per_item <= 330.0 {
        7.3 * ln_d - 10.3
    } else {
        5.402 * ln_d + 0.396
    };
    (k.round().max(1.0) as u32).min(MAX_HASHES)
}

/// A first guess at the density (bits/item) a 512-bit blocked filter needs for target `p`
/// below [`DOUBLE_DOUBLE_BELOW`], a cubic in `L = −ln p` fitted by least squares to the exact
/// optimum: `ln d ≈ 1.8031 + 0.16252·L − 2.5053·10^-3·L² + 3.2683·10^-5·L³` down to 10^-15
/// (within 0.4 % of it from 1.6·10^-5 to 1.6·10^-15), and `ln d ≈ 2.4729 + 0.095494·L −
/// 2.2615·10^-4·L² + 6.5395·10^-6·L³` below (within 0.03 % of it at 140 targets from 10^-15
/// to 3·10^-25; the first cubic was 64 % off there). Only a start: Newton's method and the
/// `k` walk settle the answer whatever the guess.
fn blocked_density_hint(p: f64) -> f64 {
    let l = (-p.ln()).clamp(-(3e-5f64.ln()), -(3e-25f64.ln()));
    let ln_d = if l <= -(1e-15f64.ln()) {
        1.803_085_914_642_259
            + l * (0.162_521_933_499_769_5
                + l * (-2.505_304_602_255_543_5e-3 + l * 3.268_292_767_350_482e-5))
    } else {
        2.472_872_682_791_308_6
            + l * (0.095_494_266_440_380_96
                + l * (-2.261_497_789_700_040_7e-4 + l * 6.539_480_925_146_976e-6))
    };
    ln_d.exp()
}

/// The FPR of `(bits_per_item, k)` as precise as a comparison with `p` needs: the occupancy
/// chain plus its slack where the walk prefers it ([`Chains::preferred`]); else the f64
/// closed form where its rounding bound (2^10·ε·magnitude, far above the ulp-sized errors of
/// its terms) leaves no doubt which side of `p` it lies, else the double-double sum, else
/// (where that cancels too far) the chain plus its slack.
fn fpr_to_compare(p: f64, bits_per_item: f64, k: u32, block_bits: u32, chains: &mut Chains) -> f64 {
    if chains.preferred(k) {
        let m = chains.mixture(k, f64::from(block_bits) / bits_per_item);
        return (m.fpr + m.slack).clamp(0.0, 1.0);
    }
    match closed_form_sums(bits_per_item, k, block_bits) {
        Sums::Saturated => 1.0,
        Sums::F64 {
            total,
            magnitude,
            lambda,
            k,
        } => {
            let bound = magnitude * f64::EPSILON * 1024.0;
            if (total - p).abs() > bound {
                return total.clamp(0.0, 1.0);
            }
            // A result near `p` with terms this large is past what double-double holds: the
            // chain, without trying.
            let dd = if magnitude > p * dd::MAX_CANCELLATION {
                None
            } else {
                dd::blocked_fpr_closed_checked(lambda, k, f64::from(block_bits))
            };
            match dd {
                Some((f, _)) => f.clamp(0.0, 1.0),
                None => {
                    // At most the slack above the sum: the comparison errs towards "not
                    // yet", so the filter meets its target whatever was dropped or cut off.
                    let m = chains.mixture(k as u32, lambda);
                    (m.fpr + m.slack).clamp(0.0, 1.0)
                }
            }
        }
    }
}

/// The Newton step below which [`blocked_density_newton`] takes its last step (see there).
const NEWTON_LAST_STEP: f64 = 1e-3;

/// The smallest density (bits/item, to [`SIZING_TOL`] from above) where the double-double FPR
/// with `k` probes is at most `p`, by Newton's method on `φ(d) = ln FPR − ln p` — nearly
/// linear in `d`, so from a start within a few per cent it settles in two or three
/// evaluations; steps are held within ±25 % of `d`. Once a step is below
/// [`NEWTON_LAST_STEP`], the point it lands on is within about `C·step²` of the root
/// (Newton's quadratic convergence; `C = |φ''/2φ'|` measured 0.002–0.013 per bit/item from
/// 2·10^-5 to 10^-15), so within 1.3·10^-8 bits/item, far inside the tolerance; the answer
/// is a quarter of the tolerance above that point, and one comparison confirms its FPR is
/// at most `p` (so the filter always meets its target). Never below `floor` (the classic density).
/// `None` if it does not settle or needs more than 4096 bits/item (as the bracketed search).
fn blocked_density_newton(
    p: f64,
    k: u32,
    block_bits: u32,
    start: f64,
    floor: f64,
    chains: &mut Chains,
) -> Option<f64> {
    const TOL: f64 = SIZING_TOL;
    let b = f64::from(block_bits);
    let kk = k.min(MAX_HASHES) as usize;
    let ln_p = p.ln();
    let mut x = start.max(floor);
    // The occupancy chain from the start if the walk chose it; else from the first time the
    // double-double sum cancels too far for this `k` (the iterates near the root would too).
    let mut chain_only = chains.first;
    for _ in 0..40 {
        let lambda = b / x;
        let precise = if chain_only {
            None
        } else {
            dd::blocked_fpr_closed_checked(lambda, kk, b)
        };
        let (f, slope) = match precise {
            Some(v) => v,
            None => {
                chain_only = true;
                let m = chains.mixture(kk as u32, lambda);
                (m.fpr, m.slope)
            }
        };
        if !(f.is_finite() && f > 0.0 && slope > 0.0) {
            return None;
        }
        // dφ/dd = (dF/dλ)/F · dλ/dd with λ = B/d.
        let dphi = -(slope / f) * b / (x * x);
        let step = (-(f.ln() - ln_p) / dphi).clamp(-0.25 * x, 0.25 * x);
        if step.abs() < NEWTON_LAST_STEP {
            let c = (x + step + TOL / 4.0).max(floor);
            return (fpr_to_compare(p, c, k, block_bits, chains) <= p).then_some(c);
        }
        if x + step <= floor {
            // The root lies at or below the classic density (never for a blocked filter).
            return (fpr_to_compare(p, floor, k, block_bits, chains) <= p).then_some(floor);
        }
        x += step;
        if x > 4096.0 {
            return None;
        }
    }
    None
}

/// The best `(density, k)` for target `p`: `k` walks from `k_start` down while that lowers the
/// density, else up; each density searched from `start` (which must not exceed the answer
/// for the `k` that wins; `floor`, the classic density, never does).
fn blocked_best_density(
    p: f64,
    block_bits: u32,
    k_start: u32,
    start: f64,
    precise: bool,
    tol: f64,
) -> Option<(f64, u32)> {
    let density = |k: u32| blocked_density_for(p, k, block_bits, start, precise, tol);
    let mut best: Option<(f64, u32)> = density(k_start).map(|d| (d, k_start));
    // Walk down (crowded blocks favour fewer probes), then up if down did not help.
    for dir in [-1i64, 1] {
        let mut k = i64::from(k_start) + dir;
        let mut improved = false;
        while (1..=i64::from(MAX_HASHES)).contains(&k) {
            let kk = k as u32;
            match (density(kk), best) {
                (Some(d), Some((bd, _))) if d < bd => best = Some((d, kk)),
                (Some(d), None) => best = Some((d, kk)),
                _ => break,
            }
            improved = true;
            k += dir;
        }
        if improved {
            break;
        }
    }
    best
}

/// Smallest bits/item (to `tol`, from above) where [`blocked_fpr_exact`] with `k` probes is
/// at most `p`, searched from `floor` (where the FPR exceeds `p`); `None` past 4096
/// bits/item.
fn blocked_density_for(
    p: f64,
    k: u32,
    block_bits: u32,
    floor: f64,
    precise: bool,
    tol: f64,
) -> Option<f64> {
    let ln_p = p.ln();
    let phi = |bpi: f64| closed_form(bpi, k, block_bits, precise).max(1e-300).ln() - ln_p;
    // The classic density: no blocked filter reaches `p` with fewer bits.
    let hard_floor = classic_bits_per_item(p).ok()?;
    let (mut a, mut fa) = (floor.max(hard_floor), phi(floor.max(hard_floor)));
    let mut c = a * 1.002 + 0.01;
    let mut fc = phi(c);
    while fa <= 0.0 {
        // Started above the root: move the bracket down.
        if a <= hard_floor {
            return Some(hard_floor);
        }
        (c, fc) = (a, fa);
        a = (a * 0.99 - 0.01).max(hard_floor);
        fa = phi(a);
    }
    while fc > 0.0 {
        (a, fa) = (c, fc);
        c = c * 1.5 + 0.5;
        if c > 4096.0 {
            return None;
        }
        fc = phi(c);
    }
    let mut side = 0i8;
    for _ in 0..200 {
        if c - a <= tol {
            break;
        }
        // Illinois step, kept strictly inside the bracket (bisection if it is not).
        let mut x = (a * fc - c * fa) / (fc - fa);
        if !(x > a && x < c) {
            x = 0.5 * (a + c);
        }
        let fx = phi(x);
        if fx > 0.0 {
            (a, fa) = (x, fx);
            if side == 1 {
                fc *= 0.5;
            }
            side = 1;
            // The estimate is usually within tol of the root: try to close the bracket.
            let y = (x + 0.9 * tol).min(c);
            if y < c && phi(y) <= 0.0 {
                c = y;
            }
        } else {
            (c, fc) = (x, fx);
            if side == -1 {
                fa *= 0.5;
            }
            side = -1;
            let y = (x - 0.9 * tol).max(a);
            if y > a {
                let fy = phi(y);
                if fy > 0.0 {
                    (a, fa) = (y, fy);
                }
            }
        }
    }
    Some(c)
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

#[cfg(test)]
mod blocked_closed_form_tests {
    use super::*;

    #[test]
    fn closed_form_agrees_with_the_markov_chain() {
        let mut worst_rel = 0.0f64;
        for k in 1..=16u32 {
            // One chain pass serves every density (terms do not depend on λ).
            let terms = blocked_occupancy_terms(k, 512, poisson_upper(512.0));
            for bpi in 1..=64u32 {
                let lambda = 512.0 / f64::from(bpi);
                let chain = poisson_mixture(lambda, &terms);
                let closed = blocked_fpr_closed(f64::from(bpi), k, 512);
                if chain < 1e-6 {
                    assert!(
                        (closed - chain).abs() < 1e-12,
                        "k={k} bpi={bpi}: {closed} vs {chain}"
                    );
                } else {
                    let rel = (closed / chain - 1.0).abs();
                    worst_rel = worst_rel.max(rel);
                    assert!(rel < 1e-6, "k={k} bpi={bpi}: {closed} vs {chain}");
                }
            }
        }
        assert!(worst_rel < 1e-6);
        // Fractional densities and other block sizes too.
        for (bpi, k, bits) in [
            (9.896, 6, 512),
            (15.488, 9, 512),
            (7.5, 4, 256),
            (12.3, 7, 1024),
        ] {
            let (c, m) = (
                blocked_fpr_closed(bpi, k, bits),
                blocked_fpr_markov(bpi, k, bits),
            );
            assert!((c / m - 1.0).abs() < 1e-6, "{bpi}/{k}/{bits}: {c} vs {m}");
        }
    }

    #[test]
    fn closed_form_edge_cases() {
        assert_eq!(blocked_fpr_closed(f64::NAN, 6, 512), 1.0);
        assert_eq!(blocked_fpr_closed(0.0, 6, 512), 1.0);
        assert_eq!(blocked_fpr_closed(1e-300, 6, 512), 1.0);
        assert_eq!(blocked_fpr_closed(10.0, 0, 512), 1.0);
        assert_eq!(blocked_fpr_closed(f64::INFINITY, 6, 512), 1.0);
        assert!(blocked_fpr_closed(1e300, 6, 512) < 1e-300);
        // Every k up to MAX_HASHES stays a probability.
        for k in 1..=MAX_HASHES {
            for bpi in [0.01, 0.5, 2.0, 10.0, 40.0, 200.0] {
                let p = blocked_fpr_closed(bpi, k, 512);
                assert!((0.0..=1.0).contains(&p), "{k} {bpi}: {p}");
            }
        }
        // One key per block per 512 bits/item... k probes of one key in 512 bits at λ → 0:
        // FPR ≈ λ·E[(X_1/B)^k] ≈ λ·(k/B)^k for small k; at k = 1: λ/B = 1/bpi.
        let p = blocked_fpr_closed(1e6, 1, 512);
        assert!((p * 1e6 - 1.0).abs() < 1e-5, "{p}");
    }
}

#[cfg(test)]
mod blocked_closed_form_precision_tests {
    use super::*;

    #[test]
    fn weighted_double_double_sum_agrees_with_the_previous_arrangement() {
        // Both sums in double-double, arranged differently (one weight per l against one
        // inner sum per j): where the result is above 1e-14 they agree to 1e-9 relative,
        // from crowded to sparse filters, every k, other block sizes. Each is about as far
        // from the 60-digit values (the known answers below); further down both lose digits
        // to the cancellation of the k-th differences. (k stops at 40: past 56 the previous
        // arrangement's f64 binomials are no longer exact.)
        let mut worst = 0.0f64;
        for b in [512u32, 256, 64, 1000] {
            for k in [1usize, 2, 5, 8, 13, 16, 20, 24, 27, 31, 40] {
                for bpi in [2.0, 5.0, 9.9, 15.5, 30.0, 64.0, 150.0, 400.0, 4000.0] {
                    let bf = f64::from(b);
                    let lambda = bf / bpi;
                    let coef = closed_form_coefficients(k, bf);
                    let want = dd::blocked_fpr_closed_reference(lambda, k, bf, &coef);
                    let (got, _) = dd::blocked_fpr_closed(lambda, k, bf);
                    if want > 1e-14 {
                        let rel = (got / want - 1.0).abs();
                        worst = worst.max(rel);
                        assert!(rel < 1e-9, "b={b} k={k} bpi={bpi}: {got:e} vs {want:e}");
                    }
                }
            }
        }
        assert!(worst < 1e-9, "{worst:e}");
    }

    #[test]
    #[allow(clippy::excessive_precision)] // the 60-digit values to 17 significant digits
    fn double_double_closed_form_known_answers() {
        // The closed form evaluated with 60-digit arithmetic (mpmath, outside this crate),
        // and how close the double-double sum must come: 1e-12 relative down to 1e-15, then
        // what the cancellation leaves (the previous arrangement was 5e-14, 5e-10, 7e-9 and
        // 3e-10 from the values at the last four), inside the 1e-7 the sizing relies on.
        for (bpi, k, want, tol) in [
            (30.0, 16, 9.611_350_451_691_649e-6, 1e-12),
            (64.0, 24, 1.090_389_176_903_818_5e-8, 1e-12),
            (150.0, 27, 1.851_274_066_701_831_2e-12, 1e-12),
            (400.0, 16, 7.436_011_200_973_424e-15, 1e-12),
            (400.0, 27, 1.672_965_695_725_054_4e-16, 1e-9),
            (400.0, 31, 1.233_682_875_109_595e-16, 1e-7),
            (4000.0, 16, 3.484_308_819_423_827_4e-20, 1e-8),
        ] {
            let (got, _, m) = dd::blocked_fpr_closed_with_magnitude(512.0 / bpi, k, 512.0);
            let rel = (got / want - 1.0).abs();
            // The error is about 10^-32 of the magnitude (the basis of MAX_CANCELLATION),
            // plus the final rounding to f64.
            let bound = (m / want) * 1e-31 + 4.0 * f64::EPSILON;
            assert!(rel <= bound, "bpi={bpi} k={k}: {rel:e}, magnitude {m:e}");
            assert!(rel < tol, "bpi={bpi} k={k}: {got:e} vs {want:e} ({rel:e})");
        }
    }

    #[test]
    fn double_double_slope_is_the_derivative_in_lambda() {
        for k in [3usize, 9, 16, 24] {
            for bpi in [8.0, 20.0, 60.0] {
                let lambda = 512.0 / bpi;
                let (_, slope) = dd::blocked_fpr_closed(lambda, k, 512.0);
                let h = lambda * 1e-6;
                let (up, _) = dd::blocked_fpr_closed(lambda + h, k, 512.0);
                let (down, _) = dd::blocked_fpr_closed(lambda - h, k, 512.0);
                let numeric = (up - down) / (2.0 * h);
                assert!(slope > 0.0, "more keys per block, more false positives");
                assert!(
                    (slope / numeric - 1.0).abs() < 1e-6,
                    "k={k} bpi={bpi}: {slope:e} vs {numeric:e}"
                );
            }
        }
    }

    #[test]
    fn the_windowed_chains_agree_with_the_plain_one() {
        // blocked_fpr_markov (window, drops below 1e-300, stops at 1e-10 of its sum) and the
        // sizing's shared chain (drops below 1e-40; its slack bounds what it lacks) against
        // the plain chain, at densities the sizing visits below 10^-15 and ordinary ones.
        for (bpi, k) in [
            (9.92, 6u32),
            (40.0, 20),
            (389.0, 32),
            (938.5, 38),
            (3841.7, 45),
        ] {
            let want = plain_chain_fpr(bpi, k, 512);
            let got = blocked_fpr_markov(bpi, k, 512);
            assert!(
                (got / want - 1.0).abs() < 1e-9,
                "{bpi}/{k}: {got:e} vs {want:e}"
            );
            let mut chains = Chains::new(512, k);
            let m = chains.mixture(k, 512.0 / bpi);
            let f = m.fpr;
            assert!(
                f <= want * (1.0 + 1e-12) && f + m.slack >= want * (1.0 - 1e-12),
                "{bpi}/{k}"
            );
            assert!(
                (f / want - 1.0).abs() < 1e-9,
                "{bpi}/{k}: {f:e} vs {want:e}"
            );
            // A neighbour k from the same chain, after it has run for k.
            let m1 = chains.mixture(k + 1, 512.0 / bpi);
            let (g, want1) = (m1.fpr, plain_chain_fpr(bpi, k + 1, 512));
            assert!(
                g <= want1 * (1.0 + 1e-12) && g + m1.slack >= want1 * (1.0 - 1e-12),
                "{bpi}/{}",
                k + 1
            );
            assert!(
                (g / want1 - 1.0).abs() < 1e-9,
                "{bpi}/{}: {g:e} vs {want1:e}",
                k + 1
            );
        }
        // Small crowded blocks, so the window reaches the top occupancy `B` and two-throw
        // passes clip there.
        for (bpi, k, bits) in [(4.0, 3u32, 32u32), (2.0, 5, 16), (1.0, 4, 64), (0.5, 2, 16)] {
            let want = plain_chain_fpr(bpi, k, bits);
            let got = blocked_fpr_markov(bpi, k, bits);
            assert!(
                (got / want - 1.0).abs() < 1e-9,
                "{bpi}/{k}/{bits}: {got:e} vs {want:e}"
            );
        }
    }

    #[test]
    fn closed_form_keeps_six_digits_on_sparse_filters() {
        // Where f64 alone would keep few digits, the double-double path still agrees with the
        // chain (a sum of positive terms) to 1e-6 relative, far past the 1e-12 absolute the
        // f64 sum reaches.
        let mut worst = 0.0f64;
        for k in [12u32, 14, 15, 16, 20, 24] {
            let terms = blocked_occupancy_terms(k, 512, poisson_upper(512.0 / 30.0));
            for bpi in [30.0, 41.0, 50.0, 64.0] {
                let chain = poisson_mixture(512.0 / bpi, &terms);
                let closed = blocked_fpr_closed(bpi, k, 512);
                let rel = (closed / chain - 1.0).abs();
                worst = worst.max(rel);
                assert!(rel < 1e-6, "k={k} bpi={bpi}: {closed:e} vs {chain:e}");
            }
        }
        assert!(worst < 1e-6);
    }
}

#[cfg(test)]
mod blocked_sizing_tests {
    use super::*;

    /// The previous sizing: bit-independence optimum `k0`, then `k0 ± 1` by bisection on the
    /// Markov chain. The closed-form search must land on the same `k` and density.
    fn chain_sizing(p: f64) -> (f64, u32) {
        let (start, k0) = blocked_bits_per_item(p, 512).unwrap();
        let mut best: Option<(f64, u32)> = None;
        for k in k0.saturating_sub(1).max(1)..=k0 + 1 {
            let terms = blocked_occupancy_terms(k, 512, poisson_upper(512.0 / start));
            let fpr = |bpi: f64| poisson_mixture(512.0 / bpi, &terms);
            let (mut lo, mut hi) = (start, start * 1.05);
            while fpr(hi) > p {
                lo = hi;
                hi *= 1.5;
            }
            while hi - lo > 1e-5 {
                let mid = 0.5 * (lo + hi);
                if fpr(mid) > p { lo = mid } else { hi = mid }
            }
            if best.is_none_or(|(b, _)| hi < b) {
                best = Some((hi, k));
            }
        }
        best.unwrap()
    }

    #[test]
    fn tiny_targets_are_met_minimal_and_optimal_by_the_chain() {
        // The sizing checked by the plain occupancy chain (which shares nothing with the
        // sizing's chains): the FPR is met, a density two tolerances lower is not enough, and
        // neither neighbouring k reaches the target at the density found; far below, the
        // sizing's own chain sizes and the answer still meets the target, and the
        // unreachable is refused.
        for p in [
            2e-5, 1e-7, 1e-9, 1e-11, 1e-13, 1e-15, 1e-17, 1e-20, 1e-22, 5e-25,
        ] {
            let (d, k) = blocked_bits_per_item_exact(p, 512).unwrap();
            let chain = |d: f64, k: u32| plain_chain_fpr(d, k, 512);
            assert!(chain(d, k) <= p, "{p}: {d} {k}: {:e}", chain(d, k));
            assert!(
                chain(d - 2.0 * SIZING_TOL, k) > p,
                "{p}: {d} {k} not minimal"
            );
            for kk in [k - 1, k + 1] {
                assert!(chain(d, kk) >= p * (1.0 - 1e-9), "{p}: k = {kk} beats {k}");
            }
        }
        assert!(blocked_bits_per_item_exact(1e-30, 512).is_err());
    }

    #[test]
    fn closed_form_sizing_matches_the_chain_sizing() {
        for p in [0.2, 0.1, 0.05, 0.03, 0.01, 0.005, 0.001, 1e-4, 1e-5, 1e-6] {
            let (bpi, k) = blocked_bits_per_item_exact(p, 512).unwrap();
            let (want, want_k) = chain_sizing(p);
            assert_eq!(k, want_k, "{p}");
            assert!(
                bpi >= want - 1e-5 && bpi <= want + 1.1e-4,
                "{p}: {bpi} vs {want}"
            );
            assert!(blocked_fpr_exact(bpi, k, 512) <= p);
        }
    }

    #[test]
    fn sizing_works_across_the_whole_range() {
        let mut p = 0.9;
        while p > 1e-15 {
            let (bpi, k) = blocked_bits_per_item_exact(p, 512).unwrap();
            let f = blocked_fpr_exact(bpi, k, 512);
            assert!(f <= p && f > p * 0.99, "{p}: {bpi} {k} {f}");
            // Neighbouring k need at least as many bits.
            for kk in [k - 1, k + 1] {
                if kk >= 1 {
                    assert!(blocked_fpr_exact(bpi, kk, 512) >= f * 0.9999, "{p} {kk}");
                }
            }
            p /= 3.7;
        }
    }
}

// ---------------------------------------------------------------------------------------
// Ribbon (Dillinger & Walzer 2021, "Ribbon filter: practically smaller than Bloom and Xor")
// ---------------------------------------------------------------------------------------

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
/// measured in `crates/ribbon` (`examples/width.rs`) so that one seed succeeds with
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
        assert_eq!(ribbon_result_bits(0.01).unwrap(), 7);
        assert_eq!(ribbon_result_bits(0.03).unwrap(), 6);
        assert_eq!(ribbon_result_bits(0.001).unwrap(), 10);
        assert_eq!(ribbon_result_bits(0.25).unwrap(), 2);
        assert_eq!(ribbon_result_bits(0.5).unwrap(), 1);
        assert!(ribbon_result_bits(1e-12).is_err());
        assert_eq!(ribbon_slots(0, 128).unwrap(), 0);
        assert_eq!(ribbon_slots(1, 128).unwrap(), 128);
        // 10^4 · 1.032 = 10 320 → 81 blocks.
        assert_eq!(ribbon_slots(10_000, 128).unwrap(), 10_368);
    }
}
