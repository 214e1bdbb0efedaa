"""DistributedModel against published TPU training runs (PaLM 540B, MaxText on v5p).

Data, citations and layouts are in ``mlsys/validation/data/tpu.toml``; the predictions
are the accuracy suite's own calls (``mlsys.validation.tpu``). These tests check that
the data file says what its sources say (shapes, FLOP conventions, slice sizes), and
the claims the cases' notes make.
"""

from __future__ import annotations

import pytest

import mlsys.validation.tpu as tpu_module
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


def test_palm_rematerialisation_count_is_jaxs_and_below_the_papers():
    # Table 3 / Sec. 4.1: HFU 57.8% over MFU 46.2% = 1.251 hardware FLOPs per model FLOP.
    # A whole-layer rerun (Megatron-LM's checkpointing) adds about 1/3; JAX's rerun of
    # only what the backward consumes (no attention output or MLP down projection) less.
    # mlsys prices PaLM with JAX's (recompute_rerun="residuals"); the paper lies between.
    m = palm_model()
    h, d_attn, kv, f = m.hidden, m.heads * m.head_dim, m.kv_heads * m.head_dim, m.ffn_hidden
    qkv, out, up, down = h * (d_attn + 2 * kv), d_attn * h, 2 * h * f, f * h  # SwiGLU: 2 up
    n_layers = m.layers * (qkv + out + up + down)
    assert n_layers / 535.7e9 == pytest.approx(1.0, abs=1e-3)
    att = 12 * m.layers * m.heads * m.head_dim * m.seq_len  # PaLM's attention term
    model = 6 * 540.35e9 + att
    whole = (model + 2 * n_layers + att / 3) / model
    residuals_only = (model + 2 * m.layers * (qkv + up) + att / 3) / model
    assert residuals_only == pytest.approx(1.216, abs=0.002)
    assert residuals_only < 0.578 / 0.462 < whole
    res, _ = palm_solve()
    assert res.hfu / res.mfu == pytest.approx(residuals_only, abs=0.003)


def test_palm_is_an_open_issue_optimistic_as_its_note_says():
    (case,) = [c for c in tpu_cases() if c.name.startswith("PaLM")]
    # priced with its parallel blocks (one TP reduction per forward pass) it leaves the
    # 15% tolerance: a named open issue, whose unpriced costs (the cross-pod exchange,
    # 1.95x on twice the batch: 2.5%; a rematerialisation count below the paper's; the
    # torus rings) all make mlsys optimistic
    assert case.open_issue and not case.passed
    assert 0.15 < case.rel_error < 0.25
    assert f"{case.rel_error:.0%} optimistic" in case.open_issue
    note = load_data("tpu")["palm"]["note_if_off"]
    assert note.startswith(f"mlsys is {case.rel_error:.0%} optimistic")


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


def test_v4_rows_sit_at_the_default_on_a_whole_rerun_and_below_it_on_jaxs():
    # unlike v5e/v5p, the v4 rows' published rate on a whole-layer rerun is the default
    # fraction itself; on JAX's residual-only count (what mlsys prices) it is below it,
    # so mlsys is optimistic there: the rerun count alone does not explain every TPU
    default = default_efficiency(Hardware.TPU_V4, "bf16")
    for row in V4_ROWS:
        m = maxtext_model(row["scale"], {k: row[k] for k in row if k.startswith("base_")})
        model, whole, jax = _maxtext_counts(m)
        assert row["mfu"] * whole / model == pytest.approx(default, abs=0.01)
        res, _ = maxtext_solve(row, "maxtext_v4")
        assert res.hfu / res.mfu == pytest.approx(jax / model, rel=0.01)
        assert row["mfu"] * jax / model < default - 0.05
        (case,) = [c for c in tpu_cases() if c.name.startswith(f"MaxText {row['label']} ")]
        assert 0 < case.rel_error < 0.10


def test_maxtext_flop_count_is_papers_appendix_b_with_causal_attention():
    # 6N + 12 L H Q T / 2 for the 32B model
    m = maxtext_model(32)
    expected = 6 * m.total_params + 12 * 32 * 32 * 256 * 2048 / 2
    assert maxtext_flops_per_token(m.total_params, 32, 32, 256, 2048) == pytest.approx(expected)


def test_selective_remat_v5p_rows_are_within_six_percent_at_the_default():
    # efficiency.py's TPU evidence: the rows whose recomputation count is not in doubt
    # (remat_policy minimal: weight-matmul outputs saved, attention and element-wise
    # work rerun: recompute="dots") come out within 6% at 0.75
    minimal = {f"MaxText {r['scale']}B on {r['chips']} TPU v5p" for r in MT_ROWS
               if r["remat"] == "minimal"}  # fmt: skip
    cases = [c for c in tpu_cases() if c.name.split(" (")[0] in minimal]
    assert len(cases) == 5
    for case in cases:
        assert abs(case.rel_error) < 0.06, (case.name, case.rel_error)


