"""The textbook's formula names mlsys's own modules lack, over mlsys's cited formulas.

*Machine Learning Systems* (harvard-edge/cs249r_book) exports, besides the ``calc_*`` of
:mod:`mlsys._legacy`, the training-time identity ``dTime`` (and its names
``calc_training_time``, ``calc_training_time_days``), a roofline verdict
``calc_bottleneck``, PagedAttention's KV-cache size, the M/M/c queue, decode FLOPs,
three statistics formulas and a fleet TCO. :mod:`mlsys.compat.physics` (its newest
chapters) and :mod:`mlsys.formulas` (its older ones) serve them. Each takes the book's
call shape; a dimensioned argument is a pint Quantity in any compatible unit or a plain
number in the unit its docstring states (converted once, at the edge, by
:func:`mlsys.core.units.as_si`); impossible inputs raise
:class:`mlsys.core.errors.ParameterError`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from mlsys.core.errors import ParameterError
from mlsys.core.units import Q_, to_book_counts

__all__ = [
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
    "calc_fleet_tco",
]


def _number(value: Any, unit: str, name: str, *, allow_zero: bool = True) -> float:
    """``value`` in ``unit`` (FLOPs, parameters and dollars read as counts): one value,
    never a list (:func:`~mlsys.core.solvers._checks.one_si`)."""
    from mlsys.core.solvers._checks import one_si

    if isinstance(value, (str, bytes, bool)) or value is None:
        raise ParameterError(name, value, f"a number or a Quantity in {unit}")
    if hasattr(value, "units"):
        value = to_book_counts(value)
    return one_si(value, unit, name, allow_zero=allow_zero)


def _whole(value: Any, name: str, least: int = 1) -> int:
    number = _number(value, "dimensionless", name)
    if number != int(number) or number < least:
        raise ParameterError(name, value, f"a whole number of at least {least}")
    return int(number)


def _fraction(value: Any, name: str, *, allow_zero: bool = True) -> float:
    number = _number(value, "dimensionless", name, allow_zero=allow_zero)
    if number > 1.0:
        raise ParameterError(name, value, "a fraction from 0 to 1")
    return number


def dTime(total_ops: Any, num_devices: Any, peak_flops_per_device: Any, efficiency_eta: Any) -> Any:
    """Training time ``T = C / (n · peak · η)``, the book's "iron law", in seconds.

    Parameters
    ----------
    total_ops : pint.Quantity or float
        Work ``C`` (FLOPs; a plain number is FLOPs).
    num_devices : int
        Accelerators ``n`` (at least 1).
    peak_flops_per_device : pint.Quantity or float
        Peak of one device (FLOP/s; a plain number is FLOP/s).
    efficiency_eta : float
        Model FLOPs utilization ``η``, in (0, 1].

    Returns
    -------
    pint.Quantity
        Seconds.

    References
    ----------
    Chowdhery et al. (2022), "PaLM", Appendix B: MFU = achieved / peak FLOP/s, so the
    time is the work over the achieved rate; Kaplan et al. (2020) for ``C = 6 N D``.

    Examples
    --------
    3.14e23 FLOPs on 1,024 devices of 312 TFLOP/s at 40%: about 28.4 days.

    >>> round(dTime(3.14e23, 1024, 312e12, 0.4).m_as("day"), 1)
    28.4
    """
    work = _number(total_ops, "dimensionless", "total_ops")
    devices = _whole(num_devices, "num_devices")
    peak = _number(peak_flops_per_device, "1/s", "peak_flops_per_device", allow_zero=False)
    eta = _fraction(efficiency_eta, "efficiency_eta", allow_zero=False)
    return Q_(work / (devices * peak * eta), "s")


calc_training_time = dTime


def calc_training_time_days(
    total_ops: Any, num_devices: Any, peak_flops_per_device: Any, efficiency_eta: Any
) -> float:
    """:func:`dTime` as a plain number of days.

    Parameters
    ----------
    total_ops, num_devices, peak_flops_per_device, efficiency_eta
        As :func:`dTime`.

    Returns
    -------
    float
        Days.

    References
    ----------
    See :func:`dTime`.

    Examples
    --------
    >>> round(calc_training_time_days(3.14e23, 1024, 312e12, 0.4), 1)
    28.4
    """
    return float(dTime(total_ops, num_devices, peak_flops_per_device, efficiency_eta).m_as("day"))


def calc_bottleneck(ops: Any, model_bytes: Any, device_flops: Any, device_bw: Any) -> dict:
    """Roofline verdict: compute and memory times, which one binds, and by how much.

    Parameters
    ----------
    ops : pint.Quantity or float
        FLOPs of the work (a plain number is FLOPs).
    model_bytes : pint.Quantity or float
        Bytes moved (a plain number is bytes).
    device_flops : pint.Quantity or float
        Peak FLOP/s.
    device_bw : pint.Quantity or float
        Memory bandwidth (bytes/s).

    Returns
    -------
    dict
        ``compute_ms``, ``memory_ms``, ``bottleneck`` ("Compute" or "Memory"; a tie is
        "Compute"), ``ratio`` (slower over faster time, inf when one is zero) and
        ``intensity`` (FLOP/byte).

    References
    ----------
    Williams, Waterman & Patterson (2009), "Roofline", CACM 52(4): the slower of
    ``ops / peak`` and ``bytes / bandwidth`` bounds the time
    (:func:`mlsys.core.formulas.roofline.arithmetic_intensity`).

    Examples
    --------
    >>> calc_bottleneck(2e9, 1e9, 1e12, 1e12)["bottleneck"]
    'Compute'
    """
    from mlsys.core.formulas.roofline import arithmetic_intensity

    flops = _number(ops, "dimensionless", "ops")
    moved = _number(model_bytes, "byte", "model_bytes")
    compute_ms = flops / _number(device_flops, "1/s", "device_flops", allow_zero=False) * 1e3
    memory_ms = moved / _number(device_bw, "byte/s", "device_bw", allow_zero=False) * 1e3
    memory_bound = memory_ms > compute_ms
    slow, fast = (memory_ms, compute_ms) if memory_bound else (compute_ms, memory_ms)
    return {
        "compute_ms": compute_ms,
        "memory_ms": memory_ms,
        "bottleneck": "Memory" if memory_bound else "Compute",
        "ratio": math.inf if fast == 0.0 else slow / fast,
        "intensity": math.inf if moved == 0.0 else float(arithmetic_intensity(flops, moved)),
    }


def calc_transformer_decode_flops(n_params: Any, n_tokens: Any = 1) -> Any:
    """Decode FLOPs ``2 N t``: one multiply-add per parameter per generated token.

    Parameters
    ----------
    n_params : pint.Quantity or float
        Parameters ``N`` (a count).
    n_tokens : pint.Quantity or float
        Tokens generated ``t`` (a count, default 1).

    Returns
    -------
    pint.Quantity
        FLOPs as the book counts them (a plain count, so FLOPs over the book's FLOP/s
        are a time).

    References
    ----------
    Kaplan et al. (2020), "Scaling Laws for Neural Language Models", Eq. 2.2: a forward
    pass costs about ``2 N`` FLOPs per token (attention over the context excluded).

    Examples
    --------
    >>> calc_transformer_decode_flops(7e9, 100).m_as("GFLOP")
    1400.0
    """
    n = _number(n_params, "dimensionless", "n_params", allow_zero=False)
    t = _number(n_tokens, "dimensionless", "n_tokens")
    return to_book_counts(Q_(2.0 * n * t, "flop"))


def calc_paged_kv_cache_size(
    n_layers: Any,
    n_heads: Any,
    head_dim: Any,
    seq_len: Any,
    batch_size: Any,
    page_size_tokens: Any = 16,
    bytes_per_elem: Any = 2,
) -> tuple[Any, float]:
    """KV-cache bytes allocated in PagedAttention blocks, and the share left empty.

    ``2 · L · H_kv · d · ⌈S / p⌉ p · B · bytes``: keys and values of every layer and
    KV head for the sequence rounded up to whole blocks of ``p`` tokens.

    Parameters
    ----------
    n_layers, n_heads, head_dim : int
        Layers ``L``, KV heads ``H_kv`` and head width ``d``.
    seq_len : int
        Tokens held per sequence ``S``.
    batch_size : int
        Sequences ``B``.
    page_size_tokens : int
        Tokens per block ``p`` (vLLM's default 16).
    bytes_per_elem : pint.Quantity or float
        Bytes per cached element (a plain number is bytes; default 2).

    Returns
    -------
    tuple of (pint.Quantity, float)
        Bytes allocated, and the fraction of allocated slots that are empty.

    References
    ----------
    Kwon et al. (2023), "Efficient Memory Management for Large Language Model Serving
    with PagedAttention", SOSP, Sec. 4.1-4.2
    (:func:`mlsys.core.formulas.serving.paged_kv_blocks`,
    :func:`~mlsys.core.formulas.serving.paged_kv_waste_fraction`).

    Examples
    --------
    >>> size, waste = calc_paged_kv_cache_size(32, 32, 128, 1000, 1)
    >>> size.m_as("MB"), round(waste, 4)
    (528.482304, 0.0079)
    """
    from mlsys.core.formulas.serving import paged_kv_blocks, paged_kv_waste_fraction

    shape = [_whole(v, n) for v, n in ((n_layers, "n_layers"), (n_heads, "n_heads"))]
    width = _whole(head_dim, "head_dim")
    tokens = _whole(seq_len, "seq_len")
    batch = _whole(batch_size, "batch_size")
    page = _whole(page_size_tokens, "page_size_tokens")
    per = _number(bytes_per_elem, "byte", "bytes_per_elem", allow_zero=False)
    slots = float(paged_kv_blocks(tokens, page)) * page
    size = 2.0 * shape[0] * shape[1] * width * slots * batch * per
    return Q_(size, "byte"), float(paged_kv_waste_fraction(tokens, page))


def calc_queue_latency_mmc(arrival_rate_hz: Any, service_rate_hz: Any, num_servers: Any) -> tuple:
    """M/M/c queue: utilization and the median and 99th-percentile waits.

    With ``ρ = λ / (c μ)`` and Erlang C's waiting probability ``P_w``, a wait is zero
    with probability ``1 − P_w`` and otherwise exponential with rate ``c μ (1 − ρ)``,
    so the ``q``-quantile wait is ``ln(P_w / (1 − q)) / (c μ (1 − ρ))`` (0 when
    ``P_w ≤ 1 − q``). At ``ρ ≥ 1`` the queue grows without bound: ``(1.0, inf, inf)``.

    Parameters
    ----------
    arrival_rate_hz : pint.Quantity or float
        Arrivals ``λ`` (a plain number is per second).
    service_rate_hz : pint.Quantity or float
        Completions of one server ``μ`` (per second, > 0).
    num_servers : int
        Servers ``c`` (at least 1).

    Returns
    -------
    tuple of (float, pint.Quantity, pint.Quantity)
        ``ρ``, the median wait and the 99th-percentile wait (seconds).

    References
    ----------
    Kleinrock (1975), *Queueing Systems, Vol. 1: Theory*, Sec. 3.5 (M/M/m, Erlang's C
    formula and the waiting-time distribution).

    Examples
    --------
    M/M/1 at ρ = 0.8 with μ = 10/s: P_w = 0.8, rate 2/s, p99 = ln(80)/2 ≈ 2.19 s.

    >>> rho, p50, p99 = calc_queue_latency_mmc(8, 10, 1)
    >>> rho, round(p50.m_as("s"), 3), round(p99.m_as("s"), 3)
    (0.8, 0.235, 2.191)
    """
    lam = _number(arrival_rate_hz, "Hz", "arrival_rate_hz")
    mu = _number(service_rate_hz, "Hz", "service_rate_hz", allow_zero=False)
    servers = _whole(num_servers, "num_servers")
    rho = lam / (servers * mu)
    if rho >= 1.0:
        return 1.0, Q_(math.inf, "s"), Q_(math.inf, "s")
    if lam == 0.0:
        return 0.0, Q_(0.0, "s"), Q_(0.0, "s")
    from mlsys.core.formulas.queueing import mmc_wait_quantile

    return (
        rho,
        Q_(mmc_wait_quantile(0.5, lam, mu, servers), "s"),
        Q_(mmc_wait_quantile(0.99, lam, mu, servers), "s"),
    )


def calc_population_stability_index(
    expected: Sequence[float], actual: Sequence[float], epsilon: float = 1e-12
) -> float:
    """Population stability index ``Σ (a_i − e_i) ln(a_i / e_i)`` of two binned shares.

    Parameters
    ----------
    expected, actual : sequence of float
        Bin shares (each summing to about 1), aligned bin by bin.
    epsilon : float
        Floor on a bin's share, so an empty bin does not give ``ln 0``.

    Returns
    -------
    float
        PSI, at least 0 (0: the same distribution; the usual reading is < 0.1 stable,
        0.1-0.25 a moderate shift, > 0.25 a shift to investigate).

    References
    ----------
    Yurdakul (2018), "Statistical Properties of Population Stability Index", Western
    Michigan University dissertation, Eq. 1 (the symmetrised Kullback-Leibler form).

    Examples
    --------
    >>> round(calc_population_stability_index([0.5, 0.5], [0.6, 0.4]), 4)
    0.0405
    """
    if isinstance(expected, (str, bytes)) or isinstance(actual, (str, bytes)):
        raise ParameterError("expected", expected, "two sequences of bin shares")
    if len(expected) != len(actual) or not len(expected):
        raise ParameterError("actual", actual, f"{len(expected)} bin shares, as in expected")
    floor = _number(epsilon, "dimensionless", "epsilon", allow_zero=False)
    total = 0.0
    for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
        e_i = max(_number(e, "dimensionless", f"expected[{i}]"), floor)
        a_i = max(_number(a, "dimensionless", f"actual[{i}]"), floor)
        total += (a_i - e_i) * math.log(a_i / e_i)
    return total


def calc_two_proportion_sample_size(
    baseline_rate: Any, detectable_lift: Any, z_alpha: Any = 1.96, z_beta: Any = 0.84
) -> float:
    """Samples per arm to detect a lift ``δ`` over a rate ``p``: ``2 (z_α + z_β)² p(1−p) / δ²``.

    Parameters
    ----------
    baseline_rate : float
        Control rate ``p``, in (0, 1).
    detectable_lift : float
        Smallest absolute difference to detect ``δ`` (> 0).
    z_alpha : float
        Normal quantile of the significance level (1.96: two-sided 5%).
    z_beta : float
        Normal quantile of the power (0.84: 80%).

    Returns
    -------
    float
        Samples per arm (not rounded up).

    References
    ----------
    Kohavi, Tang & Xu (2020), *Trustworthy Online Controlled Experiments*, Sec. 17.3
    (sample size with the baseline variance in both arms).

    Examples
    --------
    >>> round(calc_two_proportion_sample_size(0.1, 0.01))
    14112
    """
    p = _fraction(baseline_rate, "baseline_rate", allow_zero=False)
    delta = _number(detectable_lift, "dimensionless", "detectable_lift", allow_zero=False)
    za = _number(z_alpha, "dimensionless", "z_alpha")
    zb = _number(z_beta, "dimensionless", "z_beta")
    return 2.0 * (za + zb) ** 2 * p * (1.0 - p) / delta**2


def calc_constraint_propagation_factor(stage_from: Any, stage_to: Any, base: Any = 2) -> int:
    """Cost multiplier of a constraint found ``k`` lifecycle stages late: ``base^k``.

    Parameters
    ----------
    stage_from, stage_to : int
        Lifecycle stage indices (0 = requirements ...); ``stage_to ≥ stage_from``.
    base : int
        Growth per stage (default 2: the cost doubles each stage).

    Returns
    -------
    int
        The multiplier (1 when the stages are equal).

    References
    ----------
    Boehm (1981), *Software Engineering Economics*, Ch. 4 (the relative cost of fixing
    a defect grows geometrically with the phase it is found in).

    Examples
    --------
    >>> calc_constraint_propagation_factor(0, 3)
    8
    """
    start = _whole(stage_from, "stage_from", least=0)
    end = _whole(stage_to, "stage_to", least=0)
    if end < start:
        raise ParameterError("stage_to", stage_to, f"a stage at or after stage_from={start}")
    growth = _number(base, "dimensionless", "base", allow_zero=False)
    return int(growth ** (end - start))


def calc_fleet_tco(
    unit_cost: Any, power_w: Any, quantity: Any, years: Any, kwh_price: Any
) -> float:
    """Fleet total cost of ownership: hardware bought once plus energy over the years.

    ``TCO = quantity · unit_cost + energy_cost(quantity · P · years)``, the hardware
    and power terms of a TCO (no cooling, labour or network; add them in the chapter).
    The book's call shape and argument order.

    Parameters
    ----------
    unit_cost : float or pint.Quantity
        Price of one device (a plain number is USD).
    power_w : float or pint.Quantity
        Average power of one device (a plain number is watts).
    quantity : int
        Devices in the fleet.
    years : float or pint.Quantity
        Service life (a plain number is years of 365.25 days, pint's ``year``; a
        Quantity in any time unit).
    kwh_price : float or pint.Quantity
        Electricity price (a plain number is USD per kWh).

    Returns
    -------
    float
        USD.

    References
    ----------
    Barroso, Hölzle & Ranganathan (2019), "The Datacenter as a Computer", 3rd ed.,
    Sec. 6.1 (TCO = capital + operational expense); the energy term is
    :func:`mlsys.core.formulas.economics.energy_cost_usd`.

    Examples
    --------
    500 devices of USD 150 at 2 W for 3 years at USD 0.12/kWh:
    75,000 + 500 x 2 W x 26,298 h x 0.12 USD/kWh = 75,000 + 3,155.76.

    >>> round(calc_fleet_tco(150, 2.0, 500, 3, 0.12), 2)
    78155.76
    """
    from mlsys.core.formulas.economics import energy_cost_usd

    cost = _number(unit_cost, "dimensionless", "unit_cost")
    watts = _number(power_w, "W", "power_w")
    count = _number(quantity, "dimensionless", "quantity")
    life_s = _number(years, "s", "years") if hasattr(years, "units") else None
    if life_s is None:
        life_s = _number(years, "dimensionless", "years") * Q_(1, "year").m_as("s")
    price = _number(kwh_price, "1/kWh", "kwh_price")
    energy_j = count * watts * life_s
    return cost * count + float(energy_cost_usd(energy_j, price))
