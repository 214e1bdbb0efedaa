"""The training step as a tree of its terms, and what each input does to it (private).

:func:`step_tree` turns the terms :func:`mlsys.core.solvers._layout.evaluate` summed into
the step time (its keys starting ``"term."``, grouped by
:data:`~mlsys.core.solvers._layout.STEP_TERMS`) into a :class:`~mlsys.core.terms.Term`
tree with each term's name, formula and inputs. No value is computed here: the tree's
root is the step time, added up in the same order as the solver added it.

:func:`step_sensitivity` re-runs the same :func:`~mlsys.core.solvers._layout.evaluate`
with one input of the problem scaled, and reports the elasticity of the step time.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from mlsys.core.errors import ParameterError
from mlsys.core.solvers._layout import STEP_TERMS, TERM_PREFIX, Problem, evaluate
from mlsys.core.terms import Term

__all__ = [
    "step_tree", "step_sensitivity", "memory_tree", "decode_tree", "prefill_tree",
    "SENSITIVITY_INPUTS",
]  # fmt: skip

_F = "mlsys.core.formulas"
# key -> (name, formula and citation, what it runs beside)
_INFO: dict[str, tuple[str, str, str]] = {
    "compute": ("compute", "busiest device, all micro-batches", ""),
    "layers": ("transformer layers", "layers on the busiest device × micro-batches", ""),
    "gemm": (
        "weight GEMMs",
        f"2·N·T/t FLOP a pass at peak·η, tile and wave losses: {_F}.layer_time."
        "linear_layers_time (NVIDIA GEMM guide)",
        "",
    ),
    "attention": (
        "attention core",
        f"fused kernel at its measured fractions of peak: {_F}.gemm.attention_time (Dao 2023)",
        "",
    ),
    "elementwise": (
        "element-wise kernels",
        "norms, bias-dropout-residual, activation, rotary at HBM·η "
        "(Korthikanti et al. 2022, Sec. 4)",
        "",
    ),
    "fp8_casts": ("FP8 casts", f"{_F}.layer_time.fp8_cast_bytes (Transformer Engine)", ""),
    "kernel_overhead": (
        "kernel overheads",
        f"{_F}.overheads.kernels_per_layer × KERNEL_OVERHEAD_S",
        "",
    ),
    "cp_merge": (
        "context-parallel merges",
        f"{_F}.layer_time.ring_attention_merge_bytes at HBM·η: the ring's partial outputs "
        "and gradients rescaled and added step by step (Transformer Engine)",
        "",
    ),
    "lm_head": (
        "output layer and logits",
        f"{_F}.layer_time.output_layer_time: 2·V·h·T/t FLOP ×3 at peak·η, fp32 logits "
        "at HBM·η (Narayanan et al. 2021, Eq. 3)",
        "",
    ),
    "grad_accumulation": (
        "gradient accumulation kernels",
        f"{_F}.layer_time.gradient_accumulation_bytes",
        "",
    ),
    "fsdp_copies": (
        "FSDP buffer copies",
        f"{_F}.layer_time.fsdp_flat_gradient_bytes, fsdp_per_parameter_copy_bytes",
        "",
    ),
    "optimizer": (
        "optimizer step",
        f"{_F}.memory.optimizer_step_time: owned parameters × "
        f"{_F}.memory.optimizer_step_bytes_per_param at HBM·η (Megatron mixed precision)",
        "",
    ),
    "communication": ("communication, exposed", "what overlap leaves on the critical path", ""),
    "tp": (
        "tensor-parallel collectives (TP)",
        f"{_F}.collectives.nccl_allreduce_time (NCCL cost model); "
        f"{_F}.parallel.tp_reductions_per_layer",
        "",
    ),
    "cp": (
        "context-parallel K/V exchange (CP)",
        f"{_F}.collectives.p2p_time ring (Liu et al. 2023, Sec. 3)",
        "attention blocks",
    ),
    "ep": (
        "expert-parallel all-to-alls (EP)",
        f"{_F}.collectives.multinode_alltoall_time",
        "",
    ),
    "pp": (
        "pipeline sends (PP)",
        f"{_F}.collectives.p2p_time (Narayanan et al. 2021, Sec. 4.1)",
        "",
    ),
    "data_parallel": ("data-parallel gradients (DP)", "gradient reduction and ZeRO gathers", ""),
    "dp": (
        "gradient reduction, exposed",
        f"{_F}.collectives ring / hierarchical all-reduce, reduce-scatter, all-gather",
        "the backward pass",
    ),
    "tied_embedding": (
        "tied-embedding all-reduce",
        f"{_F}.collectives.ring_allreduce_time (Megatron-LM finalize_model_grads)",
        "",
    ),
    "overlap_slowdown": (
        "slowdown beside hidden communication",
        f"{_F}.overlap.OVERLAPPED_COMPUTE_SLOWDOWN (Lee et al. 2025)",
        "",
    ),
    "cp_overlap_slowdown": (
        "slowdown beside the hidden CP exchange",
        f"{_F}.overlap.overlap_slowdown_time of the context-parallel K/V ring hidden under "
        "attention, OVERLAPPED_COMPUTE_SLOWDOWN (Lee et al. 2025)",
        "",
    ),
    "moe_host": ("MoE host work", f"{_F}.moe.moe_layer_host_time", ""),
    "bubble": (
        "pipeline bubble",
        f"{_F}.pipeline.interleaved_bubble_ratio: (p − 1)/(v·m) of the micro-batches "
        "(Narayanan et al. 2021)",
        "",
    ),
}


_MATERIALISED_ATTENTION = (
    "roofline of 4·s·d·T/t FLOP and (6e + 1) bytes per materialised score a pass "
    "(Korthikanti et al. 2022, Sec. 4)"
)


def _fabric(nodes: Any, intra: str, inter: str) -> str:
    return inter if float(nodes) > 1.0 else intra


def _inputs(key: str, out: dict[str, Any], P: Problem, sizes: dict[str, Any]) -> dict[str, str]:
    """The inputs a term's formula used, as short display strings."""
    tp, pp, m, v = sizes["tp"], sizes["pp"], sizes["m"], sizes["v"]
    tokens = P.s * out["microbatch_size"] / sizes["cp"]
    if key == "layers":  # its terms' inputs too
        return {
            "tokens per micro-batch": f"{tokens:,.0f}",
            "layers": f"{out['layers_per_device']:g} × {m:g} micro-batches",
            "tp": f"{tp:g}",
        }
    if key == "tp":
        return {"tp": f"{tp:g}", "message": f"{tokens * P.h * P.e_act / 1e6:.3g} MB"}
    if key in ("pp", "bubble"):
        return {"pp": f"{pp:g}", "v": f"{v:g}", "micro-batches": f"{m:g}"}
    if key in ("dp", "data_parallel"):
        return {"dp": f"{sizes['dp']:g}", "zero": f"{sizes['zero']:g}"}
    if key == "optimizer":
        return {"bytes per parameter": f"{P.opt_step_bytes:g}"}
    return {}


