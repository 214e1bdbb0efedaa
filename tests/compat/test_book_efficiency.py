"""The book's EfficiencyModel: its MFU estimates per kernel kind, on mlsys's catalog peaks."""

from __future__ import annotations

import pytest

from mlsys import Hardware, Models
from mlsys.compat.solvers import EfficiencyModel
from mlsys.core.errors import ParameterError

LLAMA = Models.Language.Llama3_8B
H100 = Hardware.H100  # dense peaks: 989.4 TFLOP/s fp16, 1,978.9 fp8, 67 fp32


@pytest.mark.parametrize(
    ("kwargs", "mfu"),
    [
        ({}, 0.5),  # ffn: min(MfuHigh 0.5 x 1, MFU_FFN_CAP 0.60)
        ({"efficiency": 0.8}, 0.6),  # min(0.5 x 1.6, 0.60): the cap
        ({"workload_type": "attention"}, 0.3),  # MfuLow without FlashAttention
        ({"workload_type": "attention", "use_flash_attention": True}, 0.75),
        ({"workload_type": "attention", "use_flash_attention": True, "efficiency": 0.6}, 0.85),
        ({"workload_type": "conv", "efficiency": 0.4}, 0.32),  # (0.3 + 0.5)/2 x 0.8
        ({"workload_type": "conv", "efficiency": 0.8}, 0.55),  # capped at MFU_CONV_CAP
        ({"workload_type": "embedding"}, 0.3),
    ],
)
def test_the_books_mfu_estimates_per_kernel_kind(kwargs, mfu):
    res = EfficiencyModel().solve(LLAMA, H100, **kwargs)
    assert res.mfu == pytest.approx(mfu)
    assert res.si("achievable_flops") == pytest.approx(mfu * 989.4e12)


def test_peak_at_the_precision_and_the_overhead_split():
    res = EfficiencyModel().solve(LLAMA, H100, precision="fp8", efficiency=0.4)
    assert res.si("peak_flops") == pytest.approx(1978.9e12)
    assert res.mfu == pytest.approx(0.4)  # 0.5 x 0.8
    # occupancy 1 - min(0.4 x HFU_MFU_RATIO 1.1, 1) = 0.56; the stall is the rest of 0.6
    assert res.overhead_breakdown["occupancy_loss"] == pytest.approx(0.56)
    assert res.overhead_breakdown["memory_stall"] == pytest.approx(0.04)
    unlisted = EfficiencyModel().solve(LLAMA, H100, precision="int4")
    assert unlisted.si("peak_flops") == pytest.approx(989.4e12)  # the book's 16-bit fallback


@pytest.mark.parametrize("efficiency", [0.0, 1.5, float("nan"), "0.5"])
def test_bad_efficiency_is_refused(efficiency):
    with pytest.raises(ParameterError, match="efficiency"):
        EfficiencyModel().solve(LLAMA, H100, efficiency=efficiency)
