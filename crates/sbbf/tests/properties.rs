//! The split-block filter's promises for arbitrary keys and bytes, its Parquet Thrift header
//! and bitset included (generic halves in `bloomlab_conformance::props`; `PROPTEST_CASES`
//! sets the case count).

use bloomlab_conformance::props::proptest::prelude::*;
use bloomlab_conformance::{counting_allocator, props, variant_properties};
use bloomlab_sbbf::{Sbbf, parquet_header};

counting_allocator!();

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
/// No false negatives; the bytes round-trip, and the Parquet forms carry the bits (not the
/// count): same answers.
fn check(f: &Sbbf, keys: &[Vec<u8>], probes: &[Vec<u8>]) -> Result<(), TestCaseError> {
    props::no_false_negatives(f, keys)?;
    props::round_trips(f, probes, Sbbf::to_bytes, Sbbf::from_bytes)?;
    let section = Sbbf::from_parquet_bytes(&f.to_parquet_bytes().unwrap()).unwrap();
    let bitset = Sbbf::from_parquet_bitset(&f.to_parquet_bitset().unwrap()).unwrap();
    props::answers_alike(f, |k| section.might_contain(k), keys, probes)?;
    props::answers_alike(f, |k| bitset.might_contain(k), keys, probes)
}

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

variant_properties! {
    build: build,
    check: check,
    decoders: decoders_are_total,
    encodings: |f: &Sbbf| [f.to_bytes(), f.to_parquet_bytes().unwrap()],
    union: (Sbbf::with_fpr(401, 0.01).unwrap(), Sbbf::union),
}

proptest! {
    #![proptest_config(props::config())]

    #[test]
    fn thrift_like_bytes_decode_or_fail_typed(bytes in thrift_like()) {
        let _g = props::serial();
        decoders_are_total(&bytes)?;
    }
}
