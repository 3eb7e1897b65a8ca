//! The fingerprint schedule of the expandable filter and the FPR bound it guarantees.
//!
//! # The bound (derivation)
//!
//! A stored entry is a *prefix* of a key's 64-bit hash `h`, of `L` bits: the bits that pick
//! its bucket and the fingerprint bits after them. An entry created in round `k` (table of
//! `2^k ≤ N < 2^(k+1)` buckets, see the crate docs) with `F` level-`k` fingerprint bits has
//! `L = k + F`, wherever it is stored: at a split home its code holds `F − 1` bits after the
//! `k + 1` index bits, at an unsplit home or flagged at its alternate `F` bits after `k`. A
//! split moves one fingerprint bit into the index, and the end of a round does the same for
//! the entries at alternates and at unsplit homes, so the entry keeps exactly those `L` bits
//! for ever (the prefix does not change, only where its bits are kept). An entry with no
//! fingerprint bit left is copied into both buckets of its bucket's split: the two copies are
//! the two prefixes of length `L + 1` that extend it, and their union is the same set of
//! hashes.
//!
//! A query for a key that was never inserted matches an entry exactly when its hash starts
//! with the entry's prefix (at a home the bucket fixes the index bits and the code the rest;
//! at an alternate `a` a matching code fixes `t`, hence `G(t)` and `β = a ⊕ G(t)`: either way
//! exactly the entry's `L` bits are compared), which a uniform hash does with probability
//! `2^-L`. By the union bound
//!
//! ```text
//! FPR ≤ Σ_entries 2^-L(e)                                                      (1)
//! ```
//!
//! (the filter's [`expected_fpr`](bloomlab_core::Filter::expected_fpr) is this sum at its
//! current contents). Group the entries by the round `i` (0 for the starting level `k_0`)
//! during which they were created, at level `k_i = k_0 + i` with `F_i` level-`k_i` bits, each
//! of measure `2^-(k_i + F_i)`. The table grows before its load passes α =
//! [`MAX_LOAD`], and round `i` ends with `2^(k_i + 1)` buckets, so round 0
//! creates at most `4α·2^(k_0 + 1)` entries and each later round (which starts with
//! `4α·2^k_i` entries stored) about `4α·2^k_i` more: the rounds contribute
//!
//! ```text
//! FPR ≤ c_0·2^-F_0 + Σ_{i≥1} c_i·2^-F_i,   c_0 = 8α, c_i = 4α  (i ≥ 1)              (2)
//! ```
//!
//! whatever the number of items: the `2^k` of the count cancels the `2^-k` of the prefix.
//! The filter does not rely on those counts: it keeps the sum (1) of its contents exactly
//! and ends the round early (splitting every remaining bucket) before an insert would lift it
//! past the right side of (2) for the round ([`fpr_bound`]), so (2) bounds the FPR by
//! construction — also under deletes, which only lower (1), and under the extra growth steps
//! of failed kick chains, which change where entries are, not their prefixes.
//! [`new_entry_bits`] picks the smallest `F_i ≥` [`ALT_BITS`] with
//!
//! ```text
//! B_i + c_i·2^-F_i + ε·a/(i + 1 + a) ≤ ε,      B_i = Σ_{j<i} c_j·2^-F_j              (3)
//! ```
//!
//! where `ε·a/(i + 1 + a) = ε·Σ_{j>i} a/((j + a)(j + a + 1))` is a reserve kept for every
//! later expansion (the telescoping weights `a/((j + a)(j + a + 1))` sum to 1 over `j ≥ 0`;
//! `a` = [`RESERVE_SHAPE`]). Induction on `i`: `B_{i+1} ≤ ε − ε·a/(i + 1 + a)`, and the
//! reserve is always enough for level `i + 1` because `F` can grow, so (2) stays `≤ ε` after
//! **any** number of expansions. The reserve shrinks like `1/i`, so `F_i` grows like
//! `log2(1/ε) + 2·log2(i)` — the `Ω(log log n)` extra bits that any expandable filter needs
//! (Pagh, Segev, Wieder 2013, as quoted by Dayan et al. 2023); what rounding `F` up to an
//! integer leaves unspent at one expansion lowers `F` at the next.
//!
//! This is the InfiniFilter argument (Dayan, Bercea, Reviriego, Pagh, SIGMOD 2023, §4: each
//! generation of fingerprints contributes a constant share of the FPR, so new fingerprints
//! widen slowly enough for the sum to converge) with the shares chosen by (3) instead of a
//! fixed `1/i²` series: (3) spends less at small `i`, where every measured growth lives.

use alloc::{format, vec::Vec};
use bloomlab_core::error::{Error, Result};
#[cfg(not(feature = "std"))]
use bloomlab_core::math::float::FloatMath as _;

use crate::{ALT_BITS, MAX_FP_BITS, MAX_LOAD};

/// `a` of the reserve `ε·a/(i + 1 + a)` in (3). Larger values spend less on the first tables
/// and more later; 4 gave the fewest bits per item over a 1000× growth at 1 % and 0.1 % in
/// `docs/design/expandable.md`'s model.
pub const RESERVE_SHAPE: f64 = 4.0;

