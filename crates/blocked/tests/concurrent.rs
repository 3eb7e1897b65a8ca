//! The atomic blocked filter filled by many threads, and the parallel build: bit-identical to
//! one thread inserting the same keys, with no false negatives.

use bloomlab_blocked::{AtomicBlockedBloomFilter, BlockedBloomFilter, Layout};
use bloomlab_conformance::parallel::{check_builds_alike, spread_keys};
use bloomlab_core::{Error, Filter};

const N: u64 = 200_000;

fn sequential(keys: impl IntoIterator<Item = u64>) -> BlockedBloomFilter {
    let mut f = BlockedBloomFilter::with_fpr(N, 0.01).unwrap();
    for k in keys {
        f.insert(&k);
    }
    f
}

#[test]
fn threads_inserting_disjoint_keys_build_the_single_threaded_filter() {
    let f = AtomicBlockedBloomFilter::with_fpr(N, 0.01).unwrap();
    let threads = 4u64;
    std::thread::scope(|s| {
        for t in 0..threads {
            let f = &f;
            // Interleaved ranges: thread t takes keys ≡ t (mod threads), so the threads hit
            // the same blocks (and words) at the same time.
            s.spawn(move || {
                for i in (t..N).step_by(threads as usize) {
                    f.insert(&i);
                }
            });
        }
    });
    assert_eq!(f.len(), N);
    let missing = (0..N).filter(|i| !f.might_contain(i)).count();
    assert_eq!(missing, 0, "false negatives");
    let owned = BlockedBloomFilter::from(f);
    assert_eq!(owned, sequential(0..N)); // same bits, count and parameters
}

#[test]
fn threads_inserting_overlapping_keys_build_the_single_threaded_filter() {
    let f = AtomicBlockedBloomFilter::with_fpr(N, 0.01).unwrap();
    // Four threads over overlapping windows of [0, N): every key is inserted by two threads,
    // in opposite orders, so the same bits are ORed at once from both sides.
    let windows = [(0, N / 2), (N / 4, 3 * N / 4), (N / 2, N), (0, N / 4)];
    let also = [(3 * N / 4, N)];
    std::thread::scope(|s| {
        for (t, &(a, b)) in windows.iter().chain(&also).enumerate() {
            let f = &f;
            s.spawn(move || {
                if t % 2 == 0 {
                    (a..b).for_each(|i| {
                        f.insert(&i);
                    });
                } else {
                    (a..b).rev().for_each(|i| {
                        f.insert(&i);
                    });
                }
            });
        }
    });
    assert_eq!(f.len(), 2 * N);
    assert!((0..N).all(|i| f.might_contain(&i)));
    let mut want = sequential((0..N).chain(0..N));
    assert_eq!(want.len(), 2 * N);
    assert_eq!(f.to_filter(), want);
    // Readers running beside writers never block and never see a key inserted before the
    // scope began go missing.
    let f = AtomicBlockedBloomFilter::try_from(want.clone()).unwrap();
    std::thread::scope(|s| {
        let f = &f;
        s.spawn(move || {
            (N..2 * N).for_each(|i| {
                f.insert(&i);
            })
        });
        s.spawn(move || assert!((0..N).all(|i| f.might_contain(&i))));
    });
    want.extend(N..2 * N);
    assert_eq!(BlockedBloomFilter::from(f), want);
}

#[test]
fn insert_reports_new_keys_like_the_owned_filter() {
    let a = AtomicBlockedBloomFilter::with_fpr(10_000, 0.01).unwrap();
    let mut o = BlockedBloomFilter::with_fpr(10_000, 0.01).unwrap();
    for i in 0..20_000u64 {
        let key = i % 12_000;
        assert_eq!(a.insert(&key), o.insert(&key), "key {key}");
    }
    for i in 0..50_000u64 {
        assert_eq!(a.might_contain(&i), o.might_contain(&i));
        // The same answer from the key's hash, as the owned filter hashes it.
        assert_eq!(a.might_contain_hash(a.hash_key(&i)), o.might_contain(&i));
    }
    assert_eq!(a.count_ones(), o.count_ones());
    assert_eq!(a.expected_fpr(), o.expected_fpr());
}

