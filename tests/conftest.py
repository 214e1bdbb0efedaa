"""Test-run plumbing shared by every directory.

The suite runs on pytest-xdist workers (``-n auto --dist loadgroup`` in pyproject.toml).
A fixture of module or session scope is built once per worker that needs it, so tests
that share one (the executed chapters, the four-rank emulator cluster, the rendered
book) are kept on one worker: each such test gets an ``xdist_group`` named after where
its shared fixture is defined.
"""

from __future__ import annotations

import pytest

_SHARED_SCOPES = ("module", "package", "session")


def _shared_fixture_home(item: pytest.Item) -> str | None:
    """Where the first module- or session-scoped fixture of the project that ``item``
    uses is defined (its conftest directory or test module), or None."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    homes = []
    for definitions in info.name2fixturedefs.values():
        definition = definitions[-1]
        baseid = getattr(definition, "baseid", "")
        if definition.scope in _SHARED_SCOPES and baseid.startswith("tests"):
            homes.append(baseid)
    return min(homes) if homes else None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        home = _shared_fixture_home(item)
        if home is not None and not item.get_closest_marker("xdist_group"):
            item.add_marker(pytest.mark.xdist_group(name=home))
