//! The one home for what every variant repeats: count / capacity / target / scheme metadata,
//! and the `Debug`, `PartialEq`, `Extend` and [`Filter`] glue built on it.
//!
//! A variant holds a [`Meta`] in a field `meta` (or, when its metadata is derived — a scalable
//! chain's capacity is the sum of its stages — implements [`FilterMeta`] itself, building a
//! [`MetaView`] on demand), implements [`FilterCore`] with only its own logic (how a key is
//! inserted and queried, what its table costs, its FPR formula), and gets the rest:
//!
//! - [`Filter`] by the blanket `impl<T: FilterCore + Debug> Filter for T` below;
//! - [`FilterMeta`], `Debug`, `PartialEq` and (for variants whose insert cannot fail)
//!   `Extend<K: Key>` from one line, [`filter_glue!`](crate::filter_glue);
//! - serde's scheme check from [`default_scheme_for`].
//!
//! ```
//! use std::fmt;
//! use bloomlab_core::meta::Meta;
//! use bloomlab_core::{Filter, HashScheme, Result, Xxh3Scheme};
//!
//! /// A toy variant: remembers the low bit of every inserted key's hash.
//! #[derive(Clone)]
//! pub struct OneBit<S: HashScheme = Xxh3Scheme> {
//!     bits: [bool; 2],
//!     meta: Meta<S>,
//! }
//!
//! // Named by its path, not imported: `Filter`'s methods then resolve by method syntax alone
//! // (the two traits share their methods' names).
//! impl<S: HashScheme> bloomlab_core::meta::FilterCore for OneBit<S> {
//!     fn insert_bytes(&mut self, key: &[u8]) -> Result<()> {
//!         self.bits[(self.meta.scheme().hash(key).h1 & 1) as usize] = true;
//!         self.meta.record_insert();
//!         Ok(())
//!     }
//!     fn might_contain_bytes(&self, key: &[u8]) -> bool {
//!         self.bits[(self.meta.scheme().hash(key).h1 & 1) as usize]
//!     }
//!     fn size_in_bytes(&self) -> usize { 0 }
//!     fn table_bits(&self) -> u64 { 2 }
//!     fn hashes(&self) -> u32 { 1 }
//!     fn expected_fpr(&self) -> f64 { self.bits.iter().filter(|b| **b).count() as f64 / 2.0 }
//!     fn same_table(&self, other: &Self) -> bool { self.bits == other.bits }
//!     fn debug_shape(&self, d: &mut fmt::DebugStruct<'_, '_>) { d.field("bits", &self.bits); }
//! }
//! bloomlab_core::filter_glue!(OneBit, Classic, extend);
//!
//! let mut f = OneBit { bits: [false; 2], meta: Meta::new(10, None, Xxh3Scheme) };
//! f.extend(["a", "b"]);
//! assert_eq!(Filter::len(&f), 2);
//! assert!(f.might_contain_bytes(b"a"));
//! assert_eq!(f.clone(), f);
//! assert!(format!("{f:?}").starts_with("OneBit { bits: "));
//! ```
//!
//! # Migrating a variant (mechanical)
//!
//! 1. Replace the fields `count`, `capacity`, `target_fpr`, `scheme` with `meta: Meta<S>`;
//!    reads become `self.meta.count()` / `capacity()` / `target_fpr()` / `scheme()`, an insert
//!    calls [`Meta::record_insert`], a removal [`Meta::record_remove`], `clear` calls
//!    [`Meta::reset_count`]. `from_parts` keeps its own checks and builds the `Meta` last.
//! 2. Delete `impl Filter`, `impl Debug`, `impl PartialEq` and `impl Extend`; write
//!    `impl FilterCore` with the bodies they had, under the same names (`insert_bytes`,
//!    `might_contain_bytes`, `size_in_bytes`, `expected_fpr`: one vocabulary with [`Filter`]),
//!    `params().table_bits` / `.hashes` → [`FilterCore::table_bits`] / [`FilterCore::hashes`],
//!    the table comparison of `eq` → [`FilterCore::same_table`]. The Debug fields that came
//!    before `count` go in [`FilterCore::debug_shape`], those between `target_fpr` and `scheme`
//!    in [`FilterCore::debug_state`]; the output keeps its field names and order.
//! 3. Add `bloomlab_core::filter_glue!(TypeName, VariantTag);` (`, extend` when insert
//!    cannot fail), and in serde's `Deserialize` replace the scheme check with
//!    [`default_scheme_for`].
//!
//! Every variant is on it: classic, blocked, split-block, counting, cuckoo, scalable and
//! Ribbon (`crates/keyed` wraps them and needs nothing of its own).
//!
//! Formats, serde representations and the inherent API are untouched by the migration.

