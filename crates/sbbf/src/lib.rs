//! The split-block Bloom filter (SBBF) of the Apache Parquet format, bit for bit: the filter
//! Parquet files carry per column chunk, that Spark, Impala, Arrow and DuckDB read to skip row
//! groups, and the layout of Impala's runtime join filters.
//!
//! Unlike the rest of the workspace, nothing about this filter's layout is ours to choose: the
//! block layout, the hash, the sizing rule and the raw byte form are those of the Parquet
//! specification (`parquet-format/BloomFilter.md`), so that a filter built here can be handed to
//! any Parquet reader and a filter read from any Parquet file can be queried here. Only the
//! checked envelope ([`Sbbf::to_bytes`], variant tag 6, hash scheme 5) is a bloomlab format.
//! That is why this is a crate of its own rather than a layout of `bloomlab-blocked`: its
//! hash (xxHash64 of the plain encoding, not the workspace's hash schemes), its fixed eight
//! probes, its power-of-two sizing and its raw byte forms are all dictated from outside and
//! frozen by the Parquet format, while the 512-bit filter's are ours to tune. What the two
//! share — prefetching, the batched pipeline, the AVX2 kernels — lives once in
//! [`bloomlab_simd`].
//!
//! # Layout
//!
//! The bitset is an array of 256-bit blocks, each eight 32-bit words (little-endian on disk).
//! A value is hashed with xxHash64, seed 0, of its Parquet *plain* encoding (little-endian
//! bytes for INT32, INT64, FLOAT and DOUBLE; the raw bytes for BYTE_ARRAY and
//! FIXED_LEN_BYTE_ARRAY) into `h`. The upper half picks the block,
//! `((h >> 32) · blocks) >> 32`; the lower half `x = h as u32` sets or tests bit
//! `(x · SALT[i]) >> 27` of word `i` for the eight fixed odd [`SALT`]s. A key therefore touches
//! exactly one bit in each word of one block: the "split" Bloom filter of Broder &
//! Mitzenmacher (2004, §2.1) inside the blocked filter of Putze, Sanders & Singler (2007).
//!
//! # Accuracy
//!
//! Given `i` keys in a block, a non-member's bit in one word is set with probability
//! `1 − (31/32)^i` exactly (one probe against `i` uniform throws into 32 bits), the words are
//! independent, and block loads are Poisson with mean `λ = 256/(bits/item)`:
//! `FPR = Σ_i Pois(i; λ)·(1 − (31/32)^i)^8` ([`math::sbbf_fpr`]). That needs 10.53 bits/item
//! at 1 %, 16.89 at 0.1 %, 8.20 at 3 %. The measured rate stays within 5σ of the formula at
//! 8, 10 and 16 bits/item and at 0.1 / 1 / 3 % targets on every key shape of the conformance
//! suite (this crate's tests, fixed seeds).
//!
//! Parquet writers size with the unblocked approximation `−8/ln(1 − p^(1/8))` bits per
//! distinct value (9.68 at 1 %, which the layout turns into 1.46 %) and round the bitset up to
//! a power of two between 32 B and 128 MiB; [`Sbbf::with_ndv_fpp`] reproduces that rule
//! exactly (same size as the `parquet` crate's writer, tested), [`Sbbf::with_fpr`] sizes with
//! the true formula to any whole number of blocks.
//!
//! ```
//! use bloomlab_sbbf::Sbbf;
//!
//! let mut f = Sbbf::with_fpr(100_000, 0.01)?;
//! let bits_per_item = f.bits() as f64 / 100_000.0;
//! assert!((bits_per_item - 10.53).abs() < 0.01, "{bits_per_item}"); // 10.53 bits/item at 1 %
//! for i in 0..100_000i64 {
//!     f.insert_i64(i);
//! }
//! assert!((0..100_000i64).all(|i| f.might_contain_i64(i))); // never a false negative
//!
//! // 200 000 non-members: ≈ 1 % say "maybe", within 5σ (σ = √(N·p·(1−p)) ≈ 44.5).
//! let fp = (1i64 << 40..(1i64 << 40) + 200_000).filter(|&i| f.might_contain_i64(i)).count();
//! let expected = 200_000.0 * f.expected_fpr();
//! assert!((fp as f64 - expected).abs() < 5.0 * 44.5, "{fp} vs {expected}");
//! # Ok::<(), bloomlab_core::Error>(())
//! ```
//!
//! # Handing a filter to a Parquet reader
//!
//! A Parquet file stores, at a column chunk's `bloom_filter_offset`, a Thrift
//! `BloomFilterHeader` followed by the bitset. [`Sbbf::to_parquet_bytes`] writes exactly that
//! (byte-identical to what the `parquet` crate writes for the same values, tested) and
//! [`Sbbf::from_parquet_bytes`] reads it from any writer; [`Sbbf::to_parquet_bitset`] and
//! [`Sbbf::from_parquet_bitset`] are the bare bitset (what an Impala-style runtime filter or
//! the `parquet` crate's `Sbbf::new` take). Both Parquet forms require the specification's
//! sizes (a power of two from 32 B to 128 MiB) and refuse anything else; [`Sbbf::raw_bitset`]
//! and [`Sbbf::from_raw_bitset`] carry any block count for use outside Parquet. Build the
//! filter from the values' plain encodings — [`insert_i32`](Sbbf::insert_i32),
//! [`insert_i64`](Sbbf::insert_i64), [`insert_f32`](Sbbf::insert_f32),
//! [`insert_f64`](Sbbf::insert_f64), [`insert_bytes`](Sbbf::insert_bytes) for BYTE_ARRAY — or
//! from pre-computed xxHash64 values with [`insert_hash`](Sbbf::insert_hash).
//!
//! Concretely, with the Arrow Rust `parquet` crate: `parquet::bloom_filter::Sbbf::new(&bits)`
//! on [`to_parquet_bitset`](Sbbf::to_parquet_bitset)'s output, or `Sbbf::from_bytes` on
//! [`to_parquet_bytes`](Sbbf::to_parquet_bytes)'s, gives a filter answering exactly as ours
//! (tested on 10^5 members and 10^6 non-members); a column chunk whose bloom filter section
//! (at `bloom_filter_offset`, `bloom_filter_length` bytes) holds our section is read and
//! pruned by its file reader (tested by replacing the section of a file it wrote). Size the
//! filter with [`with_ndv_fpp`](Sbbf::with_ndv_fpp) for the bytes a Parquet writer would
//! have allocated, or [`with_fpr_parquet_sized`](Sbbf::with_fpr_parquet_sized) to meet the
//! target for sure.
//!
//! ```
//! use bloomlab_sbbf::Sbbf;
//!
//! let mut f = Sbbf::with_ndv_fpp(10_000, 0.01)?; // the size a Parquet writer would choose
//! assert_eq!(f.size_in_bytes(), 16 * 1024);
//! f.insert_bytes(b"alice");
//! let section = f.to_parquet_bytes()?; // header + bitset, as stored in the file
//! let back = Sbbf::from_parquet_bytes(&section)?;
//! assert!(back.might_contain_bytes(b"alice"));
//! # Ok::<(), bloomlab_core::Error>(())
//! ```
//!
//! # Two blocked layouts
//!
//! The workspace has two blocked Bloom filters, and they win in different places.
//!
//! | | `bloomlab-blocked` | `bloomlab-sbbf` |
//! |---|---|---|
//! | block | 512 bits (one 64-byte cache line) | 256 bits (half a line) |
//! | probes | `k` chosen per target (5–10), anywhere in the block | always 8, one per 32-bit word |
//! | bits/item at 1 % / 0.1 % / 3 % | 9.92 / 15.55 / 7.43 | 10.53 / 16.89 / 8.20 |
//! | lookup | `k` scalar multiply–shift–test steps on one line | one AVX2 multiply, two shifts, one `vptest` |
//! | readable by | bloomlab | every Parquet reader, Impala, Arrow, DuckDB |
//!
//! Space: the 512-bit layout is 6 % smaller at 1 %, 9 % at 0.1 % and 10 % at 3 % — a bigger
//! block evens out the Poisson spread of block loads and its `k` follows the target, where
//! the SBBF's eight probes are fixed. At equal size the SBBF's FPR is 1.5× the classic
//! filter's at 8–10 bits/item and 2.9× at 16, against 1.08× / 1.21× / 1.83× for the 512-bit
//! layout (the harness's blocked-penalty experiment, n = 10^5, 10^6 probes). Speed: the
//! SBBF's lookup is a fixed handful of vector instructions whatever the target, so it is the
//! faster one when the filter is in cache, and both pay one cache miss otherwise.
//! Choose the SBBF when the filter must be read by a Parquet engine or fed to a runtime
//! filter in that format, or for the shortest in-cache lookup; choose the 512-bit filter for
//! the fewest bits at a target, especially at low FPRs.
//!
//! # Speed
//!
//! The kernels are the workspace's shared ones ([`bloomlab_simd`], the `bloomlab-simd`
//! crate): an AVX2 lookup is one 32-byte load, one `vpmulld` of the
//! broadcast lower hash half by the salts, `vpsrld` by 27, `vpsllvd` of ones and `vptest`.
//! The kernel is chosen once per filter ([`SplitBlockKernel`]: AVX2 on x86-64, NEON on
//! aarch64), and a lookup runs it inline, with no feature test and no call per key (the AVX2
//! lookup is inline assembly); [`without_simd`](Sbbf::without_simd) selects the portable kernel,
//! and the tests check both give the same bits and answers.
//! [`might_contain_hashes`](Sbbf::might_contain_hashes) prefetches the block [`BATCH`] keys
//! ahead in tables larger than [`PREFETCH_MIN_BYTES`]; [`might_contain_batch`](Sbbf::might_contain_batch)
//! hashes and prefetches ahead in tables larger than [`SINGLE_LOOP_UP_TO`] and answers key by
//! key below.
//!
//! The lookup is the same instructions as `sbbf-rs-safe`'s, inlined into the caller where
//! `sbbf-rs-safe` calls its kernel through a trait object. The comparison and the earlier versions that lost are in
//! `docs/design/sbbf.md`; current figures are in `results/`.

