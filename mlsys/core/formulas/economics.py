"""Cost of owning and running accelerators: amortisation, energy cost, unit prices.

Capital is spread over a service life, straight-line or as an annuity at a cost of
capital (the capital recovery factor); operating cost is energy and maintenance. Dividing
the yearly total by the accelerator-hours actually used gives a price comparable with a
cloud provider's hourly rate.

All functions take and return floats or numpy arrays (US dollars, seconds, joules) and
broadcast. Money is plain USD; time for amortisation is in years, as every price sheet
states it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "HOURS_PER_YEAR",
    "capital_recovery_factor",
    "annualized_capex_usd",
    "energy_cost_usd",
    "cost_per_accelerator_hour_usd",
    "cost_per_million_tokens_usd",
    "breakeven_utilization",
]

ArrayLike = Any


def _scalars(*xs: Any) -> bool:
    """True when every argument is a plain Python number (the fast, math-only path)."""
    return all(type(x) is float or type(x) is int for x in xs)


HOURS_PER_YEAR = 8766.0
"""Hours in a year of 365.25 days: the ``year`` of the unit registry, so that an annual
cost converted with pint (``.to("USD/hour")``) agrees with the hourly figures."""


def capital_recovery_factor(rate: ArrayLike, years: ArrayLike) -> ArrayLike:
    """Fraction of a capital cost to pay each year to repay it, with interest, over a life.

    ``CRF = r (1 + r)^n / ((1 + r)^n − 1)``; for ``r = 0`` it is ``1/n`` (straight line).

    Parameters
    ----------
    rate : float or ndarray
        Cost of capital ``r`` per year (0.08 for 8 %).
    years : float or ndarray
        Service life ``n`` in years (> 0).

    Returns
    -------
    float or ndarray
        Per year (dimensionless fraction of the capital).

    References
    ----------
    Barroso, Hölzle & Ranganathan (2018), "The Datacenter as a Computer", 3rd ed.,
    Morgan & Claypool, Ch. 6 (capital costs as depreciation plus interest); the
    annuity formula of any engineering-economics text, e.g. Newnan, Eschenbach & Lavelle
    (2004), "Engineering Economic Analysis", 9th ed., Ch. 4 (A/P factor).

    Examples
    --------
    8 % over 5 years: 0.08 · 1.4693 / 0.4693 = 0.25046 per year (vs 0.2 straight-line).
    """
    # 1 − (1 + r)^−n through expm1/log1p: exact for tiny rates, where the naive form
    # cancels to zero, and finite for huge ones, where (1 + r)^n would overflow.
    if _scalars(rate, years):
        # r (1+r)^n / ((1+r)^n − 1) = r / (1 − (1+r)^−n): no overflow at any rate
        shrink = -math.expm1(-years * math.log1p(rate))
        return 1.0 / years if shrink == 0.0 else rate / shrink
    r = np.asarray(rate, dtype=float)
    n = np.asarray(years, dtype=float)
    shrink = -np.expm1(-n * np.log1p(r))
    with np.errstate(divide="ignore", invalid="ignore"):
        annuity = r / shrink
    out = np.where(shrink == 0.0, 1.0 / n, annuity)
    return float(out) if out.ndim == 0 else out


def annualized_capex_usd(
    capex_usd: ArrayLike, lifetime_years: ArrayLike, rate: ArrayLike = 0.0
) -> ArrayLike:
    """Yearly cost of a capital purchase over its life: ``capex × CRF(r, n)``.

    Parameters
    ----------
    capex_usd : float or ndarray
        Purchase cost, in US dollars.
    lifetime_years : float or ndarray
        Service life, in years.
    rate : float or ndarray
        Cost of capital per year (0: straight-line depreciation).

    Returns
    -------
    float or ndarray
        US dollars per year.

    References
    ----------
    Barroso, Hölzle & Ranganathan (2018), "The Datacenter as a Computer", 3rd ed.,
    Ch. 6.

    Examples
    --------
    A $300,000 server over 4 years straight-line: $75,000 per year.
    """
    return np.multiply(capex_usd, capital_recovery_factor(rate, lifetime_years))


def energy_cost_usd(energy_J: ArrayLike, price_usd_per_kwh: ArrayLike) -> ArrayLike:
    """Cost of electricity: energy (facility, PUE included) × price per kWh.

    Parameters
    ----------
    energy_J : float or ndarray
        Energy, in joules.
    price_usd_per_kwh : float or ndarray
        Electricity price, US dollars per kWh.

    Returns
    -------
    float or ndarray
        US dollars.

    References
    ----------
    Barroso, Hölzle & Ranganathan (2018), "The Datacenter as a Computer", 3rd ed.,
    Ch. 6 (operational expense: power).

    Examples
    --------
    One H100 node's 10.2 kW for a year at PUE 1.2 and $0.08/kWh:
    10.2 · 1.2 · 8,766 · 0.08 = $8,583.7.
    """
    return np.multiply(np.divide(energy_J, 3.6e6), price_usd_per_kwh)


def cost_per_accelerator_hour_usd(
    annual_cost_usd: ArrayLike, accelerators: ArrayLike, utilization: ArrayLike = 1.0
) -> ArrayLike:
    """Cost of one *used* accelerator-hour: yearly cost over the hours actually worked.

    Parameters
    ----------
    annual_cost_usd : float or ndarray
        Total yearly cost of the fleet, US dollars per year.
    accelerators : float or ndarray
        Accelerators in the fleet.
    utilization : float or ndarray
        Fraction of hours the accelerators do paid work, in (0, 1].

    Returns
    -------
    float or ndarray
        US dollars per accelerator-hour.

    References
    ----------
    Barroso, Hölzle & Ranganathan (2018), "The Datacenter as a Computer", 3rd ed.,
    Ch. 6 (TCO divided by utilisation: idle capacity still costs).

    Examples
    --------
    $1.2 M per year for 32 accelerators at 60 % utilisation:
    1.2e6 / (32 · 8,766 · 0.6) = $7.13 per accelerator-hour.
    """
    hours = np.multiply(np.multiply(accelerators, HOURS_PER_YEAR), utilization)
    return np.divide(annual_cost_usd, hours)


def cost_per_million_tokens_usd(cost_per_hour_usd: ArrayLike, tokens_per_s: ArrayLike) -> ArrayLike:
    """Price of a million tokens from an hourly cost and a token rate.

    Parameters
    ----------
    cost_per_hour_usd : float or ndarray
        Cost of running the serving system for an hour, US dollars.
    tokens_per_s : float or ndarray
        Tokens the system produces per second while running.

    Returns
    -------
    float or ndarray
        US dollars per million tokens.

    References
    ----------
    Pope et al. (2022), "Efficiently Scaling Transformer Inference", Sec. 1 (cost per
    token follows from chip-hours and throughput).

    Examples
    --------
    An 8-GPU server at $2.50 per GPU-hour ($20/h) producing 5,000 tokens/s:
    20 / (5,000 · 3,600) · 1e6 = $1.11 per million tokens.
    """
    return np.divide(np.multiply(cost_per_hour_usd, 1e6), np.multiply(tokens_per_s, 3600.0))


def breakeven_utilization(
    fixed_annual_usd: ArrayLike,
    idle_energy_annual_usd: ArrayLike,
    busy_energy_annual_usd: ArrayLike,
    cloud_usd_per_accelerator_hour: ArrayLike,
    accelerators: ArrayLike,
) -> ArrayLike:
    """Utilisation above which owning is cheaper per used hour than renting.

    Owning costs ``F + E₀ + u·(E₁ − E₀)`` a year (fixed costs, energy when idle, when
    busy); renting the same used hours costs ``c · N · 8,766 · u``. They are equal at
    ``u* = (F + E₀) / (c·N·8,766 − (E₁ − E₀))``; ``inf`` when renting is always cheaper.

    Parameters
    ----------
    fixed_annual_usd : float or ndarray
        Amortised capital plus maintenance, US dollars per year.
    idle_energy_annual_usd : float or ndarray
        Energy cost of a year fully idle, US dollars.
    busy_energy_annual_usd : float or ndarray
        Energy cost of a year fully busy, US dollars.
    cloud_usd_per_accelerator_hour : float or ndarray
        Rental price, US dollars per accelerator-hour.
    accelerators : float or ndarray
        Accelerators.

    Returns
    -------
    float or ndarray
        Utilisation ``u*`` (may exceed 1: renting wins at any utilisation).

    References
    ----------
    Barroso, Hölzle & Ranganathan (2018), "The Datacenter as a Computer", 3rd ed.,
    Ch. 6.4 (TCO of owned vs rented capacity depends on utilisation).

    Examples
    --------
    F = $400,000, E₀ = $20,000, E₁ = $60,000, 32 accelerators rented at $4/h:
    420,000 / (4 · 32 · 8,766 − 40,000) = 420,000 / 1,082,048 = 0.3882.
    """
    if _scalars(
        fixed_annual_usd,
        idle_energy_annual_usd,
        busy_energy_annual_usd,
        cloud_usd_per_accelerator_hour,
        accelerators,
    ):
        m = cloud_usd_per_accelerator_hour * accelerators * HOURS_PER_YEAR - (
            busy_energy_annual_usd - idle_energy_annual_usd
        )
        return (fixed_annual_usd + idle_energy_annual_usd) / m if m > 0 else math.inf
    margin = np.subtract(
        np.multiply(np.multiply(cloud_usd_per_accelerator_hour, accelerators), HOURS_PER_YEAR),
        np.subtract(busy_energy_annual_usd, idle_energy_annual_usd),
    )
    with np.errstate(divide="ignore"):
        out = np.where(
            margin > 0, np.add(fixed_annual_usd, idle_energy_annual_usd) / margin, np.inf
        )
    return float(out) if np.ndim(out) == 0 else out
