"""Parameter, FLOP and KV-cache counts of decoder-only transformers.

Conventions (stated once, used everywhere):

* A multiply-add is 2 FLOPs; a matrix product ``(m×k)·(k×n)`` costs ``2mkn``.
* Attention FLOPs: for every query token, ``QKᵀ`` costs ``2·ctx·d_attn`` and ``AV``
  another ``2·ctx·d_attn`` per layer, ``ctx`` being the number of keys it attends to.
  Counting every key (``causal=False``) gives ``4·l·s·d_attn`` per token, the convention
  of Megatron-LM (Narayanan et al. 2021) and Korthikanti et al. (2022) and of the MFU
  numbers they publish. Averaging the causal mask over a sequence halves it to
  ``2·l·s·d_attn`` (``causal=True``), which equals the "context-dependent" term of
  Kaplan et al. (2020, Table 1). Decoding one token against a cache of ``ctx`` keys
  does exactly ``4·l·ctx·d_attn``: no masked work there.
* Backward costs twice the forward (gradients with respect to both inputs and weights).

Every function is numpy-broadcastable: pass arrays to sweep configurations in one call.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlsys.core.checks import counts
from mlsys.core.errors import ParameterError
from mlsys.core.formulas._ops import num, ret
from mlsys.core.formulas.memory import recompute_mode

__all__ = [
    "megatron_param_count",
    "transformer_param_breakdown",
    "transformer_param_count",
    "attention_flops_per_token",
    "forward_flops_per_token",
    "training_flops_per_token",
    "residual_rerun_share",
    "megatron_flops_per_iteration",
    "korthikanti_model_flops",
    "korthikanti_hardware_flops",
    "training_flops",
    "kv_cache_bytes",
]

ArrayLike = Any

_NORM_PARAMS = {"layernorm": 2, "rmsnorm": 1, "none": 0}


def _norm_factor(norm: str) -> int:
    key = str(norm).lower().replace("_", "").replace("-", "")
    if key not in _NORM_PARAMS:
        raise ParameterError("norm", norm, "one of " + ", ".join(_NORM_PARAMS))
    return _NORM_PARAMS[key]


# --------------------------------------------------------------------------- parameters
def megatron_param_count(
    layers: ArrayLike, hidden: ArrayLike, vocab: ArrayLike, seq_len: ArrayLike
) -> ArrayLike:
    """Parameters of a GPT-style transformer, Megatron-LM Eq. (2).

    ``P = 12 l h² (1 + 13/(12h) + (V + s)/(12 l h))``: per layer 12h² weights and 13h
    biases and LayerNorm gains (attention QKV and output projections, a 4h MLP, two
    LayerNorms), plus a tied ``V×h`` word embedding and ``s×h`` learned positions. The
    final LayerNorm (2h) is not counted.

    Parameters
    ----------
    layers : int or ndarray
        Transformer layers ``l``.
    hidden : int or ndarray
        Hidden size ``h``.
    vocab : int or ndarray
        Vocabulary size ``V``.
    seq_len : int or ndarray
        Sequence length ``s`` (learned position embeddings).

    Returns
    -------
    float or ndarray
        Parameters (count).

    References
    ----------
    Narayanan et al. (2021), "Efficient Large-Scale Language Model Training on GPU
    Clusters Using Megatron-LM", SC'21, Eq. (2).

    Examples
    --------
    GPT-3 175B (l = 96, h = 12288, V = 51200, s = 2048): 174.6 billion (Brown et al.
    2020 report 175.0B; Narayanan et al. Table 1 use 174.6B).

    >>> round(float(megatron_param_count(96, 12288, 51200, 2048)) / 1e9, 1)
    174.6
    """
    nl, h = num(layers), num(hidden)
    out = (
        12.0 * nl * h**2 * (1.0 + 13.0 / (12.0 * h) + (num(vocab) + num(seq_len)) / (12.0 * nl * h))
    )
    return ret(out)


def transformer_param_breakdown(
    layers: ArrayLike,
    hidden: ArrayLike,
    heads: ArrayLike,
    vocab: ArrayLike,
    *,
    kv_heads: ArrayLike | None = None,
    head_dim: ArrayLike | None = None,
    ffn_hidden: ArrayLike | None = None,
    gated_mlp: bool = False,
    norm: str = "layernorm",
    bias: bool = True,
    tied_embeddings: bool = True,
    max_positions: ArrayLike = 0,
    final_norm: bool = True,
    experts: ArrayLike = 1,
    experts_per_token: ArrayLike = 1,
    shared_experts: ArrayLike = 0,
    expert_ffn_hidden: ArrayLike | None = None,
    dense_layers: ArrayLike = 0,
) -> dict[str, ArrayLike]:
    """Parameters of a decoder-only transformer, component by component.

    Covers GPT-style models (LayerNorm, biases, learned positions, tied embeddings) and
    modern ones (RMSNorm, no biases, RoPE — no position parameters —, untied output
    head, grouped-query attention, gated SwiGLU MLP with ``3·h·f`` weights) and
    mixtures of experts (``experts`` routed experts of which ``experts_per_token`` run
    for each token, ``shared_experts`` that always run, a linear router ``h × experts``,
    and ``dense_layers`` leading layers with a dense MLP).

    Parameters
    ----------
    layers, hidden, heads, vocab : int or ndarray
        Layers ``l``, hidden size ``h``, query heads ``a`` and vocabulary ``V``.
    kv_heads : int or ndarray, optional
        Key/value heads (GQA/MQA); default ``heads`` (multi-head attention).
    head_dim : int or ndarray, optional
        Dimension per head; default ``hidden / heads``.
    ffn_hidden : int or ndarray, optional
        Inner size ``f`` of the dense MLP; default ``4·hidden``.
    gated_mlp : bool
        ``True`` for a gated MLP (SwiGLU/GeGLU: gate, up and down, ``3·h·f``); ``False``
        for the two-matrix GeLU MLP (``2·h·f``).
    norm : {"layernorm", "rmsnorm", "none"}
        LayerNorm has a gain and a bias (``2h``), RMSNorm a gain (``h``).
    bias : bool
        Whether linear layers carry biases.
    tied_embeddings : bool
        Whether the output head reuses the input embedding matrix.
    max_positions : int or ndarray
        Learned position embeddings (``0`` for RoPE/ALiBi).
    final_norm : bool
        Whether a norm follows the last layer.
    experts : int or ndarray
        Mixture of experts: routed experts per MoE layer. ``experts = 1`` is a dense
        model.
    experts_per_token : int or ndarray
        Mixture of experts: routed experts active per token.
    shared_experts : int or ndarray
        Mixture of experts: always-active shared experts.
    expert_ffn_hidden : int or ndarray, optional
        Inner size of each expert's MLP; default ``ffn_hidden``.
    dense_layers : int or ndarray
        Leading layers with a dense MLP (of size ``ffn_hidden``) in an MoE model.

    Returns
    -------
    dict of str to float or ndarray
        Parameter counts: ``embedding`` (input table), ``positions``, ``output_head``
        (0 when tied), ``attention``, ``mlp_dense``, ``mlp_experts`` (all routed
        experts), ``mlp_experts_active``, ``mlp_shared``, ``router``, ``norms``,
        ``per_layer_dense`` (one dense layer), ``total``, ``active`` (parameters used
        for one token), ``matmul_active`` (active parameters used as matrix-multiply
        weights: ``active`` minus the embedding lookup and positions; the LM head counts)
        and ``layers_matmul_active`` (the same, transformer layers only).

    References
    ----------
    Narayanan et al. (2021), SC'21, Eq. (2) (the dense GPT form this reduces to);
    Ainslie et al. (2023), "GQA: Training Generalized Multi-Query Transformer Models";
    Shazeer (2020), "GLU Variants Improve Transformer"; Fedus, Zoph & Shazeer (2022),
    "Switch Transformers"; Jiang et al. (2024), "Mixtral of Experts".

    Examples
    --------
    Llama-2-7B (32 layers, h = 4096, 32 heads, f = 11008, V = 32000, SwiGLU, RMSNorm,
    no biases, untied, RoPE): 6.74 billion (Touvron et al. 2023).

    >>> b = transformer_param_breakdown(32, 4096, 32, 32000, ffn_hidden=11008,
    ...     gated_mlp=True, norm="rmsnorm", bias=False, tied_embeddings=False)
    >>> round(float(b["total"]) / 1e9, 2)
    6.74
    """
    f64 = float
    # the shape's counts (scalars or arrays): -1 layers gave -776 parameters
    nl = np.asarray(counts("layers", layers), dtype=f64)
    h = np.asarray(counts("hidden", hidden), dtype=f64)
    a = np.asarray(counts("heads", heads), dtype=f64)
    V = np.asarray(counts("vocab", vocab, 0), dtype=f64)  # 0: no embedding (a layer alone)
    kv = a if kv_heads is None else np.asarray(kv_heads, dtype=f64)
    hd = h / a if head_dim is None else np.asarray(head_dim, dtype=f64)
    f = 4.0 * h if ffn_hidden is None else np.asarray(ffn_hidden, dtype=f64)
    fe = f if expert_ffn_hidden is None else np.asarray(expert_ffn_hidden, dtype=f64)
    E = np.asarray(experts, dtype=f64)
    k = np.asarray(experts_per_token, dtype=f64)
    S = np.asarray(shared_experts, dtype=f64)
    Ld = np.asarray(dense_layers, dtype=f64)
    nb = 1.0 if bias else 0.0
    nf = float(_norm_factor(norm))
    mats = 3.0 if gated_mlp else 2.0

    q_dim, kv_dim = a * hd, kv * hd
    attention = h * q_dim + 2.0 * h * kv_dim + q_dim * h + nb * (q_dim + 2.0 * kv_dim + h)

    def mlp(width: ArrayLike) -> ArrayLike:
        return mats * h * width + nb * ((mats - 1.0) * width + h)

    moe = E > 1
    moe_layers = np.where(moe, nl - Ld, 0.0)
    dense_mlp_layers = nl - moe_layers
    norms_layer = 2.0 * nf * h
    mlp_dense = dense_mlp_layers * mlp(f)
    mlp_experts = moe_layers * E * mlp(fe)
    mlp_experts_active = moe_layers * np.minimum(k, E) * mlp(fe)
    mlp_shared = moe_layers * S * mlp(fe)
    router = moe_layers * h * E
    attention_all = nl * attention
    norms = nl * norms_layer + (nf * h if final_norm else 0.0)
    embedding = V * h
    positions = np.asarray(max_positions, dtype=f64) * h
    output_head = 0.0 * V if tied_embeddings else V * h
    shared_part = attention_all + norms + embedding + positions + output_head
    total = shared_part + mlp_dense + mlp_experts + mlp_shared + router
    active = shared_part + mlp_dense + mlp_experts_active + mlp_shared + router
    # The input lookup and positions are gathers, not matmuls; a tied table is also the
    # LM head, so it counts once as matmul weights.
    layers_matmul = attention_all + mlp_dense + mlp_experts_active + mlp_shared + router
    matmul_active = layers_matmul + V * h

    out = {
        "embedding": embedding,
        "positions": positions,
        "output_head": output_head,
        "attention": attention_all,
        "mlp_dense": mlp_dense,
        "mlp_experts": mlp_experts,
        "mlp_experts_active": mlp_experts_active,
        "mlp_shared": mlp_shared,
        "router": router,
        "norms": norms,
        "per_layer_dense": attention + mlp(f) + norms_layer,
        "total": total,
        "active": active,
        "matmul_active": matmul_active,
        "layers_matmul_active": layers_matmul,
    }
    return {key: (v[()] if np.ndim(v) == 0 else v) for key, v in out.items()}


def transformer_param_count(
    layers: ArrayLike,
    hidden: ArrayLike,
    heads: ArrayLike,
    vocab: ArrayLike,
    *,
    active: bool = False,
    **architecture: Any,
) -> ArrayLike:
    """Total (or active-per-token) parameters of a decoder-only transformer.

    A thin front to :func:`transformer_param_breakdown`, which documents every keyword.
    For a mixture of experts ``active=True`` counts only the experts one token uses,
    the number that sets per-token FLOPs; ``active=False`` counts every parameter, the
    number that sets memory.

    Parameters
    ----------
    layers, hidden, heads, vocab : int or ndarray
        Layers, hidden size, query heads, vocabulary.
    active : bool
        Count the parameters one token uses instead of all of them.
    **architecture
        Keywords of :func:`transformer_param_breakdown` (``kv_heads``, ``ffn_hidden``,
        ``gated_mlp``, ``norm``, ``bias``, ``tied_embeddings``, ``experts`` ...).

    Returns
    -------
    float or ndarray
        Parameters (count).

    References
    ----------
    Jiang et al. (2024), "Mixtral of Experts", arXiv:2401.04088 (46.7B total, 12.9B
    active for Mixtral 8x7B).

    Examples
    --------
    Mixtral 8x7B (32 layers, h 4096, 32/8 heads, f 14336, 8 experts, top-2, V 32000):
    46.7B total, 12.9B active.

    >>> kw = dict(kv_heads=8, ffn_hidden=14336, gated_mlp=True, norm="rmsnorm",
    ...           bias=False, tied_embeddings=False, experts=8, experts_per_token=2)
    >>> round(float(transformer_param_count(32, 4096, 32, 32000, **kw)) / 1e9, 1)
    46.7
    >>> round(float(transformer_param_count(32, 4096, 32, 32000, active=True, **kw)) / 1e9, 1)
    12.9
    """
    b = transformer_param_breakdown(layers, hidden, heads, vocab, **architecture)
    return b["active"] if active else b["total"]


# --------------------------------------------------------------------------- FLOPs
def attention_flops_per_token(
    layers: ArrayLike, context_len: ArrayLike, d_attn: ArrayLike, causal: bool = True
) -> ArrayLike:
    """Forward FLOPs per token of the attention scores (``QKᵀ``) and context (``AV``).

    Parameters
    ----------
    layers : int or ndarray
        Transformer layers.
    context_len : int or ndarray
        Keys each query sees: the sequence length in training and prefill, the cache
        length when decoding one token.
    d_attn : int or ndarray
        Attention width ``heads × head_dim`` (the query width; GQA does not change it).
    causal : bool
        ``True``: average over a causal mask, ``2·l·ctx·d_attn`` (Kaplan et al. 2020).
        ``False``: every key, ``4·l·ctx·d_attn`` (Megatron-LM, Korthikanti, PaLM MFU;
        also the exact count for decoding one token against ``ctx`` cached keys).

    Returns
    -------
    float or ndarray
        FLOP per token.

    References
    ----------
    Kaplan et al. (2020), "Scaling Laws for Neural Language Models", Table 1;
    Narayanan et al. (2021), SC'21, Sec. 5.1 (the ``4Bs²h`` per layer term).

    Examples
    --------
    GPT-3 (96 layers, d_attn 12288) at s = 2048, causal: 4.83 GFLOP per token.

    >>> round(float(attention_flops_per_token(96, 2048, 12288)) / 1e9, 2)
    4.83
    """
    factor = 2.0 if causal else 4.0
    return factor * num(layers) * num(context_len) * num(d_attn)


def forward_flops_per_token(
    matmul_params: ArrayLike,
    layers: ArrayLike,
    context_len: ArrayLike,
    d_attn: ArrayLike,
    causal: bool = True,
) -> ArrayLike:
    """Forward-pass FLOPs per token: ``2 · N_matmul + attention``.

    Parameters
    ----------
    matmul_params : float or ndarray
        Parameters a token multiplies by (for MoE the *active* ones; exclude embedding
        lookups, include the LM head): ``transformer_param_breakdown(...)["matmul_active"]``.
    layers, context_len, d_attn : int or ndarray
        As in :func:`attention_flops_per_token`.
    causal : bool
        Attention-FLOP convention (see the module docstring).

    Returns
    -------
    float or ndarray
        FLOP per token.

    References
    ----------
    Kaplan et al. (2020), "Scaling Laws for Neural Language Models", Eq. (2.2):
    ``C_forward ≈ 2N + 2 n_layer n_ctx d_attn``.

    Examples
    --------
    Llama-2-7B (6.61e9 matmul parameters, 32 layers, d_attn 4096) at 4096 tokens,
    causal: 13.22 + 1.07 = 14.29 GFLOP per token.

    >>> round(float(forward_flops_per_token(6.607e9, 32, 4096, 4096)) / 1e9, 2)
    14.29
    """
    return 2.0 * num(matmul_params) + attention_flops_per_token(layers, context_len, d_attn, causal)


def training_flops_per_token(
    layers_matmul_params: ArrayLike,
    head_matmul_params: ArrayLike,
    layers: ArrayLike,
    context_len: ArrayLike,
    d_attn: ArrayLike,
    causal: bool = False,
    recompute: str = "none",
) -> ArrayLike:
    """Executed FLOPs per token of one training step (forward + backward + recompute).

    Forward is ``2N + attention``; backward twice that. Recomputation adds work that the
    model-FLOPs count (used for MFU) excludes: ``"full"`` reruns the forward of every
    transformer layer (not the LM head), ``"selective"`` reruns only the attention
    score/context part (``QKᵀ``, softmax, ``AV``), and so does ``"dots"`` (it keeps the
    weight matmuls' outputs and reruns attention and element-wise work, which adds no
    matmul FLOPs beyond attention's).

    Parameters
    ----------
    layers_matmul_params : float or ndarray
        Matrix-multiply parameters inside the transformer layers (active ones for MoE).
    head_matmul_params : float or ndarray
        Parameters of the output projection to the vocabulary (``V·h``).
    layers, context_len, d_attn : int or ndarray
        As in :func:`attention_flops_per_token`.
    causal : bool
        Attention convention; default ``False`` (Megatron-LM's, so the result matches
        its Eq. (3)).
    recompute : {"none", "selective", "full", "dots"}
        Activation recomputation (:data:`mlsys.core.formulas.memory.RECOMPUTE_MODES`).

    Returns
    -------
    float or ndarray
        FLOP per token.

    References
    ----------
    Narayanan et al. (2021), SC'21, Eq. (3) and its derivation (Sec. 5.1);
    Korthikanti et al. (2022), "Reducing Activation Recomputation in Large Transformer
    Models", Sec. 6 (model vs hardware FLOPs).

    Examples
    --------
    GPT-3 175B (12 l h² = 173.9e9 layer weights, V h = 629.1e6 head, 96 layers, s = 2048)
    with full recompute: 4 × 2 × 173.9e9 + 3 × 2 × 629.1e6 + 4 × 4 × 96 × 2048 × 12288
    = 1.434e12 FLOP per token, which is Megatron Eq. (3) divided by ``B s``.

    >>> round(float(training_flops_per_token(12 * 96 * 12288**2, 51200 * 12288, 96, 2048,
    ...     12288, recompute="full")) / 1e12, 3)
    1.434
    """
    mode = recompute_mode(recompute)
    layer_fwd = 2.0 * num(layers_matmul_params)
    attn_fwd = attention_flops_per_token(layers, context_len, d_attn, causal)
    head_fwd = 2.0 * num(head_matmul_params)
    total = 3.0 * (layer_fwd + attn_fwd + head_fwd)
    if mode == "full":
        total = total + layer_fwd + attn_fwd
    elif mode in ("selective", "dots"):  # the attention is rerun, the weight matmuls not
        total = total + attn_fwd
    return total


def residual_rerun_share(
    q_dim: ArrayLike, kv_dim: ArrayLike, ffn_width: ArrayLike, gated: bool = False
) -> ArrayLike:
    """Share of a layer's forward matmul FLOPs that a residual-only rerun recomputes.

    Full recomputation that reruns only what the backward pass consumes (JAX's
    ``jax.checkpoint``: the recomputation is dead-code-eliminated to the residuals the
    backward needs) skips the two output projections: a matmul ``Y = XW`` needs ``X``
    (for ``dW = XᵀdY``) and ``W`` (for ``dX = dYWᵀ``) in the backward pass, never
    ``Y``, and the outputs of the attention output projection and of the MLP down
    projection feed only the residual sum. The query/key/value and MLP input
    projections are rerun, as their outputs are the inputs of the next matmuls.
    Megatron-LM's and PyTorch's checkpointing rerun the whole layer (share 1).

    Parameters
    ----------
    q_dim : float or ndarray
        Query width ``heads·d_head`` (elements).
    kv_dim : float or ndarray
        Key (= value) width ``kv_heads·d_head`` (elements).
    ffn_width : float or ndarray
        MLP width a token passes through (elements; for a mixture of experts, the
        active experts' summed width).
    gated : bool
        Gated (SwiGLU) MLP: two input projections of ``ffn_width``.

    Returns
    -------
    float or ndarray
        ``(q + 2kv + (1+g)f) / (q + 2kv + q + (1+g)f + f)`` (fraction, dimensionless).

    References
    ----------
    JAX documentation, "Control autodiff's saved values with jax.checkpoint (aka
    jax.remat)": only the inputs of a checkpointed function are saved, "and any
    residuals consumed on the backward pass are re-computed from those inputs as
    needed". Griewank & Walther (2008), *Evaluating Derivatives*, Sec. 3 (the adjoint
    of a linear map needs its input, not its output).

    Examples
    --------
    PaLM 540B (48 query heads of 256, one K/V head, SwiGLU of 73,728):
    ``(12288 + 512 + 147456) / (12288 + 512 + 12288 + 147456 + 73728) = 0.6507``.

    >>> round(float(residual_rerun_share(12288, 256, 73728, gated=True)), 4)
    0.6507
    """
    q, kv, f = num(q_dim), num(kv_dim), num(ffn_width)
    rerun = q + 2.0 * kv + (2.0 if gated else 1.0) * f
    return rerun / (rerun + q + f)


def megatron_flops_per_iteration(
    batch_size: ArrayLike,
    seq_len: ArrayLike,
    layers: ArrayLike,
    hidden: ArrayLike,
    vocab: ArrayLike,
) -> ArrayLike:
    """FLOPs of one training iteration with full recomputation, Megatron-LM Eq. (3).

    ``F = 96 B s l h² (1 + s/(6h) + V/(16 l h))``: forward, backward (2×) and a second
    forward for recomputation of every layer; the LM head is not recomputed.

    Parameters
    ----------
    batch_size : int or ndarray
        Global batch ``B`` in sequences.
    seq_len : int or ndarray
        Sequence length ``s``.
    layers, hidden, vocab : int or ndarray
        ``l``, ``h``, ``V``.

    Returns
    -------
    float or ndarray
        FLOP per iteration.

    References
    ----------
    Narayanan et al. (2021), "Efficient Large-Scale Language Model Training on GPU
    Clusters Using Megatron-LM", SC'21, Eq. (3).

    Examples
    --------
    GPT-3 175B, B = 1536, s = 2048, V = 51200: 4.51e18 FLOP per iteration.

    >>> round(float(megatron_flops_per_iteration(1536, 2048, 96, 12288, 51200)) / 1e18, 2)
    4.51
    """
    B, s, nl, h = num(batch_size), num(seq_len), num(layers), num(hidden)
    return 96.0 * B * s * nl * h**2 * (1.0 + s / (6.0 * h) + vocab / (16.0 * nl * h))


def _korthikanti_flops(
    batch_size: ArrayLike,
    seq_len: ArrayLike,
    layers: ArrayLike,
    hidden: ArrayLike,
    vocab: ArrayLike,
    attention_divisor: float,
) -> ArrayLike:
    # 72 B L s h² (1 + s/(k h) + V/(12 h L)); k = 6 for model FLOPs, 3 for hardware FLOPs.
    B, s, L, h = num(batch_size), num(seq_len), num(layers), num(hidden)
    return 72.0 * B * L * s * h**2 * (1.0 + s / (attention_divisor * h) + vocab / (12.0 * h * L))


def korthikanti_model_flops(
    batch_size: ArrayLike,
    seq_len: ArrayLike,
    layers: ArrayLike,
    hidden: ArrayLike,
    vocab: ArrayLike,
) -> ArrayLike:
    """Model FLOPs per iteration (no recomputation counted), Korthikanti et al. (2022).

    ``72 B L s h² (1 + s/(6h) + V/(12 h L))``: forward plus backward of every layer and
    the LM head. Model FLOPs utilisation (MFU) divides this by time and peak.

    Parameters
    ----------
    batch_size, seq_len, layers, hidden, vocab : int or ndarray
        ``B``, ``s``, ``L``, ``h``, ``V``.

    Returns
    -------
    float or ndarray
        FLOP per iteration.

    References
    ----------
    Korthikanti et al. (2022), "Reducing Activation Recomputation in Large Transformer
    Models", arXiv:2205.05198, Sec. 6.3 (model FLOPs).

    Examples
    --------
    The 175B run of their Table 3 (B = 64, s = 2048, L = 96, h = 12288, V = 51200):
    1.411e17 FLOP per iteration; at 13.75 s on 64 A100s (312 TFLOP/s) that is MFU 51.4%.

    >>> f = float(korthikanti_model_flops(64, 2048, 96, 12288, 51200))
    >>> round(f / 1e17, 3), round(100 * f / (13.75 * 64 * 312e12), 1)
    (1.411, 51.4)
    """
    return _korthikanti_flops(batch_size, seq_len, layers, hidden, vocab, attention_divisor=6.0)


def korthikanti_hardware_flops(
    batch_size: ArrayLike,
    seq_len: ArrayLike,
    layers: ArrayLike,
    hidden: ArrayLike,
    vocab: ArrayLike,
) -> ArrayLike:
    """Hardware FLOPs per iteration with selective recomputation, as Korthikanti et al. state it.

    ``72 B L s h² (1 + s/(3h) + V/(12 h L))``: the paper's formula, which replaces the
    attention term ``s/(6h)`` of the model FLOPs with ``s/(3h)``. Note that rerunning
    only the forward ``QKᵀ``/``AV`` adds a third of the attention term
    (``s/(6h) → 2s/(9h)``), which is what :func:`training_flops_per_token` with
    ``recompute="selective"`` counts; the paper's expression is kept here verbatim to
    reproduce its hardware-FLOPs utilisation figures.

    Parameters
    ----------
    batch_size, seq_len, layers, hidden, vocab : int or ndarray
        ``B``, ``s``, ``L``, ``h``, ``V``.

    Returns
    -------
    float or ndarray
        FLOP per iteration.

    References
    ----------
    Korthikanti et al. (2022), "Reducing Activation Recomputation in Large Transformer
    Models", arXiv:2205.05198, Sec. 6.3 (hardware FLOPs).

    Examples
    --------
    175B, B = 64, s = 2048: 1.449e17 FLOP, 2.7% above the model FLOPs.

    >>> round(float(korthikanti_hardware_flops(64, 2048, 96, 12288, 51200)) / 1e17, 3)
    1.449
    """
    return _korthikanti_flops(batch_size, seq_len, layers, hidden, vocab, attention_divisor=3.0)


def training_flops(params: ArrayLike, tokens: ArrayLike) -> ArrayLike:
    """Training compute ``C ≈ 6 N D`` (forward 2N, backward 4N per token).

    Parameters
    ----------
    params : float or ndarray
        Parameters ``N`` (for a mixture of experts, the *active* parameters).
    tokens : float or ndarray
        Training tokens ``D``.

    Returns
    -------
    float or ndarray
        FLOP.

    References
    ----------
    Kaplan et al. (2020), "Scaling Laws for Neural Language Models", Sec. 2.1;
    Brown et al. (2020), "Language Models are Few-Shot Learners", Table D.1.

    Examples
    --------
    GPT-3: 6 × 174.6e9 × 300e9 = 3.14e23 FLOP (Brown et al. Table D.1: 3.14E+23).

    >>> round(float(training_flops(174.6e9, 300e9)) / 1e23, 2)
    3.14
    """
    return 6.0 * num(params) * num(tokens)


# --------------------------------------------------------------------------- KV cache
def kv_cache_bytes(
    layers: ArrayLike,
    kv_heads: ArrayLike,
    head_dim: ArrayLike,
    seq_len: ArrayLike,
    batch_size: ArrayLike = 1,
    bytes_per_element: ArrayLike = 2.0,
) -> ArrayLike:
    """Bytes of the key/value cache: ``2 · l · n_kv · d_head · s · b · bytes``.

    One key and one value vector per layer, per KV head, per cached token, per sequence.

    Parameters
    ----------
    layers : int or ndarray
        Transformer layers.
    kv_heads : int or ndarray
        Key/value heads (fewer than query heads under GQA/MQA).
    head_dim : int or ndarray
        Dimension per head.
    seq_len : int or ndarray
        Cached tokens per sequence.
    batch_size : int or ndarray
        Sequences.
    bytes_per_element : float or ndarray
        Bytes per cached value (2 for bf16, 1 for fp8).

    Returns
    -------
    float or ndarray
        Bytes.

    References
    ----------
    Pope et al. (2022), "Efficiently Scaling Transformer Inference", MLSys 2023, Sec. 2.

    Examples
    --------
    Llama-2-70B (80 layers, 8 KV heads of 128) holding 4096 tokens in bf16: 1.342 GB
    per sequence.

    >>> round(float(kv_cache_bytes(80, 8, 128, 4096)) / 1e9, 3)
    1.342
    """
    # num(): plain numbers stay floats (math only, one solve), others broadcast as arrays
    per_token = 2.0 * num(layers) * num(kv_heads) * num(head_dim)
    return per_token * num(seq_len) * num(batch_size) * num(bytes_per_element)
