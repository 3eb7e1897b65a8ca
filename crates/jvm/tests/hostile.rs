//! Hostile bytes: every decoder refuses what the JVM could not have written with a typed
//! error, never panics, never accepts a non-canonical or invalid filter, and never allocates
//! or works beyond what the input justifies.

use std::io::Read;

use bloomlab_conformance as conf;
use bloomlab_core::{DecodeError, Error, Filter};
use bloomlab_jvm::{
    GuavaBloomFilter, GuavaSizing, GuavaStrategy, JvmFilter, MAX_SPARK_HASH_FUNCTIONS, ReadError,
    SparkBloomFilter, SparkVersion,
};

fn spark(version: SparkVersion) -> SparkBloomFilter {
    conf::filled(
        SparkBloomFilter::create(200, 0.05, version).unwrap(),
        100,
        3,
    )
}

fn guava(strategy: GuavaStrategy) -> GuavaBloomFilter {
    conf::filled(
        GuavaBloomFilter::create_with(200, 0.05, strategy, GuavaSizing::BitsPerKey).unwrap(),
        100,
        4,
    )
}

fn spark_invariants(f: &SparkBloomFilter) {
    assert!((1..=MAX_SPARK_HASH_FUNCTIONS).contains(&f.num_hash_functions()));
    assert!(f.bit_size() >= 64 && f.bit_size().is_multiple_of(64));
    let ones: u64 = f.words().iter().map(|w| u64::from(w.count_ones())).sum();
    assert_eq!(f.cardinality(), ones);
    if f.version() == SparkVersion::V1 {
        assert_eq!(f.seed(), 0, "V1 has no seed");
    }
}

fn guava_invariants(f: &GuavaBloomFilter) {
    assert!((1..=255).contains(&f.num_hash_functions()));
    assert!(f.bit_size() >= 64 && f.bit_size().is_multiple_of(64));
    let ones: u64 = f.words().iter().map(|w| u64::from(w.count_ones())).sum();
    assert_eq!(f.cardinality(), ones);
}

/// Read through `read_from`, which must agree with `from_bytes` on every input: the same
/// filter, or an error of the same kind (a stream leaves trailing bytes unread).
fn stream_agrees<F: PartialEq + std::fmt::Debug>(
    bytes: &[u8],
    from_bytes: impl Fn(&[u8]) -> Result<F, DecodeError>,
    read_from: impl Fn(&mut &[u8]) -> Result<F, ReadError>,
) {
    let mut r = bytes;
    match (from_bytes(bytes), read_from(&mut r)) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b);
            assert!(r.is_empty());
        }
        (Err(DecodeError::TrailingBytes(n)), Ok(_)) => assert_eq!(r.len(), n),
        (Err(_), Err(ReadError::Decode(_))) => {}
        (a, b) => panic!("from_bytes {a:?} but read_from {b:?}"),
    }
}

/// [`conf::check_decode_robustness`] of each named encoding of one JVM format (no envelope),
/// 20 000 rounds each from seeds `seed`, `seed + 1`, …: every damaged input the decoder
/// accepts is canonical and valid.
fn check_damaged<F>(valid: &[(String, Vec<u8>)], codec: Codec<F>, invariants: fn(&F), seed: u64) {
    let (from_bytes, to_bytes) = codec;
    let decode = |b: &[u8]| from_bytes(b).map_err(Error::from);
    for ((name, bytes), seed) in valid.iter().zip(seed..) {
        let accepted =
            conf::check_decode_robustness(bytes, decode, to_bytes, invariants, false, 20_000, seed);
        println!("{name}: accepted {accepted} damaged inputs, each canonical and valid");
    }
}

/// A JVM filter's `from_bytes` and `to_bytes`.
type Codec<F> = (fn(&[u8]) -> Result<F, DecodeError>, fn(&F) -> Vec<u8>);

#[test]
fn damaged_spark_bytes_never_panic_or_decode_invalid_filters() {
    let versions = [SparkVersion::V1, SparkVersion::V2];
    let valid = versions.map(|v| (v.to_string(), spark(v).to_bytes()));
    let codec: Codec<_> = (SparkBloomFilter::from_bytes, SparkBloomFilter::to_bytes);
    check_damaged(&valid, codec, spark_invariants, 10);
}

#[test]
fn damaged_guava_bytes_never_panic_or_decode_invalid_filters() {
    let strategies = [
        GuavaStrategy::Murmur128Mitz32,
        GuavaStrategy::Murmur128Mitz64,
    ];
    let valid = strategies.map(|s| (format!("{s:?}"), guava(s).to_bytes()));
    let codec: Codec<_> = (GuavaBloomFilter::from_bytes, GuavaBloomFilter::to_bytes);
    check_damaged(&valid, codec, guava_invariants, 20);
}

