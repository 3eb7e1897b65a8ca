//! The one home for hashing.
//!
//! Every filter hashes a key **once** into a [`KeyHash`] — two 64-bit halves `h1` and `h2`
//! (with `h2` forced odd) — and derives all of its probe positions from it
//! (Kirsch & Mitzenmacher 2006, "Less hashing, same performance": `g_i = h1 + i·h2` gives the
//! same asymptotic false-positive rate as `k` independent hashes). Positions are reduced into
//! a table of `n` slots with [`fastrange`] (`(x · n) >> 64`, Lemire 2016), never with `%`.
//!
//! Filters are generic over a [`HashScheme`], so the keyed variant swaps in SipHash-2-4
//! without touching any filter logic. A scheme describes itself with a [`SchemeDescriptor`]
//! that every byte format records, so a reader refuses a filter it would probe differently.

use core::fmt;

use xxhash_rust::xxh3::{xxh3_64_with_seed, xxh3_128_with_seed};

use crate::Key;
use crate::error::DecodeError;

/// Seed of the default [`Xxh3Scheme`]. A format constant: changing it changes every probe
/// position, so it can never change for scheme id [`SchemeId::Xxh3Km`].
/// (The ASCII bytes of "bloomlab" read as a little-endian `u64`.)
pub const XXH3_SEED: u64 = u64::from_le_bytes(*b"bloomlab");

/// Map a uniformly distributed 64-bit value onto `0..n` without division
/// (Lemire 2016, "A fast alternative to the modulo reduction"): `⌊x · n / 2^64⌋`. Defined
/// once, beside the kernels that inline it, and re-exported here.
///
/// ```
/// use bloomlab_core::hash::fastrange;
/// assert_eq!(fastrange(0, 10), 0);
/// assert_eq!(fastrange(u64::MAX, 10), 9);
/// assert_eq!(fastrange(1 << 63, 10), 5);
/// ```
pub use bloomlab_simd::fastrange;

/// The 128 bits a key hashes to, split into the two halves double hashing needs.
///
/// `h2` is always odd, so the probe stride is never zero: a zero stride would put all `k`
/// probes on the same position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyHash {
    /// First half: the start of the probe sequence (and the block or bucket choice).
    pub h1: u64,
    /// Second half, odd: the probe stride (and, for cuckoo filters, the fingerprint source).
    pub h2: u64,
}

impl KeyHash {
    /// Build from two halves, forcing `h2` odd.
    #[inline(always)]
    pub fn new(h1: u64, h2: u64) -> Self {
        KeyHash { h1, h2: h2 | 1 }
    }

    /// Build from a 128-bit hash: low half is `h1`, high half (forced odd) is `h2`.
    #[inline(always)]
    pub fn from_u128(h: u128) -> Self {
        KeyHash::new(h as u64, (h >> 64) as u64)
    }

    /// The `i`-th Kirsch–Mitzenmacher probe value `h1 + i·h2 (mod 2^64)`, before reduction.
    #[inline(always)]
    pub fn probe(&self, i: u32) -> u64 {
        self.h1.wrapping_add(u64::from(i).wrapping_mul(self.h2))
    }

    /// The first `k` probe positions reduced into `0..n` with [`fastrange`].
    #[inline]
    pub fn positions(&self, k: u32, n: u64) -> Positions {
        Positions {
            next: self.h1,
            stride: self.h2,
            remaining: k,
            n,
        }
    }
}

/// Iterator over probe positions; see [`KeyHash::positions`].
#[derive(Clone, Debug)]
pub struct Positions {
    next: u64,
    stride: u64,
    remaining: u32,
    n: u64,
}

impl Iterator for Positions {
    type Item = u64;

    #[inline(always)]
    fn next(&mut self) -> Option<u64> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let g = self.next;
        self.next = g.wrapping_add(self.stride);
        Some(fastrange(g, self.n))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining as usize, Some(self.remaining as usize))
    }
}

impl ExactSizeIterator for Positions {}

