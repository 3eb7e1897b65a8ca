//! A Standard Ribbon filter (Dillinger & Walzer 2021, "Ribbon filter: practically smaller
//! than Bloom and Xor"): a **static** approximate-membership filter, built once from the whole
//! key set, within about 5 % of the information-theoretic space bound `log2(1/ε)` bits per
//! key, where a Bloom filter pays 44 % and a binary fuse filter about 13 %.
//!
//! # Design
//!
//! - **One equation per key.** A key hashes once (one 64-bit hash, [`HashScheme::hash64`])
//!   and [`row_one_hash`] derives from it, for the construction's seed, a start slot `s`, a
//!   `w = 128`-bit coefficient row whose bit 0 is set, and an `r`-bit fingerprint — one
//!   multiply to re-seed the hash, then one independent multiply each for the row's two
//!   words and the fingerprint (the second [`Layout`], envelope version 2; filters of the
//!   first, which used the 128-bit hash and three chained finalisers ([`row`]), still load
//!   from version-1 bytes and answer exactly as before). The filter stores a solution `Z`: `m`
//!   slots of `r` bits such that for every key the XOR of the slots `s + i` with row bit `i`
//!   set equals its fingerprint. A query recomputes that XOR; a member always matches (no
//!   false negatives, ever); a non-member matches with probability `2^-r`, the FPR
//!   ([`fpr_for_result_bits`]), because its row meets `r` independent uniform columns.
//! - **r from the target**: `r = ceil(log2(1/p))` ([`result_bits_for`]): 6 at 3 % (FPR
//!   1.56 %), 7 at 1 % (0.78 %), 10 at 0.1 % (0.098 %). Integral `r` is why the FPR lands
//!   below the target; the space bound is then met against the FPR actually delivered.
//! - **On-the-fly banding** ([`band::Banding::add`]): each equation is inserted into the band
//!   by incremental Gaussian elimination over GF(2) — while the slot of the row's lowest bit
//!   holds a row, XOR it in and move to the new lowest bit; an empty slot takes the row. A row
//!   that reduces to zero is a repeat (consistent, accepted: duplicate keys are fine) or a
//!   contradiction (the seed fails). Keys are first counting-sorted by the 128-slot block their
//!   row starts in, so banding walks the band front to back and stays in cache.
//! - **Back-substitution** ([`band::Banding::solve`]) from the last slot to the first keeps
//!   for each of the `r` columns a 128-bit window of the solution, so each slot costs `r`
//!   parities. Free slots (no row) get pseudo-random values.
//! - **Interleaved column-major solution**: per block of 128 slots, `r` columns of 128 bits
//!   (bit `j` of each slot). That is the byte format's layout, which [`RibbonView`] queries
//!   in place: column `j` of the block of `s` and of the next, one contiguous stretch of
//!   `2·r·16` bytes, one parity per column against the row shifted once into two masks
//!   ([`band::query`]). The owned filter keeps the same bits in memory in blocks of **64**
//!   slots ([`Blocks64`]): a row starting at `s = 64·k + t` reads blocks `k`, `k + 1`,
//!   `k + 2`, one stretch of `3·r·8` bytes (168 at `r = 7` instead of 224: on average 3.5
//!   cache lines instead of 4.25), each column's parity that of
//!   `(a & m0) ^ (b & m1) ^ (c & m2)` with the row shifted once into three 64-bit masks
//!   ([`Blocks64::query`]). Build and decode convert; the bytes and every answer are the
//!   format's.
//! - **The query kernel** ([`bloomlab_simd::ColumnKernel`]): a single lookup runs the
//!   columns as inline assembly inside the caller — no call. With AVX-512 and `VPOPCNTDQ`
//!   (Ice Lake and later Xeons, Zen 4) eight columns' words are one 64-byte load per block,
//!   combined by one AND and two three-input logic operations, counted by one `vpopcntq`,
//!   their parities collected by `vpmovmskb`: ten instructions for `r ≤ 8`. With AVX2
//!   only, four columns per load, parities from a nibble table (`vpshufb`) and byte sums
//!   (`vpsadbw`), four bits per `vmovmskpd`: ≈ 32 instructions at `r = 7`. The kernel is bound to the filter's `r` when the filter is
//!   built ([`bloomlab_simd::ColumnQuery`]), so a lookup makes one range check. Elsewhere, and for batches, the query
//!   runs as one body compiled with AVX2 and `popcnt` enabled when the CPU has them (else
//!   `popcnt`, else portable code; [`bloomlab_simd::run_parity`]).
//! - **Slots for a stated success probability.** `m = n·(1 + 0.008·log10 n)` rounded up to a
//!   multiple of 128 ([`num_slots`]; 3.2 % overhead at 10^4 keys, 4.8 % at 10^6, 5.6 % at 10^7),
//!   chosen so that one seed succeeds with probability at least [`SEED_SUCCESS`] = 0.9. A
//!   failed seed is retried with the next, up to [`MAX_SEEDS`] = 32, then [`Error::Full`]
//!   (probability below `0.1^32`). The seed is stored in the format.
//! - **Every n from 0.** No keys: no slots, every answer `false`. A few keys: one block of 128
//!   slots (`128·r` bits: 896 bits at 1 % for 1 to ~120 keys).
//!
//! # Why w = 128
//!
//! The overhead a band of width `w` needs for banding to succeed grows with `log n / w`. With
//! `w = 64` a 10^6-key filter needs about 12 % more slots than keys for a 90 % seed; `w = 128`
//! succeeds at 5 %, and its query reads twice the bits per column (still one contiguous
//! stretch). The seed-success table is in `docs/design/ribbon.md`.
//!
//! # Static filters in the model
//!
//! The construction solves one linear system over **the whole key set**, so adding a key
//! later would mean solving it again. [`Filter`](bloomlab_core::Filter) is nevertheless not
//! split into a query side and an insert side: the filter implements the one trait, and its
//! `insert_bytes` returns [`Error::Static`], leaving the filter unchanged. That keeps the
//! trait object safe and every variant in one `dyn Filter` collection (`inspect`, a user's
//! `Vec<Box<dyn Filter>>`), leaves users one trait to learn, and adds no new failure mode
//! (inserts already return `Result`: a full cuckoo filter refuses too); the reasons are set
//! out in [`bloomlab_core::filter`]. Build with [`RibbonFilter::build`] from every key; to
//! add keys, rebuild.
//!
//! # Guarantees
//!
//! - **No false negatives:** every key of the build answers `true`, in the owned filter and in
//!   [`RibbonView`] over its bytes.
//! - **FPR:** exactly `2^-r` per non-member ([`fpr_for_result_bits`]), at or below the target.
//! - **Errors:** a target outside (0, 1) or below `2^-32` is [`Error::InvalidFpr`] or
//!   `Error::InvalidParameter`; a build that fails [`MAX_SEEDS`] seeds is [`Error::Full`];
//!   an insert after the build is [`Error::Static`]; decoding gives a typed [`DecodeError`]
//!   and never panics.
//!
//! # Format
//!
//! The checked `BLAB` envelope of [`bloomlab_core::format`] (variant tag 7): `r`, the seed, the
//! slot count and the interleaved column-major solution. Envelope version 2 is the one-hash
//! equation layout written today; version 1 (the 128-bit hash with three finalisers) still
//! loads. Both are pinned by literal vectors in `tests/known_answers.rs`.
//!
//! # Complexity
//!
//! Build: `O(n)` expected (a counting sort by start block, then banding and back-substitution,
//! `r` parities per slot), retried with a new seed with probability at most 0.1. Lookup: one
//! hash and `r` parities over one contiguous stretch of the solution. Space:
//! `r·n·(1 + 0.008·log10 n)` bits.
//!
//! # Why this design
//!
//! A static filter can solve for its contents instead of setting bits, which is what gets it
//! within about 5 % of the space bound; the Standard Ribbon is the simplest such construction
//! that builds in linear time with a fixed band width. `w = 128` is the narrowest band whose
//! overhead stays near 5 % at 10^7 keys, and the column-major layout keeps every lookup in one
//! contiguous stretch. The measurements behind these choices are in `docs/design/ribbon.md`;
//! current figures are in `results/`.
//!
//! Construction failures: over 1000 seeds on one set of 10^4 keys, 5 seeds failed (0.5 %,
//! stated ≤ 10 %; `tests/ribbon.rs`).
//!
//! # Example
//!
//! ```
//! use bloomlab_ribbon::RibbonFilter;
//! use bloomlab_core::{Error, Filter};
//!
//! let n = 100_000u64;
//! let mut f = RibbonFilter::build(0..n, 0.01)?;
//! assert_eq!(f.result_bits(), 7); // 2^-7 = 0.78 % ≤ 1 %
//! assert!((0..n).all(|i| f.might_contain(&i))); // no false negatives
//! // 7.28 bits/key: r = 7 times 1.04 slots per key.
//! assert!((f.bits_per_item() - 7.285).abs() < 0.01, "{}", f.bits_per_item());
//!
//! // 10^6 non-members: the FPR is 2^-7; the count stays within 5σ.
//! let probes = 1_000_000u64;
//! let fp = (n..n + probes).filter(|i| f.might_contain(i)).count() as f64;
//! let e = f.expected_fpr();
//! let sigma = (probes as f64 * e * (1.0 - e)).sqrt();
//! assert!((fp - probes as f64 * e).abs() < 5.0 * sigma, "{fp}");
//!
//! // Static: no inserts after the build, and the filter is unchanged.
//! assert!(matches!(f.insert_bytes(b"late"), Err(Error::Static(_))));
//!
//! // The bytes answer queries in place.
//! let bytes = f.to_bytes();
//! let view = bloomlab_ribbon::RibbonView::new(&bytes)?;
//! assert!(view.might_contain(&42u64));
//! # Ok::<(), bloomlab_core::Error>(())
//! ```
//!
//! # no_std
//!
//! Without its default `std` feature the crate is `#![no_std]` and needs only `alloc`, with nothing
//! left out: the column kernels are then the ones the build's target features allow (no run-time
//! CPU detection), and the `f64` functions of the sizing formulas come from `libm`
//! (`bloomlab_core::math::float` says how that can differ).
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]
#![forbid(unsafe_code)]

