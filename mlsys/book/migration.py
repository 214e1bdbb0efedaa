"""Migration report: does a chapter run on mlsys, and which printed numbers change.

A chapter written for the textbook's own package (*Machine Learning Systems*,
harvard-edge/cs249r_book) runs on mlsys after ``mlsys migrate`` rewrites its imports
(:mod:`mlsys.book.rewrite`). :func:`migration_report` runs it in this process, cells in
document order in one namespace and inline values after them, and reports:

- every cell that raises and every inline value that does not compute, with the .qmd
  line and the first error (a value that fails is a failure, never "unchanged"), and
  whether ``quarto render`` would get through the chapter;
- the printed numbers that differ from the book's. When the book's own package
  (``mlsysim``) is importable, the chapter also runs on it and every number is compared.
  Otherwise the only book values known here are the differences mlsys records, with
  the book's value and the reason (``[differences]`` of ``book_assumptions.toml`` for
  constant names, of ``book_*.toml`` for registry paths): each is applied alone and the
  numbers it moves are listed, and the report says that nothing else was compared.

Where the book differs by a RULE of a solver rather than by a figure (``[rules]`` of
``book_assumptions.toml``: Adam's fp32 master copy kept at every precision, the Engine's
activation traffic as 10% of the weights), the rule is listed with the figures, can
explain a failure as a figure does, and is switched on with them.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from mlsys.compat.solver_rules import BOOK_RULES_ON, book_rules

__all__ = [
    "Difference",
    "Failure",
    "NumberChange",
    "ChapterRun",
    "MigrationReport",
    "differences",
    "book_values",
    "serve_book_figures",
    "run_chapter",
    "book_package_available",
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
    """A name, registry path or solver rule where mlsys differs from the book.

    Attributes
    ----------
    key : str
        A constant of :mod:`mlsys.constants` (``"H100_MEM_CAPACITY"``), a registry
        path (``"Hardware.Cloud.H100.memory.capacity"``) or a rule of
        :func:`mlsys.compat.solver_rules.book_rules` (``"OPTIMIZER_MASTER_COPY"``).
    book : str
        The value the book's own package printed, as text (``"80 GiB"``), or the book's
        rule.
    reason : str
        Why mlsys's value (or rule) is the one served.
    source : str
        Where mlsys's value comes from (catalog entry / data file and its reference), or
        the references of both rules.
    mlsys_rule : str
        For a rule: mlsys's rule (empty for a figure).
    applies_to : str
        For a rule: the book's class whose results it changes (``"TrainingMemoryModel"``).
    """

    key: str
    book: str
    reason: str
    source: str = ""
    mlsys_rule: str = ""
    applies_to: str = ""

    @property
    def is_rule(self) -> bool:
        """Whether this is a rule of a solver (switched on), not a figure (served)."""
        return bool(self.applies_to)

    @property
    def is_path(self) -> bool:
        """Whether :attr:`key` is a dotted registry path (not a constant name or rule)."""
        return not self.is_rule and "." in self.key

    @property
    def token(self) -> str:
        """The text a chapter must contain to be affected: a constant's name, or the entry
        a path names (its last capitalised part: ``GPT2`` of
        ``Models.Language.GPT2.parameters``), however the chapter reaches it; for a rule,
        the class it applies to."""
        if self.is_rule:
            return self.applies_to
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


@dataclass(frozen=True)
class Failure:
    """A cell that raised or an inline value that did not compute.

    Attributes
    ----------
    line : int
        1-based line of the .qmd (a cell's opening fence; an inline value's line).
    what : str
        ``"cell 3 (label)"`` or the inline expression.
    error : str
        The first error, ``"NameError: name 'x' is not defined"``.
    causes : tuple of Difference
        Recorded differences that explain it: with the book's figure for any one of
        them (or, when no single one does, for all of them together) it runs. Empty
        when no recorded difference explains it: something mlsys lacks.
    """

    line: int
    what: str
    error: str
    causes: tuple[Difference, ...] = ()


@dataclass
class ChapterRun:
    """What one in-process run of a chapter printed.

    Attributes
    ----------
    values : list of (str, str)
        ``(expression, printed text)`` per inline expression, in document order
        (``"(not printed: ErrorName)"`` for an expression that fails).
    errors : list of str
        ``"cell N: ErrorName: message"`` for each cell that raised.
    cells_total : int
        Cells Quarto would execute.
    cell_failures, inline_failures : list of Failure
        Cells that raised and inline values that did not compute, with their lines.
    """

    values: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    cells_total: int = 0
    cell_failures: list[Failure] = field(default_factory=list)
    inline_failures: list[Failure] = field(default_factory=list)

    def computed(self, index: int) -> bool:
        """Whether inline value ``index`` computed (a failed value is never compared)."""
        return not self.values[index][1].startswith(_NOT_PRINTED)


@dataclass
class MigrationReport:
    """What a chapter does on mlsys: what fails, and which printed numbers differ.

    Attributes
    ----------
    name : str
        The chapter (file name).
    changes : list of NumberChange
        Inline numbers that differ from the book's. With the book's package measured
        (:attr:`book_measured`), every computed number is compared; otherwise only the
        differences mlsys records (:func:`differences`) are, each applied alone.
    inline_total : int
        Inline expressions in the chapter.
    errors_after, errors_before : list of str
        Cells that raised on mlsys / in the comparison run.
    cells_total : int
        Cells Quarto would execute.
    cell_failures, inline_failures : list of Failure
        On mlsys: cells that raised, inline values that did not compute.
    book_measured : bool
        Whether the book's own package ran the chapter (it is importable here).
    compared : str
        What the numbers were compared against, in words.
    """

    name: str
    changes: list[NumberChange]
    inline_total: int
    errors_after: list[str]
    errors_before: list[str]
    cells_total: int = 0
    cell_failures: list[Failure] = field(default_factory=list)
    inline_failures: list[Failure] = field(default_factory=list)
    book_measured: bool = False
    compared: str = ""

    @property
    def failed(self) -> bool:
        """Whether any cell raised or any inline value did not compute on mlsys."""
        return bool(self.cell_failures or self.inline_failures)

    @property
    def render_succeeds(self) -> bool:
        """Whether ``quarto render`` would get through the chapter: Quarto stops at the
        first cell that raises (unless the cell says ``error: true``) and at the first
        inline expression that does not compute."""
        return not self.failed


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

    item = _ITEM.match(path)
    if item:
        path = item.group("base")
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
    """Every difference mlsys knows of: constant names, then registry paths, then rules.

    A rule (:attr:`Difference.is_rule`) is where the book's solver follows another rule
    than mlsys's (:func:`mlsys.compat.solver_rules.book_rules`), with both rules, the
    reason and the sources.

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
    for name, rule in book_rules().items():
        out.append(
            Difference(
                name,
                rule["book"],
                rule["reason"],
                rule["source"],
                mlsys_rule=rule["mlsys"],
                applies_to=rule["applies_to"],
            )
        )
    return out


