//! Uncertainty of every figure: medians over rounds with a bootstrap 95 % interval, ratios
//! paired round by round, and Wilson intervals for measured rates.
//!
//! Timing figures are medians over interleaved rounds (every filter measured once per round,
//! in a shuffled order, so a burst of noise lands on all of them). The interval of a median
//! is a percentile bootstrap: [`BOOTSTRAP_RESAMPLES`] resamples of the rounds with a fixed
//! seed, the 2.5th and 97.5th percentiles of their medians. A ratio between two filters of
//! the same interleaved group is the median of the per-round ratios (both sampled the same
//! noise), with the bootstrap interval of that median; between different groups it is the
//! ratio of medians with the interval `[lo_a / hi_b, hi_a / lo_b]`.
//!
//! Where every filter was built more than once (independent allocations, timed in turn by
//! the rounds), the bootstrap is two-stage: builds first, then rounds within the drawn builds
//! ([`clustered_median_interval`]), so the interval also covers where a build's pages landed.
//! Where the rounds ran on several CPUs, each CPU is a stratum: the figure is the geometric
//! mean of the per-CPU medians and the bootstrap resamples within each CPU
//! ([`stratified_median_interval`]).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Resamples per bootstrap interval.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;

/// z of a two-sided 95 % interval.
pub const Z95: f64 = 1.959_963_984_540_054;

/// A value with its 95 % interval.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Median (or the point estimate).
    pub mid: f64,
    /// Lower end of the 95 % interval.
    pub lo: f64,
    /// Upper end of the 95 % interval.
    pub hi: f64,
}

impl Interval {
    /// A point with no spread.
    pub fn exact(x: f64) -> Self {
        Interval {
            mid: x,
            lo: x,
            hi: x,
        }
    }

    /// `true` when `x` lies inside `[lo, hi]`.
    pub fn contains(&self, x: f64) -> bool {
        self.lo <= x && x <= self.hi
    }

    /// Half the width relative to the middle (± as a fraction).
    pub fn rel_half_width(&self) -> f64 {
        if self.mid == 0.0 {
            0.0
        } else {
            (self.hi - self.lo) / 2.0 / self.mid.abs()
        }
    }

    /// `1.23 [1.20–1.26]`.
    pub fn show(&self, digits: usize) -> String {
        format!(
            "{:.d$} [{:.d$}–{:.d$}]",
            self.mid,
            self.lo,
            self.hi,
            d = digits
        )
    }
}

/// Median of a slice (sorts a copy); NaN when empty.
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// The median of `v` with its percentile-bootstrap 95 % interval (fixed seed, so the same
/// samples always give the same interval). One sample gives a zero-width interval.
pub fn median_interval(v: &[f64]) -> Interval {
    clustered_median_interval(v, 1)
}

/// The median of `v` with a two-stage (cluster) bootstrap 95 % interval, where sample `i`
/// belongs to cluster `i % clusters` — an independently allocated build of the filter (see
/// `driver::replicas`). Each resample draws `clusters` clusters with replacement, then as
/// many samples as each drawn cluster holds, with replacement, from that cluster; the
/// interval is the 2.5th–97.5th percentile of the resamples' medians. A difference between
/// builds (where the pages landed) therefore widens the interval instead of hiding in it.
/// `clusters <= 1` is the plain percentile bootstrap over the samples.
pub fn clustered_median_interval(v: &[f64], clusters: usize) -> Interval {
    stratified_median_interval(v, clusters, &[])
}

