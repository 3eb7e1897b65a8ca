//! The classic Bloom filter (Bloom 1970): `m` bits and `k` probes per key anywhere in them.
//!
//! # What it is for
//!
//! A set-membership summary with the textbook semantics and the widest set of operations:
//! union, cardinality and intersection estimates, a zero-copy view, batched and parallel
//! builds, and the seed's `BLM1` interchange layout. Choose it when those operations matter or
//! the table fits in cache; for large tables probed at random, the blocked filter
//! (`bloomlab-blocked`) touches one cache line instead of `k`.
//!
//! # Guarantees
//!
//! - **No false negatives:** an inserted key always answers `true`, also after
//!   [`union`](BloomFilter::union), re-encoding and serde.
//! - **FPR bound:** sized by [`math::classic_bits`] and [`math::classic_hashes`], the expected
//!   FPR at the design load is `(1 − e^(−kn/m))^k` ≈ the target (1.003 % for a 1 % target, `k`
//!   rounded to 7); the tests measure it within a 5σ binomial bound (`tests/conformance.rs`).
//!   Past the design load the FPR grows ([`expected_fpr`](BloomFilter::expected_fpr) says by
//!   how much).
//! - **Errors:** bad parameters give [`Error`]; decoding gives a typed [`DecodeError`] for any
//!   malformed input and never panics; combining filters of different shapes or schemes is
//!   refused.
//!
//! # Format
//!
//! [`to_bytes`](BloomFilter::to_bytes) writes the checked `BLAB` envelope of
//! [`bloomlab_core::format`] (variant tag 1, version 1): `m`, `k`, count, capacity and target,
//! then the bits, little-endian. [`to_blm1`](BloomFilter::to_blm1) writes the seed's `BLM1`
//! layout (16-byte big-endian header, no checksum, the default hash scheme implied). Both are
//! pinned by literal vectors in `tests/known_answers.rs`.
//!
//! # Probes and complexity
//!
//! A key is hashed once (XXH3-128 by default, or a keyed SipHash scheme); its probes are the
//! Kirsch–Mitzenmacher sequence `h1 + i·h2` reduced into `0..m` with fastrange (see
//! [`bloomlab_core::hash`]). Insert: `k` bit sets. Lookup: up to `k` bit reads — all of them
//! without a branch while the array is at most [`BRANCH_FREE_UP_TO`] bytes, and stopping at the
//! first zero bit past it (about two reads for a non-member). Space: `m` bits, 9.59 per item at
//! 1 %. Batched operations hash [`BATCH`] keys ahead and, above [`PREFETCH_ALL_ABOVE`],
//! prefetch every probe's word.
//!
//! # Example
//!
//! ```
//! use bloomlab_classic::BloomFilter;
//!
//! let mut f = BloomFilter::with_fpr(10_000, 0.01)?;
//! assert_eq!(f.hashes(), 7);
//! assert!((f.bits() as f64 / 10_000.0 - 9.585).abs() < 0.01); // 9.59 bits/item at 1 %
//! f.insert("user:42");
//! assert!(f.might_contain("user:42"));
//! for i in 1..10_000u64 {
//!     f.insert(&i);
//! }
//! assert!((1..10_000u64).all(|i| f.might_contain(&i))); // never a false negative
//!
//! // 100 000 keys that were never inserted: the formula expects 1.003 % of them to say
//! // "maybe"; the count stays within 5σ of that (σ = √(N·p·(1−p)) ≈ 31.5).
//! let fp = (1_000_000..1_100_000u64).filter(|i| f.might_contain(i)).count();
//! let expected = 100_000.0 * f.expected_fpr();
//! assert!((fp as f64 - expected).abs() < 5.0 * 31.5, "{fp} vs {expected}");
//! # Ok::<(), bloomlab_core::Error>(())
//! ```
//!
//! # Why this design
//!
//! Two lookup loops, chosen by size with one well-predicted branch: in cache, reading every
//! probe without a branch lets consecutive lookups overlap (the early exit mispredicts about
//! once per lookup, since half the bits are set); out of cache, stopping at the first zero bit
//! saves cache misses, which cost more than mispredictions. Both give the definition's answers
//! (`tests/batch.rs`). The measurements behind the choice, and the comparison with fastbloom's
//! design, are in `docs/design/classic.md`; current figures are in `results/`.
//!
//! # no_std
//!
//! Without its default `std` feature the crate is `#![no_std]` and needs only `alloc`: everything
//! but the parallel builds (`from_keys`, `insert_parallel`, `insert_parallel_with_threads`,
//! [`PARALLEL_MAX_QUEUED`]), which need threads; the `f64` functions of the sizing formulas then
//! come from `libm` (`bloomlab_core::math::float` says how that can differ).
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

