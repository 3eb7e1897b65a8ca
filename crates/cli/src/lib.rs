//! The `bloomlab` command: build, query and inspect filter files — Spark's and Guava's
//! Bloom filters, the Parquet split-block Bloom filter (SBBF) and bloomlab's own formats —
//! and the bloom filters inside Parquet data files, without writing Rust.
//!
//! Install it with `cargo install --path crates/cli`. The binary is a thin `main` around
//! [`run`], which takes the arguments and a writer for the output, so every behaviour below
//! is tested in process as well as through the built binary.
//!
//! # Commands
//!
//! - `bloomlab build --format F --key-type T --n N --fpr P --keys KEYFILE --out FILE` builds
//!   a filter sized for `N` keys at false-positive rate `P`, inserts every key of `KEYFILE`
//!   and writes it to `FILE`. Formats ([`BuildFormat`]):
//!   - `spark-v1`, `spark-v2`: `org.apache.spark.util.sketch.BloomFilter`'s serialized form
//!     (V2, with its seed, is `BloomFilter.create`'s default since Spark 4.1); `guava`:
//!     `com.google.common.hash.BloomFilter.writeTo`'s. Sized exactly as the JVM's
//!     `create(N, P)`, so the bytes equal the JVM's for the same keys.
//!   - `sbbf`: a Parquet bloom filter section (Thrift `BloomFilterHeader`, then the bitset),
//!     sized by the rule Parquet writers use for `N` distinct values at `P`.
//!   - `classic`, `blocked`, `counting`, `cuckoo`, `scalable`, `expandable`, `ribbon`:
//!     bloomlab's own filters in their checked, versioned envelope (`with_fpr(N, P)`; the
//!     scalable and expandable filters start at `N` and grow; the Ribbon filter is static
//!     and sized from the keys, so `N` is unused).
//! - `bloomlab contains FILE --key-type T --keys KEYFILE` prints one line per key, `1`
//!   (maybe present) or `0` (definitely absent), in the key file's order. The format is
//!   read from the file: a Parquet data file (`PAR1` at both ends), a bloomlab file (`BLAB`
//!   or `BLM1`), a Spark filter (big-endian version 1 or 2), a Guava filter (strategy
//!   ordinal), or a bare Parquet bloom filter section (a Thrift header announcing exactly the
//!   bytes that follow).
//! - `bloomlab contains DATA.parquet --column NAME --keys KEYFILE` answers from each row
//!   group's bloom filter of column `NAME` (its dotted path): one line per key, one field per
//!   row group separated by spaces: `1` (the row group's filter may hold the key), `0` (it
//!   does not) or `-` (no bloom filter for that column there). The key is the column's
//!   physical type's plain encoding: BYTE_ARRAY the line's bytes; INT32 and INT64 a decimal
//!   integer; FLOAT and DOUBLE a decimal number; FIXED_LEN_BYTE_ARRAY hex digits of exactly
//!   the column's width. `--key-type` does not apply there.
//! - `bloomlab inspect FILE`: for a filter file, the format and version on the first line
//!   (`spark v1`, `spark v2`, `guava`, `parquet sbbf`, `bloomlab blocked v2`, …), then k,
//!   bits, fill, estimated FPR and count ([`Summary`]); bloomlab's own files add the full
//!   inspection and audit of [`bloomlab_uses::inspect`]. For a Parquet file: one line for the
//!   file, then a tab-separated table of every column chunk — row group, column, physical
//!   type, bitset bytes, fill, estimated FPR and estimated distinct values, `-` where the
//!   chunk has no bloom filter.
//!
//! - `bloomlab build --from-parquet DATA... --column C --format F --fpr P --out FILE`
//!   builds from every non-null value of column `C` in every row group of the Parquet files
//!   (`DATA` as for datasets below), in file order, repeats kept; sized for the distinct
//!   values it counts unless `--n` is given. The key type follows the physical type
//!   (BYTE_ARRAY → `bytes`, INT32 and INT64 → `i64`) unless `--key-type` names one that fits
//!   (`str` or `bytes` for BYTE_ARRAY, which must then be UTF-8 for `str`), so the bytes are
//!   those `build --keys` writes for the same values as lines with `--n` their distinct
//!   count. `--from-csv FILE... --column NAME` does the same for a CSV column named in the
//!   header line (read by the `csv` crate), `str` unless `--key-type` says otherwise.
//! - `bloomlab merge A B ... --out FILE` ORs filters of one format and shape into one: Spark
//!   (`mergeInPlace`: same bits, k, version and seed), Guava (`putAll`: same bits, k and
//!   strategy), Parquet sections (same size) and bloomlab's classic, blocked and SBBF filters
//!   (same shape and hash scheme). The result is byte for byte the filter built over all the
//!   keys. Counting, scalable, cuckoo, expandable and Ribbon filters are refused with the
//!   reason (their union is not the filter of both key sets), as is any pair that differs.
//! - `bloomlab add FILE --key-type T --keys KEYFILE` (or `-v VALUE`) inserts into a filter
//!   file in place (a Ribbon filter refuses: it is static).
//! - `bloomlab audit DATA... [--fpr P]` judges a Parquet dataset's bloom filters against the
//!   target `P` (default 0.01), per column across every file: see [`audit`]. For each column
//!   chunk with a filter, its distinct values are the dictionary page's entry count where every
//!   data page is dictionary-encoded (or the statistics' distinct count), else the estimate
//!   from the filter's fill, else (a saturated filter) the chunk's value count; its
//!   `right_size_bytes` is the Parquet writers' size for those values at `P` (bits =
//!   −8·NDV / ln(1 − P^(1/8)), a power of two bytes from 32 B to 128 MiB). Its verdict:
//!   `useless` when its FPR at its fill is 50 % or more, `undersized` above 2·P, `oversized`
//!   when its bytes exceed 2 × `right_size_bytes`, else `fine`; a column's is the worst of its
//!   chunks' (`none` when none has a filter). The table has one row per column (verdict, row
//!   groups with a filter, row groups, bytes, right-size bytes, bytes saved, the largest
//!   distinct count, the largest FPR), then for each column not `fine` the writer settings
//!   that give the right size: parquet-java/Spark `parquet.bloom.filter.expected.ndv#C` and
//!   `parquet.bloom.filter.fpp#C`, pyarrow `bloom_filter_options`, DuckDB
//!   `BLOOM_FILTER_FALSE_POSITIVE_RATIO` (DuckDB sizes from its dictionary).
//!
//! ## Datasets
//!
//! `contains`, `inspect`, `audit` and `build --from-parquet` take several paths: a file as it
//! is, a directory for every `*.parquet` file under it (recursively, in path order), a glob
//! (`'lake/2024-*/*.parquet'`, expanded by the `glob` crate). Keys come from `--keys FILE`
//! and `-v VALUE` (repeatable, asked first). Given one plain file, the output is as above;
//! given more, each line of `contains` starts with the file and the key
//! (`PATH<TAB>KEY<TAB>1 0 -`), and `inspect` heads each file's text with `==> PATH <==`.
//! Files are read on as many threads as the machine has, in bounded memory (each Parquet file
//! only in its footer and the bloom filter sections, `audit` also the dictionary page of each
//! chunk with a filter, never the data pages; a bare filter file whole, but a file past 16 MiB
//! only when its header announces a filter of exactly its length), and answered in path
//! order; a run of 16 or more files shows a progress bar when standard error is a terminal.
//! A file that cannot be read, is not Parquet or is damaged gets one line on standard error
//! (`bloomlab: PATH: why`) and the others go on; the command then ends with
//! `N of M files failed` and status 1.
//!
//! ```
//! let lake = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/lake");
//! let mut out = Vec::new();
//! bloomlab_cli::run(
//!     ["bloomlab", "contains", lake, "--column", "name", "-v", "名前-0", "-v", "nope"],
//!     &mut out,
//! )?;
//! let text = String::from_utf8(out).unwrap();
//! let lines: Vec<&str> = text.lines().collect();
//! assert_eq!(lines.len(), 2 * 24); // two keys, 24 files
//! // DuckDB's file: three row groups, the last without a filter.
//! assert_eq!(lines[0], format!("{lake}/duckdb-0.parquet\t名前-0\t1 1 -"));
//! assert_eq!(lines[1], format!("{lake}/duckdb-0.parquet\tnope\t0 0 -"));
//! # Ok::<(), bloomlab_cli::CliError>(())
//! ```
//!
//! ## JSON Lines (`--json`)
//!
//! One JSON object per line (serde_json; keys as text, invalid UTF-8 replaced by U+FFFD):
//!
//! - `contains`: one per file and key, `{"file": PATH, "key": KEY, "row_groups": [...]}`,
//!   each element `true` (may hold the key), `false` (does not) or `null` (no filter for the
//!   column there); a bare filter file has one element.
//! - `inspect`: per Parquet column chunk `{"file", "row_group", "column", "type", "values",
//!   "bytes", "fill", "est_fpr", "est_distinct"}` (the last four `null` without a filter, and
//!   `est_distinct` `null` when a block is full); per bare filter file `{"file", "format", "k",
//!   "bits", "fill", "est_fpr", "count", "count_estimated"}`.
//! - `audit`: one per column, [`audit::ColumnAudit`]: `{"column": NAME, "verdict": "useless" |
//!   "undersized" | "oversized" | "fine" | "none", "row_groups": N,
//!   "row_groups_with_filter": N, "bytes": B, "right_size_bytes": B, "saved_bytes": B,
//!   "est_distinct": N, "max_fpr": P, "target_fpr": P, "settings": {"parquet-java", "pyarrow",
//!   "duckdb"} | null, "chunks": [...]}`, each chunk an [`audit::ChunkAudit`] (`file`,
//!   `row_group`, `bytes`, `fill`, `fpr`, `fill_distinct`, `exact_distinct`, `values`,
//!   `distinct`, `distinct_source`, `right_size_bytes`, `verdict`).
//!
//! ```
//! let ndv = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/ndv");
//! let mut out = Vec::new();
//! bloomlab_cli::run(["bloomlab", "audit", ndv, "--json"], &mut out)?;
//! let columns: Vec<serde_json::Value> = String::from_utf8(out).unwrap()
//!     .lines().map(|l| serde_json::from_str(l).unwrap()).collect();
//! let verdicts: Vec<(&str, &str)> = columns.iter()
//!     .map(|c| (c["column"].as_str().unwrap(), c["verdict"].as_str().unwrap()))
//!     .collect();
//! // pyarrow honoured a too-small NDV, Spark (parquet-java) a too-large one.
//! assert_eq!(verdicts, [("right", "fine"), ("under", "undersized"), ("useless", "useless"),
//!                       ("nofilter", "none"), ("over", "oversized")]);
//! let over = &columns[4];
//! assert_eq!(over["bytes"], 393216); // three row groups, 128 KiB each
//! assert_eq!(over["right_size_bytes"], 5120); // 2 KiB, 2 KiB and 1 KiB
//! assert!(over["settings"]["parquet-java"].as_str().unwrap()
//!     .contains("parquet.bloom.filter.expected.ndv#over=1425"));
//!
//! let mut out = Vec::new();
//! // 1000000 is one of the ids in DuckDB's file: its two filters answer true.
//! let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/lake/duckdb-0.parquet");
//! bloomlab_cli::run(["bloomlab", "contains", file, "--column", "id", "-v", "1000000", "--json"],
//!                   &mut out)?;
//! assert_eq!(String::from_utf8(out).unwrap(),
//!            format!("{{\"file\":\"{file}\",\"key\":\"1000000\",\"row_groups\":[true,true,null]}}\n"));
//! # Ok::<(), bloomlab_cli::CliError>(())
//! ```
//!
//! Building from a Parquet column, and inspecting files:
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let lake = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/lake");
//! let out = dir.path().join("names.sbbf");
//! let out = out.to_str().unwrap();
//! let mut text = Vec::new();
//! // Every name of the 24 files, sized for the distinct names counted (1 500 at most).
//! bloomlab_cli::run(["bloomlab", "build", "--format", "sbbf", "--fpr", "0.01",
//!                    "--from-parquet", lake, "--column", "name", "--key-type", "str",
//!                    "--out", out], &mut text)?;
//! bloomlab_cli::run(["bloomlab", "contains", out, "--key-type", "str", "-v", "名前-7"],
//!                   &mut text)?;
//! assert_eq!(text, b"1\n");
//! let mut text = Vec::new();
//! bloomlab_cli::run(["bloomlab", "inspect", out], &mut text)?;
//! let text = String::from_utf8(text).unwrap();
//! assert!(text.starts_with("parquet sbbf\nk:             8 (probes per key)\nbits:          16384\n"));
//! let mut json = Vec::new();
//! let file = format!("{lake}/pyarrow-1.parquet");
//! bloomlab_cli::run(["bloomlab", "inspect", &file, "--json"], &mut json)?;
//! let chunks: Vec<serde_json::Value> = String::from_utf8(json).unwrap()
//!     .lines().map(|l| serde_json::from_str(l).unwrap()).collect();
//! // Two row groups × two columns; pyarrow gave `name` no filter in odd-numbered files.
//! assert_eq!(chunks.len(), 4);
//! assert_eq!((chunks[0]["column"].as_str(), chunks[0]["bytes"].as_u64()),
//!            (Some("id"), Some(1024)));
//! assert!(chunks[1]["bytes"].is_null() && chunks[1]["column"] == "name");
//! # Ok::<(), bloomlab_cli::CliError>(())
//! ```
//!
//! Building from a CSV column, merging per-partition filters, adding keys:
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let p = |name: &str| dir.path().join(name).to_str().unwrap().to_string();
//! std::fs::write(p("a.csv"), "user,city\n1,Lyon\n2,Oslo\n").unwrap();
//! std::fs::write(p("b.csv"), "user,city\n3,Kyiv\n").unwrap();
//! let mut out = Vec::new();
//! let mut run = |args: &[&str]| bloomlab_cli::run([&["bloomlab"], args].concat(), &mut out);
//! let common =
//!     ["build", "--format", "spark-v2", "--fpr", "0.01", "--n", "100", "--column", "city"];
//! run(&[&common[..], &["--from-csv", &p("a.csv"), "--out", &p("a.bf")]].concat())?;
//! run(&[&common[..], &["--from-csv", &p("b.csv"), "--out", &p("b.bf")]].concat())?;
//! run(&[&common[..], &["--from-csv", &p("a.csv"), &p("b.csv"), "--out", &p("all.bf")]].concat())?;
//! run(&["merge", &p("a.bf"), &p("b.bf"), "--out", &p("merged.bf")])?;
//! assert_eq!(std::fs::read(p("merged.bf")).unwrap(), std::fs::read(p("all.bf")).unwrap());
//! run(&["add", &p("a.bf"), "--key-type", "str", "-v", "Kyiv"])?;
//! assert_eq!(std::fs::read(p("a.bf")).unwrap(), std::fs::read(p("all.bf")).unwrap());
//! run(&["contains", &p("a.bf"), "--key-type", "str", "-v", "Oslo", "-v", "Kyiv"])?;
//! drop(run);
//! assert_eq!(out, b"1\n1\n");
//! # Ok::<(), bloomlab_cli::CliError>(())
//! ```
//!
//! # Keys
//!
//! A key file holds one key per line ([`keys::lines`]): lines end at `\n`, and a `\r`
//! before it is dropped, so Windows line ends give the same keys (a key cannot end in `\r`).
//! A last line without a newline is a key; empty lines are keys (the empty string or byte
//! array; an error for `i64`). Key types ([`KeyType`]):
//!
//! | `--key-type` | line | Spark | Guava | bloomlab's filters and `sbbf` hash |
//! |---|---|---|---|---|
//! | `i64` | decimal, `-` allowed | `putLong` | `Funnels.longFunnel()` | the 8 little-endian bytes (the `Key` impl of `i64`; Parquet's plain INT64) |
//! | `str` | valid UTF-8 text | `putString` | `Funnels.stringFunnel(UTF_8)` | the UTF-8 bytes |
//! | `bytes` | any bytes | `putBinary` | `Funnels.byteArrayFunnel()` | the bytes |
//!
//! So `str` and `bytes` give the same answers for bloomlab's filters and the SBBF, and a
//! filter must be queried with the key type it was built with.
//!
//! # Errors
//!
//! A file that cannot be read, a file in no known format or damaged, a bad key line (its
//! number, the line and why), an unknown format or option: one line on standard error and
//! exit status 1 (2 for a usage error), never a panic. `build`, `merge` and `add` write a new
//! file in the same directory and rename it over `--out` (or the filter file) only when all
//! went well ([`merge::write_atomic`]), so a failure leaves nothing half-written there. A
//! missing column, a key type that does not fit the column, filters that do not merge: one
//! line, status 1. In a dataset, each failed file gets its line and the others go on.
//!
//! ```
//! let dir = tempfile::tempdir().unwrap();
//! let keys = dir.path().join("keys.txt");
//! std::fs::write(&keys, "-1\n42\n").unwrap();
//! let out = dir.path().join("f.blab");
//! let arg = |p: &std::path::Path| p.to_str().unwrap().to_string();
//! let mut sink = Vec::new();
//! bloomlab_cli::run(
//!     ["bloomlab", "build", "--format", "blocked", "--key-type", "i64", "--n", "100",
//!      "--fpr", "0.01", "--keys", &arg(&keys), "--out", &arg(&out)],
//!     &mut sink,
//! )?;
//! bloomlab_cli::run(
//!     ["bloomlab", "contains", &arg(&out), "--key-type", "i64", "--keys", &arg(&keys)],
//!     &mut sink,
//! )?;
//! assert_eq!(sink, b"1\n1\n"); // every inserted key answers 1
//! # Ok::<(), bloomlab_cli::CliError>(())
//! ```
//!
//! # Guarantees (each tested)
//!
//! - Spark and Guava: for the same keys, `build` writes the bytes the jars write, and
//!   `contains` on a file the jars wrote answers as the jars do on 10⁴ probes (`tests/jvm.rs`,
//!   on `bloomlab-jvm`'s known-answer files from spark-sketch and Guava).
//! - Parquet: on files DuckDB and pyarrow wrote (`tests/data/make_parquet.py`), the answers
//!   equal DuckDB's own `parquet_bloom_probe` and arrow-rs's `Sbbf::check`, row group by row
//!   group, and every value a row group holds answers `1` (`tests/parquet.rs`).
//! - Datasets (`tests/dataset.rs`, on `tests/data/make_lake.py`'s 24 files, 8 each by
//!   DuckDB, pyarrow and Spark): `contains` over the directory and over a glob answers, for
//!   every file, key and row group, as DuckDB's `parquet_bloom_probe` does; `audit`'s
//!   dictionary counts equal DuckDB's `count(DISTINCT)` per row group and its fill estimates are
//!   within 10 % of it for every filter not saturated; its FPR and right sizes are the
//!   formulas' from the bitset; files sized from a wrong NDV get exactly the verdicts the
//!   rule gives.
//! - Memory (measured, not a test): over 2.17 GiB of Parquet (24 files by DuckDB and pyarrow,
//!   400 row groups), `contains` of 100 keys peaked at 7.2 MiB resident and `audit` at
//!   6.8 MiB, and all 40 000 (file, key, row group) answers equalled DuckDB's
//!   `parquet_bloom_probe` over the same glob (`python3 crates/cli/scripts/big_lake.py DIR`,
//!   release build, AMD EPYC Zen 4 with 2 vCPU shared with other builds, files in the page
//!   cache).
//! - `build --from-parquet` and `--from-csv` write the bytes `build --keys` writes; `merge` of
//!   per-partition Spark, Guava, SBBF, classic and blocked filters the bytes of one filter over
//!   all keys; `add` then `contains` finds every key (`tests/build_merge.rs`).
//! - Cost: a bare filter file is read whole; a Parquet file only in its footer and the bloom
//!   filter sections asked for (never its data pages), each length checked against the file
//!   before it is read. One hash per key, one probe per row group.
//!
//! # Why one command over files
//!
//! The filters that cross system boundaries are files: a Spark job's sketch, a JVM service's
//! persisted Guava filter, a Parquet column chunk's SBBF. Reading the format from the file
//! and answering in plain lines lets a shell script ask "which of these keys can be here, and
//! in which row groups" of any of them, and compare the answers with the engine's own.
#![warn(missing_docs)]
#![forbid(unsafe_code)]

