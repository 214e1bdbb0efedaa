"""The book's WeightStreamingModel: SRAM fit, per-layer injection against compute."""

from __future__ import annotations

import pytest

from mlsys import Hardware, Models
from mlsys.compat.solvers import WeightStreamingModel
from mlsys.core.errors import ParameterError

CS3 = Hardware.Cloud.Cerebras_CS3  # 44 GB SRAM, 125 PFLOP/s fp16, no scale-up link
L70 = Models.Language.Llama3_70B  # 80 layers, 8 KV heads of 128, 64 query heads
P70 = L70.as_workload().parameters.magnitude  # mlsys's count, 70,553,706,496


def test_decode_on_a_cs3_waits_for_weights_at_the_books_100_GBps():
    res = WeightStreamingModel().solve(L70, CS3, 8192, 8)
    kv = 2 * 80 * 8 * 128 * 8192 * 8 * 2  # K and V, layers, KV heads, head dim, tokens, fp16
    assert res.wafer_memory_utilization == pytest.approx(kv * 1.1 / 44e9)  # 23.6 of 44 GB
    assert res.feasible and "Passed" in res.constraint_trace[0]
    layer_b = P70 / 80 * 2
    assert res.layer_injection_time.m_as("s") == pytest.approx(layer_b / 100e9)  # 17.6 ms
    # 8 tokens x (2 p + 4 x 8192 cached keys x 8192 query width) at 62.5 PFLOP/s
    flops = 8 * (2 * P70 / 80 + 4 * 8192 * 8192)
    assert res.layer_compute_time.m_as("s") == pytest.approx(flops / 62.5e15)
    assert res.bottleneck == "Interconnect-Bandwidth-Bound"
    assert res.throughput_tokens_per_sec == pytest.approx(8 / (80 * layer_b / 100e9))  # 5.7
    # balanced at B* = w F / (2 beta) = 2 x 62.5e15 / 2e11
    assert res.optimal_batch_size == 625_000


def test_prefill_counts_every_token_and_causal_attention():
    l8 = Models.Language.Llama3_8B  # 32 layers, query width 4,096
    res = WeightStreamingModel().solve(l8, CS3, 2048, 64, phase="prefill", efficiency=1.0)
    p = l8.as_workload().parameters.magnitude / 32
    flops = 64 * (2 * p * 2048 + 2048 * 2 * 2048 * 4096)  # causal: 2 ctx d per token
    compute_s, inject_s = flops / 125e15, p * 2 / 100e9
    assert res.layer_compute_time.m_as("s") == pytest.approx(compute_s)
    assert res.bottleneck == "Interconnect-Bandwidth-Bound"
    assert res.throughput_tokens_per_sec == pytest.approx(
        64 * 2048 / (32 * max(compute_s, inject_s))
    )


def test_a_scale_up_link_streams_the_weights_and_overflow_is_infeasible():
    l8 = Models.Language.Llama3_8B
    h100 = WeightStreamingModel().solve(l8, Hardware.H100, 2048)
    p = l8.as_workload().parameters.magnitude / 32
    assert h100.layer_injection_time.m_as("s") == pytest.approx(p * 2 / 450e9)  # NVLink 4
    assert h100.optimal_batch_size == int(2 * 989.4e12 * 0.5 / (2 * 450e9))  # 1,099
    full = WeightStreamingModel().solve(L70, CS3, 131072, 64)
    assert not full.feasible and "FAILED" in full.constraint_trace[0]
    assert full.throughput_tokens_per_sec == 0.0
    assert full.wafer_memory_utilization > 1


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"phase": "train"}, "phase"),
        ({"batch_size": 0}, "batch_size"),
        ({"efficiency": 0.0}, "efficiency"),
    ],
)
def test_bad_inputs_name_the_parameter(kwargs, name):
    with pytest.raises(ParameterError, match=name):
        WeightStreamingModel().solve(L70, CS3, 4096, **kwargs)


def test_a_model_without_transformer_layers_is_refused():
    with pytest.raises(ParameterError, match="model"):
        WeightStreamingModel().solve(Models.Vision.ResNet50, CS3, 1)
