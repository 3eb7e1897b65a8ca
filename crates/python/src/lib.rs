//! The `bloomlab` Python package's native module, `bloomlab._bloomlab`.
//!
//! Built by maturin (`pip install ./crates/python`) into one abi3 wheel for CPython 3.9 and
//! later; the Python side (`python/bloomlab/`) re-exports these classes, adds
//! `bloomlab.parquet` and ships the type stubs. The contract for Python users is in the
//! package's docstrings and `python/bloomlab/_bloomlab.pyi`; the tests are the pytest suite
//! in `tests/` (run by `ci.sh`), since a Rust test binary here would need libpython.
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
//! Ribbon: hashed and prefetched ahead), without the GIL; memory O(total key bytes).
//!
//! No `unsafe` code: `#![forbid(unsafe_code)]` (PyO3 keeps its own inside its crates).
#![forbid(unsafe_code)]

mod backend;
mod keys;
mod parquet;

use bloomlab_blocked::BlockedBloomFilter;
use bloomlab_classic::BloomFilter;
use bloomlab_core::{Error, Filter};
use bloomlab_counting::CountingBloomFilter;
use bloomlab_cuckoo::CuckooFilter;
use bloomlab_expandable::ExpandableFilter;
use bloomlab_jvm::{GuavaBloomFilter, GuavaStrategy, SparkBloomFilter, SparkVersion};
use bloomlab_ribbon::RibbonFilter;
use bloomlab_sbbf::Sbbf;
use bloomlab_scalable::ScalableBloomFilter;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyInt, PyType};

use backend::{Estimate, Insert, Lookup, Remove, Union};

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

/// How a class's filter turns into bytes and back.
trait Codec: Sized {
    fn encode(&self) -> Vec<u8>;
    fn decode(bytes: &[u8]) -> PyResult<Self>;
}

macro_rules! codec {
    ($ty:ty) => {
        impl Codec for $ty {
            fn encode(&self) -> Vec<u8> {
                self.to_bytes()
            }
            fn decode(bytes: &[u8]) -> PyResult<Self> {
                <$ty>::from_bytes(bytes).map_err(py_err)
            }
        }
    };
    ($ty:ty, jvm) => {
        impl Codec for $ty {
            fn encode(&self) -> Vec<u8> {
                self.to_bytes()
            }
            fn decode(bytes: &[u8]) -> PyResult<Self> {
                <$ty>::from_bytes(bytes)
                    .map_err(|e| DecodeError::new_err(format!("cannot decode filter: {e}")))
            }
        }
    };
}

codec!(BlockedBloomFilter);
codec!(BloomFilter);
codec!(Sbbf);
codec!(CuckooFilter);
codec!(CountingBloomFilter);
codec!(ExpandableFilter);
codec!(ScalableBloomFilter);
codec!(RibbonFilter);
codec!(SparkBloomFilter, jvm);
codec!(GuavaBloomFilter, jvm);

