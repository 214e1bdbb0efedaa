"""Speed of book formatting with provenance on: prints each figure and its ratio to target.

Three figures:

* ``fmt`` of a catalog value (``fmt(Hardware.H100.memory_bandwidth)``, which looks up and
  attaches the value's origin) and its Markdown span, per call: target 25 µs;
* ``import mlsys`` in a fresh interpreter: target 0.1 s;
* a fresh interpreter to its first formatted catalog number (import, catalog load, the
  first ``fmt``): target 0.3 s.

Fresh-interpreter figures are the median of several runs, wall time from the process's
start, measured by ``benchmarks/bench_startup.py`` (which also compares checkouts
interleaved; ``-X importtime`` is not used: it slows the import it measures). ``--src
DIR`` measures another checkout of mlsys (e.g. ``git archive <commit> mlsys | tar -x -C
/tmp/before``). A ratio below 1 meets the target.

Run: ``python benchmarks/fmt_provenance.py [--src DIR] [--runs N]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import timeit

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # the sibling script
from bench_startup import (
    SNIPPETS,
    TARGET_FIRST_NUMBER_S,
    TARGET_IMPORT_S,
    fresh_seconds,
)

TARGET_FMT_US = 25.0


def _fresh(src: str | None, runs: int) -> dict[str, tuple[float, float]]:
    """Start-up figures, measured as ``bench_startup.py`` measures them (one method)."""
    return {name: fresh_seconds(code, [src], runs)[src] for name, code in SNIPPETS.items()}


def _fmt_us(src: str | None) -> tuple[float, float, float]:
    """Microseconds per fmt of a catalog value, per fmt plus its Markdown span, and per
    fmt of values never formatted before (every catalog Quantity, scaled, so no cache
    helps)."""
    if src:
        sys.path.insert(0, src)
    from mlsys import Fabrics, Hardware
    from mlsys.formatting import fmt

    value = Hardware.H100.memory_bandwidth
    fmt(value)._repr_markdown_()  # warm the caches, as a chapter would after its first number
    n = 5000
    plain = min(timeit.repeat(lambda: fmt(value), number=n, repeat=5)) / n * 1e6
    span = min(timeit.repeat(lambda: fmt(value)._repr_markdown_(), number=n, repeat=5)) / n * 1e6
    catalog = [
        q
        for entry in [*Hardware, *Fabrics]
        for q in (getattr(entry, f) for f in type(entry).model_fields)
        if hasattr(q, "_units")
    ]
    fresh = [q * (1.0 + i * 1e-7) for i in range(40) for q in catalog]  # distinct values
    for q in fresh[:50]:
        fmt(q)  # unit plans are cached per unit, as after a chapter's first numbers
    start = time.perf_counter()
    for q in fresh:
        fmt(q)
    cold = (time.perf_counter() - start) / len(fresh) * 1e6
    return plain, span, cold


def main() -> None:
    """Measure and print the figures and their ratios to target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", help="directory holding the mlsys package to measure")
    parser.add_argument("--runs", type=int, default=7, help="fresh interpreters per figure")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    fresh = _fresh(args.src, args.runs)
    # wall time from process start, interpreter start-up included (bench_startup.py)
    floor_s = fresh["import pint + pydantic (floor)"][0]
    import_s = fresh["import mlsys"][0]
    first_s = fresh["first formatted catalog number"][0]
    fmt_us, span_us, cold_us = _fmt_us(args.src)
    print(f"mlsys from {args.src or 'the installed tree'}; load average {load:.2f}")
    rows = [
        ("fmt(catalog value)", fmt_us, TARGET_FMT_US, "µs"),
        ("fmt + Markdown span", span_us, TARGET_FMT_US, "µs"),
        ("fmt, values not seen before", cold_us, TARGET_FMT_US, "µs"),
        ("import mlsys", import_s, TARGET_IMPORT_S, "s"),
        ("first formatted catalog number", first_s, TARGET_FIRST_NUMBER_S, "s"),
    ]
    print(f"{'(import pint + pydantic, floor)':<32} {floor_s:8.3f} s")
    for name, value, target, unit in rows:
        ratio = value / target
        print(f"{name:<32} {value:8.3f} {unit:<2}  target {target:g} {unit:<2}  ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
