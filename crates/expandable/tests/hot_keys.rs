//! One key inserted 10^6 times (the crate docs, *Repeated inserts*): copies while its two
//! buckets have free slots (8 at most), every further insert refused at once with
//! `Error::TooManyCopies`; neither the table nor the stash grows for them, and as many removes
//! as accepted inserts take the key out again.

use bloomlab_conformance::hot::{self, HOT_KEY, HOT_REPEATS};
use bloomlab_core::Error;
use bloomlab_expandable::{ExpandableFilter, Filter, MAX_COPIES};

#[test]
fn a_hot_key_costs_at_most_eight_entries_and_constant_time() {
    // No size hint: grown from 2 buckets to the distinct keys.
    let f = ExpandableFilter::new(0.01).unwrap();
    let r = hot::check_hot_key(
        f,
        |e| matches!(e, Error::TooManyCopies(c) if (1..=MAX_COPIES).contains(c)),
        |f: &ExpandableFilter| {
            assert_eq!(f.copies(HOT_KEY), 0);
            assert_eq!(f.stash_len(), 0, "no copy left in the stash");
        },
    );
    assert!((1..=u64::from(MAX_COPIES)).contains(&r.accepted), "{r:?}");
    assert_eq!(r.refused, HOT_REPEATS - r.accepted);
}

#[test]
fn a_hot_key_in_a_filter_sized_for_it_grows_nothing() {
    // A start of 10^6 keeps the table far below half full, where a failed kick chain leaves
    // entries in the stash rather than growing the table: the copy rule stops them at 8.
    let mut f = ExpandableFilter::with_fpr(1_000_000, 0.01).unwrap();
    let bytes = f.size_in_bytes();
    let refused = (0..HOT_REPEATS)
        .filter(|_| f.insert_bytes(HOT_KEY).is_err())
        .count() as u64;
    assert_eq!(refused, HOT_REPEATS - u64::from(MAX_COPIES));
    assert_eq!(f.copies(HOT_KEY), MAX_COPIES);
    assert!(f.stash_len() <= MAX_COPIES as usize);
    assert!(f.size_in_bytes() <= bytes + 16 * MAX_COPIES as usize);
}

#[test]
fn insert_unique_keeps_one_entry_per_key() {
    let mut f = ExpandableFilter::new(0.01).unwrap();
    let new = (0..10_000u64)
        .filter(|i| f.insert_unique(i).unwrap())
        .count() as u64;
    // Every key is inserted unless it was a false positive when it came.
    assert_eq!(f.len(), new);
    assert!(new > 9_000, "{new}");
    // Every key tests positive now, so repeats change nothing.
    let before = f.clone();
    for _ in 0..3 {
        assert!((0..10_000u64).all(|i| f.insert_unique(&i) == Ok(false)));
    }
    assert_eq!(f, before);
    assert!((0..HOT_REPEATS).all(|_| f.insert_unique(HOT_KEY).is_ok()));
    assert_eq!(f.copies(HOT_KEY), 1);
    assert!(f.remove(HOT_KEY) && !f.might_contain(HOT_KEY));
}
