"""FSDP's edge collectives: a micro-batch's first all-gathers and last reduce-scatters.

PyTorch FSDP gives each wrapped transformer block one flat parameter (one all-gather,
one reduce-scatter) and leaves the embeddings and output layer to the root unit. The
forward starts with the root's and block 0's all-gathers, with no compute before them
("The 1st all-gather will not be able to overlap with anything", PyTorch FSDP notes,
"FSDP Prefetch Nuances"); the backward ends with block 0's and the root's
reduce-scatters, with no compute after them (``_post_backward_final_callback`` waits for
them before the optimizer). Everything between hides behind compute.
"""

from __future__ import annotations

import numpy as np
import pytest

from mlsys import Fabrics, Fleet, Nodes
from mlsys.core.formulas.overlap import (
    OVERLAPPED_COMPUTE_SLOWDOWN,
    fsdp_edge_exposed_time,
    fsdp_edge_fraction,
)
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.types import TransformerWorkload

# MPT-13B's shape (llm-foundry scripts/train/yamls/pretrain/mpt-13b.yaml): tied embedding
MODEL = TransformerWorkload(
    name="gpt-13b", layers=40, hidden=5120, heads=40, vocab=50368, seq_len=2048
)
TWO_NODES = Fleet(node=Nodes.DGX_A100, count=2, fabric=Fabrics.IB_HDR)


def test_edge_fraction_is_the_root_plus_one_block():
    n, outer, layers = 12.85e9, 50368 * 5120, 40
    # 0.258e9 of embedding + (12.85e9 - 0.258e9)/40 = 0.315e9 of block 0: 4.46%
    want = (outer + (n - outer) / layers) / n
    assert want == pytest.approx((0.2579e9 + 0.3148e9) / 12.85e9, rel=1e-3)
    assert fsdp_edge_fraction(n, outer, layers) == pytest.approx(want, rel=1e-12)
    # a rank of one of 4 pipeline stages holds a quarter of the model on average: the
    # same edge bytes are 4x its share (capped at the whole shard)
    assert fsdp_edge_fraction(n, outer, layers, 4) == pytest.approx(4 * want, rel=1e-9)
    assert fsdp_edge_fraction(n, outer, 1.0, 64) == 1.0


def test_edge_exposed_time_hides_only_the_middle():
    # 3 s of collectives, 0.06 s at the edges: beside 10 s of compute only the edges show
    assert fsdp_edge_exposed_time(3.0, 0.06, 10.0) == pytest.approx(0.06)
    # beside 2.5 s: the edges plus what the middle (2.94 s) overruns the window by
    assert fsdp_edge_exposed_time(3.0, 0.06, 2.5) == pytest.approx(0.06 + 0.44)
    # no edges: the plain max(comm - window, 0)
    assert fsdp_edge_exposed_time(3.0, 0.0, 2.5) == pytest.approx(0.5)
    got = fsdp_edge_exposed_time(np.array([3.0, 3.0]), 0.06, np.array([10.0, 2.5]))
    np.testing.assert_allclose(got, [0.06, 0.5])


def test_solver_exposes_the_edges_of_pytorch_fsdp_only():
    # bf16 gradient reduction (as Composer's DEFAULT/PURE mixed precision of 2023)
    kw = dict(batch_size=48, microbatch_count=3, zero_stage=3, grad_dtype="bf16")
    megatron = DistributedModel().solve(MODEL, TWO_NODES, **kw)
    fsdp = DistributedModel().solve(MODEL, TWO_NODES, fsdp_flat_params=True, **kw)
    total = fsdp.si("dp_communication_total")
    # Megatron reduces bucket by bucket (gradient_bucket_count), each collective paying
    # NCCL's latency again; PyTorch FSDP's one collective per unit is priced unbucketed
    assert megatron.si("dp_communication_total") > total
    # ZeRO-3, three micro-batches: per micro-batch a forward all-gather, a backward
    # all-gather and a reduce-scatter of the same bf16 bytes (equal times), so the
    # forward's first all-gather and the backward's last reduce-scatter are the edge
    # share of two thirds of the traffic
    n = MODEL.total_params
    share = (50368 * 5120 + (n - 50368 * 5120) / 40) / n
    edge = share * total * 2.0 / 3.0
    slow = OVERLAPPED_COMPUTE_SLOWDOWN
    # Megatron's buffers (no edge charged): all hidden, paying only the slowdown
    m_total = megatron.si("dp_communication_total")
    assert megatron.si("dp_communication_time") == pytest.approx(slow * m_total, rel=1e-9)
    want = edge + slow * (total - edge)
    assert fsdp.si("dp_communication_time") == pytest.approx(want, rel=1e-9)
    assert fsdp.overlap_fraction == pytest.approx(1.0 - edge / total, rel=1e-9)


def test_zero2_charges_the_steps_first_gather_once():
    # ZeRO-2 (fairscale's --no-reshard-after-forward): the parameters are gathered once
    # a step, the gradients reduce-scattered each micro-batch; edges: the first gather
    # once, the last reduce-scatter of each of the m micro-batches
    kw = dict(batch_size=48, microbatch_count=3, zero_stage=2, grad_dtype="bf16")
    a = DistributedModel().solve(MODEL, TWO_NODES, **kw)
    b = DistributedModel().solve(MODEL, TWO_NODES, fsdp_flat_params=True, **kw)
    n = MODEL.total_params
    share = (50368 * 5120 + (n - 50368 * 5120) / 40) / n
    # with both windows wider than their traffic, the difference is the edges less the
    # slowdown they no longer cause
    total, a_total = b.si("dp_communication_total"), a.si("dp_communication_total")
    assert a.overlap_fraction == pytest.approx(1.0)
    extra = b.si("dp_communication_time") - a.si("dp_communication_time")
    # the gather once and the 3 reduce-scatters (bf16, equal times): the edge share of all,
    # less the slowdown Megatron's bucketed (so longer) collectives cause beside compute
    slow = OVERLAPPED_COMPUTE_SLOWDOWN
    want = share * total * (1 - slow) + slow * (total - a_total)
    assert extra == pytest.approx(want, rel=1e-6)
