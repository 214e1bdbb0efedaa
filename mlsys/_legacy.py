"""Adapters that keep the older ``calc_*`` formula spellings working.

Books written against the earlier API call ``calc_ring_allreduce_time(...)`` with pint
Quantities and expect a Quantity back. Each adapter here converts its arguments once,
calls the current formula (floats in SI) and returns a Quantity, so old chapters keep
rendering while :mod:`mlsys.formulas` warns with the new spelling.

The textbook *Machine Learning Systems* (harvard-edge/cs249r_book) calls more of them
(``calc_checkpoint_size``, ``calc_mtbf_node``, ``calc_young_daly_interval``, …) with plain
numbers or its own Quantities, counting FLOPs, parameters and dollars as plain numbers;
:mod:`mlsys.core.fmt_book` has the matching formatting. Those adapters are at the end of
this module: each converts at the edge and calls the cited formula of
:mod:`mlsys.core.formulas`. Four identities have no formula there yet (Amdahl's law,
redundant availability, fiber propagation delay, and the book's effective-FLOPs product);
they are written here once, with their citations.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mlsys.core.errors import ParameterError
from mlsys.core.units import Q_, as_si, to_book_counts

__all__ = [
    "LegacyFormula",
    "LEGACY_FORMULAS",
    "BookNumber",
    "BOOK_FORMULAS",
    "calc_checkpoint_size",
    "calc_failure_probability",
    "calc_mtbf_cluster",
    "calc_mtbf_node",
    "calc_pipeline_bubble",
    "calc_effective_flops",
    "calc_young_daly_interval",
    "calc_availability_stacked",
    "calc_amdahls_speedup",
    "calc_network_latency_ms",
    "calc_monthly_egress_cost",
    "model_memory",
]

_COUNT = "count"  # an argument the book passes as a plain count or a count Quantity


class BookNumber(float):
    """A plain number in a stated unit that also answers the Quantity methods the book calls.

    The textbook's formula package returned plain numbers (seconds, hours, bytes) in the
    release its older chapters were written against, and Quantities in the next one;
    chapters of both kinds exist (``node_mtbf / n_nodes < 5.0`` and
    ``calc_mtbf_cluster(...).m_as(ureg.minute)``). A ``BookNumber`` is a ``float`` —
    arithmetic with it gives plain floats, as in the first release — and also has
    ``magnitude``, ``units``, ``to(unit)`` and ``m_as(unit)`` like a Quantity in its
    unit, as in the second. It is returned only when every argument was a plain number.

    Parameters
    ----------
    value : float
        The number, in ``unit``.
    unit : str
        Its unit (``"hour"``, ``"s"``, ``"byte"``).

    Examples
    --------
    >>> mtbf = BookNumber(50.0, "hour")
    >>> mtbf / 2, mtbf.m_as("min")
    (25.0, 3000.0)
    """

    __slots__ = ("_unit",)

    def __new__(cls, value: float, unit: str) -> BookNumber:
        number = super().__new__(cls, value)
        number._unit = unit
        return number

    @property
    def magnitude(self) -> float:
        """The plain number, in :attr:`units`."""
        return float(self)

    @property
    def units(self) -> Any:
        """The unit of the number (a pint Unit)."""
        return Q_(1.0, self._unit).units

    def quantity(self) -> Any:
        """The same amount as a pint Quantity."""
        return Q_(float(self), self._unit)

    def to(self, unit: Any) -> Any:
        """As :meth:`pint.Quantity.to`: a Quantity in ``unit``."""
        return self.quantity().to(unit)

    def m_as(self, unit: Any) -> float:
        """As :meth:`pint.Quantity.m_as`: the number in ``unit``."""
        return float(self.quantity().m_as(unit))


def _unwrap(value: Any) -> Any:
    """A BookNumber becomes the Quantity it stands for; anything else is unchanged."""
    return value.quantity() if isinstance(value, BookNumber) else value


def _is_quantity(value: Any) -> bool:
    return isinstance(value, BookNumber) or hasattr(value, "units")


def _not_text(value: Any, name: str) -> None:
    """The book's formulas take numbers and Quantities; text or a flag is a mistake."""
    if isinstance(value, (str, bytes, bool)):
        raise ParameterError(name, value, "a number or a pint Quantity (not text or True/False)")


