"""The lab's numbers name their origin on hover.

The lab's constants carry a citation or say what the lab's choice stands for; the numbers
derived from solver results name the arithmetic and the solver; the lab's own models and
SoC cite their sources like catalog entries.
"""

from __future__ import annotations

import json

import pytest

from mlsys.book import lab
from mlsys.core.fmt import count, fmt, money, pct, times
from mlsys.core.provenance import MAX_TITLE_CHARS, TextOrigin


@pytest.mark.parametrize(
    ("name", "cited"),
    [
        ("WALL_THRESHOLD", "one half"),
        ("BUBBLE_TARGET", "10%"),
        ("NODES_PER_RACK", "DGX SuperPOD reference architecture"),
        ("NODES_PER_POD", "32 DGX H100 nodes (256 GPUs)"),
        ("STRAGGLER_SLOWDOWN", "Dean & Barroso (2013)"),
        ("STRAGGLER_FRACTIONS", "0 to 10%"),
    ],
)
def test_every_lab_constant_says_where_it_comes_from(name, cited):
    assert hasattr(lab, name)
    assert cited in lab.SOURCES[name]


def test_the_texts_match_the_constants_they_describe():
    # 0.5 is "one half", 0.10 is "10%", 4 nodes a rack, 32 a pod, a 2x straggler, 0-10 %
    assert lab.WALL_THRESHOLD == 0.5 and lab.BUBBLE_TARGET == 0.10
    assert lab.NODES_PER_RACK == 4 and "Four" in lab.SOURCES["NODES_PER_RACK"]
    assert lab.NODES_PER_POD == 32 and lab.STRAGGLER_SLOWDOWN == 2.0
    assert "twice" in lab.SOURCES["STRAGGLER_SLOWDOWN"]
    assert (min(lab.STRAGGLER_FRACTIONS), max(lab.STRAGGLER_FRACTIONS)) == (0.0, 0.1)


def test_a_track_is_its_own_source():
    # the cloud track: 4 to 512 DGX H100 nodes of 8 GPUs = 32 to 4,096 GPUs
    cloud = lab.TRACKS["cloud"]
    shown = count(cloud.devices, source=cloud)
    assert shown == "4,096"
    title = shown.origin.describe()
    assert "32 to 4,096" in title and "InfiniBand NDR" in title and "Dubey et al. 2024" in title


# ViT-S: 12 x (4 x 384² + 2 x 384 x 1536) = 21.2M in the layers, + (768 + 197) x 384 = 0.37M
# of embeddings: 21.6M, "22M". Glasses: 6 x (4 x 256² + 2 x 256 x 1024) = 4.72M, + (192 + 64)
# x 256 = 0.07M: 4.78M, "4.8M" (norms and biases add under 0.1%).
@pytest.mark.parametrize(("key", "params"), [("fleet", "22M"), ("glasses", "4.8M")])
def test_the_labs_own_models_cite_their_shape(key, params):
    model = lab.TRACKS[key].model
    shown = count(model.total_params, digits=2)
    assert shown == params
    assert "counted from the lab's shape" in shown.origin.describe()


def test_glasses_memory_names_its_own_source_not_the_scaled_peaks():
    title = fmt(lab.GLASSES_SOC.memory_bandwidth).origin.describe()
    # 8 bytes x 6.4 GT/s = 51.2 GB/s
    assert "LPDDR5" in title and "51.2 GB/s" in title and "scaled" not in title


def test_checkpoint_numbers_name_reliability_model():
    ckpt = lab.checkpoint_cost()
    for key in ("mtbf_h", "checkpoint_gb", "checkpoint_s", "interval_min", "lost_fraction"):
        assert "ReliabilityModel" in ckpt["sources"][key].describe(), key
    assert "1 − goodput" in ckpt["sources"]["lost_fraction"].describe()
    shown = pct(ckpt["lost_fraction"], digits=2, source=ckpt["sources"]["lost_fraction"])
    assert shown.origin is ckpt["sources"]["lost_fraction"]


def test_stakeholder_numbers_name_the_arithmetic_and_the_solvers():
    deal = lab.stakeholder_comparison()
    src = deal["sources"]
    assert set(src) >= {"monthly_cost", "waste", "zero_gain", "async_gain", "claim", "gpus"}
    month = src["monthly_cost"].describe()
    assert month.startswith("The fleet's annual TCO ÷ 12, from EconomicsModel")
    assert "made up for the exercise" in src["claim"].describe()
    assert "4,096 GPUs" in src["gpus"].describe()
    assert "SynchronizationModel" in src["async_gain"].describe()
    assert money(deal["waste"], digits=3, source=src["waste"]).origin is src["waste"]


def test_puzzle_and_scaling_name_their_solvers():
    ch = lab.puzzle_challenge()
    assert "ParallelismSearch" in ch["sources"]["candidates"].describe()
    assert "10%" in ch["sources"]["solutions"].describe()
    ib = lab.scaling_data("cloud")["fabrics"]["IB_NDR"]
    assert ib["origin"].solver == "scaling_curve"
    shown = times(2.0, source=lab.derived("a ratio", ib["origin"]))
    assert "scaling_curve" in shown.origin.describe()


def test_payload_carries_no_origin_objects():
    # the OJS payload is JSON: the sources stay on the Python side
    text = json.dumps(lab.ojs_payload(), allow_nan=False)
    assert "sources" not in json.loads(text)["sync"]["cloud"]


def test_derived_keeps_whole_names_within_the_tooltip():
    long = "; ".join(f"InfiniBand source {i}" for i in range(80))
    got = lab.derived("A ratio", long).describe()
    assert len(got) <= MAX_TITLE_CHARS
    assert got.endswith(tuple(f"source {i}" for i in range(80)))
    assert isinstance(lab.derived("x"), TextOrigin) and lab.derived("x").describe() == "x"
