//! Python keys to bytes: one key ([`key`]) or a batch of them ([`batch`]).
//!
//! | Python | bloomlab's filters and `Sbbf` hash | Spark | Guava |
//! |---|---|---|---|
//! | `bytes`, `bytearray`, NumPy `bytes_` | the bytes | `putBinary` | `Funnels.byteArrayFunnel()` |
//! | `str` | its UTF-8 bytes | `putString` | `Funnels.stringFunnel(UTF_8)` |
//! | `int` in `[-2^63, 2^64)` (and NumPy integers) | the 8 little-endian bytes of its 64-bit two's complement | `putLong` | `Funnels.longFunnel()` |
//!
//! `bool` is refused (a `TypeError`), as are floats and every other type; an `int` outside
//! 64 bits raises `OverflowError`.

use pyo3::exceptions::{PyOverflowError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyInt, PyString};

/// What kind of Python value a key came from (the JVM filters hash each kind differently).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An `int`: 8 little-endian bytes.
    Int,
    /// A `str`: its UTF-8 bytes.
    Str,
    /// `bytes` or `bytearray`.
    Bytes,
}

/// One key's bytes and kind.
#[derive(Clone, Copy, Debug)]
pub struct KeyView<'a> {
    /// The kind of value.
    pub kind: Kind,
    /// Its encoding (always valid UTF-8 for [`Kind::Str`]; 8 bytes for [`Kind::Int`]).
    pub bytes: &'a [u8],
}

impl KeyView<'_> {
    /// An `int` key's value (its 64 bits as a signed integer, as the JVM's `long`).
    pub fn as_i64(&self) -> i64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.bytes[..8]);
        i64::from_le_bytes(b)
    }

    /// A `str` key's text.
    pub fn as_str(&self) -> &str {
        // Only keys built from a Python `str` (encoded to UTF-8 by Python) have this kind.
        std::str::from_utf8(self.bytes).unwrap_or_default()
    }
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

/// An integer's 8 little-endian bytes, if `obj` is an `int` (or has `__index__`, as NumPy's
/// integers do) that fits in 64 bits.
fn int_bytes(obj: &Bound<'_, PyAny>) -> PyResult<[u8; 8]> {
    if let Ok(v) = obj.extract::<i64>() {
        return Ok(v.to_le_bytes());
    }
    if let Ok(v) = obj.extract::<u64>() {
        return Ok(v.to_le_bytes());
    }
    Err(PyOverflowError::new_err(
        "int keys must fit in 64 bits: from -2**63 to 2**64 - 1",
    ))
}

/// Call `f` with one key's bytes and kind: `bytes`, `bytearray`, `str` or `int` (see the
/// module docs for the encodings). Exact `str`, `bytes` and `int` are recognised by their
/// type alone, first.
#[inline]
pub fn with_key<R>(obj: &Bound<'_, PyAny>, f: impl FnOnce(KeyView<'_>) -> R) -> PyResult<R> {
    // The exact types first: a pointer comparison each, where a subclass check is a call.
    if obj.is_exact_instance_of::<PyInt>() {
        let b = int_bytes(obj)?;
        return Ok(f(KeyView {
            kind: Kind::Int,
            bytes: &b,
        }));
    }
    let text = match obj.cast_exact::<PyString>() {
        Ok(s) => Some(s),
        Err(_) if obj.is_exact_instance_of::<PyBytes>() => None,
        Err(_) => obj.cast::<PyString>().ok(),
    };
    if let Some(s) = text {
        // CPython keeps a `str`'s UTF-8 form (for ASCII text, its own buffer): no copy.
        #[cfg(not(feature = "py39"))]
        let b = s.to_str()?.as_bytes();
        #[cfg(feature = "py39")]
        let b = s.encode_utf8()?;
        #[cfg(feature = "py39")]
        let b = b.as_bytes();
        return Ok(f(KeyView {
            kind: Kind::Str,
            bytes: b,
        }));
    }
    let bytes = match obj.cast_exact::<PyBytes>() {
        Ok(b) => Some(b),
        Err(_) => obj.cast::<PyBytes>().ok(),
    };
    if let Some(b) = bytes {
        return Ok(f(KeyView {
            kind: Kind::Bytes,
            bytes: b.as_bytes(),
        }));
    }
    let int = !obj.is_instance_of::<PyBool>()
        && !obj.is_instance_of::<PyByteArray>()
        && (obj.is_instance_of::<PyInt>() || obj.hasattr("__index__")?);
    if int {
        let b = int_bytes(obj)?;
        return Ok(f(KeyView {
            kind: Kind::Int,
            bytes: &b,
        }));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        let v = b.to_vec();
        return Ok(f(KeyView {
            kind: Kind::Bytes,
            bytes: &v,
        }));
    }
    Err(PyTypeError::new_err(format!(
        "keys are bytes, str or int, not {}",
        type_name(obj)
    )))
}

/// Many keys, copied out of Python so that the GIL can be released while a filter works.
#[derive(Debug)]
pub enum Batch {
    /// Every key an `int`.
    Ints(Vec<[u8; 8]>),
    /// Keys of any kind: `spans[i]` is key `i`'s start, end and kind in `buf`.
    Mixed {
        /// Every key's bytes, one after another.
        buf: Vec<u8>,
        /// Start, end, kind of each key.
        spans: Vec<(usize, usize, Kind)>,
    },
}

impl Batch {
    /// Number of keys.
    pub fn len(&self) -> usize {
        match self {
            Batch::Ints(v) => v.len(),
            Batch::Mixed { spans, .. } => spans.len(),
        }
    }

