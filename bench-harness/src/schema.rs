//! The one results schema: what `run` writes to `results.json` and `plot`/`recommend` read.

use serde::{Deserialize, Serialize};

use crate::adapters::Info;
use crate::stats::Interval;

/// Measurement conditions live with the code that controls them; re-exported as part of the
/// schema.
pub use crate::control::Conditions;

/// Bumped whenever a field changes meaning. 4: lookup rounds move across CPUs and every
/// timing figure is the geometric mean of per-CPU medians (`Lookup::round_cpus`). 5: keys are
/// byte strings of a recorded shape (`RunConfig::key_shape`), cache sizes are numbers
/// (`Machine::cache_bytes`), every row has `bytes_over_llc`, entries may be sized at equal
/// memory (`FilterInfo::equal_memory`), `sbbf-rs` is sized to meet the target, and the
/// warm-up pass shares no key with the timed passes. 6: the wall time of every phase of the
/// run (`Results::phases`), and paired-ratio intervals from a circular moving-block
/// bootstrap over rounds (`crate::stats::paired_ratio_blocked`), so they widen when rounds
/// drift.
pub const SCHEMA_VERSION: u32 = 6;

/// The oldest version [`crate::report::read`] still loads: a version-4 file has no cache
/// numbers (its rows read as of unknown cache residence) and was measured on `u64` keys with
/// a warm-up that touched the timed non-members; `compare` refuses to set files of different
/// versions against each other.
pub const OLDEST_READABLE: u32 = 4;

/// Everything one run measured.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Results {
    /// [`SCHEMA_VERSION`] of the writer.
    pub schema_version: u32,
    /// Machine, toolchain, commit, date.
    pub machine: Machine,
    /// The run's settings.
    pub config: RunConfig,
    /// How keys are generated and presented.
    pub keys: String,
    /// Every filter measured.
    pub filters: Vec<FilterInfo>,
    /// Peers that are not in this build, and why.
    pub left_out: Vec<String>,
    /// Memory floor per size: ns per random 64-byte read over a buffer the size of a classic
    /// 1 % filter for that size (the line drawn on the ns/op plot).
    pub size_floors: Vec<SizeFloor>,
    /// One row per filter × target FPR × size.
    pub rows: Vec<Row>,
    /// Named experiments.
    pub experiments: Vec<Experiment>,
    /// Wall time of the run.
    pub wall_seconds: f64,
    /// Wall time of each phase of the run, in the order they ran (empty before version 6).
    #[serde(default)]
    pub phases: Vec<Phase>,
}

/// One phase of a run and its wall time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Phase {
    /// What ran: `n = 10^6: builds`, `experiment overfill`, …
    pub name: String,
    /// Its wall time, seconds.
    pub seconds: f64,
    /// The CPU time the process used in it (every thread), seconds: on a loaded machine the
    /// wall time also holds the time other processes had the cores.
    #[serde(default)]
    pub cpu_seconds: f64,
}

/// An entry's static facts, as recorded: the registry's [`Info`] with owned strings and the
/// kind by name (bloom, counting, cuckoo, static, quotient, scalable, exact).
pub type FilterInfo = Info<String, String>;

/// Machine description.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// CPU model name.
    pub cpu: String,
    /// Logical cores.
    pub cores: usize,
    /// Cache sizes, e.g. `L1d 32K, L2 512K, L3 32768K`.
    pub caches: String,
    /// The same sizes as numbers (bytes); absent where the OS does not say.
    #[serde(default)]
    pub cache_bytes: CacheBytes,
    /// `rustc --version`.
    pub rustc: String,
    /// `git rev-parse HEAD` (with `-dirty` if the tree had changes).
    pub git_commit: String,
    /// UTC date and time of the run.
    pub date: String,
    /// OS and architecture.
    pub os: String,
    /// What the run controlled and what it could only record.
    pub conditions: Conditions,
}

