//! Known-answer vectors of the scalable filter (xxh3 scheme named explicitly). Its format stores
//! only the configuration and each stage's count and bits: every stage's `(m_i, k_i)` is
//! re-derived from the configuration on read, so the stage sizing is part of the layout and is
//! pinned here too. A change to any literal here needs a format version bump.

use bloomlab_conformance::{self as conf, from_hex};
use bloomlab_core::Xxh3Scheme;
use bloomlab_scalable::{ScalableBloomFilter, ScalableConfig};

#[test]
fn stage_sizes_are_part_of_the_layout() {
    let c = ScalableConfig::new(1000, 0.01);
    let want = [
        (11_542, 8),
        (25_969, 9),
        (57_708, 10),
        (126_958, 11),
        (276_998, 12),
        (600_162, 13),
    ];
    for (i, w) in want.into_iter().enumerate() {
        assert_eq!(c.stage_size(i as u32).unwrap(), w, "stage {i}");
    }
    let c = ScalableConfig::new(1000, 0.01).growth(4).tightening(0.85);
    let want = [(14_427, 10), (57_708, 10), (230_832, 10), (1_015_658, 11)];
    for (i, w) in want.into_iter().enumerate() {
        assert_eq!(c.stage_size(i as u32).unwrap(), w, "growth 4, stage {i}");
    }
}

/// n0 = 4 at 10 %, keys k0 … k19: three stages.
const SMALL: &str = "424c41420100040100000000000000006200000000000000cba83ec95cbad78d\
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
        62_511,
        0xe7a3_c99d_1b35_11c2,
    );
}

#[test]
fn literal_filter_decodes_and_answers_as_written() {
    let f = ScalableBloomFilter::from_bytes(&from_hex(SMALL)).unwrap();
    assert_eq!(f, small());
    assert_eq!((f.stages(), f.len()), (3, 20));
    assert!((0..20).all(|i| f.might_contain(&format!("k{i}"))));
    let positives: Vec<usize> = (0..256)
        .filter(|i| f.might_contain(&format!("n{i}")))
        .collect();
    assert_eq!(
        positives,
        [
            9, 24, 37, 40, 42, 49, 63, 69, 84, 86, 112, 113, 154, 156, 161, 178, 211, 228, 243,
            244, 253
        ]
    );
}
