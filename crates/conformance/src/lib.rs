//! The conformance suite: generic checks that every filter variant's tests call, so each
//! variant gets the same scrutiny.
//!
//! - [`check_no_false_negatives`]: five key shapes × many keys, zero false negatives.
//! - [`check_fpr`]: measured FPR on ≥ 10^6 distinct non-members within a binomial bound of
//!   the variant's own formula ([`Filter::expected_fpr`]).
//! - [`check_k_is_locally_optimal`]: the chosen `k` is not significantly worse than `k ± 1`,
//!   compared on the same keys and probes (a paired test that does catch an off-by-one `k`).
//! - [`check_decode_robustness`]: thousands of mutated, truncated, extended, re-sealed and
//!   random inputs never panic and never decode to a filter that is not canonical and valid.
//! - [`check_invalid_parameters`]: every invalid parameter is a typed error, not a panic.
//! - [`check_serde_round_trip`] and [`check_bytes_round_trip`].
//! - [`check_known_answer`], [`digest`] and [`from_hex`]: literal known-answer vectors.
//! - [`timing`]: wall-clock bounds that stretch under an emulator (`BLOOMLAB_EMULATED`).
//! - [`hot`]: one key inserted 10^6 times costs bounded memory and time, and `remove` keeps
//!   its promise after (every deleting variant).
//! - [`props`]: the same promises as properties over arbitrary keys, operations and bytes
//!   (proptest), with the decoders' allocations and time bounded.
//!
//! All randomness is seeded ([`rand_chacha::ChaCha8Rng`], stable across platforms and
//! versions), so a failure reproduces exactly.
//!
//! # Tolerances
//!
//! Every statistical assertion in the suite uses one stated bound, [`Z_BOUND`] = 5 standard
//! deviations, applied to a standard deviation derived from the model of what is counted:
//! binomial for counts of positives among independent probes ([`binomial_sigma`]), Poisson for
//! counts of rare events ([`poisson_upper`]), the occupancy variance of balls in bins for fill
//! ratios and the cardinality estimates built from them ([`occupancy_sigma`]), and the
//! discordant-pair (McNemar) variance for two answers on the same probes. A flat percentage is
//! used only for deterministic quantities (a formula's value against a published anchor), never
//! for a measurement.
//!
//! # Known-answer vectors: how to add one for a variant, and why
//!
//! Byte formats are frozen: a filter written today must load and answer the same in every
//! later release. A round-trip test cannot show that — encoder and decoder change together and
//! agree with each other — so each variant also pins, as literals written once:
//!
//! 1. the **probe layout**: for a few fixed keys, where they land (bit positions, block index
//!    and in-block bits, counter indices, bucket and fingerprint), observed through the public
//!    API on a filter built with an explicitly named hash scheme
//!    (`with_..._and_scheme(.., Xxh3Scheme)` or an explicit type parameter), so each vector
//!    pins one (layout, scheme) pair and stays valid if a default changes;
//! 2. the **bytes**: the exact encoding (hex) of a small filter after fixed inserts, or its
//!    length and [`digest`] for a larger one, checked with [`check_known_answer`];
//! 3. a **literal encoded filter** decoded with [`from_hex`] and queried: its members answer
//!    yes, and the answers of fixed non-members are pinned too (a layout change that moves
//!    probes flips some of them).
//!
//! To add a variant: write `crates/<variant>/tests/known_answers.rs` with those three tests;
//! run them once with the literals left empty, paste the printed values, and check by hand
//! that one of them matches the layout the crate docs describe. Then mutate one constant of the
//! layout (a multiplier, a shift, the order of two hash halves), confirm a vector fails, and
//! revert. From then on a layout change requires changing a literal *and* the format version
//! ([`bloomlab_core::format`]) in the same commit, with the old version still decoded and
//! answering as before.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod declared;
pub mod hot;
pub mod parallel;
pub mod props;
pub mod timing;

use std::fmt::Debug;

use bloomlab_core::error::Error;
use bloomlab_core::format;
use bloomlab_core::{Filter, Key};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// Standard deviations allowed between a measured count and its binomial expectation.
/// Two-sided, P(|Z| > 5) ≈ 5.7·10^-7 per check: a correct filter essentially never fails, while
/// a formula off by more than a few percent at 10^6 probes does.
pub const Z_BOUND: f64 = 5.0;

/// Shapes of keys that stress hashing differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyShape {
    /// 16 uniformly random bytes.
    RandomBytes,
    /// Little-endian `u64` counters 0, 1, 2, … (low-entropy, highly structured).
    SequentialIntegers,
    /// `user:0`, `user:1`, … (long shared prefix, short varying tail).
    SharedPrefix,
    /// The empty key, then every 1-byte key, then 2- and 3-byte keys in order.
    Tiny,
    /// 1 KiB random keys (hashing throughput path, multi-block input).
    Large,
}

impl KeyShape {
    /// Every shape.
    pub const ALL: [KeyShape; 5] = [
        KeyShape::RandomBytes,
        KeyShape::SequentialIntegers,
        KeyShape::SharedPrefix,
        KeyShape::Tiny,
        KeyShape::Large,
    ];

    /// `count` distinct keys of this shape, deterministic in `seed`.
    pub fn keys(self, count: u64, seed: u64) -> Vec<Vec<u8>> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (self as u64).wrapping_mul(0x9e37));
        (0..count)
            .map(|i| match self {
                KeyShape::RandomBytes => random_bytes(&mut rng, 16),
                KeyShape::SequentialIntegers => i.to_le_bytes().to_vec(),
                KeyShape::SharedPrefix => format!("user:{i}").into_bytes(),
                KeyShape::Tiny => tiny_key(i),
                KeyShape::Large => random_bytes(&mut rng, 1024),
            })
            .collect()
    }
}

fn random_bytes(rng: &mut ChaCha8Rng, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    rng.fill_bytes(&mut v);
    v
}

/// The `i`-th key in length-then-lexicographic order: "", 00, 01, …, ff, 0000, 0001, …
fn tiny_key(mut i: u64) -> Vec<u8> {
    let mut len = 0u32;
    let mut block = 1u64;
    while i >= block {
        i -= block;
        len += 1;
        block = 256u64.saturating_pow(len);
    }
    (0..len).map(|j| (i >> (8 * j)) as u8).collect()
}

