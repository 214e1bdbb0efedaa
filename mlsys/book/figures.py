"""Figures for the chapters of the mlsys book, drawn from the solvers' own numbers.

Each function computes its data with mlsys (never from a typed table), draws it with
matplotlib and returns the :class:`matplotlib.figure.Figure`. matplotlib is imported
inside the functions (it is the optional ``[plot]`` extra) and no function touches
pyplot's global state: figures are built with :class:`~matplotlib.figure.Figure`
directly, so a chapter cell that ends with the returned figure displays it once, and
a test can read the plotted data back from ``fig.axes``.

Conventions: throughputs are plotted in TFLOP/s or tokens per second, memory in GB
(10⁹ bytes), times in the unit named on the axis label; the data of every line equals
the solver's SI float divided by that unit's factor.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

__all__ = [
    "operator_points",
    "roofline_figure",
    "memory_breakdown_figure",
    "pipeline_bubble_figure",
    "scaling_figure",
    "serving_batch_figure",
    "mtbf_figure",
    "carbon_by_grid_figure",
    "cost_per_hour_figure",
]

_TERA = 1e12
_GB = 1e9
_RECOMPUTE_LABEL = {
    "none": "no recomputation",
    "selective": "selective recomputation",
    "full": "full recomputation",
}
_MEMORY_PARTS = ("weights", "gradients", "optimizer_state", "activations", "framework_overhead")


#: Width of the printed book's text column, inches: a figure no wider prints at its own
#: size, so its type sizes are the printed ones.
PRINT_WIDTH_IN = 6.0
#: The smallest type a figure prints (points), legible on paper; the text of the page is 10.
MIN_TEXT_PT = 8.0


def _figure(width: float = PRINT_WIDTH_IN, height: float = 3.8) -> tuple[Any, Any]:
    """A Figure and one Axes, outside pyplot's global figure manager."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.add_subplot()


def _legible(fig: Any) -> Any:
    """``fig`` with no text smaller than :data:`MIN_TEXT_PT` once printed.

    A figure wider than :data:`PRINT_WIDTH_IN` is shrunk to the column when printed, and
    its type with it: the floor is raised by the same factor.
    """
    from matplotlib.text import Text

    floor = MIN_TEXT_PT * max(1.0, fig.get_figwidth() / PRINT_WIDTH_IN)
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if tick.label1.get_fontsize() < floor:
                    axis.set_tick_params(which="both", labelsize=floor)
                    break
    for text in fig.findobj(Text):
        if text.get_fontsize() < floor:
            text.set_fontsize(floor)
    return fig


def _plain_log2(ax: Any, axis: str = "x") -> None:
    """A base-2 log axis labelled 8, 64, 512 rather than 2³, 2⁶, 2⁹."""
    from matplotlib.ticker import FuncFormatter

    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}"))


def _registry_entry(registry_name: str, value: Any) -> Any:
    """A catalog entry given by name, or the object itself."""
    if isinstance(value, str):
        from mlsys.core import catalog

        return getattr(catalog, registry_name).get(value)
    return value


def operator_points(
    model: Any,
    hardware: Any,
    *,
    batch_size: int = 1,
    seq_len: int | None = None,
    phase: str = "decode",
    precision: str = "bf16",
    operators: Sequence[str] = ("qkv_proj", "attention_scores", "mlp_up", "lm_head"),
) -> dict[str, tuple[float, float]]:
    """Arithmetic intensity and achieved FLOP/s of a model's operators (for a roofline).

    Parameters
    ----------
    model : TransformerWorkload or str
        The network (or its catalog name).
    hardware : Accelerator or str
        The device (or its catalog name).
    batch_size : int
        Sequences (samples) per step. As for
        :meth:`mlsys.core.solvers.roofline.SingleNodeModel.solve`.
    seq_len : int, optional
        Tokens per sequence; default the model's ``seq_len``. As for
        :meth:`mlsys.core.solvers.roofline.SingleNodeModel.solve`.
    phase : {"decode", "prefill", "training"}
        What one step is (default ``"decode"`` here). As for
        :meth:`mlsys.core.solvers.roofline.SingleNodeModel.solve`.
    precision : str
        Precision of weights, activations and math (``"bf16"``, ``"fp8"`` ...). As for
        :meth:`mlsys.core.solvers.roofline.SingleNodeModel.solve`.
    operators : sequence of str
        Operator names of the result's ``operators`` table to keep.

    Returns
    -------
    dict of str to (float, float)
        ``"<operator> (<phase>, b=<batch>)"`` → (intensity in FLOP/byte, achieved FLOP/s),
        where achieved = the operator's FLOPs over its roofline time.
    """
    from mlsys.core.solvers.roofline import SingleNodeModel

    res = SingleNodeModel().solve(
        _registry_entry("Models", model),
        _registry_entry("Hardware", hardware),
        batch_size=batch_size,
        seq_len=seq_len,
        phase=phase,
        precision=precision,
    )
    table = res.operators
    out: dict[str, tuple[float, float]] = {}
    for name in operators:
        op = table[name]
        if op["time"] > 0 and op["bytes"] > 0:
            out[f"{name} ({phase}, b={batch_size})"] = (
                op["intensity"],
                op["flops"] / op["time"],
            )
    return out


