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
