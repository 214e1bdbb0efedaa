"""Energy, carbon and water of a training or serving job.

:class:`SustainabilityModel` follows Patterson et al. (2021): energy = accelerator-hours
× average power per accelerator × PUE, carbon = energy × the grid's (location-based)
intensity; it adds the host's and network's share of power, on-site and off-site water
(Li et al. 2023) and, optionally, amortised embodied carbon.
"""

from __future__ import annotations

import math
from numbers import Real
from typing import Any, ClassVar

from mlsys.core.errors import ParameterError
from mlsys.core.formulas.sustainability import (
    J_PER_KWH,
    amortized_embodied_carbon_kg,
    utilization_power_W,
)
from mlsys.core.provenance import record
from mlsys.core.results import Result
from mlsys.core.solvers._checks import one_si, positive_int

__all__ = [
    "DEFAULT_PUE",
    "DEFAULT_CARBON_KG_PER_KWH",
    "DEFAULT_IDLE_FRACTION",
    "DEFAULT_LIFETIME_S",
    "SustainabilityModel",
    "SustainabilityResult",
]

DEFAULT_PUE = 1.58
"""PUE used when neither ``pue`` nor a ``datacenter`` is given: the industry-wide average
of the Uptime Institute Global Data Center Survey 2023 (an average, not a best case)."""

DEFAULT_CARBON_KG_PER_KWH = 0.429
"""Grid intensity used when no grid is given: the US average Patterson et al. (2021,
Table 4) applied to GPT-3, in kg CO2e per kWh."""

DEFAULT_IDLE_FRACTION = 0.15
"""Idle power as a fraction of TDP when the catalog has no idle figure (an estimate:
idle data-centre GPUs read roughly 10–20 % of board power). Matters only when
``utilization < 1``."""

DEFAULT_LIFETIME_S = 6 * 365.25 * 86400.0
"""Service life over which embodied carbon is amortised: six years, as Luccioni et al.
(2023, Sec. 4.1) assume for BLOOM's GPUs."""

_HOUR = 3600.0


class SustainabilityResult(Result):
    """Energy, carbon and water of one job.

    Attributes
    ----------
    accelerators : int or None
        Accelerators the job runs on (None when only accelerator-hours were given).
    duration : float [s] or None
        Wall-clock time of the job (None when only accelerator-hours were given).
    accelerator_hours : float [hour]
        Accelerator-time the job uses.
    accelerator_power : float [W]
        Average power of one accelerator (measured, or idle + u·(TDP − idle)).
    idle_accelerator_power : float [W] or None
        Idle power of one accelerator in the power model (None with a measured power).
    host_power : float [W]
        Host power charged to each accelerator (its node's host power / accelerators
        per node, or as given).
    network_power : float [W]
        Network power charged to each accelerator.
    power_per_accelerator : float [W]
        IT power per accelerator: the three above summed.
    it_power : float [W] or None
        IT power of the whole job (None without a device count).
    it_energy : float [J]
        Energy of the IT equipment.
    pue : float
        Power usage effectiveness applied.
    energy : float [J]
        Facility energy, ``it_energy × pue``.
    carbon_intensity : float [kgCO2e/kWh]
        Grid intensity applied (location-based).
    operational_carbon : float [kgCO2e]
        ``energy × carbon_intensity``.
    embodied_carbon : float [kgCO2e]
        Amortised manufacturing emissions of the accelerators (0 without a figure).
    carbon : float [kgCO2e]
        Operational plus embodied.
    water_onsite : float [L]
        Cooling water, ``it_energy × WUE``.
    water_offsite : float [L]
        Water of electricity generation, ``energy × grid water intensity``.
    water : float [L]
        On-site plus off-site.
    """

    _units: ClassVar[dict[str, str | None]] = {
        "accelerators": None,
        "duration": "s",
        "accelerator_hours": "hour",
        "accelerator_power": "W",
        "idle_accelerator_power": "W",
        "host_power": "W",
        "network_power": "W",
        "power_per_accelerator": "W",
        "it_power": "W",
        "it_energy": "J",
        "pue": None,
        "energy": "J",
        "carbon_intensity": "kgCO2e/kWh",
        "operational_carbon": "kgCO2e",
        "embodied_carbon": "kgCO2e",
        "carbon": "kgCO2e",
        "water_onsite": "L",
        "water_offsite": "L",
        "water": "L",
    }


