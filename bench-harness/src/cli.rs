//! Command line: `run` (the default), `compare`, `repeat`, `plot`, `recommend`, `list`,
//! `classic-table`. A filter file is read by the `bloomlab` command: `bloomlab inspect FILE`.

use crate::error::Error;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::driver::{self, Plan};
use crate::keys::KeyShape;
use crate::recommend::{self, Needs};
use crate::{adapters, experiments, plot, report};

/// Measure approximate-membership filters (ours and crates.io peers) and choose one with data.
#[derive(Debug, Parser)]
#[command(
    name = "bench-harness",
    version,
    args_conflicts_with_subcommands = true,
    after_help = "To read a filter file (ours, Spark's, Guava's, a Parquet bloom filter section or a \
                  Parquet file): `bloomlab inspect FILE` (`cargo run -p bloomlab-cli -- inspect FILE`)."
)]
pub struct Cli {
    /// What to do (default: run).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Options of the default `run`.
    #[command(flatten)]
    pub run: RunArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Measure every selected filter × target FPR × size; write results/ and plots (default).
    Run(RunArgs),
    /// Compare two results files: every lookup ratio, bits/item and FPR; a change is flagged
    /// only when it lies outside both runs' 95 % intervals and is significant at a
    /// family-wise 5 % over all compared figures (Holm).
    Compare(CompareArgs),
    /// Run one `run` command N times back to back (each in its own process) and write the
    /// spread of every lookup ratio to `blocked` (results/repeatability.md).
    Repeat(RepeatArgs),
    /// Paired lookup ratios of chosen pairs of entries (A/B), at every size of a results file.
    Ratio(RatioArgs),
    /// Regenerate every plot and the HTML report from an existing results JSON without
    /// measuring.
    Plot(PlotArgs),
    /// Pick a structure for your needs from measured results and explain the choice.
    Recommend(RecommendArgs),
    /// List the registered filters and experiments.
    List,
    /// Print the classic filter's table quoted in the README.
    ClassicTable,
}

/// Options of `compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The earlier results JSON.
    pub a: PathBuf,
    /// The later results JSON.
    pub b: PathBuf,
    /// Exit non-zero when a flagged change exceeds this many percent.
    #[arg(long)]
    pub fail_above: Option<f64>,
}

/// Options of `ratio`.
#[derive(Debug, Args)]
pub struct RatioArgs {
    /// Pairs of entries, each written A/B (e.g. sbbf/sbbf-rs-parquet classic/fastbloom).
    #[arg(required = true)]
    pub pairs: Vec<String>,
    /// Results JSON to read.
    #[arg(long, default_value = "results/results.json")]
    pub results: PathBuf,
    /// Target FPR of the rows to pair (fixed-parameter entries stand in for any target).
    #[arg(long, default_value_t = 0.01)]
    pub fpr: f64,
    /// Lookup mix: percent of members.
    #[arg(long, default_value_t = 50)]
    pub hits: u32,
}

/// Options of `repeat`.
#[derive(Debug, Args)]
pub struct RepeatArgs {
    /// Number of back-to-back runs.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(2..=50))]
    pub runs: u32,
    /// Directory for the runs' results (run-1/, run-2/, …).
    #[arg(long, default_value = "results/repeat")]
    pub dir: PathBuf,
    /// Where to write the report.
    #[arg(long, default_value = "results/repeatability.md")]
    pub report: PathBuf,
    /// The `run` options, after `--` (without --out).
    #[arg(last = true)]
    pub args: Vec<String>,
}

