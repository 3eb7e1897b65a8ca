//! `audit`: are a dataset's Parquet bloom filters sized for what they hold?
//!
//! Per column chunk: the filter's bytes, its false-positive rate at its fill, the distinct
//! values it holds (exact from the dictionary or the statistics where the file has them, else
//! estimated from the fill), the size the Parquet writers' rule gives for those values at the
//! target, and a verdict. Per column, across every file: the sums, the worst verdict, and the
//! writer settings that would give the right size.

use std::path::Path;

use serde::Serialize;

use crate::CliError;
use crate::parquet_file::{ChunkInfo, ParquetBlooms};

/// A filter's verdict, from best to worst (a column's is the worst of its chunks').
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// No chunk of the column has a filter.
    None,
    /// Within a factor 2 of the right size, and its FPR within 2× the target.
    Fine,
    /// More than twice the bytes the right size needs.
    Oversized,
    /// FPR at its fill above twice the target.
    Undersized,
    /// FPR at its fill 50 % or more: it excludes next to nothing.
    Useless,
}

impl Verdict {
    /// The verdict of one filter of `bytes` bytes with FPR `fpr` at its fill, where
    /// `right_size_bytes` meets `target`.
    pub fn of(fpr: f64, bytes: u64, right_size_bytes: u64, target: f64) -> Verdict {
        if fpr >= 0.5 {
            Verdict::Useless
        } else if fpr > 2.0 * target {
            Verdict::Undersized
        } else if bytes > 2 * right_size_bytes {
            Verdict::Oversized
        } else {
            Verdict::Fine
        }
    }

    /// The lowercase name (`useless`, `undersized`, `oversized`, `fine`, `none`).
    pub fn name(self) -> &'static str {
        match self {
            Verdict::None => "none",
            Verdict::Fine => "fine",
            Verdict::Oversized => "oversized",
            Verdict::Undersized => "undersized",
            Verdict::Useless => "useless",
        }
    }
}

/// One column chunk, audited.
#[derive(Clone, Debug, Serialize)]
pub struct ChunkAudit {
    /// The file.
    pub file: String,
    /// Row group index.
    pub row_group: usize,
    /// Bitset bytes, `null` without a filter.
    pub bytes: Option<u64>,
    /// Fraction of the filter's bits set.
    pub fill: Option<f64>,
    /// FPR at that fill.
    pub fpr: Option<f64>,
    /// Distinct values estimated from the fill (`null` without a filter or when a block is
    /// full).
    pub fill_distinct: Option<f64>,
    /// Exact distinct values from the dictionary page (every data page dictionary-encoded) or
    /// the statistics, where the file has them.
    pub exact_distinct: Option<u64>,
    /// Values in the chunk, nulls included.
    pub values: u64,
    /// The distinct count the right size is for.
    pub distinct: f64,
    /// Where `distinct` comes from: `dictionary`, `statistics`, `fill`, or `values` (an upper
    /// bound, when the filter is saturated).
    pub distinct_source: &'static str,
    /// The writers' size for `distinct` values at the target FPR (`null` without a filter).
    pub right_size_bytes: Option<u64>,
    /// The verdict (`none` without a filter).
    pub verdict: Verdict,
}

/// Audit every column chunk of one Parquet file against the target FPR.
pub fn audit_file(path: &Path, target: f64) -> Result<Vec<(String, ChunkAudit)>, CliError> {
    let in_file = |e| crate::in_file(path, e);
    let mut pq = ParquetBlooms::open(path).map_err(in_file)?;
    let chunks = pq.chunks().map_err(in_file)?;
    let mut out = Vec::with_capacity(chunks.len());
    for c in chunks {
        let exact = match c.filter {
            Some(_) => pq
                .exact_distinct(c.row_group, c.column_index)
                .map_err(in_file)?,
            None => None,
        };
        let column = c.column.clone();
        out.push((column, audit_chunk(path, c, exact, target)?));
    }
    Ok(out)
}

