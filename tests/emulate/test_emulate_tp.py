"""Tensor-parallel matmuls and the Megatron MLP: same numbers as unsharded, formula's bytes."""

from __future__ import annotations

from collections import Counter

import pytest

pytest.importorskip("torch")

from mlsys.core.formulas.sharding import (
    SHARDING_POLICIES,
    matmul_bytes_per_rank,
    megatron_mlp_bytes_per_rank,
)

pytestmark = pytest.mark.emulate

m, k, n, E = 64, 128, 32, 4  # tests/emulate/conftest.py DIMS, fp32


def _hand_bytes(policy: str, N: int) -> float:
    f = (N - 1) / N
    return {
        "unsharded": 0.0,
        "inner": 2 * f * m * n * E,
        "inner_a": f * m * k * E,
        "inner_b": f * k * n * E,
        "outer_m": f * m * n * E,
        "outer_n": f * m * n * E,
        # 2 × 2 mesh: all-reduce of m n e / 2 over 2, then all-gather of m n e over 2.
        "outer_inner": 0.5 * m * n * E + 0.5 * m * n * E,
    }[policy]


@pytest.mark.parametrize("policy", SHARDING_POLICIES)
def test_every_policy_equals_unsharded(matmul_4, policy):
    for rep in matmul_4:
        assert rep[policy]["rel_err"] < 1e-5
        assert rep[policy]["dtensor_rel_err"] < 1e-5


@pytest.mark.parametrize("policy", SHARDING_POLICIES)
def test_measured_bytes_equal_formula(matmul_4, policy):
    expected = _hand_bytes(policy, 4)
    assert matmul_bytes_per_rank(policy, m, k, n, 4) == pytest.approx(expected)
    for rep in matmul_4:
        assert rep[policy]["bytes_sent"] == pytest.approx(expected, abs=0.5)
        assert rep[policy]["bytes_recv"] == pytest.approx(expected, abs=0.5)
        assert rep[policy]["predicted_bytes"] == pytest.approx(expected)


@pytest.mark.parametrize("policy", SHARDING_POLICIES)
def test_dtensor_issues_the_formulas_collectives(matmul_4, policy):
    rep = matmul_4[0][policy]
    assert Counter(rep["dtensor_comms"]) == Counter(rep["predicted_steps"])


def test_inner_product_is_partial_before_reduction(matmul_4):
    assert "Partial" in matmul_4[0]["inner"]["dtensor_placements"]
    assert matmul_4[0]["outer_inner"]["dtensor_placements"].startswith("(Shard(dim=0), Partial")


def test_sharded_outputs(matmul_4_sharded):
    mn = m * n * E
    for rep in matmul_4_sharded:
        # reduce-scatter instead of all-reduce: (N-1)/N · m n e
        assert rep["inner"]["bytes_sent"] == 0.75 * mn
        assert rep["outer_m"]["bytes_sent"] == 0.0
        assert rep["outer_n"]["bytes_sent"] == 0.0
        # 2 × 2 mesh: reduce-scatter of m n e / 2 over the inner pair, no gather.
        assert rep["outer_inner"]["bytes_sent"] == 0.5 * mn / 2
        for policy in ("inner", "outer_m", "outer_n", "outer_inner"):
            assert rep[policy]["rel_err"] < 1e-5
            assert rep[policy]["bytes_sent"] == rep[policy]["predicted_bytes"]


def test_megatron_ffn_forward_backward(ffn_4):
    b, s, h, t = 2, 8, 32, 4
    # Shoeybi et al. 2019: one all-reduce of b·s·h per pass; ring sends 2(t-1)/t of it.
    per_pass = 2 * (t - 1) / t * b * s * h * E
    assert megatron_mlp_bytes_per_rank(b, s, h, t, "fp32", "forward") == per_pass
    for rep in ffn_4:
        assert rep["allreduces"] == 2
        assert rep["forward_bytes"] == per_pass == rep["predicted_forward_bytes"]
        assert rep["backward_bytes"] == per_pass == rep["predicted_backward_bytes"]
        for name, err in rep["rel_err"].items():
            assert err < 1e-5, name