#[test]
fn streams_and_slices_decode_alike() {
    let inputs: Vec<Vec<u8>> = [
        spark(SparkVersion::V1).to_bytes(),
        spark(SparkVersion::V2).to_bytes(),
        guava(GuavaStrategy::Murmur128Mitz64).to_bytes(),
    ]
    .into_iter()
    .flat_map(|b| {
        let mut out = vec![b.clone()];
        for cut in [0, 1, 3, 4, 7, 8, 11, 12, 15, 16, b.len() - 1] {
            out.push(b[..cut].to_vec());
        }
        let mut long = b.clone();
        long.extend_from_slice(&[1, 2, 3]);
        out.push(long);
        out
    })
    .collect();
    for b in &inputs {
        stream_agrees(b, SparkBloomFilter::from_bytes, |r| {
            SparkBloomFilter::read_from(r)
        });
        stream_agrees(b, GuavaBloomFilter::from_bytes, |r| {
            GuavaBloomFilter::read_from(r)
        });
    }
}

fn spark_header(version: i32, k: i32, seed: Option<i32>, words: i32) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&version.to_be_bytes());
    b.extend_from_slice(&k.to_be_bytes());
    if let Some(s) = seed {
        b.extend_from_slice(&s.to_be_bytes());
    }
    b.extend_from_slice(&words.to_be_bytes());
    b
}

fn with_words(mut header: Vec<u8>, words: usize) -> Vec<u8> {
    header.extend(std::iter::repeat_n(0xa5u8, words * 8));
    header
}

#[test]
fn spark_fields_a_jvm_could_not_have_written_are_refused() {
    let ok = with_words(spark_header(1, 3, None, 2), 2);
    assert!(SparkBloomFilter::from_bytes(&ok).is_ok());
    // Versions.
    for v in [0, 3, -1, 0x100, i32::MAX, i32::MIN] {
        let mut b = ok.clone();
        b[..4].copy_from_slice(&v.to_be_bytes());
        let e = SparkBloomFilter::from_bytes(&b).unwrap_err();
        assert!(
            matches!(
                e,
                DecodeError::UnsupportedVersion(_) | DecodeError::InvalidField { .. }
            ),
            "version {v}: {e:?}"
        );
    }
    // k = 0, negative, absurd; the bound itself is accepted.
    for (k, good) in [
        (0, false),
        (-1, false),
        (i32::MIN, false),
        (MAX_SPARK_HASH_FUNCTIONS as i32 + 1, false),
        (i32::MAX, false),
        (MAX_SPARK_HASH_FUNCTIONS as i32, true),
        (1, true),
    ] {
        for v2 in [false, true] {
            let b = with_words(
                spark_header(if v2 { 2 } else { 1 }, k, v2.then_some(7), 1),
                1,
            );
            let r = SparkBloomFilter::from_bytes(&b);
            assert_eq!(r.is_ok(), good, "k {k}: {r:?}");
            if !good {
                assert!(matches!(
                    r,
                    Err(DecodeError::InvalidField {
                        field: "numHashFunctions",
                        ..
                    })
                ));
            }
        }
    }
    // Word counts: zero, negative, more than the bytes hold (refused before allocating).
    for words in [0, -1, i32::MIN] {
        let b = with_words(spark_header(2, 3, Some(0), words), 1);
        assert!(matches!(
            SparkBloomFilter::from_bytes(&b),
            Err(DecodeError::InvalidField {
                field: "numWords",
                ..
            })
        ));
    }
    for words in [2, 1000, i32::MAX] {
        let b = with_words(spark_header(2, 3, Some(0), words), 1);
        assert!(matches!(
            SparkBloomFilter::from_bytes(&b),
            Err(DecodeError::Truncated { .. })
        ));
    }
    // Trailing bytes.
    let mut b = ok.clone();
    b.push(0);
    assert_eq!(
        SparkBloomFilter::from_bytes(&b),
        Err(DecodeError::TrailingBytes(1))
    );
}

#[test]
fn guava_fields_a_jvm_could_not_have_written_are_refused() {
    let ok = {
        let mut b = vec![1u8, 4];
        b.extend_from_slice(&2i32.to_be_bytes());
        with_words(b, 2)
    };
    assert!(GuavaBloomFilter::from_bytes(&ok).is_ok());
    for ordinal in [2u8, 0x7f, 0x80, 0xff] {
        let mut b = ok.clone();
        b[0] = ordinal;
        assert!(matches!(
            GuavaBloomFilter::from_bytes(&b),
            Err(DecodeError::InvalidField {
                field: "strategyOrdinal",
                ..
            })
        ));
    }
    let mut b = ok.clone();
    b[1] = 0;
    assert!(matches!(
        GuavaBloomFilter::from_bytes(&b),
        Err(DecodeError::InvalidField {
            field: "numHashFunctions",
            ..
        })
    ));
    b[1] = 255; // Guava's largest k is accepted
    assert!(GuavaBloomFilter::from_bytes(&b).is_ok());
    for (words, want_truncated) in [(0, false), (-5, false), (3, true), (i32::MAX, true)] {
        let mut b = ok.clone();
        b[2..6].copy_from_slice(&words.to_be_bytes());
        let r = GuavaBloomFilter::from_bytes(&b);
        assert_eq!(
            matches!(r, Err(DecodeError::Truncated { .. })),
            want_truncated,
            "{words}: {r:?}"
        );
        assert!(r.is_err());
    }
}

