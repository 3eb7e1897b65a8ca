//! The hashing phase of a parallel build, eight keys per instruction: XXH3-64 of many 8-byte
//! keys in vector lanes ([`xxh3_64_words`]), and the blocked filter's one-hash placement of
//! many hashes, each appended to the list of the thread that owns its block
//! ([`route_one_hash`]); the classic filter's probe positions, likewise
//! ([`route_positions`]).
//!
//! A parallel build of the blocked filter hashes each key once and sends it to the thread
//! whose range of blocks holds it. Done one key at a time, that phase is a large share of each
//! thread's time (hashing, then choosing the list and appending to it). Every step of it is
//! the same for every key, so it runs in 64-bit lanes: the hash is rotations, xors, shifts and two multiplies
//! (`vpmullq`, AVX-512DQ); the block index one 32 × 32-bit multiply (`vpmuludq`); the owner
//! a compare against each range's bounds, giving a mask; the keys of one owner are packed to
//! the front of a register (`vpcompressq`, register form: the memory form is microcoded on
//! some CPUs) and stored whole at the end of its list, which advances by the mask's
//! population count. The classic filter's build hands on each key's `k` bit positions
//! instead, computed and routed in the same lanes. What these choices were measured against
//! is in `docs/design/simd.md`.
//!
//! [`xxh3_64_words_portable`], [`route_one_hash_portable`] and [`route_positions_portable`]
//! are the definitions: the first calls the `xxhash-rust` crate, the others place each hash
//! with [`one_hash_place`] or the Kirsch–Mitzenmacher probes and find its owner by binary
//! search. The vector paths are tested against them on random input whenever the test
//! machine has AVX-512. No crate hashes many short keys in lanes, so the lanes are written
//! here, with the workspace's other vector kernels.

use alloc::vec::Vec;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::{
    __m512i, __mmask8, _mm512_add_epi64, _mm512_cmplt_epu64_mask, _mm512_loadu_epi64,
    _mm512_mask_storeu_epi64, _mm512_maskz_compress_epi64, _mm512_maskz_loadu_epi64,
    _mm512_mul_epu32, _mm512_mullo_epi64, _mm512_rol_epi64, _mm512_set1_epi64, _mm512_slli_epi64,
    _mm512_srli_epi64, _mm512_storeu_epi64, _mm512_ternarylogic_epi64, _mm512_xor_si512,
};
use xxhash_rust::xxh3::xxh3_64_with_seed;

/// Bytes 8..16 and 16..24 of XXH3's default secret (`XXH3_kSecret` in xxHash's `xxhash.h`),
/// as little-endian words: the 4-to-8-byte path xors their combination into the input.
#[cfg(target_arch = "x86_64")]
const SECRET_8: u64 = 0x1cad_21f7_2c81_017c;
#[cfg(target_arch = "x86_64")]
const SECRET_16: u64 = 0xdb97_9083_e96d_d4de;

/// XXH3's avalanche multiplier for short inputs (`PRIME_MX2`).
#[cfg(target_arch = "x86_64")]
const PRIME_MX2: u64 = 0x9fb2_1c65_1e98_df25;

/// What XXH3-64's 4-to-8-byte path xors into the (rotated) input under `seed`.
#[cfg(target_arch = "x86_64")]
fn flip(seed: u64) -> u64 {
    let seed = seed ^ (u64::from((seed as u32).swap_bytes()) << 32);
    (SECRET_8 ^ SECRET_16).wrapping_sub(seed)
}

/// Whether [`route_one_hash`] and [`route_positions`] run in vector lanes for values below
/// `limit` (blocks or bits) and `owners` owners: `limit ≤ 2^32 − 1`, at most 8 owners, a CPU
/// with AVX-512F and POPCNT. Otherwise they take their portable twins, which, where a caller
/// could hand keys on one at a time instead, are slower than that.
pub fn routes_in_lanes(limit: u64, owners: usize) -> bool {
    limit <= u64::from(u32::MAX) && (1..=8).contains(&owners) && crate::has_avx512f_popcnt()
}

/// `out[i]` = XXH3-64 with `seed` of the 8 little-endian bytes of `words[i]` — what
/// `xxhash_rust::xxh3::xxh3_64_with_seed(&words[i].to_le_bytes(), seed)` returns — eight at
/// a time in AVX-512 lanes where the CPU has them ([`has_avx512dq`](crate::has_avx512dq)).
///
/// ```
/// use bloomlab_simd::xxh3_64_words;
///
/// let words = [0u64, 1, 2, 3, 4, 5, 6, 7, 8, u64::MAX];
/// let mut out = [0u64; 10];
/// xxh3_64_words(42, &words, &mut out);
/// for (w, h) in words.iter().zip(out) {
///     assert_eq!(h, xxhash_rust::xxh3::xxh3_64_with_seed(&w.to_le_bytes(), 42));
/// }
/// ```
///
/// # Panics
/// If `out` is not as long as `words`.
pub fn xxh3_64_words(seed: u64, words: &[u64], out: &mut [u64]) {
    assert_eq!(words.len(), out.len(), "one output per word");
    #[cfg(target_arch = "x86_64")]
    if crate::has_avx512dq() {
        // SAFETY: the CPU has AVX-512F and AVX-512DQ (tested just above).
        unsafe { xxh3_64_words_avx512(seed, words, out) };
        return;
    }
    xxh3_64_words_portable(seed, words, out);
}

