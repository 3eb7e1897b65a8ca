//! The checks the keyed variants' tests share: the shared conformance suite under a secret,
//! and a byte round trip that needs that secret.

// Each test binary that includes this module calls a part of it.
#![allow(dead_code)]

use std::fmt::Debug;

use bloomlab_conformance as conf;
use bloomlab_core::hash::HashScheme;
use bloomlab_core::{DecodeError, Error, Filter};

/// `f` through its bytes under `secret`'s scheme: [`conf::check_bytes_round_trip`]; the bytes
/// never hold the secret; the filter records the scheme; and the readers of two other secrets
/// (all zeros, and every byte of `secret` plus one) refuse the bytes as another scheme's.
/// Returns the bytes.
pub fn check_secret_round_trip<F, S>(
    f: &F,
    to_bytes: impl Fn(&F) -> Vec<u8>,
    from_bytes: impl Fn(&[u8], S) -> Result<F, Error>,
    from_secret: impl Fn([u8; 16]) -> S,
    secret: [u8; 16],
) -> Vec<u8>
where
    F: Filter + PartialEq + Debug,
    S: HashScheme,
{
    conf::check_bytes_round_trip(f, &to_bytes, |b| from_bytes(b, from_secret(secret)));
    let bytes = to_bytes(f);
    assert!(
        !bytes.windows(16).any(|w| w == secret),
        "the secret must never be serialized"
    );
    assert_eq!(f.params().scheme, from_secret(secret).descriptor());
    for wrong in [[0u8; 16], secret.map(|b| b.wrapping_add(1))] {
        assert!(matches!(
            from_bytes(&bytes, from_secret(wrong)),
            Err(Error::Decode(DecodeError::SchemeMismatch { .. }))
        ));
    }
    bytes
}

/// [`conf::check_standard_suite`] of `make` under `secret`'s scheme (one seed of `seeds` per
/// target), then a filter of 5 000 keys (`0..5_000u32`) through
/// [`check_secret_round_trip`]. Returns the filter and its bytes.
pub fn check_keyed_suite<F, S>(
    make: impl Fn(u64, f64, S) -> Result<F, Error> + Copy,
    to_bytes: impl Fn(&F) -> Vec<u8>,
    from_bytes: impl Fn(&[u8], S) -> Result<F, Error>,
    from_secret: impl Fn([u8; 16]) -> S + Copy,
    secret: [u8; 16],
    seeds: [u64; 3],
) -> (F, Vec<u8>)
where
    F: Filter + PartialEq + Debug,
    S: HashScheme,
{
    conf::check_standard_suite(|n, p| make(n, p, from_secret(secret)), seeds);
    let mut f = make(5_000, 0.01, from_secret(secret)).unwrap();
    conf::insert_all(&mut f, 0..5_000u32);
    let bytes = check_secret_round_trip(&f, to_bytes, from_bytes, from_secret, secret);
    (f, bytes)
}
