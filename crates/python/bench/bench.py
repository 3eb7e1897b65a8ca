#!/usr/bin/env python3
"""The bloomlab package against the Python peers: inserts and lookups per second.

    python3 crates/python/bench/bench.py            # 10^6 keys, 11 rounds; writes results/python/

One command: it makes a virtual environment (target/python-bench/venv), installs there the
package from this checkout (`pip install ./crates/python`, an optimised release wheel) and the
peers from PyPI (rbloom, fastbloom-rs, pybloom-live, pyprobables) with NumPy and SciPy, and
runs itself inside it. `--no-install` runs in the current interpreter instead.

What it measures, in the manner of the Rust harness (bench-harness):

- n = 10^6 keys of two kinds: `str` (16 hex digits after a one-letter prefix) and `int`
  (random 63-bit values), from a fixed seed; 10^6 non-member probes of the same kind
  (a different prefix, or the other parity, so none is a member).
- Every filter sized for n at a 1 % target, through its own constructor.
- Per round, key kind and filter: a fresh filter is filled one key at a time (insert, one at
  a time), another in one batch call (insert, batch), then the probes are answered one at a
  time and in one batch call. A peer without a batch call does what its users would do: the
  one-at-a-time loop (marked "loop" in the table). Lookups of `str` keys use fresh `str`
  objects each round (decoded from bytes, untimed), as keys read from a file or socket are:
  CPython caches a `str`'s hash in the object, and rbloom hashes with it, so probing the same
  objects twice measures that cache; the table shows that case as its own row too.
- Rounds interleave the filters, their order rotating each round; times are per key from
  `time.perf_counter_ns` around the whole call or loop, with the cyclic garbage collector off
  (as `timeit` does; it runs between filters). Each cell is the median of the
  rounds; its interval and each ratio's are 95 % bootstrap intervals of the median
  (`scipy.stats.bootstrap`, percentile method, fixed seed). A ratio "ours ÷ peer" is the
  median of the per-round ratios (paired: the same round, near in time).
- The pure-Python peers (pybloom-live, pyprobables) take microseconds per key, so each is
  filled with the n keys once before the rounds (untimed), and each round times
  `--slow-sample` (2·10^4) keys per operation: inserts into a fresh filter, lookups on the
  full one (a Bloom lookup's cost depends on how full the filter is, not on which keys).
- bits/item: the filter's table in bits over n (its own size accessor); FPR: the fraction of
  the 10^6 probes answered True by the filter holding all n keys (for the fast filters, the
  mean over rounds).

Results: results/python/bench.md (tables, the machine, the command) and bench.json (every
round's time).
"""

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
PEERS = ["rbloom", "fastbloom-rs", "pybloom-live", "pyprobables"]


def in_venv(args):
    """Create the venv, install everything, re-run this script inside it."""
    venv = ROOT / "target" / "python-bench" / "venv"
    py = venv / "bin" / "python"
    if not py.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    pip = [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    subprocess.run(pip + ["numpy", "scipy"] + PEERS, check=True)
    subprocess.run(pip + ["--force-reinstall", "--no-deps", str(ROOT / "crates" / "python")], check=True)
    os.execv(str(py), [str(py), str(Path(__file__).resolve()), "--no-install"] + args)


def machine():
    model = "unknown CPU"
    flags = set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name") and model == "unknown CPU":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    simd = [f for f in ("avx2", "avx512f", "avx512bw") if f in flags]
    return {
        "cpu": model,
        "cpus": os.cpu_count(),
        "simd": simd,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_average_start": os.getloadavg(),
    }


def keys(n, seed):
    import numpy as np

    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2**62, size=n, dtype=np.int64)
    y = rng.integers(0, 2**62, size=n, dtype=np.int64)
    members_int = x * 2  # even
    probes_int = y * 2 + 1  # odd: never a member
    members_str = [f"m{v:016x}".encode() for v in x.tolist()]
    probes_str = [f"q{v:016x}".encode() for v in y.tolist()]
    return {
        "int": (members_int, probes_int),
        "str": (members_str, probes_str),
    }


class Entry:
    """One filter: how to build, insert, look up and size it. `batch_insert` and
    `batch_lookup` are None where the library has no batch call."""

    def __init__(self, name, make, add, contains, size_bits, batch_insert=None, batch_lookup=None, version="", sample=None):
        self.name, self.make, self.add, self.contains = name, make, add, contains
        self.size_bits, self.batch_insert, self.batch_lookup = size_bits, batch_insert, batch_lookup
        self.version = version
        # Keys timed per round and operation (all n, or a sample for the pure-Python peers).
        self.sample = sample


