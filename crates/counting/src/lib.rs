//! The counting Bloom filter of seed 000 (Fan, Cao, Almeida & Broder 2000, "Summary Cache"):
//! every bit of the classic filter becomes a 4-bit counter, so keys can be removed.
//!
//! - `m` counters, two per byte (counter `i` is the low nibble of byte `i/2` when `i` is even,
//!   the high nibble when odd), `k` probes per key at **the same positions as the classic
//!   filter** (Kirsch–Mitzenmacher `h1 + i·h2` reduced with fastrange, sized with the classic
//!   formulas), so [`to_bloom_filter`](CountingBloomFilter::to_bloom_filter) collapses it into
//!   a [`BloomFilter`] bit-identical to one built from the same keys.
//! - Insert adds one to each of the key's distinct counters (also when they are all non-zero
//!   already); remove subtracts one.
//! - A counter that reaches 15 is **sticky**: its true value is unknown from then on, so it is
//!   never decremented again (decrementing could bring it to zero while keys still need it).
//!   At the design load a counter reaches 16 with probability ≈ 7·10^-17
//!   ([`math::counting_counter_tail`]); [`counter_stats`](CountingBloomFilter::counter_stats)
//!   reports how many are stuck.
//!
//! # Repeated inserts (hot keys)
//!
//! [`insert`](CountingBloomFilter::insert) counts: every call adds one to each of the key's
//! counters, so a key inserted `c` times holds `c` in each of them. The rule for a key
//! inserted again and again is the counters' own: **a counter saturates at 15** ([`STICKY`]),
//! so the memory is fixed at the build (`m` counters, never more) and every insert costs the
//! same `k` counter updates, whatever was inserted before — a million inserts of one key take
//! a million times one insert's time and no byte more. No insert is ever refused.
//!
//! What **`remove`** then promises for a key inserted many times:
//!
//! - inserted `c ≤ 14` times (and its counters shared with no other key's past 15): it tests
//!   positive until it has been removed `c` times, then negative, like a multiset;
//! - inserted 15 times or more: all of its counters are sticky, so it **stays present for
//!   good** (until [`clear`](CountingBloomFilter::clear)): every `remove` of it returns `true`
//!   and lowers [`len`](CountingBloomFilter::len), but never brings it, or any key sharing
//!   those counters, to a false negative. Its counters also stay set, so the FPR keeps their
//!   share ([`counter_stats`](CountingBloomFilter::counter_stats) reports them).
//!
//! A "seen" filter that should hold each key once uses
//! [`insert_unique`](CountingBloomFilter::insert_unique) (one lookup, insert only if the key
//! tests negative): repeats then touch no counter, and one remove takes a key out.
//!
//! # Removing keys safely
//!
//! [`remove`](CountingBloomFilter::remove) refuses a key that tests negative and returns
//! `false`, changing nothing: decrementing for a key that was never inserted would take counts
//! from other keys and create false negatives. **It cannot detect the other bad case**: a key
//! that was never inserted but tests positive (a false positive) is "removed" like any other,
//! and that can make inserted keys test negative. Only remove keys you inserted (and no more
//! often than you inserted them).
//!
//! The price: 4 bits per counter, 4× the memory of the classic filter at the same `(n, p)`.
//!
//! ```
//! use bloomlab_counting::CountingBloomFilter;
//!
//! let mut f = CountingBloomFilter::with_fpr(10_000, 0.01)?;
//! assert_eq!(f.hashes(), 7);
//! let bits_per_item = f.size_in_bytes() as f64 * 8.0 / 10_000.0;
//! assert!((bits_per_item - 4.0 * 9.585).abs() < 0.01); // 4 × the classic 9.59 bits/item
//! for i in 0..10_000u64 {
//!     f.insert(&i);
//! }
//! assert!(f.remove(&42u64)); // an inserted key: removed
//! assert!((0..10_000u64).filter(|&i| i != 42).all(|i| f.might_contain(&i)));
//! assert!(!f.remove(&"never inserted, tests negative")); // refused, nothing changes
//! assert_eq!(f.len(), 9_999);
//!
//! // 100 000 non-members: within 5σ of the classic formula's 1.003 % (σ ≈ 31.5).
//! let fp = (1_000_000..1_100_000u64).filter(|i| f.might_contain(i)).count();
//! assert!((fp as f64 - 100_000.0 * f.expected_fpr()).abs() < 5.0 * 31.5);
//!
//! // Collapse for read-only consumers: the classic filter of the remaining keys, bit for bit.
//! let classic = f.to_bloom_filter()?;
//! assert_eq!(classic.bits(), f.counters());
//! assert!((0..10_000u64).filter(|&i| i != 42).all(|i| classic.might_contain(&i)));
//!
//! // A hot key: its counters stick at 15, the memory stays, and it stays present for good.
//! let bytes = f.size_in_bytes();
//! for _ in 0..1_000 {
//!     f.insert("hot");
//! }
//! assert_eq!(f.size_in_bytes(), bytes);
//! assert!((0..1_000).all(|_| f.remove("hot")));
//! assert!(f.might_contain("hot"));
//! assert!(!f.insert_unique("hot")); // set semantics: present, nothing changes
//! assert_eq!(f.len(), 9_999);
//! # Ok::<(), bloomlab_core::Error>(())
//! ```
//!
//! # no_std
//!
//! Without its default `std` feature the crate is `#![no_std]` and needs only `alloc`: everything
//! but the parallel builds (`from_keys`, `insert_parallel`, `insert_parallel_with_threads`), which
//! need threads; the `f64` functions of the sizing formulas then come from `libm`
//! (`bloomlab_core::math::float` says how that can differ).
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod math;

