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
