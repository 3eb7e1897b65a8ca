//! Known-answer vectors of the Ribbon filter's byte format (variant tag 7, xxh3 scheme named
//! explicitly) and its query: the exact bytes of a small filter, the length and xxh3-64
//! digest of larger ones, the answers of fixed non-members and the raw `r`-bit query values
//! at every `r` from 1 to 32, and a literal encoded filter decoded and queried through both
//! the owned filter and the view. A change to any literal here needs a format version bump.

use bloomlab_conformance::kat::{keys, positives_among as positives};
use bloomlab_conformance::{self as conf, from_hex};
use bloomlab_core::{KeyHash, Xxh3Scheme};
use bloomlab_ribbon::{RibbonFilter, RibbonView, Row, WIDTH, band, row};

/// 300 fixed hashes (a filter of 3 blocks).
fn member_hashes() -> Vec<KeyHash> {
    (0..300u64)
        .map(|i| KeyHash {
            h1: i.wrapping_mul(0x9e37_79b9_7f4a_7c15),
            h2: !i,
        })
        .collect()
}

/// 20 000 fixed non-member hashes.
fn probe_hash(i: u64) -> KeyHash {
    KeyHash {
        h1: i ^ 0x5555,
        h2: i.wrapping_mul(31),
    }
}

/// How many probes answer "maybe", and the digest of their indices (little-endian `u64`s).
fn answers(f: impl Fn(KeyHash) -> bool) -> (usize, u64) {
    let hits: Vec<u64> = (0..20_000u64).filter(|&i| f(probe_hash(i))).collect();
    let bytes: Vec<u8> = hits.iter().flat_map(|i| i.to_le_bytes()).collect();
    (hits.len(), conf::digest(&bytes))
}

