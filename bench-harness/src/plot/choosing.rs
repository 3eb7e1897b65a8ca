//! The choosing chart: bits/item (x) against ns per lookup (y), one labelled point per
//! filter with its 95 % interval, peers hollow, the Pareto frontier drawn as a staircase and
//! named above the chart. Labels go beside their points; where that space is taken they move
//! out (with a leader line) until no two label boxes overlap ([`crate::choose::place_labels`]).

use plotters::coord::Shift;
use plotters::coord::combinators::BindKeyPoints;
use plotters::prelude::*;

use super::{
    Backend, FONT, Figure, Marker, PlotError, Section, err, marker_element, mesh, style_index,
    style_of,
};
use crate::choose::{Choice, Placed, Rect, place_labels};

/// Canvas size of a choosing chart.
pub const SIZE: (u32, u32) = (1500, 900);
/// Font size of the point labels.
const LABEL_FONT: u32 = 15;
/// Marker radius (the layout keeps labels this far from every point).
const R: f64 = 7.0;
/// The frontier's colour.
const FRONTIER: RGBColor = RGBColor(0, 120, 60);

/// The line above the chart naming the frontier: `Pareto frontier: a (7.34 b/item, 22.1 ns)
/// → b (…)`. The tests read it back from the SVG.
pub fn frontier_line(c: &Choice) -> String {
    let names: Vec<String> = c
        .frontier
        .iter()
        .map(|&i| {
            let p = &c.points[i];
            format!("{} ({:.2} b/item, {:.1} ns)", p.filter, p.bits, p.ns)
        })
        .collect();
    format!("Pareto frontier: {}", names.join(" → "))
}

/// The note under the chart: the key and what was left out, by reason.
fn footer(c: &Choice) -> Vec<String> {
    let mut lines = vec![format!(
        "Filled: bloomlab; hollow: crates.io peer; dashed staircase: the Pareto frontier (no other filter both smaller and faster); bars: 95 % interval of the median. Every filter drawn meets the {} target.",
        c.target_label()
    )];
    let mut reasons: Vec<(&str, Vec<&str>)> = Vec::new();
    for (name, why) in &c.left_out {
        match reasons.iter_mut().find(|(w, _)| *w == why.as_str()) {
            Some((_, v)) => v.push(name),
            None => reasons.push((why, vec![name])),
        }
    }
    for (why, names) in reasons {
        lines.push(format!("Not drawn — {why}: {}", names.join(", ")));
    }
    lines
}

/// Draw the chart of `c` on `root`.
pub fn chart<DB: Backend>(c: &Choice, root: DrawingArea<DB, Shift>) -> Result<Figure, PlotError> {
    root.fill(&WHITE).map_err(err)?;
    let foot_lines = footer(c);
    let foot_h = 14 + 19 * wrapped(&foot_lines).len() as u32;
    let (head, rest) = root.split_vertically(78);
    let (_, h) = rest.dim_in_pixel();
    let (body, foot) = rest.split_vertically(h - foot_h);
    head.draw(&Text::new(c.title(), (20, 10), (FONT, 26).into_font()))
        .map_err(err)?;
    head.draw(&Text::new(
        frontier_line(c),
        (20, 48),
        (FONT, 17).into_font().color(&FRONTIER),
    ))
    .map_err(err)?;
    let labels = draw_points(c, &body, &root)?;
    for (i, line) in wrapped(&foot_lines).iter().enumerate() {
        foot.draw(&Text::new(
            line.clone(),
            (20, 6 + 19 * i as i32),
            (FONT, 14).into_font().color(&RGBColor(60, 60, 60)),
        ))
        .map_err(err)?;
    }
    root.present().map_err(err)?;
    let mut fig = Figure::new(c.stem(), c.title(), Section::Choose);
    fig.legends = vec![3];
    fig.labels = labels.iter().map(|p| p.rect).collect();
    fig.choice = Some(c.clone());
    Ok(fig)
}

/// Tick values for a log axis from `lo` to `hi`: the 1-2-5 series where it gives five or
/// more ticks, else a finer series, else evenly spaced round numbers (a narrow range).
pub fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let series: [&[f64]; 3] = [
        &[1.0, 2.0, 5.0],
        &[1.0, 1.5, 2.0, 3.0, 4.0, 5.0, 7.0],
        &[
            1.0, 1.2, 1.4, 1.6, 1.8, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0,
        ],
    ];
    for s in series {
        let mut v = Vec::new();
        let mut decade = 10f64.powf(lo.log10().floor());
        while decade <= hi {
            v.extend(
                s.iter()
                    .map(|m| m * decade)
                    .filter(|t| (lo..=hi).contains(t)),
            );
            decade *= 10.0;
        }
        if v.len() >= 5 {
            return v;
        }
    }
    let raw = (hi - lo) / 8.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    (first..)
        .map(|k| k as f64 * step)
        .take_while(|t| *t <= hi * (1.0 + 1e-12))
        .collect()
}