use alloc::{format, vec, vec::Vec};
#[cfg(not(feature = "std"))]
use bloomlab_core::math::float::FloatMath as _;

extern crate alloc;

pub mod math;

pub mod band;
mod view;

use core::fmt;

use bloomlab_core::error::{DecodeError, Error, Result};
use bloomlab_core::format::{self, EnvelopeWriter, Reader, Variant};
use bloomlab_core::hash::{HashScheme, KeyHash, Xxh3Scheme, fastrange};
use bloomlab_core::meta::{FilterCore, Meta};
use bloomlab_core::{Key, filter_glue};
use bloomlab_simd::{self as simd, ColumnKernel, ColumnQuery, Parity, ParityTask};

pub use band::Blocks64;
pub use band::MAX_RESULT_BITS;
use band::{Banding, CoeffRow, Solution, fmix64};
pub use view::RibbonView;

/// The coefficient row type: `w = 128` (see the crate docs for why not 64).
pub type Row = u128;
/// The band width `w` in slots.
pub const WIDTH: u64 = Row::BITS as u64;

/// Prefetch distance of [`RibbonFilter::might_contain_batch`]: lookups whose solution
/// stretch is being fetched while the current one is answered.
pub const BATCH: usize = 16;

/// Filters of the current layout with the inline query kernel and at most this many bytes of
/// solution answer [`RibbonFilter::might_contain_batch`] (and [`RibbonFilter::count_contained`])
/// key by key, without the prefetching pipeline: in cache it only adds work (the ring, and three or
/// four prefetches per key); past about 2 MB of solution the pipeline wins (measured;
/// `docs/design/ribbon.md`).
pub const SINGLE_LOOP_UP_TO: usize = 2 << 20;

/// Seeds a construction tries before it gives up with [`Error::Full`]. Each seed succeeds
/// with probability at least [`SEED_SUCCESS`] at the sizing of [`num_slots`], so all of them
/// fail with probability below `(1 − 0.9)^32 = 10^-32`.
pub const MAX_SEEDS: u32 = 32;

/// The per-seed construction success probability the sizing of [`num_slots`] is chosen for.
pub const SEED_SUCCESS: f64 = 0.9;

/// How a key becomes its equation, recorded as the envelope version: every new filter uses
/// [`Layout::OneHash`]; filters decoded from version-1 bytes keep [`Layout::Fmix128`] and
/// answer exactly as they did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Layout {
    /// Envelope version 1: the scheme's 128-bit hash ([`HashScheme::hash`]) and three
    /// finalisers per key ([`row`]).
    Fmix128,
    /// Envelope version 2: the scheme's 64-bit hash ([`HashScheme::hash64`]: XXH3-64 for the
    /// default scheme, a SipHash-2-4 output for the keyed ones) and one multiply per part of
    /// the equation ([`row_one_hash`]) — four independent multiplies where the first layout
    /// chains six, ≈ 30 fewer instructions per lookup.
    OneHash,
}

impl Layout {
    /// The envelope version that records this layout.
    pub fn format_version(self) -> u16 {
        by_layout!(self, R => R::VERSION)
    }

