"""A virtual cluster: ``N`` ranks as CPU processes on one machine, joined by gloo.

:func:`run_cluster` starts one process per rank with the ``spawn`` start method, joins
them into a ``torch.distributed`` process group (gloo backend) through a TCP store the
parent process hosts on a free **loopback** port, runs a function on every rank and
returns what each rank returned.

Shutdown is the part that must not fail. If any rank raises, if the whole run exceeds
its timeout, or if the parent is interrupted (Ctrl-C, or SIGTERM while it waits), the
parent terminates every child (SIGTERM, then SIGKILL after a grace period) before
re-raising, so no process is left behind even when the other ranks are blocked inside a
collective waiting for the one that died. On Linux each rank also asks the kernel to
kill it if the parent dies without cleaning up (``PR_SET_PDEATHSIG``), so even a
SIGKILLed parent leaves no orphan. Each rank destroys its process group on the way out.

The function run on each rank must be importable by name (a module-level function),
because spawned children unpickle it; it receives a :class:`RankContext` and returns
something picklable (plain Python numbers, lists and dicts are best).
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import os
import queue as _queue
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from mlsys.core.errors import MlsysError, ParameterError
from mlsys.emulate.provenance import mark_results

__all__ = [
    "RankContext",
    "EmulationError",
    "RankFailedError",
    "EmulationTimeoutError",
    "run_cluster",
    "last_child_pids",
    "fail_on_rank",
    "run_workloads",
    "mesh_workload",
]

_LAST_PIDS: list[int] = []


class EmulationError(MlsysError):
    """A virtual-cluster run did not complete."""


class RankFailedError(EmulationError):
    """A rank raised (or died); the message holds its traceback.

    Parameters
    ----------
    rank : int
        The rank that failed first.
    detail : str
        Its traceback, or how it died.
    """

    def __init__(self, rank: int, detail: str) -> None:
        self.rank = rank
        self.detail = detail
        super().__init__(f"rank {rank} failed; every rank was stopped.\n{detail}")


class EmulationTimeoutError(EmulationError):
    """The run exceeded its timeout; every rank was stopped.

    Parameters
    ----------
    timeout_s : float
        The timeout, in seconds.
    missing : sequence of int
        Ranks that had not finished.
    """

    def __init__(self, timeout_s: float, missing: Sequence[int]) -> None:
        self.timeout_s = timeout_s
        self.missing = list(missing)
        super().__init__(
            f"the emulation did not finish within {timeout_s:g} s (ranks {self.missing} "
            "still running); every rank was stopped. Raise timeout_s or shrink the problem."
        )


@dataclass
class RankContext:
    """What a function run on one rank knows about the cluster.

    Attributes
    ----------
    rank : int
        This process's global rank.
    world_size : int
        Ranks in the cluster.
    timeout_s : float
        Timeout of the run, in seconds (collectives time out after it too).
    """

    rank: int
    world_size: int
    timeout_s: float = 60.0
    _meshes: dict[tuple[tuple[int, ...], tuple[str, ...] | None], Any] = field(
        default_factory=dict, repr=False
    )

    def mesh(self, shape: Sequence[int], names: Sequence[str] | None = None) -> Any:
        """A CPU ``DeviceMesh`` over all ranks (built once per shape; collective call).

        Parameters
        ----------
        shape : sequence of int
            Mesh shape, e.g. ``(4,)`` or ``(2, 2)``; its product must be the world size.
            Ranks are laid out row-major: rank ``r`` sits at ``divmod(r, shape[1])`` in 2-D.
        names : sequence of str, optional
            Names of the mesh dimensions, e.g. ``("dp", "tp")``.

        Returns
        -------
        torch.distributed.device_mesh.DeviceMesh
        """
        from torch.distributed.device_mesh import init_device_mesh

        key = (tuple(int(s) for s in shape), tuple(names) if names else None)
        if key not in self._meshes:
            self._meshes[key] = init_device_mesh("cpu", key[0], mesh_dim_names=key[1])
        return self._meshes[key]


def _loopback_ifname() -> str:
    return "lo0" if sys.platform == "darwin" else "lo"


def _die_with_parent(parent_pid: int) -> None:
    """Make the kernel kill this rank if the parent dies, however it dies (Linux)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)


class _Terminated(BaseException):
    """SIGTERM reached the parent: unwind so that ``finally`` stops the ranks."""


