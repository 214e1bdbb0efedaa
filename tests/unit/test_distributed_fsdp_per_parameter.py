"""DistributedModel's ``fsdp_per_parameter``: PyTorch FSDP2's copy-out and copy-in.

FSDP2 (``fully_shard``) all-gathers into one flat buffer and copies every parameter out
of it into its own unsharded tensor (read and write 2 bytes per bf16 element, per
all-gather), and copies every micro-batch's gradients into the reduce-scatter buffer in
the reduce dtype (read 2, write 4 for fp32): under ZeRO-3 (resharded after the forward,
two all-gathers) 2 x 4 + 6 = 14 bytes per parameter held unsharded, every micro-batch
(PyTorch ``_fsdp_collectives.py``: ``foreach_all_gather_copy_out``,
``foreach_reduce_scatter_copy_in``).
"""

from __future__ import annotations

import pytest

from mlsys import Fabrics, Fleet, Nodes
from mlsys.core.errors import ParameterError
from mlsys.core.formulas.layer_time import fsdp_per_parameter_copy_bytes
from mlsys.core.layout import TrainingLayout
from mlsys.core.solvers._layout import build_problem
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.types import TransformerWorkload

MODEL = TransformerWorkload(
    name="gpt-13b", layers=40, hidden=5120, heads=40, vocab=50368, seq_len=2048
)
A100 = Fleet(node=Nodes.DGX_A100, count=1, fabric=Fabrics.IB_HDR)


def test_bytes_per_parameter():
    assert fsdp_per_parameter_copy_bytes(1.0e9, 2.0, 2.0, 4.0, 2) == pytest.approx(14.0e9)
    assert fsdp_per_parameter_copy_bytes(1.0e9, 2.0, 2.0, 4.0, 1) == pytest.approx(10.0e9)
    assert fsdp_per_parameter_copy_bytes(1.0e9, 2.0, 2.0, 2.0, 2) == pytest.approx(12.0e9)


@pytest.mark.parametrize(("zero", "bytes_per_param"), [(3, 14.0), (2, 10.0), (1, 0.0)])
def test_solver_adds_the_copies_each_micro_batch(zero, bytes_per_param):
    kw = dict(batch_size=48, microbatch_count=3, zero_stage=zero, grad_dtype="fp32",
              overlap=False)  # fmt: skip
    a = DistributedModel().solve(MODEL, A100, **kw)
    b = DistributedModel().solve(MODEL, A100, fsdp_per_parameter=True, **kw)
    P = build_problem(MODEL, A100, 48, grad_dtype="fp32")
    # every GPU holds the whole (unsharded) model: no TP or PP here; ZeRO-1 has no
    # per-parameter sharding of the parameters or gradients (nothing copied)
    per_mb = P.params_dense * bytes_per_param / (P.hbm_bw * P.eta_m)
    assert b.si("compute_time") - a.si("compute_time") == pytest.approx(3 * per_mb, rel=1e-9)


def test_not_with_flat_params():
    with pytest.raises(ParameterError, match="fsdp_per_parameter"):
        TrainingLayout(fsdp_flat_params=True, fsdp_per_parameter=True)
    with pytest.raises(ParameterError, match="fsdp_per_parameter"):
        DistributedModel().solve(
            MODEL, A100, batch_size=8, zero_stage=3, fsdp_flat_params=True, fsdp_per_parameter=True
        )
