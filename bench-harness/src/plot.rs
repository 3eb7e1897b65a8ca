//! Plots from a results JSON (SVG and PNG). Text uses DejaVu Sans embedded from the `dejavu`
//! crate through plotters' `ab_glyph` backend, so no system font library is needed.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::element::{Drawable, PointCollection};
use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::ShapeStyle;
use plotters_backend::{BackendCoord, DrawingErrorKind};

use crate::adapters::Curve;
use crate::report::{display_name, size_label};
use crate::schema::{Experiment, Results, Row};

const W: u32 = 1200;
const H: u32 = 800;
const FONT: &str = "sans-serif";

type SvgDraw<'a> = &'a dyn for<'b> Fn(DrawingArea<SVGBackend<'b>, Shift>) -> Result<(), String>;
type PngDraw<'a> = &'a dyn for<'b> Fn(DrawingArea<BitMapBackend<'b>, Shift>) -> Result<(), String>;

fn register_font() -> Result<(), String> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        result = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular())
            .map_err(|_| "embedded DejaVu Sans is not a valid font".to_string());
    });
    result
}

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("plot: {e:?}")
}

/// 30 distinguishable colours: Tableau 10, its light tier, then ten of Kelly's colours of
/// maximum contrast. Index = the filter's position in the registry, so a filter keeps its
/// colour (and marker) in every plot.
const PALETTE: [(u8, u8, u8); 30] = [
    (31, 119, 180),
    (255, 127, 14),
    (44, 160, 44),
    (214, 39, 40),
    (148, 103, 189),
    (140, 86, 75),
    (227, 119, 194),
    (127, 127, 127),
    (188, 189, 34),
    (23, 190, 207),
    (174, 199, 232),
    (255, 187, 120),
    (152, 223, 138),
    (255, 152, 150),
    (197, 176, 213),
    (196, 156, 148),
    (247, 182, 210),
    (199, 199, 199),
    (219, 219, 141),
    (158, 218, 229),
    (243, 195, 0),
    (0, 136, 86),
    (190, 0, 50),
    (0, 103, 165),
    (96, 78, 151),
    (136, 45, 23),
    (141, 182, 0),
    (43, 61, 38),
    (230, 143, 172),
    (101, 69, 34),
];

/// Marker shapes, one per tier of ten colours.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    /// A circle.
    Circle,
    /// A triangle.
    Triangle,
    /// A square.
    Square,
}

/// The colour and marker of a filter: fixed by its registry position (names the registry
/// does not know get the slots after it, in order of appearance).
pub fn style_index(name: &str) -> usize {
    thread_local! {
        static EXTRA: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    let reg = crate::adapters::registry();
    if let Some(i) = reg.iter().position(|e| e.info.name == name) {
        return i;
    }
    EXTRA.with(|x| {
        let mut x = x.borrow_mut();
        let at = x.iter().position(|n| n == name).unwrap_or_else(|| {
            x.push(name.to_string());
            x.len() - 1
        });
        reg.len() + at
    })
}

/// Colour and marker of slot `i`.
pub fn style_of(i: usize) -> (RGBColor, Marker) {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    let marker = match (i / 10) % 3 {
        0 => Marker::Circle,
        1 => Marker::Triangle,
        _ => Marker::Square,
    };
    (RGBColor(r, g, b), marker)
}

/// Per plot: each series gets its filter's slot, or the next free slot if that filter
/// already has a series in this plot, so no two series of a plot share a colour.
#[derive(Debug, Default)]
struct Styler(Vec<usize>);

impl Styler {
    fn slot(&mut self, filter: &str) -> (RGBColor, Marker) {
        let mut i = style_index(filter);
        while self.0.contains(&i) {
            i = (i + 1) % PALETTE.len().max(i + 1);
            if self.0.len() >= PALETTE.len() {
                break;
            }
        }
        self.0.push(i);
        style_of(i)
    }
}

/// One marker of any [`Marker`] shape, as a single drawable type (so a series' shape can be
/// chosen at run time).
#[derive(Clone, Debug)]
struct Mark<C> {
    at: C,
    shape: Marker,
    size: i32,
    style: ShapeStyle,
}

impl<'a, C> PointCollection<'a, C> for &'a Mark<C> {
    type Point = &'a C;
    type IntoIter = std::iter::Once<&'a C>;
    fn point_iter(self) -> Self::IntoIter {
        std::iter::once(&self.at)
    }
}

