"""Expert parallelism across nodes and the token copies of a MoE layer.

Every number is derived here from the all-to-all's traffic matrix or from the token
counts of a dropless top-k layer.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlsys.core.catalog import Fabrics, Models, Nodes
from mlsys.core.formulas.collectives import alltoall_time, multinode_alltoall_time
from mlsys.core.formulas.moe import moe_token_shuffle_bytes, tokens_per_local_expert
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.types import Fleet

_NVLINK_BPS, _NVLINK_S = 450e9, 1e-6
_NIC_BPS, _NIC_S = 50e9, 5e-6


def test_one_node_is_the_pairwise_exchange() -> None:
    """With every rank in one node nothing crosses the network."""
    for M in (1e6, 64e6, 1e9):
        assert multinode_alltoall_time(M, 8, 1, _NVLINK_BPS, _NVLINK_S, _NIC_BPS, _NIC_S) == (
            pytest.approx(alltoall_time(M, 8, _NVLINK_BPS, _NVLINK_S))
        )


def test_half_the_buffer_leaves_each_of_two_nodes() -> None:
    """16 ranks on two nodes: 8 of each rank's 16 blocks go to the other node, so half
    of its buffer crosses its own 50 GB/s link, not 1/8 of it (a reduce-scatter's
    shard): 134 MB -> 1.34 ms of network time."""
    M = 134e6
    t = multinode_alltoall_time(M, 8, 2, _NVLINK_BPS, _NVLINK_S, _NIC_BPS, _NIC_S)
    network = 0.5 * M / _NIC_BPS
    inside = 7 / 16 * M / _NVLINK_BPS
    latency = 7 * _NVLINK_S + 8 * _NIC_S
    assert t == pytest.approx(network + inside + latency)
    assert network / t > 0.88


@given(
    M=st.floats(1e3, 1e10),
    k=st.integers(1, 8),
    n=st.integers(2, 64),
)
def test_network_share_grows_toward_the_whole_buffer(M: float, k: int, n: int) -> None:
    """The bytes a rank sends off its node are (n-1)/n of its buffer: never less than
    half of it on two or more nodes, and the time at least that over the network link."""
    t = multinode_alltoall_time(M, k, n, _NVLINK_BPS, 0.0, _NIC_BPS, 0.0)
    assert t >= 0.5 * M / _NIC_BPS * (1 - 1e-12)
    assert t == pytest.approx((n - 1) / n * M / _NIC_BPS + (k - 1) / (k * n) * M / _NVLINK_BPS)


def test_tokens_per_local_expert_balanced() -> None:
    """DeepSeek-V3 (256 experts, top 8) on 64 expert ranks, 4,096 tokens each:
    4096 * 8 * 64 / 256 = 8,192 rows per expert, 4 experts a rank."""
    assert tokens_per_local_expert(4096, 8, 64, 256) == 8192.0


def test_shuffle_bytes_count_each_copy() -> None:
    """Mixtral (top 2) at 4,096 tokens of width 4,096 in bf16 without a chunk sort
    (one expert a rank): permute 2*2, unpermute 2+1 -> 7 token-widths, 235 MB."""
    got = moe_token_shuffle_bytes(4096, 4096, 2, 2.0, sort_chunks=False)
    assert got == pytest.approx(7 * 4096 * 4096 * 2)
    # a rank with several experts also sorts and unsorts the received chunks: 4k more
    assert moe_token_shuffle_bytes(4096, 4096, 2, 2.0) - got == pytest.approx(
        4 * 2 * 4096 * 4096 * 2
    )


def _qwen3_30b(nodes: int, ep: int):
    node = Nodes["DGX_H100"]
    fleet = Fleet(node=node, count=nodes, fabric=Fabrics["IB_NDR"])
    return DistributedModel().solve(
        Models["Qwen3_30B_A3B"], fleet, batch_size=64 * nodes, precision="bf16",
        ep_size=ep, microbatch_count=8, zero_stage=1, dropout=False,
    )  # fmt: skip


def test_expert_parallel_across_nodes_pays_the_network() -> None:
    """Qwen3-30B-A3B, 4,096 tokens a micro-batch: EP16 over two DGX H100s sends half of
    each 134 MB dispatch over a 50 GB/s NIC; EP8 inside one node sends 7/8 over
    NVLink. Per MoE layer, micro-batch and all-to-all the two-node exchange costs at
    least 0.5 * 134 MB / (NIC bandwidth), far more than the one-node one."""
    one = _qwen3_30b(1, 8)
    two = _qwen3_30b(2, 16)
    per_a2a = lambda r: r.si("ep_communication_time") / (8 * 48 * 4)  # noqa: E731
    M = 4096 * 8 * 2048 * 2.0
    nic = Fabrics["IB_NDR"].effective_bandwidth_Bps
    assert per_a2a(two) >= 0.5 * M / nic
    assert per_a2a(two) > 3.0 * per_a2a(one)


# -- the host's work in a MoE layer --------------------------------------------------------

from mlsys.core.errors import ParameterError  # noqa: E402
from mlsys.core.formulas.moe import (  # noqa: E402
    MEGATRON_HOST_TIME_PER_OP_S,
    MOE_LAYER_BACKWARD_HOST_OPS,
    MOE_LAYER_FORWARD_HOST_OPS,
    moe_layer_host_ops,
    moe_layer_host_time,
)
from mlsys.core.layout import TrainingLayout  # noqa: E402

_GRAPHED = ("attn", "moe_router", "moe_preprocess")


def test_inventories_add_up_to_their_stated_counts() -> None:
    fixed_f = sum(op[1] for op in MOE_LAYER_FORWARD_HOST_OPS)
    per_f = sum(op[2] for op in MOE_LAYER_FORWARD_HOST_OPS)
    fixed_b = sum(op[1] for op in MOE_LAYER_BACKWARD_HOST_OPS)
    per_b = sum(op[2] for op in MOE_LAYER_BACKWARD_HOST_OPS)
    assert (fixed_f, per_f, fixed_b, per_b) == (60, 4, 56, 6)
    assert moe_layer_host_ops(2) == 68.0 and moe_layer_host_ops(32, "backward") == 248.0
    # without FP8 GEMMs: no per-expert quantisation, no scale swizzles
    fp8_only = [op for op in (*MOE_LAYER_FORWARD_HOST_OPS, *MOE_LAYER_BACKWARD_HOST_OPS) if op[4]]
    assert sum(op[1] for op in fp8_only) == 4 + 8 and sum(op[2] for op in fp8_only) == 2 + 2
    assert moe_layer_host_ops(16, "backward", fp8=False) == 48 + 4 * 16
    with pytest.raises(ValueError):
        moe_layer_host_ops(16, "sideways")


def test_per_op_host_time_is_the_cuda_graph_measurement() -> None:
    """Megatron-Bridge's CUDA-graph guide: 623 -> 484 ms a step when attention, router
    and preprocessing are replayed, over (m + p - 1) = 3 stage passes of 24 layers; the
    graphs cover 19 + 29 attention, 9 + 8 router and 7 preprocessing operations."""
    covered = sum(
        op[1] for op in (*MOE_LAYER_FORWARD_HOST_OPS, *MOE_LAYER_BACKWARD_HOST_OPS)
        if op[3] in _GRAPHED
    )  # fmt: skip
    assert covered == 72
    per_op = (0.623 - 0.484) / (3 * 24) / covered
    assert MEGATRON_HOST_TIME_PER_OP_S == pytest.approx(per_op, rel=0.01)


def test_graphs_remove_their_stages_and_full_iteration_everything() -> None:
    assert moe_layer_host_ops(16, graphed=_GRAPHED) == 124 - 19 - 9 - 7
    assert moe_layer_host_ops(16, "backward", graphed=_GRAPHED) == 152 - 29 - 8
    assert moe_layer_host_ops(16, graphed=("full_iteration",)) == 0.0
    assert moe_layer_host_time(16, 0.0, graphed=("full_iteration",)) == 0.0


@given(
    local=st.integers(1, 64),
    backward_s=st.floats(0.0, 0.05),
    more=st.floats(0.0, 0.01),
)
def test_host_time_grows_with_experts_and_hides_behind_backward(
    local: int, backward_s: float, more: float
) -> None:
    """The forward's host work always shows (the dispatcher's wait); the backward's only
    beyond the device's backward time."""
    t = moe_layer_host_time(local, backward_s)
    fwd = moe_layer_host_ops(local) * MEGATRON_HOST_TIME_PER_OP_S
    assert t >= fwd * (1 - 1e-12)
    assert moe_layer_host_time(local + 1, backward_s) >= t
    assert moe_layer_host_time(local, backward_s + more) <= t + 1e-15


