//! What the command's test files share: where the test data is, paths as arguments, the
//! `build` and `contains` argument lists, key files, and the formats `build` writes.

// Each test file uses its own part of this module.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// A file or folder under `tests/data`.
pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A path as a command-line argument.
pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `keys` one a line, written to `dir/name`.
pub fn keys_file(dir: &Path, name: &str, keys: &[String]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, keys.join("\n") + "\n").unwrap();
    p
}

/// `build --format FORMAT --key-type KEY_TYPE --n N --fpr FPR --keys KEYS --out OUT`.
pub fn build_args<'a>(
    format: &'a str,
    key_type: &'a str,
    n: &'a str,
    fpr: &'a str,
    keys: &'a Path,
    out: &'a Path,
) -> [&'a str; 13] {
    [
        "build",
        "--format",
        format,
        "--key-type",
        key_type,
        "--n",
        n,
        "--fpr",
        fpr,
        "--keys",
        s(keys),
        "--out",
        s(out),
    ]
}

/// `contains FILTER --key-type KEY_TYPE --keys KEYS`.
pub fn contains_args<'a>(filter: &'a Path, key_type: &'a str, keys: &'a Path) -> [&'a str; 6] {
    [
        "contains",
        s(filter),
        "--key-type",
        key_type,
        "--keys",
        s(keys),
    ]
}

/// Every format `build` writes, ribbon (static) last, cuckoo just before it.
pub const FORMATS: &[&str] = &[
    "spark-v1",
    "spark-v2",
    "guava",
    "sbbf",
    "classic",
    "blocked",
    "counting",
    "scalable",
    "expandable",
    "cuckoo",
    "ribbon",
];
