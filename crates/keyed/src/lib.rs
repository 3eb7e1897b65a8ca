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
//! [`SipScheme`] swaps the hash, not the filter logic: filters are generic over
//! [`HashScheme`], so `BloomFilter<SipScheme>` ([`KeyedBloomFilter`]) is the classic filter and
//! `BlockedBloomFilter<SipScheme>` ([`KeyedBlockedBloomFilter`]) the blocked one, probed at
//! positions only the secret's holder can compute. The secret comes from the operating system's randomness
//! ([`SipScheme::random`]) or from the caller ([`SipScheme::from_secret`]). It is never written
//! into a serialized filter: the format records a *key check value* (SipHash of a constant
//! under the secret), so loading with the wrong secret is refused instead of answering wrongly.
//!
//! What keying does **not** prevent: an attacker who can observe which of their own queries
//! came back positive (timing, or the side effect of the expensive lookup) can still collect
//! false positives one query at a time — at the filter's FPR, paying one real query each — and
//! replay them. Rate-limit or verify positives where that matters.
//!
//! ```
//! use bloomlab_classic::BloomFilter;
//! use bloomlab_keyed::{KeyedBloomFilter, SipScheme};
//!
//! let secret = [7u8; 16]; // in production: SipScheme::random()?
//! let mut f: KeyedBloomFilter = BloomFilter::with_fpr_and_scheme(10_000, 0.01, SipScheme::from_secret(secret))?;
//! f.insert("https://example.com/");
//! assert!(f.might_contain("https://example.com/"));
//!
//! let bytes = f.to_bytes(); // carries a key check value, never the secret
//! assert!(!bytes.windows(16).any(|w| w == secret));
//! let back = BloomFilter::from_bytes_with_scheme(&bytes, SipScheme::from_secret(secret))?;
//! assert_eq!(back, f);
//! // The wrong secret is refused rather than answering wrongly.
//! assert!(BloomFilter::from_bytes_with_scheme(&bytes, SipScheme::from_secret([8; 16])).is_err());
//! // Unkeyed and keyed filters never mix.
//! assert!(BloomFilter::from_bytes(&bytes).is_err());
//! # Ok::<(), bloomlab_core::Error>(())
//! ```
#![warn(missing_docs)]

use std::fmt;

use bloomlab_classic::BloomFilter;
use bloomlab_core::error::{Error, Result};
use bloomlab_core::hash::{HashScheme, KeyHash, SchemeDescriptor, SchemeId};
use siphasher::sip128::SipHasher24 as Sip128;

pub mod attack;

/// The constant whose keyed hash is the key check value (frozen for scheme id 2).
pub const KEY_CHECK_INPUT: &[u8] = b"bloomlab key check v1";

/// The classic Bloom filter probed with keyed SipHash-2-4.
pub type KeyedBloomFilter = BloomFilter<SipScheme>;

/// The blocked (512-bit) Bloom filter probed with keyed SipHash-2-4.
pub type KeyedBlockedBloomFilter = bloomlab_blocked::BlockedBloomFilter<SipScheme>;

/// SipHash-2-4 with 128-bit output under a 128-bit secret (Aumasson & Bernstein 2012, a PRF:
/// without the key its outputs are indistinguishable from random, so probe positions cannot
/// be predicted). The two 64-bit output halves become `h1` and `h2`, and probes follow the
/// same Kirsch–Mitzenmacher derivation as every other scheme.
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
        let mut k0 = [0u8; 8];
        let mut k1 = [0u8; 8];
        k0.copy_from_slice(&secret[..8]);
        k1.copy_from_slice(&secret[8..]);
        let (k0, k1) = (u64::from_le_bytes(k0), u64::from_le_bytes(k1));
        let check = siphasher::sip::SipHasher24::new_with_keys(k0, k1).hash(KEY_CHECK_INPUT);
        SipScheme {
            hasher: Sip128::new_with_keys(k0, k1),
            // 0 means "unkeyed" in the format; a keyed check value is never 0.
            key_check: check.max(1),
        }
    }

    /// Draw a fresh secret from the operating system's randomness.
    pub fn random() -> Result<Self> {
        let mut secret = [0u8; 16];
        getrandom::fill(&mut secret)
            .map_err(|e| Error::invalid("secret", format!("the OS random source failed: {e}")))?;
        Ok(Self::from_secret(secret))
    }

    /// The key check value recorded in byte formats (a hash of [`KEY_CHECK_INPUT`] under
    /// the secret).
    pub fn key_check(&self) -> u64 {
        self.key_check
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

impl fmt::Debug for SipScheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SipScheme")
            .field("key_check", &format_args!("{:016x}", self.key_check))
            .finish_non_exhaustive()
    }
}

impl PartialEq for SipScheme {
    fn eq(&self, other: &Self) -> bool {
        self.key_check == other.key_check && self.hasher.key() == other.hasher.key()
    }
}

impl Eq for SipScheme {}

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