/// Cache sizes in bytes (CPU 0's view: L1 data, L2, and the last level).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CacheBytes {
    /// Level-1 data cache.
    pub l1d: Option<u64>,
    /// Level-2 cache.
    pub l2: Option<u64>,
    /// Last-level cache (the highest level listed; L3 where there is one).
    pub llc: Option<u64>,
}

/// A figure measured with its structure inside the last-level cache or not: a row whose
/// bytes are at most half the LLC counts as in cache (the lookup streams, the other filters
/// of the round and the rest of the process share the cache), above 2× as out of cache, and
/// between the two as "near LLC".
pub fn residence(bytes_over_llc: Option<f64>) -> &'static str {
    match bytes_over_llc {
        None => "cache unknown",
        Some(x) if x <= 0.5 => "in cache",
        Some(x) if x < 2.0 => "near LLC",
        Some(_) => "out of cache",
    }
}

/// Settings of a run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunConfig {
    /// `--full` given.
    pub full: bool,
    /// Sizes measured.
    pub sizes: Vec<u64>,
    /// Target FPRs.
    pub fprs: Vec<f64>,
    /// Key seed.
    pub seed: u64,
    /// Non-member probes per FPR measurement.
    pub fpr_probes: u64,
    /// Positive percentages of the lookup mixes.
    pub mixes: Vec<u32>,
    /// Interleaved rounds per lookup figure (one timed pass per filter and mix per round,
    /// after one discarded warm-up pass; the median is reported with its interval).
    pub lookup_passes: u32,
    /// How filters were grouped for interleaving (all of one size together, or per target
    /// at sizes where memory does not allow it).
    pub grouping: String,
    /// Keys per lookup pass (capped by n).
    pub lookup_keys: u64,
    /// `--keys`: `u64`, `uuid`, `str:LEN`, `url` or `file:PATH`.
    #[serde(default = "u64_shape")]
    pub key_shape: String,
    /// `--zipf`: the lookup streams' Zipf exponent (absent: uniform).
    #[serde(default)]
    pub zipf: Option<f64>,
}

fn u64_shape() -> String {
    "u64".into()
}

/// Memory floor for one size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SizeFloor {
    /// Items.
    pub n: u64,
    /// Buffer bytes (a classic 1 % filter's size).
    pub bytes: u64,
    /// ns per independent random 64-byte read (the floor).
    pub ns: f64,
    /// ns per dependent random 64-byte read (pointer chase): the latency when nothing overlaps.
    pub dependent_ns: f64,
}

/// Lookup cost at one positive fraction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Lookup {
    /// Percent of the stream that are members.
    pub positive_pct: u32,
    /// Median ns per lookup over the rounds.
    pub ns: f64,
    /// 95 % bootstrap interval of `ns`.
    pub ns_ci: Interval,
    /// ns per lookup in each interleaved round (the samples behind `ns`).
    pub rounds: Vec<f64>,
    /// Independently allocated builds the rounds cycled through: round `i` timed build
    /// `i % replicas` (the intervals resample builds, then rounds).
    #[serde(default = "one")]
    pub replicas: u32,
    /// The CPU each round started on (the driver moves the rounds across the CPUs; figures
    /// are geometric means of per-CPU medians). Empty in results written before the rounds
    /// moved (schema version 3): one stratum.
    #[serde(default)]
    pub round_cpus: Vec<usize>,
    /// `ns` / the memory floor at this filter's size.
    pub floor_ratio: f64,
    /// The fastest peer of the same kind at the same size and target (fixed-parameter peers
    /// count for targets at or above their own FPR).
    pub peer: Option<String>,
    /// `ns` / that peer's, with its interval (`None` if no such peer was measured).
    pub peer_ratio: Option<Interval>,
    /// `ns` / the `blocked` filter's at the same size and target (fixed-parameter rows: at
    /// the target nearest 1 %), with its interval.
    pub blocked_ratio: Option<Interval>,
}

