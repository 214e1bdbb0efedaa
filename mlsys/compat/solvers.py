"""mlsys's solvers under the textbook's call shapes: they take the book's registry views.

*Machine Learning Systems* (harvard-edge/cs249r_book) calls
``DistributedModel().solve(Models.Language.Llama3_8B, Systems.Clusters.Research_256,
batch_size=1024, ..., overlap_comm=True)`` and ``ServingModel().solve(model, hardware,
seq_len=4096, batch_size=32)``: its arguments are the book's views
(:class:`~mlsys.compat.models.BookModel`, :class:`~mlsys.compat.systems.BookCluster`, ...)
and two keywords have other names in mlsys. Each class here IS mlsys's solver (a
subclass: same physics, same results); its ``solve`` first turns every view into the
catalog object it shows (:func:`as_catalog`) and the book's keywords into mlsys's
(``overlap_comm`` -> ``overlap``; the serving ``seq_len`` -> ``prompt_len``). mlsys's own
arguments pass through unchanged.
"""

from __future__ import annotations

from typing import Any

from mlsys.core.solvers.distributed import DistributedModel as _Distributed
from mlsys.core.solvers.economics import EconomicsModel as _Economics
from mlsys.core.solvers.reliability import ReliabilityModel as _Reliability
from mlsys.core.solvers.roofline import SingleNodeModel as _SingleNode
from mlsys.core.solvers.serving import ServingModel as _Serving
from mlsys.core.solvers.sustainability import SustainabilityModel as _Sustainability

__all__ = [
    "as_catalog",
    "DistributedModel",
    "ServingModel",
    "SingleNodeModel",
    "ReliabilityModel",
    "SustainabilityModel",
    "EconomicsModel",
    "PlacementOptimizer",
    "PlacementResult",
]


def as_catalog(value: Any) -> Any:
    """The catalog object a view of the book's registries shows (anything else unchanged).

    Parameters
    ----------
    value : object
        A book view: a model (its catalog workload, or a ``Workload`` of its cited
        figures), an accelerator or node (the catalog entry), a book device (its
        :meth:`~mlsys.compat.hardware.BookDevice.as_accelerator`), a cluster (a
        :class:`~mlsys.core.types.Fleet` of its nodes on its fabric), a fabric or grid.

    Returns
    -------
    object
        What mlsys's solvers take.
    """
    from mlsys.compat.hardware import BookAccelerator, BookDevice
    from mlsys.compat.models import BookModel
    from mlsys.compat.systems import BookCluster, BookFabric, BookGrid, BookNode

    if isinstance(value, BookModel):
        return value.as_workload()
    if isinstance(value, BookDevice):
        return value.as_accelerator()
    if isinstance(value, (BookAccelerator, BookNode, BookFabric, BookGrid)):
        return value.entry
    if isinstance(value, BookCluster):
        from mlsys.core.types import Fleet

        return Fleet(node=value.node.entry, count=value.count, fabric=value.fabric.entry)
    return value


def _catalog_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple, dict]:
    return tuple(as_catalog(a) for a in args), {k: as_catalog(v) for k, v in kwargs.items()}


def _renamed(kwargs: dict[str, Any], book: str, ours: str) -> dict[str, Any]:
    if book in kwargs:
        from mlsys.core.errors import ParameterError

        if ours in kwargs:
            raise ParameterError(book, kwargs[book], f"either {book}= or {ours}=, not both")
        kwargs[ours] = kwargs.pop(book)
    return kwargs


class DistributedModel(_Distributed):
    """:class:`mlsys.DistributedModel`, taking the book's views and ``overlap_comm=``."""

    def solve(self, *args: Any, **kwargs: Any) -> Any:
        """Solve as :meth:`mlsys.DistributedModel.solve`.

        Parameters
        ----------
        *args, **kwargs
            As :meth:`mlsys.DistributedModel.solve`; views of the book's registries are
            accepted (:func:`as_catalog`) and ``overlap_comm`` is ``overlap``.

        Returns
        -------
        DistributedResult
        """
        args, kwargs = _catalog_args(args, _renamed(dict(kwargs), "overlap_comm", "overlap"))
        return super().solve(*args, **kwargs)


class ServingModel(_Serving):
    """:class:`mlsys.ServingModel`, taking the book's views and its ``seq_len=``."""

    def solve(self, *args: Any, **kwargs: Any) -> Any:
        """Solve as :meth:`mlsys.ServingModel.solve`.

        Parameters
        ----------
        *args, **kwargs
            As :meth:`mlsys.ServingModel.solve`; views of the book's registries are
            accepted and the book's ``seq_len`` (the context a request brings) is
            ``prompt_len``.

        Returns
        -------
        ServingResult
        """
        args, kwargs = _catalog_args(args, _renamed(dict(kwargs), "seq_len", "prompt_len"))
        return super().solve(*args, **kwargs)


def _passing_views(base: type) -> type:
    def solve(self: Any, *args: Any, **kwargs: Any) -> Any:
        args, kwargs = _catalog_args(args, dict(kwargs))
        return base.solve(self, *args, **kwargs)

    solve.__doc__ = (
        f"Solve as :meth:`mlsys.{base.__name__}.solve`, views of the book's registries "
        "accepted (:func:`as_catalog`).\n\n"
        "Parameters\n----------\n*args, **kwargs\n"
        f"    As :meth:`mlsys.{base.__name__}.solve`.\n\n"
        f"Returns\n-------\nobject\n    The result of :meth:`mlsys.{base.__name__}.solve`.\n"
    )
    doc = f":class:`mlsys.{base.__name__}`, taking the book's registry views."
    return type(base.__name__, (base,), {"solve": solve, "__doc__": doc, "__module__": __name__})


SingleNodeModel = _passing_views(_SingleNode)
ReliabilityModel = _passing_views(_Reliability)
SustainabilityModel = _passing_views(_Sustainability)
EconomicsModel = _passing_views(_Economics)


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
        regions: list[str],
        carbon_tax_per_ton: float = 0.0,
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
        regions : list of str
            Names of ``Infrastructure.Grids`` (``"US_Avg"``, ``"Quebec"``, catalog keys).
        carbon_tax_per_ton : float
            USD per tonne of CO2e.
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
