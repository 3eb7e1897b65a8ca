//! A blocked filter that many threads fill at once: inserts through `&self`.

use std::fmt;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::Relaxed};

use crate::math;
use bloomlab_core::error::{Error, Result};
use bloomlab_core::format::Variant;
use bloomlab_core::hash::{HashScheme, KeyHash, Xxh3Scheme};
use bloomlab_core::{Filter, FilterParams, Key};
use bloomlab_parallel::sync::OrWord;
use bloomlab_simd::{self as simd, InlineKernel, LocalKernel};

use crate::layout::{Rule, by_layout};
use crate::{BLOCK_BITS, BLOCK_BYTES, BlockedBloomFilter, Layout, hash_in, one_hash_split};

/// Shards of the insert count: each thread adds to its own cache line, so threads inserting
/// at once do not pass one line back and forth on every insert.
const COUNT_SHARDS: usize = 16;

/// One shard of the insert count, alone on its cache line.
#[repr(align(64))]
#[derive(Default)]
struct CountShard(AtomicU64);

/// The insert count, summed over shards: an [`AtomicU64`] per shard, one shard per thread
/// (threads are given shards round-robin on their first insert; past 16 threads, shards are
/// shared, which costs contention, never counts).
struct Count(Box<[CountShard; COUNT_SHARDS]>);

impl Count {
    fn new(n: u64) -> Self {
        let c = Count(Box::default());
        c.0[0].0.store(n, Relaxed);
        c
    }

    #[inline(always)]
    fn add(&self, n: u64) {
        std::thread_local! {
            static SHARD: usize = {
                static NEXT: AtomicUsize = AtomicUsize::new(0);
                NEXT.fetch_add(1, Relaxed) % COUNT_SHARDS
            };
        }
        let shard = SHARD.with(|s| *s);
        self.0[shard].0.fetch_add(n, Relaxed);
    }

    fn get(&self) -> u64 {
        self.0
            .iter()
            .fold(0u64, |a, s| a.saturating_add(s.0.load(Relaxed)))
    }

    fn clear(&mut self) {
        for s in self.0.iter_mut() {
            *s.0.get_mut() = 0;
        }
    }
}

/// One 512-bit block of eight atomic words, on its own cache line (the same bits, in the same
/// order, as the owned filter's block).
type AtomicBlock = simd::SharedLine;

const _: () = assert!(std::mem::size_of::<AtomicBlock>() == BLOCK_BYTES);

