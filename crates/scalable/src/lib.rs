//! A scalable Bloom filter (Almeida, Baquero, Preguiça, Hutchison 2007, "Scalable Bloom
//! Filters"): a chain of classic Bloom filters ("stages") that grows when the newest stage
//! fills, with FPRs that tighten geometrically so the compound FPR stays below the target
//! however far the chain grows.
//!
//! # Design
//!
//! - Stage `i` (0-based) holds `n0·s^i` items at FPR `p_i = p0·r^i` with `p0 = p·(1 − r)`
//!   ([`math::scalable_stage_fpr`]), so `Σ p_i = p` and the compound FPR
//!   `1 − Π(1 − p_i)` ([`math::compound_fpr`]) is below `p` for any number of stages.
//!   Defaults follow seed 000's extension exercise 2: growth `s = 2`, tightening `r = 0.5`.
//! - Each stage ([`Stage`]) has `k_i = ceil(log2(1/p_i))` probes and `k_i` partitions of
//!   `ceil(n_i / ln 2)` bits, one probe per partition (the partitioned filter of Almeida et
//!   al., whose FPR math this is), each probe value remixed ([`ProbeRule::Partitioned`]):
//!   after `n_i` inserts the expected fill is 1/2, and a stage whose bits are at most half
//!   set answers a non-member "maybe" with probability `Π fill_j ≤ (fill)^k ≤ 2^(−k_i) ≤ p_i`.
//!   Version 1 of the format probed the whole stage with plain double hashing
//!   ([`ProbeRule::Whole`]); its probes were correlated in small stages (see [`Stage`]) and it
//!   is still read.
//! - **Growth**: a new stage is added before an insert when the newest stage's fill ratio has
//!   passed 1/2. The fill is tracked incrementally (each insert counts the bits it newly
//!   sets), never recounted per insert. Stage capacities that would overflow, or stage FPRs
//!   that would need more than 64 probes, are typed errors and the insert changes nothing.
//! - A key is **hashed once**; every stage is probed with the same [`KeyHash`], newest stage
//!   first (recent keys answer after one stage).
//! - Rounding `k` up costs space: bits/item of a stage is `k_i/ln 2 = 1.44·ceil(log2(1/p_i))`
//!   rather than `1.44·log2(1/p_i)`; across the chain the filter pays for the tighter
//!   stage FPRs too. [`bits_per_item`](bloomlab_core::Filter::bits_per_item) reports what it costs.
//!
//! # Example
//!
//! ```
//! use bloomlab_scalable::{ScalableBloomFilter, ScalableConfig};
//!
//! // Start small, grow 100× past the initial capacity.
//! let mut f = ScalableBloomFilter::with_fpr(1_000, 0.01)?;
//! for i in 0..100_000u64 {
//!     f.insert(&i)?;
//! }
//! assert_eq!(f.stages(), 7); // 1000·(1 + 2 + … + 64) = 127 000 ≥ 100 000
//! assert!((0..100_000u64).all(|i| f.might_contain(&i)));
//! // The compound formula is below the target, and so is the measured rate (5σ bound).
//! assert!(f.expected_fpr() <= 0.01);
//! let probes = 200_000u64;
//! let fp = (1u64 << 40..(1u64 << 40) + probes).filter(|i| f.might_contain(i)).count() as f64;
//! let e = f.expected_fpr();
//! let sigma = (probes as f64 * e * (1.0 - e)).sqrt();
//! assert!((fp - probes as f64 * e).abs() < 5.0 * sigma, "{fp} vs {e}");
//! assert!(fp <= probes as f64 * 0.01);
//!
//! // Growth and tightening are configurable and validated.
//! assert!(ScalableBloomFilter::with_config(ScalableConfig::new(1_000, 0.01).tightening(1.0)).is_err());
//! let g = ScalableBloomFilter::with_config(ScalableConfig::new(1_000, 0.01).growth(4).tightening(0.85))?;
//! assert_eq!(g.config().growth, 4);
//! # Ok::<(), bloomlab_core::Error>(())
//! ```
//!
//! # no_std
//!
//! Without its default `std` feature the crate is `#![no_std]` and needs only `alloc`, with nothing
//! left out; the `f64` functions of the sizing formulas then come from `libm`
//! (`bloomlab_core::math::float` says how that can differ).
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

extern crate alloc;

pub mod math;

use alloc::{format, string::ToString, vec::Vec};
#[cfg(not(feature = "std"))]
use bloomlab_core::math::float::FloatMath as _;
use core::fmt;

use bloomlab_core::bits::BitArray;
use bloomlab_core::error::{DecodeError, Error, Result};
use bloomlab_core::format::{self, EnvelopeWriter, Reader, Variant};
use bloomlab_core::hash::{HashScheme, KeyHash, Xxh3Scheme, fastrange};
use bloomlab_core::meta::{FilterCore, FilterMeta, MetaView};
use bloomlab_core::{Key, filter_glue};

/// Default growth factor `s` (stage `i` holds `n0·s^i` items).
pub const DEFAULT_GROWTH: u32 = 2;
/// Default tightening ratio `r` (stage `i` has FPR `p0·r^i`).
pub const DEFAULT_TIGHTENING: f64 = 0.5;
/// The newest stage is full once more than this fraction of its bits is set.
pub const FILL_THRESHOLD: f64 = 0.5;
/// Most stages a chain may have.
pub const MAX_STAGES: u32 = 64;

