//! The bloomlab benchmark harness: every filter (ours, crates.io peers, an exact set) behind
//! one adapter, measured by one driver into one results schema, with plots and a
//! data-driven `recommend`.
//!
//! - [`adapters`]: the adapter trait and the registry (add a variant there).
//! - [`driver`]: filters × target FPR × size → [`schema::Results`], every filter of a size
//!   interleaved round by round; [`stats`]: medians, intervals, paired ratios; [`control`]:
//!   pinning, huge pages, the thread CPU clock and the recorded machine conditions.
//! - [`compare`]: two results files, changes beyond both runs' intervals; [`repeat`]: N
//!   back-to-back runs and the spread of every ratio to `blocked`.
//! - [`experiments`]: named sections (overfill; later blocked-penalty, scalable-growth, …).
//! - [`report`], [`plot`], [`html`]: results.json, CSV, summary.md, SVG/PNG plots, and the
//!   HTML report `index.html`; [`choose`]: the choosing charts' candidates, Pareto frontier
//!   and label layout.
//! - [`recommend`]: choose a structure from measured results.
//! - [`Error`]: what can go wrong, one variant per kind of failure.

// Safe code throughout: the counting allocator behind the heap figures is a dependency's
// (see `alloc`).
#![forbid(unsafe_code)]
// Short functions: the threshold (100 lines) is in clippy.toml.
#![warn(clippy::too_many_lines)]

pub mod adapters;
pub mod alloc;
pub mod choose;
pub mod classic_table;
pub mod cli;
pub mod compare;
pub mod control;
pub mod driver;
pub mod error;
pub mod experiments;
pub mod floor;
pub mod html;
pub mod keys;
pub mod labels;
pub mod machine;
pub mod plot;
pub mod ratio;
pub mod recommend;
pub mod repeat;
pub mod report;
pub mod schema;
pub mod stats;

pub use error::Error;
