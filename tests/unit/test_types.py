"""Typed models: dimension checks that name the field, derived fields, SI accessors."""

import pytest

from mlsys import Q_, Accelerator, Fabric, Fleet, Node, TransformerWorkload
from mlsys.core.errors import MlsysError, ParameterError
from mlsys.core.types import ConfigurationError, GridProfile


def _accelerator(**override):
    spec = dict(
        name="X1",
        peak_flops={"bf16": "1000 TFLOP/s", "fp8": "2000 TFLOP/s"},
        memory_capacity="80 GB",
        memory_bandwidth="4 TB/s",
        scaleup_bandwidth="450 GB/s",
        tdp="700 W",
        sparsity_speedup=2.0,
    )
    spec.update(override)
    return Accelerator(**spec)


def test_accelerator_si_accessors():
    a = _accelerator()
    assert a.peak_flops_s("bf16") == 1e15
    assert a.peak_flops_s("bfloat16", sparse=True) == 2e15
    assert a.memory_bytes == 80e9 and a.memory_bandwidth_Bps == 4e12
    # Ridge point = 1e15 / 4e12 = 250 FLOP/byte (Williams et al. 2009).
    assert a.ridge_point("bf16") == pytest.approx(250.0)
    assert a.precisions == ("bf16", "fp8")


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("memory_bandwidth", "80 GB", "memory_bandwidth"),
        ("memory_capacity", "3 TB/s", "memory_capacity"),
        ("tdp", "5 kWh", "tdp"),
        ("memory_bandwidth", -1, "memory_bandwidth"),
        ("peak_flops", {"fp7": "1 TFLOP/s"}, "fp7"),
        ("peak_flops", {}, "at least one precision"),
        ("sparsity_speedup", 0.5, "sparsity_speedup"),
    ],
)
def test_bad_accelerator_fields_are_named(field, value, fragment):
    with pytest.raises(ConfigurationError) as info:
        _accelerator(**{field: value})
    assert fragment in str(info.value)
    assert isinstance(info.value, MlsysError) and isinstance(info.value, ValueError)


def test_missing_precision_lists_available():
    with pytest.raises(ParameterError, match="bf16, fp8"):
        _accelerator().peak_flops_s("int4")


def test_fleet_counts_accelerators():
    nvl = Fabric(name="nvl", kind="scale-up", bandwidth="450 GB/s", latency="2 us")
    ib = Fabric(name="ib", bandwidth="50 GB/s", latency="5 us", oversubscription=2.0)
    node = Node(name="n", accelerator=_accelerator(), accelerators_per_node=8, intra_fabric=nvl)
    fleet = Fleet(node=node, count=128, fabric=ib)
    assert fleet.total_accelerators == 1024
    assert ib.effective_bandwidth_Bps == pytest.approx(25e9)
    with pytest.raises(ConfigurationError, match="count"):
        Fleet(node=node, count=0, fabric=ib)


def test_transformer_defaults_follow_api_md():
    # API.md example: GPT-3 shape with defaults filled in.
    m = TransformerWorkload(
        name="custom",
        layers=96,
        hidden=12288,
        heads=96,
        kv_heads=None,
        ffn_hidden=None,
        vocab=51200,
        seq_len=2048,
        experts=1,
        experts_per_token=1,
    )
    assert (m.kv_heads, m.head_dim, m.ffn_hidden) == (96, 128, 4 * 12288)
    # Megatron Eq. 2: 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)) with V=51200, s=2048.
    l, h, V, s = 96, 12288, 51200, 2048
    eq2 = 12 * l * h**2 * (1 + 13 / (12 * h) + (V + s) / (12 * l * h))
    # Eq. 2 leaves out the final LayerNorm (gain and bias: 2h parameters); mlsys counts it.
    assert m.total_params == pytest.approx(eq2 + 2 * h, rel=1e-12)
    assert m.active_params_per_token == m.total_params
    # KV bytes per token, bf16: 2 * 96 layers * 96 heads * 128 dims * 2 bytes.
    assert m.kv_bytes_per_token("bf16") == 2 * 96 * 96 * 128 * 2


@pytest.mark.parametrize(
    ("kwargs", "fragment"),
    [
        (dict(layers=2, hidden=100, heads=3, vocab=10), "not divisible by heads"),
        (dict(layers=2, hidden=96, heads=12, kv_heads=5, vocab=10), "multiple of kv_heads"),
        (dict(layers=0, hidden=96, heads=12, vocab=10), "layers"),
        (
            dict(layers=2, hidden=96, heads=12, vocab=10, experts=2, experts_per_token=3),
            "exceeds experts",
        ),
        (dict(layers=2, hidden=96, heads=12, vocab=10, colour="red"), "colour"),
    ],
)
def test_bad_transformer_shapes(kwargs, fragment):
    with pytest.raises(ConfigurationError, match=fragment):
        TransformerWorkload(**kwargs)


def test_given_params_override_derived():
    m = TransformerWorkload(layers=2, hidden=64, heads=4, vocab=100, params=1e9)
    assert m.total_params == 1e9 and m.active_params_per_token == 1e9


def test_grid_profile_units():
    g = GridProfile(name="g", carbon_intensity=Q_(429, "gCO2e/kWh"), electricity_price=0.08)
    assert g.carbon_kg_per_kwh == pytest.approx(0.429)
    assert g.price_usd_per_kwh == pytest.approx(0.08)
    with pytest.raises(ConfigurationError, match="carbon_intensity"):
        GridProfile(name="g", carbon_intensity="0.4 kg/kWh")


def test_models_are_frozen_and_serialise():
    a = _accelerator()
    with pytest.raises(Exception):
        a.tdp = Q_(1, "W")
    dumped = a.model_dump(mode="json")
    assert Q_(dumped["memory_bandwidth"]) == Q_(4, "TB/s")
    assert Accelerator(**dumped).memory_bandwidth_Bps == 4e12
