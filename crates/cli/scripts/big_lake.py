#!/usr/bin/env python3
"""`bloomlab contains` and `audit` over a 2 GB Parquet dataset: peak memory, and agreement with
DuckDB's `parquet_bloom_probe` over the same glob, file by file and row group by row group.

Usage: `pip install duckdb pyarrow && python3 crates/cli/scripts/big_lake.py DIR [BLOOMLAB]`
(BLOOMLAB defaults to target/release/bloomlab; build it with
`cargo build --release -p bloomlab-cli`). Writes DIR/*.parquet once (about 2 GB: 16 files by
DuckDB and 8 by pyarrow, each with bloom filters on `id` and `name` and an incompressible
`payload` column without one), then runs `/usr/bin/time -v` on `contains DIR --column id
--keys K --json` and on `audit DIR --json`, and prints their peak resident set sizes and the
count of (file, key, row group) answers that differ from DuckDB's.
"""

import json
import os
import random
import subprocess
import sys

import duckdb
import pyarrow.parquet as pq

ROWS = 2_600_000  # per file; about 85 MB each with the payload column


def select(i):
    return f"""SELECT ((r * 7919) % 20000 + {i} * 100000)::BIGINT AS id,
                      'n-' || ((r * 104729) % 15000) AS name,
                      md5(r::VARCHAR || '-{i}') AS payload
               FROM range({ROWS}) t(r)"""


def write(dir):
    """Write the files not there yet."""
    con = duckdb.connect()
    for i in range(16):
        out = os.path.join(dir, f"duckdb-{i:02}.parquet")
        if not os.path.exists(out):
            con.execute(f"COPY ({select(i)}) TO '{out}' (FORMAT parquet, BLOOM_FILTER_FALSE_POSITIVE_RATIO 0.01)")
    for i in range(16, 24):
        out = os.path.join(dir, f"pyarrow-{i:02}.parquet")
        if os.path.exists(out):
            continue
        t = con.sql(select(i)).to_arrow_table()
        pq.write_table(t, out, row_group_size=500_000,
                       bloom_filter_options={"id": {"ndv": 20000, "fpp": 0.01},
                                             "name": {"ndv": 15000, "fpp": 0.01}})


def peak_rss_kib(cmd, out):
    with open(out, "w") as f:
        r = subprocess.run(["/usr/bin/time", "-v"] + cmd, stdout=f, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0, r.stderr
    line = next(l for l in r.stderr.splitlines() if "Maximum resident set size" in l)
    wall = next(l for l in r.stderr.splitlines() if "Elapsed (wall clock)" in l)
    return int(line.split()[-1]), wall.split()[-1]


def main():
    dir = os.path.abspath(sys.argv[1])
    exe = sys.argv[2] if len(sys.argv) > 2 else "target/release/bloomlab"
    os.makedirs(dir, exist_ok=True)
    write(dir)
    files = sorted(f for f in os.listdir(dir) if f.endswith(".parquet"))
    size = sum(os.path.getsize(os.path.join(dir, f)) for f in files)
    rnd = random.Random(5)
    keys = [rnd.randrange(0, 24) * 100000 + rnd.randrange(0, 40000) for _ in range(100)]
    kfile = os.path.join(dir, "keys.txt")
    with open(kfile, "w") as f:
        f.write("".join(f"{k}\n" for k in keys))
    out = os.path.join(dir, "contains.json")
    rss, wall = peak_rss_kib([exe, "contains", dir, "--column", "id", "--keys", kfile, "--json"], out)
    audit_rss, audit_wall = peak_rss_kib([exe, "audit", dir, "--json"], os.path.join(dir, "audit.json"))
    ours = {}
    for line in open(out):
        v = json.loads(line)
        ours[(os.path.basename(v["file"]), v["key"])] = v["row_groups"]
    con = duckdb.connect()
    glob = os.path.join(dir, "*.parquet")
    has = {(os.path.basename(f), rg): b for f, rg, b in con.execute(
        "SELECT file_name, row_group_id, bloom_filter_offset IS NOT NULL FROM parquet_metadata(?) "
        "WHERE path_in_schema = 'id'", [glob]).fetchall()}
    answers = differ = 0
    for k in keys:
        rows = con.execute("SELECT file_name, row_group_id, bloom_filter_excludes "
                           "FROM parquet_bloom_probe(?, 'id', ?::BIGINT)", [glob, k]).fetchall()
        for f, rg, excl in rows:
            f = os.path.basename(f)
            theirs = (not excl) if has[(f, rg)] else None
            answers += 1
            differ += ours[(f, str(k))][rg] != theirs
    print(f"{len(files)} files, {size / 2**30:.2f} GiB; contains: {len(keys)} keys, "
          f"peak RSS {rss / 1024:.1f} MiB, wall {wall}; audit: peak RSS {audit_rss / 1024:.1f} MiB, "
          f"wall {audit_wall}; {answers} (file, key, row group) answers, {differ} differ from DuckDB's")
    assert differ == 0


if __name__ == "__main__":
    main()
