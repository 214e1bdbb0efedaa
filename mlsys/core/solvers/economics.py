"""Total cost of ownership of an accelerator fleet, and what a run or a token costs.

:class:`EconomicsModel` adds up capital (accelerators or nodes, network, facility),
amortised over a service life with an optional cost of capital, and operating cost
(energy from :class:`~mlsys.core.solvers.sustainability.SustainabilityModel`, and
maintenance), then prices an accelerator-hour, a training run and a million tokens
served — next to the same work rented at a cloud provider's hourly rate.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any, ClassVar

from mlsys.core.errors import ParameterError
from mlsys.core.formulas.economics import (
    HOURS_PER_YEAR,
    breakeven_utilization,
    capital_recovery_factor,
)
from mlsys.core.provenance import record
from mlsys.core.results import Result
from mlsys.core.solvers._checks import one_si, positive_int
from mlsys.core.solvers.sustainability import SustainabilityModel

__all__ = [
    "CLOUD_PRICES_USD_PER_HOUR",
    "DEFAULT_ELECTRICITY_PRICE_USD_PER_KWH",
    "DEFAULT_NETWORK_COST_FRACTION",
    "DEFAULT_LIFETIME_YEARS",
    "EconomicsModel",
    "EconomicsResult",
]

CLOUD_PRICES_USD_PER_HOUR: dict[str, float] = {
    "H100": 98.32 / 8,
    "A100_80GB": 40.97 / 8,
    "A100_40GB": 32.77 / 8,
    "V100": 24.48 / 8,
}
"""On-demand cloud list prices per accelerator-hour (estimates, for comparison only).

