"""``mlsys numbers``: record, or diff, the numbers a book prints.

::

    mlsys numbers book/quarto                        # write the manifest to numbers.json
    mlsys numbers book/quarto --out -                # ... or print it
    mlsys numbers book/quarto --diff numbers.json    # what changed? exit 1 if anything
    mlsys numbers book/quarto --diff numbers.json --out numbers.json   # review, then update

A chapter that fails to run is reported and no manifest is written: a manifest with
holes would make every missing number look "removed".
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from mlsys.book.check import format_human
from mlsys.book.check_cli import positive_seconds, qmd_files
from mlsys.book.numbers import (
    collect_numbers,
    diff_manifests,
    dump_manifest,
    format_diff,
    load_manifest,
    manifest_provenance_coverage,
)
from mlsys.core.errors import ParameterError

__all__ = ["DEFAULT_OUT", "add_arguments", "run"]

#: Where the manifest goes when neither ``--out``, ``--diff`` nor ``--provenance`` is given.
DEFAULT_OUT = "numbers.json"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Attach ``mlsys numbers`` options to ``parser``.

    Parameters
    ----------
    parser : argparse.ArgumentParser
    """
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help=".qmd files or a book directory (default: the current directory)",
    )
    parser.add_argument(
        "--out",
        metavar="FILE",
        help=f"write the manifest to FILE, '-' for standard output (default: {DEFAULT_OUT}, "
        "unless --diff or --provenance is given)",
    )
    parser.add_argument(
        "--diff", metavar="FILE", help="compare with the manifest in FILE; exit 1 on any change"
    )
    parser.add_argument(
        "--exit-zero", action="store_true", help="exit 0 even when --diff finds changes"
    )
    parser.add_argument("--json", action="store_true", help="print the --diff result as JSON")
    parser.add_argument(
        "--provenance",
        action="store_true",
        help="report how many numbers carry their source, and list those that do not",
    )
    parser.add_argument(
        "--jobs", "-j", type=int, default=2, metavar="N", help="chapters run at once (default: 2)"
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=120.0,
        metavar="SECONDS",
        help="time allowed to each cell (default: 120)",
    )


def run(args: argparse.Namespace) -> int:
    """Run ``mlsys numbers``.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments (see :func:`add_arguments`).

    Returns
    -------
    int
        0 on success; 1 when a chapter fails or ``--diff`` finds a change; 2 on bad usage
        (also when no ``.qmd`` file is found, or ``--out`` cannot be written: both are
        checked before any chapter runs).
    """
    if args.jobs < 1 or not positive_seconds(args.timeout):
        print("mlsys numbers: error: --jobs must be >= 1 and --timeout > 0", file=sys.stderr)
        return 2
    out = args.out or (None if args.diff or args.provenance else DEFAULT_OUT)
    if out not in (None, "-"):
        check_writable(out)
    old = None
    if args.diff:
        if Path(args.diff).exists() and not Path(args.diff).is_file():
            # a directory fails on open; a device or FIFO would be read forever
            raise ParameterError("--diff", args.diff, "a manifest file (a regular file)")
        try:
            old = load_manifest(args.diff)
        except (OSError, ValueError) as exc:
            print(f"mlsys numbers: error: cannot read {args.diff}: {exc}", file=sys.stderr)
            return 2
        except RecursionError:  # JSON nested thousands deep: not a manifest
            print(
                f"mlsys numbers: error: cannot read {args.diff}: nested too deeply "
                "to be a numbers manifest",
                file=sys.stderr,
            )
            return 2
    qmd_files(list(args.paths) or ["."])  # nothing to record is an error, not an empty manifest
    try:
        manifest, findings = collect_numbers(
            list(args.paths) or ["."], jobs=args.jobs, timeout=args.timeout
        )
    except FileNotFoundError as exc:
        print(f"mlsys numbers: error: {exc}", file=sys.stderr)
        return 2
    errors = [f for f in findings if f.severity == "error"]
    if findings:
        print(format_human(findings), file=sys.stderr)
    if errors:
        print("mlsys numbers: chapters failed; no manifest written", file=sys.stderr)
        return 1

    status = 0
    if old is not None:
        diff = diff_manifests(old, manifest)
        print(
            json.dumps(diff.to_dict(), indent=2, sort_keys=True) if args.json else format_diff(diff)
        )
        status = 1 if diff and not args.exit_zero else 0
    if out is not None:
        _write(manifest, out)
    if args.provenance:
        coverage = manifest_provenance_coverage(manifest)
        for where in coverage.missing:
            print(f"{where}: no source", file=sys.stderr)
        print(
            f"mlsys numbers: {coverage.with_source} of {coverage.total} inline numbers "
            f"carry their source ({coverage.fraction:.1%})"
        )
    return status


def _write(manifest: dict, out: str) -> None:
    """The manifest to ``out`` (``-``: standard output) and a one-line summary."""
    count = sum(len(v) for v in manifest["files"].values())
    if out == "-":
        sys.stdout.write(dump_manifest(manifest))
        where, stream = "standard output", sys.stderr
    else:
        Path(out).write_text(dump_manifest(manifest), encoding="utf-8")
        where, stream = out, sys.stdout
    files = len(manifest["files"])
    print(
        f"mlsys numbers: wrote {_plural(count, 'value')} from {_plural(files, 'file')} to {where}",
        file=stream,
    )


def _plural(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def check_writable(out: str) -> None:
    """Refuse an ``--out`` file that cannot be written, before the book runs for minutes.

    Parameters
    ----------
    out : str
        The manifest's path, as typed.

    Raises
    ------
    ParameterError
        When it is a directory, its folder does not exist, or the folder (or the file)
        is not writable.
    """
    path = Path(out)
    folder = path.parent
    if path.is_dir():
        raise ParameterError("--out", out, "a file name, not a directory")
    if path.exists() and not path.is_file():
        raise ParameterError("--out", out, "a regular file (not a device, pipe or socket)")
    if not folder.is_dir():
        raise ParameterError("--out", out, f"a file in an existing folder (no folder {folder})")
    if not os.access(folder, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ParameterError("--out", out, f"a file you can write (folder {folder} is read-only)")
