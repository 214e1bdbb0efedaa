"""``ParallelismOptimizer``: the book's TP x PP x DP split, searched by mlsys's layout search."""

from __future__ import annotations

import pytest

from mlsys import Fabrics, Fleet, Models, Nodes, ParallelismOptimizer, ParallelismSearch, Systems
from mlsys.compat._unwrap import as_catalog
from mlsys.core.errors import InfeasibleError, ParameterError


@pytest.fixture(scope="module")
def gpt3_frontier():
    return ParallelismOptimizer().solve(
        Models.Language.GPT3, Systems.Clusters.Frontier_8K, batch_size=4096, max_pp=8
    )


def test_gpt3_on_the_frontier_fleet_keeps_tensor_parallelism_on_the_node(gpt3_frontier):
    fleet = as_catalog(Systems.Clusters.Frontier_8K)
    cfg = gpt3_frontier.best_config
    # 1,024 nodes of 8 H100s: the split uses all 8,192 GPUs (the book's guard)
    assert cfg["tp"] * cfg["pp"] * cfg["dp"] == fleet.count * fleet.node.accelerators_per_node
    assert fleet.count * fleet.node.accelerators_per_node == 8192
    # Narayanan et al. (2021), Sec. 3: tensor parallelism over one node's NVLink (8 GPUs)
    assert cfg["tp"] == fleet.node.accelerators_per_node == 8
    assert cfg["pp"] <= 8
    assert 96 % cfg["pp"] == 0  # GPT-3's 96 layers split evenly over the stages


def test_best_is_the_highest_mfu_of_plain_3d_layouts(gpt3_frontier):
    rows = gpt3_frontier.search.top(gpt3_frontier.search.feasible_count)
    assert gpt3_frontier.best_mfu == max(r["mfu"] for r in rows)
    assert 0 < gpt3_frontier.best_mfu < 1
    # plain 3D parallelism: no sharded states, no interleaving, no sequence parallelism
    assert {(r["zero_stage"], r["v_stages"], r["sequence_parallel"]) for r in rows} == {
        (0, 1, False)
    }
    # the whole search space (ZeRO, interleaving ...) finds at least as good a layout
    full = ParallelismSearch().solve(
        as_catalog(Models.Language.GPT3),
        as_catalog(Systems.Clusters.Frontier_8K),
        batch_size=4096,
        precision="fp16",
        tp_sizes=(1, 2, 4, 8),
        pp_sizes=(1, 2, 4, 8),
    )
    assert full.top(1)[0]["mfu"] >= gpt3_frontier.best_mfu


def test_degree_limits_and_a_fleet_too_small():
    opt = ParallelismOptimizer()
    small = Fleet(node=Nodes.DGX_H100, count=1, fabric=Fabrics.IB_NDR)
    res = opt.solve(Models.Language.Llama3_8B, small, batch_size=64, max_tp=2)
    assert res.best_config["tp"] <= 2
    assert res.best_config["tp"] * res.best_config["pp"] * res.best_config["dp"] == 8
    with pytest.raises(ParameterError, match="max_tp"):
        opt.solve(Models.Language.Llama3_8B, small, batch_size=64, max_tp=0)
    # 175e9 parameters with unsharded fp16 states (16 B each) cannot fit 8 x 80 GB
    with pytest.raises(InfeasibleError):
        opt.solve(Models.Language.GPT3, small, batch_size=64)
