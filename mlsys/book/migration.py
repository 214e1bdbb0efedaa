"""Migration report: which printed numbers change when a chapter moves to mlsys, and why.

A chapter written for the textbook's own package (*Machine Learning Systems*,
harvard-edge/cs249r_book) prints some numbers that mlsys computes differently: it serves
the catalog's value where the book's package had a wrong or differently-defined one (80 GiB
vs the 81,559 MiB an H100 exposes, B200 sparse vs dense FLOP/s, ResNet-50 multiply-adds
counted as FLOPs, ...). Those differences are kept once, with the book's value and the
reason: ``[differences]`` of ``book_assumptions.toml`` for constant names (compatA) and of
compatB's ``book_*.toml`` for registry paths (each referring to the former).

:func:`migration_report` runs the chapter twice in this process, once as mlsys serves it
and once with every difference set back to the book's value ("before"), and lists each
inline number whose text changes. Each change is explained by re-running with one
difference at a time: the differences that alone reproduce the change are its cause,
with the reason and the source of mlsys's value. The chapter's code runs as written
after :func:`mlsys.commands.migrate.rewrite_imports`; nothing of it is stored.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Difference",
    "NumberChange",
    "ChapterRun",
    "MigrationReport",
    "differences",
    "book_values",
    "run_chapter",
    "migration_report",
    "format_report",
]

_BOOK_FILES = ("book_hardware.toml", "book_models.toml", "book_systems.toml")
_UNIT_WORDS = {
    r"\bTFLOPs\b": "Tflop_count",
    r"\bflop\b": "flop_count",
    r"\bparam\b": "parameter_count",
}


@dataclass(frozen=True)
class Difference:
    """A name or registry path whose value mlsys serves differently from the book.

    Attributes
    ----------
    key : str
        A constant of :mod:`mlsys.constants` (``"H100_MEM_CAPACITY"``) or a registry
        path (``"Hardware.Cloud.H100.memory.capacity"``).
    book : str
        The value the book's own package printed, as text (``"80 GiB"``).
    reason : str
        Why mlsys's value is the one served.
    source : str
        Where mlsys's value comes from (catalog entry / data file and its reference).
    """

    key: str
    book: str
    reason: str
    source: str = ""

    @property
    def is_path(self) -> bool:
        """Whether :attr:`key` is a dotted registry path (not a constant name)."""
        return "." in self.key

    @property
    def token(self) -> str:
        """The text a chapter must contain to be affected: a constant's name, or the entry
        a path names (its last capitalised part: ``GPT2`` of
        ``Models.Language.GPT2.parameters``), however the chapter reaches it."""
        if not self.is_path:
            return self.key
        return [part for part in self.key.split(".") if part[:1].isupper()][-1]


@dataclass(frozen=True)
class NumberChange:
    """One inline number that prints differently on mlsys.

    Attributes
    ----------
    expression : str
        The inline expression (``"GPT2TrainingMem.P_str"``).
    before : str
        Text with the book's values.
    after : str
        Text on mlsys.
    causes : tuple of Difference
        The differences that alone reproduce the change (empty if none alone does).
    """

    expression: str
    before: str
    after: str
    causes: tuple[Difference, ...] = ()


@dataclass
class ChapterRun:
    """What one in-process run of a chapter printed.

    Attributes
    ----------
    values : list of (str, str)
        ``(expression, printed text)`` per inline expression, in document order
        (the text is the error name for an expression that fails).
    errors : list of str
        ``"cell N: ErrorName: message"`` for each cell that raised.
    """

    values: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@dataclass
class MigrationReport:
    """The printed numbers of one chapter that change on mlsys.

    Attributes
    ----------
    name : str
        The chapter (file name).
    changes : list of NumberChange
        Every inline number whose text changes.
    inline_total : int
        Inline expressions in the chapter.
    errors_after, errors_before : list of str
        Cells that raised on mlsys / with the book's values.
    """

    name: str
    changes: list[NumberChange]
    inline_total: int
    errors_after: list[str]
    errors_before: list[str]


def _catalog_source(key: str) -> str:
    import mlsys.constants as constants

    info = constants.provenance(key) if key in dir(constants) else {}
    records = info.get("records") or {}
    if isinstance(records, dict) and records:
        first = next(iter(records.values()))
        ref = first.get("reference") if isinstance(first, dict) else getattr(first, "reference", "")
        return str(ref or "")
    return str(info.get("reference") or info.get("source") or "")


# the catalog field behind a book attribute name, for the provenance of mlsys's value
_FIELD_OF = {
    "capacity": "memory_capacity",
    "bandwidth": "memory_bandwidth",
    "peak_flops": "peak_flops",
    "latency_us": "latency",
    "parameters": "params",
    "inference_flops": "flops_per_sample",
}


def _path_source(path: str) -> str:
    """The catalog provenance of the entry behind a registry path, as text."""
    import mlsys

    obj: Any = mlsys
    entry = None
    for part in path.split(".")[:-1]:
        obj = getattr(obj, part)
        entry = getattr(obj, "entry", entry) if not isinstance(obj, type) else entry
    leaf = path.split(".")[-1]
    if entry is None or not hasattr(entry, "provenance_of"):
        return _book_file_source(path)
    record = entry.provenance_of(_FIELD_OF.get(leaf, leaf))
    if record is None:
        return ""
    return f"{type(entry).__name__.replace('Catalog', '')} {entry.name}: {record.reference}"


# a book device's nested name -> its field in book_hardware.toml
_DEVICE_FIELD = {"memory.bandwidth": "memory_bw", "memory.capacity": "memory_capacity"}


_NOT_PRINTED = "(not printed: "


def _book_file_source(path: str) -> str:
    """The citation of a figure of compatB's ``book_*.toml`` files behind a path, as text."""
    import mlsys

    obj: Any = mlsys
    owner, rest = None, []
    parts = path.split(".")
    for i, part in enumerate(parts[:-1]):
        obj = getattr(obj, part)
        if isinstance(getattr(obj, "__dict__", {}).get("sources"), dict):
            owner, rest = obj, parts[i + 1 :]
    if owner is None:
        return ""
    field = ".".join(rest)
    record = owner.__dict__["sources"].get(_DEVICE_FIELD.get(field, field), {})
    where = f"{owner.__dict__.get('book_name', type(owner).__name__)}"
    return f"{where}: {record['reference']}" if record.get("reference") else ""