extern crate alloc;

use alloc::{format, vec::Vec};
use core::fmt;

#[cfg(feature = "std")]
mod parallel;

#[cfg(feature = "std")]
pub use parallel::PARALLEL_MAX_QUEUED;

use bloomlab_core::bits::{BitArray, get_le_bit};
use bloomlab_core::error::{DecodeError, Error, Result};
use bloomlab_core::format::{self, EnvelopeWriter, Reader, Variant};
use bloomlab_core::hash::{self, HashScheme, KeyHash, Xxh3Scheme};
use bloomlab_core::math;
use bloomlab_core::meta::{FilterCore, Meta};
use bloomlab_core::{Key, filter_glue};
use bloomlab_simd as simd;

/// Prefetch distance of the batched operations ([`BloomFilter::might_contain_batch`],
/// [`BloomFilter::insert_batch`]): while key `i` is answered, key `i + BATCH` is hashed and
/// its first probes' words are being fetched.
pub const BATCH: usize = 16;

/// Up to this many bytes of bits a single lookup reads all `k` probes without a branch; a
/// larger filter stops at the first zero bit (see *Lookup loop* in the crate docs). The
/// batched lookup never branches.
pub const BRANCH_FREE_UP_TO: usize = 1 << 21;

/// Above this many bytes of bits the batched operations prefetch the words of all `k` probes
/// of each key they hash ahead: past the second-level cache every probe of a member is a miss
/// of its own. At or below it they prefetch nothing (the words are in cache, and the
/// prefetches' instructions cost more than they save there) but still hash ahead.
pub const PREFETCH_ALL_ABOVE: usize = 1 << 21;

/// Magic of the seed's interchange layout (16-byte big-endian header, then the bits).
pub const BLM1_MAGIC: [u8; 4] = *b"BLM1";
/// Length of the BLM1 header.
pub const BLM1_HEADER_LEN: usize = 16;

/// A classic Bloom filter over `m` bits with `k` probes per key, generic over the hash scheme.
///
/// `len()` counts calls to insert, repeats included; [`estimated_len`](Self::estimated_len)
/// estimates distinct keys from the fill instead.
#[derive(Clone)]
pub struct BloomFilter<S: HashScheme = Xxh3Scheme> {
    bits: BitArray,
    k: u32,
    meta: Meta<S>,
}

bloomlab_core::default_scheme_constructors! {
    impl BloomFilter {
        /// Size for `expected_items` at false-positive rate `fpr`:
        /// `m = ceil(−n·ln p / (ln 2)^2)`, `k = round((m/n)·ln 2)`.
        ///
        /// Errors: `n = 0`, `p` not in (0, 1) (NaN and infinities included), or a size that does
        /// not fit in memory.
        fn with_fpr(expected_items: u64, fpr: f64) = with_fpr_and_scheme;

        /// Build with exactly `bits` bits and `hashes` probes per key. The design capacity is the
        /// load at which `hashes` is optimal, `m·ln 2 / k`.
        fn with_bits(bits: u64, hashes: u32) = with_bits_and_scheme;

        /// Decode the checked, versioned format written by [`to_bytes`](Self::to_bytes).
        fn from_bytes(bytes: &[u8]) = from_bytes_with_scheme;
    }
}

