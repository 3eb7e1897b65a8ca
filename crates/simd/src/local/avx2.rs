//! The local-block kernels in AVX2 intrinsics (8 × 32-bit lanes), out of line: what
//! [`run_local`](crate::run_local) inlines into a batch compiled with AVX2 enabled. Every
//! function requires a CPU with AVX2 (check [`crate::has_avx2`] first); that is their only
//! safety requirement (every pointer they read comes from a reference of the right size).
use core::arch::x86_64::*;

use super::{LOCAL_MAX_PROBES, LOCAL_POWERS};

/// `LANE_MASKS[a]`: lanes `0..a` all ones, the others zero (`a` in `0..=8`).
const LANE_MASKS: [[i32; 8]; 9] = {
    let mut t = [[0i32; 8]; 9];
    let mut a = 0;
    while a <= 8 {
        let mut i = 0;
        while i < a {
            t[a][i] = -1;
            i += 1;
        }
        a += 1;
    }
    t
};

/// Lanes `0..active` all ones, the others zero (`active` ≥ 8 keeps every lane).
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn first_lanes(active: u32) -> __m256i {
    let row = &LANE_MASKS[active.min(8) as usize];
    // SAFETY: `row` is 32 readable bytes; unaligned load.
    unsafe { _mm256_loadu_si256(row.as_ptr().cast()) }
}

/// The products `h · M^i` of probes `8·round..` of `h` (the top 9 bits of each are its
/// bit position, `0..512`), and the lanes mask: all ones in the lanes below `k`, zero at
/// or past it.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn local_positions(h: __m256i, round: usize, k: u32) -> (__m256i, __m256i) {
    // SAFETY: `round < 8` (callers loop while 8·round < k ≤ 64), so the eight `u32`s at
    // `8·round..8·round + 8` lie inside the 64-entry `LOCAL_POWERS`; unaligned load.
    let powers = unsafe { _mm256_loadu_si256(LOCAL_POWERS.as_ptr().add(8 * round).cast()) };
    let x = _mm256_mullo_epi32(h, powers);
    // SAFETY: AVX2 is enabled in this function.
    let active = unsafe { first_lanes(k - 8 * round as u32) };
    (x, active)
}

/// Eight probes of `h` starting at probe `8·round`: the products `h · M^i` (whose top 4
/// bits are the 32-bit word, `0..16`, of each probe) and the one-bit mask inside that
/// word (zero for lanes at or past `k`).
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn local_round(h: __m256i, round: usize, k: u32) -> (__m256i, __m256i) {
    // SAFETY: AVX2 is enabled in this function; the caller keeps `8·round < k ≤ 64`.
    let (x, active) = unsafe { local_positions(h, round, k) };
    let bit = _mm256_and_si256(_mm256_srli_epi32::<23>(x), _mm256_set1_epi32(31));
    let mask = _mm256_and_si256(_mm256_sllv_epi32(_mm256_set1_epi32(1), bit), active);
    (x, mask)
}

/// The probed 32-bit word of each lane: word `x[i] >> 28` (`0..16`) of the 512-bit block
/// held as `lo` (words 0..8) and `hi` (words 8..16).
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn gather16(lo: __m256i, hi: __m256i, x: __m256i) -> __m256i {
    let idx = _mm256_srli_epi32::<28>(x);
    let from_lo = _mm256_permutevar8x32_epi32(lo, idx); // uses idx & 7
    let from_hi = _mm256_permutevar8x32_epi32(hi, idx);
    // The sign bit of x is bit 3 of the word index: the high half. `blendvps` selects
    // each 32-bit lane by its sign bit, so x is the selector as it stands (no shift).
    _mm256_castps_si256(_mm256_blendv_ps(
        _mm256_castsi256_ps(from_lo),
        _mm256_castsi256_ps(from_hi),
        _mm256_castsi256_ps(x),
    ))
}