/// `|a − b| ≤ tol`: the formula tests' comparison.
pub fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

/// Target FPRs every sizing function must refuse: 0, 1, outside (0, 1), not finite.
pub const INVALID_FPRS: [f64; 7] = [
    0.0,
    1.0,
    -0.5,
    1.5,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
];

/// A member key for FPR tests: tag byte 0 then 16 seeded random bytes.
/// Members and [`non_member_key`]s can never coincide (different tag), so no overlap
/// correction is needed.
pub fn member_key(rng: &mut ChaCha8Rng) -> [u8; 17] {
    let mut k = [0u8; 17];
    rng.fill_bytes(&mut k[1..]);
    k
}

/// A non-member key for FPR tests: tag byte 1 then 16 seeded random bytes.
pub fn non_member_key(rng: &mut ChaCha8Rng) -> [u8; 17] {
    let mut k = [1u8; 17];
    rng.fill_bytes(&mut k[1..]);
    k
}

/// Insert `n` seeded [`member_key`]s into `f` (the same stream [`check_fpr`] uses for a seed)
/// and return it. Panics if an insert fails: callers size `f` for at least `n` keys.
pub fn filled<F: Filter>(mut f: F, n: u64, seed: u64) -> F {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    for _ in 0..n {
        f.insert_bytes(&member_key(&mut rng))
            .expect("insert below capacity");
    }
    f
}

/// Insert `keys_per_shape` keys of every [`KeyShape`] into a fresh filter from `make(n)` and
/// require that every one tests positive and that `len()` counts them.
pub fn check_no_false_negatives<F: Filter>(make: impl Fn(u64) -> F, keys_per_shape: u64) {
    for shape in KeyShape::ALL {
        let keys = shape.keys(keys_per_shape, 0x5eed);
        let mut f = make(keys_per_shape);
        for k in &keys {
            f.insert_bytes(k)
                .unwrap_or_else(|e| panic!("{shape:?}: insert failed below capacity: {e}"));
        }
        assert_eq!(f.len(), keys_per_shape, "{shape:?}: len() after inserts");
        let missing = keys.iter().filter(|k| !f.might_contain_bytes(k)).count();
        assert_eq!(missing, 0, "{shape:?}: {missing} false negatives");
    }
}

/// What an FPR check measured.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FprReport {
    /// Target FPR the filter was built for.
    pub target: f64,
    /// Items inserted.
    pub items: u64,
    /// Non-member probes.
    pub probes: u64,
    /// Probes that answered "maybe".
    pub positives: u64,
    /// `positives / probes`.
    pub measured: f64,
    /// The variant's own formula at this load ([`Filter::expected_fpr`]).
    pub expected: f64,
    /// Allowed deviation of `positives` from `probes · expected` ([`Z_BOUND`] binomial σ).
    pub allowed_deviation: f64,
}

/// The parts of a union test, each from `empty`: one filter holding `a` member keys, one
/// holding `b` more (both drawn from one stream seeded `seed`, [`member_key`]), and one
/// holding both sets: `(with a, with b, with both)`.
pub fn union_parts<F: Filter + Clone>(empty: F, (a, b): (usize, usize), seed: u64) -> (F, F, F) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let a_keys: Vec<_> = (0..a).map(|_| member_key(&mut rng)).collect();
    let b_keys: Vec<_> = (0..b).map(|_| member_key(&mut rng)).collect();
    let fill = |keys: &[[u8; 17]]| {
        let mut f = empty.clone();
        for k in keys {
            f.insert_bytes(k).expect("insert");
        }
        f
    };
    let both = fill(&[a_keys.clone(), b_keys.clone()].concat());
    (fill(&a_keys), fill(&b_keys), both)
}

/// [`union_parts`], then `union(with a, with b)`: before it the first differs from the filter
/// of both sets, after it equals it (bit for bit and in count). Returns `(the union, the
/// filter of both sets)` for the variant's own checks.
pub fn check_union<F: Filter + Clone + PartialEq + Debug>(
    empty: F,
    sizes: (usize, usize),
    seed: u64,
    union: impl Fn(&mut F, &F) -> Result<(), Error>,
) -> (F, F) {
    let (mut a, b, both) = union_parts(empty, sizes, seed);
    assert_ne!(a, both);
    union(&mut a, &b).expect("compatible filters unite");
    assert_eq!(a, both, "the union is the filter of both sets");
    (a, both)
}

/// A filter holding the `n` member keys of `seed` ([`filled`]), emptied by `clear`: it
/// differed from `fresh` (a new filter of the same shape) before and equals it after, none of
/// its keys answers "maybe", and refilled with them it is the filter it was. Returns the
/// cleared filter for the variant's own checks.
pub fn check_clear<F: Filter + Clone + PartialEq + Debug>(
    full: F,
    fresh: &F,
    clear: impl Fn(&mut F),
    (n, seed): (u64, u64),
) -> F {
    let mut f = full.clone();
    assert_ne!(&f, fresh, "filled");
    clear(&mut f);
    assert_eq!(&f, fresh, "cleared");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    assert!((0..n).all(|_| !f.might_contain_bytes(&member_key(&mut rng))));
    assert_eq!(filled(f.clone(), n, seed), full, "refilled");
    f
}

/// `n` lookup keys for batch tests: every third one drawn from `members` ([`member_key`]),
/// the others from `others` ([`non_member_key`]), so a filter answers both ways.
pub fn every_third_a_member(
    n: usize,
    members: &mut ChaCha8Rng,
    others: &mut ChaCha8Rng,
) -> Vec<[u8; 17]> {
    (0..n)
        .map(|i| match i % 3 {
            0 => member_key(members),
            _ => non_member_key(others),
        })
        .collect()
}

