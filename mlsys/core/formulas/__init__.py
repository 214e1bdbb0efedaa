"""Pure, cited formulas of ML systems, on floats and numpy arrays in SI units.

One small module per topic; this package re-exports every module's ``__all__`` so that
``from mlsys.core.formulas import roofline_time, kv_cache_bytes`` works. The topic
modules (collectives, sharding, pipeline, reliability, sustainability,
economics, serving, gemm, overheads, layer_time, overlap, eager, peer_allreduce, moe, queueing,
scaling_laws, input_pipeline, topology, weights, privacy) are re-exported when present; a missing
one is skipped.
"""

from __future__ import annotations

import importlib as _importlib

from mlsys.core.formulas.memory import *  # noqa: F403
from mlsys.core.formulas.memory import __all__ as _memory_all
from mlsys.core.formulas.roofline import *  # noqa: F403
from mlsys.core.formulas.roofline import __all__ as _roofline_all
from mlsys.core.formulas.transformer import *  # noqa: F403
from mlsys.core.formulas.transformer import __all__ as _transformer_all

__all__ = [*_roofline_all, *_transformer_all, *_memory_all]

_OPTIONAL_MODULES = (
    "collectives",
    "sharding",
    "pipeline",
    "parallel",
    "reliability",
    "sustainability",
    "economics",
    "synchronization",
    "serving",
    "gemm",
    "overheads",
    "layer_time",
    "overlap",
    "eager",
    "peer_allreduce",
    "moe",
    "queueing",
    "scaling_laws",
    "input_pipeline",
    "topology",
    "weights",
    "privacy",
)


def _reexport_optional() -> None:
    for short in _OPTIONAL_MODULES:
        full = f"{__name__}.{short}"
        try:
            module = _importlib.import_module(full)
        except ModuleNotFoundError as exc:
            if exc.name == full:  # the module itself is absent: fine
                continue
            raise
        names = getattr(module, "__all__", ())
        for name in names:
            globals()[name] = getattr(module, name)
        __all__.extend(n for n in names if n not in __all__)


_reexport_optional()
