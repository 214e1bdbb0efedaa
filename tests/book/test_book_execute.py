"""``mlsys check --execute``: chapters run in a Jupyter kernel the way Quarto runs them.

Tests that start kernels are marked ``book`` and kept few (a kernel start costs 1–2 s).
"""

from __future__ import annotations

import json
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