use alloc::string::ToString;
use core::fmt;

use crate::error::Result;
use crate::filter::{Filter, FilterParams};
use crate::format::Variant;
use crate::hash::{HashScheme, SchemeDescriptor};

/// The metadata every variant keeps: items held, design capacity, target FPR, hash scheme.
#[derive(Clone, Debug)]
pub struct Meta<S: HashScheme> {
    count: u64,
    capacity: u64,
    target_fpr: Option<f64>,
    scheme: S,
}

impl<S: HashScheme> Meta<S> {
    /// Metadata of an empty filter. Validation of `capacity` and `target_fpr` is the
    /// variant's (their valid ranges differ: a static filter may hold 0 items).
    pub fn new(capacity: u64, target_fpr: Option<f64>, scheme: S) -> Self {
        Meta {
            count: 0,
            capacity,
            target_fpr,
            scheme,
        }
    }

    /// The same with `count` items already held (decoders, `from_parts`).
    pub fn with_count(mut self, count: u64) -> Self {
        self.count = count;
        self
    }

    /// Items held: successful inserts (repeats included) minus successful removals.
    #[inline]
    pub fn count(&self) -> u64 {
        self.count
    }
    /// The design capacity.
    #[inline]
    pub fn capacity(&self) -> u64 {
        self.capacity
    }
    /// The target FPR, if the filter was sized from one.
    #[inline]
    pub fn target_fpr(&self) -> Option<f64> {
        self.target_fpr
    }
    /// The hash scheme.
    #[inline]
    pub fn scheme(&self) -> &S {
        &self.scheme
    }
    /// The scheme's descriptor, as byte formats record it.
    pub fn descriptor(&self) -> SchemeDescriptor {
        self.scheme.descriptor()
    }

    /// Record the target FPR the filter was sized from.
    pub fn set_target_fpr(&mut self, p: Option<f64>) {
        self.target_fpr = p;
    }
    /// One more item (saturating).
    #[inline]
    #[allow(clippy::implicit_saturating_add)]
    pub fn record_insert(&mut self) {
        // A predictable branch around one increment: one instruction fewer in a loop of
        // inserts than `saturating_add` (an add, a constant and a conditional move), which
        // counts where an insert's cost is its share of the reorder window (out of cache;
        // `bloomlab-blocked`'s crate docs, *Where the time goes*).
        if self.count != u64::MAX {
            self.count += 1;
        }
    }
    /// `bits / count`, the density the variants' FPR formulas take; `None` when empty (no
    /// item: an FPR of 0).
    pub fn bits_per_item(&self, bits: u64) -> Option<f64> {
        (self.count > 0).then(|| bits as f64 / self.count as f64)
    }
    /// `n` more items (saturating): a batch or a parallel build.
    #[inline]
    pub fn record_inserts(&mut self, n: u64) {
        self.count = self.count.saturating_add(n);
    }
    /// One item fewer (saturating at 0).
    #[inline]
    pub fn record_remove(&mut self) {
        self.count = self.count.saturating_sub(1);
    }
    /// No items (after `clear`).
    pub fn reset_count(&mut self) {
        self.count = 0;
    }

