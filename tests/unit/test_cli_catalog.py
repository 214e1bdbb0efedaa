"""The ``mlsys`` command's dispatch and its ``catalog`` subcommand."""

import json

from mlsys import Q_
from mlsys.cli import SUBCOMMANDS, main


def test_help_lists_every_subcommand(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    for name in SUBCOMMANDS:
        assert name in out


def test_catalog_list_and_show(capsys):
    assert main(["catalog", "hardware"]) == 0
    assert "H100" in capsys.readouterr().out
    assert main(["catalog", "hardware", "h100-sxm"]) == 0
    out = capsys.readouterr().out
    assert "3.35 TB/s" in out and "datasheet" in out
    # The display policy, in the catalog's own units: money in dollars, the capacity the
    # device exposes (81,559 MiB, nvidia-smi), the year as a year.
    assert "$30,000" in out and "81,559 MiB" in out and " 2022 " in out
    assert "30000 USD" not in out
    assert main(["catalog", "grids", "US_AVG"]) == 0
    out = capsys.readouterr().out
    # Touvron et al. (2023): 0.385 kg CO2eq/kWh; Li et al. (2023): 3.14 L/kWh.
    assert "0.385 kg CO₂e/kWh" in out and "3.14 L/kWh" in out


def test_catalog_json(capsys):
    assert main(["catalog", "hardware", "H100", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    # The catalog gives the capacity the device exposes: 81,559 MiB (the H100 SXM "80 GB").
    assert Q_(data["memory_capacity"]).m_as("MiB") == 81559
    assert data["provenance"]["default"]["kind"] == "datasheet"


def test_unknown_entry_is_a_clean_error(capsys):
    assert main(["catalog", "hardware", "H10"]) == 2
    err = capsys.readouterr().err
    assert "Did you mean 'H100'" in err and "Traceback" not in err
