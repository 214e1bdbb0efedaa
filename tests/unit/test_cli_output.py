"""``mlsys solve`` prints a result the way the book prints numbers.

Every value goes through the display policy (``mlsys.core.fmt``): quantities with three
significant digits and a prefixed unit, fractions as percents, counts with all their
digits, no row for a field the solve did not compute, and per-operator tables whose cells
carry their column's unit. The expected texts are computed here from the solver's own
result with ``fmt``/``pct``, so the test pins the policy, not a copy of its output.
"""

from __future__ import annotations

import re

import pytest

from mlsys import Hardware, MemoryModel, Models, Nodes, ServingModel, SingleNodeModel
from mlsys.cli import main
from mlsys.core.fmt import fmt, pct
from mlsys.core.units import Q_

# What the book never prints: a raw float, an exponent, a Python None.
_RAW = re.compile(r"\d\.\d{5,}|\d{4,}\.\d|\de[+-]\d|\bNone\b")


def _solve(capsys, *argv: str) -> str:
    main(["solve", *argv])
    return capsys.readouterr().out


def _field(out: str, name: str) -> str:
    match = re.search(rf"^{re.escape(name)}\s+(.*)$", out, re.M)
    assert match, f"no {name} row in:\n{out}"
    return match.group(1)


def test_roofline_decode_reads_like_the_book(capsys):
    out = _solve(capsys, "roofline", "--model", "Llama2_70B", "--hardware", "H100",
                 "--set", "phase=decode")  # fmt: skip
    res = SingleNodeModel().solve(Models.Llama2_70B, Hardware.H100, phase="decode")
    assert not _RAW.search(out), _RAW.search(out)
    assert _field(out, "mfu") == str(pct(res.si("mfu"), digits=3))  # "0.288%", not 0.002883
    assert _field(out, "latency") == str(fmt(res.latency, digits=3))
    assert _field(out, "seq_len") == "4,096"  # a count keeps every digit
    assert _field(out, "feasible") == "no"
    # the per-operator table: each cell in its column's unit, by the display policy
    ops = res.si("operators")
    row = re.search(r"^\s+qkv_proj\s+(.*)$", out, re.M).group(1).split("  ")
    cells = [c.strip() for c in row if c.strip()]
    assert cells[0] == str(fmt(Q_(ops["qkv_proj"]["flops"], "flop"), digits=3))
    assert cells[1] == str(fmt(Q_(ops["qkv_proj"]["bytes"], "byte"), digits=3))
    assert cells[2] == str(fmt(Q_(ops["qkv_proj"]["time"], "s"), digits=3))
    assert cells[-1] == "memory"


def test_memory_utilization_is_a_percent_and_sizes_have_prefixes(capsys):
    out = _solve(capsys, "memory", "--model", "Llama3_70B", "--hardware", "H100",
                 "--set", "batch_size=8")  # fmt: skip
    res = MemoryModel().solve(Models.Llama3_70B, Hardware.H100, batch_size=8)
    # utilization is total / capacity: a fraction, printed as the percent it is
    assert res.si("utilization") == pytest.approx(res.si("total") / res.si("capacity"))
    assert _field(out, "utilization") == str(pct(res.si("utilization"), digits=3))
    # needs more than 1,000 GB: the message says TB, never "2.83e+03 GB"
    assert res.si("total") > 1e12
    reason = _field(out, "infeasibility_reason")
    assert str(fmt(Q_(res.si("total"), "byte"), digits=3)) in reason and "TB" in reason
    assert not _RAW.search(out)


def test_serving_prints_no_row_for_fields_it_did_not_compute(capsys):
    out = _solve(capsys, "serving", "--model", "Llama3_70B", "--node", "DGX_H100")
    res = ServingModel().solve(Models.Llama3_70B, Nodes.DGX_H100)
    missing = [name for name in res if res.si(name) is None]
    assert missing, "this case leaves some fields uncomputed (the test needs one)"
    for name in missing:
        assert not re.search(rf"^{name}\s", out, re.M), name
    assert not _RAW.search(out)


def test_distributed_layout_lists_what_differs_from_the_defaults(capsys):
    out = _solve(capsys, "distributed", "--model", "GPT3_175B", "--node", "DGX_A100",
                 "--nodes", "8", "--fabric", "IB_HDR", "--set", "tp_size=8",
                 "--set", "pp_size=8", "--set", "batch_size=64")  # fmt: skip
    # 64 A100s as tp 8 x pp 8 leave one data-parallel replica
    assert _field(out, "layout") == "tp=8 pp=8 dp=1"
    assert _field(out, "parallelism") == "dp 1, tp 8, pp 8, ep 1"
    assert not _RAW.search(out)


def test_catalog_without_a_registry_lists_the_registries_with_their_sizes(capsys):
    from mlsys.commands.catalog import REGISTRIES
    from mlsys.core import catalog

    assert main(["catalog"]) == 0
    out = capsys.readouterr().out
    for name in REGISTRIES:
        registry = getattr(catalog, "Hardware" if name == "hardware" else name.capitalize())
        assert re.search(rf"^{name}\s+{len(registry.list())} entr", out, re.M), name


def test_search_table_writes_time_and_memory_with_units(capsys):
    from mlsys import Fabrics, Fleet, ParallelismSearch

    main(["search", "--model", "GPT3_175B", "--node", "DGX_A100", "--nodes", "1",
          "--batch-size", "1024", "--top", "1"])  # fmt: skip
    out = capsys.readouterr().out
    fleet = Fleet(node=Nodes.DGX_A100, count=1, fabric=Fabrics.IB_NDR)
    best = ParallelismSearch().solve(Models.GPT3_175B, fleet, batch_size=1024).top(1)[0]
    # a step of minutes and a footprint of terabytes: units, never "1.23e+03" seconds
    assert best["step_time"] > 60 and best["memory_per_accelerator"] > 1e12
    row = next(line for line in out.splitlines() if line.startswith("| 1 "))
    assert f"| {fmt(Q_(best['step_time'], 's'), digits=3)} " in row
    assert f"| {fmt(Q_(best['memory_per_accelerator'], 'byte'), digits=3)} " in row
    assert not _RAW.search(out)