def entries(n, fpr, slow_sample):
    import importlib.metadata as md

    import bloomlab
    import fastbloom_rs
    import probables
    import pybloom_live
    import rbloom

    def v(pkg):
        return md.version(pkg)

    out = []

    def as_set(name, make, size_bits, **kw):
        """A filter used as a set, for both kinds of key: `f.add(k)` and `k in f`."""
        return Entry(name, lambda kind: make(), lambda f, kind: f.add, lambda f, kind: f.__contains__, size_bits, **kw)

    def ours(cls):
        out.append(
            as_set(
                f"bloomlab {cls.__name__}",
                lambda: cls(n, fpr),
                lambda f: f.size_in_bytes * 8,
                batch_insert=lambda f, kind, ks: f.update(ks),
                batch_lookup=lambda f, kind, ks: f.contains_many(ks),
                version=v("bloomlab"),
            )
        )

    ours(bloomlab.BlockedBloomFilter)
    ours(bloomlab.BloomFilter)
    out.append(
        as_set(
            "rbloom",
            lambda: rbloom.Bloom(n, fpr),
            lambda f: f.size_in_bits,
            batch_insert=lambda f, kind, ks: f.update(ks),
            version=v("rbloom"),
        )
    )
    out.append(
        Entry(
            "fastbloom-rs",
            lambda kind: fastbloom_rs.BloomFilter(n, fpr),
            lambda f, kind: f.add_int if kind == "int" else f.add_str,
            lambda f, kind: f.contains_int if kind == "int" else f.contains_str,
            lambda f: len(f.get_bytes()) * 8,
            batch_insert=lambda f, kind, ks: (f.add_int_batch if kind == "int" else f.add_str_batch)(ks),
            batch_lookup=lambda f, kind, ks: (f.contains_int_batch if kind == "int" else f.contains_str_batch)(ks),
            version=v("fastbloom-rs"),
        )
    )
    out.append(
        as_set(
            "pybloom-live",
            lambda: pybloom_live.BloomFilter(n, fpr),
            lambda f: f.num_bits,
            version=v("pybloom-live"),
            sample=slow_sample,
        )
    )

    def probables_add(f, kind):
        if kind == "int":  # it takes str or bytes only
            return lambda k: f.add(str(k))
        return f.add

    def probables_check(f, kind):
        if kind == "int":
            return lambda k: f.check(str(k))
        return f.check

    out.append(
        Entry(
            "pyprobables",
            lambda kind: probables.BloomFilter(est_elements=n, false_positive_rate=fpr),
            probables_add,
            probables_check,
            lambda f: f.number_bits,
            version=v("pyprobables"),
            sample=slow_sample,
        )
    )
    return out


def as_python(kind, raw):
    """Fresh Python objects of a key set: ints as a list, str decoded anew."""
    if kind == "int":
        return raw.tolist()
    return [b.decode() for b in raw]


