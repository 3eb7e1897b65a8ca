//! The plots and the HTML report drawn from the committed results (results/results.json and
//! results/large/results.json): each choosing chart names the Pareto set that this file
//! computes on its own from the raw JSON, every point is labelled and no two labels overlap,
//! no legend has more than 12 entries, and the page holds every plot and table inline with
//! nothing fetched from elsewhere. (`.ci/run` then opens the page in headless Chromium.)

#![forbid(unsafe_code)]

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use bench_harness::choose::any_overlap;
use bench_harness::plot::{Figure, MAX_LEGEND, Section};
use serde_json::Value;

fn results_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../results")
}

fn raw(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("committed results")).expect("json")
}

/// The committed results copied into a fresh directory, with the figures and the page drawn
/// there.
struct Drawn {
    dir: tempfile::TempDir,
    figs: Vec<Figure>,
}

fn drawn() -> Drawn {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = results_dir();
    std::fs::create_dir_all(dir.path().join("large")).expect("mkdir");
    for f in ["results.json", "large/results.json"] {
        std::fs::copy(src.join(f), dir.path().join(f)).expect("copy results");
    }
    let json = dir.path().join("results.json");
    let results = bench_harness::report::read(&json).expect("results read");
    let large = bench_harness::report::read(&dir.path().join("large/results.json")).expect("large");
    let figs = bench_harness::plot::plot_figures(&results, Some(&large), &dir.path().join("plots"))
        .expect("plots drawn");
    bench_harness::html::write_beside(&results, &json, None).expect("report written");
    Drawn { dir, figs }
}

/// The Pareto set of (name, bits, ns) points: no other point at most as large and as slow
/// and better on one of the two.
fn frontier(points: &[(String, f64, f64)]) -> BTreeSet<String> {
    points
        .iter()
        .filter(|(_, b, t)| {
            !points
                .iter()
                .any(|(_, b2, t2)| b2 <= b && t2 <= t && (b2 < b || t2 < t))
        })
        .map(|(n, _, _)| n.clone())
        .collect()
}

fn ns50(row: &Value) -> Option<f64> {
    row["lookups"]
        .as_array()?
        .iter()
        .find(|l| l["positive_pct"] == 50)?["ns"]
        .as_f64()
}

/// The candidates of an in-cache (or, with `out`, out-of-cache) chart, from the raw JSON by
/// the rules the choose module documents.
fn candidates(json: &Value, target: f64, n: u64, out: bool) -> Vec<(String, f64, f64)> {
    let filters = json["filters"].as_array().expect("filters");
    let info = |name: &str| filters.iter().find(|f| f["name"] == name).expect("listed");
    let twin = |f: &Value| {
        let name = f["name"].as_str().expect("name");
        let special = f["keyed"] == true || f["batched"] == true || name.ends_with("-atomic");
        special
            && filters.iter().any(|g| {
                let g = g["name"].as_str().expect("name");
                g != name && name.starts_with(&format!("{g}-"))
            })
    };
    let mut v = Vec::new();
    for r in json["rows"].as_array().expect("rows") {
        let name = r["filter"].as_str().expect("filter");
        let fpr = r["measured_fpr"].as_f64().expect("fpr");
        let at = match r["target_fpr"].as_f64() {
            Some(t) => (t - target).abs() < 1e-12,
            None => r["theoretical_fpr"].as_f64().unwrap_or(fpr) <= target,
        };
        let over = r["bytes_over_llc"].as_f64();
        let residence_ok = if out {
            over.is_some_and(|x| x >= 2.0)
        } else {
            over.is_none_or(|x| x <= 0.5)
        };
        let f = info(name);
        if r["n"].as_u64() == Some(n)
            && at
            && residence_ok
            && !twin(f)
            && f["equal_memory"] != true
            && fpr <= 1.25 * target
            && r["refused_inserts"] == 0
            && r["false_negatives"] == 0
            && let Some(ns) = ns50(r)
        {
            v.push((
                name.to_string(),
                r["bits_per_item"].as_f64().expect("bits"),
                ns,
            ));
        }
    }
    v
}

