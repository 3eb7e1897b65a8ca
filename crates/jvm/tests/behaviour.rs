//! What the filters promise beyond the bytes: no false negatives, the FPR their formula
//! predicts, the JVM's merge rules, put's return value, and the trait's key mapping.

use bloomlab_conformance as conf;
use bloomlab_core::{Error, Filter, SchemeId, Variant};
use bloomlab_jvm::{
    GuavaBloomFilter, GuavaSizing, GuavaStrategy, JvmFilter, JvmFormat, SparkBloomFilter,
    SparkVersion,
};

fn spark(v: SparkVersion) -> impl Fn(u64, f64) -> SparkBloomFilter {
    move |n, p| SparkBloomFilter::create(n, p, v).unwrap()
}

fn guava(s: GuavaStrategy) -> impl Fn(u64, f64) -> GuavaBloomFilter {
    move |n, p| GuavaBloomFilter::create_with(n, p, s, GuavaSizing::BitsPerKey).unwrap()
}

#[test]
fn no_false_negatives_on_any_key_shape() {
    for v in [SparkVersion::V1, SparkVersion::V2] {
        conf::check_no_false_negatives(|n| spark(v)(n, 0.01), 2_000);
    }
    for s in [
        GuavaStrategy::Murmur128Mitz32,
        GuavaStrategy::Murmur128Mitz64,
    ] {
        conf::check_no_false_negatives(|n| guava(s)(n, 0.01), 2_000);
    }
}

#[test]
fn the_fpr_is_what_the_fill_predicts() {
    // The JVM's expectedFpp, (set bits / m)^k, within 5 binomial σ of the measured rate.
    for (n, p) in [(20_000, 0.01), (5_000, 0.001)] {
        for v in [SparkVersion::V1, SparkVersion::V2] {
            let r = conf::check_fpr(spark(v), n, p, 200_000, 7);
            println!("spark {v} {r:?}");
        }
        for s in [
            GuavaStrategy::Murmur128Mitz32,
            GuavaStrategy::Murmur128Mitz64,
        ] {
            let r = conf::check_fpr(guava(s), n, p, 200_000, 8);
            println!("guava {s:?} {r:?}");
        }
    }
}

#[test]
fn put_reports_whether_the_key_was_new_to_the_bits() {
    let mut s = SparkBloomFilter::create(500, 0.2, SparkVersion::V2).unwrap();
    let mut g = GuavaBloomFilter::create(500, 0.2).unwrap();
    let (mut new_s, mut new_g) = (0, 0);
    for i in 0..2_000i64 {
        // "put(t) always returns the opposite result to what mightContain(t) would have
        // returned at the time it is called" (Spark's and Guava's docs).
        let before = s.might_contain_long(i % 1_500);
        let changed = s.put_long(i % 1_500);
        assert_eq!(changed, !before);
        new_s += u32::from(changed);
        let before = g.might_contain_long(i % 1_500);
        let changed = g.put_long(i % 1_500);
        assert_eq!(changed, !before);
        new_g += u32::from(changed);
    }
    // 1 500 distinct keys, three times the design load: some are false positives before
    // their own put, and no repeat changes a bit.
    assert!(new_s > 0 && new_s < 1_500, "{new_s}");
    assert!(new_g > 0 && new_g < 1_500, "{new_g}");
}

/// Three filters from `make`: the even keys of `0..600` put with `put`, the odd ones, and all.
fn halves_and_whole<F>(make: impl Fn() -> F, put: impl Fn(&mut F, i32) -> bool) -> (F, F, F) {
    let (mut a, mut b, mut both) = (make(), make(), make());
    for i in 0..600 {
        put(if i % 2 == 0 { &mut a } else { &mut b }, i);
        put(&mut both, i);
    }
    (a, b, both)
}

#[test]
fn merging_equals_building_from_the_union() {
    for v in [SparkVersion::V1, SparkVersion::V2] {
        let make = || SparkBloomFilter::create_with_bits(1_000, 9_600, v, 0).unwrap();
        let (mut a, b, both) = halves_and_whole(make, |f, i| f.put_long(i.into()));
        let mut and = a.clone();
        and.intersect_in_place(&b).unwrap();
        let want: Vec<u64> = a
            .words()
            .iter()
            .zip(b.words())
            .map(|(x, y)| x & y)
            .collect();
        assert_eq!(and.words(), &want[..]);
        assert_eq!(
            and.cardinality(),
            want.iter().map(|w| u64::from(w.count_ones())).sum::<u64>()
        );
        a.merge_in_place(&b).unwrap();
        assert_eq!(a, both);
        assert_eq!(Filter::len(&a), 600);
    }
    let make = || GuavaBloomFilter::create(1_000, 0.01).unwrap();
    let (mut a, b, both) = halves_and_whole(make, |f, i| f.put_int(i));
    a.put_all(&b).unwrap();
    assert_eq!(a, both);
}

