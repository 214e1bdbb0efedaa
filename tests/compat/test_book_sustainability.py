"""The book's SustainabilityModel call: a duck-typed fleet, a grid as datacenter, days, mfu."""

from __future__ import annotations

import pytest

import mlsys
from mlsys import Hardware, Systems
from mlsys.compat.solvers import SustainabilityModel, as_catalog
from mlsys.compat.systems import Infrastructure
from mlsys.core.errors import ParameterError
from mlsys.core.units import Q_

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

US_AVG = Infrastructure.Grids.US_Avg


class DummyFleet:
    """The sustainability chapter's stand-in fleet: 2,048 H100, no host power."""

    node = type("obj", (object,), {"accelerator": Hardware.Cloud.H100})
    total_accelerators = 2048
    effective_pue = US_AVG.pue


def _book_call(**extra):
    return SustainabilityModel().solve(
        fleet=DummyFleet(), datacenter=US_AVG, duration_days=30, mfu=1.0, **extra
    )


def test_the_chapters_facility_energy_and_carbon():
    res = _book_call()
    # the chapter's own check: 2,048 x 0.7 kW (H100 SXM TDP) x PUE x 24 h x 30 days
    expected_kwh = 2048 * 0.7 * US_AVG.pue * 24 * 30
    assert res.total_energy_kwh.m_as("kWh") == pytest.approx(expected_kwh, rel=1e-12)
    assert res.total_energy_kwh.units == Q_(1, "kWh").units
    # 1,032,192 kWh of IT energy x PUE 1.12 x 429 g/kWh (Patterson et al. 2021) = 495.9 t
    tonnes = res.total_energy_kwh.magnitude * US_AVG.carbon_intensity_g_kwh / 1e6
    assert tonnes == pytest.approx(1_032_192 * 1.12 * 429 / 1e6, rel=1e-9)
    assert 450 < tonnes < 550  # the chapter's guard
    assert res.operational_carbon.m_as("tCO2e") == pytest.approx(tonnes, rel=1e-9)


def test_book_keywords_are_mlsys_keywords():
    book = SustainabilityModel().solve(
        fleet=DummyFleet(), datacenter=US_AVG, duration_days=2.5, mfu=0.4
    )
    ours = mlsys.SustainabilityModel().solve(
        accelerator=as_catalog(Hardware.Cloud.H100), accelerators=2048,
        duration=Q_(60, "hour"), utilization=0.4, grid=as_catalog(US_AVG), pue=US_AVG.pue,
    )  # fmt: skip
    assert book.energy.m_as("J") == pytest.approx(ours.energy.m_as("J"), rel=1e-12)
    assert book.carbon.m_as("kgCO2e") == pytest.approx(ours.carbon.m_as("kgCO2e"), rel=1e-12)


def test_a_real_cluster_passes_through_with_its_host_power():
    book = SustainabilityModel().solve(Systems.Clusters.Research_256, duration_days=1)
    ours = mlsys.SustainabilityModel().solve(
        as_catalog(Systems.Clusters.Research_256), Q_(1, "day")
    )
    assert book.energy.m_as("J") == pytest.approx(ours.energy.m_as("J"), rel=1e-12)
    assert book.host_power > 0  # the cluster's nodes bring host power; the dummy's none


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"duration": Q_(1, "day")}, "duration_days"),
        ({"utilization": 0.5}, "mfu"),
        ({"grid": as_catalog(US_AVG)}, "datacenter"),
    ],
)
def test_a_book_keyword_and_its_mlsys_name_together_are_refused(kwargs, name):
    with pytest.raises(ParameterError, match=name):
        _book_call(**kwargs)


def test_bad_days_mfu_and_host_power_are_refused():
    with pytest.raises(ParameterError, match="mfu"):
        SustainabilityModel().solve(fleet=DummyFleet(), duration_days=1, mfu=1.5)
    with pytest.raises(ParameterError, match="duration_days"):
        SustainabilityModel().solve(fleet=DummyFleet(), duration_days=0)

    class HostedFleet(DummyFleet):
        node = type("obj", (object,), {"accelerator": Hardware.Cloud.H100, "host_power": 1000})

    with pytest.raises(ParameterError, match="host power"):
        SustainabilityModel().solve(fleet=HostedFleet(), duration_days=1)
