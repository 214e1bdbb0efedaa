"""The benchmark scenarios on the PyPI package ``mlsysim==0.3.0``, for comparison.

Runs INSIDE the virtual environment ``benchmarks/.venv-mlsysim`` (``benchmarks/run.py``
creates it and calls this script as a subprocess); it imports nothing from mlsys and
prints one JSON object: ``{"version": ..., "scenarios": {key: {"seconds": ..., "note": ...}}}``.

Each key names the mlsys scenario it stands beside (see ``EQUIVALENTS`` in ``run.py``).
mlsysim 0.3.0's nearest API was found by reading its installed source
(``mlsysim/engine/solvers/*.py``); where its question differs from mlsys's, ``note`` says
how. Import time is measured in fresh interpreters; per-call times are the median over
five batches of the mean time per call — both with ``benchmarks/_timing.py``, the helper
mlsys's own bench scripts use.

Run: ``benchmarks/.venv-mlsysim/bin/python benchmarks/mlsysim_scenarios.py``
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable

from _timing import fresh_import_time, per_call  # benchmarks/_timing.py, stdlib only


def _scenarios() -> dict[str, tuple[Callable[[], object], str]]:
    from mlsysim import Hardware, Infrastructure, Models, Systems
    from mlsysim.solvers import (
        DistributedModel,
        EconomicsModel,
        ReliabilityModel,
        ServingModel,
        SingleNodeModel,
        SustainabilityModel,
        TrainingMemoryModel,
    )

    h100, gpt3 = Hardware.Cloud.H100, Models.Language.GPT3
    l70, l7 = Models.Language.Llama2_70B, Models.Language.Llama2_7B
    lab64 = Systems.Clusters.Lab_64_A100
    fleet_h100 = Systems.Clusters.Training_1K  # 128 DGX H100-class nodes
    dc = Infrastructure.Datacenters.list()[0]
    single, dist, serve = SingleNodeModel(), DistributedModel(), ServingModel()
    mem, rel, sus, eco = (
        TrainingMemoryModel(),
        ReliabilityModel(),
        SustainabilityModel(),
        (EconomicsModel()),
    )
    return {
        "single_node_decode": (
            lambda: single.solve(l70, h100, batch_size=8),
            "SingleNodeModel.solve(Llama2_70B, H100, batch_size=8)",
        ),
        "single_node_training": (
            lambda: single.solve(gpt3, h100, batch_size=1),
            "SingleNodeModel.solve(GPT3, H100): mlsysim has no training phase; its "
            "inference roofline is the nearest call",
        ),
        "memory_training": (
            lambda: mem.solve(
                gpt3,
                h100,
                batch_size=64,
                tp_size=8,
                pp_size=8,
                dp_size=16,
                zero_stage=1,
                gradient_accumulation_steps=64,
                activation_checkpointing="selective",
                sequence_parallel=True,
            ),
            "TrainingMemoryModel.solve(GPT3, H100, tp 8, pp 8, dp 16, ZeRO-1)",
        ),
        "distributed": (
            lambda: dist.solve(
                gpt3,
                lab64,
                batch_size=64,
                tp_size=8,
                pp_size=8,
                v_stages=3,
                microbatch_count=64,
                activation_recomputation=True,
            ),
            "DistributedModel.solve(GPT3, Lab_64_A100, tp 8, pp 8, v 3, m 64)",
        ),
        "serving": (
            lambda: serve.solve(l7, h100, seq_len=640, batch_size=1),
            "ServingModel.solve(Llama2_7B, H100, seq_len=640)",
        ),
        "reliability": (
            lambda: rel.solve(fleet_h100, job_duration_hours=24.0),
            "ReliabilityModel.solve(Training_1K, 24 h)",
        ),
        "sustainability": (
            lambda: sus.solve(fleet_h100, duration_days=1.0, datacenter=dc, mfu=0.7),
            "SustainabilityModel.solve(Training_1K, 1 day, datacenter)",
        ),
        "economics": (
            lambda: eco.solve(fleet_h100, duration_days=30.0, mfu=0.7),
            "EconomicsModel.solve(Training_1K, 30 days)",
        ),
    }


def _search() -> dict[str, dict]:
    """ParallelismOptimizer: seconds per search and layouts priced per second."""
    from mlsysim import Models, Systems
    from mlsysim.solvers import ParallelismOptimizer

    opt = ParallelismOptimizer()
    out = {}
    for key, call in (
        (
            "search_gpt3",
            lambda: opt.solve(
                Models.Language.GPT3,
                Systems.Clusters.Lab_64_A100,
                batch_size=64,
                activation_recomputation=True,
            ),
        ),
        (
            "search_405b",
            lambda: opt.solve(
                Models.Language.Llama3_405B,
                Systems.Clusters.Meta_Llama3_16K_H100,
                batch_size=2048,
                seq_len=8192,
                activation_recomputation=True,
            ),
        ),
    ):
        try:
            call()
        except Exception as exc:  # report, do not hide: the runner prints it
            out[key] = {"seconds": None, "note": f"failed: {exc!r}"[:300]}
            continue
        runs = []
        for _ in range(3):
            start = time.perf_counter()
            res = call()
            runs.append(time.perf_counter() - start)
        seconds = statistics.median(runs)
        size = int(getattr(res, "search_space_size", 0) or 0)
        out[key] = {
            "seconds": seconds,
            "layouts": size,
            "layouts_per_s": size / seconds if size else None,
            "note": "ParallelismOptimizer.solve: power-of-two TP x PP sweep",
        }
    return out


def main() -> int:
    import mlsysim

    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    result: dict[str, dict] = {
        "import": {
            "seconds": fresh_import_time("mlsysim", runs),
            "note": f"python -c 'import mlsysim', median of {runs}",
        }
    }
    for key, (fn, note) in _scenarios().items():
        try:
            result[key] = {"seconds": per_call(fn), "note": note}
        except Exception as exc:  # report, do not hide: the runner prints it
            result[key] = {"seconds": None, "note": f"{note}; failed: {exc!r}"[:300]}
    result.update(_search())
    print(json.dumps({"version": mlsysim.__version__, "scenarios": result}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
