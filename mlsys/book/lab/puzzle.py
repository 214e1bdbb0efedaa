"""Part 2 of the lab, the parallelism puzzle: memory over every layout and the layouts that fit."""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import numpy as np

from mlsys.book.lab.origins import derived
from mlsys.book.lab.tracks import BUBBLE_TARGET, SOURCES, TRACKS, Track, _clean, track
from mlsys.core.catalog import Fabrics
from mlsys.core.formulas.pipeline import pipeline_bubble_fraction
from mlsys.core.layout import TrainingLayout
from mlsys.core.provenance import ResultOrigin, TextOrigin
from mlsys.core.solvers.memory import MemoryModel
from mlsys.core.solvers.search import ParallelismSearch
from mlsys.core.types import Fleet

__all__ = ["memory_grid", "memory_at", "PUZZLE_NODES", "PUZZLE_BATCH", "puzzle_challenge"]


def _pow2_upto(n: int) -> list[int]:
    return [2**i for i in range(int(math.log2(n)) + 1)]


def _puzzle_axes(t: Track) -> dict[str, list[int]]:
    heads, layers = t.model.heads, t.model.layers
    tps = [d for d in range(1, min(heads, 32) + 1) if heads % d == 0 and d in _pow2_upto(32)]
    pps = [p for p in _pow2_upto(64) if p <= layers]
    return {"tp": tps, "pp": pps, "dp": _pow2_upto(512), "m": _pow2_upto(512)}


@cache
def memory_grid(key: str) -> dict[str, Any]:
    """Memory per device over (DP, TP, PP, m) from :class:`MemoryModel`.

    One sequence per micro-batch, so the global batch is ``dp · m`` samples; Adam, the
    track's precision, ZeRO-1 over the data-parallel group, selective recomputation and
    sequence parallelism (with TP > 1) — the settings of the cloud track's layout.

    Parameters
    ----------
    key : str
        Track key.

    Returns
    -------
    dict
        ``tp``, ``pp``, ``dp``, ``m`` (the axes); ``gb`` — total memory per device in GB
        (10⁹ bytes), flattened in C order over ``(dp, m, tp, pp)``; ``fits`` — the
        same shape, 1 where MemoryModel calls the layout feasible, else 0;
        ``capacity_gb``; ``device``.
    """
    t = track(key)
    axes = _puzzle_axes(t)
    acc = t.node.accelerator
    solver = MemoryModel()
    gb: list[float] = []
    fits: list[int] = []
    for dp in axes["dp"]:
        for m in axes["m"]:
            for tp in axes["tp"]:
                for pp in axes["pp"]:
                    layout = TrainingLayout(
                        tp=tp, pp=pp, dp=dp, microbatch_count=m, zero_stage=1,
                        recompute="selective", sequence_parallel=tp > 1,
                    )  # fmt: skip
                    res = solver.solve(
                        t.model, acc, batch_size=dp * m, precision=t.precision, layout=layout
                    )
                    gb.append(res.si("total") / 1e9)
                    fits.append(1 if res.feasible else 0)
    return {
        **axes,
        "gb": _clean(gb, 4),
        "fits": fits,
        "capacity_gb": acc.memory_bytes / 1e9,
        "device": acc.label,
    }


