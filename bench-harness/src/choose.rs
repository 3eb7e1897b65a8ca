//! What the choosing charts show: for one target FPR and one setting (a size in cache, many
//! filters out of cache, one filter far larger than the cache), every filter a person can
//! choose as one point of bits/item against ns per lookup (50 % members), and the Pareto
//! frontier — the filters that no other filter beats on both.
//!
//! Pure data: [`crate::plot`] draws it, [`crate::html`] writes its reading, and the tests
//! compare the frontier with one computed from `results.json` on its own. The label layout
//! that keeps every point's name beside it without two names overlapping is here too
//! ([`place_labels`]), so a test can check the boxes the plot draws.
//!
//! Who is a candidate (the rest are listed as left out, with the reason):
//! - rows at the target, or fixed-parameter rows whose FPR (their formula's, else the
//!   measured one) is at most the target;
//! - measured FPR within [`crate::driver::MEETS_TARGET`]× the target, no refused insert, no
//!   false negative, a 50 % lookup figure;
//! - not a twin (a keyed, batched or atomic entry: the same structure as its plain variant
//!   behind another API; the tables keep them) and not sized at another entry's memory;
//! - in the setting's cache residence ([`crate::schema::residence`]): in-cache charts never
//!   take an out-of-cache row, and the reverse.
//!
//! Complexity: the frontier is O(p²) and the layout O(p²·c) for p points and c candidate
//! positions per label; p is a few dozen.

use crate::labels::{pct, size_label};
use crate::schema::{Experiment, FilterInfo, Results, Row};

/// The many-filters experiment sizes every filter for this target (see
/// `experiments::many_filters`).
pub const MANY_FILTERS_TARGET: f64 = 0.01;

/// The lookup mix the charts show: percent of members.
pub const HITS: u32 = 50;

/// One filter on a choosing chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// Registry name.
    pub filter: String,
    /// A crates.io peer.
    pub peer: bool,
    /// Bits per item (heap bytes × 8 / n).
    pub bits: f64,
    /// Median ns per lookup at [`HITS`] % members.
    pub ns: f64,
    /// Its 95 % interval, lower end.
    pub lo: f64,
    /// Its 95 % interval, upper end.
    pub hi: f64,
    /// Measured FPR (`None` where the setting did not record one per entry).
    pub fpr: Option<f64>,
}

/// Where the points of a chart were measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Setting {
    /// One filter of `n` keys that sits in the last-level cache.
    InCache(u64),
    /// Many small filters that together hold at least twice the cache (the LSM case).
    ManyFilters,
    /// One filter of `n` keys far larger than the cache.
    OutOfCache(u64),
}

/// One choosing chart's data.
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    /// Target FPR.
    pub target: f64,
    /// Where the points were measured.
    pub setting: Setting,
    /// Every candidate, fastest first.
    pub points: Vec<Candidate>,
    /// Indices into `points` of the Pareto frontier, fewest bits first.
    pub frontier: Vec<usize>,
    /// Filters measured here but not drawn, with the reason.
    pub left_out: Vec<(String, String)>,
}

impl Choice {
    fn new(target: f64, setting: Setting, mut points: Vec<Candidate>) -> Self {
        points.sort_by(|a, b| a.ns.total_cmp(&b.ns));
        let frontier = pareto(&points);
        Choice {
            target,
            setting,
            points,
            frontier,
            left_out: Vec::new(),
        }
    }

    /// The frontier's filter names, fewest bits first.
    pub fn frontier_names(&self) -> Vec<&str> {
        self.frontier
            .iter()
            .map(|&i| self.points[i].filter.as_str())
            .collect()
    }

