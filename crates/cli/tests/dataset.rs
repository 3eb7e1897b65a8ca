//! The dataset commands on files other engines wrote (tests/data/make_lake.py): `contains`
//! over 24 files from DuckDB, pyarrow and Spark against DuckDB's own `parquet_bloom_probe`;
//! `audit` on filters sized from a wrong NDV against the exact distinct counts and the
//! formulas; a damaged file among good ones.

use std::collections::HashMap;
use std::fs::File;
use std::path::Path;
use std::process::Command;

use parquet::file::reader::FileReader;
use parquet::file::serialized_reader::SerializedFileReader;
use serde_json::Value;

mod common;
use common::{build_args, data, s};

/// Run in process: (output, error output, result).
fn run(args: &[&str]) -> (String, String, Result<(), bloomlab_cli::CliError>) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let mut all = vec!["bloomlab"];
    all.extend_from_slice(args);
    let r = bloomlab_cli::run_with(all, &mut out, &mut err);
    (
        String::from_utf8(out).unwrap(),
        String::from_utf8(err).unwrap(),
        r,
    )
}

fn ok(args: &[&str]) -> String {
    let (out, err, r) = run(args);
    r.unwrap_or_else(|e| panic!("{args:?}: {e}; {err}"));
    assert!(err.is_empty(), "{err}");
    out
}

fn json_lines(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn base(v: &Value) -> String {
    let f = v["file"].as_str().unwrap();
    Path::new(f)
        .file_name()
        .unwrap()
        .to_str()
        .unwrap()
        .to_string()
}

/// Our answers keyed by (file name, key).
fn by_file_and_key(lines: &[Value]) -> HashMap<(String, String), Value> {
    lines
        .iter()
        .map(|v| {
            let key = v["key"].as_str().unwrap().to_string();
            ((base(v), key), v["row_groups"].clone())
        })
        .collect()
}

#[test]
fn the_lake_holds_24_files_from_three_writers() {
    let mut writers = HashMap::new();
    let files: Vec<_> = std::fs::read_dir(data("lake")).unwrap().collect();
    assert_eq!(files.len(), 24);
    for f in files {
        let r = SerializedFileReader::new(File::open(f.unwrap().path()).unwrap()).unwrap();
        let by = r
            .metadata()
            .file_metadata()
            .created_by()
            .unwrap()
            .to_string();
        let w = ["DuckDB", "parquet-cpp-arrow", "parquet-mr"]
            .into_iter()
            .find(|w| by.contains(w))
            .unwrap_or_else(|| panic!("{by}"));
        *writers.entry(w).or_insert(0) += 1;
    }
    assert_eq!(writers.len(), 3, "{writers:?}");
    assert!(writers.values().all(|&n| n == 8), "{writers:?}");
}

/// For every file, key and row group, `contains` over the directory (and over a glob) answers
/// as DuckDB's `parquet_bloom_probe` did over the same files.
#[test]
fn contains_over_the_lake_equals_duckdbs_probe() {
    let mut counts = HashMap::new();
    for column in ["id", "name"] {
        let keys = data(&format!("lake.{column}.keys"));
        let expected =
            json_lines(&std::fs::read_to_string(data(&format!("lake.{column}.expected"))).unwrap());
        let want = by_file_and_key(&expected);
        let lake = data("lake");
        let pattern = format!("{}/*.parquet", s(&lake));
        for target in [s(&lake), pattern.as_str()] {
            let args = [
                "contains",
                target,
                "--column",
                column,
                "--keys",
                s(&keys),
                "--json",
            ];
            let got = json_lines(&ok(&args));
            assert_eq!(got.len(), expected.len(), "{column} {target}");
            assert_eq!(by_file_and_key(&got), want, "{column} {target}");
        }
        for v in &expected {
            for a in v["row_groups"].as_array().unwrap() {
                *counts.entry(a.to_string()).or_insert(0) += 1;
            }
        }
    }
    // Each kind of answer occurs often enough for the comparison to test it.
    for kind in ["true", "false", "null"] {
        assert!(counts.get(kind).copied().unwrap_or(0) >= 100, "{counts:?}");
    }
}

/// `-v` values answer as the same keys in a file do, before them; the text output names the
/// file and gives one field per row group.
#[test]
fn values_on_the_command_line_and_the_text_form() {
    let lake = data("lake");
    let keys = data("lake.name.keys");
    let first = std::fs::read_to_string(&keys).unwrap();
    let first = first.lines().next().unwrap();
    let both = ok(&[
        "contains",
        s(&lake),
        "--column",
        "name",
        "-v",
        first,
        "--keys",
        s(&keys),
    ]);
    let only_file = ok(&["contains", s(&lake), "--column", "name", "--keys", s(&keys)]);
    let lines: Vec<&str> = both.lines().collect();
    let file_lines: Vec<&str> = only_file.lines().collect();
    let per_file = file_lines.len() / 24;
    assert_eq!(lines.len(), 24 * (per_file + 1));
    for f in 0..24 {
        let ours = &lines[f * (per_file + 1)..(f + 1) * (per_file + 1)];
        let theirs = &file_lines[f * per_file..(f + 1) * per_file];
        assert_eq!(&ours[1..], theirs);
        assert_eq!(
            ours[0], theirs[0],
            "the -v value is the key file's first key"
        );
        let fields: Vec<&str> = ours[0].split('\t').collect();
        assert!(
            fields[0].ends_with(".parquet") && fields[1] == first,
            "{}",
            ours[0]
        );
        assert!(fields[2].split(' ').all(|a| ["0", "1", "-"].contains(&a)));
    }
}

/// The Parquet writers' size for `ndv` values at `fpp`, from the formula.
fn writers_size(ndv: f64, fpp: f64) -> u64 {
    let bits = -8.0 * ndv / (1.0 - fpp.powf(1.0 / 8.0)).ln();
    let bytes = (bits as u64 / 8).clamp(32, 128 << 20);
    bytes.next_power_of_two().min(128 << 20)
}

/// FPR from a bitset: the mean over 32-byte blocks of Π over its eight words of ones/32.
fn fpr_of_bitset(bits: &[u8]) -> f64 {
    let blocks = bits.chunks_exact(32);
    let n = blocks.len() as f64;
    blocks
        .map(|b| {
            b.chunks_exact(4)
                .map(|w| u32::from_le_bytes(w.try_into().unwrap()).count_ones() as f64 / 32.0)
                .product::<f64>()
        })
        .sum::<f64>()
        / n
}

/// The bitset of a chunk's bloom filter: the last `bytes` bytes of its section.
fn bitset(file: &Path, rg: usize, column: &str, bytes: usize) -> Vec<u8> {
    let r = SerializedFileReader::new(File::open(file).unwrap()).unwrap();
    let g = r.metadata().row_group(rg);
    let c = (0..g.num_columns())
        .map(|i| g.column(i))
        .find(|c| c.column_path().string() == column)
        .unwrap();
    let (off, len) = (
        c.bloom_filter_offset().unwrap() as usize,
        c.bloom_filter_length().unwrap() as usize,
    );
    let all = std::fs::read(file).unwrap();
    all[off + len - bytes..off + len].to_vec()
}

fn exact_counts() -> HashMap<(String, String, usize), f64> {
    std::fs::read_to_string(data("ndv.distinct"))
        .unwrap()
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let key = (f[0].to_string(), f[1].to_string(), f[2].parse().unwrap());
            (key, f[3].parse().unwrap())
        })
        .collect()
}

