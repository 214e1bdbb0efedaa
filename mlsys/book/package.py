"""The book's package ``mlsysim`` as one module: what a migrated ``import mlsysim`` binds.

A chapter that writes ``import mlsysim`` then reads names off the package:
``mlsysim.Hardware.Cloud.H100``, ``mlsysim.ServingModel()``, ``mlsysim.fmt(...)``.
``mlsys migrate`` rewrites that line to ``import mlsys.book.package as mlsysim``, and this
module answers each attribute exactly as the rewrite answers ``from mlsysim import NAME``
(:mod:`mlsys.book.rewrite`):

- a name of :data:`~mlsys.book.rewrite.NAME_MAP` (the book's solver classes) comes from
  the module serving it under the book's call shapes (:mod:`mlsys.compat.solvers`), so
  ``mlsysim.ServingModel().solve(model, hardware, seq_len=2048)`` runs as the chapter
  wrote it;
- a submodule of the book's package (:data:`~mlsys.book.rewrite.SUBMODULES`,
  ``mlsysim.physics``, ``mlsysim.core``) is the mlsys module serving it, so
  ``mlsysim.core.constants.GB`` reads :mod:`mlsys.constants`;
- every other name is mlsys's top-level name.

Examples
--------
>>> import mlsys.book.package as mlsysim
>>> mlsysim.ServingModel.__module__
'mlsys.compat.solvers'
>>> mlsysim.Hardware.Cloud.H100.memory.bandwidth
<Quantity(3.35, 'terabyte / second')>
"""

from __future__ import annotations

import importlib
from typing import Any

from mlsys.book.rewrite import NAME_MAP, SUBMODULES

__all__: list[str] = []


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    submodule = SUBMODULES["mlsysim"].get(name)
    if submodule is not None:
        return importlib.import_module(submodule)
    module = importlib.import_module(NAME_MAP.get(name, "mlsys"))
    return getattr(module, name)


def __dir__() -> list[str]:
    import mlsys

    return sorted({*dir(mlsys), *NAME_MAP, *SUBMODULES["mlsysim"]})