@contextlib.contextmanager
def _sigterm_unwinds() -> Any:
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise _Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _worker(
    rank: int,
    world_size: int,
    port: int,
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    results: Any,
    timeout_s: float,
    parent_pid: int,
) -> None:
    """Body of one rank's process: join the group, run ``fn``, report, leave."""
    _die_with_parent(parent_pid)
    # Loopback only: gloo must never pick a routable interface.
    os.environ.setdefault("GLOO_SOCKET_IFNAME", _loopback_ifname())
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    timeout = _dt.timedelta(seconds=timeout_s)
    try:
        store = dist.TCPStore("127.0.0.1", port, world_size, is_master=False, timeout=timeout)
        dist.init_process_group(
            "gloo", store=store, rank=rank, world_size=world_size, timeout=timeout
        )
        value = fn(RankContext(rank, world_size, timeout_s), *args)
        results.put((rank, "ok", value))
    except BaseException:  # report everything, KeyboardInterrupt included
        results.put((rank, "error", traceback.format_exc()))
    finally:
        with contextlib.suppress(Exception):
            if dist.is_initialized():
                dist.destroy_process_group()


def _stop(procs: Sequence[Any], grace_s: float = 3.0) -> None:
    """Terminate, then kill, every child still alive; reap them all."""
    procs = [p for p in procs if p.pid is not None]  # never-started ones need nothing
    for p in procs:
        if p.is_alive():
            with contextlib.suppress(Exception):
                p.terminate()
    deadline = time.monotonic() + grace_s
    for p in procs:
        p.join(max(0.0, deadline - time.monotonic()))
    for p in procs:
        if p.is_alive():
            with contextlib.suppress(Exception):
                p.kill()
            p.join(grace_s)


def last_child_pids() -> list[int]:
    """Process ids of the ranks of the most recent :func:`run_cluster` call.

    Returns
    -------
    list of int
        One pid per rank (useful to check that none outlived the run).
    """
    return list(_LAST_PIDS)


def run_cluster(
    fn: Callable[..., Any],
    world_size: int,
    args: Sequence[Any] = (),
    *,
    timeout_s: float = 120.0,
) -> list[Any]:
    """Run ``fn(ctx, *args)`` on ``world_size`` CPU processes joined by gloo.

    Parameters
    ----------
    fn : callable
        A module-level function ``fn(ctx: RankContext, *args) -> picklable``. It may use
        ``torch.distributed`` freely (the default group spans all ranks) and
        ``ctx.mesh(shape)`` for device meshes.
    world_size : int
        Number of ranks (processes), at least 1.
    args : sequence
        Extra positional arguments, the same on every rank (picklable).
    timeout_s : float
        Wall-clock limit of the whole run, in seconds; also the collectives' timeout.

    Returns
    -------
    list
        ``fn``'s return value on each rank, indexed by rank. Its ints and floats (inside
        dicts, lists and tuples too) are traced numbers that name the run: ``fn``, the
        rank, ``world_size`` processes, gloo (:mod:`mlsys.emulate.provenance`), so a
        page that prints one shows where it was measured.

    Raises
    ------
    RankFailedError
        When a rank raised or died; the others were stopped.
    EmulationTimeoutError
        When the run exceeded ``timeout_s``; every rank was stopped.
    ParameterError
        For a bad ``world_size`` or ``timeout_s``.
    """
    import torch.distributed as dist
    import torch.multiprocessing as mp

    if isinstance(world_size, bool) or not isinstance(world_size, int) or world_size < 1:
        raise ParameterError("world_size", world_size, "an integer >= 1")
    if not timeout_s > 0:
        raise ParameterError("timeout_s", timeout_s, "a positive number of seconds")
    ctx = mp.get_context("spawn")
    # The parent hosts the rendezvous store on a port the OS picks: no race for a port.
    store = dist.TCPStore(
        "127.0.0.1",
        0,
        world_size,
        is_master=True,
        wait_for_workers=False,
        timeout=_dt.timedelta(seconds=timeout_s),
    )
    results = ctx.Queue()
    procs = [
        ctx.Process(
            target=_worker,
            args=(rank, world_size, store.port, fn, tuple(args), results, timeout_s, os.getpid()),
            daemon=True,
            name=f"mlsys-rank-{rank}",
        )
        for rank in range(world_size)
    ]
    _LAST_PIDS.clear()
    out: dict[int, Any] = {}
    deadline = time.monotonic() + timeout_s
    guard = _sigterm_unwinds()
    guard.__enter__()
    try:
        for p in procs:
            p.start()
            _LAST_PIDS.append(p.pid)
        while len(out) < world_size:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise EmulationTimeoutError(
                    timeout_s, [r for r in range(world_size) if r not in out]
                )
            try:
                rank, status, value = results.get(timeout=min(0.2, remaining))
            except _queue.Empty:
                for rank, p in enumerate(procs):
                    if rank not in out and not p.is_alive() and p.exitcode not in (0, None):
                        raise RankFailedError(
                            rank, f"process exited with code {p.exitcode}"
                        ) from None
                continue
            if status != "ok":
                raise RankFailedError(rank, value)
            out[rank] = value
        for p in procs:
            p.join(max(0.1, deadline - time.monotonic()))
    except _Terminated:
        raise SystemExit(128 + int(signal.SIGTERM)) from None
    finally:
        _stop(procs)
        results.close()
        results.join_thread()
        del store
        guard.__exit__(None, None, None)
    per_rank = [out[r] for r in range(world_size)]
    if fn is _run_sequence:  # run_workloads names each workload of the sequence itself
        return per_rank
    return mark_results(per_rank, fn, world_size, "gloo")