/// Build a filter with `make(n, p)`, insert `n` seeded member keys, probe `probes` distinct
/// non-members, and require the positive count to be within [`Z_BOUND`] binomial standard
/// deviations of `probes · expected_fpr()`.
///
/// The bound is the binomial one for a fixed filter: given the table, each non-member is
/// positive independently with probability ≈ the formula's value. The filter-to-filter
/// variation of the fill adds well under 1 % relative at the sizes used here, which is
/// negligible against 5σ (≥ 13 % relative at μ = 1000).
pub fn check_fpr<F: Filter>(
    make: impl Fn(u64, f64) -> F,
    n: u64,
    p: f64,
    probes: u64,
    seed: u64,
) -> FprReport {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut f = make(n, p);
    for _ in 0..n {
        f.insert_bytes(&member_key(&mut rng))
            .expect("insert below capacity");
    }
    let positives = (0..probes)
        .filter(|_| f.might_contain_bytes(&non_member_key(&mut rng)))
        .count() as u64;
    let expected = f.expected_fpr();
    let sigma = (probes as f64 * expected * (1.0 - expected)).sqrt();
    let report = FprReport {
        target: p,
        items: n,
        probes,
        positives,
        measured: positives as f64 / probes as f64,
        expected,
        allowed_deviation: Z_BOUND * sigma,
    };
    let deviation = (positives as f64 - probes as f64 * expected).abs();
    assert!(
        deviation <= report.allowed_deviation,
        "FPR outside the binomial bound: {report:?} (deviation {deviation:.1})"
    );
    report
}

impl FprReport {
    /// The measured count is not significantly above the target (one-sided, [`Z_BOUND`]
    /// binomial σ at the target): what a filter sized for `target` promises.
    pub fn check_at_or_below_target(&self) {
        let (p, probes) = (self.target, self.probes as f64);
        let sigma = (probes * p * (1.0 - p)).sqrt();
        assert!(
            self.positives as f64 <= probes * p + Z_BOUND * sigma,
            "FPR above the target: {self:?}"
        );
    }
}

/// `positives` out of `trials` lies within [`Z_BOUND`] binomial standard deviations of
/// `trials · p` (two-sided); `what` names the check in the failure.
pub fn check_binomial(positives: u64, trials: u64, p: f64, what: &str) {
    let (n, x) = (trials as f64, positives as f64);
    let sigma = (n * p * (1.0 - p)).sqrt();
    assert!(
        (x - n * p).abs() <= Z_BOUND * sigma,
        "{what}: {positives} of {trials}, expected {} ± {Z_BOUND}·{sigma:.1}",
        n * p
    );
}

/// Probe `probes` non-member keys drawn from `rng` ([`non_member_key`]) and require the
/// positives binomial around `p` ([`check_binomial`]): a table whose exact FPR (or the
/// formula's) is `p`. Returns the positives.
pub fn check_positives_near(
    might_contain: impl Fn(&[u8]) -> bool,
    probes: u64,
    rng: &mut ChaCha8Rng,
    p: f64,
) -> u64 {
    let positives = (0..probes)
        .filter(|_| might_contain(&non_member_key(rng)))
        .count() as u64;
    check_binomial(positives, probes, p, "positives among non-members");
    positives
}

/// The `(target, probes, seed)` triples the variants' FPR tests use: 0.1 % with 2·10^6
/// probes (positives are fewest there), 1 % and 3 % with 10^6, seeded `seed`, `seed + 1`,
/// `seed + 2`. At these counts the 5σ binomial bound is 11 %, 5 % and 3 % of the expected
/// positives.
pub fn three_targets(seed: u64) -> [(f64, u64, u64); 3] {
    [
        (0.001, 2_000_000, seed),
        (0.01, 1_000_000, seed + 1),
        (0.03, 1_000_000, seed + 2),
    ]
}

/// [`check_fpr`] at each `(target, probes, seed)` of `targets`, every filter from
/// `make(n, target)`: the reports in the order of `targets`.
pub fn check_fpr_at<F: Filter>(
    make: impl Fn(u64, f64) -> F,
    n: u64,
    targets: &[(f64, u64, u64)],
) -> Vec<FprReport> {
    targets
        .iter()
        .map(|&(p, probes, seed)| check_fpr(&make, n, p, probes, seed))
        .collect()
}

/// The tests every variant with a `with_fpr(n, p)` constructor shares, and the helper its own
/// tests use: `filled(n, p, seed)`, a filter from `with_fpr(n, p)` holding `n` seeded member
/// keys ([`filled`]), and the test `no_false_negatives_for_every_key_shape`
/// ([`check_no_false_negatives`], 10^5 keys of every shape at a 1 % target).
#[macro_export]
macro_rules! basic_suite {
    ($ty:ty) => {
        #[allow(dead_code)]
        fn filled(n: u64, p: f64, seed: u64) -> $ty {
            $crate::filled(<$ty>::with_fpr(n, p).unwrap(), n, seed)
        }

        #[test]
        fn no_false_negatives_for_every_key_shape() {
            $crate::check_no_false_negatives(|n| <$ty>::with_fpr(n, 0.01).unwrap(), 100_000);
        }
    };
}

/// The paired comparison of two probe counts `k` and `other` on the same keys and probes; see
/// [`compare_k`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct KComparison {
    /// The `k` under test.
    pub k: u32,
    /// The neighbour it is compared with.
    pub other: u32,
    /// Non-member probes (the same keys for both filters).
    pub probes: u64,
    /// Probes positive with `k`.
    pub positives: u64,
    /// Probes positive with `other`.
    pub other_positives: u64,
    /// Probes positive with `k` and negative with `other`.
    pub only_k: u64,
    /// Probes positive with `other` and negative with `k`.
    pub only_other: u64,
    /// `(only_k − only_other) / √(only_k + only_other)`: how many standard deviations `k` has
    /// more positives than `other` (McNemar's statistic, signed).
    pub z: f64,
}

impl KComparison {
    /// `k` has significantly more false positives than `other` (`z > Z_BOUND`).
    pub fn k_is_worse(&self) -> bool {
        self.z > Z_BOUND
    }
}

