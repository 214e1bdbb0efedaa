"""Collectives that keep accounts: bytes sent and received per rank, and wall time.

Two kinds of bytes appear in the ledger, and they are never mixed up:

* **measured** — bytes this process handed to ``torch.distributed.send`` / ``isend``
  (or received through ``recv`` / ``irecv``): the payload that really crossed the
  process boundary, counted from the tensors' sizes. Collectives built here from
  point-to-point rings (``mode="ring"``) are measured this way.
* **model** — for gloo's own collectives (``mode="library"``) the wire traffic happens
  inside gloo, which does not report it and may choose any algorithm; the ledger records
  the *algorithmic* bytes of the bandwidth-optimal ring from
  :mod:`mlsys.core.formulas.collectives` (``2(n-1)/n·M`` for all-reduce and so on).
  They are a statement of the cost model, not a measurement.

Neither count includes gloo's headers or TCP framing: "bytes" means tensor payload.
Wall times are measured with ``time.perf_counter`` around each call, on every rank.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any

import torch
import torch.distributed as dist

from mlsys.core.errors import ParameterError
from mlsys.core.formulas.collectives import collective_bytes_per_rank

__all__ = ["CommRecord", "AccountedComm"]

_MODES = ("ring", "library")


@dataclass(frozen=True)
class CommRecord:
    """One communication call as this rank saw it.

    Attributes
    ----------
    op : str
        ``"all_reduce"``, ``"all_gather"``, ``"reduce_scatter"``, ``"all_to_all"``,
        ``"broadcast"``, ``"send"`` or ``"recv"``.
    group_size : int
        Ranks in the group.
    message_bytes : float
        Buffer size ``M`` in bytes, in the convention of
        :mod:`mlsys.core.formulas.collectives`.
    bytes_sent : float
        Bytes this rank sent.
    bytes_recv : float
        Bytes this rank received.
    seconds : float
        Wall time of the call on this rank, in seconds.
    accounting : str
        ``"measured"`` (point-to-point payload counted) or ``"model"`` (algorithmic
        bytes of the ring cost model, for gloo's own collectives).
    """

    op: str
    group_size: int
    message_bytes: float
    bytes_sent: float
    bytes_recv: float
    seconds: float
    accounting: str


def _nbytes(t: torch.Tensor) -> int:
    return t.numel() * t.element_size()


class AccountedComm:
    """Collectives over a process group that record bytes and time per rank.

    Parameters
    ----------
    group : ProcessGroup, optional
        The group to communicate in (default: all ranks).
    mode : {"ring", "library"}
        ``"ring"`` runs all-reduce, all-gather, reduce-scatter and all-to-all as
        point-to-point algorithms written here, so their bytes are measured;
        ``"library"`` calls gloo's collectives and records the ring model's bytes.

    Attributes
    ----------
    records : list of CommRecord
        Every call so far, in order.
    """

    def __init__(self, group: Any = None, mode: str = "ring") -> None:
        if mode not in _MODES:
            raise ParameterError("mode", mode, "one of " + ", ".join(_MODES))
        self.group = group
        self.mode = mode
        self.ranks: list[int] = (
            dist.get_process_group_ranks(group)
            if group is not None
            else list(range(dist.get_world_size()))
        )
        self.size = len(self.ranks)
        self.index = self.ranks.index(dist.get_rank())
        self.records: list[CommRecord] = []
        self._sent = 0
        self._recv = 0

    # -- ledger ---------------------------------------------------------------------
    def reset(self) -> None:
        """Forget every record."""
        self.records.clear()

    def totals(self) -> dict[str, float]:
        """Sums over the records: ``bytes_sent``, ``bytes_recv``, ``seconds``, ``calls``.

        Returns
        -------
        dict
            Bytes, bytes, seconds, count.
        """
        return {
            "bytes_sent": float(sum(r.bytes_sent for r in self.records)),
            "bytes_recv": float(sum(r.bytes_recv for r in self.records)),
            "seconds": float(sum(r.seconds for r in self.records)),
            "calls": float(len(self.records)),
        }

    def as_dicts(self) -> list[dict[str, Any]]:
        """The records as plain dictionaries (picklable, printable).

        Returns
        -------
        list of dict
        """
        return [asdict(r) for r in self.records]

    def _record(
        self, op: str, message: float, t0: float, sent: float, recv: float, how: str
    ) -> None:
        self.records.append(
            CommRecord(
                op,
                self.size,
                float(message),
                float(sent),
                float(recv),
                time.perf_counter() - t0,
                how,
            )
        )

    # -- point to point (always measured) ------------------------------------------------
    def _peer(self, offset: int) -> int:
        return self.ranks[(self.index + offset) % self.size]

    def _exchange(self, send: torch.Tensor, dst: int, recv: torch.Tensor, src: int) -> None:
        """Send ``send`` to ``dst`` while receiving ``recv`` from ``src`` (global ranks)."""
        ops = [
            dist.P2POp(dist.isend, send.contiguous(), dst, self.group),
            dist.P2POp(dist.irecv, recv, src, self.group),
        ]
        for req in dist.batch_isend_irecv(ops):
            req.wait()
        self._sent += _nbytes(send)
        self._recv += _nbytes(recv)

    def send(self, tensor: torch.Tensor, dst: int) -> None:
        """Blocking send of ``tensor`` to global rank ``dst`` (measured).

        Parameters
        ----------
        tensor : torch.Tensor
            Payload.
        dst : int
            Destination global rank.
        """
        t0 = time.perf_counter()
        dist.send(tensor.contiguous(), dst, group=self.group)
        n = _nbytes(tensor)
        self._record("send", n, t0, n, 0, "measured")

    def recv(self, tensor: torch.Tensor, src: int) -> torch.Tensor:
        """Blocking receive into ``tensor`` from global rank ``src`` (measured).

        Parameters
        ----------
        tensor : torch.Tensor
            Buffer of the right shape and dtype; filled in place.
        src : int
            Source global rank.

        Returns
        -------
        torch.Tensor
            ``tensor``.
        """
        t0 = time.perf_counter()
        dist.recv(tensor, src, group=self.group)
        n = _nbytes(tensor)
        self._record("recv", n, t0, 0, n, "measured")
        return tensor

    # -- rings built from point-to-point ---------------------------------------------------
    def ring_all_reduce(self, tensor: torch.Tensor) -> torch.Tensor:
        """Sum ``tensor`` over the group in place with a ring of sends (measured bytes).

        Reduce-scatter then all-gather around the ring (Patarasuk & Yuan 2009): the flat
        buffer is cut into ``n`` chunks; in each of ``n-1`` steps every rank sends one
        chunk to its right neighbour and adds the chunk arriving from its left; then
        ``n-1`` more steps circulate the reduced chunks. Each rank sends
        ``2(n-1)/n · M`` bytes when ``M`` divides evenly.

        Parameters
        ----------
        tensor : torch.Tensor
            Contiguous buffer, overwritten with the sum.

        Returns
        -------
        torch.Tensor
            ``tensor``.
        """
        t0 = time.perf_counter()
        self._sent = self._recv = 0
        n = self.size
        if n > 1:
            flat = tensor.view(-1)
            chunks = list(torch.tensor_split(flat, n))
            right, left = self._peer(1), self._peer(-1)
            r = self.index
            for step in range(n - 1):
                send_i, recv_i = (r - step) % n, (r - step - 1) % n
                buf = torch.empty_like(chunks[recv_i])
                self._exchange(chunks[send_i], right, buf, left)
                chunks[recv_i].add_(buf)
            for step in range(n - 1):
                send_i, recv_i = (r + 1 - step) % n, (r - step) % n
                buf = torch.empty_like(chunks[recv_i])
                self._exchange(chunks[send_i], right, buf, left)
                chunks[recv_i].copy_(buf)
        self._record("all_reduce", _nbytes(tensor), t0, self._sent, self._recv, "measured")
        return tensor

    def _ring_all_gather(self, shard: torch.Tensor) -> list[torch.Tensor]:
        n, r = self.size, self.index
        parts: list[torch.Tensor | None] = [None] * n
        parts[r] = shard.contiguous()
        right, left = self._peer(1), self._peer(-1)
        for step in range(n - 1):
            send_i, recv_i = (r - step) % n, (r - step - 1) % n
            buf = torch.empty_like(parts[r])
            self._exchange(parts[send_i], right, buf, left)
            parts[recv_i] = buf
        return parts  # type: ignore[return-value]

    def _ring_reduce_scatter(self, chunks: list[torch.Tensor]) -> torch.Tensor:
        n, r = self.size, self.index
        acc = [c.clone() for c in chunks]
        right, left = self._peer(1), self._peer(-1)
        # After n-1 steps rank r holds the full sum of chunk r.
        for step in range(n - 1):
            send_i, recv_i = (r - step - 1) % n, (r - step - 2) % n
            buf = torch.empty_like(acc[recv_i])
            self._exchange(acc[send_i], right, buf, left)
            acc[recv_i].add_(buf)
        return acc[r]

    # -- collectives ------------------------------------------------------------------------
    def all_reduce(self, tensor: torch.Tensor) -> torch.Tensor:
        """Sum ``tensor`` over the group, in place.

        Parameters
        ----------
        tensor : torch.Tensor
            Buffer of ``M`` bytes.

        Returns
        -------
        torch.Tensor
            ``tensor``, now the sum.
        """
        if self.mode == "ring":
            return self.ring_all_reduce(tensor)
        t0 = time.perf_counter()
        dist.all_reduce(tensor, group=self.group)
        b = collective_bytes_per_rank("all_reduce", _nbytes(tensor), self.size)
        self._record("all_reduce", _nbytes(tensor), t0, b, b, "model")
        return tensor

    def all_gather(self, shard: torch.Tensor, dim: int = 0) -> torch.Tensor:
        """Concatenate every rank's equal-shaped ``shard`` along ``dim`` (in rank order).

        Parameters
        ----------
        shard : torch.Tensor
            This rank's piece; ``M`` is the size of the gathered result.
        dim : int
            Dimension to concatenate along.

        Returns
        -------
        torch.Tensor
            The gathered tensor, ``n`` times larger along ``dim``.
        """
        t0 = time.perf_counter()
        self._sent = self._recv = 0
        m = _nbytes(shard) * self.size
        if self.mode == "ring":
            parts = self._ring_all_gather(shard) if self.size > 1 else [shard]
            out = torch.cat(parts, dim=dim)
            self._record("all_gather", m, t0, self._sent, self._recv, "measured")
            return out
        parts = [torch.empty_like(shard.contiguous()) for _ in range(self.size)]
        dist.all_gather(parts, shard.contiguous(), group=self.group)
        b = collective_bytes_per_rank("all_gather", m, self.size)
        self._record("all_gather", m, t0, b, b, "model")
        return torch.cat(parts, dim=dim)

    def reduce_scatter(self, tensor: torch.Tensor, dim: int = 0) -> torch.Tensor:
        """Sum ``tensor`` over the group and keep this rank's ``1/n`` slice along ``dim``.

        Parameters
        ----------
        tensor : torch.Tensor
            The full ``M``-byte input; its size along ``dim`` must divide by ``n``.
        dim : int
            Dimension to split.

        Returns
        -------
        torch.Tensor
            The reduced slice that belongs to this rank.
        """
        t0 = time.perf_counter()
        self._sent = self._recv = 0
        m = _nbytes(tensor)
        chunks = [c.contiguous() for c in torch.chunk(tensor, self.size, dim=dim)]
        if self.mode == "ring":
            out = self._ring_reduce_scatter(chunks) if self.size > 1 else chunks[0].clone()
            self._record("reduce_scatter", m, t0, self._sent, self._recv, "measured")
            return out
        out = torch.empty_like(chunks[self.index])
        dist.reduce_scatter(out, chunks, group=self.group)
        b = collective_bytes_per_rank("reduce_scatter", m, self.size)
        self._record("reduce_scatter", m, t0, b, b, "model")
        return out

    def all_to_all(self, tensor: torch.Tensor) -> torch.Tensor:
        """Exchange block ``j`` of dim 0 with rank ``j`` (pairwise exchange).

        Parameters
        ----------
        tensor : torch.Tensor
            Send buffer of ``M`` bytes, dim 0 divisible by ``n``.

        Returns
        -------
        torch.Tensor
            Receive buffer: block ``j`` came from rank ``j``.
        """
        t0 = time.perf_counter()
        self._sent = self._recv = 0
        m = _nbytes(tensor)
        blocks = [b.contiguous() for b in torch.chunk(tensor, self.size, dim=0)]
        if self.mode == "ring":
            out = [torch.empty_like(b) for b in blocks]
            out[self.index] = blocks[self.index].clone()
            for step in range(1, self.size):
                dst_i, src_i = (self.index + step) % self.size, (self.index - step) % self.size
                self._exchange(blocks[dst_i], self.ranks[dst_i], out[src_i], self.ranks[src_i])
            self._record("all_to_all", m, t0, self._sent, self._recv, "measured")
            return torch.cat(out, dim=0)
        out_t = torch.empty_like(tensor.contiguous())
        dist.all_to_all_single(out_t, tensor.contiguous(), group=self.group)
        b = collective_bytes_per_rank("all_to_all", m, self.size)
        self._record("all_to_all", m, t0, b, b, "model")
        return out_t

    def broadcast(self, tensor: torch.Tensor, src: int = 0) -> torch.Tensor:
        """Copy ``tensor`` from global rank ``src`` to every rank, in place.

        Always gloo's broadcast; bytes follow the pipelined-chain model (``M`` sent by
        every rank but the last of the chain, ``M`` received by every rank but the root).

        Parameters
        ----------
        tensor : torch.Tensor
            Buffer of ``M`` bytes.
        src : int
            Root, a global rank.

        Returns
        -------
        torch.Tensor
            ``tensor``.
        """
        t0 = time.perf_counter()
        dist.broadcast(tensor, src, group=self.group)
        m = _nbytes(tensor)
        root = self.ranks.index(src)
        pos = (self.index - root) % self.size  # place along the chain from the root
        sent = m if pos < self.size - 1 else 0
        recv = m if pos > 0 else 0
        self._record("broadcast", m, t0, sent, recv, "model")
        return tensor
