//! Parquet data files: the footer through the `parquet` crate, each column chunk's bloom
//! filter section through our SBBF.

use std::fmt::Write as _;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::sync::Arc;

use bloomlab_sbbf::Sbbf;
use parquet::basic::{Encoding, Type as PhysicalType};
use parquet::column::page::{Page, PageReader};
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};
use parquet::file::serialized_reader::SerializedPageReader;

use crate::CliError;
use crate::keys::{self, bad_line};

/// The start and end of every Parquet file.
pub const MAGIC: [u8; 4] = *b"PAR1";

/// Whether the file starts and ends with `PAR1` (read from the file without loading it).
pub fn sniff(file: &mut File) -> std::io::Result<bool> {
    let len = file.metadata()?.len();
    if len < 12 {
        return Ok(false);
    }
    let mut head = [0u8; 4];
    let mut tail = [0u8; 4];
    file.seek(SeekFrom::Start(0))?;
    file.read_exact(&mut head)?;
    file.seek(SeekFrom::Start(len - 4))?;
    file.read_exact(&mut tail)?;
    Ok(head == MAGIC && tail == MAGIC)
}

/// A Parquet file's footer and its column chunks' bloom filters.
#[derive(Debug)]
pub struct ParquetBlooms {
    meta: ParquetMetaData,
    file: File,
    len: u64,
}

/// One column chunk's bloom filter: the filter, and the bitset's size in bytes.
pub type ChunkFilter = Option<Sbbf>;

impl ParquetBlooms {
    /// Read the footer.
    pub fn open(path: &Path) -> Result<Self, CliError> {
        let file = File::open(path)
            .map_err(|e| CliError::Io(format!("cannot read {}: {e}", path.display())))?;
        let meta = ParquetMetaDataReader::new()
            .parse_and_finish(&file)
            .map_err(|e| CliError::BadFile(format!("not a valid Parquet file: {e}")))?;
        let len = file
            .metadata()
            .map_err(|e| CliError::Io(format!("cannot read {}: {e}", path.display())))?
            .len();
        Ok(ParquetBlooms { meta, file, len })
    }

    /// Number of row groups.
    pub fn row_groups(&self) -> usize {
        self.meta.num_row_groups()
    }

    /// The leaf columns' dotted paths, in schema order.
    pub fn columns(&self) -> Vec<String> {
        self.meta
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .map(|c| c.path().string())
            .collect()
    }

    /// The index of the leaf column with this dotted path.
    pub fn column(&self, name: &str) -> Result<usize, CliError> {
        let cols = self.columns();
        cols.iter().position(|c| c == name).ok_or_else(|| {
            CliError::Invalid(format!(
                "the file has no column {name:?}; its columns: {}",
                cols.join(", ")
            ))
        })
    }

    /// The bloom filter of column `col` in row group `rg`, if the writer stored one.
    pub fn filter(&mut self, rg: usize, col: usize) -> Result<ChunkFilter, CliError> {
        let chunk = self.meta.row_group(rg).column(col);
        let Some(offset) = chunk.bloom_filter_offset() else {
            return Ok(None);
        };
        let name = chunk.column_path().string();
        let bad = |why: String| CliError::BadFile(format!("row group {rg}, column {name}: {why}"));
        let offset = u64::try_from(offset)
            .ok()
            .filter(|&o| o < self.len)
            .ok_or_else(|| {
                bad(format!(
                    "bloom filter offset {offset} is outside the file ({} bytes)",
                    self.len
                ))
            })?;
        let room = self.len - offset;
        let section_len = match chunk.bloom_filter_length() {
            Some(l) => u64::try_from(l)
                .ok()
                .filter(|&l| l <= room)
                .ok_or_else(|| bad(format!("bloom filter length {l} does not fit in the file")))?,
            None => {
                // Older writers record no length: the header says how long the bitset is.
                let head = self.read(offset, room.min(256)).map_err(bad)?;
                let (bits, header) = bloomlab_sbbf::parquet_header(&head)
                    .map_err(|e| bad(format!("bloom filter header: {e}")))?;
                let total = header as u64 + bits;
                if total > room {
                    return Err(bad(format!(
                        "a bloom filter of {total} bytes does not fit in the file"
                    )));
                }
                total
            }
        };
        let bytes = self.read(offset, section_len).map_err(bad)?;
        Sbbf::from_parquet_bytes(&bytes)
            .map(Some)
            .map_err(|e| bad(format!("bloom filter: {e}")))
    }

