"""Timing helpers shared by the benchmark scripts (standard library only).

Every script in this folder runs as ``python benchmarks/<script>.py``, so this module is
importable as ``_timing`` from each of them, including ``mlsysim_scenarios.py``, which
runs inside a virtual environment that has no mlsys.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable

__all__ = ["per_call", "fresh_import_time"]


def per_call(fn: Callable[[], object], min_time: float = 0.2) -> float:
    """Median over 5 batches of the mean wall time of one call, in seconds.

    The batch size doubles until a batch takes ``min_time / 5``, so fast calls are timed
    over many repetitions; the first call warms caches and is not timed.

    Parameters
    ----------
    fn : callable
        Zero-argument callable to time.
    min_time : float
        Approximate total seconds spent timing, in s.

    Returns
    -------
    float
        Seconds per call.
    """
    fn()
    n = 1
    while True:
        start = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - start > min_time / 5:
            break
        n *= 2
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - start) / n)
    return statistics.median(samples)


def fresh_import_time(module: str, runs: int = 7, python: str | None = None) -> float:
    """Median wall time of ``python -c "import <module>"`` in fresh interpreters, in s.

    Parameters
    ----------
    module : str
        Module to import.
    runs : int
        Interpreters started.
    python : str, optional
        Interpreter (default: the current one).

    Returns
    -------
    float
        Seconds (interpreter start-up included, as a user sees it).
    """
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([python or sys.executable, "-c", f"import {module}"], check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)
