"""The textbook's responsible-engineering model: what privacy and subgroup coverage cost.

*Machine Learning Systems* (harvard-edge/cs249r_book) calls
``ResponsibleEngineeringModel().solve(base_training_time, epsilon=1.0, delta=1e-5,
min_subgroup_prevalence=0.01)``. Both of its answers are served as the book gives them,
and said to be the book's:

* the slowdown of differentially private training, ``1 + c/ε`` with the book's
  ``calibration.DP_SGD_SLOWDOWN_COEFFICIENT`` ``c = 2`` (its estimate; DP-SGD clips
  every example's gradient and adds Gaussian noise, Abadi et al. 2016, and what that
  costs depends on the implementation and on the steps a privacy budget allows, which the
  call does not describe; mlsys prices the clipping itself for a given model with
  :func:`~mlsys.core.formulas.privacy.dp_sgd_clipping_flops` and
  :func:`~mlsys.core.formulas.privacy.per_example_gradient_bytes`);
* the data a subgroup of prevalence ``p`` needs: a uniform sample of ``n`` examples holds
  ``n p`` of the subgroup in expectation, so seeing as many of them as a balanced set of
  ``n`` would takes ``1/p`` times the data.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from mlsys.compat._args import number
from mlsys.core.errors import ParameterError
from mlsys.core.results import Result
from mlsys.core.solvers._checks import one_si

__all__ = ["ResponsibleEngineeringModel", "ResponsibleEngineeringResult"]

# The book floors ε and the prevalence before dividing by them (its solver, e0fde03).
_EPSILON_FLOOR = 0.01
_PREVALENCE_FLOOR = 1e-6


class ResponsibleEngineeringResult(Result):
    """What the book's ``ResponsibleEngineeringModel().solve`` returns.

    Attributes
    ----------
    dp_slowdown_factor : float
        ``1 + c/ε``, the book's estimate (``c`` = 2).
    effective_training_time : Quantity [s]
        ``base_training_time`` times the slowdown.
    additional_data_requirement : float
        ``1/p``: data over that of a balanced set.
    epsilon, delta : float
        The privacy budget, as given.
    min_subgroup_prevalence : float
        ``p``, as given.
    privacy_cost_ratio : float
        The book's second name of ``dp_slowdown_factor``.
    fairness_data_ratio : float
        The book's second name of ``additional_data_requirement``.
    """

    _title: ClassVar[str] = "Responsible engineering"
    _units: ClassVar[dict[str, str | None]] = {
        "dp_slowdown_factor": None,
        "effective_training_time": "s",
        "additional_data_requirement": None,
        "epsilon": None,
        "delta": None,
        "min_subgroup_prevalence": None,
        "privacy_cost_ratio": None,
        "fairness_data_ratio": None,
    }


def _positive(name: str, value: Any, allowed: str, upper: float = math.inf) -> float:
    x = number(value, name, allowed)
    if x <= 0.0 or x > upper:
        raise ParameterError(name, value, allowed)
    return x


class ResponsibleEngineeringModel:
    """The book's ResponsibleEngineeringModel: its DP-SGD slowdown and subgroup data factor."""

    def solve(
        self,
        base_training_time: Any,
        epsilon: float = 1.0,
        delta: float = 1e-5,
        min_subgroup_prevalence: float = 0.01,
    ) -> ResponsibleEngineeringResult:
        """Training time under differential privacy and the data a rare subgroup needs.

        Parameters
        ----------
        base_training_time : Quantity [time] or float
            Training time without privacy (a plain number is seconds).
        epsilon : float
            Privacy budget ``ε > 0``; the book floors it at 0.01.
        delta : float
            Privacy ``δ`` in (0, 1), reported as given.
        min_subgroup_prevalence : float
            Share ``p`` in (0, 1] of the rarest subgroup; the book floors it at 1e-6.

        Returns
        -------
        ResponsibleEngineeringResult

        Raises
        ------
        ParameterError
            For a time that is not a positive duration, ``ε ≤ 0``, ``δ`` outside (0, 1)
            or ``p`` outside (0, 1].

        References
        ----------
        Abadi et al. (2016), "Deep Learning with Differential Privacy", CCS (DP-SGD,
        Alg. 1: per-example gradient clipping and Gaussian noise). The slowdown
        ``1 + 2/ε`` is the book's estimate (``calibration.DP_SGD_SLOWDOWN_COEFFICIENT``).

        Examples
        --------
        Ten days of training at ε = 1 and a 1% subgroup: the book's 3x slowdown (30 days)
        and 100x the data.

        >>> from mlsys import Q_
        >>> res = ResponsibleEngineeringModel().solve(Q_(10, "day"), epsilon=1.0)
        >>> res.dp_slowdown_factor, res.additional_data_requirement
        (3.0, 100.0)
        """
        from mlsys.compat.systems import calibration

        base_s = one_si(base_training_time, "s", "base_training_time", allow_zero=False)
        eps = _positive("epsilon", epsilon, "a finite privacy budget above 0")
        dlt = _positive("delta", delta, "a probability in (0, 1)")
        if dlt >= 1.0:
            raise ParameterError("delta", delta, "a probability in (0, 1)")
        share = _positive(
            "min_subgroup_prevalence", min_subgroup_prevalence, "a share in (0, 1]", 1.0
        )
        slowdown = 1.0 + float(calibration.DP_SGD_SLOWDOWN_COEFFICIENT) / max(eps, _EPSILON_FLOOR)
        data_factor = 1.0 / max(share, _PREVALENCE_FLOOR)
        return ResponsibleEngineeringResult(
            dp_slowdown_factor=slowdown,
            effective_training_time=base_s * slowdown,
            additional_data_requirement=data_factor,
            epsilon=eps,
            delta=dlt,
            min_subgroup_prevalence=share,
            privacy_cost_ratio=slowdown,
            fairness_data_ratio=data_factor,
        )