//! Accuracy observed: over the 30 shape × density checks of the tests the measured FPR sits
//! on average 0.65 σ above the formula (none beyond 2.3 σ), up to 3 % relative for random
//! keys. A plausible cause, not verified: the eight bits of a key all derive from one 32-bit
//! value, which the formula's independence assumption does not see. Within the 5σ bounds
//! everywhere.
//!
//! # no_std
//!
//! Without its default `std` feature the crate is `#![no_std]` and needs only `alloc`, with nothing
//! left out: the split-block kernel is then the one the build's target features allow (no run-time
//! CPU detection), and the `f64` functions of the sizing formulas come from `libm`
//! (`bloomlab_core::math::float` says how that can differ).
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod math;

use alloc::{format, string::ToString, vec::Vec};
#[cfg(not(feature = "std"))]
use bloomlab_core::math::float::FloatMath as _;
use core::fmt;

use bloomlab_core::error::{DecodeError, Error, Result};
use bloomlab_core::format::{self, EnvelopeWriter, Reader, Variant};
use bloomlab_core::hash::{HashScheme, KeyHash, SchemeDescriptor, SchemeId};
use bloomlab_core::meta::{FilterCore, Meta};
use bloomlab_core::{Key, bits, filter_glue};
use bloomlab_simd::{self as simd, SplitBlockKernel};
use math::{SBBF_MAX_BYTES, SBBF_MIN_BYTES};
use xxhash_rust::xxh64::xxh64;

mod thrift;

