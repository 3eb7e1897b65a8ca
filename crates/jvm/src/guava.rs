//! Guava's Bloom filter (`com.google.common.hash.BloomFilter`) and its `writeTo` form.

use std::io::{self, Read, Write};

use bloomlab_core::{DecodeError, Error, Result, SchemeDescriptor, SchemeId};

use crate::ReadError;
use crate::murmur::guava_murmur3_128;
use crate::sizing;
use crate::words::{Cursor, Words, read_u8};

/// Guava's `BloomFilterStrategies`: how the 128-bit Murmur3 hash becomes `k` bit indices.
/// The ordinal is the first byte of the serialized form.
///
/// Both hash the funnelled bytes with Murmur3 x64_128, seed 0, into `(h1, h2)`.
/// `MURMUR128_MITZ_32` splits `h1` into 32-bit halves `a` (low) and `b` (high) and probes
/// `c = a + i·b` (`int` arithmetic, `i = 1..=k`) at `(c < 0 ? ~c : c) mod m`;
/// `MURMUR128_MITZ_64` probes `c = h1 + i·h2` (`long` arithmetic, `i = 0..k`) at
/// `(c & Long.MAX_VALUE) mod m`. Only the second reaches bits above 2^31.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GuavaStrategy {
    /// `MURMUR128_MITZ_32`, ordinal 0: Guava's original strategy, still read.
    Murmur128Mitz32,
    /// `MURMUR128_MITZ_64`, ordinal 1: the strategy `create` uses.
    Murmur128Mitz64,
}

impl GuavaStrategy {
    /// The enum ordinal Guava serializes.
    pub fn ordinal(self) -> u8 {
        match self {
            GuavaStrategy::Murmur128Mitz32 => 0,
            GuavaStrategy::Murmur128Mitz64 => 1,
        }
    }

    /// The strategy with this ordinal, if Guava has it.
    pub fn from_ordinal(ordinal: u8) -> Option<GuavaStrategy> {
        match ordinal {
            0 => Some(GuavaStrategy::Murmur128Mitz32),
            1 => Some(GuavaStrategy::Murmur128Mitz64),
            _ => None,
        }
    }

    /// Guava's constant name.
    pub fn name(self) -> &'static str {
        match self {
            GuavaStrategy::Murmur128Mitz32 => "MURMUR128_MITZ_32",
            GuavaStrategy::Murmur128Mitz64 => "MURMUR128_MITZ_64",
        }
    }
}

/// How `create(n, fpp)` picks the number of probes; the bit count is the same for both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum GuavaSizing {
    /// `k = max(1, round(m/n · ln 2))` from the truncated bit count `m`: Guava's rule from
    /// its first Bloom filter through the 33.x releases (and the rule of the jar the
    /// known-answer vectors come from, Guava 31.1).
    #[default]
    BitsPerKey,
    /// `k = max(1, round(−ln p / ln 2))`: the rule of Guava's newest sources. It differs from
    /// [`BitsPerKey`](Self::BitsPerKey) only where truncating `m` moves `m/n · ln 2` across a
    /// half (small `n`: one item at 1 % gets 6 probes by the first rule, 7 by this one).
    Fpp,
}

/// Largest `k` Guava accepts: it serializes `k` as one unsigned byte.
pub const MAX_GUAVA_HASH_FUNCTIONS: u32 = 255;

