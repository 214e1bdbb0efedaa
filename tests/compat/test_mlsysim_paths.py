"""Every registry path the textbook's chapters walk, on mlsys.

The rows are the ``object_api`` paths of the newest era (``mlsysim``, 161 rows, with the
number of uses) and the attribute paths of the older era (42 rows), measured on the
chapters of *Machine Learning Systems* (harvard-edge/cs249r_book) and kept in
``tests/compat/data/``. Each row either resolves with the book's call shape, or is a
documented gap below (with the reason); values are checked against a datasheet, a paper
or a derivation written here, and where mlsys serves another value than the book's own
package printed, the difference must be listed by :func:`mlsys.book.migration.differences`
with its reason.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from mlsys.compat._data import book_table
from mlsys.core.errors import UnknownEntryError
from tests.compat._paths import resolve_path

DATA = Path(__file__).parent / "data"


def _rows(name: str) -> list[str]:
    with open(DATA / name, newline="", encoding="utf-8") as handle:
        return [row["path"] for row in csv.DictReader(handle)]


NEWEST = _rows("mlsysim_object_api_paths.csv")
OLDER = _rows("upstream_attribute_paths.csv")

GAPS: dict[str, str] = {
    "Models.Vision.YOLOv8_Nano.training_ops": (
        "the book's package filed Ultralytics' per-image inference FLOPs (8.7e9) under "
        "training_ops; mlsys serves them as inference_flops, which the chapter reads first "
        "(`model.inference_flops if model.inference_flops else model.training_ops`). "
        "Serving 8.7e9 as training compute would be wrong, and Ultralytics states no "
        "training FLOPs for a number to replace it with."
    ),
}


@pytest.mark.parametrize("path", NEWEST + OLDER)
def test_path_resolves_or_is_a_documented_gap(path: str) -> None:
    if path in GAPS:
        # a gap fails the way a misspelt name does: an AttributeError naming what exists
        with pytest.raises(AttributeError):
            resolve_path(path)
        return
    assert resolve_path(path) is not None


def test_counts() -> None:
    # the two measured tables, whole: 161 newest-era object_api rows, 42 older-era paths
    assert (len(NEWEST), len(OLDER)) == (161, 42)
    supported = [p for p in NEWEST if p not in GAPS]
    # not served: YOLOv8n training compute (the book's inference FLOPs under that name)
    assert len(supported) == 161 - 1


# value, unit, relative tolerance, where the number comes from
VALUES: list[tuple[str, float, str, str]] = [
    # NVIDIA H100 SXM datasheet: 1,979 TFLOP/s FP16 with sparsity -> 989.4 dense
    ("Hardware.Cloud.H100.compute.peak_flops", 989.4e12, "1/s", "H100 datasheet / 2"),
    ("Hardware.Cloud.H100.peak_flops", 989.4e12, "1/s", "older era's flat name"),
    # A100 SXM datasheet: 624 TFLOP/s sparse -> 312 dense; 2,039 GB/s HBM2e
    ("Hardware.Cloud.A100.compute.peak_flops", 312e12, "1/s", "A100 datasheet / 2"),
    ("Hardware.Cloud.A100.memory.bandwidth", 2039e9, "B/s", "A100 80GB SXM datasheet"),
    ("Hardware.Cloud.H100.memory.bandwidth", 3.35e12, "B/s", "H100 SXM datasheet"),
    # datasheet NVLink 900 GB/s = both directions of 18 links x 25 GB/s each way
    ("Hardware.Cloud.H100.nvlink.bandwidth", 900e9, "B/s", "18 x 2 x 25 GB/s"),
    ("Hardware.Cloud.H100.memory.l2_cache", 50e6, "B", "Hopper whitepaper: 50 MB L2"),
    # 400 Gb/s per port / 8 bits = 50 GB/s; NCCL's per-step network latency 5 us
    ("Systems.Fabrics.InfiniBand_NDR.bandwidth", 50e9, "B/s", "400 Gb/s / 8"),
    ("Systems.Fabrics.Ethernet_10G.bandwidth", 1.25e9, "B/s", "10 Gb/s / 8"),
    # Horowitz (2014): 640 pJ DRAM access, 1.1 pJ FP16 multiply-add (the book's figures)
    ("Hardware.Tech.Memory.HBM3.energy_per_access", 640e-12, "J", "Horowitz 2014"),
    ("Hardware.Tech.Op.FlopFp16.energy", 1.1e-12, "J", "Horowitz 2014"),
    ("Hardware.Tech.Memory.HBM3.latency", 300e-9, "s", "the book's latency hierarchy"),
    # He et al. (2016) / torchvision: 4.09 G multiply-adds; 2 FLOPs each
    ("Models.Vision.ResNet50.inference_flops", 2 * 4.09e9, "", "2 x 4.09e9 MACs"),
    ("Models.Vision.ResNet50.parameters", 25_557_032, "", "torchvision resnet50"),
    # ResNet-50 weights at the default 2 bytes (fp16)
    ("Models.Vision.ResNet50.size_in_bytes()", 2 * 25_557_032, "B", "params x 2 B"),
    # Brown et al. (2020) Table 2.1: GPT-3 175.0B parameters
    ("Models.Language.GPT3.parameters", 175e9, "", "GPT-3 paper, stated size"),
    # Sandler et al. (2018): 3.4M parameters (the book: 3.5M); Ultralytics: 3.2M
    ("Models.Vision.YOLOv8_Nano.inference_flops", 8.7e9, "", "Ultralytics: 8.7 GFLOPs"),
    # Hoffmann et al. (2022): ~20 tokens per parameter; Kaplan et al. (2020): C = 6ND
    ("Literature.Chinchilla.TokensPerParam", 20, "", "Chinchilla"),
    ("Literature.Chinchilla.ComputeConstant", 6, "", "Kaplan et al."),
    # the book's own device estimates (mlsysim hardware registry), cited as estimates
    ("Hardware.Mobile.iPhone15Pro.compute.peak_flops", 35e12, "1/s", "Apple: 35 TOPS"),
    ("Hardware.Mobile.iPhone15Pro.battery_capacity", 15, "W*hour", "book estimate"),
    ("Hardware.Edge.JetsonOrinNX.compute.peak_flops", 25e12, "1/s", "book FP16 figure"),
    ("Hardware.Workstation.DGX_Spark.memory.capacity", 128e9, "B", "128 GB unified"),
    ("Hardware.Tiny.ESP32_S3.memory.sram_capacity", 520 * 1024, "B", "520 KiB SRAM"),
    # the book's two phone batteries: 15 W·h pack, and 3,000 mAh x 3.7 V = 39,960 J
    ("Scenarios.PhoneBattery.EnergyWh", 15, "W*hour", "PHONE_BATTERY_WH"),
    ("Scenarios.PhoneBattery.EnergyJ", 3.0 * 3.7 * 3600, "J", "3 Ah x 3.7 V"),
    ("Scenarios.MobilePower.MobileNpuTypical", 3, "W", "book estimate"),
]


def _magnitude(value: object, unit: str) -> float:
    if hasattr(value, "m_as"):
        return float(value.m_as(unit))  # type: ignore[union-attr]
    assert unit == "", f"expected a Quantity in {unit}, got {value!r}"
    return float(value)  # type: ignore[arg-type]


@pytest.mark.parametrize(("path", "expected", "unit", "source"), VALUES)
def test_value(path: str, expected: float, unit: str, source: str) -> None:
    assert _magnitude(resolve_path(path), unit) == pytest.approx(expected, rel=1e-3), source


def test_every_device_and_scenario_figure_is_cited() -> None:
    from mlsys.compat.hardware import BookDevice
    from mlsys.compat.systems import Scenarios

    devices = book_table("book_hardware.toml")["devices"]
    for name in devices:
        device = BookDevice(name)
        for field, source in device.sources.items():
            assert source.get("reference") or source.get("ref"), (name, field)
    for group in ("PhoneBattery", "MobilePower"):
        for field, source in getattr(Scenarios, group).sources.items():
            assert source.get("reference") or source.get("ref") or source.get("formula"), field


def test_engine_solves_book_devices_and_book_only_models() -> None:
    from mlsys import Hardware, Models
    from mlsys.compat import Engine
    from mlsys.core.errors import ParameterError

    phone = Hardware.Mobile.iPhone15Pro
    result = Engine.solve(Models.Vision.MobileNetV2, phone, batch_size=1)
    accel = phone.as_accelerator()
    model = Models.Vision.MobileNetV2.as_workload()
    # the roofline of the book's figures: max(FLOPs / peak, weight bytes / bandwidth)
    flops = model.flops_per_sample / accel.peak_flops_s("fp16")
    weights = 2 * model.params / accel.memory_bandwidth.m_as("B/s")
    assert result.latency.m_as("s") >= max(flops, weights) * 0.999
    # energy is TDP x latency (5 W)
    assert result.energy.m_as("J") == pytest.approx(5 * result.latency.m_as("s"))
    # a book device without the figures a solve needs says which are missing
    with pytest.raises(ParameterError, match=r"tdp"):
        Engine.solve(Models.Vision.ResNet50, Hardware.Cloud.IntelSGX)  # the book gives no power


def test_gpt2_parameter_count_from_its_shape() -> None:
    # GPT-2 XL (Radford et al. 2019): 48 layers, d = 1600, vocabulary 50,257, context 1,024.
    # Per layer 12 d^2 (attention 4 d^2, MLP 8 d^2) + 13 d (biases and two layer norms);
    # token and position embeddings (V + ctx) d; final layer norm 2 d.
    layers, d, vocab, ctx = 48, 1600, 50_257, 1024
    derived = layers * (12 * d * d + 13 * d) + (vocab + ctx) * d + 2 * d
    assert derived == 1_557_611_200
    assert _magnitude(resolve_path("Models.Language.GPT2.parameters"), "") == derived
    assert resolve_path("Models.Language.GPT2.layers") == layers
    assert resolve_path("Models.Language.GPT2.hidden_dim") == d


def test_clusters_and_reliability() -> None:
    cluster = resolve_path("Systems.Clusters.Training_10K")
    # 10,000 GPUs in DGX H100 nodes of 8
    assert (cluster.total_accelerators, cluster.count) == (10_000, 1_250)
    # the book's chapter checks its failure cadence: 50,000 h GPU MTTF / 10,000 GPUs = 5 h
    gpu_mttf = resolve_path("Systems.Reliability.Gpu.mttf_hours")
    assert gpu_mttf / cluster.total_accelerators == pytest.approx(5.0)


def test_call_shapes() -> None:
    from mlsys import Q_, Hardware, Models
    from mlsys.compat import Engine
    from mlsys.constants import MB, byte, param

    # ridge_point() is a Quantity: peak / bandwidth = 312e12 / 2.039e12 = 153.0 FLOP/byte
    ridge = Hardware.Cloud.A100.ridge_point()
    assert ridge.m_as("flop/byte") == pytest.approx(312 / 2.039, rel=1e-4)
    # latency_us is a bare float; latency a time Quantity
    fabric = resolve_path("Systems.Fabrics.InfiniBand_NDR")
    assert isinstance(fabric.latency_us, float) and fabric.latency_us == pytest.approx(5.0)
    assert fabric.latency.m_as("ns") == pytest.approx(5000.0)
    # the book's count arithmetic: parameters x 4 bytes in MB
    gpt2 = Models.Language.GPT2.parameters.m_as(param)
    assert (gpt2 * 4 * byte).m_as(MB) == pytest.approx(1_557_611_200 * 4 / 1e6)
    # ... without weakening mlsys's own registry for new code
    with pytest.raises(Exception, match=r"[Cc]annot convert|dimension"):
        Q_(1, "flop") + Q_(1, "byte")
    # Engine.solve: the book's keywords; memory_footprint is the weights (book meaning)
    res = Engine.solve(
        Models.Vision.ResNet50, Hardware.Cloud.A100, batch_size=1, precision="fp16", efficiency=0.5
    )
    assert res.memory_footprint.m_as("B") == pytest.approx(2 * 25_557_032)
    assert res.bottleneck in {"Compute", "Memory"}
    # energy at TDP: 400 W x latency (A100 SXM TDP 400 W)
    assert res.energy.m_as("J") == pytest.approx(400 * res.latency.m_as("s"))
    # the book's engine (mlsysim engine/engine.py at e0fde03): efficiency scales compute
    # only, effective_flops = peak x efficiency = 312 TFLOP/s x 0.5 (A100 fp16 dense), and
    # effective_bw = the memory bandwidth, 2,039 GB/s (A100 SXM 80GB datasheet)
    assert res.peak_flops_actual.m_as("TFLOP/s") == pytest.approx(156.0)
    assert res.peak_bw_actual.m_as("GB/s") == pytest.approx(2039.0)
    # so the book's compute time, inference FLOPs over that ceiling, is the solve's
    compute_s = (Models.Vision.ResNet50.inference_flops / res.peak_flops_actual).m_as("s")
    assert compute_s == pytest.approx(res.latency_compute.m_as("s"), rel=1e-9)
    assert res.latency_compute.m_as("s") > 0


def test_nvlink_is_both_directions_of_the_catalog_figure() -> None:
    from mlsys import Hardware

    for name in ("H100", "A100", "V100", "B200"):
        view = getattr(Hardware.Cloud, name)
        assert view.nvlink.bandwidth == 2 * view.entry.scaleup_bandwidth


def test_views_are_the_catalog_values() -> None:
    from mlsys import Hardware, Models

    # one source: a view reads the catalog entry, not a copy
    assert Hardware.Cloud.H100.entry is Hardware.H100
    assert Hardware.Cloud.H100.memory.bandwidth == Hardware.H100.memory_bandwidth
    assert Models.Vision.ResNet50.entry is Models.ResNet50
    # the catalog's own entries keep mlsys's names and answer the book's read-only ones
    assert Models.ResNet50.params == 25_557_032
    assert Models.ResNet50.parameters.m_as("") == 25_557_032


def test_book_values_differ_only_where_documented() -> None:
    from mlsys.book.migration import differences

    documented = {d.key: d for d in differences()}
    # mlsys serves another value than the book's package for these, with a reason
    for path in (
        "Models.Vision.ResNet50.inference_flops",
        "Models.Language.GPT2.parameters",
        "Hardware.Cloud.H100.memory.capacity",
        "Systems.Fabrics.InfiniBand_HDR.latency_us",
    ):
        assert path in documented and documented[path].reason
        book = documented[path].book
        assert book, path
    # ResNet-50: the book's 4.1 GFLOP are multiply-adds; mlsys counts 2 FLOPs each
    assert documented["Models.Vision.ResNet50.inference_flops"].book.startswith("4.1e+09")
    assert resolve_path("Models.Vision.ResNet50.inference_flops").m_as("") == pytest.approx(8.18e9)
    # ResNet-50's parameters: the book's rounded 25.6 M vs torchvision's 25,557,032
    assert documented["Models.Vision.ResNet50.parameters"].book.startswith("2.56e+07")
    fp32_mb = resolve_path("Models.Vision.ResNet50.parameters").m_as("") * 4 / 1e6
    assert fp32_mb == pytest.approx(102.228, abs=1e-3) and abs(fp32_mb - 25.6 * 4) > 0.1


def test_every_reference_is_a_book_assumption() -> None:
    import mlsys.constants as constants
    from mlsys.core.catalog import load_table

    def refs(node: object) -> list[str]:
        if isinstance(node, dict):
            found = [node["ref"]] if "ref" in node else []
            return found + [r for v in node.values() for r in refs(v)]
        return []

    for name in ("book_hardware.toml", "book_models.toml", "book_systems.toml"):
        for ref in refs(load_table(name)):
            value = getattr(constants, ref)  # raises if the assumption does not exist
            assert value is not None and "source" in constants.provenance(ref)


def test_unknown_model_raises_unknown_entry_error_with_suggestions() -> None:
    from mlsys import Models

    with pytest.raises(UnknownEntryError, match="Llama3") as caught:
        Models.Llama4
    assert isinstance(caught.value, AttributeError)
    assert not hasattr(Models, "Llama4")
    assert getattr(Models, "Llama4", None) is None
    with pytest.raises(UnknownEntryError, match="Did you mean"):
        Models.Vision.ResNet5


def test_star_import_gives_the_newest_era_names() -> None:
    namespace: dict[str, object] = {}
    exec("from mlsys import *", namespace)
    for name in ("Hardware", "Models", "Systems", "Literature", "Engine", "Tiers", "Scenarios"):
        assert name in namespace, name
    hardware = namespace["Hardware"]
    assert math.isclose(hardware.Cloud.H100.tdp.m_as("W"), 700.0)  # type: ignore[attr-defined]
