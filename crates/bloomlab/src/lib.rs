//! bloomlab: approximate-membership filters you can choose with data.
//!
//! One dependency for every variant of the workspace: the [`Filter`] trait, [`Key`], the typed
//! [`Error`]s, each filter type and the keyed hashing scheme. Each variant sits behind a cargo
//! feature of its name (all on by default), so `default-features = false, features =
//! ["blocked"]` builds only what you use. Every filter answers `might_contain(key) == false`
//! when the key was **definitely never inserted** and `true` when it **maybe** was.
//!
//! # Which filter for which need
//!
//! One guide answers this, the [README's table](https://github.com/bloomlab/bloomlab#which-variant-when)
//! (the need, the type to take, and the measured reason); `bench-harness recommend --n N --fpr P
//! [--deletes] [--grows] [--hostile-keys]` chooses from the measured results for your own
//! numbers and says why. In short: [`BlockedBloomFilter`] for the fastest lookups at a known
//! size, [`Sbbf`] for Parquet readers, [`RibbonFilter`] for a set built once,
//! [`CuckooFilter`] for deletes, [`ExpandableFilter`] for an unknown final size,
//! [`SparkBloomFilter`] and [`GuavaBloomFilter`] for the JVM's formats, and [`Sip64Scheme`]
//! when keys may be chosen by an adversary.
//!
//! # Examples
//!
//! A classic filter, and its byte format (versioned, checksummed, records the hash scheme):
//!
//! ```
//! # #[cfg(feature = "classic")] {
//! use bloomlab::BloomFilter;
//!
//! let mut seen = BloomFilter::with_fpr(1_000_000, 0.01)?; // 9.59 bits/item, k = 7
//! seen.insert("https://example.com/a");
//! assert!(seen.might_contain("https://example.com/a")); // never a false negative
//! let back = BloomFilter::from_bytes(&seen.to_bytes())?;
//! assert_eq!(back, seen);
//! # }
//! # Ok::<(), bloomlab::Error>(())
//! ```
//!
//! A blocked filter, with batched lookups (they overlap the cache misses of a table larger than
//! `SINGLE_LOOP_UP_TO`, 384 KiB, and answer a smaller one key by key):
//!
//! ```
//! # #[cfg(feature = "blocked")] {
//! use bloomlab::BlockedBloomFilter;
//!
//! let mut f = BlockedBloomFilter::with_fpr(10_000, 0.01)?;
//! f.insert_batch(&(0..10_000u64).collect::<Vec<_>>());
//! let probes: Vec<u64> = (9_990..10_010).collect();
//! let mut out = vec![false; probes.len()];
//! f.might_contain_batch(&probes, &mut out)?;
//! assert!(out[..10].iter().all(|&hit| hit)); // the ten members
//! # }
//! # Ok::<(), bloomlab::Error>(())
//! ```
//!
//! Threads filling one filter, a build on every core, and answers straight from the bytes:
//!
//! ```
//! # #[cfg(feature = "blocked")] {
//! use bloomlab::{AtomicBlockedBloomFilter, BlockedBloomFilter, BlockedBloomFilterView};
//!
//! let shared = AtomicBlockedBloomFilter::with_fpr(100_000, 0.01)?;
//! std::thread::scope(|s| {
//!     s.spawn(|| (0..50_000u64).for_each(|i| { shared.insert(&i); }));
//!     s.spawn(|| (50_000..100_000u64).for_each(|i| { shared.insert(&i); }));
//! });
//! let keys: Vec<u64> = (0..100_000).collect();
//! let built = BlockedBloomFilter::from_keys(&keys, 0.01)?; // all cores, bit-identical
//! assert_eq!(BlockedBloomFilter::from(shared), built);
//! let bytes = built.to_bytes();
//! let view = BlockedBloomFilterView::new(&bytes)?; // no copy
//! assert!(keys.iter().all(|k| view.might_contain(k)));
//! # }
//! # Ok::<(), bloomlab::Error>(())
//! ```
//!
//! A cuckoo filter, which deletes and refuses (rather than drops) a key when full:
//!
//! ```
//! # #[cfg(feature = "cuckoo")] {
//! use bloomlab::CuckooFilter;
//!
//! let mut f = CuckooFilter::with_fpr(1_000, 0.001)?;
//! f.insert("session-17")?; // Err(Error::Full) when no slot can be found; nothing is lost
//! assert!(f.might_contain("session-17"));
//! assert!(f.remove("session-17"));
//! assert!(!f.might_contain("session-17"));
//! # }
//! # Ok::<(), bloomlab::Error>(())
//! ```
//!
//! A counting filter, whose removal refuses keys it cannot hold:
//!
//! ```
//! # #[cfg(feature = "counting")] {
//! use bloomlab::CountingBloomFilter;
//!
//! let mut f = CountingBloomFilter::with_fpr(1_000, 0.01)?;
//! f.insert("a");
//! assert!(f.remove("a"));
//! assert!(!f.remove("a")); // its counters are back at zero: refused, nothing corrupted
//! # }
//! # Ok::<(), bloomlab::Error>(())
//! ```
//!
//! A scalable filter, growing far past its initial capacity within its target:
//!
//! ```
//! # #[cfg(feature = "scalable")] {
//! use bloomlab::ScalableBloomFilter;
//!
//! let mut f = ScalableBloomFilter::with_fpr(100, 0.01)?;
//! for i in 0..10_000u64 {
//!     f.insert(&i)?;
//! }
//! assert!((0..10_000u64).all(|i| f.might_contain(&i)));
//! assert!(f.fpr_bound() <= 0.01);
//! # }
//! # Ok::<(), bloomlab::Error>(())
//! ```
//!
//! Keyed hashing for hostile keys, with any variant that takes a scheme:
//!
//! ```
//! # #[cfg(feature = "keyed")] {
//! use bloomlab::{BloomFilter, Sip64Scheme};
//!
//! let scheme = Sip64Scheme::from_secret([7; 16]); // in production: Sip64Scheme::random()?
//! let mut f = BloomFilter::with_fpr_and_scheme(10_000, 0.01, scheme.clone())?;
//! f.insert("user-chosen key");
//! let bytes = f.to_bytes(); // carries a key check value, never the secret
//! assert!(BloomFilter::from_bytes_with_scheme(&bytes, scheme)?.might_contain("user-chosen key"));
//! assert!(BloomFilter::from_bytes(&bytes).is_err()); // unkeyed readers are refused
//! # }
//! # Ok::<(), bloomlab::Error>(())
//! ```
//!
//! A Parquet split-block filter, bit-compatible with Parquet files' bloom filter sections:
//!
//! ```
//! # #[cfg(feature = "sbbf")] {
//! use bloomlab::Sbbf;
//!
//! let mut f = Sbbf::with_ndv_fpp(10_000, 0.01)?; // sized the way Parquet writers size it
//! f.insert_i64(42); // xxHash64 of the plain encoding, as the spec says
//! assert!(f.might_contain_i64(42));
//! let section = f.to_parquet_bytes()?; // Thrift header + bitset, as stored in a file
//! assert_eq!(Sbbf::from_parquet_bytes(&section)?.to_parquet_bitset()?, f.to_parquet_bitset()?);
//! # }
//! # Ok::<(), bloomlab::Error>(())
//! ```
//!
//! A Spark filter, byte for byte what Spark's `BloomFilter.create(n, fpp)` and `writeTo` give:
//!
//! ```
//! # #[cfg(feature = "jvm")] {
//! use bloomlab::{JvmFilter, SparkBloomFilter, SparkVersion};
//!
//! let mut f = SparkBloomFilter::create(10_000, 0.01, SparkVersion::V2)?;
//! f.put_string("user-42");
//! let bytes = f.to_bytes(); // what Spark's BloomFilter.readFrom reads
//! assert!(JvmFilter::from_bytes(&bytes)?.as_filter().might_contain("user-42"));
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! A Ribbon filter, built once from the whole key set and queried straight from its bytes:
//!
//! ```
//! # #[cfg(feature = "ribbon")] {
//! use bloomlab::{RibbonFilter, RibbonView};
//!
//! let f = RibbonFilter::build(0..10_000u64, 0.01)?; // r = 7: FPR 2^-7 ≈ 0.78 %
//! assert!(f.bits_per_item() < 7.6);
//! let bytes = f.to_bytes();
//! let view = RibbonView::new(&bytes)?; // zero-copy, any alignment
//! assert!((0..10_000u64).all(|k| view.might_contain(&k)));
//! # }
//! # Ok::<(), bloomlab::Error>(())
//! ```
//!
//! Every filter is also a [`Filter`] trait object, which is how the harness holds them:
//!
//! ```
//! # #[cfg(all(feature = "classic", feature = "blocked"))] {
//! use bloomlab::{BlockedBloomFilter, BloomFilter, Filter};
//!
//! let mut filters: Vec<Box<dyn Filter>> = vec![
//!     Box::new(BloomFilter::with_fpr(1_000, 0.01)?),
//!     Box::new(BlockedBloomFilter::with_fpr(1_000, 0.01)?),
//! ];
//! for f in &mut filters {
//!     f.insert_bytes(b"k")?;
//!     assert!(f.might_contain_bytes(b"k") && f.len() == 1);
//! }
//! # }
//! # Ok::<(), bloomlab::Error>(())
//! ```
//!
//! # no_std
//!
//! The `std` feature (on by default) is forwarded to every variant crate. Without it,
//! `default-features = false, features = ["classic", "blocked", …]` builds a `#![no_std]`
//! crate that needs only `alloc` (for targets such as `thumbv7em-none-eabihf`) from the
//! classic, blocked, split-block, counting, cuckoo, scalable, expandable and Ribbon filters.
//! What needs std: the parallel builds (`from_keys`, `insert_parallel`), the atomic blocked
//! filter (also 64-bit atomics), run-time CPU detection (without it the SIMD kernels are those
//! the build's target features allow), and the `keyed` and `jvm` features, which turn `std`
//! on (`serde` works without it). Without std the sizing formulas' `f64` functions come from
//! `libm` ([`math::float`]).
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub use bloomlab_core::{
    Builder, Declaration, Declared, DecodeError, Error, Filter, FilterParams, HashScheme, Key,
    KeyHash, RemovableFilter, Result, SchemeDescriptor, SchemeId, Variant, Xxh3Scheme, declare,
    format, hash,
};

