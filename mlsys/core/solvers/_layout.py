"""The one step-time and memory model behind DistributedModel, MemoryModel (training),
ParallelismSearch and scaling_curve.

:func:`evaluate` takes a :class:`Problem` (model, fleet and precision reduced to SI
floats once) and a layout — ``tp, pp, ep, dp, m, v, zero, rc, sp, schedule, cp`` as
Python numbers *or* numpy arrays of any common shape (the fields of
:class:`mlsys.core.layout.TrainingLayout` as codes) — and returns every term of the
step time and of the memory per device (:func:`memory_terms`, which MemoryModel calls
alone). Every cited quantity is the public formula itself — activation bytes, ZeRO
bytes, in-flight micro-batches, interleaving factor and embedding buffers
(:mod:`mlsys.core.formulas.memory`), the bubble (:mod:`~mlsys.core.formulas.pipeline`),
group placement (:mod:`~mlsys.core.formulas.parallel`), collective and point-to-point
times (:mod:`~mlsys.core.formulas.collectives`) — each with a math-only path for plain
floats and a numpy path for arrays, so one call prices a single layout in microseconds
or 10^5 layouts at once, and the two can never disagree.

The physics, per device, per micro-batch of ``b`` sequences of ``s`` tokens
(``T = s·b``), per transformer layer, with ``t`` the tensor-parallel size:

* **matmuls** — ``2·N_layer·T/t`` FLOP forward, twice that backward, once more under
  full recomputation; at ``peak × η_compute``, slowed by the shapes of the layer's four
  tensor-parallel GEMMs (tile and wave quantisation over the SMs, a skinny GEMM's own
  memory roofline: :func:`mlsys.core.formulas.layer_time.linear_layers_time`, NVIDIA's
  "Matrix Multiplication Background User's Guide").
* **FP8 casts** — FP8 matmuls on 16-bit activations cast every GEMM operand first
  (per-tensor current scaling: amax, cast, transposed copy;
  :func:`mlsys.core.formulas.layer_time.fp8_cast_bytes`), memory traffic at
  ``HBM × η_memory``.
* **fixed costs** — :data:`mlsys.core.formulas.overheads.KERNEL_OVERHEAD_S` per kernel,
  :func:`mlsys.core.formulas.overheads.kernels_per_layer` kernels per layer forward
  (again under full recomputation; the non-matmul ones again under ``"dots"``) and
  backward.
* **recomputation** — ``"full"`` reruns each layer's forward from its input;
  ``"dots"`` (JAX's ``checkpoint_dots_with_no_batch_dims``) keeps the weight matmuls'
  outputs and reruns the attention core and the element-wise work only.
* **attention core** (``QKᵀ``, softmax, dropout, ``AV``) — a roofline of its own:
  ``4·s·d_attn·T/t`` FLOP forward, and, when the scores are materialised (no
  FlashAttention, as in 2021–22 Megatron-LM), ``(6e + 1)`` bytes of HBM traffic per
  score element forward (write ``QKᵀ``; read/write softmax; read/write dropout plus a
  one-byte mask; read for ``AV``) and twice that backward. With ``e = 2`` and the
  ``a·s/t`` scores per token this is why small heads (``d_head = 96``) run far below
  peak on an A100: the ``QKᵀ`` kernel's intensity is ``d_head`` FLOP/byte, under the
  ridge point. FlashAttention keeps the scores on chip (no traffic) and recomputes them
  in the backward pass (7 instead of 6 matmul-equivalents; Dao 2023); the fused kernel
  runs at the device's measured fractions of peak, forward and backward
  (:func:`mlsys.core.solvers.efficiency.fused_attention_fractions`: FlashAttention-2 on
  Ampere, cuDNN on Hopper; an older kernel generation at its own,
  :func:`mlsys.core.solvers.efficiency.attention_kernel_fractions`;
  :func:`mlsys.core.formulas.gemm.attention_time`), the same kernel model as serving.
  Under FP8 the attention and the output layer stay 16-bit.
* **element-wise kernels** (LayerNorms, bias-dropout-residual, GeLU/SwiGLU, and the
  rotation of Q and K for rotary models:
  :func:`mlsys.core.formulas.layer_time.rotary_embedding_bytes`) — pure
  memory traffic: forward ``10·e·h + 2·h`` bytes per token at the block boundaries
  (split by ``t`` only with sequence parallelism) and ``2·e·f`` (``3·e·f`` gated) in
  the MLP (always split), twice that backward, at ``HBM × η_memory``. This is the
  same tensor inventory as Korthikanti et al. (2022), Sec. 4.
* **tensor parallelism** — 4 all-reduce-equivalents of ``s·b·h·e`` per layer (6 with
  full recompute). Inside a GPU node they run as NCCL does: the fastest protocol of its
  cost model (LL, LL128, Simple: small-message latency), NVLink SHARP (NVLS) all-reduce
  where the switch reduces in the network, reduce-scatter + all-gather under sequence
  parallelism (:func:`mlsys.core.formulas.collectives.nccl_allreduce_time`); across
  nodes on the scale-out NIC. With ``tp_overlap`` (and sequence parallelism) each
  all-gather and reduce-scatter overlaps the one GEMM Transformer Engine's userbuffers
  pair it with: pipelined in ``t`` chunks of ``T/t`` tokens (forward, and the data
  gradients of the row-parallel layers) or in bulk beside a whole GEMM (the input
  re-gathered for the column-parallel weight gradients, their input gradients'
  reduce-scatter); a collective longer than its own GEMM shows through, and the split
  GEMMs' extra time is charged to the overlap
  (:func:`mlsys.core.formulas.overlap.userbuffers_exposed_time`).
* **expert parallelism** — 4 all-to-alls of ``s·b·k·h·e/t`` per MoE layer (6 with full
  recompute), pairwise exchanges whose off-node share ``(n−1)/n`` crosses each rank's
  network link (:func:`mlsys.core.formulas.collectives.multinode_alltoall_time`).
* **context parallelism** — each sequence is split over ``cp`` ranks (``T = s·b/cp``
  tokens per device: matmuls, element-wise work and activations shrink by ``cp``; the
  local queries still attend to all ``s`` keys). Ring attention passes the local K and
  V blocks round the ``cp`` ranks in ``cp − 1`` point-to-point steps per layer forward
  (again under full recompute) and K, V plus their gradients backward, each step
  overlapped with one block's attention; only the excess is exposed (Liu, Zaharia &
  Abbeel 2023, "Ring Attention with Blockwise Transformers", Sec. 3; NVIDIA
  Megatron-Core, "context_parallel package"). Each step's kernel writes its own partial
  output (backward: its own dQ, dK, dV), which element-wise kernels rescale and add into
  the running result at HBM speed
  (:func:`mlsys.core.formulas.layer_time.ring_attention_merge_bytes`, Transformer
  Engine's ``AttnFuncWithCPAndKVP2P``). With ``cp_comm_type="all_gather"`` (Llama
  3: Dubey et al. 2024, Sec. 3.3.2) the whole K and V are all-gathered before attention
  (again under full recompute) and dK, dV reduce-scattered backward, all of it exposed.
  Gradients are reduced (and ZeRO shards kept) over ``dp·cp`` ranks.
* **pipeline** — ``2·v`` point-to-point sends of ``s·b·h·e/t`` per micro-batch, and the
  bubble ``(p − 1)/v`` micro-batch times (1F1B, interleaved; GPipe has the same bubble).
  The device with the most layers (``⌈L/(p·v)⌉·v``; uneven splits allowed) and the LM
  head sets the pace and the memory.
* **data parallelism** — gradients reduced over the data-parallel group at the gradient
  dtype; ZeRO-1/2 reduce-scatter + all-gather, ZeRO-3 adds a parameter all-gather for
  forward and for backward per micro-batch. Hierarchical (intra-node then inter-node)
  when the group spans nodes with several members per node. With ``overlap`` the
  reduction hides behind the backward pass of the last micro-batch (ZeRO-2: of every
  micro-batch; ZeRO-3: behind all compute) and the parameter all-gather behind the next
  forward; what does not fit is exposed, and so is one bucket of each (the last
  reduction waits for the end of the backward, the next forward for the first gather:
  :func:`mlsys.core.formulas.overlap.bucket_edge_time`); what is hidden slows the kernels it runs
  beside by :data:`~mlsys.core.formulas.overlap.OVERLAPPED_COMPUTE_SLOWDOWN` of its
  duration (18.9%, Lee et al. 2025, arXiv:2507.03114; charged in
  ``dp_communication_time``). With tied embeddings and a pipeline the
  first and last stage then all-reduce the shared embedding's gradient (``V·h/t``
  elements at the gradient dtype), exposed (Megatron-LM ``train_step``,
  "backward-embedding-all-reduce"; Megatron-Core ``finalize_model_grads``).
* **gradient accumulation** — without Megatron's gradient-accumulation fusion (2021
  Megatron-LM, DeepSpeed, PyTorch DDP) every micro-batch adds its weight gradients into
  the accumulation buffer with a separate kernel, ``e + 2·e_g`` bytes per local
  parameter at HBM speed (:func:`mlsys.core.formulas.layer_time.gradient_accumulation_bytes`).
* **optimizer step** — Megatron's mixed-precision step over the locally owned parameters:
  gradients copied to fp32, unscaled (fp16), their norm, the Adam update of the fp32
  state, the weights written back: 38 bytes per parameter in bf16, 52 in fp16, at HBM
  speed (:func:`mlsys.core.formulas.memory.optimizer_step_bytes_per_param`).

The calibration lives in this module and nowhere else: the compute and memory
fractions come from :func:`mlsys.core.solvers.efficiency.resolve_efficiency`; the one
extra constants are :data:`NETWORK_EFFICIENCY` (achievable fraction of link bandwidth for
large collectives outside the NCCL protocol model) and the cited constants of the
formulas it calls (GEMM tile, kernel overhead, NCCL latencies). No constant is fitted to
a validation row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np

from mlsys.core.errors import ParameterError
from mlsys.core.formulas import collectives as coll
from mlsys.core.formulas._ops import ArrayOps, ScalarOps
from mlsys.core.formulas._ops import ops as _ops
from mlsys.core.formulas.eager import (
    ELEMENTWISE_KERNELS,
    eager_elementwise_bytes,
    eager_elementwise_kernels,
    eager_saved_activation_bytes,
)
from mlsys.core.formulas.gemm import (
    FLASH_ATTENTION_BACKWARD_FRACTION,
    FLASH_ATTENTION_FORWARD_FRACTION,
    attention_time,
)
from mlsys.core.formulas.layer_time import (
    FP8_CURRENT_SCALING_CAST_BYTES,
    fp8_cast_bytes,
    fsdp_flat_gradient_bytes,
    fsdp_per_parameter_copy_bytes,
    gradient_accumulation_bytes,
    linear_gemm_times,
    linear_layers_time,
    materialized_attention_time,
    output_layer_time,
    ring_attention_merge_bytes,
    rotary_embedding_bytes,
)
from mlsys.core.formulas.memory import (
    activation_bytes_per_layer,
    embedding_activation_bytes,
    interleaved_activation_factor,
    optimizer_state_bytes_per_param,
    optimizer_step_bytes_per_param,
    optimizer_step_time,
    pipeline_inflight_microbatches,
    zero_model_state_breakdown,
)
from mlsys.core.formulas.moe import (
    MEGATRON_HOST_TIME_PER_OP_S,
    moe_layer_host_ops,
    moe_layer_host_time,
    moe_token_shuffle_bytes,
)
from mlsys.core.formulas.overheads import (
    KERNEL_OVERHEAD_S,
    TRAINING_LAYER_BACKWARD_KERNELS,
    TRAINING_LAYER_FORWARD_KERNELS,
    kernels_per_layer,
)
from mlsys.core.formulas.overlap import (
    OVERLAPPED_COMPUTE_SLOWDOWN,
    bucket_edge_time,
    data_parallel_overlap_windows,
    fsdp_edge_exposed_time,
    fsdp_edge_fraction,
    overlap_slowdown_time,
    ring_attention_exchange_time,
    userbuffers_exposed_time,
)
from mlsys.core.formulas.parallel import (
    gradient_bucket_count,
    group_placement,
    tp_reductions_per_layer,
)
from mlsys.core.formulas.pipeline import interleaved_bubble_ratio, pipeline_p2p_bytes
from mlsys.core.formulas.transformer import residual_rerun_share, training_flops_per_token
from mlsys.core.layout import (
    RECOMPUTE_NAMES,
    SCHEDULE_NAMES,
    TOPOLOGY_NAMES,
    Recompute,
    Schedule,
    Topology,
)
from mlsys.core.precision import BYTES_PER_ELEMENT, default_grad_dtype, normalize_precision
from mlsys.core.solvers._memo import identity_memo

__all__ = [
    "NETWORK_EFFICIENCY",
    "RECOMPUTE_CODES",
    "TOPOLOGY_CODES",
    "SCHEDULE_CODES",
    "Problem",
    "build_problem",
    "evaluate",
    "memory_terms",
    "block_recompute_fraction",
    "training_storage_bytes",
    "require_rules",
    "STEP_TERMS",
    "TERM_PREFIX",
    "sum_terms",
]

NETWORK_EFFICIENCY: dict[str, float] = {"scale-up": 0.80, "scale-out": 0.90}
"""Achievable share of per-direction link bandwidth for large collectives.

