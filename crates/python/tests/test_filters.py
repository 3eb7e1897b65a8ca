"""Every filter: no false negatives, batch answers equal single ones, bytes and pickle round
trips, exact unions, removal, key encodings and the measured false-positive rate."""

import copy
import math
import pickle
import struct

import bloomlab
import numpy as np
import pytest
from hypothesis import given

from common import (
    INSERTABLE,
    OURS,
    REMOVABLE,
    UNION,
    encoding,
    non_members,
    unique_keys,
)

PROBES = non_members(300)


def answers(f, ks):
    return [k in f for k in ks]


@pytest.mark.parametrize("name", sorted(INSERTABLE))
@given(ks=unique_keys)
def test_no_false_negatives_and_batches_agree(name, ks):
    f = INSERTABLE[name](max(1, len(ks)))
    for k in ks[: len(ks) // 2]:
        f.add(k)
    f.update(ks[len(ks) // 2 :])
    assert all(k in f for k in ks)
    many = f.contains_many(ks)
    assert isinstance(many, np.ndarray) and many.dtype == np.bool_
    assert many.shape == (len(ks),) and bool(many.all())
    probes = ks + PROBES
    assert f.contains_many(probes).tolist() == answers(f, probes)


@pytest.mark.parametrize("name", sorted(INSERTABLE))
@given(ks=unique_keys)
def test_bytes_and_pickle_round_trips(name, ks):
    f = INSERTABLE[name](max(1, len(ks)))
    f.update(ks)
    data = f.to_bytes()
    assert isinstance(data, bytes)
    cls = type(f)
    probes = ks + PROBES
    for g in (
        cls.from_bytes(data),
        cls.from_bytes(bytearray(data)),
        pickle.loads(pickle.dumps(f)),
        copy.copy(f),
        copy.deepcopy(f),
    ):
        assert type(g) is cls
        assert g.to_bytes() == data
        assert answers(g, probes) == answers(f, probes)


@given(ks=unique_keys)
def test_ribbon_no_false_negatives_and_round_trip(ks):
    f = bloomlab.RibbonFilter.build(ks, 0.01)
    assert all(k in f for k in ks)
    assert bool(f.contains_many(ks).all())
    probes = ks + PROBES
    g = bloomlab.RibbonFilter.from_bytes(f.to_bytes())
    h = pickle.loads(pickle.dumps(f))
    assert answers(g, probes) == answers(f, probes) == answers(h, probes)
    assert f.contains_many(probes).tolist() == answers(f, probes)


def test_ribbon_takes_duplicates_and_numpy():
    ints = np.arange(5000, dtype=np.int64)
    f = bloomlab.RibbonFilter.build(np.concatenate([ints, ints[:100]]), 0.01)
    assert bool(f.contains_many(ints).all())
    assert not hasattr(f, "add")


@pytest.mark.parametrize("name", UNION)
@given(a=unique_keys, b=unique_keys)
def test_union_is_exact(name, a, b):
    n = max(1, len(a) + len(b))
    fa, fb, both = INSERTABLE[name](n), INSERTABLE[name](n), INSERTABLE[name](n)
    fa.update(a)
    fb.update(b)
    both.update(a + b)
    u = fa | fb
    assert all(k in u for k in a + b)
    probes = a + b + PROBES
    assert answers(u, probes) == answers(both, probes)
    fa |= fb
    assert answers(fa, probes) == answers(both, probes)


@pytest.mark.parametrize("name", UNION)
def test_union_of_differently_sized_filters_is_refused(name):
    small, large = INSERTABLE[name](100), INSERTABLE[name](100_000)
    with pytest.raises(ValueError):
        small | large
    with pytest.raises(TypeError):
        small | 3


@pytest.mark.parametrize("name", REMOVABLE)
@given(ks=unique_keys)
def test_remove(name, ks):
    f = INSERTABLE[name](max(1, len(ks)))
    f.update(ks)
    gone, kept = ks[::2], ks[1::2]
    for k in gone:
        f.remove(k)
    assert all(k in f for k in kept)
    assert len(f) == len(kept)


@pytest.mark.parametrize("name", REMOVABLE)
def test_remove_of_an_absent_key(name):
    f = INSERTABLE[name](1000)
    f.add("here")
    with pytest.raises(KeyError):
        f.remove("never added")
    assert f.discard("never added") is False
    assert f.discard("here") is True
    assert "here" not in f


@pytest.mark.parametrize("name", OURS)
@given(ks=unique_keys)
def test_ints_are_their_little_endian_bytes_and_str_its_utf8(name, ks):
    """bloomlab's own filters hash an int as its 8 little-endian bytes and a str as UTF-8,
    as the `bloomlab` command and the Rust `Key` impls do."""
    f = INSERTABLE[name](max(1, len(ks)))
    f.update(ks)
    assert all(encoding(k)[1] in f for k in ks)


def test_int_encoding_by_example():
    f = bloomlab.BlockedBloomFilter(100, 0.001)
    f.add(-1)
    assert b"\xff" * 8 in f and 2**64 - 1 in f
    f.add(258)
    assert struct.pack("<q", 258) in f and bytearray(struct.pack("<q", 258)) in f
    assert np.int64(258) in f and np.uint16(258) in f


NUMPY_CASES = [
    np.arange(-500, 500, dtype=np.int64),
    np.arange(0, 1000, dtype=np.int32),
    np.arange(0, 1000, dtype=np.uint64) + np.uint64(2**63),
    np.arange(0, 1000, dtype=np.int64).reshape(10, 100),
    np.array([b"a", b"bc", b"", b"d\x00e"], dtype="S4"),
    np.array(["a", "b\u00e9", ""], dtype="U3"),
    np.array([["a", "b"], ["c", "d"]], dtype="U1"),
    np.array([b"x", "y", 3], dtype=object),
]


@pytest.mark.parametrize("name", sorted(INSERTABLE))
@pytest.mark.parametrize("arr", NUMPY_CASES, ids=lambda a: str(a.dtype))
def test_numpy_arrays_are_their_elements(name, arr):
    f = INSERTABLE[name](2000)
    f.update(arr)
    flat = arr.ravel().tolist()
    assert all(k in f for k in flat)
    g = INSERTABLE[name](2000)
    g.update(flat)
    assert g.to_bytes() == f.to_bytes()
    probes = flat + PROBES
    assert f.contains_many(np.asarray(probes, dtype=object)).tolist() == answers(f, probes)
    assert f.contains_many(arr).tolist() == [True] * len(flat)


def test_empty_batches():
    f = bloomlab.BloomFilter(10, 0.01)
    f.update([])
    f.update(np.array([], dtype=np.int64))
    assert f.contains_many([]).tolist() == []
    assert f.contains_many(np.array([], dtype="S3")).shape == (0,)
    assert len(f) == 0


def test_generators_are_batches():
    f = bloomlab.BlockedBloomFilter(1000, 0.01)
    f.update(i for i in range(100))
    assert f.contains_many(iter(range(100))).all()


# Members and non-members of the false-positive measurement.
FPR_N = 20_000
FPR_PROBES = 100_000


@pytest.mark.parametrize("name", sorted(INSERTABLE) + ["RibbonFilter"])
def test_false_positive_rate_is_within_its_target(name):
    """At the design load, non-members test positive at about the 1 % target: the count of
    false positives among 10^5 probes stays below N·p + 5·sqrt(N·p) (a binomial upper tail of
    about 3·10^-7 if the filter meets the target)."""
    members = np.arange(FPR_N, dtype=np.int64)
    if name == "RibbonFilter":
        f = bloomlab.RibbonFilter.build(members, 0.01)
    else:
        f = INSERTABLE[name](FPR_N)
        f.update(members)
    assert bool(f.contains_many(members).all())
    probes = np.arange(2**40, 2**40 + FPR_PROBES, dtype=np.int64)
    fp = int(f.contains_many(probes).sum())
    mean = FPR_PROBES * 0.01
    assert fp <= mean + 5 * math.sqrt(mean), f"{name}: {fp} false positives of {FPR_PROBES}"
    assert fp > 0  # a filter that answers False to everything would pass the bound


@pytest.mark.parametrize("name", sorted(INSERTABLE))
def test_len_and_properties(name):
    f = INSERTABLE[name](1000)
    f.update(range(500))
    assert len(f) == 500
    assert f.size_in_bytes > 0
    assert 0.0 <= f.expected_fpr < 0.01
    assert f.bits_per_item > 0
    assert repr(f).startswith("bloomlab.")
    if hasattr(f, "estimated_count"):
        assert abs(f.estimated_count() - 500) < 50  # the fill estimate, within 10 %


def test_spark_version_and_count_after_bytes():
    f = bloomlab.SparkBloomFilter(1000, 0.03, version=1)
    assert f.version == 1 and bloomlab.SparkBloomFilter(10, 0.03).version == 2
    f.update(range(100))
    g = bloomlab.SparkBloomFilter.from_bytes(f.to_bytes())
    # Spark's form carries no count: a filter read from bytes starts from the estimate.
    assert g.version == 1 and len(g) == int(g.estimated_count())
    assert abs(g.estimated_count() - 100) < 10


def test_sbbf_parquet_section_round_trip():
    with pytest.raises(ValueError):
        bloomlab.Sbbf(1000, 0.01).to_parquet_bytes()  # 1344 B: not a power of two
    f = bloomlab.Sbbf.parquet_sized(1000, 0.01)
    assert f.size_in_bytes == 2048
    f.update(["a", 1, b"c"])
    g = bloomlab.Sbbf.from_parquet_bytes(f.to_parquet_bytes())
    assert all(k in g for k in ["a", 1, b"c"])
    assert g.to_parquet_bytes() == f.to_parquet_bytes()


def test_expandable_grows_under_its_bound():
    f = bloomlab.ExpandableFilter(0.01, start_capacity=16)
    f.update(range(50_000))
    assert len(f) == 50_000 and f.fpr_bound <= 0.01
    assert f.contains_many(np.arange(50_000)).all()


def test_gil_is_released_for_batches():
    """Batches on several threads give the same answers as on one (the GIL is released
    while the filter works, so this also exercises concurrent readers)."""
    import threading

    f = bloomlab.BlockedBloomFilter(200_000, 0.01)
    f.update(np.arange(200_000, dtype=np.int64))
    probes = np.arange(100_000, 300_000, dtype=np.int64)
    want = f.contains_many(probes)
    got = [None] * 4

    def work(i):
        got[i] = f.contains_many(probes)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(np.array_equal(g, want) for g in got)


def test_cuckoo_full_keeps_every_key():
    """A full cuckoo filter refuses the key with FullError and is unchanged: every key it
    accepted still answers True. `update` stops at the refused key."""
    f = bloomlab.CuckooFilter(100, 0.01)
    accepted = []
    with pytest.raises(bloomlab.FullError):
        for i in range(100_000):
            before = f.to_bytes()
            f.add(i)
            accepted.append(i)
    assert f.to_bytes() == before
    assert len(accepted) >= 100 and all(k in f for k in accepted)
    g = bloomlab.CuckooFilter(100, 0.01)
    with pytest.raises(bloomlab.FullError):
        g.update(range(100_000))
    assert len(g) == len(accepted) and all(k in g for k in accepted)
