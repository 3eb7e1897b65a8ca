//! `bloomlab.parquet`: the bloom filters inside Parquet data files, through the `bloomlab`
//! command's reader (`bloomlab_cli::parquet_file`).

use std::fs::File;
use std::path::PathBuf;

use bloomlab_cli::CliError;
use bloomlab_cli::parquet_file::{KeyHasher, ParquetBlooms};
use parquet::file::metadata::ParquetMetaDataReader;
use pyo3::exceptions::{PyOSError, PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyString};

use crate::DecodeError;

fn cli_err(e: CliError) -> PyErr {
    match e {
        CliError::Io(m) => PyOSError::new_err(m),
        CliError::BadFile(m) => DecodeError::new_err(m),
        other => PyValueError::new_err(other.to_string()),
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

fn bytes_of(obj: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Some(b.as_bytes().to_vec()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Some(b.to_vec()));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(Some(s.encode_utf8()?.as_bytes().to_vec()));
    }
    Ok(None)
}

fn int_of(obj: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    if obj.is_instance_of::<PyBool>()
        || !(obj.is_instance_of::<PyInt>() || obj.hasattr("__index__")?)
    {
        return Ok(None);
    }
    obj.extract::<i64>().map(Some).map_err(|_| {
        PyOverflowError::new_err("the value does not fit in the column's integer type")
    })
}

fn float_of(obj: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
    if obj.is_instance_of::<PyBool>() {
        return Ok(None);
    }
    if obj.is_instance_of::<PyFloat>()
        || obj.is_instance_of::<PyInt>()
        || obj.hasattr("__float__")?
    {
        return obj.extract::<f64>().map(Some);
    }
    Ok(None)
}

/// The xxHash64 of `value`'s plain encoding for a column hashed by `hasher`.
fn hash_value(hasher: KeyHasher, value: &Bound<'_, PyAny>) -> PyResult<u64> {
    let wrong = |want: &str| {
        PyTypeError::new_err(format!(
            "a {} value cannot be a key of this column: it takes {want}",
            type_name(value)
        ))
    };
    Ok(match hasher {
        KeyHasher::Bytes => {
            bloomlab_sbbf::hash_bytes(&bytes_of(value)?.ok_or_else(|| wrong("bytes or str"))?)
        }
        KeyHasher::FixedHex(n) => {
            let b = match value.cast::<PyString>() {
                Ok(_) => None,
                Err(_) => bytes_of(value)?,
            }
            .ok_or_else(|| wrong(&format!("bytes of length {n}")))?;
            if b.len() != n {
                return Err(PyValueError::new_err(format!(
                    "{} bytes given; the column holds {n}-byte values",
                    b.len()
                )));
            }
            bloomlab_sbbf::hash_bytes(&b)
        }
        KeyHasher::I32 => {
            let v = int_of(value)?.ok_or_else(|| wrong("int"))?;
            let v = i32::try_from(v).map_err(|_| {
                PyOverflowError::new_err(format!("{v} does not fit in the column's INT32"))
            })?;
            bloomlab_sbbf::hash_i32(v)
        }
        KeyHasher::I64 => bloomlab_sbbf::hash_i64(int_of(value)?.ok_or_else(|| wrong("int"))?),
        KeyHasher::F32 => {
            bloomlab_sbbf::hash_f32(float_of(value)?.ok_or_else(|| wrong("float"))? as f32)
        }
        KeyHasher::F64 => bloomlab_sbbf::hash_f64(float_of(value)?.ok_or_else(|| wrong("float"))?),
    })
}

/// See `bloomlab.parquet.contains`.
#[pyfunction]
#[pyo3(name = "_parquet_contains")]
pub fn parquet_contains(
    path: PathBuf,
    column: &str,
    values: &Bound<'_, PyAny>,
) -> PyResult<Vec<Vec<Option<bool>>>> {
    if values.is_instance_of::<PyString>() || values.is_instance_of::<PyBytes>() {
        return Err(PyTypeError::new_err(
            "values is an iterable of values: wrap a single value in a list",
        ));
    }
    let mut file = ParquetBlooms::open(&path).map_err(cli_err)?;
    let col = file.column(column).map_err(cli_err)?;
    let hasher = file.key_hasher(col).map_err(cli_err)?;
    let hashes = values
        .try_iter()?
        .map(|v| hash_value(hasher, &v?))
        .collect::<PyResult<Vec<u64>>>()?;
    let filters = (0..file.row_groups())
        .map(|rg| file.filter(rg, col))
        .collect::<Result<Vec<_>, _>>()
        .map_err(cli_err)?;
    Ok(hashes
        .iter()
        .map(|&h| {
            filters
                .iter()
                .map(|f| f.as_ref().map(|f| f.might_contain_hash(h)))
                .collect()
        })
        .collect())
}

/// See `bloomlab.parquet.inspect`.
#[pyfunction]
#[pyo3(name = "_parquet_inspect")]
pub fn parquet_inspect<'py>(py: Python<'py>, path: PathBuf) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let mut file = ParquetBlooms::open(&path).map_err(cli_err)?;
    // The physical types, from the footer (ParquetBlooms keeps its metadata to itself).
    let meta = File::open(&path)
        .map_err(|e| PyOSError::new_err(format!("cannot read {}: {e}", path.display())))
        .and_then(|f| {
            ParquetMetaDataReader::new()
                .parse_and_finish(&f)
                .map_err(|e| DecodeError::new_err(format!("not a valid Parquet file: {e}")))
        })?;
    let schema = meta.file_metadata().schema_descr();
    let columns = file.columns();
    let mut rows = Vec::new();
    for rg in 0..file.row_groups() {
        for (ci, name) in columns.iter().enumerate() {
            let d = PyDict::new(py);
            d.set_item("row_group", rg)?;
            d.set_item("column", name)?;
            d.set_item("type", schema.column(ci).physical_type().to_string())?;
            match file.filter(rg, ci).map_err(cli_err)? {
                Some(f) => {
                    d.set_item("bytes", f.size_in_bytes())?;
                    d.set_item("fill", f.fill_ratio())?;
                    d.set_item("est_fpr", f.current_fpr())?;
                    d.set_item("est_distinct", f.estimated_len())?;
                }
                None => {
                    for k in ["bytes", "fill", "est_fpr", "est_distinct"] {
                        d.set_item(k, py.None())?;
                    }
                }
            }
            rows.push(d);
        }
    }
    Ok(rows)
}
