//! The formulas the variants share: the classic Bloom filter's sizing and FPR (the base of
//! the blocked, split-block, counting and scalable filters' sizing), the shared checks,
//! bounds and Poisson weights, and the `f64` functions without std ([`float`]).
//!
//! Each variant's own formulas live beside its probe code, in its crate's `math` module
//! (`bloomlab_blocked::math`, `bloomlab_cuckoo::math`, `bloomlab_ribbon::math`,
//! `bloomlab_sbbf::math`, `bloomlab_scalable::math`, `bloomlab_counting::math`,
//! `bloomlab_expandable`'s, `bloomlab_jvm`'s sizing); the facade gathers them under
//! `bloomlab::math`. Nobody re-derives `m`, `k` or an FPR inline. Each module (and each section
//! below) names its source (paper or specification), gives the derivation of each formula in one line or a few, and
//! asserts one worked figure in its docs. Notation: `n` items, `m` bits, `k` probes per key,
//! `p` the target false-positive rate (FPR).
//!
//! One path for each: `bloomlab_core::math::classic_bits` (the modules below are private).
//!
//! | part | what | source |
//! |---|---|---|
//! | [`classic_bits`] and the other `classic_*` | classic Bloom filter | Bloom 1970 |
//! | [`validate_fpr`], [`lower_bound_bits_per_item`], [`PoissonPmf`], … | checks, lower bound, Poisson weights | Carter et al. 1978 |
//!
//! # The classic Bloom filter
//!
//! `m` bits, `k` independent probes per key.
//!
//! Source: Bloom 1970 ("Space/time trade-offs in hash coding with allowable errors") for the
//! FPR `(1 − e^(−kn/m))^k` and its optimum `k = (m/n)·ln 2`; Swamidass & Baldi 2007 for the
//! cardinality estimate from the fill.
//!
//! Worked figure: a 1 % target needs 9.59 bits/item and 7 probes.
//!
//! ```
//! use bloomlab_core::math::{classic_bits, classic_bits_per_item, classic_hashes};
//! let bpi = classic_bits_per_item(0.01).unwrap();
//! assert!((bpi - 9.585).abs() < 1e-3);
//! let m = classic_bits(1_000_000, 0.01).unwrap();
//! assert_eq!(classic_hashes(m, 1_000_000), 7);
//! ```
//!
//! # Shared checks, bounds and weights
//!
//! Helpers every formula module shares: parameter checks, the conversion of a bit count to
//! `u64`, the information-theoretic lower bound, the bisection on bits/item, and the Poisson
//! weights of block loads.
//!
//! Sources: the lower bound `log2(1/p)` bits/item is Carter, Floyd, Gill, Markowsky & Wegman
//! 1978 ("Exact and approximate membership testers"); the Poisson law of a block's load is the
//! limit of the binomial `Bin(n, 1/blocks)` for many blocks (Putze, Sanders & Singler 2007,
//! §3).
//!
//! Worked figure: a 1 % target cannot be met by any structure below 6.64 bits/item.
//!
//! ```
//! let bound = bloomlab_core::math::lower_bound_bits_per_item(0.01).unwrap();
//! assert!((bound - 6.644).abs() < 1e-3);
//! ```

mod classic;
pub mod float;
mod shared;

pub use classic::*;
pub use shared::*;
