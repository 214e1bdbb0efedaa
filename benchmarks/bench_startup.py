"""Start-up speed: a fresh interpreter to ``import mlsys`` and to its first formatted number.

Two start-up targets, both measured in fresh interpreters:

* ``import mlsys``: at most 0.1 s;
* a fresh interpreter to its first formatted catalog number,
  ``fmt(Hardware.H100.memory_bandwidth)`` with its provenance span (what an inline
  expression of a Quarto page inserts): at most 0.3 s.

Each figure is the median over ``--runs`` interpreters, as wall time from the moment the
process is started to the moment the snippet is done (interpreter start-up included, its
teardown not: a reader waits for the number, not for the exit). Beside it: the CPU time
of the main thread by then (``time.thread_time``, start-up included), which a busy
machine inflates far less than wall time (on an idle machine the two nearly agree), and
the time the snippet itself reports (``perf_counter`` from its first statement). The
main thread's, not the process's: numpy's import starts OpenBLAS's worker threads, which
spin for some 60 ms of CPU on a second core; a reader on an idle machine does not wait
for them, but on a busy one they take CPU from the main thread (``OPENBLAS_NUM_THREADS=1``
shows the difference). ``import
pint`` alone, and with pydantic's ``BaseModel`` and ``Field``, are measured the same
way: the second is the floor no catalog number can go below (its value is a pint
Quantity, its entry a pydantic model), so the distance from it is what mlsys adds.

Bytecode is cached, as in an installed package: this machine sets
``PYTHONDONTWRITEBYTECODE`` (every run would compile mlsys from source), so the caches go
to a private prefix outside the tree and one unmeasured run per snippet warms them. mlsys
itself keeps no start-up cache (nothing outside the package may change a number): every
run builds the unit registry from the definitions that ship with pint and mlsys and
validates the entry it reads, so the first run and every later run cost the same.

Measured on 2 shared cores (12 interpreters each, interleaved, load average 10-15 from
other work: wall times are inflated, main-thread CPU is the figure to compare), the first
formatted catalog number took 0.297 s of CPU with the earlier on-disk caches (a pickled
unit registry, parsed tables and validated entries as JSON), 0.396 s with no cache at
all (pint parsing its definitions in every process: 87 ms), and 0.347 s with pint's
parse of the definitions shipped in the package as data (``mlsys/core/units_parsed.json``:
the registry in 17 ms). Of the first number's path, mlsys's own steps then cost 47 ms of
CPU (16 ms with the caches): the registry 17 ms, reading and validating the H100 20 ms
(``tomllib`` and pydantic, in every process), the rest 10 ms.

Children run in a neutral directory so that ``--src`` wins over the working tree.

Several ``--src DIR`` (each a directory holding an ``mlsys`` package, e.g. made by
``git archive <commit> mlsys | tar -x -C DIR``) are measured **interleaved**, one
interpreter of each in turn, so that a change of machine load hits every checkout alike:
that is how a before → after is measured on a shared machine. The load average is printed
before and after. A ratio below 1 meets the target.

Run: ``python benchmarks/bench_startup.py [--runs N] [--src DIR ...] [--phases]``;
``--phases`` also prints the CPU time of each step of the first number's path (pint,
pydantic, mlsys's model classes, the unit registry, the first entry, ``fmt``).
``benchmarks/run.py`` picks up :func:`scenarios` (the first-number figure; the import
figure it measures itself).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

__all__ = [
    "TARGET_IMPORT_S",
    "TARGET_FIRST_NUMBER_S",
    "SNIPPETS",
    "fresh_seconds",
    "scenarios",
]

TARGET_IMPORT_S = 0.1
"""Target for ``import mlsys`` in a fresh interpreter, in s."""

TARGET_FIRST_NUMBER_S = 0.3
"""Target for a fresh interpreter to its first formatted catalog number, in s."""

# Each snippet ends by printing the wall clock (time.time, comparable across processes),
# its own elapsed perf_counter time and the main thread's CPU time. `time` is a built-in
# module: importing it first costs nothing measurable.
_HEAD = "import time\n_t0 = time.perf_counter()\n"
_TAIL = "\nprint(time.time(), time.perf_counter() - _t0, time.thread_time())\n"

SNIPPETS: dict[str, str] = {
    "import pint": "import pint",
    # What any catalog number needs before mlsys does any work of its own: its
    # Quantities are pint's and its entries pydantic models with fields
    # (mlsys.core.types; a model's fields need pydantic.fields, which BaseModel defers).
    "import pint + pydantic (floor)": "import pint\nfrom pydantic import BaseModel, Field",
    "import mlsys": "import mlsys",
    "first formatted catalog number": (
        "from mlsys import Hardware\n"
        "from mlsys.formatting import fmt\n"
        "text = fmt(Hardware.H100.memory_bandwidth)._repr_markdown_()\n"
        "assert 'datasheet' in text, text"
    ),
}
"""Figure name -> the code a fresh interpreter runs."""

_TARGETS = {
    "import mlsys": TARGET_IMPORT_S,
    "first formatted catalog number": TARGET_FIRST_NUMBER_S,
}


def _env(src: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "mlsys-bench-pycache")
    if src:
        env["PYTHONPATH"] = os.path.abspath(src)
    return env


def _run_once(code: str, env: dict[str, str]) -> tuple[float, float, float]:
    """Seconds from process start to the snippet's end: wall, in-snippet, main-thread CPU."""
    start = time.time()
    out = subprocess.run(
        [sys.executable, "-c", _HEAD + code + _TAIL],
        env=env,
        cwd=tempfile.gettempdir(),
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"snippet failed:\n{code}\n{out.stderr[-2000:]}")
    end_wall, inside, cpu = map(float, out.stdout.split()[-3:])
    return end_wall - start, inside, cpu


