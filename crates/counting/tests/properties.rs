//! The counting filter's promises for arbitrary keys, operations and bytes (generic halves in
//! `bloomlab_conformance::props`; `PROPTEST_CASES` sets the case count).

use bloomlab_conformance::{counting_allocator, multiset_property, props, variant_properties};
use bloomlab_counting::CountingBloomFilter as F;

counting_allocator!();

fn build(keys: &[Vec<u8>]) -> F {
    props::with_keys(F::with_fpr(keys.len() as u64 + 1, 0.01).unwrap(), keys)
}

variant_properties! { standard: F, build: build }

// Small filters (24 pool keys in 8–64 expected items) so counters collide, repeat and
// reach the sticky value.
multiset_property!(|capacity| F::with_fpr(capacity, 0.05).unwrap());
