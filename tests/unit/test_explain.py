"""The step time as a tree of the solver's own terms (DistributedResult.explain), the tree
type itself (mlsys.core.terms.Term) and the step's sensitivity to its inputs."""

from __future__ import annotations

import json
import math

import pytest

from mlsys import Fabrics, Fleet, Models, Nodes, ParameterError
from mlsys.core.solvers.distributed import DistributedModel, DistributedResult
from mlsys.core.terms import Term

GPT3_FLEET = Fleet(node=Nodes.DGX_A100, count=8, fabric=Fabrics.IB_HDR)
# Korthikanti et al. (2022)'s GPT-3 175B layout on 64 A100s (the distributed guide's case)
GPT3 = dict(
    batch_size=64, tp_size=8, pp_size=8, v_stages=3, microbatch_count=64,
    recompute="selective", sequence_parallel=True,
)  # fmt: skip


@pytest.fixture(scope="module")
def gpt3():
    return DistributedModel().solve(Models.GPT3_175B, GPT3_FLEET, **GPT3)


# -- the tree type -------------------------------------------------------------------------
def test_tree_parents_are_the_sums_of_their_children_and_shares_are_of_the_root():
    tree = Term.tree("step", "s", [("compute", [("gemm", 3.0), ("attention", 1.0)]), ("comm", 1.0)])
    assert tree.value == 5.0
    compute = tree.find("compute")
    assert compute.value == 4.0
    assert [c.share for c in compute.children] == [3.0 / 5.0, 1.0 / 5.0]
    assert tree.find("comm").share == 0.2
    assert [t.name for t in tree.leaves()] == ["gemm", "attention", "comm"]


def test_a_total_beyond_the_parts_becomes_a_named_remainder():
    tree = Term.tree("memory", "byte", [("weights", 40e9), ("activations", 20e9)], total=64e9)
    other = tree.find("other")
    assert other.value == 4e9  # 64 - 40 - 20 GB, a row of its own
    assert tree.value == 64e9
    assert sum(c.value for c in tree.children) == tree.value


def test_markdown_has_one_unit_from_the_root_an_indent_marker_and_a_total_row():
    tree = Term.tree(
        "step", "s", [("compute", [("gemm", 0.009), ("attention", 0.002)]), ("comm", 0.001)]
    )
    lines = tree.to_markdown().splitlines()
    assert lines[0].startswith("| term | ms | share |")  # 12 ms at the root: ms throughout
    assert lines[2].startswith("| compute | 11.00 | 91.7% |")
    assert lines[3].startswith("| \u00b7\u2002gemm | 9.000 | 75.0% |")  # visible marker
    assert lines[-1].startswith("| **step** | **12.00** | **100%** |")
    assert tree._repr_mimebundle_()["text/markdown"] == tree.to_markdown()


def test_text_table_is_aligned_and_folds_nothing_silently():
    tree = Term.tree("memory", "byte", [("weights", 2.5e9), ("optimizer", 7.5e9)])
    text = str(tree)
    assert text.splitlines()[0].split() == ["term", "GB", "share", "runs", "beside"]
    assert "weights    2.500  25.0%" in text
    assert text.splitlines()[-1].split() == ["memory", "10.00", "100%"]


def test_to_dict_is_json_data_with_the_whole_tree():
    tree = Term.tree("step", "s", [("a", 1.0, {"source": "eq. 1", "inputs": {"x": "2"}})])
    data = json.loads(json.dumps(tree.to_dict()))
    assert data["value"] == 1.0 and data["unit"] == "s"
    assert data["children"][0]["source"] == "eq. 1"
    assert data["children"][0]["inputs"] == {"x": "2"}


def test_bad_unit_and_unknown_key_name_what_is_allowed():
    with pytest.raises(ParameterError, match="unit"):
        Term.tree("x", "furlong", [("a", 1.0)])
    with pytest.raises(ParameterError, match="one of"):
        Term.tree("x", "s", [("a", 1.0)]).find("b")


# -- the training step ---------------------------------------------------------------------
def test_the_tree_is_the_step_time_exactly(gpt3):
    tree = gpt3.explain()
    assert tree.value == gpt3.si("step_time")  # bitwise: the solver's own sum
    leaves = math.fsum(t.value for t in tree.leaves())
    assert leaves == pytest.approx(gpt3.si("step_time"), rel=1e-12)
    assert tree.find("compute").value == gpt3.si("compute_time")
    assert tree.find("tp").value == gpt3.si("tp_communication_time")
    assert tree.find("pp").value == gpt3.si("pp_communication_time")
    assert tree.find("bubble").value == gpt3.si("pipeline_bubble_time")
    assert tree.find("data_parallel").value == gpt3.si("dp_communication_time")


def test_bubble_is_its_cited_share_of_the_microbatch_work(gpt3):
    # 1F1B interleaved (Narayanan et al. 2021): the bubble is (p - 1)/(v·m) of the m
    # micro-batches' time — everything but the bubble, the once-a-step optimizer and the
    # data-parallel time: 7/(3·64)
    tree = gpt3.explain()
    once = tree.find("optimizer").value + tree.find("data_parallel").value
    work = tree.value - tree.find("bubble").value - once
    assert tree.find("bubble").value / work == pytest.approx(7 / (3 * 64), rel=1e-12)


