"""The textbook's serving capacity planner: replicas for a request rate and a P99 target.

*Machine Learning Systems* (harvard-edge/cs249r_book) sizes a deployment with
``ServingCapacityModel().solve(model, hardware, qps=..., target_p99_latency_ms=...)`` and
reads queueing tails with ``TailLatencyModel().solve(arrival_rate_qps, service_latency_ms,
num_replicas)``. Both compose mlsys's own pieces under the book's call shapes:

* one replica's request capacity is :class:`mlsys.ContinuousBatchingModel`'s saturation
  rate (``max_arrival_rate``: the KV cache and the prefill server both bound it) and its
  batch is the number of sequences whose KV caches fit (``max_concurrency``, at most the
  book's ``max_batch_size``);
* a request's queue-free latency is :class:`mlsys.ServingModel`'s ``ttft + itl ·
  output_tokens`` at that batch;
* the fleet of ``c`` replicas is an M/M/c queue whose server time is one replica's
  capacity interval ``1 / capacity`` (the book's reading), with the Allen-Cunneen factor
  for service times of another variability
  (:mod:`mlsys.core.formulas.queueing`).

The smallest ``c`` whose P99 (queue-free latency plus the P99 queue wait) meets the target
is the answer.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from mlsys.compat._args import at_least, in_si, solve_options
from mlsys.compat._unwrap import as_catalog
from mlsys.core.checks import positive_int
from mlsys.core.formulas.queueing import kingman_wait_factor, mmc_wait_quantile
from mlsys.core.results import Result

__all__ = [
    "ServingCapacityModel",
    "ServingCapacityResult",
    "TailLatencyModel",
    "TailLatencyResult",
]

#: P99 queue wait beyond this many service times is the book's sign of SLA risk.
_SLO_SERVICE_TIMES = 5.0


class TailLatencyResult(Result):
    """What the book's ``TailLatencyModel().solve`` returns.

    Attributes
    ----------
    p50_latency, p99_latency : Quantity [s]
        The median and 99th-percentile queue wait plus the mean service time (the
        book's estimate: a wait quantile added to the mean service, not the exact
        quantile of wait + service).
    queue_utilization : float
        ``ρ = λ / (c μ)``.
    is_stable : bool
        ``ρ < 1``.
    slo_headroom_ratio : float
        P99 wait over five service times (above 1: the tail threatens the SLA); 1 for an
        unstable queue.
    """

    _title: ClassVar[str] = "Tail latency (M/M/c)"
    _units: ClassVar[dict[str, str | None]] = {
        "p50_latency": "s",
        "p99_latency": "s",
        "queue_utilization": None,
        "is_stable": None,
        "slo_headroom_ratio": None,
    }


class TailLatencyModel:
    """The book's TailLatencyModel: waits of ``c`` replicas fed by one Poisson stream.

    The fleet is an M/M/c queue (Kleinrock 1975, Sec. 3.5); for a service time whose
    coefficient of variation is not 1 the waits are scaled by ``(1 + c_s²)/2``
    (Allen-Cunneen, :func:`~mlsys.core.formulas.queueing.kingman_wait_factor`).
    """

    def solve(
        self,
        arrival_rate_qps: Any,
        service_latency_ms: Any,
        num_replicas: int = 1,
        service_time_cv: float = 1.0,
    ) -> TailLatencyResult:
        """Median and P99 latency of a replicated service under load.

        Parameters
        ----------
        arrival_rate_qps : float or Quantity [1/s]
            Requests per second (a plain number is per second).
        service_latency_ms : float or Quantity [s]
            Mean service time of one request (a plain number is milliseconds).
        num_replicas : int
            Servers ``c``.
        service_time_cv : float
            Coefficient of variation of the service time (1: exponential).

        Returns
        -------
        TailLatencyResult

        Raises
        ------
        ParameterError
            For a rate or time that is not positive and finite, a replica count that is
            not a whole number of at least 1, or a negative ``service_time_cv``.

        Examples
        --------
        One replica at 80% load with 100 ms service: P99 wait ``ln(80)/2`` s, 2.29 s
        with the service time.

        >>> res = TailLatencyModel().solve(8.0, 100.0, 1)
        >>> round(res.si("p99_latency"), 3), res.queue_utilization
        (2.291, 0.8)
        """
        lam = in_si(arrival_rate_qps, "1/s", 1.0, "arrival_rate_qps")
        service_s = in_si(service_latency_ms, "s", 1e-3, "service_latency_ms")
        servers = positive_int("num_replicas", num_replicas)
        factor = kingman_wait_factor(at_least(service_time_cv, "service_time_cv", 0.0))
        mu = 1.0 / service_s
        rho = lam / (servers * mu)
        p50 = mmc_wait_quantile(0.5, lam, mu, servers) * factor
        p99 = mmc_wait_quantile(0.99, lam, mu, servers) * factor
        stable = rho < 1.0
        headroom = p99 / (_SLO_SERVICE_TIMES * service_s) if stable else 1.0
        return TailLatencyResult(
            p50_latency=p50 + service_s,
            p99_latency=p99 + service_s,
            queue_utilization=rho,
            is_stable=stable,
            slo_headroom_ratio=headroom,
        )


class ServingCapacityResult(Result):
    """What the book's ``ServingCapacityModel().solve`` returns.

    Attributes
    ----------
    feasible : bool
        A replica count up to ``max_replicas`` meets the P99 target.
    required_replicas : int
        The smallest such count (``max_replicas`` when none does).
    qps_target, qps_capacity, per_replica_qps_capacity : float
        Requests per second: asked for, served by ``required_replicas``, by one replica.
    utilization : float
        ``qps_target / qps_capacity``.
    target_p99_latency, estimated_p99_latency : Quantity [s]
        The target and ``base_request_latency + queue_wait_p99``.
    base_request_latency : Quantity [s] or None
        ``ttft + itl · output_tokens`` at the replica's batch, no queueing (None when
        the model does not fit).
    queue_wait_p99 : Quantity [s]
        P99 wait of the M/M/c queue at ``required_replicas``.
    active_batch_size : int
        Sequences a replica decodes together (0 when the model does not fit).
    ttft, itl : Quantity [s] or None
        Of :class:`mlsys.ServingModel` at that batch (None when the model does not fit).
    bottleneck : str
        ``"Memory"`` (the model does not fit), ``"Capacity"`` (no stable count up to
        ``max_replicas``), ``"Tail Latency"`` (stable but the P99 misses),
        ``"Base Latency"`` (even an idle replica misses it) or ``"Feasible"``.
    """

    _title: ClassVar[str] = "Serving capacity"
    _units: ClassVar[dict[str, str | None]] = {
        "feasible": None,
        "required_replicas": None,
        "qps_target": None,
        "qps_capacity": None,
        "per_replica_qps_capacity": None,
        "utilization": None,
        "target_p99_latency": "s",
        "estimated_p99_latency": "s",
        "base_request_latency": "s",
        "queue_wait_p99": "s",
        "active_batch_size": None,
        "ttft": "s",
        "itl": "s",
        "bottleneck": None,
    }


def _replica(
    model: Any, hardware: Any, seq_len: int, output_tokens: int, batch_cap: int, options: dict
) -> tuple[Any, Any]:
    """mlsys's saturation of one replica and its serving solve at the batch that fits."""
    from mlsys.core.solvers.batching import ContinuousBatchingModel
    from mlsys.core.solvers.serving import ServingModel

    # Any positive rate gives the same capacity figures (max_arrival_rate,
    # max_concurrency); one request a minute keeps the steady state trivially stable.
    saturation = ContinuousBatchingModel().solve(
        model,
        hardware,
        arrival_rate=1.0 / 60.0,
        prompt_len=seq_len,
        output_len=output_tokens,
        max_num_seqs=batch_cap,
        **options,
    )
    batch = max(1, int(saturation.max_concurrency))
    serving = ServingModel().solve(
        model, hardware, batch_size=batch, prompt_len=seq_len, output_len=output_tokens, **options
    )
    return saturation, serving


