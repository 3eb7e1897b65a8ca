//! One key inserted 10^6 times (the crate docs, *Repeated inserts*): its counters stick at
//! 15, nothing grows, every insert costs the same, and the key stays present for good.

use bloomlab_conformance::hot::{self, HOT_DISTINCT, HOT_KEY, HOT_REPEATS};
use bloomlab_counting::{CountingBloomFilter, STICKY};

#[test]
fn a_hot_key_sticks_its_counters_and_stays() {
    let f = CountingBloomFilter::with_fpr(HOT_DISTINCT, 0.01).unwrap();
    let r = hot::check_hot_key(
        f,
        |e| panic!("the counting filter refused an insert: {e}"),
        |f: &CountingBloomFilter| {
            // Every remove of it succeeded, yet it stays: its counters are sticky.
            assert!(f.might_contain(HOT_KEY));
            let h = f.hash_key(HOT_KEY);
            assert!(
                h.positions(f.hashes(), f.counters())
                    .all(|i| f.counter(i) == Some(STICKY))
            );
        },
    );
    assert_eq!((r.accepted, r.refused), (HOT_REPEATS, 0));
    assert_eq!(r.bytes_after, r.bytes_distinct);
}

#[test]
fn a_key_inserted_fewer_than_fifteen_times_is_a_multiset_member() {
    let mut f = CountingBloomFilter::with_fpr(1_000, 0.01).unwrap();
    for c in 1..=14u32 {
        for _ in 0..c {
            f.insert("k");
        }
        for left in (0..c).rev() {
            assert!(f.remove("k"));
            assert_eq!(f.might_contain("k"), left > 0, "{c} inserts, {left} left");
        }
    }
    assert!(f.counter_stats().max == 0 && f.is_empty());
    // 15 inserts stick the counters: removes succeed, the key stays.
    for _ in 0..u32::from(STICKY) {
        f.insert("k");
    }
    for _ in 0..u32::from(STICKY) {
        assert!(f.remove("k"));
    }
    assert!(f.might_contain("k") && f.is_empty());
}

#[test]
fn insert_unique_touches_no_counter_for_a_repeat() {
    let mut f = CountingBloomFilter::with_fpr(1_000, 0.01).unwrap();
    assert!(f.insert_unique("k"));
    let before = f.clone();
    assert!((0..HOT_REPEATS).all(|_| !f.insert_unique("k")));
    assert_eq!(f, before);
    assert!(f.remove("k") && !f.might_contain("k"));
}
