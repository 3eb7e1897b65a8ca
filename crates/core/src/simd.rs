//! The one home of `unsafe` in the workspace: prefetch hints, a batched pipeline driver and
//! AVX2 kernels for the block-local probes of the blocked and split-block filters.
//!
//! Every kernel has a portable scalar twin, `*_scalar`, that defines its result; the public
//! entry points pick the AVX2 version at run time when the CPU has it
//! ([`has_avx2`], `is_x86_feature_detected!`, cached by std) and the scalar one otherwise.
//! Both give bit-identical blocks and answers (tested against each other here, on random
//! inputs, whenever the test machine has AVX2). Each `unsafe` block carries a SAFETY comment.
//!
//! # Kernels
//!
//! - **Local 512-bit block** ([`local_contains`], [`local_insert`]): the probe rule of RocksDB's
//!   `FastLocalBloom` (`util/bloom_impl.h`), generalised to any `k` in `1..=64`. A key brings
//!   a 32-bit value `h`; probe `i` is bit `(h · M^i mod 2^32) >> 23` of the 512-bit block
//!   (the top 9 bits), with `M = 0x9e37_79b9` ([`LOCAL_MULTIPLIER`], ⌊2^32/φ⌋ rounded to odd,
//!   Knuth TAOCP vol. 3 §6.4). Bit `j` of the block is bit `j & 63` of word `j >> 6` of the
//!   block's eight `u64`s — equivalently bit `j & 31` of 32-bit word `j >> 5` in
//!   little-endian memory order, which is how the AVX2 path reads it: eight probes per
//!   vector (one multiply, two shifts, two in-lane permutes and a blend to fetch the probed
//!   words of the loaded cache line, one variable shift for the masks, one `vptest`), no
//!   branch per probe.
//! - **Split block** ([`split_block_contains`], [`split_block_insert`], [`split_block_mask`]):
//!   the Parquet / Impala split-block rule over a 256-bit block of eight `u32` words: word `i`
//!   gets bit `(h · salt_i mod 2^32) >> 27`, so a key sets exactly one bit per word.
//!
//! # Dispatch
//!
//! A filter does not call a kernel per key through a pointer. Batched work states its
//! operation — hash, block index, probes, the whole loop — as a [`LocalTask`], generic over
//! the kernel ([`LocalProbe`]), and [`run_local`] tests for AVX2 once (a cached load) and runs
//! it compiled with AVX2 enabled, the hash and the kernel inlined into it. Single operations
//! cannot do that without a call per key (an AVX2-enabled function never inlines into its
//! caller), so they use [`LocalKernel`]: chosen once per filter, it runs the eight-probe
//! kernel as inline assembly, which inlines anywhere. In a build with AVX2 enabled at compile
//! time the tests go away.
//!
//! Other sections: the Ribbon filter's column parities ([`Parity`], run through
//! [`run_parity`]), the classic filter's whole-array probes ([`classic_contains_all`]) and the
//! keyed scheme's SipHash-2-4 of eight keys in vector lanes ([`sip24_x8`], driven by
//! [`pipeline_chunks`]), and a parallel build's hashing phase in lanes (XXH3-64 of many keys,
//! [`xxh3_64_words`]; the blocked filter's placement split by owning thread,
//! [`route_one_hash`]; the classic filter's probe positions likewise, [`route_positions`]),
//! each with its scalar twin.
//!
//! # Pipeline
//!
//! [`pipeline`] drives batched operations: it computes each item's hash `D` items before the
//! item is answered and hands it to a prefetch callback, so `D` cache misses are in flight at
//! once and a slow (keyed) hash overlaps the memory latency of earlier items.
//!
//! ```
//! use bloomlab_core::simd;
//!
//! let mut block = [0u64; 8];
//! assert!(simd::local_insert(&mut block, 0xdead_beef, 6)); // some bit was new
//! assert!(simd::local_contains(&block, 0xdead_beef, 6));
//! assert!(!simd::local_insert(&mut block, 0xdead_beef, 6)); // already there
//! assert!(block.iter().map(|w| w.count_ones()).sum::<u32>() <= 6); // at most k bits
//!
//! // Both paths agree.
//! let mut other = [0u64; 8];
//! simd::local_insert_scalar(&mut other, 0xdead_beef, 6);
//! assert_eq!(block, other);
//! ```

mod bulk;
mod sip;
pub use bulk::{
    Routed, has_avx512dq, one_hash_place, route_one_hash, route_one_hash_portable, route_positions,
    route_positions_portable, routes_in_lanes, xxh3_64_words, xxh3_64_words_portable,
};
pub use sip::{sip24_word, sip24_x8, sip24_x8_avx2, sip24_x8_portable};

/// Multiplier of the local-block probe sequence: `⌊2^32/φ⌋` rounded to odd (RocksDB's
/// `FastLocalBloom` constant). A format constant of every layout that uses [`local_insert`].
pub const LOCAL_MULTIPLIER: u32 = 0x9e37_79b9;

/// Largest `k` the local-block kernels accept (the workspace's `MAX_HASHES`).
pub const LOCAL_MAX_PROBES: u32 = 64;

/// `LOCAL_POWERS[i] = LOCAL_MULTIPLIER^i mod 2^32`: probe `i` of `h` is
/// `(h · LOCAL_POWERS[i]) >> 23`. The powers make the `k` multiplications independent; the
/// AVX2 path loads them eight at a time.
pub const LOCAL_POWERS: [u32; LOCAL_MAX_PROBES as usize] = {
    let mut p = [1u32; LOCAL_MAX_PROBES as usize];
    let mut i = 1;
    while i < p.len() {
        p[i] = p[i - 1].wrapping_mul(LOCAL_MULTIPLIER);
        i += 1;
    }
    p
};

/// Whether this CPU runs the AVX2 kernels (std caches the CPUID probe; a relaxed load).
#[inline]
pub fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The CPU runs AVX-512 Foundation instructions on 512-bit registers and the OS saves
/// their state (std's detection checks both).
pub fn has_avx512f() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Ask the CPU to start loading the cache line holding `*p` into all cache levels. A hint:
/// no fault, no visible effect; a no-op where no prefetch instruction is available.
#[inline(always)]
pub fn prefetch<T>(p: &T) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: `_mm_prefetch` is an `unsafe fn` only because it is a `#[target_feature(sse)]`
        // intrinsic; SSE is enabled for this build (checked by the `cfg` above). A prefetch
        // never dereferences in the language sense and cannot fault, and `p` is a valid
        // reference anyway.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((p as *const T).cast::<i8>()) };
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    {
        let _ = p;
    }
}

/// One 64-byte cache line: eight `u64` words, 64-byte aligned (the blocked filter's block).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(C, align(64))]
pub struct Line(pub [u64; 8]);

const _: () = assert!(std::mem::size_of::<Line>() == 64 && std::mem::align_of::<Line>() == 64);

/// A [`Line`] that threads share: eight [`AtomicU64`](std::sync::atomic::AtomicU64) words,
/// 64-byte aligned, the same bits in the same order (an atomic blocked filter's block).
/// [`LocalKernel::contains_shared`] answers from it at the cost of a [`Line`] lookup.
#[derive(Debug, Default)]
#[repr(C, align(64))]
pub struct SharedLine(pub [std::sync::atomic::AtomicU64; 8]);

const _: () =
    assert!(std::mem::size_of::<SharedLine>() == 64 && std::mem::align_of::<SharedLine>() == 64);

impl SharedLine {
    /// A shared line holding `line`'s words.
    pub fn new(line: Line) -> Self {
        SharedLine(line.0.map(std::sync::atomic::AtomicU64::new))
    }

    /// The eight words, each read once with a relaxed load.
    #[inline(always)]
    pub fn load(&self) -> [u64; 8] {
        std::array::from_fn(|i| self.0[i].load(std::sync::atomic::Ordering::Relaxed))
    }
}

/// `n` zeroed [`Line`]s from the allocator's zeroed allocation (`calloc`), so a large table
/// costs microseconds to create — the operating system supplies zero pages as they are first
/// touched — instead of a pass writing every byte. `None` if `n` lines do not fit in memory
/// or the allocator refuses.
///
/// The memory is asked for with 16-byte alignment and 48 bytes to spare, and the lines start
/// at its first 64-byte boundary ([`Lines`]): asked for with the lines' own 64-byte
/// alignment, the standard library's Unix allocator does not call `calloc` but allocates and
/// then clears every byte itself — 7 ms for a 12 MiB table (10^7 keys at 1 %) where
/// `calloc` of fresh pages takes 5–9 µs. (After the process has freed tables of that size,
/// glibc may serve the next from reused memory, which it must clear: then it costs what
/// writing the table costs.)
///
/// ```
/// let v = bloomlab_core::simd::zeroed_lines(1 << 20).unwrap(); // 64 MiB, not written
/// assert_eq!(v.len(), 1 << 20);
/// assert!(v[12_345].0.iter().all(|&w| w == 0));
/// assert_eq!(v.as_ptr() as usize % 64, 0);
/// ```
pub fn zeroed_lines(n: usize) -> Option<Lines> {
    // An empty table still holds one line's memory, its spare line ([`Lines::fastrange`]).
    let bytes = n
        .max(1)
        .checked_mul(std::mem::size_of::<Line>())?
        .checked_add(LINES_SLACK)?;
    let layout = std::alloc::Layout::from_size_align(bytes, LINES_ALLOC_ALIGN).ok()?;
    // SAFETY: `layout` has a non-zero size (at least 64 + 48 bytes, for `n` = 0 too).
    let raw = std::ptr::NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) })?;
    let offset = raw.as_ptr().align_offset(std::mem::align_of::<Line>());
    // A 16-byte aligned address is at most 48 bytes below the next 64-byte boundary.
    if offset > LINES_SLACK {
        // SAFETY: `raw` was allocated just above with `layout`.
        unsafe { std::alloc::dealloc(raw.as_ptr(), layout) };
        return None;
    }
    // SAFETY: `raw + offset` is 64-byte aligned and `offset + 64·max(n, 1) ≤ bytes`, inside the
    // allocation.
    let start = unsafe { raw.add(offset) }.cast::<Line>();
    Some(Lines {
        start,
        len: n,
        raw,
        layout,
    })
}

/// Alignment [`zeroed_lines`] asks the allocator for: what `calloc` returns, so that
/// `alloc_zeroed` goes to `calloc`.
const LINES_ALLOC_ALIGN: usize = 16;
/// Bytes [`zeroed_lines`] asks for beyond the lines: the most a 16-byte aligned address can
/// be below a 64-byte boundary.
const LINES_SLACK: usize = std::mem::align_of::<Line>() - LINES_ALLOC_ALIGN;

/// An owned, 64-byte aligned table of [`Line`]s (or of [`SharedLine`]s, the same bits
/// shared by threads): the lines of a zeroed allocation of [`zeroed_lines`], or of a
/// `Vec<Line>`. Derefs to `[T]` (one pointer and one length, as a `Vec`: no test per access);
/// clones as a `Vec`; [`cast`](Lines::cast) turns a table of one kind into the other without
/// a copy.
pub struct Lines<T: LineKind = Line> {
    /// The first of `len` lines, inside the allocation `raw` of `layout`, owned; with
    /// `len = 0`, one zero line all the same (the spare line of [`fastrange`](Lines::fastrange)).
    start: std::ptr::NonNull<T>,
    len: usize,
    raw: std::ptr::NonNull<u8>,
    /// Never zero-sized: every table owns an allocation.
    layout: std::alloc::Layout,
}

/// The two kinds of line a [`Lines`] table holds: 64 bytes, 64-byte aligned, valid when
/// all-zero, and the same eight 64-bit words in the same order ([`Line`] and [`SharedLine`];
/// sealed).
///
/// # Safety
/// Implementors must have exactly that layout and bit validity.
pub unsafe trait LineKind: sealed::Sealed + Sized {}

// SAFETY: `Line` is `repr(C, align(64))` over `[u64; 8]` (asserted above).
unsafe impl LineKind for Line {}
// SAFETY: `SharedLine` is `repr(C, align(64))` over `[AtomicU64; 8]` (asserted above), and an
// `AtomicU64` has the size, alignment and bit validity of a `u64`.
unsafe impl LineKind for SharedLine {}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::Line {}
    impl Sealed for super::SharedLine {}
}

impl<T: LineKind> Lines<T> {
    /// The same table as lines of kind `U`, without a copy: an owned filter's table becomes
    /// an atomic filter's and back in O(1). Sound because the table is owned (no reference
    /// into it exists) and both kinds have the same layout and bits.
    pub fn cast<U: LineKind>(self) -> Lines<U> {
        let this = std::mem::ManuallyDrop::new(self);
        Lines {
            start: this.start.cast(),
            len: this.len,
            raw: this.raw,
            layout: this.layout,
        }
    }
}

// SAFETY: `Lines` owns its lines exactly as a `Vec<T>` does (no aliasing pointer exists
// outside it; shared access is only through `&[T]`), and both line kinds are `Send + Sync`.
unsafe impl<T: LineKind + Send> Send for Lines<T> {}
// SAFETY: as above.
unsafe impl<T: LineKind + Sync> Sync for Lines<T> {}

impl<T: LineKind> Lines<T> {
    /// Line `⌊x · len / 2^32⌋` of the table (fastrange of a 32-bit `x`, Lemire 2019): always
    /// a line of the table, so no bounds test — which costs a lookup in cache 5 % (one
    /// loop with sbbf-rs-safe, 2-vCPU AMD EPYC, Zen 5, 2 000 and 10^5 keys: 1.05 and 1.07×
    /// its time with the test, 0.99 and 1.03× without). With fewer than `2^32` lines the
    /// product fits in 64 bits and the index is below `len`; with more, the wrapped
    /// product's high half is below `2^32 ≤ len` (lines past `2^32` are not reached). An empty
    /// table gives its spare line, which lies outside `0..len`: the slice never shows it, only
    /// `fastrange` reaches it (every table holds at least one line's memory; the filters never
    /// have an empty table).
    #[inline(always)]
    pub fn fastrange(&self, x: u32) -> &T {
        let i = self.fastrange_index(x);
        // SAFETY: `i < len` (see `fastrange_index`), and `start` points to `len` lines; or
        // `len = 0` and `i = 0`, and `start` points to the table's spare line.
        unsafe { &*self.start.as_ptr().add(i) }
    }

