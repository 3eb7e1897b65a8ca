//! The one home of the workspace's parallel builds. Two designs:
//!
//! - [`fork_merge`]: cut the keys into one contiguous run per thread, insert each run into a
//!   private table on its own thread (the calling thread fills the filter itself), and merge
//!   the tables back in order. For any filter; it costs a table and a merge per extra thread.
//! - [`exchange`]: cut the *table* into one range per thread ([`Owners`]); each thread hashes
//!   its share of the keys and hands each key's work to the thread that owns the cells it
//!   touches. No extra table, no merge, no atomics; for filters whose cells a key touches are
//!   known from its hash alone (the blocked and classic filters).
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
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

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

/// Which thread owns which cells of a table split for an [`exchange`]: `T` contiguous
/// ranges, `first()[t]..first()[t + 1]`, within one cell of even for `n ≤ 2^32` cells (the
/// rounding of `r` moves the ends by about `n² / 2^64` cells beyond that). A cell's owner is one
/// multiply, `⌊c · r / 2^64⌋` with `r = ⌊T · 2^64 / n⌋` (no division): it never decreases
/// with `c` and stays below `T`, so each thread owns one contiguous range, starting at
/// `⌈t · 2^64 / r⌉`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Owners {
    r: u64,
    first: Vec<usize>,
}

impl Owners {
    /// `threads` ranges over `n` cells (both at least 1; `threads ≤ n`).
    ///
    /// # Panics
    /// If `n` or `threads` is 0, or `threads > n`.
    pub fn new(n: usize, threads: usize) -> Self {
        assert!(
            n >= 1 && (1..=n).contains(&threads),
            "1 ≤ threads ≤ n cells"
        );
        // r ≤ T · 2^64 / n, so owner(c) ≤ (n − 1) · T / n < T. With T = n the quotient is
        // 2^64 and r saturates at 2^64 − 1: one thread then owns two cells and another none,
        // still one contiguous range each.
        let r = u64::try_from(((threads as u128) << 64) / n as u128).unwrap_or(u64::MAX);
        // The first cell of thread t is the least c with c · r ≥ t · 2^64 (n if none);
        // r ≥ 1, as n < 2^64.
        let first = (0..=threads)
            .map(|t| ((t as u128) << 64).div_ceil(u128::from(r)).min(n as u128) as usize)
            .collect();
        Owners { r, first }
    }

    /// The thread that owns cell `c`.
    #[inline(always)]
    pub fn of(&self, c: usize) -> usize {
        ((c as u128 * u128::from(self.r)) >> 64) as usize
    }

    /// Each thread's first cell, and the number of cells last: `threads() + 1` entries.
    pub fn first(&self) -> &[usize] {
        &self.first
    }

    /// How many threads share the cells.
    pub fn threads(&self) -> usize {
        self.first.len() - 1
    }
}

/// The items one thread of an [`exchange`] collects for one owner between hand-overs.
pub trait Batch: Send {
    /// An empty batch with room for `n` items.
    fn with_capacity(n: usize) -> Self;
    /// Forget every item, keeping the room.
    fn clear(&mut self);
    /// Whether it holds no item.
    fn is_empty(&self) -> bool;
}

impl<T: Send> Batch for Vec<T> {
    fn with_capacity(n: usize) -> Self {
        Vec::with_capacity(n)
    }
    fn clear(&mut self) {
        Vec::clear(self);
    }
    fn is_empty(&self) -> bool {
        Vec::is_empty(self)
    }
}

/// The blocked filter's batches: each key's block and probe source ([`crate::simd::Routed`]).
impl Batch for crate::simd::Routed {
    fn with_capacity(n: usize) -> Self {
        crate::simd::Routed::with_capacity(n)
    }
    fn clear(&mut self) {
        crate::simd::Routed::clear(self);
    }
    fn is_empty(&self) -> bool {
        crate::simd::Routed::is_empty(self)
    }
}

