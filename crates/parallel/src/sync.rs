//! The one home of the synchronisation the parallel code uses: std's mutex, atomics and
//! thread functions, or, when the workspace is built with `--cfg loom`, the
//! [loom](https://docs.rs/loom) model checker's stand-ins for them. The exchange of
//! [`bloomlab_parallel`](crate) takes its queues, flags and `yield_now` from here, and the
//! atomic blocked filter's insert is written over [`OrWord`], so that the same code runs on
//! real threads and, under loom, in every interleaving loom explores.
//!
//! Under `--cfg loom` these types work only inside `loom::model`; such a build is for the
//! model tests alone (`RUSTFLAGS="--cfg loom" cargo test --release -p bloomlab-parallel
//! -p bloomlab-blocked loom`, as `.ci/run` runs it).
//!
//! Why a module and not a dependency's feature: two names to switch, one place to switch them.
//!
//! Needs the `std` feature; `AtomicU64` and its [`OrWord`] implementation also need a target
//! with 64-bit atomics.

#[cfg(all(not(loom), target_has_atomic = "64"))]
pub use std::sync::atomic::AtomicU64;
#[cfg(not(loom))]
pub use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
#[cfg(not(loom))]
pub use std::sync::{Mutex, MutexGuard};
#[cfg(not(loom))]
pub use std::thread::{ThreadId, current, yield_now};

#[cfg(loom)]
pub use loom::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
#[cfg(loom)]
pub use loom::sync::{Mutex, MutexGuard};
#[cfg(loom)]
pub use loom::thread::{ThreadId, current, yield_now};

/// Lock `m`, using a poisoned lock as it is: every lock of this crate guards data that no
/// holder leaves half-updated (queues that are only pushed to and taken whole).
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A 64-bit word that bits are ORed into by many threads at once: the two operations of the
/// atomic blocked filter's table, both relaxed (its docs say why that is enough). Implemented
/// for [`std::sync::atomic::AtomicU64`], the table's word, and, under
/// `--cfg loom`, for loom's, so that the filter's insert runs unchanged in a loom model.
pub trait OrWord: Sync {
    /// `fetch_or(mask, Relaxed)`: one read-modify-write; the word's value before it.
    fn or_relaxed(&self, mask: u64) -> u64;
    /// `load(Relaxed)`.
    fn load_relaxed(&self) -> u64;
}

#[cfg(target_has_atomic = "64")]
impl OrWord for std::sync::atomic::AtomicU64 {
    #[inline(always)]
    fn or_relaxed(&self, mask: u64) -> u64 {
        self.fetch_or(mask, std::sync::atomic::Ordering::Relaxed)
    }
    #[inline(always)]
    fn load_relaxed(&self) -> u64 {
        self.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[cfg(loom)]
impl OrWord for loom::sync::atomic::AtomicU64 {
    fn or_relaxed(&self, mask: u64) -> u64 {
        self.fetch_or(mask, loom::sync::atomic::Ordering::Relaxed)
    }
    fn load_relaxed(&self) -> u64 {
        self.load(loom::sync::atomic::Ordering::Relaxed)
    }
}
