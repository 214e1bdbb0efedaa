"""TrainingLayout: validated once, one rulebook for a solve and a search."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import mlsys
from mlsys import Models, ParameterError
from mlsys.core.layout import (
    LAYOUT_RULES,
    Rejection,
    TrainingLayout,
    first_violation,
    layout_facts,
    rejection_codes,
)


def test_exported_from_mlsys_and_frozen_hashable():
    lay = mlsys.TrainingLayout(tp=8, pp=8, microbatch_count=64, v_stages=2)
    assert lay is not None and lay.model_parallel_size == 64
    assert hash(lay) == hash(TrainingLayout(tp=8, pp=8, microbatch_count=64, v_stages=2))
    with pytest.raises(Exception):
        lay.tp = 4  # frozen


@pytest.mark.parametrize(
    "kw, name",
    [
        ({"tp": 0}, "tp_size"),
        ({"cp": -1}, "cp_size"),
        ({"zero_stage": 4}, "zero_stage"),
        ({"zero_stage": True}, "zero_stage"),
        ({"recompute": "some"}, "recompute"),
        ({"schedule": "zb"}, "schedule"),
        ({"v_stages": 2}, "v_stages"),  # interleaving needs a pipeline
        ({"pp": 4, "v_stages": 2, "schedule": "gpipe"}, "v_stages"),
        ({"sequence_parallel": "maybe"}, "sequence_parallel"),
        ({"grad_accumulation_fusion": 2}, "grad_accumulation_fusion"),
        ({"recompute_num_layers": 0}, "recompute_num_layers"),
        ({"pipeline_p2p": "gpipe"}, "pipeline_p2p"),
    ],
)
def test_field_rules_raise_parameter_error_naming_the_parameter(kw, name):
    with pytest.raises(ParameterError) as err:
        TrainingLayout(**kw)
    assert err.value.name == name


def test_issue_case_v2_pp8_m12_is_judged_by_one_rule():
    # GPT-3 175B on 512 GPUs, tp 8, pp 8 -> dp 8; batch 96 -> 12 sequences per replica;
    # m = 12 divides them, but 12 % pp = 4: Megatron refuses interleaving there.
    lay = TrainingLayout(tp=8, pp=8, microbatch_count=12, v_stages=2).with_dp(512)
    assert lay.dp == 8
    facts = layout_facts(Models.GPT3_175B, 96, 2048, 512)
    assert first_violation(lay, facts).code == Rejection.INTERLEAVE
    with pytest.raises(ParameterError) as err:
        lay.require(Models.GPT3_175B, 512, 96, 2048)
    assert err.value.name == "microbatch_count"
    # m = 16 (a multiple of 8) with batch 128 passes every rule
    ok = TrainingLayout(tp=8, pp=8, microbatch_count=16, v_stages=2).with_dp(512)
    assert ok.check(Models.GPT3_175B, 512, 128, 2048) is None


def test_context_parallel_rule_needs_seq_divisible_by_2cp():
    lay = TrainingLayout(tp=8, cp=4).with_dp(64)  # dp = 2
    assert lay.check(Models.Llama3_70B, 64, 2, 8192) is None
    assert "cp_size" in lay.check(Models.Llama3_70B, 64, 2, 8196)  # 8196 % 8 = 4


def test_vectorised_rules_equal_scalar_rules_on_every_combination():
    model = Models.Mixtral_8x7B
    total, batch, seq = 96, 48, 4096
    facts = layout_facts(model, batch, seq, total)
    grid = np.array(
        [
            (tp, pp, ep, cp, m, v)
            for tp in (1, 2, 3, 8)
            for pp in (1, 2, 4)
            for ep in (1, 2, 3, 8)
            for cp in (1, 2)
            for m in (1, 2, 3, 4, 6, 8)
            for v in ((1, 2) if pp > 1 else (1,))
            if total % (tp * pp * ep * cp) == 0
        ]
    )
    tp, pp, ep, cp, m, v = grid.T
    dp = total // (tp * pp * ep * cp)
    arrays = SimpleNamespace(tp=tp, pp=pp, dp=dp, ep=ep, cp=cp, microbatch_count=m, v_stages=v)
    codes = rejection_codes(arrays, facts)
    seen = set()
    for i in range(len(grid)):
        lay = TrainingLayout(
            tp=int(tp[i]), pp=int(pp[i]), dp=int(dp[i]), ep=int(ep[i]), cp=int(cp[i]),
            microbatch_count=int(m[i]), v_stages=int(v[i]),
        )  # fmt: skip
        rule = first_violation(lay, facts)
        assert codes[i] == (0 if rule is None else int(rule.code))
        seen.add(int(codes[i]))
    # the grid exercises valid layouts and several distinct rules
    assert {0, int(Rejection.HEADS), int(Rejection.EXPERTS), int(Rejection.INTERLEAVE)} <= seen
    assert len({r.code for r in LAYOUT_RULES}) == len(LAYOUT_RULES)


def test_software_stack_fields_travel_with_the_layout():
    # grad_accumulation_fusion, recompute_num_layers and pipeline_p2p given in the layout
    # price exactly as the same keywords of DistributedModel.solve, and MemoryModel reads
    # the layout's recompute_num_layers as its own keyword.
    from mlsys.core.catalog import Fabrics, Nodes
    from mlsys.core.solvers.distributed import DistributedModel
    from mlsys.core.solvers.memory import MemoryModel
    from mlsys.core.types import Fleet

    fleet = Fleet(node=Nodes.DGX_A100, count=8, fabric=Fabrics.IB_HDR)
    stack = dict(grad_accumulation_fusion=False, recompute_num_layers=2, pipeline_p2p="deepspeed")
    shape = dict(tp=8, pp=8, microbatch_count=64, recompute="full")
    lay = TrainingLayout(**shape, **stack)
    by_layout = DistributedModel().solve(Models.GPT3_175B, fleet, batch_size=64, layout=lay)
    by_keywords = DistributedModel().solve(
        Models.GPT3_175B, fleet, batch_size=64, tp_size=8, pp_size=8, microbatch_count=64,
        recompute="full", **stack,
    )  # fmt: skip
    plain = DistributedModel().solve(
        Models.GPT3_175B, fleet, batch_size=64, layout=TrainingLayout(**shape)
    )
    assert by_layout.si("step_time") == by_keywords.si("step_time")
    assert by_layout.si("step_time") != plain.si("step_time")
    mem = MemoryModel().solve(
        Models.GPT3_175B, fleet.accelerator, batch_size=64, layout=lay.with_dp(64)
    )
    mem_kw = MemoryModel().solve(
        Models.GPT3_175B, fleet.accelerator, batch_size=64,
        layout=TrainingLayout(**shape).with_dp(64), recompute_num_layers=2,
    )  # fmt: skip
    assert mem.si("total") == mem_kw.si("total")
