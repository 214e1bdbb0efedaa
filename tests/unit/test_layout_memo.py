"""The layout model's per-problem memo and its scalar short-cuts never change an answer."""

from __future__ import annotations

import numpy as np
import pytest

from mlsys import Fabrics, Fleet, Models, Nodes
from mlsys.core.solvers import _layout

FLEET = Fleet(node=Nodes.DGX_A100, count=8, fabric=Fabrics.IB_HDR)


def _problem():
    _layout.build_problem.memo.clear()
    return _layout.build_problem(Models.GPT3_175B, FLEET, 64, "bf16", None, None, None, True)


def test_memory_terms_memo_returns_a_copy_of_the_same_answer():
    P = _problem()
    args = (8.0, 8.0, 1.0, 1.0, 64.0, 3.0, 1.0, 1.0, 1.0, 0, 1.0)
    first = _layout.memory_terms(P, *args)
    first["memory"] = -1.0  # a caller's edit must not reach the memo
    again = _layout.memory_terms(P, *args)
    fresh = _layout.memory_terms(_problem(), *args)
    assert again == fresh
    assert again["memory"] > 0.0


@pytest.mark.parametrize("zero", [0.0, 1.0, 2.0, 3.0])
@pytest.mark.parametrize(("tp", "pp", "dp"), [(8.0, 8.0, 1.0), (8.0, 2.0, 4.0), (2.0, 1.0, 32.0)])
def test_scalar_short_cuts_equal_the_array_path(zero, tp, pp, dp):
    # A solve skips the collectives its ZeRO stage does not run, the data-parallel ones
    # without a data-parallel group, the pipeline hop without a pipeline and the
    # cross-node TP all-reduce inside a node; a search prices every branch and selects.
    # Both must give the same step.
    P = _problem()
    m = 64.0 / dp
    scalar = _layout.evaluate(P, tp, pp, 1.0, dp, m, 1.0, zero, 1.0, 1.0, 0, 0, True, 1.0)
    arr = _layout.evaluate(
        P, *(np.array([x]) for x in (tp, pp, 1.0, dp, m, 1.0, zero, 1.0, 1.0)), 0, 0, True,
        np.array([1.0]),
    )  # fmt: skip
    for key in ("step_time", "dp_communication_total", "tp_communication_time", "memory"):
        assert scalar[key] == pytest.approx(float(arr[key][0]), rel=1e-12), key


def test_tp_comm_overlap_is_part_of_the_layout_and_the_search():
    from mlsys.core.layout import TrainingLayout
    from mlsys.core.solvers.distributed import DistributedModel
    from mlsys.core.solvers.search import ParallelismSearch

    kw = dict(tp=8, pp=8, microbatch_count=64, recompute="selective", sequence_parallel=True)
    plain = TrainingLayout(**kw)
    overlapped = TrainingLayout(**kw, tp_comm_overlap=True)
    assert overlapped != plain and overlapped.with_dp(64).tp_comm_overlap
    dm = DistributedModel()
    a = dm.solve(Models.GPT3_175B, FLEET, batch_size=64, layout=plain)
    b = dm.solve(Models.GPT3_175B, FLEET, batch_size=64, layout=overlapped)
    c = dm.solve(
        Models.GPT3_175B, FLEET, batch_size=64, tp_comm_overlap=True, tp_size=8, pp_size=8,
        microbatch_count=64, recompute="selective", sequence_parallel=True,
    )  # fmt: skip
    # chunked with its GEMMs, the TP traffic hides (partly): a shorter step, the same
    # step whether the option comes in the layout or as a keyword
    assert b.si("step_time") < a.si("step_time")
    assert b.si("step_time") == c.si("step_time")
    assert b.layout.tp_comm_overlap
    # the search prices every layout the same way, and its best is what solve gives
    res = ParallelismSearch().solve(
        Models.GPT3_175B, FLEET, batch_size=64, tp_sizes=(8,), pp_sizes=(8,),
        microbatch_counts=(64,), v_stages=(1,), zero_stages=(0,), recompute=("selective",),
        sequence_parallel=(True,), tp_comm_overlap=True,
    )  # fmt: skip
    assert float(res.table["step_time"][0]) == pytest.approx(b.si("step_time"), rel=1e-12)
    assert res.best.si("step_time") == pytest.approx(b.si("step_time"), rel=1e-12)


def test_fp8_training_runs_the_output_layer_in_16_bits():
    # DeepSeek-V3 (arXiv:2412.19437) Sec. 3.3.1 keeps the embedding and the output head
    # in BF16 under FP8 training; Megatron-Core's output layer is not a TE FP8 module.
    # On an H100 the head's GEMMs then run at 0.75 × 989.4 TFLOP/s, not 0.65 × 1978.9,
    # each scaled by the H100's matmul ceiling over the A100's the defaults were fitted
    # on (0.801 / 0.859, efficiency.REFERENCE_MATMUL_CEILING).
    from mlsys import Hardware

    _layout.build_problem.memo.clear()
    fp8 = _layout.build_problem(Models.Llama3_8B, Hardware.H100, 8, "fp8", None, 8192, "bf16", True)
    bf16 = _layout.build_problem(
        Models.Llama3_8B, Hardware.H100, 8, "bf16", None, 8192, "bf16", True
    )
    device = 0.801 / 0.859
    assert fp8.head_flops_s == pytest.approx(0.75 * device * 989.4e12, rel=1e-3)
    assert fp8.peak * fp8.eta_c == pytest.approx(0.65 * device * 1978.9e12, rel=1e-3)
    assert bf16.head_flops_s == pytest.approx(bf16.peak * bf16.eta_c)
