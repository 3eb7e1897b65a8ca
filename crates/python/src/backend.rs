//! What each filter does with a [`KeyView`]: the glue between the Python classes and the
//! Rust filters.
//!
//! The eight variants of the facade's list get these traits from `variants.rs` (one macro
//! over `bloomlab::for_each_variant!`); Spark's and Guava's filters, which hash each kind of
//! key their own way, implement them here.

use std::marker::PhantomData;

use bloomlab_core::{Filter, Key, RemovableFilter, Result};
use bloomlab_jvm::{GuavaBloomFilter, SparkBloomFilter};

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

/// Removal: `None` for a filter that cannot delete.
pub trait Remove {
    /// Remove one copy of the key: whether it was there, or `None` if the filter cannot
    /// delete keys at all.
    fn remove_key(&mut self, k: KeyView<'_>) -> Option<bool>;
}

/// Exact unions: the result answers `True` for every key either filter holds, and is the
/// filter that inserting both key sets would have built.
pub trait Union: Sized {
    /// Merge `other` into `self`.
    fn union_with(&mut self, other: &Self) -> Result<()>;
}

/// A filter whose count of distinct keys can be estimated from its fill.
pub trait Estimate {
    /// The estimated number of distinct keys inserted; `None` where the filter has none.
    fn estimated_count(&self) -> Option<f64>;
}

/// How a class's filter turns into bytes and back.
pub trait Codec: Sized {
    /// Its byte format.
    fn encode(&self) -> Vec<u8>;
    /// Read it back (the documented Python exception for bad bytes).
    fn decode(bytes: &[u8]) -> pyo3::PyResult<Self>;
}

/// The per-key loops behind `might_contain_batch` and `insert_batch`, for a filter with no
/// batched call of its own. The variants' macro calls these names on a concrete type, where
/// Rust picks an inherent method over a trait method: a variant whose type has its own
/// batched call (hashed and prefetched ahead) gets it without being named anywhere here.
pub trait Unbatched: Filter {
    /// One [`Filter::might_contain_bytes`] per key.
    fn might_contain_batch<K: Key>(&self, keys: &[K], out: &mut [bool]) -> Result<()> {
        for (k, o) in keys.iter().zip(out.iter_mut()) {
            *o = k.with_key_bytes(|b| self.might_contain_bytes(b));
        }
        Ok(())
    }

    /// One insert per key, as [`Insert::add`] (a key held as often as the filter keeps it
    /// is present); stops at the first error.
    fn insert_batch<K: Key>(&mut self, keys: &[K]) -> Result<()> {
        for k in keys {
            match k.with_key_bytes(|b| self.insert_bytes(b)) {
                Ok(()) | Err(bloomlab_core::Error::TooManyCopies(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl<F: Filter + ?Sized> Unbatched for F {}

/// What a batched call returns, as a `Result`: an infallible batched insert returns `()`.
pub trait Done {
    /// The call's outcome.
    fn done(self) -> Result<()>;
}

impl Done for () {
    fn done(self) -> Result<()> {
        Ok(())
    }
}

impl Done for Result<()> {
    fn done(self) -> Result<()> {
        self
    }
}

/// Whether a filter type deletes, read from its type: [`RemovableFilter`] where it
/// implements it, nothing otherwise. Called as `(&Removal::<F>::NEW).remover()` on a
/// concrete `F` (in the variants' macro), the call resolves to [`Removes`] when
/// `F: RemovableFilter` and falls back to [`Keeps`] (method lookup tries `&Removal<F>`
/// before `&&Removal<F>`), so no list of deleting variants is written here.
pub struct Removal<F>(PhantomData<F>);

impl<F> Removal<F> {
    /// The probe.
    pub const NEW: Self = Removal(PhantomData);
}

/// Removal of one key's bytes, as a function of the filter.
pub type Remover<F> = fn(&mut F, &[u8]) -> bool;

/// The probe's answer for a type that deletes.
pub trait Removes<F> {
    /// [`RemovableFilter::remove_bytes`].
    fn remover(&self) -> Option<Remover<F>>;
}

impl<F: RemovableFilter> Removes<F> for Removal<F> {
    fn remover(&self) -> Option<Remover<F>> {
        Some(|f, k| f.remove_bytes(k))
    }
}

/// The probe's answer for a type that does not.
pub trait Keeps<F> {
    /// `None`.
    fn remover(&self) -> Option<Remover<F>>;
}

impl<F> Keeps<F> for &Removal<F> {
    fn remover(&self) -> Option<Remover<F>> {
        None
    }
}

/// Spark's and Guava's filters hash each kind of key with its own method (Spark's `putLong`,
/// `putString`, `putBinary`; Guava's `longFunnel`, `stringFunnel(UTF_8)`, `byteArrayFunnel`),
/// and merge with their own call (Spark's `mergeInPlace`, Guava's `putAll`).
macro_rules! by_kind {
    ($($ty:ty: $contains_bytes:ident, $put_bytes:ident, $union:ident;)*) => {$(
        impl Lookup for $ty {
            fn contains(&self, k: KeyView<'_>) -> bool {
                match k.kind {
                    Kind::Int => self.might_contain_long(k.as_i64()),
                    Kind::Str => self.might_contain_string(k.as_str()),
                    Kind::Bytes => self.$contains_bytes(k.bytes),
                }
            }
        }

        impl Insert for $ty {
            fn add(&mut self, k: KeyView<'_>) -> Result<()> {
                match k.kind {
                    Kind::Int => self.put_long(k.as_i64()),
                    Kind::Str => self.put_string(k.as_str()),
                    Kind::Bytes => self.$put_bytes(k.bytes),
                };
                Ok(())
            }
        }

        impl Union for $ty {
            fn union_with(&mut self, other: &Self) -> Result<()> {
                self.$union(other)
            }
        }
    )*};
}

by_kind! {
    SparkBloomFilter: might_contain_binary, put_binary, merge_in_place;
    GuavaBloomFilter: might_contain_bytes, put_bytes, put_all;
}

impl Estimate for SparkBloomFilter {
    fn estimated_count(&self) -> Option<f64> {
        Some(bloomlab_jvm::sizing::approximate_element_count(
            self.cardinality(),
            self.bit_size(),
            self.num_hash_functions(),
        ) as f64)
    }
}

impl Estimate for GuavaBloomFilter {
    fn estimated_count(&self) -> Option<f64> {
        Some(self.approximate_element_count() as f64)
    }
}

/// Spark's and Guava's own formats: a decode error of theirs is `bloomlab.DecodeError`.
macro_rules! jvm_codec {
    ($($ty:ty),*) => {$(
        impl Codec for $ty {
            fn encode(&self) -> Vec<u8> {
                self.to_bytes()
            }
            fn decode(bytes: &[u8]) -> pyo3::PyResult<Self> {
                <$ty>::from_bytes(bytes)
                    .map_err(|e| crate::DecodeError::new_err(format!("cannot decode filter: {e}")))
            }
        }
    )*};
}

jvm_codec!(SparkBloomFilter, GuavaBloomFilter);