def roofline_figure(
    accelerators: Iterable[Any],
    *,
    precision: str = "bf16",
    points: Mapping[str, tuple[float, float]] | None = None,
    intensity_range: tuple[float, float] = (0.1, 1e4),
    samples: int = 200,
) -> Any:
    """Rooflines of several accelerators, with operator points.

    Each line is ``min(peak, I × bandwidth)`` (Williams, Waterman & Patterson 2009) over
    a log-spaced range of arithmetic intensity ``I``, in TFLOP/s.

    Parameters
    ----------
    accelerators : iterable of Accelerator or str
        Devices to draw (catalog names accepted).
    precision : str
        Precision of the peak FLOP/s.
    points : mapping of str to (float, float), optional
        Label → (intensity in FLOP/byte, achieved FLOP/s), e.g. from
        :func:`operator_points`; drawn as markers.
    intensity_range : (float, float)
        Smallest and largest intensity on the x axis, FLOP/byte.
    samples : int
        Points per line.

    Returns
    -------
    matplotlib.figure.Figure
        One Axes; line ``i`` is accelerator ``i`` (label = its name), x in FLOP/byte,
        y in TFLOP/s.
    """
    from mlsys.core.formulas.roofline import attainable_flops

    fig, ax = _figure(PRINT_WIDTH_IN, 3.6)
    x = np.logspace(np.log10(intensity_range[0]), np.log10(intensity_range[1]), samples)
    for acc in accelerators:
        acc = _registry_entry("Hardware", acc)
        y = attainable_flops(acc.peak_flops_s(precision), acc.memory_bandwidth_Bps, x)
        ax.plot(x, np.asarray(y) / _TERA, label=acc.label)
    markers = "osD^vP*X"
    for i, (label, (intensity, achieved)) in enumerate((points or {}).items()):
        ax.plot(
            [intensity],
            [achieved / _TERA],
            marker=markers[i % len(markers)],
            color="black",
            markerfacecolor="none" if i % 2 else "black",
            linestyle="none",
            label=label,
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("Arithmetic intensity (FLOP/byte)")
    ax.set_ylabel(f"Attainable {precision} throughput (TFLOP/s)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=MIN_TEXT_PT + 0.5, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return _legible(fig)


def memory_breakdown_figure(
    model: Any,
    hardware: Any,
    *,
    dp_size: int,
    batch_size: int | None = None,
    seq_len: int | None = None,
    recompute: Sequence[str] = ("none", "full"),
    zero_stages: Sequence[int] = (0, 1, 2, 3),
    ylim_factor: float = 4.0,
    **options: Any,
) -> Any:
    """Stacked bars of training memory per accelerator under ZeRO stages and recompute.

    Bars come from :class:`mlsys.core.solvers.memory.MemoryModel`, one per
    (recompute, ZeRO stage) pair, stacked as weights, gradients, optimizer state,
    activations and framework overhead, in GB; a horizontal line marks the device
    memory.

    Parameters
    ----------
    model : TransformerWorkload or str
        The network.
    hardware : Accelerator or str
        The device.
    dp_size : int
        Data-parallel replicas that ZeRO partitions over.
    batch_size : int, optional
        Global batch in sequences, as for ``MemoryModel.solve`` (default ``dp_size``:
        one sequence per replica).
    seq_len : int, optional
        Sequence length (default: the model's).
    recompute : sequence of str
        Activation-recomputation policies to show.
    zero_stages : sequence of int
        ZeRO stages to show.
    ylim_factor : float
        The linear y axis ends at this multiple of the device memory; taller bars are
        cut there and labelled with their total (GB).
    **options
        Further keywords of ``MemoryModel.solve`` (``tp_size``, ``pp_size`` ...).

    Returns
    -------
    matplotlib.figure.Figure
        One Axes; the bar containers (``ax.containers``) are the parts in the order
        above, each with one bar per (recompute, stage), heights in GB.
    """
    from mlsys.core.fmt import fmt
    from mlsys.core.solvers.memory import MemoryModel
    from mlsys.core.units import Q_

    model = _registry_entry("Models", model)
    hardware = _registry_entry("Hardware", hardware)
    solver = MemoryModel()
    batch_size = dp_size if batch_size is None else batch_size
    labels: list[str] = []
    parts = {p: [] for p in _MEMORY_PARTS}
    capacity = 0.0
    for policy in recompute:
        for stage in zero_stages:
            res = solver.solve(
                model,
                hardware,
                batch_size=batch_size,
                seq_len=seq_len,
                dp_size=dp_size,
                zero_stage=stage,
                recompute=policy,
                **options,
            )
            labels.append(f"ZeRO-{stage}, {policy}")
            for p in _MEMORY_PARTS:
                parts[p].append(res.si(p) / _GB)
            capacity = res.si("capacity")
    fig, ax = _figure(PRINT_WIDTH_IN, 4.0)
    x = np.arange(len(labels))
    bottom = np.zeros(len(labels))
    for p in _MEMORY_PARTS:
        heights = np.array(parts[p])
        ax.bar(x, heights, bottom=bottom, label=p.replace("_", " "))
        bottom += heights
    # Linear axis cut at a few times the device memory: what matters is fit or not, and a
    # log axis would misstate the stacked parts. Bars above the cut carry their total.
    top = ylim_factor * capacity / _GB
    ax.set_ylim(0, top)
    for xi, total in zip(x, bottom, strict=True):
        clipped = total > top
        ax.annotate(
            # the display policy of the chapter's text: 1.77 TB, 952 GB
            str(fmt(Q_(total * _GB, "B"), digits=3)) + (" ↑" if clipped else ""),
            (xi, min(total, top)),
            textcoords="offset points",
            xytext=(0, -4 if clipped else 3),
            ha="center",
            va="top" if clipped else "bottom",
            rotation=90,
            fontsize=MIN_TEXT_PT,
            color="white" if clipped else "black",
        )
    # named in the legend, not on the bars: a device's memory is a binary size (GiB)
    ax.axhline(
        capacity / _GB,
        color="black",
        linestyle="--",
        linewidth=1,
        label=f"device memory ({fmt(Q_(capacity, 'B'), 'GiB', digits=3)})",
    )
    ax.set_xticks(x, [str(stage) for _ in recompute for stage in zero_stages])
    fig.supxlabel("ZeRO stage, under each recomputation policy", fontsize=MIN_TEXT_PT + 1)
    ax.tick_params(axis="x", labelsize=MIN_TEXT_PT)
    # one group label per recomputation policy, under the stage labels
    n = len(zero_stages)
    groups = ax.secondary_xaxis("bottom")
    groups.set_xticks(
        [i * n + (n - 1) / 2 for i in range(len(recompute))],
        [f"\n{_RECOMPUTE_LABEL.get(policy, policy)}" for policy in recompute],
    )
    groups.tick_params(length=0, labelsize=MIN_TEXT_PT + 0.5)
    for i in range(1, len(recompute)):
        ax.axvline(i * n - 0.5, color="grey", linewidth=0.5)
    ax.set_ylabel("Memory per accelerator (GB)")
    fig.legend(loc="outside upper center", ncol=3, fontsize=MIN_TEXT_PT + 0.5)
    return _legible(fig)


def pipeline_bubble_figure(
    pp_sizes: Sequence[int] = (2, 4, 8, 16),
    microbatch_counts: Sequence[int] | None = None,
    *,
    v_stages: int = 1,
) -> Any:
    """Pipeline bubble fraction against micro-batches, one line per stage count.

    Uses :func:`mlsys.core.formulas.pipeline.pipeline_bubble_fraction` (GPipe / 1F1B:
    ``(p − 1)/(m + p − 1)`` of the total step; interleaved with ``v_stages`` chunks).

    Parameters
    ----------
    pp_sizes : sequence of int
        Pipeline stages ``p``.
    microbatch_counts : sequence of int, optional
        Micro-batches ``m`` on the x axis (default 1 to 64).
    v_stages : int
        Model chunks per device (1: no interleaving).

    Returns
    -------
    matplotlib.figure.Figure
        One Axes; line ``i`` is ``pp_sizes[i]``, y the bubble as a fraction of the step.
    """
    from mlsys.core.formulas.pipeline import pipeline_bubble_fraction

    m = np.arange(1, 65) if microbatch_counts is None else np.asarray(microbatch_counts)
    schedule = "interleaved" if v_stages > 1 else "1f1b"
    fig, ax = _figure()
    for p in pp_sizes:
        y = pipeline_bubble_fraction(p, m, v_stages=v_stages, schedule=schedule)
        ax.plot(m, y, label=f"p = {p}")
    ax.set_xscale("log", base=2)
    _plain_log2(ax)
    ax.set_xlabel("Micro-batches per step, m")
    ax.set_ylabel("Bubble (fraction of step time)")
    ax.set_ylim(0, 1)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=MIN_TEXT_PT + 0.5)
    return _legible(fig)


def scaling_figure(
    model: Any,
    node: Any,
    fabric: Any,
    nodes: Sequence[int],
    *,
    batch_size: int,
    **layout: Any,
) -> Any:
    """Strong scaling: throughput against fleet size, with the ideal line.

    Data from :func:`mlsys.core.solvers.scaling.scaling_curve` (the same global batch on
    fleets of ``nodes`` nodes).

    Parameters
    ----------
    model : TransformerWorkload or str
        The network.
    node : Node or str
        Node type.
    fabric : Fabric or str
        Scale-out fabric.
    nodes : sequence of int
        Fleet sizes in nodes, increasing.
    batch_size : int
        Global batch in sequences.
    **layout
        Further keywords of ``scaling_curve`` (``tp_size``, ``pp_size``, ``zero_stage``...).

    Returns
    -------
    matplotlib.figure.Figure
        One Axes; line 0 is the model's tokens per second against accelerators,
        line 1 linear scaling from the smallest feasible fleet.
    """
    from mlsys.core.solvers.scaling import scaling_curve

    res = scaling_curve(
        _registry_entry("Models", model),
        _registry_entry("Nodes", node),
        _registry_entry("Fabrics", fabric),
        nodes,
        batch_size,
        **layout,
    )
    n = np.asarray(res.accelerators, dtype=float)
    tps = np.asarray(res.si("tokens_per_second"), dtype=float)
    ok = np.asarray(res.feasible, dtype=bool) & np.isfinite(tps)
    fig, ax = _figure()
    ax.plot(n[ok], tps[ok], marker="o", label="modelled")
    if ok.any():
        first = int(np.argmax(ok))
        ax.plot(n[ok], tps[first] * n[ok] / n[first], linestyle="--", label="linear")
    ax.set_xscale("log", base=2)
    _plain_log2(ax)
    ax.set_yscale("log")
    ax.set_xlabel("Accelerators")
    ax.set_ylabel("Training throughput (tokens/s)")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=MIN_TEXT_PT + 0.5)
    return _legible(fig)


