//! Peers from crates.io, measured beside our filters in the same run. Each adapter reports
//! the parameters the crate actually chose; fixed-parameter crates are measured at their own
//! FPR (their `Info::tunable` is `false`).
//!
//! # Fair configuration
//! Every peer runs in its fastest documented configuration for unkeyed use: fastbloom with
//! foldhash (its docs' fast alternative), qfilter with its own default (foldhash, stable),
//! cuckoofilter and scalable_cuckoo_filter with foldhash instead of SipHash. Where a crate's
//! default is a keyed (randomly seeded) hash, that default is measured too, labelled
//! (`fastbloom-sip`), so keyed is compared with keyed. Every tunable peer is sized to meet
//! the target (equal FPR: its own formula for `p`, or for growing peers the first-stage rate
//! whose stages add up to `p`); where a peer at our memory differs, that is a second entry
//! (`sbbf-rs-eqmem`, `fastbloom-eqmem`). Each choice is the `note` of the entry, printed in
//! `summary.md`.
//!
//! # How each peer is configured
//! - `fastbloom`: `BloomFilter::with_false_pos(p).hasher(foldhash).expected_items(n)`, the
//!   builder chain and fast hasher its docs show; `fastbloom-sip` keeps its default
//!   SipHash-1-3 (keyed); `fastbloom-eqmem`: `with_num_bits(our blocked bits)` instead.
//! - `bloomfilter`: `Bloom::new_for_fp_rate_with_seed(n, p, seed)`, its documented
//!   constructor; SipHash-1-3 is its only hasher.
//! - `growable-bloom`: `GrowableBloom::new(p0, n/8)` with the first-stage rate chosen so the
//!   compound FPR at n meets p (see its adapter).
//! - `cuckoofilter`: `CuckooFilter::with_capacity(n)` on foldhash; fixed 8-bit fingerprints.
//! - `scalable-cuckoo`: its builder with `initial_capacity(n/8)` and
//!   `false_positive_probability(p)`, foldhash.
//! - `qfilter`: `Filter::new(n, p)` and `Filter::new_resizeable(..)`, its default hasher.
//! - `xorf-bfuse8` / `xorf-bfuse16`: `BinaryFuse8/16::try_from(&hashes)`, as its README
//!   builds one from `u64` hashes of the keys.
//! - `sbbf-rs` (see `sbbf_rs`): `Filter::new(bits, 1)` sized for p, xxh3 of the key first,
//!   as its README hashes.
//!
//! # Which peers have an equal-memory row, and why the others do not
//! Equal memory is a second row only where it is a different configuration of the same
//! design that a user could choose: `sbbf-rs` and `fastbloom` are blocked Bloom filters like
//! ours whose memory can be set directly, and each sizes itself differently from our blocked
//! filter at equal FPR (sbbf-rs larger, fastbloom smaller). The others have none because
//! there equal FPR already is equal memory or no memory can be chosen: `bloomfilter` sizes
//! with the classic formula (9.59 bits/item at 1 %, exactly our classic filter's);
//! `growable-bloom`, `scalable-cuckoo` and `qfilter-resizing` grow by their own schedule
//! from a start size; `cuckoofilter` (8-bit fingerprints) and the xorf filters (8 or 16)
//! have fixed parameters, their memory set by n alone; `qfilter` takes only (n, p), its
//! memory a step function of the fingerprint bits p implies; `fastbloom-sip` and
//! `fastbloom-atomic` size as `fastbloom` does, so `fastbloom-eqmem` stands for them.

use crate::error::Error;
use std::hash::{BuildHasher, Hasher};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{Adapter, Curve, Entry, Info, Kind, Spec};
use crate::keys::Keys;

fn usize_n(spec: &Spec) -> usize {
    usize::try_from(spec.n).unwrap_or(usize::MAX)
}

/// The bits our 512-bit blocked filter takes for `spec`, so an equal-memory entry gets
/// exactly them: bits/item from the exact blocked formula, rounded up to whole blocks.
pub fn blocked_bits(spec: &Spec) -> Result<u64, Error> {
    let (bpi, _) =
        bloomlab_blocked::math::blocked_bits_per_item_exact(spec.fpr, 512).map_err(Error::from)?;
    Ok(
        bloomlab_core::math::bits_for_bits_per_item(spec.n.max(1), bpi)
            .map_err(Error::from)?
            .div_ceil(512)
            * 512,
    )
}

