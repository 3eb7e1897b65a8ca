//! Many filters: the LSM case, where each table file has its own small filter and together
//! they are far larger than the last-level cache (the RocksDB `filter_bench` idea). Filters
//! of [`KEYS_PER`] keys at 1 % are built until they hold at least twice the detected LLC
//! (capped by the memory the machine has free), their keys made as a stream per filter; then
//! each query goes to a random filter, half members and half non-members. So no figure here
//! is an in-cache figure, whatever the machine's LLC: on a 260 MiB L3 that is about 0.5 GiB
//! of filters. The main entries ([`MAIN`]) by default, all built first and kept, their rounds
//! interleaved (the order rotating each round), so their ratios are paired like the main
//! table's; `--full` takes every entry whose memory allows it (never the exact set, whose
//! 10^4-key sets would need tens of GiB at that count), one entry at a time, unpaired.

use crate::adapters::{Many, ManyResult, Spec};
use crate::error::Error;
use crate::schema::{Axis, Experiment, NamedRatio, Point, Series};
use crate::stats::{Interval, median_interval, paired_ratio, unpaired_ratio};

use super::Context;

/// Keys per filter (a table file's worth).
pub const KEYS_PER: usize = 10_000;

/// Target FPR of every filter.
pub const TARGET: f64 = 0.01;

/// The entries of the default run, in registry order: ours (classic, blocked) and the peers
/// of each design (fastbloom, sbbf-rs, binary fuse). Building twice the LLC of filters costs
/// seconds per entry, so the default run keeps to these five; `--full` takes every entry.
pub const MAIN: &[&str] = &["classic", "blocked", "fastbloom", "sbbf-rs", "xorf-bfuse8"];

/// Queries per timed round, and rounds.
const QUERIES: usize = 200_000;
const ROUNDS: u32 = 15;

/// Available memory (bytes) from `/proc/meminfo`, if readable.
fn mem_available() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Run the experiment.
pub fn run(ctx: &Context) -> Result<Experiment, Error> {
    let llc = crate::machine::cache_bytes().llc.unwrap_or(32 << 20);
    let mut target = 2 * llc as usize;
    if let Some(avail) = mem_available() {
        // Leave room for everything else: all the entries alive at once hold at most a third
        // of what is free.
        let alive = if ctx.full { 1 } else { MAIN.len() as u64 };
        target = target.min((avail / (3 * alive)) as usize);
    }
    let plan = Many {
        keys_per: KEYS_PER,
        target_bytes: target,
        max_filters: 1_000_000,
        queries: QUERIES,
        rounds: ROUNDS,
        seed: ctx.seed,
    };
    measure(ctx, &plan, llc)
}

