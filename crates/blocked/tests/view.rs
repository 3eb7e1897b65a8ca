//! The zero-copy view: the owned filter's answers straight from the bytes, and exactly the
//! owning decoder's refusals.

use std::sync::Arc;

use bloomlab_blocked::{BlockedBloomFilter, BlockedBloomFilterView, BlockedFilterBytes, Layout};
use bloomlab_conformance as conf;
use bloomlab_core::{Error, Filter, format};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn filled(n: u64, p: f64, layout: Layout) -> BlockedBloomFilter {
    let f = BlockedBloomFilter::with_fpr(n, p)
        .unwrap()
        .with_layout(layout)
        .unwrap();
    conf::filled(f, n, 31)
}

#[test]
fn answers_like_the_owned_filter_on_a_million_keys_in_both_layouts() {
    let n = 1_000_000u64;
    for layout in [Layout::OneHash, Layout::Local32, Layout::Wide64] {
        let f = filled(n, 0.01, layout);
        // Misaligned on purpose: the block data starts at an odd address.
        let mut buf = vec![0u8; 1];
        buf.extend_from_slice(&f.to_bytes());
        let v = BlockedBloomFilterView::new(&buf[1..]).unwrap();
        assert_eq!(v.layout(), layout);
        assert_eq!(
            (
                v.len(),
                v.blocks(),
                v.bits(),
                v.hashes(),
                v.capacity(),
                v.target_fpr()
            ),
            (
                f.len(),
                f.blocks(),
                f.bits(),
                f.hashes(),
                f.capacity(),
                f.target_fpr()
            )
        );
        assert_eq!(v.expected_fpr(), f.expected_fpr());
        let mut rng = ChaCha8Rng::seed_from_u64(31);
        for _ in 0..n {
            let k = conf::member_key(&mut rng);
            assert!(v.might_contain(&k), "false negative");
        }
        let mut positives = 0u64;
        for _ in 0..n {
            let k = conf::non_member_key(&mut rng);
            let a = v.might_contain(&k);
            assert_eq!(a, f.might_contain(&k));
            positives += u64::from(a);
        }
        // A view that answered "maybe" to everything would pass the equality only if the owner
        // did too; check both against the formula (5σ binomial bound at 10^6 probes).
        let p = f.expected_fpr();
        let sigma = conf::binomial_sigma(n, p);
        assert!(
            (positives as f64 - n as f64 * p).abs() < 5.0 * sigma,
            "{positives}"
        );
        assert_eq!(v.to_owned_filter(), f);
    }
}

#[test]
fn refuses_every_input_the_owner_refuses() {
    for layout in [Layout::OneHash, Layout::Local32, Layout::Wide64] {
        let f = filled(3_000, 0.01, layout);
        let valid = f.to_bytes();
        for envelope in [false, true] {
            let accepted = conf::check_decode_robustness(
                &valid,
                |b| BlockedBloomFilterView::new(b).map(|v| v.to_owned_filter()),
                BlockedBloomFilter::to_bytes,
                |_| {},
                envelope,
                3_000,
                7 + u64::from(envelope),
            );
            println!("{layout:?}, envelope {envelope}: {accepted} damaged inputs accepted");
        }
        // Byte for byte: one random byte overwritten and the envelope resealed, so the damage
        // reaches the payload's own rules — the view and the owner agree every time.
        let mut rng = ChaCha8Rng::seed_from_u64(32);
        let (mut refused, mut same) = (0, 0);
        for _ in 0..4_000 {
            let mut b = valid.clone();
            let i = rng.random_range(0..b.len().min(format::HEADER_LEN + 80));
            b[i] = rng.random();
            format::reseal(&mut b);
            let owner = BlockedBloomFilter::from_bytes(&b);
            let view = BlockedBloomFilterView::new(&b);
            assert_eq!(owner.is_ok(), view.is_ok(), "byte {i}");
            if let (Err(a), Err(b)) = (&owner, &view) {
                assert_eq!(a.to_string(), b.to_string());
                refused += 1;
            } else {
                same += 1;
            }
        }
        assert!(
            refused > 1_000 && same > 100,
            "{refused} refused, {same} accepted"
        );
        for cut in 0..valid.len() {
            assert!(BlockedBloomFilterView::new(&valid[..cut]).is_err());
        }
    }
}

