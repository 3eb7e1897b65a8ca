//! Overfill: FPR against load, from 0.25× to 4× design capacity, measured and theoretical,
//! for every selected filter that takes inserts, sized for 1 %. A Bloom filter never refuses
//! an insert; it just gets worse: the seed's silent failure mode, made visible.

use crate::error::Error;
use crate::keys::KeySet;
use crate::schema::{Axis, Experiment, Series};

use super::Context;

/// Loads measured (multiples of design capacity).
pub const LOADS: &[f64] = &[0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0];

/// Target FPR the filters are sized for.
pub const TARGET: f64 = 0.01;

/// Non-member probes per load in the default run (`--full`: the run's own count). Eight loads
/// of about forty entries at 10^6 probes each made this the default run's third-longest
/// phase; a quarter of them widens each Wilson interval by 2×, and at the loads where a
/// filter is overfilled (the point of the experiment) the FPR is percents, measured to a few
/// hundredths of a point either way.
pub const QUICK_PROBES: usize = 250_000;

/// Run the experiment.
pub fn run(ctx: &Context) -> Result<Experiment, Error> {
    let n = usize::try_from(ctx.n).map_err(|_| Error::measurement("design capacity too large"))?;
    let max_items = (LOADS[LOADS.len() - 1] * n as f64).ceil() as usize;
    let probes = if ctx.full {
        ctx.probes
    } else {
        ctx.probes.min(QUICK_PROBES)
    };
    let keys = KeySet::new(ctx.seed, n, probes);
    let mut all = keys.members.clone();
    all.extend(keys.extra_members(ctx.seed, max_items.saturating_sub(n)));
    let spec = ctx.spec(ctx.n, TARGET);
    let mut series = Vec::new();
    for e in ctx.entries {
        let Some(made) = e.new_empty(&spec) else {
            continue; // static filters cannot be overfilled
        };
        if e.info.kind == crate::adapters::Kind::Exact {
            continue; // FPR 0 at every load; nothing to plot on a log axis
        }
        series.push(fill(e, made?, &keys, &all, n));
    }
    Ok(Experiment::new(
        "overfill",
        format!("Overfill: FPR vs load, sized for n = {} at 1 %", ctx.n),
        format!(
            "Each filter is sized for n = {} at a 1 % target, then filled to 0.25x..4x n; FPR \
             measured on {} distinct non-members at each load; theory is the structure's own \
             formula at that load (for growing filters, their promised bound).",
            ctx.n,
            keys.probes.len()
        ),
        (
            Axis::linear("load (items / design capacity)"),
            Axis::rate("false-positive rate"),
        ),
        series,
    ))
}

/// Fill `f` (entry `e`'s, sized for `n`) from `all` load by load, measuring its FPR over the
/// probes at each; the series notes refused inserts and accepted keys lost.
fn fill(
    e: &crate::adapters::Entry,
    mut f: Box<dyn crate::adapters::Built>,
    keys: &KeySet,
    all: &[u64],
    n: usize,
) -> Series {
    let max_items = all.len();
    let mut inserted = 0usize;
    let mut refused = 0u64;
    let mut accepted = Vec::with_capacity(max_items);
    let mut points = Vec::new();
    for &load in LOADS {
        let upto = (load * n as f64).round() as usize;
        for &k in &all[inserted..upto] {
            if f.insert(&k.to_le_bytes()) {
                accepted.push(k);
            } else {
                refused += 1;
            }
        }
        inserted = upto;
        points.push(super::fpr_point(f.as_ref(), &keys.probes, load));
    }
    // Only keys the filter accepted count: a refused insert is not a false negative.
    let lost = accepted.len() - super::contained(f.as_ref(), &accepted);
    let mut note = Vec::new();
    if refused > 0 {
        note.push(format!("refused {refused} of {inserted} inserts"));
    }
    if lost > 0 {
        note.push(format!(
            "{lost} accepted keys test negative (false negatives)"
        ));
    }
    Series {
        label: super::entry_label(e),
        filter: e.info.name.into(),
        peer: e.info.peer,
        points,
        note: note.join("; "),
    }
}
