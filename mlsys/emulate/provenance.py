"""Where an emulator's numbers come from: what ran, on how many CPU processes, which backend.

:func:`mlsys.emulate.cluster.run_cluster` and :func:`~mlsys.emulate.cluster.run_workloads`
hand back every number a rank returned as a traced number
(:class:`mlsys.core.traced.TracedFloat` / :class:`~mlsys.core.traced.TracedInt`) whose
origin is an :class:`EmulationOrigin`. A page that prints one with ``fmt`` shows on hover
"Measured by mlsys.emulate (collectives_workload: …), rank 2 of 4 CPU processes, …", and a
number computed from several (the maximum over ranks, a mean over steps) keeps them all.

Importing this module does not import torch.

Examples
--------
>>> out = mark_results([{"bytes_sent": 98304, "ok": True}], "collectives_workload", 4, "gloo")
>>> from mlsys.core.provenance import origin_of
>>> origin_of(out[0]["bytes_sent"]).describe()[:64]
'bytes_sent measured by mlsys.emulate (collectives_workload) on r'
"""

from __future__ import annotations

from typing import Any

from mlsys.core.traced import traced

__all__ = ["EmulationOrigin", "ReferenceOrigin", "mark_results", "mark_reference"]


def _torch_version() -> str:
    import sys

    torch = sys.modules.get("torch")  # the parent imported it to start the ranks
    return getattr(torch, "__version__", "unknown")


class EmulationOrigin:
    """A number a rank of the emulated cluster returned.

    Parameters
    ----------
    workload : str
        The function each rank ran (``"collectives_workload"``).
    summary : str
        What it does, in a few words (the first line of its docstring).
    field : str
        Where in the rank's result the number sits (``"all_reduce.bytes_sent"``; list
        positions are left out, so the steps of one series count as one origin).
    rank, world_size : int
        Which rank returned it, and how many CPU processes ran.
    backend : str
        The ``torch.distributed`` backend (``"gloo"``).
    torch_version : str
        The torch that ran it.
    """

    __slots__ = ("backend", "field", "rank", "summary", "torch_version", "workload", "world_size")

    def __init__(
        self,
        workload: str,
        summary: str,
        field: str,
        rank: int,
        world_size: int,
        backend: str,
        torch_version: str,
    ) -> None:
        self.workload = workload
        self.summary = summary
        self.field = field
        self.rank = rank
        self.world_size = world_size
        self.backend = backend
        self.torch_version = torch_version

    def _key(self) -> tuple[Any, ...]:
        return (self.workload, self.field, self.rank, self.world_size, self.backend)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, EmulationOrigin) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"EmulationOrigin({self.describe()!r})"

    def describe(self) -> str:
        """One line: the field, measured or predicted, by which run.

        Returns
        -------
        str
        """
        verb = "predicted" if "predicted" in self.field else "measured"
        what = f"{self.workload}: {self.summary}" if self.summary else self.workload
        return (
            f"{self.field} {verb} by mlsys.emulate ({what}) on rank {self.rank} of "
            f"{self.world_size} CPU processes, torch.distributed {self.backend} backend "
            f"over loopback, torch {self.torch_version}"
        )


class ReferenceOrigin:
    """A number from a single-process reference run the emulator compares against.

    Parameters
    ----------
    what : str
        What was run (``"the same MLP trained in one process"``).
    field : str
        The quantity (``"reference_losses"``).
    """

    __slots__ = ("field", "what")

    def __init__(self, what: str, field: str) -> None:
        self.what = what
        self.field = field

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ReferenceOrigin) and (other.what, other.field) == (
            self.what,
            self.field,
        )

    def __hash__(self) -> int:
        return hash((self.what, self.field))

    def describe(self) -> str:
        """One line: the field and the reference run.

        Returns
        -------
        str
        """
        return (
            f"{self.field} measured by mlsys.emulate in a single-process reference run "
            f"({self.what}, torch {_torch_version()})"
        )


def _summary(fn: Any) -> str:
    doc = (getattr(fn, "__doc__", None) or "").strip()
    line = doc.splitlines()[0].strip() if doc else ""
    return line.rstrip(".")


def _mark(value: Any, field: str, make: Any) -> Any:
    if isinstance(value, dict):
        return {k: _mark(v, f"{field}.{k}" if field else str(k), make) for k, v in value.items()}
    if type(value) is list:
        return [_mark(v, field, make) for v in value]
    if type(value) is tuple:
        return tuple(_mark(v, field, make) for v in value)
    if isinstance(value, (bool, str)) or value is None:
        return value
    return traced(value, (make(field),))


def mark_results(
    per_rank: list[Any], workload: Any, world_size: int, backend: str = "gloo"
) -> list[Any]:
    """Every number of each rank's result, traced with the run that produced it.

    Parameters
    ----------
    per_rank : list
        What the workload returned on each rank (dicts, lists and numbers; anything
        else, such as arrays and strings, is left as it is).
    workload : callable or str
        The function the ranks ran (its name and the first line of its docstring say
        what ran), or a name.
    world_size : int
        Number of CPU processes.
    backend : str
        ``torch.distributed`` backend.

    Returns
    -------
    list
        The same structure; ints and floats are equal traced numbers whose origin is an
        :class:`EmulationOrigin`.
    """
    name = workload if isinstance(workload, str) else getattr(workload, "__name__", "workload")
    summary = "" if isinstance(workload, str) else _summary(workload)
    version = _torch_version()
    out = []
    for rank, value in enumerate(per_rank):

        def make(field: str, rank: int = rank) -> EmulationOrigin:
            return EmulationOrigin(name, summary, field, rank, world_size, backend, version)

        out.append(_mark(value, "", make))
    return out


def mark_reference(value: Any, what: str, field: str) -> Any:
    """A reference run's numbers (lists, dicts, numbers) traced with a :class:`ReferenceOrigin`.

    Parameters
    ----------
    value : Any
        Numbers, or lists and dicts of them.
    what : str
        What the reference run was.
    field : str
        The quantity's name.

    Returns
    -------
    Any
        The same structure with traced numbers.
    """
    origin = ReferenceOrigin(what, field)
    return _mark(value, field, lambda _field: origin)