use std::ffi::OsString;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

use bloomlab_core::format::Variant;
use clap::{Args, Parser, Subcommand, ValueEnum};

pub mod audit;
pub mod dataset;
pub mod from_data;
pub mod jvm;
pub mod keys;
pub mod merge;
pub mod ours;
pub mod parquet_file;
pub mod summary;

pub use keys::{KeyType, TypedKey};
pub use summary::{Count, Summary};

use parquet_file::ParquetBlooms;

/// Everything that can go wrong, each a one-line message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CliError {
    /// Arguments clap refused (or help and version, which are not failures).
    #[error("{}", usage_line(.0))]
    Usage(clap::Error),
    /// A file could not be read or written.
    #[error("{0}")]
    Io(String),
    /// A file in no known format, or damaged.
    #[error("{0}")]
    BadFile(String),
    /// A key line that is not a key of the type asked for.
    #[error("{0}")]
    BadKey(String),
    /// Options that do not go together, or parameters a filter refuses.
    #[error("{0}")]
    Invalid(String),
    /// The reader of the output went away (`bloomlab contains … | head`): the command stops,
    /// and the binary exits quietly with status 0, as a pipeline expects.
    #[error("the output was closed")]
    OutputClosed,
    /// Some files of a dataset failed (each named on the error output as it failed); the
    /// others were answered.
    #[error("{failed} of {total} files failed")]
    Failed {
        /// Files that failed.
        failed: usize,
        /// Files in the dataset.
        total: usize,
    },
}

