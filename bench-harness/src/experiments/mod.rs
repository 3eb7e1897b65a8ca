//! Experiments: named sections of a run, each producing [`Experiment`] series that the
//! results, CSV, summary and plots handle generically.
//!
//! # How to add an experiment
//! Write a module with `pub fn run(ctx: &Context) -> Result<Experiment, Error>`, then add
//! one line to [`REGISTRY`]. Use `ctx.entries` (the selected adapters; `Entry::new_empty`
//! gives a filter to insert into incrementally), `ctx.seed` for keys and `ctx.n` as the
//! design capacity.

pub mod blocked_penalty;
pub mod concurrent;
pub mod cuckoo_space;
pub mod expandable_growth;
pub mod keyed_attack;
pub mod many_filters;
pub mod overfill;
pub mod scalable_growth;
pub mod static_space;
pub mod threads;
pub mod zipf_inserts;

use crate::adapters::{Built, Entry, Spec};
use crate::error::Error;
use crate::schema::{Experiment, Point, Series};

/// What an experiment gets.
#[derive(Debug)]
pub struct Context<'a> {
    /// The selected filters.
    pub entries: &'a [Entry],
    /// Key seed.
    pub seed: u64,
    /// Design capacity.
    pub n: u64,
    /// Non-member probes per FPR figure.
    pub probes: usize,
    /// `--full`: every entry, where an experiment has a shorter default list.
    pub full: bool,
}

impl Context<'_> {
    /// A filter of `n` items at `fpr`, on this run's seed.
    pub fn spec(&self, n: u64, fpr: f64) -> Spec {
        Spec {
            n,
            fpr,
            seed: self.seed,
        }
    }
}

/// An experiment's entry point.
pub type RunFn = fn(&Context) -> Result<Experiment, Error>;

/// Every experiment, by name.
pub const REGISTRY: &[(&str, RunFn)] = &[
    ("overfill", overfill::run),
    ("keyed-attack", keyed_attack::run),
    ("blocked-penalty", blocked_penalty::run),
    ("scalable-growth", scalable_growth::run),
    ("expandable-space", expandable_growth::run_space),
    ("expandable-fpr", expandable_growth::run_fpr),
    ("cuckoo-space", cuckoo_space::run),
    ("static-space", static_space::run),
    ("concurrent", concurrent::run),
    ("many-filters", many_filters::run),
    (zipf_inserts::NAME, zipf_inserts::run),
];

/// All experiment names.
pub fn names() -> Vec<String> {
    REGISTRY.iter().map(|(n, _)| (*n).to_string()).collect()
}

/// Check experiment names, listing the known ones on error.
pub fn validate(names: &[String]) -> Result<(), Error> {
    for n in names {
        if !REGISTRY.iter().any(|(k, _)| k == n) {
            return Err(Error::usage(format!(
                "unknown experiment {n:?}; known experiments: {}",
                self::names().join(", ")
            )));
        }
    }
    Ok(())
}

/// Run one experiment by name.
pub fn run(name: &str, ctx: &Context) -> Result<Experiment, Error> {
    let (_, f) = REGISTRY
        .iter()
        .find(|(k, _)| *k == name)
        .ok_or_else(|| Error::usage(format!("unknown experiment {name:?}")))?;
    f(ctx)
}

/// How many of `keys` (each as its little-endian bytes) `f` says it may contain.
pub(crate) fn contained(f: &dyn Built, keys: &[u64]) -> usize {
    keys.iter()
        .filter(|&&k| f.contains(&k.to_le_bytes()))
        .count()
}

/// The FPR `f` shows on the non-members `probes`, as a point at `x`: the rate, its Wilson
/// 95 % interval, and the filter's own formula at its load as theory.
pub(crate) fn fpr_point(f: &dyn Built, probes: &[u64], x: f64) -> Point {
    let fp = contained(f, probes);
    Point {
        x,
        y: fp as f64 / probes.len() as f64,
        theory: f.theoretical_fpr(),
        ci: Some(crate::stats::wilson(
            fp as u64,
            probes.len() as u64,
            crate::stats::Z95,
        )),
        x_ci: None,
    }
}

/// The information-theoretic lower bound, log2(1/ε) bits/item, at each FPR in `eps`, as a
/// series labelled `label`.
pub(crate) fn lower_bound_series(label: &str, eps: &[f64]) -> Series {
    Series {
        label: label.into(),
        filter: "lower-bound".into(),
        peer: false,
        points: eps
            .iter()
            .map(|&e| {
                let b = bloomlab_core::math::lower_bound_bits_per_item(e).unwrap_or(f64::NAN);
                Point {
                    x: e,
                    y: b,
                    theory: Some(b),
                    ci: None,
                    x_ci: None,
                }
            })
            .collect(),
        note: String::new(),
    }
}

/// An entry's name in a legend, `(peer)` after a peer's.
pub(crate) fn entry_label(e: &Entry) -> String {
    format!(
        "{}{}",
        e.info.name,
        if e.info.peer { " (peer)" } else { "" }
    )
}