/// The parallel builds the classic, blocked and counting filters share (`insert_parallel`,
/// `from_keys`) and the report each returns: [`bloomlab_parallel`].
#[cfg(feature = "std")]
pub use bloomlab_parallel as parallel;

#[cfg(all(feature = "blocked", feature = "std", target_has_atomic = "64"))]
pub use bloomlab_blocked::AtomicBlockedBloomFilter;

#[cfg(feature = "keyed")]
pub use bloomlab_keyed::{KeyedBlockedBloomFilter, KeyedBloomFilter, Sip64Scheme, SipScheme};

/// What the facade derives from its one list of variants (below): each variant's re-exports,
/// its formulas under [`math`], its crate under [`variants`], and [`for_each_variant!`]. `$d`
/// is a `$`, for the generated macro's own metavariables.
macro_rules! variants {
    ($d:tt; $(
        $tag:ident $ty:ident $scheme:ident = $name:ident $feat:literal $krate:ident
        { $($export:ident),* } $($math:ident)?;
    )*) => {
        $(
            #[cfg(feature = $feat)]
            pub use $krate::{$($export),*};
        )*

        /// Every formula: the shared ones (`bloomlab_core::math`, flat and by module) and each
        /// variant's own, under the variant's name (`math::blocked::blocked_fpr_exact`).
        pub mod math {
            pub use bloomlab_core::math::*;
            $($(
                #[cfg(feature = $feat)]
                pub use $krate::$math as $name;
            )?)*
        }

        /// Each variant's crate, whole, for what the flat re-exports leave out (constants,
        /// views, statistics types).
        pub mod variants {
            #[cfg(feature = "jvm")]
            pub use bloomlab_jvm as jvm;
            #[cfg(feature = "keyed")]
            pub use bloomlab_keyed as keyed;
            $(
                #[cfg(feature = $feat)]
                pub use $krate as $name;
            )*
        }

        /// The one list of the workspace's filter variants, in the order reports list them:
        /// calls `$m!` with the facade's path (`$crate`) and, for each variant, its
        /// [`Variant`] tag, its type's name in this crate, and `scheme` where the type is
        /// generic over its hash scheme (`fixed` where its format fixes the scheme). Each type
        /// implements [`Declared`](bloomlab_core::Declared), which says the rest; the
        /// any-filter decoder, the command's formats, the harness's registry and the Python
        /// classes are derived from this list. Adding a variant: its crate, its dependency and
        /// feature in this crate's manifest, and one line in the list in this crate's source.
        ///
        /// Only with every variant's feature (the default).
        ///
        /// ```
        /// use bloomlab::Declared;
        ///
        /// macro_rules! names {
        ///     ($k:tt; $($tag:ident $ty:ident $scheme:ident;)*) => {
        ///         [$(<$k::$ty as Declared>::DECLARATION.name()),*]
        ///     };
        /// }
        /// let names = bloomlab::for_each_variant!(names);
        /// assert_eq!(names.len(), bloomlab::Variant::ALL.len());
        /// assert_eq!(names[0], "classic");
        /// ```
        #[cfg(all($(feature = $feat),*))]
        #[macro_export]
        macro_rules! for_each_variant {
            ($d m:ident) => {
                $d m! { $d crate; $($tag $ty $scheme;)* }
            };
        }
    };
}

