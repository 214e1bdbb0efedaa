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