impl BloomFilter<Xxh3Scheme> {
    /// Encode in the seed's `BLM1` layout: a 16-byte big-endian header
    /// (`"BLM1"` | k | m | count, each a `u32`) followed by `ceil(m/8)` bytes of bits, bit `i`
    /// at `byte[i >> 3] & (1 << (i & 7))`. The layout names no hash scheme: it implies this
    /// library's default xxh3 scheme, so only default-scheme filters have it.
    ///
    /// Errors when `m`, `k` or the count do not fit in 32 bits; use
    /// [`to_bytes`](Self::to_bytes), which has no such limit.
    pub fn to_blm1(&self) -> Result<Vec<u8>> {
        let too_big = |what: &str, v: u64| {
            Error::SizeOverflow(format!("{what} = {v} does not fit the 32-bit BLM1 header"))
        };
        let m = u32::try_from(self.bits.len()).map_err(|_| too_big("m", self.bits.len()))?;
        let count = self.meta.count();
        let count = u32::try_from(count).map_err(|_| too_big("count", count))?;
        let mut out = Vec::with_capacity(BLM1_HEADER_LEN + self.bits.byte_len());
        out.extend_from_slice(&BLM1_MAGIC);
        out.extend_from_slice(&self.k.to_be_bytes());
        out.extend_from_slice(&m.to_be_bytes());
        out.extend_from_slice(&count.to_be_bytes());
        self.bits.write_le_bytes(&mut out);
        Ok(out)
    }

    /// Decode the seed's `BLM1` layout. Checks the magic, `k`, the exact length, that bits
    /// past `m` are zero, and that the count could have set the bits that are set. The design
    /// capacity is taken as `m·ln 2 / k`.
    pub fn from_blm1(bytes: &[u8]) -> Result<Self> {
        let mut r = Reader::new(bytes);
        let magic: [u8; 4] = r.array()?;
        if magic != BLM1_MAGIC {
            return Err(DecodeError::BadMagic { found: magic }.into());
        }
        let k = r.u32_be()?;
        let m = u64::from(r.u32_be()?);
        let count = u64::from(r.u32_be()?);
        check_hashes(k)?;
        if m == 0 {
            return Err(DecodeError::field("m", "must be at least 1").into());
        }
        let bits = BitArray::from_le_bytes(r.take_u64_len(m.div_ceil(8))?, m)?;
        r.finish()?;
        let capacity = math::classic_capacity(m, k);
        Ok(Self::from_parts(
            bits, k, count, capacity, None, Xxh3Scheme,
        )?)
    }
}

/// Each insert sets at most `k` bits (and a union's count is the sum of both counts), so a
/// valid filter never has more than `count · k` ones.
fn check_count(ones: u64, count: u64, k: u32) -> Result<(), DecodeError> {
    if ones > count.saturating_mul(u64::from(k)) {
        return Err(DecodeError::field(
            "count",
            format!("{count} inserts of {k} probes cannot set {ones} bits"),
        ));
    }
    Ok(())
}

use bloomlab_core::format::check_hashes;

impl<S: HashScheme> BloomFilter<S> {
    /// [`with_fpr`](BloomFilter::with_fpr) with a chosen hash scheme.
    pub fn with_fpr_and_scheme(expected_items: u64, fpr: f64, scheme: S) -> Result<Self> {
        let m = math::classic_bits(expected_items, fpr)?;
        let k = math::classic_hashes(m, expected_items);
        Ok(BloomFilter {
            bits: BitArray::new(m)?,
            k,
            meta: Meta::new(expected_items, Some(fpr), scheme),
        })
    }

    /// [`with_bits`](BloomFilter::with_bits) with a chosen hash scheme.
    pub fn with_bits_and_scheme(bits: u64, hashes: u32, scheme: S) -> Result<Self> {
        if bits == 0 {
            return Err(Error::invalid("bits", "must be at least 1"));
        }
        let k = math::validate_hashes(hashes)?;
        Ok(BloomFilter {
            bits: BitArray::new(bits)?,
            k,
            meta: Meta::new(math::classic_capacity(bits, k), None, scheme),
        })
    }

