#!/usr/bin/env python3
"""Write small Parquet files with bloom filters from other engines, and those engines' answers.

Run from anywhere: `pip install duckdb pyarrow pyspark && python3 crates/cli/tests/data/make_parquet.py`.
Writes, next to this script:

- duckdb.parquet: written by DuckDB (three row groups; DuckDB stores a bloom filter only for
  dictionary-encoded column chunks, so the high-cardinality `uniq` column has none);
- pyarrow.parquet: written by pyarrow / Arrow C++ (four row groups; `nofilter` has none);
- spark.parquet: written by Spark (parquet-mr) in a local session (needs pyspark and Java 17;
  `nofilter` has none), its answers checked against parquet-mr's own bloom filter reader;
- for each (file, column) probed, `<file-stem>.<column>.keys` (one key per line, encoded as
  `bloomlab contains` reads them for the column's physical type), `.expected` (per key one
  line, one field per row group: DuckDB's `parquet_bloom_probe` answer, `1` where its filter
  does not exclude the key and `0` where it does, `-` where the file's metadata records no
  bloom filter for the chunk) and `.members` (per key and row group, `1` if the value occurs
  in that row group: those must answer `1`).

The Rust test (tests/parquet.rs) checks `bloomlab contains` against `.expected`, against
arrow-rs's `Sbbf::check` and against `.members`. The keys mix members with non-members; the
false-positive rates are set high so that some non-members answer `1` too.
"""

import os
import random

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def probe(con, file, column, sql_type, value, row_groups):
    """DuckDB's own bloom probe: per row group, 1 (may contain) or 0 (excluded)."""
    rows = con.execute(
        f"SELECT row_group_id, bloom_filter_excludes FROM parquet_bloom_probe(?, ?, ?::{sql_type})",
        [file, column, value],
    ).fetchall()
    got = {rg: ("0" if excl else "1") for rg, excl in rows}
    assert sorted(got) == list(range(row_groups)), rows
    return [got[rg] for rg in range(row_groups)]


def has_filter(con, file, column):
    rows = con.execute(
        "SELECT row_group_id, bloom_filter_offset IS NOT NULL FROM parquet_metadata(?) "
        "WHERE path_in_schema = ? ORDER BY row_group_id",
        [file, column],
    ).fetchall()
    return [bool(x) for _, x in rows]


def write_case(con, stem, file, column, sql_type, values, line_of, groups):
    """values: keys to probe (Python values); line_of: how a key is written in the key file;
    groups: the set of values in each row group."""
    filt = has_filter(con, file, column)
    n_rg = len(groups)
    assert len(filt) == n_rg
    keys, expected, members = [], [], []
    for v in values:
        answers = probe(con, file, column, sql_type, v, n_rg)
        fields = []
        for rg in range(n_rg):
            if not filt[rg]:
                # No filter: DuckDB cannot exclude, and neither can we.
                assert answers[rg] == "1"
                fields.append("-")
            else:
                fields.append(answers[rg])
        member = ["1" if v in groups[rg] else "0" for rg in range(n_rg)]
        for rg in range(n_rg):
            if member[rg] == "1":
                assert fields[rg] in ("1", "-"), (stem, column, v, rg)
        keys.append(line_of(v))
        expected.append(" ".join(fields))
        members.append(" ".join(member))
    base = path(f"{stem}.{column}")
    with open(base + ".keys", "wb") as f:
        f.write(b"".join(k + b"\n" for k in keys))
    with open(base + ".expected", "w") as f:
        f.write("".join(e + "\n" for e in expected))
    with open(base + ".members", "w") as f:
        f.write("".join(m + "\n" for m in members))
    ones = sum(e.count("1") for e in expected)
    zeros = sum(e.count("0") for e in expected)
    dashes = sum(e.count("-") for e in expected)
    print(f"{stem}.{column}: {len(keys)} keys, answers 1/0/-: {ones}/{zeros}/{dashes}")


def int_line(v):
    return str(v).encode()


def str_line(v):
    return v.encode("utf-8")


def float_line(v):
    return repr(float(v)).encode()


