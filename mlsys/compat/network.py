"""The textbook's network roofline: is a data-parallel fleet compute- or network-bound?

*Machine Learning Systems* (harvard-edge/cs249r_book) calls
``NetworkRooflineModel().solve(model, fleet, precision="fp16", efficiency=0.5)`` to lift the
roofline (Williams et al. 2009) to a fleet: the work of one training token against the
gradient synchronisation it needs. mlsys serves it with its cited formulas:

* the work: ``6 N`` FLOPs per token (:func:`~mlsys.core.formulas.transformer.training_flops`),
  spread over every accelerator's peak at the given efficiency;
* the traffic: a ring all-reduce of the ``N``-parameter gradient across the fleet, on
  each rank's share of the scale-out fabric
  (:func:`~mlsys.core.formulas.collectives.ring_allreduce_time`,
  :func:`~mlsys.core.formulas.collectives.ring_allreduce_bytes_per_rank`,
  :func:`~mlsys.core.formulas.collectives.effective_bandwidth`; Patarasuk & Yuan 2009).

The slower of the two is the step; the communication intensity (FLOPs per byte each rank
sends) against the ridge (peak over link bandwidth) says which binds.

``TopologyModel().solve(fabric, topology, num_nodes)`` gives the bisection bandwidth and
mean distance a ring, 3D torus or fat tree leaves of a fabric's links
(:mod:`mlsys.core.formulas.topology`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from mlsys.compat._args import fraction
from mlsys.compat._unwrap import as_catalog
from mlsys.core.errors import ParameterError
from mlsys.core.formulas.collectives import (
    effective_bandwidth,
    ring_allreduce_bytes_per_rank,
    ring_allreduce_time,
)
from mlsys.core.formulas.transformer import training_flops
from mlsys.core.results import Result

__all__ = ["NetworkRooflineModel", "NetworkRooflineResult", "TopologyModel", "TopologyResult"]


class NetworkRooflineResult(Result):
    """What the book's ``NetworkRooflineModel().solve`` returns (its roofline profile).

    Attributes
    ----------
    latency : Quantity [s]
        The slower of compute and synchronisation.
    latency_compute : Quantity [s]
        ``6 N / (accelerators · peak · efficiency)``.
    latency_memory : Quantity [s]
        The gradient's ring all-reduce (the book's name for the network term).
    latency_overhead : Quantity [s]
        None is modelled: 0.
    throughput : float
        Tokens per second, ``1 / latency``.
    bottleneck : str
        ``"Network"`` or ``"Compute"``.
    arithmetic_intensity : float
        Communication intensity: training FLOPs of one token over the bytes each rank
        sends, in FLOP per byte.
    network_ridge : float
        One accelerator's peak over its share of the fabric, in FLOP per byte.
    memory_footprint : Quantity [B]
        The gradient synchronised, ``N ×`` bytes per element.
    peak_flops_actual : Quantity [FLOP/s]
        The fleet's peak times the efficiency.
    peak_bw_actual : Quantity [B/s]
        Each rank's share of the fabric (link bandwidth over oversubscription).
    mfu, hfu : float
        Model FLOPs per second achieved over the fleet's peak; without recomputation the
        hardware FLOPs are the model's (Chowdhery et al. 2022, App. B).
    feasible : bool
        Always True (the model states no memory bound).
    """

    _title: ClassVar[str] = "Network roofline"
    _units: ClassVar[dict[str, str | None]] = {
        "latency": "s",
        "latency_compute": "s",
        "latency_memory": "s",
        "latency_overhead": "s",
        "throughput": None,
        "bottleneck": None,
        "arithmetic_intensity": None,
        "network_ridge": None,
        "memory_footprint": "B",
        "peak_flops_actual": "FLOP/s",
        "peak_bw_actual": "B/s",
        "mfu": None,
        "hfu": None,
        "feasible": None,
    }


class NetworkRooflineModel:
    """The book's NetworkRooflineModel: one training token's work against its gradient sync."""

    def solve(
        self, model: Any, fleet: Any, precision: str = "fp16", efficiency: float = 0.5
    ) -> NetworkRooflineResult:
        """Compute and synchronisation time of a data-parallel training token, and which binds.

        Parameters
        ----------
        model : BookModel or Workload
            The model (a view of the book's registries is accepted).
        fleet : Fleet or a book cluster view
            The data-parallel fleet and its scale-out fabric.
        precision : str
            Precision of the compute peak and of the gradient.
        efficiency : float
            Fraction of peak reached, in (0, 1] (the book's default 0.5).

        Returns
        -------
        NetworkRooflineResult

        Raises
        ------
        ParameterError
            For an efficiency outside (0, 1], a fleet of one accelerator, or an unknown
            precision.
        """
        from mlsys.core.precision import bytes_per_element

        eta = fraction(efficiency, "efficiency")
        if isinstance(efficiency, bool) or not 0.0 < eta <= 1.0:
            raise ParameterError("efficiency", efficiency, "a fraction in (0, 1]")
        workload, cluster = as_catalog(model), as_catalog(fleet)
        ranks = int(cluster.total_accelerators)
        if ranks < 2:
            raise ParameterError("fleet", fleet, "a fleet of at least two accelerators")
        params = workload.parameters.m_as("count")
        peak = cluster.accelerator.peak_flops_at(precision).m_as("FLOP/s")
        fabric = cluster.fabric
        link_bps = float(effective_bandwidth(fabric.bandwidth_Bps, fabric.oversubscription))
        grad_b = params * bytes_per_element(precision)
        flops = float(training_flops(params, 1))
        compute_s = flops / (ranks * peak * eta)
        network_s = float(ring_allreduce_time(grad_b, ranks, link_bps, fabric.latency_s))
        step_s = max(compute_s, network_s)
        mfu = min(flops / step_s / (ranks * peak), 1.0)
        return NetworkRooflineResult(
            latency=step_s,
            latency_compute=compute_s,
            latency_memory=network_s,
            latency_overhead=0.0,
            throughput=1.0 / step_s,
            bottleneck="Network" if network_s > compute_s else "Compute",
            arithmetic_intensity=flops / float(ring_allreduce_bytes_per_rank(grad_b, ranks)),
            network_ridge=peak / link_bps,
            memory_footprint=grad_b,
            peak_flops_actual=ranks * peak * eta,
            peak_bw_actual=link_bps,
            mfu=mfu,
            hfu=mfu,
            feasible=True,
        )


class TopologyResult(Result):
    """What the book's ``TopologyModel().solve`` returns.

    Attributes
    ----------
    effective_bw : Quantity [B/s]
        A node's share of the bisection: link bandwidth × β / oversubscription.
    bisection_bw : Quantity [B/s]
        ``link × β × N/2 / oversubscription``.
    bisection_bw_fraction : float
        β, the bisection links over a full bisection's ``N/2``.
    hops_avg : float
        Mean links crossed under uniform traffic.
    topology : str
        As given.
    num_nodes : int
        As given.
    """

    _title: ClassVar[str] = "Topology"
    _units: ClassVar[dict[str, str | None]] = {
        "effective_bw": "B/s",
        "bisection_bw": "B/s",
        "bisection_bw_fraction": None,
        "hops_avg": None,
        "topology": None,
        "num_nodes": None,
    }


class TopologyModel:
    """The book's TopologyModel: bisection bandwidth and distance of a network's shape."""

    def solve(self, fabric: Any, topology: str = "fat_tree", num_nodes: int = 64) -> TopologyResult:
        """Bisection bandwidth a topology leaves of a fabric's links, and its mean distance.

        ``β`` and the mean hop count are mlsys's
        :func:`~mlsys.core.formulas.topology.bisection_fraction` and
        :func:`~mlsys.core.formulas.topology.mean_hops` (Dally & Towles 2004). mlsys counts
        a bidirectional ring's two cut links against the ``N/2`` of a full bisection
        (``β = 4/N``, a torus ``4 N^(-1/3)``), twice the book's ``2/N`` and
        ``2 N^(-1/3)``; the book's ``dragonfly`` (an assumed 0.85) is not served.

        Parameters
        ----------
        fabric : Fabric or a book fabric view
            The links (``Systems.Fabrics.InfiniBand_NDR``).
        topology : str
            ``"fat_tree"``, ``"ring"`` or ``"torus_3d"``.
        num_nodes : int
            Nodes in the network.

        Returns
        -------
        TopologyResult

        Raises
        ------
        ParameterError
            For another topology or a node count that is not a whole number of at
            least 2.

        Examples
        --------
        64 nodes on a 4×4×4 torus of 50 GB/s NDR links: a full bisection, 1.6 TB/s.

        >>> from mlsys import Systems
        >>> res = TopologyModel().solve(Systems.Fabrics.InfiniBand_NDR, "torus_3d", 64)
        >>> res.bisection_bw_fraction, round(res.si("bisection_bw") / 1e12, 1)
        (1.0, 1.6)
        """
        from mlsys.core.checks import positive_int
        from mlsys.core.formulas.topology import bisection_fraction, mean_hops

        nodes = positive_int("num_nodes", num_nodes)
        if nodes < 2:
            raise ParameterError("num_nodes", num_nodes, "at least 2 nodes")
        links = as_catalog(fabric)
        beta = float(bisection_fraction(topology, nodes))
        per_node = float(effective_bandwidth(links.bandwidth_Bps, links.oversubscription)) * beta
        return TopologyResult(
            effective_bw=per_node,
            bisection_bw=per_node * nodes / 2.0,
            bisection_bw_fraction=beta,
            hops_avg=float(mean_hops(topology, nodes)),
            topology=topology,
            num_nodes=nodes,
        )
