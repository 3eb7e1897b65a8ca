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

/// Insert `inserts` crafted keys into `target`, each chosen (among at most
/// `max_candidates` tries) to set as many still-zero bits as possible **according to the
/// public hash**, then measure the FPR of `probes` honest non-member queries.
///
/// The attacker tracks the bits they believe they set in a model filter with the public
/// scheme and the target's `m` and `k` (they assume they are the only writer). Against an
/// unkeyed target the model is exact, so each crafted key sets up to `k` fresh bits and the fill
/// climbs far past one half; against a keyed target the model is wrong, so the crafted keys
/// land like random ones.
pub fn pollute<S: HashScheme>(
    target: &mut BloomFilter<S>,
    inserts: u64,
    max_candidates: u64,
    probes: u64,
    seed: u64,
) -> Result<PollutionReport> {
    if max_candidates == 0 {
        return Err(Error::invalid("max_candidates", "must be at least 1"));
    }
    let mut model = BloomFilter::with_bits(target.bits(), target.hashes())?;
    let (m, k) = (target.bits(), target.hashes());
    let mut tried = 0u64;
    let mut counter = 0u64;
    for _ in 0..inserts {
        let mut best: Option<(u32, String)> = None;
        for _ in 0..max_candidates {
            let key = format!("attack:{seed}:{counter}");
            counter += 1;
            tried += 1;
            let h = model.hash_key(key.as_str());
            let fresh = h
                .positions(k, m)
                .filter(|&i| !model.bit_array().get(i))
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
        model.insert(key.as_str());
        target.insert(key.as_str());
    }
    let positives = (0..probes)
        .filter(|i| target.might_contain(&format!("honest:{seed}:{i}")))
        .count() as u64;
    Ok(PollutionReport {
        inserts,
        candidates_tried: tried,
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
