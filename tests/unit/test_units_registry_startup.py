"""The mlsys unit registry starts faster than pint's and behaves exactly as pint's.

Issue 14 (a fresh interpreter to its first formatted catalog number in <= 0.3 s):
``mlsys.core.units._Registry`` reads pint's disk cache of derived units instead of
dropping it, builds pint's unit systems when they are first read, and names a one-word
unit without pint's expression tokenizer. Every pint default unit must keep working, so
each test compares the registry with pint's own, uncached registry of the same
definitions (the reference: what ``pint.UnitRegistry`` gives with no disk cache).
"""

from __future__ import annotations

import pint
import pytest
from pint.facets.plain.registry import GenericPlainRegistry

from mlsys.core import units


@pytest.fixture(scope="module")
def reference() -> pint.UnitRegistry:
    ref = pint.UnitRegistry(units._definitions_text().splitlines())
    ref.formatter.default_format = "~P"  # as get_registry sets it
    return ref


@pytest.fixture(scope="module")
def cached(tmp_path_factory) -> pint.UnitRegistry:
    """A registry built through pint's disk cache, the second time (the cache is read)."""
    root = tmp_path_factory.mktemp("cache")
    units._new_registry(root)  # the first build writes pint's cache
    registry = units._new_registry(root)
    registry.formatter.default_format = "~P"
    assert type(registry) is units._Registry
    return registry


UNITS = ["meter", "W", "TB/s", "kgCO2e", "degC", "hour", "byte", "flop", "gallon", "Btu", "mph"]


@pytest.mark.parametrize("unit", UNITS)
def test_compatible_units_are_pints(unit, cached, reference):
    # pint 0.25 dropped the cache it read, so this was empty for "meter" (pint: 14 units).
    got = {str(u) for u in cached.get_compatible_units(unit)}
    assert got == {str(u) for u in reference.get_compatible_units(unit)}
    assert unit not in ("meter", "W", "hour") or len(got) > 5


@pytest.mark.parametrize("unit", UNITS)
def test_base_units_are_pints(unit, cached, reference):
    a = cached.Quantity(3.0, unit).to_base_units()
    b = reference.Quantity(3.0, unit).to_base_units()
    assert a.magnitude == pytest.approx(b.magnitude, rel=1e-15) and str(a.units) == str(b.units)


def test_unit_systems_are_built_when_first_read_and_equal_pints(tmp_path, reference):
    units._new_registry(tmp_path)
    registry = units._new_registry(tmp_path)
    pending = registry._systems._pending
    assert len(pending) == len(dir(reference.sys)) == 7  # mks, cgs, imperial, US ...
    assert registry.Quantity(3.35, "TB/s").m_as("GB/s") == pytest.approx(3350.0)
    assert len(pending) == 7  # a conversion needs no system
    registry.Quantity(1.0, "kg").to_base_units()  # needs the default system, mks, alone
    assert 0 < len(pending) < 7 and "mks" in dict.keys(registry._systems)
    assert sorted(dir(registry.sys)) == sorted(dir(reference.sys)) and not pending
    assert list(registry._systems) == list(reference._systems)  # pint's order, too
    for name in dir(reference.sys):
        mine, theirs = getattr(registry.sys, name), getattr(reference.sys, name)
        assert mine.base_units == theirs.base_units, name
        assert set(mine.members) == set(theirs.members), name
    # a non-default system in use: 1 m is 1.0936 yd in imperial (1 yd = 0.9144 m exactly)
    registry.default_system = "imperial"
    yd = registry.Quantity(1.0, "meter").to_base_units()
    assert str(yd.units) == "yard" and yd.magnitude == pytest.approx(1 / 0.9144, rel=1e-15)


def test_a_system_defined_later_is_built_at_once(cached):
    cached.load_definitions(["@system fast2_test using international", "    meter", "@end"])
    assert "fast2_test" in dir(cached.sys)
    with pytest.raises(ValueError, match="already present"):
        cached.load_definitions(["@system fast2_test using international", "    meter", "@end"])


def test_one_word_parses_exactly_as_pints_parser(cached):
    # Every unit name, alias and symbol, prefixed names, unknown and special words.
    words = [w for w in list(cached._units) if units._one_word(w)]
    words += [p + n for p in ("kilo", "tera", "centi", "k", "M", "T", "m") for n in ("gram", "B")]
    words += ["dimensionless", "nan", "NaN", "no_such_unit", "in", "pi", "Tflop"]
    assert len(words) > 900
    for word in words:
        for case_sensitive in (True, False):
            try:
                mine = cached._parse_units_as_container(word, True, case_sensitive)
            except Exception as exc:  # the error must be pint's too
                mine = type(exc)
            try:
                pints = GenericPlainRegistry._parse_units_as_container(
                    cached, word, True, case_sensitive
                )
            except Exception as exc:
                pints = type(exc)
            assert mine == pints, word
            if not isinstance(mine, type):
                assert list(mine.items()) == list(pints.items()), word


