"""Pipeline parallelism: bubbles of the GPipe, 1F1B and interleaved schedules, p2p traffic.

Two conventions describe the idle time ("bubble") of a synchronous pipeline of ``p``
stages fed with ``m`` micro-batches, and papers use both:

* **share of the total step** — GPipe (Huang et al. 2019): ``(p − 1)/(m + p − 1)``;
* **ratio to the ideal (bubble-free) time** — Megatron-LM (Narayanan et al. 2021):
  ``(p − 1)/m`` for 1F1B, ``(p − 1)/(v·m)`` with ``v`` interleaved model chunks per
  device.

They are the same schedule seen two ways: with ``r`` the ratio to ideal, the share of
the total is ``r/(1 + r)``. For ``p = 8, m = 32``: 21.9 % of ideal = 17.9 % of total.
GPipe and 1F1B have the same bubble; 1F1B only holds fewer micro-batches in flight.

All functions broadcast over numpy arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mlsys.core.checks import counts
from mlsys.core.errors import ParameterError
from mlsys.core.formulas._ops import num

__all__ = [
    "PIPELINE_SCHEDULES",
    "gpipe_bubble_fraction",
    "one_f_one_b_bubble_ratio",
    "interleaved_bubble_ratio",
    "bubble_ratio_to_fraction",
    "bubble_fraction_to_ratio",
    "pipeline_bubble_fraction",
    "pipeline_bubble_ratio",
    "pipeline_p2p_bytes",
]

ArrayLike = Any

PIPELINE_SCHEDULES: tuple[str, ...] = ("1f1b", "interleaved", "gpipe")
"""Schedules the pipeline formulas and the distributed solver know."""


def _f(x: ArrayLike) -> Any:
    # plain numbers stay floats (math only: the fast path of one solve); others become
    # float arrays (numpy broadcasting: a search)
    return num(x)


def _ret(x: Any) -> Any:
    if type(x) is float:
        return x
    return float(x) if np.ndim(x) == 0 else x


def gpipe_bubble_fraction(pp_size: ArrayLike, microbatch_count: ArrayLike) -> ArrayLike:
    """Share of a GPipe step spent idle: ``(p − 1)/(m + p − 1)``.

    Each of ``p`` stages works for ``m`` of the ``m + p − 1`` time slots of the forward
    (and of the backward) sweep; the rest is fill and drain.

    Parameters
    ----------
    pp_size : int or ndarray
        Pipeline stages ``p``.
    microbatch_count : int or ndarray
        Micro-batches per step ``m``.

    Returns
    -------
    float or ndarray
        Fraction of the total step time (dimensionless, in [0, 1)).

    References
    ----------
    Huang et al. (2019), "GPipe: Efficient Training of Giant Neural Networks using
    Pipeline Parallelism", NeurIPS 2019, Sec. 2.3 (bubble overhead
    ``O((K − 1)/(M + K − 1))``).

    Examples
    --------
    p = 8, m = 32: 7/39 = 17.9 % of the step.

    >>> round(gpipe_bubble_fraction(8, 32), 3)
    0.179
    """
    p, m = _f(pp_size), _f(microbatch_count)
    return _ret((p - 1.0) / (m + p - 1.0))


def one_f_one_b_bubble_ratio(pp_size: ArrayLike, microbatch_count: ArrayLike) -> ArrayLike:
    """Bubble time of the 1F1B schedule over the ideal time: ``(p − 1)/m``.

    Parameters
    ----------
    pp_size : int or ndarray
        Pipeline stages ``p``.
    microbatch_count : int or ndarray
        Micro-batches per step ``m``.

    Returns
    -------
    float or ndarray
        Ratio of bubble time to ideal (bubble-free) time (dimensionless).

    References
    ----------
    Narayanan et al. (2021), "Efficient Large-Scale Language Model Training on GPU
    Clusters Using Megatron-LM", SC'21, Sec. 2.2.1: bubble time fraction
    ``(p − 1)/m``. The 1F1B schedule itself: Narayanan et al. (2019), "PipeDream",
    SOSP'19.

    Examples
    --------
    p = 8, m = 32: 7/32 = 21.9 % of the ideal time.

    >>> round(one_f_one_b_bubble_ratio(8, 32), 4)
    0.2188
    """
    p, m = _f(pp_size), _f(microbatch_count)
    return _ret((p - 1.0) / m)


def interleaved_bubble_ratio(
    pp_size: ArrayLike, microbatch_count: ArrayLike, v_stages: ArrayLike
) -> ArrayLike:
    """Bubble over ideal time of the interleaved 1F1B schedule: ``(p − 1)/(v·m)``.

    Each device holds ``v`` model chunks (virtual stages), so a micro-batch crosses the
    pipeline in ``v`` times shorter hops and fill/drain shrink by ``v``, at the price of
    ``v`` times more point-to-point transfers.

    Parameters
    ----------
    pp_size : int or ndarray
        Pipeline stages (devices) ``p``.
    microbatch_count : int or ndarray
        Micro-batches per step ``m``.
    v_stages : int or ndarray
        Model chunks per device ``v`` (1: plain 1F1B).

    Returns
    -------
    float or ndarray
        Ratio of bubble time to ideal time (dimensionless).

    References
    ----------
    Narayanan et al. (2021), SC'21, Sec. 2.2.2 (interleaved schedule, bubble
    ``(1/v)·(p − 1)/m``).

    Examples
    --------
    p = 8, m = 64, v = 3 (the 175B run of Korthikanti et al. 2022): 3.6 %.

    >>> round(interleaved_bubble_ratio(8, 64, 3), 4)
    0.0365
    """
    # num(): plain floats stay floats (the fast path one solve takes), arrays broadcast
    p, m, v = num(pp_size), num(microbatch_count), num(v_stages)
    return _ret((p - 1.0) / (v * m))


def bubble_ratio_to_fraction(ratio: ArrayLike) -> ArrayLike:
    """Convert a bubble ratio (over ideal time) to a share of the total: ``r/(1 + r)``.

    Parameters
    ----------
    ratio : float or ndarray
        Bubble time over ideal time.

    Returns
    -------
    float or ndarray
        Bubble time over total time.

    References
    ----------
    Total = ideal + bubble, so bubble/total = r/(1 + r); with ``r = (p − 1)/m`` this is
    GPipe's ``(p − 1)/(m + p − 1)`` (Huang et al. 2019; Narayanan et al. 2021).

    Examples
    --------
    21.9 % of ideal is 17.9 % of total (p = 8, m = 32).

    >>> round(bubble_ratio_to_fraction(7 / 32), 3)
    0.179
    """
    r = _f(ratio)
    return _ret(r / (1.0 + r))


def bubble_fraction_to_ratio(fraction: ArrayLike) -> ArrayLike:
    """Convert a bubble share of the total to a ratio over ideal time: ``f/(1 − f)``.

    Parameters
    ----------
    fraction : float or ndarray
        Bubble time over total time, in [0, 1).

    Returns
    -------
    float or ndarray
        Bubble time over ideal time.

    References
    ----------
    The inverse of :func:`bubble_ratio_to_fraction`.

    Examples
    --------
    17.9 % of the total (7/39) is 21.9 % of ideal (7/32).

    >>> round(bubble_fraction_to_ratio(7 / 39), 4)
    0.2188
    """
    f = _f(fraction)
    if np.any((f < 0) | (f >= 1)):
        raise ParameterError("fraction", fraction, "a share of the total in [0, 1)")
    return _ret(f / (1.0 - f))


def _schedule(schedule: str, v_stages: ArrayLike) -> str:
    key = str(schedule).lower().replace("-", "").replace("_", "")
    key = {"1f1b": "1f1b", "pipedream": "1f1b", "interleaved": "interleaved", "gpipe": "gpipe"}.get(
        key, key
    )
    if key not in PIPELINE_SCHEDULES:
        raise ParameterError("schedule", schedule, "one of " + ", ".join(PIPELINE_SCHEDULES))
    if key == "gpipe" and np.any(_f(v_stages) != 1):
        raise ParameterError("v_stages", v_stages, "1 for the GPipe schedule")
    return key


def pipeline_bubble_ratio(
    pp_size: ArrayLike,
    microbatch_count: ArrayLike,
    v_stages: ArrayLike = 1,
    schedule: str = "1f1b",
) -> ArrayLike:
    """Bubble time over ideal time for any schedule (Megatron-LM's convention).

    ``(p − 1)/(v·m)``; GPipe and 1F1B have ``v = 1`` and the same bubble.

    Parameters
    ----------
    pp_size, microbatch_count : int or ndarray
        ``p`` and ``m``.
    v_stages : int or ndarray
        Model chunks per device (``"interleaved"``/``"1f1b"`` with ``v > 1``).
    schedule : {"1f1b", "interleaved", "gpipe"}
        Pipeline schedule.

    Returns
    -------
    float or ndarray
        Ratio (dimensionless).

    References
    ----------
    Narayanan et al. (2021), SC'21, Sec. 2.2; Huang et al. (2019), GPipe.

    Examples
    --------
    >>> round(pipeline_bubble_ratio(8, 32), 4), round(pipeline_bubble_ratio(8, 32, 2), 4)
    (0.2188, 0.1094)
    """
    # counts: 0 stages gave a negative bubble, 0 micro-batches a ZeroDivisionError
    pp_size = counts("pp_size", pp_size)
    microbatch_count = counts("microbatch_count", microbatch_count)
    v_stages = counts("v_stages", v_stages)
    _schedule(schedule, v_stages)
    return interleaved_bubble_ratio(pp_size, microbatch_count, v_stages)


def pipeline_bubble_fraction(
    pp_size: ArrayLike,
    microbatch_count: ArrayLike,
    v_stages: ArrayLike = 1,
    schedule: str = "1f1b",
) -> ArrayLike:
    """Share of the total step time a pipeline spends in its bubble.

    ``r/(1 + r)`` with ``r = (p − 1)/(v·m)``; for ``v = 1`` this is GPipe's
    ``(p − 1)/(m + p − 1)``.

    Parameters
    ----------
    pp_size, microbatch_count : int or ndarray
        ``p`` and ``m``.
    v_stages : int or ndarray
        Model chunks per device.
    schedule : {"1f1b", "interleaved", "gpipe"}
        Pipeline schedule.

    Returns
    -------
    float or ndarray
        Fraction of the total step (dimensionless).

    References
    ----------
    Huang et al. (2019), GPipe, Sec. 2.3; Narayanan et al. (2021), SC'21, Sec. 2.2.

    Examples
    --------
    p = 8, m = 32: 17.9 % of the total.

    >>> round(pipeline_bubble_fraction(8, 32), 3)
    0.179
    """
    return bubble_ratio_to_fraction(
        pipeline_bubble_ratio(pp_size, microbatch_count, v_stages, schedule)
    )


def pipeline_p2p_bytes(
    seq_len: ArrayLike,
    microbatch_size: ArrayLike,
    hidden: ArrayLike,
    bytes_per_element: ArrayLike = 2.0,
    tp_size: ArrayLike = 1,
    sequence_parallel: bool = False,
) -> ArrayLike:
    """Bytes one rank sends to the next pipeline stage per micro-batch, one direction.

    The activation at a stage boundary is ``s·b·h`` elements. With sequence parallelism
    (or Megatron's scatter/gather optimisation) each of the ``t`` tensor-parallel ranks
    sends only its ``1/t`` slice over its own link; the backward pass sends a gradient
    of the same size the other way.

    Parameters
    ----------
    seq_len : int or ndarray
        Sequence length ``s``.
    microbatch_size : int or ndarray
        Sequences per micro-batch ``b``.
    hidden : int or ndarray
        Hidden size ``h``.
    bytes_per_element : float or ndarray
        Bytes per activation element (2 for bf16).
    tp_size : int or ndarray
        Tensor-parallel size ``t``.
    sequence_parallel : bool
        Each rank holds (and sends) ``1/t`` of the sequence.

    Returns
    -------
    float or ndarray
        Bytes per rank per micro-batch per direction.

    References
    ----------
    Narayanan et al. (2021), SC'21, Sec. 4.1 ("scatter/gather communication
    optimization": ``bsh/t`` per rank); Korthikanti et al. (2022), "Reducing Activation
    Recomputation in Large Transformer Models", Sec. 4.2.2 (sequence parallelism).

    Examples
    --------
    GPT-3 (s = 2048, b = 1, h = 12288) in bf16: 50.3 MB; 6.29 MB per rank with t = 8
    and sequence parallelism.

    >>> round(pipeline_p2p_bytes(2048, 1, 12288) / 1e6, 1)
    50.3
    >>> round(pipeline_p2p_bytes(2048, 1, 12288, 2, 8, True) / 1e6, 2)
    6.29
    """
    full = _f(seq_len) * _f(microbatch_size) * _f(hidden) * _f(bytes_per_element)
    if sequence_parallel:
        full = full / _f(tp_size)
    return _ret(full)