/// Compare `k` with each of `others` on one set of members and one set of probes: build a filter
/// with `make(j)` for every `j`, insert the same `n` seeded members into each, ask each the same
/// `probes` non-members, and count the discordant answers.
///
/// Why paired: the counts for `k` and `k ± 1` come from the same keys, the same hash and (with
/// Kirsch–Mitzenmacher probes) nested probe positions, so they are strongly correlated; treating
/// them as independent (σ = √(c₁ + c₂)) overstates the noise. Conditioned on the `D` probes where
/// the two filters disagree, `only_k` is Binomial(D, ½) when both have the same FPR, so
/// `only_k − only_other` has standard deviation √D (McNemar 1947). `D` is well below `c₁ + c₂`
/// (measured ≈ 0.9·c for classic `k = 7` vs 8 at 1 %), and the test resolves FPR differences of
/// a few percent where the unpaired one cannot; see [`paired_probes_needed`].
pub fn compare_k<F: Filter>(
    make: impl Fn(u32) -> F,
    k: u32,
    others: &[u32],
    n: u64,
    probes: u64,
    seed: u64,
) -> Vec<KComparison> {
    let build = |j: u32| filled(make(j), n, seed);
    let main = build(k);
    let rivals: Vec<F> = others.iter().map(|&j| build(j)).collect();
    let mut counts = vec![(0u64, 0u64, 0u64); others.len()]; // (other positives, only k, only other)
    let mut positives = 0u64;
    // Probes come from a stream separate from the members (non_member_key has its own tag).
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x6b6f_7074);
    for _ in 0..probes {
        let key = non_member_key(&mut rng);
        let a = main.might_contain_bytes(&key);
        positives += u64::from(a);
        for (f, c) in rivals.iter().zip(counts.iter_mut()) {
            let b = f.might_contain_bytes(&key);
            c.0 += u64::from(b);
            c.1 += u64::from(a && !b);
            c.2 += u64::from(b && !a);
        }
    }
    others
        .iter()
        .zip(counts)
        .map(|(&other, (other_positives, only_k, only_other))| {
            let d = (only_k + only_other) as f64;
            let z = if d == 0.0 {
                0.0
            } else {
                (only_k as f64 - only_other as f64) / d.sqrt()
            };
            KComparison {
                k,
                other,
                probes,
                positives,
                other_positives,
                only_k,
                only_other,
                z,
            }
        })
        .collect()
}

/// Require that the `k` a variant's sizing picks is no worse than `k − 1` and `k + 1` on the same
/// table size: the paired comparison [`compare_k`] must not find `k` worse than either by more
/// than [`Z_BOUND`] standard deviations. Returns both comparisons.
///
/// With enough probes ([`paired_probes_needed`]) this rejects an off-by-one `k` whenever the
/// formula says it costs a few percent more FPR (shown by the classic crate's tests).
pub fn check_k_is_locally_optimal<F: Filter>(
    make: impl Fn(u32) -> F,
    k: u32,
    n: u64,
    probes: u64,
    seed: u64,
) -> Vec<KComparison> {
    let results = compare_k(make, k, &[k - 1, k + 1], n, probes, seed);
    for r in &results {
        assert!(
            !r.k_is_worse(),
            "k = {k} has significantly more false positives than k = {}: {r:?}",
            r.other
        );
    }
    results
}

/// Probes a paired comparison needs to reject, with margin, a `k` whose FPR `p_worse` exceeds
/// its neighbour's `p_better`: the expected excess `N·(p_worse − p_better)` must reach
/// `(Z_BOUND + 2)·√D`, with the discordant count bounded by `D ≤ N·(p_worse + p_better)` (the
/// independent case; the real `D` is smaller, so this is conservative). At `p ≈ 1 %` a 5 %
/// difference needs ≈ 4·10^6 probes, a 3 % one ≈ 1.1·10^7.
pub fn paired_probes_needed(p_better: f64, p_worse: f64) -> u64 {
    let margin = Z_BOUND + 2.0;
    (margin * margin * (p_worse + p_better) / (p_worse - p_better).powi(2)).ceil() as u64
}

/// Standard deviation of a Binomial(`trials`, `p`) count: `√(trials·p·(1 − p))`.
pub fn binomial_sigma(trials: u64, p: f64) -> f64 {
    (trials as f64 * p * (1.0 - p)).sqrt()
}

/// Upper [`Z_BOUND`] bound of a Poisson count with mean `mean`, for rare events:
/// `mean + Z·√mean + 1` (the `+ 1` keeps the bound meaningful when `mean` is near zero, where
/// the normal approximation under-covers).
pub fn poisson_upper(mean: f64) -> f64 {
    mean + Z_BOUND * mean.sqrt() + 1.0
}

/// Standard deviation of the number of non-empty bins when `balls` balls fall uniformly into
/// `bins` bins (the set bits of a Bloom filter after `balls = k·n` probes):
/// `√(m·e^(−λ)·(1 − (1 + λ)·e^(−λ)))` with `λ = balls/m` (the occupancy variance to first order;
/// Kolchin, Sevast'yanov & Chistyakov, "Random Allocations", 1978).
pub fn occupancy_sigma(bins: u64, balls: f64) -> f64 {
    let m = bins as f64;
    let lambda = balls / m;
    let e = (-lambda).exp();
    (m * e * (1.0 - (1.0 + lambda) * e)).max(0.0).sqrt()
}

