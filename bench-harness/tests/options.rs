//! `--keys`, `--zipf` and `--threads`: parsing, bad input (one line on stderr, a non-zero
//! exit, never a panic) and what the key shapes and streams promise.

#![forbid(unsafe_code)]

mod common;

use std::collections::HashSet;
use std::process::Command;

use bench_harness::cli::{self, Cli};
use bench_harness::keys::{KeyShape, Keys, Workload, parse_zipf};
use clap::Parser;

#[test]
fn key_shapes_parse() {
    assert_eq!("u64".parse::<KeyShape>().unwrap(), KeyShape::U64);
    assert_eq!("uuid".parse::<KeyShape>().unwrap(), KeyShape::Uuid);
    assert_eq!("url".parse::<KeyShape>().unwrap(), KeyShape::Url);
    assert_eq!("str:24".parse::<KeyShape>().unwrap(), KeyShape::Str(24));
    assert_eq!(
        "file:/tmp/k.txt".parse::<KeyShape>().unwrap(),
        KeyShape::File("/tmp/k.txt".into())
    );
    for bad in [
        "str:",
        "str:x",
        "str:0",
        "str:-3",
        "str:99999",
        "file:",
        "u32",
        "",
    ] {
        let e = bad.parse::<KeyShape>().unwrap_err().to_string();
        assert!(!e.contains('\n'), "one line: {e}");
        assert!(
            e.contains("--keys") || e.contains("key shape"),
            "{bad}: {e}"
        );
    }
    // Round trip through Display.
    for s in ["u64", "uuid", "url", "str:7"] {
        assert_eq!(s.parse::<KeyShape>().unwrap().to_string(), s);
    }
}

#[test]
fn zipf_and_threads_parse() {
    assert_eq!(parse_zipf("1.1").unwrap(), 1.1);
    assert_eq!(parse_zipf("0.5").unwrap(), 0.5);
    for bad in ["0", "-1", "-0.5", "nan", "inf", "x", ""] {
        assert!(parse_zipf(bad).is_err(), "{bad} accepted");
    }
    assert_eq!(cli::parse_threads("4").unwrap(), 4);
    for bad in ["0", "-1", "x", "1.5", "100000"] {
        assert!(cli::parse_threads(bad).is_err(), "{bad} accepted");
    }
    let c = Cli::try_parse_from([
        "bench-harness",
        "run",
        "--keys",
        "str:24",
        "--zipf",
        "1.1",
        "--threads",
        "2",
    ])
    .unwrap();
    match c.command {
        Some(cli::Command::Run(a)) => {
            assert_eq!(a.keys, KeyShape::Str(24));
            assert_eq!(a.zipf, Some(1.1));
            assert_eq!(a.threads, Some(2));
        }
        other => panic!("parsed as {other:?}"),
    }
}

/// Run the binary with `args`; it must fail with one line on stderr and no panic.
fn fails_cleanly(args: &[&str], expect: &str) {
    let out = Command::new(env!("CARGO_BIN_EXE_bench-harness"))
        .args(args)
        .output()
        .expect("the binary runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} succeeded");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    assert!(err.contains(expect), "{args:?}: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    // clap adds a usage line and a help hint after its one-line error.
    assert!(
        lines.len() == 1 || lines[0].starts_with("error:"),
        "{args:?}: {err}"
    );
}

#[test]
fn bad_options_exit_non_zero_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let out = out.to_str().unwrap();
    let missing = dir.path().join("no-such-file.txt");
    let missing = format!("file:{}", missing.display());
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, "\n\n").unwrap();
    let empty = format!("file:{}", empty.display());
    let base = [
        "run",
        "--n",
        "100",
        "--experiments",
        "none",
        "--quiet",
        "--out",
        out,
    ];
    let with = |extra: &[&str]| -> Vec<String> {
        base.iter()
            .chain(extra.iter())
            .map(|s| s.to_string())
            .collect()
    };
    for (extra, expect) in [
        (vec!["--keys", missing.as_str()], "cannot read key file"),
        (vec!["--keys", empty.as_str()], "holds no keys"),
        (vec!["--keys", "str:abc"], "str:LEN"),
        (vec!["--keys", "str:0"], "LEN between"),
        (vec!["--zipf", "0"], "above 0"),
        (vec!["--zipf", "-1.5"], "above 0"),
        (vec!["--threads", "0"], "1 to 1024"),
    ] {
        let args = with(&extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        fails_cleanly(&args, expect);
    }
    assert!(
        !std::path::Path::new(out).exists(),
        "nothing written on bad input"
    );
}

#[test]
fn a_key_file_smaller_than_n_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("keys.txt");
    std::fs::write(&f, "alpha\nbeta\r\ngamma\nbeta\n").unwrap();
    let shape = KeyShape::File(f.clone());
    let e = Workload::new(&shape, 1, 10, 10).unwrap_err().to_string();
    assert!(e.contains("3 distinct keys"), "{e}");
    // Three distinct lines (the \r removed, the repeat dropped): members then non-members.
    let w = Workload::new(&shape, 1, 2, 5).unwrap();
    assert_eq!(w.members.get(0), b"alpha");
    assert_eq!(w.members.get(1), b"beta");
    assert_eq!(w.probes.get(0), b"gamma");
    assert_eq!(w.probes.len(), 5);
    let members: HashSet<&[u8]> = w.members.iter().collect();
    assert!(w.probes.iter().all(|p| !members.contains(p)));
}

