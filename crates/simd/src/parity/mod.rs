//! The Ribbon filter's column parities: [`Parity`] (portable, `popcnt`, AVX2), run through
//! [`run_parity`], and the inline column kernels of a filter ([`ColumnKernel`]).

#[cfg(target_arch = "x86_64")]
use crate::has_popcnt;
use crate::{has_avx2, has_avx512_popcnt};

/// The parity of a 64-bit word, the one operation a Ribbon query repeats per column (`r`
/// times per lookup), and the column loops built on it. Every implementation gives the same
/// bits (tested against each other below); they differ in the instructions a caller
/// compiled around them gets.
pub trait Parity: Copy {
    /// `x.count_ones() & 1`.
    fn parity(self, x: u64) -> u32;

    /// One column of a `w = 128` query: the parity of `(l & ml) ^ (h & mh)`.
    #[inline(always)]
    fn column(self, l: &u128, h: &u128, ml: u128, mh: u128) -> u32 {
        let x = (*l & ml) ^ (*h & mh);
        self.parity((x as u64) ^ ((x >> 64) as u64))
    }

    /// [`column`](Self::column) over two columns stored as little-endian bytes.
    #[inline(always)]
    fn column_le(self, l: &[u8; 16], h: &[u8; 16], ml: u128, mh: u128) -> u32 {
        self.column(&u128::from_le_bytes(*l), &u128::from_le_bytes(*h), ml, mh)
    }

    /// All `R` columns of a query: bit `j` is [`column`](Self::column)`(lo[j], hi[j])`.
    #[inline(always)]
    fn columns<const R: usize>(self, lo: &[u128; R], hi: &[u128; R], ml: u128, mh: u128) -> u32 {
        let mut acc = 0;
        for j in 0..R {
            acc |= self.column(&lo[j], &hi[j], ml, mh) << j;
        }
        acc
    }

    /// [`columns`](Self::columns) over `R` columns stored as little-endian bytes, column `j`
    /// at bytes `16·j..16·j + 16` of `lo` and of `hi` (each at least `16·R` bytes long).
    #[inline(always)]
    fn columns_le<const R: usize>(self, lo: &[u8], hi: &[u8], ml: u128, mh: u128) -> u32 {
        let (lo, hi) = (&lo[..16 * R], &hi[..16 * R]);
        let col = |s: &[u8], j: usize| -> [u8; 16] {
            s[16 * j..16 * j + 16].try_into().expect("16 bytes")
        };
        let mut acc = 0;
        for j in 0..R {
            acc |= self.column_le(&col(lo, j), &col(hi, j), ml, mh) << j;
        }
        acc
    }

    /// All `R` columns of a query over a solution stored in blocks of 64 slots, where a
    /// `w = 128` row spans three blocks of `R` words: `a = s[..R]`, `b = s[R..2R]` and
    /// `c = s[third..third + R]`; bit `j` is the parity of
    /// `(a[j] & m[0]) ^ (b[j] & m[1]) ^ (c[j] & m[2])`. Panics if `s` is too short.
    #[inline(always)]
    fn columns3<const R: usize>(self, s: &[u64], third: usize, m: [u64; 3]) -> u32 {
        let (a, b, c) = (&s[..R], &s[R..2 * R], &s[third..third + R]);
        let mut acc = 0;
        for j in 0..R {
            acc |= self.parity((a[j] & m[0]) ^ (b[j] & m[1]) ^ (c[j] & m[2])) << j;
        }
        acc
    }
}

/// Parity without `popcnt`: fold to 8 bits, then the parity flag of a byte (`setnp`): six
/// instructions where the default x86_64 target compiles `count_ones` into a dozen.
#[derive(Clone, Copy, Debug, Default)]
pub struct PortableParity;

impl Parity for PortableParity {
    #[inline(always)]
    fn parity(self, mut x: u64) -> u32 {
        x ^= x >> 32;
        x ^= x >> 16;
        x ^= x >> 8;
        (x as u8).count_ones() & 1
    }
}

/// Parity through `count_ones`: one `popcnt` instruction in code compiled with `popcnt`
/// enabled, which is where [`run_parity`] runs it (any other caller gets a correct but
/// software popcount); on x86_64 a column's AND and XOR run in SSE2 registers. Safe to build
/// anywhere: the instruction choice is the compiler's.
#[derive(Clone, Copy, Debug, Default)]
pub struct CountOnesParity;

impl Parity for CountOnesParity {
    #[inline(always)]
    fn parity(self, x: u64) -> u32 {
        x.count_ones() & 1
    }

