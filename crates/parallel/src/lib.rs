//! The one home of the workspace's parallel builds (the blocked, classic and counting filters
//! use them), and of the locks and atomics they take ([`sync`]). Two designs:
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
//! use bloomlab_parallel::fork_merge;
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

#![warn(missing_docs)]
#![forbid(unsafe_code)]

use std::num::NonZeroUsize;

pub mod sync;

use sync::{AtomicBool, AtomicUsize, Mutex, Ordering, lock};

// What `parallel_entry_points!` names, reachable through this crate.
#[doc(hidden)]
pub use bloomlab_core::{HashScheme, Key, Result, Xxh3Scheme};

/// [`std::thread::available_parallelism`], or 1 if it is unknown.
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, NonZeroUsize::get)
}

/// The parallel build's entry points of a variant `Name<S: HashScheme>`, written once as
/// inherent methods: `from_keys` (the default scheme: size with `with_fpr` for the keys, then
/// insert them in parallel), `insert_parallel` (every available core) and
/// `insert_parallel_with_threads`, which forwards to the variant's own build method with the
/// extra arguments given. Each method carries the variant's own docs.
///
/// ```
/// use bloomlab_parallel::ParallelReport;
/// use bloomlab_core::{HashScheme, Key, Result, Xxh3Scheme};
///
/// pub struct Toy<S: HashScheme = Xxh3Scheme> {
///     keys: u64,
///     scheme: S,
/// }
///
/// impl<S: HashScheme> Toy<S> {
///     fn build<K: Key + Sync>(&mut self, keys: &[K], _threads: usize, _extra: u8) -> ParallelReport {
///         self.keys += keys.len() as u64;
///         ParallelReport::one_thread(keys.len())
///     }
/// }
///
/// impl Toy {
///     pub fn with_fpr(_n: u64, _fpr: f64) -> Result<Self> {
///         Ok(Toy { keys: 0, scheme: Xxh3Scheme })
///     }
/// }
///
/// bloomlab_parallel::parallel_entry_points! {
///     impl Toy {
///         /// Sized for the keys, holding them.
///         fn from_keys;
///         /// Every key, on every core.
///         fn insert_parallel;
///         /// Every key, on at most `threads` threads.
///         fn insert_parallel_with_threads = build(7);
///     }
/// }
///
/// let toy = Toy::from_keys(&[1u64, 2, 3], 0.01)?;
/// assert_eq!(toy.keys, 3);
/// # Ok::<(), bloomlab_core::Error>(())
/// ```
#[macro_export]
macro_rules! parallel_entry_points {
    (impl $name:ident {
        $(#[$from_doc:meta])* fn from_keys;
        $(#[$all_doc:meta])* fn insert_parallel;
        $(#[$with_doc:meta])* fn insert_parallel_with_threads = $build:ident($($arg:expr),* $(,)?);
    }) => {
        impl $name<$crate::Xxh3Scheme> {
            $(#[$from_doc])*
            pub fn from_keys<K: $crate::Key + Sync>(keys: &[K], fpr: f64) -> $crate::Result<Self> {
                let mut f = Self::with_fpr(keys.len() as u64, fpr)?;
                f.insert_parallel(keys);
                Ok(f)
            }
        }

        impl<S: $crate::HashScheme> $name<S> {
            $(#[$all_doc])*
            pub fn insert_parallel<K: $crate::Key + Sync>(
                &mut self,
                keys: &[K],
            ) -> $crate::ParallelReport {
                self.insert_parallel_with_threads(keys, $crate::available_threads())
            }

            $(#[$with_doc])*
            pub fn insert_parallel_with_threads<K: $crate::Key + Sync>(
                &mut self,
                keys: &[K],
                threads: usize,
            ) -> $crate::ParallelReport {
                self.$build(keys, threads $(, $arg)*)
            }
        }
    };
}

/// The threads a build over `keys` keys and `units` independently owned parts of the table
/// uses when given `threads`: at most one per `min_per_thread` keys and per part, at least 1
/// (0 given counts as 1).
pub fn threads_for(threads: usize, keys: usize, min_per_thread: usize, units: usize) -> usize {
    threads.min(keys / min_per_thread).min(units).max(1)
}

/// Insert `keys` into `target` with at most `threads` threads (the calling one included; 0
/// counts as 1), each handling at least `min_per_thread` keys. `empty(target)` makes a private
/// table like `target` (all of them are made before any thread starts, so a `None` — no
/// memory — leaves `target` untouched and the keys are inserted on this thread alone);
/// `insert(table, run)` inserts a run; `merge(target, part)` folds a private table into
/// `target`, in key order. Returns what it did ([`ParallelReport`]: nothing is exchanged, so
/// only the threads and their runs).
pub fn fork_merge<F, K, E, I, M>(
    target: &mut F,
    keys: &[K],
    threads: usize,
    min_per_thread: usize,
    empty: E,
    insert: I,
    merge: M,
) -> ParallelReport
where
    F: Send,
    K: Sync,
    E: Fn(&F) -> Option<F>,
    I: Fn(&mut F, &[K]) + Sync,
    M: Fn(&mut F, &F),
{
    let threads = threads.min(keys.len() / min_per_thread.max(1)).max(1);
    if threads == 1 {
        insert(target, keys);
        return ParallelReport::one_thread(keys.len());
    }
    let mut runs = keys.chunks(keys.len().div_ceil(threads));
    let first = runs.next().unwrap_or(&[]);
    let Some(mut parts) = runs
        .clone()
        .map(|_| empty(target))
        .collect::<Option<Vec<F>>>()
    else {
        insert(target, keys);
        return ParallelReport::one_thread(keys.len());
    };
    let insert = &insert;
    let mut ran: Vec<(std::thread::ThreadId, usize)> = std::thread::scope(|s| {
        let handles: Vec<_> = parts
            .iter_mut()
            .zip(runs)
            .map(|(part, run)| {
                s.spawn(move || {
                    insert(part, run);
                    (std::thread::current().id(), run.len())
                })
            })
            .collect();
        insert(target, first);
        let mine = (std::thread::current().id(), first.len());
        std::iter::once(mine)
            .chain(handles.into_iter().map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            }))
            .collect()
    });
    for part in &parts {
        merge(target, part);
    }
    let ids: Vec<_> = ran.iter().map(|r| r.0).collect();
    ParallelReport {
        threads: distinct(&ids),
        keys_per_thread: ran.drain(..).map(|r| r.1).collect(),
        ..ParallelReport::default()
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

/// The blocked filter's batches: each key's block and probe source ([`bloomlab_simd::Routed`]).
impl Batch for bloomlab_simd::Routed {
    fn with_capacity(n: usize) -> Self {
        bloomlab_simd::Routed::with_capacity(n)
    }
    fn clear(&mut self) {
        bloomlab_simd::Routed::clear(self);
    }
    fn is_empty(&self) -> bool {
        bloomlab_simd::Routed::is_empty(self)
    }
}

/// What one parallel build did: how many threads inserted keys, how the keys were shared
/// out, and, for an [`exchange`], how many batches crossed between threads and how full the
/// inboxes got against their bound. Every parallel build of the workspace returns one
/// (`insert_parallel` and `insert_parallel_with_threads` of the classic, blocked and counting
/// filters), so a caller can see why a build did not speed up:
///
/// - `threads == 1`: the build ran on the calling thread alone — too few keys for a second
///   thread (each build documents its minimum per thread), one thread given, or no memory
///   for a private table ([`fork_merge`]);
/// - uneven [`keys_per_thread`](Self::keys_per_thread): the shares are cut by key count, so
///   they are even to one key; the work per share is not (an exchange's threads also apply
///   what the others route to their ranges);
/// - many [`waits`](Self::waits): senders often found an inbox full, so one thread lagged
///   (a loaded machine, a descheduled thread) and the others spent their time applying their
///   own queues instead of routing.
///
/// ```
/// use bloomlab_parallel::{exchange, Owners};
///
/// let keys: Vec<u64> = (0..100_000).collect();
/// let mut cells = vec![0u32; 64];
/// let owners = Owners::new(cells.len(), 2);
/// let report = exchange(
///     &mut cells,
///     &owners,
///     &keys,
///     1_000,
///     8,
///     |keys: &[u64], out: &mut [Vec<usize>]| {
///         keys.iter().for_each(|&k| out[owners.of(k as usize % 64)].push(k as usize % 64));
///     },
///     |range: &mut [u32], first: usize, batch: &Vec<usize>| {
///         batch.iter().for_each(|&c| range[c - first] += 1);
///     },
/// );
/// assert_eq!(report.keys_per_thread, [50_000, 50_000]);
/// assert_eq!(report.max_queued, 8);
/// assert!(report.peak_queued <= report.max_queued);
/// // Each thread sends the other one batch per step of 1 000 keys.
/// assert_eq!(report.batches_exchanged, 100);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParallelReport {
    /// Distinct threads that inserted keys, the calling one included (1: none was started, or
    /// all but one found nothing to do). Counted from the threads' ids as each one starts its
    /// share, not from the number asked for.
    pub threads: usize,
    /// The keys each share held, in key order (the calling thread's first); they sum to the
    /// keys given.
    pub keys_per_thread: Vec<usize>,
    /// Batches handed from one thread to another ([`exchange`]; 0 for [`fork_merge`] and for
    /// one thread).
    pub batches_exchanged: u64,
    /// Sends that found the receiver's inbox full and waited (applying the sender's own inbox
    /// meanwhile) before there was room.
    pub waits: u64,
    /// Most batches waiting in any one inbox at once, as seen by the senders right after each
    /// hand-over.
    pub peak_queued: usize,
    /// The bound on [`peak_queued`](Self::peak_queued): the batches an inbox holds before a
    /// sender waits (0 when nothing is exchanged). With the batch's size it bounds the memory
    /// in flight: at most `threads · max_queued` batches.
    pub max_queued: usize,
}

impl ParallelReport {
    /// The report of a build that inserted all `keys` on the calling thread.
    pub fn one_thread(keys: usize) -> Self {
        ParallelReport {
            threads: 1,
            keys_per_thread: vec![keys],
            ..Self::default()
        }
    }
}

/// The number of distinct ids in `ids`.
fn distinct<T: PartialEq>(ids: &[T]) -> usize {
    (0..ids.len())
        .filter(|&i| !ids[..i].contains(&ids[i]))
        .count()
}

/// Build a table with one thread per range of [`Owners`], each key handled once and every
/// cell written by its owner alone: for filters whose keys each touch cells that can be
/// found from the key's hash before any cell is read (the blocked filter's one block, the
/// classic filter's `k` words). Returns what it did ([`ParallelReport`]).
///
/// The keys are cut into one share per thread (the calling thread takes the first share and
/// the first range). Each thread takes its share `step` keys at a time; `route(keys, out)`
/// appends whatever each key needs done to `out[t]`, the batch of the thread `t` that owns
/// the cells concerned. The thread hands the other threads their batches, applies its own
/// (`apply(range, first, batch)`: its range of cells, which starts at cell `first`), then
/// applies whatever the others have handed it. A thread that has routed all its keys keeps
/// applying what arrives until every thread is done.
///
/// **Bounded.** No inbox ever holds more than `max_queued` batches
/// ([`ParallelReport::peak_queued`] ≤ `max_queued`): a sender whose receiver has `max_queued`
/// batches waiting applies its own queue while it waits, so memory stays bounded — at most
/// `threads · max_queued` batches in flight, each of at most `step` keys' items, plus one
/// batch per thread and destination being filled — however far one thread falls behind,
/// and two threads waiting on each other both make progress. The queues are mutex-guarded
/// vectors, locked once per batch sent and once per look at the inbox; emptied batches are
/// reused. A `step` or `max_queued` of 0 counts as 1. Threads that wait yield their time
/// slice between looks, so more threads than cores only cost.
///
/// The cells end exactly as applying every key's items in any order leaves them when the
/// items commute, as ORed bits do.
///
/// The inbox's bound, the hand-over of a panic and the shutdown are model-checked with loom
/// (`--cfg loom`, the `loom_models` tests beside this code; see [`sync`]).
///
/// ```
/// use bloomlab_parallel::{exchange, Owners};
///
/// // A toy table: how many keys fell into each of 1 000 cells, counted on 4 threads.
/// let keys: Vec<u64> = (0..100_000).map(|i| i * 7919).collect();
/// let mut cells = vec![0u32; 1_000];
/// let owners = Owners::new(cells.len(), 4);
/// let report = exchange(
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
/// assert_eq!(report.keys_per_thread.len(), 4);
/// assert!(report.peak_queued <= 64);
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
) -> ParallelReport
where
    C: Send,
    K: Sync,
    B: Batch,
    R: Fn(&[K], &mut [B]) + Sync,
    A: Fn(&mut [C], usize, &B) + Sync,
{
    exchange_with(cells, owners, keys, step, max_queued, route, apply, NoHooks)
}

/// [`exchange`], with `hooks` told of what the threads do (tests hold a thread back with them).
#[allow(clippy::too_many_arguments)]
pub(crate) fn exchange_with<C, K, B, R, A, H>(
    cells: &mut [C],
    owners: &Owners,
    keys: &[K],
    step: usize,
    max_queued: usize,
    route: R,
    apply: A,
    hooks: H,
) -> ParallelReport
where
    C: Send,
    K: Sync,
    B: Batch,
    R: Fn(&[K], &mut [B]) + Sync,
    A: Fn(&mut [C], usize, &B) + Sync,
    H: Hooks,
{
    let threads = owners.threads();
    assert_eq!(owners.first[threads], cells.len(), "owners cover the cells");
    let x = Exchange::new(owners.first.clone(), step, max_queued, route, apply, hooks);
    let mut ranges: Vec<&mut [C]> = Vec::with_capacity(threads);
    let mut rest = cells;
    for t in 0..threads {
        let (mine, tail) = rest.split_at_mut(owners.first[t + 1] - owners.first[t]);
        ranges.push(mine);
        rest = tail;
    }
    // Each thread's keys, cut before any thread starts: a thread that panicked before taking
    // part would leave the others waiting for it.
    let shares: Vec<&[K]> = (0..threads)
        .map(|t| &keys[keys.len() * t / threads..keys.len() * (t + 1) / threads])
        .collect();
    let x = &x;
    let stats: Vec<WorkerStats> = std::thread::scope(|s| {
        let mut work = ranges.into_iter().zip(shares).enumerate();
        let (_, (first, first_keys)) = work.next().expect("at least one range");
        let handles: Vec<_> = work
            .map(|(t, (range, share))| s.spawn(move || x.run(t, range, share)))
            .collect();
        let mine = x.run(0, first, first_keys);
        std::iter::once(mine)
            .chain(handles.into_iter().map(|h| {
                h.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            }))
            .collect()
    });
    x.report(&stats)
}

/// Told of what the threads of an [`exchange`] do; every method does nothing unless a test
/// makes it. Tests use it to hold one thread back (a deliberately slow consumer) until
/// another has filled its inbox, without timing anything.
pub(crate) trait Hooks: Sync {
    /// Thread `me` is about to look at its inbox.
    fn before_receive(&self, _me: usize) {}
    /// Thread `me` found thread `to`'s inbox full and is about to wait for room.
    fn inbox_full(&self, _me: usize, _to: usize) {}
    /// Thread `me` has routed and sent all its keys.
    fn routed_all(&self, _me: usize) {}
}

/// The hooks of every real build: none.
pub(crate) struct NoHooks;

impl Hooks for NoHooks {}

impl<T: Hooks> Hooks for &T {
    fn before_receive(&self, me: usize) {
        (**self).before_receive(me)
    }
    fn inbox_full(&self, me: usize, to: usize) {
        (**self).inbox_full(me, to)
    }
    fn routed_all(&self, me: usize) {
        (**self).routed_all(me)
    }
}

/// What one thread of an [`exchange`] did, for its [`ParallelReport`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct WorkerStats {
    pub(crate) thread: sync::ThreadId,
    pub(crate) keys: usize,
    pub(crate) sent: u64,
    pub(crate) waits: u64,
    pub(crate) peak: usize,
}

/// What the threads of one [`exchange`] share.
pub(crate) struct Exchange<B, R, A, H> {
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
    /// Each thread's first cell, and the number of cells last ([`Owners::first`]).
    first: Vec<usize>,
    route: R,
    apply: A,
    hooks: H,
}

impl<B, R, A, H> Exchange<B, R, A, H>
where
    B: Batch,
    H: Hooks,
{
    /// The shared state of an exchange among `first.len() - 1` threads.
    pub(crate) fn new(
        first: Vec<usize>,
        step: usize,
        max_queued: usize,
        route: R,
        apply: A,
        hooks: H,
    ) -> Self {
        Exchange {
            inbox: (1..first.len()).map(|_| Mutex::new(Vec::new())).collect(),
            finished: AtomicUsize::new(0),
            aborted: AtomicBool::new(false),
            max_queued: max_queued.max(1),
            step: step.max(1),
            first,
            route,
            apply,
            hooks,
        }
    }

    /// The report of the exchange whose threads returned `stats`.
    pub(crate) fn report(&self, stats: &[WorkerStats]) -> ParallelReport {
        let ids: Vec<_> = stats.iter().map(|s| s.thread).collect();
        ParallelReport {
            threads: distinct(&ids),
            keys_per_thread: stats.iter().map(|s| s.keys).collect(),
            batches_exchanged: stats.iter().map(|s| s.sent).sum(),
            waits: stats.iter().map(|s| s.waits).sum(),
            peak_queued: stats.iter().map(|s| s.peak).max().unwrap_or(0),
            max_queued: self.max_queued,
        }
    }

    /// Thread `me`'s part (see [`exchange`]): `range` is its range of cells, `share` its keys.
    pub(crate) fn run<C, K>(&self, me: usize, range: &mut [C], share: &[K]) -> WorkerStats
    where
        R: Fn(&[K], &mut [B]),
        A: Fn(&mut [C], usize, &B),
    {
        let threads = self.inbox.len();
        let _abort_if_unwinding = AbortOnUnwind(&self.aborted);
        let mut stats = WorkerStats {
            thread: sync::current().id(),
            keys: share.len(),
            sent: 0,
            waits: 0,
            peak: 0,
        };
        // Emptied batches, reused for the next ones this thread sends.
        let mut spare: Vec<B> = Vec::new();
        let mut out: Vec<B> = (0..threads).map(|_| B::with_capacity(self.step)).collect();
        for keys in share.chunks(self.step) {
            (self.route)(keys, &mut out);
            for (to, batch) in out.iter_mut().enumerate() {
                if to != me && !batch.is_empty() {
                    let fresh = spare.pop().unwrap_or_else(|| B::with_capacity(self.step));
                    let batch = std::mem::replace(batch, fresh);
                    self.send(me, range, &mut spare, to, batch, &mut stats);
                }
            }
            (self.apply)(range, self.first[me], &out[me]);
            out[me].clear();
            self.receive(me, range, &mut spare);
        }
        self.hooks.routed_all(me);
        self.finished.fetch_add(1, Ordering::Release);
        loop {
            if self.aborted.load(Ordering::Relaxed) {
                return stats;
            }
            // Read before the last look at the inbox: every batch sent by a thread that had
            // finished by then (its sends happen-before its `fetch_add`) is in it.
            let all_done = self.finished.load(Ordering::Acquire) == threads;
            if !self.receive(me, range, &mut spare) {
                if all_done {
                    return stats;
                }
                sync::yield_now();
            }
        }
    }

    /// Queue `batch` in thread `to`'s inbox; while that inbox is full, apply what this
    /// thread's own inbox holds (so two threads waiting on each other both make progress).
    fn send<C>(
        &self,
        me: usize,
        range: &mut [C],
        spare: &mut Vec<B>,
        to: usize,
        batch: B,
        stats: &mut WorkerStats,
    ) where
        A: Fn(&mut [C], usize, &B),
    {
        let mut waited = false;
        loop {
            let mut q = lock(&self.inbox[to]);
            if q.len() < self.max_queued {
                q.push(batch);
                stats.sent += 1;
                stats.peak = stats.peak.max(q.len());
                stats.waits += u64::from(waited);
                return;
            }
            drop(q);
            waited = true;
            self.hooks.inbox_full(me, to);
            if self.aborted.load(Ordering::Relaxed) {
                return;
            }
            if !self.receive(me, range, spare) {
                sync::yield_now();
            }
        }
    }

    /// Apply every batch waiting in thread `me`'s inbox; `false` if there was none.
    fn receive<C>(&self, me: usize, range: &mut [C], spare: &mut Vec<B>) -> bool
    where
        A: Fn(&mut [C], usize, &B),
    {
        self.hooks.before_receive(me);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_routed_batch_holds_what_was_pushed_until_cleared() {
        // The blocked filter's batches through the `Batch` calls `exchange` makes on them.
        let mut b = <bloomlab_simd::Routed as Batch>::with_capacity(4);
        assert!(Batch::is_empty(&b));
        b.push(7, 1 << 32);
        b.push(9, 2 << 32);
        assert!(!Batch::is_empty(&b));
        assert_eq!(b.blocks(), [7, 9]);
        Batch::clear(&mut b);
        assert!(Batch::is_empty(&b) && b.blocks().is_empty());
    }

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

    /// Routes each key to cell `key mod cells`, in the batch of that cell's owner.
    fn route_by_cell(
        owners: &Owners,
        cells: u64,
    ) -> impl Fn(&[u64], &mut [Vec<usize>]) + Sync + '_ {
        move |keys, out| {
            for &k in keys {
                let c = (k % cells) as usize;
                out[owners.of(c)].push(c);
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
            route_by_cell(&owners, cells as u64),
            |range: &mut [u32], first: usize, batch: &Vec<usize>| {
                batch.iter().for_each(|&c| range[c - first] += 1);
            },
        );
        table
    }

    /// The distinct threads that called `f` while it was in `seen`.
    fn distinct_seen(seen: &std::sync::Mutex<Vec<std::thread::ThreadId>>) -> usize {
        distinct(&seen.lock().unwrap())
    }

    #[test]
    fn an_exchange_runs_on_every_thread_it_is_given_and_reports_it() {
        let keys: Vec<u64> = (0..400_000u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        for threads in [1usize, 2, 4] {
            let seen = std::sync::Mutex::new(Vec::new());
            let mut table = vec![0u32; 4_096];
            let owners = Owners::new(table.len(), threads);
            let report = exchange(
                &mut table,
                &owners,
                &keys,
                1_000,
                4,
                route_by_cell(&owners, 4_096),
                |range: &mut [u32], first: usize, batch: &Vec<usize>| {
                    let me = std::thread::current().id();
                    let mut s = seen.lock().unwrap();
                    if !s.contains(&me) {
                        s.push(me);
                    }
                    drop(s);
                    batch.iter().for_each(|&c| range[c - first] += 1);
                },
            );
            // Every owner applied something on a thread of its own, seen from outside the
            // exchange, and the report counts the same threads.
            assert_eq!(distinct_seen(&seen), threads, "{threads} threads");
            assert_eq!(report.threads, threads);
            assert_eq!(report.keys_per_thread.len(), threads);
            assert_eq!(report.keys_per_thread.iter().sum::<usize>(), keys.len());
            assert!(
                report
                    .keys_per_thread
                    .iter()
                    .all(|&n| n.abs_diff(keys.len() / threads) <= 1)
            );
            assert_eq!(report.max_queued, 4);
            assert!(report.peak_queued <= 4, "{report:?}");
            // Each thread sends each other thread one batch per step of 1 000 keys (every
            // step of these keys has keys for every range).
            let steps: u64 = report
                .keys_per_thread
                .iter()
                .map(|&n| n.div_ceil(1_000) as u64)
                .sum();
            assert_eq!(report.batches_exchanged, steps * (threads as u64 - 1));
            assert_eq!(table.iter().sum::<u32>(), keys.len() as u32);
        }
    }

    #[test]
    fn fork_merge_runs_on_every_thread_it_is_given_and_reports_it() {
        let keys: Vec<u64> = (0..300_000).collect();
        for (threads, min, want) in [(3, 1_000, 3), (3, 150_000, 2), (4, 1_000_000, 1)] {
            let seen = std::sync::Mutex::new(Vec::new());
            let mut total = 0u64;
            let report = fork_merge(
                &mut total,
                &keys,
                threads,
                min,
                |_| Some(0u64),
                |t: &mut u64, run: &[u64]| {
                    seen.lock().unwrap().push(std::thread::current().id());
                    *t += run.iter().sum::<u64>();
                },
                |t: &mut u64, part: &u64| *t += part,
            );
            assert_eq!(total, keys.iter().sum::<u64>());
            assert_eq!(distinct_seen(&seen), want, "{threads} threads, {min} each");
            assert_eq!(report.threads, want);
            assert_eq!(report.keys_per_thread.len(), want);
            assert_eq!(report.keys_per_thread.iter().sum::<usize>(), keys.len());
            assert_eq!((report.batches_exchanged, report.peak_queued), (0, 0));
        }
        // No memory for the private tables: one thread, and the report says so.
        let mut total = 0u64;
        let report = fork_merge(
            &mut total,
            &keys,
            3,
            1,
            |_| None,
            |t: &mut u64, run: &[u64]| *t += run.iter().sum::<u64>(),
            |t: &mut u64, part: &u64| *t += part,
        );
        assert_eq!(report, ParallelReport::one_thread(keys.len()));
        assert_eq!(total, keys.iter().sum::<u64>());
    }

    /// Holds thread 1 back from its inbox until thread 0 has found that inbox full (or has
    /// sent all it had): a consumer slower than any scheduler would make it, with no timing.
    #[derive(Default)]
    struct SlowConsumer {
        release: std::sync::atomic::AtomicBool,
        full_seen: std::sync::atomic::AtomicU64,
    }

    impl Hooks for SlowConsumer {
        fn before_receive(&self, me: usize) {
            if me == 1 {
                while !self.release.load(std::sync::atomic::Ordering::Acquire) {
                    std::thread::yield_now();
                }
            }
        }
        fn inbox_full(&self, me: usize, to: usize) {
            if (me, to) == (0, 1) {
                self.full_seen
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                self.release
                    .store(true, std::sync::atomic::Ordering::Release);
            }
        }
        fn routed_all(&self, me: usize) {
            if me == 0 {
                self.release
                    .store(true, std::sync::atomic::Ordering::Release);
            }
        }
    }

    #[test]
    fn a_slow_consumer_never_has_more_than_the_bound_queued() {
        // Thread 0 routes 100 steps, each with keys for thread 1, which does not look at its
        // inbox until thread 0 has found it full: without the bound, all 100 batches would
        // wait there at once.
        let keys: Vec<u64> = (0..200_000).collect();
        for max_queued in [1usize, 2, 5] {
            let hooks = SlowConsumer::default();
            let mut table = vec![0u32; 64];
            let owners = Owners::new(table.len(), 2);
            let report = exchange_with(
                &mut table,
                &owners,
                &keys,
                1_000,
                max_queued,
                route_by_cell(&owners, 64),
                |range: &mut [u32], first: usize, batch: &Vec<usize>| {
                    batch.iter().for_each(|&c| range[c - first] += 1);
                },
                &hooks,
            );
            assert!(
                hooks.full_seen.load(std::sync::atomic::Ordering::Relaxed) > 0,
                "the sender met a full inbox"
            );
            assert!(report.waits > 0, "{report:?}");
            assert_eq!(report.max_queued, max_queued);
            assert_eq!(
                report.peak_queued, max_queued,
                "filled to the bound, not past it"
            );
            assert!(table.iter().all(|&c| c == 200_000 / 64));
            assert_eq!(report.threads, 2);
        }
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
                    route_by_cell(&owners, 1_000),
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
            .recv_timeout(bloomlab_conformance::timing::scaled(
                std::time::Duration::from_secs(60),
            ))
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

/// Loom models of the exchange (`RUSTFLAGS="--cfg loom" cargo test --release -p bloomlab-core
/// loom`): every interleaving of two threads with a few keys each, within loom's
/// preemption bound — 2 unless `LOOM_MAX_PREEMPTIONS` says otherwise, which keeps `.ci/run`
/// fast; `LOOM_MAX_PREEMPTIONS=3` explores more for a local run. The threads run the
/// exchange's own [`Exchange::run`], on loom's threads, locks and atomics ([`sync`]).
/// A model of three threads exceeded loom's budget of steps per execution (20 000) in the
/// waiting loops, and is not kept; the real-thread tests run three to thirteen.
#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use loom::sync::Arc;

    fn model(f: impl Fn() + Sync + Send + 'static) {
        let mut b = loom::model::Builder::new();
        b.preemption_bound.get_or_insert(2);
        // The waiting loops take many steps per execution; a thread that never stops
        // waiting still exceeds any bound.
        b.max_branches = b.max_branches.max(20_000);
        b.check(f);
    }

    type Route = fn(&[u64], &mut [Vec<usize>]);
    type Apply = fn(&mut [u32], usize, &Vec<usize>);

    /// One cell per thread; key `k` counts in cell `k`.
    fn route(keys: &[u64], out: &mut [Vec<usize>]) {
        keys.iter().for_each(|&k| out[k as usize].push(k as usize));
    }

    fn apply(range: &mut [u32], first: usize, batch: &Vec<usize>) {
        batch.iter().for_each(|&c| range[c - first] += 1);
    }

    /// [`apply`], except that thread 1 fails on its first step.
    fn apply_failing(range: &mut [u32], first: usize, batch: &Vec<usize>) {
        if first == 1 {
            panic!("a failing apply");
        }
        apply(range, first, batch)
    }

    /// Thread `t` (one cell each) routes `shares[t]`, one key per step, with inboxes of
    /// `max_queued` batches; thread 0 is the model's own. Each thread's cell and what it did,
    /// or `None` for a thread that panicked.
    fn exchange_on_loom_threads(
        shares: &[&[u64]],
        max_queued: usize,
        apply: Apply,
    ) -> Vec<Option<(u32, WorkerStats)>> {
        let threads = shares.len();
        let x = Arc::new(Exchange::new(
            (0..=threads).collect(),
            1,
            max_queued,
            route as Route,
            apply,
            NoHooks,
        ));
        let run = |x: &Exchange<Vec<usize>, Route, Apply, NoHooks>, t: usize, share: &[u64]| {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let mut cell = [0u32];
                let stats = x.run(t, &mut cell, share);
                (cell[0], stats)
            }))
            .ok()
        };
        let handles: Vec<_> = (1..threads)
            .map(|t| {
                let (x, share) = (x.clone(), shares[t].to_vec());
                loom::thread::spawn(move || run(&x, t, &share))
            })
            .collect();
        let mut out = vec![run(&x, 0, shares[0])];
        out.extend(handles.into_iter().map(|h| h.join().unwrap()));
        out
    }

    #[test]
    fn loom_an_inbox_never_holds_more_than_its_bound() {
        // Thread 0 sends three batches to thread 1, which sends two back; one batch fits in an
        // inbox. In every interleaving both cells end right and no sender saw two queued.
        model(|| {
            let done = exchange_on_loom_threads(&[&[1, 1, 1], &[0, 0]], 1, apply);
            let (c0, s0) = done[0].unwrap();
            let (c1, s1) = done[1].unwrap();
            assert_eq!((c0, c1), (2, 3));
            assert_eq!((s0.sent, s1.sent), (3, 2));
            assert!(s0.peak <= 1 && s1.peak <= 1, "{s0:?} {s1:?}");
        });
    }

    #[test]
    fn loom_two_threads_waiting_on_each_other_both_finish() {
        // Each thread sends the other two batches and an inbox holds one, so both can find
        // the other's inbox full at once: each applies its own while it waits, and both
        // return (loom fails a model whose threads all block, or spin past its bound on
        // steps) with every key counted once.
        model(|| {
            let done = exchange_on_loom_threads(&[&[1, 1], &[0, 0]], 1, apply);
            let cells: Vec<u32> = done.iter().map(|d| d.unwrap().0).collect();
            assert_eq!(cells, [2, 2]);
        });
    }

    #[test]
    fn loom_a_thread_with_no_keys_waits_for_the_others_and_returns() {
        // Thread 0 has nothing to route and reaches the final loop at once; it must apply
        // what thread 1 sends it later, and return only when thread 1 is done.
        model(|| {
            let done = exchange_on_loom_threads(&[&[], &[0, 1, 0]], 1, apply);
            let cells: Vec<u32> = done.iter().map(|d| d.unwrap().0).collect();
            assert_eq!(cells, [2, 1]);
        });
    }

    #[test]
    fn loom_a_panicking_thread_does_not_hang_the_others() {
        // Thread 1 fails on its first step while thread 0 has three batches for it and room
        // for one: thread 0 must stop waiting for room that will never come, and return.
        let quiet = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if info.payload().downcast_ref::<&str>() != Some(&"a failing apply") {
                quiet(info)
            }
        }));
        model(|| {
            let done = exchange_on_loom_threads(&[&[1, 1, 1], &[0]], 1, apply_failing);
            assert!(done[1].is_none(), "thread 1 panicked");
            assert!(done[0].is_some(), "thread 0 returned");
        });
    }
}
