"""Compute-optimal training: how a FLOP budget splits into parameters and tokens.

Training a dense transformer of ``N`` parameters on ``D`` tokens costs ``C ≈ k N D``
FLOPs (``k = 6``: two for the forward pass, four for the backward; Kaplan et al. 2020,
Sec. 2.1). Hoffmann et al. (2022) find that for a fixed ``C`` the loss is lowest when
tokens grow in proportion to parameters, ``D ≈ r N`` with ``r ≈ 20``; the two together
give ``N* = sqrt(C / (k r))`` and ``D* = r N*``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["compute_optimal_parameters", "tokens_for_compute"]

#: Training FLOPs per parameter per token of a dense transformer (Kaplan et al. 2020).
TRAINING_FLOPS_PER_PARAMETER_TOKEN = 6.0
#: Compute-optimal tokens per parameter (Hoffmann et al. 2022, Table 3).
CHINCHILLA_TOKENS_PER_PARAMETER = 20.0


def _ret(x: np.ndarray) -> float | np.ndarray:
    return float(x) if np.ndim(x) == 0 else x


def compute_optimal_parameters(
    compute_flops: ArrayLike,
    tokens_per_parameter: ArrayLike = CHINCHILLA_TOKENS_PER_PARAMETER,
    flops_per_parameter_token: ArrayLike = TRAINING_FLOPS_PER_PARAMETER_TOKEN,
) -> float | np.ndarray:
    """Parameters of the compute-optimal model for a training budget.

    With ``C = k N D`` and ``D = r N``, ``C = k r N²`` and ``N* = sqrt(C / (k r))``.

    Parameters
    ----------
    compute_flops : float or ndarray
        Training budget ``C``, in FLOPs.
    tokens_per_parameter : float or ndarray
        ``r = D / N`` at the optimum (default 20).
    flops_per_parameter_token : float or ndarray
        ``k`` (default 6).

    Returns
    -------
    float or ndarray
        Parameters ``N*`` (a count).

    References
    ----------
    Hoffmann et al. (2022), "Training Compute-Optimal Large Language Models",
    arXiv:2203.15556, Table 3 (about 20 tokens per parameter); Kaplan et al. (2020),
    "Scaling Laws for Neural Language Models", arXiv:2001.08361, Sec. 2.1 (``C ≈ 6 N D``).

    Examples
    --------
    Chinchilla's budget, 5.76e23 FLOPs: ``sqrt(5.76e23 / 120)`` = 69.3 B parameters (the
    paper trains 70 B on 1.4 T tokens).

    >>> round(compute_optimal_parameters(5.76e23) / 1e9, 1)
    69.3
    """
    c = np.asarray(compute_flops, dtype=float)
    kr = np.asarray(flops_per_parameter_token, dtype=float) * np.asarray(
        tokens_per_parameter, dtype=float
    )
    return _ret(np.sqrt(c / kr))


def tokens_for_compute(
    compute_flops: ArrayLike,
    parameters: ArrayLike,
    flops_per_parameter_token: ArrayLike = TRAINING_FLOPS_PER_PARAMETER_TOKEN,
) -> float | np.ndarray:
    """Training tokens a budget buys for a model of a given size: ``D = C / (k N)``.

    Parameters
    ----------
    compute_flops : float or ndarray
        Training budget ``C``, in FLOPs.
    parameters : float or ndarray
        Model parameters ``N`` (a count).
    flops_per_parameter_token : float or ndarray
        ``k`` (default 6).

    Returns
    -------
    float or ndarray
        Tokens ``D`` (a count).

    References
    ----------
    Kaplan et al. (2020), "Scaling Laws for Neural Language Models", arXiv:2001.08361,
    Sec. 2.1 (``C ≈ 6 N D``).

    Examples
    --------
    1e23 FLOPs on a 7 B model: ``1e23 / (6 × 7e9)`` = 2.38 T tokens.

    >>> round(tokens_for_compute(1e23, 7e9) / 1e12, 2)
    2.38
    """
    c = np.asarray(compute_flops, dtype=float)
    k_n = np.asarray(flops_per_parameter_token, dtype=float) * np.asarray(parameters, dtype=float)
    return _ret(c / k_n)
