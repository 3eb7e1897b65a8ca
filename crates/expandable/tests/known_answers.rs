//! Known-answer vectors of the expandable filter (xxh3 scheme): where fixed keys are stored,
//! the digest of a filter grown through nine rounds of splits (which pins the expansion rule, the
//! fingerprint schedule and the slot layout), and a literal encoded filter decoded and
//! queried. A change to any literal here needs a format version bump.

use bloomlab_conformance::kat::{keys, probe_keys};
use bloomlab_conformance::{self as conf, from_hex};
use bloomlab_core::{DecodeError, Error, Filter, HashScheme, Xxh3Scheme};
use bloomlab_expandable::ExpandableFilter;

#[test]
fn where_fixed_keys_are_stored() {
    // Start capacity 1000 → N = ceil(1000 / 3.6) = 278 = 2^8 + 22 buckets, 12-bit level-8
    // fingerprints in 14-bit slots. A key's level-8 bucket is h mod 256; buckets below 22
    // are split (home h mod 512, code one bit shorter). These keys land in unsplit buckets,
    // in slot 0, as the code (h >> 8 mod 2^12) | 1 << 12.
    let want: [(u64, u32); 5] = [
        (131, 0x1d0c),
        (139, 0x1621),
        (92, 0x133b),
        (247, 0x1e6e),
        (27, 0x155d),
    ];
    for (key, (bucket, code)) in probe_keys().iter().zip(want) {
        let h = Xxh3Scheme.hash64(key);
        assert_eq!(
            (h & 255, ((h >> 8) & 0xfff) as u32 | 1 << 12),
            (bucket, code)
        );
        assert!(bucket >= 22);
        let mut f = ExpandableFilter::with_fpr(1000, 0.01).unwrap();
        assert_eq!(
            (f.level(), f.num_buckets(), f.split_buckets(), f.slot_bits()),
            (8, 278, 22, 14)
        );
        f.insert(&key[..]).unwrap();
        let stored = f.table().stored();
        assert_eq!(stored, [(bucket, 0, code)]);
    }
}

#[test]
fn a_filter_grown_through_nine_rounds() {
    // From 2 buckets to 5000 keys: nine rounds and half of the tenth, in steps of 1/16 of
    // 2^k. Pins the expansion rule (split order, step, the moved bit, the alternates of
    // level-k codes), the fingerprint schedule and the slot layout.
    let mut f = ExpandableFilter::new(0.01).unwrap();
    for i in 0..5000u64 {
        f.insert(&i).unwrap();
    }
    assert_eq!((f.level(), f.split_buckets(), f.slot_bits()), (10, 704, 16));
    conf::check_known_answer("grown", &f.to_bytes(), 13900, 0x219a53fe62be139c);
}

#[test]
fn a_literal_filter_decodes_and_answers() {
    let bytes = from_hex(
        "424c41420200080100000000000000003a00000000000000847fd670e74c552c050000000000000001000000000000007b14ae47e17a843f01010e0c000000000000000000000000000000005a932be753010040958305000000",
    );
    let f = ExpandableFilter::from_bytes(&bytes).unwrap();
    assert_eq!(
        (f.len(), f.level(), f.slot_bits(), f.fingerprint_bits()),
        (5, 1, 14, 12)
    );
    assert!(keys("k", 5).iter().all(|k| f.might_contain(k.as_str())));
    let mut g = ExpandableFilter::new(0.01).unwrap();
    for k in keys("k", 5) {
        g.insert(k.as_str()).unwrap();
    }
    assert_eq!(g.to_bytes(), bytes);
}

#[test]
fn version_1_is_refused_with_a_typed_error() {
    // The doubling table of version 1 (the same five keys); its layout is not read any more.
    let v1 = from_hex(
        "424c4142010008010000000000000000310000000000000052c6284c033a7d4f050000000000000001000000000000007b14ae47e17a843f01010d0b00000000000000005acb95f9340000d41c1c000000",
    );
    assert!(matches!(
        ExpandableFilter::from_bytes(&v1),
        Err(Error::Decode(DecodeError::UnsupportedVersion(1)))
    ));
}
