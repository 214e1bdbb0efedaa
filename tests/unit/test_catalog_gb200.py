"""The GB200 NVL72: its GPU's figures from the rack's datasheet, and one NVLink domain of
72 GPUs. Every number is derived here from the cited rack figures."""

from __future__ import annotations

import pytest

from mlsys.core.catalog import Fabrics, Hardware, Models, Nodes
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.types import Fleet


def test_gpu_figures_are_the_racks_over_72_and_dense() -> None:
    gb200 = Hardware["GB200"]
    # 360 PFLOPS sparse BF16 a rack: / 72 GPUs / 2 (dense) = 2.5 PFLOP/s
    assert gb200.peak_flops_s("bf16") == pytest.approx(360e15 / 72 / 2)
    assert gb200.peak_flops_s("fp8") == pytest.approx(720e15 / 72 / 2)
    # the capacity the driver exposes: 189,471 MiB (185.0 GiB), not the 186 GB marketed
    assert gb200.memory_bytes == 189471 * 2**20
    assert gb200.memory_bytes / 2**30 == pytest.approx(185.0, abs=0.05)
    # its measured matmul ceiling: 1,822 of 2,500 TFLOP/s BF16
    assert gb200.matmul_ceiling == pytest.approx(1822 / 2500, abs=5e-4)


def test_expert_parallelism_across_the_rack_stays_on_nvlink() -> None:
    """EP 16 inside one NVL72 rack exchanges over NVLink (900 GB/s a direction); on two
    DGX B200 the same all-to-all sends half of each buffer over 50 GB/s NICs."""
    model = Models["Qwen3_30B_A3B"]
    kw = dict(precision="bf16", ep_size=16, microbatch_count=1, zero_stage=1, dropout=False)
    racks = DistributedModel().solve(
        model, Fleet(node=Nodes["GB200_NVL72"], count=2, fabric=Fabrics["IB_NDR"]),
        batch_size=144, **kw,
    )  # fmt: skip
    dgx = DistributedModel().solve(
        model, Fleet(node=Nodes["DGX_B200"], count=2, fabric=Fabrics["IB_NDR"]),
        batch_size=16, **kw,
    )  # fmt: skip
    assert racks.parallelism["ep"] == 16 and racks.parallelism["dp"] == 9
    # one micro-batch of one 4,096-token sequence per rank in both: same all-to-alls
    # half of 134 MB over 45 GB/s against 15/16 of it over 720 GB/s: about 8x
    ratio = dgx.si("ep_communication_time") / racks.si("ep_communication_time")
    assert ratio > 6.0
