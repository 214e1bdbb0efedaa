"""Validated catalog entries kept on disk, so a later process need not validate them again.

Validating one catalog row costs milliseconds on a fresh interpreter: pydantic builds the
entry type's core schema and validator on first use (and scans the installed packages
for pydantic plugins while it does), and every unit text is parsed. A book's first
formatted number waits for all of it. So the first time an entry is validated, its field
values are also written, as JSON, to the mlsys cache directory
(:func:`mlsys.core.units.cache_dir`, under ``catalog/entries/``); a later process
rebuilds the entry from that file with pydantic's ``model_construct``, which runs no
validator, and then lends the entry's sources to its Quantities exactly as validation
does (:func:`mlsys.core.provenance.register_entry`).

The cache can never change a value:

* an entry's file is named by a digest of its own data row (the TOML table as parsed),
  of the source of the code that validates a row (``mlsys/core/types.py`` and the three
  ``_types_*.py`` modules, ``precision.py``, ``units.py``, ``units_definitions.txt`` and
  the catalog package) and
  of the mlsys, pint, pydantic and Python versions, so an edited row, an edited validator
  or an upgrade is looked up under a new name and validated again;
* an entry is written only if decoding what was written gives back every field value of
  the freshly validated entry, equal and of the same type (a value JSON cannot hold
  exactly, a numpy array or an entry built outside the registries, is not cached and is
  validated every time);
* only rows that validated are written, so an invalid row raises its
  :class:`~mlsys.core.catalog._tables.CatalogError` on every read;
* a missing, read-only or corrupt cache, or an entry file that does not decode, falls
  back silently to validating the row. Deleting the directory is always safe.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

__all__ = ["cached_entry", "store_entry", "entries_dir"]

_PACKAGE = Path(__file__).resolve().parents[1]  # mlsys/core

# The code whose output an entry file stands for: a change to any of it is a new digest.
_CODE = (
    "types.py",
    "_types_systems.py",
    "_types_workloads.py",
    "_types_facilities.py",
    "precision.py",
    "units.py",
    "units_definitions.txt",
    "catalog/__init__.py",
    "catalog/registry.py",
    "catalog/_entries.py",
)


def _safe_key(key: str) -> bool:
    """A key that is also a file name: 1-100 ASCII letters, digits and ``_ . + -``."""
    bare = key.replace("_", "").replace(".", "").replace("+", "").replace("-", "")
    return 0 < len(key) <= 100 and key.isascii() and bare.isalnum()


@cache
def _code_digest() -> str:
    """Digest of the validating code and of the library versions (once per process)."""
    import pint
    import pydantic

    import mlsys

    h = hashlib.sha1()
    for name in _CODE:
        try:
            h.update((_PACKAGE / name).read_bytes())
        except OSError:
            h.update(f"missing {name}".encode())
        h.update(b"\0")
    versions = (mlsys.__version__, pint.__version__, pydantic.VERSION, sys.version)
    h.update("\0".join(map(str, versions)).encode())
    return h.hexdigest()


def entries_dir(filename: str) -> Path | None:
    """Directory of one data file's cached entries, or None when there is no cache.

    Parameters
    ----------
    filename : str
        Catalog data file name (``"accelerators.toml"``).

    Returns
    -------
    pathlib.Path or None
        ``<cache dir>/catalog/entries/<stem>``; the directory may not exist yet.
    """
    from mlsys.core.units import cache_dir

    root = cache_dir()
    return None if root is None else root / "catalog" / "entries" / Path(filename).stem


def _entry_file(filename: str, key: str, raw: Mapping[str, Any]) -> Path | None:
    """``<entries dir>/<key>-<digest of the row and the code>.json``, or None."""
    if not _safe_key(key):
        return None
    folder = entries_dir(filename)
    if folder is None:
        return None
    try:
        row = json.dumps(raw, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        return None  # a TOML date or time: no JSON form, validate this row every time
    digest = hashlib.sha1(f"{key}\0{row}\0{_code_digest()}".encode()).hexdigest()[:16]
    return folder / f"{key}-{digest}.json"


# -- encoding -----------------------------------------------------------------------
# Each field value is stored as [tag, payload]:
#   "v" a JSON scalar (None, bool, int, float, str)   "t" a tuple of scalars
#   "q" a Quantity: [magnitude, [[unit, exponent], ...]]
#   "d" a dict of str to encoded values               "p" provenance: {key: fields}
#   "r" another catalog entry: [registry name, canonical key]
_SCALARS = (type(None), bool, int, float, str)


class _UncacheableError(Exception):
    """A value the entry file cannot hold exactly: the entry is validated every time."""


def _plain(value: Any) -> Any:
    """A traced number (:mod:`mlsys.core.traced`) as the plain int or float it stands for."""
    plain = getattr(value, "_plain", None)
    return value if plain is None else plain()


def _encode(value: Any, refs: Mapping[type, tuple[str, Any]]) -> list[Any]:
    if type(value) in _SCALARS:
        return ["v", value]
    if hasattr(value, "_units") and hasattr(value, "_magnitude"):
        magnitude = _plain(value._magnitude)
        if type(magnitude) not in (int, float):
            raise _UncacheableError(value)
        return ["q", [magnitude, [[name, power] for name, power in value._units.items()]]]
    if type(value) is tuple and all(type(item) in _SCALARS for item in value):
        return ["t", list(value)]
    if type(value) is dict and all(type(k) is str for k in value):
        from mlsys.core.types import Provenance

        if value and all(type(item) is Provenance for item in value.values()):
            return ["p", {k: _encode_provenance(item) for k, item in value.items()}]
        return ["d", {k: _encode(item, refs) for k, item in value.items()}]
    for cls, (registry_name, registry) in refs.items():
        if type(value) is cls:
            name = getattr(value, "name", None)
            # Only an entry the registry itself holds: decoding must give the same object.
            if isinstance(name, str) and name in registry and registry.get(name) is value:
                return ["r", [registry_name, name]]
    raise _UncacheableError(value)


def _encode_provenance(item: Any) -> dict[str, Any]:
    fields = {name: getattr(item, name) for name in type(item).model_fields}
    if any(type(v) not in _SCALARS for v in fields.values()):
        raise _UncacheableError(item)
    return {"fields": fields, "set": sorted(item.model_fields_set)}


def _decode(tagged: list[Any], registries: Mapping[str, Any]) -> Any:
    tag, payload = tagged
    if tag == "v":
        return payload
    if tag == "q":
        from mlsys.core.units import get_registry

        magnitude, units = payload
        registry = get_registry()
        for name, _ in units:
            if registry.get_name(name) != name:  # a name this registry does not define
                raise ValueError(name)
        # A units container, not a unit text: no parsing (pint's parser is the slow part).
        container = registry.UnitsContainer({name: power for name, power in units})
        return registry.Quantity(magnitude, container)
    if tag == "t":
        return tuple(payload)
    if tag == "d":
        return {k: _decode(item, registries) for k, item in payload.items()}
    if tag == "p":
        from mlsys.core.types import Provenance

        return {
            k: Provenance.model_construct(_fields_set=set(item["set"]), **item["fields"])
            for k, item in payload.items()
        }
    if tag == "r":
        registry_name, name = payload
        return registries[registry_name].get(name)
    raise ValueError(f"unknown tag {tag!r}")


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same type, all the way down (what a cached entry must be)."""
    if type(a) is not type(b):
        return False
    if hasattr(a, "_units") and hasattr(a, "_magnitude"):
        ma, mb = _plain(a._magnitude), _plain(b._magnitude)
        return type(ma) is type(mb) and ma == mb and a._units == b._units
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and a != a:
        return b != b  # NaN
    return a is b or a == b