    /// Assemble a filter from its parts, checking every invariant a decoder checks: `k` in
    /// range, capacity ≥ 1, a valid target FPR, and no more set bits than `count · k` inserts
    /// could have set. Used by decoders and by variants that collapse into a classic filter.
    pub fn from_parts(
        bits: BitArray,
        hashes: u32,
        count: u64,
        capacity: u64,
        target_fpr: Option<f64>,
        scheme: S,
    ) -> Result<Self, DecodeError> {
        check_hashes(hashes)?;
        if capacity == 0 {
            return Err(DecodeError::field("capacity", "must be at least 1"));
        }
        format::validate_optional_fpr(target_fpr)?;
        check_count(bits.count_ones(), count, hashes)?;
        Ok(BloomFilter {
            bits,
            k: hashes,
            meta: Meta::new(capacity, target_fpr, scheme).with_count(count),
        })
    }

    /// Insert a key. Returns `true` if the key was definitely new (at least one of its bits
    /// was still zero), `false` if it may have been present already.
    #[inline(always)]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        let h = key.with_key_bytes(|b| self.meta.scheme().hash(b));
        self.insert_hash(h)
    }

    /// Insert a key that was already hashed with this filter's scheme
    /// (lets callers hash once and insert into several filters).
    #[inline]
    pub fn insert_hash(&mut self, h: KeyHash) -> bool {
        let mut new = false;
        for i in h.positions(self.k, self.bits.len()) {
            new |= !self.bits.set(i);
        }
        self.meta.record_insert();
        new
    }

    /// `false`: the key was definitely never inserted. `true`: it maybe was.
    #[inline(always)]
    pub fn might_contain<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.might_contain_hash(key.with_key_bytes(|b| self.meta.scheme().hash(b)))
    }

    /// Query with a hash computed by this filter's scheme.
    #[inline(always)]
    pub fn might_contain_hash(&self, h: KeyHash) -> bool {
        // In cache: every probe, no branch. Larger: the textbook loop, which stops at the
        // first zero bit (see "Lookup loop" in the crate docs).
        if self.bits.size_in_bytes() <= BRANCH_FREE_UP_TO {
            return self.contains_all(h);
        }
        h.positions(self.k, self.bits.len())
            .all(|i| self.bits.get(i))
    }

    /// All `k` probe bits of `h` are set, read without a branch (see *Lookup loop*).
    #[inline(always)]
    fn contains_all(&self, h: KeyHash) -> bool {
        simd::classic_contains_all(self.bits.words(), self.bits.len(), h.h1, h.h2, self.k)
    }

    /// Answer many keys at once: `out[i] = might_contain(keys[i])`. Each key is hashed
    /// [`BATCH`] positions before it is answered and, in a filter larger than
    /// [`PREFETCH_ALL_ABOVE`] bytes, the words of all its probes are prefetched then, so the
    /// hash (the whole SipHash, with a keyed scheme) and the cache misses of about [`BATCH`]
    /// keys overlap instead of running one key after another. Errors (changing nothing) if `out` is not exactly as long as
    /// `keys`.
    ///
    /// ```
    /// use bloomlab_classic::BloomFilter;
    ///
    /// let mut f = BloomFilter::with_fpr(1_000, 0.01)?;
    /// f.insert_batch(&[1u64, 2, 3]);
    /// let mut out = [false; 4];
    /// f.might_contain_batch(&[1u64, 2, 3, 4], &mut out)?;
    /// assert_eq!(&out[..3], &[true; 3]);
    /// assert_eq!(out[3], f.might_contain(&4u64));
    /// # Ok::<(), bloomlab_core::Error>(())
    /// ```
    pub fn might_contain_batch<K: Key>(&self, keys: &[K], out: &mut [bool]) -> Result<()> {
        self.might_contain_batch_at::<K, BATCH>(keys, out)
    }

    /// [`might_contain_batch`](Self::might_contain_batch) with prefetch distance `D` instead
    /// of [`BATCH`], for tuning on a given machine. Answers are the same for every `D`
    /// (`D = 0` hashes each key just before answering it, with no prefetch).
    pub fn might_contain_batch_at<K: Key, const D: usize>(
        &self,
        keys: &[K],
        out: &mut [bool],
    ) -> Result<()> {
        Error::check_out_len(keys.len(), out.len())?;
        let ahead = self.prefetched_probes();
        if S::LANES && D >= simd::CHUNK && D.is_multiple_of(simd::CHUNK) {
            simd::pipeline_chunks::<[bool], K, KeyHash, D>(
                out,
                keys,
                KeyHash::new(0, 0),
                |_, ks, hs| self.hash_chunk(ks, hs),
                |_, h| self.prefetch_probes(h, ahead),
                |out, i, h| out[i] = self.contains_all(h),
            );
        } else {
            simd::pipeline::<K, KeyHash, D>(
                keys,
                |k| self.hash_key(k),
                |h| self.prefetch_probes(h, ahead),
                |i, h| out[i] = self.contains_all(h),
            );
        }
        Ok(())
    }

    /// Insert many keys, each hashed (and, in a filter larger than [`PREFETCH_ALL_ABOVE`]
    /// bytes, its probes' words prefetched) [`BATCH`] keys before it is inserted. Keys are inserted in order; the filter is identical to the one
    /// built by inserting them one by one.
    pub fn insert_batch<K: Key>(&mut self, keys: &[K]) {
        if S::LANES {
            // Hashed eight at a time in vector lanes; the same keys inserted in the same order.
            let probes = self.prefetched_probes();
            simd::pipeline_chunks::<Self, K, KeyHash, BATCH>(
                self,
                keys,
                KeyHash::new(0, 0),
                |f, ks, hs| f.hash_chunk(ks, hs),
                |f, h| f.prefetch_probes(h, probes),
                |f, _, h| {
                    f.insert_hash(h);
                },
            );
            return;
        }
        let mut ring = [KeyHash::new(0, 0); BATCH];
        let probes = self.prefetched_probes();
        for (r, key) in ring.iter_mut().zip(keys) {
            *r = self.hash_key(key);
            self.prefetch_probes(r, probes);
        }
        for i in 0..keys.len() {
            let slot = i % BATCH;
            let h = ring[slot];
            if let Some(key) = keys.get(i + BATCH) {
                let ahead = self.hash_key(key);
                self.prefetch_probes(&ahead, probes);
                ring[slot] = ahead;
            }
            self.insert_hash(h);
        }
    }

    /// How many probes per key the batched operations prefetch: all `k` in a filter larger
    /// than [`PREFETCH_ALL_ABOVE`] bytes, else none.
    fn prefetched_probes(&self) -> u32 {
        if self.bits.size_in_bytes() > PREFETCH_ALL_ABOVE {
            self.k
        } else {
            0
        }
    }

    /// Start loading the words of the first `probes` probes of `h`.
    #[inline(always)]
    fn prefetch_probes(&self, h: &KeyHash, probes: u32) {
        let words = self.bits.words();
        for i in h.positions(probes, self.bits.len()) {
            simd::prefetch(&words[(i >> 6) as usize]);
        }
    }

    /// Hash up to [`simd::CHUNK`] keys into `out`, in vector lanes where the scheme can.
    #[inline(always)]
    fn hash_chunk<K: Key>(&self, keys: &[K], out: &mut [KeyHash]) {
        let s = self.meta.scheme();
        hash::hash_chunk(keys, out, |b| s.hash(b), |w| s.hash_words8(w));
    }

    /// `m`, the number of bits.
    pub fn bits(&self) -> u64 {
        self.bits.len()
    }

    /// `k`, probes per key.
    pub fn hashes(&self) -> u32 {
        self.k
    }

    /// The bit array.
    pub fn bit_array(&self) -> &BitArray {
        &self.bits
    }

    bloomlab_core::sizing_accessors!(saturated, load, len, hash_key);

    /// Fraction of bits set, `X/m` (≈ 1/2 at design load with the optimal k).
    pub fn fill_ratio(&self) -> f64 {
        self.bits.count_ones() as f64 / self.bits.len() as f64
    }

    /// FPR the formula predicts from the insert count: `(1 − e^(−kn/m))^k`.
    pub fn expected_fpr(&self) -> f64 {
        math::classic_fpr(self.bits.len(), self.k, self.meta.count())
    }

    /// FPR implied by the actual fill: `(X/m)^k`.
    pub fn current_fpr(&self) -> f64 {
        math::fpr_from_fill(self.fill_ratio(), self.k)
    }

    /// Distinct keys estimated from the fill (Swamidass & Baldi 2007); infinite if saturated.
    pub fn estimated_len(&self) -> f64 {
        math::estimate_cardinality(self.bits.len(), self.k, self.bits.count_ones())
    }

    /// Remove every key.
    pub fn clear(&mut self) {
        self.bits.clear();
        self.meta.reset_count();
    }

    fn check_compatible(&self, other: &Self) -> Result<()> {
        if self.bits.len() != other.bits.len() || self.k != other.k {
            return Err(Error::Incompatible(format!(
                "(m, k) = ({}, {}) vs ({}, {})",
                self.bits.len(),
                self.k,
                other.bits.len(),
                other.k
            )));
        }
        let (a, b) = (self.meta.descriptor(), other.meta.descriptor());
        if a != b {
            return Err(Error::Incompatible(format!("hash scheme {a} vs {b}")));
        }
        Ok(())
    }

    /// Bitwise OR with a filter of the same `m`, `k` and hash scheme (anything else is refused:
    /// it would probe other positions). The result is bit-for-bit the filter built from both
    /// key sets; the count becomes the sum of both counts.
    pub fn union(&mut self, other: &Self) -> Result<()> {
        self.check_compatible(other)?;
        self.bits.union_with(&other.bits)?;
        self.meta = self
            .meta
            .clone()
            .with_count(self.meta.count().saturating_add(other.meta.count()));
        Ok(())
    }

    /// Estimate `|A ∩ B|` as `n̂(A) + n̂(B) − n̂(A ∪ B)` (seed 000, extension exercise 4), each
    /// `n̂` from the fill. Clamped at zero. Errors if the filters are incompatible or the
    /// union is saturated (every bit set, so no estimate is possible).
    pub fn intersection_estimate(a: &Self, b: &Self) -> Result<f64> {
        a.check_compatible(b)?;
        let (m, k) = (a.bits.len(), a.k);
        let union_ones = a.bits.count_ones_union(&b.bits)?;
        if union_ones >= m {
            return Err(Error::Saturated(
                "every bit of the union is set; the intersection cannot be estimated".into(),
            ));
        }
        let est =
            a.estimated_len() + b.estimated_len() - math::estimate_cardinality(m, k, union_ones);
        Ok(est.max(0.0))
    }

    /// Encode in the checked, versioned envelope ([`bloomlab_core::format`]) with this
    /// payload (little-endian): `m: u64 | k: u32 | reserved: u32 = 0 | count: u64 |
    /// capacity: u64 | target_fpr: f64 (0 = none) | ceil(m/8) bytes of bits`.
    /// No 32-bit limit; the hash scheme is recorded and checked on read.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = EnvelopeWriter::new(
            Variant::Classic,
            self.meta.descriptor(),
            format::BloomHeader::LEN + self.bits.byte_len(),
        );
        format::BloomHeader {
            size: self.bits.len(),
            k: self.k,
            count: self.meta.count(),
            capacity: self.meta.capacity(),
            target_fpr: self.meta.target_fpr(),
        }
        .write(&mut w);
        self.bits.write_le_bytes(w.buffer());
        w.finish()
    }

    /// Decode [`to_bytes`](Self::to_bytes) output, probing with `scheme`. Refuses bytes written
    /// with another scheme or key, damaged bytes (checksum), and any invalid field.
    pub fn from_bytes_with_scheme(bytes: &[u8], scheme: S) -> Result<Self> {
        let payload = format::open_expecting(bytes, Variant::Classic, scheme.descriptor())?;
        let p = Payload::parse(payload)?;
        let bits = BitArray::from_le_bytes(p.bits, p.m)?;
        Ok(Self::from_parts(
            bits, p.k, p.count, p.capacity, p.target, scheme,
        )?)
    }
}