nccl-tests on a DGX A100 report about 230–240 GB/s of bus bandwidth for large
all-reduces on 300 GB/s-per-direction NVLink 3 (≈ 0.8); a 200 Gb/s HDR or 400 Gb/s NDR
NIC delivers about 90 % of its line rate to NCCL across nodes. (NVIDIA nccl-tests
``doc/PERFORMANCE.md``; NVIDIA DGX A100 user guide.) Estimates, not fits."""

# name -> code maps of mlsys.core.layout (kept under their old names for callers)
RECOMPUTE_CODES = {k: int(v) for k, v in RECOMPUTE_NAMES.items()}
TOPOLOGY_CODES = {k: int(v) for k, v in TOPOLOGY_NAMES.items()}
SCHEDULE_CODES = {k: int(v) for k, v in SCHEDULE_NAMES.items()}

_FULL = float(Recompute.FULL)
_SELECTIVE = float(Recompute.SELECTIVE)
_DOTS = float(Recompute.DOTS)
# the forward's weight GEMMs (QKV, output, MLP up and down projections), which "dots" keeps
_LINEAR_GEMMS_PER_LAYER = float(
    sum(name.endswith("projection") for name in TRAINING_LAYER_FORWARD_KERNELS)
)
# kernels of a training layer forward and backward, with and without a fused attention
# kernel (kernels_per_layer), looked up rather than recounted on every solve
_KERNELS = {
    flash: (float(kernels_per_layer("forward", flash)), float(kernels_per_layer("backward", flash)))
    for flash in (False, True)
}
# a fused stack's element-wise kernels of a layer (norms, residual adds, activation),
# forward and backward: what an eager stack's operator lists replace
_FUSED_ELEMENTWISE_KERNELS = tuple(
    float(sum(any(w in name for w in ("norm", "residual", "GeLU")) for name in names))
    for names in (TRAINING_LAYER_FORWARD_KERNELS, TRAINING_LAYER_BACKWARD_KERNELS)
)
_GPIPE = int(Schedule.GPIPE)
_WIDE = ("fp32", "tf32", "fp64")
_NARROW = {"fp8", "int8", "fp6", "fp4", "int4"}
# the helpers of the one formula body (kept under their old names for tests)
_ScalarOps, _ArrayOps = ScalarOps, ArrayOps


def training_storage_bytes(prec: str, grad_dtype: str | None) -> tuple[float, float, float, bool]:
    """Bytes per weight, gradient and activation element in training, and whether the
    optimizer keeps an fp32 master copy.

    ``prec`` is a canonical precision. Below 32-bit compute the model weights and the
    stored activations are 16-bit: mixed precision keeps fp16/bf16 weights beside fp32
    masters (Micikevicius et al. 2018, "Mixed Precision Training", ICLR), and FP8
    training casts weights and inputs to FP8 per matmul while keeping bf16 parameters
    (NVIDIA Transformer Engine; the DeepSeek-V3 report, arXiv:2412.19437, Sec. 3.3).
    Gradients follow ``grad_dtype``, by default
    :func:`~mlsys.core.precision.default_grad_dtype`.

    Parameters
    ----------
    prec : str
        Canonical compute precision.
    grad_dtype : str or None
        Gradient precision.

    Returns
    -------
    tuple
        ``(weight bytes, gradient bytes, activation bytes, master copy?)``.
    """
    gd = (
        default_grad_dtype(prec)
        if grad_dtype is None
        else normalize_precision(grad_dtype, "grad_dtype")
    )
    if prec in _WIDE:
        e = BYTES_PER_ELEMENT[prec]
        return e, BYTES_PER_ELEMENT[gd], e, False
    return 2.0, BYTES_PER_ELEMENT[gd], 2.0, True


# -- placement and collectives (alpha-beta) -----------------------------------------------
def _placement(size: Any, stride: Any, g: float, o: type = ScalarOps) -> tuple[Any, Any]:
    """Members per node and nodes spanned: the cited
    :func:`mlsys.core.formulas.parallel.group_placement` (``o`` kept for old callers)."""
    return group_placement(size, stride, g)


_RING_KINDS = {coll.reduce_scatter_time: "reduce_scatter", coll.allgather_time: "all_gather"}


def _faster(a: Any, b: Any) -> Any:
    """The smaller of two times (floats stay floats on the one-solve path)."""
    if type(a) is float and type(b) is float:
        return a if a < b else b
    return np.minimum(a, b)


def _two_level(
    collective: Any, M: Any, k: Any, n: Any, P: Problem, lat: tuple[Any, Any] | None = None
) -> Any:
    """A reduce-scatter or all-gather of an M-byte buffer over a group of k·n ranks (k per
    node, n nodes): inside the node over the scale-up fabric, then the 1/k shard across
    nodes over the scale-out fabric — or NCCL's rings through every rank, one per NIC,
    whose NVLink and network hops overlap
    (:func:`mlsys.core.formulas.collectives.multinode_ring_time`), whichever is faster, as
    NCCL's tuner picks. (An all-to-all combines nothing on the way:
    :func:`mlsys.core.formulas.collectives.multinode_alltoall_time`.)"""
    a_in, a_out = (P.intra_lat, P.inter_lat) if lat is None else lat
    two = collective(M, k, P.intra_bw, a_in) + collective(M / k, n, P.inter_bw, a_out)
    kind = _RING_KINDS[collective]
    ring = coll.multinode_ring_time(kind, M, k, n, P.intra_bw, a_in, P.inter_bw, a_out)
    return _faster(two, ring)


def _allreduce(
    M: Any,
    k: Any,
    n: Any,
    topo: int,
    P: Problem,
    o: type = ScalarOps,
    lat: tuple[Any, Any] | None = None,
) -> Any:
    """All-reduce of M bytes over k ranks per node on n nodes, by :class:`Topology`.

    ``AUTO`` is NCCL's choice between its multi-node ring (one per NIC, the NVLink and
    network hops overlapped: :func:`mlsys.core.formulas.collectives.multinode_ring_time`)
    and the two-level all-reduce, whichever is faster. ``lat``: the per-step latencies
    inside and across nodes (default: the fabrics')."""
    a_in, a_out = (P.intra_lat, P.inter_lat) if lat is None else lat
    if topo == Topology.AUTO:
        hier = coll.hierarchical_allreduce_time(M, k, n, P.intra_bw, a_in, P.inter_bw, a_out)
        ring = coll.multinode_ring_time("all_reduce", M, k, n, P.intra_bw, a_in, P.inter_bw, a_out)
        return _faster(hier, ring)
    if topo == Topology.HIERARCHICAL:
        return coll.hierarchical_allreduce_time(M, k, n, P.intra_bw, a_in, P.inter_bw, a_out)
    N = k * n
    one_node = n <= 1.0
    if topo == Topology.RING:  # flat ring: the slowest link (the NIC once it leaves the node)
        bw = o.where(one_node, P.intra_bw, P.inter_bw)
        a = o.where(one_node, a_in, a_out)
        return coll.ring_allreduce_time(M, N, bw, a)
    # double binary tree across nodes (the hierarchical ring inside a single node)
    hier = coll.hierarchical_allreduce_time(M, k, n, P.intra_bw, a_in, P.inter_bw, a_out)
    return o.where(one_node, hier, coll.tree_allreduce_time(M, N, P.inter_bw, a_out))


# -- the problem: everything that does not depend on the layout ---------------------------
@dataclass(frozen=True)
class Problem:
    """Model, fleet and precision as SI floats (built once per solve or search).

    Attributes
    ----------
    L, h, a, kv, d_attn, kv_dim, ffn, V, s : float
        Layers, hidden, heads, KV heads, attention width, key (= value) width
        ``kv·d_head``, MLP width, vocabulary, sequence length (tokens).
    gated : float
        1.0 for a gated (SwiGLU) MLP, else 0.0.
    ffn_act : float
        MLP width a token passes through, averaged over dense and MoE layers
        (``(k + shared)·f_expert`` in MoE layers): the ``ffn_hidden`` of
        :func:`mlsys.core.formulas.activation_bytes_per_layer`.
    moe_layers, experts, topk : float
        MoE layers, routed experts, experts per token (0, 1, 1 for a dense model).
    n_layer : float
        Matmul parameters one token uses in a transformer layer (mean over dense and
        MoE layers; active experts only).
    n_head : float
        LM-head matmul parameters ``V·h``.
    params_dense, params_expert : float
        Parameters replicated across expert ranks / spread over them (all layers).
    model_flops_per_token : float
        Megatron-convention model FLOPs per token (forward + backward, no recompute).
    selective_flops_per_token, full_flops_per_token : float
        Extra executed FLOPs per token for selective / full recomputation.
    peak, peak_attn, hbm_bw, eta_c, eta_m, capacity : float
        Peak FLOP/s (matmul precision; attention precision), HBM bandwidth (bytes/s),
        compute and memory efficiencies, memory per device (bytes).
    accelerators_per_node, nodes, total : float
        Accelerators per node, nodes, accelerators (counts).
    intra_bw, intra_lat, inter_bw, inter_lat : float
        Achievable per-direction bandwidth (bytes/s) and latency (s) of the scale-up and
        scale-out fabrics (oversubscription included).
    e_act, w_bytes, g_bytes, opt_bytes : float
        Bytes per activation element, weight, reduced gradient; optimizer state bytes
        per parameter.
    opt_step_bytes : float
        HBM bytes one optimizer step moves per owned parameter
        (:func:`mlsys.core.formulas.memory.optimizer_step_bytes_per_param`).
    rotary : bool
        Rotary position embeddings: an element-wise pass over the queries and keys of
        every layer (:func:`mlsys.core.formulas.layer_time.rotary_embedding_bytes`).
    parallel_block : bool
        Attention and MLP in parallel, one tensor-parallel reduction per forward pass
        (:func:`mlsys.core.formulas.parallel.tp_reductions_per_layer`).
    batch : float
        Global batch in sequences.
    flash : bool
        FlashAttention-style fused attention (scores never reach HBM).
    sm_count : float or None
        Streaming multiprocessors of the accelerator (GEMM wave quantisation).
    scaleup_link_Bps : float
        Per-direction scale-up bandwidth before :data:`NETWORK_EFFICIENCY` (the NCCL cost
        model applies its own protocol efficiencies to it).
    scaleup_link : str
        NCCL link type inside a node (``"nvlink"``, ``"pci"``), or ``""`` when the
        tensor-parallel collectives are not NCCL's (TPU ICI, one device).
    in_network_reduction : bool
        The node's switch reduces in the network (NVLink SHARP): NCCL's NVLS all-reduce.
    scaleup_ll_step_s : float or None
        Measured time of one NCCL LL ring step on the node's links, in s
        (:data:`mlsys.core.formulas.collectives.NCCL_NVLINK_LL_STEP_LATENCY_MEASURED_S`,
        the table ServingModel prices its all-reduces with); None where unmeasured.
    kernel_overhead_s : float
        Fixed time per kernel (:data:`mlsys.core.formulas.overheads.KERNEL_OVERHEAD_S`).
    host_time_per_op_s : float
        Host time per operation of a MoE layer, in s
        (:data:`mlsys.core.formulas.moe.MEGATRON_HOST_TIME_PER_OP_S`).
    fp8_cast_bytes_per_element : float
        Bytes moved per element to cast 16-bit GEMM operands to FP8 (0 unless the matmuls
        run in a narrow format on 16-bit activations;
        :data:`mlsys.core.formulas.layer_time.FP8_CURRENT_SCALING_CAST_BYTES`).
    gemm_input_bytes : float or None
        Bytes an element of the input copies narrow-format GEMMs keep for the backward pass
        (1 under FP8 on 16-bit activations; None: the GEMMs keep the activations
        themselves; :func:`mlsys.core.formulas.memory.activation_bytes_per_layer`).
    attention_fractions : (float, float)
        Forward and backward fractions of ``peak_attn`` the fused attention kernel
        sustains on this device
        (:func:`mlsys.core.solvers.efficiency.fused_attention_fractions`).
    attention_unmasked : bool
        Those fractions are an unmasked kernel's, so causal attention runs at
        :func:`mlsys.core.formulas.gemm.causal_attention_rate` of them (False for
        FlashAttention-1's generation, whose fractions describe causal runs).
    head_flops_s : float
        Achievable FLOP/s of the output layer's GEMMs: the 16-bit rate when the layers'
        GEMMs run in FP8, which keeps the embedding and the output head in 16 bits
        (DeepSeek-AI 2024, "DeepSeek-V3 Technical Report", arXiv:2412.19437, Sec. 3.3.1;
        Megatron-Core's output layer is not a Transformer Engine FP8 module).
    tied_embeddings : bool
        The input embedding and the output layer share one matrix: with a pipeline
        their gradients are all-reduced between the first and last stage.
    residual_rerun_share : float
        Share of a layer's forward matmul FLOPs a full recompute reruns when it reruns
        only the residuals the backward consumes (JAX; not the attention and MLP output
        projections): :func:`mlsys.core.formulas.transformer.residual_rerun_share`.
    """

    L: float
    h: float
    a: float
    kv: float
    d_attn: float
    kv_dim: float
    ffn: float
    V: float
    s: float
    gated: float
    ffn_act: float
    moe_layers: float
    experts: float
    topk: float
    n_layer: float
    n_head: float
    params_dense: float
    params_expert: float
    model_flops_per_token: float
    selective_flops_per_token: float
    full_flops_per_token: float
    peak: float
    peak_attn: float
    hbm_bw: float
    eta_c: float
    eta_m: float
    capacity: float
    accelerators_per_node: float
    nodes: float
    total: float
    intra_bw: float
    intra_lat: float
    inter_bw: float
    inter_lat: float
    e_act: float
    w_bytes: float
    g_bytes: float
    opt_bytes: float
    batch: float
    flash: bool
    sm_count: float | None = None
    scaleup_link_Bps: float = 0.0
    scaleup_link: str = ""
    in_network_reduction: bool = False
    scaleup_ll_step_s: float | None = None
    kernel_overhead_s: float = KERNEL_OVERHEAD_S
    host_time_per_op_s: float = MEGATRON_HOST_TIME_PER_OP_S
    fp8_cast_bytes_per_element: float = 0.0
    gemm_input_bytes: float | None = None
    attention_fractions: tuple[float, float] = (
        FLASH_ATTENTION_FORWARD_FRACTION,
        FLASH_ATTENTION_BACKWARD_FRACTION,
    )
    attention_unmasked: bool = True
    head_flops_s: float = 0.0
    tied_embeddings: bool = False
    opt_step_bytes: float = 38.0
    rotary: bool = False
    residual_rerun_share: float = 1.0
    parallel_block: bool = False
    eager_elementwise: bool = False
    eager_fused_norms: bool = False
    # the fused attention kernel's time multipliers (forward, backward) with dropout on
    attention_dropout_factors: tuple[float, float] = (1.0, 1.0)
    # shape ratios already priced for this problem, by (tokens, tp, full recompute): a
    # solve asks for one, and the same again on the next solve of the same problem
    priced: dict = field(default_factory=dict, init=False, compare=False, hash=False, repr=False)

    @property
    def g(self) -> float:
        """Deprecated spelling of :attr:`accelerators_per_node` (beside ``g_bytes``)."""
        return self.accelerators_per_node


def _mlp_width_per_token(model: Any) -> float:
    """MLP width a token passes through, averaged over the layers (see ``Problem.ffn_act``)."""
    moe_layers = float(model.moe_layers)
    dense_layers = float(model.layers) - moe_layers
    return (
        dense_layers * float(model.ffn_hidden)
        + moe_layers
        * (model.experts_per_token + model.shared_experts)
        * float(model.expert_ffn_hidden or model.ffn_hidden)
    ) / float(model.layers)


@identity_memo(objects=2)
def build_problem(
    model: Any,
    fleet: Any,
    batch_size: int,
    precision: str = "bf16",
    efficiency: Any = None,
    seq_len: int | None = None,
    grad_dtype: str | None = None,
    flash_attention: bool | None = None,
    optimizer: str = "adam",
    attention_kernel: str = "fused",
    elementwise_kernels: str = "fused",
) -> Problem:
    """Reduce a model, a fleet (or one accelerator) and a precision to the floats of a layout.

    Parameters
    ----------
    model : TransformerWorkload
        The network.
    fleet : Fleet or Accelerator
        The cluster; an :class:`~mlsys.core.types.Accelerator` alone (MemoryModel) gives
        a problem whose memory terms are exact and whose network terms are not used.
    batch_size : int
        Global batch in sequences.
    precision : str
        Matmul precision (``"bf16"``, ``"fp16"``, ``"fp8"``, ``"fp32"`` ...).
    efficiency : None, float, pair or dict
        See :func:`mlsys.core.solvers.efficiency.resolve_efficiency`.
    seq_len : int, optional
        Tokens per sequence (default the model's).
    grad_dtype : str, optional
        Precision of the gradient buffers and their reduction.
    flash_attention : bool, optional
        Fused attention that never writes the scores (default True).
    optimizer : str
        Optimizer whose state is kept (:func:`optimizer_state_bytes_per_param`).
    attention_kernel : {"fused", "flash2", "flash1"}
        The fused attention kernel's generation, priced at its fractions of peak on the
        device (:func:`mlsys.core.solvers.efficiency.attention_kernel_fractions`).
    elementwise_kernels : {"fused", "eager", "eager_fused_norm"}
        How the element-wise work runs: fused kernels, or each operator of the model code
        its own kernel (eager PyTorch: :mod:`mlsys.core.formulas.eager`), optionally with
        fused norms.

    Returns
    -------
    Problem
        Memoised per (model, fleet) identity and the other arguments
        (:mod:`mlsys.core.solvers._memo`).
    """
    from mlsys.core.solvers.efficiency import (
        attention_fractions_unmasked,
        attention_kernel_fractions,
        fused_attention_dropout_factors,
    )

    acc = _checked_device(model, fleet, elementwise_kernels)
    prec = normalize_precision(precision)
    rates = _rate_fields(acc, prec, efficiency)
    w_bytes, g_bytes, e_act, master = training_storage_bytes(prec, grad_dtype)
    opt_bytes = optimizer_state_bytes_per_param(optimizer, master_weights=master)
    s = int(seq_len or model.seq_len)
    shape = _model_fields(model, s)
    # narrow GEMMs on 16-bit activations cast their inputs, and (Transformer Engine's
    # linear layers) save their own quantised input copies, one byte an element
    narrow_on_16bit = prec in _NARROW and e_act >= 2.0
    return Problem(
        **shape,
        **rates,
        **_network_fields(fleet),
        **_scaleup_fields(fleet, acc),
        capacity=acc.memory_bytes,
        e_act=e_act,
        w_bytes=w_bytes,
        g_bytes=g_bytes,
        opt_bytes=opt_bytes,
        batch=float(batch_size),
        flash=True if flash_attention is None else bool(flash_attention),
        sm_count=None if acc.sm_count is None else float(acc.sm_count),
        attention_fractions=attention_kernel_fractions(acc, attention_kernel),
        attention_unmasked=attention_fractions_unmasked(acc, attention_kernel),
        fp8_cast_bytes_per_element=FP8_CURRENT_SCALING_CAST_BYTES if narrow_on_16bit else 0.0,
        gemm_input_bytes=1.0 if narrow_on_16bit else None,
        opt_step_bytes=optimizer_step_bytes_per_param(
            opt_bytes, g_bytes, w_bytes, master_weights=master, loss_scaling=prec == "fp16"
        ),
        eager_elementwise=elementwise_kernels != "fused",
        eager_fused_norms=elementwise_kernels == "eager_fused_norm",
        attention_dropout_factors=fused_attention_dropout_factors(acc, float(s)),
    )


def _checked_device(model: Any, fleet: Any, elementwise_kernels: str) -> Any:
    """The accelerator of ``fleet`` (a Fleet or one accelerator), the inputs checked."""
    from mlsys.core.types import Fleet, TransformerWorkload

    if not isinstance(model, TransformerWorkload):
        raise ParameterError(
            "model",
            getattr(model, "name", model),
            "a TransformerWorkload",
            "Training layouts are priced for transformers (tensor/pipeline/expert parallel).",
        )
    if isinstance(fleet, Fleet):
        acc = fleet.node.accelerator
    elif hasattr(fleet, "memory_bytes"):
        acc = fleet
    else:
        raise ParameterError("fleet", fleet, "a Fleet(node=..., count=..., fabric=...)")
    if elementwise_kernels not in ELEMENTWISE_KERNELS:
        raise ParameterError(
            "elementwise_kernels", elementwise_kernels, "one of " + ", ".join(ELEMENTWISE_KERNELS)
        )
    return acc


def _rate_fields(acc: Any, prec: str, efficiency: Any) -> dict[str, Any]:
    """Peak and achievable rates of the device in ``prec`` (FLOP/s, byte/s, fractions).

    The output layer (LM head) and attention stay in 16 bits under FP8 training.
    """
    from mlsys.core.solvers.efficiency import resolve_efficiency

    peak = acc.peak_flops_s(prec)
    peak_attn = peak
    eta_c, eta_m = resolve_efficiency(efficiency, acc, prec)
    head_rate = peak * eta_c
    if prec in _NARROW:
        for wide in ("bf16", "fp16"):
            if wide in acc.precisions:
                peak_attn = acc.peak_flops_s(wide)
                head_rate = peak_attn * resolve_efficiency(efficiency, acc, wide)[0]
                break
    return {
        "peak": peak,
        "peak_attn": peak_attn,
        "hbm_bw": acc.memory_bandwidth_Bps,
        "eta_c": eta_c,
        "eta_m": eta_m,
        "head_flops_s": head_rate,
    }


def _model_fields(model: Any, s: int) -> dict[str, Any]:
    """The network's shape, parameter counts and FLOPs per token at ``s`` tokens."""
    bd = model.param_breakdown
    scale = model.total_params / bd["total"]  # honour a given total
    L = float(model.layers)
    d_attn = float(model.heads * model.head_dim)
    kv_dim = float(model.kv_heads * model.head_dim)
    n_layers_matmul = float(bd["layers_matmul_active"]) * scale
    n_head = float(model.vocab * model.hidden)
    flops_per_tok = {
        rc: float(training_flops_per_token(n_layers_matmul, n_head, L, s, d_attn, recompute=rc))
        for rc in ("none", "selective", "full")
    }
    params_expert = float(bd["mlp_experts"]) * scale if model.is_moe else 0.0
    return {
        "L": L,
        "h": float(model.hidden),
        "a": float(model.heads),
        "kv": float(model.kv_heads),
        "d_attn": d_attn,
        "kv_dim": kv_dim,
        "ffn": float(model.ffn_hidden),
        "V": float(model.vocab),
        "s": float(s),
        "gated": 1.0 if model.gated_mlp else 0.0,
        "ffn_act": _mlp_width_per_token(model),
        "moe_layers": float(model.moe_layers),
        "experts": float(model.experts),
        "topk": float(model.experts_per_token) if model.is_moe else 1.0,
        "n_layer": n_layers_matmul / L,
        "n_head": n_head,
        "params_dense": model.total_params - params_expert,
        "params_expert": params_expert,
        "model_flops_per_token": flops_per_tok["none"],
        "selective_flops_per_token": flops_per_tok["selective"] - flops_per_tok["none"],
        "full_flops_per_token": flops_per_tok["full"] - flops_per_tok["none"],
        "tied_embeddings": bool(model.tied_embeddings),
        "rotary": str(model.position_embedding).lower() == "rope",
        "parallel_block": bool(getattr(model, "parallel_block", False)),
        "residual_rerun_share": float(
            residual_rerun_share(d_attn, kv_dim, _mlp_width_per_token(model), model.gated_mlp)
        ),
    }


def _network_fields(fleet: Any) -> dict[str, float]:
    """Devices, nodes and the achievable bandwidth and latency of both fabrics (one
    device alone: no network, its memory terms only)."""
    from mlsys.core.types import Fleet

    if not isinstance(fleet, Fleet):
        net = (1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 0.0)
    else:
        intra, inter = fleet.node.intra_fabric, fleet.fabric
        net = (
            float(fleet.accelerators_per_node),  # in use per node (part of a rack: fewer)
            float(fleet.count),
            float(fleet.total_accelerators),
            intra.effective_bandwidth_Bps * NETWORK_EFFICIENCY.get(intra.kind, 0.8),
            intra.latency_s,
            inter.effective_bandwidth_Bps * NETWORK_EFFICIENCY.get(inter.kind, 0.9),
            inter.latency_s,
        )
    names = ("accelerators_per_node", "nodes", "total", "intra_bw", "intra_lat", "inter_bw")
    return dict(zip((*names, "inter_lat"), net, strict=True))


def _scaleup_fields(fleet: Any, acc: Any) -> dict[str, Any]:
    """A GPU node's scale-up link (NVLink or PCIe): its bandwidth, in-network reduction
    and NCCL's measured low-latency step; empty for any other device or fleet."""
    from mlsys.core.types import Fleet

    link, link_bw, in_net, ll_step = "", 0.0, False, None
    if (
        isinstance(fleet, Fleet)
        and acc.kind == "gpu"
        and fleet.node.intra_fabric.kind == "scale-up"
    ):
        intra = fleet.node.intra_fabric
        link = "pci" if intra.name.upper().startswith("PCIE") else "nvlink"
        link_bw = intra.effective_bandwidth_Bps
        in_net = bool(intra.in_network_reduction)
        ll_step = coll.NCCL_NVLINK_LL_STEP_LATENCY_MEASURED_S.get(intra.link_generation)
    return {
        "scaleup_link_Bps": link_bw,
        "scaleup_link": link,
        "in_network_reduction": in_net,
        "scaleup_ll_step_s": ll_step,
    }


@identity_memo(objects=2)
def require_rules(
    layout: Any, model: Any, total_accelerators: int | None, batch: int, seq_len: int
) -> bool:
    """Check ``layout`` against :data:`mlsys.core.layout.LAYOUT_RULES` (memoised: a
    layout that passed once for a model, fleet size, batch and sequence passes again).

    Parameters
    ----------
    layout : TrainingLayout
        The layout, ``dp`` set.
    model : TransformerWorkload
        The network.
    total_accelerators : int or None
        Fleet size (None: no world-size rule).
    batch : int
        Global batch, in sequences.
    seq_len : int
        Tokens per sequence.

    Returns
    -------
    bool
        True (a broken rule raises).

    Raises
    ------
    ParameterError
        For the first rule broken, naming the parameter, value and what is allowed.
    """
    layout.require(model, total_accelerators, batch, seq_len)
    return True


def block_recompute_fraction(layers: int, pp: int, v: int, recompute_num_layers: Any) -> float:
    """Share of a model chunk's layers that block recompute reruns.

    Megatron-LM's ``--recompute-method block --recompute-num-layers N`` recomputes the
    first ``N`` layers of each model chunk (``⌈L/(p·v)⌉`` layers in the fullest one) and
    keeps every activation of the rest.

    Parameters
    ----------
    layers, pp, v : int
        Transformer layers, pipeline stages, model chunks per device.
    recompute_num_layers : int or None
        ``N``; None recomputes every layer.

    Returns
    -------
    float
        Fraction in (0, 1].

    Raises
    ------
    ParameterError
        For an ``N`` that is not a positive whole number.

    References
    ----------
    Chen et al. (2016), "Training Deep Nets with Sublinear Memory Cost",
    arXiv:1604.06174 (checkpointing a chosen subset of layers); NVIDIA Megatron-Core
    ``TransformerBlock._checkpointed_forward`` (``recompute_method="block"``: the first
    ``recompute_num_layers`` layers of the block).

    Examples
    --------
    >>> block_recompute_fraction(96, 8, 1, 3)
    0.25
    """
    if recompute_num_layers is None:
        return 1.0
    from mlsys.core.solvers._checks import positive_int

    n = positive_int("recompute_num_layers", recompute_num_layers)
    per_chunk = -(-int(layers) // (int(pp) * int(v)))
    return min(n, per_chunk) / per_chunk


# -- memory per device ----------------------------------------------------------------------
def memory_terms(
    P: Problem,
    tp: Any,
    pp: Any,
    ep: Any,
    dp: Any,
    m: Any,
    v: Any,
    zero: Any,
    rc: Any,
    sp: Any,
    schedule: Any = 0,
    cp: Any = 1.0,
    recompute_fraction: float = 1.0,
    dropout: bool = True,
) -> dict[str, Any]:
    """Memory per device of a layout (floats) or of many (arrays): the one training-memory
    model of DistributedModel, MemoryModel and ParallelismSearch.

    Model states: dense parameters ``P_dense/(t·p)`` are sharded by ZeRO over the
    ``dp·ep·cp`` ranks that replicate them, expert parameters ``P_exp/(t·p·e)`` over
    ``dp·cp`` (Megatron's distributed optimizer shards over data × context parallel
    ranks) — :func:`~mlsys.core.formulas.zero_model_state_breakdown`. Activations: the
    busiest (first) stage holds ``⌈L/(p·v)⌉·v`` layers of
    :func:`~mlsys.core.formulas.activation_bytes_per_layer` for
    :func:`~mlsys.core.formulas.pipeline_inflight_microbatches` micro-batches, times
    :func:`~mlsys.core.formulas.interleaved_activation_factor`, plus
    :func:`~mlsys.core.formulas.embedding_activation_bytes`; context parallelism gives
    each rank ``s/cp`` tokens.

    Parameters
    ----------
    P : Problem
        The model, fleet and precision.
    tp, pp, ep, dp, m, v, cp : float or ndarray
        Layout sizes (counts).
    zero : float or ndarray
        ZeRO stage 0–3.
    rc : float or ndarray
        :class:`~mlsys.core.layout.Recompute` code.
    sp : float or ndarray
        1.0 with sequence parallelism.
    schedule : int or ndarray
        :class:`~mlsys.core.layout.Schedule` code (1: GPipe).
    recompute_fraction : float or ndarray
        Under full recomputation, the share of each model chunk's layers that is
        recomputed (Megatron's ``--recompute-method block --recompute-num-layers``);
        the others keep every activation. 1.0: all of them. An array gives one share per
        layout (ParallelismSearch).
    dropout : bool
        Dropout runs, so its masks are stored (``False``: a dropout-free run).

    Returns
    -------
    dict of str to float or ndarray
        ``weights, gradients, optimizer, activations, memory`` (bytes),
        ``microbatch_size`` (sequences), ``layers_per_device`` (count).
    """
    o = _ops(tp, pp, ep, dp, m, v, zero, rc, sp, schedule, cp)
    if o is ScalarOps:  # a copy: the caller may change it, the memo must not
        return dict(_memory_terms_of_one(P, tp, pp, ep, dp, m, v, zero, rc, sp, schedule, cp,
                                         recompute_fraction, dropout))  # fmt: skip
    return _memory_terms(
        P, tp, pp, ep, dp, m, v, zero, rc, sp, schedule, cp, o, recompute_fraction, dropout
    )


def _memory_terms_of_one(
    P: Problem, tp: float, pp: float, ep: float, dp: float, m: float, v: float, zero: float,
    rc: float, sp: float, schedule: int, cp: float, recompute_fraction: float,
    dropout: bool = True,
) -> dict[str, Any]:  # fmt: skip
    """:func:`memory_terms` of one layout, read back when priced before (a book re-solving
    it; DistributedModel and MemoryModel asking about the same one): a pure function of
    the problem and these numbers. The memo's own dict: read it, do not change it."""
    key = ("memory", tp, pp, ep, dp, m, v, zero, rc, sp, schedule, cp, recompute_fraction,
           dropout)  # fmt: skip
    hit = P.priced.get(key)
    if hit is None:
        if len(P.priced) > 4096:
            P.priced.clear()
        hit = P.priced[key] = _memory_terms(
            P, tp, pp, ep, dp, m, v, zero, rc, sp, schedule, cp, ScalarOps, recompute_fraction,
            dropout,
        )  # fmt: skip
    return hit


def _memory_terms(
    P: Problem,
    tp: Any,
    pp: Any,
    ep: Any,
    dp: Any,
    m: Any,
    v: Any,
    zero: Any,
    rc: Any,
    sp: Any,
    schedule: Any,
    cp: Any,
    o: type,
    recompute_fraction: float = 1.0,
    dropout: bool = True,
) -> dict[str, Any]:
    b = P.batch / (dp * ep * m)
    psi_dense = P.params_dense / (tp * pp)
    psi_exp = P.params_expert / (tp * pp * ep)
    w_d, g_d, k_d = zero_model_state_breakdown(
        psi_dense, dp * ep * cp, zero, P.opt_bytes, P.w_bytes, P.g_bytes
    )
    if P.params_expert > 0.0:  # a dense model has no expert shards to count
        w_e, g_e, k_e = zero_model_state_breakdown(
            psi_exp, dp * cp, zero, P.opt_bytes, P.w_bytes, P.g_bytes
        )
    else:
        w_e = g_e = k_e = 0.0
    layers_dev = o.ceil(P.L / (pp * v)) * v
    act_layer = activation_bytes_per_layer(
        P.s, b, P.h, P.a, tp, sp, rc, P.e_act,
        ffn_hidden=P.ffn_act, kv_heads=P.kv, gated_mlp=P.gated == 1.0,
        flash_attention=P.flash, cp_size=cp, head_dim=P.d_attn / P.a,
        gemm_input_bytes_per_element=P.gemm_input_bytes, dropout=dropout,
    )  # fmt: skip
    if _partial(recompute_fraction):  # block recompute: the other layers keep everything
        kept = activation_bytes_per_layer(
            P.s, b, P.h, P.a, tp, sp, 0.0, P.e_act,
            ffn_hidden=P.ffn_act, kv_heads=P.kv, gated_mlp=P.gated == 1.0,
            flash_attention=P.flash, cp_size=cp, head_dim=P.d_attn / P.a,
            gemm_input_bytes_per_element=P.gemm_input_bytes, dropout=dropout,
        )  # fmt: skip
        f = recompute_fraction
        act_layer = o.where(rc == _FULL, f * act_layer + (1.0 - f) * kept, act_layer)
    if P.eager_elementwise:  # what autograd keeps beyond the fused layer's tensors
        kept_extra = eager_saved_activation_bytes(
            P.s * b / cp, P.h, P.a, P.kv, P.d_attn / P.a, tp, P.e_act, sp, P.eager_fused_norms
        )
        # layers that keep their activations: all without recompute or with selective,
        # the unrecomputed share under block recompute, none under full or "dots"
        kept_share = o.where(rc <= _SELECTIVE, 1.0, 0.0)
        if _partial(recompute_fraction):
            kept_share = o.where(rc == _FULL, 1.0 - recompute_fraction, kept_share)
        act_layer = act_layer + kept_share * kept_extra
    inflight = pipeline_inflight_microbatches(pp, m, schedule == _GPIPE)
    # capped at the step's m·v chunk-micro-batches (all forwards first when m = p)
    interleave = interleaved_activation_factor(pp, v, m)
    extra = embedding_activation_bytes(
        P.s / cp, b, P.h, P.V, tp, pp, inflight_microbatches=inflight, dropout=dropout
    )
    activations = act_layer * layers_dev * inflight * interleave + extra
    weights, grads, optim = w_d + w_e, g_d + g_e, k_d + k_e
    return {
        "microbatch_size": b,
        "layers_per_device": layers_dev,
        "weights": weights,
        "gradients": grads,
        "optimizer": optim,
        "activations": activations,
        "memory": weights + grads + optim + activations,
    }


def _partial(recompute_fraction: Any) -> bool:
    """Whether block recompute leaves some layers' activations kept (a share below 1),
    for one layout (a float) or any of many (an array)."""
    if type(recompute_fraction) is float:
        return recompute_fraction < 1.0
    return bool(np.any(np.asarray(recompute_fraction) < 1.0))


def _linear_shape_ratio(P: Problem, T: Any, tp: Any, full: Any, o: type) -> Any:
    """Time of a layer's linear GEMMs (forward, its rerun under full recompute, backward)
    over the same FLOPs at ``peak × η_compute``: at least 1, the cost of their shapes.

    The shapes are Megatron's four tensor-parallel GEMMs of ``T`` tokens
    (:func:`mlsys.core.formulas.layer_time.linear_layers_time`); the ratio applies to the
    layer's exact matmul FLOPs (``2·N_layer·T/t`` per pass), so the FLOP accounting stays
    the cited one whatever the attention variant (GQA, MLA) or MoE routing."""
    if o is ScalarOps:
        key = (T, tp, full)
        hit = P.priced.get(key)
        if hit is None:
            if len(P.priced) > 4096:
                P.priced.clear()
            hit = P.priced[key] = _linear_shape_ratio_of(P, T, tp, full, o)
        return hit
    x = np.asarray(full, dtype=float)
    if ((x > 0.0) & (x < 1.0)).any():
        # block recompute reruns a share x of the forward: ((1 + x)·fwd + bwd) over
        # (3 + x) forward FLOPs, exactly what the scalar path computes, from the ratios
        # with no rerun (r0 = (fwd + bwd)/3) and a whole one (r1 = (2·fwd + bwd)/4)
        r0 = _linear_shape_ratio_of(P, T, tp, np.zeros_like(x), o)
        r1 = _linear_shape_ratio_of(P, T, tp, np.ones_like(x), o)
        return (3.0 * r0 + x * (4.0 * r1 - 3.0 * r0)) / (3.0 + x)
    return _linear_shape_ratio_of(P, T, tp, full, o)


def _distinct(big: Any, group: Any, flag: Any) -> tuple[Any, Any, Any, Any, tuple]:
    """The distinct (big, group, flag) rows of broadcast arrays — a count or byte size, a
    group size below 4096, a 0/1 flag — and the index mapping every layout back to its
    row: a search's thousands of layouts share a few of them, priced once each."""
    big, group, flag = (np.asarray(x, dtype=float) for x in (big, group, flag))
    pair = np.broadcast_shapes(big.shape, group.shape)
    full = np.broadcast_shapes(pair, flag.shape)
    if math.prod(pair) < math.prod(full):
        # the flag varies along axes the (big, group) pair does not (a search's grid of
        # layout rows × options): the pair's few distinct rows first, on its own shape,
        # then the flag joined by a dense code — no sort over the whole grid. Rows come
        # out in the same order as below (by big, group, then flag).
        b_u, g_u, _, pair_row, _ = _distinct(big, group, 0.0)
        code = (pair_row.reshape(pair) * 2 + (flag > 0.0)).ravel()
        seen = np.zeros(2 * len(b_u), dtype=bool)
        seen[code] = True
        rows = np.flatnonzero(seen)
        inverse = (np.cumsum(seen) - 1)[code]
        return b_u[rows // 2], g_u[rows // 2], (rows % 2) * 1.0, inverse, full
    b, g, f = np.broadcast_arrays(big, group, flag)
    b1, g1, f1 = b.ravel(), g.ravel(), (f.ravel() > 0.0) * 1.0
    exact = np.array_equal(b1, np.floor(b1)) and b1.max(initial=0.0) < 2.0**40
    if exact and g1.max(initial=0.0) < 4096.0:  # one exact float key per row
        keys, inverse = np.unique((b1 * 4096.0 + g1) * 2.0 + f1, return_inverse=True)
        f_u = keys % 2.0
        g_u = ((keys - f_u) / 2.0) % 4096.0
        b_u = np.floor(keys / 8192.0)
        return b_u, g_u, f_u, inverse, b.shape
    rows, inverse = np.unique(np.stack([b1, g1, f1], axis=1), axis=0, return_inverse=True)
    return rows[:, 0], rows[:, 1], rows[:, 2], inverse.ravel(), b.shape


def _linear_shape_ratio_of(P: Problem, T: Any, tp: Any, full: Any, o: type) -> Any:
    if o is not ScalarOps:
        # each distinct layout shape through the scalar path (and its memo): a search
        # prices a layout exactly as a solve does
        t_u, tp_u, full_u, inverse, shape = _distinct(T, tp, full)
        ratio = [
            _linear_shape_ratio(P, float(t), float(p), bool(f), ScalarOps)
            for t, p, f in zip(t_u, tp_u, full_u, strict=True)
        ]
        return np.asarray(ratio)[inverse].reshape(shape)
    return _linear_shape_ratio_scalar(
        float(T), float(tp), float(full), float(P.h), float(P.a), float(P.kv),
        float(P.d_attn), float(P.ffn_act), float(P.gated), P.peak * P.eta_c,
        P.hbm_bw * P.eta_m, float(P.e_act), P.sm_count,
    )  # fmt: skip


@lru_cache(maxsize=8192)
def _linear_shape_ratio_scalar(
    T: float, tp: float, full: float, h: float, a: float, kv_heads: float, d_attn: float,
    ffn_act: float, gated: float, F: float, B: float, e_act: float, sm_count: Any,
) -> float:  # fmt: skip
    """:func:`_linear_shape_ratio_of` for one layout, from the numbers it reads (pure, so
    remembered across problems: a new fleet or batch of the same model and device prices
    its GEMM shapes once). ``F`` and ``B`` are the achievable FLOP/s and bytes/s."""
    d_head = d_attn / a
    shape = (h, a, kv_heads, d_head, ffn_act, gated)
    fwd = linear_layers_time(T, *shape, tp, F, B, e_act, sm_count=sm_count)
    bwd = linear_layers_time(T, *shape, tp, F, B, e_act, sm_count=sm_count, backward=True)
    q = d_attn / tp
    kv = max(kv_heads / tp, 1.0) * d_head
    f = ffn_act / tp
    flops_fwd = 2.0 * T * h * ((q + 2.0 * kv) + q + (1.0 + gated) * f + f)
    return float(((1.0 + full) * fwd + bwd) * F / ((3.0 + full) * flops_fwd))


def _fused_attention_time(
    P: Problem, b: Any, cp: Any, tp: Any, full: Any, o: type, dropout: bool = False
) -> Any:
    """The fused kernel at the device's measured fractions of peak, forward (again
    under full recompute) and backward (:func:`mlsys.core.formulas.gemm.attention_time`),
    per layer and micro-batch of ``b`` sequences split ``cp`` ways; with ``dropout``, each
    pass slowed by dropout's measured cost on the device
    (:func:`mlsys.core.solvers.efficiency.fused_attention_dropout_factors`)."""
    if o is ScalarOps:
        key = ("attention", b, cp, tp, full, dropout)
        hit = P.priced.get(key)
        if hit is not None:
            return hit
    s = P.s
    attn = (b, s / cp, s, P.a / tp, o.max(P.kv / tp, 1.0), P.d_attn / P.a, P.peak_attn)
    bw = P.hbm_bw * P.eta_m
    fwd_frac, bwd_frac = P.attention_fractions
    fwd_slow, bwd_slow = P.attention_dropout_factors if dropout else (1.0, 1.0)
    unmasked = P.attention_unmasked
    out = (1.0 + full) * fwd_slow * attention_time(
        *attn, bw, P.e_act, forward_fraction=fwd_frac, unmasked_fractions=unmasked
    ) + bwd_slow * attention_time(
        *attn, bw, P.e_act, backward=True, backward_fraction=bwd_frac, unmasked_fractions=unmasked
    )
    if o is ScalarOps:
        P.priced[key] = out
    return out


def _userbuffers_exposed(P: Problem, T: Any, tp: Any, full: Any, collective: Any, o: type) -> Any:
    """Tensor-parallel time a layer leaves exposed under ``--tp-comm-overlap``: its GEMMs
    apart, whole and split ``tp`` ways (:func:`mlsys.core.formulas.layer_time.linear_gemm_times`),
    paired with their collectives (:func:`mlsys.core.formulas.overlap.userbuffers_exposed_time`)."""
    if o is ScalarOps:
        parts = _gemm_parts(P, float(T), float(tp))
    else:  # each distinct (tokens, tp) of a search priced once, as a solve prices it
        t_u, tp_u, _, inverse, shape = _distinct(T, tp, 0.0)
        rows = np.asarray(
            [_gemm_parts(P, float(a), float(b)) for a, b in zip(t_u, tp_u, strict=True)]
        )[inverse].reshape((*shape, 5, 4))
        parts = tuple(tuple(rows[..., k, i] for i in range(4)) for k in range(5))
    return userbuffers_exposed_time(*parts, collective, o.max(tp, 1.0), full)


def _gemm_parts(P: Problem, T: float, tp: float) -> tuple[tuple[float, ...], ...]:
    """A layer's GEMMs on one device, one pass at a time: forward whole and split into
    ``tp`` chunks of ``T/tp`` tokens, data gradient whole and split, weight gradient
    (remembered per problem)."""
    key = ("gemm parts", T, tp)
    hit = P.priced.get(key)
    if hit is not None:
        return hit
    t = max(tp, 1.0)
    shape = (P.h, P.a, P.kv, P.d_attn / P.a, P.ffn_act, P.gated, tp)
    rates = (P.peak * P.eta_c, P.hbm_bw * P.eta_m, P.e_act)

    def parts(tokens: float, gemm: str, split: float = 1.0) -> tuple[float, ...]:
        times = linear_gemm_times(tokens, *shape, *rates, sm_count=P.sm_count, gemm=gemm)
        return tuple(split * float(x) for x in times)

    out = (
        parts(T, "forward"), parts(T / t, "forward", t), parts(T, "data"),
        parts(T / t, "data", t), parts(T, "weight"),
    )  # fmt: skip
    if len(P.priced) > 4096:
        P.priced.clear()
    P.priced[key] = out
    return out


def _tp_collective_in_node(M: Any, tp: Any, sp: Any, P: Problem, o: type) -> Any:
    """One tensor-parallel all-reduce-equivalent inside a node, as NCCL runs it: an
    all-reduce (NVLS where the switch reduces), or under sequence parallelism a
    reduce-scatter plus an all-gather."""
    bw, link, nvls = P.scaleup_link_Bps, P.scaleup_link, P.in_network_reduction
    ll = P.scaleup_ll_step_s
    if o is ScalarOps:
        return _tp_collective_scalar(float(M), float(tp), bool(sp), bw, link, nvls, ll)
    m_u, tp_u, sp_u, inverse, shape = _distinct(M, tp, sp)
    times = [
        _tp_collective_scalar(float(m), float(t), bool(q), bw, link, nvls, ll)
        for m, t, q in zip(m_u, tp_u, sp_u, strict=True)
    ]
    return np.asarray(times)[inverse].reshape(shape)


@lru_cache(maxsize=4096)
def _tp_collective_scalar(
    M: float,
    tp: float,
    sp: bool,
    bw: float,
    link: str,
    in_network_reduction: bool,
    ll_step_s: float | None = None,
) -> float:
    """:func:`_tp_collective_in_node` for one layout (pure, so remembered); a chosen LL
    protocol's steps take the measured latency where the links have one, as in serving."""
    if sp:
        return coll.nccl_ring_time(
            "reduce_scatter", M, tp, bw, link, ll_step_latency_s=ll_step_s
        ) + coll.nccl_ring_time("all_gather", M, tp, bw, link, ll_step_latency_s=ll_step_s)
    return coll.nccl_allreduce_time(
        M, tp, bw, link, in_network_reduction, ll_step_latency_s=ll_step_s
    )


def evaluate(
    P: Problem,
    tp: Any,
    pp: Any,
    ep: Any,
    dp: Any,
    m: Any,
    v: Any,
    zero: Any,
    rc: Any,
    sp: Any,
    schedule: Any = 0,
    topo: int = 0,
    overlap: bool = True,
    cp: Any = 1.0,
    tp_overlap: bool = False,
    cp_all_gather: bool = False,
    grad_accum_fusion: bool = True,
    recompute_fraction: float = 1.0,
    deepspeed_p2p: bool = False,
    rerun_residuals: bool = False,
    flat_params: bool = False,
    dropout: bool = True,
    per_parameter: bool = False,
    cuda_graph_scope: tuple[str, ...] = (),
) -> dict[str, Any]:
    """Price a layout (floats) or many layouts (arrays of a common shape).

    Parameters
    ----------
    P : Problem
        The model, fleet and precision.
    tp, pp, ep, dp, m, v, cp : float or ndarray
        Tensor, pipeline, expert, data and context-parallel sizes, micro-batches per
        step, model chunks per device.
    zero : float or ndarray
        ZeRO stage 0–3.
    rc : float or ndarray
        :class:`~mlsys.core.layout.Recompute` code (0 none, 1 selective, 2 full, 3 dots).
    sp : float or ndarray
        1.0 with sequence parallelism, else 0.0.
    schedule : int or ndarray
        :class:`~mlsys.core.layout.Schedule` code: 0 for 1F1B / interleaved, 1 GPipe.
    topo : int
        :class:`~mlsys.core.layout.Topology` of the data-parallel all-reduce.
    overlap : bool
        Overlap data-parallel communication with compute.
    tp_overlap : bool
        Overlap the tensor-parallel collectives with the GEMMs that depend on them, in
        ``tp`` chunks (Megatron's ``--tp-comm-overlap``; only with sequence parallelism,
        as there).
    cp_all_gather : bool
        Context parallelism all-gathers K and V before attention and reduce-scatters
        their gradients, exposed (``cp_comm_type="all_gather"``; Llama 3), instead of
        passing them round a ring under the attention compute.
    grad_accum_fusion : bool
        The weight-gradient GEMMs accumulate into the gradient buffer themselves
        (Megatron-LM's gradient-accumulation fusion, the default since 2022). False:
        every micro-batch adds its weight gradients into the buffer with a separate
        memory-bound kernel
        (:func:`mlsys.core.formulas.layer_time.gradient_accumulation_bytes`), as
        Megatron-LM 2021, DeepSpeed and PyTorch DDP do.
    recompute_fraction : float or ndarray
        Under full recomputation, the share of each model chunk's layers recomputed
        (Megatron's ``--recompute-method block --recompute-num-layers``): their forward
        runs again, the others keep their activations (:func:`memory_terms`).
    deepspeed_p2p : bool
        Pipeline transfers as DeepSpeed's pipeline engine makes them: every
        tensor-parallel rank sends the whole ``T·h`` activation (and its gradient), and a
        stage's four transfers per micro-batch (receive the activation, send it on,
        receive the gradient, send it back) run one after another on its stream — its
        ``TrainSchedule`` issues ``SendGrad``/``RecvActivation`` and
        ``SendActivation``/``RecvGrad`` as separate blocking commands
        (``deepspeed/runtime/pipe/schedule.py``, ``engine.py``). False (Megatron-LM):
        each rank ships ``1/tp`` of the tensor and the receivers all-gather it
        (scatter/gather, Narayanan et al. 2021, Sec. 4.1), and a send is paired with
        the opposite receive (``send_forward_recv_backward``), two transfer times per
        micro-batch and model chunk.
    rerun_residuals : bool
        Full recomputation reruns only the residuals the backward pass consumes (JAX's
        ``jax.checkpoint``): the attention and MLP output projections are not rerun
        (``P.residual_rerun_share`` of the layer's matmuls are), nor the collectives
        that carry only their outputs (the reduce-scatters after them under sequence
        parallelism; the all-reduces after them without it; the expert combine
        all-to-all). False (Megatron-LM, PyTorch): the whole forward reruns.

    flat_params : bool
        PyTorch (or fairscale) FSDP's flat parameters: every micro-batch's gradients are
        gathered from the parameters' views into the flat gradient and divided in place
        before the reduce-scatter, ``4·e`` bytes per locally held parameter at HBM speed
        (:func:`mlsys.core.formulas.layer_time.fsdp_flat_gradient_bytes`); under ZeRO-2/3
        the first all-gathers and last reduce-scatters of a micro-batch (the root unit and
        block 0, :func:`mlsys.core.formulas.overlap.fsdp_edge_fraction`) run alone.
    dropout : bool
        The attention and hidden dropouts run: one-byte masks at the block boundaries
        (``2·h`` bytes per token) and, with materialised scores, a read, a write and a
        one-byte mask per score (``2e + 1`` of the ``6e + 1`` bytes); False (p = 0):
        neither.
    per_parameter : bool
        PyTorch FSDP2's per-parameter sharding: each micro-batch copies the all-gathered
        parameters out of the all-gather buffer (twice under ZeRO-3, once under ZeRO-2)
        and the gradients into the reduce-scatter buffer in the gradient dtype
        (:func:`mlsys.core.formulas.layer_time.fsdp_per_parameter_copy_bytes`), and its
        edges run alone as with ``flat_params``.
    cuda_graph_scope : tuple of str
        Parts of each layer replayed from CUDA graphs
        (:data:`mlsys.core.layout.CUDA_GRAPH_SCOPES`): their host work is gone from the
        MoE layers' host time (:func:`mlsys.core.formulas.moe.moe_layer_host_time`).

    Returns
    -------
    dict of str to float or ndarray
        Times in s, bytes, FLOP and fractions; see the keys. The keys that start with
        :data:`TERM_PREFIX` are the step's named terms (:data:`STEP_TERMS`), in s: their
        sum is ``"step_time"``.
    """
    L = _Lay.of(P, tp, pp, ep, dp, m, v, zero, rc, sp, schedule, topo, overlap, cp, tp_overlap,
                cp_all_gather, grad_accum_fusion, recompute_fraction, deepspeed_p2p,
                rerun_residuals, flat_params, dropout, per_parameter, cuda_graph_scope)  # fmt: skip
    mem = L.mem
    o, m = L.o, L.m
    # ---- one transformer layer, one micro-batch, the busiest device (seconds) -----------
    t_gemm = _gemm_time(P, L)
    t_attn, attn_passes = _attention_time(P, L)
    t_elem = _elementwise_time(P, L)
    t_cast = _fp8_cast_time(P, L)
    t_kern = _kernel_time(P, L)
    t_merge = _cp_merge_time(P, L)
    t_layer = t_gemm + t_attn + t_elem + t_cast + t_kern + t_merge
    t_tp_layer, tp_n = _tp_layer_time(P, L)
    cp_n, t_cp_layer, t_cp_total_layer = _cp_layer_time(P, L, t_attn, attn_passes)
    # the K/V ring hidden under attention slows it (Lee et al. 2025)
    t_cp_slow = overlap_slowdown_time(t_cp_total_layer - t_cp_layer, OVERLAPPED_COMPUTE_SLOWDOWN)
    t_ep_layer = _ep_layer_time(P, L)
    t_host_layer = _moe_host_layer_time(P, L, t_layer)
    # ---- one micro-batch ----------------------------------------------------------------
    layers = L.layers_dev
    t_head = _lm_head_time(P, L)
    t_accum = _grad_accumulation_time(P, L)
    t_fsdp = _fsdp_copy_time(P, L)
    t_mb_compute = layers * t_layer + t_head + t_accum + t_fsdp
    t_mb_tp = layers * t_tp_layer
    t_mb_ep = layers * t_ep_layer
    t_mb_cp = layers * t_cp_layer
    t_mb_pp, pp_bw, pp_lat = _pipeline_send_time(P, L)
    t_mb_host = layers * t_host_layer
    t_mb = t_mb_compute + t_mb_tp + t_mb_ep + t_mb_cp + t_mb_pp + t_mb_host
    t_bubble = interleaved_bubble_ratio(L.pp, m, L.v) * m * t_mb
    # ---- the step's collectives over the data-parallel group, and the optimizer ----------
    dp_times = _dp_collective_times(P, L)
    t_dp_exposed, t_slow, t_dp_total = _dp_exposed_time(
        P, L, dp_times, t_mb_compute, t_mb_tp + t_mb_ep
    )
    t_emb = _tied_embedding_time(P, L, pp_bw, pp_lat)
    t_opt = _optimizer_time(P, L)
    # ---- the step: one sum of named terms (STEP_TERMS), the same that explain() shows ----
    n = m * layers  # layer passes of one device per step
    terms = {
        "term.gemm": n * t_gemm, "term.attention": n * t_attn, "term.elementwise": n * t_elem,
        "term.fp8_casts": n * t_cast, "term.kernel_overhead": n * t_kern,
        "term.cp_merge": n * t_merge,
        "term.lm_head": m * t_head, "term.grad_accumulation": m * t_accum,
        "term.fsdp_copies": m * t_fsdp, "term.optimizer": t_opt, "term.tp": n * t_tp_layer,
        "term.cp": n * t_cp_layer, "term.ep": n * t_ep_layer, "term.pp": m * t_mb_pp,
        "term.dp": t_dp_exposed, "term.tied_embedding": t_emb, "term.overlap_slowdown": t_slow,
        "term.moe_host": n * t_host_layer, "term.bubble": t_bubble,
        "term.cp_overlap_slowdown": n * t_cp_slow,
    }  # fmt: skip
    sums = sum_terms(terms)
    step = sums["step"]
    t_dp_all = t_dp_total + t_emb
    overlap_fraction = o.where(
        t_dp_all > 0.0, 1.0 - (t_dp_exposed + t_emb) / o.max(t_dp_all, 1e-300), 0.0
    )
    model_flops, hw_flops = _step_flops(P, L)
    peak_total = P.total * P.peak
    tokens = P.batch * P.s
    return {
        **mem,
        "step_time": step,
        "compute_time": sums["compute"],
        "optimizer_time": t_opt,
        "tp_communication_time": terms["term.tp"],
        "ep_communication_time": terms["term.ep"],
        "moe_host_time": terms["term.moe_host"],
        "cp_communication_time": terms["term.cp"],
        "cp_communication_total": n * t_cp_total_layer,
        "pp_communication_time": terms["term.pp"],
        "pipeline_bubble_time": t_bubble,
        "bubble_fraction": t_bubble / step,
        "dp_communication_time": sums["data_parallel"],
        "dp_communication_total": t_dp_all,
        "overlap_fraction": overlap_fraction,
        "model_flops": model_flops,
        "hardware_flops": hw_flops,
        "mfu": model_flops / (step * peak_total),
        "hfu": hw_flops / (step * peak_total),
        "tokens_per_second": tokens / step,
        "fits": mem["memory"] <= P.capacity,
        "tp_nodes": tp_n,
        "cp_nodes": cp_n,
        "dp_nodes": dp_times[4],
        **terms,
    }


# -- the step as a sum of named terms ------------------------------------------------------
TERM_PREFIX = "term."
"""Prefix of :func:`evaluate`'s keys that hold the step's terms (``"term.gemm"`` ...)."""

STEP_TERMS: tuple[tuple[str, tuple[Any, ...]], ...] = (
    ("compute", (
        ("layers", (
            "gemm", "attention", "elementwise", "fp8_casts", "kernel_overhead", "cp_merge",
        )),
        "lm_head", "grad_accumulation", "fsdp_copies", "optimizer",
    )),
    ("communication", (
        "tp", "cp", "cp_overlap_slowdown", "ep", "pp",
        ("data_parallel", ("dp", "tied_embedding", "overlap_slowdown")),
    )),
    "moe_host",
    "bubble",
)  # fmt: skip
"""The step time's terms, grouped: every leaf a key of :func:`evaluate`'s ``terms``, every
group the left-to-right sum of its members, the step the sum of the groups. One spec for
the total (:func:`sum_terms`) and its display (``DistributedResult.explain``)."""


def _plan(spec: tuple[Any, ...], name: str = "step") -> list[tuple[str, tuple[str, ...]]]:
    """The spec flattened, inner groups first: ``(group, member keys)`` in the order the
    sums are taken (leaves under their :data:`TERM_PREFIX` keys), so :func:`sum_terms`
    runs without recursion."""
    plan: list[tuple[str, tuple[str, ...]]] = []
    members = []
    for member in spec:
        if isinstance(member, str):
            members.append(TERM_PREFIX + member)
        else:
            plan.extend(_plan(member[1], member[0]))
            members.append(member[0])
    plan.append((name, tuple(members)))
    return plan


_STEP_PLAN = _plan(STEP_TERMS)


def sum_terms(terms: dict[str, Any]) -> dict[str, Any]:
    """Every group of :data:`STEP_TERMS` summed left to right, and ``"step"``, their sum.

    Parameters
    ----------
    terms : dict of str to float or ndarray
        The leaves under their :data:`TERM_PREFIX` keys (``"term.gemm"`` ...), in s
        (:func:`evaluate`'s output holds them).

    Returns
    -------
    dict of str to float or ndarray
        The leaves, each group's name (``"compute"`` ...) to its sum, in s, and
        ``"step"``.
    """
    sums = dict(terms)
    for name, members in _STEP_PLAN:
        total = 0.0
        for member in members:
            total = total + sums[member]
        sums[name] = total
    return sums


class _Lay:
    """One layout (floats) or many (arrays), with what every cost term reads of it: the
    sizes and codes, the options of :func:`evaluate`, and the memory terms (micro-batch
    size, layers on the busiest device)."""

    __slots__ = (
        "T", "b", "cp", "cp_all_gather", "cuda_graph_scope", "deepspeed_p2p", "dots", "dp",
        "dropout", "ep", "flat_params", "fp8", "full", "fwd_passes", "grad_accum_fusion",
        "layers_dev", "local_experts", "m", "mem", "o", "overlap", "per_parameter", "pp", "rc",
        "rerun_residuals", "scalar", "schedule", "sel", "sp", "topo", "tp", "tp_overlap", "v",
        "zero",
    )  # fmt: skip

    @classmethod
    def of(cls, P: Problem, tp: Any, pp: Any, ep: Any, dp: Any, m: Any, v: Any, zero: Any,
           rc: Any, sp: Any, schedule: Any, topo: int, overlap: bool, cp: Any,
           tp_overlap: bool, cp_all_gather: bool, grad_accum_fusion: bool,
           recompute_fraction: Any, deepspeed_p2p: bool, rerun_residuals: bool,
           flat_params: bool, dropout: bool, per_parameter: bool,
           cuda_graph_scope: tuple[str, ...]) -> _Lay:  # fmt: skip
        L = cls()
        o = L.o = _ops(tp, pp, ep, dp, m, v, zero, rc, sp, schedule, cp)
        L.tp, L.pp, L.ep, L.dp, L.m, L.v, L.zero, L.rc, L.sp = tp, pp, ep, dp, m, v, zero, rc, sp
        L.schedule, L.topo, L.overlap, L.cp, L.tp_overlap = schedule, topo, overlap, cp, tp_overlap
        L.cp_all_gather, L.grad_accum_fusion = cp_all_gather, grad_accum_fusion
        L.deepspeed_p2p = deepspeed_p2p
        L.rerun_residuals, L.flat_params, L.dropout = rerun_residuals, flat_params, dropout
        L.per_parameter, L.cuda_graph_scope = per_parameter, cuda_graph_scope
        L.scalar = o is ScalarOps
        if L.scalar:  # read only here: the memo's own dict, no copy
            mem = _memory_terms_of_one(P, tp, pp, ep, dp, m, v, zero, rc, sp, schedule, cp,
                                       recompute_fraction, dropout)  # fmt: skip
        else:
            mem = _memory_terms(P, tp, pp, ep, dp, m, v, zero, rc, sp, schedule, cp, o,
                                recompute_fraction, dropout)  # fmt: skip
        L.mem, L.layers_dev, L.b = mem, mem["layers_per_device"], mem["microbatch_size"]
        full = rc == _FULL
        if _partial(recompute_fraction):  # block recompute: that share of the layers reruns
            full = full * recompute_fraction
        L.full, L.sel = full, rc == _SELECTIVE
        # "dots": the weight matmuls' outputs are kept; attention and the element-wise work
        # of the forward are rerun in the backward pass, the matmuls not
        L.dots = rc == _DOTS
        L.T = P.s * L.b / cp  # tokens of a micro-batch on a device: cp splits each sequence
        L.fwd_passes = 3.0 + full + L.dots  # forward + backward (2x) + rerun of the forward
        L.local_experts = P.experts / ep if P.moe_layers > 0.0 else 1.0  # experts a rank holds
        L.fp8 = P.fp8_cast_bytes_per_element > 0.0  # FP8 GEMMs on 16-bit activations
        return L


# -- compute of one layer, one micro-batch -------------------------------------------------
def _gemm_time(P: Problem, L: _Lay) -> Any:
    """The layer's weight GEMMs: ``2·N_layer·T/t`` FLOP a pass, three passes (forward,
    backward twice) plus the rerun, at ``peak × η_compute`` slowed by their shapes (tile
    and wave quantisation, a skinny GEMM's memory roofline:
    :func:`mlsys.core.formulas.layer_time.linear_layers_time`, via
    :func:`_linear_shape_ratio`). JAX reruns only the matmuls whose outputs the backward
    consumes (:func:`mlsys.core.formulas.transformer.residual_rerun_share`)."""
    full = L.full
    rerun = full * P.residual_rerun_share if L.rerun_residuals else full
    flops = 2.0 * P.n_layer * L.T / L.tp * (3.0 + rerun)
    return flops / (P.peak * P.eta_c) * _linear_shape_ratio(P, L.T, L.tp, full, L.o)


def _attention_time(P: Problem, L: _Lay) -> tuple[Any, Any]:
    """The attention core (``QKᵀ``, softmax, dropout, ``AV``) and its forward-equivalent
    passes: the fused kernel at its measured fractions of peak
    (:func:`mlsys.core.formulas.gemm.attention_time`), or, with the scores materialised,
    a roofline of ``4·s·d_attn·T/t`` FLOP and ``(6e + 1)`` bytes per score a pass
    (Korthikanti et al. 2022, Sec. 4;
    :func:`mlsys.core.formulas.layer_time.materialized_attention_time`)."""
    o, T, tp, full, dots = L.o, L.T, L.tp, L.full, L.dots
    if P.flash:  # FlashAttention-2: scores recomputed backward (3.5 passes), none in HBM
        t = _fused_attention_time(P, L.b, L.cp, tp, full + dots, o, L.dropout)
        return t, 3.5 + full + dots
    passes = 3.0 + full + L.sel + dots
    t = materialized_attention_time(
        T, P.s, P.a, P.d_attn, tp, passes, P.e_act, L.dropout,
        P.peak_attn * P.eta_c, P.hbm_bw * P.eta_m,
    )  # fmt: skip
    return t, passes


def _elementwise_time(P: Problem, L: _Lay) -> Any:
    """Element-wise kernels (norms, bias-dropout-residual, activation, rotary; an eager
    stack's operator lists: :mod:`mlsys.core.formulas.eager`) and a MoE layer's token
    copies (:func:`mlsys.core.formulas.moe.moe_token_shuffle_bytes`), at ``HBM ×
    η_memory`` (Korthikanti et al. 2022, Sec. 4)."""
    o, T, tp, full, dots, sp = L.o, L.T, L.tp, L.full, L.dots, L.sp
    h, e = P.h, P.e_act
    d_head = P.d_attn / P.a
    mask = 2.0 * h * T * o.where(sp, 1.0 / tp, 1.0) if L.dropout else 0.0  # one-byte masks
    if P.eager_elementwise:  # each operator its own kernel: the eager operator lists
        shape = (T, h, P.a, P.kv, d_head, P.ffn_act, P.gated, tp, e, P.rotary, sp)
        norms = P.eager_fused_norms
        elem_bytes = eager_elementwise_bytes(*shape, fused_norms=norms) * (1.0 + full + dots) + (
            eager_elementwise_bytes(*shape, backward=True, fused_norms=norms)
        )
        elem_bytes = elem_bytes + mask * L.fwd_passes
    else:
        boundary = 10.0 * e * h * T * o.where(sp, 1.0 / tp, 1.0) + mask
        # the activation over every MLP a token passes through (k experts in MoE layers)
        mlp_elem = (2.0 + P.gated) * e * P.ffn_act * T / tp
        elem_bytes = (boundary + mlp_elem) * L.fwd_passes
        if P.rotary:  # rotate Q and K forward (again under full recompute), gradients back
            rope = rotary_embedding_bytes(T, P.a, P.kv, d_head, tp, e)
            elem_bytes = elem_bytes + rope * (2.0 + full + dots)
    if P.moe_layers > 0.0:
        # the token copies around the experts (permute, the chunk sort of a rank holding
        # several experts, unpermute): forward, again under full recompute, and backward
        sort = (L.ep > 1.0) & (P.experts > L.ep)
        shuffle = moe_token_shuffle_bytes(T / tp, h, P.topk, e, sort_chunks=sort)
        elem_bytes = elem_bytes + P.moe_layers / P.L * (2.0 + full + dots) * shuffle
    return elem_bytes / (P.hbm_bw * P.eta_m)


def _fp8_cast_time(P: Problem, L: _Lay) -> Any:
    """FP8 GEMMs on 16-bit activations: every operand cast first, forward (again under
    full recompute) and backward (:func:`mlsys.core.formulas.layer_time.fp8_cast_bytes`),
    at ``HBM × η_memory``; 0 otherwise."""
    if not L.fp8:
        return 0.0 * L.tp
    shape = (P.h, P.a, P.kv, P.d_attn / P.a, P.ffn_act, P.gated, L.tp, L.sp)
    per = P.fp8_cast_bytes_per_element
    cast = (1.0 + L.full) * fp8_cast_bytes(L.T, *shape, bytes_per_element=per) + fp8_cast_bytes(
        L.T, *shape, backward=True, bytes_per_element=per
    )
    return cast / (P.hbm_bw * P.eta_m)


def _kernel_time(P: Problem, L: _Lay) -> Any:
    """A fixed time per kernel launched (:data:`mlsys.core.formulas.overheads.KERNEL_OVERHEAD_S`)
    over the layer's kernels, forward (again under full recompute, the non-matmul ones
    again under ``"dots"``) and backward
    (:func:`mlsys.core.formulas.overheads.kernels_per_layer`; an eager stack's operator
    lists, :func:`mlsys.core.formulas.eager.eager_elementwise_kernels`; a MoE layer's
    operations, :func:`mlsys.core.formulas.moe.moe_layer_host_ops`)."""
    full, dots = L.full, L.dots
    fwd_kernels, bwd_kernels = _KERNELS[bool(P.flash)]
    rerun_kernels = fwd_kernels * full + dots * (fwd_kernels - _LINEAR_GEMMS_PER_LAYER)
    kernels = fwd_kernels + rerun_kernels + bwd_kernels
    if P.eager_elementwise:  # the eager operator lists in place of the fused kernels
        eager_fwd, eager_bwd = eager_elementwise_kernels(
            bool(P.gated), P.rotary, P.kv < P.a, P.eager_fused_norms
        )
        kernels = (
            kernels
            + (eager_fwd - _FUSED_ELEMENTWISE_KERNELS[0]) * (1.0 + full + dots)
            + (eager_bwd - _FUSED_ELEMENTWISE_KERNELS[1])
        )
    if P.moe_layers > 0.0:
        # a MoE layer launches its own operations (router, permute, all-to-alls, a GEMM
        # and a quantisation per local expert ...): their count replaces the dense layer's
        moe_frac = P.moe_layers / P.L
        moe_kernels = moe_layer_host_ops(L.local_experts, "forward", fp8=L.fp8) * (
            1.0 + full
        ) + moe_layer_host_ops(L.local_experts, "backward", fp8=L.fp8)
        kernels = (1.0 - moe_frac) * kernels + moe_frac * moe_kernels
    return kernels * P.kernel_overhead_s


# -- communication of one layer, one micro-batch -------------------------------------------
def _tp_layer_time(P: Problem, L: _Lay) -> tuple[Any, Any]:
    """Tensor-parallel collectives of a layer (rank order tp -> cp -> ep -> dp -> pp) and
    the nodes the group spans: ``T·h·e`` bytes each, two all-reduce equivalents forward
    and backward (:func:`mlsys.core.formulas.parallel.tp_reductions_per_layer`), inside a
    node as NCCL runs them (:func:`mlsys.core.formulas.collectives.nccl_allreduce_time`),
    across nodes on the scale-out NIC; with ``tp_overlap`` what Transformer Engine's
    userbuffers leave exposed (:func:`mlsys.core.formulas.overlap.userbuffers_exposed_time`)."""
    o, tp, sp = L.o, L.tp, L.sp
    M = L.T * P.h * P.e_act
    tp_k, tp_n = group_placement(tp, 1.0, P.accelerators_per_node)
    if L.scalar and tp == 1.0:  # one solve without tensor parallelism
        return 0.0, tp_n
    n_ar = tp_reductions_per_layer(L.full, sp, L.rerun_residuals, P.parallel_block)
    if L.scalar and P.scaleup_link and tp_n <= 1.0:  # one solve, inside a node
        t_one = _tp_collective_in_node(M, tp, sp, P, o)
    else:
        t_one = _allreduce(M, tp_k, tp_n, 0, P, o)
        if P.scaleup_link:  # inside a node: NCCL's protocols, NVLS where the switch has it
            t_one = o.where(tp_n > 1.0, t_one, _tp_collective_in_node(M, tp, sp, P, o))
    t_layer = n_ar * o.where(tp > 1.0, t_one, 0.0)
    if L.tp_overlap:  # each collective with the GEMM that produces or consumes it
        # under sequence parallelism one all-reduce-equivalent is a reduce-scatter plus
        # an all-gather of the same size, each paired with one GEMM
        one = 0.5 * o.where(tp > 1.0, t_one, 0.0)
        hidden = _userbuffers_exposed(P, L.T, tp, L.full, one, o)
        t_layer = o.where(sp, hidden, t_layer)
    return t_layer, tp_n


def _cp_layer_time(P: Problem, L: _Lay, t_attn: Any, attn_passes: Any) -> tuple[Any, Any, Any]:
    """Context parallelism's K/V exchange of a layer: nodes the ring spans, the time
    exposed and the whole. A ring passes K, V round ``cp − 1`` steps, each beside one
    block's attention, only the excess exposed (Liu, Zaharia & Abbeel 2023, Sec. 3;
    :func:`mlsys.core.formulas.overlap.ring_attention_exchange_time`);
    ``cp_all_gather`` all-gathers K, V and reduce-scatters their gradients, exposed
    (Dubey et al. 2024, Sec. 3.3.2)."""
    o, cp, tp, full = L.o, L.cp, L.tp, L.full
    if (cp == 1.0) if type(cp) is float else not (cp > 1.0).any():  # no ring: no exchange
        return 1.0, 0.0, 0.0
    cp_k, cp_n = group_placement(cp, tp, P.accelerators_per_node)
    kv_block = 2.0 * L.T * P.kv_dim * P.e_act / o.min(tp, P.kv)  # K and V of s·b/cp tokens
    if L.cp_all_gather:  # ranks placed as the ring's: k per node on n nodes
        gathered = cp * kv_block
        ag_kv = _two_level(coll.allgather_time, gathered, cp_k, cp_n, P)
        rs_dkv = _two_level(coll.reduce_scatter_time, gathered, cp_k, cp_n, P)
        total = exposed = (1.0 + full) * ag_kv + rs_dkv
    else:
        bw = o.where(cp_n > 1.0, P.inter_bw, P.intra_bw)
        lat = o.where(cp_n > 1.0, P.inter_lat, P.intra_lat)
        exposed, total = ring_attention_exchange_time(
            kv_block, cp, t_attn, attn_passes, full, bw, lat
        )
    ring = cp > 1.0
    return cp_n, o.where(ring, exposed, 0.0), o.where(ring, total, 0.0)


def _cp_merge_time(P: Problem, L: _Lay) -> Any:
    """Context parallelism's merges of a layer: the ring's per-step partial outputs and
    gradients rescaled and added at ``HBM × η_memory``
    (:func:`mlsys.core.formulas.layer_time.ring_attention_merge_bytes`); none without a
    ring or when K and V are all-gathered (one kernel over the whole sequence)."""
    o, cp, tp = L.o, L.cp, L.tp
    if L.cp_all_gather or ((cp == 1.0) if type(cp) is float else not (cp > 1.0).any()):
        return 0.0
    q = L.T * P.d_attn / tp
    kv = 2.0 * L.T * P.kv_dim / o.min(tp, P.kv)
    merged = ring_attention_merge_bytes(q, kv, cp, P.e_act, L.full)
    return merged / (P.hbm_bw * P.eta_m)


def _ep_layer_time(P: Problem, L: _Lay) -> Any:
    """Expert parallelism's all-to-alls of a layer, averaged over dense and MoE layers:
    4 of ``T·k·h·e/t`` bytes (6 under full recompute; a residual-only rerun skips the
    combine), whose off-node share crosses the network
    (:func:`mlsys.core.formulas.collectives.multinode_alltoall_time`)."""
    o, ep, tp = L.o, L.ep, L.tp
    if L.scalar and ep == 1.0:  # one solve without expert parallelism
        return 0.0
    M = L.T * P.topk * P.h * P.e_act / tp
    ep_k, ep_n = group_placement(ep, tp * L.cp, P.accelerators_per_node)
    a2a = coll.multinode_alltoall_time(
        M, ep_k, ep_n, P.intra_bw, P.intra_lat, P.inter_bw, P.inter_lat
    )
    rerun = 1.0 if L.rerun_residuals else 2.0
    return P.moe_layers / P.L * (4.0 + rerun * L.full) * o.where(ep > 1.0, a2a, 0.0)


def _moe_host_layer_time(P: Problem, L: _Lay, t_layer: Any) -> Any:
    """MoE layers' host work on the critical path, averaged over the layers: the dropless
    dispatcher waits on the device for the token counts every forward pass, so the host
    cannot run ahead (:func:`mlsys.core.formulas.moe.moe_layer_host_time`)."""
    if P.moe_layers <= 0.0 or "full_iteration" in L.cuda_graph_scope:
        return 0.0
    host = moe_layer_host_time(
        L.local_experts, t_layer * 2.0 / L.fwd_passes,
        host_time_per_op_s=P.host_time_per_op_s, forward_passes=1.0 + L.full,
        graphed=L.cuda_graph_scope, fp8=L.fp8,
    )  # fmt: skip
    return P.moe_layers / P.L * host


# -- the rest of a micro-batch -------------------------------------------------------------
def _lm_head_time(P: Problem, L: _Lay) -> Any:
    """The output layer: ``2·V·h·T/t`` FLOP a pass, three passes, at its own rate (16-bit
    under FP8), and the fp32 logits written, softmaxed and differentiated (``4·3·4·V·T/t``
    bytes) at ``HBM × η_memory`` (:func:`mlsys.core.formulas.layer_time.output_layer_time`)."""
    return output_layer_time(L.T, P.V, P.h, L.tp, P.head_flops_s, P.hbm_bw * P.eta_m)


def _local_params(P: Problem, L: _Lay) -> Any:
    """Parameters a device holds unsharded (its pipeline stage, tensor and expert slice)."""
    return P.params_dense / (L.tp * L.pp) + P.params_expert / (L.tp * L.pp * L.ep)


def _grad_accumulation_time(P: Problem, L: _Lay) -> Any:
    """Without gradient-accumulation fusion, each micro-batch's weight gradients added into
    the buffer by a separate kernel over the device's (ZeRO-2/3: sharded) parameters
    (:func:`mlsys.core.formulas.layer_time.gradient_accumulation_bytes`); else 0."""
    if L.grad_accum_fusion:
        return 0.0
    tp, pp, ep, dp, cp = L.tp, L.pp, L.ep, L.dp, L.cp
    shard = L.o.where(L.zero >= 2, P.params_dense / (tp * pp * dp * ep * cp), _local_params(P, L))
    return gradient_accumulation_bytes(shard, P.e_act, P.g_bytes) / (P.hbm_bw * P.eta_m)


def _fsdp_copy_time(P: Problem, L: _Lay) -> Any:
    """FSDP's buffer copies of a micro-batch over everything held unsharded: flat
    parameters' gradient gather and pre-divide
    (:func:`mlsys.core.formulas.layer_time.fsdp_flat_gradient_bytes`), FSDP2's copy-out of
    every all-gather and copy-in of the reduce-scatter
    (:func:`mlsys.core.formulas.layer_time.fsdp_per_parameter_copy_bytes`)."""
    t = 0.0
    bw = P.hbm_bw * P.eta_m
    if L.flat_params:
        t = t + fsdp_flat_gradient_bytes(_local_params(P, L), P.e_act) / bw
    if L.per_parameter:
        o, e = L.o, P.e_act
        gathers = o.where(L.zero >= 3.0, 2.0, 1.0)
        copies = fsdp_per_parameter_copy_bytes(_local_params(P, L), e, e, P.g_bytes, gathers)
        t = t + o.where(L.zero >= 2.0, copies, 0.0) / bw
    return t


def _pipeline_send_time(P: Problem, L: _Lay) -> tuple[Any, float, float]:
    """Point-to-point sends of a micro-batch between stages, and the link they ride:
    ``2·v`` transfers of ``T·h·e/t`` (Megatron's scatter/gather, Narayanan et al. 2021,
    Sec. 4.1) or DeepSpeed's ``4·v`` of the whole ``T·h·e``
    (:func:`mlsys.core.formulas.collectives.p2p_time`)."""
    # DeepSpeed sends the whole activation; Megatron each rank's 1/t slice
    M = pipeline_p2p_bytes(L.T, 1.0, P.h, P.e_act, L.tp, sequence_parallel=not L.deepspeed_p2p)
    transfers = 4.0 if L.deepspeed_p2p else 2.0
    cross = P.total > P.accelerators_per_node  # pp outermost: a stage boundary crosses nodes
    bw = P.inter_bw if cross else P.intra_bw
    lat = P.inter_lat if cross else P.intra_lat
    if L.scalar and L.pp == 1.0:  # one solve without a pipeline: no hops
        return 0.0, bw, lat
    t = L.o.where(L.pp > 1.0, transfers * L.v * coll.p2p_time(M, bw, lat), 0.0)
    return t, bw, lat


# -- data parallelism, once a step ---------------------------------------------------------
def _dp_collective_times(P: Problem, L: _Lay) -> tuple[Any, Any, Any, Any, Any]:
    """The step's gradient reduction and ZeRO parameter all-gathers over ``dp·cp`` (dense
    parameters over ``dp·ep·cp``), hierarchical when the group spans nodes
    (:mod:`mlsys.core.formulas.collectives`), each split into the buckets it is reduced
    in (:func:`_gradient_buckets`), each bucket a collective with NCCL's latencies
    (:func:`_dp_latencies`): ``(t_grad, t_param, rs_dense, ag_dense, nodes spanned)``.
    One solve prices only its own ZeRO stage's collectives."""
    o, tp, pp, ep, dp, cp, m, zero = L.o, L.tp, L.pp, L.ep, L.dp, L.cp, L.m, L.zero
    g = P.accelerators_per_node
    psi_dense = P.params_dense / (tp * pp)
    psi_exp = P.params_expert / (tp * pp * ep)
    dd_k, dd_n = group_placement(dp * ep * cp, tp, g)  # dense params: over dp·ep·cp
    z1, z2, z3 = zero >= 1, zero >= 2, zero >= 3
    rs, ag = coll.reduce_scatter_time, coll.allgather_time
    dp_one = (dp * ep * cp <= 1.0) * 1.0
    need_ar = not L.scalar or (not z1 and not dp_one)
    need_sharded = not L.scalar or (z1 and not dp_one)
    rs_dense = ag_dense = ar = rs_exp = ag_exp = 0.0
    nb = _gradient_buckets(P, L, psi_dense, dp * ep * cp)
    lat, base = _dp_latencies(P)
    if need_sharded:
        rs_dense = nb * (_two_level(rs, psi_dense * P.g_bytes / nb, dd_k, dd_n, P, lat) + base)
        ag_dense = nb * (_two_level(ag, psi_dense * P.w_bytes / nb, dd_k, dd_n, P, lat) + base)
    if need_ar:
        ar = nb * (_allreduce(psi_dense * P.g_bytes / nb, dd_k, dd_n, L.topo, P, o, lat) + base)
    if P.params_expert > 0.0 and (need_ar or need_sharded):
        de_k, de_n = group_placement(dp * cp, tp * ep, g)  # expert params: over dp·cp
        nbe = _gradient_buckets(P, L, psi_exp, dp * cp)
        if need_sharded:
            rs_exp = nbe * (_two_level(rs, psi_exp * P.g_bytes / nbe, de_k, de_n, P, lat) + base)
            ag_exp = nbe * (_two_level(ag, psi_exp * P.w_bytes / nbe, de_k, de_n, P, lat) + base)
        if need_ar:
            ar = ar + nbe * (
                _allreduce(psi_exp * P.g_bytes / nbe, de_k, de_n, L.topo, P, o, lat) + base
            )
    t_grad = o.where(z1, (rs_dense + rs_exp) * o.where(z2, m, 1.0), ar) * (1.0 - dp_one)
    t_param = o.where(z1, (ag_dense + ag_exp) * o.where(z3, 2.0 * m, 1.0), 0.0) * (1.0 - dp_one)
    return t_grad, t_param, rs_dense, ag_dense, dd_n


def _dp_latencies(P: Problem) -> tuple[tuple[float, float] | None, float]:
    """Per-step latencies (inside, across nodes) and the fixed latency of one
    data-parallel collective: on a GPU fleet NCCL's cost model for its bulk protocol
    (:data:`~mlsys.core.formulas.collectives.NCCL_RING_STEP_LATENCY_S` and
    :data:`~mlsys.core.formulas.collectives.NCCL_RING_BASE_LATENCY_S`, ``Simple``: a
    gradient bucket is megabytes); elsewhere the fabrics' own latencies, no fixed part."""
    if not P.scaleup_link:
        return None, 0.0
    step = coll.NCCL_RING_STEP_LATENCY_S
    lat = (step[P.scaleup_link]["Simple"], step["net"]["Simple"])
    return lat, coll.NCCL_RING_BASE_LATENCY_S["Simple"]


def _gradient_buckets(P: Problem, L: _Lay, params: Any, ranks: Any) -> Any:
    """Collectives one data-parallel reduction is split into: Megatron-Core's default
    buckets (:func:`mlsys.core.formulas.parallel.gradient_bucket_count`) where NCCL
    reduces with overlap on a GPU fleet; one otherwise (no overlap: Megatron reduces the
    whole buffer at once; PyTorch FSDP's per-block collectives and XLA's are not these)."""
    if not (P.scaleup_link and L.overlap) or L.flat_params or L.per_parameter:
        return 1.0
    return gradient_bucket_count(params, ranks)


def _dp_exposed_time(
    P: Problem, L: _Lay, dp_times: tuple[Any, ...], t_mb_compute: Any, t_mb_comm: Any
) -> tuple[Any, Any, Any]:
    """Data-parallel time left exposed by overlap, the slowdown of the kernels the hidden
    part runs beside, and the whole: ``(exposed, slowdown, total)``. The reduction hides
    behind the last micro-batch's backward (ZeRO-2: every one's; ZeRO-3: all compute),
    the parameter all-gather behind the next forward; FSDP's first and last collectives of
    a micro-batch run alone (:func:`mlsys.core.formulas.overlap.fsdp_edge_exposed_time`;
    without ZeRO-2/3, the last bucket's reduction and the first bucket's gather,
    :func:`mlsys.core.formulas.overlap.bucket_edge_time`;
    the windows: :func:`mlsys.core.formulas.overlap.data_parallel_overlap_windows`);
    what is hidden slows its neighbours by
    :data:`~mlsys.core.formulas.overlap.OVERLAPPED_COMPUTE_SLOWDOWN` (Lee et al. 2025)."""
    o, m, zero, scalar = L.o, L.m, L.zero, L.scalar
    t_grad, t_param, rs_dense, ag_dense, _ = dp_times
    total = t_grad + t_param
    if not L.overlap:
        return total, 0.0, total
    z2, z3 = zero >= 2, zero >= 3
    grad_window, param_window, compute_all = data_parallel_overlap_windows(
        t_mb_compute, t_mb_comm, L.fwd_passes, m, zero
    )
    edge_g = edge_p = 0.0
    if (L.flat_params or L.per_parameter) and (not scalar or z2):
        dp_one = (L.dp * L.ep * L.cp <= 1.0) * 1.0
        outer = P.n_head * (1.0 if P.tied_embeddings else 2.0)
        edge = fsdp_edge_fraction(P.params_dense, outer, P.L, L.pp) * (1.0 - dp_one)
        edge_g = o.where(z2, edge * rs_dense * m, 0.0)
        edge_p = o.where(z3, edge * ag_dense * m, o.where(z2, edge * ag_dense, 0.0))
    elif not (L.flat_params or L.per_parameter) and (not scalar or not z2):
        # Megatron's buckets: the last reduction and the first gather run alone
        nb = _gradient_buckets(P, L, P.params_dense / (L.tp * L.pp), L.dp * L.ep * L.cp)
        edge_g = o.where(z2, 0.0, bucket_edge_time(t_grad, nb))
        edge_p = o.where(z2, 0.0, bucket_edge_time(t_param, nb))
    if scalar and z3:  # ZeRO-3's two share the compute: never hide more than all of it
        exposed = fsdp_edge_exposed_time(total, edge_g + edge_p, compute_all)
    else:
        exposed = fsdp_edge_exposed_time(t_grad, edge_g, grad_window)
        exposed = exposed + fsdp_edge_exposed_time(t_param, edge_p, param_window)
        if not scalar:
            shared = fsdp_edge_exposed_time(total, edge_g + edge_p, compute_all)
            exposed = o.where(z3, shared, exposed)
    slow = overlap_slowdown_time(total - exposed, OVERLAPPED_COMPUTE_SLOWDOWN)
    return exposed, slow, total


def _tied_embedding_time(P: Problem, L: _Lay, bw: float, lat: float) -> Any:
    """Tied word embeddings under a pipeline: the first and last stage all-reduce the shared
    matrix's gradient (``V·h/t`` elements at the gradient dtype) after the backward pass,
    exposed (Megatron-LM ``train_step``, "backward-embedding-all-reduce"; Megatron-Core
    ``finalize_model_grads``; :func:`mlsys.core.formulas.collectives.ring_allreduce_time`)."""
    if not P.tied_embeddings or (L.scalar and L.pp <= 1.0):
        return 0.0
    t = coll.ring_allreduce_time(P.n_head / L.tp * P.g_bytes, 2.0, bw, lat)
    return L.o.where(L.pp > 1.0, t, 0.0)


def _optimizer_time(P: Problem, L: _Lay) -> Any:
    """The optimizer step over the locally owned (ZeRO-sharded: dense over ``dp·ep·cp``,
    experts over ``dp·cp``) parameters, :func:`mlsys.core.formulas.memory.optimizer_step_time`
    of :func:`~mlsys.core.formulas.memory.optimizer_step_bytes_per_param` bytes each at
    ``HBM × η_memory``."""
    o, z1 = L.o, L.zero >= 1
    return optimizer_step_time(
        P.params_dense / (L.tp * L.pp),
        P.params_expert / (L.tp * L.pp * L.ep),
        o.where(z1, L.dp * L.ep * L.cp, 1.0),
        o.where(z1, L.dp * L.cp, 1.0),
        P.opt_step_bytes,
        P.hbm_bw * P.eta_m,
    )


def _step_flops(P: Problem, L: _Lay) -> tuple[Any, Any]:
    """Model FLOPs of a step (Megatron's convention) and the hardware FLOPs executed
    (recomputation included; a fused attention kernel already reruns selectively)."""
    tokens = P.batch * P.s
    model_flops = tokens * P.model_flops_per_token
    sel_extra = 0.0 if P.flash else P.selective_flops_per_token
    rerun_flops = P.full_flops_per_token
    if L.rerun_residuals:  # the output projections' share of the layers' forward skipped
        rerun_flops = rerun_flops - (1.0 - P.residual_rerun_share) * 2.0 * P.n_layer * P.L
    # "dots" reruns the attention forward whatever the kernel (its output is not kept)
    rerun_attn = L.o.where(L.sel, sel_extra, 0.0) + L.dots * P.selective_flops_per_token
    return model_flops, model_flops + tokens * (L.full * rerun_flops + rerun_attn)
