"""Context parallelism's two K/V exchanges (``cp_comm_type``): the ring of point-to-point
steps hidden behind attention (Liu, Zaharia & Abbeel 2023) and Llama 3's exposed
all-gather (Dubey et al. 2024, "The Llama 3 Herd of Models", Sec. 3.3.2)."""

from __future__ import annotations

from typing import Any

import pytest

from mlsys.core.catalog import Fabrics, Models, Nodes
from mlsys.core.errors import ParameterError
from mlsys.core.formulas.overlap import OVERLAPPED_COMPUTE_SLOWDOWN
from mlsys.core.layout import TrainingLayout
from mlsys.core.solvers.distributed import DistributedModel, build_problem
from mlsys.core.solvers.search import ParallelismSearch
from mlsys.core.types import Fleet

SEQ = 32768
CP = 8


def _fleet() -> Fleet:
    return Fleet(node=Nodes.DGX_H100, count=1, fabric=Fabrics.IB_NDR)


def _solve(kind: str, **kw: Any) -> Any:
    return DistributedModel().solve(
        Models.Llama3_8B, _fleet(), batch_size=1, seq_len=SEQ, cp_size=CP, cp_comm_type=kind, **kw
    )


def _merges(res: Any) -> float:
    """The step's context-parallel merges (a zero term is left out of the tree)."""
    return next((t.value for _, t in res.explain().walk() if t.key == "cp_merge"), 0.0)


def test_all_gather_cost_is_the_ring_all_gather_and_reduce_scatter_of_k_and_v():
    # Llama 3 8B: 8 KV heads x 128 = 1024 K (and V) channels, bf16 (2 B). Each of the
    # 8 ranks holds s/cp = 4096 tokens, so its K and V are 2 x 4096 x 1024 x 2 B and the
    # gathered K, V of the whole sequence 8 times that. One node: a ring all-gather
    # over 8 ranks, t = 7·α + 7/8 · M/β (Thakur et al. 2005), forward, and the
    # reduce-scatter of dK, dV (the same cost) backward, per layer, 32 layers, exposed.
    P = build_problem(Models.Llama3_8B, _fleet(), 1, "bf16", None, SEQ, None, True)
    gathered_bytes = CP * 2 * (SEQ // CP) * 1024 * 2
    assert gathered_bytes == 134_217_728
    ring = (CP - 1) * P.intra_lat + (CP - 1) / CP * gathered_bytes / P.intra_bw
    expected = 32 * (ring + ring)
    res = _solve("all_gather")
    assert res.si("cp_communication_total") == pytest.approx(expected, rel=1e-9)
    assert res.si("cp_communication_time") == pytest.approx(expected, rel=1e-9)


def test_all_gather_is_exposed_where_the_ring_hides_behind_attention():
    ring, gather = _solve("p2p"), _solve("all_gather")
    # the step differs by exactly the communication each leaves exposed, less the
    # slowdown the ring's hidden part causes beside attention (Lee et al. 2025) and the
    # ring's merges of its partial results (the all-gather has none)
    diff = gather.si("step_time") - ring.si("step_time")
    exposed = gather.si("cp_communication_time") - ring.si("cp_communication_time")
    hidden = ring.si("cp_communication_total") - ring.si("cp_communication_time")
    merges = _merges(ring)
    assert _merges(gather) == 0.0 < merges
    assert diff == pytest.approx(exposed - OVERLAPPED_COMPUTE_SLOWDOWN * hidden - merges, rel=1e-9)
    assert ring.si("cp_communication_time") < ring.si("cp_communication_total")
    assert exposed - OVERLAPPED_COMPUTE_SLOWDOWN * hidden > 0.0


def test_full_recompute_gathers_again():
    # the recomputed forward pass all-gathers K and V a second time: 3 collectives, not 2
    one = _solve("all_gather").si("cp_communication_total")
    full = _solve("all_gather", recompute="full").si("cp_communication_total")
    assert full == pytest.approx(1.5 * one, rel=1e-9)


def test_no_effect_without_context_parallelism():
    kw: dict[str, Any] = dict(batch_size=8, seq_len=4096, tp_size=8)
    a = DistributedModel().solve(Models.Llama3_8B, _fleet(), cp_comm_type="all_gather", **kw)
    b = DistributedModel().solve(Models.Llama3_8B, _fleet(), **kw)
    assert a.si("step_time") == b.si("step_time")


def test_layout_carries_it_and_rejects_unknown_names():
    lay = TrainingLayout(cp=CP, cp_comm_type="all-gather")
    assert lay.cp_comm_type == "all_gather" and lay.cp_all_gather
    via_layout = DistributedModel().solve(
        Models.Llama3_8B, _fleet(), batch_size=1, seq_len=SEQ, layout=lay
    )
    assert via_layout.si("step_time") == _solve("all_gather").si("step_time")
    with pytest.raises(ParameterError, match="cp_comm_type"):
        TrainingLayout(cp=2, cp_comm_type="ring")


def test_search_prices_layouts_as_solve_does():
    res = ParallelismSearch().solve(
        Models.Llama3_8B, _fleet(), batch_size=1, seq_len=SEQ, tp_sizes=(1,), pp_sizes=(1,),
        cp_sizes=(CP,), cp_comm_type="all_gather",
    )  # fmt: skip
    best = res.best_layout
    assert best["cp_size"] == CP
    again = _solve(
        "all_gather", zero_stage=best["zero_stage"], recompute=best["recompute"],
        microbatch_count=best["microbatch_count"],
    )  # fmt: skip
    assert res.best.si("step_time") == pytest.approx(again.si("step_time"), rel=1e-9)
    p2p = ParallelismSearch().solve(
        Models.Llama3_8B, _fleet(), batch_size=1, seq_len=SEQ, tp_sizes=(1,), pp_sizes=(1,),
        cp_sizes=(CP,),
    )  # fmt: skip
    ring = p2p.best_layout
    again = _solve(
        "p2p", zero_stage=ring["zero_stage"], recompute=ring["recompute"],
        microbatch_count=ring["microbatch_count"],
    )  # fmt: skip
    assert p2p.best.si("step_time") == pytest.approx(again.si("step_time"), rel=1e-9)
    # the ring hides its exchange but merges 7 partial results a layer; the all-gather
    # exposes its exchange and merges none: the search prices the two apart
    assert p2p.best.si("step_time") != pytest.approx(res.best.si("step_time"), rel=1e-4)
