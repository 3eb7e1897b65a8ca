//! Writing results: `results.json` (every figure), one CSV per table, and `summary.md`.

use crate::error::Error;
use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use crate::labels::{axis_label, comma_list, decimals_or, target_label};
pub use crate::labels::{bytes_label, display_name, pct, size_label};
use crate::schema::{Results, Row};
use crate::stats::Interval;

/// File names inside the output directory.
pub const JSON: &str = "results.json";
/// Main table as CSV.
pub const MAIN_CSV: &str = "main.csv";
/// Memory floors per size as CSV.
pub const FLOORS_CSV: &str = "floors.csv";
/// Summary in Markdown.
pub const SUMMARY: &str = "summary.md";
/// The HTML report (written by [`crate::html`]).
pub const INDEX: &str = "index.html";

/// Write the JSON, the CSVs and summary.md into `dir` (created if missing).
pub fn write_all(results: &Results, dir: &Path) -> Result<(), Error> {
    fs::create_dir_all(dir).map_err(Error::io(dir))?;
    let json = serde_json::to_string_pretty(results)?;
    let p = dir.join(JSON);
    fs::write(&p, json + "\n").map_err(Error::io(&p))?;
    write_main_csv(results, &dir.join(MAIN_CSV))?;
    write_floors_csv(results, &dir.join(FLOORS_CSV))?;
    for ex in &results.experiments {
        write_experiment_csv(ex, &dir.join(format!("{}.csv", ex.name)))?;
    }
    let p = dir.join(SUMMARY);
    fs::write(&p, summary(results)).map_err(Error::io(&p))?;
    Ok(())
}

/// Read a results JSON.
pub fn read(path: &Path) -> Result<Results, Error> {
    let text = fs::read_to_string(path).map_err(|e| {
        Error::Results(format!(
            "cannot read results {}: {e} (run `cargo run --release -p bench-harness` first, or \
             pass --results)",
            path.display()
        ))
    })?;
    // The version first, so a file of another schema gets that answer rather than a missing
    // field.
    #[derive(serde::Deserialize)]
    struct Version {
        schema_version: u32,
    }
    let v: Version = serde_json::from_str(&text)
        .map_err(|e| Error::Results(format!("{} is not a results file: {e}", path.display())))?;
    if !(crate::schema::OLDEST_READABLE..=crate::schema::SCHEMA_VERSION).contains(&v.schema_version)
    {
        return Err(Error::Results(format!(
            "{} has results schema version {}; this harness reads versions {} to {} (measure again with `bench-harness run`)",
            path.display(),
            v.schema_version,
            crate::schema::OLDEST_READABLE,
            crate::schema::SCHEMA_VERSION
        )));
    }
    serde_json::from_str(&text)
        .map_err(|e| Error::Results(format!("{} is not a results file: {e}", path.display())))
}

fn opt(x: Option<f64>) -> String {
    x.map(|v| v.to_string()).unwrap_or_default()
}

/// Write the CSV file `p`: the `header` row, then `records`.
fn write_csv<H, R>(p: &Path, header: H, records: impl IntoIterator<Item = R>) -> Result<(), Error>
where
    H: IntoIterator<Item: AsRef<[u8]>>,
    R: IntoIterator<Item: AsRef<[u8]>>,
{
    let mut w = csv::Writer::from_path(p).map_err(Error::csv(p))?;
    w.write_record(header).map_err(Error::csv(p))?;
    for rec in records {
        w.write_record(rec).map_err(Error::csv(p))?;
    }
    w.flush().map_err(Error::io(p))
}

/// An experiment's CSV: one record per point of every series.
fn write_experiment_csv(ex: &crate::schema::Experiment, p: &Path) -> Result<(), Error> {
    let header = [
        "series",
        "filter",
        "peer",
        "x",
        "measured",
        "theory",
        "note",
        "measured_lo95",
        "measured_hi95",
        "x_lo95",
        "x_hi95",
    ];
    let records = ex.series.iter().flat_map(|s| {
        s.points.iter().map(move |pt| {
            [
                s.label.clone(),
                s.filter.clone(),
                s.peer.to_string(),
                pt.x.to_string(),
                pt.y.to_string(),
                opt(pt.theory),
                s.note.clone(),
                opt(pt.ci.map(|c| c.lo)),
                opt(pt.ci.map(|c| c.hi)),
                opt(pt.x_ci.map(|c| c.lo)),
                opt(pt.x_ci.map(|c| c.hi)),
            ]
        })
    });
    write_csv(p, header, records)
}

