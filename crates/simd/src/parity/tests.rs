use super::*;
use crate::testing::runs;

fn mix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn mix128(x: &mut u64) -> u128 {
    u128::from(mix(x)) | (u128::from(mix(x)) << 64)
}

/// The column kernels this CPU runs: the inline ones and their called intrinsics twins.
fn every_kernel() -> Vec<ColumnKernel> {
    [ColumnKernel::avx2(), ColumnKernel::avx512()]
        .into_iter()
        .flatten()
        .flat_map(|k| [k, k.called()])
        .collect()
}

#[test]
fn inline_column_kernel_agrees_with_the_bitwise_definition() {
    let mut x = 99u64;
    if !runs("avx2") {
        assert!(
            ColumnKernel::detect().is_none(),
            "no inline kernel without AVX2"
        );
        return;
    }
    assert!(
        ColumnKernel::detect().is_some(),
        "an AVX2 CPU gets the inline kernel"
    );
    assert_eq!(ColumnKernel::avx512().is_some(), runs("avx512vpopcntdq"));
    let kernels = every_kernel();
    for (kernel, r) in kernels
        .iter()
        .flat_map(|&k| (1..=32usize).map(move |r| (k, r)))
    {
        // Four blocks and the padding; the row's blocks start at `base`.
        let mut words: Vec<u64> = (0..4 * r).map(|_| mix(&mut x)).collect();
        words.extend([u64::MAX; COLUMN_PAD]);
        for base in [0, r] {
            for third in [r, 2 * r] {
                for _ in 0..20 {
                    let m = [mix(&mut x), mix(&mut x), mix(&mut x)];
                    let want: u32 = (0..r)
                        .map(|j| {
                            let y = (words[base + j] & m[0])
                                ^ (words[base + r + j] & m[1])
                                ^ (words[base + third + j] & m[2]);
                            (y.count_ones() & 1) << j
                        })
                        .sum();
                    let got = kernel.columns3(&words, base, r, third, m);
                    assert_eq!(
                        got,
                        Some(want),
                        "{}: r = {r}, base {base}, third {third}",
                        kernel.name()
                    );
                }
            }
        }
        // Past the end, or widths the kernel does not take: no answer, nothing read.
        // The last base whose groups fit is answered; one further is not.
        let last = words.len() - 2 * r - kernel.span(r);
        assert!(kernel.columns3(&words, last, r, 2 * r, [1; 3]).is_some());
        assert_eq!(kernel.columns3(&words, last + 1, r, 2 * r, [1; 3]), None);
        assert_eq!(kernel.columns3(&words, 0, r, r - 1, [1; 3]), None);
    }
    for kernel in kernels {
        assert_eq!(kernel.columns3(&[0; 64], 0, 0, 0, [1; 3]), None);
        assert_eq!(kernel.columns3(&[0; 200], 0, 33, 33, [1; 3]), None);
    }
}

#[test]
fn a_kernel_bound_to_a_width_answers_as_the_general_one() {
    let mut x = 7u64;
    if !runs("avx2") {
        return;
    }
    assert_eq!(ColumnKernel::avx512().is_some(), runs("avx512vpopcntdq"));
    for kernel in every_kernel() {
        assert_eq!(kernel.for_width(0), None);
        assert_eq!(kernel.for_width(33), None);
        for r in 1..=32usize {
            let q = kernel.for_width(r).expect("1 ≤ r ≤ 32");
            assert_eq!((q.width(), q.kernel()), (r, kernel));
            let mut words: Vec<u64> = (0..5 * r).map(|_| mix(&mut x)).collect();
            words.extend([0; COLUMN_PAD]);
            let m = [mix(&mut x), mix(&mut x), mix(&mut x)];
            let reach = 2 * r + kernel.span(r);
            let last = words.len() - reach;
            // A row on a block boundary: third mask 0, third block at `r` or `2r` alike.
            let aligned = [m[0], m[1], 0];
            for base in [0, r, 2 * r, last] {
                assert_eq!(
                    q.columns3(&words, base, m),
                    kernel.columns3(&words, base, r, 2 * r, m),
                    "{}: r = {r}, base {base}",
                    kernel.name()
                );
                assert_eq!(
                    q.columns3(&words, base, aligned),
                    kernel.columns3(&words, base, r, r, aligned),
                    "{}: r = {r}, base {base}, zero third mask",
                    kernel.name()
                );
            }
            // One past the farthest reach is refused.
            assert_eq!(q.columns3(&words, last + 1, aligned), None);
            assert_eq!(q.columns3(&words, usize::MAX, m), None);
            // A solution shorter than the reach is refused at every base, the first
            // included.
            assert_eq!(q.columns3(&words[..reach - 1], 0, m), None);
            assert_eq!(
                q.columns3(&words[..reach], 0, m),
                kernel.columns3(&words[..reach], 0, r, 2 * r, m)
            );
        }
    }
}

