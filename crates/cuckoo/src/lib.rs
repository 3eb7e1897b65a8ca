//! A cuckoo filter (Fan, Andersen, Kaminsky, Mitzenmacher 2014, "Cuckoo Filter: Practically
//! Better Than Bloom") for any target FPR, with deletes, and an insert that never loses a key
//! it accepted.
//!
//! # Design
//!
//! - **Buckets of 4 slots**, each slot an `f`-bit fingerprint with
//!   `f = ceil(log2(2·4/p))` ([`math::cuckoo_fingerprint_bits`]): 9 bits at 3 %, 10 at 1 %,
//!   13 at 0.1 %. The slots are bit-packed back to back in `u64` words ([`BucketTable`]), so
//!   any `f` from 2 to 32 costs exactly `f` bits per slot.
//! - **No power-of-two table**: `ceil(n / (4 · 0.95))` buckets ([`math::cuckoo_buckets`]), so
//!   the table costs `f · 4 · ceil(n/3.8) / n` bits per item: `f/0.95` (10.53 at 1 %, 13.68 at
//!   0.1 %, 9.47 at 3 %) plus less than one bucket of rounding (`< 4f/n`, under 0.1 % of
//!   `f/0.95` once `n ≥ 3800`); the heap adds < 64 bits of word rounding. Small `n` pays for
//!   the one bucket it needs (1 item at 1 %: 40 table bits).
//! - **Partial-key cuckoo hashing for any bucket count.** A key hashes once ([`KeyHash`]):
//!   its first bucket is `i1 = fastrange(h1, N)`, its fingerprint `fp = 1 + fastrange(h2,
//!   2^f − 1)`, uniform over the non-zero values. Fan et al. take the alternate bucket as
//!   `i ⊕ hash(fp)`, which is an involution only when `N` is a power of two. Here
//!   `alt(i, fp) = (H(fp) − i) mod N` with `H(fp) = fastrange(fmix64(fp), N)`: for any `N`,
//!   `alt(alt(i, fp), fp) = H − (H − i) = i (mod N)`, so a fingerprint moves between its two
//!   buckets knowing only where it is and what it is — relocation never needs the key.
//! - **Fingerprint 0 means "empty"** ([`EMPTY`]); stored fingerprints are `1..2^f`. This costs
//!   one of `2^f` values: a slot matches a non-member with probability `1/(2^f − 1)` rather than
//!   `2^-f` (0.1 % relative at `f = 10`), and [`expected_fpr`](CuckooFilter::expected_fpr)
//!   uses the former ([`math::cuckoo_fpr_nonzero`]).
//! - **Lookup touches at most two buckets**, each one read of `4f` bits (for `f ≤ 16`).
//! - **Insert with bounded kicks, undone on failure.** If both buckets are full, a random
//!   resident (seeded from the key's hash, so inserts are deterministic) is kicked to its
//!   alternate bucket, up to [`MAX_KICKS`] times. The path is recorded (one slot index per
//!   kick; buckets are recomputed with the involution), and if no empty slot turns up the
//!   kicks are undone in reverse: the table is bit-for-bit what it was, insert returns
//!   [`Error::Full`], and **every key accepted before still tests positive**. Later inserts
//!   may still succeed where their own buckets have room.
//! - **Deletes** remove one copy of the fingerprint from one of the two buckets. A key
//!   inserted twice is stored twice and stays present after one delete.
//!
//! # Repeated inserts (hot keys)
//!
//! [`insert`](CuckooFilter::insert) is a multiset insert: every accepted call stores one more
//! copy of the key's fingerprint, and kicks only ever move a fingerprint between its own two
//! buckets, so a key's copies all live there. The rule:
//!
//! - **At most [`MAX_COPIES`] = 8 copies of one key** (of one fingerprint in one pair of
//!   buckets; 4 when the key's two buckets are the same one). An insert that finds both of
//!   its buckets full and every slot holding its own fingerprint is refused at once with
//!   [`Error::TooManyCopies`] — two bucket reads, no kicks (a kick sequence could only move
//!   the copies back and forth). The filter is unchanged and the key tests positive.
//! - So a key inserted a million times costs 8 slots and a million O(1) calls: the table
//!   never grows (it cannot), no insert walks a kick path for a hot key, and 8 removes take
//!   it out. **`remove` undoes exactly one accepted insert**: a key accepted `c` times (`c ≤
//!   8`) tests positive until it has been removed `c` times; refused inserts stored nothing
//!   and must not be removed.
//! - Below 8 copies a repeat is an ordinary insert: it may kick residents to make room for
//!   its copy. In a full table (`Error::Full` for new keys) a repeat whose buckets are full
//!   but not all its own walks the kick path like any insert and is refused with
//!   [`Error::Full`] after up to [`MAX_KICKS`] kicks: refusing it at once would also refuse,
//!   as "copies", new keys that merely share a fingerprint with a resident (false
//!   positives), and a caller that then removed such a key would take another key's trace.
//! - Copies take slots, so a stream heavy in repeats fills the table with copies: with
//!   [`insert_unique`](CuckooFilter::insert_unique) (one lookup, insert only if the key tests
//!   negative) a "seen" filter holds one copy per key and fills like one of distinct keys.
//!
//! # The deletion hazard
//!
//! Only remove keys you inserted. A key that was never inserted but tests positive (a false
//! positive, probability ≈ the FPR) shares its fingerprint with a stored key in one of its
//! buckets; removing it deletes that other key's fingerprint, and the other key may then test
//! negative — a false negative, the same hazard as in a counting Bloom filter. `remove`
//! refuses keys that test negative (returns `false`, changes nothing) but cannot detect the
//! false-positive case.
//!
//! # Example
//!
//! ```
//! use bloomlab_cuckoo::CuckooFilter;
//! use bloomlab_core::Error;
//!
//! let n = 100_000u64;
//! let mut f = CuckooFilter::with_fpr(n, 0.01)?;
//! assert_eq!(f.fingerprint_bits(), 10);
//! assert_eq!(f.num_buckets(), 26_316); // ceil(n / 3.8): no power-of-two rounding
//! for i in 0..n {
//!     f.insert(&i)?;
//! }
//! // 10.53 table bits per item = f / 0.95, plus less than one bucket of rounding.
//! let table_bpi = f.table_bits() as f64 / n as f64;
//! assert!(table_bpi <= 10.0 / 0.95 + 40.0 / n as f64, "{table_bpi}");
//! assert!((0..n).all(|i| f.might_contain(&i))); // no false negatives
//!
//! // 10^6 non-members: the formula at this load is 0.74 %; the count stays within 5σ.
//! let probes = 1_000_000u64;
//! let fp = (n..n + probes).filter(|i| f.might_contain(i)).count() as f64;
//! let e = f.expected_fpr();
//! assert!((e - 0.00740).abs() < 0.0001, "{e}");
//! let sigma = (probes as f64 * e * (1.0 - e)).sqrt();
//! assert!((fp - probes as f64 * e).abs() < 5.0 * sigma, "{fp} vs {e}");
//!
//! // Deletes: a key inserted twice stays present after one delete.
//! f.insert("twice")?;
//! f.insert("twice")?;
//! assert!(f.remove("twice"));
//! assert!(f.might_contain("twice"));
//! assert!(f.remove("twice"));
//!
//! // A hot key: 8 copies at most, the 9th refused at once with a typed error.
//! let mut g = CuckooFilter::with_fpr(1_000, 0.01)?;
//! for _ in 0..8 {
//!     g.insert("hot")?;
//! }
//! assert_eq!(g.copies("hot"), 8);
//! assert_eq!(g.insert("hot"), Err(Error::TooManyCopies(8)));
//! assert_eq!(g.insert_unique("hot"), Ok(false)); // set semantics: present, nothing stored
//! for _ in 0..8 {
//!     assert!(g.remove("hot"));
//! }
//! assert_eq!((g.copies("hot"), g.len()), (0, 0));
//!
//! // Fill past capacity: inserts eventually fail, and nothing accepted is ever lost.
//! let mut accepted = n;
//! let mut i = n;
//! while f.insert(&i).is_ok() {
//!     i += 1;
//!     accepted += 1;
//! }
//! assert!(matches!(f.insert(&i), Err(Error::Full(_))));
//! assert!(f.load() >= 0.94, "first failure at load {}", f.load());
//! assert!((0..accepted).all(|k| f.might_contain(&k)));
//! # Ok::<(), bloomlab_core::Error>(())
//! ```
//!
//! # no_std
//!
//! Without its default `std` feature the crate is `#![no_std]` and needs only `alloc`, with nothing
//! left out; the `f64` functions of the sizing formulas then come from `libm`
//! (`bloomlab_core::math::float` says how that can differ).
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

