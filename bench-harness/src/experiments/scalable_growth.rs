//! Scalable growth (seed 000, extension exercise 2): every filter that grows starts at
//! n0 = n/1024 and grows to 1024·n0; at every doubling the compound FPR is measured on the
//! run's distinct non-members, against the target (which a scalable filter promises as its
//! bound) and each structure's own formula.

use crate::error::Error;
use crate::keys::KeySet;
use crate::schema::{Axis, Experiment, Series};

use super::Context;

/// Target compound FPR.
pub const TARGET: f64 = 0.01;

/// Doublings measured: 1×, 2×, …, 1024×.
pub const DOUBLINGS: u32 = 10;

/// Run the experiment.
pub fn run(ctx: &Context) -> Result<Experiment, Error> {
    let n = usize::try_from(ctx.n).map_err(|_| Error::measurement("design capacity too large"))?;
    let n0 = (n >> DOUBLINGS).max(1);
    let final_n = n0 << DOUBLINGS;
    let keys = KeySet::new(ctx.seed, final_n, ctx.probes);
    // Growing adapters start at spec.n / 8 (so the main run includes growth to n); ask for
    // 8·n0 so they all start at n0.
    let spec = ctx.spec((8 * n0) as u64, TARGET);
    let mut series = Vec::new();
    for e in ctx.entries.iter().filter(|e| e.info.grows) {
        let Some(made) = e.new_empty(&spec) else {
            continue;
        };
        let mut f = made?;
        let mut inserted = 0usize;
        let mut refused = 0u64;
        let mut points = Vec::new();
        let mut worst: f64 = 0.0;
        for d in 0..=DOUBLINGS {
            let upto = n0 << d;
            for &k in &keys.members[inserted..upto] {
                if !f.insert(&k.to_le_bytes()) {
                    refused += 1;
                }
            }
            inserted = upto;
            let point = super::fpr_point(f.as_ref(), &keys.probes, f64::from(1u32 << d));
            worst = worst.max(point.y);
            points.push(point);
        }
        let lost = keys.members.len() - super::contained(f.as_ref(), &keys.members);
        let mut note = vec![format!(
            "highest measured {:.3} % vs target {:.1} %",
            100.0 * worst,
            100.0 * TARGET
        )];
        if refused > 0 {
            note.push(format!("refused {refused} inserts"));
        }
        if lost > 0 {
            note.push(format!("{lost} inserted keys test negative"));
        }
        series.push(Series {
            label: super::entry_label(e),
            filter: e.info.name.into(),
            peer: e.info.peer,
            points,
            note: note.join("; "),
        });
    }
    Ok(Experiment::new(
        "scalable-growth",
        format!("Scalable growth: compound FPR from n0 = {n0} to {final_n} (1024x), target 1 %"),
        format!(
            "Every filter that grows starts at n0 = {n0} at a 1 % target and takes {final_n} \
             distinct keys; at each doubling the FPR is measured on {} distinct non-members. \
             Theory: the structure's own compound formula (ours) or its promised bound \
             (peers). A scalable filter must stay at or below the target at every size.",
            keys.probes.len()
        ),
        (
            Axis::log("growth (items / initial capacity)"),
            Axis::rate("false-positive rate"),
        ),
        series,
    ))
}