/// A tick's label: no more digits than the value has (to two decimals).
fn tick_label(v: f64) -> String {
    let r = (v * 100.0).round() / 100.0;
    format!("{r}")
}

fn wrapped(lines: &[String]) -> Vec<String> {
    lines.iter().flat_map(|l| super::wrap(l, 215)).collect()
}

/// The axes' ranges: every point and interval with a margin (log scales).
fn ranges(c: &Choice) -> ((f64, f64), (f64, f64)) {
    let (mut x0, mut x1, mut y0, mut y1) = (f64::INFINITY, 0.0f64, f64::INFINITY, 0.0f64);
    for p in &c.points {
        x0 = x0.min(p.bits);
        x1 = x1.max(p.bits);
        y0 = y0.min(p.lo.min(p.ns));
        y1 = y1.max(p.hi.max(p.ns));
    }
    ((x0 / 1.15, x1 * 1.25), (y0 / 1.3, y1 * 1.3))
}

/// Points, intervals, frontier and labels; returns the labels' boxes in point order.
fn draw_points<DB: Backend>(
    c: &Choice,
    body: &DrawingArea<DB, Shift>,
    root: &DrawingArea<DB, Shift>,
) -> Result<Vec<Placed>, PlotError> {
    let ((x0, x1), (y0, y1)) = ranges(c);
    let mut chart = ChartBuilder::on(body)
        .margin(15)
        .margin_right(30)
        .x_label_area_size(50)
        .y_label_area_size(75)
        .build_cartesian_2d(
            (x0..x1).log_scale().with_key_points(ticks(x0, x1)),
            (y0..y1).log_scale().with_key_points(ticks(y0, y1)),
        )
        .map_err(err)?;
    let axes = (
        "bits per item (heap bytes × 8 / n) — left is smaller",
        "ns per lookup, 50 % members — down is faster",
    );
    mesh(&mut chart, axes, 15)
        .x_label_formatter(&|x| tick_label(*x))
        .y_label_formatter(&|y| tick_label(*y))
        .draw()
        .map_err(err)?;
    chart
        .draw_series(DashedLineSeries::new(
            stairs(c),
            7,
            5,
            FRONTIER.stroke_width(2),
        ))
        .map_err(err)?;
    for (i, p) in c.points.iter().enumerate() {
        let (col, mk) = style_of(style_index(&p.filter));
        chart
            .draw_series(std::iter::once(ErrorBar::new_vertical(
                p.bits,
                p.lo,
                p.ns,
                p.hi,
                col.stroke_width(1),
                8,
            )))
            .map_err(err)?;
        if c.frontier.contains(&i) {
            chart
                .draw_series(std::iter::once(Circle::new(
                    (p.bits, p.ns),
                    R as i32 + 4,
                    FRONTIER.stroke_width(2),
                )))
                .map_err(err)?;
        }
        let style = if p.peer {
            col.stroke_width(3)
        } else {
            col.filled()
        };
        let size = if mk == Marker::Circle { 6 } else { 5 };
        chart
            .draw_series(std::iter::once(marker_element(
                mk,
                (p.bits, p.ns),
                size,
                style,
            )))
            .map_err(err)?;
    }
    let bounds = pixel_box(chart.plotting_area().get_pixel_range());
    let px = |x: f64, y: f64| {
        let (a, b) = chart.backend_coord(&(x, y));
        (f64::from(a), f64::from(b))
    };
    let anchors: Vec<(f64, f64)> = c.points.iter().map(|p| px(p.bits, p.ns)).collect();
    // The interval bars and the frontier's staircase: no label covers them.
    let mut obstacles: Vec<Rect> = c
        .points
        .iter()
        .map(|p| {
            let ((x, top), (_, bottom)) = (px(p.bits, p.hi), px(p.bits, p.lo));
            Rect {
                x0: x - 1.5,
                y0: top,
                x1: x + 1.5,
                y1: bottom,
            }
        })
        .collect();
    obstacles.extend(stair_boxes(c, &anchors));
    label_points(c, root, &anchors, &obstacles, bounds)
}

