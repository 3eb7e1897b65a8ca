//! Apache Spark's Bloom filter (`org.apache.spark.util.sketch.BloomFilter`), format V1 and V2.

use std::fmt;
use std::io::{self, Read, Write};

use bloomlab_core::{DecodeError, Error, Result, SchemeDescriptor, SchemeId};

use crate::murmur::{spark_hash_bytes, spark_hash_long};
use crate::sizing;
use crate::words::{Cursor, Words, read_i32};
use crate::{MAX_SPARK_HASH_FUNCTIONS, ReadError};

/// The serialized format version of a Spark filter: the first big-endian `int` of its bytes.
///
/// Both versions hash with Spark's Murmur3 x86_32 ([`crate::murmur`]) into `h1` (from the seed)
/// and `h2` (seeded with `h1`), and both set bit `index mod m` of an array of `m` bits (a
/// multiple of 64). They differ in the probe indices and the header:
///
/// | | V1 (Spark 2.0 – 4.0; still read and written by 4.1+) | V2 (Spark 4.1+, the default of `create`) |
/// |---|---|---|
/// | bytes | `1`, `k`, words, words × `long` | `2`, `k`, `seed`, words, words × `long` |
/// | seed | always 0 | recorded (`create` uses 0) |
/// | probe `i` | 32-bit `c = h1 + i·h2`, `i = 1..=k` | 64-bit `c += h2` from `c = h1·(2^31 − 1)`, `k` times |
/// | index | `(c < 0 ? ~c : c) mod m` | `(c < 0 ? ~c : c) mod m` (the flip does not carry to the next probe) |
///
/// V1's 32-bit index never reaches bits above 2^31, so V1 filters larger than 256 MiB fill
/// only their first 2^31 bits; V2 (SPARK-47547) reaches all of them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SparkVersion {
    /// Format version 1.
    V1,
    /// Format version 2.
    V2,
}

impl SparkVersion {
    /// The version number the bytes start with.
    pub fn number(self) -> i32 {
        match self {
            SparkVersion::V1 => 1,
            SparkVersion::V2 => 2,
        }
    }

    /// The version with this number, if Spark has it.
    pub fn from_number(n: i32) -> Option<SparkVersion> {
        match n {
            1 => Some(SparkVersion::V1),
            2 => Some(SparkVersion::V2),
            _ => None,
        }
    }
}

impl fmt::Display for SparkVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}", self.number())
    }
}

/// A Spark Bloom filter, bit-exact with `org.apache.spark.util.sketch.BloomFilter`.
///
/// Built with [`create`](Self::create) (Spark's `BloomFilter.create(n, fpp)`, for either
/// version) or [`create_with_bits`](Self::create_with_bits) (Spark's `create(version, n,
/// numBits, seed)`, which its runtime join filters use); read with
/// [`from_bytes`](Self::from_bytes) / [`read_from`](Self::read_from) from the bytes Spark's
/// `writeTo` wrote, and written with [`to_bytes`](Self::to_bytes) / [`write_to`](Self::write_to)
/// in the form Spark's `readFrom` reads. Same keys, same bits, same bytes, same answers.
///
/// # Keys
///
/// [`put_long`](Self::put_long) is Spark's `putLong` (Spark widens `int`, `short` and `byte` to
/// `long`: pass them as `i64`); [`put_string`](Self::put_string) is `putString` (the UTF-8 bytes);
/// [`put_binary`](Self::put_binary) is `putBinary`. `putString(s)` is `putBinary(utf8(s))`, and
/// `putLong(v)` hashes exactly as `putBinary` of `v`'s eight little-endian bytes — so the
/// [`Filter`](bloomlab_core::Filter) trait's byte keys (`insert_bytes` is `putBinary`) give Spark's
/// answers for strings, byte arrays and, through [`bloomlab_core::Key`]'s little-endian encoding,
/// `i64`/`u64` keys. Other integer widths are encoded by `Key` in fewer bytes and so differ from
/// Spark's widened `putLong`: use `put_long(v as i64)`.
///
/// # Complexity
///
/// An insert or query hashes the key twice (O(key length)) and touches `k` bits, each a
/// 64-bit division; a query stops at the first clear bit. Merging is O(m/64).
///
/// # Why
///
/// Spark ships these filters between executors and into query plans as bytes; a Rust service
/// that must probe one, or build one for a Spark job, needs the same bits — sizing, hashing,
/// probe arithmetic and byte order, including Java's signed 32-bit wrap-around that V1 keeps.
///
/// ```
/// use bloomlab_jvm::{SparkBloomFilter, SparkVersion};
///
/// let mut f = SparkBloomFilter::create(1_000, 0.03, SparkVersion::V2)?;
/// // Spark's sizing: 7 298 bits rounded up to 115 words, 5 probes.
/// assert_eq!((f.bit_size(), f.num_hash_functions()), (7_360, 5));
/// assert!(f.put_long(-42));
/// assert!(!f.put_long(-42)); // bits unchanged the second time, as Spark reports
/// assert!(f.might_contain_long(-42));
///
/// let bytes = f.to_bytes();
/// assert_eq!(&bytes[..4], &[0, 0, 0, 2]); // big-endian version 2
/// assert_eq!(SparkBloomFilter::from_bytes(&bytes)?, f);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct SparkBloomFilter {
    version: SparkVersion,
    k: u32,
    seed: i32,
    bits: Words,
    count: u64,
    expected_items: Option<u64>,
    fpp: Option<f64>,
}

