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
