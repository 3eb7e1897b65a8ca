//! Each check of the decoder on its own: a file changed in one field only, resealed, is
//! refused by the check that guards that field, with that check's message (and only that
//! field changed, so no other check can be what refuses it). Next to each refusal, the
//! nearest change that is still valid loads, so every test fails if its check is dropped
//! or tightened.
//!
//! The payload (format version 2, after the envelope header), little-endian: count u64,
//! start capacity u64, target f64, start level, level, slot width and new-entry fingerprint
//! bits one byte each, split buckets u64, stash length u64, the stash (home u64, code u64
//! per entry), then the table of 4 bit-packed `W`-bit slots per bucket.

use bloomlab_core::format::{HEADER_LEN, reseal};
use bloomlab_cuckoo::BUCKET_SIZE;
use bloomlab_expandable::{ALT_BITS, ExpandableFilter, Filter, MAX_COPIES, MAX_LEVEL};

const COUNT: usize = HEADER_LEN;
const START_CAPACITY: usize = HEADER_LEN + 8;
const TARGET: usize = HEADER_LEN + 16;
const START_LEVEL: usize = HEADER_LEN + 24;
const LEVEL: usize = HEADER_LEN + 25;
const WIDTH: usize = HEADER_LEN + 26;
const FP_BITS: usize = HEADER_LEN + 27;
const SPLIT: usize = HEADER_LEN + 28;
const STASH_LEN: usize = HEADER_LEN + 36;
const STASH: usize = HEADER_LEN + 44;

const SLOTS: u64 = BUCKET_SIZE as u64;

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn put_u64(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// A copy of `bytes` with `v` written at `at`.
fn with_u64(bytes: &[u8], at: usize, v: u64) -> Vec<u8> {
    patched(bytes, at, &v.to_le_bytes())
}

/// A copy of `bytes` with `value` written at `at`.
fn patched(bytes: &[u8], at: usize, value: &[u8]) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at..at + value.len()].copy_from_slice(value);
    b
}

/// A filter of `start / 2` keys (fixed keys) from a start capacity of `start`, as bytes.
fn sample(start: u64) -> Vec<u8> {
    let mut f = ExpandableFilter::with_fpr(start, 0.01).unwrap();
    for i in 0..start / 2 {
        f.insert(&i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).unwrap();
    }
    f.to_bytes()
}

/// The error text of decoding `bytes` once resealed (which must fail).
fn refusal(mut bytes: Vec<u8>) -> String {
    assert!(reseal(&mut bytes));
    ExpandableFilter::from_bytes(&bytes)
        .map(|_| ())
        .unwrap_err()
        .to_string()
}

/// Decode `bytes` once resealed; panics with the error if it is refused.
fn loads(mut bytes: Vec<u8>) -> ExpandableFilter {
    assert!(reseal(&mut bytes));
    ExpandableFilter::from_bytes(&bytes).unwrap_or_else(|e| panic!("refused: {e}"))
}

fn assert_refused(bytes: Vec<u8>, field: &str, why: &str) {
    let err = refusal(bytes);
    let want = format!("invalid field `{field}`: ");
    assert!(err.contains(&want) && err.contains(why), "{err}");
}

/// The shape of a file and its slots, read from the bytes.
struct Shape {
    level: u32,
    split: u64,
    width: u32,
    /// Where the table starts.
    table: usize,
}

impl Shape {
    fn of(b: &[u8]) -> Shape {
        Shape {
            level: u32::from(b[LEVEL]),
            split: u64_at(b, SPLIT),
            width: u32::from(b[WIDTH]),
            table: STASH + 16 * u64_at(b, STASH_LEN) as usize,
        }
    }

    fn base(&self) -> u64 {
        1 << self.level
    }

    fn buckets(&self) -> u64 {
        self.base() + self.split
    }

    fn flag(&self) -> u32 {
        1 << (self.width - 1)
    }

