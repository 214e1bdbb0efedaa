"""Errors mlsys raises. Every one is an :class:`MlsysError`, which is also a ``ValueError``.

Messages name the parameter, the value given and what is allowed, and where possible
what to do next.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from typing import Any

__all__ = [
    "MlsysError",
    "ParameterError",
    "UnitError",
    "UnknownEntryError",
    "InfeasibleError",
]


class MlsysError(ValueError):
    """Base class of every error mlsys raises on bad input."""


class ParameterError(MlsysError):
    """A parameter has a value outside what the model allows.

    Parameters
    ----------
    name : str
        The parameter's name, as the caller spelt it.
    value : Any
        The value given.
    allowed : str
        What would have been accepted, in words.
    hint : str, optional
        What to do next.
    """

    def __init__(self, name: str, value: Any, allowed: str, hint: str | None = None) -> None:
        self.name = name
        self.value = value
        self.allowed = allowed
        message = f"{name}={_show(value)} is not allowed: expected {allowed}."
        if hint:
            message += f" {hint}"
        super().__init__(message)


_SHOW_CHARS = 80
"""Longest value shown in a message; a longer one (a 400-digit int) is cut in the middle."""


def _show(value: Any) -> str:
    """A value as the user would write it: ``80 GB`` for a Quantity, else its repr."""
    text = repr(value)
    if hasattr(value, "units") and hasattr(value, "magnitude"):
        with contextlib.suppress(TypeError, ValueError):  # exotic magnitudes keep the repr
            text = f"'{value:~P}'"
    if len(text) > _SHOW_CHARS:
        text = f"{text[:40]}…{text[-20:]} ({len(text)} characters)"
    return text


class UnitError(ParameterError):
    """A Quantity has the wrong dimension (a bandwidth given in GB, say).

    Parameters
    ----------
    name : str
        Parameter name.
    value : Any
        The value given.
    unit : str
        The unit expected (its dimension is what matters).
    detail : str, optional
        pint's own explanation.
    """

    def __init__(self, name: str, value: Any, unit: str, detail: str | None = None) -> None:
        self.unit = unit
        hint = f"Give a Quantity convertible to {unit!r}, e.g. Q_(1.0, {unit!r})."
        if detail:
            hint = f"{detail}. {hint}"
        super().__init__(name, value, f"a quantity with the dimension of {unit}", hint)


class UnknownEntryError(MlsysError, KeyError):
    """A catalog lookup found no entry; the message lists the closest names.

    Parameters
    ----------
    registry : str
        Name of the registry searched (e.g. ``"Hardware"``).
    key : str
        The name asked for.
    suggestions : iterable of str
        Closest known names, best first.
    """

    def __init__(self, registry: str, key: str, suggestions: Iterable[str] = ()) -> None:
        self.registry = registry
        self.key = key
        self.suggestions = list(suggestions)
        message = f"{registry} has no entry {key!r}."
        if self.suggestions:
            message += " Did you mean " + ", ".join(repr(s) for s in self.suggestions) + "?"
        message += f" {registry}.list() shows every name."
        super().__init__(message)

    def __str__(self) -> str:  # KeyError would otherwise quote the whole message
        return str(self.args[0])


class InfeasibleError(MlsysError):
    """Raised instead of returning ``feasible=False`` when ``raise_errors=True``.

    Parameters
    ----------
    reason : str
        Why the configuration cannot run (e.g. it does not fit in memory).
    """

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)
