//! The occupancy Markov chain of one block: the exact FPR of a blocked filter by throwing
//! probes one at a time (Feller vol. 1, §II.11), the reference the closed form is tested
//! against and the sizing's tool where the closed form has no digit left.

use alloc::borrow::Cow;
use alloc::{vec, vec::Vec};

use super::*;
/// [`blocked_fpr_exact`] by the occupancy Markov chain: `X` evolves as a chain where a throw
/// into a block with `x` ones sets a new bit with probability `(B − x)/B` (classical
/// occupancy, Feller vol. 1 §II.11), mixed over Poisson block loads. O(λ·k·B) work, far less for
/// the sparse filters whose value the closed form hands here (one throw updates only the occupancies that still carry mass, in vector lanes:
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
    // hands its value here, about 900 throws, most of them two to a pass.
    // As in the closed form: more than MAX_HASHES probes count as MAX_HASHES (which also keeps
    // the work per key bounded).
    let k = k.min(MAX_HASHES);
    let mut terms = OccupancyTerms::new(block_bits, k..=k, OCCUPANCY_DROP);
    terms.mixture(k, lambda, 1e-10).fpr.min(1.0)
}

/// `terms[i] = E[(X_i/B)^k]` for `i = 0..=max_keys`, where `X_i` is the number of distinct bits
/// set by `k·i` independent uniform throws into `B` bits. Independent of the density, so one
/// pass serves every `λ`.
#[cfg(test)]
pub(in crate::math) fn blocked_occupancy_terms(k: u32, block_bits: u32, max_keys: u64) -> Vec<f64> {
    let mut terms = OccupancyTerms::new(block_bits, k..=k, OCCUPANCY_DROP);
    terms.extend(0, max_keys as usize);
    terms.ks.swap_remove(0).terms
}

