"""ParallelismSearch: enumeration, ranking, rejection reasons, agreement with solve."""

from __future__ import annotations

import numpy as np
import pytest

from mlsys.core.catalog import Fabrics, Models, Nodes
from mlsys.core.errors import InfeasibleError, ParameterError
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.solvers.search import ParallelismSearch, SearchResult
from mlsys.core.types import Fleet

FLEET = Fleet(node=Nodes.DGX_A100, count=8, fabric=Fabrics.IB_HDR)


@pytest.fixture(scope="module")
def result():
    return ParallelismSearch().solve(Models.GPT3_175B, FLEET, batch_size=64)


def test_result_shape(result):
    assert isinstance(result, SearchResult)
    assert result.candidates == len(result.table["tp"]) > 1000
    assert 0 < result.feasible_count < result.candidates
    t = result.table
    feas = t["feasible"]
    # feasible rows first, ranked by throughput
    assert feas[: result.feasible_count].all() and not feas[result.feasible_count :].any()
    tok = t["tokens_per_second"][: result.feasible_count]
    assert np.all(np.diff(tok) <= 0)


def test_every_layout_multiplies_to_the_fleet(result):
    t = result.table
    assert np.all(t["dp"] * t["tp"] * t["pp"] * t["ep"] == 64)


def test_best_is_resolved_with_distributed_model(result):
    best = result.best
    assert best.feasible
    assert best.si("tokens_per_second") == pytest.approx(result.table["tokens_per_second"][0])
    assert result.top(1)[0]["tp"] == result.best_layout["tp_size"]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_search_and_solve_agree_on_sampled_layouts(result, seed):
    rng = np.random.default_rng(seed)
    records = result.to_records()
    valid = [r for r in records if r["reason"] in ("", "does not fit in memory")]
    for i in rng.choice(len(valid), size=15, replace=False):
        r = valid[i]
        res = DistributedModel().solve(
            Models.GPT3_175B, FLEET, batch_size=64, tp_size=r["tp"], pp_size=r["pp"],
            ep_size=r["ep"], microbatch_count=r["microbatch_count"], v_stages=r["v_stages"],
            zero_stage=r["zero_stage"], recompute=r["recompute"],
            sequence_parallel=r["sequence_parallel"],
        )  # fmt: skip
        assert res.si("step_time") == pytest.approx(r["step_time"], rel=1e-12)
        assert res.mfu == pytest.approx(r["mfu"], rel=1e-12)
        assert res.memory_per_accelerator.si("total") == pytest.approx(
            r["memory_per_accelerator"], rel=1e-12
        )
        assert res.feasible == r["feasible"]


def test_rejections_carry_reasons(result):
    reasons = {r["reason"] for r in result.rejected()}
    assert "does not fit in memory" in reasons
    # 96 heads: of the fleet's divisors up to 96, only tp = 64 fails to divide them
    bad = {r["tp"] for r in result.rejected() if r["reason"] == "heads not divisible by tp"}
    assert bad == {64}
    gpt = ParallelismSearch().solve(
        Models.GPT3_175B, Fleet(node=Nodes.DGX_A100, count=20, fabric=Fabrics.IB_HDR),
        batch_size=96, zero_stages=(1,), recompute=("full",), v_stages=(1,),
    )  # fmt: skip
    reasons = {r["reason"] for r in gpt.rejected()}
    assert "heads not divisible by tp" in reasons  # tp = 5, 10, 20, 40, 80 ...
    assert "global batch not divisible by the dp·ep data-parallel ranks" in reasons
    for r in gpt.rejected():
        if r["reason"] == "heads not divisible by tp":
            assert 96 % r["tp"] != 0


def test_exports(result):
    recs = result.top(3)
    assert len(recs) == 3 and set(recs[0]) >= {"tokens_per_second", "mfu", "reason"}
    d = result.to_dict(quantities=False)
    assert d["candidates"] == result.candidates
    md = result._repr_markdown_()
    assert md.count("\n|") >= 12 and "tokens/s" in md