/// [`xxh3_64_words`] one word at a time through `xxhash-rust` (the definition).
///
/// # Panics
/// If `out` is not as long as `words`.
pub fn xxh3_64_words_portable(seed: u64, words: &[u64], out: &mut [u64]) {
    assert_eq!(words.len(), out.len(), "one output per word");
    for (o, w) in out.iter_mut().zip(words) {
        *o = xxh3_64_with_seed(&w.to_le_bytes(), seed);
    }
}

/// [`xxh3_64_words`] in AVX-512 lanes: eight words per step, the last `len % 8` in one masked
/// step. Each step is XXH3-64's 4-to-8-byte path (`XXH3_len_4to8_64b`) for an 8-byte input:
/// the input's two 32-bit halves swapped (`vprolq` 32), xored with the seed's flip, then the
/// `rrmxmx` avalanche — a three-way xor of the value and two rotations (`vpternlogq` 0x96),
/// a multiply (`vpmullq`, AVX-512DQ), `^= (x >> 35) + 8` (the length), a multiply,
/// `^= x >> 28`.
///
/// # Safety
/// The CPU must support AVX-512F and AVX-512DQ. `out` is as long as `words`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq")]
unsafe fn xxh3_64_words_avx512(seed: u64, words: &[u64], out: &mut [u64]) {
    let flip = _mm512_set1_epi64(flip(seed) as i64);
    let (whole, tail) = words.as_chunks::<8>();
    let (whole_out, tail_out) = out.as_chunks_mut::<8>();
    for (w, o) in whole.iter().zip(whole_out) {
        let x = xxh3_8(load8(w), flip);
        // SAFETY: `o` is 8 words (64 writable bytes; `vmovdqu64` needs no alignment).
        unsafe { _mm512_storeu_epi64(o.as_mut_ptr().cast(), x) };
    }
    if !tail.is_empty() {
        let (x, valid) = load_tail(tail);
        // SAFETY: the lanes written are the `tail.len()` words of `tail_out` (as long as
        // `tail`: `out` is as long as `words`); masked-off lanes are not accessed.
        unsafe { _mm512_mask_storeu_epi64(tail_out.as_mut_ptr().cast(), valid, xxh3_8(x, flip)) };
    }
}

/// XXH3-64 of the eight words of `x` (see [`xxh3_64_words_avx512`]), `flip` the seed's.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
fn xxh3_8(x: __m512i, flip: __m512i) -> __m512i {
    let (mx2, len) = (_mm512_set1_epi64(PRIME_MX2 as i64), _mm512_set1_epi64(8));
    let x = _mm512_xor_si512(_mm512_rol_epi64::<32>(x), flip);
    let x =
        _mm512_ternarylogic_epi64::<0x96>(x, _mm512_rol_epi64::<49>(x), _mm512_rol_epi64::<24>(x));
    let x = _mm512_mullo_epi64(x, mx2);
    let x = _mm512_xor_si512(x, _mm512_add_epi64(_mm512_srli_epi64::<35>(x), len));
    let x = _mm512_mullo_epi64(x, mx2);
    _mm512_xor_si512(x, _mm512_srli_epi64::<28>(x))
}

/// Hashed keys bound for one thread of a parallel build: each key's block and probe source,
/// side by side, in the order the keys came. The two lists always have the same length (the
/// routing kernels rely on it; the fields are private so nothing else can change one alone).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Routed {
    blocks: Vec<u64>,
    srcs: Vec<u64>,
}

impl Routed {
    /// Room for `n` keys.
    pub fn with_capacity(n: usize) -> Self {
        Routed {
            blocks: Vec::with_capacity(n),
            srcs: Vec::with_capacity(n),
        }
    }

