"""``mlsys check``: the build check of a Quarto book's mlsys imports and numbers.

Static by default (imports and names resolved against the installed package, in well
under a second for a book); ``--execute`` also runs every chapter in a Jupyter kernel.
Exit status: 0 when clean (warnings allowed unless ``--strict``), 1 when anything is
wrong, 2 on bad usage, including a path with no ``.qmd`` file to check (a check of
nothing never passes as a clean book).

Wire it into a book as a Quarto pre-render hook, which Quarto runs in the project
directory with the files it is about to render in ``QUARTO_PROJECT_INPUT_FILES``::

    project:
      pre-render: mlsys check .

``--execute`` runs the chapters ``quarto render`` would execute: a chapter whose
project sets ``execute: freeze`` and whose frozen results are fresh is not run (Quarto
would reuse them; :mod:`mlsys.book.freeze`), but its frozen output is read for inline
values left as code. ``--no-freeze`` runs every chapter.

The hook runs on every render, frozen chapters included (``freeze: auto`` skips their
execution, not the pre-render step), so a chapter whose import went stale is caught
even when Quarto would have reused its old output.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from mlsys.book.check import (
    check_files,
    exit_status,
    find_qmd_files,
    findings_to_json,
    format_human,
    quarto_input_files,
)
from mlsys.core.errors import ParameterError

__all__ = ["add_arguments", "positive_seconds", "qmd_files", "run", "select_files"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Attach ``mlsys check`` options to ``parser``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    """
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help=".qmd files or directories searched recursively (default: the current directory)",
    )
    parser.add_argument(
        "--execute",
        action="store_true",
        help="also run every chapter in a Jupyter kernel and check what it prints",
    )
    parser.add_argument(
        "--no-freeze",
        dest="freeze",
        action="store_false",
        help="with --execute, run every chapter, also those Quarto's freeze would not "
        "re-execute (by default a chapter whose frozen results are fresh is not run)",
    )
    parser.add_argument(
        "--jobs",
        "-j",
        type=int,
        default=2,
        metavar="N",
        help="chapters executed at once with --execute (default: 2)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="time allowed to each cell with --execute (default: 120)",
    )
    parser.add_argument("--json", action="store_true", help="print findings as a JSON list")
    parser.add_argument("--strict", action="store_true", help="fail on warnings too")
    parser.add_argument(
        "--package",
        action="append",
        dest="packages",
        metavar="NAME",
        help="top-level package whose names are checked (default: mlsys; repeatable)",
    )


def select_files(paths: list[str], environ: dict[str, str] | None = None) -> list[Path]:
    """The .qmd files to check: under ``paths``, narrowed to Quarto's render list if set.

    Parameters
    ----------
    paths : list of str
        Files and directories (empty: the current directory).
    environ : dict, optional
        Environment (default: ``os.environ``).

    Returns
    -------
    list of Path

    Raises
    ------
    ParameterError
        When a path does not exist, is not a directory or a regular ``.qmd`` file
        (``/etc/passwd``, ``/dev/zero``), or when nothing under ``paths`` is a ``.qmd``
        file: a check of nothing must not pass as a clean book.
    """
    files = qmd_files(paths or ["."])
    listed = quarto_input_files(environ)
    if listed is None:
        return files
    wanted = {p.resolve() for p in listed}
    return [f for f in files if f.resolve() in wanted]


def _progress(result: Any, finished: int, total: int) -> None:
    """One line on standard error as each chapter finishes running (``--execute``)."""
    problems = sum(1 for f in result.findings if f.severity == "error")
    verdict = "ok" if result.completed and not problems else f"{problems} error(s)"
    print(f"mlsys check: [{finished}/{total}] ran {result.display}: {verdict}", file=sys.stderr)
    sys.stderr.flush()


def qmd_files(paths: list[str]) -> list[Path]:
    """The ``.qmd`` files under ``paths``; at least one, else ParameterError.

    Parameters
    ----------
    paths : list of str
        Files and directories, as typed.

    Returns
    -------
    list of Path
        Sorted, without duplicates (:func:`mlsys.book.check.find_qmd_files`).
    """
    for raw in paths:
        path = Path(raw)
        if path.is_file() and path.suffix != ".qmd":
            raise ParameterError("PATH", raw, "a .qmd file or a directory holding .qmd files")
        if not path.exists():
            raise ParameterError(
                "PATH", raw, "an existing .qmd file or directory (no such file or directory)"
            )
        if not (path.is_file() or path.is_dir()):
            raise ParameterError(
                "PATH", raw, "a regular .qmd file or a directory (not a device, pipe or socket)"
            )
    files = find_qmd_files(paths)
    if not files:
        shown = paths[0] if len(paths) == 1 else paths
        raise ParameterError(
            "PATH", shown, "a directory holding at least one .qmd file: there is nothing to check"
        )
    return files


def positive_seconds(value: float) -> bool:
    """True for a finite time limit above 0 (NaN and infinity are refused).

    Parameters
    ----------
    value : float
        ``--timeout`` as parsed.

    Returns
    -------
    bool
    """
    return math.isfinite(value) and value > 0


def run(args: argparse.Namespace) -> int:
    """Run ``mlsys check``.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments (see :func:`add_arguments`).

    Returns
    -------
    int
        Exit status.
    """
    if args.jobs < 1:
        print("mlsys check: error: --jobs must be at least 1", file=sys.stderr)
        return 2
    if not positive_seconds(args.timeout):
        print("mlsys check: error: --timeout must be a positive number of seconds", file=sys.stderr)
        return 2
    try:
        files = select_files(list(args.paths))
    except FileNotFoundError as exc:
        print(f"mlsys check: error: {exc}", file=sys.stderr)
        return 2
    findings = check_files(
        files,
        execute=args.execute,
        jobs=args.jobs,
        timeout=args.timeout,
        packages=tuple(args.packages or ("mlsys",)),
        freeze=getattr(args, "freeze", True),
        progress=_progress if args.execute else None,
    )
    if args.execute and getattr(args, "freeze", True):
        from mlsys.book.freeze import split_frozen

        frozen = split_frozen([f for f in files if not f.name.startswith("_")])[1]
        if frozen:
            # Said on stderr so that --json output stays one JSON document.
            print(
                f"mlsys check: {len(frozen)} chapter(s) not executed: their frozen results "
                "are fresh (Quarto's freeze would reuse them); --no-freeze runs them",
                file=sys.stderr,
            )
    if args.json:
        print(findings_to_json(findings))
    else:
        print(format_human(findings, n_files=len(files)))
    return exit_status(findings, strict=args.strict)