/// `bits` as a `usize`, for a crate that sizes its table in bits.
pub fn usize_bits(bits: u64) -> Result<usize, Error> {
    usize::try_from(bits).map_err(|_| Error::Peer(format!("{bits} bits")))
}

/// The `insert` and `contains` of a peer adapter whose crate filter `self.f` takes the key's
/// bytes: the crate's insert call — `$insert` when it cannot refuse a key, `$insert -> is_ok`
/// when it returns a `Result`, `counted $insert` when the adapter counts inserts in `items`
/// for the crate's FPR formula — and its lookup `$contains`, both inlined into the timed loop.
macro_rules! key_calls {
    ($insert:ident, $contains:ident) => {
        #[inline]
        fn insert(&mut self, key: &[u8]) -> bool {
            self.f.$insert(key);
            true
        }
        $crate::adapters::peers::key_calls!(@contains $contains);
    };
    (counted $insert:ident, $contains:ident) => {
        #[inline]
        fn insert(&mut self, key: &[u8]) -> bool {
            self.items += 1;
            self.f.$insert(key);
            true
        }
        $crate::adapters::peers::key_calls!(@contains $contains);
    };
    ($insert:ident -> is_ok, $contains:ident) => {
        #[inline]
        fn insert(&mut self, key: &[u8]) -> bool {
            self.f.$insert(key).is_ok()
        }
        $crate::adapters::peers::key_calls!(@contains $contains);
    };
    (@contains $contains:ident) => {
        #[inline]
        fn contains(&self, key: &[u8]) -> bool {
            self.f.$contains(key)
        }
    };
}

/// Classic Bloom filter `(1 − e^(−kn/m))^k`.
fn bloom_fpr(m: f64, k: f64, n: f64) -> f64 {
    (1.0 - (-k * n / m).exp()).powf(k)
}

// ---------------------------------------------------------------- fastbloom

/// foldhash with a fixed seed: the fast, deterministic hasher the fast peers are given.
pub type Fold = foldhash::fast::FixedState;

/// A foldhash `Hasher` with `Default` (cuckoofilter builds one per hash), fixed seed.
#[derive(Clone)]
pub struct FoldDefault(foldhash::fast::FoldHasher<'static>);

impl std::fmt::Debug for FoldDefault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FoldDefault")
    }
}

impl Default for FoldDefault {
    fn default() -> Self {
        FoldDefault(Fold::with_seed(0x5EED_F01D).build_hasher())
    }
}

impl Hasher for FoldDefault {
    #[inline]
    fn finish(&self) -> u64 {
        self.0.finish()
    }
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.0.write_u64(i);
    }
}

/// fastbloom 0.17 over a hasher `S`: foldhash (fast) or its default SipHash-1-3 (keyed).
#[derive(Debug)]
pub struct FastBloom<S: BuildHasher> {
    f: fastbloom::BloomFilter<S>,
    items: u64,
}

/// fastbloom with foldhash, seeded for reproducibility (its documented fast configuration).
pub type FastBloomFold = FastBloom<Fold>;

/// fastbloom on its default hasher: SipHash-1-3 under a random seed.
pub type FastBloomSip = FastBloom<fastbloom::DefaultHasher>;

/// How to make the hasher of a fastbloom adapter.
pub trait FastBloomHasher: BuildHasher + Clone + Send + Sync + 'static + std::fmt::Debug {
    /// The hasher for a run with `seed`.
    fn make(seed: u64) -> Self;
}

impl FastBloomHasher for Fold {
    fn make(seed: u64) -> Self {
        Fold::with_seed(seed)
    }
}

impl FastBloomHasher for fastbloom::DefaultHasher {
    /// The crate's default SipHash-1-3, keyed from the run's seed instead of a random key,
    /// so its measured FPR is the same run to run (the hash and its cost are the same).
    fn make(seed: u64) -> Self {
        fastbloom::DefaultHasher::seeded(
            &(u128::from(seed) << 64 | u128::from(!seed)).to_le_bytes(),
        )
    }
}

/// The `insert`, `contains`, `theoretical_fpr` and `describe` of an adapter holding a
/// fastbloom filter (`BloomFilter` or `AtomicBloomFilter`) in `f` and its insert count in
/// `items`: the crate's own FPR formula at that count, its bits and hashes.
macro_rules! fastbloom_methods {
    () => {
        $crate::adapters::peers::key_calls!(counted insert, contains);
        fn theoretical_fpr(&self) -> Option<f64> {
            Some(
                self.f
                    .expected_false_pos(usize::try_from(self.items).unwrap_or(usize::MAX)),
            )
        }
        fn describe(&self) -> String {
            format!("m={} k={}", self.f.num_bits(), self.f.num_hashes())
        }
    };
}
pub(super) use {fastbloom_methods, key_calls};

