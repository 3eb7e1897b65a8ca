//! Keyed hashing for every bloomlab filter: SipHash-2-4 under a 128-bit secret.
//!
//! The default scheme ([`Xxh3Scheme`](bloomlab_core::Xxh3Scheme)) is public: anyone who reads
//! this code can compute where a key's probes land. When keys come from an adversary — URLs
//! submitted to a crawler, user names, packet fields — that lets them
//! ([`attack`] measures both):
//!
//! 1. **pollute** a filter by inserting keys chosen to set bits that are still zero, so `n`
//!    crafted inserts fill far more than half the array and every honest query sees a much
//!    higher FPR;
//! 2. **forge positives** by reading a shipped filter and searching offline for non-members
//!    that test positive, then sending them so each triggers the expensive lookup the filter
//!    was meant to save.
//!
//! A keyed scheme swaps the hash, not the filter logic: filters are generic over
//! [`HashScheme`], so `BloomFilter<Sip64Scheme>` is the classic filter, and
//! `BlockedBloomFilter`, `CountingBloomFilter`, `CuckooFilter` and `ScalableBloomFilter` take
//! a keyed scheme the same way, probed at positions only the secret's holder can compute. The
//! secret comes from the operating system's randomness ([`Sip64Scheme::random`]) or from the
//! caller ([`Sip64Scheme::from_secret`]). It is never written into a serialized filter: the
//! format records a *key check value* (a keyed hash of a constant), so loading with the wrong
//! secret is refused instead of answering wrongly.
//!
//! The `random` constructors draw from the OS through `getrandom`, behind the `getrandom`
//! feature (on by default). They are not offered on `wasm32-unknown-unknown`, where no OS
//! random source exists and `getrandom` would need a flag only the final binary can set:
//! there, draw the 16 bytes where the application can (in a browser, `crypto.getRandomValues`)
//! and pass them to `from_secret`. Everything else works the same on every target.
//!
//! # Two schemes
//!
//! | scheme | id | per key | use |
//! |---|---|---|---|
//! | [`Sip64Scheme`] | 4 | one 64-bit SipHash-2-4, `h2 = `[`remix`]`(h1)` | new filters |
//! | [`SipScheme`] | 2 | one 128-bit SipHash-2-4, `(h1, h2)` its two halves | filters stored before id 4 |
//!
//! Both are SipHash-2-4 (Aumasson & Bernstein 2012) under the same kind of 128-bit secret; a
//! 128-bit output costs 12 SipRounds for an 8-byte key, a 64-bit one 8, which is most of a
//! keyed lookup (see *Speed* below). Old files keep loading and answering bit for bit as
//! before: a file records its scheme id and key check, so
//! `BloomFilter::from_bytes_with_scheme(bytes, SipScheme::from_secret(secret))` opens a file
//! written with id 2 and refuses one written with id 4 (and vice versa) with
//! [`DecodeError::SchemeMismatch`](bloomlab_core::DecodeError::SchemeMismatch) — the two
//! schemes put the same key on different bits, so nothing converts one into the other except
//! re-inserting the keys. [`SipScheme`]'s output and id are frozen.
//!
//! The type aliases [`KeyedBloomFilter`] and [`KeyedBlockedBloomFilter`] take the scheme as a
//! parameter that defaults to [`Sip64Scheme`] (id 4). Until this release it defaulted to
//! [`SipScheme`] (id 2); the change cannot make a stored file answer differently or be
//! refused silently: a keyed scheme has no `Default` and no generic constructor, so code that
//! builds or loads an id-2 filter names `SipScheme::from_secret` itself, and with the bare
//! alias that is now a type error at compile time, fixed by writing
//! `KeyedBloomFilter<SipScheme>` — which opens every id-2 file with its secret and answers
//! bit for bit as before (`tests/known_answers.rs`, `tests/sip64.rs`).
//!
//! # Security argument for [`Sip64Scheme`]
//!
//! SipHash-2-4 is a pseudorandom function: to anyone without the 128-bit secret its 64-bit
//! outputs on distinct inputs are indistinguishable from independent uniform values, even
//! after seeing the outputs on other inputs of their choice. The probe pair is
//! `(h1, h2) = (x, remix(x) | 1)` with `x = SipHash-2-4(secret, key)` and [`remix`] a public
//! bijection. Every probe position is a fixed public function of `x`, so for a key the
//! attacker has not seen answered, its positions are as unpredictable as `x` itself: the
//! attacker can do no better than if the positions were drawn at random. Concretely:
//!
//! - **cannot** pollute: choosing keys whose probes hit zero bits needs the positions; without
//!   them a chosen key lands like a random one, so the fill and the honest FPR follow the
//!   formula (tested at 5σ in `tests/attack.rs` and `tests/sip64.rs`);
//! - **cannot** forge positives offline from the filter's bytes: a key tests positive with
//!   probability equal to the filter's FPR whatever the attacker does with the bits;
//! - **cannot** recover the secret from the bytes: they hold the bit array and a key check
//!   value, the 128-bit-output SipHash-2-4 of a constant (a different function from the
//!   64-bit one that probes, so it reveals no key's probe value); brute force is 2^128 work;
//! - **can** still, as with any hash, observe which of their own queries came back positive
//!   (timing, or the side effect of the expensive lookup) and so collect false positives one
//!   real query each, at the filter's FPR, and replay them. Rate-limit or verify positives
//!   where that matters;
//! - **cannot** tell two keys that share all their probes (the same `x`: probability 2^-64
//!   per pair, far below any FPR) from two that do not, without the key. What the 64 bits
//!   that a 128-bit output would add could buy is a better spread of the probes, and 64
//!   uniform bits already give every filter independent inputs for what it reads from `h1`
//!   and from `h2` (see [`remix`]); `tests/sip64.rs` measures the FPR of every variant keyed
//!   with this scheme within 5σ of its formula.
//!
//! ```
//! use bloomlab_classic::BloomFilter;
//! use bloomlab_keyed::{KeyedBloomFilter, Sip64Scheme, SipScheme};
//!
//! let secret = [7u8; 16]; // in production: Sip64Scheme::random()?
//! let mut f: KeyedBloomFilter =
//!     BloomFilter::with_fpr_and_scheme(10_000, 0.01, Sip64Scheme::from_secret(secret))?;
//! f.insert("https://example.com/");
//! assert!(f.might_contain("https://example.com/"));
//!
//! let bytes = f.to_bytes(); // carries a key check value, never the secret
//! assert!(!bytes.windows(16).any(|w| w == secret));
//! let back = BloomFilter::from_bytes_with_scheme(&bytes, Sip64Scheme::from_secret(secret))?;
//! assert_eq!(back, f);
//! // The wrong secret is refused rather than answering wrongly…
//! assert!(BloomFilter::from_bytes_with_scheme(&bytes, Sip64Scheme::from_secret([8; 16])).is_err());
//! // …and so is the right secret under the other keyed scheme, or no key at all.
//! assert!(BloomFilter::from_bytes_with_scheme(&bytes, SipScheme::from_secret(secret)).is_err());
//! assert!(BloomFilter::from_bytes(&bytes).is_err());
//! # Ok::<(), bloomlab_core::Error>(())
//! ```
//!
//! # Cost
//!
//! A keyed lookup or insert is the unkeyed one with SipHash-2-4 in place of XXH3: 8 SipRounds
//! for an 8-byte key with [`Sip64Scheme`] (12 with [`SipScheme`]), a chain of dependent
//! rounds that dominates a keyed lookup in cache. Format, filter logic and probe layout are
//! otherwise unchanged, so every guarantee of the unkeyed filter holds.
//!
//! # Batched hashing
//!
//! A batched operation knows its keys in advance: [`Sip64Scheme`] sets
//! [`HashScheme::LANES`], and the classic and blocked filters' batched lookups and inserts, the
//! atomic blocked filter's `insert_batch` and the blocked parallel build hash eight 8-byte keys
//! per call with [`simd::sip24_x8`] — the eight SipHash-2-4 states side by side in vector lanes
//! (keys of other lengths take the scalar path; the answers and the filter are the same either
//! way, `tests/lanes.rs`).
//!
//! # Why this design
//!
//! Keying the hash, not the filter, leaves one implementation of each filter and its format, so
//! a keyed filter inherits every test of the unkeyed one. A 64-bit SipHash-2-4 output with a
//! public bijective remix for the second probe half costs two thirds of a 128-bit output and
//! gives up nothing an attacker could use (see the security argument above). The measurements
//! behind these choices are in `docs/design/keyed.md`; current figures are in `results/`.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

