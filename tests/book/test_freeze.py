"""``mlsys check --execute`` honours Quarto's freeze rule (quarto-cli ``freeze.ts``).

Quarto stores a chapter's executed results in
``_freeze/<dir>/<name>/execute-results/<ext>.json`` as ``{"hash", "result"}``, ``hash``
being the MD5 hex digest of the source with LF line endings; with ``freeze: auto`` they
are reused while the hash matches, with ``freeze: true`` always. These tests build such a
project by hand, computing the hash with hashlib as Quarto defines it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from mlsys.book.check import check_files
from mlsys.book.freeze import freeze_setting, frozen_chapter, source_hash, split_frozen

CHAPTER = """---
title: "A chapter"
---

```{python}
x = 1
nothing = ""
```

The value is `{python} x`, and this one was empty: `{python} nothing`.
"""


def _project(tmp_path: Path, freeze: str = "auto", frozen_from: str = CHAPTER) -> Path:
    (tmp_path / "_quarto.yml").write_text(
        f"project:\n  type: book\nexecute:\n  freeze: {freeze}\n", encoding="utf-8"
    )
    qmd = tmp_path / "chapters" / "one.qmd"
    qmd.parent.mkdir()
    qmd.write_text(CHAPTER, encoding="utf-8")
    results = tmp_path / "_freeze" / "chapters" / "one" / "execute-results"
    results.mkdir(parents=True)
    # What Quarto stores: the inline value 1 in place, the empty one left as code.
    markdown = "The value is 1, and this one was empty: `{python} nothing`.\n"
    digest = hashlib.md5(frozen_from.replace("\r\n", "\n").encode()).hexdigest()
    (results / "html.json").write_text(
        json.dumps({"hash": digest, "result": {"markdown": markdown}}), encoding="utf-8"
    )
    return qmd


def test_source_hash_is_md5_of_the_lf_text():
    # md5("a\n") is a well-known digest: 60b725f10c9c85c70d97880dfe8191b3
    assert source_hash("a\r\n") == "60b725f10c9c85c70d97880dfe8191b3"
    assert source_hash("a\n") == "60b725f10c9c85c70d97880dfe8191b3"


def test_fresh_frozen_chapter_is_not_executed(tmp_path):
    qmd = _project(tmp_path)
    chapter = frozen_chapter(qmd)
    assert chapter is not None and chapter.freeze == "auto"
    run, frozen = split_frozen([qmd])
    assert run == [] and [c.path for c in frozen] == [qmd]


def test_edited_chapter_runs_under_auto_but_not_under_true(tmp_path):
    qmd = _project(tmp_path, frozen_from=CHAPTER.replace("x = 1", "x = 2"))
    assert frozen_chapter(qmd) is None  # auto: the source changed since it was frozen
    (tmp_path / "_quarto.yml").write_text("execute:\n  freeze: true\n", encoding="utf-8")
    assert frozen_chapter(qmd) is not None  # true: Quarto reuses it whatever changed


def test_freeze_false_and_front_matter_override(tmp_path):
    qmd = _project(tmp_path, freeze="false")
    assert freeze_setting(qmd) is False and frozen_chapter(qmd) is None
    own = CHAPTER.replace('title: "A chapter"', 'title: "A chapter"\nexecute:\n  freeze: true')
    qmd.write_text(own, encoding="utf-8")
    assert freeze_setting(qmd) is True and frozen_chapter(qmd) is not None


def test_no_project_no_freeze(tmp_path):
    qmd = tmp_path / "loose.qmd"
    qmd.write_text(CHAPTER, encoding="utf-8")
    assert frozen_chapter(qmd) is None


def test_executed_check_reads_frozen_output_for_left_inline_values(tmp_path, monkeypatch):
    qmd = _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    findings = check_files([qmd], execute=True)  # nothing to execute: no kernel starts
    empty = [f for f in findings if f.code == "inline-empty"]
    assert len(empty) == 1, findings
    # `{python} nothing` sits on line 10 of CHAPTER (front matter 1-3, cell 5-8)
    assert empty[0].line == 10
    assert "nothing" in empty[0].message


def test_no_freeze_flag_parses():
    from argparse import ArgumentParser

    from mlsys.book.check_cli import add_arguments

    parser = ArgumentParser()
    add_arguments(parser)
    assert parser.parse_args(["--execute"]).freeze is True
    assert parser.parse_args(["--execute", "--no-freeze"]).freeze is False


def test_cli_says_which_chapters_it_left_frozen(tmp_path, capsys):
    from mlsys.cli import main

    qmd = _project(tmp_path)
    status = main(["check", "--execute", "--json", str(qmd)])
    captured = capsys.readouterr()
    assert status == 1  # the frozen output's empty inline value
    assert "1 chapter(s) not executed" in captured.err
    assert '"inline-empty"' in captured.out
