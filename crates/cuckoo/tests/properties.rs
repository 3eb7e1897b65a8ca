//! The cuckoo filter's promises for arbitrary keys, operations and bytes (generic halves in
//! `bloomlab_conformance::props`; `PROPTEST_CASES` sets the case count).

use bloomlab_conformance::{counting_allocator, multiset_property, props, variant_properties};
use bloomlab_cuckoo::CuckooFilter as F;

counting_allocator!();

/// The keys once each: a cuckoo filter holds a bounded number of copies of one key (the
/// multiset property below covers repeats and the refusals they meet). Sized for four times
/// the keys plus 64: a table sized for exactly `n` may refuse the `n`-th key when it is tiny
/// (two buckets hold 8 slots, and five keys can share one bucket); with the headroom every
/// key finds room by a wide margin, and refusals are the multiset property's business.
fn build(keys: &[Vec<u8>]) -> F {
    let mut distinct = keys.to_vec();
    distinct.sort();
    distinct.dedup();
    let capacity = 4 * distinct.len() as u64 + 64;
    props::with_keys(F::with_fpr(capacity, 0.01).unwrap(), &distinct)
}

variant_properties! { standard: F, build: build }

// Small filters (24 pool keys in 8–64 expected items) so buckets fill, a key is held
// several times and inserts of a key held too often are refused.
multiset_property!(|capacity| F::with_fpr(capacity, 0.05).unwrap());
