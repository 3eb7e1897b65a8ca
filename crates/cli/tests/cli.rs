//! The built `bloomlab` binary: every subcommand on bloomlab's own formats and Parquet bloom
//! filter sections, and bad inputs (one line on stderr, non-zero exit, never a panic).

use std::path::PathBuf;
use std::process::{Command, Output};

mod common;
use common::{FORMATS, build_args, contains_args, s};

struct Dir(tempfile::TempDir);

impl Dir {
    fn new() -> Self {
        Dir(tempfile::tempdir().unwrap())
    }
    fn file(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let p = self.0.path().join(name);
        std::fs::write(&p, contents).unwrap();
        p
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.path().join(name)
    }
}

fn bloomlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bloomlab"))
        .args(args)
        .output()
        .unwrap()
}

/// Success: stdout.
fn ok(args: &[&str]) -> String {
    let o = bloomlab(args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// Failure: one line on stderr, the given exit status, nothing on stdout, no panic.
fn fails(args: &[&str], code: i32) -> String {
    let o = bloomlab(args);
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(o.status.code(), Some(code), "{args:?}: {err}");
    assert!(o.stdout.is_empty(), "{args:?}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err}");
    assert!(err.starts_with("bloomlab: "), "{err}");
    err
}

/// 2 000 members and 4 000 non-members of each key type, as key-file text.
fn key_sets() -> Vec<(&'static str, String, String)> {
    let ints = |r: std::ops::Range<i64>| {
        r.map(|i| format!("{}\n", i * 7_919 - 5_000_000))
            .collect::<String>()
    };
    let strs = |r: std::ops::Range<i64>| r.map(|i| format!("ключ-{i}\n")).collect::<String>();
    vec![
        ("i64", ints(0..2_000), ints(2_000..6_000)),
        ("str", strs(0..2_000), strs(2_000..6_000)),
        ("bytes", strs(0..2_000), strs(2_000..6_000)),
    ]
}

#[test]
fn build_then_contains_for_every_format_and_key_type() {
    let d = Dir::new();
    for &(t, ref members, ref others) in &key_sets() {
        let m = d.file(&format!("{t}.members"), members);
        let o = d.file(&format!("{t}.others"), others);
        for &format in FORMATS {
            let out = d.path(&format!("{format}.{t}"));
            ok(&build_args(format, t, "2000", "0.01", &m, &out));
            let hits = ok(&contains_args(&out, t, &m));
            assert_eq!(
                hits,
                "1\n".repeat(2_000),
                "{format} {t}: a member answered 0"
            );
            let fp = ok(&contains_args(&out, t, &o));
            assert_eq!(fp.lines().count(), 4_000);
            assert!(fp.lines().all(|l| l == "0" || l == "1"));
            // Every format meets 1 % at 2 000 keys within a factor the Parquet sizing rule
            // allows (its power-of-two rounding and unblocked formula): 4 000 probes at
            // p ≤ 2 % give at most 80 + 5σ (σ ≈ 8.9) false positives.
            let positives = fp.lines().filter(|&l| l == "1").count();
            assert!(positives <= 125, "{format} {t}: {positives} of 4000");
        }
    }
}

#[test]
fn key_types_map_to_our_key_encoding() {
    // An i64 is its 8 little-endian bytes: a filter built from `bytes` lines holding those
    // bytes answers the same as one built from the decimal lines.
    let d = Dir::new();
    let values = [-1i64, 0, 1, i64::MIN, i64::MAX, 42];
    let dec: String = values.iter().map(|v| format!("{v}\n")).collect();
    let dec = d.file("dec", dec);
    let out = d.path("f");
    ok(&build_args("classic", "i64", "10", "0.001", &dec, &out));
    let mut f = bloomlab_classic::BloomFilter::with_fpr(10, 0.001).unwrap();
    for v in values {
        f.insert(&v);
    }
    assert_eq!(std::fs::read(&out).unwrap(), f.to_bytes());
    // str and bytes hash the same bytes; empty lines and CRLF line ends are keys too.
    let text = d.file("t", "a\r\n\r\nключ\nlast");
    let (a, b) = (d.path("a"), d.path("b"));
    for (t, p) in [("str", &a), ("bytes", &b)] {
        ok(&build_args("blocked", t, "10", "0.01", &text, p));
    }
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    let mut g = bloomlab_blocked::BlockedBloomFilter::with_fpr(10, 0.01).unwrap();
    for k in ["a", "", "ключ", "last"] {
        g.insert(k);
    }
    assert_eq!(std::fs::read(&a).unwrap(), g.to_bytes());
}

#[test]
fn sbbf_sections_are_what_arrow_rs_reads() {
    let d = Dir::new();
    let keys: String = (0..1_000).map(|i| format!("k{i}\n")).collect();
    let keys = d.file("keys", keys);
    let out = d.path("f.sbbf");
    ok(&build_args("sbbf", "str", "1000", "0.01", &keys, &out));
    let bytes = std::fs::read(&out).unwrap();
    let theirs = parquet::bloom_filter::Sbbf::from_bytes(&bytes).unwrap();
    let probes: String = (0..3_000).map(|i| format!("k{i}\n")).collect();
    let probes_file = d.file("probes", &probes);
    let ours = ok(&contains_args(&out, "str", &probes_file));
    let expected: String = probes
        .lines()
        .map(|k| if theirs.check(k) { "1\n" } else { "0\n" })
        .collect();
    assert_eq!(ours, expected);
    let inspect = ok(&["inspect", s(&out)]);
    let mut l = inspect.lines();
    assert_eq!(l.next(), Some("parquet sbbf"));
    assert_eq!(l.next(), Some("k:             8 (probes per key)"));
    // The Parquet writers' size for 1 000 values at 1 %: 9.68 bits each, rounded up to a
    // power of two (2 KiB).
    assert_eq!(l.next(), Some("bits:          16384"));
    let count = l.nth(2).unwrap();
    assert!(count.starts_with("count:         ≈ "), "{count}");
    let est: f64 = count.split_whitespace().nth(2).unwrap().parse().unwrap();
    assert!((est - 1_000.0).abs() < 60.0, "{count}");
}

#[test]
fn inspect_names_our_formats_and_keeps_the_audit() {
    let d = Dir::new();
    let keys: String = (0..3_000).map(|i| format!("{i}\n")).collect();
    let keys = d.file("keys", keys);
    let expect = [
        ("classic", "bloomlab classic v1"),
        ("blocked", "bloomlab blocked v"),
        ("counting", "bloomlab counting v1"),
        ("cuckoo", "bloomlab cuckoo v1"),
        ("scalable", "bloomlab scalable v2"),
        ("expandable", "bloomlab expandable v"),
        ("ribbon", "bloomlab ribbon v"),
    ];
    for (format, first) in expect {
        let out = d.path(format);
        let args = build_args(format, "i64", "1000", "0.01", &keys, &out);
        if format == "cuckoo" {
            // 3 000 keys do not fit a cuckoo filter for 1 000: the build says so, and
            // writes nothing.
            let e = fails(&args, 1);
            assert!(e.contains("give a larger --n"), "{e}");
            assert!(!out.exists());
            continue;
        }
        ok(&args);
        let text = ok(&["inspect", s(&out)]);
        let mut l = text.lines();
        assert!(l.next().unwrap().starts_with(first), "{text}");
        assert!(l.next().unwrap().starts_with("k:"), "{text}");
        assert!(l.next().unwrap().starts_with("bits:"), "{text}");
        assert!(l.next().unwrap().starts_with("fill:"), "{text}");
        assert!(l.next().unwrap().starts_with("estimated FPR:"), "{text}");
        assert_eq!(l.next().unwrap(), "count:         3000", "{text}");
        assert!(text.contains("audit (seed 003 checklist)"), "{text}");
        if !["scalable", "expandable", "ribbon"].contains(&format) {
            assert!(text.contains("PAST design load"), "{format}: {text}");
        }
    }
    // The seed's BLM1 layout.
    let mut f = bloomlab_classic::BloomFilter::with_fpr(100, 0.01).unwrap();
    f.insert(&1i64);
    let blm1 = d.file("f.blm1", f.to_blm1().unwrap());
    assert!(ok(&["inspect", s(&blm1)]).starts_with("bloomlab classic BLM1\n"));
    let one = d.file("one", "1\n2\n");
    assert_eq!(ok(&contains_args(&blm1, "i64", &one)), "1\n0\n");
}

#[test]
fn bad_inputs_get_one_line_and_a_non_zero_exit() {
    let d = Dir::new();
    let keys = d.file("keys", "1\n2\nthree\n4\n");
    let good = d.file("good", "1\n");
    let out = d.path("out");
    // A bad key line: which line, and why; nothing written.
    let e = fails(&build_args("classic", "i64", "10", "0.01", &keys, &out), 1);
    assert!(
        e.contains("keys: line 3: \"three\": not a decimal integer"),
        "{e}"
    );
    assert!(!out.exists());
    let bad_utf8 = d.file("bad_utf8", b"ok\n\xff\xfe\n");
    let e = fails(
        &build_args("classic", "str", "10", "0.01", &bad_utf8, &out),
        1,
    );
    assert!(e.contains("line 2") && e.contains("UTF-8"), "{e}");
    // An unknown format: one line naming the formats there are.
    let e = fails(&build_args("bogus", "i64", "10", "0.01", &good, &out), 2);
    assert!(
        e.contains("bogus") && e.contains("spark-v2") && e.contains("ribbon"),
        "{e}"
    );
    // Parameters a filter refuses.
    let e = fails(&build_args("classic", "i64", "10", "1.5", &good, &out), 1);
    assert!(
        e.contains("false-positive rate") && e.contains("1.5"),
        "{e}"
    );
    // Missing files.
    let missing = d.path("missing");
    let e = fails(&["inspect", s(&missing)], 1);
    assert!(e.contains("cannot read"), "{e}");
    let e = fails(&contains_args(&missing, "i64", &good), 1);
    assert!(e.contains("cannot read"), "{e}");
    // Files in no known format, or damaged.
    for (name, bytes) in [
        ("empty", &b""[..]),
        ("text", b"hello world, not a filter"),
        ("blab", b"BLAB\x01\x00garbage"),
        ("par1", b"PAR1 not really a parquet file PAR1"),
        ("zeros", &[0u8; 64]),
    ] {
        let p = d.file(name, bytes);
        let e = fails(&["inspect", s(&p)], 1);
        assert!(e.contains(name), "{e}");
        fails(&contains_args(&p, "i64", &good), 1);
    }
    // A flipped bit in one of our files fails its checksum.
    ok(&build_args("blocked", "i64", "10", "0.01", &good, &out));
    let mut bytes = std::fs::read(&out).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    let flipped = d.file("flipped", &bytes);
    let e = fails(&contains_args(&flipped, "i64", &good), 1);
    assert!(e.contains("checksum"), "{e}");
    // A truncated Parquet section.
    ok(&build_args("sbbf", "i64", "10", "0.01", &good, &out));
    let bytes = std::fs::read(&out).unwrap();
    let cut = d.file("cut", &bytes[..bytes.len() - 1]);
    fails(&["inspect", s(&cut)], 1);
    // Options that do not go together.
    let e = fails(&["contains", s(&out), "--keys", s(&good)], 1);
    assert!(e.contains("--key-type"), "{e}");
    let e = fails(
        &[
            "contains",
            s(&out),
            "--key-type",
            "i64",
            "--column",
            "x",
            "--keys",
            s(&good),
        ],
        1,
    );
    assert!(e.contains("--column applies only to Parquet files"), "{e}");
    // A bad key line while querying.
    let e = fails(&contains_args(&out, "i64", &keys), 1);
    assert!(e.contains("line 3"), "{e}");
    // A keyed file needs its secret.
    let scheme = bloomlab_keyed::SipScheme::from_secret([7; 16]);
    let mut kf = bloomlab_classic::BloomFilter::with_fpr_and_scheme(100, 0.01, scheme).unwrap();
    kf.insert("a");
    let keyed = d.file("keyed", kf.to_bytes());
    let e = fails(&contains_args(&keyed, "str", &good), 1);
    assert!(e.contains("keyed"), "{e}");
    assert!(ok(&["inspect", s(&keyed)]).starts_with("bloomlab classic v1\n"));
}

#[test]
fn help_and_version_succeed() {
    let h = ok(&["--help"]);
    assert!(
        h.contains("build") && h.contains("contains") && h.contains("inspect"),
        "{h}"
    );
    assert!(ok(&["--version"]).starts_with("bloomlab "));
    fails(&[], 2);
}
