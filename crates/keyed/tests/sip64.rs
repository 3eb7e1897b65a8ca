//! Scheme id 4 (`Sip64Scheme`): known answers, the remix's bijectivity, and every variant that
//! takes a scheme through the shared conformance checks with it; stored id-2 filters keep
//! opening only with `SipScheme`.

use bloomlab_blocked::BlockedBloomFilter;
use bloomlab_classic::BloomFilter;
use bloomlab_conformance as conf;
use bloomlab_core::hash::{HashScheme, KeyHash, SchemeId};
use bloomlab_core::{DecodeError, Error, Filter};
use bloomlab_counting::CountingBloomFilter;
use bloomlab_cuckoo::CuckooFilter;
use bloomlab_keyed::{KeyedBloomFilter, REMIX_MULTIPLIER, Sip64Scheme, SipScheme, remix};
use bloomlab_scalable::{ScalableBloomFilter, ScalableConfig};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

mod common;

const SECRET: [u8; 16] = *b"scheme id four!!";

fn scheme() -> Sip64Scheme {
    Sip64Scheme::from_secret(SECRET)
}

// ------------------------------------------------------------------ the scheme itself

#[test]
fn sip64_is_siphash_2_4_with_the_papers_key_order() {
    // SipHash-2-4 64-bit test vectors (Aumasson & Bernstein 2012, appendix A, and the
    // reference implementation's vectors.h): key 00 01 … 0f, message 00 01 … (len − 1).
    let key: [u8; 16] = std::array::from_fn(|i| i as u8);
    let s = Sip64Scheme::from_secret(key);
    let msg: Vec<u8> = (0..15).collect();
    assert_eq!(s.sip64(&msg), 0xa129_ca61_49be_45e5);
    // Length 8 takes the `write_u64` path; the reference output bytes are
    // 62 24 93 9a 79 f5 f5 93, read little-endian.
    assert_eq!(s.sip64(&msg[..8]), 0x93f5_f579_9a93_2462);
    assert_eq!(s.sip64(&[]), 0x726f_db47_dd0e_0e31);
}

#[test]
fn the_eight_byte_path_equals_the_general_one() {
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let s = scheme();
    let k0 = u64::from_le_bytes(SECRET[..8].try_into().unwrap());
    let k1 = u64::from_le_bytes(SECRET[8..].try_into().unwrap());
    let reference = siphasher::sip::SipHasher24::new_with_keys(k0, k1);
    for len in 0..=40usize {
        for _ in 0..200 {
            let msg: Vec<u8> = (0..len).map(|_| rng.random()).collect();
            assert_eq!(s.sip64(&msg), reference.hash(&msg), "len {len}");
        }
    }
    // Integer keys are 8 little-endian bytes.
    assert_eq!(s.hash(&42u64.to_le_bytes()), {
        let x = reference.hash(&42u64.to_le_bytes());
        KeyHash::new(x, remix(x))
    });
}

#[test]
fn scheme_four_output_is_frozen() {
    // Filters stored with id 4 depend on these exact values; they may never change.
    let s = scheme();
    let got: Vec<(u64, u64)> = [&b""[..], b"user:42", &7u64.to_le_bytes()]
        .iter()
        .map(|k| {
            let h = s.hash(k);
            (h.h1, h.h2)
        })
        .collect();
    let want = [
        (0xea6b_4d5f_963a_6cff, 0x2e51_0f2a_840f_bc33),
        (0x1834_cd46_e254_a14f, 0xb4f4_1f52_3837_6043),
        (0x45ad_734a_7a1d_f36e, 0x8217_f71c_d4a2_1717),
    ];
    assert_eq!(got, want, "{got:x?}");
    assert_eq!(s.key_check(), 0x42a4_4f0a_0a61_5679);
    assert_eq!(s.descriptor().id, SchemeId::SipHash24x64Km);
    assert_eq!(SchemeId::SipHash24x64Km as u8, 4);
}

/// Inverse of `x ↦ x · c mod 2^64` for odd `c` (Newton's iteration doubles the correct bits).
fn inverse(c: u64) -> u64 {
    let mut y = c; // correct to 3 bits for odd c
    for _ in 0..5 {
        y = y.wrapping_mul(2u64.wrapping_sub(c.wrapping_mul(y)));
    }
    y
}

#[test]
fn remix_is_a_bijection() {
    let inv = inverse(REMIX_MULTIPLIER);
    assert_eq!(REMIX_MULTIPLIER.wrapping_mul(inv), 1);
    let mut rng = ChaCha8Rng::seed_from_u64(44);
    for x in [0, 1, u64::MAX, 1 << 63]
        .into_iter()
        .chain((0..100_000).map(|_| rng.random::<u64>()))
    {
        assert_eq!(remix(x).wrapping_mul(inv), x);
    }
}