/// A [`BlockedBloomFilter`] whose [`insert`](Self::insert) takes `&self`, so that threads
/// share one filter (behind an `Arc`, or borrowed by scoped threads) and fill it together
/// without a lock; lookups never block and never wait for an insert.
///
/// It holds the same bits as the owned filter, in the same layout ([`Layout::OneHash`] or
/// [`Layout::Local32`]), with the same probes: a key's block is found by the very code of the
/// owned filter (the layout's rule), and its probes by the owned filter's kernel run on the
/// shared block ([`LocalKernel::contains_shared`]); an insert ORs the key's bits in with
/// one relaxed `fetch_or` (a `lock or`) per probe, after a prefetch of the block (see
/// *Cost*). Converting either way ([`From`],
/// [`TryFrom`]) hands the table over without a copy ([`simd::Lines::cast`]): a filter filled
/// by many threads is bit-for-bit the one a single thread builds from the same keys in any
/// order (tested). The first layout ([`Layout::Wide64`]) has no
/// atomic form: converting a filter decoded from a version-1 file is refused.
///
/// # Why relaxed ordering is enough
///
/// Every operation on the table is either a relaxed load or a relaxed `fetch_or` (in the
/// inline-assembly kernels: vector loads that are atomic per aligned word, and `lock or`, the
/// instruction `fetch_or` compiles to), and bits only ever go from 0 to 1 (there is no atomic
/// removal; [`clear`](Self::clear) takes `&mut self`). So:
///
/// - **No lost update**: `fetch_or` is a single read-modify-write; two threads ORing masks
///   into one word both land, whatever the order (each atomic word has one modification
///   order, and OR commutes).
/// - **No torn answer**: a lookup reads each word once; every value it can read is the
///   word's value at some point of its modification order, a superset of the bits any
///   earlier state had. A lookup racing an insert of the same key may see none, some or all
///   of that insert's bits, and so may answer "no" for that key — exactly the answer it
///   would give had it run just before the insert, which it may well have. It can never
///   answer "no" for a key whose insert *happened before* the lookup, and it never answers
///   "yes" because of a bit that was not inserted.
/// - **Visibility after the fact**: once the inserting threads are joined (a
///   [`JoinHandle::join`](std::thread::JoinHandle::join) or the end of a
///   [`thread::scope`](std::thread::scope)), every one of their inserts happens-before the
///   code after the join, so every bit is visible to it: 0 false negatives from then on.
///   The same holds for any other synchronisation the program already uses (a channel, a
///   mutex, an acquire load) — the filter adds none of its own and needs none.
///
/// These three are model-checked with loom (`--cfg loom`, the `loom_models` tests beside this
/// code, which run the insert's own code on loom's atomics): two inserts ORing into one word
/// both land; a lookup racing an insert sees no bit that was not inserted, never loses a bit
/// it saw, sees the whole insert once it is published to it — and, racing it, sees none, some
/// or all of its probes, each reachable: a racing lookup is not all-or-nothing, and nothing
/// here promises that it is.
///
/// Stronger orderings would order a thread's filter operations against its *other* memory
/// operations, which no filter answer depends on. The insert count ([`len`](Self::len)) is
/// kept in relaxed [`AtomicU64`]s, one per thread (up to 16, each on its own cache line, so
/// that inserting threads do not contend for one counter): exact once inserts are joined,
/// and in the meantime
/// some value between the inserts that have finished and those that have begun.
///
/// # Cost
///
/// A lookup hashes the key and runs the owned filter's inline kernel on the shared block itself
/// ([`LocalKernel::contains_shared`]: vector loads of the line straight from the atomics, which
/// x86-64 performs atomically per 8-byte word, so they read what eight relaxed loads would).
///
/// An insert is one relaxed `fetch_or` per probe, its word and bit taken from the hash alone
/// (what fastbloom's `AtomicBloomFilter` does over its whole array), after a prefetch of the
/// block ([`simd::prefetch`], `prefetcht0`). Nothing in it waits for the line's contents, and no
/// branch depends on a load. Its answer comes from the `fetch_or`s' results (a `lock bts` each
/// when the caller uses it; dropped with them, and a plain `lock or` left, when it does not).
///
/// The prefetch is what makes this the faster insert out of cache. A `lock`ed instruction
/// starts its load only when the instructions before it are done, so without the prefetch an
/// insert's miss began at its first `lock or`, after the previous insert's `lock`s and its
/// own count's. A prefetch is not held back by them: the miss starts as soon as the hash is
/// known, so every table size takes this insert. Each insert also counts itself with a relaxed
/// `fetch_add`. How this insert was chosen over a kernel that read the line first, and the
/// measurements behind it, are in `docs/design/blocked.md`; current figures are in `results/`.
///
/// ```
/// use bloomlab_blocked::{AtomicBlockedBloomFilter, BlockedBloomFilter};
///
/// let f = AtomicBlockedBloomFilter::with_fpr(100_000, 0.01)?;
/// std::thread::scope(|s| {
///     for t in 0..4u64 {
///         let f = &f;
///         s.spawn(move || (t * 25_000..(t + 1) * 25_000).for_each(|i| { f.insert(&i); }));
///     }
/// }); // every insert is visible from here on
/// assert!((0..100_000u64).all(|i| f.might_contain(&i)));
/// assert_eq!(f.len(), 100_000);
///
/// // The same bits as one thread inserting the same keys into the ordinary filter.
/// let mut g = BlockedBloomFilter::with_fpr(100_000, 0.01)?;
/// (0..100_000u64).for_each(|i| { g.insert(&i); });
/// assert_eq!(BlockedBloomFilter::from(f), g);
/// # Ok::<(), bloomlab_core::Error>(())
/// ```
// As the owned filter: what a lookup reads first (not over-aligned, as the owned filter).
#[repr(C)]
pub struct AtomicBlockedBloomFilter<S: HashScheme = Xxh3Scheme> {
    blocks: simd::Lines<AtomicBlock>,
    /// The kernel lookups run inline ([`crate::fast_kernel`] of the layout and `kernel`).
    fast: InlineKernel,
    k: u32,
    count: Count,
    capacity: u64,
    target_fpr: Option<f64>,
    layout: Layout,
    /// The lookup kernel, chosen for this CPU and `k` at construction (not part of the
    /// filter's value).
    kernel: LocalKernel,
    scheme: S,
}