impl<C, DB: DrawingBackend> Drawable<DB> for Mark<C> {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut pos: I,
        backend: &mut DB,
        _: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let Some((x, y)) = pos.next() else {
            return Ok(());
        };
        let r = self.size;
        let corners: Vec<BackendCoord> = match self.shape {
            Marker::Circle => {
                return backend.draw_circle((x, y), r as u32, &self.style, self.style.filled);
            }
            Marker::Triangle => vec![(x, y - r - 1), (x + r + 1, y + r), (x - r - 1, y + r)],
            Marker::Square => vec![
                (x - r, y - r),
                (x + r, y - r),
                (x + r, y + r),
                (x - r, y + r),
            ],
        };
        if self.style.filled {
            backend.fill_polygon(corners, &self.style)
        } else {
            let mut closed = corners.clone();
            closed.push(corners[0]);
            backend.draw_path(closed, &self.style)
        }
    }
}

fn marker_element<C>(shape: Marker, at: C, size: i32, style: ShapeStyle) -> Mark<C> {
    Mark {
        at,
        shape,
        size,
        style,
    }
}

fn legend_marker(shape: Marker, at: (i32, i32), size: i32, style: ShapeStyle) -> Mark<(i32, i32)> {
    marker_element(shape, at, size, style)
}

/// Write every plot for `results` into `dir` (created if missing); returns the files written.
pub fn plot_all(results: &Results, dir: &Path) -> Result<Vec<PathBuf>, String> {
    register_font()?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files = Vec::new();
    let mut both = |name: &str, f: SvgDraw, g: PngDraw| -> Result<(), String> {
        let svg = dir.join(format!("{name}.svg"));
        f(SVGBackend::new(&svg, (W, H)).into_drawing_area())?;
        let png = dir.join(format!("{name}.png"));
        g(BitMapBackend::new(&png, (W, H)).into_drawing_area())?;
        files.push(svg);
        files.push(png);
        Ok(())
    };
    both("fpr_vs_bits", &|a| fpr_vs_bits(results, a), &|a| {
        fpr_vs_bits(results, a)
    })?;
    both("ns_per_op", &|a| ns_per_op(results, a), &|a| {
        ns_per_op(results, a)
    })?;
    for ex in &results.experiments {
        both(
            &format!("experiment_{}", ex.name),
            &|a| experiment(ex, a),
            &|a| experiment(ex, a),
        )?;
    }
    Ok(files)
}

