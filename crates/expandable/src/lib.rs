//! An expandable filter: a cuckoo-style bucket table that grows by small steps whenever it
//! fills, with no size hint, keeping its FPR below the target at every point of its growth
//! and its load near [`MAX_LOAD`] all the way.
//!
//! # What it guarantees
//!
//! - **Grows from any start.** [`ExpandableFilter::new`] starts at 2 buckets; an insert never
//!   fails for lack of room. An insert fails only with [`Error::SizeOverflow`] (the grown
//!   table could not be allocated, or it would pass `2^(`[`MAX_LEVEL`]` + 1)` buckets) or
//!   with [`Error::TooManyCopies`] (the key is held [`MAX_COPIES`] times already; see
//!   *Repeated inserts*). The filter is then unchanged.
//! - **Memory follows the distinct keys, not the inserts**, and every insert is O(1)
//!   amortised whatever came before it: a key is held at most [`MAX_COPIES`] times, and a
//!   repeat is stored only where a slot is free.
//! - **No false negatives**, through every growth step and every delete of an inserted key.
//! - **FPR ≤ target at every size**: [`math::fpr_bound`] is `≤ ε` after any number of rounds
//!   (derivation in [`math`]), and [`expected_fpr`](Filter::expected_fpr) is the union bound
//!   at the current contents.
//! - **Deletes** of inserted keys ([`RemovableFilter`]). Removing a key that tests negative
//!   changes nothing and returns `false`. Removing a key that was never inserted but tests
//!   positive can, as in every cuckoo or counting filter, take away another key's entry.
//!
//! # Design (which papers, what changes, why)
//!
//! It follows the taffy cuckoo filter (Apple, "Taffy Filters", 2021) and InfiniFilter (Dayan
//! et al., SIGMOD 2023): fingerprints are hash *prefixes*, and splitting a bucket moves one
//! fingerprint bit of each of its entries into the bucket index, so no key is needed to
//! expand; new entries get fingerprints that widen slowly ([`math::new_entry_bits`]) so that
//! the sum of every round's share of the FPR converges. Where those double the table, this
//! one grows it as linear hashing does (Litwin 1980): buckets split one after another.
//!
//! - **Table.** `N = 2^k + s` buckets of 4 slots ([`bloomlab_cuckoo::BucketTable`],
//!   bit-packed), `0 ≤ s < 2^k`. Buckets `0..s` and their images `2^k..N` are *split*
//!   (level `k + 1`); buckets `s..2^k` are not yet (level `k`). Each slot is `W` bits: a flag
//!   bit (top) and a `W − 1`-bit *code* `fp | 1 << r` holding an `r`-bit fingerprint under a
//!   unary length marker, so one table holds entries of every age (0 = empty slot).
//! - **Where a key goes.** Its 64-bit hash `h` ([`HashScheme::hash64`]); `β = h mod 2^k`.
//!   Home bucket: `h mod 2^(k+1)` if `β < s`, else `β`; the home's code holds the hash bits
//!   after the home's level. Alternate bucket: `β ⊕ G(t)`, `G(t) = 1 + fastrange(t·φ,
//!   2^k − 1)` with `t` the low [`ALT_BITS`] bits of `h >> k` and `φ` the 64-bit golden
//!   ratio — always below `2^k`, never the home.
//! - **The flag** says the entry sits in its alternate bucket; there it keeps its *level-`k`
//!   code* (the hash bits from `k` on, one bit more than a split home's code), so it stays
//!   valid while its home splits. A lookup compares only unflagged slots of the home (against
//!   `h >> level(home)`) and flagged slots of the alternate (against `h >> k`): 8 slots,
//!   half of them skipped by the flag, as in a plain cuckoo filter's 8 comparisons.
//! - **Insert** is cuckoo insertion: first the two buckets, then one move of look-ahead (an
//!   entry of a full bucket that can move to a free slot of its other bucket), then a random
//!   walk of up to [`MAX_KICKS`] kicks, looking one move ahead at every step. Before an
//!   insert that would pass [`MAX_LOAD`] of the slots, or [`LOWER_LOAD`] of the slots below
//!   `2^k` (which take every alternate), the table grows one *step*: the next
//!   `2^k >> `[`GROWTH_SHIFT`] buckets (1/16 of `2^k`) are split. A failed kick chain leaves
//!   the entry in a small stash that lookups search, grows a step and places the stash again.
//! - **A split** of bucket `b` moves each unflagged entry by its code's lowest bit to `b` or
//!   `b + 2^k` (an entry with no bit left is copied into both); flagged entries, here or
//!   homed here, stay where they are. The appended bucket is empty and takes at most the 4
//!   entries of its sibling, so a split never fails and touches two buckets.
//! - **A round** ends when `s` reaches `2^k`, in place: every flagged entry's code loses a
//!   bit and its alternate moves, so those entries are taken out and placed again; the
//!   others stay where they are. When the schedule changes the slot width, the slots are
//!   copied into a table of the new width. New entries get `F` level-`k` bits by (3) of
//!   [`math`].
//! - **The union bound is kept exactly** (integer units) and a round is cut short when an
//!   insert would lift it past [`math::fpr_bound`] for the round; removes lower it.
//!
//! What it changes from the papers, and why: InfiniFilter and Aleph expand a *quotient*
//! filter by doubling and widen fingerprints by a fixed `1/i²`-style series; here the table is
//! a cuckoo table (two buckets, constant-time lookups, deletes, and this workspace's
//! bit-packed bucket table), it grows by steps of 1/16 so its load stays near [`MAX_LOAD`]
//! instead of falling to half at every doubling, and the widths come from a greedy budget with
//! a telescoping reserve. The price of keeping alternates in level-`k` form is one bit per
//! slot; the unsplit buckets, which receive twice the keys of split ones, lean on their
//! alternates, so at mid-round the half below `2^k` runs fuller than the table, and its own
//! limit ([`LOWER_LOAD`]) adds steps: the load stays between about 0.70 and 0.9 (mean 0.78
//! over a growth), where a doubling table's falls to half.
//!
//! **Lookup** matches a bucket's slots a word at a time: the 4 slots in one 64-bit word for
//! `W ≤ 16`; up to 32, the bucket's first and last 64 bits, 2 slots each (the `Lanes` masks,
//! computed per slot width). With `t = (code ^ q) | 2^(W−1)` per lane, a lane's code is a
//! prefix of the query when `t`'s lowest set bit (`t & −t`, negated per lane) exceeds
//! `code >> 1`; the home bucket keeps the unflagged lanes and the alternate the flagged ones:
//! about a dozen word operations per word, all on 64 bits, and every read stays within the
//! bucket (a `W = 16` bucket is one word). The stash is searched only for homes its 64-bit
//! summary names.
//!
//! # Repeated inserts (hot keys)
//!
//! [`insert`](ExpandableFilter::insert) is a multiset insert: every accepted call stores one
//! more entry. The *copies* of a key are the entries that answer for it (the entries a lookup
//! of it matches: its own, whatever round made them, and any other key's whose code is a
//! prefix of its hash). They sit in its two buckets or, when a kick chain failed, in the
//! stash. The rule:
//!
//! - **At most [`MAX_COPIES`] = 4 copies of a key** (one bucket's worth; why not 8: see
//!   [`MAX_COPIES`]). An insert of a key that tests positive counts its copies first (a
//!   lookup, then its two buckets and, if the stash's summary names its home, the stash); at
//!   4 it is refused with [`Error::TooManyCopies`]`(4)`. A refusal costs that, never grows the table, never adds
//!   to the stash, never raises the FPR bound's measure, and leaves the key testing positive.
//!   Below 4 a repeat is an ordinary insert. A key never inserted is refused the same way
//!   when 4 entries answer for it — in practice old copies of one key, whose codes the
//!   rounds have shortened to a few bits — and it tests positive either way.
//! - So a key holds at most 4 entries however often and in however many rounds it is
//!   inserted (entries of earlier rounds count: they answer for it): the memory depends on
//!   the distinct keys, at most 4 entries each, and every insert is O(1) amortised whatever
//!   came before it.
//! - **`remove` undoes exactly one accepted insert** (it removes the longest matching
//!   entry): a key accepted `c` times tests positive until it has been removed `c` times.
//!   Refused inserts stored nothing and must not be removed.
//! - Copies take slots: a stream heavy in repeats grows the table for its copies (up to 4
//!   per key). A "seen" filter uses [`insert_unique`](ExpandableFilter::insert_unique)
//!   (one lookup, insert only if the key tests negative) and holds one entry per key.
//!
//! # Complexity
//!
//! Lookup: two bucket reads, 8 slot compares (plus the stash, usually empty). Insert:
//! amortised O(1) — a step splits `2^k/16` buckets, and a round's end places every entry once
//! again only for the entries at alternates (the others are at their level-`k + 1` place
//! already), once per doubling of the item count. Remove: two bucket reads. Space: `W·4·N`
//! bits, about `W/0.78` bits per item on average with `W = F + 2` (14 bits at 1 % over the
//! first rounds).
//!
//! # Format (version 2, frozen; version 1 refused)
//!
//! The checked envelope of [`bloomlab_core::format`] (variant tag 8, version
//! [`FORMAT_VERSION`] = 2) around, little-endian: `u64` count, `u64` start capacity, `f64`
//! target FPR, `u8` start level `k0`, `u8` level `k`, `u8` slot width `W`, `u8` new-entry
//! fingerprint bits `F`, `u64` split buckets `s`, `u64` stash length then `(u64 home, u64
//! code)` per stash entry (home-level codes), and the table: `ceil(4·(2^k + s)·W / 8)` bytes
//! of bit-packed slots (slot `j` of bucket `b` at bit `(4b + j)·W`). Decoding validates every
//! field and every slot against the schedule (flagged entries only below `2^k`, with at least
//! [`ALT_BITS`] bits; every level-`k` code within `W − 1` bits) and costs one pass over the
//! bytes. Version 1 (the doubling table) decodes to
//! [`DecodeError::UnsupportedVersion`]`(1)`.
//!
//! # Example
//!
//! ```
//! use bloomlab_expandable::ExpandableFilter;
//! use bloomlab_core::Filter;
//!
//! // No size hint: grow from 2 buckets to 200 000 keys at a 1 % target.
//! let mut f = ExpandableFilter::new(0.01)?;
//! for i in 0..200_000u64 {
//!     f.insert(&i)?;
//! }
//! assert_eq!(f.level(), 16); // 2^16 ≤ buckets < 2^17
//! assert!(f.load() > 0.7);
//! assert!((0..200_000u64).all(|i| f.might_contain(&i))); // no false negatives
//! // The FPR is below the target (the union bound, and a measured rate with 5σ slack).
//! assert!(f.expected_fpr() <= 0.01);
//! let probes = 200_000u64;
//! let fp = (1u64 << 40..(1u64 << 40) + probes).filter(|i| f.might_contain(i)).count();
//! assert!((fp as f64) < 0.01 * probes as f64 + 5.0 * (0.01 * probes as f64).sqrt());
//! // Deletes: the count drops, every other key stays.
//! assert!(f.remove(&7u64));
//! assert_eq!(f.len(), 199_999);
//! assert!((8..200_000u64).all(|i| f.might_contain(&i)));
//!
//! // A hot key: 4 copies at most; further inserts are refused at once.
//! let refused = (0..100_000).filter(|_| f.insert("hot").is_err()).count();
//! assert_eq!((refused, f.copies("hot")), (100_000 - 4, 4));
//! assert_eq!(f.insert("hot"), Err(bloomlab_core::Error::TooManyCopies(4)));
//! assert_eq!(f.insert_unique("hot"), Ok(false)); // set semantics: present, nothing stored
//! assert!((0..4).all(|_| f.remove("hot")));
//! assert_eq!(f.copies("hot"), 0);
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