use alloc::{format, vec::Vec};
use core::fmt;

#[cfg(feature = "std")]
mod parallel;

use bloomlab_classic::BloomFilter;
use bloomlab_core::bits::BitArray;
use bloomlab_core::error::{DecodeError, Error, Result};
use bloomlab_core::format::{self, EnvelopeWriter, Reader, Variant};
use bloomlab_core::hash::{HashScheme, KeyHash, Xxh3Scheme};
use bloomlab_core::meta::{FilterCore, Meta};
use bloomlab_core::{Key, RemovableFilter, filter_glue};

/// The value at which a counter becomes sticky (the largest a 4-bit counter holds).
pub const STICKY: u8 = 15;

/// Counter statistics of a counting filter; see
/// [`CountingBloomFilter::counter_stats`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CounterStats {
    /// Number of counters, `m`.
    pub counters: u64,
    /// Counters above zero (the bits a collapsed classic filter would have set).
    pub nonzero: u64,
    /// Counters stuck at 15: their true value is unknown and they are never decremented.
    pub saturated: u64,
    /// The largest counter value.
    pub max: u8,
    /// `histogram[v]` = number of counters holding `v`.
    pub histogram: [u64; 16],
}

/// The distinct probe positions of a key (the classic filter's positions, repeats dropped).
/// Kept on the stack for `k ≤ 16` (every `k` the sizing picks down to p ≈ 10^-5), on the heap
/// beyond.
struct DistinctPositions {
    small: [u64; 16],
    large: Vec<u64>,
    len: usize,
}

impl DistinctPositions {
    #[inline]
    fn new(h: KeyHash, k: u32, m: u64) -> Self {
        let mut d = DistinctPositions {
            small: [0; 16],
            large: Vec::new(),
            len: 0,
        };
        if k as usize <= d.small.len() {
            for p in h.positions(k, m) {
                if !d.small[..d.len].contains(&p) {
                    d.small[d.len] = p;
                    d.len += 1;
                }
            }
        } else {
            for p in h.positions(k, m) {
                if !d.large.contains(&p) {
                    d.large.push(p);
                }
            }
            d.len = d.large.len();
        }
        d
    }

    #[inline]
    fn as_slice(&self) -> &[u64] {
        if self.large.is_empty() {
            &self.small[..self.len]
        } else {
            &self.large
        }
    }
}

/// A counting Bloom filter: `m` 4-bit counters (two per byte), `k` probes per key, generic over
/// the hash scheme.
///
/// `len()` is inserts minus successful removes.
#[derive(Clone)]
pub struct CountingBloomFilter<S: HashScheme = Xxh3Scheme> {
    /// `ceil(m/2)` bytes; counter `i` in byte `i >> 1`, low nibble for even `i`.
    nibbles: Vec<u8>,
    m: u64,
    k: u32,
    meta: Meta<S>,
}