/// Bits per block.
pub const BLOCK_BITS: u32 = 256;
/// Bytes per block.
pub const BLOCK_BYTES: usize = 32;
/// The eight odd multipliers of the Parquet specification: word `i` of a key's block gets bit
/// `(x · SALT[i]) >> 27`, `x` the lower 32 bits of the key's hash.
pub const SALT: [u32; 8] = simd::PARQUET_SALTS;
/// Seed of the xxHash64 the specification prescribes.
pub const XXHASH_SEED: u64 = 0;
/// Prefetch distance of the batched lookups: while key `i` is answered, the block of key
/// `i + BATCH` is being fetched.
pub const BATCH: usize = 16;
/// Tables up to this size (bytes) are assumed cache-resident:
/// [`Sbbf::might_contain_hashes`] skips the prefetch there (prefetching an in-cache table made
/// batched lookups slower than single ones).
pub const PREFETCH_MIN_BYTES: usize = 256 * 1024;
/// Tables up to this size (bytes) answer [`Sbbf::might_contain_batch`] key by key, without the
/// hash-and-prefetch pipeline, which only adds work in cache; past about 600 KB the pipeline wins
/// (measured; `docs/design/sbbf.md`).
pub const SINGLE_LOOP_UP_TO: usize = 640 * 1024;
/// Most blocks a filter can have: the block index `((h >> 32) · blocks) >> 32` covers at most
/// 2^32 blocks (128 GiB).
pub const MAX_BLOCKS: u64 = 1 << 32;

/// The hash scheme recorded in the envelope: xxHash64, seed 0, of the plain encoding.
pub const SCHEME: SchemeDescriptor = SchemeDescriptor {
    id: SchemeId::ParquetXxh64,
    key_check: 0,
};

/// The split-block filter's one hash scheme as a [`HashScheme`]: xxHash64, seed 0, of the
/// key's bytes ([`hash_bytes`]), in `h1` (`h2` is 0; the filter reads the 64 bits of `h1`
/// only). Its descriptor is [`SCHEME`]. Fixed by the Parquet format, so [`Sbbf`] is not
/// generic over a scheme.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ParquetScheme;

impl HashScheme for ParquetScheme {
    #[inline]
    fn hash(&self, key: &[u8]) -> KeyHash {
        KeyHash {
            h1: hash_bytes(key),
            h2: 0,
        }
    }

    fn descriptor(&self) -> SchemeDescriptor {
        SCHEME
    }
}

/// xxHash64 (seed 0) of raw bytes: the Parquet hash of a BYTE_ARRAY or FIXED_LEN_BYTE_ARRAY
/// value, or of any value given as its plain encoding.
#[inline]
pub fn hash_bytes(value: &[u8]) -> u64 {
    xxh64(value, XXHASH_SEED)
}

/// The Parquet hash of an INT32 value (its 4 little-endian bytes).
#[inline]
pub fn hash_i32(value: i32) -> u64 {
    hash_bytes(&value.to_le_bytes())
}

/// The Parquet hash of an INT64 value (its 8 little-endian bytes).
#[inline]
pub fn hash_i64(value: i64) -> u64 {
    hash_bytes(&value.to_le_bytes())
}

/// The Parquet hash of a FLOAT value (its IEEE-754 bits, little-endian; `-0.0` and `0.0`, and
/// NaNs with different payloads, are different values, as in Parquet).
#[inline]
pub fn hash_f32(value: f32) -> u64 {
    hash_bytes(&value.to_le_bytes())
}

/// The Parquet hash of a DOUBLE value (its IEEE-754 bits, little-endian).
#[inline]
pub fn hash_f64(value: f64) -> u64 {
    hash_bytes(&value.to_le_bytes())
}

/// One 256-bit block: eight 32-bit words, 32-byte aligned (one AVX2 register).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[repr(C, align(32))]
pub(crate) struct Block(pub(crate) [u32; 8]);

const _: () = assert!(core::mem::size_of::<Block>() == BLOCK_BYTES);
const _: () = assert!(core::mem::align_of::<Block>() == BLOCK_BYTES);

impl AsRef<[u32; 8]> for Block {
    fn as_ref(&self) -> &[u32; 8] {
        &self.0
    }
}

impl Block {
    fn count_ones(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    /// The fewest inserts that can have produced this block: each sets one bit per word.
    fn min_inserts(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).max().unwrap_or(0)
    }

    /// Every insert sets a bit in every word, so a block is either empty or has all eight words
    /// non-zero.
    fn is_reachable(&self) -> bool {
        self.0.iter().all(|&w| w == 0) || self.0.iter().all(|&w| w != 0)
    }
}

/// A zeroed vector of `n` blocks, or [`Error::SizeOverflow`] if it cannot exist or the
/// allocator refuses (instead of aborting the process).
fn zeroed_blocks(n: u64) -> Result<Vec<Block>> {
    if n == 0 {
        return Err(Error::invalid("blocks", "must be at least 1"));
    }
    if n > MAX_BLOCKS {
        return Err(Error::SizeOverflow(format!(
            "{n} blocks: a split-block filter holds at most 2^32 blocks"
        )));
    }
    let too_big = || Error::SizeOverflow(format!("{n} blocks of 32 bytes do not fit in memory"));
    let n_usize = usize::try_from(n).map_err(|_| too_big())?;
    if n.checked_mul(BLOCK_BYTES as u64)
        .is_none_or(|b| b > isize::MAX as u64)
    {
        return Err(too_big());
    }
    let mut v: Vec<Block> = Vec::new();
    v.try_reserve_exact(n_usize)
        .map_err(|e| Error::SizeOverflow(format!("cannot allocate {n} blocks of 32 bytes: {e}")))?;
    v.resize(n_usize, Block::default());
    Ok(v)
}

/// A split-block Bloom filter in the Parquet layout.
///
/// `len()` counts calls to insert, repeats included (for a filter read from Parquet bytes,
/// which carry no count, an estimate from the fill: see
/// [`from_parquet_bitset`](Self::from_parquet_bitset)).
#[derive(Clone)]
pub struct Sbbf {
    blocks: Vec<Block>,
    meta: Meta<ParquetScheme>,
    /// The kernel, chosen once: AVX2 or NEON when the CPU has it, else the portable one.
    kernel: SplitBlockKernel,
}

impl Sbbf {
    /// Size as Parquet writers do for `ndv` distinct values at false-positive probability
    /// `fpp` ([`math::sbbf_parquet_bytes`]: the specification's per-value formula, then a power
    /// of two from 32 B to 128 MiB). The same size as the `parquet` crate's
    /// `Sbbf::new_with_ndv_fpp`. That formula ignores the block-load spread, so the filter's
    /// [`expected_fpr`](Self::expected_fpr) at `ndv` items can exceed `fpp` when the power-of-two
    /// rounding adds little (by up to 46 % relative at 1 %); use [`with_fpr`](Self::with_fpr)
    /// or [`with_fpr_parquet_sized`](Self::with_fpr_parquet_sized) to meet a target.
    pub fn with_ndv_fpp(ndv: u64, fpp: f64) -> Result<Self> {
        let bytes = math::sbbf_parquet_bytes(ndv, fpp)?;
        let mut f = Self::with_blocks(bytes / BLOCK_BYTES as u64)?;
        f.meta = Meta::new(ndv, Some(fpp), ParquetScheme);
        Ok(f)
    }