def serving_batch_figure(
    model: Any,
    hardware: Any,
    batch_sizes: Sequence[int] = (1, 2, 4, 8, 16, 32, 64),
    *,
    prompt_len: int = 512,
    output_len: int = 128,
    **options: Any,
) -> Any:
    """Inter-token latency and throughput of a served model against batch size.

    Data from :class:`mlsys.core.solvers.serving.ServingModel`, one solve per batch.

    Parameters
    ----------
    model : TransformerWorkload or str
        The network.
    hardware : Accelerator, Node or str
        Where it is served.
    batch_sizes : sequence of int
        Concurrent sequences.
    prompt_len : int
        Prompt (input) length per request, in tokens.
    output_len : int
        Generated (output) length per request, in tokens.
    **options
        Further keywords of ``ServingModel.solve`` (``tp_size``, ``precision`` ...).

    Returns
    -------
    matplotlib.figure.Figure
        Two Axes: ``axes[0]`` ITL in ms (line 0), ``axes[1]`` decode tokens per second
        (line 0), both against the batch sizes that fit in memory.
    """
    from mlsys.core.solvers.serving import ServingModel

    model = _registry_entry("Models", model)
    if isinstance(hardware, str):
        from mlsys.core import catalog

        hardware = (
            catalog.Nodes.get(hardware)
            if hardware in catalog.Nodes.list()
            else catalog.Hardware.get(hardware)
        )
    solver = ServingModel()
    b_ok, itl, tps = [], [], []
    for b in batch_sizes:
        res = solver.solve(
            model,
            hardware,
            batch_size=b,
            prompt_len=prompt_len,
            output_len=output_len,
            **options,
        )
        if res.feasible:
            b_ok.append(b)
            itl.append(res.si("itl") * 1e3)
            tps.append(res.si("decode_tokens_per_second"))
    from matplotlib.figure import Figure

    fig = Figure(figsize=(PRINT_WIDTH_IN, 3.0), layout="constrained")
    ax_itl, ax_tps = fig.subplots(1, 2)
    ax_itl.plot(b_ok, itl, marker="o")
    ax_itl.set_ylabel("Inter-token latency (ms)")
    ax_tps.plot(b_ok, tps, marker="o", color="C1")
    ax_tps.set_ylabel("Decode throughput (tokens/s)")
    for ax in (ax_itl, ax_tps):
        ax.set_xscale("log", base=2)
        _plain_log2(ax)
        ax.set_xlabel("Batch size (sequences)")
        ax.grid(True, alpha=0.3)
    return _legible(fig)


