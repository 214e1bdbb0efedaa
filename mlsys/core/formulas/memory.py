"""Training memory: activations, optimizer state and ZeRO-partitioned model states.

All functions take and return floats or numpy arrays (bytes, counts) and broadcast.

Activation accounting follows Korthikanti et al. (2022), Sec. 4: per transformer layer
the stored tensors are, in units of ``sbh`` elements (``s`` sequence, ``b`` micro-batch,
``h`` hidden):

* 16 activation tensors of ``sbh`` elements — the two LayerNorm inputs (2), the
  attention input (1), Q and K (2), V (1), the attention-output projection input (1),
  the MLP input (1), the GeLU input (4) and output (4) — stored in the activation
  dtype (``e`` bytes each);
* 2 dropout masks of ``sbh`` bytes (one byte per element);
* per head, the softmax output and the softmax-dropout output (``2·a·s²·b`` elements,
  ``e`` bytes) and the softmax-dropout mask (``a·s²·b`` bytes).

With ``e = 2`` this is ``sbh(34 + 5as/h)``, Table 2's first row. Other activation dtypes
(``bytes_per_element``) scale the tensors but not the one-byte masks:
``sbh(16e + 2 + (2e + 1)·as/h)``. Under tensor parallelism (size ``t``) the 12 tensors
inside the attention and MLP blocks are split; the 4 at the LayerNorms, block inputs
and the 2 masks after them are split only with sequence parallelism.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlsys.core.errors import ParameterError
from mlsys.core.formulas._ops import ScalarOps, all_float, num, ops, ret

__all__ = [
    "RECOMPUTE_MODES",
    "recompute_mode",
    "activation_bytes_per_layer",
    "embedding_activation_bytes",
    "pipeline_inflight_microbatches",
    "interleaved_activation_factor",
    "OPTIMIZER_STATE_BYTES",
    "optimizer_state_bytes_per_param",
    "optimizer_step_bytes_per_param",
    "optimizer_step_time",
    "zero_model_state_bytes",
    "zero_model_state_breakdown",
    "zero_communication_elements",
]

ArrayLike = Any

RECOMPUTE_MODES: tuple[str, ...] = ("none", "selective", "full", "dots")
"""Activation recomputation modes, in the order of their integer codes (0-3):

* ``"none"``: every activation the backward pass needs is stored;
* ``"selective"``: the attention scores are recomputed (Korthikanti et al. 2022, Sec. 5);
* ``"full"``: only each layer's input is stored and the layer's forward is rerun
  (Chen et al. 2016, "Training Deep Nets with Sublinear Memory Cost");
* ``"dots"``: the outputs of the weight matmuls are stored and the rest of the layer
  (attention, norms, activation functions) is rerun — JAX's
  ``jax.checkpoint_policies.checkpoint_dots_with_no_batch_dims``, MaxText's
  ``remat_policy: minimal`` (the attention matmuls ``QKᵀ`` and ``PV`` have batch
  dimensions, so they are not kept).

