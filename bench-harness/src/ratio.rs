//! `bench-harness ratio A/B …`: the paired lookup ratio of two entries of one results file, at
//! every size — the median of the per-round ratios (both timed in the same round; per CPU,
//! then their geometric mean, where the rounds moved across CPUs) with its 95 % bootstrap
//! interval, the same statistic as the tables' ×blocked and ×peer columns, for
//! pairs those columns do not show (our split-block filter against its like-for-like peer,
//! classic against fastbloom, keyed against keyed).

use crate::error::Error;
use std::fmt::Write as _;

use crate::labels::size_label;
use crate::schema::{Results, Row};

/// The row of `filter` at size `n` for target `fpr` (a fixed-parameter entry stands in for any
/// target).
fn row<'a>(r: &'a Results, filter: &str, n: u64, fpr: f64) -> Option<&'a Row> {
    r.rows.iter().find(|x| {
        x.filter == filter && x.n == n && x.target_fpr.is_none_or(|t| (t - fpr).abs() < 1e-12)
    })
}

/// A Markdown table: one line per `A/B` pair, one column per size in the file.
pub fn table(r: &Results, pairs: &[String], fpr: f64, hits: u32) -> Result<String, Error> {
    let mut sizes: Vec<u64> = r.rows.iter().map(|x| x.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "Paired lookup ratios at {} % target, {hits} % members (median of per-round ratios, per CPU the rounds ran on, then their geometric mean [95 % bootstrap interval]):\n",
        fpr * 100.0
    );
    let head: Vec<String> = sizes
        .iter()
        .map(|&n| format!("n = {}", size_label(n)))
        .collect();
    let _ = writeln!(s, "| ratio | {} |", head.join(" | "));
    let _ = writeln!(s, "|---|{}", "---|".repeat(sizes.len()));
    for p in pairs {
        let (a, b) = p
            .split_once('/')
            .ok_or_else(|| Error::usage(format!("{p:?}: write a pair as A/B")))?;
        for f in [a, b] {
            if !r.rows.iter().any(|x| x.filter == f) {
                return Err(Error::usage(format!("{f:?} is not in these results")));
            }
        }
        let cells: Vec<String> = sizes
            .iter()
            .map(|&n| {
                let pair = row(r, a, n, fpr).zip(row(r, b, n, fpr));
                let cell =
                    pair.and_then(|(x, y)| x.ratio_to(y, hits).map(|q| (q, x.group != y.group)));
                match cell {
                    Some((q, unpaired)) => {
                        let tie = if q.contains(1.0) {
                            " (no measurable difference)"
                        } else {
                            ""
                        };
                        let how = if unpaired {
                            " (unpaired: timed in different rounds)"
                        } else {
                            ""
                        };
                        format!("{:.2} [{:.2}–{:.2}]{tie}{how}", q.mid, q.lo, q.hi)
                    }
                    _ => "—".into(),
                }
            })
            .collect();
        let _ = writeln!(s, "| {a} / {b} | {} |", cells.join(" | "));
    }
    Ok(s)
}