def _accelerator(fleet: Any, accelerator: Any) -> Any:
    if fleet is not None and not hasattr(fleet, "total_accelerators"):
        raise ParameterError("fleet", fleet, "a Fleet (or give accelerator= and accelerators=)")
    if accelerator is None:
        return getattr(fleet, "accelerator", None)
    if isinstance(accelerator, str):
        from mlsys.core.catalog import Hardware

        accelerator = Hardware[accelerator]
    if not hasattr(accelerator, "tdp_W"):
        raise ParameterError("accelerator", accelerator, "an Accelerator or a catalog name")
    own = getattr(fleet, "accelerator", None)
    if own is not None and accelerator is not own and accelerator != own:
        # A fleet of H100 nodes does not become an A100 fleet by a keyword: refuse
        # rather than price one device with another's host power and count.
        raise ParameterError(
            "accelerator",
            accelerator.label,
            f"None or the fleet's own accelerator ({own.label})",
            "To model another device, pass accelerator= and accelerators= without a fleet.",
        )
    return accelerator


def _facility(datacenter: Any, grid: Any) -> None:
    """Refuse a facility passed where a grid is expected, and the other way round."""
    if grid is not None and not hasattr(grid, "carbon_kg_per_kwh"):
        hint = (
            "A Datacenter goes in datacenter=; it brings its PUE, WUE and grid."
            if hasattr(grid, "pue")
            else None
        )
        raise ParameterError("grid", getattr(grid, "label", grid), "a GridProfile (Grids.*)", hint)
    if datacenter is not None and not hasattr(datacenter, "pue"):
        hint = "A GridProfile goes in grid=." if hasattr(datacenter, "carbon_kg_per_kwh") else None
        raise ParameterError(
            "datacenter",
            getattr(datacenter, "label", datacenter),
            "a Datacenter (Datacenters.*)",
            hint,
        )


def _count(fleet: Any, accelerators: Any) -> int | None:
    if accelerators is not None:
        return positive_int("accelerators", accelerators)
    if fleet is None:
        return None
    total = getattr(fleet, "total_accelerators", None)
    if total is None:
        raise ParameterError("fleet", fleet, "a Fleet (or give accelerator= and accelerators=)")
    return int(total)


def _device_seconds(
    acc: Any, fleet: Any, accelerators: Any, duration: Any, accelerator_hours: Any
) -> tuple[int | None, float | None, float]:
    """The accelerator count, the wall-clock duration (s) and the accelerator-time
    (device-seconds) of the job: ``accelerator_hours`` if given, else duration × count."""
    n = _count(fleet, accelerators)
    if n is None and acc is not None and accelerator_hours is None:
        n = 1
    t = None if duration is None else one_si(duration, "s", "duration")
    if accelerator_hours is not None:
        device_s = one_si(accelerator_hours, "hour", "accelerator_hours") * _HOUR
    elif t is not None and n is not None:
        device_s = t * n
    else:
        raise ParameterError(
            "duration",
            duration,
            "a duration with a fleet (or accelerator and accelerators), or accelerator_hours",
        )
    return n, t, device_s


def _power(
    acc: Any,
    fleet: Any,
    utilization: Any,
    power_per_accelerator: Any,
    idle_power: Any,
    host_power: Any,
) -> tuple[float, float | None, float]:
    """Average power (W) of one accelerator, its idle power (None when measured) and
    its host share: the measured ``power_per_accelerator``, else the linear
    utilisation model between idle power and TDP (:func:`utilization_power_W`)."""
    u = utilization
    if isinstance(u, bool) or not isinstance(u, Real) or not 0.0 <= u <= 1.0:
        raise ParameterError("utilization", utilization, "a fraction in [0, 1]")
    if power_per_accelerator is not None:
        p_acc = one_si(power_per_accelerator, "W", "power_per_accelerator")
        p_host = 0.0 if host_power is None else one_si(host_power, "W", "host_power")
        return p_acc, None, p_host
    if acc is None:
        raise ParameterError(
            "power_per_accelerator",
            None,
            "a measured power, or an accelerator / fleet whose TDP models it",
        )
    tdp = acc.tdp_W
    if idle_power is not None:
        idle = one_si(idle_power, "W", "idle_power")
    elif acc.idle_power_W is not None:
        idle = acc.idle_power_W
    else:
        idle = DEFAULT_IDLE_FRACTION * tdp
    p_acc = float(utilization_power_W(float(u), tdp, idle))
    if host_power is not None:
        p_host = one_si(host_power, "W", "host_power")
    elif fleet is not None and hasattr(fleet, "node"):
        p_host = fleet.node.host_power_W / fleet.node.accelerators_per_node
    else:
        p_host = 0.0
    return p_acc, idle, p_host


