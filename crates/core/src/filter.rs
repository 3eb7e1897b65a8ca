//! The one small trait every filter implements, and the one for filters that can remove.
//!
//! # Static filters
//!
//! A static filter (the Ribbon filter, xorf's fuse filters in the harness) is built once from
//! the whole key set and cannot take a key later: adding one means solving its construction
//! again. It still implements [`Filter`], and its [`insert_bytes`](Filter::insert_bytes)
//! returns the typed [`Error::Static`](crate::Error::Static), changing nothing, rather than
//! the trait being split into a query side and an insert side. The reasons:
//!
//! - **Object safety and one collection.** Code that holds filters of several variants
//!   together holds them as `dyn Filter` — a `Vec<Box<dyn Filter>>` (the facade's example),
//!   `inspect`'s decoded filter (`bloomlab_uses::any::AnyFilter::as_filter`) — and asks
//!   every one the same questions (length, size, FPR, parameters, queries). With a split, a static filter would be a `dyn Query` and a
//!   dynamic one a `dyn Query + Insert`, and every such place would need two paths or a
//!   downcast.
//! - **One trait to learn.** A user reads one trait; whether a variant takes inserts is
//!   stated by its docs, by its constructor (a static filter's is `build(keys, p)`, there
//!   is no empty one) and, if tried anyway, by a typed error that names the type — never a
//!   panic and never a silent no-op.
//! - **No new failure.** [`insert_bytes`](Filter::insert_bytes) already returns `Result`
//!   (a full cuckoo filter refuses a key), so callers already handle a refusal.
//!
//! The cost is that the compiler does not stop an insert into a static filter; the typed
//! error does, at run time, on the first try.

//! # What an insert returns
//!
//! One rule across the workspace: **an insert returns a `Result` exactly when it can be
//! refused**, and a refusal leaves the filter unchanged.
//!
//! - Through [`Filter`], every insert is `Result<()>`: `Err` is a refusal, typed — a full
//!   table ([`Error::Full`](crate::Error::Full)), a key held as often as the variant keeps it
//!   ([`Error::TooManyCopies`](crate::Error::TooManyCopies)), a static filter
//!   ([`Error::Static`](crate::Error::Static)).
//! - A variant's own `insert(&key)` follows the same rule. Where nothing can refuse a key (the
//!   classic, blocked, split-block and counting filters) it returns `bool`: `true` if the key
//!   was definitely new (one of its bits or counters was still zero), `false` if it may have
//!   been present. Where a key can be refused (cuckoo, scalable, expandable) it returns
//!   `Result<()>` with the refusal's reason.
//! - [`insert_unique_bytes`](Filter::insert_unique_bytes) (and each variant's
//!   `insert_unique`) is both: `Result<bool>`, `Ok(true)` inserted, `Ok(false)` maybe present
//!   and nothing changed, `Err` refused.
//!
use core::fmt;

use crate::declare::Hashes;
use crate::error::Result;
use crate::format::Variant;
use crate::hash::SchemeDescriptor;
use crate::key::Key;

/// An approximate-membership filter: it answers "definitely not" or "maybe".
///
/// Object-safe, so a harness can hold `Box<dyn Filter>`; generic conveniences for typed keys
/// live on `dyn Filter` and on each concrete type.
///
/// ```
/// use bloomlab_core::{Filter, Key};
/// fn count_maybes(f: &dyn Filter, keys: &[&str]) -> usize {
///     keys.iter().filter(|k| f.might_contain(*k)).count()
/// }
/// ```
pub trait Filter: fmt::Debug + Send + Sync {
    /// Add a key given as bytes. Fails only when a variant cannot take the key without losing
    /// another (a full cuckoo filter), already holds the most copies of this key it keeps (a
    /// deleting variant: [`Error::TooManyCopies`](crate::Error::TooManyCopies)), or never
    /// takes keys after its build (a static filter: [`Error::Static`](crate::Error::Static));
    /// the filter is then unchanged.
    fn insert_bytes(&mut self, key: &[u8]) -> Result<()>;