fn check_items(expected_items: u64) -> Result<i64> {
    if expected_items == 0 {
        return Err(Error::ZeroItems);
    }
    i64::try_from(expected_items).map_err(|_| {
        Error::SizeOverflow(format!(
            "{expected_items} expected items: Spark's count is a long (at most 2^63 − 1)"
        ))
    })
}

fn check_fpp(fpp: f64) -> Result<()> {
    if fpp.is_finite() && fpp > 0.0 && fpp < 1.0 {
        Ok(())
    } else {
        Err(Error::InvalidFpr(fpp))
    }
}

impl SparkBloomFilter {
    /// Spark's `BloomFilter.create(expectedNumItems, fpp)` in the given format version (Spark
    /// 4.1+ writes V2 by default, Spark 2.0–4.0 only V1): `m = optimalNumOfBits(n, fpp)`
    /// rounded up to whole 64-bit words, `k = optimalNumOfHashFunctions(n, m)` (see
    /// [`crate::sizing`]), seed 0.
    ///
    /// # Errors
    /// `expected_items` 0 or above `i64::MAX`, `fpp` not strictly between 0 and 1, a size
    /// Spark refuses (no bits, more than 2^31 − 1 words) or `k` above
    /// [`MAX_SPARK_HASH_FUNCTIONS`].
    pub fn create(expected_items: u64, fpp: f64, version: SparkVersion) -> Result<Self> {
        check_fpp(fpp)?;
        let n = check_items(expected_items)?;
        let num_bits = sizing::optimal_num_of_bits(n, fpp);
        let num_bits = u64::try_from(num_bits)
            .ok()
            .filter(|&b| b > 0)
            .ok_or_else(|| {
                Error::invalid(
                    "fpp",
                    format!("{n} items at {fpp} need {num_bits} bits: Spark needs at least one"),
                )
            })?;
        let mut f = Self::create_with_bits(expected_items, num_bits, version, 0)?;
        f.fpp = Some(fpp);
        Ok(f)
    }

    /// Spark's `BloomFilter.create(version, expectedNumItems, numBits, seed)`: `numBits`
    /// rounded up to whole words, `k = optimalNumOfHashFunctions(n, numBits)`. V1 has no seed:
    /// `seed` must be 0 there (Spark ignores it).
    ///
    /// # Errors
    /// As [`create`](Self::create); a non-zero `seed` with V1.
    pub fn create_with_bits(
        expected_items: u64,
        num_bits: u64,
        version: SparkVersion,
        seed: i32,
    ) -> Result<Self> {
        let n = check_items(expected_items)?;
        if version == SparkVersion::V1 && seed != 0 {
            return Err(Error::invalid(
                "seed",
                "format V1 has no seed (it always hashes with seed 0)",
            ));
        }
        if num_bits == 0 {
            return Err(Error::invalid("num_bits", "must be positive"));
        }
        let words = num_bits.div_ceil(64);
        if words > i32::MAX as u64 {
            return Err(Error::SizeOverflow(format!(
                "{num_bits} bits need {words} words; Spark's bit array holds at most 2^31 − 1"
            )));
        }
        let m = i64::try_from(num_bits).map_err(|_| Error::invalid("num_bits", "above 2^63"))?;
        let k = sizing::optimal_num_of_hash_functions(n, m);
        let k = crate::check_k(k.into(), K_RULE)
            .map_err(|reason| Error::invalid("num_bits", reason))?;
        Ok(SparkBloomFilter {
            version,
            k,
            seed,
            bits: Words::zeroed(words as usize)?,
            count: 0,
            expected_items: Some(expected_items),
            fpp: None,
        })
    }

    /// The format version.
    pub fn version(&self) -> SparkVersion {
        self.version
    }

    /// The seed of `h1` (always 0 for V1).
    pub fn seed(&self) -> i32 {
        self.seed
    }