def _facility_factors(
    datacenter: Any,
    grid: Any,
    pue: Any,
    carbon_intensity: Any,
    wue: Any,
    grid_water_intensity: Any,
) -> tuple[float, float, float, float]:
    """PUE, carbon intensity (kgCO2e/kWh), on-site WUE and off-site water intensity
    (L/kWh): each given value, else the data centre's or grid's, else the default."""
    grid_obj = grid if grid is not None else getattr(datacenter, "grid", None)
    if pue is not None:
        pue_v = one_si(pue, "dimensionless", "pue")
    else:
        pue_v = datacenter.pue if datacenter is not None else DEFAULT_PUE
    if pue_v < 1.0:
        raise ParameterError("pue", pue, "a number >= 1 (facility energy / IT energy)")
    if carbon_intensity is not None:
        ci = one_si(carbon_intensity, "kgCO2e/kWh", "carbon_intensity")
    elif grid_obj is not None:
        ci = grid_obj.carbon_kg_per_kwh
    else:
        ci = DEFAULT_CARBON_KG_PER_KWH
    if wue is not None:
        wue_v = one_si(wue, "L/kWh", "wue")
    else:
        wue_v = datacenter.wue_L_per_kwh if datacenter is not None else 0.0
    if grid_water_intensity is not None:
        gw = one_si(grid_water_intensity, "L/kWh", "grid_water_intensity")
    else:
        gw = grid_obj.water_L_per_kwh if grid_obj is not None else 0.0
    return pue_v, ci, wue_v, gw


def _embodied_kg(acc: Any, embodied_carbon: Any, lifetime: Any, device_s: float) -> float:
    """Embodied carbon (kgCO2e) of one accelerator's manufacture amortised over the
    job's accelerator-time (:func:`amortized_embodied_carbon_kg`); 0 when unknown."""
    per_device = (
        one_si(embodied_carbon, "kgCO2e", "embodied_carbon")
        if embodied_carbon is not None
        else getattr(acc, "embodied_carbon_kg", None)
    )
    # checked even without embodied carbon to amortise: a bad value is a mistake
    life = (
        DEFAULT_LIFETIME_S
        if lifetime is None
        else one_si(lifetime, "s", "lifetime", allow_zero=False)
    )
    if per_device:
        return float(amortized_embodied_carbon_kg(per_device, 1.0, device_s, life))
    return 0.0


