"""The book's CheckpointModel on mlsys's checkpoint formulas."""

from __future__ import annotations

import pytest

from mlsys import Hardware, Models
from mlsys.compat.solvers import CheckpointModel
from mlsys.core.errors import ParameterError
from mlsys.core.units import Q_

PARAMS = 8_030_261_248  # the catalog's Llama 3 8B


def test_adam_checkpoint_written_by_one_drive():
    res = CheckpointModel().solve(Models.Language.Llama3_8B, Hardware.Cloud.H100)
    size = PARAMS * 14  # 2 + 4 + 4 + 4 bytes per parameter (ZeRO, Sec. 3.1)
    assert res.si("checkpoint_size") == pytest.approx(size)
    drive = Hardware.Cloud.H100.storage.bandwidth.m_as("B/s")  # the book's 7 GB/s
    assert drive == pytest.approx(7e9)
    assert res.si("write_time_seconds") == pytest.approx(size / 7e9, rel=1e-12)  # 16.06 s
    assert res.mfu_penalty_pct == pytest.approx(size / 7e9 / (4 * 3600), rel=1e-12)
    assert not res.storage_bottleneck  # under a minute
    assert res.si("max_bandwidth_required") == pytest.approx(7e9)


def test_writers_scale_until_the_file_system_limit():
    model, hw = Models.Language.Llama3_8B, Hardware.Cloud.H100
    size = PARAMS * 14
    eight = CheckpointModel().solve(model, hw, n_writers=8)
    assert eight.si("write_time_seconds") == pytest.approx(size / 56e9, rel=1e-12)
    capped = CheckpointModel().solve(model, hw, n_writers=1000, filesystem_limit_gbs=100)
    assert capped.si("write_time_seconds") == pytest.approx(size / 100e9, rel=1e-12)
    sgd = CheckpointModel().solve(model, hw, optimizer="sgd", checkpoint_interval_hours=1)
    assert sgd.si("checkpoint_size") == pytest.approx(PARAMS * 4)
    assert sgd.mfu_penalty_pct == pytest.approx(PARAMS * 4 / 7e9 / 3600, rel=1e-12)


def test_slow_storage_is_a_bottleneck_and_bad_input_is_refused():
    slow = CheckpointModel().solve(
        Models.Language.Llama3_8B, Hardware.H100, storage_bandwidth=Q_("1 GB/s")
    )
    assert slow.si("write_time_seconds") == pytest.approx(PARAMS * 14 / 1e9)  # 112 s
    assert slow.storage_bottleneck
    with pytest.raises(ParameterError, match="storage_bandwidth"):
        CheckpointModel().solve(Models.Language.Llama3_8B, Hardware.H100)
    with pytest.raises(ParameterError, match="optimizer"):
        CheckpointModel().solve(Models.Language.Llama3_8B, Hardware.Cloud.H100, optimizer="lion")
