"""A finding of the build check, and how a path is shown in one.

Both passes of ``mlsys check`` (the static one in :mod:`mlsys.book.check`, the executed
one in :mod:`mlsys.book.kernel`) report :class:`Finding` objects. They live here, below
both, so that neither pass imports the other to get them.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["Finding", "display_path"]


@dataclass(frozen=True, order=True)
class Finding:
    """One problem found in a .qmd file.

    Attributes
    ----------
    file : str
        Path of the .qmd file, as given or relative to the working directory.
    line : int
        1-based line in the .qmd file.
    col : int
        1-based column (``1`` when only the line is known).
    severity : str
        ``"error"`` (the build fails) or ``"warning"``.
    code : str
        Short machine-readable kind: ``syntax``, ``unknown-name``, ``unknown-module``,
        ``import-failed``, ``deprecated``, ``cell-options``, ``front-matter``,
        ``nested-cell``, ``cell-error``, ``inline-error``, ``inline-empty``, ``timeout``,
        ``kernel``, ``bad-output``.
    message : str
        What is wrong and, where possible, what to write instead.
    """

    file: str
    line: int
    col: int
    severity: str
    code: str
    message: str

    def format(self) -> str:
        """``file:line:col: severity: message [code]``, the compiler convention."""
        return f"{self.file}:{self.line}:{self.col}: {self.severity}: {self.message} [{self.code}]"

    def to_dict(self) -> dict[str, Any]:
        """The finding as a JSON-ready dict (keys: file line col severity code message)."""
        return asdict(self)


def display_path(p: Path) -> str:
    """``p`` relative to the working directory when it lies below it, else as given.

    Parameters
    ----------
    p : Path
        A file.

    Returns
    -------
    str
        POSIX-style path for a finding.

    Examples
    --------
    >>> display_path(Path("/") / "nowhere" / "ch.qmd").endswith("nowhere/ch.qmd")
    True
    """
    try:
        rel = os.path.relpath(p)
    except ValueError:  # other drive on Windows
        return p.as_posix()
    return Path(rel).as_posix() if not rel.startswith("..") else p.as_posix()
