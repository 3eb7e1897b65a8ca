//! The split-block filter's promises for arbitrary keys and bytes, its Parquet Thrift header
//! and bitset included (generic halves in `bloomlab_conformance::props`; `PROPTEST_CASES`
//! sets the case count).

use std::alloc::System;

use bloomlab_conformance::props::proptest::prelude::*;
use bloomlab_conformance::props::{self, INSTRUMENTED_SYSTEM, StatsAlloc};
use bloomlab_sbbf::{Sbbf, parquet_header};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

fn build(keys: &[Vec<u8>]) -> Sbbf {
    props::with_keys(
        Sbbf::with_fpr_parquet_sized(keys.len() as u64 + 1, 0.01).unwrap(),
        keys,
    )
}

/// Every decoder on the same bytes: the checked envelope (canonical when accepted), the
/// Parquet section (header and bitset) and the bare Parquet bitset (the bitset they accept
/// is the one they were given), and the header parser on its own (a section is accepted
/// only if its header is).
fn decoders_are_total(input: &[u8]) -> Result<(), TestCaseError> {
    props::decode_is_total(GLOBAL, input, Sbbf::from_bytes, Sbbf::to_bytes)?;
    let header = props::bounded(GLOBAL, input.len(), || parquet_header(input))?;
    if let Ok(f) = props::bounded(GLOBAL, input.len(), || Sbbf::from_parquet_bytes(input))? {
        let (num_bytes, len) = header.expect("a section decodes only with a valid header");
        prop_assert_eq!(num_bytes as usize, input.len() - len);
        prop_assert_eq!(f.to_parquet_bitset().unwrap(), &input[len..]);
    }
    if let Ok(f) = props::bounded(GLOBAL, input.len(), || Sbbf::from_parquet_bitset(input))? {
        prop_assert_eq!(f.to_parquet_bitset().unwrap(), input);
    }
    Ok(())
}

/// Bytes drawn mostly from the Thrift compact protocol's interesting values: struct and list
/// field headers (which nest), stop bytes, varint continuation bytes and the i32 and binary
/// types, so the header parser's depth and length limits are reached, not just its first
/// byte.
fn thrift_like() -> impl Strategy<Value = Vec<u8>> {
    let b = prop_oneof![
        prop::sample::select(vec![
            0x00u8, 0x0c, 0x1c, 0x19, 0x1a, 0x15, 0x18, 0x29, 0xff, 0x80, 0x7f, 0x01
        ]),
        any::<u8>(),
    ];
    (0usize..300, prop::collection::vec(b, 0..256)).prop_map(|(depth, tail)| {
        let mut v = vec![0x1c; depth];
        v.extend(tail);
        v
    })
}

proptest! {
    #![proptest_config(props::config())]

    #[test]
    fn no_false_negatives_and_round_trip(keys in props::key_lists(300), probes in props::key_lists(40)) {
        let _g = props::serial();
        let f = build(&keys);
        props::no_false_negatives(&f, &keys)?;
        props::round_trips(&f, &probes, Sbbf::to_bytes, Sbbf::from_bytes)?;
        // The Parquet forms carry the bits (not the count): same answers.
        let section = Sbbf::from_parquet_bytes(&f.to_parquet_bytes().unwrap()).unwrap();
        let bitset = Sbbf::from_parquet_bitset(&f.to_parquet_bitset().unwrap()).unwrap();
        for k in keys.iter().chain(&probes) {
            prop_assert_eq!(section.might_contain(k), f.might_contain(k));
            prop_assert_eq!(bitset.might_contain(k), f.might_contain(k));
        }
    }

    #[test]
    fn union_is_the_filter_of_both(a in props::key_lists(200), b in props::key_lists(200)) {
        let _g = props::serial();
        let empty = Sbbf::with_fpr(401, 0.01).unwrap();
        props::union_is_the_filter_of_both(&empty, &a, &b, Sbbf::union)?;
    }

    #[test]
    fn arbitrary_bytes_decode_or_fail_typed(bytes in prop::collection::vec(any::<u8>(), 0..1024)) {
        let _g = props::serial();
        decoders_are_total(&bytes)?;
    }

    #[test]
    fn thrift_like_bytes_decode_or_fail_typed(bytes in thrift_like()) {
        let _g = props::serial();
        decoders_are_total(&bytes)?;
    }

    #[test]
    fn mutated_encodings_decode_or_fail_typed(keys in props::key_lists(100), muts in props::mutations()) {
        let _g = props::serial();
        let f = build(&keys);
        decoders_are_total(&props::mutate(&f.to_bytes(), &muts))?;
        decoders_are_total(&props::mutate(&f.to_parquet_bytes().unwrap(), &muts))?;
    }
}