    /// The layout an envelope version records, if any.
    pub fn from_format_version(v: u16) -> Option<Layout> {
        [Layout::Fmix128, Layout::OneHash]
            .into_iter()
            .find(|l| l.format_version() == v)
    }
}

/// A key's hash under `layout`: the scheme's 64-bit output in `h1` ([`Layout::OneHash`];
/// `h2 = 1`), its 128-bit output for [`Layout::Fmix128`]. What
/// [`RibbonFilter::hash_key`] returns and [`RibbonFilter::from_hashes_in`] takes.
#[inline(always)]
pub fn hash_in<S: HashScheme, K: Key + ?Sized>(layout: Layout, scheme: &S, key: &K) -> KeyHash {
    by_layout!(layout, R => R::hash(scheme, key))
}

/// [`row`] or [`row_one_hash`], as `layout` says (a hash from [`hash_in`]).
#[inline(always)]
pub fn row_in<W: CoeffRow>(layout: Layout, h: KeyHash, seed: u32, starts: u64) -> (usize, W, u32) {
    by_layout!(layout, R => R::row(h, seed, starts))
}

/// One layout's rule: how a key is hashed and how its hash becomes an equation (for a seed and
/// a number of start slots). One zero-sized type per [`Layout`], picked once per operation by
/// `by_layout!` — once per construction attempt, once per batch — so no loop over keys
/// re-decides the layout (RocksDB's `util/bloom_impl.h`: one class per layout).
trait Rule {
    /// The layout this rule is.
    #[allow(dead_code)] // read by the tests, which check each type against its name
    const LAYOUT: Layout;
    /// The envelope version that records it.
    const VERSION: u16;
    /// [`hash_in`] for this layout.
    fn hash<S: HashScheme, K: Key + ?Sized>(scheme: &S, key: &K) -> KeyHash;
    /// [`row_in`] for this layout.
    fn row<W: CoeffRow>(h: KeyHash, seed: u32, starts: u64) -> (usize, W, u32);
    /// The start slot of [`row`](Self::row) alone.
    fn start(h: KeyHash, seed: u32, starts: u64) -> u64;
}

/// Run `$body` with the type of `$layout`'s [`Rule`] bound to `$R`.
macro_rules! by_layout {
    ($layout:expr, $R:ident => $body:expr) => {
        match $layout {
            Layout::Fmix128 => {
                type $R = rules::Fmix128;
                $body
            }
            Layout::OneHash => {
                type $R = rules::OneHash;
                $body
            }
        }
    };
}
pub(crate) use by_layout;

mod rules {
    use super::*;

    /// The first layout's rule ([`Layout::Fmix128`]).
    pub(crate) struct Fmix128;
    /// The second layout's rule ([`Layout::OneHash`]).
    pub(crate) struct OneHash;

    impl Rule for Fmix128 {
        const LAYOUT: Layout = Layout::Fmix128;
        const VERSION: u16 = format::FORMAT_VERSION;
        #[inline(always)]
        fn hash<S: HashScheme, K: Key + ?Sized>(scheme: &S, key: &K) -> KeyHash {
            key.with_key_bytes(|b| scheme.hash(b))
        }
        #[inline(always)]
        fn row<W: CoeffRow>(h: KeyHash, seed: u32, starts: u64) -> (usize, W, u32) {
            row(h, seed, starts)
        }
        #[inline(always)]
        fn start(h: KeyHash, seed: u32, starts: u64) -> u64 {
            fastrange(fmix64(h.h1 ^ seed_word(seed)), starts)
        }
    }

    impl Rule for OneHash {
        const LAYOUT: Layout = Layout::OneHash;
        const VERSION: u16 = format::RIBBON_ONE_HASH_VERSION;
        #[inline(always)]
        fn hash<S: HashScheme, K: Key + ?Sized>(scheme: &S, key: &K) -> KeyHash {
            KeyHash::new(key.with_key_bytes(|b| scheme.hash64(b)), 0)
        }
        #[inline(always)]
        fn row<W: CoeffRow>(h: KeyHash, seed: u32, starts: u64) -> (usize, W, u32) {
            row_one_hash(h.h1, seed, starts)
        }
        #[inline(always)]
        fn start(h: KeyHash, seed: u32, starts: u64) -> u64 {
            fastrange(one_hash_seeded(h.h1, seed), starts)
        }
    }
}

#[cfg(test)]
mod rule_tests {
    use super::*;

    #[test]
    fn each_rule_type_is_the_layout_it_is_picked_for() {
        for layout in [Layout::Fmix128, Layout::OneHash] {
            assert_eq!(by_layout!(layout, R => R::LAYOUT), layout);
            assert_eq!(
                Layout::from_format_version(layout.format_version()),
                Some(layout)
            );
        }
        assert_eq!(
            [Layout::Fmix128, Layout::OneHash].map(Layout::format_version),
            [1, 2]
        );
        assert_eq!(Layout::from_format_version(3), None);
    }

    /// The start alone (the construction's sort) is the start of the whole equation, for
    /// every layout, seed and size; and `hash_in` / `row_in` are the rule's.
    #[test]
    fn a_rules_start_is_its_rows_start() {
        let mut x = 0x0123_4567_89ab_cdefu64;
        for layout in [Layout::Fmix128, Layout::OneHash] {
            // Past 2^32 start slots where `usize` holds them (not on a 32-bit target).
            for starts in [1, 2, 1_000, (1u64 << 33).min(usize::MAX as u64)] {
                for seed in [0, 1, 77] {
                    x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15).wrapping_add(1);
                    let h = hash_in(layout, &Xxh3Scheme, &x);
                    let (s, c, v) = row_in::<Row>(layout, h, seed, starts);
                    by_layout!(layout, R => {
                        assert_eq!(R::hash(&Xxh3Scheme, &x), h);
                        assert_eq!(R::start(h, seed, starts), s as u64, "{layout:?}");
                        assert_eq!(R::row::<Row>(h, seed, starts), (s, c, v));
                    });
                    assert!((s as u64) < starts);
                }
            }
        }
    }
}

/// Odd multipliers of [`row_one_hash`]: the seeded hash, the row's low and high words, the
/// right-hand side. Frozen by the known-answer tests (format version 2).
pub const ONE_HASH_MULTIPLIERS: [u64; 4] = [
    0xd6e8_feb8_6659_fd93,
    0x9e37_79b9_7f4a_7c15,
    0xbf58_476d_1ce4_e5b9,
    0x94d0_49bb_1331_11eb,
];