/// [`clustered_median_interval`] over strata: sample `i` was taken on CPU `strata[i]` (the
/// driver moves the lookup rounds across the CPUs in blocks that each time every build; see
/// `driver`'s *CPUs*). The figure is the geometric mean of the strata's medians, so every CPU
/// weighs the same whatever number of rounds it ran. Builds are crossed with CPUs (every
/// build is timed on every CPU), so each resample draws the builds once, with replacement,
/// and then, within every stratum, as many samples as that stratum's share of each drawn
/// build holds, with replacement, from it: a difference between builds widens the interval
/// as it does with one CPU. With one stratum — or `strata` not one label per sample, as in
/// results written before the rounds moved — this is exactly the single-stratum bootstrap,
/// resample for resample.
pub fn stratified_median_interval(v: &[f64], clusters: usize, strata: &[usize]) -> Interval {
    let mut labels: Vec<usize> = if strata.len() == v.len() {
        strata.to_vec()
    } else {
        debug_assert!(
            strata.is_empty(),
            "{} labels for {} samples",
            strata.len(),
            v.len()
        );
        Vec::new()
    };
    labels.sort_unstable();
    labels.dedup();
    let k = clusters.clamp(1, v.len().max(1));
    if labels.len() <= 1 {
        return single_stratum(v, k);
    }
    // groups[s][c]: the samples of stratum `s` in cluster `c` (cluster of sample `i`: `i % k`).
    let groups: Vec<Vec<Vec<f64>>> = labels
        .iter()
        .map(|&l| {
            (0..k)
                .map(|c| {
                    (c..v.len())
                        .step_by(k)
                        .filter(|&i| strata[i] == l)
                        .map(|i| v[i])
                        .collect()
                })
                .collect()
        })
        .collect();
    let geo_mean =
        |meds: &[f64]| (meds.iter().map(|m| m.ln()).sum::<f64>() / meds.len() as f64).exp();
    let stratum_medians: Vec<f64> = groups.iter().map(|g| median(&g.concat())).collect();
    let mid = geo_mean(&stratum_medians);
    let mut rng = ChaCha8Rng::seed_from_u64(0xB007_57A9);
    let mut meds = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    let mut drawn = vec![0; k];
    let mut sample = Vec::with_capacity(v.len());
    let mut per_stratum = Vec::with_capacity(groups.len());
    for _ in 0..BOOTSTRAP_RESAMPLES {
        for d in drawn.iter_mut() {
            *d = if k == 1 { 0 } else { rng.random_range(0..k) };
        }
        per_stratum.clear();
        for (g, &own) in groups.iter().zip(&stratum_medians) {
            sample.clear();
            for &c in &drawn {
                let members = &g[c];
                for _ in 0..members.len() {
                    sample.push(members[rng.random_range(0..members.len())]);
                }
            }
            // A stratum missing every drawn build (possible only for one that ran fewer
            // rounds than there are builds) keeps its own median in this resample.
            per_stratum.push(if sample.is_empty() {
                own
            } else {
                median(&sample)
            });
        }
        meds.push(geo_mean(&per_stratum));
    }
    percentile_interval(mid, meds)
}

/// The one-stratum two-stage bootstrap behind [`clustered_median_interval`], `k` clusters.
fn single_stratum(v: &[f64], k: usize) -> Interval {
    let mid = median(v);
    if v.len() < 2 {
        return Interval::exact(mid);
    }
    let members: Vec<Vec<f64>> = (0..k)
        .map(|c| v.iter().skip(c).step_by(k).copied().collect())
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(0xB007_57A9);
    let mut meds = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    let mut sample = Vec::with_capacity(v.len());
    for _ in 0..BOOTSTRAP_RESAMPLES {
        sample.clear();
        for _ in 0..k {
            let c = if k == 1 {
                &members[0]
            } else {
                &members[rng.random_range(0..k)]
            };
            for _ in 0..c.len() {
                sample.push(c[rng.random_range(0..c.len())]);
            }
        }
        meds.push(median(&sample));
    }
    percentile_interval(mid, meds)
}

/// `[2.5th, 97.5th]` percentiles of the resampled figures around `mid`.
fn percentile_interval(mid: f64, mut meds: Vec<f64>) -> Interval {
    meds.sort_by(f64::total_cmp);
    let at = |q: f64| meds[((meds.len() - 1) as f64 * q).round() as usize];
    Interval {
        mid,
        lo: at(0.025).min(mid),
        hi: at(0.975).max(mid),
    }
}

/// Ratio `a / b` of two series measured in the same rounds (paired): the median of the
/// per-round ratios with its bootstrap interval.
pub fn paired_ratio(a: &[f64], b: &[f64]) -> Interval {
    paired_ratio_clustered(a, b, 1)
}

