"""The one step-time and memory model behind DistributedModel, ParallelismSearch, scaling_curve.

:func:`evaluate` takes a :class:`Problem` (model, fleet and precision reduced to SI
floats once) and a layout — ``tp, pp, ep, dp, m, v, zero, rc, sp`` as Python numbers
*or* numpy arrays of any common shape — and returns every term of the step time and of
the memory per device. It is written with arithmetic and the few helpers below that
dispatch on the argument type, so one call prices a single layout in microseconds
(plain floats) or 10^5 layouts at once (arrays), and the two can never disagree. The
collective costs are the public :mod:`mlsys.core.formulas.collectives` functions, which
take plain floats on a math-only fast path and arrays through numpy; this module only
places each group on the scale-up or scale-out fabric.

The physics, per device, per micro-batch of ``b`` sequences of ``s`` tokens
(``T = s·b``), per transformer layer, with ``t`` the tensor-parallel size:

* **matmuls** — ``2·N_layer·T/t`` FLOP forward, twice that backward, once more under
  full recomputation; at ``peak × η_compute``.
* **attention core** (``QKᵀ``, softmax, dropout, ``AV``) — a roofline of its own:
  ``4·s·d_attn·T/t`` FLOP forward, and, when the scores are materialised (no
  FlashAttention, as in 2021–22 Megatron-LM), ``(6e + 1)`` bytes of HBM traffic per
  score element forward (write ``QKᵀ``; read/write softmax; read/write dropout plus a
  one-byte mask; read for ``AV``) and twice that backward. With ``e = 2`` and the
  ``a·s/t`` scores per token this is why small heads (``d_head = 96``) run far below
  peak on an A100: the ``QKᵀ`` kernel's intensity is ``d_head`` FLOP/byte, under the
  ridge point. FlashAttention keeps the scores on chip (no traffic) and recomputes them
  in the backward pass (7 instead of 6 matmul-equivalents; Dao 2023).
* **element-wise kernels** (LayerNorms, bias-dropout-residual, GeLU/SwiGLU) — pure
  memory traffic: forward ``10·e·h + 2·h`` bytes per token at the block boundaries
  (split by ``t`` only with sequence parallelism) and ``2·e·f`` (``3·e·f`` gated) in
  the MLP (always split), twice that backward, at ``HBM × η_memory``. This is the
  same tensor inventory as Korthikanti et al. (2022), Sec. 4.
* **tensor parallelism** — 4 all-reduce-equivalents of ``s·b·h·e`` per layer (6 with
  full recompute) on NVLink if the group is inside a node, else on the scale-out NIC.
* **expert parallelism** — 4 all-to-alls of ``s·b·k·h·e/t`` per MoE layer (6 with full
  recompute).
* **pipeline** — ``2·v`` point-to-point sends of ``s·b·h·e/t`` per micro-batch, and the
  bubble ``(p − 1)/v`` micro-batch times (1F1B, interleaved; GPipe has the same bubble).
  The device with the most layers (``⌈L/(p·v)⌉·v``) and the LM head sets the pace.
* **data parallelism** — gradients reduced over the data-parallel group at the gradient
  dtype; ZeRO-1/2 reduce-scatter + all-gather, ZeRO-3 adds a parameter all-gather for
  forward and for backward per micro-batch. Hierarchical (intra-node then inter-node)
  when the group spans nodes with several members per node. With ``overlap`` the
  reduction hides behind the backward pass of the last micro-batch (ZeRO-2: of every
  micro-batch; ZeRO-3: behind all compute) and the parameter all-gather behind the next
  forward; what does not fit is exposed.
* **optimizer step** — Adam reads the gradient and 12 bytes of state and writes 12 bytes
  and the new weight: ``(24 + g + w)`` bytes per locally owned parameter at HBM speed.

The calibration lives in this module and nowhere else: the compute and memory
fractions come from :func:`mlsys.core.solvers.efficiency.resolve_efficiency`; the one
extra constant is :data:`NETWORK_EFFICIENCY` (achievable fraction of link bandwidth for
large NCCL collectives). No constant is fitted to a validation row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlsys.core.formulas import collectives as coll

__all__ = [
    "NETWORK_EFFICIENCY",
    "ADAM_STEP_STATE_BYTES",
    "RECOMPUTE_CODES",
    "TOPOLOGY_CODES",
    "SCHEDULE_CODES",
    "Problem",
    "evaluate",
]

NETWORK_EFFICIENCY: dict[str, float] = {"scale-up": 0.80, "scale-out": 0.90}
"""Achievable share of per-direction link bandwidth for large collectives.