/// Entries one round may create, per slot of the table it starts with: `c_i / 4` in (2).
fn share(expansion: u32) -> f64 {
    if expansion == 0 {
        2.0 * MAX_LOAD
    } else {
        MAX_LOAD
    }
}

/// The fingerprint widths `F_0 … F_i` of (3) and the spent bound `B_{i+1}` after them.
/// Errors with [`Error::SizeOverflow`] when some `F_j` would exceed [`MAX_FP_BITS`].
fn schedule(target_fpr: f64, expansion: u32) -> Result<(Vec<u32>, f64)> {
    let mut spent = 0.0f64;
    let mut bits = Vec::with_capacity(expansion as usize + 1);
    for i in 0..=expansion {
        let c = 4.0 * share(i);
        let reserve = target_fpr * RESERVE_SHAPE / (f64::from(i) + 1.0 + RESERVE_SHAPE);
        let mut f = ALT_BITS;
        while spent + c * (-f64::from(f)).exp2() + reserve > target_fpr {
            f += 1;
            if f > MAX_FP_BITS {
                return Err(Error::SizeOverflow(format!(
                    "expansion {i} at target {target_fpr} needs more than {MAX_FP_BITS} fingerprint bits"
                )));
            }
        }
        spent += c * (-f64::from(f)).exp2();
        bits.push(f);
    }
    Ok((bits, spent))
}

/// `F_i`: the fingerprint bits of entries created after `expansion` doublings, for target
/// FPR `target_fpr` (the smallest width satisfying (3), at least [`ALT_BITS`]).
///
/// ```
/// use bloomlab_expandable::math::new_entry_bits;
/// let at_1 = (0..11).map(|i| new_entry_bits(0.01, i).unwrap()).collect::<Vec<_>>();
/// assert_eq!(at_1, [12, 12, 12, 12, 12, 13, 13, 13, 14, 14, 14]);
/// ```
pub fn new_entry_bits(target_fpr: f64, expansion: u32) -> Result<u32> {
    Ok(schedule(target_fpr, expansion)?.0[expansion as usize])
}

/// The right side of (2) up to `expansion`: an upper bound on the FPR of the filter at any
/// time before its next expansion. Never above `target_fpr`.
pub fn fpr_bound(target_fpr: f64, expansion: u32) -> Result<f64> {
    Ok(schedule(target_fpr, expansion)?.1)
}

/// The widest fingerprint an entry can hold after `expansion` doublings:
/// `max_{j ≤ i} (F_j − (i − j))` (an entry loses one bit per doubling). Slot widths beyond
/// it (plus 2) are invalid in a decoded filter.
pub fn widest_entry_bits(target_fpr: f64, expansion: u32) -> Result<u32> {
    let (bits, _) = schedule(target_fpr, expansion)?;
    Ok(bits
        .iter()
        .enumerate()
        .map(|(j, &f)| f.saturating_sub(expansion - j as u32))
        .max()
        .unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_up_to_and_including_the_maximum_are_allowed() {
        // Lower the target until the schedule refuses: the last target it accepts must use
        // exactly MAX_FP_BITS somewhere (the limit is inclusive), the first refused one more.
        // The schedule refuses below about 3.4·10^-8 (where `c·2^-MAX_FP_BITS` no longer fits
        // in the fifth of the target the reserve leaves), some 12,600 steps of 0.1 % below 1 %;
        // at most 10^5 steps (down to 4·10^-46), so a schedule that never refuses fails here
        // instead of searching without end.
        let mut target = 0.01f64;
        let mut widest_ok = 0;
        let mut refused = false;
        for _ in 0..100_000 {
            match widest_entry_bits(target, 0) {
                Ok(w) => widest_ok = widest_ok.max(w),
                Err(_) => {
                    refused = true;
                    break;
                }
            }
            target *= 0.999;
        }
        assert!(refused, "no target down to {target:e} refused");
        assert_eq!(widest_ok, MAX_FP_BITS);
    }

    #[test]
    fn the_bound_stays_below_the_target_for_sixty_expansions() {
        for eps in [0.1, 0.03, 0.01, 0.001, 1e-4] {
            let mut last = 0.0;
            for i in 0..60 {
                let Ok(b) = fpr_bound(eps, i) else { break };
                assert!(b <= eps, "{eps} {i} {b}");
                assert!(b >= last);
                last = b;
            }
        }
    }

    #[test]
    fn widths_grow_slowly() {
        // log2(1/ε) + O(log i): at 1 % never more than 14 bits within 10 rounds, 17 at 40.
        assert_eq!(new_entry_bits(0.01, 0).unwrap(), 12);
        assert!(new_entry_bits(0.01, 10).unwrap() <= 14);
        assert!(new_entry_bits(0.01, 40).unwrap() <= 17);
        assert!(new_entry_bits(0.001, 10).unwrap() <= 18);
        assert!(new_entry_bits(1e-12, 0).is_err());
    }
}
