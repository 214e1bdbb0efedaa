"""DistributedModel against published TPU training runs (PaLM 540B, MaxText on v5p).

Data, citations and layouts are in ``mlsys/validation/data/tpu.toml``; the predictions
are the accuracy suite's own calls (``mlsys.validation.tpu``). These tests check that
the data file says what its sources say (shapes, FLOP conventions, slice sizes), and
the claims the cases' notes make.
"""

from __future__ import annotations

import pytest

from mlsys import Hardware
from mlsys.core.solvers.efficiency import default_efficiency
from mlsys.validation import load_data, records, run_group
from mlsys.validation.tpu import (
    maxtext_flops_per_token,
    maxtext_model,
    maxtext_shape,
    maxtext_solve,
    palm_model,
    palm_solve,
    tpu_cases,
)

DATA = load_data("tpu")
PALM = DATA["palm"]
MT = DATA["maxtext"]
MT_ROWS = records("tpu", "maxtext")
V5E_ROWS = records("tpu", "maxtext_v5e")
V4_ROWS = records("tpu", "maxtext_v4")


# -- PaLM 540B ------------------------------------------------------------------------------
def test_palm_shape_gives_the_papers_parameter_count():
    # Appendix B: 540.35B parameters
    assert palm_model().total_params == pytest.approx(540.35e9, rel=1e-4)


def test_palm_throughput_is_the_one_behind_table_3s_mfu():
    # Appendix B: MFU = tokens/s x (6N + 12 L H Q T) / (chips x peak) = 46.2%
    n, layers, heads, q, t = 540.35e9, 118, 48, 256, 2048
    per_token = 6 * n + 12 * layers * heads * q * t
    peak = Hardware.TPU_V4.peak_flops_s("bf16")
    assert peak == pytest.approx(275e12)
    mfu = PALM["tokens_per_s"] * per_token / (PALM["chips"] * peak)
    assert mfu == pytest.approx(0.462, abs=5e-4)


def test_palm_layout_is_the_papers():
    res, fleet = palm_solve()
    # two pods of 3072 chips; 12-way model parallel x 256-way data parallel per pod
    assert fleet.total_accelerators == 2 * 3072
    assert res.parallelism == {"dp": 512, "tp": 12, "pp": 1, "ep": 1}
    # batch 2048 over 512 data-parallel ranks: 4 sequences a chip in one pass
    assert res.si("microbatch_size") == pytest.approx(2048 / 512)


def test_palm_rematerialisation_adds_less_than_a_whole_forward_pass():
    # Table 3 / Sec. 4.1: HFU 57.8% over MFU 46.2% = 1.251 hardware FLOPs per model FLOP.
    # mlsys's full recompute reruns the whole forward (Megatron-LM's checkpointing): about
    # 4/3. Rerunning only what the backward consumes (no attention output or MLP down
    # projection, as JAX's rematerialisation does) gives less; the paper lies between.
    res, _ = palm_solve()
    whole = res.hfu / res.mfu
    assert whole == pytest.approx(4 / 3, rel=0.01)
    m = palm_model()
    h, d_attn, kv, f = m.hidden, m.heads * m.head_dim, m.kv_heads * m.head_dim, m.ffn_hidden
    qkv, out, up, down = h * (d_attn + 2 * kv), d_attn * h, 2 * h * f, f * h  # SwiGLU: 2 up
    n_layers = m.layers * (qkv + out + up + down)
    att = 12 * m.layers * m.heads * m.head_dim * m.seq_len  # PaLM's attention term
    model = 6 * 540.35e9 + att
    residuals_only = (model + 2 * m.layers * (qkv + up) + att / 3) / model
    assert residuals_only == pytest.approx(1.216, abs=0.002)
    assert n_layers / 535.7e9 == pytest.approx(1.0, abs=1e-3)
    assert residuals_only < 0.578 / 0.462 < whole


def test_palm_within_tolerance_and_optimistic_by_less_than_its_stated_gaps():
    (case,) = [c for c in tpu_cases() if c.name.startswith("PaLM")]
    assert case.passed
    # The stated unpriced costs (cross-pod exchange: 1.95x on twice the batch, 2.5%)
    # make mlsys optimistic, not pessimistic
    assert case.rel_error > 0


