"""ContinuousBatchingModel and the queueing formulas behind it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsys import ContinuousBatchingModel, Hardware, Models, ServingModel
from mlsys.core.errors import InfeasibleError, ParameterError
from mlsys.core.formulas.serving import littles_law_concurrency, mg1_waiting_time, mm1_waiting_time
from mlsys.core.solvers.serving import _decode, _plan

CB = ContinuousBatchingModel()
M7 = Models.Llama2_7B
H100 = Hardware.H100


# --------------------------------------------------------------------------- formulas
def test_littles_law():
    assert littles_law_concurrency(2.0, 12.5) == 25.0


def test_mm1_and_pollaczek_khinchine():
    # M/M/1, λ = 5/s, S = 0.1 s: ρ = 0.5, W_q = 0.5 · 0.1 / 0.5 = 0.1 s.
    assert mm1_waiting_time(5.0, 0.1) == pytest.approx(0.1)
    # P-K with exponential service (E[S²] = 2 E[S]²) reproduces M/M/1 ...
    assert mg1_waiting_time(5.0, 0.1, 2 * 0.1**2) == pytest.approx(0.1)
    # ... and deterministic service (E[S²] = E[S]²) waits half as long (M/D/1).
    assert mg1_waiting_time(5.0, 0.1, 0.1**2) == pytest.approx(0.05)
    assert mg1_waiting_time(10.0, 0.1, 0.01) == np.inf
    assert mm1_waiting_time(np.array([5.0, 20.0]), 0.1)[1] == np.inf


# --------------------------------------------------------------------------- steady state
def _solve(rate, **kw):
    kw.setdefault("prompt_len", 512)
    kw.setdefault("output_len", 256)
    return CB.solve(M7, H100, arrival_rate=rate, **kw)


def test_prefill_service_is_servingmodels_ttft_and_queue_is_pollaczek_khinchine():
    res = _solve(4.0)
    single = ServingModel().solve(M7, H100, prompt_len=512, output_len=256)
    es = single.si("ttft")
    assert res.si("prefill_time") == pytest.approx(es)
    # Deterministic prompts: E[S²] = E[S]², W_q = λ E[S]² / (2 (1 − λ E[S])).
    assert res.si("queueing_delay") == pytest.approx(4.0 * es**2 / (2 * (1 - 4.0 * es)))
    assert res.prefill_utilization == pytest.approx(4.0 * es)
    # TTFT = wait + service + half of the decode step in progress (only while not prefilling).
    expected = res.si("queueing_delay") + es + 0.5 * res.si("decode_step_time") * (1 - 4.0 * es)
    assert res.si("ttft") == pytest.approx(expected)


def test_concurrency_satisfies_littles_law():
    res = _solve(6.0)
    # L = λ · W with W = (E[O] − 1) · ITL: 6/s × 255 × ITL.
    assert res.concurrency == pytest.approx(6.0 * 255 * res.si("itl"), rel=1e-6)
    # ITL is the decode step stretched by the share of time spent prefilling.
    assert res.si("itl") == pytest.approx(
        res.si("decode_step_time") / (1 - res.prefill_utilization)
    )
    assert res.si("tokens_per_second") == pytest.approx(6.0 * 256)
    assert res.si("e2e_latency") == pytest.approx(res.si("ttft") + 255 * res.si("itl"))


def test_light_load_itl_is_the_weight_read_time():
    res = _solve(0.01, prompt_len=16, output_len=16)
    # ≈ 13.2 GB / (3.35 TB/s × 0.85) = 4.64 ms of weight reads at a nearly empty batch,
    # plus 32 layers × 10 kernels and the LM head at 4 µs each: 1.284 ms — 5.92 ms.
    assert res.si("itl") == pytest.approx(4.64e-3 + 321 * 4e-6, rel=0.02)


def test_latencies_increase_with_load_and_capacity_is_the_stability_edge():
    cap = _solve(1.0).si("max_arrival_rate")
    rates = np.linspace(0.05, 0.99, 8) * cap
    results = [_solve(float(r)) for r in rates]
    ttft = [r.si("ttft") for r in results]
    itl = [r.si("itl") for r in results]
    assert all(np.diff(ttft) > 0) and all(np.diff(itl) > 0)
    # Near capacity the batch fills the KV cache.
    near = _solve(0.99999 * cap)
    assert near.concurrency == pytest.approx(near.max_concurrency, rel=1e-3)
    over = _solve(1.01 * cap)
    assert not over.feasible and over.ttft is None and not over.stable
    assert "capacity" in over.infeasibility_reason
    with pytest.raises(InfeasibleError):
        _solve(1.01 * cap, raise_errors=True)


def test_capacity_formula():
    """λ_max = n_cap / ((E[O] − 1)·t_step(n_cap) + n_cap·E[S]), t_step from the physics.

    A decode step of n sequences of mean context 512 + 256/2 = 640 tokens is memory-bound
    on an H100 (checked on ServingModel at the integer batch below n_cap); its time is
    ServingModel's decode physics at the fractional n_cap.
    """
    res = _solve(1.0)
    n_cap = res.max_concurrency
    nf = int(n_cap)
    sm = ServingModel()
    lo = sm.solve(M7, H100, batch_size=nf, prompt_len=512, output_len=256)
    assert lo.decode_bound == "memory"
    # ServingModel's decode physics (the shared _decode) at the same mean context
    # (512 + 128 tokens) and the fractional n_cap: saturation is where n_cap sequences
    # each wait 255 steps plus the n_cap prefills that interleave with them.
    plan = _plan(M7, H100, "bf16", None, None, 1, 1, None, None, None)
    t_step = _decode(plan, n_cap, 640.0)[0]
    es = res.si("prefill_time")
    assert res.si("max_arrival_rate") == pytest.approx(n_cap / (255 * t_step + n_cap * es))


def test_kv_capacity_in_paged_blocks():
    res = _solve(1.0, block_size=16)
    # The library's framework allowance (1 GB + 5 % of the transient workspace; weights
    # and the KV pool are allocated once) leaves 81,559 MiB − 1 GB for weights, workspace
    # and the KV pool (the H100 exposes 81,559 MiB).
    free = 81559 * 2**20 - 1e9 - M7.total_params * 2 - 1.05 * res_workspace()
    blocks = int(free // (16 * 524288))
    assert res.kv_capacity_blocks == blocks
    # A decoding sequence holds 512 + 128 tokens and half an empty block on average.
    assert res.mean_context == pytest.approx(640.0)
    assert res.max_concurrency == pytest.approx(blocks * 16 / (640 + 7.5))
    assert res.kv_waste_fraction == pytest.approx(7.5 / 647.5)
    assert res.kv_waste_fraction < 0.04  # Kwon et al. (2023): under 4 %


def res_workspace():
    return (
        ServingModel()
        .solve(M7, H100, prompt_len=512, output_len=256)
        .si("activation_bytes_per_accelerator")
    )


def test_max_num_seqs_caps_concurrency():
    res = _solve(1.0, max_num_seqs=32)
    assert res.max_concurrency == 32
    assert res.si("max_arrival_rate") < _solve(1.0).si("max_arrival_rate")


def test_slo_search_finds_the_boundary():
    res = _solve(1.0, ttft_slo="150 ms", itl_slo="15 ms")
    rate = res.si("max_arrival_rate_under_slo")
    assert 0 < rate < res.si("max_arrival_rate")
    at = _solve(rate)
    assert at.si("ttft") <= 0.150 + 1e-9 and at.si("itl") <= 0.015 + 1e-9
    above = _solve(rate * 1.001)
    assert above.si("ttft") > 0.150 or above.si("itl") > 0.015
    assert res.meets_slo is (res.si("ttft") <= 0.15 and res.si("itl") <= 0.015)


def test_slo_unreachable_gives_zero_rate():
    # A 512-token prefill alone takes ~9 ms on an H100; a 1 ms TTFT target is impossible.
    res = _solve(1.0, ttft_slo=1e-3)
    assert res.si("max_arrival_rate_under_slo") == 0.0
    assert res.meets_slo is False


def test_length_distributions():
    det = _solve(2.0, prompt_len=512, output_len=256)
    arr = _solve(2.0, prompt_len=np.full(50, 512.0), output_len=[256] * 10)
    assert arr.si("itl") == pytest.approx(det.si("itl"))
    assert arr.si("ttft") == pytest.approx(det.si("ttft"))
    # Exponential outputs: time-weighted context P + (E[O²] − E[O]) / (2 (E[O] − 1))
    # = 512 + (2·256² − 256) / 510 = 512 + 130816 / 510 = 768.502 tokens.
    exp = _solve(2.0, output_len={"distribution": "exponential", "mean": 256})
    assert exp.mean_context == pytest.approx(512 + 130816 / 510)
    # Variable prompts wait longer than fixed ones of the same mean (P-K: E[S²] grows).
    var = _solve(2.0, prompt_len={"mean": 512, "std": 400})
    assert var.si("queueing_delay") > det.si("queueing_delay")
    uni = _solve(2.0, prompt_len={"distribution": "uniform", "low": 24, "high": 1000})
    assert uni.mean_prompt_len == pytest.approx(512)


def test_prefill_moments_average_the_prompt_distribution():
    # lmdeploy's chat prompts: exponential with a 270-token mean, Llama-2-7B fp16 on an
    # A100. The prefill time is averaged over 64 equal-probability prompt lengths
    # x_i = -270 ln(1 - (i + 1/2)/64), each priced as ServingModel prices one prompt.
    a100 = Hardware.A100_80GB
    res = CB.solve(
        M7, a100, arrival_rate=1.0, precision="fp16",
        prompt_len={"distribution": "exponential", "mean": 270}, output_len=255,
    )  # fmt: skip
    u = (np.arange(64) + 0.5) / 64
    lengths = np.maximum(np.round(-270 * np.log1p(-u)), 1)
    times = [
        ServingModel().solve(M7, a100, prompt_len=x, output_len=1, precision="fp16").si("ttft")
        for x in lengths
    ]
    assert res.si("prefill_time") == pytest.approx(np.mean(times), rel=1e-12)
    # The value at the mean is not the mean: 270 tokens need two 256-row GEMM tiles
    # (512 rows computed), most prompts of the distribution one.
    at_mean = ServingModel().solve(M7, a100, prompt_len=270, output_len=1, precision="fp16")
    assert res.si("prefill_time") < 0.9 * at_mean.si("ttft")


@pytest.mark.parametrize(
    "spec",
    [
        {"distribution": "uniform", "low": 24, "high": 1000},
        {"distribution": "lognormal", "mean": 500, "std": 400},
        {"distribution": "gamma", "mean": 500, "std": 250},
        {"distribution": "exponential", "mean": 500},
    ],
)
def test_length_nodes_keep_the_distribution_mean(spec):
    from mlsys.core.solvers.batching import _lengths

    lengths = _lengths(spec, "prompt_len")
    nodes = lengths.nodes()
    # equal-probability nodes: their mean is the distribution's, up to the midpoint
    # rule's tail (the last node stands for the top 1/64 of the probability)
    assert nodes.size == 64 and nodes.min() >= 1
    assert nodes.mean() == pytest.approx(lengths.mean, rel=0.01)
    if spec["distribution"] == "uniform":
        # exact quantiles: 24 + (i + 1/2)/64 · 976, rounded to whole tokens
        expected = np.round(24 + (np.arange(64) + 0.5) / 64 * 976)
        assert np.array_equal(nodes, expected)


def test_cost_per_million_tokens():
    res = _solve(4.0, price_per_accelerator_hour="2 USD/hour")
    # 2 USD/h ÷ 3600 s/h ÷ (4/s × 256 tokens) × 1e6 = 0.5425 USD per million tokens.
    assert res.si("cost_per_million_tokens") == pytest.approx(2 / 3600 / 1024 * 1e6)


def test_infeasible_replica_reports_no_latency():
    res = CB.solve(Models.Llama2_70B, H100, arrival_rate=1.0, precision="fp16")
    assert not res.feasible and res.ttft is None and res.itl is None
    assert res.si("max_arrival_rate") == 0.0


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"arrival_rate": 0.0}, "arrival_rate"),
        ({"arrival_rate": -1.0}, "arrival_rate"),
        ({"output_len": 0}, "output_len"),
        ({"output_len": [10, 0, 5]}, "output_len"),
        ({"prompt_len": 0}, "prompt_len"),
        ({"prompt_len": {"mean": 100, "std": -1}}, "prompt_len"),
        ({"prompt_len": {"distribution": "zipf", "mean": 100}}, "prompt_len['distribution']"),
        ({"precision": "fp7"}, "precision"),
        ({"price_per_accelerator_hour": -2.0}, "price_per_accelerator_hour"),
        ({"block_size": 0}, "block_size"),
        ({"block_size": -16}, "block_size"),
        ({"max_num_seqs": 0}, "max_num_seqs"),
        ({"ttft_slo": 0.0}, "ttft_slo"),
        ({"itl_slo": "-5 ms"}, "itl_slo"),
        ({"tp_size": 0}, "tp_size"),
    ],
)
def test_bad_inputs_raise_parameter_error(kwargs, name):
    kwargs.setdefault("arrival_rate", 1.0)
    with pytest.raises(ParameterError) as info:
        CB.solve(M7, H100, **kwargs)
    assert info.value.name == name


@settings(max_examples=15, deadline=None)
@given(
    frac_lo=st.floats(0.02, 0.6),
    step=st.floats(0.05, 0.35),
    prompt=st.integers(16, 2048),
    output=st.integers(2, 1024),
)
def test_monotone_in_arrival_rate(frac_lo, step, prompt, output):
    cap = CB.solve(M7, H100, arrival_rate=1.0, prompt_len=prompt, output_len=output).si(
        "max_arrival_rate"
    )
    a = CB.solve(M7, H100, arrival_rate=frac_lo * cap, prompt_len=prompt, output_len=output)
    b = CB.solve(
        M7, H100, arrival_rate=(frac_lo + step) * cap, prompt_len=prompt, output_len=output
    )
    assert a.feasible and b.feasible
    assert b.si("ttft") >= a.si("ttft")
    assert b.si("itl") >= a.si("itl")
    assert b.concurrency >= a.concurrency
    assert a.concurrency <= a.max_concurrency


def test_pipeline_parallel_replica_steady_state():
    # Llama-2-70B over 2 stages of 2-way tensor parallelism on a DGX H100.
    from mlsys import Nodes

    res = CB.solve(
        Models.Llama2_70B,
        Nodes.DGX_H100,
        arrival_rate=1.0,
        prompt_len=512,
        output_len=256,
        tp_size=2,
        pp_size=2,
    )
    assert res.feasible and res.accelerators == 4
    assert res.concurrency == pytest.approx(1.0 * 255 * res.si("itl"), rel=1e-6)


def test_decode_kernel_heads_per_block_reaches_the_decode_step():
    # The engine's decode kernel (4 query heads per block for Llama-2-70B's groups of 8)
    # reads each KV head twice; the steady-state decode step is the ServingModel step of
    # the same plan, so it grows by one pass over the cache.
    kw = dict(arrival_rate=1.0, prompt_len=512, output_len=128, precision="fp16", tp_size=4)
    once = CB.solve(Models.Llama2_70B, Hardware.A100_80GB, **kw)
    twice = CB.solve(
        Models.Llama2_70B, Hardware.A100_80GB, decode_attention_heads_per_block=4, **kw
    )
    plan = _plan(
        Models.Llama2_70B, Hardware.A100_80GB, "fp16", None, None, 4, 1, None, None, None, 4
    )
    n = twice.concurrency
    # fixed lengths: prompt + (E[O²] − E[O]) / (2 (E[O] − 1)) = 512 + 128/2
    ctx = 512 + (128**2 - 128) / (2 * 127)
    assert ctx == 576.0
    assert twice.si("decode_step_time") == pytest.approx(_decode(plan, n, ctx)[0], rel=1e-6)
    assert twice.si("decode_step_time") > once.si("decode_step_time")


def test_fp8_decode_at_low_load_prices_an_empty_batch():
    """At a low arrival rate the fixed point starts from an empty decode batch; with FP8
    GEMMs (whose inputs are quantised per token) that batch must price as the weights'
    read, not divide by its zero tokens. Floor: every weight byte crosses HBM once a step,
    6.74e9 parameters x 1 byte / 3.35e12 B/s = 2.01 ms (Llama-2-7B on an H100)."""
    from mlsys import ContinuousBatchingModel, Hardware, Models

    res = ContinuousBatchingModel().solve(
        Models.Llama2_7B,
        Hardware.H100,
        arrival_rate=0.5,
        prompt_len=512,
        output_len={"mean": 400, "std": 100},
        precision="fp8",
    )
    floor_s = Models.Llama2_7B.total_params * 1.0 / Hardware.H100.memory_bandwidth_Bps
    assert res.feasible
    assert floor_s < res.si("decode_step_time") < 3 * floor_s
