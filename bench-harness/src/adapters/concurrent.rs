//! Filters that threads share for inserts: our atomic blocked filter and fastbloom's
//! `AtomicBloomFilter`. The driver runs them on one thread like every other entry (their
//! single-thread cost against `blocked` and `fastbloom`); the `concurrent` experiment
//! measures them with 1 and 2 inserting threads.

use crate::error::Error;
use bloomlab_blocked::AtomicBlockedBloomFilter;

use bloomlab_core::Filter;

use super::peers::{FastBloomHasher, Fold};
use super::{Adapter, Entry, Info, Kind, Spec};

/// Our atomic blocked filter, sized as the blocked entry (`with_fpr(n, p)`), its key bytes
/// through the `Filter` trait as the `Ours` adapter hands them to every variant.
#[derive(Debug)]
pub struct BlockedAtomic(pub AtomicBlockedBloomFilter);

impl Adapter for BlockedAtomic {
    fn new_empty(spec: &Spec) -> Option<Result<Self, Error>> {
        let f = AtomicBlockedBloomFilter::with_fpr(spec.n, spec.fpr);
        Some(f.map(BlockedAtomic).map_err(Error::from))
    }
    through_filter_trait!();
    fn describe(&self) -> String {
        super::ours::describe(&self.0, "")
    }
}

/// Registry entry for the atomic blocked filter.
pub fn blocked_atomic_entry() -> Entry {
    Entry::new::<BlockedAtomic>(Info {
        note: "AtomicBlockedBloomFilter::with_fpr(n, p): the blocked filter's bits and probes, inserts through &self, a prefetch of the block then one relaxed fetch_or per probe; lookups run the blocked filter's inline kernel on the shared block; measured on one thread",
        ..Info::base("blocked-atomic", "bloomlab-blocked", Kind::Bloom)
    })
}

/// fastbloom 0.17's `AtomicBloomFilter` with foldhash (its documented fast hasher).
#[derive(Debug)]
pub struct FastBloomAtomic {
    f: fastbloom::AtomicBloomFilter<Fold>,
    items: u64,
}

impl FastBloomAtomic {
    /// Sized as the `fastbloom` entry: `with_false_pos(p).expected_items(n)`.
    pub fn new(n: u64, p: f64, seed: u64) -> Self {
        let f = fastbloom::AtomicBloomFilter::with_false_pos(p)
            .hasher(Fold::make(seed))
            .expected_items(usize::try_from(n).unwrap_or(usize::MAX).max(1));
        FastBloomAtomic { f, items: 0 }
    }

    /// Insert through `&self` (as threads sharing it do).
    #[inline]
    pub fn insert_shared(&self, key: &[u8]) {
        self.f.insert(key);
    }

    /// The filter.
    pub fn inner(&self) -> &fastbloom::AtomicBloomFilter<Fold> {
        &self.f
    }
}

impl Adapter for FastBloomAtomic {
    fn new_empty(spec: &Spec) -> Option<Result<Self, Error>> {
        Some(Ok(FastBloomAtomic::new(spec.n, spec.fpr, spec.seed)))
    }
    super::peers::fastbloom_methods!();
}

/// Registry entry for fastbloom's atomic filter (foldhash).
pub fn fastbloom_atomic_entry() -> Entry {
    Entry::new::<FastBloomAtomic>(Info {
        note: "AtomicBloomFilter::with_false_pos(p).hasher(foldhash FixedState::with_seed(seed)).expected_items(n): its atomic filter with its documented fast hasher; measured on one thread",
        ..Info::peer("fastbloom-atomic", "fastbloom 0.17", Kind::Bloom)
    })
}