class ServingCapacityModel:
    """The book's ServingCapacityModel: replicas needed for a request rate and P99 target.

    See the module notes for the composition; every time and capacity is mlsys's.
    """

    def solve(
        self,
        model: Any,
        hardware: Any,
        qps: Any,
        target_p99_latency_ms: Any,
        seq_len: int = 2048,
        output_tokens: int = 128,
        max_batch_size: int = 32,
        precision: str = "fp16",
        efficiency: Any = None,
        max_replicas: int = 1024,
        service_time_cv: float = 1.0,
    ) -> ServingCapacityResult:
        """The smallest replica count whose estimated P99 meets the target.

        Parameters
        ----------
        model : BookModel or TransformerWorkload
            The served model (a view of the book's registries is accepted).
        hardware : BookAccelerator, Accelerator or Node
            One replica's hardware.
        qps : float or Quantity [1/s]
            Aggregate requests per second.
        target_p99_latency_ms : float or Quantity [s]
            End-to-end P99 target (a plain number is milliseconds).
        seq_len : int
            Prompt tokens per request.
        output_tokens : int
            Generated tokens per request.
        max_batch_size : int
            Cap on sequences a replica decodes together.
        precision : str
            Weights and KV cache (``"fp16"``, ``"fp8"``, ...).
        efficiency : float, optional
            As :meth:`mlsys.ServingModel.solve`; default: mlsys's calibrated
            efficiencies (the book's own default is a flat 0.5).
        max_replicas : int
            Search cap (reported as the requirement when nothing meets the target).
        service_time_cv : float
            Coefficient of variation of the service time (1: M/M/c).

        Returns
        -------
        ServingCapacityResult

        Raises
        ------
        ParameterError
            For non-positive rates or targets, counts that are not whole numbers of at
            least 1, a negative ``service_time_cv``, and as the serving solvers do.
        """
        lam = in_si(qps, "1/s", 1.0, "qps")
        target_s = in_si(target_p99_latency_ms, "s", 1e-3, "target_p99_latency_ms")
        seq = positive_int("seq_len", seq_len)
        out = positive_int("output_tokens", output_tokens)
        cap = positive_int("max_batch_size", max_batch_size)
        limit = positive_int("max_replicas", max_replicas)
        factor = kingman_wait_factor(at_least(service_time_cv, "service_time_cv", 0.0))
        options = solve_options(precision, efficiency)
        saturation, serving = _replica(
            as_catalog(model), as_catalog(hardware), seq, out, cap, options
        )
        batch = max(1, int(saturation.max_concurrency))
        per_replica = saturation.si("max_arrival_rate")
        if not (serving.feasible and saturation.max_concurrency >= 1 and per_replica > 0):
            return ServingCapacityResult(
                feasible=False,
                required_replicas=limit,
                qps_target=lam,
                qps_capacity=0.0,
                per_replica_qps_capacity=0.0,
                utilization=math.inf,
                target_p99_latency=target_s,
                estimated_p99_latency=math.inf,
                base_request_latency=None,
                queue_wait_p99=math.inf,
                active_batch_size=0,
                ttft=None,
                itl=None,
                bottleneck="Memory",
            )
        ttft, itl = serving.si("ttft"), serving.si("itl")
        base_s = ttft + itl * out
        replicas, wait_s = _fewest_replicas(lam, per_replica, base_s, target_s, limit, factor)
        feasible = base_s + wait_s <= target_s
        return ServingCapacityResult(
            feasible=feasible,
            required_replicas=replicas,
            qps_capacity=replicas * per_replica,
            per_replica_qps_capacity=per_replica,
            utilization=lam / (replicas * per_replica),
            estimated_p99_latency=base_s + wait_s,
            queue_wait_p99=wait_s,
            bottleneck=_what_binds(feasible, base_s, target_s, wait_s),
            qps_target=lam,
            target_p99_latency=target_s,
            base_request_latency=base_s,
            active_batch_size=batch,
            ttft=ttft,
            itl=itl,
        )


