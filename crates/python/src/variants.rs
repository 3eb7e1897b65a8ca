//! The classes of the workspace's own filter variants, derived from the facade's one list
//! (`bloomlab::for_each_variant!`) and each variant's [`Declared`] implementation: a new
//! variant of the list gets its Python class, its docstring and its type stub without an
//! edit here.
//!
//! Every class is written by one macro with every method any variant has; when the module
//! is imported, [`add_classes`] removes from each class the methods its variant does not
//! support, read from its [`Declaration`] (`add`/`update` unless static, `build` only if
//! static, `remove`/`discard` if it deletes, `|` if it has an exact union, `hashes` if it
//! counts probes) and from one filter of the variant built there (`estimated_count` and
//! `fill_ratio` where [`Declared::estimate`] and [`Declared::fill`] answer). PyO3 fixes a
//! class's methods at compile time and the list carries no capabilities, so the method set
//! is settled at import, once: `hasattr`, `dir` and the stubs see exactly what the filter
//! does, and a call never meets a method that would only raise.
//!
//! The few methods that belong to one variant alone (the Parquet form of `Sbbf`, the cuckoo
//! filter's `load`, the expandable filter's `fpr_bound`, the scalable filter's `stages`) are
//! written below the macro, by hand.

use bloomlab::declare::{Changes, Declaration, Hashes};
use bloomlab::{Declared, Variant};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple, PyType};

use crate::{bytes_arg, py_err, size_arg};

/// How a class is made from Python, from its variant's declaration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ctor {
    /// `Cls(size, fpr)`, named `n` for a fixed-size filter and `initial_capacity` for a
    /// growing one: [`Declared::with_fpr_and_scheme`].
    Sized(&'static str),
    /// `Cls(fpr, start_capacity=None)`, the start 1 by default.
    FprFirst,
    /// No constructor: a static filter is built from its keys, `Cls.build(keys, fpr)`.
    Built,
}

impl Ctor {
    fn of(d: &Declaration) -> Ctor {
        match d.changes {
            Changes::Static => Ctor::Built,
            // The expandable filter's class was published with the rate first; it keeps it.
            Changes::Grows if d.variant == Variant::Expandable => Ctor::FprFirst,
            Changes::Grows => Ctor::Sized("initial_capacity"),
            Changes::Fixed => Ctor::Sized("n"),
        }
    }

    /// The constructor's `inspect.Signature` (what `help` and `inspect.signature` show, and
    /// what binds the arguments); `None` for a static filter.
    fn signature<'py>(self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let inspect = py.import("inspect")?;
        let parameter = inspect.getattr("Parameter")?;
        let kind = parameter.getattr("POSITIONAL_OR_KEYWORD")?;
        let param = |name: &str, optional: bool| {
            let kw = PyDict::new(py);
            if optional {
                kw.set_item("default", py.None())?;
            }
            parameter.call((name, &kind), Some(&kw))
        };
        let params = match self {
            Ctor::Sized(size) => vec![param(size, false)?, param("fpr", false)?],
            Ctor::FprFirst => vec![param("fpr", false)?, param("start_capacity", true)?],
            Ctor::Built => return Ok(None),
        };
        Ok(Some(inspect.getattr("Signature")?.call1((params,))?))
    }

    /// A filter of the class `cls` from the arguments of its constructor call.
    fn make<F: Declared>(
        cls: &Bound<'_, PyType>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<F>
    where
        F::Scheme: Default,
    {
        let ctor = Ctor::of(&F::DECLARATION);
        if ctor == Ctor::Built {
            return Err(PyTypeError::new_err(format!(
                "{0} is static: build it from its keys with {0}.build(keys, fpr)",
                cls.name()?
            )));
        }
        // The signature `add_class` gave the class.
        let signature = cls.getattr(pyo3::intern!(cls.py(), "__signature__"))?;
        let bound = signature.call_method("bind", args, kwargs)?;
        bound.call_method0("apply_defaults")?;
        let arg = |name: &str| bound.getattr("arguments")?.get_item(name);
        let fpr: f64 = arg("fpr")?.extract()?;
        let n = match ctor {
            Ctor::Sized(size) => size_arg(&arg(size)?, size)?,
            Ctor::FprFirst => match arg("start_capacity")? {
                s if s.is_none() => 1,
                s => size_arg(&s, "start_capacity")?,
            },
            Ctor::Built => unreachable!("a static filter has no signature"),
        };
        F::with_fpr_and_scheme(n, fpr, F::Scheme::default()).map_err(py_err)
    }

    /// A call that makes a filter of the class, for its docstring's example.
    fn example(self, name: &str) -> String {
        match self {
            Ctor::Sized(_) => format!("bloomlab.{name}(1000, 0.01)"),
            Ctor::FprFirst => format!("bloomlab.{name}(0.01)"),
            Ctor::Built => format!("bloomlab.{name}.build([\"a\", b\"b\", 3], 0.01)"),
        }
    }
}

