"""The textbook's sensitivity solver: which hardware resource binds a workload.

*Machine Learning Systems* (harvard-edge/cs249r_book) calls
``SensitivitySolver().solve(model, hardware, precision="fp16", perturbation_pct=10.0)`` and
reads ``binding_constraint`` and ``sensitivities``: the relative change of the roofline
latency when the accelerator's peak compute, memory bandwidth or memory capacity grows by
``perturbation_pct`` percent, one at a time (a finite-difference elasticity of the roofline,
Williams et al. 2009; Ofenbeck et al. 2014). mlsys serves it with its own roofline solve,
:class:`~mlsys.compat.engine.Engine` (mlsys's :class:`~mlsys.SingleNodeModel` under the
book's ``Engine.solve`` shape), on copies of the catalog accelerator.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from mlsys.compat._args import positive, solve_options
from mlsys.compat._unwrap import as_catalog
from mlsys.core.errors import ParameterError
from mlsys.core.results import Result

__all__ = ["SensitivityResult", "SensitivitySolver"]


class SensitivityResult(Result):
    """What the book's ``SensitivitySolver().solve`` returns.

    Attributes
    ----------
    sensitivities : dict
        ``{"peak_flops", "memory_bandwidth", "memory_capacity"}`` -> ``(t' − t) / t``, the
        relative latency change when that resource alone grows by ``perturbation_pct``
        (negative: faster).
    binding_constraint : str
        The resource of largest ``|sensitivity|``.
    baseline_latency : Quantity [s]
        The unperturbed roofline latency.
    perturbation_pct : float
        The growth applied, in percent.
    """

    _title: ClassVar[str] = "Sensitivity"
    _units: ClassVar[dict[str, str | None]] = {
        "sensitivities": None,
        "binding_constraint": None,
        "baseline_latency": "s",
        "perturbation_pct": None,
    }


def _grown(accelerator: Any, resource: str, factor: float) -> Any:
    """A new catalog accelerator with one resource scaled. Built through the constructor,
    not ``model_copy``: the entry derives its SI rates when it is validated."""
    fields = {name: getattr(accelerator, name) for name in type(accelerator).model_fields}
    if resource == "peak_flops":
        fields[resource] = {k: v * factor for k, v in accelerator.peak_flops.items()}
    else:
        fields[resource] = fields[resource] * factor
    return type(accelerator)(**fields)


class SensitivitySolver:
    """The book's SensitivitySolver: the roofline latency's response to each resource."""

    _RESOURCES = ("peak_flops", "memory_bandwidth", "memory_capacity")

    def solve(
        self,
        model: Any,
        hardware: Any,
        precision: str = "fp16",
        perturbation_pct: float = 10.0,
        efficiency: Any = None,
    ) -> SensitivityResult:
        """Relative latency change per resource, and the one that binds.

        Parameters
        ----------
        model : BookModel or Workload
            The workload (a view of the book's registries is accepted).
        hardware : BookAccelerator or Accelerator
            The accelerator.
        precision : str
            Numerical precision of the solve.
        perturbation_pct : float
            Growth of each resource in percent (> 0).
        efficiency : float, optional
            As :meth:`mlsys.compat.engine.Engine.solve` (default mlsys's calibrated
            efficiency; the book's own default is a flat 0.5).

        Returns
        -------
        SensitivityResult

        Raises
        ------
        ParameterError
            For a perturbation that is not a positive finite percentage, hardware that
            is not an accelerator, and as the roofline solve does.
        """
        from mlsys.compat.engine import Engine
        from mlsys.core.types import Accelerator

        pct = positive(perturbation_pct, "perturbation_pct")
        if isinstance(perturbation_pct, bool) or not (math.isfinite(pct) and pct > 0.0):
            raise ParameterError("perturbation_pct", perturbation_pct, "a positive percentage")
        accelerator = as_catalog(hardware)
        if not isinstance(accelerator, Accelerator):
            raise ParameterError("hardware", hardware, "an accelerator (or a book view of one)")
        options = solve_options(precision, efficiency)

        def latency_s(device: Any) -> float:
            return Engine.solve(model, device, **options).latency.m_as("s")

        base_s = latency_s(accelerator)
        factor = 1.0 + pct / 100.0
        sensitivities = {
            resource: (latency_s(_grown(accelerator, resource, factor)) - base_s) / base_s
            for resource in self._RESOURCES
        }
        return SensitivityResult(
            sensitivities=sensitivities,
            binding_constraint=max(sensitivities, key=lambda k: abs(sensitivities[k])),
            baseline_latency=base_s,
            perturbation_pct=pct,
        )
