//! A cache-local blocked Bloom filter (Putze, Sanders & Singler 2007), in the manner of
//! RocksDB's `FastLocalBloom`: one memory access per insert or lookup.
//!
//! # What it is for
//!
//! A set-membership summary that answers "definitely not" or "maybe" for any key, for workloads
//! where lookups dominate and the table is larger than the caches: every probe of a key lands in
//! one 512-bit block (one 64-byte cache line, 64-byte aligned), so a lookup costs one cache miss
//! where a classic filter pays up to `k`.
//!
//! # Guarantees
//!
//! - **No false negatives:** a key that was inserted always answers `true`, also after
//!   [`union`](BlockedBloomFilter::union), re-encoding and serde.
//! - **FPR bound:** [`with_fpr`](BlockedBloomFilter::with_fpr) sizes the table with the exact
//!   blocked formula ([`math::blocked_fpr_exact`]: a Poisson mixture over block loads with the
//!   exact within-block occupancy), so at the design load the expected FPR is at or below the
//!   target; the tests measure it within a 5σ binomial bound at 0.1 %, 1 % and 3 %. A 1 % target
//!   costs 9.92 bits/item with `k = 6` (classic: 9.59 with `k = 7`).
//! - **Errors:** bad parameters give [`Error`] (an FPR outside (0, 1), zero items, a size past
//!   `u64`); decoding gives a typed [`DecodeError`] for every malformed input and never panics.
//!   Combining filters of different sizes, schemes or layouts is refused.
//!
//! # Format
//!
//! The checked `BLAB` envelope of [`bloomlab_core::format`] (variant tag 2). The probe layout is
//! part of the format, so each layout has its own envelope version: new filters write version 3
//! ([`Layout::OneHash`]); versions 1 ([`Layout::Wide64`]) and 2 ([`Layout::Local32`]) still load
//! and keep answering as they were written. Every version is pinned by literal vectors in
//! `tests/known_answers.rs` and `tests/format_versions.rs`.
//!
//! # Probe positions
//!
//! One 64-bit hash `x` per key ([`hash64`](HashScheme::hash64) of the scheme: XXH3-64 for the
//! default, SipHash-2-4 for the keyed ones). The block is `⌊(x >> 32) · blocks / 2^32⌋`; with
//! `h = x mod 2^32`, probe `i` is bit `(h · 0x9e37_79b9^i mod 2^32) >> 23` of the block —
//! RocksDB's split of one 64-bit hash (`util/bloom_impl.h`). Version 2 uses the same in-block
//! rule with `h` from the 128-bit hash's `h2` and the block by fastrange of `h1`; version 1
//! walks `h_{i+1} = h_i · 0x9e37_79b9_7f4a_7c15` over 64 bits and takes the top 9 bits.
//!
//! # Complexity
//!
//! Insert and lookup: one hash, one cache line, `O(k)` bit operations (one vector kernel for
//! `k ≤ 16`). Space: `⌈m / 512⌉` cache lines. Construction by [`with_fpr`](BlockedBloomFilter::with_fpr)
//! sizes in microseconds and takes the table as zeroed pages. Batched lookups
//! ([`might_contain_batch`](BlockedBloomFilter::might_contain_batch)) hash and prefetch
//! [`BATCH`] keys ahead.
//!
//! # Example
//!
//! ```
//! use bloomlab_blocked::BlockedBloomFilter;
//!
//! let mut f = BlockedBloomFilter::with_fpr(100_000, 0.01)?;
//! assert_eq!(f.hashes(), 6);
//! let bits_per_item = f.bits() as f64 / 100_000.0;
//! assert!((bits_per_item - 9.92).abs() < 0.01, "{bits_per_item}"); // 9.92 bits/item at 1 %
//! for i in 0..100_000u64 {
//!     f.insert(&i);
//! }
//! assert!((0..100_000u64).all(|i| f.might_contain(&i))); // never a false negative
//! assert!(f.expected_fpr() <= 0.01);
//!
//! // 200 000 keys that were never inserted: the formula expects ≈ 1 % of them to say "maybe";
//! // the count stays within 5σ of that (σ = √(N·p·(1−p)) ≈ 44.5).
//! let fp = (1u64 << 40..(1u64 << 40) + 200_000).filter(|i| f.might_contain(i)).count();
//! let expected = 200_000.0 * f.expected_fpr();
//! assert!((fp as f64 - expected).abs() < 5.0 * 44.5, "{fp} vs {expected}");
//!
//! // Batched lookups give the same answers as single ones.
//! let keys: Vec<u64> = (99_990..100_010).collect();
//! let mut out = vec![false; keys.len()];
//! f.might_contain_batch(&keys, &mut out)?;
//! assert!(keys.iter().zip(&out).all(|(k, &o)| o == f.might_contain(k)));
//! # Ok::<(), bloomlab_core::Error>(())
//! ```
//!
//! # Threads, parallel builds and bytes in place
//!
//! - [`AtomicBlockedBloomFilter`]: the same bits, inserted through `&self` by relaxed
//!   `fetch_or`s, so threads fill one filter without a lock; converts to and from this filter
//!   bit-identically.
//! - [`BlockedBloomFilter::from_keys`] and [`insert_parallel`](BlockedBloomFilter::insert_parallel):
//!   a build on every core, bit-identical to inserting the keys one by one.
//! - [`BlockedBloomFilterView`]: answers straight from the bytes
//!   [`to_bytes`](BlockedBloomFilter::to_bytes) wrote, validated exactly as
//!   [`from_bytes`](BlockedBloomFilter::from_bytes) validates; [`BlockedFilterBytes`] keeps such
//!   bytes, validated once.
//!
//! # no_std
//!
//! Without its default `std` feature the crate is `#![no_std]` and needs only `alloc`; the
//! filter, its batched operations, its byte format and the view are all there. The atomic
//! filter (thread-local state, and 64-bit atomics, which targets such as
//! `thumbv7em-none-eabihf` lack) and the parallel builds need `std`. Without std the inline
//! kernels are those of the target features the build enables (`bloomlab-simd`'s docs).
//!
//! # Why this design
//!
//! A lookup that touches one cache line is what makes a filter fast once it no longer fits the
//! caches, and the price — keys spread over blocks unevenly, so crowded blocks answer "maybe"
//! more often — is small and exactly computable, so the filter is sized by the exact formula and
//! meets its target instead of missing it by a few percent. 512-bit blocks with free probe
//! positions keep `k` a free parameter (unlike the split block of `bloomlab-sbbf`, which fixes
//! eight probes in 256 bits and pays about 1.3× the FPR for the same bits). The measurements
//! behind these choices and the earlier layouts are in `docs/design/blocked.md`; current
//! figures are in `results/`.
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod math;