    /// Two loads folded into the two ANDs, the XOR, the halves folded, one `popcnt`.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn column(self, l: &u128, h: &u128, ml: u128, mh: u128) -> u32 {
        // SAFETY: `l` and `h` are references, so 16 readable bytes each.
        unsafe {
            x86::column(
                core::ptr::from_ref(l).cast(),
                core::ptr::from_ref(h).cast(),
                ml,
                mh,
            )
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn column_le(self, l: &[u8; 16], h: &[u8; 16], ml: u128, mh: u128) -> u32 {
        // SAFETY: as in `column`; the bytes are the little-endian column, as x86 loads it.
        unsafe { x86::column(l.as_ptr(), h.as_ptr(), ml, mh) }
    }
}

/// The AVX2 column loop: four columns in two 256-bit vectors (the ANDs and XOR on two
/// columns at once, the halves folded and the four columns' words interleaved by two
/// unpacks), then their parities without `popcnt`: each byte folded to a nibble, a
/// nibble-parity table lookup (`vpshufb`), the byte parities summed per 64-bit lane
/// (`vpsadbw`); two such groups merged into one vector, put in column order by one
/// permute and their low bits collected by one `vmovmskps`. About 35 instructions per eight
/// columns where one `popcnt` per column costs 10 to 11. Only [`run_parity`] makes one,
/// after finding AVX2 and `popcnt`.
#[derive(Clone, Copy, Debug)]
pub struct Avx2Parity(());

impl Parity for Avx2Parity {
    #[inline(always)]
    fn parity(self, x: u64) -> u32 {
        CountOnesParity.parity(x)
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn column(self, l: &u128, h: &u128, ml: u128, mh: u128) -> u32 {
        CountOnesParity.column(l, h, ml, mh)
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn column_le(self, l: &[u8; 16], h: &[u8; 16], ml: u128, mh: u128) -> u32 {
        CountOnesParity.column_le(l, h, ml, mh)
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn columns<const R: usize>(self, lo: &[u128; R], hi: &[u128; R], ml: u128, mh: u128) -> u32 {
        // SAFETY: an `Avx2Parity` exists only once the CPU was found to have AVX2 and
        // `popcnt`; `lo` and `hi` hold `R` columns of 16 bytes each.
        unsafe { x86::columns_avx2::<R>(lo.as_ptr().cast(), hi.as_ptr().cast(), ml, mh) }
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn columns_le<const R: usize>(self, lo: &[u8], hi: &[u8], ml: u128, mh: u128) -> u32 {
        let (lo, hi) = (&lo[..16 * R], &hi[..16 * R]);
        // SAFETY: as in `columns` (both slices hold `16·R` bytes).
        unsafe { x86::columns_avx2::<R>(lo.as_ptr(), hi.as_ptr(), ml, mh) }
    }

    /// Four columns per vector with no unpacking (the three blocks' words of four columns
    /// are three 32-byte loads), then the parity steps of `columns`; a group of fewer than
    /// four columns is read with masked loads, which touch no byte past the slices.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn columns3<const R: usize>(self, s: &[u64], third: usize, m: [u64; 3]) -> u32 {
        // Two range checks for the three blocks.
        let (ab, c) = (&s[..2 * R], &s[third..third + R]);
        let (a, b) = (ab.as_ptr(), ab[R..].as_ptr());
        // SAFETY: an `Avx2Parity` exists only once the CPU was found to have AVX2 and
        // `popcnt`; `R` words are readable at each pointer (`ab` holds `2R`, `c` holds `R`).
        unsafe { x86::columns3_avx2::<R>([a, b, c.as_ptr()], m) }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use core::arch::x86_64::{
        __m128i, __m256i, _mm_and_si128, _mm_cvtsi128_si64, _mm_loadu_si128, _mm_set_epi64x,
        _mm_unpackhi_epi64, _mm_xor_si128, _mm256_and_si256, _mm256_castsi256_ps,
        _mm256_loadu_si256, _mm256_movemask_ps, _mm256_or_si256, _mm256_permutevar8x32_epi32,
        _mm256_sad_epu8, _mm256_set_epi64x, _mm256_set1_epi8, _mm256_setr_epi8, _mm256_setr_epi32,
        _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_slli_epi32, _mm256_slli_epi64,
        _mm256_srli_epi64, _mm256_unpackhi_epi64, _mm256_unpacklo_epi64, _mm256_xor_si256,
        _mm256_zextsi128_si256,
    };
    use core::arch::x86_64::{_mm256_maskload_epi64, _mm256_set1_epi64x, _mm256_setr_epi64x};

    /// The byte-parity step of the AVX2 column loops, without `popcnt`: the parity of each
    /// nibble value, in both 128-bit lanes (`vpshufb` looks up per lane), and the low-nibble
    /// mask. (Its functions, and [`gather`], are `#[inline(always)]` functions without
    /// `#[target_feature]`, so that they are inlined before the kernel is optimized and the
    /// kernels compile as if written out in place.)
    #[derive(Clone, Copy)]
    struct NibbleParity {
        table: __m256i,
        nibble: __m256i,
    }

    impl NibbleParity {
        /// # Safety
        /// The CPU must have AVX2.
        #[inline(always)]
        unsafe fn new() -> Self {
            // SAFETY: the caller guarantees AVX2.
            unsafe {
                Self {
                    table: _mm256_setr_epi8(
                        0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, //
                        0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0,
                    ),
                    nibble: _mm256_set1_epi8(0x0f),
                }
            }
        }

        /// Per 64-bit lane of `y`, the sum of its eight byte parities (0 to 8): odd exactly
        /// when the lane is. The low nibble of each byte is the byte folded; its parity comes
        /// from the table, the sum from `vpsadbw`.
        ///
        /// # Safety
        /// The CPU must have AVX2.
        #[inline(always)]
        unsafe fn lane_sums(self, y: __m256i) -> __m256i {
            // SAFETY: the caller guarantees AVX2.
            unsafe {
                let t = _mm256_xor_si256(y, _mm256_srli_epi64::<4>(y));
                let p = _mm256_shuffle_epi8(self.table, _mm256_and_si256(t, self.nibble));
                _mm256_sad_epu8(p, _mm256_setzero_si256())
            }
        }
    }

    /// Bit `j` is the parity of column `j < R`, eight columns a round from `sums(j)` and
    /// `sums(j + 4)`, each four columns' parity sums (below 16), one per 64-bit lane: the
    /// second four's sums in the high half of each lane, one permute by `order` to column
    /// order, one mask of the low bits.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[inline(always)]
    unsafe fn gather<const R: usize>(sums: impl Fn(usize) -> __m256i, order: __m256i) -> u32 {
        let mut acc = 0u32;
        let mut j = 0;
        while j < R {
            // SAFETY: the caller guarantees AVX2.
            let bits = unsafe {
                let s = _mm256_or_si256(sums(j), _mm256_slli_epi64::<32>(sums(j + 4)));
                let s = _mm256_permutevar8x32_epi32(s, order);
                _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32::<31>(s)))
            };
            acc |= (bits as u32) << j;
            j += 8;
        }
        acc
    }

    /// `m` in a vector, low word first.
    #[inline(always)]
    fn split(m: u128) -> __m128i {
        // SAFETY: `_mm_set_epi64x` needs SSE2 only, which every x86_64 CPU has.
        unsafe { _mm_set_epi64x((m >> 64) as i64, m as i64) }
    }

    /// The parity of `(l & ml) ^ (h & mh)` over the 16 little-endian bytes at `l` and `h`.
    ///
    /// # Safety
    /// `l` and `h` must each point to 16 readable bytes (any alignment).
    #[inline(always)]
    pub(super) unsafe fn column(l: *const u8, h: *const u8, ml: u128, mh: u128) -> u32 {
        let (ml, mh) = (split(ml), split(mh));
        // SAFETY: 16 readable bytes at each (the caller's contract); `_mm_loadu_si128` has
        // no alignment requirement; the rest needs SSE2 only, which every x86_64 CPU has.
        let f = unsafe {
            let (l, h) = (_mm_loadu_si128(l.cast()), _mm_loadu_si128(h.cast()));
            let x = _mm_xor_si128(_mm_and_si128(l, ml), _mm_and_si128(h, mh));
            _mm_cvtsi128_si64(_mm_xor_si128(x, _mm_unpackhi_epi64(x, x)))
        };
        (f as u64).count_ones() & 1
    }

    /// `(lo & ml) ^ (hi & mh)` for columns `j` and `j + 1` of `R` (zero past the last).
    ///
    /// # Safety
    /// The CPU must have AVX2; `lo` and `hi` must each point to `R` readable 16-byte columns.
    #[inline]
    #[target_feature(enable = "avx2,popcnt")]
    unsafe fn pair<const R: usize>(
        lo: *const u8,
        hi: *const u8,
        j: usize,
        ml: __m256i,
        mh: __m256i,
    ) -> __m256i {
        // SAFETY (each load): columns `j` (and `j + 1`) are below `R`, so readable; the loads
        // have no alignment requirement.
        let (l, h) = if j + 2 <= R {
            unsafe {
                (
                    _mm256_loadu_si256(lo.add(16 * j).cast()),
                    _mm256_loadu_si256(hi.add(16 * j).cast()),
                )
            }
        } else if j < R {
            unsafe {
                (
                    _mm256_zextsi128_si256(_mm_loadu_si128(lo.add(16 * j).cast())),
                    _mm256_zextsi128_si256(_mm_loadu_si128(hi.add(16 * j).cast())),
                )
            }
        } else {
            return _mm256_setzero_si256();
        };
        _mm256_xor_si256(_mm256_and_si256(l, ml), _mm256_and_si256(h, mh))
    }

    /// Bit `j` is the parity of `(lo_j & ml) ^ (hi_j & mh)` for the `R` 16-byte columns at
    /// `lo` and `hi` (see [`super::Avx2Parity`]).
    ///
    /// # Safety
    /// The CPU must have AVX2; `lo` and `hi` must each point to `R` readable 16-byte columns.
    #[inline]
    #[target_feature(enable = "avx2,popcnt")]
    pub(super) unsafe fn columns_avx2<const R: usize>(
        lo: *const u8,
        hi: *const u8,
        ml: u128,
        mh: u128,
    ) -> u32 {
        let bcast = |m: u128| {
            let (l, h) = (m as i64, (m >> 64) as i64);
            _mm256_set_epi64x(h, l, h, l)
        };
        let (ml, mh) = (bcast(ml), bcast(mh));
        // SAFETY (here and below): AVX2 is enabled in this function.
        let nibbles = unsafe { NibbleParity::new() };
        // Four columns' sums of byte parities per 64-bit lane, in lane order j, j + 2,
        // j + 1, j + 3.
        let sums = |j: usize| {
            // SAFETY: the caller's contract, passed on (`pair` reads only columns below `R`).
            let (x0, x1) = unsafe {
                (
                    pair::<R>(lo, hi, j, ml, mh),
                    pair::<R>(lo, hi, j + 2, ml, mh),
                )
            };
            // Lanes: columns j, j + 2, j + 1, j + 3, each folded to 64 bits.
            let y = _mm256_xor_si256(_mm256_unpacklo_epi64(x0, x1), _mm256_unpackhi_epi64(x0, x1));
            unsafe { nibbles.lane_sums(y) }
        };
        // 32-bit element `k` of the two sums interleaved holds column `ORDER[k]`.
        unsafe { gather::<R>(sums, _mm256_setr_epi32(0, 4, 2, 6, 1, 5, 3, 7)) }
    }

    /// Words `j..j + 4` of the `R` at `p` (zero past `R`; masked loads for a partial group).
    ///
    /// # Safety
    /// The CPU must have AVX2; `p` must point to `R` readable words.
    #[inline]
    #[target_feature(enable = "avx2,popcnt")]
    unsafe fn quad<const R: usize>(p: *const u64, j: usize) -> __m256i {
        if j + 4 <= R {
            // SAFETY: words `j..j + 4` are below `R`, so readable; no alignment needed.
            unsafe { _mm256_loadu_si256(p.add(j).cast()) }
        } else if j < R {
            let n = (R - j) as i64;
            let keep = _mm256_setr_epi64x(
                -i64::from(n > 0),
                -i64::from(n > 1),
                -i64::from(n > 2),
                -i64::from(n > 3),
            );
            // SAFETY: the lanes kept are words below `R`; a masked-off lane is not read
            // (and cannot fault).
            unsafe { _mm256_maskload_epi64(p.add(j).cast(), keep) }
        } else {
            _mm256_setzero_si256()
        }
    }

    /// Bit `j` is the parity of `(a_j & m[0]) ^ (b_j & m[1]) ^ (c_j & m[2])` over the `R`
    /// words at each of `p = [a, b, c]` (see [`super::Avx2Parity::columns3`]).
    ///
    /// # Safety
    /// The CPU must have AVX2; each pointer must point to `R` readable words.
    #[inline]
    #[target_feature(enable = "avx2,popcnt")]
    pub(super) unsafe fn columns3_avx2<const R: usize>(p: [*const u64; 3], m: [u64; 3]) -> u32 {
        let m = m.map(|w| _mm256_set1_epi64x(w as i64));
        // SAFETY (here and below): AVX2 is enabled in this function.
        let nibbles = unsafe { NibbleParity::new() };
        // Per 64-bit lane `i`, the sum of the byte parities of column `j + i`'s word.
        let sums = |j: usize| {
            // SAFETY: the caller's contract, passed on (`quad` reads only words below `R`).
            let (a, b, c) = unsafe { (quad::<R>(p[0], j), quad::<R>(p[1], j), quad::<R>(p[2], j)) };
            let y = _mm256_xor_si256(
                _mm256_xor_si256(_mm256_and_si256(a, m[0]), _mm256_and_si256(b, m[1])),
                _mm256_and_si256(c, m[2]),
            );
            unsafe { nibbles.lane_sums(y) }
        };
        // 32-bit element `2i` of the two sums interleaved holds column `i`, `2i + 1` column
        // `4 + i`.
        unsafe { gather::<R>(sums, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7)) }
    }
}

/// Extra words a solution in 64-slot blocks keeps past its end so that
/// [`ColumnKernel::columns3`] may read whole groups of columns with plain vector loads: a
/// group of four (AVX2) or eight (AVX-512) columns reads up to seven words past the last
/// column it needs.
pub const COLUMN_PAD: usize = 8;

/// The column kernel a Ribbon filter chose when it was built: inline assembly, with
/// AVX-512 (`VPOPCNTDQ`: eight columns per 64-byte load, one population count per column)
/// when the CPU has it, else AVX2 (four columns per 32-byte load, parities from a nibble
/// table), else none (the caller then runs its query through [`run_parity`]). Kept in the
/// filter, so each lookup tests one byte it already holds and runs the kernel inline, with
/// no call into a feature-enabled body — that call and its saved registers were ≈ 40 of a
/// lookup's ≈ 190 instructions.
///
/// ```
/// use bloomlab_simd::{self as simd, ColumnKernel, Parity, PortableParity};
///
/// // Three blocks of r = 5 words, plus the padding the kernel may read.
/// let r = 5;
/// let mut words: Vec<u64> = (1..=3 * r as u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
/// words.resize(3 * r + simd::COLUMN_PAD, 0);
/// let m = [0xdead_beef, 0x1234_5678_9abc_def0, 0xff];
/// let want: u32 = (0..r)
///     .map(|j| PortableParity.parity((words[j] & m[0]) ^ (words[r + j] & m[1]) ^ (words[2 * r + j] & m[2])) << j)
///     .sum();
/// for kernel in [ColumnKernel::detect(), ColumnKernel::avx2(), ColumnKernel::avx512()].into_iter().flatten() {
///     assert_eq!(kernel.columns3(&words, 0, r, 2 * r, m), Some(want), "{}", kernel.name());
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ColumnKernel(ColumnMode);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum ColumnMode {
    /// `asm_columns3`: AVX2, four columns per round.
    Avx2,
    /// `asm_columns3_avx512`: AVX-512F with `VPOPCNTDQ`, eight columns per round.
    Avx512,
    /// `columns3_avx2_called`: `Avx2` in intrinsics, called.
    Avx2Called,
    /// `columns3_avx512_called`: `Avx512` in intrinsics, called.
    Avx512Called,
}

impl ColumnKernel {
    /// The fastest inline kernel this CPU runs: AVX-512 ([`avx512`](Self::avx512)), else
    /// AVX2 ([`avx2`](Self::avx2)), else none.
    pub fn detect() -> Option<Self> {
        Self::avx512().or_else(Self::avx2)
    }

