"""Synchronization formulas and SynchronizationModel: worked numbers, bad inputs, properties."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlsys import Q_, ParameterError, SynchronizationModel, UnitError
from mlsys.core.formulas.synchronization import (
    async_mean_staleness,
    async_throughput,
    harmonic_number,
    local_sgd_step_time_s,
    shifted_exponential_backup_step_s,
    shifted_exponential_expected_max_s,
    two_point_backup_step_s,
    two_point_expected_max_s,
)


def _binom_tail(n, q, b):
    """P[Binomial(n, q) > b], summed exactly."""
    return 1 - sum(math.comb(n, k) * q**k * (1 - q) ** (n - k) for k in range(b + 1))


# -- formulas ------------------------------------------------------------------------
def test_harmonic_numbers():
    assert harmonic_number(8) == pytest.approx(float(Fraction(761, 280)), rel=1e-15)
    assert harmonic_number(0) == 0.0
    # asymptotic branch against the plain sum
    for n in (65, 100, 1000, 16384):
        assert harmonic_number(n) == pytest.approx(sum(1 / i for i in range(1, n + 1)), 1e-12)
    np.testing.assert_allclose(harmonic_number(np.array([1, 2, 3])), [1.0, 1.5, 11 / 6])


def test_two_point_tail_at_scale():
    # Dean & Barroso 2013: 1 % slow servers, fan-out 100 -> 1 - 0.99^100 = 63.4 % slow
    assert two_point_expected_max_s(1.0, 2.0, 0.01, 100) == pytest.approx(1 + (1 - 0.99**100))
    assert two_point_expected_max_s(1.0, 2.0, 0.01, 100) == pytest.approx(1.634, abs=5e-4)
    assert two_point_expected_max_s(1.0, 2.0, 0.01, 1) == pytest.approx(1.01)


def test_two_point_backups():
    assert two_point_backup_step_s(1.0, 2.0, 0.01, 100, 2) == pytest.approx(
        1 + _binom_tail(102, 0.01, 2)
    )
    assert two_point_backup_step_s(1.0, 2.0, 0.01, 100, 2) == pytest.approx(1.0831, abs=1e-4)
    # no backups: the plain expected maximum
    assert two_point_backup_step_s(1.0, 2.0, 0.01, 100, 0) == pytest.approx(
        two_point_expected_max_s(1.0, 2.0, 0.01, 100)
    )
    out = two_point_backup_step_s(1.0, 2.0, np.array([0.01, 0.02]), 100, np.array([0, 2]))
    np.testing.assert_allclose(out, [1 + (1 - 0.99**100), 1 + _binom_tail(102, 0.02, 2)])


def test_shifted_exponential():
    assert shifted_exponential_expected_max_s(1.0, 0.1, 8) == pytest.approx(1 + 0.1 * 761 / 280)
    h = lambda n: sum(1 / i for i in range(1, n + 1))  # noqa: E731
    assert shifted_exponential_backup_step_s(1.0, 0.1, 100, 4) == pytest.approx(
        1 + 0.1 * (h(104) - h(4))
    )
    assert shifted_exponential_backup_step_s(1.0, 0.1, 100, 0) == pytest.approx(1 + 0.1 * h(100))


def test_async_and_local():
    assert async_throughput(100, 32, 1.01) == pytest.approx(3168.3168)
    assert async_mean_staleness(100) == 99
    assert local_sgd_step_time_s(1.0, 0.4, 8) == pytest.approx(1.05)


# -- solver --------------------------------------------------------------------------
def test_solver_two_point_compares_three_schemes():
    res = SynchronizationModel().solve(
        100,
        Q_(1, "s"),
        batch_size=32,
        slow_fraction=0.01,
        slowdown=2.0,
        sync_time=Q_(400, "ms"),
        local_steps=8,
    )
    worst = 1 + (1 - 0.99**100)
    assert res.si("expected_max_compute_time") == pytest.approx(worst)
    assert res.si("mean_compute_time") == pytest.approx(1.01)
    assert res.si("step_time") == pytest.approx(worst + 0.4)
    assert res.si("throughput") == pytest.approx(3200 / (worst + 0.4))
    assert res.staleness == 0.0
    assert res.si("async_throughput") == pytest.approx(3200 / 1.41)
    assert res.async_staleness == 99
    assert res.si("local_step_time") == pytest.approx(worst + 0.05)
    assert res.local_staleness == 7
    assert res.waiting_fraction == pytest.approx(1 - 1.01 / worst)
    assert res.efficiency == pytest.approx(1 / (worst + 0.4))
    # async wins on throughput, sync on staleness
    assert res.si("async_throughput") > res.si("local_throughput") > res.si("sync_throughput")


def test_solver_mode_selects_headline():
    kw = dict(batch_size=8, slow_fraction=0.05, slowdown=3.0, sync_time=0.2, local_steps=4)
    a = SynchronizationModel().solve(16, 0.5, mode="async", **kw)
    assert a.si("step_time") == a.si("async_step_time") and a.staleness == 15
    loc = SynchronizationModel().solve(16, 0.5, mode="local", **kw)
    assert loc.si("throughput") == loc.si("local_throughput") and loc.staleness == 3


def test_solver_exponential_and_backups():
    res = SynchronizationModel().solve(100, 1.0, straggler="exponential", tail_mean=0.1)
    assert res.si("step_time") == pytest.approx(1 + 0.1 * harmonic_number(100))
    assert res.si("mean_compute_time") == pytest.approx(1.1)
    backed = SynchronizationModel().solve(
        100, 1.0, straggler="exponential", tail_mean=0.1, backup_workers=4
    )
    assert backed.si("step_time") == pytest.approx(1.3143073, rel=1e-6)
    tp = SynchronizationModel().solve(100, 1.0, slow_fraction=0.01, slowdown=2, backup_workers=2)
    assert tp.si("step_time") == pytest.approx(1 + _binom_tail(102, 0.01, 2))


def test_solver_no_stragglers_is_ideal():
    res = SynchronizationModel().solve(64, 0.25, straggler="none", batch_size=4)
    assert res.efficiency == 1.0 and res.waiting_fraction == 0.0
    assert res.si("throughput") == pytest.approx(64 * 4 / 0.25)


def test_solver_takes_compute_time_from_a_result():
    from mlsys.core.results import Result

    class Step(Result):
        _units = {"step_time": "s", "compute_time": "s"}

    res = SynchronizationModel().solve(8, Step(step_time=1.5, compute_time=1.2), sync_time=0.3)
    assert res.si("compute_time") == 1.2
    assert res.si("step_time") == pytest.approx(1.5)


BAD = [
    ({"workers": 0}, ParameterError, "workers=0"),
    ({"workers": 2.5}, ParameterError, "workers=2.5"),
    ({"step_time": 0.0}, ParameterError, "step_time=0.0"),
    ({"step_time": Q_(1, "GB")}, UnitError, "step_time"),
    ({"slow_fraction": 1.5}, ParameterError, r"probability in \[0, 1\]"),
    ({"slowdown": 0.5}, ParameterError, "slowdown=0.5"),
    ({"straggler": "pareto"}, ParameterError, "straggler='pareto'"),
    ({"mode": "hogwild"}, ParameterError, "mode='hogwild'"),
    ({"local_steps": 0}, ParameterError, "local_steps=0"),
    ({"backup_workers": -1}, ParameterError, "backup_workers=-1"),
    ({"sync_time": -1.0}, ParameterError, "sync_time=-1.0"),
    ({"batch_size": 0}, ParameterError, "batch_size=0"),
    ({"straggler": "exponential", "tail_mean": -0.1}, ParameterError, "tail_mean=-0.1"),
]


@pytest.mark.parametrize(("kwargs", "error", "message"), BAD)
def test_bad_inputs(kwargs, error, message):
    args = {"workers": 8, "step_time": 1.0, **kwargs}
    with pytest.raises(error, match=message):
        SynchronizationModel().solve(args.pop("workers"), args.pop("step_time"), **args)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 5000), st.floats(0.0, 0.5), st.floats(1.0, 10.0), st.integers(0, 8))
def test_more_workers_never_shorten_sync_step(n, q, s, b):
    model = SynchronizationModel()
    one = model.solve(n, 1.0, slow_fraction=q, slowdown=s, backup_workers=b)
    more = model.solve(n + 1, 1.0, slow_fraction=q, slowdown=s, backup_workers=b)
    assert more.si("step_time") >= one.si("step_time") - 1e-12
    if b == 0:  # never waiting beats waiting for the slowest
        assert one.si("async_throughput") >= one.si("sync_throughput") - 1e-9


def test_numpy_scalars_accepted():
    res = SynchronizationModel().solve(
        np.int64(100),
        1.0,
        backup_workers=np.int32(2),
        slow_fraction=np.float32(0.01),
        slowdown=np.float64(2.0),
    )
    assert res.workers == 100 and res.backup_workers == 2
    assert res.si("step_time") == pytest.approx(1 + _binom_tail(102, float(np.float32(0.01)), 2))
