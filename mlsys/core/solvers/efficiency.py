"""Default achievable fractions of peak compute and memory bandwidth, in one place.

Peak FLOP/s and peak HBM bandwidth on a datasheet are ceilings no real kernel reaches.
When a solver is called with ``efficiency=None`` it multiplies the peaks by the
fractions below, so that nobody has to tune a knob to get a physically sensible number.
Every solver in mlsys takes its defaults from :func:`default_efficiency`; change them
here and every answer moves together.

The fractions are **estimates**, chosen to sit inside published measurements:

* Compute (large, well-shaped GEMMs in the precision asked for): about 0.75 of dense
  peak on data-centre GPUs. The ceiling is the *maximum achievable matmul FLOPS* of a
  brute-force shape search with cuBLAS: 267.9 of 312 TFLOP/s on A100 SXM (85.9%) and
  792.1 of 989 on H100 SXM (80.1%) (S. Bekman, *Machine Learning Engineering*,
  ``compute/accelerator/README.md``, "Maximum Achievable Matmul FLOPS comparison
  table", CUDA 12.1); the shapes of real layers sit below their best shape. Within that
  range 0.75 was chosen so that end-to-end Megatron-LM runs, which add communication,
  pipeline bubbles and non-GEMM kernels, reach the 0.52–0.56 MFU Korthikanti et al.
  (2022) report in Table 5 — that table is therefore a **fit** of this default, and
  ``mlsys.validation`` marks it so; every other published comparison is a prediction.
  FP8 and narrower formats are harder to feed (scaling, format conversions) and get
  0.65. The fraction was fitted on A100s; on a device whose own ceiling the catalog
  records (``Accelerator.matmul_ceiling``) it scales with that ceiling over the A100's
  (:data:`REFERENCE_MATMUL_CEILING`): the share of the single-GEMM ceiling a run
  sustains (0.75/0.859 = 0.87) is what the fit measured, and the ceiling is the
  device's. An H100 thus gets 0.75 × 0.801/0.859 = 0.70, a B200 0.68. TPUs keep 0.75
  (the catalog has no measured TPU matmul ceiling), and published TPU runs that no
  default was set on agree with it (:mod:`mlsys.validation.tpu`): MaxText's TPU v5p
  runs that keep the weight matmuls' outputs and rerun the rest (``remat_policy:
  minimal``, ``recompute="dots"``; AI-Hypercomputer/maxtext, ``configs/v5p`` README,
  December 2023: 32B-256B at 67-71% MFU) come out 6% slow to 2% fast.
  MaxText's full-rematerialisation runs (v4 22B-52B, v5e 16B-128B, v5p 512B-1024B)
  would imply 0.74-0.89 of peak in hardware FLOPs if the whole layer were rerun, but
  JAX reruns only the residuals the backward consumes (not the attention and MLP output
  projections: ``DistributedModel.solve(recompute_rerun="residuals")``), on which count
  they imply 0.66-0.80 around the default, so the rerun count, not a larger fraction,
  is what they asked for.
  Solvers that know the shape of each GEMM (ServingModel, ContinuousBatchingModel:
  :mod:`mlsys.core.formulas.gemm`) multiply this fraction by the GEMM's own tile and
  wave quantisation and take each GEMM's own roofline, so thin per-device GEMMs run
  below it; the fraction is then the sustained rate of a well-shaped GEMM inside a run,
  below the single-GEMM ceiling (:func:`matmul_ceiling`) — clocks under sustained
  power, and kernels sharing the SMs, take the difference.
* Memory (streaming reads/writes of large buffers): about 0.85 of peak bandwidth, one
  fraction for every GPU. STREAM-style measurements on GPUs reach 80–92% of the
  datasheet figure — Jia et al. (2018), "Dissecting the NVIDIA Volta GPU Architecture
  via Microbenchmarking", measured about 750 GB/s of the V100's 900 GB/s (83%).
  Measured the same way on several data-centre GPUs, the fraction does not single out
  any of them: BabelStream (CUDA, fp64, 2^25-element arrays) on Azure's ND A100 v4,
  ND H100 v5 and ND H200 v5 (Azure/AI-benchmarking-guide, ``Azure_Results``, September
  2024) streams Triad at 1.70, 2.97 and 4.15 TB/s, 0.834, 0.887 and 0.865 of the A100
  80 GB's 2.039, the H100 SXM's 3.35 and the H200's 4.8 TB/s (Copy 0.790 / 0.866 /
  0.835); the occupancy sweep of RRZE-HPC/gpu-benches (``gpu-stream``, 2023–2025)
  puts Triad at 0.88 on the V100 (788 of 900 GB/s) and on both A100s (1375 of 1555,
  1794 of 2039 GB/s). The H200 keeps 0.975 of the H100's fraction, so the streaming
  ceiling explains at most 2.5% of its smaller decode gain over the H100
  (TensorRT-LLM's tables: 1.20–1.25× against the 1.43× datasheet ratio); scaling each
  GPU by its own Triad fraction would instead move every Hopper device 4–6% faster
  than the A100, away from the published serving runs, so the default is not per
  device. AMD's MI300X streams
  at a lower share (``gpu-stream`` Triad 4.00 of 5.3 TB/s, 0.755): pass
  ``efficiency={"memory": 0.76}`` for it.
* Edge SoCs and microcontrollers run far from peak (small kernels, shared memory
  systems): 0.5 compute / 0.7 memory (edge) and 0.3 / 0.8 (MCU, where "peak" is a
  MAC-unit figure rarely sustained by CMSIS-NN style kernels).

These are defaults, not measurements of any particular kernel: pass ``efficiency=`` to a
solver to use your own.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from mlsys.core.errors import ParameterError
from mlsys.core.formulas.gemm import (
    FLASH_ATTENTION_2_SPEEDUP_OVER_1,
    FLASH_ATTENTION_BACKWARD_FRACTION,
    FLASH_ATTENTION_FORWARD_FRACTION,
    HOPPER_FLASH_ATTENTION_2_FRACTIONS,
    HOPPER_FUSED_ATTENTION_FRACTIONS,
    flash_attention_dropout_factors,
)
from mlsys.core.precision import normalize_precision

__all__ = [
    "COMPUTE_EFFICIENCY",
    "MEMORY_EFFICIENCY",
    "ATTENTION_KERNELS",
    "REFERENCE_MATMUL_CEILING",
    "attention_kernel_fractions",
    "attention_fractions_unmasked",
    "default_efficiency",
    "fused_attention_dropout_factors",
    "fused_attention_fractions",
    "matmul_ceiling",
    "resolve_efficiency",
]

COMPUTE_EFFICIENCY: dict[str, float] = {
    "gpu": 0.75,
    "tpu": 0.75,
    "npu": 0.70,
    "cpu": 0.60,
    "edge": 0.50,
    "mcu": 0.30,
}
"""Default fraction of dense peak FLOP/s achieved by large matmuls, by device kind."""

MEMORY_EFFICIENCY: dict[str, float] = {
    "gpu": 0.85,
    "tpu": 0.85,
    "npu": 0.80,
    "cpu": 0.75,
    "edge": 0.70,
    "mcu": 0.80,
}
"""Default fraction of peak memory bandwidth achieved by streaming kernels, by kind."""

REFERENCE_MATMUL_CEILING = 0.859
"""Maximum achievable matmul fraction of the device the GPU default was fitted on (A100
SXM: 267.9 of 312 TFLOP/s dense BF16, rounded as the catalog's ``matmul_ceiling``, so
an A100 keeps exactly the default; S. Bekman, *Machine Learning Engineering*,
``compute/accelerator/README.md``, "Maximum Achievable Matmul FLOPS comparison table").
A device with its own measured ceiling gets ``COMPUTE_EFFICIENCY[kind] × ceiling /
REFERENCE_MATMUL_CEILING``."""

_NARROW = {"fp8", "int8", "fp6", "fp4", "int4"}
_NARROW_FACTOR = 0.65 / 0.75  # narrow formats reach ~0.65 where bf16 reaches ~0.75
_KINDS = ("compute", "memory")


def default_efficiency(accelerator: Any, precision: str = "bf16", kind: str = "compute") -> float:
    """Default achievable fraction of peak for an accelerator, precision and resource.

    Parameters
    ----------
    accelerator : Accelerator or str
        The device (its ``kind`` attribute — "gpu", "tpu", "edge", ... — is used, and its
        measured ``matmul_ceiling`` where the catalog has one), or a kind string directly.
    precision : str
        Precision of the math; narrow formats (fp8, int8, fp6, fp4, int4) get a lower
        compute fraction. Ignored for ``kind="memory"``.
    kind : {"compute", "memory"}
        Which roof.

    Returns
    -------
    float
        Fraction in (0, 1].

    Raises
    ------
    ParameterError
        For an unknown ``kind`` or precision.

    References
    ----------
    Estimates; see the module docstring (Korthikanti et al. 2022, Table 5; Jia et al.
    2018, "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking"); the
    device scaling: S. Bekman, *Machine Learning Engineering*, "Maximum Achievable
    Matmul FLOPS comparison table". The memory fraction's spread across devices:
    BabelStream on Azure ND A100 v4 / H100 v5 / H200 v5 (Azure/AI-benchmarking-guide,
    ``Azure_Results``, 2024) and RRZE-HPC/gpu-benches ``gpu-stream``.

    Examples
    --------
    >>> default_efficiency("gpu", "bf16", "compute"), default_efficiency("gpu", "bf16", "memory")
    (0.75, 0.85)
    >>> round(default_efficiency("gpu", "fp8"), 2)
    0.65
    >>> from mlsys.core.catalog import Hardware
    >>> round(default_efficiency(Hardware.H100, "bf16"), 4)  # 0.75 * 0.801 / 0.859
    0.6994
    """
    if kind not in _KINDS:
        raise ParameterError("kind", kind, "'compute' or 'memory'")
    device_kind = (
        accelerator if isinstance(accelerator, str) else getattr(accelerator, "kind", "gpu")
    )
    if kind == "memory":
        return MEMORY_EFFICIENCY.get(device_kind, MEMORY_EFFICIENCY["gpu"])
    base = COMPUTE_EFFICIENCY.get(device_kind, COMPUTE_EFFICIENCY["gpu"])
    ceiling = None if isinstance(accelerator, str) else getattr(accelerator, "matmul_ceiling", None)
    if ceiling is not None:
        # the fit's share of the A100's ceiling, on this device's own ceiling
        base *= ceiling / REFERENCE_MATMUL_CEILING
    if normalize_precision(precision) in _NARROW:
        base *= _NARROW_FACTOR
    return base


_HOPPER_AND_LATER = frozenset({"H100", "H100_PCIE", "H200", "H800", "B200", "GB200"})
"""Catalog devices whose fused attention is Hopper-class: cuDNN's kernels (Hopper's
measured fractions; no published Blackwell sweep yet, so B200 and GB200 take Hopper's)."""