bloomlab_core::default_scheme_constructors! {
    impl CountingBloomFilter {
        /// Size for `expected_items` at false-positive rate `fpr` with the classic formulas
        /// (`m = ceil(−n·ln p / (ln 2)^2)` counters, `k = round((m/n)·ln 2)`), exactly as
        /// [`BloomFilter::with_fpr`] does.
        ///
        /// Errors: `n = 0`, `p` not in (0, 1) (NaN and infinities included), or a size that does
        /// not fit in memory.
        fn with_fpr(expected_items: u64, fpr: f64) = with_fpr_and_scheme;

        /// Build with exactly `counters` counters and `hashes` probes per key (the design capacity
        /// is `m·ln 2 / k`, as for [`BloomFilter::with_bits`]).
        fn with_counters(counters: u64, hashes: u32) = with_counters_and_scheme;

        /// Decode the checked, versioned format written by [`to_bytes`](Self::to_bytes).
        fn from_bytes(bytes: &[u8]) = from_bytes_with_scheme;
    }
}

use bloomlab_core::format::check_hashes;

/// A zeroed byte vector for `m` counters, or [`Error::SizeOverflow`].
fn zeroed_nibbles(m: u64) -> Result<Vec<u8>> {
    let bytes = m.div_ceil(2);
    let too_big = || Error::SizeOverflow(format!("{m} counters need {bytes} bytes"));
    if bytes > isize::MAX as u64 {
        return Err(too_big());
    }
    let n = usize::try_from(bytes).map_err(|_| too_big())?;
    let mut v = Vec::new();
    v.try_reserve_exact(n)
        .map_err(|e| Error::SizeOverflow(format!("cannot allocate {n} bytes of counters: {e}")))?;
    v.resize(n, 0);
    Ok(v)
}

impl<S: HashScheme> CountingBloomFilter<S> {
    /// [`with_fpr`](CountingBloomFilter::with_fpr) with a chosen hash scheme.
    pub fn with_fpr_and_scheme(expected_items: u64, fpr: f64, scheme: S) -> Result<Self> {
        let m = bloomlab_core::math::classic_bits(expected_items, fpr)?;
        let k = bloomlab_core::math::classic_hashes(m, expected_items);
        Ok(CountingBloomFilter {
            nibbles: zeroed_nibbles(m)?,
            m,
            k,
            meta: Meta::new(expected_items, Some(fpr), scheme),
        })
    }

    /// [`with_counters`](CountingBloomFilter::with_counters) with a chosen hash scheme.
    pub fn with_counters_and_scheme(counters: u64, hashes: u32, scheme: S) -> Result<Self> {
        if counters == 0 {
            return Err(Error::invalid("counters", "must be at least 1"));
        }
        let k = bloomlab_core::math::validate_hashes(hashes)?;
        Ok(CountingBloomFilter {
            nibbles: zeroed_nibbles(counters)?,
            m: counters,
            k,
            meta: Meta::new(
                bloomlab_core::math::classic_capacity(counters, k),
                None,
                scheme,
            ),
        })
    }

    #[inline(always)]
    fn get(&self, i: u64) -> u8 {
        let byte = self.nibbles[(i >> 1) as usize];
        (byte >> ((i & 1) * 4)) & 0x0f
    }

    #[inline(always)]
    fn set(&mut self, i: u64, v: u8) {
        let shift = (i & 1) * 4;
        let byte = &mut self.nibbles[(i >> 1) as usize];
        *byte = (*byte & !(0x0f << shift)) | ((v & 0x0f) << shift);
    }

    /// Counter `i`, or `None` past the last counter.
    pub fn counter(&self, i: u64) -> Option<u8> {
        (i < self.m).then(|| self.get(i))
    }

