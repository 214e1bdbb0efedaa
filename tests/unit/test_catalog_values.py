"""Catalog values against the figures their sources publish.

Every number asserted here is written out with its citation (not read back from the
catalog), so a wrong edit to a data file fails a test. Conventions checked: dense peaks
(sparse = 2x dense where 2:4 sparsity exists), link bandwidths per direction (half the
datasheets' bidirectional totals), memory capacity as the device exposes it, and
parameter counts derived from model shapes matching the published totals.
"""

from __future__ import annotations

import pytest

from mlsys import Datacenters, Fabrics, Grids, Hardware, Models, Nodes, TransformerWorkload
from mlsys.validation import load_data, records

TERA = 1e12
GIGA = 1e9

# ---------------------------------------------------------------------------------
# Accelerators: the vendors' datasheets, each cited in its row
# ---------------------------------------------------------------------------------

# (key, precision, dense TFLOP/s, relative tolerance, citation)
PEAKS = [
    ("A100_80GB", "bf16", 312, 1e-9, "NVIDIA A100 datasheet: BF16 312 TFLOPS (dense)"),
    ("A100_80GB", "tf32", 156, 1e-9, "NVIDIA A100 datasheet: TF32 156 TFLOPS (dense)"),
    ("A100_40GB", "bf16", 312, 1e-9, "NVIDIA A100 datasheet, 40GB SXM column"),
    ("H100", "bf16", 989, 1e-3, "NVIDIA H100 datasheet: 1,979 sparse / 2 = 989.4"),
    ("H100", "fp8", 1979, 1e-3, "NVIDIA H100 datasheet: 3,958 sparse / 2 = 1,978.9"),
    ("H100_PCIE", "bf16", 756, 1e-3, "NVIDIA H100 datasheet, PCIe: 1,513 sparse / 2"),
    ("H200", "bf16", 989, 1e-3, "published.md: H200 compute as H100"),
    ("B200", "bf16", 2250, 1e-9, "NVIDIA HGX B200: FP16/BF16 4.5 PFLOPS sparse / 2"),
    ("B200", "fp4", 9000, 1e-9, "HGX B200: FP4 18 PF sparse / 2; DGX B200 72 PF / 8"),
    ("MI300X", "bf16", 1307, 1e-3, "AMD MI300X data sheet: 1,307.4 TFLOPS dense"),
    ("V100", "fp16", 125, 1e-9, "NVIDIA V100 datasheet, SXM2: 125 tensor TFLOPS"),
    ("L4", "bf16", 121, 1e-9, "NVIDIA L4 datasheet: 242 sparse / 2"),
    ("TPU_V3", "bf16", 123, 1e-9, "Cloud TPU v3 docs: 123 TFLOPs per chip"),
    ("TPU_V4", "bf16", 275, 1e-9, "Cloud TPU v4 docs: 275 TFLOPs per chip"),
    ("TPU_V5E", "bf16", 197, 1e-9, "Cloud TPU v5e docs: 197 TFLOPs per chip"),
    ("TPU_V5E", "int8", 393, 1e-9, "Cloud TPU v5e docs: 393 TOPs per chip"),
    ("TPU_V5P", "bf16", 459, 1e-9, "Cloud TPU v5p docs: 459 TFLOPs per chip"),
]  # fmt: skip


@pytest.mark.parametrize(("key", "precision", "tflops", "rel", "source"), PEAKS)
def test_dense_peak(key, precision, tflops, rel, source):
    assert Hardware[key].peak_flops_s(precision) == pytest.approx(tflops * TERA, rel=rel), source


MIB = 2**20
GIB = 2**30

