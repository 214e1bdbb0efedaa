"""Rules that serve the textbook's repeated name patterns without a table of names.

*Machine Learning Systems* (harvard-edge/cs249r_book) reads many figures as a field name
with a unit suffix: ``Systems.Fabrics.InfiniBand_NDR.bandwidth_gbs``, ``.latency_us``,
``Systems.Reliability.Gpu.mttf_hours``, ``Platforms.Mobile.ram_gb``. Rather than list
each, one rule answers every such name on every view of :mod:`mlsys.compat`:

    ``<field>_<unit>`` is the magnitude of ``<field>`` in ``<unit>``,

where ``<unit>`` is parsed against the mlsys pint registry (:func:`parse_unit_suffix`),
so a name the book adds later in the same pattern (``memory_mib``, ``latency_ms``,
``tdp_kw``) works with no change here.

How a suffix is read
--------------------
1. The suffix as written, if the registry knows it (``us``, ``ms``, ``hours``, ``kW``).
2. Otherwise case-insensitively: a registry prefix (``k``, ``M``, ``G``, ``Mi`` ...)
   followed by a unit name or symbol of the registry (``gb`` -> ``GB``, ``mib`` ->
   ``MiB``); a spelled-out name may be plural (``hours``), a symbol may not.
3. A mass may be a mass of emissions (``g`` -> ``gCO2e`` where the field is one).
4. A trailing ``s`` may mean "per second" (``gbs`` -> ``GB/s``, ``tflops`` ->
   ``TFLOP/s``); ``_per_`` or ``p`` between two units divides them (``gb_per_s``).
5. Of the readings, those with the dimension of the field's value are kept; exact case
   beats a case-insensitive reading; a fraction of a byte or bit is never meant
   (``mb`` is ``MB``, not a millibyte); otherwise the prefix keeps the case written
   (``mw`` is milliwatts).

The field itself is the view's attribute ``<field>``: a Quantity, or a group of values
(``memory``: capacity, bandwidth ...) of which the first with the dimension asked for is
taken, or a sibling already named with a unit (``power_kw = 70``: ``power_w`` is 70,000).

Examples
--------
>>> from mlsys.core.units import ureg
>>> from mlsys.compat.rules import parse_unit_suffix
>>> parse_unit_suffix("gbs", "byte/s") == ureg.Unit("GB/s")
True
>>> parse_unit_suffix("mib", "byte") == ureg.Unit("MiB")
True
"""

from __future__ import annotations

import itertools
from typing import Any

from mlsys.core.unit_names import (  # the unit-name rule, shared with mlsys.constants
    _acceptable,
    _token_readings,
    registry_unit,
)

__all__ = [
    "parse_unit_suffix",
    "registry_unit",
    "unit_suffix_value",
    "suffix_attribute",
    "UnitSuffixed",
]


def _registry() -> Any:
    from mlsys.core.units import get_registry

    return get_registry()


def _forms(suffix: str) -> list[list[str]]:
    """Ways to cut a suffix into numerator and denominator tokens."""
    forms = [[suffix]]
    if "_per_" in suffix:
        forms.append(suffix.split("_per_"))
    if suffix.endswith(("s", "S")) and len(suffix) > 1:
        forms.append([suffix[:-1], "s"])
    for i in range(1, len(suffix) - 1):
        if suffix[i] in "pP" and suffix[i + 1 :] in ("s", "sec", "h", "hr"):
            forms.append([suffix[:i], suffix[i + 1 :]])
    if "_" in suffix and "_per_" not in suffix:
        forms.append(suffix.split("_", 1))
    return forms


def _candidates(suffix: str) -> list[tuple[int, Any]]:
    """(rank, unit) readings of a suffix; lower rank is preferred."""
    reg = _registry()
    out: list[tuple[int, Any]] = []
    for form_rank, parts in enumerate(_forms(suffix)):
        readings = [_token_readings(p) for p in parts]
        if not all(readings):
            continue
        for combo in itertools.product(*readings):
            text = " / ".join(r[0] for r in combo)
            try:
                unit = reg.parse_units(text)
            except Exception:
                continue
            if not all(_acceptable(reg.parse_units(r[0]), r[2]) for r in combo):
                continue
            inexact = sum(not r[1] for r in combo)
            case_kept = all(
                r[1] or (r[0][:1].islower() == p[:1].islower())
                for r, p in zip(combo, parts, strict=True)
            )
            rank = inexact * 4 + (0 if case_kept else 2) + form_rank
            out.append((rank, unit))
    out.sort(key=lambda pair: pair[0])
    return out


def parse_unit_suffix(suffix: str, like: Any = None) -> Any:
    """The registry unit a name's suffix spells (``"gbs"`` -> GB/s).

    Parameters
    ----------
    suffix : str
        The text after the field name (``"gbs"``, ``"us"``, ``"hours"``, ``"mib"``).
    like : str, pint.Unit or pint.Quantity, optional
        A unit or value of the dimension wanted: readings of another dimension are
        dropped. Without it, the best-ranked reading of any dimension.

    Returns
    -------
    pint.Unit
        A unit of the mlsys registry.

    Raises
    ------
    mlsys.UnitError
        When no reading of ``suffix`` has the dimension of ``like``.

    Examples
    --------
    >>> from mlsys.core.units import ureg
    >>> parse_unit_suffix("us", "s") == ureg.Unit("microsecond")
    True
    >>> parse_unit_suffix("tflops", "1/s") == ureg.Unit("TFLOP/s")
    True
    """
    want = None if like is None else _book_dimension(like)
    for _, unit in _candidates(suffix):
        if want is None or _book_dimension(unit) == want:
            return unit
    from mlsys.core.errors import UnitError

    raise UnitError("unit suffix", suffix, str(like) if like is not None else "a unit")