def step_tree(
    out: dict[str, Any],
    P: Problem,
    sizes: dict[str, Any],
    intra_fabric: str = "scale-up",
    inter_fabric: str = "scale-out",
) -> Term:
    """The step time of one :func:`~mlsys.core.solvers._layout.evaluate` as a tree.

    Parameters
    ----------
    out : dict
        What ``evaluate`` returned for one layout (floats).
    P : Problem
        The problem it priced.
    sizes : dict
        ``tp, pp, dp, ep, cp, m, v, zero`` of the layout.
    intra_fabric, inter_fabric : str
        Names of the node's and the network's fabrics, for the collectives' labels.

    Returns
    -------
    Term
        Root ``"step time"`` in s, whose value is ``out["step_time"]`` exactly (every
        group summed in the solver's order); terms that are zero and hide nothing left
        out (a zero adds nothing to a sum, so the sums are unchanged).
    """
    fabrics = {
        "tp": _fabric(out["tp_nodes"], intra_fabric, inter_fabric),
        "cp": _fabric(out["cp_nodes"], intra_fabric, inter_fabric),
        "dp": _fabric(out["dp_nodes"], intra_fabric, inter_fabric),
        "pp": inter_fabric if P.total > P.accelerators_per_node else intra_fabric,
        "ep": inter_fabric if P.total > P.accelerators_per_node else intra_fabric,
    }
    hidden = {
        "cp": out["cp_communication_total"] - out["cp_communication_time"],
        "dp": out["dp_communication_total"]
        - (out[TERM_PREFIX + "dp"] + out[TERM_PREFIX + "tied_embedding"]),
    }

    def node(member: Any) -> Term | None:
        if isinstance(member, str):
            key, kids = member, None
            value = out[TERM_PREFIX + key]
        else:
            key, inner = member
            kids = tuple(k for k in (node(x) for x in inner) if k is not None)
            if not kids:
                return None
        name, source, beside = _INFO[key]
        if key == "attention" and not P.flash:
            source = _MATERIALISED_ATTENTION
        if key in fabrics:
            name = f"{name}, {fabrics[key]}"
        extra = {
            "key": key,
            "source": source,
            "overlaps": beside,
            "hidden": max(float(hidden.get(key, 0.0)), 0.0),
            "inputs": _inputs(key, out, P, sizes),
        }
        if kids is not None:
            return Term(name, _sum(kids), "s", children=kids, **extra)
        if value == 0.0 and not extra["hidden"]:
            return None
        return Term(name, float(value), "s", **extra)

    parts = [t for t in (node(x) for x in STEP_TERMS) if t is not None]
    return Term.tree(
        "step time", "s", parts, key="step_time",
        source="the sum of its terms (mlsys.core.solvers._layout.evaluate)",
    )  # fmt: skip