/// Probes per stage a lookup tests before it may stop early.
const EAGER_PROBES: usize = 2;

/// How a scalable filter starts and grows.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ScalableConfig {
    /// Capacity of stage 0, `n0 ≥ 1`.
    pub initial_capacity: u64,
    /// Target compound FPR `p` in (0, 1).
    pub target_fpr: f64,
    /// Growth factor `s ≥ 2`: stage `i` holds `n0·s^i` items.
    pub growth: u32,
    /// Tightening ratio `r` in (0, 1): stage `i` has FPR `p·(1 − r)·r^i`.
    pub tightening: f64,
}

impl ScalableConfig {
    /// `n0` and `p` with the default growth (2) and tightening (0.5).
    pub fn new(initial_capacity: u64, target_fpr: f64) -> Self {
        ScalableConfig {
            initial_capacity,
            target_fpr,
            growth: DEFAULT_GROWTH,
            tightening: DEFAULT_TIGHTENING,
        }
    }

    /// Set the growth factor `s`.
    pub fn growth(mut self, s: u32) -> Self {
        self.growth = s;
        self
    }

    /// Set the tightening ratio `r`.
    pub fn tightening(mut self, r: f64) -> Self {
        self.tightening = r;
        self
    }

    /// Check every field: `n0 ≥ 1`, `p` in (0, 1), `s ≥ 2`, `r` in (0, 1), and that stage 0
    /// can be sized.
    pub fn validate(&self) -> Result<()> {
        bloomlab_core::math::validate_items(self.initial_capacity)?;
        bloomlab_core::math::validate_fpr(self.target_fpr)?;
        if self.growth < 2 {
            return Err(Error::invalid(
                "growth",
                format!("must be at least 2 (got {})", self.growth),
            ));
        }
        let r = self.tightening;
        if !(r.is_finite() && r > 0.0 && r < 1.0) {
            return Err(Error::invalid(
                "tightening",
                format!("must be strictly between 0 and 1 (got {r})"),
            ));
        }
        self.stage_size(0).map(|_| ())
    }

    /// Capacity of stage `i`: `n0·s^i`, or an overflow error.
    pub fn stage_capacity(&self, i: u32) -> Result<u64> {
        u64::from(self.growth)
            .checked_pow(i)
            .and_then(|g| g.checked_mul(self.initial_capacity))
            .ok_or_else(|| {
                Error::SizeOverflow(format!(
                    "stage {i} capacity {}·{}^{i} overflows",
                    self.initial_capacity, self.growth
                ))
            })
    }

    /// FPR of stage `i`: `p·(1 − r)·r^i`.
    pub fn stage_fpr(&self, i: u32) -> f64 {
        math::scalable_stage_fpr(self.target_fpr, self.tightening, i)
    }

    /// `(m_i, k_i)` of stage `i` under the rule new chains use ([`ProbeRule::Partitioned`]).
    pub fn stage_size(&self, i: u32) -> Result<(u64, u32)> {
        self.stage_size_under(i, ProbeRule::Partitioned)
    }

    /// `(m_i, k_i)` of stage `i` under `rule`.
    pub fn stage_size_under(&self, i: u32, rule: ProbeRule) -> Result<(u64, u32)> {
        if i >= MAX_STAGES {
            return Err(Error::SizeOverflow(format!(
                "a chain has at most {MAX_STAGES} stages"
            )));
        }
        rule.stage_size(self.stage_capacity(i)?, self.stage_fpr(i))
    }
}

/// How a stage turns a [`KeyHash`] into its `k` probe positions: one rule per format version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProbeRule {
    /// Format version 1: `m_i = ceil(n_i·k_i / ln 2)` bits, probe `j` at
    /// `fastrange(h1 + j·h2, m_i)` anywhere in the stage. Still read, and a chain decoded
    /// from version 1 keeps this rule (and writes version 1) as it grows.
    Whole,
    /// Format version 2 (written by new chains): `k_i` partitions of `ceil(n_i / ln 2)` bits,
    /// probe `j` at `j·part + fastrange(fmix64(h1 + j·h2), part)` — one probe per partition
    /// (the partitioned filter of Almeida et al. 2007), each from a remixed probe value.
    Partitioned,
}

/// One probe rule as a type: its version, how it rounds a stage's size, where probe `j` lands.
/// One zero-sized type per [`ProbeRule`], picked once per stage operation by `by_rule!`, so a
/// stage's loop over its probes never re-decides the rule.
trait Rule {
    /// The rule this type is.
    #[allow(dead_code)] // read by the tests, which check each type against its name
    const RULE: ProbeRule;
    /// The envelope version that records it.
    const VERSION: u16;
    /// `(m, k)` of a stage of `items` items from the formula's `(m, k)`.
    fn round(items: u64, m: u64, k: u32) -> Result<(u64, u32)>;
    /// Bits per partition (`m / k`), or `m` for a rule without partitions.
    fn part_of(m: u64, k: u32) -> u64;
    /// Probe `j` of a key whose `j`-th double-hashing value is `g`.
    fn position(g: u64, j: u32, part: u64) -> u64;
}

