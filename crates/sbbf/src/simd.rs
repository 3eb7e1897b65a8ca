//! The block kernels: one scalar definition (the specification, and the fallback) and an AVX2
//! version selected at run time. The only `unsafe` of the crate is here.
//!
//! A block is eight 32-bit lanes, exactly one AVX2 register: a key's mask is one vector
//! multiply of the broadcast lower hash half by the eight salts, one shift right by 27 and one
//! variable shift left of ones (`vpmulld`, `vpsrld`, `vpsllvd`); a lookup is one aligned
//! 32-byte load and `vptest` (all mask bits set ⇔ `mask & !block == 0`). The scalar version
//! compiles to eight multiply–shift–test chains.
//!
//! Dispatch: [`avx2_available`] is `is_x86_feature_detected!("avx2")` (a cached flag test
//! after the first call), or a compile-time `true` when the build enables AVX2. The tests
//! check the AVX2 and scalar kernels bit for bit against each other on random blocks and
//! hashes.

use crate::{Block, SALT};

/// The mask of a key: bit `(lo · SALT[i]) >> 27` set in word `i`, for the lower hash half `lo`.
#[inline(always)]
pub(crate) fn mask_scalar(lo: u32) -> [u32; 8] {
    let mut m = [0u32; 8];
    for (w, s) in m.iter_mut().zip(SALT) {
        *w = 1u32 << (lo.wrapping_mul(s) >> 27);
    }
    m
}

/// Scalar lookup: every mask bit is set in the block.
#[inline(always)]
pub(crate) fn contains_scalar(block: &Block, lo: u32) -> bool {
    let m = mask_scalar(lo);
    let mut missing = 0u32;
    for (w, b) in m.iter().zip(&block.0) {
        missing |= w & !b;
    }
    missing == 0
}

/// Scalar insert; returns whether some mask bit was still zero (the key was new).
#[inline(always)]
pub(crate) fn insert_scalar(block: &mut Block, lo: u32) -> bool {
    let m = mask_scalar(lo);
    let mut new = 0u32;
    for (w, b) in m.iter().zip(block.0.iter_mut()) {
        new |= w & !*b;
        *b |= w;
    }
    new != 0
}

/// Whether the AVX2 kernels may run on this CPU.
#[inline(always)]
pub(crate) fn avx2_available() -> bool {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    {
        true
    }
    #[cfg(all(target_arch = "x86_64", not(target_feature = "avx2")))]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Lookup with the best kernel this CPU has.
#[inline(always)]
pub(crate) fn contains(block: &Block, lo: u32) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx2_available() {
        // SAFETY: AVX2 is available (checked just above, or enabled for the whole build).
        return unsafe { avx2::contains(block, lo) };
    }
    contains_scalar(block, lo)
}

/// Insert with the best kernel this CPU has; returns whether the key was new.
#[inline(always)]
pub(crate) fn insert(block: &mut Block, lo: u32) -> bool {
    #[cfg(target_arch = "x86_64")]
    if avx2_available() {
        // SAFETY: AVX2 is available (checked just above, or enabled for the whole build).
        return unsafe { avx2::insert(block, lo) };
    }
    insert_scalar(block, lo)
}

/// Look up `hashes[i]` in `blocks[index(hashes[i])]` for every `i`, writing `out[i]`; the block
/// of key `i + ahead` is prefetched while key `i` is answered. `index` must return an in-range
/// block index (it is checked).
#[inline]
pub(crate) fn contains_many(
    blocks: &[Block],
    hashes: &[u64],
    out: &mut [bool],
    index: impl Fn(u64) -> usize,
    ahead: usize,
) {
    debug_assert_eq!(hashes.len(), out.len());
    for h in hashes.iter().take(ahead) {
        prefetch(&blocks[index(*h)]);
    }
    #[cfg(target_arch = "x86_64")]
    if avx2_available() {
        // SAFETY: AVX2 is available (checked just above, or enabled for the whole build).
        unsafe { avx2::contains_many(blocks, hashes, out, index, ahead) };
        return;
    }
    for (i, (h, o)) in hashes.iter().zip(out.iter_mut()).enumerate() {
        if let Some(next) = hashes.get(i + ahead) {
            prefetch(&blocks[index(*next)]);
        }
        *o = contains_scalar(&blocks[index(*h)], *h as u32);
    }
}

