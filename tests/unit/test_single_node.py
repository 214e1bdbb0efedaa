"""SingleNodeModel: roofline of prefill, decode and training steps; derivations in comments."""

from __future__ import annotations

import doctest

import pytest
from llama_shapes import LLAMA2_7B, LLAMA3_8B, MIXTRAL_8X7B, llama_style

import mlsys.core.solvers.efficiency as efficiency_mod
import mlsys.core.solvers.roofline as roofline_mod
from mlsys import Hardware, InfeasibleError, Models, Workload
from mlsys.core.formulas import kv_cache_bytes, training_flops_per_token
from mlsys.core.solvers.efficiency import default_efficiency, resolve_efficiency
from mlsys.core.solvers.roofline import SingleNodeModel, SingleNodeResult

H100 = Hardware.H100
BW = H100.memory_bandwidth_Bps
PEAK = H100.peak_flops_s("bf16")
ETA_C, ETA_M = (
    default_efficiency(H100, "bf16", "compute"),
    default_efficiency(H100, "bf16", "memory"),
)

# Llama-2-7B shape (Touvron et al. 2023)
LLAMA7 = llama_style(name="llama7", seq_len=4096, **LLAMA2_7B)
# Llama-3.1-8B shape (GQA: 8 KV heads), Llama Team 2024
LLAMA3_8 = llama_style(name="llama3-8b", seq_len=8192, **LLAMA3_8B)
MIXTRAL = llama_style(name="mixtral", seq_len=4096, **MIXTRAL_8X7B)


def solve(*args, **kw) -> SingleNodeResult:
    return SingleNodeModel().solve(*args, **kw)


def test_efficiency_doctests():
    failures, tried = doctest.testmod(efficiency_mod, verbose=False)
    assert tried >= 3 and failures == 0


def test_solver_doctest():
    failures, tried = doctest.testmod(roofline_mod, verbose=False)
    assert tried >= 2 and failures == 0


def test_decode_batch1_is_weight_and_kv_streaming():
    # Llama-2-70B, batch 1, 4096 cached tokens: every step reads all bf16 weights but
    # the input embedding table (only one row of it): 2 × (68.98e9 − 32000·8192) B, and
    # the KV cache (2·80·8·128·4097·2 B); at 0.85 × 3.35 TB/s that is
    # (137.43 + 1.34) GB / 2.8475 TB/s = 48.7 ms, plus the fixed cost of 80 layers × 10
    # kernels and the embedding gather at 4 µs each: 3.2 ms.
    res = solve(Models.Llama2_70B, H100, batch_size=1, phase="decode", kv_cache_len=4096)
    m = Models.Llama2_70B
    streamed = 2 * (m.total_params - 32000 * 8192) + kv_cache_bytes(80, 8, 128, 4097)
    expected = streamed / (BW * ETA_M) + (80 * 10 + 1) * 4e-6
    assert res.bound == "memory"
    assert res.si("latency") == pytest.approx(expected, rel=0.005)
    assert res.si("tokens_per_second") == pytest.approx(1 / res.si("latency"))
    ops = res.si("operators")
    assert ops.pop("kernel_overhead")["time"] == pytest.approx(80 * 10 * 4e-6)
    assert all(op["bound"] == "memory" for op in ops.values())


def test_large_batch_decode_with_short_context_becomes_compute_bound():
    # Weights are reused by every sequence in the batch: the GEMM intensity is about
    # b FLOP/byte at bf16, so past the ridge (0.75·989.4/(0.85·3.35) ≈ 261) the
    # projections turn compute-bound. With GQA and a 128-token cache the KV traffic
    # (2·32·1024·2 B = 131 kB per cached token) stays below the GEMM time:
    # 2048·129·131 kB / 2.85 TB/s = 12 ms vs 2·2048·7.5e9 / 742 TFLOP/s = 41 ms.
    small = solve(LLAMA3_8, H100, batch_size=8, phase="decode", kv_cache_len=128)
    large = solve(LLAMA3_8, H100, batch_size=2048, phase="decode", kv_cache_len=128)
    assert small.bound == "memory"
    assert large.si("operators")["mlp_up"]["bound"] == "compute"
    assert large.bound == "compute"
    # batch 8 streams 16 GB of weights per step (≈ 5.6 ms, ≈ 1.4k tok/s); batch 2048 is
    # bounded by ≈ 41 ms of GEMMs plus 12 ms of KV reads (≈ 37k tok/s): about 25×.
    ratio = large.si("tokens_per_second") / small.si("tokens_per_second")
    assert 20 < ratio < 30