/// The second layout's equation ([`Layout::OneHash`]) of a 64-bit hash `x` for seed `seed`
/// in a band with `starts` start slots: with `y = (x ^ seed_word(seed)) · M0` (a bijection of
/// `x` for each seed, so every retry re-draws every equation), the start is the fastrange of
/// `y` (its high bits), the row `((y ^ y >> 29) · M2) : ((y ^ y >> 32) · M1)` with bit 0 set
/// (high word : low word), the right-hand side the high 32 bits of `(y ^ y >> 31) · M3`. The
/// shifts fold `y`'s high bits into the low ones each multiply carries upward, so every bit
/// of row and fingerprint depends on all of `y`; the four multiplies are independent of one
/// another once `y` is known.
#[inline(always)]
pub fn row_one_hash<W: CoeffRow>(x: u64, seed: u32, starts: u64) -> (usize, W, u32) {
    let [_, m1, m2, m3] = ONE_HASH_MULTIPLIERS;
    let y = one_hash_seeded(x, seed);
    let lo = (y ^ (y >> 32)).wrapping_mul(m1);
    let hi = (y ^ (y >> 29)).wrapping_mul(m2);
    let v = ((y ^ (y >> 31)).wrapping_mul(m3) >> 32) as u32;
    (fastrange(y, starts) as usize, W::from_halves(lo, hi), v)
}

/// The first layout's equation ([`Layout::Fmix128`]) of a hashed key for seed `seed` in a
/// band with `starts` possible start slots: `(start, w-bit row with bit 0 set, 32 bits of
/// right-hand side)`; a filter keeps the low `r` bits of the last. Three finalisers over the
/// key's 128 hash bits: `a` gives the start (its high bits, through fastrange) and the
/// right-hand side (its low 32 bits), `b` and `c = fmix64(a ^ b)` the row.
#[inline(always)]
pub fn row<W: CoeffRow>(h: KeyHash, seed: u32, starts: u64) -> (usize, W, u32) {
    let s = seed_word(seed);
    let a = fmix64(h.h1 ^ s);
    let b = fmix64(h.h2.wrapping_add(s));
    let c = fmix64(a ^ b.rotate_left(32));
    (
        fastrange(a, starts) as usize,
        W::from_halves(b, c),
        a as u32,
    )
}

/// `r = ceil(log2(1/p))`: the result bits for a target FPR `p`, so the FPR `2^-r ≤ p`
/// ([`math::ribbon_result_bits`]). Errors: `p` not in (0, 1), or below `2^-32`
/// ([`MAX_RESULT_BITS`]).
pub fn result_bits_for(p: f64) -> Result<u32> {
    math::ribbon_result_bits(p)
}

/// The FPR of `r` result bits: `2^-r` (a non-member's row meets the solution in `r`
/// independent uniform parities).
pub fn fpr_for_result_bits(r: u32) -> f64 {
    (-f64::from(r)).exp2()
}

/// Slot overhead `m/n − 1` for `n` keys ([`math::ribbon_slot_overhead`]: measured so that
/// one seed succeeds with probability ≥ [`SEED_SUCCESS`]).
pub fn slot_overhead(n: u64) -> f64 {
    math::ribbon_slot_overhead(n)
}

/// Slot overhead per decade of `n` (see [`slot_overhead`]).
pub const OVERHEAD_PER_DECADE: f64 = math::RIBBON_OVERHEAD_PER_DECADE;

/// Slots for `n` keys: 0 for `n = 0`, else `n·(1 + slot_overhead(n))` rounded up to a
/// multiple of `w`, at least `w` ([`math::ribbon_slots`]).
pub fn num_slots(n: u64) -> Result<u64> {
    math::ribbon_slots(n, WIDTH)
}

/// Solution bytes for `slots` slots of `r` bits (`slots` a multiple of `w`).
fn solution_words(slots: u64, r: u32) -> Option<u64> {
    (slots / WIDTH)
        .checked_mul(u64::from(r))?
        .checked_mul(Row::WORDS as u64)
}

/// A Standard Ribbon filter over `u128` rows with `r`-bit results, generic over the hash
/// scheme. Static: built once from the whole key set by [`build`](RibbonFilter::build);
/// `insert` through the [`Filter`](bloomlab_core::Filter) trait returns [`Error::Static`].
///
/// `len()` is the number of keys it was built from (repeats included).
#[derive(Clone)]
pub struct RibbonFilter<S: HashScheme = Xxh3Scheme> {
    /// The solution, in blocks of 64 slots ([`Blocks64`]; the byte format's layout is in
    /// [`band`]).
    columns: Blocks64,
    num_slots: u64,
    /// The result bits `r`, the seed and the layout (how keys become equations: the envelope
    /// version), with what a query derives from them and `num_slots`, precomputed.
    probe: Probe,
    meta: Meta<S>,
}

impl RibbonFilter<Xxh3Scheme> {
    /// Build from every key of the set at target FPR `fpr` (`r = ceil(log2(1/p))`).
    ///
    /// Errors: `p` not in (0, 1) or below `2^-32`, a size that does not fit in memory, or
    /// (with probability below 10^-32) [`Error::Full`] after [`MAX_SEEDS`] failed seeds.
    pub fn build<K: Key>(keys: impl IntoIterator<Item = K>, fpr: f64) -> Result<Self> {
        Self::build_with_scheme(keys, fpr, Xxh3Scheme)
    }

    /// Decode the checked, versioned format written by [`to_bytes`](Self::to_bytes).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_bytes_with_scheme(bytes, Xxh3Scheme)
    }
}

impl<S: HashScheme> RibbonFilter<S> {
    /// [`build`](RibbonFilter::build) with a chosen hash scheme.
    pub fn build_with_scheme<K: Key>(
        keys: impl IntoIterator<Item = K>,
        fpr: f64,
        scheme: S,
    ) -> Result<Self> {
        Self::build_in(Layout::OneHash, keys, fpr, scheme)
    }

    /// [`build_with_scheme`](Self::build_with_scheme) in a chosen layout (the first one only
    /// to write files for readers that predate the second).
    pub fn build_in<K: Key>(
        layout: Layout,
        keys: impl IntoIterator<Item = K>,
        fpr: f64,
        scheme: S,
    ) -> Result<Self> {
        let r = result_bits_for(fpr)?;
        let hashes: Vec<KeyHash> = keys
            .into_iter()
            .map(|k| hash_in(layout, &scheme, &k))
            .collect();
        let mut f = Self::from_hashes_in(layout, &hashes, r, scheme)?;
        f.meta.set_target_fpr(Some(fpr));
        Ok(f)
    }

    /// Build in the first layout ([`Layout::Fmix128`]) from keys already hashed with
    /// `scheme`'s 128-bit [`hash`](HashScheme::hash), with `r` result bits (1 to 32). Query
    /// it with [`might_contain_hash`](Self::might_contain_hash) on the same hashes, or by key.
    pub fn from_hashes(hashes: &[KeyHash], result_bits: u32, scheme: S) -> Result<Self> {
        Self::from_hashes_in(Layout::Fmix128, hashes, result_bits, scheme)
    }