# Memory capacity is what the device exposes to a program, not the datasheet's rounded
# "80 GB" read as 80e9 bytes. (key, exposed bytes, datasheet GB, citation)
CAPACITY = [
    ("A100_80GB", 81920 * MIB, 80, "nvidia-smi A100-SXM4-80GB: 81920MiB (= 80 GiB)"),
    ("A100_40GB", 40960 * MIB, 40, "nvidia-smi A100-SXM4-40GB: 40960MiB (= 40 GiB)"),
    ("A800_80GB", 81920 * MIB, 80, "nvidia-smi A800-SXM4-80GB: 81920MiB"),
    ("H100", 81559 * MIB, 80, "nvidia-smi H100 80GB HBM3: 81559MiB"),
    ("H100_PCIE", 81559 * MIB, 80, "nvidia-smi H100 PCIe: 81559MiB"),
    ("H800", 81559 * MIB, 80, "H100's HBM3 subsystem: 81559MiB"),
    ("H200", 143771 * MIB, 141, "nvidia-smi H200: 143771MiB"),
    ("B200", 183359 * MIB, 180, "nvidia-smi B200: 183359MiB"),
    ("V100", 32510 * MIB, 32, "nvidia-smi V100-SXM2-32GB: 32510MiB"),
    ("L4", 23034 * MIB, 24, "nvidia-smi L4: 23034MiB"),
    ("MI300X", 192 * GIB, 192, "ROCm: 8 CPX partitions x 25,767,706,624 B (192 GiB - 16 MiB)"),
    ("TPU_V3", 32 * GIB, 32, "Cloud TPU v3 docs: HBM2 32 GiB"),
    ("TPU_V4", 32 * GIB, 32, "Cloud TPU v4 docs: HBM2 32 GiB"),
    ("TPU_V5E", 16 * GIB, 16, "TPU runtime HBM limit 16 x 1024**3 (vLLM tpu-inference)"),
    ("TPU_V5P", 95 * GIB, 95, "Cloud TPU v5p docs: HBM2e 95 GiB"),
    ("JETSON_ORIN", 64 * GIB, 64, "Jetson AGX Orin 64GB: LPDDR5, binary-sized packages"),
    ("CORTEX_M7", 1 * MIB, 1e-3, "STM32H743 datasheet: 1 Mbyte (1,024 Kbytes) of RAM"),
]  # fmt: skip


@pytest.mark.parametrize(("key", "exposed", "datasheet_gb", "source"), CAPACITY)
def test_memory_capacity_is_what_the_device_exposes(key, exposed, datasheet_gb, source):
    acc = Hardware[key]
    # MI300X: the driver's 8 x 25,767,706,624 bytes is 16 MiB short of 192 GiB
    assert acc.memory_bytes == pytest.approx(exposed, rel=1e-4), source
    # The exposed figure sits within 8 % of the datasheet's number read as GiB: the
    # datasheets' "GB" of device memory is a binary unit.
    assert acc.memory_bytes == pytest.approx(datasheet_gb * GIB, rel=0.08), source
    prov = acc.provenance_of("memory_capacity")
    assert prov is not None and prov is not acc.provenance_of("default"), key


def test_every_accelerator_states_its_capacity_convention():
    for key in Hardware.list():
        assert "memory_capacity" in Hardware[key].provenance, key


def test_a100_and_h100_80gb_are_not_80e9_bytes():
    # The A100's 80 GiB is 85.9e9 bytes; the H100 exposes 81,559 MiB = 85.5e9 bytes.
    assert Hardware.A100_80GB.memory_bytes == 80 * GIB == pytest.approx(85.899e9, rel=1e-4)
    assert Hardware.H100.memory_bytes == pytest.approx(85.521e9, rel=1e-4)


# (key, bandwidth GB/s, TDP W, citation)
MEMORY_POWER = [
    ("A100_80GB", 2039, 400, "published.md: 2,039 GB/s, 400 W"),
    ("A100_40GB", 1555, 400, "NVIDIA A100 datasheet: 1,555 GB/s, 400 W"),
    ("A800_80GB", 2039, 400, "NVIDIA A800 datasheet: 2,039 GB/s, 400 W"),
    ("H100", 3350, 700, "published.md: 3.35 TB/s, 700 W"),
    ("H800", 3350, 700, "NVIDIA H800 datasheet: 3.35 TB/s, 700 W"),
    ("H100_PCIE", 2000, 350, "H100 PCIe product brief: >2,000 GB/s, 350 W TDP"),
    ("H200", 4800, 700, "published.md: 4.8 TB/s (700 W, H200 datasheet)"),
    ("B200", 7700, 1000, "HGX B200 as shipped: 7.7 TB/s (7,680-bit bus at 3,996 MHz); 1,000 W"),
    ("MI300X", 5300, 750, "published.md: 5.3 TB/s, 750 W"),
    ("V100", 900, 300, "NVIDIA V100 datasheet, SXM2 32GB: 900 GB/s, 300 W"),
    ("L4", 300, 72, "NVIDIA L4 datasheet: 300 GB/s, 72 W"),
    ("TPU_V5E", 819, None, "published.md: TPU v5e 819 GB/s"),
    ("TPU_V5P", 2765, None, "published.md: TPU v5p 2,765 GB/s"),
    ("JETSON_ORIN", 204.8, 60, "Jetson AGX Orin 64GB: LPDDR5 204.8 GB/s, 15-60 W"),
]  # fmt: skip


