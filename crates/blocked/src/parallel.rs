//! Building one blocked filter with every core.

use bloomlab_core::Key;
use bloomlab_core::error::Result;
use bloomlab_core::hash::{HashScheme, KeyHash, Xxh3Scheme};
use bloomlab_core::parallel::{self, Owners, ParallelReport};
use bloomlab_core::simd::{self, LocalKernel, Routed};

use crate::{
    BATCH, Block, BlockedBloomFilter, Layout, block_insert, hash_chunk_in, hash_in, place_in,
};

/// Below this many keys per thread, a thread costs more to start (tens of µs) than its share
/// of the inserts saves.
const MIN_KEYS_PER_THREAD: usize = 1 << 15;

/// The number of threads [`BlockedBloomFilter::insert_parallel`] uses:
/// [`std::thread::available_parallelism`], or 1 if it is unknown.
pub use bloomlab_core::parallel::available_threads;

impl BlockedBloomFilter<Xxh3Scheme> {
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
    pub fn from_keys<K: Key + Sync>(keys: &[K], fpr: f64) -> Result<Self> {
        let mut f = Self::with_fpr(keys.len() as u64, fpr)?;
        f.insert_parallel(keys);
        Ok(f)
    }
}

impl<S: HashScheme> BlockedBloomFilter<S> {
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
    /// # Measured
    ///
    /// On a 2-vCPU AMD EPYC VM (Zen 4, 2.6 GHz), the build is not held back by memory: with
    /// the keys' blocks and probes computed beforehand, inserting them (prefetched 32 ahead)
    /// cost 4.2–4.5 ns a key whether the blocks spanned 16 KiB or 6 MiB — about 11 cycles of
    /// kernel and loop, five rounds each (a scratch test, not kept). So every instruction the
    /// exchange adds to a key shows in its time. Timed per thread in the one-at-a-time
    /// exchange (two threads, 10^7 keys; scratch timers, not kept), hashing and sorting out a
    /// thread's 5·10^6 keys took 24–28 ms of its 63–68 — about 5 ns a key — and inserting
    /// the 5·10^6 keys of its range the rest. In one thread, 5·10^6 keys, seven rounds: XXH3-64
    /// and the block alone 2.3–2.5 ns a key; appending to one list 2.6–2.8; appending to the
    /// owner's list 4.1–4.4 (its length goes through memory, and each append waits for the
    /// last one to the same list); the owner's list with the lengths in registers 3.3–3.7;
    /// **hashing and routing in lanes 1.7–1.8** (the route's memory-form `vpcompressq`, which
    /// stores just the lanes kept, took 11.5–12.7: it is microcoded on Zen 4). Where the keys
    /// go did not matter: with every key sent to its own thread's range (wrong filters,
    /// timing only) the exchange took 1.02× (0.81–1.25) the time — the batches crossing
    /// between cores cost nothing measurable.
    ///
    /// In one process, nine rounds of 10^7 keys (a scratch program, not kept, the table
    /// cleared between builds), the one-at-a-time exchange's time ÷ the lanes': **1.45**
    /// (range 1.17–1.83), and 1.25 (1.21–1.35) in a second process; one thread's
    /// `insert_batch` ÷ the lanes build 1.88 (1.69–2.53) in the first. Without the lanes
    /// (their portable definitions, same machine), copying the keys out and routing in a
    /// second pass took 1.11× the one-at-a-time exchange's time: CPUs without AVX-512 keep the
    /// one-at-a-time path. One thread keeps `insert_batch`: hashing 512 keys in lanes, then
    /// inserting them, took about its time (`insert_batch` ÷ that 1.04, range 1.00–1.06, at
    /// 10^6 keys; 0.96, 0.81–1.23, at 10^7; eleven rounds), since `insert_batch` already
    /// hides its hashing behind the inserts' cache misses.
    ///
    /// `examples/parallel_halves` sets the build beside a split that moves no key: two
    /// threads, each inserting half the keys into a half-size table of its own with
    /// `insert_batch`. On the same VM, seven rounds, pre-faulted tables: one thread ÷ this
    /// build 1.61–2.70×, one thread ÷ that split 1.78–2.63× — level, round by round, where
    /// the one-at-a-time exchange took 1.43–1.56× the split's time. The harness's `concurrent`
    /// experiment times that split reference in the same rounds as the build, on fresh
    /// tables. Five processes of it at 13e69ba (`results/notes/concurrent-repeat.md`, the
    /// command there): one thread ÷ this build **2.01–2.43×** (median 2.23; every interval
    /// above 1), this build 0.93–1.03× the reference's time (median 1.01; the reference at
    /// 2.09–2.34×); five processes at 54bba94, with the same lanes (before the exchange moved
    /// into `bloomlab_core::parallel`): 1.87–2.12× (median 2.02)
    /// and 1.01–1.06× the reference's time. The committed default run at 629e88a: 2.44×
    /// [2.30–2.60], 0.99× [0.89–1.15] the reference's time.
    ///
    /// # Designs before this one
    ///
    /// - **The same exchange, hashing one key at a time** (until this build; it is still the
    ///   path without AVX-512). Against the build before it (below), in one process, A B B A,
    ///   fresh tables, 10^7 keys: that build's time ÷ this one's 1.22 (nine rounds, 1.14–1.29),
    ///   1.17 (1.11–1.37) pre-faulted; 1.13, 1.16 and 1.21 with 1 024, 4 096 and 16 384 keys per
    ///   step (4 096 kept); items of 8 bytes no different from 16 (1.18 twice). Profiled (`perf`,
    ///   a software clock), hashing and sorting out took 45 % of its time, the inserts 55 %.
    ///   Three variants were slower: one queued insert after each key hashed, so the hashing
    ///   would overlap the inserts' misses (its time ÷ that one's 0.91, 0.81–1.11, nine rounds;
    ///   a later prototype, one pending insert per key hashed with the received batches joined
    ///   to the local queue, 0.76, 0.59–0.87: the build is bound by instructions, not by
    ///   misses); each key written to both batches with the lengths in registers (0.95,
    ///   0.90–1.10); and, in one thread, hashing 1 024 keys and then inserting them against
    ///   `insert_batch`'s interleaving (`insert_batch` took 0.81 and 0.95× the time at 10^7,
    ///   0.91× at 10^6). With XXH3-64 replaced by one multiply (wrong filters, for timing) it
    ///   took 0.91 and 0.88× the time, from which these docs concluded that lanes could save
    ///   at most a tenth; they saved more, because the lanes also route the keys, and the
    ///   one-at-a-time append to the owner's list cost as much as the hash. Five processes of
    ///   the harness's `concurrent` experiment (at 8e224bb): one thread ÷ this build 1.40–1.53×
    ///   (median 1.47), its time 1.43–1.56× the split reference's (the reference at 2.15–2.32×);
    ///   the committed default run at 53b4759: 1.44× [1.23–1.74], 1.53× [1.52–1.57] the
    ///   reference's time. In `examples/parallel_halves`, nine rounds, pre-faulted tables: one
    ///   thread ÷ it 1.64–2.09× where one thread ÷ the reference read 2.19–2.90× (half an hour
    ///   before, the same example read the reference at 0.66–1.10× in most rounds).
    /// - **Every thread hashing every key** (before the exchange): each thread read all the keys,
    ///   hashed each, collected without a branch those whose block lay in its range (a branch
    ///   on the hash mispredicts every other key: with it, two threads built 10^7 keys only
    ///   1.1× faster than one) and inserted them, round by round (hashing and inserting in
    ///   turns took 0.85× the time of interleaving them one key each). Committed runs of the
    ///   harness read 1.39× (Intel Xeon VM), 1.25× and 1.26× (AMD EPYC VMs, Zen 4 and Zen 5),
    ///   then 1.41× and 1.89× (Zen 4, two runs of the same build), and 1.24–1.49× in ten
    ///   processes of the experiment alone (two sets of five); in the second set the split
    ///   reference read 2.23–2.42× on fresh tables and the build took 1.60–1.76× its time.
    ///   Its hashing phase cost 2.2–4 ns
    ///   per key and thread, not in the hash: XXH3 eight keys at a time in AVX-512 lanes, or a
    ///   one-multiply hash, left it as long.
    /// - **A private table per extra thread, ORed in at the end** (the first version; still the
    ///   classic filter's design): 1.7–1.8× in a fresh process, 1.16–1.41× after lookups at
    ///   10^7, where the second 12 MB table — pages to fault in or memory to clear — cost as
    ///   much as the inserts it took over. Timed again against the exchange (a prototype on
    ///   `bloomlab_core::parallel::fork_merge`, two threads, fresh tables, 10^7 keys, the
    ///   exchange's time ÷ its): 1.10 (1.04–1.23, nine rounds) with the private table made by
    ///   cloning and clearing the filter, which faults its pages in before the threads start;
    ///   0.88 and 0.51 in the next two processes with it allocated zeroed, its pages faulted in
    ///   during the inserts. Fragile, and a second table of the filter's size per extra thread:
    ///   not kept.
    /// - **An exchange over a bounded channel** (4 096 keys per batch; a prototype): 1.15× and
    ///   1.31× where the build above read 1.17 and 1.26; hashing and sorting out cost it 6.4
    ///   ns/key (hashing 1.6, most of the rest the pushes). **A broadcast** (every thread hashes a
    ///   round into one buffer that all scan, behind a spinning barrier): 1.03–1.08× slower than
    ///   the build above. **A region sort** (buffers per 256 KiB of table, so inserts land in
    ///   L2): one thread 12–16 ns/key against `insert_batch`'s 6.5–12. **Keys pre-sorted by
    ///   range** before the clock starts (a prototype of the ideal routing): 0.98× the reference's
    ///   time. None was kept. Why the present exchange, which also sends batches, beats the
    ///   channel prototype was not established; it differs in its queue (a mutex-guarded
    ///   vector a sender never waits on while it has room, against a bounded channel) and in
    ///   reusing the batches' buffers.
    /// - **An exchange behind a barrier** (an earlier prototype): every thread hashed its share
    ///   into one outbox per destination range, the outboxes swapped behind a barrier every
    ///   16 384 keys: the every-key build's time ÷ its 0.91 [0.83–1.00] (eight paired rounds,
    ///   pre-faulted tables) — slower, where the present exchange, with no barrier, is faster.
    /// - **XXH3-64 in AVX-512 lanes, eight keys per chunk of the batched paths** (0.6–1.0 ns
    ///   per key against 1.8–2.1 one at a time; bit-exact; an earlier prototype): the chunked
    ///   pipeline's gathering and handing back cost more than it saved there (lookups
    ///   1.16–1.40× and `insert_batch` 1.14–1.25× the time), and it did not shorten the
    ///   every-key build's collect phase, whose cost was in the branch-free collect. The
    ///   lanes pay in this build, where 512 words are in hand at once and the routing runs in
    ///   lanes too.
    /// - [`AtomicBlockedBloomFilter`] shared by the threads would pay a `lock or` per probe.
    ///
    /// The two vCPUs of these VMs are not hyperthreads of one core: a loop bound by the vector
    /// multiply port runs 2.0× faster on both than on one.
    ///
    /// [`AtomicBlockedBloomFilter`]: crate::AtomicBlockedBloomFilter
    pub fn insert_parallel<K: Key + Sync>(&mut self, keys: &[K]) -> ParallelReport {
        self.insert_parallel_with_threads(keys, available_threads())
    }

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
        let n = self.blocks.len();
        let threads = threads.min(keys.len() / MIN_KEYS_PER_THREAD).min(n).max(1);
        if threads == 1 {
            self.insert_batch(keys);
            return ParallelReport::one_thread(keys.len());
        }
        let scheme = self.meta.scheme().clone();
        let owners = Owners::new(n, threads);
        let router = Router {
            layout: self.layout,
            k: self.k,
            kernel: self.kernel,
            scheme: &scheme,
            n,
            owners: &owners,
            bounds: owners.first().iter().map(|&b| b as u64).collect(),
            lanes: self.layout == Layout::OneHash
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
        let count = self.meta.count().saturating_add(keys.len() as u64);
        self.meta = self.meta.clone().with_count(count);
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
    /// than it saved (one key at a time was 1.11× faster on the same machine).
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
        let mut push = |h: KeyHash| {
            let (b, src) = place_in(self.layout, h, self.n as u64);
            out[self.owners.of(b)].push(b as u64, src);
        };
        if S::LANES {
            for chunk in keys.chunks(simd::CHUNK) {
                let mut hs = [KeyHash::new(0, 0); simd::CHUNK];
                hash_chunk_in(self.layout, self.scheme, chunk, &mut hs[..chunk.len()]);
                hs[..chunk.len()].iter().for_each(|&h| push(h));
            }
        } else {
            keys.iter()
                .for_each(|key| push(hash_in(self.layout, self.scheme, key)));
        }
    }

