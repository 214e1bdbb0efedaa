"""The catalog builds entries one at a time, on first read, and still checks every row.

Start-up speed: ``fmt(Hardware.H100.memory_bandwidth)`` in a fresh interpreter
must not wait for every accelerator to be validated, nor for ``tomllib`` to parse the data
file again. These tests pin what laziness must not change: every shipped entry validates,
an invalid row still raises a clear :class:`CatalogError` (on the first read of that
entry at the latest), names and did-you-mean suggestions need no entry built, and a
parsed table is exactly the TOML's content.

Each test builds its own registries from the catalog's loaders, so entries built by other
tests in the same process do not hide what is built when.
"""

from __future__ import annotations

import sys

import pytest

import mlsys.core.catalog as catalog
from mlsys.core.catalog import CatalogError, Deferred, Registry, _tables
from mlsys.core.errors import UnknownEntryError
from mlsys.core.types import Accelerator

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

# registry name -> (the catalog's loader, its data file)
LOADERS = {
    "Hardware": (catalog._accelerators, "accelerators.toml"),
    "Fabrics": (catalog._fabrics, "fabrics.toml"),
    "Nodes": (catalog._nodes, "nodes.toml"),
    "Models": (catalog._models, "models.toml"),
    "Grids": (catalog._grids, "grids.toml"),
    "Datacenters": (catalog._datacenters, "datacenters.toml"),
}


def _fresh(name: str) -> Registry:
    return Registry(name, LOADERS[name][0])


def test_reading_one_entry_builds_that_entry_alone():
    reg = _fresh("Hardware")
    assert reg.built() == []
    names = reg.list()  # names and aliases need no validation
    assert len(names) == len(catalog.load_table("accelerators.toml")) > 1
    assert "h100-sxm" in reg and reg.built() == []
    h100 = reg.H100
    assert reg.built() == ["H100"]
    assert reg["h100 sxm"] is h100 and reg.built() == ["H100"]  # built once, then kept
    # the same validated object as the shared registry's, field for field
    assert h100.model_dump() == catalog.Hardware.H100.model_dump()


def test_a_node_builds_only_the_entries_it_names():
    row = catalog.load_table("nodes.toml")["DGX_H100"]
    nodes = _fresh("Nodes")
    before_hw = set(catalog.Hardware.built())
    node = nodes.DGX_H100
    assert nodes.built() == ["DGX_H100"]
    # the node's references resolve through the shared registries, building what they name
    assert node.accelerator is catalog.Hardware[row["accelerator"]]
    assert set(catalog.Hardware.built()) <= before_hw | {row["accelerator"]}


@pytest.mark.parametrize("name", list(LOADERS))
def test_iterating_builds_and_validates_every_entry(name):
    reg = _fresh(name)
    entries = list(reg)
    keys = list(catalog.load_table(LOADERS[name][1]))
    assert [e.name for e in entries] == keys
    assert reg.built() == keys and len(reg) == len(keys)
    assert [k for k, _ in reg.items()] == keys


def test_unknown_name_suggests_without_building_anything():
    reg = _fresh("Hardware")
    with pytest.raises(UnknownEntryError) as info:
        reg["H10"]
    assert "H100" in info.value.suggestions
    with pytest.raises(AttributeError, match="Did you mean"):
        reg.H1OO
    assert reg.built() == []


def _with_bad_h100(monkeypatch) -> Registry:
    """The accelerator table with the H100's bandwidth in bytes (a wrong dimension)."""
    table = {k: dict(v) for k, v in catalog.load_table("accelerators.toml").items()}
    table["H100"]["memory_bandwidth"] = "3.35 TB"
    monkeypatch.setattr(catalog, "load_table", lambda filename: table)
    return Registry("Hardware", catalog._accelerators)


def test_an_invalid_row_errors_clearly_on_first_read(monkeypatch):
    reg = _with_bad_h100(monkeypatch)
    assert "H100" in reg.list() and "H100" in reg  # indexing does not validate
    assert reg.A100_80GB.name == "A100_80GB"  # other rows are unaffected
    for _ in range(2):  # and it is not forgotten after the first failure
        with pytest.raises(CatalogError) as info:
            reg.H100
        message = str(info.value)
        assert "accelerators.toml [H100]" in message and "memory_bandwidth" in message
        assert len(message) < 400
    with pytest.raises(CatalogError, match=r"\[H100\]"):
        list(reg)  # iterating reaches the bad row too


def test_deferred_builds_once_and_retries_after_a_failure():
    calls = []

    def build():
        calls.append(1)
        if len(calls) == 1:
            raise CatalogError("first attempt fails")
        return type("E", (), {"name": "A"})()

    reg = Registry("Toys", lambda: {"A": (Deferred(build), ["alpha"])})
    with pytest.raises(CatalogError):
        reg.alpha
    first = reg.alpha
    assert reg.A is first and len(calls) == 2


def test_two_threads_reading_an_entry_first_get_one_object():
    import threading

    # Switch threads every 10 µs so that, without the registry's lock, the threads'
    # builds interleave and hand out different objects (they did: 3-4 of 4 distinct).
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    try:
        reg = _fresh("Hardware")
        reg.list()  # names indexed: the race is on building the entry
        barrier = threading.Barrier(4)
        got = []

        def read():
            barrier.wait()  # all four ask at once, before any build has finished
            got.append(reg.H100)

        threads = [threading.Thread(target=read) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert len(got) == 4 and all(entry is got[0] for entry in got)


# -- the parsed tables ---------------------------------------------------------------
DATA_FILES = sorted(p.name for p in _tables.DATA_DIR.glob("*.toml"))


@pytest.mark.parametrize("filename", DATA_FILES)
def test_a_table_is_exactly_the_shipped_toml(filename):
    expected = tomllib.loads((_tables.DATA_DIR / filename).read_text("utf-8"))
    table = _tables.load_table.__wrapped__(filename)
    assert table == expected and list(table) == list(expected)  # file order kept


@pytest.mark.parametrize("content", [b"[H100\nmemory = 1", b"\xff\xfe not text"])
def test_malformed_toml_is_a_catalog_error(content, tmp_path, monkeypatch):
    (tmp_path / "broken.toml").write_bytes(content)
    monkeypatch.setattr(_tables, "DATA_DIR", tmp_path)
    with pytest.raises(CatalogError, match=r"broken\.toml"):
        _tables.load_table.__wrapped__("broken.toml")


def test_accelerator_validation_is_what_the_catalog_runs():
    # The deferred build is the same pydantic validation a user's Accelerator gets.
    row = dict(catalog.load_table("accelerators.toml")["H100"])
    row.pop("aliases", None)
    assert Accelerator(name="H100", **row).model_dump() == catalog.Hardware.H100.model_dump()
