//! The `bloomlab` Python package's native module, `bloomlab._bloomlab`.
//!
//! Built by maturin (`pip install ./crates/python`) into one abi3 wheel for CPython 3.9 and
//! later; the Python side (`python/bloomlab/`) re-exports these classes, adds
//! `bloomlab.parquet` and ships the type stubs. The contract for Python users is in the
//! package's docstrings and `python/bloomlab/_bloomlab.pyi`; the tests are the pytest suite
//! in `tests/` (run by `ci.sh`), since a Rust test binary here would need libpython.
//!
//! The classes of the workspace's own variants are not written one by one: `variants.rs`
//! makes them from the facade's one list (`bloomlab::for_each_variant!`) and each variant's
//! `Declared` implementation, and settles each class's methods, constructor and docstring
//! from its declaration at import; `stubgen.py` writes their stubs from the built module. A
//! variant added to the list gets its class with no edit here. Spark's and Guava's filters,
//! which are not variants of the list, are written below by hand.
//!
//! # Guarantees
//!
//! - Every class wraps the workspace's Rust filter of the same name: the same sizing, the
//!   same answers, the same byte formats (`to_bytes` / `from_bytes`, and pickle through
//!   them). A filter written by Rust, the `bloomlab` command or Python reads back in any of
//!   them and answers alike.
//! - Keys are `bytes`, `str` or `int`, hashed as the `bloomlab` command hashes them
//!   (`keys.rs`).
//! - Bad parameters raise `ValueError`, bad bytes `bloomlab.DecodeError` (a `ValueError`),
//!   a key of another type `TypeError`, a full cuckoo or expandable filter
//!   `bloomlab.FullError`; no input makes the module panic (a panic would surface as
//!   `pyo3_runtime.PanicException`, and the fuzz test in `tests/` feeds every `from_bytes`
//!   mutated bytes to show none does).
//! - Batch calls (`update`, `contains_many`, `RibbonFilter.build`) copy the keys out of
//!   Python, then release the GIL while the filter works.
//!
//! # Cost
//!
//! One key: the Rust filter's own lookup or insert (one hash of the key's bytes, then its
//! probes) plus the Python call; a `str` key is read in place (CPython's UTF-8 form). A
//! batch: one pass to copy the keys into one buffer (NumPy integer and `S` arrays in one
//! `tobytes`), then the filter's batched call where it has one (blocked, classic, split-block,
//! Ribbon: hashed and prefetched ahead), without the GIL; memory O(total key bytes). A class
//! of the list binds its constructor's arguments through its `inspect.Signature` (a few
//! microseconds per filter made); importing the module builds one one-key filter per variant
//! to read what its class offers.
//!
//! No `unsafe` code: `#![forbid(unsafe_code)]` (PyO3 keeps its own inside its crates).
#![forbid(unsafe_code)]

mod backend;
mod keys;
mod parquet;

use bloomlab_core::Error;
use bloomlab_jvm::{GuavaBloomFilter, GuavaStrategy, SparkBloomFilter, SparkVersion};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyInt, PyList};

create_exception!(
    bloomlab,
    DecodeError,
    PyValueError,
    "Bytes that are not a valid filter of the class asked for: damaged, truncated, of another format or version."
);
create_exception!(
    bloomlab,
    FullError,
    PyRuntimeError,
    "The filter cannot take another key without losing one it holds; it is unchanged."
);

/// A Rust error as the documented Python exception.
pub(crate) fn py_err(e: Error) -> PyErr {
    match e {
        Error::Decode(d) => DecodeError::new_err(format!("cannot decode filter: {d}")),
        Error::Full(_) => FullError::new_err(e.to_string()),
        Error::Static(_) => PyTypeError::new_err(e.to_string()),
        other => PyValueError::new_err(other.to_string()),
    }
}

/// A size parameter: an `int` from 0 to 2^64 − 1 (`ValueError` otherwise; the filters
/// themselves refuse 0).
fn size_arg(obj: &Bound<'_, PyAny>, name: &str) -> PyResult<u64> {
    if obj.is_instance_of::<PyBool>() || !obj.is_instance_of::<PyInt>() {
        return Err(PyTypeError::new_err(format!(
            "{name} must be an int, not {}",
            obj.get_type().name()?
        )));
    }
    obj.extract::<u64>().map_err(|_| {
        PyValueError::new_err(format!(
            "{name} must be from 0 to 2**64 - 1 (got {})",
            obj.repr().map(|r| r.to_string()).unwrap_or_default()
        ))
    })
}

