"""The one benchmark command: mlsys's speed against its targets and against mlsysim 0.3.0.

Run from the repository root::

    python benchmarks/run.py            # full run, writes benchmarks/results.json
    python benchmarks/run.py --quick    # fewer repetitions (a smoke run)
    python benchmarks/run.py --no-mlsysim --out /tmp/bench.json
    python benchmarks/run.py --publish  # writes docs/_data/benchmarks.json, the page's data

What it measures, in one process and one sitting (so the ratios share a machine state):

* ``import mlsys`` in fresh interpreters (median of N);
* every scenario of every ``benchmarks/bench_*.py`` that defines ``scenarios()``
  (``(name, callable, target_seconds)``): per-call time as the median over five batches
  of the mean time per call; calls whose target is ≥ 0.1 s are timed as the median of
  three calls;
* ``ParallelismSearch`` layouts priced per second (target ≥ 1,000,000/s);
* ``mlsys check book/quarto`` (static, a fresh process, median of 3; target < 2 s);
* the equivalent scenarios on the PyPI package ``mlsysim==0.3.0``, installed by this
  script into ``benchmarks/.venv-mlsysim`` (``python -m venv`` + ``pip install``; the
  directory is git-ignored) and run there by ``benchmarks/mlsysim_scenarios.py``, which
  prints JSON.

It prints a table (scenario, mlsys time, target, ratio to target, mlsysim time, speed-up
vs mlsysim) and writes the JSON to ``--out`` (default ``benchmarks/results.json``, not
tracked), with the load average before and after the run. Only ``--publish`` replaces
``docs/_data/benchmarks.json``, the committed file ``docs/benchmarks.qmd`` renders.
Nothing here is a test: no timing is asserted anywhere.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
VENV = BENCH / ".venv-mlsysim"
OUT = BENCH / "results.json"  # a scratch result, git-ignored
PUBLISHED = ROOT / "docs" / "_data" / "benchmarks.json"  # what docs/benchmarks.qmd renders
MLSYSIM_SPEC = "mlsysim==0.3.0"

IMPORT_TARGET_S = 0.1  # import mlsys in a fresh interpreter
SEARCH_RATE_TARGET = 1_000_000.0  # layouts priced per second
CHECK_TARGET_S = 2.0

# mlsys scenario name (prefix) -> key of the equivalent mlsysim scenario
EQUIVALENTS: dict[str, str] = {
    "import mlsys": "import",
    "SingleNodeModel.solve decode Llama-2-70B/H100": "single_node_decode",
    "SingleNodeModel.solve training GPT-3/H100": "single_node_training",
    "MemoryModel.solve training GPT-3 tp8 pp8 zero1": "memory_training",
    "DistributedModel.solve GPT-3 175B on 64 A100": "distributed",
    "ParallelismSearch GPT-3 175B on 64 A100": "search_gpt3",
    "ParallelismSearch Llama-3.1 405B on 16,384 H100": "search_405b",
    "ServingModel.solve Llama-2-7B/H100 b1": "serving",
    "ReliabilityModel fleet, ckpt time (Quantity)": "reliability",
    "SustainabilityModel fleet + datacenter (SI)": "sustainability",
    "EconomicsModel fleet, run + tokens (SI)": "economics",
}


# -- timing helpers --------------------------------------------------------------------------
sys.path.insert(0, str(BENCH))  # the shared helper, also when run as ``python -m``
from _timing import fresh_import_time, per_call  # noqa: E402


def _median_of(fn: Callable[[], object], runs: int = 3) -> float:
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _fresh(cmd: list[str], runs: int) -> float:
    """Median wall time of a command in fresh processes (output discarded)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
        if proc.returncode not in (0, 1):  # 1: the check found problems; still timed
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    return statistics.median(times)


