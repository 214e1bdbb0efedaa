"""``mlsys catalog``: list registries, show an entry with the provenance of each value."""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["add_arguments", "run", "REGISTRIES"]

REGISTRIES = ("hardware", "nodes", "fabrics", "models", "grids", "datacenters")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Attach the ``catalog`` subcommand's arguments.

    Parameters
    ----------
    parser : argparse.ArgumentParser
        The subcommand's parser.
    """
    parser.add_argument(
        "registry",
        nargs="?",
        choices=REGISTRIES,
        help="which registry (omit to list the registries and their sizes)",
    )
    parser.add_argument("name", nargs="?", help="an entry to show (omit to list all)")
    parser.add_argument("--json", action="store_true", help="print JSON")


def _registry(name: str) -> Any:
    from mlsys.core import catalog

    return getattr(catalog, {"hardware": "Hardware"}.get(name, name.capitalize()))


def _shown(value: Any) -> str:
    """A catalog value in the unit the catalog gives it, written by the display policy."""
    from mlsys.core.fmt import fmt

    if hasattr(value, "units") and hasattr(value, "magnitude"):
        return str(fmt(value, value.units))  # "81,559 MiB", "$30,000", "3.14 L/kWh"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(fmt(value))
    return str(value)


def _fields(entry: Any) -> list[tuple[str, str, str]]:
    rows = []
    skip = {"provenance", "name", "display_name", "accelerator", "intra_fabric", "grid"}
    for field in type(entry).model_fields:
        value = getattr(entry, field)
        if value is None or field in skip:
            continue
        prov = entry.provenance_of(field)
        source = f"{prov.kind}: {prov.reference}" if prov else "-"
        if field == "year":
            text = str(value)  # a year, not a count: "2022", never "2,022"
        elif isinstance(value, dict):
            text = ", ".join(f"{k} {_shown(v)}" for k, v in value.items())
        elif isinstance(value, (list, tuple)):
            text = ", ".join(_shown(v) for v in value)
        else:
            text = _shown(value)
        rows.append((field, text, source))
    for ref in ("accelerator", "intra_fabric", "grid"):
        if hasattr(entry, ref):
            rows.insert(0, (ref, getattr(entry, ref).name, "catalog reference"))
    return rows


def _list_registries(as_json: bool) -> int:
    counts = {name: len(_registry(name).list()) for name in REGISTRIES}
    if as_json:
        print(json.dumps(counts, indent=2))
        return 0
    width = max(len(name) for name in REGISTRIES)
    for name, n in counts.items():
        print(f"{name:<{width}}  {n:>3} {'entry' if n == 1 else 'entries'}")
    print("\n`mlsys catalog REGISTRY` lists one; `mlsys catalog REGISTRY NAME` shows an entry.")
    return 0


def run(args: argparse.Namespace) -> int:
    """List the registries, list one registry, or show one entry.

    Parameters
    ----------
    args : argparse.Namespace
        Parsed arguments.

    Returns
    -------
    int
        Exit status (0).
    """
    if args.registry is None:
        return _list_registries(args.json)
    registry = _registry(args.registry)
    if args.name is None:
        if args.json:
            print(json.dumps({k: e.label for k, e in registry.items()}, indent=2))
        else:
            width = max(len(k) for k in registry.list())
            for key, entry in registry.items():
                print(f"{key:<{width}}  {entry.label}")
        return 0
    entry = registry.get(args.name)
    if args.json:
        print(json.dumps(entry.model_dump(mode="json"), indent=2))
        return 0
    print(f"{entry.name}: {entry.label}")
    rows = _fields(entry)
    w1 = max(len(r[0]) for r in rows)
    w2 = min(max(len(r[1]) for r in rows), 60)
    for field, value, source in rows:
        print(f"  {field:<{w1}}  {value:<{w2}}  [{source}]")
    return 0
