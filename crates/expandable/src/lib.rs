//! An expandable filter: a cuckoo-style bucket table that doubles whenever it fills, with no
//! size hint, keeping its FPR below the target at every point of its growth.
//!
//! # What it guarantees
//!
//! - **Grows from any start.** [`ExpandableFilter::new`] starts at 2 buckets; an insert never
//!   fails for lack of room. The only insert error is [`Error::SizeOverflow`]: the doubled
//!   table could not be allocated, or it would pass `2^`[`MAX_LEVEL`] buckets. The filter is
//!   then unchanged.
//! - **No false negatives**, through every doubling and every delete of an inserted key.
//! - **FPR ≤ target at every size**: [`math::fpr_bound`] is `≤ ε` after any number of
//!   doublings (derivation in [`math`]), and
//!   [`expected_fpr`](Filter::expected_fpr) is the union bound at the current contents.
//! - **Deletes** of inserted keys ([`RemovableFilter`]). Removing a key that tests negative
//!   changes nothing and returns `false`. Removing a key that was never inserted but tests
//!   positive can, as in every cuckoo or counting filter, take away another key's entry.
//!
//! # Design (which papers, what changes, why)
//!
//! It follows the taffy cuckoo filter (Apple, "Taffy Filters", 2021) and InfiniFilter (Dayan
//! et al., SIGMOD 2023): fingerprints are hash *prefixes*, and a doubling moves one
//! fingerprint bit of every entry into the bucket index, so no key is needed to expand; new
//! entries get fingerprints that widen slowly ([`math::new_entry_bits`]) so that the sum of
//! every generation's share of the FPR converges.
//!
//! - **Table.** `2^k` buckets of 4 slots ([`bloomlab_cuckoo::BucketTable`], bit-packed), each
//!   slot `W` bits: a flag bit (top) and a `W − 1`-bit *code* `fp | 1 << r` holding an
//!   `r`-bit fingerprint under a unary length marker, so one table holds entries of every age
//!   (0 = empty slot).
//! - **Where a key goes.** Its 64-bit hash `h` ([`HashScheme::hash64`]): home bucket
//!   `i1 = h mod 2^k`, fingerprint bits `h >> k`. The alternate bucket is
//!   `i2 = i1 ⊕ G(t)`, `G(t) = 1 + fastrange(fmix64(t), 2^k − 1)`, with `t` the low
//!   [`ALT_BITS`] bits of the fingerprint: an involution (`i1 = i2 ⊕ G(t)`) that is never the
//!   home bucket itself.
//! - **The flag** says the entry sits in its alternate bucket. That is what a doubling needs
//!   (it must know each entry's home to split it), and it pays for itself: a lookup compares
//!   only unflagged slots of `i1` and flagged slots of `i2`, so a query meets half the slots
//!   a plain cuckoo filter compares, and its fingerprint can be one bit shorter.
//! - **Lookup** reads the two buckets (8 slots) and matches a slot when its `r` fingerprint
//!   bits equal the query's next `r` hash bits: exactly "the query's hash starts with the
//!   entry's prefix".
//! - **Insert** is cuckoo insertion with up to [`MAX_KICKS`] kicks. The filter doubles
//!   *before* an insert that would pass [`MAX_LOAD`] of its slots or would lift the union
//!   bound of its contents (kept exactly, in integer units) past [`math::fpr_bound`] for this
//!   size, and also when a kick chain fails: the entry left in hand is carried through the
//!   doubling. Removes lower the union bound, so churn at a steady size never doubles it.
//! - **Doubling** rebuilds a table of `2^(k+1)` buckets, reinserting every entry with its
//!   home extended by its lowest fingerprint bit (`i1 + 2^k·(fp & 1)`, `fp >> 1`). An entry
//!   with no bit left is copied into both halves. Entries with fewer than [`ALT_BITS`] bits
//!   left cannot compute their alternate and stay home; an entry that finds no room goes to a
//!   small stash that lookups scan (empty in every measured run).
//! - **New fingerprints** have `F_i` bits after `i` doublings, `log2(1/ε) + O(log i)`, chosen
//!   by (3) of [`math`] so that the FPR bound holds after any number of doublings.
//!
//! What it changes from the papers, and why: InfiniFilter and Aleph expand a *quotient*
//! filter and widen fingerprints by a fixed `1/i²`-style series; here the table is a cuckoo
//! table (two buckets, constant-time lookups, deletes, and this workspace's bit-packed bucket
//! table), the alternate-bucket flag halves the slots a query compares, and the widths come
//! from a greedy budget with a telescoping reserve, which spends fewer bits over the first
//! ten doublings, where the growths we measure live. Taffy's cuckoo filter keeps growing
//! fingerprints of one fixed length, so its FPR grows with every doubling; this one does not.
//!
//! # Complexity
//!
//! Lookup: two bucket reads, 8 slot compares (plus the stash, empty in practice). Insert:
//! amortised O(1) — each doubling reinserts the `≤ 0.95·4·2^k` entries, once per doubling of
//! the item count. Remove: two bucket reads. Space: `W·4·2^k` bits, between `W/0.95` and
//! `2W/0.95` bits per item with `W = F + 2` (13 bits at 1 % over the first four doublings).
//!
//! # Format (version 1, frozen)
//!
//! The checked envelope of [`bloomlab_core::format`] (variant tag 8) around, little-endian:
//! `u64` count, `u64` start capacity, `f64` target FPR, `u8` start level `k0`, `u8` level
//! `k`, `u8` slot width `W`, `u8` new-entry fingerprint bits `F`, `u64` entries created at
//! this level, `u64` stash length then `(u64 home, u64 code)` per stash entry, and the table:
//! `ceil(4·2^k·W / 8)` bytes of bit-packed slots (slot `s` of bucket `b` at bit
//! `(4b + s)·W`). Decoding validates every field and every slot against the schedule and
//! costs one pass over the bytes.
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
//! assert!(f.level() >= 15);
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
//! # Ok::<(), bloomlab_core::Error>(())
//! ```
#![warn(missing_docs)]
#![forbid(unsafe_code)]

