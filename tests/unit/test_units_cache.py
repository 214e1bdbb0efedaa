"""The start-up caches: where they live, and that mlsys works the same without them.

``mlsys.core.units.cache_dir`` picks the directory once per process; a read-only home
falls back to the temporary directory, and no writable directory at all means no cache,
never an error. The registry pint builds without its cache must be the same registry.
"""

from __future__ import annotations

import os
import tempfile

import pytest

from mlsys.core import units


@pytest.fixture
def fresh_cache_dir():
    units.cache_dir.cache_clear()
    yield units.cache_dir
    units.cache_dir.cache_clear()  # later tests choose again from the real environment


def test_cache_dir_honours_mlsys_cache_dir(tmp_path, monkeypatch, fresh_cache_dir):
    monkeypatch.setenv("MLSYS_CACHE_DIR", str(tmp_path))
    assert fresh_cache_dir() == tmp_path / "mlsys"
    assert (tmp_path / "mlsys").is_dir() and os.listdir(tmp_path / "mlsys") == []  # probe gone


def test_unwritable_cache_dir_falls_back_silently(tmp_path, monkeypatch, fresh_cache_dir):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    # Running as root ignores permission bits, so "unwritable" is a path under a file.
    monkeypatch.setenv("MLSYS_CACHE_DIR", str(blocker))
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    uid = os.getuid() if hasattr(os, "getuid") else 0
    assert fresh_cache_dir() == tmp_path / "tmp" / f"mlsys-cache-{uid}"


def test_no_writable_directory_means_no_cache(tmp_path, monkeypatch, fresh_cache_dir):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("MLSYS_CACHE_DIR", str(blocker))
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(blocker))
    assert fresh_cache_dir() is None


def test_registry_without_cache_is_the_same_registry():
    cached = units._new_registry(units.cache_dir())  # as get_registry builds it
    bare = units._new_registry(None)  # what a process with no writable cache builds
    # The same definitions; pint's uncached build also lists the prefixed names it met.
    extra = set(bare._units) - set(cached._units)
    assert set(cached._units) <= set(bare._units)
    assert all(cached.parse_unit_name(name)[0][0] for name in extra)  # each has a prefix
    assert set(bare._prefixes) == set(cached._prefixes)
    assert bare.default_system == cached.default_system == "mks"
    # the mlsys-specific definitions: bytes are a dimension, FLOPs and carbon exist
    assert str(bare.Quantity(1, "GB").dimensionality) == "[information]"
    assert bare.Quantity(1, "kg").to_base_units().units == bare.Unit("kg")  # mks, not cgs
    assert bare.Quantity(3.35, "TB/s").m_as("GB/s") == pytest.approx(3350.0)
    assert bare.Quantity(2, "tCO2e").m_as("kgCO2e") == pytest.approx(2000.0)
    assert bare.Quantity(1, "PFLOP").m_as("flop") == pytest.approx(1e15)


def test_a_directory_others_can_write_is_not_used(tmp_path, monkeypatch, fresh_cache_dir):
    # The registry is unpickled from the cache: a world-writable directory (another
    # user's mlsys-cache-<uid> planted in a shared /tmp) must not be trusted.
    shared = tmp_path / "shared"
    (shared / "mlsys").mkdir(parents=True)
    (shared / "mlsys").chmod(0o777)
    monkeypatch.setenv("MLSYS_CACHE_DIR", str(shared))
    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    uid = os.getuid() if hasattr(os, "getuid") else 0
    assert fresh_cache_dir() == tmp_path / "tmp" / f"mlsys-cache-{uid}"
    assert (tmp_path / "tmp" / f"mlsys-cache-{uid}").stat().st_mode & 0o777 == 0o700