#[test]
fn count_too_small_for_the_bits_is_refused_by_both() {
    let f = filled(1_000, 0.01, Layout::OneHash);
    let mut b = f.to_bytes();
    // payload: blocks u64 | k u32 | reserved u32 | count u64 — set count to 1.
    let at = format::HEADER_LEN + 16;
    b[at..at + 8].copy_from_slice(&1u64.to_le_bytes());
    format::reseal(&mut b);
    let field = |r: Result<(), Error>| match r {
        Err(Error::Decode(bloomlab_core::DecodeError::InvalidField { field, .. })) => field,
        other => panic!("{other:?}"),
    };
    assert_eq!(field(BlockedBloomFilter::from_bytes(&b).map(drop)), "count");
    assert_eq!(field(BlockedBloomFilterView::new(&b).map(drop)), "count");
}

#[test]
fn scheme_is_checked_and_debug_names_the_fields() {
    let f = filled(1_000, 0.01, Layout::OneHash);
    let b = f.to_bytes();
    let v = BlockedBloomFilterView::new(&b).unwrap();
    let s = format!("{v:?}");
    assert!(s.starts_with("BlockedBloomFilterView { blocks: "), "{s}");
    let mut other = b.clone();
    other[7] = 2; // claim the keyed SipHash scheme
    format::reseal(&mut other);
    for r in [
        BlockedBloomFilterView::new(&other).map(drop),
        BlockedBloomFilter::from_bytes(&other).map(drop),
    ] {
        assert!(matches!(
            r,
            Err(Error::Decode(
                bloomlab_core::DecodeError::SchemeMismatch { .. }
            ))
        ));
    }
    assert_eq!(Filter::len(&f), v.len());
}

#[test]
fn kept_bytes_validate_once_and_answer_like_the_view() {
    for layout in [Layout::OneHash, Layout::Local32, Layout::Wide64] {
        let f = filled(20_000, 0.01, layout);
        let bytes = f.to_bytes();
        let kept = BlockedFilterBytes::new(Arc::<[u8]>::from(bytes.clone())).unwrap();
        let v = BlockedBloomFilterView::new(&bytes).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(33);
        for _ in 0..50_000 {
            let k = conf::non_member_key(&mut rng);
            assert_eq!(kept.view().might_contain(&k), v.might_contain(&k));
        }
        assert_eq!(kept.view().to_owned_filter(), f);
        assert_eq!(kept.as_bytes(), &bytes[..]);
        assert!(format!("{kept:?}").starts_with("BlockedFilterBytes(BlockedBloomFilterView {"));
        assert_eq!(&kept.into_inner()[..], &bytes[..]);
        // Whatever the view refuses, so does the owning buffer.
        let mut rng = ChaCha8Rng::seed_from_u64(34);
        for _ in 0..500 {
            let mut b = bytes.clone();
            let i = rng.random_range(0..format::HEADER_LEN + 80);
            b[i] = rng.random();
            format::reseal(&mut b);
            assert_eq!(
                BlockedFilterBytes::new(b.clone()).is_ok(),
                BlockedBloomFilterView::new(&b).is_ok()
            );
        }
    }
}

#[test]
fn a_filter_and_its_view_are_empty_until_the_first_insert() {
    let mut f = BlockedBloomFilter::with_fpr(100, 0.01).unwrap();
    assert!(f.is_empty());
    assert!(
        BlockedBloomFilterView::new(&f.to_bytes())
            .unwrap()
            .is_empty()
    );
    f.insert(&7u64);
    assert!(!f.is_empty());
    assert!(
        !BlockedBloomFilterView::new(&f.to_bytes())
            .unwrap()
            .is_empty()
    );
}