def duckdb_file(con):
    file = path("duckdb.parquet")
    rows, rg_size = 3 * 2048, 2048
    con.execute("SET threads = 1")
    con.execute(
        f"""COPY (SELECT (i // 16)::BIGINT - 100 AS id,
                        'ключ-' || ((i * 7) % 61 + (i // {rg_size}) * 40) AS name,
                        ((i % 50) - 25)::INTEGER AS small,
                        (i % 64)::DOUBLE * 0.5 AS d,
                        i::VARCHAR AS uniq
                 FROM range({rows}) t(i) ORDER BY i)
            TO '{file}' (FORMAT parquet, ROW_GROUP_SIZE {rg_size},
                         BLOOM_FILTER_FALSE_POSITIVE_RATIO 0.3)"""
    )
    n_rg = con.execute("SELECT count(DISTINCT row_group_id) FROM parquet_metadata(?)", [file]).fetchone()[0]
    assert n_rg == 3, n_rg
    groups = {c: [set() for _ in range(n_rg)] for c in ["id", "name", "small", "d", "uniq"]}
    for i in range(rows):
        rg = i // rg_size
        groups["id"][rg].add(i // 16 - 100)
        groups["name"][rg].add(f"ключ-{(i * 7) % 61 + (i // rg_size) * 40}")
        groups["small"][rg].add(i % 50 - 25)
        groups["d"][rg].add((i % 64) * 0.5)
        groups["uniq"][rg].add(str(i))
    rnd = random.Random(39)
    ids = sorted({rnd.randrange(-400, 600) for _ in range(150)})
    write_case(con, "duckdb", file, "id", "BIGINT", ids, int_line, groups["id"])
    names = [f"ключ-{j}" for j in range(0, 160, 2)] + ["", "ключ", "x"]
    write_case(con, "duckdb", file, "name", "VARCHAR", names, str_line, groups["name"])
    smalls = list(range(-60, 60, 3))
    write_case(con, "duckdb", file, "small", "INTEGER", smalls, int_line, groups["small"])
    ds = [j * 0.25 for j in range(-8, 80, 3)]
    write_case(con, "duckdb", file, "d", "DOUBLE", ds, float_line, groups["d"])
    uniqs = [str(j) for j in range(0, 6144, 500)] + ["-1", "abc"]
    write_case(con, "duckdb", file, "uniq", "VARCHAR", uniqs, str_line, groups["uniq"])


def pyarrow_file(con):
    file = path("pyarrow.parquet")
    n, rg_size = 1200, 300
    ids = [i * 3 - 1000 for i in range(n)]
    names = [f"名前-{i % 150}-{i // rg_size}" for i in range(n)]
    i32s = [(i * 7919) % 100003 - 50000 for i in range(n)]
    fixed = [(i * 2654435761 % 2**32).to_bytes(4, "big") for i in range(n)]
    flts = [i * 0.25 for i in range(n)]
    table = pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": pa.array(names, pa.string()),
            "i32": pa.array(i32s, pa.int32()),
            "fixed": pa.array(fixed, pa.binary(4)),
            "flt": pa.array(flts, pa.float32()),
            "nofilter": pa.array(list(range(n)), pa.int64()),
        }
    )
    pq.write_table(
        table,
        file,
        row_group_size=rg_size,
        compression="zstd",
        bloom_filter_options={
            "id": {"ndv": 300, "fpp": 0.2},
            "name": {"ndv": 40, "fpp": 0.3},
            "i32": {"ndv": 300, "fpp": 0.2},
            "fixed": {"ndv": 300, "fpp": 0.2},
            "flt": {"ndv": 300, "fpp": 0.2},
        },
    )
    n_rg = n // rg_size
    groups = lambda col: [set(col[r * rg_size:(r + 1) * rg_size]) for r in range(n_rg)]
    rnd = random.Random(40)
    probe_ids = sorted({rnd.randrange(-1200, 2700) for _ in range(200)})
    write_case(con, "pyarrow", file, "id", "BIGINT", probe_ids, int_line, groups(ids))
    probe_names = [f"名前-{j}-{r}" for j in range(0, 200, 7) for r in range(4)] + ["", "名前"]
    write_case(con, "pyarrow", file, "name", "VARCHAR", probe_names, str_line, groups(names))
    probe_i32 = i32s[::17] + [rnd.randrange(-60000, 60000) for _ in range(80)]
    write_case(con, "pyarrow", file, "i32", "INTEGER", probe_i32, int_line, groups(i32s))
    probe_fixed = fixed[::23] + [rnd.randrange(2**32).to_bytes(4, "big") for _ in range(80)]
    write_case(con, "pyarrow", file, "fixed", "BLOB", probe_fixed, lambda v: v.hex().encode(), groups(fixed))
    probe_flt = flts[::29] + [j * 0.125 for j in range(-40, 40)]
    write_case(con, "pyarrow", file, "flt", "FLOAT", probe_flt, float_line, groups(flts))
    probe_nf = list(range(-5, 1300, 50))
    write_case(con, "pyarrow", file, "nofilter", "BIGINT", probe_nf, int_line, groups(list(range(n))))


