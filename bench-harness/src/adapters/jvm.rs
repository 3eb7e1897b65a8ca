//! Spark's and Guava's Bloom filters (`bloomlab-jvm`, bit-exact with the JVM libraries), so the
//! tables show what these formats cost beside our classic filter: the JVM's sizing (the same
//! m and k as our classic filter's at the same target, rounded up to 64-bit words), its Murmur3
//! hashing and its probe arithmetic (a 64-bit modulo per probe).
//!
//! Keys go in as a JVM user puts them: an 8-byte key (`--keys u64`) as a long (Spark's
//! `putLong` / Guava's `longFunnel()`, which hash its 8 little-endian bytes), any other key as
//! its bytes (Spark's `putBinary` / Guava's `putBytes`).

use crate::error::Error;
use bloomlab_jvm::{GuavaBloomFilter, SparkBloomFilter, SparkVersion};

use super::{Adapter, Entry, Info, Kind, Spec};

/// The `insert`, `contains`, `theoretical_fpr` and `describe` of an adapter whose `.0` is a
/// JVM filter: an 8-byte key as a long (`put_long` / `might_contain_long`), any other key as
/// its bytes through the filter's `$put` / `$might_contain`; the FPR its `expected_fpp` says;
/// its bits, probes and `$form` (the library and its format or strategy).
macro_rules! jvm_methods {
    ($put:ident, $might_contain:ident, $form:ident) => {
        #[inline(always)]
        fn insert(&mut self, key: &[u8]) -> bool {
            match <[u8; 8]>::try_from(key) {
                Ok(k) => self.0.put_long(i64::from_le_bytes(k)),
                Err(_) => self.0.$put(key),
            };
            true
        }

        #[inline(always)]
        fn contains(&self, key: &[u8]) -> bool {
            match <[u8; 8]>::try_from(key) {
                Ok(k) => self.0.might_contain_long(i64::from_le_bytes(k)),
                Err(_) => self.0.$might_contain(key),
            }
        }

        fn theoretical_fpr(&self) -> Option<f64> {
            Some(self.0.expected_fpp())
        }

        fn describe(&self) -> String {
            format!(
                "m={} k={} {}",
                self.0.bit_size(),
                self.0.num_hash_functions(),
                $form(&self.0)
            )
        }
    };
}

/// A Spark filter in format V2 (`V2 = true`, Spark 4.1+'s default) or V1.
#[derive(Debug)]
pub struct Spark<const V2: bool>(SparkBloomFilter);

impl<const V2: bool> Adapter for Spark<V2> {
    fn new_empty(spec: &Spec) -> Option<Result<Self, Error>> {
        let version = if V2 {
            SparkVersion::V2
        } else {
            SparkVersion::V1
        };
        Some(
            SparkBloomFilter::create(spec.n, spec.fpr, version)
                .map(Spark)
                .map_err(Error::from),
        )
    }

    jvm_methods!(put_binary, might_contain_binary, spark_form);
}

/// `spark V1` or `spark V2`.
fn spark_form(f: &SparkBloomFilter) -> String {
    format!("spark {}", f.version())
}

/// A Guava filter (`MURMUR128_MITZ_64`, Guava's `create`).
#[derive(Debug)]
pub struct Guava(GuavaBloomFilter);

impl Adapter for Guava {
    fn new_empty(spec: &Spec) -> Option<Result<Self, Error>> {
        Some(
            GuavaBloomFilter::create(spec.n, spec.fpr)
                .map(Guava)
                .map_err(Error::from),
        )
    }

    jvm_methods!(put_bytes, might_contain_bytes, guava_form);
}

/// `guava` and its strategy's name.
fn guava_form(f: &GuavaBloomFilter) -> String {
    format!("guava {}", f.strategy().name())
}

/// Spark's format V1 (Spark 2.0–4.0; 32-bit probe arithmetic).
pub fn spark_v1_entry() -> Entry {
    Entry::new::<Spark<false>>(Info {
        note: "SparkBloomFilter::create(n, p, V1), bit-exact with Spark's BloomFilter format V1: Spark's sizing, Murmur3 x86_32 twice, 32-bit probes h1 + i·h2, a 64-bit modulo per probe; keys through putLong",
        ..Info::base("spark-v1", "bloomlab-jvm", Kind::Bloom)
    })
}

/// Spark's format V2 (Spark 4.1+'s default; 64-bit probe arithmetic).
pub fn spark_v2_entry() -> Entry {
    Entry::new::<Spark<true>>(Info {
        note: "SparkBloomFilter::create(n, p, V2), bit-exact with Spark's BloomFilter format V2 (Spark 4.1+'s default): Spark's sizing, Murmur3 x86_32 twice, 64-bit probes, a 64-bit modulo per probe; keys through putLong",
        ..Info::base("spark-v2", "bloomlab-jvm", Kind::Bloom)
    })
}

/// Guava's `BloomFilter.create(longFunnel(), n, p)`.
pub fn guava_entry() -> Entry {
    Entry::new::<Guava>(Info {
        note: "GuavaBloomFilter::create(n, p), bit-exact with Guava's BloomFilter (MURMUR128_MITZ_64): Guava's sizing, Murmur3 x64_128 once, 64-bit probes, a 64-bit modulo per probe; keys through longFunnel()",
        ..Info::base("guava", "bloomlab-jvm", Kind::Bloom)
    })
}
