"""Eager element-wise kernels (``elementwise_kernels="eager"``): each operator of the model
code is a kernel that reads its inputs from HBM and writes its output back.

The byte counts are derived here from the operator sequences of a Llama layer as eager
PyTorch runs them (``x.float()``, ``pow(2)``, ``mean``, ``* rsqrt``, ``type_as``,
``* weight`` for RMSNorm; fp32 complex views for the rotation; ``silu(gate) * up``), 16-bit
activations (2 bytes) and fp32 intermediates (4 bytes).
"""

from __future__ import annotations

import pytest

from mlsys import Fabrics, Fleet, Nodes
from mlsys.core.errors import ParameterError
from mlsys.core.formulas.eager import (
    EAGER_RMSNORM_FORWARD,
    EAGER_ROTARY_FORWARD,
    EAGER_SWIGLU_FORWARD,
    eager_elementwise_bytes,
    eager_elementwise_kernels,
    eager_operator_bytes,
)
from mlsys.core.formulas.layer_time import rotary_embedding_bytes
from mlsys.core.layout import TrainingLayout
from mlsys.core.solvers._layout import build_problem
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.types import TransformerWorkload

# Llama 2 13B's shape (Touvron et al. 2023, Table 1 / its config: h 5120, 40 heads, f 13824)
H, HEADS, F = 5120, 40, 13824
LLAMA13 = TransformerWorkload(
    name="llama-13b-like", layers=4, hidden=H, heads=HEADS, kv_heads=HEADS, vocab=32000,
    seq_len=4096, ffn_hidden=F, gated_mlp=True, position_embedding="rope",
)  # fmt: skip
NODE = Fleet(node=Nodes.DGX_A100, count=1, fabric=Fabrics.IB_HDR)


def test_rmsnorm_forward_moves_nine_times_a_fused_norm():
    # cast 2+4, square 4+4, mean 4, scale 4+4, cast back 4+2, times the weight 2+2
    assert eager_operator_bytes(EAGER_RMSNORM_FORWARD, 2.0) == 6 + 8 + 4 + 8 + 6 + 4 == 36
    assert eager_operator_bytes(EAGER_RMSNORM_FORWARD, 2.0) / (2 + 2) == 9
    # fp32 activations: the casts are no-ops (Tensor.float() of fp32 returns it)
    assert eager_operator_bytes(EAGER_RMSNORM_FORWARD, 4.0) == 8 + 4 + 8 + 8


def test_rotation_and_swiglu_forward():
    # cast 2+4, complex multiply 4+4, cast back 4+2; the fused rotation reads and writes 2+2
    assert eager_operator_bytes(EAGER_ROTARY_FORWARD, 2.0) == 20
    assert rotary_embedding_bytes(1, 1, 1, 1, 1, 2.0) == 2 * 2 * 2  # q and k, 4 bytes each
    # silu 2+2, gate times up 4+2 per element of f
    assert eager_operator_bytes(EAGER_SWIGLU_FORWARD, 2.0) == 10


def test_layer_forward_bytes_per_token():
    norms = 2 * (36 + 3 * 2) * H  # two norms and two residual adds (read 2, write 1)
    rope = 20 * (H + H)  # queries and keys, no GQA
    out_copy = 2 * 2 * H  # the attention output made contiguous
    mlp = 10 * F
    got = eager_elementwise_bytes(1, H, HEADS, HEADS, 128, F, True, 1, 2.0)
    assert got == norms + rope + out_copy + mlp


def test_grouped_query_attention_adds_the_repeat_kv_copies():
    # Llama 3 8B: 32 query heads, 8 KV heads of 128; repeat_kv reads K and V (2 x 1024)
    # and writes them for every query head (2 x 4096), 2 bytes each
    mha = eager_elementwise_bytes(1, 4096, 32, 32, 128, 14336, True, 1, 2.0)
    gqa = eager_elementwise_bytes(1, 4096, 32, 8, 128, 14336, True, 1, 2.0)
    rope_saved = 20 * (4096 - 1024)  # fewer keys to rotate
    assert mha - gqa == pytest.approx(rope_saved - 2 * (1024 + 4096) * 2)


def test_sequence_parallel_splits_only_the_norms_and_residuals():
    whole = eager_elementwise_bytes(1, H, HEADS, HEADS, 128, F, True, 8, 2.0)
    split = eager_elementwise_bytes(
        1, H, HEADS, HEADS, 128, F, True, 8, 2.0, sequence_parallel=True
    )
    assert whole - split == pytest.approx(2 * (36 + 6) * (H - H / 8))


