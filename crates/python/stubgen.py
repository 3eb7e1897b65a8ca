"""Write the native module's type stubs, ``python/bloomlab/_bloomlab.pyi``, from the built module.

The variants' classes come from the Rust workspace's one list of variants, each with the
methods its variant supports; so the classes' stubs are not written class by class but
generated: one stub per method name (``METHODS``), one annotation per constructor parameter
(``PARAMS``), and, for each class of the module's ``__all__``, the methods it has. A group of
methods that several classes share is stubbed once, in a base class of the stubs (``BASES``),
and each class derives from every group it has whole. The part of
the file above ``MARKER`` (the key types, the exceptions, the private functions) is written by
hand and kept as it is. ``tests/test_stubs.py`` fails
when the committed file differs from what this writes.

    python crates/python/stubgen.py            # print the stubs
    python crates/python/stubgen.py --write    # rewrite python/bloomlab/_bloomlab.pyi
"""

import inspect
import sys
from pathlib import Path

# The stubs' own part, written by hand, ends at this line; what follows it is generated.
MARKER = "# Generated from here on by crates/python/stubgen.py, from the built module: do not edit.\n"

# Every method a class may have, in the order the stubs list them.
METHODS = {
    "build": "@classmethod\ndef build(cls, keys: Keys, fpr: float) -> Self: ...",
    "parquet_sized": "@classmethod\ndef parquet_sized(cls, n: int, fpr: float) -> Self: ...",
    "__contains__": "def __contains__(self, key: Key) -> bool: ...",
    "contains_many": "def contains_many(self, keys: Keys) -> npt.NDArray[np.bool_]: ...",
    "to_bytes": "def to_bytes(self) -> bytes: ...",
    "from_bytes": "@classmethod\ndef from_bytes(cls, data: Union[bytes, bytearray]) -> Self: ...",
    "to_parquet_bytes": "def to_parquet_bytes(self) -> bytes: ...",
    "from_parquet_bytes": "@classmethod\ndef from_parquet_bytes(cls, data: Union[bytes, bytearray]) -> Self: ...",
    "__reduce__": "def __reduce__(self) -> Any: ...",
    "__copy__": "def __copy__(self) -> Self: ...",
    "__deepcopy__": "def __deepcopy__(self, memo: Any) -> Self: ...",
    "__len__": "def __len__(self) -> int: ...",
    "size_in_bytes": "@property\ndef size_in_bytes(self) -> int: ...",
    "bits_per_item": "@property\ndef bits_per_item(self) -> float: ...",
    "expected_fpr": "@property\ndef expected_fpr(self) -> float: ...",
    "add": "def add(self, key: Key) -> None: ...",
    "update": "def update(self, keys: Keys) -> None: ...",
    "remove": "def remove(self, key: Key) -> None: ...",
    "discard": "def discard(self, key: Key) -> bool: ...",
    "__or__": "def __or__(self, other: Self) -> Self: ...",
    "__ior__": "def __ior__(self, other: Self) -> Self: ...",
    "estimated_count": "def estimated_count(self) -> float: ...",
    "version": "@property\ndef version(self) -> int: ...",
    "strategy": "@property\ndef strategy(self) -> str: ...",
    "hashes": "@property\ndef hashes(self) -> int: ...",
    "bit_size": "@property\ndef bit_size(self) -> int: ...",
    "fill_ratio": "@property\ndef fill_ratio(self) -> float: ...",
    "load": "@property\ndef load(self) -> float: ...",
    "fpr_bound": "@property\ndef fpr_bound(self) -> float: ...",
    "stages": "@property\ndef stages(self) -> int: ...",
}

