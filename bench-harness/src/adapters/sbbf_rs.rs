//! `sbbf-rs-safe` 0.3: the Parquet split-block Bloom filter with AVX2 / NEON kernels chosen
//! at run time, the fastest blocked lookup measured here. It takes pre-hashed `u64`s
//! (`insert_hash` / `contains_hash`; its README hashes keys with xxh3 first), so every entry
//! hashes the key's bytes in its adapter, and it is registered three times:
//! - `sbbf-rs` (equal FPR): xxh3-64 of the key's bytes, sized to meet the target with the
//!   split-block formula's bits/item for `p` (`math::sbbf_bits_per_item`, whole 256-bit
//!   blocks), so its FPR is the target's, like every other entry's;
//! - `sbbf-rs-eqmem` (equal memory): the same hash, sized at exactly the bits our 512-bit
//!   blocked filter uses for `(n, p)`; at that memory its FPR is above the target (about
//!   1.3 % at 1 %), and the row says so — the blocked design's speed at equal space;
//! - `sbbf-rs-parquet`: xxHash64 (seed 0) of the key's bytes, as the Parquet spec hashes a
//!   value and as our `sbbf` entry does, sized like `sbbf-rs`: the like-for-like peer of our
//!   split-block filter.

use crate::error::Error;
use xxhash_rust::xxh3::xxh3_64;
use xxhash_rust::xxh64::xxh64;

use super::{Adapter, Entry, Info, Kind, Spec};

/// Sized with the split-block formula, xxh3-64 (`sbbf-rs`).
pub const EQUAL_FPR: u8 = 0;
/// Sized at our blocked filter's bits, xxh3-64 (`sbbf-rs-eqmem`).
pub const EQUAL_MEMORY: u8 = 1;
/// Sized with the split-block formula, xxHash64 seed 0 (`sbbf-rs-parquet`).
pub const PARQUET: u8 = 2;

/// sbbf-rs-safe 0.3 split-block filter (256-bit blocks, 8 probes, one per 32-bit word);
/// `MODE` chooses the hash and sizing (see the module docs).
pub struct SbbfRs<const MODE: u8 = EQUAL_FPR> {
    f: sbbf_rs_safe::Filter,
    bits: u64,
    items: u64,
}

impl<const P: u8> std::fmt::Debug for SbbfRs<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SbbfRs")
            .field("bits", &self.bits)
            .field("items", &self.items)
            .finish()
    }
}

impl<const P: u8> SbbfRs<P> {
    #[inline(always)]
    fn hash(key: &[u8]) -> u64 {
        if P == PARQUET {
            xxh64(key, 0)
        } else {
            xxh3_64(key)
        }
    }

    /// Table bits for `(n, p)`: the 512-bit blocked filter's, or the split-block formula's.
    fn bits(spec: &Spec) -> Result<u64, Error> {
        let n = spec.n.max(1);
        if P != EQUAL_MEMORY {
            let bpi = bloomlab_sbbf::math::sbbf_bits_per_item(spec.fpr).map_err(Error::from)?;
            Ok(bloomlab_sbbf::math::sbbf_blocks(n, bpi).map_err(Error::from)? * 256)
        } else {
            super::peers::blocked_bits(spec)
        }
    }
}

impl<const P: u8> Adapter for SbbfRs<P> {
    fn new_empty(spec: &Spec) -> Option<Result<Self, Error>> {
        Some((|| {
            let bits = Self::bits(spec)?;
            // `Filter::new(bits_per_key, num_keys)` allocates bits_per_key · num_keys / 8 bytes.
            let f = sbbf_rs_safe::Filter::new(super::peers::usize_bits(bits)?, 1);
            Ok(SbbfRs { f, bits, items: 0 })
        })())
    }
    #[inline]
    fn insert(&mut self, key: &[u8]) -> bool {
        self.items += 1;
        self.f.insert_hash(Self::hash(key));
        true
    }
    #[inline]
    fn contains(&self, key: &[u8]) -> bool {
        self.f.contains_hash(Self::hash(key))
    }
    fn theoretical_fpr(&self) -> Option<f64> {
        (self.items > 0)
            .then(|| bloomlab_sbbf::math::sbbf_fpr(self.bits as f64 / self.items as f64))
    }
    fn describe(&self) -> String {
        let h = if P == PARQUET {
            "xxhash64 seed 0"
        } else {
            "xxh3-64"
        };
        format!("m={} (256-bit blocks, 8 probes), {h} keys", self.bits)
    }
}

/// Registry entry for sbbf-rs-safe sized to meet the target (equal FPR).
pub fn sbbf_rs_entry() -> Entry {
    Entry::new::<SbbfRs<EQUAL_FPR>>(Info {
        note: "Filter::new(split-block bits for (n, p), 1): sized to meet p (equal FPR); xxh3-64 of the key's bytes (insert_hash / contains_hash, as its README hashes first); AVX2 split-block",
        ..Info::peer("sbbf-rs", "sbbf-rs-safe 0.3", Kind::Bloom)
    })
}

/// Registry entry for sbbf-rs-safe at our blocked filter's memory (equal memory).
pub fn sbbf_rs_eqmem_entry() -> Entry {
    Entry::new::<SbbfRs<EQUAL_MEMORY>>(Info {
        equal_memory: true,
        note: "Filter::new(bits of our blocked filter for (n, p), 1): equal memory, so its FPR is above p (about 1.3 % at 1 %); xxh3-64 of the key's bytes; AVX2 split-block",
        ..Info::peer("sbbf-rs-eqmem", "sbbf-rs-safe 0.3", Kind::Bloom)
    })
}

/// Registry entry for sbbf-rs-safe hashed and sized as Parquet (our `sbbf`'s like-for-like peer).
pub fn sbbf_rs_parquet_entry() -> Entry {
    Entry::new::<SbbfRs<PARQUET>>(Info {
        note: "Filter::new(bits of our split-block filter for (n, p), 1); xxHash64 seed 0 of the key's bytes, as Parquet hashes a value; AVX2 split-block",
        ..Info::peer("sbbf-rs-parquet", "sbbf-rs-safe 0.3", Kind::Bloom)
    })
}
