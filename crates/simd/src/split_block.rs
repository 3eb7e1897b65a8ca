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
    std::array::from_fn(|i| 1u32 << (h.wrapping_mul(salts[i]) >> 27))
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

/// The AVX2 kernels. Each requires a CPU with AVX2 (their only requirement beyond their
/// signatures: every pointer they read comes from a reference of the right size).
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

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
}