/// The methods every class has: lookups, bytes, pickle, size.
macro_rules! common_methods {
    ($name:ident) => {
        #[pymethods]
        impl $name {
            /// `key in f`: `False` if `key` was definitely never added, `True` if it may
            /// have been. `key` is `bytes`, `bytearray`, `str` or `int`.
            fn __contains__(&self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                keys::with_key(key, |k| self.inner.contains(k))
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
                let batch = keys::batch(keys)?;
                let mut out = vec![false; batch.len()];
                let inner = &self.inner;
                py.detach(|| inner.contains_batch(&batch, &mut out));
                bool_array(py, &out)
            }

            /// The filter's versioned byte format (see the class docstring), which
            /// `from_bytes` reads back on any platform.
            fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
                PyBytes::new(py, &self.inner.encode())
            }

            /// Read a filter from `to_bytes`'s output. Raises `bloomlab.DecodeError` (a
            /// `ValueError`) for damaged bytes or another format, `TypeError` unless `data`
            /// is `bytes` or `bytearray`.
            #[classmethod]
            fn from_bytes(_cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
                let bytes = bytes_arg(data)?;
                Ok(Self {
                    inner: Codec::decode(&bytes)?,
                })
            }

            /// Pickle through `to_bytes` / `from_bytes`.
            fn __reduce__<'py>(
                slf: &Bound<'py, Self>,
            ) -> PyResult<(Bound<'py, PyAny>, (Bound<'py, PyBytes>,))> {
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
                usize::try_from(Filter::len(&self.inner)).unwrap_or(usize::MAX)
            }

            /// Bytes of memory the filter's table takes.
            #[getter]
            fn size_in_bytes(&self) -> usize {
                Filter::size_in_bytes(&self.inner)
            }

            /// Table bits per key at the filter's design capacity (or its count when full
            /// past it).
            #[getter]
            fn bits_per_item(&self) -> f64 {
                Filter::bits_per_item(&self.inner)
            }

            /// The false-positive rate the formula predicts at the current load.
            #[getter]
            fn expected_fpr(&self) -> f64 {
                Filter::expected_fpr(&self.inner)
            }

            fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
                let this = slf.borrow();
                Ok(format!(
                    "bloomlab.{}(len={}, size_in_bytes={}, expected_fpr={:.4})",
                    slf.get_type().name()?,
                    Filter::len(&this.inner),
                    Filter::size_in_bytes(&this.inner),
                    Filter::expected_fpr(&this.inner),
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
                keys::with_key(key, |k| self.inner.add(k))?.map_err(py_err)
            }

            /// Add every key of an iterable or NumPy array (see `contains_many`), releasing
            /// the GIL while the filter works. The keys are read first: a key of another
            /// type raises before any is added. A full cuckoo or expandable filter raises
            /// `bloomlab.FullError` at the first key it refuses, keeping the keys before it.
            fn update(&mut self, py: Python<'_>, keys: &Bound<'_, PyAny>) -> PyResult<()> {
                let batch = keys::batch(keys)?;
                let inner = &mut self.inner;
                py.detach(|| inner.add_batch(&batch)).map_err(py_err)
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
                if keys::with_key(key, |k| self.inner.remove_key(k))? {
                    Ok(())
                } else {
                    Err(pyo3::exceptions::PyKeyError::new_err(key.clone().unbind()))
                }
            }

            /// `remove` without the `KeyError`: returns whether an entry was removed.
            fn discard(&mut self, key: &Bound<'_, PyAny>) -> PyResult<bool> {
                keys::with_key(key, |k| self.inner.remove_key(k))
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
                inner.union_with(&other.inner).map_err(py_err)?;
                Ok(Self { inner })
            }

            /// `a |= b`: `a` takes `b`'s keys in place.
            fn __ior__(&mut self, other: &Bound<'_, Self>) -> PyResult<()> {
                let other = other.try_borrow()?.inner.clone();
                self.inner.union_with(&other).map_err(py_err)
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
            fn estimated_count(&self) -> f64 {
                self.inner.estimated_count()
            }
        }
    };
}

/// A blocked Bloom filter: all `k` probes of a key inside one 64-byte, 512-bit block, so a
/// lookup touches one cache line (AVX-512 or AVX2 where the CPU has them). The fastest
/// lookups for a known number of keys; 9.92 bits per key and k = 6 at 1 %.
///
/// `BlockedBloomFilter(n, fpr)` sizes it for `n` keys at false-positive rate `fpr`.
/// Bytes: bloomlab's checked, versioned `BLAB` envelope (blocked format version 3; versions 1
/// and 2 still read). Union: exact (`|`).
///
/// >>> import bloomlab
/// >>> f = bloomlab.BlockedBloomFilter(1000, 0.01)
/// >>> f.update(["a", b"b", 3])
/// >>> ("a" in f, b"b" in f, 3 in f)
/// (True, True, True)
#[pyclass(module = "bloomlab", name = "BlockedBloomFilter")]
#[derive(Debug)]
pub struct PyBlockedBloomFilter {
    inner: BlockedBloomFilter,
}

#[pymethods]
impl PyBlockedBloomFilter {
    #[new]
    #[pyo3(signature = (n, fpr))]
    fn new(n: &Bound<'_, PyAny>, fpr: f64) -> PyResult<Self> {
        Ok(Self {
            inner: BlockedBloomFilter::with_fpr(size_arg(n, "n")?, fpr).map_err(py_err)?,
        })
    }

    /// Probes per key, `k`.
    #[getter]
    fn hashes(&self) -> u32 {
        self.inner.hashes()
    }

    /// Fraction of bits set.
    #[getter]
    fn fill_ratio(&self) -> f64 {
        self.inner.fill_ratio()
    }
}

common_methods!(PyBlockedBloomFilter);
insert_methods!(PyBlockedBloomFilter);
union_methods!(PyBlockedBloomFilter);
estimate_methods!(PyBlockedBloomFilter);

