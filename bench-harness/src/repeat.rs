//! `repeat`: N back-to-back runs of one stated command, each in its own process, and the
//! spread of every lookup ratio to `blocked` across them (`results/repeatability.md`), and of
//! every experiment's paired ratios (the parallel builds' speed-ups, ours ÷ a peer's time).

use crate::error::Error;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::labels::{size_label, target_label};
use crate::schema::Results;
use crate::stats::Interval;

/// Relative band every ratio should stay within around the runs' mean.
pub const BAND: f64 = 0.10;

/// Run `bench-harness run <args> --out <dir>/run-<i> --quiet --no-plots` `runs` times.
pub fn run_all(args: &[String], runs: u32, dir: &Path) -> Result<Vec<(PathBuf, Results)>, Error> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::Run(format!("cannot find this program: {e}")))?;
    if args.iter().any(|a| a == "--out" || a.starts_with("--out=")) {
        return Err(Error::usage(
            "repeat chooses each run's --out itself; leave it out",
        ));
    }
    let mut out = Vec::new();
    for i in 1..=runs {
        let d = dir.join(format!("run-{i}"));
        eprintln!("repeat: run {i} of {runs} -> {}", d.display());
        let status = Command::new(&exe)
            .arg("run")
            .args(args)
            .arg("--out")
            .arg(&d)
            .args(["--quiet", "--no-plots"])
            .status()
            .map_err(|e| Error::Run(format!("cannot start run {i}: {e}")))?;
        if !status.success() {
            return Err(Error::Run(format!("run {i} failed ({status})")));
        }
        let r = crate::report::read(&d.join(crate::report::JSON))?;
        out.push((d, r));
    }
    Ok(out)
}

/// What `repeat` prints: how many lookup ratios stayed within the band, the largest
/// deviation, and the calibration of the intervals.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Verdict {
    /// Lookup ratios to `blocked` compared across the runs.
    pub ratios: usize,
    /// Of those, within ±[`BAND`] of the runs' mean.
    pub within: usize,
    /// The largest |run − mean| / mean.
    pub worst: f64,
    /// Share of (ratio, ordered pair of runs) where one run's 95 % interval holds the other
    /// run's median; `None` with fewer than two runs.
    pub calibration: Option<f64>,
}

impl Verdict {
    /// The lines `repeat` prints.
    pub fn lines(&self) -> String {
        format!(
            "{} of {} lookup ratios to blocked within ±{:.0} % of the runs' mean ({:.1} %); \
             largest deviation {:.1} %\ncalibration: {} of one run's 95 % intervals hold \
             another run's median (about 83 % if the intervals are honest and the runs alike)",
            self.within,
            self.ratios,
            BAND * 100.0,
            if self.ratios > 0 {
                100.0 * self.within as f64 / self.ratios as f64
            } else {
                f64::NAN
            },
            self.worst * 100.0,
            self.calibration
                .map(|c| format!("{:.1} %", c * 100.0))
                .unwrap_or_else(|| "—".into())
        )
    }
}

/// The spread table and verdict; returns the Markdown and the [`Verdict`].
pub fn spread(command: &str, runs: &[(PathBuf, Results)]) -> (String, Verdict) {
    let mut s = String::new();
    write_runs(&mut s, command, runs);
    let Some((_, first)) = runs.first() else {
        return (s, Verdict::default());
    };
    let mut t = Tally::default();
    for row in &first.rows {
        if row.filter == "blocked" {
            continue;
        }
        for l in &row.lookups {
            let Some(vals) = ratios_across(runs, row, l.positive_pct) else {
                continue;
            };
            let (mean, dev) = t.add(&vals, row, l.positive_pct);
            write_ratio_row(&mut s, row, l.positive_pct, &vals, mean, dev);
        }
    }
    t.write(&mut s);
    experiment_ratios(&mut s, runs);
    write_compares(&mut s, runs);
    let verdict = Verdict {
        ratios: t.count,
        within: t.count - t.outside.len(),
        worst: t.worst,
        calibration: (t.pairs > 0).then(|| t.covered as f64 / t.pairs as f64),
    };
    (s, verdict)
}

