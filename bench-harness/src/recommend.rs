//! `recommend`: pick a structure from measured results, not from a table of opinions.
//!
//! For the requested n and FPR: use the measured size closest to n (on a log scale) and
//! project memory as measured bits/item × n. An exact set wins when it fits the memory budget
//! (or, with no budget, when it needs at most [`SMALL_SET_BYTES`]): then exactness costs
//! nothing worth saving. Otherwise the candidates are the filters with the needed
//! capabilities whose *measured* FPR meets the target (with a small statistical margin) and
//! whose projected memory fits the budget; the fastest at a 50 % positive mix wins, ties to
//! the smaller. With no candidate the answer is a refusal that says what failed.

use std::fmt::Write as _;

use crate::report::{display_name, pct, size_label};
use crate::schema::{Results, Row};

/// With no budget, an exact set this small is recommended outright.
pub const SMALL_SET_BYTES: f64 = 1024.0 * 1024.0;

/// Relative slack on the measured FPR (measurement noise at 10^6 probes is about ±3 % at 1 %).
pub const FPR_MARGIN: f64 = 0.10;

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
    let mut rejected = Vec::new();
    let mut candidates: Vec<&Row> = Vec::new();
    for r in rows.iter().filter(|r| r.kind != "exact") {
        let Some(i) = info(&r.filter) else { continue };
        let why = if needs.deletes && !i.deletes {
            Some("no deletes".to_string())
        } else if needs.grows && !i.grows {
            Some("does not grow".to_string())
        } else if needs.hostile_keys && !i.keyed {
            Some("unkeyed hash".to_string())
        } else if r.measured_fpr > needs.fpr * (1.0 + FPR_MARGIN) {
            Some(format!("measured {}", pct(r.measured_fpr)))
        } else if r.false_negatives > 0 || r.refused_inserts > 0 {
            Some("refused inserts or lost keys".to_string())
        } else if budget.is_some_and(|b| project(r) > b) {
            Some(format!("needs {}", mib(project(r))))
        } else {
            None
        };
        match why {
            Some(w) => rejected.push(format!(
                "{} @ {}: {w}",
                display_name(&r.filter, r.peer),
                r.target_fpr.map(pct).unwrap_or_else(|| "fixed".into())
            )),
            None => candidates.push(r),
        }
    }
    candidates.sort_by(|a, b| {
        ns50(a)
            .total_cmp(&ns50(b))
            .then(a.bits_per_item.total_cmp(&b.bits_per_item))
    });
    let Some(best) = candidates.first() else {
        rejected.dedup();
        return Err(format!(
            "{out}No measured option meets these needs. Rejected: {}.",
            if rejected.is_empty() {
                "nothing was measured at this size".to_string()
            } else {
                rejected.join("; ")
            }
        ));
    };
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
    if info(&best.filter).is_some_and(|i| !i.dynamic) {
        let _ = writeln!(
            out,
            "Note: {} is static: it is built once from the complete key set and takes no \
             inserts afterwards. If keys arrive over time, take the first dynamic option below.",
            best.filter
        );
    }
    if candidates.len() > 1 {
        let _ = writeln!(out, "Other options that meet the needs, fastest first:");
        for r in candidates.iter().skip(1).take(4) {
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