/// The classic Bloom filter: `k` probes over one bit array, sized by the textbook formula
/// (9.59 bits per key and k = 7 at 1 %).
///
/// `BloomFilter(n, fpr)` sizes it for `n` keys at false-positive rate `fpr`. Bytes:
/// bloomlab's `BLAB` envelope (classic format version 1). Union: exact (`|`).
///
/// >>> import bloomlab
/// >>> f = bloomlab.BloomFilter(1000, 0.01)
/// >>> f.add("x")
/// >>> "x" in f, len(f)
/// (True, 1)
#[pyclass(module = "bloomlab", name = "BloomFilter")]
#[derive(Debug)]
pub struct PyBloomFilter {
    inner: BloomFilter,
}

#[pymethods]
impl PyBloomFilter {
    #[new]
    #[pyo3(signature = (n, fpr))]
    fn new(n: &Bound<'_, PyAny>, fpr: f64) -> PyResult<Self> {
        Ok(Self {
            inner: BloomFilter::with_fpr(size_arg(n, "n")?, fpr).map_err(py_err)?,
        })
    }

    /// Probes per key, `k`.
    #[getter]
    fn hashes(&self) -> u32 {
        self.inner.hashes()
    }

    /// Fraction of bits set.
    #[getter]
    fn fill_ratio(&self) -> f64 {
        self.inner.fill_ratio()
    }
}

common_methods!(PyBloomFilter);
insert_methods!(PyBloomFilter);
union_methods!(PyBloomFilter);
estimate_methods!(PyBloomFilter);

/// The split-block Bloom filter of the Parquet specification, bit for bit: keys hashed with
/// xxHash64 (an `int` key is hashed as its 8 little-endian bytes, which is Parquet's plain
/// INT64 encoding), 256-bit blocks of eight 32-bit words.
///
/// `Sbbf(n, fpr)` sizes it for `n` keys at `fpr` in whole 32-byte blocks;
/// `Sbbf.parquet_sized(n, fpr)` rounds that up to a size Parquet allows. Bytes: `to_bytes`
/// writes bloomlab's `BLAB` envelope; `to_parquet_bytes` / `from_parquet_bytes` the Parquet
/// bloom filter section (Thrift header, then the bitset) that Parquet writers and readers
/// use. Union: exact.
///
/// >>> import bloomlab
/// >>> f = bloomlab.Sbbf.parquet_sized(1000, 0.01)
/// >>> f.add(7)
/// >>> 7 in bloomlab.Sbbf.from_parquet_bytes(f.to_parquet_bytes())
/// True
#[pyclass(module = "bloomlab", name = "Sbbf")]
#[derive(Debug)]
pub struct PySbbf {
    inner: Sbbf,
}

#[pymethods]
impl PySbbf {
    #[new]
    #[pyo3(signature = (n, fpr))]
    fn new(n: &Bound<'_, PyAny>, fpr: f64) -> PyResult<Self> {
        Ok(Self {
            inner: Sbbf::with_fpr(size_arg(n, "n")?, fpr).map_err(py_err)?,
        })
    }

    /// `Sbbf(n, fpr)` rounded up to a size a Parquet file allows (a power of two from 32 B
    /// to 128 MiB), so that `to_parquet_bytes` can write it. `ValueError` past 128 MiB.
    #[classmethod]
    #[pyo3(signature = (n, fpr))]
    fn parquet_sized(_cls: &Bound<'_, PyType>, n: &Bound<'_, PyAny>, fpr: f64) -> PyResult<Self> {
        Ok(Self {
            inner: Sbbf::with_fpr_parquet_sized(size_arg(n, "n")?, fpr).map_err(py_err)?,
        })
    }

    /// The Parquet bloom filter section: Thrift `BloomFilterHeader`, then the bitset.
    /// `ValueError` if the bitset is not a size Parquet allows (a power of two from 32 bytes
    /// to 128 MiB).
    fn to_parquet_bytes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let b = self.inner.to_parquet_bytes().map_err(py_err)?;
        Ok(PyBytes::new(py, &b))
    }

    /// Read a Parquet bloom filter section (header and bitset), as a Parquet writer stored
    /// it. `bloomlab.DecodeError` if it is not one.
    #[classmethod]
    fn from_parquet_bytes(_cls: &Bound<'_, PyType>, data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes = bytes_arg(data)?;
        Ok(Self {
            inner: Sbbf::from_parquet_bytes(&bytes).map_err(py_err)?,
        })
    }

    /// Fraction of bits set.
    #[getter]
    fn fill_ratio(&self) -> f64 {
        self.inner.fill_ratio()
    }
}