use alloc::{boxed::Box, format, vec::Vec};
use core::fmt;

#[cfg(all(feature = "std", target_has_atomic = "64"))]
mod atomic;
mod layout;
#[cfg(feature = "std")]
mod parallel;
mod view;

#[cfg(all(feature = "std", target_has_atomic = "64"))]
pub use atomic::AtomicBlockedBloomFilter;
use layout::Rule;
pub use layout::{Layout, ONE_HASH_MAX_BLOCKS, PROBE_MULTIPLIER};
pub(crate) use layout::{by_layout, hash_again_in, hash_in, one_hash_split};
#[cfg(feature = "std")]
pub use parallel::{PARALLEL_MAX_QUEUED, available_threads};
pub use view::{BlockedBloomFilterView, BlockedFilterBytes};

use bloomlab_core::Key;
use bloomlab_core::bits;
use bloomlab_core::error::{DecodeError, Error, Result};
use bloomlab_core::format::{self, EnvelopeWriter, Reader, Variant};
use bloomlab_core::hash::{HashScheme, KeyHash, Xxh3Scheme};
use bloomlab_core::meta::{FilterCore, Meta};
use bloomlab_simd::{self as simd, InlineKernel, LocalKernel, LocalProbe, PortableProbe};

/// Bits per block: one 64-byte cache line.
pub const BLOCK_BITS: u32 = 512;
/// Bytes per block.
pub const BLOCK_BYTES: usize = 64;
/// Prefetch distance of the batched operations: while key `i` is answered, the block of key
/// `i + BATCH` is being fetched. 16 and 32 measured alike and best of 8–64 at 10^7 keys
/// (`docs/design/blocked.md`).
pub const BATCH: usize = 32;

/// Tables up to this many bytes answer [`BlockedBloomFilter::might_contain_batch`] with the
/// single-lookup loop, without the prefetching pipeline (unless the scheme hashes in vector lanes,
/// [`HashScheme::LANES`], which pays at every size). In cache the pipeline only adds work: the
/// single lookup has no branch, so the out-of-order core already overlaps consecutive keys, and the
/// ring and prefetches cost about a tenth. The threshold was measured (`docs/design/blocked.md`).
pub const SINGLE_LOOP_UP_TO: usize = 384 << 10;

// One 512-bit block: eight words, aligned to a 64-byte cache line (`simd::Line`). Bit `j`
// of the block is bit `j & 63` of word `j >> 6`.
use bloomlab_simd::Line as Block;

const _: () = assert!(core::mem::size_of::<Block>() == BLOCK_BYTES);
const _: () = assert!(core::mem::align_of::<Block>() == BLOCK_BYTES);

/// The set bits of one block.
fn block_ones(b: &Block) -> u32 {
    b.0.iter().map(|w| w.count_ones()).sum()
}

/// A zeroed vector of `n` blocks, or [`Error::SizeOverflow`] if it cannot exist or the
/// allocator refuses (instead of aborting the process).
fn zeroed_blocks(n: u64) -> Result<simd::Lines> {
    let too_big = || Error::SizeOverflow(format!("{n} blocks of 64 bytes do not fit in memory"));
    let n_usize = usize::try_from(n).map_err(|_| too_big())?;
    if n.checked_mul(BLOCK_BYTES as u64)
        .is_none_or(|b| b > isize::MAX as u64)
    {
        return Err(too_big());
    }
    // A zeroed allocation: microseconds at any size (the OS zeroes pages on first touch).
    simd::zeroed_lines(n_usize)
        .ok_or_else(|| Error::SizeOverflow(format!("cannot allocate {n} blocks of 64 bytes")))
}

/// A blocked Bloom filter: `blocks` × 512 bits, `k` probes per key inside one block, generic
/// over the hash scheme.
///
/// `len()` counts calls to insert, repeats included; [`estimated_len`](Self::estimated_len)
/// estimates distinct keys from the fill instead.
#[derive(Clone)]
// The fields a single lookup or insert reads come first — the table's pointer and length, the
// inline kernel's path and `k` (18 bytes) — and `repr(C)` keeps them in that order; the rest is
// behind a pointer, so the struct is 32 bytes. It is not over-aligned: a type aligned to 64
// bytes cannot live in memory that only promises 16 (a Python object holding it aborted in a
// debug build). Two filters share each cache line of an array of them, and what a lookup reads
// (bytes 0..18) crosses a line only for a filter that starts 48 or more bytes into one: in an
// array at a 16-byte boundary, one filter in four on average (the 64-byte handle's bytes
// 0..50 crossed for three in four).
#[repr(C)]
pub struct BlockedBloomFilter<S: HashScheme = Xxh3Scheme> {
    blocks: simd::Lines,
    /// The kernel single operations run inline, chosen once with the layout and `k`
    /// ([`fast_kernel`]): [`InlineKernel::OFF`] sends every key of an earlier layout, a `k` past
    /// the inline kernels or a CPU without them to the one out-of-line path.
    fast: InlineKernel,
    /// Everything else, behind one pointer, so the struct is 32 bytes: where
    /// thousands of filters are resident (one per table file of an LSM tree), their handles
    /// take half the cache lines a 64-byte handle took.
    cold: Box<Cold<S>>,
}

// 32 bytes where pointers are 64 bits (the table's pointer and length, two bytes of inline
// kernel, the pointer to the rest), 16 where they are 32.
const _: () = assert!(
    core::mem::size_of::<BlockedBloomFilter>() == 4 * core::mem::size_of::<usize>()
        && core::mem::align_of::<BlockedBloomFilter>() == core::mem::align_of::<usize>()
);

