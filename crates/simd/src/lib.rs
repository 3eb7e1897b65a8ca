//! The vector kernels of the bloomlab filters, and the only crate of the workspace with
//! `unsafe` code: every other crate is `#![forbid(unsafe_code)]` and calls these kernels
//! through safe functions.
//!
//! # What it holds
//!
//! - [`detect`](VectorPaths::detect): which instruction-set extensions this CPU has
//!   ([`has_avx2`], [`has_avx512f`], …), the answer every dispatch below reads.
//! - The batched-operation drivers [`pipeline`] and [`pipeline_chunks`], with [`prefetch`].
//! - Cache-line storage for the blocked filters: [`Line`], [`SharedLine`], [`Lines`].
//! - The blocked filter's 512-bit block probes ([`local_contains`], [`local_insert`],
//!   [`run_local`] for batches, [`LocalKernel`] for single operations), and the split-block
//!   filter's 256-bit ones ([`split_block_contains`], [`SplitBlockAvx2`]).
//! - The classic filter's whole-array probes ([`classic_contains_all`]) and the reduction
//!   every filter uses ([`fastrange`]).
//! - The Ribbon filter's column parities ([`Parity`], [`run_parity`], [`ColumnKernel`]).
//! - Bulk hashing and routing for the parallel builds ([`xxh3_64_words`],
//!   [`route_one_hash`], [`route_positions`]) and SipHash-2-4 in lanes ([`sip24_x8`]).
//! - One step of the blocked filter's exact FPR chain ([`occupancy_step`]).
//!
//! # Guarantees
//!
//! Every kernel has a portable twin that is its definition (named `*_scalar`, `*_portable`,
//! or the `Portable*` type), and returns exactly what the twin returns — the same answers,
//! the same bits written, for every input, on every CPU. Each file's tests run the vector
//! kernel and the twin on the same random inputs (fixed seeds). A test whose kernel this CPU
//! cannot run says so in its output; with `BLOOMLAB_REQUIRE_SIMD` set (a comma-separated
//! list of [`VectorPaths::ALL`] names, or `all`) it fails instead, so a machine known to
//! have AVX-512 cannot pass without running the AVX-512 kernels. The layouts the kernels
//! read and write (the probe rules, [`LOCAL_MULTIPLIER`]) are format constants of the
//! filters that use them and never change.
//!
//! # Safety argument
//!
//! The unsafe code is of three kinds, and each `unsafe` block says which and why it holds:
//!
//! 1. Calls of `#[target_feature]` functions and intrinsics. Each is reached only after the
//!    CPU was found to have the feature: a test of std's cached `is_x86_feature_detected!`
//!    just before the call, or a value that can only be built after such a test
//!    ([`SplitBlockAvx2`], [`LocalKernel`], [`ColumnKernel`], the probe passed by
//!    [`run_local`]), or a build with the feature enabled at compile time.
//! 2. Memory reached through raw pointers in kernels: every pointer comes from a reference
//!    or slice whose length was checked against everything the kernel reads or writes
//!    (vector loads past a slice's end are made impossible by padding, e.g. [`COLUMN_PAD`],
//!    by masked loads and stores, or by handling the last items portably).
//! 3. `asm!` blocks, used only where intrinsics cannot do the job: a single lookup or insert
//!    must inline into a caller compiled without AVX2, which a `#[target_feature]` function
//!    cannot (its intrinsics twin, called, measured slower), or must read a line other
//!    threads write atomically, which an `asm!` block may do and a vector load in intrinsics
//!    may not. Each block lists every register it changes; blocks ending in `vzeroupper`
//!    declare all sixteen vector registers clobbered (`asm_then_vzeroupper!`).
//!
//! # no_std
//!
//! Without its default `std` feature the crate is `#![no_std]` and needs only `alloc`. The
//! feature gates run-time CPU detection: without it, the `has_*` functions answer whether the
//! build enables the feature (`-C target-feature`, `-C target-cpu`), so an x86-64 build runs
//! the kernels it was compiled for and the portable twins otherwise; NEON, part of the
//! aarch64 baseline, is chosen as before. [`VectorPaths::missing_required`] (it reads the
//! environment) needs std, and [`SharedLine`] a target with 64-bit atomics.
//!
//! # Why this design
//!
//! Keeping all of it in one small crate puts every unsafe line behind one module boundary
//! with one set of tests, and lets the filters stay safe: they choose a kernel once (at
//! construction or per batch) and call it through a safe signature. Batched work is written
//! once, generic over the kernel ([`LocalTask`], [`ParityTask`]), and compiled once per
//! kernel inside a function with the CPU's features enabled, so hashing, indexing and
//! probing inline into one loop with no call per key.
//!
//! # Example
//!
//! ```
//! use bloomlab_simd as simd;
//!
//! let mut block = [0u64; 8];
//! assert!(simd::local_insert(&mut block, 0xdead_beef, 6)); // some bit was new
//! assert!(simd::local_contains(&block, 0xdead_beef, 6));
//! assert!(!simd::local_insert(&mut block, 0xdead_beef, 6)); // already there
//! assert!(block.iter().map(|w| w.count_ones()).sum::<u32>() <= 6); // at most k bits
//!
//! // The vector path (where this CPU has one) and the portable definition agree.
//! let mut other = [0u64; 8];
//! simd::local_insert_scalar(&mut other, 0xdead_beef, 6);
//! assert_eq!(block, other);
//! ```
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]