pub mod math;

use std::fmt;

use bloomlab_core::error::{DecodeError, Error, Result};
use bloomlab_core::format::{self, EnvelopeWriter, Reader, Variant};
use bloomlab_core::hash::{HashScheme, Xxh3Scheme, fastrange};
use bloomlab_core::meta::{FilterCore, Meta};
use bloomlab_core::{Key, RemovableFilter, filter_glue};
use bloomlab_cuckoo::{BUCKET_SIZE, BucketTable};

pub use bloomlab_core::Filter;

/// Most of its slots the table fills before it doubles.
pub const MAX_LOAD: f64 = 0.95;
/// Fingerprint bits that choose the alternate bucket; entries with fewer bits left stay in
/// their home bucket. 256 alternates per bucket keep a 4-slot table fillable to 95 %.
pub const ALT_BITS: u32 = 8;
/// Kicks an insert tries before it doubles the table instead.
pub const MAX_KICKS: usize = 500;
/// Largest level: `2^40` buckets (2^42 slots).
pub const MAX_LEVEL: u32 = 40;
/// Widest fingerprint of a new entry (a slot is `F + 2 ≤ 32` bits).
pub const MAX_FP_BITS: u32 = 30;

const SLOTS: u64 = BUCKET_SIZE as u64;

/// An expandable filter over hash scheme `S`. See the crate docs.
///
/// `len()` counts successful inserts (repeats included) minus successful removals.
#[derive(Clone)]
pub struct ExpandableFilter<S: HashScheme = Xxh3Scheme> {
    table: BucketTable,
    /// `k`: the table has `2^k` buckets.
    level: u32,
    /// `k0`: the level it started at.
    start_level: u32,
    /// `F`: fingerprint bits of entries created at this level.
    fp_bits: u32,
    /// `Σ 2^-(k + r)` over stored entries, in units of `2^-(k + 31)` (exact).
    measure: u128,
    /// The most `measure` may reach at this level: [`math::fpr_bound`] in the same units.
    limit: u128,
    /// Entries stored (table and stash); voids copied at a doubling count twice.
    occupied: u64,
    /// Entries stored by fingerprint length `r`.
    hist: [u64; 32],
    stash: Vec<Entry>,
    meta: Meta<S>,
}

