"""Sources and notes under a table, each once (mlsys.book.tables)."""

from __future__ import annotations

from mlsys.book.tables import lettered_notes, numbered_sources


def test_sources_are_numbered_in_order_of_first_use_and_listed_once():
    rows = [("B (2021)", None), ("A  (2020).", "https://a"), ("B (2021)", None), ("C", None)]
    marks, block = numbered_sources(rows)
    # spacing and a final full stop do not make a source new
    assert marks == [1, 2, 1, 3]
    assert block.count("B (2021)") == 1 and "[2]\u00a0A (2020). <https://a>" in block
    # HTML: a small-type div; LaTeX: the book's mlsyssources environment around it
    assert block.startswith("::: {.mlsys-sources}") and "\\begin{mlsyssources}" in block


def test_a_note_shared_by_rows_is_stated_once():
    note = "the reason, " + "explained at length " * 40
    marks, block = lettered_notes([note, None, note, "another", ""])
    assert marks == ["a", "", "a", "b", ""]
    assert block.count("the reason,") == 1 and "(b)\u00a0another" in block
    assert lettered_notes([None, ""]) == (["", ""], "")


def test_more_than_26_notes_take_two_letters():
    marks, _ = lettered_notes([f"note {i}" for i in range(28)])
    assert marks[25:] == ["z", "aa", "ab"]
