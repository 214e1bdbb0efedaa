"""The book's formulas validate like the core: impossible inputs raise typed errors.

They are the same cited formulas behind the book's names (:mod:`mlsys.formulas`,
:mod:`mlsys.compat.physics`), so an input the core refuses is refused here too, with a
:class:`mlsys.core.errors.ParameterError` (an ``MlsysError`` and a ``ValueError``)
naming the parameter, never a silently wrong number.
"""

from __future__ import annotations

import pytest

import mlsys.compat.physics as physics
import mlsys.formulas as formulas
from mlsys.core.errors import MlsysError, ParameterError
from mlsys.core.units import Q_

MODULES = (formulas, physics)

IMPOSSIBLE = [
    # (function, args, parameter named in the error)
    ("calc_pipeline_bubble", (0, 8), "n_stages"),  # was -0.143
    ("calc_pipeline_bubble", (4, 0), "n_microbatches"),
    ("calc_pipeline_bubble", (4, 2.5), "n_microbatches"),
    ("calc_pipeline_bubble", (4, 8, 0), "v_stages"),
    ("calc_mtbf_cluster", (1000, 0), "n_components"),  # was inf
    ("calc_mtbf_cluster", (0, 8), "component_mtbf_hours"),
    ("calc_effective_flops", (1e15, 1.5, 1, 1), "mfu"),  # an MFU of 150%
    ("calc_effective_flops", (1e15, 0.5, 1.2, 1), "scaling_eff"),
    ("calc_effective_flops", (1e15, 0.5, 1, -0.1), "goodput_ratio"),
    ("calc_checkpoint_size", ("70e9",), "n_params"),  # text is not a count
    ("calc_checkpoint_size", (True,), "n_params"),
    ("calc_availability_stacked", (1.2, 2), "single_availability"),
    ("calc_availability_stacked", (0.99, 0), "n_replicas"),
    ("calc_amdahls_speedup", (0.9, 0), "s"),
    ("calc_failure_probability", (0, 10), "mtbf"),
    ("calc_young_daly_interval", ("60", 3600), "checkpoint_cost_s"),
]


@pytest.mark.parametrize("module", MODULES, ids=lambda m: m.__name__)
@pytest.mark.parametrize(("name", "args", "param"), IMPOSSIBLE)
def test_impossible_input_raises_the_core_error(module, name, args, param):
    with pytest.raises(ParameterError) as info:
        getattr(module, name)(*args)
    assert isinstance(info.value, MlsysError) and isinstance(info.value, ValueError)
    assert param in str(info.value)


@pytest.mark.parametrize(
    ("name", "args", "param"),
    [
        ("calc_ring_allreduce_time", (1e9, 0, 50e9, 5e-6), "n_gpus"),
        ("calc_tree_allreduce_time", (1e9, 8, 0, 5e-6), "bandwidth_bytes_s"),
        ("calc_transformer_training_flops", ("7e9", 1e12), "n_params"),
        ("dTime", (1e23, 0, 312e12, 0.4), "num_devices"),
        ("dTime", (1e23, 8, 312e12, 1.4), "efficiency_eta"),
        ("calc_queue_latency_mmc", (8, 0, 1), "service_rate_hz"),
        ("calc_paged_kv_cache_size", (32, 32, 128, 1000, 1, 0), "page_size_tokens"),
        ("calc_constraint_propagation_factor", (3, 1), "stage_to"),
        ("calc_two_proportion_sample_size", (1.5, 0.01), "baseline_rate"),
        ("calc_population_stability_index", ([0.5, 0.5], [1.0]), "actual"),
    ],
)
def test_newest_era_names_validate_too(name, args, param):
    with pytest.raises(ParameterError, match=param):
        getattr(physics, name)(*args)


def test_mtbf_cluster_is_the_same_for_a_number_and_a_quantity():
    # 50,000 h per GPU over 8,192 GPUs: 50,000 / 8,192 = 6.1035 h, whatever the unit
    expected_h = 50_000 / 8_192
    for module in MODULES:
        as_number = module.calc_mtbf_cluster(50_000, 8_192)
        for given in (Q_(50_000, "hour"), Q_(50_000 * 60, "minute"), Q_(50_000 / 24, "day")):
            as_quantity = module.calc_mtbf_cluster(given, 8_192)
            assert as_quantity.m_as("hour") == pytest.approx(expected_h, rel=1e-12)
        assert float(as_number.m_as("hour")) == pytest.approx(expected_h, rel=1e-12)