def fused_attention_fractions(accelerator: Any) -> tuple[float, float]:
    """Forward and backward fractions of the dense 16-bit peak fused attention reaches.

    Parameters
    ----------
    accelerator : Accelerator or str
        The device (its catalog ``name``) or a catalog name.

    Returns
    -------
    tuple of (float, float)
        ``(forward, backward)`` fractions: FlashAttention-2's on Ampere and older
        (:data:`~mlsys.core.formulas.gemm.FLASH_ATTENTION_FORWARD_FRACTION`, 0.70 / 0.60),
        cuDNN's fused attention on Hopper and later
        (:data:`~mlsys.core.formulas.gemm.HOPPER_FUSED_ATTENTION_FRACTIONS`, 0.61 / 0.52:
        Hopper's tensor cores doubled the GEMM peak, but the softmax between the two
        matmuls runs on the unchanged exponential units, so attention reaches a smaller
        share of it).

    References
    ----------
    Dao (2023), "FlashAttention-2", arXiv:2307.08691, Fig. 4-6 (A100); Shah et al.
    (2024), "FlashAttention-3", arXiv:2407.08608, Sec. 1 and Fig. 5-6 (H100: cuDNN 600
    and 518 TFLOP/s forward and backward at head dim 128, 8k tokens).

    Examples
    --------
    >>> fused_attention_fractions("H100"), fused_attention_fractions("A100_80GB")
    ((0.61, 0.52), (0.7, 0.6))
    """
    name = accelerator if isinstance(accelerator, str) else getattr(accelerator, "name", "")
    if name in _HOPPER_AND_LATER:
        return HOPPER_FUSED_ATTENTION_FRACTIONS
    return (FLASH_ATTENTION_FORWARD_FRACTION, FLASH_ATTENTION_BACKWARD_FRACTION)