def _si(value: Any, unit: str, name: str, **checks: Any) -> Any:
    """:func:`mlsys.core.units.as_si` that reads a BookNumber as the Quantity it stands for."""
    _not_text(value, name)
    return as_si(_unwrap(value), unit, name, **checks)


def _returned(value: Any, unit: str, *args: Any) -> Any:
    """The book's return convention: a Quantity when an argument was one, else a number.

    The package the older chapters were written for took and returned plain numbers
    (seconds, hours, bytes); its later releases returned Quantities. A Quantity argument
    gives a Quantity; plain numbers give a :class:`BookNumber`, which serves both.
    """
    if any(hasattr(a, "units") and not isinstance(a, BookNumber) for a in args):
        return Q_(value, unit)
    if getattr(value, "ndim", 0) == 0:
        return BookNumber(float(value), unit)
    return value


def _fraction(value: Any, name: str, *, allow_zero: bool = True) -> Any:
    """A dimensionless fraction from 0 to 1 (``as_si`` already refuses negatives)."""
    import numpy as np

    fraction = _si(value, "dimensionless", name, allow_zero=allow_zero)
    if np.any(np.asarray(fraction) > 1.0):
        lowest = "0" if allow_zero else "above 0"
        raise ParameterError(name, value, f"a fraction from {lowest} to 1")
    return fraction


def _count(value: Any, name: str, *, at_least: float = 0.0) -> Any:
    """A plain count from a number, an mlsys count Quantity or the book's count Quantity.

    ``at_least`` is the smallest count that makes sense (1 for stages, ranks, nodes).
    """
    _not_text(value, name)
    value = _unwrap(value)
    if hasattr(value, "units"):
        count = as_si(to_book_counts(value), "dimensionless", name)
    else:
        count = as_si(value, "dimensionless", name)
    if at_least and getattr(count, "ndim", 0) == 0 and count < at_least:
        raise ParameterError(name, value, f"a count of at least {at_least:g}")
    return count


def _whole(value: Any, name: str) -> int:
    """A whole number of at least 1 (pipeline stages, micro-batches, virtual stages)."""
    count = _count(value, name, at_least=1)
    if float(count) != int(count):
        raise ParameterError(name, value, "a whole number of at least 1")
    return int(count)


@dataclass(frozen=True)
class LegacyFormula:
    """An old formula name mapped onto its replacement.

    Parameters
    ----------
    old : str
        The deprecated name.
    new : str
        The replacement's name in :mod:`mlsys.formulas`.
    arg_units : tuple of (str or None)
        Unit of each old positional argument (``None``: a plain number; ``"count"``: a
        plain count or a count Quantity, the book's or mlsys's).
    returns : str or None
        Unit of the result (``None``: a plain number). The result is a Quantity in it
        when any argument was a Quantity, else a plain number in it (the book's way).
    reorder : callable, optional
        Maps the converted old arguments (a dict by old name) to the new function's
        positional arguments.
    post : callable, optional
        ``post(result, converted_args)`` adjusts the result to the old meaning (e.g.
        multiplies a per-layer figure by the layer count).
    arg_names : tuple of str
        Old argument names, in order (for keyword calls and messages).
    defaults : dict
        Old defaults.
    """

    old: str
    new: str
    arg_names: tuple[str, ...]
    arg_units: tuple[str | None, ...]
    returns: str | None
    reorder: Callable[[dict[str, Any]], tuple[Any, ...]] | None = None
    defaults: tuple[tuple[str, Any], ...] = ()
    post: Callable[[Any, dict[str, Any]], Any] | None = None

    def target(self) -> Callable[..., Any]:
        """The replacement function."""
        return getattr(importlib.import_module("mlsys.core.formulas"), self.new)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        values = dict(self.defaults)
        values.update(zip(self.arg_names, args, strict=False))
        values.update(kwargs)
        converted = {}
        for name, unit in zip(self.arg_names, self.arg_units, strict=True):
            value = _unwrap(values[name])
            if unit == _COUNT:
                converted[name] = _count(value, name)
            else:
                converted[name] = value if unit is None else as_si(value, unit, name)
        new_args = (
            self.reorder(converted) if self.reorder else tuple(converted[n] for n in self.arg_names)
        )
        result = self.target()(*new_args)
        if self.post is not None:
            result = self.post(result, converted)
        if self.returns is None:
            return result
        return _returned(result, self.returns, *values.values())


