"""Pipeline parallelism on the virtual cluster: a 4-layer MLP trained with GPipe and 1F1B.

Each of ``p`` ranks holds one stage (a contiguous slice of the layers) and runs
``torch.distributed.pipelining``'s ``ScheduleGPipe`` or ``Schedule1F1B`` over ``m``
micro-batches per step. Losses are compared with the same model trained in a single
process, step by step.

**Time per micro-batch is fixed.** Four processes on a laptop's cores compete for the CPU,
so raw compute times would measure the operating system's scheduler, not the pipeline
schedule. Each stage therefore pads its forward pass to ``forward_s`` and its backward
pass to ``backward_s`` (real arithmetic plus a sleep, which uses no CPU), like a GPU
whose kernels take a known time. The timeline — and so the idle time — is then decided
by the schedule and the dependencies between stages, which is what the bubble formula
describes. The idle fraction of a stage is ``1 − busy/makespan``, with ``busy`` the
sum of its padded forward and backward intervals and ``makespan`` the step time between
two barriers; it includes the real send/receive and scheduling overheads, so it sits a
little above the formula.
"""

from __future__ import annotations

import time
from typing import Any

import torch
import torch.distributed as dist
from torch import nn

from mlsys.core.errors import ParameterError
from mlsys.emulate.cluster import RankContext, run_cluster
from mlsys.emulate.provenance import mark_reference

__all__ = [
    "SCHEDULES",
    "pipeline_bubble_fraction",
    "build_mlp",
    "single_process_losses",
    "pipeline_workload",
    "run_pipeline",
    "summarize_pipeline",
]

SCHEDULES: tuple[str, ...] = ("gpipe", "1f1b")
"""Schedules the emulator runs."""


def pipeline_bubble_fraction(pp_size: int, microbatch_count: int) -> float:
    """Share of a GPipe / 1F1B step spent idle: ``(p-1)/(m+p-1)``.

    Delegates to :func:`mlsys.core.formulas.pipeline.pipeline_bubble_fraction` when that
    module is installed; the same closed form otherwise.

    Parameters
    ----------
    pp_size : int
        Pipeline stages ``p``.
    microbatch_count : int
        Micro-batches per step ``m``.

    Returns
    -------
    float
        Fraction of the step (dimensionless).

    References
    ----------
    Huang et al. (2019), "GPipe: efficient training of giant neural networks using
    pipeline parallelism", NeurIPS, Sec. 2.3.

    Examples
    --------
    >>> round(pipeline_bubble_fraction(4, 8), 4)
    0.2727
    """
    try:
        from mlsys.core.formulas.pipeline import pipeline_bubble_fraction as _core
    except ImportError:
        p, m = float(pp_size), float(microbatch_count)
        return (p - 1.0) / (m + p - 1.0)
    return float(_core(pp_size, microbatch_count))


def build_mlp(width: int = 32, layers: int = 4, seed: int = 0) -> nn.Sequential:
    """The model: ``layers`` linear layers of ``width`` features, ReLU between them.

    Parameters
    ----------
    width : int
        Features of every layer.
    layers : int
        Linear layers.
    seed : int
        Initialisation seed (identical model in every process).

    Returns
    -------
    torch.nn.Sequential
        One ``Sequential`` block per layer (linear + ReLU, the last without ReLU).
    """
    torch.manual_seed(seed)
    blocks = []
    for i in range(layers):
        mods: list[nn.Module] = [nn.Linear(width, width)]
        if i < layers - 1:
            mods.append(nn.ReLU())
        blocks.append(nn.Sequential(*mods))
    return nn.Sequential(*blocks)


