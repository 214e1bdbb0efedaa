"""Parallelism accounting: ZeRO communication volume, pipeline bubbles, collective traffic
and optimum checkpoint intervals, each against its paper's definition."""

from __future__ import annotations

import math

from mlsys.core.catalog import Fabrics, Models, Nodes
from mlsys.core.formulas import (
    bus_bandwidth_factor,
    interleaved_bubble_ratio,
    one_f_one_b_bubble_ratio,
    ring_allreduce_bytes_per_rank,
    zero_communication_elements,
)
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.solvers.reliability import ReliabilityModel
from mlsys.core.types import Fleet
from mlsys.validation._case import Case, load_data, records

__all__ = ["parallelism_cases"]

_GROUP = "Parallelism and checkpoint accounting"


def _case(name: str, quantity: str, unit: str, published: float, predicted: float,
          section: dict, **kw) -> Case:  # fmt: skip
    return Case(
        group=_GROUP, name=name, quantity=quantity, unit=unit, published=float(published),
        predicted=float(predicted), tolerance=section["tolerance"], basis="prediction",
        method="accounting", citation=section["citation"], url=section["url"], **kw,
    )  # fmt: skip


def parallelism_cases() -> list[Case]:
    """ZeRO volumes, GPipe/1F1B/interleaved bubbles, ring and bus-bandwidth factors,
    Young and Daly intervals."""
    data = load_data("parallelism")
    out = []

    z = data["zero_communication"]
    for row in records("parallelism", "zero_communication"):
        stage = row["stage"]
        got = zero_communication_elements(z["psi"], stage) / z["psi"]
        out.append(
            _case(f"ZeRO stage {stage}", "communication per step", "Ψ", row["volume_over_psi"],
                  got, z)
        )  # fmt: skip

    p = data["pipeline"]
    pp, m, v = p["pp"], p["microbatches"], p["v_stages"]
    res = DistributedModel().solve(
        Models.GPT3_175B, Fleet(node=Nodes.DGX_A100, count=1, fabric=Fabrics.IB_HDR),
        batch_size=m, pp_size=pp, microbatch_count=m, recompute="full",
    )  # fmt: skip
    out += [
        _case(f"GPT-3 on 8 A100, p={pp}, m={m} (DistributedModel)", "bubble share of step",
              "fraction", (pp - 1) / (m + pp - 1), res.bubble_fraction, p),
        _case(f"1F1B p={pp}, m={m}", "bubble over ideal time", "fraction", (pp - 1) / m,
              one_f_one_b_bubble_ratio(pp, m), p),
        _case(f"interleaved p={pp}, m={m}, v={v}", "bubble over ideal time", "fraction",
              (pp - 1) / (v * m), interleaved_bubble_ratio(pp, m, v), p),
    ]  # fmt: skip

    c = data["collectives"]
    n = c["ranks"]
    out.append(
        _case(f"ring all-reduce of 1 GB, N={n}", "bytes sent per rank", "GB",
              2 * (n - 1) / n, ring_allreduce_bytes_per_rank(1e9, n) / 1e9, c)
    )  # fmt: skip
    for kind, factor in c["bus_factors"]:
        out.append(
            _case(f"nccl-tests {kind}, n={n}", "bus-bandwidth factor", "×", factor,
                  bus_bandwidth_factor(kind, n), c)
        )  # fmt: skip

    k = data["checkpoint"]
    delta, mtbf = k["checkpoint_s"], k["mtbf_s"]
    young = math.sqrt(2 * delta * mtbf)
    x = delta / (2 * mtbf)
    daly = young * (1 + math.sqrt(x) / 3 + x / 9) - delta
    res = ReliabilityModel().solve(16384, 86400.0, checkpoint_time=delta, fleet_mtbf=mtbf)
    out += [
        _case(f"δ = {delta:g} s, M = {mtbf / 3600:g} h", "Young interval", "s", young,
              res.si("young_interval"), k),
        _case(f"δ = {delta:g} s, M = {mtbf / 3600:g} h", "Daly interval", "s", daly,
              res.si("daly_interval"), k),
    ]  # fmt: skip
    return out
