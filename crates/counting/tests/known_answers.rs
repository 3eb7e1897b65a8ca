//! Known-answer vectors of the counting filter (xxh3 scheme named explicitly): which counters
//! fixed keys increment, the exact bytes of a small filter (nibble packing, odd `m`) and the
//! digest of a larger one, and a literal encoded filter decoded and queried. A change to any
//! literal here needs a format version bump.

use bloomlab_conformance::kat::{POSITIONS_1000_K7, keys, positives, probe_keys};
use bloomlab_conformance::{self as conf, from_hex};
use bloomlab_core::Xxh3Scheme;
use bloomlab_counting::CountingBloomFilter;

#[test]
fn counters_of_fixed_keys() {
    // The classic filter's positions (one literal table for both): each key inserted
    // twice leaves 2 in each of its counters.
    for (key, want) in probe_keys().iter().zip(POSITIONS_1000_K7) {
        let mut f = CountingBloomFilter::with_counters_and_scheme(1000, 7, Xxh3Scheme).unwrap();
        f.insert(&key[..]);
        f.insert(&key[..]);
        let got: Vec<(u64, u8)> = (0..1000)
            .filter_map(|i| {
                let v = f.counter(i).unwrap();
                (v != 0).then_some((i, v))
            })
            .collect();
        let want: Vec<(u64, u8)> = want.iter().map(|&i| (i, 2)).collect();
        assert_eq!(got, want, "key of {} bytes", key.len());
    }
}

/// 41 counters (odd: the last high nibble is unused), k = 3, keys k0 … k5, then k0 twice more.
const SMALL: &str = "424c41420100030100000000000000003d0000000000000053a3cfa5c3044155\
                     2900000000000000030000000000000008000000000000000900000000000000\
                     0000000000000000020001033040000001110201000010120000000001";

#[test]
fn serialized_bytes_after_fixed_inserts() {
    let mut f = CountingBloomFilter::with_counters_and_scheme(41, 3, Xxh3Scheme).unwrap();
    for k in keys("k", 6) {
        f.insert(&k);
    }
    f.insert("k0");
    f.insert("k0");
    assert_eq!(f.to_bytes(), from_hex(SMALL));
    let g = CountingBloomFilter::with_fpr_and_scheme(10_000, 0.01, Xxh3Scheme);
    let want = ("counting 10^4 at 1 %", 47_998, 0xe30e_d2c9_b0e8_dfc4);
    conf::kat::check_ten_thousand(g, CountingBloomFilter::to_bytes, want);
}

#[test]
fn literal_filter_decodes_and_answers_as_written() {
    let mut f = CountingBloomFilter::from_bytes(&from_hex(SMALL)).unwrap();
    assert_eq!((f.counters(), f.hashes(), f.len()), (41, 3, 8));
    assert!(keys("k", 6).iter().all(|k| f.might_contain(k)));
    let maybe = positives(|k| f.might_contain(k));
    assert_eq!(maybe, [16, 51, 94, 130, 137, 177, 230]);
    // Removing what was inserted leaves every counter at zero.
    for k in keys("k", 6) {
        assert!(f.remove(&k));
    }
    assert!(f.remove("k0") && f.remove("k0"));
    assert!(f.is_empty() && f.counter_stats().nonzero == 0);
}
