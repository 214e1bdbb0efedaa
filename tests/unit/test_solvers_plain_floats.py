"""Solvers compute on plain floats: no stored result value carries a traced origin.

Catalog Quantities and the fields read from a recorded result are traced numbers
(:mod:`mlsys.core.traced`), which keep their origins through arithmetic at about ten times
the cost of a float operation. A solver that reads another solver's result by attribute
(``year.pue``) instead of through :meth:`~mlsys.core.results.Result.si` would do its
arithmetic on traced numbers: slower (EconomicsModel went from 25 to 73 µs that way), and
its stored values would carry the inner result's origin instead of the solver's own.
"""

from __future__ import annotations

import pytest

from mlsys import (
    DistributedModel,
    EconomicsModel,
    Fabrics,
    Fleet,
    Hardware,
    MemoryModel,
    Models,
    Nodes,
    ReliabilityModel,
    ServingModel,
    SingleNodeModel,
    SustainabilityModel,
)
from mlsys.core.catalog import Datacenters
from mlsys.core.traced import origins

_FLEET = Fleet(node=Nodes.DGX_H100, count=16, fabric=Fabrics.IB_NDR)

_SOLVES = {
    "economics": lambda: EconomicsModel().solve(
        _FLEET, utilization=0.7, training_duration=86400.0 * 30, tokens_per_second=1e6
    ),
    "sustainability": lambda: SustainabilityModel().solve(
        _FLEET, 86400.0, utilization=0.7, datacenter=Datacenters.HYPERSCALE_AVG
    ),
    "reliability": lambda: ReliabilityModel().solve(_FLEET, 86400.0),
    "memory": lambda: MemoryModel().solve(Models.Llama2_70B, Hardware.H100, tp_size=8),
    "serving": lambda: ServingModel().solve(Models.Llama2_7B, Hardware.H100, batch_size=1),
    "single_node": lambda: SingleNodeModel().solve(Models.Llama2_7B, Hardware.H100),
    "distributed": lambda: DistributedModel().solve(
        Models.GPT3_175B,
        Fleet(node=Nodes.DGX_A100, count=8, fabric=Fabrics.IB_HDR),
        batch_size=64,
        tp_size=8,
        pp_size=8,
        microbatch_count=64,
    ),
}


@pytest.mark.parametrize("solver", sorted(_SOLVES))
def test_stored_values_are_plain(solver):
    result = _SOLVES[solver]()
    traced = {name: value for name, value in result._values.items() if origins(value)}
    assert not traced, f"{solver} stored traced values: {sorted(traced)}"


def test_reading_a_field_still_carries_the_solver():
    # the other side of the rule: a reader gets the origin on attribute access
    result = _SOLVES["economics"]()
    assert [o.describe().split(" → ")[0] for o in origins(result.annual_tco)] == ["EconomicsModel"]