nccl-tests on a DGX A100 report about 230–240 GB/s of bus bandwidth for large
all-reduces on 300 GB/s-per-direction NVLink 3 (≈ 0.8); a 200 Gb/s HDR or 400 Gb/s NDR
NIC delivers about 90 % of its line rate to NCCL across nodes. (NVIDIA nccl-tests
``doc/PERFORMANCE.md``; NVIDIA DGX A100 user guide.) Estimates, not fits."""

ADAM_STEP_STATE_BYTES = 24.0
"""Bytes of fp32 optimizer state Adam reads and writes per parameter per step
(master weight, first and second moment: 12 read + 12 written)."""

RECOMPUTE_CODES = {"none": 0, "selective": 1, "full": 2}
TOPOLOGY_CODES = {None: 0, "auto": 0, "ring": 1, "tree": 2, "hierarchical": 3}
SCHEDULE_CODES = {"1f1b": 0, "interleaved": 0, "gpipe": 1}


# -- helpers that work on floats and on numpy arrays ---------------------------------------
class _ScalarOps:
    """Branch-free-looking helpers for plain floats (the fast path of one solve)."""

    @staticmethod
    def where(cond: Any, x: Any, y: Any) -> Any:
        return x if cond else y

    max = staticmethod(max)
    min = staticmethod(min)

    @staticmethod
    def ceil(x: float) -> float:
        return float(math.ceil(x))

    @staticmethod
    def floor(x: float) -> float:
        return float(math.floor(x))


class _ArrayOps:
    """The same helpers on numpy arrays (one call prices many layouts)."""

    where = staticmethod(np.where)
    max = staticmethod(np.maximum)
    min = staticmethod(np.minimum)
    ceil = staticmethod(np.ceil)
    floor = staticmethod(np.floor)


def _ops(*xs: Any) -> type:
    for x in xs:  # a loop: faster than any() on this hot path
        if type(x) is np.ndarray:
            return _ArrayOps
    return _ScalarOps


# -- placement and collectives (alpha-beta) -----------------------------------------------
def _placement(size: Any, stride: Any, g: float, o: type = _ScalarOps) -> tuple[Any, Any]:
    # Same rule as mlsys.core.formulas.parallel.group_placement (a test checks they agree).
    inside = size * stride <= g
    per_node = o.where(inside, size, o.where(stride >= g, 1.0, o.floor(g / stride)))
    per_node = o.max(o.min(per_node, size), 1.0)
    nodes = o.where(inside, 1.0, o.ceil(size / per_node))
    return per_node, nodes


def _two_level(collective: Any, M: Any, k: Any, n: Any, P: Problem) -> Any:
    """A ring ``collective`` (reduce-scatter, all-gather or all-to-all) of an M-byte buffer
    over a group of k·n ranks (k per node, n nodes): inside the node over the scale-up
    fabric, then the 1/k shard across nodes over the scale-out fabric. The public
    functions take plain floats on a fast path and arrays through numpy, so one solve
    and a vectorised search price the same collective."""
    return collective(M, k, P.intra_bw, P.intra_lat) + collective(M / k, n, P.inter_bw, P.inter_lat)


def _allreduce(M: Any, k: Any, n: Any, topo: int, P: Problem, o: type = _ScalarOps) -> Any:
    """All-reduce of M bytes over k ranks per node on n nodes, by topology code."""
    if topo in (0, 3):
        return coll.hierarchical_allreduce_time(
            M, k, n, P.intra_bw, P.intra_lat, P.inter_bw, P.inter_lat
        )
    N = k * n
    one_node = n <= 1.0
    if topo == 1:  # flat ring: the slowest link (the NIC once the ring leaves the node)
        bw = o.where(one_node, P.intra_bw, P.inter_bw)
        lat = o.where(one_node, P.intra_lat, P.inter_lat)
        return coll.ring_allreduce_time(M, N, bw, lat)
    # double binary tree across nodes (the hierarchical ring inside a single node)
    hier = coll.hierarchical_allreduce_time(
        M, k, n, P.intra_bw, P.intra_lat, P.inter_bw, P.inter_lat
    )
    return o.where(one_node, hier, coll.tree_allreduce_time(M, N, P.inter_bw, P.inter_lat))


# -- the problem: everything that does not depend on the layout ---------------------------
@dataclass(frozen=True)
class Problem:
    """Model, fleet and precision as SI floats (built once per solve or search).

    Attributes
    ----------
    L, h, a, kv, d_attn, ffn, V, s : float
        Layers, hidden, heads, KV heads, attention width, MLP width, vocabulary,
        sequence length.
    gated : float
        1.0 for a gated (SwiGLU) MLP, else 0.0.
    act_inner : float
        ``sbh``-sized tensors a layer stores inside attention and the MLP (12 for a GPT
        layer; fewer KV heads, gating and MoE widths change it), as in
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
        Peak FLOP/s (matmul precision; attention precision), HBM bandwidth, compute and
        memory efficiencies, memory per device in bytes.
    g, nodes, total : float
        Accelerators per node, nodes, accelerators.
    intra_bw, intra_lat, inter_bw, inter_lat : float
        Achievable per-direction bandwidth (bytes/s) and latency (s) of the scale-up and
        scale-out fabrics (oversubscription included).
    e_act, w_bytes, g_bytes, opt_bytes : float
        Bytes per activation element, weight, reduced gradient; optimizer state bytes
        per parameter.
    batch : float
        Global batch in sequences.
    flash : bool
        FlashAttention-style fused attention (scores never reach HBM).
    """

    L: float
    h: float
    a: float
    kv: float
    d_attn: float
    ffn: float
    V: float
    s: float
    gated: float
    act_inner: float
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
    g: float
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
    schedule: int = 0,
    topo: int = 0,
    overlap: bool = True,
) -> dict[str, Any]:
    """Price a layout (floats) or many layouts (arrays of a common shape).

    Parameters
    ----------
    P : Problem
        The model, fleet and precision.
    tp, pp, ep, dp, m, v : float or ndarray
        Tensor, pipeline, expert and data-parallel sizes, micro-batches per step,
        model chunks per device.
    zero : float or ndarray
        ZeRO stage 0–3.
    rc : float or ndarray
        Recompute code (0 none, 1 selective, 2 full).
    sp : float or ndarray
        1.0 with sequence parallelism, else 0.0.
    schedule : int
        0 for 1F1B / interleaved, 1 for GPipe.
    topo : int
        Data-parallel all-reduce algorithm (0 auto, 1 ring, 2 tree, 3 hierarchical).
    overlap : bool
        Overlap data-parallel communication with compute.

    Returns
    -------
    dict of str to float or ndarray
        Times in s, bytes, FLOP and fractions; see the keys.
    """
    o = _ops(tp, pp, ep, dp, m, v, zero, rc, sp)
    s, h, L, e = P.s, P.h, P.L, P.e_act
    full = rc == 2
    sel = rc == 1
    # sequences per micro-batch: the token batch is split over dp·ep ranks (EP is carved
    # out of data parallelism, the Megatron-Core / DeepSpeed-MoE convention)
    b = P.batch / (dp * ep * m)
    T = s * b
    # ---- compute per layer per micro-batch (seconds) ------------------------------------
    fwd_passes = 3.0 + full  # forward + backward(2x) + rerun of the forward
    moe_frac = P.moe_layers / L
    lin_flops = 2.0 * P.n_layer * T / tp * fwd_passes
    attn_fwd = 4.0 * s * P.d_attn * T / tp
    if P.flash:
        # FlashAttention-2: 2 matmuls forward, 5 backward (scores recomputed); causal
        # blocks above the diagonal are skipped, halving the executed work.
        attn_flops = 0.5 * attn_fwd * (3.5 + full)
        attn_bytes = 0.0 * tp
    else:
        attn_flops = attn_fwd * (3.0 + full + sel)
        score_bytes = (6.0 * e + 1.0) * P.a * s * T / tp
        attn_bytes = score_bytes * (3.0 + full + sel)
    boundary = (10.0 * e * h + 2.0 * h) * T * o.where(sp, 1.0 / tp, 1.0)
    mlp_elem = (2.0 + P.gated) * e * P.ffn * T / tp
    elem_bytes = (boundary + mlp_elem) * fwd_passes
    t_lin = lin_flops / (P.peak * P.eta_c)
    t_attn = o.max(attn_flops / (P.peak_attn * P.eta_c), attn_bytes / (P.hbm_bw * P.eta_m))
    t_elem = elem_bytes / (P.hbm_bw * P.eta_m)
    t_layer_compute = t_lin + t_attn + t_elem
    # ---- tensor parallelism per layer ------------------------------------------------------
    M_tp = T * h * e
    tp_k, tp_n = _placement(tp, 1.0, P.g, o)
    n_ar = 4.0 + 2.0 * full
    t_tp_layer = n_ar * o.where(tp > 1.0, _allreduce(M_tp, tp_k, tp_n, 0, P, o), 0.0)
    # ---- expert parallelism per layer (averaged over dense and MoE layers) ---------------
    M_ep = T * P.topk * h * e / tp
    ep_k, ep_n = _placement(ep, tp, P.g, o)
    a2a = _two_level(coll.alltoall_time, M_ep, ep_k, ep_n, P)
    t_ep_layer = moe_frac * (4.0 + 2.0 * full) * o.where(ep > 1.0, a2a, 0.0)
    # ---- the heaviest device, per micro-batch ----------------------------------------------
    layers_dev = o.ceil(L / (pp * v)) * v
    head_flops = 2.0 * P.n_head * T / tp * 3.0
    logits_bytes = 4.0 * 3.0 * 4.0 * P.V * T / tp  # fp32 logits: write, softmax r/w, grad
    t_head = head_flops / (P.peak * P.eta_c) + logits_bytes / (P.hbm_bw * P.eta_m)
    t_mb_compute = layers_dev * t_layer_compute + t_head
    t_mb_tp = layers_dev * t_tp_layer
    t_mb_ep = layers_dev * t_ep_layer
    M_pp = T * h * e / tp
    cross = P.total > P.g  # with pp outermost, some stage boundary crosses nodes
    pp_bw = P.inter_bw if cross else P.intra_bw
    pp_lat = P.inter_lat if cross else P.intra_lat
    t_mb_pp = o.where(pp > 1.0, 2.0 * v * (pp_lat + M_pp / pp_bw), 0.0)
    t_mb = t_mb_compute + t_mb_tp + t_mb_ep + t_mb_pp
    bubble_ratio = (pp - 1.0) / (v * m)
    t_bubble = bubble_ratio * m * t_mb
    # ---- data parallelism ---------------------------------------------------------------------
    psi_dense = P.params_dense / (tp * pp)
    psi_exp = P.params_expert / (tp * pp * ep)
    dd_k, dd_n = _placement(dp * ep, tp, P.g, o)  # dense params: replicated over dp·ep
    de_k, de_n = _placement(dp, tp * ep, P.g, o)  # expert params: replicated over dp
    z3 = zero >= 3
    z2 = zero >= 2
    z1 = zero >= 1
    # gradient reduction (once per step, or per micro-batch once gradients are sharded)
    rs = coll.reduce_scatter_time
    ag = coll.allgather_time
    rs_dense = _two_level(rs, psi_dense * P.g_bytes, dd_k, dd_n, P)
    rs_exp = _two_level(rs, psi_exp * P.g_bytes, de_k, de_n, P)
    ag_dense = _two_level(ag, psi_dense * P.w_bytes, dd_k, dd_n, P)
    ag_exp = _two_level(ag, psi_exp * P.w_bytes, de_k, de_n, P)
    ar = _allreduce(psi_dense * P.g_bytes, dd_k, dd_n, topo, P, o) + o.where(
        psi_exp > 0.0, _allreduce(psi_exp * P.g_bytes, de_k, de_n, topo, P, o), 0.0
    )
    reps = o.where(z2, m, 1.0)
    t_grad = o.where(z1, (rs_dense + rs_exp) * reps, ar)
    t_param = o.where(z1, (ag_dense + ag_exp) * o.where(z3, 2.0 * m, 1.0), 0.0)
    dp_one = (dp * ep <= 1.0) * 1.0
    t_grad = t_grad * (1.0 - dp_one)
    t_param = t_param * (1.0 - dp_one)
    t_dp_total = t_grad + t_param
    if overlap:
        bwd_one = t_mb_compute * (2.0 / fwd_passes) + (t_mb_tp + t_mb_ep) * 0.5
        fwd_one = t_mb_compute / fwd_passes
        compute_all = m * t_mb_compute
        grad_window = o.where(z3, compute_all, o.where(z2, m * bwd_one, bwd_one))
        param_window = o.where(z3, compute_all, fwd_one)
        exposed = o.max(t_grad - grad_window, 0.0) + o.max(t_param - param_window, 0.0)
        # the two share the compute of ZeRO-3: never hide more than the compute itself
        exposed = o.where(z3, o.max(t_dp_total - compute_all, 0.0), exposed)
    else:
        exposed = t_dp_total
    overlap_fraction = o.where(t_dp_total > 0.0, 1.0 - exposed / o.max(t_dp_total, 1e-300), 0.0)
    # ---- optimizer step ---------------------------------------------------------------------
    owned = psi_dense / o.where(z1, dp * ep, 1.0) + psi_exp / o.where(z1, dp, 1.0)
    t_opt = owned * (ADAM_STEP_STATE_BYTES + P.g_bytes + P.w_bytes) / (P.hbm_bw * P.eta_m)
    # ---- step ---------------------------------------------------------------------------------
    compute_time = m * t_mb_compute + t_opt
    step = m * t_mb + t_bubble + exposed + t_opt
    tokens = P.batch * s
    model_flops = tokens * P.model_flops_per_token
    # selective recomputation is already what a fused attention kernel does: no extra
    sel_extra = 0.0 if P.flash else P.selective_flops_per_token
    hw_flops = model_flops + tokens * o.where(
        full, P.full_flops_per_token, o.where(sel, sel_extra, 0.0)
    )
    peak_total = P.total * P.peak
    mfu = model_flops / (step * peak_total)

    # ---- memory per device ----------------------------------------------------------------
    # dense parameters are sharded over dp·ep ranks, expert parameters over dp
    def _sharded(on: Any) -> Any:
        return psi_dense / o.where(on, dp * ep, 1.0) + psi_exp / o.where(on, dp, 1.0)

    weights = _sharded(z3) * P.w_bytes
    grads = _sharded(z2) * P.g_bytes
    optim = _sharded(z1) * P.opt_bytes
    # Korthikanti et al. (2022) Table 2, per layer, per micro-batch (same expressions as
    # mlsys.core.formulas.memory.activation_bytes_per_layer; a test checks they agree)
    sbh = T * h
    per_sbh = (4.0 * e + 2.0) * o.where(sp, 1.0 / tp, 1.0) + P.act_inner * e / tp
    scores = 0.0 if P.flash else (2.0 * e + 1.0) * P.a * s / (h * tp)
    act_layer = o.where(full, e * sbh, sbh * (per_sbh + o.where(sel, 0.0, scores)))
    inflight = o.where(schedule == 1, m, o.min(pp, m))
    interleave = o.where(v > 1.0, 1.0 + (pp - 1.0) / (pp * v), 1.0)
    sbh_t = sbh / tp
    # embedding dropout mask of each in-flight micro-batch; p = 1 also holds the output
    # layer (Korthikanti et al. 2022, Sec. 4.3)
    extra = sbh_t * inflight + o.where(pp == 1.0, 4.0 * sbh_t * (1.0 + P.V / h), 0.0)
    activations = act_layer * layers_dev * inflight * interleave + extra
    memory = weights + grads + optim + activations
    return {
        "microbatch_size": b,
        "step_time": step,
        "compute_time": compute_time,
        "optimizer_time": t_opt,
        "tp_communication_time": m * t_mb_tp,
        "ep_communication_time": m * t_mb_ep,
        "pp_communication_time": m * t_mb_pp,
        "pipeline_bubble_time": t_bubble,
        "bubble_fraction": t_bubble / step,
        "dp_communication_time": exposed,
        "dp_communication_total": t_dp_total,
        "overlap_fraction": overlap_fraction,
        "model_flops": model_flops,
        "hardware_flops": hw_flops,
        "mfu": mfu,
        "hfu": hw_flops / (step * peak_total),
        "tokens_per_second": tokens / step,
        "layers_per_device": layers_dev,
        "weights": weights,
        "gradients": grads,
        "optimizer": optim,
        "activations": activations,
        "memory": memory,
        "fits": memory <= P.capacity,
        "tp_nodes": tp_n,
        "dp_nodes": dd_n,
    }