/// An entry out of the table: its home bucket and its code `fp | 1 << r`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    home: u64,
    code: u64,
}

/// Where an entry is: `Ok((bucket, slot))` in the table, `Err(index)` in the stash.
type Place = Result<(u64, u32), usize>;

/// murmur3's 64-bit finaliser.
#[inline(always)]
fn fmix64(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

#[inline(always)]
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    fmix64(*state)
}

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

/// [`math::fpr_bound`] after `expansion` doublings, in units of `2^-(level + 31)`.
fn limit_units(target: f64, expansion: u32, level: u32) -> Result<u128> {
    let bound = math::fpr_bound(target, expansion)?;
    Ok((bound * f64::from(level + 31).exp2()) as u128)
}

/// Whether an entry with this code (0 = empty slot) knows its alternate bucket.
#[inline(always)]
fn movable_entry(code: u64) -> bool {
    code >> ALT_BITS != 0
}

/// The level whose table holds `capacity` items at [`MAX_LOAD`]: at least 1, at most
/// [`MAX_LEVEL`] (past it, a size error).
fn level_for(capacity: u64) -> Result<u32> {
    let buckets = (capacity as f64 / (SLOTS as f64 * MAX_LOAD))
        .ceil()
        .max(2.0);
    let level = buckets.log2().ceil();
    if level > f64::from(MAX_LEVEL) {
        return Err(Error::SizeOverflow(format!(
            "{capacity} items need more than 2^{MAX_LEVEL} buckets"
        )));
    }
    Ok(level as u32)
}

impl ExpandableFilter<Xxh3Scheme> {
    /// An empty filter of 2 buckets for target FPR `fpr`.
    pub fn new(fpr: f64) -> Result<Self> {
        Self::with_start_and_scheme(1, fpr, Xxh3Scheme)
    }

    /// An empty filter whose first table holds `start_capacity` items (it still grows past
    /// them). Errors: `start_capacity = 0`, `fpr` not in (0, 1), and [`Error::SizeOverflow`]
    /// for a start past `2^`[`MAX_LEVEL`] buckets or an `fpr` that needs fingerprints wider
    /// than [`MAX_FP_BITS`] bits (below ≈ 10^-8).
    pub fn with_start(start_capacity: u64, fpr: f64) -> Result<Self> {
        Self::with_start_and_scheme(start_capacity, fpr, Xxh3Scheme)
    }

    /// Decode the checked, versioned format written by [`to_bytes`](Self::to_bytes).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_bytes_with_scheme(bytes, Xxh3Scheme)
    }
}

impl<S: HashScheme> ExpandableFilter<S> {
    /// [`with_start`](ExpandableFilter::with_start) with a chosen hash scheme.
    pub fn with_start_and_scheme(start_capacity: u64, fpr: f64, scheme: S) -> Result<Self> {
        bloomlab_core::math::validate_items(start_capacity)?;
        bloomlab_core::math::validate_fpr(fpr)?;
        let level = level_for(start_capacity)?;
        let fp_bits = math::new_entry_bits(fpr, 0)?;
        Ok(ExpandableFilter {
            table: BucketTable::new(1 << level, fp_bits + 2)?,
            level,
            start_level: level,
            fp_bits,
            measure: 0,
            limit: limit_units(fpr, 0, level)?,
            occupied: 0,
            hist: [0; 32],
            stash: Vec::new(),
            meta: Meta::new(start_capacity, Some(fpr), scheme),
        })
    }

    /// Insert a typed key. Errors only when the table cannot double (memory, or
    /// [`MAX_LEVEL`]); the filter is then unchanged.
    pub fn insert<K: Key + ?Sized>(&mut self, key: &K) -> Result<()> {
        key.with_key_bytes(|b| self.insert_key(b))
    }

    /// Query a typed key.
    pub fn might_contain<K: Key + ?Sized>(&self, key: &K) -> bool {
        key.with_key_bytes(|b| self.contains_key(b))
    }

