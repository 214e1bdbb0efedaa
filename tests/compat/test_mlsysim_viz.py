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