impl AtomicBlockedBloomFilter<Xxh3Scheme> {
    /// Sized as [`BlockedBloomFilter::with_fpr`] (9.92 bits/item and k = 6 at 1 %).
    pub fn with_fpr(expected_items: u64, fpr: f64) -> Result<Self> {
        Self::try_from(BlockedBloomFilter::with_fpr(expected_items, fpr)?)
    }

    /// Sized as [`BlockedBloomFilter::with_bits_per_item`].
    pub fn with_bits_per_item(expected_items: u64, bits_per_item: f64) -> Result<Self> {
        Self::try_from(BlockedBloomFilter::with_bits_per_item(
            expected_items,
            bits_per_item,
        )?)
    }

    /// Sized as [`BlockedBloomFilter::with_blocks`].
    pub fn with_blocks(blocks: u64, hashes: u32) -> Result<Self> {
        Self::try_from(BlockedBloomFilter::with_blocks(blocks, hashes)?)
    }
}

impl<S: HashScheme> AtomicBlockedBloomFilter<S> {
    #[inline(always)]
    fn block(&self, h: KeyHash) -> (&AtomicBlock, u32) {
        if self.layout == Layout::OneHash {
            let (line, probe) = one_hash_split(h);
            return (self.blocks.fastrange(line), probe);
        }
        let n = self.blocks.len() as u64;
        let (b, src) = by_layout!(self.layout, R => R::place(h, n));
        (&self.blocks[b], (src >> 32) as u32)
    }

    /// One lookup, the kernel inlined into the caller: the owned filter's kernel run on the
    /// shared block ([`LocalKernel::contains_shared`]: the line read as the owned filter
    /// reads it, no copy, no call).
    #[inline(always)]
    fn contains_one(&self, h: KeyHash) -> bool {
        let (block, bits) = self.block(h);
        self.kernel.contains_shared(block, bits, self.k)
    }

    /// Set a key's bits in `block` (from [`block`](Self::block)): one relaxed `fetch_or` per
    /// probe, word and bit from the hash alone, so nothing waits for the line's contents and
    /// no branch depends on a load. `true` if one of the probes' bits was still zero, from the
    /// `fetch_or`s' own results (a `lock bts` each on x86-64 when the caller uses the answer; a
    /// plain `lock or` when it drops it). No count, no prefetch.
    #[inline(always)]
    fn set_bits(&self, block: &AtomicBlock, bits: u32) -> bool {
        or_probes(&block.0, bits, self.k)
    }

    /// Insert a key through a shared reference. Returns `true` if the key was definitely new
    /// (one of its bits was still zero when this insert read the block), `false` if it may
    /// have been present — when two threads insert one key at once, both may see `true`.
    #[inline(always)]
    pub fn insert<K: Key + ?Sized>(&self, key: &K) -> bool {
        if self.layout == Layout::OneHash {
            return self.insert_hash(hash_in(Layout::OneHash, &self.scheme, key));
        }
        self.insert_earlier_layout(self.hash_key(key))
    }

