#!/usr/bin/env python3
"""Write the small datasets the dataset commands are tested on, and the engines' own answers.

Run from anywhere: `pip install duckdb pyarrow pyspark && python3 crates/cli/tests/data/make_lake.py`
(pyspark needs Java 17). Writes, next to this script:

- lake/: 24 Parquet files from three writers, the same two columns `id` (BIGINT) and `name`
  (VARCHAR) in each: 8 by DuckDB (`duckdb-N.parquet`, few distinct values, since DuckDB writes
  a filter only for a dictionary-encoded chunk), 8 by pyarrow (`pyarrow-N.parquet`),
  8 by Spark / parquet-java (`spark-N.parquet`, dictionary encoding off so that every chunk gets
  a bloom filter), each in 2 or 3 row groups; pyarrow's `name` has no filter in odd files.
- lake.id.keys, lake.name.keys: the keys probed (members and non-members), one per line;
- lake.id.expected, lake.name.expected: DuckDB's `parquet_bloom_probe` over the glob
  `lake/*.parquet`, as JSON Lines in the form `bloomlab contains --json` prints:
  `{"file": NAME, "key": KEY, "row_groups": [...]}` per file and key, `true` where the filter
  does not exclude the key, `false` where it does, `null` where `parquet_metadata` records no
  bloom filter for the chunk (file names relative to lake/).
- ndv/: files whose filters were sized from a wrong distinct count, for `audit`:
  `pyarrow-ndv.parquet` (pyarrow honours a too-small NDV: `under` given 1000 for 4000
  distinct values per row group, `useless` given 20 for 5000; `right` given its true count)
  and `spark-ndv.parquet` (parquet-java honours a too-large NDV: `over` given 100000 for about
  2000; `right` given its true count), all at FPP 0.01;
- ndv.distinct: the exact distinct count of every column chunk of every file above (DuckDB's
  `count(DISTINCT)` over each row group's rows), tab-separated: file, column, row group, count.
"""

import glob
import json
import os
import random
import shutil
import tempfile

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
LAKE = os.path.join(HERE, "lake")
NDV = os.path.join(HERE, "ndv")


def rows(seed, n, ids=3000, names=1500):
    """The rows of one file: ids from a range that differs per file, names from a shared pool."""
    rnd = random.Random(seed)
    ids = [seed * 10_000 + rnd.randrange(0, ids) for _ in range(n)]
    names = [f"名前-{rnd.randrange(0, names)}" for _ in range(n)]
    return ids, names


def duckdb_files(con):
    for i in range(8):
        # Few distinct values: DuckDB writes a filter only for a dictionary-encoded chunk.
        ids, names = rows(100 + i, 5000, ids=400, names=300)
        t = pa.table({"id": pa.array(ids, pa.int64()), "name": pa.array(names, pa.string())})
        con.register("t", t)
        f = os.path.join(LAKE, f"duckdb-{i}.parquet")
        con.execute(
            f"COPY (SELECT * FROM t) TO '{f}' (FORMAT parquet, ROW_GROUP_SIZE 1024,"
            " BLOOM_FILTER_FALSE_POSITIVE_RATIO 0.05)"
        )
        con.unregister("t")


def pyarrow_files():
    for i in range(8):
        ids, names = rows(200 + i, 3000)
        t = pa.table({"id": pa.array(ids, pa.int64()), "name": pa.array(names, pa.string())})
        opts = {"id": {"ndv": 1000, "fpp": 0.05}}
        if i % 2 == 0:
            opts["name"] = {"ndv": 800, "fpp": 0.05}
        pq.write_table(
            t, os.path.join(LAKE, f"pyarrow-{i}.parquet"), row_group_size=1500,
            bloom_filter_options=opts,
        )


def spark_session():
    from pyspark.sql import SparkSession

    return (
        SparkSession.builder.master("local[1]")
        .appName("bloomlab-testdata")
        .config("spark.ui.enabled", "false")
        .getOrCreate()
    )


def spark_write(spark, table, out, options):
    """Write `table` (a list of row tuples and the column names) as one Parquet file `out`."""
    data, cols = table
    df = spark.createDataFrame(data, cols).coalesce(1)
    tmp = tempfile.mkdtemp()
    w = df.write.mode("overwrite").option("parquet.block.size", 16384)
    w = w.option("parquet.enable.dictionary", "false")
    for k, v in options.items():
        w = w.option(k, v)
    w.parquet(tmp)
    (part,) = glob.glob(os.path.join(tmp, "part-*.parquet"))
    shutil.copyfile(part, out)
    shutil.rmtree(tmp)


def bloom_options(cols):
    out = {}
    for col, ndv in cols:
        out[f"parquet.bloom.filter.enabled#{col}"] = "true"
        out[f"parquet.bloom.filter.expected.ndv#{col}"] = str(ndv)
        out[f"parquet.bloom.filter.fpp#{col}"] = "0.05" if ndv < 5000 else "0.01"
    return out


def spark_files(spark):
    for i in range(8):
        ids, names = rows(300 + i, 2500)
        spark_write(
            spark,
            (list(zip(ids, names)), ["id", "name"]),
            os.path.join(LAKE, f"spark-{i}.parquet"),
            bloom_options([("id", 1000), ("name", 800)]),
        )


