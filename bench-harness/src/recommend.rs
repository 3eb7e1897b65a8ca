//! `recommend`: pick a structure from measured results, not from a table of opinions.
//!
//! For the requested n and FPR: use the measured size closest to n (on a log scale) and
//! project memory as measured bits/item × n. When n lies off the measured sizes, or the FPR
//! below the lowest measured target, the answer says it is extrapolated, from which measured
//! point, whether that point was in the measuring machine's cache and whether the projected
//! structure would be, and gives the `run` command that would measure it.
//!
//! Candidates are the filters with the needed capabilities, sized to meet their target
//! (equal-FPR rows; entries at another entry's memory are left out), whose *measured* FPR meets
//! the target (the lower end of its 95 % Wilson interval at or below it) and whose projected
//! memory fits the budget; batched entries only with `--batch` (the caller can query a slice
//! at a time). The objective orders them: `speed` (default) — the fastest at a 50 % positive
//! mix, every candidate whose paired ratio to the fastest holds 1.0 tied with it and a tie
//! going to the smallest; `memory` — the fewest bits/item, candidates within 1 % of it tied
//! and a tie going to the fastest. An exact set is recommended only when it fits (the budget,
//! or [`SMALL_SET_BYTES`] with none) and also wins on the objective. The top three are
//! printed with their figures. With no candidate the answer is a refusal that names, one line
//! per variant, the needs that ruled it out, and the nearest thing that would work.

use crate::error::Error;
use std::fmt::Write as _;

use crate::labels::{display_name, pct, size_label, target_label};
use crate::schema::{Results, Row};

/// With no budget, an exact set this small is recommended outright.
pub const SMALL_SET_BYTES: f64 = 1024.0 * 1024.0;

/// What the user needs.
#[derive(Clone, Debug, PartialEq)]
pub struct Needs {
    /// Items.
    pub n: u64,
    /// Highest acceptable FPR.
    pub fpr: f64,
    /// Must support deletes.
    pub deletes: bool,
    /// Must grow past n without a rebuild.
    pub grows: bool,
    /// Keys may be chosen by an adversary: needs a keyed hash.
    pub hostile_keys: bool,
    /// Memory limit in bytes.
    pub memory_budget: Option<u64>,
    /// The caller can query a slice of keys at a time: batched entries may be chosen.
    pub batch: bool,
    /// What to rank by.
    pub objective: Objective,
}

/// What `recommend` ranks by (`--objective`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Objective {
    /// Fastest lookups (50 % hits); ties go to the smaller.
    #[default]
    Speed,
    /// Fewest bits per item; ties (within 1 %) go to the faster.
    Memory,
}

/// Bits/item within this fraction of each other tie under the memory objective.
pub const MEMORY_TIE: f64 = 0.01;

/// A recommendation with the numbers behind it.
#[derive(Clone, Debug, PartialEq)]
pub struct Recommendation {
    /// Chosen filter name.
    pub filter: String,
    /// The measured row it rests on.
    pub row: Row,
    /// Projected bytes at n.
    pub projected_bytes: f64,
    /// Human explanation.
    pub explanation: String,
}

fn mib(b: f64) -> String {
    if b >= 1024.0 * 1024.0 {
        format!("{:.2} MiB", b / 1024.0 / 1024.0)
    } else {
        format!("{:.1} KiB", b / 1024.0)
    }
}

fn ns50(r: &Row) -> f64 {
    r.lookup(50).map(|l| l.ns).unwrap_or(f64::INFINITY)
}

/// `true` when `a` and `b` cannot be told apart at 50 % hits: their ratio's interval
/// ([`Row::ratio_to`]: paired in one interleaving group; across groups `[lo_a / hi_b, hi_a /
/// lo_b]`, which holds 1.0 exactly when the two intervals overlap) holds 1.0.
pub fn tied(a: &Row, b: &Row) -> bool {
    a.ratio_to(b, 50).is_some_and(|q| q.contains(1.0))
}

