"""How long the book's checks and renders take: ``mlsys check --execute`` and real Quarto.

Run from the repository root::

    python benchmarks/render.py                 # the executed check, per chapter vs shared
    python benchmarks/render.py --book --pdf    # also render the book (HTML, then PDF)
    python benchmarks/render.py --site          # also render the website (minutes)

What it measures (wall-clock seconds, one run each, with the load average before and
after, because the machine is shared):

* ``mlsys check --execute`` of ``book/quarto`` the way it used to run, one fresh
  kernel per chapter (``execute_document`` per file, one at a time), and the way it runs
  now, chapters sharing kernels (``execute_documents`` with ``--jobs`` kernels); also the
  book without its torch appendix, whose four-process cluster dominates;
* ``check_files`` as the CLI runs it, with Quarto's freeze honoured (chapters whose
  frozen results are fresh are not executed) and with ``--no-freeze``;
* with ``quarto`` on PATH: ``quarto render book/quarto`` (HTML), ``--to pdf`` when a TeX
  engine is present, and ``quarto render`` of the site.

It prints figures and ratios; nothing is asserted (speed is never a test here).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BOOK = ROOT / "book" / "quarto"

__all__ = ["main"]


def _load() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:  # not on every platform
        return "n/a"


def _timed(label: str, run: Callable[[], object]) -> float:
    start = time.perf_counter()
    run()
    seconds = time.perf_counter() - start
    print(f"{label:<58} {seconds:8.1f} s", flush=True)
    return seconds


def _chapters(with_appendix: bool = True) -> list[Path]:
    from mlsys.book.check import find_qmd_files

    files = [p for p in find_qmd_files([BOOK]) if not p.name.startswith("_")]
    return [p for p in files if with_appendix or not p.name.startswith("appendix")]


def _check_benchmarks(jobs: int) -> None:
    from mlsys.book.kernel import execute_document, execute_documents

    chapters = _chapters()
    no_appendix = _chapters(with_appendix=False)
    print(f"chapters: {len(chapters)} ({len(no_appendix)} without the torch appendix)")
    per_chapter = _timed(
        "check --execute, a fresh kernel per chapter (before)",
        lambda: [execute_document(p) for p in chapters],
    )
    shared = _timed(
        f"check --execute, chapters share {jobs} kernel(s) (now)",
        lambda: execute_documents(chapters, jobs=jobs),
    )
    print(f"{'  speed-up':<58} {per_chapter / shared:8.2f} x")
    before = _timed(
        "  without the appendix, a fresh kernel per chapter",
        lambda: [execute_document(p) for p in no_appendix],
    )
    after = _timed(
        "  without the appendix, one shared kernel",
        lambda: execute_documents(no_appendix, jobs=1),
    )
    print(f"{'  speed-up':<58} {before / after:8.2f} x")
    _freeze_benchmark(jobs)


def _freeze_benchmark(jobs: int) -> None:
    """The CLI's path: ``mlsys check --execute`` honouring Quarto's freeze, and without."""
    from mlsys.book.check import check_files
    from mlsys.book.freeze import split_frozen

    files = _chapters()
    run, frozen = split_frozen(files)
    print(
        f"Quarto's freeze: {len(frozen)} chapter(s) frozen and fresh, {len(run)} to execute "
        "(render the book first to freeze them all)"
    )
    all_run = _timed(
        "mlsys check book/quarto --execute --no-freeze",
        lambda: check_files(files, execute=True, jobs=jobs, freeze=False),
    )
    frozen_run = _timed(
        "mlsys check book/quarto --execute (freeze honoured)",
        lambda: check_files(files, execute=True, jobs=jobs, freeze=True),
    )
    print(f"{'  speed-up':<58} {all_run / frozen_run:8.2f} x")


def _quarto(*args: str, cwd: Path) -> None:
    done = subprocess.run(["quarto", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).splitlines()[-15:])
        raise SystemExit(f"quarto {' '.join(args)} failed:\n{tail}")


def _render_benchmarks(book: bool, pdf: bool, site: bool) -> None:
    if shutil.which("quarto") is None:
        print("quarto is not on PATH: render times skipped")
        return
    if book:
        _timed("quarto render book/quarto (HTML)", lambda: _quarto("render", cwd=BOOK))
    if pdf:
        if shutil.which("xelatex") is None and shutil.which("lualatex") is None:
            print("no TeX engine (xelatex/lualatex): PDF render skipped")
        else:
            _timed(
                "quarto render book/quarto --to pdf",
                lambda: _quarto("render", "--to", "pdf", cwd=BOOK),
            )
            # a PDF render empties _book: put the HTML back
            _quarto("render", cwd=BOOK)
    if site:
        _timed("quarto render (the website)", lambda: _quarto("render", cwd=ROOT))


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks named on the command line and print their times.

    Parameters
    ----------
    argv : list of str, optional
        Command-line arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Exit status (0).
    """
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=2, help="kernels for the shared run")
    parser.add_argument("--no-check", action="store_true", help="skip the executed check")
    parser.add_argument("--book", action="store_true", help="render the book (HTML)")
    parser.add_argument("--pdf", action="store_true", help="render the book's PDF")
    parser.add_argument("--site", action="store_true", help="render the website")
    args = parser.parse_args(argv)
    os.chdir(ROOT)
    print(f"load average before: {_load()}  ({os.cpu_count()} CPUs)")
    if not args.no_check:
        _check_benchmarks(args.jobs)
    _render_benchmarks(args.book, args.pdf, args.site)
    print(f"load average after:  {_load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