impl CliError {
    /// The exit status: 0 for `--help` and `--version` and a closed output, 2 for other usage
    /// errors, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Usage(e) if !e.use_stderr() => 0,
            CliError::OutputClosed => 0,
            CliError::Usage(_) => 2,
            _ => 1,
        }
    }
}

/// clap's message spans lines (usage, tips): keep its substance on one line (help and version
/// text as they are).
fn usage_line(e: &clap::Error) -> String {
    let text = e.to_string();
    if !e.use_stderr() {
        return text;
    }
    let parts: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
        .collect();
    parts.join("; ")
}

/// Build, query and inspect filter files and the bloom filters of Parquet files.
#[derive(Debug, Parser)]
#[command(name = "bloomlab", version, about)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build a filter from a key file, or from a column of Parquet or CSV files, and write it.
    Build(BuildArgs),
    /// Answer 1 (maybe present) or 0 (absent) for each key; for a Parquet file, one field per
    /// row group (1, 0, or - without a bloom filter). Takes files, directories and globs.
    Contains(ContainsArgs),
    /// Say what filter files or Parquet files' bloom filters are.
    Inspect(InspectArgs),
    /// Judge the sizes of a Parquet dataset's bloom filters, column by column.
    Audit(AuditArgs),
    /// Merge filters of one format and shape into one (Spark's mergeInPlace, Guava's putAll).
    Merge(MergeArgs),
    /// Insert keys into a filter file in place (atomically).
    Add(AddArgs),
}

