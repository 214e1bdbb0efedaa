"""The textbook's planning models: compute-optimal scaling, cluster queues, input pipelines.

*Machine Learning Systems* (harvard-edge/cs249r_book) sizes a training run with
``ScalingModel().solve(compute_budget)``, a shared cluster's queue with
``OrchestrationModel().solve(fleet, arrival_rate_jobs_per_day, avg_job_duration_days)``
and a host-side data stall with ``TransformationModel().solve(batch_size,
sample_size_bytes, cpu_throughput, accelerator_step_time)``. Each is served here under
the book's call shape and field names, on mlsys's cited formulas:

* compute-optimal parameters and tokens, ``N* = sqrt(C / (6 · 20))`` and ``D* = 20 N*``
  (:mod:`mlsys.core.formulas.scaling_laws`; Hoffmann et al. 2022, Kaplan et al. 2020);
* the mean wait of jobs that each take the whole cluster for a fixed time, an M/D/1
  queue (:func:`~mlsys.core.formulas.serving.mg1_waiting_time` with ``E[S²] = E[S]²``,
  Pollaczek-Khinchine) and its queue length by Little's law;
* the preprocessing time of a batch and the accelerator's busy fraction when it overlaps
  the step (:mod:`mlsys.core.formulas.input_pipeline`; Mohan et al. 2021).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from pint import DimensionalityError

from mlsys.compat._args import in_si, positive
from mlsys.core.errors import ParameterError
from mlsys.core.formulas.input_pipeline import accelerator_busy_fraction, preprocessing_time
from mlsys.core.formulas.scaling_laws import compute_optimal_parameters, tokens_for_compute
from mlsys.core.formulas.serving import littles_law_concurrency, mg1_waiting_time
from mlsys.core.results import Result
from mlsys.core.solvers._checks import one_si

__all__ = [
    "OrchestrationModel",
    "OrchestrationResult",
    "ScalingModel",
    "ScalingPlanResult",
    "TransformationModel",
    "TransformationResult",
]

_DAY_S = 86_400.0


# -- ScalingModel ---------------------------------------------------------------------------


class ScalingPlanResult(Result):
    """What the book's ``ScalingModel().solve`` returns.

    Attributes
    ----------
    optimal_parameters : Quantity [parameter_count]
        ``N* = sqrt(C / (6 · 20))``, or the ``target_model_size`` given.
    optimal_tokens : Quantity [token_count]
        ``20 N*``, or ``C / (6 N)`` for a given model size.
    compute_budget_flops : Quantity [flop_count]
        The budget ``C`` in FLOPs (a budget of accelerator-days converted).
    tokens_per_parameter : float
        ``D / N``.
    """

    _title: ClassVar[str] = "Compute-optimal scaling"
    _units: ClassVar[dict[str, str | None]] = {
        "optimal_parameters": "parameter_count",
        "optimal_tokens": "token_count",
        "compute_budget_flops": "flop_count",
        "tokens_per_parameter": None,
    }


def _reference_flop_rate() -> float:
    """FLOP/s one accelerator-second of the book's budget stands for: the H100's dense
    16-bit peak in mlsys's catalog times the book's sustained MFU (0.4)."""
    from mlsys.compat.systems import calibration
    from mlsys.core.catalog import Hardware

    peak = Hardware.H100.peak_flops_at("bf16").m_as("FLOP/s")
    return peak * float(calibration.REFERENCE_MFU_SUSTAINED)


def _budget_flops(value: Any) -> float:
    """A training budget in FLOPs: FLOPs (mlsys's or the book's count), accelerator-time,
    or a plain number of FLOPs."""
    if not hasattr(value, "units"):
        return positive(value, "compute_budget")
    if value.check("[time]"):  # the book's H100-days
        return one_si(value, "s", "compute_budget", allow_zero=False) * _reference_flop_rate()
    for unit in ("FLOP", "flop_count"):
        try:
            return positive(value.m_as(unit), "compute_budget")
        except DimensionalityError:
            continue
    raise ParameterError(
        "compute_budget", value, "FLOPs (a Quantity of FLOP), accelerator-days or a plain number"
    )


def _count(value: Any, name: str) -> float:
    if hasattr(value, "units"):
        for unit in ("parameter", "parameter_count", "count"):
            try:
                return positive(value.m_as(unit), name)
            except DimensionalityError:
                continue
        raise ParameterError(name, value, "a parameter count")
    return positive(value, name)


class ScalingModel:
    """The book's ScalingModel: the compute-optimal model and data for a training budget."""

    def solve(self, compute_budget: Any, target_model_size: Any = None) -> ScalingPlanResult:
        """Parameters and tokens that spend a budget compute-optimally.

        ``N* = sqrt(C / (k r))`` and ``D* = r N*`` with ``k = 6`` FLOPs per parameter per
        token and ``r = 20`` tokens per parameter
        (:func:`~mlsys.core.formulas.scaling_laws.compute_optimal_parameters`); for a
        given model size, ``D = C / (k N)``
        (:func:`~mlsys.core.formulas.scaling_laws.tokens_for_compute`).

        Parameters
        ----------
        compute_budget : Quantity or float
            FLOPs (a plain number is FLOPs), or accelerator time (the book's
            "H100-days": each second is the catalog H100's dense 16-bit peak at the
            book's sustained MFU of 0.4).
        target_model_size : Quantity or float, optional
            A model size to spend the budget on (parameters).

        Returns
        -------
        ScalingPlanResult

        Raises
        ------
        ParameterError
            For a budget or size that is not positive, or not FLOPs, time or a count.

        Examples
        --------
        Chinchilla's 5.76e23 FLOPs: 69.3 B parameters on 1.39 T tokens.

        >>> res = ScalingModel().solve(5.76e23)
        >>> round(res.si("optimal_parameters") / 1e9, 1), res.tokens_per_parameter
        (69.3, 20.0)
        """
        flops = _budget_flops(compute_budget)
        if target_model_size is None:
            params = compute_optimal_parameters(flops)
            tokens = 20.0 * params
        else:
            params = _count(target_model_size, "target_model_size")
            tokens = tokens_for_compute(flops, params)
        return ScalingPlanResult(
            optimal_parameters=params,
            optimal_tokens=tokens,
            compute_budget_flops=flops,
            tokens_per_parameter=tokens / params,
        )