    /// [`insert_hash`](Self::insert_hash) out of line, for the second layout.
    #[inline(never)]
    fn insert_earlier_layout(&self, h: KeyHash) -> bool {
        self.insert_hash(h)
    }

    /// Insert many keys through a shared reference (each thread of a parallel fill calls it on
    /// its own share): the key [`BATCH`](crate::BATCH) positions ahead is hashed and its block
    /// prefetched while the current one is inserted, so the cache misses overlap, and the
    /// count is added once per call. The same bits as inserting the keys one by one.
    pub fn insert_batch<K: Key>(&self, keys: &[K]) {
        self.count.add(keys.len() as u64);
        if S::LANES {
            // Hashed eight at a time in vector lanes; the same bits.
            simd::pipeline_chunks::<(), K, KeyHash, { crate::BATCH }>(
                &mut (),
                keys,
                KeyHash::new(0, 0),
                |_, ks, hs| by_layout!(self.layout, R => R::hash_chunk(&self.scheme, ks, hs)),
                |_, h| simd::prefetch(self.block(*h).0),
                |_, _, h| {
                    let (block, bits) = self.block(h);
                    self.set_bits(block, bits);
                },
            );
            return;
        }
        simd::pipeline::<K, KeyHash, { crate::BATCH }>(
            keys,
            |k| self.hash_key(k),
            |h| simd::prefetch(self.block(*h).0),
            |_, h| {
                let (block, bits) = self.block(h);
                self.set_bits(block, bits);
            },
        );
    }

    /// Insert a key already hashed with this filter's scheme.
    #[inline(always)]
    pub fn insert_hash(&self, h: KeyHash) -> bool {
        let (block, bits) = self.block(h);
        // First, so that the line's miss overlaps the count's and the probes' `lock`s (*Cost*).
        simd::prefetch(block);
        self.count.add(1);
        self.set_bits(block, bits)
    }

    /// `false`: the key was definitely never inserted (by an insert that happened before this
    /// call; see [Why relaxed ordering is enough](Self#why-relaxed-ordering-is-enough)).
    /// `true`: it maybe was. Never blocks.
    #[inline(always)]
    pub fn might_contain<K: Key + ?Sized>(&self, key: &K) -> bool {
        key.with_key_bytes(
            #[inline(always)]
            |b| self.contains_bytes_inline(b),
        )
    }

    /// One lookup of a key's bytes, as the owned filter's: the current layout's hash and
    /// block and the inline kernel inlined into the caller, every other case one out-of-line
    /// call.
    #[inline(always)]
    fn contains_bytes_inline(&self, key: &[u8]) -> bool {
        let x = self.scheme.hash64(key);
        let (line, probe) = crate::one_hash_split(KeyHash::new(x, 0));
        match self
            .fast
            .contains_shared(self.blocks.fastrange(line), probe)
        {
            Some(hit) => hit,
            None => self.contains_out_of_line(key, x),
        }
    }

    /// [`contains_one`](Self::contains_one) for the cases the inline path does not serve; `x`
    /// is the current layout's hash of `key`, already computed.
    #[cold]
    #[inline(never)]
    fn contains_out_of_line(&self, key: &[u8], x: u64) -> bool {
        self.contains_one(crate::hash_again_in(self.layout, &self.scheme, key, x))
    }

    /// Query with a hash computed by this filter's scheme.
    #[inline(always)]
    pub fn might_contain_hash(&self, h: KeyHash) -> bool {
        self.contains_one(h)
    }

    /// Hash a key with this filter's scheme.
    #[inline]
    pub fn hash_key<K: Key + ?Sized>(&self, key: &K) -> KeyHash {
        hash_in(self.layout, &self.scheme, key)
    }