def _sum(terms: tuple[Term, ...]) -> float:
    total = 0.0
    for t in terms:
        total = total + t.value
    return total


SENSITIVITY_INPUTS: dict[str, tuple[str, ...]] = {
    "peak FLOP/s": ("peak", "peak_attn", "head_flops_s"),
    "HBM bandwidth": ("hbm_bw",),
    "scale-up bandwidth": ("intra_bw", "scaleup_link_Bps"),
    "scale-out bandwidth": ("inter_bw",),
    "scale-up latency": ("intra_lat", "scaleup_ll_step_s"),
    "scale-out latency": ("inter_lat",),
    "kernel overhead": ("kernel_overhead_s",),
    "MoE host time per op": ("host_time_per_op_s",),
}
"""Inputs of :func:`step_sensitivity`: a name and the :class:`Problem` fields it scales
together (the peak FLOP/s of the matmuls, the attention kernel and the output layer; a
fabric's bandwidth as the collectives and NCCL's protocol model read it)."""


def _scaled(P: Problem, fields: tuple[str, ...], factor: float) -> Problem:
    """``P`` with ``fields`` multiplied by ``factor`` (a fresh memo of priced shapes)."""
    changes = {f: getattr(P, f) * factor for f in fields if getattr(P, f) is not None}
    return replace(P, **changes)


def step_sensitivity(
    P: Problem, args: tuple[Any, ...], factor: float | None = None, epsilon: float = 1e-4
) -> dict[str, float]:
    """What each input of the problem does to the step time, re-priced by ``evaluate``.

    Parameters
    ----------
    P : Problem
        The problem solved.
    args : tuple
        The other positional arguments ``evaluate`` was called with (one layout).
    factor : float, optional
        None: the elasticity ``d ln step / d ln x`` of each input ``x`` (a central
        difference over ``x·(1 ± epsilon)``). A factor: the relative change of the step
        time when ``x`` is multiplied by it (``-0.1`` = 10% faster).
    epsilon : float
        Relative step of the central difference.

    Returns
    -------
    dict of str to float
        Input name (:data:`SENSITIVITY_INPUTS`) to elasticity or relative change, inputs
        the step does not use (an unused fabric, a dense model's MoE host time) left out.

    Raises
    ------
    ParameterError
        For a factor or epsilon that is not a positive number (epsilon below 0.5).
    """
    if factor is not None and not (isinstance(factor, (int, float)) and factor > 0.0):
        raise ParameterError("factor", factor, "None or a positive number")
    if not (isinstance(epsilon, float) and 0.0 < epsilon < 0.5):
        raise ParameterError("epsilon", epsilon, "a float in (0, 0.5)")
    step = float(evaluate(P, *args)["step_time"])
    result = {}
    for name, fields in SENSITIVITY_INPUTS.items():
        if factor is None:
            up = float(evaluate(_scaled(P, fields, 1.0 + epsilon), *args)["step_time"])
            down = float(evaluate(_scaled(P, fields, 1.0 - epsilon), *args)["step_time"])
            value = math.log(up / down) / math.log((1.0 + epsilon) / (1.0 - epsilon))
        else:
            value = float(evaluate(_scaled(P, fields, float(factor)), *args)["step_time"]) / step
            value -= 1.0
        if value != 0.0:
            result[name] = value
    return result


_MEMORY_INFO: dict[str, tuple[str, str]] = {
    "model_state": (
        "model states",
        "weights, gradients and optimizer state: what ZeRO partitions (Rajbhandari et al. "
        "2020, Sec. 3.1)",
    ),
    "weights": (
        "weights",
        f"parameters held after the TP/PP/EP split and ZeRO-3 sharding: "
        f"{_F}.memory.zero_model_state_breakdown",
    ),
    "gradients": (
        "gradients",
        f"gradient buffer at grad_dtype, ZeRO-2/3 sharded: {_F}.memory.zero_model_state_breakdown",
    ),
    "optimizer": (
        "optimizer state",
        f"fp32 master weights and moments, ZeRO-1+ sharded: "
        f"{_F}.memory.optimizer_state_bytes_per_param",
    ),
    "activations": (
        "activations",
        f"per layer (Korthikanti et al. 2022, Table 2: {_F}.memory.activation_bytes_per_layer) "
        "× layers × micro-batches in flight × interleaving, plus embedding buffers",
    ),
    "kv_cache": ("KV cache", f"{_F}.transformer.kv_cache_bytes: 2·layers·kv heads·d_head·tokens·e"),
    "framework_overhead": (
        "framework overhead",
        "runtime buffers and fragmentation: mlsys.core.solvers.memory.default_framework_overhead",
    ),
}


