//! The classic filter's promises for arbitrary keys and bytes (generic halves in
//! `bloomlab_conformance::props`; `PROPTEST_CASES` sets the case count).

use bloomlab_classic::{BloomFilter, BloomFilterView};
use bloomlab_conformance::{counting_allocator, variant_properties};

counting_allocator!();

fn build(keys: &[Vec<u8>]) -> BloomFilter {
    let mut f = BloomFilter::with_fpr(keys.len() as u64 + 1, 0.01).unwrap();
    for k in keys {
        f.insert(k);
    }
    f
}

// The view answers alike; the owning decoder and the view accept exactly the same bytes.
variant_properties! {
    viewed: BloomFilter,
    views: [BloomFilterView],
    build: build,
    union: (BloomFilter::with_fpr(401, 0.01).unwrap(), BloomFilter::union),
}