#[test]
fn merging_follows_the_jvm_compatibility_rules() {
    let v2 = |n, bits, seed| {
        SparkBloomFilter::create_with_bits(n, bits, SparkVersion::V2, seed).unwrap()
    };
    let mut a = v2(1_000, 9_600, 0);
    let a0 = a.clone();
    let incompatible = [
        SparkBloomFilter::create_with_bits(1_000, 9_600, SparkVersion::V1, 0).unwrap(), // version
        v2(1_000, 9_664, 0),                                                            // bit size
        v2(1_000, 9_600, 1),                                                            // seed
        v2(2_000, 9_600, 0), // k (3 vs 7)
    ];
    for other in &incompatible {
        assert!(!a.is_compatible(other));
        assert!(matches!(
            a.merge_in_place(other),
            Err(Error::Incompatible(_))
        ));
        assert!(matches!(
            a.intersect_in_place(other),
            Err(Error::Incompatible(_))
        ));
        assert_eq!(a, a0, "a refused merge changes nothing");
    }
    assert!(a.is_compatible(&v2(1_000, 9_600, 0)));

    let g = |n, p, s| GuavaBloomFilter::create_with(n, p, s, GuavaSizing::BitsPerKey).unwrap();
    let mut a = g(1_000, 0.01, GuavaStrategy::Murmur128Mitz64);
    let mut fewer_probes = a.to_bytes();
    fewer_probes[1] = 3;
    for other in [
        g(1_000, 0.01, GuavaStrategy::Murmur128Mitz32), // strategy
        g(1_100, 0.01, GuavaStrategy::Murmur128Mitz64), // bit size
        GuavaBloomFilter::from_bytes(&fewer_probes).unwrap(), // k
    ] {
        assert!(!a.is_compatible(&other), "{other:?}");
        assert!(matches!(a.put_all(&other), Err(Error::Incompatible(_))));
    }
}

#[test]
fn seeds_move_the_bits_and_survive_the_bytes() {
    let mut a = SparkBloomFilter::create_with_bits(100, 6_400, SparkVersion::V2, 0).unwrap();
    let mut b = SparkBloomFilter::create_with_bits(100, 6_400, SparkVersion::V2, -123_456).unwrap();
    for i in 0..100i64 {
        a.put_long(i);
        b.put_long(i);
    }
    assert_ne!(a.words(), b.words());
    let back = SparkBloomFilter::from_bytes(&b.to_bytes()).unwrap();
    assert_eq!((back.seed(), &back), (-123_456, &b));
    assert!((0..100i64).all(|i| back.might_contain_long(i)));
}

#[test]
fn the_trait_keys_are_the_jvm_keys() {
    // Spark: bytes are putBinary; i64 keys (little-endian) hash as putLong; str as putString.
    let mut by_trait = SparkBloomFilter::create(1_000, 0.01, SparkVersion::V2).unwrap();
    let mut by_jvm = by_trait.clone();
    for i in -300i64..300 {
        let t: &mut dyn Filter = &mut by_trait;
        t.insert(&i).unwrap();
        t.insert(&format!("k{i}é")).unwrap();
        by_jvm.put_long(i);
        by_jvm.put_string(&format!("k{i}é"));
    }
    assert_eq!(by_trait, by_jvm);
    // Guava: i64 is longFunnel, i32 integerFunnel, str stringFunnel(UTF_8).
    let mut by_trait = GuavaBloomFilter::create(1_000, 0.01).unwrap();
    let mut by_jvm = by_trait.clone();
    for i in -300i64..300 {
        let t: &mut dyn Filter = &mut by_trait;
        t.insert(&i).unwrap();
        t.insert(&(i as i32 * 7)).unwrap();
        t.insert(&format!("k{i}€")).unwrap();
        by_jvm.put_long(i);
        by_jvm.put_int(i as i32 * 7);
        by_jvm.put_string(&format!("k{i}€"));
    }
    assert_eq!(by_trait, by_jvm);
}

