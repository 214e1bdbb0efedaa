"""Part 3 of the lab, the synchronisation audit.

Stragglers under synchronous and asynchronous SGD, the cost of checkpoints, and the
stakeholders' choice between ZeRO and asynchronous updates.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from mlsys.book.lab.origins import derived
from mlsys.book.lab.tracks import (
    SOURCES,
    STRAGGLER_FRACTIONS,
    STRAGGLER_SLOWDOWN,
    TRACKS,
    _clean,
    track,
    with_layout,
)
from mlsys.core.catalog import Fabrics
from mlsys.core.provenance import TextOrigin
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.solvers.economics import EconomicsModel
from mlsys.core.solvers.reliability import ReliabilityModel
from mlsys.core.solvers.synchronization import SynchronizationModel
from mlsys.core.types import Fleet
from mlsys.core.units import Q_

__all__ = [
    "sync_grid",
    "checkpoint_cost",
    "STAKEHOLDER_NODES",
    "STAKEHOLDER_SLOW_FRACTION",
    "stakeholder_comparison",
]


@cache
def _reference_step(key: str) -> dict[str, Any]:
    """The track's full fleet on its own link: one DistributedModel step."""
    t = track(key)
    fleet = Fleet(node=t.node, count=t.nodes[-1], fabric=Fabrics[t.own_fabric])
    n = fleet.total_accelerators
    replicas = n // t.layout.model_parallel_size
    m = t.batch_size // replicas // t.microbatch_size
    res = DistributedModel().solve(
        t.model, fleet, batch_size=t.batch_size, precision=t.precision,
        layout=with_layout(t.layout, microbatch_count=m),
    )  # fmt: skip
    step = res.si("step_time")
    compute = res.si("compute_time")
    return {
        "replicas": float(replicas),
        "step_time": step,
        "compute_time": compute,
        "sync_time": step - compute,
        "samples_per_replica": t.batch_size / replicas,
        "feasible": float(res.feasible),
        "origin": res.origin,
    }


@cache
def sync_grid(key: str) -> dict[str, Any]:
    """Synchronous vs asynchronous SGD over the straggler control (SynchronizationModel).

    Workers are the track's data-parallel replicas at full fleet size on its own link;
    a straggler-free step computes for the DistributedModel compute time and
    synchronises for the rest of the step. A slow worker-step takes
    :data:`STRAGGLER_SLOWDOWN` times longer, with probability given by
    :data:`STRAGGLER_FRACTIONS`.

    Parameters
    ----------
    key : str
        Track key.

    Returns
    -------
    dict
        ``fractions``; ``sync`` and ``async`` samples/s per fraction;
        ``sync_staleness`` (0) and ``async_staleness`` (updates); ``waiting`` (share of
        a synchronous worker's compute spent waiting); ``workers``; ``ideal``
        (straggler-free, communication-free samples/s); ``sources`` (the hover origin
        of each, not part of the OJS payload).
    """
    ref = _reference_step(key)
    solver = SynchronizationModel()
    sync, asyn, waiting = [], [], []
    res = None
    for q in STRAGGLER_FRACTIONS:
        res = solver.solve(
            int(ref["replicas"]), ref["compute_time"], batch_size=ref["samples_per_replica"],
            straggler="two-point", slow_fraction=q, slowdown=STRAGGLER_SLOWDOWN,
            sync_time=ref["sync_time"],
        )  # fmt: skip
        sync.append(res.si("sync_throughput"))
        asyn.append(res.si("async_throughput"))
        waiting.append(res.waiting_fraction)
    assert res is not None
    t = track(key)
    slow = f"{STRAGGLER_SLOWDOWN:g}× slow (two-point stragglers, Dean & Barroso 2013)"
    step = ref["origin"]
    replicas = derived(
        f"Data-parallel replicas of {t.devices:,} devices at TP × PP = "
        f"{t.layout.model_parallel_size}",
        t.origin,
    )
    sources = {
        "workers": replicas,
        "sync": derived(
            f"Synchronous samples/s when a share of worker-steps is {slow}; compute and "
            "synchronisation times from one step",
            res,
            step,
        ),
        "async": derived(
            f"Asynchronous samples/s when a share of worker-steps is {slow}; compute time "
            "from one step",
            res,
            step,
        ),
        "waiting": derived(
            f"Share of a synchronous worker's compute time spent waiting, worker-steps {slow}",
            res,
        ),
        "async_staleness": derived("Mean staleness of an asynchronous update (workers − 1)", res),
    }
    return {
        "fractions": list(STRAGGLER_FRACTIONS),
        "sync": _clean(sync, 5),
        "async": _clean(asyn, 5),
        "waiting": _clean(waiting, 4),
        "sync_staleness": 0.0,
        "async_staleness": float(res.async_staleness),
        "workers": int(ref["replicas"]),
        "ideal": ref["replicas"] * ref["samples_per_replica"] / ref["compute_time"],
        "sources": sources,
    }