/// The formats `build` writes: the JVM's, the Parquet section, and each of bloomlab's variants
/// but the split-block one (whose format name, `sbbf`, is the Parquet section's), from the
/// facade's one list of variants.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuildFormat {
    /// Spark's `BloomFilter`, serialized format version 1 (`spark-v1`).
    SparkV1,
    /// Spark's `BloomFilter`, serialized format version 2, the default since Spark 4.1
    /// (`spark-v2`).
    SparkV2,
    /// Guava's `BloomFilter` (`writeTo`; `guava`).
    Guava,
    /// A Parquet bloom filter section (header and bitset; `sbbf`).
    Sbbf,
    /// One of bloomlab's variants, in its checked envelope (named as the variant is).
    Ours(Variant),
}

impl BuildFormat {
    const COUNT: usize = 3 + Variant::ALL.len();
    /// Every format, the JVM's and the section first, then bloomlab's in tag order.
    const ALL: [BuildFormat; Self::COUNT] = {
        let mut all = [BuildFormat::SparkV1; Self::COUNT];
        all[1] = BuildFormat::SparkV2;
        all[2] = BuildFormat::Guava;
        all[3] = BuildFormat::Sbbf;
        let (mut i, mut j) = (0, 4);
        while i < Variant::ALL.len() {
            if !matches!(Variant::ALL[i], Variant::Sbbf) {
                all[j] = BuildFormat::Ours(Variant::ALL[i]);
                j += 1;
            }
            i += 1;
        }
        all
    };
}