/// The bytes of a `bytes`, `bytearray` or `memoryview`-less buffer argument.
fn bytes_arg(obj: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(b.to_vec());
    }
    Err(PyTypeError::new_err(format!(
        "from_bytes takes bytes or bytearray, not {}",
        obj.get_type().name()?
    )))
}

/// A NumPy bool array of the answers.
fn bool_array<'py>(py: Python<'py>, out: &[bool]) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let raw: Vec<u8> = out.iter().map(|&b| u8::from(b)).collect();
    let buf = PyByteArray::new(py, &raw);
    np.call_method1("frombuffer", (buf, np.getattr("bool_")?))
}

/// The methods every class has: lookups, bytes, pickle, size.
macro_rules! common_methods {
    ($name:ident) => {
        #[pymethods]
        impl $name {
            /// `key in f`: `False` if `key` was definitely never added, `True` if it may
            /// have been. `key` is `bytes`, `bytearray`, `str` or `int`.
            fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                $crate::keys::with_key(key, |k| $crate::backend::Lookup::contains(&self.inner, k))
            }

            /// `f.contains_many(keys)`: one answer per key, as a NumPy `bool` array, in
            /// order. `keys` is any iterable of keys or a NumPy array of integers, of
            /// fixed-width bytes (`S`), of text or of objects. The GIL is released while the
            /// filter answers.
            fn contains_many<'py>(
                &self,
                py: Python<'py>,
                keys: &Bound<'py, PyAny>,
            ) -> PyResult<Bound<'py, PyAny>> {
                let batch = $crate::keys::batch(keys)?;
                let mut out = vec![false; batch.len()];
                let inner = &self.inner;
                py.detach(|| $crate::backend::Lookup::contains_batch(inner, &batch, &mut out));
                $crate::bool_array(py, &out)
            }

            /// The filter's versioned byte format (see the class docstring), which
            /// `from_bytes` reads back on any platform.
            fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, ::pyo3::types::PyBytes> {
                ::pyo3::types::PyBytes::new(py, &$crate::backend::Codec::encode(&self.inner))
            }

            /// Read a filter from `to_bytes`'s output. Raises `bloomlab.DecodeError` (a
            /// `ValueError`) for damaged bytes or another format, `TypeError` unless `data`
            /// is `bytes` or `bytearray`.
            #[classmethod]
            fn from_bytes(
                _cls: &Bound<'_, ::pyo3::types::PyType>,
                data: &Bound<'_, PyAny>,
            ) -> PyResult<Self> {
                let bytes = $crate::bytes_arg(data)?;
                Ok(Self {
                    inner: $crate::backend::Codec::decode(&bytes)?,
                })
            }

            /// Pickle through `to_bytes` / `from_bytes`.
            fn __reduce__<'py>(
                slf: &Bound<'py, Self>,
            ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, ::pyo3::types::PyBytes>,))> {
                let from = slf.get_type().getattr("from_bytes")?;
                let bytes = slf.borrow().to_bytes(slf.py());
                Ok((from, (bytes,)))
            }

            fn __copy__(&self) -> Self {
                Self {
                    inner: self.inner.clone(),
                }
            }

            fn __deepcopy__(&self, _memo: &Bound<'_, PyAny>) -> Self {
                self.__copy__()
            }

            /// The number of keys added (as the Rust filter counts them; see the class
            /// docstring).
            fn __len__(&self) -> usize {
                usize::try_from(::bloomlab_core::Filter::len(&self.inner)).unwrap_or(usize::MAX)
            }

            /// Bytes of memory the filter's table takes.
            #[getter]
            fn size_in_bytes(&self) -> usize {
                ::bloomlab_core::Filter::size_in_bytes(&self.inner)
            }

            /// Table bits per key at the filter's design capacity (or its count when full
            /// past it).
            #[getter]
            fn bits_per_item(&self) -> f64 {
                ::bloomlab_core::Filter::bits_per_item(&self.inner)
            }

            /// The false-positive rate the formula predicts at the current load.
            #[getter]
            fn expected_fpr(&self) -> f64 {
                ::bloomlab_core::Filter::expected_fpr(&self.inner)
            }

            fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
                let this = slf.borrow();
                Ok(format!(
                    "bloomlab.{}(len={}, size_in_bytes={}, expected_fpr={:.4})",
                    slf.get_type().name()?,
                    ::bloomlab_core::Filter::len(&this.inner),
                    ::bloomlab_core::Filter::size_in_bytes(&this.inner),
                    ::bloomlab_core::Filter::expected_fpr(&this.inner),
                ))
            }
        }
    };
}

