//! Peers from crates.io, measured beside our filters in the same run. Each adapter reports
//! the parameters the crate actually chose; fixed-parameter crates are measured at their own
//! FPR (their `Info::tunable` is `false`).

use std::hash::BuildHasherDefault;

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{Adapter, Curve, Entry, Info, Kind, Spec};

fn usize_n(spec: &Spec) -> usize {
    usize::try_from(spec.n).unwrap_or(usize::MAX)
}

/// Classic Bloom filter `(1 − e^(−kn/m))^k`.
fn bloom_fpr(m: f64, k: f64, n: f64) -> f64 {
    (1.0 - (-k * n / m).exp()).powf(k)
}

// ---------------------------------------------------------------- fastbloom

/// fastbloom 0.17, seeded for reproducibility.
#[derive(Debug)]
pub struct FastBloom {
    f: fastbloom::BloomFilter,
    items: u64,
}

impl Adapter for FastBloom {
    fn new_empty(spec: &Spec) -> Option<Result<Self, String>> {
        let f = fastbloom::BloomFilter::with_false_pos(spec.fpr)
            .seed(&u128::from(spec.seed))
            .expected_items(usize_n(spec).max(1));
        Some(Ok(FastBloom { f, items: 0 }))
    }
    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.items += 1;
        self.f.insert(&key);
        true
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.f.contains(&key)
    }
    fn theoretical_fpr(&self) -> Option<f64> {
        Some(self.f.expected_false_pos(self.items as usize))
    }
    fn describe(&self) -> String {
        format!("m={} k={}", self.f.num_bits(), self.f.num_hashes())
    }
}

/// Registry entry for fastbloom.
pub fn fastbloom_entry() -> Entry {
    Entry::new::<FastBloom>(Info {
        name: "fastbloom",
        source: "fastbloom 0.17",
        kind: Kind::Bloom,
        peer: true,
        tunable: true,
        dynamic: true,
        deletes: false,
        grows: false,
        keyed: false,
        curve: Some(Curve::Bloom),
        note: "with_false_pos(p).seed(seed).expected_items(n); foldhash, one hash + derived probes",
    })
}

// ---------------------------------------------------------------- bloomfilter

/// bloomfilter 3, seeded SipHash-1-3.
#[derive(Debug)]
pub struct BloomfilterCrate {
    f: bloomfilter::Bloom<u64>,
    items: u64,
}

impl Adapter for BloomfilterCrate {
    fn new_empty(spec: &Spec) -> Option<Result<Self, String>> {
        let mut seed = [0u8; 32];
        for (i, b) in seed.iter_mut().enumerate() {
            *b = (spec.seed >> ((i % 8) * 8)) as u8 ^ i as u8;
        }
        Some(
            bloomfilter::Bloom::new_for_fp_rate_with_seed(usize_n(spec).max(1), spec.fpr, &seed)
                .map(|f| BloomfilterCrate { f, items: 0 })
                .map_err(|e| format!("bloomfilter: {e}")),
        )
    }
    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.items += 1;
        self.f.set(&key);
        true
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.f.check(&key)
    }
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
        name: "bloomfilter",
        source: "bloomfilter 3.0",
        kind: Kind::Bloom,
        peer: true,
        tunable: true,
        dynamic: true,
        deletes: false,
        grows: false,
        keyed: true,
        curve: Some(Curve::Bloom),
        note: "new_for_fp_rate_with_seed(n, p, seed); two SipHash-1-3 hashes under a 32-byte seed",
    })
}

// ---------------------------------------------------------------- growable-bloom-filter

/// growable-bloom-filter 2.1: starts at n/8 so the measurement includes its growth to n.
#[derive(Debug)]
pub struct Growable {
    f: growable_bloom_filter::GrowableBloom,
    target: f64,
    start: usize,
}