// The one list: tag, type and scheme (as `for_each_variant!` hands them on) = module name,
// feature, crate, its re-exports, and `math` where it has formulas of its own.
variants! { $;
    Classic BloomFilter scheme = classic "classic" bloomlab_classic { BloomFilter, BloomFilterView };
    Blocked BlockedBloomFilter scheme = blocked "blocked" bloomlab_blocked { BlockedBloomFilter, BlockedBloomFilterView, BlockedFilterBytes } math;
    Sbbf Sbbf fixed = sbbf "sbbf" bloomlab_sbbf { Sbbf } math;
    Counting CountingBloomFilter scheme = counting "counting" bloomlab_counting { CountingBloomFilter } math;
    Cuckoo CuckooFilter scheme = cuckoo "cuckoo" bloomlab_cuckoo { CuckooFilter } math;
    Scalable ScalableBloomFilter scheme = scalable "scalable" bloomlab_scalable { ScalableBloomFilter, ScalableConfig } math;
    Expandable ExpandableFilter scheme = expandable "expandable" bloomlab_expandable { ExpandableFilter } math;
    Ribbon RibbonFilter scheme = ribbon "ribbon" bloomlab_ribbon { RibbonFilter, RibbonView } math;
}

#[cfg(feature = "jvm")]
pub use bloomlab_jvm::{
    GuavaBloomFilter, GuavaSizing, GuavaStrategy, JvmFilter, JvmFormat, SparkBloomFilter,
    SparkVersion,
};

/// The README's code blocks, compiled and run as doctests so the front page cannot rot.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;
