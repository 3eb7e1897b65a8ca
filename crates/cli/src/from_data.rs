//! `build --from-parquet` and `--from-csv`: the values of one column, as keys.

use std::collections::HashSet;
use std::fs::File;
use std::path::Path;

use parquet::basic::Type as PhysicalType;
use parquet::column::reader::{ColumnReader, ColumnReaderImpl};
use parquet::data_type::DataType;
use parquet::file::reader::FileReader;
use parquet::file::serialized_reader::SerializedFileReader;

use crate::CliError;
use crate::keys::{self, KeyType, TypedKey};

/// Every non-null value of a column, in file order (repeats kept, so a filter built from them
/// equals one built from the same values as lines of a key file).
#[derive(Debug, Default)]
pub struct Column {
    /// The key type the values are read as.
    pub key_type: Option<KeyType>,
    /// Integer values (INT32 and INT64 columns, or CSV fields read as `i64`).
    pub ints: Vec<i64>,
    /// Byte values (BYTE_ARRAY columns, or CSV fields read as `str` or `bytes`).
    pub bytes: Vec<Vec<u8>>,
}

impl Column {
    /// The values as typed keys. `str` values were checked to be UTF-8 when read.
    pub fn keys(&self) -> Result<Vec<TypedKey<'_>>, CliError> {
        match self.key_type {
            Some(KeyType::I64) => Ok(self.ints.iter().map(|&v| TypedKey::I64(v)).collect()),
            Some(KeyType::Bytes) | None => {
                Ok(self.bytes.iter().map(|b| TypedKey::Bytes(b)).collect())
            }
            Some(KeyType::Str) => self
                .bytes
                .iter()
                .enumerate()
                .map(|(i, b)| keys::parse(KeyType::Str, b, i + 1))
                .collect(),
        }
    }

    /// The number of distinct values.
    pub fn distinct(&self) -> u64 {
        let n = if self.key_type == Some(KeyType::I64) {
            self.ints.iter().collect::<HashSet<_>>().len()
        } else {
            self.bytes.iter().collect::<HashSet<_>>().len()
        };
        n as u64
    }

    /// Values held.
    pub fn len(&self) -> usize {
        self.ints.len() + self.bytes.len()
    }

    /// No value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// The key type a Parquet column's values are read as: `wanted` if it fits the physical type
/// (`bytes` or `str` for BYTE_ARRAY, `i64` for INT32 and INT64), else the physical type's own.
pub fn key_type_for(
    physical: PhysicalType,
    column: &str,
    wanted: Option<KeyType>,
) -> Result<KeyType, CliError> {
    let fits: &[KeyType] = match physical {
        PhysicalType::BYTE_ARRAY => &[KeyType::Bytes, KeyType::Str],
        PhysicalType::INT32 | PhysicalType::INT64 => &[KeyType::I64],
        other => {
            return Err(CliError::Invalid(format!(
                "column {column} is {other}: build reads BYTE_ARRAY (bytes, str) and INT32/INT64 (i64) columns"
            )));
        }
    };
    match wanted {
        None => Ok(fits[0]),
        Some(t) if fits.contains(&t) => Ok(t),
        Some(t) => Err(CliError::Invalid(format!(
            "--key-type {t} does not fit column {column} ({physical}): it takes {}",
            fits.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(" or ")
        ))),
    }
}

