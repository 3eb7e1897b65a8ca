//! Apache Spark's and Guava's Bloom filters, bit for bit, in Rust.
//!
//! - [`SparkBloomFilter`]: `org.apache.spark.util.sketch.BloomFilter`, serialized format V1
//!   (Spark 2.0 – 4.0, still read and written by later releases) and V2 (the default of
//!   `BloomFilter.create` since Spark 4.1) — see [`SparkVersion`] for how they differ.
//! - [`GuavaBloomFilter`]: `com.google.common.hash.BloomFilter` with both of Guava's
//!   strategies ([`GuavaStrategy`]) and the four standard funnels (long, int, UTF-8 string,
//!   byte array).
//! - [`JvmFilter`] / [`JvmFormat::detect`]: whichever of the three forms a byte buffer holds.
//! - [`murmur`]: the two Murmur3 variants they hash with; [`sizing`]: their sizing and
//!   expected-FPR formulas in Java's arithmetic.
//!
//! # Guarantees
//!
//! For the same `create` arguments and the same keys, the bits — and so the serialized
//! bytes — equal the JVM library's, and every query answers as the JVM's does on the same
//! filter. This is checked against the real jars (Spark's `spark-sketch` 4.x, Guava 31.1):
//! `tests/known_answers.rs` compares our bytes with the jars' for Spark V1, V2 and Guava ×
//! long / string / byte-array keys × (10³, 3 %), (10⁵, 1 %), (10⁴, 0.1 %), and our answers
//! with theirs on 10⁴ probes each; `interop/run.sh` has the jars read files this crate wrote
//! and find every member. Keys include negative longs, multi-byte UTF-8 and empty strings and
//! arrays.
//!
//! Decoding never panics and never accepts a filter the JVM could not have written (an
//! unknown version or strategy, `k = 0`, `k` beyond [`MAX_SPARK_HASH_FUNCTIONS`] /
//! [`MAX_GUAVA_HASH_FUNCTIONS`], a word count below 1); the announced length is checked
//! against the input before anything is allocated, and a stream ([`SparkBloomFilter::read_from`])
//! allocates only as bytes arrive.
//!
//! # Formats (all integers big-endian, as Java's `DataOutputStream` writes them)
//!
//! | form | header | then |
//! |---|---|---|
//! | Spark V1 | `int 1`, `int k` | `int words`, `words × long` |
//! | Spark V2 | `int 2`, `int k`, `int seed` | `int words`, `words × long` |
//! | Guava | `byte strategy` (0 or 1), `unsigned byte k` | `int words`, `words × long` |
//!
//! Bit `i` of the filter is bit `i mod 64` of word `i / 64`. These forms are the JVM's, not
//! ours: nothing here can change them, and none carries a checksum or an item count.
//!
//! # Complexity
//!
//! Inserts and queries: one or two Murmur3 passes over the key and `k` bit accesses (each a
//! 64-bit modulo, as the JVM computes it). Decoding and merging: linear in the words.
//!
//! ```
//! use bloomlab_core::Filter;
//! use bloomlab_jvm::{GuavaBloomFilter, JvmFilter, JvmFormat, SparkBloomFilter, SparkVersion};
//!
//! let mut spark = SparkBloomFilter::create(10_000, 0.01, SparkVersion::V1)?;
//! let mut guava = GuavaBloomFilter::create(10_000, 0.01)?;
//! for i in -5_000i64..5_000 {
//!     spark.put_long(i);
//!     guava.put_long(i);
//! }
//! // Both size for 1 % with the same rule: 95 850 bits (rounded up to words) and k = 7.
//! assert_eq!((spark.bit_size(), spark.num_hash_functions()), (95_872, 7));
//! assert_eq!((guava.bit_size(), guava.num_hash_functions()), (95_872, 7));
//!
//! // The form is read from the bytes; no false negatives after the round trip.
//! let back = JvmFilter::from_bytes(&spark.to_bytes())?;
//! assert_eq!(back.format(), JvmFormat::Spark(SparkVersion::V1));
//! assert!((-5_000i64..5_000).all(|i| back.as_filter().might_contain(&i)));
//!
//! // Near 1 % of 100 000 non-members test positive: within 5σ (σ = √(N·p·(1−p)) ≈ 31.5).
//! let fp = (1i64 << 40..(1i64 << 40) + 100_000).filter(|&i| guava.might_contain_long(i)).count();
//! let expected = 100_000.0 * guava.expected_fpp();
//! assert!((fp as f64 - expected).abs() < 5.0 * 31.5, "{fp} vs {expected}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Why
//!
//! Spark ships its filters as bytes between executors and in query plans
//! (`DataFrame.stat.bloomFilter`, runtime join filters); JVM services persist Guava's with
//! `writeTo`. A Rust service that must answer from such a filter, or build one a JVM loads,
//! needs every bit to agree; the JVMs' own quirks (Spark's Murmur3 tail, Java's signed 32-bit
//! wrap-around in V1 and `MURMUR128_MITZ_32`, `Math.round`'s ties) are therefore reproduced
//! rather than cleaned up, and tested against the jars rather than against our reading of
//! their sources.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod murmur;
pub mod sizing;

