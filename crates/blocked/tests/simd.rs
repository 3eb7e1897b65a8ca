//! The vector (AVX2) and portable paths build bit-identical filters and give identical
//! answers. On a machine with AVX2 `insert`/`might_contain` take the vector path, and the
//! `*_portable` methods the scalar one, so both run here; elsewhere both are scalar.

use bloomlab_blocked::{BlockedBloomFilter, Layout};
use bloomlab_core::hash::{HashScheme, KeyHash, SchemeDescriptor, SchemeId};
use bloomlab_simd as simd;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[test]
fn vector_and_portable_paths_agree_for_every_k() {
    // Which paths `insert`/`might_contain` took here; a run that names paths in
    // `BLOOMLAB_REQUIRE_SIMD` fails on a CPU without them instead of comparing the portable
    // path with itself.
    let paths = simd::VectorPaths::detect();
    println!("vector paths on this CPU: {paths}");
    let missing = paths.missing_required();
    assert!(
        missing.is_empty(),
        "{} requires {missing:?}",
        simd::REQUIRE_ENV
    );
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    for (layout, k) in [Layout::OneHash, Layout::Local32]
        .into_iter()
        .flat_map(|l| [1u32, 2, 5, 6, 7, 8, 9, 12, 16, 17, 24, 33, 64].map(|k| (l, k)))
    {
        let mut fast = BlockedBloomFilter::with_blocks(37, k)
            .and_then(|f| f.with_layout(layout))
            .unwrap();
        // The inline path serves the current layout with the vector kernels' `k`
        // (x86-64: `k ≤ 8`; NEON: `k ≤ 16`); every other filter takes the out-of-line one.
        let inline = match fast.inline_kernel() {
            "off" => false,
            name => {
                assert_eq!(
                    layout,
                    Layout::OneHash,
                    "k = {k}: {name} for an earlier layout"
                );
                assert!(k <= if name == "neon" { 16 } else { 8 }, "k = {k}: {name}");
                true
            }
        };
        let served =
            layout == Layout::OneHash && ((paths.avx2 && k <= 8) || (paths.neon && k <= 16));
        assert_eq!(
            inline,
            served,
            "k = {k}, {layout:?}: {}",
            fast.inline_kernel()
        );
        let mut slow = fast.clone();
        let keys: Vec<u64> = (0..2_000).map(|_| rng.random()).collect();
        for key in &keys {
            assert_eq!(fast.insert(key), slow.insert_portable(key), "k = {k}");
        }
        assert_eq!(fast, slow, "k = {k}: different bits");
        let mut out = vec![false; 4_000];
        let queries: Vec<u64> = keys
            .iter()
            .copied()
            .chain((0..2_000).map(|_| rng.random()))
            .collect();
        fast.might_contain_batch(&queries, &mut out).unwrap();
        let mut positives = 0;
        for (q, &o) in queries.iter().zip(&out) {
            let v = fast.might_contain(q);
            assert_eq!(v, slow.might_contain_portable(q), "k = {k}, key {q}");
            assert_eq!(v, o);
            positives += usize::from(v);
        }
        // Members all answer yes; the non-members do not all (the test would be vacuous).
        assert!((2_000..4_000).contains(&positives), "k = {k}: {positives}");
        // insert_batch gives the same filter too.
        let mut batched = BlockedBloomFilter::with_blocks(37, k)
            .and_then(|f| f.with_layout(layout))
            .unwrap();
        batched.insert_batch(&keys);
        assert_eq!(batched, fast);
    }
}

/// A stand-in for a keyed scheme (any 128-bit hash with its own id): the blocked filter takes
/// every probe from the scheme's `KeyHash`, so keyed schemes plug in unchanged.
#[derive(Clone, Debug, Default)]
struct Salted;

impl HashScheme for Salted {
    fn hash(&self, key: &[u8]) -> KeyHash {
        KeyHash::from_u128(xxhash_rust::xxh3::xxh3_128_with_seed(key, 0x5a17))
    }
    fn descriptor(&self) -> SchemeDescriptor {
        SchemeDescriptor {
            id: SchemeId::SipHash24Km,
            key_check: 0x5a17,
        }
    }
}

#[test]
fn other_schemes_use_the_same_kernels() {
    let mut f = BlockedBloomFilter::with_fpr_and_scheme(10_000, 0.01, Salted).unwrap();
    let mut g = f.clone();
    for i in 0..10_000u64 {
        f.insert(&i);
        g.insert_portable(&i);
    }
    assert_eq!(f, g);
    assert!((0..10_000u64).all(|i| f.might_contain(&i)));
    let fp = (1u64 << 40..(1u64 << 40) + 100_000)
        .filter(|i| f.might_contain(i))
        .count();
    // Expected ≈ 1 000 (1 %); 5σ ≈ 158.
    assert!(
        (fp as f64 - 100_000.0 * f.expected_fpr()).abs() < 158.0,
        "{fp}"
    );
    let back = BlockedBloomFilter::from_bytes_with_scheme(&f.to_bytes(), Salted).unwrap();
    assert_eq!(back, f);
    assert!(BlockedBloomFilter::from_bytes(&f.to_bytes()).is_err());
}