def mtbf_figure(
    accelerator_counts: Sequence[int] = (8, 64, 512, 1024, 4096, 16384, 65536),
    *,
    checkpoint_time: Any = 60.0,
    job_duration: Any = 30 * 86400.0,
) -> Any:
    """Fleet MTBF and the Young/Daly checkpoint interval against fleet size.

    Data from :class:`mlsys.core.solvers.reliability.ReliabilityModel` with its default
    per-accelerator interruption rates (Llama 3's 54-day snapshot).

    Parameters
    ----------
    accelerator_counts : sequence of int
        Accelerators the job spans.
    checkpoint_time : Quantity [time] or float [s]
        Blocking time of one checkpoint.
    job_duration : Quantity [time] or float [s]
        Failure-free compute time of the job.

    Returns
    -------
    matplotlib.figure.Figure
        One Axes, hours against accelerators: line 0 fleet MTBF, line 1 Young's
        interval, line 2 Daly's interval.
    """
    from mlsys.core.solvers.reliability import ReliabilityModel

    solver = ReliabilityModel()
    rows = [
        solver.solve(n, job_duration, checkpoint_time=checkpoint_time) for n in accelerator_counts
    ]
    n = np.asarray(accelerator_counts, dtype=float)
    fig, ax = _figure()
    for field, label, style in (
        ("fleet_mtbf", "fleet MTBF", "-"),
        ("young_interval", "Young interval", "--"),
        ("daly_interval", "Daly interval", ":"),
    ):
        ax.plot(n, [r.si(field) / 3600.0 for r in rows], linestyle=style, marker="o", label=label)
    ax.set_xscale("log", base=2)
    _plain_log2(ax)
    ax.set_yscale("log")
    ax.set_xlabel("Accelerators in the job")
    ax.set_ylabel("Hours")
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=MIN_TEXT_PT + 0.5)
    return _legible(fig)


