"""``mlsys emulate``: the table prints measured against predicted."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from mlsys.cli import main

pytestmark = pytest.mark.emulate


def test_matmul_table(capsys):
    code = main(
        [
            "emulate",
            "matmul",
            "--policy",
            "inner",
            "--ranks",
            "2",
            "--m",
            "32",
            "--k",
            "32",
            "--n",
            "32",
            "--no-dtensor",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    line = next(ln for ln in out.splitlines() if ln.startswith("inner"))
    # 2 ranks, 32×32 fp32 result: all-reduce sends 2·(1/2)·4 KiB = 4 KiB.
    assert "4.00 KiB   4.00 KiB" in line and "yes" in line


def test_usage_and_bad_input(capsys):
    assert main(["emulate"]) == 2
    assert main(["emulate", "matmul", "--policy", "diagonal", "--ranks", "2"]) == 2
    assert "policy='diagonal'" in capsys.readouterr().err
