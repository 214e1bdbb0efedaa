"""``mlsys migrate PATH``: point an existing book's imports at mlsys, and touch nothing else.

The textbook *Machine Learning Systems* (harvard-edge/cs249r_book) imports its own package
``mlsysim`` (``mlsysim.core.constants``, ``from mlsysim.core import constants``,
``mlsysim.fmt``, ``mlsysim.physics``, ``mlsysim.engine``, the registries) in its newest
era, or ``mlsys.*`` modules of its own in its older era. This command rewrites only the
import lines of ``.qmd`` code cells and ``.py`` files (:mod:`mlsys.book.rewrite`);
every other byte stays as it was. ``--dry-run`` prints a unified diff instead of
writing; ``--report`` then runs each chapter on mlsys and lists the cells that fail,
the inline values that do not compute and the printed numbers that change
(:mod:`mlsys.book.migration`), and exits 1 when anything fails.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from collections.abc import Iterable
from pathlib import Path

from mlsys.book.rewrite import IMPORT_MAP, SUBMODULES, migrate_text, rewrite_imports
from mlsys.core.errors import ParameterError

__all__ = [
    "IMPORT_MAP",
    "SUBMODULES",
    "rewrite_imports",
    "migrate_text",
    "migrate_path",
    "add_arguments",
    "run",
]


def _files(path: Path) -> Iterable[Path]:
    if path.is_file():
        yield path
        return
    for found in sorted(path.rglob("*")):
        if found.suffix in (".qmd", ".py") and found.is_file() and ".venv" not in found.parts:
            yield found


def migrate_path(
    path: str | Path, *, write: bool = True, book_figures: bool = False
) -> dict[Path, tuple[str, str]]:
    """Migrate a file or every ``.qmd``/``.py`` under a directory.

    Parameters
    ----------
    path : str or Path
        A file or a directory.
    write : bool
        Write the changed files (``False``: only compute the changes).
    book_figures : bool
        Make each chapter serve the book's own figure wherever mlsys records a
        difference (:func:`mlsys.book.rewrite.migrate_text`).

    Returns
    -------
    dict
        Path -> ``(old_text, new_text)`` for each file whose text changes.

    Raises
    ------
    ParameterError
        When ``path`` does not exist or is a file that is neither ``.qmd`` nor ``.py``.
    """
    root = Path(path)
    if not root.exists():
        raise ParameterError("PATH", str(path), "an existing .qmd/.py file or a directory")
    if root.is_file() and root.suffix not in (".qmd", ".py"):
        raise ParameterError("PATH", str(path), "a .qmd or .py file, or a directory")
    changed: dict[Path, tuple[str, str]] = {}
    for file in _files(root):
        old = file.read_text(encoding="utf-8")
        new = migrate_text(old, file.suffix, book_figures=book_figures)
        if new != old:
            changed[file] = (old, new)
            if write:
                file.write_text(new, encoding="utf-8")
    return changed


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Arguments of ``mlsys migrate``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser.
    """
    parser.add_argument("path", metavar="PATH", help="a .qmd/.py file or a book directory")
    parser.add_argument(
        "--dry-run", action="store_true", help="print a unified diff; write nothing"
    )
    parser.add_argument(
        "--book-figures",
        action="store_true",
        help=(
            "make each chapter print the book's own figure wherever mlsys records a "
            "difference (an H100 of 80 GiB, multiply-adds counted as FLOPs): its checks "
            "that assert those figures then pass; mlsys's figures everywhere else"
        ),
    )
    parser.add_argument(
        "--report",
        action="store_true",
        help=(
            "run each chapter on mlsys: list failing cells, inline values that do not "
            "compute and printed numbers that change; exit 1 if anything fails"
        ),
    )


def run(args: argparse.Namespace) -> int:
    """Run ``mlsys migrate``.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments.

    Returns
    -------
    int
        0 on success; 1 when ``--report`` finds a cell that fails or an inline value
        that does not compute.
    """
    changes = migrate_path(args.path, write=not args.dry_run, book_figures=args.book_figures)
    for file, (old, new) in changes.items():
        if args.dry_run:
            sys.stdout.writelines(
                difflib.unified_diff(
                    old.splitlines(keepends=True),
                    new.splitlines(keepends=True),
                    fromfile=f"a/{file}",
                    tofile=f"b/{file}",
                )
            )
        else:
            print(f"migrated {file}")
    if not changes:
        print("nothing to migrate: no mlsysim imports found")
    if args.report:
        return _report(Path(args.path), changes, book_figures=args.book_figures)
    return 0


def _report(root: Path, changes: dict[Path, tuple[str, str]], *, book_figures: bool) -> int:
    """Run every chapter under ``root`` on mlsys and print its report; 1 if any fails."""
    from mlsys.book.migration import format_report, migration_report

    reports = []
    for file in _files(root):
        if file.suffix == ".qmd":
            original = changes.get(file, (file.read_text(encoding="utf-8"),))[0]
            reports.append(migration_report(original, name=str(file), book_figures=book_figures))
            print(format_report(reports[-1]))
            print()
    cells = sum(r.cells_total for r in reports)
    cells_failed = sum(len(r.cell_failures) for r in reports)
    inline = sum(r.inline_total for r in reports)
    inline_failed = sum(len(r.inline_failures) for r in reports)
    rendering = sum(r.render_succeeds for r in reports)
    print(
        f"{rendering} of {len(reports)} chapters would render; "
        f"{cells - cells_failed} of {cells} cells run; "
        f"{inline - inline_failed} of {inline} inline values compute"
    )
    return 1 if any(r.failed for r in reports) else 0