/// What a blocked filter's lookups of the current layout do not read.
#[derive(Clone)]
struct Cold<S: HashScheme> {
    k: u32,
    layout: Layout,
    /// The kernel of single operations, chosen for this CPU at construction (not part of
    /// the filter's value: equality, formats and serde ignore it).
    kernel: LocalKernel,
    /// Count, capacity, target and scheme ([`bloomlab_core::meta`]).
    meta: Meta<S>,
}

/// The inline kernel of a filter of `layout` with `kernel`: `kernel`'s own for the current
/// layout ([`Layout::OneHash`]), whose lookups the inline path places; none for the earlier
/// layouts, which place keys by another rule.
pub(crate) fn fast_kernel(layout: Layout, kernel: LocalKernel) -> InlineKernel {
    if layout == Layout::OneHash {
        InlineKernel::of(kernel)
    } else {
        InlineKernel::OFF
    }
}

/// The shape accessors of a table of 512-bit blocks (fields `blocks` and `k`), the owned and
/// the shared filter's alike.
macro_rules! block_table_accessors {
    ($($k:ident).+) => {
        /// Number of 512-bit blocks.
        pub fn blocks(&self) -> u64 {
            self.blocks.len() as u64
        }

        /// `m`, the number of bits (blocks × 512).
        pub fn bits(&self) -> u64 {
            self.blocks() * u64::from(BLOCK_BITS)
        }

        /// `k`, probes per key (all inside one block).
        pub fn hashes(&self) -> u32 {
            self.$($k).+
        }
    };
}
#[cfg(all(feature = "std", target_has_atomic = "64"))]
pub(crate) use block_table_accessors;

bloomlab_core::default_scheme_constructors! {
    impl BlockedBloomFilter {
        /// Size for `expected_items` at false-positive rate `fpr` with the blocked formula:
        /// bits/item and `k` from [`math::blocked_bits_per_item_exact`] (9.92 bits/item and k = 6
        /// at 1 %; 15.55 and 9 at 0.1 %; 7.43 and 5 at 3 %), rounded up to whole blocks.
        ///
        /// Errors: `n = 0`, `p` not in (0, 1) (NaN and infinities included), a size that does not
        /// fit in memory, or a `p` no 512-bit block can reach.
        fn with_fpr(expected_items: u64, fpr: f64) = with_fpr_and_scheme;

        /// Size for `expected_items` at exactly `bits_per_item` (rounded up to whole blocks), with
        /// the `k` that minimises the blocked formula at that density
        /// ([`math::blocked_best_hashes`]): 5 at 8 bits/item, 7 at 10, 10 at 16.
        fn with_bits_per_item(expected_items: u64, bits_per_item: f64) = with_bits_per_item_and_scheme;

        /// Build with exactly `blocks` 512-bit blocks and `hashes` probes per key. The design
        /// capacity is taken as `m·ln 2 / k` (the classic optimum's load).
        fn with_blocks(blocks: u64, hashes: u32) = with_blocks_and_scheme;

        /// Decode the checked, versioned format written by [`to_bytes`](Self::to_bytes).
        fn from_bytes(bytes: &[u8]) = from_bytes_with_scheme;
    }
}

use bloomlab_core::format::check_hashes;

/// The fewest inserts that could have set `ones` bits in one block with `k` probes each.
fn min_inserts(ones: u32, k: u32) -> u64 {
    u64::from(ones.div_ceil(k))
}

impl<S: HashScheme> BlockedBloomFilter<S> {
    /// [`with_fpr`](BlockedBloomFilter::with_fpr) with a chosen hash scheme.
    pub fn with_fpr_and_scheme(expected_items: u64, fpr: f64, scheme: S) -> Result<Self> {
        let n = bloomlab_core::math::validate_items(expected_items)?;
        bloomlab_core::math::validate_fpr(fpr)?;
        // A blocked filter never needs fewer bits than the classic one: refuse sizes that
        // overflow before searching for the blocked density.
        bloomlab_core::math::classic_bits(n, fpr)?;
        let (bits_per_item, k) = math::blocked_bits_per_item_exact(fpr, BLOCK_BITS)?;
        let mut f = Self::sized(n, bits_per_item, k, scheme)?;
        f.cold.meta.set_target_fpr(Some(fpr));
        Ok(f)
    }

    /// [`with_bits_per_item`](BlockedBloomFilter::with_bits_per_item) with a chosen hash scheme.
    pub fn with_bits_per_item_and_scheme(
        expected_items: u64,
        bits_per_item: f64,
        scheme: S,
    ) -> Result<Self> {
        let n = bloomlab_core::math::validate_items(expected_items)?;
        bloomlab_core::math::bits_for_bits_per_item(n, bits_per_item)?;
        let k = math::blocked_best_hashes(bits_per_item, BLOCK_BITS);
        Self::sized(n, bits_per_item, k, scheme)
    }

    /// The filter of these parts, with its kernels chosen for this CPU, `k` and `layout`:
    /// the one place the struct is built, so the inline kernel always matches the layout.
    fn assemble(blocks: simd::Lines, k: u32, layout: Layout, meta: Meta<S>) -> Self {
        let kernel = LocalKernel::detect(k);
        BlockedBloomFilter {
            blocks,
            fast: fast_kernel(layout, kernel),
            cold: Box::new(Cold {
                k,
                layout,
                kernel,
                meta,
            }),
        }
    }

    /// Heap bytes the filter holds besides its table: the fields a lookup does not read (`k`,
    /// layout, kernel, count, capacity, target, scheme), kept behind one pointer so that the
    /// filter itself is 32 bytes. [`size_in_bytes`](bloomlab_core::Filter::size_in_bytes) counts the
    /// table only (its bits are the filter's `m`).
    pub const HANDLE_HEAP_BYTES: usize = core::mem::size_of::<Cold<S>>();

