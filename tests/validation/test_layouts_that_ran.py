"""Published layouts that ran must fit the memory their devices expose: the suite's own
training runs (``layout_fit_cases``) and the held-out runs' layouts
(``mlsys.validation.memory.ran_layout_fit_cases``), and NeMo's FP8 benchmark of
Nemotron-4 340B with the library's defaults for everything its table does not state."""

from __future__ import annotations

import pytest

from mlsys import Models
from mlsys.core.catalog import Fabrics, Nodes
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.types import Fleet
from mlsys.validation import records, run_group
from mlsys.validation.heldout import heldout_cases
from mlsys.validation.memory import ran_layout_fit_cases

NEMOTRON = Models.Nemotron4_340B
H100_EXPOSED = 81559 * 2**20  # bytes the driver reports for an 80 GB H100


def test_nemotron4_340b_parameters_are_the_reports():
    # 9.4B embedding + 331.6B non-embedding (Nemotron-4 340B report, Sec. 2.2)
    assert NEMOTRON.total_params == pytest.approx(341.0e9, rel=0.002)
    assert NEMOTRON.training_dropout is False  # "dropout rate of zero" (Sec. 2.2)


def _nemo_340b(**kw):
    # NeMo 24.07's row: 128 H100, GBS 32, MBS 1, TP 8, PP 8, VP 12, FP8 -> DP 2, 16
    # micro-batches; Megatron's distributed optimizer, sequence parallelism; the rest
    # the library's defaults
    (row,) = [r for r in records("heldout", "nemo_2407") if r["model"] == "Nemotron4_340B"]
    assert (row["gpus"], row["tp"], row["pp"], row["vp"], row["global_batch"]) == (
        128, 8, 8, 12, 32)  # fmt: skip
    fleet = Fleet(node=Nodes.DGX_H100, count=16, fabric=Fabrics.IB_NDR)
    return DistributedModel().solve(
        NEMOTRON, fleet, batch_size=32, precision="fp8", tp_size=8, pp_size=8, v_stages=12,
        microbatch_count=16, zero_stage=1, sequence_parallel=True, **kw,
    )  # fmt: skip


def test_nemos_fp8_benchmark_layout_fits_with_the_defaults():
    res = _nemo_340b()
    mem = res.memory_per_accelerator
    psi = NEMOTRON.total_params / 64  # parameters a GPU holds (the stages' average)
    # bf16 weights 2, bf16 gradients 2 (FP8 training's default gradient buffers), fp32
    # master weights and Adam moments 12 over the 2 data-parallel ranks
    assert mem.si("total") - mem.si("activations") == pytest.approx(psi * (2 + 2 + 6), rel=1e-9)
    assert res.feasible and mem.si("capacity") == H100_EXPOSED
    assert mem.si("total") == pytest.approx(76.0e9, rel=0.002)
    # the catalog's Nemotron-4 340B trained without dropout: no masks stored, 2.0 GB fewer
    # than a run with dropout's masks
    masked = _nemo_340b(dropout=True).memory_per_accelerator
    assert masked.si("total") - mem.si("total") == pytest.approx(2.02e9, rel=0.01)
    # with fp32 gradient buffers (bf16 training's default) 2 bytes a parameter more,
    # 10.7 GB, which with the masks refused the layout before (88.7 GB)
    wide = _nemo_340b(grad_dtype="fp32", dropout=True)
    extra = wide.memory_per_accelerator.si("total") - masked.si("total")
    assert extra == pytest.approx(2 * psi, rel=1e-9)
    assert not wide.feasible


def test_every_held_out_layout_is_checked_once():
    names = [c.name for c in ran_layout_fit_cases()]
    assert names == [c.name for c in heldout_cases()] and len(set(names)) == len(names)


def test_every_published_layout_that_ran_fits():
    # the suite's training runs (GPU and TPU) and the held-out runs: none "does not fit"
    ran = [c for c in run_group("memory") if c.group == "Memory: layouts that ran"]
    assert len(ran) >= 95
    assert [c.name for c in ran if not c.passed or c.predicted > 1.0] == []
