"""The book's ScalingModel, OrchestrationModel and TransformationModel on mlsys's formulas."""

from __future__ import annotations

import math

import pytest

from mlsys.compat.solvers import OrchestrationModel, ScalingModel, TransformationModel
from mlsys.core.errors import ParameterError
from mlsys.core.units import Q_


def test_scaling_splits_a_flop_budget_at_twenty_tokens_per_parameter():
    res = ScalingModel().solve(Q_(5.76e23, "FLOP"))
    n = math.sqrt(5.76e23 / 120.0)  # C = 6 N (20 N)
    assert res.optimal_parameters.m_as("count") == pytest.approx(n, rel=1e-12)
    assert res.optimal_tokens.m_as("count") == pytest.approx(20.0 * n, rel=1e-12)
    assert res.tokens_per_parameter == pytest.approx(20.0)
    # the book's dimensionless FLOP count and a plain number give the same
    same = ScalingModel().solve(Q_(5.76e23, "flop_count"))
    assert same.si("optimal_parameters") == pytest.approx(n, rel=1e-12)


def test_scaling_of_accelerator_days_uses_the_h100_peak_at_the_books_sustained_mfu():
    # 1000 H100-days x 86,400 s x 989.4e12 FLOP/s x 0.4 = 3.419e22 FLOPs
    res = ScalingModel().solve(Q_(1000, "day"))
    flops = 1000 * 86_400 * 989.4e12 * 0.4
    assert res.compute_budget_flops.m_as("count") == pytest.approx(flops, rel=1e-9)
    assert res.si("optimal_parameters") == pytest.approx(math.sqrt(flops / 120.0), rel=1e-9)


def test_scaling_for_a_given_model_size():
    res = ScalingModel().solve(1e23, target_model_size=Q_(7e9, "parameter_count"))
    assert res.si("optimal_parameters") == pytest.approx(7e9)
    assert res.si("optimal_tokens") == pytest.approx(1e23 / (6 * 7e9), rel=1e-12)
    assert res.tokens_per_parameter == pytest.approx(1e23 / (6 * 7e9) / 7e9, rel=1e-12)
    with pytest.raises(ParameterError, match="compute_budget"):
        ScalingModel().solve(Q_(3, "GB"))


def test_orchestration_is_an_m_d_1_queue():
    # λ = 2 jobs/day, D = 0.4 day: ρ = 0.8, W = ρ D / (2 (1 - ρ)) = 0.8 day, L = λ W = 1.6
    res = OrchestrationModel().solve(None, 2.0, 0.4)
    assert res.cluster_utilization == pytest.approx(0.8)
    assert res.avg_wait_time_days.m_as("day") == pytest.approx(0.8, rel=1e-9)
    assert res.avg_queue_length == pytest.approx(0.8**2 / (2 * 0.2), rel=1e-9)
    assert res.is_stable
    # a job duration given as time is the same queue
    hours = OrchestrationModel().solve(None, 2.0, Q_(9.6, "hour"))
    assert hours.si("avg_wait_time_days") == pytest.approx(res.si("avg_wait_time_days"))


def test_an_overloaded_cluster_never_drains():
    res = OrchestrationModel().solve(None, 3.0, 0.5)  # ρ = 1.5
    assert not res.is_stable
    assert math.isinf(res.si("avg_wait_time_days")) and math.isinf(res.avg_queue_length)
    with pytest.raises(ParameterError, match="arrival_rate_jobs_per_day"):
        OrchestrationModel().solve(None, 0.0, 0.5)


def test_transformation_stall():
    # 256 x 500 kB / 2 GB/s = 64 ms > 50 ms step: busy 50/64, each step 64/50 as long
    res = TransformationModel().solve(256, Q_("500 kB"), Q_("2 GB/s"), Q_("50 ms"))
    assert res.si("transform_time") == pytest.approx(0.064, rel=1e-12)
    assert res.si("accelerator_step_time") == pytest.approx(0.050)
    assert res.is_bottleneck
    assert res.accelerator_utilization == pytest.approx(50 / 64, rel=1e-12)
    assert res.slowdown_factor == pytest.approx(64 / 50, rel=1e-12)
    fed = TransformationModel().solve(64, Q_("500 kB"), Q_("2 GB/s"), Q_("50 ms"))  # 16 ms
    assert not fed.is_bottleneck and fed.accelerator_utilization == 1.0
    with pytest.raises(ParameterError, match="batch_size"):
        TransformationModel().solve(0, Q_("500 kB"), Q_("2 GB/s"), Q_("50 ms"))
