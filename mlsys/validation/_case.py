"""One row of the accuracy suite: a published number, mlsys's prediction, and the verdict."""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # pragma: no cover
    import tomli as _toml

__all__ = [
    "BASES",
    "BOUNDS",
    "Case",
    "assumptions_of",
    "layout_fit_case",
    "load_data",
    "prediction_case",
    "records",
]

BASES = ("fit", "prediction")
"""``fit``: the published value informed a library default (the comparison is in-sample).
``prediction``: no default was chosen by looking at it (out-of-sample)."""

BOUNDS = (None, "at_most", "at_least")
"""How a case is judged. ``None``: ``|relative error| <= tolerance``. ``"at_most"``: mlsys
is a lower bound of the measurement (an optimistic roofline of a slower real system), so
only ``predicted <= published × (1 + tolerance)`` is asserted. ``"at_least"``: mlsys is an
upper bound, ``predicted >= published × (1 − tolerance)``."""

_DATA = Path(__file__).with_name("data")


@cache
def load_data(name: str) -> dict[str, Any]:
    """One published data set of the suite, parsed (the project's only loader of it).

    Parameters
    ----------
    name : str
        Stem of a file in ``mlsys/validation/data/`` (shipped in the wheel):
        ``"compute"``, ``"memory"``, ``"operations"``, ``"parallelism"``,
        ``"serving"``, ``"training"``, ``"heldout"`` or ``"heldout_serving"``.

    Returns
    -------
    dict
        The TOML document. Every published value appears in exactly one of these files,
        beside its citation; the suite and the tests read it from here.
    """
    with (_DATA / f"{name}.toml").open("rb") as fh:
        return _toml.load(fh)


def assumptions_of(section: dict[str, Any]) -> str:
    """The stated assumptions of a data-file section, as one sentence block.

    Parameters
    ----------
    section : dict
        A table of a data set (see :func:`load_data`).

    Returns
    -------
    str
        Its ``setup``, ``layout_source`` and ``assumed`` entries, those present, joined.
    """
    keys = ("setup", "layout_source", "assumed")
    parts = [section[k].rstrip(".") for k in keys if section.get(k)]
    return ". ".join(parts) + ("." if parts else "")


def records(name: str, section: str) -> list[dict[str, Any]]:
    """The rows of one table of a data set, each as a dict.

    A table is written either as an array of tables (``[[section]]``) or compactly as
    ``columns = [...]`` and ``rows = [[...], ...]``; both come back as dicts keyed by
    column name, so no caller indexes a row by position.

    Parameters
    ----------
    name : str
        Data set (see :func:`load_data`).
    section : str
        Table within it (e.g. ``"narayanan"``).

    Returns
    -------
    list of dict
    """
    table = load_data(name)[section]
    if isinstance(table, list):
        return [dict(row) for row in table]
    columns = table["columns"]
    out = []
    for row in table["rows"]:
        if len(row) != len(columns):
            raise ValueError(f"{name}.{section}: row {row!r} does not match columns {columns!r}")
        out.append(dict(zip(columns, row, strict=True)))
    return out


