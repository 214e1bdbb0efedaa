"""Collective communication against published nccl-tests measurements: bus bandwidth of
all-reduce, all-gather and reduce-scatter on one NVLink node, small-message latency, and
the NIC bandwidth and all-reduce bus bandwidth across InfiniBand nodes."""

from __future__ import annotations

from typing import Any

from mlsys.core.catalog import Fabrics, Models, Nodes
from mlsys.core.formulas.collectives import (
    NCCL_NVLINK_LL_STEP_LATENCY_MEASURED_S,
    bus_bandwidth,
    nccl_allreduce_time,
    nccl_ring_time,
)
from mlsys.core.layout import Topology
from mlsys.core.solvers._layout import NETWORK_EFFICIENCY, _allreduce, build_problem
from mlsys.core.types import Fleet
from mlsys.validation._case import Case, assumptions_of, load_data, records

__all__ = ["nccl_tests_cases"]

_GROUP = "Collectives: nccl-tests bus bandwidth"


def _citation(row: dict[str, Any], quote: str | None = None) -> str:
    size = row.get("size_bytes")
    where = f"{row['hardware']}; NCCL {row['nccl']}"
    if size:
        where += f"; {_size(size)} message"
    return f"{row['source']}: “{quote or row['quote']}” ({where})"


def _size(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} B"


def _case(row: dict[str, Any], name: str, quantity: str, unit: str, published: float,
          predicted: float, citation: str, assumptions: str) -> Case:  # fmt: skip
    return Case(
        group=_GROUP, name=name, quantity=quantity, unit=unit, published=float(published),
        predicted=float(predicted), tolerance=row["tolerance"], basis=row["basis"],
        method="performance model", citation=citation, url=row["url"],
        note=row.get("note", ""), assumptions=assumptions,
    )  # fmt: skip


def single_node_busbw(row: dict[str, Any]) -> float:
    """mlsys's nccl-tests bus bandwidth of one single-node row, in GB/s.

    NCCL's choice (``algo = "auto"``: the fastest ring protocol, or NVLS where the catalog
    fabric reduces in the switch) or the ring alone, on the node's per-direction NVLink
    bandwidth (``bandwidth_GBps`` overrides it for hardware the catalog lacks)."""
    fabric = getattr(Nodes, row["node"]).intra_fabric
    bw = row["bandwidth_GBps"] * 1e9 if "bandwidth_GBps" in row else fabric.effective_bandwidth_Bps
    kind, n, m = row["collective"], row["ranks"], float(row["size_bytes"])
    if kind == "all_reduce" and row["algo"] == "auto":
        t = nccl_allreduce_time(m, n, bw, in_network_reduction=bool(fabric.in_network_reduction))
    else:
        t = nccl_ring_time(kind, m, n, bw)
    return bus_bandwidth(m, t, kind, n) / 1e9


def latency_us(section: dict[str, Any], ranks: int) -> float:
    """mlsys's time of a tiny ring all-reduce on ``ranks`` GPUs of the section's node, in µs,
    with the fabric's measured LL step (as the solvers price a chosen LL ring)."""
    fabric = getattr(Nodes, section["node"]).intra_fabric
    step = NCCL_NVLINK_LL_STEP_LATENCY_MEASURED_S.get(fabric.link_generation)
    t = nccl_ring_time(
        "all_reduce", float(section["size_bytes"]), ranks, fabric.effective_bandwidth_Bps,
        ll_step_latency_s=step,
    )  # fmt: skip
    return t * 1e6


def nic_GBps(row: dict[str, Any]) -> float:
    """The inter-node bandwidth per GPU DistributedModel uses for a scale-out fabric, in GB/s:
    its per-direction rate times ``NETWORK_EFFICIENCY["scale-out"]``."""
    fabric = getattr(Fabrics, row["fabric"])
    return fabric.effective_bandwidth_Bps * NETWORK_EFFICIENCY[fabric.kind] / 1e9


def multi_node_busbw(row: dict[str, Any]) -> float:
    """mlsys's bus bandwidth of an all-reduce over every GPU of ``nodes`` nodes, in GB/s,
    priced as DistributedModel prices a data-parallel all-reduce across nodes (topology
    auto: NCCL's rings, one per NIC, or the two-level all-reduce, whichever is faster, on
    the network terms of its own problem)."""
    node, k = getattr(Nodes, row["node"]), row["nodes"]
    fleet = Fleet(node=node, count=k, fabric=getattr(Fabrics, row["fabric"]))
    # the model only shapes the compute terms; the network terms are the fleet's
    p = build_problem(Models.GPT3_175B, fleet, batch_size=k)
    g, m = node.accelerators_per_node, float(row["size_bytes"])
    t = _allreduce(m, float(g), float(k), Topology.AUTO, p)
    return bus_bandwidth(m, t, "all_reduce", g * k) / 1e9


def nccl_tests_cases() -> list[Case]:
    """Published nccl-tests figures against mlsys's collective-time formulas (library
    defaults): single-node busbw on A100, A800, H100 and H200; DGX A100 small-message
    latencies; InfiniBand NIC bandwidth and a two-node DGX A100 all-reduce."""
    data = load_data("collectives")
    out = []
    for row in data["single_node"]:
        size = _size(row["size_bytes"])
        quantity = f"{row['collective'].replace('_', '-')} busbw, {size}"
        out.append(
            _case(row, row["name"], quantity, "GB/s", row["published"], single_node_busbw(row),
                  _citation(row), assumptions_of(row))
        )  # fmt: skip

    lat = data["latency"]
    for r in records("collectives", "latency"):
        n = r["ranks"]
        sec = {**lat, "basis": "fit", "note": _LATENCY_NOTE}
        out.append(
            _case(sec, f"DGX A100, {n} GPUs, {lat['size_bytes']} B all-reduce (1 channel)",
                  "all-reduce time", "µs", r["published_us"], latency_us(lat, n),
                  _citation(lat, r["quote"]) + f" [{lat['command']}]", assumptions_of(lat))
        )  # fmt: skip

    for row in data["nic"]:
        out.append(
            _case(row, row["name"], "ring busbw per NIC across nodes", "GB/s",
                  row["published"], nic_GBps(row), _citation(row), assumptions_of(row))
        )  # fmt: skip
    for row in data["multi_node"]:
        quantity = f"all-reduce busbw, {row['nodes']} nodes, {_size(row['size_bytes'])}"
        out.append(
            _case(row, row["name"], quantity, "GB/s", row["published"], multi_node_busbw(row),
                  _citation(row), assumptions_of(row))
        )  # fmt: skip
    return out


_LATENCY_NOTE = (
    "Fit: NCCL_NVLINK_LL_STEP_LATENCY_MEASURED_S['NVLINK3'] = 1.98 µs is the least-squares "
    "slope of this table (2-8 GPUs); NCCL's own model (0.6 µs a step) gives 7.8-15.0 µs."
)
