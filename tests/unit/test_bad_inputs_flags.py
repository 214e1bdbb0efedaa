"""Flags and counts: one validator (mlsys.core.checks) read by every solver.

A flag is True/False, 0/1 or one of the words true/false, yes/no, on/off, 1/0 (any
case): ``overlap="no"`` prices the step without overlap, exactly as ``overlap=False``;
any other value is a ParameterError, never read as truthy. A count is a whole number:
never a bool, a string, NaN or infinity.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from mlsys import (
    ContinuousBatchingModel,
    DistributedModel,
    Fabrics,
    Fleet,
    Hardware,
    MemoryModel,
    Models,
    Nodes,
    ParameterError,
    ReliabilityModel,
    ServingModel,
    SingleNodeModel,
    TransformerWorkload,
)
from mlsys.core.checks import count, flag, positive_ints
from mlsys.core.formulas import (
    pipeline_bubble_fraction,
    ring_allreduce_time,
    transformer_param_count,
)
from mlsys.core.layout import TrainingLayout
from mlsys.core.types import ConfigurationError

H100 = Hardware.H100
SMALL = TransformerWorkload(name="small", layers=4, hidden=256, heads=8, vocab=1000, seq_len=128)
TWO_NODES = Fleet(node=Nodes.DGX_H100, count=2, fabric=Fabrics.IB_NDR)

FALSE_WORDS = ["no", "off", "false", "0", "NO", "Off", " False "]
TRUE_WORDS = ["yes", "on", "true", "1", "YES", "On"]
NOT_FLAGS = ["maybe", "", "n", 2, -1, math.nan, 0.0, [True], None]


@pytest.mark.parametrize("word", FALSE_WORDS)
def test_false_words_are_false(word):
    assert flag("overlap", word) is False


@pytest.mark.parametrize("word", TRUE_WORDS)
def test_true_words_are_true(word):
    assert flag("overlap", word) is True


@pytest.mark.parametrize("value", [True, False, np.True_, np.False_, 1, 0, np.int64(1)])
def test_booleans_and_zero_one_are_flags(value):
    assert flag("overlap", value) is bool(value)


@pytest.mark.parametrize("value", NOT_FLAGS)
def test_anything_else_is_refused(value):
    with pytest.raises(ParameterError, match=r"overlap=.* is not allowed: expected True or False"):
        flag("overlap", value)


def _llama7b_step(overlap):
    # ZeRO-1 with full recompute on two DGX H100: it fits, and the gradient all-reduce
    # across the two nodes is long enough that hiding it behind the backward pass shows
    return DistributedModel().solve(
        Models.Llama2_7B, TWO_NODES, batch_size=64, zero_stage=1, recompute="full",
        overlap=overlap,
    )  # fmt: skip


@pytest.mark.parametrize("word", ["no", "off", "No", "OFF", "false", "0"])
def test_overlap_no_prices_the_step_without_overlap(word):
    off, on = _llama7b_step(False), _llama7b_step(True)
    # overlap changes the answer (else the check below could not fail) ...
    assert off.si("step_time") > on.si("step_time")
    # ... and the word "no" means False, not a truthy non-empty string
    assert _llama7b_step(word).si("step_time") == off.si("step_time")


@pytest.mark.parametrize("word", ["yes", "on", "true", "1"])
def test_overlap_yes_is_true(word):
    assert _llama7b_step(word).si("step_time") == _llama7b_step(True).si("step_time")


# every flag of every solver: "off" is read as False, "maybe" is refused naming the flag
FLAG_CALLS = {
    "distributed": (
        lambda **kw: DistributedModel().solve(SMALL, TWO_NODES, batch_size=16, **kw),
        [
            "overlap",
            "sequence_parallel",
            "flash_attention",
            "tp_comm_overlap",
            "grad_accumulation_fusion",
            "fsdp_flat_params",
            "dropout",
            "fsdp_per_parameter",
            "raise_errors",
        ],
    ),
    "memory": (
        lambda **kw: MemoryModel().solve(SMALL, H100, **kw),
        ["sequence_parallel", "flash_attention", "raise_errors"],
    ),
    "single": (lambda **kw: SingleNodeModel().solve(SMALL, H100, **kw), ["raise_errors"]),
    "serving": (
        lambda **kw: ServingModel().solve(SMALL, H100, **kw),
        [
            "batched_prefill",
            "gate_up_fused",
            "host_overlap",
            "vocab_parallel",
            "raise_errors",
            "price_infeasible",
        ],
    ),
    "batching": (
        lambda **kw: ContinuousBatchingModel().solve(SMALL, H100, arrival_rate=2.0, **kw),
        ["gate_up_fused", "host_overlap", "vocab_parallel", "raise_errors"],
    ),
    "reliability": (
        lambda **kw: ReliabilityModel().solve(TWO_NODES, job_duration=86400.0, **kw),
        ["raise_errors"],
    ),
}
FLAG_CASES = [(solver, name) for solver, (_, names) in FLAG_CALLS.items() for name in names]


@pytest.mark.parametrize(("solver", "name"), FLAG_CASES, ids=[f"{s}-{n}" for s, n in FLAG_CASES])
def test_every_flag_reads_off_as_false(solver, name):
    call = FLAG_CALLS[solver][0]
    assert call(**{name: "off"}).to_dict() == call(**{name: False}).to_dict()


@pytest.mark.parametrize(("solver", "name"), FLAG_CASES, ids=[f"{s}-{n}" for s, n in FLAG_CASES])
def test_every_flag_refuses_maybe(solver, name):
    call = FLAG_CALLS[solver][0]
    with pytest.raises(ParameterError, match=rf"{name}='maybe' is not allowed"):
        call(**{name: "maybe"})


def test_layout_reads_flag_words():
    assert TrainingLayout(sequence_parallel="no", dropout="off").dropout is False
    assert TrainingLayout(tp_comm_overlap="yes").tp_comm_overlap is True


# counts ------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [True, False, "4", math.nan, math.inf, 2.5, 0, -1, [2]])
def test_a_count_is_a_whole_number(value):
    with pytest.raises(ParameterError, match=r"tp_size=.* expected a positive integer"):
        count("tp_size", value)


def test_a_count_accepts_integral_numbers():
    assert count("tp_size", 8) == 8
    assert count("tp_size", 8.0) == 8
    assert count("tp_size", np.int32(8)) == 8
    assert count("zero_stage", 0, minimum=0) == 0


@pytest.mark.parametrize("size", ["tp_size", "pp_size", "microbatch_count", "v_stages"])
@pytest.mark.parametrize("value", [math.inf, True])
def test_distributed_sizes_refuse_inf_and_bool(size, value):
    # inf raised OverflowError; True was served the result of 1 from a cache
    DistributedModel().solve(SMALL, TWO_NODES, batch_size=16)  # a cached neighbour
    with pytest.raises(ParameterError, match=f"{size}=.* expected a positive integer"):
        DistributedModel().solve(SMALL, TWO_NODES, batch_size=16, **{size: value})


@pytest.mark.parametrize("size", ["tp_size", "pp_size", "cp_size", "dp_size"])
def test_memory_sizes_refuse_bool_after_a_cached_one(size):
    MemoryModel().solve(SMALL, H100, **{size: 1})  # True == 1: must not hit this entry
    with pytest.raises(ParameterError, match=f"{size}=True is not allowed"):
        MemoryModel().solve(SMALL, H100, **{size: True})


def test_memory_dp_size_none_is_refused():
    with pytest.raises(ParameterError, match="dp_size=None"):
        MemoryModel().solve(SMALL, H100, dp_size=None)


def test_zero_stage_bool_is_refused():
    with pytest.raises(ParameterError, match="zero_stage=True"):
        TrainingLayout(zero_stage=True)


def test_topology_override_must_be_a_name():
    with pytest.raises(ParameterError, match="topology_override=3"):
        DistributedModel().solve(SMALL, TWO_NODES, batch_size=16, topology_override=3)


@pytest.mark.parametrize("name", ["recompute", "schedule"])
def test_a_list_for_a_name_is_refused(name):
    with pytest.raises(ParameterError, match=f"{name}=\\['x'\\]"):
        DistributedModel().solve(SMALL, TWO_NODES, batch_size=16, **{name: ["x"]})


def test_option_lists_keep_order_and_drop_repeats():
    assert positive_ints("tp_sizes", [8, 1, 8.0, 2]) == [8, 1, 2]


@pytest.mark.parametrize("value", ["4", 4, [], (), [0], [1, True], [1.5]])
def test_option_lists_refuse_empty_zero_and_non_lists(value):
    with pytest.raises(ParameterError, match=r"tp_sizes=.* expected a non-empty list"):
        positive_ints("tp_sizes", value)


def test_serving_host_time_is_one_number():
    with pytest.raises(ParameterError, match=r"host_time_per_step=\[1.0\]"):
        ServingModel().solve(SMALL, H100, host_time_per_step=[1.0])


def test_batching_arrival_rate_is_one_number():
    with pytest.raises(ParameterError, match=r"arrival_rate=\[1.0\]"):
        ContinuousBatchingModel().solve(SMALL, H100, arrival_rate=[1.0])


@pytest.mark.parametrize("name", ["prompt_len", "output_len"])
def test_batching_lengths_refuse_strings(name):
    with pytest.raises(ParameterError, match=f"{name}='4'"):
        ContinuousBatchingModel().solve(SMALL, H100, arrival_rate=1.0, **{name: "4"})


# the types read counts and flags through the same validator ---------------------------
def _workload(**kw):
    shape = dict(name="w", layers=4, hidden=256, heads=8, vocab=1000, seq_len=128)
    return TransformerWorkload(**{**shape, **kw})


@pytest.mark.parametrize("field", ["layers", "hidden", "heads", "vocab", "context_window"])
@pytest.mark.parametrize("value", [True, "4", 2.5, math.nan, [2]])
def test_workload_sizes_are_whole_numbers(field, value):
    with pytest.raises(ConfigurationError, match=rf"{field}=.*: expected a whole number"):
        _workload(**{field: value})


def test_workload_integral_float_is_accepted():
    assert _workload(layers=4.0).layers == 4


@pytest.mark.parametrize("field", ["gated_mlp", "bias", "tied_embeddings", "parallel_block"])
def test_workload_flags_read_words(field):
    assert getattr(_workload(**{field: "no"}), field) is False
    assert getattr(_workload(**{field: "on"}), field) is True
    with pytest.raises(ConfigurationError, match=f"{field}='maybe'"):
        _workload(**{field: "maybe"})


@pytest.mark.parametrize("value", [True, "4", 2.5])
def test_fleet_count_is_a_whole_number(value):
    with pytest.raises(ConfigurationError, match=r"count=.*: expected a whole number"):
        Fleet(node=Nodes.DGX_H100, count=value, fabric=Fabrics.IB_NDR)


# a formula's counts, scalar or array ----------------------------------------------------
@pytest.mark.parametrize(
    "args", [(0, 8), (4, 0), (4, 8, 0), (True, 8), ("4", 8), (math.nan, 8), ([0, 2], 8)]
)
def test_pipeline_bubble_counts(args):
    # (0, 8) gave a bubble of -1/7 = -0.143 and (4, 0) a ZeroDivisionError
    with pytest.raises(ParameterError, match="expected a positive integer"):
        pipeline_bubble_fraction(*args)


def test_pipeline_bubble_arrays_still_broadcast():
    # p = 8, m = 32: 7/39 = 0.1795 of the step; p = 2: 1/33
    np.testing.assert_allclose(
        pipeline_bubble_fraction(np.array([2, 8]), 32), [1 / 33, 7 / 39], rtol=1e-12
    )


@pytest.mark.parametrize(
    ("args", "named"),
    [((-1, 8, 2, 10), "layers=-1"), ((4, 8.5, 2, 10), "hidden=8.5"), ((4, 8, 0, 10), "heads=0")],
)
def test_transformer_param_count_counts(args, named):
    # layers=-1 gave -776 parameters
    with pytest.raises(ParameterError, match=re.escape(named)):
        transformer_param_count(*args)


def test_transformer_param_count_vocab_zero_is_a_layer_alone():
    # no embedding: one layer of h = 8 with 2 heads, MLP 4h, LayerNorms and biases:
    # 12h² + 13h = 768 + 104 = 872, plus the final norm's 2h = 16
    assert transformer_param_count(1, 8, 2, 0) == 888


def test_collective_ranks_are_not_text():
    # "4" was read as 4 ranks
    with pytest.raises(ParameterError, match="ranks='4'"):
        ring_allreduce_time(1e9, "4", 1e11, 1e-6)
