//! Spark's and Guava's filter formats, through `bloomlab-jvm`: the one module that knows them.

use bloomlab_jvm::{
    GuavaBloomFilter, JvmFilter as Decoded, JvmFormat, SparkBloomFilter, SparkVersion,
};

use bloomlab_core::Filter;

use crate::keys::TypedKey;
use crate::summary::{Count, Summary};
use crate::{BuildFormat, CliError};

/// A decoded Spark or Guava filter.
#[derive(Debug)]
pub struct JvmFilter(Decoded);

/// Whether the bytes start as a Spark filter (a big-endian `int` version 1 or 2) or a Guava
/// filter (a strategy ordinal 0 or 1, then a non-zero `k`) does.
pub fn sniff(bytes: &[u8]) -> bool {
    JvmFormat::detect(bytes).is_some()
}

/// The length in bytes the header at the start of `head` announces for a Spark or Guava filter
/// (header and words), if it is one: Spark `version, k, [seed,] words` (big-endian `int`s),
/// Guava `strategy, k` (bytes) then `words` (a big-endian `int`); 8 bytes per word.
pub fn announced_len(head: &[u8]) -> Option<u64> {
    let int_at = |at: usize| -> Option<u64> {
        let b: [u8; 4] = head.get(at..at + 4)?.try_into().ok()?;
        u64::try_from(i32::from_be_bytes(b)).ok()
    };
    let words_at = match JvmFormat::detect(head)? {
        JvmFormat::Spark(bloomlab_jvm::SparkVersion::V1) => 8,
        JvmFormat::Spark(_) => 12,
        JvmFormat::Guava(_) => 2,
    };
    Some(words_at as u64 + 4 + 8 * int_at(words_at)?)
}

