//! Small multiples: the lookup times as one dot plot per size, the FPR against bits/item in
//! one panel per family, and an experiment with many series in panels by family. Panels of
//! one figure share their axes; no legend holds more than [`super::MAX_LEGEND`] entries.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{
    Backend, FONT, Figure, FprAxes, PlotError, Section, err, experiment_panel, fpr_panel,
    fpr_plot_size, marker_element, style_index, style_of,
};
use crate::adapters::Curve;
use crate::choose::is_twin;
use crate::labels::{display_name, size_label};
use crate::schema::{Experiment, FilterInfo, Results, Row, Series};

/// Width of the multi-panel figures.
const WIDE: u32 = 1800;
/// Height of one row of panels.
const PANEL_H: u32 = 560;
/// Height of a dot-plot row (one filter).
const DOT_ROW: u32 = 22;

/// The family a filter's panel is named after: Bloom, cuckoo-like, static, growing (or
/// `None` for the exact baseline).
pub fn family(f: &FilterInfo) -> Option<&'static str> {
    if f.grows && f.kind != "exact" {
        return Some("growing");
    }
    match f.kind.as_str() {
        "bloom" | "counting" => Some("Bloom"),
        "cuckoo" | "quotient" => Some("cuckoo-like"),
        "static" | "xor" => Some("static"),
        _ => None,
    }
}

/// `items` grouped by family in the order Bloom, cuckoo-like, static, growing; a family whose
/// group would hold more than `room` items is split into ours and peers, then into chunks.
fn by_family<'a, T>(
    items: &[&'a T],
    info: impl Fn(&'a T) -> Option<&'a FilterInfo>,
    room: usize,
) -> Vec<(String, Vec<&'a T>)> {
    let mut out = Vec::new();
    for fam in ["Bloom", "cuckoo-like", "static", "growing"] {
        let of: Vec<&T> = items
            .iter()
            .copied()
            .filter(|x| info(*x).and_then(family) == Some(fam))
            .collect();
        let parts: Vec<(String, Vec<&T>)> = if of.len() <= room {
            vec![(fam.to_string(), of)]
        } else {
            let (peers, ours): (Vec<&T>, Vec<&T>) = of
                .iter()
                .copied()
                .partition(|x| info(*x).is_some_and(|f| f.peer));
            vec![
                (format!("{fam}: ours"), ours),
                (format!("{fam}: peers"), peers),
            ]
        };
        for (name, group) in parts {
            let chunks = group.len().div_ceil(room.max(1)).max(1);
            for (i, c) in group.chunks(room.max(1)).enumerate() {
                let label = if chunks > 1 {
                    format!("{name} ({}/{chunks})", i + 1)
                } else {
                    name.clone()
                };
                out.push((label, c.to_vec()));
            }
        }
    }
    out.retain(|(_, g)| !g.is_empty());
    out
}

/// Columns of a grid of `panels`.
fn cols(panels: usize) -> usize {
    if panels <= 1 {
        1
    } else if panels <= 4 {
        2
    } else {
        3
    }
}

/// Canvas size of a grid of `panels`.
pub fn grid_size(panels: usize) -> (u32, u32) {
    if panels <= 1 {
        return (1560, 800);
    }
    let rows = panels.div_ceil(cols(panels)) as u32;
    (WIDE, PANEL_H * rows + 60)
}

/// The figure's title and its key line above its panels; returns the area below them.
fn titled<DB: Backend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    key: &str,
) -> Result<DrawingArea<DB, Shift>, PlotError> {
    root.fill(&WHITE).map_err(err)?;
    root.draw(&Text::new(
        title.to_string(),
        (20, 10),
        (FONT, 24).into_font(),
    ))
    .map_err(err)?;
    root.draw(&Text::new(
        key.to_string(),
        (20, 42),
        (FONT, 16).into_font().color(&RGBColor(60, 60, 60)),
    ))
    .map_err(err)?;
    Ok(root.split_vertically(70).1)
}

/// The rows the lookup dot plots show at `n`: the 1 % target (or the one nearest it) and
/// fixed-parameter rows, each with a 50 % figure, fastest first.
fn dot_rows(results: &Results, n: u64) -> Vec<&Row> {
    let near = results.config.fprs.iter().copied().min_by(|a, b| {
        (a.ln() - 0.01f64.ln())
            .abs()
            .total_cmp(&(b.ln() - 0.01f64.ln()).abs())
    });
    let mut rows: Vec<&Row> = results
        .rows
        .iter()
        .filter(|r| r.n == n && r.target_fpr.is_none_or(|t| Some(t) == near))
        .filter(|r| r.lookup(50).is_some())
        .collect();
    rows.sort_by(|a, b| ns50(a).total_cmp(&ns50(b)));
    rows
}

fn ns50(r: &Row) -> f64 {
    r.lookup(50).map_or(f64::INFINITY, |l| l.ns)
}

fn sizes(results: &Results) -> Vec<u64> {
    let mut s: Vec<u64> = results.rows.iter().map(|r| r.n).collect();
    s.sort_unstable();
    s.dedup();
    s
}

