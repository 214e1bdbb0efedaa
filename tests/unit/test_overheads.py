"""Fixed kernel costs, the per-layer time composition and TP-communication overlap
(mlsys.core.formulas.overheads / layer_time / overlap), against derivations written here."""

from __future__ import annotations

import numpy as np
import pytest

from mlsys.core.errors import ParameterError
from mlsys.core.formulas.gemm import attention_time, gemm_time
from mlsys.core.formulas.layer_time import (
    ELEMENTWISE_HIDDEN_PASSES,
    linear_layers_time,
    transformer_layer_time,
)
from mlsys.core.formulas.overheads import (
    CUDA_GRAPH_LAUNCH_SAVING_S,
    INFERENCE_LAYER_KERNELS,
    KERNEL_OVERHEAD_S,
    TRAINING_LAYER_BACKWARD_KERNELS,
    TRAINING_LAYER_FORWARD_KERNELS,
    fixed_kernel_time,
    graph_replayed_kernel_overhead,
    kernels_per_layer,
)
from mlsys.core.formulas.overlap import exposed_communication_time, overlapped_time

F, PEAK, BW = 312e12 * 0.75, 312e12, 2.039e12 * 0.85  # A100 bf16, default efficiencies


def test_a_cuda_graph_saves_grays_measured_launch_difference_per_kernel():
    """Gray (2019): a 2.9 µs kernel costs 3.8 µs a kernel streamed from the host and
    3.4 µs replayed from a CUDA graph, so a graph saves 3.8 - 3.4 = 0.4 µs a kernel; the
    eager fixed cost of 4 µs becomes 3.6 µs, and never goes below zero."""
    streamed_s, graphed_s = 3.8e-6, 3.4e-6
    assert CUDA_GRAPH_LAUNCH_SAVING_S == pytest.approx(streamed_s - graphed_s)
    assert graph_replayed_kernel_overhead() == pytest.approx(3.6e-6)
    assert graph_replayed_kernel_overhead(KERNEL_OVERHEAD_S, 0.0) == KERNEL_OVERHEAD_S
    assert graph_replayed_kernel_overhead(0.3e-6) == 0.0  # floored: no negative cost
    # a Llama-2-7B decode step of 32 layers x 11 kernels saves 352 x 0.4 µs = 0.1408 ms
    in_graph_s = graph_replayed_kernel_overhead()
    saved = fixed_kernel_time(32 * 11) - fixed_kernel_time(32 * 11, in_graph_s)
    assert saved == pytest.approx(0.1408e-3)
    # arrays broadcast, floored element by element
    out = graph_replayed_kernel_overhead(np.array([4e-6, 0.2e-6, 6.7e-6]))
    assert out == pytest.approx([3.6e-6, 0.0, 6.3e-6])


def test_kernel_counts_are_the_listed_operators():
    assert kernels_per_layer("inference") == len(INFERENCE_LAYER_KERNELS) == 10
    assert kernels_per_layer("forward", False) == len(TRAINING_LAYER_FORWARD_KERNELS) == 12
    assert kernels_per_layer("backward", False) == len(TRAINING_LAYER_BACKWARD_KERNELS) == 17
    # FlashAttention: the three attention kernels (Q·Kᵀ, softmax, P·V) become one.
    assert kernels_per_layer("forward", True) == 12 - 3 + 1
    assert kernels_per_layer("backward", True) == 17 - 3 + 1
    with pytest.raises(ParameterError):
        kernels_per_layer("sideways")


def test_fixed_kernel_time_is_within_the_measured_launch_range():
    # Gray (2019): 3.8 − 2.9 = 0.9 µs (streamed) to 9.6 − 2.9 = 6.7 µs (synchronised).
    assert 0.9e-6 <= KERNEL_OVERHEAD_S <= 6.7e-6
    assert fixed_kernel_time(320) == pytest.approx(320 * 4e-6)
    np.testing.assert_allclose(fixed_kernel_time(np.array([10, 20]), 1e-6), [1e-5, 2e-5])


def _layer_by_hand(tokens, seq, h, heads, kv, d, f, backward=False, flash=True):
    """Llama-style layer (gated MLP), tp = 1, on the A100, written out operator by
    operator as the module docstring describes."""
    q, kvd = heads * d, kv * d

    def lin(m, n, k):
        if not backward:
            return gemm_time(m, n, k, F, BW, 2.0, 108)
        return gemm_time(m, k, n, F, BW, 2.0, 108) + gemm_time(k, n, m, F, BW, 2.0, 108)

    gemms = lin(tokens, q + 2 * kvd, h) + lin(tokens, h, q) + lin(tokens, 2 * f, h)
    gemms += lin(tokens, h, f)
    attn = attention_time(
        tokens / seq,
        seq,
        seq,
        heads,
        kv,
        d,
        PEAK,
        BW,
        2.0,
        fused=flash,
        backward=backward,
        achievable_flops=F,
    )
    passes = 2.0 if backward else 1.0
    elementwise = passes * tokens * (10 * h + 3 * f) * 2.0 / BW
    phase = "backward" if backward else "forward"
    return gemms + attn + elementwise + kernels_per_layer(phase, flash) * 4e-6