    /// The hash scheme.
    pub fn scheme(&self) -> &S {
        &self.scheme
    }

    /// Number of inserts so far, repeats included (exact once the inserting threads are
    /// joined).
    pub fn len(&self) -> u64 {
        self.count.get()
    }

    /// No inserts yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    crate::block_table_accessors!(k);

    /// The design capacity.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The target FPR, if the filter was sized from one.
    pub fn target_fpr(&self) -> Option<f64> {
        self.target_fpr
    }

    /// The layout of the filter it was made from: [`Layout::OneHash`] (every new filter) or
    /// [`Layout::Local32`]; the first layout has no atomic form.
    pub fn layout(&self) -> Layout {
        self.layout
    }

    /// Number of set bits (a snapshot, word by word).
    pub fn count_ones(&self) -> u64 {
        self.blocks
            .iter()
            .map(|b| {
                b.load()
                    .iter()
                    .map(|w| u64::from(w.count_ones()))
                    .sum::<u64>()
            })
            .sum()
    }

    /// FPR the blocked formula predicts from the insert count, as
    /// [`BlockedBloomFilter::expected_fpr`].
    pub fn expected_fpr(&self) -> f64 {
        match self.len() {
            0 => 0.0,
            n => math::blocked_fpr_exact(self.bits() as f64 / n as f64, self.k, BLOCK_BITS),
        }
    }

    /// Remove every key (needs exclusive access: no insert can race it).
    pub fn clear(&mut self) {
        for b in self.blocks.iter_mut() {
            for w in &mut b.0 {
                *w.get_mut() = 0;
            }
        }
        self.count.clear();
    }

    /// A copy as an owned filter, word by word (each word read once, relaxed). Taken while
    /// other threads insert, it holds every insert that happened before the call and any
    /// subset of the bits of those in flight. Its count is the insert count read after the
    /// words — raised, if need be, to the fewest inserts that could have set the bits it
    /// holds (relaxed ordering lets a weakly ordered CPU show a racing insert's bits before
    /// its count), so the copy is always a valid filter. With no insert in flight it is exact.
    pub fn to_filter(&self) -> BlockedBloomFilter<S> {
        let mut blocks = crate::zeroed_blocks(self.blocks())
            .expect("a table of this size already exists in memory");
        for (b, a) in blocks.iter_mut().zip(self.blocks.iter()) {
            b.0 = a.load();
        }
        let needed: u64 = blocks
            .iter()
            .map(|b| crate::min_inserts(b.0.iter().map(|w| w.count_ones()).sum(), self.k))
            .sum();
        let count = self.len().max(needed);
        self.owned(blocks, count)
    }

    fn owned(&self, blocks: simd::Lines, count: u64) -> BlockedBloomFilter<S> {
        BlockedBloomFilter::from_parts(
            blocks,
            self.k,
            count,
            self.capacity,
            self.target_fpr,
            self.layout,
            self.scheme.clone(),
        )
        .expect("an atomic filter's parts are those of a valid filter")
    }
}

/// OR the `k` probes that `bits` places in a block into its eight `words`: one relaxed
/// read-modify-write per probe ([`OrWord::or_relaxed`], `fetch_or`), word and bit from the
/// hash alone. `true` if one of the probes' bits was still zero. Written over [`OrWord`] so
/// that the loom models run this very code on loom's atomics.
#[inline(always)]
fn or_probes<W: OrWord>(words: &[W], bits: u32, k: u32) -> bool {
    let mut new = false;
    for (w, mask) in simd::local_probes(bits, k) {
        new |= words[w].or_relaxed(mask) & mask == 0;
    }
    new
}

/// Refused with [`Error::Incompatible`] when `f` has the first layout ([`Layout::Wide64`]),
/// which has no atomic form; otherwise the same bits, count and parameters.
impl<S: HashScheme> TryFrom<BlockedBloomFilter<S>> for AtomicBlockedBloomFilter<S> {
    type Error = Error;

