"""Expected error of a prediction: ``data/error_bands.toml``, by kind of case and scale.

The figures are out-of-sample residuals (:mod:`mlsys.validation.loso`): the accuracy
suite's leave-one-source-out errors and the held-out runs' errors
(:mod:`mlsys.validation.heldout`). For each kind of comparable case — dense training by
scale (one node, up to 256 accelerators, more), MoE training, serving prefill, decode,
throughput — the 90th percentile of |predicted / published − 1| over the cases of
sources no constant was refit on. A solver's result reports the band of its kind
(``DistributedResult.error_band``), and ``fmt(value, band=True)`` prints it.

>>> from mlsys.core.catalog.bands import error_band
>>> round(error_band("DistributedModel", "step_time").fraction, 3) > 0
True
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any

from mlsys.core.catalog._tables import CatalogError, load_table

__all__ = [
    "FIELD_KINDS",
    "TRAINING_SCALES",
    "ErrorBand",
    "error_band",
    "error_bands",
    "training_kind",
]

_FILE = "error_bands.toml"
_FIELDS = ("band", "mean", "cases")

FIELD_KINDS: dict[tuple[str, str], str] = {
    ("DistributedModel", "step_time"): "training dense",
    ("DistributedModel", "tokens_per_second"): "training dense",
    ("DistributedModel", "mfu"): "training dense",
    ("ServingModel", "ttft"): "serving prefill",
    ("ServingModel", "itl"): "serving decode",
    ("ServingModel", "e2e_latency"): "serving decode",
    ("ServingModel", "tokens_per_second"): "serving throughput",
}
"""Which kind of case a solver's field is compared with (a MoE model's training fields
take ``"training MoE"``; a dense one's take its scale's kind, :func:`training_kind`)."""

TRAINING_SCALES: tuple[tuple[int, str], ...] = (
    (8, "one node"),
    (256, "9-256 accelerators"),
    (2**62, "over 256 accelerators"),
)
"""Scales dense training cases are grouped by: the largest accelerator count of each and
its name (one 8-GPU node; up to 256, a few racks; more). The bins are fixed before the
residuals are looked at, at the boundaries where the data-parallel and pipeline traffic
leaves the node and where it spans many switches."""


def training_kind(moe: bool = False, accelerators: float | None = None) -> str:
    """The kind of a training case or prediction: ``"training MoE"``, or dense training at
    its scale (:data:`TRAINING_SCALES`; ``"training dense"`` when the scale is unknown).

    Parameters
    ----------
    moe : bool
        The model is a mixture of experts.
    accelerators : float, optional
        Accelerators of the run.

    Returns
    -------
    str

    Examples
    --------
    >>> training_kind(accelerators=64), training_kind(True, 8)
    ('training dense, 9-256 accelerators', 'training MoE')
    """
    if moe:
        return "training MoE"
    if accelerators is None:
        return "training dense"
    name = next(n for top, n in TRAINING_SCALES if accelerators <= top)
    return f"training dense, {name}"


@dataclass(frozen=True)
class ErrorBand:
    """The expected relative error of one kind of prediction.

    Attributes
    ----------
    kind : str
        The kind of case (``"training dense"``, ``"serving decode"`` ...).
    fraction : float
        The band: nine in ten comparable out-of-sample cases were within ± this fraction.
    mean : float
        Their mean |relative error| (fraction).
    cases : int
        How many comparable cases the band rests on.
    """

    kind: str
    fraction: float
    mean: float
    cases: int

    @property
    def source(self) -> str:
        """Where the band comes from, in words."""
        return (
            f"±{self.fraction:.0%}: 90th percentile of the out-of-sample |error| "
            f"(leave-one-source-out and held-out runs) of {self.cases} published "
            f"{self.kind} cases (mean {self.mean:.1%}); "
            "mlsys.validation.loso, mlsys/core/catalog/data/error_bands.toml"
        )


@cache
def error_bands() -> Mapping[str, ErrorBand]:
    """Every kind's band, from ``data/error_bands.toml``.

    The file ships with mlsys and does not change while it runs, so it is read, parsed
    and checked once per process; every call returns the same read-only mapping.

    Returns
    -------
    Mapping of str to ErrorBand
        Kind of case (``"training dense, one node"``, ``"serving decode"`` ...) to its
        band, in file order.

    Raises
    ------
    CatalogError
        When a row of the shipped file is malformed (a bug in mlsys).
    """
    table = load_table(_FILE)
    return MappingProxyType({kind: _parse_band(kind, row) for kind, row in table.items()})


def _parse_band(kind: str, row: Any) -> ErrorBand:
    """One row of ``error_bands.toml`` as an :class:`ErrorBand`, checked: exactly the
    fields ``band`` and ``mean`` (finite fractions >= 0) and ``cases`` (a whole number
    >= 1)."""
    where = f"{_FILE} [{kind!r}]"
    if not isinstance(row, dict) or set(row) != set(_FIELDS):
        got = sorted(row) if isinstance(row, dict) else type(row).__name__
        raise CatalogError(f"{where}: expected the fields {', '.join(_FIELDS)}; got {got}")
    for name in ("band", "mean"):
        value = row[name]
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not (math.isfinite(value) and value >= 0)
        ):
            raise CatalogError(f"{where}: {name}={value!r}; expected a fraction >= 0")
    cases = row["cases"]
    if isinstance(cases, bool) or not isinstance(cases, int) or cases < 1:
        raise CatalogError(f"{where}: cases={cases!r}; expected a whole number >= 1")
    return ErrorBand(kind, float(row["band"]), float(row["mean"]), cases)


def error_band(
    solver: str, field: str, moe: bool = False, accelerators: float | None = None
) -> ErrorBand | None:
    """The band of one solver's field, or ``None`` where no comparable cases exist.

    Parameters
    ----------
    solver : str
        The solver's class name (``"DistributedModel"``, ``"ServingModel"``).
    field : str
        The result field (``"step_time"``, ``"itl"`` ...).
    moe : bool
        The model is a mixture of experts (training fields take the MoE cases' band).
    accelerators : float, optional
        Accelerators of the run: a dense training field takes its scale's band
        (:func:`training_kind`); without it, the band of all dense training cases.

    Returns
    -------
    ErrorBand or None
    """
    kind = FIELD_KINDS.get((solver, field))
    if kind is None:
        return None
    if kind == "training dense":
        kind = training_kind(moe, accelerators)
    bands = error_bands()
    return bands.get(kind) or bands.get("training dense" if kind.startswith("training") else "")


def result_error_band(origin: Any, solver: str, field: str) -> ErrorBand | None:
    """The band of a solved result's field: :func:`error_band` for the model and fleet the
    solve was given (a mixture of experts takes the MoE cases' band, a dense model its
    scale's).

    Parameters
    ----------
    origin : ResultOrigin or None
        The result's origin (its solver inputs); ``None`` for a result not made by a solve.
    solver : str
        The solver's class name.
    field : str
        The result field.

    Returns
    -------
    ErrorBand or None
    """
    inputs = {} if origin is None else origin.inputs
    fleet = inputs.get("fleet")
    gpus = getattr(fleet, "total_accelerators", None)
    moe = getattr(inputs.get("model"), "experts", 1) > 1
    return error_band(solver, field, moe, None if gpus is None else float(gpus))