/// The fastest row at 50 % hits, ties (see [`tied`]) broken by bits/item, not by noise.
pub fn pick<'a>(cands: &[&'a Row]) -> Option<&'a Row> {
    rank(cands, Objective::Speed).first().copied()
}

/// Whether a row ties with the leading one under an objective.
type InTie = Box<dyn Fn(&Row, &Row) -> bool>;

/// A variant ruled out: its name, its measured targets, and each need that failed with the
/// targets it failed at.
type RuledOut = (String, Vec<String>, Vec<(String, Vec<String>)>);

/// The candidates best first under `objective`. Speed: the fastest, then every row tied with
/// it (see [`tied`]) smallest first, then the rest the same way. Memory: the smallest, then
/// the rows within [`MEMORY_TIE`] of it fastest first, then the rest the same way.
pub fn rank<'a>(cands: &[&'a Row], objective: Objective) -> Vec<&'a Row> {
    let mut left: Vec<&Row> = cands.to_vec();
    let mut out = Vec::with_capacity(left.len());
    while !left.is_empty() {
        let (lead, in_tie): (&Row, InTie) = match objective {
            Objective::Speed => (
                left.iter()
                    .copied()
                    .min_by(|a, b| ns50(a).total_cmp(&ns50(b)))
                    .expect("non-empty"),
                Box::new(|r: &Row, lead: &Row| std::ptr::eq(r, lead) || tied(r, lead)),
            ),
            Objective::Memory => (
                left.iter()
                    .copied()
                    .min_by(|a, b| a.bits_per_item.total_cmp(&b.bits_per_item))
                    .expect("non-empty"),
                Box::new(|r: &Row, lead: &Row| {
                    r.bits_per_item <= lead.bits_per_item * (1.0 + MEMORY_TIE)
                }),
            ),
        };
        let mut group: Vec<&Row> = left.iter().copied().filter(|r| in_tie(r, lead)).collect();
        match objective {
            Objective::Speed => group.sort_by(|a, b| {
                a.bits_per_item
                    .total_cmp(&b.bits_per_item)
                    .then(ns50(a).total_cmp(&ns50(b)))
            }),
            Objective::Memory => group.sort_by(|a, b| {
                ns50(a)
                    .total_cmp(&ns50(b))
                    .then(a.bits_per_item.total_cmp(&b.bits_per_item))
            }),
        }
        left.retain(|r| !group.iter().any(|g| std::ptr::eq(*g, *r)));
        out.extend(group);
    }
    out
}

/// Why a row fails the needs (capabilities first), or `None`.
fn failures(r: &Row, i: &crate::schema::FilterInfo, needs: &Needs, projected: f64) -> Vec<String> {
    let mut why = Vec::new();
    if needs.deletes && !i.deletes {
        why.push("no deletes".to_string());
    }
    if needs.grows && !i.grows {
        why.push("does not grow".to_string());
    }
    if needs.hostile_keys && !i.keyed {
        why.push("unkeyed hash (crafted keys can aim at chosen bits)".to_string());
    }
    if r.fpr_ci.lo > needs.fpr {
        why.push(format!("measured FPR above {}", pct(needs.fpr)));
    }
    if r.false_negatives > 0 || r.refused_inserts > 0 {
        why.push("refused inserts or lost keys at this size".to_string());
    }
    if needs.memory_budget.is_some_and(|b| projected > b as f64) {
        why.push("over the memory budget".to_string());
    }
    if i.batched && !needs.batch {
        why.push("batched lookups (needs --batch: querying a slice of keys at a time)".to_string());
    }
    if i.equal_memory {
        why.push("sized at another filter's memory, not to meet the target".to_string());
    }
    why
}

/// `cargo run` line that measures `needs` directly.
fn run_command(needs: &Needs) -> String {
    format!(
        "cargo run --release -p bench-harness -- run --n {} --fpr {} --experiments none --out results/n{}",
        needs.n, needs.fpr, needs.n
    )
}

fn row_label(r: &Row, info: Option<&crate::schema::FilterInfo>) -> String {
    format!(
        "{}{} @ {}",
        display_name(&r.filter, r.peer),
        if info.is_some_and(|i| i.batched) {
            " [batched: queries a slice at a time]"
        } else {
            ""
        },
        target_label(r.target_fpr)
    )
}

