"""How much the accuracy suite's error moves when a calibration constant moves.

Every default the performance model rests on (achievable fractions of peak, network
efficiencies, fixed per-kernel and per-collective latencies, failure rates) is a
:class:`Constant`: where it lives, its source, and its value. :func:`sensitivity` scales
one at a time by each factor (±20% by default), re-runs the suite and reports the mean
absolute error of the **two-sided performance cases** (training and serving separately,
and of every two-sided case), so ``docs/calibration.md``'s sensitivity table is computed,
not typed.

>>> from mlsys.validation.sensitivity import sensitivity, markdown_table
>>> print(markdown_table(sensitivity()))        # doctest: +SKIP

How a constant is moved: the module attribute (or one key of a dict attribute) is
rebound to ``value × factor`` for the duration of a ``with perturbed(...)`` block, in
its home module, in every loaded ``mlsys`` module that imported the same object by name,
and in the default arguments of their functions that captured it (e.g.
``fixed_kernel_time(kernels, overhead_s=KERNEL_OVERHEAD_S)``); every solver cache is
cleared before and after, so no stale result leaks in either direction.
"""

from __future__ import annotations

import importlib
import statistics
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from mlsys.core.solvers._memo import IdentityMemo
from mlsys.validation._case import Case

__all__ = [
    "CONSTANTS",
    "FACTORS",
    "Constant",
    "clear_solver_caches",
    "markdown_table",
    "perturbed",
    "sensitivity",
    "suite_errors",
]

FACTORS = (0.8, 1.2)
"""Default multipliers: the constant at 80% and at 120% of its value."""

_CACHED_PACKAGES = ("mlsys.core.solvers", "mlsys.core.formulas")


@dataclass(frozen=True)
class Constant:
    """One calibration constant of the performance model.

    Attributes
    ----------
    name : str
        What it is, in words (with its unit where it has one).
    module : str
        Dotted path of the module that defines it.
    attribute : str
        Its name in that module.
    key : str or None
        The key, when the attribute is a dict of constants (e.g. ``"gpu"``); ``None``
        for a scalar, or to scale every value of a dict together.
    source : str
        Where the value comes from (citation), and whether a published result in the
        suite informed it (a fit).
    """

    name: str
    module: str
    attribute: str
    key: str | None
    source: str

    def _home(self) -> Any:
        return importlib.import_module(self.module)

    def value(self) -> Any:
        """The constant's current value (a float; a dict when ``key`` is ``None`` on a dict)."""
        held = getattr(self._home(), self.attribute)
        return held[self.key] if self.key is not None else held

    def describe(self) -> str:
        """The value as printed in the table (seconds below a millisecond in µs, times below
        a second in ms)."""
        v = self.value()
        if isinstance(v, dict):
            return "per entry (all scaled together)"
        if isinstance(v, tuple):
            return " / ".join(f"{x:.3g}" for x in v)
        if 0 < abs(v) < 1e-3:
            return f"{v * 1e6:.3g} µs"
        if abs(v) < 1 and self.name.endswith("(s)"):  # a time of milliseconds
            return f"{v * 1e3:.3g} ms"
        if abs(v) >= 1e4:  # a bandwidth or rate: 8.77 × 10¹⁰, never a bare 8.77e+10
            from mlsys.core.fmt import sci

            return str(sci(v, digits=3))
        return f"{v:.3g}"


def clear_solver_caches() -> None:
    """Empty every memo and ``lru_cache`` of the loaded solver and formula modules."""
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith(_CACHED_PACKAGES):
            continue
        for obj in list(vars(module).values()):
            if isinstance(obj, IdentityMemo):  # a module-level memo (e.g. of priced plans)
                obj.clear()
            memo = getattr(obj, "memo", None)
            if isinstance(memo, IdentityMemo):
                memo.clear()
            if callable(getattr(obj, "cache_clear", None)):
                obj.cache_clear()


def _scaled(value: Any, key: str | None, factor: float) -> Any:
    if isinstance(value, dict):
        out = dict(value)
        for k in [key] if key is not None else list(out):
            out[k] = _scale_number(out[k], factor)
        return out
    return _scale_number(value, factor)


def _scale_number(value: Any, factor: float) -> Any:
    if isinstance(value, dict):  # nested tables (e.g. per link type) scale throughout
        return {k: _scale_number(v, factor) for k, v in value.items()}
    if isinstance(value, tuple):  # a pair such as (forward, backward) scales together
        return tuple(_scale_number(v, factor) for v in value)
    return float(value) * factor


