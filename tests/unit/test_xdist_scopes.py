"""Tests that share a costly fixture run on one xdist worker (tests/conftest.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.spec_from_file_location(
    "tests_conftest", Path(__file__).resolve().parents[1] / "conftest.py"
)
plumbing = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(plumbing)


def test_session_fixture_directories_are_found_from_their_conftests():
    directories = plumbing.shared_directories()
    # tests/emulate/conftest.py builds one four-rank cluster per session
    assert "tests/emulate/" in directories
    assert "tests/unit/" not in directories


def test_a_shared_directory_is_one_unit_and_other_modules_are_their_own():
    dirs = ("tests/emulate/",)
    scope_of = plumbing.scope_of
    assert scope_of("tests/emulate/test_emulate_tp.py::test_x", dirs) == "tests/emulate/"
    assert scope_of("tests/emulate/test_emulate_cli.py::test_y[a]", dirs) == "tests/emulate/"
    chapters = "tests/book/test_book_chapters.py"
    for test in ("test_executed_check_of_the_chapters", "test_memory_chapter_prints_x"):
        assert scope_of(f"{chapters}::{test}", dirs) == chapters