    /// Build in `layout` from hashes [`hash_in`] gave for it, with `r` result bits (1 to 32).
    pub fn from_hashes_in(
        layout: Layout,
        hashes: &[KeyHash],
        result_bits: u32,
        scheme: S,
    ) -> Result<Self> {
        if !(1..=MAX_RESULT_BITS).contains(&result_bits) {
            return Err(Error::invalid(
                "result_bits",
                format!("must be 1 to {MAX_RESULT_BITS} (got {result_bits})"),
            ));
        }
        let n = hashes.len() as u64;
        let m = num_slots(n)?;
        let words_len = solution_words(m, result_bits)
            .and_then(|w| usize::try_from(w).ok())
            .ok_or_else(|| Error::SizeOverflow(format!("{m} slots of {result_bits} bits")))?;
        let meta = Meta::new(n, None, scheme).with_count(n);
        if m == 0 {
            return Ok(RibbonFilter {
                columns: Blocks64::from_columns(&[], result_bits),
                num_slots: 0,
                probe: Probe::new(layout, 0, result_bits, 0),
                meta,
            });
        }
        let mut band = Banding::<Row>::new(
            usize::try_from(m).map_err(|_| Error::SizeOverflow(format!("{m} slots")))?,
        )?;
        let starts = m - WIDTH + 1;
        let mask = result_mask(result_bits);
        let mut sorted = Vec::new();
        for seed in 0..MAX_SEEDS {
            if seed > 0 {
                band.clear();
            }
            // This attempt's loops compiled for the layout, chosen once.
            let solvable = by_layout!(layout, R => {
                sort_by_block::<R>(hashes, seed, starts, m / WIDTH, &mut sorted);
                sorted.iter().all(|&h| {
                    let (s, c, v) = R::row::<Row>(h, seed, starts);
                    band.add(s, c, v & mask)
                })
            });
            if solvable {
                drop(sorted);
                let columns = Blocks64::from_columns(
                    &band.solve(result_bits, u64::from(seed) ^ 0x5eed),
                    result_bits,
                );
                debug_assert_eq!(columns.len(), words_len);
                return Ok(RibbonFilter {
                    columns,
                    num_slots: m,
                    probe: Probe::new(layout, m, result_bits, seed),
                    meta,
                });
            }
        }
        Err(Error::Full(format!(
            "no seed of {MAX_SEEDS} solved {n} keys in {m} slots"
        )))
    }

    /// Assemble from parts, checking what a decoder checks: `num_slots` is what
    /// [`num_slots`] gives for `count`, `result_bits` in 1..=32 (and `ceil(log2(1/p))` when a
    /// target is given), a seed below [`MAX_SEEDS`], and a solution of exactly
    /// `num_slots/128 · r · 2` words. The first layout ([`Layout::Fmix128`]); see
    /// [`from_parts_in`](Self::from_parts_in) for the second.
    pub fn from_parts(
        words: Vec<u64>,
        num_slots: u64,
        result_bits: u32,
        seed: u32,
        count: u64,
        target_fpr: Option<f64>,
        scheme: S,
    ) -> Result<Self, DecodeError> {
        Self::from_parts_in(
            Layout::Fmix128,
            words,
            num_slots,
            result_bits,
            seed,
            count,
            target_fpr,
            scheme,
        )
    }

    /// [`from_parts`](Self::from_parts) in `layout`.
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts_in(
        layout: Layout,
        words: Vec<u64>,
        num_slots: u64,
        result_bits: u32,
        seed: u32,
        count: u64,
        target_fpr: Option<f64>,
        scheme: S,
    ) -> Result<Self, DecodeError> {
        validate(num_slots, result_bits, seed, count, target_fpr)?;
        let want = solution_words(num_slots, result_bits);
        if want != Some(words.len() as u64) {
            return Err(DecodeError::field(
                "words",
                format!(
                    "{} words for {num_slots} slots of {result_bits} bits",
                    words.len()
                ),
            ));
        }
        let columns = Blocks64::from_format_words(&words, result_bits);
        Ok(RibbonFilter {
            columns,
            num_slots,
            probe: Probe::new(layout, num_slots, result_bits, seed),
            meta: Meta::new(count, target_fpr, scheme).with_count(count),
        })
    }

    /// `false`: the key was definitely not in the set. `true`: maybe.
    #[inline(always)]
    pub fn might_contain<K: Key + ?Sized>(&self, key: &K) -> bool {
        // The second layout with the inline kernel, inline; the rest out of line, so that a
        // loop of lookups tests neither.
        if let (Layout::OneHash, Some(kernel)) = (self.probe.layout, self.probe.kernel) {
            let h = hash_in(Layout::OneHash, self.meta.scheme(), key);
            return self
                .probe
                .answer_inline(Layout::OneHash, kernel, &self.columns, h);
        }
        self.contains_other(self.hash_key(key))
    }

    /// [`might_contain`](Self::might_contain) for the first layout or without the inline
    /// kernel, out of line.
    #[inline(never)]
    fn contains_other(&self, h: KeyHash) -> bool {
        self.might_contain_hash(h)
    }

    /// A key's hash as this filter's layout needs it ([`hash_in`]): what
    /// [`might_contain_hash`](Self::might_contain_hash) takes.
    #[inline(always)]
    pub fn hash_key<K: Key + ?Sized>(&self, key: &K) -> KeyHash {
        hash_in(self.probe.layout, self.meta.scheme(), key)
    }

    /// How this filter turns keys into equations (the envelope version it writes).
    pub fn layout(&self) -> Layout {
        self.probe.layout
    }

    /// Query with a hash from [`hash_key`](Self::hash_key) (for a filter of the first layout,
    /// the scheme's 128-bit hash): `r` parities over one contiguous stretch of `3·r·64`
    /// solution bits ([`Blocks64::query`]).
    #[inline]
    pub fn might_contain_hash(&self, h: KeyHash) -> bool {
        if let Some(kernel) = self.probe.kernel {
            return self
                .probe
                .answer_inline(self.probe.layout, kernel, &self.columns, h);
        }
        simd::run_parity(HashLookup {
            words: &self.columns,
            probe: self.probe,
            hash: h,
        })
    }