def probe_lake(con):
    pattern = os.path.join(LAKE, "*.parquet")
    files = sorted(glob.glob(pattern))
    meta = con.execute(
        "SELECT file_name, path_in_schema, row_group_id, bloom_filter_offset IS NOT NULL "
        "FROM parquet_metadata(?)",
        [pattern],
    ).fetchall()
    has = {(os.path.basename(f), c, rg): b for f, c, rg, b in meta}
    n_rg = {}
    for f, _, rg, _ in meta:
        n_rg[os.path.basename(f)] = max(n_rg.get(os.path.basename(f), 0), rg + 1)
    rnd = random.Random(7)
    cases = {
        "id": ("BIGINT", sorted({rnd.choice([1, 2, 3]) * 100 * 10_000 + rnd.randrange(0, 40_000)
                                  for _ in range(60)}), str),
        "name": ("VARCHAR", [f"名前-{j}" for j in range(0, 1700, 37)] + ["", "nope"], str),
    }
    for column, (sql_type, values, show) in cases.items():
        with open(os.path.join(HERE, f"lake.{column}.keys"), "w") as k:
            k.write("".join(show(v) + "\n" for v in values))
        # One probe per key over the glob, as a user would ask DuckDB.
        answers = {}
        for v in values:
            got = con.execute(
                f"SELECT file_name, row_group_id, bloom_filter_excludes FROM parquet_bloom_probe(?, ?, ?::{sql_type})",
                [pattern, column, v],
            ).fetchall()
            assert len(got) == sum(n_rg.values()), got
            for f, rg, excl in got:
                answers[(os.path.basename(f), v, rg)] = not excl
        lines = []
        for f in files:
            name = os.path.basename(f)
            for v in values:
                row = [answers[(name, v, rg)] if has[(name, column, rg)] else None
                       for rg in range(n_rg[name])]
                lines.append(json.dumps({"file": name, "key": show(v), "row_groups": row},
                                        ensure_ascii=False))
        with open(os.path.join(HERE, f"lake.{column}.expected"), "w") as e:
            e.write("".join(line + "\n" for line in lines))


def ndv_files(spark):
    rg = 5000
    n = 2 * rg
    rnd = random.Random(11)
    right = [rnd.randrange(0, 3000) for _ in range(n)]
    under = [r * rg + i % 4000 for r in range(2) for i in range(rg)]
    useless = [f"v{r}-{i}" for r in range(2) for i in range(rg)]
    t = pa.table({
        "right": pa.array(right, pa.int64()),
        "under": pa.array(under, pa.int64()),
        "useless": pa.array(useless, pa.string()),
        "nofilter": pa.array(list(range(n)), pa.int64()),
    })
    pq.write_table(
        t, os.path.join(NDV, "pyarrow-ndv.parquet"), row_group_size=rg,
        bloom_filter_options={
            "right": {"ndv": 3000, "fpp": 0.01},
            "under": {"ndv": 1000, "fpp": 0.01},
            "useless": {"ndv": 20, "fpp": 0.01},
        },
    )
    m = 6000
    over = [rnd.randrange(0, 2000) for _ in range(m)]
    right2 = [i for i in range(m)]
    data = list(zip(over, right2))
    spark_write(
        spark, (data, ["over", "right"]), os.path.join(NDV, "spark-ndv.parquet"),
        {
            "parquet.block.size": "40000",
            "parquet.bloom.filter.enabled#over": "true",
            "parquet.bloom.filter.expected.ndv#over": "100000",
            "parquet.bloom.filter.fpp#over": "0.01",
            "parquet.bloom.filter.enabled#right": "true",
            "parquet.bloom.filter.expected.ndv#right": "3000",
            "parquet.bloom.filter.fpp#right": "0.01",
        },
    )


def exact_distinct(con):
    out = []
    for f in sorted(glob.glob(os.path.join(NDV, "*.parquet")) + glob.glob(os.path.join(LAKE, "*.parquet"))):
        rel = os.path.relpath(f, HERE)
        groups = con.execute(
            "SELECT DISTINCT row_group_id, row_group_num_rows FROM parquet_metadata(?) ORDER BY 1",
            [f],
        ).fetchall()
        cols = [r[0] for r in con.execute("SELECT name FROM parquet_schema(?) WHERE num_children IS NULL", [f]).fetchall()]
        start = 0
        for rg, num in groups:
            for c in cols:
                (d,) = con.execute(
                    f'SELECT count(DISTINCT "{c}") FROM read_parquet(?, file_row_number = true) '
                    "WHERE file_row_number >= ? AND file_row_number < ?",
                    [f, start, start + num],
                ).fetchone()
                out.append(f"{rel}\t{c}\t{rg}\t{d}\n")
            start += num
    with open(os.path.join(HERE, "ndv.distinct"), "w") as o:
        o.write("".join(out))


def main():
    for d in (LAKE, NDV):
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
    con = duckdb.connect()
    con.execute("SET threads = 1")
    duckdb_files(con)
    pyarrow_files()
    spark = spark_session()
    spark.sparkContext.setLogLevel("ERROR")
    spark_files(spark)
    ndv_files(spark)
    print("duckdb", duckdb.__version__, "pyarrow", pa.__version__, "spark", spark.version)
    spark.stop()
    probe_lake(con)
    exact_distinct(con)


if __name__ == "__main__":
    main()
