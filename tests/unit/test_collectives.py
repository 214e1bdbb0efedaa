"""Alpha-beta collective costs: worked numbers, published factors, limits and identities."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsys.core.errors import MlsysError, ParameterError, UnitError
from mlsys.core.formulas import collectives as C
from mlsys.core.formulas.collectives import (
    NVLINK_WIRE_EFFICIENCY,
    bus_bandwidth,
    nccl_allreduce_time,
    nccl_ring_time,
    nvls_allreduce_time,
)
from mlsys.core.units import Q_

# STYLE.md's worked example: 1 GB, 8 ranks, 450 GB/s per direction (H100 NVLink 4), 1 µs.
M, N, BW, ALPHA = 1e9, 8, 450e9, 1e-6


def test_ring_allreduce_style_example():
    # 2(n-1)·α = 14 µs; 2(n-1)/n · M/β = 1.75e9 / 450e9 = 3.88889 ms.
    expected = 14e-6 + 1.75e9 / 450e9
    assert C.ring_allreduce_time(M, N, BW, ALPHA) == pytest.approx(expected, rel=1e-12)
    assert C.ring_allreduce_time(M, N, BW, ALPHA) == pytest.approx(3.9029e-3, abs=5e-8)


def test_ring_allreduce_accepts_quantities():
    t = C.ring_allreduce_time(Q_(1, "GB"), 8, Q_(450, "GB/s"), Q_(1, "us"))
    assert t == pytest.approx(3.902889e-3, rel=1e-6)
    t2 = C.ring_allreduce_time("1 GB", 8, "3.6 Tbit/s", "1 us")  # 3.6 Tb/s = 450 GB/s
    assert t2 == pytest.approx(t, rel=1e-12)


def test_ring_allreduce_volume_is_patarasuk_yuan_bound():
    # Patarasuk & Yuan 2009: each process sends at least 2(N-1)/N · M bytes.
    for n in (2, 4, 8, 64):
        assert C.ring_allreduce_bytes_per_rank(M, n) == pytest.approx(2 * (n - 1) / n * M)
    assert C.ring_allreduce_bytes_per_rank(1e9, 8) == 1.75e9


def test_one_rank_costs_nothing():
    for fn in (
        C.ring_allreduce_time,
        C.tree_allreduce_time,
        C.allgather_time,
        C.reduce_scatter_time,
        C.alltoall_time,
        C.broadcast_time,
        C.reduce_time,
    ):
        assert fn(M, 1, BW, ALPHA) == 0.0, fn.__name__
    for kind in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast", "reduce"):
        assert C.collective_bytes_per_rank(kind, M, 1) == 0.0


@pytest.mark.parametrize(
    ("kind", "factor"),
    [
        # nccl-tests doc/PERFORMANCE.md, n = 8
        ("all_reduce", 2 * 7 / 8),
        ("AllReduce", 2 * 7 / 8),
        ("reduce_scatter", 7 / 8),
        ("all-gather", 7 / 8),
        ("alltoall", 7 / 8),
        ("broadcast", 1.0),
        ("reduce", 1.0),
        ("sendrecv", 1.0),
    ],
)
def test_bus_bandwidth_factors_nccl_tests(kind, factor):
    assert C.bus_bandwidth_factor(kind, 8) == pytest.approx(factor)


def test_bus_bandwidth_factor_vectorised():
    n = np.array([2, 4, 8, 16])
    np.testing.assert_allclose(C.bus_bandwidth_factor("all_reduce", n), 2 * (n - 1) / n)
    np.testing.assert_allclose(C.bus_bandwidth_factor("broadcast", n), np.ones(4))


def test_bus_bandwidth_of_ideal_ring_is_link_bandwidth():
    # With α = 0 a ring all-reduce's bus bandwidth is exactly the link bandwidth: that is
    # what the nccl-tests factor is designed to show.
    for n in (2, 8, 128):
        t = C.ring_allreduce_time(M, n, BW, 0.0)
        assert C.bus_bandwidth(M, t, "all_reduce", n) == pytest.approx(BW)
        t = C.allgather_time(M, n, BW, 0.0)
        assert C.bus_bandwidth(M, t, "all_gather", n) == pytest.approx(BW)
        t = C.broadcast_time(M, n, BW, 0.0)
        assert C.bus_bandwidth(M, t, "broadcast", n) == pytest.approx(BW)


def test_allgather_reduce_scatter_alltoall_values():
    # (n-1)α + (n-1)/n · M/β = 7 µs + 0.875e9/450e9
    expected = 7e-6 + 0.875e9 / 450e9
    for fn in (C.allgather_time, C.reduce_scatter_time, C.alltoall_time):
        assert fn(M, N, BW, ALPHA) == pytest.approx(expected, rel=1e-12)
    assert C.alltoall_time(64e6, 8, 50e9, 5e-6) == pytest.approx(35e-6 + 56e6 / 50e9)


def test_ring_allreduce_is_reduce_scatter_plus_allgather():
    n = np.arange(2, 20)
    np.testing.assert_allclose(
        C.ring_allreduce_time(M, n, BW, ALPHA),
        C.reduce_scatter_time(M, n, BW, ALPHA) + C.allgather_time(M, n, BW, ALPHA),
    )


def test_tree_allreduce_values_and_crossover():
    # 2·ceil(log2 n)·α + 2M/β: 1024 ranks -> 10 levels.
    assert C.tree_allreduce_time(1e6, 1024, 50e9, 5e-6) == pytest.approx(100e-6 + 40e-6)
    assert C.tree_allreduce_time(1e6, 1000, 50e9, 5e-6) == pytest.approx(100e-6 + 40e-6)
    # Small message, many ranks: tree wins (ring pays 2(n-1) latencies).
    assert C.tree_allreduce_time(1e6, 1024, 50e9, 5e-6) < C.ring_allreduce_time(
        1e6, 1024, 50e9, 5e-6
    )
    # Large message, few ranks: ring wins (2(n-1)/n < 2).
    assert C.ring_allreduce_time(1e9, 8, BW, ALPHA) < C.tree_allreduce_time(1e9, 8, BW, ALPHA)


def test_hierarchical_worked_example():
    # 4 nodes × 8 GPUs: intra RS+AG 2·(7 µs + 0.875 GB / 450 GB/s); inter ring on M/8
    # over 4 nodes: 6·5 µs + 1.5 · 125 MB / 50 GB/s.
    expected = 2 * (7e-6 + 0.875e9 / 450e9) + (30e-6 + 1.5 * 125e6 / 50e9)
    t = C.hierarchical_allreduce_time(1e9, 8, 4, 450e9, 1e-6, 50e9, 5e-6)
    assert t == pytest.approx(expected, rel=1e-12)
    assert t == pytest.approx(7.683e-3, abs=5e-7)


def test_hierarchical_limits():
    # One node: a ring all-reduce over NVLink. One rank per node: a ring over the NIC.
    assert C.hierarchical_allreduce_time(M, 8, 1, BW, ALPHA, 50e9, 5e-6) == pytest.approx(
        C.ring_allreduce_time(M, 8, BW, ALPHA)
    )
    assert C.hierarchical_allreduce_time(M, 1, 16, BW, ALPHA, 50e9, 5e-6) == pytest.approx(
        C.ring_allreduce_time(M, 16, 50e9, 5e-6)
    )
    # A flat ring across 32 ranks limited by the 50 GB/s NIC is slower.
    flat = C.ring_allreduce_time(M, 32, 50e9, 5e-6)
    assert C.hierarchical_allreduce_time(M, 8, 4, BW, ALPHA, 50e9, 5e-6) < flat


def test_hierarchical_bytes():
    intra, inter = C.hierarchical_allreduce_bytes_per_rank(1e9, 8, 4)
    assert (intra, inter) == (1.75e9, 187.5e6)
    assert C.collective_bytes_per_rank(
        "all_reduce", 1e9, 32, "hierarchical", ranks_per_node=8
    ) == pytest.approx(1.75e9 + 187.5e6)


def test_allreduce_dispatcher():
    assert C.allreduce_time(M, N, BW, ALPHA) == C.ring_allreduce_time(M, N, BW, ALPHA)
    assert C.allreduce_time(M, N, BW, ALPHA, "tree") == C.tree_allreduce_time(M, N, BW, ALPHA)
    h = C.allreduce_time(
        M,
        32,
        BW,
        ALPHA,
        "hierarchical",
        ranks_per_node=8,
        inter_bandwidth_Bps=50e9,
        inter_latency_s=5e-6,
    )
    assert h == C.hierarchical_allreduce_time(M, 8, 4, BW, ALPHA, 50e9, 5e-6)
    # Without inter-node figures, hierarchical on a uniform fabric.
    assert C.allreduce_time(M, 32, BW, ALPHA, "hierarchical", ranks_per_node=8) == pytest.approx(
        C.hierarchical_allreduce_time(M, 8, 4, BW, ALPHA, BW, ALPHA)
    )
    with pytest.raises(ParameterError, match="algorithm"):
        C.allreduce_time(M, N, BW, ALPHA, "butterfly")
    with pytest.raises(ParameterError, match="ranks_per_node"):
        C.allreduce_time(M, N, BW, ALPHA, "hierarchical")
    with pytest.raises(ParameterError, match="divisor"):
        C.allreduce_time(M, 12, BW, ALPHA, "hierarchical", ranks_per_node=8)


def test_collective_time_dispatch():
    assert C.collective_time("allreduce", M, N, BW, ALPHA) == C.ring_allreduce_time(M, N, BW, ALPHA)
    assert C.collective_time("broadcast", M, N, BW, ALPHA) == pytest.approx(7e-6 + M / BW)
    assert C.collective_time("reduce", M, N, BW, ALPHA) == pytest.approx(7e-6 + M / BW)
    assert C.collective_time("p2p", 16e6, 2, 50e9, 5e-6) == pytest.approx(5e-6 + 16e6 / 50e9)
    with pytest.raises(ParameterError, match="kind"):
        C.collective_time("gossip", M, N, BW, ALPHA)


def test_bytes_per_rank_table():
    n = 4
    assert C.collective_bytes_per_rank("all_gather", 1e9, n) == 0.75e9
    assert C.collective_bytes_per_rank("reduce_scatter", 1e9, n) == 0.75e9
    assert C.collective_bytes_per_rank("all_to_all", 1e9, n) == 0.75e9
    assert C.collective_bytes_per_rank("all_reduce", 1e9, n) == 1.5e9
    assert C.collective_bytes_per_rank("all_reduce", 1e9, n, "tree") == 2e9
    assert C.collective_bytes_per_rank("broadcast", 1e9, n) == 1e9
    assert C.collective_bytes_per_rank("send_recv", 1e9, 2) == 1e9


def test_time_is_bytes_over_bandwidth_plus_latency_steps():
    # For ring collectives the bandwidth term is exactly bytes-per-rank / β.
    for kind, steps in (("all_reduce", 2 * (N - 1)), ("all_gather", N - 1), ("all_to_all", N - 1)):
        t = C.collective_time(kind, M, N, BW, ALPHA)
        assert t == pytest.approx(steps * ALPHA + C.collective_bytes_per_rank(kind, M, N) / BW)


def test_oversubscription():
    assert C.effective_bandwidth(50e9, 2.0) == 25e9
    assert C.effective_bandwidth(50e9) == 50e9
    np.testing.assert_allclose(
        C.effective_bandwidth(50e9, np.array([1, 2, 4])), [50e9, 25e9, 12.5e9]
    )
    # 2:1 oversubscription doubles the bandwidth term of a cross-leaf all-reduce.
    t1 = C.ring_allreduce_time(M, 64, 50e9, 0.0)
    t2 = C.ring_allreduce_time(M, 64, C.effective_bandwidth(50e9, 2), 0.0)
    assert t2 == pytest.approx(2 * t1)
    with pytest.raises(ParameterError, match="oversubscription"):
        C.effective_bandwidth(50e9, 0.5)


def test_broadcasting_over_arrays():
    sizes = np.logspace(3, 9, 7)
    ranks = np.array([[2], [8], [64]])
    t = C.ring_allreduce_time(sizes, ranks, BW, ALPHA)
    assert t.shape == (3, 7)
    assert t[1, -1] == pytest.approx(C.ring_allreduce_time(1e9, 8, BW, ALPHA))
    assert np.all(np.diff(t, axis=1) > 0)


def test_bad_inputs_name_the_parameter():
    with pytest.raises(ParameterError, match="ranks"):
        C.ring_allreduce_time(M, 0, BW, ALPHA)
    with pytest.raises(ParameterError, match="ranks"):
        C.ring_allreduce_time(M, 2.5, BW, ALPHA)
    with pytest.raises(ParameterError, match="bandwidth_Bps"):
        C.ring_allreduce_time(M, 8, 0.0, ALPHA)
    with pytest.raises(ParameterError, match="message_bytes"):
        C.ring_allreduce_time(-1.0, 8, BW, ALPHA)
    with pytest.raises(UnitError):
        C.ring_allreduce_time(M, 8, Q_(450, "GB"), ALPHA)
    with pytest.raises(MlsysError):
        C.bus_bandwidth_factor("gather", 8)
    assert issubclass(ParameterError, ValueError)


@settings(max_examples=40, deadline=None)
@given(
    M=st.floats(1.0, 1e12),
    n=st.integers(2, 4096),
    bw=st.floats(1e6, 1e13),
    a=st.floats(0.0, 1e-3),
)
def test_ring_properties(M, n, bw, a):
    t = C.ring_allreduce_time(M, n, bw, a)
    # Never faster than the Patarasuk-Yuan bandwidth bound, never slower than twice M/β
    # plus the latency steps.
    assert t >= 2 * (n - 1) / n * M / bw * (1 - 1e-12)
    assert t <= (2 * M / bw + 2 * (n - 1) * a) * (1 + 1e-12)
    assert math.isclose(
        C.bus_bandwidth(M, C.ring_allreduce_time(M, n, bw, 0.0), "all_reduce", n), bw, rel_tol=1e-9
    )


# -- the scalar fast path equals the array path ------------------------------------------
FOUR_ARG = (
    C.ring_allreduce_time,
    C.tree_allreduce_time,
    C.allgather_time,
    C.reduce_scatter_time,
    C.alltoall_time,
    C.broadcast_time,
    C.reduce_time,
)


@settings(max_examples=30, deadline=None)
@given(
    M=st.floats(0.0, 1e12),
    n=st.integers(1, 4096),
    bw=st.floats(1e6, 1e13),
    a=st.floats(0.0, 1e-3),
)
def test_scalar_path_is_bitwise_the_array_path(M, n, bw, a):
    # Plain floats take the math-only path; one-element arrays take the as_si/numpy path.
    # The two do the same float64 operations in the same order, so they agree exactly.
    one = np.array([1.0])
    for fn in FOUR_ARG:
        fast = fn(M, n, bw, a)
        assert type(fast) is float, fn.__name__
        assert fast == fn(M * one, n, bw, a)[0], fn.__name__
    assert C.p2p_time(M, bw, a) == C.p2p_time(M * one, bw, a)[0]
    g, k = (8, n) if n > 1 else (1, 1)
    hier = C.hierarchical_allreduce_time(M, g, k, BW, ALPHA, bw, a)
    assert hier == C.hierarchical_allreduce_time(M * one, g, k, BW, ALPHA, bw, a)[0]


def test_numpy_scalars_take_the_fast_path_with_the_same_numbers():
    # STYLE.md example through numpy scalar types: 14 µs + 1.75e9/450e9 s = 3.9029 ms.
    expected = 14e-6 + 1.75e9 / 450e9
    for args in (
        (np.float64(M), np.int64(N), np.float64(BW), np.float64(ALPHA)),
        (np.float32(1e9), np.int32(8), 450e9, 1e-6),
        (int(1e9), 8, int(450e9), 1e-6),
    ):
        t = C.ring_allreduce_time(*args)
        assert type(t) is float
        assert t == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("args", "error", "name"),
    [
        ((M, 0, BW, ALPHA), ParameterError, "ranks=0"),
        ((M, 2.5, BW, ALPHA), ParameterError, "ranks=2.5"),
        ((M, np.float64("nan"), BW, ALPHA), ParameterError, "ranks"),
        ((M, True, BW, ALPHA), ParameterError, "ranks=True"),
        ((M, 8, 0.0, ALPHA), ParameterError, "bandwidth_Bps=0.0"),
        ((M, 8, math.inf, ALPHA), ParameterError, "bandwidth_Bps"),
        ((-1.0, 8, BW, ALPHA), ParameterError, "message_bytes=-1.0"),
        ((math.nan, 8, BW, ALPHA), ParameterError, "message_bytes"),
        ((M, 8, BW, -1e-6), ParameterError, "latency_s"),
        ((M, 8, np.float64(-BW), ALPHA), ParameterError, "bandwidth_Bps"),
    ],
)
def test_scalar_inputs_the_fast_path_rejects_raise_the_slow_paths_errors(args, error, name):
    for fn in FOUR_ARG:
        with pytest.raises(error, match=name):
            fn(*args)


# -- NCCL's protocol cost model and NVLink SHARP ----------------------------------------


def test_nccl_small_message_latency_per_protocol():
    # tuning.cc, ring on NVLink: base 6.6 / 14 / 8.4 µs, per step 0.6 / 1.9 / 3.4 µs.
    # An 8-byte all-reduce on 8 GPUs (14 steps): LL 6.6 + 14 × 0.6 = 15.0 µs (the others
    # 40.6 and 56.0 µs); the bandwidth term is negligible.
    for proto, expected in (("LL", 15.0e-6), ("LL128", 40.6e-6), ("Simple", 56.0e-6)):
        t = nccl_ring_time("all_reduce", 8, 8, 450e9, protocol=proto)
        assert t == pytest.approx(expected, rel=1e-3)
    assert nccl_ring_time("all_reduce", 8, 8, 450e9) == pytest.approx(15.0e-6, rel=1e-3)
    # all-gather: n − 1 = 7 steps
    assert nccl_ring_time("all_gather", 8, 8, 450e9, protocol="LL") == pytest.approx(
        6.6e-6 + 7 * 0.6e-6, rel=1e-3
    )


def test_measured_ll_step_reproduces_nccl_tests_on_dgx_a100():
    # NVIDIA/nccl-tests issue 123: ring all-reduces of 8-128 bytes on a DGX A100 take
    # 10.0, 13.76, 16.88, 20.8, 25.2, 29.5, 33.7 µs on 2..8 GPUs. NCCL's tuning model
    # says 6.6 + 2(n−1) × 0.6 µs (7.8 µs at n = 2 ... 15.0 µs at n = 8, up to 55 % low);
    # with the measured 1.98 µs LL step the model is within 10 % at every size.
    step = C.NCCL_NVLINK_LL_STEP_LATENCY_MEASURED_S["NVLINK3"]
    measured = {2: 10.0, 3: 13.76, 4: 16.88, 5: 20.8, 6: 25.2, 7: 29.5, 8: 33.7}
    for n, us in measured.items():
        model = nccl_ring_time("all_reduce", 8, n, 300e9)
        priced = nccl_ring_time("all_reduce", 8, n, 300e9, ll_step_latency_s=step)
        assert model == pytest.approx(6.6e-6 + 2 * (n - 1) * 0.6e-6, rel=1e-3)
        assert priced == pytest.approx(6.6e-6 + 2 * (n - 1) * step, rel=1e-3)
        assert priced == pytest.approx(us * 1e-6, rel=0.10)


def test_measured_ll_step_prices_only_the_protocol_nccl_picks():
    step = 1.98e-6
    # 16 KB on 4 A100: NCCL's model picks LL, whose 6 steps take 1.98 µs each:
    # 6.6 + 11.88 + 1.5 · 16384 / (300e9 · 0.822 / 4) = 18.88 µs.
    link = 300e9 * NVLINK_WIRE_EFFICIENCY
    expected = 6.6e-6 + 6 * step + 1.5 * 16384 / (link / 4)
    t = nccl_ring_time("all_reduce", 16384, 4, 300e9, ll_step_latency_s=step)
    assert t == pytest.approx(expected, rel=1e-9)
    # 1 MiB: the model picks LL128 (32.3 µs), which the LL measurement does not touch —
    # even though LL would now cost more than LL128 does.
    m = 2.0**20
    assert nccl_ring_time("all_reduce", m, 4, 300e9, ll_step_latency_s=step) == pytest.approx(
        nccl_ring_time("all_reduce", m, 4, 300e9), rel=1e-12
    )
    # the array path prices the same
    arr = nccl_ring_time("all_reduce", np.array([16384.0, m]), 4, 300e9, ll_step_latency_s=step)
    np.testing.assert_allclose(arr, [expected, nccl_ring_time("all_reduce", m, 4, 300e9)])
    # NVLS is chosen against NCCL's model of the ring: 16 KB on 8 H100 stays on the ring
    # (15.3 µs modelled against NVLS's 25 µs), priced with the H100 step of 1.10 µs
    h100 = C.NCCL_NVLINK_LL_STEP_LATENCY_MEASURED_S["NVLINK4"]
    t8 = nccl_allreduce_time(16384, 8, 450e9, in_network_reduction=True, ll_step_latency_s=h100)
    ring8 = nccl_ring_time("all_reduce", 16384, 8, 450e9, ll_step_latency_s=h100)
    assert t8 == pytest.approx(ring8, rel=1e-12)
    assert ring8 == pytest.approx(6.6e-6 + 14 * h100 + 1.75 * 16384 / 87.7e9, rel=1e-9)
    arr8 = nccl_allreduce_time(
        np.array([16384.0, 1e9]), 8, 450e9, in_network_reduction=True, ll_step_latency_s=h100
    )
    np.testing.assert_allclose(arr8, [ring8, nvls_allreduce_time(1e9, 8, 450e9)])


def test_nccl_picks_simple_for_large_messages():
    # 1 GB: Simple 8.4 + 47.6 µs + 1.75 GB / 370 GB/s; LL would quarter the bandwidth.
    t = nccl_ring_time("all_reduce", 1e9, 8, 450e9)
    assert t == pytest.approx(56e-6 + 1.75e9 / (450e9 * NVLINK_WIRE_EFFICIENCY))


def test_nccl_ll_bus_bandwidth_follows_nccls_tuning_model():
    # NCCL 2.18.6 tuning.cc: ring LL gets busBw/4 for an all-reduce, busBw/3 for an
    # all-gather inside a node, capped at llMaxBws = 87.7 GB/s on Ampere/Hopper.
    # 4 A100 at 300 GB/s: link busBw 300 × 0.822 = 246.7 GB/s, LL 61.7 GB/s. A 1 MiB
    # all-reduce then moves 1.5 MiB: LL 10.2 µs + 1,572,864 / 61.7e9 = 35.7 µs, so
    # LL128 (25.4 µs + 1,572,864 / (246.7e9 × 0.92) = 32.3 µs) is picked.
    link = 300e9 * NVLINK_WIRE_EFFICIENCY
    m = 2.0**20
    ll = nccl_ring_time("all_reduce", m, 4, 300e9, protocol="LL")
    assert ll == pytest.approx(10.2e-6 + 1.5 * m / (link / 4.0), rel=1e-9)
    ll128 = 14.0e-6 + 6 * 1.9e-6 + 1.5 * m / (link * 0.92)
    assert nccl_ring_time("all_reduce", m, 4, 300e9) == pytest.approx(ll128, rel=1e-9)
    assert ll128 == pytest.approx(32.3e-6, abs=0.05e-6)
    # all-gather of a 1 MiB output inside one node: LL at a third of the bus bandwidth
    ag = nccl_ring_time("all_gather", m, 4, 300e9, protocol="LL")
    assert ag == pytest.approx(6.6e-6 + 3 * 0.6e-6 + 0.75 * m / (link / 3.0), rel=1e-9)
    # 8 H100 (450 GB/s): busBw/4 = 92.5 GB/s exceeds the cap, so LL runs at 87.7 GB/s
    t = nccl_ring_time("all_reduce", 1e6, 8, 450e9, protocol="LL")
    assert t == pytest.approx(15.0e-6 + 1.75e6 / 87.7e9, rel=1e-9)
    # the array path prices the same
    arr = nccl_ring_time("all_gather", np.array([m, m]), 4, 300e9, protocol="LL", nodes=1)
    np.testing.assert_allclose(arr, [ag, ag], rtol=1e-12)


def test_nccl_ring_crossing_nodes_pays_network_steps():
    # 16 ranks on 2 nodes, all-reduce: 2·15 = 30 steps, 2·(2−1) = 2 of them on the network
    # (LL: 2.7 µs each); 8 B: 6.6 + 28 × 0.6 + 2 × 2.7 = 28.8 µs.
    t = nccl_ring_time("all_reduce", 8, 16, 50e9, link="nvlink", nodes=2)
    assert t == pytest.approx(28.8e-6, rel=1e-3)


def test_ring_bus_bandwidth_matches_nccl_tests_on_h100():
    # nccl-tests on 8 H100 (NVIDIA/nccl-tests issue 212, NVIDIA/nccl issue 1455): ring
    # all-reduce busbw 365-370 GB/s at large sizes.
    m = 8e9
    busbw = bus_bandwidth(m, nccl_ring_time("all_reduce", m, 8, 450e9), "all_reduce", 8)
    assert 365e9 <= busbw <= 371e9


def test_nvls_bus_bandwidth_matches_nccl_tests_on_8_h100():
    # Same sources: with NVLink SHARP 8 H100 reach a busbw of about 480 GB/s (algbw 275).
    m = 8e9
    t = nccl_allreduce_time(m, 8, 450e9, in_network_reduction=True)
    assert t == pytest.approx(nvls_allreduce_time(m, 8, 450e9))
    assert bus_bandwidth(m, t, "all_reduce", 8) == pytest.approx(480e9, rel=0.01)
    # on two GPUs the ring is faster (busbw 370 > NVLS's 275), as measured (issue 1455:
    # NVLS busbw stays at ~370 for 2-4 GPUs because NCCL keeps the ring)
    t2 = nccl_allreduce_time(m, 2, 450e9, in_network_reduction=True)
    assert bus_bandwidth(m, t2, "all_reduce", 2) == pytest.approx(370e9, rel=0.01)
    # without in-network reduction (NVSwitch 2, A100) NVLS is never used
    assert nccl_allreduce_time(m, 8, 450e9) == pytest.approx(
        nccl_ring_time("all_reduce", m, 8, 450e9)
    )


def test_nccl_array_path_matches_scalar_path():
    m = np.array([8.0, 1e4, 1e6, 1e8, 1e10])
    arr = nccl_allreduce_time(m, 8, 450e9, in_network_reduction=True)
    one = [nccl_allreduce_time(float(x), 8, 450e9, in_network_reduction=True) for x in m]
    np.testing.assert_allclose(arr, one, rtol=1e-12)
    np.testing.assert_allclose(
        nccl_ring_time("all_reduce", 1e6, np.array([1, 2, 8]), 450e9)[0], 0.0
    )


def test_nccl_bad_arguments():
    with pytest.raises(ParameterError):
        nccl_ring_time("all_to_all", 8, 8, 450e9)
    with pytest.raises(ParameterError):
        nccl_ring_time("all_reduce", 8, 8, 450e9, link="carrier pigeon")
    with pytest.raises(ParameterError):
        nccl_ring_time("all_reduce", 8, 8, 450e9, protocol="LL64")


def test_binomial_tree_allreduce_by_derivation():
    # Thakur et al. (2005), Sec. 4: reduce then broadcast, each ceil(log2 p)(alpha + n beta).
    # 1 GB on 256 ranks at 50 GB/s, 5 us: 2 * 8 * (5e-6 + 1e9 / 50e9) = 0.32008 s; 5 ranks
    # need ceil(log2 5) = 3 levels; one rank costs nothing.
    import numpy as np

    from mlsys.core.formulas.collectives import binomial_tree_allreduce_time

    assert binomial_tree_allreduce_time(1e9, 256, 50e9, 5e-6) == pytest.approx(0.32008)
    assert binomial_tree_allreduce_time(1e6, 5, 1e9, 1e-6) == pytest.approx(6 * (1e-6 + 1e-3))
    assert binomial_tree_allreduce_time(1e9, 1, 50e9, 5e-6) == 0.0
    arr = binomial_tree_allreduce_time(np.array([1e9, 1e6, 1e9]), np.array([256, 5, 1]), 50e9, 5e-6)
    assert arr == pytest.approx([0.32008, 6 * (5e-6 + 2e-5), 0.0])


def test_multinode_ring_runs_one_ring_per_nic():
    # 16 ranks on 2 nodes (8 each), 1 GB all-reduce, NVLink 246 GB/s and 1 µs, NIC 24 GB/s
    # and 5 µs: 30 steps, 2 of them across nodes (2 × 5 µs) and 28 inside (28 × 1 µs);
    # 2·15/16·1 GB at min(246, 8 × 24 = 192) GB/s: 9.766 ms + 38 µs
    from mlsys.core.formulas.collectives import multinode_ring_time

    t = multinode_ring_time("all_reduce", 1e9, 8, 2, 246e9, 1e-6, 24e9, 5e-6)
    assert t == pytest.approx(28e-6 + 10e-6 + 1.875e9 / 192e9, rel=1e-12)
    # bus bandwidth: NVIDIA's 192 GB/s on two DGX A100 (nccl issue 812), less the latency
    assert bus_bandwidth(1e9, t, "all_reduce", 16) == pytest.approx(192e9, rel=0.005)
    # reduce-scatter / all-gather: half the steps and the bus factor (N-1)/N
    rs = multinode_ring_time("reduce_scatter", 1e9, 8, 2, 246e9, 1e-6, 24e9, 5e-6)
    assert rs == pytest.approx(14e-6 + 5e-6 + 15 / 16 * 1e9 / 192e9, rel=1e-12)
    # one node: the NVLink ring alone; one rank per node: the NIC ring alone
    one = multinode_ring_time("all_reduce", 1e9, 8, 1, 246e9, 1e-6, 24e9, 5e-6)
    assert one == pytest.approx(14e-6 + 1.75e9 / 246e9, rel=1e-12)
    nic = multinode_ring_time("all_reduce", 1e9, 1, 16, 246e9, 1e-6, 24e9, 5e-6)
    assert nic == pytest.approx(30 * 5e-6 + 1.875e9 / 24e9, rel=1e-12)
    # arrays price the same
    arr = multinode_ring_time("all_reduce", np.array([1e9, 1e9]), 8, 2, 246e9, 1e-6, 24e9, 5e-6)
    np.testing.assert_allclose(arr, [t, t], rtol=1e-12)
    with pytest.raises(ParameterError):
        multinode_ring_time("broadcast", 1e9, 8, 2, 246e9, 1e-6, 24e9, 5e-6)
