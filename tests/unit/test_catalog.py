"""The shipped catalog: every entry loads, carries provenance, and is found by name.

Values are checked against their sources in ``test_catalog_values.py``; this file checks
structure: coverage of the canonical keys (the API contract), provenance on every
value-bearing field, forgiving lookup and helpful errors for unknown names.
"""

from __future__ import annotations

import math

import pytest

from mlsys import Datacenters, Fabrics, Grids, Hardware, Models, Nodes
from mlsys.core.catalog import load_table
from mlsys.core.errors import UnknownEntryError
from mlsys.core.types import Provenance

REGISTRIES = {
    "Hardware": Hardware,
    "Fabrics": Fabrics,
    "Nodes": Nodes,
    "Models": Models,
    "Grids": Grids,
    "Datacenters": Datacenters,
}

FILES = {
    "Hardware": "accelerators.toml",
    "Fabrics": "fabrics.toml",
    "Nodes": "nodes.toml",
    "Models": "models.toml",
    "Grids": "grids.toml",
    "Datacenters": "datacenters.toml",
}

# Canonical keys the API contract promises (the catalog coverage it lists).
CANONICAL = {
    "Hardware": [
        "H100", "H100_PCIE", "H200", "B200", "A100_80GB", "A100_40GB", "V100", "MI300X",
        "TPU_V3", "TPU_V4", "TPU_V5E", "TPU_V5P", "L4", "JETSON_ORIN", "CORTEX_M7",
        "H800", "A800_80GB",
    ],
    "Fabrics": [
        "NVLINK3", "NVLINK4", "NVLINK5", "IB_HDR", "IB_NDR", "IB_XDR", "ROCE_100G",
        "ROCE_200G", "ROCE_400G", "ETH_10G", "ETH_25G", "ETH_100G", "TPU_ICI_V4",
        "TPU_ICI_V5P", "PCIE4", "PCIE5", "CELLULAR_LTE", "WIFI", "BLE",
    ],
    "Nodes": ["DGX_A100", "DGX_H100", "HGX_H200", "DGX_B200"],
    "Models": [
        "GPT3_175B", "Llama2_7B", "Llama2_13B", "Llama2_70B", "Llama3_8B", "Llama3_70B",
        "Llama3_405B", "Mixtral_8x7B", "DeepSeek_V3", "BERT_Large", "ResNet50",
        "OPT_175B", "BLOOM_176B",
    ],
    "Grids": ["US_AVG", "US_AVG_2020", "FRANCE", "GERMANY", "SWEDEN", "NORWAY", "INDIA",
              "CHINA", "QUEBEC", "US_PJM_VIRGINIA", "US_BPA_OREGON", "US_MISO_IOWA"],
    "Datacenters": ["MICROSOFT_GPT3", "GOOGLE_T5", "GOOGLE_MEENA", "GOOGLE_SWITCH",
                    "META_LLAMA", "HYPERSCALE_AVG", "ENTERPRISE_AVG"],
}  # fmt: skip

# Fields that describe or link an entry rather than carry a sourced value.
_STRUCTURAL = {"name", "display_name", "provenance", "accelerator", "intra_fabric", "grid"}


def _all_entries():
    for reg_name, reg in REGISTRIES.items():
        for key, entry in reg.items():
            yield reg_name, key, entry


ALL = list(_all_entries())
IDS = [f"{r}.{k}" for r, k, _ in ALL]


@pytest.mark.parametrize("registry", list(CANONICAL))
def test_canonical_keys_exist(registry):
    missing = [k for k in CANONICAL[registry] if k not in REGISTRIES[registry].list()]
    assert not missing, f"{registry} lacks {missing}"


@pytest.mark.parametrize("registry", list(REGISTRIES))
def test_every_table_in_the_file_loads(registry):
    # Each TOML table becomes exactly one entry (no silent drops, nothing invented).
    assert REGISTRIES[registry].list() == list(load_table(FILES[registry]))


@pytest.mark.parametrize(("registry", "key", "entry"), ALL, ids=IDS)
def test_entry_name_matches_key(registry, key, entry):
    assert entry.name == key
    assert entry.display_name, f"{registry}.{key} has no display_name"


@pytest.mark.parametrize(("registry", "key", "entry"), ALL, ids=IDS)
def test_every_value_has_provenance(registry, key, entry):
    assert "default" in entry.provenance, f"{registry}.{key}: no provenance.default"
    for field in type(entry).model_fields:
        if field in _STRUCTURAL or getattr(entry, field) is None:
            continue
        prov = entry.provenance_of(field)
        assert isinstance(prov, Provenance), f"{registry}.{key}.{field} has no provenance"
        assert prov.reference.strip(), f"{registry}.{key}.{field}: empty reference"


@pytest.mark.parametrize(("registry", "key", "entry"), ALL, ids=IDS)
def test_provenance_entries_name_real_fields(registry, key, entry):
    # A typo in provenance.<field> would silently fall back to the default.
    fields = set(type(entry).model_fields)
    for name in entry.provenance:
        assert name == "default" or name in fields, f"{registry}.{key}: provenance.{name}"


