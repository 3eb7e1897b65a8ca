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
//! exit status 1 (2 for a usage error), never a panic. Nothing is written to `--out` unless
//! the build succeeds.
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

use clap::{Args, Parser, Subcommand, ValueEnum};

pub mod jvm;
pub mod keys;
pub mod ours;
pub mod parquet_file;
pub mod summary;

pub use keys::{KeyType, TypedKey};
pub use summary::{Count, Summary};

use parquet_file::ParquetBlooms;

/// Everything that can go wrong, each a one-line message.
#[derive(Debug)]
#[non_exhaustive]
pub enum CliError {
    /// Arguments clap refused (or help and version, which are not failures).
    Usage(clap::Error),
    /// A file could not be read or written.
    Io(String),
    /// A file in no known format, or damaged.
    BadFile(String),
    /// A key line that is not a key of the type asked for.
    BadKey(String),
    /// Options that do not go together, or parameters a filter refuses.
    Invalid(String),
}

impl CliError {
    /// The exit status: 0 for `--help` and `--version`, 2 for other usage errors, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::Usage(e) if !e.use_stderr() => 0,
            CliError::Usage(_) => 2,
            _ => 1,
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(e) if !e.use_stderr() => write!(f, "{e}"),
            // clap's message spans lines (usage, tips): keep its substance on one line.
            CliError::Usage(e) => {
                let text = e.to_string();
                let parts: Vec<&str> = text
                    .lines()
                    .map(str::trim)
                    .filter(|l| !l.is_empty() && !l.starts_with("For more information"))
                    .collect();
                write!(f, "{}", parts.join("; "))
            }
            CliError::Io(m) | CliError::BadFile(m) | CliError::BadKey(m) | CliError::Invalid(m) => {
                f.write_str(m)
            }
        }
    }
}

impl std::error::Error for CliError {}

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
    /// Build a filter from a key file and write it.
    Build(BuildArgs),
    /// Answer 1 (maybe present) or 0 (absent) for each key of a key file; for a Parquet file,
    /// one field per row group (1, 0, or - without a bloom filter).
    Contains(ContainsArgs),
    /// Say what a filter file or a Parquet file's bloom filters are.
    Inspect(InspectArgs),
}

/// The formats `build` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BuildFormat {
    /// Spark's `BloomFilter`, serialized format version 1.
    #[value(name = "spark-v1")]
    SparkV1,
    /// Spark's `BloomFilter`, serialized format version 2 (the default since Spark 4.1).
    #[value(name = "spark-v2")]
    SparkV2,
    /// Guava's `BloomFilter` (`writeTo`).
    Guava,
    /// A Parquet bloom filter section (header and bitset).
    Sbbf,
    /// bloomlab's classic Bloom filter.
    Classic,
    /// bloomlab's blocked (512-bit) Bloom filter.
    Blocked,
    /// bloomlab's counting Bloom filter.
    Counting,
    /// bloomlab's cuckoo filter.
    Cuckoo,
    /// bloomlab's scalable Bloom filter.
    Scalable,
    /// bloomlab's expandable filter (grows without a chain of stages).
    Expandable,
    /// bloomlab's Ribbon filter (static; sized from the keys).
    Ribbon,
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
    /// How each line of the key file is read.
    #[arg(long)]
    pub key_type: KeyType,
    /// Expected number of keys (the JVM's expectedInsertions / expectedNumItems).
    #[arg(long)]
    pub n: u64,
    /// Target false-positive rate, in (0, 1).
    #[arg(long)]
    pub fpr: f64,
    /// The key file, one key per line.
    #[arg(long)]
    pub keys: PathBuf,
    /// Where to write the filter.
    #[arg(long)]
    pub out: PathBuf,
}

/// Options of `contains`.
#[derive(Debug, Args)]
pub struct ContainsArgs {
    /// A filter file, or a Parquet data file.
    pub file: PathBuf,
    /// How each line of the key file is read (filter files only).
    #[arg(long)]
    pub key_type: Option<KeyType>,
    /// The column whose bloom filters answer (Parquet files only; its dotted path).
    #[arg(long)]
    pub column: Option<String>,
    /// The key file, one key per line.
    #[arg(long)]
    pub keys: PathBuf,
}

/// Options of `inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// A filter file, or a Parquet data file.
    pub file: PathBuf,
}

/// Parse `args` (the first is the program name) and run the command, writing its output to
/// `out`.
pub fn run<I, T>(args: I, out: &mut dyn Write) -> Result<(), CliError>
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = Cli::try_parse_from(args).map_err(CliError::Usage)?;
    match cli.command {
        Command::Build(a) => build(&a),
        Command::Contains(a) => contains(&a, out),
        Command::Inspect(a) => {
            let text = inspect_file(&a.file)?;
            write_out(out, text.as_bytes())
        }
    }
}