    /// `false` means the key was definitely never inserted; `true` means it maybe was.
    fn might_contain_bytes(&self, key: &[u8]) -> bool;

    /// Insert a key only if it tests negative (set semantics: one lookup, then at most one
    /// insert). `Ok(true)`: the key was definitely new and is now inserted; `Ok(false)`: it
    /// maybe was inserted before (or is a false positive) and the filter is unchanged.
    ///
    /// This is the call for a "seen" filter (dedup, a crawler's frontier, admission on second
    /// sight): a key that repeats a million times costs a million lookups and no memory, in
    /// every variant. With it a deleting filter holds at most one copy of a key, so one
    /// `remove` takes the key out (unless another key shares its trace). The errors are
    /// [`insert_bytes`](Self::insert_bytes)'s. Typed keys: `insert_unique` on `dyn Filter` and
    /// on the deleting variants (which hash the key once for both steps).
    fn insert_unique_bytes(&mut self, key: &[u8]) -> Result<bool> {
        if self.might_contain_bytes(key) {
            return Ok(false);
        }
        self.insert_bytes(key).map(|()| true)
    }

    /// Number of successful inserts (repeats included).
    fn len(&self) -> u64;

    /// No successful insert yet.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Heap bytes the filter's table occupies.
    fn size_in_bytes(&self) -> usize;

    /// Memory per inserted item in bits (`size_in_bytes · 8 / len`); infinite when empty.
    fn bits_per_item(&self) -> f64 {
        if self.len() == 0 {
            f64::INFINITY
        } else {
            self.size_in_bytes() as f64 * 8.0 / self.len() as f64
        }
    }

    /// The FPR the variant's own formula predicts at the current number of items.
    fn expected_fpr(&self) -> f64;

    /// The parameters the filter was built with.
    fn params(&self) -> FilterParams;
}

/// A filter that can also remove keys (counting and cuckoo).
///
/// Only remove keys you inserted: removing a key that was never inserted but happens to test
/// positive (a false positive) takes away another key's trace and can create false negatives.
/// Filters refuse keys that test negative, but cannot detect the false-positive case.
pub trait RemovableFilter: Filter {
    /// Remove one occurrence of a key. Returns `false`, changing nothing, if the key tests
    /// negative.
    fn remove_bytes(&mut self, key: &[u8]) -> bool;
}

/// What a filter was built with: enough to compare variants in one table.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FilterParams {
    /// Which variant.
    pub variant: Variant,
    /// Design capacity in items (the load the sizing was for).
    pub capacity: u64,
    /// Target FPR, if the filter was sized from one.
    pub target_fpr: Option<f64>,
    /// Size of the table in bits (bits, counters × 4, slots × fingerprint width…).
    pub table_bits: u64,
    /// Probes per key (k) for Bloom variants; fingerprint bits for cuckoo.
    pub hashes: u32,
    /// Hash scheme.
    pub scheme: SchemeDescriptor,
}

impl FilterParams {
    /// [`hashes`](Self::hashes), typed by what it counts for this variant
    /// ([`Variant::hashes`]): the `k` of a Bloom filter, a cuckoo-style table's fingerprint
    /// bits, a Ribbon filter's result bits.
    ///
    /// ```
    /// use bloomlab_core::{FilterParams, PerKey, Variant, Xxh3Scheme, HashScheme};
    ///
    /// let p = FilterParams {
    ///     variant: Variant::Cuckoo,
    ///     capacity: 1_000,
    ///     target_fpr: Some(0.01),
    ///     table_bits: 12_288,
    ///     hashes: 12,
    ///     scheme: Xxh3Scheme.descriptor(),
    /// };
    /// assert_eq!(p.per_key(), PerKey::FingerprintBits(12));
    /// ```
    pub fn per_key(&self) -> PerKey {
        match self.variant.hashes() {
            Hashes::Probes => PerKey::Probes(self.hashes),
            Hashes::FingerprintBits => PerKey::FingerprintBits(self.hashes),
            Hashes::ResultBits => PerKey::ResultBits(self.hashes),
        }
    }
}

