"""Property tests of the layout model: invariants that hold for every valid layout."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsys.core.catalog import Fabrics, Models, Nodes
from mlsys.core.formulas.collectives import alltoall_time
from mlsys.core.solvers.distributed import DistributedModel, build_problem
from mlsys.core.types import Fleet

FLEET = Fleet(node=Nodes.DGX_H100, count=16, fabric=Fabrics.IB_NDR)  # 128 GPUs
MODEL = Models.Llama2_70B  # 80 layers, 64 heads

layouts = st.fixed_dictionaries(
    {
        "tp_size": st.sampled_from([1, 2, 4, 8, 16]),
        "pp_size": st.sampled_from([1, 2, 4, 8]),
        "microbatch_count": st.sampled_from([1, 2, 4, 8]),
        "zero_stage": st.sampled_from([0, 1, 2, 3]),
        "recompute": st.sampled_from(["none", "selective", "full"]),
        "sequence_parallel": st.booleans(),
        "overlap": st.booleans(),
    }
)


@settings(max_examples=40, deadline=None)
@given(layout=layouts)
def test_invariants(layout):
    res = DistributedModel().solve(MODEL, FLEET, batch_size=1024, **layout)
    step = res.si("step_time")
    assert step >= res.si("compute_time") > 0
    assert 0.0 < res.mfu <= res.hfu < 1.0
    assert 0.0 <= res.bubble_fraction < 1.0
    assert 0.0 <= res.overlap_fraction <= 1.0
    assert res.si("dp_communication_time") <= res.si("dp_communication_total") * (1 + 1e-12)
    assert 0.0 < res.scaling_efficiency <= 1.0


@settings(max_examples=25, deadline=None)
@given(layout=layouts)
def test_a_faster_network_is_never_slower(layout):
    slow = Fleet(node=Nodes.DGX_H100, count=16, fabric=Fabrics.IB_HDR)
    a = DistributedModel().solve(MODEL, slow, batch_size=1024, **layout)
    b = DistributedModel().solve(MODEL, FLEET, batch_size=1024, **layout)
    assert b.si("step_time") <= a.si("step_time") * (1 + 1e-12)


@settings(max_examples=25, deadline=None)
@given(layout=layouts)
def test_more_recomputation_never_uses_more_activation_memory(layout):
    mem = []
    for rc in ("none", "selective", "full"):
        res = DistributedModel().solve(MODEL, FLEET, batch_size=1024, **{**layout, "recompute": rc})
        mem.append(res.memory_per_accelerator.si("activations"))
    assert mem[0] >= mem[1] >= mem[2]


@pytest.mark.parametrize("ep", [2, 4, 8])
def test_expert_all_to_all_time_is_the_collectives_formula(ep):
    # Inside one node: per MoE layer and micro-batch 4 all-to-alls of s·b·k·h·2 bytes.
    model = Models.Mixtral_8x7B
    fleet = Fleet(node=Nodes.DGX_H100, count=1, fabric=Fabrics.IB_NDR)
    res = DistributedModel().solve(
        model, fleet, batch_size=16, seq_len=4096, ep_size=ep, microbatch_count=2,
        recompute="full", zero_stage=1,
    )  # fmt: skip
    P = build_problem(model, fleet, 16, seq_len=4096)
    b = 16 / 8 / 2  # dp·ep = 8 ranks, 2 micro-batches
    M = 4096 * b * 2 * 4096 * 2
    per = alltoall_time(M, ep, P.intra_bw, P.intra_lat)
    expected = 2 * model.moe_layers * 6 * per  # full recompute: 6 all-to-alls per layer
    assert res.si("ep_communication_time") == pytest.approx(expected)