    /// The kernel single operations run inline: `"avx512"`, `"avx2"`, `"neon"`, or `"off"`
    /// when they take the out-of-line path (an earlier layout, `k` past the inline kernels,
    /// a CPU without them). Tests and measurements print it.
    pub fn inline_kernel(&self) -> &'static str {
        self.fast.name()
    }

    fn sized(n: u64, bits_per_item: f64, k: u32, scheme: S) -> Result<Self> {
        let bits = bloomlab_core::math::bits_for_bits_per_item(n, bits_per_item)?;
        let blocks = bits.div_ceil(u64::from(BLOCK_BITS));
        let k = bloomlab_core::math::validate_hashes(k)?;
        Ok(Self::assemble(
            zeroed_blocks(blocks)?,
            k,
            Layout::for_blocks(blocks),
            Meta::new(n, None, scheme),
        ))
    }

    /// [`with_blocks`](BlockedBloomFilter::with_blocks) with a chosen hash scheme.
    pub fn with_blocks_and_scheme(blocks: u64, hashes: u32, scheme: S) -> Result<Self> {
        if blocks == 0 {
            return Err(Error::invalid("blocks", "must be at least 1"));
        }
        let k = bloomlab_core::math::validate_hashes(hashes)?;
        let bits = blocks
            .checked_mul(u64::from(BLOCK_BITS))
            .ok_or_else(|| Error::SizeOverflow(format!("{blocks} blocks of 512 bits")))?;
        Ok(Self::assemble(
            zeroed_blocks(blocks)?,
            k,
            Layout::for_blocks(blocks),
            Meta::new(bloomlab_core::math::classic_capacity(bits, k), None, scheme),
        ))
    }

    /// Insert a key. Returns `true` if the key was definitely new (at least one of its bits
    /// was still zero), `false` if it may have been present already.
    #[inline(always)]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        key.with_key_bytes(
            #[inline(always)]
            |b| self.insert_bytes_inline(b),
        )
    }

    /// One insert of a key's bytes: the current layout's hash and block and the inline kernel,
    /// all inlined into the caller; every other case (an earlier layout, `k` past the inline
    /// kernels, no inline kernel on this CPU) takes one out-of-line call.
    #[inline(always)]
    fn insert_bytes_inline(&mut self, key: &[u8]) -> bool {
        let x = self.cold.meta.scheme().hash64(key);
        let (line, probe) = one_hash_split(KeyHash::new(x, 0));
        let fast = self.fast;
        match fast.insert(&mut self.blocks.fastrange_mut(line).0, probe) {
            Some(new) => {
                self.cold.meta.record_insert();
                new
            }
            None => self.insert_out_of_line(key, x),
        }
    }

    /// [`insert_one`](Self::insert_one) for the cases the inline path does not serve: every
    /// layout, every kernel, out of the caller's loop. `x` is the current layout's hash of
    /// `key`, already computed (a filter of an earlier layout hashes the key its own way).
    #[cold]
    #[inline(never)]
    fn insert_out_of_line(&mut self, key: &[u8], x: u64) -> bool {
        let h = hash_again_in(self.cold.layout, self.cold.meta.scheme(), key, x);
        self.insert_one(h)
    }

    /// Insert a key that was already hashed with this filter's scheme.
    #[inline]
    pub fn insert_hash(&mut self, h: KeyHash) -> bool {
        self.insert_one(h)
    }

    /// One insert, the kernel inlined into the caller
    /// ([`LocalKernel::insert`]: no call).
    #[inline(always)]
    fn insert_one(&mut self, h: KeyHash) -> bool {
        self.cold.meta.record_insert();
        if self.cold.layout == Layout::OneHash {
            let (line, probe) = one_hash_split(h);
            let block = self.blocks.fastrange_mut(line);
            return self.cold.kernel.insert(&mut block.0, probe, self.cold.k);
        }
        let kernel = self.cold.kernel;
        by_layout!(self.cold.layout, R => self.insert_in::<R, _>(kernel, h))
    }

    /// One lookup, the kernel inlined into the caller
    /// ([`LocalKernel::contains`]: no call).
    #[inline(always)]
    fn contains_one(&self, h: KeyHash) -> bool {
        if self.cold.layout == Layout::OneHash {
            let (line, probe) = one_hash_split(h);
            return self
                .cold
                .kernel
                .contains(&self.blocks.fastrange(line).0, probe, self.cold.k);
        }
        by_layout!(self.cold.layout, R => self.contains_in::<R, _>(self.cold.kernel, h))
    }

    /// Set the probes of hash `h` under rule `R` with kernel `probe` (inlined into the
    /// caller; the count is the caller's).
    #[inline(always)]
    fn insert_in<R: Rule, P: LocalProbe>(&mut self, probe: P, h: KeyHash) -> bool {
        let (b, src) = R::place(h, self.blocks.len() as u64);
        R::insert(probe, &mut self.blocks[b], src, self.cold.k)
    }

    /// Whether every probe of hash `h` under rule `R` is set, with kernel `probe` (inlined
    /// into the caller).
    #[inline(always)]
    fn contains_in<R: Rule, P: LocalProbe>(&self, probe: P, h: KeyHash) -> bool {
        let (b, src) = R::place(h, self.blocks.len() as u64);
        R::contains(probe, &self.blocks[b], src, self.cold.k)
    }

    /// [`insert`](Self::insert) on the portable path (no SIMD), whatever the CPU: the same
    /// block bits as the vector path, which the tests check on machines that have one.
    pub fn insert_portable<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        let h = self.hash_key(key);
        self.cold.meta.record_insert();
        by_layout!(self.cold.layout, R => self.insert_in::<R, _>(PortableProbe, h))
    }

    /// [`might_contain`](Self::might_contain) on the portable path (no SIMD), whatever the
    /// CPU: the same answer as the vector path.
    pub fn might_contain_portable<K: Key + ?Sized>(&self, key: &K) -> bool {
        let h = self.hash_key(key);
        by_layout!(self.cold.layout, R => self.contains_in::<R, _>(PortableProbe, h))
    }

    /// The probe layout: [`Layout::OneHash`] for every filter built by this version (of at
    /// most 2^32 blocks), the recorded one for filters decoded from earlier files.
    pub fn layout(&self) -> Layout {
        self.cold.layout
    }

    /// The same empty filter with the probe layout `layout`: [`Layout::Local32`] and
    /// [`Layout::Wide64`] write envelope-version-2 and -1 files, which readers built before
    /// the third and second layouts can load. Refused once a key is in (its bits were placed
    /// by the old layout), and [`Layout::OneHash`] for more than 2^32 blocks.
    pub fn with_layout(mut self, layout: Layout) -> Result<Self> {
        if self.cold.meta.count() != 0 || self.count_ones() != 0 {
            return Err(Error::invalid(
                "layout",
                "can only be chosen while the filter is empty",
            ));
        }
        if !layout.addresses(self.blocks.len() as u64) {
            return Err(Error::invalid(
                "layout",
                format!(
                    "the third layout addresses at most 2^32 blocks; this filter has {}",
                    self.blocks.len()
                ),
            ));
        }
        self.cold.layout = layout;
        self.fast = fast_kernel(layout, self.cold.kernel);
        Ok(self)
    }

    /// Insert many keys: the key [`BATCH`] positions ahead is hashed and its block prefetched
    /// while key `i` is inserted, so the cache misses overlap. Keys are inserted in order; the
    /// result is identical to inserting them one by one.
    ///
    /// A table of the current layout of at most [`SINGLE_LOOP_UP_TO`] bytes (in cache) takes
    /// the keys one by one instead, as [`might_contain_batch`](Self::might_contain_batch) does:
    /// there the ring and prefetches only add work (unless the scheme hashes in vector lanes).
    pub fn insert_batch<K: Key>(&mut self, keys: &[K]) {
        if !S::LANES
            && self.cold.layout == Layout::OneHash
            && self.blocks.len() * BLOCK_BYTES <= SINGLE_LOOP_UP_TO
        {
            for key in keys {
                self.insert(key);
            }
            return;
        }
        by_layout!(self.cold.layout, R => self.insert_batch_in::<R, K>(keys))
    }

    /// [`insert_batch`](Self::insert_batch) under rule `R`, chosen once for the batch.
    fn insert_batch_in<R: Rule, K: Key>(&mut self, keys: &[K]) {
        let (kernel, n) = (self.cold.kernel, self.blocks.len() as u64);
        if S::LANES {
            // Hashed eight at a time in vector lanes; the same keys inserted in the same order.
            simd::pipeline_chunks::<Self, K, KeyHash, BATCH>(
                self,
                keys,
                KeyHash::new(0, 0),
                |f, ks, hs| R::hash_chunk(f.cold.meta.scheme(), ks, hs),
                |f, h| simd::prefetch(&f.blocks[R::place(*h, n).0]),
                |f, _, h| {
                    f.cold.meta.record_insert();
                    f.insert_in::<R, _>(kernel, h);
                },
            );
            return;
        }
        let mut ring = [KeyHash::new(0, 0); BATCH];
        for (r, key) in ring.iter_mut().zip(keys) {
            *r = R::hash(self.cold.meta.scheme(), key);
            simd::prefetch(&self.blocks[R::place(*r, n).0]);
        }
        for i in 0..keys.len() {
            let slot = i % BATCH;
            let h = ring[slot];
            if let Some(key) = keys.get(i + BATCH) {
                let ahead = R::hash(self.cold.meta.scheme(), key);
                simd::prefetch(&self.blocks[R::place(ahead, n).0]);
                ring[slot] = ahead;
            }
            self.cold.meta.record_insert();
            self.insert_in::<R, _>(kernel, h);
        }
    }

    /// `false`: the key was definitely never inserted. `true`: it maybe was.
    #[inline(always)]
    pub fn might_contain<K: Key + ?Sized>(&self, key: &K) -> bool {
        key.with_key_bytes(
            #[inline(always)]
            |b| self.contains_bytes_inline(b),
        )
    }

    /// One lookup of a key's bytes: the current layout's hash (XXH3-64 for the default
    /// scheme), its block by fastrange of the high half, the inline kernel on the low half —
    /// about fifteen instructions besides the hash, inlined into the caller, reading one cache
    /// line of the filter and one of the table. Every other case takes one out-of-line call.
    #[inline(always)]
    fn contains_bytes_inline(&self, key: &[u8]) -> bool {
        let x = self.cold.meta.scheme().hash64(key);
        let (line, probe) = one_hash_split(KeyHash::new(x, 0));
        match self.fast.contains(&self.blocks.fastrange(line).0, probe) {
            Some(hit) => hit,
            None => self.contains_out_of_line(key, x),
        }
    }

    /// [`contains_one`](Self::contains_one) for the cases the inline path does not serve (`x`
    /// as in [`insert_out_of_line`](Self::insert_out_of_line)).
    #[cold]
    #[inline(never)]
    fn contains_out_of_line(&self, key: &[u8], x: u64) -> bool {
        self.contains_one(hash_again_in(
            self.cold.layout,
            self.cold.meta.scheme(),
            key,
            x,
        ))
    }

    /// Query with a hash computed by this filter's scheme.
    #[inline]
    pub fn might_contain_hash(&self, h: KeyHash) -> bool {
        self.contains_one(h)
    }

    /// Answer many keys at once: `out[i] = might_contain(keys[i])`. The key [`BATCH`]
    /// positions ahead is hashed and its block prefetched while key `i` is answered, so about
    /// [`BATCH`] memory accesses are in flight at any time instead of one or two. Errors
    /// (changing nothing) if `out` is not exactly as long as `keys`.
    ///
    /// A table of the current layout of at most [`SINGLE_LOOP_UP_TO`] bytes (in cache) is
    /// answered key by key instead, which is faster there, unless the scheme hashes in vector
    /// lanes ([`HashScheme::LANES`]); the answers are the same.
    pub fn might_contain_batch<K: Key>(&self, keys: &[K], out: &mut [bool]) -> Result<()> {
        // Earlier layouts answer single lookups out of line, so they keep the pipeline.
        if !S::LANES
            && self.cold.layout == Layout::OneHash
            && self.blocks.len() * BLOCK_BYTES <= SINGLE_LOOP_UP_TO
        {
            Error::check_out_len(keys.len(), out.len())?;
            for (o, key) in out.iter_mut().zip(keys) {
                *o = self.might_contain(key);
            }
            return Ok(());
        }
        self.might_contain_batch_at::<K, BATCH>(keys, out)
    }

    /// [`might_contain_batch`](Self::might_contain_batch) with prefetch distance `D` instead
    /// of [`BATCH`], for tuning on a given machine (`D = 1` prefetches only the next key).
    /// Answers are the same for every `D ≥ 1`; `D = 0` is an error.
    pub fn might_contain_batch_at<K: Key, const D: usize>(
        &self,
        keys: &[K],
        out: &mut [bool],
    ) -> Result<()> {
        Error::check_out_len(keys.len(), out.len())?;
        if D == 0 {
            return Err(Error::invalid(
                "D",
                "the prefetch distance must be at least 1",
            ));
        }
        self.contains_batch_at::<K, D>(keys, out);
        Ok(())
    }

    /// The loop of [`might_contain_batch_at`](Self::might_contain_batch_at) (`out` as long as
    /// `keys`, `D ≥ 1`), its layout's rule chosen once.
    fn contains_batch_at<K: Key, const D: usize>(&self, keys: &[K], out: &mut [bool]) {
        by_layout!(self.cold.layout, R => self.contains_batch_in::<R, K, D>(keys, out))
    }

    /// [`contains_batch_at`](Self::contains_batch_at) under rule `R`.
    fn contains_batch_in<R: Rule, K: Key, const D: usize>(&self, keys: &[K], out: &mut [bool]) {
        // Everything the loop reads, in locals (registers): each key's block index is
        // computed once, D keys ahead, and travels with its probe source.
        let (blocks, k, n) = (&self.blocks[..], self.cold.k, self.blocks.len() as u64);
        // The filter's inline kernel (AVX-512 where the CPU has it), as single lookups use.
        let (kernel, scheme) = (self.cold.kernel, self.cold.meta.scheme());
        let prefetch = |&(b, _): &(usize, u64)| simd::prefetch(&blocks[b]);
        let answer = |(b, src): (usize, u64)| R::contains(kernel, &blocks[b], src, k);
        if S::LANES && D >= simd::CHUNK && D.is_multiple_of(simd::CHUNK) {
            // The same loop with keys hashed eight at a time in vector lanes.
            let hash = |_: &[bool], ks: &[K], out: &mut [(usize, u64)]| {
                let mut hs = [KeyHash::new(0, 0); simd::CHUNK];
                R::hash_chunk(scheme, ks, &mut hs[..ks.len()]);
                for (o, h) in out.iter_mut().zip(hs) {
                    *o = R::place(h, n);
                }
            };
            simd::pipeline_chunks::<[bool], K, _, D>(
                out,
                keys,
                (0, 0),
                hash,
                |_, h| prefetch(h),
                |out, i, p| out[i] = answer(p),
            );
            return;
        }
        let hash = |key: &K| R::place(R::hash(scheme, key), n);
        simd::pipeline::<K, (usize, u64), D>(keys, hash, prefetch, |i, p| out[i] = answer(p))
    }

    /// [`might_contain_batch`](Self::might_contain_batch) for keys already hashed with this
    /// filter's scheme: prefetches the blocks of [`BATCH`] hashes ahead of the one it answers.
    pub fn might_contain_hashes(&self, hashes: &[KeyHash], out: &mut [bool]) -> Result<()> {
        Error::check_out_len(hashes.len(), out.len())?;
        by_layout!(self.cold.layout, R => self.contains_hashes_in::<R>(hashes, out));
        Ok(())
    }

    /// [`might_contain_hashes`](Self::might_contain_hashes) under rule `R` (`out` as long as
    /// `hashes`).
    fn contains_hashes_in<R: Rule>(&self, hashes: &[KeyHash], out: &mut [bool]) {
        let (kernel, n) = (self.cold.kernel, self.blocks.len() as u64);
        for h in hashes.iter().take(BATCH) {
            simd::prefetch(&self.blocks[R::place(*h, n).0]);
        }
        for (i, (o, h)) in out.iter_mut().zip(hashes).enumerate() {
            if let Some(ahead) = hashes.get(i + BATCH) {
                simd::prefetch(&self.blocks[R::place(*ahead, n).0]);
            }
            *o = self.contains_in::<R, _>(kernel, *h);
        }
    }

    /// The hash scheme.
    pub fn scheme(&self) -> &S {
        self.cold.meta.scheme()
    }

    /// Hash a key with this filter's scheme.
    ///
    /// Under [`Layout::OneHash`] the key has one 64-bit hash, the scheme's
    /// [`hash64`](HashScheme::hash64), returned in `h1` (with `h2 = 1`); under the earlier
    /// layouts it is the scheme's 128-bit [`hash`](HashScheme::hash). Either way it is what
    /// [`might_contain_hash`](Self::might_contain_hash), [`insert_hash`](Self::insert_hash)
    /// and [`might_contain_hashes`](Self::might_contain_hashes) expect.
    #[inline(always)]
    pub fn hash_key<K: Key + ?Sized>(&self, key: &K) -> KeyHash {
        hash_in(self.cold.layout, self.cold.meta.scheme(), key)
    }

    /// Number of inserts, repeats included.
    pub fn len(&self) -> u64 {
        self.cold.meta.count()
    }

    /// No inserts yet.
    pub fn is_empty(&self) -> bool {
        self.cold.meta.count() == 0
    }

    block_table_accessors!(cold.k);

    /// The eight words of block `i` (bit `j` of the block is bit `j & 63` of word `j >> 6`),
    /// or `None` past the last block.
    pub fn block_words(&self, i: u64) -> Option<&[u64; 8]> {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.blocks.get(i))
            .map(|b| &b.0)
    }

    /// The design capacity (the `n` the filter was sized for).
    pub fn capacity(&self) -> u64 {
        self.cold.meta.capacity()
    }

    /// The target FPR, if the filter was sized from one.
    pub fn target_fpr(&self) -> Option<f64> {
        self.cold.meta.target_fpr()
    }

    /// More inserts than the design capacity: the FPR has silently climbed past the
    /// target. Rebuild larger, or use a scalable filter.
    pub fn is_saturated(&self) -> bool {
        self.cold.meta.count() > self.cold.meta.capacity()
    }

    /// Inserts relative to design capacity: 1.0 at design load, 2.0 at twice it.
    pub fn load(&self) -> f64 {
        self.cold.meta.count() as f64 / self.cold.meta.capacity() as f64
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> u64 {
        self.blocks.iter().map(|b| u64::from(block_ones(b))).sum()
    }

    /// Fraction of bits set, `X/m`.
    pub fn fill_ratio(&self) -> f64 {
        self.count_ones() as f64 / self.bits() as f64
    }

    /// FPR the blocked formula predicts from the insert count and the density `m/n`
    /// ([`math::blocked_fpr_exact`]: Poisson mixture over block loads, exact occupancy inside
    /// a block). 0 when empty.
    pub fn expected_fpr(&self) -> f64 {
        let density = self.cold.meta.bits_per_item(self.bits());
        density.map_or(0.0, |d| math::blocked_fpr_exact(d, self.cold.k, BLOCK_BITS))
    }

    /// FPR of the filter as it stands: a non-member picks a uniformly random block `b` and
    /// is positive when all `k` of its probes hit set bits, so the FPR is the mean over blocks
    /// of `(ones_b / 512)^k`.
    pub fn current_fpr(&self) -> f64 {
        let total: f64 = self
            .blocks
            .iter()
            .map(|b| {
                bloomlab_core::math::fpr_from_fill(
                    f64::from(block_ones(b)) / f64::from(BLOCK_BITS),
                    self.cold.k,
                )
            })
            .sum();
        total / self.blocks.len() as f64
    }

    /// Distinct keys estimated from the fill, block by block: the sum over blocks of
    /// `−(512/k)·ln(1 − ones_b/512)` (Swamidass & Baldi 2007, applied to each block, which is
    /// a small classic filter of its own keys). Infinite if some block has every bit set.
    pub fn estimated_len(&self) -> f64 {
        self.blocks
            .iter()
            .map(|b| {
                bloomlab_core::math::estimate_cardinality(
                    u64::from(BLOCK_BITS),
                    self.cold.k,
                    u64::from(block_ones(b)),
                )
            })
            .sum()
    }

    /// Remove every key.
    pub fn clear(&mut self) {
        self.blocks.fill(Block::default());
        self.cold.meta.reset_count();
    }

    fn check_compatible(&self, other: &Self) -> Result<()> {
        if self.cold.layout != other.cold.layout {
            return Err(Error::Incompatible(format!(
                "probe layouts {:?} vs {:?}",
                self.cold.layout, other.cold.layout
            )));
        }
        if self.blocks.len() != other.blocks.len() || self.cold.k != other.cold.k {
            return Err(Error::Incompatible(format!(
                "(blocks, k) = ({}, {}) vs ({}, {})",
                self.blocks.len(),
                self.cold.k,
                other.blocks.len(),
                other.cold.k
            )));
        }
        let (a, b) = (
            self.cold.meta.scheme().descriptor(),
            other.cold.meta.scheme().descriptor(),
        );
        if a != b {
            return Err(Error::Incompatible(format!("hash scheme {a} vs {b}")));
        }
        Ok(())
    }

    /// Bitwise OR with a filter of the same number of blocks, `k` and hash scheme (anything
    /// else is refused: it would probe other positions). The result is bit-for-bit the filter
    /// built from both key sets; the count becomes the sum of both counts.
    pub fn union(&mut self, other: &Self) -> Result<()> {
        self.check_compatible(other)?;
        for (a, b) in self.blocks.iter_mut().zip(&other.blocks) {
            bits::or_into(&mut a.0, &b.0);
        }
        self.cold.meta.record_inserts(other.cold.meta.count());
        Ok(())
    }

    /// Encode in the checked, versioned envelope ([`bloomlab_core::format`], variant
    /// `Blocked`) with this payload (little-endian): `blocks: u64 | k: u32 | reserved: u32 = 0 |
    /// count: u64 | capacity: u64 | target_fpr: f64 (0 = none) | blocks × 64 bytes`, each
    /// block as its eight words in order, each word little-endian. The hash scheme is recorded
    /// and checked on read.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = EnvelopeWriter::with_version(
            Variant::Blocked,
            self.cold.meta.scheme().descriptor(),
            self.cold.layout.format_version(),
            format::BloomHeader::LEN + self.blocks.len() * BLOCK_BYTES,
        );
        format::BloomHeader {
            size: self.blocks(),
            k: self.cold.k,
            count: self.cold.meta.count(),
            capacity: self.cold.meta.capacity(),
            target_fpr: self.cold.meta.target_fpr(),
        }
        .write(&mut w);
        for b in &self.blocks {
            for word in b.0 {
                w.u64(word);
            }
        }
        w.finish()
    }

    /// Decode [`to_bytes`](Self::to_bytes) output, probing with `scheme`. Refuses bytes written
    /// with another scheme or key, damaged bytes (checksum), and any invalid field: `k` out of
    /// range, zero blocks or capacity, a bad target FPR, a wrong length, or a count too small
    /// to have set the bits that are set (each block with `x` ones needs `⌈x/k⌉` inserts).
    pub fn from_bytes_with_scheme(bytes: &[u8], scheme: S) -> Result<Self> {
        let e = Encoded::open(bytes, &scheme)?;
        // The data is already in memory, so this allocation is no larger than the input.
        let mut blocks = zeroed_blocks(e.num_blocks())?;
        for (b, chunk) in blocks.iter_mut().zip(e.data.chunks_exact(BLOCK_BYTES)) {
            b.0 = block_from_le_bytes(chunk);
        }
        Ok(Self::from_parts(
            blocks,
            e.k,
            e.count,
            e.capacity,
            e.target_fpr,
            e.layout,
            scheme,
        )?)
    }

    fn from_parts(
        blocks: simd::Lines,
        k: u32,
        count: u64,
        capacity: u64,
        target_fpr: Option<f64>,
        layout: Layout,
        scheme: S,
    ) -> Result<Self, DecodeError> {
        validate_parts(
            k,
            blocks.iter().map(block_ones),
            count,
            capacity,
            target_fpr,
        )?;
        if !layout.addresses(blocks.len() as u64) {
            return Err(DecodeError::field(
                "blocks",
                format!(
                    "{} blocks: the third layout addresses at most 2^32",
                    blocks.len()
                ),
            ));
        }
        Ok(Self::assemble(
            blocks,
            k,
            layout,
            Meta::new(capacity, target_fpr, scheme).with_count(count),
        ))
    }
}

