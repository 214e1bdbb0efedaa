"""The one validator of flags, counts and option lists (private to mlsys).

Every solver, the layout and the search read a boolean, a count or a list of options
through these functions, so the same value means the same thing everywhere:

* a **flag** is ``True``/``False`` (numpy booleans too), the integers 0 and 1, or one
  of the strings ``"true"``, ``"false"``, ``"yes"``, ``"no"``, ``"on"``, ``"off"``,
  ``"1"``, ``"0"`` in any case. ``"no"`` is False; anything else (``"maybe"``, 2, NaN,
  an empty string) is refused, never read as truthy;
* a **count** is a whole number: an ``int`` (numpy integers too) or a float with no
  fractional part; never a bool, a string, NaN or infinity;
* an **option list** (the search's ``tp_sizes`` ...) is a non-empty list, tuple, range
  or array, never a bare string or number; an empty list is refused rather than read as
  "the defaults".

Each raises :class:`~mlsys.core.errors.ParameterError` naming the parameter, the value
and what is allowed. Plain Python numbers take a fast path (no numpy, no pint): solvers
answer in tens of microseconds.
"""

from __future__ import annotations

import math
from typing import Any

from mlsys.core.errors import ParameterError

__all__: list[str] = []

_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})
FLAG_ALLOWED = "True or False (or 'true'/'false', 'yes'/'no', 'on'/'off', '1'/'0', 1/0)"
"""What a flag accepts, in words (the text of every flag's error)."""


def flag(name: str, value: Any) -> bool:
    """``value`` read as a switch, strictly.

    Parameters
    ----------
    name : str
        The parameter's name, for the message.
    value : Any
        ``True``/``False``, a numpy bool, 0 or 1, or one of ``"true"``, ``"false"``,
        ``"yes"``, ``"no"``, ``"on"``, ``"off"``, ``"1"``, ``"0"`` (any case, surrounding
        spaces ignored).

    Returns
    -------
    bool

    Raises
    ------
    ParameterError
        For anything else: ``"maybe"``, ``""``, 2, NaN, a list.

    Examples
    --------
    >>> flag("overlap", "no"), flag("overlap", "ON"), flag("overlap", 1)
    (False, True, True)
    """
    if value is True or value is False:
        return value
    if isinstance(value, str):
        key = value.strip().lower()
        if key in _TRUE:
            return True
        if key in _FALSE:
            return False
    elif type(value).__module__ == "numpy" and type(value).__name__ in ("bool", "bool_"):
        return bool(value)  # numpy's bool scalar, without importing numpy
    elif _is_integer(value) and value in (0, 1):
        return bool(value)
    raise ParameterError(name, value, FLAG_ALLOWED)


def _is_integer(value: Any) -> bool:
    """An int or numpy integer (not a bool)."""
    if isinstance(value, int):
        return not isinstance(value, bool)
    return type(value).__module__ == "numpy" and _numpy_integer(value)


def _numpy_integer(value: Any) -> bool:
    import numpy as np  # a dependency of mlsys; only reached for numpy scalars

    return isinstance(value, np.integer)


def count(name: str, value: Any, minimum: int = 1, allowed: str | None = None) -> int:
    """``value`` as a whole number of at least ``minimum``.

    Parameters
    ----------
    name : str
        The parameter's name, for the message.
    value : Any
        An int, a numpy integer, or a float with no fractional part.
    minimum : int
        The smallest value allowed (1 for a size or a degree, 0 for an offset).
    allowed : str, optional
        The words of the message (default ``"a positive integer"`` for ``minimum`` 1,
        ``"a non-negative integer"`` for 0, else ``"an integer >= minimum"``).

    Returns
    -------
    int

    Raises
    ------
    ParameterError
        For a bool, a string, NaN, infinity, a fraction, or a value below ``minimum``.

    Examples
    --------
    >>> count("tp_size", 8), count("tp_size", 8.0), count("zero_stage", 0, minimum=0)
    (8, 8, 0)
    """
    if type(value) is int:  # the common case first
        if value >= minimum:
            return value
    elif isinstance(value, float):
        if math.isfinite(value) and value.is_integer() and value >= minimum:
            return int(value)
    elif _is_integer(value) and value >= minimum:
        return int(value)
    raise ParameterError(name, value, allowed or _count_words(minimum))


