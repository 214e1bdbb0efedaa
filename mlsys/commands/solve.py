"""``mlsys solve SOLVER``: run one solver on catalog entries and print its result.

Catalog entries are named with ``--model``, ``--hardware``, ``--node`` (with ``--nodes``
and ``--fabric`` for a fleet), ``--grid`` and ``--datacenter``; every other parameter of
the solver's ``solve`` is given as ``--set name=value`` (repeatable). Only the arguments
the solver's ``solve`` accepts are passed, so one command serves every solver.

Examples
--------
``mlsys solve roofline --model Llama2_70B --hardware H100 --set phase=decode``
``mlsys solve distributed --model GPT3_175B --node DGX_A100 --nodes 8 --fabric IB_HDR
--set tp_size=8 --set pp_size=8 --set batch_size=64``
(add ``--explain`` for the step time as a tree of its terms; for ``serving``, the time to
first token's and the time per output token's trees)
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
from typing import Any

from mlsys.cli import positive_int
from mlsys.core.errors import MlsysError, ParameterError

__all__ = [
    "SOLVERS",
    "MissingInputError",
    "add_arguments",
    "run",
    "parse_value",
    "build_inputs",
    "solve",
]

# solve() parameter -> how to give it on the command line
_FLAGS: dict[str, str] = {
    "model": "--model NAME (e.g. Llama3_8B; `mlsys catalog models` lists them)",
    "hardware": "--hardware NAME (e.g. H100) or --node NAME",
    "fleet": "--node NAME [--nodes N --fabric NAME] (e.g. --node DGX_H100)",
    "node": "--node NAME (e.g. DGX_H100)",
    "fabric": "--fabric NAME (e.g. IB_NDR)",
    "grid": "--grid NAME",
    "datacenter": "--datacenter NAME",
}


class MissingInputError(MlsysError):
    """A solver needs an input the command line did not give (``--hardware`` ...).

    Parameters
    ----------
    solver : str
        The ``mlsys solve`` name of the solver.
    parameter : str
        The ``solve()`` parameter that is missing.
    """

    def __init__(self, solver: str, parameter: str) -> None:
        self.solver = solver
        self.parameter = parameter
        how = _FLAGS.get(parameter, f"--set {parameter}=VALUE")
        super().__init__(f"the {solver} solver needs {parameter}: give {how}")


# command name -> (module, class)
SOLVERS: dict[str, tuple[str, str]] = {
    "roofline": ("mlsys.core.solvers.roofline", "SingleNodeModel"),
    "memory": ("mlsys.core.solvers.memory", "MemoryModel"),
    "distributed": ("mlsys.core.solvers.distributed", "DistributedModel"),
    "serving": ("mlsys.core.solvers.serving", "ServingModel"),
    "batching": ("mlsys.core.solvers.batching", "ContinuousBatchingModel"),
    "reliability": ("mlsys.core.solvers.reliability", "ReliabilityModel"),
    "synchronization": ("mlsys.core.solvers.synchronization", "SynchronizationModel"),
    "sustainability": ("mlsys.core.solvers.sustainability", "SustainabilityModel"),
    "economics": ("mlsys.core.solvers.economics", "EconomicsModel"),
}


EXPLAINED = frozenset({"distributed", "serving"})
"""Solvers whose result has ``explain()`` (``--explain``)."""

ENGINE_SOLVERS = frozenset({"serving", "batching"})
"""Solvers built for a serving engine (``--engine``: a row of ``engines.toml``)."""


def _trees(solver: str, result: Any) -> dict[str, tuple[str, Any]]:
    """The trees ``--explain`` shows for ``solver``'s ``result``: key -> (title, tree).
    A serving result has two, the time to first token and the time per output token."""
    if solver == "serving":
        return {
            "prefill": ("Where the time to first token goes", result.explain("prefill")),
            "decode": ("Where the time per output token goes", result.explain("decode")),
        }
    return {"step": ("Where the step time goes", result.explain())}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Attach the ``solve`` subcommand's arguments.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser.
    """
    parser.add_argument("solver", choices=sorted(SOLVERS), help="which model to run")
    parser.add_argument("--model", help="catalog model, e.g. Llama2_70B")
    parser.add_argument("--hardware", help="catalog accelerator, e.g. H100")
    parser.add_argument("--node", help="catalog node, e.g. DGX_H100")
    parser.add_argument(
        "--nodes", type=positive_int, help="number of nodes in the fleet (1 or more)"
    )
    parser.add_argument("--fabric", help="scale-out fabric of the fleet, e.g. IB_NDR")
    parser.add_argument("--grid", help="catalog electricity grid")
    parser.add_argument("--datacenter", help="catalog data centre")
    parser.add_argument(
        "--set",
        dest="params",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="any other solve() parameter, e.g. --set batch_size=8 --set precision=fp8",
    )
    parser.add_argument(
        "--engine",
        help="serving engine and release whose kernels and loop are priced (serving, "
        "batching): a row of mlsys/core/catalog/data/engines.toml, e.g. vllm-v0, "
        "trtllm-0.5, sglang; default the reference engine",
    )
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument(
        "--explain",
        action="store_true",
        help="also print where the time goes: the result's terms as a tree (distributed; "
        "serving: the time to first token and the time per output token)",
    )


