"""Fast input checks shared by the roofline, memory and distributed solvers (private).

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


def microbatch_size(batch: int, replicas: int, microbatch_count: int, replicas_label: str) -> int:
    """Sequences per micro-batch when a global batch is split evenly, else ParameterError.

    A training step splits ``batch`` sequences over ``replicas`` data-parallel ranks and
    each rank's share into ``microbatch_count`` equal micro-batches, as Megatron-LM
    requires (``global_batch_size`` divisible by ``micro_batch_size × data_parallel_size``).
    Rounding instead would price empty or uneven micro-batches that no framework runs.

    ``replicas_label`` names the group in the message (``"dp_size"``, ``"dp·ep"``).
    """
    if batch % replicas:
        raise ParameterError(
            "batch_size",
            batch,
            f"a multiple of {replicas_label} = {replicas} data-parallel ranks "
            "(global batch in sequences)",
        )
    per_replica = batch // replicas
    if per_replica % microbatch_count:
        raise ParameterError(
            "microbatch_count",
            microbatch_count,
            f"a divisor of the per-replica batch {per_replica} (batch_size {batch} / "
            f"{replicas_label} {replicas})",
        )
    return per_replica // microbatch_count