def _entry(
    old: str,
    new: str,
    args: str,
    units: tuple[str | None, ...],
    returns: str | None,
    reorder: Callable[[dict[str, Any]], tuple[Any, ...]] | None = None,
    post: Callable[[Any, dict[str, Any]], Any] | None = None,
    **defaults: Any,
) -> LegacyFormula:
    return LegacyFormula(
        old, new, tuple(args.split()), units, returns, reorder, tuple(defaults.items()), post
    )


_COLLECTIVE_ARGS = "message_bytes n_gpus bandwidth_bytes_s latency_s"
_COLLECTIVE_UNITS = ("byte", None, "byte/s", "s")

LEGACY_FORMULAS: dict[str, LegacyFormula] = {
    e.old: e
    for e in (
        _entry(
            "calc_ring_allreduce_time",
            "ring_allreduce_time",
            _COLLECTIVE_ARGS,
            _COLLECTIVE_UNITS,
            "s",
        ),
        _entry(
            "calc_tree_allreduce_time",
            # the book's tree (both eras): unpipelined binomial, 2 log2(N) (alpha + M/beta)
            "binomial_tree_allreduce_time",
            _COLLECTIVE_ARGS,
            _COLLECTIVE_UNITS,
            "s",
        ),
        _entry("calc_all_to_all_time", "alltoall_time", _COLLECTIVE_ARGS, _COLLECTIVE_UNITS, "s"),
        _entry(
            "calc_hierarchical_allreduce_time",
            "hierarchical_allreduce_time",
            "message_bytes n_nodes gpus_per_node intra_node_bw inter_node_bw "
            "intra_node_lat inter_node_lat",
            ("byte", None, None, "byte/s", "byte/s", "s", "s"),
            "s",
            lambda a: (
                a["message_bytes"],
                a["gpus_per_node"],
                a["n_nodes"],
                a["intra_node_bw"],
                a["intra_node_lat"],
                a["inter_node_bw"],
                a["inter_node_lat"],
            ),
            intra_node_lat=500e-9,
            inter_node_lat=5e-6,
        ),
        _entry(
            "calc_transformer_training_flops",
            "training_flops",
            "n_params n_tokens",
            (_COUNT, _COUNT),
            "flop_count",  # the book counts FLOPs as plain numbers
        ),
        _entry(
            "calc_kv_cache_size",
            "kv_cache_bytes",
            "n_layers n_heads head_dim seq_len batch_size bytes_per_elem",
            (None, None, None, None, None, "byte"),
            "byte",
            bytes_per_elem=2,
        ),
        _entry(
            "calc_activation_memory",
            "activation_bytes_per_layer",
            "n_layers seq_len batch_size hidden_dim n_heads precision_bytes strategy",
            (None, None, None, None, None, None, None),
            "byte",
            # The old helper multiplied by layers and took the TP-free Table 2 rows.
            lambda a: (
                a["seq_len"],
                a["batch_size"],
                a["hidden_dim"],
                a["n_heads"] or 1,
                1,
                False,
                a["strategy"],
            ),
            lambda per_layer, a: per_layer * a["n_layers"] * a["precision_bytes"],
            n_heads=None,
            precision_bytes=1,
            strategy="selective",
        ),
    )
}
"""Old formula name -> adapter (warned about by :mod:`mlsys.formulas`)."""


# ---------------------------------------------------------------------------------------
# The textbook's calc_* functions (harvard-edge/cs249r_book, book/quarto/mlsys/formulas.py)
# ---------------------------------------------------------------------------------------
def _core(name: str) -> Callable[..., Any]:
    return getattr(importlib.import_module("mlsys.core.formulas"), name)


