//! Known-answer vectors of the scalable filter (xxh3 scheme named explicitly). Its format stores
//! only the configuration and each stage's count and bits: every stage's `(m_i, k_i)` is
//! re-derived from the configuration (and the format version's probe rule) on read, so the
//! stage sizing is part of the layout and is pinned here too. A change to any literal here
//! needs a format version bump. Version 1 (whole-stage probes) is still read: its vectors stay.

use bloomlab_conformance::kat::positives;
use bloomlab_conformance::{self as conf, from_hex};
use bloomlab_core::{DecodeError, Error, Xxh3Scheme};
use bloomlab_scalable::{ProbeRule, ScalableBloomFilter, ScalableConfig};

#[test]
fn stage_sizes_are_part_of_the_layout() {
    // Version 2: k partitions of ceil(n_i / ln 2) bits; version 1: ceil(n_i·k_i / ln 2) bits.
    let (v2, v1): (Vec<_>, Vec<_>) = [
        ((11_544, 8), (11_542, 8)),
        ((25_974, 9), (25_969, 9)),
        ((57_710, 10), (57_708, 10)),
        ((126_962, 11), (126_958, 11)),
        ((277_008, 12), (276_998, 12)),
        ((600_171, 13), (600_162, 13)),
    ]
    .into_iter()
    .unzip();
    let c = ScalableConfig::new(1000, 0.01);
    check_stages(&c, ProbeRule::Partitioned, &v2);
    check_stages(&c, ProbeRule::Whole, &v1);
    let c = ScalableConfig::new(1000, 0.01).growth(4).tightening(0.85);
    let want = [(14_430, 10), (57_710, 10), (230_840, 10), (1_015_663, 11)];
    check_stages(&c, ProbeRule::Partitioned, &want);
    let want = [(14_427, 10), (57_708, 10), (230_832, 10), (1_015_658, 11)];
    check_stages(&c, ProbeRule::Whole, &want);
}

/// Checks stage `i`'s `(m_i, k_i)` under `rule` against `want[i]`; the default sizing
/// (`stage_size`) must be the partitioned one.
fn check_stages(c: &ScalableConfig, rule: ProbeRule, want: &[(u64, u32)]) {
    for (i, &w) in want.iter().enumerate() {
        let i = i as u32;
        assert_eq!(
            c.stage_size_under(i, rule).unwrap(),
            w,
            "{rule:?} stage {i}"
        );
        if rule == ProbeRule::Partitioned {
            assert_eq!(c.stage_size(i).unwrap(), w, "default stage {i}");
        }
    }
}

/// Version 2: n0 = 4 at 10 %, keys k0 … k19: three stages.
const SMALL: &str = "424c414202000401000000000000000062000000000000001a4ab07632fbea2b\
                     04000000000000009a9999999999b93f0200000000000000000000000000e03f\
                     03000000000000000400000000000000ab436b160900000000000000d896e0f7\
                     6053b06f530700000000000000848018144a112843420609b022901826002302a890";

/// Version 1 (whole-stage probes), written by the previous release: the same filter.
const SMALL_V1: &str = "424c41420100040100000000000000006200000000000000cba83ec95cbad78d\
                        04000000000000009a9999999999b93f0200000000000000000000000000e03f\
                        03000000000000000500000000000000d9eb7a0009000000000000002fd79e3f\
                        0fd958051d06000000000000005110580e0928128202458404a51080080130011600";

fn small() -> ScalableBloomFilter {
    let config = ScalableConfig::new(4, 0.1);
    let mut f = ScalableBloomFilter::with_config_and_scheme(config, Xxh3Scheme).unwrap();
    for i in 0..20 {
        f.insert(&format!("k{i}")).unwrap();
    }
    f
}

#[test]
fn serialized_bytes_after_fixed_inserts() {
    assert_eq!(small().to_bytes(), from_hex(SMALL));
    let mut g =
        ScalableBloomFilter::with_config_and_scheme(ScalableConfig::new(1000, 0.01), Xxh3Scheme)
            .unwrap();
    for i in 0..20_000u64 {
        g.insert(&i).unwrap();
    }
    assert_eq!(g.stages(), 5);
    conf::check_known_answer(
        "scalable 20 000 from 1000",
        &g.to_bytes(),
        62_513,
        0x506a_278c_835a_bdb3,
    );
}

#[test]
fn literal_filter_decodes_and_answers_as_written() {
    let f = ScalableBloomFilter::from_bytes(&from_hex(SMALL)).unwrap();
    assert_eq!(f, small());
    assert_eq!(
        (f.stages(), f.len(), f.rule()),
        (3, 20, ProbeRule::Partitioned)
    );
    assert!((0..20).all(|i| f.might_contain(&format!("k{i}"))));
    assert_eq!(
        positives(|k| f.might_contain(k)),
        [
            66, 71, 75, 86, 93, 99, 104, 107, 111, 126, 142, 151, 156, 169, 212, 219, 240, 248, 249
        ]
    );
}

#[test]
fn version_1_still_decodes_answers_and_grows_under_its_own_rule() {
    let bytes = from_hex(SMALL_V1);
    let f = ScalableBloomFilter::from_bytes(&bytes).unwrap();
    assert_eq!((f.stages(), f.len(), f.rule()), (3, 20, ProbeRule::Whole));
    assert_eq!(f.to_bytes(), bytes, "a version-1 chain writes version 1");
    assert!((0..20).all(|i| f.might_contain(&format!("k{i}"))));
    assert_eq!(
        positives(|k| f.might_contain(k)),
        [
            9, 24, 37, 40, 42, 49, 63, 69, 84, 86, 112, 113, 154, 156, 161, 178, 211, 228, 243,
            244, 253
        ]
    );
    // It keeps its rule as it grows, and cannot be merged with a version-2 chain.
    let mut g = f.clone();
    for i in 20..200 {
        g.insert(&format!("k{i}")).unwrap();
    }
    assert!(g.stages() > 3);
    assert!((0..200).all(|i| g.might_contain(&format!("k{i}"))));
    assert_eq!(g.to_bytes()[4..6], [1, 0]);
    assert_eq!(ScalableBloomFilter::from_bytes(&g.to_bytes()).unwrap(), g);
    assert!(matches!(
        g.clone().union(&small()),
        Err(Error::Incompatible(_))
    ));
    // A version this build does not know is a typed error.
    let mut v9 = bytes.clone();
    v9[4] = 9;
    assert!(matches!(
        ScalableBloomFilter::from_bytes(&v9),
        Err(Error::Decode(DecodeError::UnsupportedVersion(9)))
    ));
}