    /// A file-name stem: `choose_1pct_1e6` (in cache), `choose_1pct_many-filters`,
    /// `choose_1pct_1e8-out` (out of cache).
    pub fn stem(&self) -> String {
        let t = format!("{}", (self.target * 1e5).round() / 1e3).replace('.', "_");
        let at = match self.setting {
            Setting::InCache(n) => exp_label(n),
            Setting::OutOfCache(n) => format!("{}-out", exp_label(n)),
            Setting::ManyFilters => "many-filters".into(),
        };
        format!("choose_{t}pct_{at}")
    }

    /// The target as people write it: `0.1 %`, `1 %`, `3 %`.
    pub fn target_label(&self) -> String {
        format!("{} %", (self.target * 1e5).round() / 1e3)
    }

    /// The chart's title.
    pub fn title(&self) -> String {
        let at = match self.setting {
            Setting::InCache(n) => format!("n = {}, in cache", size_label(n)),
            Setting::ManyFilters => "many filters of 10^4 keys, ≥ 2× the LLC together".into(),
            Setting::OutOfCache(n) => format!("one filter of n = {}, out of cache", size_label(n)),
        };
        format!("Choosing at a {} target: {at}", self.target_label())
    }

    /// Whether the points were measured out of cache.
    pub fn out_of_cache(&self) -> bool {
        !matches!(self.setting, Setting::InCache(_))
    }
}

/// `1e6` for 10^6, the digits otherwise.
fn exp_label(n: u64) -> String {
    let l = size_label(n);
    match l.strip_prefix("10^") {
        Some(e) => format!("1e{e}"),
        None => l,
    }
}

/// Indices of the points no other point beats on both bits and time (at least as small and
/// as fast, and strictly better on one), fewest bits first. Exact ties keep both.
pub fn pareto(points: &[Candidate]) -> Vec<usize> {
    let beats = |a: &Candidate, b: &Candidate| {
        a.bits <= b.bits && a.ns <= b.ns && (a.bits < b.bits || a.ns < b.ns)
    };
    let mut front: Vec<usize> = (0..points.len())
        .filter(|&i| !points.iter().any(|q| beats(q, &points[i])))
        .collect();
    front.sort_by(|&a, &b| points[a].bits.total_cmp(&points[b].bits));
    front
}

/// A twin: the same structure as a plain entry of `all` behind a keyed hash, a batched API
/// or atomic inserts (`classic-keyed`, `blocked-batched`, `fastbloom-sip`,
/// `blocked-atomic`). A keyed peer with no plain entry (`bloomfilter`) is no twin.
pub fn is_twin(f: &FilterInfo, all: &[FilterInfo]) -> bool {
    (f.keyed || f.batched || f.name.ends_with("-atomic"))
        && all
            .iter()
            .any(|g| g.name != f.name && f.name.starts_with(&format!("{}-", g.name)))
}

/// Why a row is not a candidate at `target` (`None`: it is one).
fn reason_out(r: &Row, all: &[FilterInfo], target: f64) -> Option<String> {
    if let Some(f) = all.iter().find(|f| f.name == r.filter) {
        if is_twin(f, all) {
            return Some("twin of a plain entry (keyed, batched or atomic)".into());
        }
        if f.equal_memory {
            return Some("sized at another entry's memory, not for the target".into());
        }
    }
    if r.measured_fpr > crate::driver::MEETS_TARGET * target {
        return Some(format!(
            "measured FPR {} misses the target",
            pct(r.measured_fpr)
        ));
    }
    if r.refused_inserts > 0 || r.false_negatives > 0 {
        return Some("refused inserts or false negatives".into());
    }
    if r.lookup(HITS).is_none() {
        return Some(format!("no {HITS} % lookup figure"));
    }
    None
}

/// Whether a row belongs to a chart at `target`: its own target, or fixed parameters that
/// meet it.
fn at_target(r: &Row, target: f64) -> bool {
    match r.target_fpr {
        Some(t) => (t - target).abs() <= 1e-12 * target,
        None => r.theoretical_fpr.unwrap_or(r.measured_fpr) <= target,
    }
}