/// Run `$body` with the type of `$rule`'s [`Rule`] bound to `$R`.
macro_rules! by_rule {
    ($rule:expr, $R:ident => $body:expr) => {
        match $rule {
            ProbeRule::Whole => {
                type $R = rules::Whole;
                $body
            }
            ProbeRule::Partitioned => {
                type $R = rules::Partitioned;
                $body
            }
        }
    };
}

mod rules {
    use super::*;

    /// [`ProbeRule::Whole`].
    pub(crate) struct Whole;
    /// [`ProbeRule::Partitioned`].
    pub(crate) struct Partitioned;

    impl Rule for Whole {
        const RULE: ProbeRule = ProbeRule::Whole;
        const VERSION: u16 = format::FORMAT_VERSION;
        fn round(_: u64, m: u64, k: u32) -> Result<(u64, u32)> {
            Ok((m, k))
        }
        fn part_of(m: u64, _: u32) -> u64 {
            m
        }
        #[inline(always)]
        fn position(g: u64, _: u32, part: u64) -> u64 {
            fastrange(g, part)
        }
    }

    impl Rule for Partitioned {
        const RULE: ProbeRule = ProbeRule::Partitioned;
        const VERSION: u16 = format::SCALABLE_PARTITIONED_VERSION;
        fn round(items: u64, m: u64, k: u32) -> Result<(u64, u32)> {
            // ceil(ceil(n·k/ln 2)/k) = ceil(n·k/ln 2 / k): k partitions of about n/ln 2 bits.
            m.div_ceil(u64::from(k))
                .checked_mul(u64::from(k))
                .map(|m| (m, k))
                .ok_or_else(|| Error::SizeOverflow(format!("a stage of {items} items")))
        }
        fn part_of(m: u64, k: u32) -> u64 {
            m / u64::from(k)
        }
        #[inline(always)]
        fn position(g: u64, j: u32, part: u64) -> u64 {
            u64::from(j) * part + fastrange(fmix64(g), part)
        }
    }
}

impl ProbeRule {
    /// The envelope version that records this rule.
    pub fn format_version(self) -> u16 {
        by_rule!(self, R => R::VERSION)
    }

    /// `(m, k)` of a stage for `n_i` items at stage FPR `p_i` under this rule.
    fn stage_size(self, items: u64, fpr: f64) -> Result<(u64, u32)> {
        let (m, k) = math::scalable_stage_size(items, fpr)?;
        by_rule!(self, R => R::round(items, m, k))
    }
}

// murmur3's 64-bit finaliser makes the `k` double-hashing values of a key behave as
// independent for the partition reduction (see [`Stage`]).
use bloomlab_core::hash::fmix64;

/// One stage of the chain: `m` bits, `k` probes, its insert count and its set bits.
///
/// # Why partitions, and why remixed probes
///
/// The stage FPR bound `fill^k ≤ 2^-k ≤ p_i` assumes a non-member's `k` probes are
/// independent and distinct. Under [`ProbeRule::Whole`] they are neither in a small stage:
/// probes may coincide, and the Kirsch–Mitzenmacher values `h1 + j·h2` reduced into few bits
/// lie on a few "lines", so a query sharing an inserted key's first probes tends to share
/// the rest. With [`ProbeRule::Partitioned`] each probe has its own partition (distinct by
/// construction; for equal partitions the FPR `Π fill_j ≤ (ones/m)^k` by the AM–GM
/// inequality, so the whole-stage fill threshold still bounds it) and each probe value goes
/// through [`fmix64`]. Partitions alone do not help: measured over 200 stages filled to just
/// below half (xxh3, 4·10^6 probes each row), FPR ÷ `p_i`
///
/// | `n_i`, target | whole | partitioned | partitioned, remixed |
/// |---|---|---|---|
/// | 4, 1 %     | 1.37 | 1.63 | 0.38 |
/// | 16, 0.1 %  | 2.91 | 3.73 | 0.74 |
/// | 100, 0.1 % | 1.29 | 1.51 | 0.93 |
/// | 1000, 0.1 %| 1.01 | 1.03 | 0.94 |
///
/// where `fill^k ÷ p_i` was 0.42, 0.80, 0.94 and 0.97: only the remixed rule tracks it.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Stage {
    bits: BitArray,
    k: u32,
    rule: ProbeRule,
    /// Bits per partition (`m / k`), or `m` under [`ProbeRule::Whole`].
    part: u64,
    /// Inserts into this stage, repeats included.
    count: u64,
    /// Set bits, tracked incrementally.
    ones: u64,
}

impl Stage {
    fn new(m: u64, k: u32, rule: ProbeRule) -> Result<Stage> {
        Ok(Stage {
            bits: BitArray::new(m)?,
            k,
            rule,
            part: Self::part_of(m, k, rule),
            count: 0,
            ones: 0,
        })
    }

    fn part_of(m: u64, k: u32, rule: ProbeRule) -> u64 {
        by_rule!(rule, R => R::part_of(m, k))
    }

