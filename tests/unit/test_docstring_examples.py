"""Every docstring example in mlsys runs and prints what it says.

The examples carry numbers (a formula's worked case, a catalog value); run by doctest
they are tests of their own, so a change that moves a number must move its example.
Modules that need an optional dependency that is absent (the emulator's torch) are
skipped.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import mlsys

_FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _modules() -> list[str]:
    return sorted(info.name for info in pkgutil.walk_packages(mlsys.__path__, "mlsys."))


@pytest.mark.parametrize("name", _modules())
def test_examples(name: str) -> None:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != "torch":
            raise
        pytest.skip("needs torch (the emulator's optional dependency)")
    result = doctest.testmod(module, optionflags=_FLAGS, report=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples fail in {name}"


def test_the_examples_are_many() -> None:
    # a walk that silently found nothing would pass every test above
    attempted = sum(
        doctest.testmod(importlib.import_module(n), optionflags=_FLAGS, report=False).attempted
        for n in ("mlsys.core.formulas.collectives", "mlsys.core.formulas.peer_allreduce")
    )
    assert attempted >= 20
