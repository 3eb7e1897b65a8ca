//! Keyed attack (seed 000, extension exercise 3): crafted keys against the unkeyed and the
//! keyed classic filter (scheme id 4, `Sip64Scheme`) at 1 %.
//!
//! Pollution: an attacker who knows the public hash picks the keys that get inserted so
//! their probes hit bits that are still zero; honest queries then see a much higher FPR. The
//! same crafted keys go into an unkeyed filter, a keyed one, and (as the baseline) random keys
//! into an unkeyed one. Forged positives: the attacker reads each filter's bytes, searches
//! offline for non-members that test positive under the public hash, and sends them; the
//! series notes say how many the real filter answered "maybe" and what each cost offline.

use crate::error::Error;
use bloomlab_classic::BloomFilter;
use bloomlab_keyed::Sip64Scheme;
use bloomlab_keyed::attack::{Polluter, forge, honest_positives};

use crate::schema::{Axis, Experiment, Point, Series};

use super::Context;

/// Design capacity of the attacked filters (capped: crafting gets expensive as the fill
/// rises, up to [`MAX_CANDIDATES`] hashes per key).
pub const MAX_N: u64 = 50_000;
/// Candidate keys the attacker hashes per crafted key at most.
pub const MAX_CANDIDATES: u64 = 4096;
/// Forged keys the attacker looks for.
pub const FORGED: u64 = 2_000;
/// Target FPR.
pub const TARGET: f64 = 0.01;
const LOADS: &[f64] = &[0.25, 0.5, 0.75, 1.0];

/// Run the experiment.
pub fn run(ctx: &Context) -> Result<Experiment, Error> {
    let n = ctx.n.min(MAX_N);
    let probes = ctx.probes as u64;
    let mut unkeyed = BloomFilter::with_fpr(n, TARGET)?;
    // A secret derived from the run's seed keeps the run reproducible (users get one from
    // the OS); the attacker never sees it.
    let mut secret = [0u8; 16];
    secret[..8].copy_from_slice(&ctx.seed.to_le_bytes());
    secret[8..].copy_from_slice(&(!ctx.seed).to_le_bytes());
    let mut keyed = BloomFilter::with_fpr_and_scheme(n, TARGET, Sip64Scheme::from_secret(secret))?;
    let mut random = unkeyed.clone();
    let mut attacker = Polluter::new(unkeyed.bits(), unkeyed.hashes(), MAX_CANDIDATES, ctx.seed)?;
    let (mut pu, mut pk, mut pr) = (Vec::new(), Vec::new(), Vec::new());
    let mut inserted = 0u64;
    for &load in LOADS {
        let upto = (load * n as f64).round() as u64;
        while inserted < upto {
            let key = attacker.craft();
            unkeyed.insert(key.as_str());
            keyed.insert(key.as_str());
            random.insert(&(ctx.seed ^ inserted.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
            inserted += 1;
        }
        let point = |f: f64, theory: f64| Point {
            x: load,
            y: f / probes as f64,
            theory: Some(theory),
            ci: Some(crate::stats::wilson(f as u64, probes, crate::stats::Z95)),
            x_ci: None,
        };
        pu.push(point(
            honest_positives(&unkeyed, probes, ctx.seed) as f64,
            unkeyed.expected_fpr(),
        ));
        pk.push(point(
            honest_positives(&keyed, probes, ctx.seed) as f64,
            keyed.expected_fpr(),
        ));
        pr.push(point(
            honest_positives(&random, probes, ctx.seed) as f64,
            random.expected_fpr(),
        ));
    }
    let forged_unkeyed = forge(&random, FORGED, 100_000_000, ctx.seed)?;
    let mut keyed_filled = keyed.clone();
    keyed_filled.clear();
    for i in 0..n {
        keyed_filled.insert(&(ctx.seed ^ i.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
    }
    let forged_keyed = forge(&keyed_filled, FORGED, 100_000_000, ctx.seed)?;
    let forged_note = |r: &bloomlab_keyed::attack::ForgeryReport| {
        format!(
            "forged positives: {} of {} answered maybe ({:.2} %), {:.0} offline hashes per forged key",
            r.accepted,
            r.forged,
            100.0 * r.success_rate,
            r.cost_per_forged
        )
    };
    let series = |label: &str, filter: &str, points, note: String| Series {
        label: label.into(),
        filter: filter.into(),
        peer: false,
        points,
        note,
    };
    Ok(Experiment::new(
        "keyed-attack",
        format!("Crafted keys vs keyed hashing, n = {n} at 1 %"),
        format!(
            "Pollution: an attacker who knows the public hash crafts the inserted keys (best of up to {MAX_CANDIDATES} candidates each) so their probes hit zero bits; y is the FPR {probes} honest non-member queries see after that many crafted inserts (x = inserts / n), theory is the formula for random inserts. Forged positives: the attacker reads the filter bytes of a filter holding n random keys and searches offline for {FORGED} non-members that test positive under the public hash."
        ),
        (
            Axis::linear("inserts / design capacity"),
            Axis::rate("false-positive rate seen by honest queries"),
        ),
        vec![
            series(
                "unkeyed, crafted keys",
                "classic",
                pu,
                format!(
                    "{} candidate hashes for {} crafted keys; {}",
                    attacker.candidates_tried(),
                    n,
                    forged_note(&forged_unkeyed)
                ),
            ),
            series(
                "keyed, crafted keys",
                "classic-keyed",
                pk,
                forged_note(&forged_keyed),
            ),
            series("unkeyed, random keys", "classic", pr, String::new()),
        ],
    ))
}
