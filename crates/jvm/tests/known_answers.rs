//! Known answers from the real jars (`interop/run.sh gen`, committed in `tests/data/`): for
//! Spark V1, V2, Guava (both strategies) × every key kind × (10³, 3 %), (10⁵, 1 %),
//! (10⁴, 0.1 %), our filter built from the same keys must have the jar's bytes (full bytes for
//! n = 10³, length and CRC-32 otherwise: a wrong byte escapes a CRC-32 with probability
//! 2^-32), report the same put results and expected FPP, and answer the 10⁴ probes as the
//! jar did. The jar's own files must decode here and answer identically.

mod common;

use common::keys::{self, Model};

struct Case {
    lib: String,
    kind: String,
    n: u64,
    fpp: f64,
    len: usize,
    crc: u32,
    changed: u64,
    expected_fpp: f64,
    answers: String,
}

fn cases() -> Vec<Case> {
    let text = include_str!("data/known_answers.txt");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f.len(), 9, "{l}");
            Case {
                lib: f[0].to_owned(),
                kind: f[1].to_owned(),
                n: f[2].parse().unwrap(),
                fpp: f[3].parse().unwrap(),
                len: f[4].parse().unwrap(),
                crc: f[5].parse().unwrap(),
                changed: f[6].parse().unwrap(),
                expected_fpp: f64::from_bits(u64::from_str_radix(f[7], 16).unwrap()),
                answers: f[8].to_owned(),
            }
        })
        .collect()
}

fn full_file(lib: &str, kind: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/data/{lib}-{kind}-1000.bin",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn every_case_of_the_grid_is_there() {
    let cases = cases();
    for (lib, kind, n, fpp) in keys::grid() {
        assert!(
            cases
                .iter()
                .any(|c| c.lib == lib && c.kind == kind && c.n == n && c.fpp == fpp),
            "{lib} {kind} {n} {fpp} missing"
        );
    }
    // 4 libraries × 4 key kinds less Spark's two without `int` keys, × 3 sizes.
    assert_eq!(keys::grid().count(), 42);
    assert_eq!(cases.len(), keys::grid().count());
}

#[test]
fn our_filters_equal_the_jars() {
    for c in cases() {
        let what = format!("{} {} n={} fpp={}", c.lib, c.kind, c.n, c.fpp);
        let mut f = Model::create(&c.lib, c.n, c.fpp);
        let mut changed = 0;
        for i in 0..c.n {
            changed += u64::from(f.put(&keys::member(&c.kind, i)));
        }
        let bytes = f.to_bytes();
        assert_eq!(bytes.len(), c.len, "{what}: length");
        assert_eq!(crc32fast::hash(&bytes), c.crc, "{what}: bytes differ");
        assert_eq!(changed, c.changed, "{what}: put results");
        // Java's Math.pow and Rust's powf may differ in the last place.
        let rel = (f.expected_fpp() - c.expected_fpp).abs() / c.expected_fpp;
        assert!(
            rel < 1e-12,
            "{what}: expected FPP {} vs {}",
            f.expected_fpp(),
            c.expected_fpp
        );
        assert_eq!(f.answers(&c.kind, c.n), c.answers, "{what}: answers");
        if c.n == 1000 {
            assert_eq!(bytes, full_file(&c.lib, &c.kind), "{what}: full bytes");
        }
    }
}

#[test]
fn the_jars_files_decode_and_answer_as_the_jars() {
    for c in cases().into_iter().filter(|c| c.n == 1000) {
        let what = format!("{} {}", c.lib, c.kind);
        let bytes = full_file(&c.lib, &c.kind);
        let f = Model::from_bytes(&c.lib, &bytes);
        assert_eq!(f.answers(&c.kind, c.n), c.answers, "{what}: answers");
        assert_eq!(f.to_bytes(), bytes, "{what}: re-encoding");
        assert!(
            (0..c.n).all(|i| f.might_contain(&keys::member(&c.kind, i))),
            "{what}: a member is missing"
        );
    }
}

#[test]
fn the_keys_cover_the_edge_cases() {
    // Negative longs and ints, multi-byte UTF-8 (2, 3 and 4 bytes), empty strings and arrays,
    // and bytes at or above 0x80 (Spark's tail sign-extends them).
    let members = |kind| (0..1000).map(move |i| keys::member(kind, i));
    assert!(members("i64").any(|k| matches!(k, keys::Key::I64(v) if v < 0)));
    assert!(members("i32").any(|k| matches!(k, keys::Key::I32(v) if v < 0)));
    assert!(members("str").any(|k| k == keys::Key::Str(String::new())));
    for width in 2..=4 {
        assert!(
            members("str").any(
                |k| matches!(k, keys::Key::Str(s) if s.chars().any(|c| c.len_utf8() == width))
            ),
            "no {width}-byte character"
        );
    }
    assert!(members("bytes").any(|k| k == keys::Key::Bytes(Vec::new())));
    assert!(members("bytes").any(
        |k| matches!(k, keys::Key::Bytes(b) if b.len() % 4 != 0 && b.iter().any(|&x| x >= 0x80))
    ));
}
