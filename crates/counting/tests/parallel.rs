//! The parallel build: counter for counter the sequential build, sticky counters included.

use bloomlab_conformance::{ThreadsSeen, check_parallel_report};
use bloomlab_core::Error;
use bloomlab_core::parallel::ParallelReport;
use bloomlab_counting::CountingBloomFilter;

#[test]
fn parallel_build_is_identical_to_sequential_inserts() {
    for n in [1u64, 65_535, 65_536, 200_003] {
        let keys: Vec<u64> = (0..n)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let mut want = CountingBloomFilter::with_fpr(n, 0.01).unwrap();
        keys.iter().for_each(|k| {
            want.insert(k);
        });
        for threads in [0, 1, 2, 3, 7] {
            let mut f = CountingBloomFilter::with_fpr(n, 0.01).unwrap();
            f.insert_parallel_with_threads(&keys, threads);
            assert_eq!(f.to_bytes(), want.to_bytes(), "n = {n}, {threads} threads");
            assert_eq!(f.len(), n);
        }
        assert_eq!(
            CountingBloomFilter::from_keys(&keys, 0.01)
                .unwrap()
                .to_bytes(),
            want.to_bytes()
        );
    }
    assert!(matches!(
        CountingBloomFilter::from_keys::<u64>(&[], 0.01),
        Err(Error::ZeroItems)
    ));
}

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

#[test]
fn a_large_build_runs_on_the_threads_it_is_given_and_reports_it() {
    let raw: Vec<u64> = (0..200_000u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    let mut want = CountingBloomFilter::with_fpr(200_000, 0.01).unwrap();
    raw.iter().for_each(|k| {
        want.insert(k);
    });
    for threads in [2usize, 3, 4] {
        let seen = ThreadsSeen::default();
        let mut f = CountingBloomFilter::with_fpr(200_000, 0.01).unwrap();
        let report = f.insert_parallel_with_threads(&seen.keys(&raw), threads);
        assert_eq!(f.to_bytes(), want.to_bytes(), "{threads} threads");
        // Seen from outside the build (the threads that hashed a key), and from its report.
        check_parallel_report(&report, &seen, threads, raw.len(), None);
    }
    // Below 65 536 keys: the calling thread alone, and the report says so.
    let seen = ThreadsSeen::default();
    let mut f = CountingBloomFilter::with_fpr(200_000, 0.01).unwrap();
    let report = f.insert_parallel_with_threads(&seen.keys(&raw[..65_535]), 4);
    assert_eq!((seen.count(), report.threads), (1, 1));
    assert_eq!(report, ParallelReport::one_thread(65_535));
}