impl Adapter for Growable {
    fn new_empty(spec: &Spec) -> Option<Result<Self, String>> {
        let start = (usize_n(spec) / 8).max(1);
        Some(Ok(Growable {
            f: growable_bloom_filter::GrowableBloom::new(spec.fpr, start),
            target: spec.fpr,
            start,
        }))
    }
    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.f.insert(key);
        true
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.f.contains(key)
    }
    fn theoretical_fpr(&self) -> Option<f64> {
        // The crate promises its target as the compound bound; it exposes no formula.
        Some(self.target)
    }
    fn describe(&self) -> String {
        format!(
            "start capacity {} grown to {} (growth 2, tightening 0.85)",
            self.start,
            self.f.capacity()
        )
    }
}

/// Registry entry for growable-bloom-filter.
pub fn growable_entry() -> Entry {
    Entry::new::<Growable>(Info {
        name: "growable-bloom",
        source: "growable-bloom-filter 2.1",
        kind: Kind::Scalable,
        peer: true,
        tunable: true,
        dynamic: true,
        deletes: false,
        grows: true,
        keyed: false,
        curve: None,
        note: "GrowableBloom::new(p, n/8): starts at n/8 and grows to n; theory column = its promised bound",
    })
}

// ---------------------------------------------------------------- cuckoofilter

type StdSip = std::collections::hash_map::DefaultHasher;

/// cuckoofilter 0.5: fixed 8-bit fingerprints, 4-slot buckets, power-of-two table.
pub struct CuckooCrate {
    f: cuckoofilter::CuckooFilter<StdSip>,
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
    fn new_empty(spec: &Spec) -> Option<Result<Self, String>> {
        let n = usize_n(spec);
        let f = cuckoofilter::CuckooFilter::<StdSip>::with_capacity(n);
        let buckets = (n.next_power_of_two() / 4).max(1);
        Some(Ok(CuckooCrate { f, buckets }))
    }
    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.f.add(&key).is_ok()
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.f.contains(&key)
    }
    fn theoretical_fpr(&self) -> Option<f64> {
        let load = self.f.len() as f64 / (self.buckets * 4) as f64;
        Some(bloomlab_core::math::cuckoo_fpr(8, 4, load))
    }
    fn describe(&self) -> String {
        format!("8-bit fingerprints, {} buckets x 4", self.buckets)
    }
}

/// Registry entry for cuckoofilter.
pub fn cuckoofilter_entry() -> Entry {
    Entry::new::<CuckooCrate>(Info {
        name: "cuckoofilter",
        source: "cuckoofilter 0.5",
        kind: Kind::Cuckoo,
        peer: true,
        tunable: false,
        dynamic: true,
        deletes: true,
        grows: false,
        keyed: false,
        curve: Some(Curve::Cuckoo),
        note: "with_capacity(n); fixed 8-bit fingerprints (about 3 %), any target ignored",
    })
}

// ---------------------------------------------------------------- scalable_cuckoo_filter

type ScfFilter = scalable_cuckoo_filter::ScalableCuckooFilter<
    u64,
    scalable_cuckoo_filter::DefaultHasher,
    ChaCha8Rng,
>;

/// scalable_cuckoo_filter 0.5, seeded kick RNG, starting at n/8.
#[derive(Debug)]
pub struct ScalableCuckoo {
    f: ScfFilter,
}

impl Adapter for ScalableCuckoo {
    fn new_empty(spec: &Spec) -> Option<Result<Self, String>> {
        let f = scalable_cuckoo_filter::ScalableCuckooFilterBuilder::new()
            .initial_capacity((usize_n(spec) / 8).max(1))
            .false_positive_probability(spec.fpr)
            .rng(ChaCha8Rng::seed_from_u64(spec.seed))
            .finish();
        Some(Ok(ScalableCuckoo { f }))
    }
    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.f.insert(&key);
        true
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.f.contains(&key)
    }
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
        name: "scalable-cuckoo",
        source: "scalable_cuckoo_filter 0.5",
        kind: Kind::Scalable,
        peer: true,
        tunable: true,
        dynamic: true,
        deletes: true,
        grows: true,
        keyed: false,
        curve: Some(Curve::Cuckoo),
        note: "builder: initial_capacity(n/8), false_positive_probability(p), seeded kick RNG",
    })
}

