"""Formulas of multi-server queues: how long requests wait for one of ``c`` replicas.

A serving fleet of ``c`` identical replicas fed by one Poisson stream is an M/M/c queue
when service times are exponential: an arrival waits only when all ``c`` servers are
busy (Erlang's C formula gives that probability), and a wait, once it happens, is
exponential with rate ``c μ (1 − ρ)``. Quantiles of the wait follow in closed form.
For other service-time distributions, the Allen-Cunneen approximation scales the M/M/c
wait by ``(1 + c_s²)/2``, Kingman's factor for one server.

Every function takes and returns floats in SI units (rates in 1/s, times in s).

References
----------
Kleinrock (1975), "Queueing Systems, Volume 1: Theory", Wiley, Sec. 3.5 (the M/M/m
queue: Erlang's C formula, Eq. 3.40, and the waiting-time distribution).
Kingman (1961), "The single server queue in heavy traffic", Proc. Cambridge Phil. Soc.
57(4), 902-904.
Allen (1990), "Probability, Statistics, and Queueing Theory", 2nd ed., Academic Press,
Sec. 6.3 (the Allen-Cunneen approximation for G/G/c).
"""

from __future__ import annotations

import math

__all__ = [
    "erlang_c_wait_probability",
    "mmc_wait_quantile",
    "kingman_wait_factor",
]


def erlang_c_wait_probability(servers: int, offered_load: float) -> float:
    """Probability that an arrival to an M/M/c queue has to wait (Erlang's C formula).

    ``P_w = (a^c / c!) / (1 − ρ) / (Σ_{k<c} a^k/k! + (a^c / c!) / (1 − ρ))`` with the
    offered load ``a = λ/μ`` (erlangs) and ``ρ = a/c``; evaluated in the log domain, so
    thousands of servers neither overflow nor lose precision. 1 when ``ρ ≥ 1`` (every
    arrival waits: the queue grows without bound); 0 with no load.

    Parameters
    ----------
    servers : int
        Servers ``c`` (at least 1).
    offered_load : float
        ``a = λ / μ``, arrivals per service time (erlangs, at least 0).

    Returns
    -------
    float
        ``P_w`` in [0, 1].

    References
    ----------
    Kleinrock (1975), "Queueing Systems, Volume 1: Theory", Wiley, Sec. 3.5, Eq. (3.40).

    Examples
    --------
    One server is M/M/1: an arrival waits with probability ρ.

    >>> round(erlang_c_wait_probability(1, 0.8), 12)
    0.8

    Two servers at a = 1 (ρ = 0.5): ``(1/2)/(1/2) / (1 + 1 + 1) = 1/3``.

    >>> round(erlang_c_wait_probability(2, 1.0), 12)
    0.333333333333
    """
    if offered_load <= 0.0:
        return 0.0
    rho = offered_load / servers
    if rho >= 1.0:
        return 1.0
    log_a = math.log(offered_load)
    log_busy = servers * log_a - math.lgamma(servers + 1) - math.log1p(-rho)
    terms = [k * log_a - math.lgamma(k + 1) for k in range(servers)]
    top = max(max(terms), log_busy)
    total = sum(math.exp(t - top) for t in terms) + math.exp(log_busy - top)
    return math.exp(log_busy - top) / total


def mmc_wait_quantile(
    quantile: float, arrival_rate: float, service_rate: float, servers: int
) -> float:
    """The ``q``-quantile of the time an M/M/c arrival waits before service, seconds.

    A wait is 0 with probability ``1 − P_w`` and otherwise exponential with rate
    ``c μ (1 − ρ)``, so ``P(W > t) = P_w e^{−c μ (1 − ρ) t}`` and the quantile is
    ``ln(P_w / (1 − q)) / (c μ (1 − ρ))`` when ``P_w > 1 − q``, else 0. ``inf`` when
    ``ρ = λ/(c μ) ≥ 1``.

    Parameters
    ----------
    quantile : float
        ``q`` in [0, 1) (0.99 for the P99).
    arrival_rate : float
        ``λ``, arrivals per second (at least 0).
    service_rate : float
        ``μ``, completions per second of one server (> 0).
    servers : int
        ``c`` (at least 1).

    Returns
    -------
    float
        Seconds.

    References
    ----------
    Kleinrock (1975), "Queueing Systems, Volume 1: Theory", Wiley, Sec. 3.5 (the
    waiting-time distribution of M/M/m).

    Examples
    --------
    M/M/1 at ρ = 0.8 with μ = 10/s: ``P_w = 0.8``, rate 2/s, P99 = ln(80)/2 s.

    >>> round(mmc_wait_quantile(0.99, 8.0, 10.0, 1), 6) == round(math.log(80.0) / 2.0, 6)
    True
    """
    rho = arrival_rate / (servers * service_rate)
    if rho >= 1.0:
        return math.inf
    waits = erlang_c_wait_probability(servers, arrival_rate / service_rate)
    tail = 1.0 - quantile
    if waits <= tail:
        return 0.0
    return math.log(waits / tail) / (servers * service_rate * (1.0 - rho))


def kingman_wait_factor(service_time_cv: float) -> float:
    """How much longer queues wait for service times of coefficient of variation ``c_s``.

    ``(1 + c_s²) / 2``: Kingman's heavy-traffic factor for one server (exact for the
    mean wait of M/G/1 by Pollaczek-Khinchine), applied to ``c`` servers by the
    Allen-Cunneen approximation. 1 for exponential service (``c_s = 1``), 1/2 for
    deterministic service (``c_s = 0``).

    Parameters
    ----------
    service_time_cv : float
        Standard deviation of the service time over its mean (at least 0).

    Returns
    -------
    float
        The factor on the M/M/c wait (dimensionless).

    References
    ----------
    Kingman (1961), Proc. Cambridge Phil. Soc. 57(4), 902-904; Allen (1990),
    "Probability, Statistics, and Queueing Theory", Sec. 6.3.

    Examples
    --------
    >>> kingman_wait_factor(1.0), kingman_wait_factor(0.0), kingman_wait_factor(2.0)
    (1.0, 0.5, 2.5)
    """
    return (1.0 + service_time_cv * service_time_cv) / 2.0
