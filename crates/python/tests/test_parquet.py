"""bloomlab.parquet against DuckDB's `parquet_bloom_probe`.

1. The committed files of crates/cli/tests/data (written by DuckDB, pyarrow and Spark, with
   DuckDB's answers in `<file>.<column>.expected`, made by make_parquet.py there): every
   value's per-row-group answers equal DuckDB's, and every value present in a row group
   answers True there (`.members`).
2. When the `duckdb` package is installed (the CI step installs it; `BLOOMLAB_REQUIRE_DUCKDB=1`
   makes its absence a failure): files DuckDB writes now, probed by both, for ints, strings
   and doubles drawn by hypothesis.
"""

import os

import bloomlab
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import ROOT

DATA = ROOT / "crates" / "cli" / "tests" / "data"
# One case per single-file fixture (`<file>.parquet` beside its `.keys`); the `lake.*` keys belong
# to the command's directory fixture (`lake/`), which these cases do not read.
CASES = sorted(
    p.name[: -len(".keys")]
    for p in DATA.glob("*.keys")
    if (DATA / (p.name.split(".")[0] + ".parquet")).is_file()
)
FIELD = {"1": True, "0": False, "-": None}


def lines(path):
    raw = path.read_bytes().split(b"\n")
    assert raw[-1] == b""
    return raw[:-1]


def parse(line, physical):
    """A key line as bloomlab contains reads it for the column's physical type."""
    if physical in ("INT32", "INT64"):
        return int(line)
    if physical in ("FLOAT", "DOUBLE"):
        return float(line)
    if physical == "FIXED_LEN_BYTE_ARRAY":
        return bytes.fromhex(line.decode())
    return line  # BYTE_ARRAY: the line's bytes


def test_there_are_cases_from_every_writer():
    assert {c.split(".")[0] for c in CASES} == {"duckdb", "pyarrow", "spark"}
    assert len(CASES) >= 15


@pytest.mark.parametrize("case", CASES)
def test_answers_equal_duckdbs(case):
    stem, column = case.split(".", 1)
    path = DATA / f"{stem}.parquet"
    table = bloomlab.parquet.inspect(path)
    physical = next(r["type"] for r in table if r["column"] == column)
    values = [parse(l, physical) for l in lines(DATA / f"{case}.keys")]
    expected = [[FIELD[f] for f in l.decode().split(" ")] for l in lines(DATA / f"{case}.expected")]
    got = bloomlab.parquet.contains(path, column, values)
    assert got == expected
    members = [[f == "1" for f in l.decode().split(" ")] for l in lines(DATA / f"{case}.members")]
    for row, present in zip(got, members):
        assert all(a is not False for a, p in zip(row, present) if p)
    # str values of a BYTE_ARRAY column answer as their UTF-8 bytes.
    if physical == "BYTE_ARRAY":
        assert bloomlab.parquet.contains(path, column, [v.decode() for v in values]) == got


def test_inspect_lists_every_chunk():
    table = bloomlab.parquet.inspect(DATA / "pyarrow.parquet")
    row_groups = {r["row_group"] for r in table}
    columns = {r["column"] for r in table}
    assert len(table) == len(row_groups) * len(columns)
    for r in table:
        assert set(r) == {"row_group", "column", "type", "bytes", "fill", "est_fpr", "est_distinct"}
        if r["column"] == "nofilter":
            assert r["bytes"] is r["fill"] is r["est_fpr"] is r["est_distinct"] is None
        else:
            assert r["bytes"] >= 32 and r["bytes"] & (r["bytes"] - 1) == 0
            assert 0 < r["fill"] < 1 and 0 < r["est_fpr"] < 1 and r["est_distinct"] > 0


def test_bad_files_and_values(tmp_path):
    with pytest.raises(OSError):
        bloomlab.parquet.inspect(tmp_path / "missing.parquet")
    junk = tmp_path / "junk.parquet"
    junk.write_bytes(b"PAR1" + b"\x00" * 100 + b"PAR1")
    with pytest.raises(bloomlab.DecodeError):
        bloomlab.parquet.contains(junk, "id", [1])
    path = DATA / "duckdb.parquet"
    with pytest.raises(ValueError):
        bloomlab.parquet.contains(path, "no_such_column", [1])
    with pytest.raises(TypeError):
        bloomlab.parquet.contains(path, "id", ["not an int"])
    with pytest.raises(TypeError):
        bloomlab.parquet.contains(path, "name", [1])
    with pytest.raises(OverflowError):
        bloomlab.parquet.contains(path, "small", [2**31])
    with pytest.raises(TypeError):
        bloomlab.parquet.contains(path, "name", "a single value")
    with pytest.raises(ValueError):
        bloomlab.parquet.contains(DATA / "pyarrow.parquet", "fixed", [b"abc"])


def _duckdb():
    try:
        import duckdb
    except ImportError:
        if os.environ.get("BLOOMLAB_REQUIRE_DUCKDB") == "1":
            raise
        pytest.skip("duckdb is not installed")
    return duckdb


SQL_TYPE = {"i": "BIGINT", "s": "VARCHAR", "d": "DOUBLE"}


@settings(max_examples=15)
@given(
    members=st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), min_size=1, max_size=300, unique=True),
    probes=st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=60),
    strings=st.lists(st.text(max_size=12), min_size=1, max_size=300, unique=True),
    string_probes=st.lists(st.text(max_size=12), max_size=60),
    doubles=st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=300, unique=True),
)
def test_answers_equal_live_duckdb(tmp_path_factory, members, probes, strings, string_probes, doubles):
    """DuckDB writes three row groups of 2048 rows (it stores a bloom filter for a
    dictionary-encoded chunk, so values repeat), at a 30 % false-positive ratio so that
    non-members answer True too; every answer must be DuckDB's."""
    duckdb = _duckdb()
    con = duckdb.connect()
    con.execute("SET threads = 1")
    path = str(tmp_path_factory.mktemp("duck") / "t.parquet")
    rows = 3 * 2048
    con.execute(
        "CREATE TABLE t AS SELECT unnest(?::BIGINT[]) AS i, unnest(?::VARCHAR[]) AS s, unnest(?::DOUBLE[]) AS d",
        [
            [members[r % len(members)] for r in range(rows)],
            [strings[r % len(strings)] for r in range(rows)],
            [doubles[r % len(doubles)] for r in range(rows)],
        ],
    )
    con.execute(
        f"COPY t TO '{path}' (FORMAT parquet, ROW_GROUP_SIZE 2048, BLOOM_FILTER_FALSE_POSITIVE_RATIO 0.3)"
    )
    compared = 0
    for column, values in (
        ("i", members[:40] + probes),
        ("s", strings[:40] + string_probes),
        ("d", doubles[:40] + [float(p) for p in probes[:20]]),
    ):
        got = bloomlab.parquet.contains(path, column, values)
        for v, row in zip(values, got):
            want = con.execute(
                f"SELECT row_group_id, bloom_filter_excludes FROM parquet_bloom_probe(?, ?, ?::{SQL_TYPE[column]}) ORDER BY row_group_id",
                [path, column, v],
            ).fetchall()
            assert len(want) == len(row) == 3
            for (rg, excludes), ours in zip(want, row):
                if ours is None:
                    # No filter in the chunk: DuckDB cannot exclude the value either.
                    assert not excludes, (column, v, rg)
                else:
                    compared += 1
                    assert ours == (not excludes), (column, v, rg)
    assert compared > 0  # DuckDB wrote filters, and we read them
