"""One rule serves ``<field>_<unit>`` on every view, for names nobody listed.

The textbook reads ``bandwidth_gbs``, ``latency_us`` and ``mttf_hours``; the rule
(:mod:`mlsys.compat.rules`) parses the suffix against the unit registry, so made-up
names in the same pattern must work too. Each expected value is the field converted by
hand in the test.
"""

from __future__ import annotations

import pytest

from mlsys.compat import Systems
from mlsys.compat.rules import parse_unit_suffix, registry_unit, unit_suffix_value
from mlsys.core.catalog import Fabrics, Hardware
from mlsys.core.units import Q_, ureg


@pytest.mark.parametrize(
    ("suffix", "dimension", "unit"),
    [
        ("gbs", "byte/s", "GB/s"),  # lower-case b is a byte: the book's bandwidth_gbs
        ("tbs", "byte/s", "TB/s"),
        ("gbps", "byte/s", "Gbit/s"),
        ("gb_per_s", "byte/s", "GB/s"),
        ("us", "s", "microsecond"),
        ("ms", "s", "millisecond"),
        ("hours", "s", "hour"),
        ("days", "s", "day"),
        ("mib", "byte", "MiB"),
        ("gb", "byte", "GB"),
        ("mb", "byte", "MB"),  # never a millibyte
        ("w", "W", "W"),
        ("kw", "W", "kW"),
        ("mw", "W", "mW"),  # the prefix keeps the case written
        ("tflops", "flop/s", "TFLOP/s"),
        ("pj", "J", "pJ"),
    ],
)
def test_suffix_parses_to_the_registry_unit(suffix, dimension, unit):
    parsed = parse_unit_suffix(suffix, dimension)
    assert Q_(1.0, parsed).m_as(unit) == pytest.approx(1.0)  # the same amount (Gbaud = Gbit/s)


def test_a_suffix_of_another_dimension_is_refused():
    with pytest.raises(ValueError, match="gbs"):
        parse_unit_suffix("gbs", "byte")  # never "GBs", the plural of GB


def test_book_names_on_fabrics():
    ndr = Systems.Fabrics.InfiniBand_NDR
    per_direction = Fabrics.IB_NDR.bandwidth  # 400 Gbit/s NIC = 50 GB/s per GPU
    assert ndr.bandwidth_gbs == pytest.approx(per_direction.m_as("GB/s"))
    assert ndr.bandwidth_gbs == pytest.approx(400 / 8)
    assert ndr.latency_us == pytest.approx(Fabrics.IB_NDR.latency.m_as("us"))


def test_made_up_names_in_the_pattern():
    ndr = Systems.Fabrics.InfiniBand_NDR
    assert ndr.latency_ms == pytest.approx(Fabrics.IB_NDR.latency.m_as("ms"))
    assert ndr.bandwidth_mibs == pytest.approx(50e9 / 2**20)
    h100 = Hardware.Cloud.H100
    assert h100.tdp_kw == pytest.approx(Hardware.H100.tdp.m_as("kW"))
    assert h100.memory_mib == pytest.approx(Hardware.H100.memory_capacity.m_as("MiB"))
    assert h100.memory_tbs == pytest.approx(3.35)  # H100 SXM HBM3: 3.35 TB/s
    gpu = Systems.Reliability.Gpu
    assert gpu.mttf_days == pytest.approx(float(gpu.mttf_hours) / 24)
    pod = Systems.Pods.TPUv4_4096
    assert pod.memory_gib == pytest.approx(pod.memory.m_as("GiB"))


def test_a_unit_named_field_serves_other_units():
    class Rack:
        power_kw = 70.0

    assert unit_suffix_value(Rack(), "power_w") == pytest.approx(70_000.0)


def test_unknown_names_still_fail():
    with pytest.raises(AttributeError):
        Systems.Fabrics.InfiniBand_NDR.bandwidth_parsecs
    with pytest.raises(AttributeError):
        Systems.Fabrics.InfiniBand_NDR.colour_gbs