/// One filter × target × size.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    /// Registry name.
    pub filter: String,
    /// Family.
    pub kind: String,
    /// A crates.io peer.
    pub peer: bool,
    /// Items inserted.
    pub n: u64,
    /// Target FPR, `None` for fixed-parameter filters.
    pub target_fpr: Option<f64>,
    /// Parameters the filter actually used.
    pub params: String,
    /// Interleaving group (rows of one group were measured in the same rounds).
    pub group: u32,
    /// Median build time per inserted key (whole build / n).
    pub build_ns_per_item: f64,
    /// Its interval over the build passes (zero width with one pass).
    pub build_ci: Interval,
    /// Build passes timed.
    pub build_passes: u32,
    /// Inserts the filter refused (a full cuckoo table).
    pub refused_inserts: u64,
    /// Members sampled in the 100 % lookup stream that tested negative (must be 0).
    pub false_negatives: u64,
    /// Lookup costs per mix.
    pub lookups: Vec<Lookup>,
    /// Measured FPR over `fpr_probes` distinct non-members.
    pub measured_fpr: f64,
    /// Its 95 % Wilson interval.
    pub fpr_ci: Interval,
    /// Probes used.
    pub fpr_probes: u64,
    /// Probe candidates excluded because they were members.
    pub overlap_excluded: u64,
    /// The structure's own formula at n, if it has one.
    pub theoretical_fpr: Option<f64>,
    /// Live heap bytes of the built structure.
    pub heap_bytes: u64,
    /// `heap_bytes` over the measuring machine's last-level cache (absent if unknown): above
    /// 1 the structure cannot sit in the LLC (see [`residence`]).
    #[serde(default)]
    pub bytes_over_llc: Option<f64>,
    /// heap_bytes × 8 / n.
    pub bits_per_item: f64,
    /// log2(1/measured ε) (the lower bound on bits/item at that ε); `None` when ε = 0.
    pub log2_inv_fpr: Option<f64>,
    /// (bits/item ÷ log2(1/ε) − 1) × 100.
    pub wasted_pct: Option<f64>,
    /// ns per random 64-byte read over a buffer of heap_bytes.
    pub floor_ns: f64,
}

impl Lookup {
    /// This series ÷ `other`'s, paired round by round (the median of the per-round ratios, per
    /// CPU, with its block-bootstrap interval; see [`crate::stats::paired_ratio_blocked`]), or `None` if
    /// the two were not timed in the same rounds on the same builds' rotation and CPUs.
    /// Callers that know the rows' interleaving groups check those too.
    pub fn paired_ratio(&self, other: &Lookup) -> Option<Interval> {
        (!self.rounds.is_empty()
            && self.rounds.len() == other.rounds.len()
            && self.replicas == other.replicas
            && self.round_cpus == other.round_cpus)
            .then(|| {
                crate::stats::paired_ratio_blocked(
                    &self.rounds,
                    &other.rounds,
                    self.replicas as usize,
                    &self.round_cpus,
                )
            })
    }
}

impl Row {
    /// This row's lookup at `pct` % members ÷ `reference`'s: paired round by round
    /// ([`Lookup::paired_ratio`]) when both were timed in the same rounds (same interleaving
    /// group), else the ratio of the two figures with `[lo_a / hi_b, hi_a / lo_b]`.
    pub fn ratio_to(&self, reference: &Row, pct: u32) -> Option<Interval> {
        let a = self.lookup(pct)?;
        let b = reference.lookup(pct)?;
        (self.group == reference.group)
            .then(|| a.paired_ratio(b))
            .flatten()
            .or_else(|| Some(crate::stats::unpaired_ratio(&a.ns_ci, &b.ns_ci)))
    }

    /// Lookup at `pct` % positives.
    pub fn lookup(&self, pct: u32) -> Option<&Lookup> {
        self.lookups.iter().find(|l| l.positive_pct == pct)
    }
}

fn one() -> u32 {
    1
}

fn rate_default() -> bool {
    true
}

