//! Building one blocked filter with every core.

use bloomlab_core::Key;
use bloomlab_core::error::Result;
use bloomlab_core::hash::{HashScheme, KeyHash, Xxh3Scheme};
use bloomlab_core::simd::{self, LocalKernel, Routed};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::{
    BATCH, Block, BlockedBloomFilter, Layout, block_insert, hash_chunk_in, hash_in, place_in,
};

/// Below this many keys per thread, a thread costs more to start (tens of µs) and its table
/// more to merge than its share of the inserts saves.
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
    /// share, 4 096 keys at a time, pushing each key's block and probes onto a batch for the
    /// thread that owns the block (found with one multiply: `⌊b · r / 2^64⌋`, `r = ⌊T · 2^64 /
    /// n⌋`); it hands the other threads their batches (a mutex-guarded queue per thread, one
    /// lock per batch, so about one per 2 000 keys with two threads), inserts its own batch with
    /// the block [`BATCH`] places ahead prefetched, as `insert_batch` does, then inserts whatever
    /// the others have queued for it. A thread that has hashed all its keys keeps inserting what
    /// arrives until every thread is done. A key's bits all lie in its one block, so each block
    /// is written by one thread only and holds what the sequential inserts put there: no
    /// atomics on the table, no extra table, no merge; each key is hashed once. A sender whose
    /// receiver has 64 batches waiting (about 4 MiB) inserts its own queue while it waits, so
    /// memory stays bounded however far one thread falls behind, and two threads waiting on
    /// each other both make progress (tested with a queue of one batch). std's scoped threads
    /// are enough for this one fork and join; rayon would bring a thread pool and a dependency
    /// for no measurable gain here.
    ///
    /// With fewer than 32 768 keys per thread it uses fewer threads (one below 65 536 keys).
    ///
    /// # Measured
    ///
    /// On a 2-vCPU AMD EPYC VM (Zen 4), 10^7 keys at 1 %, a scratch program (not kept) timed this
    /// build against the one before it — every thread reading and hashing *every* key and
    /// inserting those of its range, below — in one process, A B B A, on fresh tables as the
    /// harness builds them: the previous build's time ÷ this one's **1.22** (median of nine
    /// rounds, range 1.14–1.29), and 1.17 (1.11–1.37) on pre-faulted tables; 1.13, 1.16 and
    /// 1.21 with 1 024, 4 096 and 16 384 keys per step (4 096 kept), and no different with the
    /// items packed into 8 bytes (1.18 twice; not kept: the older layouts need 16). Profiled
    /// (`perf`, a software clock, `examples/parallel_halves`), hashing and sorting out the keys
    /// take 45 % of this build's time and the inserts 55 %. Interleaving the two — one
    /// queued insert after each key hashed, so the hashing would overlap the inserts' cache
    /// misses — was slower: this build's time ÷ that one's 0.91 (nine rounds, 0.81–1.11; a
    /// prototype, not kept). The same holds in one thread the other way round: `insert_batch`,
    /// which hashes each key `BATCH` places ahead of its insert, took 0.81 and 0.95× the time
    /// of hashing 1 024 keys and then inserting them at 10^7 keys, 0.91× at 10^6 (medians of
    /// nine to fifteen A B B A rounds) — so each path keeps the order it has. Nor is the push
    /// what the hashing phase costs: with two threads, writing each key to both batches and
    /// advancing only its owner's length (no branch, no length kept in memory) took 1.05× the
    /// time (0.95, range 0.90–1.10, nine rounds; not kept). The hash itself is about a tenth
    /// of the build: with XXH3-64 replaced by one multiply (wrong filters, for timing) the
    /// build took 0.91 and 0.88× the time (medians of nine rounds in two processes; ranges
    /// of the real ÷ that time 0.90–1.17 and 0.92–1.31), so hashing eight keys at a time in vector
    /// lanes could save at most that.
    ///
    /// `examples/parallel_halves` sets the build against its bound: two threads, each inserting
    /// half the keys into a half-size table of its own (no exchange at all, the same random
    /// read-modify-writes). In nine rounds on the same VM, pre-faulted tables, one thread ÷
    /// this build 1.64–2.09× where one thread ÷ the bound read 2.19–2.90× — how much the second
    /// thread gains moves with the VM from minute to minute (the same example, half an hour before,
    /// read the bound at 0.66–1.10× in most rounds). The harness's `concurrent` experiment
    /// times the bound in the same rounds as the build, on fresh tables, and reports the build ÷
    /// the bound. Five processes of it (`results/notes/concurrent-repeat.md`, the command
    /// there): one thread ÷ this build **1.40–1.53×** (median 1.47), this build 1.43–1.56× the
    /// bound's time (the bound at 2.15–2.32×); five processes of the build before, just
    /// earlier: 1.34–1.48× (median 1.44) and 1.60–1.76× the bound's time (the bound at
    /// 2.23–2.42×). Against its bound the build gained about a tenth; the issue's 1.6× over one
    /// thread it reaches when the VM gives the second thread more (a committed run of the build
    /// before read 1.89×), not in these runs. The committed default run at 53b4759: 1.44×
    /// [1.23–1.74], 1.53× [1.52–1.57] the bound's time.
    ///
    /// # Designs before this one
    ///
    /// - **Every thread hashing every key** (until this build): each thread read all the keys,
    ///   hashed each, collected without a branch those whose block lay in its range (a branch
    ///   on the hash mispredicts every other key: with it, two threads built 10^7 keys only
    ///   1.1× faster than one) and inserted them, round by round (hashing and inserting in
    ///   turns took 0.85× the time of interleaving them one key each). Committed runs of the
    ///   harness read 1.39× (Intel Xeon VM), 1.25× and 1.26× (AMD EPYC VMs, Zen 4 and Zen 5),
    ///   then 1.41× and 1.89× (Zen 4, two runs of the same build), and 1.24–1.49× in ten
    ///   processes of the experiment alone (two sets of five); in the second set the split
    ///   bound read 2.23–2.42× on fresh tables and the build took 1.60–1.76× the bound's time. Its hashing phase cost 2.2–4 ns
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
    ///   range** before the clock starts (a prototype of the ideal routing): 0.98× the bound's
    ///   time. None was kept. Why the present exchange, which also sends batches, beats the
    ///   channel prototype was not established; it differs in its queue (a mutex-guarded
    ///   vector a sender never waits on while it has room, against a bounded channel) and in
    ///   reusing the batches' buffers.
    /// - **An exchange behind a barrier** (an earlier prototype): every thread hashed its share
    ///   into one outbox per destination range, the outboxes swapped behind a barrier every
    ///   16 384 keys: the every-key build's time ÷ its 0.91 [0.83–1.00] (eight paired rounds,
    ///   pre-faulted tables) — slower, where the present exchange, with no barrier, is faster.
    /// - **XXH3-64 in AVX-512 lanes** (eight 8-byte keys at once, 0.6–1.0 ns per key against
    ///   1.8–2.1 one at a time; bit-exact, not kept): the chunked pipeline's gathering and
    ///   handing back cost more than it saved in the batched paths (lookups 1.16–1.40× and
    ///   `insert_batch` 1.14–1.25× the time), and it did not shorten the every-key build's
    ///   collect phase.
    /// - [`AtomicBlockedBloomFilter`] shared by the threads would pay a `lock or` per probe.
    ///
    /// The two vCPUs of these VMs are not hyperthreads of one core: a loop bound by the vector
    /// multiply port runs 2.0× faster on both than on one.
    ///
    /// [`AtomicBlockedBloomFilter`]: crate::AtomicBlockedBloomFilter
    pub fn insert_parallel<K: Key + Sync>(&mut self, keys: &[K]) {
        self.insert_parallel_with_threads(keys, available_threads());
    }

    /// [`insert_parallel`](Self::insert_parallel) with at most `threads` threads (the calling
    /// one included; 0 counts as 1).
    pub fn insert_parallel_with_threads<K: Key + Sync>(&mut self, keys: &[K], threads: usize) {
        self.insert_exchanged(keys, threads, MAX_QUEUED);
    }

    /// The build of [`insert_parallel`](Self::insert_parallel), with at most `max_queued`
    /// batches waiting in any thread's inbox.
    fn insert_exchanged<K: Key + Sync>(&mut self, keys: &[K], threads: usize, max_queued: usize) {
        let n = self.blocks.len();
        let threads = threads.min(keys.len() / MIN_KEYS_PER_THREAD).min(n).max(1);
        if threads == 1 {
            self.insert_batch(keys);
            return;
        }
        let scheme = self.meta.scheme().clone();
        let owners = Owners::new(n, threads);
        let x = Exchange {
            layout: self.layout,
            k: self.k,
            kernel: self.kernel,
            scheme: &scheme,
            n,
            owners: &owners,
            inbox: (0..threads).map(|_| Mutex::new(Vec::new())).collect(),
            finished: AtomicUsize::new(0),
            max_queued: max_queued.max(1),
            lanes: self.layout == Layout::OneHash
                && n <= 1 << 32
                && threads <= 8
                && simd::has_avx512dq(),
        };
        // Each thread's range of blocks, the calling thread taking the first.
        let mut ranges: Vec<&mut [Block]> = Vec::with_capacity(threads);
        let mut rest: &mut [Block] = &mut self.blocks;
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
            for (t, lines) in ranges {
                s.spawn(move || x.run(t, lines, share(t)));
            }
            x.run(0, first, share(0));
        });
        let count = self.meta.count().saturating_add(keys.len() as u64);
        self.meta = self.meta.clone().with_count(count);
    }
}

