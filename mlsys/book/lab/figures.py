"""Static matplotlib figures of the lab: the PDF's version of its interactive cells.

matplotlib is imported when a figure is drawn, never when the module is imported.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlsys.book.figures import MIN_TEXT_PT, PRINT_WIDTH_IN, _legible
from mlsys.book.lab.audit import sync_grid
from mlsys.book.lab.placement import layout_map
from mlsys.book.lab.puzzle import PUZZLE_BATCH, memory_at, memory_grid
from mlsys.book.lab.scaling import scaling_data
from mlsys.book.lab.schedules import _schedule_ops, pipeline_schedule, schedule_idle_fraction
from mlsys.book.lab.tracks import STRAGGLER_SLOWDOWN, TRACKS, track

__all__ = [
    "scaling_lab_figure",
    "memory_heatmap_figure",
    "schedule_figure",
    "layout_map_figure",
    "sync_figure",
]


def _figure(width: float = PRINT_WIDTH_IN, height: float = 4.0, ncols: int = 1) -> tuple[Any, Any]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    axes = fig.subplots(1, ncols)
    return fig, axes


def scaling_lab_figure(key: str = "cloud") -> Any:
    """Samples/s against devices on each of the track's links, with the ideal line.

    The first device count whose marginal speed-up falls below :data:`WALL_THRESHOLD`
    is circled.

    Parameters
    ----------
    key : str
        Track key.

    Returns
    -------
    matplotlib.figure.Figure
        One Axes; for each link a modelled line then its ideal (dashed) line.
    """
    sd = scaling_data(key)
    x = np.asarray(sd["devices"], dtype=float)
    fig, ax = _figure()
    for d in sd["fabrics"].values():
        y = np.asarray(d["samples_per_s"], dtype=float)
        (line,) = ax.plot(x, y, marker="o", ms=3, label=d["label"])
        ax.plot(x, d["ideal"], ls="--", lw=0.8, color=line.get_color())
        if d["wall"] is not None:
            i = sd["devices"].index(d["wall"])
            ax.plot([x[i]], [y[i]], "o", ms=11, mfc="none", mec=line.get_color())
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("Devices")
    ax.set_ylabel(f"Samples/s (one {track(key).sample})")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=MIN_TEXT_PT + 0.5, title="dashed: ideal; circle: marginal < 0.5×")
    return _legible(fig)


def memory_heatmap_figure(key: str = "cloud", dp: int = 16, m: int = 32) -> Any:
    """Memory per device over (TP, PP) at one DP and micro-batch count; X over the infeasible.

    Parameters
    ----------
    key : str
        Track key.
    dp : int
        Data-parallel degree (a value on the grid's ``dp`` axis).
    m : int
        Micro-batch count (a value on the grid's ``m`` axis).

    Returns
    -------
    matplotlib.figure.Figure
        One Axes with the image (GB, rows TP, columns PP); cells MemoryModel calls
        infeasible carry an "X" text.
    """
    grid = memory_grid(key)
    gb, fits = memory_at(grid, dp, m)
    fig, ax = _figure(PRINT_WIDTH_IN, 3.6)
    from matplotlib.colors import LogNorm

    im = ax.imshow(gb, cmap="viridis", norm=LogNorm(), aspect="auto", origin="lower")
    for i in range(gb.shape[0]):
        for j in range(gb.shape[1]):
            if fits[i, j]:
                ax.text(j, i, f"{gb[i, j]:.3g}", ha="center", va="center", fontsize=MIN_TEXT_PT,
                        color="white")  # fmt: skip
            else:
                ax.text(j, i, "X", ha="center", va="center", fontsize=11,
                        fontweight="bold", color="red")  # fmt: skip
    ax.set_xticks(range(len(grid["pp"])), [str(v) for v in grid["pp"]])
    ax.set_yticks(range(len(grid["tp"])), [str(v) for v in grid["tp"]])
    ax.set_xlabel("Pipeline stages (PP)")
    ax.set_ylabel("Tensor-parallel size (TP)")
    ax.set_title(f"GB per device (limit {grid['capacity_gb']:.3g} GB; X: does not fit)",
                 fontsize=MIN_TEXT_PT + 0.5)  # fmt: skip
    fig.colorbar(im, ax=ax, label="GB")
    return _legible(fig)


def schedule_figure(pp_size: int = 4, microbatch_count: int = 8, schedule: str = "1f1b") -> Any:
    """A pipeline schedule as a Gantt chart: forward (light) and backward (dark) slots.

    Parameters
    ----------
    pp_size : int
        Pipeline stages ``p``.
    microbatch_count : int
        Micro-batches ``m``.
    schedule : {"1f1b", "gpipe"}
        Schedule.

    Returns
    -------
    matplotlib.figure.Figure
        One Axes; one bar per operation (``broken_barh``), stage 0 on top.
    """
    grid = pipeline_schedule(pp_size, microbatch_count, schedule)
    fig, ax = _figure(PRINT_WIDTH_IN, 0.5 + 0.4 * pp_size)
    for op in _schedule_ops(grid):
        s, start, mb, kind = op
        width = 1 if kind == 0 else 2
        colour = "#9ecae1" if kind == 0 else "#3182bd"
        ax.broken_barh([(start, width)], (s - 0.4, 0.8), facecolors=colour, edgecolor="white")
        ax.text(start + width / 2, s, str(mb + 1), ha="center", va="center", fontsize=MIN_TEXT_PT)
    ax.set_ylim(pp_size - 0.5, -0.5)
    ax.set_xlim(0, len(grid[0]))
    ax.set_yticks(range(pp_size), [f"stage {s}" for s in range(pp_size)])
    idle = schedule_idle_fraction(grid)
    ax.set_xlabel(f"Time slot (forward 1, backward 2); idle share {100 * idle:.1f}%")
    return _legible(fig)


def layout_map_figure(dp_size: int = 16, tp_size: int = 8, pp_size: int = 4) -> Any:
    """The cloud track's 3D layout: stages × replicas, coloured by pod, labelled by node.

    Parameters
    ----------
    dp_size : int
        Data-parallel degree (replicas).
    tp_size : int
        Tensor-parallel degree (GPUs per TP group).
    pp_size : int
        Pipeline-parallel degree (stages).

    Returns
    -------
    matplotlib.figure.Figure
        One Axes with an RGBA image (rows stages, columns replicas): one colour per pod,
        alternate racks lighter; node labels when there are at most 128 blocks.
    """
    from matplotlib import colormaps

    t = TRACKS["cloud"]
    blocks = layout_map(dp_size, tp_size, pp_size, t.model.layers, PUZZLE_BATCH)
    palette = colormaps["tab10"]
    image = np.ones((pp_size, dp_size, 4))
    for b in blocks:
        rgba = list(palette(b["pod"] % 10))
        rgba[3] = 1.0 if b["rack"] % 2 == 0 else 0.55  # alternate racks lighter
        image[b["stage"], b["replica"]] = rgba
    fig, ax = _figure(PRINT_WIDTH_IN, 1.0 + 0.45 * pp_size)
    ax.imshow(image, aspect="auto")
    if dp_size * pp_size <= 128:
        for b in blocks:
            ax.text(b["replica"], b["stage"], f"n{b['node']}", ha="center", va="center",
                    fontsize=MIN_TEXT_PT)  # fmt: skip
    ticks = [f"layers {b['layer_start']}–{b['layer_end'] - 1}" for b in blocks[::dp_size]]
    ax.set_yticks(range(pp_size), ticks)
    ax.set_xlabel(f"Data-parallel replica (each a TP group of {tp_size} GPUs; label: node)")
    ax.set_title("Colour: pod; lighter: alternate racks", fontsize=MIN_TEXT_PT + 0.5)
    return _legible(fig)


def sync_figure(key: str = "cloud") -> Any:
    """Samples/s of synchronous and asynchronous SGD against the straggler fraction.

    Parameters
    ----------
    key : str
        Track key.

    Returns
    -------
    matplotlib.figure.Figure
        One Axes; line 0 synchronous, line 1 asynchronous (samples/s).
    """
    sg = sync_grid(key)
    x = 100 * np.asarray(sg["fractions"])
    fig, ax = _figure(PRINT_WIDTH_IN, 3.6)
    ax.plot(x, sg["sync"], marker="o", ms=3, label="synchronous (staleness 0)")
    ax.plot(x, sg["async"], marker="s", ms=3,
            label=f"asynchronous (staleness {sg['async_staleness']:.0f} updates)")  # fmt: skip
    ax.set_xlabel(f"Worker-steps that straggle ({STRAGGLER_SLOWDOWN:g}× slower), %")
    ax.set_ylabel("Samples/s")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=MIN_TEXT_PT + 0.5)
    return _legible(fig)