    fn try_from(f: BlockedBloomFilter<S>) -> Result<Self> {
        if f.layout() == Layout::Wide64 {
            return Err(Error::Incompatible(format!(
                "the {:?} layout (format version 1) has no atomic form",
                Layout::Wide64
            )));
        }
        let (k, count, capacity) = (f.hashes(), f.len(), f.capacity());
        let (target_fpr, layout, scheme) = (f.target_fpr(), f.layout(), f.scheme().clone());
        Ok(AtomicBlockedBloomFilter {
            // The owned filter's table itself, as shared lines: no copy, and the zero pages
            // of a new filter stay untouched until inserts reach them.
            blocks: f.blocks.cast(),
            fast: crate::fast_kernel(layout, f.cold.kernel),
            k,
            count: Count::new(count),
            capacity,
            target_fpr,
            layout,
            kernel: f.cold.kernel,
            scheme,
        })
    }
}

/// The same bits, count and parameters, as an ordinary filter, in the same table (no copy:
/// the atomic filter is moved, so no insert can be in flight, and every insert that reached
/// it happened before the move).
impl<S: HashScheme> From<AtomicBlockedBloomFilter<S>> for BlockedBloomFilter<S> {
    fn from(f: AtomicBlockedBloomFilter<S>) -> Self {
        let count = f.len();
        let (k, capacity, target_fpr, layout) = (f.k, f.capacity, f.target_fpr, f.layout);
        let scheme = f.scheme.clone();
        BlockedBloomFilter::from_parts(
            f.blocks.cast(),
            k,
            count,
            capacity,
            target_fpr,
            layout,
            scheme,
        )
        .expect("an atomic filter's parts are those of a valid filter")
    }
}

impl<S: HashScheme> Clone for AtomicBlockedBloomFilter<S> {
    /// A snapshot, as [`to_filter`](AtomicBlockedBloomFilter::to_filter) takes it.
    fn clone(&self) -> Self {
        Self::try_from(self.to_filter()).expect("the copy has the same, non-first layout")
    }
}

impl<S: HashScheme> fmt::Debug for AtomicBlockedBloomFilter<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AtomicBlockedBloomFilter")
            .field("blocks", &self.blocks.len())
            .field("k", &self.k)
            .field("count", &self.len())
            .field("capacity", &self.capacity)
            .field("target_fpr", &self.target_fpr)
            .field("scheme", &self.scheme.descriptor())
            .finish()
    }
}

impl<S: HashScheme> Filter for AtomicBlockedBloomFilter<S> {
    #[inline(always)]
    fn insert_bytes(&mut self, key: &[u8]) -> Result<()> {
        self.insert(key);
        Ok(())
    }

    #[inline(always)]
    fn might_contain_bytes(&self, key: &[u8]) -> bool {
        self.might_contain(key)
    }

    fn len(&self) -> u64 {
        AtomicBlockedBloomFilter::len(self)
    }

    fn size_in_bytes(&self) -> usize {
        self.blocks.len() * BLOCK_BYTES
    }

    fn expected_fpr(&self) -> f64 {
        AtomicBlockedBloomFilter::expected_fpr(self)
    }

