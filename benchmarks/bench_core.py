"""Speed of the core: ``import mlsys`` and one solve of SingleNodeModel / MemoryModel.

Prints each measured time and its ratio to the target (ratio ≤ 1 meets the target).
``scenarios()`` returns ``(name, callable, target_seconds)`` triples so an aggregate
runner can import and time them; the import scenario times itself (a subprocess) and
returns the median in seconds.

Run: ``python benchmarks/bench_core.py``
"""

from __future__ import annotations

import os
from collections.abc import Callable

from _timing import fresh_import_time, per_call

IMPORT_TARGET_S = 0.3
SOLVE_TARGET_S = 50e-6


def _solver_calls() -> list[tuple[str, Callable[[], object]]]:
    from mlsys import Hardware, Models
    from mlsys.core.solvers.memory import MemoryModel
    from mlsys.core.solvers.roofline import SingleNodeModel

    h100, llama, gpt3 = Hardware.H100, Models.Llama2_70B, Models.GPT3_175B
    single, memory = SingleNodeModel(), MemoryModel()
    return [
        (
            "SingleNodeModel.solve decode Llama-2-70B/H100",
            lambda: single.solve(llama, h100, batch_size=8, phase="decode"),
        ),
        (
            "SingleNodeModel.solve training GPT-3/H100",
            lambda: single.solve(gpt3, h100, batch_size=1, phase="training"),
        ),
        (
            "MemoryModel.solve training GPT-3 tp8 pp8 zero1",
            lambda: memory.solve(
                gpt3,
                h100,
                tp_size=8,
                pp_size=8,
                dp_size=16,
                zero_stage=1,
                sequence_parallel=True,
                recompute="selective",
                microbatch_count=64,
                v_stages=3,
            ),
        ),
        (
            "MemoryModel.solve inference Llama-2-70B tp8",
            lambda: memory.solve(llama, h100, mode="inference", tp_size=8, batch_size=16),
        ),
    ]


def scenarios() -> list[tuple[str, Callable[[], float | object], float]]:
    """Benchmarks as ``(name, callable, target_seconds)``.

    Returns
    -------
    list of tuple
        The import scenario's callable measures and returns its own median time in
        seconds; the solver callables are single calls for the runner to time.
    """
    out: list[tuple[str, Callable[[], float | object], float]] = [
        (
            "import mlsys (subprocess, median of 7)",
            lambda: fresh_import_time("mlsys"),
            IMPORT_TARGET_S,
        )
    ]
    out += [(name, fn, SOLVE_TARGET_S) for name, fn in _solver_calls()]
    return out


def main() -> int:
    """Run every scenario and print time, target and ratio."""
    print(f"{'scenario':52s} {'time':>12s} {'target':>10s} {'ratio':>7s}")
    worst = 0.0
    for name, fn, target in scenarios():
        seconds = fn() if name.startswith("import") else per_call(fn)
        ratio = float(seconds) / target
        worst = max(worst, ratio)
        unit, scale = ("ms", 1e3) if target >= 1e-3 else ("µs", 1e6)
        print(f"{name:52s} {seconds * scale:9.1f} {unit} {target * scale:7.0f} {unit} {ratio:7.2f}")
    print(f"worst ratio {worst:.2f} ({'meets' if worst <= 1 else 'misses'} targets)")
    if hasattr(os, "getloadavg"):
        load = os.getloadavg()[0]
        cpus = os.cpu_count() or 1
        note = " — machine busy, timings inflated" if load > cpus else ""
        print(f"load average {load:.1f} on {cpus} CPUs{note}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
