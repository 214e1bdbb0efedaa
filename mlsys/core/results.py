"""Typed results: what every solver returns.

A result stores plain SI floats (cheap to build inside a solver that must run in tens of
microseconds) and hands out pint Quantities when a field is read, so callers see units
and solvers never build a Quantity in a hot path.

>>> res.step_time            # a Quantity, e.g. <Quantity(1.1, 'second')>
>>> res["step_time"]         # the same
>>> res.si("step_time")      # the float, in the field's SI unit
>>> res.to_dict()            # {"step_time": Quantity, ...}
"""

from __future__ import annotations

import difflib
import math
import warnings
from collections.abc import Iterator, Mapping
from typing import Any, ClassVar

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
    """

    _units: ClassVar[dict[str, str | None]] = {}
    _aliases: ClassVar[dict[str, str]] = {}
    _title: ClassVar[str] = "Result"
    __slots__ = ("_values",)

    def __init__(self, **values: Any) -> None:
        object.__setattr__(self, "_values", values)

    # -- access -----------------------------------------------------------------
    def _wrap(self, name: str, value: Any) -> Any:
        unit = self._units.get(name)
        if unit is None or value is None or isinstance(value, (bool, str, Result)):
            return value
        return Q_(value, _unit(unit))

    def _resolve(self, name: str) -> str:
        values = object.__getattribute__(self, "_values")
        if name in values:
            return name
        new = type(self)._aliases.get(name)
        if new is not None:
            warnings.warn(
                f"{type(self).__name__}.{name} is deprecated; use .{new}",
                DeprecationWarning,
                stacklevel=3,
            )
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
            rows.append((name, _display(self._wrap(name, value))))
        return rows

    def _repr_markdown_(self) -> str:
        lines = [f"**{type(self).__name__}**", "", "| field | value |", "|---|---|"]
        lines += [f"| {name} | {text} |" for name, text in self._rows()]
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


def _display(value: Any) -> str:
    if hasattr(value, "to_compact") and hasattr(value, "magnitude"):
        mag = value.magnitude
        if isinstance(mag, float) and (math.isnan(mag) or math.isinf(mag)):
            return f"{mag} {value.units:~P}"
        try:
            return f"{value.to_compact():.4g~P}"
        except Exception:
            return f"{value:~P}"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
