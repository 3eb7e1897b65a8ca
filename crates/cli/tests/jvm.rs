//! `bloomlab` on Spark's and Guava's formats, against files the real JVM libraries wrote
//! (the known-answer files of `bloomlab-jvm`, from spark-sketch and Guava's jars): `build`
//! writes the jar's bytes for the same keys (negative longs, multi-byte UTF-8, an empty line),
//! `contains` gives the jar's answers on the jar's file, `inspect` names the format.

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../jvm/tests/common/keys.rs"]
mod keys;

use keys::Key;

fn jvm_data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../jvm/tests/data")
        .join(name)
}

fn bloomlab(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_bloomlab"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

fn line(k: &Key) -> Vec<u8> {
    let mut l = match k {
        Key::I64(v) => v.to_string().into_bytes(),
        Key::Str(s) => {
            assert!(
                !s.contains('\n') && !s.ends_with('\r'),
                "{s:?} cannot be a line"
            );
            s.clone().into_bytes()
        }
        other => panic!("{other:?} is not written as a line here"),
    };
    l.push(b'\n');
    l
}

/// The jar's answers for the (lib, kind, 1000, 0.03) case: bit j set where probe j is "maybe".
fn jar_answers(lib: &str, kind: &str) -> Vec<bool> {
    let text = std::fs::read_to_string(jvm_data("known_answers.txt")).unwrap();
    let hex = text
        .lines()
        .find(|l| l.starts_with(&format!("{lib} {kind} 1000 0.03 ")))
        .unwrap_or_else(|| panic!("no {lib} {kind} case"))
        .rsplit(' ')
        .next()
        .unwrap()
        .to_string();
    (0..keys::PROBES)
        .map(|j| {
            let byte = u8::from_str_radix(&hex[2 * (j / 8)..2 * (j / 8) + 2], 16).unwrap();
            byte >> (j % 8) & 1 == 1
        })
        .collect()
}

#[test]
fn build_writes_the_jars_bytes_and_contains_gives_the_jars_answers() {
    let dir = tempfile::tempdir().unwrap();
    for lib in ["spark-v1", "spark-v2", "guava"] {
        for kind in ["i64", "str"] {
            let what = format!("{lib} {kind}");
            let members: Vec<u8> = (0..1000)
                .flat_map(|i| line(&keys::member(kind, i)))
                .collect();
            let members_file = dir.path().join(format!("{lib}-{kind}.members"));
            std::fs::write(&members_file, &members).unwrap();
            let jar_file = jvm_data(&format!("{lib}-{kind}-1000.bin"));
            let jar_bytes = std::fs::read(&jar_file).unwrap();
            // Strings and byte arrays of the same UTF-8 hash alike in both libraries, so the
            // str keys read as `bytes` give the jar's file for strings too.
            let types: &[&str] = if kind == "str" {
                &["str", "bytes"]
            } else {
                &["i64"]
            };
            for t in types {
                let out = dir.path().join(format!("{lib}-{kind}-{t}.bin"));
                bloomlab(&[
                    "build",
                    "--format",
                    lib,
                    "--key-type",
                    t,
                    "--n",
                    "1000",
                    "--fpr",
                    "0.03",
                    "--keys",
                    out_str(&members_file),
                    "--out",
                    out_str(&out),
                ]);
                assert_eq!(
                    std::fs::read(&out).unwrap(),
                    jar_bytes,
                    "{what} as {t}: bytes"
                );
            }
            let probes: Vec<u8> = (0..keys::PROBES)
                .flat_map(|j| line(&keys::probe(kind, 1000, j)))
                .collect();
            let probes_file = dir.path().join(format!("{lib}-{kind}.probes"));
            std::fs::write(&probes_file, &probes).unwrap();
            let ours = bloomlab(&[
                "contains",
                out_str(&jar_file),
                "--key-type",
                kind,
                "--keys",
                out_str(&probes_file),
            ]);
            let want: String = jar_answers(lib, kind)
                .iter()
                .map(|&b| if b { "1\n" } else { "0\n" })
                .collect();
            assert_eq!(ours, want, "{what}: answers on the jar's file");
            let inspect = bloomlab(&["inspect", out_str(&jar_file)]);
            let first = inspect.lines().next().unwrap();
            let name = match lib {
                "spark-v1" => "spark v1",
                "spark-v2" => "spark v2",
                _ => "guava",
            };
            assert_eq!(first, name, "{inspect}");
            assert!(
                inspect.contains("k:             5 (probes per key)"),
                "{inspect}"
            );
            // 1 000 keys at 3 %: 7 298 bits by the JVM's rule, rounded up to whole words.
            assert!(inspect.contains("bits:          7360"), "{inspect}");
            let count = inspect.lines().find(|l| l.starts_with("count:")).unwrap();
            assert!(count.starts_with("count:         ≈ "), "{count}");
            let est: f64 = count.split_whitespace().nth(2).unwrap().parse().unwrap();
            assert!((est - 1000.0).abs() < 60.0, "{count}");
        }
    }
}

#[test]
fn guavas_other_strategy_is_read_and_named() {
    let file = jvm_data("guava-mitz32-i64-1000.bin");
    let inspect = bloomlab(&["inspect", out_str(&file)]);
    assert!(
        inspect.starts_with("guava MURMUR128_MITZ_32\n"),
        "{inspect}"
    );
    let dir = tempfile::tempdir().unwrap();
    let probes: Vec<u8> = (0..keys::PROBES)
        .flat_map(|j| line(&keys::probe("i64", 1000, j)))
        .collect();
    let p = dir.path().join("probes");
    std::fs::write(&p, probes).unwrap();
    let ours = bloomlab(&[
        "contains",
        out_str(&file),
        "--key-type",
        "i64",
        "--keys",
        out_str(&p),
    ]);
    let want: String = jar_answers("guava-mitz32", "i64")
        .iter()
        .map(|&b| if b { "1\n" } else { "0\n" })
        .collect();
    assert_eq!(ours, want);
}

#[test]
fn damaged_jvm_files_get_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let keys_file = dir.path().join("k");
    std::fs::write(&keys_file, "1\n").unwrap();
    let bytes = std::fs::read(jvm_data("spark-v2-i64-1000.bin")).unwrap();
    let guava = std::fs::read(jvm_data("guava-i64-1000.bin")).unwrap();
    let mut k0 = guava.clone();
    k0[1] = 0; // k = 0: no longer a Guava filter at all
    let mut huge = bytes.clone();
    huge[12..16].copy_from_slice(&i32::MAX.to_be_bytes()); // a word count beyond the input
    for (name, b) in [
        ("truncated", bytes[..bytes.len() - 3].to_vec()),
        ("huge", huge),
        ("guava-k0", k0),
        ("guava-cut", guava[..5].to_vec()),
    ] {
        let p = dir.path().join(name);
        std::fs::write(&p, b).unwrap();
        for args in [
            vec!["inspect", out_str(&p)],
            vec![
                "contains",
                out_str(&p),
                "--key-type",
                "i64",
                "--keys",
                out_str(&keys_file),
            ],
        ] {
            let o = Command::new(env!("CARGO_BIN_EXE_bloomlab"))
                .args(&args)
                .output()
                .unwrap();
            let err = String::from_utf8(o.stderr).unwrap();
            assert_eq!(o.status.code(), Some(1), "{name}: {err}");
            assert_eq!(err.lines().count(), 1, "{name}: {err}");
            assert!(!err.contains("panicked"), "{err}");
        }
    }
}

fn out_str(p: &Path) -> &str {
    p.to_str().unwrap()
}
