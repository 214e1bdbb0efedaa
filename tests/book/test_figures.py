"""The book's figures plot exactly what the solvers compute.

Each test draws a figure, reads the data back from its axes and recomputes it with the
solver or formula the figure claims to show (units converted as the axis labels say).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from matplotlib.figure import Figure

from mlsys import (
    EconomicsModel,
    Fabrics,
    Grids,
    Hardware,
    MemoryModel,
    Models,
    Nodes,
    ReliabilityModel,
    ServingModel,
    SingleNodeModel,
    SustainabilityModel,
)
from mlsys.book import figures


def _line(ax, i=0):
    line = ax.lines[i]
    return np.asarray(line.get_xdata(), float), np.asarray(line.get_ydata(), float)


def test_roofline_lines_are_min_of_peak_and_bandwidth_times_intensity():
    accs = [Hardware.H100, Hardware.A100_80GB]
    fig = figures.roofline_figure(accs, intensity_range=(1.0, 1000.0), samples=50)
    assert isinstance(fig, Figure)
    ax = fig.axes[0]
    for i, acc in enumerate(accs):
        x, y = _line(ax, i)
        assert ax.lines[i].get_label() == acc.label
        expected = np.minimum(acc.peak_flops_s("bf16"), x * acc.memory_bandwidth_Bps) / 1e12
        np.testing.assert_allclose(y, expected, rtol=1e-12)
    # H100 SXM: 989.4 TFLOP/s dense bf16 is the flat roof (published.md)
    assert _line(ax, 0)[1][-1] == pytest.approx(989.4, rel=1e-3)


def test_operator_points_are_the_solvers_operator_table():
    points = figures.operator_points(Models.Llama2_70B, Hardware.H100, phase="decode")
    res = SingleNodeModel().solve(Models.Llama2_70B, Hardware.H100, phase="decode")
    op = res.operators["mlp_up"]
    intensity, achieved = points["mlp_up (decode, b=1)"]
    assert intensity == op["intensity"]
    assert achieved == pytest.approx(op["flops"] / op["time"])
    # batch-1 decode of a GEMM reads every weight for 2 FLOPs per 2 bytes: ~1 FLOP/byte
    assert intensity == pytest.approx(1.0, rel=0.01)
    fig = figures.roofline_figure([Hardware.H100], points=points)
    xs = [ln.get_xdata()[0] for ln in fig.axes[0].lines[1:]]
    assert sorted(xs) == sorted(p[0] for p in points.values())


def test_memory_bars_are_memory_model_parts():
    fig = figures.memory_breakdown_figure(
        Models.Llama2_70B, Hardware.H100, dp_size=64, seq_len=4096, recompute=("full",)
    )
    ax = fig.axes[0]
    weights, grads, opt, acts, overhead = ax.containers
    for j, stage in enumerate((0, 1, 2, 3)):
        res = MemoryModel().solve(
            Models.Llama2_70B,
            Hardware.H100,
            batch_size=64,
            seq_len=4096,
            dp_size=64,
            zero_stage=stage,
            recompute="full",
        )
        assert weights[j].get_height() == pytest.approx(res.si("weights") / 1e9)
        assert grads[j].get_height() == pytest.approx(res.si("gradients") / 1e9)
        assert opt[j].get_height() == pytest.approx(res.si("optimizer_state") / 1e9)
        assert acts[j].get_height() == pytest.approx(res.si("activations") / 1e9)
        assert overhead[j].get_height() == pytest.approx(res.si("framework_overhead") / 1e9)
    # ZeRO-0 keeps 2 bytes of bf16 weights and K = 12 bytes of Adam state per parameter
    # (Rajbhandari et al. 2020); ZeRO-3 divides all three model states by N_d = 64.
    p = Models.Llama2_70B.total_params
    assert weights[0].get_height() == pytest.approx(2 * p / 1e9, rel=1e-9)
    assert opt[0].get_height() == pytest.approx(12 * p / 1e9, rel=1e-9)
    for part in (weights, grads, opt):
        assert part[3].get_height() == pytest.approx(part[0].get_height() / 64, rel=1e-9)


def test_pipeline_bubble_lines():
    fig = figures.pipeline_bubble_figure((4, 8), microbatch_counts=[1, 8, 32])
    x, y = _line(fig.axes[0], 1)
    # GPipe/1F1B: (p-1)/(m+p-1); p=8, m=32 -> 7/39 = 17.9 % of the step (published.md)
    np.testing.assert_allclose(y, [7 / 8, 7 / 15, 7 / 39])
    assert list(x) == [1, 8, 32]


def test_scaling_line_is_scaling_curve():
    from mlsys.core.solvers.scaling import scaling_curve

    kw = dict(tp_size=8, pp_size=8, recompute="selective", sequence_parallel=True)
    nodes = [8, 16, 32]
    fig = figures.scaling_figure(
        Models.GPT3_175B, Nodes.DGX_A100, Fabrics.IB_HDR, nodes, batch_size=512, **kw
    )
    res = scaling_curve(Models.GPT3_175B, Nodes.DGX_A100, Fabrics.IB_HDR, nodes, 512, **kw)
    x, y = _line(fig.axes[0], 0)
    np.testing.assert_allclose(x, np.asarray(res.accelerators, float))
    np.testing.assert_allclose(y, res.si("tokens_per_second"))
    xi, yi = _line(fig.axes[0], 1)
    np.testing.assert_allclose(yi, y[0] * xi / xi[0])


def test_serving_lines_are_serving_model():
    batches = (1, 8, 32)
    fig = figures.serving_batch_figure(Models.Llama2_70B, Nodes.DGX_H100, batches, tp_size=8)
    ax_itl, ax_tps = fig.axes
    for i, b in enumerate(batches):
        res = ServingModel().solve(
            Models.Llama2_70B,
            Nodes.DGX_H100,
            batch_size=b,
            prompt_len=512,
            output_len=128,
            tp_size=8,
        )
        assert _line(ax_itl)[1][i] == pytest.approx(res.si("itl") * 1e3)
        assert _line(ax_tps)[1][i] == pytest.approx(res.si("decode_tokens_per_second"))


def test_mtbf_lines_are_reliability_model():
    counts = (64, 16384)
    fig = figures.mtbf_figure(counts, checkpoint_time=60.0)
    ax = fig.axes[0]
    for i, n in enumerate(counts):
        res = ReliabilityModel().solve(n, 30 * 86400.0, checkpoint_time=60.0)
        assert _line(ax, 0)[1][i] == pytest.approx(res.si("fleet_mtbf") / 3600)
        assert _line(ax, 1)[1][i] == pytest.approx(res.si("young_interval") / 3600)
        assert _line(ax, 2)[1][i] == pytest.approx(res.si("daly_interval") / 3600)
    # M = 1/(N λ): 256× the accelerators, 1/256 of the MTBF
    mtbf = _line(ax, 0)[1]
    assert mtbf[0] / mtbf[1] == pytest.approx(256)


def test_carbon_bars_are_energy_times_intensity():
    grids = [Grids.US_AVG, Grids.FRANCE]
    fig = figures.carbon_by_grid_figure(
        grids, accelerator_hours=1e6, power_per_accelerator=400.0, pue=1.1
    )
    bars = fig.axes[0].patches
    for bar, grid in zip(bars, grids):
        # 1e6 h × 0.4 kW × 1.1 = 440 MWh; × kg/kWh = t/MWh
        assert bar.get_width() == pytest.approx(440.0 * grid.carbon_kg_per_kwh, rel=1e-9)
        res = SustainabilityModel().solve(
            accelerator_hours=1e6, power_per_accelerator=400.0, pue=1.1, grid=grid
        )
        assert bar.get_width() == pytest.approx(res.si("operational_carbon") / 1e3)


def test_cost_line_is_economics_model_and_falls_with_utilisation():
    fig = figures.cost_per_hour_figure("H100", utilizations=[0.25, 0.5, 1.0], cloud_price=3.0)
    x, y = _line(fig.axes[0], 0)
    for xi, yi in zip(x, y):
        res = EconomicsModel().solve(accelerator="H100", accelerators=1024, utilization=xi)
        assert yi == pytest.approx(res.si("tco_per_accelerator_hour"))
    assert y[0] > y[1] > y[2]
    assert _line(fig.axes[0], 1)[1][0] == pytest.approx(3.0)


# ---------------------------------------------------------------------------------------
# Legible in print, no label over another
# ---------------------------------------------------------------------------------------


def _book_figures():
    """Each figure as a chapter draws it (smaller sweeps where the data do not matter)."""
    llama70b = Models.Llama2_70B
    return {
        "roofline": figures.roofline_figure(
            [Hardware.H100, Hardware.A100_80GB],
            points=figures.operator_points(Models.Llama3_8B, Hardware.H100),
        ),
        "memory": figures.memory_breakdown_figure(
            llama70b, Hardware.H100, dp_size=64, seq_len=4096, recompute=("none", "full")
        ),
        "bubble": figures.pipeline_bubble_figure((2, 4, 8, 16)),
        "serving": figures.serving_batch_figure(
            llama70b, Nodes.DGX_H100, (1, 8, 64, 256), tp_size=8
        ),
        "mtbf": figures.mtbf_figure((8, 512, 16384)),
        "cost": figures.cost_per_hour_figure(
            "H100", utilizations=[0.25, 0.5, 1.0], cloud_price=3.0
        ),
    }


@pytest.fixture(scope="module")
def drawn():
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    out = _book_figures()
    for fig in out.values():
        FigureCanvasAgg(fig).draw()
    return out


def _texts(fig):
    from matplotlib.text import Text

    return [t for t in fig.findobj(Text) if t.get_visible() and t.get_text().strip()]


def test_figure_text_is_at_least_8_pt_when_printed(drawn):
    # A figure no wider than the printed column prints at its own size; a wider one is
    # shrunk to the column, and its type with it.
    for name, fig in drawn.items():
        scale = min(1.0, figures.PRINT_WIDTH_IN / fig.get_figwidth())
        small = [
            (t.get_text(), t.get_fontsize())
            for t in _texts(fig)
            if t.get_fontsize() * scale < figures.MIN_TEXT_PT
        ]
        assert not small, f"{name}: {small[:5]}"
        assert figures.MIN_TEXT_PT >= 8.0


def _overlaps(texts, renderer):
    boxes = [(t.get_text(), t.get_window_extent(renderer)) for t in texts]
    return [
        (a, b)
        for i, (a, box_a) in enumerate(boxes)
        for b, box_b in boxes[i + 1 :]
        if box_a.overlaps(box_b)
    ]


def test_no_label_overlaps_another(drawn):
    for name, fig in drawn.items():
        renderer = fig.canvas.get_renderer()
        for ax in fig.axes:
            for axis in (ax.xaxis, ax.yaxis):
                labels = [t for t in axis.get_ticklabels() if t.get_visible() and t.get_text()]
                assert not _overlaps(labels, renderer), f"{name}: tick labels overlap"
            notes = [t for t in ax.texts if t.get_visible()]
            assert not _overlaps(notes, renderer), f"{name}: annotations overlap"


def test_memory_figure_names_the_device_memory_in_its_legend_not_on_the_bars(drawn):
    fig = drawn["memory"]
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    # 81,559 MiB, the memory an H100 reports (the catalog's value), is 79.6 GiB
    assert "device memory (79.6 GiB)" in legend
    assert all("GiB" not in t.get_text() for t in fig.axes[0].texts)
