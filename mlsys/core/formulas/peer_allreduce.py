"""All-reduce by direct peer reads inside one NVLink node (inference engines' custom kernels).

Inference engines do not send a decode step's small tensor-parallel all-reduces through
NCCL's ring: vLLM, TensorRT-LLM, SGLang and PyTorch's intra-node communication map every
GPU's buffer into its peers' address space (CUDA IPC) and reduce with one kernel that
reads the peers' buffers over NVLink directly:

* **one-shot**: after a barrier (each rank writes a flag into every peer's memory and
  waits for theirs), every rank reads the ``n − 1`` peers' whole buffers and adds them to
  its own. Its bytes in through one GPU's links are ``(n − 1)·M``, so
  ``t = α + (n − 1)·M / (β·η)``: one latency, and more bytes than a ring moves.
* **two-shot**: a reduce-scatter (each rank reads its ``1/n`` slice from every peer and
  sums it), a barrier, then an all-gather of the reduced slices:
  ``t = 2α + 2(n − 1)/n · M / (β·η)``, the ring's bytes with two latencies instead of
  ``2(n − 1)``.

The latency ``α`` is what one such kernel costs at a few kilobytes: the launch inside a
CUDA graph, the flag barrier over NVLink and one round of peer reads. NCCL's LL ring
pays a step latency ``2(n − 1)`` times (:func:`mlsys.core.formulas.collectives.nccl_ring_time`),
which is why these kernels win at a decode step's sizes and lose to NCCL at the
megabytes of a long prefill.

References
----------
vLLM PR 2192 (hanzhi713, December 2023), "Custom all reduce kernels":
``csrc/custom_all_reduce.cuh`` (``cross_device_reduce_1stage`` / ``_2stage``, the choice
between them, 8 MiB largest buffer). vLLM PR 24111 (2025): the kernels' times on H100.
TensorRT-LLM ``allreducePlugin.cpp`` (ONESHOT / TWOSHOT strategies); PyTorch PR 114001
(``IntraNodeComm``: one-shot, two-shot).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlsys.core.formulas.collectives import (
    _SCALAR_TYPES,
    NVLINK_WIRE_EFFICIENCY,
    _bw,
    _bytes,
    _lat,
    _ranks,
    _ret,
    _scalar_args,
)

__all__ = [
    "PEER_ALLREDUCE_LATENCY_MEASURED_S",
    "PEER_ALLREDUCE_MAX_BYTES",
    "one_shot_allreduce_time",
    "two_shot_allreduce_time",
    "peer_allreduce_uses_one_shot",
    "peer_allreduce_time",
]

PEER_ALLREDUCE_LATENCY_MEASURED_S: dict[str, float] = {"NVLINK3": 9.7e-6, "NVLINK4": 6.0e-6}
"""Latency ``α`` of one custom peer-read all-reduce kernel, per NVLink generation (the
catalog fabric's name), in seconds, read from measured times as ``α = t − (n − 1)·M/(β·η)``.

* ``NVLINK4`` (H100 SXM, 450 GB/s per direction, ``η`` =
  :data:`~mlsys.core.formulas.collectives.NVLINK_WIRE_EFFICIENCY`): vLLM's one-stage kernel
  takes 0.007 ms for 0.5 MB on 2 GPUs; 0.010, 0.015, 0.022 and 0.038 ms for 0.5, 1, 2 and
  4 MB on 4; 0.013 and 0.021 ms for 0.5 and 1 MB on 6 (vLLM PR 24111, bf16, hidden 8192;
  PR 24532 repeats the 4-GPU figures within 1 µs). Those imply 5.6, 5.8, 6.5, 5.0, 4.0,
  5.9 and 6.8 µs; up to 1 MB, the sizes a decode step sends, their mean is 6.1 µs. vLLM's
  own kernel test on 8 H100 with every launch queued behind a long kernel (so device time
  only) agrees: 5.75 µs at 1 KB, 6.25 µs at 16 KB (vLLM PR 8558).
* ``NVLINK3`` (A100 SXM): no device-time measurement was found; one test family times
  vLLM's kernel eagerly (host launch included) at 4,096 elements (16 KB of fp32) on both
  GPUs: 11.3, 12.1 and 14.2 µs on 2, 4 and 8 A100 (SGLang PR 2688) against 8.8, 8.5 and
  9.3 µs on 2, 4 and 8 H100 (SGLang PR 2904; the same test, its element type not
  restated). The H100's latency plus the mean difference (3.7 µs), the
  launch being the host's and alike on both, gives 9.7 µs (an estimate; scaling by the
  mean ratio instead would give 8.5 µs).

