//! The parallel build: counter for counter the sequential build, sticky counters included.

use bloomlab_counting::CountingBloomFilter;

// Private tables merged: nothing is exchanged between threads.
bloomlab_conformance::parallel_suite!(CountingBloomFilter, max_queued: None);

#[test]
fn sticky_counters_merge_like_sequential_inserts() {
    // A tiny table overfilled with repeats: most counters reach 15 in each thread's part
    // and again in the merge.
    let keys: Vec<u64> = (0..200_000u64).map(|i| i % 50).collect();
    let mut want = CountingBloomFilter::with_counters(64, 3).unwrap();
    keys.iter().for_each(|k| {
        want.insert(k);
    });
    let mut f = CountingBloomFilter::with_counters(64, 3).unwrap();
    f.insert_parallel_with_threads(&keys, 4);
    assert_eq!(f.to_bytes(), want.to_bytes());
    assert!(f.saturated_counters() > 0);
    // Into a filter that already holds keys.
    let mut a = CountingBloomFilter::with_counters(1 << 16, 4).unwrap();
    let mut b = a.clone();
    a.insert("x");
    b.insert("x");
    a.insert_parallel_with_threads(&keys, 2);
    keys.iter().for_each(|k| {
        b.insert(k);
    });
    assert_eq!(a.to_bytes(), b.to_bytes());
}