use alloc::{
    format,
    string::{String, ToString},
    vec::Vec,
};
#[cfg(not(feature = "std"))]
use bloomlab_core::math::float::FloatMath as _;

extern crate alloc;

mod lanes;
pub mod math;
mod stash;

use core::fmt;

use bloomlab_core::error::{DecodeError, Error, Result};
use bloomlab_core::format::{self, EnvelopeWriter, Reader, Variant};
use bloomlab_core::hash::{HashScheme, Xxh3Scheme, fastrange};
use bloomlab_core::meta::{FilterCore, Meta};
use bloomlab_core::{Key, RemovableFilter, filter_glue};
use bloomlab_cuckoo::{BUCKET_SIZE, BucketTable};

pub use bloomlab_core::Filter;

use lanes::{Lanes, bucket_bits, bucket_ends};
use stash::Stash;

/// The envelope version this crate writes and reads: 2, the table that grows by splitting
/// buckets in order (version 1, the doubling table, is refused as
/// [`DecodeError::UnsupportedVersion`]`(1)`).
pub const FORMAT_VERSION: u16 = format::EXPANDABLE_SPLIT_VERSION;
/// Most of its slots the table fills before it grows by a step.
pub const MAX_LOAD: f64 = 0.9;
/// Most of the slots below `2^k` (which take every alternate, and the unsplit buckets' twice
/// as many keys) that fill before the table grows a step.
pub const LOWER_LOAD: f64 = 0.92;
/// Fingerprint bits that choose the alternate bucket; entries with fewer bits left stay in
/// their home bucket. 256 alternates per bucket keep a 4-slot table fillable past 90 %.
pub const ALT_BITS: u32 = 8;
/// Kicks an insert tries before it grows the table instead.
pub const MAX_KICKS: usize = 500;
/// Largest level: at most `2^(40+1)` buckets.
pub const MAX_LEVEL: u32 = 40;
/// Widest fingerprint of a new entry (a slot is `F + 2 ≤ 32` bits).
pub const MAX_FP_BITS: u32 = 30;
/// A growth step adds `2^k >> GROWTH_SHIFT` buckets (at least 1): 1/16 of the round's base.
pub const GROWTH_SHIFT: u32 = 4;
/// Most copies (entries answering for it) one key gets: an insert past it is refused with
/// [`Error::TooManyCopies`] (see the crate docs, *Repeated inserts*). 4 = one bucket: with 8
/// (both of a key's buckets) the copies of the hottest keys leave bucket pairs that hold
/// nothing else, every kick walk that enters one fails, and failures fill the stash and
/// grow the table (the harness's `zipf-inserts` at 10^5 keys and 10^6 inserts, `run --n 1000
/// --experiment-n 1e4 --experiments zipf-inserts --filters expandable` with this constant at
/// 8: 7 µs per insert and 7.2× the distinct keys' memory by 0.93·10^6 inserts; at 4: 133 ns
/// and 4.1× over the whole stream).
pub const MAX_COPIES: u32 = BUCKET_SIZE;

