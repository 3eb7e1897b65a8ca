//! The Ribbon filter's promises for arbitrary key sets and bytes (generic halves in
//! `bloomlab_conformance::props`; `PROPTEST_CASES` sets the case count).

use std::alloc::System;

use bloomlab_conformance::props::proptest::prelude::*;
use bloomlab_conformance::props::{self, INSTRUMENTED_SYSTEM, StatsAlloc};
use bloomlab_ribbon::{RibbonFilter, RibbonView};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn build(keys: &[Vec<u8>]) -> RibbonFilter {
    RibbonFilter::build(keys.iter(), 0.01).unwrap()
}

/// The owning decoder and the view accept exactly the same bytes, within bounds.
fn decoders_agree(input: &[u8]) -> Result<(), TestCaseError> {
    let owned = props::decode_is_total(
        GLOBAL,
        input,
        RibbonFilter::from_bytes,
        RibbonFilter::to_bytes,
    )?;
    let view = props::bounded(GLOBAL, input.len(), || RibbonView::new(input).is_ok())?;
    prop_assert_eq!(owned, view, "view and owning decoder disagree");
    Ok(())
}

proptest! {
    #![proptest_config(props::config())]

    /// Any key list, repeats and the empty key included, builds; no member tests negative;
    /// the encoding decodes (owned and viewed) to a filter that answers the same and
    /// re-encodes to the same bytes (the filter has no `PartialEq`: its bytes are its value).
    #[test]
    fn no_false_negatives_and_round_trip(keys in props::key_lists(300), probes in props::key_lists(40)) {
        let _g = props::serial();
        let f = build(&keys);
        props::no_false_negatives(&f, &keys)?;
        let bytes = f.to_bytes();
        let back = RibbonFilter::from_bytes(&bytes).unwrap();
        prop_assert_eq!(back.to_bytes(), bytes.clone());
        let view = RibbonView::new(&bytes).unwrap();
        for k in keys.iter().chain(&probes) {
            prop_assert_eq!(back.might_contain(k), f.might_contain(k));
            prop_assert_eq!(view.might_contain(k), f.might_contain(k));
        }
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
