//! The blocked filter's promises for arbitrary keys and bytes (generic halves in
//! `bloomlab_conformance::props`; `PROPTEST_CASES` sets the case count).

use bloomlab_blocked::{BlockedBloomFilter, BlockedBloomFilterView, BlockedFilterBytes};
use bloomlab_conformance::props::proptest::prelude::*;
use bloomlab_conformance::{counting_allocator, props, variant_properties};

counting_allocator!();

fn build(keys: &[Vec<u8>]) -> BlockedBloomFilter {
    props::with_keys(
        BlockedBloomFilter::with_fpr(keys.len() as u64 + 1, 0.01).unwrap(),
        keys,
    )
}

/// No false negatives; the bytes round-trip and the view answers alike.
fn check(
    f: &BlockedBloomFilter,
    keys: &[Vec<u8>],
    probes: &[Vec<u8>],
) -> Result<(), TestCaseError> {
    props::no_false_negatives(f, keys)?;
    props::round_trips(
        f,
        probes,
        BlockedBloomFilter::to_bytes,
        BlockedBloomFilter::from_bytes,
    )?;
    let bytes = f.to_bytes();
    let view = BlockedBloomFilterView::new(&bytes).unwrap();
    props::answers_alike(f, |k| view.might_contain(k), keys, probes)
}

/// The owning decoder and both views accept exactly the same bytes, within bounds.
fn decoders_agree(input: &[u8]) -> Result<(), TestCaseError> {
    props::decoders_agree(
        GLOBAL,
        input,
        BlockedBloomFilter::from_bytes,
        BlockedBloomFilter::to_bytes,
        &[&|b| BlockedBloomFilterView::new(b).is_ok(), &|b| {
            BlockedFilterBytes::new(b).is_ok()
        }],
    )
}

variant_properties! {
    build: build,
    check: check,
    decoders: decoders_agree,
    encodings: |f: &BlockedBloomFilter| [f.to_bytes()],
    union: (BlockedBloomFilter::with_fpr(401, 0.01).unwrap(), BlockedBloomFilter::union),
}
