"""``recompute="dots"``: keep the weight matmuls' outputs, rerun attention and the
element-wise work (JAX's ``checkpoint_dots_with_no_batch_dims``, MaxText's
``remat_policy: minimal``), in the memory formula, the layout model and the search."""

from __future__ import annotations

import pytest

from mlsys import ParameterError
from mlsys.core.catalog import Fabrics, Nodes
from mlsys.core.formulas.memory import RECOMPUTE_MODES, activation_bytes_per_layer
from mlsys.core.formulas.transformer import training_flops_per_token
from mlsys.core.layout import TrainingLayout
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.solvers.search import ParallelismSearch
from mlsys.core.types import Fleet, TransformerWorkload

MODEL = TransformerWorkload(name="t", layers=24, hidden=4096, heads=32, vocab=32000, bias=False,
                            seq_len=2048)  # fmt: skip
FLEET = Fleet(node=Nodes.DGX_H100, count=8, fabric=Fabrics.IB_NDR)


def _solve(**kw):
    base = dict(batch_size=64, zero_stage=1, microbatch_count=1, flash_attention=True,
                tp_size=4, sequence_parallel=True)  # fmt: skip
    return DistributedModel().solve(MODEL, FLEET, **{**base, **kw})


def test_dots_keeps_the_input_the_output_projection_q_k_v_and_the_up_projection():
    # GPT layer, s = 2048, b = 1, h = 4096, 32 heads, f = 4h, t = 4, 16-bit:
    # boundary tensors (layer input, attention output projection output) 2 sbh, split
    # by t only with sequence parallelism; Q, K, V 3 sbh and the MLP up output 4 sbh,
    # always split by t
    sbh = 2048 * 4096
    sp = activation_bytes_per_layer(2048, 1, 4096, 32, 4, True, "dots")
    assert sp == pytest.approx(2 * sbh * (2 / 4 + 3 / 4 + 4 / 4))
    no_sp = activation_bytes_per_layer(2048, 1, 4096, 32, 4, False, "dots")
    assert no_sp == pytest.approx(2 * sbh * (2 + 3 / 4 + 4 / 4))
    # gated MLP (gate and up outputs, 2f) with grouped-query attention (8 of 32 heads)
    gated = activation_bytes_per_layer(2048, 1, 4096, 32, 4, True, "dots", ffn_hidden=11008,
                                       kv_heads=8, gated_mlp=True)  # fmt: skip
    assert gated == pytest.approx(2 * sbh * (2 / 4 + (1 + 2 * 8 / 32 + 2 * 11008 / 4096) / 4))


def test_dots_lies_between_full_and_selective_recomputation():
    # It keeps 4.5 sbh of selective's 34/t (t = 4: 8.5 sbh) and more than full's input
    args = (2048, 1, 4096, 32, 4, True)
    full, dots, selective = (
        activation_bytes_per_layer(*args, r) for r in ("full", "dots", "selective")
    )
    assert full < dots < selective
    assert dots / selective == pytest.approx(4.5 / 8.5)


def test_head_dim_sets_the_attention_width_where_heads_times_head_dim_is_not_h():
    # MaxText's 32B: h = 10240, 32 heads of 256 (d_attn 8192): Q, K, V 3 x 8192 per token,
    # not 3 x 10240, under "dots" and in the Korthikanti count alike
    h, d = 10240, 256
    narrow = activation_bytes_per_layer(2048, 1, h, 32, 4, True, "dots", ffn_hidden=32768,
                                        head_dim=d)  # fmt: skip
    assert narrow == pytest.approx(2 * 2048 * (2 * h + 3 * 32 * d + 32768) / 4)
    none_narrow = activation_bytes_per_layer(2048, 1, h, 32, 4, True, head_dim=d,
                                             flash_attention=True, ffn_hidden=32768)  # fmt: skip
    none_wide = activation_bytes_per_layer(2048, 1, h, 32, 4, True, flash_attention=True,
                                           ffn_hidden=32768)  # fmt: skip
    # Q, the attention output, K and V: 4 tensors of 2048 columns fewer, 2 bytes, split by 4
    assert none_wide - none_narrow == pytest.approx(2048 * 4 * (h - 32 * d) * 2 / 4)


def test_the_attention_forward_is_rerun_and_counted_as_hardware_flops():
    none, dots = _solve(recompute="none"), _solve(recompute="dots")
    # model FLOPs are the same; the hardware FLOPs add one attention forward per token
    tokens = 64 * 2048
    attn_fwd = training_flops_per_token(1, 0, 24, 2048, 4096, recompute="dots") - \
        training_flops_per_token(1, 0, 24, 2048, 4096)  # fmt: skip
    assert dots.model_flops == none.model_flops
    # hardware FLOPs = model FLOPs x HFU / MFU (both over the same step and peak)
    hw = lambda r: r.si("model_flops") * r.hfu / r.mfu  # noqa: E731
    assert hw(dots) - hw(none) == pytest.approx(tokens * attn_fwd, rel=1e-6)


def test_dots_costs_more_time_than_none_and_less_than_full():
    none, dots, full = (_solve(recompute=r) for r in ("none", "dots", "full"))
    assert none.si("step_time") < dots.si("step_time") < full.si("step_time")
    act = lambda r: r.memory_per_accelerator.si("activations")  # noqa: E731
    assert act(full) < act(dots) < act(none)


def test_the_layout_and_the_search_take_dots_and_name_the_modes_on_a_typo():
    assert TrainingLayout(recompute="DOTS").recompute == "dots"
    assert RECOMPUTE_MODES == ("none", "selective", "full", "dots")
    with pytest.raises(ParameterError, match="dots"):
        TrainingLayout(recompute="dot")
    with pytest.raises(ParameterError, match="dots"):
        activation_bytes_per_layer(2048, 1, 4096, 32, recompute="minimal")
    res = ParallelismSearch().solve(MODEL, FLEET, batch_size=64, recompute=("dots",),
                                    tp_sizes=(4,), pp_sizes=(1,), zero_stages=(1,),
                                    sequence_parallel=(True,), v_stages=(1,),
                                    microbatch_counts=(1,))  # fmt: skip
    best = res.best
    assert best.layout.recompute == "dots"
    one = _solve(recompute="dots")
    assert best.si("step_time") == pytest.approx(one.si("step_time"), rel=1e-9)


def test_the_layout_codes_are_the_formulas_modes():
    # one list: the layout's integer codes index the formulas' modes
    from mlsys.core.layout import RECOMPUTE_NAMES

    assert tuple(RECOMPUTE_NAMES) == RECOMPUTE_MODES
    assert [int(code) for code in RECOMPUTE_NAMES.values()] == list(range(len(RECOMPUTE_MODES)))