use alloc::{format, string::ToString, vec::Vec};

extern crate alloc;

pub mod math;

mod table;

use core::fmt;

use bloomlab_core::error::{DecodeError, Error, Result};
use bloomlab_core::format::{self, EnvelopeWriter, Reader, Variant};
use bloomlab_core::hash::{HashScheme, KeyHash, Xxh3Scheme, fastrange};
use bloomlab_core::meta::{FilterCore, Meta};
use bloomlab_core::{Key, RemovableFilter, filter_glue};

pub use table::{BUCKET_SIZE, BucketTable, EMPTY, MAX_FINGERPRINT_BITS, MIN_FINGERPRINT_BITS};

/// Load the table is sized for: `ceil(n / (4 · 0.95))` buckets for `n` items. With 4-slot
/// buckets and [`MAX_KICKS`] kicks the first failed insert comes at ≈ 95–96 % load.
pub const DESIGN_LOAD: f64 = 0.95;

/// Kicks an insert tries before it gives up (and undoes them).
///
/// Fan et al.'s reference code uses 500. Measured here (`cargo run --release -p bloomlab-lab --example cuckoo_fill` and a 12-stream
/// sweep at 10^6 items, 1 % target): with 500 the first failure came at a median load of
/// 96.0 % but as early as 94.96 % for one key stream — below the 95 % design load; with 1000
/// the median is 96.8 % and the lowest 96.5 % (also 96.5 % at 10^7 items). A failed insert
/// costs at most 2 × 1000 slot writes.
pub const MAX_KICKS: usize = 1000;

