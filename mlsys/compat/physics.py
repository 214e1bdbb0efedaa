"""``mlsysim.physics`` for migrated chapters: the book's ``calc_*`` formulas.

The newest chapters of *Machine Learning Systems* (harvard-edge/cs249r_book) import
``calc_*`` functions and ``SPEED_OF_LIGHT_FIBER_KM_S`` from ``mlsysim.physics``;
``mlsys migrate`` points those imports here. Every name of :mod:`mlsys.formulas` (the
older era's ``calc_*``, compatA's) is served from there; the few the newest era adds
are defined below over mlsys's cited core formulas, in the book's call shapes
(Quantities in, Quantities out).
"""

from __future__ import annotations

from typing import Any

from mlsys.core.units import Q_, as_si

__all__ = [  # noqa: F822 - SPEED_OF_LIGHT_FIBER_KM_S is served by __getattr__
    "SPEED_OF_LIGHT_FIBER_KM_S",
    "calc_transformer_training_flops",
    "calc_ring_allreduce_time",
    "calc_tree_allreduce_time",
]


def calc_transformer_training_flops(n_params: Any, n_tokens: Any) -> Any:
    """Training compute ``C = 6 N D`` as a Quantity in FLOPs.

    Parameters
    ----------
    n_params : float or pint.Quantity
        Parameters ``N`` (a count).
    n_tokens : float or pint.Quantity
        Training tokens ``D`` (a count).

    Returns
    -------
    pint.Quantity
        FLOPs (mlsys's ``flop`` unit, so ``.m_as(ureg.flop)`` works).

    References
    ----------
    Kaplan et al. (2020), "Scaling Laws for Neural Language Models", Sec. 2.1:
    ``C ≈ 6 N D``; the code that runs is
    :func:`mlsys.core.formulas.transformer.training_flops`.

    Examples
    --------
    >>> calc_transformer_training_flops(1e9, 20e9).m_as("flop")
    1.2e+20
    """
    from mlsys.core.formulas.transformer import training_flops

    n = float(n_params.m_as("")) if hasattr(n_params, "m_as") else float(n_params)
    d = float(n_tokens.m_as("")) if hasattr(n_tokens, "m_as") else float(n_tokens)
    return Q_(training_flops(n, d), "flop")


def _alpha_beta(message: Any, bandwidth: Any, latency: Any) -> tuple[float, float, float]:
    return (
        as_si(message, "byte", "message_bytes"),
        as_si(bandwidth, "byte/s", "bandwidth_bytes_s"),
        as_si(latency, "s", "latency_s"),
    )


def calc_ring_allreduce_time(
    message_bytes: Any, n_gpus: int, bandwidth_bytes_s: Any, latency_s: Any
) -> Any:
    """Ring all-reduce time ``2(N-1)/N · M/β + 2(N-1)·α`` as a Quantity.

    Parameters
    ----------
    message_bytes : pint.Quantity or float
        Buffer size ``M`` (bytes).
    n_gpus : int
        Ranks ``N``.
    bandwidth_bytes_s : pint.Quantity or float
        Per-direction link bandwidth ``β`` (bytes/s).
    latency_s : pint.Quantity or float
        Per-step latency ``α`` (s).

    Returns
    -------
    pint.Quantity
        Seconds.

    References
    ----------
    Patarasuk & Yuan (2009), "Bandwidth optimal all-reduce algorithms for clusters of
    workstations", JPDC 69(2); the code that runs is
    :func:`mlsys.core.formulas.collectives.ring_allreduce_time`.

    Examples
    --------
    >>> round(calc_ring_allreduce_time(1e9, 256, 50e9, 5e-6).m_as("ms"), 2)
    42.39
    """
    from mlsys.core.formulas.collectives import ring_allreduce_time

    m, bw, a = _alpha_beta(message_bytes, bandwidth_bytes_s, latency_s)
    return Q_(ring_allreduce_time(m, int(n_gpus), bw, a), "s")


def calc_tree_allreduce_time(
    message_bytes: Any, n_gpus: int, bandwidth_bytes_s: Any, latency_s: Any
) -> Any:
    """Binomial-tree all-reduce (reduce then broadcast, unpipelined), the book's tree.

    ``T = 2·⌈log2 N⌉·(α + M/β)``: the full message crosses each of the ``⌈log2 N⌉``
    levels once on the way up and once on the way down. This is the book's meaning of
    "tree all-reduce". mlsys's own
    :func:`~mlsys.core.formulas.collectives.tree_allreduce_time` is the PIPELINED
    (double binary) tree NCCL runs, ``2·⌈log2 N⌉·α + 2·M/β``, far cheaper for large
    messages.

    Parameters
    ----------
    message_bytes : pint.Quantity or float
        Buffer size ``M`` (bytes).
    n_gpus : int
        Ranks ``N``.
    bandwidth_bytes_s : pint.Quantity or float
        Per-direction link bandwidth ``β`` (bytes/s).
    latency_s : pint.Quantity or float
        Per-step latency ``α`` (s).

    Returns
    -------
    pint.Quantity
        Seconds.

    References
    ----------
    Thakur, Rabenseifner & Gropp (2005), "Optimization of Collective Communication
    Operations in MPICH", IJHPCA 19(1), Sec. 4: binomial-tree reduce and broadcast each
    cost ``⌈log2 p⌉(α + nβ)``.

    Examples
    --------
    >>> round(calc_tree_allreduce_time(1e9, 256, 50e9, 5e-6).m_as("ms"), 2)
    320.08
    """
    import math

    m, bw, a = _alpha_beta(message_bytes, bandwidth_bytes_s, latency_s)
    n = int(n_gpus)
    levels = math.ceil(math.log2(n)) if n > 1 else 0
    return Q_(2 * levels * (a + m / bw), "s")


def __getattr__(name: str) -> Any:
    # every other name is the shim's: mlsys.formulas (calc_*), then mlsys.constants
    import mlsys.formulas as formulas

    if hasattr(formulas, name):
        return getattr(formulas, name)
    import mlsys.constants as constants

    if name in getattr(constants, "__all__", ()) or hasattr(constants, name):
        return getattr(constants, name)
    raise AttributeError(f"module 'mlsys.compat.physics' has no attribute {name!r}")


def __dir__() -> list[str]:
    import mlsys.formulas as formulas

    return sorted(set(__all__) | set(getattr(formulas, "__all__", ())))