    fn params(&self) -> FilterParams {
        FilterParams {
            variant: Variant::Blocked,
            capacity: self.capacity,
            target_fpr: self.target_fpr,
            table_bits: self.bits(),
            hashes: self.k,
            scheme: self.scheme.descriptor(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An atomic insert (one `fetch_or` per probe) sets the bits the owned filter's insert
    /// kernel sets and gives its answer, key by key, for `k` on each of the kernels' paths
    /// (one round, two rounds, beyond sixteen probes).
    #[test]
    fn inserts_match_the_owned_kernel() {
        for fpr in [0.03, 0.01, 0.001, 1e-6] {
            let a = AtomicBlockedBloomFilter::with_fpr(20_000, fpr).unwrap();
            let mut b = BlockedBloomFilter::with_fpr(20_000, fpr).unwrap();
            for i in 0..30_000u64 {
                // Every key twice, the second time already present.
                let key = (i / 2).wrapping_mul(0x9e37_79b9_7f4a_7c15);
                assert_eq!(a.insert(&key), b.insert(&key), "k = {}, key {i}", a.k);
            }
            assert_eq!(BlockedBloomFilter::from(a), b, "fpr {fpr}");
        }
    }
}

/// Real threads racing inserts and lookups on one small table (the stress test beside the loom
/// models below): fixed keys, a fixed amount of work, no timing.
#[cfg(all(test, not(loom)))]
mod stress {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn racing_lookups_find_every_key_inserted_before_them() {
        const WRITERS: usize = 3;
        const PER_WRITER: usize = 30_000;
        let key =
            |w: usize, i: usize| ((w * PER_WRITER + i) as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        // 256 blocks of 512 bits for 90 000 keys: many keys share every word.
        let f = AtomicBlockedBloomFilter::with_blocks(256, 4).unwrap();
        let progress: Vec<AtomicUsize> = (0..WRITERS).map(|_| AtomicUsize::new(0)).collect();
        let mut checked = 0usize;
        std::thread::scope(|s| {
            for (w, done) in progress.iter().enumerate() {
                let f = &f;
                s.spawn(move || {
                    for i in 0..PER_WRITER {
                        f.insert(&key(w, i));
                        if i % 64 == 63 || i + 1 == PER_WRITER {
                            // Publishes every insert before it (release).
                            done.store(i + 1, Ordering::Release);
                        }
                    }
                });
            }
            // The reader: every key whose insert is published (acquire) must be found.
            let mut seen = [0usize; WRITERS];
            while seen.iter().any(|&n| n < PER_WRITER) {
                for (w, (done, seen)) in progress.iter().zip(&mut seen).enumerate() {
                    let upto = done.load(Ordering::Acquire);
                    for i in *seen..upto {
                        assert!(f.might_contain(&key(w, i)), "writer {w}, key {i}");
                        checked += 1;
                    }
                    *seen = upto;
                }
                std::thread::yield_now();
            }
        });
        assert_eq!(checked, WRITERS * PER_WRITER);
        // No update lost: the bits of one thread inserting every key.
        let mut want = BlockedBloomFilter::with_blocks(256, 4).unwrap();
        (0..WRITERS).for_each(|w| {
            (0..PER_WRITER).for_each(|i| {
                want.insert(&key(w, i));
            })
        });
        assert_eq!(BlockedBloomFilter::from(f), want);
    }
}

/// Loom models of the atomic insert ([`or_probes`], the filter's own code, on loom's atomics)
/// against lookups (`RUSTFLAGS="--cfg loom" cargo test --release -p bloomlab-blocked loom`;
/// preemption bound 2 unless `LOOM_MAX_PREEMPTIONS` says otherwise, 3 for a longer local run).
/// A lookup is modelled as the kernels read a block: each of its eight words loaded once,
/// relaxed (an x86-64 vector load of an aligned line is atomic per 8-byte word), then every
/// probe tested against what was read.
#[cfg(all(test, loom))]
mod loom_models {
    use super::*;
    use loom::sync::Arc;
    use loom::sync::atomic::{AtomicBool, AtomicU64, Ordering};

    const K: u32 = 3;

    fn model(f: impl Fn() + Sync + Send + 'static) {
        let mut b = loom::model::Builder::new();
        b.preemption_bound.get_or_insert(2);
        b.check(f);
    }

    fn block() -> Arc<[AtomicU64; 8]> {
        Arc::new(std::array::from_fn(|_| AtomicU64::new(0)))
    }

    /// Which of the probes of `bits` a lookup reading `words` now finds set (bit `i` for
    /// probe `i`).
    fn seen(words: &[AtomicU64; 8], bits: u32) -> u32 {
        let line: [u64; 8] = std::array::from_fn(|w| words[w].load_relaxed());
        simd::local_probes(bits, K)
            .enumerate()
            .filter(|&(_, (w, mask))| line[w] & mask != 0)
            .fold(0, |acc, (i, _)| acc | 1 << i)
    }

    /// The first probe source after `from` whose `K` probes are distinct bits in at least two
    /// words, and the words it touches.
    fn spread(from: u32) -> u32 {
        (from..)
            .find(|&b| {
                let p: Vec<_> = simd::local_probes(b, K).collect();
                let distinct = (0..p.len()).all(|i| !p[..i].contains(&p[i]));
                distinct && p.iter().any(|q| q.0 != p[0].0)
            })
            .expect("some source spreads")
    }

    /// Two probe sources with a probe each in one shared word, at different bits.
    fn sharing_a_word() -> (u32, u32) {
        let a = spread(1);
        let b = (a + 1..)
            .find(|&b| {
                simd::local_probes(a, K)
                    .any(|(wa, ma)| simd::local_probes(b, K).any(|(wb, mb)| wa == wb && ma != mb))
            })
            .expect("some source shares a word");
        (a, b)
    }

    #[test]
    fn loom_two_inserts_into_one_word_both_land() {
        let (a, b) = sharing_a_word();
        model(move || {
            let words = block();
            let w = words.clone();
            let t = loom::thread::spawn(move || or_probes(&w[..], a, K));
            or_probes(&words[..], b, K);
            t.join().unwrap();
            // Once both are joined, every probe of each is set: no update was lost.
            assert_eq!(seen(&words, a), (1 << K) - 1);
            assert_eq!(seen(&words, b), (1 << K) - 1);
        });
    }

    #[test]
    fn loom_a_lookup_sees_a_racing_insert_only_as_the_docs_say() {
        // What the racing lookup saw of the insert, over all interleavings: none, some, all.
        static SAW: [std::sync::atomic::AtomicBool; 3] =
            [const { std::sync::atomic::AtomicBool::new(false) }; 3];
        let a = spread(1);
        let inserted: [u64; 8] = simd::local_probes(a, K).fold([0; 8], |mut l, (w, m)| {
            l[w] |= m;
            l
        });
        model(move || {
            let (words, published) = (block(), Arc::new(AtomicBool::new(false)));
            let (w, p) = (words.clone(), published.clone());
            let t = loom::thread::spawn(move || {
                or_probes(&w[..], a, K);
                p.store(true, Ordering::Release);
            });
            let first = seen(&words, a);
            let synced = published.load(Ordering::Acquire);
            let second = seen(&words, a);
            // Never a bit no insert set; never a bit seen, then lost.
            for (w, &bits) in words.iter().zip(&inserted) {
                assert_eq!(w.load(Ordering::Relaxed) & !bits, 0);
            }
            assert_eq!(second & first, first, "bits only ever appear");
            // An insert that happened before the lookup is seen whole: no false negative.
            if synced {
                assert_eq!(second, (1 << K) - 1);
            }
            let kind = match first {
                0 => 0,
                f if f == (1 << K) - 1 => 2,
                _ => 1,
            };
            SAW[kind].store(true, std::sync::atomic::Ordering::Relaxed);
            t.join().unwrap();
            assert_eq!(seen(&words, a), (1 << K) - 1);
        });
        // The docs promise no more than this: a lookup racing an insert may see none, some or
        // all of its probes (each probe is its own read-modify-write), and every one is
        // reachable.
        let saw: Vec<bool> = SAW
            .iter()
            .map(|s| s.load(std::sync::atomic::Ordering::Relaxed))
            .collect();
        assert_eq!(saw, [true, true, true], "none, some, all");
    }
}