/// Which hash function a filter's probe positions come from. Stored as one byte in every
/// byte format; ids are frozen once released.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[repr(u8)]
pub enum SchemeId {
    /// xxh3-128 with seed [`XXH3_SEED`], Kirsch–Mitzenmacher probes, fastrange reduction;
    /// its 64-bit output ([`HashScheme::hash64`]) is XXH3-64 with the same seed.
    Xxh3Km = 1,
    /// SipHash-2-4 keyed with a 128-bit secret (128-bit output), same probe derivation.
    SipHash24Km = 2,
    /// SipHash-2-4 keyed with a 128-bit secret (one 64-bit output `h1`), `h2` derived from
    /// it by a public bijective remix; same probe derivation.
    SipHash24x64Km = 4,
    /// xxHash64 (seed 0) of the value's plain encoding, as the Parquet split-block Bloom
    /// filter specifies: block from the upper 32 bits, in-block bits from the lower 32.
    ParquetXxh64 = 5,
    /// Apache Spark's `BloomFilter` format version 1: Murmur3 x86_32 (Spark's variant, seed 0
    /// then the first hash), 32-bit probes `h1 + i·h2`, sign-flipped, modulo the bit count.
    SparkMurmur3V1 = 6,
    /// Apache Spark's `BloomFilter` format version 2: the same hashes from a recorded seed
    /// (the descriptor's `key_check` holds it), 64-bit probes started at `h1 · (2^31 − 1)`.
    SparkMurmur3V2 = 7,
    /// Guava's `BloomFilter` strategy `MURMUR128_MITZ_32` (ordinal 0): the two 32-bit halves of
    /// Murmur3 x64_128's first 64 bits, 32-bit probes.
    GuavaMurmur128Mitz32 = 8,
    /// Guava's `BloomFilter` strategy `MURMUR128_MITZ_64` (ordinal 1, Guava's default): both
    /// 64-bit halves of Murmur3 x64_128, 64-bit probes.
    GuavaMurmur128Mitz64 = 9,
}

impl SchemeId {
    /// Human-readable name used in errors and reports.
    pub fn name(self) -> &'static str {
        match self {
            SchemeId::Xxh3Km => "xxh3-128/km",
            SchemeId::SipHash24Km => "siphash-2-4-128/km (keyed)",
            SchemeId::SipHash24x64Km => "siphash-2-4-64+remix/km (keyed)",
            SchemeId::ParquetXxh64 => "parquet-xxh64",
            SchemeId::SparkMurmur3V1 => "spark-murmur3-v1",
            SchemeId::SparkMurmur3V2 => "spark-murmur3-v2",
            SchemeId::GuavaMurmur128Mitz32 => "guava-murmur128-mitz32",
            SchemeId::GuavaMurmur128Mitz64 => "guava-murmur128-mitz64",
        }
    }
}

impl TryFrom<u8> for SchemeId {
    type Error = DecodeError;

    fn try_from(v: u8) -> Result<Self, DecodeError> {
        match v {
            1 => Ok(SchemeId::Xxh3Km),
            2 => Ok(SchemeId::SipHash24Km),
            4 => Ok(SchemeId::SipHash24x64Km),
            5 => Ok(SchemeId::ParquetXxh64),
            6 => Ok(SchemeId::SparkMurmur3V1),
            7 => Ok(SchemeId::SparkMurmur3V2),
            8 => Ok(SchemeId::GuavaMurmur128Mitz32),
            9 => Ok(SchemeId::GuavaMurmur128Mitz64),
            other => Err(DecodeError::UnknownScheme(other)),
        }
    }
}

/// What a byte format records about the hash: the scheme and, for keyed schemes, a check
/// value derived from the secret (never the secret itself). Two filters can be combined, and
/// a reader can load a filter, only when their descriptors are equal.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct SchemeDescriptor {
    /// The hash function.
    pub id: SchemeId,
    /// 0 for unkeyed schemes; for keyed ones a hash of a fixed constant under the secret.
    pub key_check: u64,
}

impl fmt::Display for SchemeDescriptor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key_check == 0 {
            f.write_str(self.id.name())
        } else {
            write!(f, "{} [key check {:016x}]", self.id.name(), self.key_check)
        }
    }
}

