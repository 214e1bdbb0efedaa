"""How often a training job is interrupted, how often it should checkpoint, and what is lost.

:class:`ReliabilityModel` turns per-device failure rates (by default those Meta measured
while training Llama 3 405B) into the job's mean time between failures, the optimum
checkpoint interval (Young 1974, Daly 2006) for a checkpoint written at a storage
bandwidth, and the goodput left after checkpoint writes, rework and restarts.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, ClassVar

import numpy as np

from mlsys.core.errors import InfeasibleError, ParameterError
from mlsys.core.fmt import fmt
from mlsys.core.formulas.reliability import (
    daly_checkpoint_interval_s,
    daly_expected_wall_time_s,
    failure_probability,
    lost_work_per_failure_s,
    young_checkpoint_interval_s,
)
from mlsys.core.provenance import record
from mlsys.core.results import Result
from mlsys.core.solvers import _checks
from mlsys.core.solvers._checks import one_si, positive_int
from mlsys.core.units import Q_, as_si

__all__ = [
    "LLAMA3_INTERRUPTIONS",
    "LLAMA3_GPU_HOURS",
    "DEFAULT_FAILURE_RATES",
    "ReliabilityModel",
    "ReliabilityResult",
]

LLAMA3_INTERRUPTIONS: dict[str, int] = {
    "gpu": 148 + 19 + 17 + 6 + 6,
    "hbm": 72,
    "nic": 7,
    "host": 32 + 3 + 3 + 2 + 2 + 2 + 2,
    "switch": 35,
    "software": 54 + 7 + 2,
}
"""Unexpected interruptions of Llama 3 405B pre-training over 54 days, by component.

Dubey et al. (2024), "The Llama 3 Herd of Models", arXiv:2407.21783, Table 5 (419 in
total), grouped as: ``gpu`` = faulty GPU 148 + GPU SRAM 19 + GPU system processor 17 +
silent data corruption 6 + GPU thermal interface and sensor 6; ``hbm`` = GPU HBM3 72;
``nic`` = NIC 7; ``host`` = unplanned host maintenance 32 + SSD 3 + power supply 3 +
server chassis 2 + IO expansion board 2 + CPU 2 + system memory 2; ``switch`` = network
switch and cable 35; ``software`` = software bug 54 + NCCL watchdog timeouts 7 +
dependency 2.
"""

LLAMA3_GPU_HOURS: float = 16384 * 54 * 24.0
"""GPU-hours of the Llama 3 observation window: 16,384 H100 for 54 days (Table 5)."""

DEFAULT_FAILURE_RATES: dict[str, float] = {
    component: count / (LLAMA3_GPU_HOURS * 3600.0)
    for component, count in LLAMA3_INTERRUPTIONS.items()
}
"""Default interruption rates per accelerator, in failures per accelerator-second.