/// The classic payload of the checked format, parsed and validated on the raw bytes (shared
/// by the owning decoder and the borrowed view, so both accept exactly the same inputs).
struct Payload<'a> {
    m: u64,
    k: u32,
    count: u64,
    capacity: u64,
    target: Option<f64>,
    bits: &'a [u8],
}

impl<'a> Payload<'a> {
    fn parse(payload: &'a [u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(payload);
        let format::BloomHeader {
            size: m,
            k,
            count,
            capacity,
            target_fpr: target,
        } = format::BloomHeader::read(&mut r)?;
        if m == 0 || capacity == 0 {
            return Err(DecodeError::field("m/capacity", "must be at least 1"));
        }
        let bits = r.take_u64_len(m.div_ceil(8))?;
        r.finish()?;
        if m % 8 != 0 && bits[bits.len() - 1] >> (m % 8) != 0 {
            return Err(DecodeError::TrailingBitsSet);
        }
        check_count(
            bits.iter().map(|b| u64::from(b.count_ones())).sum(),
            count,
            k,
        )?;
        Ok(Payload {
            m,
            k,
            count,
            capacity,
            target,
            bits,
        })
    }
}

bloomlab_core::declared! {
    BloomFilter: bloomlab_core::Declaration {
        variant: Variant::Classic,
        versions: &[format::FORMAT_VERSION],
        changes: bloomlab_core::declare::Changes::Fixed,
        deletes: false,
        no_union: None,
        design: "k probes anywhere in m bits: m = ceil(-n ln p / ln2^2), k = round(m/n ln 2), one xxh3-128 per key",
    };
    sized: with_fpr_and_scheme,
    fill: fill_ratio,
    fill_fpr: current_fpr,
    estimate: estimated_len,
    union: union,
}

