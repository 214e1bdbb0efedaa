"""The ``mlsys`` command.

Each subcommand lives in its own module, which provides two functions:
``add_arguments(parser)`` and ``run(args) -> int``. Modules are imported only when
their subcommand runs, so ``mlsys --help`` stays fast and a missing optional extra
(torch, Jupyter) only matters to the subcommand that needs it.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from mlsys.core.errors import MlsysError

# subcommand -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("mlsys.commands.demo", "a short tour: a roofline and a training-memory table"),
    "solve": ("mlsys.commands.solve", "run one solver and print its result"),
    "search": ("mlsys.commands.search", "search parallel layouts for a model on a fleet"),
    "catalog": ("mlsys.commands.catalog", "list or show catalog entries with provenance"),
    "check": ("mlsys.book.check_cli", "check a Quarto book's mlsys imports and numbers"),
    "numbers": ("mlsys.book.numbers_cli", "record or diff the numbers a book prints"),
    "emulate": ("mlsys.emulate.cli", "run real parallelism on CPU processes (needs torch)"),
}


def build_parser(wanted: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every subcommand attached.

    Parameters
    ----------
    wanted : str, optional
        The subcommand about to run: only its module is imported to add its arguments.

    Returns
    -------
    argparse.ArgumentParser
    """
    from mlsys import __version__

    parser = argparse.ArgumentParser(
        prog="mlsys",
        description="Live, unit-checked ML-systems numbers for books and courses.",
    )
    parser.add_argument("--version", action="version", version=f"mlsys {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module, help_text) in SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        # Only the chosen subcommand's module is imported: heavy faces stay lazy.
        if name == wanted:
            importlib.import_module(module).add_arguments(p)
            p.set_defaults(_module=module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``mlsys`` command.

    Parameters
    ----------
    argv : sequence of str, optional
        Arguments (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        Process exit status.
    """
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(args_list[0] if args_list else None)
    args = parser.parse_args(args_list)
    if not getattr(args, "command", None):
        parser.print_help()
        return 0
    try:
        return int(importlib.import_module(args._module).run(args) or 0)
    except MlsysError as exc:
        print(f"mlsys: error: {exc}", file=sys.stderr)
        return 2
    except ImportError as exc:
        extra = "emulate" if args.command == "emulate" else "book"
        print(
            f"mlsys: error: {exc}. Install the optional extra: pip install 'mlsys-book[{extra}]'",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