    /// The borrowed view [`FilterMeta::meta`] returns.
    #[inline]
    pub fn view(&self) -> MetaView<'_, S> {
        MetaView {
            count: self.count,
            capacity: self.capacity,
            target_fpr: self.target_fpr,
            scheme: &self.scheme,
        }
    }
}

/// Metadata as the glue reads it: stored in a [`Meta`], or computed by a variant whose
/// capacity or count is derived from its parts.
#[derive(Clone, Copy, Debug)]
pub struct MetaView<'a, S: HashScheme> {
    /// Items held.
    pub count: u64,
    /// Design capacity.
    pub capacity: u64,
    /// Target FPR, if sized from one.
    pub target_fpr: Option<f64>,
    /// Hash scheme.
    pub scheme: &'a S,
}

impl<S: HashScheme> MetaView<'_, S> {
    /// Same count, capacity, target and scheme descriptor (the metadata half of `PartialEq`).
    pub fn same_as(&self, other: &MetaView<'_, S>) -> bool {
        self.count == other.count
            && self.capacity == other.capacity
            && self.target_fpr == other.target_fpr
            && self.scheme.descriptor() == other.scheme.descriptor()
    }
}

/// Who a filter is: its variant, its type name and its metadata. [`filter_glue!`](crate::filter_glue) writes this
/// for a type whose metadata is a field `meta: Meta<S>`; a variant whose metadata is derived
/// writes it by hand.
pub trait FilterMeta {
    /// The hash scheme the variant is generic over.
    type Scheme: HashScheme;
    /// The variant's format tag (and [`FilterParams::variant`]).
    const VARIANT: Variant;
    /// The type's name as `Debug` prints it.
    const TYPE_NAME: &'static str;
    /// Count, capacity, target FPR and scheme.
    fn meta(&self) -> MetaView<'_, Self::Scheme>;
}

/// What a variant writes itself; [`Filter`], `Debug`, `PartialEq` and `Extend` follow.
///
/// Its methods carry [`Filter`]'s names for the same operations (the blanket `impl Filter`
/// forwards each to its namesake), so a type has one vocabulary whichever trait is in scope.
/// Where both are in scope and the type is generic, name the trait:
/// `FilterCore::insert_bytes(&mut f, key)`.
pub trait FilterCore: FilterMeta + Send + Sync {
    /// [`Filter::insert_bytes`].
    fn insert_bytes(&mut self, key: &[u8]) -> Result<()>;
    /// [`Filter::might_contain_bytes`].
    fn might_contain_bytes(&self, key: &[u8]) -> bool;
    /// [`Filter::size_in_bytes`]: heap bytes of the table.
    fn size_in_bytes(&self) -> usize;
    /// [`FilterParams::table_bits`].
    fn table_bits(&self) -> u64;
    /// [`FilterParams::hashes`] (probes, or fingerprint / result bits).
    fn hashes(&self) -> u32;
    /// [`Filter::expected_fpr`]: the variant's formula at its current contents.
    fn expected_fpr(&self) -> f64;
    /// The table half of `PartialEq` (the metadata half is [`MetaView::same_as`]).
    fn same_table(&self, other: &Self) -> bool;

    /// `Debug` fields printed before `count` (the table's shape).
    fn debug_shape(&self, _d: &mut fmt::DebugStruct<'_, '_>) {}
    /// `Debug` fields printed after `target_fpr`, before `scheme` (derived state).
    fn debug_state(&self, _d: &mut fmt::DebugStruct<'_, '_>) {}
    /// The whole `Debug` output: `TYPE_NAME { shape…, count, capacity, target_fpr, state…,
    /// scheme }`. Override only when the metadata is not the variant's own (a chain).
    fn fmt_debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let meta = self.meta();
        let mut d = f.debug_struct(Self::TYPE_NAME);
        self.debug_shape(&mut d);
        d.field("count", &meta.count)
            .field("capacity", &meta.capacity)
            .field("target_fpr", &meta.target_fpr);
        self.debug_state(&mut d);
        d.field("scheme", &meta.scheme.descriptor()).finish()
    }
}

