"""A causal fused attention kernel runs its half of the work slower than an unmasked one.

The published figures: NVIDIA/cudnn-frontend's benchmark results for cuDNN's fused
attention in bf16 at head dim 128 (causal and unmasked, the causal FLOPs counted as half):
``benchmark/sdpa_benchmark_training/results/llama3.1/gb200/llama3.1_20260424_100750.csv``
(commit 60e572b, GB200, 64 query / 8 key-value heads) and ``benchmark/benchmark_results.csv``
(commit 505fcfe, 16 heads, 16k tokens a batch). Ratios are causal / unmasked TFLOP/s,
forward and backward.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlsys.core.formulas.gemm import (
    ATTENTION_TILE,
    CAUSAL_ROW_OVERHEAD_TILES,
    attention_time,
    causal_attention_rate,
)

# (sequence, forward ratio, backward ratio)
CUDNN_GB200 = [(2048, 1097 / 1433, 885 / 1124), (4096, 1408 / 1599, 1148 / 1350),
               (8192, 1574 / 1771, 1332 / 1404)]  # fmt: skip
CUDNN_CSV = [(4096, 0.83, 0.86), (8192, 0.86, 0.87), (16384, 0.91, 0.92)]


def test_the_closed_form_at_2k_tokens():
    # n = 2048/128 = 16 rows of query tiles; c = 5.1 tiles of fixed work per row
    n, c = 2048 / ATTENTION_TILE, CAUSAL_ROW_OVERHEAD_TILES
    assert n == 16
    assert causal_attention_rate(2048, 2048) == pytest.approx((n + c) / (n + 1 + 2 * c))
    assert causal_attention_rate(2048, 2048) == pytest.approx(21.1 / 27.2)


@pytest.mark.parametrize(("seq", "forward", "backward"), CUDNN_GB200 + CUDNN_CSV)
def test_the_rate_follows_cudnns_measured_ratios(seq, forward, backward):
    # the fit's rms is 0.035 over these and the GB300 rows; the two files differ by 0.055 at
    # 8k (0.865 against 0.92), and the fit sits between them: each within 0.06 of its mean
    assert causal_attention_rate(seq, seq) == pytest.approx((forward + backward) / 2, abs=0.06)


def test_kernels_the_constant_was_not_fitted_to_land_close():
    # FlashAttention-3 on H100 at 8k, head dim 128 (flash-attention PR 1791: fwd 630.0 of
    # 659.1, bwd 531.6 of 553.9 TFLOP/s); FlashAttention-4 on B200 (PR 2280: 1418.1 of 1534.8)
    r = causal_attention_rate(8192, 8192)
    assert r == pytest.approx(630.0 / 659.1, abs=0.05)
    assert r == pytest.approx(1418.1 / 1534.8, abs=0.02)


@given(st.floats(min_value=128.0, max_value=1e6))
def test_rate_is_a_fraction_rising_with_the_sequence(seq):
    r = causal_attention_rate(seq, seq)
    assert 0.0 < r <= 1.0
    assert causal_attention_rate(2.0 * seq, 2.0 * seq) > r


def test_long_sequences_lose_nothing():
    assert causal_attention_rate(1e7, 1e7) > 0.999


def test_context_parallel_split_is_mostly_unmasked():
    # cp = 2: the sequence in 4 chunks of 512 tokens, two per rank; a quarter of each
    # rank's work is the two causal diagonal blocks (n = 4), the rest unmasked
    n, c = 512 / ATTENTION_TILE, CAUSAL_ROW_OVERHEAD_TILES
    r = (n + c) / (n + 1 + 2 * c)
    assert causal_attention_rate(1024, 2048) == pytest.approx(1.0 / (0.25 / r + 0.75))


def test_arrays_give_the_scalar_answers():
    q = np.array([512.0, 2048.0, 1024.0, 8192.0])
    kv = np.array([512.0, 2048.0, 2048.0, 131072.0])
    got = causal_attention_rate(q, kv)
    want = [causal_attention_rate(float(a), float(b)) for a, b in zip(q, kv, strict=True)]
    assert got == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("backward", [False, True])
def test_fused_attention_charges_it_and_unfused_does_not(backward):
    args = (1, 2048, 2048, 32, 32, 128, 312e12, 2.039e12 * 0.85, 2.0)
    causal = attention_time(*args, backward=backward)
    unmasked = attention_time(*args, causal=False, backward=backward)
    # compute-bound here: half the work at the causal rate
    assert causal == pytest.approx(0.5 * unmasked / causal_attention_rate(2048, 2048))
    # the unfused GEMMs compute the whole square either way
    assert attention_time(*args, fused=False, backward=backward) == pytest.approx(
        attention_time(*args, fused=False, causal=False, backward=backward)
    )
