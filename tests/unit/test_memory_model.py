"""MemoryModel: model states, activations, KV cache and the framework allowance."""

from __future__ import annotations

import doctest
import itertools

import pytest
from llama_shapes import LLAMA3_8B, MIXTRAL_8X7B, llama_style

import mlsys.core.solvers.memory as memory_solver_mod
from mlsys import Hardware, InfeasibleError, Models, ParameterError, TransformerWorkload, Workload
from mlsys.core.formulas import activation_bytes_per_layer, embedding_activation_bytes
from mlsys.core.solvers.memory import (
    FRAGMENTATION_FRACTION,
    MemoryModel,
    default_framework_overhead,
)

H100 = Hardware.H100
GPT3 = TransformerWorkload(
    name="gpt3", layers=96, hidden=12288, heads=96, vocab=51200, seq_len=2048
)


def solve(*args, **kw):
    return MemoryModel().solve(*args, **kw)


def test_doctests():
    failures, tried = doctest.testmod(memory_solver_mod, verbose=False)
    assert tried >= 3 and failures == 0


@pytest.mark.parametrize(("stage", "published_gb"), [(0, 120.0), (1, 31.4), (2, 16.6), (3, 1.88)])
def test_zero_figure1_through_the_solver(stage, published_gb):
    # Rajbhandari et al. (2020) Fig. 1: Ψ = 7.5B, N_d = 64, K = 12, no activations
    # and no framework allowance: the solver's model states equal the paper's. The paper
    # trains in fp16 with fp16 gradients (2Ψ + 2Ψ + KΨ), which is the default gradient
    # dtype for precision="fp16" (bf16 would keep fp32 gradients, as Megatron-LM does).
    w = Workload(name="psi7.5B", params=7.5e9, flops_per_sample=1.0)
    res = solve(w, H100, precision="fp16", dp_size=64, zero_stage=stage, framework_overhead=0)
    assert res.si("total") / 1e9 == pytest.approx(published_gb, rel=0.01)


def test_gpt3_korthikanti_layout_activations():
    # 175B, t = 8, p = 8, 3 interleaved chunks, SP + selective, b = 1, m = 64:
    # 96 layers × 34 sbh/t × (1 + 7/24) + sbhp/t = 13.262 + 0.025 GB
    # (see tests/validation/test_korthikanti_activations.py for the derivation).
    # Korthikanti Table 3: global batch 64 = 64 micro-batches of 1 sequence
    res = solve(
        GPT3,
        H100,
        batch_size=64,
        tp_size=8,
        pp_size=8,
        v_stages=3,
        sequence_parallel=True,
        recompute="selective",
        microbatch_count=64,
    )
    assert res.microbatch_size == 1
    sbh = 2048 * 12288
    expected = 96 * 34 * sbh / 8 * (1 + 7 / 24) + sbh * 8 / 8
    assert res.si("activations") == pytest.approx(expected, rel=1e-12)
    # model states: Ψ/64 = 2.73e9 per device; bf16 weights 2 B + fp32 gradients 4 B
    # (Megatron-LM accumulates bf16 gradients in fp32) + Adam K = 12 B = 18 B each = 49.2 GB
    psi = GPT3.total_params / 64
    assert res.si("params_per_device") == pytest.approx(psi)
    assert res.si("gradients") == pytest.approx(4 * psi)
    assert res.si("weights") + res.si("gradients") + res.si("optimizer_state") == pytest.approx(
        18 * psi
    )


@pytest.mark.parametrize(
    ("tp", "pp", "m", "v", "sp", "rec"),
    [
        combo
        for combo in itertools.product(
            [1, 2, 8], [1, 4], [1, 8], [1, 2], [False, True], ["none", "selective", "full"]
        )
        # interleaving needs a pipeline and m a multiple of pp (the layout rules)
        if combo[3] == 1 or (combo[1] > 1 and combo[2] % combo[1] == 0)
    ],
)
def test_activations_are_the_cited_formulas(tp, pp, m, v, sp, rec):
    # Korthikanti Table 2 as published: scores materialised (no FlashAttention)
    res = solve(
        GPT3,
        H100,
        batch_size=2 * m,  # global batch: m micro-batches of 2
        seq_len=1024,
        tp_size=tp,
        pp_size=pp,
        microbatch_count=m,
        v_stages=v,
        sequence_parallel=sp,
        recompute=rec,
        flash_attention=False,
    )
    per_layer = activation_bytes_per_layer(1024, 2, 12288, 96, tp, sp and tp > 1, rec)
    factor = 1 + (pp - 1) / (pp * v) if v > 1 else 1.0
    expected = per_layer * 96 / pp * min(pp, m) * factor
    expected += embedding_activation_bytes(1024, 2, 12288, 51200, tp, pp, m)
    assert res.si("activations") == pytest.approx(float(expected), rel=1e-12)


