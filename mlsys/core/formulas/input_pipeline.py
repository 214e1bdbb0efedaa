"""The input pipeline against the accelerator: when preprocessing starves a training step.

With prefetching, the host prepares batch ``i+1`` while the accelerator computes on batch
``i``: the two stages overlap and each step takes as long as the slower of them (Mohan et
al. 2021). When preprocessing is the slower stage, the accelerator waits (a *data stall*)
and is busy only ``t_step / t_prep`` of the time.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["preprocessing_time", "accelerator_busy_fraction"]


def _ret(x: np.ndarray) -> float | np.ndarray:
    return float(x) if np.ndim(x) == 0 else x


def preprocessing_time(
    batch_size: ArrayLike, sample_bytes: ArrayLike, throughput_Bps: ArrayLike
) -> float | np.ndarray:
    """Host time to prepare one batch: ``B · S / R``.

    Parameters
    ----------
    batch_size : int or ndarray
        Samples per batch ``B``.
    sample_bytes : float or ndarray
        Bytes of one sample ``S`` (as read and decoded).
    throughput_Bps : float or ndarray
        The host's preprocessing rate ``R``, in bytes per second.

    Returns
    -------
    float or ndarray
        Seconds per batch.

    References
    ----------
    Murray et al. (2021), "tf.data: A Machine Learning Data Processing Framework",
    PVLDB 14(12): a pipeline's throughput is that of its slowest stage.

    Examples
    --------
    256 images of 500 kB at 2 GB/s: ``256 × 5e5 / 2e9`` = 64 ms.

    >>> round(preprocessing_time(256, 5e5, 2e9) * 1e3, 3)
    64.0
    """
    b = np.asarray(batch_size, dtype=float)
    return _ret(b * np.asarray(sample_bytes, dtype=float) / np.asarray(throughput_Bps, dtype=float))


def accelerator_busy_fraction(
    step_time_s: ArrayLike, preprocessing_time_s: ArrayLike
) -> float | np.ndarray:
    """Fraction of time the accelerator computes when preprocessing overlaps the step.

    ``t_step / max(t_step, t_prep)``: 1 while the host keeps up; below 1 the accelerator
    stalls for data every step.

    Parameters
    ----------
    step_time_s : float or ndarray
        Accelerator time of one training step, in seconds (> 0).
    preprocessing_time_s : float or ndarray
        Host time to prepare one batch, in seconds.

    Returns
    -------
    float or ndarray
        Dimensionless, in (0, 1].

    References
    ----------
    Mohan et al. (2021), "Analyzing and Mitigating Data Stalls in DNN Training",
    PVLDB 14(5), Sec. 3: with prefetching, an iteration takes the larger of the data
    pipeline's and the GPU's time.

    Examples
    --------
    A 50 ms step fed by 64 ms of preprocessing: busy ``50 / 64`` = 78.1% of the time.

    >>> round(accelerator_busy_fraction(0.050, 0.064), 4)
    0.7812
    """
    step = np.asarray(step_time_s, dtype=float)
    return _ret(step / np.maximum(step, np.asarray(preprocessing_time_s, dtype=float)))
