"""Shape-aware GEMM and attention times (mlsys.core.formulas.gemm), each against a
derivation written here from NVIDIA's "Matrix Multiplication Background User's Guide"
(tile and wave quantisation) and Dao (2023) "FlashAttention-2"."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mlsys.core.formulas.gemm import (
    FLASH_ATTENTION_BACKWARD_FRACTION,
    FLASH_ATTENTION_FORWARD_FRACTION,
    attention_flops,
    attention_time,
    causal_attention_rate,
    gemm_bytes,
    gemm_efficiency,
    gemm_flops,
    gemm_time,
    tile_quantization_efficiency,
    wave_quantization_efficiency,
)

A100_FLOPS = 312e12 * 0.75  # dense bf16 peak x the default compute efficiency
A100_BW = 2.039e12 * 0.85
H100_FLOPS = 989.4e12 * 0.75
H100_BW = 3.35e12 * 0.85


def test_flops_and_bytes():
    # 2·M·N·K and (MK + KN + MN)·e
    assert gemm_flops(2048, 12288, 4096) == 2 * 2048 * 12288 * 4096
    assert gemm_bytes(3, 5, 7, 2.0) == (3 * 7 + 7 * 5 + 3 * 5) * 2.0


def test_tile_quantization():
    # 1000 x 1000 in 256x128 tiles: 4 x 8 tiles covering 1024 x 1024 -> 1e6 / 1024².
    assert tile_quantization_efficiency(1000, 1000) == pytest.approx(1e6 / 1024**2)
    # M = 257 spills into a second 256-row tile; laid 128x256 it needs 3 x 128 rows:
    # 257·256 / (384·256) = 0.669 beats 257/512 = 0.502.
    assert tile_quantization_efficiency(257, 256) == pytest.approx(257 / 384)


def test_wave_quantization_on_the_guides_a100_example():
    # The guide: 1792 x 1792 in 256x128 tiles = 7 x 14 = 98 tiles on 108 SMs, one wave.
    assert wave_quantization_efficiency(1792, 1792, 4096, 108) == pytest.approx(98 / 108)
    # 2304 x 1792: 9 x 14 = 126 tiles take two waves on an A100 (126/216) ...
    assert wave_quantization_efficiency(2304, 1792, 4096, 108) == pytest.approx(126 / 216)
    # ... and one on an H100 SXM's 132 SMs.
    assert wave_quantization_efficiency(2304, 1792, 4096, 132) == pytest.approx(126 / 132)


def test_split_k_fills_a_small_grid():
    # 256 x 1024 output: 8 tiles; K = 8192 allows 32 slices of 256, the SMs 108/8 = 13:
    # 104 thread blocks in one wave of 108.
    assert wave_quantization_efficiency(256, 1024, 8192, 108) == pytest.approx(104 / 108)
    # K = 512 allows only 2 slices: 16 blocks.
    assert wave_quantization_efficiency(256, 1024, 512, 108) == pytest.approx(16 / 108)


def test_gemm_efficiency_is_tile_times_wave():
    # 4096³ on 108 SMs: 512 tiles (no padding) in 5 waves -> 512/540.
    assert gemm_efficiency(4096, 4096, 4096, 108) == pytest.approx(512 / 540)
    assert gemm_efficiency(4096, 4096, 4096) == 1.0  # no SM count: tiles only


def test_large_gemm_is_compute_bound_at_its_quantised_rate():
    t = gemm_time(4096, 4096, 4096, A100_FLOPS, A100_BW, 2.0, 108)
    assert t == pytest.approx(2 * 4096**3 / (A100_FLOPS * 512 / 540))


def test_decode_gemm_is_memory_bound():
    # One token through a 4096 x 4096 layer on an H100: 33.57 MB at 2.85 TB/s = 11.79 µs.
    # The padded compute: the one row is padded to the 16 rows of mma.m16n8k16 (not to a
    # 256-row tile); 16x128 tiles, 32 of them split 4 ways into 128 blocks on 132 SMs:
    # 2·4096·(16·4096) / (742 TFLOP/s · 128/132) = 0.75 µs, far below the memory time.
    t_mem = (4096 + 4096 * 4096 + 4096) * 2.0 / H100_BW
    t_cmp = 2 * 4096 * (16 * 4096) / (H100_FLOPS * 128 / 132)
    assert t_cmp < t_mem
    assert gemm_time(1, 4096, 4096, H100_FLOPS, H100_BW, 2.0, 132) == pytest.approx(t_mem)
    # int4 weights (0.5 byte) stream four times faster: 2.95 µs, still above the compute.
    t_mem4 = ((4096 + 4096) * 2.0 + 4096 * 4096 * 0.5) / H100_BW
    assert t_cmp < t_mem4
    t4 = gemm_time(1, 4096, 4096, H100_FLOPS, H100_BW, 2.0, 132, weight_bytes_per_element=0.5)
    assert t4 == pytest.approx(t_mem4)
    # 128 tokens on an A100: the 128x256 tiles make 16, split 6 ways into 96 blocks on 108
    # SMs, so the compute, 2·4096·128·4096 / (234 TFLOP/s × 96/108) = 20.65 µs, just
    # outlasts the 20.57 µs of memory traffic: wave quantisation tips the balance.
    t_cmp128 = 2 * 4096 * 128 * 4096 / (A100_FLOPS * 96 / 108)
    assert t_cmp128 > (128 * 4096 * 2 + 4096 * 4096) * 2.0 / A100_BW
    assert gemm_time(128, 4096, 4096, A100_FLOPS, A100_BW, 2.0, 108) == pytest.approx(t_cmp128)


def test_empty_gemm_costs_its_weight_read_and_no_compute():
    assert gemm_time(0, 4096, 4096, H100_FLOPS, H100_BW, 2.0, 132) == pytest.approx(
        4096 * 4096 * 2.0 / H100_BW
    )


def test_array_path_matches_scalar_path():
    m = np.array([1, 128, 1000, 2048, 2304, 8192])
    arr = gemm_time(m, 1792, 4096, A100_FLOPS, A100_BW, 2.0, 108)
    one = [gemm_time(int(x), 1792, 4096, A100_FLOPS, A100_BW, 2.0, 108) for x in m]
    np.testing.assert_allclose(arr, one, rtol=1e-12)
    eff = gemm_efficiency(m, 1792, 4096, 108)
    np.testing.assert_allclose(eff, [gemm_efficiency(int(x), 1792, 4096, 108) for x in m])


def test_fused_attention_runs_at_flash_attention_2s_measured_fraction():
    # Llama-2-7B layer, one 2048-token sequence, causal: 4·2048²·32·128/2 FLOPs at
    # 0.70 of the A100's 312 TFLOP/s (Dao 2023, Fig. 4-5), an unmasked kernel's rate,
    # times the causal kernel's (16 + 5.1) / (17 + 10.2) at 16 rows of 128-token tiles
    flops = 4 * 2048**2 * 32 * 128 / 2
    causal = (16 + 5.1) / (17 + 10.2)
    assert attention_flops(1, 2048, 2048, 32, 128) == pytest.approx(flops)
    t = attention_time(1, 2048, 2048, 32, 32, 128, 312e12, A100_BW, 2.0)
    assert t == pytest.approx(flops / (312e12 * FLASH_ATTENTION_FORWARD_FRACTION * causal))
    # backward: five matmuls instead of two (2.5x) at the lower backward fraction
    tb = attention_time(1, 2048, 2048, 32, 32, 128, 312e12, A100_BW, 2.0, backward=True)
    assert tb == pytest.approx(2.5 * flops / (312e12 * FLASH_ATTENTION_BACKWARD_FRACTION * causal))
    # fractions that already describe causal runs (FlashAttention-1's) are taken as given
    t1 = attention_time(1, 2048, 2048, 32, 32, 128, 312e12, A100_BW, 2.0, unmasked_fractions=False)
    assert t1 == pytest.approx(flops / (312e12 * FLASH_ATTENTION_FORWARD_FRACTION))


def test_unfused_attention_pays_for_the_scores_in_memory():
    # Per head: Q·Kᵀ is a 2048x2048x128 GEMM and P·V a 2048x128x2048 one; each moves
    # (2048·128·2 + 2048²)·2 B = 9.44 MB at 1.733 TB/s (5.45 µs) against 1.07 GFLOP at
    # 268 TFLOP/s (4.0 µs): memory-bound. 32 heads, plus the softmax reading the scores
    # and writing the probabilities: 2 x 32 x 2048² x 2 B.
    per_gemm = (2048 * 128 * 2 + 2048**2) * 2.0 / A100_BW
    assert 2 * 2048**2 * 128 / A100_FLOPS < per_gemm
    expected = 32 * 2 * per_gemm + 2 * 32 * 2048**2 * 2.0 / A100_BW
    t = attention_time(
        1, 2048, 2048, 32, 32, 128, 312e12, A100_BW, 2.0, fused=False, achievable_flops=A100_FLOPS
    )
    assert t == pytest.approx(expected)
    fused = attention_time(1, 2048, 2048, 32, 32, 128, 312e12, A100_BW, 2.0)
    # FlashAttention's IO saving (Dao et al. 2022, Sec. 3.2): 3.2x here, with the causal
    # kernel's own rate (0.776 at 2k tokens) charged to the fused side only
    assert t > 3 * fused


def test_decode_attention_streams_the_kv_cache():
    # 8 sequences x 4096 cached tokens x 8 KV heads x 128 x 2 (K and V) x 2 B = 134 MB,
    # with the queries' and outputs' 64 heads per token: bandwidth-bound.
    kv = 8 * 2 * 4096 * 8 * 128 * 2.0
    q_o = 8 * 2 * 1 * 64 * 128 * 2.0
    t = attention_time(8, 1, 4096, 64, 8, 128, 989.4e12, H100_BW, 2.0, causal=False)
    assert t == pytest.approx((kv + q_o) / H100_BW)
    assert math.isfinite(t)


def test_fused_attention_fractions_by_device():
    # Shah et al. (2024), FlashAttention-3, Fig. 5-6: cuDNN's fused attention on an H100
    # SXM5 at head dim 128, 8k tokens: 600 TFLOP/s forward, 518 backward, of 989.4.
    from mlsys import Hardware
    from mlsys.core.formulas.gemm import attention_time
    from mlsys.core.solvers.efficiency import fused_attention_fractions

    fwd, bwd = fused_attention_fractions(Hardware.H100)
    assert fwd == pytest.approx(600 / 989.4, abs=0.005)
    assert bwd == pytest.approx(518 / 989.4, abs=0.005)
    assert fused_attention_fractions(Hardware.A100_80GB) == (0.70, 0.60)
    # one 8k-token sequence, 32 heads of 128, causal: 2·2·8192²·128·32/2 = 1.10e12 FLOP
    # forward, at 0.61 × 989.4 TFLOP/s unmasked × (64 + 5.1) / (65 + 10.2) causal = 1.98 ms
    # (compute-bound: 201 MB of Q, K, V, O)
    flops = 2 * 2 * 8192**2 * 128 * 32 / 2
    t = attention_time(1, 8192, 8192, 32, 32, 128, 989.4e12, 2.85e12, 2.0, forward_fraction=fwd)
    assert t == pytest.approx(flops / (fwd * 989.4e12 * (64 + 5.1) / (65 + 10.2)), rel=1e-9)
    assert causal_attention_rate(8192, 8192) == pytest.approx(69.1 / 75.2)
