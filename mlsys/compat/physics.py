"""``mlsysim.physics`` for migrated chapters: the book's ``calc_*`` formulas.

The newest chapters of *Machine Learning Systems* (harvard-edge/cs249r_book) import
``calc_*`` functions and ``SPEED_OF_LIGHT_FIBER_KM_S`` from ``mlsysim.physics``;
``mlsys migrate`` points those imports here. Every name of :mod:`mlsys.formulas` (the
older era's ``calc_*``) is served from there; the few the newest era adds
are defined below over mlsys's cited core formulas, in the book's call shapes
(Quantities in, Quantities out).
"""

from __future__ import annotations

from typing import Any

from mlsys.core.units import Q_, to_book_counts

__all__ = [  # noqa: F822 - SPEED_OF_LIGHT_FIBER_KM_S and the book formulas via __getattr__
    "SPEED_OF_LIGHT_FIBER_KM_S",
    "calc_transformer_training_flops",
    "calc_ring_allreduce_time",
    "calc_tree_allreduce_time",
    "calc_mtbf_node",
    "calc_mtbf_cluster",
    "calc_young_daly_interval",
    "calc_checkpoint_size",
    "calc_effective_flops",
    "dTime",
    "calc_training_time",
    "calc_training_time_days",
    "calc_bottleneck",
    "calc_transformer_decode_flops",
    "calc_paged_kv_cache_size",
    "calc_queue_latency_mmc",
    "calc_population_stability_index",
    "calc_two_proportion_sample_size",
    "calc_constraint_propagation_factor",
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
        FLOPs as the book counts them (a plain count: divided by a FLOP/s rate of the
        book's hardware it is a time; ``.m_as("flop")`` works).

    References
    ----------
    Kaplan et al. (2020), "Scaling Laws for Neural Language Models", Sec. 2.1:
    ``C ≈ 6 N D``; the code that runs is
    :func:`mlsys.core.formulas.transformer.training_flops`.

    Examples
    --------
    >>> float(calc_transformer_training_flops(1e9, 20e9).m_as("flop"))
    1.2e+20
    """
    from mlsys._book_formulas import _number
    from mlsys.core.formulas.transformer import training_flops

    n = _number(n_params, "dimensionless", "n_params", allow_zero=False)
    d = _number(n_tokens, "dimensionless", "n_tokens")
    return to_book_counts(Q_(training_flops(n, d), "flop"))


def _alpha_beta(message: Any, bandwidth: Any, latency: Any) -> tuple[float, float, float]:
    from mlsys._book_formulas import _number

    return (
        _number(message, "byte", "message_bytes"),
        _number(bandwidth, "byte/s", "bandwidth_bytes_s", allow_zero=False),
        _number(latency, "s", "latency_s"),
    )


def _ranks(n_gpus: Any) -> int:
    from mlsys._book_formulas import _whole

    return _whole(n_gpus, "n_gpus")


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
    return Q_(ring_allreduce_time(m, _ranks(n_gpus), bw, a), "s")


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
    Operations in MPICH", IJHPCA 19(1), Sec. 4; the code that runs is
    :func:`mlsys.core.formulas.collectives.binomial_tree_allreduce_time`.

    Examples
    --------
    >>> round(calc_tree_allreduce_time(1e9, 256, 50e9, 5e-6).m_as("ms"), 2)
    320.08
    """
    from mlsys.core.formulas.collectives import binomial_tree_allreduce_time

    m, bw, a = _alpha_beta(message_bytes, bandwidth_bytes_s, latency_s)
    return Q_(binomial_tree_allreduce_time(m, _ranks(n_gpus), bw, a), "s")


def calc_mtbf_node(*args: Any, **kwargs: Any) -> Any:
    """Node MTBF as a Quantity in hours (the newest era's return type).

    The series-system formula ``1/MTBF = Σ n_i / MTTF_i`` is
    :func:`mlsys.formulas.calc_mtbf_node` (same arguments, hours in, a float out); this
    gives its value the unit the newest chapters convert with ``.m_as(ureg.hour)``.

    Parameters
    ----------
    *args, **kwargs
        As :func:`mlsys.formulas.calc_mtbf_node`: per-component MTTF in hours and counts.

    Returns
    -------
    pint.Quantity
        Hours.

    References
    ----------
    O'Connor & Kleyner (2012), "Practical Reliability Engineering", 5th ed., Sec. 6.2
    (series systems: failure rates add).

    Examples
    --------
    >>> round(calc_mtbf_node(50000, 8, 150000, 2, 100000, 2).m_as("hour"), 1)
    5172.4
    """
    import mlsys.formulas as formulas

    return _hours(formulas.calc_mtbf_node(*args, **kwargs))


def calc_mtbf_cluster(
    component_mtbf_hours: Any, n_components: Any, correlation_factor: Any = 1.0
) -> Any:
    """Cluster MTBF ``MTBF_node / N`` as a Quantity in hours.

    Parameters
    ----------
    component_mtbf_hours : float or pint.Quantity
        MTBF of one node (hours).
    n_components : int
        Nodes.
    correlation_factor : float, default 1.0
        Multiplier for correlated failures (below 1) or redundancy (above 1).

    Returns
    -------
    pint.Quantity
        Hours (:func:`mlsys.formulas.calc_mtbf_cluster` with its unit).

    References
    ----------
    O'Connor & Kleyner (2012), "Practical Reliability Engineering", Sec. 6.2.
    """
    import mlsys.formulas as formulas

    # one conversion at the edge (mlsys.formulas): a Quantity in any time unit or a
    # plain number of hours gives the same hours
    return _hours(
        formulas.calc_mtbf_cluster(component_mtbf_hours, n_components, correlation_factor)
    )


def _hours(value: Any) -> Any:
    """A result of :mod:`mlsys.formulas` in hours as a Quantity in hours."""
    if hasattr(value, "quantity"):  # a BookNumber: a plain number of hours
        return value.quantity()
    if hasattr(value, "units"):
        return value.to("hour")
    return Q_(float(value), "hour")


def calc_young_daly_interval(checkpoint_cost_s: Any, mtbf_s: Any) -> Any:
    """Optimal checkpoint interval ``sqrt(2 δ M)`` as a Quantity in seconds.

    Parameters
    ----------
    checkpoint_cost_s : float or pint.Quantity
        Time to write one checkpoint ``δ`` (s).
    mtbf_s : float or pint.Quantity
        System MTBF ``M`` (s).

    Returns
    -------
    pint.Quantity
        Seconds (:func:`mlsys.formulas.calc_young_daly_interval` with its unit).

    References
    ----------
    Young (1974), "A first order approximation to the optimum checkpoint interval",
    CACM 17(9); Daly (2006), FGCS 22(3).

    Examples
    --------
    >>> round(calc_young_daly_interval(100.0, 3600.0).m_as("s"), 1)
    848.5
    """
    import mlsys.formulas as formulas

    value = formulas.calc_young_daly_interval(checkpoint_cost_s, mtbf_s)
    return value.quantity() if hasattr(value, "quantity") else Q_(value).to("s")


def calc_checkpoint_size(n_params: Any, bytes_per_param: Any = None) -> Any:
    """Checkpoint bytes of mixed-precision Adam training, as a Quantity.

    The newest chapters count 14 bytes of durable state per parameter: bf16 weights (2)
    plus Adam's fp32 master weights, momentum and variance (12, from
    :func:`mlsys.core.formulas.memory.optimizer_state_bytes_per_param`); gradients are
    recomputed after a restore, so they are not saved. (The older era's
    :func:`mlsys.formulas.calc_checkpoint_size` defaults to 16, gradients included.)

    Parameters
    ----------
    n_params : float
        Parameters.
    bytes_per_param : float, optional
        Override of the 14 bytes per parameter.

    Returns
    -------
    pint.Quantity
        Bytes.

    References
    ----------
    Rajbhandari et al. (2020), "ZeRO: Memory Optimizations Toward Training Trillion
    Parameter Models", Sec. 3.1 (2 + 2 + 12 bytes per parameter; 2 + 12 without the
    fp16 gradients).

    Examples
    --------
    >>> calc_checkpoint_size(175e9).m_as("GB")
    2450.0
    """
    import mlsys.formulas as formulas
    from mlsys.core.formulas.memory import optimizer_state_bytes_per_param
    from mlsys.core.precision import bytes_per_element

    per = (
        bytes_per_element("bf16") + optimizer_state_bytes_per_param("adam", master_weights=True)
        if bytes_per_param is None
        else bytes_per_param
    )
    value = formulas.calc_checkpoint_size(n_params, per)
    return value.quantity() if hasattr(value, "quantity") else Q_(value).to("byte")


def calc_effective_flops(peak_flops: Any, mfu: Any, scaling_eff: Any, goodput_ratio: Any) -> Any:
    """Effective throughput ``peak · MFU · η_scaling · goodput`` as a Quantity.

    Parameters
    ----------
    peak_flops : float or pint.Quantity
        Peak throughput (any unit; a bare number stays a plain count).
    mfu, scaling_eff, goodput_ratio : float
        Fractions in (0, 1].

    Returns
    -------
    pint.Quantity
        Same unit as ``peak_flops`` (dimensionless for a bare number), so the newest
        chapters' ``.magnitude`` works; the value is
        :func:`mlsys.formulas.calc_effective_flops`.

    References
    ----------
    Chowdhery et al. (2022), "PaLM", Sec. 4.1 (model FLOPs utilization); the product of
    the three losses is the book's "C³ tax".

    Examples
    --------
    >>> calc_effective_flops(1000.0, 0.5, 0.35, 0.6).magnitude
    105.0
    """
    import mlsys.formulas as formulas

    value = formulas.calc_effective_flops(peak_flops, mfu, scaling_eff, goodput_ratio)
    return value if hasattr(value, "magnitude") else Q_(value, "")


def __getattr__(name: str) -> Any:
    # the rest of the book's physics names, then the shim's: mlsys.formulas (calc_*),
    # then mlsys.constants
    import mlsys._book_formulas as physics_book

    if name in physics_book.__all__:
        return getattr(physics_book, name)
    import mlsys.formulas as formulas

    if hasattr(formulas, name):
        return getattr(formulas, name)
    import mlsys.constants as constants

    if name in getattr(constants, "__all__", ()) or hasattr(constants, name):
        return getattr(constants, name)
    raise AttributeError(f"module 'mlsys.compat.physics' has no attribute {name!r}")


def __dir__() -> list[str]:
    import mlsys._book_formulas as physics_book
    import mlsys.formulas as formulas

    names = set(__all__) | set(physics_book.__all__) | set(getattr(formulas, "__all__", ()))
    return sorted(names)
