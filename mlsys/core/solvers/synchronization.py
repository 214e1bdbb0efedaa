"""Synchronous, asynchronous and local SGD compared under a straggler distribution.

:class:`SynchronizationModel` takes a worker's step time and a straggler model — a
two-point distribution (a fraction of slow steps and their slowdown) or a shifted
exponential tail — and reports the step time, throughput and staleness of synchronous
SGD (optionally with backup workers), asynchronous SGD and local SGD side by side.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any, ClassVar

from mlsys.core.errors import ParameterError
from mlsys.core.formulas.synchronization import (
    harmonic_number,
    shifted_exponential_backup_step_s,
    two_point_backup_step_s,
    two_point_expected_max_s,
)
from mlsys.core.provenance import record
from mlsys.core.results import Result
from mlsys.core.solvers._checks import nonneg_int, one_si, positive_int

__all__ = ["SynchronizationModel", "SynchronizationResult"]

_STRAGGLERS = ("none", "two-point", "exponential")
_MODES = ("sync", "async", "local")


class SynchronizationResult(Result):
    """Step time, throughput and staleness of synchronous, asynchronous and local SGD.

    The headline fields (``step_time``, ``throughput``, ``staleness``) are those of
    ``mode``; the ``sync_*``, ``async_*`` and ``local_*`` fields compare all three.

    Attributes
    ----------
    mode : str
        ``"sync"``, ``"async"`` or ``"local"``.
    straggler : str
        ``"none"``, ``"two-point"`` or ``"exponential"``.
    workers : int
        Workers whose gradients count each step.
    backup_workers : int
        Extra synchronous workers whose late gradients are dropped.
    batch_size : float
        Samples per worker per step.
    compute_time : float [s]
        A fast (straggler-free) worker's step compute time.
    mean_compute_time : float [s]
        A worker's mean step compute time under the straggler model.
    expected_max_compute_time : float [s]
        Expected compute time of a synchronous step: the slowest counted worker.
    sync_time : float [s]
        Time of one gradient / model synchronisation (all-reduce or push-pull).
    step_time, throughput, staleness
        Of ``mode``: seconds per step, samples per second, steps of staleness.
    waiting_fraction : float
        Fraction of a synchronous worker's compute time spent idle waiting for the
        slowest: ``1 − mean / expected max``.
    efficiency : float
        Throughput of ``mode`` over the ideal ``workers × batch_size / compute_time``
        (no stragglers, free communication).
    sync_step_time, sync_throughput : float [s], [1/s]
        Synchronous SGD: expected max compute plus the synchronisation.
    async_step_time, async_throughput, async_staleness : float [s], [1/s], float
        Asynchronous SGD on all ``workers + backup_workers`` devices: a worker's mean
        step plus its own push/pull; rates add; mean staleness ``devices − 1`` updates.
    local_step_time, local_throughput, local_staleness : float [s], [1/s], float
        Local SGD averaging every ``local_steps``: the synchronisation cost is divided
        by ``local_steps``; a replica runs up to ``local_steps − 1`` steps on its own.
    """

    _units: ClassVar[dict[str, str | None]] = {
        "mode": None,
        "straggler": None,
        "workers": None,
        "backup_workers": None,
        "batch_size": None,
        "compute_time": "s",
        "mean_compute_time": "s",
        "expected_max_compute_time": "s",
        "sync_time": "s",
        "step_time": "s",
        "throughput": "1/s",
        "staleness": None,
        "waiting_fraction": None,
        "efficiency": None,
        "sync_step_time": "s",
        "sync_throughput": "1/s",
        "async_step_time": "s",
        "async_throughput": "1/s",
        "async_staleness": None,
        "local_step_time": "s",
        "local_throughput": "1/s",
        "local_staleness": None,
    }


def _fraction(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not 0 <= value <= 1:
        raise ParameterError(name, value, "a probability in [0, 1]")
    return float(value)


class SynchronizationModel:
    """Compare synchronous, asynchronous and local SGD when some workers straggle.

    Synchronous SGD waits for the slowest worker each step; its expected step is the
    expected maximum of the workers' step times (Dean & Barroso 2013), reduced by
    backup workers (Chen et al. 2016). Asynchronous SGD (Dean et al. 2012) never waits:
    throughput is the sum of the workers' rates, paid for with ``n − 1`` steps of mean
    staleness (Lian et al. 2015). Local SGD (Lin et al. 2020) averages every ``H``
    steps: communication falls ``H``-fold, staleness reaches ``H − 1`` steps.

    Straggler models: ``"two-point"`` — each worker-step is, with probability
    ``slow_fraction``, ``slowdown`` times longer; ``"exponential"`` — each step takes
    ``step_time`` plus an exponential delay of mean ``tail_mean``; ``"none"``. Local
    SGD's compute per step is taken as the synchronous step's (a slow worker is assumed
    to stay slow through a round: an upper bound).

    Examples
    --------
    >>> from mlsys import SynchronizationModel
    >>> res = SynchronizationModel().solve(100, 1.0, straggler="two-point",
    ...                                    slow_fraction=0.01, slowdown=2.0)
    >>> round(res.si("step_time"), 3)
    1.634
    """

    def solve(
        self,
        workers: int,
        step_time: Any,
        *,
        batch_size: float = 1,
        straggler: str = "two-point",
        slow_fraction: float = 0.0,
        slowdown: float = 1.0,
        tail_mean: Any = 0.0,
        sync_time: Any = 0.0,
        backup_workers: int = 0,
        local_steps: int = 1,
        mode: str = "sync",
    ) -> SynchronizationResult:
        """Solve for step time, throughput and staleness.

        Parameters
        ----------
        workers : int
            Workers ``n`` whose gradients form each step (data-parallel replicas).
        step_time : Quantity [time], float [s] or Result
            Compute time of a straggler-free worker's step (``t``, or ``t₀`` for the
            exponential model). A result (e.g. a DistributedResult) gives its
            ``compute_time`` (else its ``step_time``).
        batch_size : float
            Samples per worker per step.
        straggler : {"two-point", "exponential", "none"}
            Straggler distribution.
        slow_fraction : float
            Two-point: probability a worker-step is slow, in [0, 1].
        slowdown : float
            Two-point: factor (≥ 1) a slow step takes longer.
        tail_mean : Quantity [time] or float [s]
            Exponential: mean extra delay of a step.
        sync_time : Quantity [time] or float [s]
            Time of one synchronisation (all-reduce, or push + pull for async),
            not overlapped with compute.
        backup_workers : int
            Extra synchronous workers; a step waits for the first ``workers``.
        local_steps : int
            Local SGD: steps ``H ≥ 1`` between model averages.
        mode : {"sync", "async", "local"}
            Which scheme the headline fields describe.

        Returns
        -------
        SynchronizationResult

        Raises
        ------
        ParameterError
            On non-positive workers or step time, a probability outside [0, 1], a
            slowdown below 1, or an unknown ``straggler`` or ``mode``.
        """
        n = positive_int("workers", workers)
        b = nonneg_int("backup_workers", backup_workers)
        h = positive_int("local_steps", local_steps)
        if isinstance(step_time, Result):  # e.g. a DistributedResult: its compute part
            key = "compute_time" if "compute_time" in step_time else "step_time"
            step_time = float(step_time.si(key))
        t = one_si(step_time, "s", "step_time", allow_zero=False)
        sync = one_si(sync_time, "s", "sync_time")
        bs = one_si(batch_size, "dimensionless", "batch_size", allow_zero=False)
        kind = str(straggler).lower()
        if kind not in _STRAGGLERS:
            raise ParameterError("straggler", straggler, "one of " + ", ".join(_STRAGGLERS))
        headline = str(mode).lower()
        if headline not in _MODES:
            raise ParameterError("mode", mode, "one of " + ", ".join(_MODES))

        if kind == "two-point":
            q = _fraction("slow_fraction", slow_fraction)
            s = slowdown
            if isinstance(s, bool) or not isinstance(s, Real) or not 1.0 <= s < math.inf:
                raise ParameterError("slowdown", slowdown, "a factor >= 1")
            s = float(s)
            mean = t * (1.0 + q * (s - 1.0))
            if b:
                worst = float(two_point_backup_step_s(t, s, q, n, b))
            else:
                worst = float(two_point_expected_max_s(t, s, q, n))
        elif kind == "exponential":
            beta = one_si(tail_mean, "s", "tail_mean")
            mean = t + beta
            if b:
                worst = float(shifted_exponential_backup_step_s(t, beta, n, b))
            else:
                worst = t + beta * harmonic_number(n)
        else:
            mean = worst = t

        sync_step = worst + sync
        async_step = mean + sync
        local_step = worst + sync / h
        ideal = n * bs / t
        sync_tp = n * bs / sync_step
        # Asynchronous SGD puts every device to work, backups included.
        devices = n + b
        async_tp = devices * bs / async_step
        local_tp = n * bs / local_step
        pick = {
            "sync": (sync_step, sync_tp, 0.0),
            "async": (async_step, async_tp, devices - 1.0),
            "local": (local_step, local_tp, h - 1.0),
        }[headline]
        result = SynchronizationResult(
            mode=headline,
            straggler=kind,
            workers=n,
            backup_workers=b,
            batch_size=bs,
            compute_time=t,
            mean_compute_time=mean,
            expected_max_compute_time=worst,
            sync_time=sync,
            step_time=pick[0],
            throughput=pick[1],
            staleness=pick[2],
            waiting_fraction=max(0.0, 1.0 - mean / worst),
            efficiency=pick[1] / ideal,
            sync_step_time=sync_step,
            sync_throughput=sync_tp,
            async_step_time=async_step,
            async_throughput=async_tp,
            async_staleness=devices - 1.0,
            local_step_time=local_step,
            local_throughput=local_tp,
            local_staleness=h - 1.0,
        )
        return record(result, self, workers=workers, step_time=step_time, mode=mode)
