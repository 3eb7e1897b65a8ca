//! The interval statistics against answers computed another way: Wilson's interval as the
//! roots of its defining quadratic and against Newcombe's published examples, the percentile
//! bootstrap against the exact distribution of a resampled median.

use super::*;

/// Wilson's interval is the set of π whose score test does not reject:
/// (p̂ − π)² ≤ z² π (1 − π) / n. Its ends are the roots of
/// (1 + z²/n) π² − (2p̂ + z²/n) π + p̂² = 0, solved here with the quadratic formula
/// (the code under test uses the centre ± half-width form instead; this form loses a few
/// digits to cancellation near 0 and 1, hence the 1e-10 tolerance below).
fn wilson_by_roots(k: u64, n: u64, z: f64) -> (f64, f64) {
    let (n, p) = (n as f64, k as f64 / n as f64);
    let a = 1.0 + z * z / n;
    let b = -(2.0 * p + z * z / n);
    let c = p * p;
    let disc = (b * b - 4.0 * a * c).max(0.0).sqrt();
    ((-b - disc) / (2.0 * a), (-b + disc) / (2.0 * a))
}

#[test]
fn wilson_matches_newcombes_published_examples() {
    // Newcombe (1998), "Two-sided confidence intervals for the single proportion",
    // Statistics in Medicine 17, Table II, method 3 (score interval without continuity
    // correction), quoted to four decimals.
    for (k, n, lo, hi) in [
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ] {
        let w = wilson(k, n, Z95);
        assert!(
            (w.lo - lo).abs() < 5e-5 && (w.hi - hi).abs() < 5e-5,
            "{k}/{n}: {w:?}, published [{lo}, {hi}]"
        );
        assert_eq!(w.mid, k as f64 / n as f64, "the point estimate is k/n");
    }
}

#[test]
fn wilson_ends_are_the_roots_of_the_score_equation() {
    for n in [1u64, 2, 3, 5, 10, 37, 100, 1000, 123_457] {
        for k in (0..=n).step_by((n as usize / 7).max(1)).chain([n]) {
            for z in [1.0, Z95, 2.575_829_303_548_901, 5.0] {
                let w = wilson(k, n, z);
                let (lo, hi) = wilson_by_roots(k, n, z);
                assert!(
                    (w.lo - lo).abs() < 1e-10 && (w.hi - hi).abs() < 1e-10,
                    "{k}/{n} z={z}: {w:?} vs roots [{lo}, {hi}]"
                );
                // Each end away from 0 and 1 (where the score is 0/0) is a point where the
                // score test sits exactly at z.
                let nf = n as f64;
                let p = k as f64 / nf;
                for end in [w.lo, w.hi] {
                    if end > 1e-9 && end < 1.0 - 1e-9 {
                        let score = (p - end).abs() / (end * (1.0 - end) / nf).sqrt();
                        assert!((score - z).abs() < 1e-6, "{k}/{n} z={z} end {end}: {score}");
                    }
                }
            }
        }
    }
}

#[test]
fn wilson_at_zero_and_all_successes() {
    for n in [1u64, 4, 20, 1000] {
        let nf = n as f64;
        let z2 = Z95 * Z95;
        // 0 of n: [0, z²/(n + z²)]; n of n: [n/(n + z²), 1].
        let none = wilson(0, n, Z95);
        assert_eq!(none.lo, 0.0);
        assert!((none.hi - z2 / (nf + z2)).abs() < 1e-12, "{none:?}");
        let all = wilson(n, n, Z95);
        assert!((all.lo - nf / (nf + z2)).abs() < 1e-12, "{all:?}");
        assert!((all.hi - 1.0).abs() < 1e-12, "{all:?}");
        // The interval is not symmetric about k/n: it leans towards 1/2.
        let w = wilson(1, n.max(4), Z95);
        assert!(w.mid - w.lo < w.hi - w.mid, "{w:?}");
    }
    let empty = wilson(0, 0, Z95);
    assert!(empty.mid.is_nan() && empty.lo == 0.0 && empty.hi == 1.0);
}

