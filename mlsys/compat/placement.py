"""The textbook's carbon-aware placement: where a fleet's run costs least.

*Machine Learning Systems* (harvard-edge/cs249r_book) asks
``PlacementOptimizer().solve(Systems.Clusters.Frontier_8K, duration_days=...,
regions=["US_Avg", "Quebec", "Iowa"], carbon_tax_per_ton=100, mfu=...)`` for the region of
least total cost. mlsys prices each region with its own sustainability physics
(:class:`mlsys.SustainabilityModel`) and the region's electricity price.
"""

from __future__ import annotations

from typing import Any

from mlsys.compat._unwrap import as_catalog
from mlsys.core.solvers.sustainability import SustainabilityModel as _Sustainability

__all__ = ["PlacementOptimizer", "PlacementResult"]

#: The regions and carbon price the book's ``PlacementOptimizer.solve`` compares by default
#: (mlsysim/engine/solver.py at e0fde03).
_BOOK_REGIONS: tuple[str, ...] = ("US_Avg", "Quebec", "Iowa")
_BOOK_CARBON_TAX_USD_PER_TON = 100.0


class PlacementResult:
    """Where a fleet's run costs least: the book's ``PlacementOptimizer`` answer.

    Attributes
    ----------
    best_region : str
        The region (a name of ``Infrastructure.Grids``) of least total cost.
    objective_value : float
        Its total cost in USD (energy plus carbon price).
    regions : dict
        Region -> ``{"energy_mwh", "carbon_t", "energy_cost_usd", "carbon_cost_usd",
        "total_usd"}``.
    """

    def __init__(self, regions: dict[str, dict[str, float]]) -> None:
        self.regions = regions
        self.best_region = min(regions, key=lambda name: regions[name]["total_usd"])
        self.objective_value = regions[self.best_region]["total_usd"]

    def __repr__(self) -> str:
        return f"<PlacementResult best={self.best_region} total={self.objective_value:,.0f} USD>"


class PlacementOptimizer:
    """The book's carbon-aware placement: the region where a run's energy and carbon cost least."""

    def solve(
        self,
        fleet: Any,
        duration_days: Any,
        regions: list[str] | tuple[str, ...] = _BOOK_REGIONS,
        carbon_tax_per_ton: float = _BOOK_CARBON_TAX_USD_PER_TON,
        mfu: Any = None,
        electricity_price: Any = None,
    ) -> PlacementResult:
        """Price the run in each region and pick the cheapest.

        ``total = E · price_region + C · carbon_tax``: the facility energy ``E`` and the
        operational carbon ``C`` of :class:`mlsys.SustainabilityModel` for the fleet
        over the duration at the region's grid intensity and facility PUE, the region's
        electricity price (else ``electricity_price``, else the book's cloud price
        ``Infrastructure.Pricing.Cloud.ElectricityPerKwh``) and a price per tonne of CO2e.

        Parameters
        ----------
        fleet : Fleet or a book cluster
            ``Systems.Clusters.Frontier_8K`` or an mlsys Fleet.
        duration_days : float or pint.Quantity
            Length of the run (a plain number is days).
        regions : list of str, optional
            Names of ``Infrastructure.Grids`` (``"US_Avg"``, ``"Quebec"``, catalog keys);
            default the book's three, US_Avg, Quebec and Iowa.
        carbon_tax_per_ton : float, optional
            USD per tonne of CO2e; default the book's 100.
        mfu : float, optional
            The accelerators' utilization, passed to the power model (default 1).
        electricity_price : float or pint.Quantity, optional
            USD per kWh where a region states none.

        Returns
        -------
        PlacementResult

        Raises
        ------
        ParameterError
            For an empty region list or an unknown region.

        References
        ----------
        Radovanović et al. (2022), "Carbon-Aware Computing for Datacenters", IEEE Trans.
        Power Systems 38(2): shifting load to where and when grid carbon is low; energy
        and carbon are :class:`mlsys.SustainabilityModel`'s.
        """
        from mlsys._book_formulas import _fraction, _number
        from mlsys.compat.systems import Infrastructure
        from mlsys.core.errors import ParameterError

        if not regions or isinstance(regions, str):
            raise ParameterError("regions", regions, "a non-empty list of region names")
        days = _number(duration_days, "day", "duration_days", allow_zero=False)
        tax = _number(carbon_tax_per_ton, "dimensionless", "carbon_tax_per_ton")
        utilization = 1.0 if mfu is None else _fraction(mfu, "mfu", allow_zero=False)
        default_price = (
            Infrastructure.Pricing.Cloud.ElectricityPerKwh.rate.m_as("1/kWh")
            if electricity_price is None
            else _number(electricity_price, "1/kWh", "electricity_price")
        )
        fleet = as_catalog(fleet)
        out: dict[str, dict[str, float]] = {}
        for name in regions:
            out[name] = _region_cost(
                fleet, getattr(Infrastructure.Grids, name), days, utilization, tax, default_price
            )
        return PlacementResult(out)


def _region_cost(
    fleet: Any, region: Any, days: float, utilization: float, tax: float, default_price: float
) -> dict[str, float]:
    from mlsys.core.units import Q_

    res = _Sustainability().solve(
        fleet,
        Q_(days, "day"),
        carbon_intensity=Q_(region.carbon_intensity_g_kwh, "gCO2e/kWh"),
        pue=getattr(region, "pue", None),
        utilization=utilization,
    )
    price = getattr(getattr(region, "entry", None), "electricity_price", None)
    per_kwh = default_price if price is None else float(price.m_as("USD/kWh"))
    energy_kwh = float(res.energy.m_as("kWh"))
    carbon_t = float(res.operational_carbon.m_as("tCO2e"))
    energy_cost, carbon_cost = energy_kwh * per_kwh, carbon_t * tax
    return {
        "energy_mwh": energy_kwh / 1e3,
        "carbon_t": carbon_t,
        "energy_cost_usd": energy_cost,
        "carbon_cost_usd": carbon_cost,
        "total_usd": energy_cost + carbon_cost,
    }