/// Most copies of one key's fingerprint the filter keeps: both of the key's buckets full of
/// it (`2 ·` [`BUCKET_SIZE`]; `BUCKET_SIZE` when the two buckets are one). Past it an insert
/// is refused with [`Error::TooManyCopies`] before any kick (see the crate docs).
pub const MAX_COPIES: u32 = 2 * BUCKET_SIZE;

/// A cuckoo filter with `f`-bit fingerprints in 4-slot buckets, generic over the hash scheme.
///
/// `len()` is the number of fingerprints stored: successful inserts (repeats included) minus
/// successful removals.
#[derive(Clone)]
pub struct CuckooFilter<S: HashScheme = Xxh3Scheme> {
    table: BucketTable,
    meta: Meta<S>,
}

use bloomlab_core::hash::{fmix64, splitmix64 as splitmix};

bloomlab_core::default_scheme_constructors! {
    impl CuckooFilter {
        /// Size for `expected_items` at false-positive rate `fpr`: `f = ceil(log2(8/p))`
        /// fingerprint bits and `ceil(n / 3.8)` buckets.
        ///
        /// Errors: `n = 0`, `p` not in (0, 1), a size that does not fit in memory, or a `p` so
        /// small that `f` exceeds [`MAX_FINGERPRINT_BITS`] (`p` below ≈ 1.9·10^-9).
        fn with_fpr(expected_items: u64, fpr: f64) = with_fpr_and_scheme;

        /// Size for `expected_items` with `fingerprint_bits`-bit fingerprints (2 to 32).
        fn with_fingerprint_bits(expected_items: u64, fingerprint_bits: u32) = with_fingerprint_bits_and_scheme;

        /// Decode the checked, versioned format written by [`to_bytes`](Self::to_bytes).
        fn from_bytes(bytes: &[u8]) = from_bytes_with_scheme;
    }
}

impl<S: HashScheme> CuckooFilter<S> {
    /// [`with_fpr`](CuckooFilter::with_fpr) with a chosen hash scheme.
    pub fn with_fpr_and_scheme(expected_items: u64, fpr: f64, scheme: S) -> Result<Self> {
        bloomlab_core::math::validate_items(expected_items)?;
        let f = math::cuckoo_fingerprint_bits(fpr, BUCKET_SIZE)?;
        let mut filter = Self::with_fingerprint_bits_and_scheme(expected_items, f, scheme)?;
        filter.meta.set_target_fpr(Some(fpr));
        Ok(filter)
    }

