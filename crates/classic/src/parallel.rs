//! Building one classic filter with every core.

use std::num::NonZeroUsize;

use bloomlab_core::Key;
use bloomlab_core::error::Result;
use bloomlab_core::hash::{HashScheme, Xxh3Scheme};

use crate::BloomFilter;

/// Below this many keys per thread, a thread costs more to start and its table more to merge
/// than its share of the inserts saves.
const MIN_KEYS_PER_THREAD: usize = 1 << 15;

impl BloomFilter<Xxh3Scheme> {
    /// A filter sized for `keys.len()` keys at false-positive rate `fpr`
    /// ([`with_fpr`](Self::with_fpr)) holding all of them, built with every available core
    /// ([`insert_parallel`](Self::insert_parallel)): bit for bit the filter that inserting
    /// the keys one by one builds.
    ///
    /// ```
    /// use bloomlab_classic::BloomFilter;
    ///
    /// let keys: Vec<u64> = (0..200_000).collect();
    /// let f = BloomFilter::from_keys(&keys, 0.01)?;
    /// let mut g = BloomFilter::with_fpr(200_000, 0.01)?;
    /// keys.iter().for_each(|k| { g.insert(k); });
    /// assert_eq!(f, g);
    /// # Ok::<(), bloomlab_core::Error>(())
    /// ```
    pub fn from_keys<K: Key + Sync>(keys: &[K], fpr: f64) -> Result<Self> {
        let mut f = Self::with_fpr(keys.len() as u64, fpr)?;
        f.insert_parallel(keys);
        Ok(f)
    }
}

impl<S: HashScheme> BloomFilter<S> {
    /// Insert every key of `keys` using all available cores
    /// ([`std::thread::available_parallelism`]); bits and count are exactly those of
    /// inserting the keys one by one.
    ///
    /// The keys are cut into one contiguous run per thread; the calling thread inserts the
    /// first run into `self`, each other thread its run into a private empty table of the
    /// same `m`, `k` and scheme, and the tables are ORed into `self` ([`union`](Self::union)):
    /// a Bloom filter is the OR of its keys' bits, so neither order nor split changes a bit.
    /// Nothing is shared while inserting (no atomics, no cache lines bouncing between cores);
    /// the price is one extra table per extra thread and a merge pass over it. std's scoped
    /// threads suffice for one fork and join, so there is no thread-pool dependency. With
    /// fewer than 32 768 keys per thread it uses fewer threads.
    ///
    /// Measured (`bench-harness run … --experiments concurrent`, 10^7 keys at 1 %, 2 vCPUs at
    /// load average 6.6–6.9): **not** a gain there — the parallel build took 1.62× the
    /// process CPU time of the insert loop (60 against 37 ns/key; the two 12 MiB tables and
    /// their k = 7 cache misses per key compete for the shared cache, where the blocked
    /// filter's one miss per key did not: 1.07×) and 0.61× the wall-clock speed. Whether two
    /// idle cores gain anything is not shown by this machine.
    pub fn insert_parallel<K: Key + Sync>(&mut self, keys: &[K]) {
        let threads = std::thread::available_parallelism().map_or(1, NonZeroUsize::get);
        self.insert_parallel_with_threads(keys, threads);
    }

    /// [`insert_parallel`](Self::insert_parallel) with at most `threads` threads (the calling
    /// one included; 0 counts as 1).
    pub fn insert_parallel_with_threads<K: Key + Sync>(&mut self, keys: &[K], threads: usize) {
        let threads = threads.min(keys.len() / MIN_KEYS_PER_THREAD).max(1);
        let insert_all = |f: &mut Self, run: &[K]| {
            for k in run {
                f.insert(k);
            }
        };
        if threads == 1 {
            insert_all(self, keys);
            return;
        }
        let mut runs = keys.chunks(keys.len().div_ceil(threads));
        let first = runs.next().unwrap_or(&[]);
        let empty =
            || Self::with_bits_and_scheme(self.bits(), self.hashes(), self.scheme().clone());
        let Ok(mut parts) = runs.clone().map(|_| empty()).collect::<Result<Vec<_>>>() else {
            // No memory for private tables: insert on this thread alone.
            insert_all(self, keys);
            return;
        };
        std::thread::scope(|s| {
            for (part, run) in parts.iter_mut().zip(runs) {
                s.spawn(move || insert_all(part, run));
            }
            insert_all(self, first);
        });
        for part in &parts {
            self.union(part).expect("same m, k and scheme");
        }
    }
}
