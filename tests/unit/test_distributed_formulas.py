"""Communication volumes of tensor, data, ZeRO and expert parallelism; group placement."""

from __future__ import annotations

import numpy as np
import pytest

from mlsys.core.errors import ParameterError
from mlsys.core.formulas.parallel import (
    dp_gradient_bytes,
    group_placement,
    moe_alltoall_bytes_per_layer,
    tp_bytes_per_layer,
    tp_collectives_per_layer,
    zero_dp_bytes_per_rank,
)


def test_megatron_two_allreduces_forward_two_backward():
    assert tp_collectives_per_layer()["all_reduce"] == 4
    sp = tp_collectives_per_layer(sequence_parallel=True)
    assert sp == {"all_reduce": 0, "all_gather": 4, "reduce_scatter": 4}
    assert tp_collectives_per_layer(recompute="full")["all_reduce"] == 6
    assert tp_collectives_per_layer(recompute="selective")["all_reduce"] == 4


def test_sequence_parallel_moves_the_same_bytes():
    # all-reduce = reduce-scatter + all-gather (Korthikanti et al. 2022, Sec. 4.2.2)
    a = tp_bytes_per_layer(2048, 1, 12288, 8)
    b = tp_bytes_per_layer(2048, 1, 12288, 8, sequence_parallel=True)
    assert a == pytest.approx(b)
    # 4 all-reduces of M = 50.33 MB, each 2·7/8·M per rank
    assert a == pytest.approx(4 * 2 * 7 / 8 * 2048 * 12288 * 2)


def test_zero3_moves_one_and_a_half_times_zero0():
    # Rajbhandari et al. 2020, Sec. 7: 2Ψ for DP and ZeRO-1/2, 3Ψ for ZeRO-3.
    base = zero_dp_bytes_per_rank(7.5e9, 64, 0)
    assert zero_dp_bytes_per_rank(7.5e9, 64, 1) == pytest.approx(base)
    assert zero_dp_bytes_per_rank(7.5e9, 64, 2) == pytest.approx(base)
    assert zero_dp_bytes_per_rank(7.5e9, 64, 3) == pytest.approx(1.5 * base)
    with pytest.raises(ParameterError, match="zero_stage"):
        zero_dp_bytes_per_rank(1e9, 8, 4)


def test_gradient_bytes_follow_the_gradient_dtype_not_compute():
    assert dp_gradient_bytes(1e9) == 4e9  # fp32 default
    assert dp_gradient_bytes(1e9, 2) == 2e9


def test_moe_alltoall_volume():
    # 4 all-to-alls (dispatch + combine, forward + backward) of s·b·k·h·e per rank
    m = 4096 * 1 * 2 * 4096 * 2
    assert moe_alltoall_bytes_per_layer(4096, 1, 4096, 2, 8) == pytest.approx(4 * 7 / 8 * m)
    full = moe_alltoall_bytes_per_layer(4096, 1, 4096, 2, 8, recompute="full")
    assert full == pytest.approx(6 * 7 / 8 * m)


def test_group_placement():
    assert group_placement(8, 1, 8) == (8.0, 1.0)  # TP 8 inside a DGX
    assert group_placement(16, 1, 8) == (8.0, 2.0)  # TP 16 spans two
    assert group_placement(64, 8, 8) == (1.0, 64.0)  # DP across nodes
    assert group_placement(16, 2, 8) == (4.0, 4.0)
    per, nodes = group_placement(np.array([2, 4, 32]), np.array([4, 1, 4]), 8)
    np.testing.assert_allclose(per, [2, 4, 2])
    np.testing.assert_allclose(nodes, [1, 1, 16])
