"""Resolve a row of ``data/mlsysim_surface.csv`` (the textbook package's surface) on mlsys.

A row names a module of the book's package (``mlsysim``, ``mlsysim.core.constants``,
``mlsysim.physics``, ``mlsysim.fmt``, ``mlsysim.core.formulas``,
``mlsysim.engine.solver``), a dotted path in it, its kind and, for callables, the call
shape the book gives it (for a resolver class of ``mlsysim.engine.solver``, that of its
``solve``). :func:`resolve` walks the path
on the mlsys modules that serve that module after ``mlsys migrate`` and checks the call
shape: the book's required arguments bind positionally and its keyword arguments bind by
name.
"""

from __future__ import annotations

import csv
import importlib
import inspect
import re
import warnings
from functools import partial, reduce
from pathlib import Path
from typing import Any

DATA = Path(__file__).with_name("data") / "mlsysim_surface.csv"

# the book's module -> the mlsys modules that serve its names, in lookup order
SERVED_BY: dict[str, tuple[str, ...]] = {
    # mlsys.compat.solvers: the solver classes migrate routes there (mlsys.book.rewrite.NAME_MAP)
    "mlsysim": (
        "mlsys",
        "mlsys.constants",
        "mlsys.compat.physics",
        "mlsys.formatting",
        "mlsys.compat.solvers",
    ),
    "mlsysim.core.constants": ("mlsys.constants",),
    "mlsysim.physics": ("mlsys.compat.physics",),
    "mlsysim.fmt": ("mlsys.compat.fmt", "mlsys.formatting"),
    "mlsysim.core.formulas": ("mlsys.formulas",),
    # migrate routes ``from mlsysim.engine.solver import X`` to mlsys.compat.solvers
    "mlsysim.engine.solver": ("mlsys.compat.solvers",),
}

# modules whose class rows give the call shape of ``Class().solve`` (the book constructs
# its resolvers without arguments and passes everything to ``solve``)
SOLVE_SHAPE: frozenset[str] = frozenset({"mlsysim.engine.solver"})


def rows() -> list[dict[str, str]]:
    """The inventory's rows (its first line is a comment stating the count and source)."""
    with DATA.open(newline="", encoding="utf-8") as handle:
        lines = [line for line in handle if not line.startswith("#")]
    return list(csv.DictReader(lines))


def header() -> str:
    """The inventory's first line: what it holds, how many, read from where."""
    with DATA.open(encoding="utf-8") as handle:
        return handle.readline()


def _walk(root: Any, path: str) -> Any:
    return reduce(getattr, path.split("."), root)


def lookup(row: dict[str, str]) -> Any:
    """The mlsys object a row names (AttributeError when no serving module has it)."""
    error: Exception | None = None
    for module in SERVED_BY[row["module"]]:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                return _walk(importlib.import_module(module), row["path"])
        except (AttributeError, KeyError, LookupError) as exc:
            error = exc
    raise AttributeError(f"{row['module']}.{row['path']}: {error}")


_PARAM = re.compile(r"^\s*(\*{0,2})(\w+)\s*(=.*)?$")


def book_params(shape: str) -> tuple[list[str], list[str]]:
    """(required positional names, names with defaults) of a call shape ``(a, b, c=1)``."""
    inner = shape.strip()[1:-1]
    required: list[str] = []
    optional: list[str] = []
    for part in filter(None, (p.strip() for p in _split_top(inner))):
        match = _PARAM.match(part)
        if not match or match.group(1):
            continue  # *args / **kwargs accept anything
        (optional if match.group(3) else required).append(match.group(2))
    return required, optional


def _split_top(text: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [*out, cur]


def shape_problem(obj: Any, shape: str) -> str | None:
    """Why ``obj`` cannot be called with the book's call shape, or None."""
    if not callable(obj):
        return "not callable"
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return None  # a builtin or C type: callable is what can be checked
    required, optional = book_params(shape)
    try:
        sig.bind(*([None] * len(required)))
    except TypeError as exc:
        return f"the book's {len(required)} positional arguments do not bind: {exc}"
    names = set(sig.parameters)
    var_kw = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    missing = [n for n in optional if n not in names and not var_kw]
    if missing:
        return f"no keyword {missing}"
    return None


def resolve(row: dict[str, str]) -> str | None:
    """None when mlsys serves the row with its call shape, else what is wrong."""
    try:
        obj = lookup(row)
    except Exception as exc:  # a view that cannot be built is as absent as a missing name
        return f"missing ({type(exc).__name__})"
    if row["kind"] in ("function", "method", "class"):
        if not row["call_shape"]:  # the book's shape is not known: callable is the check
            return None if callable(obj) else "not callable"
        if row["module"] in SOLVE_SHAPE and row["kind"] == "class":
            if not callable(getattr(obj, "solve", None)):
                return "no solve method"
            obj = partial(obj.solve, None)  # the unbound solve with ``self`` bound
        problem = shape_problem(obj, row["call_shape"])
        if problem:
            return problem
    return None


def refresh_status() -> tuple[int, int]:
    """Rewrite the ``mlsys_now`` column and the header's counts from what mlsys serves now.

    Run ``python -m tests.compat._surface`` after serving more of the book's surface.

    Returns
    -------
    tuple of int
        (rows, rows served).
    """
    table = rows()
    for row in table:
        row["mlsys_now"] = "served" if resolve(row) is None else "not yet"
    served = sum(r["mlsys_now"] == "served" for r in table)
    first = re.sub(
        r": \d+ names and paths \(\d+ served by mlsys, \d+ not yet\)",
        f": {len(table)} names and paths ({served} served by mlsys, {len(table) - served} not yet)",
        header(),
    )
    with DATA.open("w", newline="", encoding="utf-8") as handle:
        handle.write(first)
        writer = csv.DictWriter(handle, fieldnames=list(table[0]))
        writer.writeheader()
        writer.writerows(table)
    return len(table), served


if __name__ == "__main__":
    total, served = refresh_status()
    print(f"{total} rows, {served} served")
