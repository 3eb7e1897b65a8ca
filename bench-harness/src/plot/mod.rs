//! Plots from a results JSON (SVG and PNG). Text uses DejaVu Sans embedded from the `dejavu`
//! crate through plotters' `ab_glyph` backend, so no system font library is needed; the SVG
//! files name the font `DejaVu Sans`, which the HTML report embeds, so a browser draws the
//! text with the metrics the label layout used.
//!
//! What is drawn ([`plot_figures`]): the choosing charts first (bits/item against ns per
//! lookup at each target and setting, every point labelled, the Pareto frontier named:
//! [`choosing`]), then the lookup times as dot plots per size and the FPR against bits/item
//! in one panel per family ([`panels`]), then every experiment (in panels by family when it
//! has more series than a legend should hold). No legend has more than [`MAX_LEGEND`]
//! entries, and every filter keeps one colour and marker in every plot.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::chart::MeshStyle;
use plotters::coord::Shift;
use plotters::coord::ranged1d::ValueFormatter;
use plotters::element::{Drawable, PointCollection};
use plotters::prelude::*;
use plotters::style::FontStyle;
use plotters::style::ShapeStyle;
use plotters_backend::{BackendCoord, DrawingErrorKind};

use crate::adapters::Curve;
use crate::labels::display_name;
use crate::schema::{Experiment, Results, Row, Series};

pub mod choosing;
pub mod panels;

pub use crate::error::PlotError;

/// The embedded font's family name, as the SVG files and the report's `@font-face` give it.
pub const FONT: &str = "DejaVu Sans";
/// The most entries any legend has.
pub const MAX_LEGEND: usize = 12;

/// Where a figure belongs in the report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Section {
    /// A choosing chart.
    Choose,
    /// The overview: lookup times per size, FPR against bits/item.
    Overview,
    /// The named experiment's plot.
    Experiment(String),
}

/// One figure written to the plot directory (as `<stem>.svg` and `<stem>.png`), with what
/// the tests check of it.
#[derive(Clone, Debug, PartialEq)]
pub struct Figure {
    /// File stem inside the plot directory.
    pub stem: String,
    /// Its title.
    pub title: String,
    /// Where it belongs.
    pub section: Section,
    /// Entries of each legend (or key) drawn, one number per panel.
    pub legends: Vec<usize>,
    /// A choosing chart: each point's label box, in point order (pixels).
    pub labels: Vec<crate::choose::Rect>,
    /// A choosing chart: what it shows.
    pub choice: Option<crate::choose::Choice>,
}

impl Figure {
    fn new(stem: impl Into<String>, title: impl Into<String>, section: Section) -> Self {
        Figure {
            stem: stem.into(),
            title: title.into(),
            section,
            legends: Vec::new(),
            labels: Vec::new(),
            choice: None,
        }
    }
}

fn register_font() -> Result<(), PlotError> {
    static ONCE: Once = Once::new();
    let mut result = Ok(());
    ONCE.call_once(|| {
        result = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular())
            .map_err(|_| PlotError::Draw("embedded DejaVu Sans is not a valid font".into()));
    });
    result
}

/// A drawing backend every plot draws on (SVG or bitmap): its errors outlive the drawing, so
/// they can be reported as a [`PlotError`].
pub trait Backend: DrawingBackend<ErrorType: 'static> {}

impl<DB: DrawingBackend<ErrorType: 'static>> Backend for DB {}

/// One coordinate of a chart: a range of `f64` values, linear or logarithmic.
pub trait Coord: Ranged<ValueType = f64> {}

impl<R: Ranged<ValueType = f64>> Coord for R {}

/// `chart`'s mesh with its axes described as `x` and `y`: tick labels in the report's font at
/// `size` points, the descriptions two points larger. The caller adds what else its axes
/// need, then draws it.
pub(crate) fn mesh<'a, 'b, DB, X, Y>(
    chart: &'b mut ChartContext<'a, DB, Cartesian2d<X, Y>>,
    (x, y): (&str, &str),
    size: u32,
) -> MeshStyle<'a, 'b, X, Y, DB>
where
    DB: Backend,
    X: Coord + ValueFormatter<f64>,
    Y: Coord + ValueFormatter<f64>,
{
    let mut m = chart.configure_mesh();
    m.x_desc(x)
        .y_desc(y)
        .label_style((FONT, size))
        .axis_desc_style((FONT, size + 2));
    m
}