def _book_quantity(text: str) -> Any:
    """The book's recorded value as the views serve values: a number, or a Quantity of
    the book's counts (so ``.m_as("param")`` and ``.m_as("flop")`` work on it as on the
    value it replaces)."""
    from mlsys.core.units import Q_, book_count_quantity_class, to_book_counts

    try:
        return float(text)
    except ValueError:
        pass
    for pattern, unit in _UNIT_WORDS.items():
        text = re.sub(pattern, unit, text)
    value = to_book_counts(Q_(text))
    return book_count_quantity_class()(value.magnitude, value.units)


def _resolve_parent(path: str) -> tuple[Any, str]:
    """The object holding a path's last part, and that part. A path may end in a mapping
    item, ``...compute.precision_flops[int8]``: then the mapping and the key."""
    import mlsys

    item = _ITEM.match(path)
    if item:
        parent, attr = _resolve_parent(item.group("base"))
        return getattr(parent, attr), item.group("key")
    obj: Any = mlsys
    parts = path.split(".")
    for part in parts[:-1]:
        obj = getattr(obj, part)
    return obj, parts[-1]


_ITEM = re.compile(r"^(?P<base>.+)\[(?P<key>[^\]]+)\]$")


_MISSING = object()


@contextlib.contextmanager
def book_values(diffs: Sequence[Difference]) -> Iterator[None]:
    """Serve the book's value for each difference while the block runs.

    Constants are set in :mod:`mlsys.constants`' namespace; registry paths on the views
    they name; a rule is switched on for the compat solvers of this process
    (:func:`mlsys.compat.solver_rules.book_rule_active`). Everything is restored on exit.

    Parameters
    ----------
    diffs : sequence of Difference
        The differences to undo.

    Returns
    -------
    contextlib.AbstractContextManager
        Use it in a ``with`` block; it yields nothing.
    """
    undo = _apply(diffs)
    try:
        yield
    finally:
        _restore(undo)


