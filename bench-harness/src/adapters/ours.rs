//! One generic adapter for every bloomlab filter: anything implementing
//! `bloomlab_core::Filter` plus [`Construct`] (how to size it for `n` items at FPR `p`).

use crate::error::Error;
use bloomlab_core::Filter;

use bloomlab_keyed::{Sip64Scheme, SipScheme};

use super::{Adapter, Curve, Entry, Info, Kind, Spec};
use crate::keys::Keys;

/// How the harness sizes one of our filter types for a target. Implement it for a new
/// variant (one function) and register `entry::<TheType>(Info { .. })`.
pub trait Construct: Filter + Sized + Send + 'static {
    /// A filter for `n` items at target FPR `p`.
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self>;
}

impl Construct for bloomlab_classic::BloomFilter {
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        bloomlab_classic::BloomFilter::with_fpr(n, p)
    }
}

impl Construct for bloomlab_keyed::KeyedBloomFilter<SipScheme> {
    /// The fixed harness secret ([`HARNESS_SECRET`]) under the earlier scheme (id 2).
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        bloomlab_classic::BloomFilter::with_fpr_and_scheme(
            n,
            p,
            SipScheme::from_secret(HARNESS_SECRET),
        )
    }
}

impl Construct for bloomlab_blocked::BlockedBloomFilter<Sip64Scheme> {
    /// The fixed harness secret ([`harness_secret`]).
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        Self::with_fpr_and_scheme(n, p, harness_secret())
    }
}

impl Construct for bloomlab_counting::CountingBloomFilter<Sip64Scheme> {
    /// The fixed harness secret ([`harness_secret`]).
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        Self::with_fpr_and_scheme(n, p, harness_secret())
    }
}

impl Construct for bloomlab_cuckoo::CuckooFilter<Sip64Scheme> {
    /// The fixed harness secret ([`harness_secret`]).
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        Self::with_fpr_and_scheme(n, p, harness_secret())
    }
}

/// Starts at n/8 and grows to n, like the unkeyed one.
impl Construct for bloomlab_scalable::ScalableBloomFilter<Sip64Scheme> {
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        Self::with_config_and_scheme(
            bloomlab_scalable::ScalableConfig::new((n / 8).max(1), p),
            harness_secret(),
        )
    }
}

impl Construct for bloomlab_cuckoo::CuckooFilter {
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        bloomlab_cuckoo::CuckooFilter::with_fpr(n, p)
    }
}

/// Starts at n/8 and grows to n, like the growing peers, so a measurement at n includes
/// the growth (four stages).
impl Construct for bloomlab_scalable::ScalableBloomFilter {
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        bloomlab_scalable::ScalableBloomFilter::new((n / 8).max(1), p)
    }
}

/// Starts at n/8 and grows to n, like the scalable filter: the main run's figures at n
/// include three rounds of growth (three doublings of the bucket count, in steps of 1/16).
impl Construct for bloomlab_expandable::ExpandableFilter {
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        Self::with_start((n / 8).max(1), p)
    }
}

/// Starts at n/8 and grows to n, like the unkeyed one.
impl Construct for bloomlab_expandable::ExpandableFilter<Sip64Scheme> {
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        Self::with_start_and_scheme((n / 8).max(1), p, harness_secret())
    }
}

/// Adapter for one of our filters: the key's bytes through `insert_bytes` /
/// `might_contain_bytes`, as a user with byte keys calls them.
#[derive(Debug)]
pub struct Ours<F>(pub F);

impl<F: Construct> Adapter for Ours<F> {
    fn new_empty(spec: &Spec) -> Option<Result<Self, Error>> {
        Some(
            F::with_target(spec.n, spec.fpr)
                .map(Ours)
                .map_err(Error::from),
        )
    }

    // Inlined into the timed loop like the peers' (small) adapters are, so that no filter
    // pays a call per key that the others do not.
    #[inline(always)]
    fn insert(&mut self, key: &[u8]) -> bool {
        self.0.insert_bytes(key).is_ok()
    }

    #[inline(always)]
    fn contains(&self, key: &[u8]) -> bool {
        self.0.might_contain_bytes(key)
    }

    fn theoretical_fpr(&self) -> Option<f64> {
        Some(self.0.expected_fpr())
    }

    fn describe(&self) -> String {
        let p = self.0.params();
        format!(
            "table_bits={} k={} hash={}",
            p.table_bits,
            p.hashes,
            p.scheme.id.name()
        )
    }
}