@dataclass(frozen=True)
class Case:
    """A published measurement and mlsys's prediction of it with library defaults.

    Attributes
    ----------
    group : str
        Topic the case belongs to (e.g. ``"Training throughput"``).
    name : str
        Short identifier, unique within the group.
    quantity : str
        What is compared, in words (e.g. ``"iteration time"``).
    unit : str
        Unit of ``published`` and ``predicted`` (plain text, e.g. ``"s"``, ``"GB"``).
    published : float
        The value printed in the source, in ``unit``.
    predicted : float
        mlsys's value through the public API with library defaults, in ``unit``.
    tolerance : float
        Largest accepted relative error (see :data:`BOUNDS` for one-sided cases).
    basis : {"fit", "prediction"}
        Whether the published value informed a library default.
    method : {"accounting", "performance model"}
        ``accounting``: an exact formula of the paper (parameter count, memory, energy
        bookkeeping) re-derived by mlsys; ``performance model``: a time or throughput
        estimated from hardware peaks and default efficiencies.
    citation : str
        Authors, year, title and the table or equation the value comes from.
    url : str
        Where the source can be read.
    bound : {None, "at_most", "at_least"}
        One-sided comparison (see :data:`BOUNDS`).
    note : str
        Why mlsys is off, where the error exceeds about 10%; otherwise empty or a
        remark on the setup.
    assumptions : str
        What the comparison takes that the source leaves unstated (layout details,
        software settings, counting conventions), and where a layout was read from; from
        the data file's ``assumed`` / ``layout_source`` beside the published value.
    open_issue : str
        Non-empty for a comparison known to fail today: names the missing physics (and
        the issue fixing it). The case still reports its error on the accuracy page; the
        test suite marks it as an expected failure that must start passing once fixed.
        Set per row in the data file, never from the error itself.
    publisher_reports_misconfigured : str
        Non-empty for a measurement its own publisher reports as misconfigured (a
        regression or a wrong setting of that run, not a property of the hardware or the
        model): the publisher's report, cited. The case stays in the suite and on the
        accuracy page, in a group of its own, and is left out of the headline mean and
        maximum (:func:`mlsys.validation.sensitivity.suite_errors`) and of every refit
        (:mod:`mlsys.validation.loso`). Set per row in the data file
        (``publisher_reports_misconfigured``), never from the error itself.
    """

    group: str
    name: str
    quantity: str
    unit: str
    published: float
    predicted: float
    tolerance: float
    basis: str
    method: str
    citation: str
    url: str = ""
    bound: str | None = None
    note: str = ""
    assumptions: str = ""
    open_issue: str = ""
    publisher_reports_misconfigured: str = ""

    def __post_init__(self) -> None:
        if self.basis not in BASES:
            raise ValueError(f"basis must be one of {BASES}, got {self.basis!r}")
        if self.bound not in BOUNDS:
            raise ValueError(f"bound must be one of {BOUNDS}, got {self.bound!r}")

    @property
    def rel_error(self) -> float:
        """``predicted / published − 1`` (positive: mlsys predicts more)."""
        return self.predicted / self.published - 1.0

    @property
    def passed(self) -> bool:
        """Whether the prediction meets the case's tolerance (one-sided for bounds)."""
        err = self.rel_error
        if self.bound == "at_most":
            return err <= self.tolerance
        if self.bound == "at_least":
            return err >= -self.tolerance
        return abs(err) <= self.tolerance

    def to_dict(self) -> dict[str, Any]:
        """The case as plain data, with ``rel_error`` and ``passed`` added."""
        out = asdict(self)
        out["rel_error"] = self.rel_error
        out["passed"] = self.passed
        return out


def prediction_case(
    section: dict[str, Any],
    *,
    group: str,
    name: str,
    quantity: str,
    unit: str,
    published: float,
    predicted: float,
    note: str = "",
    open_issue: str = "",
    publisher_reports_misconfigured: str = "",
) -> Case:
    """A performance-model prediction of a published run, set up from its data-file section.

    The section supplies what every such case states the same way: its ``tolerance``,
    ``citation``, ``url`` and assumptions (:func:`assumptions_of`); the case is an
    out-of-sample ``"prediction"`` of the ``"performance model"``.

    Parameters
    ----------
    section : dict
        The case's table in its data file (see :func:`load_data`); needs ``tolerance`` and
        ``citation``.
    group, name, quantity, unit : str
        As in :class:`Case`.
    published : float
        The source's value, in ``unit``.
    predicted : float
        mlsys's value, in ``unit``.
    note : str, optional
        Why mlsys is off, where it is (see :class:`Case`).
    open_issue : str, optional
        The missing physics of a comparison known to fail (see :class:`Case`).
    publisher_reports_misconfigured : str, optional
        The publisher's own report that the measured run was misconfigured (see
        :class:`Case`).

    Returns
    -------
    Case
    """
    return Case(
        group=group, name=name, quantity=quantity, unit=unit, published=float(published),
        predicted=float(predicted), tolerance=section["tolerance"], basis="prediction",
        method="performance model", citation=section["citation"], url=section.get("url", ""),
        note=note, assumptions=assumptions_of(section), open_issue=open_issue,
        publisher_reports_misconfigured=publisher_reports_misconfigured,
    )  # fmt: skip


def layout_fit_case(section: dict, name: str, res: Any, open_issue: str = "") -> Case:
    """One layout that ran, judged one-sided: memory needed per device over the memory the
    device exposes must be at most 1.

    Parameters
    ----------
    section : dict
        The run's data-file section (citation, url, assumptions).
    name : str
        The run's case name.
    res : DistributedResult
        The run's layout priced by DistributedModel.
    open_issue : str
        Why mlsys does not yet fit a layout that ran, if it does not.

    Returns
    -------
    Case
    """
    mem = res.memory_per_accelerator
    need, exposed = mem.si("total"), mem.si("capacity")
    note = open_issue or (
        f"The layout ran on devices exposing {exposed / 2**30:.1f} GiB each, so it must fit."
    )
    return Case(
        group="Memory: layouts that ran", name=name, quantity="memory needed / memory exposed",
        unit="fraction", published=1.0, predicted=need / exposed, tolerance=0.0,
        basis="prediction", method="accounting", citation=section["citation"],
        url=section.get("url", ""), bound="at_most", note=note,
        assumptions=assumptions_of(section), open_issue=open_issue,
    )  # fmt: skip
