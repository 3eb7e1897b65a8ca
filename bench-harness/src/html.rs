//! The HTML report, `index.html`: the machine and command at the top, the choosing charts
//! first, then the lookup and FPR overviews, every table (sortable), every experiment's plot
//! with its reading and its table, and links to the JSON, CSVs and summary.
//!
//! Self-contained: the plots are inline SVG, the font they name (DejaVu Sans, from the
//! `dejavu` crate) is embedded as a data URL, the sorting script is inline; nothing is
//! fetched when the page is viewed. The page comes from the `minijinja` templates in
//! `bench-harness/templates/` (autoescaped; only the SVGs, which plotters writes, are
//! inserted as they are). Written by `run` and by `plot` from a stored results.json.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::path::Path;
//! let results = bench_harness::report::read(Path::new("results/results.json"))?;
//! let page = bench_harness::html::write_beside(&results, Path::new("results/results.json"), None)?;
//! assert!(page.ends_with("index.html"));
//! # Ok(())
//! # }
//! ```

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::Serialize;

use crate::choose::{Choice, Setting};
use crate::labels::{comma_list, decimals_or, size_label};
use crate::plot::{Figure, Section};
use crate::schema::{Experiment, Results};

mod tables;

pub use tables::{Cell, Table};

/// The report's file name.
pub use crate::report::INDEX;

pub use crate::error::ReportError;

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ReportError + '_ {
    move |source| ReportError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A figure as the template shows it.
#[derive(Debug, Serialize)]
struct FigureView {
    stem: String,
    title: String,
    svg: String,
    reading: String,
    frontier: String,
    href: String,
}

/// An experiment as the template shows it.
#[derive(Debug, Serialize)]
struct ExperimentView {
    name: String,
    figure: FigureView,
    table: Table,
}

/// A link to a file beside the report.
#[derive(Debug, Serialize)]
struct Link {
    href: String,
    what: String,
}

/// The report for the results file `json` (already read as `results`), in its directory:
/// the plots into `plots/`, the page into `index.html`. The out-of-cache run is `large` if
/// given, else `large/results.json` beside `json` when that file exists. Returns the page's
/// path.
pub fn write_beside(
    results: &Results,
    json: &Path,
    large: Option<&Results>,
) -> Result<PathBuf, ReportError> {
    let dir = json.parent().unwrap_or(Path::new("."));
    let large_json = dir.join("large").join(crate::report::JSON);
    let stored = match large {
        Some(_) => None,
        None if large_json.exists() => {
            Some(crate::report::read(&large_json).map_err(|e| ReportError::Results(Box::new(e)))?)
        }
        None => None,
    };
    let large = large.or(stored.as_ref());
    let name = large.map(|_| format!("large/{}", crate::report::JSON));
    write_report(results, large, dir, name.as_deref())
}

/// Draw every plot of `results` (and `large`'s out-of-cache charts) into `dir/plots` and
/// write `dir/index.html`; `large_name` is how the page names the large run's JSON. Returns
/// the page's path.
pub fn write_report(
    results: &Results,
    large: Option<&Results>,
    dir: &Path,
    large_name: Option<&str>,
) -> Result<PathBuf, ReportError> {
    let plots = dir.join("plots");
    let figs = crate::plot::plot_figures(results, large, &plots)?;
    let page = render(results, &figs, &plots, large_name)?;
    let path = dir.join(INDEX);
    std::fs::write(&path, page).map_err(io(&path))?;
    Ok(path)
}

/// The page for `figs` (drawn into `plots`, which must sit in the report's directory as
/// `plots/`).
pub fn render(
    results: &Results,
    figs: &[Figure],
    plots: &Path,
    large_name: Option<&str>,
) -> Result<String, ReportError> {
    let mut env = minijinja::Environment::new();
    env.add_template("index.html", include_str!("../templates/index.html"))?;
    env.add_template("table.html", include_str!("../templates/table.html"))?;
    let view = |f: &Figure| figure_view(results, f, plots);
    let choose = figs
        .iter()
        .filter(|f| f.section == Section::Choose)
        .map(view)
        .collect::<Result<Vec<_>, _>>()?;
    let overview = figs
        .iter()
        .filter(|f| f.section == Section::Overview)
        .map(view)
        .collect::<Result<Vec<_>, _>>()?;
    let mut experiments = Vec::new();
    for ex in &results.experiments {
        if let Some(f) = figs
            .iter()
            .find(|f| f.section == Section::Experiment(ex.name.clone()))
        {
            experiments.push(ExperimentView {
                name: ex.name.clone(),
                figure: view(f)?,
                table: tables::experiment(ex),
            });
        }
    }
    let m = &results.machine;
    let ctx = minijinja::context! {
        machine => m,
        wall => format!("{:.0} s", results.wall_seconds),
        command => command(results),
        written_by => "bench-harness plot (or run)",
        json_name => crate::report::JSON,
        large => large_name,
        conditions => conditions(results),
        choose => choose,
        overview => overview,
        tables => tables::main(results),
        experiments => experiments,
        links => links(results, large_name),
        font => base64::engine::general_purpose::STANDARD.encode(dejavu::sans::regular()),
    };
    Ok(env.get_template("index.html")?.render(ctx)?)
}