/// P(X ≥ t) for X ~ Binomial(n, p), summed directly.
fn binomial_tail(n: u64, p: f64, t: u64) -> f64 {
    let mut choose = 1.0f64;
    let mut sum = 0.0;
    for j in 0..=n {
        if j > 0 {
            choose = choose * (n - j + 1) as f64 / j as f64;
        }
        if j >= t {
            sum += choose * p.powi(j as i32) * (1.0 - p).powi((n - j) as i32);
        }
    }
    sum
}

#[test]
fn bootstrap_takes_the_2_5_and_97_5_percentiles_of_the_exact_resampling_distribution() {
    // n distinct values 1..=n (n odd): the median of a resample of n drawn with replacement
    // is ≤ i exactly when at least (n+1)/2 draws are ≤ i, so its distribution is binomial:
    // P(median ≤ i) = P(Bin(n, i/n) ≥ (n+1)/2). The percentile interval's ends are the
    // smallest i whose CDF reaches 2.5 % and 97.5 %, which the 2000 seeded resamples find
    // whenever the CDF steps across those levels by many standard errors (checked below,
    // so the test says when it could not decide). Quartiles, or any other pair of levels,
    // give other ends.
    // Of the odd n up to 39, only 5, 7 and 11 put both levels (and the quartiles) at least
    // four standard errors from a step.
    for n in [5u64, 7, 11] {
        let cdf: Vec<f64> = (1..=n)
            .map(|i| binomial_tail(n, i as f64 / n as f64, n.div_ceil(2)))
            .collect();
        let quantile = |q: f64| -> f64 {
            let se = (q * (1.0 - q) / BOOTSTRAP_RESAMPLES as f64).sqrt();
            let i = cdf.iter().position(|&c| c >= q).unwrap();
            assert!(
                (cdf[i] - q).abs() > 4.0 * se && (i == 0 || (q - cdf[i - 1]).abs() > 4.0 * se),
                "n={n}: level {q} too close to a step of the CDF {cdf:?} to decide"
            );
            (i + 1) as f64
        };
        let v: Vec<f64> = (1..=n).rev().map(|x| x as f64).collect();
        let got = median_interval(&v);
        assert_eq!(got.mid, n.div_ceil(2) as f64);
        assert_eq!(
            (got.lo, got.hi),
            (quantile(0.025), quantile(0.975)),
            "n={n}: exact resampling CDF {cdf:?}"
        );
        // The 95 % interval is wider than the interquartile one for these n.
        assert!(quantile(0.025) < quantile(0.25) && quantile(0.75) < quantile(0.975));
    }
}

#[test]
fn bootstrap_interval_with_ties_and_tiny_samples() {
    // All equal: every resample has the same median.
    assert_eq!(median_interval(&[3.0; 9]), Interval::exact(3.0));
    // Two values, 1.0 and 2.0, each once: resampled medians are 1 (¼), 1.5 (½), 2 (¼), so
    // the 2.5–97.5 % interval is the full [1, 2] with the median 1.5 in the middle.
    let two = median_interval(&[2.0, 1.0]);
    assert_eq!((two.lo, two.mid, two.hi), (1.0, 1.5, 2.0));
    // Mostly ties: eight 1.0 and one 9.0. The resampled median is 9.0 only when at least
    // five of nine draws are the 9.0, P = P(Bin(9, 1/9) ≥ 5) ≈ 0.0009 < 2.5 %, so the
    // interval is [1, 1].
    let mut v = vec![1.0; 8];
    v.push(9.0);
    assert!(binomial_tail(9, 1.0 / 9.0, 5) < 0.0025);
    assert_eq!(median_interval(&v), Interval::exact(1.0));
}