    /// [`fastrange`](Self::fastrange), mutably.
    #[inline(always)]
    pub fn fastrange_mut(&mut self, x: u32) -> &mut T {
        let i = self.fastrange_index(x);
        // SAFETY: as in `fastrange`; `&mut self` makes the borrow unique.
        unsafe { &mut *self.start.as_ptr().add(i) }
    }

    /// The index of [`fastrange`](Self::fastrange): below `len` when `len > 0`, 0 when the
    /// table is empty.
    #[inline(always)]
    fn fastrange_index(&self, x: u32) -> usize {
        ((u64::from(x).wrapping_mul(self.len as u64)) >> 32) as usize
    }
}

impl<T: LineKind> std::ops::Deref for Lines<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `start` points to `len` initialised lines (zeroed memory is a valid `Line`)
        // inside the allocation this value owns, alive until it drops.
        unsafe { std::slice::from_raw_parts(self.start.as_ptr(), self.len) }
    }
}

impl<T: LineKind> std::ops::DerefMut for Lines<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in `deref`; `&mut self` makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.start.as_ptr(), self.len) }
    }
}

impl<T: LineKind> Drop for Lines<T> {
    fn drop(&mut self) {
        if self.layout.size() != 0 {
            // SAFETY: `raw` was allocated by the global allocator with `layout` (by
            // `zeroed_lines`, or by the `Vec` it was taken from) and is freed once, here
            // (`Line` has no destructor to run).
            unsafe { std::alloc::dealloc(self.raw.as_ptr(), self.layout) };
        }
    }
}

impl From<Vec<Line>> for Lines<Line> {
    /// The vector's allocation, taken over without a copy.
    fn from(v: Vec<Line>) -> Self {
        if v.is_empty() {
            // No line to stand for the spare one ([`Lines::fastrange`]): an empty table of
            // its own, which has it.
            return zeroed_lines(0).unwrap_or_else(|| {
                std::alloc::handle_alloc_error(std::alloc::Layout::new::<Line>())
            });
        }
        let mut v = std::mem::ManuallyDrop::new(v);
        let (len, cap) = (v.len(), v.capacity());
        let start = std::ptr::NonNull::new(v.as_mut_ptr()).expect("a Vec's pointer is non-null");
        // A `Vec<Line>` with capacity `cap > 0` (here `cap ≥ len ≥ 1`) holds an allocation of
        // exactly this layout.
        let layout = std::alloc::Layout::array::<Line>(cap).expect("the Vec exists");
        Lines {
            start,
            len,
            raw: start.cast(),
            layout,
        }
    }
}

impl FromIterator<Line> for Lines<Line> {
    fn from_iter<I: IntoIterator<Item = Line>>(iter: I) -> Self {
        Lines::from(iter.into_iter().collect::<Vec<Line>>())
    }
}

impl<'a, T: LineKind> IntoIterator for &'a Lines<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T: LineKind> IntoIterator for &'a mut Lines<T> {
    type Item = &'a mut T;
    type IntoIter = std::slice::IterMut<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

impl Clone for Lines<Line> {
    fn clone(&self) -> Self {
        Lines::from(self.to_vec())
    }
}

impl PartialEq for Lines<Line> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Lines<Line> {}

impl<T: LineKind + std::fmt::Debug> std::fmt::Debug for Lines<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// Batched-operation driver: for every item, in order, call `answer(i, hash(&items[i]))`,
/// but compute each hash `D` items early and pass it to `prefetch_for` right away, so the
/// memory the hash points at is being fetched while the `D` items before it are answered.
/// `hash` is called exactly once per item (plus once more for each of the first `D`
/// positions past the end when `items.len() < D`, whose results are prefetched and dropped);
/// `D = 0` answers each item as soon as it is hashed.
///
/// ```
/// use bloomlab_core::simd::pipeline;
///
/// let table: Vec<u64> = (0..1000).map(|i| i * i).collect();
/// let keys = [3usize, 999, 0, 42];
/// let mut out = vec![0u64; keys.len()];
/// pipeline::<_, _, 16>(
///     &keys,
///     |&k| k % table.len(),                            // "hash": the slot
///     |&slot| bloomlab_core::simd::prefetch(&table[slot]), // start fetching it
///     |i, slot| out[i] = table[slot],                   // answer, D items later
/// );
/// assert_eq!(out, [9, 998_001, 0, 1764]);
/// ```
#[inline(always)]
pub fn pipeline<T, H: Copy, const D: usize>(
    items: &[T],
    mut hash: impl FnMut(&T) -> H,
    mut prefetch_for: impl FnMut(&H),
    mut answer: impl FnMut(usize, H),
) {
    let n = items.len();
    if n == 0 {
        return;
    }
    if D == 0 {
        for (i, item) in items.iter().enumerate() {
            answer(i, hash(item));
        }
        return;
    }
    let mut ring: [H; D] = std::array::from_fn(|i| {
        let h = hash(&items[i.min(n - 1)]);
        prefetch_for(&h);
        h
    });
    for i in 0..n {
        let slot = i % D;
        let h = ring[slot];
        if let Some(ahead) = items.get(i + D) {
            let a = hash(ahead);
            prefetch_for(&a);
            ring[slot] = a;
        }
        answer(i, h);
    }
}

/// Keys per call of a chunked hash in [`pipeline_chunks`].
pub const CHUNK: usize = 8;

/// [`pipeline`] for hashes computed [`CHUNK`] items at a time: `hash_chunk(ctx, items, out)`
/// fills `out[i]` with the hash of `items[i]` (at most [`CHUNK`] of them), for a scheme that
/// hashes eight keys in vector lanes ([`crate::hash::HashScheme::LANES`]). Each chunk is
/// hashed and its prefetches issued `D` items before the chunk is answered; `answer` sees
/// the items in order, exactly as with [`pipeline`], so both drivers give the same results.
/// `ctx` is lent to every callback (shared to the hash and the prefetch, exclusively to
/// `answer`), so an insert can write the table the prefetch reads. Panics unless `D` is a
/// positive multiple of [`CHUNK`]; `fill` is any value of `H`: it fills the ring before
/// the first hashes arrive and is never answered.
///
/// ```
/// use bloomlab_core::simd;
///
/// let items: Vec<u64> = (0..21).collect();
/// let mut out = vec![0; items.len()];
/// simd::pipeline_chunks::<_, u64, u64, 16>(
///     &mut out,
///     &items,
///     0,
///     |_, chunk, hashes| for (h, x) in hashes.iter_mut().zip(chunk) { *h = x * x },
///     |_, _| {},
///     |out, i, h| out[i] = h,
/// );
/// assert_eq!(out, items.iter().map(|x| x * x).collect::<Vec<_>>());
/// ```
#[inline(always)]
pub fn pipeline_chunks<C: ?Sized, T, H: Copy, const D: usize>(
    ctx: &mut C,
    items: &[T],
    fill: H,
    mut hash_chunk: impl FnMut(&C, &[T], &mut [H]),
    mut prefetch_for: impl FnMut(&C, &H),
    mut answer: impl FnMut(&mut C, usize, H),
) {
    // A constant condition: the check compiles away where it holds.
    assert!(
        D >= CHUNK && D % CHUNK == 0,
        "D must be a multiple of CHUNK"
    );
    let n = items.len();
    let mut ring = [fill; D];
    // Hash items [from, from + CHUNK) ∩ [0, n) into the ring and prefetch for them.
    let mut ahead = |ctx: &C, from: usize, ring: &mut [H; D]| {
        let to = (from + CHUNK).min(n);
        if from < to {
            let slot = from % D;
            let dst = &mut ring[slot..slot + (to - from)];
            hash_chunk(ctx, &items[from..to], dst);
            for h in dst.iter() {
                prefetch_for(ctx, h);
            }
        }
    };
    for from in (0..D.min(n)).step_by(CHUNK) {
        ahead(ctx, from, &mut ring);
    }
    for start in (0..n).step_by(CHUNK) {
        let slot = start % D;
        let mut current = [fill; CHUNK];
        current.copy_from_slice(&ring[slot..slot + CHUNK]);
        ahead(ctx, start + D, &mut ring);
        for (i, h) in (start..n.min(start + CHUNK)).zip(current) {
            answer(ctx, i, h);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Local 512-bit block
// ---------------------------------------------------------------------------------------

/// Bit of the 512-bit block probed by probe `i` of `h`: the top 9 bits of `h · M^i`.
#[inline(always)]
fn local_bit(h: u32, i: usize) -> u32 {
    h.wrapping_mul(LOCAL_POWERS[i]) >> 23
}

/// The `k` probes of `h` in a 512-bit block, as (64-bit word index, one-bit mask): the
/// layout's definition, which every kernel must match. `k` is clamped to `1..=64`.
#[inline(always)]
pub fn local_probes(h: u32, k: u32) -> impl Iterator<Item = (usize, u64)> {
    let k = k.clamp(1, LOCAL_MAX_PROBES) as usize;
    (0..k).map(move |i| {
        let bit = local_bit(h, i);
        ((bit >> 6) as usize, 1u64 << (bit & 63))
    })
}

/// All `k` probes of `h` hit set bits of `block` (portable definition). `k` is clamped to
/// `1..=64`.
#[inline]
pub fn local_contains_scalar(block: &[u64; 8], h: u32, k: u32) -> bool {
    // `&`, not `&&`: no branch per probe.
    local_probes(h, k).fold(true, |all, (w, mask)| all & (block[w] & mask != 0))
}

/// Set the `k` probe bits of `h` in `block` (portable definition); returns whether any of
/// them was still zero. `k` is clamped to `1..=64`.
#[inline]
pub fn local_insert_scalar(block: &mut [u64; 8], h: u32, k: u32) -> bool {
    let mut new = 0u64;
    for (w, mask) in local_probes(h, k) {
        new |= mask & !block[w];
        block[w] |= mask;
    }
    new != 0
}

/// [`local_contains_scalar`], with AVX2 when the CPU has it (same answer).
#[inline]
pub fn local_contains(block: &[u64; 8], h: u32, k: u32) -> bool {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of this
        // `#[target_feature(enable = "avx2")]` function beyond its safe signature.
        return unsafe { avx2::local_contains(block, h, k) };
    }
    local_contains_scalar(block, h, k)
}

/// [`local_insert_scalar`], with AVX2 when the CPU has it (same block, same result).
#[inline]
pub fn local_insert(block: &mut [u64; 8], h: u32, k: u32) -> bool {
    #[cfg(target_arch = "x86_64")]
    if has_avx2() {
        // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of this
        // `#[target_feature(enable = "avx2")]` function beyond its safe signature.
        return unsafe { avx2::local_insert(block, h, k) };
    }
    local_insert_scalar(block, h, k)
}

/// A local-block probe kernel as a type, so that code generic over it compiles to one
/// specialised body per kernel: [`PortableProbe`] (the scalar definition) or `Avx2Probe`
/// (x86-64 only, handed out by [`run_local`] after the CPU was found to have AVX2).
pub trait LocalProbe: Copy {
    /// `"avx2"` or `"portable"`.
    const NAME: &'static str;
    /// [`local_contains_scalar`]'s answer.
    fn contains(self, block: &[u64; 8], h: u32, k: u32) -> bool;
    /// [`local_insert_scalar`]'s result and block.
    fn insert(self, block: &mut [u64; 8], h: u32, k: u32) -> bool;
}

/// The scalar local-block kernels ([`local_contains_scalar`], [`local_insert_scalar`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct PortableProbe;

impl LocalProbe for PortableProbe {
    const NAME: &'static str = "portable";
    #[inline(always)]
    fn contains(self, block: &[u64; 8], h: u32, k: u32) -> bool {
        local_contains_scalar(block, h, k)
    }
    #[inline(always)]
    fn insert(self, block: &mut [u64; 8], h: u32, k: u32) -> bool {
        local_insert_scalar(block, h, k)
    }
}

/// The AVX2 local-block kernels. A value exists only inside [`run_local`], which builds one
/// (the field is private) after `is_x86_feature_detected!("avx2")` said yes, inside a
/// function compiled with AVX2 enabled into which the kernels inline — or, in a build with
/// AVX2 enabled at compile time, anywhere.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Debug)]
pub struct Avx2Probe(());

#[cfg(target_arch = "x86_64")]
impl LocalProbe for Avx2Probe {
    const NAME: &'static str = "avx2";
    #[inline(always)]
    fn contains(self, block: &[u64; 8], h: u32, k: u32) -> bool {
        // SAFETY: an `Avx2Probe` is only built by `run_local`, once the CPU was found to have
        // AVX2 or in a build for AVX2 CPUs only: the kernel's only requirement.
        unsafe { avx2::local_contains(block, h, k) }
    }
    #[inline(always)]
    fn insert(self, block: &mut [u64; 8], h: u32, k: u32) -> bool {
        // SAFETY: as in `contains`.
        unsafe { avx2::local_insert(block, h, k) }
    }
}

/// Work generic over the local-block kernel, run by [`run_local`] with the best one this
/// CPU has. Write `run` `#[inline(always)]` so its whole body — hashing, block index,
/// probes, the loop of a batch — is compiled inside the AVX2-enabled caller, with the
/// kernels inlined into it: no call per key.
pub trait LocalTask {
    /// What the work returns.
    type Output;
    /// Do the work with kernel `probe`.
    fn run<P: LocalProbe>(self, probe: P) -> Self::Output;
}

/// Run `task` with the AVX2 kernels if this CPU has them (one cached feature test per
/// call, then one direct call into a body compiled with AVX2 enabled), else with
/// [`PortableProbe`]. Both give the same answers and blocks. Built with AVX2 enabled at
/// compile time (`-C target-feature=+avx2`, or `-C target-cpu=native` on such a CPU), the
/// test and the call disappear: the task inlines into its caller.
///
/// ```
/// use bloomlab_core::simd::{self, LocalProbe, LocalTask};
///
/// struct Count<'a>(&'a [[u64; 8]], &'a [u32]);
/// impl LocalTask for Count<'_> {
///     type Output = usize;
///     #[inline(always)]
///     fn run<P: LocalProbe>(self, probe: P) -> usize {
///         self.1.iter().zip(self.0).filter(|&(&h, b)| probe.contains(b, h, 6)).count()
///     }
/// }
/// let mut block = [0u64; 8];
/// simd::local_insert(&mut block, 7, 6);
/// assert_eq!(simd::run_local(Count(&[block, [0; 8]], &[7, 7])), 1);
/// ```
#[inline(always)]
pub fn run_local<T: LocalTask>(task: T) -> T::Output {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    {
        // Every CPU this build runs on has AVX2 (the compiler was told so).
        task.run(Avx2Probe(()))
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
    {
        #[cfg(target_arch = "x86_64")]
        if has_avx2() {
            // SAFETY: the CPU supports AVX2 (checked just above), the only requirement of
            // this `#[target_feature(enable = "avx2")]` function.
            return unsafe { run_avx2(task) };
        }
        task.run(PortableProbe)
    }
}

/// `task` with [`Avx2Probe`], compiled with AVX2 enabled so the kernels inline into it.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(all(target_arch = "x86_64", not(target_feature = "avx2")))]
#[target_feature(enable = "avx2")]
unsafe fn run_avx2<T: LocalTask>(task: T) -> T::Output {
    task.run(Avx2Probe(()))
}

// ---------------------------------------------------------------------------------------
// Single operations without a call: inline-assembly kernels
// ---------------------------------------------------------------------------------------
//
// A function compiled with `#[target_feature(enable = "avx2")]` cannot be inlined into one
// compiled without it, so through `run_local` every single lookup costs a call, a return and
// the registers saved around them. An `asm!` block has no such limit: the compiler inlines it
// wherever it is used and does not need AVX2 enabled to do so (it only passes registers in
// and out; the CPU is what must support the instructions). So the single-key paths test a
// byte the filter holds ([`LocalKernel`], chosen when the filter was built) and run the
// eight-probe kernel inline. The blocks end with `vzeroupper`, so no dirty upper state leaks
// into the surrounding SSE code; as it clears the upper halves of ymm0–ymm15 whatever held
// them, every block declares all sixteen clobbered (through their xmm names: the whole
// register). Declaring only the registers a block wrote went wrong in builds with AVX
// enabled (`-C target-cpu=native`), where the compiler kept a 256-bit value across a kernel
// in a register `vzeroupper` then cut to 128 bits: `inline_kernels_agree_with_the_scalar_definition`
// failed there. In builds without AVX the compiler keeps only 128-bit values, which
// `vzeroupper` leaves alone, so the longer list changes nothing but the allocation.

/// `LANE_ONES[a]`: `1` in lanes `0..min(a, 8)`, `0` in the others. Shifting a row left by
/// each probe's bit offset gives that probe's one-bit mask, zero for lanes at or past `k` —
/// one operation for the mask and the `k` limit together. Sixteen rows so that `a & 15` is
/// always a valid index (no bounds test per call). A `const`, so each use is a PC-relative
/// address in the caller (a `static` would be reached through the global offset table: one
/// more load per call).
#[cfg(target_arch = "x86_64")]
const LANE_ONES: [[u32; 8]; 16] = {
    let mut t = [[0u32; 8]; 16];
    let mut a = 0;
    while a < 16 {
        let mut i = 0;
        while i < a && i < 8 {
            t[a][i] = 1;
            i += 1;
        }
        a += 1;
    }
    t
};

/// The inserts' constants for one `k` (the AVX-512 inserts' and the AVX2 ones'), reached
/// through one address `{c}` in the assembly (each 64-byte row aligned): `LOCAL_POWERS[0..16]`; the last bit `32·j + 31` of
/// each of a line's sixteen 32-bit words; `past`, 0 in lanes `0..k` and `2^32 − 1` in lanes
/// `k..16` (ORed into the probes' bit positions, it sends every lane at or past `k` out of
/// the line); and the top bit `2^31`.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
#[repr(C, align(64))]
struct InsertConsts {
    pow: [u32; 16],
    tops: [u32; 16],
    past: [u32; 16],
    top_bit: u32,
    _pad: [u32; 7],
    /// `LANE_ONES[k]` (the one-round AVX-512 lookup, `k ≤ 8`).
    ones: [u32; 8],
}

#[cfg(target_arch = "x86_64")]
impl std::fmt::Debug for InsertConsts {
    /// The row's `k` (its first lane past `k`), not its 64 numbers.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let k = self.past.iter().take_while(|&&p| p == 0).count();
        f.debug_struct("InsertConsts").field("k", &k).finish()
    }
}

/// `INSERT_CONSTS[k]` for `k` in `0..=16`. A `const` (see `LANE_ONES`).
#[cfg(target_arch = "x86_64")]
const INSERT_CONSTS: [InsertConsts; 17] = {
    let mut pow = [0u32; 16];
    let mut tops = [0u32; 16];
    let mut j = 0;
    while j < 16 {
        pow[j] = LOCAL_POWERS[j];
        tops[j] = 32 * j as u32 + 31;
        j += 1;
    }
    let row = InsertConsts {
        pow,
        tops,
        past: [0; 16],
        top_bit: 1 << 31,
        _pad: [0; 7],
        ones: [0; 8],
    };
    let mut t = [row; 17];
    let mut k = 0;
    while k < 17 {
        let mut i = k;
        while i < 16 {
            t[k].past[i] = u32::MAX;
            i += 1;
        }
        t[k].ones = LANE_ONES[k & 15];
        k += 1;
    }
    t
};

/// The local-block kernel a filter chose when it was built, for its `k`: the AVX2
/// inline-assembly one (one vector round for `k ≤ 8`, two for `k ≤ 16`, the
/// [`local_contains`] loop beyond) when the CPU has AVX2, else the portable one. A filter
/// keeps it in a field, so each single operation tests one byte it already holds (no
/// global flag to load, no range test of `k`) and runs the kernel inline, with no call.
/// Every kernel gives the same blocks and answers as [`local_contains_scalar`] and
/// [`local_insert_scalar`] for the `k` it was chosen for.
///
/// ```
/// use bloomlab_core::simd::{self, LocalKernel};
///
/// let kernel = LocalKernel::detect(9);
/// let mut block = [0u64; 8];
/// assert!(kernel.insert(&mut block, 0xdead_beef, 9)); // some bit was new
/// assert!(kernel.contains(&block, 0xdead_beef, 9));
/// let mut other = [0u64; 8];
/// LocalKernel::portable().insert(&mut other, 0xdead_beef, 9);
/// assert_eq!(block, other);
/// assert!(simd::local_contains_scalar(&block, 0xdead_beef, 9));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LocalKernel {
    mode: KernelMode,
    /// The `LANE_ONES` row of the last round for the `k` the kernel was chosen for (row
    /// `k` for one round, `k − 8` for two): looked up once here, so a lookup loads one
    /// pointer instead of computing the row's address from `k`.
    lanes: &'static [u32; 8],
    /// The inserts' constants for `k` (AVX-512 and AVX2).
    #[cfg(target_arch = "x86_64")]
    consts: &'static InsertConsts,
    /// How many probe pairs the AVX-512 inserts build ([`probe_pairs`]); never 3 in the modes
    /// without AVX-512 (0 there, 4 or 8 from `detect_every_pair`).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    pairs: u8,
    /// How many probes of their last round the AVX2 inserts build into the line's new bits
    /// ([`store_lanes`]): 2, 4, 6 or 8 (0 from [`portable`](Self::portable); the portable
    /// kernels do not read it).
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    stores: u8,
}

/// The probes of the last round an AVX2 insert of `k` probes builds: the round's probes
/// rounded up to even (2, 4, 6 or 8), so that one of four kernels per round serves every
/// `k`; a lane past `k` it takes is forced to a position that sets no bit.
fn store_lanes(k: u32) -> u8 {
    let last = if k > 8 { k - 8 } else { k };
    (last.clamp(1, 8).div_ceil(2) * 2) as u8
}

/// The probe pairs an AVX-512 insert of `k` probes builds: three for `k ≤ 6` (the 1 % and 3 %
/// targets' six and five probes), four for `k = 7, 8`, `⌈k/2⌉` for `9 ≤ k ≤ 16`; the lanes
/// past `k` in the last pair carry no bit. Each pair left out saves five 512-bit
/// instructions per insert.
fn probe_pairs(k: u32) -> u8 {
    if k <= 6 {
        3
    } else {
        k.div_ceil(2).min(8) as u8
    }
}

/// The `LANE_ONES` row the inline kernels use for the last round of `k` probes.
fn last_round_lanes(k: u32) -> &'static [u32; 8] {
    #[cfg(target_arch = "x86_64")]
    {
        let rows: &'static [[u32; 8]; 16] = &LANE_ONES;
        &rows[(if k > 8 { k - 8 } else { k } & 15) as usize]
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = k;
        &[0; 8]
    }
}