    /// The AVX2 kernel, if this CPU has AVX2 (tests run it beside the AVX-512 one).
    pub fn avx2() -> Option<Self> {
        (cfg!(target_arch = "x86_64") && has_avx2()).then_some(ColumnKernel(ColumnMode::Avx2))
    }

    /// The AVX-512 kernel, if this CPU has AVX-512F and `VPOPCNTDQ` ([`has_avx512_popcnt`]).
    pub fn avx512() -> Option<Self> {
        (cfg!(target_arch = "x86_64") && has_avx2() && has_avx512_popcnt())
            .then_some(ColumnKernel(ColumnMode::Avx512))
    }

    /// [`avx2`](Self::avx2) and [`avx512`](Self::avx512) written with `#[target_feature]`
    /// intrinsics instead of inline assembly: the same answers, with a call per query where
    /// the caller is compiled without the kernel's features (the inline kernels' reason to
    /// be assembly), for measuring what that call costs (the lab's `ribbon_column_kernels`).
    pub fn called(self) -> Self {
        ColumnKernel(match self.0 {
            ColumnMode::Avx2 | ColumnMode::Avx2Called => ColumnMode::Avx2Called,
            ColumnMode::Avx512 | ColumnMode::Avx512Called => ColumnMode::Avx512Called,
        })
    }

