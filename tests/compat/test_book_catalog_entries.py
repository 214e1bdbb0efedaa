"""Entries the textbook names that the catalog gained, and the groups that are queries.

Each figure is checked against the source its provenance cites (written here), and
groups are checked to be views over the catalog: an entry reachable by any alias.
"""

from __future__ import annotations

import pytest

from mlsys import Datasets, Hardware, Infrastructure, Literature, Models, Scenarios, Systems
from mlsys.core.catalog import Fabrics, load_table


def test_tpu_v6e_is_googles_datasheet():
    v6 = Hardware.Cloud.TPUv6
    assert v6.compute.peak_flops.m_as("1/s") == pytest.approx(918e12)  # bf16
    assert v6.memory.capacity.m_as("GB") == pytest.approx(32)
    assert v6.memory.bandwidth.m_as("GB/s") == pytest.approx(1640)
    assert v6.sources["tdp"]["kind"] == "estimate"  # Google publishes no chip power


def test_book_models():
    assert Models.Vision.AlexNet.parameters.m_as("") == pytest.approx(60e6)  # Krizhevsky 2012
    # torchvision: 0.71 GMACs -> 1.42 GFLOP at 2 FLOPs per multiply-add
    assert Models.Vision.AlexNet.inference_flops.m_as("") == pytest.approx(2 * 0.71e9)
    assert Models.Language.BERT_Base.parameters.m_as("") == pytest.approx(110e6)  # Devlin 2019
    gpt4 = Models.Language.GPT4
    assert gpt4.parameters.m_as("") == pytest.approx(1.76e12)
    assert all(src["kind"] == "estimate" for src in gpt4.sources.values())
    assert gpt4.training_gpu_days == pytest.approx(25_000 * 100)  # GPUs x days, the estimate


def test_active_parameters_of_mixtures_and_dense_models():
    # DeepSeek-AI (2024), DeepSeek-V3 Technical Report, Sec. 4.2: 37B of 671B activated
    deepseek = Models.Language.DeepSeek_V3
    assert deepseek.active_parameters.m_as("") == pytest.approx(37e9)
    assert deepseek.parameters.m_as("") == pytest.approx(671e9)
    # Mistral AI (2023), "Mixtral of experts": 46.7B total, 12.9B used per token (top-2
    # of 8 experts); Jiang et al. (2024), Sec. 2, round them to 47B and 13B
    mixtral = Models.Language.Mixtral_8x7B
    assert mixtral.active_parameters.m_as("") == pytest.approx(12.9e9, rel=5e-3)
    assert mixtral.parameters.m_as("") == pytest.approx(46.7e9, rel=5e-3)
    # one token's forward pass: 2 FLOPs per parameter it uses (Kaplan et al. 2020, Eq. 2.2),
    # the routed experts only: 2 x 12.9e9, not 2 x 46.7e9; DeepSeek-V3 2 x 37e9
    assert mixtral.inference_flops.m_as("") == pytest.approx(2 * 12.9e9, rel=5e-3)
    assert deepseek.inference_flops.m_as("") == pytest.approx(2 * 37e9)
    # a dense model uses every parameter: the book's 70B for Llama 2 70B
    llama = Models.Language.Llama2_70B
    assert llama.active_parameters.m_as("") == llama.parameters.m_as("") == pytest.approx(70e9)
    # a vision model has no per-token routing to speak of: absent, not guessed
    with pytest.raises(AttributeError):
        Models.Vision.ResNet50.active_parameters


def test_dlrm_embedding_entries_are_its_fp32_model_size():
    dlrm = Models.Recommendation.DLRM
    entries = dlrm.embedding_entries.m_as("count")
    assert entries == pytest.approx(25e9)  # the book's recommendation.yaml
    # one fp32 value (4 bytes) per entry: 25e9 x 4 B = 100 GB, the book's DLRM model size
    assert entries * 4 / 1e9 == pytest.approx(dlrm.model_size.m_as("GB"))
    assert dlrm.sources["embedding_entries"]["kind"] == "estimate"