impl ValueEnum for BuildFormat {
    fn value_variants<'a>() -> &'a [Self] {
        &Self::ALL
    }

    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        use clap::builder::PossibleValue;
        Some(match self {
            BuildFormat::SparkV1 => PossibleValue::new("spark-v1")
                .help("Spark's BloomFilter, serialized format version 1"),
            BuildFormat::SparkV2 => PossibleValue::new("spark-v2").help(
                "Spark's BloomFilter, serialized format version 2 (the default since Spark 4.1)",
            ),
            BuildFormat::Guava => PossibleValue::new("guava").help("Guava's BloomFilter (writeTo)"),
            BuildFormat::Sbbf => PossibleValue::new("sbbf")
                .help("A Parquet bloom filter section (header and bitset)"),
            BuildFormat::Ours(v) => {
                let d = bloomlab_uses::any::declaration(*v);
                PossibleValue::new(v.name()).help(format!(
                    "bloomlab's {} filter: {}",
                    v.name(),
                    d.design
                ))
            }
        })
    }
}

impl fmt::Display for BuildFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let v = self.to_possible_value().expect("no variant is skipped");
        f.write_str(v.get_name())
    }
}

/// Options of `build`.
#[derive(Debug, Args)]
pub struct BuildArgs {
    /// The format to write.
    #[arg(long)]
    pub format: BuildFormat,
    /// How each key is read (with --from-parquet: one that fits the column's type, which
    /// gives the default).
    #[arg(long)]
    pub key_type: Option<KeyType>,
    /// Expected number of keys (the JVM's expectedInsertions / expectedNumItems); with
    /// --from-parquet or --from-csv, the distinct values counted when not given.
    #[arg(long)]
    pub n: Option<u64>,
    /// Target false-positive rate, in (0, 1).
    #[arg(long)]
    pub fpr: f64,
    /// The key file, one key per line.
    #[arg(long, conflicts_with_all = ["from_parquet", "from_csv"])]
    pub keys: Option<PathBuf>,
    /// Parquet files, directories or globs whose column --column gives the keys.
    #[arg(long, num_args = 1.., conflicts_with = "from_csv", requires = "column")]
    pub from_parquet: Vec<PathBuf>,
    /// CSV files (with a header line) whose column --column gives the keys.
    #[arg(long, num_args = 1.., requires = "column")]
    pub from_csv: Vec<PathBuf>,
    /// The column (a Parquet column's dotted path, or a CSV header name).
    #[arg(long)]
    pub column: Option<String>,
    /// Where to write the filter.
    #[arg(long)]
    pub out: PathBuf,
}

/// Where the keys come from: `-v` values and a key file.
#[derive(Debug, Args)]
pub struct KeyArgs {
    /// The key file, one key per line.
    #[arg(long)]
    pub keys: Option<PathBuf>,
    /// A key given on the command line (repeatable; asked before the key file's).
    #[arg(short = 'v', long = "value")]
    pub values: Vec<String>,
}

/// Options of `contains`.
#[derive(Debug, Args)]
pub struct ContainsArgs {
    /// Filter files, Parquet files, directories (every *.parquet file under them) or globs.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// How each key is read (filter files only).
    #[arg(long)]
    pub key_type: Option<KeyType>,
    /// The column whose bloom filters answer (Parquet files only; its dotted path).
    #[arg(long)]
    pub column: Option<String>,
    /// The keys.
    #[command(flatten)]
    pub keys: KeyArgs,
    /// JSON Lines: one object per key and file.
    #[arg(long)]
    pub json: bool,
}

/// Options of `inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// Filter files, Parquet files, directories (every *.parquet file under them) or globs.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// JSON Lines: one object per bare filter file and per Parquet column chunk.
    #[arg(long)]
    pub json: bool,
}

/// Options of `audit`.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Parquet files, directories (every *.parquet file under them) or globs.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The target false-positive rate the right sizes are for.
    #[arg(long, default_value_t = 0.01)]
    pub fpr: f64,
    /// JSON Lines: one object per column.
    #[arg(long)]
    pub json: bool,
}

/// Options of `merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Two or more filter files of one format and shape.
    #[arg(num_args = 2.., required = true)]
    pub inputs: Vec<PathBuf>,
    /// Where to write the merged filter.
    #[arg(long)]
    pub out: PathBuf,
}

/// Options of `add`.
#[derive(Debug, Args)]
pub struct AddArgs {
    /// The filter file, changed in place.
    pub file: PathBuf,
    /// How each key is read: as the filter was built.
    #[arg(long)]
    pub key_type: KeyType,
    /// The keys.
    #[command(flatten)]
    pub keys: KeyArgs,
}

/// Parse `args` (the first is the program name) and run the command, writing its output to
/// `out` and each failed file's line (for a dataset) to standard error.
pub fn run<I, T>(args: I, out: &mut dyn Write) -> Result<(), CliError>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    run_with(args, out, &mut std::io::stderr())
}

/// [`run`], with each failed file's line written to `err`.
pub fn run_with<I, T>(args: I, out: &mut dyn Write, err: &mut dyn Write) -> Result<(), CliError>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = Cli::try_parse_from(args).map_err(CliError::Usage)?;
    match cli.command {
        Command::Build(a) => build(&a),
        Command::Contains(a) => contains(&a, out, err),
        Command::Inspect(a) => inspect(&a, out, err),
        Command::Audit(a) => audit(&a, out, err),
        Command::Merge(a) => merge_files(&a),
        Command::Add(a) => add(&a),
    }
}

fn write_out(out: &mut dyn Write, bytes: &[u8]) -> Result<(), CliError> {
    out.write_all(bytes)
        .and_then(|_| out.flush())
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::BrokenPipe => CliError::OutputClosed,
            _ => CliError::Io(format!("cannot write the output: {e}")),
        })
}

