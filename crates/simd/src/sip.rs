//! SipHash-2-4 of eight 8-byte messages at once, one message per 64-bit lane.
//!
//! A keyed filter's batched operations hash many short keys under one secret. One SipHash-2-4
//! of an 8-byte message is eight SipRounds of 14 additions, rotations and xors, all on one
//! message's four state words; scalar code runs it at about four operations a cycle, so a
//! batch pays roughly 30 cycles of hashing per key however far ahead it hashes. The eight
//! messages of a chunk share the key and every step, so each state word can be a vector of
//! eight lanes: with AVX-512 (`vprolq` rotates in one instruction) a chunk costs the
//! instructions of one message, 126 in all; with AVX2 (two four-lane halves, rotations as
//! two shifts and an `or`, or a byte shuffle for 16 and 32 bits) about 150 per half.
//!
//! [`sip24_x8`] picks the widest path the CPU runs; [`sip24_x8_portable`] is the definition
//! (per lane: the SipHash-2-4 of the message's 8 little-endian bytes, 64-bit output, the
//! reference implementation's algorithm for a one-block message), tested against the
//! `siphasher` crate; the vector paths are tested against it on random keys and messages.
//! No crate offers lane-parallel SipHash for many short messages, so the rounds are written
//! here, in the same module as the workspace's other vector kernels.

/// SipHash's initial state constants ("somepseudorandomlygeneratedbytes").
const INIT: [u64; 4] = [
    0x736f_6d65_7073_6575,
    0x646f_7261_6e64_6f6d,
    0x6c79_6765_6e65_7261,
    0x7465_6462_7974_6573,
];

/// The final block of an 8-byte message: no tail bytes, the length (8) in the top byte.
const LENGTH_BLOCK: u64 = 8 << 56;