/// Options of `run`.
#[derive(Debug, Args, Clone, Default)]
pub struct RunArgs {
    /// Comma-separated filter names (see `list`); default: all.
    #[arg(long, value_delimiter = ',')]
    pub filters: Option<Vec<String>>,
    /// Comma-separated target FPRs, each in (0, 1); default: 0.001,0.01,0.03.
    #[arg(long, value_delimiter = ',', value_parser = parse_fpr)]
    pub fpr: Option<Vec<f64>>,
    /// Comma-separated sizes (items), e.g. 1e5,1e6; default: 1e5,1e6 (1e7 and 1e8 added by
    /// --full). The default's out-of-LLC point is the many-filters experiment.
    #[arg(long, value_delimiter = ',', value_parser = parse_count)]
    pub n: Option<Vec<u64>>,
    /// Key seed.
    #[arg(long, default_value_t = 0x5EED_B100)]
    pub seed: u64,
    /// Output directory.
    #[arg(long, default_value = "results")]
    pub out: PathBuf,
    /// Add 10^7 and 10^8, the 25 % / 75 % mixes, 10^7 FPR probes and 10^6-item experiments. At 10^8
    /// the filters are built one target at a time (peak about 5.3 GiB of filters plus
    /// 0.9 GiB of keys); the progress bar shows an ETA.
    #[arg(long)]
    pub full: bool,
    /// Non-member probes per FPR figure (default 10^6; 10^7 with --full).
    #[arg(long, value_parser = parse_count)]
    pub probes: Option<u64>,
    /// Comma-separated experiments to run (see `list`), or `none`; default: all.
    #[arg(long, value_delimiter = ',')]
    pub experiments: Option<Vec<String>>,
    /// Design capacity for experiments (default 10^5; 10^6 with --full).
    #[arg(long, value_parser = parse_count)]
    pub experiment_n: Option<u64>,
    /// Interleaved timed rounds per lookup figure (default 31; 15 with --full); the median
    /// is reported with its 95 % interval.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub passes: Option<u32>,
    /// Do not draw plots.
    #[arg(long)]
    pub no_plots: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// What the keys look like: `u64` (8 random bytes), `uuid` (16 random bytes), `str:LEN`
    /// (random printable strings of LEN bytes), `url` (URL-like strings of varying length)
    /// or `file:PATH` (one key per line). Every entry hashes the key's bytes through its own
    /// API, so the hash costs what it costs for that key.
    #[arg(long, default_value = "u64", value_parser = parse_keys)]
    pub keys: KeyShape,
    /// Draw lookups with Zipf skew of this exponent (above 0; e.g. 1.1) over members and
    /// non-members alike; default: uniform over distinct keys.
    #[arg(long, allow_negative_numbers = true, value_parser = crate::keys::parse_zipf)]
    pub zipf: Option<f64>,
    /// Also time T threads querying one shared filter (the read-only filters and the atomic
    /// blocked filter): aggregate lookups per second beside the single-thread figures.
    #[arg(long, allow_negative_numbers = true, value_parser = parse_threads)]
    pub threads: Option<usize>,
}

/// Parse `--keys` (see [`KeyShape`]).
pub fn parse_keys(s: &str) -> Result<KeyShape, Error> {
    s.parse()
}

/// Parse `--threads`: a whole number from 1 to 1024.
pub fn parse_threads(s: &str) -> Result<usize, Error> {
    let t: usize = s.trim().parse().map_err(|_| {
        Error::usage(format!(
            "--threads needs a whole number of threads (got {s:?})"
        ))
    })?;
    if (1..=1024).contains(&t) {
        Ok(t)
    } else {
        Err(Error::usage(format!(
            "--threads needs 1 to 1024 threads (got {t})"
        )))
    }
}

/// Options of `plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// Results JSON to read.
    #[arg(long, default_value = "results/results.json")]
    pub results: PathBuf,
    /// Where to write the plots alone (default: `plots/` beside the JSON, with the HTML
    /// report `index.html` beside the JSON, which also takes the out-of-cache charts from
    /// `large/results.json` beside it when there is one).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Options of `recommend`.
#[derive(Debug, Args)]
pub struct RecommendArgs {
    /// Number of items.
    #[arg(long, value_parser = parse_count)]
    pub n: u64,
    /// Highest acceptable false-positive rate, in (0, 1).
    #[arg(long, value_parser = parse_fpr)]
    pub fpr: f64,
    /// Keys must be removable.
    #[arg(long)]
    pub deletes: bool,
    /// The set grows past n and the structure must grow with it.
    #[arg(long)]
    pub grows: bool,
    /// Keys may be chosen by an adversary (needs a keyed hash).
    #[arg(long)]
    pub hostile_keys: bool,
    /// Memory budget: bytes, or with a unit (64KiB, 16MiB, 2GiB, 10MB).
    #[arg(long, value_parser = parse_bytes)]
    pub memory_budget: Option<u64>,
    /// Results JSON to read.
    #[arg(long, default_value = "results/results.json")]
    pub results: PathBuf,
    /// You can query a slice of keys at a time: batched entries may be recommended.
    #[arg(long)]
    pub batch: bool,
    /// What to rank by.
    #[arg(long, value_enum, default_value_t = recommend::Objective::Speed)]
    pub objective: recommend::Objective,
}