/// The inserts' constants for `k` probes (AVX-512 and AVX2).
#[cfg(target_arch = "x86_64")]
fn insert_consts(k: u32) -> &'static InsertConsts {
    let rows: &'static [InsertConsts; 17] = &INSERT_CONSTS;
    &rows[k.min(16) as usize]
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum KernelMode {
    /// `k ≤ 8` on a CPU with AVX-512F: lookups fetch the probed words with one 16-lane
    /// permute of the whole line, inserts build the new bits in one 512-bit register.
    Avx512Round1,
    /// AVX2 inline assembly, one round (`k ≤ 8`).
    Avx2Round1,
    /// `9 ≤ k ≤ 16` on a CPU with AVX-512F: lookups run all sixteen probe lanes in one
    /// 512-bit round, inserts build the `⌈k/2⌉` probe pairs `k` needs in one 512-bit
    /// register.
    Avx512Round2,
    /// AVX2 inline assembly, two rounds (`9 ≤ k ≤ 16`).
    Avx2Round2,
    /// AVX2 through [`local_contains`] / [`local_insert`] (`k > 16`).
    Avx2Call,
    /// [`local_contains_scalar`] / [`local_insert_scalar`].
    Portable,
}

impl LocalKernel {
    /// The fastest kernel this CPU runs for `k` probes per key.
    pub fn detect(k: u32) -> Self {
        let kernel = Self::avx2(k);
        let wide = match kernel.mode {
            KernelMode::Avx2Round1 => KernelMode::Avx512Round1,
            KernelMode::Avx2Round2 => KernelMode::Avx512Round2,
            _ => return kernel,
        };
        if !has_avx512f() {
            return kernel;
        }
        LocalKernel {
            mode: wide,
            pairs: probe_pairs(k),
            ..kernel
        }
    }

    /// The fastest kernel for `k` that needs no more than AVX2 (the portable one without
    /// AVX2): what [`detect`](Self::detect) returns on an AVX2-only CPU, for tests and
    /// measurements beside the AVX-512 one.
    pub fn avx2(k: u32) -> Self {
        let mode = if !has_avx2() {
            KernelMode::Portable
        } else if k == 0 {
            // Clamped to 1 by the scalar definition; the called kernel clamps the same way.
            KernelMode::Avx2Call
        } else if k <= 8 {
            KernelMode::Avx2Round1
        } else if k <= 16 {
            KernelMode::Avx2Round2
        } else {
            KernelMode::Avx2Call
        };
        LocalKernel {
            mode,
            lanes: last_round_lanes(k),
            #[cfg(target_arch = "x86_64")]
            consts: insert_consts(k),
            pairs: 0,
            stores: store_lanes(k),
        }
    }

    /// [`detect`](Self::detect)'s kernel with its AVX-512 inserts building every probe pair of
    /// their round — four for `k ≤ 8`, eight for `9 ≤ k ≤ 16` — whatever `k` (the lanes past
    /// `k` carry no bit): the same bits and answers, for measuring what building only
    /// `⌈k/2⌉` pairs saves (`examples/insert_pairs.rs` of `bloomlab-blocked`).
    pub fn detect_every_pair(k: u32) -> Self {
        let kernel = Self::detect(k);
        let pairs = if kernel.mode == KernelMode::Avx512Round2 {
            8
        } else {
            4
        };
        LocalKernel { pairs, ..kernel }
    }

    /// The portable scalar kernel, whatever the CPU and `k`.
    pub fn portable() -> Self {
        LocalKernel {
            mode: KernelMode::Portable,
            lanes: last_round_lanes(0),
            #[cfg(target_arch = "x86_64")]
            consts: insert_consts(0),
            pairs: 0,
            stores: 0,
        }
    }

