//! `recommend`: pick a structure from measured results, not from a table of opinions.
//!
//! For the requested n and FPR: use the measured size closest to n (on a log scale) and
//! project memory as measured bits/item × n. An exact set wins when it fits the memory budget
//! (or, with no budget, when it needs at most [`SMALL_SET_BYTES`]): then exactness costs
//! nothing worth saving. Otherwise the candidates are the filters with the needed
//! capabilities whose *measured* FPR meets the target (the lower end of its 95 % Wilson
//! interval at or below the target) and whose projected memory fits the budget; the fastest
//! at a 50 % positive mix wins, but only outside noise: every candidate whose paired ratio to
//! the fastest holds 1.0 ties with it, and a tie goes to the smallest. With no candidate the
//! answer is a refusal that groups the reasons (one line per reason, listing the filters) and
//! names the nearest thing that would work.

use std::fmt::Write as _;

use crate::labels::{display_name, pct, size_label};
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
}

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
    let fastest = cands.iter().min_by(|a, b| ns50(a).total_cmp(&ns50(b)))?;
    cands
        .iter()
        .filter(|r| std::ptr::eq(**r, *fastest) || tied(r, fastest))
        .min_by(|a, b| {
            a.bits_per_item
                .total_cmp(&b.bits_per_item)
                .then(ns50(a).total_cmp(&ns50(b)))
        })
        .copied()
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
    why
}

