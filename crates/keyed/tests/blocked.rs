//! The keyed blocked filter through the shared conformance suite: the same blocked logic,
//! another hash scheme.

use bloomlab_blocked::BlockedBloomFilter;
use bloomlab_conformance as conf;
use bloomlab_core::{DecodeError, Error};
use bloomlab_keyed::{KeyedBlockedBloomFilter, SipScheme};

const SECRET: [u8; 16] = *b"blocked secret!!";

fn make(n: u64, p: f64) -> Result<KeyedBlockedBloomFilter<SipScheme>, Error> {
    BlockedBloomFilter::with_fpr_and_scheme(n, p, SipScheme::from_secret(SECRET))
}

#[test]
fn the_shared_suite() {
    conf::check_standard_suite(make, [41, 42, 43]);
}

#[test]
fn bytes_need_the_right_secret_and_never_mix_with_unkeyed() {
    let mut f = make(5_000, 0.01).unwrap();
    for i in 0..5_000u32 {
        f.insert(&i);
    }
    let decode =
        |b: &[u8]| BlockedBloomFilter::from_bytes_with_scheme(b, SipScheme::from_secret(SECRET));
    conf::check_bytes_round_trip(&f, |g| g.to_bytes(), decode);
    let bytes = f.to_bytes();
    assert!(!bytes.windows(16).any(|w| w == SECRET));
    assert!(matches!(
        BlockedBloomFilter::from_bytes_with_scheme(&bytes, SipScheme::from_secret([0; 16])),
        Err(Error::Decode(DecodeError::SchemeMismatch { .. }))
    ));
    assert!(BlockedBloomFilter::from_bytes(&bytes).is_err());
    // Same geometry, another secret: a union would be meaningless and is refused.
    let mut keyed = make(5_000, 0.01).unwrap();
    let other =
        BlockedBloomFilter::with_fpr_and_scheme(5_000, 0.01, SipScheme::from_secret([1; 16]))
            .unwrap();
    assert!(matches!(keyed.union(&other), Err(Error::Incompatible(_))));
}