/// Chi-square of the 16×16 table of (a 4-bit field of h1, a 4-bit field of h2) over 2^20
/// integer keys: uniform (and so independent) within 5σ (255 degrees of freedom: mean 255,
/// σ = √510).
fn chi_square(field1: impl Fn(u64) -> u64, field2: impl Fn(u64) -> u64) -> f64 {
    let s = scheme();
    let mut table = [[0u64; 16]; 16];
    let n = 1u64 << 20;
    for i in 0..n {
        let h = s.hash(&i.to_le_bytes());
        table[field1(h.h1) as usize][field2(h.h2) as usize] += 1;
    }
    let e = n as f64 / 256.0;
    table
        .iter()
        .flatten()
        .map(|&c| (c as f64 - e).powi(2) / e)
        .sum()
}

#[test]
fn what_filters_read_from_h1_and_h2_is_independent() {
    // h1's top bits choose the first probe, the block and the bucket; filters read h2's top
    // bits (stride, in-block bits, fingerprint) or its halves.
    let top = |x: u64| x >> 60;
    for (name, f2) in [
        ("h2 top", &(|x: u64| x >> 60) as &dyn Fn(u64) -> u64),
        ("h2 bits 32..36", &|x: u64| (x >> 32) & 15),
        ("h2 bits 28..32", &|x: u64| (x >> 28) & 15),
        ("h2 bits 1..5", &|x: u64| (x >> 1) & 15),
    ] {
        let chi2 = chi_square(top, f2);
        println!("h1 top vs {name}: chi2 {chi2:.1}");
        assert!(
            (chi2 - 255.0).abs() < conf::Z_BOUND * 510f64.sqrt(),
            "{name}: {chi2}"
        );
    }
}

#[test]
fn secrets_and_schemes_never_mix() {
    let (a, b) = (
        Sip64Scheme::from_secret([1; 16]),
        Sip64Scheme::from_secret([2; 16]),
    );
    assert_ne!(a.hash(b"x"), b.hash(b"x"));
    assert_ne!(a.key_check(), b.key_check());
    assert_ne!(a.key_check(), 0);
    assert_eq!(a, Sip64Scheme::from_secret([1; 16]));
    // The same secret under the two keyed schemes: other positions, other descriptors.
    let old = SipScheme::from_secret([1; 16]);
    assert_ne!(a.hash(b"x"), old.hash(b"x"));
    assert_ne!(a.descriptor(), old.descriptor());
    // The key check is not the probe value of its own constant.
    assert_ne!(a.key_check(), a.sip64(bloomlab_keyed::KEY_CHECK_INPUT));
    let dbg = format!("{:?}", Sip64Scheme::from_secret([0xab; 16]));
    assert!(!dbg.contains("abab") && !dbg.contains("171"), "{dbg}");
    assert_ne!(
        Sip64Scheme::random().unwrap(),
        Sip64Scheme::random().unwrap()
    );
}

#[test]
fn stored_id_2_filters_open_only_with_sip_scheme_and_answer_as_before() {
    let mut old: KeyedBloomFilter<SipScheme> =
        BloomFilter::with_fpr_and_scheme(5_000, 0.01, SipScheme::from_secret(SECRET)).unwrap();
    (0..5_000u32).for_each(|i| {
        old.insert(&i);
    });
    let bytes = old.to_bytes();
    let back = BloomFilter::from_bytes_with_scheme(&bytes, SipScheme::from_secret(SECRET)).unwrap();
    assert_eq!(back, old);
    assert!((0..100_000u32).all(|i| back.might_contain(&i) == old.might_contain(&i)));
    assert!(matches!(
        BloomFilter::from_bytes_with_scheme(&bytes, scheme()),
        Err(Error::Decode(DecodeError::SchemeMismatch { .. }))
    ));
    // And the other way round.
    let new = BloomFilter::with_fpr_and_scheme(5_000, 0.01, scheme()).unwrap();
    assert!(matches!(
        BloomFilter::from_bytes_with_scheme(&new.to_bytes(), SipScheme::from_secret(SECRET)),
        Err(Error::Decode(DecodeError::SchemeMismatch { .. }))
    ));
}

// ------------------------------------------------------------------ every variant, keyed