/// Canvas size of the dot plots: one panel per size side by side, one row per filter.
pub fn dots_size(results: &Results) -> (u32, u32) {
    let most = sizes(results)
        .iter()
        .map(|&n| dot_rows(results, n).len())
        .max()
        .unwrap_or(1) as u32;
    (WIDE, (most * DOT_ROW + 200).max(500))
}

/// ns per lookup as dot plots, one panel per size: filters sorted by speed, each with its
/// 95 % interval, the memory floor and the dependent read as reference lines.
pub fn ns_dots<DB: Backend>(
    results: &Results,
    root: DrawingArea<DB, Shift>,
) -> Result<Figure, PlotError> {
    let title =
        "ns per lookup by size: 50 % members, the 1 % target or fixed parameters, fastest first";
    let key = "dot: median over the rounds; bar: its 95 % interval; filled: bloomlab, hollow: crates.io peer; dashed line: memory floor (independent random 64-byte read), dotted: dependent read";
    let mut fig = Figure::new("ns_per_op", "ns per lookup by size", Section::Overview);
    let body = titled(&root, title, key)?;
    let ns = sizes(results);
    let mut all: Vec<f64> = Vec::new();
    for &n in &ns {
        for r in dot_rows(results, n) {
            let l = r.lookup(50).expect("dot rows have a 50 % figure");
            all.extend([l.ns_ci.lo, l.ns_ci.hi]);
        }
    }
    all.extend(
        results
            .size_floors
            .iter()
            .flat_map(|f| [f.ns, f.dependent_ns]),
    );
    let lo = all.iter().copied().fold(f64::INFINITY, f64::min).max(0.05) / 1.3;
    let hi = all.iter().copied().fold(1.0f64, f64::max) * 1.3;
    let areas = body.split_evenly((1, ns.len().max(1)));
    for (&n, area) in ns.iter().zip(&areas) {
        dot_panel(results, n, (lo, hi), area)?;
        fig.legends.push(4);
    }
    root.present().map_err(err)?;
    Ok(fig)
}

fn dot_panel<DB: Backend>(
    results: &Results,
    n: u64,
    (lo, hi): (f64, f64),
    area: &DrawingArea<DB, Shift>,
) -> Result<(), PlotError> {
    let rows = dot_rows(results, n);
    let k = rows.len().max(1) as f64;
    let mut chart = ChartBuilder::on(area)
        .caption(format!("n = {}", size_label(n)), (FONT, 20))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(230)
        .build_cartesian_2d((lo..hi).log_scale(), -0.6f64..(k - 0.4))
        .map_err(err)?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_desc("ns per lookup (log scale)")
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .draw()
        .map_err(err)?;
    let y = |i: usize| k - 1.0 - i as f64;
    if let Some(f) = results.size_floors.iter().find(|f| f.n == n) {
        for (x, dash, col) in [
            (f.ns, 8, BLACK),
            (f.dependent_ns, 3, RGBColor(120, 120, 120)),
        ] {
            chart
                .draw_series(DashedLineSeries::new(
                    [(x, -0.6), (x, k - 0.4)],
                    dash,
                    4,
                    col.stroke_width(2),
                ))
                .map_err(err)?;
        }
    }
    let name_style = (FONT, 13)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Right, VPos::Center));
    for (i, r) in rows.iter().enumerate() {
        let l = r.lookup(50).expect("dot rows have a 50 % figure");
        let (col, mk) = style_of(style_index(&r.filter));
        let style = if r.peer {
            col.stroke_width(2)
        } else {
            col.filled()
        };
        chart
            .draw_series(std::iter::once(ErrorBar::new_horizontal(
                y(i),
                l.ns_ci.lo,
                l.ns,
                l.ns_ci.hi,
                col.stroke_width(1),
                6,
            )))
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(marker_element(mk, (l.ns, y(i)), 5, style)))
            .map_err(err)?;
        let (px, py) = chart.backend_coord(&(lo, y(i)));
        let name = match r.target_fpr {
            Some(_) => display_name(&r.filter, r.peer),
            None => format!("{} (fixed)", display_name(&r.filter, r.peer)),
        };
        let (bx, by) = area.get_base_pixel();
        area.draw(&Text::new(
            format!("{name}  {:.1}", l.ns),
            (px - bx - 8, py - by),
            name_style.clone(),
        ))
        .map_err(err)?;
    }
    Ok(())
}

/// Canvas size of the FPR figure.
pub fn fpr_size(results: &Results) -> (u32, u32) {
    grid_size(fpr_groups(results).len())
}