    /// Bits `m_i`.
    pub fn bits(&self) -> u64 {
        self.bits.len()
    }
    /// Probes `k_i`.
    pub fn hashes(&self) -> u32 {
        self.k
    }
    /// Inserts into this stage, repeats included.
    pub fn len(&self) -> u64 {
        self.count
    }
    /// No inserts.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    /// The bit array.
    pub fn bit_array(&self) -> &BitArray {
        &self.bits
    }
    /// The probe rule.
    pub fn rule(&self) -> ProbeRule {
        self.rule
    }
    /// Set bits over all bits.
    pub fn fill(&self) -> f64 {
        self.ones as f64 / self.bits.len() as f64
    }
    /// The classic formula at this stage's count: `(1 − e^(−k·n/m))^k` (also the
    /// partitioned one, `(1 − e^(−n/(m/k)))^k`).
    pub fn expected_fpr(&self) -> f64 {
        bloomlab_core::math::classic_fpr(self.bits.len(), self.k, self.count)
    }

    /// Probe `j` of `h` (the rule chosen here: tests only; the stage's loops choose it once).
    #[cfg(test)]
    fn position(&self, h: KeyHash, j: u32) -> u64 {
        by_rule!(self.rule, R => R::position(h.probe(j), j, self.part))
    }

    fn is_full(&self) -> bool {
        self.ones as f64 > FILL_THRESHOLD * self.bits.len() as f64
    }

    /// Most set bits a stage can legitimately have: the insert that passes the threshold adds
    /// at most `k` bits past it.
    fn max_ones(&self) -> u64 {
        (self.bits.len() as f64 * FILL_THRESHOLD).floor() as u64 + u64::from(self.k)
    }

    /// The stage's answer. The first `EAGER_PROBES` (2) are tested without an early exit: their
    /// reads overlap in memory, and the branch after them is biased (a non-member passes two
    /// probes of a half-full stage with probability 1/4), where a branch per probe is a coin
    /// flip. Measured at 10^6 and 10^7 items, 2 eager probes were at least as fast as 1 or 4.
    #[inline]
    pub fn might_contain_hash(&self, h: KeyHash) -> bool {
        by_rule!(self.rule, R => self.contains_in::<R>(h))
    }

    /// [`might_contain_hash`](Self::might_contain_hash) under rule `R`.
    #[inline(always)]
    fn contains_in<R: Rule>(&self, h: KeyHash) -> bool {
        let at = |j: u32| self.bits.get(R::position(h.probe(j), j, self.part));
        let eager = (EAGER_PROBES as u32).min(self.k);
        let mut all = true;
        for j in 0..eager {
            all &= at(j);
        }
        all && (eager..self.k).all(at)
    }

    /// Insert and count the bits that changed from 0 to 1 (distinct positions only).
    fn insert_counting(&mut self, h: KeyHash) {
        by_rule!(self.rule, R => self.insert_in::<R>(h))
    }

    /// [`insert_counting`](Self::insert_counting) under rule `R`.
    fn insert_in<R: Rule>(&mut self, h: KeyHash) {
        for j in 0..self.k {
            let pos = R::position(h.probe(j), j, self.part);
            if !self.bits.set(pos) {
                self.ones += 1;
            }
        }
        self.count += 1;
    }

    /// Assemble a decoded stage, checking that `count` inserts of `k` probes could set its
    /// bits.
    fn from_parts(
        bits: BitArray,
        k: u32,
        count: u64,
        rule: ProbeRule,
    ) -> Result<Stage, DecodeError> {
        format::check_hashes(k)?;
        let ones = bits.count_ones();
        if ones > count.saturating_mul(u64::from(k)) {
            return Err(DecodeError::field(
                "count",
                format!("{count} inserts of {k} probes cannot set {ones} bits"),
            ));
        }
        Ok(Stage {
            part: Self::part_of(bits.len(), k, rule),
            bits,
            k,
            rule,
            count,
            ones,
        })
    }
}

/// A scalable Bloom filter: a chain of Bloom stages, generic over the hash scheme.
///
/// `len()` counts successful inserts, repeats included.
#[derive(Clone)]
pub struct ScalableBloomFilter<S: HashScheme = Xxh3Scheme> {
    config: ScalableConfig,
    stages: Vec<Stage>,
    rule: ProbeRule,
    scheme: S,
}

impl ScalableBloomFilter<Xxh3Scheme> {
    /// Start with capacity `n0` at compound target `p`, growth 2 and tightening 0.5: the
    /// sizing constructor every variant has.
    pub fn with_fpr(initial_capacity: u64, target_fpr: f64) -> Result<Self> {
        Self::with_fpr_and_scheme(initial_capacity, target_fpr, Xxh3Scheme)
    }

    /// The former name of [`with_fpr`](Self::with_fpr).
    #[deprecated(
        since = "0.2.0",
        note = "renamed `with_fpr`, as every variant's sizing constructor"
    )]
    pub fn new(initial_capacity: u64, target_fpr: f64) -> Result<Self> {
        Self::with_fpr(initial_capacity, target_fpr)
    }

    /// Start from a full configuration.
    pub fn with_config(config: ScalableConfig) -> Result<Self> {
        Self::with_config_and_scheme(config, Xxh3Scheme)
    }

    /// Decode the checked, versioned format written by [`to_bytes`](Self::to_bytes).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_bytes_with_scheme(bytes, Xxh3Scheme)
    }
}

impl<S: HashScheme> ScalableBloomFilter<S> {
    /// [`with_fpr`](ScalableBloomFilter::with_fpr) with a chosen hash scheme.
    pub fn with_fpr_and_scheme(initial_capacity: u64, target_fpr: f64, scheme: S) -> Result<Self> {
        Self::with_config_and_scheme(ScalableConfig::new(initial_capacity, target_fpr), scheme)
    }

