"""Typed descriptions of hardware, workloads and facilities (pydantic v2 models).

Every model here is plain, frozen data: a system, a workload or a facility, never an
execution plan. Dimensional fields hold pint Quantities of the mlsys registry and are
validated on construction: a number is taken to be in the field's documented unit, a
string such as ``"3.35 TB/s"`` is parsed, and a Quantity of the wrong dimension (a
bandwidth given in ``GB``) is rejected with an error naming the field.

Solvers never read Quantities in their hot paths: each model exposes cached SI floats
(``accelerator.memory_bandwidth_Bps``, ``accelerator.peak_flops_s("bf16")`` ...), computed
once per object.

Conventions, stated once:

* Peak FLOP/s are **dense** (no structured sparsity); ``sparsity_speedup`` says what 2:4
  sparsity would multiply them by, and :meth:`Accelerator.peak_flops_s` takes
  ``sparse=True`` for that figure.
* Link bandwidths are **per direction, per accelerator** (NVLink 4 on an H100: 450 GB/s
  each way, 900 GB/s "total"); a datasheet's bidirectional figure is halved in the catalog.
* Bytes are SI (``GB`` = 1e9 bytes) unless an IEC unit (``GiB``) is written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# The field types and the base model are re-exported for modules that define models
# of their own (``from mlsys.core.types import Bandwidth, _Model``).
from mlsys.core._types_core import (  # noqa: F401
    Accelerator,
    Bandwidth,
    Bytes,
    Carbon,
    CarbonIntensity,
    ConfigurationError,
    Duration,
    EnergyPrice,
    FlopRate,
    Money,
    Power,
    Provenance,
    QuantityOf,
    WaterIntensity,
    _Model,
    _quantity_validator,
)

__all__ = [
    "ConfigurationError",
    "Provenance",
    "QuantityOf",
    "Accelerator",
    "Fabric",
    "Node",
    "Fleet",
    "Workload",
    "TransformerWorkload",
    "GridProfile",
    "Datacenter",
]

# ---------------------------------------------------------------------------------
# The other types, created when first asked for
# ---------------------------------------------------------------------------------
# A pydantic model class costs about a millisecond to create (its fields are collected
# and their annotations evaluated), and a fresh interpreter's first catalog number needs
# only Provenance and Accelerator: the rest live in three small modules imported on
# first use (PEP 562), the way ``mlsys`` itself loads its public names.
_ELSEWHERE = {
    "Fabric": "mlsys.core._types_systems",
    "Node": "mlsys.core._types_systems",
    "Fleet": "mlsys.core._types_systems",
    "Workload": "mlsys.core._types_workloads",
    "TransformerWorkload": "mlsys.core._types_workloads",
    "GridProfile": "mlsys.core._types_facilities",
    "Datacenter": "mlsys.core._types_facilities",
}

if TYPE_CHECKING:  # static tools (type checkers, griffe) see them defined here
    from mlsys.core._types_facilities import Datacenter, GridProfile
    from mlsys.core._types_systems import Fabric, Fleet, Node
    from mlsys.core._types_workloads import TransformerWorkload, Workload


def __getattr__(name: str) -> Any:
    module = _ELSEWHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later lookups are plain module attributes
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_ELSEWHERE))
