//! The split-block rule of Parquet and Impala over a 256-bit block of eight `u32` words: word
//! `i` gets bit `(h · salt_i mod 2^32) >> 27`, so a key sets exactly one bit per word. The
//! portable functions (`*_scalar`, [`split_block_mask`]) are the definition; the AVX2 kernels
//! do the eight words in one vector (one load, one `vpmulld`, one shift, one variable shift,
//! one `vptest`).

use crate::has_avx2;

/// The eight odd multipliers of the Parquet split-block filter specification: word `i` of a
/// key's block gets bit `(x · PARQUET_SALTS[i]) >> 27`, `x` the lower 32 bits of the key's hash.
pub const PARQUET_SALTS: [u32; 8] = [
    0x47b6_137b,
    0x4497_4d91,
    0x8824_ad5b,
    0xa2b7_289d,
    0x7054_95c7,
    0x2df1_424b,
    0x9efc_4947,
    0x5c6b_fb31,
];

/// The eight one-bit masks a key with 32-bit hash `h` sets in a split block: word `i` gets
/// bit `(h · salts[i]) >> 27` (portable definition; also the insert's and lookup's masks).
#[inline]
pub fn split_block_mask(h: u32, salts: &[u32; 8]) -> [u32; 8] {
    core::array::from_fn(|i| 1u32 << (h.wrapping_mul(salts[i]) >> 27))
}

/// Every bit of [`split_block_mask`] is set in `block` (portable definition).
#[inline]
pub fn split_block_contains_scalar(block: &[u32; 8], h: u32, salts: &[u32; 8]) -> bool {
    let m = split_block_mask(h, salts);
    block
        .iter()
        .zip(&m)
        .fold(true, |acc, (b, m)| acc & (b & m == *m))
}

/// OR [`split_block_mask`] into `block` (portable definition).
#[inline]
pub fn split_block_insert_scalar(block: &mut [u32; 8], h: u32, salts: &[u32; 8]) {
    let m = split_block_mask(h, salts);
    for (b, m) in block.iter_mut().zip(m) {
        *b |= m;
    }
}

/// [`split_block_contains_scalar`], with AVX2 when the CPU has it (same answer).
#[inline]
pub fn split_block_contains(block: &[u32; 8], h: u32, salts: &[u32; 8]) -> bool {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of this
        // `#[target_feature(enable = "avx2")]` function beyond its safe signature.
        return unsafe { avx2::split_block_contains(block, h, salts) };
    }
    split_block_contains_scalar(block, h, salts)
}

/// [`split_block_insert_scalar`], with AVX2 when the CPU has it (same block).
#[inline]
pub fn split_block_insert(block: &mut [u32; 8], h: u32, salts: &[u32; 8]) {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of this
        // `#[target_feature(enable = "avx2")]` function beyond its safe signature.
        return unsafe { avx2::split_block_insert(block, h, salts) };
    }
    split_block_insert_scalar(block, h, salts)
}

// ---------------------------------------------------------------------------------------
// Choosing the path once
// ---------------------------------------------------------------------------------------

/// Proof that this CPU runs AVX2, obtainable only from [`SplitBlockAvx2::detect`]. A filter
/// that keeps one chooses its path once, at construction, and each lookup is then a direct
/// call of the AVX2 kernel: no feature test per call (the entry points above test std's
/// cached flag every time, two loads and a branch that the compiler cannot hoist out of a
/// caller's loop, a measurable share of a lookup in cache).
///
/// ```
/// use bloomlab_simd::{self as simd, SplitBlockAvx2};
///
/// const SALTS: [u32; 8] = [1, 3, 5, 7, 9, 11, 13, 15];
/// let mut block = [0u32; 8];
/// if let Some(avx2) = SplitBlockAvx2::detect() {
///     avx2.insert(&mut block, 42, &SALTS);
///     assert!(avx2.contains(&block, 42, &SALTS));
/// }
/// simd::split_block_insert_scalar(&mut block, 42, &SALTS);
/// assert!(simd::split_block_contains_scalar(&block, 42, &SALTS));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitBlockAvx2(());

impl SplitBlockAvx2 {
    /// `Some` when this CPU has AVX2.
    pub fn detect() -> Option<Self> {
        has_avx2().then_some(SplitBlockAvx2(()))
    }

