"""The bloom filters inside Parquet data files, read with the ``bloomlab`` command's reader.

Parquet writers (Spark / parquet-mr, Arrow C++ / pyarrow, DuckDB, arrow-rs) may store one
split-block bloom filter per column chunk. pyarrow writes them but cannot probe them; these
functions do.

A value is hashed as its column's physical type's plain encoding, as the Parquet
specification says: ``BYTE_ARRAY`` takes ``bytes`` or ``str`` (UTF-8); ``INT32`` and
``INT64`` take ``int``; ``FLOAT`` and ``DOUBLE`` take ``float`` (or ``int``);
``FIXED_LEN_BYTE_ARRAY`` takes ``bytes`` of exactly the column's width. Another type raises
``TypeError``; an ``int`` outside the column's range ``OverflowError``.

Errors: ``OSError`` when the file cannot be read, :class:`bloomlab.DecodeError` when it is not
a valid Parquet file or a bloom filter in it is damaged, ``ValueError`` for a column the file
does not have (or of a type without bloom filter keys, such as ``BOOLEAN``).
"""

from os import PathLike
from typing import Any, Dict, Iterable, List, Optional, Union

from bloomlab._bloomlab import _parquet_contains, _parquet_inspect

__all__ = ["contains", "inspect"]


def contains(
    path: Union[str, "PathLike[str]"], column: str, values: Iterable[Any]
) -> List[List[Optional[bool]]]:
    """For each value, in input order, one answer per row group of column ``column``.

    Each answer is ``True`` (that row group's filter may hold the value: read the row
    group), ``False`` (it does not: skip it) or ``None`` (the writer stored no bloom filter for
    that column chunk) -- the ``bloomlab contains FILE --column NAME`` command's ``1``, ``0``
    and ``-``. ``column`` is the column's dotted path (``a.b`` for a nested field).
    """
    return _parquet_contains(path, column, values)


def inspect(path: Union[str, "PathLike[str]"]) -> List[Dict[str, Any]]:
    """Every column chunk of the file, as the ``bloomlab inspect FILE`` table.

    One dict per row group and column, in file order, with keys ``row_group`` (int),
    ``column`` (dotted path), ``type`` (physical type, e.g. ``"INT64"``), ``bytes`` (the
    bitset's size), ``fill`` (fraction of bits set), ``est_fpr`` (the false-positive rate the
    fill implies) and ``est_distinct`` (distinct values the fill implies); the last four are
    ``None`` where the chunk has no bloom filter.
    """
    return _parquet_inspect(path)
