//! The seed documents' real uses of approximate-membership filters, runnable and measured.
//!
//! - [`lsm`]: an LSM read path — sorted table files with their filter inside, one shared
//!   bounded filter cache, point lookups counting data-block reads.
//! - [`admission`]: one-hit-wonder cache admission (Maggs & Sitaraman 2015).
//! - [`dedup`]: per-user "already seen" filtering against exact sets.
//! - [`inspect`]: what a serialized filter is, and seed 003's audit checklist against it.
//! - [`any`]: decode a serialized filter of any variant.
//!
//! Each has an example under `examples/` that runs it at full size and writes its table to
//! `results/uses/`, and a smoke test at CI size.
#![warn(missing_docs)]

pub mod any;
pub mod inspect;
