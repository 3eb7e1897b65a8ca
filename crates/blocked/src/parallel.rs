//! Building one blocked filter with every core.

use bloomlab_core::Key;
use bloomlab_core::error::Result;
use bloomlab_core::hash::{HashScheme, KeyHash, Xxh3Scheme};
use bloomlab_core::simd::{self, LocalKernel};

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
    /// How: the table is cut into one contiguous range of blocks per thread; every thread
    /// reads and hashes every key and inserts those whose block lies in its range (the
    /// calling thread takes the first range). A key's bits are all in its one block, so each
    /// block is written by one thread only and its bits are what the sequential inserts set
    /// there: no atomics, no locks, no extra table, no merge. The price is hashing each key
    /// once per thread. Which keys fall in the range is decided without a branch (a branch
    /// on the hash mispredicts every other key: with it, two threads built 10^7 keys only
    /// 1.1× faster than one); per round of 4 096 keys, the range's keys, once collected, are
    /// inserted with the block [`BATCH`] places ahead prefetched, as in
    /// [`insert_batch`](Self::insert_batch) (see `insert_range` for why the hashing and the
    /// inserts take turns rather than interleave). An earlier pass timed the two as whole
    /// phases (10^7 keys, two threads, pre-faulted table): hashing and sorting out every key
    /// took each thread 36–56 ms and inserting its half 48–75 ms, one after the other, against
    /// 141 ms for the whole `insert_batch`; taking turns round by round (then interleaved within
    /// the round), the build took 0.82–0.90× the time (speed-up over `insert_batch` 1.25–1.49×
    /// against 1.04–1.35×, nine A B B A rounds per process, four processes). Hashing each key once instead — every thread hashing
    /// its own share of the keys into one outbox per destination range, the outboxes
    /// exchanged behind a barrier every 16 384 keys, each thread inserting what the others
    /// sent it while hashing its next share — was no faster: the time of this build ÷ that
    /// one 0.91 [0.83–1.00] (10^7 keys, two threads, eight paired rounds in one process on
    /// pre-faulted tables, the order alternating; an experiment not kept). The hashing a thread repeats overlaps its
    /// inserts' cache misses, so removing it saves less than the exchange costs.
    ///
    /// The first version gave each extra thread a private empty table and ORed it in at the
    /// end. Its speed-up depended on what the process had done before: 1.7–1.8× in a fresh
    /// process but 1.16–1.41× after a run of lookups at 10^7 (the `concurrent` experiment
    /// after the main measurements), where a second 12 MB table — fresh pages to fault in,
    /// or reused memory to clear — cost as much as the inserts it took over; the two
    /// vCPUs are not hyperthreads of one core (a loop bound by the vector multiply port runs
    /// 2.0× faster on both). An [`AtomicBlockedBloomFilter`] shared by the threads would
    /// pay a `lock or` per new bit. std's scoped threads are enough for this one fork and
    /// join; rayon would bring a thread pool and a dependency for no measurable gain here.
    ///
    /// With fewer than 32 768 keys per thread it uses fewer threads (one below 65 536 keys).
    ///
    /// Measured with the harness's `concurrent` experiment (10^7 keys at 1 %, 2 vCPUs, seven paired
    /// rounds: one thread's `insert_batch` against this, A B B A on fresh filters, load 1): 1.58×
    /// [1.31–1.78] in a process that ran only the experiment (`bench-harness run --filters blocked
    /// --n 1e5 --experiments concurrent`), 1.74× [1.57–1.99] after lookups at 10^6 and 10^7
    /// (`--filters blocked,classic,xorf-bfuse8,ribbon,cuckoo --n 1e6,1e7 --fpr 0.01 --experiments
    /// concurrent`). In an earlier committed run of `cargo run --release -p bench-harness`, on the
    /// Intel Xeon VM (the experiment after every other measurement, load 1.3), **1.39×
    /// [1.29–1.43]**: 15.3 → 11.4 ns/key, the parallel run doing 1.36× the CPU work — its
    /// one-thread baseline had just become faster (`insert_batch` on the AVX-512 insert kernel,
    /// 15.3 ns/key where the previous run's was 25.2), and two threads of random read-modify-writes
    /// over 12 MB share what the VM's memory system gives them (a two-thread loop of random 64-bit
    /// ORs into separate 12 MiB tables ran 1.6–1.8× as fast as one). The issue's ≥ 1.6× holds in
    /// some runs of the experiment, not in this one. On the 2-vCPU AMD EPYC VM (the run
    /// at 7ea6eb8, load 1.1–1.4): 1.25× [0.96–1.40], no measurable speed-up, 12.2 → 9.9 ns/key with
    /// 1.48× the CPU work; on a 2-vCPU AMD EPYC VM with Zen 5 (the run at e348a78) 1.26× [0.90–1.31],
    /// 8.0 → 7.0 ns/key with 1.56× the CPU work.
    /// On the Zen 4 VM, with the rounds taking turns (`insert_range`), the run at 2671312 read
    /// **1.41× [1.35–1.51]**, 11.1 → 8.6 ns/key with 1.32× the CPU work (the run before, with
    /// them interleaved, 1.27× [1.10–1.43]); the run at 82eac4b, the same build, **1.89×
    /// [1.70–1.94]**, 15.4 → 8.4 ns/key with 1.00× the CPU work — how much the VM gives the
    /// second thread moves this figure more than any change here did.
    ///
    /// Removing the hashing each thread repeats would not take it to 1.6×. With XXH3-64 replaced,
    /// for an experiment, by a multiply and a shift (wrong filters, the same memory traffic),
    /// `examples/concurrent` (10^7 keys, nine rounds, 2-vCPU AMD EPYC VM; median and range) read
    /// `insert_batch` ÷ this 1.58× (1.19–2.03) where the real hash read 1.28× (1.16–1.71) just
    /// before: free hashing raised the median, with ranges that overlap, and left it under 1.6×.
    /// The bound of any split is `examples/parallel_halves`: two threads each inserting half of
    /// the keys with `insert_batch` into a half-size table of its own (no key hashed twice, no
    /// exchange, the same memory traffic). Zen 5 VM, 10^7 keys, two processes of seven rounds:
    /// one thread ÷ that ×1.32–2.57 (median 1.76) and ×1.14–2.05 (1.62), where this build read
    /// ×0.80–1.38 (1.14) and ×0.95–1.72 (1.30) in the same rounds. So the memory system does
    /// give two threads about 1.6–1.8× one thread's random read-modify-writes here; what this
    /// build loses to it is each thread hashing and sorting out every key, and a perfect
    /// exchange would reach the issue's 1.6× only in the median.
    /// Hashing eight keys at once in AVX-512 lanes (XXH3-64's 8-byte path is two rotations, two
    /// 64-bit multiplies and shifts: 0.6–1.0 ns per key where one key at a time takes 1.8–2.1) made
    /// the batched paths slower, not faster: the chunked pipeline that pays for itself under
    /// SipHash (gathering eight keys, handing back eight hashes, partial chunks) cost more than the
    /// 1 ns per key it saved — batched lookups 1.16–1.40× and `insert_batch` 1.14–1.25× the time of
    /// the one-key-at-a-time pipeline, from 2 000 to 10^7 keys, in one process, alternating. Not
    /// kept.
    ///
    /// A build that sorts the keys by where they land was tried and not kept (2-vCPU AMD EPYC VM,
    /// Zen 5): every thread hashed its share of a chunk of keys (eight times the table's blocks)
    /// into one buffer per 256 KiB region of the table, then, behind a barrier, each inserted the
    /// keys of its own regions from every thread's buffers — every key hashed once, and each
    /// region's inserts landing in L2 instead of on a random line of 12 MB. With 10^7 keys (fresh,
    /// pre-faulted tables, three to nine rounds, the builds in turn): one thread took 13.0–14.0
    /// ns/key against `insert_batch`'s 6.0–8.2 — hashing and sorting out 4.9–5.2 ns/key, then the
    /// inserts 7.2–9.7 ns/key, more than `insert_batch`'s prefetched inserts cost, which the
    /// prototype did not explain — and two threads 8.0 ns/key: `insert_batch` ÷ it 0.74–1.11,
    /// where this build read 0.80–1.32 in the same rounds.
    ///
    /// Three more designs were timed against this one — as it was before 2671312, with hashing
    /// and inserts interleaved, about 1.18× its present time — on a 2-vCPU AMD EPYC VM with Zen 4 (10^7
    /// keys, pre-faulted tables, 15–25 rounds in one process, the builds' order rotated; the same
    /// rounds also ran `examples/parallel_halves`' bound; prototypes not kept). Each hashes every
    /// key once. (1) An exchange: each thread hashes its half of the keys in chunks of 4 096,
    /// keeps the keys of its own range and sends the others' in a batch over a bounded channel,
    /// inserting what it receives between chunks: 1.15× and 1.31× where this build read 1.17 and
    /// 1.26 and the bound 2.26 and 2.49. By phase, hashing and sorting out its keys cost a thread
    /// 6.4 ns/key (hashing alone 1.6; pushes into two buffers chosen by the hash most of the
    /// rest) and its inserts 5.4. (2) A broadcast: every thread hashes 4 096 (or 16 384) keys per
    /// round into a buffer that every thread then scans for the keys of its range, behind a
    /// spinning barrier, the next round's hashing interleaved with this round's inserts or not:
    /// this build's time ÷ its 1.05–1.08 (rewritten with 8-byte items in plain slices, against
    /// the present build: 1.03 and 1.06). (3) A region sort, as above but with buffers small
    /// enough for L3: one thread 12–16 ns/key against `insert_batch`'s 6.5–12.
    ///
    /// What separates every one-table build from the bound is not the table. Two threads filling
    /// the two halves of *one* 12 MB table, each with the keys that land in its half (sorted out
    /// before the clock starts; a prototype), took 0.98× (quartiles 0.94–1.00) the bound's time
    /// and 0.53× this build's — one thread ÷ it 2.16×. The cost is getting each key to the thread
    /// that owns its half: hashing every key on every thread (this build) or handing hashed keys
    /// from core to core (the exchange, the broadcast) each cost about as much again as the
    /// inserts. A caller that already holds its keys split by where they land (say, by a
    /// partitioned upstream) could be given that build; nothing here does it. When the VM did not
    /// give the second thread memory bandwidth (the bound at 1.05–1.25), every build read 0.9–1.1.
    ///
    /// [`AtomicBlockedBloomFilter`]: crate::AtomicBlockedBloomFilter
    pub fn insert_parallel<K: Key + Sync>(&mut self, keys: &[K]) {
        self.insert_parallel_with_threads(keys, available_threads());
    }

    /// [`insert_parallel`](Self::insert_parallel) with at most `threads` threads (the calling
    /// one included; 0 counts as 1).
    pub fn insert_parallel_with_threads<K: Key + Sync>(&mut self, keys: &[K], threads: usize) {
        let n = self.blocks.len();
        let threads = threads.min(keys.len() / MIN_KEYS_PER_THREAD).min(n).max(1);
        if threads == 1 {
            self.insert_batch(keys);
            return;
        }
        let (layout, k, kernel) = (self.layout, self.k, self.kernel);
        let scheme = self.meta.scheme().clone();
        // One contiguous range of blocks per thread, the calling thread taking the first.
        let mut ranges: Vec<(usize, &mut [Block])> = Vec::with_capacity(threads);
        let mut rest: &mut [Block] = &mut self.blocks;
        let mut lo = 0;
        for t in 0..threads {
            let hi = n * (t + 1) / threads;
            let (mine, tail) = rest.split_at_mut(hi - lo);
            ranges.push((lo, mine));
            (rest, lo) = (tail, hi);
        }
        let scheme = &scheme;
        std::thread::scope(|s| {
            let mut ranges = ranges.into_iter();
            let first = ranges.next().expect("at least two ranges");
            for (lo, lines) in ranges {
                s.spawn(move || insert_range(layout, k, kernel, scheme, n, lo, lines, keys));
            }
            insert_range(layout, k, kernel, scheme, n, first.0, first.1, keys);
        });
        let count = self.meta.count().saturating_add(keys.len() as u64);
        self.meta = self.meta.clone().with_count(count);
    }
}