/// The report's title, the runs, how to read a cell and the table's header.
fn write_runs(s: &mut String, command: &str, runs: &[(PathBuf, Results)]) {
    let _ = writeln!(s, "# Repeatability of the lookup ratios\n");
    let _ = writeln!(
        s,
        "Written by `bench-harness repeat` — not edited by hand. {} back-to-back runs, each its \
         own process, of:\n\n```\n{command}\n```\n",
        runs.len()
    );
    for (i, (d, r)) in runs.iter().enumerate() {
        let c = &r.machine.conditions;
        let _ = writeln!(
            s,
            "- run {}: {} ({}), commit {}, wall {:.0} s, load {}→{}, steal {}, CPU {}, THP {}",
            i + 1,
            r.machine.date,
            d.display(),
            r.machine.git_commit,
            r.wall_seconds,
            c.load_start.map(|x| format!("{x:.2}")).unwrap_or_default(),
            c.load_end.map(|x| format!("{x:.2}")).unwrap_or_default(),
            c.steal_pct.map(|x| format!("{x:.2} %")).unwrap_or_default(),
            r.machine.cpu,
            c.thp
        );
    }
    let _ = writeln!(
        s,
        "\nEach cell: the run's ratio of ns/op to `blocked` (same size and target, median of the \
         per-round ratios, per CPU the rounds ran on, then their geometric mean) [its 95 % \
         interval, from a circular moving-block bootstrap over the rounds for results of \
         schema 6 on]. Deviation: the largest |run − mean| / mean.\n"
    );
    header(
        s,
        &["filter", "n", "target", "hits"],
        runs.len(),
        &["mean", "max deviation"],
    );
}

/// The ratio to `blocked` of `row`'s filter at `hits` % in every run, or `None` if a run
/// lacks it.
fn ratios_across(
    runs: &[(PathBuf, Results)],
    row: &crate::schema::Row,
    hits: u32,
) -> Option<Vec<Interval>> {
    let vals: Vec<_> = runs
        .iter()
        .filter_map(|(_, r)| {
            r.rows
                .iter()
                .find(|x| x.filter == row.filter && x.n == row.n && x.target_fpr == row.target_fpr)
                .and_then(|x| x.lookup(hits))
                .and_then(|x| x.blocked_ratio)
        })
        .collect();
    (vals.len() == runs.len()).then_some(vals)
}

/// What the ratios add up to across the runs.
#[derive(Default)]
struct Tally {
    /// The largest deviation from the runs' mean.
    worst: f64,
    /// Ratios compared.
    count: usize,
    /// Per ratio: the between-run variance of its log and the mean squared standard error its
    /// intervals imply (half the log width ÷ 1.96), to say whether the intervals are honest.
    between_sq: f64,
    /// See `between_sq`.
    se_sq: f64,
    /// The ratios outside the band, labelled.
    outside: Vec<String>,
    /// Calibration: over every ratio and ordered pair of runs (i, j), whether run i's 95 %
    /// interval holds run j's median.
    covered: usize,
    /// See `covered`.
    pairs: usize,
}