/// What is extrapolated, if anything: off the measured sizes, below the measured targets,
/// and where the measured point and the projected structure sit against the LLC.
fn extrapolation(
    results: &Results,
    needs: &Needs,
    size: u64,
    typical_bytes: Option<f64>,
) -> Option<String> {
    let sizes: Vec<u64> = results.rows.iter().map(|r| r.n).collect();
    let (lo, hi) = (
        sizes.iter().copied().min().unwrap_or(size),
        sizes.iter().copied().max().unwrap_or(size),
    );
    let min_target = results
        .rows
        .iter()
        .filter_map(|r| r.target_fpr)
        .fold(f64::INFINITY, f64::min);
    let mut what = Vec::new();
    if needs.n != size {
        what.push(format!(
            "n = {} was not measured ({}; measured {}..{}): the figures are those at n = {}",
            needs.n,
            if needs.n > hi {
                "above the largest size"
            } else if needs.n < lo {
                "below the smallest size"
            } else {
                "between measured sizes"
            },
            size_label(lo),
            size_label(hi),
            size_label(size)
        ));
    }
    if needs.fpr < min_target * (1.0 - 1e-9) {
        what.push(format!(
            "FPR {} is below the lowest measured target ({})",
            pct(needs.fpr),
            pct(min_target)
        ));
    }
    if what.is_empty() {
        return None;
    }
    let llc = results.machine.cache_bytes.llc;
    let cache = match (llc, typical_bytes) {
        (Some(llc), Some(bytes)) => {
            let measured = bytes / needs.n as f64 * size as f64;
            format!(
                "\n  The measured point held about {} ({:.2}× the {} LLC: {}); at n = {} it would need about {} ({:.2}× that LLC: {}).\n  Measured on: {}.",
                mib(measured),
                measured / llc as f64,
                mib(llc as f64),
                crate::schema::residence(Some(measured / llc as f64)),
                needs.n,
                mib(bytes),
                bytes / llc as f64,
                crate::schema::residence(Some(bytes / llc as f64)),
                results.machine.cpu,
            )
        }
        (None, _) => "\n  The results do not record the measuring machine's cache size (an older schema): whether the measured point was in cache is unknown.".into(),
        (Some(_), None) => String::new(),
    };
    Some(format!(
        "Extrapolated: {}.{}\n  Speeds do not carry across cache levels; to measure it: {}",
        what.join("; "),
        cache,
        run_command(needs)
    ))
}

/// What every step of [`recommend`] reads: the results, the needs and the measured size
/// used for them.
struct Ask<'a> {
    results: &'a Results,
    needs: &'a Needs,
    size: u64,
}

impl Ask<'_> {
    fn info(&self, name: &str) -> Option<&crate::schema::FilterInfo> {
        self.results.filters.iter().find(|f| f.name == name)
    }

    /// Bytes the row's structure would take at the needed n.
    fn project(&self, r: &Row) -> f64 {
        r.bits_per_item * self.needs.n as f64 / 8.0
    }

    fn budget(&self) -> Option<f64> {
        self.needs.memory_budget.map(|b| b as f64)
    }

    fn objective_name(&self) -> &'static str {
        match self.needs.objective {
            Objective::Speed => "speed",
            Objective::Memory => "memory",
        }
    }
}

/// Choose, or explain why nothing measured fits.
pub fn recommend(results: &Results, needs: &Needs) -> Result<Recommendation, Error> {
    check_needs(needs)?;
    let ask = Ask {
        results,
        needs,
        size: closest_size(results, needs)?,
    };
    let rows: Vec<&Row> = results.rows.iter().filter(|r| r.n == ask.size).collect();
    let mut out = needs_line(&ask);
    let (candidates, near_misses) = sort_rows(&ask, &rows);
    let ranked = rank(&candidates, needs.objective);
    if let Some(e) = rows.iter().find(|r| r.kind == "exact").copied()
        && let Some(rec) = exact_set(&ask, e, &ranked, &mut out)
    {
        return Ok(rec);
    }
    let Some(&best) = ranked.first() else {
        return Err(refusal(&ask, out, &near_misses));
    };
    explain_choice(&ask, best, &ranked, &mut out);
    Ok(Recommendation {
        filter: best.filter.clone(),
        row: best.clone(),
        projected_bytes: ask.project(best),
        explanation: out,
    })
}