/// The checks every variant shares: no false negatives for any key shape, FPR within 5σ of
/// its formula at three targets, typed errors for bad parameters, and a byte round trip that
/// needs the right secret.
fn conformance<F>(
    make: impl Fn(u64, f64, Sip64Scheme) -> Result<F, Error> + Copy,
    to_bytes: impl Fn(&F) -> Vec<u8> + Copy,
    from_bytes: impl Fn(&[u8], Sip64Scheme) -> Result<F, Error> + Copy,
    seed: u64,
) where
    F: Filter + PartialEq + std::fmt::Debug,
{
    conf::check_standard_suite(|n, p| make(n, p, scheme()), [seed, seed + 1, seed + 2]);
    let f = filled(make, 5_000, seed);
    common::check_secret_round_trip(&f, to_bytes, from_bytes, Sip64Scheme::from_secret, SECRET);
}

/// [`conformance`] of the variant `F`: its keyed constructor, writer and reader.
macro_rules! conformance_of {
    ($F:ident, $seed:expr) => {
        conformance(
            $F::with_fpr_and_scheme,
            $F::to_bytes,
            $F::from_bytes_with_scheme,
            $seed,
        )
    };
}

/// A filter of `make` under the scheme, at 1 %, holding `n` keys of seed `seed`
/// ([`conf::filled`]).
fn filled<F: Filter>(
    make: impl Fn(u64, f64, Sip64Scheme) -> Result<F, Error>,
    n: u64,
    seed: u64,
) -> F {
    conf::filled(make(n, 0.01, scheme()).unwrap(), n, seed)
}

#[test]
fn classic_conformance() {
    conformance_of!(BloomFilter, 410);
    let f = filled(BloomFilter::with_fpr_and_scheme, 3_000, 9);
    let bytes = f.to_bytes();
    conf::check_decode_robustness(
        &bytes,
        |b| BloomFilter::from_bytes_with_scheme(b, scheme()),
        BloomFilter::to_bytes,
        |g| assert!(g.bit_array().count_ones() <= g.len().saturating_mul(g.hashes().into())),
        true,
        3_000,
        4,
    );
    conf::check_k_is_locally_optimal(
        |k| BloomFilter::with_bits_and_scheme(958_506, k, scheme()).unwrap(),
        7,
        100_000,
        1_000_000,
        411,
    );
}

#[test]
fn blocked_conformance_and_the_keyed_batched_path() {
    conformance_of!(BlockedBloomFilter, 420);
    // The batched lookup (hash ahead, prefetch) answers exactly as single lookups do.
    let f = filled(BlockedBloomFilter::with_fpr_and_scheme, 50_000, 421);
    let mut rng = ChaCha8Rng::seed_from_u64(422);
    let keys: Vec<u64> = (0..100_000).map(|_| rng.random()).collect();
    let mut out = vec![false; keys.len()];
    f.might_contain_batch(&keys, &mut out).unwrap();
    assert!(keys.iter().zip(&out).all(|(k, &o)| f.might_contain(k) == o));
    let mut g = BlockedBloomFilter::with_fpr_and_scheme(100_000, 0.01, scheme()).unwrap();
    g.insert_batch(&keys);
    assert!(keys.iter().all(|k| g.might_contain(k)));
}

#[test]
fn counting_conformance() {
    conformance_of!(CountingBloomFilter, 430);
    // Removal works under the keyed scheme too.
    let mut f = CountingBloomFilter::with_fpr_and_scheme(1_000, 0.01, scheme()).unwrap();
    f.insert("gone");
    assert!(f.remove("gone"));
    assert!(!f.might_contain("gone"));
}

#[test]
fn cuckoo_conformance() {
    conformance_of!(CuckooFilter, 440);
}

#[test]
fn scalable_conformance_after_100x_growth() {
    let make = |n: u64, p: f64, s: Sip64Scheme| {
        ScalableBloomFilter::with_config_and_scheme(ScalableConfig::new(n / 100, p), s)
    };
    conf::check_no_false_negatives(|n| make(n, 0.01, scheme()).unwrap(), 100_000);
    for (p, seed) in [(0.001, 450), (0.01, 451), (0.03, 452)] {
        let r = conf::check_fpr(
            |n, p| make(n, p, scheme()).unwrap(),
            100_000,
            p,
            1_000_000,
            seed,
        );
        // The scalable guarantee: the formula is below the target and the measured count is
        // not significantly above it (one-sided 5σ).
        assert!(r.expected <= p, "{r:?}");
        r.check_at_or_below_target();
        println!("{r:?}");
    }
    let f = filled(make, 40_000, 453);
    common::check_secret_round_trip(
        &f,
        ScalableBloomFilter::to_bytes,
        ScalableBloomFilter::from_bytes_with_scheme,
        Sip64Scheme::from_secret,
        SECRET,
    );
}
