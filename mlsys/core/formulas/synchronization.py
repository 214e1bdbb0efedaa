"""Synchronous, asynchronous and local SGD under stragglers.

A synchronous step ends when the slowest worker finishes, so its expected duration is the
expected *maximum* of the workers' step times — which grows with the number of workers
even when each one is rarely slow (Dean & Barroso 2013). Backup workers (Chen et al.
2016) wait only for the first ``n`` of ``n + b``. Asynchronous SGD never waits, at the
cost of gradients computed on stale parameters; local SGD waits once every ``H`` steps.

All functions take and return floats or numpy arrays in SI units and broadcast.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__ = [
    "harmonic_number",
    "two_point_expected_max_s",
    "two_point_backup_step_s",
    "shifted_exponential_expected_max_s",
    "shifted_exponential_backup_step_s",
    "async_throughput",
    "async_mean_staleness",
    "local_sgd_step_time_s",
]

ArrayLike = Any

_EULER_GAMMA = 0.5772156649015329
_H_TABLE = np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, 65))))
_H_LIST = _H_TABLE.tolist()
_LGAMMA = np.frompyfunc(math.lgamma, 1, 1)


def _scalars(*xs: Any) -> bool:
    """True when every argument is a plain Python number (the fast, math-only path)."""
    return all(type(x) is float or type(x) is int for x in xs)


def harmonic_number(n: ArrayLike) -> ArrayLike:
    """The harmonic number ``H_n = 1 + 1/2 + … + 1/n`` (``H_0 = 0``).

    Exact sums up to ``n = 64``; above, the asymptotic series
    ``ln n + γ + 1/(2n) − 1/(12n²) + 1/(120n⁴)`` (error below 1e-12).

    Parameters
    ----------
    n : int or ndarray
        Non-negative integers.

    Returns
    -------
    float or ndarray
        ``H_n``.

    References
    ----------
    Graham, Knuth & Patashnik (1994), "Concrete Mathematics", 2nd ed., Eq. (9.89).

    Examples
    --------
    ``H_8 = 761/280 = 2.717857``; ``H_1000 = 7.485471``.
    """
    if _scalars(n):
        if n <= 64:
            return _H_LIST[int(n)]
        return math.log(n) + _EULER_GAMMA + 1 / (2 * n) - 1 / (12 * n**2) + 1 / (120 * n**4)
    arr = np.asarray(n, dtype=float)
    small = np.clip(arr, 0, 64).astype(int)
    big = np.maximum(arr, 1.0)
    asym = np.log(big) + _EULER_GAMMA + 1 / (2 * big) - 1 / (12 * big**2) + 1 / (120 * big**4)
    out = np.where(arr <= 64, _H_TABLE[small], asym)
    return float(out) if out.ndim == 0 else out


def two_point_expected_max_s(
    step_time_s: ArrayLike, slowdown: ArrayLike, slow_probability: ArrayLike, workers: ArrayLike
) -> ArrayLike:
    """Expected synchronous step time when each worker is slow with probability ``q``.

    Each step a worker takes ``t`` or, with probability ``q``, ``s·t``. The step takes
    ``s·t`` unless all ``n`` workers are fast::

        E[max] = t · (1 + (s − 1) · (1 − (1 − q)^n))

    Parameters
    ----------
    step_time_s : float or ndarray
        Compute time of a fast worker's step, in seconds.
    slowdown : float or ndarray
        Factor ``s ≥ 1`` a slow worker's step takes longer.
    slow_probability : float or ndarray
        Probability ``q`` that a worker is slow in a step.
    workers : int or ndarray
        Workers ``n`` synchronised each step.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Dean & Barroso (2013), "The Tail at Scale", Communications of the ACM 56(2), 74–80
    (a 1-in-100 slow server makes 63 % of 100-way fan-outs slow: 1 − 0.99^100).

    Examples
    --------
    t = 1 s, s = 2, q = 1 %, n = 100: 1 + 1 · (1 − 0.99^100) = 1.634 s.
    """
    if _scalars(step_time_s, slowdown, slow_probability, workers):
        p = -math.expm1(workers * math.log1p(-slow_probability))
        return step_time_s * (1.0 + (slowdown - 1.0) * p)
    p_any = -np.expm1(np.multiply(workers, np.log1p(-np.asarray(slow_probability, float))))
    out = np.multiply(step_time_s, 1.0 + np.multiply(np.subtract(slowdown, 1.0), p_any))
    return float(out) if np.ndim(out) == 0 else out


def _binomial_tail(total: int, q: float, b: int) -> float:
    """``P[Binomial(total, q) > b]``, summed in log space over the shorter side.

    Each term is ``exp(ln C(total, k) + k ln q + (total − k) ln(1 − q))`` (no integer
    binomial coefficient past the float range), and the sum runs over ``k ≤ b`` or
    ``k > b``, whichever has fewer terms: at most ``min(b, total − b) + 1`` of them.
    """
    if q <= 0.0 or b >= total:
        return 0.0
    if q >= 1.0:
        return 1.0
    log_q, log_p = math.log(q), math.log1p(-q)
    lg_total = math.lgamma(total + 1.0)

    def term(k: int) -> float:
        log_comb = lg_total - math.lgamma(k + 1.0) - math.lgamma(total - k + 1.0)
        return math.exp(log_comb + k * log_q + (total - k) * log_p)

    if b + 1 <= total - b:
        return min(1.0, max(0.0, 1.0 - math.fsum(term(k) for k in range(b + 1))))
    return min(1.0, max(0.0, math.fsum(term(k) for k in range(b + 1, total + 1))))


def two_point_backup_step_s(
    step_time_s: ArrayLike,
    slowdown: ArrayLike,
    slow_probability: ArrayLike,
    workers: ArrayLike,
    backup_workers: ArrayLike,
) -> ArrayLike:
    """Expected step time waiting for the first ``n`` of ``n + b`` workers, two-point.

    The step is slow only if more than ``b`` of the ``n + b`` workers are slow:
    ``t · (1 + (s − 1) · P[Binomial(n + b, q) > b])``.

    Parameters
    ----------
    step_time_s : float or ndarray
        Compute time of a fast worker's step, in seconds.
    slowdown : float or ndarray
        Slow-step factor ``s ≥ 1``.
    slow_probability : float or ndarray
        Per-worker, per-step probability ``q`` of being slow.
    workers : int or ndarray
        Gradients ``n`` aggregated per step.
    backup_workers : int or ndarray
        Extra workers ``b`` whose late gradients are dropped.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Chen, Pan, Monga, Bengio & Jozefowicz (2016), "Revisiting Distributed Synchronous
    SGD", arXiv:1604.00981, Sec. 3 (synchronous SGD with backup workers).

    Examples
    --------
    t = 1 s, s = 2, q = 1 %, n = 100, b = 2: P[Bin(102, 0.01) > 2] = 0.0831, so
    1.083 s (against 1.634 s without backups).
    """
    if _scalars(step_time_s, slowdown, slow_probability, workers, backup_workers):
        p_slow = _binomial_tail(
            int(workers) + int(backup_workers), float(slow_probability), int(backup_workers)
        )
        return step_time_s * (1.0 + (slowdown - 1.0) * p_slow)
    q = np.asarray(slow_probability, dtype=float)
    total = np.add(workers, backup_workers)
    b = np.asarray(backup_workers)
    p_le = np.zeros(np.broadcast(q, total, b).shape)
    lg_total = np.asarray(_LGAMMA(total + 1.0), dtype=float)
    for k in range(int(np.max(b)) + 1):
        log_comb = lg_total - math.lgamma(k + 1) - np.asarray(_LGAMMA(total - k + 1.0), float)
        with np.errstate(divide="ignore", invalid="ignore"):
            term = np.exp(log_comb + k * np.log(q) + (total - k) * np.log1p(-q))
        p_le = p_le + np.where((k <= b) & np.isfinite(term), term, 0.0)
    p_slow = np.clip(1.0 - p_le, 0.0, 1.0)
    out = np.multiply(step_time_s, 1.0 + np.multiply(np.subtract(slowdown, 1.0), p_slow))
    return float(out) if np.ndim(out) == 0 else out


def shifted_exponential_expected_max_s(
    min_time_s: ArrayLike, mean_tail_s: ArrayLike, workers: ArrayLike
) -> ArrayLike:
    """Expected synchronous step time with shifted-exponential worker times.

    Each worker takes ``t₀ + X``, ``X`` exponential with mean ``β``; the maximum of
    ``n`` such exponentials has mean ``β·H_n``, so ``E[max] = t₀ + β·H_n``: the wait
    grows like ``ln n``.

    Parameters
    ----------
    min_time_s : float or ndarray
        Deterministic part ``t₀`` of a step, in seconds.
    mean_tail_s : float or ndarray
        Mean ``β`` of the exponential tail, in seconds.
    workers : int or ndarray
        Workers ``n``.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Dean & Barroso (2013), "The Tail at Scale", CACM 56(2). David & Nagaraja (2003),
    "Order Statistics", 3rd ed., Wiley, Sec. 4.6 (exponential order statistics).

    Examples
    --------
    t₀ = 1 s, β = 0.1 s, n = 8: 1 + 0.1 · 2.717857 = 1.2718 s.
    """
    return np.add(min_time_s, np.multiply(mean_tail_s, harmonic_number(workers)))


def shifted_exponential_backup_step_s(
    min_time_s: ArrayLike, mean_tail_s: ArrayLike, workers: ArrayLike, backup_workers: ArrayLike
) -> ArrayLike:
    """Expected time of the ``n``-th of ``n + b`` shifted-exponential workers.

    The ``n``-th order statistic of ``n + b`` exponentials of mean ``β`` has mean
    ``β·(H_{n+b} − H_b)``.

    Parameters
    ----------
    min_time_s : float or ndarray
        Deterministic part ``t₀``, in seconds.
    mean_tail_s : float or ndarray
        Mean ``β`` of the exponential tail, in seconds.
    workers : int or ndarray
        Gradients ``n`` aggregated per step.
    backup_workers : int or ndarray
        Extra workers ``b``.

    Returns
    -------
    float or ndarray
        Seconds.

    References
    ----------
    Chen et al. (2016), "Revisiting Distributed Synchronous SGD", arXiv:1604.00981,
    Sec. 3; David & Nagaraja (2003), "Order Statistics", Sec. 4.6.

    Examples
    --------
    t₀ = 1 s, β = 0.1 s, n = 100, b = 4: 1 + 0.1 · (H_104 − H_4) = 1.3143 s
    (1.5187 s with no backups).
    """
    gap = harmonic_number(np.add(workers, backup_workers)) - harmonic_number(backup_workers)
    return np.add(min_time_s, np.multiply(mean_tail_s, gap))


def async_throughput(
    workers: ArrayLike, batch_size: ArrayLike, mean_step_time_s: ArrayLike
) -> ArrayLike:
    """Samples per second of asynchronous SGD: the workers' rates add.

    No worker waits for another, so each contributes ``b / E[t]`` samples per second.

    Parameters
    ----------
    workers : int or ndarray
        Workers ``n``.
    batch_size : float or ndarray
        Samples per worker step.
    mean_step_time_s : float or ndarray
        A worker's mean step time (compute plus its own push/pull), in seconds.

    Returns
    -------
    float or ndarray
        Samples per second.

    References
    ----------
    Dean et al. (2012), "Large Scale Distributed Deep Networks" (DistBelief), NeurIPS,
    Sec. 4.1 (Downpour SGD).

    Examples
    --------
    100 workers, 32 samples per step, mean step 1.01 s: 3,168.3 samples/s.
    """
    return np.divide(np.multiply(workers, batch_size), mean_step_time_s)


def async_mean_staleness(workers: ArrayLike) -> ArrayLike:
    """Mean staleness of asynchronous SGD, in updates: ``n − 1``.

    Between reading the parameters and applying its gradient, a worker sees on average
    one update from each of the other ``n − 1`` workers (equal rates, steady state).

    Parameters
    ----------
    workers : int or ndarray
        Workers ``n``.

    Returns
    -------
    float or ndarray
        Updates the gradient is stale by.

    References
    ----------
    Lian, Huang, Li & Liu (2015), "Asynchronous Parallel Stochastic Gradient for
    Nonconvex Optimization", NeurIPS, Sec. 3 (staleness bounded by the worker count).

    Examples
    --------
    100 workers: 99 updates.
    """
    return np.subtract(workers, 1.0)


def local_sgd_step_time_s(
    compute_step_s: ArrayLike, sync_time_s: ArrayLike, local_steps: ArrayLike
) -> ArrayLike:
    """Per-step time of local SGD: models are averaged once every ``H`` steps.

    ``t_step = t_compute + t_sync / H``.

    Parameters
    ----------
    compute_step_s : float or ndarray
        Compute time of one (synchronised-round) step, in seconds.
    sync_time_s : float or ndarray
        Time of one model average (an all-reduce), in seconds.
    local_steps : int or ndarray
        Steps ``H`` between averages.

    Returns
    -------
    float or ndarray
        Seconds per step.

    References
    ----------
    Lin, Stich, Patel & Jaggi (2020), "Don't Use Large Mini-Batches, Use Local SGD",
    ICLR, Sec. 2 (Algorithm 1).

    Examples
    --------
    1 s of compute, a 0.4 s all-reduce, H = 8: 1.05 s per step.
    """
    return np.add(compute_step_s, np.divide(sync_time_s, local_steps))
