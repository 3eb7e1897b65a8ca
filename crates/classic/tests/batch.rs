//! The batched operations and both single-lookup loops answer exactly as the definition: a
//! key tests positive iff every one of its `k` probe bits is set.

use bloomlab_classic::{BRANCH_FREE_UP_TO, BloomFilter, BloomFilterView, PREFETCH_ALL_ABOVE};
use bloomlab_core::hash::{HashScheme, Xxh3Scheme};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// The definition, straight from the probe positions.
fn reference(f: &BloomFilter, key: u64) -> bool {
    let h = Xxh3Scheme.hash(&key.to_le_bytes());
    h.positions(f.hashes(), f.bits())
        .all(|i| f.bit_array().get(i))
}

/// A filter of `bits` bits holding `n` random keys, and a query mix of all of them and as
/// many random non-members.
fn filled(bits: u64, n: usize, seed: u64) -> (BloomFilter, Vec<u64>, Vec<u64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut f = BloomFilter::with_bits(bits, 7).unwrap();
    let keys: Vec<u64> = (0..n).map(|_| rng.random()).collect();
    for k in &keys {
        f.insert(k);
    }
    let mut queries = keys.clone();
    queries.extend((0..n).map(|_| rng.random::<u64>()));
    (f, keys, queries)
}

#[test]
fn both_sizes_answer_as_the_definition_single_and_batched() {
    // One filter on each side of the loop switch and of the prefetch switch, at design load
    // (half the bits set, FPR about 0.8 %) so both answers are common.
    let small = (8 * BRANCH_FREE_UP_TO as u64) / 2;
    let large = 8 * BRANCH_FREE_UP_TO.max(PREFETCH_ALL_ABOVE) as u64 + 4096;
    for (bits, seed) in [(small, 1), (large, 2)] {
        let n = (bits as f64 * std::f64::consts::LN_2 / 7.0) as usize;
        let (f, keys, queries) = filled(bits, n, seed);
        let mut out = vec![false; queries.len()];
        f.might_contain_batch(&queries, &mut out).unwrap();
        let bytes = f.to_bytes();
        let view = BloomFilterView::new(&bytes).unwrap();
        let mut positives = 0;
        for (q, &batched) in queries.iter().zip(&out) {
            let want = reference(&f, *q);
            assert_eq!(f.might_contain(q), want, "single lookup, m = {bits}");
            assert_eq!(batched, want, "batched lookup, m = {bits}");
            assert_eq!(view.might_contain(q), want, "view, m = {bits}");
            positives += usize::from(want);
        }
        assert!(positives >= keys.len(), "no false negatives");
        assert!(
            positives > keys.len(),
            "some false positives, so both answers are tested"
        );
    }
}

#[test]
fn batched_with_any_distance_and_short_batches() {
    let (f, _, queries) = filled(100_000, 10_000, 3);
    let want: Vec<bool> = queries.iter().map(|q| f.might_contain(q)).collect();
    for len in [0, 1, 5, 16, 17, 1000] {
        let q = &queries[..len];
        let mut out = vec![false; len];
        f.might_contain_batch(q, &mut out).unwrap();
        assert_eq!(out, want[..len]);
        let mut out = vec![false; len];
        f.might_contain_batch_at::<_, 0>(q, &mut out).unwrap();
        assert_eq!(out, want[..len]);
        let mut out = vec![false; len];
        f.might_contain_batch_at::<_, 3>(q, &mut out).unwrap();
        assert_eq!(out, want[..len]);
    }
}

#[test]
fn batched_refuses_mismatched_lengths() {
    let f = BloomFilter::with_fpr(100, 0.01).unwrap();
    let mut out = [true; 2];
    assert!(f.might_contain_batch(&[1u64, 2, 3], &mut out).is_err());
    assert_eq!(out, [true; 2], "nothing written");
}

#[test]
fn insert_batch_builds_the_same_filter() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let keys: Vec<u64> = (0..20_000).map(|_| rng.random()).collect();
    for bits in [1000u64, 200_000, 8 * PREFETCH_ALL_ABOVE as u64 + 77] {
        let mut one = BloomFilter::with_bits(bits, 7).unwrap();
        let mut batch = one.clone();
        for k in &keys {
            one.insert(k);
        }
        batch.insert_batch(&keys);
        assert_eq!(one, batch);
        assert_eq!(one.to_bytes(), batch.to_bytes());
    }
}