@pytest.mark.parametrize("backward", [False, True])
@pytest.mark.parametrize("flash", [True, False])
def test_layer_time_is_the_sum_of_its_kernels(backward, flash):
    # Llama-2-7B shapes, two 2048-token sequences.
    args = (4096, 2, 2048, 2048, 4096, 32, 32, 128, 11008, True, 1, F, PEAK, BW, 2.0)
    got = transformer_layer_time(
        *args,
        sm_count=108,
        flash_attention=flash,
        phase="backward" if backward else "forward",
    )
    assert ELEMENTWISE_HIDDEN_PASSES == 10
    assert got == pytest.approx(
        _layer_by_hand(4096, 2048, 4096, 32, 32, 128, 11008, backward, flash)
    )


def test_tensor_parallelism_splits_the_gemms_and_sequence_parallelism_the_norms():
    base = dict(sm_count=108, phase="forward")
    args = (4096, 2, 2048, 2048, 8192, 64, 8, 128, 28672, True)
    t1 = transformer_layer_time(*args, 1, F, PEAK, BW, 2.0, **base)
    t8 = transformer_layer_time(*args, 8, F, PEAK, BW, 2.0, **base)
    t8sp = transformer_layer_time(*args, 8, F, PEAK, BW, 2.0, sequence_parallel=True, **base)
    # eight-way: at most 8x faster (fixed costs and quantisation do not shrink) ...
    assert t1 / 8 < t8 < t1
    # ... and sequence parallelism removes 7/8 of the 10·h element passes per token:
    saved = 4096 * 10 * 8192 * (1 - 1 / 8) * 2.0 / BW
    assert t8 - t8sp == pytest.approx(saved)


def test_array_inputs_broadcast():
    # The same layer (h 4096, 32 heads, SwiGLU f 11008, kv_len 1024, bf16) called with an
    # array of token counts and with each count alone must agree element by element.
    def layer_time(tokens):
        return transformer_layer_time(
            tokens, tokens, 1, 1024, 4096, 32, 32, 128, 11008, True, 1, F, PEAK, BW, 2.0,
            sm_count=108, causal=False,
        )  # fmt: skip

    tokens = np.array([1.0, 64.0, 4096.0])
    arr = layer_time(tokens)
    one = [layer_time(float(t)) for t in tokens]
    np.testing.assert_allclose(arr, one, rtol=1e-12)


def test_overlap_pipeline_of_chunks():
    # Two-stage pipeline of c equal chunks: longer stage + one chunk of the shorter.
    assert overlapped_time(2e-3, 1.2e-3, 8) == pytest.approx(2e-3 + 1.2e-3 / 8)
    assert overlapped_time(1e-3, 3e-3, 4) == pytest.approx(3e-3 + 1e-3 / 4)
    assert overlapped_time(2e-3, 1.2e-3, 1) == pytest.approx(3.2e-3)  # no overlap: sum
    assert exposed_communication_time(2e-3, 1.2e-3, 8) == pytest.approx(0.15e-3)
    np.testing.assert_allclose(
        overlapped_time(np.array([2e-3, 1e-3]), np.array([1.2e-3, 3e-3]), np.array([8, 4])),
        [2.15e-3, 3.25e-3],
    )


def test_linear_layers_of_gpt3_on_8_way_tensor_parallelism():
    # GPT-3 175B: QKV [2048 x 12288]·[12288 x 4608], output [2048 x 1536]·[1536 x 12288],
    # MLP [2048 x 12288]·[12288 x 6144] and [2048 x 6144]·[6144 x 12288]: 288, 768, 384
    # and 768 tiles of 256x128 on 108 SMs = 3, 8, 4 and 8 waves, each 8/9 useful, so the
    # 2·2048·12·12288²/8 FLOPs take 9/8 of their time at 234 TFLOP/s.
    flops = 2 * 2048 * 12 * 12288**2 / 8
    t = linear_layers_time(2048, 12288, 96, 96, 128, 49152, False, 8, F, BW, 2.0, sm_count=108)
    assert t == pytest.approx(flops / F * 9 / 8)
    # backward: data gradients have the forward's output shapes transposed, weight
    # gradients reduce over the 2048 tokens; both twice the forward FLOPs in all
    tb = linear_layers_time(
        2048, 12288, 96, 96, 128, 49152, False, 8, F, BW, 2.0, sm_count=108, backward=True
    )
    assert tb >= 2 * flops / F


def test_fp8_cast_bytes_per_layer():
    from mlsys.core.formulas.layer_time import fp8_cast_bytes

    # GPT-3 175B, tp 8 with sequence parallelism, 2048 tokens: forward inputs h/8 (QKV),
    # q/8 (output projection), h/8 (MLP up), f/8 (MLP down) = 1536 + 1536 + 1536 + 6144.
    fwd = fp8_cast_bytes(2048, 12288, 96, 96, 128, 49152, False, 8, True)
    assert fwd == pytest.approx(2048 * (1536 + 1536 + 1536 + 6144) * 6.0)
    # backward output gradients: (q + 2kv)/8 + h/8 + f/8 + h/8 (not gated)
    bwd = fp8_cast_bytes(2048, 12288, 96, 96, 128, 49152, False, 8, True, backward=True)
    assert bwd == pytest.approx(2048 * (4608 + 1536 + 6144 + 1536) * 6.0)
    # without sequence parallelism each device casts the whole hidden state
    full_h = fp8_cast_bytes(2048, 12288, 96, 96, 128, 49152, False, 8, False)
    assert full_h - fwd == pytest.approx(2048 * 2 * (12288 - 1536) * 6.0)
