//! Interop with the Apache Arrow Rust implementation of Parquet (`parquet` crate), both ways:
//! real Parquet files written by its writer and read by its reader, and its own `Sbbf`.
//!
//! **Byte order.** The Parquet spec hashes a value's *plain encoding*, which is little-endian
//! for INT32, INT64, FLOAT and DOUBLE. The `parquet` crate (60.1) hashes a numeric value's
//! bytes as they lie in memory (`AsBytes` for `i32`, `i64`, `f32`, `f64` is a view of the
//! value's memory, used by `Sbbf::insert`/`check` and by its writer): native order. On a
//! little-endian machine that is the plain encoding; on a big-endian one (s390x) the crate
//! hashes the byte-reversed value, and its typed answers and the INT64 filters its writer
//! writes there are not the spec's (its bitset layout and its byte-array path are right
//! everywhere). So our filter is pinned first by known answers computed from the spec alone
//! ([`spec_known_answers`], by `tests/spec_sbbf.py`), and compared with the crate's typed
//! calls only on little-endian targets; everywhere else the crate is given the plain
//! encoding as bytes, which it hashes as the spec says.

use std::collections::HashSet;
use std::sync::Arc;

use bloomlab_sbbf::{Sbbf, parquet_header};
use bytes::Bytes;
use parquet::bloom_filter::Sbbf as PqSbbf;
use parquet::column::reader::get_typed_column_reader;
use parquet::data_type::{ByteArray, ByteArrayType, Int64Type};
use parquet::file::properties::{ReaderProperties, WriterProperties};
use parquet::file::reader::FileReader;
use parquet::file::serialized_reader::{ReadOptionsBuilder, SerializedFileReader};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const N: usize = 100_000;
const NON_MEMBERS: usize = 1_000_000;

/// The member values: 10^5 strings of varied length and 10^5 spread-out INT64s.
fn members() -> (Vec<Vec<u8>>, Vec<i64>) {
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let strings = (0..N)
        .map(|i| format!("customer-{i}-{:x}", rng.random::<u32>() >> (i % 29)).into_bytes())
        .collect();
    let ints = (0..N).map(|i| i as i64 * 1_000_003 - 50_000_000).collect();
    (strings, ints)
}

/// 10^6 values of each type that are not members.
fn non_members(ints: &[i64]) -> (Vec<Vec<u8>>, Vec<i64>) {
    let member_ints: HashSet<i64> = ints.iter().copied().collect();
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    let strings = (0..NON_MEMBERS)
        .map(|i| format!("absent-{i}").into_bytes())
        .collect();
    let mut out = Vec::with_capacity(NON_MEMBERS);
    while out.len() < NON_MEMBERS {
        let v: i64 = rng.random();
        if !member_ints.contains(&v) {
            out.push(v);
        }
    }
    (strings, out)
}

/// A Parquet file with one row group, a BYTE_ARRAY column `s` and an INT64 column `v`, bloom
/// filters enabled on both (1 % at 10^5 distinct values), written by the `parquet` crate.
fn write_file(strings: &[Vec<u8>], ints: &[i64]) -> Vec<u8> {
    let schema = Arc::new(
        parse_message_type("message m { REQUIRED BYTE_ARRAY s; REQUIRED INT64 v; }").unwrap(),
    );
    let props = Arc::new(
        WriterProperties::builder()
            .set_bloom_filter_enabled(true)
            .set_bloom_filter_fpp(0.01)
            .set_bloom_filter_max_ndv(N as u64)
            .build(),
    );
    let mut buf = Vec::new();
    let mut w = SerializedFileWriter::new(&mut buf, schema, props).unwrap();
    let mut rg = w.next_row_group().unwrap();
    let mut c = rg.next_column().unwrap().unwrap();
    let values: Vec<ByteArray> = strings.iter().map(|s| ByteArray::from(s.clone())).collect();
    c.typed::<ByteArrayType>()
        .write_batch(&values, None, None)
        .unwrap();
    c.close().unwrap();
    let mut c = rg.next_column().unwrap().unwrap();
    c.typed::<Int64Type>()
        .write_batch(ints, None, None)
        .unwrap();
    c.close().unwrap();
    rg.close().unwrap();
    w.close().unwrap();
    buf
}