const SLOTS: u64 = BUCKET_SIZE as u64;

/// An expandable filter over hash scheme `S`. See the crate docs.
///
/// `len()` counts successful inserts (repeats included) minus successful removals.
#[derive(Clone)]
pub struct ExpandableFilter<S: HashScheme = Xxh3Scheme> {
    table: BucketTable,
    /// `k`: the table has `2^k ≤ N < 2^(k+1)` buckets.
    level: u32,
    /// `s = N − 2^k`: buckets `0..s` and `2^k..N` are split (level `k + 1`).
    split: u64,
    /// `k0`: the level it started at.
    start_level: u32,
    /// `F`: level-`k` fingerprint bits of entries created in this round.
    fp_bits: u32,
    /// `Σ 2^-L` over stored entries (`L` the prefix length), in units of `2^-(k + 31)`.
    measure: u128,
    /// The most `measure` may reach in this round: [`math::fpr_bound`] in the same units.
    limit: u128,
    /// Entries stored (table and stash); voids copied at a split count twice.
    occupied: u64,
    /// Entries in buckets below `2^k` (the half that takes every alternate).
    lower: u64,
    /// Entries stored by `L − k`, the length of their level-`k` code.
    hist: [u64; 32],
    /// Entries out of the table, sorted by home then code.
    stash: Stash,
    /// Lane masks of the slot width.
    lanes: Lanes,
    meta: Meta<S>,
}

/// An entry out of the table: its home bucket and its code `fp | 1 << r` at the home's level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    home: u64,
    code: u64,
}

/// Where an entry is: `Ok((bucket, slot))` in the table, `Err(index)` in the stash.
type Place = Result<(u64, u32), usize>;

use bloomlab_core::hash::splitmix64 as splitmix;

/// Fingerprint length of a non-zero code.
#[inline(always)]
fn code_len(code: u64) -> u32 {
    63 - code.leading_zeros()
}

/// Whether the non-zero `code` is a prefix of the query bits `q`.
#[inline(always)]
fn code_matches(code: u64, q: u64) -> bool {
    (code ^ q) & ((1u64 << code_len(code)) - 1) == 0
}

/// [`math::fpr_bound`] after `expansion` rounds, in units of `2^-(level + 31)`.
fn limit_units(target: f64, expansion: u32, level: u32) -> Result<u128> {
    let bound = math::fpr_bound(target, expansion)?;
    Ok((bound * f64::from(level + 31).exp2()) as u128)
}

/// Whether an entry whose level-`k` code is `code` knows its alternate bucket.
#[inline(always)]
fn movable_entry(code: u64) -> bool {
    code >> ALT_BITS != 0
}

/// The first table for `capacity` items: `N = max(2, ceil(capacity / (4·MAX_LOAD)))` buckets
/// as `(k, s)` with `N = 2^k + s`, `s < 2^k`; at most `2^`[`MAX_LEVEL`] buckets (past it, a
/// size error).
fn start_for(capacity: u64) -> Result<(u32, u64)> {
    let buckets = (capacity as f64 / (SLOTS as f64 * MAX_LOAD))
        .ceil()
        .max(2.0);
    if buckets > f64::from(MAX_LEVEL).exp2() {
        return Err(Error::SizeOverflow(format!(
            "{capacity} items need more than 2^{MAX_LEVEL} buckets"
        )));
    }
    let n = buckets as u64;
    let level = 63 - n.leading_zeros();
    Ok((level, n - (1 << level)))
}

impl ExpandableFilter<Xxh3Scheme> {
    /// An empty filter of 2 buckets for target FPR `fpr`.
    pub fn new(fpr: f64) -> Result<Self> {
        Self::with_fpr_and_scheme(1, fpr, Xxh3Scheme)
    }

    /// An empty filter whose first table holds `start_capacity` items (it still grows past
    /// them): the sizing constructor every variant has. Errors: `start_capacity = 0`, `fpr`
    /// not in (0, 1), and [`Error::SizeOverflow`] for a start past `2^`[`MAX_LEVEL`] buckets
    /// or an `fpr` that needs fingerprints wider than [`MAX_FP_BITS`] bits (below ≈ 10^-8).
    pub fn with_fpr(start_capacity: u64, fpr: f64) -> Result<Self> {
        Self::with_fpr_and_scheme(start_capacity, fpr, Xxh3Scheme)
    }

    /// The former name of [`with_fpr`](Self::with_fpr).
    #[deprecated(
        since = "0.2.0",
        note = "renamed `with_fpr`, as every variant's sizing constructor"
    )]
    pub fn with_start(start_capacity: u64, fpr: f64) -> Result<Self> {
        Self::with_fpr(start_capacity, fpr)
    }

    /// Decode the checked, versioned format written by [`to_bytes`](Self::to_bytes).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_bytes_with_scheme(bytes, Xxh3Scheme)
    }
}