/// The many-filters chart's points: bits/item from the working set over the keys.
fn many_filters(json: &Value) -> Vec<(String, f64, f64)> {
    let llc = json["machine"]["cache_bytes"]["llc"].as_f64().expect("llc");
    let ex = json["experiments"]
        .as_array()
        .expect("experiments")
        .iter()
        .find(|e| e["name"] == "many-filters")
        .expect("many-filters");
    ex["series"]
        .as_array()
        .expect("series")
        .iter()
        .map(|s| {
            let note = s["note"].as_str().expect("note");
            let w: Vec<&str> = note.split_whitespace().collect();
            let (count, keys): (f64, f64) =
                (w[0].parse().expect("count"), w[3].parse().expect("keys"));
            let p = &s["points"][0];
            let bits = p["x"].as_f64().expect("x") * llc * 8.0 / (count * keys);
            (
                s["filter"].as_str().expect("filter").to_string(),
                bits,
                p["y"].as_f64().expect("y"),
            )
        })
        .collect()
}

/// The names after "Pareto frontier:" in a chart's SVG.
fn named_in_svg(svg: &str) -> BTreeSet<String> {
    let at = svg
        .find("Pareto frontier: ")
        .expect("the chart names its frontier");
    let line = svg[at + "Pareto frontier: ".len()..]
        .lines()
        .next()
        .expect("a line");
    line.split(" → ")
        .map(|part| part.split(" (").next().expect("a name").trim().to_string())
        .collect()
}

#[test]
fn each_choosing_chart_names_the_pareto_set_of_the_results() {
    let d = drawn();
    let json = raw(&results_dir().join("results.json"));
    let large = raw(&results_dir().join("large/results.json"));
    let charts: Vec<&Figure> = d
        .figs
        .iter()
        .filter(|f| f.section == Section::Choose)
        .collect();
    // Three targets × two sizes in cache, many filters, and 10^8 out of cache.
    assert_eq!(
        charts.len(),
        8,
        "{:?}",
        charts.iter().map(|f| &f.stem).collect::<Vec<_>>()
    );
    for f in charts {
        let svg = std::fs::read_to_string(d.dir.path().join(format!("plots/{}.svg", f.stem)))
            .expect("svg written");
        let expected = match f.stem.as_str() {
            s if s.ends_with("many-filters") => frontier(&many_filters(&json)),
            s if s.ends_with("1e8-out") => frontier(&candidates(&large, 0.01, 100_000_000, true)),
            s => {
                let (t, n) = s
                    .strip_prefix("choose_")
                    .and_then(|r| r.split_once("pct_"))
                    .expect("stem");
                let target: f64 = t.replace('_', ".").parse::<f64>().expect("target") / 100.0;
                let n: f64 = n.parse().expect("size");
                frontier(&candidates(&json, target, n as u64, false))
            }
        };
        assert!(!expected.is_empty(), "{}: no candidate", f.stem);
        assert_eq!(named_in_svg(&svg), expected, "{}", f.stem);
    }
}

#[test]
fn every_point_is_labelled_and_no_two_labels_overlap() {
    let d = drawn();
    for f in d.figs.iter().filter(|f| f.section == Section::Choose) {
        let c = f
            .choice
            .as_ref()
            .expect("a choosing chart carries its data");
        assert_eq!(f.labels.len(), c.points.len(), "{}", f.stem);
        assert_eq!(
            any_overlap(&f.labels),
            None,
            "{}: label boxes overlap",
            f.stem
        );
        let svg = std::fs::read_to_string(d.dir.path().join(format!("plots/{}.svg", f.stem)))
            .expect("svg");
        for p in &c.points {
            assert!(
                svg.contains(&format!("\n{}\n</text>", p.filter)),
                "{}: {} unlabelled",
                f.stem,
                p.filter
            );
        }
        for (l, p) in f.labels.iter().zip(&c.points) {
            assert!(
                l.x0 >= 0.0 && l.y0 >= 0.0 && l.x1 <= 1500.0 && l.y1 <= 900.0,
                "{}: {} off the canvas",
                f.stem,
                p.filter
            );
        }
    }
}