def memory_tree(parts: dict[str, float], inputs: dict[str, str] | None = None) -> Term:
    """Memory per accelerator as a tree: the model states (weights, gradients, optimizer
    state), activations, KV cache and framework overhead, in the order a solver adds them,
    so the root is its total exactly; zero parts left out.

    Parameters
    ----------
    parts : dict of str to float
        ``weights, gradients, optimizer, activations`` and optionally ``kv_cache,
        framework_overhead``, in bytes, in the order the solver summed them.
    inputs : dict of str to str, optional
        What the root shows as its inputs (capacity, layout).

    Returns
    -------
    Term
        Root ``"memory per accelerator"`` in bytes.
    """

    def leaf(key: str) -> Term | None:
        value = float(parts.get(key, 0.0))
        if value == 0.0:
            return None
        name, source = _MEMORY_INFO[key]
        return Term(name, value, "byte", key=key, source=source)

    state = [t for t in (leaf(k) for k in ("weights", "gradients", "optimizer")) if t]
    rest = [t for t in (leaf(k) for k in ("activations", "kv_cache", "framework_overhead")) if t]
    name, source = _MEMORY_INFO["model_state"]
    group = [(name, state, {"key": "model_state", "source": source})] if state else []
    return Term.tree(
        "memory per accelerator", "byte", [*group, *rest], key="total",
        source="the sum of its parts", inputs=inputs or {},
    )  # fmt: skip


_DECODE_INFO: dict[str, tuple[str, str]] = {
    "embedding": ("embedding gather", "one row of h values read and written per token, at HBM"),
    "layers": (
        "transformer layers",
        f"{_F}.layer_time.transformer_layer_time: weight reads, KV-cache reads, kernel costs",
    ),
    "lm_head": ("LM head", f"{_F}.gemm.gemm_time of the vocabulary projection"),
    "tp": (
        "tensor-parallel all-reduces (TP)",
        f"{_F}.collectives.nccl_allreduce_time or the engine's peer all-reduce "
        f"({_F}.peer_allreduce.peer_allreduce_time)",
    ),
    "pp": ("pipeline sends (PP)", "a point-to-point hop per stage boundary"),
    "host": (
        "engine host work, exposed",
        f"{_F}.serving.engine_step_time less the device's time (the engine's measured host "
        "time per step)",
    ),
}


def _serving_tree(
    info: dict[str, tuple[str, str]],
    root: str,
    key: str,
    terms: dict[str, float],
    inputs: dict[str, str] | None,
) -> Term:
    """The serving solver's named terms, in its order and without the zero ones, under a
    root that is their sum (what it returned)."""
    parts = [
        Term(info[k][0], float(v), "s", key=k, source=info[k][1])
        for k, v in terms.items()
        if v != 0.0
    ]
    return Term.tree(root, "s", parts, key=key, source="the sum of its terms", inputs=inputs or {})


def decode_tree(terms: dict[str, float], inputs: dict[str, str] | None = None) -> Term:
    """One decode step (time per output token) as a tree of the terms the serving solver
    summed, in its order, so the root is its ``itl`` exactly; zero terms left out.

    Parameters
    ----------
    terms : dict of str to float
        ``embedding, layers, lm_head, tp, pp, host`` in s.
    inputs : dict of str to str, optional
        What the root shows as its inputs.

    Returns
    -------
    Term
        Root ``"time per output token"`` in s.
    """
    return _serving_tree(_DECODE_INFO, "time per output token", "itl", terms, inputs)


_PREFILL_INFO: dict[str, tuple[str, str]] = {
    **_DECODE_INFO,
    "embedding": (
        "embedding gather",
        "one row of h values read and written per prompt token, at HBM",
    ),
    "layers": (
        "transformer layers",
        f"{_F}.layer_time.transformer_layer_time over the prompt: GEMMs, causal attention, "
        "kernel costs",
    ),
    "lm_head": (
        "LM head",
        f"{_F}.gemm.gemm_time of the vocabulary projection of each sequence's last position",
    ),
    "pp": ("pipeline sends (PP)", "one point-to-point hop of the prompt's activations per stage"),
}


def prefill_tree(terms: dict[str, float], inputs: dict[str, str] | None = None) -> Term:
    """One prefill pass (time to first token) as a tree of the terms the serving solver
    summed, in its order, so the root is its ``ttft`` exactly; zero terms left out.

    Parameters
    ----------
    terms : dict of str to float
        ``embedding, layers, lm_head, tp, pp, host`` in s.
    inputs : dict of str to str, optional
        What the root shows as its inputs.

    Returns
    -------
    Term
        Root ``"time to first token"`` in s.
    """
    return _serving_tree(_PREFILL_INFO, "time to first token", "ttft", terms, inputs)