def _count_words(minimum: int) -> str:
    if minimum == 1:
        return "a positive integer"
    if minimum == 0:
        return "a non-negative integer"
    return f"an integer >= {minimum}"


def counts(name: str, value: Any, minimum: int = 1) -> Any:
    """A count, or an array of counts for a formula's array path, checked as :func:`count`.

    Parameters
    ----------
    name : str
        The parameter's name.
    value : int, float or array-like
        Whole numbers of at least ``minimum``.
    minimum : int
        The smallest value allowed.

    Returns
    -------
    int or ndarray
        A scalar as an ``int``; an array as given (as a float array if it was a list).

    Raises
    ------
    ParameterError
        When any element is not a whole number of at least ``minimum`` (NaN, infinity,
        a fraction, a bool, a string), naming the whole value.
    """
    if isinstance(value, (int, float, str)) or value is None:
        return count(name, value, minimum)
    import numpy as np

    words = _count_words(minimum)
    if isinstance(value, np.bool_) or getattr(getattr(value, "dtype", None), "kind", "") == "b":
        raise ParameterError(name, value, words)
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(name, value, words) from None
    if arr.ndim == 0:
        return count(name, arr.item(), minimum)
    if not (np.all(np.isfinite(arr)) and np.all(arr >= minimum) and np.all(arr == np.round(arr))):
        raise ParameterError(name, value, words)
    return value if isinstance(value, np.ndarray) else arr


def positive_int(name: str, value: Any) -> int:
    """``value`` as an int ≥ 1 (integral floats accepted), else ParameterError.

    Parameters
    ----------
    name : str
        The parameter's name.
    value : Any
        The value given.

    Returns
    -------
    int
    """
    return count(name, value, 1)


def nonneg_int(name: str, value: Any) -> int:
    """``value`` as an int ≥ 0 (integral floats accepted), else ParameterError.

    Parameters
    ----------
    name : str
        The parameter's name.
    value : Any
        The value given.

    Returns
    -------
    int
    """
    return count(name, value, 0)


def options(name: str, values: Any, what: str = "values") -> list:
    """``values`` as a non-empty list (a list, tuple, range, set or 1-D array).

    Parameters
    ----------
    name : str
        The parameter's name.
    values : Any
        The options given.
    what : str
        What each option is, for the message (``"positive integers"``).

    Returns
    -------
    list

    Raises
    ------
    ParameterError
        For a bare string or number, or an empty list: an empty list of options would
        search nothing, and reading it as "the defaults" would answer another question.
    """
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ParameterError(name, values, f"a non-empty list of {what}")
    try:
        out = list(values)
    except TypeError:  # a 0-d array
        raise ParameterError(name, values, f"a non-empty list of {what}") from None
    if not out:
        raise ParameterError(name, values, f"a non-empty list of {what}")
    return out


def positive_ints(name: str, values: Any) -> list[int]:
    """``values`` as a non-empty list of distinct positive ints, in the order given.

    Parameters
    ----------
    name : str
        The parameter's name (``"tp_sizes"``); each item is named ``name`` too.
    values : Any
        The options given.

    Returns
    -------
    list of int

    Examples
    --------
    >>> positive_ints("tp_sizes", (1, 2, 2.0, 8))
    [1, 2, 8]
    """
    out: list[int] = []
    for v in options(name, values, "positive integers"):
        try:
            n = count(name, v, 1)
        except ParameterError:  # name the whole list, as the caller wrote it
            raise ParameterError(name, values, "a non-empty list of positive integers") from None
        if n not in out:
            out.append(n)
    return out


def choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    """``value`` lower-cased if it is one of ``allowed``, else ParameterError.

    Parameters
    ----------
    name : str
        The parameter's name.
    value : Any
        The value given.
    allowed : tuple of str
        The lower-case names accepted.

    Returns
    -------
    str
    """
    key = value.lower() if isinstance(value, str) else None
    if key not in allowed:
        raise ParameterError(name, value, "one of " + ", ".join(repr(a) for a in allowed))
    return key
