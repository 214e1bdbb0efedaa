"""Interconnects, servers and clusters: :class:`Fabric`, :class:`Node`, :class:`Fleet`.

Part of :mod:`mlsys.core.types`, which imports this module when one of its classes is
first asked for (``from mlsys.core.types import Node`` works as always): creating a
pydantic model class costs about a millisecond, and a book's first formatted number needs
only :class:`~mlsys.core.types.Accelerator`. Conventions (dense peaks, per-direction
link bandwidths, SI bytes) are those stated in :mod:`mlsys.core.types`.
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from mlsys.core._types_core import (
    Accelerator,
    Bandwidth,
    Duration,
    Money,
    Power,
    QuantityOf,
    _Model,
)
from mlsys.core.checks import count as whole_count
from mlsys.core.units import as_si

__all__ = ["Fabric", "Node", "Fleet"]


class Fabric(_Model):
    """An interconnect: a scale-up link (NVLink, ICI) or a scale-out network (InfiniBand).

    Attributes
    ----------
    kind : {"scale-up", "scale-out"}
        Inside a node (or pod slice) or between nodes.
    bandwidth : Quantity [byte/s]
        Bandwidth available to **one accelerator, per direction**.
    latency : Quantity [s]
        End-to-end latency of a small message (the alpha of the alpha-beta model).
    topology : str
        ``"switched"``, ``"fat-tree"``, ``"rail-optimized"``, ``"torus-3d"``, ``"ring"``...
    oversubscription : float
        Ratio of downlink to uplink capacity at the tightest tier (1 = non-blocking).
    link_rate : Quantity [bit/s] or None
        Signalling rate of one port, as marketed (informational).
    in_network_reduction : bool
        The switches reduce data in the network (NVLink SHARP on third-generation
        NVSwitch and later; InfiniBand SHARP), so NCCL can run its NVLS all-reduce.
    generation : str or None
        Catalog name of the link generation this fabric is built from, where it differs
        from the fabric's own name (the H800's eight NVLink 4 links: ``"NVLINK4"``); the
        per-link measurements of that generation (NCCL's LL step, the engines' custom
        all-reduce) apply to it. None: the fabric is its own generation.
    """

    kind: Literal["scale-up", "scale-out"] = "scale-out"
    bandwidth: Bandwidth
    latency: Duration
    topology: str = "switched"
    oversubscription: float = Field(1.0, ge=1.0)
    link_rate: QuantityOf("bit/s") | None = None  # type: ignore[valid-type]
    in_network_reduction: bool = False
    generation: str | None = None

    @model_validator(mode="after")
    def _positive(self) -> Fabric:
        if self.bandwidth.magnitude <= 0:
            raise ValueError("bandwidth must be positive")
        return self

    @cached_property
    def bandwidth_Bps(self) -> float:
        """Per-accelerator, per-direction bandwidth in bytes per second (float)."""
        return as_si(self.bandwidth, "byte/s")

    @cached_property
    def effective_bandwidth_Bps(self) -> float:
        """Bandwidth after oversubscription, bytes per second (worst case, all ranks busy)."""
        return self.bandwidth_Bps / self.oversubscription

    @cached_property
    def latency_s(self) -> float:
        """Latency in seconds (float)."""
        return as_si(self.latency, "s")

    @property
    def link_generation(self) -> str:
        """Catalog name of the link generation whose per-link measurements apply:
        :attr:`generation`, else the fabric's own name (str)."""
        return self.generation or self.name


