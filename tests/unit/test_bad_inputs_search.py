"""The layout search and the scaling curve refuse empty, zero and malformed options.

An empty option list searched the defaults as though none had been given; ``[0]``
raised ZeroDivisionError; ``scaling_curve(batch_size=0)`` returned arrays of NaN.
Each is now a ParameterError naming the option.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from mlsys import (
    Fabrics,
    Fleet,
    Nodes,
    ParallelismSearch,
    ParameterError,
    TransformerWorkload,
)
from mlsys.core.solvers.scaling import scaling_curve

SMALL = TransformerWorkload(name="small", layers=4, hidden=256, heads=8, vocab=1000, seq_len=128)
ONE_NODE = Fleet(node=Nodes.DGX_H100, count=1)
QUICK = dict(v_stages=(1,), zero_stages=(0,), recompute=("none",), sequence_parallel=(False,))


def _search(**kw):
    options = {**QUICK, **kw}
    return ParallelismSearch().solve(SMALL, ONE_NODE, batch_size=8, **options)


SIZE_LISTS = ["tp_sizes", "pp_sizes", "ep_sizes", "microbatch_counts", "v_stages", "cp_sizes"]


@pytest.mark.parametrize("name", SIZE_LISTS)
@pytest.mark.parametrize("value", [[], (), [0], [-1], [1.5], [True], [math.nan], "4", 0])
def test_size_lists_must_be_non_empty_positive_integers(name, value):
    with pytest.raises(ParameterError, match=f"{name}=.* expected a non-empty list"):
        _search(**{name: value})


@pytest.mark.parametrize(
    "name", ["zero_stages", "recompute", "schedules", "sequence_parallel", "recompute_num_layers"]
)
@pytest.mark.parametrize("value", [[], ()])
def test_every_other_list_option_refuses_empty(name, value):
    with pytest.raises(ParameterError, match=f"{name}=.* expected a non-empty list"):
        _search(**{name: value})


def test_tp_sizes_empty_is_not_the_defaults():
    # the defaults search every divisor of 8: 1, 2, 4 and 8
    assert set(_search().table["tp"]) == {1, 2, 4, 8}
    with pytest.raises(ParameterError, match=r"tp_sizes=\[\]"):
        _search(tp_sizes=[])


def test_tp_sizes_zero_names_the_option():
    with pytest.raises(ParameterError, match=r"tp_sizes=\[0\] is not allowed"):
        _search(tp_sizes=[0])


@pytest.mark.parametrize("value", [[True], ["no"]])
def test_sequence_parallel_options_are_flags(value):
    searched = _search(tp_sizes=[2], sequence_parallel=value)
    assert set(searched.table["sequence_parallel"]) == {value[0] is True}


def test_sequence_parallel_option_refuses_other_words():
    with pytest.raises(ParameterError, match="sequence_parallel='bogus'"):
        _search(sequence_parallel=["bogus"])


@pytest.mark.parametrize("value", [0, -8, 2.5, math.nan, math.inf, True, "8", None])
def test_search_batch_size(value):
    with pytest.raises(ParameterError, match=r"batch_size=.* expected a positive integer"):
        ParallelismSearch().solve(SMALL, ONE_NODE, batch_size=value, **QUICK)


def test_search_flag_words():
    with_overlap = _search(tp_sizes=[8], overlap=True)
    without = _search(tp_sizes=[8], overlap=False)
    assert _search(tp_sizes=[8], overlap="off").table["step_time"][0] == pytest.approx(
        without.table["step_time"][0], rel=0
    )
    assert with_overlap.table["step_time"][0] <= without.table["step_time"][0]
    with pytest.raises(ParameterError, match="overlap='maybe'"):
        _search(overlap="maybe")


# scaling_curve ---------------------------------------------------------------------
def _curve(**kw):
    options = {"nodes": [1, 2], "batch_size": 16, **kw}
    return scaling_curve(SMALL, Nodes.DGX_H100, Fabrics.IB_NDR, **options)


@pytest.mark.parametrize("value", [0, -3, 2.5, math.nan, True, "4", None])
def test_scaling_batch_size_zero_raises_not_nan(value):
    with pytest.raises(ParameterError, match=r"batch_size=.* expected a positive integer"):
        _curve(batch_size=value)


@pytest.mark.parametrize("value", [0, -3, 2.5, math.inf, "4"])
def test_scaling_seq_len(value):
    with pytest.raises(ParameterError, match="seq_len="):
        _curve(seq_len=value)


@pytest.mark.parametrize("value", [[], [0], [True], "2", [2, 1], [1, 1]])
def test_scaling_nodes(value):
    with pytest.raises(ParameterError, match="nodes="):
        _curve(nodes=value)


def test_scaling_unknown_precision_is_an_error_not_nan():
    with pytest.raises(ParameterError, match="precision='bogus'"):
        _curve(precision="bogus")


@pytest.mark.parametrize("value", ["abc", True, [0.5], 0, 1.5])
def test_scaling_threshold(value):
    with pytest.raises(ParameterError, match="threshold="):
        _curve(threshold=value)


def test_scaling_overlap_word():
    np.testing.assert_array_equal(
        _curve(overlap="no").si("step_time"), _curve(overlap=False).si("step_time")
    )
    with pytest.raises(ParameterError, match="overlap='maybe'"):
        _curve(overlap="maybe")


def test_scaling_valid_curve_is_finite():
    curve = _curve()
    # 16 sequences of 128 tokens per step on 8 and 16 accelerators: both sizes priced
    assert list(curve.feasible) == [True, True]
    assert all(math.isfinite(t) for t in curve.si("tokens_per_second"))


def test_scaling_layout_options_reach_the_layout():
    # dropout=False drops the masks' traffic: the step is shorter than with dropout
    with_dropout = _curve(tp_size=2).si("step_time")
    without = _curve(tp_size=2, dropout="no").si("step_time")
    assert (without < with_dropout).all()
    np.testing.assert_array_equal(without, _curve(tp_size=2, dropout=False).si("step_time"))


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"tp_comm_overlap": "maybe"}, "tp_comm_overlap='maybe'"),
        ({"bogus": 1}, "bogus=1"),
        ({"topology_override": 3}, "topology_override=3"),
        ({"schedule": "x"}, "schedule='x'"),
    ],
)
def test_scaling_options_are_checked_once(options, named):
    # each used to fail at every size alike and came back as arrays of NaN (or TypeError)
    with pytest.raises(ParameterError, match=re.escape(named)):
        _curve(**options)