    /// Key `i`.
    pub fn get(&self, i: usize) -> KeyView<'_> {
        match self {
            Batch::Ints(v) => KeyView {
                kind: Kind::Int,
                bytes: &v[i],
            },
            Batch::Mixed { buf, spans } => {
                let (s, e, kind) = spans[i];
                KeyView {
                    kind,
                    bytes: &buf[s..e],
                }
            }
        }
    }

    /// Every key's bytes as one slice each (for the filters' batched calls).
    pub fn slices(&self) -> Vec<&[u8]> {
        (0..self.len()).map(|i| self.get(i).bytes).collect()
    }

    /// Append a key; `hint` is the number of keys expected in all (the first key of another
    /// kind than `int` sizes the buffers from it and its own length, so that a list of `str`
    /// keys is not copied again and again as the buffers grow).
    fn push(&mut self, k: KeyView<'_>, hint: usize) {
        if let Batch::Ints(v) = self {
            if k.kind == Kind::Int {
                let mut b = [0u8; 8];
                b.copy_from_slice(k.bytes);
                v.push(b);
                return;
            }
            let keys = hint.max(v.len() + 1);
            let mut buf = Vec::with_capacity(v.len() * 8 + (keys - v.len()) * k.bytes.len().max(8));
            let mut spans = Vec::with_capacity(keys);
            for x in v.iter() {
                spans.push((buf.len(), buf.len() + 8, Kind::Int));
                buf.extend_from_slice(x);
            }
            *self = Batch::Mixed { buf, spans };
        }
        if let Batch::Mixed { buf, spans } = self {
            let s = buf.len();
            buf.extend_from_slice(k.bytes);
            spans.push((s, buf.len(), k.kind));
        }
    }
}

/// Whether `obj` is a NumPy array (`numpy.ndarray`, from the `numpy` module).
fn is_numpy(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    let module: String = match obj
        .get_type()
        .getattr("__module__")
        .and_then(|m| m.extract())
    {
        Ok(m) => m,
        Err(_) => return Ok(false),
    };
    Ok(module == "numpy" && obj.hasattr("dtype")? && obj.hasattr("tobytes")?)
}

/// A NumPy array's keys, or `None` if `obj` is not a NumPy array or holds Python objects or
/// text (those go through the general path, element by element).
fn numpy_batch(obj: &Bound<'_, PyAny>) -> PyResult<Option<Batch>> {
    if !is_numpy(obj)? {
        return Ok(None);
    }
    let np = obj.py().import("numpy")?;
    let dtype = obj.getattr("dtype")?;
    let kind: String = dtype.getattr("kind")?.extract()?;
    match kind.as_str() {
        // Every integer dtype is widened to 64 bits, so an element answers as the same
        // Python int would; unsigned ones keep their value (and their bits).
        "i" | "u" => {
            let wide = if kind == "u" { "<u8" } else { "<i8" };
            let flat = obj.call_method0("ravel")?;
            let arr = np.call_method1("ascontiguousarray", (flat, wide))?;
            let raw = arr.call_method0("tobytes")?;
            let raw = raw.cast::<PyBytes>()?.as_bytes();
            let keys = raw
                .chunks_exact(8)
                .map(|c| {
                    let mut b = [0u8; 8];
                    b.copy_from_slice(c);
                    b
                })
                .collect();
            Ok(Some(Batch::Ints(keys)))
        }
        // Fixed-width bytes: each element without its trailing NULs, as NumPy returns it.
        "S" => {
            let width: usize = dtype.getattr("itemsize")?.extract()?;
            let flat = obj.call_method0("ravel")?;
            let arr = np.call_method1("ascontiguousarray", (flat,))?;
            let raw = arr.call_method0("tobytes")?;
            let raw = raw.cast::<PyBytes>()?.as_bytes();
            let mut buf = Vec::with_capacity(raw.len());
            let mut spans = Vec::with_capacity(raw.len() / width.max(1));
            if width > 0 {
                for c in raw.chunks_exact(width) {
                    let end = c.iter().rposition(|&b| b != 0).map_or(0, |p| p + 1);
                    let s = buf.len();
                    buf.extend_from_slice(&c[..end]);
                    spans.push((s, buf.len(), Kind::Bytes));
                }
            } else {
                let n: usize = obj.getattr("size")?.extract()?;
                spans.resize(n, (0, 0, Kind::Bytes));
            }
            Ok(Some(Batch::Mixed { buf, spans }))
        }
        "U" | "O" => Ok(None),
        other => Err(PyTypeError::new_err(format!(
            "keys are bytes, str or int: a NumPy array of dtype kind {other:?} ({}) holds none of them",
            dtype.str()?
        ))),
    }
}

/// Many keys: any iterable of keys, or a NumPy array of integers (any width, widened to 64
/// bits), fixed-width bytes (`S`), text (`U`) or Python objects.
pub fn batch(obj: &Bound<'_, PyAny>) -> PyResult<Batch> {
    if obj.is_instance_of::<PyBytes>()
        || obj.is_instance_of::<PyString>()
        || obj.is_instance_of::<PyByteArray>()
    {
        return Err(PyTypeError::new_err(format!(
            "expected an iterable of keys, got one {} key: wrap it in a list",
            type_name(obj)
        )));
    }
    if let Some(b) = numpy_batch(obj)? {
        return Ok(b);
    }
    // A NumPy array of text or objects: its elements, in C order, whatever its shape.
    let flat;
    let obj = if is_numpy(obj)? {
        flat = obj.call_method0("ravel")?;
        &flat
    } else {
        obj
    };
    let hint = obj.len().unwrap_or(0);
    let mut out = Batch::Ints(Vec::with_capacity(hint));
    for item in obj.try_iter()? {
        with_key(&item?, |k| out.push(k, hint))?;
    }
    Ok(out)
}