fn candidate(r: &Row) -> Option<Candidate> {
    let l = r.lookup(HITS)?;
    Some(Candidate {
        filter: r.filter.clone(),
        peer: r.peer,
        bits: r.bits_per_item,
        ns: l.ns,
        lo: l.ns_ci.lo,
        hi: l.ns_ci.hi,
        fpr: Some(r.measured_fpr),
    })
}

/// The chart of the rows at size `n` and `target` whose residence is `in_cache` (true: in
/// cache; false: out of cache).
pub fn from_rows(results: &Results, target: f64, n: u64, in_cache: bool) -> Choice {
    let mut points = Vec::new();
    let mut left_out = Vec::new();
    for r in results
        .rows
        .iter()
        .filter(|r| r.n == n && at_target(r, target))
    {
        let here = match crate::schema::residence(r.bytes_over_llc) {
            "in cache" | "cache unknown" => in_cache,
            "out of cache" => !in_cache,
            _ => false,
        };
        let why = reason_out(r, &results.filters, target).or_else(|| {
            (!here).then(|| {
                format!(
                    "{} ({:.2}× the LLC)",
                    crate::schema::residence(r.bytes_over_llc),
                    r.bytes_over_llc.unwrap_or(f64::NAN)
                )
            })
        });
        match (why, candidate(r)) {
            (None, Some(c)) => points.push(c),
            (Some(w), _) => left_out.push((r.filter.clone(), w)),
            (None, None) => {}
        }
    }
    let setting = if in_cache {
        Setting::InCache(n)
    } else {
        Setting::OutOfCache(n)
    };
    let mut c = Choice::new(target, setting, points);
    c.left_out = left_out;
    c
}

/// `count` and `keys` from a many-filters note: `5551 filters of 10000 keys, …`.
fn filters_and_keys(note: &str) -> Option<(f64, f64)> {
    let mut w = note.split_whitespace();
    let count: f64 = w.next()?.parse().ok()?;
    (w.next()? == "filters" && w.next()? == "of").then_some(())?;
    let keys: f64 = w.next()?.parse().ok()?;
    (count > 0.0 && keys > 0.0).then_some((count, keys))
}

/// The many-filters experiment as a choosing chart: bits/item from the filters' bytes
/// (`x` × the LLC) over their keys, ns per lookup as measured. `None` without that
/// experiment or a known LLC.
pub fn from_many_filters(results: &Results) -> Option<Choice> {
    let ex: &Experiment = results
        .experiments
        .iter()
        .find(|e| e.name == "many-filters")?;
    let llc = results.machine.cache_bytes.llc? as f64;
    let points: Vec<Candidate> = ex
        .series
        .iter()
        .filter_map(|s| {
            let p = s.points.first()?;
            let (count, keys) = filters_and_keys(&s.note)?;
            let ci = p.ci?;
            Some(Candidate {
                filter: s.filter.clone(),
                peer: s.peer,
                bits: p.x * llc * 8.0 / (count * keys),
                ns: p.y,
                lo: ci.lo,
                hi: ci.hi,
                fpr: None,
            })
        })
        .collect();
    (!points.is_empty()).then(|| Choice::new(MANY_FILTERS_TARGET, Setting::ManyFilters, points))
}

fn sizes(results: &Results) -> Vec<u64> {
    let mut s: Vec<u64> = results.rows.iter().map(|r| r.n).collect();
    s.sort_unstable();
    s.dedup();
    s
}