mod guava;
mod spark;
mod words;

use std::fmt::Display;

use bloomlab_core::{DecodeError, Error, Filter, Result};

pub use guava::{GuavaBloomFilter, GuavaSizing, GuavaStrategy, MAX_GUAVA_HASH_FUNCTIONS};
pub use spark::{SparkBloomFilter, SparkVersion};

/// Largest `k` this crate builds or reads for a Spark filter. Spark stores `k` as an `int`;
/// `create(n, fpp)` never chooses more than 1 074 (at the smallest positive `fpp`), and a
/// query costs up to `k` probes, so a decoded filter with more is refused rather than allowed
/// to make every query cost millions of steps.
pub const MAX_SPARK_HASH_FUNCTIONS: u32 = 1 << 16;

/// A stream could not be read into a filter.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The stream failed.
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// The bytes are not a valid filter (a stream that ends early is
    /// [`DecodeError::Truncated`]).
    #[error("cannot decode filter: {0}")]
    Decode(#[from] DecodeError),
}

/// Which JVM form a byte buffer holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum JvmFormat {
    /// Spark's `BloomFilter`, this format version.
    Spark(SparkVersion),
    /// Guava's `BloomFilter`, this strategy.
    Guava(GuavaStrategy),
}

impl JvmFormat {
    /// Recognise the form from the first bytes: Spark's start with the `int` version
    /// (`00 00 00 01` or `00 00 00 02`), Guava's with the strategy ordinal (0 or 1) and a
    /// non-zero `k`. The two cannot be confused: a Spark filter's second byte is 0, a valid
    /// Guava filter's never is. `None` when neither matches (the full decode may still refuse
    /// a buffer this accepts).
    ///
    /// ```
    /// use bloomlab_jvm::{GuavaStrategy, JvmFormat, SparkVersion};
    /// assert_eq!(JvmFormat::detect(&[0, 0, 0, 2, 0, 0, 0, 5]), Some(JvmFormat::Spark(SparkVersion::V2)));
    /// assert_eq!(JvmFormat::detect(&[1, 5, 0, 0]), Some(JvmFormat::Guava(GuavaStrategy::Murmur128Mitz64)));
    /// assert_eq!(JvmFormat::detect(b"PAR1"), None);
    /// ```
    pub fn detect(bytes: &[u8]) -> Option<JvmFormat> {
        match bytes {
            [0, 0, 0, v, ..] if SparkVersion::from_number(i32::from(*v)).is_some() => {
                SparkVersion::from_number(i32::from(*v)).map(JvmFormat::Spark)
            }
            [s, k, ..] if *k != 0 => GuavaStrategy::from_ordinal(*s).map(JvmFormat::Guava),
            _ => None,
        }
    }

    /// A short name: `spark v1`, `spark v2`, `guava` (with the strategy for ordinal 0:
    /// `guava MURMUR128_MITZ_32`).
    pub fn name(self) -> String {
        match self {
            JvmFormat::Spark(v) => format!("spark {v}"),
            JvmFormat::Guava(GuavaStrategy::Murmur128Mitz64) => "guava".to_owned(),
            JvmFormat::Guava(s) => format!("guava {}", s.name()),
        }
    }
}

/// A filter in any of the JVM forms, read from bytes whose form is detected.
#[derive(Clone, Debug, PartialEq)]
pub enum JvmFilter {
    /// A Spark filter.
    Spark(SparkBloomFilter),
    /// A Guava filter.
    Guava(GuavaBloomFilter),
}

