"""Test-run plumbing shared by every directory.

The suite runs on pytest-xdist workers (``-n auto`` in pyproject.toml). A fixture of
module or session scope is built once per worker that needs it, so the tests that share
one are kept on one worker: the tests of a module stay together (the executed chapters
of ``test_book_chapters.py``), and so do the tests of a directory whose ``conftest.py``
holds a session fixture (the four-process emulator cluster of ``tests/emulate``, the
rendered book and site of ``tests/render``). Other modules are spread over the workers.
(xdist's own ``--dist loadgroup`` cannot do this with pytest 9: it tags a test's id,
which pytest 9 no longer lets a plugin change.)
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
_SESSION_FIXTURE = re.compile(r"""scope\s*=\s*["']session["']""")


def shared_directories() -> tuple[str, ...]:
    """Test directories (``tests/emulate/``) whose conftest defines a session fixture."""
    found = []
    for conftest in sorted(TESTS.glob("*/conftest.py")):
        if _SESSION_FIXTURE.search(conftest.read_text(encoding="utf-8")):
            found.append(conftest.parent.relative_to(ROOT).as_posix() + "/")
    return tuple(found)


def scope_of(nodeid: str, directories: tuple[str, ...]) -> str:
    """The unit of work a test belongs to: its shared directory, else its module."""
    path = nodeid.split("::", 1)[0]
    for directory in directories:
        if path.startswith(directory):
            return directory
    return path


def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    from xdist.scheduler import LoadScopeScheduling

    directories = shared_directories()

    class SharedFixtureScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid, directories)

    return SharedFixtureScheduling(config, log)