#[test]
fn detection_refuses_other_bytes() {
    for b in [
        &b""[..],
        b"\0",
        b"PAR1",
        b"BLAB\x01\x00",
        &[0, 0, 0, 3, 0, 0, 0, 1],
        &[2, 5, 0, 0],
    ] {
        assert!(JvmFilter::from_bytes(b).is_err(), "{b:?}");
    }
}

/// A stream announcing 2^31 − 1 words (16 GiB) but holding a few hundred bytes fails as
/// truncated; how much it allocated is measured in `tests/allocation.rs`.
#[test]
fn a_short_stream_with_a_huge_word_count_is_truncated() {
    let mut b = spark_header(2, 3, Some(0), i32::MAX);
    b.extend(std::iter::repeat_n(0u8, 800));
    let r = SparkBloomFilter::read_from(&mut b.as_slice());
    // The bytes still missing, 8 per announced word, are counted without overflow on every
    // pointer width: 2^34 − 8 where `usize` has 64 bits, saturated to usize::MAX where it has
    // 32 (the first chunk fails, before any word is kept).
    let announced = usize::try_from(8 * i32::MAX as u64).unwrap_or(usize::MAX);
    assert!(
        matches!(
            r,
            Err(ReadError::Decode(DecodeError::Truncated { needed, .. })) if needed == announced
        ),
        "{r:?}"
    );
    // An I/O failure is reported as such.
    struct Broken;
    impl Read for Broken {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk on fire"))
        }
    }
    assert!(matches!(
        GuavaBloomFilter::read_from(&mut Broken),
        Err(ReadError::Io(_))
    ));
}

/// A decoded filter with the largest `k` answers a query in at most `k` probes: bounded work.
#[test]
fn the_largest_k_is_still_cheap_to_query() {
    let b = {
        let mut h = spark_header(2, MAX_SPARK_HASH_FUNCTIONS as i32, Some(0), 1);
        h.extend_from_slice(&[0xff; 8]);
        h
    };
    let f = SparkBloomFilter::from_bytes(&b).unwrap();
    // Every bit set: each query runs all k probes; a thousand queries are 6.5·10^7 steps.
    assert!((0..1000i64).all(|i| f.might_contain_long(i)));
    assert_eq!(
        f.len(),
        u64::MAX,
        "a full filter's estimated count saturates"
    );
    assert_eq!(f.expected_fpr(), 1.0);
}

#[test]
fn invalid_parameters_are_typed_errors() {
    conf::check_invalid_parameters(|n, p| SparkBloomFilter::create(n, p, SparkVersion::V1));
    conf::check_invalid_parameters(|n, p| SparkBloomFilter::create(n, p, SparkVersion::V2));
    // Guava takes n = 0 as 1, as Guava does; the rest as for any filter.
    assert_eq!(
        GuavaBloomFilter::create(0, 0.01).unwrap(),
        GuavaBloomFilter::create(1, 0.01).unwrap()
    );
    for p in [0.0, 1.0, -0.01, 1.5, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            GuavaBloomFilter::create(1000, p),
            Err(Error::InvalidFpr(_))
        ));
    }
    for (n, p) in [(u64::MAX, 1e-9), (u64::MAX / 2, 0.5), (1 << 62, 1e-300)] {
        assert!(matches!(
            GuavaBloomFilter::create(n, p),
            Err(Error::SizeOverflow(_))
        ));
    }
    // k above what the formats allow: Guava's byte, Spark's bound.
    assert!(matches!(
        GuavaBloomFilter::create(1, 1e-300),
        Err(Error::InvalidParameter { .. })
    ));
    assert!(matches!(
        SparkBloomFilter::create_with_bits(1, 1 << 20, SparkVersion::V2, 0),
        Err(Error::InvalidParameter {
            name: "num_bits",
            ..
        })
    ));
    // No bits at all (p near 1 for one item), and a seed for V1.
    assert!(SparkBloomFilter::create(1, 0.99, SparkVersion::V2).is_err());
    assert!(GuavaBloomFilter::create(1, 0.99).is_err());
    assert!(SparkBloomFilter::create_with_bits(10, 640, SparkVersion::V1, 5).is_err());
    assert!(SparkBloomFilter::create_with_bits(10, 0, SparkVersion::V2, 5).is_err());
}
