"""The unit a name spells: ``microsecond``, ``EFLOP``, ``MILLISECOND``, ``hours``.

The textbook *Machine Learning Systems* (harvard-edge/cs249r_book) imports units by name
(``from mlsys.constants import millisecond``) and reads figures with a unit suffix
(``latency_us``, :mod:`mlsys.compat.rules`). Both read a name against the mlsys unit
registry with one rule, kept here below both: the name as the registry writes it, else a
registry prefix and a unit name or symbol read case-insensitively, a spelled-out name
possibly plural; a fraction of a byte or a bit is never meant.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from mlsys.core.units import get_registry

__all__ = ["registry_unit"]

_SUB_UNIT_INFORMATION = ("milli", "micro", "nano", "pico", "femto", "centi", "deci")


def _registry() -> Any:
    return get_registry()


@cache
def _lower_index() -> dict[str, tuple[str, ...]]:
    """Lower-case unit name or symbol -> the registry's spellings (built once)."""
    reg = _registry()
    index: dict[str, list[str]] = {}
    for name, definition in reg._units.items():
        spellings = {name, getattr(definition, "symbol", None) or name}
        spellings.update(getattr(definition, "aliases", ()) or ())
        for spelling in spellings:
            if spelling and spelling.isidentifier():
                index.setdefault(spelling.lower(), []).append(spelling)
    return {k: tuple(dict.fromkeys(v)) for k, v in index.items()}


@cache
def _prefixes() -> tuple[tuple[str, str], ...]:
    """(spelling, prefix name) of every registry prefix, symbols and names, '' first."""
    reg = _registry()
    out = [("", "")]
    for name, definition in reg._prefixes.items():
        if not name:
            continue
        out.append((name, definition.name))
        symbol = getattr(definition, "symbol", None)
        if symbol:
            out.append((symbol, definition.name))
    return tuple(dict.fromkeys(out))


def _token_readings(token: str) -> list[tuple[str, bool, str]]:
    """Registry spellings a token may mean: (unit text, exact case?, prefix name)."""
    reg = _registry()
    readings: list[tuple[str, bool, str]] = []
    if token.isidentifier() and token in reg:
        readings.append((token, True, ""))
    if token.isidentifier() and token + "CO2e" in reg:
        # a mass of emissions: the book writes ``carbon_intensity_g_kwh`` for gCO2e/kWh
        readings.append((token + "CO2e", False, ""))
    low = token.lower()
    index = _lower_index()
    for spelling, prefix_name in _prefixes():
        if not low.startswith(spelling.lower()):
            continue
        rest = token[len(spelling) :]
        # a plural is a spelled-out name (``hours``); ``gbs`` is never "GBs" but GB/s
        plural = rest[:-1] if rest.endswith("s") and len(rest) > 3 else None
        for stem in (rest, plural):
            if not stem:
                continue
            for unit in index.get(stem.lower(), ()):
                exact = token == spelling + stem and stem == unit
                readings.append((spelling + unit, exact, prefix_name))
    return readings


def _acceptable(unit: Any, prefix_name: str) -> bool:
    # nobody means a millibyte or a microbit: a fraction of an information unit
    if prefix_name in _SUB_UNIT_INFORMATION:
        dims = unit.dimensionality
        return "[information]" not in str(dims) and "bit" not in str(dims)
    return True


def registry_unit(name: str) -> Any:
    """The registry unit a whole name spells, or None (``microsecond``, ``EFLOP``, ``KiB``).

    The rule behind the book's unit names (``from mlsys.constants import millisecond``):
    the name as the registry writes it, else a prefix and a unit of the registry read
    case-insensitively (``MILLISECOND``), a spelled-out name possibly plural
    (``EFLOPs``). No per-second or underscore reading: a constant's name is one unit.

    Parameters
    ----------
    name : str
        The name imported.

    Returns
    -------
    pint.Unit or None

    Examples
    --------
    >>> from mlsys.core.units import ureg
    >>> registry_unit("MILLISECOND") == ureg.Unit("millisecond")
    True
    >>> registry_unit("GPT3_PARAMS") is None
    True
    """
    if not name.isidentifier() or "_" in name:
        return None
    reg = _registry()
    ranked = []
    for text, exact, prefix_name in _token_readings(name):
        try:
            unit = reg.parse_units(text)
        except Exception:
            continue
        if _acceptable(unit, prefix_name):
            ranked.append((0 if exact else 1, unit))
    ranked.sort(key=lambda pair: pair[0])
    return ranked[0][1] if ranked else None