@cache
def checkpoint_cost(job_days: float = 30.0) -> dict[str, Any]:
    """Checkpointing the cloud track's full fleet (:class:`ReliabilityModel`).

    Llama 3 failure rates per GPU (the model's default), a mixed-precision Adam
    checkpoint (14 bytes per parameter) written at 2 TB/s, Daly's optimum interval.

    Parameters
    ----------
    job_days : float
        Failure-free length of the run, in days.

    Returns
    -------
    dict
        ``gpus``, ``mtbf_h``, ``checkpoint_gb``, ``checkpoint_s``, ``storage_Bps`` (the
        write bandwidth assumed, B/s), ``interval_min``,
        ``goodput``, ``lost_fraction`` (1 − goodput); ``sources`` (the hover origin of
        each: the ReliabilityModel result's fields).
    """
    t = TRACKS["cloud"]
    gpus = t.devices
    res = ReliabilityModel().solve(gpus, Q_(job_days, "day"), model=t.model)
    origin = res.origin
    sources = {
        "gpus": t.origin,
        "mtbf_h": origin.at("fleet_mtbf"),
        "checkpoint_gb": origin.at("checkpoint_bytes"),
        "checkpoint_s": origin.at("checkpoint_time"),
        "storage_Bps": derived(
            "Checkpoint bytes ÷ checkpoint time: ReliabilityModel's checkpoint write bandwidth",
            origin,
        ),
        "interval_min": origin.at("checkpoint_interval"),
        "goodput": origin.at("goodput"),
        "lost_fraction": derived("1 − goodput", origin.at("goodput")),
    }
    return {
        "gpus": gpus,
        "mtbf_h": res.si("fleet_mtbf") / 3600.0,
        "checkpoint_gb": res.si("checkpoint_bytes") / 1e9,
        "checkpoint_s": res.si("checkpoint_time"),
        "storage_Bps": res.si("checkpoint_bytes") / res.si("checkpoint_time"),
        "interval_min": res.si("checkpoint_interval") / 60.0,
        "goodput": float(res.goodput),
        "lost_fraction": 1.0 - float(res.goodput),
        "sources": sources,
    }


STAKEHOLDER_NODES = 512
"""The stakeholder's fleet: 512 DGX H100 nodes (4,096 GPUs), the cloud track at full size."""
STAKEHOLDER_SLOW_FRACTION = 0.01
"""Straggler intensity of the stakeholder challenge: 1 % of worker-steps slow (2×)."""


