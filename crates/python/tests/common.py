"""Keys and filter factories shared by the tests."""

import struct

import bloomlab
from hypothesis import strategies as st

# Every class that takes `add`, with a constructor sized for `n` keys at 1 %.
INSERTABLE = {
    "BlockedBloomFilter": lambda n: bloomlab.BlockedBloomFilter(n, 0.01),
    "BloomFilter": lambda n: bloomlab.BloomFilter(n, 0.01),
    "Sbbf": lambda n: bloomlab.Sbbf(n, 0.01),
    # A small cuckoo table can refuse a key before it holds n (9 keys in a table sized for 9
    # filled 8 of its 12 slots): the properties size it for twice the keys;
    # test_filters.test_cuckoo_full_keeps_every_key checks what happens when it is full.
    "CuckooFilter": lambda n: bloomlab.CuckooFilter(2 * n, 0.01),
    "CountingBloomFilter": lambda n: bloomlab.CountingBloomFilter(n, 0.01),
    "ExpandableFilter": lambda n: bloomlab.ExpandableFilter(0.01),
    "ScalableBloomFilter": lambda n: bloomlab.ScalableBloomFilter(max(1, n // 8), 0.01),
    "SparkBloomFilter-v1": lambda n: bloomlab.SparkBloomFilter(n, 0.01, version=1),
    "SparkBloomFilter-v2": lambda n: bloomlab.SparkBloomFilter(n, 0.01, version=2),
    "GuavaBloomFilter": lambda n: bloomlab.GuavaBloomFilter(n, 0.01),
}

# The classes whose `|` is an exact union.
UNION = [
    "BlockedBloomFilter",
    "BloomFilter",
    "Sbbf",
    "SparkBloomFilter-v1",
    "SparkBloomFilter-v2",
    "GuavaBloomFilter",
]

REMOVABLE = ["CuckooFilter", "CountingBloomFilter", "ExpandableFilter"]

# bloomlab's own formats: hash-stable, int keys as their 8 little-endian bytes.
OURS = [
    "BlockedBloomFilter",
    "BloomFilter",
    "Sbbf",
    "CuckooFilter",
    "CountingBloomFilter",
    "ExpandableFilter",
    "ScalableBloomFilter",
]

I64_MIN, U64_MAX = -(2**63), 2**64 - 1

keys = st.one_of(
    st.binary(max_size=40),
    st.text(max_size=20),
    st.integers(min_value=I64_MIN, max_value=U64_MAX),
)


def encoding(k):
    """The bytes bloomlab's own filters hash for key `k` (and its kind, for the JVM's)."""
    if isinstance(k, bytes):
        return ("b", k)
    if isinstance(k, str):
        return ("s", k.encode("utf-8"))
    return ("i", struct.pack("<Q", k & U64_MAX))


unique_keys = st.lists(keys, max_size=200, unique_by=encoding)


def non_members(count, salt="absent"):
    """Keys no test inserts (the tests insert no str starting with a NUL and this salt)."""
    return [f"\0{salt}-{i}" for i in range(count)]