fn audit_chunk(
    path: &Path,
    c: ChunkInfo,
    exact: Option<(u64, &'static str)>,
    target: f64,
) -> Result<ChunkAudit, CliError> {
    let f = c.filter;
    let fill_distinct = f.map(|f| f.est_distinct).filter(|d| d.is_finite());
    let (distinct, source) = match (exact, fill_distinct, f) {
        (Some((d, source)), _, _) => (d as f64, source),
        (None, Some(d), Some(f)) if f.fpr < 0.5 => (d, "fill"),
        _ => (c.values as f64, "values"),
    };
    let right = match f {
        Some(_) => Some(right_size_bytes(distinct, target)?),
        None => None,
    };
    let verdict = match (f, right) {
        (Some(f), Some(r)) => Verdict::of(f.fpr, f.bytes, r, target),
        _ => Verdict::None,
    };
    Ok(ChunkAudit {
        file: path.display().to_string(),
        row_group: c.row_group,
        bytes: f.map(|f| f.bytes),
        fill: f.map(|f| f.fill),
        fpr: f.map(|f| f.fpr),
        fill_distinct,
        exact_distinct: exact.map(|(d, _)| d),
        values: c.values,
        distinct,
        distinct_source: source,
        right_size_bytes: right,
        verdict,
    })
}

/// The Parquet writers' size for `distinct` values at `fpp`: bits = −8·NDV / ln(1 − fpp^(1/8)),
/// in bytes rounded up to a power of two, from 32 B to 128 MiB
/// ([`bloomlab_sbbf::math::sbbf_parquet_bytes`]).
pub fn right_size_bytes(distinct: f64, fpp: f64) -> Result<u64, CliError> {
    let ndv = (distinct.ceil() as u64).max(1);
    bloomlab_sbbf::math::sbbf_parquet_bytes(ndv, fpp).map_err(|e| CliError::Invalid(e.to_string()))
}

/// One column across the dataset: what `audit` prints for it.
#[derive(Clone, Debug, Serialize)]
pub struct ColumnAudit {
    /// The column's dotted path.
    pub column: String,
    /// The worst verdict of its chunks (`none` when none has a filter).
    pub verdict: Verdict,
    /// Row groups (column chunks) in the dataset.
    pub row_groups: usize,
    /// Those with a bloom filter.
    pub row_groups_with_filter: usize,
    /// Their bitset bytes, summed.
    pub bytes: u64,
    /// The right sizes of the same chunks, summed.
    pub right_size_bytes: u64,
    /// `bytes − right_size_bytes`: what the right sizes would save (negative: cost).
    pub saved_bytes: i64,
    /// The largest distinct count of a chunk with a filter (what an NDV setting should say).
    pub est_distinct: u64,
    /// The largest FPR of its filters at their fill.
    pub max_fpr: Option<f64>,
    /// The target FPR.
    pub target_fpr: f64,
    /// The writer settings that give the right size (`null` when no chunk has a filter).
    pub settings: Option<Settings>,
    /// Every chunk, in file and row group order.
    pub chunks: Vec<ChunkAudit>,
}

/// The writer options, named, that size a column's filters for `est_distinct` at the target.
#[derive(Clone, Debug, Serialize)]
pub struct Settings {
    /// parquet-java and Spark (Hadoop configuration or DataFrameWriter options).
    #[serde(rename = "parquet-java")]
    pub parquet_java: String,
    /// pyarrow's `pq.write_table`.
    pub pyarrow: String,
    /// DuckDB's `COPY … (FORMAT parquet, …)`: it sizes from its dictionary, so only the FPR.
    pub duckdb: String,
}

impl Settings {
    fn new(column: &str, ndv: u64, fpp: f64) -> Settings {
        Settings {
            parquet_java: format!(
                "parquet.bloom.filter.enabled#{column}=true parquet.bloom.filter.expected.ndv#{column}={ndv} parquet.bloom.filter.fpp#{column}={fpp}"
            ),
            pyarrow: format!(
                "bloom_filter_options={{\"{column}\": {{\"ndv\": {ndv}, \"fpp\": {fpp}}}}}"
            ),
            duckdb: format!("BLOOM_FILTER_FALSE_POSITIVE_RATIO {fpp}"),
        }
    }
}

impl ColumnAudit {
    /// Sum a column's chunks.
    pub fn of(column: String, chunks: Vec<ChunkAudit>, target: f64) -> ColumnAudit {
        let with: Vec<&ChunkAudit> = chunks.iter().filter(|c| c.bytes.is_some()).collect();
        let bytes: u64 = with.iter().filter_map(|c| c.bytes).sum();
        let right: u64 = with.iter().filter_map(|c| c.right_size_bytes).sum();
        let est = with
            .iter()
            .map(|c| c.distinct.ceil() as u64)
            .max()
            .unwrap_or(0);
        let max_fpr = with.iter().filter_map(|c| c.fpr).reduce(f64::max);
        let verdict = chunks
            .iter()
            .map(|c| c.verdict)
            .max()
            .unwrap_or(Verdict::None);
        let settings = (!with.is_empty()).then(|| Settings::new(&column, est.max(1), target));
        ColumnAudit {
            verdict,
            row_groups: chunks.len(),
            row_groups_with_filter: with.len(),
            bytes,
            right_size_bytes: right,
            saved_bytes: bytes as i64 - right as i64,
            est_distinct: est,
            max_fpr,
            target_fpr: target,
            settings,
            column,
            chunks,
        }
    }

    /// The tab-separated row `audit` prints for a person.
    pub fn row(&self) -> String {
        let fpr = self.max_fpr.map_or("-".into(), crate::summary::percent);
        format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{fpr}",
            self.column,
            self.verdict.name(),
            self.row_groups_with_filter,
            self.row_groups,
            self.bytes,
            self.right_size_bytes,
            self.saved_bytes,
            self.est_distinct
        )
    }
}

/// The header of `audit`'s table.
pub const HEADER: &str = "column\tverdict\trow_groups_with_filter\trow_groups\tbytes\tright_size_bytes\tsaved_bytes\test_distinct\tmax_fpr";

/// The advice under `audit`'s table: for each column whose verdict is not `fine` or `none`,
/// what the right sizes save and the writer settings that give them.
pub fn advice(columns: &[ColumnAudit]) -> String {
    let mut text = String::new();
    for c in columns {
        let Some(s) = &c.settings else { continue };
        if c.verdict == Verdict::Fine {
            continue;
        }
        let change = if c.saved_bytes >= 0 {
            format!("the right sizes would save {} bytes", c.saved_bytes)
        } else {
            format!("the right sizes would take {} bytes more", -c.saved_bytes)
        };
        text.push_str(&format!(
            "\n{}: {}; {change}; set parquet-java/Spark: {}; pyarrow: {}; DuckDB: {}\n",
            c.column,
            c.verdict.name(),
            s.parquet_java,
            s.pyarrow,
            s.duckdb
        ));
    }
    text
}