    /// How many keys it holds.
    pub fn len(&self) -> usize {
        self.blocks.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Forget every key, keeping the room.
    pub fn clear(&mut self) {
        self.blocks.clear();
        self.srcs.clear();
    }

    /// Append one key's block and probe source.
    #[inline(always)]
    pub fn push(&mut self, block: u64, src: u64) {
        self.blocks.push(block);
        self.srcs.push(src);
    }

    /// Each key's block.
    pub fn blocks(&self) -> &[u64] {
        &self.blocks
    }

    /// Each key's probe source, as [`blocks`](Self::blocks).
    pub fn srcs(&self) -> &[u64] {
        &self.srcs
    }
}

/// The blocked filter's one-hash placement of the 64-bit hash `x` among `n ≤ 2^32` blocks:
/// the block `⌊(x >> 32) · n / 2^32⌋` (fastrange on the high half; below `n`) and the probe
/// source `x << 32` (the low half, whose bits feed the probes, in the high half).
#[inline(always)]
pub fn one_hash_place(x: u64, n: u64) -> (u64, u64) {
    // (x >> 32) < 2^32 and n ≤ 2^32: the product fits in 64 bits.
    (((x >> 32) * n) >> 32, x << 32)
}

/// Place each of `hashes` among `n` blocks ([`one_hash_place`]) and append it to `out[t]`
/// for the `t` with `bounds[t] ≤ block < bounds[t + 1]`: `out` has one list per owner,
/// `bounds` one more entry, nondecreasing from 0, the last at least `n`. In AVX-512 lanes
/// when the CPU has
/// AVX-512F, `n < 2^32` and there are at most 8 owners; one hash at a time otherwise.
///
/// ```
/// use bloomlab_simd::{one_hash_place, route_one_hash, Routed};
///
/// let hashes: Vec<u64> = (0..100u64).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
/// let mut out = vec![Routed::default(), Routed::default()];
/// route_one_hash(&hashes, 1000, &[0, 500, 1000], &mut out);
/// assert_eq!(out[0].len() + out[1].len(), 100);
/// assert!(out[0].blocks().iter().all(|&b| b < 500) && out[1].blocks().iter().all(|&b| b >= 500));
/// assert_eq!((out[0].blocks()[0], out[0].srcs()[0]), one_hash_place(hashes[0], 1000));
/// ```
///
/// # Panics
/// If `bounds` is not one longer than `out`, `n` is 0 or above `2^32`, or `bounds` does not
/// start at 0, decreases, or ends below `n`.
pub fn route_one_hash(hashes: &[u64], n: u64, bounds: &[u64], out: &mut [Routed]) {
    check_blocks(n, bounds, out.len());
    #[cfg(target_arch = "x86_64")]
    if routes_in_lanes(n, out.len()) {
        for o in out.iter_mut() {
            // Room for every hash plus one whole vector past the last: each step stores
            // eight lanes and keeps only the owner's.
            o.blocks.reserve(hashes.len() + 8);
            o.srcs.reserve(hashes.len() + 8);
        }
        // SAFETY: the CPU has AVX-512F and POPCNT (tested above); `n < 2^32`; `bounds` checked by
        // `check_bounds`; every list has room for `hashes.len() + 8` more entries.
        unsafe { route_one_hash_avx512(hashes, n, bounds, out) };
        return;
    }
    route_one_hash_portable(hashes, n, bounds, out);
}

/// [`route_one_hash`] one hash at a time (the definition).
///
/// # Panics
/// As [`route_one_hash`].
pub fn route_one_hash_portable(hashes: &[u64], n: u64, bounds: &[u64], out: &mut [Routed]) {
    check_blocks(n, bounds, out.len());
    for &x in hashes {
        let (b, src) = one_hash_place(x, n);
        // The last t with bounds[t] ≤ b (bounds[0] = 0 ≤ b < n = bounds[T]).
        let t = bounds[1..].partition_point(|&f| f <= b);
        out[t].push(b, src);
    }
}

/// Checks [`route_one_hash`]'s blocks and bounds (its panics).
fn check_blocks(n: u64, bounds: &[u64], owners: usize) {
    assert!((1..=1 << 32).contains(&n), "1 ≤ n ≤ 2^32 blocks");
    check_bounds(n, bounds, owners);
}

/// Checks [`route_positions`]' hashes, bits and bounds (its panics).
fn check_positions(h1: &[u64], h2: &[u64], m: u64, bounds: &[u64], owners: usize) {
    assert_eq!(h1.len(), h2.len(), "one h2 per h1");
    assert!(m >= 1, "m ≥ 1");
    check_bounds(m, bounds, owners);
}

/// Checks the owners' bounds: one more entry than owners, nondecreasing from 0, the last at
/// least `limit` (every value routed is below it).
fn check_bounds(limit: u64, bounds: &[u64], owners: usize) {
    assert_eq!(bounds.len(), owners + 1, "one bound more than owners");
    assert!(
        bounds[0] == 0 && bounds[owners] >= limit && bounds.windows(2).all(|w| w[0] <= w[1]),
        "bounds run from 0 to at least the blocks or bits, nondecreasing"
    );
}

/// Append each probe position of each key to the list of the thread that owns it: key `j`'s
/// positions are its Kirsch–Mitzenmacher probes [`fastrange`](crate::fastrange)`(h1[j] + i·h2[j], m)`
/// for `i < k` (the core crate's `KeyHash::positions`), and position
/// `p` goes to `out[t]` for the `t` with `bounds[t] ≤ p < bounds[t + 1]` (`bounds`: one more
/// entry than `out`, nondecreasing from 0, the last at least `m`). The order within a list is
/// unspecified. In AVX-512 lanes, eight keys at a time, when `k ≥ 1` and
/// [`routes_in_lanes`]`(m, out.len())`; one position at a time otherwise.
///
/// ```
/// use bloomlab_simd::{fastrange, route_positions};
///
/// let (h1, h2) = ([1u64 << 63, 7], [1u64 << 62, 3]);
/// let mut out = vec![Vec::new(), Vec::new()];
/// route_positions(&h1, &h2, 3, 1_000, &[0, 500, 1_000], &mut out);
/// let mut all: Vec<u64> = out.concat();
/// all.sort_unstable();
/// let mut want: Vec<u64> = (0..2)
///     .flat_map(|j| (0..3u64).map(move |i| fastrange(h1[j].wrapping_add(i.wrapping_mul(h2[j])), 1_000)))
///     .collect();
/// want.sort_unstable();
/// assert_eq!(all, want);
/// assert!(out[0].iter().all(|&p| p < 500) && out[1].iter().all(|&p| p >= 500));
/// ```
///
/// # Panics
/// If `h2` is not as long as `h1`, `m` is 0, or `bounds` is not one longer than `out`, does
/// not start at 0, decreases, or ends below `m`.
pub fn route_positions(
    h1: &[u64],
    h2: &[u64],
    k: u32,
    m: u64,
    bounds: &[u64],
    out: &mut [Vec<u64>],
) {
    check_positions(h1, h2, m, bounds, out.len());
    #[cfg(target_arch = "x86_64")]
    if k > 0 && routes_in_lanes(m, out.len()) {
        let room = h1
            .len()
            .checked_mul(k as usize)
            .and_then(|r| r.checked_add(8))
            .expect("k · keys + 8 positions fit in memory");
        for o in out.iter_mut() {
            o.reserve(room);
        }
        // SAFETY: the CPU has AVX-512F and POPCNT (tested above); `m < 2^32`, `k ≥ 1`;
        // `bounds` checked by `check_bounds`; every list has room for `k · h1.len() + 8`
        // more entries.
        unsafe { route_positions_avx512(h1, h2, k, m, bounds, out) };
        return;
    }
    route_positions_portable(h1, h2, k, m, bounds, out);
}

/// [`route_positions`] one position at a time (the definition), in key order.
///
/// # Panics
/// As [`route_positions`].
pub fn route_positions_portable(
    h1: &[u64],
    h2: &[u64],
    k: u32,
    m: u64,
    bounds: &[u64],
    out: &mut [Vec<u64>],
) {
    check_positions(h1, h2, m, bounds, out.len());
    for (&a, &b) in h1.iter().zip(h2) {
        let mut g = a;
        for _ in 0..k {
            let p = crate::fastrange(g, m);
            g = g.wrapping_add(b);
            let t = bounds[1..].partition_point(|&f| f <= p);
            out[t].push(p);
        }
    }
}

/// One owner's lists as a routing kernel fills them: `S` of them (a [`Routed`]'s blocks and
/// probe sources, or one list of positions), written through raw pointers a whole vector at
/// a time.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Owner<const S: usize> {
    /// `bounds[t + 1]` for owner `t`, in every lane: every value it takes is below, and not
    /// below the previous owner's end. (A vector, not a `u64`: the compiler otherwise packs
    /// it with `len` into one vector register and moves `len` in and out of it on every
    /// append.)
    end: __m512i,
    /// How many entries each of its lists holds.
    len: usize,
    /// Where its lists start.
    starts: [*mut u64; S],
}

