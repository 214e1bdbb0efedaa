"""The textbook's compression model: what quantising or pruning a model saves, and costs.

*Machine Learning Systems* (harvard-edge/cs249r_book) calls
``CompressionModel().solve(model, hardware, method="quantization", target_bitwidth=8,
sparsity=0.0, sparsity_type="unstructured")``. mlsys serves its sizes and speed-up from
physics and its accuracy change as the book's estimate:

* sizes: the fp32 weights (``4 P`` bytes, the book's baseline) against the values a
  ``b``-bit or ``s``-sparse model keeps,
  :func:`~mlsys.core.formulas.weights.compressed_weight_bytes` (Han et al. 2016;
  Jacob et al. 2018);
* speed-up of quantisation: mlsys's roofline time of one forward pass
  (:func:`~mlsys.core.formulas.roofline.roofline_time`, Williams et al. 2009) with the fp32
  weights at the device's 16-bit peak, over the same with the quantised weights at the
  device's peak for ``int{b}`` (``b ≤ 8``) or ``fp{b}`` when the catalog lists one;
* speed-up of pruning: structured pruning removes whole rows, so work and bytes both shrink
  by ``1 − s``; a 2:4 pattern (50%) runs at the device's catalogued
  ``sparsity_speedup`` (2x on Ampere and Hopper, 1 where none is listed); unstructured
  sparsity saves storage only;
* accuracy: the book's ``calibration.QUANT_ACCURACY_DELTA_*`` and ``PRUNING_*`` figures
  (its estimates, recorded with their sources), not a prediction of mlsys.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from mlsys.compat._args import number
from mlsys.compat._unwrap import as_catalog, book_peak_flops_s
from mlsys.core.errors import ParameterError
from mlsys.core.formulas.roofline import roofline_time
from mlsys.core.formulas.weights import compressed_weight_bytes
from mlsys.core.results import Result

__all__ = ["CompressionModel", "CompressionResult"]

_METHODS = ("quantization", "pruning", "distillation")
_SPARSITY_TYPES = ("unstructured", "structured", "n_m")
_FP32_BITS = 32
# The book's window around 50% in which a 2:4 pattern earns the hardware speed-up.
_TWO_FOUR_TOLERANCE = 0.05


class CompressionResult(Result):
    """What the book's ``CompressionModel().solve`` returns.

    Attributes
    ----------
    original_size_gb : Quantity [GB]
        The fp32 weights, ``4 P`` bytes.
    compressed_size_gb : Quantity [GB]
        The weight values the compressed model keeps.
    compression_ratio : float
        Original over compressed size.
    estimated_accuracy_delta : float
        The book's estimate of the accuracy change (a fraction; negative is a loss).
    memory_savings_pct : float
        ``100 (1 − 1/ratio)``.
    inference_speedup : float
        Time of one forward pass before over after.
    """

    _title: ClassVar[str] = "Compression"
    _units: ClassVar[dict[str, str | None]] = {
        "original_size_gb": "GB",
        "compressed_size_gb": "GB",
        "compression_ratio": None,
        "estimated_accuracy_delta": None,
        "memory_savings_pct": None,
        "inference_speedup": None,
    }


def _choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ParameterError(name, value, f"one of {list(allowed)}")
    return value


def _bits(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1 or value > _FP32_BITS:
        raise ParameterError("target_bitwidth", value, "a whole number of bits from 1 to 32")
    return value


def _sparsity(value: Any) -> float:
    allowed = "a fraction in [0, 1) of the weights pruned"
    s = number(value, "sparsity", allowed)
    if not 0.0 <= s < 1.0:
        raise ParameterError("sparsity", value, allowed)
    return s


def _quantization_accuracy(bits: int) -> float:
    from mlsys.compat.systems import calibration as cal

    if bits >= 16:
        return 0.0
    if bits == 8:  # the book reads its FP8 figure at 8 bits
        return float(cal.QUANT_ACCURACY_DELTA_FP8)
    if bits >= 4:
        return float(cal.QUANT_ACCURACY_DELTA_INT4)
    return float(cal.QUANT_ACCURACY_DELTA_SUB_INT4)


def _pruning_accuracy(sparsity: float) -> float:
    from mlsys.compat.systems import calibration as cal

    if sparsity <= float(cal.PRUNING_ACCURACY_THRESHOLD):
        return float(cal.PRUNING_MILD_DELTA)
    steep = float(cal.PRUNING_STEEP_COEFFICIENT)
    return -steep * math.exp(sparsity * float(cal.PRUNING_STEEP_EXPONENT))


def _quantization_speedup(workload: Any, accelerator: Any, bits: int) -> float:
    params = float(workload.parameters.magnitude)
    flops = float(workload.inference_flops.magnitude)
    bandwidth = float(accelerator.memory_bandwidth_Bps)
    before = roofline_time(flops, 4.0 * params, book_peak_flops_s(accelerator, None), bandwidth)
    key = f"int{bits}" if bits <= 8 else f"fp{bits}"
    after_bytes = compressed_weight_bytes(params, bits)
    after = roofline_time(flops, after_bytes, book_peak_flops_s(accelerator, key), bandwidth)
    return float(before / after)


def _pruning_speedup(accelerator: Any, sparsity: float, sparsity_type: str) -> float:
    if sparsity_type == "structured":
        return 1.0 / (1.0 - sparsity)
    if sparsity_type == "n_m" and abs(sparsity - 0.5) < _TWO_FOUR_TOLERANCE:
        return float(getattr(accelerator, "sparsity_speedup", None) or 1.0)
    return 1.0


class CompressionModel:
    """The book's CompressionModel: sizes and speed-up from physics, accuracy as the book's."""

    def solve(
        self,
        model: Any,
        hardware: Any,
        method: str = "quantization",
        target_bitwidth: int = 8,
        sparsity: float = 0.0,
        sparsity_type: str = "unstructured",
    ) -> CompressionResult:
        """Sizes, speed-up and the book's accuracy estimate of a compressed model.

        Parameters
        ----------
        model : BookModel or Workload
            A catalog model (its parameters and forward-pass FLOPs).
        hardware : BookAccelerator or Accelerator
            The device (peaks per precision, memory bandwidth, 2:4 sparsity speed-up).
        method : str
            ``"quantization"``, ``"pruning"`` or ``"distillation"`` (the book sizes no
            student: ratio 1, no change).
        target_bitwidth : int
            Bits per weight after quantisation, 1 to 32.
        sparsity : float
            Fraction of weights pruned, in [0, 1).
        sparsity_type : str
            ``"unstructured"``, ``"structured"`` or ``"n_m"`` (2:4).

        Returns
        -------
        CompressionResult

        Raises
        ------
        ParameterError
            For an unknown method or sparsity type, a bit width outside 1-32 or a
            sparsity outside [0, 1).

        References
        ----------
        Han, Mao & Dally (2016), "Deep Compression", ICLR; Jacob et al. (2018),
        "Quantization and Training of Neural Networks for Efficient Integer-Arithmetic-Only
        Inference", CVPR; Williams, Waterman & Patterson (2009), "Roofline", CACM 52(4);
        Mishra et al. (2021), "Accelerating Sparse Deep Neural Networks", arXiv 2104.08378
        (2:4 sparsity). Accuracy changes: the book's calibration (Gholami et al. 2021;
        Blalock et al. 2020).

        Examples
        --------
        Llama-3 8B to int4 on an H100: 32.1 GB of fp32 weights become 4.0 GB (8x); one
        decoded token is memory-bound, so it runs 8x faster; the book estimates -2.5%.

        >>> from mlsys import Hardware, Models
        >>> res = CompressionModel().solve(Models.Language.Llama3_8B, Hardware.H100,
        ...                                target_bitwidth=4)
        >>> res.compression_ratio, round(res.inference_speedup, 6), res.estimated_accuracy_delta
        (8.0, 8.0, -0.025)
        """
        workload, accelerator = as_catalog(model), as_catalog(hardware)
        kind = _choice("method", method, _METHODS)
        pattern = _choice("sparsity_type", sparsity_type, _SPARSITY_TYPES)
        bits, s = _bits(target_bitwidth), _sparsity(sparsity)
        params = float(workload.parameters.magnitude)
        original_b = compressed_weight_bytes(params, _FP32_BITS)
        if kind == "quantization":
            compressed_b = compressed_weight_bytes(params, bits)
            delta = _quantization_accuracy(bits)
            speedup = _quantization_speedup(workload, accelerator, bits)
        elif kind == "pruning":
            compressed_b = compressed_weight_bytes(params, _FP32_BITS, s)
            delta = _pruning_accuracy(s)
            speedup = _pruning_speedup(accelerator, s, pattern)
        else:
            compressed_b, delta, speedup = original_b, 0.0, 1.0
        ratio = original_b / compressed_b
        return CompressionResult(
            original_size_gb=original_b / 1e9,
            compressed_size_gb=compressed_b / 1e9,
            compression_ratio=ratio,
            estimated_accuracy_delta=delta,
            memory_savings_pct=(1.0 - 1.0 / ratio) * 100.0,
            inference_speedup=speedup,
        )
