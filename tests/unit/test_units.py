"""The unit registry: own dimensions, SI and IEC bytes, converters at the API edge."""

import math

import numpy as np
import pint
import pytest

from mlsys import Q_, ureg
from mlsys.core.errors import MlsysError, ParameterError, UnitError
from mlsys.core.units import as_quantity, as_si, get_registry


@pytest.mark.parametrize(
    ("left", "right"),
    [
        ("1 GB", "1 USD"),
        ("1 FLOP", "1 byte"),
        ("1 token", "1 parameter"),
        ("1 kgCO2e", "1 kg"),
        ("1 GB", "1"),  # bytes are a dimension, not a bare number
        ("1 USD", "1 kWh"),
    ],
)
def test_distinct_dimensions_do_not_mix(left, right):
    with pytest.raises(pint.DimensionalityError):
        Q_(left) + Q_(right)


def test_si_and_iec_bytes_both_exist():
    # 1 GiB = 2**30 bytes = 1.073741824 GB (IEC 80000-13).
    assert Q_(1, "GiB").to("GB").magnitude == pytest.approx(1.073741824)
    assert Q_(8, "Gbit").to("GB").magnitude == pytest.approx(1.0)


def test_upper_case_kb_is_the_decimal_kilobyte():
    # The textbook writes m_as('KB') beside 'MB' and 'GB': 1000 bytes, like kB; KiB is 1024.
    assert Q_(1, "KB").to("byte").magnitude == 1000
    assert Q_(512, "KiB").m_as("KB") == pytest.approx(524.288)
    assert Q_(3, "MB").m_as("KB") == pytest.approx(3000)
    assert Q_(1, "KB") == Q_(1, "kB")


def test_link_rate_to_bytes():
    # A 400 Gb/s NDR port moves 50 GB/s per direction.
    assert Q_(400, "Gbit/s").to("GB/s").magnitude == pytest.approx(50.0)


def test_carbon_units():
    assert Q_(552.1, "tCO2e").to("kgCO2e").magnitude == pytest.approx(552_100)
    energy = Q_(1287, "MWh")
    carbon = (energy * Q_(0.429, "kgCO2e/kWh")).to("tCO2e")
    assert carbon.magnitude == pytest.approx(552.1, rel=1e-3)


def test_flop_rate_and_money_prefixes():
    assert Q_(989.4, "TFLOP/s").to("flop/s").magnitude == pytest.approx(989.4e12)
    assert Q_(4.2, "MUSD").to("USD").magnitude == pytest.approx(4.2e6)
    assert f"{Q_(2, 'MUSD'):~P}" == "2 MUSD"


def test_registry_is_one_and_application_registry():
    assert get_registry() is get_registry()
    assert pint.get_application_registry().get() is get_registry() or isinstance(
        pint.get_application_registry(), pint.registry.ApplicationRegistry
    )
    assert ureg.Quantity(1, "GB")._REGISTRY is get_registry()


@pytest.mark.parametrize(
    ("value", "unit", "expected"),
    [
        ("3.35 TB/s", "byte/s", 3.35e12),
        (Q_(450, "GB/s"), "byte/s", 450e9),
        (2.0e9, "byte/s", 2.0e9),  # plain numbers are taken in the given unit
        (Q_(1, "GiB"), "byte", 2**30),
        (Q_(700, "W"), "kW", 0.7),
    ],
)
def test_as_si_converts(value, unit, expected):
    assert as_si(value, unit, "x") == pytest.approx(expected)


def test_as_si_vectorised():
    out = as_si(Q_(np.array([1.0, 2.0]), "GB"), "byte", "sizes")
    np.testing.assert_allclose(out, [1e9, 2e9])


@pytest.mark.parametrize(
    ("value", "kwargs", "error", "fragment"),
    [
        (Q_(80, "GB"), {}, UnitError, "memory_bandwidth='80 GB' is not allowed"),
        (math.nan, {}, ParameterError, "a finite number"),
        (math.inf, {}, ParameterError, "a finite number"),
        (None, {}, ParameterError, "memory_bandwidth=None"),
        (-1.0, {}, ParameterError, "non-negative"),
        (0.0, {"allow_zero": False}, ParameterError, "a positive number"),
        ("fast", {}, UnitError, "memory_bandwidth='fast'"),
        (True, {}, ParameterError, "not a boolean"),
        (np.array([1.0, np.nan]), {}, ParameterError, "finite numbers"),
    ],
)
def test_as_si_refuses_bad_input(value, kwargs, error, fragment):
    with pytest.raises(error) as info:
        as_si(value, "byte/s", "memory_bandwidth", **kwargs)
    assert fragment in str(info.value)
    assert isinstance(info.value, MlsysError) and isinstance(info.value, ValueError)


def test_as_quantity_keeps_the_authors_unit():
    q = as_quantity("80 GB", "byte", "memory_capacity")
    assert q.units == ureg.GB and q.magnitude == 80
    assert as_quantity(5, "W", "p").units == ureg.W
