//! Cuckoo space (seed 000, extension exercise 5): bits/item of our cuckoo, classic and
//! blocked filters (whichever are selected) at targets from 3 % down to 0.01 %, measured as
//! live heap bytes × 8 / n, with each structure's sizing formula as theory and the
//! information-theoretic lower bound as a reference series. Where the cuckoo curve lies
//! below the Bloom curves, cuckoo wins on space.

use crate::error::Error;
use bloomlab_core::math;

use crate::adapters::Curve;
use crate::keys::{KeySet, Keys};
use crate::schema::{Axis, Experiment, Point, Series};

use super::Context;

/// The structures compared (when selected); `blocked-batched` shares `blocked`'s table.
pub const FILTERS: &[&str] = &["classic", "blocked", "cuckoo"];

/// Targets measured; 0.1 %, 1 % and 3 % are the exercise's, the rest locate the crossover.
pub const TARGETS: &[f64] = &[0.03, 0.01, 0.003, 0.001, 0.0003, 0.0001];

fn formula_bits(curve: Option<Curve>, name: &str, p: f64) -> Option<f64> {
    match (curve, name) {
        (_, "blocked") => bloomlab_blocked::math::blocked_bits_per_item(p, 512)
            .ok()
            .map(|(b, _)| b),
        (Some(Curve::Bloom), _) => math::classic_bits_per_item(p).ok(),
        (Some(Curve::Cuckoo), _) => bloomlab_cuckoo::math::cuckoo_fingerprint_bits(p, 4)
            .ok()
            .map(|f| bloomlab_cuckoo::math::cuckoo_bits_per_item(f, 0.95)),
        _ => None,
    }
}

/// Run the experiment.
pub fn run(ctx: &Context) -> Result<Experiment, Error> {
    let n = usize::try_from(ctx.n).map_err(|_| Error::measurement("design capacity too large"))?;
    let keys = KeySet::new(ctx.seed, n, ctx.probes);
    let mut series = Vec::new();
    let chosen = ctx
        .entries
        .iter()
        .filter(|e| FILTERS.contains(&e.info.name));
    for e in chosen {
        let mut points = Vec::new();
        let mut measured = Vec::new();
        for &p in TARGETS {
            let spec = ctx.spec(ctx.n, p);
            let b = e.build(&spec, &Keys::from_u64s(&keys.members))?;
            let fp = super::contained(b.filter.as_ref(), &keys.probes);
            measured.push(format!(
                "{}: {:.4} %",
                p,
                100.0 * fp as f64 / keys.probes.len() as f64
            ));
            points.push(Point {
                x: p,
                y: b.heap_bytes as f64 * 8.0 / n as f64,
                theory: formula_bits(e.info.curve, e.info.name, p),
                ci: None,
                x_ci: None,
            });
        }
        series.push(Series {
            label: e.info.name.into(),
            filter: e.info.name.into(),
            peer: false,
            points,
            note: format!("measured FPR at each target: {}", measured.join(", ")),
        });
    }
    series.push(super::lower_bound_series("lower bound log2(1/p)", TARGETS));
    Ok(Experiment::new(
        "cuckoo-space",
        format!("Cuckoo vs Bloom space: bits/item by target FPR (n = {n})"),
        format!(
            "Each filter is built for n = {n} at each target; bits/item = live heap bytes x 8 / \
             n; theory = its sizing formula (cuckoo: ceil(log2(8/p))/0.95; classic: -ln p / \
             ln2^2; blocked: the 512-bit Poisson model). FPRs measured on {} distinct \
             non-members are in the notes. Cuckoo wins on space where its curve is lowest.",
            keys.probes.len()
        ),
        (
            Axis::log("target false-positive rate"),
            Axis::linear("bits per item"),
        ),
        series,
    ))
}
