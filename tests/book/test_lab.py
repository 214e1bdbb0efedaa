"""The Parallelism Paradox lab: its data functions, figures and the chapter that uses them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from mlsys import EconomicsModel, Fabrics, Fleet, MemoryModel
from mlsys.book import lab
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.solvers.synchronization import SynchronizationModel
from mlsys.formulas import pipeline_bubble_fraction

CHAPTER = Path(__file__).resolve().parents[2] / "book" / "quarto" / "lab-parallelism-paradox.qmd"


def test_module_imports_without_matplotlib():
    code = "import sys, mlsys.book.lab; assert 'matplotlib' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# -- Part 1 -------------------------------------------------------------------------------
@pytest.mark.parametrize("key", list(lab.TRACKS))
def test_efficiency_starts_at_one_and_never_rises(key):
    data = lab.scaling_data(key)
    assert set(data["fabrics"]) == set(lab.TRACKS[key].fabrics)
    for fabric in data["fabrics"].values():
        eff = np.asarray(fabric["efficiency"], dtype=float)
        assert eff[0] == pytest.approx(1.0)
        assert np.all(np.diff(eff) <= 1e-12), fabric["label"]
        # the ideal line is linear in devices from the first point
        n = np.asarray(data["devices"], dtype=float)
        assert np.allclose(fabric["ideal"], fabric["samples_per_s"][0] * n / n[0])


def test_wall_is_the_first_marginal_speedup_below_half():
    data = lab.scaling_data("cloud")
    for fabric in data["fabrics"].values():
        marginal = np.asarray(fabric["marginal"], dtype=float)
        below = [d for d, s in zip(data["devices"], marginal, strict=True) if s < 0.5]
        assert fabric["wall"] == (below[0] if below else None)
    # a faster network pushes the wall out: 10 GbE hits it inside the range, NDR does not
    assert data["fabrics"]["ETH_10G"]["wall"] is not None
    assert data["fabrics"]["IB_NDR"]["wall"] is None


def test_samples_per_second_are_tokens_over_sequence_length():
    t = lab.TRACKS["hearables"]
    fleet = Fleet(node=t.node, count=2, fabric=Fabrics.BLE)
    res = DistributedModel().solve(
        t.model, fleet, batch_size=t.batch_size, precision=t.precision, microbatch_count=200
    )
    got = lab.scaling_data("hearables")["fabrics"]["BLE"]["samples_per_s"][1]
    assert got == pytest.approx(res.si("tokens_per_second") / t.model.seq_len)


# -- Part 2 -------------------------------------------------------------------------------
def test_bubble_table_equals_the_formula():
    pps, ms = [1, 2, 4, 8], [1, 4, 32]
    table = lab.bubble_table(pps, ms)
    for i, p in enumerate(pps):
        for j, m in enumerate(ms):
            assert table[i][j] == pytest.approx((p - 1) / (m + p - 1))
    # p = 8, m = 32: 7/39 of the step (GPipe's share-of-total convention)
    assert table[3][2] == pytest.approx(7 / 39)
    payload = lab.ojs_payload()["bubble"]
    i, j = payload["pp"].index(4), payload["m"].index(32)
    assert payload["table"][i][j] == pytest.approx(3 / 35, rel=1e-3)


@pytest.mark.parametrize("key", ["cloud", "glasses"])
def test_memory_grid_marks_exactly_what_memory_model_rejects(key):
    t = lab.TRACKS[key]
    grid = lab.memory_grid(key)
    shape = (len(grid["dp"]), len(grid["m"]), len(grid["tp"]), len(grid["pp"]))
    fits = np.asarray(grid["fits"]).reshape(shape)
    gb = np.asarray(grid["gb"], dtype=float).reshape(shape)
    rng = np.random.default_rng(6)
    for _ in range(60):
        a, b, c, d = (int(rng.integers(n)) for n in shape)
        dp, m, tp, pp = grid["dp"][a], grid["m"][b], grid["tp"][c], grid["pp"][d]
        res = MemoryModel().solve(
            t.model, t.node.accelerator, batch_size=dp * m, precision=t.precision,
            dp_size=dp, tp_size=tp, pp_size=pp, microbatch_count=m, zero_stage=1,
            recompute="selective", sequence_parallel=tp > 1,
        )  # fmt: skip
        assert bool(fits[a, b, c, d]) == res.feasible
        assert gb[a, b, c, d] == pytest.approx(res.si("total") / 1e9, rel=1e-3)
    # the cloud model does not fit one GPU at TP = PP = 1, and fits at TP = 8, PP = 8
    if key == "cloud":
        assert not fits[0, 0, 0, 0]
        assert fits[0, 0, grid["tp"].index(8), grid["pp"].index(8)]
    else:
        assert fits.all()  # the glasses model fits one device: only DP is needed


def test_memory_heatmap_figure_crosses_out_the_infeasible_cells():
    pytest.importorskip("matplotlib")
    grid = lab.memory_grid("cloud")
    _, fits = lab.memory_at(grid, 16, 32)
    fig = lab.memory_heatmap_figure("cloud", dp=16, m=32)
    crossed = {
        (round(t.get_position()[1]), round(t.get_position()[0]))
        for t in fig.axes[0].texts
        if t.get_text() == "X"
    }
    expected = {(int(i), int(j)) for i, j in zip(*np.nonzero(~fits), strict=True)}
    assert crossed == expected and expected


def test_schedule_by_hand_two_stages_one_microbatch():
    # F on stage 0 (slot 0), F on stage 1 (slot 1), B on stage 1 (slots 2-3), B on
    # stage 0 (slots 4-5): 6 idle of 12 slots = (p - 1)/(m + p - 1) = 1/2.
    grid = lab.pipeline_schedule(2, 1)
    assert grid == [
        [(0, "F"), None, None, None, (0, "B"), (0, "B")],
        [None, (0, "F"), (0, "B"), (0, "B"), None, None],
    ]


@pytest.mark.parametrize("schedule", ["1f1b", "gpipe"])
@pytest.mark.parametrize(("p", "m"), [(1, 1), (2, 3), (4, 4), (4, 8), (8, 2), (8, 16), (3, 7)])
def test_schedule_idle_fraction_is_the_bubble_formula(schedule, p, m):
    grid = lab.pipeline_schedule(p, m, schedule)
    assert len(grid) == p and len(grid[0]) == 3 * (m + p - 1)
    assert lab.schedule_idle_fraction(grid) == pytest.approx(pipeline_bubble_fraction(p, m))
    # every stage runs each micro-batch's forward once and its backward (2 slots) once
    for row in grid:
        cells = [c for c in row if c is not None]
        assert sorted(cells) == sorted(
            [(i, "F") for i in range(m)] + [(i, "B") for i in range(m)] * 2
        )

    # dependencies: a forward follows the previous stage's, a backward the next stage's
    def start(s, cell):
        return grid[s].index(cell)

    for i in range(m):
        for s in range(1, p):
            assert start(s, (i, "F")) > start(s - 1, (i, "F"))
            assert start(s - 1, (i, "B")) >= start(s, (i, "B")) + 2


def test_1f1b_holds_fewer_microbatches_than_gpipe():
    # in-flight micro-batches on stage 0: forwards started minus backwards finished
    def peak_in_flight(grid):
        live = peak = 0
        for cell in grid[0]:
            if cell and cell[1] == "F":
                live += 1
            peak = max(peak, live)
            if cell and cell[1] == "B":
                live -= 0.5  # a backward spans two slots
        return peak

    assert peak_in_flight(lab.pipeline_schedule(4, 8)) == 4
    assert peak_in_flight(lab.pipeline_schedule(4, 8, "gpipe")) == 8


def test_layout_map_covers_every_rank_once():
    blocks = lab.layout_map(dp_size=4, tp_size=8, pp_size=4, layers=80, batch_size=512)
    ranks = sorted(r for b in blocks for r in range(b["first_rank"], b["first_rank"] + 8))
    assert ranks == list(range(4 * 8 * 4))
    stage1 = next(b for b in blocks if b["stage"] == 1 and b["replica"] == 0)
    # tp → dp → pp: stage 1 of replica 0 starts after dp·tp = 32 ranks, on node 4, rack 1
    assert (stage1["first_rank"], stage1["node"], stage1["rack"], stage1["pod"]) == (32, 4, 1, 0)
    assert sum(b["layer_end"] - b["layer_start"] for b in blocks if b["replica"] == 0) == 80
    assert sum(b["sample_end"] - b["sample_start"] for b in blocks if b["stage"] == 0) == 512


def test_puzzle_solutions_fit_and_keep_the_bubble_small():
    ch = lab.puzzle_challenge()
    assert 0 < ch["solutions"] <= ch["feasible"] <= ch["candidates"]
    assert ch["solutions"] == len(ch["layouts"])
    t = lab.TRACKS["cloud"]
    fleet = Fleet(node=t.node, count=lab.PUZZLE_NODES, fabric=Fabrics.IB_NDR)
    for r in ch["layouts"][:4]:
        assert r["dp"] * r["tp"] * r["pp"] == ch["gpus"] and r["dp"] * r["m"] == ch["batch"]
        assert r["bubble"] == pytest.approx((r["pp"] - 1) / (r["m"] + r["pp"] - 1))
        assert r["bubble"] < lab.BUBBLE_TARGET
        res = DistributedModel().solve(
            t.model, fleet, batch_size=ch["batch"], tp_size=r["tp"], pp_size=r["pp"],
            microbatch_count=r["m"], zero_stage=1, recompute="selective",
            sequence_parallel=r["tp"] > 1,
        )  # fmt: skip
        assert res.feasible
        assert res.si("tokens_per_second") == pytest.approx(r["tokens_per_s"])
    tps = [r["tokens_per_s"] for r in ch["layouts"]]
    assert tps == sorted(tps, reverse=True)


# -- Part 3 -------------------------------------------------------------------------------
@pytest.mark.parametrize("key", list(lab.TRACKS))
def test_sync_grid(key):
    sg = lab.sync_grid(key)
    sync, asyn = np.asarray(sg["sync"], float), np.asarray(sg["async"], float)
    # no stragglers: asynchronous and synchronous steps take the same time
    assert sync[0] == pytest.approx(asyn[0], rel=1e-4)
    assert np.all(np.diff(sync) <= 1e-9 * sync[0])
    assert np.all(asyn >= sync * (1 - 1e-4))
    assert sg["async_staleness"] == sg["workers"] - 1


def test_checkpoint_cost_matches_reliability_model():
    c = lab.checkpoint_cost()
    assert c["checkpoint_gb"] == pytest.approx(14 * lab.TRACKS["cloud"].model.total_params / 1e9)
    assert c["checkpoint_s"] == pytest.approx(c["checkpoint_gb"] * 1e9 / c["storage_Bps"])
    assert 0 < c["lost_fraction"] < 0.1


def test_dollar_comparison_follows_from_economics_model():
    d = lab.stakeholder_comparison()
    t = lab.TRACKS["cloud"]
    fleet = Fleet(node=t.node, count=lab.STAKEHOLDER_NODES, fabric=Fabrics.IB_NDR)
    monthly = EconomicsModel().solve(fleet).si("annual_tco") / 12
    assert d["monthly_cost"] == pytest.approx(monthly)
    assert d["zero_saving"] == pytest.approx(monthly * (1 - 1 / d["zero_gain"]))
    assert d["async_saving"] == pytest.approx(monthly * (1 - 1 / d["async_gain"]))
    assert d["winner"] == (
        "ZeRO" if d["zero_saving"] > d["async_saving"] else "asynchronous updates"
    )
    # the asynchronous gain is the ratio of synchronous to asynchronous step times
    replicas = d["workers"]
    m = t.batch_size // replicas
    base = DistributedModel().solve(
        t.model, fleet, batch_size=d["base_microbatch"] * replicas * m, microbatch_count=m,
        tp_size=8, pp_size=4, zero_stage=0, recompute="selective", sequence_parallel=True,
    )  # fmt: skip
    s = SynchronizationModel().solve(
        replicas, base.si("compute_time"), straggler="two-point",
        slow_fraction=d["slow_fraction"], slowdown=lab.STRAGGLER_SLOWDOWN,
        sync_time=base.si("step_time") - base.si("compute_time"),
    )  # fmt: skip
    assert d["async_gain"] == pytest.approx(s.si("sync_step_time") / s.si("async_step_time"))
    # waste: the month's share lost to the longer synchronous step (no stragglers: the
    # step is compute + synchronisation)
    clean = base.si("compute_time") + s.si("sync_time")
    assert d["waste"] == pytest.approx(monthly * (1 - clean / s.si("sync_step_time")))


# -- the payload and the figures ------------------------------------------------------------
def test_payload_is_small_strict_json():
    text = json.dumps(lab.ojs_payload(), allow_nan=False, separators=(",", ":"))
    assert lab.payload_json_bytes() == len(text.encode())
    assert lab.payload_json_bytes() < 1_000_000
    assert set(json.loads(text)["tracks"]) == set(lab.TRACKS)


def test_payload_schedules_replay_the_python_schedule():
    ops = lab.ojs_payload()["schedules"]["4,8"]["ops"]
    grid = lab.pipeline_schedule(4, 8)
    busy = sum(1 if kind == 0 else 2 for _, _, _, kind in ops)
    assert busy == sum(c is not None for row in grid for c in row) == 3 * 4 * 8


def test_figures_plot_the_lab_data():
    pytest.importorskip("matplotlib")
    data = lab.scaling_data("fleet")
    fig = lab.scaling_lab_figure("fleet")
    lines = fig.axes[0].get_lines()
    first = data["fabrics"]["ETH_10G"]
    assert np.allclose(lines[0].get_ydata(), first["samples_per_s"])
    assert np.allclose(lines[1].get_ydata(), first["ideal"])
    sync = lab.sync_figure("cloud").axes[0].get_lines()
    assert np.allclose(sync[0].get_ydata(), lab.sync_grid("cloud")["sync"])
    assert len(lab.schedule_figure(4, 8).axes[0].collections) == 2 * 4 * 8
    assert len(lab.layout_map_figure(4, 8, 2).axes[0].texts) == 4 * 2


@pytest.mark.book
def test_chapter_executes_cleanly(capsys):
    from mlsys.cli import main

    status = main(["check", "--execute", "--no-freeze", "--json", str(CHAPTER)])
    findings = json.loads(capsys.readouterr().out)
    assert status == 0, findings
    assert findings == []
