"""Reading the catalog's TOML data files, from the package and nowhere else.

Each shipped data file is parsed once per process; no parsed copy is kept on disk, so
what a catalog entry holds is always what the file that ships with mlsys says.
"""

from __future__ import annotations

import os
import sys
from functools import cache
from typing import Any

from mlsys.core.errors import MlsysError

__all__ = ["CatalogError", "DATA_DIR", "load_table"]  # noqa: F822 - DATA_DIR: __getattr__

_DATA = os.path.join(os.path.dirname(__file__), "data")  # str: pathlib's import is not free


def __getattr__(name: str) -> Any:
    # DATA_DIR, the directory of the shipped TOML files (a pathlib.Path), is made when
    # first read: importing pathlib costs milliseconds of `import mlsys`.
    if name == "DATA_DIR":
        from pathlib import Path

        globals()["DATA_DIR"] = folder = Path(_DATA)
        return folder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
    folder = globals().get("DATA_DIR", _DATA)  # a test may point DATA_DIR elsewhere
    with open(os.path.join(folder, filename), "rb") as file:
        raw = file.read()
    # Imported on first use: the import alone costs milliseconds of a fresh interpreter.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib

    try:
        return tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise CatalogError(f"{filename}: {exc}") from None