def parse_value(text: str) -> Any:
    """Parse a ``--set`` value: int, float, bool, None, a Quantity string, or text.

    Parameters
    ----------
    text : str
        The value as typed.

    Returns
    -------
    Any
    """
    lowered = text.strip().lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def build_inputs(args: argparse.Namespace) -> dict[str, Any]:
    """Catalog objects named on the command line, by the parameter names solvers use.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments.

    Returns
    -------
    dict
        Some of ``model``, ``hardware``, ``node``, ``fleet``, ``fabric``, ``grid``,
        ``datacenter``.
    """
    from mlsys.core.catalog import Datacenters, Fabrics, Grids, Hardware, Models, Nodes
    from mlsys.core.types import Fleet

    inputs: dict[str, Any] = {}
    if args.model:
        inputs["model"] = Models.get(args.model)
    if args.node:
        inputs["node"] = Nodes.get(args.node)
    if args.hardware:
        inputs["hardware"] = Hardware.get(args.hardware)
    elif "node" in inputs:
        inputs["hardware"] = inputs["node"].accelerator
    if args.fabric:
        inputs["fabric"] = Fabrics.get(args.fabric)
    if "node" in inputs:
        count = 1 if args.nodes is None else args.nodes
        if count > 1 and "fabric" not in inputs:
            raise MlsysError(f"a fleet of {count} nodes needs --fabric NAME (e.g. IB_NDR)")
        inputs["fleet"] = Fleet(node=inputs["node"], count=count, fabric=inputs.get("fabric"))
    elif args.nodes is not None:
        raise MlsysError(f"--nodes {args.nodes} counts nodes of a type: give --node NAME too")
    if args.grid:
        inputs["grid"] = Grids.get(args.grid)
    if args.datacenter:
        inputs["datacenter"] = Datacenters.get(args.datacenter)
    return inputs


def solve(
    solver: str, inputs: dict[str, Any], params: dict[str, Any], engine: str | None = None
) -> Any:
    """Run a solver with the inputs and parameters its ``solve`` accepts.

    Parameters
    ----------
    solver : str
        A key of :data:`SOLVERS`.
    inputs : dict
        Catalog objects from :func:`build_inputs`.
    params : dict
        Further keyword arguments.
    engine : str, optional
        The serving engine the solver is built for (:data:`ENGINE_SOLVERS` only); None:
        the solver's default, the reference engine.

    Returns
    -------
    Result
        The solver's result.

    Raises
    ------
    MissingInputError
        When ``solve()`` has a required parameter that neither the inputs nor
        ``params`` give.
    ParameterError
        For an engine given to a solver that takes none, or one the table does not hold.
    """
    module, cls = SOLVERS[solver]
    if engine is not None and solver not in ENGINE_SOLVERS:
        raise ParameterError("--engine", engine, "given only with the solvers "
                             + " or ".join(sorted(ENGINE_SOLVERS)))  # fmt: skip
    built = getattr(importlib.import_module(module), cls)
    model = built(engine=engine) if solver in ENGINE_SOLVERS else built()
    signature = inspect.signature(model.solve)
    accepted = set(signature.parameters)
    takes_kwargs = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    unknown = [k for k in params if k not in accepted and not takes_kwargs]
    if unknown:
        raise ParameterError(
            "--set", unknown[0], f"a parameter of {cls}.solve: " + ", ".join(sorted(accepted))
        )
    kwargs = {k: v for k, v in inputs.items() if k in accepted}
    kwargs.update(params)
    for name, parameter in signature.parameters.items():
        required = parameter.default is parameter.empty and parameter.kind not in (
            parameter.VAR_KEYWORD,
            parameter.VAR_POSITIONAL,
        )
        if required and name not in kwargs:
            raise MissingInputError(solver, name)
    return model.solve(**kwargs)


# Fields that hold a fraction of something (shown as a percent, as the book prints them).
_FRACTION_FIELDS = frozenset({"mfu", "hfu", "mbu", "utilization"})
_FRACTION_ENDINGS = ("_fraction", "_efficiency", "_utilization", "_mfu", "_mbu", "_share")
# Units of the columns of a per-operator table, by column name.
_COLUMN_UNITS = {"flops": "flop", "bytes": "byte", "time": "s", "intensity": "flop/byte"}


def _is_fraction(name: str) -> bool:
    leaf = name.rsplit(".", 1)[-1]
    return leaf in _FRACTION_FIELDS or leaf.endswith(_FRACTION_ENDINGS)


