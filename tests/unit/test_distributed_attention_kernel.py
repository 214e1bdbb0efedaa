"""DistributedModel's ``attention_kernel``: which fused attention kernel prices attention.

FlashAttention-2 on an H100 reaches 370 and 318 of the 989 TFLOP/s dense BF16 peak
forward and backward, where cuDNN's fused kernel (what Transformer Engine calls) reaches
600 and 518 (Shah et al. 2024, "FlashAttention-3", arXiv:2407.08608, Fig. 5-6). On an
A100 the best fused kernel *is* FlashAttention-2 (Dao 2023), so the option changes nothing.
"""

from __future__ import annotations

import pytest

from mlsys import Fabrics, Fleet, Nodes
from mlsys.core.errors import ParameterError
from mlsys.core.solvers._layout import build_problem
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.types import TransformerWorkload

MODEL = TransformerWorkload(
    name="gpt-1.3b", layers=24, hidden=2048, heads=16, vocab=50368, seq_len=2048
)
H100 = Fleet(node=Nodes.DGX_H100, count=1, fabric=Fabrics.IB_NDR)
A100 = Fleet(node=Nodes.DGX_A100, count=1, fabric=Fabrics.IB_HDR)


def test_flash2_fractions_are_the_measured_h100_figures():
    P = build_problem(MODEL, H100, 8, attention_kernel="flash2")
    assert P.attention_fractions == pytest.approx((370 / 989, 318 / 989), abs=1e-3)
    best = build_problem(MODEL, H100, 8)
    assert best.attention_fractions == pytest.approx((600 / 989, 518 / 989), abs=5e-3)


def test_flash2_is_the_best_kernel_on_ampere():
    a = DistributedModel().solve(MODEL, A100, batch_size=8, zero_stage=3)
    b = DistributedModel().solve(MODEL, A100, batch_size=8, zero_stage=3, attention_kernel="flash2")
    assert b.si("step_time") == a.si("step_time")


def test_flash2_slows_only_the_attention_on_h100():
    kw = dict(batch_size=8, zero_stage=3, seq_len=2048)
    a = DistributedModel().solve(MODEL, H100, **kw)
    b = DistributedModel().solve(MODEL, H100, attention_kernel="flash2", **kw)
    # attention's FLOPs run at 0.61/0.374 (forward) and 0.52/0.322 (backward) of the time
    # they would: the step grows, by less than attention's whole share would allow
    grow = b.si("step_time") / a.si("step_time") - 1
    assert 0.01 < grow < (0.61 / 0.374 - 1)
    assert b.si("dp_communication_total") == a.si("dp_communication_total")


def test_unknown_kernel_is_named():
    with pytest.raises(ParameterError, match="attention_kernel"):
        DistributedModel().solve(MODEL, H100, batch_size=8, attention_kernel="cudnn9")


def test_flash1_runs_at_half_flash2_on_every_device():
    # FlashAttention-2 is "around 2x" FlashAttention (Dao 2023, abstract): the older
    # generation at 0.70/2 and 0.60/2 of A100 peak (inside FlashAttention's own 25-40%),
    # 370/2 and 318/2 of 989 TFLOP/s on H100
    from mlsys.core.solvers.efficiency import attention_kernel_fractions

    assert attention_kernel_fractions("A100_80GB", "flash1") == pytest.approx((0.35, 0.30))
    assert 0.25 <= (0.35 + 0.30) / 2 <= 0.40
    assert attention_kernel_fractions("H100", "flash1") == pytest.approx((0.187, 0.161))
    P = build_problem(MODEL, H100, 8, attention_kernel="flash1")
    assert P.attention_fractions == pytest.approx((370 / 989 / 2, 318 / 989 / 2), abs=1e-3)
    with pytest.raises(ParameterError, match="attention_kernel"):
        attention_kernel_fractions("H100", "flash3")


def test_flash1_adds_exactly_the_difference_of_the_two_kernels_times():
    # Only the fused kernel's time changes between the generations: FlashAttention-1's
    # fractions (half FlashAttention-2's) describe causal runs as measured and are taken as
    # given; FlashAttention-2's are an unmasked kernel's and take the causal rate (without
    # dropout, whose cost in the kernel scales both generations alike)
    kw = dict(batch_size=8, zero_stage=0, seq_len=2048, overlap=False, dropout=False)
    a = DistributedModel().solve(MODEL, A100, **kw)  # the best kernel on A100 is flash2
    one = DistributedModel().solve(MODEL, A100, attention_kernel="flash1", **kw)
    assert one.si("step_time") > a.si("step_time")
    assert one.si("dp_communication_total") == a.si("dp_communication_total")
    from mlsys.core.formulas.gemm import attention_time

    # 24 layers; forward and backward of the fused kernel on one sequence per GPU (batch 8
    # over 8 data-parallel ranks) at each generation's fractions and the device's peak
    shape = (1, 2048, 2048, 16, 16, 128, 312e12, 2.039e12 * 0.85, 2.0)

    def per_layer(fwd: float, bwd: float, unmasked: bool) -> float:
        return attention_time(*shape, forward_fraction=fwd, unmasked_fractions=unmasked) + (
            attention_time(*shape, backward=True, backward_fraction=bwd,
                           unmasked_fractions=unmasked)
        )  # fmt: skip

    flash2 = per_layer(0.70, 0.60, True)
    flash1 = per_layer(0.35, 0.30, False)
    # at 2k tokens the causal rate is (16 + 5.1) / (17 + 10.2): flash1 / flash2 = 2 × 0.776
    assert flash1 / flash2 == pytest.approx(2 * 21.1 / 27.2)
    assert one.si("compute_time") - a.si("compute_time") == pytest.approx(
        24 * (flash1 - flash2), rel=1e-9
    )


def test_the_layout_accepts_exactly_the_priced_kernel_generations():
    # one list: TrainingLayout's allowed values are the generations efficiency prices
    import typing

    from mlsys.core.layout import TrainingLayout
    from mlsys.core.solvers.efficiency import ATTENTION_KERNELS

    allowed = typing.get_args(TrainingLayout.model_fields["attention_kernel"].annotation)
    assert set(allowed) == set(ATTENTION_KERNELS)
    for kernel in ATTENTION_KERNELS:
        assert TrainingLayout(attention_kernel=kernel).attention_kernel == kernel