/// `n` and the FPR are in range.
fn check_needs(needs: &Needs) -> Result<(), Error> {
    if needs.n == 0 {
        return Err(Error::usage("--n must be at least 1"));
    }
    if !(needs.fpr > 0.0 && needs.fpr < 1.0) {
        return Err(Error::usage(format!(
            "--fpr must be between 0 and 1 exclusive (got {})",
            needs.fpr
        )));
    }
    Ok(())
}

/// The measured size closest to `needs.n` (in log scale).
fn closest_size(results: &Results, needs: &Needs) -> Result<u64, Error> {
    results
        .rows
        .iter()
        .map(|r| r.n)
        .min_by(|a, b| {
            let d = |x: u64| ((x as f64).ln() - (needs.n as f64).ln()).abs();
            d(*a).total_cmp(&d(*b))
        })
        .ok_or_else(|| Error::usage("the results hold no measurements"))
}

/// The explanation's first line: the needs and the measurements used.
fn needs_line(ask: &Ask) -> String {
    let needs = ask.needs;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Needs: n = {}, FPR ≤ {}{}{}{}{}{}; objective: {}. Using the measurements at n = {} (closest measured size; keys {}).",
        needs.n,
        pct(needs.fpr),
        if needs.deletes { ", deletes" } else { "" },
        if needs.grows { ", grows" } else { "" },
        if needs.hostile_keys {
            ", hostile keys"
        } else {
            ""
        },
        ask.budget()
            .map(|b| format!(", budget {}", mib(b)))
            .unwrap_or_default(),
        if needs.batch { ", batched lookups" } else { "" },
        ask.objective_name(),
        size_label(ask.size),
        ask.results.config.key_shape
    );
    out
}

/// A row that fails some needs, and which.
type Miss<'a> = (&'a Row, Vec<String>);

/// The filters that meet every need, and the others with the needs each fails.
fn sort_rows<'a>(ask: &Ask, rows: &[&'a Row]) -> (Vec<&'a Row>, Vec<Miss<'a>>) {
    let mut near_misses: Vec<Miss> = Vec::new();
    let mut candidates: Vec<&Row> = Vec::new();
    for r in rows.iter().copied().filter(|r| r.kind != "exact") {
        let Some(i) = ask.info(&r.filter) else {
            continue;
        };
        let why = failures(r, i, ask.needs, ask.project(r));
        if why.is_empty() {
            candidates.push(r);
        } else {
            near_misses.push((r, why));
        }
    }
    (candidates, near_misses)
}