/// `add` and `update`.
macro_rules! insert_methods {
    ($name:ident) => {
        #[pymethods]
        impl $name {
            /// Add one key (`bytes`, `bytearray`, `str` or `int`). Adding a key the cuckoo or
            /// expandable filter already holds as often as it keeps (8 or 4 copies) leaves the
            /// filter unchanged; `remove` then takes away one of the copies it holds.
            fn add(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
                $crate::keys::with_key(key, |k| $crate::backend::Insert::add(&mut self.inner, k))?
                    .map_err($crate::py_err)
            }

            /// Add every key of an iterable or NumPy array (see `contains_many`), releasing
            /// the GIL while the filter works. The keys are read first: a key of another
            /// type raises before any is added. A full cuckoo or expandable filter raises
            /// `bloomlab.FullError` at the first key it refuses, keeping the keys before it.
            fn update(&mut self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
                let batch = $crate::keys::batch(keys)?;
                let inner = &mut self.inner;
                py.detach(|| $crate::backend::Insert::add_batch(inner, &batch))
                    .map_err($crate::py_err)
            }
        }
    };
}

/// `remove` and `discard`.
macro_rules! remove_methods {
    ($name:ident) => {
        #[pymethods]
        impl $name {
            /// Remove one copy of a key that was added; `KeyError` if the filter does not
            /// hold it. Removing a key that was never added can remove another key's entry
            /// and cause a false negative: remove only keys you added.
            fn remove(&mut self, key: &Bound<'_, PyAny>) -> PyResult<()> {
                if self.discard(key)? {
                    Ok(())
                } else {
                    Err(::pyo3::exceptions::PyKeyError::new_err(
                        key.clone().unbind(),
                    ))
                }
            }

            /// `remove` without the `KeyError`: returns whether an entry was removed.
            fn discard(&mut self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                $crate::keys::with_key(key, |k| {
                    $crate::backend::Remove::remove_key(&mut self.inner, k)
                })?
                .ok_or_else(|| {
                    ::pyo3::exceptions::PyTypeError::new_err("this filter cannot delete keys")
                })
            }
        }
    };
}

/// `|`: the exact union.
macro_rules! union_methods {
    ($name:ident) => {
        #[pymethods]
        impl $name {
            /// `a | b`: a new filter holding both filters' keys, exactly the filter that
            /// adding both key sets would have built. `ValueError` if they were sized
            /// differently (their bits would mean different things).
            fn __or__(&self, other: PyRef<'_, Self>) -> PyResult<Self> {
                let mut inner = self.inner.clone();
                $crate::backend::Union::union_with(&mut inner, &other.inner)
                    .map_err($crate::py_err)?;
                Ok(Self { inner })
            }

            /// `a |= b`: `a` takes `b`'s keys in place.
            fn __ior__(&mut self, other: &Bound<'_, Self>) -> PyResult<()> {
                let other = other.try_borrow()?.inner.clone();
                $crate::backend::Union::union_with(&mut self.inner, &other).map_err($crate::py_err)
            }
        }
    };
}

/// `estimated_count()`.
macro_rules! estimate_methods {
    ($name:ident) => {
        #[pymethods]
        impl $name {
            /// The number of distinct keys added, estimated from the filter's fill (the
            /// Swamidass–Baldi estimate; for bytes that carry no count, the only count).
            fn estimated_count(&self) -> PyResult<f64> {
                $crate::backend::Estimate::estimated_count(&self.inner).ok_or_else(|| {
                    ::pyo3::exceptions::PyTypeError::new_err(
                        "this filter has no estimate of its count",
                    )
                })
            }
        }
    };
}

mod variants;

/// Apache Spark's `org.apache.spark.util.sketch.BloomFilter`, bit for bit: `int` keys as
/// `putLong`, `str` as `putString`, `bytes` as `putBinary`.
///
/// `SparkBloomFilter(n, fpr, version=2)`: sized as Spark's `BloomFilter.create(n, fpr)`;
/// version 1 (Spark 2.0–4.0) or 2 (the default since Spark 4.1, seeded). Bytes: exactly
/// what Spark's `writeTo` writes, and `from_bytes` reads what it wrote (either version).
/// `len()` counts the keys added to this object, repeats included; the form carries no
/// count, so a filter read from bytes starts from `estimated_count()`, the estimate from its
/// fill. Union: exact (Spark's `mergeInPlace`).
///
/// >>> import bloomlab
/// >>> f = bloomlab.SparkBloomFilter(1000, 0.03, version=1)
/// >>> f.add(-5)
/// >>> -5 in bloomlab.SparkBloomFilter.from_bytes(f.to_bytes())
/// True
#[pyclass(module = "bloomlab", name = "SparkBloomFilter")]
#[derive(Debug)]
pub struct PySparkBloomFilter {
    inner: SparkBloomFilter,
}

