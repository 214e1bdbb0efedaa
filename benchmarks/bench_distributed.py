"""Speed of the distributed training model and of the parallel-layout search.

Targets:

* one ``DistributedModel().solve(...)`` in at most 50 µs;
* ``ParallelismSearch`` prices at least 1,000,000 candidate layouts per second on one core
  and searches Llama-3.1 405B on 16,384 H100s in under 2 s.

Run: ``python benchmarks/bench_distributed.py`` (prints each figure and its ratio to the
target; a ratio ≤ 1 for times, ≥ 1 for rates, meets it).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from _timing import per_call

from mlsys.core.catalog import Fabrics, Models, Nodes
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.solvers.search import ParallelismSearch
from mlsys.core.types import Fleet

SOLVE_TARGET_S = 50e-6
SEARCH_RATE_TARGET = 1_000_000.0  # layouts priced per second
SEARCH_405B_TARGET_S = 2.0

_GPT3_FLEET = Fleet(node=Nodes.DGX_A100, count=8, fabric=Fabrics.IB_HDR)
_L405_FLEET = Fleet(node=Nodes.DGX_H100, count=2048, fabric=Fabrics.IB_NDR)
_MODEL = DistributedModel()


def _solve_gpt3() -> None:
    _MODEL.solve(
        Models.GPT3_175B, _GPT3_FLEET, batch_size=64, tp_size=8, pp_size=8, v_stages=3,
        microbatch_count=64, recompute="selective", sequence_parallel=True,
    )  # fmt: skip


def _search_gpt3() -> int:
    return ParallelismSearch().solve(Models.GPT3_175B, _GPT3_FLEET, batch_size=64).candidates


def _search_405b() -> int:
    res = ParallelismSearch().solve(Models.Llama3_405B, _L405_FLEET, batch_size=2048, seq_len=8192)
    return res.candidates


def scenarios() -> list[tuple[str, Callable[[], object], float]]:
    """Benchmarks as (name, callable, target seconds per call)."""
    return [
        ("DistributedModel.solve GPT-3 175B on 64 A100", _solve_gpt3, SOLVE_TARGET_S),
        ("ParallelismSearch GPT-3 175B on 64 A100", _search_gpt3, 2.0),
        ("ParallelismSearch Llama-3.1 405B on 16,384 H100", _search_405b, SEARCH_405B_TARGET_S),
    ]


def main() -> None:
    """Print per-call times and search rates, each with its ratio to the target."""
    for name, fn, target in scenarios():
        t = per_call(fn)
        print(f"{name}: {t * 1e6:,.1f} µs per call (target {target * 1e6:,.0f} µs, "
              f"ratio {t / target:.3f})")  # fmt: skip
    for name, fn in (("GPT-3 175B / 64 A100", _search_gpt3), ("405B / 16,384 H100", _search_405b)):
        start = time.perf_counter()
        count = fn()
        rate = count / (time.perf_counter() - start)
        ratio = rate / SEARCH_RATE_TARGET
        print(f"ParallelismSearch {name}: {count:,} layouts, {rate:,.0f} layouts/s "
              f"(target {SEARCH_RATE_TARGET:,.0f}, ratio {ratio:.2f})")  # fmt: skip


if __name__ == "__main__":
    main()