def test_no_feasible_layout():
    tiny = Fleet(node=Nodes.DGX_A100, count=1, fabric=Fabrics.IB_HDR)
    res = ParallelismSearch().solve(Models.Llama3_405B, tiny, batch_size=8)
    assert res.best is None and res.feasible_count == 0
    with pytest.raises(InfeasibleError):
        ParallelismSearch().solve(Models.Llama3_405B, tiny, batch_size=8, raise_errors=True)


def test_bad_inputs():
    with pytest.raises(ParameterError, match="recompute"):
        ParallelismSearch().solve(Models.GPT3_175B, FLEET, batch_size=64, recompute=("most",))
    with pytest.raises(ParameterError, match="batch_size"):
        ParallelismSearch().solve(Models.GPT3_175B, FLEET, batch_size=0)


def test_moe_search_tries_expert_parallelism():
    fleet = Fleet(node=Nodes.DGX_H100, count=4, fabric=Fabrics.IB_NDR)
    res = ParallelismSearch().solve(
        Models.Mixtral_8x7B, fleet, batch_size=64, seq_len=4096, v_stages=(1,)
    )
    assert set(res.table["ep"]) == {1, 2, 4, 8}
    assert res.feasible_count > 0


def test_issue_11_case_solve_and_search_apply_one_rule():
    # GPT-3 175B on 512 A100, tp 8 pp 8 (dp 8), batch 96 -> 12 sequences per replica:
    # m = 12 with v = 2 breaks Megatron's "m a multiple of pp" for interleaving. The
    # search used to reject it while solve priced it; now both refuse it, for one reason.
    from mlsys.core.layout import REJECTION_REASONS, Rejection

    fleet = Fleet(node=Nodes.DGX_A100, count=64, fabric=Fabrics.IB_HDR)
    res = ParallelismSearch().solve(
        Models.GPT3_175B, fleet, batch_size=96, tp_sizes=(8,), pp_sizes=(8,),
        v_stages=(1, 2), zero_stages=(1,), recompute=("selective",),
    )  # fmt: skip
    rows = [r for r in res.to_records() if r["microbatch_count"] == 12 and r["v_stages"] == 2]
    assert rows and {r["reason"] for r in rows} == {REJECTION_REASONS[Rejection.INTERLEAVE]}
    with pytest.raises(ParameterError) as err:
        DistributedModel().solve(Models.GPT3_175B, fleet, batch_size=96, tp_size=8, pp_size=8,
                                 v_stages=2, microbatch_count=12)  # fmt: skip
    assert err.value.name == "microbatch_count"


def test_search_prices_the_software_stack_as_solve_does():
    # A DeepSpeed-engine stack (whole, unpaired stage sends; separate gradient accumulation)
    # is slower on every pipelined layout than Megatron's defaults, and the search's
    # table agrees with solve's price of the same layout on that stack.
    kw = dict(tp_sizes=(8,), pp_sizes=(8,), microbatch_counts=(64,), v_stages=(1,),
              zero_stages=(1,), recompute=("full",), sequence_parallel=(False,))  # fmt: skip
    stack = dict(grad_accumulation_fusion=False, pipeline_p2p="deepspeed")
    fast = ParallelismSearch().solve(Models.GPT3_175B, FLEET, batch_size=64, **kw)
    slow = ParallelismSearch().solve(Models.GPT3_175B, FLEET, batch_size=64, **kw, **stack)
    assert slow.table["step_time"][0] > fast.table["step_time"][0]
    ref = DistributedModel().solve(
        Models.GPT3_175B, FLEET, batch_size=64, tp_size=8, pp_size=8, microbatch_count=64,
        zero_stage=1, recompute="full", **stack,
    )  # fmt: skip
    assert slow.table["step_time"][0] == pytest.approx(ref.si("step_time"), rel=1e-12)
    assert slow.best.si("step_time") == pytest.approx(ref.si("step_time"), rel=1e-12)


