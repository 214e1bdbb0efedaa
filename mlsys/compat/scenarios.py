"""``Applications``: the textbook's application scenarios and their evaluation scorecard.

*Machine Learning Systems* (harvard-edge/cs249r_book) bundles a workload, a device and
the constraints it must meet into a scenario (``mlsys.Applications.Doorbell``: a Wake
Vision person detector on an ESP32-S3 within 200 ms), copies it with a tighter SLA
(``.model_copy(update={"sla_latency": Q_("50 ms")})``), evaluates it (``.evaluate()``)
and draws the result (``mlsys.plot_evaluation_scorecard``). :class:`Scenario` does that on
mlsys: the workload and device are the book's views of the catalog, the latency is
:class:`~mlsys.compat.engine.Engine` (mlsys's roofline solver), the scenarios'
constraints are the book's, cited in ``book_systems.toml`` ``[applications]``.

The evaluation has three levels, as the book's scorecard does:

1. *Feasibility*: the weights at the evaluated precision fit the device's memory.
2. *Performance*: the roofline latency of one inference meets the latency SLA.
3. *Energy*: the energy of one inference at the device's TDP (board power times latency,
   an upper bound) and, where the scenario sets a power budget, whether the TDP fits it.

Examples
--------
>>> from mlsys import Applications, Q_
>>> strict = Applications.Doorbell.model_copy(update={"sla_latency": Q_("50 ms")})
>>> ev = strict.evaluate()
>>> ev.performance.status        # 100 ms of compute on the ESP32-S3 > 50 ms
'FAIL'
"""

from __future__ import annotations

import functools
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from mlsys.compat._data import book_table
from mlsys.compat._namespace import Namespace
from mlsys.core.units import Q_

__all__ = ["EvaluationLevel", "ScenarioEvaluation", "Scenario", "Applications"]

_FILE = "book_systems.toml"


class EvaluationLevel(BaseModel):
    """One level of a scenario's scorecard.

    Attributes
    ----------
    level_name : str
        ``"Feasibility"``, ``"Performance"`` or ``"Energy"``.
    status : str
        ``"PASS"`` or ``"FAIL"``.
    summary : str
        One line for a reader.
    metrics : dict
        The level's figures as pint Quantities (``weight_size`` and ``capacity`` in
        bytes; ``latency`` and ``sla_latency`` in s; ``energy_per_inference`` in J;
        ``tdp`` and ``power_budget`` in W), ``None`` where the scenario sets no limit.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    level_name: str
    status: Literal["PASS", "FAIL"]
    summary: str
    metrics: dict[str, Any] = {}


class ScenarioEvaluation(BaseModel):
    """The scorecard of one scenario: feasibility, performance and energy.

    Attributes
    ----------
    scenario_name : str
        The scenario's name (``"Smart Doorbell"``).
    feasibility, performance, macro : EvaluationLevel
        Memory fit, latency against the SLA, energy per inference and power budget.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    scenario_name: str
    feasibility: EvaluationLevel
    performance: EvaluationLevel
    macro: EvaluationLevel

    @property
    def passed_all(self) -> bool:
        """Whether every level passed.

        Returns
        -------
        bool
        """
        return all(lv.status == "PASS" for lv in (self.feasibility, self.performance, self.macro))

    def utilization(self) -> dict[str, float]:
        """Demand over supply for each constrained resource (1.0 = at the limit).

        Returns
        -------
        dict of str to float
            ``"Memory (RAM)"``: weight bytes / memory capacity; ``"Latency (SLA)"``:
            latency / SLA, present only when the scenario sets an SLA. Dimensionless.
        """
        f, p = self.feasibility.metrics, self.performance.metrics
        out = {"Memory (RAM)": float((f["weight_size"] / f["capacity"]).m_as(""))}
        if p.get("sla_latency") is not None:
            out["Latency (SLA)"] = float((p["latency"] / p["sla_latency"]).m_as(""))
        return out

    def scorecard(self) -> str:
        """The three levels as text, one status line and one summary line each.

        Returns
        -------
        str
        """
        lines = [f"System evaluation: {self.scenario_name}"]
        for i, level in enumerate((self.feasibility, self.performance, self.macro), start=1):
            lines.append(f"  Level {i}: {level.level_name} [{level.status}]")
            lines.append(f"    {level.summary}")
        return "\n".join(lines)


def _bytes_text(size: Any) -> str:
    """``0.5 MB`` or ``85.5 GB``: MB below a gigabyte, GB from there."""
    return f"{size.to('MB' if size < Q_(1, 'GB') else 'GB'):.1f~P}"


def _resolve(path: str) -> Any:
    """``"Models.Tiny.WakeVision"`` -> that view, walked from the top-level package."""
    import mlsys

    return functools.reduce(getattr, path.split("."), mlsys)