/// [`paired_ratio`] where round `i` timed replica `i % clusters` of both filters: the
/// interval resamples replicas, then rounds (see [`clustered_median_interval`]).
pub fn paired_ratio_clustered(a: &[f64], b: &[f64], clusters: usize) -> Interval {
    paired_ratio_stratified(a, b, clusters, &[])
}

/// [`paired_ratio_clustered`] where round `i` ran on CPU `strata[i]`: the geometric mean of
/// the per-CPU medians of the per-round ratios (see [`stratified_median_interval`]).
pub fn paired_ratio_stratified(
    a: &[f64],
    b: &[f64],
    clusters: usize,
    strata: &[usize],
) -> Interval {
    let r: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
    stratified_median_interval(&r, clusters, strata)
}

/// The block length, in slots, of [`blocked_median_interval`] over `slots` slots of rounds:
/// ⌈slots^(1/3)⌉, at least 1 and at most `slots`. The rule is the order Hall, Horowitz and
/// Jing (1995, "On blocking rules for the bootstrap with dependent data", Biometrika 82)
/// found optimal for a block bootstrap's estimate of a variance (n^(1/3)), with the constant
/// set to 1: a run has too few rounds (31 by default) to estimate the constant from its own
/// autocorrelation, as Politis and White's automatic selection would. 31 rounds in one slot
/// each give blocks of 4 rounds; in slots of 3 builds (11 slots), blocks of 3 slots.
pub fn block_length(slots: usize) -> usize {
    if slots <= 1 {
        return 1;
    }
    ((slots as f64).cbrt().ceil() as usize).clamp(1, slots)
}

/// The same figure as [`stratified_median_interval`] (the geometric mean over CPUs of each
/// CPU's median, or the plain median with one CPU), with a 95 % interval from a circular
/// moving-block bootstrap over time, so that rounds which drift together (the machine's load
/// moves over minutes) are resampled together instead of as if independent.
///
/// Round `i` timed build `i % clusters` on CPU `strata[i]` (see `driver`): the rounds fall
/// into *slots* of `clusters` consecutive rounds, one per build, on one CPU, close in time.
/// Each resample draws the builds once, with replacement (as the two-stage bootstrap does,
/// so a difference between builds widens the interval), then fills as many slots as the run
/// had by concatenating blocks of `block` consecutive slots that start at uniformly drawn
/// slots, wrapping from the last slot to the first (circular, so every slot is drawn
/// equally often); a drawn slot contributes its rounds of the drawn builds, each keeping its
/// CPU. The interval is the 2.5th–97.5th percentile of the resamples' figures
/// ([`BOOTSTRAP_RESAMPLES`], fixed seed). `block = 1` resamples slots as if independent;
/// [`block_length`] states the length the harness uses.
pub fn blocked_median_interval(
    v: &[f64],
    clusters: usize,
    strata: &[usize],
    block: usize,
) -> Interval {
    let labels: Vec<usize> = if strata.len() == v.len() {
        strata.to_vec()
    } else {
        vec![0; v.len()]
    };
    let mut distinct = labels.clone();
    distinct.sort_unstable();
    distinct.dedup();
    let figure = |vals: &[(f64, usize)], fallback: &[f64]| -> f64 {
        if distinct.len() == 1 {
            return median(&vals.iter().map(|x| x.0).collect::<Vec<_>>());
        }
        let mut logs = 0.0;
        for (s, &l) in distinct.iter().enumerate() {
            let own: Vec<f64> = vals.iter().filter(|x| x.1 == l).map(|x| x.0).collect();
            let m = if own.is_empty() {
                fallback[s]
            } else {
                median(&own)
            };
            logs += m.ln();
        }
        (logs / distinct.len() as f64).exp()
    };
    let all: Vec<(f64, usize)> = v.iter().copied().zip(labels.iter().copied()).collect();
    let own_medians: Vec<f64> = distinct
        .iter()
        .map(|&l| {
            median(
                &all.iter()
                    .filter(|x| x.1 == l)
                    .map(|x| x.0)
                    .collect::<Vec<_>>(),
            )
        })
        .collect();
    let mid = figure(&all, &own_medians);
    if v.len() < 2 {
        return Interval::exact(mid);
    }
    let k = clusters.clamp(1, v.len());
    let slots = v.len().div_ceil(k);
    let block = block.clamp(1, slots);
    let mut rng = ChaCha8Rng::seed_from_u64(0xB10C_B007);
    let mut figures = Vec::with_capacity(BOOTSTRAP_RESAMPLES);
    let mut drawn = vec![0usize; k];
    let mut sample: Vec<(f64, usize)> = Vec::with_capacity(v.len() + k * block);
    for _ in 0..BOOTSTRAP_RESAMPLES {
        for d in drawn.iter_mut() {
            *d = if k == 1 { 0 } else { rng.random_range(0..k) };
        }
        sample.clear();
        let mut filled = 0;
        while filled < slots {
            let start = rng.random_range(0..slots);
            for j in 0..block.min(slots - filled) {
                let slot = (start + j) % slots;
                for &b in &drawn {
                    let i = slot * k + b;
                    if i < v.len() {
                        sample.push((v[i], labels[i]));
                    }
                }
            }
            filled += block;
        }
        if sample.is_empty() {
            figures.push(mid);
        } else {
            figures.push(figure(&sample, &own_medians));
        }
    }
    percentile_interval(mid, figures)
}