common_methods!(PySbbf);
insert_methods!(PySbbf);
union_methods!(PySbbf);
estimate_methods!(PySbbf);

/// A cuckoo filter: fingerprints in buckets of four, with deletes, at any target FPR. It
/// never drops an accepted key: when no slot can be freed, `add` raises `bloomlab.FullError`
/// and the filter is unchanged.
///
/// `CuckooFilter(n, fpr)` sizes it for `n` keys at `fpr`. Bytes: bloomlab's `BLAB` envelope.
///
/// >>> import bloomlab
/// >>> f = bloomlab.CuckooFilter(1000, 0.01)
/// >>> f.add(b"k"); f.remove(b"k")
/// >>> b"k" in f
/// False
#[pyclass(module = "bloomlab", name = "CuckooFilter")]
#[derive(Debug)]
pub struct PyCuckooFilter {
    inner: CuckooFilter,
}

#[pymethods]
impl PyCuckooFilter {
    #[new]
    #[pyo3(signature = (n, fpr))]
    fn new(n: &Bound<'_, PyAny>, fpr: f64) -> PyResult<Self> {
        Ok(Self {
            inner: CuckooFilter::with_fpr(size_arg(n, "n")?, fpr).map_err(py_err)?,
        })
    }

    /// Fraction of slots in use.
    #[getter]
    fn load(&self) -> f64 {
        self.inner.load()
    }
}

common_methods!(PyCuckooFilter);
insert_methods!(PyCuckooFilter);
remove_methods!(PyCuckooFilter);

/// A counting Bloom filter: 4-bit counters instead of bits, so keys can be removed (about 4×
/// a classic filter's memory). A counter that reaches 15 sticks there.
///
/// `CountingBloomFilter(n, fpr)` sizes it for `n` keys at `fpr`. Bytes: bloomlab's `BLAB`
/// envelope.
///
/// >>> import bloomlab
/// >>> f = bloomlab.CountingBloomFilter(1000, 0.01)
/// >>> f.update([1, 2]); f.remove(1)
/// >>> (1 in f, 2 in f)
/// (False, True)
#[pyclass(module = "bloomlab", name = "CountingBloomFilter")]
#[derive(Debug)]
pub struct PyCountingBloomFilter {
    inner: CountingBloomFilter,
}

#[pymethods]
impl PyCountingBloomFilter {
    #[new]
    #[pyo3(signature = (n, fpr))]
    fn new(n: &Bound<'_, PyAny>, fpr: f64) -> PyResult<Self> {
        Ok(Self {
            inner: CountingBloomFilter::with_fpr(size_arg(n, "n")?, fpr).map_err(py_err)?,
        })
    }

    /// Probes per key, `k`.
    #[getter]
    fn hashes(&self) -> u32 {
        self.inner.hashes()
    }
}

common_methods!(PyCountingBloomFilter);
insert_methods!(PyCountingBloomFilter);
remove_methods!(PyCountingBloomFilter);
estimate_methods!(PyCountingBloomFilter);

/// A filter that grows without a size hint, with deletes: a cuckoo-style table that splits
/// 1/16 of its buckets at a time; its false-positive bound stays under `fpr` at every size.
///
/// `ExpandableFilter(fpr, start_capacity=None)`. Bytes: bloomlab's `BLAB` envelope.
///
/// >>> import bloomlab
/// >>> f = bloomlab.ExpandableFilter(0.01)
/// >>> f.update(range(10_000))
/// >>> all(i in f for i in range(10_000))
/// True
#[pyclass(module = "bloomlab", name = "ExpandableFilter")]
#[derive(Debug)]
pub struct PyExpandableFilter {
    inner: ExpandableFilter,
}

#[pymethods]
impl PyExpandableFilter {
    #[new]
    #[pyo3(signature = (fpr, start_capacity=None))]
    fn new(fpr: f64, start_capacity: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let inner = match start_capacity {
            None => ExpandableFilter::new(fpr),
            Some(s) => ExpandableFilter::with_fpr(size_arg(s, "start_capacity")?, fpr),
        };
        Ok(Self {
            inner: inner.map_err(py_err)?,
        })
    }

    /// The false-positive bound at the current size (at most the target).
    #[getter]
    fn fpr_bound(&self) -> f64 {
        self.inner.fpr_bound()
    }
}

