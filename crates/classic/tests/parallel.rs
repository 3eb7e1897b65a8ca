//! The parallel build: bit-identical to inserting the keys one by one.

use bloomlab_classic::BloomFilter;
use bloomlab_conformance::{ThreadsSeen, check_parallel_report};
use bloomlab_core::Error;
use bloomlab_core::parallel::ParallelReport;

#[test]
fn parallel_build_is_bit_identical_to_sequential_inserts() {
    for n in [1u64, 65_535, 65_536, 200_003] {
        let keys: Vec<u64> = (0..n)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let mut want = BloomFilter::with_fpr(n, 0.01).unwrap();
        keys.iter().for_each(|k| {
            want.insert(k);
        });
        for threads in [0, 1, 2, 3, 7] {
            let mut f = BloomFilter::with_fpr(n, 0.01).unwrap();
            f.insert_parallel_with_threads(&keys, threads);
            assert_eq!(f, want, "n = {n}, {threads} threads");
        }
        let f = BloomFilter::from_keys(&keys, 0.01).unwrap();
        assert_eq!(f, want);
        assert_eq!(f.to_bytes(), want.to_bytes());
        let mut f = BloomFilter::with_fpr(n, 0.01).unwrap();
        f.insert("before");
        f.insert_parallel(&keys);
        want.insert("before");
        assert_eq!(f, want);
    }
    assert!(matches!(
        BloomFilter::from_keys::<u64>(&[], 0.01),
        Err(Error::ZeroItems)
    ));
}

#[test]
fn every_thread_count_and_key_length_builds_the_same_filter() {
    // Probes routed in vector lanes (up to 8 threads, on a CPU with AVX-512) or one at a time
    // (9 threads), keys of mixed lengths, and an array size that is not a whole number of
    // words.
    let keys: Vec<Vec<u8>> = (0..300_000u64)
        .map(|i| {
            let w = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes();
            w[..1 + (i % 8) as usize].to_vec()
        })
        .collect();
    for bits in [9_000_001u64, 2_875_000] {
        let mut want = BloomFilter::with_bits(bits, 7).unwrap();
        keys.iter().for_each(|k| {
            want.insert(k.as_slice());
        });
        for threads in [2, 3, 8, 9] {
            let mut f = BloomFilter::with_bits(bits, 7).unwrap();
            f.insert_parallel_with_threads(&keys, threads);
            assert_eq!(f, want, "{bits} bits, {threads} threads");
        }
    }
}

#[test]
fn a_large_build_runs_on_the_threads_it_is_given_and_reports_it() {
    let raw: Vec<u64> = (0..300_000u64)
        .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .collect();
    let mut want = BloomFilter::with_fpr(300_000, 0.01).unwrap();
    want.insert_batch(&raw);
    // The documented bound on each inbox: 64 batches.
    assert_eq!(bloomlab_classic::PARALLEL_MAX_QUEUED, 64);
    for threads in [2usize, 3, 4] {
        let seen = ThreadsSeen::default();
        let mut f = BloomFilter::with_fpr(300_000, 0.01).unwrap();
        let report = f.insert_parallel_with_threads(&seen.keys(&raw), threads);
        assert_eq!(f, want, "{threads} threads");
        // Seen from outside the build (the threads that hashed a key), and from its report.
        check_parallel_report(&report, &seen, threads, raw.len(), Some(64));
    }
    // Below 65 536 keys: the calling thread alone, and the report says so.
    let seen = ThreadsSeen::default();
    let mut f = BloomFilter::with_fpr(300_000, 0.01).unwrap();
    let report = f.insert_parallel_with_threads(&seen.keys(&raw[..65_535]), 4);
    assert_eq!((seen.count(), report.threads), (1, 1));
    assert_eq!(report, ParallelReport::one_thread(65_535));
}