def _load(path: Path):
    spec = importlib.util.spec_from_file_location(f"_bench_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


# -- the mlsys side ----------------------------------------------------------------------------
def _row(scenario: str, group: str, seconds: float, target: float, **extra) -> dict:
    return {
        "scenario": scenario,
        "group": group,
        "kind": "time",
        "mlsys": seconds,
        "target": target,
        "ratio": seconds / target,
        "meets": seconds <= target,
        **extra,
    }


def measure_mlsys(quick: bool) -> list[dict]:
    min_time = 0.05 if quick else 0.2
    runs = 3 if quick else 9
    rows = [
        _row(
            f"import mlsys (fresh interpreter, median of {runs})",
            "import",
            fresh_import_time("mlsys", runs),
            IMPORT_TARGET_S,
        )
    ]
    sys.path.insert(0, str(ROOT))
    for path in sorted(BENCH.glob("bench_*.py")):
        mod = _load(path)
        if not hasattr(mod, "scenarios"):
            continue
        for name, fn, target in mod.scenarios():
            if name.startswith("import"):
                continue  # measured above, once, the same way for both packages
            if getattr(fn, "reports_seconds", False):
                # a fresh-interpreter figure: the call reports its own seconds from process
                # start to the result (an interpreter's exit is not part of the target)
                seconds = statistics.median(fn()[0] for _ in range(runs))
            else:
                seconds = _median_of(fn) if target >= 0.1 else per_call(fn, min_time)
            rows.append(_row(name, path.stem, seconds, target))
    rows += _search_rates()
    book = ROOT / "book" / "quarto"
    if book.is_dir():
        rows.append(
            _row(
                "mlsys check book/quarto (static, fresh process, median of 3)",
                "check",
                _fresh([sys.executable, "-m", "mlsys.cli", "check", str(book)], 3),
                CHECK_TARGET_S,
            )
        )
    return rows


def _search_rates() -> list[dict]:
    from mlsys import Fabrics, Fleet, Models, Nodes, ParallelismSearch

    cases = [
        (
            "ParallelismSearch layouts/s, GPT-3 175B on 64 A100",
            "search_gpt3",
            lambda: ParallelismSearch().solve(
                Models.GPT3_175B,
                Fleet(node=Nodes.DGX_A100, count=8, fabric=Fabrics.IB_HDR),
                batch_size=64,
            ),
        ),
        (
            "ParallelismSearch layouts/s, Llama-3.1 405B on 16,384 H100",
            "search_405b",
            lambda: ParallelismSearch().solve(
                Models.Llama3_405B,
                Fleet(node=Nodes.DGX_H100, count=2048, fabric=Fabrics.IB_NDR),
                batch_size=2048,
                seq_len=8192,
            ),
        ),
    ]
    rows = []
    for name, key, call in cases:
        count = call().candidates
        seconds = _median_of(call)
        rate = count / seconds
        rows.append(
            {
                "scenario": name,
                "group": "search",
                "kind": "rate",
                "mlsys": rate,
                "layouts": count,
                "target": SEARCH_RATE_TARGET,
                "ratio": rate / SEARCH_RATE_TARGET,
                "meets": rate >= SEARCH_RATE_TARGET,
                "equivalent": key,
            }
        )
    return rows


# -- the mlsysim side --------------------------------------------------------------------------
def _venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def ensure_mlsysim() -> Path:
    """Create ``benchmarks/.venv-mlsysim`` with mlsysim 0.3.0 unless it is there."""
    py = _venv_python()
    if not py.exists():
        print(f"creating {VENV.relative_to(ROOT)} ...", flush=True)
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    probe = subprocess.run(
        [str(py), "-c", "import mlsysim; print(mlsysim.__version__)"],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0 or probe.stdout.strip() != MLSYSIM_SPEC.split("==")[1]:
        print(f"installing {MLSYSIM_SPEC} into {VENV.relative_to(ROOT)} ...", flush=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", MLSYSIM_SPEC], check=True)
    return py


def measure_mlsysim(quick: bool) -> dict:
    py = ensure_mlsysim()
    runs = "3" if quick else "9"
    proc = subprocess.run(
        [str(py), str(BENCH / "mlsysim_scenarios.py"), runs],
        cwd=BENCH,  # not the repository root: nothing of mlsys on its path
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def attach(rows: list[dict], other: dict | None) -> None:
    """Put each mlsysim figure beside its mlsys scenario, with the speed-up."""
    scen = (other or {}).get("scenarios", {})
    for row in rows:
        key = row.pop("equivalent", None)
        if key is None:
            key = next((v for k, v in EQUIVALENTS.items() if row["scenario"].startswith(k)), None)
        entry = scen.get(key) if key else None
        row["mlsysim"] = row["mlsysim_note"] = row["speedup"] = None
        if not entry:
            continue
        row["mlsysim_note"] = entry.get("note")
        if row["kind"] == "rate":
            rate = entry.get("layouts_per_s")
            row["mlsysim"] = rate
            row["speedup"] = row["mlsys"] / rate if rate else None
        else:
            seconds = entry.get("seconds")
            row["mlsysim"] = seconds
            row["speedup"] = seconds / row["mlsys"] if seconds else None


# -- output ------------------------------------------------------------------------------------
def _fmt_time(s: float | None) -> str:
    if s is None:
        return "—"
    if s >= 0.1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} µs"


def _fmt(row: dict, key: str) -> str:
    value = row[key]
    if row["kind"] == "rate":
        return "—" if value is None else f"{value:,.0f}/s"
    return _fmt_time(value)


def print_table(rows: list[dict]) -> None:
    head = (
        f"{'scenario':66s} {'mlsys':>11s} {'target':>11s} {'ratio':>6s} "
        f"{'mlsysim':>11s} {'speed-up':>9s}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        speed = "—" if r["speedup"] is None else f"{r['speedup']:,.0f}×"
        print(
            f"{r['scenario'][:66]:66s} {_fmt(r, 'mlsys'):>11s} {_fmt(r, 'target'):>11s} "
            f"{r['ratio']:6.2f} {_fmt(r, 'mlsysim'):>11s} {speed:>9s}"
        )
    missed = [r["scenario"] for r in rows if not r["meets"]]
    print(f"{len(rows) - len(missed)} of {len(rows)} scenarios meet their target")
    for name in missed:
        print(f"  misses: {name}")


def _git_commit() -> str | None:
    proc = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
    )
    return proc.stdout.strip() or None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--no-mlsysim", action="store_true", help="skip the comparison")
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--out",
        "--output",
        dest="output",
        type=Path,
        default=OUT,
        help=f"JSON file to write (default {OUT.relative_to(ROOT)})",
    )
    where.add_argument(
        "--publish",
        action="store_const",
        dest="output",
        const=PUBLISHED,
        help=f"write {PUBLISHED.relative_to(ROOT)}, the data of the benchmarks page",
    )
    args = parser.parse_args(argv)

    def _load() -> list[float] | None:
        return list(os.getloadavg()) if hasattr(os, "getloadavg") else None

    load_before = _load()
    started = _dt.datetime.now(_dt.timezone.utc)
    rows = measure_mlsys(args.quick)
    load_mid = _load()
    other = None
    if not args.no_mlsysim:
        try:
            other = measure_mlsysim(args.quick)
        except (OSError, subprocess.CalledProcessError, ValueError) as exc:
            # no registry access, or mlsysim changed: report mlsys alone, say why
            print(f"mlsysim comparison skipped: {exc}", file=sys.stderr)
    attach(rows, other)
    load_after = _load()
    print_table(rows)

    import mlsys

    meta = {
        "measured_at": started.isoformat(timespec="seconds"),
        "duration_s": (_dt.datetime.now(_dt.timezone.utc) - started).total_seconds(),
        "load_average_before": load_before,
        "load_average_after_mlsys": load_mid,
        "load_average_after": load_after,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "mlsys_version": mlsys.__version__,
        "mlsys_commit": _git_commit(),
        "mlsysim_version": other.get("version") if other else None,
        "quick": args.quick,
    }
    if load_before:
        print(
            f"load average {load_before[0]:.2f} before, {load_mid[0]:.2f} after the mlsys "
            f"part, {load_after[0]:.2f} after mlsysim's, on {os.cpu_count()} CPUs"
        )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"meta": meta, "rows": rows}, indent=1) + "\n")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