    /// [`split_block_contains_scalar`], in one vector.
    #[inline(always)]
    pub fn contains(self, block: &[u32; 8], h: u32, salts: &[u32; 8]) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: a `SplitBlockAvx2` exists only when `detect` found AVX2 on this CPU.
            unsafe { avx2::split_block_contains(block, h, salts) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            split_block_contains_scalar(block, h, salts)
        }
    }

    /// Lookup of a 64-bit hash in a whole split-block table: block
    /// `((h >> 32) · blocks.len()) >> 32` (Parquet's block choice; meant for tables of at most
    /// 2^32 blocks, where it is always in range — past that the product wraps and a lookup
    /// that lands outside answers `false`), then [`contains`](Self::contains) with
    /// `h as u32`. The index is computed inside the AVX2 function, so a caller's loop makes
    /// one call per lookup and keeps nothing live across it.
    #[inline(always)]
    pub fn table_contains<B: AsRef<[u32; 8]>>(
        self,
        blocks: &[B],
        h: u64,
        salts: &[u32; 8],
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: a `SplitBlockAvx2` exists only when `detect` found AVX2 on this CPU.
            unsafe { avx2::split_table_contains(blocks, h, salts) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let i = ((h >> 32).wrapping_mul(blocks.len() as u64) >> 32) as usize;
            blocks
                .get(i)
                .is_some_and(|b| split_block_contains_scalar(b.as_ref(), h as u32, salts))
        }
    }

    /// [`split_block_insert_scalar`], in one vector.
    #[inline(always)]
    pub fn insert(self, block: &mut [u32; 8], h: u32, salts: &[u32; 8]) {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: a `SplitBlockAvx2` exists only when `detect` found AVX2 on this CPU.
            unsafe { avx2::split_block_insert(block, h, salts) }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            split_block_insert_scalar(block, h, salts)
        }
    }
}

/// The split-block kernel a filter chose once, at construction, for this CPU: AVX2 on x86-64
/// (the lookup as inline assembly, so it inlines into a caller compiled without AVX2: no call
/// per key), NEON on little-endian aarch64 (part of its baseline: plain inline functions), the
/// portable definition elsewhere. Same blocks and answers on every path.
///
/// ```
/// use bloomlab_simd::{self as simd, SplitBlockKernel, PARQUET_SALTS};
///
/// let kernel = SplitBlockKernel::detect();
/// let mut block = [0u32; 8];
/// kernel.insert(&mut block, 42, &PARQUET_SALTS);
/// assert_eq!(block, simd::split_block_mask(42, &PARQUET_SALTS));
/// assert!(kernel.contains(&block, 42, &PARQUET_SALTS));
/// assert!(SplitBlockKernel::Portable.contains(&block, 42, &PARQUET_SALTS));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitBlockKernel {
    /// AVX2 (x86-64).
    Avx2(SplitBlockAvx2),
    /// NEON (little-endian aarch64).
    #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
    Neon,
    /// The portable definition ([`split_block_contains_scalar`], [`split_block_insert_scalar`]).
    Portable,
}

impl SplitBlockKernel {
    /// The fastest kernel this CPU runs.
    pub fn detect() -> Self {
        #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
        {
            SplitBlockKernel::Neon
        }
        #[cfg(not(all(target_arch = "aarch64", target_endian = "little")))]
        {
            SplitBlockAvx2::detect().map_or(SplitBlockKernel::Portable, SplitBlockKernel::Avx2)
        }
    }

    /// `"avx2"`, `"neon"` or `"portable"`.
    pub fn name(self) -> &'static str {
        match self {
            SplitBlockKernel::Avx2(_) => "avx2",
            #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
            SplitBlockKernel::Neon => "neon",
            SplitBlockKernel::Portable => "portable",
        }
    }

    /// [`split_block_contains_scalar`]'s answer, inlined into the caller.
    #[inline(always)]
    pub fn contains(self, block: &[u32; 8], h: u32, salts: &[u32; 8]) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: a `SplitBlockAvx2` exists only when `detect` found AVX2 on this CPU.
            SplitBlockKernel::Avx2(_) => unsafe { asm_split_contains(block, h, salts) },
            #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
            SplitBlockKernel::Neon => neon::split_contains(block, h, salts),
            _ => split_block_contains_scalar(block, h, salts),
        }
    }

    /// [`split_block_insert_scalar`]'s block.
    #[inline(always)]
    pub fn insert(self, block: &mut [u32; 8], h: u32, salts: &[u32; 8]) {
        match self {
            SplitBlockKernel::Avx2(avx2) => avx2.insert(block, h, salts),
            #[cfg(all(target_arch = "aarch64", target_endian = "little"))]
            SplitBlockKernel::Neon => neon::split_insert(block, h, salts),
            SplitBlockKernel::Portable => split_block_insert_scalar(block, h, salts),
        }
    }
}

