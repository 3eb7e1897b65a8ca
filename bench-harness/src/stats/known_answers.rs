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