def test_a_users_preprocessor_still_sees_every_word(tmp_path):
    registry = units._new_registry(tmp_path)
    registry.preprocessors.append(lambda text: text.replace("gigawidget", "GB"))
    assert registry.Quantity(1, "gigawidget").m_as("MB") == 1000


def test_the_pickled_registry_is_the_registry_pint_builds_from_text(tmp_path, reference):
    units._new_registry(tmp_path)  # parses the text, pickles definitions and cache
    (pickled,) = tmp_path.glob("units-*.pickle")
    registry = units._new_registry(tmp_path)  # built from the pickle
    assert set(registry._units) <= set(reference._units)  # pint adds prefixed names it met
    assert set(registry._prefixes) == set(reference._prefixes)
    assert set(registry._dimensions) == set(reference._dimensions)
    assert registry._defaults == reference._defaults
    assert set(registry._groups) == set(reference._groups)
    for unit in ("inch", "kWh", "TFLOP/s", "GiB", "tCO2e", "USD", "token/s"):
        assert (
            registry.Quantity(1.0, unit).dimensionality
            == reference.Quantity(1.0, unit).dimensionality
        )
    # contexts are built when first used, and then convert as pint's do (spectroscopy:
    # 500 nm light is c / 500 nm = 599.585 THz)
    assert registry._contexts._pending and not dict.keys(registry._contexts)
    with registry.context("sp"):
        assert registry.Quantity(500.0, "nm").m_as("THz") == pytest.approx(299792.458 / 500)
    assert list(registry._contexts) == list(reference._contexts)
    for name, context in reference._contexts.items():
        mine = registry._contexts[name]
        assert (mine.name, mine.aliases, mine.defaults) == (
            context.name,
            context.aliases,
            context.defaults,
        )
        assert set(mine.funcs) == set(context.funcs), name
    pickled.write_bytes(pickled.read_bytes()[:100])  # cut short: rebuilt from the text
    again = units._new_registry(tmp_path)
    assert again.Quantity(1.0, "inch").m_as("cm") == pytest.approx(2.54)
    assert units._load_preloaded(pickled) is not None  # and pickled whole again


def test_no_cache_directory_builds_the_same_registry(reference):
    bare = units._new_registry(None)
    bare.formatter.default_format = "~P"  # as get_registry sets it, and the reference
    assert type(bare) is units._Registry
    assert sorted(dir(bare.sys)) == sorted(dir(reference.sys))
    got = {str(u) for u in bare.get_compatible_units("hour")}
    assert got == {str(u) for u in reference.get_compatible_units("hour")} and "d" in got


def test_edited_definitions_are_a_new_pickle(tmp_path, monkeypatch):
    units._new_registry(tmp_path)
    (before,) = tmp_path.glob("units-*.pickle")
    own = tmp_path / "units_definitions.txt"
    own.write_text(units._OWN_DEFINITIONS.read_text("utf-8") + "\nfast2_widget = 3 byte\n", "utf-8")
    monkeypatch.setattr(units, "_OWN_DEFINITIONS", own)
    registry = units._new_registry(tmp_path)  # not the pickle of the earlier definitions
    assert registry.Quantity(2, "fast2_widget").m_as("byte") == 6
    (after,) = tmp_path.glob("units-*.pickle")  # the earlier one is replaced
    assert after != before
    assert units._new_registry(tmp_path).Quantity(1, "fast2_widget").m_as("bit") == 24


def test_the_restored_tables_are_the_tables_pints_adders_fill(tmp_path, reference):
    # The pickle holds the tables pint's adders filled from the definitions; a registry
    # restored from it must hold what pint's own registry of the same text holds.
    units._new_registry(tmp_path)
    restored = units._new_registry(tmp_path)
    assert restored._systems._pending  # built from the pickle, not from the text
    assert dict(restored._units.maps[-1]).keys() <= dict(reference._units.maps[-1]).keys()
    for name, definition in restored._units.maps[-1].items():
        assert definition == reference._units.maps[-1][name], name
    for table in ("_dimensions", "_prefixes", "_suffixes", "_defaults", "_base_units"):
        assert getattr(restored, table) == getattr(reference, table), table
    casei = {k: v for k, v in reference._units_casei.items() if v}
    assert {k: v for k, v in restored._units_casei.items() if v}.items() <= casei.items()
    assert list(restored._groups) == list(reference._groups)
    for name, group in reference._groups.items():
        mine = restored._groups[name]
        assert type(mine) is restored.Group and mine._REGISTRY is restored
        assert mine.members == group.members, name
        assert (mine._used_groups, mine._used_by) == (group._used_groups, group._used_by)
    assert restored.get_group("root") is restored._groups["root"]