    /// Remove one occurrence of a typed key; see [`RemovableFilter::remove_bytes`].
    pub fn remove<K: Key + ?Sized>(&mut self, key: &K) -> bool {
        key.with_key_bytes(|b| self.remove_bytes(b))
    }

    /// `k`: the table has `2^k` buckets.
    pub fn level(&self) -> u32 {
        self.level
    }
    /// Doublings since the start.
    pub fn expansions(&self) -> u32 {
        self.level - self.start_level
    }
    /// Number of buckets, `2^k`.
    pub fn num_buckets(&self) -> u64 {
        1 << self.level
    }
    /// Fingerprint bits of entries created now.
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
    /// Entries held in the stash (0 in every measured run).
    pub fn stash_len(&self) -> usize {
        self.stash.len()
    }
    /// Occupied slots over all slots.
    pub fn load(&self) -> f64 {
        (self.occupied - self.stash.len() as u64) as f64 / self.table.slots() as f64
    }
    /// The FPR bound of [`math::fpr_bound`] at this size (`≤` the target).
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

    /// `G(t)`: the xor distance between an entry's two buckets, never 0.
    #[inline(always)]
    fn offset(&self, bits: u64) -> u64 {
        1 + fastrange(
            fmix64(bits & ((1 << ALT_BITS) - 1)),
            (1u64 << self.level) - 1,
        )
    }

    /// The 4 slots of `bucket` in one read, slot `s` at bits `s·W..(s+1)·W` (for `4W ≤ 64`).
    /// Branch-free: a bucket that ends inside word `i` reads its neighbour (or 0 past the
    /// end) and shifts it out, as `(next << 1) << (63 − off)` is 0 for `off = 0`.
    #[inline(always)]
    fn bucket_bits(&self, bucket: u64) -> u64 {
        let pos = bucket * SLOTS * u64::from(self.table.fingerprint_bits());
        let words = self.table.words();
        let (i, off) = ((pos / 64) as usize, (pos % 64) as u32);
        let next = words.get(i + 1).copied().unwrap_or(0);
        (words[i] >> off) | ((next << 1) << (63 - off))
    }

    /// Whether any slot of `raw` (4 lanes of `w` bits) holds an entry whose flag equals
    /// `want` (0 or `flag`) and whose code is a prefix of `q`. Branch-free: each lane's
    /// length is one `lzcnt`, and an empty lane (code 0) is masked out at the end.
    #[inline(always)]
    fn lanes_hit(raw: u64, w: u32, flag: u64, want: u64, q: u64) -> bool {
        let lane = (1u64 << w) - 1;
        let mut hit = false;
        for s in 0..BUCKET_SIZE {
            hit |= Self::slot_hit((raw >> (s * w)) & lane, flag, want, q);
        }
        hit
    }

    /// [`lanes_hit`](Self::lanes_hit) for one slot value.
    #[inline(always)]
    fn slot_hit(slot: u64, flag: u64, want: u64, q: u64) -> bool {
        let code = slot & (flag - 1);
        // `code | 1` keeps the length defined for an empty slot, which `code != 0` drops.
        let len_mask = (1u64 << code_len(code | 1)) - 1;
        (slot & flag == want) & (code != 0) & ((code ^ q) & len_mask == 0)
    }

