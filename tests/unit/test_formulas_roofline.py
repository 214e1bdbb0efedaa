"""Roofline formulas: worked examples (derivations in comments), broadcasting, limits."""

from __future__ import annotations

import doctest

import numpy as np
import pytest

import mlsys.core.formulas.roofline as roofline_mod
from mlsys.core.formulas import (
    arithmetic_intensity,
    attainable_flops,
    ridge_point,
    roofline_time,
)


def test_docstring_examples_run():
    failures, tried = doctest.testmod(roofline_mod, verbose=False)
    assert tried >= 4 and failures == 0


def test_gemm_intensity_is_n_over_3_for_bf16_square():
    # 2n³ FLOP over 3n² elements × 2 bytes → n/3 FLOP/byte
    n = 4096
    assert arithmetic_intensity(2 * n**3, 3 * n**2 * 2) == pytest.approx(n / 3)


def test_intensity_of_zero_bytes_is_infinite():
    assert np.isinf(arithmetic_intensity(1e9, 0.0))


def test_ridge_h100():
    # 989e12 / 3.35e12 = 295.22
    assert ridge_point(989e12, 3.35e12) == pytest.approx(295.2239, rel=1e-6)


def test_attainable_is_min_of_two_roofs():
    peak, bw = 989e12, 3.35e12
    ai = np.array([1.0, 295.2238806, 1000.0])
    got = attainable_flops(peak, bw, ai)
    assert got[0] == pytest.approx(3.35e12)
    assert got[1] == pytest.approx(peak, rel=1e-6)
    assert got[2] == peak


def test_roofline_time_overlap_limits():
    # compute 1 s, memory 3 s
    assert roofline_time(1e12, 3e12, 1e12, 1e12) == pytest.approx(3.0)
    assert roofline_time(1e12, 3e12, 1e12, 1e12, overlap=0.0) == pytest.approx(4.0)
    assert roofline_time(1e12, 3e12, 1e12, 1e12, overlap=0.5) == pytest.approx(3.5)


def test_roofline_time_broadcasts_over_1e5_configs():
    flops = np.linspace(1e9, 1e15, 100_000)
    t = roofline_time(flops, 1e9, 989e12, 3.35e12)
    assert t.shape == (100_000,)
    assert t[0] == pytest.approx(1e9 / 3.35e12)
    assert t[-1] == pytest.approx(1e15 / 989e12)
    assert np.all(np.diff(t) >= 0)