def test_long_context_decode_stays_memory_bound_due_to_kv_cache():
    # KV reads grow with the batch as fast as the FLOPs: attention intensity stays at
    # about 2·heads/kv_heads / 2 bytes ≈ 1 FLOP/byte for MHA, so it never crosses the ridge.
    res = solve(LLAMA7, H100, batch_size=256, phase="decode", kv_cache_len=4096)
    ops = res.si("operators")
    assert ops["attention_scores"]["bound"] == "memory"
    assert ops["attention_scores"]["intensity"] == pytest.approx(1.0, rel=0.01)


def test_prefill_is_compute_bound_and_time_is_the_kernel_sum():
    # 4096-token prefill of Llama-2-7B. The time is the per-layer kernel formulas
    # (GEMMs by their shapes at 0.75 × peak, fused attention at cuDNN's 0.61 of the
    # H100's peak (Shah et al. 2024, Fig. 5), element-wise traffic,
    # 10 kernels × 4 µs), times 32 layers, plus the embedding gather (read and write
    # 4096 rows of 4096 bf16 values at 0.85 × 3.35 TB/s, one kernel) and the last
    # position's logits ([1 × 4096]·[4096 × 32000]).
    from mlsys.core.formulas.gemm import gemm_time
    from mlsys.core.formulas.layer_time import transformer_layer_time

    res = solve(LLAMA7, H100, batch_size=1, seq_len=4096, phase="prefill")
    F, B, sm = PEAK * ETA_C, BW * ETA_M, H100.sm_count
    layer = transformer_layer_time(
        4096.0, 1.0, 4096.0, 4096.0, 4096, 32, 32, 128, 11008, True, 1, F, PEAK, B, 2.0,
        sm_count=sm, causal=True, attention_fractions=(0.61, 0.52),
    )  # fmt: skip
    embedding = 2 * 4096 * 4096 * 2 / B + 4e-6
    head = gemm_time(1.0, 32000.0, 4096.0, F, B, 2.0, sm)
    assert res.si("latency") == pytest.approx(32 * layer + embedding + head, rel=1e-9)
    assert res.bound == "compute"
    # no GEMM beats 0.75 of peak, so the step is never faster than its FLOPs there
    assert res.si("latency") >= res.si("total_flops") / (PEAK * ETA_C)


def test_training_flops_match_formula():
    # 3 × forward with the LM head on every token; attention causal over (s+1)/2 keys.
    s = 2048
    res = solve(LLAMA7, H100, batch_size=1, seq_len=s, phase="training")
    br = LLAMA7.param_breakdown
    per_token = training_flops_per_token(
        br["layers_matmul_active"], 32000 * 4096, 32, (s + 1) / 2, 4096, causal=False
    )
    # norms add 3 × 8·h·(2l+1) FLOPs per token, < 0.01 %
    assert res.si("model_flops") == pytest.approx(per_token * s, rel=1e-3)
    # AdamW update streams 30 bytes per parameter
    assert res.si("operators")["optimizer"]["bytes"] == pytest.approx(30 * LLAMA7.total_params)


def test_mfu_is_computed_from_result_not_input():
    a = solve(LLAMA7, H100, batch_size=8, seq_len=2048, phase="prefill")
    b = solve(LLAMA7, H100, batch_size=8, seq_len=2048, phase="prefill", efficiency=0.5)
    for r in (a, b):
        assert r.mfu == pytest.approx(r.si("model_flops") / r.si("latency") / PEAK)
    # compute-bound: lowering η_c from the default to 0.5 scales MFU by ≈ 0.5 / η_c
    assert b.mfu / a.mfu == pytest.approx(0.5 / ETA_C, rel=0.05)
    assert a.mfu < ETA_C


def test_moe_decode_reads_only_routed_experts():
    # One token routes to 2 of 8 experts: the MLP weights read are 2/8 of all experts'.
    one = solve(MIXTRAL, H100, batch_size=1, phase="decode", kv_cache_len=0)
    ops = one.si("operators")
    expert_bytes = 2 * 32 * 3 * 4096 * 14336 * 2  # 2 experts × 32 layers × 3 h f × 2 B
    weights_read = ops["mlp_up"]["bytes"] + ops["mlp_down"]["bytes"]
    assert weights_read == pytest.approx(expert_bytes, rel=0.01)
    many = solve(MIXTRAL, H100, batch_size=512, phase="decode", kv_cache_len=0)
    w_many = many.si("operators")["mlp_down"]["bytes"]
    # 512 tokens touch all 8 experts: down-projection weights 8·32·h·f·2 B plus activations
    assert w_many > 8 * 32 * 4096 * 14336 * 2


