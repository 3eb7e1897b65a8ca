//! One key inserted 10^6 times (the crate docs, *Repeated inserts*): 8 copies kept, every
//! further insert refused at once with `Error::TooManyCopies`, the table unchanged in size,
//! and 8 removes take the key out again.

use bloomlab_conformance::hot::{self, HOT_DISTINCT, HOT_KEY, HOT_REPEATS};
use bloomlab_core::Error;
use bloomlab_cuckoo::{CuckooFilter, MAX_COPIES};

#[test]
fn a_hot_key_costs_eight_slots_and_constant_time() {
    // Room for the distinct keys at 3/4 load, so the copies find their slots by kicking.
    let f = CuckooFilter::with_fpr(4 * HOT_DISTINCT / 3, 0.01).unwrap();
    let r = hot::check_hot_key(
        f,
        |e| matches!(e, Error::TooManyCopies(MAX_COPIES)),
        |f: &CuckooFilter| assert_eq!(f.copies(HOT_KEY), 0),
    );
    assert_eq!(r.accepted, u64::from(MAX_COPIES));
    assert_eq!(r.refused, HOT_REPEATS - u64::from(MAX_COPIES));
    assert_eq!(r.bytes_after, r.bytes_distinct);
}

#[test]
fn insert_unique_keeps_one_copy() {
    let mut f = CuckooFilter::with_fpr(1_000, 0.01).unwrap();
    assert_eq!(f.insert_unique("k"), Ok(true));
    for _ in 0..1_000 {
        assert_eq!(f.insert_unique("k"), Ok(false));
    }
    assert_eq!((f.copies("k"), f.len()), (1, 1));
    assert!(f.remove("k"));
    assert!(!f.might_contain("k") && f.is_empty());
    // Behind `dyn Filter` the trait's default does the same.
    let mut boxed: Box<dyn bloomlab_core::Filter> = Box::new(f);
    assert_eq!(boxed.insert_unique("k"), Ok(true));
    assert_eq!(boxed.insert_unique("k"), Ok(false));
    assert_eq!(boxed.len(), 1);
}
