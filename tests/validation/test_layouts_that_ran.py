"""Published layouts that ran must fit the memory their devices expose, with the library's
defaults for everything their sources do not state (``mlsys.validation.memory``
``ran_layout_fit_cases``; the training runs' own layouts: ``layout_fit_cases``)."""

from __future__ import annotations

import pytest

from mlsys import Models
from mlsys.validation import records
from mlsys.validation.memory import ran_layout_fit_cases, ran_layout_solve

NEMOTRON = Models.Nemotron4_340B
H100_EXPOSED = 81559 * 2**20  # bytes the driver reports for an 80 GB H100


def test_nemotron4_340b_parameters_are_the_reports():
    # 9.4B embedding + 331.6B non-embedding (Nemotron-4 340B report, Sec. 2.2)
    assert NEMOTRON.total_params == pytest.approx(341.0e9, rel=0.002)


def test_nemos_fp8_benchmark_layout_fits_with_the_defaults():
    # NeMo 24.07: 128 H100, TP 8, PP 8, VP 12, GBS 32, MBS 1, FP8 -> DP 2, 16 micro-batches
    (row,) = records("memory", "nemo_performance")
    res = ran_layout_solve(row, "nemo_performance")
    mem = res.memory_per_accelerator
    psi = NEMOTRON.total_params / 64  # parameters a GPU holds (the stages' average)
    # bf16 weights 2, bf16 gradients 2 (FP8 training's default gradient buffers), fp32
    # master weights and Adam moments 12 over the 2 data-parallel ranks
    assert mem.si("total") - mem.si("activations") == pytest.approx(psi * (2 + 2 + 6), rel=1e-9)
    assert res.feasible and mem.si("capacity") == H100_EXPOSED
    assert mem.si("total") == pytest.approx(76.0e9, rel=0.002)
    # the catalog's Nemotron-4 340B trained without dropout (its report, Sec. 2.2): no
    # masks stored, 2.0 GB fewer than a run with dropout's masks
    masked = ran_layout_solve(row, "nemo_performance", dropout=True).memory_per_accelerator
    assert masked.si("total") - mem.si("total") == pytest.approx(2.02e9, rel=0.01)
    # with fp32 gradient buffers (bf16 training's default) 2 bytes a parameter more,
    # 10.7 GB, which with the masks refused the layout before (88.7 GB)
    from mlsys.core.catalog import Fabrics, Nodes
    from mlsys.core.solvers.distributed import DistributedModel
    from mlsys.core.types import Fleet

    fleet = Fleet(node=Nodes.DGX_H100, count=16, fabric=Fabrics.IB_NDR)
    wide = DistributedModel().solve(
        NEMOTRON, fleet, batch_size=32, precision="fp8", tp_size=8, pp_size=8, v_stages=12,
        microbatch_count=16, zero_stage=1, sequence_parallel=True, grad_dtype="fp32",
        dropout=True,
    )  # fmt: skip
    extra = wide.memory_per_accelerator.si("total") - masked.si("total")
    assert extra == pytest.approx(2 * psi, rel=1e-9)
    assert not wide.feasible


@pytest.mark.parametrize("row", records("memory", "nemotron4_340b_report"),
                         ids=lambda r: f"dp{r['gpus'] // 96}")  # fmt: skip
def test_nemotron4_340b_ramp_up_layouts_fit(row):
    # TP 8, PP 12, VP 8, bf16: 96 layers over 12 stages, one layer a chunk; the report's
    # batch over DP = GPUs/96 replicas at micro-batch 1
    res = ran_layout_solve(row, "nemotron4_340b_report")
    mem = res.memory_per_accelerator
    dp = row["gpus"] // 96
    psi = NEMOTRON.total_params / 96
    # bf16 weights 2, fp32 gradients 4, 12 bytes of Adam state over the DP ranks
    states = psi * (2 + 4 + 12 / dp)
    assert mem.si("total") - mem.si("activations") == pytest.approx(states, rel=1e-9)
    assert res.feasible and mem.si("total") < 0.7 * H100_EXPOSED


def test_every_published_layout_that_ran_fits():
    # these four, and every training run's own layout (GPU and TPU): none "does not fit"
    from mlsys.validation import run_group

    assert len(ran_layout_fit_cases()) == 4
    ran = [c for c in run_group("memory") if c.group == "Memory: layouts that ran"]
    assert len(ran) >= 75
    assert [c.name for c in ran if not c.passed or c.predicted > 1.0] == []
