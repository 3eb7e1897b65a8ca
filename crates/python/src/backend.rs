//! What each filter does with a [`KeyView`]: the glue between the Python classes and the
//! Rust filters.

use bloomlab_blocked::BlockedBloomFilter;
use bloomlab_classic::BloomFilter;
use bloomlab_core::{Filter, Result};
use bloomlab_counting::CountingBloomFilter;
use bloomlab_cuckoo::CuckooFilter;
use bloomlab_expandable::ExpandableFilter;
use bloomlab_jvm::{GuavaBloomFilter, SparkBloomFilter};
use bloomlab_ribbon::RibbonFilter;
use bloomlab_sbbf::Sbbf;
use bloomlab_scalable::ScalableBloomFilter;

use crate::keys::{Batch, KeyView, Kind};

/// Lookups, one key or a batch.
pub trait Lookup: Filter {
    /// Whether the key may have been inserted.
    fn contains(&self, k: KeyView<'_>) -> bool {
        self.might_contain_bytes(k.bytes)
    }

    /// [`contains`](Self::contains) for every key of `keys`, into `out` (same length).
    fn contains_batch(&self, keys: &Batch, out: &mut [bool]) {
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.contains(keys.get(i));
        }
    }
}

/// Inserts, one key or a batch.
pub trait Insert: Lookup {
    /// Insert the key.
    fn add(&mut self, k: KeyView<'_>) -> Result<()> {
        match self.insert_bytes(k.bytes) {
            // The filter already holds as many copies of this key as it keeps (the cuckoo
            // and expandable filters): it is unchanged and the key tests positive, as a set's
            // `add` of a present key leaves the set.
            Err(bloomlab_core::Error::TooManyCopies(_)) => Ok(()),
            other => other,
        }
    }

    /// Insert every key of `keys`, in order; stops at the first error.
    fn add_batch(&mut self, keys: &Batch) -> Result<()> {
        for i in 0..keys.len() {
            self.add(keys.get(i))?;
        }
        Ok(())
    }
}

