"""Resolve a path the textbook's chapters walk (``Hardware.Cloud.H100.compute.peak_flops``).

Shared by the compat path tests. A path is dotted attribute access from the ``mlsys``
namespace (after ``mlsys migrate``, ``mlsysim.`` is ``mlsys.``), where a step may end in
``()`` (a call with the book's usual arguments) or ``['key']`` (an item).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["resolve_path", "SOLVE_ARGS", "MODULE_NAMES"]

_STEP = re.compile(r"^(?P<name>[A-Za-z_]\w*)(?P<call>\(\))?(?:\['(?P<key>[^']+)'\])?$")


def _solve_args() -> tuple[Any, ...]:
    from mlsys import Hardware, Models

    return (Models.Vision.ResNet50, Hardware.Cloud.A100)


SOLVE_ARGS = _solve_args
MODULE_NAMES = {"calibration": "mlsys.compat.engine"}
"""Names chapters import from a module (``from mlsysim.engine import calibration``)."""
"""Arguments a chapter passes to ``Engine.solve()`` (ResNet-50 on an A100)."""


def resolve_path(path: str) -> Any:
    """Walk ``path`` from the ``mlsys`` namespace.

    Parameters
    ----------
    path : str
        E.g. ``"Systems.Fabrics.InfiniBand_NDR.latency_us"``.

    Returns
    -------
    object
        What the last step gives.
    """
    import importlib

    import mlsys

    if path.startswith("mlsysim."):
        path = path[len("mlsysim.") :]
    obj: Any = mlsys
    first = path.split(".")[0]
    if first in MODULE_NAMES:  # a name the chapter imports from a module of its own
        obj = importlib.import_module(MODULE_NAMES[first])
    for step in path.split("."):
        if step == "<item>":  # a loop over the group's members
            obj = next(iter(obj))
            continue
        match = _STEP.match(step)
        if match is None:
            raise ValueError(f"cannot walk {step!r} of {path!r}")
        obj = getattr(obj, match["name"])
        if match["call"]:
            if match["name"] == "solve":
                obj = obj(*_solve_args(), batch_size=1, precision="fp16", efficiency=0.5)
            elif match["name"] == "Q_":
                obj = obj(1, "GB")
            elif match["name"] == "plot_evaluation_scorecard":
                obj = obj(mlsys.Applications.Doorbell.evaluate())
            elif match["name"] == "replace":
                obj = obj("-", "–")
            else:
                obj = obj()
        if match["key"] is not None:
            obj = obj[match["key"]]
    return obj
