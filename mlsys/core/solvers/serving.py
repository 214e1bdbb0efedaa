"""LLM serving on one model replica: time to first token, inter-token latency, memory.

:class:`ServingModel` answers "how fast does this model answer on this hardware?" for a
static batch of requests: prefill (compute-bound), then decode steps (memory-bound at
small batch), each priced kernel by kernel — every GEMM its own roofline with its tile
and wave quantisation, attention by its fused kernel, the element-wise kernels' traffic
and a fixed cost per kernel (:func:`mlsys.core.formulas.layer_time.transformer_layer_time`)
at the library's default fractions of peak (:mod:`mlsys.core.solvers.efficiency`) —
plus the tensor-parallel all-reduces and pipeline hops on the scale-up fabric.

The physics, stated once:

* **Weights** are stored once per replica, split over ``tp_size × pp_size`` devices.
  A decode step reads every weight it touches once, shared by the whole batch; an MoE
  step touches the dense part plus the experts the batch routes to
  (:func:`~mlsys.core.formulas.serving.expected_active_experts`).
* **KV cache**: ``2·l·n_kv·d_head`` values per token (GQA/MQA-aware), split by tensor
  parallelism over KV heads (replicated when ``tp_size > kv_heads``) and by pipeline
  stages over layers. Each decode step reads each sequence's whole cache — once per KV
  head by default, or ``⌈group / heads per block⌉`` times when the engine's decode kernel
  serves fewer query heads per thread block than share a KV head
  (``decode_attention_heads_per_block``;
  :func:`~mlsys.core.formulas.serving.decode_kv_reads`).
* **Gated MLP**: the gate and up projections run as one GEMM of width ``2f/t``
  (vLLM's merged column-parallel linear, TensorRT-LLM's ``--use_fused_mlp``), or, for
  an engine that keeps them apart (``gate_up_fused=False``: lmdeploy v0.1 with 16-bit
  weights), as two GEMMs of width ``f/t`` — each with its own tile and wave
  quantisation — and one more kernel.
* **FLOPs**: ``2·N_active`` per token plus attention (causal in prefill, full context
  in decode); prefill computes logits for the last position only. They are reported;
  the time is the sum of the kernels (a decode token's GEMMs are padded to 16 rows, not
  to a 256-row tile, and stream their weights).
* **Tensor parallelism** (Megatron): two all-reduces of ``tokens × h`` activations per
  layer (one in a parallel attention/MLP block, ``TransformerWorkload.parallel_block``:
  :func:`mlsys.core.formulas.parallel.tp_forward_reductions_per_layer`), as NCCL runs
  them — the protocol its tuning model rates fastest (LL for a decode step's few
  kilobytes), NVLink SHARP on NVSwitch-3 nodes
  (:func:`mlsys.core.formulas.collectives.nccl_allreduce_time`), with LL's ring steps
  at their measured latency on A100 and H100 NVLink
  (:data:`~mlsys.core.formulas.collectives.NCCL_NVLINK_LL_STEP_LATENCY_MEASURED_S`) —
  not overlapped with compute. ``tp_allreduce="custom"`` prices instead the one-shot /
  two-shot peer-read kernels inference engines run inside an NVLink node
  (:mod:`mlsys.core.formulas.peer_allreduce`).
* **Pipeline parallelism**: one request's prefill crosses every stage in turn (TTFT
  grows by ``pp_size − 1`` point-to-point hops); decoding splits the batch into
  ``min(pp_size, batch)`` micro-batches that circulate through the stages, so a token
  takes ``max(micro-batches, stages)`` stage times.

Scheduling assumption for TTFT: by default a request's prefill runs alone (the request
arrives at an idle server, or the engine prioritises prefills, as vLLM does), so
**TTFT is one request's prefill, not the whole batch's**. ``batched_prefill=True``
prefills the batch in one pass and reports that pass as TTFT. Queueing delay is not
included here; :class:`mlsys.core.solvers.batching.ContinuousBatchingModel` adds it.

References
----------
Pope et al. (2022), "Efficiently Scaling Transformer Inference", MLSys 2023.
Shoeybi et al. (2019), "Megatron-LM", arXiv:1909.08053.
Williams, Waterman & Patterson (2009), "Roofline", CACM 52(4).
Kwon et al. (2023), "Efficient Memory Management for Large Language Model Serving with
PagedAttention", SOSP 2023.
NVIDIA, "Matrix Multiplication Background User's Guide" (tile and wave quantisation).
NVIDIA NCCL, ``src/graph/tuning.cc`` (protocol latencies).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, ClassVar

from mlsys.core.catalog.engines import DEFAULT_ENGINE, serving_engine
from mlsys.core.checks import count, flag
from mlsys.core.errors import InfeasibleError, ParameterError
from mlsys.core.formulas.collectives import (
    NCCL_NVLINK_LL_STEP_LATENCY_MEASURED_S,
    nccl_allreduce_time,
    p2p_time,
)
from mlsys.core.formulas.gemm import gemm_time
from mlsys.core.formulas.layer_time import (
    FP8_STATIC_SCALING_CAST_BYTES,
    transformer_layer_kernel_times,
    transformer_layer_time,
)
from mlsys.core.formulas.overheads import (
    CUDA_GRAPH_LAUNCH_SAVING_S,
    KERNEL_OVERHEAD_S,
    graph_replayed_kernel_overhead,
)
from mlsys.core.formulas.parallel import tp_forward_reductions_per_layer
from mlsys.core.formulas.peer_allreduce import (
    PEER_ALLREDUCE_LATENCY_MEASURED_S,
    peer_allreduce_time,
)
from mlsys.core.formulas.serving import (
    decode_kv_reads,
    decode_kv_reread_bytes,
    engine_step_time,
)
from mlsys.core.formulas.transformer import kv_cache_bytes
from mlsys.core.precision import BYTES_PER_ELEMENT, normalize_precision
from mlsys.core.provenance import record
from mlsys.core.results import Result
from mlsys.core.solvers._explain import decode_tree, prefill_tree
from mlsys.core.solvers._memo import MISSING, IdentityMemo, freeze, identity_memo
from mlsys.core.solvers.efficiency import (
    attention_fractions_unmasked,
    fused_attention_fractions,
    resolve_efficiency,
)
from mlsys.core.solvers.memory import default_framework_overhead
from mlsys.core.terms import Term
from mlsys.core.types import Accelerator, Fabric, Node, TransformerWorkload
from mlsys.core.units import as_si

__all__ = ["ServingModel", "ServingResult"]

DEFAULT_SCALEUP_LATENCY_S = 2e-6
"""Per-step latency assumed for an accelerator's own scale-up links when no Fabric is
given (the figure the catalog's NVLink 3/4 entries carry)."""

DEFAULT_MEMORY_UTILIZATION = None
"""Default memory budget: ``None`` reserves the library's framework allowance
(:func:`mlsys.core.solvers.memory.default_framework_overhead`: a fixed runtime amount
plus a fragmentation fraction of the transient activation workspace; the weights and the
KV cache are allocated once at start-up), as MemoryModel and SingleNodeModel
do. A fraction instead (vLLM's ``gpu_memory_utilization``, 0.9 by default there) gives
the engine that share of device memory for weights, KV cache and activations."""

TP_ALLREDUCE_IMPLEMENTATIONS = ("nccl", "custom")
"""How the engine runs its tensor-parallel all-reduces: ``"nccl"`` (NCCL's ring or NVLS,
:func:`mlsys.core.formulas.collectives.nccl_allreduce_time`) or ``"custom"`` (the
one-shot / two-shot peer-read kernels of vLLM, TensorRT-LLM, SGLang and PyTorch's
intra-node communication inside one NVLink node, up to 8 MiB and 8 GPUs, NCCL beyond:
:func:`mlsys.core.formulas.peer_allreduce.peer_allreduce_time`)."""

DEFAULT_TP_ALLREDUCE = "nccl"
"""The all-reduce implementation priced when none is given."""

_LATENCY_FIELDS = (
    "ttft",
    "itl",
    "e2e_latency",
    "prefill_time",
    "tokens_per_second",
    "tokens_per_second_per_accelerator",
    "decode_tokens_per_second",
    "tp_communication_time_prefill",
    "tp_communication_time_decode",
    "pp_communication_time",
    "prefill_mfu",
    "decode_mbu",
)


class ServingResult(Result):
    """What :meth:`ServingModel.solve` returns (every time field is per replica).

    Attributes
    ----------
    ttft : Quantity [s] or None
        Time to first token of one request: its prefill (the whole batch's when
        ``batched_prefill=True``), including pipeline hops; no queueing.
        ``None`` when infeasible.
    itl : Quantity [s] or None
        Inter-token latency (time per output token) at the mean context of the
        generation, prompt plus half the output. Alias ``time_per_output_token``.
    e2e_latency : Quantity [s] or None
        ``ttft + (output_len − 1) · itl``: one request from start of prefill to its
        last token.
    prefill_time : Quantity [s] or None
        Prefill of the whole batch (one pass, pipelined over stages): the cost a static
        batch pays before decoding.
    tokens_per_second : Quantity [token/s] or None
        Output tokens per second of the replica over a static-batch cycle:
        ``batch · output_len / (prefill_time + (output_len − 1) · itl)``.
    tokens_per_second_per_accelerator : Quantity [token/s] or None
        The same divided by ``tp_size · pp_size``.
    decode_tokens_per_second : Quantity [token/s] or None
        Steady decode rate ``batch / itl`` (prefill excluded).
    tp_communication_time_prefill, tp_communication_time_decode : Quantity [s] or None
        Tensor-parallel all-reduce time inside one request's prefill and inside one
        decode token's latency.
    pp_communication_time : Quantity [s] or None
        Pipeline point-to-point time on one token's path (decode).
    prefill_mfu : float or None
        Model FLOPs of one request's prefill over (TTFT × peak × devices).
    decode_mbu : float or None
        Memory-bandwidth utilisation of decode: bytes a step must move over
        (ITL × peak bandwidth × devices).
    prefill_flops, decode_flops_per_step : Quantity [FLOP]
        Work of one request's prefill and of one decode step of the whole batch.
    prefill_bytes, decode_bytes_per_step : Quantity [byte]
        HBM traffic of the same (weights, KV cache, activations), whole replica.
    prefill_intensity, decode_intensity : Quantity [FLOP/byte]
        Their arithmetic intensities.
    prefill_bound, decode_bound : {"compute", "memory"}
        Which roof limits each phase on this hardware.
    weight_bytes_per_accelerator : Quantity [byte]
        Weights stored on one device.
    kv_cache_bytes_per_accelerator : Quantity [byte]
        KV cache of the batch at the final length ``prompt_len + output_len``.
    activation_bytes_per_accelerator : Quantity [byte]
        Transient activation workspace of the largest prefill pass (estimate).
    memory_per_accelerator : Quantity [byte]
        Weights, KV cache, activations and framework overhead.
    framework_overhead_per_accelerator : Quantity [byte]
        Runtime buffers and allocator fragmentation (the library's allowance), or the
        share of memory ``memory_utilization`` leaves to them.
    memory_available_per_accelerator : Quantity [byte]
        Bytes the weights, KV cache and activations may occupy.
    max_batch_size : int
        Largest batch whose KV cache fits next to the weights (0 if none).
    batch_size, accelerators : int
        The batch solved for and ``tp_size · pp_size``.
    feasible : bool
        Whether the configuration fits (and is valid on this hardware).
    infeasibility_reason : str or None
        Why not.
    precision, activation_precision, kv_precision, compute_precision : str
        Weight storage, activations and all-reduces, KV cache, and the tensor-core
        precision whose peak is used.
    scheduling : str
        ``"single-request prefill"`` or ``"batched prefill"``: what TTFT means.
    parallelism : dict
        ``{"tp": tp_size, "pp": pp_size}``.
    engine : str
        The engine row whose kernels and loop priced the solve
        (``mlsys/core/catalog/data/engines.toml``): ``"reference"`` by default, the
        kernels of vLLM, SGLang and TensorRT-LLM from 2024 on without their host time;
        ``ServingModel(engine=...)`` names another.
    """

    @property
    def error_band(self) -> float | None:
        """Expected relative error of ``itl`` (a fraction): nine in ten published
        decode steps from sources mlsys was not tuned on came out within ± this
        (:mod:`mlsys.core.catalog.bands`, from :mod:`mlsys.validation.loso`); ``None``
        where no comparable cases exist. ``fmt(res.itl, band=True)`` prints it."""
        band = self._band()
        return None if band is None else band.fraction

    @property
    def error_band_source(self) -> str | None:
        """Where :attr:`error_band` comes from: the kind of case, how many, their mean."""
        band = self._band()
        return None if band is None else band.source

    def _band(self) -> Any:
        from mlsys.core.catalog.bands import result_error_band

        return result_error_band(self._origin, "ServingModel", "itl")

    _units: ClassVar[dict[str, str | None]] = {
        "ttft": "s",
        "itl": "s",
        "e2e_latency": "s",
        "prefill_time": "s",
        "tokens_per_second": "token/s",
        "tokens_per_second_per_accelerator": "token/s",
        "decode_tokens_per_second": "token/s",
        "tp_communication_time_prefill": "s",
        "tp_communication_time_decode": "s",
        "pp_communication_time": "s",
        "prefill_mfu": None,
        "decode_mbu": None,
        "prefill_flops": "flop",
        "decode_flops_per_step": "flop",
        "prefill_bytes": "byte",
        "decode_bytes_per_step": "byte",
        "prefill_intensity": "flop/byte",
        "decode_intensity": "flop/byte",
        "prefill_bound": None,
        "decode_bound": None,
        "weight_bytes_per_accelerator": "byte",
        "kv_cache_bytes_per_accelerator": "byte",
        "activation_bytes_per_accelerator": "byte",
        "memory_per_accelerator": "byte",
        "framework_overhead_per_accelerator": "byte",
        "memory_available_per_accelerator": "byte",
        "max_batch_size": None,
        "batch_size": None,
        "accelerators": None,
        "feasible": None,
        "infeasibility_reason": None,
        "precision": None,
        "activation_precision": None,
        "kv_precision": None,
        "compute_precision": None,
        "scheduling": None,
        "parallelism": None,
        "engine": None,
    }
    _aliases: ClassVar[dict[str, str]] = {
        "time_per_output_token": "itl",
        "tpot": "itl",
        "time_to_first_token": "ttft",
        "inter_token_latency": "itl",
        "latency": "e2e_latency",
        "throughput": "tokens_per_second",
    }

    def explain(self, phase: str = "decode") -> Term:
        """What each millisecond of a token is: for ``"decode"`` a decode step (the
        time per output token), for ``"prefill"`` the time to first token. Either is
        the embedding gather, the transformer layers, the LM head, the tensor-parallel
        all-reduces, the pipeline sends and the engine's host work the device waits
        for — the terms the solver summed into ``itl`` or ``ttft``, so the root is
        that field exactly.

        Parameters
        ----------
        phase : {"decode", "prefill"}
            The decode step (root ``itl``) or one request's prefill pass (root
            ``ttft``; the whole batch's under ``batched_prefill=True``).

        Returns
        -------
        Term
            Root ``"time per output token"`` or ``"time to first token"`` in s;
            renders as a Markdown table in a Quarto cell or notebook, as aligned text
            with ``print``.

        Raises
        ------
        ParameterError
            For a result not made by ``ServingModel.solve``, or an unknown ``phase``.

        Examples
        --------
        >>> from mlsys import Hardware, Models
        >>> res = ServingModel().solve(Models.Llama2_7B, Hardware.H100, batch_size=1)
        >>> res.explain().value == res.si("itl")
        True
        >>> res.explain("prefill").value == res.si("ttft")
        True
        """
        if phase not in ("decode", "prefill"):
            raise ParameterError("phase", phase, "'decode' or 'prefill'")
        priced = self.__dict__.get("_itl_terms" if phase == "decode" else "_ttft_terms")
        if priced is None:
            raise ParameterError("result", type(self).__name__, "a result of ServingModel.solve")
        terms, tp, pp = priced
        inputs = {"tp": f"{tp:g}", "pp": f"{pp:g}"}
        return decode_tree(terms, inputs) if phase == "decode" else prefill_tree(terms, inputs)


# ---------------------------------------------------------------------------------
# Per-model constants (floats), cached on the frozen model object
# ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Shape:
    layers: float
    hidden: float
    heads: int
    kv_heads: int
    head_dim: float
    d_attn: float
    vocab: float
    is_moe: bool
    experts: float
    top_k: float
    moe_layers: float
    # parameter groups, already scaled to a given total/active count
    total_params: float
    layers_matmul_active: float  # per token, LM head excluded
    head_params: float  # V·h
    dense_read_params: float  # weights a step always reads (incl. LM head, norms)
    expert_params: float  # one routed expert of one layer
    # activation traffic of one token through one layer, in elements
    act_elems_per_layer: float
    ffn_active_width: float
    ffn_hidden: float  # inner width of the dense MLP, or of one expert
    gated: bool
    shared_experts: float
    tp_reductions: float  # tensor-parallel all-reduces of one layer's forward pass


@identity_memo(objects=1)
def _shape(model: TransformerWorkload) -> _Shape:
    b = model.param_breakdown
    scale_total = model.total_params / b["total"]
    scale_active = model.active_params_per_token / b["active"]
    h = float(model.hidden)
    head_params = float(model.vocab) * h
    moe_layers = float(model.moe_layers)
    experts = float(model.experts)
    expert_params = b["mlp_experts"] / (moe_layers * experts) if model.is_moe else 0.0
    dense_read = (
        b["attention"] + b["mlp_dense"] + b["mlp_shared"] + b["router"] + b["norms"] + head_params
    )
    q = float(model.heads * model.head_dim)  # type: ignore[operator]
    kv = float(model.kv_dim)
    mats = 3.0 if model.gated_mlp else 2.0
    if model.is_moe:
        width = (model.experts_per_token + model.shared_experts) * float(
            model.expert_ffn_hidden  # type: ignore[arg-type]
        )
        dense_l = float(model.dense_layers)
        ffn = (dense_l * float(model.ffn_hidden) + moe_layers * width) / model.layers  # type: ignore[arg-type]
    else:
        ffn = float(model.ffn_hidden)  # type: ignore[arg-type]
    # Inputs read and outputs written by each matmul of a layer, plus attention's q/o.
    act = (h + q + 2 * kv) + (q + h) + (h + (mats - 1) * ffn) + (ffn + h) + 2 * q
    shape = _Shape(
        layers=float(model.layers),
        hidden=h,
        heads=int(model.heads),
        kv_heads=int(model.kv_heads),  # type: ignore[arg-type]
        head_dim=float(model.head_dim),  # type: ignore[arg-type]
        d_attn=q,
        vocab=float(model.vocab),
        is_moe=model.is_moe,
        experts=experts,
        top_k=float(model.experts_per_token),
        moe_layers=moe_layers,
        total_params=model.total_params,
        layers_matmul_active=b["layers_matmul_active"] * scale_active,
        head_params=head_params * scale_active,
        dense_read_params=dense_read * scale_total,
        expert_params=expert_params * scale_total,
        act_elems_per_layer=act,
        ffn_active_width=ffn,
        ffn_hidden=float(model.expert_ffn_hidden if model.is_moe else model.ffn_hidden),  # type: ignore[arg-type]
        gated=bool(model.gated_mlp),
        shared_experts=float(model.shared_experts) if model.is_moe else 0.0,
        tp_reductions=tp_forward_reductions_per_layer(parallel_block=model.parallel_block),
    )
    return shape


@lru_cache(maxsize=1024)
def _p2p_coeffs(bandwidth_Bps: float, latency_s: float) -> tuple[float, float]:
    t0 = p2p_time(0.0, bandwidth_Bps, latency_s)
    return (t0, (p2p_time(1e9, bandwidth_Bps, latency_s) - t0) / 1e9)


@lru_cache(maxsize=256)
def _norm_str(precision: str, name: str) -> str:
    return normalize_precision(precision, name)


def _norm(precision: Any, name: str) -> str:
    if isinstance(precision, str):
        return _norm_str(precision, name)
    return normalize_precision(precision, name)  # raises the ParameterError


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _count(value: Any, name: str, minimum: int = 1) -> int:
    return count(name, value, minimum, f"an integer >= {minimum}")


def _tokens(value: Any, name: str, minimum: float = 1.0) -> float:
    """A token count: a number or a Quantity in tokens (or dimensionless)."""
    if type(value) is int or type(value) is float or _is_int(value) or isinstance(value, float):
        if isinstance(value, bool):
            raise ParameterError(name, value, f"a number of tokens >= {minimum:g}")
        x = float(value)
    else:
        x = as_si(value, "token", name) if hasattr(value, "units") else value
        if not isinstance(x, (int, float)) or isinstance(x, bool):
            raise ParameterError(name, value, f"a number of tokens >= {minimum:g}")
        x = float(x)
    if not math.isfinite(x) or x < minimum or not x.is_integer():
        # a request holds whole tokens: 2.5 output tokens is a mistake, not a mean
        raise ParameterError(name, value, f"a whole number of tokens >= {minimum:g}")
    return x


# ---------------------------------------------------------------------------------
# The physics on floats: shared with ContinuousBatchingModel
# ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Plan:
    """Everything about (model, hardware, precision, parallelism) as floats."""

    shape: _Shape
    tp: int
    pp: int
    devices: int
    w_bytes: float
    a_bytes: float
    kv_bytes: float
    peak: float  # achievable FLOP/s per device (whole-pass roofline, for reporting)
    bw: float  # achievable HBM bytes/s per device
    peak_raw: float
    peak_attention: float  # dense peak the fused attention kernel's fraction applies to
    attention_fractions: tuple[float, float]  # fused attention's (forward, backward) share
    attention_unmasked: bool  # those shares are an unmasked kernel's (GPUs): causal ones lower
    cast_bytes: float  # bytes per element quantising GEMM inputs for FP8/INT8 tensor cores
    head_bytes: float  # bytes of one output-head weight (never quantised below 16 bits)
    head_flops: float  # achievable FLOP/s of the output head's GEMM
    bw_raw: float
    gemm_flops: float  # dense peak x compute efficiency: the GEMMs' rate before quantisation
    sm_count: int | None
    tp_link: str  # NCCL link type of the tensor-parallel all-reduces
    tp_bw: float  # per-direction bandwidth of the tensor-parallel fabric
    tp_nvls: bool  # the fabric reduces in the switch (NVLink SHARP)
    tp_ll_step: float | None  # measured NCCL LL step on this NVLink generation, if known
    tp_peer_latency: float | None  # the engine's custom all-reduce latency; None: NCCL
    vocab_split: int  # GPUs the embedding and output head are split over (tp, or 1)
    p2p0: float
    p2p1: float
    kv_per_token_dev: float  # KV bytes one token occupies on one device
    kv_heads_dev: float  # KV heads on one device (split by tp, or one replica each)
    kv_reads: float  # times the decode-attention kernel reads each KV head per step
    gate_up_split: bool  # the engine runs a gated MLP's gate and up as two GEMMs
    host_step: float  # the engine's host work per iteration, seconds
    host_overlap: bool  # the engine schedules one step ahead (hides host work)
    cuda_graphs: bool  # the engine replays its decode steps from a CUDA graph
    weights_dev: float
    mem_avail: float  # bytes for weights + KV + activations
    mem_total: float
    overhead_fixed: float  # None-budget: runtime bytes; fraction budget: the reserve
    overhead_frac: float  # None-budget: fragmentation per workspace byte; else 0
    precision: str
    activation_precision: str
    kv_precision: str
    compute_precision: str
    problem: str | None  # a reason the plan cannot run at all, else None
    # per-kernel times already priced for this plan, by their float arguments: a book
    # solves the same configuration many times and the batching model re-prices the
    # same step sizes while it searches
    priced: dict = field(default_factory=dict, init=False, compare=False, repr=False)


def _layer_split(plan: _Plan) -> float:
    return plan.shape.layers / plan.pp


def _weights_read(plan: _Plan, tokens: float) -> float:
    """Weight bytes one pass over ``tokens`` tokens reads, whole replica."""
    s = plan.shape
    params = s.dense_read_params
    if s.is_moe:
        distinct = s.experts * (1.0 - (1.0 - s.top_k / s.experts) ** tokens)
        params += s.moe_layers * distinct * s.expert_params
    # the output head stays in the activation precision (not quantised); an engine that
    # does not split it by vocabulary reads it on every tensor-parallel GPU
    replicas = plan.tp / plan.vocab_split - 1.0
    return (
        params * plan.w_bytes
        + s.head_params * (plan.head_bytes - plan.w_bytes)
        + replicas * s.head_params * plan.head_bytes
    )


def _roof(plan: _Plan, flops_dev: float, bytes_dev: float) -> tuple[float, float, float]:
    tc = flops_dev / plan.peak
    tm = bytes_dev / plan.bw
    return (tc if tc > tm else tm), tc, tm


_PRICED_MAX = 4096


def _layer(plan: _Plan, tokens: float, batch: float, q_len: float, kv_len: float) -> float:
    """Seconds of one transformer layer on one device (communication excluded)."""
    key = ("layer", tokens, batch, q_len, kv_len)
    hit = plan.priced.get(key)
    if hit is None:
        if len(plan.priced) > _PRICED_MAX:
            plan.priced.clear()
        hit = plan.priced[key] = _price_layer(plan, tokens, batch, q_len, kv_len)
    return hit


def _price_layer(plan: _Plan, tokens: float, batch: float, q_len: float, kv_len: float) -> float:
    args, kwargs = _layer_arguments(plan, tokens, batch, q_len, kv_len)
    return (
        transformer_layer_time(*args, **kwargs)
        + _kv_reread(plan, batch, q_len, kv_len)
        + _gate_up_split(plan, tokens, q_len)
    )


def _kernel_s(plan: _Plan, q_len: float) -> float:
    """Fixed time per kernel (s) of a pass of ``q_len`` new tokens per sequence: a decode
    step's (one token) lower where the engine replays it from a CUDA graph
    (:func:`~mlsys.core.formulas.overheads.graph_replayed_kernel_overhead`); prefill
    passes launch eagerly. The constants are read at call time."""
    if plan.cuda_graphs and q_len == 1.0:
        return graph_replayed_kernel_overhead(KERNEL_OVERHEAD_S, CUDA_GRAPH_LAUNCH_SAVING_S)
    return KERNEL_OVERHEAD_S


def _gate_up_split(plan: _Plan, tokens: float, q_len: float) -> float:
    """Seconds an engine that runs a gated MLP's gate and up projections as two GEMMs
    adds to a layer: two GEMMs of width ``f/t`` in place of the one of ``2f/t`` that
    :func:`~mlsys.core.formulas.layer_time.transformer_layer_time` prices (each priced
    by :func:`~mlsys.core.formulas.gemm.gemm_time`, so the split changes their tile and
    wave quantisation, not their bytes), plus the second GEMM's fixed kernel cost."""
    s = plan.shape
    if not plan.gate_up_split or not s.gated:
        return 0.0
    experts_run, m = _ffn_routing(plan, tokens)
    f = s.ffn_hidden / plan.tp
    wb = plan.w_bytes if plan.w_bytes != plan.a_bytes else None
    args = (plan.gemm_flops, plan.bw, plan.a_bytes, plan.sm_count)
    one = gemm_time(m, f, s.hidden, *args, weight_bytes_per_element=wb)
    fused = gemm_time(m, 2.0 * f, s.hidden, *args, weight_bytes_per_element=wb)
    return experts_run * (2.0 * one - fused) + _kernel_s(plan, q_len)


def _ffn_routing(plan: _Plan, tokens: float) -> tuple[float, float]:
    """(experts run, tokens per expert) of a layer's MLP over ``tokens`` tokens: the
    experts the tokens route to, each with its share (shared experts see every token);
    ``(1, tokens)`` for a dense model."""
    s = plan.shape
    if not s.is_moe:
        return 1.0, tokens
    distinct = s.experts * (1.0 - (1.0 - s.top_k / s.experts) ** tokens)
    experts_run = distinct + s.shared_experts
    return experts_run, tokens * (s.top_k + s.shared_experts) / experts_run


def _kv_reread(plan: _Plan, batch: float, q_len: float, kv_len: float) -> float:
    """Seconds a decode step's attention spends reading KV heads again (a kernel serving
    fewer query heads per block than the GQA group; zero for one read)."""
    if plan.kv_reads <= 1.0 or q_len != 1.0:
        return 0.0
    extra = decode_kv_reread_bytes(
        batch, kv_len, plan.kv_heads_dev, plan.shape.head_dim, plan.kv_bytes, plan.kv_reads
    )
    return extra / plan.bw


def _layer_kernels(
    plan: _Plan, tokens: float, batch: float, q_len: float, kv_len: float, phase: str = "inference"
) -> dict[str, float]:
    """The parts of :func:`_layer`'s time, kernel group by kernel group (the same
    arguments, so they sum to it): what SingleNodeModel reports operator by operator."""
    args, kwargs = _layer_arguments(plan, tokens, batch, q_len, kv_len, phase)
    parts = transformer_layer_kernel_times(*args, **kwargs)
    if phase == "inference":
        parts["attention"] = parts["attention"] + _kv_reread(plan, batch, q_len, kv_len)
        split = _gate_up_split(plan, tokens, q_len)
        if split:
            kernel_s = _kernel_s(plan, q_len)
            parts["mlp_up"] = parts["mlp_up"] + split - kernel_s
            parts["kernel_overhead"] = parts["kernel_overhead"] + kernel_s
    return parts


def _layer_arguments(
    plan: _Plan, tokens: float, batch: float, q_len: float, kv_len: float, phase: str = "inference"
) -> tuple[tuple, dict[str, Any]]:
    """Arguments of the per-layer kernel formulas for ``tokens`` tokens of ``batch``
    sequences, ``q_len`` new and ``kv_len`` attended tokens each, on one device."""
    s = plan.shape
    experts_run, ffn_tokens = _ffn_routing(plan, tokens)
    args = (
        tokens,
        batch,
        q_len,
        kv_len,
        s.hidden,
        s.heads,
        s.kv_heads,
        s.head_dim,
        s.ffn_hidden,
        s.gated,
        plan.tp,
        plan.gemm_flops,
        plan.peak_attention,
        plan.bw,
        plan.a_bytes,
    )
    kwargs = {
        "sm_count": plan.sm_count,
        "causal": q_len > 1.0,
        "phase": phase,
        "weight_bytes_per_element": plan.w_bytes if plan.w_bytes != plan.a_bytes else None,
        "kv_bytes_per_element": plan.kv_bytes,
        "experts_run": experts_run,
        "ffn_tokens": ffn_tokens,
        "kernel_overhead_s": _kernel_s(plan, q_len) if phase == "inference" else KERNEL_OVERHEAD_S,
        "attention_fractions": plan.attention_fractions,
        "attention_unmasked": plan.attention_unmasked,
        "activation_cast_bytes_per_element": plan.cast_bytes,
    }
    return args, kwargs


def _embedding(plan: _Plan, tokens: float, q_len: float) -> float:
    """Seconds of the embedding gather of ``tokens`` rows (read one row of ``h``
    values, write it) on one device: a memory-bound kernel plus its fixed cost (a decode
    step's, ``q_len`` 1, or a prefill pass's)."""
    return 2.0 * tokens * plan.shape.hidden * plan.a_bytes / plan.bw + _kernel_s(plan, q_len)


def _lm_head(plan: _Plan, rows: float) -> float:
    """Seconds of the output projection for ``rows`` positions (the vocabulary split over
    the tensor-parallel GPUs, or whole on each)."""
    key = ("head", rows)
    hit = plan.priced.get(key)
    if hit is not None:
        return hit
    s = plan.shape
    wb = plan.head_bytes if plan.head_bytes != plan.a_bytes else None
    hit = plan.priced[key] = gemm_time(
        rows,
        s.vocab / plan.vocab_split,
        s.hidden,
        plan.head_flops,
        plan.bw,
        plan.a_bytes,
        plan.sm_count,
        weight_bytes_per_element=wb,
    )
    return hit


def _allreduce(plan: _Plan, message_bytes: float) -> float:
    """One tensor-parallel all-reduce: the engine's custom peer-read kernel where it runs
    one, else as NCCL runs it (protocol, NVLS)."""
    if plan.tp <= 1 or plan.tp_bw <= 0.0:
        return 0.0
    key = ("all-reduce", message_bytes)
    hit = plan.priced.get(key)
    if hit is not None:
        return hit
    if plan.tp_peer_latency is not None:
        hit = peer_allreduce_time(message_bytes, plan.tp, plan.tp_bw, plan.tp_peer_latency)
        if hit is not None:
            plan.priced[key] = hit
            return hit
    hit = plan.priced[key] = nccl_allreduce_time(
        message_bytes, plan.tp, plan.tp_bw, plan.tp_link, plan.tp_nvls,
        ll_step_latency_s=plan.tp_ll_step,
    )  # fmt: skip
    return hit


def _prefill(plan: _Plan, prompt: float, n_seq: float) -> tuple[Any, ...]:
    """(time, flops, bytes, tp_comm, pp_comm, t_compute, t_memory, terms) of prefilling
    ``n_seq`` prompts of ``prompt`` tokens in one pass, whole replica; ``terms`` the
    named parts of ``time`` in s (embedding, layers, LM head, TP all-reduces, PP sends,
    host work), whose sum it is."""
    s = plan.shape
    tokens = prompt * n_seq
    flops = n_seq * (
        prompt * (2.0 * s.layers_matmul_active + 2.0 * s.layers * prompt * s.d_attn)
        + 2.0 * s.head_params
    )
    act = tokens * s.layers * s.act_elems_per_layer * plan.a_bytes
    d = plan.tp * plan.pp
    # KV per device already holds the TP split over KV heads (or their replicas when
    # tp_size exceeds them) and the PP split over layers.
    bytes_dev = (_weights_read(plan, tokens) + act) / d + tokens * plan.kv_per_token_dev
    bytes_ = bytes_dev * d
    _, tc, tm = _roof(plan, flops / d, bytes_dev)
    m = tokens * s.hidden * plan.a_bytes
    tp_comm = s.tp_reductions * s.layers * _allreduce(plan, m)
    pp_comm = (plan.pp - 1) * (plan.p2p0 + plan.p2p1 * m) if plan.pp > 1 else 0.0
    # One pass crosses every stage in turn: all layers, then the LM head of the last
    # positions, kernel by kernel: the pass is the sum of these terms (what
    # ServingResult.explain("prefill") shows)
    terms = {
        "embedding": _embedding(plan, tokens, prompt),
        "layers": s.layers * _layer(plan, tokens, n_seq, prompt, prompt),
        "lm_head": _lm_head(plan, n_seq),
        "tp": tp_comm,
        "pp": pp_comm,
    }
    device = terms["embedding"] + terms["layers"] + terms["lm_head"] + tp_comm + pp_comm
    # the pass is one iteration of the engine's loop: the host work the device waits
    # for (engine_step_time less the device's)
    terms["host"] = (
        engine_step_time(device, plan.host_step, plan.host_overlap) - device
        if plan.host_step
        else 0.0
    )
    time = device + terms["host"]
    return time, flops, bytes_, tp_comm, pp_comm, plan.pp * tc, plan.pp * tm, terms


def _decode(plan: _Plan, batch: float, context: float) -> tuple[float, ...]:
    """(itl, flops, bytes, tp_comm, pp_comm, t_compute, t_memory, terms) of one decode
    step of ``batch`` sequences holding ``context`` tokens each, whole replica; ``terms``
    the named parts of ``itl`` in s (embedding, layers, LM head, TP all-reduces, PP
    sends, host work), whose sum it is."""
    s = plan.shape
    p = plan.pp
    # Micro-batches of at least one sequence (fewer when the batch is small or empty).
    micro = min(float(p), max(batch, 1.0)) if p > 1 else 1.0
    mb = batch / micro  # sequences per micro-batch
    flops_mb = mb * (
        2.0 * (s.layers_matmul_active + s.head_params) + 4.0 * s.layers * context * s.d_attn
    )
    act = mb * s.layers * s.act_elems_per_layer * plan.a_bytes
    d = plan.tp * p
    bytes_dev = (_weights_read(plan, mb) + act) / d + mb * context * plan.kv_per_token_dev
    bytes_mb = bytes_dev * d
    _, tc, tm = _roof(plan, flops_mb / d, bytes_dev)
    m = mb * s.hidden * plan.a_bytes
    tp_stage = s.tp_reductions * (s.layers / p) * _allreduce(plan, m)
    pp_comm = (p - 1) * (plan.p2p0 + plan.p2p1 * m) if p > 1 else 0.0
    cycles = micro if micro > p else float(p)
    # each stage runs its share of the layers and of the LM head, kernel by kernel, once a
    # cycle: the step is the sum of these terms (what ServingResult.explain() shows)
    share = cycles / p
    terms = {
        "embedding": share * _embedding(plan, mb, 1.0),
        "layers": share * (s.layers * _layer(plan, mb, mb, 1.0, context)),
        "lm_head": share * _lm_head(plan, mb),
        "tp": cycles * tp_stage,
        "pp": pp_comm,
    }
    device = terms["embedding"] + terms["layers"] + terms["lm_head"] + terms["tp"] + pp_comm
    # the engine's host work the device waits for (engine_step_time less the device's)
    terms["host"] = (
        engine_step_time(device, plan.host_step, plan.host_overlap) - device
        if plan.host_step
        else 0.0
    )
    itl = device + terms["host"]
    return (
        itl,
        flops_mb * micro,
        bytes_mb * micro,
        terms["tp"],
        pp_comm,
        cycles * tc,
        cycles * tm,
        terms,
    )


def _activation_workspace(plan: _Plan, prefill_tokens: float, n_seq: float) -> float:
    """Transient bytes of the largest layer's activations in a prefill pass (estimate):
    residual stream, q/k/v and attention output, MLP intermediates of one layer, plus
    fp32 logits of the last positions."""
    s = plan.shape
    per_token = (
        3.0 * s.hidden
        + (s.d_attn + 2.0 * s.kv_heads * s.head_dim) / plan.tp
        + 2.0 * s.ffn_active_width / plan.tp
    )
    return prefill_tokens * per_token * plan.a_bytes + n_seq * s.vocab / plan.tp * 4.0


def _resolve_hardware(hardware: Any, fabric: Any) -> tuple[Accelerator, float, float, int | None]:
    if isinstance(hardware, Node):
        acc = hardware.accelerator
        default = hardware.intra_fabric
        per_node: int | None = hardware.accelerators_per_node
    elif isinstance(hardware, Accelerator):
        acc, default, per_node = hardware, None, None
    elif hasattr(hardware, "node") and isinstance(hardware.node, Node):
        return _resolve_hardware(hardware.node, fabric)
    else:
        raise ParameterError("hardware", hardware, "an Accelerator or a Node (e.g. Hardware.H100)")
    fab = fabric if fabric is not None else default
    if fab is not None:
        if not isinstance(fab, Fabric):
            raise ParameterError("fabric", fabric, "a Fabric (e.g. Fabrics.NVLINK4) or None")
        return acc, fab.effective_bandwidth_Bps, fab.latency_s, per_node
    return acc, acc.scaleup_bandwidth_Bps, DEFAULT_SCALEUP_LATENCY_S, per_node


_NVLINK_OF: dict[str, str] = {
    "A100_80GB": "NVLINK3",
    "A100_40GB": "NVLINK3",
    "A800_80GB": "NVLINK3",
    "H100": "NVLINK4",
    "H200": "NVLINK4",
    "H800": "NVLINK4",
    "B200": "NVLINK5",
    "GB200": "NVLINK5",
}
"""The NVLink generation (catalog fabric) of an SXM accelerator's own links, for a
replica given as a bare accelerator (no Node, no Fabric)."""


def _link_name(fab: Fabric | None, acc: Accelerator) -> str | None:
    """Catalog name of the tensor-parallel links' generation: the fabric's
    (:attr:`~mlsys.core.types.Fabric.link_generation`), else the accelerator's own NVLink
    generation (None for an accelerator without one in :data:`_NVLINK_OF`)."""
    return fab.link_generation if fab is not None else _NVLINK_OF.get(acc.name)


def _measured_ll_step(fab: Fabric | None, acc: Accelerator) -> float | None:
    """Measured NCCL LL step latency of the tensor-parallel links (None where unmeasured):
    the fabric's generation, else the accelerator's own NVLink."""
    name = _link_name(fab, acc)
    return NCCL_NVLINK_LL_STEP_LATENCY_MEASURED_S.get(name) if name else None


def _peer_allreduce_latency(fab: Fabric | None, acc: Accelerator) -> float | None:
    """Latency of the engines' custom all-reduce kernel on the tensor-parallel NVLink:
    measured for the fabric's generation, else the newest measured generation's (NVLink
    latency has not grown between generations: NCCL's LL step is 1.98 µs on NVLink 3,
    1.10 µs on NVLink 4). None off NVLink (PCIe, TPU ICI, an accelerator without a
    known NVLink): the engines' peer-read kernels need NVLink's load/store access to
    every peer, so NCCL runs there."""
    name = _link_name(fab, acc)
    if name is None or not name.startswith("NVLINK"):
        return None
    measured = PEER_ALLREDUCE_LATENCY_MEASURED_S
    if name in measured:
        return measured[name]
    newest = max(measured, key=lambda generation: int(generation.removeprefix("NVLINK")))
    return measured[newest]


def _fabric_of(hardware: Any, fabric: Any) -> Fabric | None:
    """The tensor-parallel fabric object, if any (the explicit one, else the node's)."""
    if fabric is not None:
        return fabric
    if isinstance(hardware, Node):
        return hardware.intra_fabric
    node = getattr(hardware, "node", None)
    return node.intra_fabric if isinstance(node, Node) else None


_PLANS = IdentityMemo(maxsize=512)
"""(model, hardware, fabric) by identity, the other arguments by value -> _Plan."""


def _plan(
    model: Any,
    hardware: Any,
    precision: str,
    kv_precision: str | None,
    activation_precision: str | None,
    tp: int,
    pp: int,
    efficiency: Any,
    fabric: Any,
    memory_utilization: float | None,
    heads_per_block: int | None = None,
    gate_up_fused: bool = True,
    host_step: float = 0.0,
    host_overlap: bool = False,
    tp_allreduce: str = "nccl",
    vocab_parallel: bool = True,
    cuda_graphs: bool = False,
) -> _Plan:
    objects = (model, hardware, fabric)
    values = (
        freeze(precision),
        freeze(kv_precision),
        freeze(activation_precision),
        tp,
        pp,
        freeze(efficiency),
        memory_utilization,
        heads_per_block,
        gate_up_fused,
        host_step,
        host_overlap,
        tp_allreduce,
        vocab_parallel,
        cuda_graphs,
    )
    hit = _PLANS.get(objects, values)
    if hit is not MISSING:
        return hit
    plan = _build_plan(
        model,
        hardware,
        precision,
        kv_precision,
        activation_precision,
        tp,
        pp,
        efficiency,
        fabric,
        memory_utilization,
        heads_per_block,
        gate_up_fused,
        host_step,
        host_overlap,
        tp_allreduce,
        vocab_parallel,
        cuda_graphs,
    )
    _PLANS.put(objects, values, plan)
    return plan


def _build_plan(
    model,
    hardware,
    precision,
    kv_precision,
    activation_precision,
    tp,
    pp,
    efficiency,
    fabric,
    memory_utilization,
    heads_per_block=None,
    gate_up_fused=True,
    host_step=0.0,
    host_overlap=False,
    tp_allreduce="nccl",
    vocab_parallel=True,
    cuda_graphs=False,
) -> _Plan:
    if not isinstance(model, TransformerWorkload):
        raise ParameterError(
            "model",
            model,
            "a TransformerWorkload (e.g. Models.Llama2_70B)",
            "Serving needs the shape (layers, heads, KV heads) to size the KV cache.",
        )
    acc, fab_bw, fab_lat, per_node = _resolve_hardware(hardware, fabric)
    w, a, kv, cp = _formats(acc, precision, activation_precision, kv_precision)
    wb = BYTES_PER_ELEMENT[w]
    eff_c, eff_m = resolve_efficiency(efficiency, acc, cp)
    shape = _shape(model)
    head_bytes, head_flops = _head_format(acc, efficiency, w, a, cp, eff_c)
    problem = _layout_problem(shape, tp, pp, per_node, fab_bw, acc)
    p2p0, p2p1 = _p2p_coeffs(fab_bw, fab_lat) if (pp > 1 and fab_bw > 0) else (0.0, 0.0)
    # KV heads split by tensor parallelism, replicated once each when tp exceeds them
    kv_heads_dev = shape.kv_heads / tp if tp <= shape.kv_heads else 1.0
    kvb = BYTES_PER_ELEMENT[kv]
    peak = acc.peak_flops_s(cp)
    fixed, frac, mem_avail = _memory_budget(acc, memory_utilization)
    return _Plan(
        shape=shape,
        tp=tp,
        pp=pp,
        devices=tp * pp,
        w_bytes=wb,
        a_bytes=BYTES_PER_ELEMENT[a],
        kv_bytes=kvb,
        # the GEMMs run at the compute fraction of peak (the library's default, below
        # the device's measured matmul ceiling), then lose their own tile and wave
        # quantisation
        peak=peak * eff_c,
        bw=acc.memory_bandwidth_Bps * eff_m,
        peak_raw=peak,
        # attention runs in the 16-bit activation format even when the GEMMs are FP8
        # (FlashAttention-2 kernels are 16-bit), as in the training layout model
        peak_attention=acc.peak_flops_s(a) if a in acc.precisions else peak,
        attention_fractions=fused_attention_fractions(acc),
        attention_unmasked=attention_fractions_unmasked(acc),
        # weight-and-activation quantisation: each GEMM's 16-bit input is quantised by
        # its own kernel first (static scales); weight-only formats dequantise in the GEMM
        cast_bytes=FP8_STATIC_SCALING_CAST_BYTES if (cp == w and wb < 2.0 and a != w) else 0.0,
        bw_raw=acc.memory_bandwidth_Bps,
        gemm_flops=peak * eff_c,
        sm_count=acc.sm_count,
        tp_bw=fab_bw,
        **_tp_link(hardware, fabric, acc, tp_allreduce),
        vocab_split=tp if vocab_parallel else 1,
        p2p0=p2p0,
        p2p1=p2p1,
        kv_per_token_dev=kv_cache_bytes(shape.layers / pp, kv_heads_dev, shape.head_dim, 1, 1, kvb),
        kv_heads_dev=kv_heads_dev,
        # the query heads of one device that share a KV head, and how often the decode
        # kernel reads that head to serve them
        kv_reads=decode_kv_reads(shape.heads / tp, kv_heads_dev, heads_per_block),
        gate_up_split=not gate_up_fused,
        host_step=host_step,
        host_overlap=host_overlap,
        cuda_graphs=cuda_graphs,
        weights_dev=_weights_per_device(shape, wb, head_bytes, tp, pp, vocab_parallel),
        head_bytes=head_bytes,
        head_flops=head_flops,
        mem_avail=mem_avail,
        mem_total=acc.memory_bytes,
        overhead_fixed=fixed,
        overhead_frac=frac,
        precision=w,
        activation_precision=a,
        kv_precision=kv,
        compute_precision=cp,
        problem=problem,
    )


def _formats(
    acc: Any, precision: Any, activation_precision: Any, kv_precision: Any
) -> tuple[str, str, str, str]:
    """Weight, activation, KV-cache and compute formats of a replica.

    Weight-and-activation quantised formats (fp8, int8, fp4 ...) run on the tensor cores
    of that format where the device has them; otherwise weights are dequantised and the
    math runs at the activation precision (weight-only quantisation).
    """
    w = _norm(precision, "precision")
    if activation_precision is None:
        a = w if BYTES_PER_ELEMENT[w] >= 2.0 else "fp16"
    else:
        a = _norm(activation_precision, "activation_precision")
    kv = a if kv_precision is None else _norm(kv_precision, "kv_precision")
    available = acc.precisions
    if w in available and BYTES_PER_ELEMENT[w] < 2.0:
        cp = w
    elif a in available:
        cp = a
    elif "bf16" in available:
        cp = "bf16"
    else:
        cp = available[0]
    return w, a, kv, cp


def _head_format(
    acc: Any, efficiency: Any, w: str, a: str, cp: str, eff_c: float
) -> tuple[float, float]:
    """Bytes per weight of the output head and the FLOP/s its GEMM runs at.

    Quantisers leave the output head in the activation precision (it is a small share of
    the weights and the logits are sensitive to it), so a narrow-weight model's LM head
    reads 16-bit weights and runs on the 16-bit tensor cores (DeepSeek-V3 report,
    arXiv:2412.19437, Sec. 3.3.1, for FP8 training; NVIDIA TensorRT Model Optimizer
    excludes ``lm_head`` from quantisation by default).
    """
    head_bytes = BYTES_PER_ELEMENT[w]
    head_flops = acc.peak_flops_s(cp) * eff_c
    a_bytes = BYTES_PER_ELEMENT[a]
    if head_bytes < a_bytes:
        head_bytes = a_bytes
        if a in acc.precisions and a != cp:
            head_flops = acc.peak_flops_s(a) * resolve_efficiency(efficiency, acc, a)[0]
    return head_bytes, head_flops


def _layout_problem(
    shape: Any, tp: int, pp: int, per_node: int | None, fab_bw: float, acc: Any
) -> str | None:
    """Why the replica's tensor and pipeline split cannot run, or None."""
    if shape.heads % tp:
        return f"tp_size={tp} does not divide the model's {shape.heads} attention heads"
    if tp > shape.kv_heads and tp % shape.kv_heads:
        return f"tp_size={tp} is not a multiple of the model's {shape.kv_heads} KV heads"
    if tp <= shape.kv_heads and shape.kv_heads % tp:
        return f"tp_size={tp} does not divide the model's {shape.kv_heads} KV heads"
    if pp > shape.layers:
        return f"pp_size={pp} exceeds the model's {int(shape.layers)} layers"
    if per_node is not None and tp > per_node:
        return (
            f"tp_size={tp} exceeds the {per_node} accelerators of one node: tensor "
            "parallelism is modelled inside one scale-up domain only"
        )
    if (tp > 1 or pp > 1) and fab_bw <= 0.0:
        return (
            f"{acc.label} has no scale-up link in the catalog; pass fabric= to "
            "use tensor or pipeline parallelism"
        )
    return None


def _tp_link(hardware: Any, fabric: Any, acc: Any, tp_allreduce: str) -> dict[str, Any]:
    """The tensor-parallel link: its kind, in-network reduction, NCCL's measured
    low-latency step, and the custom peer all-reduce's latency (None off NVLink: a
    scale-out fabric, PCIe or ICI, where NCCL runs)."""
    fab_obj = _fabric_of(hardware, fabric)
    tp_link = "nvlink" if fab_obj is None or fab_obj.kind == "scale-up" else "net"
    return {
        "tp_link": tp_link,
        "tp_nvls": bool(fab_obj is not None and fab_obj.in_network_reduction),
        "tp_ll_step": _measured_ll_step(fab_obj, acc) if tp_link == "nvlink" else None,
        "tp_peer_latency": (
            _peer_allreduce_latency(fab_obj, acc) if tp_allreduce == "custom" else None
        ),
    }


def _memory_budget(acc: Any, memory_utilization: float | None) -> tuple[float, float, float]:
    """The framework's fixed and proportional overhead and the bytes left for weights,
    activations and KV cache on one device."""
    if memory_utilization is None:
        # the fragmentation fraction applies to the transient workspace alone (weights
        # and KV cache are allocated once: default_framework_overhead)
        fixed = default_framework_overhead(acc, 0.0)
        frac = default_framework_overhead(acc, 1.0) - fixed
        return fixed, frac, max(acc.memory_bytes - fixed, 0.0)
    fixed = acc.memory_bytes * (1.0 - memory_utilization)
    return fixed, 0.0, acc.memory_bytes * memory_utilization


def _weights_per_device(
    shape: Any, wb: float, head_bytes: float, tp: int, pp: int, vocab_parallel: bool
) -> float:
    """Weight bytes on one device: the model split over ``tp × pp``, the head in its own
    format, embedding and head whole on every tensor-parallel GPU (both V × h) when the
    vocabulary is not split."""
    whole = 0.0 if vocab_parallel else (tp - 1) * shape.head_params * (head_bytes + wb)
    return (shape.total_params * wb + shape.head_params * (head_bytes - wb) + whole) / (tp * pp)


def _check_plan_args(
    tp_size: Any, pp_size: Any, memory_utilization: Any
) -> tuple[int, int, float | None]:
    tp = _count(tp_size, "tp_size")
    pp = _count(pp_size, "pp_size")
    if memory_utilization is None:
        return tp, pp, None
    if (
        isinstance(memory_utilization, bool)
        or not isinstance(memory_utilization, (int, float))
        or not 0.0 < memory_utilization <= 1.0
    ):
        raise ParameterError(
            "memory_utilization", memory_utilization, "None or a fraction in (0, 1]"
        )
    return tp, pp, float(memory_utilization)


def _flag(value: Any, name: str) -> bool:
    """A switch, read by the one validator of flags (:func:`mlsys.core.checks.flag`)."""
    return flag(name, value)


def _heads_per_block(value: Any) -> int | None:
    """``decode_attention_heads_per_block``: None or a whole number of heads >= 1."""
    if value is None:
        return None
    return _count(value, "decode_attention_heads_per_block")


def _tp_allreduce(value: Any) -> str:
    """``tp_allreduce``: one of :data:`TP_ALLREDUCE_IMPLEMENTATIONS`."""
    if isinstance(value, str) and value.strip().lower() in TP_ALLREDUCE_IMPLEMENTATIONS:
        return value.strip().lower()
    raise ParameterError(
        "tp_allreduce", value, "one of " + ", ".join(map(repr, TP_ALLREDUCE_IMPLEMENTATIONS))
    )


def _host_step(value: Any) -> float:
    """``host_time_per_step``: seconds of host work per engine iteration, >= 0."""
    seconds = as_si(value, "s", "host_time_per_step")
    if not isinstance(seconds, float):  # an array: one engine has one step time
        raise ParameterError("host_time_per_step", value, "one number of seconds >= 0")
    return seconds


class _EngineChoice:
    """Default of an engine-dependent ``solve`` parameter: the named engine's value."""

    def __repr__(self) -> str:
        return "<the engine's>"


ENGINE_CHOICE: Any = _EngineChoice()
"""Sentinel default of :meth:`ServingModel.solve`'s engine-dependent parameters: the value
the model's engine gives it (:mod:`mlsys.core.catalog.engines`)."""


def engine_choices(
    engine: Any,
    decode_attention_heads_per_block: Any,
    gate_up_fused: Any,
    host_time_per_step: Any,
    host_overlap: Any,
    tp_allreduce: Any,
    vocab_parallel: Any,
    cuda_graphs: Any = ENGINE_CHOICE,
) -> tuple[int | None, bool, float, bool, str, bool, bool]:
    """The engine-dependent parameters of a serving solve, checked: each given value, or
    the engine's where it is :data:`ENGINE_CHOICE` (the default). :class:`ServingModel`
    and :class:`~mlsys.core.solvers.batching.ContinuousBatchingModel` both read their
    engine's knobs here, in the order :func:`_plan` takes them.

    Parameters
    ----------
    engine : ServingEngine
        A row of the engine table (:func:`mlsys.core.catalog.engines.serving_engine`).
    decode_attention_heads_per_block, gate_up_fused, host_time_per_step, host_overlap, \
tp_allreduce, vocab_parallel
        As for :meth:`ServingModel.solve`.
    cuda_graphs : bool, optional
        As for :meth:`ServingModel.solve`; left out, the engine's.

    Returns
    -------
    tuple
        The seven values in that order, checked: heads per block (None or a whole number
        >= 1), the switches as bools, the host time in seconds, the all-reduce
        implementation's canonical name.

    Raises
    ------
    ParameterError
        For a value outside what its parameter allows (checked in the order above).
    """

    def pick(given: Any, engines: Any) -> Any:
        return engines if given is ENGINE_CHOICE else given

    host = (
        _engine_host_time(engine.host_time)
        if host_time_per_step is ENGINE_CHOICE
        else host_time_per_step
    )
    return (
        _heads_per_block(
            pick(decode_attention_heads_per_block, engine.decode_attention_heads_per_block)
        ),
        _flag(pick(gate_up_fused, engine.gate_up_fused), "gate_up_fused"),
        _host_step(host),
        _flag(pick(host_overlap, engine.host_overlap), "host_overlap"),
        _tp_allreduce(pick(tp_allreduce, engine.tp_allreduce)),
        _flag(pick(vocab_parallel, engine.vocab_parallel), "vocab_parallel"),
        _flag(pick(cuda_graphs, engine.cuda_graphs), "cuda_graphs"),
    )


def _engine_host_time(key: str | None) -> float:
    """An engine's measured host time per iteration (s), read from
    :data:`mlsys.core.formulas.serving.ENGINE_HOST_TIME_PER_STEP_S` at call time; 0 when
    its row cites none."""
    if key is None:
        return 0.0
    from mlsys.core.formulas import serving as serving_formulas

    return float(serving_formulas.ENGINE_HOST_TIME_PER_STEP_S[key])


def _context_problem(model: Any, prompt_tokens: float, output_tokens: float) -> str | None:
    """Why a request of this length cannot run on ``model``, or None when it fits.

    A transformer attends over at most its context window (``max_position_embeddings``):
    the prompt and every generated token share it. A model whose window is not known
    (``context_window`` None, e.g. a custom shape) is not checked.

    Parameters
    ----------
    model : TransformerWorkload
        The network (its ``context_window``, in tokens).
    prompt_tokens, output_tokens : float
        The longest request's prompt and generated tokens.

    Returns
    -------
    str or None
        The infeasibility reason, naming both lengths and the window.
    """
    window = getattr(model, "context_window", None)
    total = prompt_tokens + output_tokens
    if window is None or total <= window:
        return None
    return (
        f"a {prompt_tokens:,.0f}-token prompt plus {output_tokens:,.0f} generated "
        f"token{'' if output_tokens == 1 else 's'} "
        f"({total:,.0f}) exceeds {model.label}'s context window of {window:,} tokens; "
        "shorten the prompt or the output, or use a longer-context model"
    )


def _gb(x: float) -> str:
    return f"{x / 1e9:.1f} GB"


# ---------------------------------------------------------------------------------
# The solver
# ---------------------------------------------------------------------------------


class ServingModel:
    """Latency, throughput and memory of serving a transformer on one replica.

    Parameters
    ----------
    engine : str, optional
        The serving engine and release whose kernels and loop are priced: a row of
        ``mlsys/core/catalog/data/engines.toml`` (``"vllm-v0"``, ``"vllm-v1"``,
        ``"trtllm-0.5"``, ``"trtllm-0.9"``, ``"nim-1.8"``, ``"lmdeploy-0.1"``,
        ``"gpt-fast"``, ``"sglang"``; case and separators ignored). Its row sets the
        defaults of ``decode_attention_heads_per_block``, ``gate_up_fused``,
        ``tp_allreduce``, ``vocab_parallel``, ``host_overlap`` and
        ``host_time_per_step``; a value passed to :meth:`solve` still wins. Default
        ``None``: the ``"reference"`` engine — decode attention that reads each KV head
        once for its group of query heads, gate and up as one GEMM, NCCL all-reduces,
        vocabulary-parallel embedding and head, no host work charged (the kernels of
        vLLM, SGLang and TensorRT-LLM from 2024 on, without their host time).

    Raises
    ------
    ParameterError
        For an engine the table does not hold (the message lists the known ones).

    A replica is ``tp_size × pp_size`` accelerators holding one copy of the weights.
    See the module docstring for the physics and the scheduling assumption behind TTFT.

    Examples
    --------
    Llama-2-70B in fp16 on 4 A100 80GB with tensor parallelism, one request of 2048
    prompt tokens and 128 output tokens: the prefill is compute-bound (286 TFLOP over
    4 × 312 TFLOP/s × 0.75, less the GEMMs' tile and wave quantisation, the causal
    attention kernel at its own rate, plus element-wise kernels, fixed costs and 37 ms of
    all-reduces: 58 % MFU), a decode step memory-bound
    (34.5 GB of weights per device at 2.039 TB/s × 0.85 = 19.9 ms, plus 80 layers × 10
    kernels × 4 µs and 160 all-reduces of 18.9 µs: NCCL picks its LL protocol, whose 6
    ring steps take 1.98 µs each as measured on a DGX A100).

    >>> from mlsys import Hardware, Models, ServingModel
    >>> res = ServingModel().solve(Models.Llama2_70B, Hardware.A100_80GB, prompt_len=2048,
    ...                            output_len=128, tp_size=4, precision="fp16")
    >>> round(res.si("ttft") * 1e3), round(res.si("itl") * 1e3, 1), res.decode_bound
    (398, 26.2, 'memory')

    The same model on one 80 GB device does not fit, and no latency is reported:

    >>> res = ServingModel().solve(Models.Llama2_70B, Hardware.H100, precision="fp16")
    >>> res.feasible, res.ttft
    (False, None)
    """

    def __init__(self, engine: str | None = None) -> None:
        self.engine = serving_engine(engine)

    def solve(
        self,
        model: TransformerWorkload,
        hardware: Accelerator | Node,
        batch_size: int = 1,
        prompt_len: float = 512,
        output_len: float = 128,
        precision: str = "bf16",
        kv_precision: str | None = None,
        tp_size: int = 1,
        pp_size: int = 1,
        efficiency: Any = None,
        fabric: Fabric | None = None,
        raise_errors: bool = False,
        *,
        activation_precision: str | None = None,
        batched_prefill: bool = False,
        memory_utilization: float | None = DEFAULT_MEMORY_UTILIZATION,
        decode_attention_heads_per_block: int | None = ENGINE_CHOICE,
        gate_up_fused: bool = ENGINE_CHOICE,
        host_time_per_step: Any = ENGINE_CHOICE,
        host_overlap: bool = ENGINE_CHOICE,
        tp_allreduce: str = ENGINE_CHOICE,
        vocab_parallel: bool = ENGINE_CHOICE,
        cuda_graphs: bool = ENGINE_CHOICE,
        price_infeasible: bool = False,
    ) -> ServingResult:
        """Solve one serving configuration.

        Parameters
        ----------
        model : TransformerWorkload
            The model (dense, GQA/MQA or MoE).
        hardware : Accelerator or Node
            One device type; a Node also supplies the tensor-parallel fabric and caps
            ``tp_size`` at its accelerator count.
        batch_size : int
            Sequences decoded together (a static batch).
        prompt_len : int
            Prompt tokens per request. With ``output_len`` it must fit the model's
            ``context_window`` (when the catalog knows it): a longer request is
            infeasible, with that reason, whatever the memory.
        output_len : int
            Generated tokens per request (>= 1; the first comes out of prefill).
        precision : str
            Weight storage precision (``"bf16"``, ``"fp8"``, ``"int4"`` ...).
        kv_precision : str, optional
            KV-cache precision; default: the activation precision.
        tp_size, pp_size : int
            Tensor- and pipeline-parallel degrees of the replica.
        efficiency : None, float, pair or dict
            Achievable fractions of peak (see
            :func:`mlsys.core.solvers.efficiency.resolve_efficiency`); ``None`` uses the
            library defaults for the device and compute precision.
        fabric : Fabric, optional
            Tensor/pipeline-parallel interconnect. Default: the Node's scale-up fabric,
            or the accelerator's own scale-up bandwidth with a 2 µs step latency.
        raise_errors : bool
            Raise :class:`~mlsys.core.errors.InfeasibleError` instead of returning
            ``feasible=False``.
        activation_precision : str, optional
            Activations and all-reduce payloads; default: the weight precision when it
            is 16 bits or wider, else ``"fp16"``.
        batched_prefill : bool
            Prefill the whole batch in one pass and report it as TTFT (default: TTFT is
            one request's own prefill).
        memory_utilization : float, optional
            Share of device memory for weights, KV cache and activations, as vLLM's
            ``gpu_memory_utilization``; default ``None``: everything but the library's
            framework allowance (1 GB plus 5 % of the activation workspace on a GPU; the
            weights and the KV cache are allocated once and do not fragment).
        decode_attention_heads_per_block : int, optional
            Query heads one thread block of the engine's decode-attention kernel serves
            (a property of the engine's kernel, e.g. 4 in lmdeploy v0.1): under
            grouped-query attention each KV head is then read ``⌈group / heads⌉`` times
            per step (:func:`mlsys.core.formulas.serving.decode_kv_reads`). ``None``: one
            read per KV head (a kernel that packs the whole group, as FlashInfer,
            FlashAttention-2 and TensorRT-LLM's XQA do). Default: the engine's (the
            reference engine's is ``None``; ``"trtllm-0.5"`` 1, ``"lmdeploy-0.1"`` 4).
        gate_up_fused : bool
            The engine runs a gated MLP's gate and up projections as one GEMM of width
            ``2f/t`` (default: the engine's; ``True`` for the reference engine, as
            vLLM's merged column-parallel linear, TensorRT-LLM built with
            ``--use_fused_mlp``). ``False`` prices two GEMMs of
            width ``f/t`` and one more kernel per layer, as lmdeploy v0.1's TurboMind
            runs 16-bit weights (``LlamaFfnLayer``: ``w1`` and ``w3`` apart; only INT4
            weights load the fused ``w13``).
        host_time_per_step : float, str or Quantity
            Host work the engine does in every iteration of its loop (scheduling, the
            step's input metadata, the sampled tokens' copy to the host and their
            processing), in seconds (default 0). A property of the engine and its
            version, to be taken from a measurement of that engine: it is added to every
            prefill pass and decode step
            (:func:`mlsys.core.formulas.serving.engine_step_time`). Default: the
            engine's measured figure
            (:data:`mlsys.core.formulas.serving.ENGINE_HOST_TIME_PER_STEP_S`; vLLM's V0
            engine: 1.14 ms), 0 for an engine with none cited (the reference engine).
        host_overlap : bool
            The engine schedules one step ahead of the device (SGLang's overlap
            scheduler, TensorRT-LLM's overlap scheduler), so its host work costs time
            only where it exceeds the device step (default: the engine's; ``False``, a
            synchronous loop where it adds to every step, for the reference engine).
        tp_allreduce : {"nccl", "custom"}
            How the engine runs its tensor-parallel all-reduces (default: the engine's;
            ``"nccl"``, :data:`DEFAULT_TP_ALLREDUCE`, for the reference engine): NCCL's
            ring protocols or NVLS
            (:func:`mlsys.core.formulas.collectives.nccl_allreduce_time`), or
            ``"custom"``, the one-shot / two-shot peer-read kernels vLLM (on by default
            for 2-8 NVLink GPUs since 2024), TensorRT-LLM, SGLang and PyTorch's
            intra-node communication run inside one NVLink node for buffers up to
            8 MiB, at their measured latency
            (:func:`mlsys.core.formulas.peer_allreduce.peer_allreduce_time`); larger
            buffers and links other than NVLink stay on NCCL. A decode step's
            all-reduces of a few kilobytes then cost one latency each instead of
            NCCL's ``2(n − 1)`` ring steps.
        vocab_parallel : bool
            The engine splits the embedding table and the output head over the
            tensor-parallel GPUs by vocabulary (default: the engine's; ``True`` for the
            reference engine, as Megatron's vocabulary-parallel embedding, vLLM's
            ``ParallelLMHead``, TensorRT-LLM).
            ``False``: every GPU holds both whole and computes all the logits itself,
            reading the whole head every step (gpt-fast's ``tp.py`` splits only the
            transformer blocks).
        cuda_graphs : bool
            The engine replays each decode step from a CUDA graph (default: the
            engine's; ``False``, kernels launched one by one, for the reference engine;
            ``True`` for ``"gpt-fast"``, vLLM and SGLang). A decode kernel's fixed cost
            is then :data:`~mlsys.core.formulas.overheads.KERNEL_OVERHEAD_S` less the
            launch work a graph saves,
            :data:`~mlsys.core.formulas.overheads.CUDA_GRAPH_LAUNCH_SAVING_S` (Gray 2019:
            3.8 µs a kernel streamed, 3.4 µs from a graph); prefill passes launch eagerly.

        price_infeasible : bool
            Also report the latencies of a configuration that does not fit (``feasible``
            stays False, with its reason): the step priced as if the memory held it, as
            a what-if. Default ``False``: latencies are ``None`` when infeasible.

        Returns
        -------
        ServingResult
            Latencies are ``None`` when ``feasible`` is False (unless
            ``price_infeasible``).

        Raises
        ------
        ParameterError
            For a bad argument (unknown precision, batch of 0, output length 0 ...).
        InfeasibleError
            When ``raise_errors=True`` and the configuration cannot run.

        References
        ----------
        Pope et al. (2022), "Efficiently Scaling Transformer Inference", MLSys 2023;
        Shoeybi et al. (2019), Megatron-LM; Williams et al. (2009), Roofline.
        """
        b = _count(batch_size, "batch_size")
        s_in = _tokens(prompt_len, "prompt_len")
        s_out = _tokens(output_len, "output_len")
        tp, pp, mu = _check_plan_args(tp_size, pp_size, memory_utilization)
        knobs = engine_choices(
            self.engine, decode_attention_heads_per_block, gate_up_fused, host_time_per_step,
            host_overlap, tp_allreduce, vocab_parallel, cuda_graphs,
        )  # fmt: skip
        plan = _plan(
            model, hardware, precision, kv_precision, activation_precision, tp, pp,
            efficiency, fabric, mu, *knobs,
        )  # fmt: skip
        result = _solve_plan(
            plan,
            b,
            s_in,
            s_out,
            _flag(batched_prefill, "batched_prefill"),
            _flag(raise_errors, "raise_errors"),
            _context_problem(model, s_in, s_out),
            self.engine.name,
            price_infeasible=_flag(price_infeasible, "price_infeasible"),
        )
        return record(
            result, self, model=model, hardware=hardware, batch_size=batch_size,
            prompt_len=prompt_len, output_len=output_len, precision=precision,
            tp_size=tp_size, pp_size=pp_size,
        )  # fmt: skip


def _solve_plan(
    plan: _Plan,
    b: int,
    s_in: float,
    s_out: float,
    batched_prefill: bool,
    raise_errors: bool,
    too_long: str | None = None,
    engine: str = DEFAULT_ENGINE,
    *,
    price_infeasible: bool = False,
) -> ServingResult:
    final_ctx = s_in + s_out
    n_pre = float(b) if batched_prefill else 1.0
    workspace = _activation_workspace(plan, s_in * n_pre, n_pre)
    kv_seq = plan.kv_per_token_dev * final_ctx
    kv_total = kv_seq * b
    free = plan.mem_avail - plan.weights_dev - workspace * (1.0 + plan.overhead_frac)
    max_batch = int(free // kv_seq) if free > 0 else 0
    allocated = plan.weights_dev + kv_total + workspace
    overhead = plan.overhead_fixed + plan.overhead_frac * workspace
    memory = allocated + overhead

    reason = too_long or plan.problem  # past the context window, memory is beside the point
    if (
        reason is None
        and plan.weights_dev + workspace * (1.0 + plan.overhead_frac) > plan.mem_avail
    ):
        reason = (
            f"weights ({_gb(plan.weights_dev)} per accelerator) and workspace do not "
            f"fit in {_gb(plan.mem_avail)} usable memory; raise tp_size/pp_size or "
            "quantise"
        )
    elif reason is None and b > max_batch:
        reason = (
            f"KV cache of batch {b} at {final_ctx:g} tokens needs {_gb(kv_total)} per "
            f"accelerator; {_gb(max(free, 0.0))} is free (largest batch {max_batch})"
        )
    feasible = reason is None
    if not feasible and raise_errors:
        raise InfeasibleError(reason)  # type: ignore[arg-type]

    # One request's prefill and the batch's (identical when batched_prefill).
    pre1 = _prefill(plan, s_in, n_pre)
    pre_b = pre1 if b == 1 or batched_prefill else _prefill(plan, s_in, float(b))
    mean_ctx = s_in + 0.5 * s_out
    dec = _decode(plan, float(b), mean_ctx)

    out: dict[str, Any] = {}
    if feasible or price_infeasible:
        ttft, itl = pre1[0], dec[0]
        e2e = ttft + (s_out - 1.0) * itl
        cycle = pre_b[0] + (s_out - 1.0) * itl
        tps = b * s_out / cycle
        d = plan.devices
        out = {
            "ttft": ttft,
            "itl": itl,
            "e2e_latency": e2e,
            "prefill_time": pre_b[0],
            "tokens_per_second": tps,
            "tokens_per_second_per_accelerator": tps / d,
            "decode_tokens_per_second": b / itl,
            "tp_communication_time_prefill": pre1[3],
            "tp_communication_time_decode": dec[3],
            "pp_communication_time": dec[4],
            "prefill_mfu": pre1[1] / (ttft * plan.peak_raw * d),
            "decode_mbu": dec[2] / (itl * plan.bw_raw * d),
        }
    else:
        out = dict.fromkeys(_LATENCY_FIELDS)
    out.update(
        prefill_flops=pre1[1],
        decode_flops_per_step=dec[1],
        prefill_bytes=pre1[2],
        decode_bytes_per_step=dec[2],
        prefill_intensity=pre1[1] / pre1[2],
        decode_intensity=dec[1] / dec[2],
        prefill_bound="compute" if pre1[5] >= pre1[6] else "memory",
        decode_bound="compute" if dec[5] >= dec[6] else "memory",
        weight_bytes_per_accelerator=plan.weights_dev,
        kv_cache_bytes_per_accelerator=kv_total,
        activation_bytes_per_accelerator=workspace,
        framework_overhead_per_accelerator=overhead,
        memory_per_accelerator=memory,
        memory_available_per_accelerator=plan.mem_avail,
        max_batch_size=max_batch,
        batch_size=b,
        accelerators=plan.devices,
        feasible=feasible,
        infeasibility_reason=reason,
        precision=plan.precision,
        activation_precision=plan.activation_precision,
        kv_precision=plan.kv_precision,
        compute_precision=plan.compute_precision,
        scheduling="batched prefill" if batched_prefill else "single-request prefill",
        parallelism={"tp": plan.tp, "pp": plan.pp},
        engine=engine,
    )
    result = ServingResult(**out)
    # what explain() reads: the terms this step summed, and the links they rode
    object.__setattr__(result, "_itl_terms", (dec[7], plan.tp, plan.pp))
    object.__setattr__(result, "_ttft_terms", (pre1[7], plan.tp, plan.pp))
    return result