    fn read(&mut self, offset: u64, len: u64) -> Result<Vec<u8>, String> {
        // Callers check offset + len against the file's length, so this allocation is no
        // larger than the file.
        let mut buf = vec![0u8; len as usize];
        self.file
            .seek(SeekFrom::Start(offset))
            .and_then(|_| self.file.read_exact(&mut buf))
            .map_err(|e| format!("cannot read the bloom filter: {e}"))?;
        Ok(buf)
    }

    /// How a key line becomes the hash of its plain encoding for column `col`.
    pub fn key_hasher(&self, col: usize) -> Result<KeyHasher, CliError> {
        let c = self.meta.file_metadata().schema_descr().column(col);
        let t = c.physical_type();
        let hasher = match t {
            PhysicalType::BYTE_ARRAY => KeyHasher::Bytes,
            PhysicalType::INT32 => KeyHasher::I32,
            PhysicalType::INT64 => KeyHasher::I64,
            PhysicalType::FLOAT => KeyHasher::F32,
            PhysicalType::DOUBLE => KeyHasher::F64,
            PhysicalType::FIXED_LEN_BYTE_ARRAY => {
                KeyHasher::FixedHex(c.type_length().max(0) as usize)
            }
            other => {
                return Err(CliError::Invalid(format!(
                    "column {} is {other}: bloom filter keys are taken for BYTE_ARRAY, INT32, INT64, FLOAT, DOUBLE and FIXED_LEN_BYTE_ARRAY columns",
                    c.path().string()
                )));
            }
        };
        Ok(hasher)
    }

    /// Every column chunk of every row group, with its bloom filter's figures.
    pub fn chunks(&mut self) -> Result<Vec<ChunkInfo>, CliError> {
        let cols = self.columns();
        let mut out = Vec::new();
        for rg in 0..self.row_groups() {
            for (ci, name) in cols.iter().enumerate() {
                let physical = self
                    .meta
                    .file_metadata()
                    .schema_descr()
                    .column(ci)
                    .physical_type();
                let values = self.meta.row_group(rg).column(ci).num_values();
                let filter = self.filter(rg, ci)?.map(|f| FilterInfo {
                    bytes: f.size_in_bytes() as u64,
                    fill: f.fill_ratio(),
                    fpr: f.current_fpr(),
                    est_distinct: f.estimated_len(),
                });
                out.push(ChunkInfo {
                    row_group: rg,
                    column: name.clone(),
                    column_index: ci,
                    physical: physical.to_string(),
                    values: u64::try_from(values).unwrap_or(0),
                    filter,
                });
            }
        }
        Ok(out)
    }

    /// Who wrote the file, as its footer says.
    pub fn created_by(&self) -> Option<&str> {
        self.meta.file_metadata().created_by()
    }

    /// `inspect`: every column chunk, with its bloom filter's size, fill and estimated FPR.
    pub fn describe(&mut self) -> Result<String, CliError> {
        let chunks = self.chunks()?;
        let mut rows = String::new();
        let mut filters = 0;
        for c in &chunks {
            let (rg, name, t) = (c.row_group, &c.column, &c.physical);
            match &c.filter {
                Some(f) => {
                    filters += 1;
                    let _ = writeln!(
                        rows,
                        "{rg}\t{name}\t{t}\t{}\t{:.4}\t{}\t{:.0}",
                        f.bytes,
                        f.fill,
                        crate::summary::percent(f.fpr),
                        f.est_distinct
                    );
                }
                None => {
                    let _ = writeln!(rows, "{rg}\t{name}\t{t}\t-\t-\t-\t-");
                }
            }
        }
        let created = self
            .created_by()
            .map(|c| format!(", written by {c}"))
            .unwrap_or_default();
        Ok(format!(
            "parquet file: {} row groups, {} columns, {filters} bloom filters{created}\nrow_group\tcolumn\ttype\tbytes\tfill\test_fpr\test_distinct\n{rows}",
            self.row_groups(),
            self.columns().len()
        ))
    }

