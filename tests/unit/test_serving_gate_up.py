"""ServingModel's ``gate_up_fused``: a gated MLP's gate and up projections as one GEMM of
width 2f/t (the default) or as two of f/t and one more kernel (lmdeploy v0.1's
TurboMind with 16-bit weights, whose LlamaFfnLayer runs w1 and w3 apart)."""

from __future__ import annotations

import math

import pytest

from mlsys.core.catalog import Hardware, Models
from mlsys.core.errors import ParameterError
from mlsys.core.formulas.overheads import KERNEL_OVERHEAD_S
from mlsys.core.solvers import serving as S
from mlsys.core.solvers.batching import ContinuousBatchingModel
from mlsys.core.solvers.serving import ServingModel

LLAMA = Models["Llama2_7B"]  # 32 layers, h 4096, gated MLP of f = 11008
A100 = Hardware["A100_80GB"]  # 108 SMs


def _solve(gate_up_fused: bool, **kw):
    args = dict(batch_size=1, prompt_len=128, output_len=2, precision="fp16")
    args.update(kw)
    return ServingModel().solve(LLAMA, A100, gate_up_fused=gate_up_fused, **args)


def test_decode_pays_one_kernel_per_layer():
    # One decode token streams the same weights either way (2 × f·h = 2f·h values); the
    # split reads the token's 4096-value input twice (8192 more bytes) and launches one
    # more kernel per layer.
    fused, split = _solve(True), _solve(False)
    bw = S._plan(LLAMA, A100, "fp16", None, None, 1, 1, None, None, None).bw
    per_layer = KERNEL_OVERHEAD_S + 4096 * 2.0 / bw
    assert split.si("itl") - fused.si("itl") == pytest.approx(32 * per_layer, rel=1e-6)


def test_prefill_pays_wave_quantisation_on_108_sms():
    # 2048 prompt tokens: the fused up projection is 2048 × 22016 × 4096, 8 × 172 = 1376
    # tiles of 256×128 (no tile waste) in ⌈1376/108⌉ = 13 waves (1376/1404 useful); each
    # half is 2048 × 11008 × 4096, 8 × 86 = 688 tiles in 7 waves (688/756 useful).
    fused, split = _solve(True, prompt_len=2048), _solve(False, prompt_len=2048)
    flops = S._plan(LLAMA, A100, "fp16", None, None, 1, 1, None, None, None).gemm_flops
    x = 2.0 * 2048 * 4096 / flops  # seconds per output column at full waves
    half = x * 11008 / (688 / 756)
    whole = x * 22016 / (1376 / 1404)
    per_layer = 2.0 * half - whole + KERNEL_OVERHEAD_S
    assert math.ceil(1376 / 108) == 13 and math.ceil(688 / 108) == 7
    assert split.si("ttft") - fused.si("ttft") == pytest.approx(32 * per_layer, rel=1e-6)
    # about 4.1 ms on a ~139 ms prefill: 3 % slower
    assert 32 * per_layer == pytest.approx(4.1e-3, rel=0.05)


def test_a_model_without_a_gated_mlp_is_unchanged():
    gpt3 = Models["GPT3_175B"]
    assert not gpt3.gated_mlp
    args = dict(batch_size=8, prompt_len=512, output_len=64, precision="fp16", tp_size=8)
    h100 = Hardware["H100"]
    a = ServingModel().solve(gpt3, h100, gate_up_fused=True, **args)
    b = ServingModel().solve(gpt3, h100, gate_up_fused=False, **args)
    assert a.si("itl") == b.si("itl") and a.si("ttft") == b.si("ttft")


def test_continuous_batching_takes_the_setting():
    kw = dict(arrival_rate=1.0, prompt_len=256, output_len=256, precision="fp16")
    kw["max_num_seqs"] = 64
    fused = ContinuousBatchingModel().solve(LLAMA, A100, gate_up_fused=True, **kw)
    split = ContinuousBatchingModel().solve(LLAMA, A100, gate_up_fused=False, **kw)
    # the split's longer steps (one more kernel per layer, worse waves in prefill) lower
    # the sustainable rate, by a few percent
    ratio = split.si("max_arrival_rate") / fused.si("max_arrival_rate")
    assert 0.9 < ratio < 1.0


@pytest.mark.parametrize("bad", [2, "maybe", "", None])
def test_the_setting_is_a_boolean(bad):
    with pytest.raises(ParameterError, match="gate_up_fused"):
        _solve(bad)