    /// Answer many keys at once: `out[i] = might_contain(keys[i])`. The key [`BATCH`]
    /// positions ahead is hashed and the stretch of solution its query reads is prefetched
    /// while key `i` is answered, so many lookups' memory accesses are in flight at once (a
    /// single lookup is long enough, ≈ 90 instructions inlined, that the CPU's reorder window
    /// holds only five or six, each reading three or four lines). A solution of at most
    /// [`SINGLE_LOOP_UP_TO`] bytes, in cache, is answered key by key instead where single
    /// lookups are inline (the same answers; faster there). Errors (changing nothing) if `out` is not exactly as long as
    /// `keys`.
    pub fn might_contain_batch<K: Key>(&self, keys: &[K], out: &mut [bool]) -> Result<()> {
        if keys.len() != out.len() {
            return Err(Error::invalid(
                "out",
                format!("{} answers for {} keys", out.len(), keys.len()),
            ));
        }
        self.batch(keys, |i, hit| out[i] = hit);
        Ok(())
    }

    /// How many of `keys` answer "maybe" ([`might_contain_batch`](Self::might_contain_batch)
    /// without the answer buffer).
    pub fn count_contained<K: Key>(&self, keys: &[K]) -> usize {
        let mut hits = 0;
        self.batch(keys, |_, hit| hits += usize::from(hit));
        hits
    }

    /// The batched lookup: each key's equation is derived [`BATCH`] keys early and the
    /// stretch of solution it reads prefetched; `answer(i, hit)` for every key in order.
    #[inline(always)]
    fn batch<K: Key>(&self, keys: &[K], answer: impl FnMut(usize, bool)) {
        if self.num_slots == 0 || self.batch_by_single_lookups() {
            let mut answer = answer;
            for (i, key) in keys.iter().enumerate() {
                answer(i, self.might_contain(key));
            }
            return;
        }
        simd::run_parity(Batch {
            filter: self,
            keys,
            answer,
        });
    }

    /// Whether a batch is answered key by key rather than through the prefetching ring: where
    /// a single lookup is inline (the current layout, with the inline kernel) and the solution
    /// fits in cache ([`SINGLE_LOOP_UP_TO`]). Speed only: both give every key's answer.
    #[inline(always)]
    fn batch_by_single_lookups(&self) -> bool {
        let inline = self.probe.layout == Layout::OneHash && self.probe.kernel.is_some();
        inline && self.columns.len() * 8 <= SINGLE_LOOP_UP_TO
    }

    /// Start loading the stretch of solution a row starting at slot `start` reads (every
    /// 64-byte line of it; `num_slots > 0`).
    #[inline(always)]
    fn prefetch(&self, start: usize) {
        let words = self.columns.stretch(start);
        // Eight words per 64-byte line, and the last word's line in case the stretch does
        // not start on a line.
        for w in words.iter().step_by(8) {
            simd::prefetch(w);
        }
        if let Some(w) = words.last() {
            simd::prefetch(w);
        }
    }

    /// Slots `m` of the solution (a multiple of 128; 0 for an empty set).
    pub fn num_slots(&self) -> u64 {
        self.num_slots
    }
    /// Result bits `r`.
    pub fn result_bits(&self) -> u32 {
        self.probe.r
    }
    /// The seed construction settled on (the number of failed seeds before it).
    pub fn seed(&self) -> u32 {
        self.probe.seed
    }
    /// Keys it was built from.
    pub fn len(&self) -> u64 {
        self.meta.count()
    }
    /// Built from no keys (answers `false` to everything).
    pub fn is_empty(&self) -> bool {
        self.meta.count() == 0
    }
    /// The target FPR, if built from one.
    pub fn target_fpr(&self) -> Option<f64> {
        self.meta.target_fpr()
    }
    /// The hash scheme.
    pub fn scheme(&self) -> &S {
        self.meta.scheme()
    }
    /// Solution bits, `m · r`.
    pub fn table_bits(&self) -> u64 {
        self.num_slots * u64::from(self.probe.r)
    }
    /// Solution bits per key (infinite when empty).
    pub fn bits_per_item(&self) -> f64 {
        if self.is_empty() {
            f64::INFINITY
        } else {
            self.table_bits() as f64 / self.len() as f64
        }
    }
    /// The FPR: `2^-r`, or 0 for an empty set.
    pub fn expected_fpr(&self) -> f64 {
        if self.num_slots == 0 {
            0.0
        } else {
            fpr_for_result_bits(self.probe.r)
        }
    }
    /// The solution ([`Blocks64`]; [`band::query`] reads it as the byte format's 128-slot
    /// columns).
    pub fn columns(&self) -> &Blocks64 {
        &self.columns
    }

    /// The solution as 64-bit words, each column low word first (the byte format's order).
    pub fn words(&self) -> impl Iterator<Item = u64> + '_ {
        self.columns.format_words()
    }

    /// Encode in the checked, versioned envelope (version 2 for the second layout, 1 for the
    /// first: [`Layout::format_version`]) with this payload (little-endian):
    /// `num_slots: u64 | result_bits: u32 | seed: u32 | count: u64 | target_fpr: f64 (0 =
    /// none) | num_slots/128 · r · 2 solution words` (layout in [`band`]). 32 bytes of header
    /// and payload fields, then the solution: [`RibbonView`] reads it in place.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = EnvelopeWriter::with_version(
            Variant::Ribbon,
            self.meta.descriptor(),
            self.probe.layout.format_version(),
            PAYLOAD_FIELDS + self.size_in_bytes(),
        );
        w.u64(self.num_slots)
            .u32(self.probe.r)
            .u32(self.probe.seed)
            .u64(self.meta.count())
            .f64(format::encode_optional_fpr(self.meta.target_fpr()));
        let buf = w.buffer();
        for word in self.columns.format_words() {
            buf.extend_from_slice(&word.to_le_bytes());
        }
        w.finish()
    }

    /// Decode [`to_bytes`](Self::to_bytes) output, probing with `scheme`. Refuses another
    /// scheme or key, damaged bytes and every invalid field. Never panics.
    pub fn from_bytes_with_scheme(bytes: &[u8], scheme: S) -> Result<Self> {
        let p = Parsed::open(bytes, &scheme)?;
        let words = p
            .solution
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect();
        Ok(Self::from_parts_in(
            p.layout,
            words,
            p.num_slots,
            p.result_bits,
            p.seed,
            p.count,
            p.target_fpr,
            scheme,
        )?)
    }
}

/// Counting sort of the hashes by the block their row starts in (for `seed`), into `out`.
/// Banding in this order walks the band front to back, so its rows stay in cache; the order
/// of equations does not change the system or whether it is solvable.
fn sort_by_block<R: Rule>(
    hashes: &[KeyHash],
    seed: u32,
    starts: u64,
    blocks: u64,
    out: &mut Vec<KeyHash>,
) {
    let block_of = |h: KeyHash| (R::start(h, seed, starts) / WIDTH) as usize;
    let mut offsets = vec![0usize; blocks as usize + 1];
    for &h in hashes {
        offsets[block_of(h) + 1] += 1;
    }
    for i in 1..offsets.len() {
        offsets[i] += offsets[i - 1];
    }
    out.clear();
    out.resize(hashes.len(), KeyHash { h1: 0, h2: 0 });
    for &h in hashes {
        let b = block_of(h);
        out[offsets[b]] = h;
        offsets[b] += 1;
    }
}