    /// [`with_config`](ScalableBloomFilter::with_config) with a chosen hash scheme.
    pub fn with_config_and_scheme(config: ScalableConfig, scheme: S) -> Result<Self> {
        config.validate()?;
        let mut f = ScalableBloomFilter {
            config,
            stages: Vec::new(),
            rule: ProbeRule::Partitioned,
            scheme,
        };
        f.grow()?;
        Ok(f)
    }

    fn new_stage(&self, i: u32) -> Result<Stage> {
        let (m, k) = self.config.stage_size_under(i, self.rule)?;
        Stage::new(m, k, self.rule)
    }

    fn grow(&mut self) -> Result<()> {
        let stage = self.new_stage(self.stages.len() as u32)?;
        self.stages.push(stage);
        Ok(())
    }

    /// Hash a key with this filter's scheme.
    #[inline]
    pub fn hash_key<K: Key + ?Sized>(&self, key: &K) -> KeyHash {
        key.with_key_bytes(|b| self.scheme.hash(b))
    }

    /// Insert a key, adding a stage first if the newest one is past half full. Errors (and
    /// changes nothing) only when the next stage cannot be sized.
    #[inline]
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<()> {
        let h = self.hash_key(key);
        self.insert_hash(h)
    }

    /// Insert a key already hashed with this filter's scheme.
    pub fn insert_hash(&mut self, h: KeyHash) -> Result<()> {
        if self.newest().is_full() {
            self.grow()?;
        }
        let last = self.stages.len() - 1;
        self.stages[last].insert_counting(h);
        Ok(())
    }

    fn newest(&self) -> &Stage {
        self.stages.last().expect("a chain always has a stage")
    }

    /// `false`: definitely never inserted. `true`: maybe. Probes every stage, newest first.
    #[inline(always)]
    pub fn might_contain<K: Key + ?Sized>(&self, key: &K) -> bool {
        self.might_contain_hash(self.hash_key(key))
    }

    /// Query with a hash computed by this filter's scheme.
    #[inline]
    pub fn might_contain_hash(&self, h: KeyHash) -> bool {
        self.stages.iter().rev().any(|s| s.might_contain_hash(h))
    }

    /// The configuration.
    pub fn config(&self) -> &ScalableConfig {
        &self.config
    }

    /// The hash scheme.
    pub fn scheme(&self) -> &S {
        &self.scheme
    }

    /// Number of stages.
    pub fn stages(&self) -> usize {
        self.stages.len()
    }

    /// Stage `i` (0 is the oldest).
    pub fn stage(&self, i: usize) -> Option<&Stage> {
        self.stages.get(i)
    }

    /// The probe rule of every stage (the format version it writes).
    pub fn rule(&self) -> ProbeRule {
        self.rule
    }

    /// Fill ratio of stage `i`.
    pub fn stage_fill(&self, i: usize) -> Option<f64> {
        self.stages.get(i).map(Stage::fill)
    }

    /// Inserts, repeats included.
    pub fn len(&self) -> u64 {
        // Saturating: decoded counts are only bounded from below by the bits they set.
        self.stages
            .iter()
            .map(Stage::len)
            .fold(0u64, u64::saturating_add)
    }

    /// No inserts yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Items the current stages hold before the next growth: `Σ n0·s^i`.
    pub fn capacity(&self) -> u64 {
        (0..self.stages.len() as u32)
            .map(|i| self.config.stage_capacity(i).unwrap_or(u64::MAX))
            .fold(0u64, u64::saturating_add)
    }

    /// Total bits of all stages.
    pub fn bits(&self) -> u64 {
        self.stages.iter().map(Stage::bits).sum()
    }

    /// Compound FPR from each stage's formula at its insert count:
    /// `1 − Π(1 − (1 − e^(−k_i·n_i/m_i))^k_i)`.
    pub fn expected_fpr(&self) -> f64 {
        math::compound_fpr(self.stages.iter().map(Stage::expected_fpr))
    }

    /// Compound FPR from each stage's actual fill: `1 − Π(1 − fill_i^k_i)`.
    pub fn current_fpr(&self) -> f64 {
        math::compound_fpr(
            self.stages
                .iter()
                .map(|s| bloomlab_core::math::fpr_from_fill(s.fill(), s.k)),
        )
    }

    /// The guarantee: the compound FPR never exceeds the target `p` (`Σ p_i = p`).
    pub fn fpr_bound(&self) -> f64 {
        self.config.target_fpr
    }