fn write_out(out: &mut dyn Write, bytes: &[u8]) -> Result<(), CliError> {
    out.write_all(bytes)
        .and_then(|_| out.flush())
        .map_err(|e| CliError::Io(format!("cannot write the output: {e}")))
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

fn read_keys(path: &Path, t: KeyType) -> Result<(Vec<u8>, KeyType), CliError> {
    Ok((read(path)?, t))
}

fn parse_all(data: &[u8], t: KeyType) -> Result<Vec<TypedKey<'_>>, CliError> {
    keys::lines(data)
        .enumerate()
        .map(|(i, l)| keys::parse(t, l, i + 1))
        .collect()
}

fn build(a: &BuildArgs) -> Result<(), CliError> {
    let (data, t) = read_keys(&a.keys, a.key_type)?;
    let keys = parse_all(&data, t).map_err(|e| in_file(&a.keys, e))?;
    let bytes = ours::build(a.format, &keys, a.n, a.fpr)?;
    std::fs::write(&a.out, bytes)
        .map_err(|e| CliError::Io(format!("cannot write {}: {e}", a.out.display())))
}

/// What a bare filter file holds.
#[derive(Debug)]
enum Loaded {
    Ours(Box<bloomlab_uses::any::AnyFilter>),
    Section(bloomlab_sbbf::Sbbf),
    Jvm(jvm::JvmFilter),
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

/// The kind of file, and for a bare filter its bytes (a Parquet file is not loaded).
fn kind_of(path: &Path) -> Result<(Kind, Vec<u8>), CliError> {
    let mut f = std::fs::File::open(path)
        .map_err(|e| CliError::Io(format!("cannot read {}: {e}", path.display())))?;
    if parquet_file::sniff(&mut f)
        .map_err(|e| CliError::Io(format!("cannot read {}: {e}", path.display())))?
    {
        return Ok((Kind::Parquet, Vec::new()));
    }
    let bytes = read(path)?;
    match bare_kind(&bytes) {
        Some(kind) => Ok((kind, bytes)),
        None => Err(CliError::BadFile(format!("{}: {UNKNOWN}", path.display()))),
    }
}

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

fn contains(a: &ContainsArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let (kind, bytes) = kind_of(&a.file)?;
    let mut text = Vec::new();
    if kind == Kind::Parquet {
        if a.key_type.is_some() {
            return Err(CliError::Invalid(
                "--key-type does not apply to a Parquet file: keys are read as the column's physical type requires".into(),
            ));
        }
        let column = a.column.as_deref().ok_or_else(|| {
            CliError::Invalid(
                "a Parquet file needs --column NAME: whose bloom filters answer".into(),
            )
        })?;
        let mut pq = ParquetBlooms::open(&a.file).map_err(|e| in_file(&a.file, e))?;
        let col = pq.column(column)?;
        let hasher = pq.key_hasher(col)?;
        let filters = (0..pq.row_groups())
            .map(|rg| pq.filter(rg, col))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| in_file(&a.file, e))?;
        let data = read(&a.keys)?;
        for (i, line) in keys::lines(&data).enumerate() {
            let h = hasher.hash(line, i + 1).map_err(|e| in_file(&a.keys, e))?;
            let fields: Vec<&str> = filters
                .iter()
                .map(|f| match f {
                    Some(f) if f.might_contain_hash(h) => "1",
                    Some(_) => "0",
                    None => "-",
                })
                .collect();
            text.extend_from_slice(fields.join(" ").as_bytes());
            text.push(b'\n');
        }
        return write_out(out, &text);
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
    let filter = load(&bytes, kind).map_err(|e| in_file(&a.file, e))?;
    let data = read(&a.keys)?;
    for (i, line) in keys::lines(&data).enumerate() {
        let k = keys::parse(t, line, i + 1).map_err(|e| in_file(&a.keys, e))?;
        let hit = match &filter {
            Loaded::Ours(f) => k.with_bytes(|b| f.as_filter().might_contain_bytes(b)),
            Loaded::Section(f) => k.with_bytes(|b| f.might_contain_bytes(b)),
            Loaded::Jvm(f) => f.might_contain(k),
        };
        text.extend_from_slice(if hit { b"1\n" } else { b"0\n" });
    }
    write_out(out, &text)
}

/// `inspect`'s text for a file of any kind the commands read (`bench-harness inspect` prints
/// the same).
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