/// Parse a target FPR in (0, 1).
pub fn parse_fpr(s: &str) -> Result<f64, Error> {
    let p: f64 = s
        .trim()
        .parse()
        .map_err(|_| Error::usage(format!("{s:?} is not a number")))?;
    if p.is_finite() && p > 0.0 && p < 1.0 {
        Ok(p)
    } else {
        Err(Error::usage(format!(
            "a false-positive rate must be strictly between 0 and 1 (got {s}); write 1 % as 0.01"
        )))
    }
}

/// Parse a positive count: `1000000`, `1e6`, `1_000_000`.
pub fn parse_count(s: &str) -> Result<u64, Error> {
    let t = s.trim().replace('_', "");
    let v: f64 = t
        .parse()
        .map_err(|_| Error::usage(format!("{s:?} is not a number (use e.g. 1000000 or 1e6)")))?;
    if !(v.is_finite() && v >= 1.0 && v.fract() == 0.0 && v <= 1e15) {
        return Err(Error::usage(format!(
            "{s:?} must be a whole number between 1 and 10^15"
        )));
    }
    Ok(v as u64)
}

/// Parse a byte count with an optional unit (B, KB, MB, GB, KiB, MiB, GiB).
pub fn parse_bytes(s: &str) -> Result<u64, Error> {
    let t = s.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "kb" | "k" => 1e3,
        "mb" | "m" => 1e6,
        "gb" | "g" => 1e9,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        u => {
            return Err(Error::usage(format!(
                "unknown unit {u:?} in {s:?} (use B, KB, MB, GB, KiB, MiB, GiB)"
            )));
        }
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| Error::usage(format!("{s:?} is not a byte count (e.g. 16MiB or 1048576)")))?;
    if !(v.is_finite() && v > 0.0) {
        return Err(Error::usage(format!("{s:?} must be a positive byte count")));
    }
    Ok((v * mult).round() as u64)
}

/// Turn `run` options into a plan (validating names).
pub fn plan(args: &RunArgs) -> Result<(Vec<adapters::Entry>, Plan), Error> {
    let entries = adapters::select(args.filters.as_deref())?;
    let mut plan = if args.full {
        Plan::full(args.seed)
    } else {
        Plan::quick(args.seed)
    };
    if let Some(f) = &args.fpr {
        if f.is_empty() {
            return Err(Error::usage("--fpr needs at least one value"));
        }
        plan.fprs = f.clone();
    }
    if let Some(n) = &args.n {
        if n.is_empty() {
            return Err(Error::usage("--n needs at least one value"));
        }
        plan.sizes = n.clone();
    }
    if let Some(p) = args.probes {
        plan.fpr_probes = usize::try_from(p).map_err(|_| Error::usage("--probes too large"))?;
    }
    if let Some(e) = args.experiment_n {
        plan.experiment_n = e;
    }
    if let Some(p) = args.passes {
        plan.lookup_passes = p;
    }
    plan.progress = !args.quiet;
    plan.keys = args.keys.clone();
    plan.zipf = args.zipf;
    plan.threads = args.threads;
    if let KeyShape::File(path) = &plan.keys {
        // Read once up front, so a missing or empty file is one clear error before anything
        // is measured.
        crate::keys::read_key_file(path)?;
    }
    if let Some(ex) = &args.experiments {
        if ex.len() == 1 && ex[0] == "none" {
            plan.experiments.clear();
        } else {
            experiments::validate(ex)?;
            plan.experiments = ex.clone();
        }
    }
    Ok((entries, plan))
}

/// `run`: measure, write results and plots; returns the summary path.
pub fn run(args: &RunArgs) -> Result<PathBuf, Error> {
    run_with_glance(args).map(|(p, _)| p)
}

/// `run`, also returning the results at a glance for the terminal.
pub fn run_with_glance(args: &RunArgs) -> Result<(PathBuf, String), Error> {
    let (entries, plan) = plan(args)?;
    let results = driver::run(&entries, &plan)?;
    report::write_all(&results, &args.out)?;
    if !args.no_plots {
        // The plots and the HTML report (index.html) beside the results.
        crate::html::write_beside(&results, &args.out.join(report::JSON), None)?;
    }
    Ok((
        args.out.join(report::SUMMARY),
        report::glance(&results, &args.out, !args.no_plots),
    ))
}