pub(crate) fn err<E: std::fmt::Debug>(e: E) -> PlotError {
    PlotError::Draw(format!("{e:?}"))
}

/// 41 distinguishable colours: Tableau 10, its light tier, then ten dark or saturated
/// colours chosen away from both tiers' hues (so a tier-3 peer never looks like a tier-1
/// filter of ours: gold, plum, navy, teal, magenta, maroon, yellow-green, near-black, dark
/// gold, indigo), then ten mid-dark tones between them (olive, slate blue, rust, sea green,
/// orchid, steel, sienna, forest, crimson, dark cyan), then cobalt. Index = the filter's position in the
/// registry, so a filter keeps its colour (and marker) in every plot.
const PALETTE: [(u8, u8, u8); 41] = [
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
    (179, 68, 108),
    (0, 0, 128),
    (0, 110, 110),
    (255, 0, 255),
    (128, 0, 0),
    (141, 182, 0),
    (40, 40, 40),
    (160, 120, 0),
    (90, 0, 160),
    (107, 110, 40),
    (82, 84, 163),
    (183, 80, 20),
    (46, 139, 87),
    (186, 85, 211),
    (70, 100, 130),
    (136, 45, 23),
    (20, 80, 20),
    (200, 0, 50),
    (0, 139, 139),
    (0, 71, 171),
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
    let marker = match (i / 10) % 4 {
        0 => Marker::Circle,
        1 => Marker::Triangle,
        2 => Marker::Square,
        _ => Marker::Circle,
    };
    (RGBColor(r, g, b), marker)
}

/// Per plot: a filter's first series gets the filter's own slot (its colour and marker in
/// every plot); a second series of the same filter in one plot (another target, say) keeps
/// the marker and gets a darker, then a lighter shade of the colour, so no two series of a
/// plot share a colour and no filter takes another's.
#[derive(Debug, Default)]
pub(crate) struct Styler(Vec<(usize, u32)>);

impl Styler {
    pub(crate) fn slot(&mut self, filter: &str) -> (RGBColor, Marker) {
        let i = style_index(filter);
        let repeat = self.0.iter().filter(|(j, _)| *j == i).count() as u32;
        self.0.push((i, repeat));
        let (RGBColor(r, g, b), mk) = style_of(i);
        (shade(RGBColor(r, g, b), repeat), mk)
    }
}

/// The `k`-th variant of a colour: itself, then alternately darker and lighter.
fn shade(c: RGBColor, k: u32) -> RGBColor {
    if k == 0 {
        return c;
    }
    let step = f64::from(k.div_ceil(2)).min(3.0) * 0.25;
    let f = |x: u8| -> u8 {
        let x = f64::from(x);
        let y = if k % 2 == 1 {
            x * (1.0 - step)
        } else {
            x + (255.0 - x) * step
        };
        y.round().clamp(0.0, 255.0) as u8
    };
    RGBColor(f(c.0), f(c.1), f(c.2))
}

/// One legend line, drawn in the legend panel beside the chart.
#[derive(Clone, Debug)]
pub(crate) struct LegendEntry {
    pub(crate) label: String,
    pub(crate) sample: Sample,
}

/// What a legend line shows before its label.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Sample {
    /// A line of this colour and width, dashed or solid, with an optional marker.
    Line {
        color: RGBColor,
        width: u32,
        dashed: bool,
        marker: Option<(Marker, ShapeStyle)>,
    },
    /// A marker alone.
    Mark(Marker, ShapeStyle),
}

/// Split `root` into the chart area (left) and the legend panel (right), the legend taking
/// `legend` of the width.
pub(crate) fn split_at<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    legend: f64,
) -> (DrawingArea<DB, Shift>, DrawingArea<DB, Shift>) {
    let (w, _) = root.dim_in_pixel();
    root.split_horizontally(w - (f64::from(w) * legend).round() as u32)
}