@contextmanager
def perturbed(constant: Constant, factor: float) -> Iterator[None]:
    """Temporarily multiply a constant by ``factor`` everywhere mlsys reads it.

    Parameters
    ----------
    constant : Constant
        Which constant.
    factor : float
        Multiplier (e.g. 1.2 for +20%).

    Yields
    ------
    None
        Inside the block every solver sees the scaled value; on exit the original
        object is restored and the caches are cleared again.
    """
    original = getattr(constant._home(), constant.attribute)
    replacement = _scaled(original, constant.key, factor)
    holders = [
        m
        for n, m in list(sys.modules.items())
        if m is not None
        and n.startswith("mlsys")
        and getattr(m, constant.attribute, None) is original
    ]
    defaults = _captured_defaults(original)
    clear_solver_caches()
    try:
        for m in holders:
            setattr(m, constant.attribute, replacement)
        for fn, attr, values in defaults:
            setattr(fn, attr, _swap(values, original, replacement))
        yield
    finally:
        for m in holders:
            setattr(m, constant.attribute, original)
        for fn, attr, values in defaults:
            setattr(fn, attr, values)
        clear_solver_caches()


def _swap(values: Any, old: Any, new: Any) -> Any:
    if isinstance(values, dict):
        return {k: (new if v is old else v) for k, v in values.items()}
    return tuple(new if v is old else v for v in values)


def _functions(module: Any) -> Iterator[Any]:
    for obj in list(vars(module).values()):
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        if isinstance(obj, type):
            for member in list(vars(obj).values()):
                fn = getattr(member, "__func__", member)
                if hasattr(fn, "__defaults__"):
                    yield fn
        elif hasattr(obj, "__defaults__"):
            yield getattr(obj, "__wrapped__", obj)
            yield obj


def _captured_defaults(original: Any) -> list[tuple[Any, str, Any]]:
    """(function, "__defaults__" or "__kwdefaults__", value) holding ``original``."""
    found = []
    seen: set[int] = set()
    for name, module in list(sys.modules.items()):
        if module is None or not name.startswith("mlsys"):
            continue
        for fn in _functions(module):
            if id(fn) in seen:
                continue
            seen.add(id(fn))
            for attr in ("__defaults__", "__kwdefaults__"):
                values = getattr(fn, attr, None)
                if not values:
                    continue
                items = values.values() if isinstance(values, dict) else values
                if any(v is original for v in items):
                    found.append((fn, attr, values))
    return found


def _mean_abs(cases: Sequence[Case]) -> float:
    return statistics.fmean(abs(c.rel_error) for c in cases) if cases else float("nan")


def suite_errors(cases: Sequence[Case]) -> dict[str, float]:
    """Mean and maximum |relative error| of the suite's two-sided cases.

    Parameters
    ----------
    cases : sequence of Case
        Usually :func:`mlsys.validation.run_all`.

    Returns
    -------
    dict
        ``training_mean``, ``training_max``, ``serving_mean``, ``serving_max`` over the
        two-sided (``bound is None``) performance-model cases of the ``Training`` and
        ``Serving`` groups, ``all_mean`` over every two-sided case, and the counts
        ``training_n``, ``serving_n``. Fractions (0.05 is 5%). A measurement its own
        publisher reports as misconfigured (``Case.publisher_reports_misconfigured``) is
        in none of them.
    """
    two_sided = [c for c in cases if c.bound is None and not c.publisher_reports_misconfigured]
    perf = [c for c in two_sided if c.method == "performance model"]
    train = [c for c in perf if c.group.startswith("Training")]
    serve = [c for c in perf if c.group.startswith("Serving")]
    return {
        "training_mean": _mean_abs(train),
        "training_max": max((abs(c.rel_error) for c in train), default=float("nan")),
        "training_n": float(len(train)),
        "serving_mean": _mean_abs(serve),
        "serving_max": max((abs(c.rel_error) for c in serve), default=float("nan")),
        "serving_n": float(len(serve)),
        "all_mean": _mean_abs(two_sided),
    }


