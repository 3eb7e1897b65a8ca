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
//! - [`declare`]: what each variant declares of itself once ([`Declared`]), from which the
//!   workspace's decoders, commands and harness are derived.
//!
//! The parallel builds three variants share, and their locks and atomics, are a crate of their
//! own, `bloomlab-parallel`.
//!
//! # no_std
//!
//! Without its default `std` feature the crate is `#![no_std]` and needs only `alloc`: it
//! builds for bare-metal targets such as `thumbv7em-none-eabihf`. The `std` feature gates
//! run-time CPU detection in the SIMD crate
//! (without it, an x86-64 build runs the kernels of the target features it was compiled
//! with), and the `f64` functions of the sizing formulas, which come from std with it and from
//! the `libm` crate without it ([`math::float`]: the two agree to the last bit for most
//! functions but not for all, so a size that falls exactly on a rounding boundary may differ;
//! every byte format records its sizes, so filters stay interchangeable). The errors implement
//! `core::error::Error` either way, and the `serde` feature works with or without std.
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod bits;
pub mod declare;
pub mod error;
pub mod filter;
pub mod format;
pub mod hash;
pub mod key;
pub mod math;
pub mod meta;

pub use bits::BitArray;
pub use declare::{Builder, Declaration, Declared};
pub use error::{DecodeError, Error, Result};
pub use filter::{Filter, FilterParams, PerKey, RemovableFilter};
pub use format::Variant;
pub use hash::{HashScheme, KeyHash, SchemeDescriptor, SchemeId, Xxh3Scheme};
pub use key::Key;

/// The vector kernels, from their own crate: see [`bloomlab_simd`].
pub use bloomlab_simd as simd;
