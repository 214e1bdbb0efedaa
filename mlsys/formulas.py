"""Book-facing formulas: stable names that chapter code imports.

Re-exports every formula of :mod:`mlsys.core.formulas` (pure functions on floats and
numpy arrays in SI units, each citing its source). Older ``calc_*`` spellings keep
working through adapters that accept and return Quantities, with a DeprecationWarning
naming the new spelling.

Examples
--------
>>> from mlsys.formulas import ring_allreduce_time
>>> ring_allreduce_time(1e9, 8, 450e9, 1e-6)     # seconds
"""

from __future__ import annotations

import warnings
from typing import Any

from mlsys.core.formulas import *  # noqa: F403
from mlsys.core.formulas import __all__ as _core_all

__all__ = list(_core_all)

_DEPRECATED: dict[str, str] = {
    "calc_ring_allreduce_time": "ring_allreduce_time",
    "calc_tree_allreduce_time": "tree_allreduce_time",
    "calc_all_to_all_time": "alltoall_time",
    "calc_hierarchical_allreduce_time": "hierarchical_allreduce_time",
    "calc_transformer_training_flops": "training_flops",
    "calc_kv_cache_size": "kv_cache_bytes",
    "calc_activation_memory": "activation_bytes_per_layer",
}
"""Deprecated name -> current name (read by ``mlsys check`` to suggest the new one)."""


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:
        from mlsys._legacy import LEGACY_FORMULAS

        warnings.warn(
            f"mlsys.formulas.{name} is deprecated; use mlsys.formulas.{_DEPRECATED[name]} "
            "(floats in SI units) instead",
            DeprecationWarning,
            stacklevel=2,
        )
        return LEGACY_FORMULAS[name]
    raise AttributeError(f"module 'mlsys.formulas' has no attribute {name!r}")