def calc_checkpoint_size(n_params: Any, bytes_per_param: Any = 16) -> Any:
    """Checkpoint size ``N × bytes_per_param`` (the book's call shape; mlsys: ``checkpoint_bytes``).

    Parameters
    ----------
    n_params : float or pint.Quantity
        Parameters (a plain count, or a parameter Quantity).
    bytes_per_param : float or pint.Quantity, default 16
        Bytes stored per parameter. The book's default 16 is bf16 weights (2) + bf16
        gradients (2) + fp32 master weights, momentum and variance (12); mlsys's
        :func:`~mlsys.core.formulas.checkpoint_bytes` defaults to 14 (no gradients).

    Returns
    -------
    float or pint.Quantity
        Bytes: a Quantity when an argument is one, else a number (the book's convention).

    References
    ----------
    Rajbhandari et al. (2020), "ZeRO: Memory Optimizations Toward Training Trillion
    Parameter Models", Sec. 3.1 (16 bytes per parameter of mixed-precision Adam state).

    Examples
    --------
    >>> calc_checkpoint_size(175e9)
    2800000000000.0
    >>> from mlsys.core.units import Q_
    >>> calc_checkpoint_size(Q_(175e9, "parameter")).to("TB")
    <Quantity(2.8, 'terabyte')>
    """
    params = _count(n_params, "n_params", at_least=1)
    per_param = _si(bytes_per_param, "byte", "bytes_per_param", allow_zero=False)
    size = _core("checkpoint_bytes")(params, per_param)
    return _returned(size, "byte", n_params, bytes_per_param)


def _seconds_pair(first: Any, second: Any, names: tuple[str, str]) -> tuple[Any, Any]:
    """Both Quantities (any time unit) or both plain numbers in one unit, as the book has it."""
    first, second = _unwrap(first), _unwrap(second)
    quantities = [hasattr(v, "units") for v in (first, second)]
    if any(quantities) and not all(quantities):
        raise ParameterError(
            names[0] if not quantities[0] else names[1],
            first if not quantities[0] else second,
            "a time Quantity, since the other argument is one",
            "Pass both as Quantities, or both as plain numbers in the same unit.",
        )
    if all(quantities):
        return _si(first, "s", names[0]), _si(second, "s", names[1])
    return _si(first, "dimensionless", names[0]), _si(second, "dimensionless", names[1])


def calc_failure_probability(mtbf: Any, job_duration: Any) -> float:
    """Probability of at least one failure in a job, ``1 - exp(-T / MTBF)`` (book's shape).

    Parameters
    ----------
    mtbf : float or pint.Quantity
        Mean time between failures (a time Quantity, or a number in the unit of
        ``job_duration``).
    job_duration : float or pint.Quantity
        Length of the job, in the same way.

    Returns
    -------
    float
        Probability, 0 to 1.

    References
    ----------
    See :func:`mlsys.core.formulas.failure_probability` (exponential failures).

    Examples
    --------
    >>> round(calc_failure_probability(100.0, 100.0), 4)
    0.6321
    """
    mtbf_x, duration_x = _seconds_pair(mtbf, job_duration, ("mtbf", "job_duration"))
    if getattr(mtbf_x, "ndim", 0) == 0 and mtbf_x == 0:
        raise ParameterError("mtbf", mtbf, "a mean time between failures above zero")
    return float(_core("failure_probability")(duration_x, mtbf_x))


def calc_mtbf_cluster(
    component_mtbf_hours: Any, n_components: Any, correlation_factor: Any = 1.0
) -> Any:
    """MTBF of ``n`` identical independent components, ``MTBF / n`` (book's shape).

    Parameters
    ----------
    component_mtbf_hours : float or pint.Quantity
        MTBF of one component (a plain number is hours).
    n_components : int
        Number of components.
    correlation_factor : float, default 1.0
        Multiplier of the independent-failure MTBF (the book's knob: below 1 for
        correlated failures such as a shared power rail, above 1 for redundancy).

    Returns
    -------
    float or pint.Quantity
        Hours: a Quantity when an argument is one, else a number (the book's convention).

    References
    ----------
    See :func:`mlsys.core.formulas.fleet_mtbf_s` (failure rates of independent
    components add).

    Examples
    --------
    >>> calc_mtbf_cluster(50_000, 1000)
    50.0
    """
    mtbf_s = _si(component_mtbf_hours, "hour", "component_mtbf_hours", allow_zero=False) * 3600.0
    n = _count(n_components, "n_components", at_least=1)
    factor = _si(correlation_factor, "dimensionless", "correlation_factor", allow_zero=False)
    hours = float(_core("fleet_mtbf_s")(1.0 / mtbf_s, n)) / 3600.0 * factor
    return _returned(hours, "hour", component_mtbf_hours, n_components)


