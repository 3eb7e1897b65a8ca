"""Approximate-membership filters with versioned byte formats, from Rust.

Every filter answers ``key in f`` with ``False`` when ``key`` was **definitely never added**
and ``True`` when it **may** have been (a false positive happens at about the rate the
filter was sized for). The classes wrap the bloomlab Rust workspace's filters of the same
names: the same sizing, answers and bytes as the Rust crates and the ``bloomlab`` command.

Keys and how they are hashed
----------------------------
Keys are ``bytes`` (or ``bytearray``), ``str`` or ``int``:

==============  ==========================================  ============  =========================
key             bloomlab's filters and ``Sbbf``             Spark         Guava
==============  ==========================================  ============  =========================
``bytes``       the bytes                                   ``putBinary`` ``byteArrayFunnel()``
``str``         its UTF-8 bytes (so ``"a"`` == ``b"a"``)    ``putString`` ``stringFunnel(UTF_8)``
``int``         its 8 little-endian bytes (two's            ``putLong``   ``longFunnel()``
                complement; from ``-2**63`` to ``2**64-1``)
==============  ==========================================  ============  =========================

The hash never depends on the process (unlike Python's ``hash``), so a filter written by
``to_bytes`` or pickled answers the same in any process, on any platform, and in Rust.
``bool``, ``float`` and other types raise ``TypeError``; an ``int`` outside 64 bits raises
``OverflowError``. NumPy integer arrays and scalars are taken as the same Python ints; a NumPy
``S`` array element is its bytes without trailing NULs.

Batch calls
-----------
``f.update(keys)`` and ``f.contains_many(keys)`` take any iterable of keys or a NumPy array
(``int64`` and other integer dtypes, ``S`` bytes, text, objects); ``contains_many`` returns a
NumPy ``bool`` array. Both copy the keys out of Python and release the GIL while the filter
works.

Errors
------
``ValueError`` for bad parameters (a negative or zero size, a rate that is not strictly
between 0 and 1, NaN included); :class:`DecodeError` (a ``ValueError``) for bytes that are not
a valid filter; :class:`FullError` when a cuckoo or expandable filter cannot take another key;
``TypeError`` for a key of another type. No input crashes the interpreter.

>>> import bloomlab, pickle
>>> f = bloomlab.BlockedBloomFilter(1_000_000, 0.01)
>>> f.update(range(1000))
>>> (999 in f, pickle.loads(pickle.dumps(f)).contains_many([0, 1]).tolist())
(True, [True, True])
"""

# Every class and exception of the native module (its `__all__`: the variants' classes come
# from the Rust workspace's one list of variants, so a new variant needs no edit here).
from bloomlab._bloomlab import *  # noqa: F401,F403
from bloomlab import _bloomlab, parquet

__all__ = ["parquet"]
__all__ += _bloomlab.__all__
