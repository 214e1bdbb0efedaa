"""``mlsys solve distributed --explain``: the step time's tree after the result."""

import json

from mlsys import Fabrics, Fleet, Models, Nodes
from mlsys.cli import main
from mlsys.core.solvers.distributed import DistributedModel

ARGS = [
    "solve", "distributed", "--model", "GPT3_175B", "--node", "DGX_A100", "--nodes", "8",
    "--fabric", "IB_HDR", "--set", "batch_size=64", "--set", "tp_size=8", "--set", "pp_size=8",
    "--set", "microbatch_count=64", "--set", "recompute=selective",
]  # fmt: skip


def _same_solve():
    fleet = Fleet(node=Nodes.DGX_A100, count=8, fabric=Fabrics.IB_HDR)
    return DistributedModel().solve(
        Models.GPT3_175B, fleet, batch_size=64, tp_size=8, pp_size=8, microbatch_count=64,
        recompute="selective",
    )  # fmt: skip


def test_explain_prints_the_tree_the_result_gives(capsys):
    assert main([*ARGS, "--explain"]) == 0
    out = capsys.readouterr().out
    head, tree = out.split("\nWhere the step time goes\n\n")
    assert head.startswith("step_time")
    assert tree.rstrip("\n") == _same_solve().explain().to_text()
    assert "tensor-parallel collectives (TP), NVLink 3 + NVSwitch" in tree


def test_explain_with_json_adds_the_tree_as_data(capsys):
    assert main([*ARGS, "--explain", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["explain"]["value"] == _same_solve().si("step_time")
    assert [c["key"] for c in data["explain"]["children"]] == [
        "compute", "communication", "bubble",
    ]  # fmt: skip


def test_explain_of_a_solver_without_a_tree_is_refused(capsys):
    args = ["solve", "roofline", "--model", "Llama2_70B", "--hardware", "H100", "--explain"]
    assert main(args) == 2
    assert "--explain" in capsys.readouterr().err


SERVING = [
    "solve", "serving", "--model", "Llama2_70B", "--hardware", "H100",
    "--set", "tp_size=4", "--set", "batch_size=8",
]  # fmt: skip


def test_serving_explain_prints_the_first_token_and_the_next_ones(capsys):
    from mlsys import Hardware
    from mlsys.core.solvers.serving import ServingModel

    res = ServingModel().solve(Models.Llama2_70B, Hardware.H100, tp_size=4, batch_size=8)
    assert main([*SERVING, "--explain"]) == 0
    out = capsys.readouterr().out
    first = out.split("Where the time to first token goes\n\n")[1]
    first, later = first.split("\n\nWhere the time per output token goes\n\n")
    assert first.rstrip("\n") == res.explain("prefill").to_text()
    assert later.rstrip("\n") == res.explain("decode").to_text()
    assert main([*SERVING, "--explain", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["explain"]["prefill"]["value"] == res.si("ttft")
    assert data["explain"]["decode"]["value"] == res.si("itl")