    /// Insert a key: add one to each of its distinct counters (a counter at 15 stays at 15).
    /// Returns `true` if the key was definitely new (one of its counters was zero).
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        let h = self.hash_key(key);
        self.insert_hash(h)
    }

    /// Insert a key only if it tests negative (set semantics): `true` inserted (it was
    /// definitely new), `false` it maybe was there already and nothing changed. One hash, one
    /// lookup; repeats of a key then never raise its counters.
    #[inline]
    pub fn insert_unique<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        let h = self.hash_key(key);
        if self.might_contain_hash(h) {
            return false;
        }
        self.insert_hash(h)
    }

    /// Insert a key already hashed with this filter's scheme.
    pub fn insert_hash(&mut self, h: KeyHash) -> bool {
        let mut new = false;
        for &i in DistinctPositions::new(h, self.k, self.m).as_slice() {
            let c = self.get(i);
            new |= c == 0;
            if c < STICKY {
                self.set(i, c + 1);
            }
        }
        self.meta.record_insert();
        new
    }

    /// Remove one occurrence of a key that was inserted.
    ///
    /// Returns `false` and changes nothing if the key tests negative (some counter is zero):
    /// it was certainly never inserted (or already removed as often as inserted), and
    /// decrementing would create false negatives for other keys. Otherwise subtracts one from
    /// each of its distinct counters, except sticky ones (at 15), and returns `true`.
    ///
    /// A key that was never inserted but tests positive (a false positive) **cannot be told
    /// apart** from an inserted key: removing it damages other keys' counts and can make them
    /// test negative. Only remove keys you inserted.
    pub fn remove<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        let h = self.hash_key(key);
        self.remove_hash(h)
    }

    /// [`remove`](Self::remove) for a key already hashed with this filter's scheme.
    pub fn remove_hash(&mut self, h: KeyHash) -> bool {
        let positions = DistinctPositions::new(h, self.k, self.m);
        if positions.as_slice().iter().any(|&i| self.get(i) == 0) {
            return false;
        }
        for &i in positions.as_slice() {
            let c = self.get(i);
            if c < STICKY {
                self.set(i, c - 1);
            }
        }
        self.meta.record_remove();
        true
    }

    /// `false`: the key is definitely not in the filter. `true`: it maybe is.
    #[inline(always)]
    pub fn might_contain<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.might_contain_hash(self.hash_key(key))
    }

    /// Query with a hash computed by this filter's scheme.
    #[inline]
    pub fn might_contain_hash(&self, h: KeyHash) -> bool {
        h.positions(self.k, self.m).all(|i| self.get(i) != 0)
    }

    /// `m`, the number of counters.
    pub fn counters(&self) -> u64 {
        self.m
    }

    /// `k`, probes per key.
    pub fn hashes(&self) -> u32 {
        self.k
    }

    /// Heap bytes of the counters: `ceil(m/2)`.
    pub fn size_in_bytes(&self) -> usize {
        self.nibbles.len()
    }

    bloomlab_core::sizing_accessors!(saturated, len, hash_key);

    /// Counter statistics: how many are non-zero, how many are stuck at 15, the largest value
    /// and the full histogram. One pass over the counters.
    pub fn counter_stats(&self) -> CounterStats {
        let mut histogram = [0u64; 16];
        for i in 0..self.m {
            histogram[self.get(i) as usize] += 1;
        }
        CounterStats {
            counters: self.m,
            nonzero: self.m - histogram[0],
            saturated: histogram[STICKY as usize],
            max: (0..16u8)
                .rev()
                .find(|&v| histogram[v as usize] > 0)
                .unwrap_or(0),
            histogram,
        }
    }

    /// Counters stuck at 15.
    pub fn saturated_counters(&self) -> u64 {
        self.counter_stats().saturated
    }

    /// Counters the model expects at 15 or more after `len()` distinct keys:
    /// `m · P(Pois(k·n/m) ≥ 15)` ([`math::counting_counter_tail`]); ≈ 2·10^-15 per counter at
    /// the design load, so a stuck counter there almost always means repeated inserts.
    pub fn expected_saturated_counters(&self) -> f64 {
        self.m as f64
            * math::counting_counter_tail(self.m, self.k, self.meta.count(), u32::from(STICKY))
    }

    /// Fraction of counters above zero.
    pub fn fill_ratio(&self) -> f64 {
        self.counter_stats().nonzero as f64 / self.m as f64
    }

    /// FPR the classic formula predicts from the key count: `(1 − e^(−kn/m))^k`.
    pub fn expected_fpr(&self) -> f64 {
        bloomlab_core::math::classic_fpr(self.m, self.k, self.meta.count())
    }

    /// FPR implied by the counters above zero: `(X/m)^k`.
    pub fn current_fpr(&self) -> f64 {
        bloomlab_core::math::fpr_from_fill(self.fill_ratio(), self.k)
    }

    /// Distinct keys estimated from the counters above zero (Swamidass & Baldi 2007).
    pub fn estimated_len(&self) -> f64 {
        bloomlab_core::math::estimate_cardinality(self.m, self.k, self.counter_stats().nonzero)
    }

    /// Remove every key (sticky counters included).
    pub fn clear(&mut self) {
        self.nibbles.fill(0);
        self.meta.reset_count();
    }

    /// Collapse into a classic filter with the same `m`, `k`, hash scheme, count, capacity and
    /// target: bit `i` is set iff counter `i` is above zero. The result is bit-identical to a
    /// [`BloomFilter`] built from the keys this filter holds.
    ///
    /// Errors with [`Error::Saturated`] only when sticky counters outlived their keys so that
    /// more bits are set than `len()` keys can explain (a classic filter with those bits and
    /// that count would be invalid).
    pub fn to_bloom_filter(&self) -> Result<BloomFilter<S>> {
        let mut bits = BitArray::new(self.m)?;
        for i in 0..self.m {
            if self.get(i) != 0 {
                bits.set(i);
            }
        }
        BloomFilter::from_parts(
            bits,
            self.k,
            self.meta.count(),
            self.meta.capacity(),
            self.meta.target_fpr(),
            self.meta.scheme().clone(),
        )
        .map_err(|e| Error::Saturated(format!("cannot collapse to a classic filter: {e}")))
    }

    /// Encode in the checked, versioned envelope ([`bloomlab_core::format`], variant
    /// `Counting`) with this payload (little-endian): `m: u64 | k: u32 | reserved: u32 = 0 |
    /// count: u64 | capacity: u64 | target_fpr: f64 (0 = none) | ceil(m/2) bytes of counters`,
    /// counter `i` in the low nibble of byte `i/2` when `i` is even, the high nibble when odd;
    /// an unused high nibble (odd `m`) is zero.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = EnvelopeWriter::new(
            Variant::Counting,
            self.meta.descriptor(),
            format::BloomHeader::LEN + self.nibbles.len(),
        );
        format::BloomHeader {
            size: self.m,
            k: self.k,
            count: self.meta.count(),
            capacity: self.meta.capacity(),
            target_fpr: self.meta.target_fpr(),
        }
        .write(&mut w);
        w.bytes(&self.nibbles);
        w.finish()
    }

    /// Decode [`to_bytes`](Self::to_bytes) output, probing with `scheme`. Refuses another
    /// scheme or key, damaged bytes, and any invalid field: `k` out of range, zero `m` or
    /// capacity, a bad target, a wrong length, a set unused nibble, or counters (below 15)
    /// summing to more than `count · k` increments.
    pub fn from_bytes_with_scheme(bytes: &[u8], scheme: S) -> Result<Self> {
        let payload = format::open_expecting(bytes, Variant::Counting, scheme.descriptor())?;
        let mut r = Reader::new(payload);
        let h = format::BloomHeader::read(&mut r)?;
        if h.size == 0 {
            return Err(DecodeError::field("m", "must be at least 1").into());
        }
        let data = r.take_u64_len(h.size.div_ceil(2))?;
        r.finish()?;
        Ok(Self::from_parts(
            data.to_vec(),
            h.size,
            h.k,
            h.count,
            h.capacity,
            h.target_fpr,
            scheme,
        )?)
    }

    fn from_parts(
        nibbles: Vec<u8>,
        m: u64,
        k: u32,
        count: u64,
        capacity: u64,
        target_fpr: Option<f64>,
        scheme: S,
    ) -> Result<Self, DecodeError> {
        check_hashes(k)?;
        if m == 0 {
            return Err(DecodeError::field("m", "must be at least 1"));
        }
        if nibbles.len() as u64 != m.div_ceil(2) {
            return Err(DecodeError::field(
                "counters",
                format!("{} bytes for {m} counters", nibbles.len()),
            ));
        }
        if capacity == 0 {
            return Err(DecodeError::field("capacity", "must be at least 1"));
        }
        format::validate_optional_fpr(target_fpr)?;
        if m % 2 == 1 && nibbles[nibbles.len() - 1] >> 4 != 0 {
            return Err(DecodeError::TrailingBitsSet);
        }
        let f = CountingBloomFilter {
            nibbles,
            m,
            k,
            meta: Meta::new(capacity, target_fpr, scheme).with_count(count),
        };
        // Each key held adds one to at most k counters; counters below 15 are exact.
        let exact: u64 = (0..m)
            .map(|i| f.get(i))
            .filter(|&c| c < STICKY)
            .map(u64::from)
            .sum();
        if exact > count.saturating_mul(u64::from(k)) {
            return Err(DecodeError::field(
                "count",
                format!("{count} keys of {k} probes cannot account for {exact} increments"),
            ));
        }
        Ok(f)
    }
}

