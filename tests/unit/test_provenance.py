"""Provenance: catalog values and solver results say where they come from, through fmt.

Facts checked against the catalog's own sources: the H100's memory bandwidth (3.35 TB/s)
and its scale-up bandwidth (900 GB/s both ways, halved) come from the NVIDIA H100
datasheet; Llama 2 13B's shape from Touvron et al. (2023).
"""

from __future__ import annotations

import pytest

from mlsys import Q_, Fabrics, Fleet, Hardware, Models, Nodes
from mlsys.core.fmt import FormatError, Formatted
from mlsys.core.provenance import (
    CatalogOrigin,
    ResultOrigin,
    TextOrigin,
    entries_used,
    origin_of,
    record,
    span,
    split_span,
)
from mlsys.core.solvers.economics import EconomicsModel
from mlsys.core.solvers.reliability import ReliabilityModel
from mlsys.core.solvers.sustainability import SustainabilityModel
from mlsys.core.solvers.synchronization import SynchronizationModel
from mlsys.formatting import fmt, money, pct, rng

H100 = Hardware.H100
FLEET = Fleet(node=Nodes.DGX_H100, count=16, fabric=Fabrics.IB_NDR)


def test_a_catalog_value_names_its_entry_field_and_datasheet():
    out = fmt(H100.memory_bandwidth)
    assert out == "3.35 TB/s" and str(out) == "3.35 TB/s"  # plain text for f-strings
    assert isinstance(out.origin, CatalogOrigin)
    text, title = split_span(out._repr_markdown_())
    assert text == "3.35 TB/s"
    assert "H100" in title and "memory bandwidth" in title and "datasheet" in title


def test_a_field_with_its_own_source_brings_its_note():
    title = fmt(H100.scaleup_bandwidth).origin.describe()
    assert "NVLink 900 GB/s" in title and "halved" in title


def test_mapping_fields_and_quantity_accessors_carry_their_key():
    assert H100.peak_flops_at("bf16") is H100.peak_flops["bf16"]  # the catalog's own object
    assert "peak flops (bf16)" in fmt(H100.peak_flops_at("bf16")).origin.describe()
    sparse = H100.peak_flops_at("bf16", sparse=True)
    # 2:4 sparsity doubles the dense 989.4 TFLOP/s (datasheet's "with sparsity" column).
    assert sparse.m_as("TFLOP/s") == pytest.approx(2 * 989.4)
    assert "2:4 sparse" in fmt(sparse).origin.describe()


def test_model_parameter_counts_name_the_paper():
    origin = fmt(Models.Llama2_13B.total_params).origin
    assert isinstance(origin, CatalogOrigin) and "Touvron" in origin.describe()


def test_arithmetic_keeps_the_origin_and_source_overrides_it():
    doubled = H100.memory_bandwidth * 2  # 2 × 3.35 TB/s (datasheet)
    assert fmt(doubled).origin == CatalogOrigin(H100, "memory_bandwidth")
    text, title = split_span(fmt(doubled)._repr_markdown_())
    assert text == "6.7 TB/s" and "H100 SXM5 80GB, memory bandwidth: datasheet" in title
    # A value built from plain numbers has no origin and is marked without a title.
    assert fmt(Q_(6.7, "TB/s"))._repr_markdown_() == "[6.7\u00a0TB/s]{.mlsys-num}"
    stated = fmt(doubled, source="two H100s")
    assert isinstance(stated.origin, TextOrigin) and split_span(stated._repr_markdown_()) == (
        "6.7 TB/s",
        "two H100s",
    )
    assert fmt(doubled, source=H100).origin.entry is H100
    with pytest.raises(FormatError, match="source"):
        fmt(doubled, source=42)


def test_a_solver_result_names_solver_inputs_and_sources():
    res = EconomicsModel().solve(FLEET)
    assert isinstance(res.origin, ResultOrigin) and res.origin.solver == "EconomicsModel"
    labels = {e.name for e in res.sources()}
    assert {"DGX_H100", "H100", "NVLINK4", "IB_NDR"} <= labels
    title = fmt(res.annual_tco).origin.describe()
    assert title.startswith("EconomicsModel → annual_tco(fleet=16 × ")
    assert "datasheet" in title
    # Its Markdown table (a notebook, a Quarto cell) carries the same hover per cell.
    assert 'data-detail="EconomicsModel → annual_tco(fleet=16' in res._repr_markdown_()
    # A plain field (a fraction) read from the result carries the origin to pct too.
    assert pct(res.breakeven_utilization).origin.field == "breakeven_utilization"