def memory_at(grid: dict[str, Any], dp: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """The (TP, PP) slice of :func:`memory_grid` at one DP and micro-batch count.

    Parameters
    ----------
    grid : dict
        A :func:`memory_grid` result.
    dp, m : int
        Data-parallel degree and micro-batches (values on the grid's axes).

    Returns
    -------
    (ndarray, ndarray)
        GB per device and feasibility, each of shape ``(len(tp), len(pp))``.
    """
    shape = (len(grid["dp"]), len(grid["m"]), len(grid["tp"]), len(grid["pp"]))
    i, j = grid["dp"].index(dp), grid["m"].index(m)
    gb = np.asarray([np.nan if v is None else v for v in grid["gb"]], dtype=float)
    return gb.reshape(shape)[i, j], np.asarray(grid["fits"], dtype=bool).reshape(shape)[i, j]


PUZZLE_NODES = 64
"""The puzzle's fleet: 64 DGX H100 nodes (512 GPUs)."""
PUZZLE_BATCH = 512
"""The puzzle's global batch: 512 sequences, one per micro-batch."""


@cache
def puzzle_challenge() -> dict[str, Any]:
    """Count the layouts that fit and keep the bubble under 10 % (:class:`ParallelismSearch`).

    The cloud track on :data:`PUZZLE_NODES` DGX H100 nodes over InfiniBand NDR, global
    batch :data:`PUZZLE_BATCH` sequences with one sequence per micro-batch (so
    ``m = batch / dp``), ZeRO-1, selective recomputation, sequence parallelism, no
    interleaving — the settings of :func:`memory_grid`. A layout *solves* the puzzle
    when ParallelismSearch finds it feasible and its bubble
    ``(p − 1)/(m + p − 1)`` is below :data:`BUBBLE_TARGET`; ``strict`` further asks
    MemoryModel (which adds a framework allowance) to agree.

    Returns
    -------
    dict
        ``gpus``, ``batch``, ``candidates`` (one-sequence micro-batch layouts
        enumerated), ``feasible`` (those that fit), ``solutions`` (feasible with
        the bubble under target), ``strict`` (solutions MemoryModel also fits),
        ``layouts`` (records ``dp, tp, pp, m, bubble, tokens_per_s, mfu, gb,
        memory_model_fits``, fastest first), ``best`` (the fastest solution) and
        ``sources`` (the hover origin of each of those numbers; not part of the OJS
        payload).
    """
    t = TRACKS["cloud"]
    grid = memory_grid("cloud")
    fleet = Fleet(node=t.node, count=PUZZLE_NODES, fabric=Fabrics.IB_NDR)
    res = ParallelismSearch().solve(
        t.model, fleet, batch_size=PUZZLE_BATCH, precision=t.precision,
        tp_sizes=grid["tp"], pp_sizes=grid["pp"], zero_stages=(1,),
        recompute=("selective",), sequence_parallel=(True, False), v_stages=(1,),
    )  # fmt: skip
    tb = res.table
    dp, tp, pp, m = (np.asarray(tb[k]) for k in ("dp", "tp", "pp", "microbatch_count"))
    # one row per (dp, tp, pp, m): sequence parallelism on when tp > 1, as in the grid
    sp = np.asarray(tb["sequence_parallel"], dtype=bool)
    one_seq = (dp * m == PUZZLE_BATCH) & (sp == (tp > 1))
    valid = one_seq & (np.asarray(tb["reason"]) != "heads not divisible by tp")
    feasible = valid & np.asarray(tb["feasible"], dtype=bool)
    bubble = np.asarray(pipeline_bubble_fraction(pp, m), dtype=float)
    solved = feasible & (bubble < BUBBLE_TARGET)
    layouts = []
    for i in np.flatnonzero(solved):
        _, fits = memory_at(grid, int(dp[i]), int(m[i]))
        fit = bool(fits[grid["tp"].index(int(tp[i])), grid["pp"].index(int(pp[i]))])
        layouts.append(
            {
                "dp": int(dp[i]),
                "tp": int(tp[i]),
                "pp": int(pp[i]),
                "m": int(m[i]),
                "bubble": float(bubble[i]),
                "tokens_per_s": float(tb["tokens_per_second"][i]),
                "mfu": float(tb["mfu"][i]),
                "gb": float(tb["memory_per_accelerator"][i]) / 1e9,
                "memory_model_fits": fit,
            }
        )
    layouts.sort(key=lambda r: -r["tokens_per_s"])
    # ParallelismSearch keeps no origin of its own: name the search as it was called.
    search = ResultOrigin(
        "ParallelismSearch",
        {"model": t.model, "fleet": fleet, "batch_size": PUZZLE_BATCH, "precision": t.precision,
         "zero_stages": (1,), "recompute": ("selective",)},
    )  # fmt: skip
    puzzle = TextOrigin(
        f"The lab's puzzle (mlsys.book.lab.PUZZLE_NODES, PUZZLE_BATCH): the cloud track on "
        f"{PUZZLE_NODES} DGX H100 nodes ({fleet.total_accelerators:,} GPUs) over InfiniBand "
        f"NDR, a global batch of {PUZZLE_BATCH:,} sequences of {t.model.seq_len:,} tokens, "
        "one sequence per micro-batch"
    )
    sources = {
        "gpus": puzzle,
        "batch": puzzle,
        "candidates": derived(
            "Layouts with one-sequence micro-batches (TP dividing the heads)", search
        ),
        "feasible": derived("Layouts of those that fit in HBM", search),
        "solutions": derived(
            "Layouts that fit with a bubble (p − 1)/(m + p − 1) under "
            f"{BUBBLE_TARGET:.0%} ({SOURCES['BUBBLE_TARGET']})",
            search,
        ),
        "strict": derived(
            "Solutions that MemoryModel (with its framework allowance) also fits", search
        ),
        "best": derived("The fastest solution of the puzzle", search),
    }
    return {
        "gpus": fleet.total_accelerators,
        "batch": PUZZLE_BATCH,
        "candidates": int(valid.sum()),
        "feasible": int(feasible.sum()),
        "solutions": len(layouts),
        "strict": sum(1 for r in layouts if r["memory_model_fits"]),
        "layouts": layouts,
        "best": layouts[0] if layouts else None,
        "sources": sources,
    }