impl Tally {
    /// Count one ratio's values across the runs in; returns their mean and largest
    /// deviation.
    fn add(&mut self, vals: &[Interval], row: &crate::schema::Row, hits: u32) -> (f64, f64) {
        let mean = vals.iter().map(|v| v.mid).sum::<f64>() / vals.len() as f64;
        let dev = vals
            .iter()
            .map(|v| ((v.mid - mean) / mean).abs())
            .fold(0.0, f64::max);
        self.worst = self.worst.max(dev);
        self.count += 1;
        for (i, a) in vals.iter().enumerate() {
            for (j, b) in vals.iter().enumerate() {
                if i != j {
                    self.pairs += 1;
                    self.covered += usize::from(a.contains(b.mid));
                }
            }
        }
        if vals.len() > 1 && vals.iter().all(|v| v.mid > 0.0 && v.lo > 0.0) {
            let logs: Vec<f64> = vals.iter().map(|v| v.mid.ln()).collect();
            let m = logs.iter().sum::<f64>() / logs.len() as f64;
            self.between_sq +=
                logs.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (logs.len() - 1) as f64;
            self.se_sq += vals
                .iter()
                .map(|v| ((v.hi.ln() - v.lo.ln()) / 2.0 / crate::stats::Z95).powi(2))
                .sum::<f64>()
                / vals.len() as f64;
        }
        if dev > BAND {
            let label = format!(
                "{} n={} target={} {} %",
                row.filter,
                size_label(row.n),
                target_label(row.target_fpr),
                hits
            );
            self.outside.push(format!("{label}: ±{:.1} %", dev * 100.0));
        }
        (mean, dev)
    }

    /// The lines under the table: the band, the intervals' honesty, the calibration and the
    /// ratios outside the band.
    fn write(&self, s: &mut String) {
        let count = self.count;
        let _ = writeln!(
            s,
            "\n**{} of {count} lookup ratios to `blocked` within ±{:.0} % of the runs' mean; the largest deviation is {:.1} %.**",
            count - self.outside.len(),
            BAND * 100.0,
            self.worst * 100.0
        );
        if count > 0 {
            let (between, se) = (
                (self.between_sq / count as f64).sqrt(),
                (self.se_sq / count as f64).sqrt(),
            );
            let _ = writeln!(
                s,
                "\nAre the intervals honest? Over these {count} ratios the runs' standard deviation \
                 (of the log ratio, root mean square) is {:.1} %, and the standard error the runs' \
                 own 95 % intervals imply is {:.1} % (ratio {:.2}; above 1 would mean the intervals \
                 miss a between-run component).",
                between * 100.0,
                se * 100.0,
                if se > 0.0 { between / se } else { f64::NAN }
            );
        }
        let (covered, pairs) = (self.covered, self.pairs);
        if pairs > 0 {
            let _ = writeln!(
                s,
                "\n**Calibration: {:.1} % of one run's 95 % intervals hold another run's median** \
                 ({covered} of {pairs} ordered pairs of runs over the {count} ratios). Were the \
                 intervals honest and the runs alike, this would be about 83 %, not 95 %: the other \
                 run's median carries its own error, and two independent estimates with equal \
                 standard errors differ by less than 1.96 of one's standard errors with probability \
                 P(|Z| < 1.96/√2) = 0.83. Well below 83 % means the intervals miss what varies \
                 between runs.",
                100.0 * covered as f64 / pairs as f64
            );
        }
        if !self.outside.is_empty() {
            let _ = writeln!(s, "\nOutside the band:\n");
            for o in &self.outside {
                let _ = writeln!(s, "- {o}");
            }
        }
    }
}

/// One table row: a ratio in every run, their mean and largest deviation.
fn write_ratio_row(
    s: &mut String,
    row: &crate::schema::Row,
    hits: u32,
    vals: &[Interval],
    mean: f64,
    dev: f64,
) {
    let _ = writeln!(
        s,
        "| {} | {} | {} | {} % |{} {:.3} | {:.1} %{} |",
        row.filter,
        size_label(row.n),
        target_label(row.target_fpr),
        hits,
        vals.iter()
            .map(|v| format!(" {} |", v.show(3)))
            .collect::<String>(),
        mean,
        dev * 100.0,
        if dev > BAND {
            " **outside ±10 %**"
        } else {
            ""
        }
    );
}