impl<S: FastBloomHasher> Adapter for FastBloom<S> {
    fn new_empty(spec: &Spec) -> Option<Result<Self, Error>> {
        let f = fastbloom::BloomFilter::with_false_pos(spec.fpr)
            .hasher(S::make(spec.seed))
            .expected_items(usize_n(spec).max(1));
        Some(Ok(FastBloom { f, items: 0 }))
    }
    fastbloom_methods!();
}

/// Registry entry for fastbloom (foldhash).
pub fn fastbloom_entry() -> Entry {
    Entry::new::<FastBloomFold>(Info {
        note: "with_false_pos(p).hasher(foldhash FixedState::with_seed(seed)).expected_items(n): its documented fast hasher",
        ..Info::peer("fastbloom", "fastbloom 0.17", Kind::Bloom)
    })
}

/// Registry entry for fastbloom on its keyed default (SipHash-1-3, random seed).
pub fn fastbloom_sip_entry() -> Entry {
    Entry::new::<FastBloomSip>(Info {
        keyed: true,
        note: "with_false_pos(p).expected_items(n): its default, SipHash-1-3 (keyed), its key derived from the run's seed instead of drawn at random so the FPR repeats",
        ..Info::peer("fastbloom-sip", "fastbloom 0.17", Kind::Bloom)
    })
}

/// fastbloom with foldhash at our blocked filter's memory (`fastbloom-eqmem`): both are Bloom
/// filters of 512-bit blocks, and fastbloom sizes itself with the classic formula (9.59
/// bits/item at 1 %), less than ours (9.93), so its equal-FPR row is also a smaller one. Here
/// it gets exactly our bits: `with_num_bits(bits).hasher(..).expected_items(n)`, which its docs
/// show for a given memory, the crate choosing the number of hashes for that memory and n.
/// Its FPR is then below the target, and the row says so.
#[derive(Debug)]
pub struct FastBloomEqMem(FastBloom<Fold>);

impl Adapter for FastBloomEqMem {
    fn new_empty(spec: &Spec) -> Option<Result<Self, Error>> {
        Some((|| {
            let f = fastbloom::BloomFilter::with_num_bits(usize_bits(blocked_bits(spec)?)?)
                .hasher(Fold::make(spec.seed))
                .expected_items(usize_n(spec).max(1));
            Ok(FastBloomEqMem(FastBloom { f, items: 0 }))
        })())
    }
    forward_to_inner!();
}

/// Registry entry for fastbloom (foldhash) at our blocked filter's memory (equal memory).
pub fn fastbloom_eqmem_entry() -> Entry {
    Entry::new::<FastBloomEqMem>(Info {
        equal_memory: true,
        note: "with_num_bits(bits of our blocked filter for (n, p)).hasher(foldhash FixedState::with_seed(seed)).expected_items(n): equal memory, 512-bit blocks like ours, so its FPR is below p (it sizes itself smaller at equal FPR)",
        ..Info::peer("fastbloom-eqmem", "fastbloom 0.17", Kind::Bloom)
    })
}

// ---------------------------------------------------------------- bloomfilter

/// bloomfilter 3, seeded SipHash-1-3.
#[derive(Debug)]
pub struct BloomfilterCrate {
    f: bloomfilter::Bloom<[u8]>,
    items: u64,
}

impl Adapter for BloomfilterCrate {
    fn new_empty(spec: &Spec) -> Option<Result<Self, Error>> {
        let mut seed = [0u8; 32];
        for (i, b) in seed.iter_mut().enumerate() {
            *b = (spec.seed >> ((i % 8) * 8)) as u8 ^ i as u8;
        }
        Some(
            bloomfilter::Bloom::new_for_fp_rate_with_seed(usize_n(spec).max(1), spec.fpr, &seed)
                .map(|f| BloomfilterCrate { f, items: 0 })
                .map_err(|e| Error::Peer(format!("bloomfilter: {e}"))),
        )
    }
    key_calls!(counted set, check);
    fn theoretical_fpr(&self) -> Option<f64> {
        Some(bloom_fpr(
            self.f.len() as f64,
            f64::from(self.f.number_of_hash_functions()),
            self.items as f64,
        ))
    }
    fn describe(&self) -> String {
        format!("m={} k={}", self.f.len(), self.f.number_of_hash_functions())
    }
}