    /// Insert `items` (blocks of this thread's range, which starts at block `base`), the
    /// block [`BATCH`] places ahead prefetched, as `insert_batch` does.
    fn insert(&self, base: usize, lines: &mut [Block], items: &Routed) {
        let blocks = items.blocks();
        for &b in blocks.iter().take(BATCH) {
            simd::prefetch(&lines[b as usize - base]);
        }
        for (i, (&b, &src)) in blocks.iter().zip(items.srcs()).enumerate() {
            if let Some(&ahead) = blocks.get(i + BATCH) {
                simd::prefetch(&lines[ahead as usize - base]);
            }
            block_insert(
                self.layout,
                &self.kernel,
                &mut lines[b as usize - base],
                src,
                self.k,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_inbox_makes_the_sender_wait_without_losing_a_key() {
        // One batch per inbox at most: senders wait (inserting their own inbox) all the time.
        let keys: Vec<u64> = (0..300_000u64)
            .map(|i| i.wrapping_mul(0xD6E8_FEB8_6659_FD93))
            .collect();
        let mut want = BlockedBloomFilter::with_fpr(300_000, 0.01).unwrap();
        want.insert_batch(&keys);
        for threads in [2, 3, 6] {
            let mut f = BlockedBloomFilter::with_fpr(300_000, 0.01).unwrap();
            f.insert_exchanged(&keys, threads, 1);
            assert_eq!(f, want, "{threads} threads");
        }
    }
}
