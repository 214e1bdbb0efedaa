"""Fast input checks shared by the roofline and memory solvers (private).

Solvers must answer in tens of microseconds, so these avoid pint entirely for plain
numbers and raise :class:`~mlsys.core.errors.ParameterError` naming the parameter, the
value and what is allowed.
"""

from __future__ import annotations

import math
from typing import Any

from mlsys.core.errors import ParameterError

__all__: list[str] = []


def positive_int(name: str, value: Any) -> int:
    """``value`` as a positive int (integral floats accepted), else ParameterError."""
    if isinstance(value, bool):
        raise ParameterError(name, value, "a positive integer")
    if isinstance(value, int):
        if value <= 0:
            raise ParameterError(name, value, "a positive integer")
        return value
    if isinstance(value, float) and math.isfinite(value) and value > 0 and value == int(value):
        return int(value)
    import numpy as np  # a dependency of mlsys; imported here only on this slow path

    if isinstance(value, np.integer) and value > 0:
        return int(value)
    raise ParameterError(name, value, "a positive integer")


def nonneg_int(name: str, value: Any) -> int:
    """``value`` as an int ≥ 0, else ParameterError."""
    if isinstance(value, bool):
        raise ParameterError(name, value, "a non-negative integer")
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, float) and math.isfinite(value) and value >= 0 and value == int(value):
        return int(value)
    import numpy as np

    if isinstance(value, np.integer) and value >= 0:
        return int(value)
    raise ParameterError(name, value, "a non-negative integer")


def choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    """``value`` lower-cased if it is one of ``allowed``, else ParameterError."""
    key = value.lower() if isinstance(value, str) else value
    if key not in allowed:
        raise ParameterError(name, value, "one of " + ", ".join(repr(a) for a in allowed))
    return key
