"""``benchmarks/run.py`` writes a scratch file unless told to replace the page's data.

A run on a contributor's machine must not overwrite ``docs/_data/benchmarks.json``, the
committed numbers the benchmarks page renders: by default it writes
``benchmarks/results.json``, which git ignores; only ``--publish`` writes the page's file.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run_module():
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "benchmarks" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_default_output_is_not_the_published_file():
    run = _run_module()
    assert run.OUT == ROOT / "benchmarks" / "results.json"
    assert run.PUBLISHED == ROOT / "docs" / "_data" / "benchmarks.json"
    assert run.PUBLISHED.is_file()


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="no git")
def test_default_output_is_ignored_by_git_and_the_published_file_is_tracked():
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)

    assert git("check-ignore", "-q", "benchmarks/results.json").returncode == 0
    assert git("ls-files", "--error-unmatch", "docs/_data/benchmarks.json").returncode == 0
