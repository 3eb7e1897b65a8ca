//! The parallel build: bit-identical to inserting the keys one by one.

use bloomlab_classic::{BloomFilter, PARALLEL_MAX_QUEUED};
use bloomlab_conformance::parallel::check_builds_alike;

// The documented bound on each inbox: 64 batches.
bloomlab_conformance::parallel_suite!(BloomFilter, max_queued: Some(64));

#[test]
fn the_inbox_bound_is_the_documented_one() {
    assert_eq!(PARALLEL_MAX_QUEUED, 64);
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
        let empty = || BloomFilter::with_bits(bits, 7).unwrap();
        let build = |f: &mut BloomFilter, keys: &[Vec<u8>], t| {
            f.insert_parallel_with_threads(keys, t);
        };
        check_builds_alike(&keys, empty, build, &[2, 3, 8, 9]);
    }
}