/// The `C` owners of a routing kernel (`bounds.len() − 1`), from `lists`: each owner's list
/// starts and their length.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn owners<const S: usize, const C: usize>(
    bounds: &[u64],
    lists: impl Iterator<Item = ([*mut u64; S], usize)>,
) -> [Owner<S>; C] {
    assert_eq!(bounds.len(), C + 1, "one bound more than owners");
    let mut each = bounds[1..].iter().zip(lists);
    core::array::from_fn(|_| {
        let (&end, (starts, len)) = each.next().expect("a list per owner");
        Owner {
            end: _mm512_set1_epi64(end as i64),
            len,
            starts,
        }
    })
}

/// `$kernel::<C>($args)` for the `C` in `1..=8` that `$owners` is (a routing kernel compiled
/// per number of owners: the owners' loop unrolled, their list ends kept in registers).
#[cfg(target_arch = "x86_64")]
macro_rules! per_owner_count {
    ($owners:expr, $kernel:ident($($arg:expr),*)) => {
        match $owners {
            1 => $kernel::<1>($($arg),*),
            2 => $kernel::<2>($($arg),*),
            3 => $kernel::<3>($($arg),*),
            4 => $kernel::<4>($($arg),*),
            5 => $kernel::<5>($($arg),*),
            6 => $kernel::<6>($($arg),*),
            7 => $kernel::<7>($($arg),*),
            8 => $kernel::<8>($($arg),*),
            _ => unreachable!("1 to 8 owners"),
        }
    };
}