def calc_mtbf_node(
    gpu_mtbf_h: Any,
    n_gpus: Any,
    nic_mtbf_h: Any,
    n_nics: Any,
    psu_mtbf_h: Any,
    n_psus: Any,
    other_mtbf_h: Any = None,
    n_other: Any = 0,
) -> Any:
    """MTBF of a node from its parts: ``1/MTBF = Σ n_i / MTBF_i`` (book's shape).

    Parameters
    ----------
    gpu_mtbf_h, nic_mtbf_h, psu_mtbf_h, other_mtbf_h : float or pint.Quantity
        MTBF of one GPU, NIC, power supply and other part (plain numbers are hours;
        ``other_mtbf_h`` may be None).
    n_gpus, n_nics, n_psus, n_other : int
        How many of each the node has.

    Returns
    -------
    float or pint.Quantity
        Hours: a Quantity when an argument is one, else a number (the book's convention).

    References
    ----------
    See :func:`mlsys.core.formulas.fleet_failure_rate` and
    :func:`mlsys.core.formulas.fleet_mtbf_s` (series system of exponential parts).

    Examples
    --------
    >>> round(calc_mtbf_node(50_000, 8, 150_000, 2, 100_000, 2), 1)
    5172.4
    """
    rate = _core("fleet_failure_rate")
    parts = [(gpu_mtbf_h, n_gpus), (nic_mtbf_h, n_nics), (psu_mtbf_h, n_psus)]
    if other_mtbf_h is not None:
        parts.append((other_mtbf_h, n_other))
    total_per_s = 0.0
    for index, (mtbf_h, count) in enumerate(parts):
        n = _count(count, ("n_gpus", "n_nics", "n_psus", "n_other")[index])
        if n:
            mtbf_s = _si(mtbf_h, "hour", "mtbf_h", allow_zero=False) * 3600.0
            total_per_s += rate(1.0 / mtbf_s, n)
    if total_per_s == 0.0:
        raise ParameterError("n_gpus", n_gpus, "at least one component in the node")
    hours = float(_core("fleet_mtbf_s")(total_per_s, 1)) / 3600.0
    return _returned(hours, "hour", *(mtbf for mtbf, _ in parts))


def calc_pipeline_bubble(n_stages: Any, n_microbatches: Any, v_stages: Any = 1) -> float:
    """Pipeline bubble fraction ``(P - 1) / (V·M + P - 1)`` (book's shape).

    Parameters
    ----------
    n_stages : int
        Pipeline stages ``P``.
    n_microbatches : int
        Micro-batches per step ``M``.
    v_stages : int, default 1
        Virtual stages per device ``V`` (interleaved 1F1B).

    Returns
    -------
    float
        Fraction of the step the devices idle, 0 to 1.

    References
    ----------
    See :func:`mlsys.core.formulas.interleaved_bubble_ratio` (Narayanan et al. 2021,
    Sec. 2.2) and :func:`mlsys.core.formulas.bubble_ratio_to_fraction`.

    Examples
    --------
    >>> round(calc_pipeline_bubble(4, 8), 4)
    0.2727
    """
    stages = _whole(n_stages, "n_stages")
    micro = _whole(n_microbatches, "n_microbatches")
    virtual = _whole(v_stages, "v_stages")
    ratio = _core("interleaved_bubble_ratio")(stages, micro, virtual)
    return float(_core("bubble_ratio_to_fraction")(ratio))