impl JvmFilter {
    /// Detect the form ([`JvmFormat::detect`]) and decode it.
    ///
    /// # Errors
    /// [`DecodeError::BadMagic`] when the bytes are neither form, else the decoder's error.
    pub fn from_bytes(bytes: &[u8]) -> Result<JvmFilter, DecodeError> {
        match JvmFormat::detect(bytes) {
            Some(JvmFormat::Spark(_)) => SparkBloomFilter::from_bytes(bytes).map(JvmFilter::Spark),
            Some(JvmFormat::Guava(_)) => GuavaBloomFilter::from_bytes(bytes).map(JvmFilter::Guava),
            None => {
                let mut found = [0u8; 4];
                let n = bytes.len().min(4);
                found[..n].copy_from_slice(&bytes[..n]);
                Err(DecodeError::BadMagic { found })
            }
        }
    }

    /// The form.
    pub fn format(&self) -> JvmFormat {
        match self {
            JvmFilter::Spark(f) => JvmFormat::Spark(f.version()),
            JvmFilter::Guava(f) => JvmFormat::Guava(f.strategy()),
        }
    }

    /// The filter behind the common trait.
    pub fn as_filter(&self) -> &dyn Filter {
        match self {
            JvmFilter::Spark(f) => f,
            JvmFilter::Guava(f) => f,
        }
    }

    /// Number of bits `m`.
    pub fn bit_size(&self) -> u64 {
        match self {
            JvmFilter::Spark(f) => f.bit_size(),
            JvmFilter::Guava(f) => f.bit_size(),
        }
    }

    /// Number of probes `k`.
    pub fn num_hash_functions(&self) -> u32 {
        match self {
            JvmFilter::Spark(f) => f.num_hash_functions(),
            JvmFilter::Guava(f) => f.num_hash_functions(),
        }
    }

    /// Number of set bits (the fill is this over [`bit_size`](Self::bit_size)).
    pub fn cardinality(&self) -> u64 {
        match self {
            JvmFilter::Spark(f) => f.cardinality(),
            JvmFilter::Guava(f) => f.cardinality(),
        }
    }

    /// The serialized bytes, in the form they were read in.
    pub fn to_bytes(&self) -> Vec<u8> {
        match self {
            JvmFilter::Spark(f) => f.to_bytes(),
            JvmFilter::Guava(f) => f.to_bytes(),
        }
    }
}