/// Words of `text` in lines of at most `width` characters.
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for w in text.split_whitespace() {
        let last = lines.last_mut().expect("one line at least");
        if !last.is_empty() && last.chars().count() + 1 + w.chars().count() > width {
            lines.push(w.to_string());
        } else {
            if !last.is_empty() {
                last.push(' ');
            }
            last.push_str(w);
        }
    }
    lines
}

/// Draw `entries` top to bottom in `area`, wrapping long labels; the font shrinks when
/// there are many lines.
pub(crate) fn draw_legend<DB: Backend>(
    area: &DrawingArea<DB, Shift>,
    entries: &[LegendEntry],
) -> Result<(), PlotError> {
    let (w, h) = area.dim_in_pixel();
    let chars = ((w as usize).saturating_sub(50) / 8).clamp(20, 44);
    let wrapped: Vec<Vec<String>> = entries.iter().map(|e| wrap(&e.label, chars)).collect();
    let lines: usize = wrapped.iter().map(Vec::len).sum::<usize>().max(1);
    let row = ((h as usize - 60) / lines).clamp(11, 21) as i32;
    let font = (row - 5).clamp(10, 15);
    let mut y = 50i32;
    for (e, text) in entries.iter().zip(&wrapped) {
        let mid = y + row / 2;
        match e.sample {
            Sample::Line {
                color,
                width,
                dashed,
                marker,
            } => {
                let style = color.stroke_width(width);
                if dashed {
                    for x0 in [4, 16, 28] {
                        area.draw(&PathElement::new(vec![(x0, mid), (x0 + 7, mid)], style))
                            .map_err(err)?;
                    }
                } else {
                    area.draw(&PathElement::new(vec![(4, mid), (36, mid)], style))
                        .map_err(err)?;
                }
                if let Some((mk, st)) = marker {
                    area.draw(&legend_marker(mk, (20, mid), 5, st))
                        .map_err(err)?;
                }
            }
            Sample::Mark(mk, st) => {
                area.draw(&legend_marker(mk, (20, mid), 6, st))
                    .map_err(err)?;
            }
        }
        for (i, t) in text.iter().enumerate() {
            area.draw(&Text::new(
                t.clone(),
                (44, y + i as i32 * row + (row - font) / 2),
                (FONT, font).into_font().color(&BLACK),
            ))
            .map_err(err)?;
        }
        y += row * text.len() as i32;
    }
    Ok(())
}