def test_generic_workload_resnet50_is_one_roofline():
    # ResNet-50: 25.6e6 parameters, 8.2 GFLOP per 224² image (4.1 GMAC, He et al. 2016),
    # activations assumed 20 MB per image at 16 bit. Batch 256 in bf16 on an H100:
    # compute 256·8.2e9/(0.75·989.4e12) = 2.83 ms vs memory (51.2 MB + 5.12 GB)/2.85 TB/s
    # = 1.82 ms: compute-bound.
    resnet = Workload(
        name="resnet50",
        kind="cnn",
        params=25.6e6,
        flops_per_sample=8.2e9,
        activation_bytes_per_sample=20e6,
    )
    res = solve(resnet, H100, batch_size=256, phase="inference")
    assert res.bound == "compute"
    assert res.si("latency") == pytest.approx(256 * 8.2e9 / (PEAK * ETA_C))
    assert res.si("tokens_per_second") == pytest.approx(256 / res.si("latency"))
    train = solve(resnet, H100, batch_size=256, phase="training")
    assert train.si("model_flops") == pytest.approx(3 * 256 * 8.2e9)


def test_infeasible_and_raise_errors():
    # 70B bf16 weights alone are 138 GB > the H100's 80 GiB = 85.9 GB
    res = solve(Models.Llama2_70B, H100, phase="decode")
    assert not res.feasible
    assert f"has {H100.memory_bytes / 1e9:.3g} GB" in res.infeasibility_reason
    with pytest.raises(InfeasibleError, match="needs"):
        solve(Models.Llama2_70B, H100, phase="decode", raise_errors=True)
    ok = solve(LLAMA7, H100, phase="decode")
    assert ok.feasible and ok.infeasibility_reason is None


def test_fp8_halves_weight_traffic():
    a = solve(LLAMA7, H100, phase="decode", kv_cache_len=0)
    b = solve(LLAMA7, H100, phase="decode", kv_cache_len=0, precision="fp8")
    # half the bytes, but the output head (32000 × 4096 weights) stays 16-bit
    assert b.si("total_bytes") == pytest.approx(a.si("total_bytes") / 2 + 32000 * 4096, rel=0.01)
    assert b.si("weights_bytes") == pytest.approx(LLAMA7.total_params + 32000 * 4096)


def test_result_units_and_aliases():
    res = solve(LLAMA7, H100, phase="decode")
    assert res.latency.to("ms").m == pytest.approx(res.si("latency") * 1e3)
    assert res["tokens_per_second"].m == pytest.approx(res.si("tokens_per_second"))
    with pytest.warns(DeprecationWarning):
        assert res.throughput.m == pytest.approx(res.si("tokens_per_second"))


def test_resolve_efficiency_forms():
    # a dict overrides only the kinds it names; the other keeps the device default
    assert resolve_efficiency({"memory": 0.9}, H100, "bf16") == (ETA_C, 0.9)
    assert resolve_efficiency((0.6, 0.7), H100, "bf16") == (0.6, 0.7)
    assert default_efficiency("tpu", "bf16", "memory") == 0.85


def test_node_uses_its_accelerator():
    from mlsys import Nodes

    node = Nodes.DGX_H100
    a = solve(LLAMA7, node, phase="decode")
    b = solve(LLAMA7, node.accelerator, phase="decode")
    assert a.si("latency") == b.si("latency")


def test_footprint_includes_framework_allowance():
    # same allowance as MemoryModel: 1 GB + 5 % of the bytes that come and go on a GPU
    res = solve(LLAMA7, H100, batch_size=4, phase="decode", kv_cache_len=2048)
    allocated = sum(
        res.si(k)
        for k in (
            "weights_bytes",
            "kv_cache_bytes",
            "activation_bytes",
            "gradient_bytes",
            "optimizer_bytes",
        )
    )
    # in inference 5 % of the transient activations only: weights and KV cache are
    # allocated once and do not fragment
    work = res.si("activation_bytes")
    assert res.si("framework_overhead") == pytest.approx(1e9 + 0.05 * work)
    assert res.si("memory_footprint") == pytest.approx(allocated + res.si("framework_overhead"))


def test_numpy_integers_are_accepted():
    import numpy as np

    a = solve(
        LLAMA7,
        H100,
        batch_size=np.int64(4),
        seq_len=np.int32(512),
        phase="decode",
        kv_cache_len=np.int64(100),
    )
    b = solve(LLAMA7, H100, batch_size=4, seq_len=512, phase="decode", kv_cache_len=100)
    assert a.si("latency") == b.si("latency")
