"""The export-variant servers: HGX H800 and HGX A800, and their cut NVLink.

* The H800 keeps the H100's GH100 die but 8 of its 18 NVLink 4 links: 400 GB/s both
  directions (NVIDIA H800 datasheet; Zhao et al. 2025, ISCA, Sec. 2), 200 GB/s per
  direction where the H100 has 450. The A800 keeps 8 of the A100's 12 NVLink 3 links:
  400 GB/s (NVIDIA A800 datasheet), 200 GB/s per direction where the A100 has 300.
* The links are the same generation as the full parts', so the per-link measurements of
  that generation (NCCL's LL ring step, the engines' custom all-reduce) apply to them
  (``Fabric.generation``).
"""

from __future__ import annotations

import pytest

from mlsys import Fabrics, Fleet, Hardware, Nodes
from mlsys.core.formulas.collectives import NCCL_NVLINK_LL_STEP_LATENCY_MEASURED_S
from mlsys.core.formulas.peer_allreduce import PEER_ALLREDUCE_LATENCY_MEASURED_S
from mlsys.core.solvers._layout import build_problem
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.solvers.serving import _peer_allreduce_latency
from mlsys.core.types import TransformerWorkload


@pytest.mark.parametrize(
    ("node", "gpu", "full_fabric", "generation"),
    [
        (Nodes.HGX_H800, Hardware.H800, Fabrics.NVLINK4, "NVLINK4"),
        (Nodes.HGX_A800, Hardware.A800_80GB, Fabrics.NVLINK3, "NVLINK3"),
    ],
)
def test_export_nodes_have_eight_gpus_on_a_cut_nvlink(node, gpu, full_fabric, generation):
    assert node.accelerator == gpu
    assert node.accelerators_per_node == 8
    fabric = node.intra_fabric
    # 400 GB/s both directions: 200 per direction, the accelerator's own figure
    assert fabric.bandwidth_Bps == pytest.approx(200e9)
    assert fabric.bandwidth_Bps == pytest.approx(gpu.scaleup_bandwidth_Bps)
    assert fabric.bandwidth_Bps < full_fabric.bandwidth_Bps
    assert fabric.link_generation == generation == full_fabric.link_generation
    assert full_fabric.generation is None  # a full fabric is its own generation
    assert not fabric.in_network_reduction  # no source that NCCL runs NVLS on them


def test_the_generations_measurements_apply_to_the_cut_links():
    fleet = Fleet(node=Nodes.HGX_H800, count=1, fabric=Fabrics.IB_NDR)
    model = TransformerWorkload(name="t", layers=2, hidden=4096, heads=32, vocab=32000,
                                seq_len=2048)  # fmt: skip
    P = build_problem(model, fleet, 8)
    assert P.scaleup_ll_step_s == NCCL_NVLINK_LL_STEP_LATENCY_MEASURED_S["NVLINK4"]
    a800 = Fabrics.NVLINK3_A800
    assert (
        _peer_allreduce_latency(a800, Hardware.A800_80GB)
        == (PEER_ALLREDUCE_LATENCY_MEASURED_S["NVLINK3"])
    )


def test_tensor_parallel_traffic_is_slower_on_the_h800_by_the_bandwidth_ratio():
    # the same layout on DGX H100 and HGX H800: only the NVLink bandwidth differs, so the
    # bandwidth term of the tensor-parallel collectives grows by 450 / 200 = 2.25; NCCL's
    # fixed latencies do not, and at 537 MB per collective (8 sequences x 4096 tokens x
    # 8192 x 2 bytes) they are under 2% of it
    model = TransformerWorkload(name="t", layers=4, hidden=8192, heads=64, vocab=32000,
                                seq_len=4096)  # fmt: skip
    kw = dict(batch_size=8, tp_size=8, microbatch_count=1, sequence_parallel=True)
    h100 = DistributedModel().solve(model, Fleet(node=Nodes.DGX_H100, count=1), **kw)
    h800 = DistributedModel().solve(model, Fleet(node=Nodes.HGX_H800, count=1), **kw)
    ratio = h800.si("tp_communication_time") / h100.si("tp_communication_time")
    assert 2.25 / 1.02 < ratio <= 2.25 + 1e-9
    assert h800.si("compute_time") == pytest.approx(h100.si("compute_time"), rel=1e-12)