/// Every choosing chart, the target nearest 1 % first: at each target the sizes of
/// `results` in cache (largest first), then the many-filters chart (at its 1 % target), then
/// the sizes of `results` out of cache (a `--full` run's), then `large`'s largest size out
/// of cache. A chart with fewer than two candidates (nothing to choose between) is skipped.
pub fn all(results: &Results, large: Option<&Results>) -> Vec<Choice> {
    let mut targets = results.config.fprs.clone();
    targets.sort_by(|a, b| {
        let d = |t: f64| (t.ln() - MANY_FILTERS_TARGET.ln()).abs();
        d(*a).total_cmp(&d(*b))
    });
    let same = |a: f64, b: f64| (a - b).abs() <= 1e-12 * b;
    let mut out = Vec::new();
    for &t in &targets {
        for &n in sizes(results).iter().rev() {
            out.push(from_rows(results, t, n, true));
        }
        if same(t, MANY_FILTERS_TARGET) {
            out.extend(from_many_filters(results));
        }
        // A run whose own sizes reach beyond the cache (`--full`).
        for &n in sizes(results).iter().rev() {
            out.push(from_rows(results, t, n, false));
        }
        if let Some(l) = large
            && let Some(&n) = sizes(l).last()
            && l.config.fprs.iter().any(|&x| same(x, t))
        {
            let c = from_rows(l, t, n, false);
            // Only where the run itself has no out-of-cache chart of that size.
            if !out
                .iter()
                .any(|o| o.stem() == c.stem() && !o.points.is_empty())
            {
                out.push(c);
            }
        }
    }
    out.retain(|c| c.points.len() >= 2);
    out
}

/// A box in pixels: left, top, right, bottom.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rect {
    /// Left edge.
    pub x0: f64,
    /// Top edge.
    pub y0: f64,
    /// Right edge.
    pub x1: f64,
    /// Bottom edge.
    pub y1: f64,
}

impl Rect {
    /// Whether the two boxes share any area.
    pub fn overlaps(&self, o: &Rect) -> bool {
        self.x0 < o.x1 && o.x0 < self.x1 && self.y0 < o.y1 && o.y0 < self.y1
    }

    fn inside(&self, o: &Rect) -> bool {
        self.x0 >= o.x0 && self.x1 <= o.x1 && self.y0 >= o.y0 && self.y1 <= o.y1
    }
}

/// Where a label went: its box, and whether it sits far enough from its point to need a
/// leader line.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Placed {
    /// The label's box (text plus padding).
    pub rect: Rect,
    /// Drawn away from the point: connect the two with a line.
    pub leader: bool,
}

/// Candidate offsets of a label's box from its point, nearest first: the eight directions at
/// growing distances.
fn offsets(w: f64, h: f64, r: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    for d in [4.0, 12.0, 24.0, 40.0, 60.0, 85.0, 115.0, 150.0] {
        let g = r + d;
        out.extend([
            (g, -h / 2.0),
            (-g - w, -h / 2.0),
            (g * 0.7, -g * 0.7 - h),
            (-g * 0.7 - w, -g * 0.7 - h),
            (g * 0.7, g * 0.7),
            (-g * 0.7 - w, g * 0.7),
            (-w / 2.0, -g - h),
            (-w / 2.0, g),
        ]);
    }
    out
}

/// Place one label per point: beside it where there is room, else further out (with a
/// leader line), never over another label, a point's marker (`r` pixels around each
/// anchor), an `obstacles` box (the interval bars) or outside `bounds`. Labels are placed in
/// `order`; the result is in point order. A label that finds no free place takes the one
/// with the least overlap (the tests catch that).
pub fn place_labels(
    anchors: &[(f64, f64)],
    sizes: &[(f64, f64)],
    r: f64,
    obstacles: &[Rect],
    bounds: Rect,
    order: &[usize],
) -> Vec<Placed> {
    let marks: Vec<Rect> = anchors
        .iter()
        .map(|&(x, y)| Rect {
            x0: x - r,
            y0: y - r,
            x1: x + r,
            y1: y + r,
        })
        .collect();
    let mut placed: Vec<Option<Placed>> = vec![None; anchors.len()];
    let mut taken: Vec<Rect> = Vec::new();
    for &i in order {
        let (ax, ay) = anchors[i];
        let (w, h) = sizes[i];
        let mut best: Option<(usize, Placed)> = None;
        for (k, (dx, dy)) in offsets(w, h, r).into_iter().enumerate() {
            let rect = Rect {
                x0: ax + dx,
                y0: ay + dy,
                x1: ax + dx + w,
                y1: ay + dy + h,
            };
            let clashes = taken
                .iter()
                .chain(&marks)
                .chain(obstacles)
                .filter(|o| o.overlaps(&rect))
                .count()
                + usize::from(!rect.inside(&bounds)) * 100;
            let p = Placed {
                rect,
                leader: k >= 16,
            };
            if clashes == 0 {
                best = Some((0, p));
                break;
            }
            if best.is_none_or(|(c, _)| clashes < c) {
                best = Some((clashes, p));
            }
        }
        let (_, p) = best.expect("offsets are never empty");
        taken.push(p.rect);
        placed[i] = Some(p);
    }
    placed
        .into_iter()
        .map(|p| p.expect("order names every point"))
        .collect()
}