@pytest.mark.parametrize(
    ("name", "unit"),
    [("MILLISECOND", "ms"), ("microsecond", "us"), ("EFLOPs", "EFLOP"), ("KiB", "KiB")],
)
def test_registry_unit_names(name, unit):
    assert registry_unit(name) == ureg.Unit(unit)


def test_every_unit_name_is_the_registrys_unit():
    import mlsys.constants as constants

    # the book's arithmetic: counts are plain numbers, so 1 EFLOP is 10^6 TFLOPs
    assert (1 * constants.EFLOP).m_as(constants.TFLOPs) == pytest.approx(1e6)
    assert (Q_(1, "hour") / (1 * constants.MILLISECOND)).m_as("") == pytest.approx(3.6e6)
    assert (1 * constants.Tparam).m_as(constants.Bparam) == pytest.approx(1e3)
    assert registry_unit("GPT3_PARAMS") is None


def test_platform_envelope_fields():
    from mlsys.compat import Platforms

    # the book's smartphone: 8 GB of RAM; its microcontroller: 512 KiB
    assert Platforms.Mobile.ram_gb == pytest.approx(8.0)
    assert Platforms.Tiny.ram_kib == pytest.approx(512.0)
    assert Platforms.Tiny.ram_bytes == pytest.approx(512 * 1024)


def test_core_entries_answer_the_rule_too():
    from mlsys.core.catalog import Grids

    # 0.385 kgCO2e/kWh (Touvron et al. 2023) is 385 g/kWh
    assert unit_suffix_value(Grids.US_AVG, "carbon_intensity_g_kwh") == pytest.approx(385.0)


# suffixes to try per dimension, written as the book writes them (lower case, no slash)
_SUFFIXES = {
    "[information]": ("gb", "mib"),
    "[information] / [time]": ("gbs", "tbs"),
    "[time]": ("ms", "hours"),
    "[length] ** 2 * [mass] / [time] ** 3": ("w", "kw"),
    "[length] ** 2 * [mass] / [time] ** 2": ("j", "kwh"),
    "1 / [time]": ("tflops",),
}


def _views():
    """Every member of every textbook registry group mlsys serves (built on access)."""
    from mlsys import Datasets, Hardware, Infrastructure, Models, Platforms, Scenarios
    from mlsys.compat import Systems

    groups = [getattr(Hardware, t) for t in ("Cloud", "Edge", "Mobile", "Tiny", "Workstation")]
    groups += [getattr(Models, f) for f in ("Vision", "Language", "Tiny", "StateSpace")]
    groups += [getattr(Systems, g) for g in ("Fabrics", "Nodes", "Clusters", "Pods")]
    groups += [getattr(Infrastructure, g) for g in ("Racks", "FacilityCooling", "Datacenters")]
    groups += [Datasets]
    for group in groups:
        for name in group.list():
            yield f"{group._name}.{name}", getattr(group, name)
    for name in ("Cloud", "Edge", "Mobile", "Tiny"):
        yield f"Platforms.{name}", getattr(Platforms, name)
    for name in Scenarios.list():
        yield f"Scenarios.{name}", getattr(Scenarios, name)


def test_every_quantity_field_of_every_view_answers_the_rule():
    checked = 0
    for path, view in _views():
        fields = dict(getattr(view, "__dict__", {}))
        fields.update({n: getattr(view, n) for n in getattr(view, "_members", {})})
        for field, value in fields.items():
            if field.startswith("_") or not hasattr(value, "dimensionality"):
                continue
            from mlsys.core.units import to_book_counts

            dim = str(to_book_counts(value).dimensionality)
            for suffix in _SUFFIXES.get(dim, ()):
                unit = parse_unit_suffix(suffix, value)
                got = unit_suffix_value(view, f"{field}_{suffix}")
                want = (to_book_counts(value) / to_book_counts(Q_(1.0, unit))).m_as("")
                assert got == pytest.approx(want, rel=1e-12), f"{path}.{field}_{suffix}"
                checked += 1
    assert checked > 300  # every capacity, bandwidth, power, latency ... of every entry