    /// [`with_fingerprint_bits`](CuckooFilter::with_fingerprint_bits) with a chosen scheme.
    pub fn with_fingerprint_bits_and_scheme(
        expected_items: u64,
        fingerprint_bits: u32,
        scheme: S,
    ) -> Result<Self> {
        let buckets = math::cuckoo_buckets(expected_items, BUCKET_SIZE, DESIGN_LOAD)?;
        Ok(CuckooFilter {
            table: BucketTable::new(buckets, fingerprint_bits)?,
            meta: Meta::new(expected_items, None, scheme),
        })
    }

    /// Assemble from parts, checking what a decoder checks: capacity ≥ 1, a valid target
    /// FPR, and a count equal to the number of occupied slots.
    pub fn from_parts(
        table: BucketTable,
        count: u64,
        capacity: u64,
        target_fpr: Option<f64>,
        scheme: S,
    ) -> Result<Self, DecodeError> {
        if capacity == 0 {
            return Err(DecodeError::field("capacity", "must be at least 1"));
        }
        format::validate_optional_fpr(target_fpr)?;
        let occupied = table.occupied();
        if occupied != count {
            return Err(DecodeError::field(
                "count",
                format!("{count} items recorded but {occupied} slots occupied"),
            ));
        }
        Ok(CuckooFilter {
            table,
            meta: Meta::new(capacity, target_fpr, scheme).with_count(count),
        })
    }

    /// The fingerprint of a hashed key: uniform over `1..2^f` (0 is [`EMPTY`]).
    #[inline(always)]
    fn fingerprint(&self, h: KeyHash) -> u32 {
        let values = (1u64 << self.table.fingerprint_bits()) - 1;
        1 + fastrange(h.h2, values) as u32
    }

    /// The alternate bucket of a fingerprint in bucket `i`: `(H(fp) − i) mod N`, an involution
    /// for every `N` (see the crate docs).
    #[inline(always)]
    pub fn alt_bucket(&self, i: u64, fp: u32) -> u64 {
        let n = self.table.num_buckets();
        let h = fastrange(fmix64(u64::from(fp)), n);
        // (h − i) mod n without a branch: n ≤ 2^61 (the table has at most 2^64 bits), so
        // h − i fits an i64 and its sign bit says whether to add n.
        let d = h.wrapping_sub(i);
        d.wrapping_add(n & ((d as i64 >> 63) as u64))
    }

    /// Where a hashed key lives: `(fingerprint, first bucket, second bucket)`.
    #[inline(always)]
    fn locate(&self, h: KeyHash) -> (u32, u64, u64) {
        let fp = self.fingerprint(h);
        let i1 = fastrange(h.h1, self.table.num_buckets());
        (fp, i1, self.alt_bucket(i1, fp))
    }

    /// Insert a key (one more copy if it is there already). `Err(Error::TooManyCopies)` when
    /// both of its buckets hold nothing but its fingerprint ([`MAX_COPIES`], found before any
    /// kick); `Err(Error::Full)` when no slot could be freed within [`MAX_KICKS`] kicks. The
    /// filter is then unchanged.
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<()> {
        let h = self.hash_key(key);
        self.insert_hash(h)
    }

    /// Insert a key only if it tests negative: `Ok(true)` inserted, `Ok(false)` it maybe was
    /// there already and nothing changed (one hash, one lookup). A "seen" filter fed through
    /// it holds one copy per key whatever the stream repeats; errors as
    /// [`insert`](Self::insert).
    #[inline]
    pub fn insert_unique<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool> {
        let h = self.hash_key(key);
        if self.might_contain_hash(h) {
            return Ok(false);
        }
        self.insert_hash(h).map(|()| true)
    }

    /// Slots holding the key's fingerprint in its two buckets: the copies stored of it (and of
    /// any other key with the same fingerprint and buckets), at most [`MAX_COPIES`].
    pub fn copies<K: Key + ?Sized>(&self, key: &K) -> u32 {
        let (fp, i1, i2) = self.locate(self.hash_key(key));
        let second = if i2 == i1 {
            0
        } else {
            self.table.count(i2, fp)
        };
        self.table.count(i1, fp) + second
    }