class SustainabilityModel:
    """Energy, carbon and water of a job on a fleet, from its power and its facility.

    Power per accelerator is either measured (``power_per_accelerator``, Patterson et
    al.'s "measured W per chip", which already includes its share of the server) or
    modelled: the accelerator at ``utilization`` between idle and TDP, plus its node's
    host power shared per accelerator, plus any network power. Facility overhead is the
    PUE; carbon is location-based; water is on-site (WUE) plus off-site (grid).

    Examples
    --------
    GPT-3 (Patterson et al. 2021, Table 4): 10,000 V100 at 330 W for 14.8 days, PUE
    1.10, 0.429 kg/kWh gives 1,289 MWh and 553 tCO2e (published 1,287 and 552.1).

    >>> from mlsys import SustainabilityModel, Q_
    >>> res = SustainabilityModel().solve(
    ...     duration=Q_(14.8, "day"), accelerators=10_000,
    ...     power_per_accelerator=Q_(330, "W"), pue=1.10,
    ...     carbon_intensity=Q_(0.429, "kgCO2e/kWh"))
    >>> round(res.energy.to("MWh").magnitude)
    1289
    """

    def solve(
        self,
        fleet: Any = None,
        duration: Any = None,
        *,
        accelerator: Any = None,
        accelerators: Any = None,
        accelerator_hours: Any = None,
        power_per_accelerator: Any = None,
        utilization: float = 1.0,
        idle_power: Any = None,
        host_power: Any = None,
        network_power: Any = 0.0,
        datacenter: Any = None,
        grid: Any = None,
        pue: Any = None,
        carbon_intensity: Any = None,
        wue: Any = None,
        grid_water_intensity: Any = None,
        embodied_carbon: Any = None,
        lifetime: Any = None,
    ) -> SustainabilityResult:
        """Solve for energy, carbon and water.

        Give the job's size one of three ways: a ``fleet`` (or ``accelerator`` and
        ``accelerators``) with a ``duration``; ``accelerator_hours``; or either of those
        with a measured ``power_per_accelerator``.

        Parameters
        ----------
        fleet : Fleet, optional
            The cluster; supplies the accelerator, the count and the host power.
        duration : Quantity [time] or float [s], optional
            Wall-clock time of the job.
        accelerator : Accelerator or str, optional
            The accelerator (or its catalog name) when no fleet is given.
        accelerators : int, optional
            Number of accelerators (overrides the fleet's count; default 1 with
            ``accelerator``).
        accelerator_hours : Quantity [time] or float [hour], optional
            Accelerator-time of the job (a plain number is in **hours**); replaces
            ``duration × accelerators``.
        power_per_accelerator : Quantity [power] or float [W], optional
            Measured average power per accelerator, its share of the server included;
            replaces the accelerator / host power model.
        utilization : float
            Accelerator activity in [0, 1] for the power model (default 1: TDP).
        idle_power : Quantity [power] or float [W], optional
            Idle power of one accelerator (default: the catalog's, else 15 % of TDP).
        host_power : Quantity [power] or float [W], optional
            Host power per accelerator (default: the fleet's node host power shared
            over its accelerators; 0 without a fleet or with a measured power).
        network_power : Quantity [power] or float [W]
            Network power per accelerator (switches, optics), default 0.
        datacenter : Datacenter, optional
            Supplies PUE, WUE and the grid.
        grid : GridProfile, optional
            Supplies carbon and water intensity (overrides the data centre's grid).
        pue : float, optional
            Power usage effectiveness ≥ 1 (default: the data centre's, else
            :data:`DEFAULT_PUE`).
        carbon_intensity : Quantity [kgCO2e/kWh] or float, optional
            Grid intensity (default: the grid's, else :data:`DEFAULT_CARBON_KG_PER_KWH`).
        wue : Quantity [L/kWh] or float, optional
            On-site water per kWh of IT energy (default: the data centre's, else 0).
        grid_water_intensity : Quantity [L/kWh] or float, optional
            Off-site water per kWh generated (default: the grid's, else 0).
        embodied_carbon : Quantity [kgCO2e] or float [kg], optional
            Manufacturing footprint of one accelerator (default: the catalog's, else
            none counted).
        lifetime : Quantity [time] or float [s], optional
            Service life for amortising embodied carbon (default six years).

        Returns
        -------
        SustainabilityResult

        Raises
        ------
        ParameterError
            When the job's size or power cannot be determined, or on a negative power,
            a PUE below 1, or a utilisation outside [0, 1]; when ``accelerator`` is not
            the fleet's own accelerator (the fleet is not silently re-equipped); when
            ``grid`` is not a GridProfile (a Datacenter belongs in ``datacenter``).
        """
        acc = _accelerator(fleet, accelerator)
        _facility(datacenter, grid)
        n, t, device_s = _device_seconds(acc, fleet, accelerators, duration, accelerator_hours)
        p_acc, idle, p_host = _power(
            acc, fleet, utilization, power_per_accelerator, idle_power, host_power
        )
        p_net = one_si(network_power, "W", "network_power")
        p_total = p_acc + p_host + p_net
        pue_v, ci, wue_v, gw = _facility_factors(
            datacenter, grid, pue, carbon_intensity, wue, grid_water_intensity
        )
        it_energy = p_total * device_s
        energy = it_energy * pue_v
        op_carbon = energy / J_PER_KWH * ci
        embodied = _embodied_kg(acc, embodied_carbon, lifetime, device_s)
        water_on = it_energy / J_PER_KWH * wue_v
        water_off = energy / J_PER_KWH * gw
        if not math.isfinite(energy + op_carbon + embodied + water_on + water_off):
            # each input is finite, their product is not: never print "inf kWh"
            raise ParameterError(
                "power × duration × pue",
                energy,
                "an energy a float can hold (below 1.8e308 J): check the inputs' units",
            )
        result = SustainabilityResult(
            accelerators=n,
            duration=t,
            accelerator_hours=device_s / _HOUR,
            accelerator_power=p_acc,
            idle_accelerator_power=idle,
            host_power=p_host,
            network_power=p_net,
            power_per_accelerator=p_total,
            it_power=None if n is None else p_total * n,
            it_energy=it_energy,
            pue=pue_v,
            energy=energy,
            carbon_intensity=ci,
            operational_carbon=op_carbon,
            embodied_carbon=embodied,
            carbon=op_carbon + embodied,
            water_onsite=water_on,
            water_offsite=water_off,
            water=water_on + water_off,
        )
        return record(
            result,
            self,
            fleet=fleet,
            accelerator=acc if fleet is None else None,
            accelerators=accelerators,
            duration=duration,
            accelerator_hours=accelerator_hours,
            power_per_accelerator=power_per_accelerator,
            utilization=utilization,
            pue=pue,
            datacenter=datacenter,
            grid=grid,
        )