/// Hand each of the `C ≥ 1` owners its lanes among `valid`: for owner `t` in turn, the
/// lanes of `key` below its end and not below the previous owner's (`vpcmpuq`) are its own,
/// and it appends those lanes of each of `vals` ([`Owner::append`]; `vpcompressq` in its
/// register form: the memory form is microcoded on some CPUs, `docs/design/simd.md`).
///
/// # Safety
/// Every valid lane of `key` is below the last owner's end; each list has room for
/// eight entries past its length.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn hand<const S: usize, const C: usize>(
    owners: &mut [Owner<S>; C],
    key: __m512i,
    vals: [__m512i; S],
    valid: __mmask8,
) {
    let Some((last, first)) = owners.split_last_mut() else {
        return;
    };
    let mut below_before: __mmask8 = 0;
    for o in first {
        let below = _mm512_cmplt_epu64_mask(key, o.end);
        // SAFETY: the caller's contract, passed on.
        unsafe { o.append(below & !below_before & valid, vals) };
        below_before = below;
    }
    // Every valid lane is below the last owner's end: no compare.
    // SAFETY: as above.
    unsafe { last.append(valid & !below_before, vals) };
}

#[cfg(target_arch = "x86_64")]
impl<const S: usize> Owner<S> {
    /// Append the lanes `mine` of each of `vals` to the lists: packed to the front of a
    /// register (`vpcompressq`) and stored whole, 64 bytes, at the lists' end, which moves by
    /// their count (`popcnt`). Branch-free: with no lane to take, the store writes only room
    /// past the end (with one owner of eight taking a lane about two steps in three, a branch
    /// there mispredicts often).
    ///
    /// # Safety
    /// Each list has room for eight entries past its length.
    #[inline]
    #[target_feature(enable = "avx512f,popcnt")]
    unsafe fn append(&mut self, mine: __mmask8, vals: [__m512i; S]) {
        for (start, v) in self.starts.iter().zip(vals) {
            // SAFETY: `start + len` has room for eight entries (the contract).
            unsafe {
                _mm512_storeu_epi64(
                    start.add(self.len).cast(),
                    _mm512_maskz_compress_epi64(mine, v),
                )
            };
        }
        self.len += mine.count_ones() as usize;
    }
}

/// The eight words of `w`.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn load8(w: &[u64; 8]) -> __m512i {
    // SAFETY: `w` is 64 readable bytes (`vmovdqu64`: no alignment needed).
    unsafe { _mm512_loadu_epi64(w.as_ptr().cast()) }
}

/// The words of `w` (fewer than eight) in the first lanes, zero in the others, and the mask
/// of those lanes.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn load_tail(w: &[u64]) -> (__m512i, __mmask8) {
    let valid = (1u8 << w.len().min(7)) - 1;
    // SAFETY: the lanes read are the `w.len() < 8` words of `w` (masked-off lanes are not
    // accessed).
    (
        unsafe { _mm512_maskz_loadu_epi64(valid, w.as_ptr().cast()) },
        valid,
    )
}

/// `*x` in every lane, read where it is used: a vector made once before a loop reaches the
/// loop's code as an opaque register, and the compiler then lowers `vpmuludq` by it
/// (`_mm512_mul_epu32`) as a full 64-bit multiply — two more multiplies, a shift and an add —
/// not seeing that only the low halves count. A volatile read cannot be moved out of the loop.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f")]
fn in_every_lane(x: &u64) -> __m512i {
    // SAFETY: `x` is a reference: aligned, readable.
    _mm512_set1_epi64(unsafe { core::ptr::read_volatile(x) } as i64)
}

/// One step of [`route_one_hash_avx512`]: the blocks of the hashes `x` among `*n` and their
/// probe sources, each lane of `valid` handed to its owner.
///
/// # Safety
/// As [`hand`]'s, for the blocks.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn one_hash_step<const C: usize>(
    owners: &mut [Owner<2>; C],
    n: &u64,
    x: __m512i,
    valid: __mmask8,
) {
    let n = in_every_lane(n);
    let blocks = _mm512_srli_epi64::<32>(_mm512_mul_epu32(_mm512_srli_epi64::<32>(x), n));
    let vals = [blocks, _mm512_slli_epi64::<32>(x)];
    // SAFETY: the caller's contract.
    unsafe { hand(owners, blocks, vals, valid) };
}

