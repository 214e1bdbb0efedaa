"""The result fields the book's chapters read, each checked against a number derived here."""

from __future__ import annotations

import pytest

from mlsys import Hardware, Models, Systems
from mlsys.compat.results import NodeProfile
from mlsys.compat.solvers import DistributedModel, ServingModel, SingleNodeModel

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

FP16_BYTES = 2


def _serving():
    # vol2/inference's call: Llama 3 8B on one H100, a 4,096-token context, 32 requests
    return ServingModel().solve(
        Models.Language.Llama3_8B, Hardware.Cloud.H100, seq_len=4096, batch_size=32,
        precision="fp16",
    )  # fmt: skip


def test_serving_kv_cache_size_is_the_batchs_cache():
    res = _serving()
    # Llama 3 8B (Meta 2024 model card): 32 layers, 8 KV heads of 128 dims (GQA)
    context = 4096 + 128  # the prompt plus mlsys's default output_len
    expected = 2 * 32 * 8 * 128 * context * 32 * FP16_BYTES  # K and V
    assert expected == 17_716_740_096
    assert res.kv_cache_size.m_as("B") == pytest.approx(expected, rel=1e-12)


def test_serving_weights_total_and_utilization():
    res = _serving()
    params = 8_030_261_248  # Llama 3 8B parameters, embeddings and LM head untied
    assert res.model_weights_size.m_as("B") == pytest.approx(params * FP16_BYTES, rel=1e-12)
    total = params * FP16_BYTES + 17_716_740_096
    assert res.total_memory_required.m_as("B") == pytest.approx(total, rel=1e-12)
    h100_bytes = 81_559 * 2**20  # H100 SXM: 81,559 MiB of HBM3 (nvidia-smi)
    assert res.memory_utilization == pytest.approx(total / h100_bytes, rel=1e-12)
    assert 0.39 < res.memory_utilization < 0.40


def test_serving_book_fields_scale_with_tensor_parallel_devices():
    one = _serving()
    two = ServingModel().solve(
        Models.Language.Llama3_8B, Hardware.Cloud.H100, seq_len=4096, batch_size=32,
        precision="fp16", tp_size=2,
    )  # fmt: skip
    # KV heads split over the two devices: the replica stores the same cache
    assert two.kv_cache_size.m_as("B") == pytest.approx(one.kv_cache_size.m_as("B"), rel=1e-9)
    assert two.memory_utilization == pytest.approx(one.memory_utilization / 2, rel=0.02)


def test_single_node_bottleneck_and_energy():
    res = SingleNodeModel().solve(Models.Language.Llama3_8B, Hardware.Cloud.H100)
    assert res.bottleneck == res.bound.capitalize() and res.bottleneck in ("Compute", "Memory")
    # linear power model: H100 TDP 700 W, idle 15 % of TDP when no idle power is catalogued
    power_W = 0.15 * 700 + res.mfu * (700 - 0.15 * 700)
    assert res.energy.m_as("J") == pytest.approx(power_W * res.latency.m_as("s"), rel=1e-12)
    # a 2,048-token prefill at 8e9 params x 2 FLOP/token is ~33 TFLOP: a few hundred ms
    assert 0.05 < res.latency.m_as("s") < 1.0 and 20 < res.energy.m_as("J") < 700


def test_distributed_latencies_and_node_profile():
    res = DistributedModel().solve(
        Models.Language.Llama3_8B, Systems.Clusters.Research_256, batch_size=1024,
        seq_len=2048, precision="fp16", efficiency=0.45, tp_size=8, pp_size=4,
        microbatch_count=16, zero_stage=1, overlap_comm=True,
    )  # fmt: skip
    assert res.dp_communication_latency.m_as("s") == res.dp_communication_total.m_as("s")
    # overlap hides part of the collective: the exposed share is smaller than the book's
    assert res.dp_communication_time.m_as("s") <= res.dp_communication_latency.m_as("s")
    assert res.tp_communication_latency.m_as("s") == res.tp_communication_time.m_as("s") > 0
    assert res.ep_communication_latency.m_as("s") == 0.0  # dense model, ep_size 1
    node = res.node_profile
    assert isinstance(node, NodeProfile)
    # MFU over compute time alone: model FLOPs / (compute time x devices x peak)
    assert node.mfu == pytest.approx(
        res.mfu * res.step_time.m_as("s") / res.compute_time.m_as("s"), rel=1e-9
    )
    assert node.mfu > res.mfu
    assert node.memory_footprint.m_as("B") == res.memory_per_accelerator.total.m_as("B")
    assert node.feasible is (node.memory_footprint < node.memory_capacity)
    assert node.latency.m_as("s") == res.compute_time.m_as("s")


def test_plain_mlsys_results_are_untouched():
    import mlsys

    res = mlsys.ServingModel().solve(mlsys.Models.Llama3_8B, mlsys.Hardware.H100)
    assert type(res).__name__ == "ServingResult" and not hasattr(res, "kv_cache_size")