/// xxh3-64 (seed 0) of `bytes`: the digest known-answer vectors pin for encodings too long to
/// write out in hex.
pub fn digest(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// The random `u64` keys and query streams the speed examples share, so that every example
/// measures the same kind of stream and the generator is written once.
pub mod stream {
    /// SplitMix64 (Steele, Lea & Flood 2014, the seeding generator of xoshiro): advance
    /// `state` by the golden-ratio increment and return its finalised value. Deterministic for
    /// a seed, so an example's keys are the same in every process.
    pub fn splitmix64(state: &mut u64) -> u64 {
        *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = *state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// `count` queries, the even-numbered ones members drawn from `keys` (non-empty) and the
    /// odd-numbered ones fresh random values (each a key with probability `n`·2^-64), each
    /// from the next value of `state`: exactly half members in every even-length run.
    pub fn half_members(keys: &[u64], count: usize, state: &mut u64) -> Vec<u64> {
        let n = keys.len() as u64;
        (0..count)
            .map(|i| {
                let r = splitmix64(state);
                if i % 2 == 0 {
                    keys[(r % n) as usize]
                } else {
                    r
                }
            })
            .collect()
    }
}

/// The keys every variant's known-answer vectors are written for, in one place so the
/// vectors of different variants speak of the same keys.
pub mod kat {
    /// `prefix0 … prefix{n−1}`: members (`k…`) and non-members (`n…`) of the small literal filters.
    pub fn keys(prefix: &str, n: usize) -> Vec<String> {
        (0..n).map(|i| format!("{prefix}{i}")).collect()
    }

    /// Five keys of the lengths a hash treats differently: empty, 1 byte, 7 bytes, 8 bytes (a
    /// `u64`, little-endian) and 1 KiB.
    pub fn probe_keys() -> Vec<Vec<u8>> {
        vec![
            b"".to_vec(),
            b"a".to_vec(),
            b"user:42".to_vec(),
            42u64.to_le_bytes().to_vec(),
            (0..1024u32).map(|i| i as u8).collect(),
        ]
    }

    /// The slots the five [`probe_keys`] take in a table of 1000 slots with k = 7 under the
    /// xxh3 scheme, sorted: the classic filter's bits and the counting filter's counters
    /// follow the same pinned rule, so both pin these.
    pub const POSITIONS_1000_K7: [[u64; 7]; 5] = [
        [238, 285, 331, 603, 649, 920, 967],
        [41, 202, 363, 481, 642, 761, 922],
        [95, 111, 127, 143, 603, 619, 635],
        [38, 156, 318, 435, 597, 759, 876],
        [83, 314, 339, 570, 596, 827, 852],
    ];

    /// The filter `made` holding the integers `0..10_000` (each as its 8 little-endian bytes,
    /// inserted through [`Filter`](super::Filter)), encoded with `to_bytes`: its length and digest are
    /// `(name, len, digest)` ([`check_known_answer`](crate::check_known_answer)).
    pub fn check_ten_thousand<F: super::Filter>(
        made: Result<F, super::Error>,
        to_bytes: fn(&F) -> Vec<u8>,
        (name, len, digest): (&str, usize, u64),
    ) {
        let mut f = made.expect("a filter for 10^4 keys");
        for i in 0..10_000u64 {
            f.insert_bytes(&i.to_le_bytes()).expect("insert");
        }
        crate::check_known_answer(name, &to_bytes(&f), len, digest);
    }

    /// Indices `i` of the non-members `n0 … n{count−1}` for which `maybe` answers true.
    pub fn positives_among(maybe: impl Fn(&str) -> bool, count: usize) -> Vec<usize> {
        keys("n", count)
            .iter()
            .enumerate()
            .filter(|(_, k)| maybe(k))
            .map(|(i, _)| i)
            .collect()
    }

    /// [`positives_among`] the 256 non-members `n0 … n255`.
    pub fn positives(maybe: impl Fn(&str) -> bool) -> Vec<usize> {
        positives_among(maybe, 256)
    }

    /// A literal filter read back, through each of `readers` (a decoded filter, a view of the
    /// same bytes): every member `k0 … k{members−1}` answers "maybe", and the non-members
    /// among `n0 … n255` that do are exactly `want`.
    pub fn check_answers(readers: &[&dyn Fn(&str) -> bool], members: usize, want: &[usize]) {
        for (i, maybe) in readers.iter().enumerate() {
            for k in keys("k", members) {
                assert!(maybe(&k), "reader {i}: member {k} answered no");
            }
            assert_eq!(
                positives(maybe),
                want,
                "reader {i}: the non-members' answers"
            );
        }
    }
}

/// Lower-case hex of `bytes` (to print a vector once, when it is first written).
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Decode a hex literal (whitespace ignored). Panics on malformed input: it is only ever given
/// literals written in tests.
pub fn from_hex(hex: &str) -> Vec<u8> {
    let digits: Vec<u8> = hex
        .bytes()
        .filter(|c| !c.is_ascii_whitespace())
        .map(|c| match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => panic!("not a hex digit: {:?}", c as char),
        })
        .collect();
    assert!(digits.len().is_multiple_of(2), "odd number of hex digits");
    digits.chunks_exact(2).map(|p| p[0] << 4 | p[1]).collect()
}

/// Require that `bytes` has exactly `len` bytes and [`digest`] `want`; on a mismatch the
/// message prints what was found (and the hex, for short encodings) so a deliberate format
/// change can update the literal — together with the format version.
pub fn check_known_answer(name: &str, bytes: &[u8], len: usize, want: u64) {
    let got = digest(bytes);
    let shown = if bytes.len() <= 512 {
        to_hex(bytes)
    } else {
        format!("{} bytes", bytes.len())
    };
    assert!(
        bytes.len() == len && got == want,
        "{name}: the encoding changed (length {} want {len}, digest {got:#018x} want {want:#018x}); \
         a format change needs a new format version. Bytes: {shown}",
        bytes.len()
    );
}

/// `decode` refuses `bytes` (a valid checked encoding) once its scheme byte claims the keyed
/// SipHash scheme (resealed, so the refusal is `SchemeMismatch`, not a checksum error),
/// refuses `other_variant` (another variant's checked encoding) with `WrongVariant` when
/// given, and refuses the empty input.
pub fn check_scheme_and_foreign_refused<F>(
    bytes: &[u8],
    decode: impl Fn(&[u8]) -> Result<F, Error>,
    other_variant: Option<&[u8]>,
) {
    use bloomlab_core::DecodeError;
    let mut keyed = bytes.to_vec();
    keyed[7] = 2; // claim the keyed SipHash scheme
    format::reseal(&mut keyed);
    assert!(matches!(
        decode(&keyed),
        Err(Error::Decode(DecodeError::SchemeMismatch { .. }))
    ));
    if let Some(other) = other_variant {
        assert!(matches!(
            decode(other),
            Err(Error::Decode(DecodeError::WrongVariant { .. }))
        ));
    }
    assert!(decode(b"").is_err());
}

/// Encode, decode, and require an equal filter that answers the same on members and
/// non-members.
pub fn check_bytes_round_trip<F: Filter + PartialEq + Debug>(
    f: &F,
    encode: impl Fn(&F) -> Vec<u8>,
    decode: impl Fn(&[u8]) -> Result<F, Error>,
) {
    let bytes = encode(f);
    let back = decode(&bytes).expect("round trip decodes");
    assert_eq!(&back, f);
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for _ in 0..10_000 {
        let k = non_member_key(&mut rng);
        assert_eq!(back.might_contain_bytes(&k), f.might_contain_bytes(&k));
    }
    assert_eq!(encode(&back), bytes, "encoding is canonical");
}

/// Serialize to JSON and back; require equality.
pub fn check_serde_round_trip<F: Serialize + DeserializeOwned + PartialEq + Debug>(f: &F) {
    let json = serde_json::to_string(f).expect("serializes");
    let back: F = serde_json::from_str(&json).expect("deserializes");
    assert_eq!(&back, f);
}

/// Feed `rounds` damaged versions of `valid` (a real encoding) and random buffers to
/// `decode`. Nothing may panic; any input that decodes must re-encode to exactly the same bytes
/// (so it is a canonical, fully validated filter) and pass `invariants`.
///
/// When `envelope` is true the inputs are also re-sealed (length and checksum recomputed) so
/// damage reaches the variant's own payload validation rather than stopping at the checksum.
/// Returns how many damaged inputs were accepted (each one verified canonical).
pub fn check_decode_robustness<F>(
    valid: &[u8],
    decode: impl Fn(&[u8]) -> Result<F, Error>,
    encode: impl Fn(&F) -> Vec<u8>,
    invariants: impl Fn(&F),
    envelope: bool,
    rounds: usize,
    seed: u64,
) -> usize {
    assert!(decode(valid).is_ok(), "the valid encoding must decode");
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut accepted = 0;
    let mut try_one = |input: &[u8]| {
        if let Ok(f) = decode(input) {
            assert_eq!(encode(&f), input, "accepted a non-canonical encoding");
            invariants(&f);
            accepted += 1;
        }
    };
    for round in 0..rounds {
        let mut b = valid.to_vec();
        match round % 6 {
            // Flip 1–4 random bits anywhere.
            0 => {
                for _ in 0..rng.random_range(1..=4) {
                    let i = rng.random_range(0..b.len());
                    b[i] ^= 1 << rng.random_range(0..8);
                }
            }
            // Overwrite a header/metadata byte (first 80 bytes) with a random value.
            1 => {
                let i = rng.random_range(0..b.len().min(80));
                b[i] = rng.random();
            }
            // Truncate.
            2 => b.truncate(rng.random_range(0..b.len())),
            // Extend with random bytes.
            3 => {
                for _ in 0..rng.random_range(1..64) {
                    b.push(rng.random());
                }
            }
            // Set a random byte to 0xff (e.g. tail bits, counts, lengths).
            4 => {
                let i = rng.random_range(0..b.len());
                b[i] = 0xff;
            }
            // Completely random buffer of random length.
            _ => {
                let len = rng.random_range(0..valid.len() * 2 + 2);
                b = (0..len).map(|_| rng.random()).collect();
                if envelope && len >= 8 && rng.random_bool(0.5) {
                    // Give half of them a valid-looking start so they get past the magic.
                    b[..8].copy_from_slice(&valid[..8]);
                }
            }
        }
        try_one(&b);
        if envelope && format::reseal(&mut b) {
            try_one(&b);
        }
    }
    accepted
}

/// The suite every variant with a fallible `make(n, p)` shares: no false negatives for
/// every key shape ([`check_no_false_negatives`], 10^5 keys at 1 %), the FPR within the
/// binomial bound at 0.1 %, 1 % and 3 % ([`check_fpr`], 10^5 keys, 10^6 probes, one seed
/// each from `seeds`), and every invalid parameter a typed error
/// ([`check_invalid_parameters`]).
pub fn check_standard_suite<F: Filter + Debug>(
    make: impl Fn(u64, f64) -> Result<F, Error>,
    seeds: [u64; 3],
) {
    check_no_false_negatives(|n| make(n, 0.01).unwrap(), 100_000);
    for (p, seed) in [0.001, 0.01, 0.03].into_iter().zip(seeds) {
        let r = check_fpr(|n, p| make(n, p).unwrap(), 100_000, p, 1_000_000, seed);
        println!("{r:?}");
    }
    check_invalid_parameters(make);
}

/// The three targets most variants are checked at, `(target, probes, seed)`: 0.1 %, 1 % and
/// 3 %, 10^6 probes each.
pub const STANDARD_TARGETS: [(f64, u64, u64); 3] = [
    (0.001, 1_000_000, 11),
    (0.01, 1_000_000, 12),
    (0.03, 1_000_000, 13),
];

/// [`check_fpr_at`] the [`STANDARD_TARGETS`] with `n` items, requiring besides that the
/// formula's value lie within `rel` (relative) of each target: a property of the sizing.
pub fn check_fpr_near_targets<F: Filter>(
    make: impl Fn(u64, f64) -> F,
    n: u64,
    rel: f64,
) -> Vec<FprReport> {
    let reports = check_fpr_at(make, n, &STANDARD_TARGETS);
    for r in &reports {
        assert!((r.expected / r.target - 1.0).abs() < rel, "{r:?}");
        println!("{r:?}");
    }
    reports
}

/// A constructor from a size and a probe count (`with_bits`, `with_blocks`, `with_counters`)
/// must refuse each `(size, hashes)` of `invalid` with an error, and a size of `u64::MAX`
/// (with `hashes`) with [`Error::SizeOverflow`].
pub fn check_shape_errors<F: Debug>(
    make: impl Fn(u64, u32) -> Result<F, Error>,
    invalid: &[(u64, u32)],
    hashes: u32,
) {
    for &(size, k) in invalid {
        assert!(make(size, k).is_err(), "({size}, {k}) must be refused");
    }
    assert!(
        matches!(make(u64::MAX, hashes), Err(Error::SizeOverflow(_))),
        "a size of u64::MAX must be Error::SizeOverflow"
    );
}

/// Every invalid parameter must be a typed error: `n = 0`, `p` of 0, 1, negative, above 1,
/// NaN and ±∞, and a size that overflows.
pub fn check_invalid_parameters<F: Debug>(make: impl Fn(u64, f64) -> Result<F, Error>) {
    assert!(
        matches!(make(0, 0.01), Err(Error::ZeroItems)),
        "n = 0 must be Error::ZeroItems"
    );
    for p in [
        0.0,
        1.0,
        -0.01,
        1.5,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        -0.0,
    ] {
        assert!(
            matches!(make(1000, p), Err(Error::InvalidFpr(_))),
            "p = {p} must be Error::InvalidFpr"
        );
    }
    for (n, p) in [(u64::MAX, 1e-9), (u64::MAX / 2, 0.5), (1 << 62, 1e-300)] {
        let r = make(n, p);
        assert!(
            matches!(r, Err(Error::SizeOverflow(_))),
            "n = {n}, p = {p} must be Error::SizeOverflow, got {r:?}"
        );
    }
}

/// A batched lookup answers as single lookups: every third of `members` (all inserted) and
/// 20 000 random keys (seeded by `seed`) through `single` and through `batch`, whose output
/// slots are pre-filled with the wrong answers so that a slot it forgets to write fails; and
/// every queried member says yes, so the comparison is not vacuous.
pub fn check_batch_agrees(
    members: &[u64],
    seed: u64,
    single: impl Fn(&u64) -> bool,
    batch: impl Fn(&[u64], &mut [bool]),
) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let queries: Vec<u64> = members
        .iter()
        .step_by(3)
        .copied()
        .chain((0..20_000).map(|_| rng.random()))
        .collect();
    let want: Vec<bool> = queries.iter().map(&single).collect();
    let mut got: Vec<bool> = want.iter().map(|b| !b).collect();
    batch(&queries, &mut got);
    assert_eq!(got, want);
    let asked = members.len().div_ceil(3);
    assert!(want[..asked].iter().all(|&b| b), "a member said no");
}

