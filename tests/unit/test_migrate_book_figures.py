"""Failures a recorded difference explains, and ``mlsys migrate --book-figures``."""

from __future__ import annotations

import subprocess
import sys

from mlsys.book.rewrite import BOOK_FIGURES_LINE, migrate_text
from mlsys.cli import main

# The book stores an H100 of exactly 80 GiB and guards it; mlsys's catalog holds the
# 81,559 MiB (79.6 GiB) CUDA sees, a difference recorded with its reason.
GUARDED = """---
title: "A chapter whose check asserts the book's H100"
---

```{python}
#| label: guarded
from mlsysim import Hardware
from mlsysim.core.constants import GiB
from mlsysim.fmt import check, fmt
h100_gib = Hardware.Cloud.H100.memory.capacity.m_as(GiB)
check(h100_gib == 80, "H100 memory capacity should be 80 GiB")
h100_str = fmt(h100_gib, precision=0)
```

```{python}
#| label: missing
from mlsysim.core import constants
gap_str = fmt(constants.NO_SUCH_BOOK_CONSTANT, precision=1)
```

H100: `{python} h100_str` GiB. Gap: `{python} gap_str`.
"""


def test_report_tells_a_recorded_difference_from_a_gap(tmp_path, capsys) -> None:
    chapter = tmp_path / "guarded.qmd"
    chapter.write_text(GUARDED, encoding="utf-8")
    assert main(["migrate", str(chapter), "--report", "--dry-run"]) == 1
    out = capsys.readouterr().out
    guard = next(line for line in out.splitlines() if "(guarded)" in line)
    assert "BookCheckError" in guard
    assert "Hardware.Cloud.H100.memory.capacity (book: 80 GiB): a recorded difference" in guard
    # the missing constant is not explained by any difference: mlsys must change
    gap = next(line for line in out.splitlines() if "(missing)" in line)
    assert "recorded difference" not in gap
    # cells 1 and 2 fail, and both inline values: the guard's two failures are explained
    assert "failures a recorded difference explains: 2 of 4" in out


def test_book_figures_makes_the_guard_pass(tmp_path, capsys) -> None:
    chapter = tmp_path / "guarded.qmd"
    chapter.write_text(GUARDED.split("```{python}\n#| label: missing")[0], encoding="utf-8")
    assert main(["migrate", str(chapter), "--report", "--book-figures"]) == 0
    out = capsys.readouterr().out
    assert "cells that run: 1 of 1" in out and "render: would succeed" in out
    migrated = chapter.read_text(encoding="utf-8")
    assert migrated.count(BOOK_FIGURES_LINE) == 1
    # the line goes after the cell's options, before the (rewritten) imports
    assert "#| label: guarded\n" + BOOK_FIGURES_LINE + "from mlsys " in migrated


def test_book_figures_line_is_added_once() -> None:
    once = migrate_text(GUARDED, ".qmd", book_figures=True)
    assert migrate_text(once, ".qmd", book_figures=True) == once
    assert migrate_text(GUARDED, ".qmd").count(BOOK_FIGURES_LINE) == 0


def test_a_served_book_figure_reads_in_the_books_units() -> None:
    # the book writes .m_as("param") and .m_as("flop") on the values it replaces
    code = (
        "from mlsys.book.migration import serve_book_figures\n"
        "from mlsys import Models\n"
        "serve_book_figures()\n"
        "print(Models.Language.GPT2.parameters.m_as('param'),"
        " round(Models.Vision.ResNet50.inference_flops.m_as('GFLOP'), 9))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # the book's "1.5B" GPT-2 and its 4.1 G multiply-adds for ResNet-50
    assert out.stdout.split() == ["1500000000.0", "4.1"]


def test_serve_book_figures_holds_for_the_process_only() -> None:
    code = (
        "from mlsys.book.migration import serve_book_figures\n"
        "from mlsys import Hardware\n"
        "before = Hardware.Cloud.H100.memory.capacity.m_as('GiB')\n"
        "served = serve_book_figures()\n"
        "after = Hardware.Cloud.H100.memory.capacity.m_as('GiB')\n"
        "print(round(before, 3), after, len(served) > 10)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    # 81,559 MiB = 79.647 GiB before; the book's 80 GiB after
    assert out.stdout.split() == ["79.647", "80", "True"]
    from mlsys import Hardware

    assert round(Hardware.Cloud.H100.memory.capacity.m_as("GiB"), 3) == 79.647


def test_a_difference_on_a_mapping_item() -> None:
    # The book reads the Jetson AGX Orin's INT8 rate as precision_flops["int8"]: NVIDIA's
    # sparse 275 TOPS; mlsys serves the dense 137.5 TOPS and records the difference.
    from mlsys import Hardware
    from mlsys.book.migration import book_values, differences
    from mlsys.constants import TOPS

    rates = Hardware.Edge.JetsonAGXOrin.compute.precision_flops
    diff = [d for d in differences() if d.key.endswith("precision_flops[int8]")]
    assert [d.token for d in diff] == ["JetsonAGXOrin"]
    with book_values(diff):
        assert rates["int8"].m_as(TOPS) == 275.0
    assert rates["int8"].m_as(TOPS) == 137.5