    /// `"avx512"` or `"avx2"`, with `" (called)"` for [`called`](Self::called) kernels.
    pub fn name(self) -> &'static str {
        match self.0 {
            ColumnMode::Avx2 => "avx2",
            ColumnMode::Avx512 => "avx512",
            ColumnMode::Avx2Called => "avx2 (called)",
            ColumnMode::Avx512Called => "avx512 (called)",
        }
    }

    /// The `r`-bit value of a query over a solution stored in blocks of 64 slots of `r`
    /// words each, the row's three blocks at `words[base..]`, `words[base + r..]` and
    /// `words[base + third..]`: bit `j` is the parity of
    /// `(a[j] & m[0]) ^ (b[j] & m[1]) ^ (c[j] & m[2])` — [`Parity::columns3`]'s answer.
    /// `None` (and nothing read) unless `1 ≤ r ≤ 32`, `third ≥ r`, and the kernel's groups
    /// of columns fit in `words`: `base + third + g·ceil(r/g) ≤ words.len()` with `g = 4`
    /// (AVX2) or 8 (AVX-512) — a solution keeps [`COLUMN_PAD`] words past its end for this —
    /// so the one range check covers every load.
    #[inline(always)]
    pub fn columns3(
        self,
        words: &[u64],
        base: usize,
        r: usize,
        third: usize,
        m: [u64; 3],
    ) -> Option<u32> {
        if r == 0 || r > 32 || third < r || base.checked_add(third + self.span(r))? > words.len() {
            return None;
        }
        // SAFETY: checked just above: `1 ≤ r ≤ 32`, `third ≥ r`, and the groups fit.
        Some(unsafe { self.run(words, base, r, third, m) })
    }