def run(args):
    import numpy as np

    n, fpr = args.n, 0.01
    info = machine()
    data = keys(n, seed=20261207)
    ents = entries(n, fpr, min(n, args.slow_sample))
    for e in ents:
        e.sample = e.sample or n
    ops = ["insert, one at a time", "insert, batch", "lookup, one at a time", "lookup, batch"]
    str_again = "lookup, one at a time (the same str objects again)"
    times = {}  # "entry|kind|op" -> [ns per key, per round]
    fpr_seen, bits = {}, {}

    def timed(e, kind, op, count, fn):
        gc.collect()
        t = time.perf_counter_ns()
        out = fn()
        times.setdefault(f"{e.name}|{kind}|{op}", []).append((time.perf_counter_ns() - t) / count)
        return out

    def loop(fn, ks):
        for k in ks:
            fn(k)

    def count_true(fn, ks):
        hits = 0
        for k in ks:
            if fn(k):
                hits += 1
        return hits

    started = time.time()
    # The pure-Python peers take microseconds per key: each is filled with the n keys once
    # (untimed), answers all n probes once for its FPR, and each round times `sample` keys.
    full = {}
    for e in ents:
        if e.sample < n:
            for kind in ("int", "str"):
                f = e.make(kind)
                loop(e.add(f, kind), as_python(kind, data[kind][0]))
                hits = count_true(e.contains(f, kind), as_python(kind, data[kind][1]))
                fpr_seen[f"{e.name}|{kind}"] = [hits / n]
                bits[f"{e.name}|{kind}"] = e.size_bits(f) / n
                full[(e.name, kind)] = f
            print(f"{e.name}: filled once in {time.time() - started:.0f} s", file=sys.stderr)

    # As timeit does: no cyclic garbage collection inside a timed call (collected before each).
    gc.disable()
    for r in range(args.rounds):
        for kind in ("int", "str"):
            members_raw, probes_raw = data[kind]
            order = ents[r % len(ents) :] + ents[: r % len(ents)]
            for e in order:
                m = e.sample
                ours = e.name.startswith("bloomlab")
                members = as_python(kind, members_raw[:m])
                # Insert, one at a time, into a fresh filter.
                f = e.make(kind)
                timed(e, kind, ops[0], m, lambda: loop(e.add(f, kind), members))
                # Insert, batch (the library's batch call, else the loop again); ours takes
                # the NumPy int64 array as it is.
                g = e.make(kind)
                if e.batch_insert is not None:
                    batch = members_raw[:m] if (kind == "int" and ours) else members
                    timed(e, kind, ops[1], m, lambda: e.batch_insert(g, kind, batch))
                else:
                    timed(e, kind, ops[1], m, lambda: loop(e.add(g, kind), members))
                del g
                if m < n:
                    f = full[(e.name, kind)]
                # Lookups of the non-members on the filter holding all n keys, one at a time,
                # fresh objects.
                probes = as_python(kind, probes_raw[:m])
                contains = e.contains(f, kind)
                hits = timed(e, kind, ops[2], m, lambda: count_true(contains, probes))
                if m == n:
                    fpr_seen.setdefault(f"{e.name}|{kind}", []).append(hits / n)
                    bits[f"{e.name}|{kind}"] = e.size_bits(f) / n
                if kind == "str":
                    timed(e, kind, str_again, m, lambda: count_true(contains, probes))
                # Lookups, batch (the peers' own batch call on a list, else the loop).
                probes = as_python(kind, probes_raw[:m])
                if e.batch_lookup is not None:
                    batch = probes_raw[:m] if (kind == "int" and ours) else probes
                    ans = timed(e, kind, ops[3], m, lambda: e.batch_lookup(f, kind, batch))
                    assert int(np.count_nonzero(np.asarray(ans))) == hits, e.name
                else:
                    timed(e, kind, ops[3], m, lambda: [contains(k) for k in probes])
                # No false negatives (a spot check, untimed).
                assert all(contains(k) for k in members[:: max(1, m // 1000)]), e.name
                del f
        gc.collect()
        print(f"round {r + 1}/{args.rounds} done after {time.time() - started:.0f} s", file=sys.stderr)
    gc.enable()
    info["load_average_end"] = os.getloadavg()
    info["seconds"] = round(time.time() - started)
    report(args, info, ents, ops + [str_again], times, fpr_seen, bits, fpr)


def median_ci(values, seed=1):
    import numpy as np
    from scipy import stats

    values = np.asarray(values, dtype=float)
    med = float(np.median(values))
    if len(values) < 3 or np.all(values == values[0]):
        return med, med, med
    res = stats.bootstrap(
        (values,), np.median, confidence_level=0.95, n_resamples=2000, method="percentile", random_state=seed
    )
    return med, float(res.confidence_interval.low), float(res.confidence_interval.high)


def report(args, info, ents, ops, times, fpr_seen, bits, target):
    out = ROOT / "results" / "python"
    out.mkdir(parents=True, exist_ok=True)
    ours = "bloomlab BlockedBloomFilter"
    lines = [
        "# bloomlab from Python against the Python peers",
        "",
        f"`python3 crates/python/bench/bench.py --n {args.n} --rounds {args.rounds}`"
        f" ({info['seconds']} s), {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.",
        "",
        f"Machine: {info['cpu']}, {info['cpus']} CPUs ({', '.join(info['simd']) or 'no AVX'}), "
        f"Python {info['python']}, {info['platform']}; **shared with other builds while it ran** "
        f"(load average {info['load_average_start'][0]:.1f} at the start, {info['load_average_end'][0]:.1f} at the end): "
        "read the ratios (paired within rounds), not the absolute rates.",
        "",
        "Versions: " + ", ".join(sorted({f"{e.name.split()[0]} {e.version}" for e in ents})) + ".",
        "",
        f"n = {args.n:,} keys at a {target:.0%} target; {args.rounds} interleaved rounds; "
        f"ns per key: median [95 % bootstrap interval]; Mkeys/s from the median; the pure-Python peers timed on {args.slow_sample:,} keys per round and operation. "
        "\"loop\": the library has no batch call, so its batch row is the one-at-a-time loop.",
        "",
    ]
    summary = {}
    for kind in ("int", "str"):
        lines += [f"## {kind} keys", ""]
        lines += ["| filter | bits/item | measured FPR | " + " | ".join(ops if kind == "str" else ops[:4]) + " |"]
        lines += ["|---|---|---|" + "---|" * (len(ops) if kind == "str" else 4)]
        for e in ents:
            cells = []
            for op in ops if kind == "str" else ops[:4]:
                key = f"{e.name}|{kind}|{op}"
                med, lo, hi = median_ci(times[key])
                loop = " (loop)" if ("batch" in op and ((op.startswith("insert") and e.batch_insert is None) or (op.startswith("lookup") and e.batch_lookup is None))) else ""
                cells.append(f"{med:.1f} [{lo:.1f}–{hi:.1f}] ns, {1e3 / med:.2f} M/s{loop}")
            f = sum(fpr_seen[f"{e.name}|{kind}"]) / len(fpr_seen[f"{e.name}|{kind}"])
            summary[f"{e.name}|{kind}|fpr"] = f
            ok = "" if f <= 1.25 * target else " **(over 1.25× target)**"
            lines.append(f"| {e.name} | {bits[f'{e.name}|{kind}']:.2f} | {f:.3%}{ok} | " + " | ".join(cells) + " |")
        lines.append("")
        # Ratios of ours to every peer, paired by round.
        lines += [f"Ratios {ours} ÷ peer (ns per key, median of per-round ratios [95 %]; below 1: ours faster):", ""]
        lines += ["| peer | " + " | ".join(ops if kind == "str" else ops[:4]) + " |", "|---|" + "---|" * (len(ops) if kind == "str" else 4)]
        for e in ents:
            if e.name == ours:
                continue
            cells = []
            for op in ops if kind == "str" else ops[:4]:
                a, b = times[f"{ours}|{kind}|{op}"], times[f"{e.name}|{kind}|{op}"]
                med, lo, hi = median_ci([x / y for x, y in zip(a, b)])
                summary[f"ratio|{e.name}|{kind}|{op}"] = (med, lo, hi)
                cells.append(f"{med:.3f} [{lo:.3f}–{hi:.3f}]")
            lines.append(f"| {e.name} | " + " | ".join(cells) + " |")
        lines.append("")

    # The three conditions, checked from the numbers above.
    peers = [e.name for e in ents if not e.name.startswith("bloomlab")]
    batch_int = [summary[f"ratio|{p}|int|lookup, batch"] for p in peers]
    str_single = summary["ratio|rbloom|str|lookup, one at a time"]
    str_again = summary["ratio|rbloom|str|lookup, one at a time (the same str objects again)"]
    worst_fpr = max(v for k, v in summary.items() if k.endswith("|fpr"))
    lines += [
        "## Checks",
        "",
        f"- Batch lookups of int keys, {ours} ÷ each peer: "
        + ", ".join(f"{p} {m:.3f} [{lo:.3f}–{hi:.3f}]" for p, (m, lo, hi) in zip(peers, batch_int))
        + f": {'faster than every peer (every interval below 1)' if all(hi < 1 for _, _, hi in batch_int) else 'NOT faster than every peer'}.",
        f"- Single str lookups (fresh objects), ÷ rbloom: {str_single[0]:.3f} [{str_single[1]:.3f}–{str_single[2]:.3f}]: "
        + ("no slower (interval at or below 1)" if str_single[2] <= 1 else ("no slower at the median, the interval reaching above 1" if str_single[0] <= 1 else "slower")) + ".",
        f"- The same str objects probed again (rbloom's cached hash), ÷ rbloom: {str_again[0]:.3f} [{str_again[1]:.3f}–{str_again[2]:.3f}].",
        f"- Highest measured FPR of any row: {worst_fpr:.3%} ({'within' if worst_fpr <= 1.25 * target else 'NOT within'} 1.25× the {target:.0%} target).",
        "",
    ]
    (out / "bench.md").write_text("\n".join(lines))
    (out / "bench.json").write_text(
        json.dumps({"machine": info, "n": args.n, "rounds": args.rounds, "ns_per_key": times, "fpr": fpr_seen, "bits_per_item": bits}, indent=1)
    )
    print("\n".join(lines))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1_000_000, help="keys per filter (default 10^6)")
    p.add_argument("--rounds", type=int, default=11, help="interleaved rounds (default 11)")
    p.add_argument(
        "--slow-sample", type=int, default=20_000, help="keys timed per round for the pure-Python peers (default 2*10^4)"
    )
    p.add_argument("--no-install", action="store_true", help="run in this interpreter, installing nothing")
    args = p.parse_args()
    if not args.no_install:
        in_venv([a for a in sys.argv[1:]])
    run(args)


if __name__ == "__main__":
    main()