/// One named experiment's output: series of (x, measured y, theoretical y).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Experiment {
    /// Registry name (`overfill`, …).
    pub name: String,
    /// Title for tables and plots.
    pub title: String,
    /// What it shows and how.
    pub description: String,
    /// X-axis label.
    pub x_label: String,
    /// Y-axis label.
    pub y_label: String,
    /// Plot y on a log scale.
    pub log_y: bool,
    /// Plot x on a log scale.
    pub log_x: bool,
    /// y is a rate in [0, 1] shown as a percentage (FPRs); `false` for plain quantities such
    /// as bits/item. Absent in older results, which only had rates.
    #[serde(default = "rate_default")]
    pub y_is_rate: bool,
    /// The series.
    pub series: Vec<Series>,
    /// The experiment's headline ratios, each paired within its rounds, with a 95 % interval
    /// (the figures `repeat` follows from run to run); empty where an experiment has none.
    /// Absent in older results.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ratios: Vec<NamedRatio>,
}

/// How an experiment's axis is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// A linear axis.
    Linear,
    /// A logarithmic axis.
    Log,
    /// A rate in [0, 1] such as an FPR: logarithmic, its values shown as percentages (on the
    /// y axis; an x axis is drawn as [`Scale::Log`]).
    Rate,
}

/// An experiment's axis: its label and [`Scale`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Axis<'a> {
    /// The label.
    pub label: &'a str,
    /// How it is drawn.
    pub scale: Scale,
}

impl<'a> Axis<'a> {
    /// A linear axis labelled `label`.
    pub fn linear(label: &'a str) -> Self {
        Axis {
            label,
            scale: Scale::Linear,
        }
    }

    /// A logarithmic axis labelled `label`.
    pub fn log(label: &'a str) -> Self {
        Axis {
            label,
            scale: Scale::Log,
        }
    }

    /// A rate axis labelled `label` (see [`Scale::Rate`]).
    pub fn rate(label: &'a str) -> Self {
        Axis {
            label,
            scale: Scale::Rate,
        }
    }
}

impl Experiment {
    /// Experiment `name` with its `title` and `description`, `series` drawn on axes `x` and
    /// `y`, and no headline ratios (set [`Experiment::ratios`] where it has some).
    pub fn new(
        name: &str,
        title: String,
        description: String,
        (x, y): (Axis<'_>, Axis<'_>),
        series: Vec<Series>,
    ) -> Experiment {
        Experiment {
            name: name.into(),
            title,
            description,
            x_label: x.label.into(),
            y_label: y.label.into(),
            log_y: y.scale != Scale::Linear,
            log_x: x.scale != Scale::Linear,
            y_is_rate: y.scale == Scale::Rate,
            series,
            ratios: Vec::new(),
        }
    }
}

/// One named, paired ratio of an experiment (a speed-up, or ours ÷ a peer's time).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NamedRatio {
    /// What is divided by what, e.g. `blocked build: insert_batch ÷ insert_parallel`.
    pub name: String,
    /// The median over the rounds and its 95 % interval.
    pub ratio: Interval,
}

/// One curve of an experiment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Legend label.
    pub label: String,
    /// Filter name.
    pub filter: String,
    /// A crates.io peer.
    pub peer: bool,
    /// Points.
    pub points: Vec<Point>,
    /// Anything worth saying (refused inserts, false negatives…).
    pub note: String,
}

/// One measured point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// X value.
    pub x: f64,
    /// Measured value.
    pub y: f64,
    /// Theoretical value, if the structure has a formula.
    pub theory: Option<f64>,
    /// 95 % interval of `y` when it is measured with sampling error (a rate over probes:
    /// Wilson); `None` for exact quantities (bits/item from heap bytes) and formulas.
    #[serde(default)]
    pub ci: Option<Interval>,
    /// 95 % interval of `x` when `x` is itself a measured rate (the static-space experiment
    /// puts the measured FPR on x).
    #[serde(default)]
    pub x_ci: Option<Interval>,
}
