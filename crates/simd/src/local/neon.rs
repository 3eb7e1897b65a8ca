//! The local-block lookup in NEON (aarch64), inlined into any caller: NEON is part of the
//! aarch64 baseline, so these functions need no `#[target_feature]` and no run-time test.
//!
//! Four probes per 128-bit vector: `x = h · M^i` lane-wise (`mul`), the probed 32-bit word
//! `x >> 28` (0–15), its bit `(x >> 23) & 31`. NEON has no 32-bit gather, but a table lookup
//! over four registers (`tbl` with `{v0–v3}`, 64 bytes: the whole line) fetches any sixteen
//! bytes: each lane's byte indices are `4·word + (0, 1, 2, 3)`, one multiply-add from the word
//! index. The masks are the `k` row of [`LANES`] (one in lanes `0..k`, zero past) shifted left
//! by each probe's bit (`ushl`); the misses are `mask & !word` (`bic`), ORed together and
//! reduced by one `umaxv`. No branch per probe, no loop over `k`.
//!
//! Inserts set the probes' bits with the unrolled scalar twin ([`insert`]): a vector cannot
//! scatter, and the line's new bits built in vector registers take more instructions than
//! the six to ten scalar `orr`s of the 1 % and 0.1 % targets.
//!
//! The kernels read the line as sixteen 32-bit words in memory order, which is the layout's
//! definition (bit `j` is bit `j & 31` of 32-bit word `j >> 5`) only on a little-endian CPU:
//! the module is compiled for little-endian aarch64 only.

use core::arch::aarch64::*;

use super::{LOCAL_POWERS, local_insert_scalar};

/// `LANES[k]`: `1` in lanes `0..min(k, 16)`, `0` in the others — the NEON kernels' mask row
/// for `k` probes (shifted left by each probe's bit, zero past `k`).
pub(crate) const LANES: [[u32; 16]; 17] = {
    let mut t = [[0u32; 16]; 17];
    let mut k = 0;
    while k < 17 {
        let mut i = 0;
        while i < k {
            t[k][i] = 1;
            i += 1;
        }
        k += 1;
    }
    t
};

/// `4·word + (0, 1, 2, 3)` in each 32-bit lane's bytes: the `tbl` indices of a lane's word.
const BYTE_OFFSETS: u32 = 0x0302_0100;

/// The misses of probes `4g..4g + 4` of `x0 = h` in the line `t`: nonzero lanes where a probe's
/// bit is clear (zero for lanes past `k`, whose mask row is zero).
#[inline(always)]
fn misses(t: uint8x16x4_t, h: uint32x4_t, g: usize, lanes: &[u32; 16]) -> uint32x4_t {
    // SAFETY: `LOCAL_POWERS` has 64 entries and `lanes` 16: four readable `u32`s at `4g`
    // for `g < 4` (the callers pass 0..2 or 0..4).
    let (pow, ones) = unsafe {
        (
            vld1q_u32(LOCAL_POWERS.as_ptr().add(4 * g)),
            vld1q_u32(lanes.as_ptr().add(4 * g)),
        )
    };
    // SAFETY: NEON is part of the aarch64 baseline (enabled at compile time on every aarch64
    // target this module builds for), the intrinsics' only requirement.
    unsafe {
        let x = vmulq_u32(h, pow);
        let word = vshrq_n_u32::<28>(x);
        let idx = vmlaq_n_u32(vdupq_n_u32(BYTE_OFFSETS), word, 0x0404_0404);
        let words = vreinterpretq_u32_u8(vqtbl4q_u8(t, vreinterpretq_u8_u32(idx)));
        let bit = vandq_u32(vshrq_n_u32::<23>(x), vdupq_n_u32(31));
        let mask = vshlq_u32(ones, vreinterpretq_s32_u32(bit));
        vbicq_u32(mask, words)
    }
}

/// The line as a four-register table.
#[inline(always)]
fn table(block: &[u64; 8]) -> uint8x16x4_t {
    // SAFETY: `block` is 64 readable bytes; `ld1` needs no alignment.
    unsafe { vld1q_u8_x4(block.as_ptr().cast::<u8>()) }
}

/// All `k ≤ 8` probes of `h` are set in `block` (`lanes` the [`LANES`] row of `k`):
/// [`local_contains_scalar`](super::local_contains_scalar)'s answer.
#[inline(always)]
pub(crate) fn contains_round1(block: &[u64; 8], h: u32, lanes: &[u32; 16]) -> bool {
    let t = table(block);
    // SAFETY: NEON is part of the aarch64 baseline (see `misses`).
    unsafe {
        let hv = vdupq_n_u32(h);
        let miss = vorrq_u32(misses(t, hv, 0, lanes), misses(t, hv, 1, lanes));
        vmaxvq_u32(miss) == 0
    }
}

/// All `k ≤ 16` probes of `h` are set in `block` (`lanes` the [`LANES`] row of `k`).
#[inline(always)]
pub(crate) fn contains_round2(block: &[u64; 8], h: u32, lanes: &[u32; 16]) -> bool {
    let t = table(block);
    // SAFETY: NEON is part of the aarch64 baseline (see `misses`).
    unsafe {
        let hv = vdupq_n_u32(h);
        let a = vorrq_u32(misses(t, hv, 0, lanes), misses(t, hv, 1, lanes));
        let b = vorrq_u32(misses(t, hv, 2, lanes), misses(t, hv, 3, lanes));
        vmaxvq_u32(vorrq_u32(a, b)) == 0
    }
}

/// Set the `k` probes of `h`: the scalar twin with `k` a constant per arm, so each arm is
/// unrolled (a vector cannot scatter the bits back into the line).
#[inline(always)]
pub(crate) fn insert(block: &mut [u64; 8], h: u32, k: u32) -> bool {
    super::insert_unrolled(block, h, k).unwrap_or_else(|| local_insert_scalar(block, h, k))
}