def carbon_by_grid_figure(
    grids: Sequence[Any],
    *,
    accelerator_hours: Any,
    power_per_accelerator: Any,
    pue: float = 1.1,
) -> Any:
    """Operational carbon of one training run on different grids (horizontal bars).

    Data from :class:`mlsys.core.solvers.sustainability.SustainabilityModel`: the same
    energy, priced at each grid's carbon intensity.

    Parameters
    ----------
    grids : sequence of GridProfile or str
        Grids (catalog names accepted).
    accelerator_hours : Quantity [time] or float [h]
        Accelerator-hours of the run.
    power_per_accelerator : Quantity [W] or float [W]
        Average power drawn per accelerator.
    pue : float
        Power usage effectiveness of the facility.

    Returns
    -------
    matplotlib.figure.Figure
        One Axes; bar ``i`` is grid ``i``, its width the run's operational carbon in
        tCO2e.
    """
    from mlsys.core.solvers.sustainability import SustainabilityModel
    from mlsys.core.units import Q_

    hours = accelerator_hours if hasattr(accelerator_hours, "units") else Q_(accelerator_hours, "h")
    solver = SustainabilityModel()
    labels, tonnes = [], []
    for grid in grids:
        grid = _registry_entry("Grids", grid)
        res = solver.solve(
            accelerator_hours=hours,
            power_per_accelerator=power_per_accelerator,
            pue=pue,
            grid=grid,
        )
        labels.append(grid.label.split(" (")[0])  # the place, without the source note
        tonnes.append(res.si("operational_carbon") / 1e3)
    fig, ax = _figure(PRINT_WIDTH_IN, 0.3 * len(labels) + 1.0)
    y = np.arange(len(labels))
    ax.barh(y, tonnes, color="C2")
    ax.set_yticks(y, labels, fontsize=MIN_TEXT_PT + 0.5)
    ax.invert_yaxis()
    ax.set_xlabel("Operational carbon (t CO₂e)")
    ax.grid(True, axis="x", alpha=0.3)
    return _legible(fig)


