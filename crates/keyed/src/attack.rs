//! The two crafted-key attacks keyed hashing prevents, as measurable experiments.
//!
//! Threat model: the code is open source, so the attacker knows the unkeyed hash
//! ([`Xxh3Scheme`]) and its seed, and the filter's `m` and `k`. They do **not** know a keyed
//! filter's secret. Both functions run the attacker's best strategy against any classic filter
//! and report what honest users, or the attacker, then see.

use bloomlab_classic::BloomFilter;
use bloomlab_core::format;
use bloomlab_core::hash::{HashScheme, Xxh3Scheme};
use bloomlab_core::{Error, Result};

/// What the pollution attack achieved.
#[derive(Clone, Debug, PartialEq)]
pub struct PollutionReport {
    /// Crafted keys inserted.
    pub inserts: u64,
    /// Candidate keys the attacker hashed to choose them (offline work).
    pub candidates_tried: u64,
    /// Fraction of the target's bits set afterwards (≈ 0.52 for `n` random keys at 1 %).
    pub fill_ratio: f64,
    /// Honest non-member probes.
    pub probes: u64,
    /// Honest probes answered "maybe".
    pub positives: u64,
    /// `positives / probes`: the FPR honest users now see.
    pub measured_fpr: f64,
    /// What the formula expects after the same number of *random* inserts.
    pub expected_fpr: f64,
}

/// The pollution attacker: crafts keys whose probes, **according to the public hash**, land
/// on bits that are still zero.
///
/// It tracks the bits it believes it set in a model filter with the public scheme and the
/// target's `m` and `k` (it assumes it is the only writer). Against an unkeyed target the
/// model is exact, so each crafted key sets up to `k` fresh bits and the fill climbs far past
/// one half; against a keyed target the model is wrong, so crafted keys land like random ones.
#[derive(Debug, Clone)]
pub struct Polluter {
    model: BloomFilter<Xxh3Scheme>,
    max_candidates: u64,
    seed: u64,
    counter: u64,
    tried: u64,
}

impl Polluter {
    /// An attacker against filters of `m` bits and `k` probes, trying at most
    /// `max_candidates` keys per crafted key (then taking the best seen).
    pub fn new(m: u64, k: u32, max_candidates: u64, seed: u64) -> Result<Self> {
        if max_candidates == 0 {
            return Err(Error::invalid("max_candidates", "must be at least 1"));
        }
        Ok(Polluter {
            model: BloomFilter::with_bits(m, k)?,
            max_candidates,
            seed,
            counter: 0,
            tried: 0,
        })
    }

    /// The next crafted key (the attacker then submits it for insertion).
    pub fn craft(&mut self) -> String {
        let (m, k) = (self.model.bits(), self.model.hashes());
        let mut best: Option<(u32, String)> = None;
        for _ in 0..self.max_candidates {
            let key = format!("attack:{}:{}", self.seed, self.counter);
            self.counter += 1;
            self.tried += 1;
            let h = self.model.hash_key(key.as_str());
            let fresh = h
                .positions(k, m)
                .filter(|&i| !self.model.bit_array().get(i))
                .count() as u32;
            if best.as_ref().is_none_or(|(b, _)| fresh > *b) {
                let done = fresh == k;
                best = Some((fresh, key));
                if done {
                    break;
                }
            }
        }
        let (_, key) = best.expect("max_candidates >= 1");
        self.model.insert(key.as_str());
        key
    }

    /// Candidate keys hashed so far (the attacker's offline work).
    pub fn candidates_tried(&self) -> u64 {
        self.tried
    }
}

/// Positives among `probes` honest non-member queries (`honest:{seed}:{i}`; no crafted key
/// has that form).
pub fn honest_positives<S: HashScheme>(target: &BloomFilter<S>, probes: u64, seed: u64) -> u64 {
    (0..probes)
        .filter(|i| target.might_contain(&format!("honest:{seed}:{i}")))
        .count() as u64
}

/// Insert `inserts` keys crafted by a [`Polluter`] into `target`, then measure the FPR of
/// `probes` honest non-member queries.
pub fn pollute<S: HashScheme>(
    target: &mut BloomFilter<S>,
    inserts: u64,
    max_candidates: u64,
    probes: u64,
    seed: u64,
) -> Result<PollutionReport> {
    let mut attacker = Polluter::new(target.bits(), target.hashes(), max_candidates, seed)?;
    for _ in 0..inserts {
        target.insert(attacker.craft().as_str());
    }
    let positives = honest_positives(target, probes, seed);
    Ok(PollutionReport {
        inserts,
        candidates_tried: attacker.candidates_tried(),
        fill_ratio: target.fill_ratio(),
        probes,
        positives,
        measured_fpr: positives as f64 / probes as f64,
        expected_fpr: target.expected_fpr(),
    })
}

/// What the forged-positive attack achieved.
#[derive(Clone, Debug, PartialEq)]
pub struct ForgeryReport {
    /// Non-member keys the attacker's offline search believed positive.
    pub forged: u64,
    /// Candidates hashed offline to find them.
    pub candidates_tried: u64,
    /// Offline candidates per forged key.
    pub cost_per_forged: f64,
    /// Forged keys the real filter answered "maybe" to (each one an expensive lookup).
    pub accepted: u64,
    /// `accepted / forged`.
    pub success_rate: f64,
    /// The target's FPR for random keys from its fill, `(X/m)^k`, for comparison.
    pub baseline_fpr: f64,
}

/// The attacker obtains `target`'s bytes (the seed ships filters over the wire), relabels
/// them as the public scheme so the public decoder accepts them, searches offline for
/// `wanted` non-member keys that test positive there, and sends them to the real filter.
pub fn forge<S: HashScheme>(
    target: &BloomFilter<S>,
    wanted: u64,
    max_candidates: u64,
    seed: u64,
) -> Result<ForgeryReport> {
    let mut bytes = target.to_bytes();
    format::relabel_as_unkeyed(&mut bytes);
    let model = BloomFilter::from_bytes_with_scheme(&bytes, Xxh3Scheme)?;
    let mut forged = Vec::new();
    let mut tried = 0u64;
    while (forged.len() as u64) < wanted && tried < max_candidates {
        let key = format!("forge:{seed}:{tried}");
        tried += 1;
        if model.might_contain(key.as_str()) {
            forged.push(key);
        }
    }
    let accepted = forged
        .iter()
        .filter(|k| target.might_contain(k.as_str()))
        .count() as u64;
    let n = forged.len() as u64;
    Ok(ForgeryReport {
        forged: n,
        candidates_tried: tried,
        cost_per_forged: if n == 0 {
            f64::INFINITY
        } else {
            tried as f64 / n as f64
        },
        accepted,
        success_rate: if n == 0 {
            0.0
        } else {
            accepted as f64 / n as f64
        },
        baseline_fpr: target.current_fpr(),
    })
}
