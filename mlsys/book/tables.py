"""Markdown tables for book and site pages: sources and notes listed once, under the table.

A table whose rows cite sources or carry explanations reads best when each row holds a
short mark and the text sits once below it: a footnote per row runs a printed table
over pages, and a note repeated in every row it concerns makes a page ten times taller
than its content. :func:`numbered_sources` numbers a table's sources in order of first
use ("[1]"); :func:`lettered_notes` letters its notes ("a"); each returns the marks of
the rows and the Markdown block to print under the table.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["numbered_sources", "lettered_notes"]

_NBSP = "\u00a0"


def _block(title: str, items: list[str], sep: str = " ") -> str:
    """A compact list in small type: a ``.mlsys-sources`` div in HTML, a ``mlsyssources``
    environment in LaTeX (``book/quarto/mlsys-pdf.tex``; a page without it ignores it)."""
    begin = "```{=latex}\n\\begin{mlsyssources}\n```"
    end = "```{=latex}\n\\end{mlsyssources}\n```"
    body = f"**{title}**{sep}" + sep.join(items)
    return f"::: {{.mlsys-sources}}\n{begin}\n\n{body}\n\n{end}\n:::"


def numbered_sources(
    sources: Sequence[tuple[str, str | None]], title: str = "Sources."
) -> tuple[list[int], str]:
    """Number a table's sources in order of first use, each once.

    Parameters
    ----------
    sources : sequence of (str, str or None)
        One ``(citation, url)`` per row, in row order; ``url`` may be None. Citations
        that read the same (spacing aside) with the same URL are one source.
    title : str
        The lead-in of the list.

    Returns
    -------
    (list of int, str)
        The number of each row's source (1-based), and the Markdown block that lists
        them: ``[1] citation. <url>`` each, in small type under the table.

    Examples
    --------
    >>> rows = [("A (2020)", None), ("B", "https://b"), ("A (2020)", None)]
    >>> marks, block = numbered_sources(rows)
    >>> marks
    [1, 2, 1]
    >>> "[1]\\u00a0A (2020). [2]\\u00a0B. <https://b>" in block
    True
    """
    numbers: dict[tuple[str, str | None], int] = {}
    items: list[str] = []
    marks: list[int] = []
    for citation, url in sources:
        text = " ".join(citation.split()).rstrip(".")
        key = (text, url or None)
        if key not in numbers:
            numbers[key] = len(numbers) + 1
            items.append(f"[{numbers[key]}]{_NBSP}{text}." + (f" <{url}>" if url else ""))
        marks.append(numbers[key])
    return marks, _block(title, items)


def lettered_notes(notes: Sequence[str | None], title: str = "Notes.") -> tuple[list[str], str]:
    """Letter a table's notes in order of first use, each once; rows without one get "".

    Parameters
    ----------
    notes : sequence of str or None
        One note per row (None or "" for none). Rows that share a note share its letter.
    title : str
        The lead-in of the list.

    Returns
    -------
    (list of str, str)
        Each row's letter ("a", "b", ... "z", "aa", ...; "" without a note), and the
        Markdown block that states each note once (empty when no row has one).

    Examples
    --------
    >>> marks, block = lettered_notes(["long note", None, "long note", "other"])
    >>> marks
    ['a', '', 'a', 'b']
    >>> block.count("long note")
    1
    """
    letters: dict[str, str] = {}
    items: list[str] = []
    marks: list[str] = []
    for note in notes:
        text = " ".join((note or "").split())
        if not text:
            marks.append("")
            continue
        if text not in letters:
            letters[text] = _letter(len(letters))
            items.append(f"({letters[text]}){_NBSP}{text}")
        marks.append(letters[text])
    # a note is a paragraph of its own; sources are short and run on
    return marks, (_block(title, items, "\n\n") if items else "")


def _letter(index: int) -> str:
    """0 → "a", 25 → "z", 26 → "aa"."""
    out = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        out = chr(ord("a") + rest) + out
    return out