    #[inline(always)]
    fn contains_hash(&self, h: u64) -> bool {
        let home = h & ((1u64 << self.level) - 1);
        let q = h >> self.level;
        let alt = home ^ self.offset(q);
        let w = self.table.fingerprint_bits();
        let flag = u64::from(self.flag_bit());
        // Both buckets, unconditionally and without branches: a branch on the first
        // bucket's answer is unpredictable at mixed hit rates, and a mispredict discards
        // the memory reads of the lookups already under way behind it.
        let hit = if 4 * w <= 64 {
            Self::lanes_hit(self.bucket_bits(home), w, flag, 0, q)
                | Self::lanes_hit(self.bucket_bits(alt), w, flag, flag, q)
        } else {
            let mut hit = false;
            for s in 0..BUCKET_SIZE {
                hit |= Self::slot_hit(u64::from(self.table.get(home, s)), flag, 0, q);
                hit |= Self::slot_hit(u64::from(self.table.get(alt, s)), flag, flag, q);
            }
            hit
        };
        hit | (!self.stash.is_empty()
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
        let at = self
            .stash
            .partition_point(|s| (s.home, s.code) < (e.home, e.code));
        self.stash.insert(at, e);
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
                true
            }
            None => false,
        }
    }

    /// Cuckoo insertion of `e`; returns the entry left in hand if the kicks ran out.
    fn place(&mut self, mut e: Entry, seed: u64) -> Option<Entry> {
        if self.put(e.home, e.code, false) {
            return None;
        }
        let movable = movable_entry(e.code);
        let alt = e.home ^ self.offset(e.code);
        if movable && self.put(alt, e.code, true) {
            return None;
        }
        let mut rng = seed;
        let mut bucket = if movable && splitmix(&mut rng) & 1 == 1 {
            alt
        } else {
            e.home
        };
        let flag = self.flag_bit();
        let code_mask = u64::from(flag - 1);
        for _ in 0..MAX_KICKS {
            let start = (splitmix(&mut rng) % SLOTS) as u32;
            let victim = (0..BUCKET_SIZE)
                .map(|d| (start + d) % BUCKET_SIZE)
                .map(|s| (s, self.table.get(bucket, s)))
                .find(|&(_, raw)| movable_entry(u64::from(raw) & code_mask));
            let Some((s, raw)) = victim.or_else(|| {
                // Only entries too short to move: kick from the entry's other bucket.
                if !movable_entry(e.code) {
                    return None;
                }
                bucket ^= self.offset(e.code);
                let start = (splitmix(&mut rng) % SLOTS) as u32;
                (0..BUCKET_SIZE)
                    .map(|d| (start + d) % BUCKET_SIZE)
                    .map(|s| (s, self.table.get(bucket, s)))
                    .find(|&(_, raw)| movable_entry(u64::from(raw) & code_mask))
            }) else {
                return Some(e);
            };
            let mine = e.code as u32 | if bucket != e.home { flag } else { 0 };
            self.table.set(bucket, s, mine);
            let vcode = u64::from(raw) & code_mask;
            let other = bucket ^ self.offset(vcode);
            e = Entry {
                home: if raw & flag != 0 { other } else { bucket },
                code: vcode,
            };
            if self.put(other, e.code, other != e.home) {
                return None;
            }
            bucket = other;
        }
        Some(e)
    }

    fn load_limit(&self) -> u64 {
        (MAX_LOAD * self.table.slots() as f64) as u64
    }

    /// Measure units of one entry of fingerprint length `r`.
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

    /// Double the table. On error nothing has changed.
    fn expand(&mut self) -> Result<()> {
        let level = self.level + 1;
        if level > MAX_LEVEL {
            return Err(Error::SizeOverflow(format!(
                "an expandable filter has at most 2^{MAX_LEVEL} buckets"
            )));
        }
        let target = self.target();
        let fp_bits = math::new_entry_bits(target, level - self.start_level)?;
        let widest_left = (1..32)
            .rev()
            .find(|&r| self.hist[r] > 0)
            .map_or(0, |r| r - 1);
        let width = fp_bits.max(widest_left as u32) + 2;
        let limit = limit_units(target, level - self.start_level, level)?;
        let table = BucketTable::new(1 << level, width)?;
        let old = std::mem::replace(&mut self.table, table);
        let old_stash = std::mem::take(&mut self.stash);
        let old_level = self.level;
        let old_flag = 1u32 << (old.fingerprint_bits() - 1);
        let old_mask = (1u64 << ALT_BITS) - 1;
        let half = 1u64 << old_level;
        let old_offset = |code: u64| 1 + fastrange(fmix64(code & old_mask), half - 1);
        self.level = level;
        self.fp_bits = fp_bits;
        self.limit = limit;
        self.occupied = 0;
        self.hist = [0; 32];
        let split = |this: &mut Self, e: Entry| {
            let parts: [Option<Entry>; 2] = if e.code == 1 {
                [
                    Some(e),
                    Some(Entry {
                        home: e.home | half,
                        code: 1,
                    }),
                ]
            } else {
                let home = e.home | ((e.code & 1) << old_level);
                [
                    Some(Entry {
                        home,
                        code: e.code >> 1,
                    }),
                    None,
                ]
            };
            for p in parts.into_iter().flatten() {
                this.occupied += 1;
                this.hist[code_len(p.code) as usize] += 1;
                if let Some(hand) = this.place(p, p.home ^ p.code.rotate_left(32)) {
                    this.stash_insert(hand);
                }
            }
        };
        for b in 0..old.num_buckets() {
            for s in 0..BUCKET_SIZE {
                let raw = old.get(b, s);
                if raw == 0 {
                    continue;
                }
                let code = u64::from(raw & (old_flag - 1));
                let home = if raw & old_flag != 0 {
                    b ^ old_offset(code)
                } else {
                    b
                };
                split(self, Entry { home, code });
            }
        }
        for e in old_stash {
            split(self, e);
        }
        self.measure = Self::measure_of(&self.hist);
        Ok(())
    }

    #[inline]
    fn insert_hash(&mut self, h: u64) -> Result<()> {
        let more = Self::units(self.fp_bits);
        if self.occupied + 1 > self.load_limit() || self.measure + more > self.limit {
            self.expand()?;
        }
        let e = Entry {
            home: h & ((1u64 << self.level) - 1),
            code: ((h >> self.level) & ((1u64 << self.fp_bits) - 1)) | (1u64 << self.fp_bits),
        };
        self.measure += Self::units(self.fp_bits);
        self.occupied += 1;
        self.hist[self.fp_bits as usize] += 1;
        if let Some(hand) = self.place(e, h) {
            // The key is stored either way: in the stash now, in the doubled table if the
            // table is at least half full and the doubling succeeds (a failed one is retried,
            // and reported, by the next insert). Below half full the failure comes from copies
            // of one key crowding its two buckets, which no doubling separates: they stay in
            // the stash.
            self.stash_insert(hand);
            if 2 * self.occupied >= self.table.slots() {
                let _ = self.expand();
            }
        }
        self.meta.record_insert();
        Ok(())
    }

    /// The most specific entry matching `h`: (bucket, slot) or a stash index, and its length.
    fn find_longest(&self, h: u64) -> Option<(Place, u32)> {
        let home = h & ((1u64 << self.level) - 1);
        let q = h >> self.level;
        let flag = self.flag_bit();
        let alt = home ^ self.offset(q);
        let mut best: Option<(Place, u32)> = None;
        let mut consider = |at, code: u64| {
            if code != 0 && code_matches(code, q) {
                let r = code_len(code);
                if best.is_none_or(|(_, br)| r > br) {
                    best = Some((at, r));
                }
            }
        };
        for s in 0..BUCKET_SIZE {
            let raw = self.table.get(home, s);
            if raw & flag == 0 {
                consider(Ok((home, s)), u64::from(raw));
            }
            let raw = self.table.get(alt, s);
            if raw & flag != 0 {
                consider(Ok((alt, s)), u64::from(raw ^ flag));
            }
        }
        for (i, e) in self.stash_from(home) {
            consider(Err(i), e.code);
        }
        best
    }

    /// Encode in the checked, versioned format (see the crate docs).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut w = EnvelopeWriter::new(
            Variant::Expandable,
            self.meta.descriptor(),
            64 + self.table.byte_len() + self.stash.len() * 16,
        );
        w.u64(self.meta.count())
            .u64(self.meta.capacity())
            .f64(self.target())
            .u8(self.start_level as u8)
            .u8(self.level as u8)
            .u8(self.table.fingerprint_bits() as u8)
            .u8(self.fp_bits as u8)
            .u64(self.stash.len() as u64);
        for e in &self.stash {
            w.u64(e.home).u64(e.code);
        }
        self.table.write_le_bytes(w.buffer());
        w.finish()
    }

    /// Decode bytes written with `scheme` (its descriptor must match the recorded one).
    pub fn from_bytes_with_scheme(bytes: &[u8], scheme: S) -> Result<Self> {
        let payload = format::open_expecting(bytes, Variant::Expandable, scheme.descriptor())?;
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
        let stash_len = r.u64()?;
        if start_capacity == 0 || level_for(start_capacity).ok() != Some(start_level) {
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
        let table = BucketTable::from_le_bytes(r.take(r.remaining())?, 1 << level, width)?;
        let code_mask = (1u32 << (width - 1)) - 1;
        let flag = 1u32 << (width - 1);
        let mut hist = [0u64; 32];
        let mut occupied = 0u64;
        for b in 0..table.num_buckets() {
            for s in 0..BUCKET_SIZE {
                let raw = table.get(b, s);
                if raw == 0 {
                    continue;
                }
                let code = raw & code_mask;
                if code == 0 || (raw & flag != 0 && code_len(u64::from(code)) < ALT_BITS) {
                    return Err(bad(
                        "table",
                        format!("slot {s} of bucket {b} holds {raw:#x}"),
                    ));
                }
                hist[code_len(u64::from(code)) as usize] += 1;
                occupied += 1;
            }
        }
        let mut stash: Vec<Entry> = Vec::with_capacity(stash_len as usize);
        for _ in 0..stash_len {
            let e = Entry {
                home: stash_r.u64()?,
                code: stash_r.u64()?,
            };
            let sorted = stash
                .last()
                .is_none_or(|l: &Entry| (l.home, l.code) <= (e.home, e.code));
            if !sorted || e.home >> level != 0 || e.code == 0 || e.code >> (width - 1) != 0 {
                return Err(bad("stash", format!("invalid entry {e:?}")));
            }
            hist[code_len(e.code) as usize] += 1;
            occupied += 1;
            stash.push(e);
        }
        let mut f = ExpandableFilter {
            table,
            level,
            start_level,
            fp_bits,
            measure: Self::measure_of(&hist),
            limit: limit_units(target, expansion, level)
                .map_err(|e| bad("target_fpr", e.to_string()))?,
            occupied,
            hist,
            stash,
            meta: Meta::new(start_capacity, Some(target), scheme).with_count(count),
        };
        if count > occupied {
            return Err(bad("count", format!("{count} keys in {occupied} entries")));
        }
        if f.measure > f.limit || occupied - f.stash.len() as u64 > f.load_limit() {
            return Err(bad(
                "table",
                "more entries than the FPR bound or the load allows",
            ));
        }
        f.stash.shrink_to_fit();
        Ok(f)
    }
}