/// One SipRound on `v` (Aumasson & Bernstein 2012, §2.2).
#[inline(always)]
fn round(v: &mut [u64; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[2] = v[2].wrapping_add(v[3]);
    v[1] = v[1].rotate_left(13) ^ v[0];
    v[3] = v[3].rotate_left(16) ^ v[2];
    v[0] = v[0].rotate_left(32);
    v[2] = v[2].wrapping_add(v[1]);
    v[0] = v[0].wrapping_add(v[3]);
    v[1] = v[1].rotate_left(17) ^ v[2];
    v[3] = v[3].rotate_left(21) ^ v[0];
    v[2] = v[2].rotate_left(32);
}

/// SipHash-2-4 (64-bit output) under `(k0, k1)` of the 8 little-endian bytes of `m`.
#[inline]
pub fn sip24_word(k0: u64, k1: u64, m: u64) -> u64 {
    let mut v = [k0 ^ INIT[0], k1 ^ INIT[1], k0 ^ INIT[2], k1 ^ INIT[3]];
    for b in [m, LENGTH_BLOCK] {
        v[3] ^= b;
        round(&mut v);
        round(&mut v);
        v[0] ^= b;
    }
    v[2] ^= 0xff;
    for _ in 0..4 {
        round(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

/// [`sip24_x8`] one lane at a time (the definition).
pub fn sip24_x8_portable(k0: u64, k1: u64, words: &[u64; 8]) -> [u64; 8] {
    words.map(|m| sip24_word(k0, k1, m))
}

/// `out[i]` = SipHash-2-4 (64-bit output) under the key `(k0, k1)` of the 8 little-endian
/// bytes of `words[i]` — what `siphasher::sip::SipHasher24::new_with_keys(k0, k1)` returns
/// for them — computed in vector lanes where the CPU has AVX-512F or AVX2.
///
/// ```
/// use bloomlab_simd::{sip24_word, sip24_x8};
///
/// let words = [1, 2, 3, 4, 5, 6, 7, u64::MAX];
/// let out = sip24_x8(0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908, &words);
/// assert_eq!(out[7], sip24_word(0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908, u64::MAX));
/// // The reference implementation's test vector for key bytes 0..=15 and the 8-byte
/// // message 0..=7 (its output bytes, little-endian):
/// let m = u64::from_le_bytes([0, 1, 2, 3, 4, 5, 6, 7]);
/// assert_eq!(sip24_x8(0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908, &[m; 8])[0],
///            u64::from_le_bytes([0x62, 0x24, 0x93, 0x9a, 0x79, 0xf5, 0xf5, 0x93]));
/// ```
#[inline]
pub fn sip24_x8(k0: u64, k1: u64, words: &[u64; 8]) -> [u64; 8] {
    #[cfg(target_arch = "x86_64")]
    {
        if crate::has_avx512f() {
            // SAFETY: the CPU runs AVX-512F (checked just above).
            return unsafe { x86::sip24_x8_avx512(k0, k1, words) };
        }
        if crate::has_avx2() {
            // SAFETY: the CPU runs AVX2 (checked just above).
            return unsafe { x86::sip24_x8_avx2(k0, k1, words) };
        }
    }
    sip24_x8_portable(k0, k1, words)
}

/// [`sip24_x8`] forced onto its AVX2 path, for testing it on a CPU that would pick AVX-512;
/// `None` without AVX2.
pub fn sip24_x8_avx2(k0: u64, k1: u64, words: &[u64; 8]) -> Option<[u64; 8]> {
    #[cfg(target_arch = "x86_64")]
    {
        if crate::has_avx2() {
            // SAFETY: the CPU runs AVX2 (checked just above).
            return Some(unsafe { x86::sip24_x8_avx2(k0, k1, words) });
        }
    }
    let _ = (k0, k1, words);
    None
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{INIT, LENGTH_BLOCK};
    use core::arch::x86_64::{
        __m256i, __m512i, _mm256_add_epi64, _mm256_loadu_si256, _mm256_or_si256,
        _mm256_set1_epi64x, _mm256_setr_epi8, _mm256_shuffle_epi8, _mm256_shuffle_epi32,
        _mm256_slli_epi64, _mm256_srli_epi64, _mm256_storeu_si256, _mm256_xor_si256,
        _mm512_add_epi64, _mm512_loadu_epi64, _mm512_rol_epi64, _mm512_set1_epi64,
        _mm512_storeu_epi64, _mm512_ternarylogic_epi64, _mm512_xor_si512,
    };

    /// One SipRound on eight lanes' state `v` (v0–v3), `vprolq` for every rotation.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn round512(v: &mut [__m512i; 4]) {
        v[0] = _mm512_add_epi64(v[0], v[1]);
        v[2] = _mm512_add_epi64(v[2], v[3]);
        v[1] = _mm512_xor_si512(_mm512_rol_epi64::<13>(v[1]), v[0]);
        v[3] = _mm512_xor_si512(_mm512_rol_epi64::<16>(v[3]), v[2]);
        v[0] = _mm512_rol_epi64::<32>(v[0]);
        v[2] = _mm512_add_epi64(v[2], v[1]);
        v[0] = _mm512_add_epi64(v[0], v[3]);
        v[1] = _mm512_xor_si512(_mm512_rol_epi64::<17>(v[1]), v[2]);
        v[3] = _mm512_xor_si512(_mm512_rol_epi64::<21>(v[3]), v[0]);
        v[2] = _mm512_rol_epi64::<32>(v[2]);
    }

    /// The eight lanes in zmm registers: the message block and the length block, two rounds
    /// each, the finalisation's four, the four state words folded by one three-input xor
    /// (`vpternlogq` 0x96) and one `vpxorq`.
    ///
    /// # Safety
    /// The CPU must support AVX-512F.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn sip24_x8_avx512(k0: u64, k1: u64, words: &[u64; 8]) -> [u64; 8] {
        let init = [k0 ^ INIT[0], k1 ^ INIT[1], k0 ^ INIT[2], k1 ^ INIT[3]];
        // SAFETY: `words` is 64 readable bytes (`vmovdqu64`: no alignment needed).
        let m = unsafe { _mm512_loadu_epi64(words.as_ptr().cast()) };
        let mut v = [
            _mm512_set1_epi64(init[0] as i64),
            _mm512_set1_epi64(init[1] as i64),
            _mm512_set1_epi64(init[2] as i64),
            _mm512_set1_epi64(init[3] as i64),
        ];
        for b in [m, _mm512_set1_epi64(LENGTH_BLOCK as i64)] {
            v[3] = _mm512_xor_si512(v[3], b);
            round512(&mut v);
            round512(&mut v);
            v[0] = _mm512_xor_si512(v[0], b);
        }
        v[2] = _mm512_xor_si512(v[2], _mm512_set1_epi64(0xff));
        for _ in 0..4 {
            round512(&mut v);
        }
        let h = _mm512_xor_si512(_mm512_ternarylogic_epi64::<0x96>(v[0], v[1], v[2]), v[3]);
        let mut out = [0u64; 8];
        // SAFETY: `out` is 64 writable bytes.
        unsafe { _mm512_storeu_epi64(out.as_mut_ptr().cast(), h) };
        out
    }

    /// Four lanes' state.
    type State = [__m256i; 4];

    /// `x` rotated left by `L` bits in each 64-bit lane (`R = 64 − L`).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn rotl<const L: i32, const R: i32>(x: __m256i) -> __m256i {
        _mm256_or_si256(_mm256_slli_epi64::<L>(x), _mm256_srli_epi64::<R>(x))
    }

    /// One SipRound on two independent four-lane states, interleaved so the two dependency
    /// chains overlap.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn round2(a: &mut State, b: &mut State, rot16: __m256i) {
        // SAFETY: AVX2 is the caller's contract; no memory is touched.
        unsafe {
            for v in [&mut *a, &mut *b] {
                v[0] = _mm256_add_epi64(v[0], v[1]);
                v[2] = _mm256_add_epi64(v[2], v[3]);
                v[1] = _mm256_xor_si256(rotl::<13, 51>(v[1]), v[0]);
                v[3] = _mm256_xor_si256(_mm256_shuffle_epi8(v[3], rot16), v[2]);
                v[0] = _mm256_shuffle_epi32::<0b1011_0001>(v[0]);
                v[2] = _mm256_add_epi64(v[2], v[1]);
                v[0] = _mm256_add_epi64(v[0], v[3]);
                v[1] = _mm256_xor_si256(rotl::<17, 47>(v[1]), v[2]);
                v[3] = _mm256_xor_si256(rotl::<21, 43>(v[3]), v[0]);
                v[2] = _mm256_shuffle_epi32::<0b1011_0001>(v[2]);
            }
        }
    }

    /// The eight lanes as two four-lane halves in ymm registers, interleaved; rotations by
    /// 16 and 32 bits are a byte shuffle and a dword shuffle, the others two shifts and an
    /// `or`.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn sip24_x8_avx2(k0: u64, k1: u64, words: &[u64; 8]) -> [u64; 8] {
        // SAFETY: AVX2 is the caller's contract; the loads read the 64 bytes of `words` and
        // the stores write the 64 bytes of `out` (no alignment requirement).
        unsafe {
            let ma = _mm256_loadu_si256(words.as_ptr().cast());
            let mb = _mm256_loadu_si256(words.as_ptr().add(4).cast());
            let set = |x: u64| _mm256_set1_epi64x(x as i64);
            // Rotate each 64-bit lane left by 16 bits: byte i takes byte i − 2 (mod 8).
            let rot16 = _mm256_setr_epi8(
                6, 7, 0, 1, 2, 3, 4, 5, 14, 15, 8, 9, 10, 11, 12, 13, 6, 7, 0, 1, 2, 3, 4, 5, 14,
                15, 8, 9, 10, 11, 12, 13,
            );
            let init: State = [
                set(k0 ^ INIT[0]),
                set(k1 ^ INIT[1]),
                set(k0 ^ INIT[2]),
                set(k1 ^ INIT[3]),
            ];
            let (mut a, mut b) = (init, init);
            let blocks = [(ma, mb), (set(LENGTH_BLOCK), set(LENGTH_BLOCK))];
            for (xa, xb) in blocks {
                a[3] = _mm256_xor_si256(a[3], xa);
                b[3] = _mm256_xor_si256(b[3], xb);
                round2(&mut a, &mut b, rot16);
                round2(&mut a, &mut b, rot16);
                a[0] = _mm256_xor_si256(a[0], xa);
                b[0] = _mm256_xor_si256(b[0], xb);
            }
            a[2] = _mm256_xor_si256(a[2], set(0xff));
            b[2] = _mm256_xor_si256(b[2], set(0xff));
            for _ in 0..4 {
                round2(&mut a, &mut b, rot16);
            }
            let fold = |v: State| {
                _mm256_xor_si256(_mm256_xor_si256(v[0], v[1]), _mm256_xor_si256(v[2], v[3]))
            };
            let mut out = [0u64; 8];
            _mm256_storeu_si256(out.as_mut_ptr().cast(), fold(a));
            _mm256_storeu_si256(out.as_mut_ptr().add(4).cast(), fold(b));
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::Hasher;

    fn reference(k0: u64, k1: u64, m: u64) -> u64 {
        let mut h = siphasher::sip::SipHasher24::new_with_keys(k0, k1);
        h.write(&m.to_le_bytes());
        h.finish()
    }

    /// SplitMix64, for reproducible test inputs.
    fn mix(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    #[test]
    fn the_definition_is_siphash_2_4() {
        let mut s = 7;
        for _ in 0..2_000 {
            let (k0, k1, m) = (mix(&mut s), mix(&mut s), mix(&mut s));
            assert_eq!(sip24_word(k0, k1, m), reference(k0, k1, m));
        }
        for m in [0, 1, u64::MAX, 1 << 63] {
            assert_eq!(sip24_word(0, 0, m), reference(0, 0, m));
        }
    }

    #[test]
    fn every_path_matches_the_definition() {
        // `sip24_x8` takes the AVX-512 lanes where the CPU has them, else AVX2's; the AVX2
        // ones are also called directly.
        let avx2 = crate::testing::runs("avx2");
        crate::testing::runs("avx512f");
        let mut s = 11;
        for _ in 0..2_000 {
            let (k0, k1) = (mix(&mut s), mix(&mut s));
            let words: [u64; 8] = std::array::from_fn(|_| mix(&mut s));
            let want = sip24_x8_portable(k0, k1, &words);
            assert_eq!(sip24_x8(k0, k1, &words), want);
            if avx2 {
                assert_eq!(sip24_x8_avx2(k0, k1, &words), Some(want));
            }
        }
        let edge = [0, 1, u64::MAX, 1 << 63, 0xff, LENGTH_BLOCK, 42, 42];
        let want = sip24_x8_portable(u64::MAX, 0, &edge);
        assert_eq!(sip24_x8(u64::MAX, 0, &edge), want);
        if avx2 {
            assert_eq!(sip24_x8_avx2(u64::MAX, 0, &edge), Some(want));
        } else {
            assert_eq!(sip24_x8_avx2(u64::MAX, 0, &edge), None);
        }
    }

    #[test]
    fn lanes_are_independent() {
        // Changing one message changes only its own lane.
        let words = [5u64; 8];
        let base = sip24_x8(3, 4, &words);
        for i in 0..8 {
            let mut w = words;
            w[i] ^= 1;
            let got = sip24_x8(3, 4, &w);
            for j in 0..8 {
                assert_eq!(got[j] == base[j], i != j, "lane {j} after changing {i}");
            }
        }
    }
}
