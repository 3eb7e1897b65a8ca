//! Building one blocked filter with every core.

use bloomlab_core::Key;
use bloomlab_core::hash::{HashScheme, KeyHash};
use bloomlab_parallel::{self as parallel, Owners, ParallelReport};
use bloomlab_simd::{self as simd, LocalKernel, Routed};

use crate::layout::{Layout, Rule, by_layout};
use crate::{BATCH, Block, BlockedBloomFilter};

/// Below this many keys per thread, a thread costs more to start (tens of µs) than its share
/// of the inserts saves.
const MIN_KEYS_PER_THREAD: usize = 1 << 15;

/// The number of threads [`BlockedBloomFilter::insert_parallel`] uses:
/// [`std::thread::available_parallelism`], or 1 if it is unknown.
pub use bloomlab_parallel::available_threads;

bloomlab_parallel::parallel_entry_points! {
    impl BlockedBloomFilter {
        /// A filter sized for `keys.len()` keys at false-positive rate `fpr`
        /// ([`with_fpr`](Self::with_fpr)) holding all of them, built with every available core
        /// ([`insert_parallel`](Self::insert_parallel)). Bit for bit the filter that inserting
        /// the keys one by one builds.
        ///
        /// ```
        /// use bloomlab_blocked::BlockedBloomFilter;
        ///
        /// let keys: Vec<u64> = (0..200_000).collect();
        /// let f = BlockedBloomFilter::from_keys(&keys, 0.01)?;
        /// let mut g = BlockedBloomFilter::with_fpr(200_000, 0.01)?;
        /// keys.iter().for_each(|k| { g.insert(k); });
        /// assert_eq!(f, g);
        /// # Ok::<(), bloomlab_core::Error>(())
        /// ```
        ///
        /// Errors as [`with_fpr`](Self::with_fpr) (no keys is [`Error::ZeroItems`](bloomlab_core::Error::ZeroItems)).
        fn from_keys;

        /// Insert every key of `keys` using all available cores ([`available_threads`]); the
        /// result — bits and count — is exactly that of [`insert_batch`](Self::insert_batch)
        /// (and so of inserting the keys one by one, in any order).
        ///
        /// # How
        ///
        /// The table is cut into one contiguous range of blocks per thread, and the keys into one
        /// share per thread (the calling thread takes the first of each). Each thread hashes its
        /// share, 4 096 keys at a time, appending each key's block and probes to a batch for the
        /// thread that owns the block; it hands the other threads their batches (a mutex-guarded
        /// queue per thread, one lock per batch, so about one per 2 000 keys with two threads),
        /// inserts its own batch with the block [`BATCH`] places ahead prefetched, as
        /// `insert_batch` does, then inserts whatever the others have queued for it. A thread that
        /// has hashed all its keys keeps inserting what arrives until every thread is done. A key's
        /// bits all lie in its one block, so each block is written by one thread only and holds
        /// what the sequential inserts put there: no atomics on the table, no extra table, no
        /// merge; each key is hashed once. A sender whose receiver has 64 batches waiting (about
        /// 4 MiB) inserts its own queue while it waits, so memory stays bounded however far one
        /// thread falls behind, and two threads waiting on each other both make progress (tested
        /// with a queue of one batch). std's scoped threads are enough for this one fork and join;
        /// rayon would bring a thread pool and a dependency for no measurable gain here.
        ///
        /// The hashing runs eight keys per instruction where it can: keys of exactly 8 bytes
        /// (every integer key), in the current layout, on a CPU with AVX-512 (F and DQ), with at
        /// most 8 threads. 512 keys at a time are copied out as words, hashed in vector lanes
        /// ([`HashScheme::hash64_words`]: XXH3-64, or the keyed scheme's SipHash), placed and
        /// split by owner in lanes ([`simd::route_one_hash`]: the owner of each lane by comparing
        /// its block with the ranges' ends, each owner's lanes packed together and stored at the
        /// end of its batch). Other keys, layouts and CPUs take one key at a time: its hash, its
        /// block, its owner (one multiply, `⌊b · r / 2^64⌋`, `r = ⌊T · 2^64 / n⌋`), a push. Both
        /// give the same batches.
        ///
        /// With fewer than 32 768 keys per thread it uses fewer threads (one below 65 536 keys).
        ///
        /// # Why this design
        ///
        /// A key's bits all lie in one block, so handing each key to the thread that owns its block
        /// builds the exact sequential filter with no atomics, no second table and no merge. Designs
        /// tried before (private tables ORed together, every thread hashing every key, channels,
        /// barriers) and the measurements that decided between them are in `docs/design/blocked.md`.
        ///
        /// [`AtomicBlockedBloomFilter`]: crate::AtomicBlockedBloomFilter
        fn insert_parallel;

        /// [`insert_parallel`](Self::insert_parallel) with at most `threads` threads (the calling
        /// one included; 0 counts as 1).
        ///
        /// Returns what the build did ([`ParallelReport`]): the threads that inserted keys (more
        /// than one whenever more than one was given, the table has more than one block and there
        /// are at least 65 536 keys), the batches of hashed keys they handed each other, and the
        /// most that waited in any thread's inbox — never more than [`PARALLEL_MAX_QUEUED`] (64)
        /// batches of 4 096 keys, 4 MiB per thread.
        ///
        /// ```
        /// use bloomlab_blocked::BlockedBloomFilter;
        ///
        /// let keys: Vec<u64> = (0..200_000).collect();
        /// let mut f = BlockedBloomFilter::with_fpr(200_000, 0.01)?;
        /// let report = f.insert_parallel_with_threads(&keys, 2);
        /// assert_eq!(report.keys_per_thread, [100_000, 100_000]);
        /// assert!(report.peak_queued <= bloomlab_blocked::PARALLEL_MAX_QUEUED);
        /// # Ok::<(), bloomlab_core::Error>(())
        /// ```
        fn insert_parallel_with_threads = insert_exchanged(PARALLEL_MAX_QUEUED);
    }
}

