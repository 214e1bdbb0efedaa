"""Activation memory per layer against Korthikanti et al. (2022), Table 2.

The six formulas are evaluated from the paper's symbols (coefficients in
``mlsys/validation/data/memory.toml``, the suite's one copy) for a GPT-3 175B layer
(s = 2048, b = 1, h = 12288, a = 96, t = 8) and compared with
:func:`mlsys.core.formulas.activation_bytes_per_layer`.

Worked derivation for the table's configuration (sbh = 2048 · 12288 = 25,165,824;
as/h = 96 · 2048 / 12288 = 16):

* no parallelism:                sbh (34 + 5·16)        = 114 sbh = 2.869 GB
* tensor parallel, t = 8:        sbh (10 + 3 + 10)      =  23 sbh = 0.579 GB
* tensor + sequence parallel:    sbh (4.25 + 10)        = 14.25 sbh = 0.359 GB
* TP + selective recompute:      sbh (10 + 3)           =  13 sbh = 0.327 GB
* TP + SP + selective:           34 sbh / 8             = 4.25 sbh = 0.107 GB
* full recompute:                2 sbh                  = 0.050 GB
"""

from __future__ import annotations

import pytest

from mlsys.core.formulas import (
    activation_bytes_per_layer,
    embedding_activation_bytes,
    interleaved_activation_factor,
    pipeline_inflight_microbatches,
)
from mlsys.validation import load_data, run_group

K = load_data("memory")["korthikanti"]
SBH = K["seq_len"] * K["batch_size"] * K["hidden"]
AS_H = K["heads"] * K["seq_len"] / K["hidden"]

WORKED_GB = {
    "no parallelism": 114 * SBH / 1e9,
    "tensor parallel": 23 * SBH / 1e9,
    "tensor + sequence parallel": 14.25 * SBH / 1e9,
    "TP + selective recompute": 13 * SBH / 1e9,
    "TP + SP + selective recompute": 4.25 * SBH / 1e9,
    "full recompute": 2 * SBH / 1e9,
}


def _paper_bytes(v, t):
    c0, ct, catt = v["coefficients"]
    return SBH * (c0 + ct / t + catt * AS_H / t)


@pytest.mark.parametrize("v", K["variant"], ids=[v["name"] for v in K["variant"]])
def test_table2_variant(v):
    t = v.get("tp", K["tp_size"])
    got = activation_bytes_per_layer(
        K["seq_len"], K["batch_size"], K["hidden"], K["heads"], t, v["sequence_parallel"],
        v["recompute"],
    )  # fmt: skip
    assert got == pytest.approx(_paper_bytes(v, t), rel=1e-12), K["citation"]
    assert got / 1e9 == pytest.approx(WORKED_GB[v["name"]], rel=1e-12)


def test_suite_cases_are_these_variants():
    cases = [c for c in run_group("memory") if c.group == "Memory: activations per layer"]
    assert len(cases) == len(K["variant"]) and all(c.passed for c in cases)


def test_worked_numbers_in_gb():
    # the rounded figures of the module docstring
    assert WORKED_GB["no parallelism"] == pytest.approx(2.869, abs=5e-4)
    assert WORKED_GB["TP + SP + selective recompute"] == pytest.approx(0.107, abs=5e-4)


def test_tensor_parallel_with_t1_is_no_parallelism():
    a = activation_bytes_per_layer(2048, 1, 12288, 96, 1)
    b = activation_bytes_per_layer(2048, 1, 12288, 96, 1, sequence_parallel=True)
    assert a == b == pytest.approx(SBH * (34 + 5 * AS_H))


def test_fp32_activations_scale_tensors_not_masks():
    # 4-byte activations: 16 tensors × 4 + 2 one-byte masks = 66 sbh; attention
    # 2 × 4 + 1 = 9 as/h — not simply twice the 16-bit figure (34 + 5as/h).
    got = activation_bytes_per_layer(2048, 1, 12288, 96, bytes_per_element=4)
    assert got == pytest.approx(SBH * (66 + 9 * AS_H))


def test_first_stage_with_interleaving_gpt3():
    # Korthikanti Sec. 4.2.3: the first stage holds L layers' worth of activations
    # (p micro-batches of L/p layers), × (1 + (p−1)/(p·m)) with m interleaved chunks.
    # 175B, TP+SP+selective, p = 8, 3 chunks: 96 × 4.25 sbh × (1 + 7/24) = 13.262 GB
    # plus the embedding dropout sbhp/t (Sec. 4.3) = 0.025 GB.
    p, L, m = K["pp_size"], K["layers"], K["v_stages"]
    per_layer = activation_bytes_per_layer(2048, 1, 12288, 96, 8, True, "selective")
    held = per_layer * (L / p) * pipeline_inflight_microbatches(p, 64)
    held *= interleaved_activation_factor(p, m)
    extra = embedding_activation_bytes(2048, 1, 12288, K["vocab"], 8, p)
    assert held == pytest.approx(96 * 4.25 * SBH * (1 + 7 / 24))
    assert held / 1e9 == pytest.approx(13.262, abs=1e-3)
    assert extra == pytest.approx(SBH * p / 8)


def test_embedding_terms_without_pipeline():
    # Sec. 4.3: with p = 1 add 4sbh/t (1 + v/h) for the output layer.
    got = embedding_activation_bytes(2048, 1, 12288, 51200, 8, 1)
    assert got == pytest.approx(SBH / 8 + 4 * SBH / 8 * (1 + 51200 / 12288))


def test_full_recompute_input_is_split_by_sequence_parallelism():
    # Full recomputation keeps each layer's input (2 sbh in 16-bit). Under sequence
    # parallelism that input is a sequence-parallel tensor, s/t × b × h per rank, which
    # is why Megatron-Core rejects distribute_saved_activations with sequence parallelism:
    # 2 · 2048 · 12288 / 8 = 6,291,456 bytes for the Table 3 layer.
    got = activation_bytes_per_layer(2048, 1, 12288, 96, 8, True, "full")
    assert got == 2 * 2048 * 12288 / 8 == 6_291_456
    # without sequence parallelism every rank holds the whole input (the paper's 2 sbh)
    assert activation_bytes_per_layer(2048, 1, 12288, 96, 8, False, "full") == 2 * SBH