/// Choose, or explain why nothing measured fits.
pub fn recommend(results: &Results, needs: &Needs) -> Result<Recommendation, String> {
    if needs.n == 0 {
        return Err("--n must be at least 1".into());
    }
    if !(needs.fpr > 0.0 && needs.fpr < 1.0) {
        return Err(format!(
            "--fpr must be between 0 and 1 exclusive (got {})",
            needs.fpr
        ));
    }
    let size = results
        .rows
        .iter()
        .map(|r| r.n)
        .min_by(|a, b| {
            let d = |x: u64| ((x as f64).ln() - (needs.n as f64).ln()).abs();
            d(*a).total_cmp(&d(*b))
        })
        .ok_or("the results hold no measurements")?;
    let info = |name: &str| results.filters.iter().find(|f| f.name == name);
    let project = |r: &Row| r.bits_per_item * needs.n as f64 / 8.0;
    let budget = needs.memory_budget.map(|b| b as f64);
    let rows: Vec<&Row> = results.rows.iter().filter(|r| r.n == size).collect();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Needs: n = {}, FPR ≤ {}{}{}{}{}. Using the measurements at n = {} (closest measured size).",
        needs.n,
        pct(needs.fpr),
        if needs.deletes { ", deletes" } else { "" },
        if needs.grows { ", grows" } else { "" },
        if needs.hostile_keys {
            ", hostile keys"
        } else {
            ""
        },
        budget
            .map(|b| format!(", budget {}", mib(b)))
            .unwrap_or_default(),
        size_label(size)
    );

    // 1. Skip the filter when exactness is affordable.
    if let Some(exact) = rows.iter().find(|r| r.kind == "exact") {
        let bytes = project(exact);
        let fits = match budget {
            Some(b) => bytes <= b,
            None => bytes <= SMALL_SET_BYTES,
        };
        if fits {
            let _ = writeln!(
                out,
                "Use an exact set: {} needs about {} for {} keys ({:.1} bits/item measured), {}, \
                 with no false positives at all and {:.1} ns per lookup (50 % hits). A filter \
                 would save memory you do not need to save.",
                exact.filter,
                mib(bytes),
                needs.n,
                exact.bits_per_item,
                match budget {
                    Some(b) => format!("within the {} budget", mib(b)),
                    None => format!("under the {} small-set threshold", mib(SMALL_SET_BYTES)),
                },
                ns50(exact)
            );
            return Ok(Recommendation {
                filter: exact.filter.clone(),
                row: (*exact).clone(),
                projected_bytes: bytes,
                explanation: out,
            });
        }
        let _ = writeln!(
            out,
            "An exact set would need about {} ({:.1} bits/item measured){}.",
            mib(bytes),
            exact.bits_per_item,
            if budget.is_some() {
                ", over the budget"
            } else {
                ""
            }
        );
    }

    // 2. Filters that meet every need.
    let mut rejected: Vec<(String, Vec<String>)> = Vec::new();
    let mut near_misses: Vec<(&Row, Vec<String>)> = Vec::new();
    let mut candidates: Vec<&Row> = Vec::new();
    for r in rows.iter().filter(|r| r.kind != "exact") {
        let Some(i) = info(&r.filter) else { continue };
        let why = failures(r, i, needs, project(r));
        if why.is_empty() {
            candidates.push(r);
            continue;
        }
        let label = format!(
            "{} @ {}",
            display_name(&r.filter, r.peer),
            r.target_fpr.map(pct).unwrap_or_else(|| "fixed".into())
        );
        for w in &why {
            match rejected.iter_mut().find(|(k, _)| k == w) {
                Some((_, v)) => {
                    if !v.contains(&label) {
                        v.push(label.clone())
                    }
                }
                None => rejected.push((w.clone(), vec![label.clone()])),
            }
        }
        near_misses.push((r, why));
    }
    let Some(best) = pick(&candidates) else {
        let mut msg = format!("{out}No measured option meets these needs. Rejected:\n");
        if rejected.is_empty() {
            msg.push_str("  nothing was measured at this size\n");
        }
        for (why, names) in &rejected {
            // Per filter: its bare name when every measured target of it fails this way, else
            // the failing targets ("classic @ 3.00 %").
            let mut by_filter: Vec<(String, Vec<String>)> = Vec::new();
            for n in names {
                let mut it = n.splitn(2, " @ ");
                let f = it.next().unwrap_or(n).to_string();
                let t = it.next().unwrap_or("").to_string();
                match by_filter.iter_mut().find(|(k, _)| *k == f) {
                    Some((_, ts)) => ts.push(t),
                    None => by_filter.push((f, vec![t])),
                }
            }
            let rows_of = |f: &str| {
                rows.iter()
                    .filter(|r| display_name(&r.filter, r.peer) == f)
                    .count()
            };
            let by_filter: Vec<(String, usize)> = by_filter
                .into_iter()
                .map(|(f, ts)| {
                    if ts.len() >= rows_of(&f) {
                        (f, 1)
                    } else {
                        (format!("{f} @ {}", ts.join("/")), 1)
                    }
                })
                .collect();
            let all_filters = near_misses
                .iter()
                .map(|(r, _)| r.filter.as_str())
                .collect::<std::collections::BTreeSet<_>>()
                .len();
            let list = if by_filter.len() == all_filters
                && !by_filter.iter().any(|(f, _)| f.contains(" @ "))
            {
                format!("all {all_filters} measured filters")
            } else {
                // As many names as fit one line of about 150 characters.
                const WIDTH: usize = 150;
                let mut l = String::new();
                let mut shown = 0;
                for (f, _) in &by_filter {
                    if !l.is_empty() && l.len() + f.len() + why.len() > WIDTH {
                        break;
                    }
                    if !l.is_empty() {
                        l.push_str(", ");
                    }
                    l.push_str(f);
                    shown += 1;
                }
                if by_filter.len() > shown {
                    l.push_str(&format!(" and {} more", by_filter.len() - shown));
                }
                l
            };
            let _ = writeln!(msg, "  - {why}: {list}");
        }
        let _ = write!(msg, "{}", nearest(&near_misses, needs, &project));
        return Err(msg);
    };
    let _ = &candidates;
    let bytes = project(best);
    let _ = writeln!(
        out,
        "Use {} (target {}): measured ε = {}, {:.2} bits/item → about {} at n = {}, {:.1} ns per \
         lookup at 50 % hits ({:.2}× the memory floor), {:.1} ns per insert.",
        display_name(&best.filter, best.peer),
        best.target_fpr.map(pct).unwrap_or_else(|| "fixed".into()),
        pct(best.measured_fpr),
        best.bits_per_item,
        mib(bytes),
        needs.n,
        ns50(best),
        best.lookup(50).map(|l| l.floor_ratio).unwrap_or(f64::NAN),
        best.build_ns_per_item
    );
    let tied_with: Vec<&&Row> = candidates
        .iter()
        .filter(|r| !std::ptr::eq(**r, best) && tied(r, best))
        .collect();
    if !tied_with.is_empty() {
        let _ = writeln!(
            out,
            "No measurable speed difference from {} (paired 95 % intervals hold 1.0): chosen \
             as the smallest of those.",
            tied_with
                .iter()
                .map(|r| format!(
                    "{} @ {}",
                    display_name(&r.filter, r.peer),
                    r.target_fpr.map(pct).unwrap_or_else(|| "fixed".into())
                ))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    if info(&best.filter).is_some_and(|i| !i.dynamic) {
        let _ = writeln!(
            out,
            "Note: {} is a static filter: it needs all keys up front — it is built once from \
             the complete key set and takes no inserts afterwards (a change means a rebuild). \
             If keys arrive over time, take the first dynamic option below.",
            best.filter
        );
    }
    let mut others: Vec<&&Row> = candidates
        .iter()
        .filter(|r| !std::ptr::eq(**r, best))
        .collect();
    others.sort_by(|a, b| ns50(a).total_cmp(&ns50(b)));
    if !others.is_empty() {
        let _ = writeln!(out, "Other options that meet the needs, fastest first:");
        for r in others.iter().take(4) {
            let _ = writeln!(
                out,
                "  - {} @ {}: ε = {}, {:.2} bits/item ({}), {:.1} ns/op",
                display_name(&r.filter, r.peer),
                r.target_fpr.map(pct).unwrap_or_else(|| "fixed".into()),
                pct(r.measured_fpr),
                r.bits_per_item,
                mib(project(r)),
                ns50(r)
            );
        }
    }
    Ok(Recommendation {
        filter: best.filter.clone(),
        row: (*best).clone(),
        projected_bytes: bytes,
        explanation: out,
    })
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
            r.target_fpr.map(pct).unwrap_or_else(|| "fixed".into()),
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
