//! The counting filter's promises for arbitrary keys, operations and bytes (generic halves in
//! `bloomlab_conformance::props`; `PROPTEST_CASES` sets the case count).

use std::alloc::System;

use bloomlab_conformance::props::proptest::prelude::*;
use bloomlab_conformance::props::{self, INSTRUMENTED_SYSTEM, StatsAlloc};
use bloomlab_counting::CountingBloomFilter;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn build(keys: &[Vec<u8>]) -> CountingBloomFilter {
    props::with_keys(
        CountingBloomFilter::with_fpr(keys.len() as u64 + 1, 0.01).unwrap(),
        keys,
    )
}

proptest! {
    #![proptest_config(props::config())]

    #[test]
    fn no_false_negatives_and_round_trip(keys in props::key_lists(300), probes in props::key_lists(40)) {
        let _g = props::serial();
        let f = build(&keys);
        props::no_false_negatives(&f, &keys)?;
        props::round_trips(&f, &probes, CountingBloomFilter::to_bytes, CountingBloomFilter::from_bytes)?;
    }

    /// Small filters (24 pool keys in 8–64 expected items) so counters collide, repeat and
    /// reach the sticky value.
    #[test]
    fn removes_like_a_multiset(capacity in 8u64..64, ops in props::ops(400)) {
        let _g = props::serial();
        props::removes_like_a_multiset(CountingBloomFilter::with_fpr(capacity, 0.05).unwrap(), &ops)?;
    }

    #[test]
    fn arbitrary_bytes_decode_or_fail_typed(bytes in prop::collection::vec(any::<u8>(), 0..1024)) {
        let _g = props::serial();
        props::decode_is_total(GLOBAL, &bytes, CountingBloomFilter::from_bytes, CountingBloomFilter::to_bytes)?;
    }

    #[test]
    fn mutated_encodings_decode_or_fail_typed(keys in props::key_lists(100), muts in props::mutations()) {
        let _g = props::serial();
        let input = props::mutate(&build(&keys).to_bytes(), &muts);
        props::decode_is_total(GLOBAL, &input, CountingBloomFilter::from_bytes, CountingBloomFilter::to_bytes)?;
    }
}
