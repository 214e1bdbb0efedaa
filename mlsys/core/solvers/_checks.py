"""Input checks shared by the solvers (private): the one validator of flags and counts,
:mod:`mlsys.core.checks`, and the batch split.

Solvers must answer in tens of microseconds, so these avoid pint entirely for plain
numbers and raise :class:`~mlsys.core.errors.ParameterError` naming the parameter, the
value and what is allowed.
"""

from __future__ import annotations

from typing import Any

from mlsys.core.checks import choice, count, flag, nonneg_int, options, positive_int, positive_ints
from mlsys.core.errors import ParameterError
from mlsys.core.units import as_si

# The flags, counts and option lists every solver reads: one validator,
# :mod:`mlsys.core.checks`, re-exported here for the solvers' existing imports.
__all__: list[str] = []
_SHARED = (choice, count, flag, nonneg_int, options, positive_int, positive_ints)


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


def one_si(value: Any, unit: str, name: str, allow_zero: bool = True) -> float:
    """One quantity in SI units (``as_si``'s checks: unit, NaN, infinity, sign), not a list.

    Parameters
    ----------
    value : Quantity or float
        The value given (a plain number is in ``unit``'s SI base).
    unit : str
        The unit whose dimension is expected.
    name : str
        The parameter's name, for the message.
    allow_zero : bool
        Whether 0 is allowed.

    Returns
    -------
    float

    Raises
    ------
    ParameterError
        For a list or array where the solver takes one value, and as ``as_si`` does.
    """
    x = as_si(value, unit, name, allow_zero=allow_zero)
    if not isinstance(x, float):
        raise ParameterError(name, value, f"one quantity in {unit}, not a list")
    return x