    /// Size for `expected_items` at false-positive rate `fpr` with the SBBF formula
    /// ([`math::sbbf_bits_per_item`]: 10.53 bits/item at 1 %), rounded up to whole blocks (any
    /// count: use [`with_fpr_parquet_sized`](Self::with_fpr_parquet_sized) for a Parquet file).
    ///
    /// Errors: `n = 0`, `p` not in (0, 1) (NaN and infinities included), or a size past
    /// [`MAX_BLOCKS`] or memory.
    pub fn with_fpr(expected_items: u64, fpr: f64) -> Result<Self> {
        let n = bloomlab_core::math::validate_items(expected_items)?;
        bloomlab_core::math::validate_fpr(fpr)?;
        // Never fewer bits than a classic filter: refuse sizes that overflow before searching.
        bloomlab_core::math::classic_bits(n, fpr)?;
        let bpi = math::sbbf_bits_per_item(fpr)?;
        let mut f = Self::with_blocks(math::sbbf_blocks(n, bpi)?)?;
        f.meta = Meta::new(n, Some(fpr), ParquetScheme);
        Ok(f)
    }

    /// [`with_fpr`](Self::with_fpr) rounded up to the next size a Parquet file allows (a power
    /// of two from 32 B to 128 MiB); refuses a size past 128 MiB.
    pub fn with_fpr_parquet_sized(expected_items: u64, fpr: f64) -> Result<Self> {
        let n = bloomlab_core::math::validate_items(expected_items)?;
        bloomlab_core::math::validate_fpr(fpr)?;
        bloomlab_core::math::classic_bits(n, fpr)?;
        let blocks = math::sbbf_blocks(n, math::sbbf_bits_per_item(fpr)?)?;
        let bytes = blocks.saturating_mul(BLOCK_BYTES as u64);
        if bytes > SBBF_MAX_BYTES {
            return Err(Error::invalid(
                "expected_items",
                format!("{bytes} bytes are needed; a Parquet bloom filter holds at most 128 MiB"),
            ));
        }
        let mut f = Self::with_blocks(math::sbbf_parquet_round_bytes(bytes) / BLOCK_BYTES as u64)?;
        f.meta = Meta::new(n, Some(fpr), ParquetScheme);
        Ok(f)
    }

    /// Size for `expected_items` at `bits_per_item` (rounded up to whole blocks).
    pub fn with_bits_per_item(expected_items: u64, bits_per_item: f64) -> Result<Self> {
        let n = bloomlab_core::math::validate_items(expected_items)?;
        let mut f = Self::with_blocks(math::sbbf_blocks(n, bits_per_item)?)?;
        f.meta = Meta::new(n, None, ParquetScheme);
        Ok(f)
    }

    /// Exactly `blocks` 256-bit blocks (1 to [`MAX_BLOCKS`]). The design capacity is taken as
    /// the load at which the formula gives 1 % (256/10.53 keys per block).
    pub fn with_blocks(blocks: u64) -> Result<Self> {
        let blocks = zeroed_blocks(blocks)?;
        let capacity = ((blocks.len() as f64 * f64::from(BLOCK_BITS) / 10.53) as u64).max(1);
        Ok(Sbbf {
            blocks,
            meta: Meta::new(capacity, None, ParquetScheme),
            kernel: SplitBlockKernel::detect(),
        })
    }

    /// Parquet's rule for a byte count: clamped to 32 B – 128 MiB and rounded up to a power of
    /// two (the `parquet` crate's `Sbbf::new_with_num_of_bytes`).
    pub fn with_num_bytes(bytes: u64) -> Result<Self> {
        Self::with_blocks(math::sbbf_parquet_round_bytes(bytes) / BLOCK_BYTES as u64)
    }

    /// Use the portable kernel even where AVX2 is available (for comparison and testing; the
    /// answers and bits are identical).
    pub fn without_simd(mut self) -> Self {
        self.kernel = SplitBlockKernel::Portable;
        self
    }

    /// Whether lookups and inserts run the AVX2 kernel.
    pub fn uses_avx2(&self) -> bool {
        matches!(self.kernel, SplitBlockKernel::Avx2(_))
    }

