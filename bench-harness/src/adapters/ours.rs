//! One generic adapter for every bloomlab filter: anything implementing
//! `bloomlab_core::Filter` plus [`Construct`] (how to size it for `n` items at FPR `p`).

use bloomlab_core::Filter;

use super::{Adapter, Entry, Info, Spec};

/// How the harness sizes one of our filter types for a target. Implement it for a new
/// variant (one function) and register `entry::<TheType>(Info { .. })`.
pub trait Construct: Filter + Sized + Send + 'static {
    /// A filter for `n` items at target FPR `p`.
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self>;
}

impl Construct for bloomlab_classic::BloomFilter {
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        bloomlab_classic::BloomFilter::with_fpr(n, p)
    }
}

impl Construct for bloomlab_keyed::KeyedBloomFilter {
    /// A fresh secret from the operating system, as a user would construct it.
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        bloomlab_classic::BloomFilter::with_fpr_and_scheme(
            n,
            p,
            bloomlab_keyed::SipScheme::random()?,
        )
    }
}

impl Construct for bloomlab_classic::BloomFilter<bloomlab_keyed::Sip64Scheme> {
    /// A fresh secret from the operating system, as a user would construct it.
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        bloomlab_classic::BloomFilter::with_fpr_and_scheme(
            n,
            p,
            bloomlab_keyed::Sip64Scheme::random()?,
        )
    }
}

impl Construct for bloomlab_cuckoo::CuckooFilter {
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        bloomlab_cuckoo::CuckooFilter::with_fpr(n, p)
    }
}

/// Starts at n/8 and grows to n, like the growing peers, so a measurement at n includes
/// the growth (four stages).
impl Construct for bloomlab_scalable::ScalableBloomFilter {
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        bloomlab_scalable::ScalableBloomFilter::new((n / 8).max(1), p)
    }
}

/// Adapter for one of our filters; keys are presented as 8 little-endian bytes.
#[derive(Debug)]
pub struct Ours<F>(pub F);

impl<F: Construct> Adapter for Ours<F> {
    fn new_empty(spec: &Spec) -> Option<Result<Self, String>> {
        Some(
            F::with_target(spec.n, spec.fpr)
                .map(Ours)
                .map_err(|e| e.to_string()),
        )
    }

    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.0.insert_bytes(&key.to_le_bytes()).is_ok()
    }

    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.might_contain_bytes(&key.to_le_bytes())
    }

    fn theoretical_fpr(&self) -> Option<f64> {
        Some(self.0.expected_fpr())
    }

    fn describe(&self) -> String {
        let p = self.0.params();
        format!(
            "table_bits={} k={} hash={}",
            p.table_bits,
            p.hashes,
            p.scheme.id.name()
        )
    }
}

/// Registry entry for our filter type `F`.
pub fn entry<F: Construct>(info: Info) -> Entry {
    Entry::new::<Ours<F>>(info)
}

impl Construct for bloomlab_blocked::BlockedBloomFilter {
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        bloomlab_blocked::BlockedBloomFilter::with_fpr(n, p)
    }
}

impl Construct for bloomlab_counting::CountingBloomFilter {
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        bloomlab_counting::CountingBloomFilter::with_fpr(n, p)
    }
}

/// The blocked filter answering through its batched API: lookups are timed with
/// `might_contain_batch` over the whole stream (prefetching a rolling 32 keys ahead).
#[derive(Debug)]
pub struct BlockedBatched(pub bloomlab_blocked::BlockedBloomFilter);

impl Adapter for BlockedBatched {
    const BATCHED: bool = true;

    fn new_empty(spec: &Spec) -> Option<Result<Self, String>> {
        Some(
            bloomlab_blocked::BlockedBloomFilter::with_fpr(spec.n, spec.fpr)
                .map(BlockedBatched)
                .map_err(|e| e.to_string()),
        )
    }

    fn build(spec: &Spec, keys: &[u64]) -> Result<(Self, u64), String> {
        let mut f = bloomlab_blocked::BlockedBloomFilter::with_fpr(spec.n, spec.fpr)
            .map_err(|e| e.to_string())?;
        f.insert_batch(keys);
        Ok((BlockedBatched(f), 0))
    }

    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.0.insert(&key);
        true
    }

    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.might_contain(&key)
    }

    fn insert_many(&mut self, keys: &[u64]) -> u64 {
        self.0.insert_batch(keys);
        0
    }

    fn contains_batch(&self, keys: &[u64], out: &mut [bool]) {
        self.0
            .might_contain_batch(keys, out)
            .expect("the driver passes equal lengths");
    }

    fn theoretical_fpr(&self) -> Option<f64> {
        Some(self.0.expected_fpr())
    }

    fn describe(&self) -> String {
        format!(
            "blocks={} k={} hash=xxh3-128/km batched(prefetch {})",
            self.0.blocks(),
            self.0.hashes(),
            bloomlab_blocked::BATCH
        )
    }
}

/// Our Ribbon filter: static, built from the whole key slice (keys as 8 little-endian bytes,
/// like every one of ours); it refuses inserts.
#[derive(Debug)]
pub struct Ribbon(pub bloomlab_ribbon::RibbonFilter);

impl Adapter for Ribbon {
    fn new_empty(_: &Spec) -> Option<Result<Self, String>> {
        None
    }

    fn build(spec: &Spec, keys: &[u64]) -> Result<(Self, u64), String> {
        bloomlab_ribbon::RibbonFilter::build(keys, spec.fpr)
            .map(|f| (Ribbon(f), 0))
            .map_err(|e| e.to_string())
    }

    fn insert(&mut self, _: u64) -> bool {
        false
    }

    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.might_contain(&key)
    }

    fn theoretical_fpr(&self) -> Option<f64> {
        Some(self.0.expected_fpr())
    }

    fn describe(&self) -> String {
        format!(
            "slots={} r={} seed={} hash=xxh3-128",
            self.0.num_slots(),
            self.0.result_bits(),
            self.0.seed()
        )
    }
}

/// The Parquet split-block filter sized with its own formula (any block count); keys as 8
/// little-endian bytes, hashed with xxHash64 seed 0 as Parquet hashes an INT64.
impl Construct for bloomlab_sbbf::Sbbf {
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        bloomlab_sbbf::Sbbf::with_fpr(n, p)
    }
}

/// The split-block filter through its batched API: each key is hashed and its block
/// prefetched `bloomlab_sbbf::BATCH` keys ahead.
#[derive(Debug)]
pub struct SbbfBatched(pub bloomlab_sbbf::Sbbf);

impl Adapter for SbbfBatched {
    const BATCHED: bool = true;

    fn new_empty(spec: &Spec) -> Option<Result<Self, String>> {
        Some(
            bloomlab_sbbf::Sbbf::with_fpr(spec.n, spec.fpr)
                .map(SbbfBatched)
                .map_err(|e| e.to_string()),
        )
    }

    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.0.insert(&key);
        true
    }

    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.0.might_contain(&key)
    }

    fn contains_batch(&self, keys: &[u64], out: &mut [bool]) {
        self.0
            .might_contain_batch(keys, out)
            .expect("the driver passes equal lengths");
    }

    fn theoretical_fpr(&self) -> Option<f64> {
        Some(self.0.expected_fpr())
    }

    fn describe(&self) -> String {
        format!(
            "blocks={} hash=parquet-xxh64 batched(prefetch {})",
            self.0.blocks(),
            bloomlab_sbbf::BATCH
        )
    }
}