def _run_sequence(
    ctx: RankContext, calls: Sequence[tuple[Callable[..., Any], tuple[Any, ...]]]
) -> list[Any]:
    return [fn(ctx, *args) for fn, args in calls]


def run_workloads(
    calls: Sequence[tuple[Callable[..., Any], Sequence[Any]]],
    world_size: int,
    *,
    timeout_s: float = 300.0,
) -> list[list[Any]]:
    """Run several workloads one after the other in a single virtual cluster.

    Starting ranks costs seconds (each process imports torch); this pays it once.

    Parameters
    ----------
    calls : sequence of (callable, args)
        Module-level functions ``fn(ctx, *args)`` and their arguments.
    world_size : int
        Number of ranks.
    timeout_s : float
        Wall-clock limit of the whole run, in seconds.

    Returns
    -------
    list of list
        ``result[i][rank]``: what call ``i`` returned on each rank, its numbers traced
        with call ``i``'s workload (as for :func:`run_cluster`).
    """
    packed = [(fn, tuple(args)) for fn, args in calls]
    per_rank = run_cluster(_run_sequence, world_size, (packed,), timeout_s=timeout_s)
    return [
        mark_results([per_rank[r][i] for r in range(world_size)], fn, world_size, "gloo")
        for i, (fn, _) in enumerate(packed)
    ]


def mesh_workload(
    ctx: RankContext, shape: Sequence[int] = (2, 2), names: Sequence[str] = ("dp", "tp")
) -> dict[str, Any]:
    """Build a device mesh and all-reduce this rank's id within each mesh dimension.

    Shows the layout a data × tensor parallel job uses: on a 2 × 2 ``("dp", "tp")``
    mesh rank 3 shares ``"tp"`` with rank 2 and ``"dp"`` with rank 1.

    Parameters
    ----------
    ctx : RankContext
        The rank's context.
    shape : sequence of int
        Mesh shape (product = world size).
    names : sequence of str
        Dimension names.

    Returns
    -------
    dict
        ``coordinate`` of this rank, and per dimension name the global ``ranks`` of
        this rank's group and the ``sum`` of their rank ids (from an all-reduce in that
        group).
    """
    import torch
    import torch.distributed as dist

    mesh = ctx.mesh(shape, names)
    out: dict[str, Any] = {"coordinate": list(mesh.get_coordinate())}
    for name in names:
        group = mesh.get_group(name)
        t = torch.tensor([float(ctx.rank)])
        dist.all_reduce(t, group=group)
        out[name] = {"ranks": dist.get_process_group_ranks(group), "sum": float(t[0])}
    return out


def fail_on_rank(ctx: RankContext, failing_rank: int = 0, how: str = "raise") -> int:
    """A workload in which one rank misbehaves while the others block in a collective.

    Used to check that :func:`run_cluster` stops every process when one rank dies or
    hangs.

    Parameters
    ----------
    ctx : RankContext
        The rank's context.
    failing_rank : int
        The rank that misbehaves.
    how : {"raise", "hang"}
        Raise an exception, or sleep far beyond any timeout.

    Returns
    -------
    int
        Never returns on a healthy cluster: the others wait for the failed rank.
    """
    import torch
    import torch.distributed as dist

    if ctx.rank == failing_rank:
        if how == "hang":
            time.sleep(10 * ctx.timeout_s)
        raise RuntimeError(f"rank {ctx.rank} fails on purpose")
    t = torch.ones(4)
    dist.all_reduce(t)  # blocks: the failing rank never joins
    return int(t[0])