/// An audited chunk's file, relative to `tests/data`.
fn data_path(c: &Value) -> &str {
    c["file"]
        .as_str()
        .unwrap()
        .split("tests/data/")
        .nth(1)
        .unwrap()
}

/// Checks every chunk of one audited column with [`check_chunk`]; returns how many were
/// checked against the fill's estimate and the largest relative error among them.
fn check_column(
    v: &Value,
    exact: &HashMap<(String, String, usize), f64>,
    target: f64,
) -> (usize, f64) {
    let column = v["column"].as_str().unwrap();
    let (mut checked, mut worst) = (0, 0.0f64);
    for c in v["chunks"].as_array().unwrap() {
        let key = (
            data_path(c).to_string(),
            column.to_string(),
            c["row_group"].as_u64().unwrap() as usize,
        );
        if let Some(err) = check_chunk(c, column, exact[&key], target) {
            worst = worst.max(err.abs());
            checked += 1;
        }
    }
    (checked, worst)
}

/// Checks one audited chunk against the exact count, the formulas and the verdict rule; returns
/// the relative error of the fill's estimate, where the filter is not saturated.
fn check_chunk(c: &Value, column: &str, exact: f64, target: f64) -> Option<f64> {
    let path = data(data_path(c));
    let bytes = c["bytes"].as_u64()?;
    let rg = c["row_group"].as_u64().unwrap() as usize;
    let fpr = c["fpr"].as_f64().unwrap();
    let by_formula = fpr_of_bitset(&bitset(&path, rg, column, bytes as usize));
    assert!(
        (fpr - by_formula).abs() <= 1e-12 * by_formula.max(1e-300),
        "{c}"
    );
    if let Some(d) = c["exact_distinct"].as_f64() {
        assert_eq!(d, exact, "{c}");
    }
    let right = c["right_size_bytes"].as_u64().unwrap();
    assert_eq!(
        right,
        writers_size(c["distinct"].as_f64().unwrap(), target),
        "{c}"
    );
    // The verdict from the exact count is the one given.
    let from_exact = if fpr >= 0.5 {
        "useless"
    } else if fpr > 2.0 * target {
        "undersized"
    } else if bytes > 2 * writers_size(exact, target) {
        "oversized"
    } else {
        "fine"
    };
    assert_eq!(c["verdict"], from_exact, "{c}");
    (fpr < 0.5).then(|| c["fill_distinct"].as_f64().unwrap() / exact - 1.0)
}