/// Keys hashed per round of [`insert_range`].
const ROUND: usize = 4096;

/// Insert into `lines` — blocks `lo..lo + lines.len()` of a filter of `n` blocks — every key
/// of `keys` whose block lies there, exactly as `insert` would; the others are hashed and
/// skipped. Per round of [`ROUND`] keys, two phases: first every key is hashed and those that
/// fall in the range are collected without a branch (each written to the next slot, the slot
/// kept only if it is in range — a branch on a hash would mispredict every other key); then
/// the collected keys are inserted with the block [`BATCH`] places ahead prefetched, as in
/// `insert_batch`. Keys are inserted in their order either way.
///
/// The phases were once interleaved, one key hashed per key inserted, so that the hashing
/// (compute) would overlap the inserts' cache misses; apart, they take 0.85× the time (medians
/// of paired ratios over 25 rounds in one process, 10^7 keys, two threads, 2-vCPU AMD EPYC VM
/// with Zen 4: the interleaved build ÷ this one 1.18, quartiles 1.13–1.27, at rounds of 4 096
/// keys; 1.15 at 1 024; two hashed keys per insert instead of one 1.03). Profiled, the
/// interleaved loop called the insert kernel out of line, and the hashing loop, kept apart,
/// runs as one tight block of about 30 instructions per key. An interleaved loop written
/// without closures, the kernel inline, two or three keys hashed per insert, took the same
/// time as this one (this ÷ it 1.01, quartiles 0.95–1.08, 25 rounds). Nor is the hash what the
/// first phase costs (2.2–4 ns per key, as the VM's speed moves): with XXH3-64 computed eight
/// keys at a time in AVX-512 lanes (bit-exact, tested; not kept) it took 36–48 ms for 10^7
/// keys per thread against 36–41 ms, and with the hash replaced by one multiply (wrong
/// filters, for timing) 33–39 ms against 22–26 ms measured just before.
#[allow(clippy::too_many_arguments)] // the filter's fields, borrowed apart for the threads
fn insert_range<S: HashScheme, K: Key>(
    layout: Layout,
    k: u32,
    kernel: LocalKernel,
    scheme: &S,
    n: usize,
    lo: usize,
    lines: &mut [Block],
    keys: &[K],
) {
    let len = lines.len();
    let mut mine = vec![(0usize, 0u64); ROUND];
    for round in keys.chunks(ROUND) {
        let mut m = 0;
        let mut collect = |h: KeyHash| {
            let (b, src) = place_in(layout, h, n as u64);
            // `b − lo` wraps for blocks below the range, so one compare tests both ends.
            let local = b.wrapping_sub(lo);
            mine[m] = (local, src);
            m += usize::from(local < len);
        };
        if S::LANES {
            // Eight keys' hashes at a time, in vector lanes.
            for chunk in round.chunks(simd::CHUNK) {
                let mut hs = [KeyHash::new(0, 0); simd::CHUNK];
                hash_chunk_in(layout, scheme, chunk, &mut hs[..chunk.len()]);
                hs[..chunk.len()].iter().for_each(|&h| collect(h));
            }
        } else {
            round
                .iter()
                .for_each(|key| collect(hash_in(layout, scheme, key)));
        }
        let items = &mine[..m];
        for &(b, _) in items.iter().take(BATCH) {
            simd::prefetch(&lines[b]);
        }
        for (i, &(b, src)) in items.iter().enumerate() {
            if let Some(&(ahead, _)) = items.get(i + BATCH) {
                simd::prefetch(&lines[ahead]);
            }
            block_insert(layout, &kernel, &mut lines[b], src, k);
        }
    }
}
