//! Sizing a blocked filter by its exact FPR: the smallest bits/item, and the best `k`, for a
//! target. Regula falsi and Newton's method on the closed form, the occupancy chain where
//! that cancels.

use super::*;
use alloc::{format, vec::Vec};
use bloomlab_core::error::{Error, Result};

/// Smallest bits/item (to 1e-4) at which a blocked filter reaches FPR `p` by
/// [`blocked_fpr_exact`], with the best `k`. 1 % → 9.92 bits/item (k = 6), 0.1 % → 15.55
/// (k = 9), 3 % → 7.43 (k = 5) at 512 bits.
///
/// For each `k` the density is found by a safeguarded regula falsi (Illinois) on
/// `ln FPR − ln p`, which is nearly linear in bits/item, bracketed below by the classic
/// density (a blocked filter never needs fewer bits); `k` walks from the classic optimum
/// towards fewer probes while that lowers the density (the optimum is unimodal in `k`).
/// About ten closed-form evaluations per `k` and three or four `k`s. Below 3·10^-5, where
/// the closed form needs double-double sums, Newton's method from a fitted start and one
/// comparison per neighbouring `k` settle it in 3–6 of them (`blocked_best_density_precise`).
/// Where the f64 sum's terms exceed a result near `p` by more than `CHAIN_ABOVE` (10^21) (from
/// about 5·10^-14 down; past 10^-15 the double-double sums have no digit left at all) the
/// occupancy chain sizes the filter: one chain serves every `k` within two of a fitted guess
/// (`Chains`; the distribution of set bits after `m` throws does not depend on how many
/// throws a key makes), grows only as far as the Poisson mixture at the current density
/// needs, drops occupancies below 1e-40 and adds what it dropped, and the mixture's cut-off
/// tail, to every comparison with `p`. What 4096 bits/item cannot reach, below about
/// 3·10^-25, is refused. The design's history is in `docs/design/blocked.md`.
pub fn blocked_bits_per_item_exact(p: f64, block_bits: u32) -> Result<(f64, u32)> {
    let p = validate_fpr(p)?;
    if block_bits == 0 {
        return Err(Error::invalid("block_bits", "must be positive"));
    }
    if block_bits > BLOCKED_EXACT_MAX_BITS {
        return blocked_bits_per_item(p, block_bits);
    }
    let floor = classic_bits_per_item(p)?;
    let k_classic = ((floor * core::f64::consts::LN_2).round() as u32).clamp(1, MAX_HASHES);
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
pub(in crate::math) const DOUBLE_DOUBLE_BELOW: f64 = 3e-5;

/// The sizing's resolution in bits/item: each density is the smallest to within this, from
/// above.
pub(in crate::math) const SIZING_TOL: f64 = 1e-4;

/// [`blocked_best_density`] with the double-double closed form and few evaluations: a start
/// from [`blocked_density_hint`] and [`blocked_k_hint`], the density for that `k` by
/// Newton's method ([`blocked_density_newton`]: the double-double sum gives the FPR's
/// derivative too), then `k` moves while a neighbour beats it — which one comparison decides:
/// a neighbour `k'` needs fewer bits exactly when its FPR at the current density is already
/// below `p` (the FPR falls as bits grow). `None` if Newton's method does not settle (the
/// caller then refuses the target).
pub(in crate::math) fn blocked_best_density_precise(
    p: f64,
    block_bits: u32,
    floor: f64,
) -> Option<(f64, u32)> {
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
pub(in crate::math) struct Chains {
    block_bits: u32,
    band: core::ops::RangeInclusive<u32>,
    shared: Option<OccupancyTerms>,
    others: Vec<OccupancyTerms>,
    /// The walk sizes by the chain from the start (see [`CHAIN_ABOVE`]).
    first: bool,
}

/// Where the f64 closed form's terms exceed a result near the target by more than this, the
/// sizing runs the occupancy chain from the start instead of Newton's method on the
/// double-double sums. Those hold 1e-7 of the result up to a ratio of 10^25
/// (`super::dd::MAX_CANCELLATION`), but from here on their few evaluations cost about as
/// much as the shared chain or more; one choice per call, because a walk that started on the
/// sums and ended on the chain pays for both. Where exactly the switch falls matters little
/// for the cost (see `docs/design/blocked.md`).
pub(in crate::math) const CHAIN_ABOVE: f64 = 1e21;

/// How far from the first guess at `k` the sizing's shared chain tracks `k`: the fitted
/// guess is off by at most one below 10^-15 (see [`blocked_k_hint`]), and the walk compares
/// one more.
pub(in crate::math) const CHAIN_BAND: u32 = 2;

impl Chains {
    pub(in crate::math) fn new(block_bits: u32, k: u32) -> Self {
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
    pub(in crate::math) fn preferred(&self, k: u32) -> bool {
        self.first || (self.shared.is_some() && self.band.contains(&k))
    }

    /// The FPR at `λ` keys per block with `k` probes, to 1e-10 ([`OccupancyTerms::mixture`]):
    /// far inside the sizing's resolution, 1e-4 bits/item, which moves the FPR by 2·10^-7 of
    /// itself or more (the least near 4096 bits/item).
    pub(in crate::math) fn mixture(&mut self, k: u32, lambda: f64) -> Mixture {
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
pub(in crate::math) fn blocked_k_hint(bits_per_item: f64) -> u32 {
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
pub(in crate::math) fn blocked_density_hint(p: f64) -> f64 {
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
pub(in crate::math) fn fpr_to_compare(
    p: f64,
    bits_per_item: f64,
    k: u32,
    block_bits: u32,
    chains: &mut Chains,
) -> f64 {
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
            let dd = if magnitude > p * super::dd::MAX_CANCELLATION {
                None
            } else {
                super::dd::blocked_fpr_closed_checked(lambda, k, f64::from(block_bits))
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
pub(in crate::math) const NEWTON_LAST_STEP: f64 = 1e-3;

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
pub(in crate::math) fn blocked_density_newton(
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
            super::dd::blocked_fpr_closed_checked(lambda, kk, b)
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
pub(in crate::math) fn blocked_best_density(
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
pub(in crate::math) fn blocked_density_for(
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
        // The largest block the exact sizing takes is sized exactly too: met, and minimal.
        let max = BLOCKED_EXACT_MAX_BITS;
        let (bpi, k) = blocked_bits_per_item_exact(0.01, max).unwrap();
        assert!(blocked_fpr_exact(bpi, k, max) <= 0.01, "{bpi}/{k}");
        assert!(
            blocked_fpr_exact(bpi - 1e-3, k, max) > 0.01 * 0.999,
            "{bpi}/{k}"
        );
        assert!(blocked_bits_per_item_exact(f64::NAN, 512).is_err());
        assert!(blocked_bits_per_item_exact(1e-100, 512).is_err());
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
    fn the_fpr_compared_with_the_target_is_the_exact_one() {
        // What a comparison with `p` sees, by the chain (the walk chose it from the start) and
        // by the closed form (f64 where its bound allows, else double-double, else the chain),
        // with `p` at the exact FPR so that no shortcut decides: the plain chain's value, to
        // the chain's 1e-9 (its own test) and never below it but for rounding (the chain adds
        // what it dropped and where it stopped), and to the 1e-7 the double-double sum holds.
        for (bpi, k) in [(9.92, 6u32), (40.0, 20), (389.0, 32)] {
            let want = plain_chain_fpr(bpi, k, 512);
            let mut chains = Chains::new(512, k);
            chains.first = true;
            let by_chain = fpr_to_compare(want, bpi, k, 512, &mut chains);
            assert!(
                by_chain >= want * (1.0 - 1e-12) && (by_chain / want - 1.0).abs() < 1e-9,
                "{bpi}/{k}: {by_chain:e} vs {want:e}"
            );
            let by_sum = fpr_to_compare(want, bpi, k, 512, &mut Chains::new(512, k));
            assert!(
                (by_sum / want - 1.0).abs() < 1e-7,
                "{bpi}/{k}: {by_sum:e} vs {want:e}"
            );
        }
    }

    #[test]
    fn a_walk_from_a_k_that_cannot_reach_the_target_finds_one_that_can() {
        // One probe per key never gets a 512-bit block below about 1/bits-per-item, so not to
        // 10^-5 within 4096 bits/item; the walk from k = 1 goes up until the density stops
        // falling, and lands where the sizing from the classic optimum does (both within
        // the tolerance above the root).
        let p = 1e-5;
        let floor = classic_bits_per_item(p).unwrap();
        assert_eq!(
            blocked_density_for(p, 1, 512, floor, true, SIZING_TOL),
            None
        );
        let (d, k) = blocked_best_density(p, 512, 1, floor, true, SIZING_TOL).unwrap();
        let (want_d, want_k) = blocked_bits_per_item_exact(p, 512).unwrap();
        assert_eq!(k, want_k);
        assert!((d - want_d).abs() <= SIZING_TOL, "{d} vs {want_d}");
        assert!(blocked_fpr_exact(d, k, 512) <= p);
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

#[cfg(test)]
mod newton_floor_tests {
    use super::*;

    /// Newton's method answers no density below `floor`, and where the floor already meets
    /// the target it is itself the answer (the smallest density at or above the floor whose
    /// FPR is at most `p`), whatever the start.
    #[test]
    fn a_floor_that_meets_the_target_is_the_answer() {
        for p in [1e-6, 1e-9, 1e-12] {
            let classic = classic_bits_per_item(p).unwrap();
            let start = blocked_density_hint(p).max(classic);
            let k = blocked_k_hint(start);
            let d = blocked_density_newton(p, k, 512, start, classic, &mut Chains::new(512, k))
                .unwrap();
            assert!(blocked_fpr_exact(d, k, 512) <= p, "{p}");
            for above in [0.5, 2.0, 10.0] {
                let floor = d + above;
                assert!(blocked_fpr_exact(floor, k, 512) <= p, "{p} {above}");
                for from in [start, floor + 5.0] {
                    assert_eq!(
                        blocked_density_newton(p, k, 512, from, floor, &mut Chains::new(512, k)),
                        Some(floor),
                        "{p} {above} {from}"
                    );
                }
            }
        }
    }
}
