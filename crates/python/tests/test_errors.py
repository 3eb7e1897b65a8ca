"""Bad input raises the documented exception, and no byte string crashes a decoder."""

import math
import random

import bloomlab
import numpy as np
import pytest

from common import INSERTABLE

SIZED = {
    "BlockedBloomFilter": bloomlab.BlockedBloomFilter,
    "BloomFilter": bloomlab.BloomFilter,
    "Sbbf": bloomlab.Sbbf,
    "CuckooFilter": bloomlab.CuckooFilter,
    "CountingBloomFilter": bloomlab.CountingBloomFilter,
    "ScalableBloomFilter": bloomlab.ScalableBloomFilter,
    "SparkBloomFilter": bloomlab.SparkBloomFilter,
    "GuavaBloomFilter": bloomlab.GuavaBloomFilter,
}

BAD_RATES = [float("nan"), float("inf"), -float("inf"), 0.0, 1.0, -0.5, 1.5]


@pytest.mark.parametrize("name", sorted(SIZED))
@pytest.mark.parametrize("n", [-1, -(2**70), 0, 2**64])
def test_bad_sizes_raise_value_error(name, n):
    if name == "GuavaBloomFilter" and n == 0:
        # Guava's create takes 0 expected insertions as 1; so does ours, byte for byte.
        assert SIZED[name](0, 0.01).to_bytes() == SIZED[name](1, 0.01).to_bytes()
        return
    with pytest.raises(ValueError):
        SIZED[name](n, 0.01)


@pytest.mark.parametrize("name", sorted(SIZED))
@pytest.mark.parametrize("fpr", BAD_RATES)
def test_bad_rates_raise_value_error(name, fpr):
    with pytest.raises(ValueError):
        SIZED[name](1000, fpr)


@pytest.mark.parametrize("fpr", BAD_RATES)
def test_bad_rates_of_the_growing_and_static_filters(fpr):
    with pytest.raises(ValueError):
        bloomlab.ExpandableFilter(fpr)
    with pytest.raises(ValueError):
        bloomlab.RibbonFilter.build([1, 2, 3], fpr)


@pytest.mark.parametrize("name", sorted(SIZED))
@pytest.mark.parametrize("n", [1.5, "10", None, True])
def test_sizes_of_another_type_raise_type_error(name, n):
    with pytest.raises(TypeError):
        SIZED[name](n, 0.01)


def test_other_bad_parameters():
    with pytest.raises(ValueError):
        bloomlab.SparkBloomFilter(100, 0.01, version=3)
    with pytest.raises(ValueError):
        bloomlab.ExpandableFilter(0.01, start_capacity=-5)
    with pytest.raises(TypeError):
        bloomlab.BloomFilter(100, "0.01")
    with pytest.raises(ValueError):
        bloomlab.BlockedBloomFilter(10, 1e-300)  # no 512-bit block reaches it


WRONG_KEYS = [1.5, None, True, [1], (b"a",), object(), {"a": 1}, np.float64(1.0), math.nan]


@pytest.mark.parametrize("name", sorted(INSERTABLE))
@pytest.mark.parametrize("key", WRONG_KEYS, ids=repr)
def test_wrong_key_types_raise_type_error(name, key):
    f = INSERTABLE[name](100)
    with pytest.raises(TypeError):
        f.add(key)
    with pytest.raises(TypeError):
        key in f
    with pytest.raises(TypeError):
        f.update([b"fine", key])
    with pytest.raises(TypeError):
        f.contains_many(["fine", key])
    assert len(f) == 0  # the keys are read before any is added


@pytest.mark.parametrize("key", [2**64, -(2**63) - 1, 10**30])
def test_ints_past_64_bits_raise_overflow_error(key):
    f = bloomlab.BloomFilter(100, 0.01)
    with pytest.raises(OverflowError):
        f.add(key)
    with pytest.raises(OverflowError):
        key in f


# What is no batch of keys: NumPy arrays of no key type, and a single key (which is not read
# as a batch of its bytes or characters).
NOT_BATCHES = [np.zeros(3), np.zeros(3, dtype=bool), np.zeros(3, dtype=complex), b"abc", "abc", bytearray(b"abc"), 5]


