"""The book's solver calls run mlsys's solvers on the catalog objects its views show."""

from __future__ import annotations

import pytest

import mlsys
from mlsys import Fleet, Hardware, Models, Systems
from mlsys.compat.solvers import DistributedModel, ServingModel, SingleNodeModel, as_catalog

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_views_become_catalog_objects():
    assert as_catalog(Models.Language.Llama3_8B) is Models.Language.Llama3_8B.entry
    cluster = as_catalog(Systems.Clusters.Research_256)
    assert isinstance(cluster, Fleet) and cluster.total_accelerators == 256  # 32 x 8
    assert as_catalog(Hardware.Cloud.H100) is mlsys.Hardware.H100
    assert as_catalog(3) == 3


def test_distributed_with_the_books_arguments_equals_mlsys_on_the_catalog():
    book = DistributedModel().solve(
        Models.Language.Llama3_8B, Systems.Clusters.Research_256, batch_size=1024,
        seq_len=2048, precision="fp16", efficiency=0.45, tp_size=8, pp_size=4,
        microbatch_count=16, zero_stage=1, overlap_comm=False,
    )  # fmt: skip
    ours = mlsys.DistributedModel().solve(
        mlsys.Models.Llama3_8B, as_catalog(Systems.Clusters.Research_256), batch_size=1024,
        seq_len=2048, precision="fp16", efficiency=0.45, tp_size=8, pp_size=4,
        microbatch_count=16, zero_stage=1, overlap=False,
    )  # fmt: skip
    assert book.step_time.m_as("s") == pytest.approx(ours.step_time.m_as("s"), rel=1e-12)
    with pytest.raises(ValueError, match="overlap"):
        DistributedModel().solve(
            Models.Language.Llama3_8B, Systems.Clusters.Research_256, overlap=True,
            overlap_comm=True,
        )  # fmt: skip


def test_serving_seq_len_is_the_prompt():
    book = ServingModel().solve(Models.Language.Llama3_8B, Hardware.Cloud.H100, seq_len=4096,
                                batch_size=32, precision="fp16")  # fmt: skip
    ours = mlsys.ServingModel().solve(mlsys.Models.Llama3_8B, mlsys.Hardware.H100,
                                      prompt_len=4096, batch_size=32, precision="fp16")  # fmt: skip
    assert book.ttft.m_as("s") == pytest.approx(ours.ttft.m_as("s"), rel=1e-12)


def test_book_serving_prices_a_model_that_does_not_fit():
    # the book's H100-vs-H200 comparison: Llama-2 70B in fp16 (138 GB) on one device
    model = Models.Language.Llama2_70B
    h100 = ServingModel().solve(model, Hardware.Cloud.H100, seq_len=2048, batch_size=1)
    h200 = ServingModel().solve(model, Hardware.Cloud.H200, seq_len=2048, batch_size=1)
    assert (h100.feasible, h200.feasible) == (False, True)  # 80 GB vs 141 GB
    # decode is memory-bound: the speedup approaches the bandwidth ratio 4.8 / 3.35 = 1.43
    speedup = (h100.itl / h200.itl).m_as("")
    assert 1.3 < speedup < 4.8 / 3.35
    ours = mlsys.ServingModel().solve(mlsys.Models.Llama2_70B, mlsys.Hardware.H100,
                                      prompt_len=2048, batch_size=1)  # fmt: skip
    assert ours.itl is None  # mlsys's own solver keeps latencies for what fits


def test_single_node_on_a_book_device():
    res = SingleNodeModel().solve(Models.Tiny.DS_CNN, Hardware.Tiny.ESP32_S3)
    direct = mlsys.SingleNodeModel().solve(
        Models.Tiny.DS_CNN.as_workload(), Hardware.Tiny.ESP32_S3.as_accelerator()
    )
    assert res.latency.m_as("s") == pytest.approx(direct.latency.m_as("s"), rel=1e-12)


def test_placement_picks_the_cheapest_region_and_prices_it():
    from mlsys import Literature, PlacementOptimizer

    res = PlacementOptimizer().solve(
        Systems.Clusters.Frontier_8K, duration_days=3.0, regions=["US_Avg", "Quebec", "Iowa"],
        carbon_tax_per_ton=100.0, mfu=Literature.Training.MfuHigh,
    )  # fmt: skip
    assert res.best_region == "Quebec"  # hydro: 2 g/kWh at 0.04 USD/kWh
    q = res.regions["Quebec"]
    # total = energy x the region's price + tonnes x the tax
    assert q["total_usd"] == pytest.approx(q["energy_mwh"] * 1e3 * 0.04 + q["carbon_t"] * 100)
    us = res.regions["US_Avg"]  # no price in the catalog: the book's cloud 0.12 USD/kWh
    assert us["energy_cost_usd"] == pytest.approx(us["energy_mwh"] * 1e3 * 0.12)
    # 429 g/kWh (Patterson et al. 2021) over the same facility energy
    assert us["carbon_t"] == pytest.approx(us["energy_mwh"] * 0.429)
    assert res.objective_value == pytest.approx(q["total_usd"])
    with pytest.raises(ValueError, match="regions"):
        PlacementOptimizer().solve(Systems.Clusters.Frontier_8K, 3.0, regions=[])


def test_placement_defaults_are_the_books_regions_and_carbon_price():
    from mlsys.compat.solvers import PlacementOptimizer

    # the book's solve(fleet, duration_days) compares US_Avg, Quebec and Iowa at 100 USD/t
    default = PlacementOptimizer().solve(Systems.Clusters.Frontier_8K, 3.0)
    named = PlacementOptimizer().solve(
        Systems.Clusters.Frontier_8K, 3.0, regions=["US_Avg", "Quebec", "Iowa"],
        carbon_tax_per_ton=100.0,
    )  # fmt: skip
    assert sorted(default.regions) == ["Iowa", "Quebec", "US_Avg"]
    us = default.regions["US_Avg"]
    assert us["carbon_cost_usd"] == pytest.approx(us["carbon_t"] * 100.0)
    assert default.objective_value == pytest.approx(named.objective_value, rel=1e-12)