/// Registry entry for bloomfilter.
pub fn bloomfilter_entry() -> Entry {
    Entry::new::<BloomfilterCrate>(Info {
        keyed: true,
        note: "new_for_fp_rate_with_seed(n, p, seed): its only hasher, two SipHash-1-3 hashes under a 32-byte seed (keyed)",
        ..Info::peer("bloomfilter", "bloomfilter 3.0", Kind::Bloom)
    })
}

// ---------------------------------------------------------------- growable-bloom-filter

/// growable-bloom-filter's default tightening ratio: stage i is built for `p0 · r^i`.
pub const GROWABLE_TIGHTENING: f64 = 0.85;

/// Stages growable-bloom-filter (growth factor 2) uses to hold `n` items from a start
/// capacity of `start`: capacities `start · 2^i` until their sum reaches `n`.
pub fn growable_stages(start: usize, n: usize) -> i32 {
    let (mut cap, mut s) = (0usize, 0);
    while cap < n && s < 64 {
        cap = cap.saturating_add(start << s);
        s += 1;
    }
    s.max(1)
}

/// growable-bloom-filter 2.1, configured as its documentation shows:
/// `GrowableBloom::new(desired_error_prob, est_insertions)` (its default growth factor 2 and
/// tightening ratio 0.85), starting at n/8 so the measurement includes its growth to n.
/// Its docs say the failure rate is controlled by `desired_error_prob`; that is the first
/// stage's rate, and stage i runs at `p0·0.85^i`, so over the four stages that n/8 → n takes
/// the rates add up to about 3.2·p0. Sized to meet the target (equal FPR), it is given
/// `p0 = p / Σ_{i<stages} 0.85^i`, the union bound of the stages it will use at n.
#[derive(Debug)]
pub struct Growable {
    f: growable_bloom_filter::GrowableBloom,
    first: f64,
    start: usize,
}

impl Growable {
    /// Stages in use: capacities `start · 2^i` add up to the reported capacity.
    fn stages(&self) -> i32 {
        growable_stages(self.start, self.f.capacity())
    }
}

impl Adapter for Growable {
    fn new_empty(spec: &Spec) -> Option<Result<Self, Error>> {
        let start = (usize_n(spec) / 8).max(1);
        let stages = growable_stages(start, usize_n(spec).max(1));
        let sum: f64 = (0..stages).map(|i| GROWABLE_TIGHTENING.powi(i)).sum();
        let first = spec.fpr / sum;
        Some(Ok(Growable {
            f: growable_bloom_filter::GrowableBloom::new(first, start),
            first,
            start,
        }))
    }
    key_calls!(insert, contains);
    fn theoretical_fpr(&self) -> Option<f64> {
        // The union bound over the stages in use: each stage is built for p0·r^i (the crate
        // exposes no fill-dependent formula).
        let stages = self.stages();
        Some(
            1.0 - (0..stages)
                .map(|i| 1.0 - self.first * GROWABLE_TIGHTENING.powi(i))
                .product::<f64>(),
        )
    }
    fn describe(&self) -> String {
        format!(
            "GrowableBloom::new({:.3e}, {}): grown to {} in {} stages (growth 2, tightening 0.85)",
            self.first,
            self.start,
            self.f.capacity(),
            self.stages(),
        )
    }
}

/// Registry entry for growable-bloom-filter.
pub fn growable_entry() -> Entry {
    Entry::new::<Growable>(Info {
        grows: true,
        note: "GrowableBloom::new(p0, n/8) as its docs show (growth 2, tightening 0.85), p0 = p / sum of 0.85^i over the stages it uses at n, so the compound meets p (equal FPR); theory = union bound of its stages",
        ..Info::peer(
            "growable-bloom",
            "growable-bloom-filter 2.1",
            Kind::Scalable,
        )
    })
}

// ---------------------------------------------------------------- cuckoofilter

/// cuckoofilter 0.5: fixed 8-bit fingerprints, 4-slot buckets, power-of-two table; foldhash
/// instead of its default SipHash (it hashes each key twice).
pub struct CuckooCrate {
    f: cuckoofilter::CuckooFilter<FoldDefault>,
    buckets: usize,
}

impl std::fmt::Debug for CuckooCrate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CuckooCrate")
            .field("len", &self.f.len())
            .field("buckets", &self.buckets)
            .finish()
    }
}