@pytest.mark.parametrize("batch", NOT_BATCHES, ids=lambda b: str(b.dtype) if isinstance(b, np.ndarray) else repr(b))
def test_what_is_no_batch_of_keys_raises_type_error(batch):
    f = bloomlab.BlockedBloomFilter(100, 0.01)
    with pytest.raises(TypeError):
        f.contains_many(batch)
    with pytest.raises(TypeError):
        f.update(batch)
    assert len(f) == 0


def test_ribbon_is_static():
    f = bloomlab.RibbonFilter.build([1], 0.01)
    with pytest.raises(AttributeError):
        f.add(2)


# Every decoder, with a valid input to mutate.
def _decoders():
    out = {}
    for name, make in sorted(INSERTABLE.items()):
        f = make(300)
        f.update(range(200))
        f.update(f"k{i}" for i in range(50))
        out[name] = (type(f).from_bytes, f.to_bytes())
    r = bloomlab.RibbonFilter.build(range(300), 0.01)
    out["RibbonFilter"] = (bloomlab.RibbonFilter.from_bytes, r.to_bytes())
    s = bloomlab.Sbbf.parquet_sized(300, 0.01)
    s.update(range(300))
    out["Sbbf.parquet"] = (bloomlab.Sbbf.from_parquet_bytes, s.to_parquet_bytes())
    return out


DECODERS = _decoders()


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_damaged_bytes_raise_decode_error(name):
    decode, good = DECODERS[name]
    for bad in (b"", good[:3], good[: len(good) // 2], good[:-1], b"\x00" * len(good), good + b"\x00"):
        with pytest.raises(bloomlab.DecodeError):
            decode(bad)
    assert issubclass(bloomlab.DecodeError, ValueError)
    with pytest.raises(TypeError):
        decode("not bytes")


@pytest.mark.parametrize(
    "name", [n for n in sorted(DECODERS) if not n.startswith(("Spark", "Guava", "Sbbf.parquet"))]
)
def test_a_flipped_payload_bit_is_caught_by_the_checksum(name):
    """bloomlab's own envelope is checksummed: any one bit flipped in it is refused (the
    JVM's and Parquet's forms carry no checksum, so a flipped bit there is another valid
    filter)."""
    decode, good = DECODERS[name]
    rng = random.Random(7)
    for _ in range(200):
        i = rng.randrange(len(good))
        bad = bytearray(good)
        bad[i] ^= 1 << rng.randrange(8)
        with pytest.raises(bloomlab.DecodeError):
            decode(bytes(bad))


def _mutate(rng, good):
    b = bytearray(good)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(6)
        if op == 0 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif op == 1 and b:
            del b[rng.randrange(len(b)) :]
        elif op == 2:
            at = rng.randrange(len(b) + 1)
            b[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
        elif op == 3 and len(b) >= 8:
            # A length or count field: overwrite an aligned word with an extreme value.
            at = rng.randrange(0, len(b) - 3)
            b[at : at + 4] = rng.choice([b"\xff\xff\xff\xff", b"\x7f\xff\xff\xff", b"\x00\x00\x00\x00", b"\x80\x00\x00\x00"])
        elif op == 4 and b:
            del b[rng.randrange(len(b))]
        else:
            b = bytearray(rng.randbytes(rng.randint(0, 64)))
    return bytes(b)


MUTATIONS = 300


@pytest.mark.parametrize("name", sorted(DECODERS))
def test_mutated_bytes_never_crash(name):
    """300 mutated byte strings per decoder (3600 in all): each decodes to a filter that
    answers and writes itself, or raises DecodeError/ValueError; nothing else (a Rust panic
    would surface as pyo3_runtime.PanicException, a BaseException, and fail the test)."""
    decode, good = DECODERS[name]
    rng = random.Random(sum(name.encode()))
    decoded = refused = 0
    for _ in range(MUTATIONS):
        bad = _mutate(rng, good)
        try:
            f = decode(bad)
        except ValueError:
            refused += 1
            continue
        decoded += 1
        f.contains_many([0, 1, "k0", b"x"])
        f.to_bytes()
        len(f)
    assert decoded + refused == MUTATIONS and refused > 0
