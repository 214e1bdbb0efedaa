"""A job on part of each node: ``Fleet(accelerators_per_node=...)``.

A GB200 NVL72 rack is one 72-GPU NVLink domain; Megatron-Bridge's GB200 runs use 8 of its
GPUs, or 64 in each of several racks. The same physics must price such a job as it prices
a whole node of that many GPUs on the same scale-up fabric: the two spellings below are the
same machine, so every number they give must agree.
"""

from __future__ import annotations

import pytest

from mlsys import DistributedModel, Fabrics, Fleet, Models, Nodes, ParallelismSearch
from mlsys.core.errors import MlsysError
from mlsys.core.types import Node

RACK = Nodes.GB200_NVL72


def _whole_node(gpus: int) -> Node:
    """A node of ``gpus`` GB200s on the rack's own NVLink fabric."""
    return Node(name=f"{gpus}-GPU GB200 domain", accelerator=RACK.accelerator,
                accelerators_per_node=gpus, intra_fabric=RACK.intra_fabric)  # fmt: skip


def test_default_is_every_accelerator_of_the_node():
    fleet = Fleet(node=Nodes.DGX_H100, count=4, fabric=Fabrics.IB_NDR)
    assert fleet.accelerators_per_node == 8
    assert fleet.total_accelerators == 32


def test_total_counts_only_the_accelerators_in_use():
    fleet = Fleet(node=RACK, count=4, fabric=Fabrics.IB_NDR, accelerators_per_node=64)
    assert fleet.total_accelerators == 4 * 64


def test_more_than_the_node_has_is_refused_naming_both():
    with pytest.raises(MlsysError, match=r"accelerators_per_node=80.*has 72"):
        Fleet(node=RACK, count=1, accelerators_per_node=80)
    with pytest.raises(MlsysError):
        Fleet(node=RACK, count=1, accelerators_per_node=0)


@pytest.mark.parametrize(
    ("model", "count", "per_node", "layout"),
    [
        # two trays of one rack, data parallel: all traffic on NVLink
        ("Llama3_8B", 1, 8, dict(batch_size=64, microbatch_count=8)),
        # Megatron-Bridge's 405B layout on 4 racks of 64: TP 4, PP 16, VP 4, DP 4
        ("Llama3_405B", 4, 64, dict(batch_size=256, microbatch_count=64, tp_size=4,
                                    pp_size=16, v_stages=4)),
    ],
)  # fmt: skip
def test_part_of_a_rack_prices_as_a_node_of_that_many(model, count, per_node, layout):
    fabric = Fabrics.IB_NDR if count > 1 else None
    partial = Fleet(node=RACK, count=count, fabric=fabric, accelerators_per_node=per_node)
    whole = Fleet(node=_whole_node(per_node), count=count, fabric=fabric)
    kw = dict(seq_len=8192, precision="fp8", **layout)
    a = DistributedModel().solve(Models[model], partial, **kw)
    b = DistributedModel().solve(Models[model], whole, **kw)
    tp, pp = layout.get("tp_size", 1), layout.get("pp_size", 1)
    assert a.layout.dp == b.layout.dp == per_node * count // (tp * pp)
    for field in ("step_time", "tp_communication_time", "dp_communication_time",
                  "pp_communication_time", "tokens_per_second"):  # fmt: skip
        assert a.si(field) == pytest.approx(b.si(field), rel=1e-12), field


def test_search_on_part_of_a_rack_fills_only_the_gpus_in_use():
    fleet = Fleet(node=RACK, count=1, accelerators_per_node=8)
    res = ParallelismSearch().solve(Models.Llama3_8B, fleet, batch_size=128, seq_len=8192)
    best = res.best.layout
    assert best.tp * best.pp * best.dp * best.cp == 8
