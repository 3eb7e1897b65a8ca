//! Known-answer vectors of the Ribbon filter's byte format (variant tag 7, xxh3 scheme named
//! explicitly) and its query: the exact bytes of a small filter, the length and xxh3-64
//! digest of larger ones, the answers of fixed non-members and the raw `r`-bit query values
//! at every `r` from 1 to 32, and a literal encoded filter decoded and queried through both
//! the owned filter and the view. A change to any literal here needs a format version bump.
//!
//! Both equation layouts are pinned: the first ([`Layout::Fmix128`], envelope version 1)
//! by the literals it always had — files of that version must keep loading and answering
//! exactly so —, the second ([`Layout::OneHash`], version 2, every new filter) by its own,
//! with its derivation restated here from its definition.

use bloomlab_conformance::kat::{check_answers, keys, positives_among as positives};
use bloomlab_conformance::{self as conf, from_hex};
use bloomlab_core::{KeyHash, Xxh3Scheme};
use bloomlab_ribbon::{Layout, RibbonFilter, RibbonView, Row, WIDTH, band, row, row_one_hash};

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
    let f = RibbonFilter::build_in(Layout::Fmix128, keys("k", 20), 0.25, Xxh3Scheme).unwrap();
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
    assert_eq!(
        (f.layout(), view.layout()),
        (Layout::Fmix128, Layout::Fmix128)
    );
    assert_eq!(
        f.to_bytes(),
        bytes,
        "a version-1 filter writes version 1 again"
    );
    check_answers(
        &[&|k| f.might_contain(k), &|k| view.might_contain(k)],
        20,
        &SMALL_POSITIVES,
    );
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
        let f = RibbonFilter::build_in(Layout::Fmix128, 0..10_000u64, p, Xxh3Scheme).unwrap();
        conf::check_known_answer(&format!("ribbon 10^4 at {p}"), &f.to_bytes(), len, digest);
        assert_eq!(positives(|k| f.might_contain(k), 4096), want, "{p}");
        assert!((0..10_000u64).all(|k| f.might_contain(&k)));
    }
}

// ---------------------------------------------------------------------------------------
// The second layout (envelope version 2)
// ---------------------------------------------------------------------------------------

