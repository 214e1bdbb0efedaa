"""Cost terms of a training step as cited formulas: the output layer, attention with its
scores in memory, the optimizer step, the windows data-parallel collectives hide behind
and ring attention's K/V exchange.

Each is checked against a derivation written here, on floats and on arrays (one code
path), and the step model must call it (no private copy of its arithmetic).
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from mlsys import Fabrics, Fleet, Models, Nodes
from mlsys.core.formulas.collectives import p2p_time
from mlsys.core.formulas.layer_time import materialized_attention_time, output_layer_time
from mlsys.core.formulas.memory import optimizer_step_bytes_per_param, optimizer_step_time
from mlsys.core.formulas.overlap import (
    data_parallel_overlap_windows,
    ring_attention_exchange_time,
)
from mlsys.core.solvers import _layout
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.solvers.search import ParallelismSearch

A100_HBM_Bps = 2.039e12  # A100 80GB SXM datasheet
ETA_M = 0.85


def _megatron_step_flops(B, s, l, h, V):
    """Narayanan et al. (2021), SC'21, Eq. (3): FLOPs of one training iteration
    (forward and backward, no recomputation) of a GPT model."""
    return 72.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * l * h))


def test_output_layer_flops_are_the_logit_term_of_megatrons_step_count():
    # Eq. (3) without recomputation has the prefactor 72 (96 counts a full recompute);
    # its V term, 72·B·s·l·h²·V/(12·l·h) = 6·B·s·h·V, is the output layer's three passes.
    # At 1 FLOP/s and unbounded bandwidth the formula's seconds are its FLOPs.
    B, s, l, h, V = 4.0, 2048.0, 96.0, 12288.0, 51200.0
    logit_term = _megatron_step_flops(B, s, l, h, V) - _megatron_step_flops(B, s, l, h, 0.0)
    flops = output_layer_time(B * s, V, h, 1.0, 1.0, math.inf)
    assert flops == pytest.approx(logit_term, rel=1e-12)
    assert flops == pytest.approx(6.0 * B * s * h * V, rel=1e-12)


def test_output_layer_time_of_gpt3_on_tp8():
    # one 2048-token sequence, vocabulary split 8 ways: 6·V·h·T/8 FLOP at 156 TFLOP/s,
    # fp32 logits written, softmaxed and differentiated, 4 bytes × 3 × 4 passes per
    # logit at 2.039 TB/s × 0.85
    V, h, T, t = 50257.0, 12288.0, 2048.0, 8.0
    expected = 6.0 * V * h * T / t / 156e12 + 48.0 * V * T / t / (A100_HBM_Bps * ETA_M)
    got = output_layer_time(T, V, h, t, 156e12, A100_HBM_Bps * ETA_M)
    assert got == pytest.approx(expected, rel=1e-12)
    assert got == pytest.approx(6.437e-3, rel=1e-3)
    # tensor parallelism splits both halves: 8 ranks take an eighth of one rank's time
    one_rank = output_layer_time(T, V, h, 1.0, 156e12, A100_HBM_Bps * ETA_M)
    assert got == pytest.approx(one_rank / 8.0, rel=1e-12)


def test_materialized_attention_is_the_roofline_of_its_flops_and_score_traffic():
    # GPT-3, one 2048-token sequence on TP 8, three passes in bf16
    T, s, a, d, t, passes, e = 2048.0, 2048.0, 96.0, 12288.0, 8.0, 3.0, 2.0
    args = (T, s, a, d, t, passes, e)
    # QK^T and AV: 2·s·d FLOP each per query token, over the t ranks, every pass
    flops = 2.0 * (2.0 * s * d) * T / t * passes
    assert materialized_attention_time(*args, True, 1.0, math.inf) == pytest.approx(flops)
    # a·s scores per query token: 4e bytes (QK^T write, softmax read+write, AV read), and
    # with dropout 2e + 1 more (probabilities read and written, one-byte mask)
    scores = a * s * T / t
    with_dropout = materialized_attention_time(*args, True, math.inf, 1.0)
    assert with_dropout == pytest.approx((6.0 * e + 1.0) * scores * passes, rel=1e-12)
    without = materialized_attention_time(*args, False, math.inf, 1.0)
    assert without == pytest.approx(4.0 * e * scores * passes, rel=1e-12)
    # on an A100 (156 TFLOP/s, 2.039 TB/s x 0.85) the score traffic is the longer
    bw = A100_HBM_Bps * ETA_M
    got = materialized_attention_time(*args, True, 156e12, bw)
    assert got == pytest.approx(max(flops / 156e12, with_dropout / bw), rel=1e-12)
    assert got == pytest.approx(with_dropout / bw, rel=1e-12) and flops / 156e12 < got


def test_optimizer_step_time_shards_dense_and_expert_state_separately():
    step_bytes = optimizer_step_bytes_per_param(12.0, 4.0, 2.0)  # Adam, bf16: 38 bytes
    assert step_bytes == 38.0
    bw = A100_HBM_Bps * ETA_M
    # GPT-3 175B on TP 8 × PP 8: 175e9 / 64 parameters a device; ZeRO-1 over 4 ranks
    psi = 175e9 / 64
    alone = optimizer_step_time(psi, 0.0, 1.0, 1.0, step_bytes, bw)
    assert alone == pytest.approx(psi * 38.0 / bw, rel=1e-12)
    sharded = optimizer_step_time(psi, 0.0, 4.0, 4.0, step_bytes, bw)
    assert sharded == pytest.approx(alone / 4.0, rel=1e-12)
    assert sharded == pytest.approx(0.014988, rel=1e-4)
    # experts: their state split over dp·cp only (here 2), the dense over dp·ep·cp (16)
    mixed = optimizer_step_time(1e9, 3e9, 16.0, 2.0, step_bytes, bw)
    assert mixed == pytest.approx((1e9 / 16.0 + 3e9 / 2.0) * 38.0 / bw, rel=1e-12)


def test_overlap_windows_by_zero_stage():
    compute, comm, passes, m = 0.3, 0.04, 3.0, 8.0
    forward = compute / passes  # 0.1 s
    backward = 2.0 * forward + comm / 2.0  # 0.22 s
    for stage in (0.0, 1.0):  # the reduction behind the last backward, the gather
        grad, param, everything = data_parallel_overlap_windows(compute, comm, passes, m, stage)
        assert (grad, param) == pytest.approx((backward, forward), rel=1e-12)
        assert everything == pytest.approx(m * compute, rel=1e-12)
    grad, param, _ = data_parallel_overlap_windows(compute, comm, passes, m, 2.0)
    assert (grad, param) == pytest.approx((m * backward, forward), rel=1e-12)  # every backward
    grad, param, everything = data_parallel_overlap_windows(compute, comm, passes, m, 3.0)
    assert grad == param == everything == pytest.approx(2.4, rel=1e-12)  # all compute
    # a full recompute makes four forwards of the same compute: shorter windows
    grad4, param4, _ = data_parallel_overlap_windows(compute, comm, 4.0, m, 1.0)
    assert (grad4, param4) == pytest.approx((0.15 + 0.02, 0.075), rel=1e-12)


def test_ring_exchange_hides_behind_each_block_of_attention():
    # a ring of 4 takes 3 steps; each forward step sends K and V (one block), each backward
    # step K, V and their gradients (two blocks), each beside one block's attention
    kv, cp, bw, lat = 4e6, 4.0, 10e9, 2e-6
    attention, passes = 1.4e-3, 3.5  # a fused kernel: forward, and 2.5 passes backward
    fwd_block, bwd_block = attention / passes / cp, attention / passes * 2.5 / cp
    send, send2 = lat + kv / bw, lat + 2.0 * kv / bw
    assert p2p_time(kv, bw, lat) == pytest.approx(send, rel=1e-12)
    exposed, total = ring_attention_exchange_time(kv, cp, attention, passes, 0.0, bw, lat)
    assert total == pytest.approx(3.0 * (send + send2), rel=1e-12)
    assert exposed == pytest.approx(3.0 * ((send - fwd_block) + (send2 - bwd_block)), rel=1e-12)
    # a recomputed forward sends K and V again, beside a backward one pass shorter
    attention_rc = attention / passes * (passes + 1.0)
    exposed_rc, total_rc = ring_attention_exchange_time(kv, cp, attention_rc, passes + 1.0, 1.0,
                                                        bw, lat)  # fmt: skip
    assert total_rc == pytest.approx(3.0 * (2.0 * send + send2), rel=1e-12)
    assert exposed_rc == pytest.approx(
        3.0 * (2.0 * (send - fwd_block) + (send2 - bwd_block)), rel=1e-12
    )
    # a fast link hides every step; no ring, no exchange
    assert ring_attention_exchange_time(kv, cp, attention, passes, 0.0, 1e12, 0.0)[0] == 0.0
    assert ring_attention_exchange_time(kv, 1.0, attention, passes, 0.0, bw, lat) == (0.0, 0.0)


def test_one_code_path_for_floats_and_arrays():
    rng = np.random.default_rng(7)
    n = 64
    compute, comm = rng.uniform(0.01, 1.0, n), rng.uniform(0.0, 0.2, n)
    passes, m = rng.choice([3.0, 4.0], n), rng.choice([1.0, 4.0, 16.0], n)
    zero = rng.choice([0.0, 1.0, 2.0, 3.0], n)
    arrays = data_parallel_overlap_windows(compute, comm, passes, m, zero)
    for i in range(n):
        one = data_parallel_overlap_windows(
            float(compute[i]), float(comm[i]), float(passes[i]), float(m[i]), float(zero[i])
        )
        assert [float(a[i]) for a in arrays] == list(one)
    cp, attention = rng.choice([1.0, 2.0, 8.0], n), rng.uniform(1e-4, 1e-2, n)
    rings = ring_attention_exchange_time(4e6, cp, attention, passes, passes - 3.0, 5e10, 1e-6)
    for i in range(n):
        k = float(passes[i])
        one = ring_attention_exchange_time(4e6, float(cp[i]), float(attention[i]), k, k - 3.0,
                                           5e10, 1e-6)  # fmt: skip
        assert [float(a[i]) for a in rings] == list(one)
    tokens, tp = rng.uniform(1e3, 1e5, n), rng.choice([1.0, 2.0, 8.0], n)
    heads = output_layer_time(tokens, 32000.0, 4096.0, tp, 3e14, 2e12)
    cores = materialized_attention_time(tokens, 4096.0, 32.0, 4096.0, tp, passes, 2.0, True,
                                        3e14, 2e12)  # fmt: skip
    shards = rng.choice([1.0, 8.0, 64.0], n)
    steps = optimizer_step_time(7e9 / tp, 0.0, shards, shards, 38.0, 2e12)
    for i in range(n):
        t, k = float(tokens[i]), float(tp[i])
        assert float(heads[i]) == output_layer_time(t, 32000.0, 4096.0, k, 3e14, 2e12)
        assert float(cores[i]) == materialized_attention_time(
            t, 4096.0, 32.0, 4096.0, k, float(passes[i]), 2.0, True, 3e14, 2e12
        )
        assert float(steps[i]) == optimizer_step_time(7e9 / k, 0.0, float(shards[i]),
                                                      float(shards[i]), 38.0, 2e12)  # fmt: skip


FLEET = Fleet(node=Nodes.DGX_A100, count=2, fabric=Fabrics.IB_HDR)


def _solve():
    kw = dict(batch_size=16, tp_size=4, pp_size=2, microbatch_count=4, zero_stage=1)
    return DistributedModel().solve(Models.Llama2_13B, FLEET, **kw).si("step_time")


def _search():
    res = ParallelismSearch().solve(Models.Llama2_13B, FLEET, batch_size=16, zero_stages=(0, 1))
    return float(res.table["step_time"][0])


def _solve_cp():
    kw = dict(batch_size=8, tp_size=4, cp_size=2, seq_len=16384, microbatch_count=4)
    return DistributedModel().solve(Models.Llama2_13B, FLEET, **kw).si("step_time")


def _solve_unfused():
    kw = dict(batch_size=16, tp_size=4, pp_size=2, microbatch_count=4, flash_attention=False)
    return DistributedModel().solve(Models.Llama2_13B, FLEET, **kw).si("step_time")


def _search_unfused():
    res = ParallelismSearch().solve(
        Models.Llama2_13B, FLEET, batch_size=16, zero_stages=(1,), flash_attention=False
    )
    return float(res.table["step_time"][0])


def _solve_pp_deepspeed():
    kw = dict(batch_size=16, tp_size=4, pp_size=2, microbatch_count=4, pipeline_p2p="deepspeed")
    return DistributedModel().solve(Models.Llama2_13B, FLEET, **kw).si("step_time")


@pytest.mark.parametrize(
    ("name", "solvers"),
    [
        ("output_layer_time", (_solve, _search)),
        ("optimizer_step_time", (_solve, _search)),
        ("data_parallel_overlap_windows", (_solve, _search)),
        ("ring_attention_exchange_time", (_solve_cp,)),
        ("materialized_attention_time", (_solve_unfused, _search_unfused)),
        ("pipeline_p2p_bytes", (_solve, _solve_pp_deepspeed, _search)),
    ],
)
def test_the_step_model_calls_the_formula(monkeypatch, name, solvers):
    before = [solve() for solve in solvers]
    original = getattr(_layout, name)
    assert original.__module__.startswith("mlsys.core.formulas"), name
    calls = {"n": 0}

    @functools.wraps(original)
    def counted(*args, **kwargs):
        calls["n"] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(_layout, name, counted)
    for solve, expected in zip(solvers, before, strict=True):
        calls["n"] = 0
        _layout.build_problem.memo.clear()
        assert solve() == expected  # the wrapper is the formula: same answer
        assert calls["n"] > 0, f"{solve.__name__} does not call {name}"
