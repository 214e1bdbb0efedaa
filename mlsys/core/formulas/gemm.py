"""Time of one matrix multiply (GEMM) from its shape, and of attention with and without a
fused kernel.

A GEMM ``C[M×N] = A[M×K] · B[K×N]`` on a GPU is cut into output tiles, one thread block
each, and the thread blocks run on the streaming multiprocessors (SMs) in *waves*. Two
effects make its throughput depend on the shape (NVIDIA, "Matrix Multiplication
Background User's Guide", sections "Tile Quantization" and "Wave Quantization"):

* **Tile quantisation**: a tile is computed whole even where it hangs over the edge of
  ``C``, so the useful share of the work is ``M·N / (⌈M/t_m⌉ t_m · ⌈N/t_n⌉ t_n)``.
* **Wave quantisation**: ``T`` tiles on ``S`` SMs (one tile per SM at a time) take
  ``⌈T/S⌉`` waves; the last wave may leave SMs idle, so the useful share of the SM time
  is ``T / (⌈T/S⌉ · S)``. The guide's example: 256×128 tiles of a 1792×1792 output on an
  A100's 108 SMs make 7 × 14 = 98 tiles, one wave with 10 SMs idle. When a grid is
  smaller than one wave the libraries split the reduction dimension ``K`` over
  ``⌊S/T⌋`` thread blocks per tile (split-K; NVIDIA CUTLASS, "Efficient GEMM in CUDA",
  "Parallelized Reductions"), which this module models too.

Over both sits the sustained fraction of the dense peak a well-shaped GEMM reaches in a
real run (the library's default compute efficiency,
:func:`mlsys.core.solvers.efficiency.default_efficiency`: 0.75 for 16-bit GEMMs on GPUs),
which stays below the device's measured single-GEMM ceiling ("maximum achievable matmul
FLOPS": 85.9 % on A100 SXM, 80.1 % on H100 SXM;
:func:`mlsys.core.solvers.efficiency.matmul_ceiling`).
And each GEMM is its own roofline (Williams et al. 2009): a skinny GEMM — few tokens,
as in decoding — moves ``(MK + KN + MN)·e`` bytes for only ``2MNK`` FLOPs and is
memory-bound.

Attention runs either as a fused kernel (FlashAttention-2: the scores never reach
memory; it sustains a measured fraction of peak, Dao 2023) or, unfused, as a batched
GEMM ``Q·Kᵀ``, a softmax over the ``s×s`` scores in memory, and a batched GEMM with
``V`` (Megatron-LM before FlashAttention).

Every function takes floats or numpy arrays in SI units and broadcasts; when every
argument is a Python or numpy real scalar it computes with :mod:`math` on floats (a
fraction of a microsecond per call), otherwise with numpy — the same expressions either
way, so the solvers (scalar) and the vectorised layout search (arrays) run this code.

References
----------
NVIDIA (2023), "Matrix Multiplication Background User's Guide", NVIDIA Deep Learning
Performance documentation, sections "Tile Quantization" and "Wave Quantization".
NVIDIA CUTLASS documentation, "Efficient GEMM in CUDA", section "Parallelized
Reductions" (split-K).
Williams, Waterman & Patterson (2009), "Roofline: an insightful visual performance
model", CACM 52(4).
Dao (2023), "FlashAttention-2: Faster Attention with Better Parallelism and Work
Partitioning", arXiv:2307.08691, Sec. 4.1 and Fig. 4-6.
Shoeybi et al. (2019), "Megatron-LM", arXiv:1909.08053 (unfused attention).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "DEFAULT_TILE",
    "MMA_GRANULARITY",
    "SPLIT_K_MIN_DEPTH",
    "FLASH_ATTENTION_FORWARD_FRACTION",
    "FLASH_ATTENTION_BACKWARD_FRACTION",
    "HOPPER_FLASH_ATTENTION_2_FRACTIONS",
    "FLASH_ATTENTION_2_SPEEDUP_OVER_1",
    "FLASH_ATTENTION_1_DROPOUT_EXTRA_TIME",
    "flash_attention_dropout_factors",
    "HOPPER_FUSED_ATTENTION_FRACTIONS",
    "ATTENTION_TILE",
    "CAUSAL_ROW_OVERHEAD_TILES",
    "causal_attention_rate",
    "gemm_flops",
    "gemm_bytes",
    "tile_quantization_efficiency",
    "wave_quantization_efficiency",
    "gemm_efficiency",
    "gemm_time",
    "attention_flops",
    "attention_time",
]

ArrayLike = Any

DEFAULT_TILE: tuple[int, int] = (256, 128)
"""Output tile ``(t_m, t_n)`` of one thread block: 256×128, the tile of the NVIDIA guide's
A100 wave-quantisation example and the largest cuBLAS uses for half-precision GEMMs;
both orientations (256×128 and 128×256) are tried and the better kept."""

MMA_GRANULARITY = 16
"""Rows (and columns) of the smallest tensor-core matrix instruction, ``mma.m16n8k16``
(NVIDIA PTX ISA, "Warp-level matrix multiply-accumulate instructions"): a dimension
smaller than a tile is padded only to this multiple, as the libraries then run kernels
with narrower tiles (a decode step's one token is not padded to 256 rows)."""

SPLIT_K_MIN_DEPTH = 256
"""Least ``K`` depth one split-K slice keeps (four 64-deep main-loop steps), so a grid
smaller than a wave is split at most ``K / 256`` ways."""

FLASH_ATTENTION_FORWARD_FRACTION = 0.70
"""Fraction of the dense tensor-core peak FlashAttention-2's forward pass sustains:
Dao (2023) Fig. 4-5 measure 50-73 % on A100 (up to 230 TFLOP/s of 312 at head dim 128,
long sequences); 0.70 is the head-dim-128 figure at the sequence lengths of training, read
as an unmasked kernel's rate (the 73% maximum is the paper's no-mask figure; a causal
kernel's lower rate is :func:`causal_attention_rate`)."""

FLASH_ATTENTION_BACKWARD_FRACTION = 0.60
"""The same for the backward pass, which Dao (2023) Fig. 6 measures lower (about
55-63 % of A100 peak at head dim 128): it runs five matmuls per block, and the atomic
updates of dQ."""

HOPPER_FUSED_ATTENTION_FRACTIONS = (0.61, 0.52)
"""Forward and backward fractions of the dense 16-bit peak a fused attention kernel
sustains on Hopper (H100 SXM5, head dim 128, 8k tokens, no mask), as cuDNN's fused
attention runs it (the kernel Transformer Engine, hence Megatron-LM and NeMo, calls):
600 and 518 of 989 TFLOP/s (Shah et al. 2024, "FlashAttention-3", arXiv:2407.08608,
Fig. 5-6; FlashAttention-2 reaches only 370 and 318 there, FlashAttention-3 646 and
559). The A100 fractions above are FlashAttention-2's own on Ampere."""

HOPPER_FLASH_ATTENTION_2_FRACTIONS = (0.374, 0.322)
"""Forward and backward fractions of the H100's dense 16-bit peak FlashAttention-2
sustains (head dim 128, 8k tokens, no mask): 370 and 318 of 989 TFLOP/s (Shah et al.
2024, "FlashAttention-3", arXiv:2407.08608, Fig. 5-6). FlashAttention-2 and kernels of
its generation (MosaicML's Triton port among them) use Ampere's synchronous ``mma``
instructions, not Hopper's asynchronous warpgroup GEMMs and TMA, so they reach a far
smaller share of Hopper's doubled peak than cuDNN's kernel
(:data:`HOPPER_FUSED_ATTENTION_FRACTIONS`)."""

ATTENTION_TILE = 128
"""Query and key rows of one tile of a fused attention kernel: 128, the block of
FlashAttention-2's forward kernel at head dim 128 and of cuDNN's and FlashAttention-3's
Hopper kernels (Dao 2023, Sec. 3.1; Shah et al. 2024, Sec. 3). A causal kernel skips the
tiles above the diagonal and masks the one tile of each row that straddles it."""

CAUSAL_ROW_OVERHEAD_TILES = 5.1
"""Fixed work of one row of query tiles in a fused attention kernel (loading the queries,
the softmax's final rescaling, writing the output and its log-sum-exp), in units of one
key/value tile's work: ``c`` in :func:`causal_attention_rate`. Fitted (least squares,
rms 0.035) to the causal / no-mask throughput ratios cuDNN's fused attention measures at
head dim 128 in bf16, forward and backward, 2k-64k tokens — kernel benchmarks, no run of
mlsys's validation suite: NVIDIA/cudnn-frontend ``benchmark/benchmark_results.csv``
(commit 505fcfe: 16 heads, 16k tokens a batch; 0.83/0.86 at 4k, 0.86/0.87 at 8k,
0.91/0.92 at 16k) and the ``sdpa_benchmark_training`` results for Llama 3.1's attention
(64 query and 8 key/value heads) on GB200 (commit 60e572b, cuDNN 9.22: 0.77/0.79 at 2k,
0.88/0.85 at 4k, 0.89/0.95 at 8k) and GB300 (commit e99b0d0, cuDNN 9.26). The fitted
form also lands on the kernels it was not fitted to: FlashAttention-3 on H100 at 8k
(flash-attention PR 1791: 0.96 forward, 0.96 backward; the form gives 0.92) and
FlashAttention-4 on B200 at 8k (PR 2280: 0.92 forward, 0.89 backward)."""


_SCALARS = frozenset(
    {int, float}
    | {t for t in set(np.sctypeDict.values()) if issubclass(t, (np.integer, np.floating))}
)


def _all_scalar(*args: Any) -> bool:
    return all(type(a) in _SCALARS for a in args)


def _ret(x: Any) -> Any:
    return float(x) if np.ndim(x) == 0 else x


class _Ops:
    """The elementary operations a formula body uses: math on floats or numpy on arrays."""

    __slots__ = ("ceil", "floor", "maximum", "minimum")

    def __init__(self, ceil: Any, floor: Any, maximum: Any, minimum: Any) -> None:
        self.ceil, self.floor, self.maximum, self.minimum = ceil, floor, maximum, minimum


_MATH = _Ops(math.ceil, math.floor, max, min)
_NUMPY = _Ops(np.ceil, np.floor, np.maximum, np.minimum)


def _ops(*args: Any) -> _Ops:
    return _MATH if _all_scalar(*args) else _NUMPY


def _arrays(*args: Any) -> tuple[Any, ...]:
    return tuple(np.asarray(a, dtype=float) for a in args)


# -- work and traffic ----------------------------------------------------------------


def gemm_flops(m: ArrayLike, n: ArrayLike, k: ArrayLike) -> ArrayLike:
    """FLOPs of ``C[M×N] = A[M×K]·B[K×N]``: ``2·M·N·K`` (one multiply and one add each).

    Parameters
    ----------
    m, n, k : int or ndarray
        The GEMM dimensions (rows of ``A`` and ``C``, columns of ``B`` and ``C``, the
        reduction depth).

    Returns
    -------
    float or ndarray
        FLOP.

    References
    ----------
    NVIDIA, "Matrix Multiplication Background User's Guide", section "Math and Memory
    Bounds" (``2·M·N·K`` FLOPs).

    Examples
    --------
    The query/key/value projection of Llama-2-7B for 2048 tokens (M 2048, N 12288,
    K 4096): 2·2048·12288·4096 = 206.2 GFLOP.

    >>> round(gemm_flops(2048, 12288, 4096) / 1e9, 1)
    206.2
    """
    if _all_scalar(m, n, k):
        return 2.0 * float(m) * float(n) * float(k)
    m, n, k = _arrays(m, n, k)
    return _ret(2.0 * m * n * k)


def gemm_bytes(m: ArrayLike, n: ArrayLike, k: ArrayLike, bytes_per_element: ArrayLike) -> ArrayLike:
    """Memory traffic of one GEMM at best: read ``A`` and ``B`` once, write ``C`` once.

    ``(M·K + K·N + M·N) · e`` bytes — the minimum traffic, which large on-chip tiles
    approach; it is the memory side of the GEMM's own roofline.

    Parameters
    ----------
    m, n, k : int or ndarray
        The GEMM dimensions.
    bytes_per_element : float or ndarray
        Bytes of one element ``e`` (2 for fp16/bf16, 1 for fp8).

    Returns
    -------
    float or ndarray
        Bytes.

    References
    ----------
    NVIDIA, "Matrix Multiplication Background User's Guide", section "Math and Memory
    Bounds" (arithmetic intensity ``2MNK / (2(MK + NK + MN))`` in fp16).

    Examples
    --------
    A decode step's QKV projection of Llama-2-7B for one token (M 1, N 12288, K 4096) in
    fp16: (4096 + 50,331,648 + 12,288) × 2 = 100.70 MB, nearly all of it the weights.

    >>> round(gemm_bytes(1, 12288, 4096, 2.0) / 1e6, 2)
    100.7
    """
    if _all_scalar(m, n, k, bytes_per_element):
        m, n, k = float(m), float(n), float(k)
        return (m * k + k * n + m * n) * float(bytes_per_element)
    m, n, k, e = _arrays(m, n, k, bytes_per_element)
    return _ret((m * k + k * n + m * n) * e)


FLASH_ATTENTION_2_SPEEDUP_OVER_1 = 2.0
"""How much faster FlashAttention-2 runs than the FlashAttention(-1) generation of fused
kernels on the same device: "around 2× speedup compared to FlashAttention", which reached
"only 25-40% of the theoretical maximum FLOPs/s" on A100 (Dao 2023, "FlashAttention-2",
arXiv:2307.08691, abstract; Sec. 4.1 measures 1.7-3.0×). Kernels of that generation price
at FlashAttention-2's fractions divided by this: 0.35 / 0.30 of A100 peak forward /
backward, inside the 25-40%. MosaicML's Triton port (llm-foundry ``flash_attn_triton.py``,
whose header finds it "slightly slower" than the CUDA FlashAttention of its time) is one;
the throughput-per-sequence-length sweep of llm-foundry's own MPT tables puts it at
93-97 TFLOP/s on A100 and 155-173 on H100 (an independent check: 0.5× FlashAttention-2
on both). Those figures, and FlashAttention-2's end-to-end comparison with FlashAttention
(Dao 2023, Table 1: GPT training), are causal runs, so the fractions of this generation
are read as causal rates and take no :func:`causal_attention_rate` on top
(``attention_time(unmasked_fractions=False)``)."""

FLASH_ATTENTION_1_DROPOUT_EXTRA_TIME: dict[int, tuple[float, float]] = {
    512: (0.222, 0.115),
    1024: (0.221, 0.148),
    2048: (0.171, 0.193),
    4096: (0.233, 0.215),
    8192: (0.241, 0.230),
    16384: (0.246, 0.238),
    65536: (0.247, 0.243),
}
"""Extra time attention dropout (p = 0.1) costs a FlashAttention kernel on an A100, forward
and backward, as a share of its time without dropout, by sequence length: Dao et al. (2022),
"FlashAttention", arXiv:2205.14135, Appendix E.6, Tables 15-20 (A100 40GB, fp16, batch 16,
8 heads of 64, no causal mask; e.g. 8k tokens: forward 33.54 → 41.63 ms, backward 84.75 →
104.27 ms). The kernel draws a Philox random number per attention score, in the forward
and again in the backward, where it rebuilds the mask: work per score that FlashAttention-2
does the same way, so :func:`mlsys.core.solvers.efficiency.fused_attention_dropout_factors`
charges it to both generations on Ampere and older GPUs (no measurement of
FlashAttention-2's own cost on an A100 is cited). On Hopper and Blackwell the measured
costs are small (head dim 128: cuDNN +3% on H200, FlashAttention-2 +5% on GB200;
NVIDIA/TransformerEngine issue 3312 and pull request 3313) and are not charged."""


def flash_attention_dropout_factors(seq_len: ArrayLike) -> tuple:
    """Time multipliers of a FlashAttention kernel running dropout on an A100, forward
    and backward.

    Parameters
    ----------
    seq_len : float or ndarray
        Keys each query attends to, in tokens.

    Returns
    -------
    tuple of (float or ndarray, float or ndarray)
        ``(forward, backward)``: ``1 +`` :data:`FLASH_ATTENTION_1_DROPOUT_EXTRA_TIME`
        interpolated in ``log2(seq_len)`` (held at the table's ends).

    References
    ----------
    Dao et al. (2022), "FlashAttention: Fast and Memory-Efficient Exact Attention with
    IO-Awareness", NeurIPS, arXiv:2205.14135, Appendix E.6, Tables 15-20.

    Examples
    --------
    >>> flash_attention_dropout_factors(8192)
    (1.241, 1.23)
    >>> [round(f, 3) for f in flash_attention_dropout_factors(3000)]
    [1.205, 1.205]
    """
    lengths = np.log2(np.array(list(FLASH_ATTENTION_1_DROPOUT_EXTRA_TIME), dtype=float))
    shares = np.array(list(FLASH_ATTENTION_1_DROPOUT_EXTRA_TIME.values()))
    forward, backward = shares[:, 0], shares[:, 1]
    x = np.log2(seq_len)
    f = 1.0 + np.interp(x, lengths, forward)
    b = 1.0 + np.interp(x, lengths, backward)
    if np.ndim(f) == 0:
        return round(float(f), 12), round(float(b), 12)
    return f, b


# -- quantisation ----------------------------------------------------------------------


def _tiles(o: _Ops, m: Any, n: Any, tm: float, tn: float) -> tuple[Any, Any, Any]:
    """(tile count, useful fraction of the tiles' area, padded area) for one orientation.

    An empty GEMM (``m`` or ``n`` zero) counts one tile for the wave arithmetic and has
    no padded area, so its compute time is zero rather than 0/0."""
    g = MMA_GRANULARITY
    tm = o.minimum(tm, g * o.ceil(m / g))  # a tile no taller than the padded matrix
    tn = o.minimum(tn, g * o.ceil(n / g))
    tm, tn = o.maximum(tm, g), o.maximum(tn, g)
    rows, cols = o.ceil(m / tm), o.ceil(n / tn)
    padded = rows * tm * cols * tn
    one = o.maximum(rows, 1.0) * tm * o.maximum(cols, 1.0) * tn
    return o.maximum(rows * cols, 1.0), (m * n) / one, padded


def _waves(o: _Ops, tiles: Any, k: Any, sm: float) -> Any:
    """Useful share of the SM time: split-K below one wave, then wave quantisation."""
    split = o.maximum(1.0, o.minimum(o.floor(sm / tiles), o.floor(k / SPLIT_K_MIN_DEPTH)))
    units = tiles * split
    return units / (o.ceil(units / sm) * sm)


def tile_quantization_efficiency(
    m: ArrayLike, n: ArrayLike, tile_m: int = DEFAULT_TILE[0], tile_n: int = DEFAULT_TILE[1]
) -> ArrayLike:
    """Useful share of the output tiles' area: ``M·N / (⌈M/t_m⌉ t_m · ⌈N/t_n⌉ t_n)``.

    The tile is laid either way (``t_m × t_n`` or ``t_n × t_m``) and the better kept,
    as the libraries hold kernels of both orientations.

    Parameters
    ----------
    m, n : int or ndarray
        Output rows and columns.
    tile_m : int
        Rows of the output tile of one thread block, in elements (default 256; the
        tile is also tried transposed).
    tile_n : int
        Columns of the output tile of one thread block, in elements (default 128; the
        tile is also tried transposed).

    Returns
    -------
    float or ndarray
        Fraction in (0, 1].

    References
    ----------
    NVIDIA, "Matrix Multiplication Background User's Guide", section "Tile Quantization".

    Examples
    --------
    An output of 2048 × 1000 in 256×128 tiles needs 8 × 8 = 64 tiles covering
    2048 × 1024: 1000/1024 = 97.7 % useful. Laid 128×256 it needs 16 × 4 tiles and the
    same area, so the efficiency is the same.

    >>> round(tile_quantization_efficiency(2048, 1000), 4)
    0.9766
    """
    o = _ops(m, n)
    if o is _NUMPY:
        m, n = _arrays(m, n)
    _, a, _ = _tiles(o, m, n, float(tile_m), float(tile_n))
    _, b, _ = _tiles(o, m, n, float(tile_n), float(tile_m))
    return _ret(o.maximum(a, b))


def wave_quantization_efficiency(
    m: ArrayLike,
    n: ArrayLike,
    k: ArrayLike,
    sm_count: ArrayLike,
    tile_m: int = DEFAULT_TILE[0],
    tile_n: int = DEFAULT_TILE[1],
) -> ArrayLike:
    """Useful share of the SMs' time over the waves of a GEMM's tiles.

    ``T = ⌈M/t_m⌉·⌈N/t_n⌉`` tiles. A grid smaller than one wave (``T < S``) is split
    along ``K`` into ``s = max(1, min(⌊S/T⌋, ⌊K/256⌋))`` slices (split-K); the
    ``U = T·s`` thread blocks then take ``⌈U/S⌉`` waves, of which the useful share is
    ``U / (⌈U/S⌉ · S)``. The orientation of the tile is the one
    :func:`tile_quantization_efficiency` picks.

    Parameters
    ----------
    m, n, k : int or ndarray
        The GEMM dimensions.
    sm_count : int or ndarray
        Streaming multiprocessors ``S`` (A100 108, H100 SXM 132).
    tile_m : int
        Rows of the output tile of one thread block, in elements (default 256; the
        tile is also tried transposed).
    tile_n : int
        Columns of the output tile of one thread block, in elements (default 128; the
        tile is also tried transposed).

    Returns
    -------
    float or ndarray
        Fraction in (0, 1].

    References
    ----------
    NVIDIA, "Matrix Multiplication Background User's Guide", section "Wave
    Quantization"; NVIDIA CUTLASS, "Efficient GEMM in CUDA", "Parallelized Reductions"
    (split-K).

    Examples
    --------
    The guide's case: a 1792 × 1792 output in 256×128 tiles is 7 × 14 = 98 tiles on 108
    SMs, fewer than a wave, so split-K runs ⌊108/98⌋ = 1 slice: one wave, 98/108 =
    90.7 % useful. With M = 2304 instead, 9 × 14 = 126 tiles take two waves: 126/216 =
    58.3 %.

    >>> round(wave_quantization_efficiency(1792, 1792, 4096, 108), 4)
    0.9074
    >>> round(wave_quantization_efficiency(2304, 1792, 4096, 108), 4)
    0.5833
    """
    o = _ops(m, n, k, sm_count)
    if o is _NUMPY:
        m, n, k, sm_count = _arrays(m, n, k, sm_count)
    return _ret(_best(o, m, n, k, float(tile_m), float(tile_n), sm_count)[1])


def _best(o: _Ops, m: Any, n: Any, k: Any, tm: float, tn: float, sm: Any) -> tuple[Any, Any, Any]:
    """(tile efficiency, wave efficiency, padded area) of the better tile orientation."""
    tiles_a, tile_a, pad_a = _tiles(o, m, n, tm, tn)
    tiles_b, tile_b, pad_b = _tiles(o, m, n, tn, tm)
    wave_a, wave_b = _waves(o, tiles_a, k, sm), _waves(o, tiles_b, k, sm)
    if o is _MATH:
        if tile_a * wave_a >= tile_b * wave_b:
            return tile_a, wave_a, pad_a
        return tile_b, wave_b, pad_b
    pick_a = tile_a * wave_a >= tile_b * wave_b
    return (
        np.where(pick_a, tile_a, tile_b),
        np.where(pick_a, wave_a, wave_b),
        np.where(pick_a, pad_a, pad_b),
    )


def gemm_efficiency(
    m: ArrayLike,
    n: ArrayLike,
    k: ArrayLike,
    sm_count: ArrayLike | None = None,
    tile_m: int = DEFAULT_TILE[0],
    tile_n: int = DEFAULT_TILE[1],
) -> ArrayLike:
    """Product of tile and wave quantisation efficiencies of one GEMM (compute side).

    Multiply the device's achievable peak (peak × compute efficiency) by this to get the GEMM's
    compute rate. Without an SM count only tile quantisation applies.

    Parameters
    ----------
    m, n, k : int or ndarray
        The GEMM dimensions.
    sm_count : int or ndarray, optional
        Streaming multiprocessors; ``None`` leaves wave quantisation out.
    tile_m : int
        Rows of the output tile of one thread block, in elements (default 256; the
        tile is also tried transposed).
    tile_n : int
        Columns of the output tile of one thread block, in elements (default 128; the
        tile is also tried transposed).

    Returns
    -------
    float or ndarray
        Fraction in (0, 1].

    References
    ----------
    NVIDIA, "Matrix Multiplication Background User's Guide", "Tile Quantization" and
    "Wave Quantization".

    Examples
    --------
    A 4096 × 4096 × 4096 GEMM on an A100: 16 × 32 = 512 tiles (no tile waste) in
    ⌈512/108⌉ = 5 waves: 512/540 = 94.8 %.

    >>> round(gemm_efficiency(4096, 4096, 4096, 108), 4)
    0.9481
    """
    tm, tn = float(tile_m), float(tile_n)
    if sm_count is None:
        return tile_quantization_efficiency(m, n, tile_m, tile_n)
    o = _ops(m, n, k, sm_count)
    if o is _NUMPY:
        m, n, k, sm_count = _arrays(m, n, k, sm_count)
    tile, wave, _ = _best(o, m, n, k, tm, tn, sm_count)
    return _ret(tile * wave)


def gemm_time(
    m: ArrayLike,
    n: ArrayLike,
    k: ArrayLike,
    achievable_flops: ArrayLike,
    bandwidth_Bps: ArrayLike,
    bytes_per_element: ArrayLike,
    sm_count: ArrayLike | None = None,
    tile_m: int = DEFAULT_TILE[0],
    tile_n: int = DEFAULT_TILE[1],
    weight_bytes_per_element: ArrayLike | None = None,
) -> ArrayLike:
    """Time of one GEMM on one device: its own roofline with shape-aware compute.

    ``t = max(2MNK / (F · η_tile · η_wave), (MK + KN + MN)·e / B)`` where ``F`` is the
    device's achievable FLOP/s (dense peak × the compute efficiency), ``η`` the
    quantisation efficiencies of :func:`gemm_efficiency` and ``B`` the achievable memory
    bandwidth. Fixed launch costs are separate
    (:mod:`mlsys.core.formulas.overheads`).

    Parameters
    ----------
    m, n, k : int or ndarray
        The GEMM dimensions (``M`` is the token count for a linear layer's forward pass).
    achievable_flops : float or ndarray
        Peak FLOP/s of the precision times the compute efficiency, in FLOP/s.
    bandwidth_Bps : float or ndarray
        Achievable memory bandwidth, in bytes per second.
    bytes_per_element : float or ndarray
        Bytes of one element.
    sm_count : int or ndarray, optional
        Streaming multiprocessors; ``None`` leaves wave quantisation out.
    tile_m : int
        Rows of the output tile of one thread block, in elements (default 256; the
        tile is also tried transposed).
    tile_n : int
        Columns of the output tile of one thread block, in elements (default 128; the
        tile is also tried transposed).
    weight_bytes_per_element : float or ndarray, optional
        Bytes of one element of ``B`` (the weights of a linear layer) when they are
        stored narrower than the activations (weight-only quantisation); default
        ``bytes_per_element``.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    NVIDIA, "Matrix Multiplication Background User's Guide" (tile and wave
    quantisation; math vs memory bound); Williams, Waterman & Patterson (2009), CACM
    52(4) (the roofline).

    Examples
    --------
    4096³ in bf16 on an A100 (312 TFLOP/s × 0.75, 2.039 TB/s × 0.85): 137.4 GFLOP at
    234 TFLOP/s × 0.948 = 0.6195 ms; the 100.7 MB take 0.058 ms, so compute binds.

    >>> round(gemm_time(4096, 4096, 4096, 312e12 * 0.75, 2.039e12 * 0.85, 2.0, 108) * 1e3, 4)
    0.6195
    """
    tm, tn = float(tile_m), float(tile_n)
    ew = bytes_per_element if weight_bytes_per_element is None else weight_bytes_per_element
    if (
        type(m) in _SCALARS
        and type(n) in _SCALARS
        and type(k) in _SCALARS
        and type(achievable_flops) in _SCALARS
        and type(bandwidth_Bps) in _SCALARS
        and type(bytes_per_element) in _SCALARS
        and type(ew) in _SCALARS
        and (sm_count is None or type(sm_count) in _SCALARS)
    ):
        # the solvers' path: the same expressions on floats, inlined (a few µs matter)
        m, n, k = float(m), float(n), float(k)
        t_compute = math.inf
        for a, b in ((tm, tn), (tn, tm)):
            # a dimension smaller than the tile is padded to the MMA granularity only
            a = min(a, max(MMA_GRANULARITY * math.ceil(m / MMA_GRANULARITY), MMA_GRANULARITY))
            b = min(b, max(MMA_GRANULARITY * math.ceil(n / MMA_GRANULARITY), MMA_GRANULARITY))
            rows, cols = math.ceil(m / a), math.ceil(n / b)
            wave = 1.0
            if sm_count is not None:
                sm = float(sm_count)
                tiles = max(rows * cols, 1.0)
                split = max(1.0, min(math.floor(sm / tiles), math.floor(k / SPLIT_K_MIN_DEPTH)))
                units = tiles * split
                wave = units / (math.ceil(units / sm) * sm)
            t = 2.0 * k * rows * a * cols * b / (achievable_flops * wave)
            if t < t_compute:
                t_compute = t
        t_memory = ((m * k + m * n) * bytes_per_element + k * n * ew) / bandwidth_Bps
        return t_compute if t_compute > t_memory else t_memory
    o = _NUMPY
    m, n, k, achievable_flops, bandwidth_Bps, bytes_per_element, ew = _arrays(
        m, n, k, achievable_flops, bandwidth_Bps, bytes_per_element, ew
    )
    # the padded tiles are computed whole: 2·K FLOPs per padded output element; of the
    # two tile orientations the faster is kept
    t_compute = None
    for a, b in ((tm, tn), (tn, tm)):
        tiles, _, padded = _tiles(o, m, n, a, b)
        wave = 1.0 if sm_count is None else _waves(o, tiles, k, np.asarray(sm_count, float))
        t = 2.0 * k * padded / (achievable_flops * wave)
        t_compute = t if t_compute is None else np.minimum(t_compute, t)
    t_memory = ((m * k + m * n) * bytes_per_element + k * n * ew) / bandwidth_Bps
    return _ret(np.maximum(t_compute, t_memory))


# -- attention ---------------------------------------------------------------------------


def causal_attention_rate(
    q_len: ArrayLike, kv_len: ArrayLike, row_overhead_tiles: float = CAUSAL_ROW_OVERHEAD_TILES
) -> ArrayLike:
    """Throughput of a causal fused attention kernel relative to the same kernel without a
    mask, counting only the work the mask leaves (half the ``s×s`` scores).

    A causal kernel skips the key tiles above the diagonal, so the ``n = s/128`` rows of
    query tiles do ``1, 2, …, n`` tiles of work, ``n(n+1)/2`` in all, for ``n²/2`` of
    useful work (the diagonal tile is computed whole and masked). Each row also carries a
    fixed cost of ``c`` tiles (:data:`CAUSAL_ROW_OVERHEAD_TILES`), which a causal row
    spreads over half as many tiles as an unmasked one. Relative to the unmasked kernel
    (``n`` tiles + ``c`` per row, the rate the device's measured fractions give):

    ``r(n) = [n²/2 / (n(n+1)/2 + n·c)] / [n / (n + c)] = (n + c) / (n + 1 + 2c)``,

    0.78 at 2k tokens, 0.86 at 4k, 0.92 at 8k, 0.96 at 16k; it tends to 1 for long
    sequences. ``kv_len > q_len`` is read as the load-balanced context-parallel split
    :func:`attention_flops` counts (the sequence in ``2·cp`` chunks, two per rank, with
    ``cp = kv_len / q_len``): of each rank's work a share ``1/(2·cp)`` is causal, two
    diagonal blocks of ``q_len/2`` tokens, and the rest unmasked, so the rate is
    ``1 / (f / r(q_len/2) + 1 − f)`` with ``f = 1/(2·cp)``.

    Parameters
    ----------
    q_len : float or ndarray
        Query tokens of one sequence on this device (the sequence; ``s/cp`` under context
        parallelism).
    kv_len : float or ndarray
        Key/value tokens those queries attend to, at least ``q_len``.
    row_overhead_tiles : float
        Fixed work of one row of query tiles, in key/value tiles (``c``).

    Returns
    -------
    float or ndarray
        Fraction in (0, 1].

    References
    ----------
    Dao (2023), "FlashAttention-2", arXiv:2307.08691, Sec. 3.1.1 (causal masking: tiles
    above the diagonal skipped, one tile per row masked); NVIDIA/cudnn-frontend benchmark
    results (:data:`CAUSAL_ROW_OVERHEAD_TILES`); Dubey et al. (2024), "The Llama 3 Herd
    of Models", arXiv:2407.21783, Sec. 3.3.2, and NVIDIA Megatron-Core's
    ``context_parallel`` package (the sequence in ``2·cp`` chunks, two per rank, for load
    balance).

    Examples
    --------
    2048 tokens, ``n = 16`` rows: (16 + 5.1) / (17 + 10.2) = 0.776 (cuDNN on GB200
    measures 0.77 forward and 0.79 backward). The same sequence split over ``cp = 2``
    ranks: a quarter of each rank's work is causal over 512-token blocks
    (``r(4) = 9.1 / 15.2 = 0.599``), the rest unmasked: 1 / (0.25 / 0.599 + 0.75) = 0.856.

    >>> round(causal_attention_rate(2048, 2048), 3)
    0.776
    >>> round(causal_attention_rate(1024, 2048), 3)
    0.856
    """
    c = row_overhead_tiles
    if _all_scalar(q_len, kv_len):
        q, kv = float(q_len), float(kv_len)
        split = kv / q if q > 0.0 else 1.0
        # one sequence: all of it causal over q_len; split: two blocks of q_len/2
        n, causal_share = (q / ATTENTION_TILE, 1.0) if split <= 1.0 else (
            0.5 * q / ATTENTION_TILE, 0.5 / split
        )  # fmt: skip
        return 1.0 / (causal_share * (n + 1.0 + 2.0 * c) / (n + c) + 1.0 - causal_share)
    q, kv = _arrays(q_len, kv_len)
    split = np.maximum(kv / np.where(q > 0.0, q, 1.0), 1.0)
    whole = split <= 1.0
    n = np.where(whole, q, 0.5 * q) / ATTENTION_TILE
    causal_share = np.where(whole, 1.0, 0.5 / split)
    return _ret(1.0 / (causal_share * (n + 1.0 + 2.0 * c) / (n + c) + 1.0 - causal_share))


def attention_flops(
    batch: ArrayLike,
    q_len: ArrayLike,
    kv_len: ArrayLike,
    heads: ArrayLike,
    head_dim: ArrayLike,
    causal: bool = True,
) -> ArrayLike:
    """Matmul FLOPs of one attention forward pass: ``Q·Kᵀ`` and ``P·V``.

    ``4 · b · s_q · s_kv · n_h · d`` (two GEMMs of ``2·s_q·s_kv·d`` per head), halved
    by a causal mask when queries and keys are the same sequence (prefill, training).

    Parameters
    ----------
    batch : float or ndarray
        Sequences ``b``.
    q_len : float or ndarray
        Query tokens per sequence ``s_q`` (the prompt in prefill, 1 in decode).
    kv_len : float or ndarray
        Key/value tokens per sequence ``s_kv``.
    heads : float or ndarray
        Query heads on this device ``n_h``.
    head_dim : float or ndarray
        Head dimension ``d``.
    causal : bool
        Halve for a causal mask (``s_q = s_kv``).

    Returns
    -------
    float or ndarray
        FLOP.

    References
    ----------
    Dao (2023), "FlashAttention-2", arXiv:2307.08691, Sec. 4.1 (forward FLOPs
    ``4 · seqlen² · head_dim · heads``, halved with causal masking).

    Examples
    --------
    One 2048-token sequence through the 32 heads of a Llama-2-7B layer (d 128), causal:
    4·2048²·32·128 / 2 = 34.36 GFLOP.

    >>> round(attention_flops(1, 2048, 2048, 32, 128) / 1e9, 2)
    34.36
    """
    factor = 2.0 if causal else 4.0
    if _all_scalar(batch, q_len, kv_len, heads, head_dim):
        return factor * float(batch) * float(q_len) * float(kv_len) * float(heads) * head_dim
    b, sq, skv, nh, d = _arrays(batch, q_len, kv_len, heads, head_dim)
    return _ret(factor * b * sq * skv * nh * d)


def attention_time(
    batch: ArrayLike,
    q_len: ArrayLike,
    kv_len: ArrayLike,
    heads: ArrayLike,
    kv_heads: ArrayLike,
    head_dim: ArrayLike,
    peak_flops: ArrayLike,
    bandwidth_Bps: ArrayLike,
    bytes_per_element: ArrayLike,
    fused: bool = True,
    causal: bool = True,
    backward: bool = False,
    achievable_flops: ArrayLike | None = None,
    forward_fraction: ArrayLike = FLASH_ATTENTION_FORWARD_FRACTION,
    backward_fraction: ArrayLike = FLASH_ATTENTION_BACKWARD_FRACTION,
    unmasked_fractions: bool = True,
) -> ArrayLike:
    """Time of the attention core (scores, softmax, weighted values) on one device.

    **Fused** (FlashAttention-2): the ``s×s`` scores stay on chip. Compute runs at
    :data:`FLASH_ATTENTION_FORWARD_FRACTION` of ``peak_flops`` (backward:
    :data:`FLASH_ATTENTION_BACKWARD_FRACTION`, 2.5× the forward FLOPs: five matmuls
    instead of two), the fractions of an unmasked kernel; under a causal mask that rate
    times :func:`causal_attention_rate` (0.78 at 2k tokens, 0.92 at 8k); memory traffic
    is Q, K, V and O once (backward: those, dO, and the dQ, dK, dV written), and the time
    is the larger of the two.

    **Unfused** (Megatron-LM before FlashAttention): a batched GEMM ``Q·Kᵀ`` writes the
    scores, one fused scale-mask-softmax kernel reads them and writes the
    probabilities, and a batched GEMM reads those with ``V``: two GEMMs, each its own
    roofline (:func:`gemm_time`), plus ``2·b·n_h·s_q·s_kv·e`` bytes of softmax traffic.
    Backward: twice the GEMMs (gradients of both operands) and the softmax gradient
    reading the probabilities and their gradient and writing one (three passes).

    Decoding is ``q_len = 1``: both variants then stream the KV cache.

    Parameters
    ----------
    batch : float or ndarray
        Sequences ``b``.
    q_len, kv_len : float or ndarray
        Query and key/value tokens per sequence.
    heads, kv_heads : float or ndarray
        Query heads and key/value heads on this device (after tensor parallelism).
    head_dim : float or ndarray
        Head dimension ``d``.
    peak_flops : float or ndarray
        Dense tensor-core peak of the precision, in FLOP/s (the fused kernel's fraction
        applies to it).
    bandwidth_Bps : float or ndarray
        Achievable memory bandwidth, in bytes per second.
    bytes_per_element : float or ndarray
        Bytes of one activation element.
    fused : bool
        FlashAttention (True) or the unfused GEMM-softmax-GEMM (False).
    causal : bool
        Causal mask over ``s_q = s_kv`` (prefill, training); False for decode.
    backward : bool
        Time of the backward pass instead of the forward.
    achievable_flops : float or ndarray, optional
        FLOP/s of the unfused GEMMs (peak × compute efficiency); default ``peak_flops``.
    forward_fraction : float or ndarray
        Fraction of ``peak_flops`` the fused kernel sustains in the forward pass on this
        device (default :data:`FLASH_ATTENTION_FORWARD_FRACTION`, FlashAttention-2 on
        A100; Hopper: the first of :data:`HOPPER_FUSED_ATTENTION_FRACTIONS`;
        :func:`mlsys.core.solvers.efficiency.fused_attention_fractions` picks it).
    backward_fraction : float or ndarray
        Fraction of ``peak_flops`` the fused kernel sustains in the backward pass on this
        device (default :data:`FLASH_ATTENTION_BACKWARD_FRACTION`, FlashAttention-2 on
        A100; Hopper: the second of :data:`HOPPER_FUSED_ATTENTION_FRACTIONS`;
        :func:`mlsys.core.solvers.efficiency.fused_attention_fractions` picks it).
    unmasked_fractions : bool
        The fractions are an unmasked kernel's, as measured for FlashAttention-2's
        generation and later (cuDNN, FlashAttention-3 and -4), so a causal mask runs at
        :func:`causal_attention_rate` of them; ``False`` for fractions that already describe
        the causal runs they were derived from (FlashAttention-1's generation,
        :data:`FLASH_ATTENTION_2_SPEEDUP_OVER_1`).

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Dao (2023), "FlashAttention-2: Faster Attention with Better Parallelism and Work
    Partitioning", arXiv:2307.08691, Sec. 3-4, Fig. 4-6 (forward and backward throughput
    on A100; the backward does 2.5× the forward's matmul FLOPs).
    Dao et al. (2022), "FlashAttention: Fast and Memory-Efficient Exact Attention with
    IO-Awareness", NeurIPS 2022, Sec. 3.2 (standard attention moves ``Θ(N²)`` bytes of
    scores; FlashAttention ``Θ(N² d² M⁻¹)``).
    Shoeybi et al. (2019), "Megatron-LM", arXiv:1909.08053 (unfused attention).

    Examples
    --------
    A Llama-2-7B layer (32 heads, d 128), one 2048-token sequence, fp16, FlashAttention
    forward on an A100 (312 TFLOP/s, 2.039 TB/s × 0.85): 34.36 GFLOP at 0.70 × 312 =
    218.4 TFLOP/s unmasked, × 0.776 under the causal mask (:func:`causal_attention_rate`)
    = 169.4 TFLOP/s: 202.8 µs (the 67 MB of Q, K, V, O take 38.7 µs).

    >>> round(attention_time(1, 2048, 2048, 32, 32, 128, 312e12, 2.039e12 * 0.85, 2.0) * 1e6, 1)
    202.8
    """
    flops = attention_flops(batch, q_len, kv_len, heads, head_dim, causal)
    o = _ops(batch, q_len, kv_len, heads, kv_heads, head_dim, peak_flops, bandwidth_Bps)
    if o is _NUMPY:
        batch, q_len, kv_len, heads, kv_heads, head_dim, peak_flops, bandwidth_Bps = _arrays(
            batch, q_len, kv_len, heads, kv_heads, head_dim, peak_flops, bandwidth_Bps
        )
    e = bytes_per_element
    # Q and O (query heads), K and V (key/value heads), once each.
    qkvo = batch * (2.0 * q_len * heads + 2.0 * kv_len * kv_heads) * head_dim * e
    if fused:
        # the measured fractions are unmasked kernels'; a causal one runs its half of the
        # work slower (the diagonal tiles, each row's fixed cost over fewer tiles)
        masked = causal_attention_rate(q_len, kv_len) if causal and unmasked_fractions else 1.0
        if backward:
            # reads Q, K, V, O, dO; writes dQ, dK, dV: about twice the forward traffic
            return _ret(
                o.maximum(
                    2.5 * flops / (peak_flops * backward_fraction * masked),
                    2.0 * qkvo / bandwidth_Bps,
                )
            )
        return _ret(
            o.maximum(flops / (peak_flops * forward_fraction * masked), qkvo / bandwidth_Bps)
        )
    rate = peak_flops if achievable_flops is None else achievable_flops
    # Each score GEMM is a batch of b·n_h GEMMs [s_q × d]·[d × s_kv]; a causal mask does
    # not shrink the unfused GEMMs, which compute the whole square.
    bh = batch * heads
    gemm_qk = gemm_time(q_len, kv_len, head_dim, rate, bandwidth_Bps, e, None)
    gemm_pv = gemm_time(q_len, head_dim, kv_len, rate, bandwidth_Bps, e, None)
    scores = bh * q_len * kv_len * e
    # The b·n_h small GEMMs of a batched GEMM run side by side and fill the SMs, so no
    # wave quantisation is applied to them.
    gemms = bh * (gemm_qk + gemm_pv)
    softmax_passes = 3.0 if backward else 2.0
    return _ret((2.0 if backward else 1.0) * gemms + softmax_passes * scores / bandwidth_Bps)