def _apply(diffs: Sequence[Difference]) -> list[tuple[Any, str, Any]]:
    """Set the book's value for each difference; what to put back, in order."""
    import mlsys.constants as constants

    undo: list[tuple[Any, str, Any]] = []
    try:
        for diff in diffs:
            if diff.is_rule:
                undo.append((BOOK_RULES_ON, diff.key, BOOK_RULES_ON.get(diff.key, _MISSING)))
                BOOK_RULES_ON[diff.key] = True
                continue
            value = _book_quantity(diff.book)
            if diff.is_path:
                parent, attr = _resolve_parent(diff.key)
                if isinstance(parent, dict):  # a mapping item: precision_flops[int8]
                    undo.append((parent, attr, parent.get(attr, _MISSING)))
                    parent[attr] = value
                    continue
                undo.append((parent, attr, parent.__dict__.get(attr, _MISSING)))
                if isinstance(getattr(parent, attr), float | int) and hasattr(value, "m_as"):
                    value = float(value.m_as(""))
                setattr(parent, attr, value)
            else:
                namespace = vars(constants)
                undo.append((namespace, diff.key, namespace.get(diff.key, _MISSING)))
                namespace[diff.key] = value
    except BaseException:
        _restore(undo)  # all or nothing
        raise
    return undo


def _restore(undo: list[tuple[Any, str, Any]]) -> None:
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


def serve_book_figures() -> list[Difference]:
    """Serve the book's own figure for every recorded difference, from now on.

    For a chapter that must print exactly what the book's own package printed (its
    ``check(...)`` guards assert the book's figures: an H100 of exactly 80 GiB, ResNet-50
    at 4.1 GFLOPs counted as multiply-adds), ``mlsys migrate --book-figures`` puts this
    call at the top of the chapter's first cell: the chapter's process then reads the
    book's figure wherever mlsys records a difference (:func:`differences`; each keeps
    its reason), and its compat solvers follow the book's rule wherever mlsys records
    one (Adam's fp32 master copy at every precision in ``TrainingMemoryModel``, the 10%
    activation traffic of ``Engine.solve``). mlsys's own figures are served everywhere
    else, mlsys's own solvers keep mlsys's rules, and every process that does not make
    this call keeps mlsys's figures and rules.

    Returns
    -------
    list of Difference
        The differences now served with the book's figure.
    """
    diffs = differences()
    _apply(diffs)  # never restored: the process keeps the book's figures
    return diffs


def _cell_label(number: int, options: dict[str, Any]) -> str:
    label = options.get("label")
    return f"cell {number}" + (f" ({label})" if label else "")


def _first_error(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}".splitlines()[0][:300]


def run_chapter(text: str, *, migrate: bool = True) -> ChapterRun:
    """Run a chapter's Python cells and inline expressions in this process.

    Imports are migrated first (:func:`mlsys.book.rewrite.rewrite_imports`); cells
    run in document order in one namespace, inline expressions after them (as Quarto's
    Jupyter engine evaluates them). What cells print is discarded.

    Parameters
    ----------
    text : str
        The chapter (.qmd) text.
    migrate : bool
        Rewrite the imports first (``False`` runs the chapter as written, e.g. on the
        book's own package).

    Returns
    -------
    ChapterRun
    """
    import io

    from mlsys.book.qmd import parse_qmd
    from mlsys.book.rewrite import rewrite_imports

    doc = parse_qmd(text)
    namespace: dict[str, Any] = {"__name__": "__chapter__"}
    run = ChapterRun()
    for number, cell in enumerate(doc.python_cells, start=1):
        if not doc.runs(cell):
            continue
        run.cells_total += 1
        code = rewrite_imports(cell.code) if migrate else cell.code
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(code, f"<cell {number}>", "exec"), namespace)
        except Exception as exc:  # a chapter's own failure is data for the report
            run.errors.append(f"cell {number}: {type(exc).__name__}: {exc}")
            label = _cell_label(number, cell.options)
            run.cell_failures.append(Failure(cell.header_line, label, _first_error(exc)))
    for inline in doc.inlines:
        try:
            value = eval(inline.expression, namespace)
            text_value = value if isinstance(value, str) else str(value)
        except Exception as exc:
            # a value that does not compute is a failure, never an unchanged number
            run.values.append((inline.expression, f"{_NOT_PRINTED}{type(exc).__name__})"))
            run.inline_failures.append(Failure(inline.line, inline.expression, _first_error(exc)))
            continue
        run.values.append((inline.expression, text_value))
    return run


