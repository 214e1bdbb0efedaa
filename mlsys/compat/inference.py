"""The textbook's inference planners: reasoning cost, SLA batching, hardware synthesis.

*Machine Learning Systems* (harvard-edge/cs249r_book) prices chain-of-thought queries with
``InferenceScalingModel().solve(model, hardware, reasoning_steps, context_length)``, finds
the largest batch that meets a P99 target with ``BatchingOptimizer().solve(model, hardware,
seq_len, sla_latency_ms, arrival_rate_qps)`` and inverts the roofline with
``SynthesisSolver().solve(model, target_latency)``. Each is served here under the book's
call shape and field names; the times are mlsys's:

* a request's TTFT and ITL are :class:`mlsys.ServingModel`'s (for a prompt of the book's
  ``seq_len``, priced whether or not it fits, as the book's serving solver is);
* queueing is the book's M/M/c :class:`~mlsys.compat.capacity.TailLatencyModel`
  (Erlang C, :mod:`mlsys.core.formulas.queueing`);
* the synthesised hardware is the roofline (Williams et al. 2009) solved for the peak and
  bandwidth at which one forward pass takes the target time.
"""

from __future__ import annotations

from typing import Any, ClassVar

from mlsys.compat._args import fraction, in_si, solve_options
from mlsys.compat._unwrap import as_catalog
from mlsys.compat.capacity import TailLatencyModel
from mlsys.core.checks import positive_int
from mlsys.core.errors import ParameterError
from mlsys.core.results import Result
from mlsys.core.solvers._checks import one_si

__all__ = [
    "BatchingOptimizer",
    "BatchingOptimizerResult",
    "InferenceScalingModel",
    "InferenceScalingResult",
    "SynthesisResult",
    "SynthesisSolver",
]


def _serve(model: Any, hardware: Any, seq_len: int, batch: int, options: dict) -> Any:
    """mlsys's serving solve of a ``seq_len``-token prompt at a batch, priced whether or
    not it fits (as the book's ServingModel is)."""
    from mlsys.core.solvers.serving import ServingModel

    return ServingModel().solve(
        as_catalog(model),
        as_catalog(hardware),
        batch_size=batch,
        prompt_len=seq_len,
        price_infeasible=True,
        **options,
    )


# -- InferenceScalingModel ---------------------------------------------------------------------


class InferenceScalingResult(Result):
    """What the book's ``InferenceScalingModel().solve`` returns.

    Attributes
    ----------
    total_reasoning_time : Quantity [s]
        ``ttft + K · tokens_per_step · itl``.
    ttft, itl : Quantity [s]
        :class:`mlsys.ServingModel`'s, at batch 1 and the context length.
    tokens_generated : int
        ``K · tokens_per_step``.
    reasoning_steps : int
        ``K``.
    time_per_step : Quantity [s]
        ``tokens_per_step · itl``.
    energy_per_query : Quantity [J]
        The accelerator's TDP over the query (an upper bound: board power throughout).
    feasible : bool
        The model and its KV cache fit.
    serving_detail : object
        The serving solve.
    """

    _title: ClassVar[str] = "Inference-time reasoning"
    _units: ClassVar[dict[str, str | None]] = {
        "total_reasoning_time": "s",
        "ttft": "s",
        "itl": "s",
        "tokens_generated": None,
        "reasoning_steps": None,
        "time_per_step": "s",
        "energy_per_query": "J",
        "feasible": None,
        "serving_detail": None,
    }


class InferenceScalingModel:
    """The book's InferenceScalingModel: the latency and energy of chain-of-thought queries."""

    def solve(
        self,
        model: Any,
        hardware: Any,
        reasoning_steps: int = 8,
        context_length: int = 2048,
        precision: str = "fp16",
        efficiency: Any = None,
    ) -> InferenceScalingResult:
        """Time and energy of one query that reasons for ``K`` steps before answering.

        Each step decodes the book's ``calibration.TOKENS_PER_REASONING_STEP`` (50)
        tokens at mlsys's inter-token latency, after one prefill of the context:
        ``T = ttft + K · 50 · itl`` (the chain-of-thought cost of Wei et al. 2022; Snell
        et al. 2024 scale it at test time).

        Parameters
        ----------
        model : BookModel or TransformerWorkload
            The reasoning model (a view of the book's registries is accepted).
        hardware : BookAccelerator or Accelerator
            One accelerator serving it.
        reasoning_steps : int
            ``K`` (a whole number of at least 1).
        context_length : int
            Prompt tokens.
        precision : str
            Weights and KV cache.
        efficiency : float, optional
            As :meth:`mlsys.ServingModel.solve`; default mlsys's calibrated efficiencies
            (the book's own default is a flat 0.5).

        Returns
        -------
        InferenceScalingResult

        Raises
        ------
        ParameterError
            For a step count or context that is not a whole number of at least 1, and as
            :meth:`mlsys.ServingModel.solve` does.
        """
        from mlsys.compat.systems import calibration

        steps = positive_int("reasoning_steps", reasoning_steps)
        context = positive_int("context_length", context_length)
        serving = _serve(model, hardware, context, 1, solve_options(precision, efficiency))
        per_step = int(calibration.TOKENS_PER_REASONING_STEP)
        ttft, itl = serving.si("ttft"), serving.si("itl")
        total_s = ttft + steps * per_step * itl
        tdp = getattr(as_catalog(hardware), "tdp", None)
        energy_j = tdp.m_as("W") * total_s if tdp is not None else 0.0
        return InferenceScalingResult(
            total_reasoning_time=total_s,
            ttft=ttft,
            itl=itl,
            tokens_generated=steps * per_step,
            reasoning_steps=steps,
            time_per_step=per_step * itl,
            energy_per_query=energy_j,
            feasible=bool(serving.feasible),
            serving_detail=serving,
        )