# -- OrchestrationModel ------------------------------------------------------------------------


class OrchestrationResult(Result):
    """What the book's ``OrchestrationModel().solve`` returns.

    Attributes
    ----------
    cluster_utilization : float
        ``ρ = λ · D``: job arrivals per day times days per job.
    avg_wait_time_days : Quantity [s]
        Mean wait before a job starts (M/D/1): ``ρ D / (2 (1 − ρ))``; infinite when
        ``ρ ≥ 1``.
    avg_queue_length : float
        Mean jobs waiting, ``λ · W`` (Little's law): ``ρ² / (2 (1 − ρ))``.
    is_stable : bool
        ``ρ < 1``.
    """

    _title: ClassVar[str] = "Cluster queue (M/D/1)"
    _units: ClassVar[dict[str, str | None]] = {
        "cluster_utilization": None,
        "avg_wait_time_days": "s",
        "avg_queue_length": None,
        "is_stable": None,
    }


class OrchestrationModel:
    """The book's OrchestrationModel: jobs that each take the whole cluster, queued FIFO."""

    def solve(
        self, fleet: Any, arrival_rate_jobs_per_day: Any, avg_job_duration_days: Any
    ) -> OrchestrationResult:
        """Mean wait and queue length of jobs arriving at random to a dedicated cluster.

        Jobs arrive as a Poisson stream and each runs for a fixed time on the whole
        fleet: an M/D/1 queue, whose mean wait is the Pollaczek-Khinchine formula with
        ``E[S²] = E[S]²`` (:func:`~mlsys.core.formulas.serving.mg1_waiting_time`), half
        the wait of exponentially distributed jobs.

        Parameters
        ----------
        fleet : Fleet or a book cluster view
            The shared cluster (each job occupies all of it; its size enters only
            through the job duration given).
        arrival_rate_jobs_per_day : float
            Jobs submitted per day ``λ`` (> 0).
        avg_job_duration_days : float or Quantity [time]
            Run time of one job on the whole cluster (a plain number is days).

        Returns
        -------
        OrchestrationResult

        Raises
        ------
        ParameterError
            For a rate or duration that is not positive and finite.

        Examples
        --------
        Two jobs a day of 0.4 days each (ρ = 0.8): a job waits ``0.8 · 0.4 / 0.4`` =
        0.8 days on average, with 1.6 jobs in the queue.

        >>> res = OrchestrationModel().solve(None, 2.0, 0.4)
        >>> round(res.avg_wait_time_days.m_as("day"), 3), round(res.avg_queue_length, 3)
        (0.8, 1.6)
        """
        per_day = 1.0 / _DAY_S
        lam_per_s = in_si(arrival_rate_jobs_per_day, "1/s", per_day, "arrival_rate_jobs_per_day")
        job_s = in_si(avg_job_duration_days, "s", _DAY_S, "avg_job_duration_days")
        rho = lam_per_s * job_s
        wait_s = float(mg1_waiting_time(lam_per_s, job_s, job_s**2))
        queue = float(littles_law_concurrency(lam_per_s, wait_s)) if rho < 1.0 else math.inf
        return OrchestrationResult(
            cluster_utilization=rho,
            avg_wait_time_days=wait_s,
            avg_queue_length=queue,
            is_stable=rho < 1.0,
        )


