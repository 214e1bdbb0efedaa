"""Tensor parallelism on the virtual cluster: sharded matmuls and a Megatron MLP block.

Every policy of :mod:`mlsys.core.formulas.sharding` runs twice on each rank:

1. **explicitly**, with the point-to-point collectives of :class:`~mlsys.emulate.comm.
   AccountedComm` (``mode="ring"``), so the bytes each rank sends are *measured* and can
   be compared with :func:`~mlsys.core.formulas.sharding.matmul_bytes_per_rank`;
2. **with DTensor**: the same placement expressed as ``Shard`` / ``Replicate`` /
   ``Partial`` on a ``DeviceMesh``, the product taken by DTensor's sharding propagation
   and redistributed to a replicated result; ``CommDebugMode`` records which collectives
   DTensor issued (their kinds must match the formula's steps).

Both results are compared with the unsharded product computed locally from the same
seeded inputs.
"""

from __future__ import annotations

import time
from typing import Any

import torch
import torch.distributed as dist

from mlsys.core.errors import ParameterError
from mlsys.core.formulas.collectives import collective_time
from mlsys.core.formulas.sharding import (
    SHARDING_POLICIES,
    _policy,
    _square_split,
    matmul_collectives,
    megatron_mlp_bytes_per_rank,
)
from mlsys.emulate.cluster import RankContext, run_cluster
from mlsys.emulate.collectives import calibrate_link
from mlsys.emulate.comm import AccountedComm

__all__ = [
    "matmul_workload",
    "ffn_workload",
    "run_matmul",
    "run_ffn",
    "mesh_split",
]


def mesh_split(ranks: int, inner_ranks: int | None = None) -> tuple[int, int]:
    """``(outer, inner)`` mesh shape used by the ``outer_inner`` policy.

    Parameters
    ----------
    ranks : int
        Ranks in the mesh.
    inner_ranks : int, optional
        Size of the inner (contracted-dimension) axis; default as in
        :func:`mlsys.core.formulas.sharding.matmul_collectives`.

    Returns
    -------
    tuple of int
        ``(outer, inner)``.
    """
    if inner_ranks is None:
        inner_ranks = _square_split(ranks)
    if ranks % inner_ranks:
        raise ParameterError("inner_ranks", inner_ranks, f"a divisor of ranks={ranks}")
    return ranks // inner_ranks, inner_ranks


def _check_dims(policy: str, m: int, k: int, n: int, ranks: int, inner: int | None) -> None:
    need = {
        "unsharded": {},
        "inner": {"k": ranks},
        "inner_a": {"k": ranks},
        "inner_b": {"k": ranks},
        "outer_m": {"m": ranks},
        "outer_n": {"n": ranks},
    }.get(policy)
    if need is None:  # outer_inner
        to, ti = mesh_split(ranks, inner)
        need = {"m": to, "k": ti}
    dims = {"m": m, "k": k, "n": n}
    for dim, div in need.items():
        if dims[dim] % div:
            raise ParameterError(dim, dims[dim], f"a multiple of {div} for policy {policy!r}")


def _kind(op: Any) -> str:
    name = str(op)
    for k in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"):
        if k in name:
            return k
    return name


def _dtensor_product(
    policy: str, ctx: RankContext, A: torch.Tensor, B: torch.Tensor, to: int, ti: int
) -> tuple[torch.Tensor, dict[str, int], str]:
    """The product with DTensor placements; returns (replicated C, comm counts, placements)."""
    from torch.distributed.tensor import DTensor, Replicate, Shard
    from torch.distributed.tensor.debug import CommDebugMode

    n_ranks = ctx.world_size
    R = Replicate()

    def local(t: torch.Tensor, placements: list[Any], mesh: Any) -> Any:
        # Cut this rank's shard out of the full tensor without communicating.
        for mesh_dim, p in enumerate(placements):
            if isinstance(p, Shard):
                coord = mesh.get_coordinate()[mesh_dim]
                t = torch.chunk(t, mesh.size(mesh_dim), dim=p.dim)[coord]
        return DTensor.from_local(t.contiguous(), mesh, placements, run_check=False)

    with CommDebugMode() as cdm:
        if policy == "outer_inner":
            mesh = ctx.mesh((to, ti), ("outer", "inner"))
            dA = local(A, [Shard(0), Shard(1)], mesh)
            dB = local(B, [R, Shard(0)], mesh)
            dC = dA @ dB  # [Shard(0), Partial()]
            placed = str(tuple(dC.placements))
            dC = dC.redistribute(mesh, [Shard(0), R])  # all-reduce over "inner"
            C = dC.full_tensor()  # all-gather over "outer"
        else:
            mesh = ctx.mesh((n_ranks,), ("tp",))
            pa, pb = {
                "unsharded": (R, R),
                "inner": (Shard(1), Shard(0)),
                "inner_a": (Shard(1), R),
                "inner_b": (R, Shard(0)),
                "outer_m": (Shard(0), R),
                "outer_n": (R, Shard(1)),
            }[policy]
            dA, dB = local(A, [pa], mesh), local(B, [pb], mesh)
            if policy == "inner_a":  # the rule: gather the operand split on k first
                dA = dA.redistribute(mesh, [R])
            if policy == "inner_b":
                dB = dB.redistribute(mesh, [R])
            dC = dA @ dB
            placed = str(tuple(dC.placements))
            C = dC.full_tensor()
    counts: dict[str, int] = {}
    for op, c in cdm.get_comm_counts().items():
        counts[_kind(op)] = counts.get(_kind(op), 0) + int(c)
    return C, counts, placed