def cost_per_hour_figure(
    accelerator: Any,
    *,
    accelerators: int = 1024,
    utilizations: Sequence[float] | None = None,
    cloud_price: Any = None,
    **options: Any,
) -> Any:
    """Owned cost per useful accelerator-hour against utilisation, with a cloud rate.

    Data from :class:`mlsys.core.solvers.economics.EconomicsModel`: capital and energy
    divided by the hours the fleet does paid work, which grows as ``1/utilisation``.

    Parameters
    ----------
    accelerator : Accelerator, str or Fleet
        The device (priced alone, ``accelerators`` of them), or a whole fleet (its
        nodes, host power and network priced).
    accelerators : int
        Fleet size when ``accelerator`` is a device.
    utilizations : sequence of float, optional
        Busy fractions on the x axis (default 0.1 to 1).
    cloud_price : Quantity [USD/h] or float, optional
        A rental price per accelerator-hour, drawn as a horizontal line.
    **options
        Further keywords of ``EconomicsModel.solve`` (``accelerator_price``,
        ``lifetime``, ``electricity_price`` ...).

    Returns
    -------
    matplotlib.figure.Figure
        One Axes; line 0 is the owned cost in USD per accelerator-hour against
        utilisation (line 1, when given, the cloud price).
    """
    from mlsys.core.solvers.economics import EconomicsModel

    u = np.linspace(0.1, 1.0, 10) if utilizations is None else np.asarray(utilizations)
    solver = EconomicsModel()
    if hasattr(accelerator, "node"):  # a Fleet: nodes, host power and network priced
        where = {"fleet": accelerator}
        label = f"owned {accelerator.count} × {accelerator.node.label}"
    else:
        acc = _registry_entry("Hardware", accelerator)
        where = {"accelerator": acc, "accelerators": accelerators}
        label = f"owned {acc.label}"
    cost = [
        solver.solve(**where, utilization=float(x), **options).si("tco_per_accelerator_hour")
        for x in u  # stored in USD/hour
    ]
    fig, ax = _figure()
    ax.plot(u, cost, marker="o", label=label)
    if cloud_price is not None:
        from mlsys.core.units import as_si

        rate = as_si(cloud_price, "USD/h", "cloud_price")
        ax.axhline(rate, color="C3", linestyle="--", label="cloud rate")
    ax.set_xlabel("Utilisation (busy fraction of hours)")
    ax.set_ylabel("Cost per useful accelerator-hour (USD)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=MIN_TEXT_PT + 0.5)
    return _legible(fig)