/// [`local_contains_scalar`](super::local_contains_scalar) with eight probes per vector.
///
/// # Safety
/// The CPU must support AVX2.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn local_contains(block: &[u64; 8], h: u32, k: u32) -> bool {
    if k <= 8 {
        // SAFETY: AVX2 is enabled in this function. (k = 0 is clamped to 1, as on the
        // scalar path.)
        return unsafe { local_contains_upto8(block, h, k.max(1)) };
    }
    let k = k.min(LOCAL_MAX_PROBES);
    let p = block.as_ptr().cast::<__m256i>();
    // SAFETY: `block` is 64 readable bytes; the two unaligned loads read bytes 0..32 and
    // 32..64 of it.
    let (lo, hi) = unsafe { (_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1))) };
    let hv = _mm256_set1_epi32(h as i32);
    // SAFETY (all calls below): AVX2 is enabled in this function; `8·round < k ≤ 64`.
    let (x, mask) = unsafe { local_round(hv, 0, k) };
    let first = _mm256_testc_si256(unsafe { gather16(lo, hi, x) }, mask) != 0;
    if k <= 8 || !first {
        return first;
    }
    let mut round = 1;
    while 8 * (round as u32) < k {
        let (x, mask) = unsafe { local_round(hv, round, k) };
        if _mm256_testc_si256(unsafe { gather16(lo, hi, x) }, mask) == 0 {
            return false;
        }
        round += 1;
    }
    true
}

/// [`local_contains`] for `1 ≤ k ≤ 8` (one vector, no loop).
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn local_contains_upto8(block: &[u64; 8], h: u32, k: u32) -> bool {
    let p = block.as_ptr().cast::<__m256i>();
    // SAFETY: `block` is 64 readable bytes; the two unaligned loads read bytes 0..32 and
    // 32..64 of it.
    let (lo, hi) = unsafe { (_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1))) };
    // SAFETY (both calls): AVX2 is enabled in this function; round 0 < k or k = 0, where
    // `first_lanes(0)` masks every lane off.
    let (x, mask) = unsafe { local_round(_mm256_set1_epi32(h as i32), 0, k) };
    _mm256_testc_si256(unsafe { gather16(lo, hi, x) }, mask) != 0
}

/// [`local_insert_scalar`](super::local_insert_scalar), the way the inline kernels do it
/// (`asm_insert_round1_l2`): the line's new bits built in two vectors (words 0–7 and
/// 8–15) — for each probe, its position `x >> 23` broadcast, subtracted from each word's
/// last bit index, the top bit shifted right by the difference — then ORed into the line
/// with two loads and two stores; "was any bit new" is `new & !line`. Each round of eight
/// probes takes the lanes it uses, rounded up to even; the lanes past `k` are forced to
/// position `2^32 − 1`, which sets no bit. Beyond sixteen probes the masks are ORed
/// into the line's words one by one instead (`local_insert_ors`).
///
/// # Safety
/// The CPU must support AVX2.
#[inline]
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn local_insert(block: &mut [u64; 8], h: u32, k: u32) -> bool {
    let k = k.clamp(1, LOCAL_MAX_PROBES);
    if k > 16 {
        // SAFETY: AVX2 is enabled in this function, and `k ≤ 64` (clamped above).
        return unsafe { local_insert_ors(block, h, k) };
    }
    let hv = _mm256_set1_epi32(h as i32);
    // Each word's last bit index, 32·j + 31, and the top bit.
    let tops_lo = _mm256_setr_epi32(31, 63, 95, 127, 159, 191, 223, 255);
    let tops_hi = _mm256_add_epi32(tops_lo, _mm256_set1_epi32(256));
    let top = _mm256_set1_epi32(i32::MIN);
    let (mut new_lo, mut new_hi) = (_mm256_setzero_si256(), _mm256_setzero_si256());
    let mut round = 0;
    while 8 * (round as u32) < k {
        // SAFETY: AVX2 is enabled here, and `8·round < k ≤ 64`.
        let (x, active) = unsafe { local_positions(hv, round, k) };
        let none = _mm256_andnot_si256(active, _mm256_set1_epi32(-1));
        let pos = _mm256_or_si256(_mm256_srli_epi32::<23>(x), none);
        let mut at = [0u32; 8];
        // SAFETY: `at` is 32 writable bytes; unaligned store.
        unsafe { _mm256_storeu_si256(at.as_mut_ptr().cast(), pos) };
        let used = (k - 8 * round as u32).min(8).div_ceil(2) as usize * 2;
        for &p in &at[..used] {
            let p = _mm256_set1_epi32(p as i32);
            new_lo = _mm256_or_si256(new_lo, _mm256_srlv_epi32(top, _mm256_sub_epi32(tops_lo, p)));
            new_hi = _mm256_or_si256(new_hi, _mm256_srlv_epi32(top, _mm256_sub_epi32(tops_hi, p)));
        }
        round += 1;
    }
    let p = block.as_mut_ptr().cast::<__m256i>();
    // SAFETY: `block` is 64 readable and writable bytes, a unique reference; the
    // unaligned loads and stores cover bytes 0..32 and 32..64 of it. On x86
    // (little-endian) 32-bit word `j` of the two vectors is bits `32j..32j + 32` of the
    // block — the layout's definition.
    unsafe {
        let (lo, hi) = (_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1)));
        let missing = _mm256_or_si256(
            _mm256_andnot_si256(lo, new_lo),
            _mm256_andnot_si256(hi, new_hi),
        );
        _mm256_storeu_si256(p, _mm256_or_si256(lo, new_lo));
        _mm256_storeu_si256(p.add(1), _mm256_or_si256(hi, new_hi));
        _mm256_testz_si256(missing, missing) == 0
    }
}

