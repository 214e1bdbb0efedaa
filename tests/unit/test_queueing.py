"""M/M/c waits (mlsys.core.formulas.queueing) against independent derivations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mlsys.core.formulas.queueing import (
    erlang_c_wait_probability,
    kingman_wait_factor,
    mmc_wait_quantile,
)


def _erlang_c_by_erlang_b(servers: int, load: float) -> float:
    """Erlang C from Erlang B's recursion B(k) = a B(k-1) / (k + a B(k-1)), B(0) = 1,
    and C = B / (1 - ρ (1 - B)) (Kleinrock 1975, Sec. 3.5-3.6): another route."""
    b = 1.0
    for k in range(1, servers + 1):
        b = load * b / (k + load * b)
    rho = load / servers
    return b / (1.0 - rho * (1.0 - b))


@pytest.mark.parametrize(
    ("servers", "load"), [(1, 0.5), (2, 1.0), (3, 2.4), (8, 7.5), (64, 60.0), (2000, 1990.0)]
)
def test_erlang_c_matches_the_erlang_b_route(servers: int, load: float) -> None:
    assert erlang_c_wait_probability(servers, load) == pytest.approx(
        _erlang_c_by_erlang_b(servers, load), rel=1e-9
    )


def test_one_server_waits_with_probability_rho() -> None:
    assert erlang_c_wait_probability(1, 0.8) == pytest.approx(0.8, rel=1e-12)


def test_no_load_never_waits_and_overload_always_does() -> None:
    assert erlang_c_wait_probability(4, 0.0) == 0.0
    assert erlang_c_wait_probability(4, 4.0) == 1.0
    assert mmc_wait_quantile(0.99, 40.0, 10.0, 4) == math.inf


def test_mm1_p99_is_ln_100_rho_over_mu_minus_lambda() -> None:
    # M/M/1: P(W > t) = ρ e^{-(μ-λ) t}, so the P99 is ln(100 ρ) / (μ - λ).
    lam, mu = 8.0, 10.0
    assert mmc_wait_quantile(0.99, lam, mu, 1) == pytest.approx(math.log(100 * 0.8) / 2.0)


def test_a_quantile_below_the_no_wait_mass_is_zero() -> None:
    # Two servers at ρ = 0.25: P_w = 0.1 < 0.5, so the median wait is 0 and P95 > 0.
    assert erlang_c_wait_probability(2, 0.5) == pytest.approx(0.1)
    assert mmc_wait_quantile(0.5, 5.0, 10.0, 2) == 0.0
    assert mmc_wait_quantile(0.95, 5.0, 10.0, 2) == pytest.approx(math.log(2.0) / 15.0)


def test_p99_wait_agrees_with_a_simulated_mmc_queue() -> None:
    # First-come-first-served M/M/3 at ρ = 0.7, simulated customer by customer: each
    # arrival takes the server that frees first (Kiefer-Wolfowitz workload vector).
    rng = np.random.default_rng(0)
    lam, mu, servers, n = 2.1, 1.0, 3, 200_000
    arrivals = np.cumsum(rng.exponential(1 / lam, n))
    services = rng.exponential(1 / mu, n)
    free = [0.0] * servers
    waits = np.empty(n)
    for i in range(n):
        k = min(range(servers), key=free.__getitem__)
        start = max(arrivals[i], free[k])
        waits[i] = start - arrivals[i]
        free[k] = start + services[i]
    simulated = float(np.quantile(waits[n // 10 :], 0.99))
    # a P99 of 180,000 correlated waits scatters by about ±6% from seed to seed
    assert mmc_wait_quantile(0.99, lam, mu, servers) == pytest.approx(simulated, rel=0.08)


def test_kingman_factor() -> None:
    assert kingman_wait_factor(1.0) == 1.0  # exponential service: M/M/c unchanged
    assert kingman_wait_factor(0.0) == 0.5  # deterministic: half the wait (M/D/1 vs M/M/1)
    assert kingman_wait_factor(2.0) == 2.5