fn reader(file: &[u8]) -> SerializedFileReader<Bytes> {
    let options = ReadOptionsBuilder::new()
        .with_reader_properties(
            ReaderProperties::builder()
                .set_read_bloom_filter(true)
                .build(),
        )
        .build();
    SerializedFileReader::new_with_options(Bytes::from(file.to_vec()), options).unwrap()
}

/// Where column `col`'s bloom filter section (header and bitset) lies in the file.
fn section(file: &[u8], col: usize) -> std::ops::Range<usize> {
    let r = reader(file);
    let meta = r.metadata().row_group(0).column(col);
    let start = meta
        .bloom_filter_offset()
        .expect("a bloom filter was written") as usize;
    let len = match meta.bloom_filter_length() {
        Some(len) => len as usize,
        None => {
            let (bitset, header) = parquet_header(&file[start..]).unwrap();
            header + bitset as usize
        }
    };
    start..start + len
}

fn bitset_of(pq: &PqSbbf) -> Vec<u8> {
    let mut v = Vec::new();
    pq.write_bitset(&mut v).unwrap();
    v
}

/// Both filters give the same answer on every member and non-member; members all say yes.
fn same_answers_bytes(ours: &Sbbf, pq: &PqSbbf, members: &[Vec<u8>], others: &[Vec<u8>]) {
    for m in members {
        assert!(ours.might_contain_bytes(m), "false negative");
        assert!(pq.check(m.as_slice()));
    }
    let mut disagree = 0;
    let mut positives = 0;
    for o in others {
        let a = ours.might_contain_bytes(o);
        disagree += usize::from(a != pq.check(o.as_slice()));
        positives += usize::from(a);
    }
    assert_eq!(disagree, 0);
    // A meaningful comparison: both answers occur.
    assert!(
        positives > 0 && positives < others.len() / 10,
        "{positives}"
    );
}

/// The parquet crate's answer for an INT64 value by the spec: its plain encoding (8
/// little-endian bytes) given as bytes, and, where native order is that encoding, its typed
/// call too, which must then agree (see the module docs for why not on big-endian targets).
fn pq_check_i64(pq: &PqSbbf, v: i64) -> bool {
    let by_spec = pq.check(&v.to_le_bytes()[..]);
    if cfg!(target_endian = "little") {
        assert_eq!(pq.check(&v), by_spec, "{v}");
    }
    by_spec
}

fn same_answers_i64(ours: &Sbbf, pq: &PqSbbf, members: &[i64], others: &[i64]) {
    for &m in members {
        assert!(ours.might_contain_i64(m), "false negative");
        assert!(pq_check_i64(pq, m));
    }
    let mut disagree = 0;
    let mut positives = 0;
    for &o in others {
        let a = ours.might_contain_i64(o);
        disagree += usize::from(a != pq_check_i64(pq, o));
        positives += usize::from(a);
    }
    assert_eq!(disagree, 0);
    assert!(
        positives > 0 && positives < others.len() / 10,
        "{positives}"
    );
}