/// pyarrow honours a too-small NDV and parquet-java a too-large one: `audit` flags exactly
/// those columns, its distinct counts are the exact ones (dictionary) or within 10 % (fill),
/// its FPR and sizes are the formulas'.
#[test]
fn audit_flags_the_wrongly_sized_columns() {
    let target = 0.01;
    let lines = json_lines(&ok(&["audit", s(&data("ndv")), "--json"]));
    let exact = exact_counts();
    let verdicts: Vec<(String, String)> = lines
        .iter()
        .map(|v| {
            let c = v["column"].as_str().unwrap().to_string();
            (c, v["verdict"].as_str().unwrap().to_string())
        })
        .collect();
    let want = [
        ("right", "fine"),
        ("under", "undersized"),
        ("useless", "useless"),
        ("nofilter", "none"),
        ("over", "oversized"),
    ];
    let want: Vec<(String, String)> = want
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
    assert_eq!(verdicts, want);
    let (mut checked, mut worst) = (0, 0.0f64);
    for v in &lines {
        let (n, w) = check_column(v, &exact, target);
        checked += n;
        worst = worst.max(w);
        let chunks = v["chunks"].as_array().unwrap();
        let sum = |f: &str| chunks.iter().filter_map(|c| c[f].as_u64()).sum::<u64>();
        assert_eq!(v["bytes"].as_u64().unwrap(), sum("bytes"));
        assert_eq!(
            v["right_size_bytes"].as_u64().unwrap(),
            sum("right_size_bytes")
        );
        let saved = v["saved_bytes"].as_i64().unwrap();
        assert_eq!(saved, sum("bytes") as i64 - sum("right_size_bytes") as i64);
    }
    assert!(
        checked >= 8 && worst <= 0.10,
        "{checked} chunks, worst {worst}"
    );
    // The oversized column: Spark's filters hold about 1400 values in 128 KiB each.
    let over = lines.iter().find(|v| v["column"] == "over").unwrap();
    assert_eq!(over["bytes"], 3 * 131072);
    assert!(
        over["settings"]["parquet-java"]
            .as_str()
            .unwrap()
            .contains("parquet.bloom.filter.expected.ndv#over=14")
    );
}

/// The same check over the lake (DuckDB sizes from its dictionary, pyarrow and Spark from the
/// NDV given): every chunk's figures against the exact counts and the formulas.
#[test]
fn audit_of_the_lake_matches_the_exact_counts() {
    let target = 0.05;
    let lines = json_lines(&ok(&["audit", s(&data("lake")), "--fpr", "0.05", "--json"]));
    let exact = exact_counts();
    let (mut checked, mut dictionary, mut worst) = (0, 0, 0.0f64);
    for v in &lines {
        let chunks = v["chunks"].as_array().unwrap();
        dictionary += chunks
            .iter()
            .filter(|c| c["exact_distinct"].is_u64())
            .count();
        let (n, w) = check_column(v, &exact, target);
        checked += n;
        worst = worst.max(w);
    }
    assert!(
        checked >= 100 && dictionary >= 20 && worst <= 0.10,
        "{checked} {dictionary} {worst}"
    );
}

