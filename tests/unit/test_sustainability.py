"""Sustainability formulas and SustainabilityModel: worked numbers, bad inputs, properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsys import (
    Q_,
    Accelerator,
    Datacenter,
    Fabric,
    Fleet,
    GridProfile,
    Node,
    ParameterError,
    SustainabilityModel,
    UnitError,
)
from mlsys.core.formulas.sustainability import (
    amortized_embodied_carbon_kg,
    facility_energy_J,
    it_energy_J,
    operational_carbon_kg,
    utilization_power_W,
    water_consumption_L,
)
from mlsys.core.solvers.sustainability import (
    DEFAULT_CARBON_KG_PER_KWH,
    DEFAULT_IDLE_FRACTION,
    DEFAULT_PUE,
)

KWH = 3.6e6


# -- formulas: the docstring examples ---------------------------------------------------
def test_utilization_power():
    assert utilization_power_W(0.6, 700.0, 100.0) == pytest.approx(460.0)
    out = utilization_power_W(np.array([0.0, 1.0]), 700.0, 100.0)
    np.testing.assert_allclose(out, [100.0, 700.0])


def test_gpt3_chain():
    # Patterson et al. 2021: 10,000 x 330 W x 14.8 d = 1,172.16 MWh; x1.10 = 1,289.4 MWh
    e_it = it_energy_J(330.0, 14.8 * 86400, 10_000)
    assert e_it / KWH / 1e3 == pytest.approx(1172.16)
    e = facility_energy_J(e_it, 1.10)
    assert e / KWH / 1e3 == pytest.approx(1289.376)
    assert operational_carbon_kg(e, 0.429) / 1e3 == pytest.approx(553.142, rel=1e-6)


def test_water():
    # 1,000 kWh IT: 0.55 L/kWh on site + 1,000 x 1.2 x 3.14 off site = 4,318 L
    assert water_consumption_L(1000 * KWH, 0.55, 3.14, 1.2) == pytest.approx(4318.0)
    assert water_consumption_L(1000 * KWH, 0.55) == pytest.approx(550.0)


def test_embodied():
    # 384 x 150 kg x 118 d / (6 x 365.25 d) = 3,101.4 kg
    got = amortized_embodied_carbon_kg(150.0, 384, 118 * 86400, 6 * 365.25 * 86400)
    assert got == pytest.approx(3101.44, rel=1e-5)


# -- solver -------------------------------------------------------------------------
ACC = Accelerator(
    name="test-gpu",
    peak_flops={"bf16": "100 TFLOP/s"},
    memory_capacity="80 GB",
    memory_bandwidth="2 TB/s",
    tdp="500 W",
    idle_power="100 W",
    embodied_carbon="150 kgCO2e",
)
NODE = Node(
    name="test-node",
    accelerator=ACC,
    accelerators_per_node=8,
    intra_fabric=Fabric(name="nv", kind="scale-up", bandwidth="300 GB/s", latency="1 us"),
    host_power="2000 W",
)
FLEET = Fleet(node=NODE, count=4, fabric=Fabric(name="ib", bandwidth="25 GB/s", latency="5 us"))
GRID = GridProfile(name="g", carbon_intensity="0.3 kgCO2e/kWh", water_intensity="2 L/kWh")
DC = Datacenter(name="dc", pue=1.2, wue="0.5 L/kWh", grid=GRID)


def test_fleet_power_model_with_host_and_facility():
    res = SustainabilityModel().solve(
        FLEET, Q_(10, "hour"), utilization=0.5, network_power=Q_(25, "W"), datacenter=DC
    )
    # accelerator 100 + 0.5 x 400 = 300 W; host 2000/8 = 250 W; network 25 W
    assert res.si("accelerator_power") == pytest.approx(300.0)
    assert res.si("host_power") == pytest.approx(250.0)
    assert res.si("power_per_accelerator") == pytest.approx(575.0)
    assert res.accelerators == 32
    assert res.si("it_power") == pytest.approx(32 * 575.0)
    it_kwh = 32 * 575.0 * 10 / 1000  # 184 kWh
    assert res.si("it_energy") == pytest.approx(it_kwh * KWH)
    assert res.si("energy") == pytest.approx(it_kwh * 1.2 * KWH)
    assert res.si("operational_carbon") == pytest.approx(it_kwh * 1.2 * 0.3)
    assert res.si("water_onsite") == pytest.approx(it_kwh * 0.5)
    assert res.si("water_offsite") == pytest.approx(it_kwh * 1.2 * 2.0)
    # embodied: 32 x 150 kg x 10 h / 6 years
    embodied = 32 * 150 * 10 / (6 * 365.25 * 24)
    assert res.si("embodied_carbon") == pytest.approx(embodied)
    assert res.si("carbon") == pytest.approx(it_kwh * 1.2 * 0.3 + embodied)


def test_grid_overrides_datacenter_grid_and_explicit_overrides_both():
    other = GridProfile(name="clean", carbon_intensity="0.02 kgCO2e/kWh")
    res = SustainabilityModel().solve(FLEET, 3600.0, datacenter=DC, grid=other)
    assert res.si("carbon_intensity") == 0.02
    assert res.pue == 1.2
    res = SustainabilityModel().solve(FLEET, 3600.0, datacenter=DC, pue=1.5, carbon_intensity=0.1)
    assert (res.pue, res.si("carbon_intensity")) == (1.5, 0.1)


def test_defaults_without_facility():
    no_idle = Accelerator(
        name="x", peak_flops={"bf16": 1e14}, memory_capacity=8e10, memory_bandwidth=2e12, tdp=500.0
    )
    res = SustainabilityModel().solve(duration=3600.0, accelerator=no_idle, utilization=0.0)
    assert res.pue == DEFAULT_PUE
    assert res.si("carbon_intensity") == DEFAULT_CARBON_KG_PER_KWH
    assert res.si("accelerator_power") == pytest.approx(DEFAULT_IDLE_FRACTION * 500.0)
    assert res.accelerators == 1


def test_measured_power_replaces_model():
    res = SustainabilityModel().solve(FLEET, 3600.0, power_per_accelerator=Q_(0.33, "kW"), pue=1.0)
    assert res.si("power_per_accelerator") == pytest.approx(330.0)
    assert res.si("host_power") == 0.0
    assert res.si("it_energy") == pytest.approx(32 * 330.0 * 3600)


def test_accelerator_by_catalog_name():
    res = SustainabilityModel().solve(
        duration=3600.0, accelerator="A100_80GB", accelerators=8, pue=1.0
    )
    assert res.si("it_energy") == pytest.approx(8 * 400.0 * 3600)


BAD = [
    ({}, ParameterError, "duration=None"),
    ({"duration": 3600.0}, ParameterError, "duration"),
    ({"accelerator_hours": 10.0}, ParameterError, "power_per_accelerator=None"),
    ({"fleet": FLEET, "duration": -1.0}, ParameterError, "duration=-1.0"),
    ({"fleet": FLEET, "duration": Q_(1, "W")}, UnitError, "duration"),
    ({"fleet": FLEET, "duration": 1.0, "utilization": 1.5}, ParameterError, r"\[0, 1\]"),
    ({"fleet": FLEET, "duration": 1.0, "pue": 0.9}, ParameterError, "pue=0.9"),
    ({"fleet": FLEET, "duration": 1.0, "accelerators": 0}, ParameterError, "accelerators=0"),
    (
        {"fleet": FLEET, "duration": 1.0, "power_per_accelerator": -5.0},
        ParameterError,
        "power_per_accelerator=-5.0",
    ),
    (
        {"fleet": FLEET, "duration": 1.0, "carbon_intensity": Q_(1, "kg")},
        UnitError,
        "carbon_intensity",
    ),
    ({"fleet": FLEET, "duration": 1.0, "accelerator": 3}, ParameterError, "accelerator=3"),
    ({"fleet": "big", "duration": 1.0}, ParameterError, "fleet='big'"),
    ({"fleet": FLEET, "duration": 1.0, "lifetime": 0.0}, ParameterError, "lifetime=0.0"),
]


@pytest.mark.parametrize(("kwargs", "error", "message"), BAD)
def test_bad_inputs(kwargs, error, message):
    with pytest.raises(error, match=message):
        SustainabilityModel().solve(**kwargs)


@settings(max_examples=40, deadline=None)
@given(st.floats(1.0, 3.0), st.floats(0.0, 2.0), st.floats(0.0, 1.0))
def test_more_pue_never_lowers_energy(pue, extra, utilization):
    model = SustainabilityModel()
    lo = model.solve(FLEET, 3600.0, pue=pue, utilization=utilization)
    hi = model.solve(FLEET, 3600.0, pue=pue + extra, utilization=utilization)
    assert hi.si("energy") >= lo.si("energy")
    assert hi.si("carbon") >= lo.si("carbon")