def test_cuda_graph_scope_is_validated() -> None:
    assert TrainingLayout(cuda_graph_scope=["moe_router", "attn"]).cuda_graph_scope == (
        "attn",
        "moe_router",
    )
    for bad in (["mlp_everything"], ("full_iteration", "attn"), 3):
        with pytest.raises(ParameterError):
            TrainingLayout(cuda_graph_scope=bad)


def test_solve_reports_moe_host_time_and_graphs_remove_it() -> None:
    node = Nodes["DGX_H100"]
    fleet = Fleet(node=node, count=1, fabric=Fabrics["IB_NDR"])
    kw = dict(batch_size=64, precision="bf16", ep_size=8, microbatch_count=8, zero_stage=1)
    eager = DistributedModel().solve(Models["Qwen3_30B_A3B"], fleet, **kw)
    graphed = DistributedModel().solve(
        Models["Qwen3_30B_A3B"], fleet, cuda_graph_scope=list(_GRAPHED), **kw
    )
    free = DistributedModel().solve(
        Models["Qwen3_30B_A3B"], fleet, cuda_graph_scope=("full_iteration",), **kw
    )
    assert eager.si("moe_host_time") > graphed.si("moe_host_time") > 0.0
    assert free.si("moe_host_time") == 0.0
    # the host time is part of the step, on top of what the device does
    assert eager.si("step_time") - free.si("step_time") == pytest.approx(
        eager.si("moe_host_time"), rel=1e-9
    )
    # 8 micro-batches of 48 MoE layers, each at least its 56 + 2·16 = 88 forward
    # operations (bf16 GEMMs: no per-expert quantisation)
    per_layer = eager.si("moe_host_time") / (8 * 48)
    assert per_layer >= 88 * MEGATRON_HOST_TIME_PER_OP_S
    assert moe_layer_host_ops(16, fp8=False) == 88.0
    dense = DistributedModel().solve(Models["Llama3_8B"], fleet, batch_size=64, microbatch_count=8)
    assert dense.si("moe_host_time") == 0.0
    graphed_dense = DistributedModel().solve(
        Models["Llama3_8B"], fleet, batch_size=64, microbatch_count=8, cuda_graph_scope=("attn",)
    )
    assert any("cuda_graph_scope has no effect" in n for n in graphed_dense.notes)
    assert not any("cuda_graph_scope" in n for n in eager.notes + graphed.notes)


def test_search_prices_the_host_work_as_a_solve_does() -> None:
    """Every layout of a search carries the same host time a solve gives it; with the
    host's work per micro-batch, the best layout runs the fewest micro-batches that fit."""
    from mlsys.core.solvers.search import ParallelismSearch

    fleet = Fleet(node=Nodes["DGX_H100"], count=4, fabric=Fabrics["IB_NDR"])
    kw = dict(batch_size=256, precision="bf16", cuda_graph_scope=_GRAPHED)
    found = ParallelismSearch().solve(Models["Qwen3_30B_A3B"], fleet, **kw)
    best = found.best_layout
    again = DistributedModel().solve(Models["Qwen3_30B_A3B"], fleet, **kw, **best)
    assert found.best.si("tokens_per_second") == pytest.approx(again.si("tokens_per_second"))
    assert again.si("moe_host_time") > 0.0
    free = ParallelismSearch().solve(
        Models["Qwen3_30B_A3B"], fleet, batch_size=256, precision="bf16",
        cuda_graph_scope=("full_iteration",),
    )  # fmt: skip
    assert free.best.si("tokens_per_second") > found.best.si("tokens_per_second")