/// One marker of any [`Marker`] shape, as a single drawable type (so a series' shape can be
/// chosen at run time).
#[derive(Clone, Debug)]
pub(crate) struct Mark<C> {
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

pub(crate) fn marker_element<C>(shape: Marker, at: C, size: i32, style: ShapeStyle) -> Mark<C> {
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

/// Draw `$body` (an expression over the drawing area `$a`, giving `Result<Figure, PlotError>`)
/// once into `<dir>/<stem>.svg` and once into `<stem>.png`; the SVG pass's figure is kept.
macro_rules! render {
    ($dir:expr, $stem:expr, $size:expr, |$a:ident| $body:expr) => {{
        let svg = $dir.join(format!("{}.svg", $stem));
        let fig = {
            let $a = SVGBackend::new(&svg, $size).into_drawing_area();
            $body
        }?;
        let png = $dir.join(format!("{}.png", $stem));
        {
            let $a = BitMapBackend::new(&png, $size).into_drawing_area();
            $body
        }?;
        fig
    }};
}

/// Write every plot for `results` into `dir` (created if missing); returns the files written.
pub fn plot_all(results: &Results, dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let figs = plot_figures(results, None, dir)?;
    Ok(figs
        .iter()
        .flat_map(|f| ["svg", "png"].map(|x| dir.join(format!("{}.{x}", f.stem))))
        .collect())
}

/// Write every figure for `results` (and the out-of-cache choosing charts of `large`, a run
/// at sizes beyond the cache) into `dir`, created if missing: the choosing charts, the
/// overview, then the experiments, in the order the report shows them.
pub fn plot_figures(
    results: &Results,
    large: Option<&Results>,
    dir: &Path,
) -> Result<Vec<Figure>, PlotError> {
    register_font()?;
    std::fs::create_dir_all(dir).map_err(|source| PlotError::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut figs = Vec::new();
    for c in crate::choose::all(results, large) {
        figs.push(render!(dir, c.stem(), choosing::SIZE, |a| {
            choosing::chart(&c, a)
        }));
    }
    let dots = panels::dots_size(results);
    figs.push(render!(dir, "ns_per_op", dots, |a| panels::ns_dots(
        results, a
    )));
    let fams = panels::fpr_size(results);
    figs.push(render!(dir, "fpr_vs_bits", fams, |a| panels::fpr_families(
        results, a
    )));
    for ex in &results.experiments {
        let groups = panels::experiment_groups(ex, &results.filters);
        let size = panels::grid_size(groups.len());
        figs.push(render!(dir, format!("experiment_{}", ex.name), size, |a| {
            panels::experiment_figure(ex, &groups, a)
        }));
    }
    Ok(figs)
}

/// The size whose rows the FPR plot shows: 10^6 if measured, else the largest ≤ 10^6, else the
/// smallest.
pub(crate) fn fpr_plot_size(results: &Results) -> Option<u64> {
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

pub(crate) fn names_in_order(rows: &[&Row]) -> Vec<(String, bool)> {
    let mut v: Vec<(String, bool)> = Vec::new();
    for r in rows {
        if !v.iter().any(|(n, _)| *n == r.filter) {
            v.push((r.filter.clone(), r.peer));
        }
    }
    v
}

/// The axes every FPR panel of one figure shares.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FprAxes {
    /// Right end of the bits/item axis.
    pub max_bits: f64,
    /// Bottom of the FPR axis.
    pub min_fpr: f64,
}

impl FprAxes {
    /// Axes holding every row of `rows`.
    pub(crate) fn of(rows: &[&Row]) -> Self {
        let max_bits = rows
            .iter()
            .map(|r| r.bits_per_item)
            .fold(16.0f64, f64::max)
            .min(64.0)
            + 2.0;
        let min_fpr = rows.iter().map(|r| r.measured_fpr).fold(1e-3f64, f64::min) / 3.0;
        FprAxes { max_bits, min_fpr }
    }
}

/// One panel of measured FPR against bits/item: `rows` as points with their intervals (peers
/// hollow), `curves` and the lower bound as lines, the legend beside it. Returns the
/// legend's entry count.
pub(crate) fn fpr_panel<DB: Backend>(
    rows: &[&Row],
    curves: &[Curve],
    title: &str,
    ax: FprAxes,
    root: &DrawingArea<DB, Shift>,
) -> Result<usize, PlotError> {
    let FprAxes { max_bits, min_fpr } = ax;
    let (area, panel) = split_at(root, 0.34);
    let mut entries = Vec::new();
    let mut chart = ChartBuilder::on(&area)
        .caption(title, (FONT, 20))
        .margin(12)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..max_bits, (min_fpr..1f64).log_scale())
        .map_err(err)?;
    let axes = (
        "bits per item (real heap bytes × 8 / n)",
        "false-positive rate",
    );
    mesh(&mut chart, axes, 16)
        .y_label_formatter(&|y| format!("{y:.0e}"))
        .draw()
        .map_err(err)?;

    draw_fpr_curves(&mut chart, curves, ax, &mut entries)?;
    draw_fpr_points(&mut chart, rows, min_fpr, &mut entries)?;
    draw_legend(&panel, &entries)?;
    Ok(entries.len())
}

/// The lower bound and each family's theoretical curve.
fn draw_fpr_curves<DB: Backend>(
    chart: &mut ChartContext<
        '_,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, LogCoord<f64>>,
    >,
    curves: &[Curve],
    ax: FprAxes,
    entries: &mut Vec<LegendEntry>,
) -> Result<(), PlotError> {
    let FprAxes { max_bits, min_fpr } = ax;
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
        .map_err(err)?;
    entries.push(LegendEntry {
        label: "lower bound: b = log2(1/ε)".into(),
        sample: Sample::Line {
            color: BLACK,
            width: 2,
            dashed: true,
            marker: None,
        },
    });
    for c in curves {
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
            .map_err(err)?;
        entries.push(LegendEntry {
            label: c.label().into(),
            sample: Sample::Line {
                color: col,
                width: 1,
                dashed: false,
                marker: None,
            },
        });
    }
    Ok(())
}

/// Every row's measured FPR against its bits/item, with its 95 % Wilson interval.
fn draw_fpr_points<DB: Backend>(
    chart: &mut ChartContext<
        '_,
        DB,
        Cartesian2d<plotters::coord::types::RangedCoordf64, LogCoord<f64>>,
    >,
    rows: &[&Row],
    min_fpr: f64,
    entries: &mut Vec<LegendEntry>,
) -> Result<(), PlotError> {
    // Peers first (hollow rings), ours on top (smaller filled dots), so overlaps stay visible.
    let mut named = names_in_order(rows);
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
            .map_err(err)?;
        entries.push(LegendEntry {
            label: display_name(&name, peer),
            sample: Sample::Mark(mk, style),
        });
    }
    Ok(())
}

/// The data bounds of an experiment's panels: every series' x, and its positive y, theory
/// and upper interval ends, with the y margin the experiment's kind of figure takes.
#[derive(Clone, Copy, Debug)]
struct Bounds {
    xmin: f64,
    xmax: f64,
    ymin: f64,
    ymax: f64,
}

impl Bounds {
    /// `None` if the experiment has nothing positive to draw.
    fn of(ex: &Experiment) -> Option<Bounds> {
        let pts = || ex.series.iter().flat_map(|s| s.points.iter());
        let (xmin, xmax) = pts().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), p| {
            (a.min(p.x), b.max(p.x))
        });
        let ys: Vec<f64> = pts()
            .flat_map(|p| {
                std::iter::once(p.y)
                    .chain(p.theory)
                    .chain(p.ci.map(|c| c.hi))
            })
            .filter(|y| *y > 0.0)
            .collect();
        if ys.is_empty() || !xmin.is_finite() {
            return None;
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
        Some(Bounds {
            xmin,
            xmax,
            ymin,
            ymax,
        })
    }
}