impl<S: HashScheme> FilterCore for BloomFilter<S> {
    bloomlab_core::key_methods!();

    fn size_in_bytes(&self) -> usize {
        self.bits.size_in_bytes()
    }

    fn table_bits(&self) -> u64 {
        self.bits.len()
    }

    fn hashes(&self) -> u32 {
        self.k
    }

    fn expected_fpr(&self) -> f64 {
        BloomFilter::expected_fpr(self)
    }

    fn same_table(&self, other: &Self) -> bool {
        self.k == other.k && self.bits == other.bits
    }

    fn debug_shape(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("m", &self.bits.len()).field("k", &self.k);
    }

    fn debug_state(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("fill_ratio", &self.fill_ratio());
    }
}

filter_glue!(BloomFilter, Classic, extend);

/// A read-only classic filter that answers queries straight from a byte slice (for example a
/// memory-mapped file), without copying the bits. Built from either byte format; validated
/// exactly as the owning decoders validate.
#[derive(Clone)]
pub struct BloomFilterView<'a, S: HashScheme = Xxh3Scheme> {
    bits: &'a [u8],
    m: u64,
    k: u32,
    count: u64,
    scheme: S,
}

impl<'a> BloomFilterView<'a, Xxh3Scheme> {
    /// View bytes in the checked format written by [`BloomFilter::to_bytes`].
    pub fn new(bytes: &'a [u8]) -> Result<Self> {
        Self::with_scheme(bytes, Xxh3Scheme)
    }

