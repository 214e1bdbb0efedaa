"""Numeric precisions: their names, aliases and bytes per element.

One table answers "how many bytes does a value of this precision take?" for the whole
library, so ``"bf16"``, ``"bfloat16"`` and ``"BF16"`` always mean the same thing.
"""

from __future__ import annotations

from typing import Final

from mlsys.core.errors import ParameterError

__all__ = ["BYTES_PER_ELEMENT", "PRECISIONS", "normalize_precision", "bytes_per_element"]

BYTES_PER_ELEMENT: Final[dict[str, float]] = {
    "fp64": 8.0,
    "fp32": 4.0,
    "tf32": 4.0,  # stored as fp32; only the tensor-core multiply is reduced
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "fp6": 0.75,
    "fp4": 0.5,
    "int4": 0.5,
}
"""Bytes one element occupies in memory, by canonical precision name."""

PRECISIONS: Final[tuple[str, ...]] = tuple(BYTES_PER_ELEMENT)
"""Canonical precision names, widest first."""

_ALIASES: Final[dict[str, str]] = {
    "float64": "fp64",
    "double": "fp64",
    "f64": "fp64",
    "float32": "fp32",
    "float": "fp32",
    "single": "fp32",
    "f32": "fp32",
    "tensorfloat32": "tf32",
    "bfloat16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "f16": "fp16",
    "float8": "fp8",
    "e4m3": "fp8",
    "e5m2": "fp8",
    "fp8e4m3": "fp8",
    "fp8e5m2": "fp8",
    "i8": "int8",
    "float4": "fp4",
    "nvfp4": "fp4",
    "mxfp4": "fp4",
    "i4": "int4",
}


def normalize_precision(precision: str, name: str = "precision") -> str:
    """Canonical name of a precision, forgiving about case and spelling.

    Parameters
    ----------
    precision : str
        E.g. ``"bf16"``, ``"BFloat16"``, ``"fp8"``, ``"float32"``.
    name : str
        Parameter name used in the error message.

    Returns
    -------
    str
        One of :data:`PRECISIONS`.

    Raises
    ------
    ParameterError
        For an unknown precision, listing the known ones.
    """
    if not isinstance(precision, str):
        raise ParameterError(name, precision, "a precision name such as " + ", ".join(PRECISIONS))
    key = precision.strip().lower().replace("_", "").replace("-", "").replace(" ", "")
    if key in BYTES_PER_ELEMENT:
        return key
    if key in _ALIASES:
        return _ALIASES[key]
    raise ParameterError(name, precision, "one of " + ", ".join(PRECISIONS))


def bytes_per_element(precision: str, name: str = "precision") -> float:
    """Bytes per element of a precision: 2 for ``"bf16"``, 0.5 for ``"int4"``.

    Parameters
    ----------
    precision : str
        Precision name (aliases accepted).
    name : str
        Parameter name used in the error message.

    Returns
    -------
    float
        Bytes per element.
    """
    return BYTES_PER_ELEMENT[normalize_precision(precision, name)]