    /// `"avx512"`, `"avx2"` or `"portable"`.
    pub fn name(self) -> &'static str {
        match self.mode {
            KernelMode::Portable => "portable",
            KernelMode::Avx512Round1 | KernelMode::Avx512Round2 => "avx512",
            _ => "avx2",
        }
    }

    /// [`local_contains_scalar`]'s answer for the `k` this kernel was chosen for, inlined
    /// into the caller. (Pass that `k`: the inline-assembly kernels use the lane row chosen
    /// with them and ignore the argument, the others read it, so with another `k` the answer
    /// may differ from the scalar one — but every memory access stays inside `block` and the
    /// kernel's tables.)
    #[inline(always)]
    pub fn contains(self, block: &[u64; 8], h: u32, k: u32) -> bool {
        // The common cases first, as plain compares and branches (a `match` compiles to a
        // jump table: one indirect jump per lookup).
        #[cfg(target_arch = "x86_64")]
        {
            if self.mode == KernelMode::Avx512Round1 {
                // SAFETY: this mode is chosen only by `detect`, on a CPU with AVX-512F (and
                // so AVX2).
                return unsafe { asm_contains_round1_avx512(block.as_ptr(), h, self.consts) };
            }
            if self.mode == KernelMode::Avx2Round1 {
                // SAFETY: this mode is chosen only by `avx2`, on a CPU with AVX2.
                return unsafe { asm_contains_round1(block.as_ptr(), h, self.lanes) };
            }
        }
        self.contains_other(block, h, k)
    }

    /// [`contains`](Self::contains) on a block that other threads may be ORing bits into
    /// (an atomic filter's), inlined into the caller: the same answer as the kernel run on
    /// the eight words each read once with a relaxed load, at the cost of the owned
    /// filter's lookup (one 64-byte or two 32-byte vector loads of the line, no copy).
    ///
    /// The inline-assembly kernels read the line straight from the atomics' memory. That is
    /// sound because the block is 64-byte aligned and x86-64 loads of aligned data never
    /// tear below 8 bytes (each 8-byte part of a vector load reads a value the word held at
    /// some point of its modification order — the guarantee a relaxed load gives), the
    /// `asm!` block is opaque to the compiler (it assumes only that the block reads memory),
    /// and bits only ever go from 0 to 1, so any mix of old and new words is a set of bits
    /// that were all inserted. The other kernels read the words with relaxed loads.
    #[inline(always)]
    pub fn contains_shared(&self, block: &SharedLine, h: u32, k: u32) -> bool {
        // The common cases first, as in `contains`.
        #[cfg(target_arch = "x86_64")]
        {
            let line = block.0.as_ptr().cast::<u64>();
            if self.mode == KernelMode::Avx512Round1 {
                // SAFETY: this mode is chosen only on a CPU with AVX-512F; the pointer is to
                // the 64 bytes of a live, 64-byte aligned `SharedLine` (an `AtomicU64` has
                // the size, alignment and bit validity of a `u64`), read by one aligned
                // 64-byte vector load, atomic per 8-byte word on x86-64 (see above).
                return unsafe { asm_contains_round1_avx512(line, h, self.consts) };
            }
            if self.mode == KernelMode::Avx2Round1 {
                // SAFETY: as above, on a CPU with AVX2, with two aligned 32-byte loads.
                return unsafe { asm_contains_round1(line, h, self.lanes) };
            }
        }
        self.contains_shared_other(block, h, k)
    }

    /// The other kernels, out of line: inlined (even the two-round one alone), they keep
    /// LLVM from moving the kernel test out of a loop of lookups, which then costs 8–10 % in
    /// L1 at `k ≤ 8` (a taken branch per lookup); out of line, `9 ≤ k ≤ 16` pays a call.
    #[inline(never)]
    fn contains_shared_other(&self, block: &SharedLine, h: u32, k: u32) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            let line = block.0.as_ptr().cast::<u64>();
            if self.mode == KernelMode::Avx512Round2 {
                // SAFETY: as in `contains_shared` (one aligned 64-byte load).
                return unsafe { asm_contains_round2_avx512(line, h, self.lanes) };
            }
            if self.mode == KernelMode::Avx2Round2 {
                // SAFETY: as in `contains_shared`.
                return unsafe { asm_contains_round2(line, h, self.lanes) };
            }
        }
        self.contains_other(&block.load(), h, k)
    }

    /// The other kernels, out of line (see
    /// [`contains_shared_other`](Self::contains_shared_other)).
    #[inline(never)]
    fn contains_other(self, block: &[u64; 8], h: u32, k: u32) -> bool {
        match self.mode {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: this mode is chosen only by `detect`, on a CPU with AVX2.
            KernelMode::Avx2Round2 => unsafe { asm_contains_round2(block.as_ptr(), h, self.lanes) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: this mode is chosen only by `detect`, on a CPU with AVX-512F.
            KernelMode::Avx512Round2 => unsafe {
                asm_contains_round2_avx512(block.as_ptr(), h, self.lanes)
            },
            KernelMode::Portable => local_contains_scalar(block, h, k),
            _ => local_contains(block, h, k),
        }
    }

    /// [`local_insert_scalar`]'s block and result for the `k` this kernel was chosen for,
    /// inlined into the caller (see [`contains`](Self::contains)).
    #[inline(always)]
    pub fn insert(&self, block: &mut [u64; 8], h: u32, k: u32) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            // Three pairs only in the one-round AVX-512 mode (`pairs` is 0 in the others):
            // one test of one byte for the 1 % and 3 % targets' kernel.
            if self.pairs == 3 {
                // SAFETY: `pairs` is 3 only in `KernelMode::Avx512Round1`, chosen only by
                // `detect`, on a CPU with AVX-512F.
                return unsafe { asm_insert_round1_avx512_six(block, h, self.consts) };
            }
            if self.mode == KernelMode::Avx512Round1 {
                // SAFETY: this mode is chosen only by `detect`, on a CPU with AVX-512F.
                return unsafe { asm_insert_round1_avx512(block, h, self.consts) };
            }
            if self.mode == KernelMode::Avx2Round1 {
                // SAFETY: this mode is chosen only by `avx2`, on a CPU with AVX2, which sets
                // `consts` to the constants of its `k` and `stores` to `k` rounded up to
                // even: each kernel takes at least the `k` probes.
                return unsafe {
                    // Six first: the 1 % and 3 % targets' six and five probes.
                    // The widest kernel last: it covers any `k ≤ 8`.
                    if self.stores == 6 {
                        asm_insert_round1_l6(block, h, self.consts)
                    } else if self.stores == 4 {
                        asm_insert_round1_l4(block, h, self.consts)
                    } else if self.stores == 2 {
                        asm_insert_round1_l2(block, h, self.consts)
                    } else {
                        asm_insert_round1_l8(block, h, self.consts)
                    }
                };
            }
        }
        self.insert_other(block, h, k)
    }

    /// The other kernels, out of line (as for lookups).
    #[inline(never)]
    fn insert_other(&self, block: &mut [u64; 8], h: u32, k: u32) -> bool {
        match self.mode {
            #[cfg(target_arch = "x86_64")]
            // SAFETY: this mode is chosen only by `avx2`, on a CPU with AVX2, with `consts`
            // those of its `k` and `stores` `k − 8` rounded up to even (as in `insert`).
            KernelMode::Avx2Round2 => unsafe {
                match self.stores {
                    2 => asm_insert_round2_l2(block, h, self.consts),
                    4 => asm_insert_round2_l4(block, h, self.consts),
                    6 => asm_insert_round2_l6(block, h, self.consts),
                    _ => asm_insert_round2_l8(block, h, self.consts),
                }
            },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: this mode is chosen only by `detect`, on a CPU with AVX-512F.
            KernelMode::Avx512Round2 => unsafe {
                match self.pairs {
                    5 => asm_insert_round2_avx512_p5(block, h, self.consts),
                    6 => asm_insert_round2_avx512_p6(block, h, self.consts),
                    7 => asm_insert_round2_avx512_p7(block, h, self.consts),
                    _ => asm_insert_round2_avx512_p8(block, h, self.consts),
                }
            },
            KernelMode::Portable => local_insert_scalar(block, h, k),
            _ => local_insert(block, h, k),
        }
    }
}

/// The first steps of every one-round kernel, as one template string: from `h` (read from
/// memory at `{h}`), the eight probes' 32-bit word indices in `ymm1`, those words of the line
/// at `{blk}` in `ymm2`, and the probes' one-bit masks (zero past `k`, from the `LANE_ONES`
/// row at `{lanes}`) in `ymm3`; `ymm0` is clobbered. See `asm_contains_round1` for the steps.
#[cfg(target_arch = "x86_64")]
macro_rules! round1_words_and_masks {
    () => {
        concat!(
            "vpbroadcastd ymm0, dword ptr [{h}]\n",
            "vpmulld ymm0, ymm0, [{pow}]\n",
            "vpsrld ymm1, ymm0, 28\n",
            "vpermd ymm2, ymm1, [{blk}]\n",
            "vpermd ymm3, ymm1, [{blk} + 32]\n",
            "vblendvps ymm2, ymm2, ymm3, ymm0\n",
            "vpslld ymm3, ymm0, 4\n",
            "vpsrld ymm3, ymm3, 27\n",
            "vmovdqu ymm0, [{lanes}]\n",
            "vpsllvd ymm3, ymm0, ymm3\n",
        )
    };
}

/// The one-round inline lookup (`k ≤ 8`; see [`LocalKernel::contains`] for other `k`).
///
/// `x = h · M^i` lane-wise (`vpmulld` with the first eight powers); the probed 32-bit word is
/// `x >> 28`, fetched from the two halves of the line by two `vpermd` (which use the
/// index's low 3 bits) and a `vblendvps` on `x`'s sign bit (the index's bit 3); the bit inside
/// it is `(x << 4) >> 27`; the masks are the `LANE_ONES[k]` row shifted by those offsets (zero
/// past `k`); one `vptest` answers whether every mask bit is set.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn asm_contains_round1(block: *const u64, h: u32, lanes: &[u32; 8]) -> bool {
    let hit: u8;
    // `h` goes through memory: a broadcast from memory is a plain load, where moving a
    // register into a vector and broadcasting it costs two shuffle-port operations.
    let hm = h;
    // SAFETY: the caller guarantees AVX2. Every address read is inside a live reference:
    // `block` is 64 bytes (reads at offsets 0 and 32, 32 bytes each; `vpermd`'s memory
    // operand needs no alignment), `LOCAL_POWERS` has 64 entries (the first 8 are read), and
    // `lanes` is a 32-byte row. The block only reads memory, uses no stack, and
    // clobbers xmm0–xmm3 (declared) and the flags; `vzeroupper` clears the upper halves it
    // dirtied, so the surrounding SSE code pays no transition penalty.
    unsafe {
        std::arch::asm!(
            round1_words_and_masks!(),
            "vptest ymm2, ymm3",
            "setc {hit}",
            "vzeroupper",
            h = in(reg) &hm,
            pow = in(reg) LOCAL_POWERS.as_ptr(),
            blk = in(reg) block,
            lanes = in(reg) lanes.as_ptr(),
            hit = out(reg_byte) hit,
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
            out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
            options(pure, readonly),
        );
    }
    // `& 1`: see `asm_contains_round1_avx512`.
    hit & 1 != 0
}

/// [`asm_contains_round1`] with the probed words fetched by one AVX-512 `vpermd` of the
/// whole 64-byte line (sixteen 32-bit words, indexed by the low four bits of each lane of
/// `x >> 28` — the index's bit 3 included, so no second permute and no blend), and each
/// probe's mask by one `vprolvd` of the lane row by `x >> 23` (a rotation counts modulo 32,
/// so the shift needs no `& 31`; a lane of 0 past `k` stays 0): eight instructions before
/// `setc`, where the AVX2 one has eleven. The index vector is written with a VEX (256-bit)
/// instruction, which zeroes the upper lanes the 512-bit permute also reads (their results
/// are ignored). The constants (powers and lane row) come from the kernel's `InsertConsts`,
/// one pointer.
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn asm_contains_round1_avx512(block: *const u64, h: u32, c: &InsertConsts) -> bool {
    let hit: u8;
    // `h` goes through memory, as in `asm_contains_round1`: in one loop with sbbf-rs-safe (2-vCPU
    // AMD EPYC, Zen 5; 2 000 and 10^5 keys) the lookup took 1.05 and 1.07× its time so against 1.09
    // and 1.11× with `vpbroadcastd` from the register.
    let hm = h;
    // SAFETY: the caller guarantees AVX-512F. Every address read is inside a live reference:
    // `block` is 64 bytes (one 64-byte read; `vpermd`'s memory operand needs no alignment)
    // and `c` is a 256-byte `InsertConsts` (its powers at 0..32 and lane row at 224..256 are
    // read). The block only reads memory, uses no stack and no mask register, and
    // clobbers zmm0–zmm3 (declared through their xmm names, which the compiler treats as
    // the same registers) and the flags; `vzeroupper` clears the upper parts it dirtied.
    unsafe {
        std::arch::asm!(
            "vpbroadcastd ymm0, dword ptr [{h}]",
            "vpmulld ymm0, ymm0, [{c}]",
            "vpsrld ymm1, ymm0, 28",
            "vpermd zmm2, zmm1, zmmword ptr [{blk}]",
            "vpsrld ymm3, ymm0, 23",
            "vmovdqu ymm0, [{c} + 224]",
            "vprolvd zmm3, zmm0, zmm3",
            "vptest ymm2, ymm3",
            "setc {hit}",
            "vzeroupper",
            h = in(reg) &hm,
            c = in(reg) c,
            blk = in(reg) block,
            hit = out(reg_byte) hit,
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
            out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
            options(pure, readonly),
        );
    }
    // `& 1`: the byte is 0 or 1, and the compiler, told so, turns it into a `bool` with one
    // `and` (for `!= 0` it emits a `test` and a `setne`).
    hit & 1 != 0
}

/// The two-round lookup (`9 ≤ k ≤ 16`) as one AVX-512 round: all sixteen probes' `x` in
/// one 512-bit register (`LOCAL_POWERS[0..16]`), their words fetched by one `vpermd` of the
/// line, their masks from the 16-lane row `LANE_ONES[8] : lanes` (lanes `k..16` zero), the
/// misses `mask & !word` (`vpandnd`) folded to 256 bits and tested by one `vptest`: 14
/// instructions where the AVX2 kernel takes about 22.
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn asm_contains_round2_avx512(block: *const u64, h: u32, lanes: &[u32; 8]) -> bool {
    let hit: u8;
    let hm = h;
    // SAFETY: the caller guarantees AVX-512F. Every address read is inside a live reference:
    // `block` is 64 bytes (one 64-byte read), `LOCAL_POWERS` has 64 entries (the first 16 are
    // read), `LANE_ONES[8]` and `lanes` are 32-byte rows. The block only reads memory, uses
    // no stack and no mask register, and clobbers zmm0–zmm3 (declared through their xmm
    // names) and the flags; `vzeroupper` clears the upper parts it dirtied.
    unsafe {
        std::arch::asm!(
            "vpbroadcastd zmm0, dword ptr [{h}]",
            "vpmulld zmm0, zmm0, zmmword ptr [{pow}]",
            "vpsrld zmm1, zmm0, 28",
            "vpermd zmm2, zmm1, zmmword ptr [{blk}]",
            "vpslld zmm3, zmm0, 4",
            "vpsrld zmm3, zmm3, 27",
            "vmovdqu ymm0, ymmword ptr [{full}]",
            "vinserti64x4 zmm0, zmm0, ymmword ptr [{lanes}], 1",
            "vpsllvd zmm3, zmm0, zmm3",
            "vpandnd zmm2, zmm2, zmm3",
            "vextracti64x4 ymm0, zmm2, 1",
            "vpor ymm2, ymm2, ymm0",
            "vptest ymm2, ymm2",
            "setz {hit}",
            "vzeroupper",
            h = in(reg) &hm,
            pow = in(reg) LOCAL_POWERS.as_ptr(),
            blk = in(reg) block,
            full = in(reg) LANE_ONES[8].as_ptr(),
            lanes = in(reg) lanes.as_ptr(),
            hit = out(reg_byte) hit,
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
            out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
            options(pure, readonly),
        );
    }
    hit != 0
}

