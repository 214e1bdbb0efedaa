"""Pipeline-parallel training: losses equal one process; idle time follows the bubble."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from mlsys.emulate.pipeline import pipeline_bubble_fraction

pytestmark = pytest.mark.emulate


def test_bubble_formula():
    # GPipe (Huang et al. 2019): (p-1)/(m+p-1); p = 4, m = 8 -> 3/11.
    assert pipeline_bubble_fraction(4, 8) == pytest.approx(3 / 11)
    assert pipeline_bubble_fraction(8, 32) == pytest.approx(7 / 39)


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_losses_equal_single_process(pipeline_4x8, schedule):
    res = pipeline_4x8[schedule]
    assert len(res["losses"]) == 3
    assert res["losses"] == pytest.approx(res["reference_losses"], rel=1e-5)
    assert res["losses"][-1] < res["losses"][0]  # it trains


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_idle_fraction_follows_bubble(pipeline_4x8, schedule):
    res = pipeline_4x8[schedule]
    assert res["predicted_bubble"] == pytest.approx(3 / 11)
    for idle in res["idle_fraction"]:
        # A stage cannot be idle less than the schedule forces (minus timer jitter);
        # communication and scheduling overheads only add idle time.
        assert idle > res["predicted_bubble"] - 0.03
        assert idle < res["predicted_bubble"] + 0.2
    # Step time: (m + p - 1)(t_f + t_b) = 11 × 60 ms, plus overheads.
    assert res["makespan_s"] >= 0.97 * res["predicted_makespan_s"]
