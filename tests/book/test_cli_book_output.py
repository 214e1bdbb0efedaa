"""What ``mlsys numbers`` and ``mlsys check --execute`` tell the person who runs them.

The manifest of a whole book is about 150 KB of JSON: a terminal is no place for it.
Without ``--out`` it goes to ``numbers.json``; ``--out -`` prints it (the summary then
goes to standard error, so the JSON can be piped). ``check --execute`` runs for tens of
seconds: it says on standard error as each chapter finishes.
"""

from __future__ import annotations

import json

import pytest

from mlsys.book.numbers import load_manifest
from mlsys.book.numbers_cli import DEFAULT_OUT
from mlsys.cli import main

CHAPTER = "```{python}\nanswer = 6 * 7\n```\n\nThe answer is `{python} answer`.\n"


@pytest.mark.book
def test_default_file_and_standard_output(tmp_path, monkeypatch, capsys):
    book = tmp_path / "book"
    book.mkdir()
    (book / "one.qmd").write_text(CHAPTER, encoding="utf-8")
    monkeypatch.chdir(tmp_path)

    assert main(["numbers", "book"]) == 0
    captured = capsys.readouterr()
    assert captured.out == f"mlsys numbers: wrote 1 value from 1 file to {DEFAULT_OUT}\n"
    manifest = load_manifest(tmp_path / DEFAULT_OUT)
    assert [v["text"] for v in manifest["files"]["one.qmd"]] == ["42"]

    assert main(["numbers", "book", "--out", "-"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out)["files"]["one.qmd"][0]["text"] == "42"
    assert captured.err.strip().endswith("to standard output")


@pytest.mark.book
def test_check_execute_reports_each_chapter_as_it_finishes(tmp_path, capsys):
    book = tmp_path / "book"
    book.mkdir()
    (book / "one.qmd").write_text(CHAPTER, encoding="utf-8")
    (book / "two.qmd").write_text(CHAPTER.replace("6 * 7", "6 * 8"), encoding="utf-8")

    assert main(["check", str(book), "--execute", "--no-freeze", "--jobs", "1"]) == 0
    lines = capsys.readouterr().err.splitlines()
    progress = [line for line in lines if "] ran " in line]
    assert progress == [
        f"mlsys check: [1/2] ran {book / 'one.qmd'}: ok",
        f"mlsys check: [2/2] ran {book / 'two.qmd'}: ok",
    ]