/// The occupancy chain of one block: `dist[x] = P(X = x)` for the number `X` of distinct bits
/// set among `B` after some number of uniform throws, one throw at a time (a throw into a
/// block with `x` ones sets a new bit with probability `(B − x)/B`). How many probes a key
/// makes does not enter: after `m` throws it is the distribution of `i` keys' bits for every
/// `k` with `k·i = m`, so one chain serves several `k` ([`OccupancyTerms`]).
pub(in crate::math) struct Occupancy {
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
pub(in crate::math) const OCCUPANCY_DROP: f64 = 1e-300;

/// The same for the sizing's chains ([`Chains`]), which compare FPRs with targets the sizing
/// accepts, 3·10^-25 and above: a few thousand throws drop below 10^-36 in all, 10^-11 of
/// the smallest target, and every comparison adds what was dropped. The window of live
/// occupancies is narrower than with 1e-300 (at k = 38 and 938 bits/item about 300 wide
/// there), which is what makes the sizing's chains cheaper.
pub(in crate::math) const SIZING_DROP: f64 = 1e-40;

/// [`Occupancy`]'s coefficients at occupancy `x` of a block of `bb` bits, in the order
/// `[stay, grow, stay2, grow1, grow2]` (see there). A `const fn`, so that the 512-bit block's
/// are a table built at compile time ([`OCCUPANCY_512`]).
pub(in crate::math) const fn throw_coefficients(x: usize, bb: usize) -> [f64; 5] {
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
/// row per kind, built at compile time: computing them costs a division or two per occupancy
/// and chain.
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
    pub(in crate::math) fn new(block_bits: u32, cutoff: f64) -> Self {
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
    pub(in crate::math) fn expect(&self, pw: &[f64]) -> f64 {
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
    pub(in crate::math) fn throw(&mut self) {
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
    pub(in crate::math) fn throw_two(&mut self) {
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
    pub(in crate::math) fn trim(&mut self) {
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
pub(in crate::math) struct OccupancyTerms {
    pub(in crate::math) chain: Occupancy,
    pub(in crate::math) ks: Vec<KTerms>,
}

/// One tracked `k` of [`OccupancyTerms`]: `pw[x] = (x/B)^k`, the terms so far, and the
/// throws left until the next one.
pub(in crate::math) struct KTerms {
    pub(in crate::math) k: u32,
    pub(in crate::math) pw: Vec<f64>,
    pub(in crate::math) terms: Vec<f64>,
    pub(in crate::math) due: u32,
}

impl OccupancyTerms {
    /// Track every `k` of `ks` (each at least 1), dropping occupancies below `cutoff`.
    pub(in crate::math) fn new(
        block_bits: u32,
        ks: core::ops::RangeInclusive<u32>,
        cutoff: f64,
    ) -> Self {
        let chain = Occupancy::new(block_bits, cutoff);
        let frac = &chain.stay; // x/B
        // `(x/B)^k` by squaring for the first `k`, all occupancies side by side (one `powi`
        // per occupancy costs more), then one product per next `k`.
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
    pub(in crate::math) fn extend(&mut self, index: usize, keys: usize) {
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
    pub(in crate::math) fn mixture(&mut self, k: u32, lambda: f64, rel: f64) -> Mixture {
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
pub(in crate::math) struct Mixture {
    pub(in crate::math) fpr: f64,
    pub(in crate::math) slope: f64,
    pub(in crate::math) slack: f64,
}

/// The exact FPR by the plainest occupancy chain: the whole distribution over `0..=B`
/// every throw, no occupancy dropped, the Poisson mixture to [`poisson_upper`] with no
/// early stop — the reference the windowed, shared chains are checked against.
#[cfg(test)]
pub(in crate::math) fn plain_chain_fpr(bits_per_item: f64, k: u32, block_bits: u32) -> f64 {
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
pub(in crate::math) fn poisson_mixture(lambda: f64, terms: &[f64]) -> f64 {
    let total: f64 = PoissonPmf::new(lambda)
        .zip(terms)
        .map(|((_, pois), t)| pois * t)
        .sum();
    total.min(1.0)
}

#[cfg(test)]
mod occupancy_tests {
    use super::*;

    /// `P(X = x)` after `throws` uniform throws into `bb` bits, over all of `0..=bb`, nothing
    /// dropped: the reference the windowed chain is held to.
    fn plain_distribution(bb: usize, throws: usize) -> Vec<f64> {
        let b = bb as f64;
        let mut dist = vec![0.0f64; bb + 1];
        dist[0] = 1.0;
        for _ in 0..throws {
            for x in (1..=bb).rev() {
                dist[x] = dist[x] * (x as f64 / b) + dist[x - 1] * ((bb - x + 1) as f64 / b);
            }
            dist[0] = 0.0;
        }
        dist
    }

    #[test]
    fn trimming_drops_only_the_ends_under_the_cutoff_and_counts_what_it_dropped() {
        // 64-bit blocks, cutoff 1e-6: the low end crosses it after a handful of throws
        // (P(X = 1) = 64^-(t-1)), the high end after about forty (P(X = t) = ∏ (1 − j/64)),
        // so both ends are trimmed, one throw at a time and then two to a pass.
        let (bb, cutoff) = (64usize, 1e-6);
        let mut chain = Occupancy::new(bb as u32, cutoff);
        let mut throws = 0usize;
        let (mut dropped_low, mut dropped_high) = (false, false);
        while throws < 120 {
            if chain.low >= 2 && !throws.is_multiple_of(3) {
                chain.throw_two();
                throws += 2;
            } else {
                chain.throw();
                throws += 1;
            }
            let want = plain_distribution(bb, throws);
            let (low, reach) = (chain.low, chain.reach);
            dropped_low |= low > 0;
            dropped_high |= reach < throws.min(bb);
            // Outside the window nothing is left, and each end of the window carries at least
            // the cutoff (else it would have been dropped).
            for x in (0..low).chain(reach + 1..=bb) {
                assert_eq!(chain.dist[x], 0.0, "x = {x} after {throws}");
            }
            if low < reach {
                assert!(chain.dist[low] >= cutoff, "low end after {throws}");
                assert!(chain.dist[reach] >= cutoff, "high end after {throws}");
            }
            // Every throw moves mass without creating or losing any (the rows of the step sum
            // to 1), so what the window holds plus what was dropped is 1, to rounding (a few
            // hundred additions of terms at most 1: 1e-13 is over a hundred ulps).
            let held: f64 = chain.dist.iter().sum();
            assert!(
                (held + chain.dropped - 1.0).abs() < 1e-13,
                "after {throws}: {held} held + {} dropped",
                chain.dropped
            );
            // Dropping mass only removes probability that would have flowed onwards: every
            // occupancy is at most its exact value, and short of it by at most what was dropped.
            for (x, (&got, &exact)) in chain.dist.iter().zip(&want).enumerate() {
                assert!(
                    got <= exact * (1.0 + 1e-12) + 1e-300,
                    "x = {x} after {throws}"
                );
                assert!(
                    exact - got <= chain.dropped * (1.0 + 1e-12) + 1e-15,
                    "x = {x} after {throws}: {got} vs {exact}"
                );
            }
        }
        assert!(dropped_low && dropped_high, "both ends were trimmed");
        // Each entry dropped was under the cutoff: at most two new ones at the high end per
        // pass, and the low end passes each occupancy once.
        assert!(chain.dropped > 0.0 && chain.dropped < (2 * throws + bb) as f64 * cutoff);
    }
}

#[cfg(test)]
mod markov_tests {
    use super::*;

    /// With one probe per key a block's FPR is the chance that a key's bit is set, `1 −
    /// (1 − 1/B)^i` for `i` keys, whose Poisson(λ) mixture is `1 − e^(−λ/B)` (the Poisson
    /// generating function at `1 − 1/B`). The chain holds it to its 1e-10 up to and including
    /// 20·B keys per block, where it is 1 − 2.06·10^-9 (not 1): only past that does it answer 1.
    #[test]
    fn one_probe_per_key_is_one_minus_e_to_the_minus_load_up_to_twenty_keys_per_bit() {
        for bb in [64u32, 512] {
            let b = f64::from(bb);
            for per_bit in [0.5f64, 4.0, 10.0, 20.0] {
                // λ = B / (1/per_bit) is exactly per_bit·B for these (checked).
                let bits_per_item = 1.0 / per_bit;
                assert_eq!(b / bits_per_item, per_bit * b);
                let want = -(-per_bit).exp_m1();
                let got = blocked_fpr_markov(bits_per_item, 1, bb);
                assert!(
                    (got - want).abs() <= 2e-10,
                    "{bb} {per_bit}: {got} vs {want}"
                );
            }
            assert_eq!(blocked_fpr_markov(1.0 / 20.5, 1, bb), 1.0);
        }
    }
}
