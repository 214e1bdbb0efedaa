"""Book-facing names for rendering numbers in chapter prose.

This module re-exports :mod:`mlsys.core.fmt`; it computes nothing itself. Chapter code
imports from here::

    from mlsys.formatting import fmt, pct, money, rng, sci, md_math, check

Older spellings still work and warn with the new one (``DeprecationWarning``):
``sci_latex`` → :func:`latex`, ``md_sci`` → :func:`md_math`. Their old ``precision``
argument (decimals of the mantissa) becomes ``digits = precision + 1``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from mlsys.core.fmt import (
    COMPUTED_DIGITS,
    MAX_CARRIED_DIGITS,
    BookCheckError,
    FormatError,
    Formatted,
    FormatUnitError,
    Math,
    check,
    commas,
    count,
    fmt,
    fmt_int,
    latex,
    md_math,
    money,
    multiple,
    pct,
    per,
    rng,
    sci,
    times,
)

__all__ = [
    "fmt",
    "per",
    "rng",
    "fmt_int",
    "commas",
    "count",
    "pct",
    "times",
    "multiple",
    "money",
    "sci",
    "latex",
    "md_math",
    "check",
    "Formatted",
    "Math",
    "FormatError",
    "FormatUnitError",
    "BookCheckError",
    "MAX_CARRIED_DIGITS",
    "COMPUTED_DIGITS",
]

# old name -> new name (the old call shape is adapted, see _adapter)
_DEPRECATED: dict[str, str] = {
    "sci_latex": "latex",
    "md_sci": "md_math",
}


def _adapter(old: str, new: str, target: Callable[..., Any]) -> Callable[..., Any]:
    """Old call shape ``old(val, precision=2)`` (mantissa decimals) on the new function."""

    def call(val: Any, precision: int = 2) -> Any:
        return target(val, digits=precision + 1)

    call.__name__ = old
    call.__doc__ = f"Deprecated: use :func:`{new}` (``digits = precision + 1``)."
    return call


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:
        new = _DEPRECATED[name]
        warnings.warn(
            f"mlsys.formatting.{name} is deprecated; use mlsys.formatting.{new}"
            " (digits = precision + 1)",
            DeprecationWarning,
            stacklevel=2,
        )
        return _adapter(name, new, globals()[new])
    raise AttributeError(f"module 'mlsys.formatting' has no attribute {name!r}")


def __dir__() -> list[str]:
    # Deprecated names stay out of dir(), so tools that walk it (doctest, quartodoc,
    # completion) neither warn nor advertise them.
    return sorted(set(globals()) - set(_DEPRECATED))