impl<T: FilterCore + fmt::Debug> Filter for T {
    // Always inlined, with each variant's `insert_bytes` / `might_contain_bytes`: a caller that
    // knows the key's length then gets the hash specialised to it and no call per key.
    #[inline(always)]
    fn insert_bytes(&mut self, key: &[u8]) -> Result<()> {
        FilterCore::insert_bytes(self, key)
    }
    #[inline(always)]
    fn might_contain_bytes(&self, key: &[u8]) -> bool {
        FilterCore::might_contain_bytes(self, key)
    }
    fn len(&self) -> u64 {
        self.meta().count
    }
    fn size_in_bytes(&self) -> usize {
        FilterCore::size_in_bytes(self)
    }
    fn expected_fpr(&self) -> f64 {
        FilterCore::expected_fpr(self)
    }
    fn params(&self) -> FilterParams {
        let meta = self.meta();
        FilterParams {
            variant: T::VARIANT,
            capacity: meta.capacity,
            target_fpr: meta.target_fpr,
            table_bits: self.table_bits(),
            hashes: self.hashes(),
            scheme: meta.scheme.descriptor(),
        }
    }
}

/// `PartialEq` of two filters of one type: equal metadata and equal tables.
pub fn same<T: FilterCore>(a: &T, b: &T) -> bool {
    a.meta().same_as(&b.meta()) && a.same_table(b)
}

/// `Extend` for variants whose insert cannot fail. Panics if one does: a fallible variant
/// (cuckoo, a static filter) must not use the `extend` arm of [`filter_glue!`](crate::filter_glue).
pub fn extend<T: FilterCore, K: crate::Key>(f: &mut T, keys: impl IntoIterator<Item = K>) {
    for key in keys {
        key.with_key_bytes(|b| f.insert_bytes(b))
            .unwrap_or_else(|e| panic!("{}: insert failed in Extend: {e}", T::TYPE_NAME));
    }
}

/// The scheme a deserializer must probe with: `S::default()`, if its descriptor is the one the
/// serialized filter records. Only unkeyed schemes have a usable `Default`; a keyed filter is
/// loaded from bytes with its secret.
pub fn default_scheme_for<S: HashScheme + Default>(
    found: SchemeDescriptor,
) -> Result<S, crate::error::DecodeError> {
    let scheme = S::default();
    if found != scheme.descriptor() {
        return Err(crate::error::DecodeError::SchemeMismatch {
            expected: scheme.descriptor().to_string(),
            found: found.to_string(),
        });
    }
    Ok(scheme)
}

/// The body of a variant's `Deserialize`: read its representation `R`, check the recorded
/// scheme with [`default_scheme_for`], then validate and assemble with `build` (the variant's
/// `from_parts`), every error a serde error.
#[cfg(feature = "serde")]
pub fn deserialize_checked<'de, D, R, S, T>(
    d: D,
    scheme_of: impl FnOnce(&R) -> SchemeDescriptor,
    build: impl FnOnce(R, S) -> Result<T, crate::error::DecodeError>,
) -> Result<T, D::Error>
where
    D: serde::Deserializer<'de>,
    R: serde::Deserialize<'de>,
    S: HashScheme + Default,
{
    use serde::de::Error as _;
    let r = R::deserialize(d)?;
    let scheme = default_scheme_for::<S>(scheme_of(&r)).map_err(D::Error::custom)?;
    build(r, scheme).map_err(D::Error::custom)
}