def test_hidden_gradient_reduction_is_shown_beside_the_backward_pass():
    # pp 4 instead of 8: two data-parallel replicas whose gradient all-reduce overlaps
    res = DistributedModel().solve(
        Models.GPT3_175B,
        GPT3_FLEET,
        **{**GPT3, "pp_size": 4, "v_stages": 1, "microbatch_count": 32},
    )
    assert res.layout.dp == 2
    dp = res.explain().find("dp")
    tied = res.explain().find("tied_embedding").value
    hidden = res.si("dp_communication_total") - (dp.value + tied)
    assert dp.overlaps == "the backward pass"
    assert dp.hidden == pytest.approx(hidden, rel=1e-12)  # tied embedding: exposed
    assert dp.hidden > 0.0


def test_terms_name_their_fabric_and_formula(gpt3):
    tree = gpt3.explain()
    assert tree.find("tp").name.endswith("NVLink 3 + NVSwitch")
    assert tree.find("pp").name.endswith("InfiniBand HDR 200 Gb/s")
    assert "nccl_allreduce_time" in tree.find("tp").source
    assert tree.find("tp").inputs["tp"] == "8"


def test_depth_folds_levels_into_their_parents(gpt3):
    top = gpt3.explain(depth=1)
    assert [c.key for c in top.children] == ["compute", "communication", "bubble"]
    assert all(not c.children for c in top.children)
    assert top.value == gpt3.si("step_time")
    for bad in (0, True, 1.5):
        with pytest.raises(ParameterError, match="depth"):
            gpt3.explain(depth=bad)


def test_a_result_not_made_by_a_solve_says_so():
    with pytest.raises(ParameterError, match=r"DistributedModel\.solve"):
        DistributedResult(step_time=1.0).explain()


# -- sensitivity ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def one_node():
    # one DGX A100, tensor parallelism only: no pipeline (no bubble), no data parallelism
    # (no overlap windows), a dense model (no MoE host work)
    fleet = Fleet(node=Nodes.DGX_A100, count=1, fabric=Fabrics.IB_HDR)
    return DistributedModel().solve(Models.Llama2_7B, fleet, batch_size=8, tp_size=8)


def test_elasticity_of_an_input_one_term_uses_is_that_terms_share(one_node):
    # step = Σ terms and only the kernel-overhead term depends on the per-kernel time κ,
    # linearly (exponent 1): d ln step / d ln κ = 1 · term/step, its share
    share = one_node.explain().find("kernel_overhead").share
    assert one_node.sensitivity()["kernel overhead"] == pytest.approx(share, rel=1e-6)
    # linear: doubling κ adds exactly that share to the step
    assert one_node.sensitivity(2.0)["kernel overhead"] == pytest.approx(share, rel=1e-9)


def test_inputs_the_step_does_not_use_are_left_out(one_node):
    out = one_node.sensitivity()
    assert "scale-out bandwidth" not in out  # one node: nothing crosses the network
    assert "MoE host time per op" not in out
    assert out["peak FLOP/s"] < 0.0 < out["kernel overhead"]
    assert list(out) == sorted(out, key=lambda k: -abs(out[k]))
    with pytest.raises(ParameterError, match="factor"):
        one_node.sensitivity(-1.0)


def test_attention_names_the_formula_this_solve_used():
    fused = DistributedModel().solve(Models.GPT3_175B, GPT3_FLEET, **GPT3)
    eager = DistributedModel().solve(Models.GPT3_175B, GPT3_FLEET, **GPT3, flash_attention=False)
    assert "attention_time" in fused.explain().find("attention").source
    assert "materialised score" in eager.explain().find("attention").source


def test_ring_attention_exchange_shows_what_hides_under_the_attention_blocks():
    fleet = Fleet(node=Nodes.DGX_H100, count=4, fabric=Fabrics.IB_NDR)
    res = DistributedModel().solve(
        Models.Llama3_8B, fleet, batch_size=16, tp_size=2, cp_size=4, seq_len=32768
    )
    cp = res.explain().find("cp")
    assert cp.overlaps == "attention blocks"
    assert cp.value == res.si("cp_communication_time")
    hidden = res.si("cp_communication_total") - res.si("cp_communication_time")
    assert cp.hidden == pytest.approx(hidden, rel=1e-12) and cp.hidden > 0.0
    assert "attention blocks (" in res.explain().to_text()  # the hidden time beside it


def test_every_formula_a_term_names_exists_and_the_head_and_optimizer_name_theirs(gpt3):
    # the LM head and the optimizer step are priced by output_layer_time and
    # optimizer_step_time (_layout.py); their terms must say so, and every dotted
    # mlsys.core.formulas path any term names must import
    import importlib
    import re

    tree = gpt3.explain()
    assert "layer_time.output_layer_time" in tree.find("lm_head").source
    assert "memory.optimizer_step_time" in tree.find("optimizer").source
    named = set()
    stack = [tree]
    while stack:
        term = stack.pop()
        stack.extend(term.children)
        named.update(re.findall(r"mlsys\.core\.formulas\.(\w+)\.(\w+)", term.source or ""))
    assert ("layer_time", "output_layer_time") in named
    for module, name in sorted(named):
        assert hasattr(importlib.import_module(f"mlsys.core.formulas.{module}"), name), name