/// Every circular block resample of `v` (one stratum, one build) with blocks of `block`,
/// enumerated: all `slots^blocks` tuples of block starts, each equally likely. Written as
/// the definition reads (the series doubled, so a wrapping block is a plain slice), not as
/// the code under test draws it.
fn all_block_resample_medians(v: &[f64], block: usize) -> Vec<f64> {
    let n = v.len();
    let blocks = n.div_ceil(block);
    let doubled: Vec<f64> = v.iter().chain(v.iter()).copied().collect();
    let mut out = Vec::new();
    let total = n.pow(blocks as u32);
    for code in 0..total {
        let mut c = code;
        let mut series = Vec::with_capacity(blocks * block);
        for _ in 0..blocks {
            let start = c % n;
            c /= n;
            series.extend_from_slice(&doubled[start..start + block]);
        }
        series.truncate(n);
        out.push(median(&series));
    }
    out.sort_by(f64::total_cmp);
    out
}

/// The q-quantile of an equally weighted discrete distribution (sorted), as the percentile
/// interval reads it, or `None` when q lies within four Monte Carlo standard errors of a
/// step of the CDF (2000 resamples could land on either side).
fn decidable_quantile(sorted: &[f64], q: f64) -> Option<f64> {
    let se = (q * (1.0 - q) / BOOTSTRAP_RESAMPLES as f64).sqrt();
    let n = sorted.len() as f64;
    // CDF just below and at the value the q-quantile falls on.
    let i = sorted
        .iter()
        .position(|&x| sorted.iter().filter(|&&y| y <= x).count() as f64 / n >= q)?;
    let x = sorted[i];
    let at = sorted.iter().filter(|&&y| y <= x).count() as f64 / n;
    let below = sorted.iter().filter(|&&y| y < x).count() as f64 / n;
    ((at - q).abs() > 4.0 * se && (q - below).abs() > 4.0 * se).then_some(x)
}

#[test]
fn block_bootstrap_takes_the_percentiles_of_the_exact_block_resampling_distribution() {
    // Small counts, every resample enumerated: the percentile interval's ends are the exact
    // distribution's 2.5th and 97.5th percentiles.
    // Chosen (by that same enumeration) so that both levels lie clear of a step of the
    // exact distribution: 16, 25, 36, 49 and 343 equally likely resamples.
    let cases: [(&[f64], usize); 5] = [
        (&[1.0, 2.0, 10.0, 20.0], 2),
        (&[3.0, 8.0, 1.0, 7.0, 2.0], 3),
        (&[6.0, 1.0, 5.0, 2.0, 8.0, 3.0], 4),
        (&[1.0, 5.0, 2.0, 8.0, 3.0, 9.0, 4.0], 4),
        (&[4.0, 1.0, 6.0, 2.0, 9.0, 3.0, 5.0], 3),
    ];
    for (v, block) in cases {
        let exact = all_block_resample_medians(v, block);
        let got = blocked_median_interval(v, 1, &[], block);
        assert_eq!(got.mid, median(v));
        let lo = decidable_quantile(&exact, 0.025).expect("a decidable lower end");
        let hi = decidable_quantile(&exact, 0.975).expect("a decidable upper end");
        assert_eq!(
            (got.lo, got.hi),
            (lo.min(got.mid), hi.max(got.mid)),
            "{v:?} block {block}"
        );
    }
    // Four slots in blocks of two: 16 equally likely resamples, each above 2.5 %, so the
    // interval is the smallest and the largest resampled median: (1, 2, 1, 2) → 1.5 and
    // (10, 20, 10, 20) → 15.
    let four = blocked_median_interval(&[1.0, 2.0, 10.0, 20.0], 1, &[], 2);
    assert_eq!((four.lo, four.mid, four.hi), (1.5, 6.0, 15.0));
}