/// The sizing accessors of a variant whose metadata is the field `meta: Meta<S>`, written once
/// as inherent methods (invoked inside the variant's `impl` block):
///
/// - `sizing_accessors!()`: `capacity` and `target_fpr`;
/// - `sizing_accessors!(saturated)`: and `is_saturated`;
/// - `sizing_accessors!(saturated, load)`: and `load` (inserts over capacity);
/// - `…, len)`: `len` and `is_empty` (the count of [`Meta`]);
/// - `…, hash_key)`: `scheme` and `hash_key` (the scheme's 128-bit hash of a key).
#[macro_export]
macro_rules! sizing_accessors {
    (@ len) => {
        /// Items held: inserts, repeats included, minus successful removals (where the
        /// variant removes).
        pub fn len(&self) -> u64 {
            self.meta.count()
        }

        /// Nothing held: no inserts yet (or everything removed).
        pub fn is_empty(&self) -> bool {
            self.meta.count() == 0
        }
    };
    (@ hash_key) => {
        /// The hash scheme.
        pub fn scheme(&self) -> &S {
            self.meta.scheme()
        }

        /// Hash a key with this filter's scheme (what the `…_hash` methods take).
        #[inline]
        pub fn hash_key<K: $crate::Key + ?Sized>(&self, key: &K) -> $crate::KeyHash {
            key.with_key_bytes(|b| $crate::HashScheme::hash(self.meta.scheme(), b))
        }
    };
    (@ saturated) => {
        /// More inserts than the design capacity: the FPR has silently climbed past the
        /// target. Rebuild larger, or use a scalable filter.
        pub fn is_saturated(&self) -> bool {
            self.meta.count() > self.meta.capacity()
        }
    };
    (@ load) => {
        /// Inserts relative to design capacity: 1.0 at design load, 2.0 at twice it.
        pub fn load(&self) -> f64 {
            self.meta.count() as f64 / self.meta.capacity() as f64
        }
    };
    ($($extra:ident),* $(,)?) => {
        /// The design capacity (the `n` the filter was sized for).
        pub fn capacity(&self) -> u64 {
            self.meta.capacity()
        }

        /// The target FPR, if the filter was sized from one.
        pub fn target_fpr(&self) -> Option<f64> {
            self.meta.target_fpr()
        }

        $($crate::sizing_accessors!(@ $extra);)*
    };
}

/// The glue for a variant type `Name<S: HashScheme>` that implements [`FilterCore`]:
///
/// - `filter_glue!(Name, Tag)`: [`FilterMeta`] (variant `Variant::Tag`, type name `"Name"`,
///   metadata from the field `meta: Meta<S>`), `Debug` and `PartialEq`;
/// - `filter_glue!(Name, Tag, extend)`: the same and `Extend<K: Key>` (insert must not fail);
/// - `filter_glue!(Name)`: `Debug` and `PartialEq` only, for a type that writes
///   [`FilterMeta`] itself;
/// - `filter_glue!(Name: Scheme, Tag)` and `filter_glue!(Name: Scheme, Tag, extend)`: the
///   same for a type that is not generic, its one scheme fixed by its format (the
///   split-block filter, whose hash Parquet dictates).
#[macro_export]
macro_rules! filter_glue {
    ($name:ident) => {
        impl<S: $crate::HashScheme> ::core::fmt::Debug for $name<S> {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                $crate::meta::FilterCore::fmt_debug(self, f)
            }
        }
        impl<S: $crate::HashScheme> ::core::cmp::PartialEq for $name<S> {
            fn eq(&self, other: &Self) -> bool {
                $crate::meta::same(self, other)
            }
        }
    };
    ($name:ident, $tag:ident) => {
        impl<S: $crate::HashScheme> $crate::meta::FilterMeta for $name<S> {
            type Scheme = S;
            const VARIANT: $crate::Variant = $crate::Variant::$tag;
            const TYPE_NAME: &'static str = ::core::stringify!($name);
            fn meta(&self) -> $crate::meta::MetaView<'_, S> {
                self.meta.view()
            }
        }
        $crate::filter_glue!($name);
    };
    ($name:ident, $tag:ident, extend) => {
        $crate::filter_glue!($name, $tag);
        impl<S: $crate::HashScheme, K: $crate::Key> ::core::iter::Extend<K> for $name<S> {
            fn extend<I: ::core::iter::IntoIterator<Item = K>>(&mut self, keys: I) {
                $crate::meta::extend(self, keys)
            }
        }
    };
    ($name:ident: $scheme:ty, $tag:ident) => {
        impl $crate::meta::FilterMeta for $name {
            type Scheme = $scheme;
            const VARIANT: $crate::Variant = $crate::Variant::$tag;
            const TYPE_NAME: &'static str = ::core::stringify!($name);
            fn meta(&self) -> $crate::meta::MetaView<'_, $scheme> {
                self.meta.view()
            }
        }
        impl ::core::fmt::Debug for $name {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                $crate::meta::FilterCore::fmt_debug(self, f)
            }
        }
        impl ::core::cmp::PartialEq for $name {
            fn eq(&self, other: &Self) -> bool {
                $crate::meta::same(self, other)
            }
        }
    };
    ($name:ident: $scheme:ty, $tag:ident, extend) => {
        $crate::filter_glue!($name: $scheme, $tag);
        impl<K: $crate::Key> ::core::iter::Extend<K> for $name {
            fn extend<I: ::core::iter::IntoIterator<Item = K>>(&mut self, keys: I) {
                $crate::meta::extend(self, keys)
            }
        }
    };
}

