//! The one home of the workspace's parallel builds: cut the keys into one contiguous run per
//! thread, insert each run into a private table on its own thread (the calling thread fills
//! the filter itself), and merge the tables back in order.
//!
//! A Bloom-family filter is a commutative, associative fold of its keys (an OR of bits, or
//! a saturating sum of counters), so neither the split nor the order changes a bit: the
//! result equals inserting the keys one by one, which each variant's tests check. Nothing is
//! shared while inserting — no atomics, no cache lines bouncing between cores; the price is
//! one extra table per extra thread and one merge pass over it. std's scoped threads suffice
//! for one fork and join, so there is no thread-pool dependency.
//!
//! ```
//! use bloomlab_core::parallel::fork_merge;
//!
//! // A toy "filter": a sum of its keys.
//! let keys: Vec<u64> = (0..100_000).collect();
//! let mut total = 0u64;
//! fork_merge(
//!     &mut total,
//!     &keys,
//!     4,
//!     1_000,
//!     |_| Some(0u64),                          // an empty private table
//!     |t: &mut u64, run: &[u64]| *t += run.iter().sum::<u64>(),
//!     |t: &mut u64, part: &u64| *t += part,    // merge
//! );
//! assert_eq!(total, keys.iter().sum::<u64>());
//! ```

use std::num::NonZeroUsize;

/// [`std::thread::available_parallelism`], or 1 if it is unknown.
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

/// Insert `keys` into `target` with at most `threads` threads (the calling one included; 0
/// counts as 1), each handling at least `min_per_thread` keys. `empty(target)` makes a private
/// table like `target` (all of them are made before any thread starts, so a `None` — no
/// memory — leaves `target` untouched and the keys are inserted on this thread alone);
/// `insert(table, run)` inserts a run; `merge(target, part)` folds a private table into
/// `target`, in key order.
pub fn fork_merge<F, K, E, I, M>(
    target: &mut F,
    keys: &[K],
    threads: usize,
    min_per_thread: usize,
    empty: E,
    insert: I,
    merge: M,
) where
    F: Send,
    K: Sync,
    E: Fn(&F) -> Option<F>,
    I: Fn(&mut F, &[K]) + Sync,
    M: Fn(&mut F, &F),
{
    let threads = threads.min(keys.len() / min_per_thread.max(1)).max(1);
    if threads == 1 {
        insert(target, keys);
        return;
    }
    let mut runs = keys.chunks(keys.len().div_ceil(threads));
    let first = runs.next().unwrap_or(&[]);
    let Some(mut parts) = runs
        .clone()
        .map(|_| empty(target))
        .collect::<Option<Vec<F>>>()
    else {
        insert(target, keys);
        return;
    };
    let insert = &insert;
    std::thread::scope(|s| {
        for (part, run) in parts.iter_mut().zip(runs) {
            s.spawn(move || insert(part, run));
        }
        insert(target, first);
    });
    for part in &parts {
        merge(target, part);
    }
}