/// [`check_bytes_round_trip`] and [`check_serde_round_trip`] of one filter.
pub fn check_round_trips<F>(
    f: &F,
    encode: impl Fn(&F) -> Vec<u8>,
    decode: impl Fn(&[u8]) -> Result<F, Error>,
) where
    F: Filter + PartialEq + Debug + Serialize + DeserializeOwned,
{
    check_bytes_round_trip(f, encode, decode);
    check_serde_round_trip(f);
}

/// A filter on a keyed scheme (`keyed(secret)`), built by `make` and filled with the integers
/// `0..n`: it finds them all, and its encoding (`codec.0`) decodes to an equal filter under
/// the same secret (`codec.1`) but is refused under another secret and by the default
/// scheme's decoder (`codec.2`). Returns the filter for the variant's own checks.
pub fn check_keyed_round_trip<F: Filter + PartialEq + Debug, S, G>(
    keyed: impl Fn([u8; 16]) -> S,
    make: impl Fn(S) -> F,
    n: u64,
    (encode, decode_with, decode): (
        impl Fn(&F) -> Vec<u8>,
        impl Fn(&[u8], S) -> Result<F, Error>,
        impl Fn(&[u8]) -> Result<G, Error>,
    ),
) -> F {
    let mut f = make(keyed(*b"sixteen byte key"));
    insert_all(&mut f, 0..n);
    let dyn_f: &dyn Filter = &f;
    assert!((0..n).all(|i| dyn_f.might_contain(&i)), "a member said no");
    let bytes = encode(&f);
    let back = decode_with(&bytes, keyed(*b"sixteen byte key")).expect("decodes");
    assert_eq!(back, f);
    assert!(
        decode_with(&bytes, keyed(*b"another 16b key!")).is_err(),
        "another secret"
    );
    assert!(decode(&bytes).is_err(), "the default scheme");
    f
}