bloomlab_core::declared! {
    CountingBloomFilter: bloomlab_core::Declaration {
        variant: Variant::Counting,
        versions: &[format::FORMAT_VERSION],
        changes: bloomlab_core::declare::Changes::Fixed,
        deletes: true,
        no_union: Some(
            "a counting filter has no exact union (its counters saturate, so the sum of two is not the filter of both key sets)",
        ),
        design: "the classic m and k, 4-bit counters (4x the classic memory), sticky at 15",
    };
    sized: with_fpr_and_scheme,
    fill: fill_ratio,
    fill_fpr: current_fpr,
    estimate: estimated_len,
}

impl<S: HashScheme> FilterCore for CountingBloomFilter<S> {
    bloomlab_core::key_methods!();
    fn size_in_bytes(&self) -> usize {
        self.nibbles.len()
    }
    fn table_bits(&self) -> u64 {
        self.m.saturating_mul(4)
    }
    fn hashes(&self) -> u32 {
        self.k
    }
    fn expected_fpr(&self) -> f64 {
        CountingBloomFilter::expected_fpr(self)
    }
    fn same_table(&self, other: &Self) -> bool {
        self.m == other.m && self.k == other.k && self.nibbles == other.nibbles
    }
    fn debug_shape(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("m", &self.m).field("k", &self.k);
    }
}