/// Digest of the raw `r`-bit values (little-endian `u32`s) the solution gives the rows of
/// the 20 000 probes: every bit of every column's parity, not only whether it matched.
fn raw_digest(f: &RibbonFilter) -> u64 {
    let m = f.num_slots();
    let bytes: Vec<u8> = (0..20_000u64)
        .flat_map(|i| {
            let (s, c, _) = row::<Row>(probe_hash(i), f.seed(), m - WIDTH + 1);
            band::query(f.columns(), (m / WIDTH) as usize, f.result_bits(), s, c).to_le_bytes()
        })
        .collect();
    conf::digest(&bytes)
}
/// Per `r`: encoded length and digest of the 300-hash filter, how many of the 20 000 probes
/// answer "maybe" and the digest of which, and the digest of the raw query values.
const BY_R: [(u32, usize, u64, usize, u64, u64); 32] = [
    (
        1,
        112,
        0xd44dfe7659450ec7,
        10101,
        0x5747bb114e8a3dcf,
        0xa05f25aa30b045b5,
    ),
    (
        2,
        160,
        0x54af027f8e60dd27,
        5071,
        0xfbe87196d89b812d,
        0x52c99e1e083815e9,
    ),
    (
        3,
        208,
        0xc6f4d7eb2b2331f4,
        2484,
        0x3aee86297bf0872d,
        0x8643808d91b6cac3,
    ),
    (
        4,
        256,
        0x92fadc0454100435,
        1237,
        0x349eb3e915677dcb,
        0xb8ec3c9ab1e5e326,
    ),
    (
        5,
        304,
        0x6a4b8fc0082721fe,
        610,
        0x4a240254c7cea211,
        0xd74a5b5327c9bdca,
    ),
    (
        6,
        352,
        0xb45843c35a3677a7,
        291,
        0x78fcb0024dc1d021,
        0x16ba44407295fd6a,
    ),
    (
        7,
        400,
        0x9fe3b0445aa4c87d,
        153,
        0x7bda5e58a0206f4e,
        0x391b7ca6baaddcbd,
    ),
    (
        8,
        448,
        0x1de2e4af0d52a800,
        71,
        0x93080dccd941be55,
        0x32c47aba7b75e638,
    ),
    (
        9,
        496,
        0x9b4a463a155019fa,
        37,
        0x3824157bd2d76028,
        0xa71866cdbe295828,
    ),
    (
        10,
        544,
        0x120e2d69e2e3a98b,
        16,
        0x0c13632cca5374ad,
        0x3d772daa3e481f62,
    ),
    (
        11,
        592,
        0x99cc5768678507c5,
        9,
        0x1baf7677e063c836,
        0xe5d0a1bc10a4c0db,
    ),
    (
        12,
        640,
        0x7301487f991bb466,
        4,
        0xec83ae1b72a33ca3,
        0xe6d9190952d055fc,
    ),
    (
        13,
        688,
        0xa193cdb8b335a427,
        1,
        0x771ea15ffad7f1bd,
        0xdc9661361cae4b29,
    ),
    (
        14,
        736,
        0x7166883843f7b91b,
        1,
        0x771ea15ffad7f1bd,
        0x82fada668a2ec547,
    ),
    (
        15,
        784,
        0x8b2ad5dc6664ed00,
        0,
        0x2d06800538d394c2,
        0x31641db934f189be,
    ),
    (
        16,
        832,
        0xed4c26c1824bce21,
        0,
        0x2d06800538d394c2,
        0x6bec96ebbf506eee,
    ),
    (
        17,
        880,
        0x110707025d9e4238,
        0,
        0x2d06800538d394c2,
        0x4d11c2291b83ba8a,
    ),
    (
        18,
        928,
        0xcd267e28e6c0a48a,
        0,
        0x2d06800538d394c2,
        0x62726d64778926d4,
    ),
    (
        19,
        976,
        0x45d2f179a18be25e,
        0,
        0x2d06800538d394c2,
        0x22c73e764a77b8f1,
    ),
    (
        20,
        1024,
        0x9af941877814e3d1,
        0,
        0x2d06800538d394c2,
        0x34050151fc7d3b96,
    ),
    (
        21,
        1072,
        0xa1a6c7556e716fdf,
        0,
        0x2d06800538d394c2,
        0x3f6a4f8715cd5fcb,
    ),
    (
        22,
        1120,
        0x144adabde64144bc,
        0,
        0x2d06800538d394c2,
        0x176e0b0494435785,
    ),
    (
        23,
        1168,
        0x8404fbd4753dbde7,
        0,
        0x2d06800538d394c2,
        0xafaee7a18785329e,
    ),
    (
        24,
        1216,
        0x488ef91146215d7e,
        0,
        0x2d06800538d394c2,
        0xab6b1a4de20a2889,
    ),
    (
        25,
        1264,
        0xd15e2a55a28f9533,
        0,
        0x2d06800538d394c2,
        0x1906d01faab5e939,
    ),
    (
        26,
        1312,
        0xaec7781cdc07b3f4,
        0,
        0x2d06800538d394c2,
        0x9d866ebb4ab3af2a,
    ),
    (
        27,
        1360,
        0x8dd0f92bbb91df43,
        0,
        0x2d06800538d394c2,
        0x7ba3b76d232dfbf0,
    ),
    (
        28,
        1408,
        0x152a5e809f3f9cb1,
        0,
        0x2d06800538d394c2,
        0x970048e4916b2096,
    ),
    (
        29,
        1456,
        0x5d4e23f069113fe3,
        0,
        0x2d06800538d394c2,
        0x83d68fb71b1fdaf7,
    ),
    (
        30,
        1504,
        0x5125fcbaeae9014b,
        0,
        0x2d06800538d394c2,
        0x5472ce68179b2bfc,
    ),
    (
        31,
        1552,
        0x69c7c438e768994e,
        0,
        0x2d06800538d394c2,
        0xc83650f5c0abddf3,
    ),
    (
        32,
        1600,
        0x4976e3d7a5e32384,
        0,
        0x2d06800538d394c2,
        0x529613021a3ad027,
    ),
];

#[test]
fn bytes_answers_and_raw_values_at_every_r() {
    let members = member_hashes();
    for (r, len, digest, count, which, raw) in BY_R {
        let f = RibbonFilter::from_hashes(&members, r, Xxh3Scheme).unwrap();
        let bytes = f.to_bytes();
        conf::check_known_answer(&format!("ribbon r = {r}"), &bytes, len, digest);
        assert!(members.iter().all(|&h| f.might_contain_hash(h)), "r = {r}");
        assert_eq!(
            answers(|h| f.might_contain_hash(h)),
            (count, which),
            "r = {r}"
        );
        let view = RibbonView::new(&bytes).unwrap();
        assert_eq!(
            answers(|h| view.might_contain_hash(h)),
            (count, which),
            "view, r = {r}"
        );
        assert_eq!(raw_digest(&f), raw, "raw values, r = {r}");
    }
}