def test_inference_kv_cache_and_tp_sharding():
    # Llama-2-70B, 4096 tokens, bf16: 2·80·8·128·4096·2 B = 1.342 GB per sequence
    m = Models.Llama2_70B
    one = solve(m, H100, mode="inference", kv_cache_len=4096)
    assert one.si("kv_cache") == pytest.approx(1_342_177_280)
    tp8 = solve(m, H100, mode="inference", kv_cache_len=4096, tp_size=8)
    assert tp8.si("kv_cache") == pytest.approx(1_342_177_280 / 8)
    # 16 ranks but only 8 KV heads: each KV head is replicated on two ranks
    tp16 = solve(m, H100, mode="inference", kv_cache_len=4096, tp_size=16)
    assert tp16.si("kv_cache") == pytest.approx(1_342_177_280 / 8)
    fp8 = solve(m, H100, mode="inference", kv_cache_len=4096, kv_precision="fp8")
    assert fp8.si("kv_cache") == pytest.approx(1_342_177_280 / 2)
    assert one.si("gradients") == one.si("optimizer_state") == 0.0
    assert one.si("weights") == pytest.approx(2 * m.total_params)


def test_framework_overhead_default_and_override():
    # training: no allowance by default, as in DistributedModel (one answer per layout)
    res = solve(
        GPT3,
        H100,
        tp_size=8,
        pp_size=8,
        sequence_parallel=True,
        recompute="full",
        microbatch_count=8,
    )
    assert res.si("framework_overhead") == 0.0
    parts = ("weights", "gradients", "optimizer_state", "activations")
    assert res.si("total") == pytest.approx(sum(res.si(p) for p in parts), rel=1e-12)
    # inference: the runtime allowance, 1 GB + 5 % of the transient activation workspace
    # on a GPU (the weights and the KV cache are allocated once and do not fragment)
    inf = solve(GPT3, H100, tp_size=8, pp_size=8, mode="inference")
    transient = inf.si("activations")
    assert inf.si("framework_overhead") == pytest.approx(1e9 + FRAGMENTATION_FRACTION * transient)
    assert inf.si("weights") + inf.si("kv_cache") > 30 * transient
    assert default_framework_overhead("mcu", 1e5) == pytest.approx(5e3)
    fixed = solve(GPT3, H100, tp_size=8, pp_size=8, framework_overhead="2 GB")
    assert fixed.si("framework_overhead") == pytest.approx(2e9)


def test_infeasible_reports_reason_and_can_raise():
    res = solve(GPT3, H100)  # 175B × 16 B = 2.8 TB on one 80 GB device
    assert not res.feasible
    assert res.si("headroom") < 0
    assert "optimizer state" in res.infeasibility_reason
    with pytest.raises(InfeasibleError, match="per device"):
        solve(GPT3, H100, raise_errors=True)


def test_optimizers_and_fp32():
    w = Workload(name="w", params=1e9, flops_per_sample=1.0)
    sgd = solve(w, H100, optimizer="sgd_momentum", framework_overhead=0)
    assert sgd.si("optimizer_state") == pytest.approx(8e9)
    fp32 = solve(w, H100, precision="fp32", framework_overhead=0)
    # fp32 weights 4 + grads 4 + Adam moments 8 = 16 bytes per parameter
    assert fp32.si("total") == pytest.approx(16e9)
    eight = solve(w, H100, optimizer="adam8bit", framework_overhead=0)
    # bf16 weights 2 + fp32 gradients 4 (the default grad dtype for bf16) + 6 state
    assert eight.si("total") == pytest.approx(12e9)
    # bf16 gradients when asked for: 2 + 2 + 6
    eight16 = solve(w, H100, optimizer="adam8bit", framework_overhead=0, grad_dtype="bf16")
    assert eight16.si("total") == pytest.approx(10e9)


def test_moe_expert_parallel_splits_experts_only():
    mix = llama_style(name="mixtral", **MIXTRAL_8X7B)
    experts = mix.param_breakdown["mlp_experts"]
    dense = mix.total_params - experts
    res = solve(mix, H100, ep_size=8, mode="inference")
    assert res.si("params_per_device") == pytest.approx(dense + experts / 8)