filter_glue!(CountingBloomFilter, Counting, extend);

impl<S: HashScheme> RemovableFilter for CountingBloomFilter<S> {
    /// See [`CountingBloomFilter::remove`]: `false` (nothing changed) for a key that tests
    /// negative; a false-positive key cannot be detected.
    fn remove_bytes(&mut self, key: &[u8]) -> bool {
        self.remove(key)
    }
}

#[cfg(feature = "serde")]
mod serde_impl {
    //! serde support: the same fields as the byte format, validated the same way on the way
    //! in. Only schemes constructible with `Default` (unkeyed) deserialize.
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
        counters: W,
    }

    impl<S: HashScheme> Serialize for CountingBloomFilter<S> {
        fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
            Repr {
                m: self.m,
                k: self.k,
                count: self.meta.count(),
                capacity: self.meta.capacity(),
                target_fpr: self.meta.target_fpr(),
                scheme: self.meta.descriptor(),
                counters: &self.nibbles,
            }
            .serialize(s)
        }
    }

    impl<'de, S: HashScheme + Default> Deserialize<'de> for CountingBloomFilter<S> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            deserialize_checked(
                d,
                |r: &Repr<Vec<u8>>| r.scheme,
                |r: Repr<Vec<u8>>, scheme| {
                    CountingBloomFilter::from_parts(
                        r.counters,
                        r.m,
                        r.k,
                        r.count,
                        r.capacity,
                        r.target_fpr,
                        scheme,
                    )
                },
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nibbles_are_packed_low_first() {
        let mut f = CountingBloomFilter::with_counters(3, 1).unwrap();
        f.set(0, 3);
        f.set(1, 12);
        f.set(2, 15);
        assert_eq!(f.nibbles, vec![0xc3, 0x0f]);
        assert_eq!(
            (f.counter(0), f.counter(1), f.counter(2), f.counter(3)),
            (Some(3), Some(12), Some(15), None)
        );
        f.set(1, 0);
        assert_eq!(f.nibbles, vec![0x03, 0x0f]);
    }

    #[test]
    fn distinct_positions_drop_repeats() {
        // Two counters and 5 probes: at most 2 distinct positions.
        let d = DistinctPositions::new(KeyHash::new(7, 3), 5, 2);
        let mut v = d.as_slice().to_vec();
        v.sort_unstable();
        v.dedup();
        assert_eq!(v.len(), d.as_slice().len());
        assert!(d.as_slice().len() <= 2);
        // Past 16 probes the positions live on the heap; same rule.
        let d = DistinctPositions::new(KeyHash::new(7, 3), 40, 10);
        let mut v = d.as_slice().to_vec();
        v.sort_unstable();
        v.dedup();
        assert_eq!(v.len(), d.as_slice().len());
        assert!(!d.large.is_empty() && d.as_slice().len() <= 10);
        let all: std::collections::BTreeSet<u64> = KeyHash::new(7, 3).positions(40, 10).collect();
        assert_eq!(v, all.into_iter().collect::<Vec<_>>());
    }
}