def test_jetson_agx_orin_power_modes_and_dense_int8():
    orin = Hardware.Edge.JetsonAGXOrin
    # NVIDIA's module data sheet: 15 W to 60 W configurable; the board power is the top mode
    assert orin.tdp_min.m_as("W") == pytest.approx(15)
    assert orin.tdp_max.m_as("W") == pytest.approx(60)
    assert orin.tdp_max.m_as("W") == pytest.approx(orin.tdp.m_as("W"))
    # "up to 275 TOPS" INT8 counts 2:4 sparsity; the dense rate mlsys serves is half of it
    assert orin.compute.precision_flops["int8"].m_as("1/s") == pytest.approx(275e12 / 2)
    with pytest.raises(AttributeError):
        Hardware.Cloud.H100.tdp_min  # no source states power modes for it: absent


def test_gpt3_training_figures():
    gpt3 = Models.Language.GPT3
    assert gpt3.training_tokens.m_as("") == pytest.approx(300e9)  # Brown et al. 2020
    assert gpt3.training_energy_mwh == pytest.approx(1287.0)  # Patterson et al. 2021
    assert gpt3.sources["training_days_ref"]["kind"] == "estimate"


def test_b200_int4_is_the_books_figure_marked_as_such():
    b200 = Hardware.Cloud.B200
    assert b200.compute.precision_flops["int4"].m_as("1/s") == pytest.approx(9000e12)
    fp8 = Hardware.B200.peak_flops["fp8"].m_as("FLOP/s")  # the catalog's rate is kept
    assert b200.compute.precision_flops["fp8"].m_as("1/s") == pytest.approx(fp8)


def test_fabrics_the_book_adds():
    gdr = Systems.Fabrics.InfiniBand_GXDR  # the book's name, an alias of the catalog's GDR
    assert gdr.entry is Fabrics.IB_GDR
    assert gdr.bandwidth_gbs == pytest.approx(1600 / 8)  # 1.6 Tbit/s per direction
    for name, gbit in (("Ethernet_400G", 400), ("Ethernet_800G", 800), ("Ethernet_1P6T", 1600)):
        assert getattr(Systems.Fabrics, name).bandwidth_gbs == pytest.approx(gbit / 8)


def test_groups_are_catalog_queries():
    # every datacentre accelerator of the catalog is in Hardware.Cloud, by key and alias
    rows = load_table("accelerators.toml")
    cloud = [k for k, r in rows.items() if r.get("kind") in ("gpu", "tpu")]
    for key in cloud:
        view = getattr(Hardware.Cloud, key)
        assert view.entry.name == key
    assert Hardware.Cloud.v5p is Hardware.Cloud.TPU_V5P
    # every catalog transformer is a Language model
    for key, row in load_table("models.toml").items():
        if row.get("kind", "transformer") == "transformer":
            assert getattr(Models.Language, key).entry.name == key
    assert len({id(v) for v in Hardware.Cloud}) == len(list(Hardware.Cloud))


def test_infrastructure_and_scenarios():
    assert Infrastructure.Racks.AI_High.power_kw == 100
    assert Infrastructure.Racks.AI_High.power_w == pytest.approx(100_000)
    assert Infrastructure.FacilityCooling.LiquidCooled.pue == pytest.approx(1.06)
    rate = Infrastructure.Pricing.Cloud.GpuTrainingPerHour.rate
    assert rate.m_as("1/hour") == pytest.approx(4.0)
    # the catalog's own key: 0.385 kgCO2e/kWh (Touvron et al. 2023)
    assert Infrastructure.Grids.US_AVG.carbon_intensity_g_kwh == pytest.approx(385.0)
    assert Scenarios.Workloads.GoogleSearchesPerDay == pytest.approx(8.5e9)
    # 4,186 J/(kg K) x 1 kg x 80 K
    assert Scenarios.EnergyAnchors.BoilingWater.m_as("J") == pytest.approx(4186 * 80, rel=1e-3)
    assert Literature.Training.MfuInferenceBatched == pytest.approx(0.4)


def test_datasets():
    imagenet = Datasets.ImageNet
    assert imagenet.training_examples.m_as("") == 1_281_167  # Russakovsky et al. 2015
    assert (imagenet.image_width, imagenet.image_height, imagenet.image_channels) == (224, 224, 3)
    assert Datasets.CIFAR10.num_classes == 10 and Datasets.MNIST.image_channels == 1


