"""``mlsys check --execute``: chapters run in a Jupyter kernel the way Quarto runs them.

Tests that start kernels are marked ``book`` and kept few (a kernel start costs 1–2 s).
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import stat
import tempfile
from pathlib import Path

import pytest

from mlsys.book.kernel import bad_output, rendered_text
from mlsys.cli import main

FIXTURES = Path(__file__).parent / "fixtures"
BROKEN = FIXTURES / "_broken"


def test_rendered_text_follows_quarto():
    # Quarto inserts text/markdown when there is one, else text/plain without the
    # quotes of a string's repr.
    assert rendered_text({"text/plain": "'3.35 TB/s'"}) == ("3.35 TB/s", "text/plain")
    assert rendered_text({"text/plain": "42"}) == ("42", "text/plain")
    assert rendered_text({"text/plain": "Q", "text/markdown": "3.35 TB/s"})[0] == "3.35 TB/s"
    assert rendered_text({"text/plain": ["1", "2"]})[0] == "12"


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("nan", "NaN"),
        ("-NaN %", "NaN"),
        ("inf s", "infinity"),
        ("Infinity", "infinity"),
        ("<Quantity(3.35, 'terabyte / second')>", "pint"),
        ("np.float64(3.35)", "numpy"),
        ("None", "None"),
        ("peak: 3.35 TB/s\nNone\n", "None"),
        ("Traceback (most recent call last):", "traceback"),
    ],
)
def test_bad_output_flags(text, why):
    assert why in bad_output(text)


@pytest.mark.parametrize("text", ["3.35 TB/s", "info", "nanoseconds", "12 ns", "Nonetheless"])
def test_good_output_passes(text):
    assert bad_output(text) is None


@pytest.mark.book
def test_executed_check_reports_raising_cell_and_nan(capsys):
    files = [FIXTURES / "_ok" / "clean.qmd", BROKEN / "raising.qmd", BROKEN / "nan_inline.qmd"]
    status = main(["check", "--execute", "--json", "--jobs", "2", *map(str, files)])
    assert status == 1
    findings = json.loads(capsys.readouterr().out)
    got = {(Path(f["file"]).name, f["line"], f["code"]) for f in findings}
    assert got == {
        # The third cell divides by zero on line 16 of the file; the second cell's 1 / 0
        # is allowed by "#| error: true" and the chapter stops at the failure.
        ("raising.qmd", 16, "cell-error"),
        # The NaN inline value on line 9 would be printed into the page.
        ("nan_inline.qmd", 9, "bad-output"),
    }
    raising = next(f for f in findings if f["code"] == "cell-error")
    assert raising["message"].startswith("cell raised ZeroDivisionError: division by zero")
    nan = next(f for f in findings if f["code"] == "bad-output")
    assert nan["col"] == 22 and "NaN" in nan["message"]


@pytest.mark.skipif(os.name != "posix", reason="Unix-domain sockets")
def test_kernel_sockets_are_private_unix_sockets_not_loopback_ports(tmp_path, monkeypatch):
    """Kernels started together cannot pick the same TCP port (jupyter_client issue 487:
    a lost race is "Address already in use" and a 60 s startup timeout): their sockets
    are Unix-domain sockets in a 0700 folder of their own, gone with the manager."""
    from mlsys.book.kernel import _kernel_manager_class

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    manager_class = _kernel_manager_class()
    first, second = manager_class(), manager_class()
    assert first.transport == second.transport == "ipc"
    folders = [Path(m.ip).parent for m in (first, second)]
    assert folders[0] != folders[1] and all(f.parent == tmp_path for f in folders)
    assert all(stat.S_IMODE(f.stat().st_mode) == 0o700 for f in folders)
    del first, second
    gc.collect()
    assert not any(f.exists() for f in folders)


@pytest.mark.book
def test_an_executed_chapter_leaves_its_folder_and_the_temp_folder_as_they_were(
    tmp_path, monkeypatch
):
    book, scratch = tmp_path / "book", tmp_path / "tmp"
    book.mkdir()
    scratch.mkdir()
    shutil.copy(FIXTURES / "_ok" / "clean.qmd", book / "clean.qmd")
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    assert main(["check", "--execute", str(book / "clean.qmd")]) == 0
    gc.collect()
    assert sorted(p.name for p in book.iterdir()) == ["clean.qmd"]
    assert not list(scratch.glob("mlsys-kernel-*"))
