"""How long the static ``mlsys check`` takes on a 50-chapter book.

Target: under 2 s for 50 chapters, measured as a user sees it — a fresh ``mlsys check``
process (interpreter start, imports of the package, parsing, name resolution).

The synthetic chapters look like real ones: front matter, a dozen python cells with
``#|`` options that import from mlsys (names taken from the installed package, so the
chapters are clean), module aliases and attribute chains, prose with inline
expressions, an ``eval: false`` cell and a display-only block.

Run: ``python benchmarks/bench_check.py`` (prints seconds and the ratio to the target).
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import mlsys

TARGET_S = 2.0
CHAPTERS = 50
CELLS = 12
INLINES_PER_PARAGRAPH = 3


def _importable_names(limit: int = 8) -> list[str]:
    """Public mlsys names whose modules import today (others are still being written)."""
    names = []
    for name in sorted(mlsys._LAZY):
        try:
            importlib.import_module(mlsys._LAZY[name])
        except Exception:
            continue
        names.append(name)
        if len(names) == limit:
            break
    return names


def _chapter(k: int, names: list[str]) -> str:
    parts = [f'---\ntitle: "Chapter {k}"\nexecute:\n  echo: false\n---\n']
    for c in range(CELLS):
        name = names[(k + c) % len(names)]
        parts.append(
            f"## Section {c}\n\n"
            "```{python}\n"
            f"#| label: ch{k}-cell{c}\n"
            "#| echo: false\n"
            f"from mlsys import {name}\n"
            "import mlsys.core.units as units\n"
            f"value_{c} = {c} * 1.5\n"
            f"label_{c} = str({name})[:10]\n"
            "registry = units.ureg\n"
            "```\n\n"
        )
        inline = " and ".join(f"`{{python}} value_{c} + {i}`" for i in range(INLINES_PER_PARAGRAPH))
        parts.append(f"The numbers here are {inline}, as computed above.\n\n")
    parts.append("```{python}\n#| eval: false\nfrom mlsys import NotRun\n```\n\n")
    parts.append("```{.python}\nfrom mlsys import OnlyShown\n```\n")
    return "".join(parts)


def main() -> None:
    names = _importable_names()
    with tempfile.TemporaryDirectory() as tmp:
        book = Path(tmp)
        for k in range(CHAPTERS):
            (book / f"ch{k:02d}.qmd").write_text(_chapter(k, names), encoding="utf-8")
        cmd = [sys.executable, "-m", "mlsys.cli", "check", str(book)]
        runs = []
        for _ in range(3):
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
            runs.append(time.perf_counter() - t0)
        if proc.returncode != 0:
            print(proc.stdout[-2000:], proc.stderr[-2000:])
            raise SystemExit("the synthetic book should be clean")
        best = min(runs)
        lines = sum(len(p.read_text().splitlines()) for p in book.glob("*.qmd"))
        print(
            f"static check, {CHAPTERS} chapters ({lines} lines, {CHAPTERS * CELLS} cells, "
            f"{CHAPTERS * CELLS * INLINES_PER_PARAGRAPH} inline expressions), fresh process"
        )
        print(f"best of 3: {best:.2f} s; target {TARGET_S:.1f} s; ratio {best / TARGET_S:.2f}")
        print(f"last output: {proc.stdout.strip().splitlines()[-1]}")


if __name__ == "__main__":
    main()
