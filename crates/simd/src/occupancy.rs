//! One step of the occupancy chain of the exact blocked-filter FPR for sparse filters (the
//! core crate's `math`): [`occupancy_step`], in AVX-512 or AVX2 lanes where the CPU has them.

#[cfg(target_arch = "x86_64")]
use crate::{has_avx2, has_avx512f};

/// The portable throws ([`occupancy_step`]'s definition), for the tests to hold the vector
/// variants to.
#[cfg(test)]
fn occupancy_step_portable<const T: usize>(dist: &mut [f64], coef: [&[f64]; T]) {
    occupancy_step_body(dist, coef);
}

/// `T − 1` throws of the occupancy chain behind `math::blocked_fpr_markov` on a window of
/// occupancies, in place: `dist[i + T − 1] ← Σ_t coef[t][i]·dist[i + T − 1 − t]` for every
/// `i`, from the old values, summed in the order of `t` (`dist` is `T − 1` longer than each
/// `coef`; longer slices are cut to fit; `T` is 2 or 3). One throw is `[stay, grow]`: `x` ones
/// stay `x` or `x − 1` become `x`; two are `[stay², …, …]`, reaching back two occupancies.
///
/// Compiled for AVX-512 or AVX2 when the CPU has them, else the portable loop: each element
/// is the same products and sums, rounded the same way (Rust does not fuse a multiply and an
/// add), so the results are bit-identical (tested); only the lane width changes (8 or 4
/// doubles per instruction, 2 in the baseline x86-64 build). Before the sizing shared its
/// chain and narrowed its window, the throws were 1.1 M of the 1.6 M instructions of one
/// sizing at 10^-20 in the baseline build (`valgrind --tool=callgrind`), and the throw the
/// larger part of its time since. `T` other than 2 or 3 does not compile.
pub fn occupancy_step<const T: usize>(dist: &mut [f64], coef: [&[f64]; T]) {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx512f() {
            // SAFETY: the CPU supports AVX-512F (checked just above), the only requirement of
            // this `#[target_feature(enable = "avx512f")]` function beyond its safe signature.
            return unsafe { occupancy_step_avx512(dist, coef) };
        }
        if has_avx2() {
            // SAFETY: the CPU supports AVX2 (checked just above), as this function requires.
            return unsafe { occupancy_step_avx2(dist, coef) };
        }
    }
    occupancy_step_body(dist, coef);
}

/// [`occupancy_step_body`] compiled with AVX-512F.
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn occupancy_step_avx512<const T: usize>(dist: &mut [f64], coef: [&[f64]; T]) {
    occupancy_step_body(dist, coef);
}

/// [`occupancy_step_body`] compiled with AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn occupancy_step_avx2<const T: usize>(dist: &mut [f64], coef: [&[f64]; T]) {
    occupancy_step_body(dist, coef);
}

/// The throws, in place from the top down, sixteen occupancies at a time: each chunk reads
/// its old values (sixteen and the `T − 1` below, each shift straight from the slice, an
/// unaligned load) before writing, and the chunks below have not been written yet; the
/// fixed-size chunks run without bounds tests, in as many vector lanes as the caller's target
/// features give. (Copied into an array first, the shifted vectors were rebuilt with
/// permutes: the sizing below 5·10^-14 averaged 33–34 µs against 31 with this body, before
/// two later changes elsewhere.) Safe code: inlined into each compiled variant.
#[inline(always)]
fn occupancy_step_body<const T: usize>(dist: &mut [f64], coef: [&[f64]; T]) {
    const W: usize = 16;
    const { assert!(T == 2 || T == 3, "one throw or two") };
    let reach = T - 1;
    let n = coef
        .iter()
        .map(|c| c.len())
        .fold(dist.len().saturating_sub(reach), usize::min);
    let mut top = n;
    while top >= W {
        let base = top - W;
        let mut new = [0.0f64; W];
        for (t, c) in coef.iter().enumerate() {
            let c: &[f64; W] = c[base..top].try_into().expect("W values");
            let from = base + reach - t;
            let old: &[f64; W] = dist[from..from + W].try_into().expect("W values");
            for i in 0..W {
                let term = c[i] * old[i];
                new[i] = if t == 0 { term } else { new[i] + term };
            }
        }
        dist[base + reach..top + reach].copy_from_slice(&new);
        top = base;
    }
    for i in (0..top).rev() {
        let mut acc = coef[0][i] * dist[i + reach];
        for (t, c) in coef.iter().enumerate().skip(1) {
            acc += c[i] * dist[i + reach - t];
        }
        dist[i + reach] = acc;
    }
}

#[cfg(test)]
mod occupancy_tests {
    use super::*;

    /// A run of throws: `T − 1` at a time, as a function pointer.
    type Step<const T: usize> = fn(&mut [f64], [&[f64]; T]);

