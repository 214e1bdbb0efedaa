"""Bytes of a model's weights: at rest after quantisation or pruning, and streamed per layer.

Storing ``P`` weights at ``b`` bits takes ``P · b / 8`` bytes; pruning a fraction ``s`` of
them keeps ``(1 − s) P`` values (Han, Mao & Dally 2016; Jacob et al. 2018). A machine
that keeps activations on chip and streams every layer's weights in (Cerebras' weight
streaming, Lie 2022) runs a layer at the slower of its compute and its weight injection;
the two balance at the batch where the streamed weights' arithmetic intensity meets the
compute-to-injection ratio (the roofline ridge, Williams et al. 2009).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["compressed_weight_bytes", "weight_streaming_balanced_batch"]


def _ret(x: np.ndarray) -> float | np.ndarray:
    return float(x) if np.ndim(x) == 0 else x


def compressed_weight_bytes(
    parameters: ArrayLike, bits_per_weight: ArrayLike, sparsity: ArrayLike = 0.0
) -> float | np.ndarray:
    """Bytes of the weight values a quantised and/or pruned model keeps.

    ``(1 − s) · P · b / 8``: each of the ``(1 − s) P`` surviving weights stored in ``b``
    bits. The indices of an unstructured sparse format (Han et al. store 4- to 8-bit
    relative offsets) are not counted: this is the values' floor, the figure compression
    ratios are quoted against.

    Parameters
    ----------
    parameters : float or ndarray
        Weights ``P`` of the dense model.
    bits_per_weight : float or ndarray
        Bits ``b`` per stored weight (32 for fp32, 8 for int8, 4 for int4).
    sparsity : float or ndarray
        Fraction ``s`` in [0, 1) of the weights pruned away.

    Returns
    -------
    float or ndarray
        Bytes.

    References
    ----------
    Han, Mao & Dally (2016), "Deep Compression: Compressing Deep Neural Networks with
    Pruning, Trained Quantization and Huffman Coding", ICLR (Sec. 2-3: pruning keeps the
    non-zero weights, quantisation stores each in fewer bits); Jacob et al. (2018),
    "Quantization and Training of Neural Networks for Efficient Integer-Arithmetic-Only
    Inference", CVPR (8-bit weights, a quarter of fp32).

    Examples
    --------
    Llama-3 8B's 8.03 B weights: 32.1 GB in fp32, 4.0 GB in int4 (8x smaller); pruned to
    50% sparsity in fp32, 16.1 GB.

    >>> round(compressed_weight_bytes(8.03e9, 4) / 1e9, 3)
    4.015
    """
    p = np.asarray(parameters, dtype=float)
    b = np.asarray(bits_per_weight, dtype=float)
    s = np.asarray(sparsity, dtype=float)
    return _ret((1.0 - s) * p * b / 8.0)


def weight_streaming_balanced_batch(
    bytes_per_weight: ArrayLike, compute_flops_per_s: ArrayLike, injection_Bps: ArrayLike
) -> float | np.ndarray:
    """Batch at which streaming a layer's weights takes as long as computing with them.

    A layer of ``p`` weights arrives in ``p · w / β`` seconds (``w`` bytes each over an
    injection bandwidth ``β``) and does ``2 p B`` FLOPs for ``B`` tokens in
    ``2 p B / F`` seconds at a compute rate ``F``. They are equal at
    ``B* = w F / (2 β)``, independent of ``p``: below it the layer waits for its weights,
    above it for its arithmetic (the ridge point ``F / β`` of a roofline whose memory is
    the injection link, against an intensity of ``2 B / w`` FLOP per byte).

    Parameters
    ----------
    bytes_per_weight : float or ndarray
        Bytes ``w`` per streamed weight (2 for fp16).
    compute_flops_per_s : float or ndarray
        Sustained compute ``F``, FLOP/s (peak times efficiency).
    injection_Bps : float or ndarray
        Weight injection bandwidth ``β``, bytes per second.

    Returns
    -------
    float or ndarray
        Tokens per pass (not rounded).

    References
    ----------
    Lie (2022), "Cerebras Architecture Deep Dive: First Look Inside the HW/SW Co-Design
    for Deep Learning", Hot Chips 34 (weight streaming: activations stay on the wafer,
    weights stream in layer by layer from MemoryX); Williams, Waterman & Patterson (2009),
    "Roofline: an insightful visual performance model", CACM 52(4).

    Examples
    --------
    fp16 weights, 62.5 PFLOP/s sustained (half of a CS-3's 125), 150 GB/s of injection:
    416,667 tokens per pass before compute, not injection, binds.

    >>> round(weight_streaming_balanced_batch(2, 62.5e15, 150e9))
    416667
    """
    w = np.asarray(bytes_per_weight, dtype=float)
    f = np.asarray(compute_flops_per_s, dtype=float)
    beta = np.asarray(injection_Bps, dtype=float)
    return _ret(w * f / (2.0 * beta))
