//! Known-answer vectors of the core hash scheme and the envelope, written once as literals.
//!
//! Every byte format records scheme id 1 ([`SchemeId::Xxh3Km`]) for filters probed with
//! [`Xxh3Scheme`]; these values are what such filters were built with. If one changes, every
//! filter stored with scheme id 1 answers wrongly: a change here needs a new scheme id (and a
//! format version bump), never an edited literal alone.

use bloomlab_core::format::{self, CHECKSUM_SEED, EnvelopeWriter, Variant};
use bloomlab_core::hash::{HashScheme, KeyHash, SchemeId, XXH3_SEED, Xxh3Scheme, fastrange};

// The keys every variant's vectors use: empty, one byte, a short string, an integer's
// little-endian bytes, and a 1 KiB key (xxh3's long-input path).
use bloomlab_conformance::kat::probe_keys;

#[test]
fn xxh3_scheme_key_hashes() {
    // (h1, h2) = (low, high | 1) half of xxh3-128 with seed XXH3_SEED. Cross-checked once
    // against the xxHash reference C library (through python-xxhash 4.1.0), as were the
    // envelope checksum below and the digest helper of the conformance crate.
    let want = [
        (0x3d2a_eed4_7692_4f95, 0xae9b_9071_feae_dc29),
        (0x0a88_9809_a0b6_218b, 0xb867_f807_8016_0ba7),
        (0x1867_b159_4963_f271, 0x820a_064c_fd5d_3839),
        (0x6f8a_dafb_bbba_54ff, 0xb87b_1bdb_0bb6_3f09),
        (0xda4d_281f_b2c5_5d1b, 0xbe5c_1a0a_391a_4543),
    ];
    for (key, (h1, h2)) in probe_keys().iter().zip(want) {
        assert_eq!(
            Xxh3Scheme.hash(key),
            KeyHash { h1, h2 },
            "key of {} bytes",
            key.len()
        );
    }
}

#[test]
fn xxh3_scheme_constants() {
    assert_eq!(XXH3_SEED, 0x6261_6c6d_6f6f_6c62); // "bloomlab" little-endian
    assert_eq!(CHECKSUM_SEED, 0x6d75_736b_6365_6863); // "checksum" little-endian
    let d = Xxh3Scheme.descriptor();
    assert_eq!((d.id as u8, d.key_check), (1, 0));
    let ids = [
        SchemeId::Xxh3Km,
        SchemeId::SipHash24Km,
        SchemeId::SipHash24x64Km,
        SchemeId::ParquetXxh64,
        SchemeId::SparkMurmur3V1,
        SchemeId::SparkMurmur3V2,
        SchemeId::GuavaMurmur128Mitz32,
        SchemeId::GuavaMurmur128Mitz64,
    ];
    assert_eq!(ids.map(|id| id as u8), [1, 2, 4, 5, 6, 7, 8, 9]);
    let tags: Vec<u8> = Variant::ALL.iter().map(|v| *v as u8).collect();
    assert_eq!(tags, [1, 2, 3, 4, 5, 6, 7, 8]);
    let names: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
    assert_eq!(
        names,
        [
            "classic",
            "blocked",
            "counting",
            "scalable",
            "cuckoo",
            "sbbf",
            "ribbon",
            "expandable"
        ]
    );
}

#[test]
fn probe_positions_of_a_key() {
    // g_i = h1 + i·h2 (mod 2^64), reduced with fastrange into 0..1000.
    let h = Xxh3Scheme.hash(b"user:42");
    let got: Vec<u64> = h.positions(7, 1000).collect();
    assert_eq!(got, [95, 603, 111, 619, 127, 635, 143]);
    assert_eq!(
        h.probe(3),
        0x1867_b159_4963_f271u64.wrapping_add(3u64.wrapping_mul(0x820a_064c_fd5d_3839))
    );
    assert_eq!(fastrange(0x8000_0000_0000_0000, 1000), 500);
    assert_eq!(fastrange(u64::MAX, 1000), 999);
}

#[test]
fn envelope_bytes() {
    // Magic, version 1, variant 1, scheme 1, key check 0, payload length 12, xxh3-64 checksum
    // (seed CHECKSUM_SEED) of bytes 0..24 and the payload, then the payload (7u32, 99u64).
    let mut w = EnvelopeWriter::new(Variant::Classic, Xxh3Scheme.descriptor(), 12);
    w.u32(7).u64(99);
    let want = "424c4142 0100 01 01 0000000000000000 0c00000000000000 ff40df42041f1dfa \
                07000000 6300000000000000";
    let want: Vec<u8> = hex(want);
    assert_eq!(w.finish(), want);
    assert!(format::open(&want).is_ok());
}

fn hex(s: &str) -> Vec<u8> {
    let d: Vec<u8> = s
        .bytes()
        .filter(|c| c.is_ascii_hexdigit())
        .map(|c| (c as char).to_digit(16).unwrap() as u8)
        .collect();
    d.chunks_exact(2).map(|p| p[0] << 4 | p[1]).collect()
}