# -- block recompute (Megatron-LM --recompute-method block --recompute-num-layers N) ---------
_BLOCK = dict(tp_sizes=(8,), pp_sizes=(8,), microbatch_counts=(64,), zero_stages=(1,),
              sequence_parallel=(False,), flash_attention=False, seq_len=4096)  # fmt: skip


@pytest.fixture(scope="module")
def block():
    # GPT-3 175B at 4k tokens, materialised scores, no SP: only full recompute fits
    return ParallelismSearch().solve(
        Models.GPT3_175B, FLEET, batch_size=64, v_stages=(1,),
        recompute=("none", "selective", "full"), recompute_num_layers=(None, *range(1, 13)),
        **_BLOCK,
    )  # fmt: skip


def test_search_tries_block_recompute_only_with_full(block):
    rows = block.to_records()
    assert {r["recompute_num_layers"] for r in rows if r["recompute"] != "full"} == {None}
    got = {(r["v_stages"], r["recompute_num_layers"]) for r in rows if r["recompute"] == "full"}
    assert got == {(1, n) for n in (None, *range(1, 13))}


def test_block_recompute_search_agrees_with_solve(block):
    for r in block.to_records():
        if r["recompute"] != "full" or r["recompute_num_layers"] is None:
            continue
        res = DistributedModel().solve(
            Models.GPT3_175B, FLEET, batch_size=64, tp_size=8, pp_size=8,
            microbatch_count=64, v_stages=r["v_stages"], zero_stage=1, recompute="full",
            recompute_num_layers=r["recompute_num_layers"], flash_attention=False,
            seq_len=4096,
        )  # fmt: skip
        assert res.si("step_time") == pytest.approx(r["step_time"], rel=1e-12)
        assert res.mfu == pytest.approx(r["mfu"], rel=1e-12)
        assert res.memory_per_accelerator.si("total") == pytest.approx(
            r["memory_per_accelerator"], rel=1e-12
        )
        assert res.feasible == r["feasible"]


def test_block_recompute_trades_memory_for_time_layer_by_layer(block):
    # v = 1: a chunk is 96/8 = 12 layers. Recomputing N of them reruns N/12 of the
    # forward and keeps full activations for the other 12 - N, so step time and memory
    # move linearly from full recompute (N = 12) towards none (N = 0)
    rows = {(r["recompute"], r["recompute_num_layers"]): r for r in block.to_records()}
    full, none = rows[("full", None)], rows[("none", None)]
    assert not none["feasible"] and full["feasible"]
    for n in range(1, 13):
        r = rows[("full", n)]
        share = n / 12
        step = none["step_time"] + share * (full["step_time"] - none["step_time"])
        mem = none["memory_per_accelerator"] + share * (
            full["memory_per_accelerator"] - none["memory_per_accelerator"]
        )
        assert r["step_time"] == pytest.approx(step, rel=1e-9)
        assert r["memory_per_accelerator"] == pytest.approx(mem, rel=1e-9)
    # the fastest layout that fits recomputes as few layers as the 80 GiB allow
    best = block.best_layout
    assert best["recompute"] == "full" and best["recompute_num_layers"] is not None
    n_best = best["recompute_num_layers"]
    capacity = FLEET.accelerator.memory_bytes
    fits = [n for n in range(1, 13) if rows[("full", n)]["memory_per_accelerator"] <= capacity]
    assert n_best == min(fits) < 12
    assert block.table["tokens_per_second"][0] > full["tokens_per_second"]
    assert block.best.layout.recompute_num_layers == n_best


def test_block_recompute_options_are_checked():
    for bad in ((0,), (-2,), (1.5,), ()):
        with pytest.raises(ParameterError, match="recompute_num_layers"):
            ParallelismSearch().solve(Models.GPT3_175B, FLEET, batch_size=64,
                                      recompute_num_layers=bad, **_BLOCK)  # fmt: skip