/// Ask the CPU to start loading the cache line holding `p` (a hint: no fault, no visible
/// effect).
#[inline(always)]
pub(crate) fn prefetch<T>(p: &T) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: `_mm_prefetch` needs SSE, enabled for this build (the `cfg` above). A
        // prefetch never dereferences in the language sense and cannot fault; `p` is a valid
        // reference anyway.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((p as *const T).cast::<i8>()) };
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    {
        let _ = p;
    }
}

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    use crate::{Block, SALT};

    /// The eight lane masks of `lo` in one register.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn mask(lo: u32) -> __m256i {
        let salts = _mm256_setr_epi32(
            SALT[0] as i32,
            SALT[1] as i32,
            SALT[2] as i32,
            SALT[3] as i32,
            SALT[4] as i32,
            SALT[5] as i32,
            SALT[6] as i32,
            SALT[7] as i32,
        );
        let product = _mm256_mullo_epi32(_mm256_set1_epi32(lo as i32), salts);
        _mm256_sllv_epi32(_mm256_set1_epi32(1), _mm256_srli_epi32::<27>(product))
    }

    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn contains(block: &Block, lo: u32) -> bool {
        // SAFETY: `Block` is `repr(C, align(32))` and 32 bytes long, so the pointer is valid
        // for an aligned 32-byte read; AVX2 is available (this function's contract).
        unsafe {
            let b = _mm256_load_si256((block as *const Block).cast::<__m256i>());
            _mm256_testc_si256(b, mask(lo)) != 0
        }
    }

    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn insert(block: &mut Block, lo: u32) -> bool {
        // SAFETY: `Block` is `repr(C, align(32))` and 32 bytes long and `block` is a unique
        // reference, so the pointer is valid for an aligned 32-byte read and write; AVX2 is
        // available (this function's contract).
        unsafe {
            let p = (block as *mut Block).cast::<__m256i>();
            let b = _mm256_load_si256(p);
            let m = mask(lo);
            let was_in = _mm256_testc_si256(b, m) != 0;
            _mm256_store_si256(p, _mm256_or_si256(b, m));
            !was_in
        }
    }

    /// The batched lookup loop compiled for AVX2 as a whole, so the kernel inlines into it.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn contains_many(
        blocks: &[Block],
        hashes: &[u64],
        out: &mut [bool],
        index: impl Fn(u64) -> usize,
        ahead: usize,
    ) {
        for (i, (h, o)) in hashes.iter().zip(out.iter_mut()).enumerate() {
            if let Some(next) = hashes.get(i + ahead) {
                super::prefetch(&blocks[index(*next)]);
            }
            // SAFETY: AVX2 is available (this function's contract).
            *o = unsafe { contains(&blocks[index(*h)], *h as u32) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn mask_sets_one_bit_per_word() {
        for lo in [0u32, 1, 0xdead_beef, u32::MAX] {
            assert!(mask_scalar(lo).iter().all(|w| w.is_power_of_two()));
        }
        // lo = 0: every product is 0, so bit 0 of every word.
        assert_eq!(mask_scalar(0), [1; 8]);
    }

    #[test]
    fn avx2_kernels_match_the_scalar_ones_bit_for_bit() {
        if !avx2_available() {
            eprintln!("no AVX2 on this CPU: only the scalar kernel exists here");
            return;
        }
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for round in 0..200_000 {
            // Sparse and dense random blocks, so both answers occur often.
            let density = [0.3, 0.7, 0.9, 0.97][round % 4];
            let mut block = Block::default();
            for w in block.0.iter_mut() {
                for bit in 0..32 {
                    if rng.random_bool(density) {
                        *w |= 1 << bit;
                    }
                }
            }
            let lo: u32 = rng.random();
            #[cfg(target_arch = "x86_64")]
            {
                // SAFETY: AVX2 was detected above.
                let fast = unsafe { avx2::contains(&block, lo) };
                assert_eq!(fast, contains_scalar(&block, lo), "{block:?} {lo:#x}");
                let (mut a, mut b) = (block, block);
                // SAFETY: AVX2 was detected above.
                let new_fast = unsafe { avx2::insert(&mut a, lo) };
                assert_eq!(new_fast, insert_scalar(&mut b, lo));
                assert_eq!(a, b);
            }
        }
    }

    #[test]
    fn batched_lookups_match_single_ones_on_both_paths() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let mut blocks = vec![Block::default(); 97];
        let index = |h: u64| (((h >> 32) * 97) >> 32) as usize;
        let members: Vec<u64> = (0..400).map(|_| rng.random()).collect();
        for h in &members {
            insert_scalar(&mut blocks[index(*h)], *h as u32);
        }
        let probes: Vec<u64> = members
            .iter()
            .copied()
            .chain((0..2000).map(|_| rng.random()))
            .collect();
        let mut out = vec![false; probes.len()];
        contains_many(&blocks, &probes, &mut out, index, 8);
        let mut positives = 0;
        for (h, o) in probes.iter().zip(&out) {
            assert_eq!(*o, contains_scalar(&blocks[index(*h)], *h as u32));
            positives += usize::from(*o);
        }
        assert!(positives >= members.len() && positives < probes.len());
    }
}
