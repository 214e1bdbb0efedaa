"""The ``mlsys`` Quarto extension: its files, the book's copy, and a real render.

The render test runs the real Quarto CLI on a scratch project that installs the extension
with ``quarto add`` (as another author would) and checks the rendered HTML: the tooltip
of ``fmt(Hardware.H100.memory_bandwidth)`` names the H100 datasheet, the script and
stylesheet are on the page, and in LaTeX the number is plain text.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mlsys.book.numbers import html_provenance_coverage

ROOT = Path(__file__).resolve().parents[2]
EXTENSION = ROOT / "_extensions" / "mlsys"
BOOK_COPY = ROOT / "book" / "quarto" / "_extensions" / "mlsys"
QUARTO = shutil.which("quarto") or "/usr/local/bin/quarto"


def test_extension_declares_its_filter():
    manifest = yaml.safe_load((EXTENSION / "_extension.yml").read_text(encoding="utf-8"))
    filters = manifest["contributes"]["filters"]
    assert filters == ["mlsys.lua"]
    lua = (EXTENSION / "mlsys.lua").read_text(encoding="utf-8")
    for asset in ("mlsys.js", "mlsys.css"):
        assert (EXTENSION / asset).is_file() and asset in lua


def test_the_book_copy_is_identical():
    # Quarto does not follow a symlinked extension directory, so the book keeps a copy.
    names = sorted(p.name for p in EXTENSION.iterdir())
    assert names == sorted(p.name for p in BOOK_COPY.iterdir())
    for name in names:
        assert (EXTENSION / name).read_bytes() == (BOOK_COPY / name).read_bytes(), name


def test_site_and_book_enable_it():
    # by the extension's name, or (the site, whose root also holds the mlsys/ package that
    # the bare name would resolve to) by the path of the extension's filter
    enabled = {"mlsys", "_extensions/mlsys/mlsys.lua"}
    for config in (ROOT / "_quarto.yml", ROOT / "book" / "quarto" / "_quarto.yml"):
        filters = yaml.safe_load(config.read_text(encoding="utf-8"))["filters"]
        assert enabled & set(filters), config


_PAGE = """---
title: provenance
---

```{python}
from mlsys import Hardware
from mlsys.formatting import fmt
```

An H100 reads `{python} fmt(Hardware.H100.memory_bandwidth)`; twice that is
`{python} fmt(Hardware.H100.memory_bandwidth * 2)`.
"""


@pytest.mark.render
@pytest.mark.slow
def test_real_quarto_shows_the_datasheet_on_hover(tmp_path):
    if not Path(QUARTO).exists():
        pytest.skip("no quarto CLI")
    env = {**os.environ, "QUARTO_PYTHON": sys.executable}
    project = tmp_path / "book"
    project.mkdir()
    (project / "_quarto.yml").write_text("project:\n  type: default\nfilters:\n  - mlsys\n")
    (project / "page.qmd").write_text(_PAGE)
    run = {"cwd": project, "env": env, "capture_output": True, "text": True, "timeout": 300}
    added = subprocess.run([QUARTO, "add", str(ROOT), "--no-prompt"], **run)
    assert added.returncode == 0, added.stderr
    assert (project / "_extensions" / "mlsys" / "mlsys.lua").is_file()

    html = subprocess.run([QUARTO, "render", "page.qmd", "--to", "html"], **run)
    assert html.returncode == 0, html.stderr[-2000:]
    page = (project / "page.html").read_text(encoding="utf-8")
    coverage = html_provenance_coverage(page)
    # The doubled bandwidth is computed from the catalog value and keeps its origin.
    assert (coverage.with_source, coverage.missing) == (2, ())
    start = page.index('<span class="mlsys-num" title="')
    tooltip = page[start : page.index(">", start)]
    assert "NVIDIA H100" in tooltip and "datasheet" in tooltip
    assert ">3.35&nbsp;TB/s<" in page[start:]
    assert "mlsys.js" in page and "mlsys.css" in page

    latex = subprocess.run([QUARTO, "render", "page.qmd", "--to", "latex"], **run)
    assert latex.returncode == 0, latex.stderr[-2000:]
    tex = (project / "page.tex").read_text(encoding="utf-8")
    # the no-break space between number and unit is "~" in LaTeX
    assert "An H100 reads 3.35~TB/s; twice that is 6.7~TB/s." in " ".join(tex.split())
    assert "mlsys-num" not in tex and "datasheet" not in tex
