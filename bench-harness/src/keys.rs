//! Keys: fixed-seed random `u64`s, the same for every filter.

use std::collections::HashSet;

use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Members, distinct non-member probes, and a random order of the members.
#[derive(Debug)]
pub struct KeySet {
    /// The inserted keys, `n` of them, distinct.
    pub members: Vec<u64>,
    /// Distinct keys that are not members (overlaps removed).
    pub probes: Vec<u64>,
    /// Probe candidates dropped because they were members (accidental overlap).
    pub overlap_excluded: u64,
    /// Probe candidates dropped because they repeated an earlier probe.
    pub duplicate_probes: u64,
}

fn stream(seed: u64, stream_id: u64) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(stream_id);
    rng
}

impl KeySet {
    /// `n` distinct members and `probes` distinct non-members from `seed`.
    pub fn new(seed: u64, n: usize, probes: usize) -> Self {
        let mut rng = stream(seed, 1);
        let mut members = Vec::with_capacity(n);
        let mut seen = HashSet::with_capacity(n);
        while members.len() < n {
            let k: u64 = rng.random();
            if seen.insert(k) {
                members.push(k);
            }
        }
        let mut rng = stream(seed, 2);
        let mut out = Vec::with_capacity(probes);
        let mut probe_seen = HashSet::with_capacity(probes);
        let (mut overlap, mut dup) = (0, 0);
        while out.len() < probes {
            let k: u64 = rng.random();
            if seen.contains(&k) {
                overlap += 1;
            } else if !probe_seen.insert(k) {
                dup += 1;
            } else {
                out.push(k);
            }
        }
        KeySet {
            members,
            probes: out,
            overlap_excluded: overlap,
            duplicate_probes: dup,
        }
    }

    /// More members beyond the first `n` (for overfill), distinct from members and probes.
    pub fn extra_members(&self, seed: u64, count: usize) -> Vec<u64> {
        let taken: HashSet<u64> = self
            .members
            .iter()
            .chain(self.probes.iter())
            .copied()
            .collect();
        let mut rng = stream(seed, 3);
        let mut out = Vec::with_capacity(count);
        let mut seen = HashSet::with_capacity(count);
        while out.len() < count {
            let k: u64 = rng.random();
            if !taken.contains(&k) && seen.insert(k) {
                out.push(k);
            }
        }
        out
    }

    /// A lookup stream of `len` distinct keys, `positive_pct` % of them members, shuffled.
    pub fn lookup_stream(&self, seed: u64, len: usize, positive_pct: u32) -> Vec<u64> {
        let len = len.min(self.members.len()).min(self.probes.len());
        let pos = len * positive_pct as usize / 100;
        let mut rng = stream(seed, 4 + u64::from(positive_pct));
        let mut members: Vec<u64> = self.members.clone();
        let (chosen, _) = members.partial_shuffle(&mut rng, pos);
        let mut out: Vec<u64> = chosen.to_vec();
        // Negatives from the end of the probe pool, so they differ from the FPR probes'
        // start whenever the pool is long enough.
        out.extend_from_slice(&self.probes[self.probes.len() - (len - pos)..]);
        out.shuffle(&mut rng);
        out
    }
}