    fn get(&self, b: &[u8], bucket: u64, s: u64) -> u32 {
        let slot = bucket * SLOTS + s;
        (0..self.width)
            .map(|i| {
                let bit = slot * u64::from(self.width) + u64::from(i);
                u32::from(b[self.table + (bit / 8) as usize] >> (bit % 8) & 1) << i
            })
            .sum()
    }

    fn set(&self, b: &mut [u8], bucket: u64, s: u64, raw: u32) {
        let slot = bucket * SLOTS + s;
        for i in 0..self.width {
            let bit = slot * u64::from(self.width) + u64::from(i);
            let byte = &mut b[self.table + (bit / 8) as usize];
            *byte = *byte & !(1 << (bit % 8)) | (((raw >> i) & 1) as u8) << (bit % 8);
        }
        assert_eq!(self.get(b, bucket, s), raw);
    }

    /// A copy of `b` with `raw` in slot `s` of `bucket`.
    fn with_slot(&self, b: &[u8], bucket: u64, s: u64, raw: u32) -> Vec<u8> {
        let mut out = b.to_vec();
        self.set(&mut out, bucket, s, raw);
        out
    }

    /// The empty slots of the buckets in `range`, as (bucket, slot).
    fn empty_in(&self, b: &[u8], range: std::ops::Range<u64>) -> Vec<(u64, u64)> {
        range
            .flat_map(|bucket| (0..SLOTS).map(move |s| (bucket, s)))
            .filter(|&(bucket, s)| self.get(b, bucket, s) == 0)
            .collect()
    }

    /// Occupied slots of the table.
    fn occupied(&self, b: &[u8]) -> u64 {
        self.buckets() * SLOTS - self.empty_in(b, 0..self.buckets()).len() as u64
    }
}

/// The table sample with `raw` in slot `s` of `bucket` is refused for what that slot holds.
fn refused_for_the_slot(bytes: &[u8], shape: &Shape, bucket: u64, s: u64, raw: u32) {
    assert_refused(
        shape.with_slot(bytes, bucket, s, raw),
        "table",
        &format!("slot {s} of bucket {bucket} holds {raw:#x}"),
    );
}

/// The sample most tests change: 500 keys from a start capacity of 1000, which starts at
/// `N = ceil(1000 / (4 · 0.9)) = 278` buckets, `2^8 + 22`: split buckets `0..22` and
/// `256..278`, unsplit `22..256`, about half full.
fn table_sample() -> (Vec<u8>, Shape) {
    let bytes = sample(1_000);
    let shape = Shape::of(&bytes);
    assert_eq!((bytes[START_LEVEL], shape.level, shape.split), (8, 8, 22));
    assert_eq!(u64_at(&bytes, STASH_LEN), 0);
    (bytes, shape)
}

#[test]
fn an_unchanged_file_resealed_loads() {
    let (bytes, _) = table_sample();
    let f = loads(bytes.clone());
    assert_eq!(f.to_bytes(), bytes);
}

#[test]
fn a_start_capacity_of_another_level_or_of_zero_is_refused() {
    let (bytes, _) = table_sample();
    // Level 8 holds the start capacities that need 256..=511 buckets of 3.6 keys: 920 and
    // 1800 are the same start; 900 (250 buckets, level 7) and 2000 (556, level 9) are not.
    for same in [920u64, 1_000, 1_800] {
        let b = with_u64(&bytes, START_CAPACITY, same);
        loads(b);
    }
    for other in [900u64, 2_000, 1_000_000, u64::MAX] {
        let b = with_u64(&bytes, START_CAPACITY, other);
        assert_refused(b, "start", "start capacity and start level disagree");
    }
    // Zero, at the level a capacity of zero would map to (the smallest, 1): a filter
    // started at 5 keys (2 buckets), which loads with a start capacity of 1.
    let tiny = sample(5);
    assert_eq!(tiny[START_LEVEL], 1);
    let mut one = tiny.clone();
    put_u64(&mut one, START_CAPACITY, 1);
    loads(one);
    let mut zero = tiny.clone();
    put_u64(&mut zero, START_CAPACITY, 0);
    assert_refused(zero, "start", "start capacity and start level disagree");
}

