"""The default compute efficiency against each device's measured matmul ceiling."""

from __future__ import annotations

import pytest

from mlsys.core.catalog import Hardware
from mlsys.core.solvers.efficiency import default_efficiency, matmul_ceiling


def test_measured_ceilings_are_bekmans_table():
    # S. Bekman, Machine Learning Engineering, "Maximum Achievable Matmul FLOPS":
    # A100 SXM 267.9 of 312 TFLOP/s, H100 SXM 792.1 of 989.
    assert matmul_ceiling(Hardware.A100_80GB, "bf16") == pytest.approx(267.9 / 312, abs=1e-3)
    assert matmul_ceiling(Hardware.H100, "bf16") == pytest.approx(792.1 / 989, abs=1e-3)
    # narrow formats lose the same share as the default (0.65 / 0.75)
    assert matmul_ceiling(Hardware.H100, "fp8") == pytest.approx(0.801 * 0.65 / 0.75)
    # no measurement: the kind's default
    assert matmul_ceiling(Hardware.V100, "fp16") == default_efficiency("gpu", "fp16")


@pytest.mark.parametrize("key", [k for k in Hardware.list() if Hardware[k].matmul_ceiling])
@pytest.mark.parametrize("precision", ["bf16", "fp8"])
def test_default_efficiency_never_exceeds_the_measured_ceiling(key, precision):
    # The shape-aware GEMM time multiplies the default by tile and wave quantisation; the
    # default itself must stay below what the best shape ever reached on the device.
    acc = Hardware[key]
    if precision not in acc.precisions:
        pytest.skip(f"{key} has no {precision}")
    assert default_efficiency(acc, precision) <= matmul_ceiling(acc, precision)


def test_default_scales_with_the_device_ceiling_over_the_a100s():
    # The 0.75 default was fitted on A100s (Korthikanti et al. 2022, Table 5): 0.75 of
    # 312 TFLOP/s is 0.75/0.859 = 87 % of the A100's measured ceiling. On another device
    # the run sustains the same share of that device's ceiling (Bekman's table):
    # H100 0.75 * (792.1/989) / (267.9/312) = 0.6996; B200 0.75 * (1745.0/2250) / 0.859.
    assert default_efficiency(Hardware.A100_80GB, "bf16") == pytest.approx(0.75)
    assert default_efficiency(Hardware.H100, "bf16") == pytest.approx(
        0.75 * (792.1 / 989) / (267.9 / 312), rel=2e-3
    )
    assert default_efficiency(Hardware.B200, "bf16") == pytest.approx(
        0.75 * (1745.0 / 2250) / (267.9 / 312), rel=2e-3
    )
    # narrow formats keep their own factor on top (0.65/0.75)
    assert default_efficiency(Hardware.H100, "fp8") == pytest.approx(
        default_efficiency(Hardware.H100, "bf16") * 0.65 / 0.75
    )
    # a device without a measurement keeps its kind's default
    assert default_efficiency(Hardware.V100, "fp16") == 0.75


def test_resolve_efficiency_fast_path_agrees_with_default_efficiency():
    from mlsys.core.solvers.efficiency import resolve_efficiency

    for key in ("H100", "A100_80GB", "B200", "V100"):
        acc = Hardware[key]
        for prec in ("bf16", "fp8") if "fp8" in acc.precisions else ("fp16",):
            assert resolve_efficiency(None, acc, prec) == (
                pytest.approx(default_efficiency(acc, prec)),
                pytest.approx(default_efficiency(acc, prec, "memory")),
            )