fn read(path: &Path) -> Result<Vec<u8>, CliError> {
    std::fs::read(path).map_err(|e| CliError::Io(format!("cannot read {}: {e}", path.display())))
}

fn in_file(path: &Path, e: CliError) -> CliError {
    match e {
        CliError::BadFile(m) => CliError::BadFile(format!("{}: {m}", path.display())),
        CliError::BadKey(m) => CliError::BadKey(format!("{}: {m}", path.display())),
        other => other,
    }
}

/// The keys of a command: the `-v` values, then the key file's lines, each with where it came
/// from (for an error: `-v: line N` counts the values, `FILE: line N` the file's lines).
#[derive(Debug)]
struct KeyLines {
    lines: Vec<(Vec<u8>, usize, bool)>,
    file: Option<PathBuf>,
}

impl KeyLines {
    fn read(a: &KeyArgs) -> Result<KeyLines, CliError> {
        let mut lines: Vec<(Vec<u8>, usize, bool)> = a
            .values
            .iter()
            .enumerate()
            .map(|(i, v)| (v.as_bytes().to_vec(), i + 1, false))
            .collect();
        if let Some(p) = &a.keys {
            let data = read(p)?;
            lines.extend(
                keys::lines(&data)
                    .enumerate()
                    .map(|(i, l)| (l.to_vec(), i + 1, true)),
            );
        } else if lines.is_empty() {
            return Err(CliError::Invalid(
                "no keys: give --keys FILE or -v VALUE".into(),
            ));
        }
        Ok(KeyLines {
            lines,
            file: a.keys.clone(),
        })
    }

    /// The error `e` about key `i`, naming its source.
    fn blame(&self, i: usize, e: CliError) -> CliError {
        match (&self.file, self.lines[i].2) {
            (Some(p), true) => in_file(p, e),
            _ => match e {
                CliError::BadKey(m) => CliError::BadKey(format!("-v: {m}")),
                other => other,
            },
        }
    }

    fn typed(&self, t: KeyType) -> Result<Vec<TypedKey<'_>>, CliError> {
        self.lines
            .iter()
            .enumerate()
            .map(|(i, (l, n, _))| keys::parse(t, l, *n).map_err(|e| self.blame(i, e)))
            .collect()
    }
}

fn build(a: &BuildArgs) -> Result<(), CliError> {
    let bytes = if a.from_parquet.is_empty() && a.from_csv.is_empty() {
        let path = a.keys.as_ref().ok_or_else(|| {
            CliError::Invalid("build needs --keys FILE, --from-parquet or --from-csv".into())
        })?;
        let (t, n) = match (a.key_type, a.n) {
            (Some(t), Some(n)) => (t, n),
            _ => {
                return Err(CliError::Invalid(
                    "build --keys needs --key-type and --n".into(),
                ));
            }
        };
        let data = read(path)?;
        let keys: Vec<TypedKey<'_>> = keys::lines(&data)
            .enumerate()
            .map(|(i, l)| keys::parse(t, l, i + 1))
            .collect::<Result<_, _>>()
            .map_err(|e| in_file(path, e))?;
        ours::build(a.format, &keys, n, a.fpr)?
    } else {
        build_from_data(a)?
    };
    merge::write_atomic(&a.out, &bytes)
}

fn build_from_data(a: &BuildArgs) -> Result<Vec<u8>, CliError> {
    let column = a.column.as_deref().unwrap_or_default();
    let mut values = from_data::Column::default();
    if a.from_parquet.is_empty() {
        for p in &a.from_csv {
            from_data::read_csv(p, column, a.key_type, &mut values)?;
        }
    } else {
        for p in dataset::expand(&a.from_parquet)? {
            from_data::read_parquet(&p, column, a.key_type, &mut values)?;
        }
    }
    if values.is_empty() {
        return Err(CliError::Invalid(format!(
            "column {column} holds no value: nothing to build from"
        )));
    }
    let n = match a.n {
        Some(n) => n,
        None => values.distinct(),
    };
    let keys = values.keys()?;
    ours::build(a.format, &keys, n, a.fpr)
}

/// What a bare filter file holds.
#[derive(Debug)]
enum Loaded {
    Ours(Box<bloomlab_uses::any::AnyFilter>),
    Section(bloomlab_sbbf::Sbbf),
    Jvm(jvm::JvmFilter),
}

impl Loaded {
    fn kind_name(&self) -> &'static str {
        match self {
            Loaded::Ours(_) => "bloomlab filter",
            Loaded::Section(_) => "Parquet bloom filter section",
            Loaded::Jvm(_) => "Spark or Guava filter",
        }
    }

    fn might_contain(&self, k: TypedKey<'_>) -> bool {
        match self {
            Loaded::Ours(f) => k.with_bytes(|b| f.as_filter().might_contain_bytes(b)),
            Loaded::Section(f) => k.with_bytes(|b| f.might_contain_bytes(b)),
            Loaded::Jvm(f) => f.might_contain(k),
        }
    }
}

/// The kinds of file the commands read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Parquet,
    Ours,
    Jvm,
    Section,
}

const UNKNOWN: &str = "unknown format: not a valid filter file of any kind bloomlab reads (a Parquet file, a bloomlab filter, a Spark or Guava filter, a Parquet bloom filter section)";

/// The kind of file, and for a bare filter its bytes (a Parquet file is not loaded). A file
/// larger than [`READ_WHOLE_UP_TO`] is read whole only when its first bytes announce a filter
/// of exactly its length, so a large file of another kind costs no more than its head.
fn kind_of(path: &Path) -> Result<(Kind, Vec<u8>), CliError> {
    let io = |e: std::io::Error| CliError::Io(format!("cannot read {}: {e}", path.display()));
    let mut f = std::fs::File::open(path).map_err(io)?;
    if parquet_file::sniff(&mut f).map_err(io)? {
        return Ok((Kind::Parquet, Vec::new()));
    }
    let len = f.metadata().map_err(io)?.len();
    if len > READ_WHOLE_UP_TO {
        use std::io::{Read, Seek};
        let mut head = Vec::new();
        f.seek(std::io::SeekFrom::Start(0)).map_err(io)?;
        f.take(4096).read_to_end(&mut head).map_err(io)?;
        let sized = ours::is_ours(&head)
            || jvm::announced_len(&head) == Some(len)
            || bloomlab_sbbf::parquet_header(&head).is_ok_and(|(b, h)| h as u64 + b == len);
        if !sized {
            return Err(CliError::BadFile(format!("{}: {UNKNOWN}", path.display())));
        }
    }
    let bytes = read(path)?;
    match bare_kind(&bytes) {
        Some(kind) => Ok((kind, bytes)),
        None => Err(CliError::BadFile(format!("{}: {UNKNOWN}", path.display()))),
    }
}

