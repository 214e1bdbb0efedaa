"""The virtual cluster starts, returns per-rank values, and never leaves a process behind."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
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
    """The process no longer runs (it does not exist, or is a zombie awaiting its reaper)."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        try:
            with open(f"/proc/{pid}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except OSError:
            pass
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


def _children_of(pid: int) -> list[int]:
    """Child pids from /proc (Linux), without psutil."""
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                kids.append(int(entry))
    return kids


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs /proc and prctl")
def test_a_killed_parent_leaves_no_orphan():
    # The parent is SIGKILLed while its ranks hang: no finally block runs, so only the
    # ranks' PR_SET_PDEATHSIG can clean up.
    code = (
        "from mlsys.emulate.cluster import run_cluster, fail_on_rank\n"
        "run_cluster(fail_on_rank, 2, (0, 'hang'), timeout_s=120)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code])
    try:
        ranks: list[int] = []
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            # resource tracker + 2 ranks
            ranks = [p for p in _children_of(parent.pid) if "spawn_main" in _cmdline(p)]
            if len(ranks) == 2:
                break
            time.sleep(0.2)
        assert len(ranks) == 2, "the ranks never started"
        time.sleep(1.0)
    finally:
        parent.kill()
        parent.wait(30)
    assert all(_gone(pid, wait_s=10) for pid in ranks), "a rank outlived its killed parent"


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_2x2_dp_tp_mesh(suite):
    # Row-major layout: rank = 2·dp_coord + tp_coord.
    expected_tp = {0: [0, 1], 1: [0, 1], 2: [2, 3], 3: [2, 3]}
    expected_dp = {0: [0, 2], 1: [1, 3], 2: [0, 2], 3: [1, 3]}
    for rank, rep in enumerate(suite["mesh"]):
        assert rep["coordinate"] == [rank // 2, rank % 2]
        assert rep["tp"]["ranks"] == expected_tp[rank]
        assert rep["dp"]["ranks"] == expected_dp[rank]
        assert rep["tp"]["sum"] == sum(expected_tp[rank])
        assert rep["dp"]["sum"] == sum(expected_dp[rank])
