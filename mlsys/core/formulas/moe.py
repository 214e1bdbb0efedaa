"""The work a mixture-of-experts layer adds around its expert GEMMs in training.

A dropless MoE layer with expert parallelism (Megatron-Core's all-to-all token
dispatcher) does more than its experts' matmuls: it copies every token once per chosen
expert into expert order (the *permute*), exchanges the copies with the other expert
ranks (the all-to-all, priced in :mod:`mlsys.core.formulas.collectives`), regroups the
received chunks from (source rank, expert) order into expert order when a rank holds
more than one expert (the *chunk sort*), runs the experts, and undoes each step on the
way back, the last one (the *unpermute*) summing each token's ``k`` expert outputs
weighted by its routing probabilities. These copies are memory-bound: this module
counts their bytes. The backward pass moves the same bytes in the opposite direction
(the gradient of a gather is a scatter-add and the other way round).

References
----------
Lepikhin et al. (2021), "GShard", ICLR, Sec. 2.2 (dispatch and combine around the
experts); Fedus, Zoph & Shazeer (2022), "Switch Transformers", JMLR 23, Sec. 2.1; NVIDIA
Megatron-Core, ``megatron/core/transformer/moe/token_dispatcher.py``
(``MoEAlltoAllTokenDispatcher``: permute, all-to-all, ``sort_chunks_by_idxs`` when a
rank holds several experts, and their inverses) and ``moe_utils.py`` (``permute``,
``unpermute``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "tokens_per_local_expert",
    "moe_token_shuffle_bytes",
    "MOE_LAYER_FORWARD_HOST_OPS",
    "MOE_LAYER_BACKWARD_HOST_OPS",
    "MEGATRON_HOST_TIME_PER_OP_S",
    "moe_layer_host_ops",
    "moe_layer_host_time",
]


def tokens_per_local_expert(
    tokens: Any, experts_per_token: Any, expert_parallel: Any, experts: Any
) -> Any:
    """Rows each local expert's GEMMs take under perfectly balanced routing.

    ``T`` tokens on each of ``ep`` expert ranks choose ``k`` experts each; balanced over
    ``E`` experts, every expert receives ``T·k·ep/E`` rows, and a rank holding ``E/ep``
    of them processes ``T·k`` rows in all.

    Parameters
    ----------
    tokens : float or ndarray
        Tokens ``T`` one rank routes per micro-batch.
    experts_per_token : float or ndarray
        Experts chosen per token ``k``.
    expert_parallel : float or ndarray
        Expert-parallel ranks ``ep``.
    experts : float or ndarray
        Routed experts ``E``.

    Returns
    -------
    float or ndarray
        Tokens per expert (rows of its GEMMs).

    References
    ----------
    Fedus, Zoph & Shazeer (2022), "Switch Transformers", JMLR 23, Sec. 2.1 (expert
    capacity ``tokens per batch / experts``, here times ``k`` for top-k routing).

    Examples
    --------
    Qwen3-30B-A3B (128 experts, top 8) on 8 expert ranks, 4,096 tokens each:
    4096 · 8 · 8 / 128 = 2,048 rows per expert, 16 experts per rank.

    >>> tokens_per_local_expert(4096, 8, 8, 128)
    2048.0
    """
    out = np.multiply(tokens, experts_per_token) * np.divide(expert_parallel, experts)
    return float(out) if np.ndim(out) == 0 else out


def moe_token_shuffle_bytes(
    tokens: Any,
    hidden: Any,
    experts_per_token: Any,
    bytes_per_element: Any,
    *,
    sort_chunks: Any = True,
) -> Any:
    """HBM bytes of one MoE layer's token copies in one pass (forward, or backward).

    For ``T`` tokens of width ``h`` each routed to ``k`` experts, in ``e``-byte elements:

    * permute: each of the ``T·k`` copies read and written, ``2·T·k·h·e``;
    * chunk sort after the dispatch all-to-all and its inverse before the combine (a rank
      with several experts regroups the received rows by expert): ``2 × 2·T·k·h·e``;
    * unpermute: the ``T·k`` expert outputs read and the ``T`` weighted sums written,
      ``(k + 1)·T·h·e``.

    ``(3k + 1)·T·h·e`` without the chunk sort, ``(7k + 1)·T·h·e`` with it. The backward
    pass runs the adjoint of each copy and moves the same bytes.

    Parameters
    ----------
    tokens : float or ndarray
        Tokens ``T`` the rank routes per micro-batch.
    hidden : float or ndarray
        Model width ``h``.
    experts_per_token : float or ndarray
        Experts chosen per token ``k``.
    bytes_per_element : float or ndarray
        Bytes of one activation element ``e`` (the dispatched tokens' dtype).
    sort_chunks : bool or ndarray
        The rank holds several experts and exchanges tokens with other expert ranks, so
        the received chunks are regrouped (Megatron-Core ``sort_chunks_by_idxs``).

    Returns
    -------
    float or ndarray
        Bytes read and written.

    References
    ----------
    NVIDIA Megatron-Core, ``megatron/core/transformer/moe/moe_utils.py`` (``permute``,
    ``unpermute``, ``sort_chunks_by_idxs``) and ``token_dispatcher.py``
    (``MoEAlltoAllTokenDispatcher``: the chunk sort runs when ``num_local_experts > 1``).

    Examples
    --------
    Qwen3-30B-A3B on 8 expert ranks (16 experts each): 4,096 tokens of width 2,048 in
    bf16, top 8: (7·8 + 1) · 4096 · 2048 · 2 = 956 MB a pass.

    >>> round(moe_token_shuffle_bytes(4096, 2048, 8, 2) / 1e6, 1)
    956.3
    >>> round(moe_token_shuffle_bytes(4096, 2048, 8, 2, sort_chunks=False) / 1e6, 1)
    419.4
    """
    k = experts_per_token
    copies = 3.0 * k + 1.0 + 4.0 * k * np.where(sort_chunks, 1.0, 0.0)
    out = copies * tokens * hidden * bytes_per_element
    return float(out) if np.ndim(out) == 0 else out


# -- the host's work in a MoE layer ------------------------------------------------------

MOE_LAYER_FORWARD_HOST_OPS: tuple[tuple[str, int, int, str, bool], ...] = (
    ("attention block: fused norm, quantise and QKV GEMM, QK norms, rotary, attention, "
     "output projection, residual, norm", 19, 0, "attn", False),
    ("router: gating GEMM, top-k, auxiliary-loss scores and loss", 9, 0, "moe_router", False),
    ("dispatcher preprocessing: token counts and their all-gather", 7, 0, "moe_preprocess",
     False),
    ("token counts copied to the host: copies, event record and the blocking wait", 5, 0, "",
     False),
    ("permute: row map and gather", 4, 0, "", False),
    ("dispatch all-to-alls: tokens and routing probabilities", 2, 0, "", False),
    ("chunk sort", 2, 0, "", False),
    ("expert fc1: a GEMM per local expert", 0, 1, "", False),
    ("expert fc1: an FP8 quantisation per local expert, two scale swizzles", 2, 1, "", True),
    ("weighted SwiGLU", 2, 0, "", False),
    ("expert fc2: a GEMM per local expert", 0, 1, "", False),
    ("expert fc2: an FP8 quantisation per local expert, two scale swizzles", 2, 1, "", True),
    ("chunk unsort", 3, 0, "", False),
    ("combine all-to-all", 1, 0, "", False),
    ("unpermute and residual", 2, 0, "", False),
)  # fmt: skip
"""Operations the host issues for one Megatron-Core MoE layer's forward pass, per
micro-batch: ``(stage, fixed count, count per local expert, CUDA-graph scope that
captures it, whether only FP8 GEMMs run it)``. Counted from
Megatron-Core's ``TransformerLayer`` with Transformer Engine modules, ``TopKRouter``,
``MoEAlltoAllTokenDispatcher`` (with fused permutation) and ``TEGroupedMLP``, whose
``GroupedLinear`` quantises each expert's input and launches one GEMM per expert
(MXFP8; Megatron-LM and TransformerEngine sources, late 2025). ``60 + 4N`` for ``N``
local experts with FP8 GEMMs, ``56 + 2N`` without their quantisations and scale
swizzles. The dispatcher's blocking wait for the token counts is the fourth stage."""

MOE_LAYER_BACKWARD_HOST_OPS: tuple[tuple[str, int, int, str, bool], ...] = (
    ("attention block gradients", 29, 0, "attn", False),
    ("router gradients", 8, 0, "moe_router", False),
    ("unpermute gradient (a permute)", 1, 0, "", False),
    ("combine and dispatch all-to-alls", 2, 0, "", False),
    ("chunk sort and unsort gradients", 2, 0, "", False),
    ("expert fc2: data and weight GEMMs per local expert", 0, 2, "", False),
    ("expert fc2: a gradient quantisation per local expert, scale swizzles", 4, 1, "", True),
    ("weighted SwiGLU gradient", 2, 0, "", False),
    ("expert fc1: data and weight GEMMs per local expert", 0, 2, "", False),
    ("expert fc1: a gradient quantisation per local expert, scale swizzles", 4, 1, "", True),
    ("permute gradient (an unpermute), residual gradient", 2, 0, "", False),
    ("weight-gradient accumulation", 2, 0, "", False),
)  # fmt: skip
"""Operations of the same layer's backward pass: ``56 + 6N`` with FP8 GEMMs, ``48 + 4N``
without. No host-device
synchronisation: the split sizes are kept on the host from the forward pass."""

MEGATRON_HOST_TIME_PER_OP_S = 27e-6
"""Host time per operation of a Megatron-Core layer with Transformer Engine modules, in
seconds: the Python of the framework and its modules, PyTorch's dispatch and autograd
bookkeeping, and the launch itself, averaged over a layer's operations.

Derived from one measurement: Megatron-Bridge's CUDA-graph guide (``docs/training/
cuda-graphs.md``, commit 247a7ab) measured Qwen3-30B-A3B on H100s (TP 2, PP 2, EP 4,
micro-batch 1, global batch 8: two micro-batches, 24 layers per stage) at 623 ms a step
in eager mode and 484 ms with the attention, router and dispatcher preprocessing of
every layer replayed from CUDA graphs. Replay removes those parts' host work, so the
139 ms saved is their host time on the critical path: (m + p − 1) = 3 stage passes of
24 layers, 1.93 ms per layer and micro-batch for the 72 operations the graphs cover
(attention 19 + 29, router 9 + 8, preprocessing 7; :data:`MOE_LAYER_FORWARD_HOST_OPS`,
:data:`MOE_LAYER_BACKWARD_HOST_OPS`): 26.8 µs each. Four to five times a bare PyTorch
launch (4.7 µs, Ma et al. 2026, "TaxBreak", arXiv:2603.12465, on an H100 host):
Transformer Engine's modules spend most of their host time in Python (TransformerEngine
issue 761: an FP8 ``te.Linear`` takes twice a bf16 one's host time).

Caveats: the guide does not state the run's precision or sequence length, and its
TFLOP/s figures (214 → 274) do not match its step times at 4,096 tokens (they would
imply 2.8 times Qwen3-30B-A3B's 23 GFLOP a token), so only the step times are used. With
this constant mlsys prices the eager run at 780 ms (bf16, 4,096 tokens), 25% slower than
measured: the per-expert GEMM launches, issued from C++ inside Transformer Engine's grouped
GEMM, may cost the host less than an average operation (a cuBLAS launch is 6.6 µs in
TaxBreak), while Megatron-Bridge's B200 row of the same model is 25% faster in mlsys than
measured; one average per operation is what the evidence supports."""


def moe_layer_host_ops(
    local_experts: Any,
    phase: str = "forward",
    graphed: tuple[str, ...] = (),
    *,
    fp8: bool = True,
) -> Any:
    """Operations the host issues for one MoE layer and micro-batch in one pass.

    The stages a CUDA graph replays (Megatron-Core's ``cuda_graph_scope``: ``"attn"``,
    ``"moe_router"``, ``"moe_preprocess"``) cost the host nothing per step; a
    ``"full_iteration"`` graph captures everything.

    Parameters
    ----------
    local_experts : float or ndarray
        Experts held by one rank, ``E/ep``.
    phase : {"forward", "backward"}
        Which pass.
    graphed : tuple of str
        CUDA-graph scopes replayed (:data:`mlsys.core.layout.CUDA_GRAPH_SCOPES`).
    fp8 : bool
        The expert GEMMs run in FP8 on 16-bit activations, so each expert's inputs and
        gradients are quantised first (and their scales swizzled); False for 16-bit
        GEMMs.

    Returns
    -------
    float or ndarray
        Operations (:data:`MOE_LAYER_FORWARD_HOST_OPS`, :data:`MOE_LAYER_BACKWARD_HOST_OPS`).

    References
    ----------
    NVIDIA Megatron-Core ``megatron/core/transformer/moe/`` (``router.py``,
    ``token_dispatcher.py``, ``experts.py``) and TransformerEngine
    ``transformer_engine/pytorch/module/grouped_linear.py``.

    Examples
    --------
    Sixteen local experts (Qwen3-30B-A3B on 8 expert ranks): 60 + 4·16 = 124 forward,
    56 + 6·16 = 152 backward.

    >>> moe_layer_host_ops(16), moe_layer_host_ops(16, "backward")
    (124.0, 152.0)

    With attention, router and preprocessing graphed (Megatron-Bridge's MoE recipes):
    124 − 35 = 89 forward, 152 − 37 = 115 backward.

    >>> moe_layer_host_ops(16, graphed=("attn", "moe_router", "moe_preprocess"))
    89.0

    With bf16 GEMMs nothing is quantised: 56 + 2·16 = 88 forward, 48 + 4·16 = 112 backward.

    >>> moe_layer_host_ops(16, fp8=False), moe_layer_host_ops(16, "backward", fp8=False)
    (88.0, 112.0)
    """
    if phase not in ("forward", "backward"):
        raise ValueError(f"phase must be 'forward' or 'backward', not {phase!r}")
    ops = MOE_LAYER_FORWARD_HOST_OPS if phase == "forward" else MOE_LAYER_BACKWARD_HOST_OPS
    if "full_iteration" in graphed:
        return 0.0 * np.asarray(local_experts, dtype=float) if np.ndim(local_experts) else 0.0
    eager = [op for op in ops if op[3] not in graphed and (fp8 or not op[4])]
    fixed = float(sum(op[1] for op in eager))
    per_expert = float(sum(op[2] for op in eager))
    out = fixed + per_expert * np.asarray(local_experts, dtype=float)
    return float(out) if np.ndim(out) == 0 else out


def moe_layer_host_time(
    local_experts: Any,
    device_backward_s: Any,
    *,
    host_time_per_op_s: Any = MEGATRON_HOST_TIME_PER_OP_S,
    forward_passes: Any = 1.0,
    graphed: tuple[str, ...] = (),
    fp8: bool = True,
) -> Any:
    """Time a MoE layer's host work adds to its device work, per micro-batch.

    Megatron-Core's dropless token dispatcher needs each expert's token count on the host
    to size the all-to-all, so every MoE layer's forward pass blocks on a device-to-host
    copy after routing (``MoEAlltoAllTokenDispatcher``, sync point
    ``"before_ep_alltoall"``). The wait drains the device, and the operations issued
    after it reach an idle device one at a time: the host cannot run ahead of the device
    by more than a layer, and a forward pass costs its host time plus its device time.
    The backward pass has no such wait: the host runs ahead and only host time beyond
    the device time shows, ``max(0, H_b − G_b)``.

    ``forward_passes`` counts the forward runs (2 when full recomputation reruns it).

    Parameters
    ----------
    local_experts : float or ndarray
        Experts held by one rank, ``E/ep``.
    device_backward_s : float or ndarray
        Device time of the layer's backward pass, in seconds (the forward's host work
        adds to its device time whatever its size).
    host_time_per_op_s : float or ndarray
        Host time per operation, in seconds (:data:`MEGATRON_HOST_TIME_PER_OP_S`).
    forward_passes : float or ndarray
        Forward passes per micro-batch.
    graphed : tuple of str
        CUDA-graph scopes replayed, whose host work is gone (:func:`moe_layer_host_ops`).
    fp8 : bool
        FP8 expert GEMMs, with their per-expert quantisations (:func:`moe_layer_host_ops`).

    Returns
    -------
    float or ndarray
        Seconds added to the layer's device time per micro-batch.

    References
    ----------
    NVIDIA Megatron-Core ``megatron/core/transformer/moe/token_dispatcher.py`` (the
    device-to-host copy of the token counts and its synchronisation) and
    ``README.md`` ("CPU overhead": gaps between kernels in MoE layers; CUDA graphs and
    larger micro-batches as the remedies); Megatron-Bridge ``docs/training/
    cuda-graphs.md`` (:data:`MEGATRON_HOST_TIME_PER_OP_S`).

    Examples
    --------
    Sixteen local experts and 1.7 ms of device work backward: 124 ops × 27 µs =
    3.35 ms forward, 152 × 27 µs = 4.10 ms backward of which 2.40 ms beyond the
    device's: 5.75 ms.

    >>> round(moe_layer_host_time(16, 1.7e-3) * 1e3, 2)
    5.75
    """
    fwd = moe_layer_host_ops(local_experts, "forward", graphed, fp8=fp8) * host_time_per_op_s
    bwd = moe_layer_host_ops(local_experts, "backward", graphed, fp8=fp8) * host_time_per_op_s
    out = forward_passes * fwd + np.maximum(bwd - device_backward_s, 0.0)
    return float(out) if np.ndim(out) == 0 else out