/// Pairwise `compare` between the runs: the same runs should flag nothing.
fn write_compares(s: &mut String, runs: &[(PathBuf, Results)]) {
    let _ = writeln!(s, "\n## `compare` between the runs\n");
    let _ = writeln!(
        s,
        "A figure is flagged when it lies outside both runs' 95 % intervals and the difference \
         is significant at a family-wise 5 % over all compared figures (Holm); see `compare`.\n"
    );
    for i in 0..runs.len() {
        for j in i + 1..runs.len() {
            let ch = crate::compare::compare(&runs[i].1, &runs[j].1);
            let flagged: Vec<_> = ch.iter().filter(|c| c.flagged).collect();
            let _ = writeln!(
                s,
                "- run {} vs run {}: {} figures, {} outside both intervals, {} flagged{}",
                i + 1,
                j + 1,
                ch.len(),
                ch.iter().filter(|c| c.outside_both).count(),
                flagged.len(),
                if flagged.is_empty() {
                    String::new()
                } else {
                    format!(
                        " ({})",
                        flagged
                            .iter()
                            .take(8)
                            .map(|c| format!("{} {} {:+.1} %", c.what, c.figure, c.rel * 100.0))
                            .collect::<Vec<_>>()
                            .join("; ")
                    )
                }
            );
        }
    }
}

/// The experiments' paired ratios (a speed-up, ours ÷ a peer's time), run by run: a run's
/// interval says how well its rounds pin the figure down, the spread across runs how much the
/// machine moves it between processes.
fn experiment_ratios(s: &mut String, runs: &[(PathBuf, Results)]) {
    let Some((_, first)) = runs.first() else {
        return;
    };
    let named: Vec<(&str, &str)> = first
        .experiments
        .iter()
        .flat_map(|e| {
            e.ratios
                .iter()
                .map(move |r| (e.name.as_str(), r.name.as_str()))
        })
        .collect();
    if named.is_empty() {
        return;
    }
    let _ = writeln!(s, "\n## The experiments' paired ratios\n");
    let _ = writeln!(
        s,
        "Each cell: the run's median over its rounds [its 95 % interval]; then the median and \
         the range of the runs' medians, and in how many runs the interval lies wholly below \
         1, holds 1, or lies wholly above it.\n"
    );
    header(
        s,
        &["experiment", "ratio"],
        runs.len(),
        &["median of runs", "range", "below / holding / above 1"],
    );
    for (exp, name) in named {
        let vals: Vec<_> = runs
            .iter()
            .filter_map(|(_, r)| {
                r.experiments
                    .iter()
                    .find(|e| e.name == exp)
                    .and_then(|e| e.ratios.iter().find(|x| x.name == name))
                    .map(|x| x.ratio)
            })
            .collect();
        if vals.len() != runs.len() {
            continue;
        }
        let mids: Vec<f64> = vals.iter().map(|v| v.mid).collect();
        let (lo, hi) = mids
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| {
                (a.min(x), b.max(x))
            });
        let below = vals.iter().filter(|v| v.hi < 1.0).count();
        let above = vals.iter().filter(|v| v.lo > 1.0).count();
        let _ = writeln!(
            s,
            "| {exp} | {name} |{} {:.2} | {lo:.2}–{hi:.2} | {below} / {} / {above} |",
            vals.iter()
                .map(|v| format!(" {} |", v.show(2)))
                .collect::<String>(),
            crate::stats::median(&mids),
            vals.len() - below - above,
        );
    }
}

/// A Markdown table's header: the `lead` columns, one column per run, then the `tail` ones.
fn header(s: &mut String, lead: &[&str], runs: usize, tail: &[&str]) {
    let cols: Vec<String> = lead
        .iter()
        .map(|c| c.to_string())
        .chain((1..=runs).map(|i| format!("run {i}")))
        .chain(tail.iter().map(|c| c.to_string()))
        .collect();
    let _ = writeln!(s, "| {} |", cols.join(" | "));
    let _ = writeln!(s, "|{}", "---|".repeat(cols.len()));
}
