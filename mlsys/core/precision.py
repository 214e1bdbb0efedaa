"""Numeric precisions: their names, aliases and bytes per element.

One table answers "how many bytes does a value of this precision take?" for the whole
library, so ``"bf16"``, ``"bfloat16"`` and ``"BF16"`` always mean the same thing.
"""

from __future__ import annotations

from typing import Final

from mlsys.core.errors import ParameterError

__all__ = [
    "BYTES_PER_ELEMENT",
    "PRECISIONS",
    "normalize_precision",
    "bytes_per_element",
    "default_grad_dtype",
]

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


def default_grad_dtype(precision: str) -> str:
    """Precision gradients are accumulated, stored and reduced in, given the compute one.

    Mixed-precision training keeps 16-bit (or narrower) weights and activations but
    accumulates gradients over micro-batches and all-reduces them in fp32 whenever the
    compute format has too few mantissa bits to sum many small updates: Megatron-LM
    forces ``accumulate_allreduce_grads_in_fp32`` for bf16 training (7 mantissa bits)
    unless ``--grad-reduce-in-bf16`` is given. Loss-scaled fp16 training (Micikevicius et
    al. 2018) keeps fp16 gradients, the convention of the ZeRO paper's ``2Ψ + 2Ψ + KΨ``.
    fp64 training keeps fp64 gradients (never narrower than the weights). Narrow-format
    training (FP8, FP4) keeps bf16 gradient buffers and reduces them in bf16, as the
    frameworks that publish such runs configure it: NeMo's performance scripts set
    ``grad_reduce_in_fp32 = False`` whenever FP8 is on, its recipes' performance mode
    does the same (Nemotron-4 340B's among them), and Megatron-Bridge's performance
    configurations run ``grad_reduce_in_fp32: false``. (DeepSeek-V3's own framework keeps
    fp32 gradients under FP8: pass ``grad_dtype="fp32"`` for such a run.) Every other
    precision reduces in fp32.

    Parameters
    ----------
    precision : str
        Compute (matmul) precision of the training step (aliases accepted).

    Returns
    -------
    str
        Canonical name of the gradient precision: ``"fp16"`` for fp16, ``"fp64"`` for
        fp64, ``"bf16"`` for fp8 and fp4, else ``"fp32"`` (4 bytes per gradient element).

    Raises
    ------
    ParameterError
        For an unknown precision.

    References
    ----------
    NVIDIA Megatron-LM, ``megatron/training/arguments.py``: "bfloat16 requires gradient
    accumulation and all-reduce to be done in fp32". NVIDIA NeMo,
    ``scripts/llm/performance/`` (``if args.fp8: ... plugins.grad_reduce_in_fp32 =
    False``) and ``nemo/collections/llm/recipes/nemotron4_340b.py``,
    ``pretrain_performance_optimizations`` (``recipe.trainer.plugins.grad_reduce_in_fp32
    = False``); NVIDIA-NeMo/Megatron-Bridge, ``scripts/performance/configs``
    (``grad_reduce_in_fp32: False``). Micikevicius et al. (2018), "Mixed Precision
    Training", ICLR. DeepSeek-AI (2024), "DeepSeek-V3 Technical Report",
    arXiv:2412.19437, Sec. 3.3.3. Rajbhandari et al. (2020), "ZeRO: Memory Optimizations
    Toward Training Trillion Parameter Models", SC'20, Sec. 3.1.

    Examples
    --------
    bf16 training of a 1e9-parameter model holds fp32 gradients: 4 B × 1e9 = 4 GB; FP8
    training of the same model holds bf16 gradients, 2 GB.

    >>> default_grad_dtype("bfloat16"), default_grad_dtype("fp16"), default_grad_dtype("fp8")
    ('fp32', 'fp16', 'bf16')
    >>> BYTES_PER_ELEMENT[default_grad_dtype("bf16")] * 1e9 / 1e9
    4.0
    """
    prec = normalize_precision(precision)
    if prec in ("fp16", "fp64"):
        return prec
    if prec in ("fp8", "fp4"):
        return "bf16"
    return "fp32"