/// Keys a thread hashes per step of the parallel build.
const STEP: usize = 4096;

/// Batches that may wait in one thread's inbox before a sender waits (inserting what it was
/// sent meanwhile): at most `MAX_QUEUED · STEP` hashed keys, 16 bytes each, per thread — 4 MiB —
/// however far one thread runs ahead of another (a descheduled thread, a loaded machine).
const MAX_QUEUED: usize = 64;

/// Keys gathered, hashed and routed together within a step: their words and hashes (4 KiB
/// each) stay in the first-level cache.
const GATHER: usize = 512;

/// Which thread owns which blocks: `owner(b) = ⌊b · r / 2^64⌋` with `r = ⌊T · 2^64 / n⌋`, one
/// multiply per key (no division); it never decreases with `b` and stays below `T`, so each
/// thread owns one contiguous range, `first[t]..first[t + 1]`, `first[t] = ⌈t · 2^64 / r⌉`.
struct Owners {
    r: u64,
    first: Vec<usize>,
    /// `first` as `u64`s, the bounds [`simd::route_one_hash`] takes.
    bounds: Vec<u64>,
}

impl Owners {
    fn new(n: usize, threads: usize) -> Self {
        // r ≤ T · 2^64 / n, so owner(b) ≤ (n − 1) · T / n < T. With T = n the quotient is
        // 2^64 and r saturates at 2^64 − 1: one thread then owns two blocks and another none,
        // still one contiguous range each.
        let r = u64::try_from(((threads as u128) << 64) / n as u128).unwrap_or(u64::MAX);
        // The first block of thread t is the least b with b · r ≥ t · 2^64 (n if none);
        // r ≥ 1, as n < 2^64.
        let first: Vec<usize> = (0..=threads)
            .map(|t| ((t as u128) << 64).div_ceil(u128::from(r)).min(n as u128) as usize)
            .collect();
        let bounds = first.iter().map(|&b| b as u64).collect();
        Owners { r, first, bounds }
    }

