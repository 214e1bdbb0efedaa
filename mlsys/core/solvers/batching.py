"""Continuous batching: steady-state throughput and latency under a Poisson request load.

:class:`ContinuousBatchingModel` answers "what latency do users see at λ requests per
second, and how many requests per second can this replica take under a latency SLO?"
for an engine with iteration-level scheduling (Orca; Yu et al. 2022) and a paged KV
cache (vLLM; Kwon et al. 2023). The model, in steady state:

1. **Prefill server.** Each arriving prompt is prefilled alone, with priority over
   decode steps (vLLM's default scheduler). Prefills form an M/G/1 queue: Poisson
   arrivals at rate ``λ``, service time ``S(prompt)`` from :class:`ServingModel`'s
   physics, utilisation ``ρ = λ·E[S]``; the mean wait follows Pollaczek-Khinchine,
   ``W_q = λ·E[S²] / (2(1 − ρ))``, plus half a decode step (a running step is not
   interrupted). ``TTFT = W_q + E[S] + t_step/2``. ``E[S]`` and ``E[S²]`` are taken over
   the prompt-length distribution, not at its mean: ``S`` steps up where a prompt
   needs one more row of GEMM tiles and bends where it turns compute-bound, so
   ``S(E[P])`` can miss ``E[S(P)]`` by tens of percent.
2. **Decode batch.** Sequences in decode share each step. Between prefills the engine
   steps continuously, so a step of ``n`` sequences takes ``t_step(n)`` and each
   sequence sees ``ITL = t_step(n) / (1 − ρ)``. Little's law (``L = λ·W``) with
   ``W = (E[O] − 1)·ITL`` gives the fixed point ``n = λ·(E[O] − 1)·t_step(n)/(1 − ρ)``,
   solved by regula falsi (``t_step`` is convex and increasing in ``n``, so the root
   is unique).
3. **KV capacity.** The memory left after weights and workspace holds
   ``capacity`` blocks of ``block_size`` tokens. A running sequence holds on average
   its prompt plus half its output (time-weighted) and half an empty block; the
   number of concurrent sequences cannot exceed what fits (nor ``max_num_seqs``).
   Beyond that the queue grows without bound: the largest stable arrival rate is
   ``λ_max = n_cap / ((E[O] − 1)·t_step(n_cap) + n_cap·E[S])``.
4. **SLO search.** TTFT and ITL both increase with ``λ``; bisection finds the largest
   ``λ`` meeting both targets.

Prefill and decode time-share the device here (no chunked-prefill piggybacking), so
throughput is a conservative estimate for engines that fuse the two (Sarathi-Serve).

References
----------
Yu et al. (2022), "Orca: A Distributed Serving System for Transformer-Based Generative
Models", OSDI 2022 (iteration-level scheduling).
Kwon et al. (2023), "Efficient Memory Management for Large Language Model Serving with
PagedAttention", SOSP 2023 (paged KV cache, block size 16, under 4 % waste).
Little (1961), "A proof for the queuing formula L = λW", Operations Research 9(3).
Kleinrock (1975), "Queueing Systems, Volume 1: Theory", Wiley, Sec. 5.6
(Pollaczek-Khinchine mean-value formula).
Wilson & Hilferty (1931), "The distribution of chi-square", PNAS 17(12) (the
gamma quantiles of the prompt-length nodes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from statistics import NormalDist
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np

from mlsys.core.catalog.engines import serving_engine
from mlsys.core.errors import InfeasibleError, ParameterError
from mlsys.core.provenance import record
from mlsys.core.results import Result
from mlsys.core.solvers.serving import (
    DEFAULT_MEMORY_UTILIZATION,
    ENGINE_CHOICE,
    _activation_workspace,
    _check_plan_args,
    _context_problem,
    _count,
    _decode,
    _flag,
    _gb,
    _Plan,
    _plan,
    _prefill,
    engine_choices,
)
from mlsys.core.units import as_si

__all__ = ["ContinuousBatchingModel", "ContinuousBatchingResult"]

_BISECTION_STEPS = 60


class ContinuousBatchingResult(Result):
    """What :meth:`ContinuousBatchingModel.solve` returns (one replica, steady state).

    Attributes
    ----------
    arrival_rate : Quantity [1/s]
        Requests per second offered.
    request_throughput : Quantity [1/s] or None
        Requests completed per second (= ``arrival_rate`` when stable).
    tokens_per_second : Quantity [token/s] or None
        Output tokens per second of the replica, ``λ · E[output_len]``.
    tokens_per_second_per_accelerator : Quantity [token/s] or None
        The same per device.
    ttft : Quantity [s] or None
        Mean time to first token including queueing: ``queueing_delay + prefill_time``
        plus half a decode step.
    queueing_delay : Quantity [s] or None
        Mean wait of a prompt before its prefill starts (Pollaczek-Khinchine).
    prefill_time : Quantity [s]
        Mean prefill service time ``E[S]`` of one prompt.
    itl : Quantity [s] or None
        Mean inter-token latency (alias ``time_per_output_token``).
    decode_step_time : Quantity [s] or None
        One decode step of the steady-state batch, without prefill interruptions.
    e2e_latency : Quantity [s] or None
        ``ttft + (E[output_len] − 1) · itl``.
    concurrency : float or None
        Mean sequences decoding together (Little's law).
    max_concurrency : float
        Sequences whose KV caches fit (and at most ``max_num_seqs``).
    kv_capacity_blocks : int
        KV blocks of ``kv_block_size`` tokens that fit on one device.
    kv_block_size : int
        Tokens per block.
    kv_utilization : float or None
        Fraction of the KV blocks in use at the steady state.
    kv_waste_fraction : float
        Allocated-but-empty share of a sequence's blocks (half a block per sequence).
    prefill_utilization : float or None
        ``ρ = λ·E[S]``: share of time spent prefilling.
    max_arrival_rate : Quantity [1/s]
        Largest stable arrival rate (KV capacity and prefill both bound it).
    stable : bool
        ``arrival_rate < max_arrival_rate``.
    meets_slo : bool or None
        Whether TTFT and ITL meet the targets given (None without targets).
    max_arrival_rate_under_slo : Quantity [1/s] or None
        Largest arrival rate meeting ``ttft_slo`` and ``itl_slo`` (0 when even an idle
        server misses them); None without targets.
    ttft_slo, itl_slo : Quantity [s] or None
        The targets.
    cost_per_million_tokens : Quantity [USD] or None
        Accelerator cost of a million output tokens at the steady state, when a price
        per accelerator-hour is given.
    mean_prompt_len, mean_output_len, mean_context : float
        ``E[prompt]``, ``E[output]`` and the time-weighted mean tokens a decoding
        sequence holds.
    accelerators : int
        ``tp_size · pp_size``.
    feasible : bool
        The replica fits and the load is stable.
    infeasibility_reason : str or None
        Why not.
    engine : str
        The engine row whose kernels and loop priced the solve, as
        :attr:`mlsys.core.solvers.serving.ServingResult.engine` (``"reference"`` by
        default).
    """

    _units: ClassVar[dict[str, str | None]] = {
        "arrival_rate": "1/s",
        "request_throughput": "1/s",
        "tokens_per_second": "token/s",
        "tokens_per_second_per_accelerator": "token/s",
        "ttft": "s",
        "queueing_delay": "s",
        "prefill_time": "s",
        "itl": "s",
        "decode_step_time": "s",
        "e2e_latency": "s",
        "concurrency": None,
        "max_concurrency": None,
        "kv_capacity_blocks": None,
        "kv_block_size": None,
        "kv_utilization": None,
        "kv_waste_fraction": None,
        "prefill_utilization": None,
        "max_arrival_rate": "1/s",
        "stable": None,
        "meets_slo": None,
        "max_arrival_rate_under_slo": "1/s",
        "ttft_slo": "s",
        "itl_slo": "s",
        "cost_per_million_tokens": "USD",
        "mean_prompt_len": None,
        "mean_output_len": None,
        "mean_context": None,
        "accelerators": None,
        "feasible": None,
        "infeasibility_reason": None,
        "engine": None,
    }
    _aliases: ClassVar[dict[str, str]] = {
        "time_per_output_token": "itl",
        "tpot": "itl",
        "throughput": "tokens_per_second",
        "capacity": "max_arrival_rate",
    }


# ---------------------------------------------------------------------------------
# Length distributions
# ---------------------------------------------------------------------------------


_LENGTH_NODES = 64
"""Equal-probability nodes over which a prompt-length distribution's prefill moments
are averaged: the midpoint rule on the quantile function, ``E[f(P)] ≈ (1/n) Σ
f(F⁻¹((i + ½)/n))``; 64 keeps the capacity cases of the suite within 1 % of 256 nodes."""


class _Lengths:
    """Mean, second moment, distribution and (optionally) samples of token lengths."""

    __slots__ = ("kind", "mean", "samples", "second", "std")

    def __init__(
        self, mean: float, second: float, samples: np.ndarray | None, kind: str = "fixed"
    ) -> None:
        self.mean = mean
        self.second = second
        self.std = math.sqrt(max(second - mean * mean, 0.0))
        self.samples = samples
        self.kind = kind

    def nodes(self, n: int = _LENGTH_NODES) -> np.ndarray | None:
        """Whole-token lengths at the ``n`` equal-probability quantiles ``(i + ½)/n``
        (lengths below one token count as one), or None for a fixed length or samples.

        Exponential and uniform quantiles are exact; normal and lognormal use the
        inverse normal CDF (:class:`statistics.NormalDist`); gamma uses the
        Wilson-Hilferty cube-root approximation (Wilson & Hilferty 1931).
        """
        if self.samples is not None or self.std == 0.0:
            return None
        u = (np.arange(n) + 0.5) / n
        mu, sd = self.mean, self.std
        if self.kind == "exponential":
            x = -mu * np.log1p(-u)
        elif self.kind == "uniform":
            half = math.sqrt(3.0) * sd
            x = (mu - half) + u * 2.0 * half
        else:
            z = np.array([NormalDist().inv_cdf(float(v)) for v in u])
            if self.kind == "lognormal":
                s2 = math.log1p((sd / mu) ** 2)
                x = np.exp(math.log(mu) - 0.5 * s2 + math.sqrt(s2) * z)
            elif self.kind == "gamma":
                shape = (mu / sd) ** 2
                c = 1.0 / (9.0 * shape)
                x = mu * np.maximum(1.0 - c + z * math.sqrt(c), 0.0) ** 3
            else:  # normal
                x = mu + sd * z
        return np.maximum(np.round(x), 1.0)


_SPEC_HELP = (
    "a mean number of tokens, an array of sampled lengths, or a dict such as "
    "{'mean': 512, 'std': 200}, {'distribution': 'exponential', 'mean': 256} or "
    "{'distribution': 'uniform', 'low': 100, 'high': 900}"
)


def _lengths(spec: Any, name: str) -> _Lengths:
    if isinstance(spec, (bool, str, bytes)) or spec is None:
        raise ParameterError(name, spec, _SPEC_HELP)
    if isinstance(spec, (int, float)):
        x = float(spec)
        if not math.isfinite(x) or x < 1.0:
            raise ParameterError(name, spec, "at least 1 token", _SPEC_HELP)
        return _Lengths(x, x * x, None)
    if isinstance(spec, Mapping):
        return _lengths_from_dict(spec, name)
    try:
        arr = np.asarray(spec, dtype=float).ravel()
    except (TypeError, ValueError):
        raise ParameterError(name, spec, _SPEC_HELP) from None
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 1.0):
        raise ParameterError(name, spec, "samples of at least 1 token each")
    return _Lengths(float(arr.mean()), float(np.mean(arr * arr)), arr)


def _lengths_from_dict(spec: Mapping, name: str) -> _Lengths:
    kind = str(spec.get("distribution", "normal")).lower()
    allowed = {"distribution", "mean", "std", "cv", "low", "high"}
    if set(spec) - allowed:
        raise ParameterError(name, dict(spec), _SPEC_HELP)

    def num(key: str) -> float:
        v = spec.get(key)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise ParameterError(f"{name}[{key!r}]", v, "a finite number")
        return float(v)

    if kind == "uniform":
        lo, hi = num("low"), num("high")
        if lo < 1.0 or hi < lo:
            raise ParameterError(name, dict(spec), "1 <= low <= high")
        mean, std = (lo + hi) / 2.0, (hi - lo) / math.sqrt(12.0)
    else:
        mean = num("mean")
        if kind in ("deterministic", "fixed", "constant"):
            std = 0.0
        elif kind == "exponential":
            std = mean
        elif kind in ("normal", "lognormal", "gamma"):
            if "std" in spec:
                std = num("std")
            elif "cv" in spec:
                std = num("cv") * mean
            else:
                std = 0.0
        else:
            raise ParameterError(
                f"{name}['distribution']",
                kind,
                "deterministic, exponential, uniform, normal, lognormal or gamma",
            )
    if mean < 1.0 or std < 0.0:
        raise ParameterError(name, dict(spec), "a mean of at least 1 token and std >= 0")
    return _Lengths(mean, mean * mean + std * std, None, kind)


# ---------------------------------------------------------------------------------
# Steady state on floats
# ---------------------------------------------------------------------------------


class _Steady:
    """The float-level model of one configuration, evaluated at any arrival rate."""

    __slots__ = ("ctx", "es", "es2", "lam_max", "n_cap", "o_mean", "plan", "t_cap")

    def __init__(
        self, plan: _Plan, es: float, es2: float, o_mean: float, ctx: float, n_cap: float
    ) -> None:
        self.plan, self.es, self.es2, self.o_mean, self.ctx = plan, es, es2, o_mean, ctx
        self.n_cap = n_cap
        self.t_cap = self.step(n_cap)
        decode_work = (o_mean - 1.0) * self.t_cap
        self.lam_max = n_cap / (decode_work + n_cap * es) if n_cap > 0 else 0.0

    def step(self, n: float) -> float:
        return _decode(self.plan, n, self.ctx)[0]

    def _fixed_point(self, coeff: float) -> float:
        """Root of ``g(n) = coeff·t_step(n) − n`` on ``[0, n_cap]`` (Illinois method).

        ``g(0) > 0`` and ``g`` is convex (``t_step`` is a maximum of affine roofs plus
        affine communication), so the root is unique when ``g(n_cap) <= 0``; regula falsi
        with the Illinois modification converges in a few steps on such piecewise-linear
        functions and never leaves the bracket.
        """
        a, b = 0.0, self.n_cap
        ga = coeff * self.step(a) - a
        gb = coeff * self.t_cap - b
        if gb >= 0.0:
            return b
        side = 0
        for _ in range(_BISECTION_STEPS):
            c = (a * gb - b * ga) / (gb - ga)
            gc = coeff * self.step(c) - c
            if abs(gc) <= 1e-12 * (1.0 + c) or b - a <= 1e-12 * (1.0 + b):
                return c
            if gc > 0.0:
                a, ga = c, gc
                if side == 1:
                    gb *= 0.5
                side = 1
            else:
                b, gb = c, gc
                if side == -1:
                    ga *= 0.5
                side = -1
        return 0.5 * (a + b)

    def at(self, lam: float) -> tuple[float, float, float, float, float]:
        """(concurrency, step time, itl, queueing delay, ttft) at arrival rate ``lam``."""
        rho = lam * self.es
        slow = 1.0 - rho
        coeff = lam * (self.o_mean - 1.0) / slow
        n = self._fixed_point(coeff) if coeff > 0.0 else 0.0
        t_step = self.step(n)
        itl = t_step / slow
        wq = lam * self.es2 / (2.0 * slow)
        residual = 0.5 * t_step * slow if n > 0 else 0.0
        return n, t_step, itl, wq, wq + self.es + residual


def _prefill_moments(plan: _Plan, prompts: Any) -> tuple[float, float]:
    """E[S] and E[S²] of one prompt's prefill time over the prompt-length distribution.

    Samples are averaged exactly; a distribution over its equal-probability nodes
    (:meth:`_Lengths.nodes`). ``S`` is not smooth in the length — a step for each new
    row of GEMM tiles, a bend where the prompt turns compute-bound — so its value at
    the mean is not its mean. The result is kept on the plan, which a book and the SLO
    search solve many times.
    """
    if prompts.samples is not None:
        values, counts = np.unique(prompts.samples, return_counts=True)
        times = np.array([_prefill(plan, float(v), 1.0)[0] for v in values])
        w = counts / counts.sum()
        return float(np.dot(w, times)), float(np.dot(w, times * times))
    if prompts.std == 0.0:
        s_mu = _prefill(plan, prompts.mean, 1.0)[0]
        return s_mu, s_mu * s_mu
    key = ("prefill moments", prompts.kind, prompts.mean, prompts.std)
    hit = plan.priced.get(key)
    if hit is None:
        lengths = prompts.nodes()
        times = np.array([_prefill(plan, float(v), 1.0)[0] for v in lengths])
        hit = plan.priced[key] = (float(times.mean()), float(np.mean(times * times)))
    return hit


class ContinuousBatchingModel:
    """Steady-state serving of a Poisson request stream with continuous batching.

    See the module docstring for the model (M/G/1 prefill queue, Little's law for the
    decode batch, paged-KV capacity, SLO bisection).

    Parameters
    ----------
    engine : str, optional
        The serving engine and release whose kernels and loop are priced, as for
        :class:`ServingModel` (a row of ``mlsys/core/catalog/data/engines.toml``); default
        ``None``, the ``"reference"`` engine.

    Raises
    ------
    ParameterError
        For an engine the table does not hold (the message lists the known ones).

    Examples
    --------
    Llama-2-7B in bf16 on one H100 at 2 requests/s, 512-token prompts and answers of
    256 tokens on average (exponentially distributed): 3.4 sequences decode together,
    6.6 ms per token (weights streamed kernel by kernel, each with its fixed cost); the
    replica saturates at 16.8 requests/s and meets a 200 ms TTFT and 20 ms ITL target up
    to 13.9 requests/s.

    >>> from mlsys import ContinuousBatchingModel, Hardware, Models
    >>> res = ContinuousBatchingModel().solve(
    ...     Models.Llama2_7B, Hardware.H100, arrival_rate=2.0, prompt_len=512,
    ...     output_len={"distribution": "exponential", "mean": 256},
    ...     ttft_slo="200 ms", itl_slo="20 ms")
    >>> round(res.concurrency, 1), round(res.si("itl") * 1e3, 1)
    (3.4, 6.6)
    >>> round(res.si("max_arrival_rate"), 1), round(res.si("max_arrival_rate_under_slo"), 1)
    (16.8, 13.9)
    """

    def __init__(self, engine: str | None = None) -> None:
        self.engine = serving_engine(engine)

    def solve(
        self,
        model: Any,
        hardware: Any,
        arrival_rate: Any,
        prompt_len: Any = 512,
        output_len: Any = 256,
        precision: str = "bf16",
        kv_precision: str | None = None,
        tp_size: int = 1,
        pp_size: int = 1,
        efficiency: Any = None,
        fabric: Any = None,
        raise_errors: bool = False,
        *,
        activation_precision: str | None = None,
        block_size: int = 16,
        memory_utilization: float | None = DEFAULT_MEMORY_UTILIZATION,
        max_num_seqs: int | None = None,
        ttft_slo: Any = None,
        itl_slo: Any = None,
        price_per_accelerator_hour: Any = None,
        decode_attention_heads_per_block: int | None = ENGINE_CHOICE,
        gate_up_fused: bool = ENGINE_CHOICE,
        host_time_per_step: Any = ENGINE_CHOICE,
        host_overlap: bool = ENGINE_CHOICE,
        tp_allreduce: str = ENGINE_CHOICE,
        vocab_parallel: bool = ENGINE_CHOICE,
        cuda_graphs: bool = ENGINE_CHOICE,
    ) -> ContinuousBatchingResult:
        """Steady state at one arrival rate (and, given targets, the SLO capacity).

        Parameters
        ----------
        model : TransformerWorkload
            The model.
        hardware : Accelerator or Node
            As for :meth:`ServingModel.solve`.
        arrival_rate : float or Quantity [1/s]
            Mean requests per second (Poisson); must be positive.
        prompt_len : float, array or dict
            Prompt length per request, in tokens: a mean (deterministic), an array of
            sampled lengths, or a dict ``{"mean": m, "std": s}`` /
            ``{"distribution": "exponential", "mean": m}`` /
            ``{"distribution": "uniform", "low": a, "high": b}``. Every length is at
            least 1. The longest prompt (the mean of a distribution) plus the longest
            output must fit the model's ``context_window`` when it is known, else the
            configuration is infeasible with that reason.
        output_len : float, array or dict
            Generated length per request, in tokens, in the same forms as
            ``prompt_len``. Every length is at least 1 (the first output token comes
            from prefill).
        precision : str
            Weight storage precision (``"bf16"``, ``"fp8"``, ``"int4"`` ...). As for
            :meth:`ServingModel.solve`.
        kv_precision : str, optional
            KV-cache precision; default: the activation precision. As for
            :meth:`ServingModel.solve`.
        activation_precision : str, optional
            Activations and all-reduce payloads; default: the weight precision when it
            is 16 bits or wider, else ``"fp16"``. As for :meth:`ServingModel.solve`.
        tp_size, pp_size : int
            Parallelism of the replica.
        efficiency, fabric
            As for :meth:`ServingModel.solve`.
        raise_errors : bool
            Raise :class:`~mlsys.core.errors.InfeasibleError` when the replica does not
            fit or the load is unstable.
        block_size : int
            Tokens per KV block (vLLM default 16).
        memory_utilization : float, optional
            As for :meth:`ServingModel.solve` (default: the library's framework
            allowance; 0.9 reproduces vLLM's default budget).
        max_num_seqs : int, optional
            Scheduler cap on concurrent sequences (vLLM's ``max_num_seqs``); default:
            only the KV cache limits it.
        decode_attention_heads_per_block : int, optional
            As for :meth:`ServingModel.solve`: query heads per thread block of the
            engine's decode-attention kernel (default: the engine's; one read of each KV
            head for the reference engine).
        gate_up_fused : bool
            As for :meth:`ServingModel.solve`: the engine runs a gated MLP's gate and
            up projections as one GEMM or as two (``False``, lmdeploy v0.1 with 16-bit
            weights); default: the engine's.
        host_time_per_step : float, str or Quantity
            As for :meth:`ServingModel.solve`: the engine's host work per iteration of
            its loop, in seconds, added to every decode step and prefill (default: the
            engine's measured figure, 0 for the reference engine).
        host_overlap : bool
            As for :meth:`ServingModel.solve`: the engine schedules one step ahead, so
            its host work costs time only where it exceeds the device step (default: the
            engine's).
        tp_allreduce : {"nccl", "custom"}
            As for :meth:`ServingModel.solve`: the tensor-parallel all-reduces as NCCL
            runs them or as the engines' custom peer-read kernels (default: the
            engine's).
        vocab_parallel : bool
            As for :meth:`ServingModel.solve`: the embedding and output head split over
            the tensor-parallel GPUs or whole on each (default: the engine's).
        cuda_graphs : bool
            As for :meth:`ServingModel.solve`: decode steps replayed from a CUDA graph,
            a lower fixed cost per kernel (default: the engine's).
        ttft_slo, itl_slo : float or Quantity [s], optional
            Latency targets for the SLO search (either or both).
        price_per_accelerator_hour : float or Quantity [USD/hour], optional
            Accelerator price, for the cost of a million output tokens.

        Returns
        -------
        ContinuousBatchingResult

        Raises
        ------
        ParameterError
            Zero or negative arrival rate, a length below 1 token, an unknown
            precision, a negative price, a block size below 1, ...
        InfeasibleError
            With ``raise_errors=True`` when infeasible or unstable.

        References
        ----------
        Little (1961); Kleinrock (1975), Sec. 5.6; Yu et al. (2022), OSDI; Kwon et al.
        (2023), SOSP.
        """
        lam = as_si(arrival_rate, "1/s", "arrival_rate", allow_zero=False)
        if not isinstance(lam, float):  # an array: one call prices one arrival rate
            raise ParameterError("arrival_rate", arrival_rate, "one rate in requests/s > 0")
        raise_errors = _flag(raise_errors, "raise_errors")
        prompts = _lengths(prompt_len, "prompt_len")
        outputs = _lengths(output_len, "output_len")
        block = _count(block_size, "block_size")
        cap_seqs = None if max_num_seqs is None else _count(max_num_seqs, "max_num_seqs")
        ttft_target, itl_target, price = _checked_targets(
            ttft_slo, itl_slo, price_per_accelerator_hour
        )
        tp, pp, mu = _check_plan_args(tp_size, pp_size, memory_utilization)
        knobs = engine_choices(
            self.engine, decode_attention_heads_per_block, gate_up_fused, host_time_per_step,
            host_overlap, tp_allreduce, vocab_parallel, cuda_graphs,
        )  # fmt: skip
        plan = _plan(
            model, hardware, precision, kv_precision, activation_precision, tp, pp,
            efficiency, fabric, mu, *knobs,
        )  # fmt: skip
        kv = _kv_capacity(plan, prompts, outputs, block, cap_seqs)
        reason = _capacity_problem(model, plan, kv)
        es, es2 = _prefill_moments(plan, prompts)
        steady = _Steady(plan, es, es2, outputs.mean, kv.ctx, max(kv.n_cap, 0.0))
        lam_max = steady.lam_max if reason is None else 0.0
        stable = reason is None and lam < lam_max
        if reason is None and not stable:
            reason = (
                f"arrival_rate {lam:g}/s exceeds the replica's capacity "
                f"{lam_max:.3g}/s (KV cache holds {kv.n_cap:.0f} sequences)"
            )
        feasible = reason is None
        if not feasible and raise_errors:
            raise InfeasibleError(reason)  # type: ignore[arg-type]
        out: dict[str, Any] = {"arrival_rate": lam}
        meets = None
        if feasible:
            out.update(_at_rate(steady, lam, es, outputs.mean, kv, price))
            if ttft_target is not None or itl_target is not None:
                meets = _meets(out["ttft"], out["itl"], ttft_target, itl_target)
        else:
            out.update(dict.fromkeys(_RATE_FIELDS))
            out["prefill_time"] = es
        slo_rate = None
        if (
            (ttft_target is not None or itl_target is not None)
            and plan.problem is None
            and lam_max > 0.0
        ):
            slo_rate = _slo_search(steady, ttft_target, itl_target)
        elif ttft_target is not None or itl_target is not None:
            slo_rate = 0.0
        out.update(
            max_concurrency=max(kv.n_cap, 0.0),
            kv_capacity_blocks=kv.blocks,
            kv_block_size=block,
            kv_waste_fraction=kv.waste_tokens / (kv.ctx + kv.waste_tokens),
            max_arrival_rate=lam_max,
            stable=stable,
            meets_slo=meets,
            max_arrival_rate_under_slo=slo_rate,
            ttft_slo=ttft_target,
            itl_slo=itl_target,
            mean_prompt_len=prompts.mean,
            mean_output_len=outputs.mean,
            mean_context=kv.ctx,
            accelerators=plan.devices,
            feasible=feasible,
            infeasibility_reason=reason,
            engine=self.engine.name,
        )
        result = ContinuousBatchingResult(**out)
        return record(
            result, self, model=model, hardware=hardware, arrival_rate=arrival_rate,
            prompt_len=prompt_len, output_len=output_len, precision=precision, tp_size=tp_size,
        )  # fmt: skip


_RATE_FIELDS = (
    "request_throughput",
    "tokens_per_second",
    "tokens_per_second_per_accelerator",
    "ttft",
    "queueing_delay",
    "itl",
    "decode_step_time",
    "e2e_latency",
    "concurrency",
    "kv_utilization",
    "prefill_utilization",
    "cost_per_million_tokens",
)


def _checked_targets(
    ttft_slo: Any, itl_slo: Any, price_per_accelerator_hour: Any
) -> tuple[float | None, float | None, float | None]:
    """The TTFT and ITL targets (s) and the price (USD per accelerator-hour), if given."""
    ttft_target = None if ttft_slo is None else as_si(ttft_slo, "s", "ttft_slo", allow_zero=False)
    itl_target = None if itl_slo is None else as_si(itl_slo, "s", "itl_slo", allow_zero=False)
    price = (
        None
        if price_per_accelerator_hour is None
        else as_si(price_per_accelerator_hour, "USD/hour", "price_per_accelerator_hour")
    )
    return ttft_target, itl_target, price


def _kv_capacity(
    plan: _Plan, prompts: _Lengths, outputs: _Lengths, block: int, cap_seqs: int | None
) -> SimpleNamespace:
    """How many sequences the paged KV cache holds at the mean context.

    A decoding sequence, sampled uniformly in time, is a request weighted by its
    O − 1 decode steps; over those it holds prompt + O/2 tokens on average. Each holds
    half a block unused on average (Kwon et al. 2023).
    """
    o_mean = outputs.mean
    if o_mean > 1.0:
        ctx = prompts.mean + (outputs.second - o_mean) / (2.0 * (o_mean - 1.0))
    else:
        ctx = prompts.mean
    waste_tokens = 0.5 * (block - 1)
    p_peak = float(prompts.samples.max()) if prompts.samples is not None else prompts.mean
    workspace = _activation_workspace(plan, p_peak, 1.0)
    free = plan.mem_avail - plan.weights_dev - workspace * (1.0 + plan.overhead_frac)
    blocks = int(free // (block * plan.kv_per_token_dev)) if free > 0 else 0
    n_kv = blocks * block / (ctx + waste_tokens)
    return SimpleNamespace(
        ctx=ctx,
        waste_tokens=waste_tokens,
        p_peak=p_peak,
        o_peak=float(outputs.samples.max()) if outputs.samples is not None else o_mean,
        free=free,
        block=block,
        blocks=blocks,
        n_kv=n_kv,
        n_cap=n_kv if cap_seqs is None else min(n_kv, float(cap_seqs)),
    )


def _capacity_problem(model: Any, plan: _Plan, kv: SimpleNamespace) -> str | None:
    """Why the replica cannot serve at all (context, plan, memory), or None."""
    reason = _context_problem(model, kv.p_peak, kv.o_peak) or plan.problem
    if reason is None and kv.free <= 0:
        return (
            f"weights ({_gb(plan.weights_dev)} per accelerator) and workspace do "
            f"not fit in {_gb(plan.mem_avail)} usable memory"
        )
    if reason is None and kv.n_kv < 1.0:
        return (
            f"KV cache of one sequence ({kv.ctx:.0f} tokens) does not fit in the "
            f"{_gb(max(kv.free, 0.0))} left per accelerator"
        )
    return reason


def _at_rate(
    steady: _Steady,
    lam: float,
    es: float,
    o_mean: float,
    kv: SimpleNamespace,
    price: float | None,
) -> dict[str, Any]:
    """The steady state at arrival rate ``lam`` (requests/s): latencies, throughput, cost."""
    d = steady.plan.devices
    n, t_step, itl, wq, ttft = steady.at(lam)
    tps = lam * o_mean
    return {
        "request_throughput": lam,
        "tokens_per_second": tps,
        "tokens_per_second_per_accelerator": tps / d,
        "ttft": ttft,
        "queueing_delay": wq,
        "prefill_time": es,
        "itl": itl,
        "decode_step_time": t_step,
        "e2e_latency": ttft + (o_mean - 1.0) * itl,
        "concurrency": n,
        "kv_utilization": n * (kv.ctx + kv.waste_tokens) / (kv.blocks * kv.block),
        "prefill_utilization": lam * es,
        "cost_per_million_tokens": None if price is None else price * d / 3600.0 / tps * 1e6,
    }


def _meets(ttft: float, itl: float, ttft_target: float | None, itl_target: float | None) -> bool:
    return (ttft_target is None or ttft <= ttft_target) and (
        itl_target is None or itl <= itl_target
    )


def _slo_search(steady: _Steady, ttft_target: float | None, itl_target: float | None) -> float:
    """Largest stable arrival rate whose TTFT and ITL meet the targets (bisection).

    Both latencies increase monotonically with the arrival rate (more queueing, a
    larger decode batch, more time lost to prefills), so the feasible set is an
    interval ``[0, λ*]``.
    """
    hi = steady.lam_max * (1.0 - 1e-9)
    lo = 0.0
    _, _, itl0, _, ttft0 = steady.at(hi * 1e-12)
    if not _meets(ttft0, itl0, ttft_target, itl_target):
        return 0.0
    _, _, itl_hi, _, ttft_hi = steady.at(hi)
    if _meets(ttft_hi, itl_hi, ttft_target, itl_target):
        return hi
    for _ in range(_BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        _, _, itl, _, ttft = steady.at(mid)
        if _meets(ttft, itl, ttft_target, itl_target):
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-6 * hi:
            break
    return lo
