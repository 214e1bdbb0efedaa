"""What the chapters' sources promise the reader, checked without rendering.

A hidden code cell between two lines of one sentence splits the sentence into two
paragraphs on the page: in the book, a cell that computes the numbers of a paragraph sits
before it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "book" / "quarto").rglob("*.qmd"))
_CELL = re.compile(r"^```\{python\}\n(.*?)^```\n", re.S | re.M)


def _splits(text: str) -> list[str]:
    """Hidden cells (echo false, no output of their own) between a line that does not end a
    sentence and a line that continues it."""
    found = []
    for m in _CELL.finditer(text):
        body = m.group(1)
        hidden = "echo: false" in body or "include: false" in body
        if not hidden or "output: asis" in body or "label:" in body:
            continue
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        after = text[m.end() :].lstrip("\n").split("\n", 1)[0]
        continues = re.match(r"[a-z`]", after) is not None
        open_end = re.search(r"[,:;a-z]$", before) is not None and not before.startswith(
            ("#", ":::", "```", "|", "*", "-")
        )
        if open_end and continues:
            found.append(f"{before[-50:]!r} / {after[:50]!r}")
    return found


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_hidden_cell_splits_a_sentence(page):
    assert not _splits(page.read_text(encoding="utf-8"))


def test_the_check_sees_a_split_sentence():
    text = "It priced\n\n```{python}\n#| echo: false\nx = 1\n```\n\nlayouts, of which\n"
    assert _splits(text) == ["'It priced' / 'layouts, of which'"]
