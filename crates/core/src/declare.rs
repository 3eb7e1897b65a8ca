//! What the workspace knows of a filter variant, declared once, in the variant's own crate.
//!
//! Each variant implements [`Declared`] beside its type: its [`Declaration`] (name and
//! format tag, the format versions it reads, whether it deletes, grows or is static, what its
//! [`FilterParams::hashes`](crate::FilterParams::hashes) counts, how it is sized) and the
//! four operations everything generic needs (size it, build it from keys, decode it, encode
//! it). The facade's one list of variants (`bloomlab::for_each_variant!`) names each type
//! once; the any-filter decoder, `inspect`, the command's formats and the harness's registry
//! are derived from that list and this trait, not written out again.
//!
//! ```
//! use bloomlab_core::declare::{Changes, Declaration, Hashes};
//! use bloomlab_core::Variant;
//!
//! // What the classic filter declares (bloomlab_classic::BloomFilter::DECLARATION).
//! let d = Declaration {
//!     variant: Variant::Classic,
//!     versions: &[1],
//!     changes: Changes::Fixed,
//!     deletes: false,
//!     no_union: None,
//!     design: "k probes anywhere in m bits",
//! };
//! assert_eq!((d.name(), d.writes()), ("classic", 1));
//! assert!(d.takes_inserts() && !d.grows());
//! assert_eq!(d.hashes(), Hashes::Probes); // what its `hashes` parameter counts
//! ```

use alloc::vec::Vec;

use crate::error::{Error, Result};
use crate::format::Variant;
use crate::key::Key;
use crate::meta::FilterCore;

/// How a variant's contents change once it exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Changes {
    /// Built once from the whole key set; no inserts afterwards (the Ribbon filter).
    Static,
    /// Takes inserts up to the capacity it was sized for; its FPR rises past it.
    Fixed,
    /// Grows past its start capacity without a rebuild, keeping its FPR bound.
    Grows,
}

/// What [`FilterParams::hashes`](crate::FilterParams::hashes) counts for a variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Hashes {
    /// Bit (or counter) positions probed per key: the `k` of a Bloom filter.
    Probes,
    /// Bits of each stored fingerprint (cuckoo-style tables).
    FingerprintBits,
    /// Bits of each key's result (the `r` of a Ribbon filter).
    ResultBits,
}

impl Hashes {
    /// How a report names the count, in the plural: "probes", "fingerprint bits",
    /// "result bits".
    pub fn unit(self) -> &'static str {
        match self {
            Hashes::Probes => "probes",
            Hashes::FingerprintBits => "fingerprint bits",
            Hashes::ResultBits => "result bits",
        }
    }
}

/// A variant's facts, as one value: what a listing, a decoder or a report needs to know of it
/// without its type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Declaration {
    /// The variant: its format tag and its name.
    pub variant: Variant,
    /// The envelope versions this build reads, oldest first; it writes the last.
    pub versions: &'static [u16],
    /// Static, fixed size, or growing.
    pub changes: Changes,
    /// Whether keys can be removed.
    pub deletes: bool,
    /// Why two filters of it do not merge exactly; `None`: they do, through
    /// [`Declared::union_in`].
    pub no_union: Option<&'static str>,
    /// The design and its sizing rule, in one line (for listings and reports).
    pub design: &'static str,
}

impl Declaration {
    /// The variant's lower-case name (its command-line and report name).
    pub fn name(&self) -> &'static str {
        self.variant.name()
    }

    /// What its [`FilterParams::hashes`](crate::FilterParams::hashes) counts: a fact of its tag
    /// ([`Variant::hashes`]), so a decoded filter's parameters read the same without its type.
    pub fn hashes(&self) -> Hashes {
        self.variant.hashes()
    }

    /// The envelope version a new filter is written in: the newest it reads.
    pub fn writes(&self) -> u16 {
        self.versions[self.versions.len() - 1]
    }

    /// Whether it takes inserts after construction (not a static filter).
    pub fn takes_inserts(&self) -> bool {
        self.changes != Changes::Static
    }

    /// Whether it grows past its start capacity.
    pub fn grows(&self) -> bool {
        self.changes == Changes::Grows
    }
}