def fused_attention_dropout_factors(accelerator: Any, seq_len: float) -> tuple[float, float]:
    """Time multipliers, forward and backward, of fused attention running dropout.

    Parameters
    ----------
    accelerator : Accelerator or str
        The device (its catalog ``name``) or a catalog name.
    seq_len : float
        Keys each query attends to, in tokens.

    Returns
    -------
    tuple of (float, float)
        On Ampere and older GPUs, FlashAttention's measured cost of dropout (p = 0.1) at
        that length, charged to every kernel generation there (not to other kinds of
        device, whose attention kernels have no cited measurement)
        (:func:`mlsys.core.formulas.gemm.flash_attention_dropout_factors`: 1.17-1.25
        from 2k tokens up); ``(1.0, 1.0)`` on Hopper and later, where the measured costs
        are a few percent (:data:`~mlsys.core.formulas.gemm.FLASH_ATTENTION_1_DROPOUT_EXTRA_TIME`).

    References
    ----------
    Dao et al. (2022), "FlashAttention", arXiv:2205.14135, Appendix E.6, Tables 15-20;
    NVIDIA/TransformerEngine issue 3312 and pull request 3313 (H200 and GB200).

    Examples
    --------
    >>> fused_attention_dropout_factors("A100_80GB", 8192)
    (1.241, 1.23)
    >>> fused_attention_dropout_factors("H100", 8192)
    (1.0, 1.0)
    >>> fused_attention_dropout_factors("TPU_V5P", 8192)
    (1.0, 1.0)
    """
    if isinstance(accelerator, str):
        from mlsys.core.catalog import Hardware

        accelerator = Hardware[accelerator]
    if accelerator.kind != "gpu" or accelerator.name in _HOPPER_AND_LATER:
        return 1.0, 1.0
    return flash_attention_dropout_factors(seq_len)