/// Build a Spark or Guava filter sized as the JVM's `create(n, fpp)` does, the keys put as
/// `putLong` / `putString` / `putBinary` (Spark) or through `longFunnel` /
/// `stringFunnel(UTF_8)` / `byteArrayFunnel` (Guava's default strategy, `MURMUR128_MITZ_64`).
pub fn build(
    format: BuildFormat,
    keys: &[TypedKey<'_>],
    n: u64,
    fpr: f64,
) -> Result<Vec<u8>, CliError> {
    let invalid = |e: bloomlab_core::Error| CliError::Invalid(format!("{format}: {e}"));
    match format {
        BuildFormat::SparkV1 | BuildFormat::SparkV2 => {
            let version = if format == BuildFormat::SparkV1 {
                SparkVersion::V1
            } else {
                SparkVersion::V2
            };
            let f = SparkBloomFilter::create(n, fpr, version).map_err(invalid)?;
            let (long, string) = (SparkBloomFilter::put_long, SparkBloomFilter::put_string);
            Ok(filled(f, keys, long, string).to_bytes())
        }
        BuildFormat::Guava => {
            let f = GuavaBloomFilter::create(n, fpr).map_err(invalid)?;
            let (long, string) = (GuavaBloomFilter::put_long, GuavaBloomFilter::put_string);
            Ok(filled(f, keys, long, string).to_bytes())
        }
        ours => Err(CliError::Invalid(format!("{ours} is not a JVM format"))),
    }
}

/// `f` holding `keys`: longs and strings through the library's own `long` and `string` puts,
/// byte keys through [`Filter::insert_bytes`] (Spark's `putBinary`, Guava's
/// `byteArrayFunnel`).
fn filled<F: Filter>(
    mut f: F,
    keys: &[TypedKey<'_>],
    long: fn(&mut F, i64) -> bool,
    string: fn(&mut F, &str) -> bool,
) -> F {
    for k in keys {
        match *k {
            TypedKey::I64(v) => long(&mut f, v),
            TypedKey::Str(s) => string(&mut f, s),
            TypedKey::Bytes(b) => {
                f.insert_bytes(b).expect("a JVM filter takes every key");
                true
            }
        };
    }
    f
}

/// Decode a Spark or Guava filter.
pub fn decode(bytes: &[u8]) -> Result<JvmFilter, CliError> {
    Decoded::from_bytes(bytes).map(JvmFilter).map_err(|e| {
        let what = JvmFormat::detect(bytes).map_or_else(|| "JVM".to_string(), JvmFormat::name);
        CliError::BadFile(format!("not a valid {what} filter: {e}"))
    })
}

impl JvmFilter {
    /// The JVM's `mightContain` for this key.
    pub fn might_contain(&self, key: TypedKey<'_>) -> bool {
        match (&self.0, key) {
            (Decoded::Spark(f), TypedKey::I64(v)) => f.might_contain_long(v),
            (Decoded::Spark(f), TypedKey::Str(s)) => f.might_contain_string(s),
            (Decoded::Spark(f), TypedKey::Bytes(b)) => f.might_contain_binary(b),
            (Decoded::Guava(f), TypedKey::I64(v)) => f.might_contain_long(v),
            (Decoded::Guava(f), TypedKey::Str(s)) => f.might_contain_string(s),
            (Decoded::Guava(f), TypedKey::Bytes(b)) => f.might_contain_bytes(b),
        }
    }

    /// Put one key, as [`build`] does.
    pub fn insert(&mut self, key: TypedKey<'_>) {
        match (&mut self.0, key) {
            (Decoded::Spark(f), TypedKey::I64(v)) => f.put_long(v),
            (Decoded::Spark(f), TypedKey::Str(s)) => f.put_string(s),
            (Decoded::Spark(f), TypedKey::Bytes(b)) => f.put_binary(b),
            (Decoded::Guava(f), TypedKey::I64(v)) => f.put_long(v),
            (Decoded::Guava(f), TypedKey::Str(s)) => f.put_string(s),
            (Decoded::Guava(f), TypedKey::Bytes(b)) => {
                f.insert_bytes(b).expect("a JVM filter takes every key");
                true
            }
        };
    }

    /// Spark's `mergeInPlace` or Guava's `putAll`: refused, with the first difference, unless
    /// both are the same format with the same bits, k (and Spark V2's seed, Guava's strategy).
    pub fn merge(&mut self, other: &JvmFilter) -> Result<(), CliError> {
        let refused = |e: bloomlab_core::Error| CliError::Invalid(format!("cannot merge: {e}"));
        match (&mut self.0, &other.0) {
            (Decoded::Spark(a), Decoded::Spark(b)) => a.merge_in_place(b).map_err(refused),
            (Decoded::Guava(a), Decoded::Guava(b)) => a.put_all(b).map_err(refused),
            (a, b) => Err(CliError::Invalid(format!(
                "cannot merge a {} filter with a {} filter",
                a.format().name(),
                b.format().name()
            ))),
        }
    }

    /// The bytes, in the form the filter was read in.
    pub fn to_bytes(&self) -> Vec<u8> {
        self.0.to_bytes()
    }

    /// What `inspect` prints: the JVM's own figures (`expectedFpp` = fill^k; Guava's
    /// `approximateElementCount`, and for Spark the same estimate from the fill).
    pub fn summary(&self) -> Summary {
        let (bits, k, set, fpp) = match &self.0 {
            Decoded::Spark(f) => (
                f.bit_size(),
                f.num_hash_functions(),
                f.cardinality(),
                f.expected_fpp(),
            ),
            Decoded::Guava(f) => (
                f.bit_size(),
                f.num_hash_functions(),
                f.cardinality(),
                f.expected_fpp(),
            ),
        };
        let count = match &self.0 {
            Decoded::Guava(f) => f.approximate_element_count() as f64,
            // −(m/k)·ln(1 − X/m), as Guava's approximateElementCount computes it.
            Decoded::Spark(_) => {
                -(bits as f64 / f64::from(k)) * (1.0 - set as f64 / bits as f64).ln()
            }
        };
        Summary {
            format: self.0.format().name(),
            k,
            k_meaning: "probes per key",
            bits,
            fill: Some(set as f64 / bits as f64),
            fpr: fpp,
            fpr_source: "the JVM's expectedFpp: fill^k",
            count: Count::Estimated(count),
            details: None,
        }
    }
}
