"""Context parallelism (ring attention) through the one layout type.

Derivations are written in each test; the sources are Liu, Zaharia & Abbeel (2023),
"Ring Attention with Blockwise Transformers for Near-Infinite Context" (arXiv:2310.01889,
Sec. 3: each of ``cp`` hosts holds ``s/cp`` tokens and passes its K, V block round the
ring while computing attention of the block it holds) and NVIDIA Megatron-Core's
context-parallel documentation (activations split along the sequence; gradients reduced
over the data × context parallel group).
"""

from __future__ import annotations

import pytest

from mlsys import Fabrics, Fleet, Hardware, Models, Nodes, TrainingLayout
from mlsys.core.formulas.memory import activation_bytes_per_layer
from mlsys.core.solvers._layout import build_problem
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.solvers.memory import MemoryModel
from mlsys.core.solvers.search import ParallelismSearch

L70 = Models.Llama3_70B  # h 8192, 64 heads, 8 KV heads of 128, SwiGLU f 28672, 80 layers


def test_activation_bytes_per_rank_divided_by_cp():
    # s = 8192, b = 1, t = 8 with sequence parallelism, selective, bf16 (e = 2):
    # inner tensors 2 + 2·(8/64) + 3·28672/8192 = 12.75; per sbh (4e + 2)/t + 12.75·e/t
    # = 10/8 + 25.5/8 = 4.4375. With cp = 4 each rank holds s/cp = 2048 tokens:
    # sbh = 2048 · 1 · 8192 = 16,777,216 → 74,448,896 bytes per layer.
    got = activation_bytes_per_layer(
        8192, 1, 8192, 64, 8, True, "selective", 2.0,
        ffn_hidden=28672, kv_heads=8, gated_mlp=True, cp_size=4,
    )  # fmt: skip
    assert got == pytest.approx(74_448_896, rel=1e-12)
    one = activation_bytes_per_layer(
        8192, 1, 8192, 64, 8, True, "selective", 2.0,
        ffn_hidden=28672, kv_heads=8, gated_mlp=True,
    )  # fmt: skip
    assert one == pytest.approx(4 * got, rel=1e-12)


def test_materialised_scores_are_local_queries_against_all_keys():
    # no FlashAttention, recompute none: scores (2e + 1) bytes × a·(s/cp)·s·b elements.
    # GPT-3 shape h 12288, a 96, s 2048, b 1, t 1, cp 2: the scores part is
    # 5 · 96 · 1024 · 2048 = 1,006,632,960 bytes; the rest is sbh_local · 34.
    full = activation_bytes_per_layer(2048, 1, 12288, 96, 1, False, "none", 2.0, cp_size=2)
    sbh_local = 1024 * 12288
    assert full == pytest.approx(34 * sbh_local + 5 * 96 * 1024 * 2048, rel=1e-12)


def _fleet(nodes: int) -> Fleet:
    return Fleet(node=Nodes.DGX_H100, count=nodes, fabric=Fabrics.IB_NDR)


def test_cp_halves_activations_and_shards_zero_over_dp_cp():
    # 1 node tp 8 (dp 1) vs 2 nodes tp 8 cp 2 (dp 1): the same micro-batch of 1 sequence,
    # each rank now holding half its tokens -> activations exactly halve. ZeRO-1 shards
    # the optimizer over dp·cp = 2 ranks -> optimizer state halves; weights do not.
    kw = dict(batch_size=1, seq_len=8192, tp_size=8, zero_stage=1, recompute="selective",
              sequence_parallel=True)  # fmt: skip
    one = DistributedModel().solve(L70, _fleet(1), **kw).memory_per_accelerator
    two = DistributedModel().solve(L70, _fleet(2), cp_size=2, **kw).memory_per_accelerator
    assert two.si("activations") == pytest.approx(one.si("activations") / 2, rel=1e-12)
    assert two.si("optimizer") == pytest.approx(one.si("optimizer") / 2, rel=1e-12)
    assert two.si("weights") == pytest.approx(one.si("weights"), rel=1e-12)
    # MemoryModel gives the same bytes for the same layout
    mem = MemoryModel().solve(L70, Hardware.H100, dp_size=1, cp_size=2, **kw)
    assert mem.si("total") == pytest.approx(two.si("total"), rel=1e-12)


