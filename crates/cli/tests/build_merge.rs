//! `build --from-parquet` / `--from-csv`, `merge` and `add`: the same bytes as a filter built
//! from the same keys in a key file, and nothing half-written when they fail.

use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};

use parquet::file::reader::FileReader;
use parquet::file::serialized_reader::SerializedFileReader;
use parquet::record::Field;

mod common;
use common::{FORMATS, build_args, data, keys_file, s};

fn run(args: &[&str]) -> Result<String, bloomlab_cli::CliError> {
    let mut out = Vec::new();
    let mut all = vec!["bloomlab"];
    all.extend_from_slice(args);
    bloomlab_cli::run_with(all, &mut out, &mut std::io::sink())?;
    Ok(String::from_utf8(out).unwrap())
}

fn ok(args: &[&str]) -> String {
    run(args).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn err(args: &[&str]) -> String {
    let e = run(args).expect_err("should fail").to_string();
    assert!(!e.contains('\n'), "one line: {e}");
    e
}

/// A column's non-null values as key lines, read by the `parquet` crate's record reader.
fn column_lines(file: &Path, column: &str) -> Vec<String> {
    let r = SerializedFileReader::new(File::open(file).unwrap()).unwrap();
    let mut out = Vec::new();
    for row in r.get_row_iter(None).unwrap() {
        for (name, field) in row.unwrap().get_column_iter() {
            if name != column {
                continue;
            }
            match field {
                Field::Long(v) => out.push(v.to_string()),
                Field::Int(v) => out.push(v.to_string()),
                Field::Str(v) => out.push(v.clone()),
                Field::Null => {}
                other => panic!("{other:?}"),
            }
        }
    }
    out
}

/// For each format, `build --from-parquet` writes the bytes `build --keys` writes for the
/// column's values as lines, sized from their distinct count: an INT64 column with repeats
/// (the Bloom family and sbbf), and columns of distinct integers and strings (every format).
#[test]
fn build_from_parquet_equals_build_from_the_values_as_lines() {
    let dir = tempfile::tempdir().unwrap();
    let file = data("ndv/pyarrow-ndv.parquet");
    let cases = [
        ("right", "i64", None, &FORMATS[..9]),
        ("nofilter", "i64", None, FORMATS),
        ("useless", "str", Some("str"), FORMATS),
        ("useless", "bytes", None, FORMATS),
    ];
    for (column, line_type, key_type, formats) in cases {
        let lines = column_lines(&file, column);
        let distinct = lines.iter().collect::<HashSet<_>>().len().to_string();
        let keys = dir.path().join("keys");
        std::fs::write(&keys, lines.join("\n") + "\n").unwrap();
        for &format in formats {
            let (a, b) = (dir.path().join("a"), dir.path().join("b"));
            let mut from = vec![
                "build",
                "--format",
                format,
                "--fpr",
                "0.01",
                "--from-parquet",
                s(&file),
                "--column",
                column,
                "--out",
                s(&a),
            ];
            if let Some(t) = key_type {
                from.extend(["--key-type", t]);
            }
            ok(&from);
            ok(&[
                "build",
                "--format",
                format,
                "--fpr",
                "0.01",
                "--keys",
                s(&keys),
                "--key-type",
                line_type,
                "--n",
                &distinct,
                "--out",
                s(&b),
            ]);
            let (x, y) = (std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
            assert!(x == y, "{column} {format} {key_type:?}: the bytes differ");
        }
    }
}

/// A dataset (a directory) and CSV files give the keys of all their files, in order.
#[test]
fn build_from_a_directory_and_from_csv() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(data("lake"))
        .unwrap()
        .map(|f| f.unwrap().path())
        .collect();
    files.sort();
    for f in &files {
        lines.extend(column_lines(f, "name"));
    }
    let keys = dir.path().join("keys");
    std::fs::write(&keys, lines.join("\n") + "\n").unwrap();
    let n = lines.iter().collect::<HashSet<_>>().len().to_string();
    let (a, b, c) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    let csv = dir.path().join("names.csv");
    let mut w = String::from("row,name\n");
    for (i, l) in lines.iter().enumerate() {
        w.push_str(&format!("{i},\"{l}\"\n"));
    }
    std::fs::write(&csv, w).unwrap();
    let lake = data("lake");
    for format in ["spark-v2", "guava", "blocked", "sbbf"] {
        let common = ["build", "--format", format, "--fpr", "0.02"];
        let mut from_dir = common.to_vec();
        from_dir.extend(["--from-parquet", s(&lake), "--column", "name"]);
        from_dir.extend(["--key-type", "str", "--out", s(&a)]);
        ok(&from_dir);
        let mut from_csv = common.to_vec();
        from_csv.extend(["--from-csv", s(&csv), "--column", "name", "--out", s(&c)]);
        ok(&from_csv);
        let mut from_keys = common.to_vec();
        from_keys.extend([
            "--keys",
            s(&keys),
            "--key-type",
            "str",
            "--n",
            &n,
            "--out",
            s(&b),
        ]);
        ok(&from_keys);
        let bytes = std::fs::read(&b).unwrap();
        assert!(std::fs::read(&a).unwrap() == bytes, "{format}: parquet");
        assert!(std::fs::read(&c).unwrap() == bytes, "{format}: csv");
    }
}

/// Filters built per partition and merged are the filter built over all keys, byte for byte,
/// for every format whose filters merge exactly.
#[test]
fn merge_of_partitions_equals_one_filter_over_all_keys() {
    let dir = tempfile::tempdir().unwrap();
    let all: Vec<String> = (0..3000)
        .map(|i| (i * 7919 % 100_003).to_string())
        .collect();
    let whole = keys_file(dir.path(), "all", &all);
    let parts: Vec<PathBuf> = all
        .chunks(1000)
        .enumerate()
        .map(|(i, c)| keys_file(dir.path(), &format!("part{i}"), c))
        .collect();
    for format in [
        "spark-v1", "spark-v2", "guava", "sbbf", "classic", "blocked",
    ] {
        for key_type in ["i64", "str"] {
            let build = |keys: &Path, out: &Path| {
                ok(&build_args(format, key_type, "3000", "0.01", keys, out));
            };
            let one = dir.path().join("one");
            build(&whole, &one);
            let mut merge = vec!["merge".to_string()];
            for (i, p) in parts.iter().enumerate() {
                let out = dir.path().join(format!("f{i}"));
                build(p, &out);
                merge.push(s(&out).to_string());
            }
            let merged = dir.path().join("merged");
            merge.extend(["--out".to_string(), s(&merged).to_string()]);
            ok(&merge.iter().map(String::as_str).collect::<Vec<_>>());
            assert!(
                std::fs::read(&merged).unwrap() == std::fs::read(&one).unwrap(),
                "{format} {key_type}"
            );
        }
    }
}

/// Filters that do not merge exactly, or do not match, are refused with the reason, and
/// nothing is written at --out.
#[test]
fn merge_refuses_unlike_filters() {
    let dir = tempfile::tempdir().unwrap();
    let keys = keys_file(dir.path(), "k", &["1".into(), "2".into(), "3".into()]);
    let build = |format: &str, n: &str, name: &str| {
        let out = dir.path().join(name);
        ok(&build_args(format, "i64", n, "0.01", &keys, &out));
        out
    };
    let out = dir.path().join("out");
    for (format, why) in [
        ("counting", "counters saturate"),
        ("scalable", "order of inserts"),
        ("cuckoo", "order of inserts"),
        ("expandable", "order of inserts"),
        ("ribbon", "static"),
    ] {
        let (a, b) = (build(format, "100", "a"), build(format, "100", "b"));
        let e = err(&["merge", s(&a), s(&b), "--out", s(&out)]);
        assert!(
            e.contains("cannot merge") && e.contains(why),
            "{format}: {e}"
        );
        assert!(!out.exists());
    }
    let pairs = [
        ("spark-v2", "100", "spark-v2", "1000"),
        ("guava", "100", "guava", "1000"),
        ("classic", "100", "classic", "1000"),
        ("blocked", "100", "blocked", "100000"),
        ("sbbf", "100", "sbbf", "100000"),
        ("spark-v1", "100", "guava", "100"),
        ("spark-v1", "100", "spark-v2", "100"),
        ("classic", "100", "blocked", "100"),
        ("sbbf", "100", "classic", "100"),
    ];
    for (fa, na, fb, nb) in pairs {
        let (a, b) = (build(fa, na, "a"), build(fb, nb, "b"));
        let e = err(&["merge", s(&a), s(&b), "--out", s(&out)]);
        assert!(e.contains("cannot merge"), "{fa} {na} / {fb} {nb}: {e}");
        assert!(!out.exists());
    }
    let e = err(&["merge", s(&keys), s(&keys), "--out", s(&out)]);
    assert!(e.contains("unknown format"), "{e}");
    let pq = data("lake/duckdb-0.parquet");
    let e = err(&["merge", s(&pq), s(&pq), "--out", s(&out)]);
    assert!(e.contains("Parquet data file"), "{e}");
    assert!(!out.exists());
}

/// `add` then `contains` finds every key; for the Bloom family the file is then the filter
/// built over both key sets; a bad key leaves the file as it was and no temporary file.
#[test]
fn add_then_contains_finds_every_key() {
    let dir = tempfile::tempdir().unwrap();
    let first: Vec<String> = (0..500).map(|i| format!("k{i}")).collect();
    let second: Vec<String> = (500..1000).map(|i| format!("k{i}")).collect();
    let all: Vec<String> = first.iter().chain(&second).cloned().collect();
    let (f1, f2, fa) = (
        keys_file(dir.path(), "first", &first),
        keys_file(dir.path(), "second", &second),
        keys_file(dir.path(), "all", &all),
    );
    for format in &FORMATS[..10] {
        let build = |keys: &Path, out: &Path| {
            ok(&build_args(format, "str", "1000", "0.01", keys, out));
        };
        let (f, whole) = (
            dir.path().join(format!("{format}.f")),
            dir.path().join("whole"),
        );
        build(&f1, &f);
        ok(&[
            "add",
            s(&f),
            "--key-type",
            "str",
            "--keys",
            s(&f2),
            "-v",
            "extra",
        ]);
        let answers = ok(&[
            "contains",
            s(&f),
            "--key-type",
            "str",
            "--keys",
            s(&fa),
            "-v",
            "extra",
        ]);
        assert_eq!(answers, "1\n".repeat(1001), "{format}");
        let bloom = [
            "spark-v1", "spark-v2", "guava", "sbbf", "classic", "blocked", "counting",
        ]
        .contains(format);
        if bloom {
            // Insert-order free (and the count is the number of inserts): the same bytes as one build.
            let with_extra = keys_file(
                dir.path(),
                "with_extra",
                &[all.clone(), vec!["extra".into()]].concat(),
            );
            build(&with_extra, &whole);
            assert!(
                std::fs::read(&f).unwrap() == std::fs::read(&whole).unwrap(),
                "{format}"
            );
        }
        let before = std::fs::read(&f).unwrap();
        let bad = keys_file(dir.path(), "bad", &["fine".into(), "x".into()]);
        let e = err(&["add", s(&f), "--key-type", "i64", "--keys", s(&bad)]);
        assert!(e.contains("line 1"), "{e}");
        assert_eq!(std::fs::read(&f).unwrap(), before, "{format}");
    }
    let ribbon = dir.path().join("r");
    ok(&build_args("ribbon", "str", "1", "0.01", &f1, &ribbon));
    let before = std::fs::read(&ribbon).unwrap();
    let e = err(&["add", s(&ribbon), "--key-type", "str", "-v", "new"]);
    assert!(e.contains("static"), "{e}");
    assert_eq!(std::fs::read(&ribbon).unwrap(), before);
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// A missing column, a type that does not fit, an empty column, a damaged file: one line each,
/// and no file at --out.
#[test]
fn build_from_data_refuses_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let file = data("ndv/pyarrow-ndv.parquet");
    let out_arg = s(&out);
    // `build --format FORMAT --fpr 0.01 --out OUT`, the source to follow.
    let head = |format| {
        [
            "build", "--format", format, "--fpr", "0.01", "--out", out_arg,
        ]
    };
    let build = |extra: &[&str]| {
        let mut a = head("sbbf").to_vec();
        a.extend_from_slice(extra);
        let e = err(&a);
        assert!(!out.exists(), "{e}");
        e
    };
    let junk = dir.path().join("junk.parquet");
    std::fs::write(&junk, b"PAR1 not really PAR1").unwrap();
    let duckdb = data("lake/duckdb-0.parquet");
    let from_parquet: [(&[&str], &[&str]); 5] = [
        (
            &["--from-parquet", s(&file), "--column", "nope"],
            &["no column \"nope\"", "useless"],
        ),
        (
            &[
                "--from-parquet",
                s(&file),
                "--column",
                "right",
                "--key-type",
                "str",
            ],
            &["--key-type str does not fit column right (INT64)"],
        ),
        (
            &[
                "--from-parquet",
                s(&file),
                "--column",
                "useless",
                "--key-type",
                "i64",
            ],
            &["does not fit"],
        ),
        (
            &["--from-parquet", s(&junk), "--column", "x"],
            &["junk.parquet", "not a valid Parquet file"],
        ),
        (
            &["--from-parquet", s(&file), s(&duckdb), "--column", "right"],
            &["duckdb-0.parquet", "no column"],
        ),
    ];
    for (args, says) in from_parquet {
        let e = build(args);
        assert!(says.iter().all(|w| e.contains(w)), "{args:?}: {e}");
    }
    let csv = dir.path().join("x.csv");
    std::fs::write(&csv, "a,b\n1,2\n3\n").unwrap();
    let e = build(&["--from-csv", s(&csv), "--column", "b"]);
    assert!(e.contains("x.csv"), "{e}");
    std::fs::write(&csv, "a,b\n1,2\nx,4\n").unwrap();
    let e = build(&["--from-csv", s(&csv), "--column", "a", "--key-type", "i64"]);
    assert!(
        e.contains("x.csv: row 3") && e.contains("not a decimal integer"),
        "{e}"
    );
    let e = build(&["--keys", s(&csv), "--from-csv", s(&csv), "--column", "a"]);
    assert!(e.contains("cannot be used with"), "{e}");
    let e = build(&["--keys", s(&csv)]);
    assert!(e.contains("--key-type and --n"), "{e}");
    // Through the binary: one line on standard error, status 1, no panic.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_bloomlab"))
        .args(head("guava"))
        .args(["--from-parquet", s(&file), "--column", "nope"])
        .output()
        .unwrap();
    let stderr = String::from_utf8(o.stderr).unwrap();
    assert_eq!(o.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("bloomlab: ") && stderr.contains("no column"),
        "{stderr}"
    );
    assert!(!out.exists());
    // A failed build leaves an existing --out as it was.
    std::fs::write(&out, b"old").unwrap();
    let mut a = head("sbbf").to_vec();
    a.extend(["--from-parquet", s(&file), "--column", "nope"]);
    let e = run(&a);
    assert!(e.is_err());
    assert_eq!(std::fs::read(&out).unwrap(), b"old");
}

/// Spark's and Guava's headers announce the file's length, so a large filter file is read whole
/// and a large file of another kind is refused from its head.
#[test]
fn large_files_are_read_whole_only_when_their_header_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let keys = keys_file(dir.path(), "k", &["7".into(), "8".into()]);
    for format in ["spark-v1", "spark-v2", "guava"] {
        let out = dir.path().join(format);
        // About 18 MB: past the 16 MiB read without a matching header.
        ok(&build_args(format, "i64", "15000000", "0.01", &keys, &out));
        let bytes = std::fs::read(&out).unwrap();
        assert!(bytes.len() > 16 << 20);
        assert_eq!(
            bloomlab_cli::jvm::announced_len(&bytes[..64]),
            Some(bytes.len() as u64)
        );
        let answers = ok(&[
            "contains",
            s(&out),
            "--key-type",
            "i64",
            "--keys",
            s(&keys),
            "-v",
            "9",
        ]);
        assert!(answers.ends_with("\n1\n1\n"), "{format}: {answers}");
        // One byte more: no longer a filter of that length, and refused.
        let mut longer = bytes;
        longer.push(0);
        std::fs::write(&out, &longer).unwrap();
        let e = err(&["contains", s(&out), "--key-type", "i64", "--keys", s(&keys)]);
        assert!(e.contains("unknown format"), "{e}");
    }
}

/// `add` keeps the file's mode; `build` gives a new file the usual mode, not a temporary
/// file's 0600.
#[cfg(unix)]
#[test]
fn atomic_writes_keep_the_file_mode() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let keys = keys_file(dir.path(), "k", &["1".into()]);
    let out = dir.path().join("f");
    ok(&build_args("guava", "i64", "10", "0.01", &keys, &out));
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let plain = dir.path().join("plain");
    std::fs::write(&plain, b"").unwrap();
    assert_eq!(
        mode(&out),
        mode(&plain),
        "the mode std::fs gives a new file"
    );
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o640)).unwrap();
    ok(&["add", s(&out), "--key-type", "i64", "-v", "2"]);
    assert_eq!(mode(&out), 0o640);
}
