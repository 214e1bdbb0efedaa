"""The lab builds its layouts through mlsys.TrainingLayout, split by responsibility."""

from __future__ import annotations

import importlib

import pytest

from mlsys import TrainingLayout
from mlsys.book import lab
from mlsys.core.errors import ParameterError


def test_cloud_track_layout_is_a_training_layout_megatron_70b_shape():
    # Narayanan et al. 2021 / Korthikanti et al. 2022: TP 8 inside a DGX node, PP 4
    # across nodes, ZeRO-1, selective recomputation, sequence parallelism.
    layout = lab.TRACKS["cloud"].layout
    assert isinstance(layout, TrainingLayout)
    assert (layout.tp, layout.pp, layout.zero_stage) == (8, 4, 1)
    assert layout.recompute == "selective" and layout.sequence_parallel
    assert layout.dp is None  # left to the fleet
    # one replica spans tp * pp = 32 GPUs: four DGX H100 nodes of 8
    assert layout.model_parallel_size == 32


def test_with_layout_validates_again():
    layout = lab.with_layout(lab.TRACKS["cloud"].layout, microbatch_count=16, zero_stage=2)
    assert (layout.microbatch_count, layout.zero_stage, layout.tp) == (16, 2, 8)
    # interleaving needs a pipeline: TrainingLayout's rule, not the lab's
    with pytest.raises(ParameterError, match="v_stages"):
        lab.with_layout(TrainingLayout(tp=8), v_stages=2)


def test_solver_keywords_carry_every_layout_field_scaling_curve_takes():
    kw = lab.solver_keywords(lab.TRACKS["cloud"].layout)
    assert kw["tp_size"] == 8 and kw["pp_size"] == 4 and kw["zero_stage"] == 1
    rebuilt = TrainingLayout(
        tp=kw["tp_size"], pp=kw["pp_size"], ep=kw["ep_size"], v_stages=kw["v_stages"],
        zero_stage=kw["zero_stage"], recompute=kw["recompute"],
        sequence_parallel=kw["sequence_parallel"], schedule=kw["schedule"],
        flash_attention=kw["flash_attention"],
    )  # fmt: skip
    assert rebuilt == lab.TRACKS["cloud"].layout


@pytest.mark.parametrize(
    "module",
    [
        "devices",
        "tracks",
        "origins",
        "scaling",
        "puzzle",
        "schedules",
        "placement",
        "audit",
        "payload",
        "figures",
    ],
)
def test_lab_modules_are_small_and_reexported(module):
    mod = importlib.import_module(f"mlsys.book.lab.{module}")
    lines = len(importlib.util.find_spec(mod.__name__).loader.get_source(mod.__name__).splitlines())
    assert lines < 400, f"{module}.py has {lines} lines"
    for name in mod.__all__:
        assert getattr(lab, name) is getattr(mod, name)
