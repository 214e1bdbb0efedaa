"""The book's MoERoutingModel on mlsys's parameter count and all-to-all formula."""

from __future__ import annotations

import pytest

from mlsys import Models, Systems
from mlsys.compat.solvers import MoERoutingModel
from mlsys.core.errors import ParameterError

DSV3 = Models.Language.DeepSeek_V3  # top-8 of 256 routed experts, hidden 7168


def test_imbalance_scales_the_routed_experts_share():
    res = MoERoutingModel().solve(DSV3, 1, 4096, routing_imbalance_factor=1.5)
    assert res.effective_active_experts == 12.0  # min(256, 8 x 1.5)
    assert res.active_parameter_multiplier == 1.5
    counts = DSV3.as_workload().param_breakdown  # mlsys's count of DeepSeek-V3
    routed, active = counts["mlp_experts_active"], counts["active"]  # 20.4 B of 34.4 B
    assert res.si("effective_active_parameters") == pytest.approx(active + 0.5 * routed)
    capped = MoERoutingModel().solve(DSV3, 1, 4096, routing_imbalance_factor=64)
    assert capped.effective_active_experts == 256.0  # every expert: min(256, 512)
    assert capped.active_parameter_multiplier == 32.0


def test_dispatch_all_to_all_on_the_fleet_fabric():
    res = MoERoutingModel().solve(
        DSV3, 1, 4096, ep_size=8, routing_imbalance_factor=1.5,
        fleet=Systems.Clusters.Research_256,
    )  # fmt: skip
    buffer = 4096 * 8 * 1.5 * 7168 * 2  # tokens x k x f x hidden x fp16 bytes
    assert res.si("token_dispatch_bytes") == pytest.approx(buffer * 7 / 8)  # 616.6 MB leave
    # pairwise exchange (Thakur et al. 2005): 7 steps of 30 us, 7/8 of the buffer at 12.5 GB/s
    expected = 7 * 30e-6 + 7 / 8 * buffer / 12.5e9
    assert res.si("all_to_all_latency") == pytest.approx(expected, rel=1e-9)
    assert res.ep_size == 8
    local = MoERoutingModel().solve(DSV3, 1, 4096)
    assert local.all_to_all_latency is None and local.si("token_dispatch_bytes") == 0.0


def test_dense_models_and_bad_factors_are_refused():
    with pytest.raises(ParameterError, match="model"):
        MoERoutingModel().solve(Models.Language.Llama3_8B, 1, 4096)
    with pytest.raises(ParameterError, match="routing_imbalance_factor"):
        MoERoutingModel().solve(DSV3, 1, 4096, routing_imbalance_factor=0.5)
