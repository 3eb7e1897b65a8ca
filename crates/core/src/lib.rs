//! Foundation of the bloomlab workspace: comparable approximate-membership filters.
//!
//! - [`Filter`] / [`RemovableFilter`]: the small, object-safe traits every variant implements.
//! - [`math`]: every sizing and accuracy formula, each with its source.
//! - [`hash`]: hash once, derive the probes (Kirsch–Mitzenmacher), reduce with fastrange.
//! - [`bits`]: a bit array whose bits past the end are always zero.
//! - [`mod@format`]: the checked, versioned envelope every byte format uses.
//! - [`simd`]: the vector kernels, re-exported from `bloomlab-simd` (every other crate, this one
//!   included, is `#![forbid(unsafe_code)]`).
//! - [`Key`]: a stable byte encoding for strings, byte slices and integers.
//! - [`Error`]: typed errors; nothing panics on user input.
//! - [`meta`]: the metadata and trait glue every variant shares.
//! - [`parallel`]: the parallel builds the variants share, and the report each returns.
//! - [`sync`]: the locks and atomics of the parallel code (std's, or loom's under `--cfg loom`).
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod bits;
pub mod error;
pub mod filter;
pub mod format;
pub mod hash;
pub mod key;
pub mod math;
pub mod meta;
pub mod parallel;
pub mod sync;

pub use bits::BitArray;
pub use error::{DecodeError, Error, Result};
pub use filter::{Filter, FilterParams, RemovableFilter};
pub use format::Variant;
pub use hash::{HashScheme, KeyHash, SchemeDescriptor, SchemeId, Xxh3Scheme};
pub use key::Key;

/// The vector kernels, from their own crate: see [`bloomlab_simd`].
pub use bloomlab_simd as simd;