    /// Union with an identically configured chain (same `n0`, `p`, `s`, `r` and scheme):
    /// stage `i` becomes the OR of both stages `i`; stages only `other` has are copied.
    /// Refused ([`Error::Incompatible`]) for another configuration or probe rule, and refused
    /// ([`Error::Full`]) — leaving `self` unchanged — when the OR would push a stage past
    /// its fill threshold beyond what either input already had: that stage would then break
    /// its FPR `p_i`, and with it the compound guarantee.
    pub fn union(&mut self, other: &Self) -> Result<()> {
        if self.config != other.config {
            return Err(Error::Incompatible(format!(
                "configuration {:?} vs {:?}",
                self.config, other.config
            )));
        }
        let (a, b) = (self.scheme.descriptor(), other.scheme.descriptor());
        if a != b {
            return Err(Error::Incompatible(format!("hash scheme {a} vs {b}")));
        }
        if self.rule != other.rule {
            return Err(Error::Incompatible(format!(
                "probe rule {:?} vs {:?}",
                self.rule, other.rule
            )));
        }
        let mut merged = self.stages.clone();
        for (i, theirs) in other.stages.iter().enumerate() {
            match merged.get_mut(i) {
                Some(ours) => {
                    let before = ours.ones;
                    ours.bits.union_with(&theirs.bits)?;
                    ours.count = ours.count.saturating_add(theirs.count);
                    ours.ones = ours.bits.count_ones();
                    let threshold = (ours.bits() as f64 * FILL_THRESHOLD).floor() as u64;
                    if ours.ones > threshold && ours.ones > before.max(theirs.ones) {
                        return Err(Error::Full(format!(
                            "the union would fill stage {i} to {:.4}, past its threshold {FILL_THRESHOLD}",
                            ours.fill()
                        )));
                    }
                }
                None => merged.push(theirs.clone()),
            }
        }
        self.stages = merged;
        Ok(())
    }

    /// Encode in the checked, versioned envelope ([`bloomlab_core::format`]) with this
    /// payload (little-endian): `initial_capacity: u64 | target_fpr: f64 | growth: u32 |
    /// reserved: u32 = 0 | tightening: f64 | stages: u32 | reserved: u32 = 0`, then per stage
    /// `count: u64 | ceil(m_i/8) bytes of bits`. Each stage's `m_i` and `k_i` follow from the
    /// configuration, so they are not stored.
    pub fn to_bytes(&self) -> Vec<u8> {
        let bytes: usize = self.stages.iter().map(|s| 8 + s.bits.byte_len()).sum();
        let mut w = EnvelopeWriter::with_version(
            Variant::Scalable,
            self.scheme.descriptor(),
            self.rule.format_version(),
            40 + bytes,
        );
        w.u64(self.config.initial_capacity)
            .f64(self.config.target_fpr)
            .u32(self.config.growth)
            .u32(0)
            .f64(self.config.tightening)
            .u32(self.stages.len() as u32)
            .u32(0);
        for s in &self.stages {
            w.u64(s.count);
            s.bits.write_le_bytes(w.buffer());
        }
        w.finish()
    }

    /// Decode [`to_bytes`](Self::to_bytes) output, probing with `scheme`. Refuses another
    /// scheme or key, damaged bytes, an invalid configuration, and stages whose bits could not
    /// come from their count or that are fuller than growth allows. Never panics.
    pub fn from_bytes_with_scheme(bytes: &[u8], scheme: S) -> Result<Self> {
        let (version, payload) = format::open_expecting_versions(
            bytes,
            Variant::Scalable,
            scheme.descriptor(),
            &[format::FORMAT_VERSION, format::SCALABLE_PARTITIONED_VERSION],
        )?;
        let rule = if version == format::FORMAT_VERSION {
            ProbeRule::Whole
        } else {
            ProbeRule::Partitioned
        };
        let mut r = Reader::new(payload);
        let initial_capacity = r.u64()?;
        let target_fpr = r.f64()?;
        let growth = r.u32()?;
        let reserved1 = r.u32()?;
        let tightening = r.f64()?;
        let stages = r.u32()?;
        let reserved2 = r.u32()?;
        if reserved1 != 0 || reserved2 != 0 {
            return Err(DecodeError::field("reserved", "must be zero").into());
        }
        let config = ScalableConfig {
            initial_capacity,
            target_fpr,
            growth,
            tightening,
        };
        config
            .validate()
            .map_err(|e| DecodeError::field("config", e.to_string()))?;
        if stages == 0 || stages > MAX_STAGES {
            return Err(DecodeError::field(
                "stages",
                format!("must be between 1 and {MAX_STAGES} (got {stages})"),
            )
            .into());
        }
        let mut parts = Vec::with_capacity(stages.min(8) as usize);
        for i in 0..stages {
            let (m, _) = config
                .stage_size_under(i, rule)
                .map_err(|e| DecodeError::field("stages", e.to_string()))?;
            let count = r.u64()?;
            let bits = BitArray::from_le_bytes(r.take_u64_len(m.div_ceil(8))?, m)?;
            parts.push((count, bits));
        }
        r.finish()?;
        Ok(Self::from_parts_under(config, rule, parts, scheme)?)
    }

    /// Assemble from a configuration and each stage's `(count, bits)`, checking what a
    /// decoder checks: a valid configuration, 1 to [`MAX_STAGES`] stages, each stage's size
    /// as the configuration implies, no more set bits than its count could set, and no stage
    /// fuller than growth allows.
    pub fn from_parts(
        config: ScalableConfig,
        parts: Vec<(u64, BitArray)>,
        scheme: S,
    ) -> Result<Self, DecodeError> {
        Self::from_parts_under(config, ProbeRule::Partitioned, parts, scheme)
    }

