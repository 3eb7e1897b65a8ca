//! `compare A.json B.json`: what changed between two runs, flagged only beyond noise.
//!
//! For each filter × size × target measured in both runs: every lookup ratio (to `blocked`
//! and to the fastest peer, per mix), bits/item and the measured FPR. Absolute ns/op are not
//! compared: they move with the machine; ratios taken within one run do not.
//!
//! # When a change is flagged
//! Two conditions, both required:
//! 1. it lies outside both runs' intervals: B's value outside A's 95 % interval and A's
//!    outside B's;
//! 2. it survives a test of the difference that holds its error rate over the whole
//!    comparison, not per figure: each figure's standard error is read back from its 95 %
//!    interval (half its width ÷ 1.96, on a log scale for ratios, which are positive and
//!    multiplicative; on the rate itself for FPRs), z = (B − A) / √(se_A² + se_B²), and the
//!    two-sided p-values of all compared figures go through Holm's step-down procedure at
//!    a family-wise 5 %.
//!
//! Condition 1 alone is not a test: with honest 95 % intervals of equal width, two runs of
//! the same code differ by more than one interval's half-width — B outside A's interval
//! and A outside B's — whenever |z| > 1.96 / √2 = 1.39, i.e. for 16 % of the figures; three
//! repeat runs at the previous design flagged 19–37 of 250 figures (8–15 %), just that.
//! With the Holm step, repeat runs whose intervals are honest flag nothing at least 95 % of
//! the time, however many figures are compared, while a figure moved by several interval
//! widths (z ≳ 4 for 250 figures) is still flagged.
//!
//! bits/item carry no interval (the heap bytes are exact), so any change in them is flagged.
//! With `--fail-above PCT` the command exits non-zero when a flagged change exceeds PCT %,
//! so it can guard a branch.

use std::fmt::Write as _;

use crate::labels::{size_label, target_label};
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
    /// Standardised difference (B − A) / √(se_A² + se_B²); infinite when the values differ
    /// and neither has an interval.
    pub z: f64,
    /// Outside both runs' intervals (condition 1 of the module docs).
    pub outside_both: bool,
    /// Outside both runs' intervals and significant at a family-wise 5 % (Holm) over
    /// every figure compared.
    pub flagged: bool,
}

/// Family-wise error rate of the Holm step.
pub const FAMILY_ALPHA: f64 = 0.05;

/// Standard error of an interval's middle, on a log scale when `log` (0 for a point).
fn se(i: &Interval, log: bool) -> f64 {
    let w = if log && i.lo > 0.0 && i.hi > 0.0 {
        i.hi.ln() - i.lo.ln()
    } else {
        i.hi - i.lo
    };
    (w / 2.0 / crate::stats::Z95).max(0.0)
}

/// Two-sided normal p-value of `z`.
fn p_two_sided(z: f64) -> f64 {
    if !z.is_finite() {
        return 0.0;
    }
    libm::erfc(z.abs() / std::f64::consts::SQRT_2).clamp(0.0, 1.0)
}

fn key(r: &Row) -> String {
    format!(
        "{} n={} target={}",
        r.filter,
        size_label(r.n),
        target_label(r.target_fpr)
    )
}

fn change(what: &str, figure: String, a: Interval, b: Interval, log: bool) -> Change {
    let rel = if a.mid == 0.0 {
        if b.mid == 0.0 { 0.0 } else { f64::INFINITY }
    } else {
        (b.mid - a.mid) / a.mid
    };
    let outside_both = !a.contains(b.mid) && !b.contains(a.mid);
    let log = log && a.mid > 0.0 && b.mid > 0.0;
    let d = if log {
        b.mid.ln() - a.mid.ln()
    } else {
        b.mid - a.mid
    };
    let s = se(&a, log).hypot(se(&b, log));
    let z = if d == 0.0 {
        0.0
    } else if s > 0.0 {
        d / s
    } else {
        d.signum() * f64::INFINITY
    };
    Change {
        what: what.to_string(),
        figure,
        a,
        b,
        rel,
        z,
        outside_both,
        flagged: false,
    }
}