Each is a Table 5 count divided by the 21.2 million GPU-hours of the window, so the
fleet's rate grows with its size (host and switch failures are charged per GPU: Llama 3
ran eight GPUs per host). Per accelerator-hour: gpu 9.23e-6, hbm 3.39e-6, nic 3.3e-7,
host 2.17e-6, switch 1.65e-6, software 2.97e-6; total 1.97e-5. Kokolis et al. (2024)
fit the same series-system model (MTTF ∝ 1/N) to Meta's A100 research clusters; Zhang
et al. (2022, OPT-175B logbook) report 35 manual restarts in two months on 992 A100s.
"""

_METHODS = ("daly", "young")
_DEFAULT_STORAGE_BANDWIDTH_BPS = 2e12  # Llama 3 Tectonic, sustained (Sec. 3.3.1)
_DEFAULT_RESTART_S = 600.0  # estimate: reschedule, reload a checkpoint, warm up
_MIN_GOODPUT = 0.01  # below this the job is reported as not finishing


class ReliabilityResult(Result):
    """Failures, checkpointing and goodput of one training job.

    Attributes
    ----------
    accelerators : int
        Accelerators the job spans.
    failure_rate_per_accelerator : float [1/s]
        Interruptions per accelerator-second, all components summed.
    component_failure_rates : dict of str to float
        The per-component rates used, in interruptions per accelerator-second.
    fleet_failure_rate : float [1/s]
        Interruptions per second of the whole job (``1 / fleet_mtbf``).
    fleet_mtbf : float [s]
        Mean time between interruptions of the job.
    mtbf_source : str
        ``"component rates"`` or ``"given"`` (a user's ``fleet_mtbf``).
    job_duration : float [s]
        Failure-free compute time of the job.
    failure_probability : float
        Probability of at least one interruption within ``job_duration``.
    checkpoint_bytes : float [byte] or None
        Size of one checkpoint (None when the checkpoint time was given directly, or
        the job does not checkpoint).
    checkpoint_time : float [s] or None
        Blocking time δ to write one checkpoint (None: no checkpointing).
    young_interval, daly_interval : float [s] or None
        Optimum compute time between checkpoints, Young (1974) and Daly (2006).
    checkpoint_interval : float [s] or None
        Interval used (Daly's unless ``interval_method="young"`` or given).
    restart_time : float [s]
        Time from an interruption to computing again.
    lost_work_per_failure : float [s]
        First-order cost of one interruption: ``τ/2`` of rework plus the restart
        (without checkpoints, half the job plus the restart).
    expected_failures : float
        Interruptions expected over the wall-clock time.
    checkpoint_overhead_time : float [s]
        Time spent writing checkpoints.
    expected_lost_time : float [s]
        Time spent redoing work and restarting.
    wall_time : float [s]
        Expected wall-clock time (Daly 2006, Eq. 20: exact for exponential failures).
    goodput : float
        ``job_duration / wall_time``, the fraction of time doing kept work.
    feasible : bool
        False when a checkpoint takes longer than the mean time between failures, or the
        expected wall time exceeds 100 times the failure-free time (goodput < 1 %).
    infeasibility_reason : str or None
        Why not.
    """

    _units: ClassVar[dict[str, str | None]] = {
        "accelerators": None,
        "failure_rate_per_accelerator": "1/s",
        "component_failure_rates": "1/s",
        "fleet_failure_rate": "1/s",
        "fleet_mtbf": "s",
        "mtbf_source": None,
        "job_duration": "s",
        "failure_probability": None,
        "checkpoint_bytes": "byte",
        "checkpoint_time": "s",
        "young_interval": "s",
        "daly_interval": "s",
        "checkpoint_interval": "s",
        "restart_time": "s",
        "lost_work_per_failure": "s",
        "expected_failures": None,
        "checkpoint_overhead_time": "s",
        "expected_lost_time": "s",
        "wall_time": "s",
        "goodput": None,
        "feasible": None,
        "infeasibility_reason": None,
    }


def _count(fleet: Any) -> int:
    total = getattr(fleet, "total_accelerators", None)
    if total is not None:
        return int(total)
    return positive_int("fleet", fleet)


def _rates(failure_rates: Mapping[str, Any] | None) -> dict[str, float]:
    if failure_rates is None:
        return DEFAULT_FAILURE_RATES
    if not isinstance(failure_rates, Mapping):
        raise ParameterError(
            "failure_rates",
            failure_rates,
            "a mapping of component name to failures per accelerator-second (or a 1/hour Quantity)",
        )
    rates = dict(DEFAULT_FAILURE_RATES)
    for component, value in failure_rates.items():
        rates[str(component)] = as_si(value, "1/s", f"failure_rates[{component!r}]")
    return rates


class ReliabilityModel:
    """Mean time between failures, checkpoint interval and goodput of a training job.

    A synchronous job fails when any component under it fails, so per-accelerator
    interruption rates (GPU, HBM, NIC, host, switch, software) add up and scale with the
    fleet: ``M = 1 / (N Σ λ_c)``. Defaults are Meta's Llama 3 405B measurements
    (:data:`DEFAULT_FAILURE_RATES`), which give 16,384 GPUs one interruption every
    3.1 hours.

    Examples
    --------
    >>> from mlsys import ReliabilityModel, Q_
    >>> res = ReliabilityModel().solve(16384, Q_(54, "day"), checkpoint_time=Q_(60, "s"))
    >>> round(res.fleet_mtbf.to("hour").magnitude, 2)
    3.09
    """

    def solve(
        self,
        fleet: Any,
        job_duration: Any,
        *,
        model: Any = None,
        checkpoint_bytes: Any = None,
        bytes_per_param: float = 14.0,
        storage_bandwidth: Any = _DEFAULT_STORAGE_BANDWIDTH_BPS,
        checkpoint_time: Any = None,
        checkpoint_interval: Any = None,
        interval_method: str = "daly",
        restart_time: Any = _DEFAULT_RESTART_S,
        failure_rates: Mapping[str, Any] | None = None,
        fleet_mtbf: Any = None,
        raise_errors: bool = False,
    ) -> ReliabilityResult:
        """Solve for failures, checkpointing and goodput.

        Parameters
        ----------
        fleet : Fleet or int
            The cluster the job spans, or its number of accelerators.
        job_duration : Quantity [time] or float [s]
            Failure-free compute time of the job.
        model : Workload or TransformerWorkload, optional
            The model trained; its checkpoint is ``total_params × bytes_per_param``.
        checkpoint_bytes : Quantity [byte] or float, optional
            Checkpoint size (overrides ``model``).
        bytes_per_param : float
            Checkpointed bytes per parameter: 14 for mixed-precision Adam (16-bit
            weights, fp32 master weights and two fp32 moments; gradients are not saved).
        storage_bandwidth : Quantity [byte/s] or float [B/s]
            Aggregate checkpoint write bandwidth; default 2 TB/s, the sustained figure
            of Meta's Tectonic store for Llama 3 (Dubey et al. 2024, Sec. 3.3.1).
        checkpoint_time : Quantity [time] or float [s], optional
            Blocking time of one checkpoint; overrides the size / bandwidth estimate.
            With no checkpoint time, size or model the job does not checkpoint: every
            interruption restarts it from the beginning.
        checkpoint_interval : Quantity [time] or float [s], optional
            Compute time between checkpoints; default the optimum of ``interval_method``.
        interval_method : {"daly", "young"}
            Optimum used when ``checkpoint_interval`` is not given.
        restart_time : Quantity [time] or float [s]
            Time from an interruption to computing again (default 10 min, an estimate).
        failure_rates : mapping of str to Quantity [1/time] or float [1/s], optional
            Per-accelerator interruption rates by component; merged over
            :data:`DEFAULT_FAILURE_RATES` (set a component to 0 to drop it).
        fleet_mtbf : Quantity [time] or float [s], optional
            A measured MTBF of the whole job; overrides the component rates.
        raise_errors : bool
            Raise :class:`InfeasibleError` instead of returning ``feasible=False``.

        Returns
        -------
        ReliabilityResult

        Raises
        ------
        ParameterError
            On a non-positive duration, bandwidth, size or MTBF, a negative rate or
            restart time, or an unknown ``interval_method``.
        """
        n = _count(fleet)
        raise_errors = _checks.flag("raise_errors", raise_errors)
        t_job = one_si(job_duration, "s", "job_duration", allow_zero=False)
        # every size is checked, also one this call does not use (a bytes_per_param
        # without a model): a bad value is a mistake whether or not it is read
        bpp = one_si(bytes_per_param, "dimensionless", "bytes_per_param", allow_zero=False)
        bw = one_si(storage_bandwidth, "byte/s", "storage_bandwidth", allow_zero=False)
        given_interval = (
            None
            if checkpoint_interval is None
            else one_si(checkpoint_interval, "s", "checkpoint_interval", allow_zero=False)
        )
        method = str(interval_method).lower()
        if method not in _METHODS:
            raise ParameterError("interval_method", interval_method, "'daly' or 'young'")
        restart = one_si(restart_time, "s", "restart_time")

        rates = _rates(failure_rates)
        rate_per_acc = math.fsum(rates.values())
        if fleet_mtbf is not None:
            mtbf = one_si(fleet_mtbf, "s", "fleet_mtbf", allow_zero=False)
            source = "given"
        else:
            if rate_per_acc <= 0.0:
                raise ParameterError("failure_rates", failure_rates, "at least one positive rate")
            mtbf = 1.0 / (n * rate_per_acc)
            source = "component rates"

        size = None
        if checkpoint_time is not None:
            delta = one_si(checkpoint_time, "s", "checkpoint_time", allow_zero=False)
        else:
            if checkpoint_bytes is not None:
                size = one_si(checkpoint_bytes, "byte", "checkpoint_bytes", allow_zero=False)
            elif model is not None:
                params = getattr(model, "total_params", None)
                if params is None:
                    raise ParameterError(
                        "model", model, "a Workload or TransformerWorkload (with total_params)"
                    )
                size = float(params) * bpp
            delta = None if size is None else size / bw

        if delta is None:
            young = daly = interval = None
            tau, d = t_job, 0.0
            lost_per = 0.5 * t_job + restart
        else:
            young = float(young_checkpoint_interval_s(delta, mtbf))
            daly = float(daly_checkpoint_interval_s(delta, mtbf))
            if given_interval is not None:
                interval = given_interval
            else:
                interval = daly if method == "daly" else young
            tau, d = min(interval, t_job), delta
            lost_per = float(lost_work_per_failure_s(tau, restart))

        # Overflow of exp() means "never finishes": report inf rather than warn.
        with np.errstate(over="ignore"):
            wall = float(daly_expected_wall_time_s(t_job, tau, d, mtbf, restart))
        overhead = t_job / tau * d
        goodput = t_job / wall if math.isfinite(wall) else 0.0
        reason = None
        if delta is not None and delta >= mtbf:
            reason = f"checkpoint time {delta:.4g} s is not below the job's MTBF {mtbf:.4g} s"
        elif goodput < _MIN_GOODPUT:
            reason = (
                f"the job would take over {1 / _MIN_GOODPUT:.0f}x its failure-free time: "
                f"{fmt(Q_(t_job, 's'))} of work, MTBF {fmt(Q_(mtbf, 's'))}"
                + ("" if delta is not None else ", no checkpoints")
            )
        feasible = reason is None
        if reason is not None and raise_errors:
            raise InfeasibleError(reason)
        result = ReliabilityResult(
            accelerators=n,
            failure_rate_per_accelerator=rate_per_acc,
            component_failure_rates=dict(rates),
            fleet_failure_rate=1.0 / mtbf,
            fleet_mtbf=mtbf,
            mtbf_source=source,
            job_duration=t_job,
            failure_probability=float(failure_probability(t_job, mtbf)),
            checkpoint_bytes=size,
            checkpoint_time=delta,
            young_interval=young,
            daly_interval=daly,
            checkpoint_interval=None if delta is None else tau,
            restart_time=restart,
            lost_work_per_failure=lost_per,
            expected_failures=wall / mtbf,
            checkpoint_overhead_time=overhead,
            expected_lost_time=max(0.0, wall - t_job - overhead),
            wall_time=wall,
            goodput=goodput,
            feasible=feasible,
            infeasibility_reason=reason,
        )
        return record(result, self, fleet=fleet, job_duration=job_duration, model=model)
