"""An inline value Quarto would leave in place as code is an error, static and executed.

Quarto 1.10 (``executeInlineCodeHandler`` in quarto-cli's ``src/core/execute-inline.ts``)
replaces `` `{python} expr` `` by the expression's value only when the value's text is
non-empty; an empty value leaves the code span in the page, which is how 21
``check(...)`` calls came to be printed as code in the book.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from mlsys.book.check import check_files
from mlsys.book.kernel import execute_documents


def _write(path: Path, text: str) -> Path:
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def test_static_check_flags_inline_check_and_empty_literals(tmp_path):
    chapter = _write(
        tmp_path / "ch.qmd",
        """
        ```{python}
        from mlsys.formatting import check
        ```

        A claim. `{python} check(True, "a true claim")`
        Nothing: `{python} ""` and `{python} None`.
        A number: `{python} 1 + 1`.
        """,
    )
    found = [(f.line, f.col, f.code) for f in check_files([chapter]) if f.severity == "error"]
    # Columns are the expression's first character: "A claim. `{python} " is 19
    # characters, so check( starts at col 20; on line 6 the literals start at cols 20 and
    # 38 ("Nothing: `{python} \"\"` and `{python} " is 37 characters); line 7 is fine.
    assert found == [(5, 20, "inline-empty"), (6, 20, "inline-empty"), (6, 38, "inline-empty")]


def test_static_check_accepts_check_in_a_hidden_cell(tmp_path):
    chapter = _write(
        tmp_path / "ch.qmd",
        """
        ```{python}
        #| include: false
        from mlsys.formatting import check
        check(True, "a true claim")
        ```
        """,
    )
    assert check_files([chapter]) == []


@pytest.mark.book
def test_executed_check_catches_a_planted_empty_value_at_its_line(tmp_path):
    first = _write(
        tmp_path / "a.qmd",
        """
        ```{python}
        leaked = "from chapter a"
        label = ""
        ```

        The label is `{python} label` and the sum `{python} 2 + 2`.
        """,
    )
    sub = tmp_path / "sub"
    sub.mkdir()
    second = _write(
        sub / "b.qmd",
        """
        ```{python}
        import multiprocessing.spawn, os
        # one kernel serves both chapters: a's names must be gone, the working directory
        # and QUARTO_DOCUMENT_FILE must be b's, and __main__ must keep what spawn reads
        assert "leaked" not in globals()
        assert os.path.basename(os.getcwd()) == "sub"
        assert os.environ["QUARTO_DOCUMENT_FILE"] == "b.qmd"
        assert multiprocessing.spawn.get_preparation_data("x")["sys_path"]
        ```

        Fine: `{python} 3 * 3`.
        """,
    )
    a, b = execute_documents([first, second], jobs=1, timeout=60)
    # The static pass cannot know that `label` is empty; the kernel can: line 6, col 24
    # ("The label is `{python} " is 23 characters).
    assert [(f.line, f.col, f.code) for f in a.findings] == [(6, 24, "inline-empty")]
    assert [v.text for v in a.inline_values] == ["", "4"]
    assert b.findings == [] and b.completed
    assert [v.text for v in b.inline_values] == ["9"]
