"""Collective communication under the alpha-beta (Hockney) cost model.

A message of ``M`` bytes crossing one link costs ``α + M/β``: a fixed per-step latency
``α`` (seconds) plus the bytes over the link bandwidth ``β`` (bytes per second). A
collective is a sequence of such steps, so its time is ``(steps)·α + (bytes on the
busiest link)/β``.

Conventions (the same in every function of this module):

* ``bandwidth_Bps`` is the **per-direction** bandwidth of one participant's link (what
  the catalog stores: an H100 has 450 GB/s each way on NVLink 4, 900 GB/s "total").
  A rank can send and receive at this rate at the same time.
* ``message_bytes`` (``M``) is the size of the **whole buffer** one rank holds:
  the buffer reduced by an all-reduce; the gathered *output* of an all-gather; the
  *input* of a reduce-scatter (each rank keeps ``M/n`` of the result); the send buffer
  of an all-to-all (``M/n`` goes to each peer, one ``M/n`` block stays local); the buffer
  of a broadcast, reduce or point-to-point send. This is the ``size`` column of
  nccl-tests, so ``bus_bandwidth`` here equals its ``busbw``.
* "Bytes per rank" is what one rank *sends* (it receives the same amount in every
  collective here, except the root of a broadcast or reduce and the ends of a chain).
* The time functions take a scalar fast path: when every argument is a Python or numpy
  real number they validate and compute with plain floats (about a microsecond a call,
  so solvers can call them per layout); otherwise the inputs go through
  :func:`mlsys.core.units.as_si` and numpy broadcasting. Both paths do the same float64
  arithmetic and raise the same errors.

References
----------
Hockney (1994), "The communication challenge for MPP: Intel Paragon and Meiko CS-2",
Parallel Computing 20(3) — the α + M/β model.
Thakur, Rabenseifner & Gropp (2005), "Optimization of collective communication operations
in MPICH", Int. J. High Perform. Comput. Appl. 19(1) — per-collective α-β costs.
Patarasuk & Yuan (2009), "Bandwidth optimal all-reduce algorithms for clusters of
workstations", J. Parallel Distrib. Comput. 69(2).
NVIDIA nccl-tests, ``doc/PERFORMANCE.md`` — algorithm vs bus bandwidth.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from mlsys.core.errors import ParameterError
from mlsys.core.units import as_si

__all__ = [
    # names and conventions
    "COLLECTIVES",
    "ALLREDUCE_ALGORITHMS",
    "normalize_collective",
    "bus_bandwidth_factor",
    "bus_bandwidth",
    "effective_bandwidth",
    # all-reduce
    "ring_allreduce_time",
    "tree_allreduce_time",
    "binomial_tree_allreduce_time",
    "hierarchical_allreduce_time",
    "multinode_ring_time",
    "allreduce_time",
    # the other collectives
    "allgather_time",
    "reduce_scatter_time",
    "alltoall_time",
    "multinode_alltoall_time",
    "broadcast_time",
    "reduce_time",
    "p2p_time",
    "collective_time",
    # NCCL's protocols and NVLink SHARP
    "NCCL_PROTOCOLS",
    "NCCL_RING_BASE_LATENCY_S",
    "NCCL_RING_STEP_LATENCY_S",
    "NCCL_PROTOCOL_BANDWIDTH_FRACTION",
    "NCCL_LL_GATHER_FRACTION",
    "NCCL_LL_MAX_BUS_BANDWIDTH_BPS",
    "NCCL_NVLINK_LL_STEP_LATENCY_MEASURED_S",
    "NVLINK_WIRE_EFFICIENCY",
    "NVLS_ALGORITHM_BANDWIDTH_FRACTION",
    "NVLS_LATENCY_S",
    "nccl_ring_time",
    "nvls_allreduce_time",
    "nccl_allreduce_time",
    # volumes
    "ring_allreduce_bytes_per_rank",
    "hierarchical_allreduce_bytes_per_rank",
    "collective_bytes_per_rank",
]

COLLECTIVES: tuple[str, ...] = (
    "all_reduce",
    "all_gather",
    "reduce_scatter",
    "all_to_all",
    "broadcast",
    "reduce",
    "send_recv",
)
"""Canonical collective names (aliases such as ``"allreduce"`` are accepted)."""

ALLREDUCE_ALGORITHMS: tuple[str, ...] = ("ring", "tree", "hierarchical")
"""All-reduce algorithms :func:`allreduce_time` models."""

_COLLECTIVE_ALIASES: dict[str, str] = {
    "allreduce": "all_reduce",
    "allgather": "all_gather",
    "reducescatter": "reduce_scatter",
    "alltoall": "all_to_all",
    "alltoallv": "all_to_all",
    "broadcast": "broadcast",
    "bcast": "broadcast",
    "reduce": "reduce",
    "sendrecv": "send_recv",
    "send": "send_recv",
    "recv": "send_recv",
    "p2p": "send_recv",
    "pointtopoint": "send_recv",
}


# -- input handling ---------------------------------------------------------------------


def _ret(x: Any) -> Any:
    """A float for a 0-d result, the array otherwise."""
    return float(x) if np.ndim(x) == 0 else x


# Python and numpy real scalar types (bool and numpy.bool_ are not among them): a set
# lookup on the exact type is the cheapest test on the fast path.
_SCALAR_TYPES = frozenset(
    {int, float}
    | {t for t in set(np.sctypeDict.values()) if issubclass(t, (np.integer, np.floating))}
)
_INF = math.inf


def _scalar_args(M: Any, n: Any, bw: Any, a: Any) -> tuple[float, float, float, float] | None:
    """``(M, n, bw, a)`` as floats when all four are real scalars the slow path would
    accept (finite ``M, a >= 0``, ``bw > 0``, an integer ``n >= 1``); else None, and the
    caller takes the slow path, which converts units and raises the errors."""
    if (
        type(M) in _SCALAR_TYPES
        and type(n) in _SCALAR_TYPES
        and type(bw) in _SCALAR_TYPES
        and type(a) in _SCALAR_TYPES
    ):
        M, n, bw, a = float(M), float(n), float(bw), float(a)
        ok = 0.0 <= M < _INF and 0.0 < bw < _INF and 0.0 <= a < _INF and 1.0 <= n < _INF
        if ok and n.is_integer():
            return M, n, bw, a
    return None


def _bytes(value: Any, name: str = "message_bytes") -> Any:
    return as_si(value, "byte", name)


def _bw(value: Any, name: str = "bandwidth_Bps") -> Any:
    return as_si(value, "byte/s", name, allow_zero=False)


def _lat(value: Any, name: str = "latency_s") -> Any:
    return as_si(value, "s", name)


def _ranks(value: Any, name: str = "ranks") -> Any:
    """Participant counts: integers >= 1 (float or array of floats), never text."""
    if isinstance(value, (bool, str, bytes)) or value is None:
        raise ParameterError(name, value, "an integer number of ranks >= 1")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(name, value, "an integer number of ranks >= 1") from None
    if not np.all(np.isfinite(arr)) or np.any(arr < 1) or np.any(arr != np.round(arr)):
        raise ParameterError(name, value, "an integer number of ranks >= 1")
    return float(arr) if arr.ndim == 0 else arr


def normalize_collective(kind: str, name: str = "kind") -> str:
    """Canonical name of a collective: ``"AllReduce"`` and ``"all-reduce"`` -> ``"all_reduce"``.

    Parameters
    ----------
    kind : str
        Collective name, forgiving about case and separators.
    name : str
        Parameter name used in the error message.

    Returns
    -------
    str
        One of :data:`COLLECTIVES`.

    Raises
    ------
    ParameterError
        For an unknown collective, listing the known ones.
    """
    if not isinstance(kind, str):
        raise ParameterError(name, kind, "one of " + ", ".join(COLLECTIVES))
    key = kind.strip().lower().replace("_", "").replace("-", "").replace(" ", "")
    if key in _COLLECTIVE_ALIASES:
        return _COLLECTIVE_ALIASES[key]
    raise ParameterError(name, kind, "one of " + ", ".join(COLLECTIVES))


# -- bus bandwidth (nccl-tests) -----------------------------------------------------------


def bus_bandwidth_factor(collective: str, n: Any) -> Any:
    """Ratio of bus bandwidth to algorithm bandwidth for a collective on ``n`` ranks.

    nccl-tests reports an *algorithm bandwidth* ``M / t`` and a *bus bandwidth*: the
    algorithm bandwidth times this factor, which is the rate at which the busiest link
    carries bytes in an optimal algorithm. Bus bandwidth can be compared with the
    hardware's per-direction link bandwidth whatever the rank count.

    Parameters
    ----------
    collective : str
        ``"all_reduce"``, ``"reduce_scatter"``, ``"all_gather"``, ``"all_to_all"``,
        ``"broadcast"``, ``"reduce"`` or ``"send_recv"`` (aliases accepted).
    n : int or ndarray
        Ranks taking part.

    Returns
    -------
    float or ndarray
        Dimensionless factor: ``2(n-1)/n`` for all-reduce; ``(n-1)/n`` for
        reduce-scatter, all-gather and all-to-all; ``1`` for broadcast, reduce and
        send/recv.

    References
    ----------
    NVIDIA nccl-tests, ``doc/PERFORMANCE.md``, section "Bus bandwidth".
    Patarasuk & Yuan (2009), "Bandwidth optimal all-reduce algorithms for clusters of
    workstations", J. Parallel Distrib. Comput. 69(2): the ``2(n-1)/n`` lower bound.

    Examples
    --------
    On 8 ranks an all-reduce's bus bandwidth is 1.75 times its algorithm bandwidth:

    >>> bus_bandwidth_factor("all_reduce", 8)
    1.75
    """
    kind = normalize_collective(collective, "collective")
    n = _ranks(n, "n")
    if kind == "all_reduce":
        return _ret(2.0 * (n - 1.0) / n)
    if kind in ("reduce_scatter", "all_gather", "all_to_all"):
        return _ret((n - 1.0) / n)
    return _ret(np.ones_like(n) if np.ndim(n) else 1.0)


def bus_bandwidth(message_bytes: Any, time_s: Any, collective: str, n: Any) -> Any:
    """Bus bandwidth of a measured collective, as nccl-tests computes it.

    Parameters
    ----------
    message_bytes : float or ndarray
        Buffer size ``M`` in bytes, in the convention of this module (nccl-tests'
        ``size``).
    time_s : float or ndarray
        Measured time of one collective, in seconds.
    collective : str
        Collective name (see :func:`bus_bandwidth_factor`).
    n : int or ndarray
        Ranks taking part.

    Returns
    -------
    float or ndarray
        Bytes per second: ``M / t · factor``.

    References
    ----------
    NVIDIA nccl-tests, ``doc/PERFORMANCE.md``.

    Examples
    --------
    A 1 GB all-reduce on 8 ranks in 3.9029 ms has a bus bandwidth of about 448 GB/s:

    >>> round(bus_bandwidth(1e9, 3.9029e-3, "all_reduce", 8) / 1e9, 1)
    448.4
    """
    M = _bytes(message_bytes)
    t = as_si(time_s, "s", "time_s", allow_zero=False)
    return _ret(M / t * bus_bandwidth_factor(collective, n))


def effective_bandwidth(bandwidth_Bps: Any, oversubscription: Any = 1.0) -> Any:
    """Per-rank bandwidth of a group that crosses an oversubscribed scale-out fabric.

    In a fat tree with oversubscription ratio ``r`` (downlink to uplink capacity of a
    leaf switch, e.g. ``2`` for 2:1), traffic that leaves the leaf can use only ``1/r``
    of each rank's link when every rank communicates at once — the collectives of a
    data-parallel step do exactly that. Use the result as ``bandwidth_Bps`` of a group
    that spans leaves; a group inside one leaf (or one node) keeps the full bandwidth.

    Parameters
    ----------
    bandwidth_Bps : float or ndarray
        Per-direction link bandwidth of one rank, in bytes per second.
    oversubscription : float or ndarray
        Oversubscription ratio ``r >= 1`` (``1`` means a non-blocking fabric).

    Returns
    -------
    float or ndarray
        Bytes per second per direction: ``bandwidth_Bps / r``.

    References
    ----------
    Leiserson (1985), "Fat-trees: universal networks for hardware-efficient
    supercomputing", IEEE Trans. Computers C-34(10): capacity of a fat tree's levels.

    Examples
    --------
    A 400 Gb/s (50 GB/s) NIC behind a 2:1 oversubscribed leaf: 25 GB/s per rank.

    >>> effective_bandwidth(50e9, 2.0)
    25000000000.0
    """
    bw = _bw(bandwidth_Bps)
    r = np.asarray(oversubscription, dtype=float)
    if not np.all(np.isfinite(r)) or np.any(r < 1):
        raise ParameterError(
            "oversubscription", oversubscription, "a ratio >= 1 (1 for a non-blocking fabric)"
        )
    return _ret(bw / r)


# -- all-reduce --------------------------------------------------------------------------


def ring_allreduce_time(message_bytes: Any, ranks: Any, bandwidth_Bps: Any, latency_s: Any) -> Any:
    """Time of a ring all-reduce.

    A reduce-scatter followed by an all-gather around a ring: each of ``n`` ranks sends
    (and receives) ``2 (n-1)/n`` of the message — the bandwidth lower bound for
    all-reduce — in ``2 (n-1)`` latency-bound steps:
    ``t = 2(n-1)·α + 2(n-1)/n · M/β``.

    Parameters
    ----------
    message_bytes : float or ndarray
        Size ``M`` of the buffer being reduced, in bytes.
    ranks : int or ndarray
        Participants ``n`` in the ring.
    bandwidth_Bps : float or ndarray
        Per-direction link bandwidth ``β`` of one participant, in bytes per second.
    latency_s : float or ndarray
        Per-step latency ``α``, in seconds.

    Returns
    -------
    float or ndarray
        Seconds (zero for one rank).

    References
    ----------
    Patarasuk & Yuan (2009), "Bandwidth optimal all-reduce algorithms for clusters of
    workstations", J. Parallel Distrib. Comput. 69(2): lower bound ``2(n-1)/n · M`` bytes
    per process and the ring that attains it.
    Thakur, Rabenseifner & Gropp (2005), "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1): the α-β cost of reduce-scatter + all-gather.

    Examples
    --------
    1 GB across 8 ranks at 450 GB/s per direction, 1 µs latency: 14 µs of latency plus
    1.75 GB / 450 GB/s = 3.8889 ms, about 3.9 ms.

    >>> round(ring_allreduce_time(1e9, 8, 450e9, 1e-6) * 1e3, 4)
    3.9029
    """
    fast = _scalar_args(message_bytes, ranks, bandwidth_Bps, latency_s)
    if fast is not None:
        M, n, bw, a = fast
        return 2.0 * (n - 1.0) * a + 2.0 * (n - 1.0) / n * M / bw
    M, n, bw, a = _bytes(message_bytes), _ranks(ranks), _bw(bandwidth_Bps), _lat(latency_s)
    return _ret(2.0 * (n - 1.0) * a + 2.0 * (n - 1.0) / n * M / bw)


def tree_allreduce_time(message_bytes: Any, ranks: Any, bandwidth_Bps: Any, latency_s: Any) -> Any:
    """Time of a (double binary) tree all-reduce, as NCCL runs it across nodes.

    A reduction up a binary tree followed by a broadcast down it. Two complementary
    trees (every rank is a leaf in one and an inner node in the other) each carry half
    the data, so each rank's links are kept busy and, for pipelined large messages, the
    reduction and the broadcast each cost about ``M/β``. The latency term grows with the
    tree depth, not the rank count: ``t = 2·⌈log2 n⌉·α + 2·M/β`` for ``n > 1``.
    Compared with the ring, latency is logarithmic but the bandwidth term is
    ``2M/β`` instead of ``2(n-1)/n · M/β``: trees win for small messages on many ranks,
    rings for large messages.

    Parameters
    ----------
    message_bytes : float or ndarray
        Size ``M`` of the buffer being reduced, in bytes.
    ranks : int or ndarray
        Participants ``n``.
    bandwidth_Bps : float or ndarray
        Per-direction link bandwidth ``β`` of one participant, in bytes per second.
    latency_s : float or ndarray
        Per-step (per tree level) latency ``α``, in seconds.

    Returns
    -------
    float or ndarray
        Seconds (zero for one rank).

    References
    ----------
    Sanders, Speck & Träff (2009), "Two-tree algorithms for full bandwidth broadcast,
    reduction and scan", Parallel Computing 35(12): two trees give full bandwidth
    (time ``≈ M/β`` per reduction or broadcast plus ``O(log n)·α``).
    Jeaugey (2019), "Massively scale your deep learning training with NCCL 2.4", NVIDIA
    developer blog: NCCL's double binary trees, logarithmic latency.

    Examples
    --------
    1 MB on 1024 ranks at 50 GB/s, 5 µs per step: 2·10·5 µs + 2·1 MB / 50 GB/s
    = 100 µs + 40 µs = 140 µs (a ring would take about 10.3 ms of latency alone).

    >>> round(tree_allreduce_time(1e6, 1024, 50e9, 5e-6) * 1e6, 6)
    140.0
    """
    fast = _scalar_args(message_bytes, ranks, bandwidth_Bps, latency_s)
    if fast is not None:
        M, n, bw, a = fast
        if n <= 1.0:
            return 0.0
        return 2.0 * math.ceil(math.log2(n)) * a + 2.0 * M / bw
    M, n, bw, a = _bytes(message_bytes), _ranks(ranks), _bw(bandwidth_Bps), _lat(latency_s)
    depth = np.ceil(np.log2(n))
    t = 2.0 * depth * a + 2.0 * M / bw
    return _ret(np.where(n > 1, t, 0.0))


def binomial_tree_allreduce_time(
    message_bytes: Any, ranks: Any, bandwidth_Bps: Any, latency_s: Any
) -> Any:
    """Time of an unpipelined binomial-tree all-reduce: reduce up a tree, broadcast down.

    The whole message crosses each of the ``⌈log2 n⌉`` levels once on the way up and once
    on the way down, ``t = 2·⌈log2 n⌉·(α + M/β)`` for ``n > 1``. This is the textbook
    (MPICH) tree; NCCL pipelines two complementary trees instead
    (:func:`tree_allreduce_time`, ``2·⌈log2 n⌉·α + 2·M/β``), far cheaper for large
    messages.

    Parameters
    ----------
    message_bytes : float or ndarray
        Size ``M`` of the buffer being reduced, in bytes.
    ranks : int or ndarray
        Participants ``n``.
    bandwidth_Bps : float or ndarray
        Per-direction link bandwidth ``β`` of one participant, in bytes per second.
    latency_s : float or ndarray
        Per-step (per tree level) latency ``α``, in seconds.

    Returns
    -------
    float or ndarray
        Seconds (zero for one rank).

    References
    ----------
    Thakur, Rabenseifner & Gropp (2005), "Optimization of Collective Communication
    Operations in MPICH", IJHPCA 19(1), Sec. 4: binomial-tree reduce and broadcast each
    cost ``⌈log2 p⌉(α + nβ)``.

    Examples
    --------
    1 GB on 256 ranks at 50 GB/s, 5 µs per level: 2·8·(5 µs + 20 ms) = 320.08 ms.

    >>> round(binomial_tree_allreduce_time(1e9, 256, 50e9, 5e-6) * 1e3, 2)
    320.08
    """
    fast = _scalar_args(message_bytes, ranks, bandwidth_Bps, latency_s)
    if fast is not None:
        M, n, bw, a = fast
        if n <= 1.0:
            return 0.0
        return 2.0 * math.ceil(math.log2(n)) * (a + M / bw)
    M, n, bw, a = _bytes(message_bytes), _ranks(ranks), _bw(bandwidth_Bps), _lat(latency_s)
    t = 2.0 * np.ceil(np.log2(np.maximum(n, 1.0))) * (a + M / bw)
    return _ret(np.where(n > 1, t, 0.0))


def multinode_ring_time(
    kind: str,
    message_bytes: Any,
    ranks_per_node: Any,
    nodes: Any,
    intra_bandwidth_Bps: Any,
    intra_latency_s: Any,
    inter_bandwidth_Bps: Any,
    inter_latency_s: Any,
) -> Any:
    """Time of a ring collective over ``g`` ranks on each of ``k`` nodes, one ring per NIC.

    NCCL runs a collective across nodes as rings through every rank, pipelined in
    chunks, one ring (channel) per NIC: each of the ``g`` members of a node leaves it
    through its own NIC, so the ``g`` rings cross the nodes side by side and the ring's
    bus bandwidth is the smaller of the scale-up link and ``g`` NICs:

    ``t = s_intra·α_intra + s_inter·α_inter + f·M / min(β_intra, g·β_inter)``

    with ``s = 2(N−1)`` steps for an all-reduce and ``N−1`` for an all-gather or
    reduce-scatter (``N = g·k``), ``s_inter`` of them crossing nodes (``2(k−1)`` or
    ``k−1``), and the bus factor ``f = 2(N−1)/N`` or ``(N−1)/N``. Unlike
    :func:`hierarchical_allreduce_time`, whose three phases run one after another, the
    NVLink and network hops overlap. Two DGX A100 (eight 200 Gb/s HDR NICs each) reach
    an all-reduce bus bandwidth of 192 GB/s, 8 × 24 GB/s (NVIDIA/nccl issue 812), which
    this prices; the sequential phases would give 146.

    Parameters
    ----------
    kind : {"all_reduce", "all_gather", "reduce_scatter"}
        The collective (aliases accepted).
    message_bytes : float or ndarray
        Buffer ``M`` in this module's convention, in bytes.
    ranks_per_node : int or ndarray
        Members ``g`` of the group on each node (each with its own NIC).
    nodes : int or ndarray
        Nodes ``k``.
    intra_bandwidth_Bps, inter_bandwidth_Bps : float or ndarray
        Achievable per-direction bandwidth of one rank's scale-up link and of one NIC, in
        bytes per second.
    intra_latency_s, inter_latency_s : float or ndarray
        Per-step latency inside a node and across nodes, in seconds.

    Returns
    -------
    float or ndarray
        Seconds (zero for one rank).

    References
    ----------
    Patarasuk & Yuan (2009), "Bandwidth optimal all-reduce algorithms for clusters of
    workstations", J. Parallel Distrib. Comput. 69(2) (the ring's bandwidth term);
    NVIDIA NCCL ``src/graph/tuning.cc`` (a ring's bus bandwidth across nodes is its
    channel count times the per-channel network bandwidth) and NVIDIA/nccl issue 812
    (192 GB/s all-reduce bus bandwidth on two DGX A100, 8 × HDR).

    Examples
    --------
    1 GB on 2 DGX A100 (g = 8; NVLink 246 GB/s achievable, HDR 24 GB/s per NIC): the
    16-rank ring's 30 steps, 2 across nodes, and 1.875 GB at min(246, 8 × 24) = 192 GB/s:
    9.77 ms (bus bandwidth 192 GB/s).

    >>> t = multinode_ring_time("all_reduce", 1e9, 8, 2, 246e9, 1e-6, 24e9, 5e-6)
    >>> round(t * 1e3, 2)
    9.8
    """
    kd = normalize_collective(kind)
    if kd not in _RING_STEPS:
        raise ParameterError("kind", kind, "all_reduce, all_gather or reduce_scatter")
    steps_per_hop = _RING_STEPS[kd]
    M, g, k, bw_i, a_i, bw_o, a_o, scalar = _two_level_args(
        message_bytes, ranks_per_node, nodes, intra_bandwidth_Bps, intra_latency_s,
        inter_bandwidth_Bps, inter_latency_s,
    )  # fmt: skip
    n = g * k
    net_steps = steps_per_hop * (k - 1.0)
    steps = steps_per_hop * (n - 1.0)
    if scalar:
        bus_bw = bw_i if k <= 1.0 else min(bw_i, g * bw_o)
    else:
        bus_bw = np.where(k <= 1.0, bw_i, np.minimum(bw_i, g * bw_o))
    t = (steps - net_steps) * a_i + net_steps * a_o + _RING_BUS[kd] * (n - 1.0) / n * M / bus_bw
    if scalar:
        return t if n > 1.0 else 0.0
    return _ret(np.where(n > 1.0, t, 0.0))


def _two_level_args(
    message_bytes: Any,
    ranks_per_node: Any,
    nodes: Any,
    intra_bandwidth_Bps: Any,
    intra_latency_s: Any,
    inter_bandwidth_Bps: Any,
    inter_latency_s: Any,
) -> tuple[Any, Any, Any, Any, Any, Any, Any, bool]:
    """``(M, g, k, β_intra, α_intra, β_inter, α_inter, scalar)`` of a two-level collective:
    floats on the fast path (``scalar`` True), else checked and converted (units, arrays)."""
    inside = _scalar_args(message_bytes, ranks_per_node, intra_bandwidth_Bps, intra_latency_s)
    across = _scalar_args(message_bytes, nodes, inter_bandwidth_Bps, inter_latency_s)
    if inside is not None and across is not None:
        M, g, bw_i, a_i = inside
        _, k, bw_o, a_o = across
        return M, g, k, bw_i, a_i, bw_o, a_o, True
    return (
        _bytes(message_bytes),
        _ranks(ranks_per_node, "ranks_per_node"),
        _ranks(nodes, "nodes"),
        _bw(intra_bandwidth_Bps, "intra_bandwidth_Bps"),
        _lat(intra_latency_s, "intra_latency_s"),
        _bw(inter_bandwidth_Bps, "inter_bandwidth_Bps"),
        _lat(inter_latency_s, "inter_latency_s"),
        False,
    )


def hierarchical_allreduce_time(
    message_bytes: Any,
    ranks_per_node: Any,
    nodes: Any,
    intra_bandwidth_Bps: Any,
    intra_latency_s: Any,
    inter_bandwidth_Bps: Any,
    inter_latency_s: Any,
) -> Any:
    """Time of a two-level (hierarchical) all-reduce across ``nodes`` nodes of ``g`` ranks.

    Three phases, each a ring:

    1. reduce-scatter inside each node over the scale-up fabric (NVLink):
       ``(g-1)·α_intra + (g-1)/g · M/β_intra``; each rank now owns ``M/g`` reduced
       over its node;
    2. all-reduce of that ``M/g`` shard across nodes over the scale-out fabric, the
       ``g`` shards in parallel (each rank has its own NIC):
       ``2(k-1)·α_inter + 2(k-1)/k · (M/g)/β_inter`` with ``k = nodes``;
    3. all-gather inside each node: the same cost as phase 1.

    Only ``1/g`` of the data crosses the slow fabric, which is why this beats a flat
    ring whose slowest link is the NIC.

    Parameters
    ----------
    message_bytes : float or ndarray
        Size ``M`` of the buffer being reduced, in bytes.
    ranks_per_node : int or ndarray
        Ranks ``g`` per node (the scale-up domain).
    nodes : int or ndarray
        Nodes ``k``.
    intra_bandwidth_Bps : float or ndarray
        Per-direction scale-up bandwidth of one rank, in bytes per second.
    intra_latency_s : float or ndarray
        Per-step latency inside a node, in seconds.
    inter_bandwidth_Bps : float or ndarray
        Per-direction scale-out (NIC) bandwidth of one rank, in bytes per second;
        divide by the oversubscription with :func:`effective_bandwidth` if needed.
    inter_latency_s : float or ndarray
        Per-step latency across nodes, in seconds.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Jia et al. (2018), "Highly scalable deep learning training system with
    mixed-precision: training ImageNet in four minutes", arXiv:1807.11205, Sec. 4
    (hierarchical all-reduce: intra-group reduce, inter-group all-reduce, intra-group
    broadcast). The reduce-scatter / all-gather form used here moves the same
    ``M/g`` per rank across nodes; Thakur, Rabenseifner & Gropp (2005), IJHPCA 19(1),
    give each phase's ring cost.

    Examples
    --------
    1 GB on 4 DGX H100 nodes (g = 8; NVLink 450 GB/s, 1 µs; NDR 50 GB/s, 5 µs):
    intra phases 2·(7 µs + 0.875 GB/450 GB/s) = 3.903 ms; inter phase
    30 µs + 1.5·125 MB/50 GB/s = 3.780 ms; total 7.683 ms.

    >>> round(hierarchical_allreduce_time(1e9, 8, 4, 450e9, 1e-6, 50e9, 5e-6) * 1e3, 3)
    7.683
    """
    M, g, k, bw_i, a_i, bw_o, a_o, scalar = _two_level_args(
        message_bytes, ranks_per_node, nodes, intra_bandwidth_Bps, intra_latency_s,
        inter_bandwidth_Bps, inter_latency_s,
    )  # fmt: skip
    intra = (g - 1.0) * a_i + (g - 1.0) / g * M / bw_i
    inter = 2.0 * (k - 1.0) * a_o + 2.0 * (k - 1.0) / k * (M / g) / bw_o
    return 2.0 * intra + inter if scalar else _ret(2.0 * intra + inter)


def allreduce_time(
    message_bytes: Any,
    ranks: Any,
    bandwidth_Bps: Any,
    latency_s: Any,
    algorithm: str = "ring",
    *,
    ranks_per_node: Any = None,
    inter_bandwidth_Bps: Any = None,
    inter_latency_s: Any = None,
) -> Any:
    """Time of an all-reduce by the chosen algorithm.

    Parameters
    ----------
    message_bytes : float or ndarray
        Size ``M`` of the buffer being reduced, in bytes.
    ranks : int or ndarray
        All participants ``n`` (for ``"hierarchical"``: ``ranks_per_node · nodes``).
    bandwidth_Bps : float or ndarray
        Per-direction bandwidth of one rank, in bytes per second (for
        ``"hierarchical"``: the scale-up bandwidth inside a node).
    latency_s : float or ndarray
        Per-step latency, in seconds (for ``"hierarchical"``: inside a node).
    algorithm : {"ring", "tree", "hierarchical"}
        See :func:`ring_allreduce_time`, :func:`tree_allreduce_time`,
        :func:`hierarchical_allreduce_time`.
    ranks_per_node : int, optional
        Ranks per node, required by ``"hierarchical"``; must divide ``ranks``.
    inter_bandwidth_Bps : float, optional
        Scale-out per-direction bandwidth per rank (``"hierarchical"``; defaults to
        ``bandwidth_Bps``).
    inter_latency_s : float, optional
        Scale-out per-step latency (``"hierarchical"``; defaults to ``latency_s``).

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    As for the per-algorithm functions.

    Examples
    --------
    The ring case is :func:`ring_allreduce_time`:

    >>> round(allreduce_time(1e9, 8, 450e9, 1e-6, "ring") * 1e3, 4)
    3.9029
    """
    algo = algorithm.strip().lower() if isinstance(algorithm, str) else algorithm
    if algo == "ring":
        return ring_allreduce_time(message_bytes, ranks, bandwidth_Bps, latency_s)
    if algo == "tree":
        return tree_allreduce_time(message_bytes, ranks, bandwidth_Bps, latency_s)
    if algo == "hierarchical":
        if ranks_per_node is None:
            raise ParameterError(
                "ranks_per_node", None, "the ranks per node", "The hierarchical algorithm needs it."
            )
        n = _ranks(ranks)
        g = _ranks(ranks_per_node, "ranks_per_node")
        if np.any(np.mod(n, g) != 0):
            raise ParameterError("ranks_per_node", ranks_per_node, f"a divisor of ranks={ranks!r}")
        return hierarchical_allreduce_time(
            message_bytes,
            g,
            n / g,
            bandwidth_Bps,
            latency_s,
            bandwidth_Bps if inter_bandwidth_Bps is None else inter_bandwidth_Bps,
            latency_s if inter_latency_s is None else inter_latency_s,
        )
    raise ParameterError("algorithm", algorithm, "one of " + ", ".join(ALLREDUCE_ALGORITHMS))


# -- the other collectives ---------------------------------------------------------------


def allgather_time(message_bytes: Any, ranks: Any, bandwidth_Bps: Any, latency_s: Any) -> Any:
    """Time of a ring all-gather.

    Each rank contributes ``M/n`` and ends with all ``M`` bytes; around a ring it
    forwards ``n-1`` blocks of ``M/n``: ``t = (n-1)·α + (n-1)/n · M/β``.

    Parameters
    ----------
    message_bytes : float or ndarray
        Size ``M`` of the gathered output on each rank, in bytes.
    ranks : int or ndarray
        Participants ``n``.
    bandwidth_Bps : float or ndarray
        Per-direction link bandwidth of one rank, in bytes per second.
    latency_s : float or ndarray
        Per-step latency, in seconds.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Thakur, Rabenseifner & Gropp (2005), "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1), Sec. 4.1 (ring all-gather).

    Examples
    --------
    1 GB gathered on 8 ranks at 450 GB/s, 1 µs: 7 µs + 0.875 GB/450 GB/s = 1.9514 ms.

    >>> round(allgather_time(1e9, 8, 450e9, 1e-6) * 1e3, 4)
    1.9514
    """
    fast = _scalar_args(message_bytes, ranks, bandwidth_Bps, latency_s)
    if fast is not None:
        M, n, bw, a = fast
        return (n - 1.0) * a + (n - 1.0) / n * M / bw
    M, n, bw, a = _bytes(message_bytes), _ranks(ranks), _bw(bandwidth_Bps), _lat(latency_s)
    return _ret((n - 1.0) * a + (n - 1.0) / n * M / bw)


def reduce_scatter_time(message_bytes: Any, ranks: Any, bandwidth_Bps: Any, latency_s: Any) -> Any:
    """Time of a ring reduce-scatter.

    Each rank starts with ``M`` bytes and ends owning ``M/n`` of the reduced result;
    the mirror image of the all-gather: ``t = (n-1)·α + (n-1)/n · M/β`` (the local
    reduction arithmetic is neglected).

    Parameters
    ----------
    message_bytes : float or ndarray
        Size ``M`` of each rank's input buffer, in bytes.
    ranks : int or ndarray
        Participants ``n``.
    bandwidth_Bps : float or ndarray
        Per-direction link bandwidth of one rank, in bytes per second.
    latency_s : float or ndarray
        Per-step latency, in seconds.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Thakur, Rabenseifner & Gropp (2005), "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1), Sec. 4.5 (pairwise / ring reduce-scatter).

    Examples
    --------
    Same volume as the all-gather: 1 GB on 8 ranks at 450 GB/s, 1 µs: 1.9514 ms.

    >>> round(reduce_scatter_time(1e9, 8, 450e9, 1e-6) * 1e3, 4)
    1.9514
    """
    return allgather_time(message_bytes, ranks, bandwidth_Bps, latency_s)


def alltoall_time(message_bytes: Any, ranks: Any, bandwidth_Bps: Any, latency_s: Any) -> Any:
    """Time of a pairwise-exchange all-to-all.

    Each rank's send buffer of ``M`` bytes holds ``n`` blocks of ``M/n``; one stays
    local and ``n-1`` go to the other ranks, one per step:
    ``t = (n-1)·α + (n-1)/n · M/β``. Assumes the fabric has full bisection bandwidth,
    so each rank's own link is the bottleneck (use :func:`effective_bandwidth` for an
    oversubscribed one).

    Parameters
    ----------
    message_bytes : float or ndarray
        Total send buffer ``M`` of one rank, in bytes (the convention of nccl-tests).
    ranks : int or ndarray
        Participants ``n``.
    bandwidth_Bps : float or ndarray
        Per-direction link bandwidth of one rank, in bytes per second.
    latency_s : float or ndarray
        Per-step latency, in seconds.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Thakur, Rabenseifner & Gropp (2005), "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1), Sec. 4.3 (pairwise-exchange all-to-all).

    Examples
    --------
    A 64 MB buffer per rank across 8 ranks at 50 GB/s, 5 µs:
    35 µs + 56 MB/50 GB/s = 1.155 ms.

    >>> round(alltoall_time(64e6, 8, 50e9, 5e-6) * 1e3, 3)
    1.155
    """
    return allgather_time(message_bytes, ranks, bandwidth_Bps, latency_s)


def multinode_alltoall_time(
    message_bytes: Any,
    ranks_per_node: Any,
    nodes: Any,
    intra_bandwidth_Bps: Any,
    intra_latency_s: Any,
    inter_bandwidth_Bps: Any,
    inter_latency_s: Any,
) -> Any:
    """Time of a pairwise-exchange all-to-all over ``k`` ranks per node on ``n`` nodes.

    Each rank's ``M``-byte send buffer holds ``k·n`` blocks of ``M/(k·n)``: ``k-1`` go to
    the other ranks of its node over the scale-up fabric and ``k·(n-1)`` leave the node
    through the rank's own network link, one block per step (Thakur et al.'s pairwise
    exchange, each step at the speed of the link it uses):

    ``t = (k-1)·α_intra + (k-1)/(k·n)·M/β_intra + k(n-1)·α_inter + (n-1)/n·M/β_inter``.

    Unlike a reduce-scatter or an all-gather, an all-to-all has nothing to combine on the
    way: every byte bound for another node crosses the network, so the off-node share is
    ``(n-1)/n`` of the buffer, not ``1/k`` of it as a two-level (intra-node, then
    inter-node) schedule of a reducing collective would move. With ``n = 1`` this is
    :func:`alltoall_time`.

    Parameters
    ----------
    message_bytes : float or ndarray
        Total send buffer ``M`` of one rank, in bytes (the convention of nccl-tests).
    ranks_per_node : int or ndarray
        Participants per node ``k``.
    nodes : int or ndarray
        Nodes ``n``.
    intra_bandwidth_Bps, inter_bandwidth_Bps : float or ndarray
        Per-direction bandwidth of one rank's scale-up link and of its network link, in
        bytes per second.
    intra_latency_s, inter_latency_s : float or ndarray
        Per-step latency over each, in seconds.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Thakur, Rabenseifner & Gropp (2005), "Optimization of collective communication
    operations in MPICH", IJHPCA 19(1), Sec. 4.3 (pairwise-exchange all-to-all);
    the off-node volume ``(n-1)/n · M`` per rank is the all-to-all's own traffic
    matrix (every rank sends ``M/(k·n)`` to each of the ``k·(n-1)`` ranks elsewhere).

    Examples
    --------
    A 134 MB buffer over 16 ranks on two nodes (450 GB/s NVLink at 1 µs, 50 GB/s
    network at 5 µs): 7 µs + 130.3 µs + 40 µs + 1.34 ms = 1.5173 ms, nine tenths of it
    the half of the buffer that leaves the node.

    >>> round(multinode_alltoall_time(134e6, 8, 2, 450e9, 1e-6, 50e9, 5e-6) * 1e3, 4)
    1.5173
    """
    M, k, n, bw_i, a_i, bw_o, a_o, scalar = _two_level_args(
        message_bytes, ranks_per_node, nodes, intra_bandwidth_Bps, intra_latency_s,
        inter_bandwidth_Bps, inter_latency_s,
    )  # fmt: skip
    inside = (k - 1.0) * a_i + (k - 1.0) / (k * n) * M / bw_i
    across = k * (n - 1.0) * a_o + (n - 1.0) / n * M / bw_o
    return inside + across if scalar else _ret(inside + across)


def broadcast_time(message_bytes: Any, ranks: Any, bandwidth_Bps: Any, latency_s: Any) -> Any:
    """Time of a pipelined (chain / ring) broadcast of ``M`` bytes from one root.

    The message is cut into many small chunks that stream along a chain of the ``n``
    ranks; in the large-message limit each link carries ``M`` once, and the pipeline
    takes ``n-1`` steps to fill: ``t = (n-1)·α + M/β`` for ``n > 1``. This is why
    nccl-tests' bus-bandwidth factor for broadcast is 1.

    Parameters
    ----------
    message_bytes : float or ndarray
        Size ``M`` of the broadcast buffer, in bytes.
    ranks : int or ndarray
        Participants ``n`` (root included).
    bandwidth_Bps : float or ndarray
        Per-direction link bandwidth of one rank, in bytes per second.
    latency_s : float or ndarray
        Per-step latency, in seconds.

    Returns
    -------
    float or ndarray
        Seconds (zero for one rank).

    References
    ----------
    Sanders, Speck & Träff (2009), "Two-tree algorithms for full bandwidth broadcast,
    reduction and scan", Parallel Computing 35(12), Sec. 2 (pipelined chain:
    bandwidth term ``M/β``).
    NVIDIA nccl-tests, ``doc/PERFORMANCE.md`` (broadcast bus factor 1).

    Examples
    --------
    1 GB from one rank to 7 others at 450 GB/s, 1 µs: 7 µs + 2.2222 ms = 2.2292 ms.

    >>> round(broadcast_time(1e9, 8, 450e9, 1e-6) * 1e3, 4)
    2.2292
    """
    fast = _scalar_args(message_bytes, ranks, bandwidth_Bps, latency_s)
    if fast is not None:
        M, n, bw, a = fast
        return (n - 1.0) * a + M / bw if n > 1.0 else 0.0
    M, n, bw, a = _bytes(message_bytes), _ranks(ranks), _bw(bandwidth_Bps), _lat(latency_s)
    return _ret(np.where(n > 1, (n - 1.0) * a + M / bw, 0.0))


def reduce_time(message_bytes: Any, ranks: Any, bandwidth_Bps: Any, latency_s: Any) -> Any:
    """Time of a pipelined (chain / ring) reduce of ``M`` bytes to one root.

    The broadcast run backwards: partial sums stream along the chain towards the
    root, ``t = (n-1)·α + M/β`` for ``n > 1`` (reduction arithmetic neglected).

    Parameters
    ----------
    message_bytes : float or ndarray
        Size ``M`` of the buffer reduced, in bytes.
    ranks : int or ndarray
        Participants ``n`` (root included).
    bandwidth_Bps : float or ndarray
        Per-direction link bandwidth of one rank, in bytes per second.
    latency_s : float or ndarray
        Per-step latency, in seconds.

    Returns
    -------
    float or ndarray
        Seconds (zero for one rank).

    References
    ----------
    Sanders, Speck & Träff (2009), "Two-tree algorithms for full bandwidth broadcast,
    reduction and scan", Parallel Computing 35(12).
    NVIDIA nccl-tests, ``doc/PERFORMANCE.md`` (reduce bus factor 1).

    Examples
    --------
    Same as the broadcast: 1 GB on 8 ranks at 450 GB/s, 1 µs: 2.2292 ms.

    >>> round(reduce_time(1e9, 8, 450e9, 1e-6) * 1e3, 4)
    2.2292
    """
    return broadcast_time(message_bytes, ranks, bandwidth_Bps, latency_s)


def p2p_time(message_bytes: Any, bandwidth_Bps: Any, latency_s: Any) -> Any:
    """Time of one point-to-point send of ``M`` bytes: ``t = α + M/β``.

    Parameters
    ----------
    message_bytes : float or ndarray
        Bytes sent, ``M``.
    bandwidth_Bps : float or ndarray
        Per-direction link bandwidth, in bytes per second.
    latency_s : float or ndarray
        Latency ``α``, in seconds.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Hockney (1994), "The communication challenge for MPP: Intel Paragon and Meiko
    CS-2", Parallel Computing 20(3).

    Examples
    --------
    A 16 MB pipeline activation over a 50 GB/s link with 5 µs latency: 325 µs.

    >>> round(p2p_time(16e6, 50e9, 5e-6) * 1e6, 6)
    325.0
    """
    fast = _scalar_args(message_bytes, 1.0, bandwidth_Bps, latency_s)
    if fast is not None:
        M, _, bw, a = fast
        return a + M / bw
    M, bw, a = _bytes(message_bytes), _bw(bandwidth_Bps), _lat(latency_s)
    return _ret(a + M / bw)


def collective_time(
    kind: str,
    message_bytes: Any,
    ranks: Any,
    bandwidth_Bps: Any,
    latency_s: Any,
    algorithm: str = "ring",
    **hierarchical: Any,
) -> Any:
    """Time of any collective, by name.

    Parameters
    ----------
    kind : str
        One of :data:`COLLECTIVES` (aliases such as ``"allreduce"`` accepted).
    message_bytes : float or ndarray
        Buffer size ``M`` in bytes, in this module's convention (see the module notes).
    ranks : int or ndarray
        Participants ``n`` (ignored by ``"send_recv"``).
    bandwidth_Bps : float or ndarray
        Per-direction link bandwidth of one rank, in bytes per second.
    latency_s : float or ndarray
        Per-step latency, in seconds.
    algorithm : str
        All-reduce algorithm (see :func:`allreduce_time`); ignored by the others.
    **hierarchical
        ``ranks_per_node``, ``inter_bandwidth_Bps``, ``inter_latency_s`` for a
        hierarchical all-reduce.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    As for the per-collective functions.

    Examples
    --------
    >>> round(collective_time("all-gather", 1e9, 8, 450e9, 1e-6) * 1e3, 4)
    1.9514
    """
    k = normalize_collective(kind)
    if k == "all_reduce":
        return allreduce_time(
            message_bytes, ranks, bandwidth_Bps, latency_s, algorithm, **hierarchical
        )
    if hierarchical:
        raise ParameterError(
            "hierarchical", sorted(hierarchical), "no extra arguments", f"{k} takes none."
        )
    if k == "send_recv":
        return p2p_time(message_bytes, bandwidth_Bps, latency_s)
    fn = {
        "all_gather": allgather_time,
        "reduce_scatter": reduce_scatter_time,
        "all_to_all": alltoall_time,
        "broadcast": broadcast_time,
        "reduce": reduce_time,
    }[k]
    return fn(message_bytes, ranks, bandwidth_Bps, latency_s)


# -- volumes ------------------------------------------------------------------------------


def ring_allreduce_bytes_per_rank(message_bytes: Any, ranks: Any) -> Any:
    """Bytes each rank sends (and receives) in a ring all-reduce: ``2(n-1)/n · M``.

    Parameters
    ----------
    message_bytes : float or ndarray
        Size ``M`` of the buffer being reduced, in bytes.
    ranks : int or ndarray
        Participants ``n``.

    Returns
    -------
    float or ndarray
        Bytes.

    References
    ----------
    Patarasuk & Yuan (2009), "Bandwidth optimal all-reduce algorithms for clusters of
    workstations", J. Parallel Distrib. Comput. 69(2): every process must send at least
    ``2(n-1)/n · M`` bytes; the ring attains it.

    Examples
    --------
    A 1 GB all-reduce on 8 ranks sends 1.75 GB from each rank:

    >>> ring_allreduce_bytes_per_rank(1e9, 8)
    1750000000.0
    """
    M, n = _bytes(message_bytes), _ranks(ranks)
    return _ret(2.0 * (n - 1.0) / n * M)


def hierarchical_allreduce_bytes_per_rank(
    message_bytes: Any, ranks_per_node: Any, nodes: Any
) -> tuple[Any, Any]:
    """Bytes each rank sends inside its node and across nodes in a hierarchical all-reduce.

    Parameters
    ----------
    message_bytes : float or ndarray
        Size ``M`` of the buffer being reduced, in bytes.
    ranks_per_node : int or ndarray
        Ranks ``g`` per node.
    nodes : int or ndarray
        Nodes ``k``.

    Returns
    -------
    tuple of (float or ndarray, float or ndarray)
        ``(intra, inter)`` bytes: ``2(g-1)/g · M`` over the scale-up fabric
        (reduce-scatter + all-gather) and ``2(k-1)/k · M/g`` over the scale-out fabric.

    References
    ----------
    Jia et al. (2018), "Highly scalable deep learning training system with
    mixed-precision: training ImageNet in four minutes", arXiv:1807.11205.

    Examples
    --------
    1 GB on 4 nodes of 8: 1.75 GB over NVLink, 187.5 MB over the NIC per rank.

    >>> hierarchical_allreduce_bytes_per_rank(1e9, 8, 4)
    (1750000000.0, 187500000.0)
    """
    M = _bytes(message_bytes)
    g = _ranks(ranks_per_node, "ranks_per_node")
    k = _ranks(nodes, "nodes")
    return _ret(2.0 * (g - 1.0) / g * M), _ret(2.0 * (k - 1.0) / k * M / g)


def collective_bytes_per_rank(
    kind: str,
    message_bytes: Any,
    ranks: Any,
    algorithm: str = "ring",
    *,
    ranks_per_node: Any = None,
) -> Any:
    """Bytes one rank sends in a collective (the algorithmic volume of the cost model).

    ===============  ==========================================
    collective       bytes sent per rank
    ===============  ==========================================
    all_reduce       ring ``2(n-1)/n·M``; tree ``2M`` (busiest rank,
                     ``n > 1``); hierarchical intra + inter volumes
    all_gather       ``(n-1)/n·M``
    reduce_scatter   ``(n-1)/n·M``
    all_to_all       ``(n-1)/n·M``
    broadcast        ``M`` (root and forwarding ranks; ``n > 1``)
    reduce           ``M`` (every rank but the root; ``n > 1``)
    send_recv        ``M`` (the sender)
    ===============  ==========================================

    Parameters
    ----------
    kind : str
        One of :data:`COLLECTIVES`.
    message_bytes : float or ndarray
        Buffer size ``M`` in bytes, in this module's convention.
    ranks : int or ndarray
        Participants ``n``.
    algorithm : str
        All-reduce algorithm: ``"ring"``, ``"tree"`` or ``"hierarchical"``.
    ranks_per_node : int, optional
        Ranks per node, for ``"hierarchical"``.

    Returns
    -------
    float or ndarray
        Bytes.

    References
    ----------
    Patarasuk & Yuan (2009), J. Parallel Distrib. Comput. 69(2); Thakur, Rabenseifner &
    Gropp (2005), IJHPCA 19(1); Sanders, Speck & Träff (2009), Parallel Computing 35(12).

    Examples
    --------
    An all-gather of a 1 GB output on 4 ranks: each rank sends its 250 MB to 3 peers
    around the ring, 750 MB.

    >>> collective_bytes_per_rank("all_gather", 1e9, 4)
    750000000.0
    """
    k = normalize_collective(kind)
    M, n = _bytes(message_bytes), _ranks(ranks)
    if k == "all_reduce":
        algo = algorithm.strip().lower() if isinstance(algorithm, str) else algorithm
        if algo == "ring":
            return ring_allreduce_bytes_per_rank(M, n)
        if algo == "tree":
            return _ret(np.where(n > 1, 2.0 * M, 0.0))
        if algo == "hierarchical":
            if ranks_per_node is None:
                raise ParameterError("ranks_per_node", None, "the ranks per node")
            g = _ranks(ranks_per_node, "ranks_per_node")
            intra, inter = hierarchical_allreduce_bytes_per_rank(M, g, n / g)
            return _ret(np.asarray(intra) + np.asarray(inter))
        raise ParameterError("algorithm", algorithm, "one of " + ", ".join(ALLREDUCE_ALGORITHMS))
    if k in ("all_gather", "reduce_scatter", "all_to_all"):
        return _ret((n - 1.0) / n * M)
    if k == "send_recv":
        return _ret(M * np.ones_like(n) if np.ndim(n) else M)
    return _ret(np.where(n > 1, M, 0.0) * np.ones(np.broadcast(M, n).shape))


# -- NCCL's protocols (small-message latency) and NVLink SHARP --------------------------

NCCL_PROTOCOLS: tuple[str, ...] = ("LL", "LL128", "Simple")
"""NCCL's wire protocols: ``LL`` (8-byte stores carrying a 4-byte flag: lowest latency,
half the bandwidth), ``LL128`` (128-byte lines with an 8-byte flag) and ``Simple``
(bulk copies with fences: full bandwidth, highest latency)."""

NCCL_RING_BASE_LATENCY_S: dict[str, float] = {"LL": 6.6e-6, "LL128": 14.0e-6, "Simple": 8.4e-6}
"""Fixed latency of one ring collective per protocol, in seconds (NCCL's cost model,
``baseLat`` of ``src/graph/tuning.cc``, NCCL 2.18-2.2x: Ring LL 6.6 µs, LL128 14 µs, Simple
8.4 µs)."""

NCCL_RING_STEP_LATENCY_S: dict[str, dict[str, float]] = {
    "nvlink": {"LL": 0.6e-6, "LL128": 1.9e-6, "Simple": 3.4e-6},
    "pci": {"LL": 1.0e-6, "LL128": 2.5e-6, "Simple": 5.7e-6},
    "net": {"LL": 2.7e-6, "LL128": 4.0e-6, "Simple": 14.0e-6},
}
"""Latency of one ring step per link type and protocol, in seconds (``hwLat`` of NCCL's
``src/graph/tuning.cc``, NCCL 2.18-2.2x, Ring row: NVLink 0.6/1.9/3.4 µs, PCI 1.0/2.5/5.7 µs,
network 2.7/4.0/14 µs for LL/LL128/Simple)."""

NCCL_PROTOCOL_BANDWIDTH_FRACTION: dict[str, float] = {"LL": 0.25, "LL128": 0.92, "Simple": 1.0}
"""Share of the link's bus bandwidth each protocol delivers to a ring all-reduce, as
NCCL's cost model sets it (``ncclTopoTuneModel`` in ``src/graph/tuning.cc``, NCCL
2.18.6): LL ``busBw × 1/4`` (its 4-byte flag takes half of each 8-byte store, and the
all-reduce's reduction runs on the same threads that poll the flags), LL128
``busBw × 0.92`` (120 of 128 bytes), Simple the whole. Ring all-gather and
reduce-scatter on one node get LL at ``1/3`` (:data:`NCCL_LL_GATHER_FRACTION`); LL is also
capped at :data:`NCCL_LL_MAX_BUS_BANDWIDTH_BPS`."""

NCCL_LL_GATHER_FRACTION = 1.0 / 3.0
"""LL's share of the bus bandwidth for a ring all-gather or reduce-scatter inside one
node (NCCL 2.18.6 ``tuning.cc``: ``1.0/3.0`` unless the collective is an all-reduce or a
reduce, or spans nodes, where it is ``1.0/4.0``)."""

NCCL_LL_MAX_BUS_BANDWIDTH_BPS = 87.7e9
"""Most bus bandwidth NCCL's model gives the LL protocol on one Ampere or Hopper node, in
bytes per second (``llMaxBws``, "Ampere-N1" and "Hopper-N1": 87.7 GB/s; NCCL 2.18.6
``src/graph/tuning.cc``): on NVLink the LL ring is bounded by how fast its threads store
and poll 8-byte lines, not by the links."""

NCCL_NVLINK_LL_STEP_LATENCY_MEASURED_S: dict[str, float] = {"NVLINK3": 1.98e-6, "NVLINK4": 1.10e-6}
"""Measured time of one LL ring step over NVLink and NVSwitch, per generation (the catalog
fabric's name), in seconds; NCCL's tuning model (:data:`NCCL_RING_STEP_LATENCY_S`) says
0.6 µs for every generation, and NCCL picks its protocol by that model.

* ``NVLINK3`` (DGX A100): ring all-reduces of 8-128 bytes on one channel take 10.0, 13.76,
  16.88, 20.8, 25.2, 29.5 and 33.7 µs on 2 to 8 GPUs (NVIDIA/nccl-tests issue 123, 2022):
  a straight line of 1.98 µs per ring step ``2(n − 1)`` (least squares; its 5.6 µs
  intercept is within 1 µs of NCCL's LL base latency).
* ``NVLINK4`` (8 H100): NCCL all-reduces of 1-32 KB take 22.0-23.4 µs (the NCCL column of
  vllm-project/vllm PR 8558's custom all-reduce test, 2024): ``(22.0 − 6.6) / 14`` = 1.10 µs
  per step over NCCL's base latency.
"""

NVLINK_WIRE_EFFICIENCY = 370.0 / 450.0
"""Share of NVLink's line rate a collective's payload gets: NCCL reaches about 370 GB/s
of bus bandwidth on H100's 450 GB/s per direction — "with the protocol overhead (~20 %)"
(S. Jeaugey, NCCL maintainer, NVIDIA/nccl-tests issue 212, 2024; NVIDIA/nccl issue 1455
measures 365-370 GB/s ring all-reduce bus bandwidth on 2-8 H100)."""

NVLS_ALGORITHM_BANDWIDTH_FRACTION = 275.0 / 450.0
"""Algorithm bandwidth of NCCL's NVLink SHARP (NVLS) all-reduce as a share of the
per-direction NVLink bandwidth: about 275 GB/s on 8 H100 (bus bandwidth ~480 GB/s)
against 450 GB/s (NVIDIA/nccl-tests issue 212; NVIDIA/nccl issue 1455: 258-273 GB/s on
5-8 GPUs)."""

NVLS_LATENCY_S = 25e-6
"""Latency NCCL's cost model gives its NVLS all-reduce on NVLink (``hwLat`` NVLS/Simple,
``src/graph/tuning.cc``, NCCL 2.2x: 25 µs), which is why small all-reduces stay on the
ring's LL protocol."""

_RING_STEPS = {"all_reduce": 2.0, "all_gather": 1.0, "reduce_scatter": 1.0}
_RING_BUS = {"all_reduce": 2.0, "all_gather": 1.0, "reduce_scatter": 1.0}


def _link_latencies(link: str) -> dict[str, float]:
    key = link.strip().lower() if isinstance(link, str) else link
    if key not in NCCL_RING_STEP_LATENCY_S:
        raise ParameterError("link", link, "one of " + ", ".join(NCCL_RING_STEP_LATENCY_S))
    return NCCL_RING_STEP_LATENCY_S[key]


def _protocols(protocol: Any) -> tuple[str, ...]:
    if protocol is None:
        return NCCL_PROTOCOLS
    for p in NCCL_PROTOCOLS:
        if isinstance(protocol, str) and protocol.lower() == p.lower():
            return (p,)
    raise ParameterError("protocol", protocol, "None (NCCL's choice) or LL, LL128, Simple")


def _ll_share(protocol: str, kind: str, nodes: Any) -> Any:
    """The protocol's share of the bus bandwidth (LL's depends on the collective)."""
    if protocol != "LL" or kind == "all_reduce":
        return NCCL_PROTOCOL_BANDWIDTH_FRACTION[protocol]
    if type(nodes) is float:
        return NCCL_LL_GATHER_FRACTION if nodes <= 1.0 else NCCL_PROTOCOL_BANDWIDTH_FRACTION["LL"]
    return np.where(
        np.asarray(nodes) <= 1, NCCL_LL_GATHER_FRACTION, NCCL_PROTOCOL_BANDWIDTH_FRACTION["LL"]
    )


def nccl_ring_time(
    kind: str,
    message_bytes: Any,
    ranks: Any,
    bandwidth_Bps: Any,
    link: str = "nvlink",
    protocol: str | None = None,
    *,
    nodes: Any = 1,
    wire_efficiency: Any = None,
    ll_step_latency_s: Any = None,
) -> Any:
    """Time of a ring all-reduce, all-gather or reduce-scatter as NCCL's cost model prices it.

    For protocol ``p`` with ``s`` ring steps (``2(n-1)`` for all-reduce, ``n-1`` for
    all-gather and reduce-scatter), of which ``s_net`` cross nodes (``2(k-1)`` or
    ``k-1`` on ``k`` nodes):

    ``t_p = base_p + (s − s_net)·step_p(link) + s_net·step_p(net) + f·M / B_p``

    with the bus factor ``f`` (``2(n-1)/n`` or ``(n-1)/n``) and the protocol's bus
    bandwidth ``B_p = β · η_wire · φ_p`` — the protocol's share ``φ_p`` of the link
    rate ``β`` times the wire efficiency ``η_wire`` — which for LL NCCL also caps at
    :data:`NCCL_LL_MAX_BUS_BANDWIDTH_BPS`. NCCL's tuner runs the protocol its model says
    is fastest, so with ``protocol=None`` the time is ``min_p t_p``: LL for small
    messages (lowest latency), LL128 in between (a tensor-parallel decode step's
    0.25-1 MB all-reduces), Simple for large ones.

    Parameters
    ----------
    kind : {"all_reduce", "all_gather", "reduce_scatter"}
        The collective (aliases accepted).
    message_bytes : float or ndarray
        Buffer ``M`` in this module's convention, in bytes.
    ranks : int or ndarray
        Participants ``n``.
    bandwidth_Bps : float or ndarray
        Per-direction link bandwidth of one rank (the slowest link of the ring), in
        bytes per second.
    link : {"nvlink", "pci", "net"}
        Link type of the steps inside a node.
    protocol : {None, "LL", "LL128", "Simple"}
        ``None``: NCCL's choice, the fastest.
    nodes : int or ndarray
        Nodes the ring spans (their crossings are network steps).
    wire_efficiency : float or ndarray, optional
        Payload share of the line rate; default :data:`NVLINK_WIRE_EFFICIENCY` on NVLink,
        1 otherwise.
    ll_step_latency_s : float, optional
        Measured time of one LL step on the links inside a node, in seconds (e.g.
        :data:`NCCL_NVLINK_LL_STEP_LATENCY_MEASURED_S`). NCCL still chooses the protocol
        by its own model; when it chooses LL, the intra-node steps are priced at this
        latency instead of the model's. Default: the model's throughout.

    Returns
    -------
    float or ndarray
        Seconds (zero for one rank).

    References
    ----------
    NVIDIA NCCL, ``src/graph/tuning.cc`` (``ncclTopoTuneModel``: ``baseLat``, ``hwLat``,
    protocol bandwidth ratios and the LL cap ``llMaxBws``, the latency sum over intra- and
    inter-node steps), NCCL 2.18.6; Jeaugey, NVIDIA/nccl-tests issue 212 (2024) for the
    NVLink protocol overhead;
    Patarasuk & Yuan (2009) for the ring's bandwidth term.

    Examples
    --------
    A 16 KB all-reduce (one token of a 8192-wide model in fp16) on 4 NVLink GPUs at
    300 GB/s: LL costs 6.6 + 6 × 0.6 = 10.2 µs of latency plus 1.5 × 16,384 B /
    (300 GB/s × 0.822 × 0.25 = 61.7 GB/s) = 0.4 µs, 10.6 µs; Simple would cost 28.9 µs.
    At 1 MB (64 such tokens) LL's 25.5 µs of transfer loses to LL128: 14 + 6 × 1.9 =
    25.4 µs plus 1.5 MB / 227 GB/s = 6.9 µs, 32.3 µs.

    >>> round(nccl_ring_time("all_reduce", 16384, 4, 300e9) * 1e6, 1)
    10.6
    >>> round(nccl_ring_time("all_reduce", 16384, 4, 300e9, protocol="Simple") * 1e6, 1)
    28.9
    >>> round(nccl_ring_time("all_reduce", 2**20, 4, 300e9) * 1e6, 1)
    32.3

    With the LL step measured on a DGX A100 (1.98 µs), the 16 KB all-reduce is still
    run as LL and takes 6.6 + 6 × 1.98 + 0.4 = 18.9 µs (nccl-tests measure 16.9 µs for a
    few bytes on 4 of those GPUs).

    >>> round(nccl_ring_time("all_reduce", 16384, 4, 300e9, ll_step_latency_s=1.98e-6) * 1e6, 1)
    18.9
    """
    k = normalize_collective(kind)
    if k not in _RING_STEPS:
        raise ParameterError("kind", kind, "all_reduce, all_gather or reduce_scatter")
    hw = _link_latencies(link)
    net = NCCL_RING_STEP_LATENCY_S["net"]
    protos = _protocols(protocol)
    if wire_efficiency is None:
        wire_efficiency = NVLINK_WIRE_EFFICIENCY if link == "nvlink" else 1.0
    fast = _scalar_args(message_bytes, ranks, bandwidth_Bps, 0.0)
    if fast is not None and type(nodes) in _SCALAR_TYPES and type(wire_efficiency) in _SCALAR_TYPES:
        M, n, bw, _ = fast
        if n <= 1.0:
            return 0.0
        k_nodes = float(nodes)
        steps = _RING_STEPS[k] * (n - 1.0)
        net_steps = _RING_STEPS[k] * (k_nodes - 1.0)
        bus = _RING_BUS[k] * (n - 1.0) / n * M
        link_bw = bw * float(wire_efficiency)
        best, chosen = _INF, ""
        for p in protos:
            bus_bw = link_bw * _ll_share(p, k, k_nodes)
            if p == "LL" and bus_bw > NCCL_LL_MAX_BUS_BANDWIDTH_BPS:
                bus_bw = NCCL_LL_MAX_BUS_BANDWIDTH_BPS
            t = (
                NCCL_RING_BASE_LATENCY_S[p]
                + (steps - net_steps) * hw[p]
                + net_steps * net[p]
                + bus / bus_bw
            )
            if t < best:
                best, chosen = t, p
        if chosen == "LL" and ll_step_latency_s is not None:
            # NCCL chose LL by its model; the steps then take what they measure
            best += (steps - net_steps) * (float(ll_step_latency_s) - hw["LL"])
        return best
    M, n, bw = _bytes(message_bytes), _ranks(ranks), _bw(bandwidth_Bps)
    k_nodes = _ranks(nodes, "nodes")
    eta = np.asarray(wire_efficiency, dtype=float)
    steps = _RING_STEPS[k] * (n - 1.0)
    net_steps = _RING_STEPS[k] * (k_nodes - 1.0)
    bus = _RING_BUS[k] * (n - 1.0) / n * M
    times = []
    for p in protos:
        bus_bw = bw * eta * _ll_share(p, k, k_nodes)
        if p == "LL":
            bus_bw = np.minimum(bus_bw, NCCL_LL_MAX_BUS_BANDWIDTH_BPS)
        times.append(
            NCCL_RING_BASE_LATENCY_S[p]
            + (steps - net_steps) * hw[p]
            + net_steps * net[p]
            + bus / bus_bw
        )
    stacked = np.stack(np.broadcast_arrays(*times))
    best = stacked.min(axis=0)
    if ll_step_latency_s is not None and "LL" in protos:
        chose_ll = stacked.argmin(axis=0) == protos.index("LL")
        extra = (steps - net_steps) * (np.asarray(ll_step_latency_s, float) - hw["LL"])
        best = best + np.where(chose_ll, extra, 0.0)
    return _ret(np.where(n > 1, best, 0.0))


def nvls_allreduce_time(
    message_bytes: Any,
    ranks: Any,
    bandwidth_Bps: Any,
    latency_s: Any = NVLS_LATENCY_S,
    efficiency: Any = NVLS_ALGORITHM_BANDWIDTH_FRACTION,
) -> Any:
    """Time of an all-reduce reduced inside the NVSwitch (NVLink SHARP, NCCL's NVLS).

    Each GPU sends its buffer to the switch once, the switch adds the contributions, and
    each GPU reads the sum back once: the bytes per rank are ``M`` each way, whatever
    the rank count (a ring needs ``2(n-1)/n · M``). Measured, NVLS sustains an
    algorithm bandwidth of about 61 % of the per-direction NVLink rate
    (:data:`NVLS_ALGORITHM_BANDWIDTH_FRACTION`), so ``t = α + M / (β · η)``.
    nccl-tests reports a bus bandwidth of ``2(n-1)/n`` times the algorithm bandwidth
    for any algorithm, so NVLS on 8 GPUs shows ``1.75 × 275 ≈ 480`` GB/s, above the
    ring's 370.

    Parameters
    ----------
    message_bytes : float or ndarray
        Buffer ``M``, in bytes.
    ranks : int or ndarray
        GPUs in the NVLink domain taking part (zero time for one).
    bandwidth_Bps : float or ndarray
        Per-direction NVLink bandwidth of one GPU, in bytes per second.
    latency_s : float or ndarray
        Fixed latency, in seconds (default :data:`NVLS_LATENCY_S`).
    efficiency : float or ndarray
        Algorithm bandwidth over link bandwidth (default
        :data:`NVLS_ALGORITHM_BANDWIDTH_FRACTION`).

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    NVIDIA (2022), "NVIDIA H100 Tensor Core GPU Architecture" whitepaper, NVLink SHARP
    section; Jeaugey, NVIDIA/nccl-tests issue 212 (2024): peak busBw ~480 GB/s,
    algbw ~275 GB/s on 8 H100; NVIDIA NCCL ``src/graph/tuning.cc`` (NVLS latency).

    Examples
    --------
    1 GB on 8 H100 (450 GB/s per direction): 25 µs + 1 GB / 275 GB/s = 3.661 ms;
    its nccl-tests bus bandwidth is 1.75 × 1 GB / 3.661 ms = 478 GB/s.

    >>> round(nvls_allreduce_time(1e9, 8, 450e9) * 1e3, 3)
    3.661
    """
    fast = _scalar_args(message_bytes, ranks, bandwidth_Bps, latency_s)
    if fast is not None and type(efficiency) in _SCALAR_TYPES:
        M, n, bw, a = fast
        return a + M / (bw * float(efficiency)) if n > 1.0 else 0.0
    M, n, bw, a = _bytes(message_bytes), _ranks(ranks), _bw(bandwidth_Bps), _lat(latency_s)
    eta = np.asarray(efficiency, dtype=float)
    return _ret(np.where(n > 1, a + M / (bw * eta), 0.0))


def nccl_allreduce_time(
    message_bytes: Any,
    ranks: Any,
    bandwidth_Bps: Any,
    link: str = "nvlink",
    in_network_reduction: bool = False,
    *,
    nodes: Any = 1,
    ll_step_latency_s: Any = None,
) -> Any:
    """All-reduce time as NCCL would run it: the faster of its ring protocols and, where the
    switch reduces in the network (NVSwitch-3 and later, inside one node), NVLS.

    Parameters
    ----------
    message_bytes : float or ndarray
        Buffer ``M``, in bytes.
    ranks : int or ndarray
        Participants ``n``.
    bandwidth_Bps : float or ndarray
        Per-direction link bandwidth of one rank, in bytes per second.
    link : {"nvlink", "pci", "net"}
        Link type inside a node.
    in_network_reduction : bool
        The node's switch supports NVLink SHARP (``Fabric.in_network_reduction``).
    nodes : int or ndarray
        Nodes spanned (NVLS is used only inside one node here).
    ll_step_latency_s : float, optional
        Measured LL step latency inside the node (see :func:`nccl_ring_time`); the
        choice between the ring and NVLS stays NCCL's, by its model.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    NVIDIA NCCL ``src/graph/tuning.cc`` (the tuner picks the fastest algorithm and
    protocol by its cost model); see :func:`nccl_ring_time`, :func:`nvls_allreduce_time`.

    Examples
    --------
    1 GB on 8 H100: the ring (Simple) takes 8.4 + 14 × 3.4 µs + 1.75 GB / 370 GB/s =
    4.786 ms, NVLS 3.661 ms.

    >>> round(nccl_allreduce_time(1e9, 8, 450e9, in_network_reduction=True) * 1e3, 3)
    3.661
    >>> round(nccl_allreduce_time(1e9, 8, 450e9) * 1e3, 3)
    4.786
    """
    ring = nccl_ring_time(
        "all_reduce", message_bytes, ranks, bandwidth_Bps, link, nodes=nodes,
        ll_step_latency_s=ll_step_latency_s,
    )  # fmt: skip
    if not in_network_reduction or link != "nvlink":
        return ring
    nvls = nvls_allreduce_time(message_bytes, ranks, bandwidth_Bps)
    # NCCL compares the ring and NVLS by its own model
    model = ring
    if ll_step_latency_s is not None:
        model = nccl_ring_time("all_reduce", message_bytes, ranks, bandwidth_Bps, link, nodes=nodes)
    if type(ring) is float and type(nvls) is float and type(nodes) in _SCALAR_TYPES:
        return (nvls if nvls < model else ring) if float(nodes) <= 1.0 else ring
    inside = np.asarray(nodes) <= 1
    return _ret(np.where(inside & (np.asarray(nvls) < np.asarray(model)), nvls, ring))
