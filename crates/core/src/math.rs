//! Every sizing and accuracy formula of the workspace, one module per filter family.
//!
//! Variants call these functions; nobody re-derives `m`, `k` or an FPR inline. Each
//! submodule names its source (paper or specification), gives the derivation of each
//! formula in one line or a few, and asserts one worked figure in its docs. Notation: `n`
//! items, `m` bits, `k` probes per key, `p` the target false-positive rate (FPR).
//!
//! Every function is re-exported here, so `bloomlab_core::math::classic_bits` and
//! `bloomlab_core::math::classic::classic_bits` name the same thing.
//!
//! | module | family | source |
//! |---|---|---|
//! | [`classic`] | classic Bloom filter | Bloom 1970 |
//! | [`blocked`] | blocked Bloom filter | Putze, Sanders & Singler 2007 |
//! | [`counting`] | counting Bloom filter | Fan, Cao, Almeida & Broder 2000 |
//! | [`cuckoo`] | cuckoo filter | Fan, Andersen, Kaminsky & Mitzenmacher 2014 |
//! | [`ribbon`] | Ribbon filter | Dillinger & Walzer 2021 |
//! | [`scalable`] | scalable Bloom filter | Almeida, Baquero, Preguiça & Hutchison 2007 |
//! | [`sbbf`] | split-block Bloom filter | Parquet `BloomFilter.md` |
//! | [`shared`] | checks, lower bound, Poisson weights | Carter et al. 1978 |

pub mod blocked;
pub mod classic;
pub mod counting;
pub mod cuckoo;
pub mod float;
pub mod ribbon;
pub mod sbbf;
pub mod scalable;
pub mod shared;

pub use blocked::*;
pub use classic::*;
pub use counting::*;
pub use cuckoo::*;
pub use ribbon::*;
pub use sbbf::*;
pub use scalable::*;
pub use shared::*;
