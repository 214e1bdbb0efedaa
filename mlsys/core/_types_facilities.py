"""Facilities: :class:`GridProfile` (an electricity grid) and :class:`Datacenter`.

Part of :mod:`mlsys.core.types`, which imports this module when one of its classes is
first asked for (``from mlsys.core.types import Datacenter`` works as always): creating a
pydantic model class costs about a millisecond, and a book's first formatted number needs
only :class:`~mlsys.core.types.Accelerator`. Conventions (dense peaks, per-direction
link bandwidths, SI bytes) are those stated in :mod:`mlsys.core.types`.
"""

from __future__ import annotations

from functools import cached_property

from pydantic import Field

from mlsys.core._types_core import CarbonIntensity, EnergyPrice, WaterIntensity, _Model
from mlsys.core.units import as_si

__all__ = ["GridProfile", "Datacenter"]


class GridProfile(_Model):
    """An electricity grid region.

    Attributes
    ----------
    region : str
        Where (country, state or balancing authority).
    year : int or None
        Year the figures describe.
    carbon_intensity : Quantity [kgCO2e/kWh]
        Location-based average emission factor of consumed electricity.
    water_intensity : Quantity [L/kWh]
        Water consumed off-site to generate one kWh (scope-2 water), if known.
    electricity_price : Quantity [USD/kWh]
        Typical industrial / data-centre electricity price.
    """

    region: str = ""
    year: int | None = None
    carbon_intensity: CarbonIntensity
    water_intensity: WaterIntensity | None = None
    electricity_price: EnergyPrice | None = None

    @cached_property
    def carbon_kg_per_kwh(self) -> float:
        """Carbon intensity in kg CO2e per kWh (float)."""
        return as_si(self.carbon_intensity, "kgCO2e/kWh")

    @cached_property
    def water_L_per_kwh(self) -> float:
        """Off-site water intensity in litres per kWh (0 when unknown)."""
        return 0.0 if self.water_intensity is None else as_si(self.water_intensity, "L/kWh")

    @cached_property
    def price_usd_per_kwh(self) -> float | None:
        """Electricity price in US dollars per kWh, or None."""
        if self.electricity_price is None:
            return None
        return as_si(self.electricity_price, "USD/kWh")


class Datacenter(_Model):
    """A facility: its overheads and the grid that feeds it.

    Attributes
    ----------
    pue : float
        Power usage effectiveness: facility energy / IT energy (>= 1).
    wue : Quantity [L/kWh]
        On-site water usage effectiveness: litres per kWh of IT energy.
    grid : GridProfile
        The grid the facility draws from.
    location : str
        Where.
    """

    pue: float = Field(ge=1.0)
    wue: WaterIntensity = Field(default_factory=lambda: 0.0)
    grid: GridProfile
    location: str = ""

    @cached_property
    def wue_L_per_kwh(self) -> float:
        """On-site water usage in litres per kWh of IT energy (float)."""
        return as_si(self.wue, "L/kWh")


# Documented, linked and pickled as mlsys.core.types.<name>, where users import them from
# (the reference's inventory, objects.json, names them so). Set after the classes are
# created: pydantic has resolved their annotations in this module by then.
for _cls in (GridProfile, Datacenter):
    _cls.__module__ = "mlsys.core.types"
del _cls