@pytest.mark.parametrize(("key", "gbps", "watts", "source"), MEMORY_POWER)
def test_memory_bandwidth_and_power(key, gbps, watts, source):
    acc = Hardware[key]
    assert acc.memory_bandwidth_Bps == pytest.approx(gbps * GIGA), source
    if watts is not None:
        assert acc.tdp_W == pytest.approx(watts), source


def test_export_variants_are_their_parents_with_slower_nvlink():
    # NVIDIA A800 / H800 datasheets: NVLink 400 GB/s (both directions) where the A100 has
    # 600 and the H100 900; tensor-core peaks and memory unchanged. H800 FP64: 1 TFLOPS.
    for child, parent in (("A800_80GB", "A100_80GB"), ("H800", "H100")):
        c, p = Hardware[child], Hardware[parent]
        assert 2 * c.scaleup_bandwidth_Bps == pytest.approx(400 * GIGA)
        assert c.scaleup_bandwidth_Bps < p.scaleup_bandwidth_Bps
        for prec in ("bf16", "fp16", "int8"):
            assert c.peak_flops_s(prec) == p.peak_flops_s(prec)
        assert c.memory_bytes == p.memory_bytes
        assert c.memory_bandwidth_Bps == p.memory_bandwidth_Bps
    assert Hardware.H800.peak_flops_s("fp64") == pytest.approx(1 * TERA)


def test_tpu_capacities_in_gib_where_google_says_gib():
    # Cloud TPU v3 / v4 docs: "32 GiB" of HBM2 (34.36e9 bytes, not 32e9).
    assert Hardware.TPU_V3.memory_bytes == 32 * 2**30
    assert Hardware.TPU_V4.memory_bytes == 32 * 2**30


# (key, per-direction GB/s, datasheet total GB/s, citation)
SCALEUP = [
    ("A100_80GB", 300, 600, "A100 datasheet: NVLink 600 GB/s"),
    ("A800_80GB", 200, 400, "A800 datasheet: NVLink 400 GB/s"),
    ("H800", 200, 400, "H800 datasheet: NVLink 400 GB/s"),
    ("H100", 450, 900, "H100 datasheet: NVLink 900 GB/s"),
    ("H200", 450, 900, "H200 datasheet: NVLink 900 GB/s"),
    ("B200", 900, 1800, "HGX B200: NVLink 5 1.8 TB/s"),
    ("V100", 150, 300, "V100 datasheet: NVLink 300 GB/s"),
    ("MI300X", 448, 896, "MI300X: 7 x 128 GB/s Infinity Fabric = 896 GB/s"),
    ("TPU_V5E", 200, 400, "Cloud TPU v5e: bidirectional ICI 400 GBps"),
    ("TPU_V5P", 600, 1200, "Cloud TPU v5p: bidirectional ICI 1,200 GBps"),
    ("H100_PCIE", 64, 128, "H100 datasheet, PCIe: PCIe Gen5 128 GB/s"),
    ("L4", 32, 64, "L4 datasheet: PCIe Gen4 x16 64 GB/s"),
]


@pytest.mark.parametrize(("key", "per_direction", "total", "source"), SCALEUP)
def test_scaleup_is_half_the_bidirectional_figure(key, per_direction, total, source):
    bw = Hardware[key].scaleup_bandwidth_Bps
    assert bw == pytest.approx(per_direction * GIGA), source
    assert 2 * bw == pytest.approx(total * GIGA), source