/// A filter of the variant built from `keys` at `fpr`, the GIL released while it builds.
fn build<F: Declared>(py: Python<'_>, keys: &Bound<'_, PyAny>, fpr: f64) -> PyResult<F>
where
    F::Scheme: Default,
{
    let batch = crate::keys::batch(keys)?;
    py.detach(|| F::build_with_scheme(&batch.slices(), fpr, F::Scheme::default()))
        .map_err(py_err)
}

/// What one variant's class says of itself before its generated part: its design, and any
/// example of its own methods.
struct About {
    variant: Variant,
    summary: &'static str,
    example: &'static str,
}

/// The variants' own words. A variant missing here gets its declared design as its summary.
const ABOUT: &[About] = &[
    About {
        variant: Variant::Blocked,
        summary: "A blocked Bloom filter: all `k` probes of a key inside one 64-byte, 512-bit block, so a\n\
                  lookup touches one cache line (AVX-512 or AVX2 where the CPU has them). The fastest\n\
                  lookups for a known number of keys; 9.92 bits per key and k = 6 at 1 %.",
        example: "",
    },
    About {
        variant: Variant::Classic,
        summary: "The classic Bloom filter: `k` probes over one bit array, sized by the textbook formula\n\
                  (9.59 bits per key and k = 7 at 1 %).",
        example: "",
    },
    About {
        variant: Variant::Sbbf,
        summary: "The split-block Bloom filter of the Parquet specification, bit for bit: keys hashed with\n\
                  xxHash64 (an `int` key is hashed as its 8 little-endian bytes, which is Parquet's plain\n\
                  INT64 encoding), 256-bit blocks of eight 32-bit words. `Sbbf.parquet_sized(n, fpr)`\n\
                  rounds the size up to one Parquet allows; `to_parquet_bytes` / `from_parquet_bytes`\n\
                  write and read the Parquet bloom filter section (Thrift header, then the bitset) that\n\
                  Parquet writers and readers use.",
        example: ">>> p = bloomlab.Sbbf.parquet_sized(1000, 0.01)\n\
                  >>> p.add(7)\n\
                  >>> 7 in bloomlab.Sbbf.from_parquet_bytes(p.to_parquet_bytes())\n\
                  True",
    },
    About {
        variant: Variant::Counting,
        summary: "A counting Bloom filter: 4-bit counters instead of bits, so keys can be removed (about 4×\n\
                  a classic filter's memory). A counter that reaches 15 sticks there.",
        example: "",
    },
    About {
        variant: Variant::Cuckoo,
        summary: "A cuckoo filter: fingerprints in buckets of four, with deletes, at any target FPR. It\n\
                  never drops an accepted key: when no slot can be freed, `add` raises\n\
                  `bloomlab.FullError` and the filter is unchanged.",
        example: "",
    },
    About {
        variant: Variant::Scalable,
        summary: "A scalable Bloom filter: a chain of stages, each larger with a tighter FPR, so the\n\
                  compound false-positive rate stays under `fpr` however many keys arrive.",
        example: "",
    },
    About {
        variant: Variant::Expandable,
        summary: "A filter that grows without a size hint, with deletes: a cuckoo-style table that splits\n\
                  1/16 of its buckets at a time; its false-positive bound stays under `fpr` at every size.",
        example: "",
    },
    About {
        variant: Variant::Ribbon,
        summary: "A Ribbon filter: static, built once from the whole key set, about 1.05× the space lower\n\
                  bound for its FPR.",
        example: "",
    },
];

