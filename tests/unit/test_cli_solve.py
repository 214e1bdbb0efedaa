"""``mlsys solve``: catalog inputs, --set parameters, JSON, infeasible exit status."""

import json

import pytest

from mlsys.cli import main
from mlsys.commands.solve import parse_value


@pytest.mark.parametrize(
    ("text", "value"),
    [("8", 8), ("0.5", 0.5), ("true", True), ("None", None), ("fp8", "fp8"), ("1e9", 1e9)],
)
def test_parse_value(text, value):
    assert parse_value(text) == value


def test_roofline_decode_json(capsys):
    status = main(
        [
            "solve",
            "roofline",
            "--model",
            "Llama2_70B",
            "--hardware",
            "H100",
            "--set",
            "phase=decode",
            "--json",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    # 69.0e9 parameters * 2 bytes of bf16 weights cannot fit in 80 GB: infeasible, exit 1.
    assert status == 1 and data["feasible"] is False
    assert data["weights_bytes"]["value"] == pytest.approx(2 * 68.977e9, rel=1e-3)


def test_unknown_parameter_is_reported(capsys):
    assert (
        main(
            ["solve", "roofline", "--model", "Llama2_70B", "--hardware", "H100", "--set", "nope=1"]
        )
        == 2
    )
    assert "a parameter of SingleNodeModel.solve" in capsys.readouterr().err


def test_set_needs_name_value(capsys):
    assert (
        main(["solve", "roofline", "--model", "GPT3_175B", "--hardware", "H100", "--set", "phase"])
        == 2
    )
    assert "NAME=VALUE" in capsys.readouterr().err
