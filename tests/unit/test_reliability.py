"""Reliability formulas and ReliabilityModel: worked numbers, bad inputs, properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsys import Q_, ParameterError, ReliabilityModel, TransformerWorkload, UnitError
from mlsys.core.errors import InfeasibleError
from mlsys.core.formulas.reliability import (
    checkpoint_bytes,
    checkpoint_goodput,
    checkpoint_write_time_s,
    daly_checkpoint_interval_s,
    daly_expected_wall_time_s,
    failure_probability,
    fleet_failure_rate,
    fleet_mtbf_s,
    lost_work_per_failure_s,
    young_checkpoint_interval_s,
)
from mlsys.core.solvers.reliability import DEFAULT_FAILURE_RATES, LLAMA3_INTERRUPTIONS

# Llama 3 (Dubey et al. 2024, Table 5): 419 unexpected interruptions, 16,384 H100, 54 days.
LLAMA_RATE_PER_GPU_S = 419 / (16384 * 54 * 24 * 3600)


# -- formulas: the docstring examples ---------------------------------------------------
def test_fleet_rate_and_mtbf_llama3():
    assert fleet_failure_rate(LLAMA_RATE_PER_GPU_S, 16384) * 3600 == pytest.approx(419 / (54 * 24))
    # 54 days x 24 h / 419 = 3.093 h
    assert fleet_mtbf_s(LLAMA_RATE_PER_GPU_S, 16384) / 3600 == pytest.approx(3.09308, rel=1e-5)


def test_fleet_mtbf_broadcasts_and_zero_rate_is_infinite():
    out = fleet_mtbf_s(LLAMA_RATE_PER_GPU_S, np.array([1024, 2048, 16384]))
    assert out.shape == (3,)
    assert out[0] / out[2] == pytest.approx(16.0)
    assert math.isinf(fleet_mtbf_s(0.0, 8))


def test_failure_probability():
    # 1 - exp(-24 / 3.093) = 0.999573
    assert failure_probability(24.0, 1296 / 419) == pytest.approx(0.9995732, rel=1e-6)
    assert failure_probability(0.0, 10.0) == 0.0
    # one MTBF: 1 - 1/e
    assert failure_probability(5.0, 5.0) == pytest.approx(1 - math.exp(-1))


def test_young_interval():
    # sqrt(2 * 60 * 86400) = sqrt(10,368,000) = 3219.94 s
    assert young_checkpoint_interval_s(60.0, 86400.0) == pytest.approx(3219.9379, rel=1e-7)


def test_daly_interval_worked_number():
    # x = 60 / 172800; tau = 3219.938 (1 + sqrt(x)/3 + x/9) - 60
    x = 60 / 172800
    expected = math.sqrt(2 * 60 * 86400) * (1 + math.sqrt(x) / 3 + x / 9) - 60
    assert expected == pytest.approx(3180.062, rel=1e-6)
    assert daly_checkpoint_interval_s(60.0, 86400.0) == pytest.approx(expected, rel=1e-12)


def test_daly_interval_long_checkpoint_is_mtbf():
    # delta >= 2M: tau = M (Daly 2006)
    assert daly_checkpoint_interval_s(300.0, 100.0) == 100.0
    both = daly_checkpoint_interval_s(np.array([60.0, 300.0]), np.array([86400.0, 100.0]))
    assert both[1] == 100.0 and both[0] == pytest.approx(3180.062, rel=1e-6)


def test_checkpoint_size_and_time():
    assert checkpoint_bytes(405e9) == pytest.approx(5.67e12)
    assert checkpoint_bytes(1e9, 16) == 16e9
    assert checkpoint_write_time_s(5.67e12, 2e12) == pytest.approx(2.835)


def test_lost_work_and_goodput():
    assert lost_work_per_failure_s(3600.0, 600.0) == 2400.0
    # (1 - 2400/86400) / (1 + 60/3600) = 0.956284
    assert checkpoint_goodput(3600.0, 60.0, 86400.0, 600.0) == pytest.approx(0.9562842, 1e-6)
    assert checkpoint_goodput(3600.0, 60.0, 1000.0, 600.0) == 0.0


def test_daly_wall_time():
    # 86400 e^(600/86400) (e^(3660/86400) - 1) * 864000/3600
    expected = 86400 * math.exp(600 / 86400) * (math.exp(3660 / 86400) - 1) * 240
    assert expected == pytest.approx(903523.2, rel=1e-6)
    assert daly_expected_wall_time_s(864000, 3600, 60, 86400, 600) == pytest.approx(expected)


def test_daly_wall_time_first_order_limit():
    # tau, delta, R << M: T_w -> T_s / first-order goodput
    t_s, tau, d, m, r = 1e6, 100.0, 1.0, 1e8, 10.0
    first = t_s / checkpoint_goodput(tau, d, m, r)
    assert daly_expected_wall_time_s(t_s, tau, d, m, r) == pytest.approx(first, rel=1e-5)


# -- solver --------------------------------------------------------------------------
def test_default_rates_are_llama3_table5():
    assert sum(LLAMA3_INTERRUPTIONS.values()) == 419
    assert LLAMA3_INTERRUPTIONS["hbm"] == 72
    assert sum(DEFAULT_FAILURE_RATES.values()) == pytest.approx(LLAMA_RATE_PER_GPU_S)


def test_solver_llama3_mtbf_and_failure_count():
    res = ReliabilityModel().solve(16384, Q_(54, "day"), checkpoint_time=Q_(1, "min"))
    assert res.fleet_mtbf.to("hour").magnitude == pytest.approx(3.093, rel=1e-3)
    assert res.mtbf_source == "component rates"
    # 54 days of compute at one failure per 3.093 h -> 419 failures (more over wall time)
    assert res.si("job_duration") / res.si("fleet_mtbf") == pytest.approx(419.0)
    assert res.expected_failures > 419.0
    assert res.failure_probability == pytest.approx(1.0)


def test_solver_scales_with_fleet_size():
    small = ReliabilityModel().solve(1024, 86400.0, checkpoint_time=60.0)
    big = ReliabilityModel().solve(16384, 86400.0, checkpoint_time=60.0)
    assert small.si("fleet_mtbf") / big.si("fleet_mtbf") == pytest.approx(16.0)


def test_solver_checkpoint_from_model():
    model = TransformerWorkload(name="t", layers=2, hidden=1024, heads=8, vocab=1000, params=1e10)
    res = ReliabilityModel().solve(
        1024, Q_(7, "day"), model=model, storage_bandwidth=Q_(100, "GB/s")
    )
    # 1e10 params x 14 B = 140 GB at 100 GB/s -> 1.4 s
    assert res.si("checkpoint_bytes") == pytest.approx(1.4e11)
    assert res.si("checkpoint_time") == pytest.approx(1.4)
    m = res.si("fleet_mtbf")
    assert res.si("daly_interval") == pytest.approx(daly_checkpoint_interval_s(1.4, m))
    assert res.si("checkpoint_interval") == res.si("daly_interval")
    young = ReliabilityModel().solve(
        1024,
        Q_(7, "day"),
        checkpoint_bytes=Q_(140, "GB"),
        storage_bandwidth=1e11,
        interval_method="young",
    )
    assert young.si("checkpoint_interval") == pytest.approx(math.sqrt(2 * 1.4 * m))


def test_solver_accepts_a_fleet():
    from mlsys import Fabrics, Fleet, Nodes

    fleet = Fleet(node=Nodes.DGX_H100, count=2, fabric=Fabrics.IB_NDR)
    res = ReliabilityModel().solve(fleet, 3600.0, checkpoint_time=10.0)
    assert res.accelerators == 16
    assert res.si("fleet_mtbf") == pytest.approx(1 / (16 * LLAMA_RATE_PER_GPU_S))


def test_solver_given_mtbf_overrides_rates():
    res = ReliabilityModel().solve(
        16384, Q_(10, "day"), fleet_mtbf=Q_(24, "hour"), checkpoint_time=60.0, restart_time=600.0
    )
    assert res.mtbf_source == "given"
    assert res.si("fleet_mtbf") == 86400.0
    assert res.si("young_interval") == pytest.approx(3219.9379, rel=1e-6)
    # the exact wall time of Daly Eq. 20 at the Daly interval
    tau = daly_checkpoint_interval_s(60.0, 86400.0)
    wall = daly_expected_wall_time_s(864000.0, tau, 60.0, 86400.0, 600.0)
    assert res.si("wall_time") == pytest.approx(wall)
    assert res.goodput == pytest.approx(864000.0 / wall)
    assert res.si("lost_work_per_failure") == pytest.approx(tau / 2 + 600.0)
    # time accounting closes: work + checkpoints + losses = wall
    total = res.si("job_duration") + res.si("checkpoint_overhead_time")
    assert total + res.si("expected_lost_time") == pytest.approx(res.si("wall_time"))


def test_solver_failure_rate_override_merges():
    res = ReliabilityModel().solve(8, 3600.0, failure_rates={"gpu": Q_(1e-4, "1/hour")})
    # Read as Quantities per second (the field's declared unit); si() gives the floats.
    assert res.component_failure_rates["gpu"].m_as("1/s") == pytest.approx(1e-4 / 3600)
    assert res.si("component_failure_rates")["hbm"] == DEFAULT_FAILURE_RATES["hbm"]


def test_solver_without_checkpoints_restarts_from_scratch():
    ok = ReliabilityModel().solve(8, Q_(1, "day"))
    assert ok.checkpoint_time is None and ok.feasible
    assert ok.goodput < 1.0
    bad = ReliabilityModel().solve(16384, Q_(54, "day"))
    assert not bad.feasible and "no checkpoints" in bad.infeasibility_reason
    with pytest.raises(InfeasibleError):
        ReliabilityModel().solve(16384, Q_(54, "day"), raise_errors=True)


def test_solver_checkpoint_slower_than_mtbf_is_infeasible():
    res = ReliabilityModel().solve(16384, Q_(1, "day"), checkpoint_time=Q_(4, "hour"))
    assert not res.feasible
    assert "not below the job's MTBF" in res.infeasibility_reason


BAD = [
    ({"fleet": 0}, ParameterError, "fleet=0"),
    ({"fleet": 2.5}, ParameterError, "fleet=2.5 .* a positive integer"),
    ({"job_duration": -1.0}, ParameterError, "job_duration=-1.0"),
    ({"job_duration": 0.0}, ParameterError, "a positive number"),
    ({"job_duration": Q_(1, "GB")}, UnitError, "job_duration"),
    ({"interval_method": "optimal"}, ParameterError, "'daly' or 'young'"),
    ({"restart_time": -5.0}, ParameterError, "restart_time=-5.0"),
    ({"fleet_mtbf": 0.0}, ParameterError, "fleet_mtbf=0.0"),
    ({"failure_rates": {"gpu": -1.0}}, ParameterError, "failure_rates['gpu']"),
    ({"failure_rates": [1.0]}, ParameterError, "a mapping"),
    ({"checkpoint_bytes": 1e9, "storage_bandwidth": 0.0}, ParameterError, "storage_bandwidth"),
    ({"model": object()}, ParameterError, "total_params"),
]


@pytest.mark.parametrize(("kwargs", "error", "message"), BAD)
def test_bad_inputs(kwargs, error, message):
    args = {"fleet": 8, "job_duration": 3600.0, **kwargs}
    with pytest.raises(error, match=message.replace("[", r"\[").replace("(", r"\(")):
        ReliabilityModel().solve(args.pop("fleet"), args.pop("job_duration"), **args)


@settings(max_examples=40, deadline=None)
@given(
    st.floats(1e-10, 1e-6),
    st.floats(1.0, 10.0),
    st.floats(1.0, 600.0),
)
def test_more_failures_never_raise_goodput(rate, factor, delta):
    model = ReliabilityModel()
    lo = model.solve(1024, 86400.0, checkpoint_time=delta, failure_rates={"gpu": rate})
    hi = model.solve(1024, 86400.0, checkpoint_time=delta, failure_rates={"gpu": rate * factor})
    assert hi.goodput <= lo.goodput + 1e-12