/// Registry entry for our filter type `F`.
pub fn entry<F: Construct>(info: Info) -> Entry {
    Entry::new::<Ours<F>>(info)
}

impl Construct for bloomlab_blocked::BlockedBloomFilter {
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        bloomlab_blocked::BlockedBloomFilter::with_fpr(n, p)
    }
}

impl Construct for bloomlab_counting::CountingBloomFilter {
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        bloomlab_counting::CountingBloomFilter::with_fpr(n, p)
    }
}

/// One of our filters with a batched lookup (and, where it has one, a batched insert): the
/// adapter behind every `*-batched` entry.
pub trait BatchApi: Construct {
    /// How many keys ahead the batched calls hash and prefetch (for `describe`).
    const AHEAD: usize;

    /// `might_contain_batch` over `keys`.
    fn lookup_batch(&self, keys: &[&[u8]], out: &mut [bool]);

    /// Insert every key: the filter's batched insert where it has one.
    fn insert_all(&mut self, keys: &[&[u8]]) {
        for k in keys {
            let _ = self.insert_bytes(k);
        }
    }
}

impl<S: bloomlab_core::HashScheme> BatchApi for bloomlab_blocked::BlockedBloomFilter<S>
where
    Self: Construct,
{
    const AHEAD: usize = bloomlab_blocked::BATCH;

    fn lookup_batch(&self, keys: &[&[u8]], out: &mut [bool]) {
        self.might_contain_batch(keys, out)
            .expect("the driver passes equal lengths");
    }

    fn insert_all(&mut self, keys: &[&[u8]]) {
        self.insert_batch(keys);
    }
}

impl BatchApi for bloomlab_sbbf::Sbbf {
    const AHEAD: usize = bloomlab_sbbf::BATCH;

    fn lookup_batch(&self, keys: &[&[u8]], out: &mut [bool]) {
        self.might_contain_batch(keys, out)
            .expect("the driver passes equal lengths");
    }
}

/// A filter answering through its batched API: lookups are timed over the whole stream with
/// `BatchApi::lookup_batch`, inserts (and the build) with `BatchApi::insert_all`.
#[derive(Debug)]
pub struct Batched<F>(pub F);

impl<F: BatchApi> Adapter for Batched<F> {
    const BATCHED: bool = true;

    fn new_empty(spec: &Spec) -> Option<Result<Self, Error>> {
        Some(
            F::with_target(spec.n, spec.fpr)
                .map(Batched)
                .map_err(Error::from),
        )
    }

    fn build(spec: &Spec, keys: &Keys) -> Result<(Self, u64), Error> {
        let mut f = F::with_target(spec.n, spec.fpr).map_err(Error::from)?;
        f.insert_all(&keys.views());
        Ok((Batched(f), 0))
    }

    #[inline(always)]
    fn insert(&mut self, key: &[u8]) -> bool {
        self.0.insert_bytes(key).is_ok()
    }

    #[inline(always)]
    fn contains(&self, key: &[u8]) -> bool {
        self.0.might_contain_bytes(key)
    }

    fn insert_many(&mut self, keys: &[&[u8]]) -> u64 {
        self.0.insert_all(keys);
        0
    }

    fn contains_batch(&self, keys: &[&[u8]], out: &mut [bool]) {
        self.0.lookup_batch(keys, out);
    }

    fn theoretical_fpr(&self) -> Option<f64> {
        Some(self.0.expected_fpr())
    }

    fn describe(&self) -> String {
        let p = self.0.params();
        format!(
            "table_bits={} k={} hash={} batched(prefetch {})",
            p.table_bits,
            p.hashes,
            p.scheme.id.name(),
            F::AHEAD
        )
    }
}

const SIP: &str = "probed with one 64-bit SipHash-2-4 per key (h2 = h1 times an odd constant; scheme id 4, the keyed default) under a fixed 16-byte secret (Sip64Scheme::from_secret; a user takes Sip64Scheme::random())";

/// The keyed entries' secret: fixed, so every run builds the same filters and measures the
/// same FPR (speed does not depend on the secret's value).
pub const HARNESS_SECRET: [u8; 16] = *b"bloomlab-harness";

/// [`HARNESS_SECRET`] under the keyed default scheme (id 4).
pub fn harness_secret() -> Sip64Scheme {
    Sip64Scheme::from_secret(HARNESS_SECRET)
}

