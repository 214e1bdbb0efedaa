"""Formulas of LLM serving: decode and prefill work, MoE expert reads, paged KV, queues.

Generation runs in two phases. **Prefill** pushes the whole prompt through the model in
one pass: many tokens share each weight read, so it is compute-bound on any modern
accelerator. **Decode** produces one token per sequence per step: every step reads all
the weights it touches once (shared by the sequences of the batch) plus each sequence's
own key/value cache, and does only ``2·N`` FLOPs per sequence, so it is memory-bound
until the batch is large (Pope et al. 2022, Sec. 2-3).

Serving many requests is a queueing problem: Little's law ties the number of sequences
in flight to the arrival rate and the time each spends in the system, the KV cache caps
that number, and the prefill server behaves like an M/G/1 queue.

Every function takes and returns floats or numpy arrays in SI units and broadcasts.

References
----------
Pope et al. (2022), "Efficiently Scaling Transformer Inference", MLSys 2023.
Kwon et al. (2023), "Efficient Memory Management for Large Language Model Serving with
PagedAttention", SOSP 2023.
Yu et al. (2022), "Orca: A Distributed Serving System for Transformer-Based Generative
Models", OSDI 2022.
Little (1961), "A proof for the queuing formula L = λW", Operations Research 9(3).
Kleinrock (1975), "Queueing Systems, Volume 1: Theory", Wiley, Sec. 5.6-5.7.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlsys.core.formulas.transformer import attention_flops_per_token

__all__ = [
    "expected_active_experts",
    "decode_step_flops",
    "decode_step_bytes",
    "prefill_flops",
    "tensor_parallel_allreduce_bytes",
    "decode_kv_reads",
    "decode_kv_reread_bytes",
    "engine_step_time",
    "ENGINE_HOST_TIME_PER_STEP_S",
    "paged_kv_blocks",
    "paged_kv_waste_fraction",
    "littles_law_concurrency",
    "mm1_waiting_time",
    "mg1_waiting_time",
    "max_sequences_in_memory",
]

ArrayLike = Any


def _ret(x: Any) -> Any:
    return float(x) if np.ndim(x) == 0 else x


def expected_active_experts(
    experts: ArrayLike, experts_per_token: ArrayLike, tokens: ArrayLike
) -> ArrayLike:
    """Expected number of distinct experts a batch of tokens touches in one MoE layer.

    Each token picks ``k`` of ``E`` experts. If routing is uniform and tokens are
    independent, a given expert is missed by one token with probability ``1 − k/E`` and
    by all ``b`` tokens with probability ``(1 − k/E)^b``, so by linearity of expectation
    the expected number of experts whose weights must be read is
    ``E · (1 − (1 − k/E)^b)``. This is the classical occupancy problem; real routers
    are not uniform (popular experts make the true count lower), so the formula is an
    upper estimate of the weight traffic of a decode step.

    Parameters
    ----------
    experts : int or ndarray
        Routed experts per layer ``E``.
    experts_per_token : int or ndarray
        Experts each token visits ``k`` (top-k).
    tokens : float or ndarray
        Tokens routed together ``b`` (the decode batch; the prompt length in prefill).

    Returns
    -------
    float or ndarray
        Expected distinct experts, between ``min(k, E)`` (one token) and ``E``.

    References
    ----------
    Feller (1968), "An Introduction to Probability Theory and Its Applications",
    Vol. 1, 3rd ed., Wiley, Ch. II.11 and IV.2 (occupancy problems; expected number of
    occupied cells by linearity of expectation).
    Jiang et al. (2024), "Mixtral of Experts", arXiv:2401.04088 (top-2 of 8 routing).

    Examples
    --------
    Mixtral (top-2 of 8) at batch 8: 8 · (1 − 0.75⁸) = 7.20 experts per layer, so a
    batch of 8 already reads 90 % of the expert weights.

    >>> round(expected_active_experts(8, 2, 8), 2)
    7.2
    """
    E = np.asarray(experts, dtype=float)
    k = np.minimum(np.asarray(experts_per_token, dtype=float), E)
    b = np.asarray(tokens, dtype=float)
    return _ret(E * (1.0 - (1.0 - k / E) ** b))


def decode_step_flops(
    matmul_params: ArrayLike,
    layers: ArrayLike,
    context_len: ArrayLike,
    d_attn: ArrayLike,
    batch_size: ArrayLike = 1,
) -> ArrayLike:
    """FLOPs of one decode step: every sequence of the batch produces one token.

    Per sequence ``2·N`` for the matrix multiplies (``N`` active matmul parameters,
    LM head included) plus ``4·l·ctx·d_attn`` for the scores ``q·Kᵀ`` and the weighted
    sum of values over the ``ctx`` cached tokens (no causal masking: the new token sees
    them all).

    Parameters
    ----------
    matmul_params : float or ndarray
        Active parameters used as matmul weights by one token (MoE: top-k experts only).
    layers : int or ndarray
        Transformer layers ``l``.
    context_len : float or ndarray
        Tokens in each sequence's KV cache (prompt plus tokens generated so far).
    d_attn : int or ndarray
        Query width ``heads × head_dim``.
    batch_size : float or ndarray
        Sequences decoded together ``b``.

    Returns
    -------
    float or ndarray
        FLOP per step.

    References
    ----------
    Kaplan et al. (2020), "Scaling Laws for Neural Language Models", Eq. (2.2);
    Pope et al. (2022), "Efficiently Scaling Transformer Inference", Sec. 2.

    Examples
    --------
    Llama-2-7B (6.61e9 matmul parameters, 32 layers, d_attn 4096), batch 1, 1024
    cached tokens: 13.21 + 0.54 = 13.75 GFLOP.

    >>> round(decode_step_flops(6.607e9, 32, 1024, 4096) / 1e9, 2)
    13.75
    """
    per_seq = 2.0 * np.asarray(matmul_params, dtype=float) + attention_flops_per_token(
        layers, context_len, d_attn, causal=False
    )
    return _ret(np.multiply(per_seq, batch_size))


def decode_step_bytes(
    weight_bytes_read: ArrayLike,
    kv_bytes_per_token: ArrayLike,
    context_len: ArrayLike,
    batch_size: ArrayLike = 1,
) -> ArrayLike:
    """HBM bytes one decode step moves: the weights once, each sequence's KV cache.

    The weights are read once per step and shared by the whole batch; the KV cache is
    private to each sequence, so its traffic grows with ``batch × context``. This is
    why batching raises decode throughput until the KV term dominates (Pope et al.
    2022, Sec. 3.3).

    Parameters
    ----------
    weight_bytes_read : float or ndarray
        Bytes of weights the step reads (all of them for a dense model; for an MoE, the
        dense part plus the experts the batch touches).
    kv_bytes_per_token : float or ndarray
        KV-cache bytes of one token across all layers,
        ``2 · l · n_kv · d_head · bytes`` (GQA/MQA: ``n_kv`` key/value heads).
    context_len : float or ndarray
        Cached tokens per sequence.
    batch_size : float or ndarray
        Sequences in the step.

    Returns
    -------
    float or ndarray
        Bytes per step.

    References
    ----------
    Pope et al. (2022), "Efficiently Scaling Transformer Inference", MLSys 2023, Sec. 2
    and 3.3 (weight loading vs KV-cache loading time).

    Examples
    --------
    Llama-2-70B in bf16 (137.96 GB of weights, 327,680 KV bytes per token) with 16
    sequences of 2048 cached tokens: 137.96 + 10.74 = 148.70 GB per step.

    >>> round(decode_step_bytes(137.96e9, 327680, 2048, 16) / 1e9, 2)
    148.7
    """
    kv = np.multiply(np.multiply(kv_bytes_per_token, context_len), batch_size)
    return _ret(np.add(weight_bytes_read, kv))


def prefill_flops(
    layers_matmul_params: ArrayLike,
    head_matmul_params: ArrayLike,
    layers: ArrayLike,
    prompt_len: ArrayLike,
    d_attn: ArrayLike,
    batch_size: ArrayLike = 1,
) -> ArrayLike:
    """FLOPs of prefilling ``batch_size`` prompts of ``prompt_len`` tokens.

    Every prompt token goes through the transformer layers (``2·N_layers`` per token)
    and attends causally to the tokens before it (``2·l·s·d_attn`` per token on
    average, Kaplan et al. 2020); only the last position needs logits, so the LM head
    (``2·V·h``) runs once per sequence, as serving engines do.

    Parameters
    ----------
    layers_matmul_params : float or ndarray
        Active matmul parameters inside the transformer layers (LM head excluded).
    head_matmul_params : float or ndarray
        Parameters of the output projection ``V·h``.
    layers : int or ndarray
        Transformer layers ``l``.
    prompt_len : float or ndarray
        Prompt tokens ``s`` per sequence.
    d_attn : int or ndarray
        Query width ``heads × head_dim``.
    batch_size : float or ndarray
        Prompts prefilled together.

    Returns
    -------
    float or ndarray
        FLOP.

    References
    ----------
    Kaplan et al. (2020), "Scaling Laws for Neural Language Models", Table 1 and
    Eq. (2.2) (``C_forward ≈ 2N + 2 n_layer n_ctx d_attn`` per token).

    Examples
    --------
    Llama-2-7B (6.476e9 layer and 0.131e9 head matmul parameters, 32 layers, d_attn
    4096) on a 2048-token prompt: 26.53 TFLOP of matmuls + 1.10 of attention = 27.63.

    >>> round(prefill_flops(6.476e9, 0.131e9, 32, 2048, 4096) / 1e12, 2)
    27.63
    """
    s = np.asarray(prompt_len, dtype=float)
    per_seq = s * (
        2.0 * np.asarray(layers_matmul_params, dtype=float)
        + attention_flops_per_token(layers, s, d_attn, causal=True)
    )
    per_seq = per_seq + 2.0 * np.asarray(head_matmul_params, dtype=float)
    return _ret(np.multiply(per_seq, batch_size))


def tensor_parallel_allreduce_bytes(
    tokens: ArrayLike, hidden: ArrayLike, bytes_per_element: ArrayLike = 2.0
) -> ArrayLike:
    """Buffer size of one tensor-parallel all-reduce: ``tokens × hidden × bytes``.

    Megatron-style tensor parallelism splits the attention block by heads and the MLP by
    its inner dimension; each block ends in a row-parallel matmul whose partial outputs
    are summed by one all-reduce of the ``tokens × h`` activations, so a layer needs two
    (one in the forward pass of inference).

    Parameters
    ----------
    tokens : float or ndarray
        Tokens in the pass: ``b·s`` in prefill, ``b`` in a decode step.
    hidden : int or ndarray
        Model width ``h``.
    bytes_per_element : float or ndarray
        Bytes of one activation (2 for fp16/bf16).

    Returns
    -------
    float or ndarray
        Bytes of the buffer reduced (the ``M`` of the alpha-beta collective formulas).

    References
    ----------
    Shoeybi et al. (2019), "Megatron-LM: Training Multi-Billion Parameter Language
    Models Using Model Parallelism", arXiv:1909.08053, Sec. 3 and Fig. 3 (``g``
    operators: one all-reduce after attention and one after the MLP).

    Examples
    --------
    A 2048-token prompt through a Llama-2-70B layer (h = 8192) in fp16: 33.55 MB per
    all-reduce.

    >>> tensor_parallel_allreduce_bytes(2048, 8192, 2.0) / 1e6
    33.554432
    """
    return _ret(np.multiply(np.multiply(tokens, hidden), bytes_per_element))


def decode_kv_reads(
    heads: ArrayLike, kv_heads: ArrayLike, query_heads_per_block: ArrayLike | None = None
) -> ArrayLike:
    """How many times a decode-attention kernel reads each key/value head from memory.

    Under grouped-query attention ``g = n_h / n_kv`` query heads share one key/value
    head. A decode kernel whose thread block serves ``q`` of those query heads loads the
    shared keys and values once per block, so each KV head leaves HBM ``⌈g/q⌉`` times:
    once when one block serves the whole group (FlashInfer, FlashAttention-2's GQA
    packing, TensorRT-LLM's XQA, lmdeploy from v0.2), ``g`` times when each query head
    has its own block (vLLM's PagedAttention v1/v2 of 2023, FasterTransformer's masked
    multi-head attention), in between for lmdeploy v0.1's kernel, which packs four query
    heads per block. A multi-head model (``g = 1``) reads its cache once in any case.

    Parameters
    ----------
    heads : int or ndarray
        Query heads ``n_h`` (of the layer, or of one tensor-parallel shard).
    kv_heads : int or ndarray
        Key/value heads ``n_kv`` (the same scope as ``heads``).
    query_heads_per_block : int or ndarray, optional
        Query heads one thread block of the kernel serves ``q``; ``None``: the whole
        group (one read per KV head).

    Returns
    -------
    float or ndarray
        Reads of each key/value head per decode step (≥ 1).

    References
    ----------
    Ainslie et al. (2023), "GQA: Training Generalized Multi-Query Transformer Models
    from Multi-Head Checkpoints", EMNLP 2023 (query heads sharing a KV head);
    InternLM/lmdeploy v0.1.0a1 (commit 3e391df), ``src/turbomind/kernels/
    decoder_multihead_attention/decoder_multihead_attention.cu``: the kernel's grid is
    ``(num_heads / HeadPerCta, batch, split_k)`` with ``HeadPerCta = 4`` when the group
    divides by 4 (the 8-head variant is commented out); Kwon et al. (2023), SOSP
    (PagedAttention: one thread block per query head and sequence).

    Examples
    --------
    Llama-2-70B (64 query heads, 8 KV heads, groups of 8) under lmdeploy v0.1's kernel
    (4 query heads per block): each KV head is read twice; a group-packed kernel reads it
    once; Llama-2-7B (multi-head) once.

    >>> decode_kv_reads(64, 8, 4), decode_kv_reads(64, 8), decode_kv_reads(32, 32, 4)
    (2.0, 1.0, 1.0)
    """
    if query_heads_per_block is None:
        if np.ndim(heads) == 0 and np.ndim(kv_heads) == 0:
            return 1.0
        return _ret(np.ones(np.broadcast(heads, kv_heads).shape))
    group = np.divide(heads, kv_heads)
    return _ret(np.maximum(np.ceil(np.divide(group, query_heads_per_block)), 1.0))


def decode_kv_reread_bytes(
    batch: ArrayLike,
    kv_len: ArrayLike,
    kv_heads: ArrayLike,
    head_dim: ArrayLike,
    kv_bytes_per_element: ArrayLike,
    reads: ArrayLike,
) -> ArrayLike:
    """KV-cache bytes a decode-attention kernel reads beyond the one pass over the cache.

    One decode step of ``b`` sequences at ``s`` cached tokens streams
    ``2·b·s·n_kv·d·e`` bytes of keys and values once; a kernel that reads each KV head
    ``r`` times (:func:`decode_kv_reads`) moves ``r − 1`` times that again. The re-reads
    are counted at the HBM rate: the blocks sharing a KV head run side by side, but a
    decode step streams far more cache than the L2 holds (measured: lmdeploy v0.1's
    Llama-2-70B decode on 4 A100 grows by about 18 ms per step from 1 to 3072 cached
    tokens at batch 64, the time of two reads of the cache, not one).

    Parameters
    ----------
    batch : float or ndarray
        Sequences ``b`` in the step.
    kv_len : float or ndarray
        Cached tokens per sequence ``s``.
    kv_heads : float or ndarray
        Key/value heads on this device ``n_kv``.
    head_dim : float or ndarray
        Head dimension ``d``.
    kv_bytes_per_element : float or ndarray
        Bytes of one cached element ``e``.
    reads : float or ndarray
        Reads of each KV head per step ``r``.

    Returns
    -------
    float or ndarray
        Bytes, per layer.

    References
    ----------
    Pope et al. (2022), "Efficiently Scaling Transformer Inference", Sec. 3 (decode reads
    the whole KV cache every step); InternLM/lmdeploy ``docs/en/benchmark/a100_fp16.md``
    at commit 3e391df (the measurement above).

    Examples
    --------
    Llama-2-70B on 4-way tensor parallelism (2 KV heads of 128 per device), batch 64 at
    1152 cached tokens, fp16, two reads: one extra pass of 64·1152·2·2·128·2 = 75.5 MB
    per layer, 43.6 µs at 2.039 TB/s × 0.85.

    >>> round(decode_kv_reread_bytes(64, 1152, 2, 128, 2.0, 2.0) / 1e6, 1)
    75.5
    """
    args = (batch, kv_len, kv_heads, head_dim, kv_bytes_per_element, reads)
    if all(type(a) in (int, float) for a in args):
        # the solvers' path: plain floats (it runs once per priced decode layer)
        return 2.0 * batch * kv_len * kv_heads * head_dim * kv_bytes_per_element * (reads - 1.0)
    one_pass = 2.0 * np.multiply(np.multiply(batch, kv_len), np.multiply(kv_heads, head_dim))
    return _ret(np.multiply(one_pass, kv_bytes_per_element) * np.subtract(reads, 1.0))


def paged_kv_blocks(tokens: ArrayLike, block_size: ArrayLike = 16) -> ArrayLike:
    """KV-cache blocks a sequence of ``tokens`` occupies under PagedAttention.

    The cache is allocated in fixed blocks of ``block_size`` tokens as the sequence
    grows, so only the last block is partly empty: ``⌈tokens / block_size⌉``.

    Parameters
    ----------
    tokens : int or ndarray
        Tokens held (prompt plus generated).
    block_size : int or ndarray
        Tokens per block (vLLM's default is 16).

    Returns
    -------
    float or ndarray
        Blocks.

    References
    ----------
    Kwon et al. (2023), "Efficient Memory Management for Large Language Model Serving
    with PagedAttention", SOSP 2023, Sec. 4.1-4.2.

    Examples
    --------
    A 1000-token sequence in blocks of 16: 63 blocks (1008 slots, 8 empty).

    >>> paged_kv_blocks(1000, 16)
    63.0
    """
    return _ret(np.ceil(np.divide(tokens, block_size)))


def paged_kv_waste_fraction(tokens: ArrayLike, block_size: ArrayLike = 16) -> ArrayLike:
    """Fraction of a sequence's allocated KV slots left empty (internal fragmentation).

    Only the last block of a sequence can be partly empty, so the waste is at most
    ``block_size − 1`` slots per sequence; Kwon et al. measure under 4 % of KV memory
    wasted with vLLM, against 60-80 % for systems that reserve the maximum length.

    Parameters
    ----------
    tokens : int or ndarray
        Tokens held.
    block_size : int or ndarray
        Tokens per block.

    Returns
    -------
    float or ndarray
        Empty slots over allocated slots, in [0, 1).

    References
    ----------
    Kwon et al. (2023), "Efficient Memory Management for Large Language Model Serving
    with PagedAttention", SOSP 2023, Sec. 1 and Fig. 2 (memory waste below 4 %).

    Examples
    --------
    1000 tokens in blocks of 16: 8 of 1008 slots empty, 0.79 %.

    >>> round(100 * paged_kv_waste_fraction(1000, 16), 2)
    0.79
    """
    allocated = np.multiply(np.ceil(np.divide(tokens, block_size)), block_size)
    return _ret(np.subtract(allocated, tokens) / allocated)


def littles_law_concurrency(arrival_rate: ArrayLike, time_in_system: ArrayLike) -> ArrayLike:
    """Mean number of requests in a stable system: ``L = λ · W`` (Little's law).

    Holds for any arrival process and service discipline in steady state; in serving,
    ``W`` is the time a request spends decoding and ``L`` the batch the engine runs.

    Parameters
    ----------
    arrival_rate : float or ndarray
        Requests per second ``λ``.
    time_in_system : float or ndarray
        Mean seconds each request spends in the system (or the part considered).

    Returns
    -------
    float or ndarray
        Mean number of requests (count).

    References
    ----------
    Little (1961), "A proof for the queuing formula L = λW", Operations Research 9(3),
    383-387.

    Examples
    --------
    2 requests/s that each decode for 12.5 s keep 25 sequences in the batch.

    >>> littles_law_concurrency(2.0, 12.5)
    25.0
    """
    return _ret(np.multiply(arrival_rate, time_in_system))


def mm1_waiting_time(arrival_rate: ArrayLike, service_time: ArrayLike) -> ArrayLike:
    """Mean time in queue of an M/M/1 server: ``W_q = ρ · S / (1 − ρ)``, ``ρ = λ·S``.

    Poisson arrivals, exponential service of mean ``S``. ``inf`` when ``ρ ≥ 1``.

    Parameters
    ----------
    arrival_rate : float or ndarray
        Arrivals per second ``λ``.
    service_time : float or ndarray
        Mean service time ``S`` in seconds.

    Returns
    -------
    float or ndarray
        Seconds waiting before service starts.

    References
    ----------
    Kleinrock (1975), "Queueing Systems, Volume 1: Theory", Wiley, Sec. 3.2, Eq. (3.26)
    (``T = (1/μ)/(1 − ρ)``, of which ``W = ρ/(μ(1 − ρ))`` is the wait).

    Examples
    --------
    5 requests/s at 0.1 s each (ρ = 0.5): 0.1 s in queue.

    >>> round(mm1_waiting_time(5.0, 0.1), 6)
    0.1
    """
    rho = np.multiply(arrival_rate, service_time)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(
            rho < 1.0,
            rho * np.asarray(service_time, dtype=float) / (1.0 - np.minimum(rho, 0.999999999)),
            np.inf,
        )
    return _ret(out)


def mg1_waiting_time(
    arrival_rate: ArrayLike, mean_service_time: ArrayLike, service_second_moment: ArrayLike
) -> ArrayLike:
    """Mean time in queue of an M/G/1 server (Pollaczek-Khinchine formula).

    ``W_q = λ · E[S²] / (2 (1 − ρ))`` with ``ρ = λ · E[S]``: Poisson arrivals, any
    service-time distribution. Deterministic service (``E[S²] = E[S]²``) waits half as
    long as exponential service (``E[S²] = 2 E[S]²``, the M/M/1 case). ``inf`` when
    ``ρ ≥ 1``.

    Parameters
    ----------
    arrival_rate : float or ndarray
        Arrivals per second ``λ``.
    mean_service_time : float or ndarray
        ``E[S]`` in seconds.
    service_second_moment : float or ndarray
        ``E[S²]`` in seconds squared.

    Returns
    -------
    float or ndarray
        Seconds waiting before service starts.

    References
    ----------
    Kleinrock (1975), "Queueing Systems, Volume 1: Theory", Wiley, Sec. 5.6,
    Eq. (5.86) (Pollaczek-Khinchine mean-value formula).

    Examples
    --------
    5 requests/s with deterministic 0.1 s prefills (ρ = 0.5): 0.05 s in queue, half
    the M/M/1 figure.

    >>> round(mg1_waiting_time(5.0, 0.1, 0.01), 6)
    0.05
    """
    lam = np.asarray(arrival_rate, dtype=float)
    rho = lam * np.asarray(mean_service_time, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(
            rho < 1.0,
            lam
            * np.asarray(service_second_moment, dtype=float)
            / (2.0 * (1.0 - np.minimum(rho, 0.999999999))),
            np.inf,
        )
    return _ret(out)


def max_sequences_in_memory(
    free_bytes: ArrayLike, kv_bytes_per_token: ArrayLike, tokens_per_sequence: ArrayLike
) -> ArrayLike:
    """Sequences whose KV caches fit in the memory left after weights and workspace.

    ``⌊free / (kv_bytes_per_token × tokens_per_sequence)⌋``, zero when nothing is free.

    Parameters
    ----------
    free_bytes : float or ndarray
        Memory available for the KV cache, in bytes.
    kv_bytes_per_token : float or ndarray
        KV bytes of one token on this device (after tensor/pipeline sharding).
    tokens_per_sequence : float or ndarray
        Tokens each sequence holds (prompt plus output for static batching).

    Returns
    -------
    float or ndarray
        Sequences (an integer-valued float).

    References
    ----------
    Pope et al. (2022), "Efficiently Scaling Transformer Inference", Sec. 2 (the KV
    cache, not compute, bounds the batch at long context); Kwon et al. (2023), Sec. 2.3.

    Examples
    --------
    Llama-2-7B bf16 on an 80 GB GPU with 63 GB free, 4096-token sequences of
    524,288 KV bytes per token: 29 sequences.

    >>> max_sequences_in_memory(63e9, 524288, 4096)
    29.0
    """
    per_seq = np.multiply(kv_bytes_per_token, tokens_per_sequence)
    return _ret(np.floor(np.maximum(np.divide(free_bytes, per_seq), 0.0)))


def engine_step_time(
    device_step_s: ArrayLike, host_step_s: ArrayLike, overlapped: bool = False
) -> ArrayLike:
    """Wall time of one engine iteration: the device's kernels and the engine's host work.

    Every iteration of an iteration-level scheduler (a prefill pass or a decode step)
    has host work around the device's kernels: scheduling the batch, building the
    step's input metadata, copying the sampled tokens back and turning them into
    per-request outputs. An engine whose loop is synchronous waits for a step's sampled
    tokens before it schedules and launches the next, so the device idles through that
    work and ``t = t_dev + t_host``. An engine that schedules one step ahead (overlap
    scheduling) prepares step ``n + 1`` while the device runs step ``n``, so the host
    work is hidden up to the device's time: ``t = max(t_dev, t_host)``.

    Parameters
    ----------
    device_step_s : float or ndarray
        Seconds of device work of the iteration (its kernels and collectives).
    host_step_s : float or ndarray
        Seconds of host work the engine does per iteration (the part the engine runs
        between two launches, measured for that engine and version).
    overlapped : bool
        The engine schedules one step ahead (default ``False``: a synchronous loop).

    Returns
    -------
    float or ndarray
        Seconds per iteration.

    References
    ----------
    Yu et al. (2022), "Orca: A Distributed Serving System for Transformer-Based
    Generative Models", OSDI (the iteration-level scheduling loop); vLLM RFC 6854
    (2024), "Multi-Step Scheduling": in a synchronous loop the GPU waits each step for the
    sampled tokens' copy to the host, their conversion to Python objects, the next
    step's input metadata and the scheduler; Zhu et al. (2024), "NanoFlow",
    arXiv:2408.12757, and the SGLang v0.4 release post (LMSYS, 2024-12-04,
    "zero-overhead batch scheduler"): the scheduler runs one batch ahead, so the
    device does not wait for it.

    Examples
    --------
    A 5.0 ms decode step with 1.5 ms of host work takes 6.5 ms in a synchronous loop and
    5.0 ms when the engine schedules one step ahead; 7 ms of host work would then set
    the pace on its own.

    >>> round(engine_step_time(5.0e-3, 1.5e-3), 6), engine_step_time(5.0e-3, 1.5e-3, True)
    (0.0065, 0.005)
    >>> engine_step_time(5.0e-3, 7.0e-3, overlapped=True)
    0.007
    """
    if overlapped:
        if np.ndim(device_step_s) == 0 and np.ndim(host_step_s) == 0:
            return float(max(device_step_s, host_step_s))
        return _ret(np.maximum(device_step_s, host_step_s))
    if np.ndim(device_step_s) == 0 and np.ndim(host_step_s) == 0:
        return float(device_step_s + host_step_s)
    return _ret(np.add(device_step_s, host_step_s))


ENGINE_HOST_TIME_PER_STEP_S: dict[str, float] = {"vllm_v0": 1.14e-3}
"""Measured host time per engine iteration, in seconds, by serving engine and version.

For ``ServingModel.solve(host_time_per_step=...)`` (a synchronous loop adds it to every
prefill pass and decode step, :func:`engine_step_time`). One entry per engine whose
figure rests on a measurement outside mlsys's validation suite.

``"vllm_v0"``: vLLM's V0 engine of late 2024 (v0.6.3 to early-December main: one step
per scheduler call, asynchronous output processing, CUDA graphs for decode). Derived
from vLLM PR 10933 (K. You, 2024-12-05): ``benchmarks/benchmark_latency.py`` on
``meta-llama/Meta-Llama-3-8B``, batch 1, its default 32 prompt and 128 output tokens,
main branch without ``torch.compile``: 970.4 ms a run. mlsys prices the device work of
that run (one 32-token prefill launched eagerly and 127 decode steps of 16 GB of bf16
weights replayed from CUDA graphs, on an H100) at 823.9 ms, leaving 146.6 ms over 128
engine iterations: 1.145 ms each, 1.14 ms to 10 µs. The PR
does not name its GPU; it is taken as an H100 SXM because 7.58 ms a step rules out
every GPU that cannot stream 16 GB in that time (A100, H100 PCIe, L4) and an H200 is
faster at batch 8 (6.5 ms a step in vLLM's own nightly latency test), and because the
same author's compilation guide of that week (vLLM PR 11078) ran on an H100. The
measurement is at batch 1: host work that grows with the batch (per-sequence metadata
and outputs: 40-80 µs per sequence per step with hundreds of sequences on v0.5.4, the
WukLab "scheduling overhead" post, 2024-09-10) is not in it, nor the V0 driver's
broadcast of each step's inputs to tensor-parallel workers, which no cited measurement
sizes."""
