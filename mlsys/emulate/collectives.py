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
    ctx: RankContext, sizes: tuple[int, int] = (4 << 10, 1 << 20), repeats: int = 5
) -> dict[str, float]:
    """Per-step latency ``α`` and link bandwidth ``β`` of this virtual cluster.

    Times the point-to-point ring all-gather at two message sizes, with all processes
    competing for the CPU as in any collective, and solves the alpha-beta model
    ``t = (n-1)·α + (n-1)/n · M/β`` for ``α`` and ``β`` (median of ``repeats`` runs per
    size, averaged over ranks). The same two numbers then *predict* the other
    collectives and sizes, which the emulator measures separately. Collective call.

    Parameters
    ----------
    ctx : RankContext
        The rank's context.
    sizes : tuple of int
        Small and large gathered sizes ``M``, in bytes.
    repeats : int
        Runs per size.

    Returns
    -------
    dict
        ``latency_s`` (seconds) and ``bandwidth_Bps`` (bytes per second), the same on
        every rank.
    """
    n = ctx.world_size
    if n == 1:
        return {"latency_s": 0.0, "bandwidth_Bps": float("inf")}
    comm = AccountedComm(mode="ring")
    med = []
    for size in sizes:
        shard = torch.zeros(max(1, size // 4 // n), dtype=torch.float32)
        times = []
        for _ in range(repeats):
            dist.barrier()
            t0 = time.perf_counter()
            comm.all_gather(shard)
            times.append(time.perf_counter() - t0)
        med.append(sorted(times)[len(times) // 2])
    est = torch.tensor(med, dtype=torch.float64)
    dist.all_reduce(est)
    t_small, t_large = (est / n).tolist()
    inv_beta = max(t_large - t_small, 1e-12) / ((n - 1) / n * (sizes[1] - sizes[0]))
    alpha = max(t_small - (n - 1) / n * sizes[0] * inv_beta, 0.0) / (n - 1)
    return {"latency_s": alpha, "bandwidth_Bps": 1.0 / inv_beta}


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
            "library_bytes_sent": lr.bytes_sent,
            "library_accounting": lr.accounting,
            "seconds_ring": rr.seconds,
            "seconds_library": lr.seconds,
            "predicted_seconds": float(
                collective_time(kind, rr.message_bytes, n, link["bandwidth_Bps"], link["latency_s"])
            )
            if n > 1
            else 0.0,
        }

    def both(op: str, *args: Any) -> tuple[torch.Tensor, torch.Tensor]:
        # A barrier before each call: times are the collective's, not arrival skew.
        dist.barrier()
        a = getattr(ring, op)(*[t.clone() for t in args])
        dist.barrier()
        return a, getattr(lib, op)(*[t.clone() for t in args])

    a, b = both("all_reduce", x)
    entry("all_reduce", torch.allclose(a, b, rtol=1e-5, atol=1e-5))
    a, b = both("all_gather", x[: message_bytes // 4 // n])
    entry("all_gather", torch.equal(a, b))
    a, b = both("reduce_scatter", x)
    entry("reduce_scatter", torch.allclose(a, b, rtol=1e-5, atol=1e-5))
    a, b = both("all_to_all", x)
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