/// The class's docstring: its summary, then what its declaration says (how it is made, its
/// bytes, its union, its deletes), then an example that runs (the doctests check it).
fn docstring(name: &str, d: &Declaration) -> String {
    let about = ABOUT.iter().find(|a| a.variant == d.variant);
    let summary = about.map_or(d.design, |a| a.summary);
    let ctor = Ctor::of(d);
    let made = match ctor {
        Ctor::Sized("n") => {
            format!("`{name}(n, fpr)` sizes it for `n` keys at false-positive rate `fpr`.")
        }
        Ctor::Sized(size) => format!(
            "`{name}({size}, fpr)` starts it at `{size}` keys; it grows past them, its \
             false-positive rate staying under `fpr`."
        ),
        Ctor::FprFirst => format!(
            "`{name}(fpr, start_capacity=None)` starts it small (at `start_capacity` keys if \
             given); it grows as keys arrive, its false-positive bound staying under `fpr`."
        ),
        Ctor::Built => format!(
            "`{name}.build(keys, fpr)` builds it from every key (the GIL is released while it \
             builds); it takes no `add`."
        ),
    };
    let older: Vec<String> = d.versions[..d.versions.len() - 1]
        .iter()
        .map(u16::to_string)
        .collect();
    let read = match older.len() {
        0 => String::new(),
        1 => format!("; version {} still reads", older[0]),
        _ => format!("; versions {} still read", older.join(", ")),
    };
    let union = match d.no_union {
        None => "Union: exact (`a | b`, `a |= b`).".to_owned(),
        Some(why) => format!("No `|`: {why}."),
    };
    let deletes = if d.deletes {
        " `remove` takes a key out again (`discard` without the `KeyError`)."
    } else {
        ""
    };
    let mut example = format!(">>> import bloomlab\n>>> f = {}\n", ctor.example(name));
    if ctor != Ctor::Built {
        example.push_str(">>> f.update([\"a\", b\"b\", 3])\n");
    }
    example.push_str(">>> (\"a\" in f, b\"b\" in f, 3 in f)\n(True, True, True)\n");
    if d.deletes {
        example.push_str(">>> f.remove(\"a\")\n>>> \"a\" in f\nFalse\n");
    }
    if d.no_union.is_none() {
        example.push_str(&format!(
            ">>> g = {}\n>>> g.add(\"c\")\n>>> (\"a\" in f | g, \"c\" in f | g)\n(True, True)\n",
            ctor.example(name)
        ));
    }
    example.push_str(about.map_or("", |a| a.example));
    format!(
        "{summary}\n\n{made} Bytes: bloomlab's checked, versioned `BLAB` envelope ({} format \
         version {}{read}). {union}{deletes}\n\n{}",
        d.name(),
        d.writes(),
        example.trim_end()
    )
}