/// The eight words of one encoded block (64 bytes, each word little-endian), from a slice of
/// any alignment.
#[inline(always)]
fn block_from_le_bytes(chunk: &[u8]) -> [u64; 8] {
    core::array::from_fn(|i| {
        let mut a = [0u8; 8];
        a.copy_from_slice(&chunk[8 * i..8 * i + 8]);
        u64::from_le_bytes(a)
    })
}

/// The fields of the checked format ([`BlockedBloomFilter::to_bytes`]) and its block data,
/// borrowed: what the owning decoder and [`BlockedBloomFilterView`] both read, checked by the
/// one set of rules ([`Encoded::open`], then [`validate_parts`]).
struct Encoded<'a> {
    layout: Layout,
    k: u32,
    count: u64,
    capacity: u64,
    target_fpr: Option<f64>,
    /// `blocks × 64` bytes, not aligned.
    data: &'a [u8],
}

impl<'a> Encoded<'a> {
    /// Open the envelope (magic, versions, scheme, checksum) and read the payload's fields:
    /// `k` in range, at least one block, a zero reserved word, a valid target FPR and exactly
    /// `blocks × 64` bytes of data. The remaining rules ([`validate_parts`]) need the blocks.
    fn open<S: HashScheme>(bytes: &'a [u8], scheme: &S) -> Result<Self> {
        let (version, payload) = format::open_expecting_versions(
            bytes,
            Variant::Blocked,
            scheme.descriptor(),
            &[
                format::FORMAT_VERSION,
                format::BLOCKED_LOCAL32_VERSION,
                format::BLOCKED_ONE_HASH_VERSION,
            ],
        )?;
        let layout =
            Layout::from_format_version(version).ok_or(DecodeError::UnsupportedVersion(version))?;
        let mut r = Reader::new(payload);
        let format::BloomHeader {
            size: num_blocks,
            k,
            count,
            capacity,
            target_fpr,
        } = format::BloomHeader::read(&mut r)?;
        if num_blocks == 0 {
            return Err(DecodeError::field("blocks", "must be at least 1").into());
        }
        let len = num_blocks
            .checked_mul(BLOCK_BYTES as u64)
            .ok_or_else(|| DecodeError::field("blocks", format!("{num_blocks} is too many")))?;
        let data = r.take_u64_len(len)?;
        r.finish()?;
        if !layout.addresses(num_blocks) {
            return Err(DecodeError::field(
                "blocks",
                format!("{num_blocks} blocks: the third layout addresses at most 2^32"),
            )
            .into());
        }
        Ok(Encoded {
            layout,
            k,
            count,
            capacity,
            target_fpr,
            data,
        })
    }

