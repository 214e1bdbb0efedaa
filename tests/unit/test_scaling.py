"""scaling_curve: strong scaling, marginal speed-up, the communication wall."""

from __future__ import annotations

import numpy as np
import pytest

from mlsys.core.catalog import Fabrics, Models, Nodes
from mlsys.core.errors import ParameterError
from mlsys.core.solvers.scaling import ScalingResult, scaling_curve

SIZES = [1, 2, 4, 8, 16, 32, 64]


def curve(fabric, **kw):
    return scaling_curve(
        Models.Llama3_8B, Nodes.DGX_H100, fabric, nodes=SIZES, batch_size=512, zero_stage=2,
        **kw,
    )  # fmt: skip


def test_fields_and_units():
    res = curve(Fabrics.IB_NDR)
    assert isinstance(res, ScalingResult)
    assert res.tokens_per_second.to("token/s").magnitude.shape == (7,)
    assert res.step_time.to("ms").magnitude.shape == (7,)
    np.testing.assert_array_equal(res.accelerators, np.array(SIZES) * 8)
    assert res.feasible.all()


def test_marginal_speedup_is_derived_from_throughput():
    res = curve(Fabrics.ETH_10G)
    tok = res.si("tokens_per_second")
    n = res.accelerators
    assert np.isnan(res.marginal_speedup[0])
    np.testing.assert_allclose(
        res.marginal_speedup[1:], (tok[1:] / tok[:-1] - 1) / (n[1:] / n[:-1] - 1)
    )
    np.testing.assert_allclose(res.scaling_efficiency, (tok / n) / (tok[0] / n[0]))


def test_a_slow_network_hits_the_wall_a_fast_one_does_not():
    fast, slow = curve(Fabrics.IB_NDR), curve(Fabrics.ETH_10G)
    # 10 GbE: the first step off one node halves the gradient bandwidth per GPU by 45x
    assert slow.communication_wall == 16.0
    assert slow.communication_wall_nodes == 2.0
    assert fast.communication_wall is None or fast.communication_wall > slow.communication_wall
    assert np.all(fast.si("tokens_per_second")[1:] >= slow.si("tokens_per_second")[1:])


def test_threshold_moves_the_wall():
    res = curve(Fabrics.ETH_10G, threshold=0.9)
    assert res.communication_wall == 16.0
    assert res.threshold == 0.9


def test_invalid_sizes_become_infeasible_points():
    res = scaling_curve(
        Models.Llama3_8B, Nodes.DGX_H100, Fabrics.IB_NDR, nodes=[1, 3], batch_size=512,
        zero_stage=2,
    )  # fmt: skip
    assert res.feasible.tolist() == [True, False]  # 512 not divisible by 24 replicas
    assert np.isnan(res.si("step_time")[1])


@pytest.mark.parametrize("nodes", [[], [2, 1], [0, 1], [1.5]])
def test_bad_nodes(nodes):
    with pytest.raises(ParameterError, match="nodes"):
        scaling_curve(Models.Llama3_8B, Nodes.DGX_H100, Fabrics.IB_NDR, nodes=nodes,
                      batch_size=64)  # fmt: skip