def _maxtext_counts(m) -> tuple[float, float, float]:
    # FLOPs per token on MaxText's count (6P + causal attention), and the hardware FLOPs
    # of full rematerialisation rerunning the whole layer or only what the backward pass
    # consumes: a matmul's backward needs its input, not its output, so JAX does not
    # rerun the attention and MLP output projections (their outputs feed only the
    # residual sum). MHA, ReLU MLP: QKV 3 h d_attn and MLP-in h f of 4 h d_attn + 2 h f.
    d_attn = m.heads * m.head_dim
    share = (3 * d_attn + m.ffn_hidden) / (4 * d_attn + 2 * m.ffn_hidden)
    n_layers = m.layers * (4 * m.hidden * d_attn + 2 * m.hidden * m.ffn_hidden)
    att = m.layers * d_attn * m.seq_len
    model = 6 * m.total_params + 6 * att
    rerun_attention = 2 * att  # causal forward attention
    whole = model + 2 * n_layers + rerun_attention
    jax = model + 2 * share * n_layers + rerun_attention
    return model, whole, jax


def test_512b_row_implies_the_default_on_jaxs_rerun_count():
    # The 512B row's open issue, derived: at MFU 0.64 a whole-layer rerun would need more
    # than the default TPU matmul fraction; JAX's rerun (mlsys's count for it) about the
    # default, and the rest of the gap is the exposed 16-way tensor-parallel traffic (7%
    # of the step with MaxText's parallel block)
    (row,) = [r for r in MT_ROWS if r["scale"] == 512]
    m = maxtext_model(512)
    model, whole, jax = _maxtext_counts(m)
    default = default_efficiency(Hardware.TPU_V5P, "bf16")
    assert row["mfu"] * whole / model > 0.84 > default
    assert row["mfu"] * jax / model == pytest.approx(default, abs=0.03)
    res, _ = maxtext_solve(row)
    assert res.hfu / res.mfu == pytest.approx(jax / model, rel=0.01)
    assert res.si("tp_communication_time") / res.si("step_time") > 0.06


V5E_FSDP = [r for r in V5E_ROWS if r["tp"] == 1]


@pytest.mark.parametrize("row", V5E_FSDP, ids=[f"{r['scale']}B" for r in V5E_FSDP])
def test_v5e_fsdp_rows_need_jaxs_rerun_count(row):
    # The pure-FSDP v5e rows (no tensor-parallel traffic): on a whole-layer rerun their
    # published rate implies more than the default TPU fraction; priced with JAX's rerun
    # they are within the suite's tolerance (16B and 64B within 7%)
    m = maxtext_model(row["scale"])
    model, whole, _ = _maxtext_counts(m)
    assert row["mfu"] * whole / model > default_efficiency(Hardware.TPU_V5E, "bf16")
    res, _ = maxtext_solve(row, "maxtext_v5e")
    assert res.si("tp_communication_time") == 0.0
    (case,) = [c for c in tpu_cases() if c.name.startswith(f"MaxText {row['scale']}B on 256 TPU")]
    assert case.passed
    if row["scale"] != 32:
        assert abs(case.rel_error) < 0.07


def test_maxtext_decoder_is_a_parallel_block_with_half_the_tp_traffic(monkeypatch):
    # MaxText's DecoderLayer feeds one normalised input to attention and MLP and sums
    # their outputs: per layer one all-gather + one reduce-scatter forward, the same
    # backward, one all-gather in JAX's residual rerun: 2.5 all-reduce equivalents where a
    # sequential block issues 2 + 2 + 1 = 5 (remat full); 2 where it issues 4 (remat
    # minimal keeps the weight matmuls' inputs: no gather reruns)
    assert maxtext_model(512).parallel_block
    for scale, ratio in ((512, 2.5 / 5.0), (128, 2.0 / 4.0)):
        (row, *_) = [r for r in MT_ROWS if r["scale"] == scale]
        par, _ = maxtext_solve(row)
        sequential = maxtext_model(scale).model_copy(update={"parallel_block": False})
        with monkeypatch.context() as patch:
            patch.setattr(tpu_module, "_row_model", lambda _row: sequential)
            seq, _ = maxtext_solve(row)
        assert par.si("tp_communication_time") == pytest.approx(
            seq.si("tp_communication_time") * ratio, rel=1e-9
        )
        assert par.si("compute_time") == pytest.approx(seq.si("compute_time"), rel=1e-12)


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


@pytest.mark.parametrize("section", ["maxtext", "maxtext_v5e", "maxtext_v4"])
def test_every_maxtext_layout_that_ran_fits_its_chips(section):
    # The launch scripts' layouts ran, so each must fit the chip's HBM (95 GiB v5p,
    # 16 GiB v5e, 32 GiB v4): with "minimal" kept as JAX keeps it (recompute="dots") and
    # full rematerialisation's layer inputs split over the tensor axis, they do; the
    # v5p scripts' per-device batches fill 79-99% of it
    for row in records("tpu", section):
        res, _ = maxtext_solve(row, section)
        assert res.feasible, (row, res.infeasibility_reason)