@pytest.mark.parametrize("key", Hardware.list())
def test_sparse_is_twice_dense_where_supported(key):
    acc = Hardware[key]
    # 2:4 structured sparsity: NVIDIA Ampere and later, AMD CDNA 3. Not Volta, not TPUs,
    # not a Cortex-M7.
    supports = key in {
        "A100_80GB", "A100_40GB", "A800_80GB", "H100", "H100_PCIE", "H800", "H200", "B200",
        "GB200", "L4", "MI300X", "JETSON_ORIN",
    }  # fmt: skip
    for p in acc.precisions:
        dense, sparse = acc.peak_flops_s(p), acc.peak_flops_s(p, sparse=True)
        assert sparse == pytest.approx((2.0 if supports else 1.0) * dense), (key, p)


def test_v100_has_no_bf16():
    # Volta tensor cores do fp16 only (V100 datasheet); bf16 arrived with Ampere.
    from mlsys.core.errors import ParameterError

    with pytest.raises(ParameterError):
        Hardware.V100.peak_flops_s("bf16")


def test_h100_ridge_point():
    # 989.4e12 FLOP/s / 3.35e12 B/s = 295 FLOP/byte (Williams et al. 2009 roofline).
    assert Hardware.H100.ridge_point("bf16") == pytest.approx(989.4 / 3.35, rel=1e-6)


def test_cortex_m7_peaks_follow_the_clock():
    # One fp32 FMA (2 FLOP) per cycle and two 16-bit MACs (4 ops) per cycle at 480 MHz.
    m7 = Hardware.CORTEX_M7
    assert m7.peak_flops_s("fp32") == pytest.approx(2 * 480e6)
    assert m7.peak_flops_s("int8") == pytest.approx(4 * 480e6)
    assert m7.memory_bytes == 2**20  # 1 Mbyte (1,024 Kbytes) of on-chip SRAM
    assert m7.tdp_W < 1.0


def test_edge_and_mcu_sit_orders_of_magnitude_below_datacentre_parts():
    h100, orin, m7 = Hardware.H100, Hardware.JETSON_ORIN, Hardware.CORTEX_M7
    assert h100.tdp_W / orin.tdp_W > 10 and orin.tdp_W / m7.tdp_W > 100
    assert h100.memory_bytes / m7.memory_bytes > 1e4


# ---------------------------------------------------------------------------------
# Fabrics: per accelerator, per direction
# ---------------------------------------------------------------------------------

# (key, per-direction bytes/s, derivation)
FABRICS = [
    ("NVLINK3", 600e9 / 2, "A100 NVLink 600 GB/s total"),
    ("NVLINK4", 900e9 / 2, "H100 NVLink 900 GB/s total"),
    ("NVLINK5", 1800e9 / 2, "B200 NVLink 1.8 TB/s total"),
    ("PCIE4", 16 * 16e9 / 8, "16 lanes x 16 GT/s"),
    ("PCIE5", 16 * 32e9 / 8, "16 lanes x 32 GT/s"),
    ("IB_HDR", 200e9 / 8, "HDR 200 Gbit/s"),
    ("IB_NDR", 400e9 / 8, "NDR 400 Gbit/s"),
    ("IB_XDR", 800e9 / 8, "XDR 800 Gbit/s"),
    ("ROCE_100G", 100e9 / 8, "100 GbE"),
    ("ROCE_200G", 200e9 / 8, "200 GbE"),
    ("ROCE_400G", 400e9 / 8, "400 GbE"),
    ("ETH_10G", 10e9 / 8, "10 GbE"),
    ("ETH_25G", 25e9 / 8, "25 GbE"),
    ("ETH_100G", 100e9 / 8, "100 GbE"),
    ("TPU_ICI_V5P", 1200e9 / 2, "v5p bidirectional ICI 1,200 GBps per chip"),
    ("TPU_ICI_V5E", 400e9 / 2, "v5e bidirectional ICI 400 GBps per chip"),
]


@pytest.mark.parametrize(("key", "bps", "derivation"), FABRICS)
def test_fabric_bandwidth_per_direction(key, bps, derivation):
    assert Fabrics[key].bandwidth_Bps == pytest.approx(bps), derivation


