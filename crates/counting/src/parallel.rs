//! Building one counting filter with every core.

use bloomlab_core::Key;
use bloomlab_core::hash::HashScheme;
use bloomlab_parallel::{self as parallel, ParallelReport};

use crate::{CountingBloomFilter, STICKY};

/// Below this many keys per thread, a thread costs more to start and its table more to merge
/// than its share of the inserts saves.
const MIN_KEYS_PER_THREAD: usize = 1 << 15;

bloomlab_parallel::parallel_entry_points! {
    impl CountingBloomFilter {
        /// A filter sized for `keys.len()` keys at false-positive rate `fpr`
        /// ([`with_fpr`](Self::with_fpr)) holding all of them, built with every available core
        /// ([`insert_parallel`](Self::insert_parallel)): counter for counter the filter that
        /// inserting the keys one by one builds.
        ///
        /// ```
        /// use bloomlab_counting::CountingBloomFilter;
        ///
        /// let keys: Vec<u64> = (0..100_000).collect();
        /// let f = CountingBloomFilter::from_keys(&keys, 0.01)?;
        /// let mut g = CountingBloomFilter::with_fpr(100_000, 0.01)?;
        /// keys.iter().for_each(|k| { g.insert(k); });
        /// assert_eq!(f.to_bytes(), g.to_bytes());
        /// # Ok::<(), bloomlab_core::Error>(())
        /// ```
        fn from_keys;

        /// Insert every key of `keys` using all available cores
        /// ([`std::thread::available_parallelism`]); counters and count are exactly those of
        /// inserting the keys one by one.
        ///
        /// [`bloomlab_parallel::fork_merge`]: one contiguous run of keys per thread, each
        /// extra thread into a private empty table of the same shape, then the tables are merged
        /// counter by counter with `min(a + b, 15)`. Inserting one key adds 1 to each of its
        /// distinct counters unless it is sticky (15), so after any sequence of inserts a counter
        /// holds `min(inserts touching it, 15)`, and `min(min(a, 15) + min(b, 15), 15) =
        /// min(a + b, 15)`: the merge gives the counters of the sequential build exactly. (Removes
        /// do not commute this way; only inserts are parallel.)
        fn insert_parallel;

        /// [`insert_parallel`](Self::insert_parallel) with at most `threads` threads (the calling
        /// one included; 0 counts as 1).
        ///
        /// Returns what the build did ([`ParallelReport`]): the threads that inserted keys — more
        /// than one whenever more than one was given and there are at least 65 536 keys (and
        /// memory for the private tables) — and the keys each took. Nothing is exchanged, so the
        /// queue figures are 0.
        ///
        /// ```
        /// use bloomlab_counting::CountingBloomFilter;
        ///
        /// let keys: Vec<u64> = (0..100_000).collect();
        /// let mut f = CountingBloomFilter::with_fpr(100_000, 0.01)?;
        /// let report = f.insert_parallel_with_threads(&keys, 2);
        /// assert_eq!(report.keys_per_thread, [50_000, 50_000]);
        /// # Ok::<(), bloomlab_core::Error>(())
        /// ```
        fn insert_parallel_with_threads = insert_forked();
    }
}

impl<S: HashScheme> CountingBloomFilter<S> {
    /// The build of [`insert_parallel_with_threads`](Self::insert_parallel_with_threads).
    fn insert_forked<K: Key + Sync>(&mut self, keys: &[K], threads: usize) -> ParallelReport {
        parallel::fork_merge(
            self,
            keys,
            threads,
            MIN_KEYS_PER_THREAD,
            |f| Self::with_counters_and_scheme(f.m, f.k, f.meta.scheme().clone()).ok(),
            |f, run| {
                for k in run {
                    f.insert(k);
                }
            },
            |f, part| {
                for (a, &b) in f.nibbles.iter_mut().zip(&part.nibbles) {
                    let lo = ((*a & 0x0f) + (b & 0x0f)).min(STICKY);
                    let hi = ((*a >> 4) + (b >> 4)).min(STICKY);
                    *a = lo | (hi << 4);
                }
                f.meta.record_inserts(part.meta.count());
            },
        )
    }
}
