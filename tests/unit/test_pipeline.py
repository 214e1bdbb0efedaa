"""Pipeline bubble formulas: GPipe, 1F1B, interleaved, and the two conventions."""

from __future__ import annotations

import numpy as np
import pytest

from mlsys.core.errors import ParameterError
from mlsys.core.formulas.pipeline import (
    bubble_fraction_to_ratio,
    bubble_ratio_to_fraction,
    gpipe_bubble_fraction,
    interleaved_bubble_ratio,
    one_f_one_b_bubble_ratio,
    pipeline_bubble_fraction,
    pipeline_bubble_ratio,
    pipeline_p2p_bytes,
)


def test_published_example_p8_m32():
    # published.md: p = 8, m = 32 gives 21.9 % of ideal = 17.9 % of total.
    assert one_f_one_b_bubble_ratio(8, 32) == pytest.approx(7 / 32)
    assert round(100 * one_f_one_b_bubble_ratio(8, 32), 1) == 21.9
    assert gpipe_bubble_fraction(8, 32) == pytest.approx(7 / 39)
    assert round(100 * gpipe_bubble_fraction(8, 32), 1) == 17.9
    assert bubble_ratio_to_fraction(7 / 32) == pytest.approx(7 / 39)
    assert bubble_fraction_to_ratio(7 / 39) == pytest.approx(7 / 32)


def test_interleaving_divides_the_bubble_by_v():
    assert interleaved_bubble_ratio(8, 64, 3) == pytest.approx(7 / 192)
    assert pipeline_bubble_ratio(8, 32, 4) == pytest.approx(one_f_one_b_bubble_ratio(8, 32) / 4)


def test_fraction_equals_gpipe_for_v1_and_broadcasts():
    p = np.array([2, 4, 8, 16])
    m = np.array([4, 8, 32, 128])
    np.testing.assert_allclose(pipeline_bubble_fraction(p, m), (p - 1) / (m + p - 1))


def test_conversions_are_inverse():
    r = np.linspace(0.0, 3.0, 13)
    np.testing.assert_allclose(bubble_fraction_to_ratio(bubble_ratio_to_fraction(r)), r)


def test_bad_inputs():
    with pytest.raises(ParameterError, match="schedule"):
        pipeline_bubble_fraction(8, 32, schedule="zigzag")
    with pytest.raises(ParameterError, match="v_stages"):
        pipeline_bubble_fraction(8, 32, v_stages=2, schedule="gpipe")
    with pytest.raises(ParameterError, match="fraction"):
        bubble_fraction_to_ratio(1.0)


def test_p2p_bytes():
    # s·b·h·2 = 2048·1·12288·2 = 50,331,648 bytes; /8 with sequence parallelism.
    assert pipeline_p2p_bytes(2048, 1, 12288) == 50_331_648
    assert pipeline_p2p_bytes(2048, 1, 12288, 2, 8, True) == 50_331_648 / 8
