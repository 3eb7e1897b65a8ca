//! The classic filter's promises for arbitrary keys and bytes (generic halves in
//! `bloomlab_conformance::props`; `PROPTEST_CASES` sets the case count).

use bloomlab_classic::{BloomFilter, BloomFilterView};
use bloomlab_conformance::props::proptest::prelude::*;
use bloomlab_conformance::{counting_allocator, props, variant_properties};

counting_allocator!();

fn build(keys: &[Vec<u8>]) -> BloomFilter {
    let mut f = BloomFilter::with_fpr(keys.len() as u64 + 1, 0.01).unwrap();
    for k in keys {
        f.insert(k);
    }
    f
}

/// No false negatives; the bytes round-trip and the view answers alike.
fn check(f: &BloomFilter, keys: &[Vec<u8>], probes: &[Vec<u8>]) -> Result<(), TestCaseError> {
    props::no_false_negatives(f, keys)?;
    props::round_trips(f, probes, BloomFilter::to_bytes, BloomFilter::from_bytes)?;
    let bytes = f.to_bytes();
    let view = BloomFilterView::new(&bytes).unwrap();
    props::answers_alike(f, |k| view.might_contain(k), keys, probes)
}

/// The owning decoder and the view accept exactly the same bytes, within bounds.
fn decoders_agree(input: &[u8]) -> Result<(), TestCaseError> {
    props::decoders_agree(
        GLOBAL,
        input,
        BloomFilter::from_bytes,
        BloomFilter::to_bytes,
        &[&|b| BloomFilterView::new(b).is_ok()],
    )
}

variant_properties! {
    build: build,
    check: check,
    decoders: decoders_agree,
    encodings: |f: &BloomFilter| [f.to_bytes()],
    union: (BloomFilter::with_fpr(401, 0.01).unwrap(), BloomFilter::union),
}