#[pymethods]
impl PySparkBloomFilter {
    #[new]
    #[pyo3(signature = (n, fpr, version=2))]
    fn new(n: &Bound<'_, PyAny>, fpr: f64, version: i32) -> PyResult<Self> {
        let v = SparkVersion::from_number(version).ok_or_else(|| {
            PyValueError::new_err(format!(
                "Spark's formats are versions 1 and 2 (got {version})"
            ))
        })?;
        Ok(Self {
            inner: SparkBloomFilter::create(size_arg(n, "n")?, fpr, v).map_err(py_err)?,
        })
    }

    /// The format version, 1 or 2.
    #[getter]
    fn version(&self) -> i32 {
        self.inner.version().number()
    }
}

/// Guava's `com.google.common.hash.BloomFilter`, bit for bit: `int` keys as
/// `Funnels.longFunnel()`, `str` as `Funnels.stringFunnel(UTF_8)`, `bytes` as
/// `Funnels.byteArrayFunnel()`.
///
/// `GuavaBloomFilter(n, fpr)`: sized as `BloomFilter.create(funnel, n, fpr)`
/// (`MURMUR128_MITZ_64`). Bytes: what Guava's `writeTo` writes; `from_bytes` reads both of
/// Guava's strategies. No count in the form: `len()` as for `SparkBloomFilter`. Union: exact
/// (`putAll`).
///
/// >>> import bloomlab
/// >>> f = bloomlab.GuavaBloomFilter(1000, 0.01)
/// >>> f.add("guava")
/// >>> "guava" in f
/// True
#[pyclass(module = "bloomlab", name = "GuavaBloomFilter")]
#[derive(Debug)]
pub struct PyGuavaBloomFilter {
    inner: GuavaBloomFilter,
}

#[pymethods]
impl PyGuavaBloomFilter {
    #[new]
    #[pyo3(signature = (n, fpr))]
    fn new(n: &Bound<'_, PyAny>, fpr: f64) -> PyResult<Self> {
        Ok(Self {
            inner: GuavaBloomFilter::create(size_arg(n, "n")?, fpr).map_err(py_err)?,
        })
    }

    /// Guava's strategy: `"MURMUR128_MITZ_64"` (what `create` uses) or
    /// `"MURMUR128_MITZ_32"` (read from older bytes).
    #[getter]
    fn strategy(&self) -> &'static str {
        match self.inner.strategy() {
            GuavaStrategy::Murmur128Mitz32 => "MURMUR128_MITZ_32",
            GuavaStrategy::Murmur128Mitz64 => "MURMUR128_MITZ_64",
        }
    }
}

/// What Spark's and Guava's classes share beyond their constructors: `k` and `m`, and the
/// methods of a Bloom filter with an exact union and an estimate of its count.
macro_rules! jvm_methods {
    ($($name:ident),*) => {$(
        #[pymethods]
        impl $name {
            /// Probes per key, `k`.
            #[getter]
            fn hashes(&self) -> u32 {
                self.inner.num_hash_functions()
            }

            /// Number of bits, `m`.
            #[getter]
            fn bit_size(&self) -> u64 {
                self.inner.bit_size()
            }
        }

        common_methods!($name);
        insert_methods!($name);
        union_methods!($name);
        estimate_methods!($name);
    )*};
}

jvm_methods!(PySparkBloomFilter, PyGuavaBloomFilter);

/// The native module.
#[pymodule]
fn _bloomlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("DecodeError", py.get_type::<DecodeError>())?;
    m.add("FullError", py.get_type::<FullError>())?;
    let mut public = vec!["DecodeError".to_owned(), "FullError".to_owned()];
    public.extend(variants::add_classes(m)?);
    m.add_class::<PySparkBloomFilter>()?;
    m.add_class::<PyGuavaBloomFilter>()?;
    public.extend(["SparkBloomFilter".to_owned(), "GuavaBloomFilter".to_owned()]);
    m.add_function(wrap_pyfunction!(parquet::parquet_contains, m)?)?;
    m.add_function(wrap_pyfunction!(parquet::parquet_inspect, m)?)?;
    // What `from bloomlab._bloomlab import *` (the package's `__init__`) re-exports: the
    // exceptions and classes, not the private functions `bloomlab.parquet` wraps.
    m.setattr("__all__", PyList::new(py, public)?)?;
    Ok(())
}
