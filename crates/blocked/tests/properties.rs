//! The blocked filter's promises for arbitrary keys and bytes (generic halves in
//! `bloomlab_conformance::props`; `PROPTEST_CASES` sets the case count).

use bloomlab_blocked::{BlockedBloomFilter, BlockedBloomFilterView, BlockedFilterBytes};
use bloomlab_conformance::{counting_allocator, props, variant_properties};

counting_allocator!();

fn build(keys: &[Vec<u8>]) -> BlockedBloomFilter {
    props::with_keys(
        BlockedBloomFilter::with_fpr(keys.len() as u64 + 1, 0.01).unwrap(),
        keys,
    )
}

// The view answers alike; the owning decoder and both views accept exactly the same bytes.
variant_properties! {
    viewed: BlockedBloomFilter,
    views: [BlockedBloomFilterView, BlockedFilterBytes<&[u8]>],
    build: build,
    union: (BlockedBloomFilter::with_fpr(401, 0.01).unwrap(), BlockedBloomFilter::union),
}