fn run_msg(args: &RunArgs) -> Result<String, Error> {
    run_with_glance(args).map(|(p, g)| format!("{g}wrote {}", p.display()))
}

fn plot_cmd(args: &PlotArgs) -> Result<Vec<PathBuf>, Error> {
    let results = report::read(&args.results)?;
    match &args.out {
        Some(d) => Ok(plot::plot_all(&results, d)?),
        // The plots, and the HTML report beside the JSON.
        None => Ok(vec![crate::html::write_beside(
            &results,
            &args.results,
            None,
        )?]),
    }
}

/// Run the parsed command; returns what to print on stdout (a failing `compare` is an error
/// carrying its report).
pub fn dispatch(cli: Cli) -> Result<String, Error> {
    match dispatch_status(cli)? {
        (text, false) => Ok(text),
        (text, true) => Err(Error::Failed(text)),
    }
}

/// Run the parsed command; returns what to print on stdout and whether the command failed
/// its own check (`compare --fail-above`), for a non-zero exit status.
pub fn dispatch_status(cli: Cli) -> Result<(String, bool), Error> {
    match cli.command {
        Some(Command::Compare(a)) => {
            let ra = report::read(&a.a)?;
            let rb = report::read(&a.b)?;
            if ra.schema_version != rb.schema_version {
                return Err(Error::usage(format!(
                    "{} has schema version {} and {} version {}: their figures are not the same \
                     statistic (each version changes what a figure means: see the results \
                     schema's version history); compare runs of one version",
                    a.a.display(),
                    ra.schema_version,
                    a.b.display(),
                    rb.schema_version
                )));
            }
            let changes = crate::compare::compare(&ra, &rb);
            let (text, fail) = crate::compare::report(&changes, a.fail_above);
            Ok((
                format!("compare {} -> {}\n{text}", a.a.display(), a.b.display()),
                fail,
            ))
        }
        Some(Command::Repeat(a)) => {
            let runs = crate::repeat::run_all(&a.args, a.runs, &a.dir)?;
            let command = format!(
                "cargo run --release -p bench-harness -- run {}",
                a.args.join(" ")
            );
            let (md, verdict) = crate::repeat::spread(&command, &runs);
            if let Some(parent) = a.report.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| Error::usage(format!("{}: {e}", parent.display())))?;
            }
            std::fs::write(&a.report, &md)
                .map_err(|e| Error::usage(format!("{}: {e}", a.report.display())))?;
            Ok((
                format!("{}\nwrote {}", verdict.lines(), a.report.display()),
                false,
            ))
        }
        other => dispatch_plain(other, cli.run).map(|t| (t, false)),
    }
}

fn dispatch_plain(command: Option<Command>, default_run: RunArgs) -> Result<String, Error> {
    match command {
        Some(Command::Compare(_)) | Some(Command::Repeat(_)) => unreachable!("handled above"),
        Some(Command::Ratio(a)) => {
            crate::ratio::table(&report::read(&a.results)?, &a.pairs, a.fpr, a.hits)
        }
        None => run_msg(&default_run),
        Some(Command::Run(a)) => run_msg(&a),
        Some(Command::Plot(a)) => plot_cmd(&a).map(|files| {
            files
                .iter()
                .map(|f| format!("wrote {}", f.display()))
                .collect::<Vec<_>>()
                .join("\n")
        }),
        Some(Command::Recommend(a)) => {
            let results = report::read(&a.results)?;
            let needs = Needs {
                n: a.n,
                fpr: a.fpr,
                deletes: a.deletes,
                grows: a.grows,
                hostile_keys: a.hostile_keys,
                memory_budget: a.memory_budget,
                batch: a.batch,
                objective: a.objective,
            };
            recommend::recommend(&results, &needs).map(|r| r.explanation)
        }
        Some(Command::List) => {
            let mut s = String::from("filters:\n");
            for e in adapters::registry() {
                s.push_str(&format!(
                    "  {:<16} {:<28} {}{}\n",
                    e.info.name,
                    e.info.source,
                    e.info.kind.name(),
                    if e.info.peer { " (peer)" } else { "" }
                ));
            }
            s.push_str("experiments:\n");
            for n in experiments::names() {
                s.push_str(&format!("  {n}\n"));
            }
            Ok(s)
        }
        Some(Command::ClassicTable) => Ok(crate::classic_table::table()?),
    }
}
