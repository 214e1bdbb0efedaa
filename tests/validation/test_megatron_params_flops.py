"""Parameter counts and FLOPs against Megatron-LM, GPT-3, Llama and Mixtral publications.

Data: ``data/models.toml`` (architectures and published parameter counts) and
``data/compute.toml`` (Megatron Eq. 2/3, GPT-3 training compute, Korthikanti MFU).
"""

from __future__ import annotations

# --- data-file loader (kept in this file: tests/validation has no shared helpers) ---
import sys as _sys
from pathlib import Path as _Path

import pytest

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

if _sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # pragma: no cover
    import tomli as _toml


def load(name):
    with (_Path(__file__).with_name("data") / name).open("rb") as fh:
        return _toml.load(fh)


def matches_printed(computed, published, rel):
    """Within ``rel`` of the printed value, or equal to it at the printed precision."""
    if abs(computed - published) <= rel * abs(published):
        return True
    digits = (
        len(repr(float(published)).replace(".", "").replace("-", "").lstrip("0").rstrip("0")) or 1
    )
    return float(f"{computed:.{digits}g}") == float(published)


MODELS = load("models.toml")["model"]
COMPUTE = load("compute.toml")
_ARCH_KEYS = (
    "kv_heads",
    "ffn_hidden",
    "gated_mlp",
    "norm",
    "bias",
    "tied_embeddings",
    "max_positions",
    "experts",
    "experts_per_token",
)


def _arch(m):
    return {k: m[k] for k in _ARCH_KEYS if k in m}


@pytest.mark.parametrize("m", MODELS, ids=[m["name"] for m in MODELS])
def test_param_count_matches_publication(m):
    got = transformer_param_count(m["layers"], m["hidden"], m["heads"], m["vocab"], **_arch(m))
    assert got == pytest.approx(m["published_params"], rel=m["rel_tol"]), m["citation"]


def test_mixtral_active_params():
    m = next(m for m in MODELS if m["name"].startswith("Mixtral"))
    got = transformer_param_count(
        m["layers"], m["hidden"], m["heads"], m["vocab"], active=True, **_arch(m)
    )
    assert got == pytest.approx(m["published_active_params"], rel=m["rel_tol"])


def test_llama2_7b_exact_count():
    # Derivation: per layer 4·4096² (attention) + 3·4096·11008 (SwiGLU) + 2·4096 (RMSNorm)
    # = 202,383,360; × 32 layers + 2 × 32000·4096 (untied) + 4096 (final norm)
    # = 6,738,415,616, the count Hugging Face reports for meta-llama/Llama-2-7b-hf.
    m = next(m for m in MODELS if m["name"] == "Llama-2-7B")
    assert (
        transformer_param_count(m["layers"], m["hidden"], m["heads"], m["vocab"], **_arch(m))
        == 6_738_415_616
    )


def test_megatron_eq2_gpt3():
    c = COMPUTE["megatron_eq2"]
    got = megatron_param_count(c["layers"], c["hidden"], c["vocab"], c["seq_len"])
    assert got / 1e9 == pytest.approx(174.6, abs=0.05)
    assert got == pytest.approx(c["published_params"], rel=1e-3)


def test_general_form_reduces_to_megatron_eq2():
    # The general count of a GPT layout equals Eq. 2 plus the final LayerNorm (2h),
    # which Eq. 2 leaves out.
    c = COMPUTE["megatron_eq2"]
    general = transformer_param_count(
        c["layers"], c["hidden"], 96, c["vocab"], max_positions=c["seq_len"]
    )
    eq2 = megatron_param_count(c["layers"], c["hidden"], c["vocab"], c["seq_len"])
    assert general - eq2 == pytest.approx(2 * c["hidden"], abs=1e-3 * c["hidden"])


def test_megatron_eq3_equals_per_token_derivation():
    # Eq. 3 over B·s tokens must equal 4× forward of the layers + 3× forward of the head,
    # counting attention as 4·L·s·h per token (non-causal), which is how Eq. 3 is built.
    L, h, V, s, B = 96, 12288, 51200, 2048, 1536
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
    c = COMPUTE["training_compute_gpt3"]
    assert training_flops(c["params"], c["tokens"]) == pytest.approx(
        c["published_flops"], rel=0.005
    )


RUNS = COMPUTE["korthikanti_runs"]["run"]


@pytest.mark.parametrize("run", RUNS, ids=[r["name"] for r in RUNS])
def test_korthikanti_mfu_from_model_flops(run):
    k = COMPUTE["korthikanti_runs"]
    flops = korthikanti_model_flops(
        run["batch"], k["seq_len"], run["layers"], run["hidden"], k["vocab"]
    )
    mfu = flops / (run["seconds"] * run["gpus"] * k["peak_flops"])
    assert mfu == pytest.approx(run["mfu"], abs=0.0025), k["citation"]


def test_korthikanti_hardware_flops_exceed_model_flops_by_attention_term():
    L, h, V, s, B = 96, 12288, 51200, 2048, 64
    diff = korthikanti_hardware_flops(B, s, L, h, V) - korthikanti_model_flops(B, s, L, h, V)
    assert diff == pytest.approx(72 * B * L * s * h**2 * s / (6 * h), rel=1e-12)


def test_moe_training_compute_uses_active_parameters():
    m = next(m for m in MODELS if m["name"].startswith("Mixtral"))
    b = transformer_param_breakdown(m["layers"], m["hidden"], m["heads"], m["vocab"], **_arch(m))
    per_token = training_flops_per_token(
        b["layers_matmul_active"], m["vocab"] * m["hidden"], m["layers"], 0, m["hidden"]
    )
    # 6 × matmul-active parameters, independent of the six routed experts left idle
    assert per_token == pytest.approx(6 * b["matmul_active"], rel=1e-12)
    assert per_token < 6 * b["total"] / 3


@pytest.mark.parametrize("vocab", [50257, 51200])
def test_gpt3_174_6b_with_either_vocabulary(vocab):
    # Brown et al. use the 50257-token GPT-2 BPE; Megatron pads it to 51200. Both give
    # 174.6B to four significant figures (Eq. 2: 174.60B and 174.62B).
    assert megatron_param_count(96, 12288, vocab, 2048) / 1e9 == pytest.approx(174.6, abs=0.05)