def test_frontier_application_and_literature_groups():
    from mlsys import Applications

    frontier = Applications.Frontier
    assert frontier.system.total_accelerators == 8192  # 1,024 DGX H100 nodes x 8
    assert frontier.sla_latency.m_as("ms") == pytest.approx(500)
    with pytest.raises(ValueError, match="system"):
        frontier.evaluate()  # a cluster step is not a single-device roofline
    # ring all-reduce moves 2(N-1)/N of the message: 2 in the large-N limit
    assert Literature.Communication.RingAllreduceFactor == 2
    assert Literature.Energy.EffGpuPjFlop == pytest.approx(10.0)
    assert Infrastructure.Grids.Poland.carbon_intensity_g_kwh == pytest.approx(820.0)
    assert Infrastructure.Grids.Poland.sources["carbon_intensity_g_kwh"]["kind"] == "estimate"


def test_book_keys_and_meanings():
    import warnings

    import mlsys.formulas as formulas

    # NVIDIA H100 SXM datasheet: FP32 (CUDA cores) 67 TFLOPS: the book's "fp32_cuda"
    h100 = Hardware.Cloud.H100
    assert h100.compute.precision_flops["fp32_cuda"].m_as("1/s") == pytest.approx(67e12)
    # the book's US average is 429 g/kWh: Patterson et al. (2021)'s 2020 U.S. factor
    assert Infrastructure.Grids.US_Avg.carbon_intensity_g_kwh == pytest.approx(429.0)
    # the older chapters' tree all-reduce is the book's binomial tree:
    # 2 ceil(log2 256) (alpha + M/beta) = 16 (5 us + 1e9/50e9 s) = 0.32008 s
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        tree = formulas.calc_tree_allreduce_time(1e9, 256, 50e9, 5e-6)
    assert float(tree) == pytest.approx(16 * (5e-6 + 1e9 / 50e9))


def test_hardware_the_books_tiers_list():
    # Jouppi et al. (2017), Table 2: TPU v1, 92 TOPS, 34 GB/s -> ridge 92e12 / 34e9 = 2,706
    v1 = Hardware.Cloud.TPUv1
    assert v1.ridge_point().m_as("flop/byte") == pytest.approx(92e12 / 34e9)
    # AMD MI250X: 383 TFLOPs FP16 over 3.2 TB/s
    assert Hardware.Cloud.MI250X.ridge_point().m_as("flop/byte") == pytest.approx(383 / 3.2)
    for tier, name in (("Cloud", "Gaudi3"), ("Tiny", "nRF52840"), ("Workstation", "MacBookM3Max")):
        device = getattr(getattr(Hardware, tier), name)
        assert device.sources["peak_flops"]["kind"] == "estimate"  # as the book states it


def test_regions_take_their_cooling_tiers_facility():
    grids = Infrastructure.Grids
    assert grids.Poland.pue == Infrastructure.FacilityCooling.Legacy.pue
    assert grids.Quebec.wue == Infrastructure.FacilityCooling.LiquidCooled.wue == 0.0
    site = Infrastructure.Datacenters.Quebec_Hydro
    assert site.pue == pytest.approx(1.06) and site.grid is grids.Quebec


def test_workstation_application():
    from mlsys import Applications

    work = Applications.Workstation
    assert work.system.book_name == "MacBookM3Max"
    assert work.sla_latency.m_as("ms") == pytest.approx(100)


def test_engine_takes_the_books_training_keywords():
    from mlsys import Engine

    train = Engine.solve(Models.Language.Llama3_8B, Hardware.Cloud.H100, batch_size=32,
                         is_training=True)  # fmt: skip
    infer = Engine.solve(Models.Language.Llama3_8B, Hardware.Cloud.H100, batch_size=32)
    # a training step does forward and backward: about 3x the forward FLOPs (6ND vs 2ND)
    ratio = train.latency_compute.m_as("s") / infer.latency_compute.m_as("s")
    assert 2.5 < ratio < 3.5
    with pytest.raises(ValueError, match="zero_stage"):
        Engine.solve(Models.Language.Llama3_8B, Hardware.Cloud.H100, zero_stage=3)