def book_package_available() -> bool:
    """Whether the book's own package (``mlsysim``) can be imported here.

    Returns
    -------
    bool
    """
    import importlib.util

    return importlib.util.find_spec("mlsysim") is not None


def _changed(before: ChapterRun, after: ChapterRun) -> list[tuple[int, str, str, str]]:
    """Inline values computed in both runs whose text differs."""
    return [
        (i, expr, old, new)
        for i, ((expr, old), (_, new)) in enumerate(zip(before.values, after.values, strict=True))
        if before.computed(i) and after.computed(i) and old != new
    ]


def migration_report(
    text: str, name: str = "chapter", *, book_figures: bool = False
) -> MigrationReport:
    """What a chapter does on mlsys: failing cells and values, and numbers that differ.

    The chapter runs on mlsys after its imports are migrated. Its printed numbers are
    then compared with the book's: by running the chapter on the book's own package when
    that package is importable here; otherwise only against the differences mlsys
    records (:func:`differences`: the value the book printed for a name, and why mlsys's
    differs), each applied alone. In the second case the report says so: a number no
    recorded difference reaches was not compared.

    Parameters
    ----------
    text : str
        The chapter as written for the book's own package (imports not yet migrated).
    name : str
        Label for the report (the file's path).
    book_figures : bool
        Run with the book's figure for every recorded difference, as a chapter migrated
        with ``--book-figures`` runs (:func:`serve_book_figures`).

    Returns
    -------
    MigrationReport
    """
    known = differences()
    if book_figures:
        with book_values(known):
            after = run_chapter(text)
        return MigrationReport(
            name=name,
            changes=[],
            inline_total=len(after.values),
            errors_after=after.errors,
            errors_before=[],
            cells_total=after.cells_total,
            cell_failures=after.cell_failures,
            inline_failures=after.inline_failures,
            compared=(
                "the book's own figure served for each of the "
                f"{len(known)} differences mlsys records (--book-figures); nothing else compared"
            ),
        )
    after = run_chapter(text)
    candidates = [d for d in known if d.token in text]
    # each recorded difference alone: the numbers it moves and the failures it explains
    alone_runs = []
    for diff in candidates:
        with book_values([diff]):
            alone_runs.append((diff, run_chapter(text)))
    _attribute(text, after, candidates, alone_runs)
    base = {
        "name": name,
        "inline_total": len(after.values),
        "errors_after": after.errors,
        "cells_total": after.cells_total,
        "cell_failures": after.cell_failures,
        "inline_failures": after.inline_failures,
    }
    if book_package_available() and "mlsysim" in text:
        before = run_chapter(text, migrate=False)
        changed = _changed(before, after)
        return MigrationReport(
            changes=[NumberChange(expr, old, new) for _i, expr, old, new in changed],
            errors_before=before.errors,
            book_measured=True,
            compared="every inline value, run on the book's own package (mlsysim) here",
            **base,
        )
    # a number two differences move is listed with both
    moved: dict[int, tuple[str, str, str, list[Difference]]] = {}
    errors_before: list[str] = []
    for diff, alone in alone_runs:
        errors_before += [e for e in alone.errors if e not in after.errors]
        for i, expr, old, new in _changed(alone, after):
            entry = moved.setdefault(i, (expr, old, new, []))
            entry[3].append(diff)
    changes = [
        NumberChange(expr, old, new, tuple(causes))
        for _i, (expr, old, new, causes) in sorted(moved.items())
    ]
    compared = (
        f"not the book's own package (mlsysim is not installed here): only the "
        f"{len(candidates)} differences mlsys records that this chapter names, each "
        f"applied alone; numbers none of them reaches were not compared"
    )
    return MigrationReport(changes=changes, errors_before=errors_before, compared=compared, **base)