use std::fmt;
use std::hash::Hasher as _;

use bloomlab_classic::BloomFilter;
#[cfg(all(
    feature = "getrandom",
    not(all(target_arch = "wasm32", target_os = "unknown"))
))]
use bloomlab_core::error::{Error, Result};
use bloomlab_core::hash::{HashScheme, KeyHash, SchemeDescriptor, SchemeId};
use bloomlab_simd as simd;
use siphasher::sip128::SipHasher24 as Sip128;

/// For a scheme with the fields `key_check` and `hasher` and a `from_secret` constructor:
/// `random` (a secret from the OS) and `key_check` (its doc saying how the value is made),
/// `Debug` (the key check value only, never the secret), and `PartialEq` / `Eq` (same key
/// check and same secret).
macro_rules! secret_scheme_glue {
    ($name:ident, key_check: $key_check_doc:literal) => {
        impl $name {
            /// Draw a fresh secret from the operating system's randomness. Offered with the
            /// `getrandom` feature (default) on targets with an OS random source, not on
            /// `wasm32-unknown-unknown` (see the crate docs).
            #[cfg(all(
                feature = "getrandom",
                not(all(target_arch = "wasm32", target_os = "unknown"))
            ))]
            pub fn random() -> Result<Self> {
                Ok(Self::from_secret(os_secret()?))
            }

            #[doc = $key_check_doc]
            pub fn key_check(&self) -> u64 {
                self.key_check
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("key_check", &format_args!("{:016x}", self.key_check))
                    .finish_non_exhaustive()
            }
        }

        impl PartialEq for $name {
            fn eq(&self, other: &Self) -> bool {
                self.key_check == other.key_check && self.hasher.key() == other.hasher.key()
            }
        }

        impl Eq for $name {}
    };
}