/// Bit `j`: the parity of `(lo[j] & ml) ^ (hi[j] & mh)`, counted bit by bit.
fn reference(lo: &[u128], hi: &[u128], ml: u128, mh: u128) -> u32 {
    let mut acc = 0;
    for j in 0..lo.len() {
        let x = (lo[j] & ml) ^ (hi[j] & mh);
        let ones = (0..128).filter(|b| (x >> b) & 1 == 1).count() as u32;
        acc |= (ones & 1) << j;
    }
    acc
}

/// Every method of `p` on `R` columns, against the reference.
struct Check<'a, const R: usize>(&'a [u128; R], &'a [u128; R], u128, u128, u32);
impl<const R: usize> ParityTask for Check<'_, R> {
    type Output = ();
    #[inline(always)]
    fn run<P: Parity>(self, p: P) {
        let Check(lo, hi, ml, mh, want) = self;
        assert_eq!(p.columns(lo, hi, ml, mh), want, "columns, R = {R}");
        // At an odd offset: the byte path makes no alignment assumption.
        let le = |v: &[u128; R]| -> Vec<u8> {
            std::iter::once(0)
                .chain(v.iter().flat_map(|c| c.to_le_bytes()))
                .collect()
        };
        let (bl, bh) = (le(lo), le(hi));
        let (bl, bh) = (&bl[1..], &bh[1..]);
        assert_eq!(
            p.columns_le::<R>(bl, bh, ml, mh),
            want,
            "columns_le, R = {R}"
        );
        for j in 0..R {
            let bit = (want >> j) & 1;
            let col = |b: &[u8]| -> [u8; 16] { b[16 * j..16 * j + 16].try_into().unwrap() };
            assert_eq!(p.column(&lo[j], &hi[j], ml, mh), bit);
            assert_eq!(p.column_le(&col(bl), &col(bh), ml, mh), bit);
        }
    }
}

fn check_all<const R: usize>(st: &mut u64) {
    for round in 0..300 {
        let lo: [u128; R] = std::array::from_fn(|_| mix128(st));
        let hi: [u128; R] = std::array::from_fn(|_| mix128(st));
        // Masks as a query makes them (a row shifted apart), and all-ones / zero.
        let (ml, mh) = match round % 3 {
            0 => (mix128(st), mix128(st)),
            1 => (u128::MAX, 0),
            _ => {
                let (row, o) = (mix128(st) | 1, (mix(st) % 128) as u32);
                (row << o, (row >> 1) >> (127 - o))
            }
        };
        let want = reference(&lo, &hi, ml, mh);
        Check(&lo, &hi, ml, mh, want).run(PortableParity);
        Check(&lo, &hi, ml, mh, want).run(CountOnesParity);
        run_parity(Check(&lo, &hi, ml, mh, want));
        #[cfg(target_arch = "x86_64")]
        {
            if runs("popcnt") {
                // SAFETY: the CPU has `popcnt`.
                unsafe { run_parity_popcnt(Check(&lo, &hi, ml, mh, want)) };
            }
            if runs("avx2") && runs("popcnt") {
                // SAFETY: the CPU has AVX2 and `popcnt`.
                unsafe { run_parity_avx2(Check(&lo, &hi, ml, mh, want)) };
            }
        }
    }
}

/// `columns3` of `p` on `R` columns (the third block at `third`), against a bit count.
struct Check3<'a, const R: usize>(&'a [u64], usize, [u64; 3], u32);
impl<const R: usize> ParityTask for Check3<'_, R> {
    type Output = ();
    #[inline(always)]
    fn run<P: Parity>(self, p: P) {
        let Check3(s, third, m, want) = self;
        assert_eq!(p.columns3::<R>(s, third, m), want, "columns3, R = {R}");
    }
}