/// The size whose rows the FPR plot shows: 10^6 if measured, else the largest ≤ 10^6, else the
/// smallest.
fn fpr_plot_size(results: &Results) -> Option<u64> {
    let mut sizes: Vec<u64> = results.rows.iter().map(|r| r.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    sizes
        .iter()
        .rev()
        .find(|&&n| n <= 1_000_000)
        .or(sizes.first())
        .copied()
}

fn names_in_order(rows: &[&Row]) -> Vec<(String, bool)> {
    let mut v: Vec<(String, bool)> = Vec::new();
    for r in rows {
        if !v.iter().any(|(n, _)| *n == r.filter) {
            v.push((r.filter.clone(), r.peer));
        }
    }
    v
}

fn fpr_vs_bits<DB: DrawingBackend>(
    results: &Results,
    root: DrawingArea<DB, Shift>,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let Some(n) = fpr_plot_size(results) else {
        return root.present().map_err(err);
    };
    let rows: Vec<&Row> = results
        .rows
        .iter()
        .filter(|r| r.n == n && r.measured_fpr > 0.0)
        .collect();
    let max_bits = rows
        .iter()
        .map(|r| r.bits_per_item)
        .fold(16.0f64, f64::max)
        .min(64.0)
        + 2.0;
    let min_fpr = rows.iter().map(|r| r.measured_fpr).fold(1e-3f64, f64::min) / 3.0;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "Measured FPR vs bits/item at n = {} (hollow = crates.io peer; bars = 95 % interval)",
                size_label(n)
            ),
            (FONT, 26),
        )
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..max_bits, (min_fpr..1f64).log_scale())
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("bits per item (real heap bytes × 8 / n)")
        .y_desc("false-positive rate")
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 18))
        .y_label_formatter(&|y| format!("{y:.0e}"))
        .draw()
        .map_err(err)?;

    let xs: Vec<f64> = (1..=400).map(|i| i as f64 * max_bits / 400.0).collect();
    chart
        .draw_series(DashedLineSeries::new(
            xs.iter()
                .map(|&b| (b, 2f64.powf(-b)))
                .filter(|&(_, y)| y >= min_fpr),
            6,
            4,
            BLACK.stroke_width(2),
        ))
        .map_err(err)?
        .label("lower bound: b = log2(1/ε)")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(2)));
    let mut curves: Vec<Curve> = Vec::new();
    for f in &results.filters {
        if let Some(c) = f.curve {
            if !curves.contains(&c) && rows.iter().any(|r| r.filter == f.name) {
                curves.push(c);
            }
        }
    }
    for c in &curves {
        let col = match c {
            Curve::Bloom => RGBColor(60, 60, 60),
            Curve::Cuckoo => RGBColor(170, 140, 210),
            Curve::BinaryFuse => RGBColor(150, 150, 60),
            Curve::Quotient => RGBColor(230, 150, 200),
            Curve::Ribbon => RGBColor(40, 160, 120),
        };
        chart
            .draw_series(LineSeries::new(
                xs.iter()
                    .map(|&b| (b, c.fpr(b)))
                    .filter(|&(_, y)| y >= min_fpr && y <= 1.0),
                col.stroke_width(1),
            ))
            .map_err(err)?
            .label(c.label())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], col));
    }
    // Peers first (hollow rings), ours on top (smaller filled dots), so overlaps stay visible.
    let mut named = names_in_order(&rows);
    named.sort_by_key(|(_, peer)| !*peer);
    let mut styler = Styler::default();
    for (name, peer) in named {
        let (col, mk) = styler.slot(&name);
        let pts: Vec<&Row> = rows.iter().filter(|r| r.filter == name).copied().collect();
        let (style, radius) = if peer {
            (col.stroke_width(3), 8)
        } else {
            (col.filled(), 5)
        };
        // 95 % Wilson interval of each measured FPR.
        chart
            .draw_series(pts.iter().map(|r| {
                ErrorBar::new_vertical(
                    r.bits_per_item,
                    r.fpr_ci.lo.max(min_fpr),
                    r.measured_fpr,
                    r.fpr_ci.hi,
                    col.stroke_width(1),
                    8,
                )
            }))
            .map_err(err)?;
        chart
            .draw_series(
                pts.iter()
                    .map(|r| marker_element(mk, (r.bits_per_item, r.measured_fpr), radius, style)),
            )
            .map_err(err)?
            .label(display_name(&name, peer))
            .legend(move |(x, y)| legend_marker(mk, (x + 10, y), 6, style));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .label_font((FONT, 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

fn ns_per_op<DB: DrawingBackend>(
    results: &Results,
    root: DrawingArea<DB, Shift>,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    // One line per filter: its 1 % row (or its fixed-parameter row), 50 % positive lookups.
    let rows: Vec<&Row> = results
        .rows
        .iter()
        .filter(|r| r.target_fpr.is_none_or(|p| (p - 0.01).abs() < 1e-12))
        .collect();
    if rows.is_empty() {
        return root.present().map_err(err);
    }
    let (min_n, max_n) = rows
        .iter()
        .fold((u64::MAX, 0), |(a, b), r| (a.min(r.n), b.max(r.n)));
    let mut ys: Vec<f64> = rows
        .iter()
        .filter_map(|r| r.lookup(50).map(|l| l.ns))
        .collect();
    ys.extend(results.size_floors.iter().map(|f| f.ns));
    ys.extend(results.size_floors.iter().map(|f| f.dependent_ns));
    // Headroom above the data for the legend.
    let ymax = ys.iter().copied().fold(1.0f64, f64::max) * 40.0;
    let ymin = ys.iter().copied().fold(f64::INFINITY, f64::min).max(0.1) / 2.0;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "Lookup ns/op (50 % positive, 1 % target or fixed) vs n, 95 % intervals; dashed = memory floor",
            (FONT, 24),
        )
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(
            ((min_n as f64 / 1.5)..(max_n as f64 * 1.5)).log_scale(),
            (ymin..ymax).log_scale(),
        )
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_desc("n (items)")
        .y_desc("ns per lookup")
        .label_style((FONT, 16))
        .axis_desc_style((FONT, 18))
        .x_label_formatter(&|x| format!("{x:.0e}"))
        .draw()
        .map_err(err)?;
    let mut floors: Vec<(f64, f64)> = results
        .size_floors
        .iter()
        .map(|f| (f.n as f64, f.ns))
        .collect();
    floors.sort_by(|a, b| a.0.total_cmp(&b.0));
    chart
        .draw_series(DashedLineSeries::new(
            floors.clone(),
            8,
            5,
            BLACK.stroke_width(3),
        ))
        .map_err(err)?
        .label("memory floor: random 64-byte read, buffer = 1 % Bloom size")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], BLACK.stroke_width(3)));
    chart
        .draw_series(
            floors
                .iter()
                .map(|&p| Cross::new(p, 6, BLACK.stroke_width(2))),
        )
        .map_err(err)?;
    let mut chase: Vec<(f64, f64)> = results
        .size_floors
        .iter()
        .map(|f| (f.n as f64, f.dependent_ns))
        .collect();
    chase.sort_by(|a, b| a.0.total_cmp(&b.0));
    let grey = RGBColor(120, 120, 120);
    chart
        .draw_series(DashedLineSeries::new(chase, 3, 4, grey.stroke_width(2)))
        .map_err(err)?
        .label("dependent random read (latency, pointer chase), same buffer")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], grey.stroke_width(2)));
    let mut styler = Styler::default();
    for (name, peer) in names_in_order(&rows) {
        let (col, mk) = styler.slot(&name);
        let mut cis: Vec<(f64, f64, f64, f64)> = rows
            .iter()
            .filter(|r| r.filter == name)
            .filter_map(|r| {
                r.lookup(50)
                    .map(|l| (r.n as f64, l.ns_ci.lo, l.ns, l.ns_ci.hi))
            })
            .collect();
        cis.sort_by(|a, b| a.0.total_cmp(&b.0));
        let pts: Vec<(f64, f64)> = cis.iter().map(|c| (c.0, c.2)).collect();
        chart
            .draw_series(cis.iter().map(|&(x, lo, mid, hi)| {
                ErrorBar::new_vertical(x, lo, mid, hi, col.stroke_width(1), 8)
            }))
            .map_err(err)?;
        let line = if peer {
            col.stroke_width(1)
        } else {
            col.stroke_width(3)
        };
        let marker = if peer {
            col.stroke_width(2)
        } else {
            col.filled()
        };
        chart
            .draw_series(LineSeries::new(pts.clone(), line))
            .map_err(err)?
            .label(display_name(&name, peer))
            .legend(move |(x, y)| {
                EmptyElement::at((x, y))
                    + PathElement::new(vec![(0, 0), (20, 0)], line)
                    + legend_marker(mk, (10, 0), 5, marker)
            });
        chart
            .draw_series(pts.iter().map(|&p| marker_element(mk, p, 5, marker)))
            .map_err(err)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .label_font((FONT, 15))
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()
        .map_err(err)?;
    root.present().map_err(err)
}