AWS EC2 on-demand list prices, us-east-1, 2023, divided by the instance's 8 GPUs:
p5.48xlarge (8× H100) $98.32/h; p4de.24xlarge (8× A100 80GB) $40.97/h; p4d.24xlarge
(8× A100 40GB) $32.77/h; p3.16xlarge (8× V100) $24.48/h
(https://aws.amazon.com/ec2/pricing/on-demand/). Prices change (AWS cut P5 prices in
2025) and reserved or spot capacity is cheaper: pass ``cloud_price`` for a current
figure.
"""

DEFAULT_ELECTRICITY_PRICE_USD_PER_KWH = 0.08
"""Electricity price when no grid price is given: about the US industrial average of
2023 (EIA, Electric Power Monthly, Table 5.3: ~8 ¢/kWh), an estimate."""

DEFAULT_NETWORK_COST_FRACTION = 0.10
"""Scale-out network (NICs, switches, optics) as a fraction of compute capital when no
per-port cost is given: an estimate of the usual 10–20 % share, at its low end."""

DEFAULT_LIFETIME_YEARS = 5.0
"""Service life for amortisation: five years, in the range hyperscalers state for
servers (Alphabet and Microsoft moved to six years in 2022; Meta 5.5) — an estimate."""

_YEAR_S = HOURS_PER_YEAR * 3600.0


class EconomicsResult(Result):
    """Capital, operating cost and unit prices of a fleet.

    Attributes
    ----------
    accelerators : int
        Accelerators in the fleet.
    compute_capex : float [USD]
        Nodes (or accelerators) bought.
    network_capex : float [USD]
        Scale-out network bought.
    capex : float [USD]
        ``(compute + network) × facility_multiplier``.
    lifetime : float [year]
        Amortisation life.
    cost_of_capital : float
        Yearly rate used in the capital recovery factor.
    annual_capex : float [USD/year]
        ``capex × CRF``.
    annual_energy : float [J/year]
        Facility energy per year at the stated utilisation (PUE included).
    electricity_price : float [USD/kWh]
        Price applied.
    annual_energy_cost : float [USD/year]
        Energy times price.
    annual_maintenance : float [USD/year]
        ``maintenance_fraction × capex``.
    annual_tco : float [USD/year]
        Capital, energy and maintenance per year.
    utilization : float
        Fraction of hours the fleet does paid work.
    tco_per_accelerator_hour : float [USD/hour]
        Owned cost of one used accelerator-hour.
    training_duration : float [s] or None
        Wall-clock time of the priced run, if any.
    training_run_cost : float [USD] or None
        Owned cost of that run (its accelerator-hours at the owned hourly cost).
    tokens_per_second : float [token/s] or None
        Serving throughput priced, if any.
    cost_per_million_tokens : float [USD] or None
        Owned cost of a million tokens at that throughput.
    cloud_price_per_accelerator_hour : float [USD/hour] or None
        Rental price compared with (given, or a list price estimate).
    cloud_training_run_cost : float [USD] or None
        The same run rented.
    cloud_cost_per_million_tokens : float [USD] or None
        A million tokens on rented accelerators.
    breakeven_utilization : float or None
        Utilisation above which owning is cheaper per used hour than renting
        (``inf``: renting is always cheaper).
    """

    _units: ClassVar[dict[str, str | None]] = {
        "accelerators": None,
        "compute_capex": "USD",
        "network_capex": "USD",
        "capex": "USD",
        "lifetime": "year",
        "cost_of_capital": None,
        "annual_capex": "USD/year",
        "annual_energy": "J/year",
        "electricity_price": "USD/kWh",
        "annual_energy_cost": "USD/year",
        "annual_maintenance": "USD/year",
        "annual_tco": "USD/year",
        "utilization": None,
        "tco_per_accelerator_hour": "USD/hour",
        "training_duration": "s",
        "training_run_cost": "USD",
        "tokens_per_second": "token/s",
        "cost_per_million_tokens": "USD",
        "cloud_price_per_accelerator_hour": "USD/hour",
        "cloud_training_run_cost": "USD",
        "cloud_cost_per_million_tokens": "USD",
        "breakeven_utilization": None,
    }


def _number(name: str, value: Any, allowed: str, low: float, high: float | None) -> float:
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ParameterError(name, value, allowed)
    x = float(value)
    if not math.isfinite(x) or not x >= low or (high is not None and x > high):
        raise ParameterError(name, value, allowed)
    return x


def _duration(training_duration: Any, step_time: Any, steps: Any) -> float | None:
    if training_duration is not None:
        return one_si(training_duration, "s", "training_duration", allow_zero=False)
    if step_time is None and steps is None:
        return None
    if step_time is None or steps is None:
        raise ParameterError(
            "steps" if steps is None else "step_time",
            None,
            "both step_time and steps (or a training_duration)",
        )
    if isinstance(step_time, Result):
        t = float(step_time.si("step_time"))
    else:
        t = one_si(step_time, "s", "step_time", allow_zero=False)
    return t * positive_int("steps", steps)


def _fleet_size(fleet: Any, accelerator: Any, accelerators: Any) -> tuple[Any, int]:
    """The accelerator priced (a catalog name looked up) and how many there are."""
    acc = accelerator
    if isinstance(acc, str):
        from mlsys.core.catalog import Hardware

        acc = Hardware[acc]
    if acc is None and fleet is not None:
        acc = getattr(fleet, "accelerator", None)
    if accelerators is not None:
        return acc, positive_int("accelerators", accelerators)
    if fleet is not None:
        total = getattr(fleet, "total_accelerators", None)
        if total is None:
            raise ParameterError("fleet", fleet, "a Fleet (or accelerator= and accelerators=)")
        return acc, int(total)
    if acc is not None:
        return acc, 1
    raise ParameterError("fleet", None, "a Fleet, or an accelerator and a count")


def _checked_rates(
    utilization: Any,
    facility_multiplier: Any,
    cost_of_capital: Any,
    maintenance_fraction: Any,
    lifetime: Any,
) -> tuple[float, float, float, float, float]:
    """Utilisation, facility factor, yearly rates and life (years), checked."""
    u = _number("utilization", utilization, "a fraction in (0, 1]", 0.0, 1.0)
    if u == 0.0:
        raise ParameterError("utilization", utilization, "a fraction in (0, 1]")
    fac = _number("facility_multiplier", facility_multiplier, "a factor >= 1", 1.0, None)
    rate = _number("cost_of_capital", cost_of_capital, "a yearly rate >= 0", 0.0, None)
    maint = _number(
        "maintenance_fraction", maintenance_fraction, "a yearly fraction >= 0", 0.0, None
    )
    life = (
        DEFAULT_LIFETIME_YEARS
        if lifetime is None
        else one_si(lifetime, "year", "lifetime", allow_zero=False)
    )
    return u, fac, rate, maint, life


def _compute_capex(fleet: Any, acc: Any, n: int, node_price: Any, accelerator_price: Any) -> float:
    """Capital of the compute (USD): nodes when a node price is known, else accelerators."""
    node = getattr(fleet, "node", None)
    per_node = getattr(node, "accelerators_per_node", None)
    if node_price is not None:
        price_node = one_si(node_price, "USD", "node_price")
    elif accelerator_price is None and node is not None:
        price_node = node.unit_price_usd
    else:
        price_node = None
    if price_node is not None:
        if not per_node:
            raise ParameterError("node_price", node_price, "a price with a Fleet to count nodes")
        return price_node * n / per_node
    if accelerator_price is not None:
        price_acc = one_si(accelerator_price, "USD", "accelerator_price")
    else:
        price_acc = getattr(acc, "unit_price_usd", None)
    if price_acc is None:
        raise ParameterError(
            "accelerator_price",
            None,
            "a price, or a catalog accelerator / node with a unit_price",
        )
    return price_acc * n


def _network_capex(
    compute: float, n: int, ports_per_accelerator: Any, share: Any, cost_per_port: Any
) -> float:
    """Capital of the network (USD): per port when priced, else a share of compute."""
    # both checked, though one is used: a bad value is a mistake either way
    ports = _number("ports_per_accelerator", ports_per_accelerator, "a number >= 0", 0, None)
    fraction = _number("network_cost_fraction", share, "a fraction >= 0", 0, None)
    if cost_per_port is not None:
        return one_si(cost_per_port, "USD", "network_cost_per_port") * ports * n
    return compute * fraction


def _busy_and_idle_energy(
    fleet: Any, acc: Any, n: int, power_per_accelerator: Any, datacenter: Any, pue: Any
) -> tuple[float, float]:
    """A year's facility energy (J) of the fleet always busy and always idle."""
    year = SustainabilityModel().solve(
        fleet,
        _YEAR_S,
        accelerator=acc,
        accelerators=n,
        utilization=1.0,
        power_per_accelerator=power_per_accelerator,
        datacenter=datacenter,
        pue=pue,
    )
    busy = year.si("energy")
    idle_w = year.si("idle_accelerator_power")
    if idle_w is None:
        return busy, busy  # a measured power has no idle figure: charge it all year
    return busy, busy - n * (year.si("accelerator_power") - idle_w) * year.si("pue") * _YEAR_S