#[test]
fn filters_written_by_the_parquet_writer_read_and_answer_identically() {
    let (strings, ints) = members();
    let (absent_strings, absent_ints) = non_members(&ints);
    let file = write_file(&strings, &ints);
    let r = reader(&file);
    let rg = r.get_row_group(0).unwrap();
    assert_eq!(rg.metadata().num_rows(), N as i64);

    for col in 0..2 {
        let pq = rg.get_column_bloom_filter(col).expect("bloom filter read");
        let bytes = &file[section(&file, col)];
        let ours = Sbbf::from_parquet_bytes(bytes).unwrap();
        assert_eq!(ours.blocks(), pq.num_blocks() as u64);
        // Bit for bit the same table, and the same header bytes.
        assert_eq!(ours.to_parquet_bitset().unwrap(), bitset_of(pq));
        assert_eq!(ours.to_parquet_bytes().unwrap(), bytes);
        // The count is estimated from the fill: 10^5 distinct values.
        let est = ours.len() as f64;
        assert!((est / N as f64 - 1.0).abs() < 0.02, "{est}");

        // Built here from the same values at the file's size: the same bits (the writer's
        // folding ORs adjacent blocks, which is where a half-size filter puts each value).
        let mut rebuilt = Sbbf::with_blocks(ours.blocks()).unwrap();
        if col == 0 {
            strings.iter().for_each(|s| {
                rebuilt.insert_bytes(s);
            });
            same_answers_bytes(&ours, pq, &strings, &absent_strings);
        } else if cfg!(target_endian = "little") {
            ints.iter().for_each(|&v| {
                rebuilt.insert_i64(v);
            });
            same_answers_i64(&ours, pq, &ints, &absent_ints);
        } else {
            // On a big-endian machine the writer hashed each INT64 in native order, not its
            // plain encoding (module docs): its filter is exactly the one of the byte-reversed
            // encodings, which shows where the difference lies. Ours follows the spec, pinned
            // by `spec_known_answers`.
            ints.iter().for_each(|&v| {
                rebuilt.insert_bytes(&v.to_ne_bytes());
            });
        }
        assert_eq!(rebuilt.raw_bitset(), ours.raw_bitset(), "column {col}");
    }
}

#[test]
fn our_bitsets_are_read_by_the_parquet_sbbf() {
    let (strings, ints) = members();
    let (absent_strings, absent_ints) = non_members(&ints);
    let mut s = Sbbf::with_ndv_fpp(N as u64, 0.01).unwrap();
    let mut v = Sbbf::with_fpr_parquet_sized(N as u64, 0.01).unwrap();
    strings.iter().for_each(|x| {
        s.insert_bytes(x);
    });
    ints.iter().for_each(|&x| {
        v.insert_i64(x);
    });
    // Bare bitset and the full section (Thrift header + bitset).
    let pq_s = PqSbbf::new(&s.to_parquet_bitset().unwrap());
    let pq_v = PqSbbf::from_bytes(&v.to_parquet_bytes().unwrap()).unwrap();
    same_answers_bytes(&s, &pq_s, &strings, &absent_strings);
    same_answers_i64(&v, &pq_v, &ints, &absent_ints);
    // And the parquet crate's own filter, fed the same values, holds the same bits.
    let mut own = PqSbbf::new_with_ndv_fpp(N as u64, 0.01).unwrap();
    strings.iter().for_each(|x| own.insert(x.as_slice()));
    assert_eq!(bitset_of(&own), s.raw_bitset());
}