/// The exact set, recommended only when it fits and also wins on the objective; otherwise
/// a line on why not is added to `out`.
fn exact_set(ask: &Ask, e: &Row, ranked: &[&Row], out: &mut String) -> Option<Recommendation> {
    let needs = ask.needs;
    let budget = ask.budget();
    let bytes = ask.project(e);
    let exact_fits = match budget {
        Some(b) => bytes <= b,
        None => bytes <= SMALL_SET_BYTES,
    };
    let wins = exact_fits
        && match (ranked.first(), needs.objective) {
            (None, _) => true,
            (Some(best), Objective::Speed) => ns50(e) < ns50(best) && !tied(e, best),
            (Some(best), Objective::Memory) => e.bits_per_item < best.bits_per_item,
        };
    if wins {
        let _ = writeln!(
            out,
            "Use an exact set: {} needs about {} for {} keys ({:.1} bits/item measured), \
             with no false positives at all and {:.1} ns per lookup (50 % hits){}.",
            e.filter,
            mib(bytes),
            needs.n,
            e.bits_per_item,
            ns50(e),
            match ranked.first() {
                Some(b) => format!(
                    ", faster than the fastest filter that meets the needs ({}, {:.1} ns)",
                    display_name(&b.filter, b.peer),
                    ns50(b)
                ),
                None => ", and no filter meets the needs".into(),
            }
        );
        if let Some(x) = extrapolation(ask.results, needs, ask.size, Some(bytes)) {
            let _ = writeln!(out, "{x}");
        }
        return Some(Recommendation {
            filter: e.filter.clone(),
            row: e.clone(),
            projected_bytes: bytes,
            explanation: std::mem::take(out),
        });
    }
    let _ = writeln!(
        out,
        "An exact set would need about {} ({:.1} bits/item measured, {:.1} ns per lookup){}.",
        mib(bytes),
        e.bits_per_item,
        ns50(e),
        if !exact_fits {
            if budget.is_some() {
                ", over the budget"
            } else {
                ", over the small-set threshold"
            }
        } else {
            match needs.objective {
                Objective::Speed => ", not faster than the filter below",
                Objective::Memory => ", more than the filter below",
            }
        }
    );
    None
}

/// Nothing meets the needs: what ruled each variant out, and the nearest thing that would
/// work.
fn refusal(ask: &Ask, out: String, near_misses: &[(&Row, Vec<String>)]) -> Error {
    let mut msg = format!("{out}No measured option meets these needs. Ruled out:\n");
    if near_misses.is_empty() {
        msg.push_str("  nothing was measured at this size\n");
    }
    for (name, targets, reasons) in &ruled_out(near_misses) {
        let text: Vec<String> = reasons
            .iter()
            .map(|(w, ts)| {
                if ts.len() == targets.len() {
                    w.clone()
                } else {
                    format!("{w} (at {})", ts.join("/"))
                }
            })
            .collect();
        let _ = writeln!(
            msg,
            "  - {name} @ {}: {}",
            targets.join("/"),
            text.join("; ")
        );
    }
    let _ = write!(
        msg,
        "{}",
        nearest(near_misses, ask.needs, &|r| ask.project(r))
    );
    if let Some(x) = extrapolation(ask.results, ask.needs, ask.size, None) {
        let _ = writeln!(msg, "{x}");
    }
    Error::Refused(msg)
}

/// One entry per variant: its targets, and the needs that ruled it out, each with the
/// targets at which it did.
fn ruled_out(near_misses: &[(&Row, Vec<String>)]) -> Vec<RuledOut> {
    let mut variants: Vec<RuledOut> = Vec::new();
    for (r, why) in near_misses {
        let name = display_name(&r.filter, r.peer);
        let t = target_label(r.target_fpr);
        let v = match variants.iter_mut().position(|(n, _, _)| *n == name) {
            Some(i) => &mut variants[i],
            None => {
                variants.push((name, Vec::new(), Vec::new()));
                variants.last_mut().expect("just pushed")
            }
        };
        v.1.push(t.clone());
        for w in why {
            match v.2.iter_mut().find(|(k, _)| k == w) {
                Some((_, ts)) => ts.push(t.clone()),
                None => v.2.push((w.clone(), vec![t.clone()])),
            }
        }
    }
    variants
}