def test_network_bandwidth_is_the_port_rate_in_bytes():
    for key in ["IB_HDR", "IB_NDR", "IB_XDR", "ROCE_100G", "ROCE_200G", "ROCE_400G",
                "ETH_10G", "ETH_25G", "ETH_100G"]:  # fmt: skip
        fab = Fabrics[key]
        assert fab.bandwidth_Bps == pytest.approx(fab.link_rate.to("bit/s").magnitude / 8), key


def test_fabric_ordering():
    # Scale-up beats scale-out by an order of magnitude; slow links are slow.
    assert Fabrics.NVLINK4.bandwidth_Bps / Fabrics.IB_NDR.bandwidth_Bps == pytest.approx(9)
    assert Fabrics.IB_NDR.latency_s < Fabrics.ETH_10G.latency_s < Fabrics.WIFI.latency_s
    assert Fabrics.WIFI.latency_s < Fabrics.CELLULAR_LTE.latency_s
    # The "parallelism paradox" tracks: LTE uplink is ~4e4 times slower than NDR,
    # BLE another ~50 times slower (a few to tens of Mbit/s vs 400 Gbit/s; ~0.2 Mbit/s).
    assert Fabrics.IB_NDR.bandwidth_Bps / Fabrics.CELLULAR_LTE.bandwidth_Bps == pytest.approx(4e4)
    assert Fabrics.CELLULAR_LTE.bandwidth_Bps / Fabrics.BLE.bandwidth_Bps == pytest.approx(50)
    assert 10e-3 <= Fabrics.CELLULAR_LTE.latency_s <= 100e-3
    assert Fabrics.BLE.link_rate.to("Mbit/s").magnitude == pytest.approx(1.0)


def test_non_blocking_fat_trees():
    for key in ["IB_HDR", "IB_NDR", "IB_XDR"]:
        assert Fabrics[key].oversubscription == 1.0
        assert Fabrics[key].effective_bandwidth_Bps == Fabrics[key].bandwidth_Bps


# ---------------------------------------------------------------------------------
# Nodes
# ---------------------------------------------------------------------------------

# (key, GPUs, max kW, GPU TDP W, citation)
NODES = [
    ("DGX_A100", 8, 6.5, 400, "DGX A100 datasheet: 6.5 kW max"),
    ("DGX_H100", 8, 10.2, 700, "DGX H100/H200 user guide: 10.2 kW max"),
    ("HGX_H200", 8, 10.2, 700, "DGX H100/H200 user guide: 10.2 kW max"),
    ("DGX_B200", 8, 14.3, 1000, "DGX B200 user guide: 14.3 kW max"),
]


@pytest.mark.parametrize(("key", "gpus", "max_kw", "tdp", "source"), NODES)
def test_node_power_and_derived_host_power(key, gpus, max_kw, tdp, source):
    node = Nodes[key]
    assert node.accelerators_per_node == gpus
    assert node.max_power.to("kW").magnitude == pytest.approx(max_kw), source
    # host_power is derived as the system maximum minus the GPUs' TDP.
    assert node.host_power_W == pytest.approx(max_kw * 1e3 - gpus * tdp)
    assert node.provenance_of("host_power").kind == "derived"


def test_node_scaleup_matches_its_accelerator():
    for key in ["DGX_A100", "DGX_H100", "HGX_H200", "DGX_B200"]:
        node = Nodes[key]
        assert node.intra_fabric.bandwidth_Bps == node.accelerator.scaleup_bandwidth_Bps, key


# ---------------------------------------------------------------------------------
# Models: derived parameter counts against published totals
# ---------------------------------------------------------------------------------

# Published totals live once, in the validation data set (compute.toml [[params]]),
# each with its citation and tolerance.
PARAMS = records("compute", "params")


@pytest.mark.parametrize("row", PARAMS, ids=[r["name"] for r in PARAMS])
def test_parameter_counts(row):
    model = Models[row["catalog"]]
    assert model.total_params == pytest.approx(row["published"], rel=row["tolerance"]), row
    if "published_active" in row:
        assert model.active_params_per_token == pytest.approx(
            row["published_active"], rel=row["tolerance"]
        ), row