Every formula and solver that takes ``recompute`` checks it against this one tuple."""

_FLAG_TYPES = (bool, float)
_CODES = tuple(float(code) for code in range(len(RECOMPUTE_MODES)))
_FULL = float(RECOMPUTE_MODES.index("full"))
_DOTS = float(RECOMPUTE_MODES.index("dots"))
_ALLOWED = "one of " + ", ".join(RECOMPUTE_MODES)


def recompute_mode(recompute: Any) -> str:
    """The recompute mode named by ``recompute`` (case-insensitive), checked.

    Parameters
    ----------
    recompute : str
        One of :data:`RECOMPUTE_MODES`.

    Returns
    -------
    str
        The lower-case name.

    Raises
    ------
    ParameterError
        If it is not one of :data:`RECOMPUTE_MODES`.

    References
    ----------
    Korthikanti et al. (2022), "Reducing Activation Recomputation in Large Transformer
    Models", arXiv:2205.05198, Sec. 5 (selective); Chen et al. (2016), "Training Deep
    Nets with Sublinear Memory Cost", arXiv:1604.06174 (full); JAX documentation,
    "Gradient checkpointing with jax.checkpoint", ``checkpoint_dots_with_no_batch_dims``
    (dots).

    Examples
    --------
    >>> recompute_mode("Full")
    'full'
    """
    key = str(recompute).lower()
    if key not in RECOMPUTE_MODES:
        raise ParameterError("recompute", recompute, _ALLOWED)
    return key


def _mode(recompute: Any) -> Any:
    """Recompute code(s), the index into RECOMPUTE_MODES (a name, a code or an array)."""
    if isinstance(recompute, str):
        return float(RECOMPUTE_MODES.index(recompute_mode(recompute)))
    code = num(recompute)
    top = len(RECOMPUTE_MODES) - 1
    bad = (
        code not in _CODES
        if type(code) is float
        else np.any((code < 0) | (code > top) | (code != np.round(code)))
    )
    if bad:
        raise ParameterError("recompute", recompute, _ALLOWED)
    return code


def activation_bytes_per_layer(
    seq_len: ArrayLike,
    batch_size: ArrayLike,
    hidden: ArrayLike,
    heads: ArrayLike,
    tp_size: ArrayLike = 1,
    sequence_parallel: bool = False,
    recompute: str = "none",
    bytes_per_element: ArrayLike = 2.0,
    *,
    ffn_hidden: ArrayLike | None = None,
    kv_heads: ArrayLike | None = None,
    gated_mlp: bool = False,
    flash_attention: ArrayLike = False,
    cp_size: ArrayLike = 1,
    head_dim: ArrayLike | None = None,
    gemm_input_bytes_per_element: float | None = None,
    dropout: bool = True,
) -> ArrayLike:
    """Activation bytes one transformer layer stores for the backward pass.

    The six cases of Korthikanti et al. (2022), Table 2, for 16-bit activations:

    ============================================  =================================
    no parallelism (``tp_size = 1``)              ``sbh(34 + 5as/h)``
    tensor parallel                               ``sbh(10 + 24/t + 5as/(ht))``
    tensor + sequence parallel                    ``sbh(34/t + 5as/(ht))``
    tensor parallel + selective recompute         ``sbh(10 + 24/t)``
    tensor + sequence parallel + selective        ``34 sbh/t``
    full recompute                                ``2 sbh``
    ============================================  =================================

    Selective recomputation drops the ``as²b`` attention terms (recomputed in the
    backward pass); full recomputation keeps only each layer's input (``e·sbh``, the
    paper's ``2sbh``). That input is a block-boundary tensor, so under sequence
    parallelism it is held split along the sequence, ``e·sbh/t``: Megatron-LM
    checkpoints the sequence-parallel hidden states as they are, which is why its
    ``distribute_saved_activations`` (split the saved input over the tensor-parallel
    ranks) "must be false when sequence parallel is enabled" (Megatron-Core,
    ``TransformerConfig.__post_init__``) — the input is already split. The paper's
    ``2sbh`` row is its tensor-parallel baseline without sequence parallelism. For an
    activation dtype of ``e`` bytes the masks stay one byte per element: see the
    module docstring.

    ``recompute="dots"`` stores the outputs of the weight matmuls and reruns the rest
    (JAX's ``checkpoint_dots_with_no_batch_dims``, MaxText's ``remat_policy:
    minimal``; :data:`RECOMPUTE_MODES`). The backward pass then keeps what it consumes
    of them — JAX saves only the residuals the backward reads: the layer's input (the
    scanned layer's carry) and the attention output projection's output (the second
    norm's input is their sum), both block-boundary tensors split by ``t`` only under
    sequence parallelism, and Q, K, V and the MLP's up-projection output(s) (``f``, or
    ``2f`` gated), split by ``t``: ``e·sbh·(2/t_sp + (q_dim + 2 kv_dim)/(h t) + f_up/(h t))``
    with ``t_sp = t`` under sequence parallelism and 1 otherwise. The down projection's
    output feeds only the residual sum, so it is not kept; no dropout masks (JAX
    training with dropout off).

    Other layer shapes follow from the same tensor list. Of the 12 split tensors, Q and
    the attention-output input are ``q_dim/h`` elements each (1 when
    ``heads × head_dim = h``), K and V ``kv_dim/h`` each (``kv_heads/heads`` under
    grouped-query attention), and the MLP
    stores ``2f/h`` (GeLU input and output; 8 at ``f = 4h``) or, gated, ``3f/h`` (the
    fused gate/up output, ``2f``, and the down-projection input, ``f``, as Megatron's
    fused SwiGLU keeps them). Defaults reproduce the paper. A FlashAttention kernel
    (Dao et al. 2022) stores no ``s×s`` matrix either: ``flash_attention=True`` drops
    the score terms as selective recomputation does.

    FP8 GEMMs (``gemm_input_bytes_per_element = 1``) keep their own quantised copies of
    their inputs for the weight gradient, as Transformer Engine's linear layers save them
    (the quantised input, one byte an element; Megatron-Core's layer runs QKV and the MLP's
    first projection as ``LayerNormLinear`` modules, the output projection and the MLP's
    second as ``Linear`` ones): the two normalised inputs (boundary tensors) and the
    second MLP projection's input are stored at that width instead of ``e``, and the
    output projection's input gains a one-byte copy beside the ``e``-byte attention output
    the fused attention's backward pass reads. For a Llama layer that is ``(h + f)/t``
    bytes a token fewer under sequence parallelism.

    Without dropout (``dropout=False``) the two one-byte masks and, with materialised
    scores, the softmax-dropout output and mask are not stored: ``2 sbh`` and
    ``3as²b`` bytes fewer at ``e = 2``.

    Context parallelism (``cp_size``, ring attention) gives each rank ``s/cp`` of the
    tokens: every ``sbh`` tensor shrinks by ``cp``; materialised scores (no
    FlashAttention) are ``a·(s/cp)·s·b`` — the local queries against all keys.

    One body serves floats (a math-only fast path, as one solve needs) and numpy
    arrays (a search over many layouts): ``recompute``, ``sequence_parallel`` and
    ``flash_attention`` may be arrays of codes (0/1/2) and flags.

    Parameters
    ----------
    seq_len : int or ndarray
        Sequence length ``s``.
    batch_size : int or ndarray
        Micro-batch size ``b`` (sequences).
    hidden : int or ndarray
        Hidden size ``h``.
    heads : int or ndarray
        Attention heads ``a``.
    tp_size : int or ndarray
        Tensor-parallel size ``t``.
    sequence_parallel : bool or ndarray
        Megatron sequence parallelism (splits the LayerNorm and dropout regions by ``t``).
    recompute : {"none", "selective", "full", "dots"} or int or ndarray
        Activation recomputation (or its code 0, 1, 2).
    bytes_per_element : float or ndarray
        Bytes per stored activation element ``e``; 2 (bf16/fp16) reproduces the paper.
    ffn_hidden : int or ndarray, optional
        MLP inner width ``f`` (default ``4h``); for a mixture of experts pass the width
        a token passes through, ``(experts_per_token + shared) × expert_ffn_hidden``.
    kv_heads : int or ndarray, optional
        Key/value heads (default ``heads``).
    gated_mlp : bool
        Gated (SwiGLU) MLP.
    flash_attention : bool or ndarray
        Fused attention: the ``s×s`` scores are never stored.
    cp_size : int or ndarray
        Context-parallel size (tokens of a sequence per rank ``s/cp``).
    head_dim : int or ndarray, optional
        Width of one attention head; default ``h/heads``. Sets ``q_dim = heads ×
        head_dim`` and ``kv_dim = kv_heads × head_dim`` where they differ from ``h``
        (PaLM, MaxText's scaled configs).
    gemm_input_bytes_per_element : float, optional
        Bytes of one element of the copies narrow-format GEMMs save of their inputs (1 for
        FP8 under Transformer Engine); default ``bytes_per_element``: the GEMMs keep the
        activations themselves.
    dropout : bool
        The hidden and attention dropouts run (the paper's case): their one-byte masks and
        the dropped-out scores are stored. ``False`` for a run with dropout probability 0,
        which stores neither (Llama, Megatron-Bridge's recipes).

    Returns
    -------
    float or ndarray
        Bytes per layer (per device, under tensor parallelism).

    References
    ----------
    Korthikanti et al. (2022), "Reducing Activation Recomputation in Large Transformer
    Models", arXiv:2205.05198, Sec. 4 and Table 2. Dao (2023), "FlashAttention-2",
    arXiv:2307.08691 (no stored scores). Liu, Zaharia & Abbeel (2023), "Ring Attention
    with Blockwise Transformers for Near-Infinite Context", arXiv:2310.01889, Sec. 3
    (each host holds one block of the sequence). NVIDIA TransformerEngine 2.x,
    ``transformer_engine/pytorch/module/linear.py`` and ``layernorm_linear.py`` (the
    quantised input saved for the weight-gradient GEMM) and its documentation's
    "Performance considerations" page ("By default, TE saves the columnwise quantized
    input for the backward pass"); Megatron-Core ``gpt_layer_specs.py`` (the layer's TE
    modules).

    Examples
    --------
    GPT-3 175B layer (s = 2048, b = 1, h = 12288, a = 96), t = 8 with sequence
    parallelism and selective recompute: 34 sbh / t = 106.95 MB.

    >>> round(float(activation_bytes_per_layer(2048, 1, 12288, 96, 8, True, "selective")) / 1e6, 2)
    106.95

    Full recomputation keeps the layer's 2 sbh = 50.33 MB input, one eighth of it per
    rank (6.29 MB) when that input is sequence-parallel.

    >>> [round(float(activation_bytes_per_layer(2048, 1, 12288, 96, 8, sp, "full")) / 1e6, 2)
    ...  for sp in (False, True)]
    [50.33, 6.29]

    A Llama-2-7B layer (multi-head, SwiGLU f = 11008) at s = 4096, b = 1, no parallelism,
    selective: sbh·(10 + 2·(4 + 3·11008/4096)) = 34.125 sbh = 0.573 GB. With FP8 GEMMs'
    one-byte input copies: 2 of the 4 boundary tensors and the f-wide down-projection input
    at one byte, the output projection's input with a one-byte copy beside it:
    34.125 − 2 − 11008/4096 + 1 = 30.44 sbh = 0.511 GB.

    >>> round(float(activation_bytes_per_layer(4096, 1, 4096, 32, recompute="selective",
    ...     ffn_hidden=11008, gated_mlp=True)) / 1e9, 3)
    0.573
    >>> round(float(activation_bytes_per_layer(4096, 1, 4096, 32, recompute="selective",
    ...     ffn_hidden=11008, gated_mlp=True, gemm_input_bytes_per_element=1.0)) / 1e9, 3)
    0.511

    Llama trains without dropout: the two one-byte masks go, 28.44 sbh = 0.477 GB.

    >>> round(float(activation_bytes_per_layer(4096, 1, 4096, 32, recompute="selective",
    ...     ffn_hidden=11008, gated_mlp=True, gemm_input_bytes_per_element=1.0,
    ...     dropout=False)) / 1e9, 3)
    0.477

    MaxText's 32B layer (h = 10240, 32 heads of 256, f = 32768, not gated) at s = 2048,
    b = 32, t = 4 with its activations sharded over the tensor axis, ``remat_policy:
    minimal``: (2·10240 + 3·8192 + 32768)/4 = 19,456 elements per token, 2.55 GB.

    >>> round(float(activation_bytes_per_layer(2048, 32, 10240, 32, 4, True, "dots",
    ...     ffn_hidden=32768, head_dim=256)) / 1e9, 2)
    2.55
    """
    args = (seq_len, batch_size, hidden, heads, tp_size, bytes_per_element, cp_size)
    if (
        type(recompute) is float
        and recompute in _CODES
        and type(flash_attention) is bool
        and type(sequence_parallel) in _FLAG_TYPES
        and all_float(*args)
    ):  # one solve: math only
        s, b, h, a, t, e, cp = args
        rc, sp, flash, o = recompute, sequence_parallel, flash_attention, ScalarOps
    else:  # arrays (a search), names, ints
        rc = _mode(recompute)
        s, b, h, a, t, e, cp = (num(x) for x in args)
        sp, flash = num(sequence_parallel), num(flash_attention)
        o = ops(s, b, h, a, t, e, rc, sp, flash, cp)
    sbh = s / cp * b * h
    # The tensors inside the attention and MLP blocks (12 sbh-sized ones for a GPT layer)
    # are always split by t; the 4 at block boundaries plus 2 one-byte masks are split
    # only with sequence parallelism.
    # Of the 4, the two normalised inputs are the QKV and first MLP GEMMs' inputs, kept at
    # the GEMMs' own width (g) when they save narrow copies.
    g = e if gemm_input_bytes_per_element is None else float(gemm_input_bytes_per_element)
    masks = 2.0 if dropout else 0.0
    boundary = (2.0 * e + 2.0 * g + masks) * o.where(sp, 1.0 / t, 1.0)
    kv = a if kv_heads is None else num(kv_heads)
    q_ratio = 1.0 if head_dim is None else a * num(head_dim) / h
    kv_ratio = q_ratio * kv / a
    f_ratio = 4.0 if ffn_hidden is None else num(ffn_hidden) / h
    # Q, the attention output, K, V and the MLP's up-projection output(s) at e bytes; the
    # down projection's input (f) at g; a narrow copy of the attention output (the output
    # projection's input) beside it when g differs
    inner = (
        (2.0 * q_ratio + 2.0 * kv_ratio + (2.0 if gated_mlp else 1.0) * f_ratio) * e
        + f_ratio * g
        + o.where(g != e, q_ratio * g, 0.0)
    )
    per_sbh = boundary + inner / t
    # softmax output, its dropout output (e bytes) and mask (1 byte): a·s_local·s·b
    # elements each, unless recomputed (selective) or never stored (FlashAttention)
    score_bytes = (2.0 * e + 1.0) if dropout else e
    scores = o.where(flash, 0.0, score_bytes * a * s / (h * t))
    kept = per_sbh + o.where(rc == 0.0, scores, 0.0)
    # full recomputation: the layer's input, split by t where it is sequence-parallel
    split = o.where(sp, 1.0 / t, 1.0)
    full = e * split
    # dots: the layer input and the output projection's output (boundary tensors), and
    # Q, K, V and the up-projection output(s) (inside the blocks, split by t)
    up_ratio = (2.0 if gated_mlp else 1.0) * f_ratio
    dots = e * (2.0 * split + (q_ratio + 2.0 * kv_ratio + up_ratio) / t)
    return ret(sbh * o.where(rc == _FULL, full, o.where(rc == _DOTS, dots, kept)))


def embedding_activation_bytes(
    seq_len: ArrayLike,
    batch_size: ArrayLike,
    hidden: ArrayLike,
    vocab: ArrayLike,
    tp_size: ArrayLike = 1,
    pp_size: ArrayLike = 1,
    microbatch_count: ArrayLike | None = None,
    inflight_microbatches: ArrayLike | None = None,
    dropout: bool = True,
) -> ArrayLike:
    """Activation bytes outside the transformer layers, on the first pipeline stage.

    The input-embedding dropout mask is split along the sequence and held for ``p``
    in-flight micro-batches: ``sbhp/t`` (the paper assumes ``m ≥ p``; with fewer
    micro-batches ``m`` only ``min(p, m)`` are in flight, which ``microbatch_count``
    accounts for). Without pipeline parallelism (``p = 1``) the
    same device also holds the final LayerNorm input (``2sbh/t``), the output-projection
    input (``2sbh/t``) and the fp32 logits for the cross-entropy (``4sbv/t``):
    ``4sbh/t · (1 + v/h)``.

    Parameters
    ----------
    seq_len, batch_size, hidden, vocab : int or ndarray
        ``s``, micro-batch ``b``, ``h``, vocabulary ``v``.
    tp_size : int or ndarray
        Tensor-parallel size ``t`` (sequence parallelism assumed, as in the paper).
    pp_size : int or ndarray
        Pipeline-parallel size ``p``.
    microbatch_count : int or ndarray, optional
        Micro-batches per step ``m``; default ``p`` (the paper's assumption).
    inflight_microbatches : int or ndarray, optional
        Micro-batches held at once, when the schedule says otherwise (GPipe: ``m``;
        see :func:`pipeline_inflight_microbatches`); overrides ``min(p, m)``.
    dropout : bool
        The embedding dropout runs (default True, the paper's case); ``False`` for a run
        with dropout probability 0, which stores no mask: the ``sbhp/t`` term goes.

    Returns
    -------
    float or ndarray
        Bytes (per device).

    References
    ----------
    Korthikanti et al. (2022), arXiv:2205.05198, Sec. 4.3: extra memory
    ``(sbhL/t)·(p/L + δ_{p=1}·(4/L)(1 + v/h))``.

    Examples
    --------
    s = 2048, b = 1, h = 12288, v = 51200, t = 8, p = 1: 3.1 MB of dropout mask plus
    65.0 MB of output-layer inputs and logits, 0.068 GB in all.

    >>> round(float(embedding_activation_bytes(2048, 1, 12288, 51200, 8, 1)) / 1e9, 3)
    0.068

    Without dropout, on the first of 8 stages, nothing is stored:

    >>> float(embedding_activation_bytes(2048, 1, 12288, 51200, 8, 8, dropout=False))
    0.0
    """
    args = (seq_len, batch_size, hidden, vocab, tp_size, pp_size)
    if all_float(*args) and type(inflight_microbatches) is float:  # one solve: math only
        s, b, h, v, t, p = args
        o = ScalarOps
    else:
        s, b, h, v, t, p = (num(x) for x in args)
        if inflight_microbatches is not None:
            inflight_microbatches = num(inflight_microbatches)
        if microbatch_count is not None:
            microbatch_count = num(microbatch_count)
        o = ops(s, b, h, v, t, p, inflight_microbatches, microbatch_count)
    if inflight_microbatches is not None:
        inflight = num(inflight_microbatches)
    elif microbatch_count is None:
        inflight = p
    else:
        inflight = o.min(p, num(microbatch_count))
    sbh_t = s * b * h / t
    mask = sbh_t * inflight if dropout else 0.0
    return ret(mask + o.where(p == 1.0, 4.0 * sbh_t * (1.0 + v / h), 0.0))


def pipeline_inflight_microbatches(
    pp_size: ArrayLike, microbatch_count: ArrayLike, gpipe: ArrayLike = False
) -> ArrayLike:
    """Micro-batches whose activations the first stage holds at once under 1F1B.

    The first stage runs ``p`` forward passes before its first backward, so it holds
    ``min(p, m)`` micro-batches of activations for its ``L/p`` layers — as much as ``L``
    layers of one micro-batch when ``m ≥ p``. (GPipe, which runs all ``m`` forwards
    first, holds ``m``.)

    Parameters
    ----------
    pp_size : int or ndarray
        Pipeline stages ``p``.
    microbatch_count : int or ndarray
        Micro-batches per step ``m``.
    gpipe : bool or ndarray
        GPipe schedule (all forwards first): ``m`` in flight.

    Returns
    -------
    float or ndarray
        Micro-batches (count).

    References
    ----------
    Huang et al. (2019), "GPipe", NeurIPS, Sec. 2.3 (all ``m`` forwards before the
    backwards); Narayanan et al. (2021), SC'21, Sec. 2.2.1 (1F1B); Korthikanti et al. (2022),
    Sec. 4.2.3 (the first stage stores ``L`` layers' activations).

    Examples
    --------
    p = 8, m = 32: the first stage holds 8 micro-batches.

    >>> float(pipeline_inflight_microbatches(8, 32))
    8.0
    """
    if all_float(pp_size, microbatch_count):  # one solve: math only
        return microbatch_count if gpipe else min(pp_size, microbatch_count)
    p, m, gp = num(pp_size), num(microbatch_count), num(gpipe)
    o = ops(p, m, gp)
    return ret(o.where(gp, m, o.min(p, m)))


def interleaved_activation_factor(
    pp_size: ArrayLike, v_stages: ArrayLike, microbatch_count: ArrayLike | None = None
) -> ArrayLike:
    """Extra first-stage activation memory of the interleaved 1F1B schedule.

    With ``v`` model chunks per device the first stage holds ``1 + (p − 1)/(p·v)``
    times the ``L`` layers' worth of activations of the plain schedule: Megatron-Core's
    warm-up runs ``2(p − 1) + (v − 1)·p`` chunk forwards on the first stage before its
    first backward, and one more in the steady state, ``p·v + p − 1`` chunk-micro-batches
    of ``L/(p·v)`` layers each. (The factor is 1 when ``v = 1``: no interleaving.)

    A step has only ``m·v`` chunk-micro-batches, so no stage holds more than all of them:
    with ``m = p`` micro-batches Megatron-Core runs every forward pass first
    (``all_warmup_microbatches``; the warm-up count is capped at the total), and the first
    stage holds ``m·v`` chunk-micro-batches, ``m/p`` times the ``L`` layers' worth. With
    ``microbatch_count`` given the factor is ``min(1 + (p − 1)/(p·v), m/p)``.

    Parameters
    ----------
    pp_size : int or ndarray
        Pipeline stages ``p``.
    v_stages : int or ndarray
        Model chunks (virtual stages) per device ``v``; 1 means no interleaving.
    microbatch_count : int or ndarray, optional
        Micro-batches per step ``m`` (at least ``p`` under interleaving); None: the
        paper's ``m ≫ p``, no cap.

    Returns
    -------
    float or ndarray
        Multiplicative factor.

    References
    ----------
    Korthikanti et al. (2022), arXiv:2205.05198, Sec. 4.2.3: "the total activations
    memory will be scaled by a factor of 1 + (p−1)/(pm), where m is the number of
    interleaving stages"; NVIDIA Megatron-LM, ``megatron/core/pipeline_parallel/
    schedules.py``, ``forward_backward_pipelining_with_interleaving`` (the warm-up count
    ``(p − rank − 1)·2 + (v − 1)·p``, capped at ``total_num_microbatches = m·v``; with
    ``num_microbatches == pipeline_parallel_size`` all forward passes run first);
    ``megatron/training/theoretical_memory_usage.py``, ``compute_activation_memory`` (the
    same penalty, uncapped).

    Examples
    --------
    p = 8, 3 chunks (the paper's 175B setup): factor 1.292. With only m = 8 micro-batches
    the first stage holds all 24 chunk-micro-batches, the plain schedule's 8·L/p = L
    layers: factor 1.

    >>> round(float(interleaved_activation_factor(8, 3)), 3)
    1.292
    >>> float(interleaved_activation_factor(8, 3, microbatch_count=8))
    1.0
    """
    if all_float(pp_size, v_stages) and (
        microbatch_count is None or type(microbatch_count) is float
    ):  # one solve: math only
        p, v, o = pp_size, v_stages, ScalarOps
        m = microbatch_count
    else:
        p, v = num(pp_size), num(v_stages)
        m = None if microbatch_count is None else num(microbatch_count)
        o = ops(p, v, m)
    factor = 1.0 + (p - 1.0) / (p * v)
    if m is not None:  # no more than the step's m·v chunk-micro-batches
        factor = o.min(factor, m / p)
    return ret(o.where(v > 1.0, factor, 1.0))


OPTIMIZER_STATE_BYTES: dict[str, float] = {
    "adam": 12.0,  # fp32 master 4 + momentum 4 + variance 4 (ZeRO's K = 12)
    "adamw": 12.0,
    "sgd_momentum": 8.0,  # fp32 master 4 + momentum 4
    "sgd": 4.0,  # fp32 master only
    "adam8bit": 6.0,  # fp32 master 4 + two 8-bit states 2 (Dettmers et al. 2022)
    "adafactor": 4.0,  # fp32 master 4; factored second moment is O(rows + cols)
    # the fp32 master rebuilt from the bf16 weight and a 16-bit remainder (Apex
    # DistributedFusedAdam store_param_remainders): remainder 2 + momentum 4 + variance 4
    "adam_param_remainders": 10.0,
    # moments kept in bf16 and no master copy (Apex DistributedFusedAdam dtype=bf16 with
    # bf16 weights: store_params off): momentum 2 + variance 2
    "adam_bf16": 4.0,
}
"""Optimizer bytes per parameter under mixed precision with fp32 master weights."""

_MASTER_BYTES = {"adam_param_remainders": 2.0, "adam_bf16": 0.0}
"""The master-copy share of an entry whose master is not a plain fp32 copy (default 4)."""

_OPT_ALIASES = {
    "adam_w": "adamw",
    "momentum": "sgd_momentum",
    "sgdm": "sgd_momentum",
    "adam_8bit": "adam8bit",
    "8bit_adam": "adam8bit",
    "adamw8bit": "adam8bit",
    "adamw_8bit": "adam8bit",
    "bnb_adam8bit": "adam8bit",
}


def optimizer_state_bytes_per_param(optimizer: str = "adam", master_weights: bool = True) -> float:
    """Bytes of optimizer state per parameter (``K`` in ZeRO's notation).

    Mixed-precision training keeps an fp32 master copy of the weights (4 bytes) besides
    the optimizer's own states; ``master_weights=False`` (pure fp32 training, where the
    weights themselves are fp32) drops those 4 bytes.

    ===============  ============================================  ====
    optimizer        state                                          K
    ===============  ============================================  ====
    adam / adamw     master 4 + momentum 4 + variance 4              12
    sgd_momentum     master 4 + momentum 4                            8
    sgd              master 4                                         4
    adam8bit         master 4 + 8-bit momentum 1 + 8-bit variance 1   6
    adafactor        master 4 (factored second moment, no momentum)   4
    adam_param_      remainder 2 + momentum 4 + variance 4           10
    remainders
    adam_bf16        bf16 momentum 2 + bf16 variance 2, no master     4
    ===============  ============================================  ====

    ``adam_param_remainders``: Apex's ``DistributedFusedAdam`` with
    ``store_param_remainders`` keeps, for bf16 weights and an fp32 optimizer, only the 16
    low-order bits of each fp32 master weight (the bf16 weight is its 16 high-order bits),
    which NeMo turns on whenever the model is bf16 and the optimizer fp32
    (``MegatronBaseModel.setup_optimization``: ``store_params=False``,
    ``store_param_remainders=True``); Megatron-Core's precision-aware distributed optimizer
    does the same on Transformer Engine 2.1 and later. ``adam_bf16``: the same optimizer
    with ``dtype: bf16`` keeps its moments in bf16 and, the weights being bf16 already, no
    master copy (``store_params=False``) — NeMo's Nemotron-4 340B configuration
    (``optim: {name: distributed_fused_adam, dtype: bf16, grad_sync_dtype: bf16}``).

    Parameters
    ----------
    optimizer : str
        One of the names above (``"adam_8bit"``, ``"momentum"`` and similar accepted).
    master_weights : bool
        Whether an fp32 master copy is kept (mixed precision).

    Returns
    -------
    float
        Bytes per parameter.

    Raises
    ------
    ParameterError
        For an unknown optimizer.

    References
    ----------
    Rajbhandari et al. (2020), "ZeRO: Memory Optimizations Toward Training Trillion
    Parameter Models", SC'20, Sec. 3.1 (K = 12 for mixed-precision Adam); Dettmers et
    al. (2022), "8-bit Optimizers via Block-wise Quantization", ICLR 2022; Shazeer &
    Stern (2018), "Adafactor: Adaptive Learning Rates with Sublinear Memory Cost";
    NVIDIA/apex, ``apex/contrib/optimizers/distributed_fused_adam.py`` (``dtype``,
    ``store_params``, ``store_param_remainders``); NVIDIA/NeMo,
    ``nemo/collections/nlp/models/language_modeling/megatron_base_model.py``
    (``setup_optimization``); NVIDIA/dgxc-benchmarking, ``nemotron/nemotron4-340b-synth.yaml``
    (NeMo's Nemotron-4 340B training configuration).

    Examples
    --------
    >>> optimizer_state_bytes_per_param("adam"), optimizer_state_bytes_per_param("adam8bit")
    (12.0, 6.0)
    >>> optimizer_state_bytes_per_param("adam_param_remainders")
    10.0
    >>> optimizer_state_bytes_per_param("adam_bf16", master_weights=False)
    4.0
    """
    key = str(optimizer).lower().replace("-", "_").replace(" ", "")
    key = _OPT_ALIASES.get(key, key)
    if key not in OPTIMIZER_STATE_BYTES:
        raise ParameterError("optimizer", optimizer, "one of " + ", ".join(OPTIMIZER_STATE_BYTES))
    k = OPTIMIZER_STATE_BYTES[key]
    return k if master_weights else k - _MASTER_BYTES.get(key, 4.0)


def optimizer_step_bytes_per_param(
    state_bytes: float,
    grad_bytes: float,
    weight_bytes: float,
    master_weights: bool = True,
    loss_scaling: bool = False,
) -> float:
    """HBM bytes one optimizer step moves per parameter the device updates.

    Megatron-LM's mixed-precision step is a chain of memory-bound kernels over the
    locally owned parameters, each its own pass:

    * with an fp32 master copy, the gradients are first copied into fp32 (read
      ``grad_bytes``, write 4; nothing when the buffer is already fp32);
    * loss-scaled fp16 unscales them and checks for inf/NaN (read 4, write 4);
    * the global gradient norm for clipping reads them once more (4);
    * the update reads the fp32 gradient (4) and reads and writes the optimizer state
      (``state_bytes`` each way; Adam's momentum, variance and the master copy: 12);
    * with a master copy, the new weights are written back at the model precision
      (read 4, write ``weight_bytes``); without one the update reads and writes the
      weights themselves (``2·weight_bytes``).

    Parameters
    ----------
    state_bytes : float
        Optimizer state per parameter, master copy included (``K``,
        :func:`optimizer_state_bytes_per_param`).
    grad_bytes : float
        Bytes of one element of the reduced gradient buffer.
    weight_bytes : float
        Bytes of one model weight.
    master_weights : bool
        An fp32 master copy is kept (mixed precision).
    loss_scaling : bool
        Dynamic loss scaling (fp16 training).

    Returns
    -------
    float
        Bytes per parameter.

    References
    ----------
    NVIDIA Megatron-LM, ``megatron/optimizer/optimizer.py``,
    ``Float16OptimizerWithFloat16Params.step`` (``_copy_model_grads_to_main_grads``,
    ``_unscale_main_grads_and_check_for_nan``, ``clip_grad_norm_fp32``, the fused Adam
    step, ``_copy_main_params_to_model_params``); Micikevicius et al. (2018), "Mixed
    Precision Training", ICLR (master weights, loss scaling).

    Examples
    --------
    bf16 with an fp32 gradient buffer: 4 (norm) + 4 + 2·12 (Adam) + 4 + 2 (write back)
    = 38 bytes; fp16 with an fp16 buffer adds the copy (2 + 4) and the unscale (4 + 4):
    52.

    >>> optimizer_step_bytes_per_param(12.0, 4.0, 2.0)
    38.0
    >>> optimizer_step_bytes_per_param(12.0, 2.0, 2.0, loss_scaling=True)
    52.0
    """
    fp32 = 4.0
    update = fp32 + 2.0 * state_bytes + fp32  # read gradient, read+write state; the norm
    if master_weights:
        copy_in = grad_bytes + fp32 if grad_bytes < fp32 else 0.0
        update += copy_in + fp32 + weight_bytes
    else:
        update += 2.0 * weight_bytes
    if loss_scaling:
        update += 2.0 * fp32
    return float(update)


def optimizer_step_time(
    dense_params: Any,
    expert_params: Any,
    dense_shards: Any,
    expert_shards: Any,
    step_bytes_per_param: Any,
    memory_Bps: Any,
) -> Any:
    """Time of one optimizer step on one device: the parameters it owns, each moving
    :func:`optimizer_step_bytes_per_param` bytes through HBM.

    Under ZeRO (stage 1 and above) each data-parallel rank updates only its shard of the
    optimizer state, so a device owns ``Ψ_dense / n_dense + Ψ_expert / n_expert``
    parameters: the dense ones sharded over every rank that holds a replica of them
    (``dp·ep·cp``), the experts' over the ranks that hold a replica of theirs
    (``dp·cp``). Without ZeRO both shard counts are 1. The step's kernels are
    memory-bound, so its time is bytes over bandwidth.

    Parameters
    ----------
    dense_params : float or ndarray
        Dense (non-expert) parameters of the device's model shard (its pipeline stage
        and tensor slice).
    expert_params : float or ndarray
        Expert parameters of the device's model shard.
    dense_shards, expert_shards : float or ndarray
        Ranks the optimizer state of each is split over (1 without ZeRO).
    step_bytes_per_param : float or ndarray
        Bytes one step moves per owned parameter
        (:func:`optimizer_step_bytes_per_param`; 38 in bf16 with Adam).
    memory_Bps : float or ndarray
        Achieved HBM bandwidth, in bytes per second.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Rajbhandari et al. (2020), "ZeRO: Memory Optimizations Toward Training Trillion
    Parameter Models", SC'20, Sec. 5.1 (each rank updates its partition of the optimizer
    states); NVIDIA Megatron-LM, ``megatron/optimizer/distrib_optimizer.py`` (the
    distributed optimizer's per-rank shard).

    Examples
    --------
    GPT-3 175B on TP 8 × PP 8 holds 2.73e9 parameters per device; ZeRO-1 over 4
    data-parallel ranks leaves it 6.8e8 to update at 38 bytes each: 26 GB, 15.0 ms at
    2.039 TB/s × 0.85.

    >>> round(optimizer_step_time(175e9 / 64, 0.0, 4.0, 4.0, 38.0, 2.039e12 * 0.85) * 1e3, 1)
    15.0
    """
    owned = dense_params / dense_shards + expert_params / expert_shards
    return owned * step_bytes_per_param / memory_Bps


def zero_model_state_bytes(
    params: ArrayLike,
    dp_size: ArrayLike,
    zero_stage: ArrayLike = 0,
    optimizer_bytes_per_param: ArrayLike = 12.0,
    weight_bytes: ArrayLike = 2.0,
    grad_bytes: ArrayLike = 2.0,
) -> ArrayLike:
    """Model-state bytes per device (weights, gradients, optimizer) under ZeRO.

    ====== ================ ===================================
    stage  partitions        bytes per device
    ====== ================ ===================================
    0      nothing           ``(w + g + K) Ψ``
    1      P_os              ``(w + g) Ψ + K Ψ / N_d``
    2      P_os+g            ``w Ψ + (g + K) Ψ / N_d``
    3      P_os+g+p          ``(w + g + K) Ψ / N_d``
    ====== ================ ===================================

    With ``w = g = 2`` and ``K = 12`` these are ZeRO's ``16Ψ``, ``4Ψ + 12Ψ/N_d``,
    ``2Ψ + 14Ψ/N_d`` and ``16Ψ/N_d``.

    Parameters
    ----------
    params : float or ndarray
        Parameters ``Ψ`` held by the data-parallel group (per model-parallel shard).
    dp_size : int or ndarray
        Data-parallel degree ``N_d``.
    zero_stage : int or ndarray
        0, 1, 2 or 3.
    optimizer_bytes_per_param : float or ndarray
        ``K`` (see :func:`optimizer_state_bytes_per_param`).
    weight_bytes, grad_bytes : float or ndarray
        Bytes per weight and per gradient element (2 for fp16/bf16).

    Returns
    -------
    float or ndarray
        Bytes per device.

    References
    ----------
    Rajbhandari et al. (2020), "ZeRO: Memory Optimizations Toward Training Trillion
    Parameter Models", SC'20, Fig. 1 and Table 1.

    Examples
    --------
    Ψ = 7.5B on N_d = 64: 120 GB, 31.4 GB, 16.6 GB and 1.88 GB for stages 0–3 (Fig. 1).

    >>> [round(float(zero_model_state_bytes(7.5e9, 64, z)) / 1e9, 2) for z in range(4)]
    [120.0, 31.41, 16.64, 1.88]
    """
    w, g, k = zero_model_state_breakdown(
        params, dp_size, zero_stage, optimizer_bytes_per_param, weight_bytes, grad_bytes
    )
    return ret(w + g + k)


def zero_model_state_breakdown(
    params: ArrayLike,
    dp_size: ArrayLike,
    zero_stage: ArrayLike = 0,
    optimizer_bytes_per_param: ArrayLike = 12.0,
    weight_bytes: ArrayLike = 2.0,
    grad_bytes: ArrayLike = 2.0,
) -> tuple[ArrayLike, ArrayLike, ArrayLike]:
    """Weights, gradients and optimizer state per device under ZeRO, separately.

    The three terms of :func:`zero_model_state_bytes`: ``w Ψ / N_d`` from stage 3 on
    (else ``w Ψ``), ``g Ψ / N_d`` from stage 2 and ``K Ψ / N_d`` from stage 1.

    Parameters
    ----------
    params : float or ndarray
        Parameters ``Ψ`` held by the data-parallel group. As in
        :func:`zero_model_state_bytes`.
    dp_size : int or ndarray
        Data-parallel degree ``N_d`` (ranks). As in :func:`zero_model_state_bytes`.
    zero_stage : int or ndarray
        ZeRO stage, 0, 1, 2 or 3. As in :func:`zero_model_state_bytes`.
    optimizer_bytes_per_param : float or ndarray
        Optimizer-state bytes per parameter ``K``. As in :func:`zero_model_state_bytes`.
    weight_bytes : float or ndarray
        Bytes per weight element ``w`` (2 for fp16/bf16). As in
        :func:`zero_model_state_bytes`.
    grad_bytes : float or ndarray
        Bytes per gradient element ``g`` (2 for fp16/bf16). As in
        :func:`zero_model_state_bytes`.

    Returns
    -------
    tuple of (float or ndarray) ×3
        ``(weights, gradients, optimizer)`` in bytes per device.

    References
    ----------
    Rajbhandari et al. (2020), "ZeRO: Memory Optimizations Toward Training Trillion
    Parameter Models", SC'20, Sec. 5 and Table 1.

    Examples
    --------
    Ψ = 7.5B, N_d = 64, stage 2, w = g = 2, K = 12: 15 GB of weights, 0.234 GB of
    gradients, 1.41 GB of optimizer state.

    >>> [round(x / 1e9, 3) for x in zero_model_state_breakdown(7.5e9, 64, 2)]
    [15.0, 0.234, 1.406]
    """
    args = (zero_stage, params, dp_size, weight_bytes, grad_bytes, optimizer_bytes_per_param)
    if all_float(*args):  # one solve: math only
        z, psi, n, w, g, k = args
    else:
        z, psi, n, w, g, k = (num(x) for x in args)
    if type(z) is float:
        if z not in (0.0, 1.0, 2.0, 3.0):
            raise ParameterError("zero_stage", zero_stage, "0, 1, 2 or 3")
    elif np.any((z < 0) | (z > 3) | (z != np.round(z))):
        raise ParameterError("zero_stage", zero_stage, "0, 1, 2 or 3")
    o = ops(z, psi, n, w, g, k)
    # each state is divided by N_d once the stage partitions it
    return (
        ret(psi * w / o.where(z >= 3.0, n, 1.0)),
        ret(psi * g / o.where(z >= 2.0, n, 1.0)),
        ret(psi * k / o.where(z >= 1.0, n, 1.0)),
    )


def zero_communication_elements(params: ArrayLike, zero_stage: ArrayLike = 0) -> ArrayLike:
    """Data-parallel communication volume per step, in parameter elements, under ZeRO.

    Plain data parallelism all-reduces the gradients: a reduce-scatter plus an
    all-gather, ``2Ψ``. Stages 1 and 2 keep that volume (reduce-scatter the gradients,
    all-gather the updated parameters). Stage 3 all-gathers the parameters again in the
    backward pass: ``3Ψ``. Multiply by bytes per element for bytes.

    Parameters
    ----------
    params : float or ndarray
        Parameters ``Ψ``.
    zero_stage : int or ndarray
        0, 1, 2 or 3.

    Returns
    -------
    float or ndarray
        Elements sent (and received) per device per step.

    References
    ----------
    Rajbhandari et al. (2020), SC'20, Sec. 7 ("Communication Analysis of ZeRO-DP").

    Examples
    --------
    >>> float(zero_communication_elements(1e9, 2)), float(zero_communication_elements(1e9, 3))
    (2000000000.0, 3000000000.0)
    """
    stage = np.asarray(zero_stage)
    if np.any((stage < 0) | (stage > 3) | (stage != np.round(stage))):
        raise ParameterError("zero_stage", zero_stage, "0, 1, 2 or 3")
    return np.asarray(params, dtype=float) * np.where(stage >= 3, 3.0, 2.0)
