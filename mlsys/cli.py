"""The ``mlsys`` command.

Each subcommand lives in its own module, which provides two functions:
``add_arguments(parser)`` and ``run(args) -> int``. Modules are imported only when
their subcommand runs, so ``mlsys --help`` stays fast and a missing optional extra
(torch, Jupyter) only matters to the subcommand that needs it.
"""

from __future__ import annotations

import argparse
import importlib
import io
import os
import sys
from collections.abc import Sequence
from pathlib import Path, PurePath
from types import TracebackType

from mlsys.core.errors import MlsysError, ParameterError

__all__ = [
    "SUBCOMMANDS",
    "build_parser",
    "file_error",
    "main",
    "positive_int",
    "non_negative_int",
]

# subcommand -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "demo": ("mlsys.commands.demo", "a short tour: a roofline and a training-memory table"),
    "solve": ("mlsys.commands.solve", "run one solver and print its result"),
    "search": ("mlsys.commands.search", "search parallel layouts for a model on a fleet"),
    "catalog": ("mlsys.commands.catalog", "list or show catalog entries with provenance"),
    "check": ("mlsys.book.check_cli", "check a Quarto book's mlsys imports and numbers"),
    "numbers": ("mlsys.book.numbers_cli", "record or diff the numbers a book prints"),
    "migrate": ("mlsys.commands.migrate", "point an existing book's imports at mlsys"),
    "emulate": ("mlsys.emulate.cli", "run real parallelism on CPU processes (needs torch)"),
}


def positive_int(text: str) -> int:
    """An argparse ``type=``: a whole number of at least 1 ("--nodes 0" is refused).

    Parameters
    ----------
    text : str
        The argument as typed.

    Returns
    -------
    int

    Raises
    ------
    argparse.ArgumentTypeError
        Turned by argparse into "prog: error: argument --nodes: ..." and exit status 2.
    """
    return _whole_number_at_least(text, 1)


def non_negative_int(text: str) -> int:
    """An argparse ``type=``: a whole number of at least 0.

    Parameters
    ----------
    text : str
        The argument as typed.

    Returns
    -------
    int

    Raises
    ------
    argparse.ArgumentTypeError
        When the text is not a whole number, or is negative.
    """
    return _whole_number_at_least(text, 0)


def _whole_number_at_least(text: str, minimum: int) -> int:
    # The one parser behind positive_int and non_negative_int, so both refuse the
    # same texts with the same messages.
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{value} is not allowed: expected {minimum} or more")
    return value


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
        _refuse_special_files(args)
        return int(importlib.import_module(args._module).run(args) or 0)
    except MlsysError as exc:
        print(f"mlsys {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except ImportError as exc:
        extra = "emulate" if args.command == "emulate" else "book"
        print(
            f"mlsys: error: {exc}. Install the optional extra: pip install 'mlsys-book[{extra}]'",
            file=sys.stderr,
        )
        return 2
    except BrokenPipeError:
        # `mlsys demo | head`: the reader closed the pipe. Point stdout at /dev/null so
        # the interpreter's final flush cannot fail again, and stop quietly, as cat does
        # (Python docs, "Note on SIGPIPE").
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except (OSError, UnicodeDecodeError, RecursionError) as exc:
        # a file that cannot be read or written: one line naming it, never a traceback
        if os.environ.get("MLSYS_TRACEBACK"):
            raise
        print(f"mlsys {args.command}: error: {file_error(exc)}", file=sys.stderr)
        return 1
    except (TypeError, ValueError, KeyError, AttributeError) as exc:
        # A mistake no check caught: a line a person can read, not a traceback (which
        # MLSYS_TRACEBACK=1 restores for whoever debugs mlsys itself).
        if os.environ.get("MLSYS_TRACEBACK"):
            raise
        message = str(exc)
        message = message if len(message) <= 240 else message[:239] + "…"
        print(f"mlsys {args.command}: error: {type(exc).__name__}: {message}", file=sys.stderr)
        return 2


def _refuse_special_files(args: argparse.Namespace) -> None:
    """Refuse a PATH argument that exists but is no file or folder (``/dev/zero``, a FIFO).

    No command reads a device: reading one never ends, and one that does end (a FIFO's
    writer) is not a book. Checked here, once, for every command's ``path``/``paths``.
    """
    for key in ("path", "paths"):
        given = getattr(args, key, None)
        for raw in [given] if isinstance(given, str) else list(given or ()):
            path = Path(raw)
            if path.exists() and not (path.is_file() or path.is_dir()):
                raise ParameterError(
                    "PATH", raw, "a regular file or a directory (not a device, pipe or socket)"
                )


def file_error(exc: BaseException) -> str:
    """One line saying what went wrong with which file: ``<what> (<file>)``.

    The file is the exception's own ``filename`` (an ``OSError``), else the file being
    read or written where it was raised: the innermost open file or path in the
    traceback (a ``UnicodeDecodeError`` or ``RecursionError`` does not carry one).

    Parameters
    ----------
    exc : BaseException
        An ``OSError``, ``UnicodeDecodeError`` or ``RecursionError``.

    Returns
    -------
    str
        E.g. ``"permission denied (book/ch1.qmd)"``.
    """
    if isinstance(exc, UnicodeDecodeError):
        what = (
            f"not a UTF-8 text file (byte 0x{exc.object[exc.start]:02x} at offset "
            f"{exc.start} cannot be decoded)"
        )
    elif isinstance(exc, RecursionError):
        what = "nested too deeply to read"
    else:
        what = (getattr(exc, "strerror", None) or str(exc) or type(exc).__name__).lower()
    filename = getattr(exc, "filename", None) or _file_in_traceback(exc.__traceback__)
    return f"{what} ({filename})" if filename else what


def _file_in_traceback(tb: TracebackType | None) -> str | None:
    """The innermost open file or path held by a frame of ``tb``, if any."""
    frames = []
    while tb is not None:
        frames.append(tb.tb_frame)
        tb = tb.tb_next
    for frame in reversed(frames):  # innermost first: the file being read when it failed
        for value in frame.f_locals.values():
            if isinstance(value, io.IOBase) and isinstance(getattr(value, "name", None), str):
                return value.name
            if isinstance(value, PurePath):
                return str(value)
    return None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
