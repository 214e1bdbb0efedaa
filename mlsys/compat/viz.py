"""``viz``: the textbook's figure helper, so its plotting cells run on mlsys.

*Machine Learning Systems* (harvard-edge/cs249r_book) draws its matplotlib figures
with ``fig, ax, COLORS, plt = viz.setup_plot()`` and colours them from the book's
palette (``COLORS["BlueLine"]`` ...). This module gives that call and that palette; it
holds no numbers of the book, only its colours and a plain style. matplotlib is the
optional ``plot`` extra (``pip install mlsys[plot]``) and is imported on first use, so
``from mlsys import *`` stays fast and works without it.

Examples
--------
>>> from mlsys import viz
>>> fig, ax, COLORS, plt = viz.setup_plot(figsize=(8, 3.5))
>>> line, = ax.plot([1, 2], [3, 4], color=COLORS["BlueLine"])
>>> plt.close(fig)
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["COLORS", "plot_evaluation_scorecard", "plot_roofline", "set_book_style", "setup_plot"]

COLORS: dict[str, str] = {
    # text, grid and the accent colour
    "primary": "#333333",
    "grid": "#CCCCCC",
    "crimson": "#A51C30",
    # the book's line colours with their light (L) and fill tints, as its TikZ figures use
    "BlueLine": "#006395",
    "BlueL": "#D1E6F3",
    "BlueFill": "#D6EAF8",
    "RedLine": "#CB202D",
    "RedL": "#F5D2D5",
    "RedFill": "#F2D7D5",
    "GreenLine": "#008F45",
    "GreenL": "#D4EFDF",
    "GreenFill": "#D5F5E3",
    "OrangeLine": "#E67817",
    "OrangeL": "#FCE4CC",
    "VioletLine": "#7E317B",
    "VioletL": "#E6D4E5",
    "BrownLine": "#78492A",
    "BrownL": "#E3D3C8",
    "YellowFill": "#FEF9E0",
}
"""The book's figure palette (colour name -> hex)."""


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("the book's figures need matplotlib: pip install 'mlsys[plot]'") from None
    if "MPLBACKEND" not in os.environ:
        matplotlib.use("Agg")  # chapters render to files; no display is needed
    import matplotlib.pyplot as plt

    return plt


def set_book_style() -> None:
    """Apply the book's plain figure style (sans-serif text, light grid, no top/right spines)."""
    plt = _pyplot()
    plt.rcParams.update(
        {
            "font.family": "sans-serif",
            "font.size": 10,
            "text.color": COLORS["primary"],
            "axes.labelcolor": COLORS["primary"],
            "axes.edgecolor": COLORS["primary"],
            "axes.titleweight": "bold",
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "grid.color": COLORS["grid"],
            "grid.linestyle": "--",
            "grid.alpha": 0.6,
            "xtick.color": COLORS["primary"],
            "ytick.color": COLORS["primary"],
        }
    )


def setup_plot(figsize: tuple[float, float] | None = None, **kwargs: Any) -> tuple:
    """A styled figure with one axes, as the book's plotting cells expect.

    Parameters
    ----------
    figsize : tuple of float, optional
        Figure size in inches (matplotlib's default when omitted).
    **kwargs
        Passed to :func:`matplotlib.pyplot.subplots`.

    Returns
    -------
    tuple
        ``(fig, ax, COLORS, plt)``.
    """
    plt = _pyplot()
    set_book_style()
    if figsize is not None:
        kwargs["figsize"] = figsize
    fig, ax = plt.subplots(**kwargs)
    return fig, ax, COLORS, plt