/// `k0 … k19` at a 25 % target: one block of 128 slots, `r = 2`, seed 0.
const SMALL: &str = "424c4142010007010000000000000000400000000000000072918c006637c925\
                     800000000000000002000000000000001400000000000000000000000000d03f\
                     947e9b16f7664f2bb52cb87c30775afc945dfb7104b44a43c146bd7a50b4c0f5";

/// The non-members of `n0 … n255` that `SMALL` answers "maybe" to (54 of 256; 2^-2 = 25 %).
const SMALL_POSITIVES: [usize; 54] = [
    2, 9, 11, 18, 23, 24, 59, 66, 71, 73, 76, 77, 80, 81, 83, 86, 89, 96, 97, 100, 109, 112, 121,
    124, 132, 134, 137, 138, 142, 143, 145, 152, 172, 174, 178, 186, 187, 190, 198, 204, 207, 209,
    215, 217, 219, 221, 223, 231, 232, 233, 241, 244, 253, 254,
];

#[test]
fn small_filter_bytes() {
    let f = RibbonFilter::build_with_scheme(keys("k", 20), 0.25, Xxh3Scheme).unwrap();
    assert_eq!(conf::to_hex(&f.to_bytes()), conf::to_hex(&from_hex(SMALL)));
}

#[test]
fn a_literal_encoded_filter_decodes_and_answers() {
    let bytes = from_hex(SMALL);
    let f = RibbonFilter::from_bytes(&bytes).unwrap();
    let view = RibbonView::new(&bytes).unwrap();
    assert_eq!(
        (f.num_slots(), f.result_bits(), f.seed(), f.len()),
        (128, 2, 0, 20)
    );
    for k in keys("k", 20) {
        assert!(f.might_contain(&k) && view.might_contain(&k), "{k}");
    }
    assert_eq!(positives(|k| f.might_contain(k), 256), SMALL_POSITIVES);
    assert_eq!(positives(|k| view.might_contain(k), 256), SMALL_POSITIVES);
}

#[test]
fn filters_of_ten_thousand_keys() {
    // Keys 0 … 9999 (u64); non-members n0 … n4095.
    let cases: [(f64, usize, u64, &[usize]); 3] = [
        (
            0.03,
            7840,
            0x14f0283912123389,
            &[
                88, 103, 263, 278, 282, 288, 369, 413, 506, 551, 590, 666, 720, 752, 817, 1033,
                1061, 1082, 1091, 1145, 1164, 1224, 1248, 1279, 1286, 1434, 1455, 1458, 1710, 1986,
                2117, 2175, 2309, 2349, 2372, 2472, 2486, 2506, 2511, 2556, 2717, 2741, 3025, 3267,
                3283, 3343, 3544, 3554, 3568, 3695, 3820, 3929, 3993, 4032, 4053,
            ],
        ),
        (
            0.01,
            9136,
            0x03e93b63544c6528,
            &[
                88, 263, 282, 369, 506, 666, 720, 752, 1033, 1061, 1091, 1164, 1224, 1248, 1279,
                1455, 1458, 2117, 2349, 2506, 2511, 2741, 3554, 3993, 4053,
            ],
        ),
        (0.001, 13024, 0x8ed6919dfc299360, &[369, 1164, 1248, 1458]),
    ];
    for (p, len, digest, want) in cases {
        let f = RibbonFilter::build_with_scheme(0..10_000u64, p, Xxh3Scheme).unwrap();
        conf::check_known_answer(&format!("ribbon 10^4 at {p}"), &f.to_bytes(), len, digest);
        assert_eq!(positives(|k| f.might_contain(k), 4096), want, "{p}");
        assert!((0..10_000u64).all(|k| f.might_contain(&k)));
    }
}
