"""Bytes per rank of a tensor-parallel matmul under each sharding policy, derived by hand."""

from __future__ import annotations

import numpy as np
import pytest

from mlsys.core.errors import ParameterError
from mlsys.core.formulas import collectives as C
from mlsys.core.formulas import sharding as S

m, k, n = 1024, 512, 256
E = 4  # fp32


@pytest.mark.parametrize("N", [2, 4, 8])
def test_policy_table(N):
    f = (N - 1) / N
    expected = {
        "unsharded": 0.0,
        # partial sums of C, all-reduced: 2(N-1)/N · m n e
        "inner": 2 * f * m * n * E,
        # A split on k only: gather A (m × k)
        "inner_a": f * m * k * E,
        # B split on k only: gather B (k × n)
        "inner_b": f * k * n * E,
        # output split on m or n: gather C
        "outer_m": f * m * n * E,
        "outer_n": f * m * n * E,
    }
    for policy, value in expected.items():
        assert S.matmul_bytes_per_rank(policy, m, k, n, N, "fp32") == pytest.approx(value), policy


def test_sharded_outputs():
    N, f = 4, 3 / 4
    assert S.matmul_bytes_per_rank("inner", m, k, n, N, output="sharded") == f * m * n * E
    (step,) = S.matmul_collectives("inner", m, k, n, N, output="sharded")
    assert step.kind == "reduce_scatter"
    assert S.matmul_bytes_per_rank("outer_m", m, k, n, N, output="sharded") == 0.0


def test_outer_inner_on_2x2_and_2x4():
    # 2 × 2: all-reduce of C[m/2, n] over 2 ranks (sends 2·(1/2)·m n e/2), then all-gather
    # of C over 2 ranks (sends (1/2)·m n e).
    mn = m * n * E
    assert S.matmul_bytes_per_rank("outer_inner", m, k, n, 4) == pytest.approx(mn / 2 + mn / 2)
    steps = S.matmul_collectives("both", m, k, n, 4)
    assert [(s.kind, s.group_size) for s in steps] == [("all_reduce", 2), ("all_gather", 2)]
    assert steps[0].message_bytes == mn / 2
    # 8 ranks, inner axis 2 (default most-square split: Ti = 2, To = 4):
    # all-reduce of mn/4 over 2 -> mn/4; all-gather of mn over 4 -> 3mn/4.
    assert S.matmul_bytes_per_rank("outer_inner", m, k, n, 8) == pytest.approx(mn)
    # inner axis 4, outer 2: all-reduce of mn/2 over 4 -> 1.5 · mn/2; gather over 2 -> mn/2.
    assert S.matmul_bytes_per_rank("outer_inner", m, k, n, 8, inner_ranks=4) == pytest.approx(
        0.75 * mn + 0.5 * mn
    )
    # Degenerate meshes reduce to the 1-D policies.
    assert S.matmul_bytes_per_rank("outer_inner", m, k, n, 4, inner_ranks=4) == pytest.approx(
        S.matmul_bytes_per_rank("inner", m, k, n, 4)
    )
    assert S.matmul_bytes_per_rank("outer_inner", m, k, n, 4, inner_ranks=1) == pytest.approx(
        S.matmul_bytes_per_rank("outer_m", m, k, n, 4)
    )
    with pytest.raises(ParameterError, match="inner_ranks"):
        S.matmul_bytes_per_rank("outer_inner", m, k, n, 4, inner_ranks=3)


def test_docstring_example_and_precision():
    (step,) = S.matmul_collectives("inner", 1024, 1024, 1024, 4)
    assert step.bytes_per_rank == 1.5 * 4 * 2**20
    assert S.matmul_bytes_per_rank("inner", 1024, 1024, 1024, 4, "bf16") == 1.5 * 2 * 2**20
    assert S.matmul_bytes_per_rank("inner", 1024, 1024, 1024, 4, 2) == 1.5 * 2 * 2**20


def test_one_rank_moves_nothing():
    for policy in S.SHARDING_POLICIES:
        assert S.matmul_bytes_per_rank(policy, m, k, n, 1) == 0.0


def test_vectorised_over_dimensions():
    sizes = np.array([128, 256, 512])
    out = S.matmul_bytes_per_rank("inner", sizes, k, sizes, 4)
    np.testing.assert_allclose(out, 1.5 * sizes * sizes * E)


def test_communication_time():
    # One ring all-reduce of the 128 MiB bf16 result on 8 ranks.
    t = S.matmul_communication_time("inner", 8192, 8192, 8192, 8, 450e9, 1e-6, "bf16")
    assert t == pytest.approx(C.ring_allreduce_time(8192 * 8192 * 2, 8, 450e9, 1e-6))
    assert t == pytest.approx(536.0e-6, abs=0.1e-6)
    assert S.matmul_communication_time("unsharded", 8192, 8192, 8192, 8, 450e9, 1e-6) == 0.0
    t2 = S.matmul_communication_time("both", m, k, n, 4, 450e9, 1e-6)
    assert t2 == pytest.approx(
        C.ring_allreduce_time(m * n * E / 2, 2, 450e9, 1e-6)
        + C.allgather_time(m * n * E, 2, 450e9, 1e-6)
    )


def test_megatron_mlp():
    # Shoeybi et al. 2019 Sec. 3: one all-reduce of b·s·h per pass.
    assert S.megatron_mlp_allreduce_bytes(1, 2048, 12288, "bf16") == 2048 * 12288 * 2
    fwd = S.megatron_mlp_bytes_per_rank(1, 2048, 12288, 8, "bf16", passes="forward")
    assert fwd == pytest.approx(2 * 7 / 8 * 2048 * 12288 * 2)
    assert S.megatron_mlp_bytes_per_rank(1, 2048, 12288, 8, "bf16") == pytest.approx(2 * fwd)
    assert S.megatron_mlp_bytes_per_rank(1, 2048, 12288, 1) == 0.0
    with pytest.raises(ParameterError, match="passes"):
        S.megatron_mlp_bytes_per_rank(1, 2048, 12288, 8, passes="sideways")


def test_bad_policy_and_inputs():
    with pytest.raises(ParameterError, match="policy"):
        S.matmul_bytes_per_rank("diagonal", m, k, n, 4)
    with pytest.raises(ParameterError, match="output"):
        S.matmul_bytes_per_rank("inner", m, k, n, 4, output="scattered")
    with pytest.raises(ParameterError, match="ranks"):
        S.matmul_bytes_per_rank("inner", m, k, n, 0)
    with pytest.raises(ParameterError, match="precision"):
        S.matmul_bytes_per_rank("inner", m, k, n, 4, "fp7")
    with pytest.raises(ParameterError, match="m"):
        S.matmul_bytes_per_rank("inner", 0, k, n, 4)
