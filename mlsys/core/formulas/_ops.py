"""One formula body for a float and for an array (private).

A formula written with the helpers of :func:`ops` runs on plain Python floats — math
only, about a microsecond, the path one solve takes — or on numpy arrays — the path a
search over 10^5 layouts takes — with the same float64 arithmetic, so a solve and a
search call the same cited formula and cannot disagree.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

__all__: list[str] = []


class ScalarOps:
    """The helpers on plain floats."""

    @staticmethod
    def where(cond: Any, x: Any, y: Any) -> Any:
        return x if cond else y

    max = staticmethod(max)
    min = staticmethod(min)

    @staticmethod
    def ceil(x: float) -> float:
        return float(math.ceil(x))

    @staticmethod
    def floor(x: float) -> float:
        return float(math.floor(x))


class ArrayOps:
    """The same helpers on numpy arrays."""

    where = staticmethod(np.where)
    max = staticmethod(np.maximum)
    min = staticmethod(np.minimum)
    ceil = staticmethod(np.ceil)
    floor = staticmethod(np.floor)


def ops(*xs: Any) -> type:
    """:class:`ArrayOps` if any argument is a numpy array, else :class:`ScalarOps`.

    Arguments are what :func:`num` returns (floats or arrays)."""
    for x in xs:  # a loop: faster than any() on this hot path
        if type(x) is np.ndarray:
            return ArrayOps
    return ScalarOps


def all_float(*xs: Any) -> bool:
    """Whether every argument is a plain Python float (the fast path's test)."""
    for x in xs:  # noqa: SIM110 -- a loop: all() with a generator is slower here
        if type(x) is not float:
            return False
    return True


def num(x: Any) -> Any:
    """A float for a Python or numpy scalar (bools become 0.0/1.0), an array otherwise."""
    t = type(x)
    if t is float:
        return x
    if t is int or t is bool:
        return float(x)
    arr = np.asarray(x, dtype=float)
    return float(arr) if arr.ndim == 0 else arr


def ret(x: Any) -> Any:
    """A float for a 0-d result, the array otherwise."""
    if type(x) is float:
        return x
    return float(x) if np.ndim(x) == 0 else x
