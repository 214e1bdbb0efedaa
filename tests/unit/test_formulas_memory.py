"""Memory formulas: optimizer state, ZeRO, activations — examples and edge cases."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import mlsys.core.formulas.memory as memory_mod
from mlsys.core.errors import ParameterError
from mlsys.core.formulas import (
    activation_bytes_per_layer,
    interleaved_activation_factor,
    optimizer_state_bytes_per_param,
    pipeline_inflight_microbatches,
    zero_communication_elements,
    zero_model_state_bytes,
)


def test_docstring_examples_run():
    failures, tried = doctest.testmod(memory_mod, verbose=False)
    assert tried >= 7 and failures == 0


@pytest.mark.parametrize(
    ("name", "k"),
    [
        ("adam", 12),
        ("AdamW", 12),
        ("sgd_momentum", 8),
        ("momentum", 8),
        ("sgd", 4),
        ("adam8bit", 6),
        ("adam-8bit", 6),
        ("adafactor", 4),
    ],
)
def test_optimizer_bytes(name, k):
    assert optimizer_state_bytes_per_param(name) == k


def test_pure_fp32_adam_has_no_master_copy():
    assert optimizer_state_bytes_per_param("adam", master_weights=False) == 8


def test_unknown_optimizer():
    with pytest.raises(ParameterError, match="optimizer='lion'"):
        optimizer_state_bytes_per_param("lion")


def test_zero_general_k():
    # 8-bit Adam (K = 6), stage 2 on 8 ranks: 2Ψ + (2 + 6)Ψ/8 = 3Ψ
    assert zero_model_state_bytes(1e9, 8, 2, 6.0) == pytest.approx(3e9)


def test_zero_stage_out_of_range():
    with pytest.raises(ParameterError, match="zero_stage=4"):
        zero_model_state_bytes(1e9, 8, 4)
    with pytest.raises(ParameterError, match="zero_stage"):
        zero_communication_elements(1e9, -1)


def test_zero_broadcasts_over_stages_and_ranks():
    stage = np.array([[0], [1], [2], [3]])
    dp = np.array([1, 2, 4, 8])
    got = zero_model_state_bytes(1.0, dp, stage)
    assert got.shape == (4, 4)
    assert np.all(got[:, 0] == 16.0)  # one rank: nothing to partition
    assert got[3, 3] == 2.0


def test_activation_broadcast_sweep():
    s = np.arange(128, 128 + 100_000)
    got = activation_bytes_per_layer(s, 1, 4096, 32, 8, True, "none")
    assert got.shape == (100_000,)
    assert got[0] == pytest.approx(128 * 4096 * (34 / 8 + 5 * 32 * 128 / (4096 * 8)))


def test_pipeline_inflight_and_interleave():
    assert pipeline_inflight_microbatches(8, 4) == 4  # fewer micro-batches than stages
    assert interleaved_activation_factor(8, 1) == 1.0
    # 1 + (p−1)/(p·v) for p = 4, v = 2: 1.375
    assert interleaved_activation_factor(4, 2) == pytest.approx(1.375)


def _megatron_first_stage_chunk_forwards(p: int, v: int, m: int) -> int:
    """Megatron-Core's interleaved schedule on pipeline rank 0, written out: the warm-up
    forwards (2(p - 1) + (v - 1)·p, or all m·v of them when m = p or when the warm-up
    would exceed them), plus the steady state's one forward before the first backward."""
    total = m * v
    if m == p:
        return total
    warmup = min(2 * (p - 1) + (v - 1) * p, total)
    return warmup + 1 if warmup < total else total


@pytest.mark.parametrize(("p", "v", "m"), [(16, 8, 16), (16, 8, 32), (8, 12, 16), (4, 2, 4)])
def test_interleaved_factor_is_the_schedules_chunk_forwards_in_flight(p, v, m):
    # the first stage holds k chunk-micro-batches of L/(p·v) layers: k/(p·v) times the L
    # layers' worth of the plain schedule's p micro-batches of L/p layers
    k = _megatron_first_stage_chunk_forwards(p, v, m)
    assert interleaved_activation_factor(p, v, microbatch_count=m) == pytest.approx(k / (p * v))


