"""Bytes a transformer layer's element-wise work moves when every operator is its own kernel.

A training stack with fused element-wise kernels (Megatron-LM, Transformer Engine, or a
compiler such as XLA or ``torch.compile``) reads a norm's input once and writes its
output once. Eager PyTorch runs each operator of the model's Python code as a kernel of
its own, and each kernel reads its inputs from HBM and writes its output back: a Llama-
style RMSNorm computed in fp32 (``x.float()``, square, mean, scale, cast back, times the
weight) moves nine times the bytes of the fused norm, and autograd's backward of that
sequence runs one kernel per derivative formula. This module lists those operators — the
forward sequence of a Llama-family layer as its reference PyTorch code writes it, and the
backward sequence autograd's derivative formulas give — with the bytes each moves per
element, so the sum is a count of a list rather than a fitted number.

Each operator is ``(name, activation elements read, fp32 elements read, activation
elements written, fp32 elements written)`` per element of its width (per-row scalars,
such as the RMS of a row, are left out). With ``e`` bytes per activation element and
``c = 4`` bytes per fp32 element, an operator moves ``(r_e + w_e)·e + (r_c + w_c)·c``
bytes per element. When the activations themselves are fp32, the casts to and from fp32
are no-ops (``Tensor.float()`` of an fp32 tensor returns it without a kernel) and are
left out.

References
----------
Paszke et al. (2019), "PyTorch: An Imperative Style, High-Performance Deep Learning
Library", NeurIPS, Sec. 5 (eager execution: each operator is dispatched, and launches its
kernels, as the Python program reaches it). PyTorch ``tools/autograd/derivatives.yaml``
(the derivative formula autograd runs for each operator: ``pow``, ``mean``, ``mul``,
``silu``, ``_to_copy``). Zhang & Sennrich (2019), "Root Mean Square Layer Normalization",
NeurIPS (RMSNorm); Su et al. (2021), arXiv:2104.09864 (rotary embedding); Shazeer (2020),
arXiv:2002.05202 (the SwiGLU MLP). The operator sequences are those of Meta's reference
Llama code as torchtitan trains it (pytorch/torchtitan, ``torchtitan/models/llama/
model.py``: ``RMSNorm`` in fp32, ``apply_rotary_emb`` through complex fp32 views,
``repeat_kv`` for grouped-query attention, ``w2(silu(w1(x)) * w3(x))``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlsys.core.formulas.layer_time import _attention_widths, _block_width

__all__ = [
    "EAGER_RMSNORM_FORWARD",
    "EAGER_RMSNORM_BACKWARD",
    "EAGER_ROTARY_FORWARD",
    "EAGER_ROTARY_BACKWARD",
    "EAGER_SWIGLU_FORWARD",
    "EAGER_SWIGLU_BACKWARD",
    "EAGER_GELU_FORWARD",
    "EAGER_GELU_BACKWARD",
    "FUSED_RMSNORM_FORWARD",
    "FUSED_RMSNORM_BACKWARD",
    "ELEMENTWISE_KERNELS",
    "FP32_BYTES",
    "eager_operator_bytes",
    "eager_elementwise_bytes",
    "eager_elementwise_kernels",
    "eager_saved_activation_bytes",
]

ELEMENTWISE_KERNELS: tuple[str, ...] = ("fused", "eager", "eager_fused_norm")
"""How a training stack runs a layer's element-wise work: ``"fused"`` (one kernel per
norm, residual add and activation: Megatron-LM, Transformer Engine, XLA,
``torch.compile``), ``"eager"`` (each operator of the model code its own kernel) or
``"eager_fused_norm"`` (eager, but the norms one fused kernel each, forward and backward:
torchtitan's ``norm_type = "fused_rmsnorm"``, a Triton RMSNorm)."""

FP32_BYTES = 4.0
"""Bytes of one fp32 element: eager norms and rotations compute in fp32."""

_Op = tuple[str, float, float, float, float]

EAGER_RMSNORM_FORWARD: tuple[_Op, ...] = (
    ("cast to fp32", 1, 0, 0, 1),
    ("square", 0, 1, 0, 1),
    ("mean over the row", 0, 1, 0, 0),
    ("scale by the reciprocal RMS", 0, 1, 0, 1),
    ("cast back", 0, 1, 1, 0),
    ("times the weight", 1, 0, 1, 0),
)
"""RMSNorm forward as ``(x.float() * rsqrt(x.float().pow(2).mean(-1) + eps)).type_as(x)
* weight``, per element of the hidden width (the ``+ eps`` and ``rsqrt`` act on one
scalar per row and launch two more kernels, counted by :func:`eager_elementwise_kernels`).
36 bytes per element at 16 bits, against 4 for a fused norm."""

EAGER_RMSNORM_BACKWARD: tuple[_Op, ...] = (
    ("gradient times the weight", 1, 0, 1, 0),
    ("gradient times the output (weight gradient)", 2, 0, 1, 0),
    ("sum over the tokens (weight gradient)", 1, 0, 0, 0),
    ("cast the gradient to fp32", 1, 0, 0, 1),
    ("times the reciprocal RMS (input gradient)", 0, 1, 0, 1),
    ("times the input (RMS gradient)", 0, 2, 0, 1),
    ("sum over the row (RMS gradient)", 0, 1, 0, 0),
    ("mean backward: expand over the row", 0, 0, 0, 1),
    ("square backward: two times the input", 0, 1, 0, 1),
    ("square backward: times the gradient", 0, 2, 0, 1),
    ("accumulate the two input gradients", 0, 2, 0, 1),
    ("cast the gradient back", 0, 1, 1, 0),
)
"""RMSNorm backward as autograd runs it (``derivatives.yaml``: ``mul`` gives each
operand the gradient times the other, ``mean`` expands the gradient over the row, ``pow``
multiplies by ``2·x``, ``_to_copy`` casts back), per element of the hidden width (the
weight and the reciprocal RMS are broadcast, read once per row or column): 84
bytes at 16 bits, against 8 for a fused norm's backward."""

FUSED_RMSNORM_FORWARD: tuple[_Op, ...] = (("fused RMSNorm", 1, 0, 1, 0),)
"""A fused RMSNorm forward (one kernel: reads the row, writes the normalised row and one
scalar per row), per element of the hidden width."""

FUSED_RMSNORM_BACKWARD: tuple[_Op, ...] = (
    ("fused RMSNorm backward", 2, 0, 1, 0),
    ("sum of the weight-gradient partials", 0, 0, 0, 0),
)
"""A fused RMSNorm backward: one kernel reads the gradient and the input and writes the
input gradient (and per-block partial weight gradients, a small second reduction)."""

EAGER_ROTARY_FORWARD: tuple[_Op, ...] = (
    ("cast to fp32", 1, 0, 0, 1),
    ("complex multiply by the rotation", 0, 1, 0, 1),
    ("cast back", 0, 1, 1, 0),
)
"""Rotary embedding forward through fp32 complex views (``view_as_complex(x.float())
* freqs``, ``view_as_real(...).type_as(x)``; the views are free, the rotation table is a
small broadcast read), per element of the queries and keys: 20 bytes at 16 bits against
4 for a fused rotation."""

EAGER_ROTARY_BACKWARD: tuple[_Op, ...] = (
    ("cast the gradient to fp32", 1, 0, 0, 1),
    ("complex multiply by the conjugate rotation", 0, 1, 0, 1),
    ("cast the gradient back", 0, 1, 1, 0),
)
"""Rotary embedding backward: the same three operators on the gradient."""

EAGER_SWIGLU_FORWARD: tuple[_Op, ...] = (
    ("SiLU of the gate", 1, 0, 1, 0),
    ("gate times up", 2, 0, 1, 0),
)
"""SwiGLU forward ``silu(gate) * up``, per element of the MLP width ``f``: 10 bytes at
16 bits, against 6 for a fused kernel."""

EAGER_SWIGLU_BACKWARD: tuple[_Op, ...] = (
    ("gradient times up (gate branch)", 2, 0, 1, 0),
    ("gradient times SiLU of the gate (up branch)", 2, 0, 1, 0),
    ("SiLU backward", 2, 0, 1, 0),
)
"""SwiGLU backward, per element of ``f``: the product's two operand gradients and SiLU's
derivative (18 bytes at 16 bits)."""

EAGER_GELU_FORWARD: tuple[_Op, ...] = (("GeLU", 1, 0, 1, 0),)
"""A plain MLP's activation forward (one kernel either way), per element of ``f``."""

EAGER_GELU_BACKWARD: tuple[_Op, ...] = (("GeLU backward", 2, 0, 1, 0),)
"""Its backward: reads the gradient and the input, writes the input gradient."""

_RESIDUAL_ADD: tuple[_Op, ...] = (("residual add", 2, 0, 1, 0),)
# autograd's backward of an add hands the gradient to both operands as it is; where the
# residual stream's two paths meet again the two gradients are summed (one add)
_RESIDUAL_GRADIENT_SUM: tuple[_Op, ...] = (("sum of the residual gradients", 2, 0, 1, 0),)
_HEAD_COPY: tuple[_Op, ...] = (("copy", 1, 0, 1, 0),)
# per pass (backward or not): eager norm, fused norm, residual, rotary, SwiGLU, GeLU
_PASS_LISTS = {
    False: (EAGER_RMSNORM_FORWARD, FUSED_RMSNORM_FORWARD, _RESIDUAL_ADD, EAGER_ROTARY_FORWARD,
            EAGER_SWIGLU_FORWARD, EAGER_GELU_FORWARD),
    True: (EAGER_RMSNORM_BACKWARD, FUSED_RMSNORM_BACKWARD, _RESIDUAL_GRADIENT_SUM,
           EAGER_ROTARY_BACKWARD, EAGER_SWIGLU_BACKWARD, EAGER_GELU_BACKWARD),
}  # fmt: skip


def eager_operator_bytes(ops: tuple[_Op, ...], bytes_per_element: Any) -> Any:
    """Bytes per element of width that a sequence of eager operators moves.

    Parameters
    ----------
    ops : tuple of (str, float, float, float, float)
        Operators as ``(name, activation elements read, fp32 elements read, activation
        elements written, fp32 elements written)`` per element of their width.
    bytes_per_element : float or ndarray
        Bytes of one activation element ``e`` (2 for bf16/fp16).

    Returns
    -------
    float or ndarray
        Bytes per element: ``Σ (r_e + w_e)·e + (r_c + w_c)·4``; with fp32 activations
        (``e ≥ 4``) the casts (operators named ``"cast ..."``) are no-ops and count 0.

    References
    ----------
    Paszke et al. (2019), NeurIPS, Sec. 5 (one kernel per eager operator, each reading
    its inputs from and writing its output to device memory).

    Examples
    --------
    The eager RMSNorm forward moves 36 bytes per element at 16 bits (a fused norm 4):

    >>> eager_operator_bytes(EAGER_RMSNORM_FORWARD, 2.0)
    36.0
    >>> eager_operator_bytes(EAGER_RMSNORM_BACKWARD, 2.0)
    84.0
    """
    e = bytes_per_element
    total = 0.0
    cast_total = 0.0
    for name, r_e, r_c, w_e, w_c in ops:
        moved = (r_e + w_e) * e + (r_c + w_c) * FP32_BYTES
        if name.startswith("cast"):
            cast_total = cast_total + moved
        total = total + moved
    if type(e) is float or type(e) is int:
        return float(total - cast_total) if e >= FP32_BYTES else float(total)
    return np.where(np.asarray(e) >= FP32_BYTES, total - cast_total, total)


def eager_elementwise_bytes(
    tokens: Any,
    hidden: Any,
    heads: Any,
    kv_heads: Any,
    head_dim: Any,
    ffn_hidden: Any,
    gated_mlp: Any,
    tp: Any,
    bytes_per_element: Any,
    rotary: bool = True,
    sequence_parallel: Any = False,
    backward: bool = False,
    fused_norms: bool = False,
) -> Any:
    """HBM bytes one device moves for one layer's element-wise work in eager PyTorch.

    Forward: two RMSNorms (:data:`EAGER_RMSNORM_FORWARD`) and two residual adds over the
    hidden width ``h`` (``h/t`` under sequence parallelism), the rotation of the local
    queries and keys (:data:`EAGER_ROTARY_FORWARD`, widths ``q = n_h·d/t`` and
    ``kv = max(n_kv/t, 1)·d``), grouped-query attention's ``repeat_kv`` copying each key
    and value head to its query heads (reads ``2·kv``, writes ``2·q`` elements; none
    when ``kv = q``), the copy that makes the attention output contiguous again (``q``),
    and the MLP activation over ``f/t`` (:data:`EAGER_SWIGLU_FORWARD` or
    :data:`EAGER_GELU_FORWARD`). Backward: each operator's derivative formulas
    (``*_BACKWARD``), the sums of gradients where the residual stream's paths meet, and
    the reverse copies.

    Parameters
    ----------
    tokens : float or ndarray
        Tokens through the layer on this device.
    hidden : float or ndarray
        Hidden size ``h``.
    heads, kv_heads : float or ndarray
        Query and key/value heads.
    head_dim : float or ndarray
        Head dimension ``d``.
    ffn_hidden : float or ndarray
        MLP width ``f`` (one branch of a gated MLP).
    gated_mlp : bool or ndarray
        SwiGLU-style gated MLP (else GeLU).
    tp : float or ndarray
        Tensor-parallel degree.
    bytes_per_element : float or ndarray
        Bytes of one activation element ``e``.
    rotary : bool
        The model rotates its queries and keys (RoPE).
    sequence_parallel : bool or ndarray
        The norms and residual adds run on ``h/t`` per token (Korthikanti et al. 2022).
    backward : bool
        The backward pass's bytes instead of the forward's.
    fused_norms : bool
        The norms run as one fused kernel each (:data:`FUSED_RMSNORM_FORWARD`,
        :data:`FUSED_RMSNORM_BACKWARD`), the rest eager.

    Returns
    -------
    float or ndarray
        Bytes per pass.

    References
    ----------
    See the module docstring (the operator lists, PyTorch's eager execution and its
    derivative formulas); Korthikanti et al. (2022), arXiv:2205.05198, Sec. 4 (the
    element-wise tensors of a layer, and their split under sequence parallelism).

    Examples
    --------
    Llama 2 13B (h = 5120, 40 heads of 128, f = 13824, SwiGLU) on one GPU, bf16, per
    token: forward 2·36·h + 2·3·2·h + 20·2h + 2·2h + 10·f = 793,600 bytes, where fused
    kernels move 20·h + 6·f + 8·h = 226,304.

    >>> eager_elementwise_bytes(1, 5120, 40, 40, 128, 13824, True, 1, 2.0)
    793600.0
    >>> eager_elementwise_bytes(1, 5120, 40, 40, 128, 13824, True, 1, 2.0, backward=True)
    1395712.0
    """
    e = bytes_per_element
    q, kv = _attention_widths(heads, kv_heads, head_dim, tp)
    h_in = _block_width(hidden, tp, sequence_parallel)
    f = ffn_hidden / tp
    eager_norm, fused_norm, residual_ops, rotary_ops, gated_ops, plain_ops = _PASS_LISTS[backward]
    norm = eager_operator_bytes(fused_norm if fused_norms else eager_norm, e)
    residual = eager_operator_bytes(residual_ops, e)
    rot = eager_operator_bytes(rotary_ops, e)
    gated = eager_operator_bytes(gated_ops, e)
    plain = eager_operator_bytes(plain_ops, e)
    # repeat_kv reads each key and value head and writes it for every query head it
    # serves; its backward sums the query heads' gradients back into it: the same bytes
    repeat = 2.0 * (q + kv) * e
    repeat = repeat * (q > kv) if type(q) is float else np.where(q > kv, repeat, 0.0)
    contiguous = eager_operator_bytes(_HEAD_COPY, e) * q
    mlp = (
        np.where(gated_mlp, gated, plain) if np.ndim(gated_mlp) else (gated if gated_mlp else plain)
    )
    out = tokens * (
        2.0 * (norm + residual) * h_in
        + (rot * (q + kv) if rotary else 0.0)
        + repeat
        + contiguous
        + mlp * f
    )
    return float(out) if np.ndim(out) == 0 else out


def eager_elementwise_kernels(
    gated_mlp: bool, rotary: bool, grouped_query: bool, fused_norms: bool = False
) -> tuple[int, int]:
    """Element-wise kernels one layer launches in eager PyTorch, forward and backward.

    Parameters
    ----------
    gated_mlp : bool
        SwiGLU-style gated MLP.
    rotary : bool
        Rotary embedding of the queries and keys (each rotated apart).
    grouped_query : bool
        Fewer key/value heads than query heads (``repeat_kv`` copies keys and values).
    fused_norms : bool
        The norms run as one fused kernel each (:data:`FUSED_RMSNORM_FORWARD`).

    Returns
    -------
    tuple of int
        ``(forward, backward)`` kernels: the operators of the lists above, plus, for an
        eager RMSNorm, the two per-row scalar kernels of its forward (``+ eps``,
        ``rsqrt``) and two of its backward (their derivatives). Counted for 16-bit
        activations: with fp32 activations the casts launch no kernel (a few fewer).

    References
    ----------
    See the module docstring.

    Examples
    --------
    A Llama 2 13B layer (SwiGLU, rotary, no GQA): 27 kernels forward, 40 backward; with
    fused norms 13 and 16.

    >>> eager_elementwise_kernels(True, True, False)
    (27, 40)
    >>> eager_elementwise_kernels(True, True, False, fused_norms=True)
    (13, 16)
    """
    if fused_norms:
        norm_f, norm_b = len(FUSED_RMSNORM_FORWARD), len(FUSED_RMSNORM_BACKWARD)
    else:
        norm_f, norm_b = len(EAGER_RMSNORM_FORWARD) + 2, len(EAGER_RMSNORM_BACKWARD) + 2
    mlp_f = len(EAGER_SWIGLU_FORWARD if gated_mlp else EAGER_GELU_FORWARD)
    mlp_b = len(EAGER_SWIGLU_BACKWARD if gated_mlp else EAGER_GELU_BACKWARD)
    rot_f = 2 * len(EAGER_ROTARY_FORWARD) if rotary else 0
    rot_b = 2 * len(EAGER_ROTARY_BACKWARD) if rotary else 0
    repeat = 2 if grouped_query else 0
    forward = 2 * norm_f + 2 + rot_f + repeat + 1 + mlp_f
    backward = 2 * norm_b + 2 + rot_b + repeat + 1 + mlp_b
    return forward, backward


def eager_saved_activation_bytes(
    tokens: Any,
    hidden: Any,
    heads: Any,
    kv_heads: Any,
    head_dim: Any,
    tp: Any,
    bytes_per_element: Any,
    sequence_parallel: Any = False,
    fused_norms: bool = False,
) -> Any:
    """Activation bytes an eager layer keeps for its backward beyond a fused layer's.

    Autograd keeps what each operator's derivative formula needs. Against the tensor
    list of Korthikanti et al. (2022), which a fused stack keeps (each norm's 16-bit
    input, Q, K and V, the MLP's inputs), an eager layer keeps, per token:

    * for each of its two RMSNorms, the fp32 copy of the input (``pow`` and the scaling
      multiply need it) and the normalised 16-bit row (the weight multiply needs it) in
      place of the 16-bit input: ``4·h`` bytes more per norm (``h/t`` under sequence
      parallelism); none with ``fused_norms``;
    * for grouped-query attention, the keys and values ``repeat_kv`` expanded to every
      query head, which the attention kernel saves as its inputs: ``2·(q − kv)·e`` more.

    The rotation keeps nothing extra (its rotation table needs no gradient, so the
    complex multiply saves neither operand), and SwiGLU keeps the same three
    ``f``-wide tensors as a fused kernel (the gate's input and SiLU output, the up
    projection's output).

    Parameters
    ----------
    tokens : float or ndarray
        Tokens of one micro-batch on this device.
    hidden : float or ndarray
        Hidden size ``h``.
    heads, kv_heads : float or ndarray
        Query and key/value heads.
    head_dim : float or ndarray
        Head dimension ``d``.
    tp : float or ndarray
        Tensor-parallel degree.
    bytes_per_element : float or ndarray
        Bytes of one activation element ``e``.
    sequence_parallel : bool or ndarray
        The norms hold ``h/t`` per token.
    fused_norms : bool
        One fused kernel per norm (it keeps only its 16-bit input).

    Returns
    -------
    float or ndarray
        Bytes per layer (per device), kept until the layer's backward.

    References
    ----------
    PyTorch ``tools/autograd/derivatives.yaml`` (what each formula saves: ``pow`` its
    input, ``mul`` the other operand of each input that requires a gradient,
    ``scaled_dot_product_attention`` its query, key and value); Korthikanti et al.
    (2022), arXiv:2205.05198, Sec. 4.1 (the fused layer's tensors).

    Examples
    --------
    Llama 3 70B (h = 8192, 64 query and 8 KV heads of 128) on one GPU, bf16, per token:
    2 × 4 × 8192 + 2 × (8192 − 1024) × 2 = 94,208 bytes.

    >>> eager_saved_activation_bytes(1, 8192, 64, 8, 128, 1, 2.0)
    94208.0
    """
    q, kv = _attention_widths(heads, kv_heads, head_dim, tp)
    h_in = _block_width(hidden, tp, sequence_parallel)
    norms = 0.0 if fused_norms else 2.0 * FP32_BYTES * h_in
    expanded = 2.0 * (q - kv) * bytes_per_element
    out = tokens * (norms + expanded)
    return float(out) if np.ndim(out) == 0 else out
