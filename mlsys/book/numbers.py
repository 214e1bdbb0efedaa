"""The manifest of every number a book prints, and its diff.

``mlsys numbers book/ --out numbers.json`` runs every chapter (as
:mod:`mlsys.book.kernel` does, the way Quarto does) and records each inline value: file,
line, column, expression and the text Quarto inserts. Committed next to the book, the
manifest turns "did this change move any number in the book?" into a ``git diff`` — or
into ``mlsys numbers book/ --diff numbers.json``, which names each changed value's
file:line with its old and new text.

Values are matched across versions by (file, expression, occurrence of that expression
in the file), not by line, so editing prose above a number does not make it "change".

Each value also records where it comes from: ``source`` is the hover text the page shows
for it (a catalog entry and its datasheet or paper, or the solver and its inputs; see
:mod:`mlsys.core.provenance`), ``None`` when none is known. ``text`` is the number as a
reader sees it, without the span that carries the source.
:func:`manifest_provenance_coverage` and :func:`html_provenance_coverage` count the
values with and without a source, in a manifest or in a rendered HTML page.

Examples
--------
>>> old = {"files": {"ch.qmd": [{"line": 3, "col": 5, "expression": "bw", "text": "3.35 TB/s"}]}}
>>> new = {"files": {"ch.qmd": [{"line": 4, "col": 5, "expression": "bw", "text": "4.8 TB/s"}]}}
>>> print(format_diff(diff_manifests(old, new)))
ch.qmd:4: bw: 3.35 TB/s → 4.8 TB/s
1 changed, 0 added, 0 removed
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from mlsys.book.check import Finding, find_qmd_files
from mlsys.core.provenance import split_span

__all__ = [
    "MANIFEST_VERSION",
    "NumberChange",
    "NumbersDiff",
    "collect_numbers",
    "dump_manifest",
    "load_manifest",
    "diff_manifests",
    "format_diff",
    "ProvenanceCoverage",
    "manifest_provenance_coverage",
    "html_provenance_coverage",
]

#: Format version written into every manifest.
MANIFEST_VERSION = 1


@dataclass(frozen=True)
class NumberChange:
    """One value that differs between two manifests.

    Attributes
    ----------
    file : str
        Chapter, relative to the book directory.
    line : int
        Line in the newer manifest (the older one for a removed value).
    expression : str
        The inline expression.
    old, new : str or None
        Rendered text before and after (``None``: the value was added / removed).
    """

    file: str
    line: int
    expression: str
    old: str | None
    new: str | None

    def format(self) -> str:
        """``file:line: expression: old → new`` (or ``added: new`` / ``removed: old``)."""
        where = f"{self.file}:{self.line}: {self.expression}"
        if self.old is None:
            return f"{where}: added: {self.new}"
        if self.new is None:
            return f"{where}: removed: {self.old}"
        return f"{where}: {self.old} → {self.new}"


@dataclass
class NumbersDiff:
    """What changed between two manifests.

    Attributes
    ----------
    changed, added, removed : list of NumberChange
    """

    changed: list[NumberChange] = field(default_factory=list)
    added: list[NumberChange] = field(default_factory=list)
    removed: list[NumberChange] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.changed or self.added or self.removed)

    def to_dict(self) -> dict[str, list[dict[str, Any]]]:
        """JSON-ready: ``{"changed": [...], "added": [...], "removed": [...]}``."""
        from dataclasses import asdict

        return {k: [asdict(c) for c in getattr(self, k)] for k in ("changed", "added", "removed")}


def _base_dir(paths: Sequence[str | Path]) -> Path:
    """Names in the manifest are relative to this directory (the book's, usually)."""
    if len(paths) == 1:
        p = Path(paths[0])
        return p if p.is_dir() else p.parent
    return Path(".")


def _relative(path: Path, base: Path) -> str:
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def collect_numbers(
    paths: Sequence[str | Path], *, jobs: int = 2, timeout: float = 120.0
) -> tuple[dict[str, Any], list[Finding]]:
    """Run the chapters under ``paths`` and record every inline value.

    Parameters
    ----------
    paths : sequence of str or Path
        .qmd files and directories. With one directory, manifest names are relative
        to it, so the manifest does not depend on where the command runs.
    jobs : int
        Chapters executed at once.
    timeout : float
        Seconds allowed to each cell.

    Returns
    -------
    (dict, list of Finding)
        The manifest and the findings of the run (an error means some numbers are
        missing from the manifest).
    """
    from mlsys.book.kernel import execute_documents

    base = _base_dir(paths)
    files = find_qmd_files(paths)
    manifest: dict[str, Any] = {"mlsys_numbers": MANIFEST_VERSION, "files": {}}
    findings: list[Finding] = []
    by_file: dict[str, list[dict[str, Any]]] = {}
    for result in execute_documents(files, jobs=jobs, timeout=timeout):
        findings.extend(result.findings)
        for v in result.inline_values:
            # A value written in an included file is recorded there, once per distinct
            # text (two chapters may include the same file).
            # The kernel may hand over the span Quarto inserts or, split already, the
            # plain text with its source beside it.
            text, source = split_span(v.text) if v.mime == "text/markdown" else (v.text, None)
            source = getattr(v, "source", None) or source
            entry = {
                "line": v.line,
                "col": v.col,
                "expression": v.expression,
                "text": text,
                "source": source,
            }
            values = by_file.setdefault(_relative(Path(v.file), base), [])
            if entry not in values:
                values.append(entry)
    for name, values in sorted(by_file.items()):
        manifest["files"][name] = sorted(values, key=lambda e: (e["line"], e["col"], e["text"]))
    return manifest, sorted(findings)


def dump_manifest(manifest: dict[str, Any]) -> str:
    """Stable JSON text: sorted keys, two-space indent, UTF-8 kept, final newline.

    Parameters
    ----------
    manifest : dict

    Returns
    -------
    str
    """
    return json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def load_manifest(path: str | Path) -> dict[str, Any]:
    """Read a manifest written by :func:`dump_manifest`.

    Parameters
    ----------
    path : str or Path

    Returns
    -------
    dict

    Raises
    ------
    ValueError
        The file is not a numbers manifest.
    """
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        raise ValueError(f"{path} is not an mlsys numbers manifest (no 'files' mapping)")
    return data


def _keyed(manifest: dict[str, Any]) -> dict[tuple[str, str, int], dict[str, Any]]:
    out: dict[tuple[str, str, int], dict[str, Any]] = {}
    for file, values in manifest.get("files", {}).items():
        seen: dict[str, int] = {}
        for v in sorted(values, key=lambda v: (v["line"], v.get("col", 0))):
            n = seen.get(v["expression"], 0)
            seen[v["expression"]] = n + 1
            out[(file, v["expression"], n)] = v
    return out


def diff_manifests(old: dict[str, Any], new: dict[str, Any]) -> NumbersDiff:
    """Values changed, added and removed between two manifests.

    Parameters
    ----------
    old, new : dict
        Manifests.

    Returns
    -------
    NumbersDiff
        Each list sorted by file and line.
    """
    a, b = _keyed(old), _keyed(new)
    diff = NumbersDiff()
    for key in sorted(a.keys() | b.keys()):
        file, expr, _ = key
        if key not in a:
            diff.added.append(NumberChange(file, b[key]["line"], expr, None, b[key]["text"]))
        elif key not in b:
            diff.removed.append(NumberChange(file, a[key]["line"], expr, a[key]["text"], None))
        elif a[key]["text"] != b[key]["text"]:
            diff.changed.append(
                NumberChange(file, b[key]["line"], expr, a[key]["text"], b[key]["text"])
            )
    for items in (diff.changed, diff.added, diff.removed):
        items.sort(key=lambda c: (c.file, c.line, c.expression))
    return diff


def format_diff(diff: NumbersDiff) -> str:
    """One line per change and a summary line.

    Parameters
    ----------
    diff : NumbersDiff

    Returns
    -------
    str
    """
    lines = [c.format() for c in [*diff.changed, *diff.added, *diff.removed]]
    lines.append(
        f"{len(diff.changed)} changed, {len(diff.added)} added, {len(diff.removed)} removed"
    )
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------
# How many printed numbers say where they come from
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProvenanceCoverage:
    """How many printed numbers carry their origin.

    Attributes
    ----------
    with_source : int
        Numbers whose origin is recorded (a hover text in HTML).
    without_source : int
        Numbers printed without one.
    missing : tuple of str
        Where the ones without a source are (``file:line: expression`` for a manifest,
        the number's text for a page), for an author to fix.
    """

    with_source: int
    without_source: int
    missing: tuple[str, ...] = ()

    @property
    def total(self) -> int:
        """All numbers counted."""
        return self.with_source + self.without_source

    @property
    def fraction(self) -> float:
        """Share with a source, in [0, 1] (1 when there is nothing to count)."""
        return self.with_source / self.total if self.total else 1.0

    def __add__(self, other: ProvenanceCoverage) -> ProvenanceCoverage:
        return ProvenanceCoverage(
            self.with_source + other.with_source,
            self.without_source + other.without_source,
            self.missing + other.missing,
        )


# What may stand before a number's first digit: "~3×", "≈ 2", "$4.2M", "\\$5", "−1.5", "(3)".
_NUMBER_LEAD = frozenset("~≈$\\-−+±<>≤≥(*_ ")


def _is_number(text: str) -> bool:
    """Inline values that show a number, not a name.

    A name such as "compute", "bf16" or "Llama 2 70B" (a catalog label; it has digits but
    is not a quantity that can have a source) does not count: the text must start with a
    number, after at most a sign, an approximation mark, a currency sign or emphasis.
    """
    for ch in text:
        if ch.isdigit():
            return True
        if ch not in _NUMBER_LEAD:
            return False
    return False


def manifest_provenance_coverage(manifest: dict[str, Any]) -> ProvenanceCoverage:
    """Count a manifest's inline numbers with and without a recorded source.

    Every inline value whose text starts with a number counts, whether or not it came
    from ``fmt``: a bare ``{python} 2 * layers`` is a number without a source. A name
    (``llama70b.label`` → "Llama 2 70B", ``"bf16"``) is not a number, digits or not.

    Parameters
    ----------
    manifest : dict
        As :func:`collect_numbers` writes it.

    Returns
    -------
    ProvenanceCoverage

    Examples
    --------
    >>> m = {"files": {"a.qmd": [
    ...     {"line": 3, "expression": "fmt(bw)", "text": "3.35 TB/s", "source": "H100 ..."},
    ...     {"line": 4, "expression": "n", "text": "8", "source": None},
    ...     {"line": 5, "expression": "x.bound", "text": "memory", "source": None},
    ...     {"line": 6, "expression": "m.label", "text": "Llama 2 70B", "source": None}]}}
    >>> c = manifest_provenance_coverage(m)
    >>> c.with_source, c.without_source, c.missing
    (1, 1, ('a.qmd:4: n',))
    """
    have, lack, missing = 0, 0, []
    for file, values in sorted(manifest.get("files", {}).items()):
        for v in values:
            if not _is_number(v.get("text", "")):
                continue
            if v.get("source"):
                have += 1
            else:
                lack += 1
                missing.append(f"{file}:{v['line']}: {v['expression']}")
    return ProvenanceCoverage(have, lack, tuple(missing))


class _NumberSpans(HTMLParser):
    """Collects the text of ``span.mlsys-num`` elements and whether each has a title."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, bool]] = []
        self._open: list[list[Any]] = []  # [text parts, has title, depth]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._open:
            self._open[-1][2] += 1
        if tag != "span":
            return
        values = dict(attrs)
        classes = (values.get("class") or "").split()
        if "mlsys-num" in classes:
            titled = bool(values.get("title") or values.get("data-mlsys-source"))
            self._open.append([[], titled, 0])

    def handle_endtag(self, tag: str) -> None:
        if not self._open:
            return
        if self._open[-1][2] > 0:
            self._open[-1][2] -= 1
            return
        parts, titled, _ = self._open.pop()
        self.found.append(("".join(parts).strip(), titled))

    def handle_data(self, data: str) -> None:
        for item in self._open:
            item[0].append(data)


def html_provenance_coverage(pages: str | Iterable[str]) -> ProvenanceCoverage:
    """Count the numbers mlsys printed in rendered HTML, with and without a hover source.

    mlsys marks every number its formatting functions print (``span.mlsys-num``) and
    gives it a ``title`` when its origin is known; this reads the real render, so it
    counts what a reader sees. Numbers printed without ``fmt`` (a bare ``{python} n``)
    carry no mark and are not seen here: :func:`manifest_provenance_coverage` counts
    those too.

    Parameters
    ----------
    pages : str or iterable of str
        The HTML text of one page, or of several.

    Returns
    -------
    ProvenanceCoverage
        ``missing`` lists the texts of the numbers without a source.

    Examples
    --------
    >>> page = ('<p><span class="mlsys-num" title="H100 datasheet">3.35 TB/s</span> and '
    ...         '<span class="mlsys-num">8</span></p>')
    >>> c = html_provenance_coverage(page)
    >>> c.with_source, c.without_source, c.missing
    (1, 1, ('8',))
    """
    total = ProvenanceCoverage(0, 0)
    for page in [pages] if isinstance(pages, str) else pages:
        parser = _NumberSpans()
        parser.feed(page)
        parser.close()
        have = sum(1 for _, titled in parser.found if titled)
        missing = tuple(text for text, titled in parser.found if not titled)
        total = total + ProvenanceCoverage(have, len(missing), missing)
    return total