    /// Insert a key already hashed with this filter's scheme.
    pub fn insert_hash(&mut self, h: KeyHash) -> Result<()> {
        let (fp, i1, i2) = self.locate(h);
        if self.table.insert_into_empty(i1, fp) || self.table.insert_into_empty(i2, fp) {
            self.meta.record_insert();
            return Ok(());
        }
        self.kick(h, fp, i1, i2)
    }

    #[cold]
    fn kick(&mut self, h: KeyHash, fp: u32, i1: u64, i2: u64) -> Result<()> {
        // Both buckets are full. If every slot holds this fingerprint, a kick could only move a
        // copy to the other bucket and back: refuse now, typed, without walking.
        let (copies, room) = if i1 == i2 {
            (self.table.count(i1, fp), BUCKET_SIZE)
        } else {
            (
                self.table.count(i1, fp) + self.table.count(i2, fp),
                MAX_COPIES,
            )
        };
        if copies == room {
            return Err(Error::TooManyCopies(copies));
        }
        let mut rng = h.h1 ^ h.h2.rotate_left(29);
        let mut path = [0u8; MAX_KICKS];
        let mut bucket = if splitmix(&mut rng) & 1 == 0 { i1 } else { i2 };
        let mut homeless = fp;
        for step in path.iter_mut() {
            let slot = (splitmix(&mut rng) % u64::from(BUCKET_SIZE)) as u32;
            *step = slot as u8;
            let evicted = self.table.get(bucket, slot);
            self.table.set(bucket, slot, homeless);
            homeless = evicted;
            bucket = self.alt_bucket(bucket, homeless);
            if self.table.insert_into_empty(bucket, homeless) {
                self.meta.record_insert();
                return Ok(());
            }
        }
        // Undo in reverse. Invariant: `homeless` was evicted from (b_j, path[j]) where
        // b_j = alt(bucket, homeless), and that slot now holds what step j wrote there.
        for &slot in path.iter().rev() {
            let back = self.alt_bucket(bucket, homeless);
            let written = self.table.get(back, u32::from(slot));
            self.table.set(back, u32::from(slot), homeless);
            homeless = written;
            bucket = back;
        }
        debug_assert_eq!(homeless, fp, "the undo must end with the new fingerprint");
        Err(Error::Full(format!(
            "no free slot within {MAX_KICKS} kicks at load {:.4} ({} of {} slots); \
             the filter is unchanged",
            self.load(),
            self.meta.count(),
            self.table.slots()
        )))
    }

