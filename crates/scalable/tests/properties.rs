//! The scalable filter's promises for arbitrary keys and bytes (generic halves in
//! `bloomlab_conformance::props`; `PROPTEST_CASES` sets the case count).

use std::alloc::System;

use bloomlab_conformance::props::proptest::prelude::*;
use bloomlab_conformance::props::{self, INSTRUMENTED_SYSTEM, StatsAlloc};
use bloomlab_core::error::Error;
use bloomlab_scalable::ScalableBloomFilter;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// A chain that starts small (16 items), so up to 300 keys grow it through several stages.
fn build(keys: &[Vec<u8>]) -> ScalableBloomFilter {
    props::with_keys(ScalableBloomFilter::new(16, 0.01).unwrap(), keys)
}

proptest! {
    #![proptest_config(props::config())]

    #[test]
    fn no_false_negatives_and_round_trip(keys in props::key_lists(300), probes in props::key_lists(40)) {
        let _g = props::serial();
        let f = build(&keys);
        props::no_false_negatives(&f, &keys)?;
        props::round_trips(&f, &probes, ScalableBloomFilter::to_bytes, ScalableBloomFilter::from_bytes)?;
    }

    /// A chain's union is not the chain built from both sets (each grew its own stages), so
    /// the promise is the documented one: either no false negatives for both sets, or
    /// `Error::Full` with `a` unchanged.
    #[test]
    fn union_keeps_both_sets_or_refuses_unchanged(a in props::key_lists(200), b in props::key_lists(200)) {
        let _g = props::serial();
        let (mut fa, fb) = (build(&a), build(&b));
        let before = fa.clone();
        match fa.union(&fb) {
            Ok(()) => {
                props::no_false_negatives(&fa, &a)?;
                props::no_false_negatives(&fa, &b)?;
            }
            Err(Error::Full(_)) => prop_assert!(fa == before, "a refused union changed the filter"),
            Err(e) => prop_assert!(false, "unexpected error {}", e),
        }
    }

    #[test]
    fn arbitrary_bytes_decode_or_fail_typed(bytes in prop::collection::vec(any::<u8>(), 0..1024)) {
        let _g = props::serial();
        props::decode_is_total(GLOBAL, &bytes, ScalableBloomFilter::from_bytes, ScalableBloomFilter::to_bytes)?;
    }

    #[test]
    fn mutated_encodings_decode_or_fail_typed(keys in props::key_lists(100), muts in props::mutations()) {
        let _g = props::serial();
        let input = props::mutate(&build(&keys).to_bytes(), &muts);
        props::decode_is_total(GLOBAL, &input, ScalableBloomFilter::from_bytes, ScalableBloomFilter::to_bytes)?;
    }
}