# Groups of methods that several classes share, each stubbed once in a base class that exists
# only in the stubs (at run time each class has its own methods). A class derives from every
# group it has whole; the rest of its methods are stubbed in its own body.
BASES = {
    "_Filter": [
        "__contains__",
        "contains_many",
        "to_bytes",
        "from_bytes",
        "__reduce__",
        "__copy__",
        "__deepcopy__",
        "__len__",
        "size_in_bytes",
        "bits_per_item",
        "expected_fpr",
    ],
    "_Inserts": ["add", "update"],
    "_Deletes": ["remove", "discard"],
    "_Unions": ["__or__", "__ior__"],
    "_Counts": ["estimated_count"],
    "_Probes": ["hashes"],
    "_Fills": ["fill_ratio"],
    "_BitArray": ["bit_size"],
}

# The type of each constructor parameter, by name.
PARAMS = {
    "n": "int",
    "initial_capacity": "int",
    "fpr": "float",
    "start_capacity": "Optional[int]",
    "version": "int",
}


def constructor(cls):
    """``__init__``'s stub from the class's signature; none for a class that has no
    constructor (its signature is the bare ``(*args, **kwargs)``)."""
    params = inspect.signature(cls).parameters.values()
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        return []
    args = []
    for p in params:
        if p.name not in PARAMS:
            raise SystemExit(f"stubgen.py: no type for {cls.__name__}'s parameter {p.name!r}")
        default = "" if p.default is p.empty else f" = {p.default!r}"
        args.append(f"{p.name}: {PARAMS[p.name]}{default}")
    return [f"def __init__(self, {', '.join(args)}) -> None: ..."]


def stub(name, bases, body):
    """A class's stub: ``class name(bases):`` and the stubs of ``body``, indented."""
    head = f"class {name}({', '.join(bases)}):" if bases else f"class {name}:"
    lines = "\n".join(body or ["..."]).splitlines()
    return head + "\n" + "".join(f"    {line}\n" for line in lines)


def base_stubs():
    """The base classes of ``BASES``, each with its methods' stubs in ``METHODS``'s order."""
    unknown = [m for methods in BASES.values() for m in methods if m not in METHODS]
    if unknown:
        raise SystemExit(f"stubgen.py: BASES names {unknown[0]!r}, which has no stub in METHODS")
    return [stub(base, [], [s for m, s in METHODS.items() if m in methods]) for base, methods in BASES.items()]


def class_stub(cls):
    attrs = vars(cls)
    missing = [a for a in attrs if not a.startswith("_") and a not in METHODS]
    if missing:
        raise SystemExit(f"stubgen.py: no stub for {cls.__name__}.{missing[0]}: add it to METHODS")
    bases = [base for base, methods in BASES.items() if all(m in attrs for m in methods)]
    inherited = {m for base in bases for m in BASES[base]}
    own = [s for name, s in METHODS.items() if name in attrs and name not in inherited]
    return stub(cls.__name__, bases, constructor(cls) + own)


def render(module, committed):
    """The stubs of ``module`` (``bloomlab._bloomlab``), as the text of the ``.pyi``: the
    hand-written part of ``committed`` (the current file), then the generated part."""
    if MARKER not in committed:
        raise SystemExit(f"stubgen.py: the stubs have no line {MARKER.strip()!r}")
    header = committed[: committed.index(MARKER) + len(MARKER)]
    names = list(module.__all__)
    classes = [
        getattr(module, n)
        for n in names
        if isinstance(getattr(module, n), type) and not issubclass(getattr(module, n), BaseException)
    ]
    listed = "".join(f'    "{n}",\n' for n in names)
    parts = [f"\n__all__ = [\n{listed}]\n"] + base_stubs() + [class_stub(cls) for cls in classes]
    return header + "\n".join(parts)


STUBS = Path(__file__).resolve().parent / "python" / "bloomlab" / "_bloomlab.pyi"

if __name__ == "__main__":
    from bloomlab import _bloomlab

    text = render(_bloomlab, STUBS.read_text())
    if sys.argv[1:] == ["--write"]:
        STUBS.write_text(text)
    else:
        sys.stdout.write(text)