/// Build a table with one thread per range of [`Owners`], each key handled once and every
/// cell written by its owner alone: for filters whose keys each touch cells that can be
/// found from the key's hash before any cell is read (the blocked filter's one block, the
/// classic filter's `k` words).
///
/// The keys are cut into one share per thread (the calling thread takes the first share and
/// the first range). Each thread takes its share `step` keys at a time; `route(keys, out)`
/// appends whatever each key needs done to `out[t]`, the batch of the thread `t` that owns
/// the cells concerned. The thread hands the other threads their batches, applies its own
/// (`apply(range, first, batch)`: its range of cells, which starts at cell `first`), then
/// applies whatever the others have handed it. A thread that has routed all its keys keeps
/// applying what arrives until every thread is done. A sender whose receiver has `max_queued`
/// batches waiting applies its own queue while it waits, so memory stays bounded however far
/// one thread falls behind, and two threads waiting on each other both make progress. The
/// queues are mutex-guarded vectors, locked once per batch sent and once per look at the
/// inbox; emptied batches are reused. A `step` or `max_queued` of 0 counts as 1. Threads
/// that wait yield their time slice between looks, so more threads than cores only cost.
///
/// The cells end exactly as applying every key's items in any order leaves them when the
/// items commute, as ORed bits do.
///
/// ```
/// use bloomlab_core::parallel::{exchange, Owners};
///
/// // A toy table: how many keys fell into each of 1 000 cells, counted on 4 threads.
/// let keys: Vec<u64> = (0..100_000).map(|i| i * 7919).collect();
/// let mut cells = vec![0u32; 1_000];
/// let owners = Owners::new(cells.len(), 4);
/// exchange(
///     &mut cells,
///     &owners,
///     &keys,
///     4_096,
///     64,
///     |keys: &[u64], out: &mut [Vec<usize>]| {
///         for k in keys {
///             let c = (k % 1_000) as usize;
///             out[owners.of(c)].push(c);
///         }
///     },
///     |range: &mut [u32], first: usize, batch: &Vec<usize>| {
///         batch.iter().for_each(|&c| range[c - first] += 1);
///     },
/// );
/// assert_eq!(cells.iter().sum::<u32>(), 100_000);
/// assert!(cells.iter().all(|&c| c == 100));
/// ```
///
/// # Panics
/// If `owners` does not cover exactly `cells.len()` cells, or `route` or `apply` panics (on
/// any thread: the others then stop waiting, and the panic is handed on; the cells hold
/// whatever was applied until then).
pub fn exchange<C, K, B, R, A>(
    cells: &mut [C],
    owners: &Owners,
    keys: &[K],
    step: usize,
    max_queued: usize,
    route: R,
    apply: A,
) where
    C: Send,
    K: Sync,
    B: Batch,
    R: Fn(&[K], &mut [B]) + Sync,
    A: Fn(&mut [C], usize, &B) + Sync,
{
    let threads = owners.threads();
    assert_eq!(owners.first[threads], cells.len(), "owners cover the cells");
    let x = Exchange {
        inbox: (0..threads).map(|_| Mutex::new(Vec::new())).collect(),
        finished: AtomicUsize::new(0),
        aborted: AtomicBool::new(false),
        max_queued: max_queued.max(1),
        step: step.max(1),
        first: &owners.first,
        route,
        apply,
    };
    let mut ranges: Vec<&mut [C]> = Vec::with_capacity(threads);
    let mut rest = cells;
    for t in 0..threads {
        let (mine, tail) = rest.split_at_mut(owners.first[t + 1] - owners.first[t]);
        ranges.push(mine);
        rest = tail;
    }
    let share = |t: usize| &keys[keys.len() * t / threads..keys.len() * (t + 1) / threads];
    let x = &x;
    std::thread::scope(|s| {
        let mut ranges = ranges.into_iter().enumerate();
        let (_, first) = ranges.next().expect("at least one range");
        for (t, range) in ranges {
            s.spawn(move || x.run(t, range, share(t)));
        }
        x.run(0, first, share(0));
    });
}

