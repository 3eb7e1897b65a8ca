//! The classic filter's promises for arbitrary keys and bytes (generic halves in
//! `bloomlab_conformance::props`; `PROPTEST_CASES` sets the case count).

use std::alloc::System;

use bloomlab_classic::{BloomFilter, BloomFilterView};
use bloomlab_conformance::props::proptest::prelude::*;
use bloomlab_conformance::props::{self, INSTRUMENTED_SYSTEM, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn build(keys: &[Vec<u8>]) -> BloomFilter {
    let mut f = BloomFilter::with_fpr(keys.len() as u64 + 1, 0.01).unwrap();
    for k in keys {
        f.insert(k);
    }
    f
}

/// The owning decoder and the view accept exactly the same bytes, within bounds.
fn decoders_agree(input: &[u8]) -> Result<(), TestCaseError> {
    let owned = props::decode_is_total(
        GLOBAL,
        input,
        BloomFilter::from_bytes,
        BloomFilter::to_bytes,
    )?;
    let view = props::bounded(GLOBAL, input.len(), || BloomFilterView::new(input).is_ok())?;
    prop_assert_eq!(owned, view, "view and owning decoder disagree");
    Ok(())
}

proptest! {
    #![proptest_config(props::config())]

    #[test]
    fn no_false_negatives_and_round_trip(keys in props::key_lists(300), probes in props::key_lists(40)) {
        let _g = props::serial();
        let f = build(&keys);
        props::no_false_negatives(&f, &keys)?;
        props::round_trips(&f, &probes, BloomFilter::to_bytes, BloomFilter::from_bytes)?;
        let bytes = f.to_bytes();
        let view = BloomFilterView::new(&bytes).unwrap();
        for k in keys.iter().chain(&probes) {
            prop_assert_eq!(view.might_contain(k), f.might_contain(k));
        }
    }

    #[test]
    fn union_is_the_filter_of_both(a in props::key_lists(200), b in props::key_lists(200)) {
        let _g = props::serial();
        let empty = BloomFilter::with_fpr(401, 0.01).unwrap();
        props::union_is_the_filter_of_both(&empty, &a, &b, BloomFilter::union)?;
    }

    #[test]
    fn arbitrary_bytes_decode_or_fail_typed(bytes in prop::collection::vec(any::<u8>(), 0..1024)) {
        let _g = props::serial();
        decoders_agree(&bytes)?;
    }

    #[test]
    fn mutated_encodings_decode_or_fail_typed(keys in props::key_lists(100), muts in props::mutations()) {
        let _g = props::serial();
        decoders_agree(&props::mutate(&build(&keys).to_bytes(), &muts))?;
    }
}
