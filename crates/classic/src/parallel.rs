//! Building one classic filter with every core.

use bloomlab_core::hash::{self, HashScheme, KeyHash};
use bloomlab_core::{Key, simd};
use bloomlab_parallel::{self as parallel, Owners, ParallelReport};

use crate::BloomFilter;

/// Below this many keys per thread, a thread costs more to start than its share of the
/// inserts saves.
const MIN_KEYS_PER_THREAD: usize = 1 << 15;

bloomlab_parallel::parallel_entry_points! {
    impl BloomFilter {
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
        fn from_keys;

        /// Insert every key of `keys` using all available cores
        /// ([`std::thread::available_parallelism`]); bits and count are exactly those of
        /// inserting the keys one by one.
        ///
        /// # How
        ///
        /// [`bloomlab_parallel::exchange`]: the bit array's words are cut into one
        /// contiguous range per thread, the keys into one share per thread. Each thread hashes
        /// its share, 1 024 keys at a time, and hands each of a key's `k` bit positions to the
        /// thread that owns its word; each thread sets the bits of its own range (the word 64
        /// positions ahead prefetched). A Bloom filter is the OR of its keys' bits, so neither
        /// order nor split changes a bit; each word is written by one thread only — no atomics,
        /// no private table, no merge. On a CPU with AVX-512, with at most 8 threads and fewer
        /// than 2^32 bits, the positions are computed and handed on eight keys at a time in vector
        /// lanes ([`simd::route_positions`]); otherwise one at a time. With fewer than 32 768 keys
        /// per thread it uses fewer threads (one below 65 536 keys: [`insert_batch`](Self::insert_batch)).
        ///
        /// # Why this design
        ///
        /// A Bloom filter is the OR of its keys' bits, so handing each bit position to the thread that
        /// owns its word builds the exact sequential filter without atomics, a private table per thread
        /// or a merge. The design before (private tables ORed together) and the measurements that
        /// replaced it are in `docs/design/classic.md`.
        fn insert_parallel;

        /// [`insert_parallel`](Self::insert_parallel) with at most `threads` threads (the calling
        /// one included; 0 counts as 1).
        ///
        /// Returns what the build did ([`ParallelReport`]): the threads that inserted keys (more
        /// than one whenever more than one was given and there are at least 65 536 keys), the
        /// batches of bit positions they handed each other, and the most that waited in any
        /// thread's inbox — never more than [`PARALLEL_MAX_QUEUED`] (64) batches of the positions of 1 024
        /// keys, 3.5 MiB per thread at `k = 7`.
        ///
        /// ```
        /// use bloomlab_classic::BloomFilter;
        ///
        /// let keys: Vec<u64> = (0..200_000).collect();
        /// let mut f = BloomFilter::with_fpr(200_000, 0.01)?;
        /// let report = f.insert_parallel_with_threads(&keys, 2);
        /// assert_eq!(report.keys_per_thread, [100_000, 100_000]);
        /// assert!(report.peak_queued <= bloomlab_classic::PARALLEL_MAX_QUEUED);
        /// # Ok::<(), bloomlab_core::Error>(())
        /// ```
        fn insert_parallel_with_threads = insert_exchanged(PARALLEL_MAX_QUEUED);
    }
}

impl<S: HashScheme> BloomFilter<S> {
    /// The build of [`insert_parallel`](Self::insert_parallel), with at most `max_queued`
    /// batches waiting in any thread's inbox.
    fn insert_exchanged<K: Key + Sync>(
        &mut self,
        keys: &[K],
        threads: usize,
        max_queued: usize,
    ) -> ParallelReport {
        let m = self.bits.len();
        let words = self.bits.words().len();
        let threads = parallel::threads_for(threads, keys.len(), MIN_KEYS_PER_THREAD, words);
        if threads == 1 {
            self.insert_batch(keys);
            return ParallelReport::one_thread(keys.len());
        }
        let owners = Owners::new(words, threads);
        let (k, scheme) = (self.k, self.meta.scheme());
        // The owners' first bits, for `simd::route_positions`.
        let bounds: Vec<u64> = owners.first().iter().map(|&w| w as u64 * 64).collect();
        let lanes = simd::routes_in_lanes(m, threads);
        // Each key's two hash halves, `GATHER` keys at a time (eight at a time in vector lanes
        // where the scheme has them).
        let hash_all = |keys: &[K], h1: &mut [u64], h2: &mut [u64]| {
            let mut put = |i: usize, h: KeyHash| (h1[i], h2[i]) = (h.h1, h.h2);
            if S::LANES {
                for (c, chunk) in keys.chunks(simd::CHUNK).enumerate() {
                    let mut hs = [KeyHash::new(0, 0); simd::CHUNK];
                    let hs = &mut hs[..chunk.len()];
                    hash::hash_chunk(chunk, hs, |b| scheme.hash(b), |w| scheme.hash_words8(w));
                    for (j, &h) in hs.iter().enumerate() {
                        put(c * simd::CHUNK + j, h);
                    }
                }
            } else {
                for (i, key) in keys.iter().enumerate() {
                    put(i, key.with_key_bytes(|b| scheme.hash(b)));
                }
            }
        };
        let route = |keys: &[K], out: &mut [Vec<u64>]| {
            let (mut h1, mut h2) = ([0u64; GATHER], [0u64; GATHER]);
            for chunk in keys.chunks(GATHER) {
                let (h1, h2) = (&mut h1[..chunk.len()], &mut h2[..chunk.len()]);
                hash_all(chunk, h1, h2);
                if lanes {
                    simd::route_positions(h1, h2, k, m, &bounds, out);
                } else {
                    for (&h1, &h2) in h1.iter().zip(h2.iter()) {
                        for p in (KeyHash { h1, h2 }).positions(k, m) {
                            out[owners.of((p >> 6) as usize)].push(p);
                        }
                    }
                }
            }
        };
        let apply = |range: &mut [u64], first: usize, batch: &Vec<u64>| {
            for &p in batch.iter().take(AHEAD) {
                simd::prefetch(&range[(p >> 6) as usize - first]);
            }
            for (i, &p) in batch.iter().enumerate() {
                if let Some(&a) = batch.get(i + AHEAD) {
                    simd::prefetch(&range[(a >> 6) as usize - first]);
                }
                range[(p >> 6) as usize - first] |= 1 << (p & 63);
            }
        };
        let report = self.bits.with_words_mut(|w| {
            parallel::exchange(w, &owners, keys, STEP, max_queued, route, apply)
        });
        self.meta.record_inserts(keys.len() as u64);
        report
    }
}

/// Keys a thread hashes per step of the parallel build (each `k` probes to hand on).
const STEP: usize = 1024;

/// Batches that may wait in one thread's inbox before a sender waits: at most
/// `PARALLEL_MAX_QUEUED · STEP · k` probes, 8 bytes each, per thread — 3.5 MiB at `k = 7`. A build's
/// [`ParallelReport::max_queued`] is this bound, and its `peak_queued` never exceeds it.
pub const PARALLEL_MAX_QUEUED: usize = 64;

/// Keys hashed together before their probes are routed.
const GATHER: usize = 256;

/// Probes ahead whose words a thread prefetches while it sets bits.
const AHEAD: usize = 64;

#[cfg(test)]
mod tests {
    use super::*;

    bloomlab_conformance::full_inbox_test!(BloomFilter);
}
