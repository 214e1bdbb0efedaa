"""Book-facing constants: the unit registry and values chapters print or compute with.

Everything here is re-exported from the core (nothing is computed): the one pint
registry, the bytes each precision occupies as Quantities, and the optimizer-state
table.

Examples
--------
>>> from mlsys.constants import Q_, BYTES_FP16
>>> (Q_(70e9, "parameter") * BYTES_FP16 / Q_(1, "parameter")).to("GB")
"""

from __future__ import annotations

from mlsys.core.formulas.memory import OPTIMIZER_STATE_BYTES
from mlsys.core.precision import BYTES_PER_ELEMENT, PRECISIONS
from mlsys.core.units import Q_, ureg

__all__ = [
    "ureg",
    "Q_",
    "PRECISIONS",
    "BYTES_PER_ELEMENT",
    "OPTIMIZER_STATE_BYTES",
    "BYTES_FP64",
    "BYTES_FP32",
    "BYTES_TF32",
    "BYTES_BF16",
    "BYTES_FP16",
    "BYTES_FP8",
    "BYTES_INT8",
    "BYTES_FP4",
    "BYTES_INT4",
]

BYTES_FP64 = Q_(BYTES_PER_ELEMENT["fp64"], "byte")
"""8 bytes per fp64 value."""
BYTES_FP32 = Q_(BYTES_PER_ELEMENT["fp32"], "byte")
"""4 bytes per fp32 value."""
BYTES_TF32 = Q_(BYTES_PER_ELEMENT["tf32"], "byte")
"""4 bytes per tf32 value (stored as fp32)."""
BYTES_BF16 = Q_(BYTES_PER_ELEMENT["bf16"], "byte")
"""2 bytes per bf16 value."""
BYTES_FP16 = Q_(BYTES_PER_ELEMENT["fp16"], "byte")
"""2 bytes per fp16 value."""
BYTES_FP8 = Q_(BYTES_PER_ELEMENT["fp8"], "byte")
"""1 byte per fp8 value."""
BYTES_INT8 = Q_(BYTES_PER_ELEMENT["int8"], "byte")
"""1 byte per int8 value."""
BYTES_FP4 = Q_(BYTES_PER_ELEMENT["fp4"], "byte")
"""Half a byte per fp4 value."""
BYTES_INT4 = Q_(BYTES_PER_ELEMENT["int4"], "byte")
"""Half a byte per int4 value."""