# Significant digits of a measured or computed quantity on the terminal, as in the book's
# tables; a count without a unit (a batch of 4,096 tokens) keeps every digit.
_DIGITS = 3


def _number(value: float, unit: str | None) -> str:
    """A number as the display policy writes it (``mlsys.core.fmt.fmt``)."""
    from mlsys.core.fmt import FormatError, fmt
    from mlsys.core.units import Q_

    count = unit is None and float(value).is_integer()
    digits = None if count else _DIGITS
    try:
        return str(fmt(value if unit is None else Q_(value, unit), digits=digits))
    except FormatError:  # NaN or infinity: say so rather than fail
        return "not a number" if value != value else str(value)


def _text(name: str, value: Any, unit: str | None) -> str | None:
    """One field for the terminal, or None when this solve did not compute it."""
    from mlsys.core.fmt import pct

    if value is None or (isinstance(value, (tuple, list, dict)) and not value):
        return None
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return ", ".join(f"{k} {_text(k, v, unit)}" for k, v in value.items())
    if isinstance(value, (tuple, list)):
        return "; ".join(str(v) for v in value)
    if isinstance(value, (int, float)):
        if unit is None and _is_fraction(name):
            return str(pct(value, digits=_DIGITS))
        return _number(value, unit)
    fields = getattr(type(value), "model_fields", None)
    if fields:  # a layout or another model: the fields that differ from their defaults
        changed = [
            f"{field}={getattr(value, field)}"
            for field, info in fields.items()
            if getattr(value, field) != info.default
        ]
        return " ".join(changed) or "defaults"
    return str(value)


def _rows(result: Any, prefix: str = "") -> tuple[list[tuple[str, str]], list[tuple[str, dict]]]:
    """``(field, text)`` rows of a result (nested results flattened as ``outer.inner``)
    and its tables (fields holding one row of numbers per key)."""
    from mlsys.core.results import Result

    rows: list[tuple[str, str]] = []
    tables: list[tuple[str, dict]] = []
    for name in result:
        value = result.si(name)
        if isinstance(value, Result):
            inner_rows, inner_tables = _rows(value, f"{prefix}{name}.")
            rows += inner_rows
            tables += inner_tables
        elif isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            tables.append((f"{prefix}{name}", value))
        else:
            text = _text(name, value, result.unit_of(name))
            if text is not None:
                rows.append((f"{prefix}{name}", text))
    return rows, tables


def _cell(column: str, value: Any) -> str:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _number(float(value), _COLUMN_UNITS.get(column))
    return "" if value is None else str(value)


def _table(name: str, table: dict) -> list[str]:
    """A per-key table with a header, numbers right-aligned, each in its column's unit."""
    columns = list(dict.fromkeys(c for row in table.values() for c in row))
    body = [[str(key), *(_cell(c, row.get(c)) for c in columns)] for key, row in table.items()]
    header = ["", *columns]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        key = f"{cells[0]:<{widths[0]}}"  # row names left, numbers right
        numbers = [f"{c:>{w}}" for c, w in zip(cells[1:], widths[1:], strict=True)]
        return "  " + "  ".join([key, *numbers])

    return ["", f"{name}:", line(header), *(line(r) for r in body)]


def _render(result: Any) -> str:
    """A result as the terminal shows it: one field a line, fractions as percents,
    quantities by the display policy, no row for a field this solve did not compute."""
    from mlsys.core.results import Result

    if not isinstance(result, Result):
        return str(result)
    rows, tables = _rows(result)
    width = max((len(name) for name, _ in rows), default=0)
    lines = [f"{name:<{width}}  {text}" for name, text in rows]
    for name, table in tables:
        lines += _table(name, table)
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run the chosen solver and print its result.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments.

    Returns
    -------
    int
        Exit status: 0, or 1 when the result says the configuration is infeasible.
    """
    params = {}
    for item in args.params:
        if "=" not in item:
            raise ParameterError("--set", item, "NAME=VALUE")
        name, value = item.split("=", 1)
        params[name.strip()] = parse_value(value)
    explain = getattr(args, "explain", False)
    if explain and args.solver not in EXPLAINED:
        raise ParameterError("--explain", args.solver, "a solver that explains its result: "
                             + ", ".join(sorted(EXPLAINED)))  # fmt: skip
    result = solve(args.solver, build_inputs(args), params, getattr(args, "engine", None))
    trees = _trees(args.solver, result) if explain else {}
    if args.json:
        data = result.to_dict(quantities=False)
        if explain:  # one tree, or a serving result's two by phase
            as_data = {key: tree.to_dict() for key, (_, tree) in trees.items()}
            data["explain"] = as_data.get("step", as_data)
        print(json.dumps(data, indent=2, default=str))
    else:
        print(_render(result))
        for title, tree in trees.values():
            print(f"\n{title}\n")
            print(tree.to_text())
    return 0 if getattr(result, "get", lambda *_: True)("feasible", True) is not False else 1