#[test]
fn a_target_outside_zero_to_one_is_refused() {
    let (bytes, _) = table_sample();
    for target in [0.0, 1.0, -0.01, 1.5, f64::NAN, f64::INFINITY] {
        let b = patched(&bytes, TARGET, &target.to_le_bytes());
        assert_refused(b, "target_fpr", "is not in (0, 1)");
    }
}

#[test]
fn a_level_below_the_start_or_past_the_largest_is_refused() {
    let (bytes, shape) = table_sample();
    for level in [shape.level - 1, 0, MAX_LEVEL + 1, 255] {
        let b = patched(&bytes, LEVEL, &[level as u8]);
        assert_refused(b, "level", &format!("{level} outside 8..={MAX_LEVEL}"));
    }
}

#[test]
fn a_split_count_of_a_whole_round_or_more_is_refused() {
    let (bytes, shape) = table_sample();
    for split in [shape.base(), shape.base() + 1, u64::MAX] {
        let b = with_u64(&bytes, SPLIT, split);
        assert_refused(b, "split", &format!("{split} not below 2^8"));
    }
}

#[test]
fn fingerprint_bits_off_the_schedule_are_refused() {
    let (bytes, _) = table_sample();
    let f = loads(bytes.clone());
    let fp = f.fingerprint_bits();
    assert_eq!(u32::from(bytes[FP_BITS]), fp);
    for other in [fp - 1, fp + 1, 0, 255] {
        let b = patched(&bytes, FP_BITS, &[other as u8]);
        assert_refused(b, "fp_bits", &format!("{other}, the schedule says {fp}"));
    }
}

#[test]
fn a_slot_width_outside_its_range_is_refused() {
    // In the first round the widest entry has the new-entry bits: `W = F + 2` exactly, so
    // one bit narrower or wider is refused (before the table's length is compared).
    let (bytes, shape) = table_sample();
    let fp = u32::from(bytes[FP_BITS]);
    assert_eq!(shape.width, fp + 2);
    for other in [shape.width - 1, shape.width + 1, 0, 255] {
        let b = patched(&bytes, WIDTH, &[other as u8]);
        assert_refused(
            b,
            "slot_bits",
            &format!("{other} outside {0}..={0}", fp + 2),
        );
    }
}

#[test]
fn a_flagged_entry_at_or_above_two_to_the_k_is_refused() {
    // A flagged entry is at its alternate, always below 2^k: in an empty slot of bucket 255
    // it loads; of bucket 256 (the first split image) or the last bucket it is refused.
    let (bytes, shape) = table_sample();
    let raw = shape.flag() | (1 << ALT_BITS) | 0b1011;
    let below = shape.empty_in(&bytes, shape.base() - 1..shape.base())[0];
    loads(shape.with_slot(&bytes, below.0, below.1, raw));
    for range in [
        shape.base()..shape.base() + 1,
        shape.buckets() - 1..shape.buckets(),
    ] {
        let (bucket, s) = shape.empty_in(&bytes, range)[0];
        refused_for_the_slot(&bytes, &shape, bucket, s, raw);
    }
}

#[test]
fn a_flagged_entry_too_short_to_know_its_other_bucket_is_refused() {
    // A flagged entry whose code has ALT_BITS bits knows its other bucket: it loads. One bit
    // shorter, or no code at all, it cannot, and is refused for what the slot holds.
    let (bytes, shape) = table_sample();
    let (bucket, s) = shape.empty_in(&bytes, 100..101)[0];
    let long = (1u32 << ALT_BITS) | 0b1011;
    loads(shape.with_slot(&bytes, bucket, s, shape.flag() | long));
    for short in [(1u32 << (ALT_BITS - 1)) | 0b1011, 1, 0] {
        let raw = shape.flag() | short;
        refused_for_the_slot(&bytes, &shape, bucket, s, raw);
    }
}