/// The AVX2 lookup as inline assembly: the salts times `h` (`vpmulld`), their top five bits
/// (`vpsrld`) as the shifts of a row of ones (`vpsllvd`), one `vptest` against the block.
/// Eight instructions and the `vzeroupper` that keeps the caller's SSE code free of
/// transition stalls; inlined wherever it is called, where the intrinsics twin
/// (`avx2::split_block_contains`) is a call per key from code compiled without AVX2.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn asm_split_contains(block: &[u32; 8], h: u32, salts: &[u32; 8]) -> bool {
    /// Eight lanes of one.
    const ONES: [u32; 8] = [1; 8];
    let hit: u8;
    // SAFETY: the caller guarantees AVX2. Every address read is inside a live reference:
    // `block`, `salts` and `ONES` are 32 bytes each (unaligned loads). The block only reads
    // memory, uses no stack, clobbers xmm0–xmm15 (declared by the macro) and the flags, and
    // ends with `vzeroupper`.
    unsafe {
        crate::asm_then_vzeroupper!(
            "vmovd xmm0, {h:e}",
            "vpbroadcastd ymm0, xmm0",
            "vpmulld ymm0, ymm0, [{salts}]",
            "vpsrld ymm0, ymm0, 27",
            "vmovdqu ymm1, [{ones}]",
            "vpsllvd ymm0, ymm1, ymm0",
            "vmovdqu ymm1, [{blk}]",
            "vptest ymm1, ymm0",
            "setc {hit}",
            "vzeroupper",
            h = in(reg) h,
            salts = in(reg) salts.as_ptr(),
            ones = in(reg) ONES.as_ptr(),
            blk = in(reg) block.as_ptr(),
            hit = out(reg_byte) hit,
            options(pure, readonly),
        );
    }
    // SAFETY: `setc` wrote 0 or 1 to the byte.
    unsafe { crate::flag_to_bool(hit) }
}

/// The NEON kernels: the eight words as two 128-bit vectors.
#[cfg(all(target_arch = "aarch64", target_endian = "little"))]
mod neon {
    use core::arch::aarch64::*;

    /// The masks of `h` in words 0–3 and 4–7.
    #[inline(always)]
    fn masks(h: u32, salts: &[u32; 8]) -> (uint32x4_t, uint32x4_t) {
        // SAFETY: `salts` is eight readable `u32`s; NEON is part of the aarch64 baseline
        // (enabled at compile time), the intrinsics' only other requirement.
        unsafe {
            let hv = vdupq_n_u32(h);
            let one = vdupq_n_u32(1);
            let x0 = vmulq_u32(hv, vld1q_u32(salts.as_ptr()));
            let x1 = vmulq_u32(hv, vld1q_u32(salts.as_ptr().add(4)));
            (
                vshlq_u32(one, vreinterpretq_s32_u32(vshrq_n_u32::<27>(x0))),
                vshlq_u32(one, vreinterpretq_s32_u32(vshrq_n_u32::<27>(x1))),
            )
        }
    }

    /// [`split_block_contains_scalar`](super::split_block_contains_scalar)'s answer.
    #[inline(always)]
    pub(super) fn split_contains(block: &[u32; 8], h: u32, salts: &[u32; 8]) -> bool {
        let (m0, m1) = masks(h, salts);
        // SAFETY: `block` is eight readable `u32`s; NEON as in `masks`.
        unsafe {
            let b0 = vld1q_u32(block.as_ptr());
            let b1 = vld1q_u32(block.as_ptr().add(4));
            vmaxvq_u32(vorrq_u32(vbicq_u32(m0, b0), vbicq_u32(m1, b1))) == 0
        }
    }

    /// [`split_block_insert_scalar`](super::split_block_insert_scalar)'s block.
    #[inline(always)]
    pub(super) fn split_insert(block: &mut [u32; 8], h: u32, salts: &[u32; 8]) {
        let (m0, m1) = masks(h, salts);
        let p = block.as_mut_ptr();
        // SAFETY: `block` is eight readable and writable `u32`s (a unique reference); NEON as
        // in `masks`.
        unsafe {
            vst1q_u32(p, vorrq_u32(vld1q_u32(p), m0));
            vst1q_u32(p.add(4), vorrq_u32(vld1q_u32(p.add(4)), m1));
        }
    }
}

