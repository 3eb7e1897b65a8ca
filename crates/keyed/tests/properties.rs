//! Keyed filters' promises for arbitrary keys and bytes: the classic and blocked filters
//! under a secret (generic halves in `bloomlab_conformance::props`; `PROPTEST_CASES` sets
//! the case count). Decoding checks the key check value as well as the format, so bytes
//! under another secret or scheme are refused.

use bloomlab_classic::BloomFilter;
use bloomlab_conformance::props::proptest::prelude::*;
use bloomlab_conformance::{counting_allocator, props, variant_properties};
use bloomlab_keyed::{KeyedBlockedBloomFilter, KeyedBloomFilter, Sip64Scheme};

counting_allocator!();

fn scheme() -> Sip64Scheme {
    Sip64Scheme::from_secret(*b"property secret!")
}

fn classic(keys: &[Vec<u8>]) -> KeyedBloomFilter {
    props::with_keys(
        BloomFilter::with_fpr_and_scheme(keys.len() as u64 + 1, 0.01, scheme()).unwrap(),
        keys,
    )
}

fn blocked(keys: &[Vec<u8>]) -> KeyedBlockedBloomFilter {
    let f = KeyedBlockedBloomFilter::with_fpr_and_scheme(keys.len() as u64 + 1, 0.01, scheme())
        .unwrap();
    props::with_keys(f, keys)
}

fn decode_classic(b: &[u8]) -> Result<KeyedBloomFilter, bloomlab_core::Error> {
    BloomFilter::from_bytes_with_scheme(b, scheme())
}

fn decode_blocked(b: &[u8]) -> Result<KeyedBlockedBloomFilter, bloomlab_core::Error> {
    KeyedBlockedBloomFilter::from_bytes_with_scheme(b, scheme())
}

fn decoders_are_total(input: &[u8]) -> Result<(), TestCaseError> {
    props::decode_is_total(GLOBAL, input, decode_classic, KeyedBloomFilter::to_bytes)?;
    props::decode_is_total(
        GLOBAL,
        input,
        decode_blocked,
        KeyedBlockedBloomFilter::to_bytes,
    )?;
    Ok(())
}

type Both = (KeyedBloomFilter, KeyedBlockedBloomFilter);

fn build(keys: &[Vec<u8>]) -> Both {
    (classic(keys), blocked(keys))
}

/// No false negatives and round trips for both; another secret refuses both.
fn check((c, b): &Both, keys: &[Vec<u8>], probes: &[Vec<u8>]) -> Result<(), TestCaseError> {
    props::no_false_negatives(c, keys)?;
    props::no_false_negatives(b, keys)?;
    props::round_trips(c, probes, KeyedBloomFilter::to_bytes, decode_classic)?;
    props::round_trips(b, probes, KeyedBlockedBloomFilter::to_bytes, decode_blocked)?;
    let other = Sip64Scheme::from_secret(*b"another secret!!");
    prop_assert!(BloomFilter::from_bytes_with_scheme(&c.to_bytes(), other.clone()).is_err());
    prop_assert!(KeyedBlockedBloomFilter::from_bytes_with_scheme(&b.to_bytes(), other).is_err());
    Ok(())
}

variant_properties! {
    build: build,
    check: check,
    decoders: decoders_are_total,
    encodings: |(c, b): &Both| [c.to_bytes(), b.to_bytes()],
    union: (
        BloomFilter::with_fpr_and_scheme(401, 0.01, scheme()).unwrap(),
        KeyedBloomFilter::union
    ),
}
