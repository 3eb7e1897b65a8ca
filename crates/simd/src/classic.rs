//! The classic filter's whole-array probes: [`classic_contains_all`] and its checked twin,
//! and [`fastrange`], the reduction every filter of the workspace uses.

/// Map a uniformly distributed 64-bit value onto `0..n` without division
/// (Lemire 2016, "A fast alternative to the modulo reduction"): `⌊x · n / 2^64⌋`. The one
/// definition of the reduction: the core crate's `hash::fastrange` is this function.
///
/// ```
/// use bloomlab_simd::fastrange;
/// assert_eq!(fastrange(0, 10), 0);
/// assert_eq!(fastrange(u64::MAX, 10), 9);
/// assert_eq!(fastrange(1 << 63, 10), 5);
/// ```
#[inline(always)]
pub fn fastrange(x: u64, n: u64) -> u64 {
    ((u128::from(x) * u128::from(n)) >> 64) as u64
}

/// All `k` Kirsch–Mitzenmacher probes `fastrange(h1 + i·h2, m)` hit set bits of `words`
/// (bit `j` is bit `j & 63` of word `j >> 6`), read without a branch: the classic filter's
/// in-cache lookup (portable definition, bounds-checked). Panics if `words` holds fewer
/// than `m` bits.
#[inline(always)]
pub fn classic_contains_all_checked(words: &[u64], m: u64, h1: u64, h2: u64, k: u32) -> bool {
    let mut g = h1;
    let mut all = 1u64;
    for _ in 0..k {
        let j = fastrange(g, m);
        all &= words[(j >> 6) as usize] >> (j & 63);
        g = g.wrapping_add(h2);
    }
    all & 1 != 0
}

/// [`classic_contains_all_checked`] with one bounds check per call instead of one per
/// probe: every probe is `fastrange(·, m) < m`, so once `m ≤ 64 · words.len()` holds, every
/// word index is in range. Same answers (tested); falls back to the checked twin (which
/// panics) when `words` is too short.
#[inline(always)]
pub fn classic_contains_all(words: &[u64], m: u64, h1: u64, h2: u64, k: u32) -> bool {
    if m.div_ceil(64) > words.len() as u64 {
        return classic_contains_all_checked(words, m, h1, h2, k);
    }
    let mut g = h1;
    let mut all = 1u64;
    for _ in 0..k {
        let j = fastrange(g, m);
        // SAFETY: `j = ⌊g · m / 2^64⌋ < m`, so `j >> 6 < ⌈m / 64⌉ ≤ words.len()` (checked
        // above): the index is in bounds.
        let w = unsafe { *words.get_unchecked((j >> 6) as usize) };
        all &= w >> (j & 63);
        g = g.wrapping_add(h2);
    }
    all & 1 != 0
}

#[cfg(test)]
mod classic_tests {
    use super::*;

    #[test]
    fn unchecked_probes_agree_with_the_checked_twin() {
        let mut st = 5u64;
        let mut next = || {
            st = st.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            st ^ (st >> 29)
        };
        for m in [1u64, 63, 64, 65, 1000, 4096, 100_003] {
            // Each word about half set, so both answers occur.
            let words: Vec<u64> = (0..m.div_ceil(64)).map(|_| next()).collect();
            for _ in 0..2000 {
                let (h1, h2, k) = (next(), next() | 1, (next() % 16) as u32 + 1);
                assert_eq!(
                    classic_contains_all(&words, m, h1, h2, k),
                    classic_contains_all_checked(&words, m, h1, h2, k),
                    "m = {m}"
                );
            }
        }
    }

    #[test]
    #[should_panic]
    fn too_short_a_table_panics_instead_of_reading_past_it() {
        classic_contains_all(&[u64::MAX], 65, u64::MAX, 1, 3);
    }
}