/// One step of [`route_positions_avx512`]: the `k` positions among `*m` of the keys with first
/// probes `g` and strides `stride`, each lane of `valid` handed to its owner.
///
/// # Safety
/// As [`hand`]'s, for the positions.
#[cfg(target_arch = "x86_64")]
#[inline]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn positions_step<const C: usize>(
    owners: &mut [Owner<1>; C],
    m: &u64,
    k: u32,
    mut g: __m512i,
    stride: __m512i,
    valid: __mmask8,
) {
    for _ in 0..k {
        let m = in_every_lane(m);
        let hi = _mm512_mul_epu32(_mm512_srli_epi64::<32>(g), m);
        let lo = _mm512_srli_epi64::<32>(_mm512_mul_epu32(g, m));
        let p = _mm512_srli_epi64::<32>(_mm512_add_epi64(hi, lo));
        // SAFETY: the caller's contract.
        unsafe { hand(owners, p, [p], valid) };
        g = _mm512_add_epi64(g, stride);
    }
}

/// [`route_one_hash`] in AVX-512 lanes: eight hashes per step (the last step masked to the
/// `len % 8` left), each hash's block (`vpsrlq` 32, `vpmuludq` by `n`, `vpsrlq` 32) and probe
/// source (`vpsllq` 32) handed to its owner ([`hand`]).
///
/// # Safety
/// The CPU must support AVX-512F and POPCNT; `n < 2^32`; `bounds` as `route_one_hash`
/// requires, for `out.len() ≤ 8` owners; every list in `out` has spare capacity for
/// `hashes.len() + 8` entries.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn route_one_hash_avx512(hashes: &[u64], n: u64, bounds: &[u64], out: &mut [Routed]) {
    // SAFETY: the caller's contract, passed on.
    unsafe { per_owner_count!(out.len(), route_one_hash_lanes(hashes, n, bounds, out)) }
}

/// [`route_one_hash_avx512`] for `C` owners.
///
/// # Safety
/// As [`route_one_hash_avx512`]'s, with `out.len() = C`.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn route_one_hash_lanes<const C: usize>(
    hashes: &[u64],
    n: u64,
    bounds: &[u64],
    out: &mut [Routed],
) {
    let lists = out
        .iter_mut()
        .map(|o| ([o.blocks.as_mut_ptr(), o.srcs.as_mut_ptr()], o.blocks.len()));
    let mut owners = owners::<2, C>(bounds, lists);
    // SAFETY (each step): every block is below `n ≤ bounds[owners]`; each owner's lists grow
    // by at most the hashes handed so far, so with `hashes.len() + 8` spare entries at entry,
    // eight fit past their length at every step.
    let (whole, tail) = hashes.as_chunks::<8>();
    for c in whole {
        unsafe { one_hash_step(&mut owners, &n, load8(c), 0xff) };
    }
    if !tail.is_empty() {
        let (x, valid) = load_tail(tail);
        unsafe { one_hash_step(&mut owners, &n, x, valid) };
    }
    for (o, w) in out.iter_mut().zip(&owners) {
        // SAFETY: entries up to `len` were written by `hand` (64-bit values, any bits valid,
        // nothing to drop) within the capacity (see above).
        unsafe {
            o.blocks.set_len(w.len);
            o.srcs.set_len(w.len);
        }
    }
}

/// [`route_positions`] in AVX-512 lanes: eight keys per step (the last step masked to the
/// `len % 8` left); for each of the `k` probes, the eight probes reduced into `0..m` —
/// `fastrange(g, m) = ⌊g · m / 2^64⌋`, which for `m < 2^32` is `(g_hi · m + ⌊g_lo · m /
/// 2^32⌋) >> 32` with `g = g_hi · 2^32 + g_lo` (two `vpmuludq`; exact: the dropped fraction
/// cannot carry past a multiple of 2^32) — handed to their owners ([`hand`]), then the
/// strides added.
///
/// # Safety
/// The CPU must support AVX-512F and POPCNT; `h2` as long as `h1`; `m < 2^32`; `bounds` as
/// `route_positions` requires, for `out.len() ≤ 8` owners; every list in `out` has spare
/// capacity for `k · h1.len() + 8` entries.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn route_positions_avx512(
    h1: &[u64],
    h2: &[u64],
    k: u32,
    m: u64,
    bounds: &[u64],
    out: &mut [Vec<u64>],
) {
    // SAFETY: the caller's contract, passed on.
    unsafe { per_owner_count!(out.len(), route_positions_lanes(h1, h2, k, m, bounds, out)) }
}