    /// The `(h1, h2)` pair of a long key.
    #[inline]
    fn long_pair(&self, v: i64) -> (i32, i32) {
        let h1 = spark_hash_long(v, self.seed);
        (h1, spark_hash_long(v, h1))
    }

    #[inline]
    fn bytes_pair(&self, b: &[u8]) -> (i32, i32) {
        let h1 = spark_hash_bytes(b, self.seed);
        (h1, spark_hash_bytes(b, h1))
    }

    fn put_pair(&mut self, pair: (i32, i32)) -> bool {
        self.count = self.count.saturating_add(1);
        let positions = probes(self.version, self.k, self.bits.bit_size(), pair);
        self.bits.set_all(positions)
    }

    fn contains_pair(&self, pair: (i32, i32)) -> bool {
        self.bits
            .get_all(probes(self.version, self.k, self.bits.bit_size(), pair))
    }

    /// Spark's `putLong`: whether any bit changed (if so, the key was certainly new).
    pub fn put_long(&mut self, v: i64) -> bool {
        self.put_pair(self.long_pair(v))
    }

    /// Spark's `putString`: the UTF-8 bytes, as [`put_binary`](Self::put_binary).
    pub fn put_string(&mut self, s: &str) -> bool {
        self.put_binary(s.as_bytes())
    }

    /// Spark's `putBinary`.
    pub fn put_binary(&mut self, b: &[u8]) -> bool {
        self.put_pair(self.bytes_pair(b))
    }

    /// Spark's `mightContainLong`.
    pub fn might_contain_long(&self, v: i64) -> bool {
        self.contains_pair(self.long_pair(v))
    }

    /// Spark's `mightContainString`.
    pub fn might_contain_string(&self, s: &str) -> bool {
        self.might_contain_binary(s.as_bytes())
    }

    /// Spark's `mightContainBinary`.
    pub fn might_contain_binary(&self, b: &[u8]) -> bool {
        self.contains_pair(self.bytes_pair(b))
    }

    fn check_compatible(&self, other: &SparkBloomFilter) -> Result<()> {
        let differ = |what| format!("different {what} ({{a}} and {{b}})");
        let versions = "cannot merge a Spark {a} filter with a {b} one";
        crate::check_rules(&[
            (versions.into(), &self.version, &other.version),
            (differ("bit sizes"), &self.bit_size(), &other.bit_size()),
            (differ("seeds"), &self.seed, &other.seed),
            (differ("numbers of hash functions"), &self.k, &other.k),
        ])
    }

    /// Spark's `intersectInPlace`: the bitwise AND, under the same rules. The count becomes
    /// the estimate from the fill ([`sizing::approximate_element_count`]).
    ///
    /// # Errors
    /// As [`merge_in_place`](Self::merge_in_place).
    pub fn intersect_in_place(&mut self, other: &SparkBloomFilter) -> Result<()> {
        self.check_compatible(other)?;
        self.bits.and(&other.bits);
        self.count = self.estimated_count();
        Ok(())
    }

    fn estimated_count(&self) -> u64 {
        sizing::approximate_element_count(self.bits.ones(), self.bit_size(), self.k)
    }

    /// Length of [`to_bytes`](Self::to_bytes).
    pub fn encoded_len(&self) -> usize {
        let header: usize = match self.version {
            SparkVersion::V1 => 8,
            SparkVersion::V2 => 12,
        };
        header + self.bits.encoded_len()
    }

    /// Spark's `writeTo`: big-endian version, `k`, (V2) seed, word count, words.
    pub fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&self.version.number().to_be_bytes())?;
        out.write_all(&(self.k as i32).to_be_bytes())?;
        if self.version == SparkVersion::V2 {
            out.write_all(&self.seed.to_be_bytes())?;
        }
        self.bits.write_to(out)
    }

    /// Read a filter from exactly the bytes Spark's `writeTo` wrote (either version).
    ///
    /// # Errors
    /// An unknown version ([`DecodeError::UnsupportedVersion`], or `InvalidField` for a number
    /// beyond `u16`), `k` outside 1..=[`MAX_SPARK_HASH_FUNCTIONS`], a word count below 1,
    /// fewer bytes than the header announces ([`DecodeError::Truncated`], checked before any
    /// allocation), or bytes after the last word ([`DecodeError::TrailingBytes`]). Spark's own
    /// reader accepts `k ≤ 0` (a filter that then answers "maybe" to every key) and ignores
    /// trailing bytes; these are refused here.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Cursor::new(bytes);
        let version = decode_version(r.i32()?)?;
        let k = crate::decode_k(r.i32()?.into(), K_RULE)?;
        let seed = match version {
            SparkVersion::V1 => 0,
            SparkVersion::V2 => r.i32()?,
        };
        let bits = Words::decode(&mut r)?;
        r.finish()?;
        Ok(Self::decoded(version, k, seed, bits))
    }

    /// Read one filter from a stream, consuming exactly its bytes. The bit array grows only as
    /// bytes arrive, so a header announcing more words than the stream holds fails with
    /// [`DecodeError::Truncated`] after allocating about what was read.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes) (but what follows the filter is left unread), or
    /// the stream's own I/O error.
    pub fn read_from(r: &mut impl Read) -> Result<Self, ReadError> {
        let version = decode_version(read_i32(r, 0)?)?;
        let k = crate::decode_k(read_i32(r, 4)?.into(), K_RULE)?;
        let (seed, at) = match version {
            SparkVersion::V1 => (0, 8),
            SparkVersion::V2 => (read_i32(r, 8)?, 12),
        };
        let bits = Words::read_from(r, at)?;
        Ok(Self::decoded(version, k, seed, bits))
    }

    fn decoded(version: SparkVersion, k: u32, seed: i32, bits: Words) -> Self {
        let mut f = SparkBloomFilter {
            version,
            k,
            seed,
            bits,
            count: 0,
            expected_items: None,
            fpp: None,
        };
        f.count = f.estimated_count();
        f
    }
}