/// The key methods of a variant's [`FilterCore`] impl, forwarding to its inherent `insert`
/// and `might_contain` (which take any [`Key`](crate::Key), a byte slice among them), written
/// once inside the `impl FilterCore` block:
///
/// - `key_methods!()`: `insert` cannot fail (its answer is dropped);
/// - `key_methods!(fallible)`: `insert` returns [`Result<()>`](crate::Result) (a table that
///   can fill);
/// - `key_methods!(static)`: no inserts, [`Error::Static`](crate::Error::Static): a static
///   filter is built once from the whole key set.
///
/// Both are always inlined: in a caller that knows the key's length (8 bytes of a `u64`) the
/// hash specialises to it and no call is left per key, as with the inherent methods.
#[macro_export]
macro_rules! key_methods {
    (@ contains) => {
        #[inline(always)]
        fn might_contain_bytes(&self, key: &[u8]) -> bool {
            self.might_contain(key)
        }
    };
    () => {
        #[inline(always)]
        fn insert_bytes(&mut self, key: &[u8]) -> $crate::Result<()> {
            self.insert(key);
            ::core::result::Result::Ok(())
        }
        $crate::key_methods!(@ contains);
    };
    (fallible) => {
        #[inline(always)]
        fn insert_bytes(&mut self, key: &[u8]) -> $crate::Result<()> {
            self.insert(key)
        }
        $crate::key_methods!(@ contains);
    };
    (static) => {
        /// A static filter takes no inserts: [`Error::Static`](bloomlab_core::Error::Static).
        /// Build a new filter from the whole key set instead.
        #[inline(always)]
        fn insert_bytes(&mut self, _key: &[u8]) -> $crate::Result<()> {
            ::core::result::Result::Err($crate::Error::Static(
                <Self as $crate::meta::FilterMeta>::TYPE_NAME,
            ))
        }
        $crate::key_methods!(@ contains);
    };
}

