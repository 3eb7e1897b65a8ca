//! Each check of the decoder on its own: a file changed in one field only, resealed, is
//! refused by the check that guards that field (and only that field changed, so no other
//! check can be what refuses it).

use bloomlab_core::format::{HEADER_LEN, reseal};
use bloomlab_cuckoo::BUCKET_SIZE;
use bloomlab_expandable::{ALT_BITS, ExpandableFilter};

/// A filter of 500 keys from a start capacity of 1000, as bytes.
fn sample(start: u64) -> Vec<u8> {
    let mut f = ExpandableFilter::with_start(start, 0.01).unwrap();
    for i in 0..start / 2 {
        f.insert(&i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).unwrap();
    }
    f.to_bytes()
}

/// The payload's fields: count u64, start capacity u64, target f64, start level, level,
/// slot width and fingerprint bits one byte each, stash length u64, the stash, the table.
const START_CAPACITY: usize = HEADER_LEN + 8;
const START_LEVEL: usize = HEADER_LEN + 24;
const LEVEL: usize = HEADER_LEN + 25;
const WIDTH: usize = HEADER_LEN + 26;
const STASH_LEN: usize = HEADER_LEN + 28;

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn refusal(mut bytes: Vec<u8>) -> String {
    assert!(reseal(&mut bytes));
    ExpandableFilter::from_bytes(&bytes)
        .map(|_| ())
        .unwrap_err()
        .to_string()
}

#[test]
fn a_start_capacity_of_another_level_or_of_zero_is_refused() {
    let bytes = sample(1_000);
    let level = bytes[START_LEVEL];
    // 1000 keys start at level 9 (263 buckets at 95 % of 4 slots); 10^6 would start at 19.
    let mut other = bytes.clone();
    other[START_CAPACITY..START_CAPACITY + 8].copy_from_slice(&1_000_000u64.to_le_bytes());
    let err = refusal(other);
    assert!(
        err.contains("start capacity and start level disagree"),
        "{err}"
    );
    // The same capacity written differently (any from 2 · 4 · 0.95 · 2^(level−1) up) loads.
    let mut same = bytes.clone();
    same[START_CAPACITY..START_CAPACITY + 8].copy_from_slice(&999u64.to_le_bytes());
    assert!(reseal(&mut same));
    assert!(ExpandableFilter::from_bytes(&same).is_ok());
    // Zero, at the level zero would map to (the smallest, 1): a filter started at 5 keys.
    let tiny = sample(5);
    assert_eq!(tiny[START_LEVEL], 1);
    let mut zero = tiny.clone();
    zero[START_CAPACITY..START_CAPACITY + 8].copy_from_slice(&0u64.to_le_bytes());
    let err = refusal(zero);
    assert!(
        err.contains("start capacity and start level disagree"),
        "{err}"
    );
    assert_eq!(level, 9);
}

#[test]
fn a_flagged_entry_too_short_to_know_its_other_bucket_is_refused() {
    let bytes = sample(1_000);
    let (level, width) = (u32::from(bytes[LEVEL]), u32::from(bytes[WIDTH]));
    let table = HEADER_LEN + 36 + 16 * u64_at(&bytes, STASH_LEN) as usize;
    let slots = (1u64 << level) * u64::from(BUCKET_SIZE);
    let get = |b: &[u8], slot: u64| -> u32 {
        (0..width)
            .map(|i| {
                let bit = slot * u64::from(width) + u64::from(i);
                u32::from(b[table + (bit / 8) as usize] >> (bit % 8) & 1) << i
            })
            .sum()
    };
    let set = |b: &mut Vec<u8>, slot: u64, raw: u32| {
        for i in 0..width {
            let bit = slot * u64::from(width) + u64::from(i);
            let byte = &mut b[table + (bit / 8) as usize];
            *byte = *byte & !(1 << (bit % 8)) | (((raw >> i) & 1) as u8) << (bit % 8);
        }
    };
    let empty = (0..slots).find(|&s| get(&bytes, s) == 0).unwrap();
    let flag = 1u32 << (width - 1);
    // A flagged (alternate-bucket) entry whose code has ALT_BITS bits knows its other bucket:
    // it loads. One bit shorter it cannot, and is refused for what the slot holds.
    let long = (1u32 << ALT_BITS) | 0b1011;
    let mut ok = bytes.clone();
    set(&mut ok, empty, flag | long);
    assert!(reseal(&mut ok));
    let loaded = ExpandableFilter::from_bytes(&ok);
    assert!(loaded.is_ok(), "{:?}", loaded.err());
    let short = (1u32 << (ALT_BITS - 1)) | 0b1011;
    let mut bad = bytes.clone();
    set(&mut bad, empty, flag | short);
    assert_eq!(get(&bad, empty), flag | short);
    let err = refusal(bad);
    assert!(err.contains(&format!("holds {:#x}", flag | short)), "{err}");
}