@pytest.mark.parametrize("rec", ["none", "selective"])
def test_gqa_swiglu_and_moe_activation_shapes_match_formula(rec):
    # Llama-3.1-8B-like (8 of 32 KV heads, SwiGLU f = 14336) and a top-2 MoE: the solver's
    # per-layer count equals the formula given the shape.
    llama = llama_style(name="l3", **LLAMA3_8B)
    moe = TransformerWorkload(
        name="moe",
        layers=4,
        hidden=1024,
        heads=8,
        kv_heads=2,
        ffn_hidden=2048,
        gated_mlp=True,
        vocab=1000,
        experts=8,
        experts_per_token=2,
        shared_experts=1,
        expert_ffn_hidden=512,
        position_embedding="rope",
    )
    for model, width in ((llama, 14336), (moe, 3 * 512)):
        res = solve(
            model, H100, batch_size=4, seq_len=1024, pp_size=2, microbatch_count=4,
            recompute=rec, flash_attention=False,
        )  # fmt: skip
        per_layer = activation_bytes_per_layer(
            1024,
            1,
            model.hidden,
            model.heads,
            1,
            False,
            rec,
            ffn_hidden=width,
            kv_heads=model.kv_heads,
            gated_mlp=True,
        )
        expected = per_layer * model.layers + 1024 * model.hidden * 2  # + 2 dropout masks
        assert res.si("activations") == pytest.approx(float(expected), rel=1e-12)


def test_llama_selective_activation_derivation():
    # Llama-3.1-8B layer at s = 8192, b = 1, no TP, selective: boundary 10 sbh plus
    # 2 B × (Q 1 + K 0.25 + V 0.25 + out 1 + MLP 3·14336/4096 = 10.5) = 26 sbh → 36 sbh
    # = 36 × 8192 × 4096 B = 1.208 GB per layer.
    got = activation_bytes_per_layer(
        8192, 1, 4096, 32, recompute="selective", ffn_hidden=14336, kv_heads=8, gated_mlp=True
    )
    assert got == pytest.approx(36 * 8192 * 4096)


def test_batch_size_is_global():
    # 64 sequences over 8 replicas in 4 micro-batches: micro-batches of 2 sequences, so
    # the activations equal those of batch_size=2 on one replica with one micro-batch.
    a = solve(GPT3, H100, batch_size=64, dp_size=8, microbatch_count=4, tp_size=8, recompute="full")
    b = solve(GPT3, H100, batch_size=2, tp_size=8, recompute="full")
    assert a.microbatch_size == 2
    assert a.si("activations") == pytest.approx(b.si("activations"))
    # default: one sequence per micro-batch on every replica (batch = dp · m = 32)
    d = solve(GPT3, H100, dp_size=8, microbatch_count=4, tp_size=8, recompute="full")
    assert d.batch_size == 32 and d.microbatch_size == 1
    # inference keeps the largest replica of an uneven split: 10 over 4 → 3
    inf = solve(GPT3, H100, batch_size=10, dp_size=4, tp_size=8, mode="inference")
    assert inf.microbatch_size == 3


@pytest.mark.parametrize(
    ("batch", "dp", "m", "name", "allowed"),
    [
        # 10 sequences cannot be split evenly over 4 replicas
        (10, 4, 1, "batch_size=10", "a multiple of dp·ep = 4"),
        # 1 or 4 sequences cannot make 8 micro-batches (the old ceil gave the same
        # activations for both: ceil(1/8) = ceil(4/8) = 1)
        (1, 1, 8, "microbatch_count=8", "a divisor of the per-replica batch 1"),
        (4, 1, 8, "microbatch_count=8", "a divisor of the per-replica batch 4"),
        # 64 over 8 replicas leaves 8 each: 3 micro-batches do not divide them
        (64, 8, 3, "microbatch_count=3", "a divisor of the per-replica batch 8"),
    ],
)
def test_training_batch_must_split_into_equal_microbatches(batch, dp, m, name, allowed):
    with pytest.raises(ParameterError) as info:
        solve(GPT3, H100, batch_size=batch, dp_size=dp, microbatch_count=m, tp_size=8)
    assert name in str(info.value) and allowed in str(info.value)


def test_activations_grow_with_batch_at_fixed_microbatch_count():
    # m = 8 micro-batches: batch 8 → micro-batches of 1, batch 32 → of 4; full recompute
    # stores one sbh·2 B input per layer, so activations scale with the micro-batch.
    kw = dict(tp_size=8, microbatch_count=8, recompute="full", pp_size=8)
    one = solve(GPT3, H100, batch_size=8, **kw)
    four = solve(GPT3, H100, batch_size=32, **kw)
    assert (one.microbatch_size, four.microbatch_size) == (1, 4)
    assert four.si("activations") == pytest.approx(4 * one.si("activations"))


