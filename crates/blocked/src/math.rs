//! The blocked Bloom filter: every probe of a key lands in one block of `B` bits (512 here,
//! one cache line).
//!
//! Source: Putze, Sanders & Singler 2007 ("Cache-, hash- and space-efficient Bloom filters",
//! §3) for the Poisson mixture over block loads; the exact within-block occupancy (what a
//! block's set bits really are after `k·i` throws) is classical occupancy (Feller vol. 1,
//! §II.11), evaluated here in closed form with Stirling numbers of the second kind
//! ([`blocked_fpr_closed`]), by an occupancy Markov chain ([`blocked_fpr_markov`], the
//! reference) and sized by [`blocked_bits_per_item_exact`].
//!
//! Worked figure: 10 bits/item with 6 probes in 512-bit blocks gives 0.957 % (RocksDB's
//! FastLocalBloom figure), and a 1 % target needs about 9.90 bits/item.
//!
//! ```
//! use bloomlab_blocked::math::{blocked_bits_per_item, blocked_fpr};
//! assert!((blocked_fpr(10.0, 6, 512) - 0.00957).abs() < 1e-5);
//! let (bpi, _k) = blocked_bits_per_item(0.01, 512).unwrap();
//! assert!((bpi - 9.90).abs() < 0.01);
//! ```

use alloc::format;
use bloomlab_core::error::{Error, Result};
#[cfg(not(feature = "std"))]
use bloomlab_core::math::float::FloatMath as _;
use bloomlab_core::math::*;

mod chain;
mod dd;
mod sizing;
pub use chain::*;
pub use sizing::*;

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
/// is redone in double-double arithmetic (≈ 106 bits, a few times the f64 sum's cost),
/// which holds 1e-7 while the terms' magnitude is at most
/// 10^25 times the result — every filter with an FPR above about 10^-15. Past that (far
/// sparser filters) the occupancy chain [`blocked_fpr_markov`] gives the value. The result is clamped to `[0, 1]`.
pub fn blocked_fpr_closed(bits_per_item: f64, k: u32, block_bits: u32) -> f64 {
    closed_form(bits_per_item, k, block_bits, true)
}

/// The closed form; with `precise = false` the f64 sum is returned even where it has lost
/// digits (for a first pass of the sizing search, which then refines with `precise`).
#[allow(clippy::needless_range_loop)] // j and l index three arrays and enter the arithmetic
pub(in crate::math) fn closed_form(
    bits_per_item: f64,
    k: u32,
    block_bits: u32,
    precise: bool,
) -> f64 {
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
pub(in crate::math) enum Sums {
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
pub(in crate::math) fn closed_form_sums(bits_per_item: f64, k: u32, block_bits: u32) -> Sums {
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
pub(in crate::math) fn closed_form_coefficients(
    k: usize,
    b: f64,
) -> [f64; MAX_HASHES as usize + 1] {
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

#[cfg(test)]
mod tests {
    use super::*;

    use bloomlab_conformance::close;

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
        // A block as large as the whole filter behaves like the classic filter. 2^20 bits:
        // the Poisson sum runs over about λ = 10^5 terms (2^30 took 10^8, seconds natively
        // and many minutes under an emulator's software floating point), and the load's
        // relative spread 1/√λ = 0.3 % moves the FPR far less than the 1 % compared.
        let classic = classic_fpr(1 << 20, 7, (1u64 << 20) / 10);
        assert!(close(blocked_fpr(10.0, 7, 1 << 20) / classic, 1.0, 0.01));
    }

    #[test]
    fn blocked_formulas_return_promptly_for_absurd_densities() {
        // λ = 512 / 1e-300 would otherwise mean ~1e302 loop iterations.
        assert_eq!(blocked_fpr(1e-300, 7, 512), 1.0);
        assert_eq!(blocked_fpr_exact(1e-300, 7, 512), 1.0);
        assert_eq!(blocked_best_hashes(1e-300, 512), 1);
    }

    #[test]
    fn invalid_fprs_are_errors() {
        for p in bloomlab_conformance::INVALID_FPRS {
            assert!(blocked_bits_per_item(p, 512).is_err(), "{p}");
        }
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
    fn the_f64_sum_holds_where_it_claims_its_digits() {
        // The f64 sum alone (no double-double fallback) against the occupancy chain: wherever
        // its own rounding bound lets `closed_form` keep it (total ≥ 10^7·ε·magnitude, so
        // at least seven digits), it agrees to 1e-6. Blocks of 512 bits, and blocks narrower
        // than k, where some of the k probes must repeat a bit (l ≥ B in the sum).
        let mut kept = 0;
        for (bits, ks, densities) in [
            (
                512u32,
                1..=16u32,
                &[1.0, 2.0, 4.0, 6.0, 10.0, 16.0, 24.0][..],
            ),
            (4, 1..=9, &[0.5, 1.0, 2.0, 4.0, 8.0][..]),
            (2, 1..=6, &[0.5, 1.0, 3.0][..]),
        ] {
            for k in ks {
                // One chain pass serves every density (terms do not depend on λ).
                let crowded = densities[0];
                let terms =
                    blocked_occupancy_terms(k, bits, poisson_upper(f64::from(bits) / crowded));
                for &bpi in densities {
                    let Sums::F64 {
                        total, magnitude, ..
                    } = closed_form_sums(bpi, k, bits)
                    else {
                        panic!("{bpi}/{k}/{bits} saturated");
                    };
                    let chain = poisson_mixture(f64::from(bits) / bpi, &terms);
                    if total >= magnitude * f64::EPSILON * 1e7 {
                        kept += 1;
                        assert!(
                            (total / chain - 1.0).abs() < 1e-6,
                            "{bpi}/{k}/{bits}: {total:e} vs {chain:e}"
                        );
                    }
                    let closed = blocked_fpr_closed(bpi, k, bits);
                    assert!(
                        (closed / chain - 1.0).abs() < 1e-6,
                        "{bpi}/{k}/{bits}: {closed:e} vs {chain:e}"
                    );
                }
            }
        }
        // The f64 sum is what answers at ordinary densities (the fallback is for tiny FPRs).
        assert!(kept > 100, "{kept}");
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
