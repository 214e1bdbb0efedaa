"""ServingModel and the serving formulas: derivations written out in each test."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsys import Fabrics, Hardware, Models, Nodes, ServingModel
from mlsys.core.errors import InfeasibleError, MlsysError, ParameterError
from mlsys.core.formulas.serving import (
    decode_kv_reads,
    decode_kv_reread_bytes,
    decode_step_bytes,
    decode_step_flops,
    expected_active_experts,
    max_sequences_in_memory,
    paged_kv_blocks,
    paged_kv_waste_fraction,
    prefill_flops,
    tensor_parallel_allreduce_bytes,
)
from mlsys.core.types import TransformerWorkload

SM = ServingModel()


# --------------------------------------------------------------------------- formulas
def test_expected_active_experts_limits_and_mixtral_value():
    # One token reads exactly k experts; a huge batch reads all E.
    assert expected_active_experts(8, 2, 1) == pytest.approx(2.0)
    assert expected_active_experts(8, 2, 10_000) == pytest.approx(8.0)
    # 8 · (1 − 0.75^8) = 8 · (1 − 0.100113) = 7.1991
    assert expected_active_experts(8, 2, 8) == pytest.approx(7.1991, abs=1e-4)
    # DeepSeek-V3 style: top-8 of 256 at batch 32: 256 · (1 − (31/32)^32) = 256 · 0.63794
    assert expected_active_experts(256, 8, 32) == pytest.approx(163.31, abs=0.01)


def test_decode_step_flops_and_bytes():
    # 2 · 6.607e9 + 4 · 32 · 1024 · 4096 = 13.214e9 + 0.537e9
    assert decode_step_flops(6.607e9, 32, 1024, 4096) == pytest.approx(13.751e9, rel=1e-4)
    assert decode_step_flops(6.607e9, 32, 1024, 4096, 8) == pytest.approx(8 * 13.751e9, rel=1e-4)
    # 70B: KV per token 2·80·8·128·2 = 327,680 B; 16 sequences × 2048 tokens = 10.737 GB.
    assert decode_step_bytes(137.96e9, 327680, 2048, 16) == pytest.approx(148.697e9, rel=1e-4)


def test_prefill_flops_counts_lm_head_once_per_sequence():
    one = prefill_flops(6.476e9, 0.131e9, 32, 2048, 4096)
    expected = 2048 * (2 * 6.476e9 + 2 * 32 * 2048 * 4096) + 2 * 0.131e9
    assert one == pytest.approx(expected)
    assert prefill_flops(6.476e9, 0.131e9, 32, 2048, 4096, batch_size=3) == pytest.approx(3 * one)


def test_paged_kv_blocks_and_waste_below_4_percent():
    assert paged_kv_blocks(1000, 16) == 63.0
    assert paged_kv_blocks(1024, 16) == 64.0
    assert paged_kv_waste_fraction(1024, 16) == 0.0
    assert paged_kv_waste_fraction(1000, 16) == pytest.approx(8 / 1008)
    # Kwon et al. (2023): under 4 % waste for realistic lengths (here >= 400 tokens).
    assert paged_kv_waste_fraction(401, 16) < 0.04


def test_decode_kv_reads_per_query_heads_per_block():
    # GQA group g = 64 / 8 = 8 query heads per KV head. lmdeploy v0.1 serves 4 per block:
    # ceil(8/4) = 2 reads; a block per query head (PagedAttention v1): 8; a group-packed
    # kernel (None) or one serving more heads than the group: 1. Multi-head: always 1.
    assert decode_kv_reads(64, 8, 4) == 2.0
    assert decode_kv_reads(64, 8, 1) == 8.0
    assert decode_kv_reads(64, 8, 3) == 3.0  # ceil(8/3)
    assert decode_kv_reads(64, 8) == 1.0
    assert decode_kv_reads(64, 8, 16) == 1.0
    assert decode_kv_reads(32, 32, 1) == 1.0
    # per tensor-parallel shard the ratio is the same: 16 query and 2 KV heads on 4 GPUs
    assert decode_kv_reads(16, 2, 4) == 2.0
    # the array path gives the same, element by element
    np.testing.assert_array_equal(decode_kv_reads(np.array([64, 32]), np.array([8, 32]), 4), [2, 1])
    np.testing.assert_array_equal(decode_kv_reads(np.array([64, 32]), 8), [1, 1])


def test_decode_kv_reread_bytes_is_the_extra_passes_over_the_cache():
    # one pass: 2 (K and V) · b · s · n_kv · d · e = 2 · 64 · 1152 · 2 · 128 · 2 = 75.5 MB;
    # two reads move one more pass, one read none, eight reads seven more
    one_pass = 2 * 64 * 1152 * 2 * 128 * 2
    assert one_pass == 75_497_472
    assert decode_kv_reread_bytes(64, 1152, 2, 128, 2.0, 2.0) == one_pass
    assert decode_kv_reread_bytes(64, 1152, 2, 128, 2.0, 1.0) == 0.0
    assert decode_kv_reread_bytes(64, 1152, 2, 128, 2.0, 8.0) == 7 * one_pass
    arr = decode_kv_reread_bytes(np.array([64, 64]), 1152, 2, 128, 2.0, np.array([2.0, 8.0]))
    np.testing.assert_allclose(arr, [one_pass, 7 * one_pass], rtol=1e-12)


def test_allreduce_bytes_and_memory_fit():
    assert tensor_parallel_allreduce_bytes(2048, 8192, 2.0) == 2048 * 8192 * 2
    # 63e9 / (524288 · 4096) = 29.34 -> 29 sequences
    assert max_sequences_in_memory(63e9, 524288, 4096) == 29.0
    assert max_sequences_in_memory(-1.0, 524288, 4096) == 0.0


# --------------------------------------------------------------------------- ServingModel
def test_70b_fp16_on_one_80gb_device_is_infeasible_and_reports_no_latency():
    res = SM.solve(Models.Llama2_70B, Hardware.H100, precision="fp16")
    assert res.feasible is False
    assert "do not fit" in res.infeasibility_reason
    for field in ("ttft", "itl", "e2e_latency", "tokens_per_second", "decode_tokens_per_second"):
        assert res[field] is None
    # Memory is still reported: 68.98e9 parameters × 2 bytes.
    assert res.si("weight_bytes_per_accelerator") == pytest.approx(137.95e9, rel=1e-3)
    with pytest.raises(InfeasibleError):
        SM.solve(Models.Llama2_70B, Hardware.H100, precision="fp16", raise_errors=True)


def test_price_infeasible_reports_the_what_if_latencies_and_keeps_the_verdict():
    kw = dict(prompt_len=2048, output_len=128, precision="fp16")
    whatif = SM.solve(Models.Llama2_70B, Hardware.H100, price_infeasible=True, **kw)
    assert whatif.feasible is False and "do not fit" in whatif.infeasibility_reason
    # batch-1 decode streams the 137.95 GB of fp16 weights once per token at 3.35 TB/s
    floor_s = 137.95e9 / 3.35e12  # 41.2 ms
    assert floor_s < whatif.si("itl") < floor_s / 0.6
    # the same step on an H200, which holds it: only the bandwidth differs (4.8 TB/s)
    h200 = SM.solve(Models.Llama2_70B, Hardware.H200, **kw)
    assert h200.feasible and h200.si("itl") > 137.95e9 / 4.8e12
    assert whatif.si("itl") / h200.si("itl") == pytest.approx(4.8 / 3.35, rel=0.05)
    # a configuration that fits is priced identically either way
    again = SM.solve(Models.Llama2_70B, Hardware.H200, price_infeasible=True, **kw)
    assert again.si("itl") == h200.si("itl") and again.si("ttft") == h200.si("ttft")


def test_decode_kernel_reading_kv_heads_twice_adds_one_pass_over_the_cache():
    # Llama-2-70B on 4 A100s, batch 64 at 128 + 1024 = 1152 mean cached tokens. Each
    # device holds 2 KV heads of 128 per layer; with 4 query heads per block each is read
    # twice, adding one pass over the cache: 80 layers · 2 · 64 · 1152 · 2 · 128 · 2 B =
    # 6.04 GB at 2.039 TB/s × 0.85 = 3.485 ms to the decode step; prefill is unchanged.
    kw = dict(batch_size=64, prompt_len=128, output_len=2048, precision="fp16", tp_size=4)
    once = SM.solve(Models.Llama2_70B, Hardware.A100_80GB, **kw)
    twice = SM.solve(
        Models.Llama2_70B, Hardware.A100_80GB, decode_attention_heads_per_block=4, **kw
    )
    extra = 80 * 2 * 64 * 1152 * 2 * 128 * 2 / (2.039e12 * 0.85)
    assert extra == pytest.approx(3.485e-3, rel=1e-3)
    assert twice.si("itl") - once.si("itl") == pytest.approx(extra, rel=1e-6)
    assert twice.si("ttft") == once.si("ttft")
    # a multi-head model has nothing to re-read
    mha = dict(batch_size=8, prompt_len=512, output_len=64, precision="fp16")
    assert SM.solve(
        Models.Llama2_7B, Hardware.A100_80GB, decode_attention_heads_per_block=1, **mha
    ).si("itl") == SM.solve(Models.Llama2_7B, Hardware.A100_80GB, **mha).si("itl")
    with pytest.raises(ParameterError, match="decode_attention_heads_per_block"):
        SM.solve(Models.Llama2_7B, Hardware.A100_80GB, decode_attention_heads_per_block=0)


def test_tensor_parallelism_makes_70b_fit_and_adds_allreduce_time():
    res = SM.solve(Models.Llama2_70B, Nodes.DGX_H100, tp_size=4, prompt_len=512, output_len=64)
    assert res.feasible
    assert res.si("weight_bytes_per_accelerator") == pytest.approx(137.95e9 / 4, rel=1e-3)
    # Decode: 160 all-reduces of 8192 · 2 bytes on 4 ranks of NVLink 4 (450 GB/s). NCCL's
    # cost model (NCCL 2.18.6 tuning.cc) picks the LL protocol (6.6 µs + 6 steps × 0.6 µs
    # + 0.28 µs = 10.48 µs; NVLS, 25 µs of latency, loses), whose steps take 1.10 µs each
    # as measured on 8 H100 (22.0 µs for 14 steps, vLLM PR 8558): 6.6 + 6 × 1.10 µs plus
    # 1.5 · 16384 B at a quarter of the 370 GB/s NVLink payload rate (92.5 GB/s, over LL's
    # 87.7 GB/s cap) = 13.2 + 0.280 = 13.480 µs.
    fab = Nodes.DGX_H100.intra_fabric
    payload = fab.bandwidth_Bps * 370 / 450
    per = 6.6e-6 + 6 * 1.10e-6 + 1.5 * 8192 * 2 / min(payload * 0.25, 87.7e9)
    assert res.si("tp_communication_time_decode") == pytest.approx(160 * per, rel=1e-6)
    # Prefill of 512 tokens: 8.39 MB messages. Simple ring: 8.4 + 6 × 3.4 = 28.8 µs + 34.0 µs
    # = 62.8 µs; NVLS: 25 µs + 8.39 MB / 275 GB/s = 55.5 µs, the faster on NVSwitch 3.
    m = 512 * 8192 * 2
    ring = 8.4e-6 + 6 * 3.4e-6 + 1.5 * m / payload
    nvls = 25e-6 + m / (fab.bandwidth_Bps * 275 / 450)
    assert nvls < ring
    assert res.si("tp_communication_time_prefill") == pytest.approx(160 * nvls, rel=1e-6)
    tp8 = SM.solve(Models.Llama2_70B, Nodes.DGX_H100, tp_size=8, prompt_len=512, output_len=64)
    assert tp8.si("itl") < res.si("itl")


def test_decode_allreduces_take_the_measured_ll_step_of_the_nvlink_generation():
    from mlsys.core.formulas.collectives import nccl_allreduce_time

    # A bare A100 replica's links are NVLink 3: the 16 KB decode all-reduces on 4 GPUs
    # run as LL (NCCL's model) with 1.98 µs steps (DGX A100, nccl-tests issue 123):
    # 6.6 + 6 × 1.98 µs + 1.5 · 16384 B / (300 GB/s × 0.822 / 4) = 18.88 µs, × 160.
    kw = dict(prompt_len=1, output_len=128, tp_size=4, precision="fp16")
    a100 = SM.solve(Models.Llama2_70B, Hardware.A100_80GB, **kw)
    per = 6.6e-6 + 6 * 1.98e-6 + 1.5 * 16384 / (300e9 * 370 / 450 / 4)
    assert a100.si("tp_communication_time_decode") == pytest.approx(160 * per, rel=1e-9)
    # the same through the DGX A100 node's NVLINK3 fabric
    dgx = SM.solve(Models.Llama2_70B, Nodes.DGX_A100, **kw)
    assert dgx.si("tp_communication_time_decode") == pytest.approx(160 * per, rel=1e-9)
    # NVLink 5 has no measurement: NCCL's own model prices its steps (0.6 µs)
    b200 = SM.solve(Models.Llama2_70B, Hardware.B200, **kw)
    model = nccl_allreduce_time(16384, 4, Hardware.B200.scaleup_bandwidth_Bps)
    assert b200.si("tp_communication_time_decode") == pytest.approx(160 * model, rel=1e-9)


def test_ttft_is_one_requests_prefill_unless_batched_prefill():
    kw = dict(batch_size=16, prompt_len=1024, output_len=128)
    single = SM.solve(Models.Llama2_7B, Hardware.H100, **kw)
    batched = SM.solve(Models.Llama2_7B, Hardware.H100, batched_prefill=True, **kw)
    alone = SM.solve(Models.Llama2_7B, Hardware.H100, batch_size=1, prompt_len=1024, output_len=128)
    assert single.scheduling == "single-request prefill"
    assert single.si("ttft") == pytest.approx(alone.si("ttft"))
    # Compute-bound prefill: 16 prompts take at most 16 times as long — their GEMMs are
    # 16 times taller, which wastes less of the last wave and amortises the fixed
    # per-kernel costs — and no less than 16 times the prompt's FLOPs at 0.75 of peak.
    assert batched.si("ttft") < 16 * single.si("ttft")
    assert batched.si("ttft") > 16 * single.si("prefill_flops") / (989.4e12 * 0.75)
    assert batched.si("ttft") == pytest.approx(single.si("prefill_time"))


def test_phases_bound_and_roofline_consistency():
    res = SM.solve(Models.Llama2_7B, Hardware.H100, batch_size=1, prompt_len=2048, output_len=256)
    assert res.prefill_bound == "compute" and res.decode_bound == "memory"
    # Prefill, operator by operator, can be no faster than its FLOPs at 0.75 of the H100's
    # 989.4 TFLOP/s, and the GEMMs' quantisation, element-wise kernels and fixed costs keep
    # it above: MFU below 0.75.
    assert res.si("ttft") > res.si("prefill_flops") / (989.4e12 * 0.75)
    assert 0.5 < res.prefill_mfu < 0.75
    # Decode streams its bytes at 3.35 TB/s × 0.85 at best, plus 32 layers × 10 kernels ×
    # 4 µs and the LM head's kernel: MBU below the 0.85 streaming efficiency.
    floor = res.si("decode_bytes_per_step") / (3.35e12 * 0.85) + 321 * 4e-6
    assert res.si("itl") >= floor * 0.999
    assert res.decode_mbu < 0.85
    # e2e = TTFT + 255 ITL
    assert res.si("e2e_latency") == pytest.approx(res.si("ttft") + 255 * res.si("itl"))
    assert res.si("decode_tokens_per_second") == pytest.approx(1 / res.si("itl"))


def test_large_batch_decode_turns_compute_bound():
    # Ridge of H100 bf16 with default efficiencies: 742 TFLOP/s / 2.85 TB/s = 261 FLOP/B.
    # A 7B model with a short context at batch 512 does about 512 FLOP per weight byte.
    res = SM.solve(Models.Llama2_7B, Hardware.H100, batch_size=512, prompt_len=16, output_len=16)
    assert res.feasible
    assert res.decode_bound == "compute"


def test_gqa_shrinks_kv_cache_by_heads_ratio():
    mha = SM.solve(Models.Llama2_7B, Hardware.H100, batch_size=4, prompt_len=1000, output_len=24)
    # Llama-2-7B: 2 · 32 layers · 32 heads · 128 · 2 B = 524,288 B per token.
    assert mha.si("kv_cache_bytes_per_accelerator") == pytest.approx(4 * 1024 * 524288)
    gqa_model = TransformerWorkload(
        **{**Models.Llama2_7B.model_dump(), "kv_heads": 8, "name": "7b-gqa8"}
    )
    gqa = SM.solve(gqa_model, Hardware.H100, batch_size=4, prompt_len=1000, output_len=24)
    assert gqa.si("kv_cache_bytes_per_accelerator") == pytest.approx(
        mha.si("kv_cache_bytes_per_accelerator") / 4
    )


def test_kv_heads_replicate_when_tp_exceeds_them():
    # Llama-2-70B has 8 KV heads: at tp 8 each device holds one, at tp 16 still one.
    m = Models.Llama2_70B
    t8 = SM.solve(m, Hardware.H100, tp_size=8, batch_size=1, prompt_len=1000, output_len=24)
    t16 = SM.solve(m, Hardware.H100, tp_size=16, batch_size=1, prompt_len=1000, output_len=24)
    per_token_dev = 2 * 80 * 1 * 128 * 2
    assert t8.si("kv_cache_bytes_per_accelerator") == pytest.approx(1024 * per_token_dev)
    assert t16.si("kv_cache_bytes_per_accelerator") == pytest.approx(1024 * per_token_dev)


def test_max_batch_size_is_the_boundary_of_feasibility():
    kw = dict(prompt_len=2048, output_len=2048)
    probe = SM.solve(Models.Llama2_7B, Hardware.A100_80GB, **kw)
    n = probe.max_batch_size
    # The A100 exposes 80 GiB = 85.90 GB; the library's allowance leaves 85.90 − 1 = 84.90
    # GB for tensors (weights and KV cache are allocated once: no fragmentation charged on
    # them); minus 13.5 GB of weights and the prefill workspace (0.19 GB, with its 5 %),
    # at 4096 tokens × 524,288 B = 2.147 GB per sequence: 33 sequences.
    assert n == 33
    assert SM.solve(Models.Llama2_7B, Hardware.A100_80GB, batch_size=n, **kw).feasible
    over = SM.solve(Models.Llama2_7B, Hardware.A100_80GB, batch_size=n + 1, **kw)
    assert not over.feasible and "KV cache" in over.infeasibility_reason


def test_moe_decode_reads_union_of_experts_but_stores_all():
    m = Models.Mixtral_8x7B
    one = SM.solve(m, Hardware.H100, tp_size=2, batch_size=1, prompt_len=1, output_len=2)
    eight = SM.solve(m, Hardware.H100, tp_size=2, batch_size=8, prompt_len=1, output_len=2)
    b = m.param_breakdown
    expert = b["mlp_experts"] / (32 * 8)
    dense = b["total"] - b["mlp_experts"] - b["embedding"]
    kv_and_act_1 = one.si("decode_bytes_per_step") - (dense + 32 * 2 * expert) * 2
    # The rest is 0.2 MB of KV cache and ~8 MB of activation traffic, against 25 GB.
    assert 0 < kv_and_act_1 < 1e7
    distinct = 8 * (1 - 0.75**8)
    weights_8 = (dense + 32 * distinct * expert) * 2
    assert eight.si("decode_bytes_per_step") == pytest.approx(weights_8, rel=1e-3)
    # Memory holds every expert; FLOPs follow the active (top-2) parameters, plus
    # attention over the mean context, prompt + output/2 = 2 tokens.
    assert one.si("weight_bytes_per_accelerator") == pytest.approx(m.total_params * 2 / 2)
    assert one.si("decode_flops_per_step") == pytest.approx(
        2 * b["matmul_active"] + 4 * 32 * 2 * 4096, rel=1e-9
    )


def test_fp8_weights_default_to_fp16_kv_and_activations():
    res = SM.solve(Models.Llama2_7B, Hardware.H100, precision="fp8")
    assert (res.precision, res.kv_precision, res.activation_precision) == ("fp8", "fp16", "fp16")
    assert res.compute_precision == "fp8"  # H100 has FP8 tensor cores
    a100 = SM.solve(Models.Llama2_7B, Hardware.A100_80GB, precision="fp8")
    assert a100.compute_precision == "fp16"  # weight-only quantisation on Ampere
    # one byte per weight, but the output head (32000 × 4096) stays 16-bit: quantisers
    # leave lm_head unquantised
    head = 32000 * 4096
    expected = Models.Llama2_7B.total_params + head
    assert res.si("weight_bytes_per_accelerator") == pytest.approx(expected)


def test_pipeline_parallelism_adds_hops_and_fill_to_ttft():
    m, hw = Models.Llama2_70B, Nodes.DGX_H100
    # 4,032 + 64 tokens fill Llama 2's 4,096-token context window exactly
    kw = dict(batch_size=24, prompt_len=4032, output_len=64)
    tp = SM.solve(m, hw, tp_size=2, **kw)
    pp = SM.solve(m, hw, tp_size=2, pp_size=2, **kw)
    # tp 2: 69 GB of weights per device leave about 15.5 GB of the 85.52 − 1 = 84.5 GB
    # for tensors (less 0.5 GB of workspace); the KV cache of 24 × 4096 tokens × 163,840 B
    # per token per device is 16.1 GB. Two stages halve both.
    assert not tp.feasible
    assert pp.feasible and pp.accelerators == 4
    fab = hw.intra_fabric
    hop = fab.latency_s + 24 / 2 * 8192 * 2 / fab.bandwidth_Bps  # 12 sequences per micro-batch
    assert pp.si("pp_communication_time") == pytest.approx(hop)
    # One prefill crosses both stages: TTFT is not shorter than at tp 4 on one stage.
    tp4 = SM.solve(m, hw, tp_size=4, **kw)
    assert pp.si("ttft") > tp4.si("ttft")


def test_node_caps_tensor_parallelism_and_bad_divisors_are_infeasible():
    res = SM.solve(Models.Llama2_70B, Nodes.DGX_H100, tp_size=16)
    assert not res.feasible and "node" in res.infeasibility_reason
    res = SM.solve(Models.Llama2_70B, Hardware.H100, tp_size=3)
    assert not res.feasible and "heads" in res.infeasibility_reason


def test_explicit_fabric_is_used():
    slow = SM.solve(
        Models.Llama2_70B,
        Hardware.H100,
        tp_size=4,
        prompt_len=512,
        output_len=64,
        fabric=Fabrics.IB_NDR,
    )
    fast = SM.solve(Models.Llama2_70B, Hardware.H100, tp_size=4, prompt_len=512, output_len=64)
    # 8.39 MB all-reduces on 4 ranks: over InfiniBand NDR (50 GB/s, network steps) the
    # LL128 ring takes 14 + 6 × 4 µs + 1.5 × 8.39 MB / (50 GB/s × 0.92) = 312 µs; a bare
    # H100's own NVLink (no switch known, so no NVLS) runs the LL128 ring in
    # 14 + 6 × 1.9 µs + 1.5 × 8.39 MB / (370 GB/s × 0.92) = 62.4 µs: 5 times less.
    slow_ar = 14e-6 + 6 * 4e-6 + 1.5 * 512 * 8192 * 2 / (50e9 * 0.92)
    fast_ar = 14e-6 + 6 * 1.9e-6 + 1.5 * 512 * 8192 * 2 / (370e9 * 0.92)
    assert slow.si("tp_communication_time_prefill") == pytest.approx(160 * slow_ar, rel=1e-6)
    assert fast.si("tp_communication_time_prefill") == pytest.approx(160 * fast_ar, rel=1e-6)


def test_results_carry_units_and_aliases():
    res = SM.solve(Models.Llama2_7B, Hardware.H100)
    assert res.ttft.to("ms").magnitude == pytest.approx(res.si("ttft") * 1e3)
    assert res.tokens_per_second.to("token/s").magnitude > 0
    with pytest.warns(DeprecationWarning):
        assert res.time_per_output_token == res.itl
    assert math.isfinite(res.si("itl"))


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": -2}, "batch_size"),
        ({"batch_size": 1.5}, "batch_size"),
        ({"output_len": 0}, "output_len"),
        ({"output_len": 2.5}, "output_len"),  # tokens are whole
        ({"prompt_len": 100.5}, "prompt_len"),
        ({"prompt_len": 0}, "prompt_len"),
        ({"prompt_len": float("nan")}, "prompt_len"),
        ({"precision": "fp7"}, "precision"),
        ({"kv_precision": "bogus"}, "kv_precision"),
        ({"tp_size": 0}, "tp_size"),
        ({"pp_size": -1}, "pp_size"),
        ({"efficiency": 1.5}, "efficiency"),
        ({"memory_utilization": 0.0}, "memory_utilization"),
    ],
)
def test_bad_inputs_raise_parameter_error(kwargs, name):
    with pytest.raises(ParameterError) as info:
        SM.solve(Models.Llama2_7B, Hardware.H100, **kwargs)
    assert info.value.name == name
    assert isinstance(info.value, MlsysError)


def test_non_transformer_model_and_bad_hardware_rejected():
    with pytest.raises(ParameterError):
        SM.solve(Models.ResNet50, Hardware.H100)
    with pytest.raises(ParameterError):
        SM.solve(Models.Llama2_7B, "H100")


def test_docstring_examples():
    import doctest

    import mlsys.core.formulas.serving as formulas_mod
    import mlsys.core.solvers.batching as batching_mod
    import mlsys.core.solvers.serving as serving_mod

    for mod in (formulas_mod, serving_mod, batching_mod):
        failures, tried = doctest.testmod(mod, verbose=False)
        assert tried > 0 and failures == 0, mod.__name__


def test_numpy_integers_accepted_and_booleans_rejected():
    import numpy as np

    res = SM.solve(Models.Llama2_7B, Hardware.H100, batch_size=np.int64(4), prompt_len=np.int32(64))
    assert res.batch_size == 4 and res.feasible
    with pytest.raises(ParameterError):
        SM.solve(Models.Llama2_7B, Hardware.H100, output_len=True)


@settings(max_examples=20, deadline=None)
@given(
    batch=st.integers(1, 64),
    prompt=st.integers(1, 4096),
    output=st.integers(1, 2048),
    extra=st.integers(1, 64),
)
def test_monotone_in_batch_and_lengths(batch, prompt, output, extra):
    m, hw = Models.Llama2_7B, Hardware.H100
    base = SM.solve(m, hw, batch_size=batch, prompt_len=prompt, output_len=output)
    bigger = SM.solve(m, hw, batch_size=batch + extra, prompt_len=prompt, output_len=output)
    longer = SM.solve(m, hw, batch_size=batch, prompt_len=prompt + extra, output_len=output)
    # Latencies never fall with more work; decode throughput never falls with batch.
    assert bigger.si("decode_flops_per_step") > base.si("decode_flops_per_step")
    assert bigger.si("decode_bytes_per_step") > base.si("decode_bytes_per_step")
    assert longer.si("prefill_flops") > base.si("prefill_flops")
    assert bigger.max_batch_size == base.max_batch_size
    if base.feasible and bigger.feasible:
        assert bigger.si("itl") >= base.si("itl")
        assert bigger.si("decode_tokens_per_second") >= base.si("decode_tokens_per_second")
    if base.feasible and longer.feasible:
        assert longer.si("ttft") >= base.si("ttft")
    # Feasibility is exactly "the request fits the 4,096-token window and the batch fits".
    fits_window = prompt + output <= m.context_window == 4096
    assert base.feasible == (fits_window and batch <= base.max_batch_size)


def test_memory_budget_conventions():
    kw = dict(prompt_len=2048, output_len=2048, batch_size=8)
    lib = SM.solve(Models.Llama2_7B, Hardware.A100_80GB, **kw)
    allocated = (
        lib.si("weight_bytes_per_accelerator")
        + lib.si("kv_cache_bytes_per_accelerator")
        + lib.si("activation_bytes_per_accelerator")
    )
    # Library allowance (as MemoryModel): 1 GB + 5 % of the transient workspace (weights
    # and KV cache are allocated once).
    work = lib.si("activation_bytes_per_accelerator")
    assert lib.si("framework_overhead_per_accelerator") == pytest.approx(1e9 + 0.05 * work)
    assert lib.si("memory_per_accelerator") == pytest.approx(allocated + 0.05 * work + 1e9)
    # vLLM's gpu_memory_utilization = 0.9 of the 80 GiB (85.90 GB) exposed: 77.31 GB for
    # tensors, 8.59 GB left to the runtime; (77.31 − 13.48 − workspace) / 2.147 GB per
    # 4096-token sequence = 29 sequences.
    vllm = SM.solve(Models.Llama2_7B, Hardware.A100_80GB, memory_utilization=0.9, **kw)
    assert vllm.si("memory_available_per_accelerator") == pytest.approx(0.9 * 80 * 2**30)
    assert vllm.si("framework_overhead_per_accelerator") == pytest.approx(0.1 * 80 * 2**30)
    assert vllm.max_batch_size == 29


def test_replicated_kv_heads_are_read_by_every_device():
    # Llama-2-70B at tp 16 on 8 KV heads: each device keeps one KV head (a replica), so a
    # decode step reads 2·80·128·2 B per cached token per device, as at tp 8, while its
    # weight share halves.
    m = Models.Llama2_70B
    kw = dict(batch_size=1, prompt_len=4000, output_len=2, precision="fp16")
    t8 = SM.solve(m, Hardware.H100, tp_size=8, **kw)
    t16 = SM.solve(m, Hardware.H100, tp_size=16, **kw)
    kv_dev = 4001 * 2 * 80 * 128 * 2
    w8 = t8.si("decode_bytes_per_step") / 8 - kv_dev
    w16 = t16.si("decode_bytes_per_step") / 16 - kv_dev
    assert w16 == pytest.approx(w8 / 2, rel=1e-6)


def test_unhashable_precision_is_a_parameter_error():
    with pytest.raises(ParameterError):
        SM.solve(Models.Llama2_7B, Hardware.H100, precision=["bf16"])
