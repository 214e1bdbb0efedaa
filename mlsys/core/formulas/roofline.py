"""The roofline model: how fast a kernel can run given its FLOPs and its bytes.

A kernel that performs ``flops`` operations while moving ``bytes_moved`` bytes to and
from memory can go no faster than either the compute roof (``peak_flops``) or the
memory roof (``bandwidth_Bps`` times its arithmetic intensity). Every function here
takes and returns plain floats or numpy arrays in SI units and broadcasts.

References
----------
Williams, Waterman & Patterson (2009), "Roofline: an insightful visual performance
model for multicore architectures", Communications of the ACM 52(4), 65–76.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "arithmetic_intensity",
    "ridge_point",
    "attainable_flops",
    "roofline_time",
]

ArrayLike = Any


def arithmetic_intensity(flops: ArrayLike, bytes_moved: ArrayLike) -> ArrayLike:
    """Operational (arithmetic) intensity of a kernel: FLOPs per byte of memory traffic.

    Parameters
    ----------
    flops : float or ndarray
        Floating-point operations the kernel performs, in FLOP.
    bytes_moved : float or ndarray
        Bytes it moves between the memory level of interest (HBM) and the chip, in bytes.

    Returns
    -------
    float or ndarray
        FLOP per byte. ``inf`` when no bytes move.

    References
    ----------
    Williams, Waterman & Patterson (2009), "Roofline: an insightful visual performance
    model", CACM 52(4), Sec. 2 ("operational intensity").

    Examples
    --------
    A square bf16 GEMM with n = 4096 does 2n³ = 1.374e11 FLOP and moves 3 n² × 2 bytes =
    1.007e8 bytes: intensity 1365.3 FLOP/byte (= n/3).

    >>> round(float(arithmetic_intensity(2 * 4096**3, 3 * 4096**2 * 2)), 1)
    1365.3
    """
    flops = np.asarray(flops, dtype=float)
    bytes_moved = np.asarray(bytes_moved, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(bytes_moved > 0, flops / np.where(bytes_moved > 0, bytes_moved, 1.0), np.inf)
    return out[()] if out.ndim == 0 else out


def ridge_point(peak_flops: ArrayLike, bandwidth_Bps: ArrayLike) -> ArrayLike:
    """Arithmetic intensity at which a machine turns from memory- to compute-bound.

    Parameters
    ----------
    peak_flops : float or ndarray
        Peak throughput, in FLOP/s.
    bandwidth_Bps : float or ndarray
        Memory bandwidth, in bytes per second.

    Returns
    -------
    float or ndarray
        FLOP per byte: kernels with a lower intensity are memory-bound.

    References
    ----------
    Williams, Waterman & Patterson (2009), CACM 52(4), Fig. 1 (the "ridge point").

    Examples
    --------
    H100 SXM, 989 TFLOP/s dense BF16 and 3.35 TB/s HBM3: 295.2 FLOP/byte.

    >>> round(float(ridge_point(989e12, 3.35e12)), 1)
    295.2
    """
    return np.divide(peak_flops, bandwidth_Bps)


def attainable_flops(
    peak_flops: ArrayLike, bandwidth_Bps: ArrayLike, intensity: ArrayLike
) -> ArrayLike:
    """Attainable FLOP/s of a kernel: ``min(peak, intensity × bandwidth)``.

    Parameters
    ----------
    peak_flops : float or ndarray
        Peak throughput, in FLOP/s.
    bandwidth_Bps : float or ndarray
        Memory bandwidth, in bytes per second.
    intensity : float or ndarray
        Arithmetic intensity of the kernel, in FLOP per byte.

    Returns
    -------
    float or ndarray
        FLOP/s.

    References
    ----------
    Williams, Waterman & Patterson (2009), CACM 52(4), Eq. (1): attainable GFlop/s =
    min(peak floating-point performance, peak memory bandwidth × operational intensity).

    Examples
    --------
    A decode-time GEMV at 1 FLOP/byte on an H100 (3.35 TB/s) reaches only 3.35 TFLOP/s,
    0.34 % of the 989 TFLOP/s peak.

    >>> float(attainable_flops(989e12, 3.35e12, 1.0))
    3350000000000.0
    """
    return np.minimum(peak_flops, np.multiply(intensity, bandwidth_Bps))


def roofline_time(
    flops: ArrayLike,
    bytes_moved: ArrayLike,
    peak_flops: ArrayLike,
    bandwidth_Bps: ArrayLike,
    overlap: ArrayLike = 1.0,
) -> ArrayLike:
    """Lower-bound execution time of a kernel under the roofline model.

    With perfect overlap of compute and memory traffic (``overlap = 1``, the roofline
    assumption) the time is ``max(flops/peak, bytes/bandwidth)``. With none
    (``overlap = 0``) the two add. In between the hidden share of the shorter one is
    ``overlap``: ``t = max(tc, tm) + (1 − overlap) · min(tc, tm)``.

    Parameters
    ----------
    flops : float or ndarray
        Work, in FLOP.
    bytes_moved : float or ndarray
        Memory traffic, in bytes.
    peak_flops : float or ndarray
        Achievable compute throughput, in FLOP/s.
    bandwidth_Bps : float or ndarray
        Achievable memory bandwidth, in bytes per second.
    overlap : float or ndarray, optional
        Fraction in [0, 1] of the shorter of compute and memory time that is hidden
        under the longer one; 1 (default) is the classic roofline.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Williams, Waterman & Patterson (2009), "Roofline: an insightful visual performance
    model", CACM 52(4). The partial-overlap generalisation is the usual
    "max plus unhidden remainder" bound.

    Examples
    --------
    Reading 140 GB of Llama-2-70B bf16 weights at 3.35 TB/s for 140 GFLOP of work at
    989 TFLOP/s: memory time 41.8 ms dominates compute time 0.14 ms.

    >>> round(float(roofline_time(140e9, 140e9, 989e12, 3.35e12)) * 1e3, 1)
    41.8
    """
    t_compute = np.divide(flops, peak_flops)
    t_memory = np.divide(bytes_moved, bandwidth_Bps)
    longer = np.maximum(t_compute, t_memory)
    shorter = np.minimum(t_compute, t_memory)
    return longer + np.multiply(np.subtract(1.0, overlap), shorter)
