"""Validated catalog entries cached on disk: the cache never changes a value.

Issue 14 (a fresh interpreter to its first formatted catalog number in <= 0.3 s): an entry
validated once is written to the cache directory and later rebuilt without validation
(``mlsys.core.catalog._entries``). These tests pin what that must not change: every
shipped entry comes back from its cache file equal, field by field and type by type, to a
freshly validated one, with the same provenance; an edited row, or edited validating
code, is validated again; an invalid row still raises; a missing, unwritable or damaged
cache falls back silently.

Each test builds its own registries from the catalog's loaders, with the cache in a
temporary directory, so entries built by other tests do not hide what is built when.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
import textwrap

import pytest

import mlsys.core.catalog as catalog
from mlsys.core import units
from mlsys.core.catalog import CatalogError, Registry, _entries
from mlsys.core.provenance import origin_of

# registry name -> (the catalog's loader, its data file)
LOADERS = {
    "Hardware": (catalog._accelerators, "accelerators.toml"),
    "Fabrics": (catalog._fabrics, "fabrics.toml"),
    "Nodes": (catalog._nodes, "nodes.toml"),
    "Models": (catalog._models, "models.toml"),
    "Grids": (catalog._grids, "grids.toml"),
    "Datacenters": (catalog._datacenters, "datacenters.toml"),
}


@pytest.fixture
def cache_root(tmp_path, monkeypatch):
    monkeypatch.setattr(units, "cache_dir", lambda: tmp_path)
    return tmp_path


def _fresh(name: str) -> Registry:
    return Registry(name, LOADERS[name][0])


def _entry_files(root, filename: str) -> list:
    folder = root / "catalog" / "entries" / filename.removesuffix(".toml")
    return sorted(folder.glob("*.json"))


def _assert_same_field(name: str, fresh, cached) -> None:
    """One field of a cached entry against the freshly validated one."""
    assert type(cached) is type(fresh), name
    if hasattr(fresh, "_units"):
        # The same number, of the same Python type (700 W stays an int), the same unit,
        # and a catalog origin that names the same entry and source.
        assert type(cached.magnitude) is type(fresh.magnitude), name
        assert cached.magnitude == fresh.magnitude and cached.units == fresh.units, name
        assert str(cached.units) == str(fresh.units), name
        assert origin_of(cached) is not None, name
        assert origin_of(cached).describe() == origin_of(fresh).describe(), name
    elif isinstance(fresh, dict):
        assert list(cached) == list(fresh), name
        for key in fresh:
            _assert_same_field(f"{name}[{key}]", fresh[key], cached[key])
    else:
        assert cached == fresh, name


@pytest.mark.parametrize("registry", list(LOADERS))
def test_every_cached_entry_equals_a_freshly_validated_one(registry, cache_root):
    filename = LOADERS[registry][1]
    validated = dict(_fresh(registry).items())  # validates every row and writes its file
    assert len(_entry_files(cache_root, filename)) == len(validated)
    table = catalog.load_table(filename)
    for key, fresh in validated.items():
        kinds = {type(e).__name__: type(e) for e in validated.values()}  # the loader's types
        cached = _entries.cached_entry(filename, key, table[key], kinds, catalog._registries())
        assert cached is not None and cached is not fresh, key
        assert type(cached) is type(fresh), key
        assert cached.model_fields_set == fresh.model_fields_set, key
        for name in type(fresh).model_fields:
            _assert_same_field(f"{key}.{name}", fresh.__dict__[name], cached.__dict__[name])
        assert cached == fresh and repr(cached) == repr(fresh), key
        assert cached.model_dump() == fresh.model_dump(), key


def test_a_second_registry_reads_the_cache_and_keeps_identities(cache_root):
    first = _fresh("Nodes").DGX_H100  # validated; its accelerator is the catalog's H100
    built = []
    real = _entries.cached_entry

    def counting(*args, **kwargs):
        entry = real(*args, **kwargs)
        built.append(entry is not None)
        return entry

    try:
        _entries.cached_entry = counting
        second = _fresh("Nodes").DGX_H100
    finally:
        _entries.cached_entry = real
    assert built == [True]  # read from its cache file, not validated
    assert second == first and second is not first
    # A node's entries are the registries' own objects (provenance compares identity).
    assert second.accelerator is catalog.Hardware.H100
    assert second.intra_fabric is catalog.Fabrics.get(first.intra_fabric.name)


def test_cached_entry_formats_with_its_provenance(cache_root):
    from mlsys.formatting import fmt

    _fresh("Hardware").H100  # writes the file
    h100 = _fresh("Hardware").H100  # from the file
    text = fmt(h100.memory_bandwidth)._repr_markdown_()
    assert text.startswith("[3.35 TB/s]") and "datasheet" in text
    # and traced arithmetic keeps it: 8 bits a byte
    assert "datasheet" in fmt(h100.memory_bandwidth * 8)._repr_markdown_()
    assert h100.memory_bandwidth_Bps == 3.35e12


def _edited_table(monkeypatch, field: str, value: str) -> None:
    table = copy.deepcopy(catalog.load_table("accelerators.toml"))
    table["H100"][field] = value
    monkeypatch.setattr(catalog, "load_table", lambda filename: table)


def test_an_edited_row_is_validated_again(cache_root, monkeypatch):
    assert _fresh("Hardware").H100.memory_bandwidth.m_as("TB/s") == 3.35  # cached now
    _edited_table(monkeypatch, "memory_bandwidth", "4.8 TB/s")
    assert _fresh("Hardware").H100.memory_bandwidth.m_as("TB/s") == 4.8
    # the file of the earlier row is replaced by the file of the edited one
    assert len([p for p in _entry_files(cache_root, "accelerators.toml")]) == 1


def test_an_invalid_row_still_raises_with_a_valid_copy_in_the_cache(cache_root, monkeypatch):
    _fresh("Hardware").H100  # a valid H100 in the cache
    _edited_table(monkeypatch, "memory_bandwidth", "3.35 TB")  # bytes, not bytes/s
    reg = _fresh("Hardware")
    for _ in range(2):
        with pytest.raises(CatalogError, match=r"accelerators\.toml \[H100\].*memory_band"):
            reg.H100


def test_edited_validating_code_is_a_new_cache(cache_root, monkeypatch):
    _fresh("Hardware").H100
    (before,) = _entry_files(cache_root, "accelerators.toml")
    monkeypatch.setattr(_entries, "_code_digest", lambda: "another version of types.py")
    assert _fresh("Hardware").H100.tdp.m_as("W") == 700
    (after,) = _entry_files(cache_root, "accelerators.toml")
    assert after != before  # validated again, under another name


def test_missing_unwritable_or_damaged_cache_falls_back(tmp_path, monkeypatch):
    monkeypatch.setattr(units, "cache_dir", lambda: None)  # nowhere writable
    assert _fresh("Hardware").H100.memory_bandwidth.m_as("TB/s") == 3.35
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory", encoding="utf-8")
    monkeypatch.setattr(units, "cache_dir", lambda: blocker)  # mkdir fails under it
    assert _fresh("Hardware").H100.memory_bandwidth.m_as("TB/s") == 3.35
    monkeypatch.setattr(units, "cache_dir", lambda: tmp_path)
    _fresh("Hardware").H100
    (path,) = _entry_files(tmp_path, "accelerators.toml")
    path.write_text('{"key": "H100", "cls": "Acc', encoding="utf-8")  # cut short
    assert _fresh("Hardware").H100.tdp.m_as("W") == 700
    assert json.loads(path.read_text("utf-8"))["key"] == "H100"  # rewritten whole
    record = json.loads(path.read_text("utf-8"))
    record["fields"]["tdp"] = ["q", [700, [["no_such_unit", 1]]]]  # undecodable
    path.write_text(json.dumps(record), encoding="utf-8")
    assert _fresh("Hardware").H100.tdp.m_as("W") == 700


def test_an_entry_outside_the_registries_is_not_cached(cache_root):
    # A node on a user's own accelerator: decoding could not give back that object.
    mine = catalog.Hardware.H100.model_copy(update={"name": "MY_H100"})
    node = catalog.Nodes.DGX_H100.model_copy(update={"accelerator": mine})
    raw = {"accelerator": "MY_H100"}
    stored = _entries.store_entry(
        "nodes.toml", "MINE", raw, node, catalog._references(), catalog._registries()
    )
    assert stored is False
    assert not [p for p in _entry_files(cache_root, "nodes.toml") if p.name.startswith("MINE")]


def test_a_fresh_interpreter_reads_an_entry_without_building_a_validator(tmp_path):
    # pydantic builds a validator (and scans for plugins) only for a row it validates.
    code = textwrap.dedent(
        """
        import sys
        from mlsys import Hardware
        from mlsys.core.types import Accelerator
        bw = Hardware.H100.memory_bandwidth
        print(bw.m_as("TB/s"), Accelerator.__pydantic_complete__,
              "pydantic.plugin._loader" in sys.modules)
        """
    )
    env = dict(os.environ, MLSYS_CACHE_DIR=str(tmp_path))
    runs = [
        subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        ).stdout.split()
        for _ in range(2)
    ]
    assert runs[0] == ["3.35", "True", "True"]  # validated, and cached
    assert runs[1] == ["3.35", "False", "False"]  # read back: no schema, no validator


def test_the_digest_covers_every_module_that_validates_an_entry():
    # An edit to a validator must be a new cache name: the modules that define the entry
    # types (mlsys.core.types and the _types_*.py modules it creates them from) and the
    # catalog's own code are all part of the digest.
    from pathlib import Path

    import mlsys.core.types as types

    core = Path(types.__file__).parent
    defining = ["types.py", *(p.name for p in core.glob("_types_*.py"))]
    assert len(defining) == 4
    for name in (*defining, "catalog/__init__.py", "units.py", "precision.py"):
        assert name in _entries._CODE, name
    for name in _entries._CODE:
        assert (core / name).is_file(), name