    /// Words a query of width `r` reads from the start of a block: `r` rounded up to the
    /// kernel's group of columns (four for AVX2, eight for AVX-512).
    #[inline(always)]
    fn span(self, r: usize) -> usize {
        let group = match self.0 {
            ColumnMode::Avx512 | ColumnMode::Avx512Called => 8,
            ColumnMode::Avx2 | ColumnMode::Avx2Called => 4,
        };
        r.div_ceil(group) * group
    }

    /// This kernel bound to result width `r` — checked here, once — for
    /// [`ColumnQuery::columns3`], whose lookups then test one bound each. `None` unless
    /// `1 ≤ r ≤ 32`.
    pub fn for_width(self, r: usize) -> Option<ColumnQuery> {
        (1..=32).contains(&r).then(|| ColumnQuery {
            kernel: self,
            r: r as u8,
            reach: (2 * r + self.span(r)) as u8,
        })
    }

    /// The kernel on `words[base..]`, the third block at `third`, bits past `r` cleared.
    ///
    /// # Safety
    /// `1 ≤ r ≤ 32`, `third ≥ r` and `base + third + self.span(r) ≤ words.len()`.
    #[inline(always)]
    unsafe fn run(self, words: &[u64], base: usize, r: usize, third: usize, m: [u64; 3]) -> u32 {
        #[cfg(target_arch = "x86_64")]
        {
            let a = words.as_ptr().wrapping_add(base);
            // SAFETY (each arm): the AVX-512 modes exist only on a CPU with AVX-512F and
            // VPOPCNTDQ (`avx512`), every `ColumnKernel` only on a CPU with AVX2 (`avx2`,
            // `avx512`); the range test above puts every word the kernel reads inside `words`
            // (see its contract). The inline kernels first, as plain compares (a `match`
            // compiles to a jump table).
            let bits = if self.0 == ColumnMode::Avx512 {
                unsafe { asm_columns3_avx512(a, r, third, &m) }
            } else if self.0 == ColumnMode::Avx2 {
                unsafe { asm_columns3(a, r, third, &m) }
            } else if self.0 == ColumnMode::Avx512Called {
                unsafe { columns3_avx512_called(a, r, third, &m) }
            } else {
                unsafe { columns3_avx2_called(a, r, third, &m) }
            };
            bits & (u32::MAX >> (32 - r))
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            // No `ColumnKernel` exists off x86-64 (`detect`, `avx2`, `avx512`).
            let _ = (words, base, r, third, m);
            unreachable!("no column kernel off x86-64")
        }
    }
}

/// A [`ColumnKernel`] bound to one result width `r` ([`ColumnKernel::for_width`]), for a
/// filter's lookups: the width was checked when it was made, so each query tests only that
/// the row's three blocks — with the third at `2r`, the farthest it can be — and the
/// kernel's group overshoot lie inside `words` (one compare, where [`ColumnKernel::columns3`]
/// makes four).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ColumnQuery {
    kernel: ColumnKernel,
    /// `1..=32`.
    r: u8,
    /// `2r` plus the words the kernel reads from the third block's start.
    reach: u8,
}

impl ColumnQuery {
    /// The kernel.
    pub fn kernel(self) -> ColumnKernel {
        self.kernel
    }

    /// The result width `r`.
    pub fn width(self) -> usize {
        usize::from(self.r)
    }

    /// [`ColumnKernel::columns3`] for this width with the third block at `2r`: the same
    /// value, or `None` (and nothing read) unless `base + 2r + group overshoot ≤
    /// words.len()`. A row that starts on a block boundary, whose third mask is 0, gets the
    /// value it has with the third block at `r` (the words under a zero mask add nothing),
    /// so a caller never chooses the offset per row.
    #[inline(always)]
    pub fn columns3(self, words: &[u64], base: usize, m: [u64; 3]) -> Option<u32> {
        // `base + reach ≤ len` as `base < (len + 1) − reach`, saturating at 0 (then no base
        // passes): one compare against a bound that does not depend on the row, which a loop
        // of lookups computes once (`len + 1` cannot overflow: a slice of u64 holds fewer
        // than usize::MAX elements).
        if base >= (words.len() + 1).saturating_sub(usize::from(self.reach)) {
            return None;
        }
        let r = usize::from(self.r);
        // SAFETY: `1 ≤ r ≤ 32` (`for_width`), the third block at `2r ≥ r`, and `base + 2r +
        // span = base + reach ≤ words.len()` (checked just above).
        Some(unsafe { self.kernel.run(words, base, r, 2 * r, m) })
    }
}

