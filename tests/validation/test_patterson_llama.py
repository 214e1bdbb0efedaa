"""SustainabilityModel against Patterson et al. (2021) Table 4 and Touvron et al. (2023)
Table 15, through the public API only.

Rows (with their citations) are read from ``mlsys/validation/data/operations.toml``, the
suite's one copy. Every published energy and carbon figure must be reproduced within 2 %.
"""

from __future__ import annotations

import pytest

from mlsys import Q_, Datacenters, SustainabilityModel
from mlsys.validation import load_data, records

PATTERSON = records("operations", "patterson")
TOUVRON = records("operations", "touvron")
T = load_data("operations")["touvron"]
TOL = load_data("operations")["patterson"]["tolerance"]


def test_data_files_are_complete():
    assert [r["model"] for r in PATTERSON] == ["GPT-3", "T5", "Meena", "Switch Transformer"]
    assert len(TOUVRON) == 4


def test_printed_intensities_reproduce_the_printed_carbon():
    # Table 4 prints kgCO2e/kWh for every model; × MWh it gives the printed tCO2e
    # (t/MWh = kg/kWh) to the table's rounding: Switch 179 × 0.330 = 59.07 ≈ 59.1.
    for row in PATTERSON:
        assert row["published_mwh"] * row["kg_per_kwh"] == pytest.approx(
            row["published_tco2e"], rel=5e-3
        ), row["model"]


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
    assert mwh == pytest.approx(row["published_mwh"], rel=TOL)
    assert tco2e == pytest.approx(row["published_tco2e"], rel=TOL)
    assert res.carbon.to("tCO2e").magnitude == pytest.approx(tco2e)  # no embodied figure


def test_patterson_gpt3_from_accelerator_hours_and_catalog_datacenter():
    # The same GPT-3 run given as 10,000 × 14.8 days of V100 time in the catalog's
    # Microsoft data centre (PUE 1.10 on the 0.429 kg/kWh US-average grid).
    row = PATTERSON[0]
    res = SustainabilityModel().solve(
        accelerator_hours=Q_(row["chips"] * row["days"] * 24, "hour"),
        power_per_accelerator=float(row["watts_per_chip"]),
        datacenter=Datacenters.MICROSOFT_GPT3,
    )
    assert res.energy.to("MWh").magnitude == pytest.approx(row["published_mwh"], rel=TOL)
    assert res.carbon.to("tCO2e").magnitude == pytest.approx(row["published_tco2e"], rel=TOL)


@pytest.mark.parametrize("row", TOUVRON, ids=[r["model"] for r in TOUVRON])
def test_touvron_table15(row):
    res = SustainabilityModel().solve(
        accelerator_hours=Q_(float(row["gpu_hours"]), "hour"),
        power_per_accelerator=Q_(float(T["watts_per_gpu"]), "W"),
        pue=float(T["pue"]),
        carbon_intensity=Q_(float(T["kg_per_kwh"]), "kgCO2e/kWh"),
    )
    assert res.energy.to("MWh").magnitude == pytest.approx(row["published_mwh"], rel=T["tolerance"])
    assert res.carbon.to("tCO2e").magnitude == pytest.approx(
        row["published_tco2e"], rel=T["tolerance"]
    )


def test_touvron_from_catalog_a100_tdp():
    # Touvron et al. take 400 W, the A100's TDP: the power model at full utilisation
    # from the catalog accelerator gives the same 65B figure (no host power without a
    # fleet).
    row = TOUVRON[-1]
    res = SustainabilityModel().solve(
        accelerator=T["accelerator"],
        accelerator_hours=Q_(row["gpu_hours"], "hour"),
        utilization=1.0,
        pue=T["pue"],
        carbon_intensity=T["kg_per_kwh"],
    )
    assert res.si("accelerator_power") == T["watts_per_gpu"]
    assert res.energy.to("MWh").magnitude == pytest.approx(row["published_mwh"], rel=TOL)
    assert res.carbon.to("tCO2e").magnitude == pytest.approx(row["published_tco2e"], rel=TOL)