    /// The variants this CPU can run, each called directly, and the dispatcher.
    fn variants<const T: usize>() -> Vec<(&'static str, Step<T>)> {
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut v: Vec<(&str, Step<T>)> = vec![("dispatched", occupancy_step::<T>)];
        #[cfg(target_arch = "x86_64")]
        {
            if crate::testing::runs("avx2") {
                // SAFETY: the CPU supports AVX2 (checked just above).
                v.push(("avx2", |d, c| unsafe { occupancy_step_avx2(d, c) }));
            }
            if crate::testing::runs("avx512f") {
                // SAFETY: the CPU supports AVX-512F (checked just above).
                v.push(("avx512", |d, c| unsafe { occupancy_step_avx512(d, c) }));
            }
        }
        v
    }

    /// Every variant against `reference`, bit for bit, with `T` taps on a window of each
    /// length in `lengths`: the coefficients drawn from `next`, then each start value by
    /// `start` from `next`, and `steps` throws in a row.
    fn check_against<const T: usize>(
        reference: Step<T>,
        steps: usize,
        lengths: impl IntoIterator<Item = usize>,
        start: impl Fn(&mut dyn FnMut() -> f64) -> f64,
        next: &mut impl FnMut() -> f64,
    ) {
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for n in lengths {
            let coef: Vec<Vec<f64>> = (0..T).map(|_| (0..n).map(|_| next()).collect()).collect();
            let coef: [&[f64]; T] = std::array::from_fn(|t| coef[t].as_slice());
            let start: Vec<f64> = (0..n + T - 1).map(|_| start(&mut *next)).collect();
            let mut want = start.clone();
            for _ in 0..steps {
                reference(&mut want, coef);
            }
            for (name, step) in variants::<T>() {
                let mut got = start.clone();
                for _ in 0..steps {
                    step(&mut got, coef);
                }
                assert_eq!(bits(&want), bits(&got), "{name}, {T} taps, window of {n}");
            }
        }
    }

    /// Uniform values in [0, 1) with 53 random bits, from the seed `seed`.
    fn uniforms(seed: u64) -> impl FnMut() -> f64 {
        let mut st = seed;
        move || (crate::testing::mix(&mut st) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Five throws in a row from starts spread over many binades, against the portable throw.
    fn check<const T: usize>(next: &mut impl FnMut() -> f64) {
        let start = |next: &mut dyn FnMut() -> f64| next() * (-60.0 * next()).exp();
        check_against::<T>(occupancy_step_portable::<T>, 5, 0..=70, start, next);
    }

    // Off x86-64 only the dispatcher runs, which is then the portable loop itself.
    #[test]
    fn wide_lanes_agree_with_the_portable_throw_bit_for_bit() {
        // Windows of every length from 0 to 70 (every remainder of the chunking), values
        // spread over many binades, several steps in a row, one throw and two at a time.
        let mut next = uniforms(11);
        check::<2>(&mut next);
        check::<3>(&mut next);
        // The portable throw is the definition, element by element (from the old values).
        let (stay, grow) = ([0.25, 0.5, 0.75], [1.0, 0.5, 0.25]);
        let mut d = [1.0, 2.0, 3.0, 4.0];
        occupancy_step_portable(&mut d, [&stay, &grow]);
        assert_eq!(
            d,
            [
                1.0,
                2.0 * 0.25 + 1.0,
                3.0 * 0.5 + 2.0 * 0.5,
                4.0 * 0.75 + 3.0 * 0.25
            ]
        );
        let (a, b, c) = ([0.5, 0.25], [2.0, 4.0], [8.0, 16.0]);
        let mut d = [1.0, 2.0, 3.0, 4.0];
        occupancy_step_portable(&mut d, [&a, &b, &c]);
        assert_eq!(
            d,
            [
                1.0,
                2.0,
                3.0 * 0.5 + 2.0 * 2.0 + 8.0,
                4.0 * 0.25 + 3.0 * 4.0 + 2.0 * 16.0
            ]
        );
    }

    /// The throws written out from their definition, one occupancy at a time from a copy of
    /// the old values: `dist[i + T − 1] ← Σ_t coef[t][i]·dist[i + T − 1 − t]`, in the order
    /// of `t` (the rounding the body promises).
    fn by_definition<const T: usize>(dist: &mut [f64], coef: [&[f64]; T]) {
        let old = dist.to_vec();
        let n = coef[0].len();
        for i in 0..n {
            let mut acc = coef[0][i] * old[i + T - 1];
            for (t, c) in coef.iter().enumerate().skip(1) {
                acc += c[i] * old[i + T - 1 - t];
            }
            dist[i + T - 1] = acc;
        }
    }

    fn check_definition<const T: usize>(next: &mut impl FnMut() -> f64) {
        // Windows of one sixteen-wide chunk and more, with and without a remainder, so the
        // chunked loop (not only the tail loop) is held to the definition.
        let lengths = [16usize, 17, 31, 32, 33, 48, 70];
        let start = |next: &mut dyn FnMut() -> f64| next() + 0.5;
        check_against::<T>(by_definition::<T>, 1, lengths, start, next);
    }

    #[test]
    fn every_chunk_of_a_long_window_throws_as_defined() {
        let mut next = uniforms(23);
        check_definition::<2>(&mut next);
        check_definition::<3>(&mut next);
    }
}
