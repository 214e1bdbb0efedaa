"""Parallel attention/MLP blocks and dropout-free training in DistributedModel.

* A parallel block (GPT-J, GPT-NeoX ``gpt_j_residual``, PaLM) sums the attention and MLP
  outputs before one tensor-parallel reduction: per layer and micro-batch, forward 1
  all-reduce instead of 2, backward still 2 (both blocks' input gradients), and the
  forward's again under full recomputation: 4 instead of 6 (GPT-NeoX's own count). With
  sharded activations (PaLM, MaxText under XLA) the backward reduces the summed input
  gradient once too.
* ``dropout=False`` (p = 0, GPT-NeoX-20B's ``configs/20B.yml``) drops the two one-byte
  masks at the block boundaries (``2·h`` bytes per token per pass), the fused attention
  kernel's own dropout cost (measured on an A100: Dao et al. 2022, App. E.6) and, with
  materialised scores, the dropout pass over them.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlsys import Fabrics, Fleet, Nodes
from mlsys.core.formulas.gemm import attention_time
from mlsys.core.formulas.parallel import tp_forward_reductions_per_layer, tp_reductions_per_layer
from mlsys.core.solvers._layout import build_problem
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.types import TransformerWorkload

A100 = Fleet(node=Nodes.DGX_A100, count=1, fabric=Fabrics.IB_HDR)


def _model(parallel: bool) -> TransformerWorkload:
    return TransformerWorkload(
        name="neox-like", layers=44, hidden=6144, heads=64, vocab=50432, seq_len=2048,
        tied_embeddings=False, parallel_block=parallel,
    )  # fmt: skip


def test_reduction_counts():
    # sequential: 2 + 2 (+ 2 rerun); parallel, no SP: 1 + 2 (+ 1 rerun)
    assert tp_reductions_per_layer(0.0) == 4.0
    assert tp_reductions_per_layer(1.0) == 6.0
    assert tp_reductions_per_layer(0.0, parallel_block=True) == 3.0
    assert tp_reductions_per_layer(1.0, parallel_block=True) == 4.0
    # under SP (all-gather + reduce-scatter = 1 all-reduce's bytes) the two branches share
    # one gathered input (PaLM Sec. 2: fused input projections) and the summed input
    # gradient is reduce-scattered once (XLA's reduce-scatter reassociation): forward
    # 1 AG + 1 RS, backward 1 AG + 1 RS, a full rerun the forward's again
    assert tp_reductions_per_layer(1.0, 1.0, parallel_block=True) == 3.0
    # JAX's residual-only rerun reruns the input all-gathers: two of a sequential layer's
    # (1 all-reduce equivalent), the parallel block's one shared gather (0.5)
    assert tp_reductions_per_layer(1.0, 1.0, rerun_residuals=True) == 5.0
    assert tp_reductions_per_layer(1.0, 1.0, rerun_residuals=True, parallel_block=True) == 2.5
    assert tp_reductions_per_layer(1.0, 0.0, rerun_residuals=True, parallel_block=True) == 3.0
    # no recomputation: sequential 4 either way; parallel 3 without SP (GPT-NeoX: both
    # column-parallel input gradients all-reduced), 2 with it
    assert tp_reductions_per_layer(0.0, 1.0) == 4.0
    assert tp_reductions_per_layer(0.0, 1.0, parallel_block=True) == 2.0


@given(
    full=st.floats(0.0, 1.0),
    sp=st.sampled_from([0.0, 1.0]),
    residuals=st.booleans(),
)
def test_reduction_count_properties(full, sp, residuals):
    seq = tp_reductions_per_layer(full, sp, residuals)
    par = tp_reductions_per_layer(full, sp, residuals, parallel_block=True)
    # a parallel block never issues more than a sequential one, and saves at least the
    # one forward reduction; under sharded activations it issues half of everything
    assert par <= seq - 1.0 + 1e-12
    if sp == 1.0:
        assert par == pytest.approx(seq / 2.0)
    # rerunning only the residuals never costs more than rerunning the whole forward
    assert tp_reductions_per_layer(full, sp, True, parallel_block=True) <= (
        tp_reductions_per_layer(full, sp, False, parallel_block=True) + 1e-12
    )
    # the forward's count alone: 2 sequential, 1 parallel, with or without sharding
    assert tp_forward_reductions_per_layer(sp) == 2.0
    assert tp_forward_reductions_per_layer(sp, parallel_block=True) == 1.0


def test_parallel_block_scales_the_tp_time_by_the_count():
    kw = dict(batch_size=16, tp_size=2, microbatch_count=2, zero_stage=1, recompute="full")
    seq = DistributedModel().solve(_model(False), A100, **kw)
    par = DistributedModel().solve(_model(True), A100, **kw)
    assert par.si("tp_communication_time") == pytest.approx(
        seq.si("tp_communication_time") * 4.0 / 6.0, rel=1e-9
    )
    assert par.si("compute_time") == seq.si("compute_time")  # same GEMMs and kernels


def test_dropout_free_training_drops_the_masks():
    kw = dict(batch_size=16, microbatch_count=2, zero_stage=1, recompute="full")
    on = DistributedModel().solve(_model(False), A100, **kw)
    off = DistributedModel().solve(_model(False), A100, dropout=False, **kw)
    P = build_problem(_model(False), A100, 16)
    # fused attention: only the two one-byte masks per token at the block boundaries,
    # in the forward, its rerun and the backward (4 passes), 44 layers, 2 micro-batches
    T = 2048 * 1  # tokens of one micro-batch on a device (dp = 8, 16 / 8 / 2 = 1)
    masks = 2.0 * 6144 * T * 4.0 * 44 * 2
    # and the fused kernel's own dropout: FlashAttention's measured extra time on an A100
    # at 2048 tokens (Dao et al. 2022, App. E.6: forward 2.40 -> 2.81 ms, backward 5.45 ->
    # 6.50 ms), on the forward, its rerun and the backward of every layer and micro-batch
    shape = (1, 2048, 2048, 64, 64, 96, P.peak_attn, P.hbm_bw * P.eta_m, 2.0)
    fwd = attention_time(*shape, forward_fraction=0.70)
    bwd = attention_time(*shape, backward=True, backward_fraction=0.60)
    kernel = 44 * 2 * (2 * fwd * (2.81 / 2.40 - 1) + bwd * (6.50 / 5.45 - 1))
    assert on.si("compute_time") - off.si("compute_time") == pytest.approx(
        masks / (P.hbm_bw * P.eta_m) + kernel, rel=2e-3
    )
    # materialised scores: the dropout pass over them goes too, far more than the masks
    on_u = DistributedModel().solve(_model(False), A100, flash_attention=False, **kw)
    off_u = DistributedModel().solve(
        _model(False), A100, flash_attention=False, dropout=False, **kw
    )
    # (9.5x: the fused kernel's dropout cost is a share of its causal-rate time)
    assert on_u.si("compute_time") - off_u.si("compute_time") > 8 * (
        on.si("compute_time") - off.si("compute_time")
    )