/// The classic filter.
pub fn classic_entry() -> Entry {
    entry::<bloomlab_classic::BloomFilter>(Info {
        curve: Some(Curve::Bloom),
        note: "BloomFilter::with_fpr(n, p): m = ceil(-n ln p / ln2^2), k = round(m/n ln 2), xxh3-128",
        ..Info::base("classic", "bloomlab-classic", Kind::Bloom)
    })
}

/// The classic filter, keyed.
pub fn classic_keyed_entry() -> Entry {
    entry::<bloomlab_keyed::KeyedBloomFilter<SipScheme>>(Info {
        keyed: true,
        curve: Some(Curve::Bloom),
        note: "probed with the earlier keyed scheme, one 128-bit SipHash-2-4 per key (scheme id 2, kept for filters stored before id 4), under a fixed 16-byte secret",
        ..Info::base("classic-keyed", "bloomlab-keyed", Kind::Bloom)
    })
}

/// The blocked filter.
pub fn blocked_entry() -> Entry {
    entry::<bloomlab_blocked::BlockedBloomFilter>(Info {
        curve: Some(Curve::Bloom),
        note: "BlockedBloomFilter::with_fpr(n, p): 512-bit blocks, bits/item and k from the exact blocked formula, one xxh3-64 per key (format version 3); one lookup at a time",
        ..Info::base("blocked", "bloomlab-blocked", Kind::Bloom)
    })
}

/// The blocked filter, keyed.
pub fn blocked_keyed_entry() -> Entry {
    entry::<bloomlab_blocked::BlockedBloomFilter<Sip64Scheme>>(Info {
        keyed: true,
        curve: Some(Curve::Bloom),
        note: SIP,
        ..Info::base("blocked-keyed", "bloomlab-keyed", Kind::Bloom)
    })
}

/// The blocked filter through its batched API.
pub fn blocked_batched_entry() -> Entry {
    Entry::new::<Batched<bloomlab_blocked::BlockedBloomFilter>>(Info {
        curve: Some(Curve::Bloom),
        batched: true,
        note: "the blocked filter through might_contain_batch / insert_batch (prefetching 32 keys ahead; lookups in tables up to 384 KiB key by key); same table as blocked; its ratios are batched vs single lookups",
        ..Info::base("blocked-batched", "bloomlab-blocked", Kind::Bloom)
    })
}

/// The blocked filter keyed with the 64-bit scheme, through its batched API.
pub fn blocked_keyed_batched_entry() -> Entry {
    Entry::new::<Batched<bloomlab_blocked::BlockedBloomFilter<Sip64Scheme>>>(Info {
        keyed: true,
        curve: Some(Curve::Bloom),
        batched: true,
        note: "blocked-keyed through might_contain_batch / insert_batch (keys hashed eight at a time in vector lanes, 32 keys ahead, their blocks prefetched); same table as blocked-keyed; its ratios are batched vs single lookups",
        ..Info::base("blocked-keyed-batched", "bloomlab-keyed", Kind::Bloom)
    })
}

/// The counting filter.
pub fn counting_entry() -> Entry {
    entry::<bloomlab_counting::CountingBloomFilter>(Info {
        deletes: true,
        note: "CountingBloomFilter::with_fpr(n, p): the classic m and k, 4-bit counters (4x the classic memory), sticky at 15",
        ..Info::base("counting", "bloomlab-counting", Kind::Counting)
    })
}

/// The counting filter, keyed.
pub fn counting_keyed_entry() -> Entry {
    entry::<bloomlab_counting::CountingBloomFilter<Sip64Scheme>>(Info {
        deletes: true,
        keyed: true,
        note: SIP,
        ..Info::base("counting-keyed", "bloomlab-counting", Kind::Counting)
    })
}

/// The cuckoo filter.
pub fn cuckoo_entry() -> Entry {
    entry::<bloomlab_cuckoo::CuckooFilter>(Info {
        deletes: true,
        curve: Some(Curve::Cuckoo),
        note: "CuckooFilter::with_fpr(n, p): f = ceil(log2(8/p)) bits packed, ceil(n/3.8) buckets of 4, 1000 kicks undone on failure",
        ..Info::base("cuckoo", "bloomlab-cuckoo", Kind::Cuckoo)
    })
}

/// The cuckoo filter, keyed.
pub fn cuckoo_keyed_entry() -> Entry {
    entry::<bloomlab_cuckoo::CuckooFilter<Sip64Scheme>>(Info {
        deletes: true,
        keyed: true,
        curve: Some(Curve::Cuckoo),
        note: SIP,
        ..Info::base("cuckoo-keyed", "bloomlab-cuckoo", Kind::Cuckoo)
    })
}

