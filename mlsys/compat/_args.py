"""Arguments of the textbook's solver calls, checked one way for every compat solver.

The book's solvers take plain numbers in a documented unit (``target_p99_latency_ms``,
``filesystem_limit_gbs``, ``arrival_rate_jobs_per_day``) and fractions
(``efficiency``); mlsys also accepts a pint Quantity in any unit of the same dimension.
Anything else — text, a bool, None, a list, NaN, infinity, a Quantity of another
dimension, a value out of range — is a :class:`~mlsys.core.errors.ParameterError`
naming the parameter and what it takes, never a ``TypeError`` from deep inside.
"""

from __future__ import annotations

import math
from typing import Any

import pint

from mlsys.core.errors import ParameterError

__all__ = ["number", "positive", "at_least", "fraction", "in_si", "solve_options"]


def number(value: Any, name: str, allowed: str) -> float:
    """One finite plain number (a dimensionless Quantity counts).

    Parameters
    ----------
    value : object
        What the caller passed.
    name : str
        The parameter, for the message.
    allowed : str
        What the parameter takes, for the message.

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        For text, bools, None, sequences, dimensioned Quantities and non-finite numbers.
    """
    if isinstance(value, (bool, str, bytes)) or value is None:
        raise ParameterError(name, value, allowed)
    try:
        out = float(value.m_as("")) if hasattr(value, "units") else float(value)
    except (TypeError, ValueError, ArithmeticError, pint.DimensionalityError):
        raise ParameterError(name, value, allowed) from None
    if not math.isfinite(out):
        raise ParameterError(name, value, allowed)
    return out


def positive(value: Any, name: str) -> float:
    """A finite number above 0 (see :func:`number`)."""
    return at_least(value, name, 0.0, exclusive=True)


def at_least(value: Any, name: str, minimum: float, *, exclusive: bool = False) -> float:
    """A finite number of at least ``minimum`` (above it when ``exclusive``).

    Parameters
    ----------
    value, name
        As :func:`number`.
    minimum : float
        The bound.
    exclusive : bool
        Whether the bound itself is refused.

    Returns
    -------
    float
    """
    word = "above" if exclusive else "of at least"
    allowed = f"a finite number {word} {minimum:g}"
    out = number(value, name, allowed)
    if out < minimum or (exclusive and out == minimum):
        raise ParameterError(name, value, allowed)
    return out


def fraction(value: Any, name: str) -> float:
    """A fraction in (0, 1] (an efficiency, a utilisation)."""
    allowed = "a fraction in (0, 1]"
    out = number(value, name, allowed)
    if not 0.0 < out <= 1.0:
        raise ParameterError(name, value, allowed)
    return out


def in_si(value: Any, unit: str, plain_scale: float, name: str) -> float:
    """A positive value in SI units from a Quantity or a plain number in the book's unit.

    Parameters
    ----------
    value : Quantity or float
        A Quantity in any unit of ``unit``'s dimension, or a plain number in the unit
        the book documents for the parameter.
    unit : str
        A unit of the dimension expected (``"s"``, ``"B/s"``, ``"1/s"``).
    plain_scale : float
        SI units in one of the book's (1e-3 for milliseconds, 3600 for hours, 1e9 for
        GB/s).
    name : str
        The parameter, for the message.

    Returns
    -------
    float
        The value in SI units (> 0).

    Raises
    ------
    ParameterError
        For a Quantity of another dimension and as :func:`positive`.
    """
    if hasattr(value, "units"):
        from mlsys.core.solvers._checks import one_si

        return one_si(value, unit, name, allow_zero=False)
    return positive(value, name) * plain_scale


def solve_options(precision: str, efficiency: Any) -> dict[str, Any]:
    """Keywords for mlsys's serving solvers from the book's ``precision`` and
    ``efficiency``: an efficiency of None leaves mlsys's calibrated one.

    Parameters
    ----------
    precision : str
        Weights and KV cache (``"fp16"``, ``"fp8"`` ...).
    efficiency : float or None
        The book's flat efficiency, or None.

    Returns
    -------
    dict
    """
    options: dict[str, Any] = {"precision": precision}
    if efficiency is not None:
        options["efficiency"] = efficiency
    return options