#[test]
fn a_table_fuller_than_the_load_that_doubles_it_is_refused() {
    // Every empty slot given an entry with the longest code the slots hold (the least each
    // adds to the FPR bound, so that only the load is over): refused; filled only up to
    // the load limit, it loads.
    let bytes = sample(1_000);
    let (level, width) = (u32::from(bytes[LEVEL]), u32::from(bytes[WIDTH]));
    let table = HEADER_LEN + 36 + 16 * u64_at(&bytes, STASH_LEN) as usize;
    let slots = (1u64 << level) * u64::from(BUCKET_SIZE);
    let bit = |b: &[u8], i: u64| b[table + (i / 8) as usize] >> (i % 8) & 1;
    let empty: Vec<u64> = (0..slots)
        .filter(|&s| (0..u64::from(width)).all(|i| bit(&bytes, s * u64::from(width) + i) == 0))
        .collect();
    let held = slots - empty.len() as u64;
    let limit = (0.95 * slots as f64) as u64;
    let fill = |b: &mut Vec<u8>, n: usize| {
        // The longest code: its top (marker) bit just under the flag, home bucket.
        let raw = (1u32 << (width - 2)) | 0b101;
        for &s in &empty[..n] {
            for i in 0..width {
                let at = s * u64::from(width) + u64::from(i);
                b[table + (at / 8) as usize] |= (((raw >> i) & 1) as u8) << (at % 8);
            }
        }
        assert!(reseal(b));
    };
    let mut full = bytes.clone();
    fill(&mut full, empty.len());
    let err = ExpandableFilter::from_bytes(&full)
        .map(|_| ())
        .unwrap_err()
        .to_string();
    assert!(err.contains("the load allows"), "{err}");
    let mut at_limit = bytes.clone();
    fill(&mut at_limit, (limit - held) as usize);
    let loaded = ExpandableFilter::from_bytes(&at_limit);
    assert!(loaded.is_ok(), "{:?}", loaded.err());
}

#[test]
fn an_unsorted_stash_or_a_stash_entry_past_the_table_is_refused() {
    // Copies of two keys crowd their buckets into the stash (16 bytes an entry: home, code,
    // sorted). Swapped, the first and last entries leave it unsorted; a home bucket past the
    // table, at the end where the order still holds, is out of range.
    let mut f = ExpandableFilter::with_start(1_000, 0.01).unwrap();
    for _ in 0..60 {
        f.insert("first").unwrap();
        f.insert("second").unwrap();
    }
    let bytes = f.to_bytes();
    let n = u64_at(&bytes, STASH_LEN) as usize;
    let stash = HEADER_LEN + 36;
    let entry = |i: usize| stash + 16 * i;
    assert!(n >= 2 && bytes[entry(0)..entry(1)] != bytes[entry(n - 1)..entry(n)]);
    let mut swapped = bytes.clone();
    let (first, last) = (
        bytes[entry(0)..entry(1)].to_vec(),
        bytes[entry(n - 1)..entry(n)].to_vec(),
    );
    swapped[entry(0)..entry(1)].copy_from_slice(&last);
    swapped[entry(n - 1)..entry(n)].copy_from_slice(&first);
    let err = refusal(swapped);
    assert!(err.contains("invalid entry"), "{err}");
    let mut far = bytes.clone();
    let past = 1u64 << bytes[LEVEL];
    far[entry(n - 1)..entry(n - 1) + 8].copy_from_slice(&past.to_le_bytes());
    let err = refusal(far);
    assert!(err.contains("invalid entry"), "{err}");
}