#[test]
fn params_name_the_jvm_schemes() {
    let cases: [(Box<dyn Filter>, SchemeId); 4] = [
        (
            Box::new(spark(SparkVersion::V1)(100, 0.01)),
            SchemeId::SparkMurmur3V1,
        ),
        (
            Box::new(spark(SparkVersion::V2)(100, 0.01)),
            SchemeId::SparkMurmur3V2,
        ),
        (
            Box::new(guava(GuavaStrategy::Murmur128Mitz32)(100, 0.01)),
            SchemeId::GuavaMurmur128Mitz32,
        ),
        (
            Box::new(guava(GuavaStrategy::Murmur128Mitz64)(100, 0.01)),
            SchemeId::GuavaMurmur128Mitz64,
        ),
    ];
    for (f, id) in cases {
        let p = f.params();
        assert_eq!(
            (p.variant, p.scheme.id, p.capacity, p.target_fpr),
            (Variant::Classic, id, 100, Some(0.01))
        );
        assert_eq!(p.table_bits, 960); // 958 bits rounded up to 15 words
        assert_eq!(p.hashes, 7);
        assert_eq!(f.size_in_bytes(), 120);
    }
}

#[test]
fn detection_names_every_form() {
    let forms = [
        (spark(SparkVersion::V1)(100, 0.01).to_bytes(), "spark v1"),
        (spark(SparkVersion::V2)(100, 0.01).to_bytes(), "spark v2"),
        (
            guava(GuavaStrategy::Murmur128Mitz64)(100, 0.01).to_bytes(),
            "guava",
        ),
        (
            guava(GuavaStrategy::Murmur128Mitz32)(100, 0.01).to_bytes(),
            "guava MURMUR128_MITZ_32",
        ),
    ];
    for (bytes, name) in forms {
        let f = JvmFilter::from_bytes(&bytes).unwrap();
        assert_eq!(f.format().name(), name);
        assert_eq!(Some(f.format()), JvmFormat::detect(&bytes));
        assert_eq!(f.to_bytes(), bytes);
        assert_eq!((f.bit_size(), f.num_hash_functions()), (960, 7));
        assert!(f.cardinality() == 0 && f.as_filter().expected_fpr() == 0.0);
        // A decoded filter reports the load k is optimal for (the bytes carry no count).
        assert_eq!(f.as_filter().params().capacity, 95);
    }
}

#[test]
fn a_decoded_filter_counts_the_bits_its_keys_set() {
    let mut s = spark(SparkVersion::V2)(100, 0.01);
    let mut g = guava(GuavaStrategy::Murmur128Mitz64)(100, 0.01);
    assert!(s.put_long(42) && g.put_long(42));
    for (bytes, set) in [
        (s.to_bytes(), s.cardinality()),
        (g.to_bytes(), g.cardinality()),
    ] {
        let f = JvmFilter::from_bytes(&bytes).unwrap();
        // One key sets between 1 and k of the 960 bits.
        assert!(
            (1..=u64::from(f.num_hash_functions())).contains(&set),
            "{set}"
        );
        assert_eq!(f.cardinality(), set);
    }
}

#[test]
fn guava_filters_are_equal_exactly_when_their_k_strategy_and_bits_are() {
    let mut a = GuavaBloomFilter::create(1_000, 0.01).unwrap();
    let b = a.clone();
    assert_eq!(a, b);
    a.put_long(42);
    assert_ne!(a, b, "bits differ");
    let mut c = b.clone();
    c.put_long(42);
    assert_eq!(a, c);
    // Same size and k, other strategy.
    let mitz32 = GuavaBloomFilter::create_with(
        1_000,
        0.01,
        GuavaStrategy::Murmur128Mitz32,
        GuavaSizing::BitsPerKey,
    )
    .unwrap();
    let mitz64 = GuavaBloomFilter::create_with(
        1_000,
        0.01,
        GuavaStrategy::Murmur128Mitz64,
        GuavaSizing::BitsPerKey,
    )
    .unwrap();
    assert_ne!(mitz32, mitz64);
}

#[test]
fn sparks_bit_array_holds_up_to_and_including_2_to_the_31_minus_1_words() {
    // Exactly 2^31 − 1 words pass the size check; with one item that many bits need far more
    // than 255 probes, so the size is refused for its `k` (before anything is allocated),
    // not as too large. One bit more is too large.
    let most = u64::from(i32::MAX.unsigned_abs());
    for bits in [64 * most, 64 * most - 63] {
        let err = SparkBloomFilter::create_with_bits(1, bits, SparkVersion::V1, 0).unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidParameter {
                    name: "num_bits",
                    ..
                }
            ),
            "{bits}: {err}"
        );
    }
    let err =
        SparkBloomFilter::create_with_bits(1, 64 * most + 1, SparkVersion::V1, 0).unwrap_err();
    assert!(matches!(err, Error::SizeOverflow(_)), "{err}");
}
