//! The counting Bloom filter: counters instead of bits, so keys can be removed.
//!
//! Source: Fan, Cao, Almeida & Broder 2000 ("Summary Cache: a scalable wide-area Web cache
//! sharing protocol", §5.2): how many bits a counter needs. A counter's value is Poisson
//! with mean `k·n/m`, which is `ln 2` at the optimal load.
//!
//! Worked figure: at the optimal load the mean counter is ln 2 ≈ 0.693.
//!
//! ```
//! let mean = bloomlab_counting::math::counting_counter_mean(1_000, 7, 99);
//! assert!((mean - 0.693).abs() < 1e-3);
//! ```

#[cfg(not(feature = "std"))]
use bloomlab_core::math::float::FloatMath as _;

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
    let per_counter = (core::f64::consts::E * core::f64::consts::LN_2 / j).powf(j);
    (m as f64 * per_counter).min(1.0)
}

#[cfg(test)]
mod counting_tests {
    use super::*;
    use bloomlab_core::math::classic_capacity;

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
