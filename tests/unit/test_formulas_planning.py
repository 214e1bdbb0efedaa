"""Compute-optimal scaling and input-pipeline stalls, derived by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mlsys.core.formulas import (
    accelerator_busy_fraction,
    compute_optimal_parameters,
    preprocessing_time,
    tokens_for_compute,
)


def test_compute_optimal_split_spends_the_budget_at_twenty_tokens_per_parameter():
    # Chinchilla (Hoffmann et al. 2022): C = 6 N D, D = 20 N  ->  N = sqrt(C / 120)
    c = 5.76e23
    n = compute_optimal_parameters(c)
    assert n == pytest.approx(math.sqrt(4.8e21), rel=1e-12)  # 6.93e10
    assert 6.0 * n * (20.0 * n) == pytest.approx(c, rel=1e-12)
    # quadrupling the budget doubles the model
    assert compute_optimal_parameters(4 * c) == pytest.approx(2 * n, rel=1e-12)
    # other constants: C = 8 N D at 10 tokens per parameter -> N = sqrt(C / 80)
    assert compute_optimal_parameters(8e20, 10.0, 8.0) == pytest.approx(math.sqrt(1e19))


def test_tokens_for_a_given_model_size():
    # 1e23 / (6 x 7e9) = 2.381e12
    assert tokens_for_compute(1e23, 7e9) == pytest.approx(1e23 / 4.2e10, rel=1e-12)
    out = tokens_for_compute(np.array([6e21, 1.2e22]), 1e9)
    assert np.allclose(out, [1e12, 2e12])


def test_preprocessing_and_the_accelerators_busy_fraction():
    # 256 x 500 kB at 2 GB/s = 1.28e8 / 2e9 s = 64 ms
    assert preprocessing_time(256, 5e5, 2e9) == pytest.approx(0.064, rel=1e-12)
    # a 50 ms step waits for 64 ms of preprocessing: busy 50/64
    assert accelerator_busy_fraction(0.050, 0.064) == pytest.approx(0.78125, rel=1e-12)
    # the host keeps up: never idle
    assert accelerator_busy_fraction(0.050, 0.010) == 1.0
    both = accelerator_busy_fraction(np.array([0.05, 0.05]), np.array([0.1, 0.02]))
    assert np.allclose(both, [0.5, 1.0])


def test_bisection_fraction_counts_cut_links_against_a_full_bisection():
    from mlsys.core.errors import ParameterError
    from mlsys.core.formulas import bisection_fraction, mean_hops

    # a 64-node ring: a bisection cuts 2 bidirectional links of the 32 a full one has
    assert bisection_fraction("ring", 64) == pytest.approx(2 / 32)
    # an 8x8x8 torus: 2 k^2 = 128 links (wrap-around doubles the mesh's 64) of 256
    assert bisection_fraction("torus_3d", 512) == pytest.approx(128 / 256)
    assert bisection_fraction("torus_3d", 64) == pytest.approx(1.0)  # 2·16 = 32 of 32
    assert bisection_fraction("fat_tree", 1000) == 1.0
    # minimal routing: a ring's mean distance N/4, a k-ary 3-cube's 3k/4
    assert mean_hops("ring", 64) == 16.0
    assert mean_hops("torus_3d", 512) == pytest.approx(6.0)
    assert mean_hops("fat_tree", 64) == 4.0  # edge-aggregation-core and back
    with pytest.raises(ParameterError, match="topology"):
        bisection_fraction("dragonfly", 64)


def test_compressed_weight_bytes_keeps_the_surviving_values_at_their_width():
    from mlsys.core.formulas import compressed_weight_bytes

    # 1e9 weights: 4 GB in fp32, 1 GB in int8 (Jacob et al. 2018), 0.5 GB in int4
    assert compressed_weight_bytes(1e9, 32) == pytest.approx(4e9)
    assert compressed_weight_bytes(1e9, 8) == pytest.approx(1e9)
    # pruning 90% in fp32 keeps 1e8 values, 0.4 GB (Han et al. 2016 before indices)
    assert compressed_weight_bytes(1e9, 32, 0.9) == pytest.approx(4e8)
    both = compressed_weight_bytes(np.array([1e9, 1e9]), np.array([4, 16]), 0.5)
    assert np.allclose(both, [2.5e8, 1e9])


def test_weight_streaming_balances_injection_and_compute_at_w_f_over_2_beta():
    from mlsys.core.formulas import weight_streaming_balanced_batch

    # a layer of p weights: p w / beta seconds to stream, 2 p B / F to compute
    p, w, f, beta = 1e8, 2.0, 62.5e15, 150e9
    b_star = weight_streaming_balanced_batch(w, f, beta)
    assert p * w / beta == pytest.approx(2 * p * b_star / f)
    assert b_star == pytest.approx(2 * 62.5e15 / 300e9)  # 416,667 tokens
    assert np.allclose(
        weight_streaming_balanced_batch(1.0, np.array([1e15, 2e15]), 1e11), [5e3, 1e4]
    )


def test_dp_sgd_clipping_counts_norm_rescale_and_noise():
    from mlsys.core.formulas import dp_sgd_clipping_flops, per_example_gradient_bytes

    # per example: ||g||^2 is P multiplies + P adds, the rescale P multiplies; noise P once
    p, b = 1e6, 8
    assert dp_sgd_clipping_flops(p, b) == pytest.approx(b * (p + p + p) + p)  # 2.5e7
    assert dp_sgd_clipping_flops(p, 1) == pytest.approx(4e6)
    # B fp32 gradient buffers of P elements where plain SGD holds one
    assert per_example_gradient_bytes(p, b) == pytest.approx(8 * 4e6)
    assert per_example_gradient_bytes(p, b, 2.0) == pytest.approx(8 * 2e6)
    arr = dp_sgd_clipping_flops(np.array([1e6, 2e6]), np.array([1, 2]))
    assert np.allclose(arr, [4e6, 1.4e7])