#[test]
fn conversions_round_trip_bit_identically() {
    for (n, p) in [(1u64, 0.5), (1_000, 0.001), (50_000, 0.01)] {
        let mut o = BlockedBloomFilter::with_fpr(n, p).unwrap();
        o.extend(0..n);
        let a = AtomicBlockedBloomFilter::try_from(o.clone()).unwrap();
        assert_eq!(
            (
                a.blocks(),
                a.hashes(),
                a.len(),
                a.capacity(),
                a.target_fpr()
            ),
            (
                o.blocks(),
                o.hashes(),
                o.len(),
                o.capacity(),
                o.target_fpr()
            )
        );
        assert_eq!(a.to_filter(), o);
        let b = a.clone();
        assert_eq!(BlockedBloomFilter::from(a), o);
        assert_eq!(BlockedBloomFilter::from(b).to_bytes(), o.to_bytes());
    }
    let mut a = AtomicBlockedBloomFilter::with_blocks(3, 7).unwrap();
    a.insert("x");
    assert!(!a.is_empty() && a.might_contain("x"));
    a.clear();
    assert!(a.is_empty() && a.count_ones() == 0 && !a.might_contain("x"));
    let dbg = format!("{a:?}");
    assert!(
        dbg.starts_with("AtomicBlockedBloomFilter { blocks: 3, k: 7"),
        "{dbg}"
    );
}

#[test]
fn the_first_layout_has_no_atomic_form() {
    let v1 = BlockedBloomFilter::with_fpr(100, 0.01)
        .unwrap()
        .with_layout(Layout::Wide64)
        .unwrap();
    assert!(matches!(
        AtomicBlockedBloomFilter::try_from(v1),
        Err(Error::Incompatible(_))
    ));
}

#[test]
fn the_second_layout_answers_and_inserts_as_the_owned_filter() {
    // An atomic filter made from a second-layout filter keeps that layout's hash and probes:
    // the same answers as the owned filter for members and non-members, and inserts that set
    // the owned filter's bits.
    let keys = |r: std::ops::Range<u64>| r.map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut owned = BlockedBloomFilter::with_fpr(2_000, 0.01)
        .unwrap()
        .with_layout(Layout::Local32)
        .unwrap();
    keys(0..1_000).for_each(|k| {
        owned.insert(&k);
    });
    let a = AtomicBlockedBloomFilter::try_from(owned.clone()).unwrap();
    assert_eq!(a.layout(), Layout::Local32);
    let mut positives = 0;
    for k in keys(0..20_000) {
        assert_eq!(a.might_contain(&k), owned.might_contain(&k), "key {k}");
        positives += usize::from(owned.might_contain(&k));
    }
    // Members all found; some non-members answered "maybe" too, so the comparison saw both.
    assert!(positives > 1_000 && positives < 20_000, "{positives}");
    keys(1_000..2_000).for_each(|k| {
        a.insert(&k);
        owned.insert(&k);
    });
    assert_eq!(a.to_filter(), owned);
}

#[test]
fn the_trait_view_matches() {
    let mut a = AtomicBlockedBloomFilter::with_fpr(1_000, 0.01).unwrap();
    let o = BlockedBloomFilter::with_fpr(1_000, 0.01).unwrap();
    let dynf: &mut dyn Filter = &mut a;
    dynf.insert_bytes(b"k").unwrap();
    assert!(dynf.might_contain_bytes(b"k"));
    assert_eq!(dynf.params(), Filter::params(&o));
    assert_eq!(dynf.size_in_bytes(), Filter::size_in_bytes(&o));
}

// The documented bound on each inbox: 64 batches.
bloomlab_conformance::parallel_suite!(BlockedBloomFilter, max_queued: Some(64));