/// [`FilterParams::hashes`] with its meaning: what a filter spends per key.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PerKey {
    /// Bit (or counter) positions probed per key: the `k` of a Bloom filter.
    Probes(u32),
    /// Bits of each stored fingerprint (cuckoo-style tables).
    FingerprintBits(u32),
    /// Bits of each key's result (the `r` of a Ribbon filter).
    ResultBits(u32),
}

impl dyn Filter + '_ {
    /// Insert a typed key (see [`Key`] for the encoding).
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<()> {
        key.with_key_bytes(|b| self.insert_bytes(b))
    }

    /// Query a typed key: `false` = definitely not inserted, `true` = maybe.
    pub fn might_contain<K: Key + ?Sized>(&self, key: &K) -> bool {
        key.with_key_bytes(|b| self.might_contain_bytes(b))
    }

    /// Insert a typed key only if it tests negative; see [`Filter::insert_unique_bytes`].
    pub fn insert_unique<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool> {
        key.with_key_bytes(|b| self.insert_unique_bytes(b))
    }
}

impl dyn RemovableFilter + '_ {
    /// Remove a typed key; see [`RemovableFilter::remove_bytes`].
    pub fn remove<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        key.with_key_bytes(|b| self.remove_bytes(b))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_key_names_what_each_variant_counts() {
        use crate::hash::{HashScheme, Xxh3Scheme};
        let params = |variant| FilterParams {
            variant,
            capacity: 10,
            target_fpr: None,
            table_bits: 64,
            hashes: 7,
            scheme: Xxh3Scheme.descriptor(),
        };
        let typed: Vec<PerKey> = Variant::ALL.iter().map(|&v| params(v).per_key()).collect();
        // Tag order: classic, blocked, counting, scalable, cuckoo, sbbf, ribbon, expandable.
        use PerKey::{FingerprintBits as F, Probes as P, ResultBits as R};
        assert_eq!(typed, [P(7), P(7), P(7), P(7), F(7), P(7), R(7), F(7)]);
    }
    use crate::HashScheme;

    /// An exact set behind the trait: answers only for the keys it holds.
    #[derive(Debug, Default)]
    struct Exact(std::collections::BTreeSet<Vec<u8>>, u64);

    impl Filter for Exact {
        fn insert_bytes(&mut self, key: &[u8]) -> Result<()> {
            self.0.insert(key.to_vec());
            self.1 += 1;
            Ok(())
        }
        fn might_contain_bytes(&self, key: &[u8]) -> bool {
            self.0.contains(key)
        }
        fn len(&self) -> u64 {
            self.1
        }
        fn size_in_bytes(&self) -> usize {
            0
        }
        fn expected_fpr(&self) -> f64 {
            0.0
        }
        fn params(&self) -> FilterParams {
            FilterParams {
                variant: Variant::Classic,
                capacity: 0,
                target_fpr: None,
                table_bits: 0,
                hashes: 0,
                scheme: crate::Xxh3Scheme.descriptor(),
            }
        }
    }

    #[test]
    fn insert_unique_inserts_only_keys_that_test_negative() {
        let mut set = Exact::default();
        let f: &mut dyn Filter = &mut set;
        assert!(f.insert_unique(&7u64).unwrap(), "absent: inserted");
        assert!(!f.insert_unique(&7u64).unwrap(), "present: left alone");
        assert!(f.insert_unique("x").unwrap());
        assert!(f.might_contain(&7u64) && f.might_contain("x") && !f.might_contain("y"));
        assert_eq!(f.len(), 2, "one insert per distinct key");
    }
}