/// Holm's step-down over every change: flag those outside both intervals whose test
/// rejects at a family-wise [`FAMILY_ALPHA`].
fn holm(changes: &mut [Change]) {
    let m = changes.len();
    let mut order: Vec<usize> = (0..m).collect();
    let p: Vec<f64> = changes.iter().map(|c| p_two_sided(c.z)).collect();
    order.sort_by(|&i, &j| p[i].total_cmp(&p[j]));
    for (rank, &i) in order.iter().enumerate() {
        if p[i] > FAMILY_ALPHA / (m - rank) as f64 {
            break;
        }
        changes[i].flagged = changes[i].outside_both;
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
            if let (Some(x), Some(y)) = (la.blocked_ratio, lb.blocked_ratio)
                && ra.filter != "blocked"
            {
                out.push(change(
                    &what,
                    format!("×blocked {} %", la.positive_pct),
                    x,
                    y,
                    true,
                ));
            }
            if let (Some(x), Some(y)) = (la.peer_ratio, lb.peer_ratio)
                && la.peer == lb.peer
                && la.peer.as_deref() != Some(ra.filter.as_str())
            {
                out.push(change(
                    &what,
                    format!(
                        "×{} {} %",
                        la.peer.as_deref().unwrap_or("peer"),
                        la.positive_pct
                    ),
                    x,
                    y,
                    true,
                ));
            }
        }
        out.push(change(
            &what,
            "bits/item".into(),
            Interval::exact(ra.bits_per_item),
            Interval::exact(rb.bits_per_item),
            false,
        ));
        out.push(change(&what, "FPR".into(), ra.fpr_ci, rb.fpr_ci, false));
    }
    holm(&mut out);
    out
}

/// The report, and whether a flagged change exceeds `fail_above_pct` (if given).
pub fn report(changes: &[Change], fail_above_pct: Option<f64>) -> (String, bool) {
    let mut s = String::new();
    let flagged: Vec<&Change> = changes.iter().filter(|c| c.flagged).collect();
    let _ = writeln!(
        s,
        "{} figures compared (lookup ratios, bits/item, FPR); {} outside both runs' 95 % \
         intervals, {} of them flagged: significant at a family-wise {:.0} % over all {} \
         figures (z from the intervals, Holm's step-down).",
        changes.len(),
        changes.iter().filter(|c| c.outside_both).count(),
        flagged.len(),
        FAMILY_ALPHA * 100.0,
        changes.len()
    );
    let mut fail = false;
    if !flagged.is_empty() {
        let _ = writeln!(
            s,
            "\n| filter × size × target | figure | A [95 %] | B [95 %] | change | z |"
        );
        let _ = writeln!(s, "|---|---|---|---|---|---|");
        for c in &flagged {
            let over = fail_above_pct.is_some_and(|t| c.rel.abs() * 100.0 > t);
            fail |= over;
            let _ = writeln!(
                s,
                "| {} | {} | {} | {} | {:+.1} %{} | {:+.1} |",
                c.what,
                c.figure,
                c.a.show(4),
                c.b.show(4),
                c.rel * 100.0,
                if over { " FAIL" } else { "" },
                c.z
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

#[cfg(test)]
mod known_answers;

#[cfg(test)]
mod tests {
    use super::*;

    fn ci(mid: f64, rel: f64) -> Interval {
        Interval {
            mid,
            lo: mid / (1.0 + rel),
            hi: mid * (1.0 + rel),
        }
    }

    #[test]
    fn outside_both_intervals_is_not_enough_among_many_figures() {
        // 250 figures, each ±10 %; one moved by 12 %: outside both intervals, but with
        // z ≈ 0.113 / (√2 · 0.0486) ≈ 1.6 it is what two runs of the same code show for
        // 16 % of their figures, so it is not flagged.
        let mut v: Vec<Change> = (0..250)
            .map(|i| change("f", format!("fig {i}"), ci(1.0, 0.1), ci(1.0, 0.1), true))
            .collect();
        v[7] = change("f", "moved".into(), ci(1.0, 0.1), ci(1.12, 0.1), true);
        holm(&mut v);
        assert!(v[7].outside_both && !v[7].flagged, "{:?}", v[7]);
        // Moved by 60 %: z ≈ 6.8, far beyond Holm's first threshold (p < 0.05 / 250).
        v[7] = change("f", "moved".into(), ci(1.0, 0.1), ci(1.6, 0.1), true);
        holm(&mut v);
        assert!(v[7].flagged, "{:?}", v[7]);
        assert_eq!(v.iter().filter(|c| c.flagged).count(), 1);
    }

    #[test]
    fn exact_figures_flag_any_change_and_p_values_are_normal() {
        let mut v = vec![change(
            "f",
            "bits/item".into(),
            Interval::exact(8.0),
            Interval::exact(8.01),
            false,
        )];
        holm(&mut v);
        assert!(v[0].flagged && v[0].z.is_infinite());
        assert!((p_two_sided(1.959_963_984_540_054) - 0.05).abs() < 1e-9);
        assert!((p_two_sided(0.0) - 1.0).abs() < 1e-12);
    }
}