def _explicit_product(
    policy: str, ctx: RankContext, A: torch.Tensor, B: torch.Tensor, to: int, ti: int, output: str
) -> tuple[torch.Tensor, list[AccountedComm]]:
    """The product with hand-written placements and accounted ring collectives.

    A barrier separates local arithmetic from each collective, so a collective's
    recorded time is communication, not waiting for a slower neighbour's matmul.
    """
    N, r = ctx.world_size, ctx.rank
    sync = dist.barrier

    def part(t: torch.Tensor, dim: int, parts: int, i: int) -> torch.Tensor:
        return torch.chunk(t, parts, dim=dim)[i].contiguous()

    if policy == "outer_inner":
        mesh = ctx.mesh((to, ti), ("outer", "inner"))
        io, ii = mesh.get_coordinate()
        inner = AccountedComm(mesh.get_group("inner"), mode="ring")
        outer = AccountedComm(mesh.get_group("outer"), mode="ring")
        P = part(part(A, 0, to, io), 1, ti, ii) @ part(B, 0, ti, ii)  # partial C[m/To, n]
        sync()
        if output == "sharded":
            return inner.reduce_scatter(P, dim=0) if ti > 1 else P, [inner, outer]
        if ti > 1:
            inner.all_reduce(P)
            sync()
        return (outer.all_gather(P, dim=0) if to > 1 else P), [inner, outer]
    comm = AccountedComm(mode="ring")
    if policy == "unsharded":
        return A @ B, [comm]
    if policy == "inner":
        P = part(A, 1, N, r) @ part(B, 0, N, r)
        sync()
        return (comm.reduce_scatter(P, 0) if output == "sharded" else comm.all_reduce(P)), [comm]
    if policy == "inner_a":
        return comm.all_gather(part(A, 1, N, r), dim=1) @ B, [comm]
    if policy == "inner_b":
        return A @ comm.all_gather(part(B, 0, N, r), dim=0), [comm]
    if policy == "outer_m":
        Cr = part(A, 0, N, r) @ B
        sync()
        return (Cr if output == "sharded" else comm.all_gather(Cr, dim=0)), [comm]
    Cr = A @ part(B, 1, N, r)  # outer_n
    sync()
    return (Cr if output == "sharded" else comm.all_gather(Cr, dim=1)), [comm]


def _expected_shard(
    policy: str, C: torch.Tensor, ctx: RankContext, to: int, ti: int, output: str
) -> torch.Tensor:
    if output != "sharded" or policy in ("unsharded", "inner_a", "inner_b"):
        return C
    N, r = ctx.world_size, ctx.rank
    if policy == "inner":
        return torch.chunk(C, N, 0)[r]
    if policy == "outer_m":
        return torch.chunk(C, N, 0)[r]
    if policy == "outer_n":
        return torch.chunk(C, N, 1)[r]
    io, ii = divmod(r, ti)  # outer_inner: C[m/To, n] reduce-scattered over inner
    return torch.chunk(torch.chunk(C, to, 0)[io], ti, 0)[ii]


def _rel_err(x: torch.Tensor, ref: torch.Tensor) -> float:
    return float((x - ref).abs().max() / ref.abs().max().clamp_min(1e-30))