/// Parity nibble table: byte `i` (of each 16-byte half) is the parity of `i & 15`.
#[cfg(target_arch = "x86_64")]
const NIBBLE_PARITY: [u8; 32] = [
    0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, //
    0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0,
];

/// Low nibble of every byte.
#[cfg(target_arch = "x86_64")]
const LOW_NIBBLES: [u8; 32] = [0x0f; 32];

/// One round of [`asm_columns3`] as a template string: the parities of the four columns
/// at `{a}`, `{b}`, `{c}` plus `$at` (`""`, `" + 32"`, `" + rcx*8"`) as the four low bits of
/// the register `$out`. Uses ymm0–ymm1; the masks in ymm2–ymm4, the tables in ymm5–ymm6,
/// zero in ymm7.
#[cfg(target_arch = "x86_64")]
macro_rules! avx2_column_round {
    ($at:literal, $out:literal) => {
        concat!(
            "vpand ymm0, ymm2, [{a}",
            $at,
            "]\n",
            "vpand ymm1, ymm3, [{b}",
            $at,
            "]\n",
            "vpxor ymm0, ymm0, ymm1\n",
            "vpand ymm1, ymm4, [{c}",
            $at,
            "]\n",
            "vpxor ymm0, ymm0, ymm1\n",
            "vpsrlq ymm1, ymm0, 4\n",
            "vpxor ymm0, ymm0, ymm1\n",
            "vpand ymm0, ymm0, ymm6\n",
            "vpshufb ymm0, ymm5, ymm0\n",
            "vpsadbw ymm0, ymm0, ymm7\n",
            "vpsllq ymm0, ymm0, 63\n",
            "vmovmskpd ",
            $out,
            ", ymm0\n",
        )
    };
}

/// One round of [`asm_columns3_avx512`] as a template string: the parities of the eight
/// columns at `{a}`, `{b}`, `{c}` plus `$at` (`""`, `" + rcx*8"`), the masks broadcast from
/// `{m}`, as the eight low bits of the register `$out`. Uses zmm0–zmm1.
#[cfg(target_arch = "x86_64")]
macro_rules! avx512_column_round {
    ($at:literal, $out:literal) => {
        concat!(
            "vmovdqu64 zmm0, [{a}",
            $at,
            "]\n",
            "vpandq zmm0, zmm0, qword ptr [{m}]{{1to8}}\n",
            "vmovdqu64 zmm1, [{b}",
            $at,
            "]\n",
            "vpternlogq zmm0, zmm1, qword ptr [{m} + 8]{{1to8}}, 0x78\n",
            "vmovdqu64 zmm1, [{c}",
            $at,
            "]\n",
            "vpternlogq zmm0, zmm1, qword ptr [{m} + 16]{{1to8}}, 0x78\n",
            "vpopcntq zmm0, zmm0\n",
            "vpmovqb xmm0, zmm0\n",
            "vpsllq xmm0, xmm0, 7\n",
            "vpmovmskb ",
            $out,
            ", xmm0\n",
        )
    };
}

/// The shape shared by [`asm_columns3`] and [`asm_columns3_avx512`], as an expression giving
/// the `u32` of column parities: the `$first` templates (the unrolled first rounds, leaving
/// their bits in `{acc}`), then, past 8 columns, a loop of `$round` templates (columns
/// `8 + $step·i` on, their bits shifted in from `{t}`), then `vzeroupper`; the blocks at `a`,
/// `a + r` and `a + third`, the masks `m` at `{m}`, and `$extra` operands given after `{m}`.
/// Only reads memory; clobbers `ecx`, a scratch register and the flags besides the vector
/// registers.
///
/// # Safety
/// As the kernel's that uses it.
#[cfg(target_arch = "x86_64")]
macro_rules! columns3_asm {
    (
        [$($first:expr),+ $(,)?],
        $round:ident,
        $step:literal,
        ($a:ident, $r:ident, $third:ident, $m:ident),
        $($extra:tt)*
    ) => {{
        let acc: u32;
        crate::asm_then_vzeroupper!(
            $($first,)+
            "cmp {r}, 8",
            "jbe 3f",
            // columns 8 and up, `$step` per round
            "mov ecx, 8",
            "2:",
            $round!(" + rcx*8", "{t:e}"),
            "shl {t:e}, cl",
            "or {acc:e}, {t:e}",
            concat!("add ecx, ", $step),
            "cmp rcx, {r}",
            "jb 2b",
            "3:",
            "vzeroupper",
            m = in(reg) $m.as_ptr(),
            $($extra)*
            a = in(reg) $a,
            b = in(reg) $a.wrapping_add($r),
            c = in(reg) $a.wrapping_add($third),
            r = in(reg) $r,
            acc = out(reg) acc,
            t = out(reg) _,
            out("ecx") _,
            options(pure, readonly, nostack),
        );
        acc
    }};
}