# -- MaxText on TPU v5p ---------------------------------------------------------------------
def test_maxtext_shapes_follow_the_scale_rule_and_match_the_names():
    # log2(scale) = 3q + r: heads, mlp x 2^(q + [r>0]); emb x 2^(q + [r>1]); layers x 2^q
    assert maxtext_shape(32, MT) == {
        "hidden": 2560 * 4, "heads": 8 * 4, "ffn_hidden": 8192 * 4, "layers": 16 * 2}  # fmt: skip
    assert maxtext_shape(512, MT) == {
        "hidden": 2560 * 8, "heads": 8 * 8, "ffn_hidden": 8192 * 8, "layers": 16 * 8}  # fmt: skip
    for scale in (32, 64, 128, 256, 512, 1024):
        # the README names each model by its parameter count in billions
        assert maxtext_model(scale).total_params / 1e9 == pytest.approx(scale, rel=0.035)
    with pytest.raises(ValueError):
        maxtext_shape(48, MT)


@pytest.mark.parametrize(
    ("section", "device", "peak_tflops"),
    [("maxtext", "TPU_V5P", 459), ("maxtext_v5e", "TPU_V5E", 197), ("maxtext_v4", "TPU_V4", 275)],
)
def test_maxtext_rows_are_consistent_with_the_slice_and_peak(section, device, peak_tflops):
    peak = Hardware[device].peak_flops_s("bf16")
    assert peak == pytest.approx(peak_tflops * 1e12)
    per_chip = DATA[section]["tensorcores_per_chip"]  # v5p: 2 TensorCores a chip, v5e: 1
    for row in records("tpu", section):
        # v5p-N / v5e-N count TensorCores
        assert row["chips"] == int(row["slice"].split("-")[1]) // per_chip
        # the table's MFU is its TFLOP/sec/chip over the chip's peak (TFLOP/s printed to
        # the unit: +-0.5 of peak_tflops)
        rounding = 0.5 / peak_tflops + 5e-5
        assert row["tflops_per_chip"] * 1e12 / peak == pytest.approx(row["mfu"], abs=rounding)


def test_v4_scripts_set_the_sizes_directly():
    # configs/v4/22b.sh and 52b.sh: global_parameter_scale 1 with base_* set, so the
    # scale rule leaves them as given; the README names them 22B and 52B
    for row, billions in zip(V4_ROWS, (22, 52), strict=True):
        m = maxtext_model(1, {k: row[k] for k in row if k.startswith("base_")})
        assert (m.hidden, m.heads, m.ffn_hidden, m.layers) == (
            row["base_emb_dim"], row["base_num_heads"], row["base_mlp_dim"],
            row["base_num_decoder_layers"])  # fmt: skip
        assert m.total_params / 1e9 == pytest.approx(billions, rel=0.01)
        assert row["label"] == f"{billions}B"


def test_v4_full_remat_rows_sit_at_the_default_on_the_whole_rerun_count():
    # unlike v5e/v5p, the v4 rows' published rate on mlsys's whole-forward rerun is the
    # default fraction itself: the rerun count alone does not explain every TPU
    for row in V4_ROWS:
        res, _ = maxtext_solve(row, "maxtext_v4")
        implied = row["mfu"] * res.hfu / res.mfu
        assert implied == pytest.approx(default_efficiency(Hardware.TPU_V4, "bf16"), abs=0.01)


def test_maxtext_flop_count_is_papers_appendix_b_with_causal_attention():
    # 6N + 12 L H Q T / 2 for the 32B model
    m = maxtext_model(32)
    expected = 6 * m.total_params + 12 * 32 * 32 * 256 * 2048 / 2
    assert maxtext_flops_per_token(m.total_params, 32, 32, 256, 2048) == pytest.approx(expected)