pub mod attack;

/// The constant whose keyed hash is the key check value (frozen for scheme ids 2 and 4).
pub const KEY_CHECK_INPUT: &[u8] = b"bloomlab key check v1";

/// The classic Bloom filter probed with a keyed scheme, by default [`Sip64Scheme`] (id 4);
/// `KeyedBloomFilter<SipScheme>` opens filters stored with id 2.
pub type KeyedBloomFilter<S = Sip64Scheme> = BloomFilter<S>;

/// The blocked (512-bit) Bloom filter probed with a keyed scheme; the parameter as for
/// [`KeyedBloomFilter`].
pub type KeyedBlockedBloomFilter<S = Sip64Scheme> = bloomlab_blocked::BlockedBloomFilter<S>;

/// Read a 16-byte secret as SipHash's `(k0, k1)`, each half little-endian.
fn split_secret(secret: [u8; 16]) -> (u64, u64) {
    let mut k0 = [0u8; 8];
    let mut k1 = [0u8; 8];
    k0.copy_from_slice(&secret[..8]);
    k1.copy_from_slice(&secret[8..]);
    (u64::from_le_bytes(k0), u64::from_le_bytes(k1))
}

#[cfg(all(
    feature = "getrandom",
    not(all(target_arch = "wasm32", target_os = "unknown"))
))]
fn os_secret() -> Result<[u8; 16]> {
    let mut secret = [0u8; 16];
    getrandom::fill(&mut secret)
        .map_err(|e| Error::invalid("secret", format!("the OS random source failed: {e}")))?;
    Ok(secret)
}

/// The public bijective remix that derives [`Sip64Scheme`]'s second probe half from the first:
/// multiplication by the odd constant [`REMIX_MULTIPLIER`] mod 2^64 (a permutation of `u64`:
/// odd numbers are invertible mod 2^64). Frozen for scheme id 4.
///
/// `x` is a PRF output, so its high half `H` and low half `L` are independent uniform 32-bit
/// values. Whatever part of `h1` a filter reads — the top bits of `x`, from `H`: the first
/// probe, the block, the bucket — the part of `h2 = x · c` it reads next is uniform given it:
/// the low half of `h2` is `L · c mod 2^32`, a bijection of `L` alone, and the high half is
/// `H · c + ⌊L · c / 2^32⌋ (mod 2^32)`, a multiplicative hash of `L` shifted by `H`. So the
/// classic and counting probes `h1 + i·h2`, the blocked filter's block (`h1`) and in-block bits
/// (`h2`), and the cuckoo filter's bucket (`h1`) and fingerprint (`h2`) get independent
/// inputs, as `tests/sip64.rs` checks with chi-square tests on both halves of `h2`.
///
/// Of the alternatives, MurmurHash3's `fmix64` (two multiplies, three xor-shifts) puts more
/// latency before the second probe's address, and a rotation by 32 bits, though cheaper,
/// copies `h1`'s high half into `h2`'s low half, a trap for any filter that reads `h2 as u32`
/// (the comparison is in `docs/design/keyed.md`).
///
/// ```
/// use bloomlab_keyed::{remix, REMIX_MULTIPLIER};
/// assert_eq!(remix(1), REMIX_MULTIPLIER);
/// assert_ne!(remix(1), remix(2));
/// ```
#[inline(always)]
pub const fn remix(x: u64) -> u64 {
    x.wrapping_mul(REMIX_MULTIPLIER)
}