/// A Guava Bloom filter, bit-exact with `com.google.common.hash.BloomFilter`.
///
/// Built with [`create`](Self::create) (Guava's `BloomFilter.create(funnel, n, fpp)`: strategy
/// `MURMUR128_MITZ_64`) or [`create_with`](Self::create_with) (either strategy, either
/// [`GuavaSizing`]); read with [`from_bytes`](Self::from_bytes) / [`read_from`](Self::read_from)
/// from what `writeTo` wrote, written with [`to_bytes`](Self::to_bytes) /
/// [`write_to`](Self::write_to) in the form `readFrom` reads. A Guava filter does not record its
/// funnel: read it back with the funnel it was built with, here as there.
///
/// # Keys (Guava's funnels)
///
/// [`put_long`](Self::put_long) is `Funnels.longFunnel()` (eight little-endian bytes),
/// [`put_int`](Self::put_int) `Funnels.integerFunnel()` (four), [`put_string`](Self::put_string)
/// `Funnels.stringFunnel(UTF_8)` (the UTF-8 bytes) and [`put_bytes`](Self::put_bytes)
/// `Funnels.byteArrayFunnel()`. Murmur3 hashes the funnelled byte stream, so all four are the hash
/// of the key's bytes — which is what the [`Filter`](bloomlab_core::Filter) trait's byte keys map
/// to (`insert_bytes` is `put_bytes`), and why the trait's typed `i64`, `i32` and `str` keys
/// (encoded little-endian / as UTF-8 by [`bloomlab_core::Key`]) give Guava's answers for the
/// matching funnel.
///
/// # Complexity
///
/// An insert or query hashes the key once (O(key length)) and touches `k ≤ 255` bits, each a
/// 64-bit division; a query stops at the first clear bit. [`put_all`](Self::put_all) is O(m/64).
///
/// # Why
///
/// JVM services persist these filters with `writeTo`; a Rust reader or writer must agree on
/// every bit, including Java's signed arithmetic and the strategy recorded in the first byte.
///
/// ```
/// use bloomlab_jvm::GuavaBloomFilter;
///
/// let mut f = GuavaBloomFilter::create(1_000, 0.03)?;
/// assert_eq!(f.num_hash_functions(), 5); // "for 3%, we always get 5 hash functions"
/// assert!(f.put_string("Grüße, 世界"));
/// assert!(f.might_contain_string("Grüße, 世界"));
///
/// let bytes = f.to_bytes();
/// assert_eq!(&bytes[..2], &[1, 5]); // strategy ordinal 1 (MURMUR128_MITZ_64), k = 5
/// assert_eq!(GuavaBloomFilter::from_bytes(&bytes)?, f);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct GuavaBloomFilter {
    strategy: GuavaStrategy,
    k: u32,
    bits: Words,
    count: u64,
    expected_insertions: Option<u64>,
    fpp: Option<f64>,
}

/// The words of Guava's `long[]` for `m > 0` bits: at most 2^31 − 1, a Java array's length.
fn words_for_bits(m: i64) -> Result<u64> {
    let words = (m as u64).div_ceil(64);
    if words > i32::MAX as u64 {
        return Err(Error::SizeOverflow(format!(
            "{m} bits need {words} words; Guava's bit array holds at most 2^31 − 1"
        )));
    }
    Ok(words)
}

impl GuavaBloomFilter {
    /// Guava's `BloomFilter.create(funnel, expectedInsertions, fpp)`: strategy
    /// `MURMUR128_MITZ_64`, [`GuavaSizing::BitsPerKey`]. An expected count of 0 is taken as 1,
    /// as Guava does.
    ///
    /// # Errors
    /// `fpp` not strictly between 0 and 1, `expected_insertions` above `i64::MAX`, a size
    /// Guava refuses (no bits, more than 2^31 − 1 words) or `k` above 255.
    pub fn create(expected_insertions: u64, fpp: f64) -> Result<Self> {
        Self::create_with(
            expected_insertions,
            fpp,
            GuavaStrategy::Murmur128Mitz64,
            GuavaSizing::BitsPerKey,
        )
    }

    /// `create` with the strategy and the sizing rule named.
    ///
    /// # Errors
    /// As [`create`](Self::create).
    pub fn create_with(
        expected_insertions: u64,
        fpp: f64,
        strategy: GuavaStrategy,
        sizing_rule: GuavaSizing,
    ) -> Result<Self> {
        if !(fpp.is_finite() && fpp > 0.0 && fpp < 1.0) {
            return Err(Error::InvalidFpr(fpp));
        }
        let n = i64::try_from(expected_insertions.max(1)).map_err(|_| {
            Error::SizeOverflow(format!(
                "{expected_insertions} expected insertions: Guava's count is a long (at most 2^63 − 1)"
            ))
        })?;
        let m = sizing::optimal_num_of_bits(n, fpp);
        if m <= 0 {
            return Err(Error::invalid(
                "fpp",
                format!("{n} insertions at {fpp} need {m} bits: Guava needs at least one"),
            ));
        }
        let words = words_for_bits(m)?;
        let k = match sizing_rule {
            GuavaSizing::BitsPerKey => sizing::optimal_num_of_hash_functions(n, m),
            GuavaSizing::Fpp => sizing::optimal_num_of_hash_functions_for_fpp(fpp),
        };
        let k =
            crate::check_k(i64::from(k), K_RULE).map_err(|reason| Error::invalid("fpp", reason))?;
        Ok(GuavaBloomFilter {
            strategy,
            k,
            bits: Words::zeroed(words as usize)?,
            count: 0,
            expected_insertions: Some(expected_insertions.max(1)),
            fpp: Some(fpp),
        })
    }