def sensitivity(
    constants: Sequence[Constant] | None = None,
    factors: Sequence[float] = FACTORS,
    suite: Callable[[], list[Case]] | None = None,
) -> list[dict[str, Any]]:
    """The suite's mean errors with each constant scaled by each factor, one at a time.

    Parameters
    ----------
    constants : sequence of Constant, optional
        Default :data:`CONSTANTS`.
    factors : sequence of float
        Multipliers applied to each constant in turn (default 0.8 and 1.2).
    suite : callable, optional
        Returns the cases to score (default :func:`mlsys.validation.run_all`).

    Returns
    -------
    list of dict
        One row per constant: ``name``, ``source``, ``value`` (as printed), ``base``
        (:func:`suite_errors` unperturbed) and ``moved`` (``{factor: suite_errors}``).
    """
    if suite is None:
        from mlsys.validation import run_all as suite
    constants = CONSTANTS if constants is None else constants
    clear_solver_caches()
    base = suite_errors(suite())
    rows = []
    for constant in constants:
        moved = {}
        for factor in factors:
            with perturbed(constant, factor):
                moved[factor] = suite_errors(suite())
        rows.append(
            {
                "name": constant.name,
                "source": constant.source,
                "value": constant.describe(),
                "base": base,
                "moved": moved,
            }
        )
    return rows


def _pp(delta: float) -> str:
    """A change of a mean error in percentage points, signed."""
    return f"{delta * 100:+.1f}"


def markdown_table(rows: Sequence[dict[str, Any]]) -> str:
    """The sensitivity rows as a Markdown table (percentage points of mean |error|).

    Parameters
    ----------
    rows : sequence of dict
        :func:`sensitivity`'s output.

    Returns
    -------
    str
        A header line stating the unperturbed means, then one row per constant with the
        change of the training, serving and all-case mean |error| at each factor.
    """
    if not rows:
        return ""
    base = rows[0]["base"]
    factors = list(rows[0]["moved"])
    head = "| constant | value | source |"
    rule = "|---|---|---|"
    for f in factors:
        tag = f"{(f - 1) * 100:+.0f}%"
        head += f" training {tag} | serving {tag} | all {tag} |"
        rule += "---:|---:|---:|"
    lines = [
        f"Unperturbed: training mean |error| {base['training_mean']:.1%} "
        f"(max {base['training_max']:.1%}, {base['training_n']:.0f} cases), serving "
        f"{base['serving_mean']:.1%} (max {base['serving_max']:.1%}, "
        f"{base['serving_n']:.0f} cases), all two-sided cases {base['all_mean']:.1%}. "
        "Cells: change of the mean |error| in percentage points.",
        "",
        head,
        rule,
    ]
    for r in rows:
        cells = f"| {r['name']} | {r['value']} | {r['source']} |"
        for f in factors:
            m = r["moved"][f]
            cells += (
                f" {_pp(m['training_mean'] - base['training_mean'])}"
                f" | {_pp(m['serving_mean'] - base['serving_mean'])}"
                f" | {_pp(m['all_mean'] - base['all_mean'])} |"
            )
        lines.append(cells)
    return "\n".join(lines)


_EFF = "mlsys.core.solvers.efficiency"
_COLL = "mlsys.core.formulas.collectives"

