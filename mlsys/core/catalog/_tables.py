"""Reading the catalog's TOML data files, from the package and nowhere else.

Each shipped data file is parsed once per process; no parsed copy is kept on disk, so
what a catalog entry holds is always what the file that ships with mlsys says.
"""

from __future__ import annotations

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
    """Parse one catalog data file of the package (once per process).

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
    # Imported on first use: the import alone costs milliseconds of a fresh interpreter.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CatalogError(f"{filename}: {exc}") from None
