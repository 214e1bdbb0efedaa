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
from mlsys.core.solvers.memory import MemoryModel
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


def test_memory_adds_what_autograd_keeps():
    # eager RMSNorm keeps its input in fp32 (4 bytes) and the normalised 16-bit row
    # (2) where a fused norm keeps the 16-bit input (2): 4 bytes per element more, two
    # norms per layer; MHA, so no expanded keys and values. Batch 8 over 8 GPUs: one
    # sequence of 4096 tokens each, 4 layers.
    kw = dict(batch_size=8, seq_len=4096, zero_stage=3)
    fused = DistributedModel().solve(LLAMA13, NODE, **kw)
    eager = DistributedModel().solve(LLAMA13, NODE, elementwise_kernels="eager", **kw)
    extra = 4 * 4096 * 2 * 4 * H
    grow = eager.memory_per_accelerator.si("total") - fused.memory_per_accelerator.si("total")
    assert grow == pytest.approx(extra, rel=1e-12)
    assert eager.si("step_time") > fused.si("step_time")
    # fused norms keep nothing extra here; full recomputation keeps only layer inputs
    normed = DistributedModel().solve(LLAMA13, NODE, elementwise_kernels="eager_fused_norm", **kw)
    assert normed.memory_per_accelerator.si("total") == fused.memory_per_accelerator.si("total")
    full = dict(kw, recompute="full")
    assert DistributedModel().solve(LLAMA13, NODE, elementwise_kernels="eager", **full).si(
        "memory_per_accelerator"
    ) == DistributedModel().solve(LLAMA13, NODE, **full).si("memory_per_accelerator")


def test_memory_model_agrees():
    lay = TrainingLayout(dp=8, zero_stage=3, elementwise_kernels="eager")
    mem = MemoryModel().solve(LLAMA13, NODE.node.accelerator, batch_size=8, seq_len=4096,
                              layout=lay)  # fmt: skip
    dist = DistributedModel().solve(LLAMA13, NODE, batch_size=8, seq_len=4096, layout=lay)
    assert mem.si("total") == pytest.approx(dist.memory_per_accelerator.si("total"), rel=1e-12)
    assert mem.si("activations") > MemoryModel().solve(
        LLAMA13, NODE.node.accelerator, batch_size=8, seq_len=4096,
        layout=TrainingLayout(dp=8, zero_stage=3),
    ).si("activations")  # fmt: skip


def test_grouped_query_attention_keeps_the_expanded_keys_and_values():
    from mlsys.core.formulas.eager import eager_saved_activation_bytes

    # Llama 3 70B: 64 query and 8 KV heads of 128: repeat_kv's K and V (2 x 8192) are
    # what the attention kernel saves, where a fused GQA kernel keeps 2 x 1024
    args = (1, 8192, 64, 8, 128, 1, 2.0)
    assert eager_saved_activation_bytes(*args, fused_norms=True) == 2 * (8192 - 1024) * 2


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
    assert bwd == 2 * (84 - 6) * H
    kw = dict(batch_size=8, seq_len=4096, zero_stage=3)
    steps = [
        DistributedModel().solve(LLAMA13, NODE, elementwise_kernels=k, **kw).si("step_time")
        for k in ("fused", "eager_fused_norm", "eager")
    ]
    assert steps[0] < steps[1] < steps[2]