impl Adapter for CuckooCrate {
    fn new_empty(spec: &Spec) -> Option<Result<Self, Error>> {
        let n = usize_n(spec);
        let f = cuckoofilter::CuckooFilter::<FoldDefault>::with_capacity(n);
        let buckets = (n.next_power_of_two() / 4).max(1);
        Some(Ok(CuckooCrate { f, buckets }))
    }
    key_calls!(add -> is_ok, contains);
    fn theoretical_fpr(&self) -> Option<f64> {
        let load = self.f.len() as f64 / (self.buckets * 4) as f64;
        Some(bloomlab_cuckoo::math::cuckoo_fpr(8, 4, load))
    }
    fn describe(&self) -> String {
        format!("8-bit fingerprints, {} buckets x 4", self.buckets)
    }
}

/// Registry entry for cuckoofilter.
pub fn cuckoofilter_entry() -> Entry {
    Entry::new::<CuckooCrate>(Info {
        tunable: false,
        deletes: true,
        note: "CuckooFilter::<foldhash>::with_capacity(n) (its default is unkeyed SipHash-1-3, twice per key); fixed 8-bit fingerprints (about 3 %): a reference only for targets >= its FPR",
        ..Info::peer("cuckoofilter", "cuckoofilter 0.5", Kind::Cuckoo)
    })
}

// ---------------------------------------------------------------- scalable_cuckoo_filter

type ScfFilter = scalable_cuckoo_filter::ScalableCuckooFilter<[u8], FoldDefault, ChaCha8Rng>;

/// scalable_cuckoo_filter 0.5, seeded kick RNG, starting at n/8.
#[derive(Debug)]
pub struct ScalableCuckoo {
    f: ScfFilter,
}

impl Adapter for ScalableCuckoo {
    fn new_empty(spec: &Spec) -> Option<Result<Self, Error>> {
        let f = scalable_cuckoo_filter::ScalableCuckooFilterBuilder::new()
            .initial_capacity((usize_n(spec) / 8).max(1))
            .false_positive_probability(spec.fpr)
            .hasher(FoldDefault::default())
            .rng(ChaCha8Rng::seed_from_u64(spec.seed))
            .finish();
        Some(Ok(ScalableCuckoo { f }))
    }
    key_calls!(insert, contains);
    fn theoretical_fpr(&self) -> Option<f64> {
        Some(self.f.false_positive_probability())
    }
    fn describe(&self) -> String {
        format!(
            "start capacity n/8, capacity now {}, {} table bits",
            self.f.capacity(),
            self.f.bits()
        )
    }
}

/// Registry entry for scalable_cuckoo_filter.
pub fn scalable_cuckoo_entry() -> Entry {
    Entry::new::<ScalableCuckoo>(Info {
        deletes: true,
        grows: true,
        curve: Some(Curve::Cuckoo),
        note: "builder: initial_capacity(n/8), false_positive_probability(p) (stage i at p/2^(i+1), compound <= p like ours), foldhash instead of its default unkeyed SipHash-1-3, seeded kick RNG",
        ..Info::peer(
            "scalable-cuckoo",
            "scalable_cuckoo_filter 0.5",
            Kind::Scalable,
        )
    })
}

// ---------------------------------------------------------------- qfilter

/// How far the resizing qfilter may grow past its start: it must be told up front (its
/// remainders are widened by one bit per doubling it may make).
pub const QFILTER_GROWTH: u64 = 1024;

/// qfilter 0.3 (rank-select quotient filter), its default hasher. `RESIZING = false`: fixed
/// capacity n. `RESIZING = true`: starts at n/8 like our growing filters, told it may grow
/// [`QFILTER_GROWTH`]× (a ceiling our filters are not given).
#[derive(Debug)]
pub struct QFilter<const RESIZING: bool> {
    f: qfilter::Filter,
}

impl<const RESIZING: bool> Adapter for QFilter<RESIZING> {
    fn new_empty(spec: &Spec) -> Option<Result<Self, Error>> {
        let built = if RESIZING {
            let start = (spec.n / 8).max(1);
            qfilter::Filter::new_resizeable(start, start * QFILTER_GROWTH, spec.fpr)
        } else {
            qfilter::Filter::new(spec.n.max(1), spec.fpr)
        };
        Some(
            built
                .map(|f| QFilter { f })
                .map_err(|e| Error::Peer(format!("qfilter: {e}"))),
        )
    }
    key_calls!(insert_duplicated -> is_ok, contains);
    fn theoretical_fpr(&self) -> Option<f64> {
        Some(self.f.current_error_ratio())
    }
    fn describe(&self) -> String {
        format!(
            "capacity {}, {}-bit remainders",
            self.f.capacity(),
            self.f.fingerprint_size()
        )
    }
}