/// Add the class `C` of variant `F` to the module and settle its methods, signature and
/// docstring from `F`'s declaration (see the module docs). Returns its name.
fn add_class<C: pyo3::PyClass, F: Declared>(m: &Bound<'_, PyModule>) -> PyResult<String>
where
    F::Scheme: Default,
{
    m.add_class::<C>()?;
    let py = m.py();
    let cls = py.get_type::<C>();
    let d = F::DECLARATION;
    let one = F::build_with_scheme(&[[0u8; 8]], 0.01, F::Scheme::default()).map_err(py_err)?;
    let without: [(&[&str], bool); 7] = [
        (&["add", "update"], !d.takes_inserts()),
        (&["build"], d.changes != Changes::Static),
        (&["remove", "discard"], !d.deletes),
        (&["__or__", "__ror__", "__ior__"], d.no_union.is_some()),
        (&["estimated_count"], one.estimate().is_none()),
        (&["fill_ratio"], one.fill().is_none()),
        (&["hashes"], d.hashes() != Hashes::Probes),
    ];
    for (names, absent) in without {
        for name in names.iter().filter(|_| absent) {
            cls.delattr(*name)?;
        }
    }
    if let Some(signature) = Ctor::of(&d).signature(py)? {
        cls.setattr("__signature__", signature)?;
    }
    let name = cls.name()?.to_string();
    let doc = docstring(&name, &d);
    // Each paragraph filled to 90 columns (Python's `textwrap`), the examples left as they are.
    let fill = py.import("textwrap")?.getattr("fill")?;
    let mut paragraphs = Vec::new();
    for p in doc.split("\n\n") {
        paragraphs.push(if p.starts_with(">>>") {
            p.to_owned()
        } else {
            fill.call1((p.replace('\n', " "), 90))?
                .extract::<String>()?
        });
    }
    cls.setattr("__doc__", paragraphs.join("\n\n"))?;
    Ok(name)
}

/// One class per variant of the list, and [`add_classes`], which adds them in the list's
/// order.
macro_rules! variant_classes {
    ($k:tt; $($tag:ident $ty:ident $scheme:ident;)*) => {
        $(
            #[pyclass(module = "bloomlab")]
            #[derive(Debug)]
            pub struct $ty {
                inner: $k::$ty,
            }

            #[pymethods]
            impl $ty {
                /// See the class docstring for the arguments (they depend on the variant).
                #[new]
                #[pyo3(signature = (*args, **kwargs))]
                fn new(
                    py: Python<'_>,
                    args: &Bound<'_, PyTuple>,
                    kwargs: Option<&Bound<'_, PyDict>>,
                ) -> PyResult<Self> {
                    Ctor::make(&py.get_type::<Self>(), args, kwargs).map(|inner| Self { inner })
                }

                /// Build from every key (an iterable or NumPy array, as `contains_many`
                /// takes) at false-positive rate `fpr`. Duplicate keys are fine.
                #[classmethod]
                #[pyo3(signature = (keys, fpr))]
                fn build(
                    _cls: &Bound<'_, PyType>,
                    py: Python<'_>,
                    keys: &Bound<'_, PyAny>,
                    fpr: f64,
                ) -> PyResult<Self> {
                    build(py, keys, fpr).map(|inner| Self { inner })
                }

                /// Probes per key, `k`.
                #[getter]
                fn hashes(&self) -> u32 {
                    bloomlab_core::meta::FilterCore::hashes(&self.inner)
                }

                /// Fraction of bits (or slots) in use.
                #[getter]
                fn fill_ratio(&self) -> PyResult<f64> {
                    Declared::fill(&self.inner)
                        .ok_or_else(|| PyTypeError::new_err("this filter has no fill ratio"))
                }
            }

            impl crate::backend::Codec for $k::$ty {
                fn encode(&self) -> Vec<u8> {
                    Declared::to_bytes(self)
                }
                fn decode(bytes: &[u8]) -> PyResult<Self> {
                    bloomlab::declare::from_bytes(bytes).map_err(py_err)
                }
            }

            // `might_contain_batch` and `insert_batch` are the type's own where it has them
            // (inherent methods come first), else `Unbatched`'s loops.
            impl crate::backend::Lookup for $k::$ty {
                fn contains_batch(&self, keys: &crate::keys::Batch, out: &mut [bool]) {
                    #[allow(unused_imports)] // unused where the type has its own call
                    use crate::backend::Unbatched as _;
                    let done = match keys {
                        crate::keys::Batch::Ints(v) => self.might_contain_batch(v, out),
                        crate::keys::Batch::Mixed { .. } => {
                            self.might_contain_batch(&keys.slices(), out)
                        }
                    };
                    // Only a length mismatch fails, and the caller sizes `out` to the keys.
                    debug_assert!(done.is_ok());
                }
            }

            impl crate::backend::Insert for $k::$ty {
                fn add_batch(&mut self, keys: &crate::keys::Batch) -> bloomlab::Result<()> {
                    use crate::backend::Done as _;
                    #[allow(unused_imports)] // unused where the type has its own call
                    use crate::backend::Unbatched as _;
                    match keys {
                        crate::keys::Batch::Ints(v) => self.insert_batch(v).done(),
                        crate::keys::Batch::Mixed { .. } => {
                            self.insert_batch(&keys.slices()).done()
                        }
                    }
                }
            }

            impl crate::backend::Remove for $k::$ty {
                fn remove_key(&mut self, k: crate::keys::KeyView<'_>) -> Option<bool> {
                    use crate::backend::Removal;
                    #[allow(unused_imports)] // one of the two answers the probe
                    use crate::backend::{Keeps as _, Removes as _};
                    (&Removal::<Self>::NEW).remover().map(|remove| remove(self, k.bytes))
                }
            }

            impl crate::backend::Union for $k::$ty {
                fn union_with(&mut self, other: &Self) -> bloomlab::Result<()> {
                    Declared::union_in(self, other)
                }
            }

            impl crate::backend::Estimate for $k::$ty {
                fn estimated_count(&self) -> Option<f64> {
                    Declared::estimate(self)
                }
            }

            common_methods!($ty);
            insert_methods!($ty);
            remove_methods!($ty);
            union_methods!($ty);
            estimate_methods!($ty);
        )*

        /// Add every variant's class, in the list's order; their names.
        pub fn add_classes(m: &Bound<'_, PyModule>) -> PyResult<Vec<String>> {
            Ok(vec![$(add_class::<$ty, $k::$ty>(m)?),*])
        }
    };
}

bloomlab::for_each_variant!(variant_classes);

#[pymethods]
impl Sbbf {
    /// `Sbbf(n, fpr)` rounded up to a size a Parquet file allows (a power of two from 32 B
    /// to 128 MiB), so that `to_parquet_bytes` can write it. `ValueError` past 128 MiB.
    #[classmethod]
    #[pyo3(signature = (n, fpr))]
    fn parquet_sized(_cls: &Bound<'_, PyType>, n: &Bound<'_, PyAny>, fpr: f64) -> PyResult<Self> {
        Ok(Self {
            inner: bloomlab::Sbbf::with_fpr_parquet_sized(size_arg(n, "n")?, fpr)
                .map_err(py_err)?,
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
            inner: bloomlab::Sbbf::from_parquet_bytes(&bytes).map_err(py_err)?,
        })
    }
}

#[pymethods]
impl CuckooFilter {
    /// Fraction of slots in use (`fill_ratio`).
    #[getter]
    fn load(&self) -> f64 {
        self.inner.load()
    }
}

#[pymethods]
impl ExpandableFilter {
    /// The false-positive bound at the current size (at most the target).
    #[getter]
    fn fpr_bound(&self) -> f64 {
        self.inner.fpr_bound()
    }
}

#[pymethods]
impl ScalableBloomFilter {
    /// Number of stages.
    #[getter]
    fn stages(&self) -> usize {
        self.inner.stages()
    }
}