def _data(batch: int, width: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    gen = torch.Generator().manual_seed(seed + 1)
    return torch.randn(batch, width, generator=gen), torch.randn(batch, width, generator=gen)


def single_process_losses(
    steps: int, batch: int, width: int = 32, layers: int = 4, lr: float = 0.1, seed: int = 0
) -> list[float]:
    """Losses of the same training run in one process (full batch, plain SGD).

    Parameters
    ----------
    steps : int
        Optimizer steps.
    batch : int
        Samples per step (``m`` micro-batches × micro-batch size).
    width, layers : int
        Model shape (see :func:`build_mlp`).
    lr : float
        SGD learning rate.
    seed : int
        Seed of model and data.

    Returns
    -------
    list of float
        Mean-squared-error loss before each step.
    """
    model = build_mlp(width, layers, seed)
    X, Y = _data(batch, width, seed)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    out = []
    for _ in range(steps):
        opt.zero_grad()
        loss = nn.functional.mse_loss(model(X), Y)
        loss.backward()
        opt.step()
        out.append(loss.item())
    return out


class _Clock(torch.autograd.Function):
    """Pads a stage's forward and backward to fixed durations and logs busy intervals."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, stage: _TimedStage, start: float) -> torch.Tensor:
        stage._pad(start, stage.forward_s)
        stage.busy.append(("F", start, time.perf_counter()))
        ctx.stage = stage
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None, None]:
        stage = ctx.stage
        start = time.perf_counter()
        stage._pad(start, stage.backward_s)
        stage.busy.append(("B", start, time.perf_counter()))
        return grad, None, None


class _TimedStage(nn.Module):
    def __init__(self, blocks: nn.Module, forward_s: float, backward_s: float) -> None:
        super().__init__()
        self.blocks = blocks
        self.forward_s = forward_s
        self.backward_s = backward_s
        self.busy: list[tuple[str, float, float]] = []

    @staticmethod
    def _pad(start: float, duration: float) -> None:
        left = start + duration - time.perf_counter()
        if left > 0:
            time.sleep(left)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        start = time.perf_counter()
        return _Clock.apply(self.blocks(x), self, start)


def _normalize_schedule(schedule: str) -> str:
    kind = str(schedule).lower().replace("-", "").replace("_", "")
    if kind not in SCHEDULES:
        raise ParameterError("schedule", schedule, "one of " + ", ".join(SCHEDULES))
    return kind


def pipeline_workload(
    ctx: RankContext,
    schedule: str | tuple[str, ...] = "1f1b",
    microbatches: int = 8,
    microbatch_size: int = 4,
    steps: int = 3,
    width: int = 32,
    layers: int = 4,
    forward_s: float = 0.02,
    backward_s: float = 0.04,
    lr: float = 0.1,
    seed: int = 0,
) -> dict[str, Any]:
    """Train the pipelined MLP for a few steps on this rank's stage.

    Parameters
    ----------
    ctx : RankContext
        The rank's context; the rank is the stage index, the world size is ``p``.
    schedule : {"gpipe", "1f1b"} or tuple of them
        Pipeline schedule(s); several run one after the other, each from a fresh model.
    microbatches : int
        Micro-batches per step ``m``.
    microbatch_size : int
        Samples per micro-batch.
    steps : int
        Optimizer steps.
    width, layers : int
        Model shape; ``layers`` must divide by ``p``.
    forward_s, backward_s : float
        Padded duration of one micro-batch's forward and backward on one stage, seconds.
    lr : float
        SGD learning rate.
    seed : int
        Seed of model and data.

    Returns
    -------
    dict
        Per schedule name: ``stage``, ``losses`` (last stage only, else ``None``),
        ``busy_s`` and ``makespan_s`` per step (seconds), ``idle_fraction`` per step, and
        the ``predicted_bubble``.
    """
    kinds = (schedule,) if isinstance(schedule, str) else tuple(schedule)
    if ctx.world_size and layers % ctx.world_size:
        raise ParameterError("layers", layers, f"a multiple of the {ctx.world_size} stages")
    args = (microbatches, microbatch_size, steps, width, layers, forward_s, backward_s, lr, seed)
    return {_normalize_schedule(k): _train(ctx, _normalize_schedule(k), *args) for k in kinds}


def _train(
    ctx: RankContext,
    kind: str,
    microbatches: int,
    microbatch_size: int,
    steps: int,
    width: int,
    layers: int,
    forward_s: float,
    backward_s: float,
    lr: float,
    seed: int,
) -> dict[str, Any]:
    from torch.distributed.pipelining import PipelineStage, Schedule1F1B, ScheduleGPipe

    p, s = ctx.world_size, ctx.rank
    model = build_mlp(width, layers, seed)
    per = layers // p
    stage_mod = _TimedStage(model[s * per : (s + 1) * per], forward_s, backward_s)
    stage = PipelineStage(stage_mod, s, p, torch.device("cpu"))
    loss_fn = nn.functional.mse_loss
    cls = ScheduleGPipe if kind == "gpipe" else Schedule1F1B
    sched = cls(stage, microbatches, loss_fn=loss_fn)
    opt = torch.optim.SGD(stage_mod.parameters(), lr=lr)
    X, Y = _data(microbatches * microbatch_size, width, seed)
    losses: list[float] = []
    busy, makespan = [], []
    for _ in range(steps):
        opt.zero_grad()
        stage_mod.busy.clear()
        dist.barrier()
        t0 = time.perf_counter()
        if s == 0 and p == 1:
            mb_losses: list[torch.Tensor] = []
            sched.step(X, target=Y, losses=mb_losses)
        elif s == 0:
            sched.step(X)
        elif s == p - 1:
            mb_losses = []
            sched.step(target=Y, losses=mb_losses)
        else:
            sched.step()
        dist.barrier()
        makespan.append(time.perf_counter() - t0)
        busy.append(sum(b - a for _, a, b in stage_mod.busy))
        opt.step()
        if s == p - 1:
            losses.append(float(torch.stack([x.detach() for x in mb_losses]).mean()))
    return {
        "stage": s,
        "schedule": kind,
        "microbatches": microbatches,
        "losses": losses if s == p - 1 else None,
        "busy_s": busy,
        "makespan_s": makespan,
        "idle_fraction": [1.0 - b / t for b, t in zip(busy, makespan, strict=True)],
        "predicted_bubble": pipeline_bubble_fraction(p, microbatches),
    }


def run_pipeline(
    stages: int = 4,
    microbatches: int = 8,
    schedule: str | tuple[str, ...] = "1f1b",
    *,
    microbatch_size: int = 4,
    steps: int = 3,
    width: int = 32,
    layers: int = 4,
    forward_s: float = 0.02,
    backward_s: float = 0.04,
    timeout_s: float = 120.0,
) -> dict[str, Any]:
    """Train the pipelined MLP on a virtual cluster and compare with one process.

    Parameters
    ----------
    stages : int
        Pipeline stages ``p`` (processes).
    microbatches : int
        Micro-batches per step ``m``.
    schedule : {"gpipe", "1f1b"} or tuple of them
        Pipeline schedule(s), run in one cluster one after the other.
    microbatch_size : int
        Samples per micro-batch.
    steps : int
        Optimizer steps.
    width, layers : int
        Model shape.
    forward_s, backward_s : float
        Padded forward / backward time per micro-batch per stage, in seconds.
    timeout_s : float
        Wall-clock limit, in seconds.

    Returns
    -------
    dict
        Per schedule name: ``losses`` (pipeline), ``reference_losses`` (single process),
        ``idle_fraction`` per stage (mean over steps after the first, which includes
        shape inference), ``predicted_bubble``, ``makespan_s`` (mean), and the per-rank
        reports under ``ranks``.
    """
    kinds = (schedule,) if isinstance(schedule, str) else tuple(schedule)
    schedule = tuple(_normalize_schedule(k) for k in kinds)  # fail before spawning
    if layers % stages:
        raise ParameterError("layers", layers, f"a multiple of the {stages} stages")
    if microbatches < 1:
        raise ParameterError("microbatches", microbatches, "an integer >= 1")
    args = (schedule, microbatches, microbatch_size, steps, width, layers, forward_s, backward_s)
    per_rank = run_cluster(pipeline_workload, stages, args, timeout_s=timeout_s)
    return summarize_pipeline(
        per_rank, steps, microbatches * microbatch_size, width, layers, forward_s, backward_s
    )


def _mean(values: Any) -> Any:
    """The mean of a list of numbers; traced numbers keep their origins (no ``float()``)."""
    values = list(values)
    return sum(values) / len(values)


def summarize_pipeline(
    per_rank: list[dict[str, Any]],
    steps: int,
    batch: int,
    width: int,
    layers: int,
    forward_s: float,
    backward_s: float,
) -> dict[str, Any]:
    """Combine the per-rank reports of :func:`pipeline_workload` with the reference run.

    Parameters
    ----------
    per_rank : list of dict
        What :func:`pipeline_workload` returned on each rank (stage).
    steps, batch, width, layers : int
        The run's steps, samples per step and model shape (for the single-process
        reference).
    forward_s, backward_s : float
        Padded times per micro-batch, in seconds.

    Returns
    -------
    dict
        As :func:`run_pipeline`.
    """
    stages = len(per_rank)
    ref = mark_reference(
        single_process_losses(steps, batch, width, layers),
        f"the same {layers}-layer MLP of width {width} trained with plain SGD in one process, "
        f"{steps} steps of {batch} samples",
        "reference_losses",
    )
    warm = slice(1, None) if steps > 1 else slice(None)
    out: dict[str, Any] = {}
    for kind in per_rank[0]:
        reports = [r[kind] for r in per_rank]
        microbatches = reports[0]["microbatches"]
        # Means of Python floats: the measured values' origins (the run, the rank) stay on.
        idle = [_mean(r["idle_fraction"][warm]) for r in reports]
        spans = reports[0]["makespan_s"][warm]
        out[kind] = {
            "schedule": kind,
            "stages": stages,
            "microbatches": microbatches,
            "losses": reports[-1]["losses"],
            "reference_losses": ref,
            "idle_fraction": idle,
            "predicted_bubble": reports[0]["predicted_bubble"],
            "makespan_s": _mean(spans),
            "predicted_makespan_s": (microbatches + stages - 1) * (forward_s + backward_s),
            "ranks": reports,
        }
    return out