def _what_binds(feasible: bool, base_s: float, target_s: float, wait_s: float) -> str:
    """The book's bottleneck names for a solved capacity plan."""
    if feasible:
        return "Feasible"
    if base_s > target_s:  # no replica count helps: the model or hardware must be faster
        return "Base Latency"
    return "Tail Latency" if math.isfinite(wait_s) else "Capacity"


def _fewest_replicas(
    arrival_rate_hz: float,
    replica_rate_hz: float,
    base_latency_s: float,
    target_s: float,
    max_replicas: int,
    wait_factor: float,
) -> tuple[int, float]:
    """(replicas, P99 wait in s): the first count from the stable minimum that meets the
    target, else ``max_replicas`` and its wait. The wait falls as replicas are added."""
    # Fewer than λ/μ replicas is unstable (infinite wait): start at the first stable count.
    first = min(max_replicas, max(1, math.floor(arrival_rate_hz / replica_rate_hz) + 1))
    if base_latency_s > target_s:  # waiting only adds: no count meets the target
        return first, wait_factor * mmc_wait_quantile(0.99, arrival_rate_hz, replica_rate_hz, first)
    wait_s = math.inf
    for replicas in range(first, max_replicas + 1):
        wait_s = wait_factor * mmc_wait_quantile(0.99, arrival_rate_hz, replica_rate_hz, replicas)
        if base_latency_s + wait_s <= target_s:
            return replicas, wait_s
    return max_replicas, wait_s
