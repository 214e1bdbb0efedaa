"""Collectives on the virtual cluster, checked against gloo and against the cost model.

:func:`collectives_workload` runs on every rank (through
:func:`mlsys.emulate.cluster.run_cluster`): for each collective it compares the result of
the point-to-point implementation in :mod:`mlsys.emulate.comm` with gloo's own, and
reports the bytes each rank sent next to the formula of
:mod:`mlsys.core.formulas.collectives`. :func:`calibrate_link` measures the loopback
"link" of the virtual cluster (latency ``α`` and bandwidth ``β`` of one send) so the
alpha-beta model can predict times for it.
"""

from __future__ import annotations

import time
from typing import Any

import torch
import torch.distributed as dist

from mlsys.core.formulas.collectives import collective_bytes_per_rank, collective_time
from mlsys.emulate.cluster import RankContext, run_cluster
from mlsys.emulate.comm import AccountedComm

__all__ = ["calibrate_link", "collectives_workload", "run_collectives"]


def calibrate_link(
    ctx: RankContext, sizes: tuple[int, int] = (64, 4 << 20), repeats: int = 5
) -> dict[str, float]:
    """Latency and bandwidth of one point-to-point send between ranks 0 and 1.

    Ping-pong of a small and a large message; ``α`` is half the small round trip and
    ``β`` the large message over its extra one-way time. Collective call on all ranks
    (ranks other than 0 and 1 only wait at the barriers).

    Parameters
    ----------
    ctx : RankContext
        The rank's context.
    sizes : tuple of int
        Small and large message sizes, in bytes.
    repeats : int
        Round trips per size (the fastest counts).

    Returns
    -------
    dict
        ``latency_s`` (seconds) and ``bandwidth_Bps`` (bytes per second), the same on
        every rank.
    """
    est = torch.zeros(2, dtype=torch.float64)
    if ctx.world_size > 1:
        dist.barrier()
        one_way = []
        for size in sizes:
            buf = torch.zeros(max(1, size // 4), dtype=torch.float32)
            best = float("inf")
            for _ in range(repeats):
                if ctx.rank == 0:
                    t0 = time.perf_counter()
                    dist.send(buf, 1)
                    dist.recv(buf, 1)
                    best = min(best, (time.perf_counter() - t0) / 2)
                elif ctx.rank == 1:
                    dist.recv(buf, 0)
                    dist.send(buf, 0)
            one_way.append(best)
        if ctx.rank == 0:
            alpha = one_way[0]
            beta = (sizes[1] - sizes[0]) / max(one_way[1] - one_way[0], 1e-9)
            est = torch.tensor([alpha, beta], dtype=torch.float64)
        dist.broadcast(est, 0)
    return {"latency_s": float(est[0]), "bandwidth_Bps": float(est[1])}


def collectives_workload(ctx: RankContext, message_bytes: int = 1 << 20) -> dict[str, Any]:
    """Run every accounted collective in both modes and compare with gloo and the model.

    Parameters
    ----------
    ctx : RankContext
        The rank's context.
    message_bytes : int
        Buffer size ``M`` (fp32 elements: ``M/4``; a multiple of ``4·n`` keeps the ring
        chunks equal).

    Returns
    -------
    dict
        Per collective: ``equal`` (bool, ring result equals gloo's), ``bytes_sent``
        (measured, ring), ``predicted_bytes`` (formula), ``seconds`` (ring and library),
        ``predicted_seconds`` (alpha-beta with the calibrated link); plus ``link``.
    """
    n, r = ctx.world_size, ctx.rank
    link = calibrate_link(ctx)
    gen = torch.Generator().manual_seed(1234 + r)
    x = torch.randn(message_bytes // 4, generator=gen)
    ring, lib = AccountedComm(mode="ring"), AccountedComm(mode="library")
    for comm in (ring, lib):  # warm up every code path once, then forget it
        comm.all_reduce(x[: 4 * n].clone())
        comm.all_gather(x[:4])
        comm.reduce_scatter(x[: 4 * n])
        comm.all_to_all(x[: 4 * n])
        comm.reset()
    out: dict[str, Any] = {"link": link}

    def entry(kind: str, equal: bool) -> None:
        rr, lr = ring.records[-1], lib.records[-1]
        out[kind] = {
            "equal": bool(equal),
            "message_bytes": rr.message_bytes,
            "bytes_sent": rr.bytes_sent,
            "bytes_recv": rr.bytes_recv,
            "predicted_bytes": float(collective_bytes_per_rank(kind, rr.message_bytes, n)),
            "seconds_ring": rr.seconds,
            "seconds_library": lr.seconds,
            "predicted_seconds": float(
                collective_time(kind, rr.message_bytes, n, link["bandwidth_Bps"], link["latency_s"])
            )
            if n > 1
            else 0.0,
        }

    a, b = ring.all_reduce(x.clone()), lib.all_reduce(x.clone())
    entry("all_reduce", torch.allclose(a, b, rtol=1e-5, atol=1e-5))
    shard = x[: message_bytes // 4 // n]
    a, b = ring.all_gather(shard), lib.all_gather(shard)
    entry("all_gather", torch.equal(a, b))
    a, b = ring.reduce_scatter(x), lib.reduce_scatter(x)
    entry("reduce_scatter", torch.allclose(a, b, rtol=1e-5, atol=1e-5))
    a, b = ring.all_to_all(x), lib.all_to_all(x)
    entry("all_to_all", torch.equal(a, b))
    return out


def run_collectives(
    ranks: int = 4, message_bytes: int = 1 << 20, timeout_s: float = 120.0
) -> list[dict[str, Any]]:
    """Start a virtual cluster and run :func:`collectives_workload` on it.

    Parameters
    ----------
    ranks : int
        Processes.
    message_bytes : int
        Buffer size ``M`` in bytes.
    timeout_s : float
        Wall-clock limit, in seconds.

    Returns
    -------
    list of dict
        One report per rank.
    """
    return run_cluster(collectives_workload, ranks, (message_bytes,), timeout_s=timeout_s)
