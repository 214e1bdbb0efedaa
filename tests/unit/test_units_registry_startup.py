"""The mlsys unit registry starts faster than pint's and behaves exactly as pint's.

``mlsys.core.units._Registry`` is parsed from the definitions text in every process (no
cache), builds pint's table of units by dimension, its unit systems and its contexts
when they are first read, and names a one-word unit without pint's expression
tokenizer. Every pint default unit must keep working, so each test compares the registry
with pint's own registry of the same definitions (the reference).
"""

from __future__ import annotations

import json

import pint
import pytest
from pint.facets.plain.registry import GenericPlainRegistry

from mlsys.core import _units_parsed, units


@pytest.fixture(scope="module")
def reference() -> pint.UnitRegistry:
    ref = pint.UnitRegistry(units._definitions_text().splitlines())
    ref.formatter.default_format = "~P"  # as get_registry sets it
    return ref


@pytest.fixture(scope="module")
def cached() -> pint.UnitRegistry:
    """A registry as ``get_registry`` builds it (its deferred tables not yet built)."""
    registry = units._new_registry()
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


def test_unit_systems_are_built_when_first_read_and_equal_pints(reference):
    registry = units._new_registry()
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


def test_a_users_preprocessor_still_sees_every_word():
    registry = units._new_registry()
    registry.preprocessors.append(lambda text: text.replace("gigawidget", "GB"))
    assert registry.Quantity(1, "gigawidget").m_as("MB") == 1000


def test_the_registry_holds_the_tables_pint_builds_from_the_text(reference):
    registry = units._new_registry()
    assert set(registry._units) <= set(reference._units)  # pint adds prefixed names it met
    assert set(registry._prefixes) == set(reference._prefixes)
    assert set(registry._dimensions) == set(reference._dimensions)
    assert registry._defaults == reference._defaults
    assert set(registry._groups) == set(reference._groups)
    for name, definition in registry._units.maps[-1].items():
        assert definition == reference._units.maps[-1][name], name
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


def test_units_by_dimension_are_built_on_first_read_as_pint_builds_them(reference):
    registry = units._new_registry()
    registry.formatter.default_format = "~P"  # as get_registry sets it, and the reference
    assert registry._cache._equivalents is None  # not built at start-up
    registry.Quantity(3.35, "TB/s").m_as("GB/s")  # a conversion does not need it
    assert registry._cache._equivalents is None
    assert registry._cache.dimensional_equivalents == reference._cache.dimensional_equivalents
    got = {str(u) for u in registry.get_compatible_units("hour")}
    assert "d" in got and got == {str(u) for u in reference.get_compatible_units("hour")}


def test_a_context_first_read_builds_the_table_of_the_plain_registry(reference):
    registry = units._new_registry()
    assert registry._cache._equivalents is None
    with registry.context("sp"):  # the first read happens while the context switches in
        registry.Quantity(1.0, "nm").m_as("THz")
    assert registry._caches[()].dimensional_equivalents == (
        reference._cache.dimensional_equivalents
    )


def test_a_unit_defined_later_works_and_leaves_the_table_as_pints(reference):
    registry = units._new_registry()
    registry.define("safety_widget = 3 byte")
    assert registry.Quantity(2, "safety_widget").m_as("bit") == 48  # 2 x 3 x 8
    assert registry._cache.dimensional_equivalents == reference._cache.dimensional_equivalents


# -- pint's parse of the definitions, shipped as data (mlsys.core._units_parsed) ----------
def test_the_encoded_parse_rebuilds_exactly_what_pint_parses():
    # Independent of the shipped file: whatever pint is installed, encoding its parse to
    # JSON and back gives the same definition objects, field by field, in the same order.
    text = units._definitions_text()
    parsed = _units_parsed.parse(text)
    content = json.loads(json.dumps(_units_parsed.encode(parsed, text)))
    rebuilt = _units_parsed.decode(content)
    assert rebuilt == parsed and len(parsed) > 400  # 301 units, 34 prefixes, ... in pint 0.25
    for mine, theirs in zip(rebuilt, parsed, strict=True):
        assert type(mine) is type(theirs) and vars(mine) == vars(theirs), theirs


def test_the_shipped_parse_is_pints_parse_of_the_current_text():
    text = units._definitions_text()
    with open(_units_parsed.PATH, encoding="utf-8") as file:
        shipped = json.load(file)
    if shipped["pint"] != pint.__version__:
        pytest.skip(f"shipped for pint {shipped['pint']}: pint {pint.__version__} parses")
    assert shipped["digest"] == _units_parsed.digest(text), (
        "units_definitions.txt or the way units.py combines the definitions changed: "
        "regenerate with `python -c 'from mlsys.core import units; units._write_parsed()'`"
    )
    assert _units_parsed.load(text) == _units_parsed.parse(text)


def test_a_registry_from_the_shipped_parse_is_the_registry_from_the_text():
    text_built = units._new_registry(shipped=False)
    shipped = units._new_registry()
    assert dict(shipped._units.maps[-1]) == dict(text_built._units.maps[-1])
    for table in ("_dimensions", "_prefixes", "_suffixes", "_defaults", "_base_units"):
        assert getattr(shipped, table) == getattr(text_built, table), table
    assert list(shipped._groups) == list(text_built._groups)
    assert shipped._cache.dimensional_equivalents == text_built._cache.dimensional_equivalents


@pytest.mark.parametrize(
    "content",
    [
        b"",  # empty
        b'{"format": 1, "digest": "0000", "definitions": []}',  # made from another text
        b"\x80\x04\x95 a pickle",  # not JSON: never unpickled
    ],
)
def test_a_shipped_parse_for_another_text_or_not_json_is_not_used(content, tmp_path, monkeypatch):
    path = tmp_path / "units_parsed.json"
    path.write_bytes(content)
    monkeypatch.setattr(_units_parsed, "PATH", str(path))
    assert _units_parsed.load(units._definitions_text()) is None
    registry = units._new_registry()  # pint parses the text instead
    assert registry.Quantity(3.35, "TB/s").m_as("GB/s") == pytest.approx(3350.0)


def test_a_shipped_parse_can_name_only_pints_definition_classes(tmp_path, monkeypatch):
    # A class outside the allow-list (here one that would run a command) is refused: the
    # file is data, and no constructor but a pint definition's is ever called from it.
    text = units._definitions_text()
    marker = tmp_path / "ran"
    evil = {"c": "os.system", "i": {"command": f"touch {marker}"}, "s": {}}
    content = {"format": 1, "digest": _units_parsed.digest(text), "definitions": [evil]}
    path = tmp_path / "units_parsed.json"
    path.write_text(json.dumps(content), encoding="utf-8")
    monkeypatch.setattr(_units_parsed, "PATH", str(path))
    assert _units_parsed.load(text) is None and not marker.exists()