/// The columns of a Ribbon query, four per round (the first two rounds unrolled, so `r ≤ 8`
/// runs straight-line code): the three blocks' words of columns
/// `j..j + 4` are three 32-byte loads ANDed with the broadcast masks and XORed; each byte's
/// parity comes from the nibble table (`vpshufb` on `y ^ (y >> 4)`), their sum per 64-bit
/// lane from `vpsadbw`, its low bit moved to the sign (`vpsllq 63`) and the four collected
/// by `vmovmskpd` into bits `j..j + 4`. Bits at and past `r` are unspecified.
///
/// # Safety
/// The CPU must support AVX2, and `4·ceil(r/4)` words must be readable at each of `a`,
/// `a + r` and `a + third`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn asm_columns3(a: *const u64, r: usize, third: usize, m: &[u64; 3]) -> u32 {
    // SAFETY: the caller guarantees AVX2 and the readable words; the tables are 32-byte
    // constants, `m` three words. The block only reads memory, uses no stack, and clobbers
    // xmm0–xmm7 (declared), `ecx`, a scratch register and the flags; `vzeroupper` clears the
    // upper halves it dirtied.
    unsafe {
        // asm!, not intrinsics: it inlines into a Ribbon lookup compiled without AVX2, where its
        // intrinsics twin (`columns3_avx2_called`) is a call per lookup, measured slower by
        // `cargo run --release -p bloomlab-lab --example ribbon_column_kernels -- 1e5 1e6`.
        columns3_asm!(
            [
                "vpbroadcastq ymm2, qword ptr [{m}]",
                "vpbroadcastq ymm3, qword ptr [{m} + 8]",
                "vpbroadcastq ymm4, qword ptr [{m} + 16]",
                "vmovdqu ymm5, [{table}]",
                "vmovdqu ymm6, [{nib}]",
                "vpxor xmm7, xmm7, xmm7",
                // columns 0–3
                avx2_column_round!("", "{acc:e}"),
                "cmp {r}, 4",
                "jbe 3f",
                // columns 4–7
                avx2_column_round!(" + 32", "{t:e}"),
                "shl {t:e}, 4",
                "or {acc:e}, {t:e}",
            ],
            avx2_column_round,
            "4",
            (a, r, third, m),
            table = in(reg) NIBBLE_PARITY.as_ptr(),
            nib = in(reg) LOW_NIBBLES.as_ptr(),
        )
    }
}

/// [`asm_columns3`] with AVX-512, eight columns per round (the first unrolled, so `r ≤ 8`
/// — every target down to 0.4 % — runs ten instructions of straight-line code): the three
/// blocks' words of columns `j..j + 8` are three 64-byte loads, combined as
/// `(a & m0) ^ (b & m1) ^ (c & m2)` by one AND and two three-input logic operations
/// (`vpternlogq`, function `A ^ (B & C)`) with the masks broadcast from memory; `vpopcntq`
/// counts each column's ones, `vpmovqb` keeps each count's low byte, and the parities (bit 0
/// of each byte, shifted to bit 7) are collected by `vpmovmskb` into bits `j..j + 8`. No
/// mask registers are used, so nothing outside the declared vector registers is touched.
/// Bits at and past `r` are unspecified.
///
/// # Safety
/// The CPU must support AVX-512F and AVX512_VPOPCNTDQ, and `8·ceil(r/8)` words must be
/// readable at each of `a`, `a + r` and `a + third`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn asm_columns3_avx512(a: *const u64, r: usize, third: usize, m: &[u64; 3]) -> u32 {
    // SAFETY: the caller guarantees the CPU features and the readable words; `m` is three
    // words, read with 8-byte broadcasts. The block only reads memory, uses no stack, and
    // clobbers zmm0–zmm1 (declared through their xmm names, which the compiler treats as the
    // same registers), `ecx`, a scratch register and the flags; `vzeroupper` clears the
    // upper parts of zmm0–zmm15 it dirtied, so the surrounding SSE code pays no transition
    // penalty.
    unsafe {
        // asm!, not intrinsics: it inlines into a Ribbon lookup compiled without AVX-512, where
        // its intrinsics twin (`columns3_avx512_called`) is a call per lookup, measured slower by
        // `cargo run --release -p bloomlab-lab --example ribbon_column_kernels -- 1e5 1e6`.
        columns3_asm!(
            // columns 0–7
            [avx512_column_round!("", "{acc:e}")],
            avx512_column_round,
            "8",
            (a, r, third, m),
        )
    }
}

/// [`asm_columns3`] in `#[target_feature]` intrinsics: the same steps, four columns per
/// round. Inlined only into callers compiled with AVX2; any other caller calls it.
///
/// # Safety
/// As [`asm_columns3`]'s.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn columns3_avx2_called(a: *const u64, r: usize, third: usize, m: &[u64; 3]) -> u32 {
    use core::arch::x86_64::*;
    let m = m.map(|w| _mm256_set1_epi64x(w as i64));
    // SAFETY: 32 readable bytes each.
    let (table, nibbles) = unsafe {
        (
            _mm256_loadu_si256(NIBBLE_PARITY.as_ptr().cast()),
            _mm256_loadu_si256(LOW_NIBBLES.as_ptr().cast()),
        )
    };
    let mut acc = 0;
    for j in (0..r).step_by(4) {
        // SAFETY: `j < r`, so words `j..j + 4` lie within the `4·ceil(r/4)` readable at each
        // block (the contract); unaligned loads.
        let [x, y, z] = [0, r, third].map(|o| unsafe { _mm256_loadu_si256(a.add(o + j).cast()) });
        let v = _mm256_xor_si256(
            _mm256_xor_si256(_mm256_and_si256(x, m[0]), _mm256_and_si256(y, m[1])),
            _mm256_and_si256(z, m[2]),
        );
        let t = _mm256_and_si256(_mm256_xor_si256(v, _mm256_srli_epi64::<4>(v)), nibbles);
        let sums = _mm256_sad_epu8(_mm256_shuffle_epi8(table, t), _mm256_setzero_si256());
        let bits = _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_slli_epi64::<63>(sums)));
        acc |= (bits as u32) << j;
    }
    acc
}