/// The experiment with an explicit plan (`plan.target_bytes` of filters) against an LLC of
/// `llc` bytes; [`run`] takes twice the detected LLC.
pub fn measure(ctx: &Context, plan: &Many, llc: u64) -> Result<Experiment, Error> {
    let spec = ctx.spec(plan.keys_per as u64, TARGET);
    let chosen = chosen(ctx);
    let paired = !ctx.full;
    let results = time_entries(&chosen, &spec, plan, paired)?;
    let mut series = Vec::new();
    let mut medians = Vec::new();
    for (e, m) in chosen.iter().zip(&results) {
        let ci = median_interval(&m.rounds_ns);
        let over = m.heap_bytes as f64 / llc as f64;
        medians.push((e.info.name, ci, &m.rounds_ns));
        series.push(Series {
            label: format!("{} ({} filters)", e.info.name, m.filters),
            filter: e.info.name.into(),
            peer: e.info.peer,
            points: vec![Point {
                x: over,
                y: ci.mid,
                theory: None,
                ci: Some(ci),
                x_ci: None,
            }],
            note: format!(
                "{} filters of {} keys, {:.0} MiB together ({:.2}× LLC: {}); FPR {:.3} % over {} non-member queries; {} false negatives",
                m.filters,
                plan.keys_per,
                m.heap_bytes as f64 / 1048576.0,
                over,
                crate::schema::residence(Some(over)),
                100.0 * m.false_positives as f64 / m.negatives.max(1) as f64,
                m.negatives,
                m.false_negatives
            ),
        });
    }
    let ratios = ratios(&medians, paired);
    Ok(Experiment {
        ratios,
        ..Experiment::new(
            "many-filters",
            format!(
                "Many filters of {} keys at 1 %, together ≥ 2× the LLC: ns per lookup, each query to a random filter",
                plan.keys_per
            ),
            format!(
                "Filters of {} keys at 1 % built until they hold at least {} MiB (2× the detected LLC of {} MiB, capped so that the filters alive together hold at most a third of free memory); keys made per filter as a stream; {} rounds of {} queries, each to a random filter, half members; no warm-up (the working set is out of cache by construction). x = the filters' bytes ÷ LLC, y = median ns per lookup with its 95 % interval over the rounds. {}",
                plan.keys_per,
                plan.target_bytes / 1048576,
                llc / 1048576,
                plan.rounds,
                plan.queries,
                if paired {
                    "Every entry's filters are alive together and each round times every entry once, the order rotating, so the ratios to blocked are paired (median of the per-round ratios)."
                } else {
                    "Entries measured one after another (only one entry's filters live at a time), so ratios between them are unpaired."
                }
            ),
            (
                Axis::linear("working set ÷ LLC"),
                Axis::linear("ns per lookup"),
            ),
            series,
        )
    })
}

/// The entries this run times: single lookups of every filter (ours and peers) at its own
/// target, not the exact set, and in a quick run only the main ones.
fn chosen<'a>(ctx: &Context<'a>) -> Vec<&'a crate::adapters::Entry> {
    ctx.entries
        .iter()
        .filter(|e| {
            e.info.kind != crate::adapters::Kind::Exact
                && !e.info.batched
                && !e.info.equal_memory
                && (ctx.full || MAIN.contains(&e.info.name))
        })
        .collect()
}

/// Each chosen entry's result: paired (every entry's filters alive together, rounds timing
/// each entry once, the order rotating, so what drifts lands on all of them alike) or one
/// entry after another.
fn time_entries(
    chosen: &[&crate::adapters::Entry],
    spec: &Spec,
    plan: &Many,
    paired: bool,
) -> Result<Vec<ManyResult>, Error> {
    Ok(if paired {
        // Every entry's filters alive together, then rounds that time each entry once, the
        // order rotating, so what drifts lands on all of them alike.
        let sets = chosen
            .iter()
            .map(|e| e.many_build(spec, plan))
            .collect::<Result<Vec<_>, _>>()?;
        let mut out: Vec<ManyResult> = sets.iter().map(|m| ManyResult::of(m.as_ref())).collect();
        for r in 0..plan.rounds {
            for i in 0..sets.len() {
                let j = (r as usize + i) % sets.len();
                out[j].add(&sets[j].round(plan, r));
            }
        }
        out
    } else {
        chosen
            .iter()
            .map(|e| e.many(spec, plan))
            .collect::<Result<Vec<_>, _>>()?
    })
}

/// Each entry's ns per lookup ÷ blocked's (paired per round where the rounds were).
fn ratios(medians: &[(&str, Interval, &Vec<f64>)], paired: bool) -> Vec<NamedRatio> {
    match medians.iter().find(|(n, _, _)| *n == "blocked") {
        Some((_, b, b_rounds)) => medians
            .iter()
            .filter(|(n, _, _)| *n != "blocked")
            .map(|(n, i, rounds)| NamedRatio {
                name: format!(
                    "many filters: {n} ÷ blocked ns/lookup ({})",
                    if paired { "paired" } else { "unpaired" }
                ),
                ratio: if paired {
                    paired_ratio(rounds, b_rounds)
                } else {
                    unpaired_ratio(i, b)
                },
            })
            .collect(),
        None => Vec::new(),
    }
}
