"""Energy, carbon and water of computing: power models, PUE, grid intensity, embodied carbon.

The chain is Patterson et al. (2021): energy = device-hours × average power per device
× PUE; operational carbon = energy × the grid's carbon intensity. Water has an on-site
part (cooling, WUE per kWh of IT energy) and an off-site part (the water consumed to
generate the facility's electricity: grid water intensity × IT energy × PUE; Li et al.
2023). Embodied carbon is the manufacturing footprint, charged to a job in proportion
to the share of the devices' service life it uses.

All functions take and return floats or numpy arrays in SI units (W, s, J, kgCO2e,
litres) — except that grid intensities are per kWh, as every source quotes them — and
broadcast.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "J_PER_KWH",
    "utilization_power_W",
    "it_energy_J",
    "facility_energy_J",
    "operational_carbon_kg",
    "water_consumption_L",
    "amortized_embodied_carbon_kg",
]

ArrayLike = Any

J_PER_KWH = 3.6e6
"""Joules in one kilowatt-hour."""


def utilization_power_W(utilization: ArrayLike, tdp_W: ArrayLike, idle_W: ArrayLike) -> ArrayLike:
    """Average power of a device at a utilisation, linear between idle and TDP.

    ``P = P_idle + u · (P_tdp − P_idle)``: the linear server power model that fits
    measured servers well (Fan, Weber & Barroso 2007) applied to one accelerator.

    Parameters
    ----------
    utilization : float or ndarray
        Fraction of peak activity, in [0, 1].
    tdp_W : float or ndarray
        Board power at full load (TDP), in watts.
    idle_W : float or ndarray
        Power when idle, in watts.

    Returns
    -------
    float or ndarray
        Watts.

    References
    ----------
    Fan, Weber & Barroso (2007), "Power Provisioning for a Warehouse-sized Computer",
    ISCA'07, Sec. 4.1, Eq. (1) (P(u) = P_idle + (P_busy − P_idle)·u).

    Examples
    --------
    An H100 (700 W TDP) idling at 100 W, 60 % utilised: 100 + 0.6 · 600 = 460 W.
    """
    if all(type(x) is float or type(x) is int for x in (utilization, tdp_W, idle_W)):
        return idle_W + utilization * (tdp_W - idle_W)  # scalar fast path
    return np.add(idle_W, np.multiply(utilization, np.subtract(tdp_W, idle_W)))


def it_energy_J(power_W: ArrayLike, duration_s: ArrayLike, devices: ArrayLike = 1) -> ArrayLike:
    """Energy the IT equipment draws: devices × average power × time.

    Parameters
    ----------
    power_W : float or ndarray
        Average power of one device (including its share of host and network when the
        caller wants them counted), in watts.
    duration_s : float or ndarray
        Time, in seconds.
    devices : float or ndarray
        Number of devices.

    Returns
    -------
    float or ndarray
        Joules.

    References
    ----------
    Patterson et al. (2021), "Carbon Emissions and Large Neural Network Training",
    arXiv:2104.10350, Sec. 2 (energy = training hours × processors × average power).

    Examples
    --------
    10,000 V100 at 330 W for 14.8 days: 10,000 · 330 · 1,278,720 s = 4.2198e12 J
    (1,172 MWh before PUE).
    """
    return np.multiply(np.multiply(power_W, duration_s), devices)


def facility_energy_J(it_energy_J: ArrayLike, pue: ArrayLike) -> ArrayLike:
    """Energy the whole facility draws: IT energy × power usage effectiveness.

    Parameters
    ----------
    it_energy_J : float or ndarray
        IT (server) energy, in joules.
    pue : float or ndarray
        Power usage effectiveness, facility energy / IT energy (≥ 1).

    Returns
    -------
    float or ndarray
        Joules.

    References
    ----------
    The Green Grid (2012), "PUE: A Comprehensive Examination of the Metric", White
    Paper 49, Eq. (1). Patterson et al. (2021), Table 4 (applies PUE the same way).

    Examples
    --------
    4.2198e12 J of IT energy at PUE 1.10: 4.6418e12 J = 1,289 MWh (GPT-3; the paper
    prints 1,287 MWh).
    """
    return np.multiply(it_energy_J, pue)


def operational_carbon_kg(energy_J: ArrayLike, carbon_kg_per_kwh: ArrayLike) -> ArrayLike:
    """Location-based operational emissions: facility energy × grid carbon intensity.

    Parameters
    ----------
    energy_J : float or ndarray
        Facility energy, in joules.
    carbon_kg_per_kwh : float or ndarray
        Grid emission factor, in kg CO2e per kWh.

    Returns
    -------
    float or ndarray
        kg CO2e.

    References
    ----------
    Patterson et al. (2021), "Carbon Emissions and Large Neural Network Training",
    Sec. 2 (tCO2e = MWh × tCO2e per MWh) and Table 4.

    Examples
    --------
    1,289.4 MWh at 0.429 kg/kWh: 553,140 kg = 553.1 tCO2e (GPT-3; paper 552.1 t).
    """
    return np.multiply(np.divide(energy_J, J_PER_KWH), carbon_kg_per_kwh)


def water_consumption_L(
    it_energy_J: ArrayLike,
    wue_L_per_kwh: ArrayLike,
    grid_water_L_per_kwh: ArrayLike = 0.0,
    pue: ArrayLike = 1.0,
) -> ArrayLike:
    """Water consumed: on-site cooling plus off-site electricity generation.

    ``W = E_IT · WUE + E_IT · PUE · EWIF``: WUE is defined per kWh of IT energy, while
    the power plants supply the facility's whole draw.

    Parameters
    ----------
    it_energy_J : float or ndarray
        IT energy, in joules.
    wue_L_per_kwh : float or ndarray
        On-site water usage effectiveness, litres per kWh of IT energy.
    grid_water_L_per_kwh : float or ndarray
        Water consumed per kWh generated by the grid (EWIF), litres per kWh.
    pue : float or ndarray
        Power usage effectiveness.

    Returns
    -------
    float or ndarray
        Litres.

    References
    ----------
    Li, Yang, Islam & Ren (2023), "Making AI Less 'Thirsty': Uncovering and Addressing
    the Secret Water Footprint of AI Models", arXiv:2304.03271, Eq. (1).
    The Green Grid (2011), "Water Usage Effectiveness (WUE)", White Paper 35.

    Examples
    --------
    1,000 kWh of IT energy, WUE 0.55 L/kWh, grid 3.14 L/kWh, PUE 1.2:
    550 + 1,000 · 1.2 · 3.14 = 4,318 L.
    """
    kwh = np.divide(it_energy_J, J_PER_KWH)
    return np.add(
        np.multiply(kwh, wue_L_per_kwh), np.multiply(np.multiply(kwh, pue), grid_water_L_per_kwh)
    )


def amortized_embodied_carbon_kg(
    embodied_kg: ArrayLike,
    devices: ArrayLike,
    duration_s: ArrayLike,
    lifetime_s: ArrayLike,
) -> ArrayLike:
    """Share of devices' manufacturing emissions a job is charged, linear in time used.

    ``C = devices · C_embodied · T / T_life``.

    Parameters
    ----------
    embodied_kg : float or ndarray
        Embodied (manufacturing) carbon of one device, in kg CO2e.
    devices : float or ndarray
        Devices the job occupies.
    duration_s : float or ndarray
        Time the job occupies them, in seconds.
    lifetime_s : float or ndarray
        Service life over which the footprint is amortised, in seconds.

    Returns
    -------
    float or ndarray
        kg CO2e.

    References
    ----------
    Gupta et al. (2021), "Chasing Carbon: The Elusive Environmental Footprint of
    Computing", HPCA'21, Sec. II (embodied vs operational carbon).
    Luccioni, Viguier & Ligozat (2023), "Estimating the Carbon Footprint of BLOOM, a
    176B Parameter Language Model", JMLR 24, Sec. 4.1 (linear amortisation over a
    six-year life).

    Examples
    --------
    384 GPUs at 150 kg each, used 118 days of a 6-year life:
    384 · 150 · 118 / 2,191.5 = 3,101 kg CO2e.
    """
    return np.multiply(np.multiply(embodied_kg, devices), np.divide(duration_s, lifetime_s))
