"""The book's InferenceScalingModel, BatchingOptimizer and SynthesisSolver on mlsys's latencies."""

from __future__ import annotations

import math

import pytest

import mlsys
from mlsys import Hardware, Models
from mlsys.compat.solvers import BatchingOptimizer, InferenceScalingModel, SynthesisSolver
from mlsys.core.errors import ParameterError

LLAMA = Models.Language.Llama3_8B
PARAMS = 8_030_261_248  # the catalog's Llama 3 8B


def _mlsys_serving(prompt_len: int, batch: int):
    return mlsys.ServingModel().solve(
        LLAMA.as_workload(), Hardware.H100, batch_size=batch,
        prompt_len=prompt_len, precision="fp16", price_infeasible=True,
    )  # fmt: skip


def test_reasoning_query_is_a_prefill_then_fifty_tokens_per_step():
    res = InferenceScalingModel().solve(LLAMA, Hardware.H100, reasoning_steps=8)
    ref = _mlsys_serving(2048, 1)
    ttft, itl = ref.si("ttft"), ref.si("itl")
    assert res.si("ttft") == pytest.approx(ttft, rel=1e-12)
    assert res.si("itl") == pytest.approx(itl, rel=1e-12)
    assert res.tokens_generated == 8 * 50  # the book's TOKENS_PER_REASONING_STEP
    assert res.si("time_per_step") == pytest.approx(50 * itl, rel=1e-12)
    assert res.si("total_reasoning_time") == pytest.approx(ttft + 400 * itl, rel=1e-12)
    # the H100's 700 W board power over the query
    assert res.si("energy_per_query") == pytest.approx(700.0 * (ttft + 400 * itl), rel=1e-12)
    assert res.feasible
    with pytest.raises(ParameterError, match="reasoning_steps"):
        InferenceScalingModel().solve(LLAMA, Hardware.H100, reasoning_steps=0)


def _mm1_p99(arrival_hz: float, service_s: float) -> float:
    # M/M/1: P(W > t) = ρ exp(-(μ - λ) t), so the P99 wait is ln(100 ρ) / (μ - λ)
    mu = 1.0 / service_s
    rho = arrival_hz / mu
    if rho >= 1.0:
        return math.inf
    wait = max(0.0, math.log(100.0 * rho) / (mu - arrival_hz))
    return wait + service_s


def test_batching_picks_the_largest_batch_within_the_sla():
    seq, lam, sla_s, limit = 512, 2.0, 30.0, 16
    res = BatchingOptimizer().solve(
        LLAMA, Hardware.H100, seq_len=seq, sla_latency_ms=sla_s * 1e3, arrival_rate_qps=lam,
        max_search_batch=limit,
    )  # fmt: skip
    p99 = {}
    for b in range(1, limit + 1):
        ref = _mlsys_serving(seq, b)
        service_s = ref.si("ttft") + ref.si("itl") * seq  # the book's service of a batch
        p99[b] = _mm1_p99(lam / b, service_s)  # batches arrive at λ / b
    meeting = [b for b, t in p99.items() if t <= sla_s]
    assert meeting, p99
    assert res.is_feasible
    assert res.best_batch_size == max(meeting)
    assert res.best_config == {"max_batch_size": max(meeting)}
    assert res.si("p99_latency") == pytest.approx(p99[max(meeting)], rel=1e-9)
    assert res.max_throughput == pytest.approx(lam * seq)  # the book's offered tokens/s
    assert res.total_searched == limit


def test_batching_reports_no_batch_when_the_sla_is_out_of_reach():
    # one batch of 512 decode steps takes over 3 s: a 1 s P99 is out of reach
    res = BatchingOptimizer().solve(
        LLAMA, Hardware.H100, seq_len=512, sla_latency_ms=1000.0, arrival_rate_qps=0.1,
        max_search_batch=4,
    )  # fmt: skip
    assert not res.is_feasible and res.best_batch_size == 0


def test_synthesis_inverts_the_roofline():
    res = SynthesisSolver().solve(LLAMA, 0.010)
    weights = PARAMS * 2  # fp16
    assert res.si("required_memory") == pytest.approx(weights)
    assert res.si("required_bw") == pytest.approx(weights / 0.010, rel=1e-12)  # 1.606 TB/s
    forward = 2 * PARAMS  # the catalog's inference_flops: 2 FLOPs per parameter
    assert res.si("total_ops") == pytest.approx(forward)
    assert res.si("required_flops") == pytest.approx(forward / (0.5 * 0.010), rel=1e-12)
    # F / (η W) = 2P / (0.5 · 2P bytes): 2 FLOP per byte
    assert res.compute_memory_ratio == pytest.approx(forward / (0.5 * weights))
    with pytest.raises(ParameterError, match="efficiency"):
        SynthesisSolver().solve(LLAMA, 0.010, efficiency=1.5)