/// The two-round inline lookup (`9 ≤ k ≤ 16`): probes 0–7 with the full lane row, probes
/// 8–15 with `LANE_ONES[k − 8]`; each round's misses are `mask & !word` (`vpandn`), ORed,
/// and one `vptest` answers.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn asm_contains_round2(block: *const u64, h: u32, lanes: &[u32; 8]) -> bool {
    let hit: u8;
    // SAFETY: as in `asm_contains_round1`, with `LOCAL_POWERS[0..16]` read and the rows
    // `LANE_ONES[8]` and `lanes`; xmm0–xmm5 are declared clobbered.
    unsafe {
        std::arch::asm!(
            "vmovd xmm0, {h:e}",
            "vpbroadcastd ymm0, xmm0",
            "vpmulld ymm4, ymm0, [{pow} + 32]",
            "vpmulld ymm0, ymm0, [{pow}]",
            "vmovdqu ymm5, [{blk}]",
            "vmovdqu ymm3, [{blk} + 32]",
            // round 0: misses into ymm2
            "vpsrld ymm1, ymm0, 28",
            "vpermd ymm2, ymm1, ymm5",
            "vpermd ymm1, ymm1, ymm3",
            "vblendvps ymm2, ymm2, ymm1, ymm0",
            "vpslld ymm1, ymm0, 4",
            "vpsrld ymm1, ymm1, 27",
            "vmovdqu ymm0, [{full}]",
            "vpsllvd ymm0, ymm0, ymm1",
            "vpandn ymm2, ymm2, ymm0",
            // round 1: misses ORed into ymm2
            "vpsrld ymm1, ymm4, 28",
            "vpermd ymm0, ymm1, ymm5",
            "vpermd ymm1, ymm1, ymm3",
            "vblendvps ymm0, ymm0, ymm1, ymm4",
            "vpslld ymm1, ymm4, 4",
            "vpsrld ymm1, ymm1, 27",
            "vmovdqu ymm3, [{lanes}]",
            "vpsllvd ymm3, ymm3, ymm1",
            "vpandn ymm0, ymm0, ymm3",
            "vpor ymm2, ymm2, ymm0",
            "vptest ymm2, ymm2",
            "setz {hit}",
            "vzeroupper",
            h = in(reg) h,
            pow = in(reg) LOCAL_POWERS.as_ptr(),
            blk = in(reg) block,
            full = in(reg) LANE_ONES[8].as_ptr(),
            lanes = in(reg) lanes.as_ptr(),
            hit = out(reg_byte) hit,
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
            out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
            options(pure, readonly, nostack),
        );
    }
    hit != 0
}

/// The one-round AVX-512 inserts' first step: the eight probes' bit positions, `h · M^i >> 23`
/// (`2^32 − 1` in the lanes past `k`: ORed with the `past` row of the `InsertConsts` at `{c}`),
/// stored as eight 32-bit slots at `{buf}`. `h` comes from a register (`{h}`): one instruction
/// where a store and a broadcast load make two, and an insert's cost out of cache is its share
/// of the reorder window (see `avx512_or_new_bits`). Uses zmm0.
#[cfg(target_arch = "x86_64")]
macro_rules! avx512_round1_positions {
    () => {
        concat!(
            "vpbroadcastd zmm0, {h:e}\n",
            "vpmulld ymm0, ymm0, [{c}]\n",
            "vpsrld ymm0, ymm0, 23\n",
            "vpor ymm0, ymm0, [{c} + 128]\n",
            "vmovdqu [{buf}], ymm0\n",
        )
    };
}

/// The first steps of `avx512_or_new_bits` (see there): the line's new bits in zmm4, from the
/// probes' bit positions at `{buf}` — the first pair at offset 0, ORed into zmm4 by a plain
/// `vpord` (no zeroing first), then one more pair at each byte offset in `$rest`. Uses
/// zmm2–zmm6 and the word tops and top bit of the `InsertConsts` at `{c}`.
#[cfg(target_arch = "x86_64")]
macro_rules! avx512_line_bits {
    ($rest:literal) => {
        concat!(
            "vmovdqu64 zmm2, [{c} + 64]\n",
            "vpbroadcastd zmm3, dword ptr [{c} + 192]\n",
            "vpsubd zmm5, zmm2, dword ptr [{buf}]{{1to16}}\n",
            "vpsubd zmm6, zmm2, dword ptr [{buf} + 4]{{1to16}}\n",
            "vpsrlvd zmm5, zmm3, zmm5\n",
            "vpsrlvd zmm6, zmm3, zmm6\n",
            "vpord zmm4, zmm5, zmm6\n",
            ".irp i, ",
            $rest,
            "\n",
            "vpsubd zmm5, zmm2, dword ptr [{buf} + \\i]{{1to16}}\n",
            "vpsubd zmm6, zmm2, dword ptr [{buf} + \\i + 4]{{1to16}}\n",
            "vpsrlvd zmm5, zmm3, zmm5\n",
            "vpsrlvd zmm6, zmm3, zmm6\n",
            "vpternlogd zmm4, zmm5, zmm6, 0xfe\n",
            ".endr\n",
        )
    };
}

/// The shared steps of the AVX-512 inserts, as one template string: with each probe's bit
/// position (`2^32 − 1` past `k`) stored at `{buf}` — one 32-bit slot per probe, two probes
/// at each byte offset listed in `$pairs` — each is subtracted, broadcast from memory, from
/// the sixteen lanes' `32·j + 31` and the top bit shifted right by the difference in each:
/// lane `j` gets `1 << (p − 32·j)` where `32·j ≤ p < 32·j + 32` and 0 elsewhere (`vpsrlvd`
/// gives 0 for any count not below 32, which a negative difference is too); each pair is
/// ORed into the line's new bits by one three-input `vpternlogd` — five instructions per two
/// probes, where a separate broadcast, a subtraction, a left shift and an OR per probe made
/// eight. Then the line at `{blk}` is read, ORed and written back as one 64-byte vector, and
/// `{missed}` set if the new line differs from the old one in some 32-bit word (`vpcmpd` into
/// `k1`, `kortestw`). Uses zmm0–zmm6, `k1`, and the `InsertConsts` at `{c}`.
///
/// Every instruction counts out of cache: an insert waits for its line, the instructions of
/// the inserts after it wait behind it in the reorder buffer, and the fewer each insert has,
/// the more lines are fetched at once. Twenty `nop`s added to a minimal insert (hash, block,
/// one 64-byte OR) made it 1.55× slower at 10^7 keys (2-vCPU AMD EPYC, Zen 5, one process
/// beside sbbf-rs-safe); so the constants come from one table through one pointer, the first
/// pair needs no zeroed register, and "missed" is three instructions where a fold and a
/// `vptest` made five.
#[cfg(target_arch = "x86_64")]
macro_rules! avx512_or_new_bits {
    ($pairs:literal) => {
        concat!(
            avx512_line_bits!($pairs),
            "vmovdqu64 zmm5, [{blk}]\n",
            "vpord zmm6, zmm5, zmm4\n",
            "vmovdqu64 [{blk}], zmm6\n",
            "vpcmpd k1, zmm6, zmm5, 4\n",
            "kortestw k1, k1\n",
            "setnz {missed}\n",
            "vzeroupper\n",
        )
    };
}

/// The second round's first step, as `avx512_round1_positions` is the first round's: the
/// sixteen probes' bit positions from one 512-bit multiply by `LOCAL_POWERS[0..16]`, lanes
/// `k..16` forced to `2^32 − 1` (the `past` row of the `InsertConsts` at `{c}`), stored at `{buf}` as
/// two 32-byte halves, not one 64-byte vector: the 4-byte broadcast loads of lanes 8–15 did
/// not take their data from a 64-byte store in flight (store-to-load forwarding; 2-vCPU AMD
/// EPYC, Zen 5) and waited for it to reach the cache — in cache (2 000 and 10^5 keys, `k` = 9
/// and 10) the eight-pair insert took 3.3–5.8× sbbf-rs-safe's time with one store, in an
/// earlier build of `examples/insert_pairs.rs`, and takes 2.6–2.9× with two (its "every"
/// column). Uses zmm0.
#[cfg(target_arch = "x86_64")]
macro_rules! avx512_round2_positions {
    () => {
        concat!(
            "vpbroadcastd zmm0, {h:e}\n",
            "vpmulld zmm0, zmm0, zmmword ptr [{c}]\n",
            "vpsrld zmm0, zmm0, 23\n",
            "vpord zmm0, zmm0, zmmword ptr [{c} + 128]\n",
            "vmovdqu [{buf}], ymm0\n",
            "vextracti64x4 [{buf} + 32], zmm0, 1\n",
        )
    };
}

/// An insert with AVX-512F and no scalar stores, as a function `$name`: the probes' bit
/// positions from `$positions` (`avx512_round1_positions`, eight of them, `k ≤ 8`, or
/// `avx512_round2_positions`, sixteen, `9 ≤ k ≤ 16`) into a buffer of `$words` 32-bit slots;
/// then the probe pairs at the byte offsets `$pairs` (`⌈k/2⌉` pairs, at least three: the lanes
/// past them are all past `k`): each probe's position `p` (lanes past `k` forced to
/// `2^32 − 1`) becomes `1 << (p − 32·j)` in the sixteen lanes `j` of its word and 0 in the
/// others (see `avx512_or_new_bits`), the results ORed into the line's new bits, and the line
/// read, ORed and written back as one 64-byte vector; "new" is whether any of those bits was
/// unset (the new line compared with the old).
///
/// # Safety
/// The CPU must support AVX-512F.
#[cfg(target_arch = "x86_64")]
macro_rules! insert_avx512 {
    ($name:ident, $positions:expr, $words:literal, $pairs:literal) => {
        #[cfg(target_arch = "x86_64")]
        #[inline(always)]
        unsafe fn $name(block: &mut [u64; 8], h: u32, c: &InsertConsts) -> bool {
            let missed: u8;
            let mut buf = std::mem::MaybeUninit::<[u32; $words]>::uninit();
            // SAFETY: the caller guarantees AVX-512F. Reads: the 256-byte `InsertConsts` `c`
            // (bytes 0..4·`$words`, 64..128, 128..128 + 4·`$words` and 192..196), `buf` after the
            // assembly wrote all of it (4·`$words` bytes), and `block`'s 64 bytes; writes: `buf`
            // and `block`'s 64 bytes (a unique reference). On x86 (little-endian) 32-bit word `j`
            // of the vector is bits `32j..32j + 32` of the block — the layout's definition. No
            // other stack use; zmm0–zmm6 (declared through their xmm names), `k1` and the flags
            // are clobbered; `vzeroupper` clears the upper parts dirtied.
            unsafe {
                std::arch::asm!(
                    $positions,
                    avx512_or_new_bits!($pairs),
                    h = in(reg) h,
                    c = in(reg) c,
                    blk = in(reg) block.as_mut_ptr(),
                    buf = in(reg) buf.as_mut_ptr().cast::<u32>(),
                    missed = out(reg_byte) missed,
                    out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
                    out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
                    out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
                    out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
                    out("k1") _,
                    options(nostack),
                );
            }
            missed != 0
        }
    };
}

// One round: probes 0–7 (`7 ≤ k ≤ 8`) and 0–5 (`k ≤ 6`: the 1 % and 3 % targets' six and five
// probes; one pair, five instructions, fewer).
#[cfg(target_arch = "x86_64")]
insert_avx512!(
    asm_insert_round1_avx512,
    avx512_round1_positions!(),
    8,
    "8, 16, 24"
);
#[cfg(target_arch = "x86_64")]
insert_avx512!(
    asm_insert_round1_avx512_six,
    avx512_round1_positions!(),
    8,
    "8, 16"
);

// Two rounds, five to eight pairs: `k` = 9–10, 11–12, 13–14, 15–16.
#[cfg(target_arch = "x86_64")]
insert_avx512!(
    asm_insert_round2_avx512_p5,
    avx512_round2_positions!(),
    16,
    "8, 16, 24, 32"
);
#[cfg(target_arch = "x86_64")]
insert_avx512!(
    asm_insert_round2_avx512_p6,
    avx512_round2_positions!(),
    16,
    "8, 16, 24, 32, 40"
);
#[cfg(target_arch = "x86_64")]
insert_avx512!(
    asm_insert_round2_avx512_p7,
    avx512_round2_positions!(),
    16,
    "8, 16, 24, 32, 40, 48"
);
#[cfg(target_arch = "x86_64")]
insert_avx512!(
    asm_insert_round2_avx512_p8,
    avx512_round2_positions!(),
    16,
    "8, 16, 24, 32, 40, 48, 56"
);

/// The shared steps of the AVX2 inserts, as one template string: with each probe's bit
/// position (`2^32 − 1` past `k`) stored at `{buf}`, one 32-bit slot per probe — the first at
/// offset 0, the others at the byte offsets `$rest` — and `{c}` the kernel's `InsertConsts`,
/// the line's new bits in `ymm3` (words 0–7) and `ymm4` (words 8–15): for each probe, its
/// position broadcast from memory (a load, no shuffle) is subtracted from each word's last
/// bit index `32·j + 31` (`ymm6`, `ymm7`) and the top bit (`ymm5`) shifted right by the
/// difference — `1 << (p − 32·j)` in the word that holds the bit, 0 in every other (`vpsrlvd`
/// gives 0 for any count not below 32, which a negative difference is too) — and ORed into
/// its half: seven instructions a probe. `InsertConsts` is 64-byte aligned, so the two
/// `vmovdqa` loads of the word tops (offsets 64 and 96) are aligned. Clobbers ymm1–ymm7.
#[cfg(target_arch = "x86_64")]
macro_rules! avx2_line_bits {
    ($rest:expr) => {
        concat!(
            "vmovdqa ymm6, [{c} + 64]\n",
            "vmovdqa ymm7, [{c} + 96]\n",
            "vpbroadcastd ymm5, dword ptr [{c} + 192]\n",
            "vpbroadcastd ymm1, dword ptr [{buf}]\n",
            "vpsubd ymm2, ymm6, ymm1\n",
            "vpsubd ymm1, ymm7, ymm1\n",
            "vpsrlvd ymm3, ymm5, ymm2\n",
            "vpsrlvd ymm4, ymm5, ymm1\n",
            ".irp i, ",
            $rest,
            "\n",
            "vpbroadcastd ymm1, dword ptr [{buf} + \\i]\n",
            "vpsubd ymm2, ymm6, ymm1\n",
            "vpsubd ymm1, ymm7, ymm1\n",
            "vpsrlvd ymm2, ymm5, ymm2\n",
            "vpsrlvd ymm1, ymm5, ymm1\n",
            "vpor ymm3, ymm3, ymm2\n",
            "vpor ymm4, ymm4, ymm1\n",
            ".endr\n",
        )
    };
}

