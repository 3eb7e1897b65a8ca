//! `sbbf-rs-safe` 0.3: the Parquet split-block Bloom filter with AVX2 / NEON kernels chosen
//! at run time, the fastest blocked lookup measured here. It hashes nothing itself: keys are
//! given as xxh3-64 of their 8 little-endian bytes (what its own benches do), and it is sized
//! at exactly the bits our blocked filter uses for the same `(n, p)`, so every run prints the
//! blocked design's speed at equal space.

use bloomlab_core::math;
use xxhash_rust::xxh3::xxh3_64;

use super::{Adapter, Curve, Entry, Info, Kind, Spec};

/// sbbf-rs-safe 0.3 split-block filter (256-bit blocks, 8 probes, one per 32-bit word).
pub struct SbbfRs {
    f: sbbf_rs_safe::Filter,
    bits: u64,
    items: u64,
}

impl std::fmt::Debug for SbbfRs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SbbfRs")
            .field("bits", &self.bits)
            .field("items", &self.items)
            .finish()
    }
}

#[inline(always)]
fn hash(key: u64) -> u64 {
    xxh3_64(&key.to_le_bytes())
}

impl Adapter for SbbfRs {
    fn new_empty(spec: &Spec) -> Option<Result<Self, String>> {
        Some((|| {
            // The blocked filter's size for (n, p): bits/item from the exact blocked formula,
            // rounded up to whole 512-bit blocks.
            let (bpi, _) =
                math::blocked_bits_per_item_exact(spec.fpr, 512).map_err(|e| e.to_string())?;
            let bits = math::bits_for_bits_per_item(spec.n.max(1), bpi)
                .map_err(|e| e.to_string())?
                .div_ceil(512)
                * 512;
            let bits_usize = usize::try_from(bits).map_err(|_| format!("{bits} bits"))?;
            // `Filter::new(bits_per_key, num_keys)` allocates bits_per_key · num_keys / 8 bytes.
            let f = sbbf_rs_safe::Filter::new(bits_usize, 1);
            Ok(SbbfRs { f, bits, items: 0 })
        })())
    }
    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.items += 1;
        self.f.insert_hash(hash(key));
        true
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.f.contains_hash(hash(key))
    }
    fn theoretical_fpr(&self) -> Option<f64> {
        (self.items > 0).then(|| math::sbbf_fpr(self.bits as f64 / self.items as f64))
    }
    fn describe(&self) -> String {
        format!("m={} (256-bit blocks, 8 probes), xxh3-64 keys", self.bits)
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