@pytest.mark.parametrize(("registry", "key", "entry"), ALL, ids=IDS)
def test_provenance_urls_are_web_addresses(registry, key, entry):
    for name, prov in entry.provenance.items():
        if prov.url is not None:
            assert prov.url.startswith("https://"), f"{registry}.{key}.{name}: {prov.url}"


def test_estimates_say_why():
    # An estimate must carry its reasoning, not just a number.
    for registry, key, entry in ALL:
        for name, prov in entry.provenance.items():
            if prov.kind == "estimate":
                assert len(prov.reference) > 40, f"{registry}.{key}.{name}: {prov.reference!r}"


@pytest.mark.parametrize(("key", "acc"), Hardware.items(), ids=Hardware.list())
def test_accelerator_floats_are_finite_and_positive(key, acc):
    for p in acc.precisions:
        assert math.isfinite(acc.peak_flops_s(p)) and acc.peak_flops_s(p) > 0
    for value in (acc.memory_bytes, acc.memory_bandwidth_Bps, acc.tdp_W):
        assert math.isfinite(value) and value > 0
    assert acc.scaleup_bandwidth_Bps >= 0
    assert acc.sparsity_speedup in (1.0, 2.0)


@pytest.mark.parametrize(("key", "fab"), Fabrics.items(), ids=Fabrics.list())
def test_fabric_floats(key, fab):
    assert fab.bandwidth_Bps > 0 and fab.latency_s > 0
    assert fab.oversubscription >= 1.0
    # Scale-up links are faster than the slowest network but never slower than a
    # microsecond-class handshake; slow links are marked scale-out.
    if fab.kind == "scale-up":
        assert fab.bandwidth_Bps >= 30e9 and fab.latency_s <= 10e-6


@pytest.mark.parametrize(
    ("registry", "name", "expected"),
    [
        (Hardware, "h100-sxm", "H100"),
        (Hardware, "H100 SXM", "H100"),
        (Hardware, "h100-sxm5", "H100"),
        (Hardware, "a100", "A100_80GB"),
        (Hardware, "A100-40GB", "A100_40GB"),
        (Hardware, "TPUv5e", "TPU_V5E"),
        (Hardware, "tpu-v5e", "TPU_V5E"),
        (Hardware, "TPU v5p", "TPU_V5P"),
        (Hardware, "h100 pcie", "H100_PCIE"),
        (Hardware, "mi300x", "MI300X"),
        (Hardware, "Jetson AGX Orin", "JETSON_ORIN"),
        (Hardware, "stm32h7", "CORTEX_M7"),
        (Fabrics, "nvlink-4", "NVLINK4"),
        (Fabrics, "NDR", "IB_NDR"),
        (Fabrics, "wifi", "WIFI"),
        (Fabrics, "Bluetooth LE", "BLE"),
        (Nodes, "dgx-h100", "DGX_H100"),
        (Nodes, "DGX H200", "HGX_H200"),
        (Models, "gpt-3", "GPT3_175B"),
        (Models, "Llama-2-70B", "Llama2_70B"),
        (Models, "llama-3.1-405b", "Llama3_405B"),
        (Models, "mixtral", "Mixtral_8x7B"),
        (Models, "resnet-50", "ResNet50"),
        (Grids, "france", "FRANCE"),
        (Grids, "US", "US_AVG"),
        (Datacenters, "hyperscale", "HYPERSCALE_AVG"),
    ],
)
def test_forgiving_lookup(registry, name, expected):
    assert registry[name] is registry.get(expected)
    assert registry[name].name == expected


def test_attribute_access_is_the_same_object():
    assert Hardware.H100 is Hardware["H100"]
    assert Models.ResNet50 is Models["resnet50"]


@pytest.mark.parametrize(
    ("registry", "name", "suggested"),
    [
        (Hardware, "H100-SXM6", "H100"),
        (Hardware, "A100-160GB", "A100_80GB"),
        (Fabrics, "NVLINK6", "NVLINK5"),
        (Models, "Llama2_7", "Llama2_7B"),
    ],
)
def test_unknown_name_raises_with_closest(registry, name, suggested):
    with pytest.raises(UnknownEntryError) as err:
        registry[name]
    assert suggested in err.value.suggestions
    assert suggested in str(err.value)


def test_unknown_entry_error_is_a_key_error_and_value_error():
    with pytest.raises(KeyError):
        Hardware["not-a-chip"]
    with pytest.raises(ValueError):
        Hardware["not-a-chip"]


def test_nodes_and_datacenters_reference_catalog_objects():
    for _, node in Nodes.items():
        assert node.accelerator is Hardware.get(node.accelerator.name)
        assert node.intra_fabric is Fabrics.get(node.intra_fabric.name)
        assert node.intra_fabric.kind == "scale-up"
    for _, dc in Datacenters.items():
        assert dc.grid is Grids.get(dc.grid.name)


def test_every_grid_states_its_year_and_region():
    for key, grid in Grids.items():
        assert grid.year is not None and 2015 <= grid.year <= 2026, key
        assert grid.region, key
        assert 0 < grid.carbon_kg_per_kwh < 1.2, key
