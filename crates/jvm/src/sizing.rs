//! The JVM libraries' sizing and accuracy formulas, in Java's arithmetic.
//!
//! Both libraries size a filter for `n` expected items at false-positive probability `p` with
//! the textbook optimum for a classic Bloom filter (Wikipedia's "Bloom filter" article, the
//! source both cite): `m = −n·ln p / (ln 2)²` bits, truncated toward zero as Java's `(long)`
//! cast does, and `k = m/n · ln 2` probes, rounded as Java's `Math.round` does (ties toward
//! +∞) and then cast to `int` (which keeps the low 32 bits). Guava's newest sources compute
//! `k = −ln p / ln 2` instead ([`GuavaSizing`](crate::GuavaSizing)). Their expected FPR is
//! `(set bits / m)^k` — the fill-based estimate, not the formula in `n`.
//!
//! Java's `Math.log` may differ from the correctly rounded logarithm in the last place; a
//! bit count lands on another integer only when `−n·ln p/(ln 2)²` is within that error of one,
//! which none of the known-answer cases is (they match the jars byte for byte).

use std::f64::consts::LN_2;

/// Java's `Math.round(double)`: the nearest `long`, ties toward positive infinity, saturating
/// at the `long` range, NaN to 0.
pub fn java_round(x: f64) -> i64 {
    let floor = x.floor();
    // `x − ⌊x⌋` is exact in binary floating point.
    let r = if x - floor >= 0.5 { floor + 1.0 } else { floor };
    r as i64
}

/// `optimalNumOfBits(n, p)` of Spark and Guava: `(long) (−n · ln p / (ln 2 · ln 2))`.
pub fn optimal_num_of_bits(n: i64, p: f64) -> i64 {
    ((n.wrapping_neg()) as f64 * p.ln() / (LN_2 * LN_2)) as i64
}

/// `optimalNumOfHashFunctions(n, m)` of Spark and of Guava up to its newest sources:
/// `max(1, (int) Math.round((double) m / n · ln 2))`.
pub fn optimal_num_of_hash_functions(n: i64, m: i64) -> i32 {
    (java_round(m as f64 / n as f64 * LN_2) as i32).max(1)
}

/// `optimalNumOfHashFunctions(p)` of Guava's newest sources: `max(1, (int) Math.round(−ln p / ln 2))`.
pub fn optimal_num_of_hash_functions_for_fpp(p: f64) -> i32 {
    (java_round(-p.ln() / LN_2) as i32).max(1)
}

/// `expectedFpp()` of both libraries: `Math.pow(setBits / bitSize, k)`, the probability that
/// `k` probes at uniformly random positions all find a set bit.
pub fn expected_fpp(set_bits: u64, bit_size: u64, k: u32) -> f64 {
    (set_bits as f64 / bit_size as f64).powf(f64::from(k))
}

/// Guava's `approximateElementCount()`: `round(−ln(1 − set/m) · m / k)` (half up), the number
/// of distinct insertions that sets this many bits on average (Swamidass & Baldi 2007);
/// saturates at `u64::MAX` when every bit is set.
pub fn approximate_element_count(set_bits: u64, bit_size: u64, k: u32) -> u64 {
    let fill = set_bits as f64 / bit_size as f64;
    let estimate = -(-fill).ln_1p() * bit_size as f64 / f64::from(k);
    if estimate.is_finite() {
        java_round(estimate).max(0) as u64
    } else {
        u64::MAX
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approximate_element_count_is_the_fill_estimate() {
        // m·ln(m / (m − X)) / k, computed the other way round, rounded half up.
        assert_eq!(approximate_element_count(500, 1000, 7), 99); // 99.02
        assert_eq!(approximate_element_count(100, 1000, 3), 35); // 35.12
        assert_eq!(approximate_element_count(3000, 4096, 5), 1080); // 1079.99
        assert_eq!(approximate_element_count(0, 4096, 5), 0);
        assert_eq!(approximate_element_count(4096, 4096, 5), u64::MAX);
    }

    #[test]
    fn java_rounding() {
        assert_eq!(java_round(2.5), 3);
        assert_eq!(java_round(-2.5), -2);
        assert_eq!(java_round(0.499_999_999_999_999_94), 0);
        assert_eq!(java_round(f64::NAN), 0);
        assert_eq!(java_round(1e300), i64::MAX);
    }

    #[test]
    fn sizes_of_the_jvm() {
        // 3 % gives five probes ("for 3%, we always get 5 hash functions", Guava's source).
        let m = optimal_num_of_bits(1000, 0.03);
        assert_eq!(m, 7298);
        assert_eq!(optimal_num_of_hash_functions(1000, m), 5);
        assert_eq!(optimal_num_of_hash_functions_for_fpp(0.03), 5);
        // The two k rules differ for tiny n: m = 9 bits for one item at 1 %.
        assert_eq!(optimal_num_of_bits(1, 0.01), 9);
        assert_eq!(optimal_num_of_hash_functions(1, 9), 6);
        assert_eq!(optimal_num_of_hash_functions_for_fpp(0.01), 7);
        // `(int)` keeps the low 32 bits of a huge rounding: max(1, negative) = 1.
        assert_eq!(optimal_num_of_hash_functions(1, 1 << 62), 1);
    }
}
