"""The tied word-embedding gradient all-reduce between the first and last pipeline stage
(Megatron-LM ``train_step``, "backward-embedding-all-reduce"; Megatron-Core
``finalize_model_grads``), priced by the training layout model."""

from __future__ import annotations

from typing import Any

import pytest

from mlsys.core.catalog import Fabrics, Nodes
from mlsys.core.solvers.distributed import DistributedModel, build_problem
from mlsys.core.types import Fleet, TransformerWorkload


def _gpt(tied: bool) -> TransformerWorkload:
    # GPT-3 2.7B's shape (Brown et al. 2020, Table 2.1) with GPT-2's 50257-token vocabulary
    return TransformerWorkload(
        name="gpt", layers=32, hidden=2560, heads=32, vocab=50257, seq_len=2048,
        tied_embeddings=tied,
    )  # fmt: skip


def _fleet() -> Fleet:
    return Fleet(node=Nodes.DGX_A100, count=2, fabric=Fabrics.IB_HDR)


def _solve(tied: bool, **kw: Any) -> Any:
    return DistributedModel().solve(
        _gpt(tied), _fleet(), batch_size=16, tp_size=8, microbatch_count=8, **kw
    )


def test_two_stages_all_reduce_the_shared_embedding_gradient():
    # pp = 2 over 2 DGX A100: the first and last stage sit on different nodes, so each of
    # the 8 tensor-parallel ranks all-reduces its V·h/8 gradient shard with its peer over
    # the scale-out fabric: a 2-rank ring, t = 2·α + M/β (Patarasuk & Yuan 2009).
    P = build_problem(_gpt(True), _fleet(), 16, "bf16", None, None, None, None)
    shard_bytes = 50257 * 2560 / 8 * P.g_bytes
    expected = 2.0 * P.inter_lat + 2.0 * (2 - 1) / 2 * shard_bytes / P.inter_bw
    # tp 8 x pp 2 fills the 16 GPUs: dp = 1, so no other gradient reduction runs
    tied, untied = _solve(True, pp_size=2), _solve(False, pp_size=2)
    assert tied.si("dp_communication_time") == pytest.approx(expected, rel=1e-9)
    assert tied.si("dp_communication_total") == pytest.approx(expected, rel=1e-9)
    assert untied.si("dp_communication_total") == 0.0


def test_no_pipeline_no_embedding_all_reduce():
    # one stage holds both ends of the model: nothing to synchronise (and with tp 8 on
    # one node dp = 1, so no gradient reduction at all)
    one_node = Fleet(node=Nodes.DGX_A100, count=1, fabric=Fabrics.IB_HDR)
    res = DistributedModel().solve(
        _gpt(True), one_node, batch_size=16, tp_size=8, microbatch_count=16
    )
    assert res.si("dp_communication_total") == 0.0