#[test]
fn a_parquet_file_holding_our_filter_is_read_and_pruned_by_the_parquet_reader() {
    let (strings, ints) = members();
    let (absent_strings, absent_ints) = non_members(&ints);
    let mut file = write_file(&strings, &ints);
    // Replace each column's filter by ours, built from the even-indexed values only, at the
    // size the writer chose: the reader must then prune the odd-indexed values our filter
    // rejects — proof that it answers from our bytes.
    let mut ours = Vec::new();
    for col in 0..2 {
        let range = section(&file, col);
        let blocks = Sbbf::from_parquet_bytes(&file[range.clone()])
            .unwrap()
            .blocks();
        let mut f = Sbbf::with_blocks(blocks).unwrap();
        for i in (0..N).step_by(2) {
            if col == 0 {
                f.insert_bytes(&strings[i]);
            } else {
                f.insert_i64(ints[i]);
            }
        }
        let bytes = f.to_parquet_bytes().unwrap();
        assert_eq!(bytes.len(), range.len());
        file[range].copy_from_slice(&bytes);
        ours.push(f);
    }
    let r = reader(&file);
    let rg = r.get_row_group(0).unwrap();
    // The file still reads as a whole: the columns hold every value as written. (Read column
    // by column: the row iterator, which builds a `Row` of boxed fields per row, ran for more
    // than ten minutes of CPU under qemu-s390x.) The BYTE_ARRAY column only where native
    // order is little-endian: on s390x the parquet crate (60.1) cannot read back the
    // BYTE_ARRAY column it has just written ("Not enough bytes to decode", the file as
    // written, before our filters are put in), so there the check would test that crate, not
    // our filter bytes; the INT64 column reads back on every target.
    if cfg!(target_endian = "little") {
        let mut s_back = Vec::new();
        let mut c = get_typed_column_reader::<ByteArrayType>(rg.get_column_reader(0).unwrap());
        assert_eq!(c.read_records(N + 1, None, None, &mut s_back).unwrap().0, N);
        assert!(
            s_back
                .iter()
                .map(ByteArray::data)
                .eq(strings.iter().map(Vec::as_slice))
        );
    }
    let mut v_back = Vec::new();
    let mut c = get_typed_column_reader::<Int64Type>(rg.get_column_reader(1).unwrap());
    assert_eq!(c.read_records(N + 1, None, None, &mut v_back).unwrap().0, N);
    assert_eq!(v_back, ints);
    let (pq_s, pq_v) = (
        rg.get_column_bloom_filter(0).unwrap(),
        rg.get_column_bloom_filter(1).unwrap(),
    );
    let even_s: Vec<Vec<u8>> = strings.iter().step_by(2).cloned().collect();
    let even_v: Vec<i64> = ints.iter().step_by(2).copied().collect();
    let odd_s: Vec<Vec<u8>> = strings.iter().skip(1).step_by(2).cloned().collect();
    let odd_v: Vec<i64> = ints.iter().skip(1).step_by(2).copied().collect();
    let all_absent_s: Vec<Vec<u8>> = absent_strings.iter().chain(&odd_s).cloned().collect();
    let all_absent_v: Vec<i64> = absent_ints.iter().chain(&odd_v).copied().collect();
    same_answers_bytes(&ours[0], pq_s, &even_s, &all_absent_s);
    same_answers_i64(&ours[1], pq_v, &even_v, &all_absent_v);
    // Most odd-indexed values are pruned by the reader (the rest are false positives).
    let pruned = odd_v.iter().filter(|&&v| !pq_check_i64(pq_v, v)).count();
    assert!(pruned > odd_v.len() * 9 / 10, "{pruned}");
}

#[test]
fn sizing_matches_the_parquet_writer_rule() {
    for ndv in [1u64, 10, 1000, 12_345, 100_000, 1_000_000, 50_000_000] {
        for fpp in [0.5, 0.1, 0.03, 0.01, 0.001, 1e-6] {
            let ours = Sbbf::with_ndv_fpp(ndv, fpp).unwrap();
            let theirs = PqSbbf::new_with_ndv_fpp(ndv, fpp).unwrap();
            assert_eq!(ours.blocks(), theirs.num_blocks() as u64, "{ndv} {fpp}");
        }
    }
    for bytes in [0u64, 1, 32, 33, 1000, 1 << 20, (1 << 20) + 1, 1 << 40] {
        let ours = Sbbf::with_num_bytes(bytes).unwrap();
        // The reference takes a `usize`: on a 32-bit target 2^40 saturates to usize::MAX,
        // which it clamps to 128 MiB as it clamps 2^40 on a 64-bit one (a plain `as` cast
        // would wrap 2^40 to 0 there).
        let theirs = PqSbbf::new_with_num_of_bytes(usize::try_from(bytes).unwrap_or(usize::MAX));
        assert_eq!(ours.blocks(), theirs.num_blocks() as u64, "{bytes}");
    }
}