impl<S: HashScheme> BlockedBloomFilter<S> {
    /// The build of [`insert_parallel`](Self::insert_parallel), with at most `max_queued`
    /// batches waiting in any thread's inbox.
    fn insert_exchanged<K: Key + Sync>(
        &mut self,
        keys: &[K],
        threads: usize,
        max_queued: usize,
    ) -> ParallelReport {
        let n = self.blocks.len();
        let threads = parallel::threads_for(threads, keys.len(), MIN_KEYS_PER_THREAD, n);
        if threads == 1 {
            self.insert_batch(keys);
            return ParallelReport::one_thread(keys.len());
        }
        let scheme = self.cold.meta.scheme().clone();
        let owners = Owners::new(n, threads);
        let router = Router {
            layout: self.cold.layout,
            k: self.cold.k,
            kernel: self.cold.kernel,
            scheme: &scheme,
            n,
            owners: &owners,
            bounds: owners.first().iter().map(|&b| b as u64).collect(),
            lanes: self.cold.layout == Layout::OneHash
                && simd::routes_in_lanes(n as u64, threads)
                && simd::has_avx512dq(),
        };
        let report = parallel::exchange(
            &mut self.blocks,
            &owners,
            keys,
            STEP,
            max_queued,
            |keys: &[K], out: &mut [Routed]| router.hash_step(keys, out),
            |range: &mut [Block], first: usize, batch: &Routed| router.insert(first, range, batch),
        );
        self.cold.meta.record_inserts(keys.len() as u64);
        report
    }
}

/// Keys a thread hashes per step of the parallel build.
const STEP: usize = 4096;

/// Batches that may wait in one thread's inbox before a sender waits (inserting what it was
/// sent meanwhile): at most `PARALLEL_MAX_QUEUED · STEP` hashed keys, 16 bytes each, per thread — 4 MiB —
/// however far one thread runs ahead of another (a descheduled thread, a loaded machine). A
/// build's [`ParallelReport::max_queued`] is this bound, and its `peak_queued` never exceeds it.
pub const PARALLEL_MAX_QUEUED: usize = 64;

/// Keys gathered, hashed and routed together within a step: their words and hashes (4 KiB
/// each) stay in the first-level cache.
const GATHER: usize = 512;