    fn num_blocks(&self) -> u64 {
        (self.data.len() / BLOCK_BYTES) as u64
    }

    /// Each encoded block's number of set bits.
    fn block_ones(&self) -> impl ExactSizeIterator<Item = u32> + '_ {
        self.data
            .chunks_exact(BLOCK_BYTES)
            .map(|c| block_from_le_bytes(c).iter().map(|w| w.count_ones()).sum())
    }
}

/// The rules every filter, decoded or deserialized, must meet: `k` in range, at least one
/// block, a capacity of at least 1, a valid target FPR, and a count large enough to have set
/// the bits that are set (each block with `x` ones needs `⌈x/k⌉` inserts).
fn validate_parts(
    k: u32,
    block_ones: impl ExactSizeIterator<Item = u32>,
    count: u64,
    capacity: u64,
    target_fpr: Option<f64>,
) -> Result<(), DecodeError> {
    check_hashes(k)?;
    if block_ones.len() == 0 {
        return Err(DecodeError::field("blocks", "must be at least 1"));
    }
    if capacity == 0 {
        return Err(DecodeError::field("capacity", "must be at least 1"));
    }
    format::validate_optional_fpr(target_fpr)?;
    let needed: u64 = block_ones.map(|ones| min_inserts(ones, k)).sum();
    if needed > count {
        return Err(DecodeError::field(
            "count",
            format!(
                "{count} inserts of {k} probes cannot set the bits of these blocks (at least {needed} needed)"
            ),
        ));
    }
    Ok(())
}