    /// View bytes in the seed's `BLM1` layout.
    pub fn from_blm1(bytes: &'a [u8]) -> Result<Self> {
        // Validate everything (magic, sizes, tail bits, count) once with the owning decoder's
        // rules, then borrow the bit region.
        let f = BloomFilter::from_blm1(bytes)?;
        Ok(BloomFilterView {
            bits: &bytes[BLM1_HEADER_LEN..],
            m: f.bits(),
            k: f.hashes(),
            count: f.len(),
            scheme: Xxh3Scheme,
        })
    }
}

impl<'a, S: HashScheme> BloomFilterView<'a, S> {
    /// View bytes in the checked format, probing with `scheme`.
    pub fn with_scheme(bytes: &'a [u8], scheme: S) -> Result<Self> {
        let payload = format::open_expecting(bytes, Variant::Classic, scheme.descriptor())?;
        let p = Payload::parse(payload)?;
        Ok(BloomFilterView {
            bits: p.bits,
            m: p.m,
            k: p.k,
            count: p.count,
            scheme,
        })
    }

    /// `false`: definitely never inserted; `true`: maybe.
    #[inline]
    pub fn might_contain<K: Key + ?Sized>(&self, key: &K) -> bool {
        let h = key.with_key_bytes(|b| self.scheme.hash(b));
        // The owned filter's probe loop (see "Lookup loop" in the crate docs).
        let mut p = h.positions(self.k, self.m);
        if self.bits.len() <= BRANCH_FREE_UP_TO {
            return p.fold(true, |all, i| all & get_le_bit(self.bits, i));
        }
        p.all(|i| get_le_bit(self.bits, i))
    }