#[test]
fn a_level_k_code_too_long_for_the_slot_is_refused() {
    // The longest code a slot holds (marker just under the flag) is a level-k code at an
    // unsplit bucket: it loads. At a split bucket (below `s` or at `2^k` and up) the same
    // code is a level-(k + 1) one, one bit longer at level k than `W − 1` bits: refused.
    let (bytes, shape) = table_sample();
    let raw = (1u32 << (shape.width - 2)) | 0b101;
    let (bucket, s) = shape.empty_in(&bytes, shape.split..shape.split + 1)[0];
    loads(shape.with_slot(&bytes, bucket, s, raw));
    for range in [
        shape.split - 1..shape.split,
        shape.base()..shape.base() + 1,
        shape.buckets() - 1..shape.buckets(),
    ] {
        let (bucket, s) = shape.empty_in(&bytes, range)[0];
        refused_for_the_slot(&bytes, &shape, bucket, s, raw);
    }
}

/// A filter whose stash holds entries: 4 copies of a key (the most a key is kept) and 12
/// keys with the same two buckets and no copies of each other, 16 entries for 8 slots;
/// twice, for two homes. The stash is sorted by home then code.
fn stash_sample() -> (Vec<u8>, usize) {
    let f = stash_filter();
    let bytes = f.to_bytes();
    let n = u64_at(&bytes, STASH_LEN) as usize;
    assert!(n >= 2 && n == f.stash_len());
    (bytes, n)
}

/// The filter of [`stash_sample`].
fn stash_filter() -> ExpandableFilter {
    let mut f = ExpandableFilter::with_fpr(1_000, 0.01).unwrap();
    for (key, from) in [("first", 1u64 << 40), ("second", 1 << 41)] {
        let buckets = f.buckets(key);
        for _ in 0..MAX_COPIES {
            f.insert(key).unwrap();
        }
        let mut j = from;
        for _ in 0..12 {
            while f.buckets(&j) != buckets || f.copies(&j) != 0 {
                j += 1;
            }
            f.insert(&j).unwrap();
        }
    }
    f
}

/// A decoded filter goes on as the original would: its FPR bound, and the bytes it writes after
/// the same further inserts, are the original's — from an empty filter, from one whose table has
/// split buckets and from one whose stash holds entries (what decoding counts from the table and
/// the stash is what the inserts counted).
#[test]
fn a_decoded_filter_goes_on_as_the_original_would() {
    let mut grown = ExpandableFilter::with_fpr(100, 0.01).unwrap();
    for i in 0..3_000u64 {
        grown.insert(&i).unwrap();
    }
    let empty = ExpandableFilter::with_fpr(100, 0.01).unwrap();
    for (name, mut f) in [
        ("empty", empty),
        ("grown", grown),
        ("stash", stash_filter()),
    ] {
        let mut g = ExpandableFilter::from_bytes(&f.to_bytes()).unwrap();
        assert_eq!(g.fpr_bound(), f.fpr_bound(), "{name}");
        // The union bound of its entries, from the code lengths decoding counted in the table
        // and the stash: exactly the inserts' count.
        assert_eq!(g.expected_fpr(), f.expected_fpr(), "{name}");
        for i in 10_000..16_000u64 {
            f.insert(&i).unwrap();
            g.insert(&i).unwrap();
            // Where it splits its next bucket (its measure against its limit) is the same.
            assert_eq!(g.split_buckets(), f.split_buckets(), "{name}, key {i}");
        }
        assert_eq!(g.fpr_bound(), f.fpr_bound(), "{name}");
        assert_eq!(g.expected_fpr(), f.expected_fpr(), "{name}");
        assert!(g.to_bytes() == f.to_bytes(), "{name}");
    }
}

fn entry(i: usize) -> usize {
    STASH + 16 * i
}

#[test]
fn an_unsorted_stash_is_refused() {
    // The first and last entries differ (two keys' homes); swapped, the stash is unsorted.
    let (bytes, n) = stash_sample();
    loads(bytes.clone());
    let (first, last) = (
        bytes[entry(0)..entry(1)].to_vec(),
        bytes[entry(n - 1)..entry(n)].to_vec(),
    );
    assert_ne!(first, last);
    let mut swapped = bytes.clone();
    swapped[entry(0)..entry(1)].copy_from_slice(&last);
    swapped[entry(n - 1)..entry(n)].copy_from_slice(&first);
    assert_refused(swapped, "stash", "invalid entry");
}