/// Append every non-null value of `column` in `path` (every row group) to `out`, reading it
/// as `wanted` (or the type the column's physical type gives). Every file of a dataset must
/// give the same key type.
pub fn read_parquet(
    path: &Path,
    column: &str,
    wanted: Option<KeyType>,
    out: &mut Column,
) -> Result<(), CliError> {
    let file = File::open(path)
        .map_err(|e| CliError::Io(format!("cannot read {}: {e}", path.display())))?;
    let bad = |e: parquet::errors::ParquetError| {
        CliError::BadFile(format!("{}: not a valid Parquet file: {e}", path.display()))
    };
    let reader = SerializedFileReader::new(file).map_err(bad)?;
    let schema = reader.metadata().file_metadata().schema_descr_ptr();
    let names: Vec<String> = schema.columns().iter().map(|c| c.path().string()).collect();
    let col = names.iter().position(|c| c == column).ok_or_else(|| {
        CliError::Invalid(format!(
            "{}: no column {column:?}; its columns: {}",
            path.display(),
            names.join(", ")
        ))
    })?;
    let t = key_type_for(schema.column(col).physical_type(), column, wanted)?;
    if let Some(prev) = out.key_type.filter(|&p| p != t) {
        return Err(CliError::Invalid(format!(
            "{}: column {column} reads as {t}, the files before as {prev}",
            path.display()
        )));
    }
    out.key_type = Some(t);
    let before = out.bytes.len();
    for rg in 0..reader.num_row_groups() {
        let group = reader.get_row_group(rg).map_err(bad)?;
        let values = group.get_column_reader(col).map_err(bad)?;
        match values {
            ColumnReader::Int32ColumnReader(r) => drain(r, bad, |v| out.ints.push(i64::from(*v)))?,
            ColumnReader::Int64ColumnReader(r) => drain(r, bad, |v| out.ints.push(*v))?,
            ColumnReader::ByteArrayColumnReader(r) => {
                drain(r, bad, |v| out.bytes.push(v.data().to_vec()))?;
            }
            _ => {
                return Err(CliError::BadFile(format!(
                    "{}: column {column} does not read as its physical type says",
                    path.display()
                )));
            }
        }
    }
    if t == KeyType::Str {
        for (i, b) in out.bytes[before..].iter().enumerate() {
            if std::str::from_utf8(b).is_err() {
                return Err(CliError::BadKey(format!(
                    "{}: value {} of column {column} is not valid UTF-8 (use --key-type bytes)",
                    path.display(),
                    i + 1
                )));
            }
        }
    }
    Ok(())
}

/// Read every value of a column chunk, in batches, handing each non-null one to `each`.
fn drain<T: DataType>(
    mut r: ColumnReaderImpl<T>,
    bad: impl Fn(parquet::errors::ParquetError) -> CliError,
    mut each: impl FnMut(&T::T),
) -> Result<(), CliError> {
    const BATCH: usize = 8192;
    let (mut defs, mut reps, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    loop {
        defs.clear();
        reps.clear();
        vals.clear();
        let (records, _, levels) = r
            .read_records(BATCH, Some(&mut defs), Some(&mut reps), &mut vals)
            .map_err(&bad)?;
        vals.iter().for_each(&mut each);
        if records == 0 && levels == 0 {
            return Ok(());
        }
    }
}

/// Append every field of `column` (named in the header line) of the CSV file `path` to `out`,
/// read as `t` (`str` when not given: a CSV file is text).
pub fn read_csv(
    path: &Path,
    column: &str,
    t: Option<KeyType>,
    out: &mut Column,
) -> Result<(), CliError> {
    let t = t.unwrap_or(KeyType::Str);
    out.key_type = Some(t);
    let mut r = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_path(path)
        .map_err(|e| CliError::Io(format!("cannot read {}: {e}", path.display())))?;
    let bad = |e: csv::Error| CliError::BadFile(format!("{}: not valid CSV: {e}", path.display()));
    let headers = r.byte_headers().map_err(bad)?.clone();
    let col = headers
        .iter()
        .position(|h| h == column.as_bytes())
        .ok_or_else(|| {
            let names: Vec<String> = headers
                .iter()
                .map(|h| String::from_utf8_lossy(h).into_owned())
                .collect();
            CliError::Invalid(format!(
                "{}: no column {column:?}; its columns: {}",
                path.display(),
                names.join(", ")
            ))
        })?;
    let mut record = csv::ByteRecord::new();
    let mut row = 1;
    while r.read_byte_record(&mut record).map_err(bad)? {
        row += 1;
        let field = record.get(col).ok_or_else(|| {
            CliError::BadFile(format!(
                "{}: row {row} has no field {}",
                path.display(),
                col + 1
            ))
        })?;
        match keys::parse(t, field, row).map_err(|e| in_csv(path, e))? {
            TypedKey::I64(v) => out.ints.push(v),
            TypedKey::Str(_) | TypedKey::Bytes(_) => out.bytes.push(field.to_vec()),
        }
    }
    Ok(())
}

fn in_csv(path: &Path, e: CliError) -> CliError {
    CliError::BadKey(format!(
        "{}: {}",
        path.display(),
        e.to_string().replacen("line", "row", 1)
    ))
}
