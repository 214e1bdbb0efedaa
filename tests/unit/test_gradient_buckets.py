"""Megatron-Core's gradient buckets: a data-parallel reduction split into collectives.

``DistributedDataParallelConfig.bucket_size`` defaults to ``max(40000000, 1000000 *
dp_size)`` parameters when ``overlap_grad_reduce`` is on (NVIDIA/Megatron-LM,
``megatron/core/distributed/distributed_data_parallel.py``); each bucket is one NCCL
collective, paying the ring's latency once.
"""

from __future__ import annotations

import numpy as np
import pytest

from mlsys.core.catalog import Fabrics, Models, Nodes
from mlsys.core.formulas.collectives import NCCL_RING_BASE_LATENCY_S, NCCL_RING_STEP_LATENCY_S
from mlsys.core.formulas.parallel import gradient_bucket_count
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.types import Fleet


def test_bucket_count_follows_megatron_cores_default():
    # the 40M floor up to 40 ranks, 1M parameters a rank beyond
    assert gradient_bucket_count(1.95e9, 16) == 49.0  # 1.95e9 / 40e6 = 48.75
    assert gradient_bucket_count(1.95e9, 96) == 21.0  # 1.95e9 / 96e6 = 20.3
    assert gradient_bucket_count(1.95e9, 288) == 7.0  # 1.95e9 / 288e6 = 6.8
    assert gradient_bucket_count(1e6, 8) == 1.0  # never fewer than one
    got = gradient_bucket_count(np.array([1.95e9, 1.95e9]), np.array([16.0, 96.0]))
    np.testing.assert_array_equal(got, [49.0, 21.0])


def test_each_bucket_pays_nccls_latency_once():
    # Llama 3 8B on 16 H100 (two DGX H100, 8 ranks a node), ZeRO-1, one micro-batch:
    # 8.03e9 parameters -> 201 buckets of 40M. Each reduce-scatter and all-gather is a ring
    # of 15 steps over the 16 ranks; NCCL's cost model charges the k - 1 = 1 step that
    # crosses nodes at the network's latency and the other 14 at NVLink's, plus the base.
    # Without overlap Megatron reduces the whole buffer at once: one of each.
    fleet = Fleet(node=Nodes.DGX_H100, count=2, fabric=Fabrics.IB_NDR)
    kw = dict(batch_size=16, seq_len=4096, zero_stage=1, microbatch_count=1)
    on = DistributedModel().solve(Models.Llama3_8B, fleet, **kw)
    off = DistributedModel().solve(Models.Llama3_8B, fleet, overlap=False, **kw)
    buckets = gradient_bucket_count(Models.Llama3_8B.total_params, 16)
    step = NCCL_RING_STEP_LATENCY_S
    one = 14 * step["nvlink"]["Simple"] + step["net"]["Simple"]
    one += NCCL_RING_BASE_LATENCY_S["Simple"]
    extra = on.si("dp_communication_total") - off.si("dp_communication_total")
    assert extra == pytest.approx((buckets - 1) * 2 * one, rel=1e-6)