// ---------------------------------------------------------------- qfilter

type QHasher = BuildHasherDefault<StdSip>;

/// qfilter 0.3 (rank-select quotient filter), fixed capacity n.
#[derive(Debug)]
pub struct QFilter {
    f: qfilter::Filter<Box<[u8]>, QHasher>,
}

impl Adapter for QFilter {
    fn new_empty(spec: &Spec) -> Option<Result<Self, String>> {
        Some(
            qfilter::Filter::new_with_hasher(spec.n.max(1), spec.fpr, QHasher::default())
                .map(|f| QFilter { f })
                .map_err(|e| format!("qfilter: {e}")),
        )
    }
    #[inline]
    fn insert(&mut self, key: u64) -> bool {
        self.f.insert_duplicated(key).is_ok()
    }
    #[inline]
    fn contains(&self, key: u64) -> bool {
        self.f.contains(key)
    }
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
    Entry::new::<QFilter>(Info {
        name: "qfilter",
        source: "qfilter 0.3",
        kind: Kind::Quotient,
        peer: true,
        tunable: true,
        dynamic: true,
        deletes: true,
        grows: false,
        keyed: false,
        curve: Some(Curve::Quotient),
        note: "Filter::new(n, p) (not resizeable); std SipHash-1-3 with fixed keys",
    })
}

// ---------------------------------------------------------------- xorf

/// xorf 0.13 BinaryFuse8: static, about 0.39 % at about 9 bits/item.
#[derive(Debug)]
pub struct BinaryFuse8(xorf::BinaryFuse8);

/// xorf 0.13 BinaryFuse16: static, about 0.0015 % at about 18 bits/item.
#[derive(Debug)]
pub struct BinaryFuse16(xorf::BinaryFuse16);

macro_rules! xorf_adapter {
    ($t:ident, $inner:ty, $bits:expr) => {
        impl Adapter for $t {
            fn new_empty(_: &Spec) -> Option<Result<Self, String>> {
                None
            }
            fn build(_: &Spec, keys: &[u64]) -> Result<(Self, u64), String> {
                <$inner>::try_from(keys)
                    .map(|f| ($t(f), 0))
                    .map_err(|e| format!("xorf: {e}"))
            }
            fn insert(&mut self, _: u64) -> bool {
                false
            }
            #[inline]
            fn contains(&self, key: u64) -> bool {
                xorf::Filter::contains(&self.0, &key)
            }
            fn theoretical_fpr(&self) -> Option<f64> {
                Some(2f64.powi(-$bits))
            }
            fn describe(&self) -> String {
                format!(
                    "{}-bit fingerprints, {} slots",
                    $bits,
                    xorf::Filter::<u64>::len(&self.0)
                )
            }
        }
    };
}

xorf_adapter!(BinaryFuse8, xorf::BinaryFuse8, 8);
xorf_adapter!(BinaryFuse16, xorf::BinaryFuse16, 16);

/// Registry entry for xorf's BinaryFuse8.
pub fn bfuse8_entry() -> Entry {
    Entry::new::<BinaryFuse8>(Info {
        name: "xorf-bfuse8",
        source: "xorf 0.13",
        kind: Kind::Xor,
        peer: true,
        tunable: false,
        dynamic: false,
        deletes: false,
        grows: false,
        keyed: false,
        curve: Some(Curve::BinaryFuse),
        note: "BinaryFuse8::try_from(keys): static, 8-bit fingerprints (2^-8), the space reference",
    })
}

/// Registry entry for xorf's BinaryFuse16.
pub fn bfuse16_entry() -> Entry {
    Entry::new::<BinaryFuse16>(Info {
        name: "xorf-bfuse16",
        source: "xorf 0.13",
        kind: Kind::Xor,
        peer: true,
        tunable: false,
        dynamic: false,
        deletes: false,
        grows: false,
        keyed: false,
        curve: Some(Curve::BinaryFuse),
        note: "BinaryFuse16::try_from(keys): static, 16-bit fingerprints (2^-16)",
    })
}