/// The second layout's equation restated from its definition (the crate docs of
/// `row_one_hash`): `y = (x ^ seed·φ) · M0`; start = fastrange(y); row = high word
/// `(y ^ y >> 29) · M2`, low word `(y ^ y >> 32) · M1`, bit 0 set; right-hand side the high
/// half of `(y ^ y >> 31) · M3`.
fn one_hash_reference(x: u64, seed: u32, starts: u64) -> (usize, u128, u32) {
    let y = (x ^ u64::from(seed).wrapping_mul(0x9e37_79b9_7f4a_7c15))
        .wrapping_mul(0xd6e8_feb8_6659_fd93);
    let start = ((u128::from(y) * u128::from(starts)) >> 64) as usize;
    let lo = (y ^ (y >> 32)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let hi = (y ^ (y >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    let v = ((y ^ (y >> 31)).wrapping_mul(0x94d0_49bb_1331_11eb) >> 32) as u32;
    (start, (u128::from(hi) << 64 | u128::from(lo)) | 1, v)
}

#[test]
fn second_layout_equations_follow_their_definition() {
    // The key's 64-bit hash is XXH3-64 (seed XXH3_SEED) of its bytes: re-derived from the
    // reference xxHash crate.
    use xxhash_rust::xxh3::xxh3_64_with_seed;
    for i in 0..1000u64 {
        let x = xxh3_64_with_seed(&i.to_le_bytes(), bloomlab_core::hash::XXH3_SEED);
        assert_eq!(
            bloomlab_ribbon::hash_in(Layout::OneHash, &Xxh3Scheme, &i).h1,
            x
        );
        for (seed, starts) in [(0, 1), (0, 9_873), (5, 1 << 40), (31, u64::MAX)] {
            assert_eq!(
                row_one_hash::<Row>(x, seed, starts),
                one_hash_reference(x, seed, starts),
                "key {i}, seed {seed}"
            );
        }
    }
}

/// `k0 … k19` at a 25 % target in the second layout (envelope version 2): one block of 128
/// slots, `r = 2`, seed 0.
const SMALL_V2: &str = "424c41420200070100000000000000004000000000000000d1a37beb189af5fb\
                        800000000000000002000000000000001400000000000000000000000000d03f\
                        423d9e16f7664f2bb52cb87c30775afc09a2ec7104b44a43c146bd7a50b4c0f5";

/// The non-members of `n0 … n255` that `SMALL_V2` answers "maybe" to (58 of 256).
const SMALL_V2_POSITIVES: [usize; 58] = [
    3, 5, 11, 14, 21, 22, 31, 37, 40, 41, 54, 56, 57, 60, 74, 75, 79, 81, 93, 94, 100, 102, 103,
    105, 108, 110, 112, 120, 125, 137, 140, 142, 143, 146, 148, 151, 153, 159, 162, 169, 178, 180,
    182, 188, 194, 197, 198, 215, 217, 219, 223, 225, 230, 232, 241, 242, 248, 250,
];

#[test]
fn second_layout_small_filter_bytes_and_answers() {
    let f = RibbonFilter::build_with_scheme(keys("k", 20), 0.25, Xxh3Scheme).unwrap();
    assert_eq!(
        f.layout(),
        Layout::OneHash,
        "new filters use the second layout"
    );
    assert_eq!(
        conf::to_hex(&f.to_bytes()),
        conf::to_hex(&from_hex(SMALL_V2))
    );
    // The literal decodes, through the owned filter and the view, and answers as pinned.
    let bytes = from_hex(SMALL_V2);
    let g = RibbonFilter::from_bytes(&bytes).unwrap();
    let view = RibbonView::new(&bytes).unwrap();
    assert_eq!(
        (g.layout(), view.layout()),
        (Layout::OneHash, Layout::OneHash)
    );
    assert_eq!(
        (g.num_slots(), g.result_bits(), g.seed(), g.len()),
        (128, 2, 0, 20)
    );
    check_answers(
        &[&|k| g.might_contain(k), &|k| view.might_contain(k)],
        20,
        &SMALL_V2_POSITIVES,
    );
    assert_eq!(g.to_bytes(), bytes);
}

#[test]
fn second_layout_filters_of_ten_thousand_keys() {
    // Keys 0 … 9999 (u64); non-members n0 … n4095.
    let cases: [(f64, usize, u64, &[usize]); 3] = [
        (
            0.03,
            7840,
            0x051b2a3ccc73f770,
            &[
                45, 123, 135, 143, 187, 218, 281, 362, 374, 376, 401, 414, 456, 543, 545, 572, 662,
                689, 894, 1092, 1101, 1107, 1173, 1197, 1481, 1500, 1676, 1759, 1815, 1865, 1947,
                2054, 2173, 2217, 2247, 2295, 2315, 2358, 2393, 2459, 2472, 2490, 2515, 2676, 2682,
                2720, 2760, 2814, 2820, 2935, 3013, 3020, 3077, 3081, 3162, 3239, 3257, 3269, 3305,
                3364, 3418, 3451, 3459, 3493, 3790, 3808, 3824, 3886, 3964, 3982, 3988,
            ],
        ),
        (
            0.01,
            9136,
            0x74121126073d40cd,
            &[
                45, 143, 374, 376, 401, 414, 456, 545, 894, 1101, 1107, 1481, 1947, 2217, 2247,
                2295, 2315, 2358, 2490, 2515, 2682, 2720, 2760, 2820, 2935, 3020, 3257, 3364, 3451,
                3459, 3493, 3790, 3824, 3886, 3988,
            ],
        ),
        (0.001, 13024, 0xee05c69d391d51a9, &[376, 2720, 2935]),
    ];
    for (p, len, digest, want) in cases {
        let f = RibbonFilter::build_with_scheme(0..10_000u64, p, Xxh3Scheme).unwrap();
        let bytes = f.to_bytes();
        conf::check_known_answer(&format!("ribbon v2 10^4 at {p}"), &bytes, len, digest);
        assert_eq!(positives(|k| f.might_contain(k), 4096), want, "{p}");
        assert!((0..10_000u64).all(|k| f.might_contain(&k)));
        let view = RibbonView::new(&bytes).unwrap();
        assert_eq!(
            positives(|k| view.might_contain(k), 4096),
            want,
            "view, {p}"
        );
    }
}

/// Per `r`: encoded length and digest of the 300-hash filter in the second layout, how many
/// of the 20 000 probes answer "maybe" and the digest of which.
const BY_R_V2: [(u32, usize, u64, usize, u64); 11] = [
    (1, 112, 0x082261042b345482, 10057, 0xc5a261c9b5307dda),
    (2, 160, 0xe99665b27ebfae4d, 5035, 0x850bf4d07098ecaf),
    (3, 208, 0xcd684ce0413fe49e, 2491, 0xaa83239756d7085d),
    (6, 352, 0x61dcf785ee944372, 322, 0x26ba611dc2f92539),
    (7, 400, 0x8f577659cf4f12d1, 158, 0x24b16b66cc37a1e9),
    (8, 448, 0x36612384b3d1627a, 70, 0x8c117221e5359543),
    (10, 544, 0xd3b3684d567bd242, 19, 0xa6602d45227701d0),
    (13, 688, 0x1ff6db85aa2e161f, 2, 0xd9a5593143dcc73b),
    (16, 832, 0xe79d3e351f0f6edb, 0, 0x2d06800538d394c2),
    (24, 1216, 0x9c5cfce174f74116, 0, 0x2d06800538d394c2),
    (32, 1600, 0x38a0eb2959c733d9, 0, 0x2d06800538d394c2),
];

#[test]
fn second_layout_bytes_and_answers_by_r() {
    let hash = |x: u64| KeyHash::new(x, 0);
    let members: Vec<KeyHash> = (0..300u64)
        .map(|i| hash(i.wrapping_mul(0x9e37_79b9_7f4a_7c15)))
        .collect();
    for (r, len, digest, count, which) in BY_R_V2 {
        let f = RibbonFilter::from_hashes_in(Layout::OneHash, &members, r, Xxh3Scheme).unwrap();
        let bytes = f.to_bytes();
        conf::check_known_answer(&format!("ribbon v2 r = {r}"), &bytes, len, digest);
        let view = RibbonView::new(&bytes).unwrap();
        assert!(
            members
                .iter()
                .all(|&h| f.might_contain_hash(h) && view.might_contain_hash(h))
        );
        let probe = |i: u64| hash(i ^ 0x5555);
        for q in [
            &(|h| f.might_contain_hash(h)) as &dyn Fn(KeyHash) -> bool,
            &|h| view.might_contain_hash(h),
        ] {
            let hits: Vec<u64> = (0..20_000u64).filter(|&i| q(probe(i))).collect();
            let hit_bytes: Vec<u8> = hits.iter().flat_map(|i| i.to_le_bytes()).collect();
            assert_eq!(
                (hits.len(), conf::digest(&hit_bytes)),
                (count, which),
                "r = {r}"
            );
        }
    }
}