ATTENTION_KERNELS = ("fused", "flash2", "flash1")
"""Generations of fused attention kernel a training stack may run, best first:
``"fused"`` the device's best measured one (:func:`fused_attention_fractions`),
``"flash2"`` FlashAttention-2 or a kernel of its generation, ``"flash1"`` FlashAttention(-1)
or a kernel of its generation (MosaicML's Triton port)."""


def attention_kernel_fractions(accelerator: Any, kernel: str = "fused") -> tuple[float, float]:
    """Forward and backward fractions of the dense 16-bit peak a fused attention kernel
    of a given generation reaches on a device.

    Parameters
    ----------
    accelerator : Accelerator or str
        The device (its catalog ``name``) or a catalog name.
    kernel : {"fused", "flash2", "flash1"}
        The kernel generation (:data:`ATTENTION_KERNELS`).

    Returns
    -------
    tuple of (float, float)
        ``(forward, backward)``: the device's best (:func:`fused_attention_fractions`);
        FlashAttention-2's — its own measured ones on Hopper and later (370 and 318 of
        989 TFLOP/s, :data:`~mlsys.core.formulas.gemm.HOPPER_FLASH_ATTENTION_2_FRACTIONS`),
        the device's best elsewhere (on Ampere that is FlashAttention-2); or
        FlashAttention-1's, FlashAttention-2's divided by
        :data:`~mlsys.core.formulas.gemm.FLASH_ATTENTION_2_SPEEDUP_OVER_1`.

    Raises
    ------
    ParameterError
        For an unknown kernel.

    References
    ----------
    Dao (2023), "FlashAttention-2", arXiv:2307.08691, abstract and Sec. 4.1 (about 2× over
    FlashAttention, 50-73% of A100 peak against 25-40%); Shah et al. (2024),
    "FlashAttention-3", arXiv:2407.08608, Fig. 5-6 (H100).

    Examples
    --------
    >>> attention_kernel_fractions("H100", "flash2"), attention_kernel_fractions("H100", "flash1")
    ((0.374, 0.322), (0.187, 0.161))
    >>> attention_kernel_fractions("A100_80GB", "flash1")
    (0.35, 0.3)
    """
    if kernel not in ATTENTION_KERNELS:
        raise ParameterError("attention_kernel", kernel, "one of " + ", ".join(ATTENTION_KERNELS))
    best = fused_attention_fractions(accelerator)
    if kernel == "fused":
        return best
    hopper = best == HOPPER_FUSED_ATTENTION_FRACTIONS
    forward, backward = HOPPER_FLASH_ATTENTION_2_FRACTIONS if hopper else best
    if kernel == "flash2":
        return forward, backward
    speedup = FLASH_ATTENTION_2_SPEEDUP_OVER_1
    return forward / speedup, backward / speedup


def attention_fractions_unmasked(accelerator: Any, kernel: str = "fused") -> bool:
    """Whether the attention fractions of a kernel generation on a device are an unmasked
    kernel's measurement, so that a causal pass runs at
    :func:`mlsys.core.formulas.gemm.causal_attention_rate` of them.

    Parameters
    ----------
    accelerator : Accelerator or str
        The device, or its catalog name.
    kernel : {"fused", "flash2", "flash1"}
        The kernel generation (:data:`ATTENTION_KERNELS`).

    Returns
    -------
    bool
        True for a GPU's FlashAttention-2 generation and later (cuDNN, FlashAttention-3 and
        -4: measured without a mask, Dao 2023 Fig. 4-6, Shah et al. 2024 Fig. 5-6); False
        for FlashAttention-1's generation, whose fractions were checked against causal runs
        (:data:`~mlsys.core.formulas.gemm.FLASH_ATTENTION_2_SPEEDUP_OVER_1`), and for a
        non-GPU device, whose fraction is the library's default, not a measurement.

    Examples
    --------
    >>> attention_fractions_unmasked("H100"), attention_fractions_unmasked("H100", "flash1")
    (True, False)
    """
    if isinstance(accelerator, str):
        from mlsys.core.catalog import Hardware

        accelerator = Hardware[accelerator]
    return kernel != "flash1" and accelerator.kind == "gpu"