fn write_main_csv(r: &Results, p: &Path) -> Result<(), Error> {
    let mut header: Vec<String> = [
        "filter",
        "kind",
        "peer",
        "n",
        "target_fpr",
        "params",
        "bits_per_item",
        "heap_bytes",
        "bytes_over_llc",
        "measured_fpr",
        "measured_fpr_lo95",
        "measured_fpr_hi95",
        "theoretical_fpr",
        "log2_inv_fpr",
        "wasted_pct",
        "fpr_probes",
        "overlap_excluded",
        "build_ns_per_item",
        "build_ns_lo95",
        "build_ns_hi95",
        "build_passes",
        "group",
        "refused_inserts",
        "false_negatives",
        "floor_ns",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for m in &r.config.mixes {
        for col in [
            "ns",
            "ns_lo95",
            "ns_hi95",
            "floor_ratio",
            "peer",
            "peer_ratio",
            "peer_ratio_lo95",
            "peer_ratio_hi95",
            "blocked_ratio",
            "blocked_ratio_lo95",
            "blocked_ratio_hi95",
        ] {
            header.push(format!("{col}_{m}pct"));
        }
    }
    let records = r.rows.iter().map(|row| main_record(row, &r.config.mixes));
    write_csv(p, header, records)
}

/// A row of the main CSV: the row's figures, then each mix's lookup figures.
fn main_record(row: &Row, mixes: &[u32]) -> Vec<String> {
    let mut rec = vec![
        row.filter.clone(),
        row.kind.clone(),
        row.peer.to_string(),
        row.n.to_string(),
        opt(row.target_fpr),
        row.params.clone(),
        row.bits_per_item.to_string(),
        row.heap_bytes.to_string(),
        opt(row.bytes_over_llc),
        row.measured_fpr.to_string(),
        row.fpr_ci.lo.to_string(),
        row.fpr_ci.hi.to_string(),
        opt(row.theoretical_fpr),
        opt(row.log2_inv_fpr),
        opt(row.wasted_pct),
        row.fpr_probes.to_string(),
        row.overlap_excluded.to_string(),
        row.build_ns_per_item.to_string(),
        row.build_ci.lo.to_string(),
        row.build_ci.hi.to_string(),
        row.build_passes.to_string(),
        row.group.to_string(),
        row.refused_inserts.to_string(),
        row.false_negatives.to_string(),
        row.floor_ns.to_string(),
    ];
    for m in mixes {
        let l = row.lookup(*m);
        rec.push(opt(l.map(|l| l.ns)));
        rec.push(opt(l.map(|l| l.ns_ci.lo)));
        rec.push(opt(l.map(|l| l.ns_ci.hi)));
        rec.push(opt(l.map(|l| l.floor_ratio)));
        rec.push(l.and_then(|l| l.peer.clone()).unwrap_or_default());
        for i in [
            l.and_then(|l| l.peer_ratio),
            l.and_then(|l| l.blocked_ratio),
        ] {
            rec.push(opt(i.map(|i| i.mid)));
            rec.push(opt(i.map(|i| i.lo)));
            rec.push(opt(i.map(|i| i.hi)));
        }
    }
    rec
}

fn write_floors_csv(r: &Results, p: &Path) -> Result<(), Error> {
    let header = [
        "n",
        "buffer_bytes",
        "ns_per_independent_random_64B_read",
        "ns_per_dependent_random_64B_read",
    ];
    let records = r.size_floors.iter().map(|f| {
        [
            f.n.to_string(),
            f.bytes.to_string(),
            f.ns.to_string(),
            f.dependent_ns.to_string(),
        ]
    });
    write_csv(p, header, records)
}

/// `12.3 ±0.4`: the median and the larger half of its 95 % interval.
pub fn pm(i: &Interval, digits: usize) -> String {
    let half = (i.hi - i.mid).max(i.mid - i.lo);
    format!("{:.d$} ±{:.d$}", i.mid, half, d = digits)
}

/// A ratio with its interval; "≈ 1" (no measurable difference) when the interval holds 1.0.
pub fn ratio_cell(x: Option<&Interval>) -> String {
    match x {
        None => "—".into(),
        Some(i) if i.contains(1.0) => {
            format!("≈ 1 ({:.2}–{:.2}×, no measurable difference)", i.lo, i.hi)
        }
        Some(i) => format!("{:.2}× [{:.2}–{:.2}]", i.mid, i.lo, i.hi),
    }
}

/// An experiment's headline ratio: `1.218 [1.20–1.30]`, or the bare figure when it is exact
/// (a ratio of sizes has no interval).
fn ratio_text(i: &Interval) -> String {
    if i.lo == i.hi {
        format!("{:.3}", i.mid)
    } else {
        format!("{:.3} [{:.2}–{:.2}]", i.mid, i.lo, i.hi)
    }
}

/// One Markdown line of the main table.
pub fn table_row(row: &Row, batched: bool) -> String {
    let l = |p: u32| {
        row.lookup(p)
            .map(|l| pm(&l.ns_ci, 1))
            .unwrap_or_else(|| "—".into())
    };
    let mid = row.lookup(50);
    let tag = if batched { " (batched vs single)" } else { "" };
    let with_tag = |c: String| if c == "—" { c } else { format!("{c}{tag}") };
    format!(
        "| {} | {} | {:.2} | {} [{}–{}] | {} | {} | {} | {} | {} | {} | {} | {} | {:.1} | {} | {} | {} |",
        display_name(&row.filter, row.peer),
        target_label(row.target_fpr),
        row.bits_per_item,
        pct(row.measured_fpr),
        pct(row.fpr_ci.lo),
        pct(row.fpr_ci.hi),
        row.theoretical_fpr.map(pct).unwrap_or_else(|| "—".into()),
        decimals_or(row.log2_inv_fpr, 2, "", "∞"),
        decimals_or(row.wasted_pct, 0, " %", "—"),
        match row.bytes_over_llc {
            Some(x) => format!(
                "{} ({:.2}× LLC, {})",
                bytes_label(row.heap_bytes),
                x,
                crate::schema::residence(Some(x))
            ),
            None => format!("{} (cache unknown)", bytes_label(row.heap_bytes)),
        },
        pm(&row.build_ci, 1),
        l(0),
        l(50),
        l(100),
        row.floor_ns,
        mid.map(|m| format!("{:.2}×", m.floor_ratio))
            .unwrap_or_else(|| "—".into()),
        with_tag(ratio_cell(mid.and_then(|m| m.blocked_ratio.as_ref()))),
        with_tag(
            match mid.and_then(|m| m.peer.as_ref().zip(m.peer_ratio.as_ref())) {
                Some((p, i)) => format!("{} vs {p}", ratio_cell(Some(i))),
                None => "—".into(),
            }
        ),
    )
}

/// Header of the main table.
pub const TABLE_HEADER: &str = "| filter | target | bits/item | measured ε [95 %] | theory ε | log2(1/ε) | wasted | heap (÷ LLC, residence) | build ns/key ± | ns/op 0 % ± | ns/op 50 % ± | ns/op 100 % ± | floor ns | ×floor (50 %) | ×blocked (50 %) [95 %] | ×fastest peer (50 %) [95 %] |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|";

/// The rows that stand for each kind at size `n` in the glance: the target nearest 1 % and
/// fixed-parameter rows; the fastest at 50 % hits, where "fastest" is decided only outside
/// noise (a rival whose paired ratio interval holds 1.0 ties, and ties go to the smaller).
pub fn best_of_kind(r: &Results, n: u64) -> Vec<&Row> {
    let mut targets: Vec<f64> = r.rows.iter().filter_map(|x| x.target_fpr).collect();
    targets.sort_by(f64::total_cmp);
    targets.dedup();
    let near = targets.iter().copied().min_by(|a, b| {
        (a.ln() - 0.01f64.ln())
            .abs()
            .total_cmp(&(b.ln() - 0.01f64.ln()).abs())
    });
    let mut kinds: Vec<&str> = Vec::new();
    for x in r.rows.iter().filter(|x| x.n == n) {
        if !kinds.contains(&x.kind.as_str()) {
            kinds.push(&x.kind);
        }
    }
    let mut out = Vec::new();
    for k in kinds {
        let cands: Vec<&Row> = r
            .rows
            .iter()
            .filter(|x| {
                x.n == n
                    && x.kind == k
                    && match (x.target_fpr, near) {
                        // A tunable entry stands in only if its own formula meets the target
                        // (a peer sized at another filter's bits may not).
                        (Some(t), _) => {
                            Some(t) == near && x.theoretical_fpr.is_none_or(|e| e <= t * 1.02)
                        }
                        // Fixed parameters stand in only if they meet that target.
                        (None, Some(t)) => x.theoretical_fpr.unwrap_or(x.measured_fpr) <= t,
                        (None, None) => true,
                    }
                    && x.false_negatives == 0
                    && x.refused_inserts == 0
                    && crate::driver::meets_target(x)
            })
            .collect();
        if let Some(best) = crate::recommend::pick(&cands) {
            out.push(best);
        }
    }
    out
}

/// Results at a glance, for the terminal at the end of a run.
pub fn glance(r: &Results, dir: &Path, plots: bool) -> String {
    let mut s = String::new();
    let mut sizes: Vec<u64> = r.rows.iter().map(|x| x.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let _ = writeln!(
        s,
        "Results at a glance (best of each kind at the target nearest 1 % or fixed; ns/op at 50 % hits, median ±95 % interval over {} interleaved rounds; wall time {:.0} s):",
        r.config.lookup_passes, r.wall_seconds
    );
    for n in sizes {
        let _ = writeln!(s, "  n = {}", size_label(n));
        for x in best_of_kind(r, n) {
            let batched = r.filters.iter().any(|f| f.name == x.filter && f.batched);
            let _ = writeln!(
                s,
                "    {:<9} {:<22} {:>6.2} bits/item  ε {:>9}  {:>14} ns/op  ({}; {}{})",
                x.kind,
                display_name(&x.filter, x.peer),
                x.bits_per_item,
                pct(x.measured_fpr),
                x.lookup(50).map(|l| pm(&l.ns_ci, 1)).unwrap_or_default(),
                x.target_fpr
                    .map(|t| format!("target {}", pct(t)))
                    .unwrap_or_else(|| "fixed parameters".into()),
                crate::schema::residence(x.bytes_over_llc),
                if batched { "; batched lookups" } else { "" }
            );
        }
    }
    let _ = writeln!(
        s,
        "Full tables: {}; every figure: {}; CSVs: {}/*.csv{}",
        dir.join(SUMMARY).display(),
        dir.join(JSON).display(),
        dir.display(),
        if plots {
            format!(
                "; plots: {}; the report to open in a browser: {}",
                dir.join("plots").display(),
                dir.join(INDEX).display()
            )
        } else {
            String::new()
        }
    );
    s
}

/// The whole summary.md.
pub fn summary(r: &Results) -> String {
    let mut s = String::new();
    write_machine(&mut s, r);
    write_conditions(&mut s, &r.machine.conditions);
    write_run(&mut s, r);
    write_how_to_read(&mut s, r);
    write_floors(&mut s, r);
    write_size_tables(&mut s, r);
    write_odd_rows(&mut s, r);
    for ex in &r.experiments {
        write_experiment(&mut s, ex);
    }
    write_filters(&mut s, r);
    write_left_out(&mut s, r);
    s
}

/// The title and the Machine section's first lines: CPU, caches, toolchain, commit.
fn write_machine(s: &mut String, r: &Results) {
    let m = &r.machine;
    let _ = writeln!(s, "# bloomlab harness results\n");
    let _ = writeln!(
        s,
        "Written by `bench-harness run` — not edited by hand. Every figure is in `results.json`; \
         each table is also a CSV.\n"
    );
    let _ = writeln!(s, "## Machine\n");
    let _ = writeln!(s, "- CPU: {} ({} logical cores)", m.cpu, m.cores);
    let _ = writeln!(s, "- caches: {}", m.caches);
    let _ = writeln!(
        s,
        "- cache sizes used for residence: L1d {}, L2 {}, LLC {} (a row is \"in cache\" at ≤ 0.5× the LLC, \"out of cache\" at ≥ 2×, \"near LLC\" between)",
        m.cache_bytes
            .l1d
            .map(bytes_label)
            .unwrap_or_else(|| "unknown".into()),
        m.cache_bytes
            .l2
            .map(bytes_label)
            .unwrap_or_else(|| "unknown".into()),
        m.cache_bytes
            .llc
            .map(bytes_label)
            .unwrap_or_else(|| "unknown".into()),
    );
    let _ = writeln!(s, "- {}; {}", m.rustc, m.os);
    let _ = writeln!(s, "- commit {}; {}", m.git_commit, m.date);
}

/// The Machine section's line on the measuring conditions.
fn write_conditions(s: &mut String, c: &crate::schema::Conditions) {
    let _ = writeln!(
        s,
        "- conditions: measuring thread {}; transparent huge pages {}; CPU governor: {}; load \
         average (1 min) {} at the start, {} at the end; steal time {}; times read from {}; \
         {} of the timed lookup chunks ({} keys each) ran without a context switch and only \
         those count; {} of the warm-up-and-pass attempts were redone because the thread was \
         switched out during them ({} passes kept although switched out, after {} attempts)",
        match (c.pinned_cpu, c.round_cpus.len()) {
            (Some(p), 2..) => format!(
                "pinned to CPU {p}, the lookup rounds moved across CPUs {}",
                comma_list(&c.round_cpus, usize::to_string)
            ),
            (Some(p), _) => format!("pinned to CPU {p}"),
            (None, _) => "not pinned (the OS refused)".into(),
        },
        c.thp,
        c.governor,
        decimals_or(c.load_start, 2, "", "unreadable"),
        decimals_or(c.load_end, 2, "", "unreadable"),
        decimals_or(
            c.steal_pct,
            2,
            " % of CPU time during the run",
            "unreadable"
        ),
        c.clock,
        decimals_or(c.clean_chunks_pct, 1, " %", "(not recorded)"),
        crate::adapters::CHUNK,
        decimals_or(c.redone_passes_pct, 1, " %", "(not recorded)"),
        c.unclean_passes
            .map(|x| x.to_string())
            .unwrap_or_else(|| "(not recorded)".into()),
        crate::driver::MAX_TRIES,
    );
}

/// The Machine section's lines on the run: its plan, wall time and phases.
fn write_run(s: &mut String, r: &Results) {
    let _ = writeln!(
        s,
        "- run: sizes {}, targets {}, seed {}, {} FPR probes, lookup mixes {:?} % positive, \
         {} interleaved rounds of one pass of up to {} keys per filter and mix (each timed pass \
         right after an untimed warm-up pass of the same build over other keys, the pair redone \
         when the thread was switched out during it), {}; wall time {:.0} s{}",
        comma_list(&r.config.sizes, |n| size_label(*n)),
        comma_list(&r.config.fprs, |p| pct(*p)),
        r.config.seed,
        r.config.fpr_probes,
        r.config.mixes,
        r.config.lookup_passes,
        r.config.lookup_keys,
        r.config.grouping,
        r.wall_seconds,
        if r.config.full { " (--full)" } else { "" }
    );
    if !r.phases.is_empty() {
        let _ = writeln!(
            s,
            "- wall time by phase (process CPU time in brackets, both threads counted): {}",
            r.phases
                .iter()
                .map(|p| format!("{} {:.0} s [{:.0} s]", p.name, p.seconds, p.cpu_seconds))
                .collect::<Vec<_>>()
                .join("; ")
        );
    }
}

/// How to read the tables.
fn write_how_to_read(s: &mut String, r: &Results) {
    let _ = writeln!(s, "\n## How to read the tables\n");
    let _ = writeln!(
        s,
        "- Keys: {}.\n- heap and bits/item: live heap bytes of the built structure, measured \
         with a counting allocator (the same way for every entry) × 8 / n.\n- measured ε: \
         false positives over distinct non-member probes, with its 95 % Wilson interval; probe \
         candidates that were members are excluded and counted (`overlap_excluded` in the \
         CSV). theory ε: the structure's own formula at n. log2(1/ε): the lower bound on \
         bits/item at the measured ε; wasted = bits/item ÷ log2(1/ε) − 1.\n- Interleaving: at \
         each size every filter is built several times (5 independently allocated builds at \
         10^5, 3 at 10^6, 2 at 10^7, 1 from 10^8, each pass in a shuffled order) and every \
         build is kept; each round times every (filter, mix) once in a freshly shuffled \
         order, using build `round mod builds` of each, each timed pass right after an untimed \
         warm-up pass of the same build over other keys (the pair redone if the thread was \
         switched out during it), so noise from elsewhere lands on every filter alike and no \
         pass depends on what ran before it. Where Machine lists CPUs the rounds moved \
         across, they did so in blocks of `builds` rounds (one CPU per whole block at most).\n- ns/op ±: \
         median over the rounds of a stream of distinct keys, the given % of them members, \
         shuffled — with the rounds on several CPUs, the geometric mean of the per-CPU \
         medians; ± is the larger half of the 95 % bootstrap interval of that figure, \
         resampling builds and then blocks of consecutive rounds (a circular moving-block \
         bootstrap, blocks of ⌈slots^(1/3)⌉ slots of one round per build, so rounds that \
         drift together are drawn together), so a difference between builds widens it. build ns/key: the whole build ÷ n (± over the \
         build passes; ±0 with one pass).\n- ratios: ×blocked and ×fastest peer are medians \
         of the per-round ratios (both filters timed in the same round; per CPU, then their \
         geometric mean), with their 95 % \
         bootstrap intervals; where the interval holds 1.0 the cell says \"no measurable \
         difference\" instead of naming a winner. ×fastest peer compares with the fastest \
         peer of the same kind at the same size and target (fixed-parameter peers only at \
         targets at or above their own FPR). Batched entries are marked \"batched vs \
         single\": no peer offers a batched lookup.\n- floor: ns per independent random \
         64-byte read over a buffer as large as the filter, in the same run; ×floor = ns/op \
         ÷ floor.\n- (peer) marks crates.io peers; `exact-hashset` is the exact baseline \
         (`HashSet<u64>`).\n",
        r.keys
    );
}

/// The memory floor per size.
fn write_floors(s: &mut String, r: &Results) {
    let _ = writeln!(s, "## Memory floor per size\n");
    let _ = writeln!(
        s,
        "The floor is the throughput of independent loads (addresses precomputed, so many \
         misses overlap): the best any lookup touching one random cache line can do. The \
         dependent read (a pointer chase) is the latency of one miss that nothing overlaps.\n"
    );
    let _ = writeln!(
        s,
        "| n | buffer (1 % classic size) | floor: ns per independent random 64-byte read | ns per dependent random 64-byte read |\n|---|---|---|---|"
    );
    for f in &r.size_floors {
        let _ = writeln!(
            s,
            "| {} | {} | {:.1} | {:.1} |",
            size_label(f.n),
            bytes_label(f.bytes),
            f.ns,
            f.dependent_ns
        );
    }
}

/// One table per size.
fn write_size_tables(s: &mut String, r: &Results) {
    let mut sizes: Vec<u64> = r.rows.iter().map(|x| x.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    for n in sizes {
        let _ = writeln!(s, "\n## n = {}\n", size_label(n));
        let _ = writeln!(s, "{TABLE_HEADER}");
        for row in r.rows.iter().filter(|x| x.n == n) {
            let batched = r.filters.iter().any(|f| f.name == row.filter && f.batched);
            let _ = writeln!(s, "{}", table_row(row, batched));
        }
    }
}

/// Rows with refused inserts or false negatives, if any.
fn write_odd_rows(s: &mut String, r: &Results) {
    let odd: Vec<&Row> = r
        .rows
        .iter()
        .filter(|x| x.refused_inserts > 0 || x.false_negatives > 0)
        .collect();
    if !odd.is_empty() {
        let _ = writeln!(s, "\n### Refused inserts and false negatives\n");
        for x in odd {
            let _ = writeln!(
                s,
                "- {} at n = {}, target {}: refused {} inserts; {} of the sampled members tested negative",
                display_name(&x.filter, x.peer),
                size_label(x.n),
                target_label(x.target_fpr),
                x.refused_inserts,
                x.false_negatives
            );
        }
    }
}

/// One experiment's section: its table and headline ratios.
fn write_experiment(s: &mut String, ex: &crate::schema::Experiment) {
    let _ = writeln!(s, "\n## Experiment: {}\n\n{}\n", ex.title, ex.description);
    let xs: Vec<f64> = ex
        .series
        .first()
        .map(|se| se.points.iter().map(|p| p.x).collect())
        .unwrap_or_default();
    let _ = write!(s, "| series |");
    for &x in &xs {
        let _ = write!(s, " {} |", axis_label(x));
    }
    let _ = writeln!(s, " note |");
    let _ = writeln!(s, "|---|{}---|", "---|".repeat(xs.len()));
    let fmt = |v: f64| {
        if ex.y_is_rate {
            pct(v)
        } else {
            format!("{v:.2}")
        }
    };
    for se in &ex.series {
        let _ = write!(s, "| {} |", se.label);
        for p in &se.points {
            let ci =
                p.ci.map(|c| format!(" [{}–{}]", fmt(c.lo), fmt(c.hi)))
                    .unwrap_or_default();
            let _ = write!(
                s,
                " {}{ci} ({}) |",
                fmt(p.y),
                p.theory.map(fmt).unwrap_or_else(|| "—".into())
            );
        }
        let _ = writeln!(s, " {} |", se.note);
    }
    let _ = writeln!(
        s,
        "\nColumns: {}. Each cell: measured [95 % Wilson interval, for rates over probes; \
         exact quantities have none] (theory).",
        ex.x_label
    );
    if !ex.ratios.is_empty() {
        let _ = writeln!(s, "\nHeadline ratios (median [95 % interval]):\n");
        for x in &ex.ratios {
            let _ = writeln!(s, "- {}: {}", x.name, ratio_text(&x.ratio));
        }
    }
}

/// The filters and how each is configured.
fn write_filters(s: &mut String, r: &Results) {
    let _ = writeln!(s, "\n## Filters and how each is configured\n");
    let _ = writeln!(
        s,
        "Every peer runs in its fastest documented configuration for unkeyed use; where a \
         crate's default is a keyed hash, that default is measured too, labelled keyed. Growing \
         peers are given the parameters that promise the same compound FPR as ours.\n"
    );
    let _ = writeln!(
        s,
        "| name | source | kind | peer | deletes | grows | keyed | batched | configured as |\n|---|---|---|---|---|---|---|---|---|"
    );
    for f in &r.filters {
        let yn = |b: bool| if b { "yes" } else { "no" };
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            f.name,
            f.source,
            f.kind,
            yn(f.peer),
            yn(f.deletes),
            yn(f.grows),
            yn(f.keyed),
            yn(f.batched),
            f.note
        );
    }
}

/// The peers left out of this build, if any.
fn write_left_out(s: &mut String, r: &Results) {
    if r.left_out.is_empty() {
        let _ = writeln!(
            s,
            "\nNo peer was left out: every peer crate listed above builds with this toolchain \
             and was measured (fixed-parameter peers at their own FPR, marked `fixed`)."
        );
    } else {
        let _ = writeln!(s, "\nLeft out of this build:\n");
        for l in &r.left_out {
            let _ = writeln!(s, "- {l}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{axis_label, ratio_text};
    use crate::stats::Interval;

    #[test]
    fn experiment_columns_are_read_as_people_write_them() {
        assert_eq!(axis_label(1_000_000.0), "1000000");
        assert_eq!(axis_label(0.01), "0.01");
        assert_eq!(axis_label(2.000_034_390_963_041), "2");
        assert_eq!(axis_label(1.25), "1.25");
        assert_eq!(axis_label(4.1459), "4.146");
    }

    #[test]
    fn headline_ratios_show_an_interval_only_when_there_is_one() {
        let exact = Interval {
            mid: 0.72248,
            lo: 0.72248,
            hi: 0.72248,
        };
        assert_eq!(ratio_text(&exact), "0.722");
        let timed = Interval {
            mid: 1.2184,
            lo: 1.196,
            hi: 1.304,
        };
        assert_eq!(ratio_text(&timed), "1.218 [1.20–1.30]");
    }
}