fn experiment<DB: DrawingBackend>(
    ex: &Experiment,
    root: DrawingArea<DB, Shift>,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(err)?;
    let pts = || ex.series.iter().flat_map(|s| s.points.iter());
    let (xmin, xmax) = pts().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
        (a.min(p.x), b.max(p.x))
    });
    let ys: Vec<f64> = pts()
        .flat_map(|p| std::iter::once(p.y).chain(p.theory))
        .filter(|y| *y > 0.0)
        .collect();
    if ys.is_empty() || !xmin.is_finite() {
        return root.present().map_err(err);
    }
    let (lo, hi) = ys
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(a, b), &y| (a.min(y), b.max(y)));
    // Rates span decades and stop at 1; plain quantities get a linear margin.
    let (ymin, ymax) = if ex.y_is_rate {
        (lo / 2.0, (hi * 1.5).min(1.0))
    } else {
        (lo * 0.9, hi * 1.05)
    };
    let mut builder = ChartBuilder::on(&root);
    builder
        .caption(&ex.title, (FONT, 24))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(80);
    // Log axes as the experiment asks; the four combinations differ in type.
    macro_rules! finish {
        ($chart:expr) => {{
            let mut chart = $chart.map_err(err)?;
            chart
                .configure_mesh()
                .x_desc(ex.x_label.as_str())
                .y_desc(ex.y_label.as_str())
                .label_style((FONT, 16))
                .axis_desc_style((FONT, 18))
                .x_labels(12)
                .x_label_formatter(&|x| format!("{x:.2}"))
                .draw()
                .map_err(err)?;
            let mut theory_legend = false;
            let mut styler = Styler::default();
            for s in ex.series.iter() {
                let (col, mk) = styler.slot(&s.filter);
                let measured: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .filter(|p| p.y > 0.0)
                    .map(|p| (p.x, p.y))
                    .collect();
                let theory: Vec<(f64, f64)> = s
                    .points
                    .iter()
                    .filter_map(|p| p.theory.filter(|t| *t > 0.0).map(|t| (p.x, t)))
                    .collect();
                let line = if s.peer {
                    col.stroke_width(1)
                } else {
                    col.stroke_width(3)
                };
                let marker = if s.peer {
                    col.stroke_width(2)
                } else {
                    col.filled()
                };
                chart
                    .draw_series(LineSeries::new(measured.clone(), line))
                    .map_err(err)?
                    .label(if s.note.is_empty() {
                        s.label.clone()
                    } else {
                        format!("{}: {}", s.label, s.note)
                    })
                    .legend(move |(x, y)| {
                        EmptyElement::at((x, y))
                            + PathElement::new(vec![(0, 0), (20, 0)], line)
                            + legend_marker(mk, (10, 0), 5, marker)
                    });
                chart
                    .draw_series(measured.iter().map(|&p| marker_element(mk, p, 5, marker)))
                    .map_err(err)?;
                if !theory.is_empty() {
                    let drawn = chart
                        .draw_series(DashedLineSeries::new(theory, 5, 4, col.stroke_width(1)))
                        .map_err(err)?;
                    if !theory_legend {
                        theory_legend = true;
                        drawn
                            .label("dashed: each structure's own formula (theory)")
                            .legend(|(x, y)| {
                                PathElement::new(vec![(x, y), (x + 8, y)], BLACK.stroke_width(1))
                            });
                    }
                }
            }
            chart
                .configure_series_labels()
                .position(SeriesLabelPosition::LowerRight)
                .label_font((FONT, 14))
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .draw()
                .map_err(err)?;
        }};
    }
    let xr = (xmin / 1.1)..(xmax * 1.1);
    let yr = ymin..ymax;
    match (ex.log_x, ex.log_y) {
        (true, true) => finish!(builder.build_cartesian_2d(xr.log_scale(), yr.log_scale())),
        (true, false) => finish!(builder.build_cartesian_2d(xr.log_scale(), yr)),
        (false, true) => finish!(builder.build_cartesian_2d(xr, yr.log_scale())),
        (false, false) => finish!(builder.build_cartesian_2d(xr, yr)),
    }
    root.present().map_err(err)
}
