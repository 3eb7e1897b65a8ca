//! The report's tables: cells with the text shown and the number they sort by.

use serde::Serialize;

use crate::labels::{axis_label, bytes_label, display_name, pct, size_label};
use crate::report::pm;
use crate::schema::{Experiment, Results, Row};

/// One cell: what it shows and, for numbers, the value it sorts by.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cell {
    /// The text shown.
    pub text: String,
    /// The number the column sorts by (`None`: by the text).
    pub sort: Option<f64>,
}

impl Cell {
    fn text(t: impl Into<String>) -> Self {
        Cell {
            text: t.into(),
            sort: None,
        }
    }

    fn num(t: impl Into<String>, v: f64) -> Self {
        Cell {
            text: t.into(),
            sort: v.is_finite().then_some(v),
        }
    }
}

/// A sortable table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Table {
    /// Its element id.
    pub id: String,
    /// Its heading.
    pub title: String,
    /// Column headings.
    pub head: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<Cell>>,
}

fn main_row(r: &Row) -> Vec<Cell> {
    let ns = |p: u32| match r.lookup(p) {
        Some(l) => Cell::num(pm(&l.ns_ci, 1), l.ns),
        None => Cell::text("—"),
    };
    let blocked = r.lookup(50).and_then(|l| l.blocked_ratio);
    vec![
        Cell::text(display_name(&r.filter, r.peer)),
        match r.target_fpr {
            Some(t) => Cell::num(pct(t), t),
            None => Cell::text("fixed"),
        },
        Cell::num(format!("{:.2}", r.bits_per_item), r.bits_per_item),
        Cell::num(
            format!(
                "{} [{}–{}]",
                pct(r.measured_fpr),
                pct(r.fpr_ci.lo),
                pct(r.fpr_ci.hi)
            ),
            r.measured_fpr,
        ),
        ns(0),
        ns(50),
        ns(100),
        match blocked {
            Some(i) => Cell::num(format!("{:.2} [{:.2}–{:.2}]", i.mid, i.lo, i.hi), i.mid),
            None => Cell::text("—"),
        },
        Cell::num(
            format!(
                "{} ({})",
                bytes_label(r.heap_bytes),
                crate::schema::residence(r.bytes_over_llc)
            ),
            r.heap_bytes as f64,
        ),
        Cell::num(pm(&r.build_ci, 1), r.build_ns_per_item),
    ]
}

/// The main table at each size, then the memory floors.
pub fn main(results: &Results) -> Vec<Table> {
    let mut sizes: Vec<u64> = results.rows.iter().map(|r| r.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    let head: Vec<String> = [
        "filter",
        "target",
        "bits/item",
        "measured ε [95 %]",
        "ns/op 0 %",
        "ns/op 50 %",
        "ns/op 100 %",
        "× blocked (50 %) [95 %]",
        "heap (residence)",
        "build ns/key",
    ]
    .map(String::from)
    .to_vec();
    let mut out: Vec<Table> = sizes
        .iter()
        .map(|&n| Table {
            id: format!("main-{n}"),
            title: format!("Every filter at n = {}", size_label(n)),
            head: head.clone(),
            rows: results
                .rows
                .iter()
                .filter(|r| r.n == n)
                .map(main_row)
                .collect(),
        })
        .collect();
    out.push(Table {
        id: "floors".into(),
        title: "Memory floor per size".into(),
        head: [
            "n",
            "buffer",
            "ns per independent random 64-byte read",
            "ns per dependent read",
        ]
        .map(String::from)
        .to_vec(),
        rows: results
            .size_floors
            .iter()
            .map(|f| {
                vec![
                    Cell::num(size_label(f.n), f.n as f64),
                    Cell::num(bytes_label(f.bytes), f.bytes as f64),
                    Cell::num(format!("{:.2}", f.ns), f.ns),
                    Cell::num(format!("{:.2}", f.dependent_ns), f.dependent_ns),
                ]
            })
            .collect(),
    });
    out
}

/// An experiment's table: one row per series, one column per x, each cell the measured
/// value (with its interval where it has one) and the theory in brackets.
pub fn experiment(ex: &Experiment) -> Table {
    let mut xs: Vec<f64> = ex
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.x))
        .collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let fmt = |v: f64| {
        if ex.y_is_rate {
            pct(v)
        } else {
            format!("{v:.2}")
        }
    };
    let mut head = vec!["series".to_string()];
    head.extend(
        xs.iter()
            .map(|x| format!("{} = {}", ex.x_label, axis_label(*x))),
    );
    head.push("note".into());
    let rows = ex
        .series
        .iter()
        .map(|s| {
            let mut row = vec![Cell::text(s.label.clone())];
            for x in &xs {
                row.push(match s.points.iter().find(|p| p.x == *x) {
                    Some(p) => {
                        let ci = p.ci.map(|c| format!(" [{}–{}]", fmt(c.lo), fmt(c.hi)));
                        let th = p.theory.map(|t| format!(" ({})", fmt(t)));
                        Cell::num(
                            format!(
                                "{}{}{}",
                                fmt(p.y),
                                ci.unwrap_or_default(),
                                th.unwrap_or_default()
                            ),
                            p.y,
                        )
                    }
                    None => Cell::text("—"),
                });
            }
            row.push(Cell::text(s.note.clone()));
            row
        })
        .collect();
    Table {
        id: format!("table-{}", ex.name),
        title: ex.title.clone(),
        head,
        rows,
    }
}