impl<S: HashScheme> ExpandableFilter<S> {
    /// The former name of [`with_fpr_and_scheme`](Self::with_fpr_and_scheme).
    #[deprecated(
        since = "0.2.0",
        note = "renamed `with_fpr_and_scheme`, as every variant's"
    )]
    pub fn with_start_and_scheme(start_capacity: u64, fpr: f64, scheme: S) -> Result<Self> {
        Self::with_fpr_and_scheme(start_capacity, fpr, scheme)
    }

    /// [`with_fpr`](ExpandableFilter::with_fpr) with a chosen hash scheme.
    pub fn with_fpr_and_scheme(start_capacity: u64, fpr: f64, scheme: S) -> Result<Self> {
        bloomlab_core::math::validate_items(start_capacity)?;
        bloomlab_core::math::validate_fpr(fpr)?;
        let (level, split) = start_for(start_capacity)?;
        let fp_bits = math::new_entry_bits(fpr, 0)?;
        Ok(ExpandableFilter {
            table: BucketTable::new((1 << level) + split, fp_bits + 2)?,
            level,
            split,
            start_level: level,
            fp_bits,
            measure: 0,
            limit: limit_units(fpr, 0, level)?,
            occupied: 0,
            lower: 0,
            hist: [0; 32],
            stash: Stash::default(),
            lanes: Lanes::for_width(fp_bits + 2),
            meta: Meta::new(start_capacity, Some(fpr), scheme),
        })
    }

    /// Insert a typed key (one more copy if it is there already). Errors when the key has
    /// [`MAX_COPIES`] copies already ([`Error::TooManyCopies`]) or the table cannot grow
    /// (memory, or [`MAX_LEVEL`]); the filter is then unchanged.
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<()> {
        key.with_key_bytes(|b| FilterCore::insert_bytes(self, b))
    }

    /// Insert a typed key only if it tests negative: `Ok(true)` inserted, `Ok(false)` it
    /// maybe was there already and nothing changed (one hash, one lookup). A "seen" filter
    /// fed through it holds one entry per key whatever the stream repeats; errors as
    /// [`insert`](Self::insert).
    pub fn insert_unique<K: Key + ?Sized>(&mut self, key: &K) -> Result<bool> {
        key.with_key_bytes(|b| {
            let h = self.meta.scheme().hash64(b);
            if self.contains_hash(h) {
                return Ok(false);
            }
            self.insert_hash(h).map(|()| true)
        })
    }

    /// The buckets an insert of the key uses now: its home, and its alternate if its entry
    /// has one (a diagnostic: which keys crowd the same two buckets).
    pub fn buckets<K: Key + ?Sized>(&self, key: &K) -> (u64, Option<u64>) {
        key.with_key_bytes(|b| {
            let e = self.new_entry(self.meta.scheme().hash64(b));
            (e.home, self.alternate(e).map(|a| a.0))
        })
    }

    /// The key's copies: the entries a lookup of it matches (in its home, its alternate and
    /// the stash), at most [`MAX_COPIES`] but for entries of other keys that also match it.
    pub fn copies<K: Key + ?Sized>(&self, key: &K) -> u32 {
        key.with_key_bytes(|b| self.copies_of(self.meta.scheme().hash64(b)))
    }

    /// Query a typed key.
    pub fn might_contain<K: Key + ?Sized>(&self, key: &K) -> bool {
        key.with_key_bytes(|b| FilterCore::might_contain_bytes(self, b))
    }

    /// Remove one occurrence of a typed key; see [`RemovableFilter::remove_bytes`].
    pub fn remove<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        key.with_key_bytes(|b| self.remove_bytes(b))
    }

    /// `k`: the table has between `2^k` and `2^(k+1) − 1` buckets.
    pub fn level(&self) -> u32 {
        self.level
    }
    /// Rounds (doublings of the bucket count) completed since the start.
    pub fn expansions(&self) -> u32 {
        self.level - self.start_level
    }
    /// Number of buckets `N = 2^k + s`.
    pub fn num_buckets(&self) -> u64 {
        self.table.num_buckets()
    }
    /// Buckets split in this round, `s`.
    pub fn split_buckets(&self) -> u64 {
        self.split
    }
    /// Level-`k` fingerprint bits of entries created now.
    pub fn fingerprint_bits(&self) -> u32 {
        self.fp_bits
    }
    /// Slot width `W` in bits.
    pub fn slot_bits(&self) -> u32 {
        self.table.fingerprint_bits()
    }
    /// The bit-packed table: slot values `flag << (W − 1) | fp | 1 << r` (0 = empty).
    pub fn table(&self) -> &BucketTable {
        &self.table
    }
    /// Entries held in the stash.
    pub fn stash_len(&self) -> usize {
        self.stash.len()
    }
    /// Occupied slots over all slots.
    pub fn load(&self) -> f64 {
        (self.occupied - self.stash.len() as u64) as f64 / self.table.slots() as f64
    }
    /// The FPR bound of [`math::fpr_bound`] in this round (`≤` the target).
    pub fn fpr_bound(&self) -> f64 {
        math::fpr_bound(self.target(), self.expansions()).unwrap_or(f64::NAN)
    }
    /// The target FPR.
    pub fn target(&self) -> f64 {
        self.meta.target_fpr().unwrap_or(f64::NAN)
    }

    #[inline(always)]
    fn flag_bit(&self) -> u32 {
        1 << (self.table.fingerprint_bits() - 1)
    }

    /// `2^k`, the first bucket of the upper region.
    #[inline(always)]
    fn base(&self) -> u64 {
        1u64 << self.level
    }

    /// Whether bucket `b` is split (its entries' codes start at bit `k + 1`).
    #[inline(always)]
    fn is_split(&self, b: u64) -> bool {
        b >= self.base() || b < self.split
    }

    /// `G(t) = 1 + fastrange(t·φ, 2^k − 1)` (`φ` the 64-bit golden ratio, `t` the low
    /// [`ALT_BITS`] of `bits`): the xor distance between a level-`k` bucket and an entry's
    /// alternate, never 0 and below `2^k`.
    #[inline(always)]
    fn offset(&self, bits: u64) -> u64 {
        let t = bits & ((1 << ALT_BITS) - 1);
        1 + fastrange(t.wrapping_mul(0x9e37_79b9_7f4a_7c15), self.base() - 1)
    }

    /// The level-`k` code of an entry stored at its home `b` with home-level code `code`.
    #[inline(always)]
    fn level_k_code(&self, b: u64, code: u64) -> u64 {
        if self.is_split(b) {
            (code << 1) | ((b >> self.level) & 1)
        } else {
            code
        }
    }

    /// The entry whose level-`k` code `ck` has its level-`k` bucket `beta`.
    #[inline(always)]
    fn entry_of_level_k(&self, beta: u64, ck: u64) -> Entry {
        if beta < self.split {
            Entry {
                home: beta | ((ck & 1) << self.level),
                code: ck >> 1,
            }
        } else {
            Entry {
                home: beta,
                code: ck,
            }
        }
    }

    /// The alternate bucket of an entry, if it has one: `(bucket, level-k code)`.
    #[inline(always)]
    fn alternate(&self, e: Entry) -> Option<(u64, u64)> {
        let ck = self.level_k_code(e.home, e.code);
        movable_entry(ck).then(|| ((e.home & (self.base() - 1)) ^ self.offset(ck), ck))
    }

    /// A key's home bucket, its home-level query bits, its alternate and its level-`k` bits.
    #[inline(always)]
    fn locate(&self, h: u64) -> (u64, u64, u64, u64) {
        let k = self.level;
        let beta = h & ((1u64 << k) - 1);
        let split = u32::from(beta < self.split);
        let home = beta | (h & (u64::from(split) << k));
        let qk = h >> k;
        (home, h >> (k + split), beta ^ self.offset(qk), qk)
    }

    /// [`bucket_bits`] of this table's `bucket`.
    #[inline(always)]
    fn bucket_bits(&self, bucket: u64) -> u64 {
        bucket_bits(&self.table, bucket)
    }

    /// [`bucket_ends`] of this table's `bucket`.
    #[inline(always)]
    fn bucket_ends(&self, bucket: u64) -> (u64, u64) {
        bucket_ends(&self.table, bucket, self.lanes.hi_from)
    }

    /// Whether any slot of `raw` (4 lanes of `w` bits) holds an entry whose flag equals
    /// `want` (0 or `flag`) and whose code is a prefix of `q`, slot by slot: the reference
    /// [`Lanes::hit`] is tested against.
    #[cfg(test)]
    fn lanes_hit(raw: u64, w: u32, flag: u64, want: u64, q: u64) -> bool {
        let lane = (1u64 << w) - 1;
        let mut hit = false;
        for s in 0..BUCKET_SIZE {
            hit |= Self::slot_hit((raw >> (s * w)) & lane, flag, want, q);
        }
        hit
    }

    /// [`lanes_hit`](Self::lanes_hit) for one slot value.
    #[cfg(test)]
    fn slot_hit(slot: u64, flag: u64, want: u64, q: u64) -> bool {
        let code = slot & (flag - 1);
        // `code | 1` keeps the length defined for an empty slot, which `code != 0` drops.
        let len_mask = (1u64 << code_len(code | 1)) - 1;
        (slot & flag == want) & (code != 0) & ((code ^ q) & len_mask == 0)
    }

    #[inline(always)]
    fn contains_hash(&self, h: u64) -> bool {
        let (home, q, alt, qk) = self.locate(h);
        let w = self.table.fingerprint_bits();
        let lanes = &self.lanes;
        let (qc, qkc) = (q & lanes.code, qk & lanes.code);
        let lo = &lanes.lo;
        // Both buckets, unconditionally and without branches: a branch on the first
        // bucket's answer is unpredictable at mixed hit rates, and a mispredict discards
        // the memory reads of the lookups already under way behind it.
        let hit = if w <= 16 {
            lo.home(self.bucket_bits(home), lo.spread(qc))
                | lo.alt(self.bucket_bits(alt), lo.spread(qkc))
        } else {
            lanes.home_wide(self.bucket_ends(home), qc) | lanes.alt_wide(self.bucket_ends(alt), qkc)
        };
        (hit != 0)
            | (self.stash.may_hold(home)
                && self.stash_from(home).any(|(_, e)| code_matches(e.code, q)))
    }

    /// Stash entries with this home (the stash is sorted by home, then code).
    fn stash_from(&self, home: u64) -> impl Iterator<Item = (usize, &Entry)> {
        let start = self.stash.partition_point(|e| e.home < home);
        self.stash[start..]
            .iter()
            .take_while(move |e| e.home == home)
            .enumerate()
            .map(move |(i, e)| (start + i, e))
    }

    fn stash_insert(&mut self, e: Entry) {
        self.stash.insert(e);
    }

    /// Put `code` in an empty slot of `bucket`, flagged if `alt`.
    #[inline(always)]
    fn put(&mut self, bucket: u64, code: u64, alt: bool) -> bool {
        let raw = code as u32 | if alt { self.flag_bit() } else { 0 };
        let w = self.table.fingerprint_bits();
        // The first empty slot, from one read of the bucket where it fits a word.
        let empty = if 4 * w <= 64 {
            let b = self.bucket_bits(bucket);
            let lane = (1u64 << w) - 1;
            (0..BUCKET_SIZE).find(|&s| (b >> (s * w)) & lane == 0)
        } else {
            (0..BUCKET_SIZE).find(|&s| self.table.get(bucket, s) == 0)
        };
        match empty {
            Some(s) => {
                self.table.set(bucket, s, raw);
                self.lower += u64::from(bucket < self.base());
                true
            }
            None => false,
        }
    }

    /// The entry in slot value `raw` of `bucket` (non-empty), as (entry, movable).
    #[inline(always)]
    fn entry_at(&self, bucket: u64, raw: u32) -> (Entry, bool) {
        let flag = self.flag_bit();
        let code = u64::from(raw & (flag - 1));
        if raw & flag != 0 {
            (
                self.entry_of_level_k(bucket ^ self.offset(code), code),
                true,
            )
        } else {
            let e = Entry { home: bucket, code };
            (e, movable_entry(self.level_k_code(bucket, code)))
        }
    }

    /// Cuckoo insertion of `e`; returns the entry left in hand if the kicks ran out.
    fn place(&mut self, mut e: Entry, seed: u64) -> Option<Entry> {
        if self.put(e.home, e.code, false) {
            return None;
        }
        let mut alt = self.alternate(e);
        if let Some((b, ck)) = alt
            && self.put(b, ck, true)
        {
            return None;
        }
        // Look one move ahead from both buckets before walking.
        if self.make_room(e.home, e.code as u32) {
            return None;
        }
        if let Some((b, ck)) = alt
            && self.make_room(b, ck as u32 | self.flag_bit())
        {
            return None;
        }
        let mut rng = seed;
        let mut bucket = match alt {
            Some((b, _)) if splitmix(&mut rng) & 1 == 1 => b,
            _ => e.home,
        };
        for _ in 0..MAX_KICKS {
            let start = (splitmix(&mut rng) % SLOTS) as u32;
            let pick = |this: &Self, b: u64| {
                (0..BUCKET_SIZE)
                    .map(|d| (start + d) % BUCKET_SIZE)
                    .map(|s| (s, this.table.get(b, s)))
                    .find(|&(_, raw)| raw != 0 && this.entry_at(b, raw).1)
            };
            let victim = pick(self, bucket).or_else(|| {
                // Only entries too short to move: kick from the entry's other bucket.
                let other = if bucket == e.home { alt?.0 } else { e.home };
                bucket = other;
                pick(self, bucket)
            });
            let Some((s, raw)) = victim else {
                return Some(e);
            };
            let mine = if bucket == e.home {
                e.code as u32
            } else {
                alt.expect("an entry away from home has an alternate").1 as u32 | self.flag_bit()
            };
            self.table.set(bucket, s, mine);
            let (v, _) = self.entry_at(bucket, raw);
            e = v;
            alt = self.alternate(e);
            let other = if raw & self.flag_bit() != 0 {
                e.home
            } else {
                alt.expect("a kicked entry is movable").0
            };
            let placed = if other == e.home {
                self.put(other, e.code, false)
            } else {
                self.put(other, alt.expect("movable").1, true)
            };
            if placed {
                return None;
            }
            bucket = other;
            let mine = if bucket == e.home {
                e.code as u32
            } else {
                alt.expect("movable").1 as u32 | self.flag_bit()
            };
            if self.make_room(bucket, mine) {
                return None;
            }
        }
        Some(e)
    }

    /// One move of look-ahead: if an entry of the full `bucket` can move to an empty slot
    /// of its other bucket, move it there and put `mine` (a slot value) in its place.
    fn make_room(&mut self, bucket: u64, mine: u32) -> bool {
        let flag = self.flag_bit();
        for s in 0..BUCKET_SIZE {
            let raw = self.table.get(bucket, s);
            let (v, movable) = self.entry_at(bucket, raw);
            if raw == 0 || !movable {
                continue;
            }
            let moved = if raw & flag != 0 {
                self.put(v.home, v.code, false)
            } else {
                let (o, ck) = self.alternate(v).expect("movable");
                self.put(o, ck, true)
            };
            if moved {
                self.table.set(bucket, s, mine);
                return true;
            }
        }
        false
    }

    fn load_limit(&self) -> u64 {
        (MAX_LOAD * self.table.slots() as f64) as u64
    }

    /// The most entries the buckets below `2^k` take before the table grows a step.
    fn lower_limit(&self) -> u64 {
        (LOWER_LOAD * (SLOTS << self.level) as f64) as u64
    }

    /// Measure units of one entry whose level-`k` code has length `r`.
    #[inline(always)]
    fn units(r: u32) -> u128 {
        1u128 << (31 - r)
    }

    fn measure_of(hist: &[u64; 32]) -> u128 {
        hist.iter()
            .enumerate()
            .map(|(r, &n)| u128::from(n) << (31 - r))
            .sum()
    }

    /// One growth step: split the next `2^k >> GROWTH_SHIFT` buckets, or finish the round.
    /// On error nothing has changed.
    fn grow(&mut self) -> Result<()> {
        let base = self.base();
        let step = (base >> GROWTH_SHIFT).max(1);
        let next = (self.split + step).min(base);
        if next == base {
            return self.next_round();
        }
        self.table.extend_to(base + next)?;
        self.split_range(next);
        Ok(())
    }

    /// Split buckets `s..next` (the table already has `2^k + next` buckets): each unflagged
    /// entry moves by its code's lowest bit, a void is copied into both; flagged entries stay.
    fn split_range(&mut self, next: u64) {
        let base = self.base();
        let flag = self.flag_bit();
        for b in self.split..next {
            for s in 0..BUCKET_SIZE {
                let raw = self.table.get(b, s);
                if raw == 0 || raw & flag != 0 {
                    continue;
                }
                let code = u64::from(raw);
                if code == 1 {
                    // A void covers both halves: a copy in each, one bit longer.
                    let copied = self.put(b | base, 1, false);
                    debug_assert!(copied, "a new bucket takes its sibling's 4 entries");
                    self.hist[0] -= 1;
                    self.hist[1] += 2;
                    self.occupied += 1;
                } else if code & 1 == 1 {
                    self.table.set(b, s, 0);
                    self.lower -= 1;
                    let moved = self.put(b | base, code >> 1, false);
                    debug_assert!(moved, "a new bucket takes its sibling's 4 entries");
                } else {
                    self.table.set(b, s, (code >> 1) as u32);
                }
            }
        }
        if !self.stash.is_empty() {
            let (lo, hi) = (self.split, next);
            let mut out = Vec::with_capacity(self.stash.len());
            for e in self.stash.take() {
                if e.home >= hi || e.home < lo {
                    out.push(e);
                } else if e.code == 1 {
                    out.push(e);
                    out.push(Entry {
                        home: e.home | base,
                        code: 1,
                    });
                    self.hist[0] -= 1;
                    self.hist[1] += 2;
                    self.occupied += 1;
                } else {
                    out.push(Entry {
                        home: e.home | ((e.code & 1) << self.level),
                        code: e.code >> 1,
                    });
                }
            }
            out.sort_by_key(|e| (e.home, e.code));
            self.stash.set(out);
        }
        self.split = next;
    }

    /// Finish the round, in place: split the buckets left, then move to level `k + 1`. Every
    /// entry's code is now at level `k + 1` where it sits, except at alternates, where the
    /// level-`k` code loses its lowest bit and the alternate moves: those entries are taken
    /// out and placed again. The slot width follows the schedule (a copy of the slots when it
    /// changes). On error nothing has changed.
    fn next_round(&mut self) -> Result<()> {
        let level = self.level + 1;
        if level > MAX_LEVEL {
            return Err(Error::SizeOverflow(format!(
                "an expandable filter has at most 2^{MAX_LEVEL} buckets"
            )));
        }
        let target = self.target();
        let expansion = level - self.start_level;
        let fp_bits = math::new_entry_bits(target, expansion)?;
        let limit = limit_units(target, expansion, level)?;
        let base = self.base();
        // Level-(k + 1) codes are one bit shorter than level-k ones (a void's copies, at
        // level-k length 1 after the split, become voids again).
        let widest = (1..32).rev().find(|&r| self.hist[r] > 0).unwrap_or(1) as u32 - 1;
        let width = fp_bits.max(widest) + 2;
        // Split what is left, in the wider of the two tables (codes at alternates shrink by one
        // bit at the level change, so a narrower table can only take the others, after it).
        let old = self.table.fingerprint_bits();
        let mut fresh = if width != old {
            Some(BucketTable::new(base << 1, width)?)
        } else {
            None
        };
        if width > old {
            let t = fresh.take().expect("a new table");
            self.copy_into(t);
        } else {
            self.table.extend_to(base << 1)?;
        }
        self.split_range(base);
        // Take out the entries at alternates, as (home, level-(k + 1) code); then a narrower
        // table takes the rest.
        let flag = self.flag_bit();
        let mut moving = Vec::new();
        for b in 0..base {
            for s in 0..BUCKET_SIZE {
                let raw = self.table.get(b, s);
                if raw & flag != 0 {
                    moving.push(self.entry_at(b, raw).0);
                    self.table.set(b, s, 0);
                }
            }
        }
        if let Some(t) = fresh {
            self.copy_into(t);
        }
        self.level = level;
        self.split = 0;
        self.fp_bits = fp_bits;
        self.limit = limit;
        self.hist.copy_within(1.., 0);
        self.hist[31] = 0;
        self.measure = Self::measure_of(&self.hist);
        self.lower = self.occupied - self.stash.len() as u64 - moving.len() as u64;
        for e in moving {
            if let Some(hand) = self.place(e, e.home ^ e.code.rotate_left(32)) {
                self.stash_insert(hand);
            }
        }
        Ok(())
    }

    /// Copy every slot into `t` (as many buckets or more, another slot width that holds
    /// every code), which becomes the table.
    fn copy_into(&mut self, mut t: BucketTable) {
        let flag = self.flag_bit();
        let new_flag = 1u32 << (t.fingerprint_bits() - 1);
        for b in 0..self.table.num_buckets() {
            for s in 0..BUCKET_SIZE {
                let raw = self.table.get(b, s);
                if raw != 0 {
                    let moved = if raw & flag != 0 { new_flag } else { 0 };
                    t.set(b, s, (raw & (flag - 1)) | moved);
                }
            }
        }
        self.lanes = Lanes::for_width(t.fingerprint_bits());
        self.table = t;
    }

    /// Place stash entries again (after a growth step made room).
    fn retry_stash(&mut self) {
        for e in self.stash.take() {
            if let Some(hand) = self.place(e, e.home ^ e.code.rotate_left(32)) {
                self.stash_insert(hand);
            }
        }
    }

    /// The entry a new insert of hash `h` makes at the current level and schedule.
    #[inline(always)]
    fn new_entry(&self, h: u64) -> Entry {
        let (home, _, _, qk) = self.locate(h);
        let ck = (qk & ((1u64 << self.fp_bits) - 1)) | (1u64 << self.fp_bits);
        self.entry_of_level_k(home & (self.base() - 1), ck)
    }

    /// Entries matching hash `h`, as a lookup matches them: unflagged at its home against the
    /// home-level bits, flagged at its alternate against the level-`k` bits, and in the stash
    /// (searched only when its summary names the home).
    fn copies_of(&self, h: u64) -> u32 {
        let (home, q, alt, qk) = self.locate(h);
        let flag = self.flag_bit();
        let mut n = 0;
        for s in 0..BUCKET_SIZE {
            let raw = self.table.get(home, s);
            n += u32::from(raw != 0 && raw & flag == 0 && code_matches(u64::from(raw), q));
            let raw = self.table.get(alt, s);
            n += u32::from(raw & flag != 0 && code_matches(u64::from(raw ^ flag), qk));
        }
        if self.stash.may_hold(home) {
            n += self
                .stash_from(home)
                .filter(|(_, e)| code_matches(e.code, q))
                .count() as u32;
        }
        n
    }

    #[inline]
    fn insert_hash(&mut self, h: u64) -> Result<()> {
        // The copy rule first, before anything changes: a refused copy never grows the table.
        if self.contains_hash(h) {
            let copies = self.copies_of(h);
            if copies >= MAX_COPIES {
                return Err(Error::TooManyCopies(copies));
            }
        }
        if self.occupied + 1 > self.load_limit() || self.lower + 1 > self.lower_limit() {
            self.grow()?;
        }
        if self.measure + Self::units(self.fp_bits) > self.limit {
            self.next_round()?;
        }
        let e = self.new_entry(h);
        self.measure += Self::units(self.fp_bits);
        self.occupied += 1;
        self.hist[self.fp_bits as usize] += 1;
        if let Some(hand) = self.place(e, h) {
            // The key is stored either way: in the stash now, and placed again after a
            // growth step if the table is at least half full (a failed step is retried, and
            // reported, by the next insert). Below half full the failure comes from copies
            // of one key crowding its two buckets, which no growth separates: they stay in
            // the stash, at most `MAX_COPIES` of them per key (the copy rule above).
            self.stash_insert(hand);
            if 2 * self.occupied >= self.table.slots() && self.grow().is_ok() {
                self.retry_stash();
            }
        }
        self.meta.record_insert();
        Ok(())
    }

    /// The most specific entry matching `h`: (bucket, slot) or a stash index, and the length
    /// of its level-`k` code.
    fn find_longest(&self, h: u64) -> Option<(Place, u32)> {
        let (home, q, alt, qk) = self.locate(h);
        let extra = u32::from(self.is_split(home));
        let flag = self.flag_bit();
        let mut best: Option<(Place, u32)> = None;
        let mut consider = |at, code: u64, q: u64, extra: u32| {
            if code != 0 && code_matches(code, q) {
                let r = code_len(code) + extra;
                if best.is_none_or(|(_, br)| r > br) {
                    best = Some((at, r));
                }
            }
        };
        for s in 0..BUCKET_SIZE {
            let raw = self.table.get(home, s);
            if raw & flag == 0 {
                consider(Ok((home, s)), u64::from(raw), q, extra);
            }
            let raw = self.table.get(alt, s);
            if raw & flag != 0 {
                consider(Ok((alt, s)), u64::from(raw ^ flag), qk, 0);
            }
        }
        for (i, e) in self.stash_from(home) {
            consider(Err(i), e.code, q, extra);
        }
        best
    }

    /// Encode in the checked, versioned format (see the crate docs).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = EnvelopeWriter::with_version(
            Variant::Expandable,
            self.meta.descriptor(),
            FORMAT_VERSION,
            72 + self.table.byte_len() + self.stash.len() * 16,
        );
        w.u64(self.meta.count())
            .u64(self.meta.capacity())
            .f64(self.target())
            .u8(self.start_level as u8)
            .u8(self.level as u8)
            .u8(self.table.fingerprint_bits() as u8)
            .u8(self.fp_bits as u8)
            .u64(self.split)
            .u64(self.stash.len() as u64);
        for e in self.stash.iter() {
            w.u64(e.home).u64(e.code);
        }
        self.table.write_le_bytes(w.buffer());
        w.finish()
    }

    /// Decode bytes written with `scheme` (its descriptor must match the recorded one).
    /// Version 1 (the doubling table) is refused with
    /// [`DecodeError::UnsupportedVersion`]`(1)`.
    pub fn from_bytes_with_scheme(bytes: &[u8], scheme: S) -> Result<Self> {
        let (_, payload) = format::open_expecting_versions(
            bytes,
            Variant::Expandable,
            scheme.descriptor(),
            &[FORMAT_VERSION],
        )?;
        Ok(Self::decode_payload(payload, scheme)?)
    }

    fn decode_payload(payload: &[u8], scheme: S) -> Result<Self, DecodeError> {
        fn bad(field: &'static str, why: impl Into<String>) -> DecodeError {
            DecodeError::field(field, why)
        }
        let mut r = Reader::new(payload);
        let count = r.u64()?;
        let start_capacity = r.u64()?;
        let target = r.f64()?;
        let start_level = u32::from(r.u8()?);
        let level = u32::from(r.u8()?);
        let width = u32::from(r.u8()?);
        let fp_bits = u32::from(r.u8()?);
        let split = r.u64()?;
        let stash_len = r.u64()?;
        if start_capacity == 0 || start_for(start_capacity).ok().map(|s| s.0) != Some(start_level) {
            return Err(bad("start", "start capacity and start level disagree"));
        }
        if !(target > 0.0 && target < 1.0) {
            return Err(bad("target_fpr", format!("{target} is not in (0, 1)")));
        }
        if level < start_level || level > MAX_LEVEL {
            return Err(bad(
                "level",
                format!("{level} outside {start_level}..={MAX_LEVEL}"),
            ));
        }
        let base = 1u64 << level;
        if split >= base {
            return Err(bad("split", format!("{split} not below 2^{level}")));
        }
        let expansion = level - start_level;
        let want = math::new_entry_bits(target, expansion)
            .map_err(|e| bad("target_fpr", e.to_string()))?;
        if fp_bits != want {
            return Err(bad(
                "fp_bits",
                format!("{fp_bits}, the schedule says {want}"),
            ));
        }
        let widest = math::widest_entry_bits(target, expansion)
            .map_err(|e| bad("target_fpr", e.to_string()))?;
        if width < fp_bits + 2 || width > widest + 2 {
            return Err(bad(
                "slot_bits",
                format!("{width} outside {}..={}", fp_bits + 2, widest + 2),
            ));
        }
        let stash_bytes = stash_len
            .checked_mul(16)
            .ok_or_else(|| bad("stash_len", "overflows"))?;
        let mut stash_r = Reader::new(r.take_u64_len(stash_bytes)?);
        let table = BucketTable::from_le_bytes(r.take(r.remaining())?, base + split, width)?;
        let mut f = ExpandableFilter {
            table,
            level,
            split,
            start_level,
            fp_bits,
            measure: 0,
            limit: limit_units(target, expansion, level)
                .map_err(|e| bad("target_fpr", e.to_string()))?,
            occupied: 0,
            lower: 0,
            hist: [0; 32],
            stash: Stash::with_capacity(stash_len.min(1 << 16) as usize),
            lanes: Lanes::for_width(width),
            meta: Meta::new(start_capacity, Some(target), scheme).with_count(count),
        };
        f.count_table(base, width)?;
        f.read_stash(&mut stash_r, stash_len, base + split, width)?;
        f.measure = Self::measure_of(&f.hist);
        if count > f.occupied {
            return Err(bad(
                "count",
                format!("{count} keys in {} entries", f.occupied),
            ));
        }
        if f.measure > f.limit {
            return Err(bad("table", "more entries than the FPR bound allows"));
        }
        f.stash.shrink_to_fit();
        Ok(f)
    }

    /// Whether a decoded level-k code fits: it fits `W − 1` bits with its marker. (Flagged
    /// entries have an alternate, so they sit below 2^k with at least ALT_BITS bits.)
    fn decoded_code_fits(&self, b: u64, code: u64, width: u32) -> bool {
        code != 0 && code_len(self.level_k_code(b, code)) < width - 1
    }

    /// Decoding: checks every occupied slot of the table read and counts it in `hist`,
    /// `occupied` and `lower`.
    fn count_table(&mut self, base: u64, width: u32) -> Result<(), DecodeError> {
        let flag = self.flag_bit();
        for b in 0..self.table.num_buckets() {
            for s in 0..BUCKET_SIZE {
                let raw = self.table.get(b, s);
                if raw == 0 {
                    continue;
                }
                let code = u64::from(raw & (flag - 1));
                let r_k = if raw & flag != 0 {
                    (b < base && movable_entry(code)).then(|| code_len(code))
                } else {
                    self.decoded_code_fits(b, code, width)
                        .then(|| code_len(self.level_k_code(b, code)))
                };
                let Some(r_k) = r_k else {
                    return Err(DecodeError::field(
                        "table",
                        format!("slot {s} of bucket {b} holds {raw:#x}"),
                    ));
                };
                self.hist[r_k as usize] += 1;
                self.occupied += 1;
                self.lower += u64::from(b < base);
            }
        }
        Ok(())
    }

    /// Decoding: reads the `stash_len` stash entries (sorted, each homed below `buckets`),
    /// checks each and counts it.
    fn read_stash(
        &mut self,
        r: &mut Reader<'_>,
        stash_len: u64,
        buckets: u64,
        width: u32,
    ) -> Result<(), DecodeError> {
        for _ in 0..stash_len {
            let e = Entry {
                home: r.u64()?,
                code: r.u64()?,
            };
            let sorted = self
                .stash
                .last()
                .is_none_or(|l: &Entry| (l.home, l.code) <= (e.home, e.code));
            if !sorted || e.home >= buckets || !self.decoded_code_fits(e.home, e.code, width) {
                return Err(DecodeError::field("stash", format!("invalid entry {e:?}")));
            }
            self.hist[code_len(self.level_k_code(e.home, e.code)) as usize] += 1;
            self.occupied += 1;
            self.stash.push(e);
        }
        Ok(())
    }
}