    /// [`from_parts`](Self::from_parts) for stages laid out under `rule`.
    pub fn from_parts_under(
        config: ScalableConfig,
        rule: ProbeRule,
        parts: Vec<(u64, BitArray)>,
        scheme: S,
    ) -> Result<Self, DecodeError> {
        config
            .validate()
            .map_err(|e| DecodeError::field("config", e.to_string()))?;
        if parts.is_empty() || parts.len() > MAX_STAGES as usize {
            return Err(DecodeError::field(
                "stages",
                format!("must be between 1 and {MAX_STAGES} (got {})", parts.len()),
            ));
        }
        let mut stages = Vec::with_capacity(parts.len());
        for (i, (count, bits)) in parts.into_iter().enumerate() {
            let (m, k) = config
                .stage_size_under(i as u32, rule)
                .map_err(|e| DecodeError::field("stages", e.to_string()))?;
            if bits.len() != m {
                return Err(DecodeError::field(
                    "stage bits",
                    format!("stage {i} has {} bits, its configuration {m}", bits.len()),
                ));
            }
            let stage = Stage::from_parts(bits, k, count, rule)?;
            let ones = stage.ones;
            if ones > stage.max_ones() {
                return Err(DecodeError::field(
                    "stage bits",
                    format!("stage {i} is fuller than growth allows ({ones} of {m} bits set)"),
                ));
            }
            stages.push(stage);
        }
        // A chain only grows once its newest stage is past the fill threshold (and union keeps
        // that), so every stage but the newest must be full.
        if let Some(i) = stages[..stages.len() - 1].iter().position(|s| !s.is_full()) {
            return Err(DecodeError::field(
                "stages",
                format!("stage {i} is not full, yet a newer stage exists"),
            ));
        }
        Ok(ScalableBloomFilter {
            config,
            stages,
            rule,
            scheme,
        })
    }
}

impl<S: HashScheme> FilterMeta for ScalableBloomFilter<S> {
    type Scheme = S;
    const VARIANT: Variant = Variant::Scalable;
    const TYPE_NAME: &'static str = "ScalableBloomFilter";

    /// Derived from the chain: items over all stages, the capacity of the stages so far, the
    /// compound target.
    fn meta(&self) -> MetaView<'_, S> {
        MetaView {
            count: self.len(),
            capacity: self.capacity(),
            target_fpr: Some(self.config.target_fpr),
            scheme: &self.scheme,
        }
    }
}

bloomlab_core::try_from_bytes!(ScalableBloomFilter);

/// A chain has one fill per stage: no single fill or estimate; its FPR is the compound one of
/// its stages' fills.
impl<S: HashScheme> bloomlab_core::Declared for ScalableBloomFilter<S> {
    const DECLARATION: bloomlab_core::Declaration = bloomlab_core::Declaration {
        variant: Variant::Scalable,
        versions: &[format::FORMAT_VERSION, format::SCALABLE_PARTITIONED_VERSION],
        changes: bloomlab_core::declare::Changes::Grows,
        deletes: false,
        no_union: Some(
            "a scalable filter's stages depend on the order of inserts, so the union of two is not the filter built over both key sets",
        ),
        design: "a chain of growing stages: s = 2, r = 0.5, stage i at p(1-r)r^i (compound <= p)",
    };
    fn with_fpr_and_scheme(n: u64, fpr: f64, scheme: S) -> Result<Self> {
        ScalableBloomFilter::<S>::with_fpr_and_scheme(n, fpr, scheme)
    }
    fn from_bytes_with_scheme(bytes: &[u8], scheme: S) -> Result<Self> {
        Self::from_bytes_with_scheme(bytes, scheme)
    }
    fn to_bytes(&self) -> Vec<u8> {
        self.to_bytes()
    }
    fn fill_fpr(&self) -> Option<f64> {
        Some(self.current_fpr())
    }
}

impl<S: HashScheme> FilterCore for ScalableBloomFilter<S> {
    bloomlab_core::key_methods!(fallible);
    fn size_in_bytes(&self) -> usize {
        self.stages.iter().map(|s| s.bits.size_in_bytes()).sum()
    }
    fn table_bits(&self) -> u64 {
        self.bits()
    }
    fn hashes(&self) -> u32 {
        self.newest().k
    }
    fn expected_fpr(&self) -> f64 {
        ScalableBloomFilter::expected_fpr(self)
    }
    fn same_table(&self, other: &Self) -> bool {
        self.config == other.config && self.rule == other.rule && self.stages == other.stages
    }
    /// A chain prints its configuration and totals rather than one table's metadata.
    fn fmt_debug(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(Self::TYPE_NAME)
            .field("config", &self.config)
            .field("rule", &self.rule)
            .field("stages", &self.stages.len())
            .field("len", &self.len())
            .field("bits", &self.bits())
            .field("expected_fpr", &self.expected_fpr())
            .field("scheme", &self.scheme.descriptor())
            .finish()
    }
}

filter_glue!(ScalableBloomFilter);