/// A file that is not Parquet and one cut short, among good ones: each gets its line, the
/// others are answered, and the status says some failed.
#[test]
fn a_damaged_file_does_not_stop_the_others() {
    let dir = tempfile::tempdir().unwrap();
    for f in std::fs::read_dir(data("lake")).unwrap() {
        let p = f.unwrap().path();
        std::fs::copy(&p, dir.path().join(p.file_name().unwrap())).unwrap();
    }
    std::fs::write(dir.path().join("junk.parquet"), b"not parquet at all").unwrap();
    let good = std::fs::read(data("lake/spark-0.parquet")).unwrap();
    let mut cut = good[..good.len() - 300].to_vec();
    cut.extend_from_slice(&good[good.len() - 8..]);
    std::fs::write(dir.path().join("cut.parquet"), cut).unwrap();
    let keys = data("lake.id.keys");
    let args = [
        "contains",
        s(dir.path()),
        "--column",
        "id",
        "--keys",
        s(&keys),
        "--json",
    ];
    let (out, err, r) = run(&args);
    let e = r.unwrap_err();
    assert_eq!(e.to_string(), "2 of 26 files failed");
    let errs: Vec<&str> = err.lines().collect();
    assert_eq!(errs.len(), 2, "{err}");
    assert!(
        errs[0].contains("cut.parquet") && errs[0].contains("not a valid Parquet file"),
        "{err}"
    );
    assert!(
        errs[1].contains("junk.parquet") && errs[1].contains("unknown format"),
        "{err}"
    );
    assert_eq!(json_lines(&out).len(), 24 * 60);
    for cmd in [vec!["inspect"], vec!["audit"]] {
        let mut args = cmd.clone();
        args.push(s(dir.path()));
        let (_, err, r) = run(&args);
        assert_eq!(
            r.unwrap_err().to_string(),
            "2 of 26 files failed",
            "{cmd:?}"
        );
        assert_eq!(err.lines().count(), 2, "{cmd:?}: {err}");
    }
    // Through the binary: the lines on standard error, status 1, no panic.
    let o = Command::new(env!("CARGO_BIN_EXE_bloomlab"))
        .args(args)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let stderr = String::from_utf8(o.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 3, "{stderr}");
    assert!(
        stderr.ends_with("bloomlab: 2 of 26 files failed\n"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"));
}

/// `inspect` over a dataset heads each file's table with its path; with `--json`, one object
/// per column chunk. Bare filter files in a dataset answer with one element.
#[test]
fn inspect_and_bare_filters_in_a_dataset() {
    let lake = data("lake");
    let text = ok(&["inspect", s(&lake)]);
    let heads: Vec<&str> = text.lines().filter(|l| l.starts_with("==> ")).collect();
    assert_eq!(heads.len(), 24);
    assert!(heads[0].ends_with("duckdb-0.parquet <=="), "{}", heads[0]);
    let single = ok(&["inspect", s(&lake.join("duckdb-0.parquet"))]);
    assert!(
        text.contains(&single),
        "each file's text as `inspect FILE` prints it"
    );
    let chunks = json_lines(&ok(&["inspect", s(&lake), "--json"]));
    let rows: usize = text
        .lines()
        .filter(|l| l.starts_with(|c: char| c.is_ascii_digit()))
        .count();
    assert_eq!(chunks.len(), rows);
    for c in &chunks {
        assert_eq!(c["bytes"].is_null(), c["fill"].is_null(), "{c}");
    }

    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("keys");
    std::fs::write(&keys, "a\nb\n").unwrap();
    for format in ["guava", "blocked"] {
        let out = dir.path().join(format!("{format}.bf"));
        ok(&build_args(format, "str", "10", "0.01", &keys, &out));
    }
    let pattern = format!("{}/*.bf", s(dir.path()));
    let got = json_lines(&ok(&[
        "contains",
        &pattern,
        "--key-type",
        "str",
        "-v",
        "a",
        "--json",
    ]));
    assert_eq!(got.len(), 2);
    for v in &got {
        assert_eq!(v["row_groups"], serde_json::json!([true]), "{v}");
    }
    let info = json_lines(&ok(&["inspect", &pattern, "--json"]));
    assert!(
        info[0]["format"]
            .as_str()
            .unwrap()
            .starts_with("bloomlab blocked v")
    );
    assert_eq!(info[1]["format"], "guava");
}

/// `bloomlab contains … | head -1`: when the reader goes away the command stops quietly with
/// status 0. The output (about 120 KB) is larger than a pipe's buffer (64 KiB on Linux), so
/// the command is still writing when the pipe closes.
#[test]
fn a_closed_output_ends_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let keys = data("lake.name.keys");
    let mut child = Command::new(env!("CARGO_BIN_EXE_bloomlab"))
        .args(["contains", s(&data("lake")), "--column", "name", "--json"])
        .args(["--keys", s(&keys)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert!(first.starts_with("{\"file\":"), "{first}");
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(String::from_utf8(o.stderr).unwrap(), "");
}