def differences() -> list[Difference]:
    """Every difference mlsys knows of, constant names first, then registry paths.

    Returns
    -------
    list of Difference
    """
    import mlsys.constants as constants
    from mlsys.core.catalog import load_table

    table = constants.book_differences()
    out = [
        Difference(name, row["book"], row["reason"], _catalog_source(name))
        for name, row in table.items()
    ]
    for filename in _BOOK_FILES:
        for path, spec in load_table(filename).get("differences", {}).items():
            if "ref" not in spec:  # a figure only compatB's files hold: its own book/reason
                out.append(Difference(path, spec["book"], spec["reason"], _path_source(path)))
                continue
            ref = spec["ref"]
            row = table[ref]
            source = _path_source(path) or f"{ref}: {_catalog_source(ref)}"
            out.append(Difference(path, row["book"], row["reason"], source))
    return out


def _book_quantity(text: str) -> Any:
    from mlsys.core.units import Q_, to_book_counts

    try:
        return float(text)
    except ValueError:
        pass
    for pattern, unit in _UNIT_WORDS.items():
        text = re.sub(pattern, unit, text)
    return to_book_counts(Q_(text))


def _resolve_parent(path: str) -> tuple[Any, str]:
    import mlsys

    obj: Any = mlsys
    parts = path.split(".")
    for part in parts[:-1]:
        obj = getattr(obj, part)
    return obj, parts[-1]


_MISSING = object()


@contextlib.contextmanager
def book_values(diffs: Sequence[Difference]) -> Iterator[None]:
    """Serve the book's value for each difference while the block runs.

    Constants are set in :mod:`mlsys.constants`' namespace; registry paths on the views
    they name. Everything is restored on exit.

    Parameters
    ----------
    diffs : sequence of Difference
        The differences to undo.

    Yields
    ------
    None
    """
    import mlsys.constants as constants

    undo: list[tuple[Any, str, Any]] = []
    try:
        for diff in diffs:
            value = _book_quantity(diff.book)
            if diff.is_path:
                parent, attr = _resolve_parent(diff.key)
                undo.append((parent, attr, parent.__dict__.get(attr, _MISSING)))
                if isinstance(getattr(parent, attr), float | int) and hasattr(value, "m_as"):
                    value = float(value.m_as(""))
                setattr(parent, attr, value)
            else:
                namespace = vars(constants)
                undo.append((namespace, diff.key, namespace.get(diff.key, _MISSING)))
                namespace[diff.key] = value
        yield
    finally:
        for target, attr, old in reversed(undo):
            if isinstance(target, dict):
                if old is _MISSING:
                    target.pop(attr, None)
                else:
                    target[attr] = old
            elif old is _MISSING:
                target.__dict__.pop(attr, None)
            else:
                setattr(target, attr, old)


