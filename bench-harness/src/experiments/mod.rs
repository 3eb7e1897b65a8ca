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

use crate::adapters::Entry;
use crate::error::Error;
use crate::schema::Experiment;

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