def test_selective_remat_v5p_rows_are_within_five_percent_at_the_default():
    # efficiency.py's TPU evidence: the rows whose recomputation count is not in doubt
    # (remat_policy minimal: weight-matmul outputs saved) come out within 5% at 0.75
    minimal = {f"MaxText {r['scale']}B on {r['chips']} TPU v5p" for r in MT_ROWS
               if r["remat"] == "minimal"}  # fmt: skip
    cases = [c for c in tpu_cases() if c.name.split(" (")[0] in minimal]
    assert len(cases) == 5
    for case in cases:
        assert abs(case.rel_error) < 0.05, (case.name, case.rel_error)


def _jax_rerun_share(m) -> float:
    # Under full rematerialisation JAX recomputes only the residuals the backward pass
    # consumes: a matmul's backward needs its input, not its output, so the attention and
    # MLP output projections (whose outputs feed only the residual sum) are not rerun.
    # Rerun: QKV (3 h d_attn, MHA) and the MLP up-projection (h f); of 4 h d_attn + 2 h f.
    d_attn = m.heads * m.head_dim
    return (3 * d_attn + m.ffn_hidden) / (4 * d_attn + 2 * m.ffn_hidden)


def test_full_remat_rows_need_the_jax_rerun_count_or_a_higher_matmul_fraction():
    # The 512B row's open issue, derived: at MFU 0.64 with the whole forward rerun the
    # chip would sustain more than the default TPU matmul fraction allows; with JAX's
    # rerun of only what the backward consumes it sustains about the default.
    (row,) = [r for r in MT_ROWS if r["scale"] == 512]
    res, _ = maxtext_solve(row)
    assert res.hfu / res.mfu == pytest.approx(4 / 3, rel=0.03)  # mlsys: whole forward rerun
    default = default_efficiency(Hardware.TPU_V5P, "bf16")
    assert row["mfu"] * res.hfu / res.mfu > 0.84 > default
    m = maxtext_model(512)
    share = _jax_rerun_share(m)
    assert share == pytest.approx((3 * 16384 + 65536) / (4 * 16384 + 2 * 65536))  # 0.583
    n_layers = m.layers * (4 * m.hidden * m.heads * m.head_dim + 2 * m.hidden * m.ffn_hidden)
    s, att = m.seq_len, m.layers * m.heads * m.head_dim
    model = 6 * m.total_params + 6 * att * s  # MaxText's count (causal attention)
    hardware = model + 2 * share * n_layers + 2 * att * s  # + rerun matmuls and attention
    assert row["mfu"] * hardware / model == pytest.approx(default, abs=0.03)


V5E_FSDP = [r for r in V5E_ROWS if r["tp"] == 1]


@pytest.mark.parametrize("row", V5E_FSDP, ids=[f"{r['scale']}B" for r in V5E_FSDP])
def test_v5e_fsdp_rows_imply_more_than_the_default_on_the_whole_rerun_count(row):
    # The pure-FSDP v5e rows (no tensor-parallel traffic) are pessimistic beyond 10%, and
    # on mlsys's whole-forward rerun their published rate implies more hardware FLOP/s
    # than the default TPU matmul fraction: the rerun count, not the network, is in doubt
    name = f"MaxText {row['scale']}B on 256 TPU v5e"
    (case,) = [c for c in tpu_cases() if c.name.startswith(name)]
    assert case.rel_error < -0.10
    res, _ = maxtext_solve(row, "maxtext_v5e")
    assert res.si("tp_communication_time") == 0.0
    assert row["mfu"] * res.hfu / res.mfu > default_efficiency(Hardware.TPU_V5E, "bf16")


def test_the_two_1024b_slices_are_the_same_per_chip_work_to_mlsys():
    rows = [r for r in MT_ROWS if r["scale"] == 1024]
    per_chip = [maxtext_solve(r)[0].si("tokens_per_second") / r["chips"] for r in rows]
    assert per_chip[0] == pytest.approx(per_chip[1], rel=0.01)
    # where the table differs by 17%
    assert rows[1]["tflops_per_chip"] / rows[0]["tflops_per_chip"] == pytest.approx(1.17, abs=0.01)


def test_tpu_cases_are_in_the_training_suite():
    names = {c.name for c in run_group("training") if c.group == "Training: TPU runs"}
    assert names == {c.name for c in tpu_cases()}
    assert len(names) == 1 + len(MT_ROWS) + len(V5E_ROWS) + len(V4_ROWS)