/// [`local_insert`] for `k > 16`: each round of eight probes computes its word indices
/// and one-bit masks in one vector (multiply, two shifts, a variable shift) and tests them
/// against the loaded block as a lookup does (whether any bit is new); then the eight masks
/// (zero past `k`) are ORed into their 32-bit words. At `k = 24` building the new bits in
/// registers instead (seven instructions a probe) measured the same within the
/// noise of `examples/block_kernels.rs -- 24` (Zen 3 VM: between processes of one build
/// the insert ratios moved by 30 % in cache and 25 % at 10^7), so beyond sixteen probes
/// this loop stays.
///
/// # Safety
/// The CPU must support AVX2, and `k ≤ 64`.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn local_insert_ors(block: &mut [u64; 8], h: u32, k: u32) -> bool {
    let hv = _mm256_set1_epi32(h as i32);
    let mut new = false;
    let mut round = 0;
    while 8 * (round as u32) < k {
        let p = block.as_ptr().cast::<__m256i>();
        // SAFETY: `block` is 64 readable bytes; the two unaligned loads read bytes 0..32
        // and 32..64 of it. AVX2 is enabled here, and `8·round < k ≤ 64`.
        let (lo, hi) = unsafe { (_mm256_loadu_si256(p), _mm256_loadu_si256(p.add(1))) };
        let (x, mask) = unsafe { local_round(hv, round, k) };
        new |= _mm256_testc_si256(unsafe { gather16(lo, hi, x) }, mask) == 0;
        let (mut words, mut masks) = ([0u32; 8], [0u32; 8]);
        // SAFETY: both arrays are 32 writable bytes; unaligned stores.
        unsafe {
            _mm256_storeu_si256(words.as_mut_ptr().cast(), _mm256_srli_epi32::<28>(x));
            _mm256_storeu_si256(masks.as_mut_ptr().cast(), mask);
        }
        // SAFETY: `[u64; 8]` and `[u32; 16]` have the same size, `u32`'s alignment is
        // below `u64`'s, every bit pattern is valid for both, and `block` is a unique
        // reference for the lifetime of `w32`. On x86 (little-endian) 32-bit word `j` is
        // bits `32j..32j + 32` of the block, the layout's definition.
        let w32 = unsafe { &mut *(block as *mut [u64; 8]).cast::<[u32; 16]>() };
        // All eight lanes, branch-free: lanes at or past `k` carry a zero mask.
        for lane in 0..8 {
            w32[(words[lane] & 15) as usize] |= masks[lane];
        }
        round += 1;
    }
    new
}