/// The scalable filter.
pub fn scalable_entry() -> Entry {
    entry::<bloomlab_scalable::ScalableBloomFilter>(Info {
        grows: true,
        note: "ScalableBloomFilter::new(n/8, p): starts at n/8 and grows to n; s = 2, r = 0.5, stage i at p(1-r)r^i (compound <= p)",
        ..Info::base("scalable", "bloomlab-scalable", Kind::Scalable)
    })
}

/// The scalable filter, keyed.
pub fn scalable_keyed_entry() -> Entry {
    entry::<bloomlab_scalable::ScalableBloomFilter<Sip64Scheme>>(Info {
        grows: true,
        keyed: true,
        note: "the scalable filter (n/8, s = 2, r = 0.5) probed with one 64-bit SipHash-2-4 per key (scheme id 4) under a fixed secret (a user takes Sip64Scheme::random())",
        ..Info::base("scalable-keyed", "bloomlab-scalable", Kind::Scalable)
    })
}

/// The expandable filter.
pub fn expandable_entry() -> Entry {
    entry::<bloomlab_expandable::ExpandableFilter>(Info {
        grows: true,
        deletes: true,
        note: "ExpandableFilter::with_start(n/8, p): a 4-slot cuckoo-style table that grows by splitting 1/16 of its buckets at a time (linear hashing; each split moves one fingerprint bit into the index), new fingerprints widened so the union bound stays <= p at every size",
        ..Info::base("expandable", "bloomlab-expandable", Kind::Scalable)
    })
}

/// The expandable filter, keyed.
pub fn expandable_keyed_entry() -> Entry {
    entry::<bloomlab_expandable::ExpandableFilter<Sip64Scheme>>(Info {
        grows: true,
        deletes: true,
        keyed: true,
        note: "the expandable filter (n/8, grown by splits) probed with one 64-bit SipHash-2-4 per key (scheme id 4) under a fixed secret",
        ..Info::base("expandable-keyed", "bloomlab-expandable", Kind::Scalable)
    })
}

impl Construct for bloomlab_classic::BloomFilter<Sip64Scheme> {
    /// The fixed harness secret ([`harness_secret`]).
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        Self::with_fpr_and_scheme(n, p, harness_secret())
    }
}

/// The classic filter, keyed with the 64-bit scheme.
pub fn classic_keyed_sip64_entry() -> Entry {
    entry::<bloomlab_classic::BloomFilter<Sip64Scheme>>(Info {
        keyed: true,
        curve: Some(Curve::Bloom),
        note: "the classic filter probed with one 64-bit SipHash-2-4 per key (h2 = h1 times an odd constant; scheme id 4) under a fixed secret",
        ..Info::base("classic-keyed-sip64", "bloomlab-keyed", Kind::Bloom)
    })
}

impl<S: bloomlab_core::HashScheme> BatchApi for bloomlab_classic::BloomFilter<S>
where
    Self: Construct,
{
    const AHEAD: usize = bloomlab_classic::BATCH;

    fn lookup_batch(&self, keys: &[&[u8]], out: &mut [bool]) {
        self.might_contain_batch(keys, out)
            .expect("the driver passes equal lengths");
    }

    fn insert_all(&mut self, keys: &[&[u8]]) {
        self.insert_batch(keys);
    }
}

/// The classic filter through its batched API.
pub fn classic_batched_entry() -> Entry {
    Entry::new::<Batched<bloomlab_classic::BloomFilter>>(Info {
        curve: Some(Curve::Bloom),
        batched: true,
        note: "the classic filter through might_contain_batch / insert_batch (hash 16 keys ahead; above 2 MiB of bits also prefetch every probe's word); same table as classic; its ratios are batched vs single lookups",
        ..Info::base("classic-batched", "bloomlab-classic", Kind::Bloom)
    })
}

/// The classic filter keyed with the 64-bit scheme, through its batched API.
pub fn classic_keyed_sip64_batched_entry() -> Entry {
    Entry::new::<Batched<bloomlab_classic::BloomFilter<Sip64Scheme>>>(Info {
        keyed: true,
        curve: Some(Curve::Bloom),
        batched: true,
        note: "classic-keyed-sip64 through might_contain_batch / insert_batch (keys hashed eight at a time in vector lanes, 16 keys ahead, and above 2 MiB of bits their probes' words prefetched); same table as classic-keyed-sip64; its ratios are batched vs single lookups",
        ..Info::base("classic-keyed-sip64-batched", "bloomlab-keyed", Kind::Bloom)
    })
}