#[test]
fn every_shape_gives_distinct_members_and_disjoint_probes() {
    for shape in [
        KeyShape::U64,
        KeyShape::Uuid,
        KeyShape::Str(3),
        KeyShape::Str(24),
        KeyShape::Url,
    ] {
        let w = Workload::new(&shape, 9, 5_000, 5_000).unwrap();
        assert_eq!(w.members.len(), 5_000);
        assert_eq!(w.probes.len(), 5_000);
        let m: HashSet<&[u8]> = w.members.iter().collect();
        let p: HashSet<&[u8]> = w.probes.iter().collect();
        assert_eq!(m.len(), 5_000, "{shape}: members distinct");
        assert_eq!(p.len(), 5_000, "{shape}: probes distinct");
        assert!(m.is_disjoint(&p), "{shape}");
        match &shape {
            KeyShape::U64 => assert_eq!(w.members.stride(), Some(8)),
            KeyShape::Uuid => assert_eq!(w.members.stride(), Some(16)),
            KeyShape::Str(n) => {
                assert_eq!(w.members.stride(), Some(*n));
                assert!(
                    w.members
                        .iter()
                        .all(|k| k.iter().all(|b| b.is_ascii_graphic()))
                );
            }
            KeyShape::Url => {
                assert_eq!(w.members.stride(), None, "URLs vary in length");
                assert!(w.members.iter().all(|k| k.starts_with(b"https://")));
            }
            KeyShape::File(_) => unreachable!(),
        }
    }
    // Too short to hold the keys asked for.
    let e = Workload::new(&KeyShape::Str(1), 1, 1_000, 1_000)
        .unwrap_err()
        .to_string();
    assert!(e.contains("too few"), "{e}");
}

#[test]
fn the_warm_up_stream_never_touches_a_timed_key() {
    for zipf in [None, Some(1.1)] {
        let w = Workload::new(&KeyShape::Str(12), 5, 20_000, 40_000).unwrap();
        let (timed, warm) = w.streams(5, 4_096, &[0, 50, 100], zipf).unwrap();
        let warm: HashSet<&[u8]> = warm.iter().collect();
        assert!(warm.len() > 1_000);
        for (s, pct) in timed.iter().zip([0u32, 50, 100]) {
            assert_eq!(s.len(), 4_096);
            assert!(
                s.iter().all(|k| !warm.contains(k)),
                "mix {pct} % shares a key with the warm-up ({zipf:?})"
            );
            let members: HashSet<&[u8]> = w.members.iter().collect();
            let hits = s.iter().filter(|k| members.contains(k)).count();
            assert_eq!(hits, 4_096 * pct as usize / 100, "mix {pct} % ({zipf:?})");
        }
    }
}

#[test]
fn zipf_streams_are_skewed_and_uniform_ones_are_not() {
    let w = Workload::new(&KeyShape::U64, 3, 20_000, 40_000).unwrap();
    let top_share = |s: &Keys| {
        let mut counts = std::collections::HashMap::new();
        for k in s.iter() {
            *counts.entry(k).or_insert(0usize) += 1;
        }
        let mut c: Vec<usize> = counts.into_values().collect();
        c.sort_unstable_by(|a, b| b.cmp(a));
        c.iter().take(10).sum::<usize>() as f64 / s.len() as f64
    };
    let (uniform, _) = w.streams(3, 8_192, &[50], None).unwrap();
    let (skewed, _) = w.streams(3, 8_192, &[50], Some(1.1)).unwrap();
    // Uniform streams hold distinct keys: the ten most frequent are 10 of 8192.
    assert!((top_share(&uniform[0]) - 10.0 / 8_192.0).abs() < 1e-12);
    // Zipf 1.1 over ~15 000 keys: the ten hottest members and ten hottest non-members take
    // well over a fifth of the queries (harmonic-like sums: about 0.5 of each half).
    assert!(top_share(&skewed[0]) > 0.2, "{}", top_share(&skewed[0]));
}

#[test]
fn keys_store_fixed_and_varying_lengths() {
    let mut k = Keys::new();
    k.push(b"ab");
    k.push(b"cd");
    assert_eq!(k.stride(), Some(2));
    k.push(b"efg");
    assert_eq!(k.stride(), None);
    assert_eq!(k.get(2), b"efg");
    let mut seen = Vec::new();
    k.for_each(|x| seen.push(x.to_vec()));
    assert_eq!(seen, vec![b"ab".to_vec(), b"cd".to_vec(), b"efg".to_vec()]);
    assert_eq!(k.slice(1..3).views(), vec![&b"cd"[..], &b"efg"[..]]);
    assert_eq!(Keys::from_u64s(&[1]).get(0), &1u64.to_le_bytes());
}

#[test]
fn threads_query_one_shared_filter() {
    let entries = bench_harness::adapters::select(Some(&[
        "blocked".into(),
        "blocked-atomic".into(),
        "fastbloom".into(),
    ]))
    .unwrap();
    let ctx = common::context(&entries, 4, 1_000, 1_000);
    let e = bench_harness::experiments::threads::run(&ctx, 2, 20_000).unwrap();
    let names: Vec<&str> = e.series.iter().map(|s| s.filter.as_str()).collect();
    assert_eq!(names, ["blocked", "fastbloom", "blocked-atomic"]);
    for s in &e.series {
        assert_eq!(s.points.len(), 2);
        assert_eq!((s.points[0].x, s.points[1].x), (1.0, 2.0));
        assert!(
            s.points.iter().all(|p| p.y > 0.0 && p.y.is_finite()),
            "{s:?}"
        );
    }
    assert_eq!(e.ratios.len(), 3);
}
