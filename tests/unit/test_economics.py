"""Economics formulas and EconomicsModel: worked numbers, bad inputs, properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsys import (
    Q_,
    Accelerator,
    Datacenter,
    EconomicsModel,
    Fabric,
    Fleet,
    GridProfile,
    Node,
    ParameterError,
    SustainabilityModel,
    UnitError,
)
from mlsys.core.formulas.economics import (
    HOURS_PER_YEAR,
    annualized_capex_usd,
    breakeven_utilization,
    capital_recovery_factor,
    cost_per_accelerator_hour_usd,
    cost_per_million_tokens_usd,
    energy_cost_usd,
)
from mlsys.core.results import Result
from mlsys.core.solvers.economics import CLOUD_PRICES_USD_PER_HOUR


# -- formulas ------------------------------------------------------------------------
def test_capital_recovery_factor():
    # 0.08 x 1.08^5 / (1.08^5 - 1) = 0.250456
    assert capital_recovery_factor(0.08, 5) == pytest.approx(0.08 * 1.08**5 / (1.08**5 - 1))
    assert capital_recovery_factor(0.08, 5) == pytest.approx(0.250456, abs=1e-6)
    assert capital_recovery_factor(0.0, 5) == 0.2
    np.testing.assert_allclose(
        capital_recovery_factor(np.array([0.0, 0.08]), 5), [0.2, 0.250456], atol=1e-6
    )
    # the annuity tends to straight-line as the rate goes to zero
    assert capital_recovery_factor(1e-9, 4) == pytest.approx(0.25, rel=1e-6)


def test_annualized_capex_and_energy_cost():
    assert annualized_capex_usd(300_000, 4) == 75_000
    # 10.2 kW x 1.2 x 8,766 h x $0.08 = $8,583.67
    assert energy_cost_usd(10.2e3 * 1.2 * 8766 * 3600, 0.08) == pytest.approx(8583.6672)


def test_unit_costs():
    assert cost_per_accelerator_hour_usd(1.2e6, 32, 0.6) == pytest.approx(1.2e6 / (32 * 8766 * 0.6))
    # $20/h at 5,000 tokens/s: 20 / 18e6 x 1e6 = $1.111
    assert cost_per_million_tokens_usd(20.0, 5000.0) == pytest.approx(1.1111111)


def test_breakeven():
    assert breakeven_utilization(4e5, 2e4, 6e4, 4.0, 32) == pytest.approx(
        420_000 / (4 * 32 * 8766 - 40_000)
    )
    assert math.isinf(breakeven_utilization(4e5, 2e4, 6e4, 0.01, 32))


# -- solver --------------------------------------------------------------------------
ACC = Accelerator(
    name="test-gpu",
    peak_flops={"bf16": "100 TFLOP/s"},
    memory_capacity="80 GB",
    memory_bandwidth="2 TB/s",
    tdp="500 W",
    idle_power="100 W",
    unit_price="20000 USD",
)
NODE = Node(
    name="test-node",
    accelerator=ACC,
    accelerators_per_node=8,
    intra_fabric=Fabric(name="nv", kind="scale-up", bandwidth="300 GB/s", latency="1 us"),
    host_power="2000 W",
    unit_price="250000 USD",
)
FLEET = Fleet(node=NODE, count=4, fabric=Fabric(name="ib", bandwidth="25 GB/s", latency="5 us"))
GRID = GridProfile(name="g", carbon_intensity=0.3, electricity_price="0.10 USD/kWh")
DC = Datacenter(name="dc", pue=1.2, grid=GRID)


def test_fleet_tco_by_hand():
    res = EconomicsModel().solve(
        FLEET,
        lifetime=Q_(4, "year"),
        datacenter=DC,
        utilization=0.5,
        maintenance_fraction=0.05,
        network_cost_fraction=0.1,
        facility_multiplier=1.2,
    )
    capex = (4 * 250_000) * 1.1 * 1.2  # nodes + 10 % network, x1.2 facility
    assert res.capex.to("USD").magnitude == pytest.approx(capex)
    assert res.si("annual_capex") == pytest.approx(capex / 4)
    assert res.si("annual_maintenance") == pytest.approx(0.05 * capex)
    # energy: 32 accelerators, half the year busy (500 W + 250 W host), half idle
    # (100 W + 250 W host), PUE 1.2, $0.10/kWh
    kw_avg = 32 * (0.5 * 750 + 0.5 * 350) / 1000 * 1.2
    energy_cost = kw_avg * HOURS_PER_YEAR * 0.10
    assert res.si("annual_energy_cost") == pytest.approx(energy_cost)
    assert res.si("electricity_price") == 0.10
    tco = capex / 4 + 0.05 * capex + energy_cost
    assert res.si("annual_tco") == pytest.approx(tco)
    assert res.si("tco_per_accelerator_hour") == pytest.approx(tco / (32 * HOURS_PER_YEAR * 0.5))
    # pint's year and ours agree: the annual TCO in USD/hour over the used hours
    per_h = res.annual_tco.to("USD/hour").magnitude / 32 / 0.5
    assert per_h == pytest.approx(res.si("tco_per_accelerator_hour"))


def test_energy_matches_sustainability_model():
    econ = EconomicsModel().solve(FLEET, datacenter=DC)
    sust = SustainabilityModel().solve(FLEET, Q_(HOURS_PER_YEAR, "hour"), datacenter=DC)
    assert econ.si("annual_energy") == pytest.approx(sust.si("energy"))


def test_cost_of_capital_raises_annual_capex():
    plain = EconomicsModel().solve(FLEET, cost_of_capital=0.0)
    loaned = EconomicsModel().solve(FLEET, cost_of_capital=0.08)
    assert loaned.si("annual_capex") / plain.si("annual_capex") == pytest.approx(
        0.250456 / 0.2, rel=1e-5
    )


def test_accelerator_price_path_and_per_port_network():
    res = EconomicsModel().solve(
        accelerator=ACC,
        accelerators=16,
        network_cost_per_port=Q_(2500, "USD"),
        ports_per_accelerator=2,
    )
    assert res.si("compute_capex") == 16 * 20_000
    assert res.si("network_capex") == 16 * 2 * 2500


def test_run_and_token_costs_and_cloud():
    class FakeDistributed(Result):
        _units = {"step_time": "s"}

    step = FakeDistributed(step_time=2.0)
    res = EconomicsModel().solve(
        FLEET,
        step_time=step,
        steps=3600,
        tokens_per_second=Q_(20_000, "token/s"),
        cloud_price=Q_(3.0, "USD/hour"),
    )
    hours = 32 * 2.0 * 3600 / 3600  # 64 accelerator-hours
    per_h = res.si("tco_per_accelerator_hour")
    assert res.si("training_duration") == 7200.0
    assert res.si("training_run_cost") == pytest.approx(hours * per_h)
    assert res.si("cloud_training_run_cost") == pytest.approx(hours * 3.0)
    assert res.si("cost_per_million_tokens") == pytest.approx(per_h * 32 * 1e6 / (20_000 * 3600))
    assert res.si("cloud_cost_per_million_tokens") == pytest.approx(3.0 * 32 / 72)
    assert 0 < res.breakeven_utilization
    # at the break-even utilisation, owning costs what renting does
    at_u = EconomicsModel().solve(FLEET, utilization=res.breakeven_utilization, cloud_price=3.0)
    assert at_u.si("tco_per_accelerator_hour") == pytest.approx(3.0)


def test_cloud_list_price_for_catalog_accelerator():
    res = EconomicsModel().solve(accelerator="H100", accelerators=8, training_duration=3600.0)
    assert res.si("cloud_price_per_accelerator_hour") == pytest.approx(98.32 / 8)
    assert CLOUD_PRICES_USD_PER_HOUR["V100"] == pytest.approx(3.06)
    assert res.si("cloud_training_run_cost") == pytest.approx(98.32)


BAD = [
    ({"accelerator_price": -1.0}, ParameterError, "accelerator_price=-1.0"),
    ({"node_price": Q_(-5, "USD")}, ParameterError, "node_price"),
    ({"lifetime": 0.0}, ParameterError, "lifetime=0.0"),
    ({"lifetime": Q_(3, "GB")}, UnitError, "lifetime"),
    ({"utilization": 0.0}, ParameterError, r"utilization=0.0 .*\(0, 1\]"),
    ({"utilization": 1.2}, ParameterError, "utilization=1.2"),
    ({"electricity_price": -0.1}, ParameterError, "electricity_price=-0.1"),
    ({"cloud_price": -2.0}, ParameterError, "cloud_price=-2.0"),
    ({"facility_multiplier": 0.5}, ParameterError, "facility_multiplier=0.5"),
    ({"cost_of_capital": -0.1}, ParameterError, "cost_of_capital=-0.1"),
    ({"maintenance_fraction": -0.1}, ParameterError, "maintenance_fraction=-0.1"),
    ({"network_cost_fraction": -1}, ParameterError, "network_cost_fraction=-1"),
    ({"steps": 100}, ParameterError, "step_time"),
    ({"step_time": 1.0, "steps": 0}, ParameterError, "steps=0"),
    ({"tokens_per_second": 0.0}, ParameterError, "tokens_per_second=0.0"),
    ({"fleet": None}, ParameterError, "fleet=None"),
    ({"accelerators": 2.5}, ParameterError, "accelerators=2.5"),
]


@pytest.mark.parametrize(("kwargs", "error", "message"), BAD)
def test_bad_inputs(kwargs, error, message):
    args = {"fleet": FLEET, **kwargs}
    with pytest.raises(error, match=message):
        EconomicsModel().solve(args.pop("fleet"), **args)


def test_no_price_anywhere():
    bare = Accelerator(
        name="x", peak_flops={"bf16": 1e14}, memory_capacity=8e10, memory_bandwidth=2e12, tdp=500.0
    )
    with pytest.raises(ParameterError, match="accelerator_price=None"):
        EconomicsModel().solve(accelerator=bare, accelerators=4)


@settings(max_examples=40, deadline=None)
@given(st.floats(0.5, 20.0), st.floats(0.0, 10.0), st.floats(0.0, 0.2))
def test_longer_life_never_raises_annual_capex(life, extra, rate):
    model = EconomicsModel()
    short = model.solve(FLEET, lifetime=life, cost_of_capital=rate)
    long = model.solve(FLEET, lifetime=life + extra, cost_of_capital=rate)
    assert long.si("annual_capex") <= short.si("annual_capex") * (1 + 1e-12)


def test_numpy_scalars_accepted():
    res = EconomicsModel().solve(
        FLEET,
        accelerators=np.int64(32),
        utilization=np.float32(0.5),
        step_time=1.0,
        steps=np.int64(3600),
    )
    assert res.accelerators == 32 and res.utilization == 0.5
    assert res.si("training_duration") == 3600.0