/// [`check_keyed_round_trip`] of the variant `$F` (its type's name, in scope) on the keyed
/// scheme `$scheme` (a type with `from_secret([u8; 16])`): `$make` builds the filter from a
/// scheme, the integers `0..$n` go in, and the codec is the variant's own `to_bytes`,
/// `from_bytes_with_scheme` and (the default scheme's) `from_bytes`. Returns the filter.
#[macro_export]
macro_rules! check_keyed_round_trip_of {
    ($F:ident, $scheme:ty, $make:expr, $n:expr) => {
        $crate::check_keyed_round_trip(
            <$scheme>::from_secret,
            $make,
            $n,
            ($F::to_bytes, $F::from_bytes_with_scheme, $F::from_bytes),
        )
    };
}

/// A filter used only through `dyn Filter`: three string keys and three integers go in, one
/// of each is found, and it counts six. Returns the box for the variant's own checks.
pub fn check_behind_dyn(mut boxed: Box<dyn Filter>) -> Box<dyn Filter> {
    insert_all(boxed.as_mut(), ["a", "b", "c"]);
    insert_all(boxed.as_mut(), [1u64, 2, 3]);
    assert!(boxed.might_contain("b") && boxed.might_contain(&2u64));
    assert_eq!(boxed.len(), 6);
    boxed
}

/// A removable filter used only through `dyn RemovableFilter`: three keys go in, one is found
/// and removed, a key never inserted is not removed, two remain, and its parameters name
/// `variant`. Returns the box for the variant's own checks.
pub fn check_behind_dyn_removable(
    mut boxed: Box<dyn bloomlab_core::RemovableFilter>,
    variant: bloomlab_core::Variant,
) -> Box<dyn bloomlab_core::RemovableFilter> {
    for k in ["a", "b", "c"] {
        boxed.insert_bytes(k.as_bytes()).expect("insert");
    }
    assert!(boxed.might_contain_bytes(b"b"));
    assert!(boxed.remove_bytes(b"b"));
    assert!(!boxed.remove_bytes(b"never inserted"));
    assert_eq!(boxed.len(), 2);
    assert_eq!(boxed.params().variant, variant);
    boxed
}