/// A way to hash key bytes into a [`KeyHash`]. Filters are generic over it.
pub trait HashScheme: Clone + fmt::Debug + Send + Sync + 'static {
    /// Hash one key.
    fn hash(&self, key: &[u8]) -> KeyHash;

    /// The scheme's 64-bit output, for layouts that need one 64-bit hash per key and no
    /// probe stride (the blocked filter's third layout). Frozen per scheme like
    /// [`hash`](Self::hash): by default `hash(key).h1` — for [`SchemeId::SipHash24Km`] the
    /// first half of the 128-bit SipHash-2-4 output, for [`SchemeId::SipHash24x64Km`] its one
    /// 64-bit SipHash-2-4 output, so a keyed scheme's 64 bits stay a PRF output the attacker
    /// cannot compute —; [`Xxh3Scheme`] overrides it with XXH3-64 (seed [`XXH3_SEED`]),
    /// which costs fewer instructions than the 128-bit variant for short keys.
    #[inline(always)]
    fn hash64(&self, key: &[u8]) -> u64 {
        self.hash(key).h1
    }

    /// Identify this scheme (and its key, if any) for byte formats and compatibility checks.
    fn descriptor(&self) -> SchemeDescriptor;

    /// Whether [`hash_words8`](Self::hash_words8) and [`hash64_words8`](Self::hash64_words8)
    /// hash eight keys faster than eight calls of [`hash`](Self::hash): batched operations then
    /// hash their keys in chunks of eight ([`hash_chunk`], [`crate::simd::pipeline_chunks`]).
    /// `false` by default; the keyed 64-bit SipHash scheme sets it (its rounds run in vector
    /// lanes, [`crate::simd::sip24_x8`]).
    const LANES: bool = false;

    /// `[hash(w.to_le_bytes()) for w in words]`: eight keys of exactly 8 bytes, given as
    /// their little-endian words. Must equal the per-key results (the default computes them).
    #[inline(always)]
    fn hash_words8(&self, words: &[u64; 8]) -> [KeyHash; 8] {
        words.map(|w| self.hash(&w.to_le_bytes()))
    }

    /// `[hash64(w.to_le_bytes()) for w in words]`, as [`hash_words8`](Self::hash_words8).
    #[inline(always)]
    fn hash64_words8(&self, words: &[u64; 8]) -> [u64; 8] {
        words.map(|w| self.hash64(&w.to_le_bytes()))
    }

    /// `out[i] = hash64(words[i].to_le_bytes())` for many keys of exactly 8 bytes at once,
    /// as a bulk build hashes them before it places any. By default eight at a time through
    /// [`hash64_words8`](Self::hash64_words8) where the scheme has [`LANES`](Self::LANES), one
    /// at a time otherwise; [`Xxh3Scheme`] hashes in AVX-512 lanes where the CPU has them
    /// ([`crate::simd::xxh3_64_words`]) — there the words are in hand, unlike the batched
    /// lookups, which would have to gather them.
    ///
    /// # Panics
    /// If `out` is not as long as `words`.
    fn hash64_words(&self, words: &[u64], out: &mut [u64]) {
        assert_eq!(words.len(), out.len(), "one output per word");
        let full = if Self::LANES { words.len() / 8 * 8 } else { 0 };
        for (w, o) in words[..full]
            .chunks_exact(8)
            .zip(out[..full].chunks_exact_mut(8))
        {
            let w: &[u64; 8] = w.try_into().expect("chunks of eight");
            o.copy_from_slice(&self.hash64_words8(w));
        }
        for (w, o) in words[full..].iter().zip(&mut out[full..]) {
            *o = self.hash64(&w.to_le_bytes());
        }
    }
}

/// Hash up to eight keys into `out` (as long as `keys`, at most 8): the keys whose encoding
/// is exactly 8 bytes — every integer key — together through `eight`, any others one at a
/// time through `one`. With `one = |b| scheme.hash(b)` and `eight = |w| scheme.hash_words8(w)`
/// this is `out[i] = scheme.hash(keys[i])`, computed in vector lanes where the scheme can.
///
/// ```
/// use bloomlab_core::hash::{hash_chunk, HashScheme, KeyHash, Xxh3Scheme};
///
/// let keys: [&[u8]; 3] = [b"8 bytes!", b"short", b"another8"];
/// let mut out = [KeyHash::new(0, 0); 3];
/// hash_chunk(&keys[..], &mut out, |b| Xxh3Scheme.hash(b), |w| Xxh3Scheme.hash_words8(w));
/// assert_eq!(out, keys.map(|k| Xxh3Scheme.hash(k)));
/// ```
#[inline(always)]
pub fn hash_chunk<K: Key, H: Copy>(
    keys: &[K],
    out: &mut [H],
    one: impl Fn(&[u8]) -> H,
    eight: impl Fn(&[u64; 8]) -> [H; 8],
) {
    assert!(keys.len() <= 8 && out.len() == keys.len());
    let mut words = [0u64; 8];
    let mut others = 0u32;
    for (i, key) in keys.iter().enumerate() {
        key.with_key_bytes(|b| match <[u8; 8]>::try_from(b) {
            Ok(a) => words[i] = u64::from_le_bytes(a),
            Err(_) => {
                out[i] = one(b);
                others |= 1 << i;
            }
        });
    }
    if others.count_ones() as usize == keys.len() {
        return;
    }
    let all = eight(&words);
    for (i, (o, h)) in out.iter_mut().zip(all).enumerate() {
        if others & (1 << i) == 0 {
            *o = h;
        }
    }
}

