"""Hiding tensor-parallel communication under the GEMMs that depend on it.

Megatron-LM's ``--tp-comm-overlap`` (Transformer Engine "userbuffers") splits the
all-gather before a column-parallel GEMM and the reduce-scatter after a row-parallel one
into chunks, one per tensor-parallel rank, and pipelines them with the chunks of the GEMM:
while chunk ``i`` is multiplied, chunk ``i+1`` travels. With ``c`` chunks of equal size a
pipeline of two stages takes the longer stage's whole time plus one chunk of the
shorter one (the fill or the drain): ``t = max(t_comp, t_comm) + min(t_comp, t_comm)/c``.
Without overlap the two add.

References
----------
Wang et al. (2023), "Overlap Communication with Dependent Computation via Decomposition in
Large Deep Learning Models", ASPLOS 2023, Sec. 3 (decomposing a collective and its
dependent einsum into per-shard steps that overlap).
NVIDIA Megatron-LM, ``--tp-comm-overlap`` (Megatron-Core, with Transformer Engine's
userbuffers; requires sequence parallelism).
NVIDIA Megatron-Bridge, ``megatron/bridge/training/comm_overlap.py``,
``TransformerLayerTPOverlapCfg`` (which collective overlaps which GEMM of a layer).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlsys.core.formulas._ops import ops
from mlsys.core.formulas.collectives import p2p_time

__all__ = [
    "OVERLAPPED_COMPUTE_SLOWDOWN",
    "bucket_edge_time",
    "data_parallel_overlap_windows",
    "exposed_communication_time",
    "fsdp_edge_exposed_time",
    "fsdp_edge_fraction",
    "overlap_slowdown_time",
    "overlapped_time",
    "ring_attention_exchange_time",
    "userbuffers_exposed_time",
]

OVERLAPPED_COMPUTE_SLOWDOWN = 0.189
"""Fraction by which compute kernels run longer while collective kernels run beside them
on the same GPU: the NCCL kernels occupy SMs (a 132-block GEMM wave no longer fits) and
share HBM bandwidth. Lee, Oh, Kim, Go, Park & Mahajan (2025), "Characterizing
Compute-Communication Overlap in GPU-Accelerated Distributed Deep Learning: Performance
and Power Implications", arXiv:2507.03114, abstract and Sec. 5: 18.9% on average (40.0%
at most) over GPT and LLaMA training steps on 4 x A100, H100, MI250 and MI210, against
the same compute with no communication beside it."""


def overlapped_time(compute_s: Any, communication_s: Any, chunks: Any) -> Any:
    """Time of a GEMM and its collective pipelined over ``chunks`` chunks.

    ``max(t_comp, t_comm) + min(t_comp, t_comm) / c`` — ``c = 1`` is no overlap
    (the two add), ``c → ∞`` hides the shorter one completely.

    Parameters
    ----------
    compute_s : float or ndarray
        Seconds of the GEMM alone.
    communication_s : float or ndarray
        Seconds of its all-gather or reduce-scatter alone.
    chunks : int or ndarray
        Chunks the two are split into (Megatron: the tensor-parallel degree).

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Wang et al. (2023), ASPLOS 2023, Sec. 3.

    Examples
    --------
    A 2 ms GEMM and its 1.2 ms reduce-scatter on 8 ranks: 2 + 1.2/8 = 2.15 ms, against
    3.2 ms one after the other.

    >>> round(overlapped_time(2e-3, 1.2e-3, 8) * 1e3, 3)
    2.15
    >>> round(overlapped_time(2e-3, 1.2e-3, 1) * 1e3, 3)
    3.2
    """
    if all(type(x) in (int, float) for x in (compute_s, communication_s, chunks)):
        longer = compute_s if compute_s > communication_s else communication_s
        shorter = compute_s + communication_s - longer
        return float(longer + shorter / chunks)
    c, m, k = (np.asarray(x, dtype=float) for x in (compute_s, communication_s, chunks))
    out = np.maximum(c, m) + np.minimum(c, m) / k
    return float(out) if out.ndim == 0 else out


def exposed_communication_time(compute_s: Any, communication_s: Any, chunks: Any) -> Any:
    """Communication time left on the critical path after overlap.

    ``overlapped_time − t_comp``: what a step pays for the collective beyond the GEMM.

    Parameters
    ----------
    compute_s : float or ndarray
        Seconds of the GEMM alone.
    communication_s : float or ndarray
        Seconds of the collective alone.
    chunks : int or ndarray
        Chunks of the pipeline.

    Returns
    -------
    float or ndarray
        Seconds (``t_comm`` when ``chunks = 1``).

    References
    ----------
    Wang et al. (2023), ASPLOS 2023, Sec. 3.

    Examples
    --------
    The example of :func:`overlapped_time`: 0.15 ms of the 1.2 ms stays exposed.

    >>> round(exposed_communication_time(2e-3, 1.2e-3, 8) * 1e3, 3)
    0.15
    """
    out = np.subtract(overlapped_time(compute_s, communication_s, chunks), compute_s)
    return float(out) if np.ndim(out) == 0 else out


def overlap_slowdown_time(
    hidden_communication_s: Any, slowdown: Any = OVERLAPPED_COMPUTE_SLOWDOWN
) -> Any:
    """Time the compute loses to collectives that run beside it.

    Communication hidden behind compute is not free: for as long as a collective kernel
    runs, the kernels it overlaps run ``slowdown`` longer (Lee et al. 2025). To first
    order the compute that shares the GPU with a collective of ``t`` seconds is ``t``
    seconds of it, so the step grows by ``slowdown · t`` (exposed communication, which
    runs alone, costs nothing more).

    Parameters
    ----------
    hidden_communication_s : float or ndarray
        Seconds of communication overlapped with compute (priced alone).
    slowdown : float or ndarray
        Fractional slowdown of the overlapped compute (dimensionless);
        :data:`OVERLAPPED_COMPUTE_SLOWDOWN` by default.

    Returns
    -------
    float or ndarray
        Seconds added to the step.

    References
    ----------
    Lee, Oh, Kim, Go, Park & Mahajan (2025), arXiv:2507.03114, abstract: average
    computational slowdown of 18.9% (maximum 40.0%) under overlap, A100 and H100.

    Examples
    --------
    Two seconds of FSDP all-gathers and reduce-scatters hidden under the backward pass
    cost 0.189 x 2 = 0.378 s.

    >>> round(overlap_slowdown_time(2.0), 3)
    0.378
    """
    return hidden_communication_s * slowdown


def userbuffers_exposed_time(
    forward_s: Any,
    forward_chunked_s: Any,
    data_s: Any,
    data_chunked_s: Any,
    weight_s: Any,
    collective_s: Any,
    chunks: Any,
    rerun: Any = 0.0,
) -> Any:
    """Tensor-parallel communication a layer leaves exposed when each collective is
    overlapped with its own GEMM, as Transformer Engine's userbuffers pair them.

    Under sequence parallelism every all-gather and reduce-scatter of a layer moves the
    same ``T·h`` activation and is tied to one GEMM (Megatron-Bridge's
    ``TransformerLayerTPOverlapCfg`` names the pairs):

    * forward — the all-gather before the QKV and MLP-up GEMMs and the reduce-scatter
      after the output and MLP-down GEMMs (``qkv_fprop``, ``fc1_fprop``,
      ``proj_fprop``, ``fc2_fprop``), pipelined in ``chunks`` pieces with the GEMM
      split as many ways: :func:`exposed_communication_time` of the chunked GEMM, plus
      what splitting the GEMM costs (``chunked − whole``); again under recomputation
      (``rerun``);
    * backward, row-parallel layers — the all-gather of the output gradient before the
      output and MLP-down data-gradient GEMMs (``proj_dgrad``, ``fc2_dgrad``), pipelined
      the same way;
    * backward, column-parallel layers — the layer input gathered again for the
      weight gradient beside the QKV and MLP-up data-gradient GEMMs (``qkv_dgrad``,
      ``fc1_dgrad``) and the input gradient's reduce-scatter beside their
      weight-gradient GEMMs (``qkv_wgrad``, ``fc1_wgrad``), "bulk" overlaps of the whole
      collective with the whole GEMM: ``max(t_comm − t_gemm, 0)`` exposed.

    A collective longer than its GEMM shows through even when the layer's other GEMMs
    are long: the output projection's reduce-scatter cannot hide under the MLP.

    Parameters
    ----------
    forward_s, forward_chunked_s : sequence of 4 floats or ndarrays
        Seconds of the QKV, output, MLP-up and MLP-down forward GEMMs, whole and as
        ``chunks`` pieces of ``T/chunks`` tokens (summed).
    data_s, data_chunked_s : sequence of 4 floats or ndarrays
        The same for the data-gradient GEMMs.
    weight_s : sequence of 4 floats or ndarrays
        Seconds of the weight-gradient GEMMs (never split).
    collective_s : float or ndarray
        Seconds of one all-gather (or reduce-scatter, the same size) of the ``T·h``
        activation over the tensor-parallel group.
    chunks : float or ndarray
        Pieces of a pipelined overlap (the tensor-parallel degree).
    rerun : float or ndarray
        Share of the forward run again under recomputation (0 none, 1 full).

    Returns
    -------
    float or ndarray
        Seconds per layer on the critical path beyond the GEMMs' own time.

    References
    ----------
    Wang et al. (2023), ASPLOS 2023, Sec. 3 (a collective decomposed with its dependent
    GEMM); NVIDIA Megatron-Bridge ``comm_overlap.py`` (e.g.
    ``userbuffers_fp8_h100_h16384_tp8_cp2_mbs1_seqlen8192``: ring-exchange or pipelined
    ``qkv_fprop``, ``proj_fprop``, ``fc1_fprop``, ``fc2_fprop``, ``proj_dgrad``,
    ``fc2_dgrad``; bulk ``qkv_dgrad``, ``qkv_wgrad``, ``fc1_dgrad``, ``fc1_wgrad``).

    Examples
    --------
    A 1.2 ms collective in 8 chunks against forward GEMMs of 1, 0.4, 3 and 1.5 ms
    (10% slower when split) and data and weight GEMMs of the same lengths. Forward: the
    output projection's split GEMM (0.44 ms) leaves 0.815 ms of its collective exposed
    plus 0.04 ms of splitting, the QKV GEMM 0.2375 + 0.1 ms, the MLP GEMMs hide theirs
    and pay one chunk and the splitting (0.45 and 0.30 ms): 1.9425 ms. Backward: 0.855
    and 0.30 ms (output, MLP-down) and 0.2 + 0.2 ms (QKV's bulk pairs). 3.4975 ms of
    the 12 × 1.2 = 14.4 ms of collectives.

    >>> fw = (1e-3, 0.4e-3, 3e-3, 1.5e-3)
    >>> fc = tuple(1.1 * x for x in fw)
    >>> round(userbuffers_exposed_time(fw, fc, fw, fc, fw, 1.2e-3, 8) * 1e3, 4)
    3.4975
    """
    qkv_f, out_f, up_f, down_f = forward_s
    qkv_fc, out_fc, up_fc, down_fc = forward_chunked_s
    qkv_d, out_d, up_d, down_d = data_s
    _, out_dc, _, down_dc = data_chunked_s
    qkv_w, _, up_w, _ = weight_s
    c = collective_s

    def piped(whole: Any, chunked: Any) -> Any:
        return exposed_communication_time(chunked, c, chunks) + (chunked - whole)

    def bulk(gemm: Any) -> Any:
        return np.maximum(c - gemm, 0.0)

    forward = piped(qkv_f, qkv_fc) + piped(out_f, out_fc) + piped(up_f, up_fc)
    forward = forward + piped(down_f, down_fc)
    backward = piped(out_d, out_dc) + piped(down_d, down_dc)
    backward = backward + bulk(qkv_d) + bulk(qkv_w) + bulk(up_d) + bulk(up_w)
    out = (1.0 + rerun) * forward + backward
    return float(out) if np.ndim(out) == 0 else out


def data_parallel_overlap_windows(
    microbatch_compute_s: Any,
    microbatch_communication_s: Any,
    forward_passes: Any,
    microbatches: Any,
    zero_stage: Any,
) -> tuple[Any, Any, Any]:
    """The compute each data-parallel collective of a step can hide behind.

    The gradient reduction starts as the backward pass produces gradients (bucketed, as
    PyTorch DDP and Megatron's distributed optimizer do), so it hides behind the
    backward of the last micro-batch — of every micro-batch under ZeRO-2, which
    reduce-scatters each one's gradients; the parameter all-gather of ZeRO-1/2 hides
    behind the next step's first forward. ZeRO-3 gathers parameters ahead of every
    forward and backward, so both collectives share all the step's compute. A backward
    is two forwards of compute plus half the micro-batch's own communication (the
    other half is the forward's).

    Parameters
    ----------
    microbatch_compute_s : float or ndarray
        Compute of one micro-batch, forward, backward and any recomputation (s).
    microbatch_communication_s : float or ndarray
        Communication inside one micro-batch's layers (s).
    forward_passes : float or ndarray
        The micro-batch's compute in forwards: 3 (forward and a backward of twice its
        cost), 4 with a full recompute.
    microbatches : float or ndarray
        Micro-batches of the step.
    zero_stage : float or ndarray
        ZeRO stage, 0 to 3.

    Returns
    -------
    tuple of (float or ndarray)
        ``(gradient_window, parameter_window, all_compute)`` in seconds.

    References
    ----------
    Li et al. (2020), "PyTorch Distributed: Experiences on Accelerating Data Parallel
    Training", VLDB 13(12), Sec. 3.2.3 (gradient buckets all-reduced during the
    backward pass); Rajbhandari et al. (2020), "ZeRO: Memory Optimizations Toward
    Training Trillion Parameter Models", SC'20, Sec. 5.2-5.3 (ZeRO-2's reduce-scatter of
    gradients, ZeRO-3's parameter all-gathers before forward and backward).

    Examples
    --------
    Micro-batches of 0.3 s of compute (three forwards of 0.1 s) and 0.04 s of
    communication, 8 of them: under ZeRO-1 the reduction hides behind one backward,
    0.2 + 0.02 s, the all-gather behind one forward; under ZeRO-3 both share 2.4 s.

    >>> [round(w, 3) for w in data_parallel_overlap_windows(0.3, 0.04, 3.0, 8.0, 1.0)]
    [0.22, 0.1, 2.4]
    >>> [round(w, 3) for w in data_parallel_overlap_windows(0.3, 0.04, 3.0, 8.0, 3.0)]
    [2.4, 2.4, 2.4]
    """
    o = ops(microbatch_compute_s, microbatch_communication_s, microbatches, zero_stage)
    z2, z3 = zero_stage >= 2, zero_stage >= 3
    forward_s = microbatch_compute_s / forward_passes
    backward_s = microbatch_compute_s * (2.0 / forward_passes) + microbatch_communication_s * 0.5
    all_compute_s = microbatches * microbatch_compute_s
    gradient_s = o.where(z3, all_compute_s, o.where(z2, microbatches * backward_s, backward_s))
    parameter_s = o.where(z3, all_compute_s, forward_s)
    return gradient_s, parameter_s, all_compute_s


def ring_attention_exchange_time(
    kv_block_bytes: Any,
    cp_size: Any,
    attention_s: Any,
    attention_passes: Any,
    recompute: Any,
    bandwidth_Bps: Any,
    latency_s: Any,
) -> tuple[Any, Any]:
    """Context parallelism's ring exchange of one layer: the time exposed and the whole.

    Each of the ``cp`` ranks holds ``1/cp`` of every sequence. Ring attention passes the
    local K and V block to the next rank in ``cp − 1`` point-to-point steps, each beside
    the attention of the block already there, so a step shows only where it is longer
    than that block's attention. Forward (again when the forward is recomputed) sends
    K and V; backward sends K, V and their gradients (twice the bytes) beside the
    backward's blocks. One forward pass of the layer's attention is ``attention_s /
    attention_passes``, a block ``1/cp`` of it.

    Parameters
    ----------
    kv_block_bytes : float or ndarray
        Bytes of the K and V of one rank's tokens (``2·T·d_kv·e`` over the tensor-parallel
        split of the KV heads).
    cp_size : float or ndarray
        Context-parallel ranks in the ring.
    attention_s : float or ndarray
        The layer's attention time over all its passes, in seconds.
    attention_passes : float or ndarray
        Forward-equivalent passes in ``attention_s`` (3.5 for a fused kernel that
        recomputes the scores backward, plus one per recompute of the forward).
    recompute : float or ndarray
        1 when the forward is rerun before the backward (full recomputation), else 0.
    bandwidth_Bps : float or ndarray
        Per-direction link bandwidth, in bytes per second.
    latency_s : float or ndarray
        Per-send latency, in seconds.

    Returns
    -------
    tuple of (float or ndarray)
        ``(exposed, total)`` in seconds.

    References
    ----------
    Liu, Zaharia & Abbeel (2023), "Ring Attention with Blockwise Transformers for
    Near-Infinite Context", arXiv:2310.01889, Sec. 3 (each block's transfer overlapped
    with the attention of the block in hand); NVIDIA Megatron-Core, "context_parallel
    package" (K/V sent forward, K/V and dK/dV backward).

    Examples
    --------
    4 MB blocks on a ring of 4, 1.4 ms of attention in 3.5 passes (0.1 ms a forward
    block, 0.25 ms a backward block): at 100 GB/s each step (40 and 80 µs) hides, 0.36 ms
    of sends all hidden; at 10 GB/s 2.55 ms of the 3.6 ms show.

    >>> exposed, total = ring_attention_exchange_time(4e6, 4.0, 1.4e-3, 3.5, 0.0, 100e9, 0.0)
    >>> round(exposed * 1e3, 2), round(total * 1e3, 2)
    (0.0, 0.36)
    >>> exposed, total = ring_attention_exchange_time(4e6, 4.0, 1.4e-3, 3.5, 0.0, 10e9, 0.0)
    >>> round(exposed * 1e3, 2), round(total * 1e3, 2)
    (2.55, 3.6)
    """
    o = ops(kv_block_bytes, cp_size, attention_s, attention_passes, recompute, bandwidth_Bps)
    t_pass = attention_s / attention_passes  # one forward-equivalent of attention
    block_fwd = t_pass / cp_size
    block_bwd = t_pass * (attention_passes - 1.0 - recompute) / cp_size
    step_fwd = p2p_time(kv_block_bytes, bandwidth_Bps, latency_s)
    step_bwd = p2p_time(2.0 * kv_block_bytes, bandwidth_Bps, latency_s)
    steps = o.max(cp_size - 1.0, 0.0)
    total = steps * ((1.0 + recompute) * step_fwd + step_bwd)
    exposed = steps * (
        (1.0 + recompute) * o.max(step_fwd - block_fwd, 0.0) + o.max(step_bwd - block_bwd, 0.0)
    )
    return exposed, total


def fsdp_edge_fraction(params: Any, outer_params: Any, layers: Any, pp_size: Any = 1.0) -> Any:
    """Share of a rank's sharded parameters in the FSDP units that nothing can hide:
    the units gathered first in the forward and reduce-scattered last in the backward.

    PyTorch FSDP wraps each transformer block as one unit (one all-gather, one
    reduce-scatter) and leaves the rest (the embeddings, the final norm and output
    layer) to the root unit. A micro-batch starts with the root's all-gather and block
    0's, which have no compute before them to hide behind, and ends with block 0's and
    the root's reduce-scatters, which have no compute after them. These two units hold
    ``outer + (N - outer)/L`` of the ``N`` parameters; with ``p`` pipeline stages a
    rank's shard is ``N/p`` on average, so the share of its traffic is ``p`` times
    larger (capped at one).

    Parameters
    ----------
    params : float or ndarray
        Parameters of the whole model ``N`` (parameters).
    outer_params : float or ndarray
        Parameters outside the transformer blocks (input embedding, plus the output
        layer when it is not tied) (parameters).
    layers : float or ndarray
        Transformer blocks ``L`` (count).
    pp_size : float or ndarray
        Pipeline stages ``p`` (count); 1 without a pipeline.

    Returns
    -------
    float or ndarray
        Fraction of the rank's parameter-sized collective time in the edge units
        (dimensionless, 0..1).

    References
    ----------
    PyTorch documentation, "FSDP Notes": "FSDP Prefetch Nuances" ("The 1st all-gather
    will not be able to overlap with anything") and "Communication buffer size" (one
    communication group per transformer block, one for the root's embedding and final
    linear layer). PyTorch ``torch/distributed/fsdp/_runtime_utils.py`` (2.1):
    ``_post_backward_hook`` reduce-scatters a unit once its gradient is computed;
    ``_post_backward_final_callback`` makes the compute stream wait for the last
    reduce-scatter before the optimizer runs.

    Examples
    --------
    MPT-70B (50,368 x 8,192 tied embedding, 80 blocks, 68.9e9 parameters): the root and
    block 0 hold (0.413e9 + 68.5e9/80)/68.9e9 = 1.84% of the parameters.

    >>> round(fsdp_edge_fraction(68.9e9, 50368 * 8192, 80) * 100, 2)
    1.84
    """
    o = ops(params, outer_params, layers, pp_size)
    share = pp_size * (outer_params + (params - outer_params) / layers) / params
    return o.min(share, 1.0)


def bucket_edge_time(communication_s: Any, buckets: Any) -> Any:
    """The part of a bucketed data-parallel collective that no compute can hide: one
    bucket's.

    A gradient reduction split into ``n`` equal buckets starts each bucket as the
    backward pass fills it, so all but the last run beside the backward; the last bucket
    (the first layers' gradients) is complete only when the backward pass ends, and its
    collective runs alone. The parameter all-gather of a distributed optimizer is the
    mirror image: the first bucket must arrive before the next forward pass can start.
    Each collective therefore exposes at least ``t/n``, what
    :func:`fsdp_edge_exposed_time` takes as its edge.

    Parameters
    ----------
    communication_s : float or ndarray
        The whole collective, priced alone (s).
    buckets : float or ndarray
        Equal buckets it is split into (at least 1).

    Returns
    -------
    float or ndarray
        Seconds of it that run alone.

    References
    ----------
    Li et al. (2020), "PyTorch Distributed: Experiences on Accelerating Data Parallel
    Training", VLDB 13(12), Sec. 3.2.3 (buckets reduced as the backward pass fills them;
    the last one waits for the end of the backward); NVIDIA NeMo documentation,
    "Communication Overlap", "Data-parallel Communication Overlap" (the distributed
    optimizer's reduce-scatter and all-gather chunked and overlapped, "exposes only one
    DP communication chunk").

    Examples
    --------
    Nemotron-4 15B on TP 8 holds 1.95 G parameters a GPU; Megatron-Core's buckets of
    max(40 M, 1 M × 96) parameters over 96 data-parallel ranks make 21 of them, so a
    0.08 s reduce-scatter exposes at least 0.08 / 21 = 3.8 ms.

    >>> round(bucket_edge_time(0.08, 21.0) * 1e3, 1)
    3.8
    """
    return communication_s / buckets


def fsdp_edge_exposed_time(communication_s: Any, edge_s: Any, window_s: Any) -> Any:
    """Exposed time of FSDP's parameter-sized collectives when all but the edge units
    can hide behind compute.

    The edge collectives (:func:`fsdp_edge_fraction`: the first all-gather of a
    micro-batch and its last reduce-scatter) run alone; the rest runs beside the
    ``window`` of compute and shows only where it is longer:
    ``t_exposed = t_edge + max(t_comm - t_edge - t_window, 0)``. With ``t_edge = 0``
    this is the plain ``max(t_comm - t_window, 0)``.

    Parameters
    ----------
    communication_s : float or ndarray
        All the collective time of the step, priced alone (s).
    edge_s : float or ndarray
        The part of it in the edge units (s); at most ``communication_s``.
    window_s : float or ndarray
        Compute the rest can run beside (s).

    Returns
    -------
    float or ndarray
        Seconds of collective time the step waits for (s).

    References
    ----------
    PyTorch documentation, "FSDP Notes", "FSDP Prefetch Nuances" (the first all-gather
    cannot overlap; the next all-gather is issued before the current reduce-scatter so
    both hide behind the backward's compute); PyTorch
    ``torch/distributed/fsdp/_runtime_utils.py`` (2.1), ``_post_backward_hook`` and
    ``_post_backward_final_callback``.

    Examples
    --------
    3 s of all-gathers and reduce-scatters, 0.06 s of them at the edges, beside 10 s of
    compute: only the 0.06 s show. Beside 2.5 s of compute: 0.06 + (3 - 0.06 - 2.5).

    >>> round(fsdp_edge_exposed_time(3.0, 0.06, 10.0), 3)
    0.06
    >>> round(fsdp_edge_exposed_time(3.0, 0.06, 2.5), 3)
    0.5
    """
    excess = communication_s - edge_s - window_s
    if type(excess) is float:  # one solve's path: no numpy dispatch
        return edge_s + (excess if excess > 0.0 else 0.0)
    return edge_s + np.maximum(excess, 0.0)
