"""Read the book-facing data files and turn one field spec into a value and a citation.

A field of ``book_hardware.toml``, ``book_models.toml`` or ``book_systems.toml`` is one of

- ``{ref = "CONSTANT"}``: the value of :mod:`mlsys.constants` ``CONSTANT`` (the book's
  assumptions live once, in ``book_assumptions.toml``), cited by
  :func:`mlsys.constants.provenance`;
- ``"value unit"`` or a number: a value of this file, cited by the file's own
  ``provenance`` table next to it.

FLOPs, parameters and dollars come back as the book's plain counts
(:func:`mlsys.core.units.to_book_counts`): the book does count arithmetic with them.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from mlsys.core.catalog import load_table
from mlsys.core.units import Q_, to_book_counts

__all__ = ["book_table", "field_value", "field_source"]


@cache
def book_table(filename: str) -> dict[str, Any]:
    """One of the ``book_*.toml`` files, parsed once.

    Parameters
    ----------
    filename : str
        E.g. ``"book_hardware.toml"``.

    Returns
    -------
    dict
        The parsed TOML document.
    """
    return load_table(filename)


def field_value(spec: Any) -> Any:
    """The value a field spec stands for, in the book's count arithmetic.

    Parameters
    ----------
    spec : dict, str, int or float
        ``{"ref": NAME}``, ``{"value": ...}``, ``{"text": LABEL}``, a ``"value unit"``
        string or a number.

    Returns
    -------
    pint.Quantity or float or int
        A Quantity for strings with a unit (counts made dimensionless), the number for
        plain numbers, the :mod:`mlsys.constants` value for a ``ref``.
    """
    if isinstance(spec, dict):
        if "text" in spec:  # a label the book prints as it is ("A100-class")
            return str(spec["text"])
        if "ref" in spec:
            import mlsys.constants as constants

            return getattr(constants, spec["ref"])
        spec = spec["value"]
    if isinstance(spec, str):
        return to_book_counts(Q_(spec))
    return spec


def field_source(spec: Any, provenance: dict[str, Any] | None) -> dict[str, Any]:
    """Where a field's value comes from.

    Parameters
    ----------
    spec : dict, str, int or float
        The field spec (see :func:`field_value`).
    provenance : dict or None
        The file's own provenance table for this field, if any.

    Returns
    -------
    dict
        ``{"ref": NAME, **mlsys.constants.provenance(NAME)}`` for a reference, else the
        file's provenance (``kind``, ``reference``, ``url``, ``note``) or ``{}``.
    """
    if isinstance(spec, dict) and "ref" in spec:
        import mlsys.constants as constants

        return {"ref": spec["ref"], **constants.provenance(spec["ref"])}
    return dict(provenance or {})