    /// The kernel lookups and inserts run: `"avx2"`, `"neon"` or `"portable"`.
    pub fn kernel_name(&self) -> &'static str {
        self.kernel.name()
    }

    #[inline(always)]
    fn block_contains(&self, i: usize, lo: u32) -> bool {
        self.kernel.contains(&self.blocks[i].0, lo, &SALT)
    }

    #[inline(always)]
    fn block_index(&self, h: u64) -> usize {
        // blocks ≤ 2^32, so the product fits and the index is below `blocks`.
        (((h >> 32) * self.blocks.len() as u64) >> 32) as usize
    }

    /// Insert a value by its xxHash64 (seed 0) — a hash from [`hash_bytes`] and friends, or
    /// computed by a Parquet engine. Returns `true` if it was definitely new.
    #[inline]
    pub fn insert_hash(&mut self, h: u64) -> bool {
        let i = self.block_index(h);
        self.meta.record_insert();
        let new = !self.block_contains(i, h as u32);
        self.kernel.insert(&mut self.blocks[i].0, h as u32, &SALT);
        new
    }

    /// Query by xxHash64 (seed 0): `false` = definitely not inserted, `true` = maybe. The
    /// kernel runs inline (no call per key on any path).
    #[inline(always)]
    pub fn might_contain_hash(&self, h: u64) -> bool {
        self.block_contains(self.block_index(h), h as u32)
    }

    /// Insert a key in bloomlab's [`Key`] encoding, which for integers, strings and byte slices
    /// is the Parquet plain encoding (`i32`/`i64` little-endian, strings as UTF-8 bytes).
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        let h = key.with_key_bytes(hash_bytes);
        self.insert_hash(h)
    }

    /// Query a key in [`Key`] encoding.
    #[inline(always)]
    pub fn might_contain<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.might_contain_hash(key.with_key_bytes(hash_bytes))
    }

    /// Insert a BYTE_ARRAY (or FIXED_LEN_BYTE_ARRAY) value.
    #[inline]
    pub fn insert_bytes(&mut self, value: &[u8]) -> bool {
        self.insert_hash(hash_bytes(value))
    }
    /// Query a BYTE_ARRAY (or FIXED_LEN_BYTE_ARRAY) value.
    #[inline]
    pub fn might_contain_bytes(&self, value: &[u8]) -> bool {
        self.might_contain_hash(hash_bytes(value))
    }
    /// Insert an INT32 value.
    #[inline]
    pub fn insert_i32(&mut self, value: i32) -> bool {
        self.insert_hash(hash_i32(value))
    }
    /// Query an INT32 value.
    #[inline]
    pub fn might_contain_i32(&self, value: i32) -> bool {
        self.might_contain_hash(hash_i32(value))
    }
    /// Insert an INT64 value.
    #[inline]
    pub fn insert_i64(&mut self, value: i64) -> bool {
        self.insert_hash(hash_i64(value))
    }
    /// Query an INT64 value.
    #[inline]
    pub fn might_contain_i64(&self, value: i64) -> bool {
        self.might_contain_hash(hash_i64(value))
    }
    /// Insert a FLOAT value.
    #[inline]
    pub fn insert_f32(&mut self, value: f32) -> bool {
        self.insert_hash(hash_f32(value))
    }
    /// Query a FLOAT value.
    #[inline]
    pub fn might_contain_f32(&self, value: f32) -> bool {
        self.might_contain_hash(hash_f32(value))
    }
    /// Insert a DOUBLE value.
    #[inline]
    pub fn insert_f64(&mut self, value: f64) -> bool {
        self.insert_hash(hash_f64(value))
    }
    /// Query a DOUBLE value.
    #[inline]
    pub fn might_contain_f64(&self, value: f64) -> bool {
        self.might_contain_hash(hash_f64(value))
    }

    /// Insert many pre-hashed values; the block of the value [`BATCH`] positions ahead is
    /// prefetched. The same bits as inserting them one by one.
    pub fn insert_hashes(&mut self, hashes: &[u64]) {
        for (i, &h) in hashes.iter().enumerate() {
            if let Some(&next) = hashes.get(i + BATCH) {
                simd::prefetch(&self.blocks[self.block_index(next)]);
            }
            self.insert_hash(h);
        }
    }

    /// Query many pre-hashed values into `out` (same length, else an error), prefetching
    /// [`BATCH`] ahead so the cache misses overlap (not in tables of at most
    /// [`PREFETCH_MIN_BYTES`], in cache). Identical answers to
    /// [`might_contain_hash`](Self::might_contain_hash) (tested).
    pub fn might_contain_hashes(&self, hashes: &[u64], out: &mut [bool]) -> Result<()> {
        Error::check_out_len(hashes.len(), out.len())?;
        if self.size_in_bytes() <= PREFETCH_MIN_BYTES {
            // In cache: a prefetch would only cost an instruction and an index computation.
            for (&h, o) in hashes.iter().zip(out.iter_mut()) {
                *o = self.block_contains(self.block_index(h), h as u32);
            }
            return Ok(());
        }
        for (i, (&h, o)) in hashes.iter().zip(out.iter_mut()).enumerate() {
            if let Some(&next) = hashes.get(i + BATCH) {
                simd::prefetch(&self.blocks[self.block_index(next)]);
            }
            *o = self.block_contains(self.block_index(h), h as u32);
        }
        Ok(())
    }

    /// Query many keys ([`Key`] encoding) into `out`: each key is hashed [`BATCH`] keys
    /// before it is answered and its block prefetched then ([`simd::pipeline`]), so hashing
    /// and memory latency overlap.
    ///
    /// Tables of at most [`SINGLE_LOOP_UP_TO`] bytes (in cache) are answered key by key
    /// instead, which is faster there; the answers are the same.
    pub fn might_contain_batch<K: Key>(&self, keys: &[K], out: &mut [bool]) -> Result<()> {
        Error::check_out_len(keys.len(), out.len())?;
        if self.size_in_bytes() <= SINGLE_LOOP_UP_TO {
            for (o, key) in out.iter_mut().zip(keys) {
                *o = self.might_contain(key);
            }
            return Ok(());
        }
        simd::pipeline::<_, _, BATCH>(
            keys,
            |k| k.with_key_bytes(hash_bytes),
            |&h| simd::prefetch(&self.blocks[self.block_index(h)]),
            |i, h| out[i] = self.block_contains(self.block_index(h), h as u32),
        );
        Ok(())
    }

    /// Number of 256-bit blocks.
    pub fn blocks(&self) -> u64 {
        self.blocks.len() as u64
    }

    /// `m`, the number of bits (blocks × 256).
    pub fn bits(&self) -> u64 {
        self.blocks() * u64::from(BLOCK_BITS)
    }

    /// Bytes of the bitset (blocks × 32).
    pub fn size_in_bytes(&self) -> usize {
        self.blocks.len() * BLOCK_BYTES
    }

    /// Whether the bitset has a size the Parquet specification allows (a power of two from
    /// 32 B to 128 MiB), so [`to_parquet_bytes`](Self::to_parquet_bytes) accepts it.
    pub fn is_parquet_size(&self) -> bool {
        let b = self.size_in_bytes() as u64;
        b.is_power_of_two() && (SBBF_MIN_BYTES..=SBBF_MAX_BYTES).contains(&b)
    }

    /// The eight words of block `i`, or `None` past the last block.
    pub fn block_words(&self, i: u64) -> Option<&[u32; 8]> {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.blocks.get(i))
            .map(|b| &b.0)
    }

    bloomlab_core::sizing_accessors!();

    /// Inserts (or, after a Parquet import, estimated distinct values).
    pub fn len(&self) -> u64 {
        self.meta.count()
    }

    /// No insert yet.
    pub fn is_empty(&self) -> bool {
        self.meta.count() == 0
    }

    /// Number of set bits.
    pub fn count_ones(&self) -> u64 {
        self.blocks.iter().map(|b| u64::from(b.count_ones())).sum()
    }

    /// Fraction of bits set.
    pub fn fill_ratio(&self) -> f64 {
        self.count_ones() as f64 / self.bits() as f64
    }

    /// FPR the SBBF formula predicts at the current count ([`math::sbbf_fpr`] at
    /// `bits / len`). 0 when empty.
    pub fn expected_fpr(&self) -> f64 {
        self.meta
            .bits_per_item(self.bits())
            .map_or(0.0, math::sbbf_fpr)
    }

    /// FPR of the table as it stands: a non-member picks a uniform block and is positive when
    /// its bit in each of the eight words is set, so the FPR is the mean over blocks of
    /// `Π_i popcount(word_i)/32`.
    pub fn current_fpr(&self) -> f64 {
        let total: f64 = self
            .blocks
            .iter()
            .map(|b| {
                b.0.iter()
                    .map(|w| f64::from(w.count_ones()) / 32.0)
                    .product::<f64>()
            })
            .sum();
        total / self.blocks.len() as f64
    }

    /// Distinct values estimated from the fill, block by block
    /// ([`math::sbbf_block_keys_estimate`]). Infinite if some block is full.
    pub fn estimated_len(&self) -> f64 {
        self.blocks
            .iter()
            .map(|b| math::sbbf_block_keys_estimate(b.count_ones()))
            .sum()
    }

    /// Remove every value.
    pub fn clear(&mut self) {
        self.blocks.fill(Block::default());
        self.meta.reset_count();
    }

    /// Bitwise OR with a filter of the same number of blocks (anything else is refused: it
    /// would map values to other blocks). The result is bit for bit the filter of both value
    /// sets; the count becomes the sum of both counts.
    pub fn union(&mut self, other: &Self) -> Result<()> {
        if self.blocks.len() != other.blocks.len() {
            return Err(Error::Incompatible(format!(
                "{} blocks vs {}",
                self.blocks.len(),
                other.blocks.len()
            )));
        }
        for (a, b) in self.blocks.iter_mut().zip(&other.blocks) {
            bits::or_into(&mut a.0, &b.0);
        }
        self.meta.record_inserts(other.meta.count());
        Ok(())
    }

    /// The bitset in the Parquet byte order (each word little-endian, blocks in order), any
    /// block count.
    pub fn raw_bitset(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.size_in_bytes());
        write_words(&self.blocks, &mut out);
        out
    }

    /// The bitset as a Parquet file or runtime filter carries it (no header). Refuses a
    /// filter whose size is not one the specification allows ([`is_parquet_size`](Self::is_parquet_size)).
    pub fn to_parquet_bitset(&self) -> Result<Vec<u8>> {
        self.check_parquet_size()?;
        Ok(self.raw_bitset())
    }

    /// A Parquet file's bloom filter section: the Thrift compact `BloomFilterHeader`
    /// (size, SPLIT_BLOCK, XXHASH, UNCOMPRESSED) followed by the bitset.
    pub fn to_parquet_bytes(&self) -> Result<Vec<u8>> {
        self.check_parquet_size()?;
        // ≤ 128 MiB, so the size fits the header's i32.
        let mut out = thrift::encode(self.size_in_bytes() as i32);
        out.reserve(self.size_in_bytes());
        write_words(&self.blocks, &mut out);
        Ok(out)
    }

    fn check_parquet_size(&self) -> Result<()> {
        if self.is_parquet_size() {
            Ok(())
        } else {
            Err(Error::Incompatible(format!(
                "a Parquet bloom filter is a power of two from 32 B to 128 MiB; this one is {} B",
                self.size_in_bytes()
            )))
        }
    }

    /// Load a bare bitset of any whole number of blocks (the [`raw_bitset`](Self::raw_bitset)
    /// form). Refuses an empty or ragged length and blocks no sequence of inserts can produce
    /// (some words zero and others not). The count, which the bytes do not carry, is estimated
    /// from the fill ([`estimated_len`](Self::estimated_len), rounded, at least the fewest
    /// inserts that explain the bits); the capacity is set to it.
    pub fn from_raw_bitset(bitset: &[u8]) -> Result<Self> {
        if bitset.is_empty() || !bitset.len().is_multiple_of(BLOCK_BYTES) {
            return Err(DecodeError::field(
                "bitset",
                format!("{} bytes is not a positive multiple of 32", bitset.len()),
            )
            .into());
        }
        let n = (bitset.len() / BLOCK_BYTES) as u64;
        if n > MAX_BLOCKS {
            return Err(DecodeError::field("bitset", "more than 2^32 blocks").into());
        }
        // The data is already in memory, so this allocation is no larger than the input.
        let blocks = read_words(bitset, n)?;
        let mut estimate = 0u64;
        let mut needed = 0u64;
        for b in &blocks {
            if !b.is_reachable() {
                return Err(unreachable_block());
            }
            let min = u64::from(b.min_inserts());
            let est = math::sbbf_block_keys_estimate(b.count_ones());
            // A full block's estimate is infinite: count it at its fewest inserts.
            let est = if est.is_finite() {
                est.round() as u64
            } else {
                0
            };
            estimate += est.max(min);
            needed += min;
        }
        let count = estimate.max(needed);
        Ok(Sbbf {
            blocks,
            meta: Meta::new(count.max(1), None, ParquetScheme).with_count(count),
            kernel: SplitBlockKernel::detect(),
        })
    }

    /// Load the bitset of a Parquet bloom filter (no header): as
    /// [`from_raw_bitset`](Self::from_raw_bitset), and the size must be one the specification
    /// allows (a power of two from 32 B to 128 MiB).
    pub fn from_parquet_bitset(bitset: &[u8]) -> Result<Self> {
        check_parquet_len(bitset.len() as u64)?;
        Self::from_raw_bitset(bitset)
    }

    /// Load a Parquet file's bloom filter section: the Thrift header, then exactly the bitset
    /// it announces (nothing after it). Refuses another algorithm, hash or compression, a size
    /// the specification does not allow, a header that disagrees with the bytes, and
    /// unreachable blocks.
    pub fn from_parquet_bytes(bytes: &[u8]) -> Result<Self> {
        let (num_bytes, header_len) = parquet_header(bytes)?;
        let bitset = &bytes[header_len..];
        if bitset.len() as u64 != num_bytes {
            return Err(DecodeError::field(
                "bitset",
                format!(
                    "the header announces {num_bytes} bytes, {} follow",
                    bitset.len()
                ),
            )
            .into());
        }
        Self::from_raw_bitset(bitset)
    }

    /// Encode in the checked, versioned envelope ([`bloomlab_core::format`], variant `Sbbf`,
    /// hash scheme `ParquetXxh64`) with this payload (little-endian):
    /// `blocks: u64 | count: u64 | capacity: u64 | target_fpr: f64 (0 = none) | blocks × 32
    /// bytes`, each block its eight words in order, each word little-endian (so the tail is
    /// the Parquet bitset).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = EnvelopeWriter::new(Variant::Sbbf, SCHEME, 32 + self.size_in_bytes());
        w.u64(self.blocks())
            .u64(self.meta.count())
            .u64(self.meta.capacity())
            .f64(format::encode_optional_fpr(self.meta.target_fpr()));
        write_words(&self.blocks, w.buffer());
        w.finish()
    }

    /// Decode [`to_bytes`](Self::to_bytes) output. Refuses damaged bytes (checksum), another
    /// variant or hash scheme, and any invalid field: zero or too many blocks, a wrong length,
    /// a zero capacity, a bad target FPR, unreachable blocks (some words set, others not) and a
    /// count too small to have set the bits that are set (a block needs as many inserts as its
    /// fullest word has bits).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let payload = format::open_expecting(bytes, Variant::Sbbf, SCHEME)?;
        let mut r = Reader::new(payload);
        let n = r.u64()?;
        let count = r.u64()?;
        let capacity = r.u64()?;
        let target_fpr = format::decode_optional_fpr(r.f64()?)?;
        if n == 0 || n > MAX_BLOCKS {
            return Err(DecodeError::field("blocks", format!("{n} is not in 1..=2^32")).into());
        }
        let data = r.take_u64_len(n * BLOCK_BYTES as u64)?;
        r.finish()?;
        let blocks = read_words(data, n)?;
        Ok(Self::from_parts(blocks, count, capacity, target_fpr)?)
    }

    fn from_parts(
        blocks: Vec<Block>,
        count: u64,
        capacity: u64,
        target_fpr: Option<f64>,
    ) -> Result<Self, DecodeError> {
        if blocks.is_empty() || blocks.len() as u64 > MAX_BLOCKS {
            return Err(DecodeError::field("blocks", "must be 1 to 2^32 blocks"));
        }
        if capacity == 0 {
            return Err(DecodeError::field("capacity", "must be at least 1"));
        }
        format::validate_optional_fpr(target_fpr)?;
        let mut needed = 0u64;
        for b in &blocks {
            if !b.is_reachable() {
                return Err(unreachable_block_decode());
            }
            needed += u64::from(b.min_inserts());
        }
        if needed > count {
            return Err(DecodeError::field(
                "count",
                format!("{count} inserts cannot set the bits of these blocks ({needed} needed)"),
            ));
        }
        Ok(Sbbf {
            blocks,
            meta: Meta::new(capacity, target_fpr, ParquetScheme).with_count(count),
            kernel: SplitBlockKernel::detect(),
        })
    }
}