#[test]
fn block_bootstrap_with_blocks_of_one_is_the_iid_bootstrap_and_whole_blocks_rotate() {
    // Blocks of one slot resample rounds as if independent: the same exact binomial
    // distribution of the median as the plain bootstrap above (another seed, the same ends).
    for n in [5u64, 7, 11] {
        let v: Vec<f64> = (1..=n).rev().map(|x| x as f64).collect();
        let iid = median_interval(&v);
        assert_eq!(blocked_median_interval(&v, 1, &[], 1), iid, "n={n}");
    }
    // One block as long as the run: every resample is a rotation of the rounds, with the
    // same median, so the interval has no width.
    let v = [4.0, 1.0, 6.0, 2.0, 9.0, 3.0, 5.0];
    assert_eq!(blocked_median_interval(&v, 1, &[], 7), Interval::exact(4.0));
}

#[test]
fn block_length_rule() {
    // ⌈slots^(1/3)⌉, within [1, slots].
    let expect = [
        (0, 1),
        (1, 1),
        (2, 2),
        (7, 2),
        (8, 2),
        (9, 3),
        (11, 3),
        (27, 3),
        (28, 4),
        (31, 4),
        (64, 4),
        (65, 5),
    ];
    for (slots, l) in expect {
        assert_eq!(block_length(slots), l, "{slots} slots");
    }
}

#[test]
fn blocked_ratio_keeps_pairing_strata_and_builds() {
    // Shared per-round noise cancels exactly.
    let a = [10.0, 30.0, 12.0, 50.0, 11.0, 13.0, 40.0];
    let b: Vec<f64> = a.iter().map(|x| x * 2.0).collect();
    let r = paired_ratio_blocked(&a, &b, 1, &[]);
    assert_eq!((r.lo, r.mid, r.hi), (0.5, 0.5, 0.5));
    // The figure is the stratified one: two CPUs 1.0× and 4.0× in blocks of two rounds give
    // their geometric mean, 2.0, with no spread.
    let cpus = [0, 0, 1, 1, 0, 0, 1, 1, 0];
    let v: Vec<f64> = cpus
        .iter()
        .map(|&c| if c == 0 { 1.0 } else { 4.0 })
        .collect();
    let s = blocked_median_interval(&v, 2, &cpus, 2);
    assert!(
        (s.mid - 2.0).abs() < 1e-12 && (s.lo - 2.0).abs() < 1e-12 && (s.hi - 2.0).abs() < 1e-12,
        "{s:?}"
    );
    let w: Vec<f64> = (1..=21).map(|i| f64::from(i * 7 % 23)).collect();
    let strata: Vec<usize> = (0..21).map(|i| (i / 3) % 2).collect();
    assert_eq!(
        blocked_median_interval(&w, 3, &strata, 2).mid,
        stratified_median_interval(&w, 3, &strata).mid,
        "the same figure as the i.i.d. bootstrap's"
    );
    // A difference between builds widens the interval: two builds, 1.0 and 3.0, on four
    // CPUs; a quarter of the resamples draw build 0 twice and a quarter build 1 twice.
    let by_build: Vec<f64> = (0..16)
        .map(|i| if i % 2 == 0 { 1.0 } else { 3.0 })
        .collect();
    let four = [0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 1, 1, 2, 2, 3, 3];
    let crossed = blocked_median_interval(&by_build, 2, &four, 2);
    assert!(
        crossed.lo <= 1.0 + 1e-12 && crossed.hi >= 3.0 - 1e-12,
        "{crossed:?}"
    );
}

/// `runs` series of `len` rounds: the log of each round is a load level that holds for
/// `stretch` consecutive rounds (the stretches start at a random offset; levels independent,
/// standard deviation `level`) plus independent round noise of standard deviation `noise`,
/// all centred on 0. So the true median of a round's log is 0 and a 95 % interval of the
/// median should hold 1.0 about as often as it would for independent rounds.
fn drifting_runs(
    runs: usize,
    len: usize,
    stretch: usize,
    level: f64,
    noise: f64,
    seed: u64,
) -> Vec<Vec<f64>> {
    use rand_distr::{Distribution, StandardNormal};
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..runs)
        .map(|_| {
            let offset = rng.random_range(0..stretch);
            let levels: Vec<f64> = (0..len / stretch + 2)
                .map(|_| {
                    let z: f64 = StandardNormal.sample(&mut rng);
                    level * z
                })
                .collect();
            (0..len)
                .map(|t| {
                    let e: f64 = StandardNormal.sample(&mut rng);
                    (levels[(t + offset) / stretch] + noise * e).exp()
                })
                .collect()
        })
        .collect()
}