// Its fill is the slots' load; its FPR the union bound of its entries, kept exactly; it
// estimates no count (the count is the answer).
bloomlab_core::declared! {
    ExpandableFilter: bloomlab_core::Declaration {
        variant: Variant::Expandable,
        versions: &[format::EXPANDABLE_SPLIT_VERSION],
        changes: bloomlab_core::declare::Changes::Grows,
        deletes: true,
        no_union: Some(
            "an expandable filter's table depends on the order of inserts, so two do not merge exactly",
        ),
        design: "a 4-slot cuckoo-style table that grows by splitting 1/16 of its buckets at a time (linear hashing; each split moves one fingerprint bit into the index), new fingerprints widened so the union bound stays <= p at every size",
    };
    sized: with_fpr_and_scheme,
    fill: load,
}

impl<S: HashScheme> FilterCore for ExpandableFilter<S> {
    #[inline(always)]
    fn insert_bytes(&mut self, key: &[u8]) -> Result<()> {
        let h = self.meta.scheme().hash64(key);
        self.insert_hash(h)
    }

    #[inline(always)]
    fn might_contain_bytes(&self, key: &[u8]) -> bool {
        self.contains_hash(self.meta.scheme().hash64(key))
    }

    fn size_in_bytes(&self) -> usize {
        self.table.size_in_bytes() + self.stash.capacity() * core::mem::size_of::<Entry>()
    }