def calc_young_daly_interval(checkpoint_cost_s: Any, mtbf_s: Any) -> Any:
    """Optimal checkpoint interval ``sqrt(2 δ M)`` (book's shape).

    Parameters
    ----------
    checkpoint_cost_s : float or pint.Quantity
        Time to write one checkpoint (a plain number is seconds).
    mtbf_s : float or pint.Quantity
        Mean time between failures (a plain number is seconds).

    Returns
    -------
    float or pint.Quantity
        Seconds: a Quantity when an argument is one, else a number (the book's convention).

    References
    ----------
    See :func:`mlsys.core.formulas.young_checkpoint_interval_s` (Young 1974).

    Examples
    --------
    >>> round(calc_young_daly_interval(60, 86_400 / 2), 2)
    2276.84
    """
    delta = _si(checkpoint_cost_s, "s", "checkpoint_cost_s", allow_zero=False)
    mtbf = _si(mtbf_s, "s", "mtbf_s", allow_zero=False)
    interval = _core("young_checkpoint_interval_s")(delta, mtbf)
    return _returned(interval, "s", checkpoint_cost_s, mtbf_s)


def calc_effective_flops(peak_flops: Any, mfu: Any, scaling_eff: Any, goodput_ratio: Any) -> Any:
    """Delivered FLOP/s of a fleet: ``peak × MFU × η_scaling × goodput`` (book's definition).

    Parameters
    ----------
    peak_flops : float or pint.Quantity
        Aggregate peak FLOP/s (a plain number is FLOP/s).
    mfu, scaling_eff, goodput_ratio : float
        Model FLOPs utilization, scaling efficiency and goodput ratio, each above 0
        and at most 1 (a ParameterError otherwise).

    Returns
    -------
    float or pint.Quantity
        FLOP/s (the book's counts): a Quantity when an argument is one, else a number.

    References
    ----------
    Janapa Reddi et al., *Machine Learning Systems* (harvard-edge/cs249r_book), Vol. II,
    "effective FLOPS = peak × MFU × scaling efficiency × goodput/rawput"; MFU as defined
    by Chowdhery et al. (2022), "PaLM", Appendix B.

    Examples
    --------
    >>> calc_effective_flops(1e18, 0.5, 0.5, 0.9)
    2.25e+17
    """
    _not_text(peak_flops, "peak_flops")
    peak = _si(to_book_counts(_unwrap(peak_flops)), "1/s", "peak_flops", allow_zero=False)
    factors = [
        _fraction(x, n, allow_zero=False)
        for x, n in ((mfu, "mfu"), (scaling_eff, "scaling_eff"), (goodput_ratio, "goodput_ratio"))
    ]
    delivered = peak * factors[0] * factors[1] * factors[2]
    return _returned(delivered, "flop_count/s", peak_flops, mfu, scaling_eff, goodput_ratio)


def calc_availability_stacked(single_availability: Any, n_replicas: Any) -> float:
    """Availability of ``k`` independent redundant replicas, ``1 - (1 - A)^k``.

    Parameters
    ----------
    single_availability : float
        Availability of one replica, 0 to 1.
    n_replicas : int
        Independent replicas ``k``, any one of which serves.

    Returns
    -------
    float
        System availability, 0 to 1.

    References
    ----------
    Trivedi (2002), *Probability and Statistics with Reliability, Queuing and Computer
    Science Applications*, 2nd ed., Sec. 3.5 (parallel redundancy).

    Examples
    --------
    >>> round(calc_availability_stacked(0.99, 3), 6)
    0.999999
    """
    a = _fraction(single_availability, "single_availability")
    k = _count(n_replicas, "n_replicas", at_least=1)
    return float(1.0 - (1.0 - a) ** k)


def calc_amdahls_speedup(p: Any, s: Any) -> float:
    """Amdahl's law: overall speedup ``1 / ((1 - p) + p / s)``.

    Parameters
    ----------
    p : float
        Fraction of the work that is sped up, 0 to 1.
    s : float
        Speedup of that fraction (> 0).

    Returns
    -------
    float
        Overall speedup.

    References
    ----------
    Amdahl (1967), "Validity of the Single Processor Approach to Achieving Large Scale
    Computing Capabilities", AFIPS Spring Joint Computer Conference.

    Examples
    --------
    >>> round(calc_amdahls_speedup(0.9, 10), 4)
    5.2632
    """
    fraction = _fraction(p, "p")
    speedup = _si(s, "dimensionless", "s", allow_zero=False)
    return float(1.0 / ((1.0 - fraction) + fraction / speedup))


