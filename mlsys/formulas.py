"""Book-facing formulas: stable names that chapter code imports.

Re-exports every formula of :mod:`mlsys.core.formulas` (pure functions on floats and
numpy arrays in SI units, each citing its source). Older ``calc_*`` spellings of mlsys
keep working through adapters that accept and return Quantities, with one
DeprecationWarning per use naming the new spelling (:mod:`mlsys.core.deprecation`).

The textbook *Machine Learning Systems* (harvard-edge/cs249r_book) calls its own
``calc_*`` functions with plain numbers or Quantities: ``calc_checkpoint_size``,
``calc_failure_probability``, ``calc_mtbf_cluster``, ``calc_mtbf_node``,
``calc_pipeline_bubble``, ``calc_effective_flops``, ``calc_young_daly_interval``,
``calc_availability_stacked``, ``calc_amdahls_speedup``, ``calc_network_latency_ms``,
``calc_monthly_egress_cost`` and ``model_memory``. They are served here with the book's
call shapes and meanings (defaults included: a checkpoint is 16 bytes per parameter in
the book), each a thin adapter over the cited formula (:mod:`mlsys._legacy`). As in the
book, plain numbers in give plain numbers out (seconds, hours, bytes, as each docstring
says: a :class:`mlsys._legacy.BookNumber`, a ``float`` that also answers ``m_as``/``to``
as the book's later release expected) and Quantities in give a Quantity out.

Examples
--------
>>> from mlsys.formulas import ring_allreduce_time
>>> round(ring_allreduce_time(1e9, 8, 450e9, 1e-6) * 1e3, 4)     # milliseconds
3.9029
>>> from mlsys.formulas import calc_checkpoint_size
>>> calc_checkpoint_size(175e9) / 1e12      # terabytes (numbers in, numbers out)
2.8
"""

from __future__ import annotations

from mlsys._legacy import BOOK_FORMULAS
from mlsys.core.deprecation import deprecated_getattr
from mlsys.core.formulas import *  # noqa: F403
from mlsys.core.formulas import __all__ as _core_all

globals().update(BOOK_FORMULAS)

__all__ = [*_core_all, *BOOK_FORMULAS]

_DEPRECATED: dict[str, str] = {
    "calc_ring_allreduce_time": "ring_allreduce_time",
    "calc_tree_allreduce_time": "binomial_tree_allreduce_time",
    "calc_all_to_all_time": "alltoall_time",
    "calc_hierarchical_allreduce_time": "hierarchical_allreduce_time",
    "calc_transformer_training_flops": "training_flops",
    "calc_kv_cache_size": "kv_cache_bytes",
    "calc_activation_memory": "activation_bytes_per_layer",
}
"""Deprecated name -> current name (read by ``mlsys check`` to suggest the new one)."""


def _legacy_adapter(old: str) -> object:
    from mlsys._legacy import LEGACY_FORMULAS

    return LEGACY_FORMULAS[old]


_BOOK_PHYSICS = (
    "dTime",
    "calc_training_time",
    "calc_training_time_days",
    "calc_bottleneck",
    "calc_paged_kv_cache_size",
    "calc_queue_latency_mmc",
    "calc_fleet_tco",
)
"""The textbook's older formula names served from :mod:`mlsys._book_formulas` (the same
functions :mod:`mlsys.compat.physics` serves, the book's call shapes)."""


def _book_physics(name: str) -> object:
    if name not in _BOOK_PHYSICS:
        raise AttributeError(f"module 'mlsys.formulas' has no attribute {name!r}")
    import mlsys._book_formulas as book_formulas

    return getattr(book_formulas, name)


__getattr__ = deprecated_getattr(
    "mlsys.formulas",
    _DEPRECATED,
    _legacy_adapter,
    fallback=_book_physics,
    notes={old: "floats in SI units" for old in _DEPRECATED},
)