/// An equivalent command line for the run behind `results`.
pub fn command(results: &Results) -> String {
    let c = &results.config;
    let list = |v: Vec<String>| v.join(",");
    let mut s = String::from("cargo run --release -p bench-harness --");
    if c.full {
        s.push_str(" --full");
    }
    s.push_str(&format!(
        " --n {} --fpr {} --seed {} --probes {} --passes {} --keys {}",
        list(c.sizes.iter().map(|n| format!("{n}")).collect()),
        list(c.fprs.iter().map(|p| format!("{p}")).collect()),
        c.seed,
        c.fpr_probes,
        c.lookup_passes,
        c.key_shape
    ));
    if let Some(z) = c.zipf {
        s.push_str(&format!(" --zipf {z}"));
    }
    s
}

fn conditions(results: &Results) -> String {
    let c = &results.machine.conditions;
    format!(
        "measuring thread pinned to {}; load average {} at the start, {} at the end; times: {}",
        c.pinned_cpu
            .map(|p| format!("CPU {p}"))
            .unwrap_or_else(|| "no CPU (the OS refused)".into()),
        decimals_or(c.load_start, 2, "", "?"),
        decimals_or(c.load_end, 2, "", "?"),
        c.clock
    )
}

/// The SVG of `f` from `plots`, without its XML prolog.
fn inline_svg(plots: &Path, stem: &str) -> Result<String, ReportError> {
    let path = plots.join(format!("{stem}.svg"));
    let text = std::fs::read_to_string(&path).map_err(io(&path))?;
    let start = text.find("<svg").unwrap_or(0);
    Ok(text[start..].to_string())
}

fn figure_view(results: &Results, f: &Figure, plots: &Path) -> Result<FigureView, ReportError> {
    let (reading, frontier) = match (&f.section, &f.choice) {
        (Section::Choose, Some(c)) => (choice_reading(c), crate::plot::choosing::frontier_line(c)),
        (Section::Experiment(name), _) => (
            results
                .experiments
                .iter()
                .find(|e| &e.name == name)
                .map(experiment_reading)
                .unwrap_or_default(),
            String::new(),
        ),
        _ => (overview_reading(results, &f.stem), String::new()),
    };
    Ok(FigureView {
        stem: f.stem.clone(),
        title: f.title.clone(),
        svg: inline_svg(plots, &f.stem)?,
        reading,
        frontier,
        href: format!("plots/{}", f.stem),
    })
}

/// The reading under a choosing chart, from its points.
pub fn choice_reading(c: &Choice) -> String {
    let fastest = &c.points[0];
    let smallest = c
        .points
        .iter()
        .min_by(|a, b| a.bits.total_cmp(&b.bits))
        .expect("a chart has a point");
    let setting = match c.setting {
        Setting::InCache(n) => format!("With {} keys in cache", size_label(n)),
        Setting::ManyFilters => "Over many small filters out of cache (the LSM case)".into(),
        Setting::OutOfCache(n) => format!("With one filter of {} keys out of cache", size_label(n)),
    };
    format!(
        "{setting} at a {} target, {} filters qualify. The fastest is {} ({:.1} ns per lookup at {:.2} bits/item); the smallest is {} ({:.2} bits/item at {:.1} ns). A filter off the frontier is beaten on both by one on it; {} filters measured here are left out of the chart (listed under it).",
        c.target_label(),
        c.points.len(),
        fastest.filter,
        fastest.ns,
        fastest.bits,
        smallest.filter,
        smallest.bits,
        smallest.ns,
        c.left_out.len()
    )
}

fn experiment_reading(ex: &Experiment) -> String {
    let mut s = ex.description.clone();
    if !ex.ratios.is_empty() {
        let r: Vec<String> = ex
            .ratios
            .iter()
            .map(|x| {
                format!(
                    "{} {:.3} [{:.2}–{:.2}]",
                    x.name, x.ratio.mid, x.ratio.lo, x.ratio.hi
                )
            })
            .collect();
        s.push_str(&format!(
            " Headline ratios (median [95 %]): {}.",
            r.join("; ")
        ));
    }
    s
}

fn overview_reading(results: &Results, stem: &str) -> String {
    match stem {
        "ns_per_op" => format!(
            "Every entry at the target nearest 1 % (or its fixed parameters), fastest at the top, at each size of the run ({}). The dashed line is the memory floor: one independent random 64-byte read over a buffer the size of a 1 % classic filter; no single lookup that touches a random cache line can beat it without batching.",
            comma_list(&results.config.sizes, |n| size_label(*n))
        ),
        _ => format!(
            "Measured FPR (over {} non-member probes, 95 % Wilson interval) against bits per item at every target, one panel per family with its own formula and the lower bound log2(1/ε); a point on its theory line spends the bits its design promises.",
            results.config.fpr_probes
        ),
    }
}

fn links(results: &Results, large_name: Option<&str>) -> Vec<Link> {
    let mut v = vec![
        Link {
            href: crate::report::JSON.into(),
            what: "every figure of the run (the schema in bench-harness/src/schema.rs)".into(),
        },
        Link {
            href: crate::report::MAIN_CSV.into(),
            what: "the main table: every filter × target × size".into(),
        },
        Link {
            href: crate::report::FLOORS_CSV.into(),
            what: "memory floor per size".into(),
        },
        Link {
            href: crate::report::SUMMARY.into(),
            what: "the same tables in Markdown".into(),
        },
    ];
    for ex in &results.experiments {
        v.push(Link {
            href: format!("{}.csv", ex.name),
            what: ex.title.clone(),
        });
    }
    if let Some(l) = large_name {
        v.push(Link {
            href: l.into(),
            what: "the out-of-cache run (one filter far larger than the cache)".into(),
        });
    }
    v
}