common_methods!(PyExpandableFilter);
insert_methods!(PyExpandableFilter);
remove_methods!(PyExpandableFilter);

/// A scalable Bloom filter: a chain of stages, each larger with a tighter FPR, so the
/// compound false-positive rate stays under `fpr` however many keys arrive.
///
/// `ScalableBloomFilter(initial_capacity, fpr)`. Bytes: bloomlab's `BLAB` envelope
/// (scalable format version 2; version 1 still reads). No `|`: the Rust union ORs stage by
/// stage, which need not be the filter that adding both key sets builds (nor fit its stages).
///
/// >>> import bloomlab
/// >>> f = bloomlab.ScalableBloomFilter(100, 0.01)
/// >>> f.update(range(5000))
/// >>> 4999 in f
/// True
#[pyclass(module = "bloomlab", name = "ScalableBloomFilter")]
#[derive(Debug)]
pub struct PyScalableBloomFilter {
    inner: ScalableBloomFilter,
}

#[pymethods]
impl PyScalableBloomFilter {
    #[new]
    #[pyo3(signature = (initial_capacity, fpr))]
    fn new(initial_capacity: &Bound<'_, PyAny>, fpr: f64) -> PyResult<Self> {
        Ok(Self {
            inner: ScalableBloomFilter::with_fpr(
                size_arg(initial_capacity, "initial_capacity")?,
                fpr,
            )
            .map_err(py_err)?,
        })
    }

    /// Number of stages.
    #[getter]
    fn stages(&self) -> usize {
        self.inner.stages()
    }
}

common_methods!(PyScalableBloomFilter);
insert_methods!(PyScalableBloomFilter);

/// A Ribbon filter: static, built once from the whole key set, about 1.05× the space lower
/// bound for its FPR. It takes no `add`.
///
/// `RibbonFilter.build(keys, fpr)` (the GIL is released while it solves). Bytes: bloomlab's
/// `BLAB` envelope (Ribbon format version 2; version 1 still reads).
///
/// >>> import bloomlab
/// >>> f = bloomlab.RibbonFilter.build(["a", "b", "c"], 0.01)
/// >>> "b" in f
/// True
#[pyclass(module = "bloomlab", name = "RibbonFilter")]
#[derive(Debug)]
pub struct PyRibbonFilter {
    inner: RibbonFilter,
}

#[pymethods]
impl PyRibbonFilter {
    /// Build from every key (an iterable or NumPy array, as `contains_many` takes) at
    /// false-positive rate `fpr`. Duplicate keys are fine.
    #[classmethod]
    #[pyo3(signature = (keys, fpr))]
    fn build(
        _cls: &Bound<'_, PyType>,
        py: Python<'_>,
        keys: &Bound<'_, PyAny>,
        fpr: f64,
    ) -> PyResult<Self> {
        let batch = keys::batch(keys)?;
        let inner = py
            .detach(|| RibbonFilter::build((0..batch.len()).map(|i| batch.get(i).bytes), fpr))
            .map_err(py_err)?;
        Ok(Self { inner })
    }
}

common_methods!(PyRibbonFilter);

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

common_methods!(PySparkBloomFilter);
insert_methods!(PySparkBloomFilter);
union_methods!(PySparkBloomFilter);
estimate_methods!(PySparkBloomFilter);

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

common_methods!(PyGuavaBloomFilter);
insert_methods!(PyGuavaBloomFilter);
union_methods!(PyGuavaBloomFilter);
estimate_methods!(PyGuavaBloomFilter);

/// The native module.
#[pymodule]
fn _bloomlab(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("DecodeError", py.get_type::<DecodeError>())?;
    m.add("FullError", py.get_type::<FullError>())?;
    m.add_class::<PyBlockedBloomFilter>()?;
    m.add_class::<PyBloomFilter>()?;
    m.add_class::<PySbbf>()?;
    m.add_class::<PyCuckooFilter>()?;
    m.add_class::<PyCountingBloomFilter>()?;
    m.add_class::<PyExpandableFilter>()?;
    m.add_class::<PyScalableBloomFilter>()?;
    m.add_class::<PyRibbonFilter>()?;
    m.add_class::<PySparkBloomFilter>()?;
    m.add_class::<PyGuavaBloomFilter>()?;
    m.add_function(wrap_pyfunction!(parquet::parquet_contains, m)?)?;
    m.add_function(wrap_pyfunction!(parquet::parquet_inspect, m)?)?;
    Ok(())
}