/// Removal, for the variants that delete.
pub trait Remove: Insert {
    /// Remove one copy of the key; `false` if it was not there.
    fn remove_key(&mut self, k: KeyView<'_>) -> bool;
}

/// The batched calls of the filters that have them: ints as `[u8; 8]`, other keys as slices.
macro_rules! batched_lookup {
    ($ty:ty) => {
        impl Lookup for $ty {
            fn contains_batch(&self, keys: &Batch, out: &mut [bool]) {
                let done = match keys {
                    Batch::Ints(v) => self.might_contain_batch(v, out),
                    Batch::Mixed { .. } => self.might_contain_batch(&keys.slices(), out),
                };
                if done.is_err() {
                    // Only a length mismatch fails, and the caller sizes `out` to the keys.
                    for (i, o) in out.iter_mut().enumerate() {
                        *o = self.contains(keys.get(i));
                    }
                }
            }
        }
    };
}

batched_lookup!(BlockedBloomFilter);
batched_lookup!(BloomFilter);
batched_lookup!(Sbbf);
batched_lookup!(RibbonFilter);

impl Insert for BlockedBloomFilter {
    fn add_batch(&mut self, keys: &Batch) -> Result<()> {
        match keys {
            Batch::Ints(v) => self.insert_batch(v),
            Batch::Mixed { .. } => self.insert_batch(&keys.slices()),
        }
        Ok(())
    }
}

impl Insert for BloomFilter {
    fn add_batch(&mut self, keys: &Batch) -> Result<()> {
        match keys {
            Batch::Ints(v) => self.insert_batch(v),
            Batch::Mixed { .. } => self.insert_batch(&keys.slices()),
        }
        Ok(())
    }
}

impl Insert for Sbbf {}

impl Lookup for CuckooFilter {}
impl Insert for CuckooFilter {}
impl Remove for CuckooFilter {
    fn remove_key(&mut self, k: KeyView<'_>) -> bool {
        CuckooFilter::remove(self, k.bytes)
    }
}

impl Lookup for CountingBloomFilter {}
impl Insert for CountingBloomFilter {}
impl Remove for CountingBloomFilter {
    fn remove_key(&mut self, k: KeyView<'_>) -> bool {
        CountingBloomFilter::remove(self, k.bytes)
    }
}

impl Lookup for ExpandableFilter {}
impl Insert for ExpandableFilter {}
impl Remove for ExpandableFilter {
    fn remove_key(&mut self, k: KeyView<'_>) -> bool {
        ExpandableFilter::remove(self, k.bytes)
    }
}

impl Lookup for ScalableBloomFilter {}
impl Insert for ScalableBloomFilter {}

/// Spark's filters hash each kind of key with its own method.
impl Lookup for SparkBloomFilter {
    fn contains(&self, k: KeyView<'_>) -> bool {
        match k.kind {
            Kind::Int => self.might_contain_long(k.as_i64()),
            Kind::Str => self.might_contain_string(k.as_str()),
            Kind::Bytes => self.might_contain_binary(k.bytes),
        }
    }
}

impl Insert for SparkBloomFilter {
    fn add(&mut self, k: KeyView<'_>) -> Result<()> {
        match k.kind {
            Kind::Int => self.put_long(k.as_i64()),
            Kind::Str => self.put_string(k.as_str()),
            Kind::Bytes => self.put_binary(k.bytes),
        };
        Ok(())
    }
}

/// Guava's funnels: `longFunnel`, `stringFunnel(UTF_8)`, `byteArrayFunnel`.
impl Lookup for GuavaBloomFilter {
    fn contains(&self, k: KeyView<'_>) -> bool {
        match k.kind {
            Kind::Int => self.might_contain_long(k.as_i64()),
            Kind::Str => self.might_contain_string(k.as_str()),
            Kind::Bytes => self.might_contain_bytes(k.bytes),
        }
    }
}

impl Insert for GuavaBloomFilter {
    fn add(&mut self, k: KeyView<'_>) -> Result<()> {
        match k.kind {
            Kind::Int => self.put_long(k.as_i64()),
            Kind::Str => self.put_string(k.as_str()),
            Kind::Bytes => self.put_bytes(k.bytes),
        };
        Ok(())
    }
}

/// Exact unions: the result answers `True` for every key either filter holds, and is the
/// filter that inserting both key sets would have built.
pub trait Union: Sized {
    /// Merge `other` into `self`.
    fn union_with(&mut self, other: &Self) -> Result<()>;
}

macro_rules! union_by {
    ($ty:ty, $method:ident) => {
        impl Union for $ty {
            fn union_with(&mut self, other: &Self) -> Result<()> {
                <$ty>::$method(self, other)
            }
        }
    };
}

union_by!(BlockedBloomFilter, union);
union_by!(BloomFilter, union);
union_by!(Sbbf, union);
union_by!(SparkBloomFilter, merge_in_place);
union_by!(GuavaBloomFilter, put_all);

/// A filter whose count of distinct keys can be estimated from its fill.
pub trait Estimate {
    /// The estimated number of distinct keys inserted.
    fn estimated_count(&self) -> f64;
}

macro_rules! estimate_by {
    ($ty:ty) => {
        impl Estimate for $ty {
            fn estimated_count(&self) -> f64 {
                self.estimated_len()
            }
        }
    };
}

estimate_by!(BlockedBloomFilter);
estimate_by!(BloomFilter);
estimate_by!(Sbbf);
estimate_by!(CountingBloomFilter);

impl Estimate for SparkBloomFilter {
    fn estimated_count(&self) -> f64 {
        bloomlab_jvm::sizing::approximate_element_count(
            self.cardinality(),
            self.bit_size(),
            self.num_hash_functions(),
        ) as f64
    }
}

impl Estimate for GuavaBloomFilter {
    fn estimated_count(&self) -> f64 {
        self.approximate_element_count() as f64
    }
}
