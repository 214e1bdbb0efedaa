"""Reading the catalog's TOML data files, with a parsed copy cached on disk.

``tomllib`` is pure Python: parsing ``accelerators.toml`` (about 40 kB) takes several
milliseconds, and its import a few more, on the path of a book's first formatted number.
The parsed table is therefore also written as JSON (which the C-accelerated ``json``
module reads some twenty times faster) to the mlsys cache directory
(:func:`mlsys.core.units.cache_dir`), named by a SHA-1 digest of the TOML bytes, so an
edited data file can never be read from a stale copy. The cache is an optimisation only:
a table JSON cannot hold exactly (a TOML date), a missing or read-only cache directory,
or an unreadable cache file all fall back, silently, to parsing the TOML.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from functools import cache
from pathlib import Path
from typing import Any

from mlsys.core.errors import MlsysError

__all__ = ["CatalogError", "DATA_DIR", "load_table"]

DATA_DIR = Path(__file__).with_name("data")
"""Directory of the shipped TOML files (inside the installed package)."""


class CatalogError(MlsysError):
    """A shipped catalog file is malformed (a bug in mlsys, not in the caller's code)."""


@cache
def load_table(filename: str) -> dict[str, dict[str, Any]]:
    """Parse one catalog data file (from the on-disk cache when its bytes are unchanged).

    Parameters
    ----------
    filename : str
        File name inside ``mlsys/core/catalog/data`` (e.g. ``"accelerators.toml"``).

    Returns
    -------
    dict
        Entry name to raw table, in file order. The same object on every call: callers
        copy before they change it.

    Raises
    ------
    CatalogError
        When the file is not valid TOML.
    """
    raw = (DATA_DIR / filename).read_bytes()
    digest = hashlib.sha1(raw).hexdigest()[:16]
    cached = _cache_file(filename, digest)
    if cached is not None:
        try:
            return json.loads(cached.read_bytes())
        except (OSError, ValueError):
            pass  # absent, or cut short by a crash: parse the TOML
    table = _parse(filename, raw)
    if cached is not None:
        _store(cached, table)
    return table


def _parse(filename: str, raw: bytes) -> dict[str, dict[str, Any]]:
    # Imported only when the cache misses: the import alone costs milliseconds.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    try:
        return tomllib.loads(raw.decode("utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{filename}: {exc}") from None


def _cache_file(filename: str, digest: str) -> Path | None:
    from mlsys.core.units import cache_dir

    root = cache_dir()
    return None if root is None else root / "catalog" / f"{Path(filename).stem}-{digest}.json"


def _store(path: Path, table: dict[str, Any]) -> None:
    """Write ``table`` as JSON if JSON gives back exactly the same table; never raise."""
    try:
        text = json.dumps(table, ensure_ascii=False)
    except (TypeError, ValueError):
        return  # a TOML date or time: no JSON form, keep parsing this file
    if json.loads(text) != table:
        return  # defensive: only an exact round trip may stand in for the TOML
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)  # atomic: a concurrent reader sees the old file or the new
        for old in path.parent.glob(f"{path.name.rsplit('-', 1)[0]}-*.json"):
            if old != path:
                old.unlink(missing_ok=True)  # copies of earlier versions of this file
    except OSError:
        pass