    /// Number of inserts recorded in the bytes.
    pub fn len(&self) -> u64 {
        self.count
    }

    /// No inserts recorded.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// `m`.
    pub fn bits(&self) -> u64 {
        self.m
    }

    /// `k`.
    pub fn hashes(&self) -> u32 {
        self.k
    }
}

impl<S: HashScheme> fmt::Debug for BloomFilterView<'_, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BloomFilterView")
            .field("m", &self.m)
            .field("k", &self.k)
            .field("count", &self.count)
            .field("scheme", &self.scheme.descriptor())
            .finish()
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    //! serde support: the same fields as the byte format, validated the same way on the way in.
    //! Only schemes constructible with `Default` (unkeyed) deserialize; a keyed filter must be
    //! loaded from bytes with its secret.
    use super::*;
    use bloomlab_core::hash::SchemeDescriptor;
    use bloomlab_core::meta::deserialize_checked;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    struct Repr<W> {
        m: u64,
        k: u32,
        count: u64,
        capacity: u64,
        target_fpr: Option<f64>,
        scheme: SchemeDescriptor,
        words: W,
    }

    impl<S: HashScheme> Serialize for BloomFilter<S> {
        fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
            Repr {
                m: self.bits.len(),
                k: self.k,
                count: self.meta.count(),
                capacity: self.meta.capacity(),
                target_fpr: self.meta.target_fpr(),
                scheme: self.meta.descriptor(),
                words: self.bits.words(),
            }
            .serialize(s)
        }
    }

    impl<'de, S: HashScheme + Default> Deserialize<'de> for BloomFilter<S> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            deserialize_checked(
                d,
                |r: &Repr<Vec<u64>>| r.scheme,
                |r: Repr<Vec<u64>>, scheme: S| {
                    let bits = BitArray::from_words(r.words, r.m)?;
                    BloomFilter::from_parts(bits, r.k, r.count, r.capacity, r.target_fpr, scheme)
                },
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizing_follows_the_math_module() {
        let f = BloomFilter::with_fpr(1_000_000, 0.01).unwrap();
        assert_eq!(f.bits(), math::classic_bits(1_000_000, 0.01).unwrap());
        assert_eq!(f.hashes(), 7);
        assert_eq!(f.capacity(), 1_000_000);
        assert!(f.is_empty());
    }

    #[test]
    fn insert_reports_new_keys() {
        let mut f = BloomFilter::with_fpr(100, 0.01).unwrap();
        assert!(f.insert("a"));
        assert!(!f.insert("a"));
        assert_eq!(f.len(), 2);
        assert!(f.might_contain("a"));
    }

    #[test]
    fn blm1_golden_bytes() {
        // Frozen: the seed's header layout and this library's default hash. If this test
        // changes, files written by earlier versions would answer wrongly.
        let mut f = BloomFilter::with_bits(64, 3).unwrap();
        f.insert("user:42");
        let bytes = f.to_blm1().unwrap();
        assert_eq!(&bytes[..16], b"BLM1\0\0\0\x03\0\0\0\x40\0\0\0\x01");
        let h = Xxh3Scheme.hash(b"user:42");
        let mut want = [0u8; 8];
        for i in h.positions(3, 64) {
            want[(i >> 3) as usize] |= 1 << (i & 7);
        }
        assert_eq!(&bytes[16..], &want);
        assert_eq!(
            h,
            KeyHash::new(0x1867_b159_4963_f271, 0x820a_064c_fd5d_3839),
            "the default hash of \"user:42\" changed"
        );
    }
}