bloomlab_core::declared! {
    BlockedBloomFilter: bloomlab_core::Declaration {
        variant: Variant::Blocked,
        versions: &[
            format::FORMAT_VERSION,
            format::BLOCKED_LOCAL32_VERSION,
            format::BLOCKED_ONE_HASH_VERSION,
        ],
        changes: bloomlab_core::declare::Changes::Fixed,
        deletes: false,
        no_union: None,
        design: "k probes inside one 512-bit block: bits/item and k from the exact blocked formula, one xxh3-64 per key (format version 3)",
    };
    sized: with_fpr_and_scheme,
    fill: fill_ratio,
    fill_fpr: current_fpr,
    estimate: estimated_len,
    union: union,
}

impl<S: HashScheme> FilterCore for BlockedBloomFilter<S> {
    // Inlined into a caller that knows the key's length (8 bytes of a `u64`), the hash
    // specialises to it and no call is left per key, as with the inherent methods.
    bloomlab_core::key_methods!();

    fn size_in_bytes(&self) -> usize {
        self.blocks.len() * BLOCK_BYTES
    }

    fn table_bits(&self) -> u64 {
        self.bits()
    }

    fn hashes(&self) -> u32 {
        self.cold.k
    }

    fn expected_fpr(&self) -> f64 {
        BlockedBloomFilter::expected_fpr(self)
    }

    fn same_table(&self, other: &Self) -> bool {
        self.cold.k == other.cold.k
            && self.cold.layout == other.cold.layout
            && self.blocks == other.blocks
    }

    fn debug_shape(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("blocks", &self.blocks.len())
            .field("k", &self.cold.k);
    }

    fn debug_state(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("layout", &self.cold.layout)
            .field("fill_ratio", &self.fill_ratio());
    }
}

impl<S: HashScheme> bloomlab_core::meta::FilterMeta for BlockedBloomFilter<S> {
    type Scheme = S;
    const VARIANT: Variant = Variant::Blocked;
    const TYPE_NAME: &'static str = "BlockedBloomFilter";
    fn meta(&self) -> bloomlab_core::meta::MetaView<'_, S> {
        self.cold.meta.view()
    }
}

bloomlab_core::filter_glue!(BlockedBloomFilter);

impl<S: HashScheme, K: Key> Extend<K> for BlockedBloomFilter<S> {
    fn extend<I: IntoIterator<Item = K>>(&mut self, keys: I) {
        bloomlab_core::meta::extend(self, keys)
    }
}

#[cfg(feature = "serde")]
mod serde_impl;

#[cfg(test)]
mod tests;