/// The probe indices of `(h1, h2)` in an array of `m` bits.
#[inline]
fn probes(
    version: SparkVersion,
    k: u32,
    m: u64,
    (h1, h2): (i32, i32),
) -> impl Iterator<Item = u64> {
    // V2's start: |h1 · (2^31 − 1)| < 2^62, no overflow.
    let start = i64::from(h1) * i64::from(i32::MAX);
    (1..=k).map(move |i| {
        let c = match version {
            // Java `int` arithmetic: wraps at 32 bits.
            SparkVersion::V1 => i64::from(h1.wrapping_add((i as i32).wrapping_mul(h2))),
            // Java `long` arithmetic: `c += h2` from the start, `i` times.
            SparkVersion::V2 => start.wrapping_add(i64::from(i).wrapping_mul(i64::from(h2))),
        };
        (if c < 0 { !c } else { c }) as u64 % m
    })
}

fn decode_version(v: i32) -> Result<SparkVersion, DecodeError> {
    SparkVersion::from_number(v).ok_or_else(|| match u16::try_from(v) {
        Ok(v) => DecodeError::UnsupportedVersion(v),
        Err(_) => DecodeError::field(
            "version",
            format!("{v} is not a Spark Bloom filter version (1 or 2)"),
        ),
    })
}

/// Spark's range of `k`.
const K_RULE: crate::KRule = (MAX_SPARK_HASH_FUNCTIONS, "must be");

impl PartialEq for SparkBloomFilter {
    /// Spark's `equals`: same version, `k`, seed and bits (counts and sizing targets are not
    /// part of the filter).
    fn eq(&self, other: &Self) -> bool {
        self.version == other.version
            && self.k == other.k
            && self.seed == other.seed
            && self.bits == other.bits
    }
}

crate::jvm_filter_impl! {
    /// The trait's byte keys are Spark's `putBinary` / `mightContainBinary` (see the type's docs
    /// for how strings and longs map onto them). `len` counts inserts through this value, repeats
    /// included; a filter read from bytes (which carry no count) starts from the estimate
    /// [`sizing::approximate_element_count`]. `expected_fpr` is Spark's `expectedFpp`, from the
    /// fill. The variant is [`Variant::Classic`](bloomlab_core::Variant::Classic) (k probes
    /// anywhere in m bits); the scheme is [`SchemeId::SparkMurmur3V1`] or
    /// [`SchemeId::SparkMurmur3V2`] with the seed in `key_check`.
    SparkBloomFilter ("Spark") {
        insert: put_binary,
        contains: might_contain_binary,
        capacity: expected_items,
        compatible: "same version, bit size, `k` and seed.",
    /// Spark's `mergeInPlace`: the bitwise OR, under Spark's compatibility rules (same
    /// version, bit size, seed and `k`). The count becomes the sum of both counts.
    ///
    /// # Errors
    /// [`Error::Incompatible`], naming the first difference; `self` is then unchanged.
        merge: merge_in_place,
        debug: [version] [seed],
    }
}

impl SparkBloomFilter {
    fn scheme_descriptor(&self) -> SchemeDescriptor {
        let id = match self.version {
            SparkVersion::V1 => SchemeId::SparkMurmur3V1,
            SparkVersion::V2 => SchemeId::SparkMurmur3V2,
        };
        SchemeDescriptor {
            id,
            key_check: u64::from(self.seed as u32),
        }
    }
}
