"""One question, one answer: SingleNodeModel and ServingModel price the same step alike.

A decode step of ``b`` sequences that attend to ``K`` cached tokens (plus the new one) is
ServingModel's inter-token latency at a mean context of ``K + 1`` (``prompt_len = K``,
``output_len = 2``: ``K + 2/2``); a prefill of ``b`` sequences of ``s`` tokens is its
batched-prefill TTFT. On one device neither has communication, so both are the same
kernel formulas (:func:`mlsys.core.formulas.layer_time.transformer_layer_kernel_times`,
the embedding gather, the LM head's GEMM) and must agree to rounding.
"""

from __future__ import annotations

import pytest

from mlsys import Hardware, Models
from mlsys.core.formulas.layer_time import LAYER_KERNELS, transformer_layer_time
from mlsys.core.solvers.roofline import SingleNodeModel
from mlsys.core.solvers.serving import ServingModel

GRID = [
    # (model, hardware, precision): dense MHA, GQA, MoE; 16-bit and FP8; three devices
    ("Llama2_7B", "H100", "bf16"),
    ("Llama2_7B", "A100_80GB", "fp16"),
    ("Llama3_8B", "H100", "bf16"),
    ("Llama3_8B", "H100", "fp8"),
    ("Llama3_8B", "B200", "fp8"),
    ("Mixtral_8x7B", "H100", "fp8"),
]


@pytest.mark.parametrize(("model_key", "hw_key", "precision"), GRID)
@pytest.mark.parametrize(("batch", "context"), [(1, 128), (1, 2048), (16, 2048), (64, 512)])
def test_decode_step_agrees(model_key, hw_key, precision, batch, context):
    model, hw = Models[model_key], Hardware[hw_key]
    single = SingleNodeModel().solve(
        model, hw, batch_size=batch, phase="decode", kv_cache_len=context, precision=precision
    )
    serve = ServingModel().solve(
        model, hw, batch_size=batch, prompt_len=context, output_len=2, precision=precision
    )
    assert single.si("latency") == pytest.approx(serve.si("itl"), rel=1e-9)
    # the operators explain the whole step: their times sum to it
    times = [op["time"] for op in single.si("operators").values()]
    assert sum(times) == pytest.approx(single.si("latency"), rel=1e-12)


@pytest.mark.parametrize(("model_key", "hw_key", "precision"), GRID)
@pytest.mark.parametrize(("batch", "seq"), [(1, 128), (1, 2048), (4, 1024)])
def test_prefill_agrees(model_key, hw_key, precision, batch, seq):
    model, hw = Models[model_key], Hardware[hw_key]
    single = SingleNodeModel().solve(
        model, hw, batch_size=batch, seq_len=seq, phase="prefill", precision=precision
    )
    serve = ServingModel().solve(
        model,
        hw,
        batch_size=batch,
        prompt_len=seq,
        output_len=2,
        precision=precision,
        batched_prefill=True,
    )
    assert single.si("latency") == pytest.approx(serve.si("ttft"), rel=1e-9)


def test_book_llama31_8b_decode_step():
    # The book's hardware chapter: Llama 3.1 8B decoding one token at 2,048 tokens of
    # context on an H100 in bf16. Both solvers give the same step, and it is the
    # derivation below: 32 layers of the kernel formulas at 0.75 × 989.4 TFLOP/s and
    # 0.85 × 3.35 TB/s (132 SMs), the embedding gather (one row read and written, one
    # 4 µs kernel) and the LM head's [1 × 4096]·[4096 × 128256] GEMM.
    from mlsys.core.formulas.gemm import gemm_time

    model, h100 = Models.Llama3_8B, Hardware.H100
    single = SingleNodeModel().solve(model, h100, batch_size=1, phase="decode", seq_len=2048)
    serve = ServingModel().solve(model, h100, prompt_len=2048, output_len=2)
    peak, bw = h100.peak_flops_s("bf16"), h100.memory_bandwidth_Bps
    F, B = 0.75 * peak, 0.85 * bw
    layer = transformer_layer_time(
        1.0, 1.0, 1.0, 2049.0, 4096, 32, 8, 128, 14336, True, 1, F, peak, B, 2.0,
        sm_count=132, causal=False, kv_bytes_per_element=2.0, attention_fractions=(0.61, 0.52),
    )  # fmt: skip
    expected = (
        32 * layer + (2 * 4096 * 2 / B + 4e-6) + gemm_time(1.0, 128256.0, 4096.0, F, B, 2.0, 132)
    )
    assert single.si("latency") == pytest.approx(expected, rel=1e-9)
    assert serve.si("itl") == pytest.approx(expected, rel=1e-9)
    # memory-bound: 16.1 GB of weights (all but the input embedding table) at 2.85 TB/s
    # is 5.6 ms; the whole step, with the KV cache and 321 fixed kernel costs, ~6.7 ms
    assert single.bound == "memory"
    assert 6.0e-3 < single.si("latency") < 7.5e-3


def test_layer_kernel_parts_sum_to_layer_time():
    from mlsys.core.formulas.layer_time import transformer_layer_kernel_times

    args = (
        2048.0,
        1.0,
        2048.0,
        2048.0,
        4096,
        32,
        8,
        128,
        14336,
        True,
        2,
        7e14,
        9.9e14,
        2.8e12,
        2.0,
    )
    for phase in ("inference", "forward", "backward"):
        parts = transformer_layer_kernel_times(*args, sm_count=132, phase=phase)
        assert tuple(parts) == LAYER_KERNELS
        assert sum(parts.values()) == pytest.approx(
            transformer_layer_time(*args, sm_count=132, phase=phase), rel=1e-12
        )


def test_fp8_inference_quantises_each_gemm_input():
    # TensorRT-LLM-style FP8 (weights and activations): each GEMM's 16-bit input is read
    # (2 B) and written as FP8 (1 B) by a quantise kernel. Llama-2-7B layer, 2048
    # tokens: QKV and MLP-up read h = 4096, the output projection q = 4096, MLP-down
    # f = 11008: 23,296 elements per token, 3 B each, 143.1 MB at 2.85 TB/s = 50.2 µs.
    from mlsys.core.formulas.layer_time import transformer_layer_kernel_times
    from mlsys.core.solvers.serving import _plan

    args = (2048.0, 1.0, 2048.0, 2048.0, 4096, 32, 32, 128, 11008, True, 1)
    rates = (0.65 * 1978.9e12, 989.4e12, 2.85e12, 2.0)
    plain = transformer_layer_kernel_times(*args, *rates, sm_count=132)
    cast = transformer_layer_kernel_times(
        *args, *rates, sm_count=132, activation_cast_bytes_per_element=3.0
    )
    extra = cast["elementwise"] - plain["elementwise"]
    assert extra == pytest.approx(2048 * 23296 * 3 / 2.85e12, rel=1e-12)
    assert extra == pytest.approx(50.2e-6, rel=1e-3)
    # ServingModel charges it for FP8 weights and activations, not for 16-bit or for
    # weight-only int4 (dequantised inside the GEMM)
    h100, llama = Hardware.H100, Models.Llama2_7B
    plan = lambda prec: _plan(llama, h100, prec, None, None, 1, 1, None, None, None)  # noqa: E731
    assert plan("fp8").cast_bytes == 3.0
    assert plan("bf16").cast_bytes == 0.0
    assert plan("int4").cast_bytes == 0.0
