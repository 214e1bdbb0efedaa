"""Typed results: what every solver returns.

A result stores plain SI floats (cheap to build inside a solver that must run in tens of
microseconds) and hands out pint Quantities when a field is read, so callers see units
and solvers never build a Quantity in a hot path. When the solver recorded its inputs
(:func:`mlsys.core.provenance.record`), every number read from the result carries that
origin through arithmetic (:mod:`mlsys.core.traced`), so ``fmt(res.step_time * 1000)``
still names the solver, its inputs and their sources.

>>> class StepResult(Result):
...     _units = {"step_time": "s"}
>>> res = StepResult(step_time=1.1)
>>> res.step_time, res["step_time"]      # Quantities
(<Quantity(1.1, 'second')>, <Quantity(1.1, 'second')>)
>>> res.si("step_time")                  # the float, in the field's SI unit
1.1
>>> res.to_dict()
{'step_time': <Quantity(1.1, 'second')>}
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

from mlsys.core.deprecation import warn_renamed
from mlsys.core.provenance import ResultOrigin, span
from mlsys.core.traced import traced, traced_array, traced_magnitude
from mlsys.core.units import Q_, _unit

__all__ = ["Result"]


class Result(Mapping[str, Any]):
    """Base class of every solver result.

    Subclasses declare ``_units``: for each field, the unit its stored magnitude is in
    (``None`` for plain values such as booleans, strings, counts and fractions). Older
    field names listed in ``_aliases`` keep working and warn with the new name.

    Parameters
    ----------
    **values
        Field values: floats in the field's unit, or plain values.

    Notes
    -----
    A result is a read-only ``Mapping`` of field name to value, so ``dict(res)``,
    ``res.keys()`` and ``"step_time" in res`` all work.

    Its repr and Markdown table show every value through :func:`mlsys.core.fmt.fmt`, the
    display policy of the formatting guide ("54 d", "$1.232M/yr", "7.76/d"). A field whose
    unit is declared with a mapping value (``{"gpu": 2.5e-9, ...}``) shows each entry in
    that unit. When the solver called :func:`mlsys.core.provenance.record`, ``origin``
    says which solver made the result from which inputs, ``sources()`` lists the catalog
    entries behind it, and a field read from it carries that origin into ``fmt``.
    """

    _units: ClassVar[dict[str, str | None]] = {}
    _aliases: ClassVar[dict[str, str]] = {}
    _title: ClassVar[str] = "Result"
    __slots__ = ("_origin", "_values")

    def __init__(self, **values: Any) -> None:
        object.__setattr__(self, "_values", values)
        object.__setattr__(self, "_origin", None)

    # -- access -----------------------------------------------------------------
    def _wrap(self, name: str, value: Any) -> Any:
        unit = self._units.get(name)
        origin = self._origin
        if isinstance(value, Result):
            if origin is not None and value._origin is None:
                # A nested result (res.memory) made inside this solve: its fields name
                # this solver and field ("DistributedModel → memory.weights"). A copy,
                # since a solver's memo may share the nested object between results.
                nested = type(value).__new__(type(value))
                object.__setattr__(nested, "_values", value._values)
                object.__setattr__(nested, "_origin", origin.at(name))
                return nested
            return value
        if unit is None or value is None or isinstance(value, (bool, str)):
            # A count or a fraction read from a recorded result carries its origin
            # through arithmetic (fmt(res.mfu * 100)); strings, bools and arrays do not.
            if origin is None:
                return value
            if isinstance(value, dict):  # a record of plain values (a search's best_layout)
                return {k: _traced_item(v, origin.at(f"{name}[{k}]")) for k, v in value.items()}
            return _traced_item(value, origin.at(name))
        if isinstance(value, dict):
            if origin is None:
                return {k: Q_(v, _unit(unit)) for k, v in value.items()}
            return {
                k: Q_(traced_magnitude(_plain_number(v), (origin.at(f"{name}[{k}]"),)), _unit(unit))
                for k, v in value.items()
            }
        if origin is not None:
            if getattr(value, "ndim", 0):
                value = traced_array(value, (origin.at(name),))
            else:
                value = traced_magnitude(_plain_number(value), (origin.at(name),))
        return Q_(value, _unit(unit))

    @property
    def origin(self) -> ResultOrigin | None:
        """The solver and inputs that made this result (None if its solver does not say)."""
        return self._origin

    def sources(self) -> tuple[Any, ...]:
        """The catalog entries this result was computed from (accelerator, fabric, model ...).

        Returns
        -------
        tuple
            Catalog objects, each once; empty when the solver did not record its inputs.
            Each entry's ``provenance`` names its datasheet or paper.
        """
        return () if self._origin is None else self._origin.entries

    def _resolve(self, name: str) -> str:
        values = object.__getattribute__(self, "_values")
        if name in values:
            return name
        new = type(self)._aliases.get(name)
        if new is not None:
            cls = type(self).__name__
            warn_renamed(f"{cls}.{name}", f"{cls}.{new}", stacklevel=3)
            return new
        close = difflib.get_close_matches(name, list(values) + list(type(self)._aliases), n=3)
        hint = (" Did you mean " + ", ".join(close) + "?") if close else ""
        raise AttributeError(f"{type(self).__name__} has no field {name!r}.{hint}")

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        key = self._resolve(name)
        return self._wrap(key, object.__getattribute__(self, "_values")[key])

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __getitem__(self, name: str) -> Any:
        try:
            key = self._resolve(name)
        except AttributeError as exc:
            raise KeyError(str(exc)) from None
        return self._wrap(key, self._values[key])

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, name: object) -> bool:
        return name in self._values or name in type(self)._aliases

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._values))

    def si(self, name: str) -> Any:
        """The raw stored value of a field (a float in the field's unit).

        Parameters
        ----------
        name : str
            Field name (aliases accepted).

        Returns
        -------
        Any
            The value exactly as the solver stored it.
        """
        return self._values[self._resolve(name)]

    def unit_of(self, name: str) -> str | None:
        """The unit a field's stored value is in (``None`` for plain values).

        Parameters
        ----------
        name : str
            Field name.

        Returns
        -------
        str or None
        """
        return self._units.get(self._resolve(name))

    # -- export -----------------------------------------------------------------
    def to_dict(self, *, quantities: bool = True) -> dict[str, Any]:
        """Export the fields.

        Parameters
        ----------
        quantities : bool
            ``True`` (default): values as Quantities. ``False``: JSON-friendly values,
            each dimensional field as ``{"value": float, "unit": str}``.

        Returns
        -------
        dict
            Field name to value; nested results become nested dicts.
        """
        out: dict[str, Any] = {}
        for name, value in self._values.items():
            if isinstance(value, Result):
                out[name] = value.to_dict(quantities=quantities)
            elif quantities:
                out[name] = self._wrap(name, value)
            else:
                unit = self._units.get(name)
                if unit is not None and value is not None and not isinstance(value, (bool, str)):
                    out[name] = {"value": _plain(value), "unit": unit}
                else:
                    out[name] = _plain(value)
        return out

    def _rows(self) -> list[tuple[str, str]]:
        rows = []
        for name, value in self._values.items():
            if isinstance(value, Result):
                for sub, text in value._rows():
                    rows.append((f"{name}.{sub}", text))
                continue
            rows.append((name, _display(value, self._units.get(name))))
        return rows

    def _repr_markdown_(self) -> str:
        lines = [f"**{type(self).__name__}**", "", "| field | value |", "|---|---|"]
        origin = self._origin
        for name, text in self._rows():
            if text == "None":  # a field this solve did not compute: no row of "None"
                continue
            cell = text.replace("$", "\\$").replace("|", "\\|")
            if origin is not None and text not in ("None", "True", "False"):
                cell = span(cell, origin.at(name))  # hover a cell: solver, inputs, sources
            lines.append(f"| {name} | {cell} |")
        return "\n".join(lines)

    def __repr__(self) -> str:
        rows = self._rows()
        body = ", ".join(f"{name}={text}" for name, text in rows[:12])
        more = "" if len(rows) <= 12 else ", ..."
        return f"{type(self).__name__}({body}{more})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (type(self), dict(self._values)))


def _rebuild(cls: type[Result], values: dict[str, Any]) -> Result:
    return cls(**values)


def _plain(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _traced_item(value: Any, origin: ResultOrigin) -> Any:
    """A plain field value (count, fraction, array) carrying ``origin``; others unchanged."""
    if getattr(value, "ndim", 0):  # an array field (a scaling curve): a traced view
        return traced_array(value, (origin,))
    return traced(_plain_number(value), (origin,))


def _plain_number(value: Any) -> Any:
    """A stored value without the origins it may carry (a solver computed it from another
    result's fields): the field's own origin, this solver and its inputs, says it all."""
    plain = getattr(value, "_plain", None)
    return value if plain is None else plain()


def _display(value: Any, unit: str | None) -> str:
    """One value as the display policy writes it (mlsys.core.fmt.fmt)."""
    from mlsys.core.fmt import FormatError, fmt

    if isinstance(value, dict):
        inner = ", ".join(f"{k}: {_display(v, unit)}" for k, v in value.items())
        return "{" + inner + "}"
    if value is None or isinstance(value, (bool, str)):
        return str(value)
    try:
        return str(fmt(value if unit is None else Q_(value, _unit(unit))))
    except FormatError:  # NaN, infinity, arrays: say what it is rather than fail a repr
        return str(value) if unit is None else f"{value} {unit}"
