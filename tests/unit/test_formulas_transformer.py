"""Transformer parameter/FLOP/KV-cache formulas: worked examples and conventions."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import mlsys.core.formulas.transformer as transformer_mod
from mlsys.core.errors import ParameterError
from mlsys.core.formulas import (
    attention_flops_per_token,
    forward_flops_per_token,
    kv_cache_bytes,
    training_flops_per_token,
    transformer_param_breakdown,
    transformer_param_count,
)


def test_docstring_examples_run():
    failures, tried = doctest.testmod(transformer_mod, verbose=False)
    assert tried >= 11 and failures == 0


def test_gqa_shrinks_only_kv_projections():
    # Llama-2-70B layer: q and o 8192² each; k and v 8192·1024 each (8 KV heads of 128)
    mha = transformer_param_breakdown(1, 8192, 64, 0, bias=False)["attention"]
    gqa = transformer_param_breakdown(1, 8192, 64, 0, kv_heads=8, bias=False)["attention"]
    assert mha == 4 * 8192**2
    assert gqa == 2 * 8192**2 + 2 * 8192 * 1024


def test_gated_mlp_has_three_matrices():
    b = transformer_param_breakdown(1, 4096, 32, 0, ffn_hidden=11008, gated_mlp=True, bias=False)
    assert b["mlp_dense"] == 3 * 4096 * 11008


def test_deepseek_style_moe_with_shared_experts_and_dense_layers():
    # 4 layers, first dense (f = 1024), 3 MoE layers with 8 routed experts of f_e = 256,
    # 2 active, 1 shared; gated MLP, no biases, RMSNorm, untied, h = 128, 4 heads, V = 100.
    kw = dict(
        ffn_hidden=1024,
        gated_mlp=True,
        norm="rmsnorm",
        bias=False,
        tied_embeddings=False,
        experts=8,
        experts_per_token=2,
        shared_experts=1,
        expert_ffn_hidden=256,
        dense_layers=1,
    )
    b = transformer_param_breakdown(4, 128, 4, 100, **kw)
    h, e_mlp = 128, 3 * 128 * 256
    attention = 4 * 4 * h * h
    dense = 3 * h * 1024
    routed_total = 3 * 8 * e_mlp
    routed_active = 3 * 2 * e_mlp
    shared = 3 * e_mlp
    router = 3 * h * 8
    norms = 4 * 2 * h + h
    emb = 2 * 100 * h
    assert b["total"] == attention + dense + routed_total + shared + router + norms + emb
    assert b["active"] == attention + dense + routed_active + shared + router + norms + emb


def test_param_count_broadcasts():
    layers = np.array([32, 80])
    hidden = np.array([4096, 8192])
    got = transformer_param_count(
        layers,
        hidden,
        hidden // 128,
        32000,
        kv_heads=np.array([32, 8]),
        ffn_hidden=np.array([11008, 28672]),
        gated_mlp=True,
        norm="rmsnorm",
        bias=False,
        tied_embeddings=False,
    )
    assert got[0] == 6_738_415_616
    assert got[1] == pytest.approx(68.98e9, rel=1e-3)


def test_unknown_norm_is_a_parameter_error():
    with pytest.raises(ParameterError, match="norm='batchnorm'"):
        transformer_param_count(2, 64, 4, 10, norm="batchnorm")


def test_attention_flop_conventions():
    # non-causal counts QKᵀ (2·s·d) and AV (2·s·d): 4·l·s·d; causal averages to half
    assert attention_flops_per_token(2, 100, 64, causal=False) == 4 * 2 * 100 * 64
    assert attention_flops_per_token(2, 100, 64, causal=True) == 2 * 2 * 100 * 64


def test_forward_is_two_n_plus_attention():
    assert forward_flops_per_token(1e9, 10, 1000, 1024) == pytest.approx(2e9 + 2 * 10 * 1000 * 1024)


def test_selective_recompute_adds_one_forward_attention():
    base = training_flops_per_token(1e9, 1e8, 10, 1000, 1024)
    sel = training_flops_per_token(1e9, 1e8, 10, 1000, 1024, recompute="selective")
    full = training_flops_per_token(1e9, 1e8, 10, 1000, 1024, recompute="full")
    attn = 4 * 10 * 1000 * 1024
    assert base == pytest.approx(3 * (2e9 + 2e8 + attn))
    assert sel - base == pytest.approx(attn)
    assert full - base == pytest.approx(2e9 + attn)


def test_unknown_recompute_is_a_parameter_error():
    with pytest.raises(ParameterError, match="recompute='partial'"):
        training_flops_per_token(1e9, 1e8, 10, 1000, 1024, recompute="partial")


def test_kv_cache_llama2_70b():
    # 2 × 80 × 8 × 128 × 4096 × 2 bytes = 1,342,177,280 bytes per sequence
    assert kv_cache_bytes(80, 8, 128, 4096) == 1_342_177_280
    # fp8 halves it; batch 16 multiplies by 16
    assert kv_cache_bytes(80, 8, 128, 4096, 16, 1.0) == 8 * 1_342_177_280


def test_kv_cache_broadcasts():
    seq = np.arange(1, 100_001)
    got = kv_cache_bytes(32, 8, 128, seq)
    assert got.shape == (100_000,)
    assert got[-1] == 2 * 32 * 8 * 128 * 100_000 * 2
