"""The compute and memory differentially private SGD adds to a training step.

DP-SGD (Abadi et al. 2016, Alg. 1) computes each example's gradient, clips it to an L2
norm ``C`` (``g ← g / max(1, ‖g‖₂ / C)``), sums the lot and adds Gaussian noise once.
Against plain SGD, whose weight-gradient GEMMs sum over the batch as they go, this costs
every example's gradient norm and rescale, the noise, and, when per-example gradients are
materialised, ``B`` gradient buffers instead of one.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["dp_sgd_clipping_flops", "per_example_gradient_bytes"]


def _ret(x: np.ndarray) -> float | np.ndarray:
    return float(x) if np.ndim(x) == 0 else x


def dp_sgd_clipping_flops(parameters: ArrayLike, lot_size: ArrayLike) -> float | np.ndarray:
    """FLOPs DP-SGD's clipping and noise add to one step: ``(3 B + 1) P``.

    Per example, the squared L2 norm of its ``P``-element gradient is ``P`` multiplies and
    ``P`` adds, and the rescale ``P`` multiplies (``3P``); the lot's sum is the same
    additions plain SGD does inside its GEMMs, so it is not extra; the noise is ``P`` adds
    once per lot. The square root and the random draws are not counted.

    Parameters
    ----------
    parameters : float or ndarray
        Trainable parameters ``P``.
    lot_size : float or ndarray
        Examples ``B`` per step (Abadi et al.'s lot).

    Returns
    -------
    float or ndarray
        FLOP per step.

    References
    ----------
    Abadi et al. (2016), "Deep Learning with Differential Privacy", ACM CCS, Alg. 1
    (compute gradient per example, clip, add noise, descend).

    Examples
    --------
    BERT-Large's 340 M parameters and a lot of 1,024: 1.04 TFLOP per step, against about
    6 x 340e6 x 1,024 x 128 = 267 TFLOP of training work at 128 tokens per example.

    >>> round(dp_sgd_clipping_flops(340e6, 1024) / 1e12, 2)
    1.04
    """
    p = np.asarray(parameters, dtype=float)
    b = np.asarray(lot_size, dtype=float)
    return _ret((3.0 * b + 1.0) * p)


def per_example_gradient_bytes(
    parameters: ArrayLike, lot_size: ArrayLike, bytes_per_element: ArrayLike = 4.0
) -> float | np.ndarray:
    """Bytes of ``B`` materialised per-example gradients: ``B · P · bytes``.

    The memory a straightforward DP-SGD step holds to clip each example's gradient before
    summing, ``B`` times plain SGD's one gradient buffer (a microbatch of ``m`` examples
    holds ``m``; ghost clipping computes the norms without them).

    Parameters
    ----------
    parameters : float or ndarray
        Trainable parameters ``P``.
    lot_size : float or ndarray
        Examples whose gradients are held at once.
    bytes_per_element : float or ndarray
        Bytes per gradient element (4 for fp32).

    Returns
    -------
    float or ndarray
        Bytes.

    References
    ----------
    Abadi et al. (2016), "Deep Learning with Differential Privacy", ACM CCS, Alg. 1;
    Li et al. (2022), "Large Language Models Can Be Strong Differentially Private
    Learners", ICLR (ghost clipping avoids the per-example buffers).

    Examples
    --------
    340 M fp32 parameters, 32 examples at once: 43.5 GB, 32 x the 1.36 GB of one gradient.

    >>> round(per_example_gradient_bytes(340e6, 32) / 1e9, 1)
    43.5
    """
    p = np.asarray(parameters, dtype=float)
    b = np.asarray(lot_size, dtype=float)
    w = np.asarray(bytes_per_element, dtype=float)
    return _ret(b * p * w)
