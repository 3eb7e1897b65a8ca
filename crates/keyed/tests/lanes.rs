//! Batched operations under a scheme that hashes eight keys in vector lanes (`Sip64Scheme`,
//! `HashScheme::LANES`): they answer exactly as single lookups and build exactly the filter
//! that single inserts build, for every batch length around the chunk of eight, every blocked
//! layout, integer keys (8 bytes, the lane path) and byte keys of other lengths mixed in.

use bloomlab_blocked::{AtomicBlockedBloomFilter, BlockedBloomFilter, Layout};
use bloomlab_classic::BloomFilter;
use bloomlab_core::hash::{HashScheme, KeyHash, hash_chunk};
use bloomlab_keyed::Sip64Scheme;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn scheme() -> Sip64Scheme {
    Sip64Scheme::from_secret(*b"lanes of eight!!")
}

const LENGTHS: [usize; 14] = [0, 1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 100, 1_001];

fn u64_keys(n: usize, seed: u64) -> Vec<u64> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.random()).collect()
}

/// Byte keys, about one in three exactly 8 bytes long (the lane path), the rest 0–20.
fn byte_keys(n: usize, seed: u64) -> Vec<Vec<u8>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..n)
        .map(|_| {
            let len = if rng.random_bool(0.35) {
                8
            } else {
                rng.random_range(0..=20)
            };
            (0..len).map(|_| rng.random()).collect()
        })
        .collect()
}

#[test]
fn chunks_hash_as_single_keys_do() {
    let s = scheme();
    for keys in [byte_keys(8, 1), byte_keys(5, 2), byte_keys(0, 3)] {
        let mut out = vec![KeyHash::new(0, 0); keys.len()];
        hash_chunk(&keys, &mut out, |b| s.hash(b), |w| s.hash_words8(w));
        let want: Vec<KeyHash> = keys.iter().map(|k| s.hash(k)).collect();
        assert_eq!(out, want);
        let mut out64 = vec![0u64; keys.len()];
        hash_chunk(&keys, &mut out64, |b| s.hash64(b), |w| s.hash64_words8(w));
        assert_eq!(out64, keys.iter().map(|k| s.hash64(k)).collect::<Vec<_>>());
    }
    let words: [u64; 8] = std::array::from_fn(|i| (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let lanes = s.hash_words8(&words);
    for (w, h) in words.iter().zip(lanes) {
        assert_eq!(h, s.hash(&w.to_le_bytes()));
    }
    // Many words at once (a bulk build's hashing), every length around the chunk of eight.
    for &n in &LENGTHS {
        let words = u64_keys(n, 7 + n as u64);
        let mut out = vec![0u64; n];
        s.hash64_words(&words, &mut out);
        let want: Vec<u64> = words.iter().map(|w| s.hash64(&w.to_le_bytes())).collect();
        assert_eq!(out, want, "{n} words");
    }
}

/// Filters from `new()` built from `n` integer keys (from `seed`) one at a time and as a
/// batch are equal; batched lookups (at the default distance, 8 and `$d`, so distances that
/// are and are not multiples of the chunk take both drivers) answer as single ones; byte keys
/// (from `seed + 200`) build alike and all test positive. `$what` prefixes the messages.
macro_rules! check_batches {
    ($new:expr, $n:expr, $seed:expr, $d:literal, $what:expr) => {{
        let (new, n, seed, what) = ($new, $n, $seed, $what);
        let keys = u64_keys(n, seed);
        let single = bloomlab_conformance::parallel::sequential(new(), &keys);
        let mut batched = new();
        batched.insert_batch(&keys);
        assert_eq!(batched, single, "{what}n = {n}");
        let queries = [keys.clone(), u64_keys(n, seed + 100)].concat();
        let want: Vec<bool> = queries.iter().map(|q| single.might_contain(q)).collect();
        let mut out = vec![false; queries.len()];
        single.might_contain_batch(&queries, &mut out).unwrap();
        assert_eq!(out, want, "{what}n = {n}");
        single
            .might_contain_batch_at::<_, 8>(&queries, &mut out)
            .unwrap();
        assert_eq!(out, want, "{what}n = {n}, D = 8");
        single
            .might_contain_batch_at::<_, $d>(&queries, &mut out)
            .unwrap();
        assert_eq!(out, want, "{what}n = {n}, D = {}", $d);

        let bytes = byte_keys(n, seed + 200);
        let single = bloomlab_conformance::parallel::sequential(new(), &bytes);
        let mut batched = new();
        batched.insert_batch(&bytes);
        assert_eq!(batched, single, "{what}byte keys, n = {n}");
        let mut out = vec![false; bytes.len()];
        batched.might_contain_batch(&bytes, &mut out).unwrap();
        assert!(out.iter().all(|&o| o), "{what}byte keys, n = {n}");
    }};
}

#[test]
fn classic_batches_match_single_operations() {
    for (i, &n) in LENGTHS.iter().enumerate() {
        let new = || BloomFilter::with_fpr_and_scheme(2_000, 0.01, scheme()).unwrap();
        check_batches!(new, n, 10 + i as u64, 3, "");
    }
}

/// An empty keyed blocked filter (2 000 keys at 1 %) in `layout`.
fn blocked_in(layout: Layout) -> BlockedBloomFilter<Sip64Scheme> {
    BlockedBloomFilter::with_fpr_and_scheme(2_000, 0.01, scheme())
        .unwrap()
        .with_layout(layout)
        .unwrap()
}

#[test]
fn blocked_batches_match_single_operations_in_every_layout() {
    for layout in [Layout::OneHash, Layout::Local32, Layout::Wide64] {
        for (i, &n) in LENGTHS.iter().enumerate() {
            let new = || blocked_in(layout);
            check_batches!(new, n, 30 + i as u64, 5, format!("{layout:?}, "));
        }
    }
}

#[test]
fn atomic_batches_and_parallel_builds_match_single_inserts() {
    for layout in [Layout::OneHash, Layout::Local32] {
        for (i, &n) in LENGTHS.iter().enumerate() {
            let new = || blocked_in(layout);
            let keys = u64_keys(n, 50 + i as u64);
            let mut single = new();
            for k in &keys {
                single.insert(k);
            }
            let atomic = AtomicBlockedBloomFilter::try_from(new()).unwrap();
            atomic.insert_batch(&keys);
            assert_eq!(atomic.to_filter(), single, "atomic, {layout:?}, n = {n}");
        }
        // Past the parallel build's threshold, so the threads share the keys (a number of
        // keys that is not a multiple of a round or a chunk).
        let keys = u64_keys(3 * (1 << 15) + 1_027, 60); // 2^15 keys a thread at least
        let new = || {
            BlockedBloomFilter::with_fpr_and_scheme(keys.len() as u64, 0.01, scheme())
                .unwrap()
                .with_layout(layout)
                .unwrap()
        };
        let mut single = new();
        for k in &keys {
            single.insert(k);
        }
        for threads in [2, 3] {
            let mut parallel = new();
            parallel.insert_parallel_with_threads(&keys, threads);
            assert_eq!(parallel, single, "{threads} threads, {layout:?}");
        }
    }
}
