"""Pipeline schedules of the lab: bubble tables and the slot-by-slot GPipe and 1F1B timelines."""

from __future__ import annotations

from typing import Any

import numpy as np

from mlsys.core.formulas.pipeline import pipeline_bubble_fraction

__all__ = ["bubble_table", "pipeline_schedule", "schedule_idle_fraction"]


def bubble_table(pp_values: Any, m_values: Any) -> list[list[float]]:
    """Bubble share of the step for each (p, m): ``(p − 1)/(m + p − 1)``.

    From :func:`mlsys.core.formulas.pipeline.pipeline_bubble_fraction` (1F1B, GPipe).

    Parameters
    ----------
    pp_values, m_values : sequence of int
        Pipeline stages and micro-batch counts.

    Returns
    -------
    list of list of float
        ``table[i][j]`` for ``pp_values[i]``, ``m_values[j]``.
    """
    p = np.asarray(pp_values, dtype=float)[:, None]
    m = np.asarray(m_values, dtype=float)[None, :]
    return np.asarray(pipeline_bubble_fraction(p, m), dtype=float).tolist()


def pipeline_schedule(pp_size: int, microbatch_count: int, schedule: str = "1f1b") -> list[list]:
    """The time-slot grid of a pipeline schedule: which stage runs what, when.

    A forward pass takes one slot and a backward pass two (backward ≈ 2 × forward
    FLOPs); every stage has the same work. Each stage runs its operations in schedule
    order, each as soon as its input is ready: ``F(s, i)`` after ``F(s − 1, i)``,
    ``B(s, i)`` after ``B(s + 1, i)`` (the last stage's after its own ``F``).
    1F1B (PipeDream-flush, Narayanan et al. 2019/2021): stage ``s`` runs
    ``min(p − s − 1, m)`` warm-up forwards, then alternates one forward and one
    backward, then drains its backwards. GPipe (Huang et al. 2019): all forwards, then
    all backwards. Both finish in ``3(m + p − 1)`` slots, so the idle share is
    ``(p − 1)/(m + p − 1)``.

    Parameters
    ----------
    pp_size : int
        Stages ``p``.
    microbatch_count : int
        Micro-batches ``m``.
    schedule : {"1f1b", "gpipe"}
        Schedule.

    Returns
    -------
    list of list
        ``grid[stage][slot]`` is ``(microbatch, "F")``, ``(microbatch, "B")`` or None
        (idle); micro-batches are numbered from 0.
    """
    p, m = int(pp_size), int(microbatch_count)
    if p < 1 or m < 1:
        from mlsys.core.errors import ParameterError

        raise ParameterError("pp_size, microbatch_count", (pp_size, microbatch_count), ">= 1")
    kind = str(schedule).lower()
    orders: list[list[tuple[str, int]]] = []
    for s in range(p):
        if kind == "gpipe":
            order = [("F", i) for i in range(m)] + [("B", i) for i in range(m)]
        elif kind == "1f1b":
            warm = min(p - s - 1, m)
            order = [("F", i) for i in range(warm)]
            f_next, b_next = warm, 0
            while f_next < m:
                order += [("F", f_next), ("B", b_next)]
                f_next += 1
                b_next += 1
            order += [("B", i) for i in range(b_next, m)]
        else:
            from mlsys.core.errors import ParameterError

            raise ParameterError("schedule", schedule, "'1f1b' or 'gpipe'")
        orders.append(order)
    dur = {"F": 1, "B": 2}
    done: dict[tuple[str, int, int], int] = {}
    free = [0] * p
    pos = [0] * p
    ops: list[tuple[int, int, str, int]] = []  # (stage, start, kind, microbatch)
    remaining = 2 * p * m
    while remaining:
        progressed = False
        for s in range(p):
            while pos[s] < len(orders[s]):
                k, i = orders[s][pos[s]]
                if k == "F":
                    dep = done.get(("F", s - 1, i)) if s > 0 else 0
                else:
                    dep = done.get(("B", s + 1, i)) if s < p - 1 else done.get(("F", s, i))
                if dep is None:
                    break
                start = max(free[s], dep)
                free[s] = start + dur[k]
                done[(k, s, i)] = free[s]
                ops.append((s, start, k, i))
                pos[s] += 1
                remaining -= 1
                progressed = True
        if not progressed:  # pragma: no cover - the orders above never deadlock
            raise RuntimeError("pipeline schedule deadlocked")
    span = max(free)
    grid: list[list[Any]] = [[None] * span for _ in range(p)]
    for s, start, k, i in ops:
        for slot in range(start, start + dur[k]):
            grid[s][slot] = (i, k)
    return grid


def schedule_idle_fraction(grid: list[list]) -> float:
    """Idle slots over all slots of a :func:`pipeline_schedule` grid.

    Parameters
    ----------
    grid : list of list
        ``grid[stage][slot]``.

    Returns
    -------
    float
        Fraction in [0, 1).
    """
    total = sum(len(row) for row in grid)
    idle = sum(1 for row in grid for cell in row if cell is None)
    return idle / total


def _schedule_ops(grid: list[list]) -> list[list[int]]:
    """Compact form for OJS: ``[stage, start slot, microbatch, 0 forward / 1 backward]``."""
    ops: list[list[int]] = []
    for s, row in enumerate(grid):
        prev = None
        for slot, cell in enumerate(row):
            # a backward pass fills two consecutive slots with the same cell
            if cell is not None and cell != prev:
                ops.append([s, slot, cell[0], 0 if cell[1] == "F" else 1])
            prev = cell
    return ops