    /// The strategy.
    pub fn strategy(&self) -> GuavaStrategy {
        self.strategy
    }

    /// Guava's `approximateElementCount()`.
    pub fn approximate_element_count(&self) -> u64 {
        sizing::approximate_element_count(self.bits.ones(), self.bit_size(), self.k)
    }

    fn put_hash(&mut self, key: &[u8]) -> bool {
        self.count = self.count.saturating_add(1);
        let positions = probes(self.strategy, self.k, self.bits.bit_size(), key);
        self.bits.set_all(positions)
    }

    fn contains_hash(&self, key: &[u8]) -> bool {
        let positions = probes(self.strategy, self.k, self.bits.bit_size(), key);
        self.bits.get_all(positions)
    }

    /// `put` through `Funnels.longFunnel()`: whether any bit changed.
    pub fn put_long(&mut self, v: i64) -> bool {
        self.put_hash(&v.to_le_bytes())
    }

    /// `put` through `Funnels.integerFunnel()`.
    pub fn put_int(&mut self, v: i32) -> bool {
        self.put_hash(&v.to_le_bytes())
    }

    /// `put` through `Funnels.stringFunnel(StandardCharsets.UTF_8)`.
    pub fn put_string(&mut self, s: &str) -> bool {
        self.put_hash(s.as_bytes())
    }

    /// `put` through `Funnels.byteArrayFunnel()`.
    pub fn put_bytes(&mut self, b: &[u8]) -> bool {
        self.put_hash(b)
    }

    /// `mightContain` through `Funnels.longFunnel()`.
    pub fn might_contain_long(&self, v: i64) -> bool {
        self.contains_hash(&v.to_le_bytes())
    }

    /// `mightContain` through `Funnels.integerFunnel()`.
    pub fn might_contain_int(&self, v: i32) -> bool {
        self.contains_hash(&v.to_le_bytes())
    }

    /// `mightContain` through `Funnels.stringFunnel(StandardCharsets.UTF_8)`.
    pub fn might_contain_string(&self, s: &str) -> bool {
        self.contains_hash(s.as_bytes())
    }

    /// `mightContain` through `Funnels.byteArrayFunnel()`.
    pub fn might_contain_bytes(&self, b: &[u8]) -> bool {
        self.contains_hash(b)
    }

    fn check_compatible(&self, other: &GuavaBloomFilter) -> Result<()> {
        let must = |what| format!("BloomFilters must have {what} ({{a}} != {{b}})");
        crate::check_rules(&[
            (must("the same number of hash functions"), &self.k, &other.k),
            (
                must("the same size underlying bit arrays"),
                &self.bit_size(),
                &other.bit_size(),
            ),
            (
                must("equal strategies"),
                &self.strategy.name(),
                &other.strategy.name(),
            ),
        ])
    }

    /// Length of [`to_bytes`](Self::to_bytes).
    pub fn encoded_len(&self) -> usize {
        2 + self.bits.encoded_len()
    }

    /// Guava's `writeTo`: strategy ordinal (signed byte), `k` (unsigned byte), big-endian word
    /// count, big-endian words.
    pub fn write_to(&self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&[self.strategy.ordinal(), self.k as u8])?;
        self.bits.write_to(out)
    }

    /// Read a filter from exactly the bytes Guava's `writeTo` wrote.
    ///
    /// # Errors
    /// An unknown strategy ordinal, `k = 0`, a word count below 1, fewer bytes than the header
    /// announces ([`DecodeError::Truncated`], checked before any allocation), or bytes after
    /// the last word ([`DecodeError::TrailingBytes`]; Guava's reader leaves them unread).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Cursor::new(bytes);
        let strategy = decode_strategy(r.u8()?)?;
        let k = crate::decode_k(r.u8()?.into(), K_RULE)?;
        let bits = Words::decode(&mut r)?;
        r.finish()?;
        Ok(Self::decoded(strategy, k, bits))
    }

    /// Read one filter from a stream, consuming exactly its bytes, allocating only as they
    /// arrive.
    ///
    /// # Errors
    /// As [`from_bytes`](Self::from_bytes), or the stream's own I/O error.
    pub fn read_from(r: &mut impl Read) -> Result<Self, ReadError> {
        let strategy = decode_strategy(read_u8(r, 0)?)?;
        let k = crate::decode_k(read_u8(r, 1)?.into(), K_RULE)?;
        let bits = Words::read_from(r, 2)?;
        Ok(Self::decoded(strategy, k, bits))
    }

    fn decoded(strategy: GuavaStrategy, k: u32, bits: Words) -> Self {
        let mut f = GuavaBloomFilter {
            strategy,
            k,
            bits,
            count: 0,
            expected_insertions: None,
            fpp: None,
        };
        f.count = f.approximate_element_count();
        f
    }
}