def test_every_catalog_transformer_has_a_published_count():
    covered = {r["catalog"] for r in PARAMS}
    for key in Models.list():
        if isinstance(Models[key], TransformerWorkload):
            assert key in covered, key


def test_bert_large_within_two_percent_of_the_papers_340m():
    # Devlin et al. 2019 round to 340M; the shape omits segment embeddings and pooler.
    assert Models.BERT_Large.total_params == pytest.approx(340e6, rel=0.02)
    assert Models.BERT_Large.encoder_only


def test_deepseek_shape_is_close_to_its_published_total():
    # The shape cannot express MLA; it should still land within 1% of 671B.
    breakdown = Models.DeepSeek_V3.param_breakdown
    assert breakdown["total"] == pytest.approx(671e9, rel=0.01)
    assert Models.DeepSeek_V3.moe_layers == 61 - 3


def test_deepseek_kv_cache_matches_mla():
    # MLA caches a 512-wide latent plus a 64-wide RoPE key per token per layer
    # (DeepSeek-V3 report Sec. 2.1): 61 x 576 x 2 bytes at bf16 = 70,272 bytes.
    assert Models.DeepSeek_V3.kv_bytes_per_token("bf16") == 61 * (512 + 64) * 2


def test_llama2_70b_kv_cache():
    # GQA with 8 KV heads of 128: 2 x 80 x 8 x 128 x 2 bytes = 327,680 bytes per token.
    assert Models.Llama2_70B.kv_bytes_per_token("bf16") == 2 * 80 * 8 * 128 * 2


def test_gpt3_training_compute_is_3_14e23():
    # Brown et al. 2020 Table D.1: 3.14e23 FLOPs = 6 x 174.6e9 x 300e9 (Kaplan et al. 2020).
    m = Models.GPT3_175B
    assert 6 * m.total_params * m.training_tokens == pytest.approx(3.14e23, rel=0.01)


def test_resnet50_flop_convention():
    # He et al. 2016 / torchvision: 4.09e9 multiply-adds per 224x224 image; 1 MAC = 2 FLOPs.
    r = Models.ResNet50
    assert r.kind == "cnn"
    assert r.flops_per_sample == pytest.approx(2 * 4.09e9, rel=1e-3)
    assert r.params == pytest.approx(25.6e6, rel=0.01)
    assert r.input_shape == (3, 224, 224)


def test_training_tokens():
    assert Models.Llama2_70B.training_tokens == 2e12  # Touvron et al. 2023: 2.0T
    assert Models.Llama3_405B.training_tokens == 15.6e12  # Llama 3 report: 15.6T
    assert Models.DeepSeek_V3.training_tokens == 14.8e12  # DeepSeek-V3 report: 14.8T


# ---------------------------------------------------------------------------------
# Grids and data centres: reproduce the published carbon accounts
# ---------------------------------------------------------------------------------


def _mwh(chips, days, watts, pue):
    return chips * days * 24 * watts * pue / 1e6


# Patterson et al. 2021 Table 4 and Touvron et al. 2023 Table 15, read from the
# validation data set (mlsys/validation/data/operations.toml), where each published
# figure is written once with its citation.
PATTERSON = records("operations", "patterson")
PATTERSON_DC = {
    "GPT-3": "MICROSOFT_GPT3",
    "T5": "GOOGLE_T5",
    "Meena": "GOOGLE_MEENA",
    "Switch Transformer": "GOOGLE_SWITCH",
}


@pytest.mark.parametrize("row", PATTERSON, ids=[r["model"] for r in PATTERSON])
def test_patterson_table4(row):
    d = Datacenters[PATTERSON_DC[row["model"]]]
    assert d.pue == row["pue"]
    # the catalog grid carries the intensity the table prints for this run
    assert d.grid.carbon_kg_per_kwh == row["kg_per_kwh"]
    energy = _mwh(row["chips"], row["days"], row["watts_per_chip"], d.pue)
    assert energy == pytest.approx(row["published_mwh"], rel=0.01)
    assert energy * d.grid.carbon_kg_per_kwh == pytest.approx(row["published_tco2e"], rel=0.01)


