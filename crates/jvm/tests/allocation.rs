//! Decoding allocates what the input justifies, not what its header claims. One test in this
//! binary, so no other thread allocates while it counts.

use bloomlab_jvm::{GuavaBloomFilter, SparkBloomFilter};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use std::alloc::System;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

#[test]
fn a_huge_announced_length_costs_only_the_bytes_given() {
    // Spark V2 and Guava headers announcing 2^31 − 1 words (16 GiB), followed by 64 KiB.
    let mut spark = Vec::new();
    for field in [2i32, 3, 0, i32::MAX] {
        spark.extend_from_slice(&field.to_be_bytes());
    }
    let mut guava = vec![1u8, 3];
    guava.extend_from_slice(&i32::MAX.to_be_bytes());
    for b in [&mut spark, &mut guava] {
        b.extend(std::iter::repeat_n(0x5au8, 64 << 10));
    }

    let region = Region::new(GLOBAL);
    assert!(SparkBloomFilter::from_bytes(&spark).is_err());
    assert!(GuavaBloomFilter::from_bytes(&guava).is_err());
    assert!(SparkBloomFilter::read_from(&mut spark.as_slice()).is_err());
    assert!(GuavaBloomFilter::read_from(&mut guava.as_slice()).is_err());
    let allocated = region.change().bytes_allocated;
    // The slices allocate nothing for the words; the streams grow with what arrives (64 KiB
    // each, vectors doubling, plus one 64 KiB read buffer): well under 1 MiB, where
    // believing the header would take 16 GiB.
    assert!(allocated < 1 << 20, "{allocated} bytes allocated");
}