fn check3_all<const R: usize>(st: &mut u64) {
    for round in 0..300 {
        // Exactly the words the blocks hold (two or three blocks of R), so a read past
        // the end would be out of bounds.
        let third = if round % 2 == 0 { 2 * R } else { R };
        let s: Vec<u64> = (0..third + R).map(|_| mix(st)).collect();
        let w = [&s[..R], &s[R..2 * R], &s[third..third + R]];
        let m = match round % 3 {
            0 => [mix(st), mix(st), mix(st)],
            1 => [u64::MAX, 0, u64::MAX],
            _ => {
                let (c0, c1, t) = (mix(st) | 1, mix(st), (mix(st) % 64) as u32);
                [
                    c0 << t,
                    (c1 << t) | ((c0 >> 1) >> (63 - t)),
                    (c1 >> 1) >> (63 - t),
                ]
            }
        };
        let want = (0..R).fold(0u32, |acc, j| {
            let x = (w[0][j] & m[0]) ^ (w[1][j] & m[1]) ^ (w[2][j] & m[2]);
            let ones = (0..64).filter(|b| (x >> b) & 1 == 1).count() as u32;
            acc | (ones & 1) << j
        });
        let ws = &s[..];
        Check3::<R>(ws, third, m, want).run(PortableParity);
        Check3::<R>(ws, third, m, want).run(CountOnesParity);
        run_parity(Check3::<R>(ws, third, m, want));
        #[cfg(target_arch = "x86_64")]
        {
            if runs("popcnt") {
                // SAFETY: the CPU has `popcnt`.
                unsafe { run_parity_popcnt(Check3::<R>(ws, third, m, want)) };
            }
            if runs("avx2") && runs("popcnt") {
                // SAFETY: the CPU has AVX2 and `popcnt`.
                unsafe { run_parity_avx2(Check3::<R>(ws, third, m, want)) };
            }
        }
    }
}

#[test]
fn every_three_block_kernel_agrees_with_a_bit_count() {
    let mut st = 5u64;
    macro_rules! each {
        ($($r:literal)*) => { $(check3_all::<$r>(&mut st);)* };
    }
    each!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 15 16 17 31 32);
}

#[test]
fn every_kernel_agrees_with_a_bit_count_for_every_column_count() {
    let mut st = 11u64;
    macro_rules! each {
        ($($r:literal)*) => { $(check_all::<$r>(&mut st);)* };
    }
    each!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 16 17 31 32);
}

/// The parities of `words`, bit `j` for word `j`, with parity `p`.
struct Bits<'a>(&'a [u64]);
impl ParityTask for Bits<'_> {
    type Output = u64;
    #[inline(always)]
    fn run<P: Parity>(self, p: P) -> u64 {
        self.0
            .iter()
            .enumerate()
            .fold(0, |acc, (j, &x)| acc | u64::from(p.parity(x)) << j)
    }
}

#[test]
fn every_parity_agrees_with_a_bit_count() {
    let mut st = 11u64;
    let mut words: Vec<u64> = (0..64 * 200).map(|_| mix(&mut st)).collect();
    // Sparse and dense words too, where a fold that dropped a bit would show.
    words.extend((0..64).map(|b| 1u64 << b));
    words.extend((0..64).map(|b| !(1u64 << b)));
    words.extend([0, u64::MAX, 3, 1 << 63 | 1]);
    for chunk in words.chunks(64) {
        let want = chunk.iter().enumerate().fold(0u64, |acc, (j, &x)| {
            let ones = (0..64).filter(|b| (x >> b) & 1 == 1).count() as u64;
            acc | (ones & 1) << j
        });
        assert_eq!(Bits(chunk).run(PortableParity), want);
        assert_eq!(Bits(chunk).run(CountOnesParity), want);
        assert_eq!(run_parity(Bits(chunk)), want);
        #[cfg(target_arch = "x86_64")]
        if runs("avx2") && runs("popcnt") {
            // SAFETY: the CPU has AVX2 and `popcnt`.
            assert_eq!(unsafe { run_parity_avx2(Bits(chunk)) }, want);
        }
    }
}