    /// `false`: the key was definitely never inserted (or was removed). `true`: maybe.
    #[inline(always)]
    pub fn might_contain<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.might_contain_hash(self.hash_key(key))
    }

    /// Query with a hash computed by this filter's scheme. Reads at most two buckets.
    #[inline]
    pub fn might_contain_hash(&self, h: KeyHash) -> bool {
        let (fp, i1, i2) = self.locate(h);
        // Both buckets unconditionally (`|`, not `||`): the two reads overlap in memory.
        self.table.contains(i1, fp) | self.table.contains(i2, fp)
    }

    /// Remove one copy of a key. Returns `false`, changing nothing, if the key tests negative.
    /// See the crate docs for the hazard of removing a key that was never inserted.
    #[inline]
    pub fn remove<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        let h = self.hash_key(key);
        self.remove_hash(h)
    }

    /// [`remove`](Self::remove) with a precomputed hash.
    pub fn remove_hash(&mut self, h: KeyHash) -> bool {
        let (fp, i1, i2) = self.locate(h);
        if self.table.remove(i1, fp) || self.table.remove(i2, fp) {
            self.meta.record_remove();
            true
        } else {
            false
        }
    }

    /// Fingerprint width `f`.
    pub fn fingerprint_bits(&self) -> u32 {
        self.table.fingerprint_bits()
    }

    /// Number of buckets `N`.
    pub fn num_buckets(&self) -> u64 {
        self.table.num_buckets()
    }

    /// Number of slots, `4N`.
    pub fn slots(&self) -> u64 {
        self.table.slots()
    }

    /// Bits the slots occupy, `4N · f` (the heap adds < 64 bits of word rounding).
    pub fn table_bits(&self) -> u64 {
        self.table.bits()
    }

    /// The bucket table.
    pub fn table(&self) -> &BucketTable {
        &self.table
    }

    bloomlab_core::sizing_accessors!(len, hash_key);

    /// Fraction of slots occupied, `len / 4N`.
    pub fn load(&self) -> f64 {
        self.meta.count() as f64 / self.table.slots() as f64
    }

    /// FPR the formula predicts at the current load: `1 − (1 − 1/(2^f − 1))^(8·load)`
    /// ([`math::cuckoo_fpr_nonzero`]).
    pub fn expected_fpr(&self) -> f64 {
        math::cuckoo_fpr_nonzero(self.fingerprint_bits(), BUCKET_SIZE, self.load())
    }

    /// Remove every key.
    pub fn clear(&mut self) {
        self.table.clear();
        self.meta.reset_count();
    }

    /// Encode in the checked, versioned envelope ([`bloomlab_core::format`]) with this
    /// payload (little-endian): `num_buckets: u64 | fingerprint_bits: u32 | bucket_size: u32
    /// (= 4) | count: u64 | capacity: u64 | target_fpr: f64 (0 = none) |
    /// ceil(4·N·f / 8) bytes of bit-packed slots` (slot `s` at bits `s·f .. (s+1)·f`, least
    /// significant first; bits past the last slot are zero).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = EnvelopeWriter::new(
            Variant::Cuckoo,
            self.meta.descriptor(),
            40 + self.table.byte_len(),
        );
        w.u64(self.table.num_buckets())
            .u32(self.table.fingerprint_bits())
            .u32(BUCKET_SIZE)
            .u64(self.meta.count())
            .u64(self.meta.capacity())
            .f64(format::encode_optional_fpr(self.meta.target_fpr()));
        self.table.write_le_bytes(w.buffer());
        w.finish()
    }

    /// Decode [`to_bytes`](Self::to_bytes) output, probing with `scheme`. Refuses another
    /// scheme or key, damaged bytes, any invalid field, and a count that differs from the
    /// number of occupied slots. Never panics.
    pub fn from_bytes_with_scheme(bytes: &[u8], scheme: S) -> Result<Self> {
        let payload = format::open_expecting(bytes, Variant::Cuckoo, scheme.descriptor())?;
        let mut r = Reader::new(payload);
        let num_buckets = r.u64()?;
        let f = r.u32()?;
        let bucket_size = r.u32()?;
        if bucket_size != BUCKET_SIZE {
            return Err(DecodeError::field(
                "bucket_size",
                format!("must be {BUCKET_SIZE} (got {bucket_size})"),
            )
            .into());
        }
        let count = r.u64()?;
        let capacity = r.u64()?;
        let target = format::decode_optional_fpr(r.f64()?)?;
        let bits = table::table_bits(num_buckets, f)
            .map_err(|e| DecodeError::field("num_buckets", e.to_string()))?;
        let table_bytes = r.take_u64_len(bits.div_ceil(8))?;
        r.finish()?;
        let table = BucketTable::from_le_bytes(table_bytes, num_buckets, f)?;
        Ok(Self::from_parts(table, count, capacity, target, scheme)?)
    }
}

// Its fill is the slots' load; its FPR, the formula at that load (it knows its occupancy
// exactly); it estimates no count (the count is the answer).
bloomlab_core::declared! {
    CuckooFilter: bloomlab_core::Declaration {
        variant: Variant::Cuckoo,
        versions: &[format::FORMAT_VERSION],
        changes: bloomlab_core::declare::Changes::Fixed,
        deletes: true,
        no_union: Some(
            "a cuckoo filter's buckets depend on the order of inserts and may overflow, so two do not merge exactly",
        ),
        design: "f = ceil(log2(8/p)) bits packed, ceil(n/3.8) buckets of 4, 1000 kicks undone on failure",
    };
    sized: with_fpr_and_scheme,
    fill: load,
}

