//! One-hit-wonder cache admission (Maggs & Sitaraman 2015, "Algorithmic nuggets in content
//! delivery"): about three quarters of the objects in a CDN trace are requested exactly once,
//! so caching on first sight fills the cache (and the disk) with content nobody asks for again.
//! Admitting an object only on its **second** request, remembered by a Bloom filter, avoids
//! those writes.
//!
//! The filter side follows the paper's design: two filters, the current one and the previous
//! one; a request counts as "seen before" if either says maybe; when the current filter
//! reaches its design capacity it becomes the previous one and a fresh one starts, so the
//! filter never runs past its design load. A miss is one insert-if-absent
//! ([`Filter::insert_unique_bytes`]): seen before (admit) or remembered now.

use std::num::NonZeroUsize;

use bloomlab_classic::BloomFilter;
use bloomlab_core::{Error, Filter};
use lru::LruCache;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, Zipf};

/// A synthetic CDN trace.
#[derive(Clone, Copy, Debug)]
pub struct TraceConfig {
    /// Requests in the trace.
    pub requests: u64,
    /// Objects with Zipf-distributed popularity.
    pub popular_objects: u64,
    /// Zipf exponent of their popularity (≈ 0.8–1.0 for web traffic).
    pub zipf_exponent: f64,
    /// Share of requests that go to a brand-new object never requested again.
    pub one_hit_request_share: f64,
    /// Seed.
    pub seed: u64,
}

/// The trace: object ids in request order. One-hit objects have ids above every popular id.
pub fn trace(cfg: &TraceConfig) -> Result<Vec<u64>, Error> {
    if cfg.popular_objects == 0 || !(0.0..1.0).contains(&cfg.one_hit_request_share) {
        return Err(Error::invalid(
            "trace",
            "needs popular objects and a one-hit share in [0, 1)",
        ));
    }
    let zipf = Zipf::new(cfg.popular_objects as f64, cfg.zipf_exponent)
        .map_err(|e| Error::invalid("zipf_exponent", e.to_string()))?;
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let mut next_one_hit = cfg.popular_objects + 1;
    Ok((0..cfg.requests)
        .map(|_| {
            if rng.random_bool(cfg.one_hit_request_share) {
                next_one_hit += 1;
                next_one_hit
            } else {
                zipf.sample(&mut rng) as u64
            }
        })
        .collect())
}

/// Fraction of distinct objects in a trace that are requested exactly once.
pub fn one_hit_object_share(trace: &[u64]) -> f64 {
    let mut counts = std::collections::HashMap::new();
    for &o in trace {
        *counts.entry(o).or_insert(0u32) += 1;
    }
    counts.values().filter(|&&c| c == 1).count() as f64 / counts.len() as f64
}

/// How objects get into the cache.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Policy {
    /// Cache every miss (the baseline).
    AdmitAlways,
    /// Cache a miss only if a pair of rotating Bloom filters says it was requested before.
    SecondRequest {
        /// Objects each filter is sized for before rotating.
        filter_capacity: u64,
        /// Target FPR of each filter.
        fpr: f64,
    },
}

/// What a simulation measured.
#[derive(Clone, Debug, PartialEq)]
pub struct AdmissionReport {
    /// Policy name.
    pub policy: String,
    /// Requests.
    pub requests: u64,
    /// Requests served from cache.
    pub hits: u64,
    /// Objects written into the cache.
    pub cache_writes: u64,
    /// Bytes of the admission filters (both of them).
    pub filter_bytes: usize,
}

impl AdmissionReport {
    /// Hit rate.
    pub fn hit_rate(&self) -> f64 {
        self.hits as f64 / self.requests as f64
    }
}

/// Run `trace` through an LRU cache of `cache_objects` objects under `policy`.
pub fn simulate(
    trace: &[u64],
    cache_objects: usize,
    policy: Policy,
) -> Result<AdmissionReport, Error> {
    let cap = NonZeroUsize::new(cache_objects)
        .ok_or_else(|| Error::invalid("cache_objects", "must be at least 1"))?;
    let mut cache: LruCache<u64, ()> = LruCache::new(cap);
    let mut filters = match policy {
        Policy::AdmitAlways => None,
        Policy::SecondRequest {
            filter_capacity,
            fpr,
        } => Some((
            BloomFilter::with_fpr(filter_capacity, fpr)?,
            BloomFilter::with_fpr(filter_capacity, fpr)?,
        )),
    };
    let (mut hits, mut writes) = (0u64, 0u64);
    for &obj in trace {
        if cache.get(&obj).is_some() {
            hits += 1;
            continue;
        }
        let admit = match &mut filters {
            None => true,
            Some((current, previous)) => {
                if previous.might_contain(&obj) {
                    true
                } else {
                    // A full current filter rotates before it takes a new object.
                    if current.len() >= current.capacity() && !current.might_contain(&obj) {
                        std::mem::swap(current, previous);
                        current.clear();
                    }
                    // Seen before (admit), or remembered now: one insert-if-absent.
                    !current.insert_unique_bytes(&obj.to_le_bytes())?
                }
            }
        };
        if admit {
            cache.put(obj, ());
            writes += 1;
        }
    }
    let (name, filter_bytes) = match (&policy, &filters) {
        (Policy::SecondRequest { fpr, .. }, Some((a, b))) => (
            format!("admit on 2nd request (2 × classic {:.0} %)", fpr * 100.0),
            a.size_in_bytes() + b.size_in_bytes(),
        ),
        _ => ("admit always".to_string(), 0),
    };
    Ok(AdmissionReport {
        policy: name,
        requests: trace.len() as u64,
        hits,
        cache_writes: writes,
        filter_bytes,
    })
}

/// Render reports as a Markdown table, with writes avoided relative to the first report.
pub fn markdown(reports: &[AdmissionReport]) -> String {
    let base = reports.first().map(|r| r.cache_writes).unwrap_or(0) as f64;
    crate::table::markdown_table(
        [
            "policy",
            "hit rate",
            "cache writes",
            "writes avoided",
            "filter memory",
        ],
        reports.iter().map(|r| {
            [
                r.policy.to_string(),
                format!("{:.2} %", 100.0 * r.hit_rate()),
                r.cache_writes.to_string(),
                format!("{:.1} %", 100.0 * (1.0 - r.cache_writes as f64 / base)),
                format!("{:.1} KiB", r.filter_bytes as f64 / 1024.0),
            ]
        }),
    )
}