/// Convenience: feed typed keys through the object-safe trait (used by tests of `dyn Filter`).
pub fn insert_all<K: Key>(f: &mut dyn Filter, keys: impl IntoIterator<Item = K>) {
    for k in keys {
        f.insert(&k).expect("insert");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_matches_its_published_first_outputs() {
        // The reference implementation's first outputs from seed 0 (Vigna's splitmix64.c).
        let mut s = 0;
        assert_eq!(stream::splitmix64(&mut s), 0xE220_A839_7B1D_CDAF);
        assert_eq!(stream::splitmix64(&mut s), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn half_members_alternates_members_and_fresh_values() {
        let mut s = 7;
        let keys: Vec<u64> = (0..1000).map(|_| stream::splitmix64(&mut s)).collect();
        let set: std::collections::HashSet<u64> = keys.iter().copied().collect();
        let (mut a, mut b) = (s, s);
        let q = stream::half_members(&keys, 10_000, &mut a);
        assert_eq!(
            q,
            stream::half_members(&keys, 10_000, &mut b),
            "deterministic"
        );
        for (i, x) in q.iter().enumerate() {
            assert_eq!(set.contains(x), i % 2 == 0, "query {i}");
        }
    }

    #[test]
    fn tiny_keys_are_distinct_and_short() {
        let keys = KeyShape::Tiny.keys(70_000, 0);
        assert_eq!(keys[0], Vec::<u8>::new());
        assert_eq!(keys[1], vec![0]);
        assert_eq!(keys[256], vec![255]);
        assert_eq!(keys[257], vec![0, 0]);
        assert!(keys.iter().all(|k| k.len() <= 3));
        let set: std::collections::HashSet<_> = keys.iter().collect();
        assert_eq!(set.len(), keys.len());
    }

    #[test]
    fn hex_round_trips_and_digest_is_xxh3_64() {
        let bytes: Vec<u8> = (0..=255).collect();
        assert_eq!(from_hex(&to_hex(&bytes)), bytes);
        assert_eq!(from_hex("0aFf 10\n01"), [0x0a, 0xff, 0x10, 0x01]);
        // xxh3-64 of the empty input with seed 0 (the xxHash reference value).
        assert_eq!(digest(b""), 0x2d06_8005_38d3_94c2);
        check_known_answer("empty", b"", 0, 0x2d06_8005_38d3_94c2);
        assert!(std::panic::catch_unwind(|| check_known_answer("x", b"x", 1, 0)).is_err());
    }

    #[test]
    fn bounds_follow_their_formulas() {
        assert_eq!(binomial_sigma(1_000_000, 0.01), (9_900.0f64).sqrt());
        assert_eq!(poisson_upper(100.0), 100.0 + 5.0 * 10.0 + 1.0);
        // 5 % more FPR at 1 %: (7² · 0.0205) / 0.0005² = 4 018 000 probes.
        assert_eq!(paired_probes_needed(0.01, 0.0105), 4_018_000);
        // Occupancy: one ball in a huge table sets one bit with certainty (σ → 0); at λ = 1
        // the variance is m·e^−1·(1 − 2e^−1).
        assert!(occupancy_sigma(1 << 40, 1.0) < 1e-3);
        let m = 1_000_000u64;
        let want = (m as f64 * (-1f64).exp() * (1.0 - 2.0 * (-1f64).exp())).sqrt();
        assert!((occupancy_sigma(m, m as f64) - want).abs() < 1e-9);
    }

    #[test]
    fn shapes_are_deterministic_and_distinct() {
        for shape in KeyShape::ALL {
            let a = shape.keys(1000, 1);
            assert_eq!(a, shape.keys(1000, 1));
            let set: std::collections::HashSet<_> = a.iter().collect();
            assert_eq!(set.len(), 1000, "{shape:?}");
        }
        assert_eq!(KeyShape::Large.keys(1, 1)[0].len(), 1024);
    }
}

/// The threads that hashed a set of [`TracedKey`]s: what a parallel build's tests compare
/// with the build's own [`ParallelReport`](bloomlab_parallel::ParallelReport), so that a
/// build that silently ran on one thread fails even if its report said otherwise.
#[derive(Debug)]
pub struct ThreadsSeen {
    /// Tells this set from any earlier one at the same address (see [`TracedKey`]).
    id: u64,
    threads: std::sync::Mutex<Vec<std::thread::ThreadId>>,
}

impl Default for ThreadsSeen {
    fn default() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        ThreadsSeen {
            id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            threads: std::sync::Mutex::new(Vec::new()),
        }
    }
}

impl ThreadsSeen {
    /// `keys` as keys that note here the threads hashing them.
    pub fn keys(&self, keys: &[u64]) -> Vec<TracedKey<'_>> {
        keys.iter()
            .map(|&key| TracedKey { key, seen: self })
            .collect()
    }

    /// How many distinct threads hashed one of the keys.
    pub fn count(&self) -> usize {
        self.threads.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    fn note(&self) {
        std::thread_local! {
            /// The set this thread last noted itself in, so each key costs no lock.
            static NOTED: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
        }
        if NOTED.get() != Some(self.id) {
            let me = std::thread::current().id();
            let mut t = self.threads.lock().unwrap_or_else(|e| e.into_inner());
            if !t.contains(&me) {
                t.push(me);
            }
            NOTED.set(Some(self.id));
        }
    }
}

/// A `u64` key, encoded as the integer's own [`Key`] encoding (8 bytes, little-endian), that
/// notes in its [`ThreadsSeen`] every thread that hashes it.
#[derive(Debug, Clone, Copy)]
pub struct TracedKey<'a> {
    key: u64,
    seen: &'a ThreadsSeen,
}

impl Key for TracedKey<'_> {
    fn with_key_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        self.seen.note();
        self.key.with_key_bytes(f)
    }
}

/// A parallel build of `keys` keys that was asked for `threads` threads: the keys were hashed
/// on exactly that many threads (`seen`, watched from outside the build), and its report says
/// the same and accounts for every key. `exchange_bound`: for builds that hand work between
/// threads, the documented bound on each inbox, which the report must state and keep; `None`
/// for builds that exchange nothing (their report counts no batches).
pub fn check_parallel_report(
    report: &bloomlab_parallel::ParallelReport,
    seen: &ThreadsSeen,
    threads: usize,
    keys: usize,
    exchange_bound: Option<usize>,
) {
    assert_eq!(seen.count(), threads, "{report:?}");
    assert_eq!(report.threads, threads, "{report:?}");
    assert_eq!(report.keys_per_thread.len(), threads, "{report:?}");
    assert_eq!(
        report.keys_per_thread.iter().sum::<usize>(),
        keys,
        "{report:?}"
    );
    match exchange_bound {
        Some(bound) => {
            assert!(report.batches_exchanged > 0, "{report:?}");
            assert_eq!(report.max_queued, bound, "{report:?}");
            assert!(report.peak_queued <= bound, "{report:?}");
        }
        None => assert_eq!(
            (report.batches_exchanged, report.peak_queued),
            (0, 0),
            "{report:?}"
        ),
    }
}