impl<S: HashScheme> FilterCore for CuckooFilter<S> {
    bloomlab_core::key_methods!(fallible);
    fn size_in_bytes(&self) -> usize {
        self.table.size_in_bytes()
    }
    fn table_bits(&self) -> u64 {
        self.table.bits()
    }
    fn hashes(&self) -> u32 {
        self.table.fingerprint_bits()
    }
    fn expected_fpr(&self) -> f64 {
        CuckooFilter::expected_fpr(self)
    }
    fn same_table(&self, other: &Self) -> bool {
        self.table == other.table
    }
    fn debug_shape(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("num_buckets", &self.table.num_buckets())
            .field("fingerprint_bits", &self.table.fingerprint_bits());
    }
    fn debug_state(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("load", &self.load());
    }
}

filter_glue!(CuckooFilter, Cuckoo);

impl<S: HashScheme> RemovableFilter for CuckooFilter<S> {
    fn remove_bytes(&mut self, key: &[u8]) -> bool {
        self.remove(key)
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
        num_buckets: u64,
        fingerprint_bits: u32,
        count: u64,
        capacity: u64,
        target_fpr: Option<f64>,
        scheme: SchemeDescriptor,
        words: W,
    }

    impl<S: HashScheme> Serialize for CuckooFilter<S> {
        fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
            Repr {
                num_buckets: self.table.num_buckets(),
                fingerprint_bits: self.table.fingerprint_bits(),
                count: self.meta.count(),
                capacity: self.meta.capacity(),
                target_fpr: self.meta.target_fpr(),
                scheme: self.meta.descriptor(),
                words: self.table.words(),
            }
            .serialize(s)
        }
    }

    impl<'de, S: HashScheme + Default> Deserialize<'de> for CuckooFilter<S> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            deserialize_checked(
                d,
                |r: &Repr<Vec<u64>>| r.scheme,
                |r: Repr<Vec<u64>>, scheme| {
                    let table =
                        BucketTable::from_words(r.words, r.num_buckets, r.fingerprint_bits)?;
                    CuckooFilter::from_parts(table, r.count, r.capacity, r.target_fpr, scheme)
                },
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bloomlab_core::Filter;

    #[test]
    fn alt_bucket_is_an_involution_for_any_bucket_count() {
        for n in [1u64, 2, 3, 5, 26_316, 1 << 20, (1 << 20) + 7] {
            let f = CuckooFilter::with_fingerprint_bits(n * 4 * 95 / 100 + 1, 10).unwrap();
            let n = f.num_buckets();
            for i in (0..n).step_by((n / 97).max(1) as usize) {
                for fp in [1u32, 2, 3, 511, 1023] {
                    let j = f.alt_bucket(i, fp);
                    assert!(j < n);
                    assert_eq!(f.alt_bucket(j, fp), i, "n={n} i={i} fp={fp}");
                }
            }
        }
    }

    #[test]
    fn fingerprints_are_never_zero() {
        let f = CuckooFilter::with_fingerprint_bits(100, 2).unwrap();
        for h in [0u64, 1, u64::MAX, 1 << 63, (1 << 63) - 1] {
            let fp = f.fingerprint(KeyHash::new(0, h));
            assert!((1..=3).contains(&fp), "{fp}");
        }
    }

    #[test]
    fn failed_insert_leaves_the_table_unchanged() {
        // One bucket (4 slots): every key's two buckets are bucket 0.
        let mut f = CuckooFilter::with_fpr(1, 0.01).unwrap();
        assert_eq!(f.num_buckets(), 1);
        for i in 0..4u32 {
            f.insert(&i).unwrap();
        }
        let before = f.clone();
        assert!(matches!(f.insert(&99u32), Err(Error::Full(_))));
        assert_eq!(f, before);
        assert!((0..4u32).all(|i| f.might_contain(&i)));
    }

    #[test]
    fn sizing_follows_the_math_module() {
        let f = CuckooFilter::with_fpr(1_000_000, 0.001).unwrap();
        assert_eq!(f.fingerprint_bits(), 13);
        assert_eq!(
            f.num_buckets(),
            math::cuckoo_buckets(1_000_000, 4, 0.95).unwrap()
        );
        assert_eq!(f.params().table_bits, f.num_buckets() * 4 * 13);
    }
}