def spark_file(con):
    """Spark (parquet-mr) writes the file; its expected answers come from parquet-mr's own
    reader: `ParquetFileReader.readBloomFilter` and `BloomFilter.findHash`, called through the
    running session's JVM, checked against DuckDB's probe as well."""
    import glob
    import shutil
    import struct
    import tempfile

    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[1]")
        .appName("bloomlab-testdata")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )
    tmp = tempfile.mkdtemp()
    n = 3000
    df = spark.range(0, n, numPartitions=1).selectExpr(
        "id * 5 - 7000 AS id",
        "concat('名前-', CAST(id % 700 AS STRING)) AS name",
        "CAST(id % 97 - 40 AS INT) AS small",
        "id AS nofilter",
    )
    writer = df.write.mode("overwrite").option("parquet.block.size", 16384)
    for col, ndv, fpp in [("id", 1000, 0.2), ("name", 300, 0.3), ("small", 100, 0.2)]:
        writer = (
            writer.option(f"parquet.bloom.filter.enabled#{col}", "true")
            .option(f"parquet.bloom.filter.expected.ndv#{col}", str(ndv))
            .option(f"parquet.bloom.filter.fpp#{col}", str(fpp))
        )
    writer.parquet(tmp)
    (part,) = glob.glob(os.path.join(tmp, "part-*.parquet"))
    file = path("spark.parquet")
    shutil.copyfile(part, file)
    shutil.rmtree(tmp)

    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    input_file = jvm.org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(
        jvm.org.apache.hadoop.fs.Path(file), conf
    )
    reader = jvm.org.apache.parquet.hadoop.ParquetFileReader.open(input_file)
    blocks = list(reader.getFooter().getBlocks())
    Binary = jvm.org.apache.parquet.io.api.Binary

    def parquet_mr(column, plain):
        out = []
        for block in blocks:
            chunk = next(c for c in block.getColumns() if c.getPath().toDotString() == column)
            bf = reader.readBloomFilter(chunk)
            if bf is None:
                out.append("-")
            else:
                # hash(Binary) is XXH64 of the bytes: of the plain encoding, as for each type.
                out.append("1" if bf.findHash(bf.hash(Binary.fromConstantByteArray(bytearray(plain)))) else "0")
        return out

    rows = [(i * 5 - 7000, f"名前-{i % 700}", i % 97 - 40, i) for i in range(n)]
    counts = [b.getRowCount() for b in blocks]
    assert sum(counts) == n and len(counts) >= 3, counts
    starts = [sum(counts[:r]) for r in range(len(counts))]
    groups = lambda c: [set(r[c] for r in rows[s:s + k]) for s, k in zip(starts, counts)]
    rnd = random.Random(41)
    cases = [
        ("id", "BIGINT", sorted({rnd.randrange(-8000, 9000) for _ in range(200)}), int_line,
         lambda v: struct.pack("<q", v), groups(0)),
        ("name", "VARCHAR", [f"名前-{j}" for j in range(0, 900, 9)] + ["", "名前"], str_line,
         lambda v: v.encode("utf-8"), groups(1)),
        ("small", "INTEGER", list(range(-50, 70, 2)), int_line, lambda v: struct.pack("<i", v), groups(2)),
        ("nofilter", "BIGINT", list(range(-5, 3100, 150)), int_line, lambda v: struct.pack("<q", v), groups(3)),
    ]
    for column, sql_type, values, line_of, plain, grp in cases:
        write_case(con, "spark", file, column, sql_type, values, line_of, grp)
        # The engine's own probe must give the answers just written (DuckDB's).
        expected = open(path(f"spark.{column}.expected")).read().splitlines()
        for v, e in zip(values, expected):
            assert " ".join(parquet_mr(column, plain(v))) == e, (column, v, e)
    reader.close()
    print("spark", spark.version, "blocks", counts)
    spark.stop()


def main():
    con = duckdb.connect()
    duckdb_file(con)
    pyarrow_file(con)
    print("duckdb", duckdb.__version__, "pyarrow", pa.__version__)
    spark_file(con)


if __name__ == "__main__":
    main()