/// What the threads of one [`exchange`] share.
struct Exchange<'a, B, R, A> {
    /// Per thread, the batches other threads routed to its range.
    inbox: Vec<Mutex<Vec<B>>>,
    /// Threads that have routed all their keys (and sent every batch).
    finished: AtomicUsize,
    /// Set by a thread unwinding from a panic in `route` or `apply`: the others stop waiting
    /// (for batches that will never come, or for room that will never be made) and return,
    /// so that the scope can hand the panic on instead of hanging.
    aborted: AtomicBool,
    max_queued: usize,
    step: usize,
    first: &'a [usize],
    route: R,
    apply: A,
}

impl<B, R, A> Exchange<'_, B, R, A>
where
    B: Batch,
{
    /// Thread `me`'s part (see [`exchange`]).
    fn run<C, K>(&self, me: usize, range: &mut [C], share: &[K])
    where
        R: Fn(&[K], &mut [B]),
        A: Fn(&mut [C], usize, &B),
    {
        let threads = self.inbox.len();
        let _abort_if_unwinding = AbortOnUnwind(&self.aborted);
        // Emptied batches, reused for the next ones this thread sends.
        let mut spare: Vec<B> = Vec::new();
        let mut out: Vec<B> = (0..threads).map(|_| B::with_capacity(self.step)).collect();
        for keys in share.chunks(self.step) {
            (self.route)(keys, &mut out);
            for (to, batch) in out.iter_mut().enumerate() {
                if to != me && !batch.is_empty() {
                    let fresh = spare.pop().unwrap_or_else(|| B::with_capacity(self.step));
                    self.send(me, range, &mut spare, to, std::mem::replace(batch, fresh));
                }
            }
            (self.apply)(range, self.first[me], &out[me]);
            out[me].clear();
            self.receive(me, range, &mut spare);
        }
        self.finished.fetch_add(1, Ordering::Release);
        loop {
            if self.aborted.load(Ordering::Relaxed) {
                return;
            }
            // Read before the last look at the inbox: every batch sent by a thread that had
            // finished by then (its sends happen-before its `fetch_add`) is in it.
            let all_done = self.finished.load(Ordering::Acquire) == threads;
            if !self.receive(me, range, &mut spare) {
                if all_done {
                    return;
                }
                std::thread::yield_now();
            }
        }
    }

    /// Queue `batch` in thread `to`'s inbox; while that inbox is full, apply what this
    /// thread's own inbox holds (so two threads waiting on each other both make progress).
    fn send<C>(&self, me: usize, range: &mut [C], spare: &mut Vec<B>, to: usize, batch: B)
    where
        A: Fn(&mut [C], usize, &B),
    {
        loop {
            let mut q = lock(&self.inbox[to]);
            if q.len() < self.max_queued {
                q.push(batch);
                return;
            }
            drop(q);
            if self.aborted.load(Ordering::Relaxed) {
                return;
            }
            if !self.receive(me, range, spare) {
                std::thread::yield_now();
            }
        }
    }

    /// Apply every batch waiting in thread `me`'s inbox; `false` if there was none.
    fn receive<C>(&self, me: usize, range: &mut [C], spare: &mut Vec<B>) -> bool
    where
        A: Fn(&mut [C], usize, &B),
    {
        let batches = std::mem::take(&mut *lock(&self.inbox[me]));
        let any = !batches.is_empty();
        for mut batch in batches {
            (self.apply)(range, self.first[me], &batch);
            batch.clear();
            spare.push(batch);
        }
        any
    }
}

/// Marks the exchange aborted when dropped during a panic (see [`Exchange::aborted`]).
struct AbortOnUnwind<'a>(&'a AtomicBool);

impl Drop for AbortOnUnwind<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.store(true, Ordering::Relaxed);
        }
    }
}