def test_ring_exchange_volume_and_time_per_layer():
    # tp 8 fills the node, so the 2 context-parallel ranks sit on 2 nodes (rank order
    # tp -> cp): the ring rides the NIC. Per layer and micro-batch each rank sends its
    # K and V block, 2 · (s/cp) · b · kv_dim · e / min(t, n_kv) = 2 · 4096 · 1024 · 2 / 8
    # = 2,097,152 bytes, in cp − 1 = 1 step forward and, with their gradients, 1 step of
    # twice that backward: t = (α + M/β) + (α + 2M/β) per layer, × 80 layers.
    fleet = _fleet(2)
    res = DistributedModel().solve(
        L70, fleet, batch_size=1, seq_len=8192, tp_size=8, cp_size=2, recompute="selective"
    )
    P = build_problem(L70, fleet, 1, "bf16", None, 8192, None, None)
    M = 2 * 4096 * 1024 * 2 / 8
    assert M == 2_097_152
    per_layer = (P.inter_lat + M / P.inter_bw) + (P.inter_lat + 2 * M / P.inter_bw)
    assert res.si("cp_communication_total") == pytest.approx(80 * per_layer, rel=1e-12)
    # overlapped with the block's attention: exposed never exceeds the total
    assert 0.0 <= res.si("cp_communication_time") <= res.si("cp_communication_total")
    assert any("context-parallel ring of 2 spans 2 nodes" in n for n in res.notes)


def test_long_context_ring_hides_behind_attention():
    # 131,072 tokens over cp 8: a block of 16,384 queries against 16,384 keys costs
    # 4 · 16384 · 8192 · 16384 / 8 ≈ 1.1e12 FLOP (≈ 1.5 ms at 0.75 × 989 TFLOP/s, halved
    # by causal skipping: ≈ 0.7 ms) while its 8.4 MB K, V block crosses 400 Gb/s in
    # ≈ 0.2 ms: nothing is exposed. Every activation of a rank scales with its s/cp
    # tokens, so they are 1/8 of the same micro-batch on one node without cp.
    kw = dict(batch_size=1, seq_len=131072, tp_size=8, recompute="full", zero_stage=1)
    res = DistributedModel().solve(L70, _fleet(8), cp_size=8, **kw)
    assert res.si("cp_communication_total") > 0.0
    assert res.si("cp_communication_time") == 0.0
    assert res.parallelism["cp"] == 8
    flat = DistributedModel().solve(L70, _fleet(1), **kw)
    assert res.memory_per_accelerator.si("activations") == pytest.approx(
        flat.memory_per_accelerator.si("activations") / 8, rel=1e-12
    )


def test_layout_object_and_search_carry_cp():
    lay = TrainingLayout(tp=8, cp=2, recompute="selective")
    kw = dict(batch_size=2, seq_len=8192)
    a = DistributedModel().solve(L70, _fleet(4), layout=lay, **kw)
    b = DistributedModel().solve(L70, _fleet(4), tp_size=8, cp_size=2, recompute="selective", **kw)
    assert a.si("step_time") == b.si("step_time")
    assert a.layout.dp == 2  # 32 GPUs / (tp 8 · cp 2)
    res = ParallelismSearch().solve(
        L70, _fleet(4), batch_size=8, seq_len=8192, tp_sizes=(8,), pp_sizes=(1, 2),
        cp_sizes=(1, 2, 4), zero_stages=(1,), recompute=("selective",),
    )  # fmt: skip
    assert set(res.table["cp"]) == {1, 2, 4}
    priced = ("", "does not fit in memory")
    rows = [r for r in res.to_records() if r["cp"] == 2 and r["pp"] == 1 and r["reason"] in priced]
    assert rows
    r = rows[0]
    solved = DistributedModel().solve(
        L70, _fleet(4), batch_size=8, seq_len=8192, tp_size=8, cp_size=2, zero_stage=1,
        recompute="selective", sequence_parallel=r["sequence_parallel"],
        microbatch_count=r["microbatch_count"],
    )  # fmt: skip
    assert r["step_time"] == pytest.approx(solved.si("step_time"), rel=1e-9)