def calc_network_latency_ms(distance_km: Any) -> float:
    """Round-trip propagation delay over fiber, ``2 d / v_fiber``, in milliseconds.

    Parameters
    ----------
    distance_km : float or pint.Quantity
        One-way distance (a plain number is kilometres).

    Returns
    -------
    float
        Milliseconds; a lower bound (no switching, queueing or serialization).

    References
    ----------
    Propagation at ``c / n`` with the refractive index of silica fiber n ≈ 1.5
    (``SPEED_OF_LIGHT_FIBER_KM_S`` in ``book_assumptions.toml``).

    Examples
    --------
    >>> calc_network_latency_ms(1000)
    10.0
    """
    from mlsys.constants import SPEED_OF_LIGHT_FIBER_KM_S

    distance_m = _si(distance_km, "km", "distance_km") * 1e3
    speed_m_s = SPEED_OF_LIGHT_FIBER_KM_S.m_as("m/s")
    return float(2.0 * distance_m / speed_m_s * 1e3)


def calc_monthly_egress_cost(bytes_per_sec: Any, cost_per_gb: Any) -> float:
    """Dollars a month of egress at a steady rate: ``rate × 30 days × price`` (book's shape).

    Parameters
    ----------
    bytes_per_sec : float or pint.Quantity
        Egress rate (a plain number is bytes per second).
    cost_per_gb : float or pint.Quantity
        Price per GB (a plain number is dollars per GB).

    Returns
    -------
    float
        Dollars per (30-day) month, the book's month.

    References
    ----------
    Cloud egress is billed per GB transferred (e.g. AWS EC2 data-transfer pricing);
    the book's month is 30 days (``DAYS_PER_MONTH``).

    Examples
    --------
    >>> round(calc_monthly_egress_cost(1e6, 0.09), 2)
    233.28
    """
    from mlsys.constants import DAYS_PER_MONTH, SEC_PER_DAY

    rate = _si(bytes_per_sec, "byte/s", "bytes_per_sec")
    price_per_byte = _si(to_book_counts(_unwrap(cost_per_gb)), "1/GB", "cost_per_gb") / 1e9
    return float(rate * DAYS_PER_MONTH * SEC_PER_DAY * price_per_byte)


def model_memory(params: Any, bytes_per_param: Any, unit: Any = "MB") -> float:
    """Bytes to hold the weights, ``N × bytes_per_param``, as a number in ``unit``.

    Parameters
    ----------
    params : float or pint.Quantity
        Parameters (plain count, or a parameter Quantity).
    bytes_per_param : float or pint.Quantity
        Bytes per parameter (``BYTES_FP16``, or 2).
    unit : str or pint.Unit, default "MB"
        Unit of the returned number.

    Returns
    -------
    float
        Memory in ``unit``.

    References
    ----------
    See :func:`mlsys.core.formulas.checkpoint_bytes` (``N × bytes per parameter``).

    Examples
    --------
    >>> round(model_memory(25.6e6, 4))
    102
    """
    params_n = _count(params, "params")
    per_param = _si(bytes_per_param, "byte", "bytes_per_param")
    return float(Q_(_core("checkpoint_bytes")(params_n, per_param), "byte").m_as(unit))


BOOK_FORMULAS: dict[str, Callable[..., Any]] = {
    f.__name__: f
    for f in (
        calc_checkpoint_size,
        calc_failure_probability,
        calc_mtbf_cluster,
        calc_mtbf_node,
        calc_pipeline_bubble,
        calc_effective_flops,
        calc_young_daly_interval,
        calc_availability_stacked,
        calc_amdahls_speedup,
        calc_network_latency_ms,
        calc_monthly_egress_cost,
        model_memory,
    )
}
"""The textbook's formula names served by :mod:`mlsys.formulas` (not deprecated)."""