/// Registry entry for qfilter.
pub fn qfilter_entry() -> Entry {
    Entry::new::<QFilter<false>>(Info {
        deletes: true,
        note: "Filter::new(n, p) (not resizeable), its default StableBuildHasher (foldhash, fixed seed)",
        ..Info::peer("qfilter", "qfilter 0.3", Kind::Quotient)
    })
}

/// Registry entry for qfilter with resizing.
pub fn qfilter_resizing_entry() -> Entry {
    Entry::new::<QFilter<true>>(Info {
        deletes: true,
        grows: true,
        note: "Filter::new_resizeable(n/8, 1024 n/8, p): grows by doubling up to a ceiling given up front, its default StableBuildHasher",
        ..Info::peer("qfilter-resizing", "qfilter 0.3", Kind::Quotient)
    })
}

// ---------------------------------------------------------------- xorf

/// xorf takes pre-hashed `u64` keys: its adapter pays one hash of the key's bytes, as its
/// docs tell a user with byte keys to do (xxh3-64, the fastest well-kept byte hash).
#[inline]
pub fn xorf_key(key: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(key)
}

/// One of xorf 0.13's binary fuse filters (static, built from the keys' hashes): its
/// fingerprint bits, and its registry entry's name and note.
pub trait BinaryFuse:
    xorf::Filter<u64>
    + for<'a> TryFrom<&'a [u64], Error = &'static str>
    + std::fmt::Debug
    + Send
    + Sync
    + 'static
{
    /// Fingerprint bits: the FPR is `2^-BITS`.
    const BITS: i32;
    /// Registry name.
    const NAME: &'static str;
    /// How the harness configures it.
    const NOTE: &'static str;
}

/// About 0.39 % at about 9 bits/item.
impl BinaryFuse for xorf::BinaryFuse8 {
    const BITS: i32 = 8;
    const NAME: &'static str = "xorf-bfuse8";
    const NOTE: &'static str = "BinaryFuse8::try_from(xxh3-64 of each key's 8 bytes): static, 8-bit fingerprints (2^-8); feature uniform-random off, so unused slots are 0 and the FPR is the same run to run";
}

/// About 0.0015 % at about 18 bits/item.
impl BinaryFuse for xorf::BinaryFuse16 {
    const BITS: i32 = 16;
    const NAME: &'static str = "xorf-bfuse16";
    const NOTE: &'static str = "BinaryFuse16::try_from(xxh3-64 of each key's 8 bytes): static, 16-bit fingerprints (2^-16); feature uniform-random off (unused slots 0: the same FPR run to run)";
}

/// An xorf binary fuse filter `F`, built once from the xxh3-64 hashes of all the keys.
#[derive(Debug)]
pub struct Xorf<F>(F);

impl<F: BinaryFuse> Adapter for Xorf<F> {
    fn new_empty(_: &Spec) -> Option<Result<Self, Error>> {
        None
    }
    fn build(_: &Spec, keys: &Keys) -> Result<(Self, u64), Error> {
        let hashed: Vec<u64> = keys.iter().map(xorf_key).collect();
        F::try_from(hashed.as_slice())
            .map(|f| (Xorf(f), 0))
            .map_err(|e| Error::Peer(format!("xorf: {e}")))
    }
    fn insert(&mut self, _: &[u8]) -> bool {
        false
    }
    #[inline]
    fn contains(&self, key: &[u8]) -> bool {
        self.0.contains(&xorf_key(key))
    }
    fn theoretical_fpr(&self) -> Option<f64> {
        Some(2f64.powi(-F::BITS))
    }
    fn describe(&self) -> String {
        format!("{}-bit fingerprints, {} slots", F::BITS, self.0.len())
    }
}

/// Registry entry for xorf's binary fuse filter `F`: static, fixed fingerprint bits.
pub fn xorf_entry<F: BinaryFuse>() -> Entry {
    Entry::new::<Xorf<F>>(Info {
        tunable: false,
        dynamic: false,
        curve: Some(Curve::BinaryFuse),
        note: F::NOTE,
        ..Info::peer(F::NAME, "xorf 0.13", Kind::Static)
    })
}