def matmul_workload(
    ctx: RankContext,
    policies: tuple[str, ...] = SHARDING_POLICIES,
    m: int = 256,
    k: int = 256,
    n: int = 256,
    inner_ranks: int | None = None,
    output: str = "replicated",
    seed: int = 0,
    dtensor: bool = True,
) -> dict[str, Any]:
    """Run ``C = A·B`` under each policy on this rank; compare and account.

    Parameters
    ----------
    ctx : RankContext
        The rank's context.
    policies : tuple of str
        Policies from :data:`~mlsys.core.formulas.sharding.SHARDING_POLICIES`.
    m, k, n : int
        Matrix dimensions (elements); must divide by the sharded mesh axis.
    inner_ranks : int, optional
        Inner axis for ``outer_inner``.
    output : {"replicated", "sharded"}
        Whether the explicit version ends replicated or sharded.
    seed : int
        Seed of the fp32 inputs (the same on every rank).
    dtensor : bool
        Also run the DTensor version.

    Returns
    -------
    dict
        ``link`` (calibrated ``latency_s``, ``bandwidth_Bps``) and per policy:
        ``rel_err`` (explicit vs unsharded, max-abs relative), ``dtensor_rel_err``,
        ``dtensor_comms`` (collective kind -> count), ``dtensor_placements``,
        ``predicted_steps`` (kinds), ``bytes_sent`` and ``bytes_recv`` (measured),
        ``predicted_bytes``, ``comm_seconds`` (measured), ``predicted_seconds``
        (alpha-beta on the calibrated link), ``seconds`` (whole policy, measured).
    """
    link = calibrate_link(ctx)
    gen = torch.Generator().manual_seed(seed)
    A = torch.randn(m, k, generator=gen)
    B = torch.randn(k, n, generator=gen)
    C_ref = A @ B
    out: dict[str, Any] = {"link": link}
    for raw in policies:
        policy = (
            raw
            if raw in SHARDING_POLICIES
            else {"outer": "outer_m", "both": "outer_inner"}.get(raw, raw)
        )
        _check_dims(policy, m, k, n, ctx.world_size, inner_ranks)
        to, ti = (
            mesh_split(ctx.world_size, inner_ranks)
            if policy == "outer_inner"
            else (1, ctx.world_size)
        )
        dist.barrier()
        t0 = time.perf_counter()
        C, comms = _explicit_product(policy, ctx, A, B, to, ti, output)
        seconds = time.perf_counter() - t0
        steps = matmul_collectives(
            policy,
            m,
            k,
            n,
            ctx.world_size,
            "fp32",
            output=output,
            inner_ranks=ti if policy == "outer_inner" else None,
        )
        totals = [c.totals() for c in comms]
        rep: dict[str, Any] = {
            "rel_err": _rel_err(C, _expected_shard(policy, C_ref, ctx, to, ti, output)),
            "bytes_sent": sum(t["bytes_sent"] for t in totals),
            "bytes_recv": sum(t["bytes_recv"] for t in totals),
            "comm_seconds": sum(t["seconds"] for t in totals),
            "seconds": seconds,
            "predicted_bytes": float(sum(s.bytes_per_rank for s in steps)),
            "predicted_steps": [s.kind for s in steps],
            "predicted_seconds": float(
                sum(
                    collective_time(
                        s.kind,
                        s.message_bytes,
                        s.group_size,
                        link["bandwidth_Bps"],
                        link["latency_s"],
                    )
                    for s in steps
                )
            ),
        }
        if dtensor:
            dist.barrier()
            Cd, counts, placed = _dtensor_product(policy, ctx, A, B, to, ti)
            rep.update(
                dtensor_rel_err=_rel_err(Cd, C_ref), dtensor_comms=counts, dtensor_placements=placed
            )
        out[policy] = rep
    return out


class _CopyToTP(torch.autograd.Function):
    """Megatron's ``f``: identity forward, all-reduce of the gradient backward."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, comm: AccountedComm) -> torch.Tensor:
        ctx.comm = comm
        return x.view_as(x)

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        return ctx.comm.all_reduce(grad.contiguous().clone()), None


class _ReduceFromTP(torch.autograd.Function):
    """Megatron's ``g``: all-reduce forward, identity backward."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, comm: AccountedComm) -> torch.Tensor:
        return comm.all_reduce(x.contiguous().clone())

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        return grad, None