/// How the threads of one parallel build hash keys and insert them.
struct Router<'a, S> {
    layout: Layout,
    k: u32,
    kernel: LocalKernel,
    scheme: &'a S,
    n: usize,
    owners: &'a Owners,
    /// The owners' first blocks as `u64`s, the bounds [`simd::route_one_hash`] takes.
    bounds: Vec<u64>,
    /// Whether 8-byte keys are hashed and routed in AVX-512 lanes ([`Router::hash_step`]):
    /// the current layout, [`simd::routes_in_lanes`] (fewer than 2^32 blocks, at most 8
    /// threads, AVX-512F), and AVX-512DQ for the hash.
    /// Without the lanes, gathering the keys and routing them in a second pass cost more
    /// than it saved (one key at a time was faster).
    lanes: bool,
}

impl<S: HashScheme> Router<'_, S> {
    /// Hash `keys` and append each key's block and probes to the batch of the thread that
    /// owns the block: keys of exactly 8 bytes (every integer key) of the current layout,
    /// [`GATHER`] at a time, hashed and routed in vector lanes where the CPU has them
    /// ([`HashScheme::hash64_words`], [`simd::route_one_hash`]); any others one by one.
    fn hash_step<K: Key>(&self, keys: &[K], out: &mut [Routed]) {
        if !self.lanes {
            self.hash_one_by_one(keys, out);
            return;
        }
        let mut words = [0u64; GATHER];
        let mut hashes = [0u64; GATHER];
        for chunk in keys.chunks(GATHER) {
            let words = &mut words[..chunk.len()];
            let all8 = words.iter_mut().zip(chunk).all(|(w, key)| {
                key.with_key_bytes(|b| <[u8; 8]>::try_from(b).map(u64::from_le_bytes))
                    .map(|x| *w = x)
                    .is_ok()
            });
            if all8 {
                let hashes = &mut hashes[..chunk.len()];
                self.scheme.hash64_words(words, hashes);
                simd::route_one_hash(hashes, self.n as u64, &self.bounds, out);
            } else {
                self.hash_one_by_one(chunk, out);
            }
        }
    }

    /// [`hash_step`](Self::hash_step) one key at a time (eight at a time in vector lanes
    /// where the scheme has them, [`HashScheme::LANES`]).
    fn hash_one_by_one<K: Key>(&self, keys: &[K], out: &mut [Routed]) {
        by_layout!(self.layout, R => self.hash_one_by_one_in::<R, K>(keys, out))
    }

    /// [`hash_one_by_one`](Self::hash_one_by_one) under rule `R`, chosen once per step.
    fn hash_one_by_one_in<R: Rule, K: Key>(&self, keys: &[K], out: &mut [Routed]) {
        let mut push = |h: KeyHash| {
            let (b, src) = R::place(h, self.n as u64);
            out[self.owners.of(b)].push(b as u64, src);
        };
        if S::LANES {
            for chunk in keys.chunks(simd::CHUNK) {
                let mut hs = [KeyHash::new(0, 0); simd::CHUNK];
                R::hash_chunk(self.scheme, chunk, &mut hs[..chunk.len()]);
                hs[..chunk.len()].iter().for_each(|&h| push(h));
            }
        } else {
            keys.iter().for_each(|key| push(R::hash(self.scheme, key)));
        }
    }

    /// Insert `items` (blocks of this thread's range, which starts at block `base`), the
    /// block [`BATCH`] places ahead prefetched, as `insert_batch` does.
    fn insert(&self, base: usize, lines: &mut [Block], items: &Routed) {
        by_layout!(self.layout, R => self.insert_in::<R>(base, lines, items))
    }

    /// [`insert`](Self::insert) under rule `R`, chosen once per batch.
    fn insert_in<R: Rule>(&self, base: usize, lines: &mut [Block], items: &Routed) {
        let blocks = items.blocks();
        for &b in blocks.iter().take(BATCH) {
            simd::prefetch(&lines[b as usize - base]);
        }
        for (i, (&b, &src)) in blocks.iter().zip(items.srcs()).enumerate() {
            if let Some(&ahead) = blocks.get(i + BATCH) {
                simd::prefetch(&lines[ahead as usize - base]);
            }
            R::insert(self.kernel, &mut lines[b as usize - base], src, self.k);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    bloomlab_conformance::full_inbox_test!(BlockedBloomFilter);
}