    fn table_bits(&self) -> u64 {
        self.table.bits()
    }

    fn hashes(&self) -> u32 {
        self.fp_bits
    }

    /// The union bound (1) of [`math`] at the current contents: `Σ 2^-(k + r)` over entries.
    fn expected_fpr(&self) -> f64 {
        let sum: f64 = self
            .hist
            .iter()
            .enumerate()
            .map(|(r, &n)| n as f64 * (-(f64::from(self.level) + r as f64)).exp2())
            .sum();
        sum.min(1.0)
    }

    fn same_table(&self, other: &Self) -> bool {
        self.level == other.level
            && self.split == other.split
            && self.start_level == other.start_level
            && self.fp_bits == other.fp_bits
            && self.stash == other.stash
            && self.table == other.table
    }

    fn debug_shape(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("level", &self.level)
            .field("split", &self.split)
            .field("start_level", &self.start_level)
            .field("slot_bits", &self.slot_bits())
            .field("fp_bits", &self.fp_bits);
    }

    fn debug_state(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("occupied", &self.occupied)
            .field("stash", &self.stash.len());
    }
}

filter_glue!(ExpandableFilter, Expandable);

impl<S: HashScheme> RemovableFilter for ExpandableFilter<S> {
    /// Removes the longest (most specific) matching entry. That keeps every other inserted
    /// key covered: if the entry removed belonged to another key, that key's hash starts
    /// with it, so it also starts with the removed key's own entry (a prefix of the same
    /// hash, no longer), which stays and now answers for it.
    fn remove_bytes(&mut self, key: &[u8]) -> bool {
        let h = self.meta.scheme().hash64(key);
        let Some((at, r)) = self.find_longest(h) else {
            return false;
        };
        match at {
            Ok((b, s)) => {
                self.table.set(b, s, 0);
                self.lower -= u64::from(b < self.base());
            }
            Err(i) => {
                self.stash.remove(i);
            }
        }
        self.hist[r as usize] -= 1;
        self.measure -= Self::units(r);
        self.occupied -= 1;
        self.meta.record_remove();
        true
    }
}

impl<S: HashScheme, K: Key> Extend<K> for ExpandableFilter<S> {
    /// Inserts every key. Panics only if the table cannot grow (out of memory).
    fn extend<I: IntoIterator<Item = K>>(&mut self, keys: I) {
        bloomlab_core::meta::extend(self, keys)
    }
}

#[cfg(test)]
mod tests;
