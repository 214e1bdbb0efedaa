"""A real Quarto renders a two-chapter book with the real book's project settings.

The fixture book (``tests/book/fixtures/_small_book``) has the real book's pre-render
hook (``_mlsys_check.py``, copied from ``book/quarto``), its ``freeze: auto`` and its
``mlsys`` filter, so the default test run exercises the whole Quarto path in seconds.
The full book, its PDF and the site render under ``pytest -m render``.

What is checked: the hook runs ``mlsys check`` with the Python Quarto executes chapters
with; without mlsys there, the render stops with one line saying what to do; an inline
number is printed by the display policy; a second render executes nothing (Quarto reuses
the frozen results while the source is unchanged).
"""

from __future__ import annotations

import html
import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "book" / "quarto"
FIXTURE = Path(__file__).parent / "fixtures" / "_small_book"
QUARTO = shutil.which("quarto")

needs_quarto = pytest.mark.skipif(QUARTO is None, reason="quarto is not on PATH")


def test_hook_is_the_same_file_in_the_book_the_site_and_the_fixture_settings():
    hook = (BOOK / "_mlsys_check.py").read_bytes()
    assert (ROOT / "docs" / "_mlsys_check.py").read_bytes() == hook
    yaml = pytest.importorskip("yaml")
    book = yaml.safe_load((BOOK / "_quarto.yml").read_text(encoding="utf-8"))
    small = yaml.safe_load((FIXTURE / "_quarto.yml").read_text(encoding="utf-8"))
    site = yaml.safe_load((ROOT / "_quarto.yml").read_text(encoding="utf-8"))
    assert book["project"]["pre-render"] == small["project"]["pre-render"] == "_mlsys_check.py ."
    assert site["project"]["pre-render"].startswith("docs/_mlsys_check.py ")
    assert small["execute"]["freeze"] == book["execute"]["freeze"] == "auto"
    assert small["filters"] == book["filters"] == ["mlsys"]


def _copy(tmp_path: Path) -> Path:
    dest = tmp_path / "book"
    shutil.copytree(FIXTURE, dest)
    shutil.copytree(BOOK / "_extensions", dest / "_extensions")
    shutil.copy2(BOOK / "_mlsys_check.py", dest / "_mlsys_check.py")
    return dest


def _env(**extra: str) -> dict[str, str]:
    """The environment of a shell that has Quarto but no activated virtual environment."""
    bin_dir = str(Path(QUARTO or "quarto").parent)
    dropped = ("VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    env["PATH"] = os.pathsep.join([bin_dir, "/usr/bin", "/bin"])
    env.update(extra)
    return env


def _render(project: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [QUARTO or "quarto", "render", "--to", "html"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@needs_quarto
def test_render_from_a_fresh_shell_runs_the_hook_and_freezes(tmp_path):
    from mlsys import Hardware
    from mlsys.formatting import fmt

    project = _copy(tmp_path)
    log = tmp_path / "executions.log"
    # QUARTO_PYTHON is the one step a fresh shell needs (README): the hook and the
    # chapters then run with the interpreter that has mlsys, PATH untouched.
    env = _env(
        QUARTO_PYTHON=sys.executable,
        MLSYS_EXECUTION_LOG=str(log),
        PYTHONPATH=str(ROOT),  # the mlsys under test, not another installed copy
    )
    first = _render(project, env)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "mlsys check: 0 errors" in first.stdout + first.stderr
    page = html.unescape((project / "_book" / "roofline.html").read_text(encoding="utf-8"))
    # "3.35 TB/s", its number and unit joined by a no-break space in the page
    printed = str(fmt(Hardware.H100.memory_bandwidth, "TB/s"))
    assert printed.replace(" ", "\u00a0") in page or printed in page
    assert (project / "_freeze" / "roofline" / "execute-results" / "html.json").is_file()
    assert log.read_text(encoding="utf-8").splitlines() == ["roofline.qmd"]

    again = _render(project, env)
    assert again.returncode == 0, again.stderr[-3000:]
    # frozen and unchanged: Quarto does not execute the chapter a second time
    assert log.read_text(encoding="utf-8").splitlines() == ["roofline.qmd"]


@needs_quarto
def test_render_without_mlsys_stops_with_one_line(tmp_path):
    project = _copy(tmp_path)
    bare = tmp_path / "bare"
    venv.EnvBuilder(with_pip=False).create(bare)  # a Python without mlsys
    python = bare / "bin" / "python"
    done = _render(project, _env(QUARTO_PYTHON=str(python)))
    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert f"mlsys is not installed for {python}" in output
    assert "QUARTO_PYTHON" in output
    assert "Stack trace" not in output and "Failed to spawn" not in output
    assert not (project / "_book").exists()