def test_ridge_point_in_the_books_counts_and_h100_storage():
    from mlsys.constants import byte, flop

    h100 = Hardware.Cloud.H100
    # 989.4 TFLOP/s dense BF16 over 3.35 TB/s
    assert h100.ridge_point().m_as(flop / byte) == pytest.approx(989.4e12 / 3.35e12, rel=1e-3)
    assert h100.storage.bandwidth.m_as("GB/s") == pytest.approx(7.0)  # one Gen4 NVMe drive


def test_sm_level_figures_and_horowitz_adds():
    h100 = Hardware.Cloud.H100
    assert h100.compute.sm_count == 132  # H100 SXM5: 132 SMs
    # 132 SMs x 256 KB of registers = 33 MiB on the die (H100 whitepaper, Table 3)
    total = h100.compute.sm_count * h100.memory.register_file_per_sm
    assert total.m_as("MiB") == pytest.approx(132 * 256 / 1024)
    assert Hardware.Tech.Op.AddFp32.energy.m_as("pJ") == pytest.approx(0.9)  # Horowitz 2014
    # an fp32 add costs about a quarter of an fp32 multiply-add (0.9 vs 3.7 pJ)
    fma = Hardware.Tech.Op.FlopFp32.energy.m_as("pJ/flop_count")
    assert Hardware.Tech.Op.AddFp32.energy.m_as("pJ") / fma == pytest.approx(0.9 / 3.7)


def test_storage_tiers_sit_below_their_pcie_link():
    storage = Hardware.Tech.Storage
    # an x4 drive's ceiling: 4 lanes x GT/s x 128/130 coding / 8 bits per byte
    gen3_link, gen5_link = 4 * 8e9 * 128 / 130 / 8, 4 * 32e9 * 128 / 130 / 8  # 3.94, 15.75 GB/s
    gen3 = storage.NvmeGen3.bandwidth.m_as("B/s")
    gen4 = storage.NvmeGen4.bandwidth.m_as("B/s")
    gen5 = storage.NvmeGen5.bandwidth.m_as("B/s")
    assert (gen3, gen5) == (pytest.approx(3.5e9), pytest.approx(14e9))
    assert gen3 < gen3_link and gen5 < gen5_link
    assert gen3 < gen4 < gen5 and gen5 / gen3 == pytest.approx(4.0)  # 2016 -> 2024: 4x
    assert storage.NvmeGen5.sources["bandwidth"]["kind"] == "standard"


def test_host_dram_tier_and_the_hbm_cliff():
    host = Hardware.Tech.Storage.HostDram.bandwidth
    assert host.m_as("GB/s") == pytest.approx(200)  # the book's host-DRAM tier
    # H100 SXM HBM3 3.35 TB/s over 200 GB/s: the ~17x cliff the storage chapter prints
    ratio = (Hardware.Cloud.H100.memory.bandwidth / host).m_as("")
    assert ratio == pytest.approx(3350 / 200)
    assert host.m_as("GB/s") / Hardware.Tech.Storage.SystemMemory.bandwidth.m_as("GB/s") == 4
    assert Hardware.Tech.Storage.HostDram.sources["bandwidth"]["kind"] == "estimate"


def test_enclave_dispatch_tax():
    sgx = Hardware.Cloud.IntelSGX
    assert sgx.dispatch_tax.m_as("ms") == pytest.approx(5)
    # a model past the 128 MB EPC pages through the enclave: the book's x100 penalty
    assert (100 * sgx.dispatch_tax).m_as("s") == pytest.approx(0.5)
    assert sgx.sources["dispatch_tax"]["kind"] == "estimate"
    with pytest.raises(AttributeError):
        Hardware.Mobile.iPhone15Pro.dispatch_tax  # no cited figure, no guess


def test_capacity_lead_times():
    cap = Infrastructure.Capacity
    assert (cap.GpuLeadTimeMonths, cap.SubstationLeadTimeMonths) == (6, 24)
    assert cap.sources["GridInterconnectionQueueGw"]["kind"] == "estimate"


