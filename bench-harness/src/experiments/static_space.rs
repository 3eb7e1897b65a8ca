//! Static space (issue 14): for filters built once from the whole key set — our Ribbon and
//! xorf's BinaryFuse8/16 — and the dynamic Bloom filters (blocked, classic) for reference,
//! bits/item and build ns/key against the **measured** FPR ε. The x axis is ε measured on
//! distinct non-members, the y axis live heap bits per item; each point's note carries its
//! build time per key. Theory is each family's curve at the measured ε, with the lower bound
//! log2(1/ε) as its own series.

use crate::error::Error;

use crate::adapters::Curve;
use crate::keys::{KeySet, Keys};
use crate::schema::{Axis, Experiment, Point, Series};

use super::Context;

/// The structures compared (when selected).
pub const FILTERS: &[&str] = &[
    "ribbon",
    "xorf-bfuse8",
    "xorf-bfuse16",
    "blocked",
    "classic",
];

/// Targets for the tunable ones (fixed-parameter entries are built once).
pub const TARGETS: &[f64] = &[0.03, 0.01, 0.001];

/// Bits/item the family's curve needs for FPR `eps` (the inverse of `Curve::fpr`).
fn theory_bits(curve: Option<Curve>, eps: f64) -> Option<f64> {
    let l = (1.0 / eps).log2();
    match curve? {
        Curve::Bloom => Some(l / std::f64::consts::LN_2),
        Curve::BinaryFuse => Some(1.125 * l),
        Curve::Ribbon => Some(1.05 * l),
        Curve::Cuckoo => Some((l + 3.0) / 0.95),
        Curve::Quotient => Some((l + 2.125) / 0.95),
    }
}

/// Run the experiment.
pub fn run(ctx: &Context) -> Result<Experiment, Error> {
    let n = usize::try_from(ctx.n).map_err(|_| Error::measurement("design capacity too large"))?;
    let keys = KeySet::new(ctx.seed, n, ctx.probes);
    let mut series = Vec::new();
    let mut bound = Vec::new();
    for e in ctx
        .entries
        .iter()
        .filter(|e| FILTERS.contains(&e.info.name))
    {
        let targets = if e.info.tunable {
            TARGETS
        } else {
            &TARGETS[..1]
        };
        let mut points = Vec::new();
        let mut notes = Vec::new();
        for &p in targets {
            let spec = ctx.spec(ctx.n, p);
            let b = e.build(&spec, &Keys::from_u64s(&keys.members))?;
            // One pass over the non-members: its hits are the false positives.
            let fp = b.filter.time_lookups(&Keys::from_u64s(&keys.probes)).1;
            // A zero count has no log: place it at half a positive (and say so in the note).
            let eps = (fp as f64).max(0.5) / keys.probes.len() as f64;
            let bits = b.heap_bytes as f64 * 8.0 / n as f64;
            let build_ns = b.elapsed.as_nanos() as f64 / n as f64;
            notes.push(format!(
                "{}ε = {:.4} % ({fp} of {}): {bits:.2} bits/item = {:.3} × log2(1/ε), build {build_ns:.1} ns/key",
                if e.info.tunable { format!("target {p}: ") } else { String::new() },
                100.0 * eps,
                keys.probes.len(),
                bits / (1.0 / eps).log2(),
            ));
            points.push(Point {
                x: eps,
                y: bits,
                theory: theory_bits(e.info.curve, eps),
                ci: None,
                x_ci: Some(crate::stats::wilson(
                    fp,
                    keys.probes.len() as u64,
                    crate::stats::Z95,
                )),
            });
            bound.push(eps);
        }
        series.push(Series {
            label: e.info.name.into(),
            filter: e.info.name.into(),
            peer: e.info.peer,
            points,
            note: notes.join("; "),
        });
    }
    bound.sort_by(f64::total_cmp);
    bound.dedup();
    series.push(super::lower_bound_series("lower bound log2(1/ε)", &bound));
    Ok(Experiment::new(
        "static-space",
        format!("Static filters: bits/item against measured FPR (n = {n})"),
        format!(
            "Each filter is built from all n = {n} keys (tunable ones at targets {TARGETS:?}, \
             fixed ones once); x = FPR measured on {} distinct non-members, y = live heap \
             bytes x 8 / n; theory = the family's curve at the measured FPR (ribbon 1.05, \
             binary fuse 1.125, Bloom 1.44 x log2(1/e)); build ns/key in the notes. A static \
             filter needs the whole key set up front and takes no inserts afterwards.",
            keys.probes.len()
        ),
        (
            Axis::log("measured false-positive rate"),
            Axis::linear("bits per item"),
        ),
        series,
    ))
}