def test_every_solver_of_this_issue_records_its_inputs():
    results = [
        EconomicsModel().solve(FLEET),
        SustainabilityModel().solve(FLEET, Q_(30, "day")),
        ReliabilityModel().solve(FLEET, Q_(30, "day")),
        SynchronizationModel().solve(64, 1.0),
    ]
    for res in results:
        assert res.origin is not None and res.origin.solver == type(res).__name__.replace(
            "Result", "Model"
        )


def test_mapping_result_fields_carry_their_key():
    res = ReliabilityModel().solve(FLEET, Q_(30, "day"))
    gpu = res.component_failure_rates["gpu"]
    assert fmt(gpu).origin.field == "component_failure_rates[gpu]"


def test_record_and_entries_used():
    from mlsys.core.results import Result

    res = record(Result(x=1.5), "MyModel", fleet=FLEET, batch_size=8)
    assert res.origin.solver == "MyModel"
    # The user-built fleet cites nothing; the catalog entries inside it do.
    names = [e.name for e in entries_used([FLEET, 8, "bf16"])]
    assert sorted(names) == ["DGX_H100", "H100", "IB_NDR", "NVLINK4"]


def test_span_escapes_quotes_and_backslashes_and_round_trips():
    origin = TextOrigin('a "quoted" \\ path')
    markdown = span("3 GB", origin)
    assert markdown == '[3 GB]{.mlsys-num title="a \\"quoted\\" \\\\ path"}'
    assert split_span(markdown) == ("3 GB", 'a "quoted" \\ path')


def test_long_titles_are_cut():
    markdown = span("1", TextOrigin("x" * 5000))
    from mlsys.core.provenance import MAX_TITLE_CHARS

    # the full text is cut at MAX_TITLE_CHARS; the hover box's first line is short
    assert len(split_span(markdown)[1]) == MAX_TITLE_CHARS and markdown.endswith('…"}')
    assert len(markdown.split('title="')[1].split('"')[0]) <= 110


def test_money_ranges_and_plain_strings():
    assert money(H100.unit_price).origin.field == "unit_price"
    assert "H100" in rng(H100.tdp * 0.5, H100.tdp).origin.describe()
    assert Formatted("x").origin is None and origin_of(3.0) is None


def _entry_names(result) -> set[str]:
    return {entry.name for entry in result.sources()}


def test_every_training_and_serving_solver_names_the_catalog_entries_it_used():
    # A Result knows which catalog entries it used (model, device, node, fabric).
    from mlsys import (
        ContinuousBatchingModel,
        DistributedModel,
        Fabrics,
        Fleet,
        Hardware,
        MemoryModel,
        Models,
        Nodes,
        ServingModel,
        SingleNodeModel,
        scaling_curve,
    )

    fleet = Fleet(node=Nodes.DGX_A100, count=2, fabric=Fabrics.IB_HDR)
    dist = DistributedModel().solve(Models.Llama2_7B, fleet, batch_size=16, tp_size=8)
    assert {"Llama2_7B", "DGX_A100", "IB_HDR"} <= _entry_names(dist)
    curve = scaling_curve(Models.Llama2_7B, Nodes.DGX_A100, Fabrics.IB_HDR, [1, 2], 16)
    assert {"Llama2_7B", "DGX_A100", "IB_HDR"} <= _entry_names(curve)
    for result in (
        ServingModel().solve(Models.Llama2_7B, Hardware.H100, batch_size=4),
        ContinuousBatchingModel().solve(Models.Llama2_7B, Hardware.H100, arrival_rate=2.0),
        SingleNodeModel().solve(Models.Llama2_7B, Hardware.H100),
        MemoryModel().solve(Models.Llama2_7B, Hardware.H100, batch_size=8, dp_size=8),
    ):
        assert {"Llama2_7B", "H100"} <= _entry_names(result), type(result).__name__