class Node(_Model):
    """A server: several accelerators joined by a scale-up fabric.

    Attributes
    ----------
    accelerator : Accelerator
        The accelerator model in the node.
    accelerators_per_node : int
        How many.
    intra_fabric : Fabric
        Scale-up fabric between the node's accelerators.
    host_power : Quantity [W]
        Power of everything but the accelerators (CPUs, memory, NICs, fans, storage) at
        load.
    max_power : Quantity [W] or None
        The node's rated maximum power, if the datasheet gives one.
    unit_price : Quantity [USD] or None
        Price of the whole node, accelerators included (estimate unless cited).
    """

    accelerator: Accelerator
    accelerators_per_node: int = Field(gt=0)
    intra_fabric: Fabric
    host_power: Power = Field(default_factory=lambda: 0.0)
    max_power: Power | None = None
    unit_price: Money | None = None

    @cached_property
    def host_power_W(self) -> float:
        """Host (non-accelerator) power in watts (float)."""
        return as_si(self.host_power, "W")

    @cached_property
    def unit_price_usd(self) -> float | None:
        """Node price in US dollars, or None."""
        return None if self.unit_price is None else as_si(self.unit_price, "USD")


class Fleet(_Model):
    """A cluster: ``count`` identical nodes on one scale-out fabric.

    Attributes
    ----------
    node : Node
        The node type.
    count : int
        Number of nodes (not accelerators).
    fabric : Fabric
        Scale-out network between nodes. Required from two nodes up; a one-node fleet
        may omit it, and then its ``fabric`` is the node's own scale-up fabric (no
        traffic leaves the node).
    accelerators_per_node : int
        Accelerators of each node the job runs on: by default all of the node's, fewer for
        a job on part of a large scale-up domain — a GB200 NVL72 rack is one 72-GPU NVLink
        domain, and jobs run on 8 of its GPUs (two compute trays), or on 64 (16 of its 18
        trays) in each of several racks. The ones in use talk over the node's scale-up
        fabric as in a whole node; the rest are idle and charged nothing.

    Examples
    --------
    Four GB200 NVL72 racks with 64 GPUs in use in each, joined by 400 Gb/s InfiniBand:

    >>> from mlsys import Fabrics, Nodes
    >>> Fleet(node=Nodes.GB200_NVL72, count=4, fabric=Fabrics.IB_NDR,
    ...       accelerators_per_node=64).total_accelerators
    256
    """

    name: str = "fleet"
    node: Node
    count: int = Field(gt=0)
    fabric: Fabric | None = None
    accelerators_per_node: int | None = Field(None, gt=0)

    @field_validator("count", "accelerators_per_node", mode="before")
    @classmethod
    def _whole(cls, value: Any, info: Any) -> Any:
        # the one validator of counts: True is not one node, "4" is not four
        return None if value is None else whole_count(info.field_name, value, 0, "a whole number")

    @model_validator(mode="after")
    def _fabric_for_many_nodes(self) -> Fleet:
        if self.fabric is None:
            if self.count > 1:
                raise ValueError(
                    f"a fleet of {self.count} nodes needs fabric= (e.g. Fabrics.IB_NDR); "
                    "only a one-node fleet may omit it"
                )
            object.__setattr__(self, "fabric", self.node.intra_fabric)
        per_node = self.node.accelerators_per_node
        if self.accelerators_per_node is None:
            object.__setattr__(self, "accelerators_per_node", per_node)
        elif self.accelerators_per_node > per_node:
            raise ValueError(
                f"accelerators_per_node={self.accelerators_per_node}: a "
                f"{self.node.name} node has {per_node}; use at most that many of each node"
            )
        return self

    @property
    def total_accelerators(self) -> int:
        """Accelerators the fleet's job runs on: nodes × accelerators in use per node."""
        return self.count * int(self.accelerators_per_node or self.node.accelerators_per_node)

    @property
    def accelerator(self) -> Accelerator:
        """The accelerator model of every node."""
        return self.node.accelerator


# Documented, linked and pickled as mlsys.core.types.<name>, where users import them from
# (the reference's inventory, objects.json, names them so). Set after the classes are
# created: pydantic has resolved their annotations in this module by then.
for _cls in (Fabric, Node, Fleet):
    _cls.__module__ = "mlsys.core.types"
del _cls
