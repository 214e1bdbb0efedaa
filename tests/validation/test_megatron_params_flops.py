"""Parameter counts and FLOPs against Megatron-LM, GPT-3, Llama, Mixtral, OPT and BLOOM.

Published counts and FLOPs are read from ``mlsys/validation/data/compute.toml`` and
``training.toml`` (the suite's one copy, with citations); architectures are the catalog's
(``mlsys.Models``, each cited in ``models.toml``).
"""

from __future__ import annotations

import pytest

from mlsys import Models
from mlsys.core.formulas import (
    korthikanti_hardware_flops,
    korthikanti_model_flops,
    megatron_flops_per_iteration,
    megatron_param_count,
    training_flops,
    training_flops_per_token,
    transformer_param_breakdown,
    transformer_param_count,
)
from mlsys.validation import load_data, records, run_group

PARAMS = records("compute", "params")
BY_CATALOG = {r["catalog"]: r for r in PARAMS}
COMPUTE = load_data("compute")


def _arch(m):
    """The catalog workload's shape as ``transformer_param_count`` keywords."""
    return dict(
        kv_heads=m.kv_heads, ffn_hidden=m.ffn_hidden, gated_mlp=m.gated_mlp, norm=m.norm,
        bias=m.bias, tied_embeddings=m.tied_embeddings, experts=m.experts,
        experts_per_token=m.experts_per_token, head_dim=m.head_dim,
        expert_ffn_hidden=m.expert_ffn_hidden, shared_experts=m.shared_experts,
        dense_layers=m.dense_layers,
        max_positions=m.seq_len if m.position_embedding == "learned" else 0,
    )  # fmt: skip


# DeepSeek-V3's multi-head latent attention is not a shape the general count covers: the
# catalog states its published totals instead.
FORMULA_ROWS = [r for r in PARAMS if Models[r["catalog"]].params is None]


@pytest.mark.parametrize("row", FORMULA_ROWS, ids=[r["name"] for r in FORMULA_ROWS])
def test_param_count_matches_publication(row):
    m = Models[row["catalog"]]
    got = transformer_param_count(m.layers, m.hidden, m.heads, m.vocab, **_arch(m))
    assert got == pytest.approx(row["published"], rel=row["tolerance"]), row["citation"]


def test_suite_param_cases_pass():
    cases = [c for c in run_group("compute") if c.unit == "parameters"]
    assert len(cases) == len(PARAMS) + sum("published_active" in r for r in PARAMS)
    assert all(c.passed for c in cases)


def test_mixtral_active_params():
    m, row = Models.Mixtral_8x7B, BY_CATALOG["Mixtral_8x7B"]
    got = transformer_param_count(m.layers, m.hidden, m.heads, m.vocab, active=True, **_arch(m))
    assert got == pytest.approx(row["published_active"], rel=row["tolerance"])


def test_llama2_7b_exact_count():
    # Derivation: per layer 4·4096² (attention) + 3·4096·11008 (SwiGLU) + 2·4096 (RMSNorm)
    # = 202,383,360; × 32 layers + 2 × 32000·4096 (untied) + 4096 (final norm)
    # = 6,738,415,616, the count Hugging Face reports for meta-llama/Llama-2-7b-hf.
    m = Models.Llama2_7B
    assert (
        transformer_param_count(m.layers, m.hidden, m.heads, m.vocab, **_arch(m)) == 6_738_415_616
    )


def test_bloom_count_short_by_the_embedding_layernorm():
    # BLOOM normalises its embeddings (2h = 28,672 gains and biases) beyond the general
    # shape: 176,247,242,752 + 28,672 = 176,247,271,424, the published count.
    m = Models.BLOOM_176B
    assert BY_CATALOG["BLOOM_176B"]["published"] - m.total_params == 2 * m.hidden


def test_megatron_eq2_gpt3():
    # Eq. 2 with Megatron's vocabulary padded to 51,200.
    m, row = Models.GPT3_175B, BY_CATALOG["GPT3_175B"]
    got = megatron_param_count(m.layers, m.hidden, 51200, m.seq_len)
    assert got == pytest.approx(row["published"], rel=row["tolerance"])


