"""Speed of the serving solvers: ServingModel.solve and ContinuousBatchingModel.solve.

Prints each measured time per call and its ratio to the target (ratio ≤ 1 meets it).
``scenarios()`` returns ``(name, callable, target_seconds)`` triples for an aggregate
runner. Targets: ServingModel.solve ≤ 50 µs (per-model constants and the per-
configuration plan are cached on the frozen model and hardware objects; the rest is
plain float math); ContinuousBatchingModel.solve ≤ 200 µs (regula falsi for the
Little's-law fixed point, a few decode-step evaluations); with an SLO search (a
bisection over the arrival rate, each step solving the fixed point) ≤ 5 ms.

Run: ``python benchmarks/bench_serving.py``
"""

from __future__ import annotations

from collections.abc import Callable

from _timing import per_call

SERVING_TARGET_S = 50e-6
BATCHING_TARGET_S = 200e-6
SLO_SEARCH_TARGET_S = 5e-3


def scenarios() -> list[tuple[str, Callable[[], object], float]]:
    """The timed calls: ``(name, zero-argument callable, target seconds per call)``."""
    from mlsys import ContinuousBatchingModel, Hardware, Models, Nodes, ServingModel

    sm, cb = ServingModel(), ContinuousBatchingModel()
    h100, a100, dgx = Hardware.H100, Hardware.A100_80GB, Nodes.DGX_H100
    l7, l70, mix = Models.Llama2_7B, Models.Llama2_70B, Models.Mixtral_8x7B
    return [
        (
            "ServingModel.solve Llama-2-7B/H100 b1",
            lambda: sm.solve(l7, h100, prompt_len=512, output_len=128),
            SERVING_TARGET_S,
        ),
        (
            "ServingModel.solve Llama-2-70B/A100 tp4 b32",
            lambda: sm.solve(
                l70,
                a100,
                batch_size=32,
                prompt_len=2048,
                output_len=256,
                tp_size=4,
                precision="fp16",
            ),
            SERVING_TARGET_S,
        ),
        (
            "ServingModel.solve Mixtral/DGX-H100 tp2 pp2 fp8 b16",
            lambda: sm.solve(
                mix,
                dgx,
                batch_size=16,
                prompt_len=1024,
                output_len=256,
                tp_size=2,
                pp_size=2,
                precision="fp8",
            ),
            SERVING_TARGET_S,
        ),
        (
            "ContinuousBatchingModel.solve Llama-2-7B/H100 λ=5/s",
            lambda: cb.solve(
                l7,
                h100,
                arrival_rate=5.0,
                prompt_len=512,
                output_len={"distribution": "exponential", "mean": 256},
            ),
            BATCHING_TARGET_S,
        ),
        (
            "ContinuousBatchingModel.solve + SLO search (TTFT 200 ms, ITL 20 ms)",
            lambda: cb.solve(
                l7,
                h100,
                arrival_rate=5.0,
                prompt_len=512,
                output_len={"distribution": "exponential", "mean": 256},
                ttft_slo=0.2,
                itl_slo=0.02,
            ),
            SLO_SEARCH_TARGET_S,
        ),
    ]


def main() -> int:
    """Time every scenario and print ``name  time  target  ratio``; 1 if any misses."""
    worst = 0.0
    for name, fn, target in scenarios():
        t = per_call(fn)
        ratio = t / target
        worst = max(worst, ratio)
        print(f"{name:70s} {t * 1e6:9.1f} µs  target {target * 1e6:8.1f} µs  ratio {ratio:5.2f}")
    return 0 if worst <= 1.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
