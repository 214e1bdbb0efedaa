"""pint's parse of the mlsys unit definitions, shipped with the package as data (JSON).

pint spends most of a registry's start-up (about 0.1 s of a fresh interpreter's first
number) parsing its definitions text. That text is fixed for a given pint and mlsys, so
the parse is shipped beside :mod:`mlsys.core.units` as ``units_parsed.json``: each of
pint's definition objects (units, prefixes, dimensions, groups, systems, contexts) as its
dataclass fields, and the digest of the definitions text and pint version it was made
from.

It is part of the package, read-only, and never written at run time. It is used only when
its digest is the digest of the definitions text this process would parse (pint's two
files as installed, mlsys's own definitions, the pint version); otherwise pint parses the
text. Loading it runs no code: JSON holds data alone, each object is rebuilt through its
own class's constructor (which validates it as parsing does), and only the pint
definition classes named in :data:`_CLASSES` can be built. A test checks that the shipped
file rebuilds exactly what pint parses.

Regenerate it after changing ``units_definitions.txt`` or upgrading pint::

    python -c "from mlsys.core import units; units._write_parsed()"
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from functools import lru_cache
from typing import Any

__all__ = ["digest", "encode", "decode", "load", "parse", "PATH"]

PATH = os.path.join(os.path.dirname(__file__), "units_parsed.json")
"""The shipped file."""

_FORMAT = 1  # of the encoding below; part of the digest

# The only classes a file may name: pint's definition objects and what they hold.
_CLASSES = (
    ("pint.facets.plain.definitions", ("DefaultsDefinition", "ScaleConverter")),
    ("pint.facets.nonmultiplicative.definitions", ("OffsetConverter", "LogarithmicConverter")),
    ("pint.facets.group.definitions", ("GroupDefinition",)),
    ("pint.facets.context.definitions", ("ContextDefinition",)),
    ("pint.facets.system.definitions", ("SystemDefinition",)),
    (
        "pint.delegates.txt_defparser.plain",
        ("PrefixDefinition", "UnitDefinition", "DerivedDimensionDefinition", "AliasDefinition"),
    ),
    ("pint.delegates.txt_defparser.context", ("ForwardRelation", "BidirectionalRelation")),
    ("pint.delegates.txt_defparser.system", ("BaseUnitRule",)),
)


@lru_cache(maxsize=1)
def _classes() -> dict[str, type]:
    import importlib

    out = {}
    for module, names in _CLASSES:
        loaded = importlib.import_module(module)
        for name in names:
            cls = getattr(loaded, name, None)
            if cls is not None and dataclasses.is_dataclass(cls):
                out[f"{module}.{name}"] = cls
    return out


def digest(text: str) -> str:
    """Digest of what a parse is made from: the definitions text and the pint version.

    Parameters
    ----------
    text : str
        The definitions text pint would parse (``mlsys.core.units._definitions_text``).

    Returns
    -------
    str
        Hexadecimal SHA-256.
    """
    import pint

    h = hashlib.sha256(f"{_FORMAT}\0{pint.__version__}\0".encode())
    h.update(text.encode("utf-8"))
    return h.hexdigest()


# -- encoding: every value as JSON data ------------------------------------------------
# A dataclass is {"c": class, "i": init fields, "s": fields set after __init__};
# a tuple ["t", items], a frozenset ["f", items], a dict ["d", [[key, value], ...]],
# a pint UnitsContainer ["u", [[name, exponent], ...]]; str, int, float, bool and None
# are themselves (a list is only ever one of the tagged forms above).
def _encode(value: Any) -> Any:
    if value is None or type(value) in (str, int, float, bool):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        cls = type(value)
        name = f"{cls.__module__}.{cls.__qualname__}"
        if _classes().get(name) is not cls:
            raise TypeError(f"not a pint definition class: {name}")
        fields = dataclasses.fields(value)
        return {
            "c": name,
            "i": {f.name: _encode(getattr(value, f.name)) for f in fields if f.init},
            "s": {f.name: _encode(getattr(value, f.name)) for f in fields if not f.init},
        }
    if type(value) is tuple:
        return ["t", [_encode(v) for v in value]]
    if type(value) is frozenset:
        return ["f", [_encode(v) for v in sorted(value, key=repr)]]
    if type(value) is dict:
        return ["d", [[_encode(k), _encode(v)] for k, v in value.items()]]
    from pint.util import UnitsContainer

    if type(value) is UnitsContainer:
        return ["u", [[k, _encode(v)] for k, v in value.items()]]
    raise TypeError(f"cannot encode {type(value).__name__}")


def _decode(data: Any) -> Any:
    if data is None or type(data) in (str, int, float, bool):
        return data
    if type(data) is dict:
        cls = _classes()[data["c"]]  # KeyError: a class this module does not allow
        obj = cls(**{k: _decode(v) for k, v in data["i"].items()})  # validates, as a parse
        for key, value in data["s"].items():
            object.__setattr__(obj, key, _decode(value))
        return obj
    tag, items = data
    if tag == "t":
        return tuple(_decode(v) for v in items)
    if tag == "f":
        return frozenset(_decode(v) for v in items)
    if tag == "d":
        return {_decode(k): _decode(v) for k, v in items}
    if tag == "u":
        from pint.util import UnitsContainer

        return UnitsContainer({str(k): _decode(v) for k, v in items}, non_int_type=float)
    raise ValueError(f"unknown tag {tag!r}")


def encode(definitions: list[Any], text: str) -> dict[str, Any]:
    """The file's content for ``definitions``, pint's parse of ``text``.

    Parameters
    ----------
    definitions : list
        pint's definition objects in the order its parser yields them.
    text : str
        The text they were parsed from.

    Returns
    -------
    dict
        JSON-ready: format, pint version, digest and the encoded definitions.
    """
    import pint

    return {
        "format": _FORMAT,
        "pint": pint.__version__,
        "digest": digest(text),
        "definitions": [_encode(d) for d in definitions],
    }


def decode(content: dict[str, Any]) -> list[Any]:
    """pint's definition objects from a file's content.

    Parameters
    ----------
    content : dict
        As :func:`encode` makes it.

    Returns
    -------
    list
        The definitions, in order.
    """
    return [_decode(d) for d in content["definitions"]]


def load(text: str) -> list[Any] | None:
    """The shipped parse of ``text``, or None when it is for another text or pint.

    Parameters
    ----------
    text : str
        The definitions text this process would parse.

    Returns
    -------
    list or None
        pint's definition objects (None: parse the text instead; never raises).
    """
    try:
        with open(PATH, "rb") as file:
            content = json.loads(file.read())
        if content.get("format") != _FORMAT or content.get("digest") != digest(text):
            return None
        return decode(content)
    except Exception:  # absent, or not what this pint can rebuild: parse the text
        return None


def parse(text: str) -> list[Any]:
    """pint's own parse of ``text``: its definition objects, in order.

    Parameters
    ----------
    text : str
        Definitions text.

    Returns
    -------
    list
    """
    import pint

    parser = pint.UnitRegistry(None)._def_parser
    return list(parser.iter_parsed_project(parser.parse_string(text)))