def test_general_form_reduces_to_megatron_eq2():
    # The general count of a GPT layout equals Eq. 2 plus the final LayerNorm (2h),
    # which Eq. 2 leaves out.
    m = Models.GPT3_175B
    general = transformer_param_count(m.layers, m.hidden, m.heads, 51200, max_positions=m.seq_len)
    eq2 = megatron_param_count(m.layers, m.hidden, 51200, m.seq_len)
    assert general - eq2 == pytest.approx(2 * m.hidden, abs=1e-3 * m.hidden)


def test_megatron_eq3_equals_per_token_derivation():
    # Eq. 3 over B·s tokens must equal 4× forward of the layers + 3× forward of the head,
    # counting attention as 4·L·s·h per token (non-causal), which is how Eq. 3 is built.
    e = COMPUTE["megatron_eq3"]
    L, h, V, s, B = e["layers"], e["hidden"], e["vocab"], e["seq_len"], e["batch"]
    eq3 = megatron_flops_per_iteration(B, s, L, h, V)
    derived = B * s * (4 * (24 * L * h**2 + 4 * L * s * h) + 3 * 2 * V * h)
    assert eq3 == pytest.approx(derived, rel=1e-12)
    per_token = training_flops_per_token(12 * L * h**2, V * h, L, s, h, recompute="full")
    assert per_token * B * s == pytest.approx(eq3, rel=1e-12)


def test_eq3_with_full_recompute_is_four_thirds_of_model_flops_minus_head():
    L, h, V, s, B = 96, 12288, 51200, 2048, 64
    model = korthikanti_model_flops(B, s, L, h, V)
    none = training_flops_per_token(12 * L * h**2, V * h, L, s, h) * B * s
    assert none == pytest.approx(model, rel=1e-12)


def test_gpt3_training_compute():
    g = COMPUTE["gpt3_compute"]
    params = BY_CATALOG[g["catalog"]]["published"]  # 174.6B, Table D.1
    assert training_flops(params, g["tokens"]) == pytest.approx(g["published"], rel=g["tolerance"])


KRUNS = records("training", "korthikanti")


@pytest.mark.parametrize("run", KRUNS, ids=[r["name"] for r in KRUNS])
def test_korthikanti_mfu_from_model_flops(run):
    k = load_data("training")["korthikanti"]
    flops = korthikanti_model_flops(run["global_batch"], 2048, run["layers"], run["hidden"], 51200)
    mfu = flops / (run["iteration_s"] * run["gpus"] * k["peak_flops"])
    assert mfu == pytest.approx(run["mfu"], abs=0.0025), k["citation"]


def test_korthikanti_hardware_flops_exceed_model_flops_by_attention_term():
    L, h, V, s, B = 96, 12288, 51200, 2048, 64
    diff = korthikanti_hardware_flops(B, s, L, h, V) - korthikanti_model_flops(B, s, L, h, V)
    assert diff == pytest.approx(72 * B * L * s * h**2 * s / (6 * h), rel=1e-12)


def test_moe_training_compute_uses_active_parameters():
    m = Models.Mixtral_8x7B
    b = transformer_param_breakdown(m.layers, m.hidden, m.heads, m.vocab, **_arch(m))
    per_token = training_flops_per_token(
        b["layers_matmul_active"], m.vocab * m.hidden, m.layers, 0, m.hidden
    )
    # 6 × matmul-active parameters, independent of the six routed experts left idle
    assert per_token == pytest.approx(6 * b["matmul_active"], rel=1e-12)
    assert per_token < 6 * b["total"] / 3


@pytest.mark.parametrize("vocab", [50257, 51200])
def test_gpt3_174_6b_with_either_vocabulary(vocab):
    # Brown et al. use the 50257-token GPT-2 BPE; Megatron pads it to 51200. Both give
    # 174.6B to four significant figures (Eq. 2: 174.60B and 174.62B).
    assert megatron_param_count(96, 12288, vocab, 2048) / 1e9 == pytest.approx(174.6, abs=0.05)
