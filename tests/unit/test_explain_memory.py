"""What each byte is: DistributedMemory.explain() and MemoryResult.explain()."""

from __future__ import annotations

import pytest

from mlsys import Fabrics, Fleet, Hardware, Models, Nodes
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.solvers.memory import MemoryModel


def test_training_memory_tree_is_the_total_and_its_parts_are_the_zero_counts():
    fleet = Fleet(node=Nodes.DGX_A100, count=8, fabric=Fabrics.IB_HDR)
    res = DistributedModel().solve(
        Models.GPT3_175B, fleet, batch_size=64, tp_size=8, pp_size=8, v_stages=3,
        microbatch_count=64, recompute="selective", sequence_parallel=True,
    )  # fmt: skip
    mem = res.memory_per_accelerator
    tree = mem.explain()
    assert tree.value == mem.si("total")  # summed in the solver's order: exact
    assert [c.key for c in tree.children] == ["model_state", "activations"]
    # ZeRO-0 mixed precision (Rajbhandari et al. 2020, Sec. 3.1): each GPU holds
    # Ψ/(tp·pp) parameters at 2 bytes, fp32 gradients at 4, master weights and two
    # Adam moments at 12
    psi = Models.GPT3_175B.total_params / 64
    assert tree["weights"].value == pytest.approx(2 * psi, rel=1e-9)
    assert tree["gradients"].value == pytest.approx(4 * psi, rel=1e-9)
    assert tree["optimizer"].value == pytest.approx(12 * psi, rel=1e-9)
    assert tree["model_state"].share == pytest.approx(18 * psi / mem.si("total"), rel=1e-9)
    assert tree.to_markdown().splitlines()[0].startswith("| term | GB |")


def test_inference_memory_tree_shows_the_kv_cache_and_the_allowance():
    res = MemoryModel().solve(
        Models.Llama2_7B, Hardware.H100, mode="inference", batch_size=8, seq_len=4096
    )
    tree = res.explain()
    assert tree.value == res.si("total")
    # 2 (K and V) · 32 layers · 32 KV heads · 128 dims · 4,096 tokens · 8 sequences · 2 bytes
    assert tree["kv_cache"].value == pytest.approx(2 * 32 * 32 * 128 * 4096 * 8 * 2, rel=1e-12)
    assert tree["framework_overhead"].value == res.si("framework_overhead") > 0.0
    assert "gradients" not in [t.key for t in tree.leaves()]  # inference keeps none
