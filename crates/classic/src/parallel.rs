//! Building one classic filter with every core.

use bloomlab_core::error::Result;
use bloomlab_core::hash::{self, HashScheme, KeyHash, Xxh3Scheme};
use bloomlab_core::parallel::{self, Owners, ParallelReport};
use bloomlab_core::{Key, simd};

use crate::BloomFilter;

/// Below this many keys per thread, a thread costs more to start than its share of the
/// inserts saves.
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
    /// # How
    ///
    /// [`bloomlab_core::parallel::exchange`]: the bit array's words are cut into one
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
    /// # Measured
    ///
    /// 2-vCPU AMD EPYC VM (Zen 4), 10^7 keys at 1 % (12 MB, `k = 7`), `insert_batch` in one
    /// thread against this build, eleven rounds A B B A on fresh filters in one process (a
    /// scratch program, not kept): **2.33×** (median of the paired ratios, range 1.98–2.79),
    /// then 2.24× (1.74–2.69) and 2.41× (1.74–2.55) in two more processes; 64 positions
    /// prefetched ahead read like 128 (2.24×) and better than 32 (1.66×); 1 024 keys per step
    /// like 4 096 (2.20×) and better than 256 (1.90×). Without the lanes (one position at a
    /// time, `k` appends per key) it read 1.15× and 1.31×: on a CPU without AVX-512 the build
    /// gains little from a second core. Hashing and handing on the positions one at a time
    /// cost 18.5–19.4 ns a key in one thread (5·10^6 keys, scratch timers), setting the
    /// handed-on bits 3.8–4.5 ns a position; the lanes took most of the first away. The
    /// harness's `concurrent` experiment (`insert_batch` ÷ this, paired, fresh filters): five
    /// processes at 13e69ba 1.96–2.92× (median 2.21; `results/notes/concurrent-repeat.md`),
    /// the committed default run at 629e88a 2.73× [2.41–3.25].
    ///
    /// # The design before
    ///
    /// [`bloomlab_core::parallel::fork_merge`]: one contiguous run of keys per thread, each
    /// into a private empty table of the same `m`, `k` and scheme, ORed into `self`
    /// ([`union`](Self::union)), each run inserted one key at a time. Against one thread's
    /// insert loop the harness's `concurrent` experiment read 1.60× [1.32–1.79] (Intel Xeon VM,
    /// 34.0 → 21.0 ns/key) and 1.55× [1.46–1.63] (AMD EPYC VM at 7e92311, 67.2 → 43.5), then
    /// 1.44–1.81× in five processes on the Zen 4 VM. But one thread's `insert_batch`, which
    /// prefetches each key's words, was faster still: in one process, seven rounds, 25.2 ns a
    /// key against that build's 55.6 — its two threads took 2.2× the time of one thread
    /// batching. With `insert_batch` for each run, it read 27.2 against 33.1 (1.2×): the private
    /// table's pages and the merge cost about what the second core saved.
    pub fn insert_parallel<K: Key + Sync>(&mut self, keys: &[K]) -> ParallelReport {
        self.insert_parallel_with_threads(keys, parallel::available_threads())
    }

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
    pub fn insert_parallel_with_threads<K: Key + Sync>(
        &mut self,
        keys: &[K],
        threads: usize,
    ) -> ParallelReport {
        self.insert_exchanged(keys, threads, PARALLEL_MAX_QUEUED)
    }

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
        let threads = threads
            .min(keys.len() / MIN_KEYS_PER_THREAD)
            .min(words)
            .max(1);
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
        let count = self.meta.count().saturating_add(keys.len() as u64);
        self.meta = self.meta.clone().with_count(count);
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

    #[test]
    fn a_full_inbox_makes_the_sender_wait_without_losing_a_key() {
        // One batch per inbox at most: senders wait (setting their own inbox's bits) all the
        // time.
        let keys: Vec<u64> = (0..300_000u64)
            .map(|i| i.wrapping_mul(0xD6E8_FEB8_6659_FD93))
            .collect();
        let mut want = BloomFilter::with_fpr(300_000, 0.01).unwrap();
        want.insert_batch(&keys);
        for threads in [2, 3, 6] {
            let mut f = BloomFilter::with_fpr(300_000, 0.01).unwrap();
            f.insert_exchanged(&keys, threads, 1);
            assert_eq!(f, want, "{threads} threads");
        }
    }
}
