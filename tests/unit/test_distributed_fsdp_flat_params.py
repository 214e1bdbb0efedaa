"""DistributedModel's ``fsdp_flat_params``: PyTorch/fairscale FSDP's flat-gradient passes.

FSDP hands a module views of one flat parameter, so autograd concatenates the views'
gradients into the flat gradient (read and write every element) and the reduce-scatter
hook divides it in place by the pre-divide factor (read and write again): 4 bytes per
bf16 parameter the device holds unsharded, every micro-batch
(``fsdp_flat_gradient_bytes``; PyTorch ``flat_param.py`` and ``default_hooks.py``).
"""

from __future__ import annotations

import pytest

from mlsys import Fabrics, Fleet, Nodes
from mlsys.core.formulas.layer_time import fsdp_flat_gradient_bytes
from mlsys.core.solvers._layout import build_problem
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.types import TransformerWorkload

MODEL = TransformerWorkload(
    name="gpt-13b", layers=40, hidden=5120, heads=40, vocab=50368, seq_len=2048
)
A100 = Fleet(node=Nodes.DGX_A100, count=1, fabric=Fabrics.IB_HDR)


def test_four_bytes_per_bf16_parameter():
    # concatenation (2 + 2 bytes) and in-place pre-divide (2 + 2 bytes) per element
    assert fsdp_flat_gradient_bytes(1.0e9, 2.0) == pytest.approx(8.0e9)
    assert fsdp_flat_gradient_bytes(1.0e9, 4.0) == pytest.approx(16.0e9)


def test_solver_adds_the_passes_over_the_unsharded_model_each_micro_batch():
    kw = dict(batch_size=48, microbatch_count=3, zero_stage=3, grad_accumulation_fusion=False)
    a = DistributedModel().solve(MODEL, A100, **kw)
    b = DistributedModel().solve(MODEL, A100, fsdp_flat_params=True, **kw)
    P = build_problem(MODEL, A100, 48)
    # every GPU holds the whole (unsharded) model during its backward: no TP or PP here
    per_mb = fsdp_flat_gradient_bytes(P.params_dense, 2.0) / (P.hbm_bw * P.eta_m)
    assert b.si("compute_time") - a.si("compute_time") == pytest.approx(3 * per_mb, rel=1e-9)
    # about 12.9e9 parameters x 8 bytes = 103 GB at 2.039 TB/s x 0.85 = 60 ms a micro-batch
    assert per_mb == pytest.approx(103e9 / (2.039e12 * 0.85), rel=0.02)


def test_default_is_megatron_buffers():
    kw = dict(batch_size=48, microbatch_count=3, zero_stage=3)
    a = DistributedModel().solve(MODEL, A100, **kw)
    b = DistributedModel().solve(MODEL, A100, fsdp_flat_params=False, **kw)
    assert a.si("step_time") == b.si("step_time")