/// The odd multiplier of [`remix`]: the first multiplier of MurmurHash3's 64-bit finalizer
/// (Appleby 2011), chosen for its well-spread bits and distinct from the blocked filter's
/// in-block multiplier. A format constant of scheme id 4.
pub const REMIX_MULTIPLIER: u64 = 0xff51_afd7_ed55_8ccd;

/// One 64-bit SipHash-2-4 per key under a 128-bit secret (scheme id 4): `h1` is the output,
/// `h2 = `[`remix`]`(h1)` (forced odd), and probes follow the same Kirsch–Mitzenmacher
/// derivation as every other scheme. The crate docs give the security argument; it costs 8
/// SipRounds for a key of up to 7 bytes and 8 + 2 per further 8-byte block, against
/// [`SipScheme`]'s 12.
///
/// `Debug` prints only the key check value, never the secret.
#[derive(Clone)]
pub struct Sip64Scheme {
    hasher: siphasher::sip::SipHasher24,
    k0: u64,
    k1: u64,
    key_check: u64,
}

impl Sip64Scheme {
    /// Use a caller-supplied 128-bit secret (as 16 bytes; the two halves are read
    /// little-endian as SipHash's k0 and k1).
    pub fn from_secret(secret: [u8; 16]) -> Self {
        let (k0, k1) = split_secret(secret);
        // The check is the low half of the 128-bit-output SipHash-2-4 of a constant: a
        // different function from the one that probes, so it reveals no key's positions.
        let check = Sip128::new_with_keys(k0, k1).hash(KEY_CHECK_INPUT).h1;
        Sip64Scheme {
            hasher: siphasher::sip::SipHasher24::new_with_keys(k0, k1),
            k0,
            k1,
            // 0 means "unkeyed" in the format; a keyed check value is never 0.
            key_check: check.max(1),
        }
    }
}

impl Sip64Scheme {
    /// The 64-bit SipHash-2-4 of `key` under the secret (the scheme's `h1`).
    ///
    /// An 8-byte key (every integer key: [`Key`](bloomlab_core::Key) widens them to 8 bytes)
    /// goes through siphasher's `write_u64` and `finish`, which inline into the probe loop;
    /// `hash(&[u8])` handles every length and does not. Both give the same value
    /// (`write_u64(u64::from_ne_bytes(b))` hashes exactly the bytes `b`; tested).
    #[inline(always)]
    pub fn sip64(&self, key: &[u8]) -> u64 {
        match <[u8; 8]>::try_from(key) {
            Ok(b) => {
                // A hasher built here (not copied from `self`) has a known-empty buffer, so
                // the compiler folds siphasher's buffering away: only the rounds remain.
                let mut h = siphasher::sip::SipHasher24::new_with_keys(self.k0, self.k1);
                h.write_u64(u64::from_ne_bytes(b));
                h.finish()
            }
            Err(_) => self.hasher.hash(key),
        }
    }
}

impl HashScheme for Sip64Scheme {
    #[inline(always)]
    fn hash(&self, key: &[u8]) -> KeyHash {
        let x = self.sip64(key);
        KeyHash::new(x, remix(x))
    }

    fn descriptor(&self) -> SchemeDescriptor {
        SchemeDescriptor {
            id: SchemeId::SipHash24x64Km,
            key_check: self.key_check,
        }
    }

    /// Eight keys' SipHashes run in vector lanes ([`simd::sip24_x8`]; see *Batched hashing*
    /// in the crate docs).
    const LANES: bool = true;