/// [`asm_columns3_avx512`] in `#[target_feature]` intrinsics: eight columns per round, their
/// population counts (`vpopcntq`) tested for an odd low bit (`vptestmq`) into bits
/// `j..j + 8`. Inlined only into callers compiled with those features; any other caller
/// calls it.
///
/// # Safety
/// As [`asm_columns3_avx512`]'s.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
unsafe fn columns3_avx512_called(a: *const u64, r: usize, third: usize, m: &[u64; 3]) -> u32 {
    use core::arch::x86_64::*;
    let m = m.map(|w| _mm512_set1_epi64(w as i64));
    let mut acc = 0;
    for j in (0..r).step_by(8) {
        // SAFETY: `j < r`, so words `j..j + 8` lie within the `8·ceil(r/8)` readable at each
        // block (the contract); unaligned loads.
        let [x, y, z] = [0, r, third].map(|o| unsafe { _mm512_loadu_epi64(a.add(o + j).cast()) });
        let v = _mm512_ternarylogic_epi64::<0x78>(_mm512_and_si512(x, m[0]), y, m[1]);
        let v = _mm512_ternarylogic_epi64::<0x78>(v, z, m[2]);
        let odd = _mm512_test_epi64_mask(_mm512_popcnt_epi64(v), _mm512_set1_epi64(1));
        acc |= u32::from(odd) << j;
    }
    acc
}

/// Work generic over the parity, run by [`run_parity`] with the best one this CPU has.
/// Write `run` `#[inline(always)]` so its whole body (a lookup: hash, row, the `r` columns;
/// or a batch's loop) is compiled inside the caller with the CPU's features enabled: no
/// call per column and no feature test per column.
pub trait ParityTask {
    /// What the work returns.
    type Output;
    /// Do the work with parity `p`.
    fn run<P: Parity>(self, p: P) -> Self::Output;
}

/// Run `task` with the best column kernel this CPU has: [`Avx2Parity`] compiled with AVX2
/// and `popcnt` enabled, else [`CountOnesParity`] compiled with `popcnt` enabled, else
/// [`PortableParity`]. One or two cached feature tests, then one direct call; all three
/// give the same answers. Built with those features enabled at compile time
/// (`-C target-cpu=native` on most x86_64 CPUs since 2013) the tests go away and the task
/// inlines into its caller.
///
/// ```
/// use bloomlab_simd::{self as simd, Parity, ParityTask};
///
/// struct Parities<'a>(&'a [u64]);
/// impl ParityTask for Parities<'_> {
///     type Output = u32;
///     #[inline(always)]
///     fn run<P: Parity>(self, p: P) -> u32 {
///         self.0.iter().enumerate().map(|(j, &x)| p.parity(x) << j).sum()
///     }
/// }
/// assert_eq!(simd::run_parity(Parities(&[1, 3, 7, 0xff])), 0b0101);
/// ```
#[inline(always)]
pub fn run_parity<T: ParityTask>(task: T) -> T::Output {
    #[cfg(target_arch = "x86_64")]
    {
        let level = if cfg!(all(target_feature = "avx2", target_feature = "popcnt")) {
            PARITY_AVX2
        } else {
            parity_level()
        };
        if level == PARITY_AVX2 {
            // SAFETY: the CPU has AVX2 and `popcnt` (`parity_level` found them, or the
            // compiler was promised them), the only requirement of this `#[target_feature]`
            // function.
            return unsafe { run_parity_avx2(task) };
        }
        if cfg!(target_feature = "popcnt") || level == PARITY_POPCNT {
            // SAFETY: as above, for `popcnt`.
            return unsafe { run_parity_popcnt(task) };
        }
    }
    task.run(PortableParity)
}

/// [`parity_level`]: not tested yet.
#[cfg(target_arch = "x86_64")]
const PARITY_UNKNOWN: u8 = 0;
/// [`parity_level`]: neither kernel.
#[cfg(target_arch = "x86_64")]
const PARITY_PORTABLE: u8 = 1;
/// [`parity_level`]: `popcnt`, no AVX2.
#[cfg(target_arch = "x86_64")]
const PARITY_POPCNT: u8 = 2;
/// [`parity_level`]: AVX2 and `popcnt`.
#[cfg(target_arch = "x86_64")]
const PARITY_AVX2: u8 = 3;

/// The kernel level found, cached: one relaxed load and one compare per lookup where two
/// `is_x86_feature_detected!` tests cost about seven instructions.
#[cfg(target_arch = "x86_64")]
static PARITY_LEVEL: core::sync::atomic::AtomicU8 =
    core::sync::atomic::AtomicU8::new(PARITY_UNKNOWN);

/// This CPU's kernel level (tested once, then cached in [`PARITY_LEVEL`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn parity_level() -> u8 {
    use core::sync::atomic::Ordering::Relaxed;
    let level = PARITY_LEVEL.load(Relaxed);
    if level != PARITY_UNKNOWN {
        return level;
    }
    #[cold]
    #[inline(never)]
    fn detect() -> u8 {
        let level = if has_avx2() && has_popcnt() {
            PARITY_AVX2
        } else if has_popcnt() {
            PARITY_POPCNT
        } else {
            PARITY_PORTABLE
        };
        PARITY_LEVEL.store(level, Relaxed);
        level
    }
    detect()
}

/// `task` with [`Avx2Parity`], compiled with AVX2 and `popcnt` enabled.
///
/// # Safety
/// The CPU must have AVX2 and `popcnt`.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx2,popcnt")]
unsafe fn run_parity_avx2<T: ParityTask>(task: T) -> T::Output {
    task.run(Avx2Parity(()))
}

/// `task` with [`CountOnesParity`], compiled with `popcnt` enabled.
///
/// # Safety
/// The CPU must have `popcnt`.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "popcnt")]
unsafe fn run_parity_popcnt<T: ParityTask>(task: T) -> T::Output {
    task.run(CountOnesParity)
}

#[cfg(test)]
mod tests;