    #[inline(always)]
    fn of(&self, b: usize) -> usize {
        ((b as u128 * u128::from(self.r)) >> 64) as usize
    }
}

/// What the threads of one parallel build share.
struct Exchange<'a, S> {
    layout: Layout,
    k: u32,
    kernel: LocalKernel,
    scheme: &'a S,
    n: usize,
    owners: &'a Owners,
    /// Per thread, the batches other threads hashed for its range.
    inbox: Vec<Mutex<Vec<Routed>>>,
    /// Threads that have hashed all their keys (and sent every batch).
    finished: AtomicUsize,
    max_queued: usize,
    /// Whether 8-byte keys are hashed and routed in AVX-512 lanes ([`Exchange::hash_step`]):
    /// the current layout, at most 2^32 blocks and 8 threads, a CPU with AVX-512F and DQ.
    /// Without the lanes, gathering the keys and routing them in a second pass cost more
    /// than it saved (one key at a time was 1.11× faster on the same machine).
    lanes: bool,
}

impl<S: HashScheme> Exchange<'_, S> {
    /// Thread `me`'s part: hash its share of the keys, STEP at a time, each key's (block,
    /// probes) pushed to the batch of the thread that owns the block; send the others'
    /// batches; insert its own, then whatever its inbox holds. Once its keys are done, insert
    /// what arrives until every thread is done.
    fn run<K: Key>(&self, me: usize, lines: &mut [Block], share: &[K]) {
        let threads = self.inbox.len();
        let base = self.owners.first[me];
        // Emptied batches, reused for the next ones this thread sends.
        let mut spare: Vec<Routed> = Vec::new();
        let mut out: Vec<Routed> = (0..threads).map(|_| Routed::with_capacity(STEP)).collect();
        for step in share.chunks(STEP) {
            self.hash_step(step, &mut out);
            for (to, batch) in out.iter_mut().enumerate() {
                if to != me && !batch.is_empty() {
                    let fresh = spare.pop().unwrap_or_else(|| Routed::with_capacity(STEP));
                    self.send(me, lines, &mut spare, to, std::mem::replace(batch, fresh));
                }
            }
            self.insert(base, lines, &out[me]);
            out[me].clear();
            self.receive(me, lines, &mut spare);
        }
        self.finished.fetch_add(1, Ordering::Release);
        loop {
            // Read before the last look at the inbox: every batch sent by a thread that had
            // finished by then (its sends happen-before its `fetch_add`) is in it.
            let all_done = self.finished.load(Ordering::Acquire) == threads;
            if !self.receive(me, lines, &mut spare) {
                if all_done {
                    return;
                }
                std::thread::yield_now();
            }
        }
    }

    /// Hash `step`'s keys and append each key's block and probes to the batch of the thread
    /// that owns the block: keys of exactly 8 bytes (every integer key) of the current
    /// layout, [`GATHER`] at a time, hashed and routed in vector lanes where the CPU has them
    /// ([`HashScheme::hash64_words`], [`simd::route_one_hash`]); any others one by one.
    fn hash_step<K: Key>(&self, step: &[K], out: &mut [Routed]) {
        if self.lanes {
            let mut words = [0u64; GATHER];
            let mut hashes = [0u64; GATHER];
            for chunk in step.chunks(GATHER) {
                let words = &mut words[..chunk.len()];
                let all8 = words.iter_mut().zip(chunk).all(|(w, key)| {
                    key.with_key_bytes(|b| <[u8; 8]>::try_from(b).map(u64::from_le_bytes))
                        .map(|x| *w = x)
                        .is_ok()
                });
                if all8 {
                    let hashes = &mut hashes[..chunk.len()];
                    self.scheme.hash64_words(words, hashes);
                    simd::route_one_hash(hashes, self.n as u64, &self.owners.bounds, out);
                } else {
                    self.hash_one_by_one(chunk, out);
                }
            }
        } else {
            self.hash_one_by_one(step, out);
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

    /// Queue `batch` in thread `to`'s inbox; while that inbox is full, insert what this
    /// thread's own inbox holds (so two threads waiting on each other both make progress).
    fn send(
        &self,
        me: usize,
        lines: &mut [Block],
        spare: &mut Vec<Routed>,
        to: usize,
        batch: Routed,
    ) {
        loop {
            let mut q = lock(&self.inbox[to]);
            if q.len() < self.max_queued {
                q.push(batch);
                return;
            }
            drop(q);
            if !self.receive(me, lines, spare) {
                std::thread::yield_now();
            }
        }
    }

    /// Insert every batch waiting in thread `me`'s inbox; `false` if there was none.
    fn receive(&self, me: usize, lines: &mut [Block], spare: &mut Vec<Routed>) -> bool {
        let batches = std::mem::take(&mut *lock(&self.inbox[me]));
        let any = !batches.is_empty();
        for mut batch in batches {
            self.insert(self.owners.first[me], lines, &batch);
            batch.clear();
            spare.push(batch);
        }
        any
    }

    /// Insert `items` (blocks of this thread's range, which starts at block `base`), the
    /// block [`BATCH`] places ahead prefetched, as `insert_batch` does.
    fn insert(&self, base: usize, lines: &mut [Block], items: &Routed) {
        let blocks = &items.blocks;
        for &b in blocks.iter().take(BATCH) {
            simd::prefetch(&lines[b as usize - base]);
        }
        for (i, (&b, &src)) in blocks.iter().zip(&items.srcs).enumerate() {
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

/// A lock whose holder cannot have panicked mid-update (the queues are only pushed to and
/// taken whole), so a poisoned one is used as it is.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owners_split_the_blocks_into_contiguous_ranges() {
        for n in [1usize, 2, 3, 7, 64, 1000, 195_313, 1 << 20] {
            for threads in [1usize, 2, 3, 5, 8, 16] {
                if threads > n {
                    continue;
                }
                let o = Owners::new(n, threads);
                assert_eq!((o.first[0], o.first[threads]), (0, n), "n {n}, T {threads}");
                for t in 0..threads {
                    assert!(o.first[t] <= o.first[t + 1]);
                    for b in o.first[t]..o.first[t + 1] {
                        assert_eq!(o.of(b), t, "n {n}, T {threads}, block {b}");
                    }
                }
                // Ranges within one block of even when there are many blocks per thread.
                if n >= 64 * threads {
                    for t in 0..threads {
                        let len = o.first[t + 1] - o.first[t];
                        assert!(len.abs_diff(n / threads) <= 1, "n {n}, T {threads}: {len}");
                    }
                }
            }
        }
    }

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