/// The owned AVX2 inserts' last steps, as one template string: the new bits of
/// [`avx2_line_bits`] (`ymm3`, `ymm4`) ORed into the line at `{blk}` with two unaligned
/// 32-byte loads and stores, and `{new}` set when some bit was not yet in the line
/// (`new & !line`, one `vptest`). Clobbers ymm1, ymm2, ymm6, ymm7 and the flags.
#[cfg(target_arch = "x86_64")]
macro_rules! avx2_line_or {
    () => {
        concat!(
            "vmovdqu ymm1, [{blk}]\n",
            "vmovdqu ymm2, [{blk} + 32]\n",
            "vpandn ymm6, ymm1, ymm3\n",
            "vpandn ymm7, ymm2, ymm4\n",
            "vpor ymm1, ymm1, ymm3\n",
            "vpor ymm2, ymm2, ymm4\n",
            "vmovdqu [{blk}], ymm1\n",
            "vmovdqu [{blk} + 32], ymm2\n",
            "vpor ymm6, ymm6, ymm7\n",
            "vptest ymm6, ymm6\n",
            "setnz {new}\n",
        )
    };
}

/// The one-round inline inserts (`k ≤ 8`) with AVX2: the line's new bits built in two
/// vector registers (words 0–7 and 8–15), ORed into it with two 32-byte loads and stores.
/// Each probe's position `x >> 23` (its lane forced to `2^32 − 1`, no bit, at or past `k`)
/// goes to a 32-byte buffer; then for each probe the kernel uses (`asm_insert_round1_l2` …
/// `_l8`: two, four, six or eight — `k` rounded up to even), the position broadcast from the
/// buffer (a load, no shuffle) is subtracted from each word's last bit index `32·j + 31`,
/// the top bit is shifted right by the difference (`vpsrlvd`: `2^(x>>23 − 32·j)` in the word
/// that holds the bit, zero in every other, since a count past 31 — a negative difference
/// included — shifts everything out), and the two halves are ORed into the new bits: seven
/// instructions per probe. "Was any bit new" is `new & !line`, tested by one `vptest`.
///
/// It replaced, for AVX2-only CPUs, the probes' eight word indices and masks spilled to the
/// stack and ORed into the line's words by eight scalar `or`s (an `or` of a zero mask still
/// writes its word): on a 2-vCPU AMD EPYC VM with Zen 3 (family 25 model 1, no AVX-512) the
/// insert at `k = 6` went from 2.54–2.60× sbbf-rs-safe's in L1 to 1.79–1.85× and from
/// 1.52–1.56× to 1.44–1.49× at 10^7 keys (the blocked filter's crate docs, *AVX2 without
/// AVX-512*).
///
/// The two-round inserts (`9 ≤ k ≤ 16`, `asm_insert_round2_l2` … `_l8`) do the same over
/// both rounds' positions: the first eight probes, then those of the second round that `k`
/// uses (`k − 8` rounded up to even). Each kernel is this macro with its positions template
/// (`avx2_round1_positions`, `avx2_round2_positions`), its buffer's slots and the byte
/// offsets of its probes after the first.
///
/// # Safety
/// The CPU must support AVX2, and `c` must be the `InsertConsts` of the `k` the kernel was
/// chosen for, with `k` no larger than the function's probe count.
#[cfg(target_arch = "x86_64")]
macro_rules! avx2_insert {
    ($name:ident, $positions:expr, $slots:literal, $offsets:expr) => {
        #[cfg(target_arch = "x86_64")]
        #[inline(always)]
        unsafe fn $name(block: &mut [u64; 8], h: u32, c: &InsertConsts) -> bool {
            let new: u8;
            let mut buf = std::mem::MaybeUninit::<[u32; $slots]>::uninit();
            // SAFETY: the caller guarantees AVX2. Reads: `block` (64 bytes, two unaligned
            // 32-byte loads), `c`, a 256-byte `InsertConsts` (powers at 0..64, word tops at
            // 64..128, lanes-past-`k` row at 128..192, top bit at 192..196; each template
            // reads a part), and `buf` after the positions template wrote all of it (one
            // 32-byte store per round, `$slots` = 8 per round). Writes: `buf` and the 64
            // bytes of `block`, a unique reference, with its old bits ORed with the new ones;
            // on x86 (little-endian) 32-bit word `j` is bits `32j..32j + 32` of the block —
            // the layout's definition. The lanes left out lie past `k` (the caller's
            // contract), so they would set no bit. No other stack use; xmm0–xmm7 and the
            // flags are declared clobbered; `vzeroupper` clears the upper halves dirtied.
            unsafe {
                std::arch::asm!(
                    $positions,
                    avx2_line_bits!($offsets),
                    avx2_line_or!(),
                    "vzeroupper",
                    h = in(reg) &h,
                    c = in(reg) c,
                    blk = in(reg) block.as_mut_ptr(),
                    buf = in(reg) buf.as_mut_ptr().cast::<u32>(),
                    new = out(reg_byte) new,
                    out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
                    out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
                    out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
                    out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
                    options(nostack),
                );
            }
            new != 0
        }
    };
}

/// The first steps of the one-round AVX2 inserts, as one template string: the eight
/// probes' positions `(h · M^i) >> 23`, lanes at or past `k` forced to `2^32 − 1`, stored at
/// `{buf}` (32 bytes). Clobbers ymm0.
#[cfg(target_arch = "x86_64")]
macro_rules! avx2_round1_positions {
    () => {
        concat!(
            "vpbroadcastd ymm0, dword ptr [{h}]\n",
            "vpmulld ymm0, ymm0, [{c}]\n",
            "vpsrld ymm0, ymm0, 23\n",
            "vpor ymm0, ymm0, [{c} + 128]\n",
            "vmovdqu [{buf}], ymm0\n",
        )
    };
}

/// The first steps of the two-round AVX2 inserts: the sixteen probes' positions, lanes
/// 8–15 at or past `k` forced to `2^32 − 1` (lanes 0–7 are all below `k ≥ 9`), stored at
/// `{buf}` (64 bytes). Clobbers ymm0 and ymm1.
#[cfg(target_arch = "x86_64")]
macro_rules! avx2_round2_positions {
    () => {
        concat!(
            "vpbroadcastd ymm1, dword ptr [{h}]\n",
            "vpmulld ymm0, ymm1, [{c}]\n",
            "vpmulld ymm1, ymm1, [{c} + 32]\n",
            "vpsrld ymm0, ymm0, 23\n",
            "vpsrld ymm1, ymm1, 23\n",
            "vpor ymm1, ymm1, [{c} + 160]\n",
            "vmovdqu [{buf}], ymm0\n",
            "vmovdqu [{buf} + 32], ymm1\n",
        )
    };
}

#[cfg(target_arch = "x86_64")]
avx2_insert!(asm_insert_round1_l2, avx2_round1_positions!(), 8, "4");
#[cfg(target_arch = "x86_64")]
avx2_insert!(
    asm_insert_round1_l4,
    avx2_round1_positions!(),
    8,
    "4, 8, 12"
);
#[cfg(target_arch = "x86_64")]
avx2_insert!(
    asm_insert_round1_l6,
    avx2_round1_positions!(),
    8,
    "4, 8, 12, 16, 20"
);
#[cfg(target_arch = "x86_64")]
avx2_insert!(
    asm_insert_round1_l8,
    avx2_round1_positions!(),
    8,
    "4, 8, 12, 16, 20, 24, 28"
);
// Two rounds: all eight probes of the first, then two, four, six or eight of the second.
#[cfg(target_arch = "x86_64")]
avx2_insert!(
    asm_insert_round2_l2,
    avx2_round2_positions!(),
    16,
    "4, 8, 12, 16, 20, 24, 28, 32, 36"
);
#[cfg(target_arch = "x86_64")]
avx2_insert!(
    asm_insert_round2_l4,
    avx2_round2_positions!(),
    16,
    "4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44"
);
#[cfg(target_arch = "x86_64")]
avx2_insert!(
    asm_insert_round2_l6,
    avx2_round2_positions!(),
    16,
    "4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52"
);
#[cfg(target_arch = "x86_64")]
avx2_insert!(
    asm_insert_round2_l8,
    avx2_round2_positions!(),
    16,
    "4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60"
);

// ---------------------------------------------------------------------------------------
// Split block (Parquet / Impala)
// ---------------------------------------------------------------------------------------

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
/// caller's loop; on a two-nanosecond lookup that measured 5–10 %).
///
/// ```
/// use bloomlab_core::simd::{self, SplitBlockAvx2};
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

/// AVX2 lane helpers (8 × 32-bit lanes) and the kernels built from them. Every function
/// requires a CPU with AVX2 — check `has_avx2` first; that is their only
/// safety requirement (every pointer they read comes from a reference of the right size).
#[cfg(target_arch = "x86_64")]
pub mod avx2 {
    use std::arch::x86_64::*;

    use super::{LOCAL_MAX_PROBES, LOCAL_POWERS};