    /// The exact number of distinct non-null values in a column chunk, where the file says it:
    /// the dictionary page's entry count when every data page is dictionary-encoded (the
    /// footer's page encoding statistics say so), else the statistics' distinct count. Reads
    /// only the dictionary page (a page's size is bounded by the writer's dictionary limit).
    /// Returns the count and where it came from (`dictionary` or `statistics`).
    pub fn exact_distinct(
        &self,
        rg: usize,
        col: usize,
    ) -> Result<Option<(u64, &'static str)>, CliError> {
        let chunk = self.meta.row_group(rg).column(col);
        let all_dict = chunk.dictionary_page_offset().is_some()
            && chunk.page_encoding_stats_mask().is_some_and(|m| {
                m.is_only(Encoding::PLAIN_DICTIONARY) || m.is_only(Encoding::RLE_DICTIONARY)
            });
        if !all_dict {
            let stats = chunk.statistics().and_then(|s| s.distinct_count_opt());
            return Ok(stats.map(|d| (d, "statistics")));
        }
        let name = chunk.column_path().string();
        let bad = |why: String| {
            CliError::BadFile(format!(
                "row group {rg}, column {name}: dictionary page: {why}"
            ))
        };
        let file = self.file.try_clone().map_err(|e| bad(e.to_string()))?;
        let rows = usize::try_from(self.meta.row_group(rg).num_rows()).unwrap_or(0);
        let mut pages = SerializedPageReader::new(Arc::new(file), chunk, rows, None)
            .map_err(|e| bad(e.to_string()))?;
        match pages.get_next_page().map_err(|e| bad(e.to_string()))? {
            Some(Page::DictionaryPage { num_values, .. }) => {
                Ok(Some((u64::from(num_values), "dictionary")))
            }
            _ => Ok(None),
        }
    }
}

/// One column chunk, as `inspect` and `audit` see it.
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkInfo {
    /// Row group index, from 0.
    pub row_group: usize,
    /// The column's dotted path.
    pub column: String,
    /// The column's index among the leaf columns.
    pub column_index: usize,
    /// The physical type's name (`INT64`, `BYTE_ARRAY`, …).
    pub physical: String,
    /// Values in the chunk, nulls included (an upper bound on its distinct values).
    pub values: u64,
    /// The chunk's bloom filter, if it has one.
    pub filter: Option<FilterInfo>,
}

/// A column chunk's bloom filter, in figures.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FilterInfo {
    /// Bitset bytes (the header not counted).
    pub bytes: u64,
    /// Fraction of bits set.
    pub fill: f64,
    /// False-positive rate at this fill ([`Sbbf::current_fpr`]).
    pub fpr: f64,
    /// Distinct values estimated from the fill ([`Sbbf::estimated_len`]; infinite when a
    /// block is full).
    pub est_distinct: f64,
}

/// How a key line is encoded for a column's physical type (Parquet's plain encoding, hashed
/// with xxHash64 as the bloom filter specification says).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyHasher {
    /// BYTE_ARRAY: the line's bytes.
    Bytes,
    /// INT32: a decimal integer.
    I32,
    /// INT64: a decimal integer.
    I64,
    /// FLOAT: a decimal number (Rust's `f32` syntax).
    F32,
    /// DOUBLE: a decimal number (Rust's `f64` syntax).
    F64,
    /// FIXED_LEN_BYTE_ARRAY of this many bytes: hex digits.
    FixedHex(usize),
}

impl KeyHasher {
    /// The hash of line `number`'s plain encoding.
    pub fn hash(self, line: &[u8], number: usize) -> Result<u64, CliError> {
        Ok(match self {
            KeyHasher::Bytes => bloomlab_sbbf::hash_bytes(line),
            KeyHasher::I32 => bloomlab_sbbf::hash_i32(keys::parse_decimal(line, number)?),
            KeyHasher::I64 => bloomlab_sbbf::hash_i64(keys::parse_decimal(line, number)?),
            KeyHasher::F32 => bloomlab_sbbf::hash_f32(parse_float(line, number)?),
            KeyHasher::F64 => bloomlab_sbbf::hash_f64(parse_float(line, number)?),
            KeyHasher::FixedHex(n) => {
                let b = keys::parse_hex(line, number)?;
                if b.len() != n {
                    return Err(bad_line(
                        number,
                        line,
                        &format!("{} bytes of hex; the column holds {n}-byte values", b.len()),
                    ));
                }
                bloomlab_sbbf::hash_bytes(&b)
            }
        })
    }
}

fn parse_float<T: std::str::FromStr>(line: &[u8], number: usize) -> Result<T, CliError> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|s| s.parse::<T>().ok())
        .ok_or_else(|| bad_line(number, line, "not a decimal number"))
}