# -- the two doors ------------------------------------------------------------------
def cached_entry(
    filename: str,
    key: str,
    raw: Mapping[str, Any],
    classes: Mapping[str, type],
    registries: Mapping[str, Any],
) -> Any | None:
    """The entry ``key`` of ``filename`` rebuilt from its cache file, or None.

    Parameters
    ----------
    filename : str
        Catalog data file name.
    key : str
        Canonical entry name (the TOML table's key).
    raw : mapping
        The entry's data row as parsed (its digest names the cache file).
    classes : mapping of str to type
        The entry types this data file may produce, by class name.
    registries : mapping of str to Registry
        Registries that referenced entries are read from, by name.

    Returns
    -------
    entry or None
        The entry, with its Quantities carrying their catalog origin; None when there is
        no usable cache file (the caller validates the row then).
    """
    path = _entry_file(filename, key, raw)
    if path is None:
        return None
    try:
        stored = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None  # absent (the usual case on a first run) or cut short
    try:
        if stored["key"] != key:
            return None
        cls = classes[stored["cls"]]
        values = {name: _decode(v, registries) for name, v in stored["fields"].items()}
        if set(values) != set(cls.model_fields):
            return None
        entry = cls.model_construct(_fields_set=set(stored["set"]), **values)
    except Exception:
        return None  # anything unexpected in a cache file: validate the row instead
    if entry.provenance:
        from mlsys.core.provenance import register_entry

        register_entry(entry)  # what validation does (mlsys.core.types._Model.__init__)
    return entry


def store_entry(
    filename: str,
    key: str,
    raw: Mapping[str, Any],
    entry: Any,
    refs: Mapping[type, tuple[str, Any]],
    registries: Mapping[str, Any],
) -> bool:
    """Write a freshly validated entry's values to its cache file, if they round-trip.

    Parameters
    ----------
    filename : str
        Catalog data file name.
    key : str
        Canonical entry name.
    raw : mapping
        The data row the entry was validated from.
    entry : catalog model
        The validated entry.
    refs : mapping of type to (str, Registry)
        For a field holding another catalog entry: its type's registry and that
        registry's name.
    registries : mapping of str to Registry
        The same registries by name (to check the round trip).

    Returns
    -------
    bool
        Whether the file was written (never raises: the cache is an optimisation).
    """
    path = _entry_file(filename, key, raw)
    if path is None:
        return False
    try:
        fields = {name: entry.__dict__[name] for name in type(entry).model_fields}
        encoded = {name: _encode(value, refs) for name, value in fields.items()}
        record = {
            "key": key,
            "cls": type(entry).__name__,
            "set": sorted(entry.model_fields_set),
            "fields": encoded,
        }
        text = json.dumps(record, ensure_ascii=False, allow_nan=True)
        back = json.loads(text)["fields"]
        if not all(_same(_decode(back[n], registries), v) for n, v in fields.items()):
            return False  # JSON does not give this entry back exactly: never cache it
    except Exception:
        return False
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)  # atomic: a concurrent reader sees no file or the whole file
        for old in path.parent.glob(f"{key}-*.json"):
            if old != path and old.name.rsplit("-", 1)[0] == key:
                old.unlink(missing_ok=True)  # the entry as an earlier row or code made it
    except OSError:
        return False
    return True