/// What the two JVM-compatible filters share, written once for both (each has the fields
/// `count`, `bits`, `k`, `fpp`, the expected insertions, and the methods `write_to`,
/// `encoded_len`, `check_compatible` and `scheme_descriptor`):
///
/// - the inherent accessors `bit_size`, `num_hash_functions`, `cardinality`, `words`,
///   `expected_fpp`, `is_compatible` (under the rules `compatible`) and `to_bytes`, their
///   docs naming the library `lib`;
/// - `Debug`: the type's name, the `head` fields, `bits`, `k`, the `mid` fields, `set_bits`
///   and `count`;
/// - `impl Filter`: `insert` and `contains` name its byte-key methods, `capacity` the field
///   of expected insertions (the k-optimal load stands in when a filter read from bytes has
///   none). The variant is always [`Variant::Classic`](bloomlab_core::Variant).
macro_rules! jvm_filter_impl {
    (
        $(#[$doc:meta])*
        $ty:ident ($lib:literal) {
            insert: $insert:ident,
            contains: $contains:ident,
            capacity: $capacity:ident,
            compatible: $compatible:literal,
            $(#[$merge_doc:meta])*
            merge: $merge:ident,
            debug: [$($head:ident),*] [$($mid:ident),*] $(,)?
        }
    ) => {
        impl $ty {
            /// Number of bits `m`: 64 × the word count.
            pub fn bit_size(&self) -> u64 {
                self.bits.bit_size()
            }

            /// Number of probes `k`.
            pub fn num_hash_functions(&self) -> u32 {
                self.k
            }

            /// Number of set bits.
            pub fn cardinality(&self) -> u64 {
                self.bits.ones()
            }

            /// The words of the bit array, bit `i` at bit `i mod 64` of word `i / 64`.
            pub fn words(&self) -> &[u64] {
                self.bits.as_slice()
            }

            #[doc = concat!($lib, "'s `expectedFpp()`: `(set bits / m)^k`.")]
            pub fn expected_fpp(&self) -> f64 {
                crate::sizing::expected_fpp(self.bits.ones(), self.bit_size(), self.k)
            }

            #[doc = concat!($lib, "'s `isCompatible`: ", $compatible)]
            pub fn is_compatible(&self, other: &$ty) -> bool {
                self.check_compatible(other).is_ok()
            }

            $(#[$merge_doc])*
            pub fn $merge(&mut self, other: &$ty) -> bloomlab_core::Result<()> {
                self.check_compatible(other)?;
                self.bits.or(&other.bits);
                self.count = self.count.saturating_add(other.count);
                Ok(())
            }

            #[doc = concat!("The bytes ", $lib, "'s `writeTo` writes.")]
            pub fn to_bytes(&self) -> Vec<u8> {
                let mut out = Vec::with_capacity(self.encoded_len());
                self.write_to(&mut out)
                    .expect("writing to a Vec cannot fail");
                out
            }
        }

        impl ::std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct(stringify!($ty))
                    $(.field(stringify!($head), &self.$head))*
                    .field("bits", &self.bit_size())
                    .field("k", &self.k)
                    $(.field(stringify!($mid), &self.$mid))*
                    .field("set_bits", &self.bits.ones())
                    .field("count", &self.count)
                    .finish()
            }
        }

        $(#[$doc])*
        impl bloomlab_core::Filter for $ty {
            fn insert_bytes(&mut self, key: &[u8]) -> bloomlab_core::Result<()> {
                self.$insert(key);
                Ok(())
            }

            fn might_contain_bytes(&self, key: &[u8]) -> bool {
                self.$contains(key)
            }

            fn len(&self) -> u64 {
                self.count
            }

            fn size_in_bytes(&self) -> usize {
                self.bits.len_words() * 8
            }

            fn expected_fpr(&self) -> f64 {
                self.expected_fpp()
            }

            fn params(&self) -> bloomlab_core::FilterParams {
                bloomlab_core::FilterParams {
                    variant: bloomlab_core::Variant::Classic,
                    capacity: self
                        .$capacity
                        .unwrap_or_else(|| crate::k_optimal_load(self.bit_size(), self.k)),
                    target_fpr: self.fpp,
                    table_bits: self.bit_size(),
                    hashes: self.k,
                    scheme: self.scheme_descriptor(),
                }
            }
        }
    };
}
pub(crate) use jvm_filter_impl;

/// `Err(Incompatible)` with the message of the first rule whose two sides differ, or `Ok`:
/// each rule is a JVM library's message, `{a}` and `{b}` standing for this filter's value and
/// the other's as the message prints them (so the sides are compared as printed).
pub(crate) fn check_rules(rules: &[(String, &dyn Display, &dyn Display)]) -> Result<()> {
    for (why, a, b) in rules {
        let (a, b) = (a.to_string(), b.to_string());
        if a != b {
            return Err(Error::Incompatible(
                why.replace("{a}", &a).replace("{b}", &b),
            ));
        }
    }
    Ok(())
}

/// A JVM library's range of `k`, `1..=max`, and how its refusal words it ("{k} hash functions:
/// {takes} 1..={max}").
pub(crate) type KRule = (u32, &'static str);

/// `k` if the library takes it, else why not.
pub(crate) fn check_k(k: i64, (max, takes): KRule) -> std::result::Result<u32, String> {
    match u32::try_from(k) {
        Ok(k) if (1..=max).contains(&k) => Ok(k),
        _ => Err(format!("{k} hash functions: {takes} 1..={max}")),
    }
}

/// [`check_k`] for a decoded `numHashFunctions` field.
pub(crate) fn decode_k(k: i64, rule: KRule) -> std::result::Result<u32, DecodeError> {
    check_k(k, rule).map_err(|reason| DecodeError::field("numHashFunctions", reason))
}

/// The load at which `k` is the optimal probe count for `m` bits, `round(m · ln 2 / k)`: the
/// capacity reported for a filter read from bytes, which record no expected count.
pub(crate) fn k_optimal_load(bit_size: u64, k: u32) -> u64 {
    ((bit_size as f64 * std::f64::consts::LN_2 / f64::from(k)).round() as u64).max(1)
}