/// The plotting area's box.
fn pixel_box((xr, yr): (std::ops::Range<i32>, std::ops::Range<i32>)) -> Rect {
    Rect {
        x0: f64::from(xr.start),
        y0: f64::from(yr.start),
        x1: f64::from(xr.end),
        y1: f64::from(yr.end),
    }
}

/// The frontier as a staircase: from each member across to the next one's bits, then down
/// to its time.
fn stairs(c: &Choice) -> Vec<(f64, f64)> {
    let mut v = Vec::new();
    for w in c.frontier.windows(2) {
        let (a, b) = (&c.points[w[0]], &c.points[w[1]]);
        v.extend([(a.bits, a.ns), (b.bits, a.ns)]);
    }
    if let Some(&last) = c.frontier.last() {
        v.push((c.points[last].bits, c.points[last].ns));
    }
    v
}

/// Thin boxes along the frontier's staircase, so no label covers it.
fn stair_boxes(c: &Choice, anchors: &[(f64, f64)]) -> Vec<Rect> {
    let mut out = Vec::new();
    for w in c.frontier.windows(2) {
        let ((ax, ay), (bx, by)) = (anchors[w[0]], anchors[w[1]]);
        out.push(Rect {
            x0: ax.min(bx),
            y0: ay - 1.5,
            x1: ax.max(bx),
            y1: ay + 1.5,
        });
        out.push(Rect {
            x0: bx - 1.5,
            y0: ay.min(by),
            x1: bx + 1.5,
            y1: ay.max(by),
        });
    }
    out
}

/// Lay out and draw one label per point (frontier first, then fastest first).
fn label_points<DB: Backend>(
    c: &Choice,
    root: &DrawingArea<DB, Shift>,
    anchors: &[(f64, f64)],
    bars: &[Rect],
    bounds: Rect,
) -> Result<Vec<Placed>, PlotError> {
    let font = (FONT, LABEL_FONT).into_font();
    let mut sizes = Vec::new();
    for p in &c.points {
        let (w, h) = root
            .estimate_text_size(&p.filter, &TextStyle::from(font.clone()))
            .map_err(err)?;
        sizes.push((f64::from(w) + 8.0, f64::from(h) + 6.0));
    }
    let mut order: Vec<usize> = c.frontier.clone();
    order.extend((0..c.points.len()).filter(|i| !c.frontier.contains(i)));
    let placed = place_labels(anchors, &sizes, R + 1.0, bars, bounds, &order);
    for (i, (p, pl)) in c.points.iter().zip(&placed).enumerate() {
        let r = pl.rect;
        let (ax, ay) = anchors[i];
        if pl.leader {
            let cx = ax.clamp(r.x0, r.x1);
            let cy = ay.clamp(r.y0, r.y1);
            root.draw(&PathElement::new(
                vec![(ax as i32, ay as i32), (cx as i32, cy as i32)],
                RGBColor(150, 150, 150).stroke_width(1),
            ))
            .map_err(err)?;
        }
        let on_front = c.frontier.contains(&i);
        let fill = if on_front {
            RGBColor(225, 245, 230)
        } else {
            RGBColor(255, 255, 255)
        };
        root.draw(&Rectangle::new(
            [(r.x0 as i32, r.y0 as i32), (r.x1 as i32, r.y1 as i32)],
            fill.mix(0.85).filled(),
        ))
        .map_err(err)?;
        let colour = if on_front { FRONTIER } else { BLACK };
        root.draw(&Text::new(
            p.filter.clone(),
            (r.x0 as i32 + 4, r.y0 as i32 + 3),
            font.clone().color(&colour),
        ))
        .map_err(err)?;
    }
    Ok(placed)
}

#[cfg(test)]
mod tests {
    use super::{tick_label, ticks};

    #[test]
    fn log_axes_get_five_or_more_round_ticks() {
        let round = |v: Vec<f64>| {
            v.iter()
                .map(|x| (x * 1e6).round() / 1e6)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            round(ticks(5.0, 400.0)),
            [5.0, 10.0, 20.0, 50.0, 100.0, 200.0]
        );
        // 1-2-5 gives two ticks here: the finer series.
        assert_eq!(round(ticks(6.0, 45.0)), [7.0, 10.0, 15.0, 20.0, 30.0, 40.0]);
        // A narrow range: evenly spaced round numbers.
        assert_eq!(
            round(ticks(9.3, 10.8)),
            [9.4, 9.6, 9.8, 10.0, 10.2, 10.4, 10.6, 10.8]
        );
        assert_eq!(tick_label(0.30000000000000004), "0.3");
        assert_eq!(tick_label(150.0), "150");
    }
}