def test_interleaved_factor_caps_at_the_steps_chunk_micro_batches():
    # Llama 3 405B at 16,384 GPUs: p = 16, v = 8, m = 16 micro-batches per replica. All
    # 128 chunk forwards run first; the uncapped penalty would count 143.
    assert 16 * 8 * interleaved_activation_factor(16, 8) == pytest.approx(143)
    assert 16 * 8 * interleaved_activation_factor(16, 8, microbatch_count=16) == 128
    # arrays: one cap per layout
    got = interleaved_activation_factor(np.array([16.0, 16.0]), 8.0, np.array([16.0, 32.0]))
    assert got.tolist() == pytest.approx([1.0, 1 + 15 / 128])


def test_fp8_gemm_input_copies_store_h_plus_f_fewer_bytes_a_token():
    # Llama-3-70B's layer (h 8192, 64 heads, 8 KV heads, SwiGLU f 28672) at TP 4 with
    # sequence parallelism and fused attention: the QKV and fc1 inputs (boundary tensors,
    # h each, split by t) and the fc2 input (f, split by t) drop from 2 bytes to 1, and the
    # attention output gains a one-byte copy (h, split by t): (h + h + f - h)/t fewer
    from mlsys.core.formulas.memory import activation_bytes_per_layer

    s, h, f, t = 8192, 8192, 28672, 4
    kw = dict(ffn_hidden=f, kv_heads=8, gated_mlp=True, flash_attention=True)
    bf16 = activation_bytes_per_layer(s, 1, h, 64, t, True, "none", 2.0, **kw)
    fp8 = activation_bytes_per_layer(
        s, 1, h, 64, t, True, "none", 2.0, gemm_input_bytes_per_element=1.0, **kw
    )
    assert bf16 - fp8 == pytest.approx(s * (h + f) / t)
    # without sequence parallelism the boundary inputs are whole on every rank
    whole = activation_bytes_per_layer(s, 1, h, 64, t, False, "none", 2.0, **kw)
    whole8 = activation_bytes_per_layer(
        s, 1, h, 64, t, False, "none", 2.0, gemm_input_bytes_per_element=1.0, **kw
    )
    assert whole - whole8 == pytest.approx(s * (2 * h + (f - h) / t))
    # full recomputation keeps only the layer's input: nothing to quantise
    assert activation_bytes_per_layer(
        s, 1, h, 64, t, True, "full", 2.0, gemm_input_bytes_per_element=1.0, **kw
    ) == activation_bytes_per_layer(s, 1, h, 64, t, True, "full", 2.0, **kw)


def test_a_dropout_free_layer_stores_no_masks_and_no_dropped_scores():
    # Korthikanti et al. (2022): 2 sbh bytes of masks and, per head, the dropout output (e)
    # and mask (1 byte) of the a s^2 b scores; GPT-3 175B's layer at s 2048, no parallelism
    from mlsys.core.formulas.memory import activation_bytes_per_layer

    s, h, a = 2048, 12288, 96
    with_dropout = activation_bytes_per_layer(s, 1, h, a)
    without = activation_bytes_per_layer(s, 1, h, a, dropout=False)
    assert with_dropout == pytest.approx(s * h * (34 + 5 * a * s / h))
    assert with_dropout - without == pytest.approx(2 * s * h + 3 * a * s * s)
    # with fused attention only the masks go
    fused = dict(flash_attention=True)
    assert activation_bytes_per_layer(s, 1, h, a, **fused) - activation_bytes_per_layer(
        s, 1, h, a, dropout=False, **fused
    ) == pytest.approx(2 * s * h)


def test_embedding_dropout_mask_only_with_dropout():
    from mlsys.core.formulas import embedding_activation_bytes

    s, b, h, v, t = 2048, 1, 12288, 51200, 8
    # Korthikanti et al. (2022), Sec. 4.3: sbhp/t of dropout mask on the first of p = 8
    # stages, plus 4sbh/t·(1 + v/h) of output-layer tensors when p = 1
    assert embedding_activation_bytes(s, b, h, v, t, 8) == s * b * h * 8 / t
    assert embedding_activation_bytes(s, b, h, v, t, 8, dropout=False) == 0.0
    out_layer = 4 * s * b * h / t * (1 + v / h)
    assert embedding_activation_bytes(s, b, h, v, t, 1, dropout=False) == pytest.approx(out_layer)