/// A lock whose holder cannot have panicked mid-update (the queues are only pushed to and
/// taken whole), so a poisoned one is used as it is.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_split_the_cells_into_contiguous_ranges() {
        for n in [1usize, 2, 3, 7, 64, 1000, 195_313, 1 << 20] {
            for threads in [1usize, 2, 3, 5, 8, 16] {
                if threads > n {
                    continue;
                }
                let o = Owners::new(n, threads);
                assert_eq!(o.threads(), threads);
                assert_eq!((o.first[0], o.first[threads]), (0, n), "n {n}, T {threads}");
                for t in 0..threads {
                    assert!(o.first[t] <= o.first[t + 1]);
                    for c in o.first[t]..o.first[t + 1] {
                        assert_eq!(o.of(c), t, "n {n}, T {threads}, cell {c}");
                    }
                }
                // Ranges within one cell of even when there are many cells per thread.
                if n >= 64 * threads {
                    for t in 0..threads {
                        let len = o.first[t + 1] - o.first[t];
                        assert!(len.abs_diff(n / threads) <= 1, "n {n}, T {threads}: {len}");
                    }
                }
            }
        }
    }

    /// Count keys per cell with `threads` threads and inboxes of `max_queued` batches.
    fn counts(keys: &[u64], cells: usize, threads: usize, max_queued: usize) -> Vec<u32> {
        let mut table = vec![0u32; cells];
        let owners = Owners::new(cells, threads);
        exchange(
            &mut table,
            &owners,
            keys,
            1_000,
            max_queued,
            |keys: &[u64], out: &mut [Vec<usize>]| {
                for &k in keys {
                    let c = (k % cells as u64) as usize;
                    out[owners.of(c)].push(c);
                }
            },
            |range: &mut [u32], first: usize, batch: &Vec<usize>| {
                batch.iter().for_each(|&c| range[c - first] += 1);
            },
        );
        table
    }

    #[test]
    fn a_panic_on_one_thread_is_handed_on_without_hanging_the_others() {
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let keys: Vec<u64> = (0..100_000).collect();
            let outcome = std::panic::catch_unwind(|| {
                let mut table = vec![0u32; 1_000];
                let owners = Owners::new(1_000, 3);
                exchange(
                    &mut table,
                    &owners,
                    &keys,
                    100,
                    1,
                    |keys: &[u64], out: &mut [Vec<usize>]| {
                        for &k in keys {
                            let c = (k % 1_000) as usize;
                            out[owners.of(c)].push(c);
                        }
                    },
                    |range: &mut [u32], first: usize, batch: &Vec<usize>| {
                        // The owner of the last range fails on its first batch.
                        assert!(first < 600, "a failing apply");
                        batch.iter().for_each(|&c| range[c - first] += 1);
                    },
                );
            });
            let _ = done.send(outcome.is_err());
        });
        let panicked = finished
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("the exchange returned instead of hanging");
        assert!(panicked, "the panic was handed on");
    }

    #[test]
    fn every_item_reaches_its_owner_once() {
        let keys: Vec<u64> = (0..200_000u64)
            .map(|i| i.wrapping_mul(0xD6E8_FEB8_6659_FD93) >> 7)
            .collect();
        let mut want = vec![0u32; 4_099];
        keys.iter().for_each(|&k| want[(k % 4_099) as usize] += 1);
        for threads in [1, 2, 3, 6, 13] {
            // Roomy inboxes, and inboxes of one batch, where senders wait all the time.
            for max_queued in [64, 1] {
                assert_eq!(
                    counts(&keys, 4_099, threads, max_queued),
                    want,
                    "{threads} threads, {max_queued} queued"
                );
            }
        }
        // More threads than keys, and no keys at all.
        assert_eq!(counts(&keys[..3], 50, 8, 2).iter().sum::<u32>(), 3);
        assert!(counts(&[], 50, 4, 2).iter().all(|&c| c == 0));
    }
}