#[cfg(feature = "serde")]
mod serde_impl {
    //! serde support: the configuration and each stage's count and words, validated like the
    //! byte format on the way in. Only schemes constructible with `Default` (unkeyed)
    //! deserialize.
    use super::*;
    use bloomlab_core::hash::SchemeDescriptor;
    use bloomlab_core::meta::default_scheme_for;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize)]
    struct StageRef<'a> {
        count: u64,
        words: &'a [u64],
    }

    #[derive(Serialize)]
    struct ReprRef<'a> {
        config: ScalableConfig,
        scheme: SchemeDescriptor,
        version: u16,
        stages: Vec<StageRef<'a>>,
    }

    #[derive(Deserialize)]
    struct StageRepr {
        count: u64,
        words: Vec<u64>,
    }

    /// Written before the partitioned rule existed, without a version: the whole-stage rule.
    fn version_1() -> u16 {
        format::FORMAT_VERSION
    }

    #[derive(Deserialize)]
    struct Repr {
        config: ScalableConfig,
        scheme: SchemeDescriptor,
        #[serde(default = "version_1")]
        version: u16,
        stages: Vec<StageRepr>,
    }

    impl<S: HashScheme> Serialize for ScalableBloomFilter<S> {
        fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
            ReprRef {
                config: self.config,
                scheme: self.scheme.descriptor(),
                version: self.rule.format_version(),
                stages: self
                    .stages
                    .iter()
                    .map(|st| StageRef {
                        count: st.count,
                        words: st.bits.words(),
                    })
                    .collect(),
            }
            .serialize(s)
        }
    }

    impl<'de, S: HashScheme + Default> Deserialize<'de> for ScalableBloomFilter<S> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            use serde::de::Error as _;
            let r = Repr::deserialize(d)?;
            let scheme = default_scheme_for::<S>(r.scheme).map_err(D::Error::custom)?;
            r.config.validate().map_err(D::Error::custom)?;
            let rule = match r.version {
                format::FORMAT_VERSION => ProbeRule::Whole,
                format::SCALABLE_PARTITIONED_VERSION => ProbeRule::Partitioned,
                v => return Err(D::Error::custom(DecodeError::UnsupportedVersion(v))),
            };
            if r.stages.is_empty() || r.stages.len() > MAX_STAGES as usize {
                return Err(D::Error::custom("stage count out of range"));
            }
            let mut parts = Vec::with_capacity(r.stages.len());
            for (i, st) in r.stages.into_iter().enumerate() {
                let (m, _) = r
                    .config
                    .stage_size_under(i as u32, rule)
                    .map_err(D::Error::custom)?;
                parts.push((
                    st.count,
                    BitArray::from_words(st.words, m).map_err(D::Error::custom)?,
                ));
            }
            ScalableBloomFilter::from_parts_under(r.config, rule, parts, scheme)
                .map_err(D::Error::custom)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_rule_type_is_the_rule_it_is_picked_for() {
        for rule in [ProbeRule::Whole, ProbeRule::Partitioned] {
            assert_eq!(by_rule!(rule, R => R::RULE), rule);
        }
        let versions = [ProbeRule::Whole, ProbeRule::Partitioned].map(ProbeRule::format_version);
        assert_eq!(versions, [1, 2]);
        // Whole: one part of all m bits, probes anywhere; partitioned: k parts of m / k.
        assert_eq!(Stage::part_of(1_000, 7, ProbeRule::Whole), 1_000);
        assert_eq!(Stage::part_of(1_001, 7, ProbeRule::Partitioned), 143);
    }

    #[test]
    fn stage_sizes_follow_the_math_module() {
        let f = ScalableBloomFilter::with_fpr(1_000, 0.01).unwrap();
        let s0 = f.stage(0).unwrap();
        assert_eq!(s0.hashes(), 8); // ceil(log2(1/0.005))
        // 8 partitions of ceil(1000 / ln 2) = 1443 bits.
        assert_eq!(
            s0.bits(),
            8 * (1000.0 / std::f64::consts::LN_2).ceil() as u64
        );
        assert_eq!(s0.part, 1443);
        let whole = f.config().stage_size_under(0, ProbeRule::Whole).unwrap();
        assert_eq!(
            whole,
            ((1000.0 * 8.0 / std::f64::consts::LN_2).ceil() as u64, 8)
        );
        assert_eq!(f.config().stage_capacity(3).unwrap(), 8_000);
        assert_eq!(f.config().stage_size(3).unwrap().1, 11);
    }

    #[test]
    fn each_probe_lands_in_its_own_partition() {
        let mut f = ScalableBloomFilter::with_fpr(200, 0.001).unwrap();
        for i in 0..3_000u32 {
            f.insert(&i).unwrap();
        }
        for st in &f.stages {
            assert_eq!(st.bits() % u64::from(st.k), 0);
            for i in 0..2_000u32 {
                let h = f.hash_key(&i);
                for j in 0..st.k {
                    assert_eq!(st.position(h, j) / st.part, u64::from(j));
                }
            }
        }
    }

    #[test]
    fn fill_is_tracked_exactly() {
        for rule in [ProbeRule::Whole, ProbeRule::Partitioned] {
            let mut f = ScalableBloomFilter::with_fpr(500, 0.01).unwrap();
            f.rule = rule;
            f.stages = vec![f.new_stage(0).unwrap()];
            for i in 0..20_000u32 {
                f.insert(&i).unwrap();
            }
            for (i, st) in f.stages.iter().enumerate() {
                assert_eq!(st.rule, rule);
                assert_eq!(st.ones, st.bits.count_ones(), "stage {i}");
            }
            // Every stage but the newest was grown past: fill just over 1/2, never far over.
            for st in &f.stages[..f.stages.len() - 1] {
                assert!(st.is_full() && st.ones <= st.max_ones());
            }
        }
    }
}
