//! Files written by earlier versions of the blocked format keep loading and answering exactly
//! as they did when they were written.

use bloomlab_blocked::BlockedBloomFilter;
use bloomlab_core::Filter;

/// Written by the first blocked layout (envelope version 1, scheme xxh3-128/km, 64-bit probe
/// sequence): `with_blocks(2, 4)`, the keys `3·i` for `i < 120` (as u64) and the string
/// `"v1 fixture"`.
const V1_FIXTURE: &str = concat!(
    "424c4142010002010000000000000000a8000000000000000916360b953cfa9f02000000000000000400000000000000",
    "7900000000000000b100000000000000000000000000000087840bb906700a80280e647ae0b93187fbb0150644fd64b4",
    "5027344880ecc2a912bd0711c119405558a2686707a47b2017ae427992b281472840f8a456b0062002200803b004a889",
    "72a901420441404082cd0d5028895dd10b183ce1632d6800aa9482a884656182db580700630683c4ec3f2200e0d11720",
    "908c790909038642",
);

/// The non-members below 2000 that the v1 fixture answered "maybe" to when it was written.
const V1_FALSE_POSITIVES: [u64; 43] = [
    59, 211, 298, 375, 378, 383, 413, 486, 492, 560, 651, 711, 807, 854, 865, 946, 960, 972, 1052,
    1053, 1060, 1075, 1102, 1138, 1161, 1180, 1223, 1309, 1327, 1373, 1396, 1405, 1409, 1481, 1535,
    1691, 1735, 1757, 1784, 1817, 1871, 1881, 1929,
];

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

#[test]
fn v1_file_loads_and_answers_as_when_written() {
    let bytes = unhex(V1_FIXTURE);
    assert_eq!(bytes.len(), 200);
    let f = BlockedBloomFilter::from_bytes(&bytes).unwrap();
    assert_eq!(
        (f.blocks(), f.hashes(), f.len(), f.capacity()),
        (2, 4, 121, 177)
    );
    assert_eq!(f.count_ones(), 380);
    for i in 0..2000u64 {
        let member = i < 360 && i % 3 == 0;
        let want = member || V1_FALSE_POSITIVES.contains(&i);
        assert_eq!(f.might_contain(&i), want, "key {i}");
        assert_eq!(
            f.might_contain_bytes(&i.to_le_bytes()),
            want,
            "key {i} as bytes"
        );
        // The portable path reads the first layout's probes too, not the current ones.
        assert_eq!(f.might_contain_portable(&i), want, "key {i}, portable");
    }
    let keys: Vec<u64> = (0..2000).collect();
    let mut out = vec![false; keys.len()];
    f.might_contain_batch(&keys, &mut out).unwrap();
    assert!(keys.iter().zip(&out).all(|(k, &o)| o == f.might_contain(k)));
    assert!(f.might_contain("v1 fixture"));
    assert!(!f.might_contain("v2 fixture"));
    // Figures as computed when the file was written (the FPR formula may be evaluated another
    // way since, hence a relative tolerance far below any meaningful change).
    assert!(close(f.expected_fpr(), 0.021246956223341752, 1e-9));
    assert!(close(f.current_fpr(), 0.019772052997723222, 1e-12));
    assert!(close(f.estimated_len(), 119.04233633838285, 1e-12));
    // Written back, it is the same file: a filter keeps the layout it was built with.
    assert_eq!(f.to_bytes(), bytes);
}

#[test]
fn v1_filter_keeps_its_layout_when_extended() {
    let bytes = unhex(V1_FIXTURE);
    let mut f = BlockedBloomFilter::from_bytes(&bytes).unwrap();
    f.insert(&2001u64);
    assert!(f.might_contain(&2001u64));
    // The portable insert sets the first layout's bits, the ones the vector path reads.
    let mut p = BlockedBloomFilter::from_bytes(&bytes).unwrap();
    p.insert_portable(&2001u64);
    assert_eq!(p, f);
    let g = BlockedBloomFilter::from_bytes(&f.to_bytes()).unwrap();
    assert_eq!(g, f);
    for i in 0..2000u64 {
        assert!(!f.might_contain(&i) || g.might_contain(&i));
    }
}

#[test]
fn new_filters_write_the_third_layout_and_other_versions_are_refused() {
    use bloomlab_blocked::Layout;
    use bloomlab_core::format;
    let mut f = BlockedBloomFilter::with_fpr(1_000, 0.01).unwrap();
    for i in 0..1_000u64 {
        f.insert(&i);
    }
    assert_eq!(f.layout(), Layout::OneHash);
    let bytes = f.to_bytes();
    assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), 3);
    let g = BlockedBloomFilter::from_bytes(&bytes).unwrap();
    assert_eq!(g, f);
    assert_eq!(g.to_bytes(), bytes);
    // The second layout is still written when asked for, and keeps its version.
    let mut l2 = BlockedBloomFilter::with_fpr(1_000, 0.01)
        .and_then(|f| f.with_layout(Layout::Local32))
        .unwrap();
    for i in 0..1_000u64 {
        l2.insert(&i);
    }
    let b2 = l2.to_bytes();
    assert_eq!(u16::from_le_bytes([b2[4], b2[5]]), 2);
    let g2 = BlockedBloomFilter::from_bytes(&b2).unwrap();
    assert_eq!((g2.layout(), &g2), (Layout::Local32, &l2));
    assert!((0..1_000u64).all(|i| g2.might_contain(&i)));
    // Same keys, same table size, different layouts: different bits, never mixed.
    assert_ne!(g2.to_bytes()[32..], bytes[32..]);
    let mut empty3 = BlockedBloomFilter::with_fpr(1_000, 0.01).unwrap();
    assert!(empty3.union(&g2).is_err());
    // The two layouts never mix.
    let v1 = BlockedBloomFilter::from_bytes(&unhex(V1_FIXTURE)).unwrap();
    assert_eq!(v1.layout(), Layout::Wide64);
    let mut same_shape = BlockedBloomFilter::with_blocks(2, 4).unwrap();
    assert!(same_shape.union(&v1).is_err());
    // A version this build does not know is refused with an error that names it.
    for v in [0u16, 4, 0xffff] {
        let mut b = bytes.clone();
        b[4..6].copy_from_slice(&v.to_le_bytes());
        format::reseal(&mut b);
        let err = BlockedBloomFilter::from_bytes(&b).unwrap_err().to_string();
        assert!(err.contains(&format!("version {v}")), "{err}");
    }
    // Other variants read version 1 only: a version-2 envelope of theirs is refused.
    let mut c = bloomlab_classic::BloomFilter::with_fpr(100, 0.01)
        .unwrap()
        .to_bytes();
    c[4..6].copy_from_slice(&2u16.to_le_bytes());
    format::reseal(&mut c);
    let err = bloomlab_classic::BloomFilter::from_bytes(&c)
        .unwrap_err()
        .to_string();
    assert!(err.contains("version 2"), "{err}");
}

#[cfg(feature = "serde")]
#[test]
fn serde_of_the_first_layout_predates_the_layout_field() {
    // A serialization written before the layout field existed (no "layout" key) is the
    // first layout; it decodes as such and answers as the v1 file does.
    let v1 = BlockedBloomFilter::from_bytes(&unhex(V1_FIXTURE)).unwrap();
    let mut json: serde_json::Value = serde_json::to_value(&v1).unwrap();
    assert_eq!(json["layout"], "Wide64");
    json.as_object_mut().unwrap().remove("layout");
    let back: BlockedBloomFilter = serde_json::from_value(json).unwrap();
    assert_eq!(back, v1);
}