def ffn_workload(
    ctx: RankContext,
    batch_size: int = 2,
    seq_len: int = 16,
    hidden: int = 64,
    ffn_hidden: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """A tensor-parallel feed-forward block, forward and backward, against the unsharded one.

    ``Z = GeLU(X·W1)·W2`` with ``W1`` split by columns and ``W2`` by rows over all ranks
    (Shoeybi et al. 2019, Sec. 3): one all-reduce of ``Z`` (``b·s·h``) forward, one of
    ``dL/dX`` backward. The loss is ``sum(Z ∘ G)`` for a fixed random ``G``.

    Parameters
    ----------
    ctx : RankContext
        The rank's context.
    batch_size, seq_len, hidden : int
        ``b``, ``s``, ``h``.
    ffn_hidden : int, optional
        Intermediate width (default ``4h``); must divide by the rank count.
    seed : int
        Seed of weights, inputs and ``G`` (the same on every rank).

    Returns
    -------
    dict
        ``rel_err`` for ``Z``, ``dX``, ``dW1``, ``dW2`` (this rank's shards against the
        unsharded block's), measured ``forward_bytes`` / ``backward_bytes`` sent, their
        predictions, and ``forward_seconds`` / ``backward_seconds`` of communication.
    """
    t = ctx.world_size
    f = 4 * hidden if ffn_hidden is None else ffn_hidden
    if f % t:
        raise ParameterError("ffn_hidden", f, f"a multiple of the {t} ranks")
    gen = torch.Generator().manual_seed(seed)
    X = torch.randn(batch_size * seq_len, hidden, generator=gen)
    W1 = torch.randn(hidden, f, generator=gen) / hidden**0.5
    W2 = torch.randn(f, hidden, generator=gen) / f**0.5
    G = torch.randn(batch_size * seq_len, hidden, generator=gen)

    # The unsharded block, on every rank.
    Xr, W1r, W2r = (p.clone().requires_grad_() for p in (X, W1, W2))
    Zr = torch.nn.functional.gelu(Xr @ W1r) @ W2r
    (Zr * G).sum().backward()

    cols = slice(ctx.rank * f // t, (ctx.rank + 1) * f // t)
    Xs = X.clone().requires_grad_()
    W1s = W1[:, cols].clone().requires_grad_()
    W2s = W2[cols, :].clone().requires_grad_()
    comm = AccountedComm(mode="ring")
    Z = _ReduceFromTP.apply(torch.nn.functional.gelu(_CopyToTP.apply(Xs, comm) @ W1s) @ W2s, comm)
    fwd = comm.totals()
    (Z * G).sum().backward()
    tot = comm.totals()
    pred_fwd = float(megatron_mlp_bytes_per_rank(batch_size, seq_len, hidden, t, "fp32", "forward"))
    return {
        "rel_err": {
            "Z": _rel_err(Z.detach(), Zr.detach()),
            "dX": _rel_err(Xs.grad, Xr.grad),
            "dW1": _rel_err(W1s.grad, W1r.grad[:, cols]),
            "dW2": _rel_err(W2s.grad, W2r.grad[cols, :]),
        },
        "forward_bytes": fwd["bytes_sent"],
        "backward_bytes": tot["bytes_sent"] - fwd["bytes_sent"],
        "predicted_forward_bytes": pred_fwd,
        "predicted_backward_bytes": float(
            megatron_mlp_bytes_per_rank(batch_size, seq_len, hidden, t, "fp32", "backward")
        ),
        "forward_seconds": fwd["seconds"],
        "backward_seconds": tot["seconds"] - fwd["seconds"],
        "allreduces": int(tot["calls"]),
    }


def run_matmul(
    ranks: int = 4,
    policies: tuple[str, ...] = SHARDING_POLICIES,
    m: int = 256,
    k: int = 256,
    n: int = 256,
    *,
    inner_ranks: int | None = None,
    output: str = "replicated",
    dtensor: bool = True,
    timeout_s: float = 120.0,
) -> list[dict[str, Any]]:
    """Start a virtual cluster and run :func:`matmul_workload` on it.

    Parameters
    ----------
    ranks : int
        Processes.
    policies : tuple of str
        Sharding policies to run.
    m, k, n : int
        Matrix dimensions.
    inner_ranks : int, optional
        Inner axis for ``outer_inner``.
    output : {"replicated", "sharded"}
        Result layout of the explicit version.
    dtensor : bool
        Also run the DTensor version.
    timeout_s : float
        Wall-clock limit, in seconds.

    Returns
    -------
    list of dict
        One report per rank.
    """
    policies = tuple(_policy(p) for p in policies)
    for policy in policies:  # fail in the parent, before any process starts
        _check_dims(policy, m, k, n, ranks, inner_ranks)
    args = (policies, m, k, n, inner_ranks, output, 0, dtensor)
    return run_cluster(matmul_workload, ranks, args, timeout_s=timeout_s)


def run_ffn(
    ranks: int = 2,
    batch_size: int = 2,
    seq_len: int = 16,
    hidden: int = 64,
    ffn_hidden: int | None = None,
    *,
    timeout_s: float = 120.0,
) -> list[dict[str, Any]]:
    """Start a virtual cluster and run :func:`ffn_workload` on it.

    Parameters
    ----------
    ranks : int
        Tensor-parallel ranks.
    batch_size, seq_len, hidden : int
        ``b``, ``s``, ``h``.
    ffn_hidden : int, optional
        Intermediate width (default ``4h``).
    timeout_s : float
        Wall-clock limit, in seconds.

    Returns
    -------
    list of dict
        One report per rank.
    """
    f = 4 * hidden if ffn_hidden is None else ffn_hidden
    if f % ranks:
        raise ParameterError("ffn_hidden", f, f"a multiple of the {ranks} ranks")
    args = (batch_size, seq_len, hidden, ffn_hidden)
    return run_cluster(ffn_workload, ranks, args, timeout_s=timeout_s)