impl<S: HashScheme> FilterCore for ExpandableFilter<S> {
    #[inline(always)]
    fn insert_key(&mut self, key: &[u8]) -> Result<()> {
        let h = self.meta.scheme().hash64(key);
        self.insert_hash(h)
    }

    #[inline(always)]
    fn contains_key(&self, key: &[u8]) -> bool {
        self.contains_hash(self.meta.scheme().hash64(key))
    }

    fn heap_bytes(&self) -> usize {
        self.table.size_in_bytes() + self.stash.capacity() * std::mem::size_of::<Entry>()
    }

    fn table_bits(&self) -> u64 {
        self.table.bits()
    }

    fn hashes(&self) -> u32 {
        self.fp_bits
    }

    /// The union bound (1) of [`math`] at the current contents: `Σ 2^-(k + r)` over entries.
    fn formula_fpr(&self) -> f64 {
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
            && self.start_level == other.start_level
            && self.fp_bits == other.fp_bits
            && self.stash == other.stash
            && self.table == other.table
    }

    fn debug_shape(&self, d: &mut fmt::DebugStruct<'_, '_>) {
        d.field("level", &self.level)
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
            Ok((b, s)) => self.table.set(b, s, 0),
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
    /// Inserts every key. Panics only if the table cannot double (out of memory).
    fn extend<I: IntoIterator<Item = K>>(&mut self, keys: I) {
        bloomlab_core::meta::extend(self, keys)
    }
}