/// The chosen filter's figures, the ties it was chosen among, and the top three.
fn explain_choice(ask: &Ask, best: &Row, ranked: &[&Row], out: &mut String) {
    let needs = ask.needs;
    let bytes = ask.project(best);
    let _ = writeln!(
        out,
        "Use {} (target {}): measured ε = {}, {:.2} bits/item → about {} at n = {}, {:.1} ns per \
         lookup at 50 % hits ({:.2}× the memory floor; {} when measured), {:.1} ns per insert.",
        row_label(best, ask.info(&best.filter)),
        target_label(best.target_fpr),
        pct(best.measured_fpr),
        best.bits_per_item,
        mib(bytes),
        needs.n,
        ns50(best),
        best.lookup(50).map(|l| l.floor_ratio).unwrap_or(f64::NAN),
        crate::schema::residence(best.bytes_over_llc),
        best.build_ns_per_item
    );
    if let Some(x) = extrapolation(ask.results, needs, ask.size, Some(bytes)) {
        let _ = writeln!(out, "{x}");
    }
    explain_ties(ask, best, ranked, out);
    if ask.info(&best.filter).is_some_and(|i| !i.dynamic) {
        let _ = writeln!(
            out,
            "Note: {} is a static filter: it needs all keys up front — it is built once from \
             the complete key set and takes no inserts afterwards (a change means a rebuild). \
             If keys arrive over time, take the first dynamic option below.",
            best.filter
        );
    }
    let _ = writeln!(
        out,
        "Top {} by {}:",
        ranked.len().min(3),
        ask.objective_name()
    );
    for (k, r) in ranked.iter().take(3).enumerate() {
        let _ = writeln!(
            out,
            "  {}. {}: ε = {}, {:.2} bits/item ({}), {:.1} ns/op ({})",
            k + 1,
            row_label(r, ask.info(&r.filter)),
            pct(r.measured_fpr),
            r.bits_per_item,
            mib(ask.project(r)),
            ns50(r),
            crate::schema::residence(r.bytes_over_llc)
        );
    }
}

/// The candidates tied with the chosen one on the objective, if any.
fn explain_ties(ask: &Ask, best: &Row, ranked: &[&Row], out: &mut String) {
    let tied_with: Vec<&Row> = ranked
        .iter()
        .skip(1)
        .copied()
        .filter(|r| match ask.needs.objective {
            Objective::Speed => tied(r, best),
            Objective::Memory => r.bits_per_item <= best.bits_per_item * (1.0 + MEMORY_TIE),
        })
        .collect();
    if tied_with.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "{} {}: chosen as the {} of those.",
        match ask.needs.objective {
            Objective::Speed =>
                "No measurable speed difference (paired 95 % intervals hold 1.0) from",
            Objective::Memory => "Within 1 % of its bits/item:",
        },
        tied_with
            .iter()
            .map(|r| row_label(r, ask.info(&r.filter)))
            .collect::<Vec<_>>()
            .join(", "),
        match ask.needs.objective {
            Objective::Speed => "smallest",
            Objective::Memory => "fastest",
        }
    );
}

/// The nearest thing that would work: the rows failing the fewest needs, and for each what
/// would change the answer (the budget needed, the closest target met).
fn nearest(near: &[(&Row, Vec<String>)], needs: &Needs, project: &dyn Fn(&Row) -> f64) -> String {
    let mut out = String::new();
    let Some(fewest) = near.iter().map(|(_, w)| w.len()).min() else {
        return out;
    };
    let mut closest: Vec<&(&Row, Vec<String>)> =
        near.iter().filter(|(_, w)| w.len() == fewest).collect();
    closest.sort_by(|a, b| project(a.0).total_cmp(&project(b.0)));
    let _ = writeln!(out, "Nearest to working (failing only {fewest} need(s)):");
    let mut shown = Vec::new();
    for (r, why) in closest {
        if shown.contains(&r.filter) || shown.len() >= 4 {
            continue;
        }
        shown.push(r.filter.clone());
        let mut fixes = Vec::new();
        for w in why {
            if w.starts_with("over the memory budget") {
                fixes.push(format!("a budget of {}", mib(project(r))));
            } else if w.starts_with("measured FPR") {
                fixes.push(format!(
                    "accepting FPR {} (measured {})",
                    pct(r.fpr_ci.hi),
                    pct(r.measured_fpr)
                ));
            } else {
                fixes.push(format!("dropping the need behind \"{w}\""));
            }
        }
        let _ = writeln!(
            out,
            "  - {} @ {} would work with {}",
            display_name(&r.filter, r.peer),
            target_label(r.target_fpr),
            fixes.join(" and ")
        );
    }
    if needs.fpr < 1e-4 {
        let _ = writeln!(
            out,
            "  (targets below the measured ones need a measurement: run with --fpr {})",
            needs.fpr
        );
    }
    out
}
