//! The Ribbon filter's promises for arbitrary key sets and bytes (generic halves in
//! `bloomlab_conformance::props`; `PROPTEST_CASES` sets the case count).

use bloomlab_conformance::props::proptest::prelude::*;
use bloomlab_conformance::{counting_allocator, props, variant_properties};
use bloomlab_ribbon::{RibbonFilter, RibbonView};

counting_allocator!();

fn build(keys: &[Vec<u8>]) -> RibbonFilter {
    RibbonFilter::build(keys.iter(), 0.01).unwrap()
}

/// Any key list, repeats and the empty key included, builds; no member tests negative; the
/// encoding decodes (owned and viewed) to a filter that answers the same and re-encodes to
/// the same bytes (the filter has no `PartialEq`: its bytes are its value).
fn check(f: &RibbonFilter, keys: &[Vec<u8>], probes: &[Vec<u8>]) -> Result<(), TestCaseError> {
    props::no_false_negatives(f, keys)?;
    let bytes = f.to_bytes();
    let back = RibbonFilter::from_bytes(&bytes).unwrap();
    prop_assert_eq!(back.to_bytes(), bytes.clone());
    let view = RibbonView::new(&bytes).unwrap();
    props::answers_alike(f, |k| back.might_contain(k), keys, probes)?;
    props::answers_alike(f, |k| view.might_contain(k), keys, probes)
}

/// The owning decoder and the view accept exactly the same bytes, within bounds.
fn decoders_agree(input: &[u8]) -> Result<(), TestCaseError> {
    props::decoders_agree(
        GLOBAL,
        input,
        RibbonFilter::from_bytes,
        RibbonFilter::to_bytes,
        &[&|b| RibbonView::new(b).is_ok()],
    )
}

variant_properties! {
    build: build,
    check: check,
    decoders: decoders_agree,
    encodings: |f: &RibbonFilter| [f.to_bytes()],
}
