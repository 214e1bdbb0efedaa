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
    parser.add_argument("--json", action="store_true", help="print the result as JSON")


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


def solve(solver: str, inputs: dict[str, Any], params: dict[str, Any]) -> Any:
    """Run a solver with the inputs and parameters its ``solve`` accepts.

    Parameters
    ----------
    solver : str
        A key of :data:`SOLVERS`.
    inputs : dict
        Catalog objects from :func:`build_inputs`.
    params : dict
        Further keyword arguments.

    Returns
    -------
    Result
        The solver's result.

    Raises
    ------
    MissingInputError
        When ``solve()`` has a required parameter that neither the inputs nor
        ``params`` give.
    """
    module, cls = SOLVERS[solver]
    model = getattr(importlib.import_module(module), cls)()
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


def _cell(value: Any) -> str:
    from mlsys.core.fmt import fmt

    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(fmt(value))  # the display policy, as in every Result table
    return str(value)


def _render(result: Any) -> str:
    from mlsys.core.results import Result

    if not isinstance(result, Result):
        return str(result)
    rows, tables = [], []
    for name, text in result._rows():
        value = result.si(name) if "." not in name else None
        if isinstance(value, dict) and value and all(isinstance(v, dict) for v in value.values()):
            tables.append((name, value))
        else:
            rows.append((name, text))
    width = max(len(name) for name, _ in rows)
    lines = [f"{name:<{width}}  {text}" for name, text in rows]
    for name, table in tables:
        columns = list(next(iter(table.values())))
        lines += ["", f"{name}:", "  " + "  ".join(f"{c:>12}" for c in ["", *columns])]
        for key, row in table.items():
            cells = [f"{key:>12}", *(f"{_cell(row.get(c)):>12}" for c in columns)]
            lines.append("  " + "  ".join(cells))
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
    result = solve(args.solver, build_inputs(args), params)
    if args.json:
        print(json.dumps(result.to_dict(quantities=False), indent=2, default=str))
    else:
        print(_render(result))
    return 0 if getattr(result, "get", lambda *_: True)("feasible", True) is not False else 1