/// Ratio `a / b` of two series timed in the same rounds: the figure of the per-round ratios
/// (median, per CPU, geometric mean over CPUs) with the circular moving-block bootstrap
/// interval of [`blocked_median_interval`], blocks of [`block_length`] slots. This is the
/// ratio every table and `compare` use (results schema 6 on).
pub fn paired_ratio_blocked(a: &[f64], b: &[f64], clusters: usize, strata: &[usize]) -> Interval {
    let r: Vec<f64> = a.iter().zip(b).map(|(x, y)| x / y).collect();
    rounds_interval(&r, clusters, strata)
}

/// [`blocked_median_interval`] with blocks of [`block_length`] slots: the interval of every
/// timing figure over rounds (ns per lookup, and the paired ratios).
pub fn rounds_interval(v: &[f64], clusters: usize, strata: &[usize]) -> Interval {
    let k = clusters.clamp(1, v.len().max(1));
    blocked_median_interval(v, k, strata, block_length(v.len().div_ceil(k)))
}

/// Ratio of two independent intervals: ratio of the middles, `[lo_a / hi_b, hi_a / lo_b]`.
pub fn unpaired_ratio(a: &Interval, b: &Interval) -> Interval {
    Interval {
        mid: a.mid / b.mid,
        lo: a.lo / b.hi,
        hi: a.hi / b.lo,
    }
}

/// Wilson score interval at `z` for `k` successes in `n` trials.
pub fn wilson(k: u64, n: u64, z: f64) -> Interval {
    if n == 0 {
        return Interval {
            mid: f64::NAN,
            lo: 0.0,
            hi: 1.0,
        };
    }
    let n_f = n as f64;
    let p = k as f64 / n_f;
    let z2 = z * z;
    let denom = 1.0 + z2 / n_f;
    let centre = (p + z2 / (2.0 * n_f)) / denom;
    let half = z * (p * (1.0 - p) / n_f + z2 / (4.0 * n_f * n_f)).sqrt() / denom;
    Interval {
        mid: p,
        lo: if k == 0 {
            0.0
        } else {
            (centre - half).max(0.0)
        },
        hi: (centre + half).min(1.0),
    }
}

