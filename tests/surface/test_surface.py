"""Pin the public surface that books import.

``surface.txt`` lists every public name of the book-facing modules. Removing a name (or
renaming it without a deprecation alias) fails here until the name is deliberately moved
to the module's ``_DEPRECATED`` map; adding one fails until it is added to the list, so
every change of the surface is a reviewed change of this file.

Regenerate after a deliberate change with::

    python tests/surface/test_surface.py
"""

from __future__ import annotations

import importlib
import warnings
from pathlib import Path

import pytest

SURFACE_FILE = Path(__file__).with_name("surface.txt")
MODULES = ("mlsys", "mlsys.constants", "mlsys.formulas", "mlsys.formatting", "mlsys.hardware")


def _current() -> dict[str, set[str]]:
    return {m: set(importlib.import_module(m).__all__) for m in MODULES}


def _pinned() -> dict[str, set[str]]:
    pinned: dict[str, set[str]] = {m: set() for m in MODULES}
    for line in SURFACE_FILE.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            module, name = line.split(":")
            pinned[module].add(name)
    return pinned


def _deprecated(module: str) -> dict[str, str]:
    return getattr(importlib.import_module(module), "_DEPRECATED", {})


def write_surface_file() -> None:
    """Rewrite surface.txt from the installed package (a deliberate surface change)."""
    lines = ["# Public names of the book-facing modules (see test_surface.py)."]
    for module, names in _current().items():
        lines += [f"{module}:{name}" for name in sorted(names)]
        lines += [f"{module}:{name}" for name in sorted(_deprecated(module))]
    SURFACE_FILE.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("module", MODULES)
def test_no_pinned_name_disappears(module):
    current = _current()[module] | set(_deprecated(module))
    missing = sorted(_pinned()[module] - current)
    assert not missing, (
        f"{module} lost {missing}: keep them, or add them to {module}._DEPRECATED "
        "with their new spelling"
    )


@pytest.mark.parametrize("module", MODULES)
def test_new_names_are_pinned(module):
    new = sorted(_current()[module] - _pinned()[module])
    assert not new, f"{module} gained {new}: add them to tests/surface/surface.txt"


@pytest.mark.parametrize("module", MODULES)
def test_every_name_resolves(module):
    mod = importlib.import_module(module)
    for name in sorted(_pinned()[module]):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            assert getattr(mod, name) is not None, f"{module}.{name}"


@pytest.mark.parametrize("module", MODULES)
def test_deprecated_names_warn_with_new_spelling(module):
    mod = importlib.import_module(module)
    for old, new in _deprecated(module).items():
        with pytest.warns(DeprecationWarning, match=new):
            getattr(mod, old)


if __name__ == "__main__":
    write_surface_file()
    print(f"wrote {SURFACE_FILE}")