CONSTANTS: tuple[Constant, ...] = (
    Constant(
        "GEMM compute fraction of dense peak, GPU (bf16/fp16)",
        _EFF,
        "COMPUTE_EFFICIENCY",
        "gpu",
        "Maximum achievable matmul FLOPS (Bekman, *ML Engineering*: A100 85.9%, H100 "
        "80.1%) less shape losses; set so Korthikanti et al. (2022) Table 5 sits inside "
        "(**fit**)",
    ),
    Constant(
        "matmul ceiling of the device the GEMM fraction was fitted on (A100)",
        _EFF,
        "REFERENCE_MATMUL_CEILING",
        None,
        "Bekman, *ML Engineering*, MAMF table: A100 SXM 267.9 of 312 TFLOP/s; a device "
        "with its own measured ceiling gets the GPU fraction × its ceiling / this",
    ),
    Constant(
        "narrow-format (fp8/int8) compute factor",
        _EFF,
        "_NARROW_FACTOR",
        None,
        "estimate: 0.65/0.75 for the scaling and cast kernels around each FP8 GEMM",
    ),
    Constant(
        "HBM streaming fraction of peak, GPU",
        _EFF,
        "MEMORY_EFFICIENCY",
        "gpu",
        "Jia et al. (2018), V100 microbenchmarks: 750 of 900 GB/s (83%)",
    ),
    Constant(
        "network efficiency, scale-up (NVLink)",
        "mlsys.core.solvers._layout",
        "NETWORK_EFFICIENCY",
        "scale-up",
        "nccl-tests `doc/PERFORMANCE.md` bus bandwidth on DGX A100 (≈ 230–240 of 300 GB/s)",
    ),
    Constant(
        "network efficiency, scale-out (InfiniBand/RoCE)",
        "mlsys.core.solvers._layout",
        "NETWORK_EFFICIENCY",
        "scale-out",
        "NIC line rate delivered to NCCL (≈ 90%)",
    ),
    Constant(
        "NVLink wire efficiency of a collective's payload",
        _COLL,
        "NVLINK_WIRE_EFFICIENCY",
        None,
        "Jeaugey (NCCL), NVIDIA/nccl-tests issue 212: ≈ 370 of 450 GB/s busbw on H100",
    ),
    Constant(
        "NVLink SHARP all-reduce algorithm bandwidth fraction",
        _COLL,
        "NVLS_ALGORITHM_BANDWIDTH_FRACTION",
        None,
        "NVIDIA/nccl-tests issue 212, NVIDIA/nccl issue 1455: ≈ 275 of 450 GB/s on 8 H100",
    ),
    Constant(
        "NCCL LL protocol share of bus bandwidth (all-reduce)",
        _COLL,
        "NCCL_PROTOCOL_BANDWIDTH_FRACTION",
        "LL",
        "NCCL 2.18.6 `src/graph/tuning.cc` (`ncclTopoTuneModel`): LL busBw × 1/4",
    ),
    Constant(
        "NCCL LL bus-bandwidth cap on one node",
        _COLL,
        "NCCL_LL_MAX_BUS_BANDWIDTH_BPS",
        None,
        "NCCL 2.18.6 `src/graph/tuning.cc` `llMaxBws` (Ampere-N1, Hopper-N1): 87.7 GB/s",
    ),
    Constant(
        "NCCL LL share of bus bandwidth (all-gather / reduce-scatter in one node)",
        _COLL,
        "NCCL_LL_GATHER_FRACTION",
        None,
        "NCCL 2.18.6 `src/graph/tuning.cc`: 1/3 for ring all-gather and reduce-scatter "
        "inside a node",
    ),
    Constant(
        "NCCL ring base latency per protocol",
        _COLL,
        "NCCL_RING_BASE_LATENCY_S",
        None,
        "NCCL `src/graph/tuning.cc` baseLat (Ring LL 6.6, LL128 14, Simple 8.4 µs)",
    ),
    Constant(
        "NCCL ring step latency per link and protocol",
        _COLL,
        "NCCL_RING_STEP_LATENCY_S",
        None,
        "NCCL `src/graph/tuning.cc` hwLat (NVLink LL 0.6 … network Simple 14 µs)",
    ),
    Constant(
        "measured NVLink LL ring step latency (per NVLink generation)",
        _COLL,
        "NCCL_NVLINK_LL_STEP_LATENCY_MEASURED_S",
        None,
        "NVIDIA/nccl-tests issue 123 (DGX A100: 8-128 B all-reduces on 2-8 GPUs, 1.98 µs "
        "per ring step); vllm-project/vllm PR 8558 (8 H100: 1.10 µs per step)",
    ),
    Constant(
        "custom one-shot all-reduce latency (per NVLink generation)",
        "mlsys.core.formulas.peer_allreduce",
        "PEER_ALLREDUCE_LATENCY_MEASURED_S",
        None,
        "vllm-project/vllm PR 24111 (one-stage kernel on 2-6 H100: 6.0 µs); A100 9.7 µs "
        "from the same eager test on both GPUs (sgl-project/sglang PRs 2688 and 2904)",
    ),
    Constant(
        "compute slowdown under overlapped collectives",
        "mlsys.core.formulas.overlap",
        "OVERLAPPED_COMPUTE_SLOWDOWN",
        None,
        "Lee et al. (2025), arXiv:2507.03114: 18.9% average (40.0% maximum) compute "
        "slowdown while communication overlaps it, GPT and LLaMA steps on A100 and H100",
    ),
    Constant(
        "fixed time per kernel",
        "mlsys.core.formulas.overheads",
        "KERNEL_OVERHEAD_S",
        None,
        "Gray (2019): 0.9 µs (streamed) to 6.7 µs (synchronised launches) per kernel",
    ),
    Constant(
        "fixed time per kernel a CUDA graph saves",
        "mlsys.core.formulas.overheads",
        "CUDA_GRAPH_LAUNCH_SAVING_S",
        None,
        "Gray (2019): 3.8 µs a kernel streamed, 3.4 µs replayed from a CUDA graph",
    ),
    Constant(
        "host time per operation of a MoE layer (s)",
        "mlsys.core.formulas.moe",
        "MEGATRON_HOST_TIME_PER_OP_S",
        None,
        "Megatron-Bridge docs/training/cuda-graphs.md: 139 ms a step saved by graphing 72 "
        "operations of 72 layer passes (Qwen3-30B-A3B, H100); not fitted to a suite row",
    ),
    Constant(
        "host time per engine step, vLLM V0 (s)",
        "mlsys.core.formulas.serving",
        "ENGINE_HOST_TIME_PER_STEP_S",
        "vllm_v0",
        "vLLM PR 10933: benchmark_latency.py, Llama-3-8B, batch 1 on an H100, 970.4 ms less "
        "mlsys's device work over 128 engine iterations; not fitted to a suite row",
    ),
    Constant(
        "FlashAttention forward fraction of peak",
        "mlsys.core.formulas.gemm",
        "FLASH_ATTENTION_FORWARD_FRACTION",
        None,
        "Dao (2023), FlashAttention-2, Fig. 4–5: 50–73% of A100 peak",
    ),
    Constant(
        "FlashAttention backward fraction of peak",
        "mlsys.core.formulas.gemm",
        "FLASH_ATTENTION_BACKWARD_FRACTION",
        None,
        "Dao (2023), FlashAttention-2, Fig. 6: ≈ 55–63% of A100 peak",
    ),
    Constant(
        "fused attention fractions of peak on Hopper and later (forward / backward)",
        "mlsys.core.formulas.gemm",
        "HOPPER_FUSED_ATTENTION_FRACTIONS",
        None,
        "Shah et al. (2024), FlashAttention-3, Fig. 5–6: cuDNN 600 and 518 of 989 "
        "TFLOP/s on H100 (head dim 128, 8k tokens); B200 takes them for want of a "
        "Blackwell sweep",
    ),
    Constant(
        "FlashAttention-2 fractions of peak on Hopper (forward / backward)",
        "mlsys.core.formulas.gemm",
        "HOPPER_FLASH_ATTENTION_2_FRACTIONS",
        None,
        "Shah et al. (2024), FlashAttention-3, Fig. 5–6: FlashAttention-2 370 and 318 of "
        "989 TFLOP/s on H100 (head dim 128, 8k tokens); read only with "
        "attention_kernel='flash2' or 'flash1' (the MPT rows)",
    ),
    Constant(
        "FlashAttention-2's speed-up over FlashAttention-1-generation kernels",
        "mlsys.core.formulas.gemm",
        "FLASH_ATTENTION_2_SPEEDUP_OVER_1",
        None,
        "Dao (2023), FlashAttention-2, abstract ('around 2x speedup compared to "
        "FlashAttention'; Sec. 4.1: 1.7-3.0x); read only with attention_kernel='flash1' "
        "(the MPT rows: llm-foundry's Triton kernel)",
    ),
    Constant(
        "extra time of attention dropout in a fused kernel on an A100 (share, by length)",
        "mlsys.core.formulas.gemm",
        "FLASH_ATTENTION_1_DROPOUT_EXTRA_TIME",
        None,
        "Dao et al. (2022), FlashAttention, App. E.6, Tables 15-20 (A100, dropout 0.1: "
        "17-25% from 2k tokens up); FlashAttention-2 charged the same (no measurement of its "
        "own); read by runs with dropout on Ampere (the FlashAttention-2 paper's GPT rows)",
    ),
    Constant(
        "fixed work of one row of query tiles of a causal fused attention kernel (tiles)",
        "mlsys.core.formulas.gemm",
        "CAUSAL_ROW_OVERHEAD_TILES",
        None,
        "least-squares fit to cuDNN's causal / unmasked throughput ratios at head dim 128, "
        "2k-64k tokens (NVIDIA/cudnn-frontend benchmark results: H100-class, GB200, GB300); "
        "kernel benchmarks, not fitted to a suite row; read by every causal pass of a "
        "GPU's FlashAttention-2-generation or later kernel",
    ),
    Constant(
        "per-GPU failure rates (per component)",
        "mlsys.core.solvers.reliability",
        "DEFAULT_FAILURE_RATES",
        None,
        "Dubey et al. (2024), Llama 3, Table 5: 419 interruptions / (16,384 GPUs × 54 "
        "days) (**fit**)",
    ),
)
"""The calibration constants the sensitivity table covers."""


if __name__ == "__main__":  # python -m mlsys.validation.sensitivity > table.md
    print(markdown_table(sensitivity()))
