"""Training prices a tensor-parallel all-reduce on the links serving does.

ServingModel prices NCCL's LL protocol on A100/H100 NVLink with the measured per-step
latency (``NCCL_NVLINK_LL_STEP_LATENCY_MEASURED_S``: nccl-tests issue 123 for DGX A100,
vLLM PR 8558 for H100); the training layout model reads the same table for its node's
links, so one all-reduce has one price in both.
"""

from __future__ import annotations

import pytest

from mlsys import Fabrics, Fleet, Models, Nodes
from mlsys.core.formulas.collectives import (
    NCCL_NVLINK_LL_STEP_LATENCY_MEASURED_S,
    nccl_allreduce_time,
)
from mlsys.core.solvers import _layout
from mlsys.core.solvers.distributed import build_problem


@pytest.mark.parametrize(("node", "links"), [("DGX_A100", "NVLINK3"), ("DGX_H100", "NVLINK4")])
def test_problem_carries_the_measured_ll_step(node, links):
    fleet = Fleet(node=Nodes[node], count=2, fabric=Fabrics.IB_NDR)
    P = build_problem(Models.Llama2_7B, fleet, batch_size=16)
    assert P.scaleup_ll_step_s == NCCL_NVLINK_LL_STEP_LATENCY_MEASURED_S[links]


def test_small_tp_allreduce_uses_it():
    # a 16 KiB all-reduce over 4 A100s: NCCL picks LL, whose 2(n-1) = 6 intra-node steps
    # take 1.98 us each instead of the tuning model's latency
    fleet = Fleet(node=Nodes.DGX_A100, count=1)
    P = build_problem(Models.Llama2_7B, fleet, batch_size=1)
    got = _layout._tp_collective_in_node(16384.0, 4.0, False, P, _layout.ScalarOps)
    measured = nccl_allreduce_time(
        16384, 4, P.scaleup_link_Bps, "nvlink", ll_step_latency_s=1.98e-6
    )
    model_only = nccl_allreduce_time(16384, 4, P.scaleup_link_Bps, "nvlink")
    assert got == pytest.approx(measured, rel=1e-12)
    assert got > model_only
