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
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["overlapped_time", "exposed_communication_time"]


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
