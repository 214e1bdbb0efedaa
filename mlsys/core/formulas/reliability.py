"""Reliability of large training jobs: failure rates, checkpoint intervals and goodput.

A synchronous training job stops when any one of its devices (or the host, network or
software stack under it) fails, so the job behaves as a *series system*: failure rates
add. With independent, exponentially distributed times to failure a fleet of ``N``
devices each failing at rate ``λ`` per device-second has a mean time between failures
``M = 1 / (N λ)`` (Kokolis et al. 2024 fit exactly this model to Meta's research
clusters). Checkpointing every ``τ`` seconds, at a cost of ``δ`` seconds per checkpoint,
trades the time spent writing checkpoints against the work redone after a failure;
Young (1974) and Daly (2006) give the interval that minimises the sum.

All functions take and return floats or numpy arrays in SI units (seconds, bytes,
failures per second) and broadcast.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "fleet_failure_rate",
    "fleet_mtbf_s",
    "failure_probability",
    "young_checkpoint_interval_s",
    "daly_checkpoint_interval_s",
    "checkpoint_bytes",
    "checkpoint_write_time_s",
    "lost_work_per_failure_s",
    "checkpoint_goodput",
    "daly_expected_wall_time_s",
]

ArrayLike = Any


def _scalars(*xs: Any) -> bool:
    """True when every argument is a plain Python number (the fast, math-only path)."""
    return all(type(x) is float or type(x) is int for x in xs)


def fleet_failure_rate(rate_per_device_s: ArrayLike, devices: ArrayLike) -> ArrayLike:
    """Failure rate of a job spread over ``devices`` devices (a series system).

    Any device's failure interrupts a synchronous job, and with exponential lifetimes
    the rates of independent components add: ``Λ = N · λ``.

    Parameters
    ----------
    rate_per_device_s : float or ndarray
        Interruptions per device per second, all causes summed (hardware of the device,
        its share of host, network and software failures).
    devices : int or ndarray
        Devices (accelerators) the job runs on.

    Returns
    -------
    float or ndarray
        Interruptions per second for the whole job.

    References
    ----------
    Kokolis et al. (2024), "Revisiting Reliability in Large-Scale Machine Learning
    Research Clusters", arXiv:2410.21680, Sec. V (MTTF of a job falls as 1/N).
    Dubey et al. (2024), "The Llama 3 Herd of Models", arXiv:2407.21783, Table 5.

    Examples
    --------
    Llama 3 405B saw 419 unexpected interruptions in 54 days on 16,384 H100: a rate of
    419 / (16,384 × 54 × 24 h) = 1.973e-5 per GPU-hour; times 16,384 GPUs that is
    0.3233 interruptions per hour.
    """
    return np.multiply(rate_per_device_s, devices)


def fleet_mtbf_s(rate_per_device_s: ArrayLike, devices: ArrayLike) -> ArrayLike:
    """Mean time between interruptions of a job on ``devices`` devices.

    ``M = 1 / (N λ)``: the mean of the exponential time to the first failure among
    ``N`` independent devices each failing at rate ``λ``.

    Parameters
    ----------
    rate_per_device_s : float or ndarray
        Interruptions per device per second.
    devices : int or ndarray
        Devices the job spans.

    Returns
    -------
    float or ndarray
        Seconds (``inf`` for a zero rate).

    References
    ----------
    Kokolis et al. (2024), "Revisiting Reliability in Large-Scale Machine Learning
    Research Clusters", arXiv:2410.21680, Sec. V.

    Examples
    --------
    At the Llama 3 rate (419 interruptions per 16,384 × 1,296 GPU-hours), 16,384 GPUs
    see one every 1,296 h / 419 = 3.093 hours (11,135 s).
    """
    with np.errstate(divide="ignore"):
        return np.divide(1.0, fleet_failure_rate(rate_per_device_s, devices))


def failure_probability(duration_s: ArrayLike, mtbf_s: ArrayLike) -> ArrayLike:
    """Probability of at least one failure during a run (exponential lifetimes).

    ``P = 1 − exp(−T / M)``.

    Parameters
    ----------
    duration_s : float or ndarray
        Length of the run, in seconds.
    mtbf_s : float or ndarray
        Mean time between failures of the whole job, in seconds.

    Returns
    -------
    float or ndarray
        Probability in [0, 1].

    References
    ----------
    Barlow & Proschan (1965), "Mathematical Theory of Reliability", Wiley, Ch. 2
    (reliability of the exponential distribution, R(t) = exp(−t/M)).

    Examples
    --------
    A 24-hour run with a 3.093-hour MTBF: 1 − exp(−24/3.093) = 0.99957.
    """
    if _scalars(duration_s, mtbf_s):
        return -math.expm1(-duration_s / mtbf_s)
    return -np.expm1(-np.divide(duration_s, mtbf_s))


def young_checkpoint_interval_s(checkpoint_time_s: ArrayLike, mtbf_s: ArrayLike) -> ArrayLike:
    """Young's first-order optimum checkpoint interval, ``τ = √(2 δ M)``.

    Minimises checkpoint cost ``δ/τ`` plus expected rework ``τ/(2M)`` per unit of work.

    Parameters
    ----------
    checkpoint_time_s : float or ndarray
        Time δ to write one checkpoint, in seconds.
    mtbf_s : float or ndarray
        Mean time between failures M, in seconds.

    Returns
    -------
    float or ndarray
        Compute time between checkpoints, in seconds.

    References
    ----------
    Young (1974), "A first order approximation to the optimum checkpoint interval",
    Communications of the ACM 17(9), 530–531, Eq. (1).

    Examples
    --------
    δ = 60 s, M = 24 h = 86,400 s: τ = √(2 · 60 · 86,400) = 3,219.9 s (53.7 min).
    """
    if _scalars(checkpoint_time_s, mtbf_s):
        return math.sqrt(2.0 * checkpoint_time_s * mtbf_s)
    return np.sqrt(np.multiply(2.0, np.multiply(checkpoint_time_s, mtbf_s)))


def daly_checkpoint_interval_s(checkpoint_time_s: ArrayLike, mtbf_s: ArrayLike) -> ArrayLike:
    """Daly's higher-order optimum checkpoint interval.

    ``τ = √(2δM)·[1 + ⅓·√(δ/(2M)) + (1/9)·(δ/(2M))] − δ`` for ``δ < 2M``, else ``τ = M``.

    Parameters
    ----------
    checkpoint_time_s : float or ndarray
        Time δ to write one checkpoint, in seconds.
    mtbf_s : float or ndarray
        Mean time between failures M, in seconds.

    Returns
    -------
    float or ndarray
        Compute time between checkpoints, in seconds.

    References
    ----------
    Daly (2006), "A higher order estimate of the optimum checkpoint interval for
    restart dumps", Future Generation Computer Systems 22(3), 303–312, Eq. (37).

    Examples
    --------
    δ = 60 s, M = 86,400 s: x = δ/(2M) = 3.472e-4, so
    τ = 3,219.94 · (1 + 0.0062113 + 0.0000386) − 60 = 3,180.06 s.
    """
    if _scalars(checkpoint_time_s, mtbf_s):
        d, mm = float(checkpoint_time_s), float(mtbf_s)
        if d >= 2.0 * mm:
            return mm
        x = d / (2.0 * mm)
        return math.sqrt(2.0 * d * mm) * (1.0 + math.sqrt(x) / 3.0 + x / 9.0) - d
    delta = np.asarray(checkpoint_time_s, dtype=float)
    m = np.asarray(mtbf_s, dtype=float)
    x = delta / (2.0 * m)
    tau = np.sqrt(2.0 * delta * m) * (1.0 + np.sqrt(x) / 3.0 + x / 9.0) - delta
    out = np.where(delta < 2.0 * m, tau, m)
    return float(out) if out.ndim == 0 else out


def checkpoint_bytes(params: ArrayLike, bytes_per_param: ArrayLike = 14.0) -> ArrayLike:
    """Bytes of one full training checkpoint.

    Mixed-precision Adam keeps 16-bit weights (2 bytes), an fp32 master copy (4) and two
    fp32 moments (4 + 4): 14 bytes per parameter are written. The fp16 gradients that
    ZeRO counts in its 16 bytes per parameter are not checkpointed.

    Parameters
    ----------
    params : float or ndarray
        Parameter count.
    bytes_per_param : float or ndarray
        Checkpointed bytes per parameter.

    Returns
    -------
    float or ndarray
        Bytes.

    References
    ----------
    Rajbhandari et al. (2020), "ZeRO: Memory Optimizations Toward Training Trillion
    Parameter Models", SC'20, Sec. 3.1 (2Ψ weights + KΨ optimizer state, K = 12).

    Examples
    --------
    Llama 3 405B (405e9 parameters) at 14 bytes/param: 5.67e12 bytes (5.67 TB).
    """
    return np.multiply(params, bytes_per_param)


def checkpoint_write_time_s(
    checkpoint_bytes: ArrayLike, storage_bandwidth_Bps: ArrayLike
) -> ArrayLike:
    """Time δ to write a checkpoint at an aggregate storage bandwidth.

    Parameters
    ----------
    checkpoint_bytes : float or ndarray
        Checkpoint size, in bytes.
    storage_bandwidth_Bps : float or ndarray
        Aggregate write bandwidth of the storage system, in bytes per second.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Dubey et al. (2024), "The Llama 3 Herd of Models", arXiv:2407.21783, Sec. 3.3.1
    (Tectonic: 2 TB/s sustained, 7 TB/s peak, sized for checkpoint bursts).

    Examples
    --------
    5.67e12 bytes at 2 TB/s sustained: δ = 2.835 s.
    """
    return np.divide(checkpoint_bytes, storage_bandwidth_Bps)


def lost_work_per_failure_s(interval_s: ArrayLike, restart_time_s: ArrayLike) -> ArrayLike:
    """Expected time lost to one failure: half an interval of rework plus the restart.

    A failure lands, on average, halfway between two checkpoints, so ``τ/2`` of
    computation is redone; the job also waits ``R`` to restart (reschedule, reload the
    checkpoint, warm up).

    Parameters
    ----------
    interval_s : float or ndarray
        Compute time τ between checkpoints, in seconds.
    restart_time_s : float or ndarray
        Time R from the failure to computing again, in seconds.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Young (1974), "A first order approximation to the optimum checkpoint interval",
    Communications of the ACM 17(9) (rework of τ/2 per failure).

    Examples
    --------
    τ = 3,600 s, R = 600 s: 1,800 + 600 = 2,400 s per failure.
    """
    return np.add(np.multiply(0.5, interval_s), restart_time_s)


def checkpoint_goodput(
    interval_s: ArrayLike,
    checkpoint_time_s: ArrayLike,
    mtbf_s: ArrayLike,
    restart_time_s: ArrayLike = 0.0,
) -> ArrayLike:
    """Fraction of wall-clock time spent on useful (kept) computation, first order.

    Per unit of useful work the job also writes checkpoints (``δ/τ``), and per unit of
    wall time it fails ``1/M`` times, each costing ``τ/2 + R``. Solving
    ``W = T(1 + δ/τ) + (W/M)(τ/2 + R)`` for ``T/W`` gives::

        goodput = (1 − (τ/2 + R)/M) / (1 + δ/τ)

    clipped at zero when failures come faster than the job can recover.

    Parameters
    ----------
    interval_s : float or ndarray
        Compute time τ between checkpoints, in seconds.
    checkpoint_time_s : float or ndarray
        Blocking time δ of one checkpoint, in seconds.
    mtbf_s : float or ndarray
        Mean time between failures M of the job, in seconds.
    restart_time_s : float or ndarray
        Restart time R after each failure, in seconds.

    Returns
    -------
    float or ndarray
        Fraction in [0, 1].

    References
    ----------
    Young (1974), Communications of the ACM 17(9); Daly (2006), Future Generation
    Computer Systems 22(3), Sec. 3 (the first-order wall-time model).

    Examples
    --------
    τ = 3,600 s, δ = 60 s, M = 86,400 s, R = 600 s:
    (1 − 2,400/86,400) / (1 + 60/3,600) = 0.97222 / 1.016667 = 0.95628.
    """
    loss = np.divide(lost_work_per_failure_s(interval_s, restart_time_s), mtbf_s)
    out = np.maximum(0.0, 1.0 - loss) / (1.0 + np.divide(checkpoint_time_s, interval_s))
    return float(out) if np.ndim(out) == 0 else out


def daly_expected_wall_time_s(
    solve_time_s: ArrayLike,
    interval_s: ArrayLike,
    checkpoint_time_s: ArrayLike,
    mtbf_s: ArrayLike,
    restart_time_s: ArrayLike = 0.0,
) -> ArrayLike:
    """Expected wall-clock time of a checkpointed job, exact for exponential failures.

    ``T_w = M · e^{R/M} · (e^{(τ+δ)/M} − 1) · T_s / τ``: failures may strike during
    computation, checkpoints and restarts alike. For ``τ, δ, R ≪ M`` it reduces to the
    first-order model of :func:`checkpoint_goodput`.

    Parameters
    ----------
    solve_time_s : float or ndarray
        Failure-free compute time T_s of the job, in seconds.
    interval_s : float or ndarray
        Compute time τ between checkpoints, in seconds.
    checkpoint_time_s : float or ndarray
        Time δ of one checkpoint, in seconds.
    mtbf_s : float or ndarray
        Mean time between failures M, in seconds.
    restart_time_s : float or ndarray
        Restart time R, in seconds.

    Returns
    -------
    float or ndarray
        Seconds of wall-clock time.

    References
    ----------
    Daly (2006), "A higher order estimate of the optimum checkpoint interval for
    restart dumps", Future Generation Computer Systems 22(3), Eq. (20).

    Examples
    --------
    T_s = 10 days = 864,000 s, τ = 3,600 s, δ = 60 s, M = 86,400 s, R = 600 s:
    86,400 · e^{600/86,400} · (e^{3,660/86,400} − 1) · 240 = 903,523 s (10.46 days).
    """
    if _scalars(solve_time_s, interval_s, checkpoint_time_s, mtbf_s, restart_time_s):
        try:
            return (
                mtbf_s
                * math.exp(restart_time_s / mtbf_s)
                * math.expm1((interval_s + checkpoint_time_s) / mtbf_s)
                * (solve_time_s / interval_s)
            )
        except OverflowError:
            return math.inf
    m = np.asarray(mtbf_s, dtype=float)
    out = (
        m
        * np.exp(np.divide(restart_time_s, m))
        * np.expm1(np.add(interval_s, checkpoint_time_s) / m)
        * np.divide(solve_time_s, interval_s)
    )
    return float(out) if np.ndim(out) == 0 else out