    /// Lane-wise `a · b mod 2^32`.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub unsafe fn mul32(a: __m256i, b: __m256i) -> __m256i {
        _mm256_mullo_epi32(a, b)
    }

    /// Lane-wise logical right shift by `N` bits.
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub unsafe fn shr32<const N: i32>(a: __m256i) -> __m256i {
        _mm256_srli_epi32::<N>(a)
    }

    /// Lane-wise `1 << shift[i]` (shifts ≥ 32 give 0).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub unsafe fn one_shl32(shift: __m256i) -> __m256i {
        _mm256_sllv_epi32(_mm256_set1_epi32(1), shift)
    }

    /// Every bit set in `mask` is set in `value` (`vptest`: `(!value & mask) == 0`).
    ///
    /// # Safety
    /// The CPU must support AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    pub unsafe fn all_set(value: __m256i, mask: __m256i) -> bool {
        _mm256_testc_si256(value, mask) != 0
    }

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
    pub unsafe fn local_contains(block: &[u64; 8], h: u32, k: u32) -> bool {
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
    pub unsafe fn local_insert(block: &mut [u64; 8], h: u32, k: u32) -> bool {
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
                new_lo =
                    _mm256_or_si256(new_lo, _mm256_srlv_epi32(top, _mm256_sub_epi32(tops_lo, p)));
                new_hi =
                    _mm256_or_si256(new_hi, _mm256_srlv_epi32(top, _mm256_sub_epi32(tops_hi, p)));
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

    /// SplitMix64: a fixed-seed source of test inputs.
    fn mix(x: &mut u64) -> u64 {
        *x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *x;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// The Parquet salts (from the split-block filter spec).
    const SALTS: [u32; 8] = [
        0x47b6_137b,
        0x4497_4d91,
        0x8824_ad5b,
        0xa2b7_289d,
        0x7054_95c7,
        0x2df1_424b,
        0x9efc_4947,
        0x5c6b_fb31,
    ];

    #[test]
    fn local_probe_rule_is_frozen() {
        // Sequential definition: h_0 = h, h_{i+1} = h_i · 0x9e3779b9 mod 2^32, bit_i = h_i >> 23.
        let h = 0x0123_4567u32;
        let mut want = [0u64; 8];
        let mut x = h;
        for _ in 0..11 {
            let bit = x >> 23;
            want[(bit / 64) as usize] |= 1 << (bit % 64);
            x = x.wrapping_mul(0x9e37_79b9);
        }
        let mut got = [0u64; 8];
        assert!(local_insert_scalar(&mut got, h, 11));
        assert_eq!(got, want);
        // Probe 0 is the top 9 bits of h itself: h = 2^31 → bit 256 = word 4, bit 0.
        let mut one = [0u64; 8];
        local_insert_scalar(&mut one, 1 << 31, 1);
        assert_eq!(one, [0, 0, 0, 0, 1, 0, 0, 0]);
        assert_eq!(LOCAL_POWERS[8], 0x9e37_79b9u32.wrapping_pow(8));
    }

    #[test]
    fn local_kernels_agree_with_the_scalar_definition() {
        let mut x = 7u64;
        for k in 1..=LOCAL_MAX_PROBES {
            let mut fast = [0u64; 8];
            let mut slow = [0u64; 8];
            // Fill until about half the bits are set, comparing every step.
            for _ in 0..(256 / k).max(2) {
                let h = mix(&mut x) as u32;
                assert_eq!(
                    local_insert(&mut fast, h, k),
                    local_insert_scalar(&mut slow, h, k)
                );
                assert_eq!(fast, slow, "k = {k}");
                assert!(local_contains(&fast, h, k));
            }
            for _ in 0..200 {
                let h = mix(&mut x) as u32;
                assert_eq!(
                    local_contains(&fast, h, k),
                    local_contains_scalar(&slow, h, k)
                );
            }
            // A block missing exactly one probed bit answers no on both paths.
            let h = mix(&mut x) as u32;
            let mut only = [0u64; 8];
            local_insert_scalar(&mut only, h, k);
            let bit = h >> 23;
            only[(bit / 64) as usize] &= !(1 << (bit % 64));
            assert!(!local_contains(&only, h, k) && !local_contains_scalar(&only, h, k));
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_paths_are_exercised_where_available() {
        if !has_avx2() {
            return; // the dispatching functions above then ran the scalar path only
        }
        let mut x = 11u64;
        for k in [0u32, 1, 6, 8, 9, 16, 17, 64, 65, u32::MAX] {
            let mut a = [0u64; 8];
            let mut b = [0u64; 8];
            for _ in 0..40 {
                let h = mix(&mut x) as u32;
                // SAFETY: AVX2 is available (checked above).
                let new = unsafe { avx2::local_insert(&mut a, h, k) };
                assert_eq!(new, local_insert_scalar(&mut b, h, k));
                assert_eq!(a, b);
                let q = mix(&mut x) as u32;
                // SAFETY: as above.
                let got = unsafe { avx2::local_contains(&a, q, k) };
                assert_eq!(got, local_contains_scalar(&b, q, k));
            }
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

    /// Inserts and lookups of many keys inside one [`run_local`] task.
    struct Both<'a> {
        blocks: &'a mut [[u64; 8]],
        keys: &'a [u32],
        k: u32,
    }

    impl LocalTask for Both<'_> {
        type Output = (&'static str, Vec<bool>, Vec<bool>);
        #[inline(always)]
        fn run<P: LocalProbe>(self, probe: P) -> Self::Output {
            let n = self.blocks.len();
            let new = self
                .keys
                .iter()
                .map(|&h| probe.insert(&mut self.blocks[h as usize % n], h, self.k))
                .collect();
            let hit = self
                .keys
                .iter()
                .map(|&h| probe.contains(&self.blocks[h.rotate_left(7) as usize % n], h, self.k))
                .collect();
            (P::NAME, new, hit)
        }
    }

    #[test]
    fn zeroed_lines_are_aligned_zero_owned_and_compare_by_content() {
        for n in [0usize, 1, 2, 3, 1000, 1 << 18] {
            let mut a = zeroed_lines(n).unwrap();
            assert_eq!(a.len(), n);
            assert_eq!(a.as_ptr() as usize % 64, 0, "n = {n}");
            assert!(a.iter().all(|l| l.0 == [0; 8]));
            if n > 0 {
                a[n - 1].0[7] = u64::MAX; // the last word is inside the allocation
                a[0].0[0] = 1;
            }
            let b = a.clone();
            assert_eq!(a, b);
            assert_eq!(b.as_ptr() as usize % 64, 0);
            let c: Lines = a.iter().copied().collect();
            assert_eq!(c, a);
            assert_eq!(Lines::from(a.to_vec()), a);
            // The same bits as shared lines, and back, without a copy.
            let ptr = a.as_ptr() as usize;
            let shared: Lines<SharedLine> = a.cast();
            assert_eq!(shared.as_ptr() as usize, ptr);
            if n > 0 {
                assert_eq!(shared[0].load()[0], 1);
                shared[n - 1].0[7].fetch_and(1, std::sync::atomic::Ordering::Relaxed);
            }
            let back: Lines = shared.cast();
            if n > 0 {
                assert_eq!(back[n - 1].0[7], 1);
            }
        }
        assert!(
            zeroed_lines(usize::MAX / 32).is_none(),
            "no overflow, no abort"
        );
    }

    #[test]
    fn inline_kernels_agree_with_the_scalar_definition() {
        let mut x = 13u64;
        // Every `k` up to 17 (each probe-pair count of the AVX-512 inserts, on both sides of
        // each step), and some larger.
        for k in (0u32..=17).chain([30, 64, 65, u32::MAX]) {
            for kernel in [
                LocalKernel::detect(k),
                LocalKernel::detect_every_pair(k),
                LocalKernel::avx2(k),
                LocalKernel::portable(),
            ] {
                if kernel == LocalKernel::avx2(k) {
                    assert_eq!(kernel.name(), if has_avx2() { "avx2" } else { "portable" });
                }
                if kernel == LocalKernel::detect(k) && has_avx512f() && (1..=16).contains(&k) {
                    assert_eq!(kernel.name(), "avx512", "k = {k}");
                }
                let (mut fast, mut slow) = ([0u64; 8], [0u64; 8]);
                // Fill to about half the bits, comparing the block and the result each step.
                for _ in 0..(256 / k.clamp(1, 64)).max(2) {
                    let h = mix(&mut x) as u32;
                    assert_eq!(
                        kernel.insert(&mut fast, h, k),
                        local_insert_scalar(&mut slow, h, k),
                        "k = {k}"
                    );
                    assert_eq!(fast, slow, "k = {k}");
                    assert!(kernel.contains(&fast, h, k));
                    assert!(!kernel.insert(&mut fast, h, k), "a repeat is never new");
                }
                let shared = SharedLine::new(Line(fast));
                for _ in 0..300 {
                    let h = mix(&mut x) as u32;
                    let want = local_contains_scalar(&slow, h, k);
                    assert_eq!(kernel.contains(&fast, h, k), want, "k = {k}");
                    assert_eq!(kernel.contains_shared(&shared, h, k), want, "k = {k}");
                }
                // Every probe but one set: both say no (for each probe position in turn).
                let h = mix(&mut x) as u32;
                for drop in 0..k.clamp(1, 16) as usize {
                    let mut only = [0u64; 8];
                    local_insert_scalar(&mut only, h, k);
                    let bit = local_bit(h, drop);
                    only[(bit / 64) as usize] &= !(1 << (bit % 64));
                    let want = local_contains_scalar(&only, h, k);
                    assert_eq!(kernel.contains(&only, h, k), want, "k = {k}, drop {drop}");
                    let shared = SharedLine::new(Line(only));
                    assert_eq!(kernel.contains_shared(&shared, h, k), want, "k = {k}");
                    // Inserting the key into it sets exactly the dropped bit, and is new.
                    let mut full = only;
                    assert!(local_insert_scalar(&mut full, h, k) != want);
                    let mut owned = only;
                    assert_eq!(kernel.insert(&mut owned, h, k), !want, "k = {k}");
                    assert_eq!(owned, full, "k = {k}, drop {drop}");
                }
            }
        }
    }

    #[test]
    fn dispatched_kernels_agree_with_the_portable_ones() {
        let mut x = 5u64;
        for k in [0u32, 1, 4, 6, 8, 9, 15, 64, 65] {
            let keys: Vec<u32> = (0..300).map(|_| mix(&mut x) as u32).collect();
            let (mut a, mut b) = (vec![[0u64; 8]; 16], vec![[0u64; 8]; 16]);
            let fast = run_local(Both {
                blocks: &mut a,
                keys: &keys,
                k,
            });
            let slow = Both {
                blocks: &mut b,
                keys: &keys,
                k,
            }
            .run(PortableProbe);
            assert_eq!(fast.0, if has_avx2() { "avx2" } else { "portable" });
            assert_eq!((fast.1, fast.2), (slow.1, slow.2), "k = {k}");
            assert_eq!(a, b, "k = {k}");
        }
    }

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

    #[test]
    fn pipeline_answers_every_item_once_in_order() {
        for n in [0usize, 1, 5, 31, 32, 33, 100] {
            let items: Vec<u64> = (0..n as u64).collect();
            let mut hashed = 0;
            let mut prefetched = 0;
            let mut got = Vec::new();
            pipeline::<_, _, 8>(
                &items,
                |&x| {
                    hashed += 1;
                    x * 3
                },
                |_| prefetched += 1,
                |i, h| got.push((i, h)),
            );
            let want: Vec<(usize, u64)> = (0..n).map(|i| (i, i as u64 * 3)).collect();
            assert_eq!(got, want);
            let extra = if n == 0 { 0 } else { 8usize.saturating_sub(n) };
            assert_eq!(hashed, n + extra);
            assert_eq!(prefetched, hashed);
            let mut direct = Vec::new();
            pipeline::<_, _, 0>(
                &items,
                |&x| x * 3,
                |_| unreachable!(),
                |i, h| direct.push((i, h)),
            );
            assert_eq!(direct, want);
        }
    }

    #[test]
    fn pipeline_chunks_answers_every_item_once_in_order_hashing_each_once() {
        fn run<const D: usize>(n: usize) {
            let items: Vec<u64> = (0..n as u64).collect();
            let mut log = Vec::new();
            pipeline_chunks::<_, _, _, D>(
                &mut log,
                &items,
                u64::MAX,
                |_, chunk, out| {
                    assert!(!chunk.is_empty() && chunk.len() <= CHUNK && out.len() == chunk.len());
                    for (o, &x) in out.iter_mut().zip(chunk) {
                        *o = x * 3;
                    }
                },
                |_, h| assert_ne!(*h, u64::MAX),
                |log: &mut Vec<(usize, u64)>, i, h| log.push((i, h)),
            );
            let want: Vec<(usize, u64)> = (0..n).map(|i| (i, i as u64 * 3)).collect();
            assert_eq!(log, want, "n = {n}, D = {D}");
            // Every item is hashed exactly once (counted through a second run's closures).
            let (mut hashed, mut prefetched) = (0usize, 0usize);
            let mut unit = ();
            pipeline_chunks::<_, _, _, D>(
                &mut unit,
                &items,
                0,
                |_, chunk, out| {
                    hashed += chunk.len();
                    out.fill(1);
                },
                |_, _| prefetched += 1,
                |_, _, _| {},
            );
            assert_eq!((hashed, prefetched), (n, n), "n = {n}, D = {D}");
        }
        for n in [0usize, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 100] {
            run::<8>(n);
            run::<16>(n);
            run::<32>(n);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Ribbon column parities
// ---------------------------------------------------------------------------------------

/// Whether this CPU has the `popcnt` instruction (std caches the CPUID probe; a relaxed load).
#[inline]
pub fn has_popcnt() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("popcnt")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

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
                std::ptr::from_ref(l).cast(),
                std::ptr::from_ref(h).cast(),
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
        x.count_ones() & 1
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
    use std::arch::x86_64::{
        __m128i, __m256i, _mm_and_si128, _mm_cvtsi128_si64, _mm_loadu_si128, _mm_set_epi64x,
        _mm_unpackhi_epi64, _mm_xor_si128, _mm256_and_si256, _mm256_castsi256_ps,
        _mm256_loadu_si256, _mm256_movemask_ps, _mm256_or_si256, _mm256_permutevar8x32_epi32,
        _mm256_sad_epu8, _mm256_set_epi64x, _mm256_set1_epi8, _mm256_setr_epi8, _mm256_setr_epi32,
        _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_slli_epi32, _mm256_slli_epi64,
        _mm256_srli_epi64, _mm256_unpackhi_epi64, _mm256_unpacklo_epi64, _mm256_xor_si256,
        _mm256_zextsi128_si256,
    };
    use std::arch::x86_64::{_mm256_maskload_epi64, _mm256_set1_epi64x, _mm256_setr_epi64x};

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
        // Parity of each nibble value, in both 128-bit lanes (`vpshufb` looks up per lane).
        let table = _mm256_setr_epi8(
            0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, //
            0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0,
        );
        let nibble = _mm256_set1_epi8(0x0f);
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
            // The low nibble of each byte: the byte folded; its parity from the table.
            let t = _mm256_xor_si256(y, _mm256_srli_epi64::<4>(y));
            let p = _mm256_shuffle_epi8(table, _mm256_and_si256(t, nibble));
            // Per lane the sum of its eight byte parities (0 to 8): odd exactly when the
            // lane is.
            _mm256_sad_epu8(p, _mm256_setzero_si256())
        };
        // 32-bit element `k` of the two sums interleaved (below) holds column
        // `ORDER[k]`: gather them in column order.
        let order = _mm256_setr_epi32(0, 4, 2, 6, 1, 5, 3, 7);
        let mut acc = 0u32;
        let mut j = 0;
        while j < R {
            // Eight columns: the second four's sums in the high half of each lane (the sums
            // fit in 4 bits), one permute to column order, one mask of the low bits.
            let s = _mm256_or_si256(sums(j), _mm256_slli_epi64::<32>(sums(j + 4)));
            let s = _mm256_permutevar8x32_epi32(s, order);
            let bits = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32::<31>(s)));
            acc |= (bits as u32) << j;
            j += 8;
        }
        acc
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
        let table = _mm256_setr_epi8(
            0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, //
            0, 1, 1, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0,
        );
        let nibble = _mm256_set1_epi8(0x0f);
        // Per 64-bit lane `i`, the sum of the byte parities of column `j + i`'s word.
        let sums = |j: usize| {
            // SAFETY: the caller's contract, passed on (`quad` reads only words below `R`).
            let (a, b, c) = unsafe { (quad::<R>(p[0], j), quad::<R>(p[1], j), quad::<R>(p[2], j)) };
            let y = _mm256_xor_si256(
                _mm256_xor_si256(_mm256_and_si256(a, m[0]), _mm256_and_si256(b, m[1])),
                _mm256_and_si256(c, m[2]),
            );
            let t = _mm256_xor_si256(y, _mm256_srli_epi64::<4>(y));
            let p = _mm256_shuffle_epi8(table, _mm256_and_si256(t, nibble));
            _mm256_sad_epu8(p, _mm256_setzero_si256())
        };
        // 32-bit element `2i` holds column `j + i`, `2i + 1` column `j + 4 + i`.
        let order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
        let mut acc = 0u32;
        let mut j = 0;
        while j < R {
            let s = _mm256_or_si256(sums(j), _mm256_slli_epi64::<32>(sums(j + 4)));
            let s = _mm256_permutevar8x32_epi32(s, order);
            let bits = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32::<31>(s)));
            acc |= (bits as u32) << j;
            j += 8;
        }
        acc
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
/// use bloomlab_core::simd::{self, ColumnKernel, Parity, PortableParity};
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
}

/// The CPU runs AVX-512 Foundation instructions on 512-bit registers and `VPOPCNTQ`
/// (AVX512_VPOPCNTDQ), and the OS saves their state (std's detection checks both).
pub fn has_avx512_popcnt() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        has_avx512f() && std::arch::is_x86_feature_detected!("avx512vpopcntdq")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
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

    /// `"avx512"` or `"avx2"`.
    pub fn name(self) -> &'static str {
        match self.0 {
            ColumnMode::Avx2 => "avx2",
            ColumnMode::Avx512 => "avx512",
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
        let group = if self.0 == ColumnMode::Avx512 { 8 } else { 4 };
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
            let bits = if self.0 == ColumnMode::Avx512 {
                // SAFETY: this mode exists only on a CPU with AVX-512F and VPOPCNTDQ
                // (`avx512`); the range test above puts every word the kernel reads inside
                // `words` (see its contract).
                unsafe { asm_columns3_avx512(a, r, third, &m) }
            } else {
                // SAFETY: a `ColumnKernel` exists only on a CPU with AVX2 (`avx2`,
                // `avx512`); the range test above puts every word the kernel reads inside
                // `words` (see its contract).
                unsafe { asm_columns3(a, r, third, &m) }
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
    let acc: u32;
    // SAFETY: the caller guarantees AVX2 and the readable words; the tables are 32-byte
    // constants, `m` three words. The block only reads memory, uses no stack, and clobbers
    // xmm0–xmm7 (declared), `ecx`, a scratch register and the flags; `vzeroupper` clears the
    // upper halves it dirtied.
    unsafe {
        std::arch::asm!(
            "vpbroadcastq ymm2, qword ptr [{m}]",
            "vpbroadcastq ymm3, qword ptr [{m} + 8]",
            "vpbroadcastq ymm4, qword ptr [{m} + 16]",
            "vmovdqu ymm5, [{table}]",
            "vmovdqu ymm6, [{nib}]",
            "vpxor xmm7, xmm7, xmm7",
            // columns 0–3
            "vpand ymm0, ymm2, [{a}]",
            "vpand ymm1, ymm3, [{b}]",
            "vpxor ymm0, ymm0, ymm1",
            "vpand ymm1, ymm4, [{c}]",
            "vpxor ymm0, ymm0, ymm1",
            "vpsrlq ymm1, ymm0, 4",
            "vpxor ymm0, ymm0, ymm1",
            "vpand ymm0, ymm0, ymm6",
            "vpshufb ymm0, ymm5, ymm0",
            "vpsadbw ymm0, ymm0, ymm7",
            "vpsllq ymm0, ymm0, 63",
            "vmovmskpd {acc:e}, ymm0",
            "cmp {r}, 4",
            "jbe 3f",
            // columns 4–7
            "vpand ymm0, ymm2, [{a} + 32]",
            "vpand ymm1, ymm3, [{b} + 32]",
            "vpxor ymm0, ymm0, ymm1",
            "vpand ymm1, ymm4, [{c} + 32]",
            "vpxor ymm0, ymm0, ymm1",
            "vpsrlq ymm1, ymm0, 4",
            "vpxor ymm0, ymm0, ymm1",
            "vpand ymm0, ymm0, ymm6",
            "vpshufb ymm0, ymm5, ymm0",
            "vpsadbw ymm0, ymm0, ymm7",
            "vpsllq ymm0, ymm0, 63",
            "vmovmskpd {t:e}, ymm0",
            "shl {t:e}, 4",
            "or {acc:e}, {t:e}",
            "cmp {r}, 8",
            "jbe 3f",
            // columns 8 and up, four per round
            "mov ecx, 8",
            "2:",
            "vpand ymm0, ymm2, [{a} + rcx*8]",
            "vpand ymm1, ymm3, [{b} + rcx*8]",
            "vpxor ymm0, ymm0, ymm1",
            "vpand ymm1, ymm4, [{c} + rcx*8]",
            "vpxor ymm0, ymm0, ymm1",
            "vpsrlq ymm1, ymm0, 4",
            "vpxor ymm0, ymm0, ymm1",
            "vpand ymm0, ymm0, ymm6",
            "vpshufb ymm0, ymm5, ymm0",
            "vpsadbw ymm0, ymm0, ymm7",
            "vpsllq ymm0, ymm0, 63",
            "vmovmskpd {t:e}, ymm0",
            "shl {t:e}, cl",
            "or {acc:e}, {t:e}",
            "add ecx, 4",
            "cmp rcx, {r}",
            "jb 2b",
            "3:",
            "vzeroupper",
            m = in(reg) m.as_ptr(),
            table = in(reg) NIBBLE_PARITY.as_ptr(),
            nib = in(reg) LOW_NIBBLES.as_ptr(),
            a = in(reg) a,
            b = in(reg) a.wrapping_add(r),
            c = in(reg) a.wrapping_add(third),
            r = in(reg) r,
            acc = out(reg) acc,
            t = out(reg) _,
            out("ecx") _,
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
            out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
            options(pure, readonly, nostack),
        );
    }
    acc
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
    let acc: u32;
    // SAFETY: the caller guarantees the CPU features and the readable words; `m` is three
    // words, read with 8-byte broadcasts. The block only reads memory, uses no stack, and
    // clobbers zmm0–zmm1 (declared through their xmm names, which the compiler treats as the
    // same registers), `ecx`, a scratch register and the flags; `vzeroupper` clears the
    // upper parts of zmm0–zmm15 it dirtied, so the surrounding SSE code pays no transition
    // penalty.
    unsafe {
        std::arch::asm!(
            // columns 0–7
            "vmovdqu64 zmm0, [{a}]",
            "vpandq zmm0, zmm0, qword ptr [{m}]{{1to8}}",
            "vmovdqu64 zmm1, [{b}]",
            "vpternlogq zmm0, zmm1, qword ptr [{m} + 8]{{1to8}}, 0x78",
            "vmovdqu64 zmm1, [{c}]",
            "vpternlogq zmm0, zmm1, qword ptr [{m} + 16]{{1to8}}, 0x78",
            "vpopcntq zmm0, zmm0",
            "vpmovqb xmm0, zmm0",
            "vpsllq xmm0, xmm0, 7",
            "vpmovmskb {acc:e}, xmm0",
            "cmp {r}, 8",
            "jbe 3f",
            // columns 8 and up, eight per round
            "mov ecx, 8",
            "2:",
            "vmovdqu64 zmm0, [{a} + rcx*8]",
            "vpandq zmm0, zmm0, qword ptr [{m}]{{1to8}}",
            "vmovdqu64 zmm1, [{b} + rcx*8]",
            "vpternlogq zmm0, zmm1, qword ptr [{m} + 8]{{1to8}}, 0x78",
            "vmovdqu64 zmm1, [{c} + rcx*8]",
            "vpternlogq zmm0, zmm1, qword ptr [{m} + 16]{{1to8}}, 0x78",
            "vpopcntq zmm0, zmm0",
            "vpmovqb xmm0, zmm0",
            "vpsllq xmm0, xmm0, 7",
            "vpmovmskb {t:e}, xmm0",
            "shl {t:e}, cl",
            "or {acc:e}, {t:e}",
            "add ecx, 8",
            "cmp rcx, {r}",
            "jb 2b",
            "3:",
            "vzeroupper",
            m = in(reg) m.as_ptr(),
            a = in(reg) a,
            b = in(reg) a.wrapping_add(r),
            c = in(reg) a.wrapping_add(third),
            r = in(reg) r,
            acc = out(reg) acc,
            t = out(reg) _,
            out("ecx") _,
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
            out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
            options(pure, readonly, nostack),
        );
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
/// use bloomlab_core::simd::{self, Parity, ParityTask};
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
static PARITY_LEVEL: std::sync::atomic::AtomicU8 = std::sync::atomic::AtomicU8::new(PARITY_UNKNOWN);

/// This CPU's kernel level (tested once, then cached in [`PARITY_LEVEL`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn parity_level() -> u8 {
    use std::sync::atomic::Ordering::Relaxed;
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
mod ribbon_tests {
    use super::*;

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

    #[test]
    fn inline_column_kernel_agrees_with_the_bitwise_definition() {
        let mut x = 99u64;
        if ColumnKernel::detect().is_none() {
            assert!(!has_avx2(), "an AVX2 CPU gets the inline kernel");
            return;
        }
        assert_eq!(ColumnKernel::avx512().is_some(), has_avx512_popcnt());
        let kernels = [ColumnKernel::avx2(), ColumnKernel::avx512()];
        for (kernel, r) in kernels
            .into_iter()
            .flatten()
            .flat_map(|k| (1..=32usize).map(move |r| (k, r)))
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
            let group = if kernel.name() == "avx512" { 8 } else { 4 };
            let last = words.len() - 2 * r - r.div_ceil(group) * group;
            assert!(kernel.columns3(&words, last, r, 2 * r, [1; 3]).is_some());
            assert_eq!(kernel.columns3(&words, last + 1, r, 2 * r, [1; 3]), None);
            assert_eq!(kernel.columns3(&words, 0, r, r - 1, [1; 3]), None);
        }
        for kernel in kernels.into_iter().flatten() {
            assert_eq!(kernel.columns3(&[0; 64], 0, 0, 0, [1; 3]), None);
            assert_eq!(kernel.columns3(&[0; 200], 0, 33, 33, [1; 3]), None);
        }
    }

    #[test]
    fn a_kernel_bound_to_a_width_answers_as_the_general_one() {
        let mut x = 7u64;
        for kernel in [ColumnKernel::avx2(), ColumnKernel::avx512()]
            .into_iter()
            .flatten()
        {
            assert_eq!(kernel.for_width(0), None);
            assert_eq!(kernel.for_width(33), None);
            for r in 1..=32usize {
                let q = kernel.for_width(r).expect("1 ≤ r ≤ 32");
                assert_eq!((q.width(), q.kernel()), (r, kernel));
                let mut words: Vec<u64> = (0..5 * r).map(|_| mix(&mut x)).collect();
                words.extend([0; COLUMN_PAD]);
                let m = [mix(&mut x), mix(&mut x), mix(&mut x)];
                let reach = 2 * r
                    + r.div_ceil(if kernel.name() == "avx512" { 8 } else { 4 })
                        * if kernel.name() == "avx512" { 8 } else { 4 };
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
                if has_popcnt() {
                    // SAFETY: the CPU has `popcnt`.
                    unsafe { run_parity_popcnt(Check(&lo, &hi, ml, mh, want)) };
                }
                if has_avx2() && has_popcnt() {
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
                if has_popcnt() {
                    // SAFETY: the CPU has `popcnt`.
                    unsafe { run_parity_popcnt(Check3::<R>(ws, third, m, want)) };
                }
                if has_avx2() && has_popcnt() {
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
            if has_avx2() && has_popcnt() {
                // SAFETY: the CPU has AVX2 and `popcnt`.
                assert_eq!(unsafe { run_parity_avx2(Bits(chunk)) }, want);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Classic (whole-array) probes
// ---------------------------------------------------------------------------------------

/// All `k` Kirsch–Mitzenmacher probes `fastrange(h1 + i·h2, m)` hit set bits of `words`
/// (bit `j` is bit `j & 63` of word `j >> 6`), read without a branch: the classic filter's
/// in-cache lookup (portable definition, bounds-checked). Panics if `words` holds fewer
/// than `m` bits.
#[inline(always)]
pub fn classic_contains_all_checked(words: &[u64], m: u64, h1: u64, h2: u64, k: u32) -> bool {
    let mut g = h1;
    let mut all = 1u64;
    for _ in 0..k {
        let j = crate::hash::fastrange(g, m);
        all &= words[(j >> 6) as usize] >> (j & 63);
        g = g.wrapping_add(h2);
    }
    all & 1 != 0
}

/// [`classic_contains_all_checked`] with one bounds check per call instead of one per
/// probe: every probe is `fastrange(·, m) < m`, so once `m ≤ 64 · words.len()` holds, every
/// word index is in range. Same answers (tested); falls back to the checked twin (which
/// panics) when `words` is too short.
#[inline(always)]
pub fn classic_contains_all(words: &[u64], m: u64, h1: u64, h2: u64, k: u32) -> bool {
    if m.div_ceil(64) > words.len() as u64 {
        return classic_contains_all_checked(words, m, h1, h2, k);
    }
    let mut g = h1;
    let mut all = 1u64;
    for _ in 0..k {
        let j = crate::hash::fastrange(g, m);
        // SAFETY: `j = ⌊g · m / 2^64⌋ < m`, so `j >> 6 < ⌈m / 64⌉ ≤ words.len()` (checked
        // above): the index is in bounds.
        let w = unsafe { *words.get_unchecked((j >> 6) as usize) };
        all &= w >> (j & 63);
        g = g.wrapping_add(h2);
    }
    all & 1 != 0
}

// ---------------------------------------------------------------------------------------
// The occupancy chain's throw (`math`'s exact blocked FPR for sparse filters).

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
        let mut v: Vec<(&str, Step<T>)> = vec![("dispatched", occupancy_step::<T>)];
        #[cfg(target_arch = "x86_64")]
        {
            if has_avx2() {
                // SAFETY: the CPU supports AVX2 (checked just above).
                v.push(("avx2", |d, c| unsafe { occupancy_step_avx2(d, c) }));
            }
            if has_avx512f() {
                // SAFETY: the CPU supports AVX-512F (checked just above).
                v.push(("avx512", |d, c| unsafe { occupancy_step_avx512(d, c) }));
            }
        }
        v
    }

    fn check<const T: usize>(next: &mut impl FnMut() -> f64) {
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for n in 0..=70usize {
            let coef: Vec<Vec<f64>> = (0..T).map(|_| (0..n).map(|_| next()).collect()).collect();
            let coef: [&[f64]; T] = std::array::from_fn(|t| coef[t].as_slice());
            let start: Vec<f64> = (0..n + T - 1)
                .map(|_| next() * (-60.0 * next()).exp())
                .collect();
            let mut want = start.clone();
            for _ in 0..5 {
                occupancy_step_portable(&mut want, coef);
            }
            for (name, step) in variants::<T>() {
                let mut got = start.clone();
                for _ in 0..5 {
                    step(&mut got, coef);
                }
                assert_eq!(bits(&want), bits(&got), "{name}, {T} taps, window of {n}");
            }
        }
    }

    // Off x86-64 only the dispatcher runs, which is then the portable loop itself.
    #[test]
    fn wide_lanes_agree_with_the_portable_throw_bit_for_bit() {
        // Windows of every length from 0 to 70 (every remainder of the chunking), values
        // spread over many binades, several steps in a row, one throw and two at a time.
        let mut st = 11u64;
        let mut next = || {
            st = st
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1442695040888963407);
            (st >> 11) as f64 / (1u64 << 53) as f64
        };
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
}

#[cfg(test)]
mod classic_tests {
    use super::*;

    #[test]
    fn unchecked_probes_agree_with_the_checked_twin() {
        let mut st = 5u64;
        let mut next = || {
            st = st.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            st ^ (st >> 29)
        };
        for m in [1u64, 63, 64, 65, 1000, 4096, 100_003] {
            // Each word about half set, so both answers occur.
            let words: Vec<u64> = (0..m.div_ceil(64)).map(|_| next()).collect();
            for _ in 0..2000 {
                let (h1, h2, k) = (next(), next() | 1, (next() % 16) as u32 + 1);
                assert_eq!(
                    classic_contains_all(&words, m, h1, h2, k),
                    classic_contains_all_checked(&words, m, h1, h2, k),
                    "m = {m}"
                );
            }
        }
    }

    #[test]
    #[should_panic]
    fn too_short_a_table_panics_instead_of_reading_past_it() {
        classic_contains_all(&[u64::MAX], 65, u64::MAX, 1, 3);
    }
}
