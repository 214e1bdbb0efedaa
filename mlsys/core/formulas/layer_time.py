"""Time of one transformer layer on one device, operator by operator.

A layer is a sequence of kernels that each wait for the previous one, so its time is the
**sum** of the kernels' times, each its own roofline — not one roofline of the layer's
total FLOPs and bytes, which would let a memory-bound norm hide under a compute-bound
GEMM. The kernels:

* four linear layers (QKV, output projection, MLP up/gate, MLP down) as GEMMs of the
  tokens by the weight shard (:func:`mlsys.core.formulas.gemm.gemm_time`: tile and wave
  quantisation, per-GEMM roofline); a backward pass runs each twice, for the data
  gradient ``[M×N]·[N×K]`` and the weight gradient ``[K×M]·[M×N]``;
* attention, fused or not (:func:`mlsys.core.formulas.gemm.attention_time`);
* memory-bound element-wise kernels: two norms, two residual adds and the activation,
  streaming ``(10·h + a·f)`` elements per token (``a = 3`` for a gated MLP, which reads
  two inputs and writes one, ``2`` otherwise; ``h`` divided by the tensor-parallel
  degree under sequence parallelism); a backward pass streams about twice as much;
* a fixed time per kernel (:mod:`mlsys.core.formulas.overheads`).

Tensor-parallel communication is not included (it is a collective on the scale-up
fabric; see :mod:`mlsys.core.formulas.collectives` and
:mod:`mlsys.core.formulas.overlap`).

References
----------
Shoeybi et al. (2019), "Megatron-LM", arXiv:1909.08053, Sec. 3 (how tensor parallelism
splits the four GEMMs of a layer).
Korthikanti et al. (2022), "Reducing Activation Recomputation in Large Transformer
Models", arXiv:2205.05198, Sec. 4 (sequence parallelism splits the norms and dropouts).
Williams, Waterman & Patterson (2009), "Roofline", CACM 52(4).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np

from mlsys.core.formulas._ops import ops
from mlsys.core.formulas.gemm import (
    FLASH_ATTENTION_BACKWARD_FRACTION,
    FLASH_ATTENTION_FORWARD_FRACTION,
    attention_time,
    gemm_time,
)
from mlsys.core.formulas.overheads import KERNEL_OVERHEAD_S, kernels_per_layer

__all__ = [
    "ELEMENTWISE_HIDDEN_PASSES",
    "FP8_CURRENT_SCALING_CAST_BYTES",
    "FP8_STATIC_SCALING_CAST_BYTES",
    "fp8_cast_bytes",
    "fsdp_flat_gradient_bytes",
    "fsdp_per_parameter_copy_bytes",
    "gradient_accumulation_bytes",
    "rotary_embedding_bytes",
    "ring_attention_merge_bytes",
    "LAYER_KERNELS",
    "linear_gemm_times",
    "linear_layers_time",
    "materialized_attention_time",
    "output_layer_time",
    "transformer_layer_kernel_times",
    "transformer_layer_time",
]

ELEMENTWISE_HIDDEN_PASSES = 10.0
"""Width-``h`` element reads and writes per token of a layer's element-wise kernels:
each of the two norms reads and writes the hidden state (2 × 2) and each of the two
residual adds reads two and writes one (2 × 3)."""

_PHASES = ("inference", "forward", "backward")
# a denominator for "per token" that an empty batch cannot make zero (any real count is larger)
_NO_TOKENS = 1e-300

FP8_CURRENT_SCALING_CAST_BYTES = 6.0
"""Bytes moved per element to hand a 16-bit tensor to an FP8 GEMM under per-tensor
current scaling: an amax pass reads it (2), the cast reads it again (2) and writes the
FP8 copy (1) and its transpose (1), which the backward GEMMs need because Hopper's FP8
tensor cores take only the TN layout (NVIDIA Transformer Engine documentation, "Using
FP8 with Transformer Engine": Float8CurrentScaling computes the scale from the tensor's
own amax; fused cast-transpose kernels)."""


FP8_STATIC_SCALING_CAST_BYTES = 3.0
"""Bytes moved per element to quantise a 16-bit activation for an FP8 GEMM in inference:
the quantise kernel reads it (2) and writes the FP8 copy (1) with a scale calibrated
offline, so no amax pass and no transposed copy (inference has no backward GEMMs)
(NVIDIA TensorRT-LLM documentation, "Numerical Precision": FP8 per-tensor scaling with
static activation scales; Micikevicius et al. 2022, arXiv:2209.05433)."""


def _kv_heads_per_device(kv_heads: Any, tp: Any) -> Any:
    """Key/value heads on one device: split by tp, one replica each when tp exceeds them."""
    per = kv_heads / tp
    if type(per) is float:
        return per if per > 1.0 else 1.0
    return np.maximum(per, 1.0)


def _attention_widths(heads: Any, kv_heads: Any, head_dim: Any, tp: Any) -> tuple[Any, Any]:
    """Query and key/value widths on one device, in elements: ``n_h·d/t`` and
    ``max(n_kv/t, 1)·d``."""
    return heads / tp * head_dim, _kv_heads_per_device(kv_heads, tp) * head_dim


def _block_width(hidden: Any, tp: Any, sequence_parallel: Any) -> Any:
    """Width of a block-boundary tensor on one device, in elements: ``h/t`` under
    sequence parallelism (Korthikanti et al. 2022), ``h`` otherwise."""
    if type(sequence_parallel) in (bool, float, int):
        return hidden / tp if sequence_parallel else hidden
    return np.where(sequence_parallel, hidden / tp, hidden)


def fp8_cast_bytes(
    tokens: Any,
    hidden: Any,
    heads: Any,
    kv_heads: Any,
    head_dim: Any,
    ffn_hidden: Any,
    gated_mlp: Any,
    tp: Any,
    sequence_parallel: Any = 0.0,
    backward: bool = False,
    bytes_per_element: Any = FP8_CURRENT_SCALING_CAST_BYTES,
) -> Any:
    """HBM bytes one device moves to cast the operands of a layer's FP8 GEMMs.

    Forward, each of the four linear layers casts its input: the hidden state before QKV
    and MLP-up (``h`` per token, ``h/t`` under sequence parallelism, where the cast
    precedes the all-gather), the attention output before the output projection
    (``q/t``) and the MLP activation before MLP-down (``f/t``). Backward, each casts the
    gradient of its output: ``(q + 2kv)/t``, ``h`` (or ``h/t``), ``a·f/t``, ``h`` (or
    ``h/t``). Each element costs ``bytes_per_element``
    (:data:`FP8_CURRENT_SCALING_CAST_BYTES`).

    Parameters
    ----------
    tokens : float or ndarray
        Tokens through the layer on this device.
    hidden : float or ndarray
        Model width ``h``.
    heads, kv_heads : float or ndarray
        Query and key/value heads of the layer.
    head_dim : float or ndarray
        Head dimension.
    ffn_hidden : float or ndarray
        MLP inner width ``f``.
    gated_mlp : bool or float
        SwiGLU-style MLP (its up projection has ``2f`` outputs).
    tp : float or ndarray
        Tensor-parallel degree ``t``.
    sequence_parallel : bool or float or ndarray
        Megatron sequence parallelism.
    backward : bool
        The backward pass's casts instead of the forward's.
    bytes_per_element : float or ndarray
        Bytes moved per cast element.

    Returns
    -------
    float or ndarray
        Bytes.

    References
    ----------
    Micikevicius et al. (2022), "FP8 Formats for Deep Learning", arXiv:2209.05433
    (per-tensor scaled FP8 GEMM operands); NVIDIA Transformer Engine documentation,
    "Using FP8 with Transformer Engine" (scaling recipes, cast-transpose).

    Examples
    --------
    Llama 3 8B (h 4096, 32 heads and 8 KV heads of 128, gated MLP of 14336) on one GPU,
    8192 tokens: the forward casts 4096 + 4096 + 4096 + 14336 = 26,624 elements per
    token at 6 bytes: 1.31 GB, 0.46 ms at 2.85 TB/s — beside 2.8 ms of FP8 GEMMs.

    >>> round(fp8_cast_bytes(8192, 4096, 32, 8, 128, 14336, True, 1) / 1e9, 2)
    1.31
    """
    q, kv = _attention_widths(heads, kv_heads, head_dim, tp)
    f = ffn_hidden / tp
    h_in = _block_width(hidden, tp, sequence_parallel)
    if backward:
        elements = (q + 2.0 * kv) + h_in + (2.0 * f if gated_mlp else f) + h_in
    else:
        elements = h_in + q + h_in + f
    out = tokens * elements * bytes_per_element
    return float(out) if np.ndim(out) == 0 else out


def rotary_embedding_bytes(
    tokens: Any, heads: Any, kv_heads: Any, head_dim: Any, tp: Any, bytes_per_element: Any
) -> Any:
    """HBM bytes one device moves to rotate the queries and keys of one layer (RoPE).

    Rotary position embedding multiplies each query and key vector by a position-
    dependent rotation after the QKV projection (Su et al. 2021): an element-wise kernel
    that reads the local query and key heads and writes them back, ``2·(q + kv)·e``
    bytes per token with ``q = n_h·d/t`` and ``kv = max(n_kv/t, 1)·d``. Its backward
    rotates the gradients the same way (the same bytes again). Values are not rotated.

    Parameters
    ----------
    tokens : float or ndarray
        Tokens through the layer on this device.
    heads, kv_heads : float or ndarray
        Query and key/value heads of the layer.
    head_dim : float or ndarray
        Head dimension ``d``.
    tp : float or ndarray
        Tensor-parallel degree.
    bytes_per_element : float or ndarray
        Bytes of one activation element.

    Returns
    -------
    float or ndarray
        Bytes per pass.

    References
    ----------
    Su et al. (2021), "RoFormer: Enhanced Transformer with Rotary Position Embedding",
    arXiv:2104.09864, Sec. 3.4 (the rotation of queries and keys); NVIDIA Megatron-Core
    ``apply_rotary_pos_emb`` (one fused kernel each for the query and key tensors).

    Examples
    --------
    Llama 3 8B (32 query heads, 8 KV heads of 128) on one GPU, 8192 tokens:
    2 · (4096 + 1024) · 2 bytes · 8192 = 167.8 MB per layer and pass.

    >>> round(rotary_embedding_bytes(8192, 32, 8, 128, 1, 2.0) / 1e6, 1)
    167.8
    """
    q, kv = _attention_widths(heads, kv_heads, head_dim, tp)
    out = 2.0 * tokens * (q + kv) * bytes_per_element
    return float(out) if np.ndim(out) == 0 else out


def gradient_accumulation_bytes(
    params: Any, grad_bytes_per_element: Any, accumulator_bytes_per_element: Any
) -> Any:
    """HBM bytes one device moves to add one micro-batch's weight gradients into the
    gradient-accumulation buffer with a separate kernel.

    Without a fused weight-gradient GEMM, each micro-batch's backward pass writes every
    weight gradient at the compute precision and an element-wise kernel then adds it
    into the buffer that is reduced across data-parallel ranks: it reads the new
    gradient and the buffer and writes the buffer, ``e_g + 2·e_acc`` bytes per
    parameter (Megatron-LM 2021's local DDP runs ``param.main_grad.add_(param.grad)``
    in a hook after every backward; PyTorch autograd accumulates ``.grad`` in place;
    DeepSpeed's bf16 optimizer adds the 16-bit gradient into an fp32 copy). Gradient-
    accumulation fusion (Megatron-LM's ``--gradient-accumulation-fusion``, absent from
    its 2021 v2.x code and on by default in Megatron-Core; NeMo since July 2022) lets
    the weight-gradient GEMM accumulate into the buffer in its epilogue (``beta = 1``),
    where the traffic hides under the compute-bound GEMM: no separate cost.

    Parameters
    ----------
    params : float or ndarray
        Parameters whose gradients this device accumulates.
    grad_bytes_per_element : float or ndarray
        Bytes of one freshly computed gradient element (the compute precision, 2).
    accumulator_bytes_per_element : float or ndarray
        Bytes of one element of the accumulation buffer (2 for fp16, 4 for fp32).

    Returns
    -------
    float or ndarray
        Bytes per micro-batch.

    References
    ----------
    NVIDIA Megatron-LM (2021, v2.x), ``megatron/model/distributed.py``,
    ``DistributedDataParallel._make_param_hook`` (``main_grad.add_``); Megatron-LM
    ``megatron/core/tensor_parallel/layers.py``,
    ``LinearWithGradAccumulationAndAsyncCommunication`` (the fused ``wgrad`` GEMM that
    accumulates into ``main_grad``); NVIDIA NeMo pull request 4494 (2022), "Gradient
    Accumulation fusion to Linear layer weight gradient computation"; AMD Primus pull
    request 995 (2026), which measures the unfused path as "an extra full-size
    read-modify-write of main_grad per microbatch"; Li et al. (2020), "PyTorch
    Distributed", VLDB 13(12) (gradients accumulate in place across ``no_sync``
    iterations).

    Examples
    --------
    A 530B model on TP 8 × PP 35 holds 1.89e9 parameters per GPU; fp16 gradients into an
    fp16 buffer move 6 bytes each: 11.4 GB per micro-batch, 6.5 ms at 2.039 TB/s × 0.85 —
    about 4 % of that GPU's 170 ms micro-batch.

    >>> round(gradient_accumulation_bytes(1.893e9, 2.0, 2.0) / 1e9, 1)
    11.4
    """
    out = params * (grad_bytes_per_element + 2.0 * accumulator_bytes_per_element)
    return float(out) if np.ndim(out) == 0 else out


def ring_attention_merge_bytes(
    query_elements: Any,
    kv_elements: Any,
    cp_size: Any,
    bytes_per_element: Any,
    recompute: Any = 0.0,
) -> Any:
    """HBM bytes one device moves per layer and micro-batch to merge the partial results
    of a context-parallel attention ring.

    A ring of ``cp`` ranks computes a rank's attention in ``cp`` steps, one fused kernel
    per K/V block, each writing its own partial output and log-sum-exp. Transformer
    Engine's ring then merges them with element-wise kernels outside the attention
    kernel: the first step's partial output becomes the running output (a read and a
    write, two passes) and every later step's is rescaled by its log-sum-exp and added in
    (a read of the partial, a read and a write of the output: three passes). Backward is
    the same for the gradients: each step's kernel writes its own ``dQ`` and ``dK, dV``,
    which are copied (first step, two passes) or added (three passes) into the
    accumulators the ring sends on. With the load-balanced split (the sequence in
    ``2·cp`` chunks, two per rank) the busiest rank, the last, attends with all its
    queries to the first half of every earlier rank's block, so its later steps cover
    all of ``Q`` and half of ``K, V``:

    ``bytes = e · [(2 + r)·Q·(2 + 3·(cp − 1)) + KV·(2 + 1.5·(cp − 1))]``

    with ``r = 1`` when a full recomputation runs the forward again; zero without a ring
    (``cp = 1``: the kernel writes ``O`` and ``dQ, dK, dV`` in place). The log-sum-exp
    updates (one fp32 value per query row and head) are left out.

    Parameters
    ----------
    query_elements : float or ndarray
        Elements of the device's queries, ``b·(s/cp)·a·d/t`` (the output has as many).
    kv_elements : float or ndarray
        Elements of the device's keys and values together, ``2·b·(s/cp)·a_kv·d/t``.
    cp_size : float or ndarray
        Context-parallel ranks of the ring.
    bytes_per_element : float or ndarray
        Bytes of one activation element (2 for bf16).
    recompute : float or ndarray
        1 when a full recomputation runs the forward pass again, else 0.

    Returns
    -------
    float or ndarray
        Bytes per layer and micro-batch.

    References
    ----------
    NVIDIA Transformer Engine, ``transformer_engine/pytorch/attention/dot_product_attention/
    context_parallel.py``, ``AttnFuncWithCPAndKVP2P`` (per-step partial outputs merged by
    ``flash_attn_fwd_out_correction``; ``dq`` and ``dkv`` accumulated step by step);
    Liu, Zaharia & Abbeel (2023), "Ring Attention with Blockwise Transformers",
    arXiv:2310.01889, Sec. 3 (blockwise attention merged by log-sum-exp); Dubey et al.
    (2024), "The Llama 3 Herd of Models", arXiv:2407.21783, Sec. 3.3.2 (the ``2·cp``-chunk
    load balance).

    Examples
    --------
    Llama 3.1 8B (32 heads and 8 key-value heads of 128) with one 8,192-token sequence
    on a ring of two, tensor parallelism 1: each rank holds 4,096 tokens, ``Q`` =
    4,096 × 4,096 = 16.8 M elements, ``K, V`` = 2 × 4,096 × 1,024 = 8.4 M. Forward
    5·Q, backward 5·Q + 3.5·KV: 197.1 M bf16 elements, 394.3 MB a layer — 0.15 ms at
    2.7 TB/s, about 2% of that layer's forward and backward on an H100.

    >>> round(ring_attention_merge_bytes(4096 * 4096, 2 * 4096 * 1024, 2, 2.0) / 1e6, 1)
    394.3
    >>> ring_attention_merge_bytes(4096 * 4096, 2 * 4096 * 1024, 1, 2.0)
    0.0
    """
    later = cp_size - 1.0
    ring = (cp_size > 1.0) * 1.0
    q_passes = (2.0 + recompute) * (2.0 + 3.0 * later)
    kv_passes = 2.0 + 1.5 * later
    out = ring * bytes_per_element * (query_elements * q_passes + kv_elements * kv_passes)
    return float(out) if np.ndim(out) == 0 else out


def fsdp_flat_gradient_bytes(params: Any, grad_bytes_per_element: Any) -> Any:
    """HBM bytes PyTorch FSDP's flat parameters add to one micro-batch's backward pass.

    FSDP (PyTorch's ``FullyShardedDataParallel`` and fairscale's before it) keeps each
    wrapped unit's parameters in one flat tensor and hands the module views of it
    (``FlatParamHandle._use_unsharded_views``: ``torch.split`` of the flat parameter, one
    ``view`` per original parameter). Autograd therefore assembles the unit's gradient
    from the views' gradients with the backward of the split, a concatenation that reads
    and writes every element (``2·e`` bytes), and the reduce-scatter hook divides it in
    place by the pre-divide factor before reducing it (``grad.div_``, again ``2·e``):
    ``4·e`` bytes per parameter the device holds unsharded, every micro-batch. Megatron's
    gradient buffers, which the weight-gradient GEMMs write into, have neither pass.

    Parameters
    ----------
    params : float or ndarray
        Parameters the device holds unsharded during the backward pass (its tensor- and
        pipeline-parallel share of the model, before data-parallel sharding).
    grad_bytes_per_element : float or ndarray
        Bytes of one gradient element as autograd produces it (the parameters' compute
        dtype: 2 for bf16/fp16).

    Returns
    -------
    float or ndarray
        Bytes per micro-batch.

    References
    ----------
    PyTorch ``torch/distributed/fsdp/flat_param.py``, ``FlatParamHandle._get_unflat_views``
    and ``_use_unsharded_views`` ("setting the original module parameter variables to be
    views into it"); ``torch/distributed/fsdp/_runtime_utils.py``,
    ``_post_backward_hook`` (``flat_param.grad`` handed to the communication hook);
    ``torch/distributed/algorithms/_comm_hooks/default_hooks.py``,
    ``reduce_scatter_hook`` (``grad.div_(gradient_predivide_factor)`` before the
    reduce-scatter; the factor exceeds 1 for every world size above 1). Zhao et al.
    (2023), "PyTorch FSDP: Experiences on Scaling Fully Sharded Data Parallel", VLDB
    16(12), Sec. 3.2 (FlatParameter).

    Examples
    --------
    MPT-13B (12.85e9 parameters) on eight GPUs, bf16: 103 GB a micro-batch, 59 ms at an
    A100's 2.039 TB/s x 0.85.

    >>> round(fsdp_flat_gradient_bytes(12.85e9, 2.0) / 1e9)
    103
    """
    out = 4.0 * grad_bytes_per_element * params
    return float(out) if np.ndim(out) == 0 else out


def fsdp_per_parameter_copy_bytes(
    params: Any,
    param_bytes_per_element: Any,
    grad_bytes_per_element: Any,
    reduce_bytes_per_element: Any,
    all_gathers: Any,
) -> Any:
    """HBM bytes PyTorch FSDP2's per-parameter sharding adds to one micro-batch.

    FSDP2 (``fully_shard``) keeps each parameter a sharded tensor of its own. An
    all-gather runs into one flat buffer, and the copy-out then copies every gathered
    parameter into its own unsharded tensor (``split_with_sizes_copy``, or a ``cat`` of
    its shards in the first releases): ``2·e_p`` bytes per parameter, once per
    all-gather (twice a micro-batch when the block reshards after the forward, ZeRO-3;
    once without). Before the reduce-scatter, the copy-in concatenates the unsharded
    gradients into the reduce-scatter buffer in the reduce dtype (``e_g`` read, ``e_r``
    written; fp32 under torchtitan's default mixed precision), and the compute stream
    waits for it before it frees the gradients. All of it on the device's unsharded
    share of the model, every micro-batch.

    Parameters
    ----------
    params : float or ndarray
        Parameters the device holds unsharded (its tensor- and pipeline-parallel share
        of the model, before data-parallel sharding).
    param_bytes_per_element : float or ndarray
        Bytes of one all-gathered parameter element (the mixed-precision ``param_dtype``:
        2 for bf16).
    grad_bytes_per_element : float or ndarray
        Bytes of one gradient element as autograd produces it (the ``param_dtype``).
    reduce_bytes_per_element : float or ndarray
        Bytes of one element of the reduce-scatter buffer (``reduce_dtype``: 4 for fp32).
    all_gathers : float or ndarray
        Parameter all-gathers per micro-batch (2 with ``reshard_after_forward``, else 1).

    Returns
    -------
    float or ndarray
        Bytes per micro-batch.

    References
    ----------
    PyTorch ``torch/distributed/_composable/fsdp/_fsdp_collectives.py`` (2024):
    ``foreach_all_gather_copy_out`` (the gathered flat buffer copied into each
    parameter's unsharded data) and ``foreach_reduce_scatter_copy_in`` (the gradients
    concatenated into a new buffer of ``reduce_dtype``; ``current_stream.wait_event``
    on the copy-in before the gradients are freed); PyTorch documentation,
    ``torch.distributed.fsdp.fully_shard`` and ``MixedPrecisionPolicy``; Liang et al.
    (2024), "TorchTitan", arXiv:2410.06511, Sec. 2.1 (FSDP2's per-parameter sharding).

    Examples
    --------
    Llama 2 13B (13.0e9 parameters) on one FSDP rank, bf16 parameters, fp32 reduction,
    resharded after the forward: 13.0e9 × (2 × 4 + 2 + 4) = 182 GB a micro-batch, 105 ms
    at an A100's 2.039 TB/s × 0.85.

    >>> round(fsdp_per_parameter_copy_bytes(13.0e9, 2.0, 2.0, 4.0, 2) / 1e9)
    182
    """
    out = params * (
        all_gathers * 2.0 * param_bytes_per_element
        + grad_bytes_per_element
        + reduce_bytes_per_element
    )
    return float(out) if np.ndim(out) == 0 else out


def linear_layers_time(
    tokens: Any,
    hidden: Any,
    heads: Any,
    kv_heads: Any,
    head_dim: Any,
    ffn_hidden: Any,
    gated_mlp: Any,
    tp: Any,
    achievable_flops: Any,
    bandwidth_Bps: Any,
    bytes_per_element: Any,
    *,
    sm_count: Any = None,
    backward: bool = False,
    weight_bytes_per_element: Any = None,
    experts_run: Any = 1.0,
    ffn_tokens: Any = None,
) -> Any:
    """Seconds of the four linear layers of one transformer layer on one device.

    Megatron tensor parallelism splits the QKV and MLP-up projections by columns and the
    output and MLP-down projections by rows, so with ``t`` devices the forward GEMMs are
    ``[T × h]·[h × (q + 2kv)/t]``, ``[T × q/t]·[q/t × h]``, ``[T × h]·[h × a·f/t]`` and
    ``[T × f/t]·[f/t × h]`` (``a = 2`` for a gated MLP), each priced by
    :func:`mlsys.core.formulas.gemm.gemm_time`. The backward pass runs each linear layer's
    data gradient ``[T × N]·[N × K]`` and weight gradient ``[K × T]·[T × N]``.

    Parameters
    ----------
    tokens : float or ndarray
        Tokens ``T`` through the layer on this device.
    hidden : float or ndarray
        Model width ``h``.
    heads, kv_heads : float or ndarray
        Query and key/value heads of the whole layer.
    head_dim : float or ndarray
        Head dimension.
    ffn_hidden : float or ndarray
        MLP inner width (of one expert, for a mixture of experts).
    gated_mlp : bool or float
        SwiGLU-style MLP (truthy) or not.
    tp : float or ndarray
        Tensor-parallel degree.
    achievable_flops : float or ndarray
        Dense peak × compute efficiency, in FLOP/s.
    bandwidth_Bps : float or ndarray
        Achievable memory bandwidth, in bytes per second.
    bytes_per_element : float or ndarray
        Bytes of one activation element.
    sm_count : int or ndarray, optional
        Streaming multiprocessors (wave quantisation).
    backward : bool
        The backward GEMMs instead of the forward ones.
    weight_bytes_per_element : float or ndarray, optional
        Bytes of one weight when narrower than the activations.
    experts_run : float or ndarray
        MLPs each layer runs on this device (1 for a dense model).
    ffn_tokens : float or ndarray, optional
        Tokens each MLP processes; default ``tokens``.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Shoeybi et al. (2019), "Megatron-LM", arXiv:1909.08053, Sec. 3 (column- and
    row-parallel GEMMs); NVIDIA, "Matrix Multiplication Background User's Guide".

    Examples
    --------
    A GPT-3 175B layer (h 12288, 96 heads of 128, MLP 49152) on 8-way tensor
    parallelism, 2048 tokens, bf16 on A100s (312 TFLOP/s × 0.75, 108 SMs): 2 × 2048 ×
    12 h² / 8 = 927.7 GFLOP, 3.96 ms at 234 TFLOP/s; every one of the four GEMMs makes
    288 or 768 tiles, 2.67 or 7.11 waves of 108, so each loses 1/9 to wave quantisation:
    4.46 ms.

    >>> t = linear_layers_time(2048, 12288, 96, 96, 128, 49152, False, 8,
    ...                        312e12 * 0.75, 2.039e12 * 0.85, 2.0, sm_count=108)
    >>> round(t * 1e3, 2)
    4.46
    """
    args = (tokens, hidden, heads, kv_heads, head_dim, ffn_hidden, gated_mlp, tp)
    args += (achievable_flops, bandwidth_Bps, bytes_per_element, sm_count, backward)
    args += (weight_bytes_per_element, experts_run, ffn_tokens)
    if all(type(a) in _HASHABLE_SCALARS for a in args):
        # a pure function of floats: a solver asking again (a book, a sweep) pays once
        return _linear_layers_time_cached(*args)
    return _linear_layers_time(*args)


def output_layer_time(
    tokens: Any,
    vocab: Any,
    hidden: Any,
    tp_size: Any,
    flops_per_s: Any,
    memory_Bps: Any,
) -> Any:
    """Training time of the output layer (LM head) for one micro-batch on one device.

    The head multiplies each token's hidden state by the ``V × h`` embedding matrix,
    split over the tensor-parallel ranks by vocabulary: ``2·V·h·T/t`` FLOP a pass, three
    passes (forward, data gradient, weight gradient), the ``6·B·s·h·V`` term of
    Narayanan et al.'s step FLOPs. The logits are kept in fp32 for the loss: written,
    read and written by the softmax, read again by its gradient — ``4 · 3 · 4·V·T/t``
    bytes, memory-bound. The two add (one waits for the other).

    Parameters
    ----------
    tokens : float or ndarray
        Tokens of the micro-batch on this device, ``T`` (sequences × sequence length,
        divided by the context-parallel size).
    vocab : float or ndarray
        Vocabulary size, ``V``.
    hidden : float or ndarray
        Hidden size, ``h``.
    tp_size : float or ndarray
        Tensor-parallel ranks the vocabulary is split over, ``t``.
    flops_per_s : float or ndarray
        Achieved FLOP/s of the head's GEMMs (16-bit under FP8 training), in FLOP/s.
    memory_Bps : float or ndarray
        Achieved HBM bandwidth, in bytes per second.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Narayanan et al. (2021), "Efficient Large-Scale Language Model Training on GPU
    Clusters Using Megatron-LM", SC'21, Eq. (3) (the logit layer's ``6·B·s·h·V``
    FLOPs); NVIDIA Megatron-LM, ``megatron/core/tensor_parallel/cross_entropy.py``
    (vocabulary-parallel cross entropy on fp32 logits).

    Examples
    --------
    GPT-3 (``V = 50257``, ``h = 12288``), one 2048-token sequence on TP 8, at 156 TFLOP/s
    and 2.039 TB/s × 0.85: 6.08 ms of GEMMs and 0.36 ms of logits, 6.44 ms.

    >>> round(output_layer_time(2048.0, 50257.0, 12288.0, 8.0, 156e12, 2.039e12 * 0.85) * 1e3, 2)
    6.44
    """
    head_flops = 2.0 * (vocab * hidden) * tokens / tp_size * 3.0
    logits_bytes = 4.0 * 3.0 * 4.0 * vocab * tokens / tp_size
    return head_flops / flops_per_s + logits_bytes / memory_Bps


def materialized_attention_time(
    tokens: Any,
    seq_len: Any,
    heads: Any,
    attention_width: Any,
    tp_size: Any,
    passes: Any,
    bytes_per_element: Any,
    dropout: bool,
    flops_per_s: Any,
    memory_Bps: Any,
) -> Any:
    """Attention core of one layer with the ``s × s`` scores written to memory (no fused
    kernel), for a micro-batch on one device: the roofline of its FLOPs and its score
    traffic.

    ``QKᵀ`` and ``AV`` cost ``4·s·d_attn`` FLOP per query token (each local query
    attends to all ``s`` keys), split over the tensor-parallel ranks by head. Each score
    is written by ``QKᵀ``, read and written by the softmax and read by ``AV``
    (``4e`` bytes); dropout reads and writes the probabilities again and stores a
    one-byte mask (``2e + 1``). Every pass (forward, backward twice, reruns) repeats
    both; the slower of compute and memory sets the time.

    Parameters
    ----------
    tokens : float or ndarray
        Query tokens of the micro-batch on this device, ``T``.
    seq_len : float or ndarray
        Keys each query attends to, ``s``.
    heads : float or ndarray
        Attention heads, ``a``.
    attention_width : float or ndarray
        ``a × d_head``, ``d_attn``.
    tp_size : float or ndarray
        Tensor-parallel ranks the heads are split over.
    passes : float or ndarray
        Forward-equivalent passes (3: forward and a backward of twice its cost; one
        more per recompute).
    bytes_per_element : float or ndarray
        Bytes of one activation element, ``e``.
    dropout : bool
        Attention dropout runs.
    flops_per_s : float or ndarray
        Achieved FLOP/s of the attention matmuls.
    memory_Bps : float or ndarray
        Achieved HBM bandwidth, in bytes per second.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Korthikanti et al. (2022), "Reducing Activation Recomputation in Large Transformer
    Models", arXiv:2205.05198, Sec. 4 (the score, softmax and dropout tensors of
    ``a·s²·b`` elements each, and the mask of one byte); Williams, Waterman & Patterson
    (2009), "Roofline", CACM 52(4).

    Examples
    --------
    GPT-3 (``a = 96``, ``d_attn = 12288``), one 2048-token sequence on TP 8, 3 passes
    in bf16 at 156 TFLOP/s and 2.039 TB/s × 0.85: 0.50 ms of FLOPs under 1.13 ms of score
    traffic with dropout (0.70 ms without): memory-bound.

    >>> args = (2048.0, 2048.0, 96.0, 12288.0, 8.0, 3.0, 2.0)
    >>> round(materialized_attention_time(*args, True, 156e12, 2.039e12 * 0.85) * 1e3, 2)
    1.13
    >>> round(materialized_attention_time(*args, False, 156e12, 2.039e12 * 0.85) * 1e3, 2)
    0.7
    """
    o = ops(tokens, seq_len, tp_size, passes, flops_per_s, memory_Bps)
    flops = 4.0 * seq_len * attention_width * tokens / tp_size * passes
    e = bytes_per_element
    score_bytes = (
        (4.0 * e + (2.0 * e + 1.0 if dropout else 0.0)) * heads * seq_len * tokens / tp_size
    )
    return o.max(flops / flops_per_s, score_bytes * passes / memory_Bps)


def linear_gemm_times(
    tokens: Any,
    hidden: Any,
    heads: Any,
    kv_heads: Any,
    head_dim: Any,
    ffn_hidden: Any,
    gated_mlp: Any,
    tp: Any,
    achievable_flops: Any,
    bandwidth_Bps: Any,
    bytes_per_element: Any,
    *,
    sm_count: Any = None,
    gemm: str = "forward",
) -> tuple[Any, Any, Any, Any]:
    """Seconds of each of a layer's four tensor-parallel GEMMs on one device, apart.

    The shapes of :func:`linear_layers_time` (QKV, output projection, MLP up, MLP down),
    one pass at a time: ``gemm="forward"`` the forward GEMM ``[T × K]·[K × N]``,
    ``"data"`` the data-gradient GEMM ``[T × N]·[N × K]``, ``"weight"`` the
    weight-gradient GEMM ``[K × T]·[T × N]``, each priced by
    :func:`mlsys.core.formulas.gemm.gemm_time`. The forward times sum to
    :func:`linear_layers_time`, and the data and weight times to its backward time.
    Apart, they are what a collective overlapped with one GEMM can hide under
    (:func:`mlsys.core.formulas.overlap.userbuffers_exposed_time`).

    Parameters
    ----------
    tokens, hidden, heads, kv_heads, head_dim, ffn_hidden, gated_mlp, tp
        As in :func:`linear_layers_time` (tokens, widths in elements, counts).
    achievable_flops : float or ndarray
        Dense peak × compute efficiency, in FLOP/s.
    bandwidth_Bps : float or ndarray
        Achievable memory bandwidth, in bytes per second.
    bytes_per_element : float or ndarray
        Bytes of one activation element.
    sm_count : int or ndarray, optional
        Streaming multiprocessors (wave quantisation).
    gemm : {"forward", "data", "weight"}
        Which GEMM of each linear layer.

    Returns
    -------
    tuple of float or ndarray
        Seconds of the QKV, output, MLP-up and MLP-down GEMMs.

    References
    ----------
    Shoeybi et al. (2019), "Megatron-LM", arXiv:1909.08053, Sec. 3; NVIDIA, "Matrix
    Multiplication Background User's Guide".

    Examples
    --------
    The GPT-3 175B layer of :func:`linear_layers_time` (2048 tokens, 8-way tensor
    parallelism, A100): the 3.96 ms of its FLOPs split 3 : 1 : 4 : 4 (0.99, 0.33, 1.32,
    1.32 ms), each 12.5% longer for wave quantisation (3 waves for 2.67, 8 for 7.11):
    1.115, 0.372, 1.487 and 1.487 ms, 4.46 ms in all.

    >>> parts = linear_gemm_times(2048, 12288, 96, 96, 128, 49152, False, 8,
    ...                           312e12 * 0.75, 2.039e12 * 0.85, 2.0, sm_count=108)
    >>> [round(x * 1e3, 3) for x in parts]
    [1.115, 0.372, 1.487, 1.487]
    """
    if gemm not in ("forward", "data", "weight"):
        raise ValueError(f"gemm must be 'forward', 'data' or 'weight', not {gemm!r}")
    e = bytes_per_element
    qkv, proj, up, down = _linear_widths(
        hidden, heads, kv_heads, head_dim, ffn_hidden, gated_mlp, tp
    )
    F, B = achievable_flops, bandwidth_Bps

    def one(n: Any, k: Any) -> Any:
        if gemm == "forward":
            return gemm_time(tokens, n, k, F, B, e, sm_count)
        if gemm == "data":
            return gemm_time(tokens, k, n, F, B, e, sm_count)
        return gemm_time(k, n, tokens, F, B, e, sm_count)

    return one(*qkv), one(*proj), one(*up), one(*down)


def _linear_widths(
    hidden: Any, heads: Any, kv_heads: Any, head_dim: Any, ffn_hidden: Any, gated_mlp: Any, tp: Any
) -> tuple[tuple[Any, Any], tuple[Any, Any], tuple[Any, Any], tuple[Any, Any]]:
    """``(N, K)`` of the QKV, output-projection, MLP-up and MLP-down GEMMs on one device
    (Megatron's column/row split over ``tp``; grouped K/V heads replicated when fewer
    than ``tp``)."""
    q_dev, kv_dev = _attention_widths(heads, kv_heads, head_dim, tp)
    f_dev = ffn_hidden / tp
    up_width = 2.0 * f_dev if gated_mlp else f_dev
    return (q_dev + 2.0 * kv_dev, hidden), (hidden, q_dev), (up_width, hidden), (hidden, f_dev)


_HASHABLE_SCALARS = frozenset({int, float, bool, type(None)})


@lru_cache(maxsize=4096)
def _linear_layers_time_cached(*args: Any) -> Any:
    return _linear_layers_time(*args)


def _linear_layers_time(*args: Any) -> Any:
    qkv, out, up, down = _linear_layer_parts(*args)
    return qkv + out + (up + down)


def _linear_layer_parts(
    tokens: Any,
    hidden: Any,
    heads: Any,
    kv_heads: Any,
    head_dim: Any,
    ffn_hidden: Any,
    gated_mlp: Any,
    tp: Any,
    achievable_flops: Any,
    bandwidth_Bps: Any,
    bytes_per_element: Any,
    sm_count: Any,
    backward: bool,
    weight_bytes_per_element: Any,
    experts_run: Any,
    ffn_tokens: Any,
) -> tuple[Any, Any, Any, Any]:
    """Seconds of the QKV, output, MLP-up and MLP-down GEMMs (the MLPs times
    ``experts_run``)."""
    e = bytes_per_element
    ew = weight_bytes_per_element
    qkv, proj, up, down = _linear_widths(
        hidden, heads, kv_heads, head_dim, ffn_hidden, gated_mlp, tp
    )
    m_ffn = tokens if ffn_tokens is None else ffn_tokens

    def linear(m: Any, n: Any, k: Any) -> Any:
        """A linear layer's forward GEMM, or its two backward GEMMs."""
        if not backward:
            return gemm_time(
                m, n, k, achievable_flops, bandwidth_Bps, e, sm_count, weight_bytes_per_element=ew
            )
        data = gemm_time(
            m, k, n, achievable_flops, bandwidth_Bps, e, sm_count, weight_bytes_per_element=ew
        )
        weight = gemm_time(k, n, m, achievable_flops, bandwidth_Bps, e, sm_count)
        return data + weight

    return (
        linear(tokens, *qkv),
        linear(tokens, *proj),
        experts_run * linear(m_ffn, *up),
        experts_run * linear(m_ffn, *down),
    )


def transformer_layer_time(
    tokens: Any,
    batch: Any,
    q_len: Any,
    kv_len: Any,
    hidden: Any,
    heads: Any,
    kv_heads: Any,
    head_dim: Any,
    ffn_hidden: Any,
    gated_mlp: bool,
    tp: Any,
    achievable_flops: Any,
    peak_flops: Any,
    bandwidth_Bps: Any,
    bytes_per_element: Any,
    *,
    sm_count: Any = None,
    flash_attention: bool = True,
    causal: bool = True,
    phase: str = "inference",
    sequence_parallel: bool = False,
    weight_bytes_per_element: Any = None,
    kv_bytes_per_element: Any = None,
    experts_run: Any = 1.0,
    ffn_tokens: Any = None,
    kernel_overhead_s: Any = KERNEL_OVERHEAD_S,
    attention_fractions: tuple[Any, Any] = (
        FLASH_ATTENTION_FORWARD_FRACTION,
        FLASH_ATTENTION_BACKWARD_FRACTION,
    ),
    attention_unmasked: bool = True,
    activation_cast_bytes_per_element: Any = 0.0,
) -> Any:
    """Seconds one device spends in one transformer layer (communication excluded).

    Parameters
    ----------
    tokens : float or ndarray
        Tokens through the layer on this device (``batch × q_len``; a decode step's
        batch).
    batch : float or ndarray
        Sequences.
    q_len, kv_len : float or ndarray
        Query and key/value tokens per sequence (prefill and training: both the
        sequence; decode: 1 and the cached context).
    hidden : float or ndarray
        Model width ``h``.
    heads, kv_heads : float or ndarray
        Query and key/value heads of the whole layer (divided by ``tp`` here; key/value
        heads are replicated when ``tp`` exceeds them).
    head_dim : float or ndarray
        Head dimension.
    ffn_hidden : float or ndarray
        MLP inner width (of one expert, for a mixture of experts).
    gated_mlp : bool
        SwiGLU-style MLP (three weight matrices) rather than two.
    tp : float or ndarray
        Tensor-parallel degree.
    achievable_flops : float or ndarray
        Dense peak × compute efficiency of the compute precision, in FLOP/s.
    peak_flops : float or ndarray
        Dense peak of the compute precision, in FLOP/s (fused attention's reference).
    bandwidth_Bps : float or ndarray
        Achievable memory bandwidth, in bytes per second.
    bytes_per_element : float or ndarray
        Bytes of one activation element.
    sm_count : int or ndarray, optional
        Streaming multiprocessors (wave quantisation); ``None`` leaves it out.
    flash_attention : bool
        Fused attention kernel.
    causal : bool
        Causal attention over ``q_len = kv_len`` (False for decode).
    phase : {"inference", "forward", "backward"}
        An inference engine's forward pass, or a training forward or backward pass
        (which sets the kernel count and, for ``"backward"``, the work).
    sequence_parallel : bool
        Norms and residual adds split over ``tp`` (Korthikanti et al. 2022).
    weight_bytes_per_element : float or ndarray, optional
        Bytes of one weight when narrower than the activations.
    kv_bytes_per_element : float or ndarray, optional
        Bytes of one cached key/value element (decode reads the cache); default
        ``bytes_per_element``.
    experts_run : float or ndarray
        Distinct MLPs (experts) each token batch runs in this layer on this device;
        1 for a dense model.
    ffn_tokens : float or ndarray, optional
        Tokens each of those MLPs processes; default ``tokens``.
    kernel_overhead_s : float or ndarray
        Fixed time per kernel, in seconds.
    attention_fractions : (float, float)
        Forward and backward fractions of ``peak_flops`` the fused attention kernel
        sustains on this device
        (:func:`mlsys.core.solvers.efficiency.fused_attention_fractions`).
    attention_unmasked : bool
        Those fractions are an unmasked kernel's, measured (GPUs' FlashAttention-2 and
        later), so a causal pass runs at :func:`mlsys.core.formulas.gemm.causal_attention_rate`
        of them; ``False`` leaves them as they are.
    activation_cast_bytes_per_element : float or ndarray
        Bytes moved per element to quantise each GEMM's 16-bit input for FP8 (or INT8)
        tensor cores (:func:`fp8_cast_bytes`; :data:`FP8_STATIC_SCALING_CAST_BYTES` in
        an inference engine); 0 when the GEMMs take the activations as they are.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Shoeybi et al. (2019), arXiv:1909.08053, Sec. 3; Korthikanti et al. (2022),
    arXiv:2205.05198, Sec. 4; NVIDIA, "Matrix Multiplication Background User's Guide";
    Dao (2023), "FlashAttention-2"; Gray (2019), "Getting Started with CUDA Graphs".

    Examples
    --------
    A Llama-2-7B layer decoding one token at 1024 cached tokens in fp16 on an A100
    (312 TFLOP/s × 0.75, 2.039 TB/s × 0.85, 108 SMs): the four weight matrices
    (202.4 M parameters, 404.8 MB) and the 16.8 MB of cached keys and values stream at
    1.733 TB/s in 0.243 ms (the one token's tiles, padded to 16 rows, compute in far
    less), and ten kernels add 40 µs: 0.283 ms per layer, 9.1 ms for 32 layers.

    >>> t = transformer_layer_time(1, 1, 1, 1024, 4096, 32, 32, 128, 11008, True, 1,
    ...                            312e12 * 0.75, 312e12, 2.039e12 * 0.85, 2.0,
    ...                            sm_count=108, causal=False)
    >>> round(t * 1e3, 3)
    0.283
    """
    kernels = transformer_layer_kernel_times(
        tokens, batch, q_len, kv_len, hidden, heads, kv_heads, head_dim, ffn_hidden,
        gated_mlp, tp, achievable_flops, peak_flops, bandwidth_Bps, bytes_per_element,
        sm_count=sm_count, flash_attention=flash_attention, causal=causal, phase=phase,
        sequence_parallel=sequence_parallel, weight_bytes_per_element=weight_bytes_per_element,
        kv_bytes_per_element=kv_bytes_per_element, experts_run=experts_run,
        ffn_tokens=ffn_tokens, kernel_overhead_s=kernel_overhead_s,
        attention_fractions=attention_fractions,
        attention_unmasked=attention_unmasked,
        activation_cast_bytes_per_element=activation_cast_bytes_per_element,
    )  # fmt: skip
    total = 0.0
    for seconds in kernels.values():
        total = total + seconds
    return total


LAYER_KERNELS = (
    "qkv_proj",
    "attention",
    "out_proj",
    "mlp_up",
    "mlp_down",
    "elementwise",
    "kernel_overhead",
)
"""Keys of :func:`transformer_layer_kernel_times`, in the order a layer runs them (the
fixed per-kernel cost last)."""


def transformer_layer_kernel_times(
    tokens: Any,
    batch: Any,
    q_len: Any,
    kv_len: Any,
    hidden: Any,
    heads: Any,
    kv_heads: Any,
    head_dim: Any,
    ffn_hidden: Any,
    gated_mlp: bool,
    tp: Any,
    achievable_flops: Any,
    peak_flops: Any,
    bandwidth_Bps: Any,
    bytes_per_element: Any,
    *,
    sm_count: Any = None,
    flash_attention: bool = True,
    causal: bool = True,
    phase: str = "inference",
    sequence_parallel: bool = False,
    weight_bytes_per_element: Any = None,
    kv_bytes_per_element: Any = None,
    experts_run: Any = 1.0,
    ffn_tokens: Any = None,
    kernel_overhead_s: Any = KERNEL_OVERHEAD_S,
    attention_fractions: tuple[Any, Any] = (
        FLASH_ATTENTION_FORWARD_FRACTION,
        FLASH_ATTENTION_BACKWARD_FRACTION,
    ),
    attention_unmasked: bool = True,
    activation_cast_bytes_per_element: Any = 0.0,
) -> dict[str, Any]:
    """Seconds one device spends in each kernel group of one transformer layer.

    The parts of :func:`transformer_layer_time` (which is their sum), so that a solver
    explaining a step operator by operator reports the same time a solver pricing it
    whole does. Parameters as :func:`transformer_layer_time`.

    Returns
    -------
    dict of str to float or ndarray
        Seconds per key of :data:`LAYER_KERNELS`: the four linear layers' GEMMs
        (``qkv_proj``, ``out_proj``, ``mlp_up``, ``mlp_down``; the MLPs times
        ``experts_run``), ``attention`` (fused or not), ``elementwise`` (norms, residual
        adds and the MLP activation, memory-bound) and ``kernel_overhead`` (the fixed
        cost of every kernel the layer launches).

    References
    ----------
    As :func:`transformer_layer_time`.

    Examples
    --------
    The Llama-2-7B decode layer of :func:`transformer_layer_time`'s example: 40 µs of
    it is the ten kernels' fixed cost.

    >>> parts = transformer_layer_kernel_times(
    ...     1, 1, 1, 1024, 4096, 32, 32, 128, 11008, True, 1, 312e12 * 0.75, 312e12,
    ...     2.039e12 * 0.85, 2.0, sm_count=108, causal=False)
    >>> round(parts["kernel_overhead"] * 1e6), round(sum(parts.values()) * 1e3, 3)
    (40, 0.283)
    """
    if phase not in _PHASES:
        from mlsys.core.errors import ParameterError

        raise ParameterError("phase", phase, "one of " + ", ".join(_PHASES))
    backward = phase == "backward"
    e = bytes_per_element
    kv_heads_dev = _kv_heads_per_device(kv_heads, tp)
    f_dev = ffn_hidden / tp
    m_ffn = tokens if ffn_tokens is None else ffn_tokens
    qkv, out, up, down = _linear_layer_parts(
        tokens,
        hidden,
        heads,
        kv_heads,
        head_dim,
        ffn_hidden,
        gated_mlp,
        tp,
        achievable_flops,
        bandwidth_Bps,
        e,
        sm_count,
        backward,
        weight_bytes_per_element,
        experts_run,
        ffn_tokens,
    )
    attn = attention_time(
        batch,
        q_len,
        kv_len,
        heads / tp,
        kv_heads_dev,
        head_dim,
        peak_flops,
        bandwidth_Bps,
        e if kv_bytes_per_element is None else kv_bytes_per_element,
        fused=flash_attention,
        causal=causal,
        backward=backward,
        achievable_flops=achievable_flops,
        forward_fraction=attention_fractions[0],
        backward_fraction=attention_fractions[1],
        unmasked_fractions=attention_unmasked,
    )
    h_elems = ELEMENTWISE_HIDDEN_PASSES * hidden / (tp if sequence_parallel else 1.0)
    act_elems = (3.0 if gated_mlp else 2.0) * f_dev * experts_run * m_ffn
    elementwise = (2.0 if backward else 1.0) * (tokens * h_elems + act_elems) * e / bandwidth_Bps
    if activation_cast_bytes_per_element:
        # quantise each GEMM's input (the MLP's per token routed to it); an empty batch
        # (a decode step at zero concurrency) routes nothing and quantises nothing
        routed_per_token = (
            1.0 if ffn_tokens is None else m_ffn / ops(tokens).max(tokens, _NO_TOKENS)
        )
        ffn_width = ffn_hidden * experts_run * routed_per_token
        cast = fp8_cast_bytes(
            tokens, hidden, heads, kv_heads, head_dim, ffn_width, gated_mlp, tp,
            sequence_parallel, backward, activation_cast_bytes_per_element,
        )  # fmt: skip
        elementwise = elementwise + cast / bandwidth_Bps
    kernels = kernels_per_layer(phase, flash_attention or phase == "inference")
    return {
        "qkv_proj": qkv,
        "attention": attn,
        "out_proj": out,
        "mlp_up": up,
        "mlp_down": down,
        "elementwise": elementwise,
        "kernel_overhead": kernels * kernel_overhead_s,
    }