#[test]
fn every_plain_encoding_hashes_as_parquet_does() {
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    let mut ours = Sbbf::with_blocks(64).unwrap();
    // The parquet crate given each value's plain encoding as bytes (the spec's hash input, on
    // every target), and given the typed values (its native-order hash: compared only where
    // native order is little-endian, as the module docs explain).
    let mut theirs = PqSbbf::new_with_num_of_bytes(64 * 32);
    let mut theirs_typed = PqSbbf::new_with_num_of_bytes(64 * 32);
    for _ in 0..300 {
        let (a, b, c, d): (i32, i64, f32, f64) =
            (rng.random(), rng.random(), rng.random(), rng.random());
        let s: [u8; 12] = rng.random();
        ours.insert_i32(a);
        ours.insert_i64(b);
        ours.insert_f32(c);
        ours.insert_f64(d);
        ours.insert_bytes(&s);
        ours.insert(&"text");
        theirs.insert(&a.to_le_bytes()[..]);
        theirs.insert(&b.to_le_bytes()[..]);
        theirs.insert(&c.to_le_bytes()[..]);
        theirs.insert(&d.to_le_bytes()[..]);
        theirs.insert(&s[..]);
        theirs.insert("text");
        theirs_typed.insert(&a);
        theirs_typed.insert(&b);
        theirs_typed.insert(&c);
        theirs_typed.insert(&d);
        theirs_typed.insert(&s[..]);
        theirs_typed.insert("text");
    }
    assert_eq!(ours.raw_bitset(), bitset_of(&theirs));
    if cfg!(target_endian = "little") {
        assert_eq!(ours.raw_bitset(), bitset_of(&theirs_typed));
    }
    // The typed INT32 query answers as Parquet's reader does, members and others alike.
    let mut rng = ChaCha8Rng::seed_from_u64(15);
    for _ in 0..300 {
        let (a, _, _, _): (i32, i64, f32, f64) =
            (rng.random(), rng.random(), rng.random(), rng.random());
        let _: [u8; 12] = rng.random();
        assert!(ours.might_contain_i32(a), "{a}");
    }
    for _ in 0..2_000 {
        let x: i32 = rng.random();
        let answer = ours.might_contain_i32(x);
        assert_eq!(answer, theirs.check(&x.to_le_bytes()[..]), "{x}");
        if cfg!(target_endian = "little") {
            assert_eq!(answer, theirs_typed.check(&x), "{x}");
        }
    }
}

/// Known answers from the Parquet spec alone, computed by `tests/spec_sbbf.py` (xxHash64 and
/// the split-block insert written from the spec in Python, its xxHash64 checked against the
/// reference value of the empty input): the hash of each value's plain encoding, and the
/// bitset of a 4-block filter holding them. They depend neither on the `parquet` crate nor on
/// the machine's byte order, so a big-endian run checks our encoding against the spec itself.
#[test]
fn spec_known_answers() {
    use bloomlab_sbbf::{hash_bytes, hash_f32, hash_f64, hash_i32, hash_i64};
    let forty: Vec<u8> = (0..40).collect();
    assert_eq!(hash_bytes(b""), 0xef46_db37_51d8_e999);
    assert_eq!(hash_i32(7), 0xb7ca_480e_9b96_0d0e);
    assert_eq!(hash_i32(-123_456), 0xbec1_fefc_c4c3_95b7);
    assert_eq!(hash_i64(-3), 0xdfb9_8331_207f_3823);
    assert_eq!(hash_i64(1_234_567_890_123), 0xd9d5_580c_14aa_025d);
    assert_eq!(hash_f32(1.5), 0x4f2d_8259_5c48_3a0d);
    assert_eq!(hash_f64(-0.25), 0x2be8_7571_5494_5fc4);
    assert_eq!(hash_bytes(b"parquet"), 0x3c9d_2927_5c52_e429);
    assert_eq!(hash_bytes(&forty), 0xf5da_40f1_b117_41e9);

    let mut f = Sbbf::with_blocks(4).unwrap();
    f.insert_i32(7);
    f.insert_i32(-123_456);
    f.insert_i64(-3);
    f.insert_i64(1_234_567_890_123);
    f.insert_f32(1.5);
    f.insert_f64(-0.25);
    f.insert_bytes(b"parquet");
    f.insert_bytes(&forty);
    let hex: String = f.raw_bitset().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(
        hex,
        "04000000040040000000402000000a00000100040020100011000000120000000000040000004000\
         00002000000008000000010000000400000800000020000082000000400020000010008002000000\
         000020802100000000202000001000010102200004000020010040800400000302800001004400101020002002000080"
    );
    assert!(f.might_contain_i64(-3) && f.might_contain_f64(-0.25) && f.might_contain_i32(7));
    // The same bytes decoded answer alike (the Parquet bitset is little-endian words).
    let back = Sbbf::from_parquet_bitset(&f.to_parquet_bitset().unwrap()).unwrap();
    assert_eq!(back.raw_bitset(), f.raw_bitset());
    assert!(back.might_contain_i64(1_234_567_890_123) && back.might_contain_f32(1.5));
}