/// The Parquet split-block filter sized with its own formula (any block count); keys as 8
/// little-endian bytes, hashed with xxHash64 seed 0 as Parquet hashes an INT64.
impl Construct for bloomlab_sbbf::Sbbf {
    fn with_target(n: u64, p: f64) -> bloomlab_core::Result<Self> {
        bloomlab_sbbf::Sbbf::with_fpr(n, p)
    }
}

/// The split-block filter.
pub fn sbbf_entry() -> Entry {
    entry::<bloomlab_sbbf::Sbbf>(Info {
        curve: Some(Curve::Bloom),
        note: "Sbbf::with_fpr(n, p): the Parquet split-block layout (256-bit blocks, one bit in each 32-bit word), bits/item from the SBBF formula (10.53 b/item at 1 %), xxHash64 seed 0 of the 8 key bytes; one lookup at a time",
        ..Info::base("sbbf", "bloomlab-sbbf", Kind::Bloom)
    })
}

/// The split-block filter through its batched API.
pub fn sbbf_batched_entry() -> Entry {
    Entry::new::<Batched<bloomlab_sbbf::Sbbf>>(Info {
        curve: Some(Curve::Bloom),
        batched: true,
        note: "the split-block filter through might_contain_batch (hash and prefetch 16 keys ahead; tables up to 640 KiB key by key); same table as sbbf; its ratios are batched vs single lookups",
        ..Info::base("sbbf-batched", "bloomlab-sbbf", Kind::Bloom)
    })
}

/// Our Ribbon filter: static, built from the whole key slice (keys as 8 little-endian bytes,
/// like every one of ours); it refuses inserts. `BATCHED` answers through
/// `might_contain_batch` (prefetching ahead) instead of one key at a time.
#[derive(Debug)]
pub struct Ribbon<const BATCHED: bool = false>(pub bloomlab_ribbon::RibbonFilter);

impl<const B: bool> Adapter for Ribbon<B> {
    const BATCHED: bool = B;

    fn new_empty(_: &Spec) -> Option<Result<Self, Error>> {
        None
    }

    fn build(spec: &Spec, keys: &Keys) -> Result<(Self, u64), Error> {
        bloomlab_ribbon::RibbonFilter::build(keys.iter(), spec.fpr)
            .map(|f| (Ribbon::<B>(f), 0))
            .map_err(Error::from)
    }

    fn insert(&mut self, _: &[u8]) -> bool {
        false
    }

    #[inline(always)]
    fn contains(&self, key: &[u8]) -> bool {
        self.0.might_contain(key)
    }

    fn contains_batch(&self, keys: &[&[u8]], out: &mut [bool]) {
        if B {
            self.0
                .might_contain_batch(keys, out)
                .expect("the driver passes equal lengths");
        } else {
            for (o, k) in out.iter_mut().zip(keys) {
                *o = self.0.might_contain(k);
            }
        }
    }

    fn theoretical_fpr(&self) -> Option<f64> {
        Some(self.0.expected_fpr())
    }

    fn describe(&self) -> String {
        format!(
            "slots={} r={} seed={} layout={:?}",
            self.0.num_slots(),
            self.0.result_bits(),
            self.0.seed(),
            self.0.layout()
        )
    }
}

/// The Ribbon filter.
pub fn ribbon_entry() -> Entry {
    Entry::new::<Ribbon>(Info {
        dynamic: false,
        curve: Some(Curve::Ribbon),
        note: "RibbonFilter::build(keys, p): static, w = 128, r = ceil(log2(1/p)) (FPR 2^-r), (1 + 0.008 log10 n) n slots, one xxh3-64 per key (format version 2)",
        ..Info::base("ribbon", "bloomlab-ribbon", Kind::Static)
    })
}

/// The Ribbon filter through its batched API.
pub fn ribbon_batched_entry() -> Entry {
    Entry::new::<Ribbon<true>>(Info {
        dynamic: false,
        batched: true,
        curve: Some(Curve::Ribbon),
        note: "the Ribbon filter through might_contain_batch (prefetching 16 keys ahead; solutions up to 2 MiB key by key); same filter as ribbon; its ratios are batched vs single lookups",
        ..Info::base("ribbon-batched", "bloomlab-ribbon", Kind::Static)
    })
}