/// One panel of an experiment: `series` (a subset of the experiment's) drawn on axes that
/// hold every series of the experiment, so panels side by side share their scales; the
/// legend takes `legend` of the width. Returns the legend's entry count.
pub(crate) fn experiment_panel<DB: Backend>(
    ex: &Experiment,
    series: &[&Series],
    title: &str,
    legend: f64,
    root: &DrawingArea<DB, Shift>,
) -> Result<usize, PlotError> {
    let Some(b) = Bounds::of(ex) else {
        return Ok(0);
    };
    let (area, panel) = split_at(root, legend);
    let mut entries = Vec::new();
    let mut builder = ChartBuilder::on(&area);
    builder
        .caption(title, (FONT, 20))
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(80);
    // Log axes as the experiment asks; the four combinations differ in type.
    macro_rules! finish {
        ($chart:expr) => {{
            let mut chart = $chart.map_err(err)?;
            mesh(&mut chart, (&ex.x_label, &ex.y_label), 16)
                .x_labels(12)
                .x_label_formatter(&|x| {
                    if ex.log_x {
                        format!("{x:.0e}")
                    } else {
                        format!("{x:.2}")
                    }
                })
                .draw()
                .map_err(err)?;
            let mut theory_legend = false;
            let mut styler = Styler::default();
            for s in series.iter() {
                let slot = styler.slot(&s.filter);
                draw_experiment_series(&mut chart, s, slot, b, &mut entries, &mut theory_legend)?;
            }
        }};
    }
    let xr = (b.xmin / 1.1)..(b.xmax * 1.1);
    let yr = b.ymin..b.ymax;
    match (ex.log_x, ex.log_y) {
        (true, true) => finish!(builder.build_cartesian_2d(xr.log_scale(), yr.log_scale())),
        (true, false) => finish!(builder.build_cartesian_2d(xr.log_scale(), yr)),
        (false, true) => finish!(builder.build_cartesian_2d(xr, yr.log_scale())),
        (false, false) => finish!(builder.build_cartesian_2d(xr, yr)),
    }
    draw_legend(&panel, &entries)?;
    Ok(entries.len())
}