#[test]
fn a_stash_home_past_the_table_is_refused() {
    // The last entry (where the order still holds when its home grows) given a code that is
    // valid at any home: at the last bucket it loads, one past it is refused.
    let (bytes, n) = stash_sample();
    let shape = Shape::of(&bytes);
    let code = (1u64 << (shape.width - 3)) | 0b101;
    let with_home = |home: u64| {
        let mut b = bytes.clone();
        put_u64(&mut b, entry(n - 1), home);
        put_u64(&mut b, entry(n - 1) + 8, code);
        b
    };
    loads(with_home(shape.buckets() - 1));
    for home in [shape.buckets(), 1 << 40] {
        assert_refused(with_home(home), "stash", "invalid entry");
    }
}

#[test]
fn an_invalid_stash_code_is_refused() {
    // The last entry's code made the largest a slot holds at its home: it loads (and stays
    // sorted). One bit longer is refused; so is the first entry without a code.
    let (bytes, n) = stash_sample();
    let shape = Shape::of(&bytes);
    let home = u64_at(&bytes, entry(n - 1));
    let split_home = home < shape.split || home >= shape.base();
    let longest = 1u64 << (shape.width - 2 - u32::from(split_home));
    let ok = with_u64(&bytes, entry(n - 1) + 8, longest | (longest - 1));
    loads(ok);
    let long = with_u64(&bytes, entry(n - 1) + 8, longest << 1 | 1);
    assert_refused(long, "stash", "invalid entry");
    let none = with_u64(&bytes, entry(0) + 8, 0);
    assert_refused(none, "stash", "invalid entry");
}

#[test]
fn a_stash_length_whose_bytes_overflow_is_refused() {
    let (bytes, _) = table_sample();
    let b = with_u64(&bytes, STASH_LEN, 1 << 60);
    assert_refused(b, "stash_len", "overflows");
}

#[test]
fn a_count_above_the_entries_stored_is_refused() {
    // Table and stash entries: as many keys as entries load, one more is refused.
    let (stashed, n) = stash_sample();
    for (bytes, stash) in [(table_sample().0, 0), (stashed, n as u64)] {
        let shape = Shape::of(&bytes);
        let entries = shape.occupied(&bytes) + stash;
        let full = with_u64(&bytes, COUNT, entries);
        assert_eq!(loads(full).len(), entries);
        let over = with_u64(&bytes, COUNT, entries + 1);
        assert_refused(
            over,
            "count",
            &format!("{} keys in {entries} entries", entries + 1),
        );
    }
}

#[test]
fn more_entries_than_the_fpr_bound_allows_are_refused() {
    // A code of `r` bits at an unsplit bucket matches a key with probability 2^-(k + r):
    // each one lifts the union bound by that much. With the shortest `r` that leaves room
    // for a few, as many as fit under the round's bound load; one more is refused (for the
    // bound only: a few valid entries added to a half-full table).
    let (bytes, shape) = table_sample();
    let f = loads(bytes.clone());
    let room = (f.fpr_bound() - f.expected_fpr()) * f64::from(shape.level).exp2();
    assert!(room > 0.0, "{room}");
    let r = (0..shape.width - 1)
        .find(|&r| room * f64::from(r).exp2() > 4.0)
        .unwrap();
    let room = room * f64::from(r).exp2();
    let fits = room.ceil() as usize - 1;
    let empty = shape.empty_in(&bytes, shape.split..shape.base());
    let with = |n: usize| {
        let mut b = bytes.clone();
        for (i, &(bucket, s)) in empty[..n].iter().enumerate() {
            let fp = i as u32 & ((1 << r) - 1);
            shape.set(&mut b, bucket, s, (1 << r) | fp);
        }
        b
    };
    let at_bound = loads(with(fits));
    assert!(at_bound.expected_fpr() <= at_bound.fpr_bound());
    assert_refused(
        with(fits + 1),
        "table",
        "more entries than the FPR bound allows",
    );
}