def _electricity_price(electricity_price: Any, datacenter: Any) -> float:
    """USD per kWh: given, else the data centre's grid price, else the default."""
    if electricity_price is not None:
        return one_si(electricity_price, "USD/kWh", "electricity_price")
    grid_price = getattr(getattr(datacenter, "grid", None), "price_usd_per_kwh", None)
    return DEFAULT_ELECTRICITY_PRICE_USD_PER_KWH if grid_price is None else grid_price


def _cloud_price(cloud_price: Any, acc: Any) -> float | None:
    """USD per accelerator-hour rented: given, else the list price of a catalog device."""
    if cloud_price is not None:
        return one_si(cloud_price, "USD/hour", "cloud_price", allow_zero=False)
    return CLOUD_PRICES_USD_PER_HOUR.get(getattr(acc, "name", ""))


def _per_million_tokens(hourly: float | None, n: int, tps: float | None) -> float | None:
    """USD per million tokens of ``n`` accelerators at ``hourly`` each, ``tps`` in all."""
    if hourly is None or tps is None:
        return None
    return hourly * n * 1e6 / (tps * 3600.0)


class EconomicsModel:
    """Total cost of ownership per year, per accelerator-hour, per run and per token.

    Capital: nodes at their price (or accelerators at theirs), plus the network (a
    fraction of compute, or a price per port), times a facility multiplier, amortised
    over ``lifetime`` with a cost of capital (capital recovery factor; 0 gives
    straight-line). Operating: facility energy from the SustainabilityModel (busy for
    ``utilization`` of the hours, idle otherwise) at an electricity price, plus
    maintenance as a yearly fraction of capital. Unit costs divide by the hours the
    fleet does paid work; a cloud hourly rate prices the same work rented.

    Examples
    --------
    >>> from mlsys import EconomicsModel, Q_
    >>> res = EconomicsModel().solve(accelerator="H100", accelerators=1024,
    ...                              accelerator_price=Q_(30_000, "USD"))
    >>> res.capex.to("USD").magnitude   # 1024 x 30,000 x 1.10 (network)
    33792000.0
    """

    def solve(
        self,
        fleet: Any = None,
        *,
        accelerator: Any = None,
        accelerators: Any = None,
        accelerator_price: Any = None,
        node_price: Any = None,
        network_cost_fraction: float = DEFAULT_NETWORK_COST_FRACTION,
        network_cost_per_port: Any = None,
        ports_per_accelerator: float = 1.0,
        facility_multiplier: float = 1.0,
        lifetime: Any = None,
        cost_of_capital: float = 0.0,
        maintenance_fraction: float = 0.0,
        utilization: float = 1.0,
        electricity_price: Any = None,
        power_per_accelerator: Any = None,
        datacenter: Any = None,
        pue: Any = None,
        training_duration: Any = None,
        step_time: Any = None,
        steps: Any = None,
        tokens_per_second: Any = None,
        cloud_price: Any = None,
    ) -> EconomicsResult:
        """Solve for the fleet's costs.

        Parameters
        ----------
        fleet : Fleet, optional
            The cluster (its node price and count, accelerator, host power).
        accelerator : Accelerator or str, optional
            The accelerator when no fleet is given.
        accelerators : int, optional
            Number of accelerators (overrides the fleet's; default 1 with
            ``accelerator``).
        accelerator_price : Quantity [USD] or float, optional
            Price of one accelerator (default: the catalog's). Used when no node price
            is known; then the servers around the accelerators are not counted.
        node_price : Quantity [USD] or float, optional
            Price of one node, accelerators included (default: the fleet node's).
        network_cost_fraction : float
            Network capital as a fraction of compute capital (default 0.10, an
            estimate), when no per-port cost is given.
        network_cost_per_port : Quantity [USD] or float, optional
            Price of one network port (NIC, switch port and optics).
        ports_per_accelerator : float
            Network ports per accelerator (1 for rail-optimised clusters).
        facility_multiplier : float
            Factor ≥ 1 on compute and network capital for the building, power and
            cooling (1: facility not counted, e.g. colocation paid separately).
        lifetime : Quantity [time] or float [year], optional
            Amortisation life (a plain number is in **years**; default 5).
        cost_of_capital : float
            Yearly rate (0.08 for 8 %); 0 gives straight-line depreciation.
        maintenance_fraction : float
            Yearly maintenance and support as a fraction of capital.
        utilization : float
            Fraction of hours the fleet does paid work, in (0, 1].
        electricity_price : Quantity [USD/kWh] or float [USD/kWh], optional
            Default: the data centre's grid price, else 0.08 USD/kWh (estimate).
        power_per_accelerator : Quantity [power] or float [W], optional
            Measured power per accelerator, host share included (else modelled).
        datacenter : Datacenter, optional
            Supplies PUE and the grid's price.
        pue : float, optional
            Power usage effectiveness (default: the data centre's, else 1.58).
        training_duration : Quantity [time] or float [s], optional
            Wall-clock time of a training run to price.
        step_time : Quantity [time], float [s] or a result with ``step_time``, optional
            Step time of the run (e.g. a DistributedResult); with ``steps``.
        steps : int, optional
            Steps of the run.
        tokens_per_second : Quantity [token/s] or float, optional
            Serving throughput of the whole fleet, to price a million tokens.
        cloud_price : Quantity [USD/hour] or float [USD per accelerator-hour], optional
            Rental price (default: :data:`CLOUD_PRICES_USD_PER_HOUR` for catalog
            accelerators it lists, else no cloud comparison).

        Returns
        -------
        EconomicsResult

        Raises
        ------
        ParameterError
            On a negative price, a zero or negative life, a utilisation outside
            (0, 1], a facility multiplier below 1, or no price to start from.
        """
        acc, n = _fleet_size(fleet, accelerator, accelerators)
        u, fac, rate, maint, life = _checked_rates(
            utilization, facility_multiplier, cost_of_capital, maintenance_fraction, lifetime
        )
        # -- capital ------------------------------------------------------------------
        compute = _compute_capex(fleet, acc, n, node_price, accelerator_price)
        network = _network_capex(
            compute, n, ports_per_accelerator, network_cost_fraction, network_cost_per_port
        )
        capex = (compute + network) * fac
        annual_capex = capex * float(capital_recovery_factor(rate, life))
        # -- energy -------------------------------------------------------------------
        busy, idle = _busy_and_idle_energy(fleet, acc, n, power_per_accelerator, datacenter, pue)
        price_kwh = _electricity_price(electricity_price, datacenter)
        energy = idle + u * (busy - idle)
        energy_cost = energy / 3.6e6 * price_kwh
        annual_maint = maint * capex
        annual_tco = annual_capex + energy_cost + annual_maint
        per_hour = annual_tco / (n * HOURS_PER_YEAR * u)
        # -- unit costs ---------------------------------------------------------------
        duration = _duration(training_duration, step_time, steps)
        tps = (
            None
            if tokens_per_second is None
            else one_si(tokens_per_second, "token/s", "tokens_per_second", allow_zero=False)
        )
        cloud = _cloud_price(cloud_price, acc)
        fleet_hours = None if duration is None else n * duration / 3600.0
        breakeven = None
        if cloud is not None:
            breakeven = float(
                breakeven_utilization(
                    annual_capex + annual_maint,
                    idle / 3.6e6 * price_kwh,
                    busy / 3.6e6 * price_kwh,
                    cloud,
                    n,
                )
            )
        if not math.isfinite(annual_tco) or (breakeven is not None and math.isnan(breakeven)):
            # each input is finite, the totals are not: never print "inf $/yr"
            raise ParameterError(
                "prices, rates and power",
                annual_tco,
                "a yearly cost a float can hold (below 1.8e308 USD): check the inputs' units",
            )
        result = EconomicsResult(
            accelerators=n,
            compute_capex=compute,
            network_capex=network,
            capex=capex,
            lifetime=life,
            cost_of_capital=rate,
            annual_capex=annual_capex,
            annual_energy=energy,
            electricity_price=price_kwh,
            annual_energy_cost=energy_cost,
            annual_maintenance=annual_maint,
            annual_tco=annual_tco,
            utilization=u,
            tco_per_accelerator_hour=per_hour,
            training_duration=duration,
            training_run_cost=None if fleet_hours is None else fleet_hours * per_hour,
            tokens_per_second=tps,
            cost_per_million_tokens=_per_million_tokens(per_hour, n, tps),
            cloud_price_per_accelerator_hour=cloud,
            cloud_training_run_cost=(
                None if fleet_hours is None or cloud is None else fleet_hours * cloud
            ),
            cloud_cost_per_million_tokens=_per_million_tokens(cloud, n, tps),
            breakeven_utilization=breakeven,
        )
        return record(
            result,
            self,
            fleet=fleet,
            accelerator=accelerator,
            accelerators=accelerators,
            datacenter=datacenter,
            training_duration=training_duration,
        )