extern crate alloc;

/// `std::arch::asm!` for a block whose template ends in `vzeroupper`, with all sixteen vector
/// registers declared clobbered after the operands given (which end with a comma):
/// `vzeroupper` zeroes the upper halves of ymm0–ymm15 whatever they hold, so a block naming
/// fewer would let the compiler keep a 256-bit value across it in a register it clears —
/// unnoticed in a build without AVX, wrong in one with it (`docs/design/simd.md`). The
/// registers go by their xmm names, which stand for the whole register.
#[cfg(target_arch = "x86_64")]
macro_rules! asm_then_vzeroupper {
    ($($args:tt)*) => {
        core::arch::asm!(
            $($args)*
            out("xmm0") _, out("xmm1") _, out("xmm2") _, out("xmm3") _,
            out("xmm4") _, out("xmm5") _, out("xmm6") _, out("xmm7") _,
            out("xmm8") _, out("xmm9") _, out("xmm10") _, out("xmm11") _,
            out("xmm12") _, out("xmm13") _, out("xmm14") _, out("xmm15") _,
        )
    };
}
#[cfg(target_arch = "x86_64")]
pub(crate) use asm_then_vzeroupper;

/// The byte an inline kernel's `setc` wrote, as a `bool` with no instruction (`hit & 1 != 0`
/// costs an `and`, `hit != 0` a `test` and a `setne`, in every lookup).
///
/// # Safety
/// `hit` must be 0 or 1.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
// `hit != 0`, which the lint suggests, is the `test` and `setne` this function exists to avoid.
#[allow(clippy::transmute_int_to_bool)]
pub(crate) unsafe fn flag_to_bool(hit: u8) -> bool {
    // SAFETY: the caller guarantees 0 or 1, the two valid `bool` bytes.
    unsafe { core::mem::transmute::<u8, bool>(hit) }
}

mod bulk;
mod classic;
mod detect;
mod lines;
mod local;
mod occupancy;
mod parity;
mod pipeline;
mod sip;
mod split_block;
#[cfg(test)]
mod testing;

pub use bulk::{
    Routed, one_hash_place, route_one_hash, route_one_hash_portable, route_positions,
    route_positions_portable, routes_in_lanes, xxh3_64_words, xxh3_64_words_portable,
};
pub use classic::{classic_contains_all, classic_contains_all_checked, fastrange};
pub(crate) use detect::has_avx512f_popcnt;
pub use detect::{
    REQUIRE_ENV, VectorPaths, has_avx2, has_avx512_popcnt, has_avx512dq, has_avx512f, has_avx512vl,
    has_neon, has_popcnt,
};
#[cfg(target_has_atomic = "64")]
pub use lines::SharedLine;
pub use lines::{Line, LineKind, Lines, zeroed_lines};
#[cfg(target_arch = "x86_64")]
pub use local::Avx2Probe;
pub use local::{
    InlineKernel, LOCAL_MAX_PROBES, LOCAL_MULTIPLIER, LOCAL_POWERS, LocalKernel, LocalProbe,
    LocalTask, PortableProbe, local_contains, local_contains_scalar, local_contains_unrolled,
    local_insert, local_insert_scalar, local_insert_unrolled, local_probes, run_local,
};
pub use occupancy::occupancy_step;
pub use parity::{
    Avx2Parity, COLUMN_PAD, ColumnKernel, ColumnQuery, CountOnesParity, Parity, ParityTask,
    PortableParity, run_parity,
};
pub use pipeline::{CHUNK, pipeline, pipeline_chunks, prefetch};
pub use sip::{sip24_word, sip24_x8, sip24_x8_avx2, sip24_x8_portable};
pub use split_block::{
    PARQUET_SALTS, SplitBlockAvx2, SplitBlockKernel, split_block_contains,
    split_block_contains_scalar, split_block_insert, split_block_insert_scalar, split_block_mask,
};

/// A report test: prints the paths this CPU runs (`cargo test -p bloomlab-simd -- --show-output`)
/// and fails if [`REQUIRE_ENV`] names one it lacks.
#[cfg(test)]
#[test]
fn report_the_vector_paths_this_cpu_runs() {
    let paths = VectorPaths::detect();
    println!("vector paths on this CPU: {paths}");
    let missing = paths.missing_required();
    assert!(
        missing.is_empty(),
        "{REQUIRE_ENV} requires {missing:?}, absent here"
    );
    // The report and the individual tests agree.
    assert_eq!(paths.avx2, has_avx2());
    assert_eq!(paths.avx512f, has_avx512f());
    // Every aarch64 CPU has NEON; no other architecture reports it.
    assert_eq!(paths.neon, cfg!(target_arch = "aarch64"));
    assert!(
        !paths.avx512dq || paths.avx512f,
        "avx512dq is reported with avx512f only"
    );
}