def run_chapter(text: str) -> ChapterRun:
    """Run a chapter's Python cells and inline expressions in this process.

    Imports are migrated first (:func:`mlsys.commands.migrate.rewrite_imports`); cells
    run in document order in one namespace, inline expressions after them (as Quarto's
    Jupyter engine evaluates them).

    Parameters
    ----------
    text : str
        The chapter (.qmd) text.

    Returns
    -------
    ChapterRun
    """
    from mlsys.book.qmd import parse_qmd
    from mlsys.commands.migrate import rewrite_imports

    doc = parse_qmd(text)
    namespace: dict[str, Any] = {"__name__": "__chapter__"}
    run = ChapterRun()
    for number, cell in enumerate(doc.python_cells, start=1):
        if not doc.runs(cell):
            continue
        try:
            exec(compile(rewrite_imports(cell.code), f"<cell {number}>", "exec"), namespace)
        except Exception as exc:  # a chapter's own failure is data for the report
            run.errors.append(f"cell {number}: {type(exc).__name__}: {exc}")
    for inline in doc.inlines:
        try:
            value = eval(inline.expression, namespace)
            run.values.append((inline.expression, value if isinstance(value, str) else str(value)))
        except Exception as exc:
            # an expression of a failed cell: shown as not printed, with the reason
            run.values.append((inline.expression, f"{_NOT_PRINTED}{type(exc).__name__})"))
    return run


def migration_report(text: str, name: str = "chapter") -> MigrationReport:
    """The inline numbers of a chapter that print differently on mlsys, with causes.

    Parameters
    ----------
    text : str
        The chapter as written for the book's own package (imports not yet migrated).
    name : str
        Label for the report.

    Returns
    -------
    MigrationReport
    """
    known = differences()
    after = run_chapter(text)
    with book_values(known):
        before = run_chapter(text)
    changed = [
        (i, expr, old, new)
        for i, ((expr, old), (_, new)) in enumerate(zip(before.values, after.values, strict=True))
        if old != new
    ]
    candidates = [d for d in known if d.token in text]
    # per changed number: differences whose revert alone gives the book's number, those
    # that move it elsewhere, and those that only make its cell fail (a chapter check
    # that needs two reverted values together); the first non-empty group is the cause
    exact: dict[int, list[Difference]] = {i: [] for i, *_ in changed}
    moves: dict[int, list[Difference]] = {i: [] for i, *_ in changed}
    breaks: dict[int, list[Difference]] = {i: [] for i, *_ in changed}
    if changed:
        for diff in candidates:
            with book_values([diff]):
                alone = run_chapter(text)
            for i, _expr, old, _new in changed:
                value = alone.values[i][1]
                if value == after.values[i][1]:
                    continue
                if value == old:
                    exact[i].append(diff)
                elif value.startswith(_NOT_PRINTED):
                    breaks[i].append(diff)
                else:
                    moves[i].append(diff)
    causes = {i: exact[i] or moves[i] or breaks[i] for i, *_ in changed}
    return MigrationReport(
        name=name,
        changes=[NumberChange(expr, old, new, tuple(causes[i])) for i, expr, old, new in changed],
        inline_total=len(after.values),
        errors_after=after.errors,
        errors_before=before.errors,
    )


def format_report(report: MigrationReport) -> str:
    """The report as a Markdown table, one row per changed number.

    An expression the chapter prints several times with the same change is one row,
    marked with how often it is printed (``(x4)``); the heading counts every print.

    Parameters
    ----------
    report : MigrationReport

    Returns
    -------
    str
    """
    lines = [
        f"### {report.name}: {len(report.changes)} of {report.inline_total} printed numbers change",
        "",
    ]
    if report.changes:
        lines += ["| expression | book | mlsys | why (source) |", "|---|---|---|---|"]
        prints: dict[tuple[str, str, str], int] = {}
        first: dict[tuple[str, str, str], Any] = {}
        for change in report.changes:
            key = (change.expression, change.before, change.after)
            prints[key] = prints.get(key, 0) + 1
            first.setdefault(key, change)
        for key, change in first.items():
            why = "; ".join(f"{d.key}: {d.reason} ({d.source})" for d in change.causes) or "—"
            label = change.expression + (f" (x{prints[key]})" if prints[key] > 1 else "")
            cells = [label, change.before, change.after, why]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    for label, errors in (
        ("on mlsys", report.errors_after),
        ("with the book's values", report.errors_before),
    ):
        for error in errors:
            lines.append(f"- cell error {label}: {error}")
    return "\n".join(lines)
