"""``ParallelismSearch`` prices the software stack ``DistributedModel.solve`` does: the
fused attention kernel's generation, JAX's residual-only rerun, FSDP's flat parameters,
dropout and eager element-wise kernels, for every layout it ranks."""

from __future__ import annotations

import pytest

from mlsys import ParameterError
from mlsys.core.catalog import Fabrics, Nodes
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.solvers.search import ParallelismSearch
from mlsys.core.types import Fleet, TransformerWorkload

MODEL = TransformerWorkload(name="t", layers=24, hidden=2048, heads=16, vocab=50368,
                            seq_len=2048)  # fmt: skip
FLEET = Fleet(node=Nodes.DGX_H100, count=2, fabric=Fabrics.IB_NDR)
STACK = dict(attention_kernel="flash1", recompute_rerun="residuals", fsdp_flat_params=True,
             dropout=False, elementwise_kernels="eager")  # fmt: skip
ONE = dict(tp_sizes=(1,), pp_sizes=(1,), zero_stages=(3,), recompute=("full",),
           sequence_parallel=(False,), v_stages=(1,), microbatch_counts=(2,))  # fmt: skip


FSDP2 = dict(fsdp_per_parameter=True, elementwise_kernels="eager_fused_norm",
             attention_kernel="flash2")  # fmt: skip


@pytest.mark.parametrize("stack", [{}, STACK, FSDP2], ids=["default", "eager-fsdp-jax", "fsdp2"])
def test_one_layout_searched_is_the_layout_solved(stack):
    res = ParallelismSearch().solve(MODEL, FLEET, batch_size=32, **ONE, **stack)
    solved = DistributedModel().solve(MODEL, FLEET, batch_size=32, zero_stage=3,
                                      recompute="full", microbatch_count=2, **stack)  # fmt: skip
    assert res.candidates == 1
    assert res.best.si("step_time") == pytest.approx(solved.si("step_time"), rel=1e-12)
    for key, value in stack.items():
        assert getattr(res.best.layout, key) == value


def test_the_stack_changes_the_ranking_inputs():
    # FlashAttention-1's generation doubles the fused kernel's time: every layout slows
    plain = ParallelismSearch().solve(MODEL, FLEET, batch_size=32, **ONE)
    slow = ParallelismSearch().solve(MODEL, FLEET, batch_size=32, attention_kernel="flash1", **ONE)
    assert slow.best.si("step_time") > plain.best.si("step_time")


def test_a_bad_stack_setting_is_named():
    with pytest.raises(ParameterError, match="attention_kernel"):
        ParallelismSearch().solve(MODEL, FLEET, batch_size=32, attention_kernel="flash9", **ONE)
    with pytest.raises(ParameterError, match="recompute_rerun"):
        ParallelismSearch().solve(MODEL, FLEET, batch_size=32, recompute_rerun="most", **ONE)
    with pytest.raises(ParameterError, match="elementwise_kernels"):
        ParallelismSearch().solve(MODEL, FLEET, batch_size=32, elementwise_kernels="jit", **ONE)