/// The constructors of a variant's default hash scheme ([`Xxh3Scheme`](crate::Xxh3Scheme)),
/// each forwarding to its `…_and_scheme` / `…_with_scheme` twin: one line per constructor
/// instead of a copied body per variant.
///
/// ```
/// use bloomlab_core::{HashScheme, Result, Xxh3Scheme};
///
/// pub struct Toy<S: HashScheme = Xxh3Scheme> {
///     n: u64,
///     scheme: S,
/// }
///
/// impl<S: HashScheme> Toy<S> {
///     pub fn with_fpr_and_scheme(n: u64, _fpr: f64, scheme: S) -> Result<Self> {
///         Ok(Toy { n, scheme })
///     }
/// }
///
/// bloomlab_core::default_scheme_constructors! {
///     impl Toy {
///         /// Size for `expected_items` at false-positive rate `fpr`.
///         fn with_fpr(expected_items: u64, fpr: f64) = with_fpr_and_scheme;
///     }
/// }
///
/// let toy = Toy::with_fpr(10, 0.01)?; // the default scheme, without naming it
/// assert_eq!(toy.n, 10);
/// assert_eq!(toy.scheme.descriptor(), Xxh3Scheme.descriptor());
/// # Ok::<(), bloomlab_core::Error>(())
/// ```
#[macro_export]
macro_rules! default_scheme_constructors {
    (impl $name:ident {
        $( $(#[$doc:meta])* fn $f:ident($($arg:ident: $ty:ty),* $(,)?) = $with:ident; )*
    }) => {
        impl $name<$crate::Xxh3Scheme> {
            $(
                $(#[$doc])*
                pub fn $f($($arg: $ty),*) -> $crate::Result<Self> {
                    Self::$with($($arg,)* $crate::Xxh3Scheme)
                }
            )*
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::DecodeError;
    use crate::hash::{KeyHash, SchemeId, Xxh3Scheme};

    /// A scheme that records the key check it is given, as a keyed scheme's descriptor does
    /// (two secrets, two descriptors of the same type).
    #[derive(Clone, Debug, Default, PartialEq)]
    struct Recorded(u64);
    impl HashScheme for Recorded {
        fn hash(&self, key: &[u8]) -> KeyHash {
            Xxh3Scheme.hash(key)
        }
        fn descriptor(&self) -> SchemeDescriptor {
            SchemeDescriptor {
                id: SchemeId::SipHash24Km,
                key_check: self.0,
            }
        }
    }

    #[test]
    fn meta_reports_what_it_was_built_with() {
        let m = Meta::new(1_000, Some(0.01), Xxh3Scheme).with_count(7);
        assert_eq!(
            (m.capacity(), m.count(), m.target_fpr()),
            (1_000, 7, Some(0.01))
        );
        assert_eq!(m.descriptor(), Xxh3Scheme.descriptor());
        let fixed = Meta::new(5, None, Xxh3Scheme);
        assert_eq!((fixed.count(), fixed.target_fpr()), (0, None));
    }

    #[test]
    fn bits_per_item_is_the_density_once_there_is_an_item() {
        let mut m = Meta::new(100, Some(0.01), Xxh3Scheme);
        assert_eq!(m.bits_per_item(960), None);
        m.record_inserts(96);
        assert_eq!(m.bits_per_item(960), Some(10.0));
    }

    #[test]
    fn views_are_the_same_only_when_all_four_fields_are() {
        let (s1, s2) = (Recorded(1), Recorded(2));
        let view = |count, capacity, target_fpr, scheme| MetaView {
            count,
            capacity,
            target_fpr,
            scheme,
        };
        let base = view(3, 100, Some(0.01), &s1);
        assert!(base.same_as(&view(3, 100, Some(0.01), &Recorded(1))));
        for other in [
            view(4, 100, Some(0.01), &s1),
            view(3, 101, Some(0.01), &s1),
            view(3, 100, Some(0.02), &s1),
            view(3, 100, None, &s1),
            view(3, 100, Some(0.01), &s2),
        ] {
            assert!(!base.same_as(&other), "{other:?}");
            assert!(!other.same_as(&base), "{other:?}");
        }
    }

    #[test]
    fn a_deserializer_gets_the_default_scheme_only_if_the_record_names_it() {
        assert_eq!(
            default_scheme_for::<Xxh3Scheme>(Xxh3Scheme.descriptor()),
            Ok(Xxh3Scheme)
        );
        assert_eq!(
            default_scheme_for::<Recorded>(Recorded(0).descriptor()),
            Ok(Recorded(0))
        );
        let keyed = Recorded(5).descriptor();
        assert_eq!(
            default_scheme_for::<Xxh3Scheme>(keyed),
            Err(DecodeError::SchemeMismatch {
                expected: "xxh3-128/km".into(),
                found: "siphash-2-4-128/km (keyed) [key check 0000000000000005]".into(),
            })
        );
        assert!(matches!(
            default_scheme_for::<Recorded>(keyed),
            Err(DecodeError::SchemeMismatch { .. })
        ));
    }
}
