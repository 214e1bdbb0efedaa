"""Sizes of the fleet-level solvers (reliability, sustainability, economics,
synchronization): one value each, finite, checked even when a call does not use it, and
never a result of infinity or NaN from finite inputs."""

from __future__ import annotations

import math

import pytest

from mlsys import (
    Q_,
    EconomicsModel,
    Fabrics,
    Fleet,
    Nodes,
    ParameterError,
    ReliabilityModel,
    SustainabilityModel,
    SynchronizationModel,
)
from mlsys.core.formulas.economics import capital_recovery_factor
from mlsys.core.formulas.synchronization import two_point_backup_step_s
from mlsys.formatting import FormatError, book_fmt_int, fmt, fmt_int, fmt_percent

TWO_NODES = Fleet(node=Nodes.DGX_H100, count=2, fabric=Fabrics.IB_NDR)


def _reliability(**kw):
    return ReliabilityModel().solve(TWO_NODES, job_duration=Q_(30, "day"), **kw)


@pytest.mark.parametrize("name", ["bytes_per_param", "checkpoint_interval"])
@pytest.mark.parametrize("value", [math.nan, -1.0, "abc", True])
def test_reliability_checks_sizes_it_does_not_use(name, value):
    # no model and no checkpoint size given: these two were ignored, bad or not
    with pytest.raises(ParameterError, match=f"{name}="):
        _reliability(**{name: value})


@pytest.mark.parametrize("name", ["restart_time", "checkpoint_time", "fleet_mtbf"])
def test_reliability_refuses_a_list_for_one_quantity(name):
    with pytest.raises(ParameterError, match=r"not a list"):
        _reliability(**{name: [1.0]})


def _sustainability(**kw):
    return SustainabilityModel().solve(fleet=TWO_NODES, duration=Q_(1, "day"), **kw)


@pytest.mark.parametrize("value", [math.nan, -1.0, "abc", True, Q_(3, "GB/s")])
def test_sustainability_checks_lifetime_without_embodied_carbon(value):
    with pytest.raises(ParameterError, match="lifetime="):
        _sustainability(lifetime=value)


def test_sustainability_product_past_a_float_is_an_error_not_inf():
    # 1e300 × 16 accelerators × ~1 kW × 86,400 s overflows: no "inf kWh" in a book
    with pytest.raises(ParameterError, match="an energy a float can hold"):
        _sustainability(pue=1e300)


def _economics(**kw):
    return EconomicsModel().solve(TWO_NODES, **kw)


@pytest.mark.parametrize(
    "name",
    ["network_cost_fraction", "facility_multiplier", "cost_of_capital", "maintenance_fraction"],
)
def test_economics_factors_must_be_finite(name):
    with pytest.raises(ParameterError, match=f"{name}=inf"):
        _economics(**{name: math.inf})


@pytest.mark.parametrize("value", [math.nan, -1.0, "abc", True])
def test_economics_checks_ports_even_when_priced_by_fraction(value):
    with pytest.raises(ParameterError, match="ports_per_accelerator="):
        _economics(ports_per_accelerator=value)


def test_economics_cloud_price_zero_is_refused():
    with pytest.raises(ParameterError, match="cloud_price=0"):
        _economics(cloud_price=0.0)


@pytest.mark.parametrize("name", ["electricity_price", "accelerator_price", "cloud_price"])
def test_economics_refuses_a_list_for_one_price(name):
    with pytest.raises(ParameterError, match="not a list"):
        _economics(**{name: [1.0]})


def test_economics_overflowing_totals_are_an_error():
    # a finite energy at 1e303 USD/kWh: its yearly cost overflows to infinity
    with pytest.raises(ParameterError, match="a yearly cost a float can hold"):
        _economics(electricity_price=1e303)
    with pytest.raises(ParameterError, match="an energy a float can hold"):
        _economics(pue=1e300)  # the energy itself, from the sustainability model


def test_capital_recovery_factor_at_any_rate():
    # the formula's own example: 8 % over 5 years, 0.08 · 1.4693 / 0.4693 = 0.25046
    assert capital_recovery_factor(0.08, 5) == pytest.approx(0.250456, rel=1e-5)
    # r / (1 − (1 + r)^−n) tends to r for a huge rate: (1 + r)^n used to overflow
    assert capital_recovery_factor(1e300, 5) == pytest.approx(1e300)
    assert capital_recovery_factor(0.0, 5) == 0.2  # straight-line


def test_backup_workers_sum_the_shorter_tail():
    # the formula's example: P[Bin(102, 0.01) > 2] = 0.0831 -> 1.083 s
    assert two_point_backup_step_s(1.0, 2.0, 0.01, 100, 2) == pytest.approx(1.0831, abs=1e-4)
    # a trillion backups: the step is never slow; an integer binomial overflowed
    assert two_point_backup_step_s(1.0, 2.0, 0.01, 8, 10**12) == 1.0
    res = SynchronizationModel().solve(
        8, 1.0, backup_workers=10**12, slow_fraction=0.01, slowdown=2
    )
    assert res.si("expected_max_compute_time") == 1.0


def test_slowdown_must_be_finite():
    with pytest.raises(ParameterError, match="slowdown=inf"):
        SynchronizationModel().solve(8, 1.0, slow_fraction=0.1, slowdown=math.inf)


# the book's formatting flags ---------------------------------------------------------
@pytest.mark.parametrize("word", ["no", "off", "False", "0"])
def test_commas_no_means_no_separators(word):
    assert fmt_int(12345, commas=word) == "12345"
    assert book_fmt_int(12345, commas=word) == "12345"
    assert fmt(12345.0, commas=word) == fmt(12345.0, commas=False) == "12345.0"


@pytest.mark.parametrize("bad", [2, "maybe", math.nan])
def test_commas_refuses_non_flags(bad):
    for call in (lambda: fmt_int(12345, commas=bad), lambda: fmt_percent(0.5, commas=bad)):
        with pytest.raises(ParameterError, match="commas="):
            call()


def test_allow_zero_word():
    assert fmt(0.001, precision=1, allow_zero="yes") == "0.0"
    with pytest.raises(FormatError):
        fmt(0.001, precision=1, allow_zero="no")
