"""The mlsys book (``book/quarto``) passes its own build check.

The static check (names resolved against the installed package, no kernel) covers every
file of the book. The executed check runs the chapters in Jupyter kernels exactly as
Quarto's pre-render would, in one call with two kernels at a time, and then checks a few
of the printed numbers against the published results the chapters claim to reproduce.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from mlsys.cli import main

BOOK = Path(__file__).resolve().parents[2] / "book" / "quarto"
CHAPTERS = [
    "index.qmd",
    "chapters/hardware.qmd",
    "chapters/memory.qmd",
    "chapters/distributed.qmd",
    "chapters/serving.qmd",
    "chapters/reliability.qmd",
    "chapters/sustainability-economics.qmd",
]


@pytest.fixture(autouse=True)
def _outside_quarto(monkeypatch):
    # A render list left in the environment would narrow the check to its files.
    monkeypatch.delenv("QUARTO_PROJECT_INPUT_FILES", raising=False)
    monkeypatch.delenv("QUARTO_USE_FILE_FOR_PROJECT_INPUT_FILES", raising=False)


def test_book_config_lists_every_chapter():
    cfg = yaml.safe_load((BOOK / "_quarto.yml").read_text(encoding="utf-8"))
    assert cfg["project"]["type"] == "book"
    assert cfg["project"]["pre-render"] == "_mlsys_check.py ."
    assert cfg["execute"]["freeze"] == "auto"
    listed = cfg["book"]["chapters"]
    for chapter in CHAPTERS:
        assert chapter in listed
        assert (BOOK / chapter).is_file()
    assert "lab-parallelism-paradox.qmd" in listed
    assert cfg["book"]["appendices"] == ["appendix-emulation.qmd"]


def test_every_figure_cell_has_a_label_and_caption():
    for chapter in CHAPTERS[1:]:
        text = (BOOK / chapter).read_text(encoding="utf-8")
        labels = re.findall(r"#\| label: (fig-[\w-]+)", text)
        assert labels, f"{chapter} has no figure"
        for label in labels:
            block = text.split(f"#| label: {label}", 1)[1].split("```", 1)[0]
            assert "#| fig-cap:" in block, f"{chapter}: {label} has no fig-cap"
            assert f"@{label}" in text, f"{chapter}: {label} is never cross-referenced"


def test_every_citation_is_in_the_bibliography():
    bib = (BOOK / "references.bib").read_text(encoding="utf-8")
    keys = set(re.findall(r"@\w+\{([^,\s]+),", bib))
    cited = {}
    for qmd in sorted(BOOK.rglob("*.qmd")):
        if "_book" in qmd.parts or ".quarto" in qmd.parts:
            continue
        text = re.sub(r"```.*?```", "", qmd.read_text(encoding="utf-8"), flags=re.S)
        text = re.sub(r"`[^`]*`", "", text)  # inline code and expressions
        for key in re.findall(r"(?<![\w.])-?@([A-Za-z][\w:-]*[A-Za-z0-9])", text):
            if not key.startswith(("fig-", "tbl-", "eq-", "sec-", "lst-")):
                cited.setdefault(key, qmd.relative_to(BOOK).as_posix())
    unknown = {k: f for k, f in cited.items() if k not in keys}
    assert not unknown, f"citations missing from references.bib: {unknown}"
    assert len(cited) >= 15  # the chapters cite their sources


def test_static_check_of_the_whole_book(capsys):
    status = main(["check", str(BOOK)])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "0 errors" in out


@pytest.fixture(scope="module")
def executed():
    """Every chapter run once, two kernels at a time: path -> ExecutionResult."""
    from mlsys.book.kernel import execute_documents

    results = execute_documents([BOOK / c for c in CHAPTERS], jobs=2, timeout=120)
    return {Path(r.path).resolve(): r for r in results}


@pytest.mark.book
def test_executed_check_of_the_chapters(executed):
    assert len(executed) == len(CHAPTERS)
    problems = [f.format() for r in executed.values() for f in r.findings]
    assert not problems, "\n".join(problems)
    assert all(r.completed for r in executed.values())


def _shown(text):
    """What the reader sees of an inline value: fmt wraps a number in a Pandoc span
    carrying its provenance, ``[1,287 MWh]{.mlsys-num title="..."}``, its number and unit
    joined by a no-break space (read here as a space)."""
    return re.sub(r"\[([^\]]*)\]\{[^}]*\}", r"\1", text).replace("\u00a0", " ")


def _number(text):
    return float(re.sub(r"[^\d.]", "", _shown(text)))


@pytest.mark.book
def test_sustainability_chapter_prints_pattersons_gpt3_row(executed):
    res = executed[(BOOK / "chapters/sustainability-economics.qmd").resolve()]
    values = {v.expression: v.text for v in res.inline_values}
    mwh = _number(values['fmt(gpt3.energy, "MWh", digits=4)'])
    tonnes = _number(values['fmt(gpt3.carbon, "tCO2e", digits=4)'])
    # Patterson et al. (2021), Table 4: 1,287 MWh and 552.1 tCO2e
    assert mwh == pytest.approx(1287, rel=0.01)
    assert tonnes == pytest.approx(552.1, rel=0.01)


@pytest.mark.book
def test_memory_chapter_prints_the_zero_table_inputs(executed):
    res = executed[(BOOK / "chapters/memory.qmd").resolve()]
    values = [_shown(v.text) for v in res.inline_values]
    # 16 bytes per parameter of Llama 2 70B (68.98B parameters): about 1.1 TB
    assert "1.1 TB" in values