@cache
def stakeholder_comparison(
    slow_fraction: float = STAKEHOLDER_SLOW_FRACTION, claim_usd_per_month: float = 1e6
) -> dict[str, Any]:
    """ "Wait-for-all synchronisation wastes $1M a month": ZeRO or asynchronous updates?

    The cloud track's fleet (:data:`STAKEHOLDER_NODES` DGX H100 over InfiniBand NDR,
    global batch 1,024 sequences at one sequence per micro-batch) is priced by
    :class:`EconomicsModel` (catalog node price, 10 % network, 5-year straight-line
    life, energy at the default price). Money follows throughput: a fix that raises
    samples/s by a factor ``g`` does the month's work in ``1/g`` of the time, saving
    ``(1 − 1/g)`` of the monthly cost.

    * **Waste of waiting**: synchronous SGD under stragglers against the same job with
      none (SynchronizationModel, two-point stragglers).
    * **ZeRO**: memory saved by sharding lets each micro-batch carry more sequences
      (DistributedModel: the largest micro-batch of 1, 2, 4 or 8 sequences that fits,
      ZeRO-0 against the best of ZeRO-1/2/3), at the same number of micro-batches; the
      straggler penalty stays.
    * **Asynchronous updates**: every replica runs at its own pace (SynchronizationModel's
      asynchronous throughput), paid for in staleness that may cost extra steps (not
      priced here).

    Parameters
    ----------
    slow_fraction : float
        Probability that a worker-step straggles.
    claim_usd_per_month : float
        The stakeholder's claim, in USD per month.

    Returns
    -------
    dict
        ``monthly_cost``, ``waste`` (USD per month lost to waiting), ``claim``,
        ``zero_saving``, ``async_saving`` (USD per month), ``zero_gain``,
        ``async_gain`` (throughput factors), ``zero_stage`` (the best stage),
        ``zero_microbatch`` and ``base_microbatch`` (sequences per micro-batch),
        ``winner`` (``"ZeRO"`` or ``"asynchronous updates"``), ``workers``,
        ``staleness``, ``gpus``; ``sources`` (the hover origin of each).
    """
    t = TRACKS["cloud"]
    fleet = Fleet(node=t.node, count=STAKEHOLDER_NODES, fabric=Fabrics.IB_NDR)
    econ = EconomicsModel().solve(fleet)
    monthly = econ.si("annual_tco") / 12.0
    n = fleet.total_accelerators
    replicas = n // t.layout.model_parallel_size
    m = t.batch_size // replicas
    solver = DistributedModel()

    def best_for(stages: tuple[int, ...]) -> tuple[float, Any, int, int]:
        best: tuple[float, Any, int, int] = (0.0, None, 0, 0)
        for z in stages:
            for b in (1, 2, 4, 8):
                res = solver.solve(
                    t.model, fleet, batch_size=b * replicas * m, precision=t.precision,
                    layout=with_layout(t.layout, microbatch_count=m, zero_stage=z),
                )  # fmt: skip
                if res.feasible and res.si("tokens_per_second") > best[0]:
                    best = (res.si("tokens_per_second"), res, z, b)
        return best

    tps0, res0, _, b0 = best_for((0,))
    tpsz, resz, zbest, bz = best_for((1, 2, 3))
    sync = SynchronizationModel()

    def stragglers(res: Any, q: float) -> Any:
        return sync.solve(
            replicas, res.si("compute_time"), batch_size=1, straggler="two-point",
            slow_fraction=q, slowdown=STRAGGLER_SLOWDOWN,
            sync_time=res.si("step_time") - res.si("compute_time"),
        )  # fmt: skip

    base_q = stragglers(res0, slow_fraction)
    base_clean = stragglers(res0, 0.0)
    zero_q = stragglers(resz, slow_fraction)
    # samples/s of each option: tokens per step over the step time under stragglers
    step_tokens0 = res0.si("tokens_per_second") * res0.si("step_time")
    step_tokensz = resz.si("tokens_per_second") * resz.si("step_time")
    sync_rate = step_tokens0 / base_q.si("sync_step_time")
    clean_rate = step_tokens0 / base_clean.si("sync_step_time")
    zero_rate = step_tokensz / zero_q.si("sync_step_time")
    async_rate = step_tokens0 / base_q.si("async_step_time")
    waste = monthly * (1.0 - sync_rate / clean_rate)
    zero_gain = zero_rate / sync_rate
    async_gain = async_rate / sync_rate
    zero_saving = monthly * (1.0 - 1.0 / zero_gain)
    async_saving = monthly * (1.0 - 1.0 / async_gain)
    fleet_text = TextOrigin(
        f"The lab's stakeholder scenario (mlsys.book.lab.STAKEHOLDER_NODES): the cloud track "
        f"at full size, {STAKEHOLDER_NODES} DGX H100 nodes ({n:,} GPUs) on InfiniBand NDR, "
        f"global batch {t.batch_size:,} sequences"
    )
    month = derived("The fleet's annual TCO ÷ 12", econ.origin.at("annual_tco"))
    straggle = f"{slow_fraction:.0%} of worker-steps {STRAGGLER_SLOWDOWN:g}× slow"
    zero_search = (
        "the fastest micro-batch of 1, 2, 4 or 8 sequences that fits, ZeRO-1/2/3 against "
        "ZeRO-0 (DistributedModel)"
    )
    zero_gain_origin = derived(
        f"Throughput with {zero_search}, under stragglers ({straggle})", resz, res0, base_q
    )
    async_gain_origin = derived(
        f"Asynchronous over synchronous samples/s under stragglers ({straggle})", base_q, res0
    )
    sources = {
        "gpus": fleet_text,
        "monthly_cost": month,
        "claim": TextOrigin(
            "The lab's stakeholder claim, $1M a month: a figure made up for the exercise"
        ),
        "slow_fraction": TextOrigin(
            f"The lab's stakeholder scenario (mlsys.book.lab.STAKEHOLDER_SLOW_FRACTION): "
            f"{straggle}. {SOURCES['STRAGGLER_SLOWDOWN']}"
        ),
        "waste": derived(
            f"A month's cost × (1 − synchronous samples/s with {straggle} ÷ without)",
            month,
            base_q,
            res0,
        ),
        "zero_stage": derived(f"The ZeRO stage of {zero_search}", resz),
        "zero_microbatch": derived(f"Sequences per micro-batch of {zero_search}", resz),
        "base_microbatch": derived(
            "Sequences per micro-batch of the fastest ZeRO-0 layout that fits", res0
        ),
        "zero_gain": zero_gain_origin,
        "async_gain": async_gain_origin,
        "zero_saving": derived("A month's cost × (1 − 1 / the ZeRO gain)", month, zero_gain_origin),
        "async_saving": derived(
            "A month's cost × (1 − 1 / the asynchronous gain)", month, async_gain_origin
        ),
        "staleness": derived("Mean staleness of an asynchronous update (workers − 1)", base_q),
    }
    return {
        "gpus": n,
        "workers": replicas,
        "monthly_cost": monthly,
        "claim": float(claim_usd_per_month),
        "waste": waste,
        "waiting_fraction": float(base_q.waiting_fraction),
        "zero_stage": zbest,
        "zero_microbatch": bz,
        "base_microbatch": b0,
        "zero_gain": zero_gain,
        "async_gain": async_gain,
        "zero_saving": zero_saving,
        "async_saving": async_saving,
        "winner": "ZeRO" if zero_saving > async_saving else "asynchronous updates",
        "staleness": float(base_q.async_staleness),
        "slow_fraction": float(slow_fraction),
        "base_tokens_per_s": tps0,
        "zero_tokens_per_s": tpsz,
        "sources": sources,
    }
