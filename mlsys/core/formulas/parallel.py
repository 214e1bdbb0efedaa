"""Communication volumes of tensor, data, ZeRO and expert parallelism, and group placement.

What each form of parallelism must move per training step, in bytes per rank, and
which fabric a communication group rides given where its ranks sit. Times follow from
the alpha-beta collectives of :mod:`mlsys.core.formulas.collectives`.

Rank order (Megatron-LM / Megatron-Core convention): tensor-parallel ranks are
adjacent, then expert-parallel, then data-parallel, and pipeline stages are outermost
(``tp → ep → dp → pp``). A group of ``size`` ranks spaced ``stride`` apart on nodes of
``g`` accelerators therefore stays inside one node when ``size·stride ≤ g``.

All functions broadcast over numpy arrays.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mlsys.core.errors import ParameterError
from mlsys.core.formulas._ops import all_float, num, ops, ret
from mlsys.core.formulas.memory import recompute_mode

__all__ = [
    "tp_collectives_per_layer",
    "tp_forward_reductions_per_layer",
    "tp_reductions_per_layer",
    "tp_bytes_per_layer",
    "dp_gradient_bytes",
    "gradient_bucket_count",
    "GRADIENT_BUCKET_MIN_PARAMS",
    "GRADIENT_BUCKET_PARAMS_PER_RANK",
    "zero_dp_bytes_per_rank",
    "moe_alltoall_bytes_per_layer",
    "group_placement",
]

ArrayLike = Any


def _f(x: ArrayLike) -> Any:
    # plain numbers stay floats (math only: the fast path of one solve); others become
    # float arrays (numpy broadcasting: a search)
    return num(x)


def _ret(x: Any) -> Any:
    return float(x) if np.ndim(x) == 0 else x


def tp_collectives_per_layer(
    sequence_parallel: bool = False, recompute: str = "none"
) -> dict[str, int]:
    """Collectives one transformer layer issues per micro-batch under tensor parallelism.

    Megatron-LM splits attention by heads and the MLP by columns then rows, so each
    block needs one all-reduce of its ``s·b·h`` output in the forward pass and one of
    the input gradient in the backward pass: 2 + 2 per layer. Sequence parallelism
    replaces each all-reduce by an all-gather before the block and a reduce-scatter
    after it (the same bytes). Full recomputation reruns the forward, and its
    collectives; selective recomputation reruns only attention-score work, which needs
    none, and so does ``"dots"`` (it keeps the matmuls' outputs and reruns the work
    between them, which the saved tensors feed without a collective).

    Parameters
    ----------
    sequence_parallel : bool
        Megatron sequence parallelism.
    recompute : {"none", "selective", "full", "dots"}
        Activation recomputation.

    Returns
    -------
    dict of str to int
        Counts of ``"all_reduce"``, ``"all_gather"`` and ``"reduce_scatter"``.

    References
    ----------
    Shoeybi et al. (2019), "Megatron-LM: Training Multi-Billion Parameter Language
    Models Using Model Parallelism", arXiv:1909.08053, Sec. 3 and Fig. 4 (two
    all-reduces forward, two backward); Korthikanti et al. (2022), "Reducing Activation
    Recomputation in Large Transformer Models", Sec. 4.2.2 (all-gather +
    reduce-scatter pairs with the same volume).

    Examples
    --------
    >>> tp_collectives_per_layer()
    {'all_reduce': 4, 'all_gather': 0, 'reduce_scatter': 0}
    >>> tp_collectives_per_layer(True, "full")
    {'all_reduce': 0, 'all_gather': 6, 'reduce_scatter': 6}
    """
    passes = 3 if recompute_mode(recompute) == "full" else 2  # forward (+ rerun) + backward
    n = 2 * passes
    if sequence_parallel:
        return {"all_reduce": 0, "all_gather": n, "reduce_scatter": n}
    return {"all_reduce": n, "all_gather": 0, "reduce_scatter": 0}


def tp_forward_reductions_per_layer(
    sequence_parallel: ArrayLike = 0.0, parallel_block: bool = False
) -> ArrayLike:
    """Tensor-parallel collectives of one layer's forward pass, in all-reduce equivalents.

    A sequential (Megatron) layer reduces the attention output and the MLP output: two
    all-reduces (under sequence parallelism two all-gathers of the blocks' inputs and two
    reduce-scatters of their outputs, a pair counting as one all-reduce: the same bytes).
    A **parallel block** (GPT-J, GPT-NeoX ``gpt_j_residual``, PaLM, MaxText's default
    decoder layer) sums the two outputs before one reduction: one all-reduce, or under
    sequence parallelism one all-gather of the input both branches share and one
    reduce-scatter of their sum (``2 − p``, ``p`` = 1 for a parallel block, either way).
    An inference engine's forward pass issues exactly these.

    Parameters
    ----------
    sequence_parallel : float or ndarray
        1 under Megatron sequence parallelism, else 0 (the count is the same either
        way: a gather and a scatter move one all-reduce's bytes).
    parallel_block : bool
        Attention and MLP in parallel, summed into the residual once.

    Returns
    -------
    float
        All-reduce equivalents per layer per forward pass.

    References
    ----------
    Shoeybi et al. (2019), "Megatron-LM", arXiv:1909.08053, Sec. 3 and Fig. 4;
    Korthikanti et al. (2022), arXiv:2205.05198, Sec. 4.2.2; Black et al. (2022),
    GPT-NeoX-20B, Sec. 2.1 (``gpt_j_residual``); Chowdhery et al. (2022), "PaLM",
    arXiv:2204.02311, Sec. 2 ("Parallel Layers": the attention and MLP input matrix
    multiplications fused, so one gathered input feeds both); AI-Hypercomputer/maxtext
    ``MaxText/layers/models.py`` ``DecoderLayer`` (one normalised input ``lnx`` for the
    attention and the MLP, their outputs summed).

    Examples
    --------
    >>> tp_forward_reductions_per_layer(), tp_forward_reductions_per_layer(parallel_block=True)
    (2.0, 1.0)
    >>> tp_forward_reductions_per_layer(1.0), tp_forward_reductions_per_layer(1.0, True)
    (2.0, 1.0)
    """
    # A pair (all-gather + reduce-scatter) moves an all-reduce's bytes, so sequence
    # parallelism does not change the count; its argument stays for the callers' symmetry.
    del sequence_parallel
    return 1.0 if parallel_block else 2.0


def tp_reductions_per_layer(
    full: ArrayLike,
    sequence_parallel: ArrayLike = 0.0,
    rerun_residuals: bool = False,
    parallel_block: bool = False,
) -> ArrayLike:
    """Tensor-parallel collectives of one layer per micro-batch, in all-reduce equivalents.

    A sequential (Megatron) layer reduces the attention output and the MLP output in the
    forward pass (two all-reduces; under sequence parallelism two reduce-scatters, after
    two all-gathers of the blocks' inputs) and the two blocks' input gradients in the
    backward pass: ``2 + 2``, an all-gather plus a reduce-scatter counting as one
    all-reduce (the same bytes). Full recomputation reruns the forward's
    (``2·full``); a rerun of only the residuals (JAX) reruns only the all-gathers that
    feed the rerun input projections (``full·sp`` for two gathered inputs). In a
    **parallel block** (GPT-J, GPT-NeoX ``gpt_j_residual``, PaLM, MaxText's default
    decoder layer) the attention and MLP outputs are summed before one reduction, so each
    forward pass issues one all-reduce (or one reduce-scatter) instead of two. Without
    sequence parallelism the backward still all-reduces both blocks' input gradients
    (GPT-NeoX's code: each column-parallel linear reduces its own input gradient; the
    forward reduction's backward is the identity). Under sequence parallelism, the only
    way parallel blocks have run with sharded activations (PaLM, MaxText: JAX/XLA), the
    two branches share one gathered input (PaLM fuses their input projections) and the
    backward reduce-scatters the sum of their input gradients once (XLA's
    reduce-scatter reassociation) after one all-gather of the output gradient; a
    residual-only rerun gathers the shared input once. Per layer:

    * forward ``2 − p``;
    * backward ``2 − p·sp``;
    * rerun ``full·(2 − p)``, or ``full·sp·(1 − p/2)`` when only the residuals rerun

    (``p`` = 1 for a parallel block, ``sp`` = 1 under sequence parallelism).

    Parameters
    ----------
    full : float or ndarray
        Share of the layer's forward rerun by full recomputation (0 none, 1 all).
    sequence_parallel : float or ndarray
        1 under Megatron sequence parallelism, else 0.
    rerun_residuals : bool
        The rerun recomputes only what the backward consumes (JAX's
        ``jax.checkpoint``): no reduction reruns, only the input all-gathers under
        sequence parallelism.
    parallel_block : bool
        Attention and MLP in parallel, summed into the residual once.

    Returns
    -------
    float or ndarray
        All-reduce equivalents per layer per micro-batch.

    References
    ----------
    Shoeybi et al. (2019), "Megatron-LM", arXiv:1909.08053, Sec. 3 and Fig. 4 (two
    all-reduces forward, two backward); Korthikanti et al. (2022), arXiv:2205.05198,
    Sec. 4.2.2 (all-gather + reduce-scatter pairs of the same volume); Black et al.
    (2022), GPT-NeoX-20B, Sec. 2.1 and EleutherAI/gpt-neox ``megatron/model/
    transformer.py`` ``ParallelTransformerLayer`` (``gpt_j_residual``: the attention and
    MLP outputs summed, then one all-reduce); Chowdhery et al. (2022), "PaLM",
    arXiv:2204.02311, Sec. 2 ("Parallel Layers": the attention and MLP input matrix
    multiplications fused); AI-Hypercomputer/maxtext ``MaxText/layers/models.py``
    ``DecoderLayer`` (one normalised input for both branches, their outputs summed);
    openxla/xla ``xla/service/reduce_scatter_reassociate.h`` (``add(reduce-scatter(x),
    reduce-scatter(y))`` rewritten as ``reduce-scatter(add(x, y))``).

    Examples
    --------
    Megatron's layer under full recomputation: 6; GPT-NeoX's parallel block: 4, as
    GPT-NeoX's own code issues (1 forward, 2 backward, 1 again in the rerun).

    >>> tp_reductions_per_layer(1.0), tp_reductions_per_layer(1.0, parallel_block=True)
    (6.0, 4.0)

    MaxText's parallel block with sharded activations and a residual-only rerun: one
    all-gather and one reduce-scatter forward, the same backward, one all-gather rerun.

    >>> tp_reductions_per_layer(1.0, 1.0, rerun_residuals=True, parallel_block=True)
    2.5
    """
    p = 1.0 if parallel_block else 0.0
    fwd = tp_forward_reductions_per_layer(sequence_parallel, parallel_block)
    bwd = 2.0 - p * sequence_parallel
    gathered_inputs = 1.0 - 0.5 * p  # all-reduce equivalents of the rerun input gathers
    rerun = full * sequence_parallel * gathered_inputs if rerun_residuals else full * fwd
    out = fwd + bwd + rerun
    if type(out) is float:  # one solve: skip numpy's dimension check
        return out
    return float(out) if np.ndim(out) == 0 else out


def tp_bytes_per_layer(
    seq_len: ArrayLike,
    microbatch_size: ArrayLike,
    hidden: ArrayLike,
    tp_size: ArrayLike,
    bytes_per_element: ArrayLike = 2.0,
    sequence_parallel: bool = False,
    recompute: str = "none",
) -> ArrayLike:
    """Bytes one rank sends per layer per micro-batch for tensor parallelism (ring).

    Each all-reduce of ``M = s·b·h·e`` bytes sends ``2(t − 1)/t·M`` per rank; each
    all-gather or reduce-scatter ``(t − 1)/t·M``. With or without sequence parallelism
    a layer moves ``4·2(t − 1)/t·M`` (``6·…`` with full recomputation).

    Parameters
    ----------
    seq_len, microbatch_size, hidden : int or ndarray
        ``s``, ``b``, ``h``.
    tp_size : int or ndarray
        Tensor-parallel size ``t``.
    bytes_per_element : float or ndarray
        Bytes per activation element ``e``.
    sequence_parallel : bool
        Megatron sequence parallelism (same volume, different collectives).
    recompute : {"none", "selective", "full", "dots"}
        Activation recomputation.

    Returns
    -------
    float or ndarray
        Bytes per rank.

    References
    ----------
    Shoeybi et al. (2019), Sec. 3; Korthikanti et al. (2022), Sec. 4.2.2; Patarasuk &
    Yuan (2009) for the ring volumes.

    Examples
    --------
    GPT-3 layer (s = 2048, b = 1, h = 12288, bf16) on t = 8: M = 50.3 MB, 4 × 1.75 × M
    = 352.3 MB per rank.

    >>> round(tp_bytes_per_layer(2048, 1, 12288, 8) / 1e6, 1)
    352.3
    """
    counts = tp_collectives_per_layer(sequence_parallel, recompute)
    t = _f(tp_size)
    m = _f(seq_len) * _f(microbatch_size) * _f(hidden) * _f(bytes_per_element)
    per_ar = 2.0 * (t - 1.0) / t * m
    per_half = (t - 1.0) / t * m
    out = (
        counts["all_reduce"] * per_ar + (counts["all_gather"] + counts["reduce_scatter"]) * per_half
    )
    return _ret(out)


def dp_gradient_bytes(params: ArrayLike, grad_bytes_per_element: ArrayLike = 4.0) -> ArrayLike:
    """Size of the gradient buffer a data-parallel group reduces each step.

    Parameters
    ----------
    params : float or ndarray
        Parameters held by one rank (its model-parallel shard).
    grad_bytes_per_element : float or ndarray
        Bytes per gradient element in the reduction. Megatron-LM reduces bf16 training's
        gradients in fp32 (4 bytes; it forces ``accumulate_allreduce_grads_in_fp32``
        for bf16), fp16 training's in fp16 (2). FP8 compute does not change it: only
        the matmul inputs are 8-bit.

    Returns
    -------
    float or ndarray
        Bytes (the ``M`` of the all-reduce).

    References
    ----------
    Narayanan et al. (2021), SC'21, Sec. 3.3 (data-parallel gradient all-reduce);
    Micikevicius et al. (2018), "Mixed Precision Training", ICLR (fp32 master weights
    and gradient accumulation); Dubey et al. (2024), "The Llama 3 Herd of Models",
    Sec. 3.3.4 (gradients reduce-scattered in fp32).

    Examples
    --------
    A 1.75e9-parameter shard in fp32: 7 GB.

    >>> dp_gradient_bytes(1.75e9) / 1e9
    7.0
    """
    return _ret(_f(params) * _f(grad_bytes_per_element))


GRADIENT_BUCKET_MIN_PARAMS = 40_000_000
"""Smallest default gradient bucket of Megatron-Core's data-parallel wrapper, in
parameters (``DistributedDataParallelConfig.bucket_size``: ``max(40000000, 1000000 ×
dp_size)``; NVIDIA/Megatron-LM ``megatron/core/distributed/distributed_data_parallel.py``)."""

GRADIENT_BUCKET_PARAMS_PER_RANK = 1_000_000
"""Parameters Megatron-Core's default gradient bucket grows by per data-parallel rank
("larger DP sizes need larger buckets to ensure collectives do not become
latency-bound": ``DistributedDataParallelConfig.bucket_size``'s documentation)."""


def gradient_bucket_count(params: ArrayLike, dp_ranks: ArrayLike) -> ArrayLike:
    """Collectives a data-parallel gradient reduction (and, under a sharded optimizer, the
    parameter all-gather) is split into under overlapped reduction.

    To start reducing before the backward pass ends, Megatron-Core's
    ``DistributedDataParallel`` groups the parameters a rank holds into buckets and
    reduces (reduce-scatters) each bucket as one collective as soon as its gradients are
    ready; the distributed optimizer all-gathers the updated parameters bucket by bucket.
    The default bucket holds ``max(40M, 1M × dp)`` parameters, so a rank's ``Ψ``
    parameters make ``⌈Ψ / max(4·10⁷, 10⁶·dp)⌉`` collectives, each paying a ring's
    per-step latency once: bucketing trades latency for overlap.

    Parameters
    ----------
    params : float or ndarray
        Parameters one data-parallel rank holds (its tensor- and pipeline-parallel
        slice), ``Ψ``.
    dp_ranks : float or ndarray
        Ranks the gradients are reduced over (data × context parallel).

    Returns
    -------
    float or ndarray
        Buckets (count, at least 1).

    References
    ----------
    NVIDIA Megatron-LM, ``megatron/core/distributed/distributed_data_parallel.py`` and
    ``distributed_data_parallel_config.py`` (``bucket_size`` defaults to
    ``max(40000000, 1000000 * dp_size)`` parameters when ``overlap_grad_reduce`` is on;
    no bucketing without it).

    Examples
    --------
    Nemotron-4 15B on TP 8: 1.95 billion parameters a rank. Over 96 data-parallel ranks
    a bucket holds 96 M of them: 21 collectives; over 16 ranks the 40 M floor gives 49.

    >>> gradient_bucket_count(1.95e9, 96), gradient_bucket_count(1.95e9, 16)
    (21.0, 49.0)
    """
    if all_float(params, dp_ranks):
        bucket = max(float(GRADIENT_BUCKET_MIN_PARAMS), GRADIENT_BUCKET_PARAMS_PER_RANK * dp_ranks)
        return float(max(1.0, math.ceil(params / bucket)))
    psi, n = np.asarray(params, dtype=float), np.asarray(dp_ranks, dtype=float)
    bucket = np.maximum(float(GRADIENT_BUCKET_MIN_PARAMS), GRADIENT_BUCKET_PARAMS_PER_RANK * n)
    return _ret(np.maximum(1.0, np.ceil(psi / bucket)))


def zero_dp_bytes_per_rank(
    params: ArrayLike,
    dp_size: ArrayLike,
    zero_stage: ArrayLike = 0,
    grad_bytes_per_element: ArrayLike = 2.0,
    param_bytes_per_element: ArrayLike = 2.0,
) -> ArrayLike:
    """Bytes one rank sends per step (one micro-batch) for data parallelism under ZeRO.

    ====== ================================================ =========================
    stage  collectives                                        bytes per rank
    ====== ================================================ =========================
    0      all-reduce of the gradients                        ``2(n−1)/n·Ψ·g``
    1, 2   reduce-scatter gradients + all-gather parameters   ``(n−1)/n·Ψ·(g + w)``
    3      + all-gather parameters again for the backward     ``(n−1)/n·Ψ·(g + 2w)``
    ====== ================================================ =========================

    With ``g = w`` stages 0–2 move ``2Ψ`` and stage 3 ``3Ψ``: 1.5 times as much.

    Parameters
    ----------
    params : float or ndarray
        Parameters ``Ψ`` of the rank's model-parallel shard.
    dp_size : int or ndarray
        Data-parallel group size ``n``.
    zero_stage : int or ndarray
        0, 1, 2 or 3.
    grad_bytes_per_element : float or ndarray
        ``g``, bytes per reduced gradient element.
    param_bytes_per_element : float or ndarray
        ``w``, bytes per gathered parameter element.

    Returns
    -------
    float or ndarray
        Bytes per rank.

    References
    ----------
    Rajbhandari et al. (2020), "ZeRO: Memory Optimizations Toward Training Trillion
    Parameter Models", SC'20, Sec. 7 (2Ψ for DP and ZeRO-1/2, 3Ψ for ZeRO-3).

    Examples
    --------
    Ψ = 1e9 on 64 ranks in bf16: 2 × 63/64 × 1e9 × 2 bytes = 3.94 GB for stages 0–2,
    5.91 GB for stage 3.

    >>> [round(zero_dp_bytes_per_rank(1e9, 64, z) / 1e9, 2) for z in (0, 2, 3)]
    [3.94, 3.94, 5.91]
    """
    stage = _f(zero_stage)
    if np.any((stage < 0) | (stage > 3) | (stage != np.round(stage))):
        raise ParameterError("zero_stage", zero_stage, "0, 1, 2 or 3")
    n = _f(dp_size)
    psi, g, w = _f(params), _f(grad_bytes_per_element), _f(param_bytes_per_element)
    frac = (n - 1.0) / n
    out = np.where(
        stage == 0,
        2.0 * frac * psi * g,
        frac * psi * (g + np.where(stage >= 3, 2.0, 1.0) * w),
    )
    return _ret(out)


def moe_alltoall_bytes_per_layer(
    seq_len: ArrayLike,
    microbatch_size: ArrayLike,
    hidden: ArrayLike,
    experts_per_token: ArrayLike,
    ep_size: ArrayLike,
    bytes_per_element: ArrayLike = 2.0,
    tp_size: ArrayLike = 1,
    recompute: str = "none",
) -> ArrayLike:
    """Bytes one rank sends per MoE layer per micro-batch in expert-parallel all-to-alls.

    Every token goes to ``k`` experts (dispatch) and comes back (combine) in the forward
    pass; the backward pass sends the gradients the same two ways: four all-to-alls of
    ``M = s·b·k·h·e/t`` bytes per rank (tokens are split over the ``t`` tensor-parallel
    ranks for dispatch), each sending ``(n − 1)/n·M``. Full recomputation adds the two
    forward ones.

    Parameters
    ----------
    seq_len, microbatch_size, hidden : int or ndarray
        ``s``, ``b``, ``h``.
    experts_per_token : int or ndarray
        Top-``k`` routing.
    ep_size : int or ndarray
        Expert-parallel group size ``n``.
    bytes_per_element : float or ndarray
        Bytes per activation element ``e``.
    tp_size : int or ndarray
        Tensor-parallel size ``t``.
    recompute : {"none", "selective", "full", "dots"}
        Activation recomputation.

    Returns
    -------
    float or ndarray
        Bytes per rank.

    References
    ----------
    Lepikhin et al. (2021), "GShard: Scaling Giant Models with Conditional Computation
    and Automatic Sharding", ICLR, Sec. 2.2 (dispatch and combine all-to-alls);
    Fedus, Zoph & Shazeer (2022), "Switch Transformers", JMLR 23, Sec. 2.2 and Fig. 3.

    Examples
    --------
    Mixtral-like layer (s = 4096, b = 1, h = 4096, top-2) on 8 expert ranks in bf16:
    M = 67.1 MB, 4 × 7/8 × M = 234.9 MB per rank.

    >>> round(moe_alltoall_bytes_per_layer(4096, 1, 4096, 2, 8) / 1e6, 1)
    234.9
    """
    n = _f(ep_size)
    m = (
        _f(seq_len)
        * _f(microbatch_size)
        * _f(hidden)
        * _f(experts_per_token)
        * _f(bytes_per_element)
        / _f(tp_size)
    )
    passes = 3.0 if recompute_mode(recompute) == "full" else 2.0
    return _ret(2.0 * passes * (n - 1.0) / n * m)


def group_placement(
    size: ArrayLike, stride: ArrayLike, ranks_per_node: ArrayLike
) -> tuple[ArrayLike, ArrayLike]:
    """How a communication group's ranks sit on nodes: ranks per node and nodes spanned.

    A group of ``size`` ranks spaced ``stride`` apart (ranks numbered node by node)
    covers ``size·stride`` consecutive ranks. If that fits in one node of ``g`` ranks
    the whole group rides the scale-up fabric; if ``stride ≥ g`` every member is on a
    different node; otherwise ``g/stride`` members share each node.

    Parameters
    ----------
    size : int or ndarray
        Ranks in the group.
    stride : int or ndarray
        Distance between consecutive members (1 for tensor parallelism; ``t`` for the
        expert group, ``t·e`` for the data-parallel group in ``tp → ep → dp → pp``
        order).
    ranks_per_node : int or ndarray
        Accelerators per node ``g``.

    Returns
    -------
    tuple of (float or ndarray, float or ndarray)
        ``(per_node, nodes)``: members on each node, nodes spanned.

    References
    ----------
    Narayanan et al. (2021), SC'21, Sec. 3 and Fig. 11 (tensor parallelism inside a
    node, pipeline and data parallelism across nodes); Megatron-Core
    ``parallel_state`` rank order ``tp-cp-ep-dp-pp``.

    Examples
    --------
    Data-parallel group of 64 ranks at stride 8 (t = 8) on 8-GPU nodes: one member per
    node, 64 nodes. Of 16 ranks at stride 2: 4 per node, 4 nodes.

    >>> group_placement(64, 8, 8), group_placement(16, 2, 8)
    ((1.0, 64.0), (4.0, 4.0))
    """
    if all_float(size, stride, ranks_per_node):  # one solve: the same rule in plain floats
        n, st, g = size, stride, ranks_per_node
        if n * st <= g:
            return max(n, 1.0), 1.0
        per = max(min(1.0 if st >= g else math.floor(g / st), n), 1.0)
        return per, float(math.ceil(n / per))
    n, st, g = num(size), num(stride), num(ranks_per_node)  # arrays (a search)
    o = ops(n, st, g)
    inside = n * st <= g
    per_node = o.where(inside, n, o.where(st >= g, 1.0, o.floor(g / st)))
    per_node = o.max(o.min(per_node, n), 1.0)
    nodes = o.where(inside, 1.0, o.ceil(n / per_node))
    return ret(per_node), ret(nodes)