/// Coverage of 95 % intervals over `runs`: the share whose interval holds 1.0 (the true
/// median), and run by run whether it did.
fn coverage(runs: &[Vec<f64>], f: &dyn Fn(&[f64]) -> Interval) -> (f64, Vec<bool>) {
    let c: Vec<bool> = runs.iter().map(|r| f(r).contains(1.0)).collect();
    (c.iter().filter(|&&x| x).count() as f64 / c.len() as f64, c)
}

#[test]
fn iid_bootstrap_covers_independent_rounds_and_undercovers_drifting_ones() {
    // 31 rounds (the default run's count). Independent rounds: the percentile interval of
    // the median holds the true median in 95 % of runs, within three binomial standard
    // errors over 400 runs (a little short of it at 31 rounds, as a percentile interval of a
    // median is). Rounds whose load holds for stretches of three: the i.i.d. bootstrap
    // counts 31 correlated rounds as independent and falls short of that by more than three
    // standard errors of the difference.
    const RUNS: usize = 400;
    let iid = |r: &[f64]| median_interval(r);
    let (base, _) = coverage(&drifting_runs(RUNS, 31, 1, 1.0, 0.5, 0x1DEB_E7D0), &iid);
    let se = (0.95f64 * 0.05 / RUNS as f64).sqrt();
    assert!(base >= 0.95 - 3.0 * se, "independent rounds: {base}");
    let (i, _) = coverage(&drifting_runs(RUNS, 31, 3, 1.0, 0.5, 0x0D81_F7ED), &iid);
    eprintln!(
        "coverage of the i.i.d. bootstrap: independent rounds {base:.3}, stretches of 3 {i:.3}"
    );
    assert!(
        i < base - 3.0 * 2f64.sqrt() * se,
        "drifting rounds: {i} vs {base}"
    );
}

#[test]
fn block_bootstrap_covers_longer_drift_better_but_not_fully() {
    // Stretches of three rounds, nearly a block: the block bootstrap still covers more runs
    // than the i.i.d. one (a paired comparison on the same runs, McNemar: the runs only the
    // block interval covers outnumber those only the i.i.d. one covers by more than three
    // standard deviations of a fair split), but a run of 31 rounds holds about ten stretches,
    // and resampling so few independent pieces undercovers as a bootstrap of ten rounds
    // would: the coverage is printed, not promised. Drift over minutes (whole runs) is not in
    // one run's rounds at all; `repeat`'s calibration figure measures that.
    const RUNS: usize = 400;
    let block = block_length(31);
    let drifting = drifting_runs(RUNS, 31, 3, 1.0, 0.5, 0x0D81_F7ED);
    let (i, iid) = coverage(&drifting, &|r| median_interval(r));
    let (b, blk) = coverage(&drifting, &|r| blocked_median_interval(r, 1, &[], block));
    eprintln!("coverage, stretches of 3: i.i.d. {i:.3}, blocks of {block} {b:.3}");
    let only_block = iid.iter().zip(&blk).filter(|(i, b)| !**i && **b).count() as f64;
    let only_iid = iid.iter().zip(&blk).filter(|(i, b)| **i && !**b).count() as f64;
    assert!(
        only_block - only_iid > 3.0 * (only_block + only_iid).sqrt(),
        "{only_block} runs covered by blocks alone, {only_iid} by the i.i.d. one alone"
    );
}
