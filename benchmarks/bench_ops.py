"""Speed of the operations solvers: reliability, synchronization, sustainability, economics.

Target: 50 µs per ``solve`` with plain SI inputs (the way a sweep or a search calls them)
and, for reference, with Quantity inputs (the way a chapter calls them once).

Prints each measured time and its ratio to the target (ratio ≤ 1 meets the target).
``scenarios()`` returns ``(name, callable, target_seconds)`` triples so an aggregate
runner can import and time them.

Run: ``python benchmarks/bench_ops.py``
"""

from __future__ import annotations

from collections.abc import Callable

from _timing import per_call

SOLVE_TARGET_S = 50e-6


def _solver_calls() -> list[tuple[str, Callable[[], object]]]:
    from mlsys import (
        Q_,
        Datacenters,
        EconomicsModel,
        Fabrics,
        Fleet,
        Models,
        Nodes,
        ReliabilityModel,
        SustainabilityModel,
        SynchronizationModel,
    )

    fleet = Fleet(node=Nodes.DGX_H100, count=128, fabric=Fabrics.IB_NDR)
    dc = Datacenters.get(Datacenters.list()[0])
    llama = Models.Llama2_70B
    rel, sync, sus, eco = (
        ReliabilityModel(),
        SynchronizationModel(),
        SustainabilityModel(),
        EconomicsModel(),
    )
    # Quantities are built once, outside the timed calls: the timing is the solver's
    # own conversion at its edge, not pint's constructor.
    day, minute = Q_(1, "day"), Q_(60, "s")
    gpt3 = dict(
        duration=Q_(14.8, "day"),
        accelerators=10_000,
        power_per_accelerator=Q_(330, "W"),
        pue=1.1,
        carbon_intensity=Q_(0.429, "kgCO2e/kWh"),
    )
    return [
        (
            "ReliabilityModel 16K GPUs, model ckpt (SI)",
            lambda: rel.solve(16384, 86400.0 * 54, model=llama),
        ),
        (
            "ReliabilityModel fleet, ckpt time (Quantity)",
            lambda: rel.solve(fleet, day, checkpoint_time=minute),
        ),
        (
            "SynchronizationModel two-point + backups (SI)",
            lambda: sync.solve(
                1024, 1.0, slow_fraction=0.01, slowdown=2.0, backup_workers=4, sync_time=0.2
            ),
        ),
        (
            "SynchronizationModel exponential (SI)",
            lambda: sync.solve(1024, 1.0, straggler="exponential", tail_mean=0.1, local_steps=8),
        ),
        (
            "SustainabilityModel fleet + datacenter (SI)",
            lambda: sus.solve(fleet, 86400.0, utilization=0.7, datacenter=dc),
        ),
        (
            "SustainabilityModel Patterson GPT-3 (Quantity)",
            lambda: sus.solve(**gpt3),
        ),
        (
            "EconomicsModel fleet, run + tokens (SI)",
            lambda: eco.solve(
                fleet, utilization=0.7, training_duration=86400.0 * 30, tokens_per_second=1e6
            ),
        ),
    ]


def scenarios() -> list[tuple[str, Callable[[], object], float]]:
    """Benchmarks as ``(name, callable, target_seconds)``.

    Returns
    -------
    list of tuple
        Single solver calls for the runner to time.
    """
    return [(name, fn, SOLVE_TARGET_S) for name, fn in _solver_calls()]


def main() -> int:
    """Run every scenario and print time, target and ratio."""
    print(f"{'scenario':52s} {'time':>12s} {'target':>10s} {'ratio':>7s}")
    worst = 0.0
    for name, fn, target in scenarios():
        seconds = per_call(fn)
        ratio = seconds / target
        worst = max(worst, ratio)
        print(f"{name:52s} {seconds * 1e6:9.1f} µs {target * 1e6:7.0f} µs {ratio:7.2f}")
    print(f"worst ratio {worst:.2f} ({'meets' if worst <= 1 else 'misses'} targets)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
