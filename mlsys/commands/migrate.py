"""``mlsys migrate PATH``: point an existing book's imports at mlsys, and touch nothing else.

The textbook *Machine Learning Systems* (harvard-edge/cs249r_book) imports
``mlsysim.core.constants``, ``mlsysim.fmt``, ``mlsysim.core.formulas``,
``mlsysim.core.hardware``, ``mlsysim.physics``, ``mlsysim.engine`` and ``mlsysim`` (its
newest era) or ``mlsys.*`` modules of its own (its older era). This command rewrites
only the module path on ``import``/``from ... import`` lines of ``.qmd`` code cells and
``.py`` files; every other byte stays as it was. ``--dry-run`` prints a unified diff
instead of writing; ``--report`` also lists the printed numbers that change and why
(:mod:`mlsys.book.migration`).
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from collections.abc import Iterable
from pathlib import Path

from mlsys.core.errors import ParameterError

__all__ = ["IMPORT_MAP", "rewrite_imports", "migrate_text", "migrate_path", "add_arguments", "run"]

IMPORT_MAP: tuple[tuple[str, str], ...] = (
    ("mlsysim.core.constants", "mlsys.constants"),
    ("mlsysim.core.formulas", "mlsys.formulas"),
    ("mlsysim.core.hardware", "mlsys.hardware"),
    ("mlsysim.fmt", "mlsys.formatting"),
    ("mlsysim.physics", "mlsys.compat.physics"),
    ("mlsysim.engine", "mlsys.compat.engine"),
    ("mlsysim", "mlsys"),
    # the older era already says mlsys.* (mlsys.registry included): nothing to rewrite
)
"""Old module path -> new one, most specific first (a prefix matches whole dotted parts)."""

_IMPORT_LINE = re.compile(
    r"^(?P<indent>\s*)(?P<kw>from|import)\s+(?P<mod>[A-Za-z_][\w.]*)(?P<rest>.*)$"
)
_FENCE_OPEN = re.compile(r"^\s*```+\s*\{python[^}]*\}")
_FENCE_CLOSE = re.compile(r"^\s*```+\s*$")


def _new_module(module: str) -> str:
    for old, new in IMPORT_MAP:
        if module == old or module.startswith(old + "."):
            return new + module[len(old) :]
    return module


def _rewrite_line(line: str) -> str:
    body = line.rstrip("\r\n")
    ending = line[len(body) :]
    match = _IMPORT_LINE.match(body)
    if match is None:
        return line
    module = match["mod"]
    new = _new_module(module)
    if new == module:
        return line
    rest = match["rest"]
    if match["kw"] == "import" and module == "mlsysim" and not rest.lstrip().startswith("as "):
        # `import mlsysim` keeps the name the chapter uses: mlsysim.Q_(...) still works
        rest = " as mlsysim" + rest
    return f"{match['indent']}{match['kw']} {new}{rest}{ending}"


def rewrite_imports(source: str) -> str:
    """Rewrite the module path of every import line of Python source.

    Parameters
    ----------
    source : str
        Python code (a ``.py`` file or one code cell).

    Returns
    -------
    str
        The same text with only ``import``/``from`` lines changed (see :data:`IMPORT_MAP`).

    Examples
    --------
    >>> rewrite_imports("from mlsysim.fmt import fmt\\nx = 1\\n")
    'from mlsys.formatting import fmt\\nx = 1\\n'
    """
    return "".join(_rewrite_line(line) for line in source.splitlines(keepends=True))


def migrate_text(text: str, suffix: str) -> str:
    """Migrate one file's text: every line of a ``.py``, code-cell lines of a ``.qmd``.

    Parameters
    ----------
    text : str
        File content.
    suffix : str
        ``".py"`` or ``".qmd"`` (prose of a ``.qmd`` is never touched).

    Returns
    -------
    str
        The migrated text.
    """
    if suffix == ".py":
        return rewrite_imports(text)
    out: list[str] = []
    in_cell = False
    for line in text.splitlines(keepends=True):
        if not in_cell and _FENCE_OPEN.match(line):
            in_cell = True
        elif in_cell and _FENCE_CLOSE.match(line):
            in_cell = False
        elif in_cell:
            line = _rewrite_line(line)
        out.append(line)
    return "".join(out)


def _files(path: Path) -> Iterable[Path]:
    if path.is_file():
        yield path
        return
    for found in sorted(path.rglob("*")):
        if found.suffix in (".qmd", ".py") and found.is_file() and ".venv" not in found.parts:
            yield found


def migrate_path(path: str | Path, *, write: bool = True) -> dict[Path, tuple[str, str]]:
    """Migrate a file or every ``.qmd``/``.py`` under a directory.

    Parameters
    ----------
    path : str or Path
        A file or a directory.
    write : bool
        Write the changed files (``False``: only compute the changes).

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
        new = migrate_text(old, file.suffix)
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
        "--report",
        action="store_true",
        help="also list every printed number that changes and why (runs the chapters)",
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
        0 on success.
    """
    changes = migrate_path(args.path, write=not args.dry_run)
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
        from mlsys.book.migration import format_report, migration_report

        for file in _files(Path(args.path)):
            if file.suffix == ".qmd":
                original = changes.get(file, (file.read_text(encoding="utf-8"),))[0]
                print(format_report(migration_report(original, name=str(file))))
    return 0