``tests/unit/test_peer_allreduce.py`` derives both.
"""

PEER_ALLREDUCE_MAX_BYTES = 8.0 * 2**20
"""Largest buffer the engines' custom all-reduce takes, in bytes (vLLM's
``CustomAllreduce(max_size=8192 * 1024)``; TensorRT-LLM's automatic workspace is 8 MB
above two GPUs): larger all-reduces (long prefills) go to NCCL."""

_ONE_SHOT_BELOW_BYTES = {4: 512.0 * 1024, 8: 256.0 * 1024}
"""vLLM's choice (``csrc/custom_all_reduce.cuh``): one-shot on 2 GPUs always; on up to 4
GPUs below 512 KiB; on up to 8 below 256 KiB; two-shot otherwise."""


def _peer_read_time(M: Any, n: Any, bw: Any, a: Any, eta: Any, stages: int) -> Any:
    """``stages·α + bytes/(β·η)``, the bytes each GPU reads from its peers being
    ``(n − 1)·M`` in one stage (one-shot) or ``2(n − 1)/n · M`` in two (two-shot); zero
    for one rank. Scalar fast path and numpy path, as in
    :mod:`mlsys.core.formulas.collectives`."""
    fast = _scalar_args(M, n, bw, a)
    if fast is not None and type(eta) in _SCALAR_TYPES:
        m, k, b, lat = fast
        if k <= 1.0:
            return 0.0
        share = k - 1.0 if stages == 1 else 2.0 * (k - 1.0) / k
        return stages * lat + share * m / (b * eta)
    m, k, b, lat = _bytes(M), _ranks(n), _bw(bw), _lat(a)
    share = k - 1.0 if stages == 1 else 2.0 * (k - 1.0) / k
    return _ret(np.where(k > 1, stages * lat + share * m / (b * np.asarray(eta, float)), 0.0))


def peer_allreduce_uses_one_shot(message_bytes: float, ranks: int) -> bool:
    """Whether vLLM's custom all-reduce runs its one-shot kernel for this size.

    Parameters
    ----------
    message_bytes : float
        Buffer ``M`` reduced, in bytes.
    ranks : int
        GPUs taking part ``n`` (2 to 8).

    Returns
    -------
    bool
        True: one-shot; False: two-shot.

    References
    ----------
    vLLM ``csrc/custom_all_reduce.cuh`` (PR 2192 and later):
    ``world_size == 2 || (world_size <= 4 && bytes < 512 KiB) ||
    (world_size <= 8 && bytes < 256 KiB)``.

    Examples
    --------
    >>> peer_allreduce_uses_one_shot(131072, 8), peer_allreduce_uses_one_shot(2**20, 4)
    (True, False)
    """
    if ranks <= 2:
        return True
    limit = _ONE_SHOT_BELOW_BYTES[4] if ranks <= 4 else _ONE_SHOT_BELOW_BYTES[8]
    return message_bytes < limit


def one_shot_allreduce_time(
    message_bytes: Any,
    ranks: Any,
    bandwidth_Bps: Any,
    latency_s: Any,
    wire_efficiency: Any = NVLINK_WIRE_EFFICIENCY,
) -> Any:
    """Time of a one-shot all-reduce: every rank reads all peers' buffers and sums them.

    ``t = α + (n − 1)·M / (β·η)`` (zero for one rank).

    Parameters
    ----------
    message_bytes : float or ndarray
        Buffer ``M``, in bytes.
    ranks : int or ndarray
        GPUs ``n`` in the NVLink domain.
    bandwidth_Bps : float or ndarray
        Per-direction NVLink bandwidth ``β`` of one GPU, in bytes per second.
    latency_s : float or ndarray
        Kernel latency ``α``, in seconds (:data:`PEER_ALLREDUCE_LATENCY_MEASURED_S`).
    wire_efficiency : float or ndarray
        Payload share ``η`` of the line rate (default
        :data:`~mlsys.core.formulas.collectives.NVLINK_WIRE_EFFICIENCY`).

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    vLLM PR 2192, ``cross_device_reduce_1stage``; PyTorch PR 114001 (one-shot).

    Examples
    --------
    128 KB (8 tokens of an 8192-wide model in bf16) on 4 H100: 6 µs + 3 × 131,072 B /
    370 GB/s = 7.1 µs.

    >>> round(one_shot_allreduce_time(131072, 4, 450e9, 6e-6) * 1e6, 2)
    7.06
    """
    return _peer_read_time(message_bytes, ranks, bandwidth_Bps, latency_s, wire_efficiency, 1)


def two_shot_allreduce_time(
    message_bytes: Any,
    ranks: Any,
    bandwidth_Bps: Any,
    latency_s: Any,
    wire_efficiency: Any = NVLINK_WIRE_EFFICIENCY,
) -> Any:
    """Time of a two-shot all-reduce: a peer-read reduce-scatter, then an all-gather.

    ``t = 2α + 2(n − 1)/n · M / (β·η)`` (zero for one rank).

    Parameters
    ----------
    message_bytes : float or ndarray
        Buffer ``M``, in bytes.
    ranks : int or ndarray
        GPUs ``n`` in the NVLink domain.
    bandwidth_Bps : float or ndarray
        Per-direction NVLink bandwidth ``β`` of one GPU, in bytes per second.
    latency_s : float or ndarray
        Latency ``α`` of one stage, in seconds.
    wire_efficiency : float or ndarray
        Payload share ``η`` of the line rate.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    vLLM PR 2192, ``cross_device_reduce_2stage``; TensorRT-LLM TWOSHOT.

    Notes
    -----
    vLLM PR 24111 measures its two-stage kernel on 4 H100 at 17, 18, 27 and 43 µs for 0.5,
    1, 2 and 4 MB, where this gives 14, 16, 21 and 29 µs: the kernel sustains about half
    the link rate above 1 MB. Decode steps stay below that size; long prefills above
    :data:`PEER_ALLREDUCE_MAX_BYTES` use NCCL.

    Examples
    --------
    1 MiB on 4 H100: 2 × 6 µs + 1.5 × 1,048,576 B / 370 GB/s = 16.3 µs.

    >>> round(two_shot_allreduce_time(2**20, 4, 450e9, 6e-6) * 1e6, 1)
    16.3
    """
    return _peer_read_time(message_bytes, ranks, bandwidth_Bps, latency_s, wire_efficiency, 2)


def peer_allreduce_time(
    message_bytes: float, ranks: int, bandwidth_Bps: float, latency_s: float
) -> float | None:
    """Time of an engine's custom all-reduce, or None where the engine hands it to NCCL.

    One-shot or two-shot by vLLM's rule (:func:`peer_allreduce_uses_one_shot`); None
    above :data:`PEER_ALLREDUCE_MAX_BYTES` or beyond 8 GPUs (the kernels serve 2 to 8).

    Parameters
    ----------
    message_bytes : float
        Buffer ``M``, in bytes.
    ranks : int
        GPUs ``n`` in the NVLink domain.
    bandwidth_Bps : float
        Per-direction NVLink bandwidth of one GPU, in bytes per second.
    latency_s : float
        Kernel latency ``α``, in seconds.

    Returns
    -------
    float or None
        Seconds, or None (the caller prices NCCL).

    References
    ----------
    vLLM PR 2192 (``custom_all_reduce.cuh`` and ``custom_all_reduce.py``: world sizes 2,
    4, 6, 8; ``max_size`` 8 MiB).

    Examples
    --------
    A decode step's 16 KB on 8 H100 is one-shot: 6 µs + 7 × 16,384 B / 370 GB/s.

    >>> round(peer_allreduce_time(16384, 8, 450e9, 6e-6) * 1e6, 2)
    6.31
    >>> peer_allreduce_time(32 * 2**20, 8, 450e9, 6e-6) is None
    True
    """
    if ranks <= 1:
        return 0.0
    if ranks > 8 or message_bytes > PEER_ALLREDUCE_MAX_BYTES:
        return None
    if peer_allreduce_uses_one_shot(message_bytes, ranks):
        return one_shot_allreduce_time(message_bytes, ranks, bandwidth_Bps, latency_s)
    return two_shot_allreduce_time(message_bytes, ranks, bandwidth_Bps, latency_s)