# -- BatchingOptimizer ---------------------------------------------------------------------------


class BatchingOptimizerResult(Result):
    """What the book's ``BatchingOptimizer().solve`` returns.

    Attributes
    ----------
    best_batch_size : int
        The largest batch that fits and meets the P99 target (0 when none does).
    best_config : dict
        ``{"max_batch_size": best_batch_size}``.
    objective_value, max_throughput : float
        The book's offered token rate, ``arrival_rate_qps · seq_len`` (tokens/s; 0 when
        no batch meets the target).
    p99_latency : Quantity [s]
        The P99 at the best batch (0 when none).
    slo_violation_probability : float
        The book's name for the P99 wait over five service times (a ratio).
    is_feasible : bool
        Some batch meets the target.
    total_searched : int
        Batch sizes in the search range.
    """

    _title: ClassVar[str] = "SLA batching"
    _units: ClassVar[dict[str, str | None]] = {
        "best_batch_size": None,
        "best_config": None,
        "objective_value": None,
        "max_throughput": None,
        "p99_latency": "s",
        "slo_violation_probability": None,
        "is_feasible": None,
        "total_searched": None,
    }


def _batch_tail(
    serving: Any, seq_len: int, batch: int, arrival_rate_hz: float, replicas: int
) -> Any:
    """The book's queue of batches: service ``ttft + itl · seq_len``, batches arriving at
    ``λ / b``, over ``replicas`` servers."""
    service_ms = (serving.si("ttft") + serving.si("itl") * seq_len) * 1e3
    return TailLatencyModel().solve(arrival_rate_hz / batch, service_ms, replicas)


class BatchingOptimizer:
    """The book's BatchingOptimizer: the largest batch whose P99 meets an SLA."""

    def solve(
        self,
        model: Any,
        hardware: Any,
        seq_len: int,
        sla_latency_ms: Any,
        arrival_rate_qps: Any,
        num_replicas: int = 1,
        precision: str = "fp16",
        efficiency: Any = None,
        max_search_batch: int = 256,
    ) -> BatchingOptimizerResult:
        """Search batch sizes ``1 … max_search_batch`` for the largest that meets the SLA.

        A batch of ``b`` requests is served in ``ttft + itl · seq_len`` (mlsys's
        :class:`~mlsys.ServingModel` at that batch, ``seq_len`` decode steps as the book
        counts them); batches arrive at ``λ / b`` to ``num_replicas`` servers, an M/M/c
        queue (:class:`~mlsys.compat.capacity.TailLatencyModel`). A batch qualifies when
        it fits in memory, the queue is stable and its P99 is within the SLA. A batch
        that does not fit ends the search (a larger one needs more KV cache).

        Parameters
        ----------
        model : BookModel or TransformerWorkload
            The served model.
        hardware : BookAccelerator or Accelerator
            One replica's accelerator.
        seq_len : int
            Prompt tokens, and decode steps per request.
        sla_latency_ms : float or Quantity [time]
            P99 target (a plain number is milliseconds).
        arrival_rate_qps : float
            Requests per second.
        num_replicas : int
            Servers.
        precision : str
            Weights and KV cache.
        efficiency : float, optional
            As :meth:`mlsys.ServingModel.solve` (default mlsys's calibrated efficiencies).
        max_search_batch : int
            Largest batch tried.

        Returns
        -------
        BatchingOptimizerResult

        Raises
        ------
        ParameterError
            For counts that are not whole numbers of at least 1, a rate or SLA that is
            not positive, and as the serving solver does.
        """
        seq = positive_int("seq_len", seq_len)
        sla_s = in_si(sla_latency_ms, "s", 1e-3, "sla_latency_ms")
        lam = one_si(arrival_rate_qps, "1/s", "arrival_rate_qps", allow_zero=False)
        replicas = positive_int("num_replicas", num_replicas)
        limit = positive_int("max_search_batch", max_search_batch)
        model, hardware = as_catalog(model), as_catalog(hardware)
        options = solve_options(precision, efficiency)
        best: tuple[int, Any] | None = None
        for batch in range(1, limit + 1):
            serving = _serve(model, hardware, seq, batch, options)
            if not serving.feasible:
                break
            tail = _batch_tail(serving, seq, batch, lam, replicas)
            if tail.is_stable and tail.si("p99_latency") <= sla_s:
                best = (batch, tail)
        if best is None:
            return BatchingOptimizerResult(
                objective_value=0.0,
                best_config={"max_batch_size": 0},
                best_batch_size=0,
                max_throughput=0.0,
                p99_latency=0.0,
                slo_violation_probability=0.0,
                is_feasible=False,
                total_searched=limit,
            )
        batch, tail = best
        return BatchingOptimizerResult(
            objective_value=lam * seq,
            best_config={"max_batch_size": batch},
            best_batch_size=batch,
            max_throughput=lam * seq,
            p99_latency=tail.si("p99_latency"),
            slo_violation_probability=tail.slo_headroom_ratio,
            is_feasible=True,
            total_searched=limit,
        )