/// The FPR panels: at the plotted size, every non-twin row with a measured FPR above 0,
/// grouped by family, each group small enough for its legend.
fn fpr_groups(results: &Results) -> Vec<(String, Vec<&Row>)> {
    let Some(n) = fpr_plot_size(results) else {
        return Vec::new();
    };
    let info = |r: &Row| results.filters.iter().find(|f| f.name == r.filter);
    let rows: Vec<&Row> = results
        .rows
        .iter()
        .filter(|r| r.n == n && r.measured_fpr > 0.0)
        .filter(|r| info(r).is_some_and(|f| !is_twin(f, &results.filters)))
        .collect();
    let names = |g: &[&Row]| {
        let mut v: Vec<&str> = g.iter().map(|r| r.filter.as_str()).collect();
        v.dedup();
        v.len()
    };
    // Room for filters: the legend also holds the lower bound and up to two curves.
    let room = super::MAX_LEGEND - 3;
    let mut filters: Vec<&FilterInfo> = Vec::new();
    for r in &rows {
        if let Some(f) = info(r)
            && !filters.iter().any(|g| g.name == f.name)
        {
            filters.push(f);
        }
    }
    let groups = by_family(&filters, Some, room);
    let out: Vec<(String, Vec<&Row>)> = groups
        .into_iter()
        .map(|(name, fs)| {
            let g: Vec<&Row> = rows
                .iter()
                .copied()
                .filter(|r| fs.iter().any(|f| f.name == r.filter))
                .collect();
            (name, g)
        })
        .collect();
    debug_assert!(out.iter().all(|(_, g)| names(g) <= room));
    out
}

/// Measured FPR against bits/item, one panel per family with its theory lines, shared axes.
pub fn fpr_families<DB: Backend>(
    results: &Results,
    root: DrawingArea<DB, Shift>,
) -> Result<Figure, PlotError> {
    let n = fpr_plot_size(results).unwrap_or(0);
    let title = format!(
        "Measured FPR against bits/item at n = {}, one panel per family, each with its theory",
        size_label(n)
    );
    let key = "every target of the run; keyed, batched and atomic twins left out (their FPR is their plain entry's); hollow: crates.io peer; bars: 95 % Wilson interval";
    let mut fig = Figure::new("fpr_vs_bits", "FPR against bits/item", Section::Overview);
    let body = titled(&root, &title, key)?;
    let groups = fpr_groups(results);
    let all: Vec<&Row> = groups.iter().flat_map(|(_, g)| g.iter().copied()).collect();
    let ax = FprAxes::of(&all);
    let c = cols(groups.len());
    let areas = body.split_evenly((groups.len().div_ceil(c).max(1), c));
    for ((name, rows), area) in groups.iter().zip(&areas) {
        let mut curves: Vec<Curve> = Vec::new();
        for f in &results.filters {
            if let Some(cv) = f.curve
                && !curves.contains(&cv)
                && rows.iter().any(|r| r.filter == f.name)
            {
                curves.push(cv);
            }
        }
        curves.truncate(2);
        fig.legends.push(fpr_panel(rows, &curves, name, ax, area)?);
    }
    root.present().map_err(err)?;
    Ok(fig)
}

/// An experiment's panels: one panel of every series when its legend fits, else the
/// series of non-twin filters by family (the twins stay in the CSV and the tables).
pub fn experiment_groups<'a>(
    ex: &'a Experiment,
    filters: &'a [FilterInfo],
) -> Vec<(String, Vec<&'a Series>)> {
    let theory = usize::from(
        ex.series
            .iter()
            .any(|s| s.points.iter().any(|p| p.theory.is_some())),
    );
    let all: Vec<&Series> = ex.series.iter().collect();
    if all.len() + theory <= super::MAX_LEGEND {
        return vec![(ex.title.clone(), all)];
    }
    let info = |s: &'a Series| filters.iter().find(|f| f.name == s.filter);
    let plain: Vec<&Series> = all
        .into_iter()
        .filter(|s| info(s).is_some_and(|f| !is_twin(f, filters)))
        .collect();
    by_family(&plain, info, super::MAX_LEGEND - theory)
}

/// An experiment's figure: its panels in a grid under its title.
pub fn experiment_figure<DB: Backend>(
    ex: &Experiment,
    groups: &[(String, Vec<&Series>)],
    root: DrawingArea<DB, Shift>,
) -> Result<Figure, PlotError> {
    let mut fig = Figure::new(
        format!("experiment_{}", ex.name),
        ex.title.clone(),
        Section::Experiment(ex.name.clone()),
    );
    if groups.len() <= 1 {
        root.fill(&WHITE).map_err(err)?;
        let all: Vec<&Series> = groups.first().map(|g| g.1.clone()).unwrap_or_default();
        fig.legends
            .push(experiment_panel(ex, &all, &ex.title, 0.26, &root)?);
    } else {
        let body = titled(
            &root,
            &ex.title,
            "one panel per family; keyed, batched and atomic twins left out here (they are in the table and the CSV)",
        )?;
        let c = cols(groups.len());
        let areas = body.split_evenly((groups.len().div_ceil(c), c));
        for ((name, series), area) in groups.iter().zip(&areas) {
            fig.legends
                .push(experiment_panel(ex, series, name, 0.36, area)?);
        }
    }
    root.present().map_err(err)?;
    Ok(fig)
}