def test_switch_asic_capacities_are_exact_in_gbps():
    # The book's SwitchFabric holds 51,200 and 102,400 Gbps (Broadcom Tomahawk 5 and 6
    # classes); its next-generation paragraph checks 102.4 Tb/s == 64 ports of 1.6 Tb/s
    # with ==, so the capacity must read back exactly in Gb/s and Tb/s.
    from mlsys.constants import Gbps

    asic = Systems.SwitchFabric.SwitchAsic102T4
    assert asic.m_as(Gbps) == 102_400.0
    assert asic.m_as("Tbit/s") == 102.4
    ports = asic.m_as(Gbps) / Systems.Fabrics.Ethernet_1P6T.bandwidth.m_as(Gbps)
    assert ports == 64.0
    assert Systems.SwitchFabric.SwitchAsic51T2.m_as(Gbps) == 51_200.0
    # a 51.2 Tb/s switch has 128 ports of 400G, the optical-dividend example's count
    assert int(Systems.SwitchFabric.SwitchAsic51T2.m_as(Gbps) / 400) == 128


def test_book_unit_names_on_the_registry():
    # The book's units module defines KB, MS, US, NS and Gbps in its registry, and its
    # network chapter writes ``10 * ureg.KB`` (the HDR-vs-NDR latency fallacy) and
    # ``.m_as(US)``.
    from mlsys.constants import US, ureg
    from mlsys.core.units import ureg as mlsys_ureg

    assert (10 * ureg.KB).m_as("byte") == 10_000.0
    assert (5 * ureg.MS).m_as("second") == pytest.approx(0.005)  # not megasiemens
    assert (2 * ureg.US).m_as("ns") == pytest.approx(2000.0)
    assert (3 * ureg.NS).m_as("ps") == pytest.approx(3000.0)
    assert (400 * ureg.Gbps).m_as("GB/s") == pytest.approx(50.0)  # not gigabaud
    # 10 KB over HDR's 200 Gb/s (25 GB/s) is 0.4 us on the wire
    hdr = Systems.Fabrics.InfiniBand_HDR.bandwidth
    assert (10 * ureg.KB / hdr).m_as(US) == pytest.approx(0.4)
    # names the registry already spells keep mlsys's meaning (KB is its decimal
    # kilobyte), and mlsys's own registry is untouched: MS stays a megasiemens there
    assert ureg.flop == mlsys_ureg.flop
    assert ureg.picojoule == mlsys_ureg.picojoule
    assert (1 * ureg.GB).m_as("byte") == 1e9
    assert ureg.KB == mlsys_ureg.KB
    assert mlsys_ureg.MS == mlsys_ureg.megasiemens
    assert ureg("3 GB").m_as("byte") == 3e9


def test_engine_prices_a_precision_without_a_peak_at_the_16_bit_peak():
    # The book's quantization chapter solves ResNet-50 in INT8 on a V100 (no INT8 peak in
    # NVIDIA's V100 datasheet): its Engine warns "Precision ... not in ..." and runs the
    # compute at the default 16-bit peak, 125 TFLOP/s, with the weights at 1 byte each.
    from mlsys import Engine
    from mlsys.core.catalog import Hardware as Catalog

    resnet, v100 = Models.Vision.ResNet50, Hardware.Cloud.V100
    fp32 = Engine.solve(resnet, v100, batch_size=1, precision="fp32")
    with pytest.warns(UserWarning, match="Precision.*not in"):
        int8 = Engine.solve(resnet, v100, batch_size=1, precision="int8")
    # 25.6 M parameters: 102.2 MB at 4 bytes, 25.6 MB at 1 byte
    assert int8.memory_footprint.m_as("MB") == pytest.approx(25.557, rel=1e-3)
    assert fp32.memory_footprint.m_as("MB") / int8.memory_footprint.m_as("MB") == pytest.approx(4.0)
    assert fp32.latency.m_as("s") / int8.latency.m_as("s") > 1.0  # the book's guard
    # the catalog entry is not changed: mlsys's own roofline keeps refusing INT8 on it
    assert "int8" not in Catalog.get("V100").peak_flops
    with pytest.raises(ValueError, match="precision"):
        Catalog.get("V100").peak_flops_s("int8")
