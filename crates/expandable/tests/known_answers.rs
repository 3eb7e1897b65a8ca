//! Known-answer vectors of the expandable filter (xxh3 scheme): where fixed keys are stored,
//! the digest of a filter grown through ten doublings (which pins the expansion rule, the
//! fingerprint schedule and the slot layout), and a literal encoded filter decoded and
//! queried. A change to any literal here needs a format version bump.

use bloomlab_conformance::kat::{keys, probe_keys};
use bloomlab_conformance::{self as conf, from_hex};
use bloomlab_core::{Filter, HashScheme, Xxh3Scheme};
use bloomlab_expandable::ExpandableFilter;

#[test]
fn where_fixed_keys_are_stored() {
    // Start capacity 1000 → 512 buckets, 11-bit fingerprints in 13-bit slots. A key goes to
    // slot 0 of its home bucket h mod 512, as the code (h >> 9 mod 2^11) | 1 << 11.
    let want: [(u64, u32); 5] = [
        (131, 0xe86),
        (395, 0xb10),
        (348, 0x99d),
        (247, 0xf37),
        (283, 0xaae),
    ];
    for (key, (bucket, code)) in probe_keys().iter().zip(want) {
        let h = Xxh3Scheme.hash64(key);
        assert_eq!(
            (h & 511, ((h >> 9) & 0x7ff) as u32 | 1 << 11),
            (bucket, code)
        );
        let mut f = ExpandableFilter::with_start(1000, 0.01).unwrap();
        assert_eq!((f.num_buckets(), f.slot_bits()), (512, 13));
        f.insert(&key[..]).unwrap();
        let stored: Vec<(u64, u32, u32)> = (0..f.num_buckets())
            .flat_map(|b| (0..4).map(move |s| (b, s)))
            .map(|(b, s)| (b, s, f.table().get(b, s)))
            .filter(|&(_, _, v)| v != 0)
            .collect();
        assert_eq!(stored, [(bucket, 0, code)]);
    }
}

#[test]
fn a_filter_grown_through_ten_doublings() {
    let mut f = ExpandableFilter::new(0.01).unwrap();
    for i in 0..5000u64 {
        f.insert(&i).unwrap();
    }
    assert_eq!((f.level(), f.slot_bits()), (11, 15));
    conf::check_known_answer("grown", &f.to_bytes(), 15428, 0x0d95da915aedb742);
}

#[test]
fn a_literal_filter_decodes_and_answers() {
    let bytes = from_hex(
        "424c4142010008010000000000000000310000000000000052c6284c033a7d4f050000000000000001000000000000007b14ae47e17a843f01010d0b00000000000000005acb95f9340000d41c1c000000",
    );
    let f = ExpandableFilter::from_bytes(&bytes).unwrap();
    assert_eq!(
        (f.len(), f.level(), f.slot_bits(), f.fingerprint_bits()),
        (5, 1, 13, 11)
    );
    assert!(keys("k", 5).iter().all(|k| f.might_contain(k.as_str())));
    let mut g = ExpandableFilter::new(0.01).unwrap();
    for k in keys("k", 5) {
        g.insert(k.as_str()).unwrap();
    }
    assert_eq!(g.to_bytes(), bytes);
}