def plot_evaluation_scorecard(evaluation: Any) -> tuple:
    """Demand over supply of a scenario's constrained resources, as horizontal bars.

    One bar per entry of :meth:`~mlsys.compat.scenarios.ScenarioEvaluation.utilization`
    (memory, then latency when the scenario sets an SLA), red above the limit and green
    within it, labelled with the percentage; a dashed vertical line marks the limit
    (1.0). The book's chapters restyle ``ax.patches``, ``ax.lines`` and ``ax.texts``
    afterwards, so the axes hold exactly those bars, that line and those labels.

    Parameters
    ----------
    evaluation : ScenarioEvaluation
        ``Applications.Doorbell.evaluate()``.

    Returns
    -------
    tuple
        ``(fig, ax)``.
    """
    ratios = evaluation.utilization()
    fig, ax, colors, _ = setup_plot(figsize=(8, 4))
    values = list(ratios.values())
    bar_colors = [colors["RedLine"] if r > 1.0 else colors["GreenLine"] for r in values]
    bars = ax.barh(list(ratios), values, color=bar_colors, alpha=0.7, edgecolor="black")
    ax.axvline(1.0, color=colors["primary"], linestyle="--", linewidth=2)
    for bar, ratio, color in zip(bars, values, bar_colors, strict=True):
        y_mid = bar.get_y() + bar.get_height() / 2
        ax.text(ratio + 0.05, y_mid, f"{ratio:.1%}", va="center", fontweight="bold", color=color)
    ax.set_xlim(0, max(max(values) + 0.5, 1.5))  # room for the labels right of the bars
    ax.set_xlabel("Resource utilization (demand / supply)")
    ax.set_title(f"System evaluation: {evaluation.scenario_name}")
    return fig, ax


def _achievable_roofs(profile: Any) -> tuple[float, float]:
    """(FLOP/s, bytes/s) a single-node result's step could reach: the device's peak at
    the solved precision and its memory bandwidth, each times the efficiency solved."""
    from mlsys.core.errors import ParameterError

    origin = getattr(profile, "origin", None)
    if origin is None or "hardware" not in origin.inputs or "ridge_point" not in profile:
        raise ParameterError("profile", type(profile).__name__, "a result of SingleNodeModel.solve")
    hardware = origin.inputs["hardware"]
    acc = getattr(hardware, "accelerator", hardware)
    peak = acc.peak_flops_s(origin.inputs["precision"]) * float(profile.compute_efficiency)
    bandwidth = acc.memory_bandwidth_Bps * float(profile.memory_efficiency)
    return float(peak), float(bandwidth)


def plot_roofline(profile: Any, title: str = "System Roofline Analysis") -> Any:
    """The device's roofline and the step's point on it (the book's ``plot_roofline``).

    The line is ``min(peak, I × bandwidth)`` (Williams, Waterman & Patterson 2009,
    :func:`mlsys.core.formulas.roofline.attainable_flops`) with the achievable peak and
    bandwidth the solve used, over two decades either side of the ridge point; the
    marker is the step's arithmetic intensity at the roof's height there.

    Parameters
    ----------
    profile : SingleNodeResult
        ``SingleNodeModel().solve(...)`` (the compat solver's result).
    title : str
        Axes title.

    Returns
    -------
    matplotlib.figure.Figure
        One axes: line 0 the roofline, line 1 the workload point; x in FLOP/byte, y in
        GFLOP/s, both logarithmic.

    Raises
    ------
    ParameterError
        When ``profile`` is not a single-node result that recorded its hardware.
    """
    import numpy as np

    from mlsys.core.formulas.roofline import attainable_flops

    peak, bandwidth = _achievable_roofs(profile)
    ridge = peak / bandwidth
    intensity = float(profile.arithmetic_intensity.m_as("flop/byte"))
    x = np.logspace(np.log10(ridge / 100), np.log10(ridge * 100), 100)
    fig, ax, colors, _ = setup_plot()
    ax.plot(x, np.asarray(attainable_flops(peak, bandwidth, x)) / 1e9, color=colors["primary"],
            linewidth=2, label="Roofline")  # fmt: skip
    point = float(attainable_flops(peak, bandwidth, intensity)) / 1e9
    ax.plot([intensity], [point], marker="o", markersize=10, linestyle="none",
            color=colors["RedLine"], label=f"Workload (AI={intensity:.1f})")  # fmt: skip
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("Arithmetic Intensity (FLOP/Byte)")
    ax.set_ylabel("Performance (GFLOP/s)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.2)
    ax.legend()
    return fig