def fresh_seconds(
    code: str, sources: list[str | None], runs: int
) -> dict[str | None, tuple[float, float, float]]:
    """Median wall, in-snippet and CPU seconds of ``code`` in fresh interpreters, per source.

    Parameters
    ----------
    code : str
        Python source run by ``python -c``.
    sources : list of str or None
        Directories holding the ``mlsys`` to measure (None: the installed one); runs
        alternate between them.
    runs : int
        Interpreters per source (after one unmeasured warm-up run each).

    Returns
    -------
    dict
        Source -> (median wall seconds including interpreter start-up, median seconds
        the snippet reports from its first statement, median CPU seconds of the main thread
        including start-up), all in s.
    """
    envs = {src: _env(src) for src in sources}
    for src in sources:
        _run_once(code, envs[src])  # writes the bytecode caches
    samples: dict[str | None, list[tuple[float, float, float]]] = {src: [] for src in sources}
    for _ in range(runs):
        for src in sources:
            samples[src].append(_run_once(code, envs[src]))
    return {
        src: tuple(statistics.median(s[i] for s in got) for i in range(3))  # type: ignore[misc]
        for src, got in samples.items()
    }


# The first number's path in steps, each timed in main-thread CPU ms by the child (--phases).
_PHASES = (
    ("import pint", "import pint"),
    ("import pydantic (BaseModel, Field)", "from pydantic import BaseModel, Field"),
    ("import mlsys.core.types (model classes)", "import mlsys.core.types"),
    ("import mlsys catalog + formatting", "from mlsys import Hardware\nimport mlsys.formatting"),
    ("build the unit registry", "import mlsys.core.units as u\nu.get_registry()"),
    ("first entry: Hardware.H100", "h = Hardware.H100"),
    (
        "fmt(...) and its provenance span",
        "mlsys.formatting.fmt(h.memory_bandwidth)._repr_markdown_()",
    ),
)


def phases(src: str | None, runs: int) -> list[tuple[str, float]]:
    """Median CPU milliseconds of each step of the first number's path, in order.

    Parameters
    ----------
    src : str or None
        Directory holding the ``mlsys`` to measure (None: the installed one).
    runs : int
        Fresh interpreters.

    Returns
    -------
    list of (step, milliseconds)
    """
    lines = ["import time", "_c = [time.thread_time()]"]
    for _, code in _PHASES:
        lines += [code, "_c.append(time.thread_time())"]
    lines.append("print(*(1e3 * (b - a) for a, b in zip(_c, _c[1:])))")
    code = "\n".join(lines)
    env = _env(src)
    samples = []
    for _ in range(runs + 1):  # the first run warms the bytecode caches, unmeasured
        out = subprocess.run(
            [sys.executable, "-c", code],
            env=env,
            cwd=tempfile.gettempdir(),
            capture_output=True,
            text=True,
            check=True,
        )
        samples.append([float(x) for x in out.stdout.split()])
    samples = samples[1:]
    return [
        (name, statistics.median(row[i] for row in samples)) for i, (name, _) in enumerate(_PHASES)
    ]


def scenarios() -> list[tuple[str, Callable[[], object], float]]:
    """The first-number figure for ``benchmarks/run.py``: one fresh interpreter per call.

    Returns
    -------
    list of (name, callable, target seconds)
    """
    env = _env(None)
    code = SNIPPETS["first formatted catalog number"]

    def first_number() -> tuple[float, float, float]:
        return _run_once(code, env)

    # run.py takes the wall seconds this returns (process start to the number), not the
    # time of the whole call, which would add the interpreter's exit
    first_number.reports_seconds = True  # type: ignore[attr-defined]
    return [
        ("first formatted catalog number (fresh interpreter)", first_number, TARGET_FIRST_NUMBER_S)
    ]


def _load() -> str:
    if not hasattr(os, "getloadavg"):
        return "unknown"
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    """Measure and print every figure, per source, with its ratio to target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="fresh interpreters per figure")
    parser.add_argument(
        "--src", action="append", help="directory holding an mlsys package (repeatable)"
    )
    parser.add_argument(
        "--phases", action="store_true", help="also time each step of the first number (CPU)"
    )
    args = parser.parse_args(argv)
    sources: list[str | None] = list(args.src) if args.src else [None]
    print(f"{args.runs} fresh interpreters per figure and source; load average {_load()}")
    results = {name: fresh_seconds(code, sources, args.runs) for name, code in SNIPPETS.items()}
    for src in sources:
        print(f"\nmlsys from {src or 'the installed tree'}")
        print(f"{'figure':<32} {'wall':>7} {'cpu':>7} {'snippet':>8}  target  ratio (wall, cpu)")
        for name, per_source in results.items():
            wall, inside, cpu = per_source[src]
            target = _TARGETS.get(name)
            tail = f"{target:6.2f}  {wall / target:.2f}, {cpu / target:.2f}" if target else ""
            print(f"{name:<32} {wall:6.3f}s {cpu:6.3f}s {inside:7.3f}s  {tail}")
    if args.phases:
        for src in sources:
            print(f"\nthe first number's path, CPU ms (median), mlsys from {src or 'the tree'}")
            for name, ms in phases(src, args.runs):
                print(f"  {name:<42} {ms:6.1f}")
    print(f"\nload average after {_load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
