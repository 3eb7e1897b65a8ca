//! Keyed filters' promises for arbitrary keys and bytes: the classic and blocked filters
//! under a secret (generic halves in `bloomlab_conformance::props`; `PROPTEST_CASES` sets
//! the case count). Decoding checks the key check value as well as the format, so bytes
//! under another secret or scheme are refused.

use std::alloc::System;

use bloomlab_classic::BloomFilter;
use bloomlab_conformance::props::proptest::prelude::*;
use bloomlab_conformance::props::{self, INSTRUMENTED_SYSTEM, StatsAlloc};
use bloomlab_keyed::{KeyedBlockedBloomFilter, KeyedBloomFilter, Sip64Scheme};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

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

proptest! {
    #![proptest_config(props::config())]

    #[test]
    fn no_false_negatives_and_round_trip(keys in props::key_lists(300), probes in props::key_lists(40)) {
        let _g = props::serial();
        let (c, b) = (classic(&keys), blocked(&keys));
        props::no_false_negatives(&c, &keys)?;
        props::no_false_negatives(&b, &keys)?;
        props::round_trips(&c, &probes, KeyedBloomFilter::to_bytes, decode_classic)?;
        props::round_trips(&b, &probes, KeyedBlockedBloomFilter::to_bytes, decode_blocked)?;
        // Another secret refuses both.
        let other = Sip64Scheme::from_secret(*b"another secret!!");
        prop_assert!(BloomFilter::from_bytes_with_scheme(&c.to_bytes(), other.clone()).is_err());
        prop_assert!(KeyedBlockedBloomFilter::from_bytes_with_scheme(&b.to_bytes(), other).is_err());
    }

    #[test]
    fn union_is_the_filter_of_both(a in props::key_lists(200), b in props::key_lists(200)) {
        let _g = props::serial();
        let empty = BloomFilter::with_fpr_and_scheme(401, 0.01, scheme()).unwrap();
        props::union_is_the_filter_of_both(&empty, &a, &b, KeyedBloomFilter::union)?;
    }

    #[test]
    fn arbitrary_bytes_decode_or_fail_typed(bytes in prop::collection::vec(any::<u8>(), 0..1024)) {
        let _g = props::serial();
        decoders_are_total(&bytes)?;
    }

    #[test]
    fn mutated_encodings_decode_or_fail_typed(keys in props::key_lists(100), muts in props::mutations()) {
        let _g = props::serial();
        decoders_are_total(&props::mutate(&classic(&keys).to_bytes(), &muts))?;
        decoders_are_total(&props::mutate(&blocked(&keys).to_bytes(), &muts))?;
    }
}