#[test]
fn the_inbox_bound_is_the_documented_one() {
    assert_eq!(bloomlab_blocked::PARALLEL_MAX_QUEUED, 64);
}

#[test]
fn parallel_build_in_the_first_layout_is_its_batch_build() {
    for n in [1u64, 65_535, 65_536, 200_003] {
        let keys = spread_keys(n);
        let wide = || {
            BlockedBloomFilter::with_fpr(n, 0.01)
                .unwrap()
                .with_layout(Layout::Wide64)
                .unwrap()
        };
        let (mut a, mut b) = (wide(), wide());
        a.insert_parallel_with_threads(&keys, 3);
        b.insert_batch(&keys);
        assert_eq!(a, b);
    }
}

#[test]
fn parallel_build_hashes_keys_of_any_length_alike() {
    // 8-byte keys go through the vector lanes where the CPU has them, others one by one:
    // a stretch of 8-byte keys, then chunks with 5- and 9-byte keys among them, and more
    // threads (9) than the lanes serve (8). Each build must equal the sequential one.
    let keys: Vec<Vec<u8>> = (0..300_000u64)
        .map(|i| {
            let w = i.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes();
            match i {
                0..200_000 => w.to_vec(),
                _ if i % 1000 == 0 => w[..5].to_vec(),
                _ if i % 1500 == 1 => [&w[..], &[7]].concat(),
                _ => w.to_vec(),
            }
        })
        .collect();
    let empty = || BlockedBloomFilter::with_fpr(300_000, 0.01).unwrap();
    let build = |f: &mut BlockedBloomFilter, keys: &[Vec<u8>], t| {
        f.insert_parallel_with_threads(keys, t);
    };
    check_builds_alike(&keys, empty, build, &[2, 3, 8, 9]);
    // Fixed-size arrays and integers of 8 bytes hash alike.
    let arrays: Vec<[u8; 8]> = (0..100_000u64).map(u64::to_le_bytes).collect();
    let words: Vec<u64> = (0..100_000u64).collect();
    let (mut a, mut b) = (
        BlockedBloomFilter::with_fpr(100_000, 0.01).unwrap(),
        BlockedBloomFilter::with_fpr(100_000, 0.01).unwrap(),
    );
    a.insert_parallel_with_threads(&arrays, 2);
    b.insert_parallel_with_threads(&words, 2);
    assert_eq!(a, b);
    let mut one_by_one = BlockedBloomFilter::with_fpr(100_000, 0.01).unwrap();
    words.iter().for_each(|w| {
        one_by_one.insert(w);
    });
    assert_eq!(a, one_by_one);
}

#[test]
fn batched_shared_inserts_match_the_owned_filter() {
    let keys: Vec<u64> = (0..N).map(|i| i ^ 0x5555).collect();
    let f = AtomicBlockedBloomFilter::with_fpr(N, 0.01).unwrap();
    std::thread::scope(|s| {
        for run in keys.chunks(30_001) {
            let f = &f;
            s.spawn(move || f.insert_batch(run));
        }
    });
    f.insert_batch::<u64>(&[]);
    assert_eq!(f.len(), N);
    let mut want = BlockedBloomFilter::with_fpr(N, 0.01).unwrap();
    want.insert_batch(&keys);
    assert_eq!(BlockedBloomFilter::from(f), want);
}

#[test]
fn the_count_is_exact_with_more_threads_than_count_shards() {
    let f = AtomicBlockedBloomFilter::with_fpr(10_000, 0.01).unwrap();
    std::thread::scope(|s| {
        for t in 0..40u64 {
            let f = &f;
            s.spawn(move || {
                (0..500u64).for_each(|i| {
                    f.insert(&(t * 500 + i));
                })
            });
        }
    });
    assert_eq!(f.len(), 20_000);
    assert!((0..20_000u64).all(|i| f.might_contain(&i)));
}
