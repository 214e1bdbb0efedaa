"""The virtual cluster starts, returns per-rank values, and never leaves a process behind."""

from __future__ import annotations

import multiprocessing
import os
import time

import pytest

pytest.importorskip("torch")

from mlsys.core.errors import MlsysError, ParameterError
from mlsys.emulate.cluster import (
    EmulationTimeoutError,
    RankFailedError,
    fail_on_rank,
    last_child_pids,
    run_cluster,
)

pytestmark = pytest.mark.emulate


def _gone(pid: int, wait_s: float = 5.0) -> bool:
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def _assert_no_orphans() -> None:
    pids = last_child_pids()
    assert pids, "run_cluster recorded no child pids"
    assert multiprocessing.active_children() == []
    assert all(_gone(pid) for pid in pids), "a rank outlived its cluster"


def test_a_raising_rank_stops_everyone():
    # Rank 1 raises while ranks 0 and 2 block inside an all-reduce waiting for it.
    with pytest.raises(RankFailedError) as info:
        run_cluster(fail_on_rank, 3, (1,), timeout_s=60)
    assert info.value.rank == 1
    assert "fails on purpose" in str(info.value)
    assert isinstance(info.value, MlsysError)
    _assert_no_orphans()


def test_a_hanging_rank_hits_the_timeout_and_everyone_stops():
    t0 = time.monotonic()
    with pytest.raises(EmulationTimeoutError):
        run_cluster(fail_on_rank, 2, (0, "hang"), timeout_s=8)
    assert time.monotonic() - t0 < 30
    _assert_no_orphans()


def test_bad_arguments_fail_before_starting():
    with pytest.raises(ParameterError, match="world_size"):
        run_cluster(fail_on_rank, 0)
    with pytest.raises(ParameterError, match="timeout_s"):
        run_cluster(fail_on_rank, 2, timeout_s=0)