def test_switch_transformer_is_59_tonnes_not_72():
    # Table 4: 179 MWh at 0.330 kg/kWh = 59.07 tCO2e (an earlier transcription had 72.2).
    d = Datacenters.GOOGLE_SWITCH
    assert 179 * d.grid.carbon_kg_per_kwh == pytest.approx(59.07, abs=0.01)


TOUVRON = load_data("operations")["touvron"]


@pytest.mark.parametrize("row", records("operations", "touvron"), ids=lambda r: r["model"])
def test_touvron_table15(row):
    # Touvron et al. 2023 Table 15: GPU-hours x 0.4 kW x PUE 1.1 x 0.385 kg/kWh, with the
    # catalog's A100 TDP and META_LLAMA facility standing in for the paper's constants.
    d = Datacenters.META_LLAMA
    assert Hardware.A100_80GB.tdp_W == TOUVRON["watts_per_gpu"]
    assert d.pue == TOUVRON["pue"] and d.grid.carbon_kg_per_kwh == TOUVRON["kg_per_kwh"]
    energy = row["gpu_hours"] * Hardware.A100_80GB.tdp_W * d.pue / 1e6
    assert energy == pytest.approx(row["published_mwh"], abs=1)
    assert energy * d.grid.carbon_kg_per_kwh == pytest.approx(row["published_tco2e"], abs=1)


def test_facility_averages():
    assert Datacenters.ENTERPRISE_AVG.pue == 1.58  # Uptime Institute survey 2023
    assert Datacenters.HYPERSCALE_AVG.pue == 1.10  # Google fleet TTM PUE
    assert 0.2 <= Datacenters.HYPERSCALE_AVG.wue_L_per_kwh <= 1.8


@pytest.mark.parametrize(
    ("key", "kg_per_kwh", "source"),
    [
        ("FRANCE", 0.056, "Ember 2023: 56 g"),
        ("GERMANY", 0.381, "Ember 2023: 381 g"),
        ("INDIA", 0.713, "Ember 2023: 713 g"),
        ("CHINA", 0.582, "Ember 2023: 582 g"),
        ("NORWAY", 0.030, "Ember 2023: 30 g"),
        ("US_AVG", 0.385, "Touvron et al. 2023: US national average"),
    ],
)
def test_grid_intensities(key, kg_per_kwh, source):
    assert Grids[key].carbon_kg_per_kwh == pytest.approx(kg_per_kwh), source


def test_grid_ordering_and_prices():
    # Hydro/nuclear grids are an order of magnitude cleaner than coal-heavy ones.
    assert Grids.QUEBEC.carbon_kg_per_kwh < Grids.FRANCE.carbon_kg_per_kwh
    assert Grids.INDIA.carbon_kg_per_kwh / Grids.FRANCE.carbon_kg_per_kwh > 10
    # EIA 2023 industrial averages: US 8.06, Virginia 8.92, Oregon 7.52, Iowa 6.91 cents.
    assert Grids.US_AVG.price_usd_per_kwh == pytest.approx(0.0806)
    assert Grids.US_PJM_VIRGINIA.price_usd_per_kwh == pytest.approx(0.0892)
    assert Grids.US_BPA_OREGON.price_usd_per_kwh == pytest.approx(0.0752)
    assert Grids.US_MISO_IOWA.price_usd_per_kwh == pytest.approx(0.0691)
    assert Grids.US_AVG.water_L_per_kwh == pytest.approx(3.14)  # Li et al. 2023


def test_li_et_al_gpt3_water_totals():
    # Li et al. 2023 (abstract and Sec. 3): training GPT-3 in Microsoft's U.S. data
    # centres evaporates 700,000 L on site and 5.4 million L in total, from Patterson's
    # 1,287 MWh with on-site WUE 0.55 L/kWh, PUE 1.17 and off-site EWIF 3.14 L/kWh.
    energy_kwh = 1287e3
    wue = Datacenters.MICROSOFT_GPT3.wue_L_per_kwh
    ewif = Grids.US_AVG.water_L_per_kwh
    assert energy_kwh * wue == pytest.approx(700e3, rel=0.02)
    assert energy_kwh * (wue + 1.17 * ewif) == pytest.approx(5.4e6, rel=0.02)