/// Whether any two of `boxes` overlap (the check the tests make on every chart).
pub fn any_overlap(boxes: &[Rect]) -> Option<(usize, usize)> {
    for i in 0..boxes.len() {
        for j in 0..i {
            if boxes[i].overlaps(&boxes[j]) {
                return Some((j, i));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(name: &str, bits: f64, ns: f64) -> Candidate {
        Candidate {
            filter: name.into(),
            peer: false,
            bits,
            ns,
            lo: ns,
            hi: ns,
            fpr: None,
        }
    }

    #[test]
    fn the_frontier_keeps_what_nothing_beats_on_both() {
        let pts = [
            c("small-slow", 7.0, 22.0),
            c("mid", 9.0, 13.0),
            c("dominated", 9.5, 19.0),
            c("big-fast", 10.5, 10.0),
            c("bigger-slower", 11.0, 10.0),
            c("tie-a", 12.0, 9.0),
            c("tie-b", 12.0, 9.0),
        ];
        let f: Vec<&str> = pareto(&pts)
            .iter()
            .map(|&i| pts[i].filter.as_str())
            .collect();
        assert_eq!(f, ["small-slow", "mid", "big-fast", "tie-a", "tie-b"]);
    }

    #[test]
    fn many_filters_notes_give_count_and_keys() {
        assert_eq!(
            filters_and_keys("5551 filters of 10000 keys, 64 MiB together"),
            Some((5551.0, 10000.0))
        );
        assert_eq!(filters_and_keys("no filters here"), None);
        assert_eq!(filters_and_keys("0 filters of 10 keys"), None);
    }

    #[test]
    fn crowded_labels_move_apart() {
        // Ten points on top of each other: every label must find its own place.
        let anchors = vec![(300.0, 300.0); 10];
        let sizes = vec![(80.0, 14.0); 10];
        let bounds = Rect {
            x0: 0.0,
            y0: 0.0,
            x1: 600.0,
            y1: 600.0,
        };
        let order: Vec<usize> = (0..10).collect();
        let placed = place_labels(&anchors, &sizes, 5.0, &[], bounds, &order);
        let boxes: Vec<Rect> = placed.iter().map(|p| p.rect).collect();
        assert_eq!(any_overlap(&boxes), None);
        assert!(boxes.iter().all(|b| b.inside(&bounds)));
    }

    #[test]
    fn overlap_is_area_not_touching() {
        let a = Rect {
            x0: 0.0,
            y0: 0.0,
            x1: 10.0,
            y1: 10.0,
        };
        let touching = Rect {
            x0: 10.0,
            y0: 0.0,
            x1: 20.0,
            y1: 10.0,
        };
        let inside = Rect {
            x0: 9.0,
            y0: 9.0,
            x1: 12.0,
            y1: 12.0,
        };
        assert!(!a.overlaps(&touching));
        assert!(a.overlaps(&inside));
        assert_eq!(any_overlap(&[a, touching, inside]), Some((0, 2)));
    }
}
