"""The book's NetworkRooflineModel: one token's work against a ring all-reduce of its gradient."""

from __future__ import annotations

import pytest

from mlsys import Models, Systems
from mlsys.compat.solvers import NetworkRooflineModel
from mlsys.core.errors import ParameterError

PARAMS = 8_030_261_248  # the catalog's Llama 3 8B


def test_a_100_gbe_fleet_is_network_bound():
    res = NetworkRooflineModel().solve(Models.Language.Llama3_8B, Systems.Clusters.Research_256)
    n, alpha, beta = 256, 30e-6, 12.5e9  # H100s on 100 GbE: 12.5 GB/s, 30 us, non-blocking
    grad = PARAMS * 2  # fp16 gradient
    # ring all-reduce (Patarasuk & Yuan 2009): 2(n-1) steps of α, 2(n-1)/n · M / β
    ring = 2 * (n - 1) * alpha + 2 * (n - 1) / n * grad / beta  # 2.575 s
    assert res.si("latency_memory") == pytest.approx(ring, rel=1e-9)
    compute = 6 * PARAMS / (n * 989.4e12 * 0.5)  # one token's 6N FLOPs over the fleet
    assert res.si("latency_compute") == pytest.approx(compute, rel=1e-9)
    assert res.si("latency") == pytest.approx(ring, rel=1e-9)
    assert res.bottleneck == "Network"
    assert res.arithmetic_intensity == pytest.approx(6 * PARAMS / (2 * 255 / 256 * grad))
    assert res.network_ridge == pytest.approx(989.4e12 / beta)
    assert res.mfu == pytest.approx(6 * PARAMS / ring / (n * 989.4e12), rel=1e-9)
    assert res.hfu == res.mfu
    assert res.si("memory_footprint") == pytest.approx(grad)


def test_bad_efficiency_is_refused():
    with pytest.raises(ParameterError, match="efficiency"):
        NetworkRooflineModel().solve(
            Models.Language.Llama3_8B, Systems.Clusters.Research_256, efficiency=0
        )


def test_topology_bisection_of_ndr_links():
    from mlsys.compat.solvers import TopologyModel

    ndr = Systems.Fabrics.InfiniBand_NDR  # 400 Gb/s: 50 GB/s per link, non-blocking
    ring = TopologyModel().solve(ndr, "ring", 64)
    assert ring.bisection_bw_fraction == pytest.approx(4 / 64)
    assert ring.si("effective_bw") == pytest.approx(50e9 * 4 / 64)
    # the bisection: 2 links of 50 GB/s
    assert ring.si("bisection_bw") == pytest.approx(2 * 50e9)
    assert ring.hops_avg == 16.0
    tree = TopologyModel().solve(ndr)  # the book's defaults: fat tree, 64 nodes
    assert tree.si("bisection_bw") == pytest.approx(32 * 50e9)
    assert tree.topology == "fat_tree" and tree.num_nodes == 64
    with pytest.raises(ParameterError, match="topology"):
        TopologyModel().solve(ndr, "dragonfly", 64)
