//! The keyed blocked filter through the shared conformance suite: the same blocked logic,
//! another hash scheme.

use bloomlab_blocked::BlockedBloomFilter;
use bloomlab_core::Error;
use bloomlab_keyed::{KeyedBlockedBloomFilter, SipScheme};

mod common;

const SECRET: [u8; 16] = *b"blocked secret!!";

fn make(n: u64, p: f64) -> Result<KeyedBlockedBloomFilter<SipScheme>, Error> {
    BlockedBloomFilter::with_fpr_and_scheme(n, p, SipScheme::from_secret(SECRET))
}

#[test]
fn the_shared_suite_and_bytes_that_need_the_right_secret() {
    let (_, bytes) = common::check_keyed_suite(
        BlockedBloomFilter::with_fpr_and_scheme,
        BlockedBloomFilter::to_bytes,
        BlockedBloomFilter::from_bytes_with_scheme,
        SipScheme::from_secret,
        SECRET,
        [41, 42, 43],
    );
    // Never mixed with unkeyed filters.
    assert!(BlockedBloomFilter::from_bytes(&bytes).is_err());
    // Same geometry, another secret: a union would be meaningless and is refused.
    let mut keyed = make(5_000, 0.01).unwrap();
    let other =
        BlockedBloomFilter::with_fpr_and_scheme(5_000, 0.01, SipScheme::from_secret([1; 16]))
            .unwrap();
    assert!(matches!(keyed.union(&other), Err(Error::Incompatible(_))));
}