    #[inline(always)]
    fn hash_words8(&self, words: &[u64; 8]) -> [KeyHash; 8] {
        self.hash64_words8(words).map(|x| KeyHash::new(x, remix(x)))
    }

    #[inline(always)]
    fn hash64_words8(&self, words: &[u64; 8]) -> [u64; 8] {
        simd::sip24_x8(self.k0, self.k1, words)
    }
}

secret_scheme_glue!(
    Sip64Scheme,
    key_check: "The key check value recorded in byte formats (the low half of the 128-bit \
        SipHash-2-4 of [`KEY_CHECK_INPUT`] under the secret)."
);

/// SipHash-2-4 with 128-bit output under a 128-bit secret (scheme id 2; Aumasson & Bernstein
/// 2012, a PRF: without the key its outputs are indistinguishable from random, so probe
/// positions cannot be predicted). The two 64-bit output halves become `h1` and `h2`, and
/// probes follow the same Kirsch–Mitzenmacher derivation as every other scheme. Frozen: it
/// opens filters stored with id 2; new filters should use the faster [`Sip64Scheme`].
///
/// `Debug` prints only the key check value, never the secret.
#[derive(Clone)]
pub struct SipScheme {
    hasher: Sip128,
    key_check: u64,
}

impl SipScheme {
    /// Use a caller-supplied 128-bit secret (as 16 bytes; the two halves are read
    /// little-endian as SipHash's k0 and k1).
    pub fn from_secret(secret: [u8; 16]) -> Self {
        let (k0, k1) = split_secret(secret);
        let check = siphasher::sip::SipHasher24::new_with_keys(k0, k1).hash(KEY_CHECK_INPUT);
        SipScheme {
            hasher: Sip128::new_with_keys(k0, k1),
            // 0 means "unkeyed" in the format; a keyed check value is never 0.
            key_check: check.max(1),
        }
    }
}

impl HashScheme for SipScheme {
    #[inline]
    fn hash(&self, key: &[u8]) -> KeyHash {
        let h = self.hasher.hash(key);
        KeyHash::new(h.h1, h.h2)
    }

    fn descriptor(&self) -> SchemeDescriptor {
        SchemeDescriptor {
            id: SchemeId::SipHash24Km,
            key_check: self.key_check,
        }
    }
}

secret_scheme_glue!(
    SipScheme,
    key_check: "The key check value recorded in byte formats (a hash of [`KEY_CHECK_INPUT`] \
        under the secret)."
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_answer_from_the_siphash_paper() {
        // SipHash-2-4 64-bit test vector (Aumasson & Bernstein 2012, appendix A): key
        // 00 01 … 0f, message 00 01 … 0e → a129ca6149be45e5. Checks our key byte order.
        let key: [u8; 16] = std::array::from_fn(|i| i as u8);
        let msg: Vec<u8> = (0..15).collect();
        let k0 = u64::from_le_bytes(key[..8].try_into().unwrap());
        let k1 = u64::from_le_bytes(key[8..].try_into().unwrap());
        assert_eq!(
            siphasher::sip::SipHasher24::new_with_keys(k0, k1).hash(&msg),
            0xa129_ca61_49be_45e5
        );
        // The scheme uses the same halves.
        let s = SipScheme::from_secret(key);
        assert_eq!(s.hasher.key(), key);
    }

    #[test]
    fn secrets_give_different_positions_and_checks() {
        let a = SipScheme::from_secret([1; 16]);
        let b = SipScheme::from_secret([2; 16]);
        assert_ne!(a.hash(b"x"), b.hash(b"x"));
        assert_ne!(a.key_check(), b.key_check());
        assert_ne!(a.key_check(), 0);
        assert_eq!(a, SipScheme::from_secret([1; 16]));
        assert_eq!(a.hash(b"x").h2 & 1, 1);
    }

    #[cfg(all(
        feature = "getrandom",
        not(all(target_arch = "wasm32", target_os = "unknown"))
    ))]
    #[test]
    fn random_secrets_differ_and_debug_hides_them() {
        let a = SipScheme::random().unwrap();
        let b = SipScheme::random().unwrap();
        assert_ne!(a, b);
        let s = SipScheme::from_secret([0xab; 16]);
        let dbg = format!("{s:?}");
        assert!(!dbg.contains("abab") && !dbg.contains("171"), "{dbg}");
    }
}
