"""Attention dropout inside a fused kernel: FlashAttention's measured cost on an A100.

Dao et al. (2022), "FlashAttention", App. E.6, Tables 15-20 (A100 40GB, fp16, batch 16,
8 heads of 64, dropout 0.1): at 8k tokens the forward takes 33.54 ms without dropout and
41.63 ms with it, the backward 84.75 and 104.27 ms.
"""

from __future__ import annotations

import pytest

from mlsys import Fabrics, Fleet, Nodes
from mlsys.core.formulas.gemm import (
    FLASH_ATTENTION_1_DROPOUT_EXTRA_TIME,
    flash_attention_dropout_factors,
)
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.solvers.efficiency import fused_attention_dropout_factors
from mlsys.core.types import TransformerWorkload


def test_table_is_the_papers_times():
    forward, backward = FLASH_ATTENTION_1_DROPOUT_EXTRA_TIME[8192]
    assert forward == pytest.approx(41.63 / 33.54 - 1, abs=5e-4)
    assert backward == pytest.approx(104.27 / 84.75 - 1, abs=5e-4)
    forward, backward = FLASH_ATTENTION_1_DROPOUT_EXTRA_TIME[2048]
    assert forward == pytest.approx(2.81 / 2.40 - 1, abs=5e-4)
    assert backward == pytest.approx(6.50 / 5.45 - 1, abs=5e-4)


def test_interpolated_in_log_length_and_held_at_the_ends():
    f_4k, b_4k = flash_attention_dropout_factors(4096)
    f_8k, b_8k = flash_attention_dropout_factors(8192)
    mid_f, mid_b = flash_attention_dropout_factors(4096 * 2**0.5)
    assert mid_f == pytest.approx((f_4k + f_8k) / 2)
    assert mid_b == pytest.approx((b_4k + b_8k) / 2)
    assert flash_attention_dropout_factors(128) == flash_attention_dropout_factors(512)
    assert flash_attention_dropout_factors(2**20) == flash_attention_dropout_factors(65536)


def test_charged_on_ampere_gpus_only():
    assert fused_attention_dropout_factors("A100_80GB", 8192) == flash_attention_dropout_factors(
        8192
    )
    for name in ("H100", "H200", "B200", "TPU_V5P"):
        assert fused_attention_dropout_factors(name, 8192) == (1.0, 1.0)


def test_the_step_grows_by_the_kernels_dropout_cost_only_where_it_runs():
    model = TransformerWorkload(name="t", layers=8, hidden=2048, heads=16, vocab=50304,
                                seq_len=8192)  # fmt: skip
    kw = dict(batch_size=8, zero_stage=1)
    a100 = Fleet(node=Nodes.DGX_A100, count=1, fabric=Fabrics.IB_HDR)
    h100 = Fleet(node=Nodes.DGX_H100, count=1, fabric=Fabrics.IB_NDR)
    on = DistributedModel().solve(model, a100, **kw).si("compute_time")
    off = DistributedModel().solve(model, a100, dropout=False, **kw).si("compute_time")
    # masks alone: 2 one-byte masks per token at the boundaries, 3 passes, 8 layers
    masks_s = 2 * 2048 * 8192 * 3 * 8 / (2.039e12 * 0.85)
    assert on - off > 5 * masks_s  # the kernel's own dropout dominates at 8k tokens
    on_h = DistributedModel().solve(model, h100, **kw).si("compute_time")
    off_h = DistributedModel().solve(model, h100, dropout=False, **kw).si("compute_time")
    assert on_h - off_h == pytest.approx(2 * 2048 * 8192 * 3 * 8 / (3.35e12 * 0.85), rel=1e-6)