def _book_dimension(like: Any) -> Any:
    """Dimension with FLOPs, parameters and dollars as counts (the book's arithmetic)."""
    from mlsys.core.units import to_book_counts

    reg = _registry()
    if isinstance(like, str) or not hasattr(like, "magnitude"):
        like = reg.Quantity(1, like)
    return to_book_counts(like).dimensionality


def _magnitude_in(quantity: Any, unit: Any) -> float:
    from mlsys.core.units import to_book_counts

    one = to_book_counts(_registry().Quantity(1.0, unit))
    return float((to_book_counts(quantity) / one).m_as(""))


def _field_quantity(obj: Any, field: str, suffix: str) -> Any:
    """The Quantity ``<field>`` stands for on ``obj``, or None."""
    value = _plain_getattr(obj, field)
    if hasattr(value, "units") and hasattr(value, "magnitude"):
        return value
    if value is not None and not isinstance(value, (int, float, str, dict, list, tuple)):
        # a group of values (``memory``): the first member of the dimension asked for
        for member in _members(value):
            if not hasattr(member, "units"):
                continue
            try:
                parse_unit_suffix(suffix, member)
            except Exception:
                continue
            return member
    return _sibling_quantity(obj, field)


def _members(group: Any) -> list[Any]:
    names = [n for n in getattr(group, "__dict__", {}) if not n.startswith("_")]
    return [getattr(group, n) for n in names]


def _sibling_quantity(obj: Any, field: str) -> Any:
    """``power_kw = 70`` on ``obj`` stands for 70 kW when ``power`` is asked for."""
    prefix = field + "_"
    for name in _attribute_names(obj):
        if not name.startswith(prefix) or name == field:
            continue
        value = _plain_getattr(obj, name)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                unit = parse_unit_suffix(name[len(prefix) :])
            except Exception:
                continue
            return _registry().Quantity(float(value), unit)
    return None


def _attribute_names(obj: Any) -> list[str]:
    try:
        return [n for n in dir(obj) if not n.startswith("_")]
    except Exception:
        return list(getattr(obj, "__dict__", {}))


def _plain_getattr(obj: Any, name: str) -> Any:
    try:
        return getattr(obj, name)
    except AttributeError:
        return None


def unit_suffix_value(obj: Any, name: str) -> float:
    """``obj.<field>`` in ``<unit>``, for a name ``<field>_<unit>``.

    Parameters
    ----------
    obj : object
        A view of :mod:`mlsys.compat` (or anything with Quantity attributes).
    name : str
        ``"bandwidth_gbs"``, ``"latency_us"``, ``"mttf_hours"`` ...

    Returns
    -------
    float
        The magnitude in the unit the suffix spells.

    Raises
    ------
    AttributeError
        When no split of ``name`` is a field of ``obj`` with a unit suffix of its
        dimension.

    Examples
    --------
    >>> from mlsys.core.units import Q_
    >>> class Link:
    ...     bandwidth = Q_(400, "Gbit/s")
    >>> unit_suffix_value(Link(), "bandwidth_gbs")
    50.0
    """
    if name.startswith("_") or "_" not in name:
        raise AttributeError(name)
    parts = name.split("_")
    for cut in range(len(parts) - 1, 0, -1):
        field, suffix = "_".join(parts[:cut]), "_".join(parts[cut:])
        quantity = _field_quantity(obj, field, suffix)
        if quantity is None:
            continue
        try:
            unit = parse_unit_suffix(suffix, quantity)
        except Exception:
            continue
        return _magnitude_in(quantity, unit)
    raise AttributeError(name)


def suffix_attribute(obj: Any, name: str, owner: str) -> float:
    """:func:`unit_suffix_value`, raising the views' AttributeError naming ``owner``.

    Parameters
    ----------
    obj : object
        The view.
    name : str
        The attribute asked for.
    owner : str
        The view's name for the message (``"Systems.Fabrics.InfiniBand_NDR"``).

    Returns
    -------
    float
        As :func:`unit_suffix_value`.

    Raises
    ------
    AttributeError
        When ``name`` is neither an attribute nor ``<field>_<unit>`` of one.
    """
    try:
        return unit_suffix_value(obj, name)
    except AttributeError:
        raise AttributeError(f"{owner} has no {name!r}") from None


class UnitSuffixed:
    """Mixin: an attribute the view lacks is tried as ``<field>_<unit>`` (the one rule).

    A class that defines its own ``__getattr__`` calls :func:`suffix_attribute` as its
    last step instead.
    """

    def __getattr__(self, item: str) -> Any:
        if item.startswith("_"):
            raise AttributeError(item)
        return suffix_attribute(self, item, f"{type(self).__name__} view")
