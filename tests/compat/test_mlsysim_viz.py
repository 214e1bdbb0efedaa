"""The book's figure helper: ``fig, ax, COLORS, plt = viz.setup_plot()`` (mlsys.compat.viz)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_setup_plot_returns_the_books_four_values() -> None:
    pytest.importorskip("matplotlib")
    from mlsys import viz

    fig, ax, colors, plt = viz.setup_plot(figsize=(8, 3.5))
    try:
        assert tuple(fig.get_size_inches()) == (8, 3.5)
        assert ax in fig.axes
        # the colour names the book's plotting cells index
        for name in ("BlueLine", "RedLine", "GreenLine", "OrangeLine", "BlueL", "primary"):
            assert colors[name].startswith("#")
        assert colors is viz.COLORS
    finally:
        plt.close(fig)


def test_star_import_does_not_load_matplotlib() -> None:
    # chapters start with `from mlsysim import *`; the figure helper must not slow that
    code = "from mlsys import *; import sys; print('matplotlib' in sys.modules, viz.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "mlsys.compat.viz"]


def test_plot_roofline_draws_the_solves_roofs_and_its_point() -> None:
    pytest.importorskip("matplotlib")
    import warnings

    import numpy as np

    from mlsys import Hardware, Models, plot_roofline
    from mlsys.compat.solvers import SingleNodeModel

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        res = SingleNodeModel().solve(Models.Language.Llama3_8B, Hardware.Cloud.H100)
    fig = plot_roofline(res, title="Llama 3 8B on H100")
    try:
        roof, point = fig.axes[0].lines
        x, y = (np.asarray(v) for v in roof.get_data())
        ridge = res.ridge_point.m_as("flop/byte")
        # two decades either side of the ridge point the solve reports
        assert x[0] == pytest.approx(ridge / 100, rel=1e-9)
        assert x[-1] == pytest.approx(ridge * 100, rel=1e-9)
        # the flat roof: the H100's dense bf16 peak (989.4 TFLOP/s) times the solve's efficiency
        peak_gflops = 989.4e12 * res.compute_efficiency / 1e9
        assert y[-1] == pytest.approx(peak_gflops, rel=1e-3)
        # the slope: bandwidth x intensity, and the ridge is where the two meet
        assert y[0] == pytest.approx(peak_gflops / 100, rel=1e-9)
        ai = res.arithmetic_intensity.m_as("flop/byte")
        px, py = (float(v[0]) for v in point.get_data())
        assert px == pytest.approx(ai, rel=1e-12)
        assert py == pytest.approx(min(peak_gflops, peak_gflops * ai / ridge), rel=1e-9)
        assert fig.axes[0].get_title() == "Llama 3 8B on H100"
    finally:
        import matplotlib.pyplot as plt

        plt.close(fig)


def test_plot_roofline_refuses_other_results() -> None:
    from mlsys import plot_roofline
    from mlsys.core.errors import MlsysError

    with pytest.raises(MlsysError, match="profile"):
        plot_roofline({"latency": 1.0})
