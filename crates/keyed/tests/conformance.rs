//! The keyed classic filter through the shared conformance suite, plus key handling.

use bloomlab_classic::BloomFilter;
use bloomlab_conformance as conf;
use bloomlab_core::{DecodeError, Error, Filter};
use bloomlab_keyed::{KeyedBloomFilter, SipScheme};

mod common;

const SECRET: [u8; 16] = [0x5a; 16];

fn scheme() -> SipScheme {
    SipScheme::from_secret(SECRET)
}

fn make(n: u64, p: f64) -> Result<KeyedBloomFilter<SipScheme>, Error> {
    BloomFilter::with_fpr_and_scheme(n, p, scheme())
}

#[test]
fn the_shared_suite_and_bytes_that_round_trip_only_with_the_right_secret() {
    let (_, bytes) = common::check_keyed_suite(
        BloomFilter::with_fpr_and_scheme,
        BloomFilter::to_bytes,
        BloomFilter::from_bytes_with_scheme,
        SipScheme::from_secret,
        SECRET,
        [31, 32, 33],
    );
    assert!(matches!(
        BloomFilter::from_bytes(&bytes),
        Err(Error::Decode(DecodeError::SchemeMismatch { .. }))
    ));
    let decode = |b: &[u8]| BloomFilter::from_bytes_with_scheme(b, scheme());
    conf::check_decode_robustness(
        &bytes,
        decode,
        |g| g.to_bytes(),
        |g| assert!(g.bit_array().count_ones() <= g.len().saturating_mul(g.hashes().into())),
        true,
        3_000,
        3,
    );
}

#[test]
fn keyed_and_unkeyed_never_union() {
    let mut a = make(1_000, 0.01).unwrap();
    let b: KeyedBloomFilter<SipScheme> =
        BloomFilter::with_fpr_and_scheme(1_000, 0.01, SipScheme::from_secret([1; 16])).unwrap();
    assert!(matches!(a.union(&b), Err(Error::Incompatible(_))));
    // Same secret: allowed and exact.
    let mut c = make(1_000, 0.01).unwrap();
    c.insert("x");
    a.union(&c).unwrap();
    assert!(a.might_contain("x"));
    // An unkeyed filter's bytes are refused by a keyed reader too.
    let plain = BloomFilter::with_fpr(1_000, 0.01).unwrap();
    assert!(BloomFilter::from_bytes_with_scheme(&plain.to_bytes(), scheme()).is_err());
}

#[test]
fn keyed_filter_is_a_filter() {
    let mut boxed: Box<dyn Filter> = Box::new(make(100, 0.01).unwrap());
    boxed.insert("k").unwrap();
    assert!(boxed.might_contain("k"));
    assert_eq!(boxed.params().scheme.key_check, scheme().key_check());
}