/// Parse the Thrift `BloomFilterHeader` at the start of a Parquet bloom filter section and
/// return the bitset length it announces and the header's own length, so a reader can fetch
/// exactly the bitset that follows. The length must be one the specification allows.
pub fn parquet_header(bytes: &[u8]) -> Result<(u64, usize)> {
    let (num_bytes, len) = thrift::decode(bytes)?;
    let num_bytes = u64::try_from(num_bytes)
        .map_err(|_| DecodeError::field("numBytes", format!("{num_bytes} is negative")))?;
    check_parquet_len(num_bytes)?;
    Ok((num_bytes, len))
}

fn check_parquet_len(len: u64) -> Result<(), DecodeError> {
    if len.is_power_of_two() && (SBBF_MIN_BYTES..=SBBF_MAX_BYTES).contains(&len) {
        Ok(())
    } else {
        Err(DecodeError::field(
            "bitset",
            format!("{len} bytes: a Parquet bloom filter is a power of two from 32 B to 128 MiB"),
        ))
    }
}

fn unreachable_block_decode() -> DecodeError {
    DecodeError::field(
        "bitset",
        "a block has some words set and others empty; every insert sets a bit in all eight",
    )
}

fn unreachable_block() -> Error {
    unreachable_block_decode().into()
}

fn write_words(blocks: &[Block], out: &mut Vec<u8>) {
    for b in blocks {
        for w in b.0 {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }
}

/// `n` blocks from `data` (exactly `n · 32` bytes, checked by the callers).
fn read_words(data: &[u8], n: u64) -> Result<Vec<Block>, DecodeError> {
    let mut blocks = zeroed_blocks(n).map_err(|e| DecodeError::field("blocks", e.to_string()))?;
    for (b, chunk) in blocks.iter_mut().zip(data.chunks_exact(BLOCK_BYTES)) {
        for (w, bytes) in b.0.iter_mut().zip(chunk.chunks_exact(4)) {
            *w = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
        }
    }
    Ok(blocks)
}

/// Its one scheme is fixed by the Parquet format ([`ParquetScheme`]).
/// [`Sbbf::from_bytes`].
impl TryFrom<&[u8]> for Sbbf {
    type Error = bloomlab_core::Error;
    fn try_from(bytes: &[u8]) -> Result<Self> {
        Self::from_bytes(bytes)
    }
}

impl bloomlab_core::Declared for Sbbf {
    const DECLARATION: bloomlab_core::Declaration = bloomlab_core::Declaration {
        variant: Variant::Sbbf,
        versions: &[format::FORMAT_VERSION],
        changes: bloomlab_core::declare::Changes::Fixed,
        deletes: false,
        no_union: None,
        design: "the Parquet split-block layout (256-bit blocks, one bit in each 32-bit word), bits/item from the SBBF formula (10.53 b/item at 1 %), xxHash64 seed 0",
    };
    fn with_fpr_and_scheme(n: u64, fpr: f64, _scheme: ParquetScheme) -> Result<Self> {
        Self::with_fpr(n, fpr)
    }
    fn from_bytes_with_scheme(bytes: &[u8], _scheme: ParquetScheme) -> Result<Self> {
        Self::from_bytes(bytes)
    }
    fn union_in(&mut self, other: &Self) -> Result<()> {
        self.union(other)
    }
    fn to_bytes(&self) -> Vec<u8> {
        self.to_bytes()
    }
    fn fill(&self) -> Option<f64> {
        Some(self.fill_ratio())
    }
    fn fill_fpr(&self) -> Option<f64> {
        Some(self.current_fpr())
    }
    fn estimate(&self) -> Option<f64> {
        Some(self.estimated_len())
    }
}

impl FilterCore for Sbbf {
    #[inline(always)]
    fn insert_bytes(&mut self, key: &[u8]) -> Result<()> {
        Sbbf::insert_bytes(self, key);
        Ok(())
    }
    #[inline(always)]
    fn might_contain_bytes(&self, key: &[u8]) -> bool {
        Sbbf::might_contain_bytes(self, key)
    }
    fn size_in_bytes(&self) -> usize {
        Sbbf::size_in_bytes(self)
    }
    fn table_bits(&self) -> u64 {
        self.bits()
    }
    /// Eight: one bit per word of a block.
    fn hashes(&self) -> u32 {
        8
    }
    fn expected_fpr(&self) -> f64 {
        Sbbf::expected_fpr(self)
    }
    /// The blocks (the kernel is not part of the value).
    fn same_table(&self, other: &Self) -> bool {
        self.blocks == other.blocks
    }
    fn debug_shape(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("blocks", &self.blocks.len());
    }
    fn debug_state(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("fill_ratio", &self.fill_ratio());
    }
}

filter_glue!(Sbbf: ParquetScheme, Sbbf, extend);

#[cfg(feature = "serde")]
mod serde_impl {
    //! serde support: the same fields as the byte format, the blocks flattened to words,
    //! validated the same way on the way in.
    use super::*;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Repr {
        count: u64,
        capacity: u64,
        target_fpr: Option<f64>,
        words: Vec<u32>,
    }

    impl Serialize for Sbbf {
        fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
            Repr {
                count: self.meta.count(),
                capacity: self.meta.capacity(),
                target_fpr: self.meta.target_fpr(),
                words: self.blocks.iter().flat_map(|b| b.0).collect(),
            }
            .serialize(s)
        }
    }

    impl<'de> Deserialize<'de> for Sbbf {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            use serde::de::Error as _;
            let r = Repr::deserialize(d)?;
            if r.words.is_empty() || r.words.len() % 8 != 0 {
                return Err(D::Error::custom(DecodeError::field(
                    "words",
                    format!("{} words is not a positive multiple of 8", r.words.len()),
                )));
            }
            let blocks = r
                .words
                .chunks_exact(8)
                .map(|c| Block(c.try_into().expect("8 words")))
                .collect();
            Sbbf::from_parts(blocks, r.count, r.capacity, r.target_fpr).map_err(D::Error::custom)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_are_aligned() {
        let f = Sbbf::with_blocks(100).unwrap();
        assert!(
            f.blocks
                .iter()
                .all(|b| (b as *const Block as usize).is_multiple_of(32))
        );
    }

    #[test]
    fn layout_follows_the_specification() {
        // Hand-computed from the specification's definitions.
        let h = 0x1234_5678_9abc_def0u64;
        let mut f = Sbbf::with_blocks(1000).unwrap();
        assert!(f.insert_hash(h));
        let block = ((0x1234_5678u64 * 1000) >> 32) as usize;
        assert_eq!(block, 71);
        for (i, s) in SALT.iter().enumerate() {
            let bit = 0x9abc_def0u32.wrapping_mul(*s) >> 27;
            assert_eq!(f.blocks[block].0[i], 1 << bit);
        }
        assert_eq!(f.count_ones(), 8);
        assert!(f.might_contain_hash(h) && !f.insert_hash(h));
        // Hash of the empty value: xxHash64("", 0) (a published test vector).
        assert_eq!(hash_bytes(b""), 0xef46_db37_51d8_e999);
        assert_eq!(hash_i64(7), hash_bytes(&7i64.to_le_bytes()));
    }

    #[test]
    fn sizing() {
        let f = Sbbf::with_fpr(1_000_000, 0.01).unwrap();
        let bpi = math::sbbf_bits_per_item(0.01).unwrap();
        assert_eq!(
            f.blocks(),
            ((1_000_000.0 * bpi).ceil() as u64).div_ceil(256)
        );
        assert!(!f.is_parquet_size());
        let p = Sbbf::with_fpr_parquet_sized(1_000_000, 0.01).unwrap();
        assert!(p.is_parquet_size() && p.blocks() >= f.blocks() && p.blocks() < 2 * f.blocks());
        assert_eq!(
            Sbbf::with_ndv_fpp(1_000_000, 0.01).unwrap().size_in_bytes(),
            2 << 20
        );
        assert_eq!(Sbbf::with_num_bytes(33).unwrap().size_in_bytes(), 64);
        assert_eq!(
            Sbbf::with_num_bytes(u64::MAX).unwrap().size_in_bytes(),
            128 << 20
        );
        assert!(Sbbf::with_blocks(0).is_err());
        assert!(matches!(
            Sbbf::with_blocks(MAX_BLOCKS + 1),
            Err(Error::SizeOverflow(_))
        ));
        assert!(Sbbf::with_fpr_parquet_sized(1 << 30, 0.01).is_err());
    }

    #[test]
    fn reachability() {
        let mut b = Block::default();
        assert!(b.is_reachable() && b.min_inserts() == 0);
        b.0[3] = 1;
        assert!(!b.is_reachable());
        b.0 = [1, 3, 1, 1, 1, 1, 1, 7];
        assert!(b.is_reachable());
        assert_eq!(b.min_inserts(), 3);
    }
}
