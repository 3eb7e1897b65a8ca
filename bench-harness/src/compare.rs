//! `compare A.json B.json`: what changed between two runs, flagged only beyond noise.
//!
//! For each filter × size × target measured in both runs: every lookup ratio (to `blocked`
//! and to the fastest peer, per mix), bits/item and the measured FPR. Absolute ns/op are not
//! compared: they move with the machine; ratios taken within one run do not. A change is
//! flagged only when it lies outside both runs' intervals: B's value outside A's 95 %
//! interval and A's outside B's. bits/item carry no interval (the heap bytes are exact), so
//! any change in them is flagged. With `--fail-above PCT` the command exits non-zero when a
//! flagged change exceeds PCT %, so it can guard a branch.

use std::fmt::Write as _;

use crate::report::{pct, size_label};
use crate::schema::{Results, Row};
use crate::stats::Interval;

/// One compared figure.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// `filter n=… target=…`.
    pub what: String,
    /// Which figure (`×blocked 50 %`, `bits/item`, `FPR`).
    pub figure: String,
    /// Value in A.
    pub a: Interval,
    /// Value in B.
    pub b: Interval,
    /// (B − A) / A.
    pub rel: f64,
    /// Outside both runs' intervals.
    pub flagged: bool,
}

fn key(r: &Row) -> String {
    format!(
        "{} n={} target={}",
        r.filter,
        size_label(r.n),
        r.target_fpr.map(pct).unwrap_or_else(|| "fixed".into())
    )
}

fn change(what: &str, figure: String, a: Interval, b: Interval) -> Change {
    let rel = if a.mid == 0.0 {
        if b.mid == 0.0 { 0.0 } else { f64::INFINITY }
    } else {
        (b.mid - a.mid) / a.mid
    };
    let flagged = !a.contains(b.mid) && !b.contains(a.mid);
    Change {
        what: what.to_string(),
        figure,
        a,
        b,
        rel,
        flagged,
    }
}

/// Every figure of rows present in both runs.
pub fn compare(a: &Results, b: &Results) -> Vec<Change> {
    let mut out = Vec::new();
    for ra in &a.rows {
        let Some(rb) = b.rows.iter().find(|x| key(x) == key(ra)) else {
            continue;
        };
        let what = key(ra);
        for la in &ra.lookups {
            let Some(lb) = rb.lookup(la.positive_pct) else {
                continue;
            };
            if let (Some(x), Some(y)) = (la.blocked_ratio, lb.blocked_ratio) {
                if ra.filter != "blocked" {
                    out.push(change(
                        &what,
                        format!("×blocked {} %", la.positive_pct),
                        x,
                        y,
                    ));
                }
            }
            if let (Some(x), Some(y)) = (la.peer_ratio, lb.peer_ratio) {
                if la.peer == lb.peer && la.peer.as_deref() != Some(ra.filter.as_str()) {
                    out.push(change(
                        &what,
                        format!(
                            "×{} {} %",
                            la.peer.as_deref().unwrap_or("peer"),
                            la.positive_pct
                        ),
                        x,
                        y,
                    ));
                }
            }
        }
        out.push(change(
            &what,
            "bits/item".into(),
            Interval::exact(ra.bits_per_item),
            Interval::exact(rb.bits_per_item),
        ));
        out.push(change(&what, "FPR".into(), ra.fpr_ci, rb.fpr_ci));
    }
    out
}

/// The report, and whether a flagged change exceeds `fail_above_pct` (if given).
pub fn report(changes: &[Change], fail_above_pct: Option<f64>) -> (String, bool) {
    let mut s = String::new();
    let flagged: Vec<&Change> = changes.iter().filter(|c| c.flagged).collect();
    let _ = writeln!(
        s,
        "{} figures compared (lookup ratios, bits/item, FPR); {} changed beyond both runs' 95 % intervals.",
        changes.len(),
        flagged.len()
    );
    let mut fail = false;
    if !flagged.is_empty() {
        let _ = writeln!(
            s,
            "\n| filter × size × target | figure | A [95 %] | B [95 %] | change |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|");
        for c in &flagged {
            let over = fail_above_pct.is_some_and(|t| c.rel.abs() * 100.0 > t);
            fail |= over;
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {:+.1} %{} |",
                c.what,
                c.figure,
                c.a.show(4),
                c.b.show(4),
                c.rel * 100.0,
                if over { " FAIL" } else { "" }
            );
        }
    }
    if let Some(t) = fail_above_pct {
        let _ = writeln!(
            s,
            "\n{}",
            if fail {
                format!("FAIL: a flagged change exceeds {t} %.")
            } else {
                format!("OK: no flagged change exceeds {t} %.")
            }
        );
    }
    (s, fail)
}
