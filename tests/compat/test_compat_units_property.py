"""Units at the shim's edge: a Quantity in any compatible unit gives the plain number's answer.

Every function of the textbook's formula modules (``mlsysim.physics`` and the older
``mlsysim.core.formulas``, served by :mod:`mlsys.compat.physics` and
:mod:`mlsys.formulas`) that takes a dimensioned argument is listed with the documented
unit of each such argument in ``data/mlsysim_surface.csv`` (``param_units``). For each,
hypothesis draws a magnitude, calls the function once with the plain number (in the
documented unit) and once with the same amount as a Quantity in another compatible unit,
and the two answers must agree. ``calc_mtbf_cluster(50000 * ureg.hour, 8192)`` once gave
0.0017 h against 6.10 h for the plain number: it is an explicit example.
"""

from __future__ import annotations

import importlib
import math
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mlsys.core.units import Q_
from tests.compat._surface import book_params, rows

# the older module's renamed names warn (tested in test_upstream_behaviour); not here
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SERVED_BY = {"mlsysim.physics": "mlsys.compat.physics", "mlsysim.core.formulas": "mlsys.formulas"}

CASES = [
    (r["module"], r["path"], r["call_shape"], dict(p.split("=") for p in r["param_units"].split()))
    for r in rows()
    if r["kind"] == "function" and r["param_units"] and r["module"] in SERVED_BY
]

# other spellings of each documented unit (same dimension, different scale)
OTHER_UNITS = {
    "km": ("m", "mile"),
    "s": ("ms", "minute", "hour"),
    "hour": ("minute", "day", "s"),
    "year": ("day", "month"),
    "byte": ("kB", "MiB", "GB"),
    "byte/s": ("GB/s", "Gbit/s", "MiB/s"),
    "flop": ("GFLOP", "TFLOP"),
    "flop/s": ("TFLOP/s", "GFLOP/s"),
    "W": ("kW", "mW"),
    "Hz": ("kHz", "1/minute"),
    "USD": ("kUSD",),
    "USD/GB": ("USD/TB", "USD/MB"),
    "USD/kWh": ("USD/MWh", "USD/Wh"),
    "parameter": ("kiloparameter", "gigaparameter"),
    "token": ("kilotoken",),
}

# plain (dimensionless) arguments, by the book's parameter name
PLAIN = {
    "mfu": 0.5,
    "scaling_eff": 0.9,
    "goodput_ratio": 0.8,
    "efficiency_eta": 0.4,
    "correlation_factor": 1.0,
    "strategy": "selective",
    "v_stages": 1,
    "num_servers": 4,
    "quantity": 100,
}
DEFAULT_COUNT = 8  # n_gpus, n_nodes, layers, heads, seq_len, batch ... (whole numbers)


def _function(module: str, name: str) -> Any:
    return getattr(importlib.import_module(SERVED_BY[module]), name)


def _base_args(shape: str, units: dict[str, str], magnitude: float) -> dict[str, Any]:
    required, optional = book_params(shape)
    args: dict[str, Any] = {}
    for name in required:
        if name in units:
            args[name] = magnitude
        else:
            args[name] = PLAIN.get(name, DEFAULT_COUNT)
    for name in optional:  # a dimensioned keyword the book's callers may set
        if name in units:
            args[name] = magnitude
    if "service_rate_hz" in args and "arrival_rate_hz" in args:
        args["arrival_rate_hz"] = args["service_rate_hz"] / 2  # a stable queue
    return args


def _numbers(result: Any, like: Any = None) -> list[float]:
    """The numbers of a result, a Quantity in the unit of ``like`` where both have one."""
    if isinstance(result, dict):
        return [v for key in sorted(result) for v in _numbers(result[key], (like or {}).get(key))]
    if isinstance(result, tuple):
        likes = like if isinstance(like, tuple) else (None,) * len(result)
        return [v for r, lk in zip(result, likes, strict=True) for v in _numbers(r, lk)]
    if isinstance(result, str):
        return []
    if hasattr(result, "m_as"):
        unit = getattr(like, "units", None) if like is not None else None
        return [float(result.m_as(unit)) if unit is not None else float(result.magnitude)]
    return [float(result)]


def _close(a: list[float], b: list[float]) -> bool:
    return len(a) == len(b) and all(
        (math.isinf(x) and x == y) or math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)
        for x, y in zip(a, b, strict=True)
    )


def _check(module: str, name: str, shape: str, units: dict[str, str], param: str, x: float,
           pick: int) -> None:  # fmt: skip
    f = _function(module, name)
    plain_args = _base_args(shape, units, x)
    other = OTHER_UNITS[units[param]]
    unit = other[pick % len(other)]
    as_quantity = dict(plain_args)
    as_quantity[param] = Q_(plain_args[param], units[param]).to(unit)
    plain = f(**plain_args)
    quantity = f(**as_quantity)
    reference = plain.quantity() if hasattr(plain, "quantity") else plain
    assert _close(_numbers(quantity, reference), _numbers(reference, reference)), (
        f"{name}({param}={plain_args[param]} {units[param]}) = {plain}, "
        f"as {as_quantity[param]}: {quantity}"
    )


PAIRS = [(m, n, s, u, p) for (m, n, s, u) in CASES for p in u]


def test_every_dimensioned_compat_function_is_covered():
    names = {n for _, n, _, _ in CASES}
    assert {"calc_mtbf_cluster", "calc_ring_allreduce_time", "calc_fleet_tco", "dTime",
            "calc_young_daly_interval", "calc_queue_latency_mmc"} <= names  # fmt: skip
    assert len(PAIRS) >= 40


PAIR_IDS = [f"{m.split('.')[-1]}.{n}.{p}" for m, n, _, _, p in PAIRS]


@pytest.mark.parametrize(("module", "name", "shape", "units", "param"), PAIRS, ids=PAIR_IDS)
@settings(max_examples=12, deadline=None)
@given(x=st.floats(min_value=1.0, max_value=1e6, allow_nan=False), pick=st.integers(0, 5))
def test_quantity_in_any_compatible_unit_equals_the_plain_number(module, name, shape, units,
                                                                  param, x, pick):  # fmt: skip
    _check(module, name, shape, units, param, x, pick)


@given(x=st.just(50_000.0))
@example(x=50_000.0)
@settings(max_examples=1, deadline=None)
def test_mtbf_cluster_in_hours_or_a_quantity(x):
    from mlsys.compat.physics import calc_mtbf_cluster
    from mlsys.core.units import ureg

    plain = calc_mtbf_cluster(x, 8192)
    quantity = calc_mtbf_cluster(x * ureg.hour, 8192)
    assert plain.m_as("hour") == pytest.approx(50_000 / 8192)  # 6.10 h
    assert quantity.m_as("hour") == pytest.approx(plain.m_as("hour"))