#[cfg(test)]
mod known_answers;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_and_interval() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
        let v: Vec<f64> = (1..=21).map(f64::from).collect();
        let i = median_interval(&v);
        assert_eq!(i.mid, 11.0);
        // The median of 21 draws stays within a few order statistics of the middle.
        assert!(
            i.lo >= 6.0 && i.lo < 11.0 && i.hi > 11.0 && i.hi <= 16.0,
            "{i:?}"
        );
        assert_eq!(median_interval(&[5.0]), Interval::exact(5.0));
        assert_eq!(median_interval(&v), i, "fixed seed: reproducible");
    }

    #[test]
    fn paired_ratio_cancels_shared_noise() {
        // b is a but 2x, with the same per-round noise: the paired ratio is exactly 0.5.
        let a = [10.0, 30.0, 12.0, 50.0, 11.0];
        let b: Vec<f64> = a.iter().map(|x| x * 2.0).collect();
        let r = paired_ratio(&a, &b);
        assert_eq!((r.lo, r.mid, r.hi), (0.5, 0.5, 0.5));
        let u = unpaired_ratio(&median_interval(&a), &median_interval(&b));
        assert!(u.lo < 0.5 && u.hi > 0.5);
    }

    #[test]
    fn strata_weigh_alike_and_one_stratum_is_the_plain_bootstrap() {
        // Two CPUs, one 1.0× and one 4.0× slower, in blocks of two rounds: the figure is their
        // geometric mean, 2.0, whatever share of the rounds each ran.
        let cpus = [0, 0, 1, 1, 0, 0, 1, 1, 0];
        let v: Vec<f64> = cpus
            .iter()
            .map(|&c| if c == 0 { 1.0 } else { 4.0 })
            .collect();
        let s = stratified_median_interval(&v, 2, &cpus);
        assert!((s.mid - 2.0).abs() < 1e-12, "{s:?}");
        assert!(
            (s.lo - 2.0).abs() < 1e-12 && (s.hi - 2.0).abs() < 1e-12,
            "{s:?}"
        );
        // The plain median of the same rounds is the majority CPU's.
        assert_eq!(median(&v), 1.0);
        // One label, or none (results written before the rounds moved), give exactly the
        // clustered bootstrap.
        let w: Vec<f64> = (1..=21).map(|i| f64::from(i * 7 % 23)).collect();
        let plain = clustered_median_interval(&w, 3);
        assert_eq!(stratified_median_interval(&w, 3, &[5; 21]), plain);
        assert_eq!(stratified_median_interval(&w, 3, &[]), plain);
        // A difference between builds, seen on both CPUs, widens the interval as it does
        // with one CPU: builds are drawn once per resample, not per CPU.
        // Four CPUs, each timing both builds twice: a quarter of the resamples draw build 0
        // twice, so the interval reaches 1.0; drawn per CPU, all four would have to (0.4 %).
        let by_build: Vec<f64> = (0..16)
            .map(|i| if i % 2 == 0 { 1.0 } else { 3.0 })
            .collect();
        let four = [0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 1, 1, 2, 2, 3, 3];
        let crossed = stratified_median_interval(&by_build, 2, &four);
        let one = clustered_median_interval(&by_build, 2);
        assert!(
            crossed.lo <= 1.0 + 1e-12 && crossed.hi >= 3.0 - 1e-12,
            "{crossed:?}"
        );
        assert!(one.lo <= 1.0 + 1e-12 && one.hi >= 3.0 - 1e-12, "{one:?}");
        // Within a stratum the spread still shows: noise on one CPU widens the interval.
        let noisy: Vec<f64> = cpus
            .iter()
            .enumerate()
            .map(|(i, &c)| if c == 0 { 1.0 + i as f64 / 10.0 } else { 4.0 })
            .collect();
        let n = stratified_median_interval(&noisy, 2, &cpus);
        assert!(n.lo < n.mid && n.mid < n.hi, "{n:?}");
        // Paired ratios go through the same statistic.
        let b = vec![2.0; v.len()];
        let r = paired_ratio_stratified(&v, &b, 2, &cpus);
        assert!((r.mid - 1.0).abs() < 1e-12, "{r:?}");
    }

    #[test]
    fn wilson_matches_the_normal_interval_for_large_counts() {
        let w = wilson(10_000, 1_000_000, Z95);
        let half = Z95 * (0.01f64 * 0.99 / 1e6).sqrt();
        // Wilson's centre sits z²/(2n) ≈ 1.9e-6 above p; its half-width differs by less.
        let shift = Z95 * Z95 / 2e6;
        assert!((w.lo - (0.01 - half)).abs() < 1.5 * shift, "{w:?}");
        assert!((w.hi - (0.01 + half)).abs() < 1.5 * shift, "{w:?}");
        let z = wilson(0, 1000, Z95);
        assert!(z.lo.abs() < 1e-15, "{z:?}");
        assert!(z.hi > 0.0 && z.hi < 0.005);
    }
}
