"""SustainabilityModel against Patterson et al. (2021) Table 4 and Touvron et al. (2023)
Table 15, through the public API only.

Data files (with their citations and derivations): ``data/patterson2021_table4.csv`` and
``data/touvron2023_table15.csv``. Every published energy and carbon figure must be
reproduced within 2 %.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from mlsys import Q_, Datacenters, SustainabilityModel

DATA = Path(__file__).with_name("data")
TOL = 0.02


def _rows(name):
    with (DATA / name).open(encoding="utf-8") as fh:
        lines = [line for line in fh if not line.startswith("#")]
    return list(csv.DictReader(lines))


PATTERSON = _rows("patterson2021_table4.csv")
TOUVRON = _rows("touvron2023_table15.csv")


def test_data_files_are_complete():
    assert [r["model"] for r in PATTERSON] == ["GPT-3", "T5", "Meena", "Switch Transformer"]
    assert len(TOUVRON) == 4


def test_derived_intensities_follow_the_table():
    # kg/kWh = t/MWh: the data file's derived intensities are the table's own ratio.
    for row in PATTERSON:
        ratio = float(row["published_tco2e"]) / float(row["published_mwh"])
        assert float(row["kg_per_kwh"]) == pytest.approx(ratio, rel=5e-3), row["model"]


@pytest.mark.parametrize("row", PATTERSON, ids=[r["model"] for r in PATTERSON])
def test_patterson_table4(row):
    res = SustainabilityModel().solve(
        duration=Q_(float(row["days"]), "day"),
        accelerators=int(row["chips"]),
        power_per_accelerator=Q_(float(row["watts_per_chip"]), "W"),
        pue=float(row["pue"]),
        carbon_intensity=Q_(float(row["kg_per_kwh"]), "kgCO2e/kWh"),
    )
    mwh = res.energy.to("MWh").magnitude
    tco2e = res.operational_carbon.to("tCO2e").magnitude
    assert mwh == pytest.approx(float(row["published_mwh"]), rel=TOL)
    assert tco2e == pytest.approx(float(row["published_tco2e"]), rel=TOL)
    assert res.carbon.to("tCO2e").magnitude == pytest.approx(tco2e)  # no embodied figure


def test_patterson_gpt3_from_accelerator_hours_and_catalog_datacenter():
    # The same GPT-3 figure given as 3.552 M V100-hours in the Microsoft data centre
    # (catalog: PUE 1.10 on the US-average grid, 0.429 kg/kWh).
    if "MICROSOFT_GPT3" not in Datacenters.list():  # pragma: no cover - catalog varies
        pytest.skip("catalog has no MICROSOFT_GPT3 data centre")
    res = SustainabilityModel().solve(
        accelerator_hours=Q_(10_000 * 14.8 * 24, "hour"),
        power_per_accelerator=330.0,
        datacenter=Datacenters.MICROSOFT_GPT3,
    )
    assert res.energy.to("MWh").magnitude == pytest.approx(1287, rel=TOL)
    assert res.carbon.to("tCO2e").magnitude == pytest.approx(552.1, rel=TOL)


@pytest.mark.parametrize("row", TOUVRON, ids=[r["model"] for r in TOUVRON])
def test_touvron_table15(row):
    res = SustainabilityModel().solve(
        accelerator_hours=Q_(float(row["gpu_hours"]), "hour"),
        power_per_accelerator=Q_(float(row["watts_per_gpu"]), "W"),
        pue=float(row["pue"]),
        carbon_intensity=Q_(float(row["kg_per_kwh"]), "kgCO2e/kWh"),
    )
    assert res.energy.to("MWh").magnitude == pytest.approx(float(row["published_mwh"]), rel=TOL)
    assert res.carbon.to("tCO2e").magnitude == pytest.approx(float(row["published_tco2e"]), rel=TOL)


def test_touvron_from_catalog_a100_tdp():
    # Touvron et al. take 400 W, the A100's TDP: the power model at full utilisation
    # from the catalog accelerator gives the same 65B figure (no host power without a
    # fleet).
    res = SustainabilityModel().solve(
        accelerator="A100_80GB",
        accelerator_hours=Q_(1_022_362, "hour"),
        utilization=1.0,
        pue=1.1,
        carbon_intensity=0.385,
    )
    assert res.si("accelerator_power") == 400.0
    assert res.energy.to("MWh").magnitude == pytest.approx(449, rel=TOL)
    assert res.carbon.to("tCO2e").magnitude == pytest.approx(173, rel=TOL)
