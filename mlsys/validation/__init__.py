"""mlsys against published measurements: the accuracy suite.

Every comparison the project makes with a paper or a vendor benchmark is a
:class:`Case`: the published value (data files in ``mlsys/validation/data/``, each with
its full citation), mlsys's prediction of it computed through the public API with
**library defaults** (catalog hardware, :func:`mlsys.core.solvers.efficiency.default_efficiency`),
the relative error, the tolerance it is held to, and whether the published value
informed a default (``basis="fit"``) or not (``basis="prediction"``).

>>> from mlsys.validation import run_all
>>> rows = run_all()                                   # doctest: +SKIP
>>> sum(c.passed for c in rows) == len(rows)           # doctest: +SKIP
True

The documentation's accuracy page renders these rows; ``tests/validation/
test_accuracy_suite.py`` asserts each is within its tolerance (a case with an
``open_issue`` — a named gap of the model — is a strict expected failure).

The data files are the project's only copy of each published value:
:func:`load_data` parses one and :func:`records` gives a table's rows as dicts. The
tests in ``tests/validation`` read them from here; :mod:`mlsys.validation.sensitivity`
measures how the suite's error moves with each calibration constant.

Which results are fits
----------------------
* Korthikanti et al. (2022) Table 5 — the default compute efficiency (0.75 of dense
  peak for bf16/fp16 GEMMs on GPUs) was chosen so that these end-to-end runs sit inside
  the model's range (``mlsys/core/solvers/efficiency.py``).
* Llama 3's 419 interruptions in 54 days — the default per-GPU failure rates
  (``mlsys/core/solvers/reliability.py``) are derived from them.
* nccl-tests on 8 H100 (ring and NVLS all-reduce, all-gather, reduce-scatter) and the
  DGX A100 small-message all-reduce latencies — NVLink's wire efficiency, NVLS's
  bandwidth and the measured LL step (``mlsys/core/formulas/collectives.py``) were set
  from them; the A100, A800, H200 and network rows of that group are predictions.

The ``"heldout"`` topic (:mod:`mlsys.validation.heldout`) holds published training runs
from sources the rest of the suite does not cite; no default, constant or mechanism is
chosen by looking at them, so their error is the one a user meets on a run mlsys has
never seen.

Everything else is a prediction: accounting identities re-derived from the papers'
definitions (parameters, FLOPs, ZeRO memory and communication, activations, pipeline
bubbles, collective traffic, checkpoint intervals, energy and carbon) and
performance predictions (other training runs, serving latencies and throughputs) that
no default was tuned on.
"""

from __future__ import annotations

from collections.abc import Callable

from mlsys.validation._case import BASES, BOUNDS, Case, load_data, records

__all__ = [
    "BASES",
    "BOUNDS",
    "GROUPS",
    "Case",
    "load_data",
    "records",
    "run_all",
    "run_group",
    "to_records",
]


def _suites() -> dict[str, list[Callable[[], list[Case]]]]:
    from mlsys.validation import (
        collectives,
        compute,
        heldout,
        heldout_serving,
        memory,
        operations,
        parallelism,
        serving,
        tpu,
        training,
    )

    return {
        "memory": [
            memory.zero_cases,
            memory.activation_cases,
            training.layout_fit_cases,
            tpu.tpu_layout_fit_cases,
            memory.ran_layout_fit_cases,
        ],
        "compute": [compute.param_cases, compute.flop_cases],
        "parallelism": [parallelism.parallelism_cases, collectives.nccl_tests_cases],
        "training": [training.korthikanti_cases, training.other_run_cases, tpu.tpu_cases],
        "serving": [serving.latency_cases, serving.throughput_cases, serving.capacity_cases],
        "operations": [operations.carbon_cases, operations.reliability_cases],
        "heldout": [heldout.heldout_cases, heldout_serving.heldout_serving_cases],
    }


GROUPS = ("memory", "compute", "parallelism", "training", "serving", "operations", "heldout")
"""Topics of the suite, in the order :func:`run_all` returns them."""


def run_group(topic: str) -> list[Case]:
    """The cases of one topic (one of :data:`GROUPS`).

    Parameters
    ----------
    topic : str
        ``"memory"``, ``"compute"``, ``"parallelism"``, ``"training"``, ``"serving"``,
        ``"operations"`` or ``"heldout"`` (published training runs no constant or
        mechanism was chosen on: :mod:`mlsys.validation.heldout`).

    Returns
    -------
    list of Case
    """
    suites = _suites()
    if topic not in suites:
        from mlsys.core.errors import ParameterError

        raise ParameterError("topic", topic, f"one of {', '.join(GROUPS)}")
    return [case for fn in suites[topic] for case in fn()]


def run_all() -> list[Case]:
    """Every published comparison, predicted with library defaults.

    Returns
    -------
    list of Case
        In the order of :data:`GROUPS`; each carries published, predicted,
        ``rel_error``, ``tolerance``, ``basis`` (fit / prediction), ``citation`` and
        ``passed``.
    """
    return [case for topic in GROUPS for case in run_group(topic)]


def to_records(cases: list[Case] | None = None) -> list[dict]:
    """The cases as plain dicts (for a DataFrame, JSON or a table).

    Parameters
    ----------
    cases : list of Case, optional
        Default: :func:`run_all`.

    Returns
    -------
    list of dict
    """
    return [c.to_dict() for c in (run_all() if cases is None else cases)]