# -- TransformationModel -----------------------------------------------------------------------


class TransformationResult(Result):
    """What the book's ``TransformationModel().solve`` returns.

    Attributes
    ----------
    transform_time : Quantity [s]
        Host time to prepare one batch, ``B · S / R``.
    accelerator_step_time : Quantity [s]
        The accelerator's step, as given.
    is_bottleneck : bool
        Preprocessing is slower than the step (the accelerator stalls for data).
    accelerator_utilization : float
        ``t_step / max(t_step, t_prep)``.
    slowdown_factor : float
        ``max(t_step, t_prep) / t_step``: how much longer each step takes than compute.
    """

    _title: ClassVar[str] = "Input pipeline"
    _units: ClassVar[dict[str, str | None]] = {
        "transform_time": "s",
        "accelerator_step_time": "s",
        "is_bottleneck": None,
        "accelerator_utilization": None,
        "slowdown_factor": None,
    }


class TransformationModel:
    """The book's TransformationModel: host preprocessing against the accelerator's step."""

    def solve(
        self,
        batch_size: int,
        sample_size_bytes: Any,
        cpu_throughput: Any,
        accelerator_step_time: Any,
    ) -> TransformationResult:
        """Whether preprocessing keeps up with the accelerator, and what a stall costs.

        The batch takes ``B · S / R`` to prepare
        (:func:`~mlsys.core.formulas.input_pipeline.preprocessing_time`); overlapped with
        the step by prefetching, each step lasts the longer of the two and the
        accelerator is busy ``t_step / max(t_step, t_prep)`` of the time
        (:func:`~mlsys.core.formulas.input_pipeline.accelerator_busy_fraction`).

        Parameters
        ----------
        batch_size : int
            Samples per batch (a whole number of at least 1).
        sample_size_bytes : Quantity [bytes] or float
            One sample (a plain number is bytes).
        cpu_throughput : Quantity [bytes/s] or float
            The host's preprocessing rate (a plain number is bytes per second).
        accelerator_step_time : Quantity [time] or float
            One training step on the accelerator (a plain number is seconds).

        Returns
        -------
        TransformationResult

        Raises
        ------
        ParameterError
            For a batch that is not a whole number of at least 1, or sizes, rates and
            times that are not positive.

        Examples
        --------
        256 samples of 500 kB at 2 GB/s take 64 ms against a 50 ms step: the accelerator
        is busy 78% of the time and each step is 1.28 times longer.

        >>> from mlsys.core.units import Q_
        >>> res = TransformationModel().solve(256, Q_("500 kB"), Q_("2 GB/s"), Q_("50 ms"))
        >>> round(res.si("transform_time") * 1e3, 1), round(res.slowdown_factor, 2)
        (64.0, 1.28)
        """
        from mlsys.core.checks import positive_int

        batch = positive_int("batch_size", batch_size)
        sample_b = one_si(sample_size_bytes, "B", "sample_size_bytes", allow_zero=False)
        rate_bps = one_si(cpu_throughput, "B/s", "cpu_throughput", allow_zero=False)
        step_s = one_si(accelerator_step_time, "s", "accelerator_step_time", allow_zero=False)
        prep_s = float(preprocessing_time(batch, sample_b, rate_bps))
        busy = float(accelerator_busy_fraction(step_s, prep_s))
        return TransformationResult(
            transform_time=prep_s,
            accelerator_step_time=step_s,
            is_bottleneck=prep_s > step_s,
            accelerator_utilization=busy,
            slowdown_factor=1.0 / busy,
        )