def test_uneven_pipeline_busiest_stage_sets_the_memory():
    # Llama-2-70B has 80 layers; pp = 3 leaves 27, 27, 26: the busiest stage's 27 set the
    # memory. Full recompute keeps one e·sbh input per layer: 2 · 4096 · 1 · 8192 =
    # 67,108,864 B; 1F1B holds min(p, m) = 3 micro-batches; plus the embedding dropout
    # mask sbh per micro-batch (1 byte each) with dropout: 27·3·67,108,864 + 3·33,554,432.
    res = solve(Models.Llama2_70B, H100, batch_size=3, seq_len=4096, pp_size=3,
                microbatch_count=3, recompute="full")  # fmt: skip
    assert res.si("activations") == 27 * 3 * 67_108_864
    # Llama 2 trained without dropout (its catalog fact): no embedding dropout mask; a
    # run with dropout stores it
    from mlsys.core.layout import TrainingLayout

    lay = TrainingLayout(pp=3, dp=1, microbatch_count=3, recompute="full", dropout=True)
    masked = solve(Models.Llama2_70B, H100, batch_size=3, seq_len=4096, layout=lay)
    assert masked.si("activations") == 27 * 3 * 67_108_864 + 3 * 33_554_432
    gpipe = solve(Models.Llama2_70B, H100, batch_size=6, seq_len=4096, pp_size=3,
                  microbatch_count=6, recompute="full", schedule="gpipe")  # fmt: skip
    # GPipe holds all m = 6 micro-batches
    assert gpipe.si("activations") == 27 * 6 * 67_108_864


def test_layout_object_gives_the_same_answer_as_keywords():
    from mlsys import TrainingLayout

    kw = dict(tp_size=8, pp_size=4, microbatch_count=8, zero_stage=2, recompute="selective",
              sequence_parallel=True, v_stages=2)  # fmt: skip
    by_kw = solve(GPT3, H100, batch_size=16, dp_size=2, **kw)
    lay = TrainingLayout(tp=8, pp=4, dp=2, microbatch_count=8, zero_stage=2,
                         recompute="selective", sequence_parallel=True, v_stages=2)  # fmt: skip
    assert solve(GPT3, H100, batch_size=16, layout=lay).si("total") == by_kw.si("total")
    with pytest.raises(ParameterError):  # a per-device solver needs dp in the layout
        solve(GPT3, H100, batch_size=16, layout=TrainingLayout(tp=8))


def test_training_precision_without_a_device_peak_is_priced_by_its_storage():
    # an A100 has no FP8 peak, but an FP8 recipe stores bf16 weights and activations, as
    # bf16 training does: with the same (fp32) gradients, the same bytes, no error
    a100 = Hardware.A100_80GB
    fp8 = solve(Models.Llama2_7B, a100, precision="fp8", tp_size=2, dp_size=4, zero_stage=1,
                grad_dtype="fp32")  # fmt: skip
    bf16 = solve(Models.Llama2_7B, a100, precision="bf16", tp_size=2, dp_size=4, zero_stage=1)
    assert fp8.precision == "fp8"
    assert fp8.si("total") == bf16.si("total")


def test_model_state_is_zeros_model_states_by_derivation() -> None:
    # Rajbhandari et al. (2020), Sec. 3.1: model states = weights + gradients + optimizer
    # state. Llama-2-7B (Psi = 6,738,415,616), bf16 weights (2 B), fp32 gradients (4 B,
    # the library's gradient dtype for bf16 training), Adam K = 12 B partitioned by
    # ZeRO-1 over dp = 8: (2 + 4 + 12/8) * Psi = 7.5 * Psi bytes.
    from mlsys import Hardware, MemoryModel, Models

    psi = 6_738_415_616
    res = MemoryModel().solve(
        Models.Llama2_7B,
        Hardware.A100_80GB,
        batch_size=8,
        seq_len=4096,
        mode="training",
        dp_size=8,
        zero_stage=1,
    )
    assert res.si("model_state") == pytest.approx(7.5 * psi, rel=1e-12)
    assert res.si("total") == pytest.approx(
        res.si("model_state") + res.si("activations") + res.si("framework_overhead"), rel=1e-12
    )
    names = {entry.name for entry in res.sources()}
    assert {"Llama2_7B", "A100_80GB"} <= names