/// One series of an experiment panel: its intervals, measured line and markers, and its
/// theory dashed (the first theory line also gets a legend entry, `theory_legend` then set).
fn draw_experiment_series<DB, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    s: &Series,
    (col, mk): (RGBColor, Marker),
    b: Bounds,
    entries: &mut Vec<LegendEntry>,
    theory_legend: &mut bool,
) -> Result<(), PlotError>
where
    DB: Backend,
    X: Coord,
    Y: Coord,
{
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
    draw_intervals(chart, s, col, b)?;
    chart
        .draw_series(LineSeries::new(measured.clone(), line))
        .map_err(err)?;
    entries.push(LegendEntry {
        label: if s.note.is_empty() {
            s.label.clone()
        } else {
            format!("{}: {}", s.label, s.note)
        },
        sample: Sample::Line {
            color: col,
            width: if s.peer { 1 } else { 3 },
            dashed: false,
            marker: Some((mk, marker)),
        },
    });
    chart
        .draw_series(measured.iter().map(|&p| marker_element(mk, p, 5, marker)))
        .map_err(err)?;
    if !theory.is_empty() {
        chart
            .draw_series(DashedLineSeries::new(theory, 5, 4, col.stroke_width(1)))
            .map_err(err)?;
        if !*theory_legend {
            *theory_legend = true;
            entries.push(LegendEntry {
                label: "dashed: each structure's own formula (theory), in the series' colour"
                    .into(),
                sample: Sample::Line {
                    color: BLACK,
                    width: 1,
                    dashed: true,
                    marker: None,
                },
            });
        }
    }
    Ok(())
}

/// The 95 % intervals of a series' measured points: vertical (Wilson, over the probes) and
/// horizontal where the x is measured too, clipped to the panel.
fn draw_intervals<DB, X, Y>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<X, Y>>,
    s: &Series,
    col: RGBColor,
    b: Bounds,
) -> Result<(), PlotError>
where
    DB: Backend,
    X: Coord,
    Y: Coord,
{
    chart
        .draw_series(s.points.iter().filter(|p| p.y > 0.0).filter_map(|p| {
            p.ci.map(|c| {
                ErrorBar::new_vertical(
                    p.x,
                    c.lo.max(b.ymin),
                    p.y,
                    c.hi.min(b.ymax),
                    col.stroke_width(1),
                    8,
                )
            })
        }))
        .map_err(err)?;
    chart
        .draw_series(s.points.iter().filter(|p| p.y > 0.0).filter_map(|p| {
            p.x_ci.map(|c| {
                ErrorBar::new_horizontal(
                    p.y,
                    c.lo.max(b.xmin / 1.1),
                    p.x,
                    c.hi.min(b.xmax * 1.1),
                    col.stroke_width(1),
                    8,
                )
            })
        }))
        .map_err(err)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_registered_filter_has_its_own_colour() {
        let n = crate::adapters::registry().len();
        assert!(n <= PALETTE.len(), "{n} filters, {} colours", PALETTE.len());
        for i in 0..n {
            for j in 0..i {
                assert_ne!(style_of(i).0, style_of(j).0, "slots {i} and {j}");
            }
        }
    }

    #[test]
    fn a_repeated_filter_takes_a_shade_not_another_filters_colour() {
        let mut st = Styler::default();
        let a1 = st.slot("classic");
        let a2 = st.slot("classic");
        let a3 = st.slot("classic");
        let b = st.slot("classic-keyed");
        // Each filter keeps its own colour and marker, as in every other plot.
        assert_eq!(a1, style_of(style_index("classic")));
        assert_eq!(b, style_of(style_index("classic-keyed")));
        // The repeats share the marker, not the colour.
        assert_eq!((a2.1, a3.1), (a1.1, a1.1));
        let cols = [a1.0, a2.0, a3.0, b.0];
        for i in 0..cols.len() {
            for j in 0..i {
                assert_ne!(cols[i], cols[j]);
            }
        }
        for i in 0..PALETTE.len() {
            assert_ne!(a2.0, style_of(i).0);
            assert_ne!(a3.0, style_of(i).0);
        }
    }

    #[test]
    fn legend_labels_wrap_on_words() {
        assert_eq!(wrap("a bb ccc", 4), vec!["a bb", "ccc"]);
        assert_eq!(wrap("", 10), vec![String::new()]);
        let long = "cuckoofilter (peer): refused 268928 of 400000 inserts; 108922 accepted keys test negative";
        assert!(wrap(long, 44).iter().all(|l| l.chars().count() <= 44));
    }
}
