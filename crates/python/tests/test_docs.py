"""The examples in the docstrings run and give what they show; every public name is
documented and in the type stubs."""

import ast
import doctest
from pathlib import Path

import bloomlab
import pytest

PUBLIC = [n for n in bloomlab.__all__ if n != "parquet"]
STUBS = Path(bloomlab.__file__).with_name("_bloomlab.pyi")


def run_examples(obj, name):
    parser = doctest.DocTestParser()
    test = parser.get_doctest(obj.__doc__ or "", {}, name, None, 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    runner.run(test)
    return len(test.examples), runner.failures


@pytest.mark.parametrize("name", PUBLIC + ["bloomlab"])
def test_examples_run(name):
    obj = bloomlab if name == "bloomlab" else getattr(bloomlab, name)
    assert obj.__doc__ and len(obj.__doc__) > 40
    if name in ("DecodeError", "FullError"):
        return
    examples, failures = run_examples(obj, name)
    assert examples > 0 and failures == 0


def test_parquet_functions_are_documented():
    for f in (bloomlab.parquet.contains, bloomlab.parquet.inspect):
        assert "row group" in f.__doc__


def test_every_method_has_a_docstring():
    for name in PUBLIC:
        cls = getattr(bloomlab, name)
        for attr, value in vars(cls).items():
            if attr.startswith("_") or not callable(value) and not isinstance(value, property):
                continue
            assert getattr(value, "__doc__", None), f"{name}.{attr}"


def test_stubs_name_every_class_and_method():
    tree = ast.parse(STUBS.read_text())
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}

    def stubbed(name):
        """The methods stubbed in the class's body and in those of the stubs' classes it
        derives from."""
        node = classes[name]
        own = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
        bases = [b.id for b in node.bases if isinstance(b, ast.Name) and b.id in classes]
        return own.union(*map(stubbed, bases))

    for name in PUBLIC:
        assert name in classes, name
        cls = getattr(bloomlab, name)
        public = {a for a in vars(cls) if not a.startswith("_") or a in ("__contains__", "__len__", "__or__")}
        assert public <= stubbed(name), (name, public - stubbed(name))
    assert (Path(bloomlab.__file__).with_name("py.typed")).exists()