/// Files up to this size are read whole to find their kind (and say what is wrong with them).
const READ_WHOLE_UP_TO: u64 = 16 << 20;

fn bare_kind(bytes: &[u8]) -> Option<Kind> {
    if ours::is_ours(bytes) {
        Some(Kind::Ours)
    } else if jvm::sniff(bytes) {
        Some(Kind::Jvm)
    } else if ours::is_parquet_section(bytes) {
        Some(Kind::Section)
    } else {
        None
    }
}

fn load(bytes: &[u8], kind: Kind) -> Result<Loaded, CliError> {
    Ok(match kind {
        Kind::Ours => Loaded::Ours(Box::new(ours::decode(bytes)?)),
        Kind::Jvm => Loaded::Jvm(jvm::decode(bytes)?),
        Kind::Section => Loaded::Section(ours::decode_section(bytes)?),
        Kind::Parquet => {
            return Err(CliError::Invalid(
                "a Parquet file is read through its footer, not as one filter".into(),
            ));
        }
    })
}

/// A bare filter file, loaded (anything else refused).
fn load_filter(path: &Path) -> Result<Loaded, CliError> {
    let (kind, bytes) = kind_of(path)?;
    if kind == Kind::Parquet {
        return Err(CliError::Invalid(format!(
            "{} is a Parquet data file, not a filter file",
            path.display()
        )));
    }
    load(&bytes, kind).map_err(|e| in_file(path, e))
}

/// One file's answers: per key, per row group (one element for a bare filter), `Some(hit)`
/// or `None` where the row group has no filter for the column.
type Answers = Vec<Vec<Option<bool>>>;

fn answer_file(path: &Path, a: &ContainsArgs, keys: &KeyLines) -> Result<Answers, CliError> {
    let (kind, bytes) = kind_of(path)?;
    if kind == Kind::Parquet {
        return answer_parquet(path, a, keys);
    }
    if a.column.is_some() {
        return Err(CliError::Invalid(
            "--column applies only to Parquet files; this is a bare filter".into(),
        ));
    }
    let t = a.key_type.ok_or_else(|| {
        CliError::Invalid(
            "a filter file needs --key-type (i64, str or bytes): how it was built".into(),
        )
    })?;
    let filter = load(&bytes, kind).map_err(|e| in_file(path, e))?;
    let typed = keys.typed(t)?;
    Ok(typed
        .into_iter()
        .map(|k| vec![Some(filter.might_contain(k))])
        .collect())
}

fn answer_parquet(path: &Path, a: &ContainsArgs, keys: &KeyLines) -> Result<Answers, CliError> {
    if a.key_type.is_some() {
        return Err(CliError::Invalid(
            "--key-type does not apply to a Parquet file: keys are read as the column's physical type requires".into(),
        ));
    }
    let column = a.column.as_deref().ok_or_else(|| {
        CliError::Invalid("a Parquet file needs --column NAME: whose bloom filters answer".into())
    })?;
    let mut pq = ParquetBlooms::open(path).map_err(|e| in_file(path, e))?;
    let col = pq.column(column)?;
    let hasher = pq.key_hasher(col)?;
    let filters = (0..pq.row_groups())
        .map(|rg| pq.filter(rg, col))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| in_file(path, e))?;
    keys.lines
        .iter()
        .enumerate()
        .map(|(i, (line, n, _))| {
            let h = hasher.hash(line, *n).map_err(|e| keys.blame(i, e))?;
            Ok(filters
                .iter()
                .map(|f| f.as_ref().map(|f| f.might_contain_hash(h)))
                .collect())
        })
        .collect()
}

/// The text of one file's answers: one line per key, one field per row group (`1`, `0`, `-`);
/// in a dataset each line starts with the file and the key.
fn answers_text(path: Option<&Path>, keys: &KeyLines, answers: &Answers) -> Vec<u8> {
    let mut text = Vec::new();
    for ((line, _, _), row) in keys.lines.iter().zip(answers) {
        if let Some(p) = path {
            text.extend_from_slice(
                format!("{}\t{}\t", p.display(), String::from_utf8_lossy(line)).as_bytes(),
            );
        }
        let fields: Vec<&str> = row
            .iter()
            .map(|a| match a {
                Some(true) => "1",
                Some(false) => "0",
                None => "-",
            })
            .collect();
        text.extend_from_slice(fields.join(" ").as_bytes());
        text.push(b'\n');
    }
    text
}

/// `contains --json`: one object per key, `{"file", "key", "row_groups"}`.
fn answers_json(path: &Path, keys: &KeyLines, answers: &Answers) -> Vec<u8> {
    let mut text = Vec::new();
    for ((line, _, _), row) in keys.lines.iter().zip(answers) {
        let v = serde_json::json!({
            "file": path.display().to_string(),
            "key": String::from_utf8_lossy(line),
            "row_groups": row,
        });
        text.extend_from_slice(v.to_string().as_bytes());
        text.push(b'\n');
    }
    text
}