#[test]
fn no_legend_has_more_than_twelve_entries() {
    let d = drawn();
    assert!(d.figs.len() >= 12);
    for f in &d.figs {
        assert!(!f.legends.is_empty(), "{} drew no legend or key", f.stem);
        for &n in &f.legends {
            assert!(n <= MAX_LEGEND, "{}: a legend of {n} entries", f.stem);
        }
    }
}

#[test]
fn no_committed_plot_has_a_legend_above_twelve_entries_or_overlapping_labels() {
    // Every results file under results/ whose plots are committed (the repeats have none).
    let mut stack = vec![results_dir()];
    let mut files = Vec::new();
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("results dir") {
            let p = e.expect("entry").path();
            if p.is_dir()
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("repeat"))
            {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "results.json") && d.join("plots").is_dir()
            {
                files.push(p);
            }
        }
    }
    assert!(files.len() >= 8, "{files:?}");
    for f in files {
        let results = bench_harness::report::read(&f).expect("committed results read");
        let out = tempfile::tempdir().expect("tempdir");
        let figs = bench_harness::plot::plot_figures(&results, None, out.path()).expect("drawn");
        for fig in &figs {
            assert!(
                fig.legends.iter().all(|&n| n <= MAX_LEGEND),
                "{}: {} has a legend of {:?} entries",
                f.display(),
                fig.stem,
                fig.legends
            );
            if let Some(c) = &fig.choice {
                assert_eq!(
                    fig.labels.len(),
                    c.points.len(),
                    "{}: {}",
                    f.display(),
                    fig.stem
                );
                assert_eq!(
                    any_overlap(&fig.labels),
                    None,
                    "{}: {}",
                    f.display(),
                    fig.stem
                );
            }
        }
    }
}

#[test]
fn the_page_holds_every_plot_and_table_inline() {
    let d = drawn();
    let html = std::fs::read_to_string(d.dir.path().join("index.html")).expect("index.html");
    let dom = tl::parse(&html, tl::ParserOptions::default()).expect("parses");
    let p = dom.parser();
    // Each figure: its stem and whether an SVG sits inside it.
    let figures: Vec<(String, bool)> = dom
        .query_selector("figure.plot")
        .expect("selector")
        .filter_map(|h| {
            let tag = h.get(p)?.as_tag()?;
            let stem = tag
                .attributes()
                .get("data-stem")??
                .as_utf8_str()
                .into_owned();
            Some((stem, tag.inner_html(p).contains("<svg")))
        })
        .collect();
    let stems: Vec<(String, bool)> = d.figs.iter().map(|f| (f.stem.clone(), true)).collect();
    assert_eq!(
        figures, stems,
        "every figure, in the order drawn, with its SVG inline"
    );
    let json = raw(&results_dir().join("results.json"));
    let sizes = json["config"]["sizes"].as_array().expect("sizes").len();
    let experiments = json["experiments"].as_array().expect("experiments").len();
    let tables = dom
        .query_selector("table.sortable")
        .expect("selector")
        .count();
    assert_eq!(
        tables,
        sizes + 1 + experiments,
        "main tables, floors, one per experiment"
    );
    // The choosing charts come first.
    let first_plot = html.find("<figure class=\"plot\"").expect("a figure");
    assert!(html[first_plot..].starts_with("<figure class=\"plot\" id=\"choose_1pct_"));
    // Nothing is fetched: no external script, style sheet, image or font.
    for bad in [
        "src=\"http",
        "href=\"http",
        "url(http",
        "<link",
        "<script src",
        "<img",
    ] {
        assert!(!html.contains(bad), "the page fetches something: {bad}");
    }
    assert!(
        html.contains("url(data:font/ttf;base64,"),
        "the font is embedded"
    );
    assert!(
        html.contains("cargo run --release -p bench-harness"),
        "the command is shown"
    );
}