/// A filter variant of the workspace, as the rest of it sees the variant: its
/// [`Declaration`] and the operations generic code needs, under one name each.
///
/// The constructors take the hash scheme; [`with_fpr`], [`build`] and [`from_bytes`] are the default scheme's
/// shorthands. [`estimate`](Self::estimate) and the fill methods answer `None` where the
/// variant defines no such quantity.
pub trait Declared: FilterCore + Clone + core::fmt::Debug + PartialEq + Sized + 'static {
    /// The variant's facts.
    const DECLARATION: Declaration;

    /// A [`Builder`] for this variant under its default scheme: `.items(n).fpr(p).build()`,
    /// `.fpr(p).build_from(&keys)`, `.from_bytes(&bytes)`.
    fn builder() -> Builder<Self>
    where
        Self::Scheme: Default,
    {
        Builder::with_scheme(Self::Scheme::default())
    }

    /// A filter for `n` keys at false-positive rate `fpr` under `scheme` (a growing variant
    /// starts at `n`); [`Error::Static`] for a static variant, which is built from its keys.
    fn with_fpr_and_scheme(n: u64, fpr: f64, scheme: Self::Scheme) -> Result<Self>;

    /// A filter holding every key of `keys`, at `fpr`, under `scheme`. By default: sized for
    /// `keys.len()`, then each key inserted (a key the filter already holds as often as it
    /// keeps, [`Error::TooManyCopies`], is present: the insert is skipped). A static variant
    /// overrides it with its build.
    fn build_with_scheme<K: Key>(keys: &[K], fpr: f64, scheme: Self::Scheme) -> Result<Self> {
        let mut f = Self::with_fpr_and_scheme(keys.len() as u64, fpr, scheme)?;
        for k in keys {
            match k.with_key_bytes(|b| f.insert_bytes(b)) {
                Ok(()) | Err(Error::TooManyCopies(_)) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(f)
    }

    /// Decode the checked envelope, the filter hashed with `scheme` (which must be the one the
    /// bytes record).
    fn from_bytes_with_scheme(bytes: &[u8], scheme: Self::Scheme) -> Result<Self>;

    /// Encode in the checked envelope, at [`Declaration::writes`].
    fn to_bytes(&self) -> Vec<u8>;

    /// The fraction of bits (or slots) in use.
    fn fill(&self) -> Option<f64> {
        None
    }

    /// The FPR the current contents imply (from the fill, or the variant's exact record);
    /// by default the variant's formula at its count.
    fn fill_fpr(&self) -> Option<f64> {
        Some(self.expected_fpr())
    }

    /// Distinct keys estimated from the fill, where the variant estimates one.
    fn estimate(&self) -> Option<f64> {
        None
    }

    /// OR `other` (a filter of the same shape and scheme) into this one, so it holds both key
    /// sets exactly as if built over both. By default [`Error::Incompatible`] with the
    /// declaration's [`no_union`](Declaration::no_union) reason: a variant whose filters
    /// merge overrides it (and declares `no_union: None`).
    fn union_in(&mut self, other: &Self) -> Result<()> {
        let _ = other;
        Err(Error::Incompatible(
            Self::DECLARATION
                .no_union
                .unwrap_or("this variant has no exact union")
                .into(),
        ))
    }
}

/// One builder for every variant: how many keys, which false-positive rate, which hash scheme,
/// then [`build`](Self::build) an empty filter, [`build_from`](Self::build_from) one holding a
/// key set (the only way to a static filter), or [`from_bytes`](Self::from_bytes) decode one.
/// Made by [`Declared::builder`] (the variant's default scheme) or
/// [`Builder::with_scheme`] (any scheme: a keyed one has no default).
///
/// It is the variant's own constructors under one set of names — `with_fpr_and_scheme`,
/// `build_with_scheme`, `from_bytes_with_scheme` — so each answer and each error is theirs;
/// what it adds is a typed [`Error::InvalidParameter`] for a parameter not given.
///
/// ```
/// use bloomlab_core::{Declared, Error, Result};
/// # use bloomlab_core::declare::{Changes, Declaration, Hashes};
/// # use bloomlab_core::meta::{FilterCore, Meta};
/// # use bloomlab_core::{HashScheme, Variant, Xxh3Scheme};
/// # #[derive(Clone)]
/// # pub struct Toy { bits: u64, meta: Meta<Xxh3Scheme> }
/// # impl FilterCore for Toy {
/// #     fn insert_bytes(&mut self, key: &[u8]) -> Result<()> {
/// #         self.bits |= 1 << (Xxh3Scheme.hash64(key) % 64);
/// #         self.meta.record_insert();
/// #         Ok(())
/// #     }
/// #     fn might_contain_bytes(&self, key: &[u8]) -> bool { self.bits >> (Xxh3Scheme.hash64(key) % 64) & 1 == 1 }
/// #     fn size_in_bytes(&self) -> usize { 0 }
/// #     fn table_bits(&self) -> u64 { 64 }
/// #     fn hashes(&self) -> u32 { 1 }
/// #     fn expected_fpr(&self) -> f64 { 0.5 }
/// #     fn same_table(&self, other: &Self) -> bool { self.bits == other.bits }
/// # }
/// # bloomlab_core::filter_glue!(Toy: Xxh3Scheme, Classic);
/// # impl Declared for Toy {
/// #     const DECLARATION: Declaration = Declaration { variant: Variant::Classic, versions: &[1],
/// #         changes: Changes::Fixed, deletes: false, no_union: None, design: "toy" };
/// #     fn with_fpr_and_scheme(n: u64, fpr: f64, s: Xxh3Scheme) -> Result<Self> {
/// #         if !(fpr > 0.0 && fpr < 1.0) { return Err(Error::invalid("fpr", "must be in (0, 1)")); }
/// #         Ok(Toy { bits: 0, meta: Meta::new(n, Some(fpr), s) })
/// #     }
/// #     fn from_bytes_with_scheme(_: &[u8], _: Xxh3Scheme) -> Result<Self> { Err(Error::invalid("bytes", "toy")) }
/// #     fn to_bytes(&self) -> Vec<u8> { Vec::new() }
/// # }
/// // `Toy` stands for any variant: `BlockedBloomFilter`, `RibbonFilter`, …
/// let f = Toy::builder().items(1_000).fpr(0.01).build()?;
/// assert_eq!(f.meta.capacity(), 1_000);
/// let g = Toy::builder().fpr(0.01).build_from(&["a", "b"])?;
/// assert!(g.might_contain_bytes(b"a"));
/// assert!(matches!(Toy::builder().fpr(0.01).build(), Err(Error::InvalidParameter { name: "items", .. })));
/// # Ok::<(), Error>(())
/// ```
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until `build`, `build_from` or `from_bytes`"]
pub struct Builder<F: Declared> {
    items: Option<u64>,
    fpr: Option<f64>,
    scheme: F::Scheme,
}

impl<F: Declared> Builder<F> {
    /// A builder for filters hashed with `scheme`.
    pub fn with_scheme(scheme: F::Scheme) -> Self {
        Builder {
            items: None,
            fpr: None,
            scheme,
        }
    }

    /// The number of keys the filter is sized for (a growing variant starts there).
    pub fn items(mut self, n: u64) -> Self {
        self.items = Some(n);
        self
    }

    /// The target false-positive rate, in (0, 1).
    pub fn fpr(mut self, fpr: f64) -> Self {
        self.fpr = Some(fpr);
        self
    }

    /// The hash scheme (replacing the one the builder was made with).
    pub fn scheme(mut self, scheme: F::Scheme) -> Self {
        self.scheme = scheme;
        self
    }

    /// An empty filter for [`items`](Self::items) keys at [`fpr`](Self::fpr):
    /// [`Declared::with_fpr_and_scheme`]. A static variant answers [`Error::Static`] (use
    /// [`build_from`](Self::build_from)).
    pub fn build(self) -> Result<F> {
        let n = self
            .items
            .ok_or_else(|| missing("items", "call .items(n), or build_from(keys)"))?;
        F::with_fpr_and_scheme(n, self.given_fpr()?, self.scheme)
    }

    /// A filter holding every key of `keys` at [`fpr`](Self::fpr), sized for them:
    /// [`Declared::build_with_scheme`] (a key count set with [`items`](Self::items) is not
    /// used: the keys are counted).
    pub fn build_from<K: Key>(self, keys: &[K]) -> Result<F> {
        let fpr = self.given_fpr()?;
        F::build_with_scheme(keys, fpr, self.scheme)
    }

    /// Decode a filter this variant wrote ([`Declared::to_bytes`]) with the builder's scheme,
    /// which must be the one the bytes record: [`Declared::from_bytes_with_scheme`]. The
    /// size and rate are the file's; those given here are not used.
    pub fn from_bytes(self, bytes: &[u8]) -> Result<F> {
        F::from_bytes_with_scheme(bytes, self.scheme)
    }

    fn given_fpr(&self) -> Result<f64> {
        self.fpr
            .ok_or_else(|| missing("fpr", "call .fpr(p) with p in (0, 1)"))
    }
}

fn missing(name: &'static str, how: &str) -> Error {
    Error::invalid(name, alloc::format!("not given: {how}"))
}

/// [`Declared::with_fpr_and_scheme`] under the default scheme.
pub fn with_fpr<F: Declared>(n: u64, fpr: f64) -> Result<F>
where
    F::Scheme: Default,
{
    F::with_fpr_and_scheme(n, fpr, F::Scheme::default())
}

/// [`Declared::build_with_scheme`] under the default scheme.
pub fn build<F: Declared, K: Key>(keys: &[K], fpr: f64) -> Result<F>
where
    F::Scheme: Default,
{
    F::build_with_scheme(keys, fpr, F::Scheme::default())
}

/// [`Declared::from_bytes_with_scheme`] under the default scheme.
pub fn from_bytes<F: Declared>(bytes: &[u8]) -> Result<F>
where
    F::Scheme: Default,
{
    F::from_bytes_with_scheme(bytes, F::Scheme::default())
}

/// The [`Declared`] impl of a variant generic over its scheme whose operations are inherent
/// methods of the usual shape: `$sized(n, fpr, scheme)`, `from_bytes_with_scheme`, `to_bytes`,
/// and, where named, the fill, its FPR, the estimate and the union. One line per operation
/// instead of a copied impl per variant.
///
/// ```text
/// bloomlab_core::declared! {
///     BloomFilter: DECLARATION;
///     sized: with_fpr_and_scheme, fill: fill_ratio, fill_fpr: current_fpr,
///     estimate: estimated_len, union: union
/// }
/// ```
#[macro_export]
macro_rules! declared {
    (
        $ty:ident: $decl:expr;
        sized: $sized:ident
        $(, fill: $fill:ident)?
        $(, fill_fpr: $fill_fpr:ident)?
        $(, estimate: $estimate:ident)?
        $(, union: $union:ident)?
        $(,)?
    ) => {
        impl<S: $crate::HashScheme> $crate::Declared for $ty<S> {
            const DECLARATION: $crate::Declaration = $decl;
            fn with_fpr_and_scheme(n: u64, fpr: f64, scheme: S) -> $crate::Result<Self> {
                Self::$sized(n, fpr, scheme)
            }
            fn from_bytes_with_scheme(bytes: &[u8], scheme: S) -> $crate::Result<Self> {
                Self::from_bytes_with_scheme(bytes, scheme)
            }
            fn to_bytes(&self) -> ::alloc::vec::Vec<u8> {
                self.to_bytes()
            }
            $(fn fill(&self) -> Option<f64> {
                Some(self.$fill())
            })?
            $(fn fill_fpr(&self) -> Option<f64> {
                Some(self.$fill_fpr())
            })?
            $(fn estimate(&self) -> Option<f64> {
                Some(self.$estimate())
            })?
            $(fn union_in(&mut self, other: &Self) -> $crate::Result<()> {
                self.$union(other)
            })?
        }
        $crate::try_from_bytes!($ty);
    };
}

/// `TryFrom<&[u8]>` for a variant generic over its scheme: decodes under the scheme's
/// default ([`Declared::from_bytes_with_scheme`]), so `BloomFilter::try_from(&bytes[..])` is
/// `BloomFilter::from_bytes(&bytes)`. Not for keyed schemes, which have no default (their
/// secret must be given).
#[macro_export]
macro_rules! try_from_bytes {
    ($ty:ident) => {
        impl<S: $crate::HashScheme + Default> ::core::convert::TryFrom<&[u8]> for $ty<S> {
            type Error = $crate::Error;
            fn try_from(bytes: &[u8]) -> $crate::Result<Self> {
                <Self as $crate::Declared>::from_bytes_with_scheme(bytes, S::default())
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Filter;
    use crate::hash::{HashScheme, Xxh3Scheme};
    use crate::meta::{FilterMeta, MetaView};
    use alloc::vec;

    /// An exact set of keys that declares itself and keeps every default of [`Declared`]: a
    /// key twice is [`Error::TooManyCopies`], the key `b"full"` [`Error::Full`]; its bytes
    /// are the keys, one length byte before each.
    #[derive(Clone, Debug, PartialEq)]
    struct Toy {
        keys: Vec<Vec<u8>>,
        count: u64,
        capacity: u64,
        scheme: Xxh3Scheme,
    }

    impl FilterMeta for Toy {
        type Scheme = Xxh3Scheme;
        const VARIANT: Variant = Variant::Classic;
        const TYPE_NAME: &'static str = "Toy";
        fn meta(&self) -> MetaView<'_, Xxh3Scheme> {
            MetaView {
                count: self.count,
                capacity: self.capacity,
                target_fpr: None,
                scheme: &self.scheme,
            }
        }
    }

    impl FilterCore for Toy {
        fn insert_bytes(&mut self, key: &[u8]) -> Result<()> {
            if key == b"full" {
                return Err(Error::Full("toy".into()));
            }
            if FilterCore::might_contain_bytes(self, key) {
                return Err(Error::TooManyCopies(1));
            }
            self.keys.push(key.to_vec());
            self.count += 1;
            Ok(())
        }
        fn might_contain_bytes(&self, key: &[u8]) -> bool {
            self.keys.iter().any(|k| k == key)
        }
        fn size_in_bytes(&self) -> usize {
            0
        }
        fn table_bits(&self) -> u64 {
            0
        }
        fn hashes(&self) -> u32 {
            0
        }
        fn expected_fpr(&self) -> f64 {
            0.25
        }
        fn same_table(&self, other: &Self) -> bool {
            self.keys == other.keys
        }
    }

    impl Declared for Toy {
        const DECLARATION: Declaration = Declaration {
            variant: Variant::Classic,
            versions: &[1],
            changes: Changes::Fixed,
            deletes: false,
            no_union: None,
            design: "an exact set",
        };
        fn with_fpr_and_scheme(n: u64, fpr: f64, scheme: Xxh3Scheme) -> Result<Self> {
            crate::math::validate_fpr(fpr)?;
            Ok(Toy {
                keys: Vec::new(),
                count: 0,
                capacity: n,
                scheme,
            })
        }
        fn from_bytes_with_scheme(bytes: &[u8], scheme: Xxh3Scheme) -> Result<Self> {
            let mut f = Self::with_fpr_and_scheme(0, 0.5, scheme)?;
            let mut rest = bytes;
            while let Some((&len, tail)) = rest.split_first() {
                let (key, tail) = tail.split_at(usize::from(len).min(tail.len()));
                FilterCore::insert_bytes(&mut f, key)?;
                rest = tail;
            }
            Ok(f)
        }
        fn to_bytes(&self) -> Vec<u8> {
            self.keys
                .iter()
                .flat_map(|k| core::iter::once(k.len() as u8).chain(k.iter().copied()))
                .collect()
        }
    }

    #[test]
    fn the_defaults_answer_for_a_variant_that_keeps_them() {
        let keys: Vec<&[u8]> = vec![b"a", b"bc", b"a", b"def"];
        let f: Toy = build(&keys, 0.01).unwrap();
        // The repeated key is skipped, the others inserted; sized for every key given.
        assert_eq!((f.len(), f.capacity), (3, 4));
        assert!(keys.iter().all(|k| Filter::might_contain_bytes(&f, k)));
        assert_eq!(f.params().scheme, Xxh3Scheme.descriptor());
        // Any other refusal is the build's error.
        assert_eq!(
            build::<Toy, &[u8]>(&[b"x", b"full"], 0.01),
            Err(Error::Full("toy".into()))
        );
        assert_eq!((f.fill(), f.estimate()), (None, None));
        assert_eq!(f.fill_fpr(), Some(0.25));
        assert_eq!(from_bytes::<Toy>(&f.to_bytes()).unwrap().keys, f.keys);
        let mut empty: Toy = with_fpr(7, 0.01).unwrap();
        assert_eq!((empty.len(), empty.capacity), (0, 7));
        // `Extend` through the shared glue inserts each key.
        crate::meta::extend(&mut empty, [b"x".as_slice(), b"yz"]);
        assert!(
            Filter::might_contain_bytes(&empty, b"x")
                && Filter::might_contain_bytes(&empty, b"yz")
                && empty.len() == 2
        );
        assert_eq!(
            f.clone().union_in(&f),
            Err(Error::Incompatible(
                "this variant has no exact union".into()
            ))
        );
    }

    #[test]
    fn the_builder_hands_each_parameter_to_the_variant_and_names_a_missing_one() {
        let keys: [&[u8]; 2] = [b"a", b"b"];
        let built = Toy::builder().items(7).fpr(0.5).build().unwrap();
        assert_eq!(built, with_fpr::<Toy>(7, 0.5).unwrap());
        assert_eq!(built.capacity, 7);
        // The rate given reaches the variant: one it refuses is refused.
        for bad in [0.0, 1.0, -1.0, 2.0] {
            assert!(Toy::builder().items(7).fpr(bad).build().is_err(), "{bad}");
            assert!(Toy::builder().fpr(bad).build_from(&keys).is_err(), "{bad}");
        }
        let from_keys = Toy::builder().fpr(0.25).build_from(&keys).unwrap();
        assert_eq!(from_keys, build::<Toy, &[u8]>(&keys, 0.25).unwrap());
        let bytes = from_keys.to_bytes();
        // The toy's bytes are its keys (its decoder keeps no capacity).
        assert_eq!(
            Toy::builder().from_bytes(&bytes).unwrap().keys,
            from_keys.keys
        );
        let with = Builder::<Toy>::with_scheme(Xxh3Scheme)
            .scheme(Xxh3Scheme)
            .items(3)
            .fpr(0.5);
        assert_eq!(with.build().unwrap().capacity, 3);
        let missing = |r: Result<Toy>| match r {
            Err(Error::InvalidParameter { name, .. }) => name,
            other => panic!("{other:?}"),
        };
        assert_eq!(missing(Toy::builder().fpr(0.5).build()), "items");
        assert_eq!(missing(Toy::builder().items(7).build()), "fpr");
        assert_eq!(missing(Toy::builder().build_from(&keys)), "fpr");
    }

    #[test]
    fn a_declaration_reads_its_facts() {
        let d = Declaration {
            variant: Variant::Blocked,
            versions: &[1, 2, 3],
            changes: Changes::Grows,
            deletes: true,
            no_union: Some("why"),
            design: "",
        };
        assert_eq!((d.name(), d.writes()), ("blocked", 3));
        assert!(d.takes_inserts() && d.grows());
        let s = Declaration {
            changes: Changes::Static,
            ..d
        };
        assert!(!s.takes_inserts() && !s.grows());
        let f = Declaration {
            changes: Changes::Fixed,
            ..d
        };
        assert!(f.takes_inserts() && !f.grows());
        assert_eq!(
            [Hashes::Probes, Hashes::FingerprintBits, Hashes::ResultBits].map(Hashes::unit),
            ["probes", "fingerprint bits", "result bits"]
        );
    }
}