/// [`route_positions_avx512`] for `C` owners.
///
/// # Safety
/// As [`route_positions_avx512`]'s, with `out.len() = C`.
#[cfg(target_arch = "x86_64")]
#[inline(never)]
#[target_feature(enable = "avx512f,popcnt")]
unsafe fn route_positions_lanes<const C: usize>(
    h1: &[u64],
    h2: &[u64],
    k: u32,
    m: u64,
    bounds: &[u64],
    out: &mut [Vec<u64>],
) {
    let lists = out.iter_mut().map(|o| ([o.as_mut_ptr()], o.len()));
    let mut owners = owners::<1, C>(bounds, lists);
    // SAFETY (each step): every position is below `m ≤ bounds[owners]`; each list grows by
    // at most the positions handed so far, so with `k · h1.len() + 8` spare entries at entry,
    // eight fit past its length at every step.
    let ((whole1, tail1), (whole2, tail2)) = (h1.as_chunks::<8>(), h2.as_chunks::<8>());
    for (a, b) in whole1.iter().zip(whole2) {
        unsafe { positions_step(&mut owners, &m, k, load8(a), load8(b), 0xff) };
    }
    if !tail1.is_empty() {
        let ((g, valid), (stride, _)) = (load_tail(tail1), load_tail(tail2));
        unsafe { positions_step(&mut owners, &m, k, g, stride, valid) };
    }
    for (o, w) in out.iter_mut().zip(&owners) {
        // SAFETY: entries up to `len` were written by `hand` (64-bit values, any bits valid,
        // nothing to drop) within the capacity (see above).
        unsafe { o.set_len(w.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mix(i: u64) -> u64 {
        let mut z = i.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    #[test]
    fn lanes_hash_as_xxhash_rust_does() {
        for seed in [0, 1, 42, u64::from_le_bytes(*b"bloomlab"), u64::MAX, mix(7)] {
            // Every length up to 3 chunks, so each tail is covered too.
            for len in 0..27 {
                let words: Vec<u64> = (0..len).map(|i| mix(seed ^ (i * 977))).collect();
                let mut fast = vec![0; words.len()];
                let mut slow = vec![1; words.len()];
                xxh3_64_words(seed, &words, &mut fast);
                xxh3_64_words_portable(seed, &words, &mut slow);
                assert_eq!(fast, slow, "seed {seed:#x}, {len} words");
            }
        }
        // Words with few bits set or all set, where rotations and carries bite.
        let words: Vec<u64> = (0..64)
            .flat_map(|i| [1u64 << i, !(1u64 << i)])
            .chain([0, u64::MAX])
            .collect();
        let mut fast = vec![0; words.len()];
        xxh3_64_words(3, &words, &mut fast);
        for (w, h) in words.iter().zip(&fast) {
            assert_eq!(*h, xxh3_64_with_seed(&w.to_le_bytes(), 3), "word {w:#x}");
        }
        // Which path the dispatcher took: the lanes where the CPU has them.
        if crate::testing::runs("avx512dq") {
            assert!(crate::has_avx512dq());
        }
    }

    #[test]
    fn lanes_route_as_the_definition_does() {
        let hashes: Vec<u64> = (0..1000).map(mix).collect();
        for n in [1u64, 2, 7, 1000, 195_313, (1 << 32) - 1, 1 << 32] {
            for owners in 1..=9usize {
                // Even ranges, and uneven ones with some empty.
                let even: Vec<u64> = (0..=owners as u64).map(|t| t * n / owners as u64).collect();
                let uneven: Vec<u64> = (0..=owners as u64)
                    .map(|t| {
                        if t == owners as u64 {
                            n
                        } else {
                            (t * t * n / 81).min(n)
                        }
                    })
                    .collect();
                for bounds in [even, uneven] {
                    for len in EDGE_LENGTHS.into_iter().chain([1000]) {
                        let mut fast = vec![Routed::with_capacity(3); owners];
                        let mut slow = vec![Routed::default(); owners];
                        // Appends to what the lists already hold.
                        for o in fast.iter_mut().chain(slow.iter_mut()) {
                            o.push(9, 9);
                        }
                        route_one_hash(&hashes[..len], n, &bounds, &mut fast);
                        route_one_hash_portable(&hashes[..len], n, &bounds, &mut slow);
                        assert_eq!(fast, slow, "n {n}, bounds {bounds:?}, {len} hashes");
                        let total: usize = slow.iter().map(Routed::len).sum();
                        assert_eq!(total, len + owners);
                        for (t, o) in slow.iter().enumerate() {
                            for &b in &o.blocks()[1..] {
                                assert!(bounds[t] <= b && b < bounds[t + 1]);
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn lanes_route_positions_as_the_definition_does() {
        let h1: Vec<u64> = (0..203).map(|i| mix(i * 3)).collect();
        let h2: Vec<u64> = (0..203).map(|i| mix(i * 3 + 1)).collect();
        for m in [1u64, 64, 1000, 95_850_584, (1 << 32) - 1, 1 << 32, u64::MAX] {
            for k in [0u32, 1, 6, 7, 13] {
                for owners in [1usize, 2, 3, 8, 9] {
                    // Word-aligned bounds, as a parallel build splits its words, the last at
                    // the last word's end (at least m; capped at 2^64 − 1 for m = 2^64 − 1).
                    let words = u128::from(m.div_ceil(64));
                    let bounds: Vec<u64> = (0..=owners as u128)
                        .map(|t| (words * t / owners as u128 * 64).min(u128::from(u64::MAX)) as u64)
                        .collect();
                    for len in EDGE_LENGTHS.into_iter().chain([203]) {
                        let mut fast = vec![vec![9u64]; owners];
                        let mut slow = vec![vec![9u64]; owners];
                        route_positions(&h1[..len], &h2[..len], k, m, &bounds, &mut fast);
                        route_positions_portable(&h1[..len], &h2[..len], k, m, &bounds, &mut slow);
                        for (t, (f, s)) in fast.iter_mut().zip(&mut slow).enumerate() {
                            f.sort_unstable();
                            s.sort_unstable();
                            assert_eq!(f, s, "m {m}, k {k}, owner {t}/{owners}, {len} keys");
                            assert!(
                                s.iter()
                                    .all(|&p| p == 9 || (bounds[t] <= p && p < bounds[t + 1]))
                            );
                        }
                        let total: usize = slow.iter().map(Vec::len).sum();
                        assert_eq!(total, len * k as usize + owners);
                    }
                }
            }
        }
    }

    /// The lengths each kernel is run at: none, one, a lane short of a vector, a vector, one
    /// past it, odd tails after whole vectors.
    const EDGE_LENGTHS: [usize; 10] = [0, 1, 7, 8, 9, 13, 15, 16, 17, 23];

    /// The vector kernels called directly (the tests above go through the dispatchers, which
    /// take the portable twins on a CPU without AVX-512 — there they compare the definition
    /// with itself). `BLOOMLAB_REQUIRE_SIMD` naming the paths makes a CPU without them fail.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn the_vector_kernels_agree_with_the_definitions_when_they_run() {
        use crate::testing::runs;
        if !(runs("avx512f") & runs("avx512dq") & runs("popcnt")) {
            return;
        }
        let words: Vec<u64> = (0..1003).map(|i| mix(i * 5)).collect();
        let strides: Vec<u64> = (0..1003).map(|i| mix(i * 5 + 1)).collect();
        for len in EDGE_LENGTHS.into_iter().chain([1003]) {
            let words = &words[..len];
            let strides = &strides[..len];
            let (mut fast, mut slow) = (vec![0; len], vec![1; len]);
            // SAFETY: the CPU has AVX-512F and DQ (tested above); `fast` is as long as `words`.
            unsafe { xxh3_64_words_avx512(77, words, &mut fast) };
            xxh3_64_words_portable(77, words, &mut slow);
            assert_eq!(fast, slow, "{len} words");
            for owners in [1usize, 2, 5, 8] {
                let n = 4_000_037u64;
                let bounds: Vec<u64> = (0..=owners as u64).map(|t| t * n / owners as u64).collect();
                // Lists that already hold an entry, as a build's lists do after a first call.
                let mut slow = vec![Routed::default(); owners];
                slow.iter_mut().for_each(|o| o.push(3, 4));
                let mut fast = slow.clone();
                for o in &mut fast {
                    o.blocks.reserve(len + 8);
                    o.srcs.reserve(len + 8);
                }
                // SAFETY: AVX-512F and POPCNT (tested above); `n < 2^32`; even bounds from 0
                // to `n` for at most 8 owners; every list has room for `len + 8` more entries.
                unsafe { route_one_hash_avx512(words, n, &bounds, &mut fast) };
                route_one_hash_portable(words, n, &bounds, &mut slow);
                assert_eq!(fast, slow, "{owners} owners, {len} hashes");
                let m = 95_850_584u64;
                let bits: Vec<u64> = (0..=owners as u64).map(|t| t * m / owners as u64).collect();
                let mut slow = vec![vec![9u64]; owners];
                let mut fast = slow.clone();
                fast.iter_mut().for_each(|o| o.reserve(7 * len + 8));
                // SAFETY: as above, with `m < 2^32`, `k = 7` and room for `7 · len + 8` more.
                unsafe { route_positions_avx512(words, strides, 7, m, &bits, &mut fast) };
                route_positions_portable(words, strides, 7, m, &bits, &mut slow);
                for (f, s) in fast.iter_mut().zip(&mut slow) {
                    f.sort_unstable();
                    s.sort_unstable();
                }
                assert_eq!(fast, slow, "{owners} owners, {len} keys, positions");
            }
        }
    }

    #[test]
    fn placement_is_fastrange_on_the_high_half() {
        assert_eq!(one_hash_place(0, 1000), (0, 0));
        assert_eq!(one_hash_place(u64::MAX, 1000), (999, 0xffff_ffff_0000_0000));
        assert_eq!(
            one_hash_place(u64::MAX, 1 << 32),
            ((1 << 32) - 1, 0xffff_ffff_0000_0000)
        );
        assert_eq!(one_hash_place(1 << 63, 10), (5, 0));
    }

    #[test]
    #[should_panic(expected = "bounds run from 0 to at least")]
    fn bounds_must_cover_the_blocks() {
        route_one_hash(
            &[1, 2, 3],
            10,
            &[0, 4, 9],
            &mut [Routed::default(), Routed::default()],
        );
    }
}
