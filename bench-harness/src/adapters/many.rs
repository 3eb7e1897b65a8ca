//! The many-filters mode (the RocksDB `filter_bench` idea): many small filters of one entry,
//! together larger than the last-level cache, each query to a random one. The plan
//! ([`Many`]), the keys made as a stream ([`many_key`]), the filters built and kept for
//! interleaved rounds ([`ManyRounds`]) and what a round and a whole measurement found
//! ([`ManyRound`], [`ManyResult`]). The experiment that runs it is
//! [`crate::experiments::many_filters`].

use crate::error::Error;
use std::hint::black_box;

use super::{Adapter, Spec};
use crate::alloc::net_bytes_signed;
use crate::control::ThreadClock;
use crate::keys::Keys;

/// The many-filters mode (the RocksDB `filter_bench` idea): many filters of one size, keys
/// generated as a stream per filter, each query to a random filter.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Many {
    /// Keys per filter.
    pub keys_per: usize,
    /// Build filters until they hold this many live heap bytes together…
    pub target_bytes: usize,
    /// …or this many filters, whichever comes first.
    pub max_filters: usize,
    /// Queries per timed round (half members, half non-members, shuffled).
    pub queries: usize,
    /// Timed rounds.
    pub rounds: u32,
    /// Key seed.
    pub seed: u64,
}

/// Key `i` of filter `f` in the many-filters mode: 8 bytes, a fixed-seed mix of `(f, i)`, so
/// keys are made as a stream and never stored for all filters at once. Indexes below
/// [`Many::keys_per`] are members of filter `f`; indexes at or above it are non-members.
pub fn many_key(seed: u64, f: usize, i: usize) -> [u8; 8] {
    // splitmix64 of a distinct 64-bit id per (filter, index): a bijection, so distinct ids
    // give distinct keys.
    let mut z = seed
        .wrapping_add(((f as u64) << 32) | i as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z ^ (z >> 31)).to_le_bytes()
}

/// What one entry measured in the many-filters mode.
#[derive(Clone, Debug, PartialEq)]
pub struct ManyResult {
    /// Filters built.
    pub filters: usize,
    /// Live heap bytes of all of them.
    pub heap_bytes: usize,
    /// ns per lookup in each timed round.
    pub rounds_ns: Vec<f64>,
    /// Member queries answered "absent" (must be 0).
    pub false_negatives: u64,
    /// Non-member queries answered "maybe", and how many were asked.
    pub false_positives: u64,
    /// See `false_positives`.
    pub negatives: u64,
}

/// One timed round of the many-filters mode.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ManyRound {
    /// ns per lookup.
    pub ns: f64,
    /// Member queries answered "absent" (must be 0).
    pub false_negatives: u64,
    /// Non-member queries answered "maybe", and how many were asked.
    pub false_positives: u64,
    /// See `false_positives`.
    pub negatives: u64,
}

/// One entry's filters of the many-filters mode, built once and kept for timed rounds, so
/// that the entries' rounds can be interleaved.
pub trait ManyRounds: Send {
    /// Filters built.
    fn filters(&self) -> usize;
    /// Live heap bytes of all of them.
    fn heap_bytes(&self) -> usize;
    /// Time round `round` of `plan`: `plan.queries` queries, each to a random filter, a member
    /// of it or a non-member, alternating; the queries are made before timing, from a stream
    /// of the plan's seed chosen by the round.
    fn round(&self, plan: &Many, round: u32) -> ManyRound;
}

struct ManyFilters<A> {
    filters: Vec<A>,
    heap_bytes: usize,
}

impl<A: Adapter> ManyRounds for ManyFilters<A> {
    fn filters(&self) -> usize {
        self.filters.len()
    }

    fn heap_bytes(&self) -> usize {
        self.heap_bytes
    }

    fn round(&self, plan: &Many, round: u32) -> ManyRound {
        use rand::{Rng, SeedableRng};
        let count = self.filters.len();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(plan.seed ^ 0x4D41_4E59);
        rng.set_stream(u64::from(round));
        let mut which = Vec::with_capacity(plan.queries);
        let mut member = Vec::with_capacity(plan.queries);
        let mut q = Keys::new();
        for j in 0..plan.queries {
            let f = rng.random_range(0..count);
            let is_member = j % 2 == 0;
            let i = if is_member {
                rng.random_range(0..plan.keys_per)
            } else {
                plan.keys_per + rng.random_range(0..1usize << 30)
            };
            which.push(f as u32);
            member.push(is_member);
            q.push(&many_key(plan.seed, f, i));
        }
        let mut answers = vec![false; plan.queries];
        let start = ThreadClock::start();
        let mut j = 0;
        q.for_each(|k| {
            answers[j] = self.filters[which[j] as usize].contains(black_box(k));
            j += 1;
        });
        let t = start.elapsed();
        black_box(&answers);
        let mut out = ManyRound {
            ns: t.as_nanos() as f64 / plan.queries.max(1) as f64,
            false_negatives: 0,
            false_positives: 0,
            negatives: 0,
        };
        for (a, m) in answers.iter().zip(&member) {
            match (m, a) {
                (true, false) => out.false_negatives += 1,
                (false, true) => out.false_positives += 1,
                _ => {}
            }
            out.negatives += u64::from(!m);
        }
        out
    }
}

impl ManyResult {
    /// The result of `set` before any round.
    pub fn of(set: &dyn ManyRounds) -> ManyResult {
        ManyResult {
            filters: set.filters(),
            heap_bytes: set.heap_bytes(),
            rounds_ns: Vec::new(),
            false_negatives: 0,
            false_positives: 0,
            negatives: 0,
        }
    }

    /// Count one round in.
    pub fn add(&mut self, o: &ManyRound) {
        self.rounds_ns.push(o.ns);
        self.false_negatives += o.false_negatives;
        self.false_positives += o.false_positives;
        self.negatives += o.negatives;
    }
}

/// Build filters of adapter `A` for `plan`: `plan.keys_per` keys each, until they hold
/// `plan.target_bytes` together or number `plan.max_filters`.
pub(super) fn build<A: Adapter>(spec: &Spec, plan: &Many) -> Result<Box<dyn ManyRounds>, Error> {
    let mut filters: Vec<A> = Vec::new();
    let mut live = 0i64;
    // The keys of one filter live only while it is built, so the net bytes of each step
    // are its filter's (and the growth of the list holding them).
    while filters.len() < plan.max_filters.max(1) && (live.max(0) as usize) < plan.target_bytes {
        let (built, bytes) = net_bytes_signed(|| {
            let f = filters.len();
            let mut keys = Keys::new();
            for i in 0..plan.keys_per {
                keys.push(&many_key(plan.seed, f, i));
            }
            A::build(spec, &keys).map(|(filter, _)| filters.push(filter))
        });
        built?;
        live += bytes;
    }
    Ok(Box::new(ManyFilters {
        filters,
        heap_bytes: live.max(0) as usize,
    }))
}
