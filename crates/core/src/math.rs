//! The formulas the variants share: the classic Bloom filter's sizing and FPR (the base of
//! the blocked, split-block, counting and scalable filters' sizing), the shared checks,
//! bounds and Poisson weights, and the `f64` functions without std ([`float`]).
//!
//! Each variant's own formulas live beside its probe code, in its crate's `math` module
//! (`bloomlab_blocked::math`, `bloomlab_cuckoo::math`, `bloomlab_ribbon::math`,
//! `bloomlab_sbbf::math`, `bloomlab_scalable::math`, `bloomlab_counting::math`,
//! `bloomlab_expandable`'s, `bloomlab_jvm`'s sizing); the facade gathers them under
//! `bloomlab::math`. Nobody re-derives `m`, `k` or an FPR inline. Each module names its source
//! (paper or specification), gives the derivation of each formula in one line or a few, and
//! asserts one worked figure in its docs. Notation: `n` items, `m` bits, `k` probes per key,
//! `p` the target false-positive rate (FPR).
//!
//! Every function is re-exported here, so `bloomlab_core::math::classic_bits` and
//! `bloomlab_core::math::classic::classic_bits` name the same thing.
//!
//! | module | family | source |
//! |---|---|---|
//! | [`classic`] | classic Bloom filter | Bloom 1970 |
//! | [`shared`] | checks, lower bound, Poisson weights | Carter et al. 1978 |

pub mod classic;
pub mod float;
pub mod shared;

pub use classic::*;
pub use shared::*;