/// The second layout's seeded hash `y = (x ^ seed_word(seed)) · M0`, from which
/// [`row_one_hash`] derives the whole equation and `Rule::start` the start alone.
#[inline(always)]
fn one_hash_seeded(x: u64, seed: u32) -> u64 {
    (x ^ seed_word(seed)).wrapping_mul(ONE_HASH_MULTIPLIERS[0])
}

#[inline(always)]
fn seed_word(seed: u32) -> u64 {
    u64::from(seed).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// Bytes of the payload before the solution.
const PAYLOAD_FIELDS: usize = 32;

fn result_mask(r: u32) -> u32 {
    if r >= 32 { u32::MAX } else { (1u32 << r) - 1 }
}

/// What a query needs to know of a filter (the owned one and the view): its layout, the
/// number of start slots (0 for an empty filter), `r`, the mask of `r` bits and the seed. The
/// one place a filter keeps `r`, the seed and the layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Probe {
    layout: Layout,
    starts: u64,
    r: u32,
    mask: u32,
    seed: u32,
    /// The inline column kernel for width `r`, if this CPU runs it (chosen at construction).
    kernel: Option<ColumnQuery>,
}

impl Probe {
    fn new(layout: Layout, num_slots: u64, r: u32, seed: u32) -> Self {
        Probe {
            layout,
            // m − w + 1 starts (m is 0 or at least w).
            starts: num_slots.saturating_sub(WIDTH - 1),
            r,
            mask: result_mask(r),
            seed,
            kernel: ColumnKernel::detect().and_then(|k| k.for_width(r as usize)),
        }
    }

    /// The query of the owned filter with the inline kernel: hash, row and columns inlined
    /// into the caller, no call into a feature-enabled body.
    #[inline(always)]
    fn answer_inline(
        self,
        layout: Layout,
        kernel: ColumnQuery,
        words: &Blocks64,
        h: KeyHash,
    ) -> bool {
        if self.starts == 0 {
            return false;
        }
        let (s, c, v) = row_in::<Row>(layout, h, self.seed, self.starts);
        match words.query_inline(kernel, s, c) {
            Some(bits) => bits == v & self.mask,
            None => Self::answer_called(self, words, h),
        }
    }

    /// [`answer`](Self::answer) through [`simd::run_parity`], out of line.
    #[inline(never)]
    fn answer_called(self, words: &Blocks64, h: KeyHash) -> bool {
        simd::run_parity(HashLookup {
            words,
            probe: self,
            hash: h,
        })
    }

    /// The query shared by the owned filter and the borrowed view, with parity `p` (run
    /// inside [`simd::run_parity`], so that hash, row and columns compile into one body).
    #[inline(always)]
    fn answer<P: Parity, M: Solution + ?Sized>(self, p: P, words: &M, h: KeyHash) -> bool {
        if self.starts == 0 {
            return false;
        }
        let (s, c, v) = row_in::<Row>(self.layout, h, self.seed, self.starts);
        words.query(p, self.r, s, c) == v & self.mask
    }
}

/// One lookup of a hash already computed, as a [`ParityTask`].
struct HashLookup<'a, M: ?Sized> {
    words: &'a M,
    probe: Probe,
    hash: KeyHash,
}

impl<M: Solution + ?Sized> ParityTask for HashLookup<'_, M> {
    type Output = bool;
    #[inline(always)]
    fn run<P: Parity>(self, p: P) -> bool {
        self.probe.answer(p, self.words, self.hash)
    }
}

/// A batch's whole loop as one [`ParityTask`]: each key's equation is derived [`BATCH`]
/// keys early and the stretch of solution it reads prefetched (`num_slots > 0`).
struct Batch<'a, S: HashScheme, K, F> {
    filter: &'a RibbonFilter<S>,
    keys: &'a [K],
    answer: F,
}

impl<S: HashScheme, K: Key, F: FnMut(usize, bool)> ParityTask for Batch<'_, S, K, F> {
    type Output = ();
    #[inline(always)]
    fn run<P: Parity>(self, p: P) {
        let Batch {
            filter: f,
            keys,
            mut answer,
        } = self;
        let Probe {
            layout,
            starts,
            mask,
            seed,
            kernel,
            ..
        } = f.probe;
        // The layout chosen once for the batch: the loop below is compiled for it.
        by_layout!(layout, R => {
            let derive = |k: &K| R::row::<Row>(R::hash(f.meta.scheme(), k), seed, starts);
            Self::pipeline(f, keys, p, derive, kernel, mask, &mut answer)
        })
    }
}

impl<S: HashScheme, K: Key, F: FnMut(usize, bool)> Batch<'_, S, K, F> {
    /// The batch's loop with `derive` (a key's equation) for the filter's layout.
    #[inline(always)]
    fn pipeline<P: Parity>(
        f: &RibbonFilter<S>,
        keys: &[K],
        p: P,
        derive: impl Fn(&K) -> (usize, Row, u32),
        kernel: Option<ColumnQuery>,
        mask: u32,
        answer: &mut F,
    ) {
        let prefetch = |&(s, _, _): &(usize, Row, u32)| f.prefetch(s);
        match kernel {
            // The inline kernel of single lookups (AVX-512 where the CPU has it); `None` only
            // for a width it does not take, which `for_width` already refused.
            Some(q) => simd::pipeline::<K, (usize, Row, u32), BATCH>(
                keys,
                derive,
                prefetch,
                |i, (s, c, v)| {
                    let bits = f.columns.query_inline(q, s, c);
                    answer(
                        i,
                        bits.unwrap_or_else(|| f.columns.query(p, s, c)) == v & mask,
                    )
                },
            ),
            None => simd::pipeline::<K, (usize, Row, u32), BATCH>(
                keys,
                derive,
                prefetch,
                |i, (s, c, v)| answer(i, f.columns.query(p, s, c) == v & mask),
            ),
        }
    }
}