fn contains(a: &ContainsArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<(), CliError> {
    let keys = KeyLines::read(&a.keys)?;
    let single = dataset::is_single_file(&a.paths);
    let files = dataset::expand(&a.paths)?;
    let work = |p: &Path| answer_file(p, a, &keys);
    if single {
        let answers = work(&files[0])?;
        let text = if a.json {
            answers_json(&files[0], &keys, &answers)
        } else {
            answers_text(None, &keys, &answers)
        };
        return write_out(out, &text);
    }
    let failed = dataset::each_file(&files, work, |p, r| match r {
        Ok(answers) if a.json => write_out(out, &answers_json(p, &keys, &answers)),
        Ok(answers) => write_out(out, &answers_text(Some(p), &keys, &answers)),
        Err(e) => dataset::report(err, p, &e),
    })?;
    failures(failed, files.len())
}

fn failures(failed: usize, total: usize) -> Result<(), CliError> {
    if failed == 0 {
        Ok(())
    } else {
        Err(CliError::Failed { failed, total })
    }
}

fn inspect(a: &InspectArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<(), CliError> {
    let single = dataset::is_single_file(&a.paths);
    let files = dataset::expand(&a.paths)?;
    let work = |p: &Path| {
        if a.json {
            inspect_json(p)
        } else {
            inspect_file(p)
        }
    };
    if single {
        return write_out(out, work(&files[0])?.as_bytes());
    }
    let failed = dataset::each_file(&files, work, |p, r| match r {
        Ok(text) if a.json => write_out(out, text.as_bytes()),
        Ok(text) => write_out(out, format!("==> {} <==\n{text}\n", p.display()).as_bytes()),
        Err(e) => dataset::report(err, p, &e),
    })?;
    failures(failed, files.len())
}

/// `inspect`'s text for a file of any kind the commands read.
pub fn inspect_file(path: &Path) -> Result<String, CliError> {
    let (kind, bytes) = kind_of(path)?;
    let s = match kind {
        Kind::Parquet => {
            let mut pq = ParquetBlooms::open(path).map_err(|e| in_file(path, e))?;
            return pq.describe().map_err(|e| in_file(path, e));
        }
        Kind::Ours => ours::summary(&bytes),
        Kind::Section => ours::decode_section(&bytes).map(|f| ours::section_summary(&f)),
        Kind::Jvm => jvm::decode(&bytes).map(|f| f.summary()),
    };
    s.map(|s| s.to_string()).map_err(|e| in_file(path, e))
}

/// `inspect --json` for one file: JSON Lines, one object per Parquet column chunk, or one for
/// a bare filter.
fn inspect_json(path: &Path) -> Result<String, CliError> {
    let file = path.display().to_string();
    let (kind, bytes) = kind_of(path)?;
    let s = match kind {
        Kind::Parquet => {
            let mut pq = ParquetBlooms::open(path).map_err(|e| in_file(path, e))?;
            let chunks = pq.chunks().map_err(|e| in_file(path, e))?;
            let mut text = String::new();
            for c in chunks {
                let f = c.filter;
                let v = serde_json::json!({
                    "file": file, "row_group": c.row_group, "column": c.column,
                    "type": c.physical, "values": c.values,
                    "bytes": f.map(|f| f.bytes), "fill": f.map(|f| f.fill),
                    "est_fpr": f.map(|f| f.fpr), "est_distinct": f.map(|f| f.est_distinct),
                });
                text.push_str(&v.to_string());
                text.push('\n');
            }
            return Ok(text);
        }
        Kind::Ours => ours::summary(&bytes),
        Kind::Section => ours::decode_section(&bytes).map(|f| ours::section_summary(&f)),
        Kind::Jvm => jvm::decode(&bytes).map(|f| f.summary()),
    };
    let s = s.map_err(|e| in_file(path, e))?;
    let (count, estimated) = match s.count {
        Count::Recorded(n) => (n as f64, false),
        Count::Estimated(x) => (x, true),
    };
    let v = serde_json::json!({
        "file": file, "format": s.format, "k": s.k, "bits": s.bits, "fill": s.fill,
        "est_fpr": s.fpr, "count": count, "count_estimated": estimated,
    });
    Ok(format!("{v}\n"))
}

fn audit(a: &AuditArgs, out: &mut dyn Write, err: &mut dyn Write) -> Result<(), CliError> {
    if !(a.fpr > 0.0 && a.fpr < 1.0) {
        return Err(CliError::Invalid(format!(
            "--fpr {} is not in (0, 1)",
            a.fpr
        )));
    }
    let files = dataset::expand(&a.paths)?;
    let mut columns: Vec<(String, Vec<audit::ChunkAudit>)> = Vec::new();
    let work = |p: &Path| audit::audit_file(p, a.fpr);
    let failed = dataset::each_file(&files, work, |p, r| {
        match r {
            Ok(chunks) => {
                for (column, c) in chunks {
                    match columns.iter_mut().find(|(name, _)| *name == column) {
                        Some((_, list)) => list.push(c),
                        None => columns.push((column, vec![c])),
                    }
                }
            }
            Err(e) => dataset::report(err, p, &e)?,
        }
        Ok(())
    })?;
    let mut text = String::new();
    if !a.json {
        text.push_str(audit::HEADER);
        text.push('\n');
    }
    let audits: Vec<audit::ColumnAudit> = columns
        .into_iter()
        .map(|(name, chunks)| audit::ColumnAudit::of(name, chunks, a.fpr))
        .collect();
    for c in &audits {
        if a.json {
            let line = serde_json::to_string(c)
                .map_err(|e| CliError::Invalid(format!("cannot write JSON: {e}")))?;
            text.push_str(&line);
        } else {
            text.push_str(&c.row());
        }
        text.push('\n');
    }
    if !a.json {
        text.push_str(&audit::advice(&audits));
    }
    write_out(out, text.as_bytes())?;
    failures(failed, files.len())
}

fn merge_files(a: &MergeArgs) -> Result<(), CliError> {
    let mut merged: Option<Loaded> = None;
    for p in &a.inputs {
        let f = load_filter(p)?;
        match &mut merged {
            None => merged = Some(f),
            Some(m) => merge::merge(m, &f)
                .map_err(|e| CliError::Invalid(format!("{}: {e}", p.display())))?,
        }
    }
    let merged = merged.expect("clap requires two inputs");
    merge::write_atomic(&a.out, &merge::encode(&merged)?)
}

fn add(a: &AddArgs) -> Result<(), CliError> {
    let keys = KeyLines::read(&a.keys)?;
    let typed = keys.typed(a.key_type)?;
    let mut f = load_filter(&a.file)?;
    for (i, k) in typed.into_iter().enumerate() {
        merge::insert(&mut f, k).map_err(|e| keys.blame(i, e))?;
    }
    merge::write_atomic(&a.file, &merge::encode(&f)?)
}
