"""One shared virtual-cluster run that many tests read.

Starting ranks costs seconds (each process imports torch, and the machine's two cores
are shared), so every workload of the suite runs in a single 4-rank cluster, once per
session. The fixture skips cleanly when torch is not installed.
"""

from __future__ import annotations

import pytest

DIMS = {"m": 64, "k": 128, "n": 32}  # divisible by 2 and 4 on every axis
FFN = {"batch_size": 2, "seq_len": 8, "hidden": 32}
PIPE = {"microbatches": 8, "microbatch_size": 4, "steps": 3, "width": 16, "layers": 4}
PAD = {"forward_s": 0.02, "backward_s": 0.04}
RANKS = 4
COLLECTIVE_BYTES = 1 << 16


@pytest.fixture(scope="session")
def suite():
    pytest.importorskip("torch")
    from mlsys.core.formulas.sharding import SHARDING_POLICIES
    from mlsys.emulate.cluster import mesh_workload, run_workloads
    from mlsys.emulate.collectives import collectives_workload
    from mlsys.emulate.pipeline import pipeline_workload, summarize_pipeline
    from mlsys.emulate.tp import ffn_workload, matmul_workload

    m, k, n = DIMS["m"], DIMS["k"], DIMS["n"]
    sharded = ("inner", "outer_m", "outer_n", "outer_inner")
    calls = [
        (mesh_workload, ((2, 2), ("dp", "tp"))),
        (collectives_workload, (COLLECTIVE_BYTES,)),
        (matmul_workload, (SHARDING_POLICIES, m, k, n, None, "replicated", 0, True)),
        (matmul_workload, (sharded, m, k, n, None, "sharded", 0, False)),
        (ffn_workload, (FFN["batch_size"], FFN["seq_len"], FFN["hidden"])),
        (
            pipeline_workload,
            (
                ("gpipe", "1f1b"),
                PIPE["microbatches"],
                PIPE["microbatch_size"],
                PIPE["steps"],
                PIPE["width"],
                PIPE["layers"],
                PAD["forward_s"],
                PAD["backward_s"],
            ),
        ),
    ]
    mesh, coll, mm, mm_sharded, ffn, pipe = run_workloads(calls, RANKS, timeout_s=600)
    pipeline = summarize_pipeline(
        pipe,
        PIPE["steps"],
        PIPE["microbatches"] * PIPE["microbatch_size"],
        PIPE["width"],
        PIPE["layers"],
        PAD["forward_s"],
        PAD["backward_s"],
    )
    return {
        "mesh": mesh,
        "collectives": coll,
        "matmul": mm,
        "matmul_sharded": mm_sharded,
        "ffn": ffn,
        "pipeline": pipeline,
    }


@pytest.fixture(scope="session")
def collectives_4(suite):
    return suite["collectives"]


@pytest.fixture(scope="session")
def matmul_4(suite):
    return suite["matmul"]


@pytest.fixture(scope="session")
def matmul_4_sharded(suite):
    return suite["matmul_sharded"]


@pytest.fixture(scope="session")
def ffn_4(suite):
    return suite["ffn"]


@pytest.fixture(scope="session")
def pipeline_4x8(suite):
    return suite["pipeline"]