class Scenario(BaseModel):
    """A workload on a device with the constraints it must meet (the book's scenario).

    Attributes
    ----------
    name : str
        Display name.
    description : str
        One sentence.
    workload : BookModel
        A view of ``mlsys.Models`` (``Models.Tiny.WakeVision``).
    system : BookDevice or BookAccelerator
        A view of ``mlsys.Hardware`` (``Hardware.Tiny.ESP32_S3``).
    sla_latency : pint.Quantity, optional
        Latency limit of one inference (time).
    power_budget : pint.Quantity, optional
        Power limit of the device (W).
    sources : dict
        Where the scenario's figures come from.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    name: str
    description: str = ""
    workload: Any
    system: Any
    sla_latency: Any = None
    power_budget: Any = None
    sources: dict[str, Any] = {}

    def evaluate(
        self, batch_size: int = 1, precision: str = "fp16", efficiency: float | None = None
    ) -> ScenarioEvaluation:
        """Evaluate the scenario on mlsys's roofline (the book's three-level scorecard).

        Parameters
        ----------
        batch_size : int
            Samples per inference (the book's default 1).
        precision : str
            Numeric precision of weights and compute (the book's default ``"fp16"``).
        efficiency : float, optional
            Fraction of peak compute reached (dimensionless); default mlsys's calibrated
            efficiency, as :meth:`~mlsys.compat.engine.Engine.solve`.

        Returns
        -------
        ScenarioEvaluation
            Feasibility: weights = parameters x bytes per element of ``precision``
            against ``system.memory.capacity``. Performance: the latency of
            :meth:`mlsys.compat.engine.Engine.solve` (mlsys's roofline, Williams et al.
            2009, with mlsys's calibrated efficiency) against ``sla_latency``. Energy:
            TDP x latency (``it_energy_J``) and TDP against ``power_budget``.

        Raises
        ------
        ParameterError
            When ``system`` is a cluster (``Applications.Frontier``): its step is
            :class:`mlsys.DistributedModel`'s question, not this single-device roofline.
        """
        from mlsys.compat.engine import Engine
        from mlsys.core.errors import ParameterError
        from mlsys.core.precision import bytes_per_element

        if not hasattr(self.system, "memory"):
            raise ParameterError(
                "system",
                self.system,
                "a single device (Hardware.*); a cluster's step is mlsys.DistributedModel's",
            )

        weights = self.workload.size_in_bytes(Q_(bytes_per_element(precision), "byte"))
        capacity = self.system.memory.capacity
        fits = bool(weights <= capacity)
        w_txt, c_txt = _bytes_text(weights), _bytes_text(capacity)
        feasibility = EvaluationLevel(
            level_name="Feasibility",
            status="PASS" if fits else "FAIL",
            summary=(
                f"Weights fit in memory ({w_txt} of {c_txt})"
                if fits
                else f"Out of memory: weights need {w_txt}, the device has {c_txt}"
            ),
            metrics={"weight_size": weights, "capacity": capacity},
        )

        solved = Engine.solve(
            self.workload,
            self.system,
            batch_size=batch_size,
            precision=precision,
            efficiency=efficiency,
        )
        latency = solved.latency.to("ms")
        late = self.sla_latency is not None and bool(latency > self.sla_latency)
        target = "no SLA" if self.sla_latency is None else f"SLA {self.sla_latency:~P}"
        performance = EvaluationLevel(
            level_name="Performance",
            status="FAIL" if late else "PASS",
            summary=f"Latency {latency:.1f~P} ({solved.bottleneck}-bound; {target})",
            metrics={
                "latency": latency,
                "sla_latency": self.sla_latency,
                "bottleneck": solved.bottleneck,
                "throughput": solved.throughput,
            },
        )

        tdp = self.system.tdp
        over = self.power_budget is not None and bool(tdp > self.power_budget)
        energy = solved.energy.to("mJ" if solved.energy < Q_(1, "J") else "J")
        budget = (
            "no power budget" if self.power_budget is None else f"budget {self.power_budget:~P}"
        )
        macro = EvaluationLevel(
            level_name="Energy",
            status="FAIL" if over else "PASS",
            summary=f"{energy:.2f~P} per inference at TDP {tdp:~P} ({budget})",
            metrics={"energy_per_inference": energy, "tdp": tdp, "power_budget": self.power_budget},
        )
        return ScenarioEvaluation(
            scenario_name=self.name, feasibility=feasibility, performance=performance, macro=macro
        )


def _application(key: str) -> Scenario:
    table = book_table(_FILE)["applications"]
    raw = table[key]
    return Scenario(
        name=raw["name"],
        description=raw.get("description", ""),
        workload=_resolve(raw["workload"]),
        system=_resolve(raw["system"]),
        sla_latency=Q_(raw["sla_latency"]) if "sla_latency" in raw else None,
        power_budget=Q_(raw["power_budget"]) if "power_budget" in raw else None,
        sources=dict(table["provenance"]),
    )


def _application_keys() -> list[str]:
    return [k for k in book_table(_FILE)["applications"] if k != "provenance"]


Applications = Namespace(
    "Applications",
    {key: (lambda k=key: _application(k)) for key in _application_keys()},
    lazy=True,
)
"""The book's application scenarios (``Doorbell``, ``KWS``, ``AutoDrive``, ``Chatbot``)."""