/// The AVX2 kernels. Each requires a CPU with AVX2 (their only requirement beyond their
/// signatures: every pointer they read comes from a reference of the right size).
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use core::arch::x86_64::*;

    /// The eight split-block masks of `h` as one vector.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn split_mask(h: u32, salts: &[u32; 8]) -> __m256i {
        // SAFETY: `salts` is 32 readable bytes; unaligned load.
        let s = unsafe { _mm256_loadu_si256(salts.as_ptr().cast()) };
        let x = _mm256_mullo_epi32(_mm256_set1_epi32(h as i32), s);
        _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_srli_epi32::<27>(x))
    }

    /// [`split_block_contains_scalar`](super::split_block_contains_scalar) in one vector.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub unsafe fn split_block_contains(block: &[u32; 8], h: u32, salts: &[u32; 8]) -> bool {
        // SAFETY: `block` is 32 readable bytes; unaligned load. AVX2 is enabled here.
        let (b, m) = unsafe {
            (
                _mm256_loadu_si256(block.as_ptr().cast()),
                split_mask(h, salts),
            )
        };
        _mm256_testc_si256(b, m) != 0
    }

    /// [`SplitBlockAvx2::table_contains`](super::SplitBlockAvx2::table_contains).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub unsafe fn split_table_contains<B: AsRef<[u32; 8]>>(
        blocks: &[B],
        h: u64,
        salts: &[u32; 8],
    ) -> bool {
        let i = ((h >> 32).wrapping_mul(blocks.len() as u64) >> 32) as usize;
        match blocks.get(i) {
            // SAFETY: AVX2 is enabled here (this function's contract).
            Some(b) => unsafe { split_block_contains(b.as_ref(), h as u32, salts) },
            None => false,
        }
    }

    /// [`split_block_insert_scalar`](super::split_block_insert_scalar) in one vector.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub unsafe fn split_block_insert(block: &mut [u32; 8], h: u32, salts: &[u32; 8]) {
        let p = block.as_mut_ptr().cast::<__m256i>();
        // SAFETY: `block` is 32 readable and writable bytes (a unique reference); unaligned
        // load and store. AVX2 is enabled here.
        unsafe {
            let m = split_mask(h, salts);
            _mm256_storeu_si256(p, _mm256_or_si256(_mm256_loadu_si256(p), m));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::mix;

    /// The Parquet salts.
    const SALTS: [u32; 8] = PARQUET_SALTS;

    #[test]
    fn split_block_sets_one_bit_per_word() {
        let mut x = 3u64;
        let mut block = [0u32; 8];
        let h = mix(&mut x) as u32;
        split_block_insert(&mut block, h, &SALTS);
        assert!(block.iter().all(|w| w.count_ones() == 1));
        assert_eq!(block, split_block_mask(h, &SALTS));
        assert!(split_block_contains(&block, h, &SALTS));
        for _ in 0..1000 {
            let h = mix(&mut x) as u32;
            split_block_insert(&mut block, h, &SALTS);
            assert!(split_block_contains(&block, h, &SALTS));
            let q = mix(&mut x) as u32;
            assert_eq!(
                split_block_contains(&block, q, &SALTS),
                split_block_contains_scalar(&block, q, &SALTS)
            );
        }
        // Bit (h · salt) >> 27 for h = 1 is the salt's top five bits.
        assert_eq!(split_block_mask(1, &SALTS)[0], 1 << (0x47b6_137bu32 >> 27));
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_kernels_agree_with_the_scalar_definition() {
        if !crate::testing::runs("avx2") {
            return;
        }
        let mut x = 11u64;
        for _ in 0..10 {
            let mut s = [0u32; 8];
            let mut t = [0u32; 8];
            for _ in 0..40 {
                let h = mix(&mut x) as u32;
                // SAFETY: as above.
                unsafe { avx2::split_block_insert(&mut s, h, &SALTS) };
                split_block_insert_scalar(&mut t, h, &SALTS);
                assert_eq!(s, t);
                let q = mix(&mut x) as u32;
                // SAFETY: as above.
                let got = unsafe { avx2::split_block_contains(&s, q, &SALTS) };
                assert_eq!(got, split_block_contains_scalar(&t, q, &SALTS));
            }
        }
    }

    #[test]
    fn the_chosen_kernel_and_the_portable_one_agree() {
        let kernel = SplitBlockKernel::detect();
        let want = if crate::testing::runs("avx2") {
            "avx2"
        } else if crate::testing::runs("neon") {
            "neon"
        } else {
            "portable"
        };
        assert_eq!(kernel.name(), want);
        let mut x = 29u64;
        for _ in 0..20 {
            let (mut s, mut t) = ([0u32; 8], [0u32; 8]);
            for _ in 0..30 {
                let h = mix(&mut x) as u32;
                kernel.insert(&mut s, h, &SALTS);
                SplitBlockKernel::Portable.insert(&mut t, h, &SALTS);
                split_block_insert_scalar(&mut t, h, &SALTS);
                assert_eq!(s, t);
                assert!(kernel.contains(&s, h, &SALTS));
                let q = mix(&mut x) as u32;
                let want = split_block_contains_scalar(&t, q, &SALTS);
                assert_eq!(kernel.contains(&s, q, &SALTS), want);
                assert_eq!(SplitBlockKernel::Portable.contains(&s, q, &SALTS), want);
                // One of the key's eight bits cleared: absent, whichever word.
                let m = split_block_mask(q, &SALTS);
                let mut only = m;
                only[(q % 8) as usize] = 0;
                assert!(!kernel.contains(&only, q, &SALTS));
                assert!(kernel.contains(&m, q, &SALTS));
            }
        }
    }
}