/// The probe indices of a key's bytes in an array of `m` bits.
#[inline]
fn probes(strategy: GuavaStrategy, k: u32, m: u64, key: &[u8]) -> impl Iterator<Item = u64> {
    let (h1, h2) = guava_murmur3_128(key);
    let (a, b) = (h1 as i32, (h1 >> 32) as i32);
    (1..=k).map(move |i| match strategy {
        // `int` arithmetic: `c = a + i·b`, flipped when negative.
        GuavaStrategy::Murmur128Mitz32 => {
            let c = a.wrapping_add((i as i32).wrapping_mul(b));
            (if c < 0 { !c } else { c }) as u64 % m
        }
        // `long` arithmetic from `c = h1`, adding `h2` after each probe.
        GuavaStrategy::Murmur128Mitz64 => {
            (h1.wrapping_add(u64::from(i - 1).wrapping_mul(h2)) & i64::MAX as u64) % m
        }
    })
}

fn decode_strategy(ordinal: u8) -> Result<GuavaStrategy, DecodeError> {
    GuavaStrategy::from_ordinal(ordinal).ok_or_else(|| {
        DecodeError::field(
            "strategyOrdinal",
            format!(
                "{} is not a Guava BloomFilterStrategies ordinal (0 or 1)",
                ordinal as i8
            ),
        )
    })
}

impl PartialEq for GuavaBloomFilter {
    /// Guava's `equals` (less the funnel): same `k`, strategy and bits.
    fn eq(&self, other: &Self) -> bool {
        self.k == other.k && self.strategy == other.strategy && self.bits == other.bits
    }
}

crate::jvm_filter_impl! {
    /// The trait's byte keys are `byteArrayFunnel()` — the same bits as `longFunnel()`,
    /// `integerFunnel()` and `stringFunnel(UTF_8)` for the matching little-endian / UTF-8 bytes.
    /// `len` counts inserts through this value, repeats included; a filter read from bytes starts
    /// from Guava's `approximateElementCount()`. `expected_fpr` is Guava's `expectedFpp`, from the
    /// fill. The variant is [`Variant::Classic`](bloomlab_core::Variant::Classic); the scheme
    /// [`SchemeId::GuavaMurmur128Mitz32`] or [`SchemeId::GuavaMurmur128Mitz64`].
    GuavaBloomFilter ("Guava") {
        insert: put_bytes,
        contains: contains_hash,
        capacity: expected_insertions,
        compatible: "same `k`, bit size and strategy (less the funnel, which is not recorded).",
    /// Guava's `putAll`: the bitwise OR, under Guava's rules (same `k`, bit size and strategy,
    /// checked in that order; the funnels must be equal too, which the caller ensures). The
    /// count becomes the sum of both counts.
    ///
    /// # Errors
    /// [`Error::Incompatible`] naming the first difference; `self` is then unchanged.
        merge: put_all,
        debug: [strategy] [],
    }
}

impl GuavaBloomFilter {
    fn scheme_descriptor(&self) -> SchemeDescriptor {
        let id = match self.strategy {
            GuavaStrategy::Murmur128Mitz32 => SchemeId::GuavaMurmur128Mitz32,
            GuavaStrategy::Murmur128Mitz64 => SchemeId::GuavaMurmur128Mitz64,
        };
        SchemeDescriptor { id, key_check: 0 }
    }
}

/// Guava's range of `k`.
const K_RULE: crate::KRule = (MAX_GUAVA_HASH_FUNCTIONS, "Guava takes");

#[cfg(test)]
mod word_limit_tests {
    use super::*;

    #[test]
    fn guavas_bit_array_holds_up_to_and_including_2_to_the_31_minus_1_words() {
        let most = i64::from(i32::MAX);
        assert_eq!(words_for_bits(1).unwrap(), 1);
        assert_eq!(words_for_bits(64 * most).unwrap(), most as u64);
        assert_eq!(words_for_bits(64 * most - 63).unwrap(), most as u64);
        assert!(matches!(
            words_for_bits(64 * most + 1),
            Err(Error::SizeOverflow(_))
        ));
    }
}