def _failure_keys(run: ChapterRun) -> set[tuple[int, str]]:
    return {(f.line, f.what) for f in run.cell_failures + run.inline_failures}


def _attribute(
    text: str,
    after: ChapterRun,
    candidates: list[Difference],
    alone_runs: list[tuple[Difference, ChapterRun]],
) -> None:
    """Give each failure of ``after`` the recorded differences that explain it (in place):
    those whose book figure alone makes it run, else all of them when only together
    they do."""
    failing = after.cell_failures + after.inline_failures
    if not failing or not candidates:
        return
    still = {diff.key: _failure_keys(run) for diff, run in alone_runs}
    together: set[tuple[int, str]] | None = None
    for lst in (after.cell_failures, after.inline_failures):
        for i, failure in enumerate(lst):
            key = (failure.line, failure.what)
            causes = tuple(d for d in candidates if key not in still[d.key])
            if not causes:
                if together is None:
                    with book_values(candidates):
                        together = _failure_keys(run_chapter(text))
                causes = () if key in together else tuple(candidates)
            lst[i] = Failure(failure.line, failure.what, failure.error, causes)


def _explained(failure: Failure) -> str:
    if not failure.causes:
        return ""
    figures = "; ".join(f"{d.key} (book: {d.book})" for d in failure.causes if not d.is_rule)
    rules = "; ".join(f"rule {d.key} for {d.applies_to}" for d in failure.causes if d.is_rule)
    what = " and ".join(filter(None, (figures and f"figure for {figures}", rules)))
    return f" [runs with the book's {what}: a recorded difference]"


def _failure_lines(name: str, failures: list[Failure], limit: int) -> list[str]:
    lines = [f"- {name}:{f.line}: {f.what}: {f.error}{_explained(f)}" for f in failures[:limit]]
    if len(failures) > limit:
        lines.append(f"- ... and {len(failures) - limit} more")
    return lines


def format_report(report: MigrationReport, *, limit: int = 50) -> str:
    """The report as Markdown: counts, render verdict, failures, then changed numbers.

    An expression the chapter prints several times with the same change is one row,
    marked with how often it is printed (``(x4)``); the heading counts every print.

    Parameters
    ----------
    report : MigrationReport
    limit : int
        Most failures listed per kind (the counts are always complete).

    Returns
    -------
    str
    """
    cells_ok = report.cells_total - len(report.cell_failures)
    inline_ok = report.inline_total - len(report.inline_failures)
    verdict = "would succeed" if report.render_succeeds else "would fail"
    first = (report.cell_failures + report.inline_failures)[:1]
    if first:
        verdict += f" (first: {report.name}:{first[0].line}: {first[0].error})"
    lines = [
        f"### {report.name}: {len(report.changes)} of {report.inline_total} printed numbers change",
        "",
        f"- cells that run: {cells_ok} of {report.cells_total}",
        f"- inline values that compute: {inline_ok} of {report.inline_total}",
        f"- render: {verdict}",
        f"- compared with: {report.compared}",
    ]
    failures = report.cell_failures + report.inline_failures
    if failures:
        explained = sum(bool(f.causes) for f in failures)
        lines.append(
            f"- failures a recorded difference explains: {explained} of {len(failures)} "
            "(they run with `mlsys migrate --book-figures`; the rest need mlsys to change)"
        )
    if report.cell_failures:
        lines += ["", "Cells that fail (first error of each):", ""]
        lines += _failure_lines(report.name, report.cell_failures, limit)
    if report.inline_failures:
        lines += ["", "Inline values that do not compute:", ""]
        lines += _failure_lines(report.name, report.inline_failures, limit)
    if report.changes:
        book = "book" if report.book_measured else "with the book's recorded value"
        lines += ["", f"| expression | {book} | mlsys | why (source) |", "|---|---|---|---|"]
        prints: dict[tuple[str, str, str], int] = {}
        firsts: dict[tuple[str, str, str], Any] = {}
        for change in report.changes:
            key = (change.expression, change.before, change.after)
            prints[key] = prints.get(key, 0) + 1
            firsts.setdefault(key, change)
        for key, change in firsts.items():
            why = "; ".join(f"{d.key}: {d.reason} ({d.source})" for d in change.causes) or "—"
            label = change.expression + (f" (x{prints[key]})" if prints[key] > 1 else "")
            cells = [label, change.before, change.after, why]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)
