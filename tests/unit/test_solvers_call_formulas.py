"""Every solver that needs a cited formula calls it: no private copy runs instead.

Each formula is replaced, where the solver looks it up, by a wrapper that counts calls
and returns the formula's own answer; every solver that needs it must call it, and the
answer must not change (the wrapper is the formula).
"""

from __future__ import annotations

import functools

import pytest

from mlsys import Fabrics, Fleet, Hardware, Models, Nodes
from mlsys.core.formulas import collectives
from mlsys.core.solvers import _layout, memory, roofline
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.solvers.memory import MemoryModel
from mlsys.core.solvers.roofline import SingleNodeModel
from mlsys.core.solvers.scaling import scaling_curve
from mlsys.core.solvers.search import ParallelismSearch

FLEET = Fleet(node=Nodes.DGX_A100, count=2, fabric=Fabrics.IB_HDR)
GPT3 = Models.GPT3_175B
LLAMA = Models.Llama2_13B


def _distributed():
    return (
        DistributedModel()
        .solve(LLAMA, FLEET, batch_size=16, tp_size=4, pp_size=2, microbatch_count=4, zero_stage=1)
        .si("step_time")
    )


def _distributed_allreduce():
    # ZeRO-0 across two nodes: the gradients are all-reduced (ZeRO-1 reduce-scatters
    # them instead, and a solve prices only the collectives its stage runs)
    return (
        DistributedModel()
        .solve(LLAMA, FLEET, batch_size=16, tp_size=4, pp_size=2, microbatch_count=4)
        .si("step_time")
    )


def _distributed_fsdp():
    # PyTorch FSDP (flat parameters, ZeRO-3) across two nodes: its edge collectives
    kw = dict(batch_size=32, microbatch_count=2, zero_stage=3, fsdp_flat_params=True)
    return DistributedModel().solve(LLAMA, FLEET, **kw).si("step_time")


def _memory_training():
    return MemoryModel().solve(LLAMA, Hardware.A100_80GB, dp_size=2, tp_size=4, pp_size=2,
                               microbatch_count=4, zero_stage=1).si("total")  # fmt: skip


def _memory_inference():
    return MemoryModel().solve(LLAMA, Hardware.A100_80GB, mode="inference", tp_size=2).si("total")


def _search():
    res = ParallelismSearch().solve(LLAMA, FLEET, batch_size=16, zero_stages=(0, 1))
    return float(res.table["step_time"][0])


def _scaling():
    res = scaling_curve(LLAMA, Nodes.DGX_A100, Fabrics.IB_HDR, nodes=[1, 2], batch_size=16,
                        tp_size=4, pp_size=2)  # fmt: skip
    return float(res.si("step_time")[-1])


def _single_node_training():
    res = SingleNodeModel().solve(LLAMA, Hardware.H100, batch_size=1, phase="training")
    return res.si("activation_bytes")


def _single_node_decode():
    res = SingleNodeModel().solve(LLAMA, Hardware.H100, batch_size=4, phase="decode")
    return res.si("kv_cache_bytes")


# (formula, modules where solvers look it up, solvers that need it)
CASES = [
    (
        "activation_bytes_per_layer",
        [_layout, roofline],
        [_distributed, _memory_training, _search, _scaling, _single_node_training],
    ),
    ("kv_cache_bytes", [memory, roofline], [_memory_inference, _single_node_decode]),
    ("interleaved_bubble_ratio", [_layout], [_distributed, _search, _scaling]),
    ("zero_model_state_breakdown", [_layout], [_distributed, _memory_training, _search]),
    ("group_placement", [_layout], [_distributed, _search, _scaling]),
    ("hierarchical_allreduce_time", [collectives], [_distributed_allreduce, _search, _scaling]),
    ("fsdp_edge_fraction", [_layout], [_distributed_fsdp]),
    ("fsdp_edge_exposed_time", [_layout], [_distributed, _distributed_fsdp, _search]),
]


@pytest.mark.parametrize(("name", "modules", "solvers"), CASES, ids=[c[0] for c in CASES])
def test_every_solver_that_needs_a_formula_calls_it(monkeypatch, name, modules, solvers):
    before = [solve() for solve in solvers]
    calls = {"n": 0}
    for module in modules:
        original = getattr(module, name)

        @functools.wraps(original)
        def counted(*args, _original=original, **kwargs):
            calls["n"] += 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)
    for solve, expected in zip(solvers, before, strict=True):
        calls["n"] = 0
        # a fresh problem: a layout priced before is read back from its problem's memo
        _layout.build_problem.memo.clear()
        got = solve()
        assert calls["n"] > 0, f"{solve.__name__} does not call {name}"
        assert got == expected  # the wrapper is the formula: same answer


def test_no_private_copies_remain_in_the_layout_model():
    # the layout model imports the cited formulas rather than defining its own
    for name in (
        "activation_bytes_per_layer",
        "embedding_activation_bytes",
        "pipeline_inflight_microbatches",
        "interleaved_activation_factor",
        "zero_model_state_breakdown",
        "interleaved_bubble_ratio",
        "group_placement",
        "fsdp_edge_fraction",
        "fsdp_edge_exposed_time",
    ):
        assert getattr(_layout, name).__module__.startswith("mlsys.core.formulas"), name
