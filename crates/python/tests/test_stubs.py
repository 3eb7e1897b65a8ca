"""The committed type stubs are the ones `stubgen.py` writes from the built module, and each
class has the methods its variant's declaration says it supports."""

import inspect
import sys
from pathlib import Path

import bloomlab
import pytest
from bloomlab import _bloomlab

from common import INSERTABLE, OURS, REMOVABLE, UNION

CRATE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(CRATE))
import stubgen  # noqa: E402

# The classes of the workspace's own variants.
VARIANTS = OURS + ["RibbonFilter"]


def test_committed_stubs_are_the_generated_ones():
    committed = stubgen.STUBS.read_text()
    assert stubgen.render(_bloomlab, committed) == committed, "run: python crates/python/stubgen.py --write"


def test_the_hand_written_part_is_kept_and_needs_its_marker():
    head = "Key = int\n" + stubgen.MARKER
    assert stubgen.render(_bloomlab, head + "class Stale: ...\n").startswith(head + "\n__all__ = [")
    with pytest.raises(SystemExit, match="stubs have no line"):
        stubgen.render(_bloomlab, "Key = int\n")


def test_a_method_without_a_stub_is_refused():
    class Odd:
        def __init__(self, n, fpr):
            pass

        def mystery(self):
            pass

    with pytest.raises(SystemExit, match="Odd.mystery"):
        stubgen.class_stub(Odd)


def test_the_package_exports_every_class_and_no_private_function():
    exported = set(_bloomlab.__all__)
    assert set(VARIANTS) | {"SparkBloomFilter", "GuavaBloomFilter", "DecodeError", "FullError"} <= exported
    assert all(isinstance(getattr(_bloomlab, n), type) for n in exported)
    assert exported | {"parquet"} == set(bloomlab.__all__)
    assert all(hasattr(bloomlab, n) for n in bloomlab.__all__)


@pytest.mark.parametrize("name", VARIANTS)
def test_the_methods_follow_the_variant(name):
    cls = getattr(bloomlab, name)
    union = name in UNION
    assert hasattr(cls, "add") == hasattr(cls, "update") == (name != "RibbonFilter")
    assert hasattr(cls, "build") == (name == "RibbonFilter")
    assert hasattr(cls, "remove") == hasattr(cls, "discard") == (name in REMOVABLE)
    # (`hasattr(cls, "__or__")` would find `type.__or__`, the metaclass's `X | Y`.)
    assert ("__or__" in vars(cls)) == ("__ior__" in vars(cls)) == union
    assert hasattr(cls, "estimated_count") == (name in ("BloomFilter", "BlockedBloomFilter", "Sbbf", "CountingBloomFilter"))


@pytest.mark.parametrize("name", ["ScalableBloomFilter", "CuckooFilter", "RibbonFilter"])
def test_no_union_is_a_type_error(name):
    f = INSERTABLE[name](10) if name in INSERTABLE else bloomlab.RibbonFilter.build([1], 0.01)
    with pytest.raises(TypeError):
        f | f
    with pytest.raises(TypeError):
        f |= f


def test_constructor_signatures():
    sig = {n: str(inspect.signature(getattr(bloomlab, n))) for n in VARIANTS}
    assert sig["BloomFilter"] == sig["CuckooFilter"] == "(n, fpr)"
    assert sig["ScalableBloomFilter"] == "(initial_capacity, fpr)"
    assert sig["ExpandableFilter"] == "(fpr, start_capacity=None)"
    assert bloomlab.BloomFilter(n=100, fpr=0.01).to_bytes() == bloomlab.BloomFilter(100, 0.01).to_bytes()
    s = bloomlab.ScalableBloomFilter(fpr=0.01, initial_capacity=10)
    assert s.to_bytes() == bloomlab.ScalableBloomFilter(10, 0.01).to_bytes()
    e = bloomlab.ExpandableFilter(0.01, start_capacity=1000)
    assert e.size_in_bytes > bloomlab.ExpandableFilter(fpr=0.01).size_in_bytes


@pytest.mark.parametrize(
    "call",
    [
        lambda: bloomlab.BloomFilter(100),
        lambda: bloomlab.BloomFilter(100, 0.01, 3),
        lambda: bloomlab.BloomFilter(100, 0.01, k=3),
        lambda: bloomlab.CuckooFilter(100, fpr=0.01, n=5),
        lambda: bloomlab.ExpandableFilter(),
        lambda: bloomlab.ScalableBloomFilter(n=10, fpr=0.01),
    ],
)
def test_a_wrong_call_is_a_type_error(call):
    with pytest.raises(TypeError):
        call()


def test_a_static_filter_has_no_constructor():
    with pytest.raises(TypeError, match=r"RibbonFilter.build\(keys, fpr\)"):
        bloomlab.RibbonFilter([1, 2], 0.01)


@pytest.mark.parametrize("name", ["CountingBloomFilter", "CuckooFilter", "ExpandableFilter"])
def test_fill_ratio_of_the_filters_that_gained_it(name):
    f = INSERTABLE[name](1000)
    assert f.fill_ratio == 0.0
    f.update(range(500))
    assert 0.0 < f.fill_ratio <= 1.0
    if name == "CuckooFilter":
        assert f.fill_ratio == f.load


def test_hashes_of_the_filters_that_gained_it():
    assert bloomlab.Sbbf(1000, 0.01).hashes == 8  # one bit in each of a block's 8 words
    s = bloomlab.ScalableBloomFilter(100, 0.01)
    assert s.hashes >= 1
    assert not hasattr(bloomlab.CuckooFilter, "hashes")  # fingerprint bits, not probes
    assert not hasattr(bloomlab.ScalableBloomFilter, "fill_ratio")  # one fill per stage