# -- SynthesisSolver -----------------------------------------------------------------------------


class SynthesisResult(Result):
    """What the book's ``SynthesisSolver().solve`` returns.

    Attributes
    ----------
    required_bw : Quantity [B/s]
        Memory bandwidth that streams the weights once in the target time.
    required_flops : Quantity [FLOP/s]
        Peak at which one forward pass, at the given efficiency, takes the target time.
    required_memory : Quantity [B]
        The weights.
    compute_memory_ratio : float
        ``required_flops / required_bw`` in FLOP per byte: the ridge point the hardware
        needs.
    target_latency : Quantity [s]
        As given.
    model_size : Quantity [B]
        The weights.
    total_ops : Quantity [FLOP]
        One forward pass (the catalog's ``inference_flops``).
    """

    _title: ClassVar[str] = "Hardware synthesis"
    _units: ClassVar[dict[str, str | None]] = {
        "required_bw": "B/s",
        "required_flops": "FLOP/s",
        "required_memory": "B",
        "compute_memory_ratio": None,
        "target_latency": "s",
        "model_size": "B",
        "total_ops": "FLOP",
    }


class SynthesisSolver:
    """The book's SynthesisSolver: the least hardware that meets a latency target."""

    def solve(
        self, model: Any, target_latency: Any, precision: str = "fp16", efficiency: float = 0.5
    ) -> SynthesisResult:
        """Invert the roofline: the peak and bandwidth one forward pass needs.

        The roofline time ``max(F / (η P), W / B)`` (Williams et al. 2009) meets a target
        ``t`` when ``B ≥ W / t`` (stream the weights ``W`` once) and ``P ≥ F / (η t)``
        (``F``: the catalog's forward-pass FLOPs, ``inference_flops``).

        Parameters
        ----------
        model : BookModel or Workload
            The model (a view of the book's registries is accepted).
        target_latency : Quantity [time] or float
            One forward pass's target (a plain number is seconds).
        precision : str
            The weights' precision.
        efficiency : float
            Fraction of peak reached, ``η`` in (0, 1] (the book's default 0.5).

        Returns
        -------
        SynthesisResult

        Raises
        ------
        ParameterError
            For a target that is not positive, an efficiency outside (0, 1] or an unknown
            precision.

        Examples
        --------
        Llama-3 8B in fp16 within 10 ms: its 16.06 GB of weights need 1.61 TB/s and its
        16.06 GFLOP per token need 3.2 TFLOP/s at half of peak.

        >>> from mlsys import Models
        >>> res = SynthesisSolver().solve(Models.Language.Llama3_8B, 0.010)
        >>> round(res.si("required_bw") / 1e12, 2), round(res.si("required_flops") / 1e12, 1)
        (1.61, 3.2)
        """
        from mlsys.core.precision import bytes_per_element

        t_s = one_si(target_latency, "s", "target_latency", allow_zero=False)
        eta = fraction(efficiency, "efficiency")
        if not 0.0 < eta <= 1.0:
            raise ParameterError("efficiency", efficiency, "a fraction in (0, 1]")
        workload = as_catalog(model)
        weights_b = workload.parameters.m_as("count") * bytes_per_element(precision)
        forward_flops = workload.inference_flops.m_as("count")
        required_bw = weights_b / t_s
        required_flops = forward_flops / (eta * t_s)
        return SynthesisResult(
            required_bw=required_bw,
            required_flops=required_flops,
            required_memory=weights_b,
            compute_memory_ratio=required_flops / required_bw,
            target_latency=t_s,
            model_size=weights_b,
            total_ops=forward_flops,
        )