def test_kernel_counts():
    # RMSNorm 6 listed + eps and rsqrt = 8 forward, 12 + 2 backward; 2 residual adds;
    # rotation 3 each for q and k; one contiguous copy; SwiGLU 2 forward, 3 backward
    assert eager_elementwise_kernels(True, True, False) == (
        2 * 8 + 2 + 6 + 1 + 2,
        2 * 14 + 2 + 6 + 1 + 3,
    )
    assert eager_elementwise_kernels(True, True, True)[0] == 27 + 2  # repeat_kv for K and V


def test_eager_step_adds_exactly_the_extra_bytes_and_kernels():
    # one GPU, no recompute, no communication: the step grows by the extra element-wise
    # bytes at the A100's 2.039 TB/s x 0.85 and the extra kernels at 4 us each
    kw = dict(batch_size=1, seq_len=4096, zero_stage=0, overlap=False)
    one = Fleet(node=Nodes.DGX_A100, count=1, fabric=Fabrics.IB_HDR)
    tp8 = dict(tp_size=8)
    fused = DistributedModel().solve(LLAMA13, one, **kw, **tp8)
    eager = DistributedModel().solve(LLAMA13, one, elementwise_kernels="eager", **kw, **tp8)
    T, t = 4096, 8
    rope = rotary_embedding_bytes(T, HEADS, HEADS, 128, t, 2.0)
    # fused: norms, residual adds and SwiGLU forward and twice that backward; the rotation
    # once forward and once for the gradients
    fused_bytes = 3 * (10 * 2 * H + 3 * 2 * F / t) * T + 2 * rope
    eager_bytes = eager_elementwise_bytes(T, H, HEADS, HEADS, 128, F, True, t, 2.0) + (
        eager_elementwise_bytes(T, H, HEADS, HEADS, 128, F, True, t, 2.0, backward=True)
    )
    fwd_k, bwd_k = eager_elementwise_kernels(True, True, False)
    extra_kernels = (fwd_k - 5) + (bwd_k - 5)  # the fused stack's 5 + 5 element-wise kernels
    layers = 4
    expected = layers * ((eager_bytes - fused_bytes) / (2.039e12 * 0.85) + extra_kernels * 4e-6)
    grow = eager.si("step_time") - fused.si("step_time")
    assert grow == pytest.approx(expected, rel=1e-9)


def test_memory_is_priced_as_for_fused_kernels():
    kw = dict(batch_size=8, seq_len=4096, zero_stage=3)
    fused = DistributedModel().solve(LLAMA13, NODE, **kw)
    eager = DistributedModel().solve(LLAMA13, NODE, elementwise_kernels="eager", **kw)
    assert eager.si("memory_per_accelerator") == fused.si("memory_per_accelerator")
    assert eager.si("step_time") > fused.si("step_time")


def test_bad_setting_is_named():
    with pytest.raises(ParameterError, match="elementwise_kernels"):
        TrainingLayout(elementwise_kernels="jit")
    with pytest.raises(ParameterError, match="elementwise_kernels"):
        build_problem(LLAMA13, NODE, 8, elementwise_kernels="compiled")
    with pytest.raises(ParameterError, match="elementwise_kernels"):
        DistributedModel().solve(LLAMA13, NODE, batch_size=8, elementwise_kernels="unfused")


def test_fused_norms_replace_only_the_norms():
    # torchtitan's fused_rmsnorm (Triton): forward reads and writes the row (2 + 2 bytes);
    # backward reads the gradient and the input, writes the input gradient (2 + 2 + 2)
    args = (1, H, HEADS, HEADS, 128, F, True, 1, 2.0)
    fwd = eager_elementwise_bytes(*args) - eager_elementwise_bytes(*args, fused_norms=True)
    bwd = eager_elementwise_bytes(*args, backward=True) - eager_elementwise_bytes(
        *args, backward=True, fused_norms=True
    )
    assert fwd == 2 * (36 - 4) * H
    assert bwd == 2 * (90 - 6) * H
    kw = dict(batch_size=8, seq_len=4096, zero_stage=3)
    steps = [
        DistributedModel().solve(LLAMA13, NODE, elementwise_kernels=k, **kw).si("step_time")
        for k in ("fused", "eager_fused_norm", "eager")
    ]
    assert steps[0] < steps[1] < steps[2]