def matmul_ceiling(accelerator: Any, precision: str = "bf16") -> float:
    """Largest fraction of dense peak a well-shaped GEMM reaches on a device.

    The shape-aware GEMM model (:mod:`mlsys.core.formulas.gemm`) multiplies the peak by
    this ceiling and then by the shape's tile and wave quantisation efficiencies. The
    ceiling is the device's measured maximum achievable matmul FLOPS where the catalog
    has it (``Accelerator.matmul_ceiling``: A100 SXM 0.859, H100 SXM 0.801), lowered for
    narrow formats by the same factor as :func:`default_efficiency` (0.65/0.75);
    otherwise the kind's default compute fraction.

    Parameters
    ----------
    accelerator : Accelerator or str
        The device, or a device kind (then the kind's default applies).
    precision : str
        Precision of the math.

    Returns
    -------
    float
        Fraction in (0, 1].

    References
    ----------
    S. Bekman, *Machine Learning Engineering*, ``compute/accelerator/README.md``,
    "Maximum Achievable Matmul FLOPS comparison table" (CUDA 12.1): A100 SXM 267.9 of
    312 TFLOP/s, H100 SXM 792.1 of 989.

    Examples
    --------
    >>> matmul_ceiling("gpu", "bf16")
    0.75
    """
    measured = (
        None if isinstance(accelerator, str) else getattr(accelerator, "matmul_ceiling", None)
    )
    if measured is None:
        return default_efficiency(accelerator, precision, "compute")
    if normalize_precision(precision) in _NARROW:
        return measured * _NARROW_FACTOR
    return float(measured)


@lru_cache(maxsize=256)
def _default_pair(kind: str, ceiling: float | None, precision: str) -> tuple[float, float]:
    compute = default_efficiency(kind, precision, "compute")
    if ceiling is not None:
        compute *= ceiling / REFERENCE_MATMUL_CEILING
    return compute, default_efficiency(kind, precision, "memory")


def resolve_efficiency(efficiency: Any, accelerator: Any, precision: str) -> tuple[float, float]:
    """Turn a solver's ``efficiency`` argument into (compute, memory) fractions.

    Parameters
    ----------
    efficiency : None, float, (float, float) or dict
        ``None``: :func:`default_efficiency` for both roofs. A number: that fraction of
        peak compute, with the default memory fraction. A pair or a dict with keys
        ``"compute"`` and/or ``"memory"``: those fractions (a missing one defaults).
    accelerator : Accelerator
        Device whose defaults apply.
    precision : str
        Precision of the math.

    Returns
    -------
    tuple of float
        ``(compute_fraction, memory_fraction)``, each in (0, 1].

    Raises
    ------
    ParameterError
        When a fraction is not a number in (0, 1].

    Examples
    --------
    >>> resolve_efficiency(0.5, "gpu", "bf16")
    (0.5, 0.85)
    """
    if efficiency is None and isinstance(precision, str):
        # the hot path of every solver: memoised per (device kind, precision)
        if isinstance(accelerator, str):
            return _default_pair(accelerator, None, precision)
        return _default_pair(
            getattr(accelerator, "kind", "gpu"),
            getattr(accelerator, "matmul_ceiling", None),
            precision,
        )
    comp = mem = None
    if isinstance(efficiency, dict):
        unknown = set(efficiency) - set(_KINDS)
        if unknown:
            raise ParameterError(
                "efficiency", efficiency, "a dict with keys 'compute' and/or 'memory'"
            )
        comp, mem = efficiency.get("compute"), efficiency.get("memory")
    elif isinstance(efficiency, (tuple, list)):
        if len(efficiency) != 2:
            raise ParameterError("efficiency", efficiency, "a (compute, memory) pair")
        comp, mem = efficiency
    elif efficiency is not None:
        comp = efficiency
    if comp is None:
        comp = default_efficiency(accelerator, precision, "compute")
    if mem is None:
        mem = default_efficiency(accelerator, precision, "memory")
    for value in (comp, mem):
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not (0.0 < value <= 1.0)
        ):
            raise ParameterError(
                "efficiency",
                efficiency,
                "fractions in (0, 1]",
                "Pass e.g. efficiency=0.7 or {'compute': 0.7, 'memory': 0.9}.",
            )
    return float(comp), float(mem)
