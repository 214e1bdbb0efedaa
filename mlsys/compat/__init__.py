"""Views that let an existing book's chapters run on mlsys.

The open textbook *Machine Learning Systems* (harvard-edge/cs249r_book) reads the
catalog through registries of its own: ``Hardware.Cloud.H100.compute.peak_flops``,
``Models.Vision.ResNet50.inference_flops``, ``Systems.Reliability.Gpu.mttf_hours``,
``Literature.Training.MfuHigh``, ``Engine.solve(...)``. This package offers those paths
as *views*: every value is the catalog's, one of the book's assumptions in
``book_assumptions.toml`` or a cited entry of the ``book_*.toml`` files; nothing
is typed twice. ``from mlsys import *`` (after ``mlsys migrate``) brings ``Hardware``
(with its tier groups), ``Models`` (with its families), ``Systems``, ``Literature``,
``Monitoring``, ``Tiers`` and ``Engine``.

Examples
--------
>>> from mlsys import Hardware, Systems
>>> Hardware.Cloud.H100.memory.bandwidth        # the catalog's 3.35 TB/s
<Quantity(3.35, 'terabyte / second')>
>>> Systems.Fabrics.InfiniBand_NDR.latency_us
5.0
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = [
    "Systems",
    "Literature",
    "Monitoring",
    "Ops",
    "Tiers",
    "Engine",
    "EngineResult",
    "calibration",
    "Scenarios",
    "Platforms",
    "Infrastructure",
    "Datasets",
    "BookAccelerator",
    "BookDevice",
    "BookModel",
    "start_chapter",
    "Applications",
    "Scenario",
    "plot_evaluation_scorecard",
    "plot_roofline",
    "solvers",
]

_LAZY = {
    "Systems": "mlsys.compat.systems",
    "Literature": "mlsys.compat.systems",
    "Monitoring": "mlsys.compat.systems",
    "Ops": "mlsys.compat.systems",
    "calibration": "mlsys.compat.systems",
    "Scenarios": "mlsys.compat.systems",
    "Platforms": "mlsys.compat.systems",
    "Infrastructure": "mlsys.compat.systems",
    "Datasets": "mlsys.compat.systems",
    "Tiers": "mlsys.compat.tiers",
    "Engine": "mlsys.compat.engine",
    "EngineResult": "mlsys.compat.engine",
    "BookAccelerator": "mlsys.compat.hardware",
    "BookDevice": "mlsys.compat.hardware",
    "BookModel": "mlsys.compat.models",
    "start_chapter": "mlsys.compat.registry",
    "Applications": "mlsys.compat.scenarios",
    "Scenario": "mlsys.compat.scenarios",
    "plot_evaluation_scorecard": "mlsys.compat.viz",
    "plot_roofline": "mlsys.compat.viz",
}


def __getattr__(name: str) -> Any:
    if name in ("viz", "solvers"):  # modules: ``from mlsys import viz``, compat.solvers
        return importlib.import_module(f"mlsys.compat.{name}")
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mlsys.compat' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
