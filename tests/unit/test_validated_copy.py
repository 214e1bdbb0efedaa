"""``model_copy(update=...)`` of catalog entries and layouts validates, and derives anew."""

from __future__ import annotations

import pytest

from mlsys import Hardware
from mlsys.core.errors import MlsysError
from mlsys.core.layout import TrainingLayout
from mlsys.core.units import Q_


def test_a_copy_with_new_figures_is_solved_with_them() -> None:
    h100 = Hardware.H100
    # read the derived SI floats first: they are cached on the entry
    assert h100.memory_bandwidth_Bps == 3.35e12
    assert h100.peak_flops_s("bf16") == pytest.approx(989.4e12)
    faster = h100.model_copy(
        update={
            "memory_bandwidth": Q_(4.8, "TB/s"),
            "peak_flops": {**h100.peak_flops, "bf16": Q_(1.2, "PFLOP/s")},
        }
    )
    assert faster.memory_bandwidth_Bps == 4.8e12
    assert faster.peak_flops_s("bf16") == 1.2e15
    assert h100.memory_bandwidth_Bps == 3.35e12  # the catalog entry is untouched


def test_a_copy_that_breaks_a_rule_is_refused() -> None:
    with pytest.raises(MlsysError, match="memory_bandwidth"):
        Hardware.H100.model_copy(update={"memory_bandwidth": Q_(-1, "TB/s")})
    with pytest.raises(MlsysError):
        Hardware.H100.model_copy(update={"no_such_field": 1})


def test_a_layout_copy_is_checked() -> None:
    layout = TrainingLayout(tp=2)
    assert layout.model_copy(update={"pp": 4}).pp == 4
    with pytest.raises(MlsysError, match="tp_size=0"):
        layout.model_copy(update={"tp": 0})


def test_a_copy_without_update_is_equal() -> None:
    assert Hardware.H100.model_copy() == Hardware.H100