/// The default scheme: xxh3-128 with the fixed seed [`XXH3_SEED`]. Fast and of good quality,
/// but public: anyone who reads this code can compute a key's probes. Use the keyed scheme
/// when keys may be chosen by an adversary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Xxh3Scheme;

impl HashScheme for Xxh3Scheme {
    #[inline(always)]
    fn hash(&self, key: &[u8]) -> KeyHash {
        KeyHash::from_u128(xxh3_128_with_seed(key, XXH3_SEED))
    }

    /// XXH3-64 with seed [`XXH3_SEED`] (not the low half of [`hash`](HashScheme::hash): a
    /// function of its own, frozen by the known-answer tests).
    #[inline(always)]
    fn hash64(&self, key: &[u8]) -> u64 {
        xxh3_64_with_seed(key, XXH3_SEED)
    }

    fn hash64_words(&self, words: &[u64], out: &mut [u64]) {
        crate::simd::xxh3_64_words(XXH3_SEED, words, out);
    }

    fn descriptor(&self) -> SchemeDescriptor {
        SchemeDescriptor {
            id: SchemeId::Xxh3Km,
            key_check: 0,
        }
    }
}

/// murmur3's 64-bit finaliser: spreads a value (a short fingerprint, one of `k` probe values)
/// over all 64 bits before it is reduced into a range. Part of the cuckoo, expandable,
/// scalable and Ribbon layouts: frozen.
#[inline(always)]
pub fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// One splitmix64 step: advances `state` by the golden-ratio increment and returns its
/// [`fmix64`] (used for the kick sequences of the cuckoo-style filters, seeded per key).
#[inline(always)]
pub fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    fmix64(*state)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn many_words_hash_as_single_keys_do() {
        // Xxh3Scheme's lanes (where the CPU has them) and the provided method of a scheme
        // that hashes eight at a time (its chunks and its tail), every length around the
        // chunk of eight.
        #[derive(Clone, Debug)]
        struct Plain;
        impl HashScheme for Plain {
            const LANES: bool = true;
            fn hash(&self, key: &[u8]) -> KeyHash {
                Xxh3Scheme.hash(key)
            }
            fn descriptor(&self) -> SchemeDescriptor {
                Xxh3Scheme.descriptor()
            }
        }
        // The words' hashes are the hashes of their 8 little-endian bytes.
        fn check_words<S: HashScheme>(scheme: &S, words: &[u64], what: &str) {
            let mut out = vec![0u64; words.len()];
            scheme.hash64_words(words, &mut out);
            let want: Vec<u64> = words
                .iter()
                .map(|w| scheme.hash64(&w.to_le_bytes()))
                .collect();
            assert_eq!(out, want, "{} words, {what}", words.len());
        }
        for n in [0usize, 1, 7, 8, 9, 17, 100] {
            let words: Vec<u64> = (0..n as u64)
                .map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15))
                .collect();
            check_words(&Xxh3Scheme, &words, "xxh3");
            check_words(&Plain, &words, "eight at a time");
        }
    }

    #[test]
    fn h2_is_always_odd() {
        assert_eq!(KeyHash::new(5, 0).h2, 1);
        assert_eq!(KeyHash::from_u128(0).h2, 1);
        for i in 0u32..1000 {
            assert_eq!(Xxh3Scheme.hash(&i.to_le_bytes()).h2 & 1, 1);
        }
    }

    #[test]
    fn positions_follow_double_hashing() {
        let h = KeyHash::new(u64::MAX - 3, 7);
        let got: Vec<u64> = h.positions(4, 1 << 20).collect();
        let want: Vec<u64> = (0..4).map(|i| fastrange(h.probe(i), 1 << 20)).collect();
        assert_eq!(got, want);
        assert_eq!(h.positions(4, 10).len(), 4);
    }

    #[test]
    fn fastrange_stays_in_range() {
        for n in [1u64, 2, 3, 1000, u64::MAX] {
            for x in [0, 1, u64::MAX / 2, u64::MAX] {
                assert!(fastrange(x, n) < n);
            }
        }
    }

    #[test]
    fn xxh3_scheme_is_the_documented_construction() {
        // The scheme is xxh3-128 with XXH3_SEED, low half h1, high half h2 (forced odd). The
        // literal values it must keep producing are pinned in tests/known_answers.rs.
        let h = Xxh3Scheme.hash(b"user:42");
        let full = xxh3_128_with_seed(b"user:42", XXH3_SEED);
        assert_eq!((h.h1, h.h2), (full as u64, (full >> 64) as u64 | 1));
        assert_eq!(XXH3_SEED, u64::from_le_bytes(*b"bloomlab"));
    }

    #[test]
    fn scheme_ids_round_trip() {
        // Every byte: the ids (their values pinned in tests/known_answers.rs) decode to
        // themselves, every other byte is refused naming it.
        let mut known = Vec::new();
        for byte in 0..=u8::MAX {
            match SchemeId::try_from(byte) {
                Ok(id) => {
                    assert_eq!(id as u8, byte);
                    known.push(byte);
                }
                Err(e) => assert_eq!(e, DecodeError::UnknownScheme(byte)),
            }
        }
        assert_eq!(known, [1, 2, 4, 5, 6, 7, 8, 9]);
    }

    #[test]
    fn scheme_names_as_errors_and_reports_print_them() {
        // The names reports and error messages print (the results' `scheme` column): each
        // spelled as documented, no two alike, and a descriptor prints its scheme's name.
        let names = [
            (SchemeId::Xxh3Km, "xxh3-128/km"),
            (SchemeId::SipHash24Km, "siphash-2-4-128/km (keyed)"),
            (SchemeId::SipHash24x64Km, "siphash-2-4-64+remix/km (keyed)"),
            (SchemeId::ParquetXxh64, "parquet-xxh64"),
            (SchemeId::SparkMurmur3V1, "spark-murmur3-v1"),
            (SchemeId::SparkMurmur3V2, "spark-murmur3-v2"),
            (SchemeId::GuavaMurmur128Mitz32, "guava-murmur128-mitz32"),
            (SchemeId::GuavaMurmur128Mitz64, "guava-murmur128-mitz64"),
        ];
        for (i, (id, name)) in names.iter().enumerate() {
            assert_eq!(id.name(), *name);
            assert!(
                names[..i]
                    .iter()
                    .all(|(other, _)| other.name() != id.name())
            );
        }
        assert_eq!(Xxh3Scheme.descriptor().to_string(), "xxh3-128/km");
    }

    #[test]
    fn chunks_of_mixed_key_lengths_hash_as_single_keys_do() {
        // Every chunk length up to eight and every choice of which keys are 8 bytes long (they
        // go through the lanes together, the others one at a time): each key's hash is its
        // own, in its own place, whatever the rest of the chunk holds.
        for len in 0..=8usize {
            for eight_bytes in 0u32..(1 << len) {
                let keys: Vec<Vec<u8>> = (0..len)
                    .map(|i| {
                        let w = (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                        let n = if eight_bytes & (1 << i) != 0 {
                            8
                        } else {
                            3 + i % 7
                        };
                        w.to_le_bytes().iter().cycle().take(n).copied().collect()
                    })
                    .collect();
                let mut out = vec![KeyHash::new(0, 0); len];
                hash_chunk(
                    &keys,
                    &mut out,
                    |b| Xxh3Scheme.hash(b),
                    |w| Xxh3Scheme.hash_words8(w),
                );
                let want: Vec<KeyHash> = keys.iter().map(|k| Xxh3Scheme.hash(k)).collect();
                assert_eq!(out, want, "{len} keys, 8-byte mask {eight_bytes:#b}");
            }
        }
    }

    #[test]
    fn routed_positions_are_the_probe_positions() {
        // The routing kernels write the Kirsch–Mitzenmacher positions out by hand (the simd
        // crate cannot see `KeyHash`): the same positions, key by key, in order.
        let mut st = 9u64;
        let mut next = || {
            st = st
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1442695040888963407);
            st ^ (st >> 31)
        };
        for m in [1u64, 63, 1_000, 1 << 20, u64::from(u32::MAX), 1 << 40] {
            let (h1, h2): (Vec<u64>, Vec<u64>) = (0..50).map(|_| (next(), next() | 1)).unzip();
            let mut out = vec![Vec::new()];
            crate::simd::route_positions_portable(&h1, &h2, 7, m, &[0, m], &mut out);
            let want: Vec<u64> = h1
                .iter()
                .zip(&h2)
                .flat_map(|(&a, &b)| KeyHash { h1: a, h2: b }.positions(7, m))
                .collect();
            assert_eq!(out[0], want, "m = {m}");
        }
    }
}
