//! `sbbf-rs-safe` 0.3: the Parquet split-block Bloom filter with AVX2 / NEON kernels chosen
//! at run time, the fastest blocked lookup measured here. It hashes nothing itself, so it is
//! registered twice:
//! - `sbbf-rs`: keys given as xxh3-64 of their 8 little-endian bytes (what its own benches
//!   do), sized at exactly the bits our 512-bit blocked filter uses for the same `(n, p)`, so
//!   every run prints the blocked design's speed at equal space;
//! - `sbbf-rs-parquet`: keys given as xxHash64 (seed 0) of the 8 bytes, as the Parquet spec
//!   hashes an INT64 and as our `sbbf` entry does, sized like our `sbbf` (the split-block
//!   formula's bits/item for the target, whole 256-bit blocks): the like-for-like peer of our
//!   split-block filter.

use bloomlab_core::math;
use xxhash_rust::xxh3::xxh3_64;
use xxhash_rust::xxh64::xxh64;

use super::{Adapter, Curve, Entry, Info, Kind, Spec};

/// sbbf-rs-safe 0.3 split-block filter (256-bit blocks, 8 probes, one per 32-bit word);
/// `PARQUET` chooses the hash and sizing (see the module docs).
pub struct SbbfRs<const PARQUET: bool = false> {
    f: sbbf_rs_safe::Filter,
    bits: u64,
    items: u64,
}

impl<const P: bool> std::fmt::Debug for SbbfRs<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SbbfRs")
            .field("bits", &self.bits)
            .field("items", &self.items)
            .finish()
    }
}

impl<const P: bool> SbbfRs<P> {
    #[inline(always)]
    fn hash(key: u64) -> u64 {
        if P {
            xxh64(&key.to_le_bytes(), 0)
        } else {
            xxh3_64(&key.to_le_bytes())
        }
    }

    /// Table bits for `(n, p)`: the 512-bit blocked filter's, or the split-block formula's.
    fn bits(spec: &Spec) -> Result<u64, String> {
        let n = spec.n.max(1);
        if P {
            let bpi = math::sbbf_bits_per_item(spec.fpr).map_err(|e| e.to_string())?;
            Ok(math::sbbf_blocks(n, bpi).map_err(|e| e.to_string())? * 256)
        } else {
            // Bits/item from the exact blocked formula, rounded up to whole 512-bit blocks.
            let (bpi, _) =
                math::blocked_bits_per_item_exact(spec.fpr, 512).map_err(|e| e.to_string())?;
            Ok(math::bits_for_bits_per_item(n, bpi)
                .map_err(|e| e.to_string())?
                .div_ceil(512)
                * 512)
        }
    }
}

impl<const P: bool> Adapter for SbbfRs<P> {
    fn new_empty(spec: &Spec) -> Option<Result<Self, String>> {
        Some((|| {
            let bits = Self::bits(spec)?;
            let bits_usize = usize::try_from(bits).map_err(|_| format!("{bits} bits"))?;
            // `Filter::new(bits_per_key, num_keys)` allocates bits_per_key · num_keys / 8 bytes.
            let f = sbbf_rs_safe::Filter::new(bits_usize, 1);
            Ok(SbbfRs { f, bits, items: 0 })
        })())
    }
    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.items += 1;
        self.f.insert_hash(Self::hash(key));
        true
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.f.contains_hash(Self::hash(key))
    }
    fn theoretical_fpr(&self) -> Option<f64> {
        (self.items > 0).then(|| math::sbbf_fpr(self.bits as f64 / self.items as f64))
    }
    fn describe(&self) -> String {
        let h = if P { "xxhash64 seed 0" } else { "xxh3-64" };
        format!("m={} (256-bit blocks, 8 probes), {h} keys", self.bits)
    }
}

/// Registry entry for sbbf-rs-safe.
pub fn sbbf_rs_entry() -> Entry {
    Entry::new::<SbbfRs>(Info {
        peer: true,
        curve: Some(Curve::Bloom),
        note: "Filter::new(bits of our blocked filter for (n, p), 1); xxh3-64 of the key's 8 LE bytes; AVX2 split-block",
        ..Info::base("sbbf-rs", "sbbf-rs-safe 0.3", Kind::Bloom)
    })
}

/// Registry entry for sbbf-rs-safe hashed and sized as Parquet (our `sbbf`'s like-for-like peer).
pub fn sbbf_rs_parquet_entry() -> Entry {
    Entry::new::<SbbfRs<true>>(Info {
        peer: true,
        curve: Some(Curve::Bloom),
        note: "Filter::new(bits of our split-block filter for (n, p), 1); xxHash64 seed 0 of the key's 8 LE bytes, as Parquet hashes an INT64; AVX2 split-block",
        ..Info::base("sbbf-rs-parquet", "sbbf-rs-safe 0.3", Kind::Bloom)
    })
}
