"""The book's ResponsibleEngineeringModel: its DP-SGD slowdown estimate and the 1/p data factor."""

from __future__ import annotations

import pytest

from mlsys import Q_
from mlsys.compat.solvers import ResponsibleEngineeringModel
from mlsys.core.errors import ParameterError


def test_slowdown_is_the_books_estimate_and_data_scales_as_one_over_prevalence():
    res = ResponsibleEngineeringModel().solve(
        Q_(10, "day"), epsilon=0.5, min_subgroup_prevalence=0.02
    )
    # the book's 1 + c/eps with c = calibration.DP_SGD_SLOWDOWN_COEFFICIENT = 2 (e0fde03)
    assert res.dp_slowdown_factor == pytest.approx(1 + 2 / 0.5)
    assert res.effective_training_time.m_as("day") == pytest.approx(10 * 5.0)
    # a uniform sample of n holds n p of the subgroup: 1/p times the data, 50 at 2%
    assert res.additional_data_requirement == pytest.approx(50.0)
    assert res.privacy_cost_ratio == res.dp_slowdown_factor
    assert res.fairness_data_ratio == res.additional_data_requirement
    assert (res.epsilon, res.delta, res.min_subgroup_prevalence) == (0.5, 1e-5, 0.02)


def test_the_books_floors_on_epsilon_and_prevalence():
    res = ResponsibleEngineeringModel().solve(3600.0, epsilon=1e-4, min_subgroup_prevalence=1e-9)
    assert res.dp_slowdown_factor == pytest.approx(1 + 2 / 0.01)  # epsilon floored at 0.01
    assert res.additional_data_requirement == pytest.approx(1e6)  # prevalence floored at 1e-6
    assert res.si("effective_training_time") == pytest.approx(3600 * 201)


def test_the_estimate_is_recorded_as_the_books_with_its_source():
    from mlsys.compat.systems import _table

    prov = _table("calibration")["provenance"]["DP_SGD_SLOWDOWN_COEFFICIENT"]
    assert prov["kind"] == "estimate"
    assert "calibration.py@e0fde03" in prov["reference"] and "Abadi" in prov["note"]


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"base_training_time": Q_(3, "GB")}, "base_training_time"),
        ({"base_training_time": 0.0}, "base_training_time"),
        ({"base_training_time": 10.0, "epsilon": 0}, "epsilon"),
        ({"base_training_time": 10.0, "delta": 1.0}, "delta"),
        ({"base_training_time": 10.0, "min_subgroup_prevalence": 1.5}, "min_subgroup_prevalence"),
        ({"base_training_time": 10.0, "epsilon": "1"}, "epsilon"),
    ],
)
def test_bad_inputs_name_the_parameter(kwargs, name):
    with pytest.raises(ParameterError, match=name):
        ResponsibleEngineeringModel().solve(**kwargs)