/// Field checks shared by `from_parts`, the byte decoder and the view.
fn validate(
    slots: u64,
    result_bits: u32,
    seed: u32,
    count: u64,
    target_fpr: Option<f64>,
) -> Result<(), DecodeError> {
    if !(1..=MAX_RESULT_BITS).contains(&result_bits) {
        return Err(DecodeError::field(
            "result_bits",
            format!("must be 1 to {MAX_RESULT_BITS} (got {result_bits})"),
        ));
    }
    format::validate_optional_fpr(target_fpr)?;
    if let Some(p) = target_fpr
        && result_bits_for(p).ok() != Some(result_bits)
    {
        return Err(DecodeError::field(
            "result_bits",
            format!("{result_bits} is not ceil(log2(1/{p}))"),
        ));
    }
    if seed >= MAX_SEEDS {
        return Err(DecodeError::field(
            "seed",
            format!("must be below {MAX_SEEDS} (got {seed})"),
        ));
    }
    if num_slots(count).ok() != Some(slots) {
        return Err(DecodeError::field(
            "num_slots",
            format!("{slots} slots is not the sizing for {count} keys"),
        ));
    }
    Ok(())
}

/// The envelope opened and its fields validated; the solution still as bytes.
struct Parsed<'a> {
    layout: Layout,
    num_slots: u64,
    result_bits: u32,
    seed: u32,
    count: u64,
    target_fpr: Option<f64>,
    solution: &'a [u8],
}

impl<'a> Parsed<'a> {
    fn open<S: HashScheme>(bytes: &'a [u8], scheme: &S) -> Result<Self, DecodeError> {
        let versions = [Layout::Fmix128, Layout::OneHash].map(Layout::format_version);
        let (version, payload) = format::open_expecting_versions(
            bytes,
            Variant::Ribbon,
            scheme.descriptor(),
            &versions,
        )?;
        let layout = Layout::from_format_version(version).expect("one of the versions asked for");
        let mut r = Reader::new(payload);
        let num_slots = r.u64()?;
        let result_bits = r.u32()?;
        let seed = r.u32()?;
        let count = r.u64()?;
        let target_fpr = format::decode_optional_fpr(r.f64()?)?;
        validate(num_slots, result_bits, seed, count, target_fpr)?;
        let words = solution_words(num_slots, result_bits)
            .ok_or_else(|| DecodeError::field("num_slots", "solution size overflows"))?;
        let solution = r.take_u64_len(words.saturating_mul(8))?;
        r.finish()?;
        Ok(Parsed {
            layout,
            num_slots,
            result_bits,
            seed,
            count,
            target_fpr,
            solution,
        })
    }
}

bloomlab_core::try_from_bytes!(RibbonFilter);

/// Static: built from the whole key set ([`Declared::with_fpr_and_scheme`](bloomlab_core::Declared::with_fpr_and_scheme)
/// is [`Error::Static`]); its FPR is `2^-r` whatever its contents; no fill.
impl<S: HashScheme> bloomlab_core::Declared for RibbonFilter<S> {
    const DECLARATION: bloomlab_core::Declaration = bloomlab_core::Declaration {
        variant: Variant::Ribbon,
        versions: &[format::FORMAT_VERSION, format::RIBBON_ONE_HASH_VERSION],
        changes: bloomlab_core::declare::Changes::Static,
        deletes: false,
        no_union: Some(
            "a Ribbon filter is static: it is solved for its key set and takes no more keys",
        ),
        design: "static, w = 128, r = ceil(log2(1/p)) (FPR 2^-r), (1 + 0.008 log10 n) n slots, one xxh3-64 per key (format version 2)",
    };
    fn with_fpr_and_scheme(_n: u64, _fpr: f64, _scheme: S) -> Result<Self> {
        Err(Error::Static("RibbonFilter"))
    }
    fn build_with_scheme<K: Key>(keys: &[K], fpr: f64, scheme: S) -> Result<Self> {
        Self::build_with_scheme(keys, fpr, scheme)
    }
    fn from_bytes_with_scheme(bytes: &[u8], scheme: S) -> Result<Self> {
        Self::from_bytes_with_scheme(bytes, scheme)
    }
    fn to_bytes(&self) -> Vec<u8> {
        self.to_bytes()
    }
}

impl<S: HashScheme> FilterCore for RibbonFilter<S> {
    bloomlab_core::key_methods!(static);
    fn size_in_bytes(&self) -> usize {
        self.columns.len() * 8
    }
    fn table_bits(&self) -> u64 {
        RibbonFilter::table_bits(self)
    }
    fn hashes(&self) -> u32 {
        self.probe.r
    }
    fn expected_fpr(&self) -> f64 {
        RibbonFilter::expected_fpr(self)
    }
    fn same_table(&self, other: &Self) -> bool {
        self.probe.layout == other.probe.layout
            && self.num_slots == other.num_slots
            && self.probe.r == other.probe.r
            && self.probe.seed == other.probe.seed
            && self.columns == other.columns
    }
    fn debug_shape(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("num_slots", &self.num_slots)
            .field("result_bits", &self.probe.r);
    }
    fn debug_state(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("seed", &self.probe.seed)
            .field("layout", &self.probe.layout);
    }
}

filter_glue!(RibbonFilter, Ribbon);

#[cfg(feature = "serde")]
mod serde_impl {
    //! serde support: the same fields as the byte format, validated the same way on the way
    //! in. Only schemes constructible with `Default` (unkeyed) deserialize.
    use super::*;
    use bloomlab_core::hash::SchemeDescriptor;
    use bloomlab_core::meta::deserialize_checked;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    /// One representation both ways (the solution is re-packed as 64-bit words either way).
    #[derive(Serialize, Deserialize)]
    struct Repr {
        /// The layout's envelope version (absent, as before the second layout: 1).
        #[serde(default = "first_version")]
        format_version: u16,
        num_slots: u64,
        result_bits: u32,
        seed: u32,
        count: u64,
        target_fpr: Option<f64>,
        scheme: SchemeDescriptor,
        words: Vec<u64>,
    }

    fn first_version() -> u16 {
        format::FORMAT_VERSION
    }

    impl<S: HashScheme> Serialize for RibbonFilter<S> {
        fn serialize<Z: Serializer>(&self, s: Z) -> Result<Z::Ok, Z::Error> {
            Repr {
                format_version: self.probe.layout.format_version(),
                num_slots: self.num_slots,
                result_bits: self.probe.r,
                seed: self.probe.seed,
                count: self.meta.count(),
                target_fpr: self.meta.target_fpr(),
                scheme: self.meta.descriptor(),
                words: self.words().collect(),
            }
            .serialize(s)
        }
    }

    impl<'de, S: HashScheme + Default> Deserialize<'de> for RibbonFilter<S> {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            deserialize_checked(
                d,
                |r: &Repr| r.scheme,
                |r: Repr, scheme| {
                    let layout = Layout::from_format_version(r.format_version)
                        .ok_or(DecodeError::UnsupportedVersion(r.format_version))?;
                    RibbonFilter::from_parts_in(
                        layout,
                        r.words,
                        r.num_slots,
                        r.result_bits,
                        r.seed,
                        r.count,
                        r.target_fpr,
                        scheme,
                    )
                },
            )
        }
    }
}
