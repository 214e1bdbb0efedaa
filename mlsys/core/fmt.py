"""The formatting engine: numbers and Quantities rendered for the sentences of a chapter.

An author writes `` `{python} fmt(h100.memory_bandwidth)` `` in a Quarto chapter and the
reader sees "3.35 TB/s". Everything here returns a :class:`Formatted` string, which a
Quarto inline expression inserts verbatim (through ``_repr_markdown_``, so no quotes).

How a number is rendered
------------------------
* **Digits.** By default a value shows the significant digits it actually carries, once
  float noise is cleared (``3350.0000000000005`` carries 3: "3.35"), up to
  :data:`MAX_CARRIED_DIGITS` (6). A value carrying more than that is the result of
  arithmetic (1/3, a GiB in GB) and is shown to :data:`COMPUTED_DIGITS` (4). With
  ``digits=n`` the value is rounded to at most ``n`` significant digits; trailing zeros
  after the decimal point are dropped ("80 GB", never "80.0 GB").
* **Unit.** With ``unit=None`` the prefix is chosen by pint's ``to_compact`` on the
  leading unit, the rest of the unit is kept ("3.35 TB/s", "400 gCO2e/kWh"). Counting
  units (bytes, bits, FLOPs, tokens, parameters) never take sub-unit prefixes; bytes
  take SI prefixes (GB) unless ``unit`` asks for an IEC unit (GiB). Durations climb a
  ladder ns … s, min, h, d, yr (an exact duration stays in the largest of these units
  that shows it exactly: "1.5 min", but "100 s"); carbon goes g, kg, t, kt, Mt CO2e;
  money is written "$4.2M". Beyond exa (10¹⁸) the number is written in scientific
  form, "3.14 × 10²³ FLOP".
* **Plain numbers** carry thousands separators ("1,287 MWh", "16,384"); extreme ones
  (≥ 10¹⁵ or < 10⁻⁶) switch to scientific form, so "e+" never appears.

Bad input (None, NaN, infinity, a string, a boolean, an array, a unit of the wrong
dimension, ``digits`` outside 1–15) raises a :class:`FormatError`, an
:class:`mlsys.MlsysError`.
"""

from __future__ import annotations

import math
import numbers
import re
from functools import lru_cache
from typing import Any

import pint
from pint.util import UnitsContainer, infer_base_unit

from mlsys.core.checks import flag
from mlsys.core.errors import MlsysError, ParameterError, UnitError
from mlsys.core.provenance import (
    CatalogOrigin,
    DerivedOrigin,
    Origin,
    ResultOrigin,
    TextOrigin,
    origin_of,
    origins_of,
    span,
    use_value_text,
)
from mlsys.core.traced import TracedFloat, TracedInt
from mlsys.core.units import from_book_count_units, get_registry, to_book_counts

__all__ = [
    # result type and errors
    "Formatted",
    "Math",
    "FormatError",
    "FormatUnitError",
    "BookCheckError",
    # quantities
    "fmt",
    "per",
    "rng",
    # plain numbers
    "fmt_int",
    "commas",
    "count",
    "pct",
    "times",
    "multiple",
    "money",
    # scientific notation and math
    "sci",
    "latex",
    "md_math",
    # assertions the prose relies on
    "check",
    # policy constants
    "MAX_CARRIED_DIGITS",
    "COMPUTED_DIGITS",
]

MAX_CARRIED_DIGITS = 6
"""A value carrying at most this many significant digits is shown in full by default."""

COMPUTED_DIGITS = 4
"""Significant digits shown by default for a value carrying more than MAX_CARRIED_DIGITS."""

_NOISE_DIGITS = 12  # float noise of conversions and arithmetic lives beyond digit 12
_MAX_DIGITS = 15  # a double holds ~15.9 significant digits; more is noise
_SCI_HIGH = 15  # plain numbers at or above 10^15 are written in scientific form
_SCI_LOW = -7  # ... and below 10^-6
_MAX_PREFIX_POWER = 18  # exa; ZFLOP, YFLOP, RFLOP mean little to a reader: use 10^n
_EN_DASH = "\u2013"
_TIMES = "\u00d7"
_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")

# Units that count discrete things: 0.5 B is "0.5 B", never "500 mB".
_COUNTING_DIMENSIONS = frozenset(
    {"[information]", "[compute]", "[token]", "[parameter]"},
)
# Durations at or above a minute climb this ladder: (unit, seconds at which it starts).
_TIME_LADDER = (
    ("year", 365.25 * 86400.0),
    ("day", 2 * 86400.0),
    ("hour", 3600.0),
    ("minute", 60.0),
)
# Money above a million: pint's prefix -> the word-initial readers expect.
_MONEY_SCALE = {"mega": "M", "giga": "B", "tera": "T"}
# Unit symbols pint prints that read badly in prose (pint's year is the annum, "a").
_SYMBOL_FIXES = (
    (re.compile(r"(?<![\w°µ])a(?![\w])"), "yr"),
    # The guide writes carbon "t CO₂e": a space and a subscript two.
    (re.compile(r"(?<![\w])([kMGTmµ]?[gt])CO2e"), "\\1 CO₂e"),
    # Water: a kilolitre is a cubic metre; readers know m³, not kl.
    (re.compile(r"(?<![\w])l(?![\w])"), "L"),
)
# A rate of events (unit 1/s) is written per the largest period in which at least one
# happens (a failure rate of 2e-6/s is "7.2/h"), never with a prefix on the time.
_RATE_LADDER = (("s", 1.0), ("h", 3600.0), ("d", 86400.0), ("yr", 365.25 * 86400.0))
# Counts with a noun: tokens and parameters are written as words ("70 billion parameters",
# "170,000 tokens/s"); FLOPs and bytes keep SI prefixes, the convention of the field.
_WORD_NOUNS = {"[token]": ("token", "tokens"), "[parameter]": ("parameter", "parameters")}
_WORD_SCALE = ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"))
_WORD_DIGITS = 3  # a count in words shows 3 significant digits, zeros kept: "13.0 billion"
_RATE_UNITS = {"s": "second", "h": "hour", "d": "day", "yr": "year"}
_EXACT_SECONDS = 1000.0  # below this, an exact count of seconds is not turned into minutes
_WH_SECONDS = 3600.0  # joules from one watt-hour up are written in Wh, kWh, MWh, GWh


# ---------------------------------------------------------------------------------------
# Result type and errors
# ---------------------------------------------------------------------------------------


NO_BREAK_SPACE = "\u00a0"
"""What joins a number and its unit on a page (HTML, PDF): a line never ends between them."""


class Formatted(str):
    """A formatted number: a ``str`` that Quarto and Jupyter insert verbatim.

    It compares, concatenates and prints like the plain string it is. In a notebook or a
    Quarto inline expression it renders through ``_repr_markdown_`` as a Pandoc span,
    ``[3.35 TB/s]{.mlsys-num title="…"}``, whose title is the number's origin (see
    :mod:`mlsys.core.provenance`; no title when none is known); the ``mlsys`` Quarto
    extension turns the title into a hover box in HTML and drops the span elsewhere. A
    dollar sign is escaped so that "$4.2M and $1.3M" is not read as TeX math.

    Examples
    --------
    >>> s = Formatted("3.35 TB/s")
    >>> s == "3.35 TB/s"
    True
    >>> Formatted("$4.2M")._repr_markdown_()
    '[\\\\$4.2M]{.mlsys-num}'
    >>> Formatted("3.35 TB/s")._repr_markdown_()
    '[3.35\\xa0TB/s]{.mlsys-num}'
    """

    __slots__ = ()

    origin: Origin | None = None
    """Where the number came from (a catalog entry, a solver's result), if known."""

    def _repr_markdown_(self) -> str:
        # On a page the number never parts from its unit at a line end: every space of
        # one formatted value is a no-break space there ("3.35 TB/s", "1.2 to 2.4 GB").
        text = str(self).replace("$", "\\$").replace(" ", NO_BREAK_SPACE)
        origin = self.origin
        if origin is not None:
            return span(text, origin)
        # Marked even without an origin, so a rendered page can be audited for the
        # numbers that lack one (mlsys.book.numbers.html_provenance_coverage).
        return f"[{text}]{{.mlsys-num}}" if text else text


class _Sourced(Formatted):
    """A :class:`Formatted` with an origin (a subclass, so the plain one stays slot-free)."""


def _formatted(text: str, value: Any, source: Any = None, cls: type = Formatted) -> Formatted:
    """``text`` as a Formatted string carrying the origin of ``value`` (or ``source``)."""
    origin = _origin(value, source)
    if origin is None:
        return cls(text)
    out = (_SourcedMath if cls is Math else _Sourced)(text)
    out.origin = origin
    return out


_ORIGINS = (CatalogOrigin, ResultOrigin, TextOrigin, DerivedOrigin)
# Magnitudes the fast path of _coerce takes as they are (traced ones carry an origin).
_FAST_MAGNITUDES = frozenset({float, int, TracedFloat, TracedInt})


def _origin(value: Any, source: Any) -> Origin | None:
    if source is None:
        return origin_of(value)
    if isinstance(source, str):
        return TextOrigin(source)
    if isinstance(source, _ORIGINS):
        return source
    found = getattr(source, "origin", None)  # a Result (or a Formatted) that knows its own
    if isinstance(found, _ORIGINS):
        return found
    label = getattr(source, "label", None)
    if isinstance(label, str) and hasattr(source, "provenance_of"):
        return CatalogOrigin(source, "default")
    raise FormatError(
        "source", source, "None, a string, a catalog entry, a Result or an origin object"
    )


class Math(Formatted):
    """A Markdown math span such as ``$3.14 \\times 10^{23}$``, inserted unescaped.

    Examples
    --------
    >>> Math("$x^2$")._repr_markdown_()
    '$x^2$'
    """

    __slots__ = ()

    def _repr_markdown_(self) -> str:
        return str(self)


class _SourcedMath(Math):
    """A :class:`Math` span with an origin."""

    def _repr_markdown_(self) -> str:
        return span(str(self), self.origin)  # type: ignore[arg-type]


class FormatError(ParameterError):
    """A value cannot be formatted (None, NaN, infinity, a string, bad ``digits`` ...).

    A :class:`mlsys.ParameterError`, hence an :class:`mlsys.MlsysError` and a
    ``ValueError``; the message names the argument, the value and what is accepted.
    """


class FormatUnitError(FormatError, UnitError):
    """A value cannot be shown in the unit asked for (``fmt(Q_(80, "GB"), "GB/s")``).

    Also a :class:`mlsys.UnitError`. Parameters are those of :class:`FormatError`.
    """

    def __init__(self, name: str, value: Any, allowed: str, hint: str | None = None) -> None:
        self.unit = allowed
        ParameterError.__init__(self, name, value, allowed, hint)


class BookCheckError(MlsysError):
    """A fact the prose of a chapter relies on is false (raised by :func:`check`).

    Parameters
    ----------
    message : str
        The claim that failed, as the author wrote it.
    """

    def __init__(self, message: str) -> None:
        self.message = message
        super().__init__(f"Book check failed: {message}")


# ---------------------------------------------------------------------------------------
# Input coercion
# ---------------------------------------------------------------------------------------


def _check_digits(digits: Any) -> int | None:
    if digits is None:
        return None
    if isinstance(digits, bool) or not isinstance(digits, numbers.Integral):
        raise FormatError("digits", digits, f"None or an integer from 1 to {_MAX_DIGITS}")
    if not 1 <= digits <= _MAX_DIGITS:
        raise FormatError("digits", digits, f"None or an integer from 1 to {_MAX_DIGITS}")
    return int(digits)


def _scalar(magnitude: Any, name: str, original: Any) -> float:
    """A finite float from a Python, numpy or one-element-array magnitude."""
    if isinstance(magnitude, bool):
        raise FormatError(name, original, "a number or a Quantity, not a boolean")
    if isinstance(magnitude, numbers.Real):
        x = _to_float(magnitude, name, original)
    elif getattr(magnitude, "size", None) == 1 and hasattr(magnitude, "item"):
        return _scalar(magnitude.item(), name, original)
    elif isinstance(magnitude, numbers.Number) and not isinstance(magnitude, numbers.Complex):
        x = _to_float(magnitude, name, original)  # Decimal
    elif hasattr(magnitude, "size"):
        raise FormatError(
            name, original, "one number, not an array", "Format the elements one at a time."
        )
    else:
        raise FormatError(name, original, "a number or a pint Quantity")
    if math.isnan(x) or math.isinf(x):
        raise FormatError(name, original, "a finite number (not NaN or infinity)")
    return x


def _to_float(magnitude: Any, name: str, original: Any) -> float:
    """``float(magnitude)``; an integer past the float range (10**400) is a FormatError."""
    try:
        return float(magnitude)
    except OverflowError:
        raise FormatError(
            name,
            original,
            "a number within the float range (|x| < 1.8e308) for this use",
            "A whole number prints every digit through fmt(n) or fmt_int(n) without a unit.",
        ) from None


def _exact_int(value: Any) -> int | None:
    """``value`` as a Python int when it is a whole number of an exact type, else None.

    Ints, numpy integers, and a whole ``Fraction`` or ``Decimal`` are exact: their digits
    are kept as they are, at any size, never passed through a float (2**53 + 1 would
    print as ...992). Floats and booleans are not.
    """
    if type(value) is int:
        return value
    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Integral):  # numpy integers, TracedInt
        return int(value)
    if isinstance(value, numbers.Rational) and value.denominator == 1:  # Fraction
        return int(value)
    if type(value).__name__ == "Decimal" and value.is_finite() and value == int(value):
        return int(value)
    return None


def _int_text(n: int, digits: int | None, sep: str) -> str:
    """Every digit of ``n`` with separators; rounded to ``digits`` significant digits
    (with integer arithmetic) only when asked."""
    if digits is not None:
        length = len(str(abs(n)))
        if length > digits:
            n = round(n, digits - length)  # exact for ints: round(12345678, -5) = 12300000
    return ("-" if n < 0 else "") + _group(str(abs(n)), sep)


def _int_sci_text(n: int, digits: int | None) -> str:
    """Scientific notation of a whole number by integer arithmetic: any size, no float."""
    if n == 0:
        return "0"
    text = str(abs(n))
    carried = len(text.rstrip("0"))
    sig = digits or (carried if carried <= MAX_CARRIED_DIGITS else COMPUTED_DIGITS)
    rounded = str(round(abs(n), sig - len(text))) if len(text) > sig else text
    exponent = len(rounded) - 1  # 999 to 2 digits is 1000: one more place
    kept = rounded[:sig].rstrip("0") or "0"
    mantissa = kept[0] + ("." + kept[1:] if len(kept) > 1 else "")
    sign = "-" if n < 0 else ""
    return f"{sign}{mantissa} {_TIMES} 10{str(exponent).translate(_SUPERSCRIPT)}"


def _coerce(value: Any, name: str) -> tuple[float, UnitsContainer | None]:
    """Split ``value`` into a finite float and the units (``None`` for plain numbers)."""
    if type(value) is _quantity_class():  # the common case, without ABC isinstance checks
        magnitude = value._magnitude
        if type(magnitude) in _FAST_MAGNITUDES:
            x = _to_float(magnitude, name, value)
            if x - x == 0.0:  # finite (NaN and infinity give NaN)
                units = value._units
                return x, (units if units else None)
    if value is None:
        raise FormatError(name, value, "a number or a pint Quantity, not None")
    if isinstance(value, str):
        raise FormatError(
            name,
            value,
            "a number or a pint Quantity, not a string",
            "Parse text first, e.g. Q_('3.35 TB/s').",
        )
    if isinstance(value, pint.Quantity) or (
        hasattr(value, "magnitude") and hasattr(value, "units") and hasattr(value, "_units")
    ):
        registry = get_registry()
        if getattr(value, "_REGISTRY", None) is not registry:
            # A Quantity of another registry: re-read it through its string form once.
            try:
                value = registry.Quantity(value.magnitude, str(value.units))
            except Exception as exc:
                raise FormatUnitError(
                    name, value, "a Quantity whose unit the mlsys registry knows", f"{exc}."
                ) from None
        x = _scalar(value.magnitude, name, value)
        units = value._units
        return x, (units if units else None)
    return _scalar(value, name, value), None


@lru_cache(maxsize=1)
def _quantity_class() -> type:
    return get_registry().Quantity


@lru_cache(maxsize=256)
def _parse_unit(unit: str) -> UnitsContainer:
    try:
        return get_registry().Unit(unit)._units
    except Exception as exc:
        raise FormatUnitError("unit", unit, "a unit pint understands", f"{exc}.") from None


def _target(unit: Any) -> UnitsContainer:
    if isinstance(unit, str):
        return _parse_unit(unit)
    if isinstance(unit, pint.Unit):
        return _parse_unit(str(unit))
    raise FormatError("unit", unit, "None, a unit string such as 'GB/s', or a pint Unit")


@lru_cache(maxsize=1024)
def _unit_of(container: UnitsContainer) -> Any:
    """A pint Unit for a container; parsing each name registers prefixed units."""
    registry = get_registry()
    unit = registry.Unit("")
    for name, power in container.items():
        unit = unit * registry.Unit(name) ** power
    return unit


@lru_cache(maxsize=1024)
def _factor(source: UnitsContainer, target: UnitsContainer) -> float | None:
    """Multiplier from ``source`` to ``target``; None for offset units (°C ↔ K)."""
    registry = get_registry()
    try:
        one = registry.Quantity(1.0, _unit_of(source)).to(_unit_of(target)).magnitude
        zero = registry.Quantity(0.0, _unit_of(source)).to(_unit_of(target)).magnitude
    except pint.DimensionalityError:
        raise FormatUnitError(
            "unit",
            f"{_unit_of(target):~P}",
            f"a unit with the dimension of {_unit_of(source):~P}",
            f"A quantity in {_unit_of(source):~P} cannot be shown in {_unit_of(target):~P}; "
            "pick a unit of the same kind, or leave unit=None.",
        ) from None
    return float(one) if zero == 0 else None


def _convert(x: float, source: UnitsContainer, target: UnitsContainer) -> float:
    if source == target:
        return x
    factor = _factor(source, target)
    if factor is not None:
        return x * factor
    registry = get_registry()
    return float(registry.Quantity(x, _unit_of(source)).to(_unit_of(target)).magnitude)


@lru_cache(maxsize=1024)
def _pretty(container: UnitsContainer) -> str:
    text = f"{_unit_of(container):~P}"
    for pattern, replacement in _SYMBOL_FIXES:
        text = pattern.sub(replacement, text)
    return text


@lru_cache(maxsize=1024)
def _latex_unit(container: UnitsContainer) -> str:
    return f"{_unit_of(container):~L}".replace(r"\mathrm{a}", r"\mathrm{yr}")


# ---------------------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------------------


def _carried_digits(x: float) -> int:
    """Significant digits ``x`` carries once float noise is cleared."""
    if x == 0:
        return 1
    mantissa = f"{abs(x):.{_NOISE_DIGITS - 1}e}".split("e")[0]
    return max(1, len(mantissa.replace(".", "").rstrip("0")))


def _exact_digits(x: float) -> int | None:
    """Significant digits of a whole number small enough to print exactly, else None."""
    if x == int(x) and abs(x) < 10.0**_SCI_HIGH:
        return max(1, len(str(abs(int(x))).rstrip("0")))
    return None


def _sig_exact(x: float, digits: int | None) -> int:
    """As :func:`_sig`, but a whole number keeps every digit (no silent rounding)."""
    if digits is None:
        exact = _exact_digits(x)
        if exact is not None:
            return exact
    return _sig(x, digits)


def _sig(x: float, digits: int | None) -> int:
    if digits is not None:
        return digits
    carried = _carried_digits(x)
    return carried if carried <= MAX_CARRIED_DIGITS else COMPUTED_DIGITS


def _round_sig(x: float, sig: int) -> float:
    return float(f"{x:.{sig - 1}e}") if x else 0.0


def _split(x: float, sig: int) -> tuple[str, int]:
    """Significant digits of ``|x|`` rounded to ``sig`` (trailing zeros dropped), exponent."""
    mantissa, exponent = f"{abs(x):.{sig - 1}e}".split("e")
    return mantissa.replace(".", "").rstrip("0") or "0", int(exponent)


def _group(integer: str, sep: str) -> str:
    if len(integer) <= 3 or not sep:
        return integer
    head = len(integer) % 3 or 3
    parts = [integer[:head]] + [integer[i : i + 3] for i in range(head, len(integer), 3)]
    return sep.join(parts)


def _positional(x: float, sig: int, sep: str, min_decimals: int = 0) -> str:
    """``x`` rounded to ``sig`` significant digits in positional notation."""
    if x == 0:
        return "0" + ("." + "0" * min_decimals if min_decimals else "")
    digits, exponent = _split(x, sig)
    if exponent >= 0:
        integer = digits[: exponent + 1].ljust(exponent + 1, "0")
        fraction = digits[exponent + 1 :]
    else:
        integer = "0"
        fraction = "0" * (-exponent - 1) + digits
    if fraction and len(fraction) < min_decimals:
        fraction = fraction.ljust(min_decimals, "0")
    text = _group(integer, sep) + ("." + fraction if fraction else "")
    return ("-" if x < 0 else "") + text


def _sci_parts(x: float, sig: int) -> tuple[str, int]:
    """Mantissa text and exponent of ``x`` rounded to ``sig`` significant digits."""
    if x == 0:
        return "0", 0
    digits, exponent = _split(x, sig)
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return ("-" if x < 0 else "") + mantissa, exponent


def _sci_text(x: float, sig: int) -> str:
    mantissa, exponent = _sci_parts(x, sig)
    if x == 0:
        return "0"
    return f"{mantissa} {_TIMES} 10{str(exponent).translate(_SUPERSCRIPT)}"


def _number(x: float, sig: int, sep: str, min_decimals: int = 0) -> str:
    """Positional notation, or scientific for numbers too large or small to read."""
    if x != 0:
        exponent = _split(x, sig)[1]
        if exponent >= _SCI_HIGH or exponent < _SCI_LOW:
            return _sci_text(x, sig)
    return _positional(x, sig, sep, min_decimals)


# ---------------------------------------------------------------------------------------
# Choosing the display unit
# ---------------------------------------------------------------------------------------

# A plan says how to pick a display unit for a source unit (cached per unit):
#   ("plain",)                        dimensionless, no unit
#   ("ratio",)                        dimensionless ratio of units (GB/MB): a number
#   ("fixed",)                        keep the unit as given
#   ("si", base, rest, counting)      prefix on the leading unit; rest kept
#   ("time",)                         duration ladder
#   ("co2e", rest)                    g, kg, t (then kt, Mt ...) CO2e
#   ("money", rest)                   dollars


@lru_cache(maxsize=512)
def _plan(units: UnitsContainer) -> tuple[Any, ...]:
    registry = get_registry()
    items = list(units.items())
    leading = [(name, power) for name, power in items if power > 0]
    if not items:
        return ("plain",)
    if len(items) > 1 and not registry.Quantity(1.0, _unit_of(units)).dimensionality:
        return ("ratio",)  # GB/MB, FLOP/FLOP: a plain number
    if (
        not leading
        and len(items) == 1
        and items[0][1] == -1
        and set(registry.Quantity(1.0, items[0][0]).dimensionality) == {"[time]"}
    ):
        return ("rate",)
    if len(leading) != 1 or leading[0][1] != 1:
        return ("fixed",)
    name = leading[0][0]
    rest = UnitsContainer({n: p for n, p in items if n != name})
    dimensionality = registry.Quantity(1.0, name).dimensionality
    dims = set(dimensionality)
    if not dims:
        return ("fixed",)  # percent, ppm ...
    rest = _per_kwh(rest)
    if dims == {"[currency]"}:
        return ("money", rest)
    if dims == {"[co2e]"}:
        return ("co2e", rest)
    if len(dims) == 1 and next(iter(dims)) in _WORD_NOUNS and all(p < 0 for _, p in rest.items()):
        base = infer_base_unit(registry.Quantity(1.0, name), registry=registry)
        return ("words", next(iter(base)), rest, _WORD_NOUNS[next(iter(dims))])
    if dimensionality == registry.Quantity(1.0, "liter").dimensionality and not rest:
        return ("water",)
    if registry.Quantity(0.0, name).to_base_units().magnitude != 0:
        return ("fixed",)  # °C, °F: prefixes on offset units mean nothing
    if dims == {"[time]"} and not rest:
        return ("time",)
    base = infer_base_unit(registry.Quantity(1.0, name), registry=registry)
    if len(base) != 1:
        return ("fixed",)
    (base_name,) = tuple(base)
    counting = len(dims) == 1 and next(iter(dims)) in _COUNTING_DIMENSIONS
    return ("si", base_name, rest, counting)


@lru_cache(maxsize=256)
def _per_time_only(rest: UnitsContainer) -> bool:
    """Nothing, or only a time in the denominator (energy per year reads MWh/yr)."""
    registry = get_registry()
    return all(
        p < 0 and set(registry.Quantity(1.0, n).dimensionality) == {"[time]"}
        for n, p in rest.items()
    )


def _per_kwh(rest: UnitsContainer) -> UnitsContainer:
    """Per-energy denominators read per kWh: "$0.08/kWh", "385 g CO₂e/kWh"."""
    registry = get_registry()
    energy = registry.Quantity(1.0, "J").dimensionality
    out = {}
    for n, p in rest.items():
        if p == -1 and registry.Quantity(1.0, n).dimensionality == energy:
            n = "kilowatt_hour"
        out[n] = p
    return UnitsContainer(out)


@lru_cache(maxsize=1024)
def _compact(base_name: str, power: int) -> tuple[str, UnitsContainer]:
    """pint's choice of prefixed unit for a magnitude ``10**power`` of ``base_name``."""
    compact = get_registry().Quantity(10.0**power, base_name).to_compact()
    (name,) = tuple(compact._units)
    return name, compact._units


@lru_cache(maxsize=1024)
def _with(rest: UnitsContainer, name: str) -> UnitsContainer:
    return UnitsContainer({name: 1, **dict(rest.items())})


def _prefixed(
    x_base: float,
    base_name: str,
    rest: UnitsContainer,
    sig: int,
    *,
    lowest: int | None,
    highest: int | None,
) -> tuple[float, UnitsContainer, bool]:
    """Display value and unit for ``x_base`` (in base * rest) with an SI prefix.

    Rounds first, so 999.96 GB at 3 digits is "1 TB", not "1000 GB". Returns the value,
    its unit and whether the prefix would pass exa (then write 10^n instead).
    """
    rounded = _round_sig(x_base, sig)
    if rounded == 0:
        return 0.0, _with(rest, base_name), False
    # pint's to_compact picks the prefix; its choice depends only on which power of 1000
    # the magnitude falls in, so that power is the cache key of _compact.
    power = math.floor(math.log10(abs(rounded)) / 3) * 3
    if lowest is not None:
        power = max(power, lowest)
    if highest is not None:
        power = min(power, highest)
    if power > _MAX_PREFIX_POWER:
        return rounded, _with(rest, base_name), True
    name, _ = _compact(base_name, power)
    source = _with(rest, base_name)
    target = _with(rest, name)
    return _convert(rounded, source, target), target, False


def _choose(
    x: float, units: UnitsContainer | None, digits: int | None
) -> tuple[float, UnitsContainer | None, int, str]:
    """Pick the display unit: (value, unit, significant digits, kind).

    ``kind`` is "plain", "unit", "sci" (write 10^n with the unit) or "money".
    """
    if units is None:
        return x, None, _sig_exact(x, digits), "plain"
    plan = _plan(units)
    kind = plan[0]
    if kind == "plain":
        return x, None, _sig_exact(x, digits), "plain"
    if kind == "ratio":
        value = _convert(x, units, UnitsContainer())
        return value, None, _sig_exact(value, digits), "plain"
    if kind == "fixed":
        return x, units, _sig_exact(x, digits), "unit"
    if kind == "money":
        rest = plan[1]
        value = _convert(x, units, _with(rest, "US_dollar"))
        return value, rest, _sig(value, digits), "money"
    if kind == "words":
        _, base_name, rest, _nouns = plan
        value = _convert(x, units, _with(rest, base_name))
        return value, rest, _sig_exact(value, digits), "words"
    if kind == "rate":
        per_second = _convert(x, units, UnitsContainer({"second": -1}))
        symbol, seconds = next(
            ((name, period) for name, period in _RATE_LADDER if abs(per_second) * period >= 1.0),
            _RATE_LADDER[-1],
        )
        value = per_second * seconds
        return value, UnitsContainer({_RATE_UNITS[symbol]: -1}), _sig(value, digits), "unit"
    if kind == "water":
        litres = _convert(x, units, UnitsContainer({"liter": 1}))
        sig = _sig(litres, digits)
        if abs(_round_sig(litres, sig)) >= 1000.0:
            cubic = UnitsContainer({"meter": 3})
            return _convert(litres, UnitsContainer({"liter": 1}), cubic), cubic, sig, "unit"
        value, target, _ = _prefixed(litres, "liter", UnitsContainer(), sig, lowest=-3, highest=0)
        return value, target, sig, "unit"
    if kind == "si":
        _, base_name, rest, counting = plan
        x_base = _convert(x, units, _with(rest, base_name))
        if base_name == "joule" and abs(x_base) >= _WH_SECONDS and _per_time_only(rest):
            base_name = "watt_hour"  # energy from 1 Wh up: Wh, kWh, MWh, GWh
            x_base = _convert(x, units, _with(rest, base_name))
        sig = _sig(x_base, digits)
        value, target, beyond = _prefixed(
            x_base, base_name, rest, sig, lowest=0 if counting else None, highest=None
        )
        return value, target, sig, ("sci" if beyond else "unit")
    if kind == "time":
        seconds = _convert(x, units, UnitsContainer({"second": 1}))
        sig = _sig(seconds, digits)
        rounded = abs(_round_sig(seconds, sig))
        if rounded < 60.0:
            value, target, _ = _prefixed(
                seconds, "second", UnitsContainer(), sig, lowest=None, highest=0
            )
            return value, target, sig, "unit"
        second = UnitsContainer({"second": 1})
        # A short exact duration stays exact (100 s, not 1.667 min); longer ones climb.
        exact = (
            digits is None
            and _carried_digits(seconds) <= MAX_CARRIED_DIGITS
            and abs(seconds) < _EXACT_SECONDS
        )
        for name, start in _TIME_LADDER:
            if rounded < start:
                continue
            target = UnitsContainer({name: 1})
            value = _convert(seconds, second, target)
            # An exact duration stays exact: 100 s is "100 s", not "1.667 min".
            if not exact or _carried_digits(value) <= MAX_CARRIED_DIGITS:
                return value, target, _sig(value, digits), "unit"
        return seconds, second, sig, "unit"
    # kind == "co2e"
    rest = plan[1]
    grams = _convert(x, units, _with(rest, "gram_CO2e"))
    sig = _sig(grams, digits)
    if abs(_round_sig(grams, sig)) >= 1e6:
        tonnes = _convert(grams, _with(rest, "gram_CO2e"), _with(rest, "tonne_CO2e"))
        value, target, beyond = _prefixed(tonnes, "tonne_CO2e", rest, sig, lowest=0, highest=None)
        return value, target, sig, ("sci" if beyond else "unit")
    value, target, _ = _prefixed(grams, "gram_CO2e", rest, sig, lowest=None, highest=3)
    return value, target, sig, "unit"


def _join(number: str, units: UnitsContainer | None, space: str) -> str:
    if units is None:
        return number
    symbol = _pretty(units)
    if not symbol:
        return number
    if symbol.startswith("1/"):
        return number + symbol[1:]  # a rate: "7.2/h", never "7.2 1/h"
    return number + ("" if symbol == "%" else space) + symbol


def _words(
    value: float,
    sig: int,
    digits: int | None,
    nouns: tuple[str, str],
    rest: UnitsContainer,
    sep: str,
    space: str,
) -> str:
    """A count of tokens or parameters in words: "170,000 tokens/s", "13.0 billion"."""
    magnitude = abs(value)
    for scale, word in _WORD_SCALE:
        if magnitude >= scale:
            wsig = digits or min(_carried_digits(value / scale), _WORD_DIGITS)
            if digits is None and _carried_digits(value / scale) > _WORD_DIGITS:
                wsig = _WORD_DIGITS  # rounded: keep the zeros so it looks rounded
                scaled = _round_sig(value / scale, wsig)
                decimals = max(0, wsig - 1 - math.floor(math.log10(abs(scaled))))
                number = f"{scaled:,.{decimals}f}".replace(",", sep)
            else:
                number = _positional(value / scale, wsig, sep)
            number += f" {word}"
            break
    else:
        number = _number(value, sig, sep)
    noun = nouns[0] if value == 1 else nouns[1]
    return f"{number}{space}{noun}{_per_text(rest)}"


def _per_text(rest: UnitsContainer | None) -> str:
    """What money is per: "/h" for USD/h, "/kWh" for USD/kWh."""
    if not rest:
        return ""
    if all(power < 0 for _, power in rest.items()):
        return "/" + _pretty(UnitsContainer({n: -p for n, p in rest.items()}))
    return "·" + _pretty(rest)


def _money_number(x: float, digits: int | None, sep: str, compact: bool = True) -> str:
    """Dollars: "$4.2M", "$1,250", "$1,250.46", "$2.149", "$2.50", "$0.0042"."""
    sign = "-" if x < 0 else ""
    sig = _sig(x, digits)
    if digits is None and 1.0 <= abs(x) < 1e6 and _carried_digits(x) > MAX_CARRIED_DIGITS:
        # A long amount of dollars keeps every dollar digit and is rounded to the cent.
        cents = round(abs(x) * 100.0)
        sig = len(str(cents).rstrip("0")) or 1
    rounded = abs(_round_sig(x, sig))
    if rounded >= 1e6 and compact:
        power = min(math.floor(math.log10(rounded) / 3) * 3, 12)
        name, _ = _compact("US_dollar", power)
        prefix = name[: -len("US_dollar")]
        scaled = _convert(rounded, UnitsContainer({"US_dollar": 1}), UnitsContainer({name: 1}))
        return f"{sign}${_positional(scaled, sig, sep)}{_MONEY_SCALE[prefix]}"
    if rounded == 0:
        return "$0"
    text = _number(rounded, sig, sep)
    # Cents come in pairs: "$2.50", not "$2.5" (unless the author asked for fewer digits).
    if digits is None and "." in text and len(text.split(".")[1]) == 1:
        text += "0"
    return f"{sign}${text}"


@lru_cache(maxsize=4096)  # pure: a chapter formats the same catalog value again and again
def _render(
    x: float, units: UnitsContainer | None, digits: int | None, sep: str, space: str
) -> str:
    value, target, sig, kind = _choose(x, units, digits)
    if kind == "words":
        nouns = _plan(units)[3]  # type: ignore[arg-type]
        return _words(value, sig, digits, nouns, target or UnitsContainer(), sep, space)
    if kind == "money":
        text = _money_number(value, digits, sep)
        return text + _per_text(target)
    if kind == "sci":
        return _sci_text(value, sig) + space + _pretty(target)
    return _join(_number(value, sig, sep), target, space)


# ---------------------------------------------------------------------------------------
# Public functions
# ---------------------------------------------------------------------------------------


def fmt(
    quantity: Any,
    unit: str | pint.Unit | None = None,
    digits: int | None = None,
    *,
    sep: str = ",",
    space: str = " ",
    suffix: str | None = None,
    precision: int | None = None,
    commas: bool | None = None,
    prefix: str | None = None,
    allow_zero: bool | None = None,
    source: Any = None,
    band: bool = False,
) -> Formatted:
    """Render a number or Quantity for a sentence: ``fmt(h100.memory_bandwidth)``.

    Parameters
    ----------
    quantity : pint.Quantity, float or int
        The value. A plain number is taken to be in ``unit`` (dimensionless when ``unit``
        is None). Quantities of another pint registry work if the mlsys registry knows
        their unit. A whole number of an exact type (``int``, a numpy integer) prints
        every digit at any size, by integer arithmetic: ``fmt(10**15 + 1)`` is
        "1,000,000,000,000,001" (a float past 10¹⁵ is written in scientific form).
    unit : str or pint.Unit, optional
        Show the value in exactly this unit (``"GB/s"``, ``"GiB"``, ``"MWh"``). When None
        the SI prefix is chosen by pint's ``to_compact`` (bytes in SI, GB), durations
        climb s → min → h → d → yr, carbon g → kg → t CO2e, dollars read "$4.2M".
    digits : int, optional
        At most this many significant digits (1–15); trailing zeros are dropped. When
        None, the digits the value carries (up to 6), or 4 for a value carrying more.
    sep : str, default ","
        Thousands separator of the integer part ("" for none, "\\u202f" for a thin space).
    space : str, default " "
        Between number and unit; "\\u00a0" (no-break space) keeps them on one line.
    suffix : str, optional
        Words appended after a space, e.g. ``suffix="per GPU"``.
    precision : int, optional
        Decimal places (book contract). Giving any of ``precision``, ``commas``,
        ``prefix`` or ``allow_zero`` selects the book's older ``fmt`` contract, served by
        :func:`mlsys.core.fmt_book.book_fmt` (defaults precision=1, commas=True,
        allow_zero=False for the ones not given).
    commas : bool, optional
        Thousands separators (book contract).
    prefix : str, optional
        Text put before the number, e.g. "~" (book contract).
    allow_zero : bool, optional
        Accept a value that rounds to zero (book contract); otherwise an error.
    source : str, catalog entry or Result, optional
        Where the value came from, for the hover text in HTML, when it cannot be
        found by itself (a value computed in the chapter). A catalog Quantity or a
        result's field read just before carries its own origin (see
        :mod:`mlsys.core.provenance`).
    band : bool, default False
        Append the expected-error band of a solver's prediction, "12.7 s (±12%)": the
        out-of-sample error of comparable published cases (the value must be a field of
        a solver result that has one, e.g. ``res.step_time``, ``res.itl``; see
        :mod:`mlsys.core.catalog.bands`).

    Returns
    -------
    Formatted
        A ``str`` such as ``"3.35 TB/s"``.

    Raises
    ------
    FormatError
        For None, NaN, infinity, a string, a boolean, an array or bad ``digits``.
    FormatUnitError
        When ``unit`` has another dimension than the quantity, or is unknown.

    Examples
    --------
    >>> from mlsys import Q_
    >>> fmt(Q_(3.35e12, "B/s"))
    '3.35 TB/s'
    >>> fmt(Q_(80e9, "B")), fmt(Q_(80e9, "B"), "GiB")
    ('80 GB', '74.51 GiB')
    >>> fmt(Q_(989.4e12, "FLOP/s"))
    '989.4 TFLOP/s'
    >>> fmt(Q_(3.35, "TB/s"), digits=2)
    '3.4 TB/s'
    >>> fmt(1.287e9, "Wh"), fmt(Q_(1.287, "GWh"), "MWh")
    ('1,287,000,000 Wh', '1,287 MWh')
    >>> fmt(Q_(1.9, "GB"), suffix="per GPU")
    '1.9 GB per GPU'
    """
    if precision is not None or commas is not None or prefix is not None or allow_zero is not None:
        return book_fmt(
            quantity,
            unit,
            precision=1 if precision is None else precision,
            commas=True if commas is None else commas,
            suffix=suffix,
            prefix=prefix,
            allow_zero=False if allow_zero is None else allow_zero,
        )
    digits = _check_digits(digits)
    whole = _exact_int(quantity) if unit is None else None
    if whole is not None:  # every digit, at any size, by integer arithmetic
        text = _int_text(whole, digits, sep)
    elif unit is None:
        x, units = _coerce(quantity, "quantity")
        if units is not None:  # the book's counts print as mlsys's FLOPs, parameters, ...
            units = from_book_count_units(units)
        text = _render(x, units, digits, sep, space)
    else:
        x, units = _coerce(quantity, "quantity")
        target = _target(unit)
        if target:  # the book's counts are mlsys's FLOPs, parameters, ... by another name
            target = from_book_count_units(target)
        if units is not None:
            x = _convert(x, from_book_count_units(units), target)
        plan = _plan(target) if target else ("plain",)
        if plan[0] == "money":
            dollars = _convert(x, target, _with(plan[1], "US_dollar"))
            text = _money_number(dollars, digits, sep, compact=False) + _per_text(plan[1])
        elif plan[0] == "words" and target.get(plan[1]) == 1:
            # Exactly tokens or parameters, asked for by name: every digit, and the noun
            # in words as everywhere else ("38,336 tokens/s", never "token/s" or "param").
            singular, plural = plan[3]
            noun = singular if x == 1 else plural
            text = f"{_positional(x, _sig_exact(x, digits), sep)}{space}{noun}{_per_text(plan[2])}"
        else:
            sig = _sig_exact(x, digits)
            exponent = _split(x, sig)[1] if x else 0
            if exponent >= _SCI_HIGH or exponent < _SCI_LOW:
                text = _sci_text(x, sig) + (space + _pretty(target) if target else "")
            else:
                text = _join(_positional(x, sig, sep), target or None, space)
    if band:
        text = f"{text} (±{_error_band(quantity).fraction:.0%})"
    if suffix:
        text = f"{text} {suffix}"
    return _formatted(text, quantity, source)


def _error_band(quantity: Any) -> Any:
    """The expected-error band of a value read from a solver result's field
    (:mod:`mlsys.core.catalog.bands`); a ParameterError for any other value."""
    from mlsys.core.catalog.bands import FIELD_KINDS, error_band

    for origin in origins_of(quantity):
        solver, field = getattr(origin, "solver", None), getattr(origin, "field", None)
        if solver is None or field is None:
            continue
        model = origin.inputs.get("model")
        found = error_band(solver, field, getattr(model, "experts", 1) > 1)
        if found is not None:
            return found
    fields = ", ".join(f"{s}.{f}" for s, f in FIELD_KINDS)
    raise ParameterError("band", True, f"a value read from a result field with a band ({fields})")


def _reader_text(value: Any) -> str:
    return str(fmt(value))


use_value_text(_reader_text)  # a solver's inputs in its results' origins read as fmt writes


def per(
    quantity: Any,
    what: str,
    unit: str | pint.Unit | None = None,
    digits: int | None = None,
) -> Formatted:
    """A quantity per something, in words: "1.9 GB per GPU".

    Parameters
    ----------
    quantity : pint.Quantity or float
        The value, as for :func:`fmt`.
    what : str
        What it is per ("GPU", "token", "step").
    unit : str, optional
        Display unit, as for :func:`fmt`.
    digits : int, optional
        Significant digits, as for :func:`fmt`.

    Returns
    -------
    Formatted

    Examples
    --------
    >>> from mlsys import Q_
    >>> per(Q_(1.9e9, "B"), "GPU")
    '1.9 GB per GPU'
    """
    if not isinstance(what, str) or not what:
        raise FormatError("what", what, "a non-empty string such as 'GPU'")
    return fmt(quantity, unit, digits, suffix=f"per {what}")


def rng(
    low: Any,
    high: Any,
    unit: str | pint.Unit | None = None,
    digits: int | None = None,
    *,
    sep: str = ",",
    space: str = " ",
) -> Formatted:
    """A range sharing one unit and prefix: "1.9–2.4 GB".

    The unit is chosen for the larger end (as :func:`fmt` would) and the smaller end is
    shown in the same unit. Ends are joined with an en dash.

    Parameters
    ----------
    low, high : pint.Quantity or float
        The two ends, of the same dimension; ``low <= high``. Plain numbers are taken to
        be in ``unit``.
    unit : str or pint.Unit, optional
        Display unit; chosen automatically when None.
    digits : int, optional
        Significant digits of each end, as for :func:`fmt`.
    sep : str
        Thousands separator of the integer part ("" for none). As for :func:`fmt`.
    space : str
        Between number and unit. As for :func:`fmt`.

    Returns
    -------
    Formatted

    Raises
    ------
    FormatError
        When ``low > high`` or either end is not a finite number.
    FormatUnitError
        When the ends have different dimensions.

    Examples
    --------
    >>> from mlsys import Q_
    >>> rng(Q_(1.9e9, "B"), Q_(2.4e9, "B"))
    '1.9–2.4 GB'
    >>> rng(Q_(0.5e9, "B"), Q_(2.4e9, "B")), rng(0.5, 2.4, "GB")
    ('0.5–2.4 GB', '0.5–2.4 GB')
    >>> rng(3, 5)
    '3–5'
    """
    digits = _check_digits(digits)
    lo, lo_units = _coerce(low, "low")
    hi, hi_units = _coerce(high, "high")
    if unit is not None:
        target = _target(unit)
        lo_units = lo_units if lo_units is not None else target
        hi_units = hi_units if hi_units is not None else target
    if (lo_units is None) != (hi_units is None):
        raise FormatUnitError(
            "low", low, "two Quantities, or two numbers with unit= given", "Give both ends a unit."
        )
    if lo_units is not None and hi_units is not None:
        lo = _convert(lo, lo_units, hi_units)  # also checks the dimensions agree
    if lo > hi:
        raise FormatError("low", low, f"a value no larger than high={high!r}")
    if unit is not None:
        target: UnitsContainer | None = _target(unit) or None
        kind = "money" if target is not None and _plan(target)[0] == "money" else "unit"
    else:
        big = hi if abs(hi) >= abs(lo) else lo
        if hi_units is not None and _plan(hi_units)[0] == "time":
            # Durations share the unit of the shorter end: "5–100 s", not "0.08333–1.667 min".
            big = min((v for v in (lo, hi) if v), key=abs, default=hi)
        _, target, _, kind = _choose(big, hi_units, digits)
    if kind == "money":
        rest = _plan(target)[1] if unit is not None else target
        dollars = (_convert(v, hi_units, _with(rest, "US_dollar")) for v in (lo, hi))
        per_unit = _per_text(rest)
        ends = [_money_number(v, digits, sep, compact=unit is None) + per_unit for v in dollars]
        return _formatted(_EN_DASH.join(ends), None, _range_origin(low, high))
    if hi_units is not None:
        lo, hi = (_convert(v, hi_units, target or UnitsContainer()) for v in (lo, hi))
    ends = [_number(v, _sig(v, digits), sep) for v in (lo, hi)]
    return _formatted(_join(_EN_DASH.join(ends), target, space), None, _range_origin(low, high))


def _range_origin(low: Any, high: Any) -> Origin | None:
    """Both ends' origins (one origin when they share it, none when neither has one)."""
    found = origins_of(low) + tuple(o for o in origins_of(high) if o not in origins_of(low))
    if not found:
        return None
    return found[0] if len(found) == 1 else DerivedOrigin(found)


def fmt_int(
    value: Any, unit: str | pint.Unit | None = None, *, sep: str = ",", space: str = " "
) -> Formatted:
    """A whole number with thousands separators: "16,384".

    Every digit is printed. A value that is not whole (beyond float noise of one part in
    10¹²) is refused rather than silently rounded: round it first (``round(x)``) or use
    :func:`fmt`. A Quantity keeps its unit (no prefix is chosen) unless ``unit`` is given.

    Parameters
    ----------
    value : int, float or pint.Quantity
        The count.
    unit : str or pint.Unit, optional
        Display unit for a Quantity (or the unit a plain number is in).
    sep : str
        Thousands separator of the integer part ("" for none). As for :func:`fmt`.
    space : str
        Between number and unit. As for :func:`fmt`.

    Returns
    -------
    Formatted

    Examples
    --------
    >>> fmt_int(16384)
    '16,384'
    >>> from mlsys import Q_
    >>> fmt_int(Q_(2048, "token"))
    '2,048 token'
    >>> commas(1234567.0)
    '1,234,567'
    """
    exact = _exact_int(getattr(value, "magnitude", value)) if unit is None else None
    if exact is not None:  # every digit of an int, never through a float
        units = value._units if hasattr(value, "_units") else None
        return _formatted(_join(_int_text(exact, None, sep), units or None, space), value)
    x, units = _coerce(value, "value")
    target = units
    if unit is not None:
        target = _target(unit)
        if units is not None:
            x = _convert(x, units, target)
    n = round(x)
    if abs(x - n) > 1e-12 * max(1.0, abs(x)):
        raise FormatError(
            "value",
            value,
            "a whole number",
            f"It would be shown as {n:,}, hiding the fraction: write round(x) to mean "
            "that, or use fmt(x) to keep the digits.",
        )
    text = ("-" if n < 0 else "") + _group(str(abs(n)), sep)
    return _formatted(_join(text, target or None, space), value)


commas = fmt_int
"""Same as :func:`fmt_int`."""


def count(
    value: Any, noun: str | None = None, digits: int | None = None, *, source: Any = None
) -> Formatted:
    """A large count the way ML papers write it: "175B", "1.4T", "6.7M", "16,384".

    Below a million the count is written in full with separators; from a million up
    the scale is M (million), B (billion) or T (trillion), chosen by pint's prefix logic.

    Parameters
    ----------
    value : float, int or pint.Quantity
        A count; a Quantity of tokens or parameters ("Gparam") is converted to a number.
    noun : str, optional
        Appended after a space: ``count(175e9, "parameters")`` → "175B parameters".
    digits : int, optional
        Significant digits, as for :func:`fmt`.
    source : str, catalog entry or Result, optional
        Where the value came from, for the hover text in HTML, when it does not carry
        its own origin (as for :func:`fmt`).

    Returns
    -------
    Formatted

    Examples
    --------
    >>> count(175e9, "parameters")
    '175B parameters'
    >>> count(1.4e12), count(6.74e6), count(16384)
    ('1.4T', '6.74M', '16,384')
    """
    digits = _check_digits(digits)
    x, units = _coerce(value, "value")
    if units is not None:
        plan = _plan(units)
        base = plan[1] if plan[0] == "words" and not plan[2] else None
        if base is None and plan[0] not in ("plain", "ratio"):
            raise FormatUnitError(
                "value",
                value,
                "a count: a number, or a Quantity of tokens or parameters",
                f"{_pretty(units)} is not a count; use fmt() for it.",
            )
        if base is not None:
            x = _convert(x, units, UnitsContainer({base: 1}))
        else:
            x = _convert(x, units, UnitsContainer())
    sig = _sig(x, digits)
    rounded = _round_sig(x, sig)
    if abs(rounded) >= 1e6:
        power = min(math.floor(math.log10(abs(rounded)) / 3) * 3, 12)
        name, _ = _compact("US_dollar", power)  # any unit: only pint's prefix is wanted
        prefix = name[: -len("US_dollar")]
        scaled = _convert(rounded, UnitsContainer({"US_dollar": 1}), UnitsContainer({name: 1}))
        text = _positional(scaled, sig, ",") + _MONEY_SCALE[prefix]
    else:
        text = _positional(rounded, sig, ",")
    return _formatted(f"{text} {noun}" if noun else text, value, source)


def pct(fraction: Any, digits: int | None = None, *, source: Any = None) -> Formatted:
    """A fraction as a percentage: ``pct(0.419)`` → "41.9%".

    Parameters
    ----------
    fraction : float or pint.Quantity
        A fraction (0.419 for 41.9 %), or a dimensionless Quantity (``Q_(41.9, "%")``).
    digits : int, optional
        Significant digits of the percentage, as for :func:`fmt`.
    source : str, catalog entry or Result, optional
        Where the value came from, for the hover text in HTML, when it does not carry
        its own origin (as for :func:`fmt`).

    Returns
    -------
    Formatted

    Examples
    --------
    >>> pct(0.419), pct(0.419, digits=2), pct(1.0), pct(0.0005)
    ('41.9%', '42%', '100%', '0.05%')
    """
    digits = _check_digits(digits)
    x, units = _coerce(fraction, "fraction")
    if units is not None:
        if _plan(units)[0] not in ("plain", "ratio") and units != _parse_unit("percent"):
            raise FormatUnitError(
                "fraction",
                fraction,
                "a fraction: a number or a dimensionless Quantity",
                f"{_pretty(units)} is not a fraction; divide by a total of the same unit.",
            )
        x = _convert(x, units, UnitsContainer())
    value = x * 100.0
    return _formatted(_number(value, _sig(value, digits), ",") + "%", fraction, source)


def times(factor: Any, digits: int | None = None, *, source: Any = None) -> Formatted:
    """A ratio as a multiple: ``times(3.2)`` → "3.2×".

    Parameters
    ----------
    factor : float or pint.Quantity
        The ratio (dimensionless).
    digits : int, optional
        Significant digits, as for :func:`fmt`.
    source : str, catalog entry or Result, optional
        Where the value came from, for the hover text in HTML, when it does not carry
        its own origin (as for :func:`fmt`).

    Returns
    -------
    Formatted

    Examples
    --------
    >>> times(3.2), times(1000), times(2 / 3, digits=2)
    ('3.2×', '1,000×', '0.67×')
    """
    digits = _check_digits(digits)
    x, units = _coerce(factor, "factor")
    if units is not None:
        x = _convert(x, units, UnitsContainer())
    return _formatted(_number(x, _sig(x, digits), ",") + _TIMES, factor, source)


multiple = times
"""Same as :func:`times`."""


def money(amount: Any, digits: int | None = None, *, source: Any = None) -> Formatted:
    """US dollars for prose: "$4.2M", "$1,250", "$2.50", "$0.42".

    From a million up the amount is scaled to M, B (billion) or T (trillion); below, it is
    written in full with separators. Cents show at least two decimals ("$2.50"); an
    amount carrying more than six digits is rounded to the cent ("$1,250.46"), a shorter
    one keeps its digits ("$2.149"). A Quantity per something reads "$2.50/h".

    Parameters
    ----------
    amount : float or pint.Quantity
        Dollars (a plain number) or a Quantity in a currency unit (``USD``, ``USD/h``).
    digits : int, optional
        Significant digits, as for :func:`fmt`.
    source : str, catalog entry or Result, optional
        Where the value came from, for the hover text in HTML, when it does not carry
        its own origin (as for :func:`fmt`).

    Returns
    -------
    Formatted

    Raises
    ------
    FormatUnitError
        When a Quantity is not money.

    Examples
    --------
    >>> money(4.2e6), money(1250), money(0.42), money(2.5)
    ('$4.2M', '$1,250', '$0.42', '$2.50')
    >>> from mlsys import Q_
    >>> money(Q_(1.234e9, "USD"), digits=2), money(Q_(2.5, "USD/hour"))
    ('$1.2B', '$2.50/h')
    """
    digits = _check_digits(digits)
    x, units = _coerce(amount, "amount")
    if units is None:
        return _formatted(_money_number(x, digits, ","), amount, source)
    plan = _plan(units)
    if plan[0] != "money":
        raise FormatUnitError("amount", amount, "a number of dollars or a Quantity in USD")
    return _formatted(_render(x, units, digits, ",", " "), amount, source)


def sci(value: Any, digits: int | None = None, unit: str | pint.Unit | None = None) -> Formatted:
    """Scientific notation for prose: ``sci(3.14e23)`` → "3.14 × 10²³".

    Parameters
    ----------
    value : float or pint.Quantity
        The number. A Quantity keeps its own unit (no prefix) unless ``unit`` is given,
        and the unit follows the number: "3.14 × 10²³ FLOP".
    digits : int, optional
        Significant digits of the mantissa, as for :func:`fmt`.
    unit : str or pint.Unit, optional
        Display unit.

    Returns
    -------
    Formatted

    Examples
    --------
    >>> sci(3.14e23), sci(3.14159e23, digits=3), sci(0.00012)
    ('3.14 × 10²³', '3.14 × 10²³', '1.2 × 10⁻⁴')
    >>> from mlsys import Q_
    >>> sci(Q_(3.14e23, "FLOP"))
    '3.14 × 10²³ FLOP'
    """
    digits = _check_digits(digits)
    whole = _exact_int(value) if unit is None else None
    if whole is not None and abs(whole) >= 10**15:  # past a float's exact digits
        return _formatted(_int_sci_text(whole, digits), value)
    x, target = _in_unit(value, unit)
    text = _sci_text(x, _sig(x, digits))
    return _formatted(text + (" " + _pretty(target) if target else ""), value)


def latex(value: Any, digits: int | None = None, unit: str | pint.Unit | None = None) -> Formatted:
    """Scientific notation as LaTeX, for use inside math: "3.14 \\\\times 10^{23}".

    Parameters
    ----------
    value : float or pint.Quantity
        The number; a Quantity's unit is appended in LaTeX (pint's ``~L`` format).
    digits : int, optional
        Significant digits of the mantissa, as for :func:`fmt`.
    unit : str or pint.Unit, optional
        Display unit.

    Returns
    -------
    Formatted
        Bare LaTeX (no dollar signs); :func:`md_math` wraps it for Markdown.

    Examples
    --------
    >>> print(latex(3.14e23))
    3.14 \\times 10^{23}
    >>> from mlsys import Q_
    >>> print(latex(Q_(3.14e23, "FLOP")))
    3.14 \\times 10^{23}\\,\\mathrm{FLOP}
    """
    digits = _check_digits(digits)
    x, target = _in_unit(value, unit)
    mantissa, exponent = _sci_parts(x, _sig(x, digits))
    text = mantissa if x == 0 else f"{mantissa} \\times 10^{{{exponent}}}"
    if target:
        text += r"\," + _latex_unit(target)
    return Formatted(text)


def md_math(value: Any, digits: int | None = None, unit: str | pint.Unit | None = None) -> Math:
    """Inline Markdown math: a number in scientific form, or a LaTeX expression, in ``$…$``.

    Parameters
    ----------
    value : float, pint.Quantity or str
        A number or Quantity (rendered by :func:`latex`), or a LaTeX expression string,
        which is wrapped as it is (``md_math(r"T = \\frac{C}{N X}")``).
    digits : int, optional
        Significant digits of the mantissa, as for :func:`fmt`.
    unit : str or pint.Unit, optional
        Display unit of a Quantity.

    Returns
    -------
    Math
        ``"$3.14 \\\\times 10^{23}$"``; Quarto inserts it unescaped, so it typesets as math.

    Examples
    --------
    >>> print(md_math(3.14e23))
    $3.14 \\times 10^{23}$
    >>> print(md_math(r"\\eta = 0.5"))
    $\\eta = 0.5$
    """
    if isinstance(value, str):
        if not value.strip():
            raise FormatError("value", value, "a number, a Quantity or a LaTeX expression")
        return Math(f"${value}$")
    return _formatted(f"${latex(value, digits, unit)}$", value, cls=Math)


def check(condition: Any, message: str) -> Formatted:
    """Assert a fact the prose relies on; return "" so the call can sit inline.

    Write `` `{python} check(speedup > 2, "the text says 'more than twice as fast'")` ``
    next to the sentence; if the numbers change and the claim stops being true, the book
    build stops with the message instead of printing a false sentence.

    Parameters
    ----------
    condition : bool
        The claim (a Python or numpy boolean).
    message : str
        What the prose claims, quoted in the error.

    Returns
    -------
    Formatted
        The empty string.

    Raises
    ------
    BookCheckError
        When ``condition`` is false.
    FormatError
        When ``condition`` is not a boolean (an array, None, a number) or ``message`` is
        not a non-empty string.

    Examples
    --------
    >>> check(3.35 > 2.0, "HBM3 bandwidth exceeds 2 TB/s")
    ''
    >>> check(1 > 2, "one exceeds two")
    Traceback (most recent call last):
    ...
    mlsys.core.fmt.BookCheckError: Book check failed: one exceeds two
    """
    if not isinstance(message, str) or not message.strip():
        raise FormatError("message", message, "a non-empty string saying what the prose claims")
    if not isinstance(condition, bool):
        dtype = getattr(condition, "dtype", None)
        if getattr(dtype, "kind", None) == "b" and getattr(condition, "shape", None) == ():
            condition = bool(condition)
        else:
            raise FormatError(
                "condition",
                condition,
                "a boolean (a comparison such as x > y)",
                "For arrays use .all() or .any() to say which claim is meant.",
            )
    if not condition:
        raise BookCheckError(message)
    return Formatted("")


def _in_unit(value: Any, unit: Any) -> tuple[float, UnitsContainer | None]:
    """Value in ``unit`` (or in its own unit): float and unit container (None if none)."""
    x, units = _coerce(value, "value")
    if unit is None:
        return x, units
    target = _target(unit)
    if units is not None:
        x = _convert(x, units, target)
    return x, (target or None)


# ---------------------------------------------------------------------------------------
# The book's fixed-decimals contract (fmt(..., precision=...)); mlsys.core.fmt_book
# builds the rest of the book's formatting on it.
# ---------------------------------------------------------------------------------------

_MAX_PRECISION = 15  # a double carries ~15.9 significant digits; more decimals are noise


class MarkdownStr(Formatted):
    """A ``str`` that Quarto and Jupyter insert verbatim as Markdown (the book's type).

    Quarto escapes commas and periods of a plain ``str`` inline result, which corrupts a
    number placed inside ``$...$`` math; an object with ``_repr_markdown_`` is inserted
    as it is. Unlike :class:`mlsys.core.fmt.Formatted`, nothing is escaped: the book
    writes its own ``\\$`` where it means a dollar sign, and ``$`` where it means math.

    Examples
    --------
    >>> s = MarkdownStr("$x = 1$")
    >>> s._repr_markdown_(), s + "!"
    ('$x = 1$', '$x = 1$!')
    """

    __slots__ = ()

    def _repr_markdown_(self) -> str:
        return str.__str__(self)


def _precision(precision: Any, name: str = "precision") -> int:
    if isinstance(precision, bool) or not isinstance(precision, numbers.Integral):
        raise FormatError(name, precision, f"an integer number of decimals, 0 to {_MAX_PRECISION}")
    if not 0 <= precision <= _MAX_PRECISION:
        raise FormatError(name, precision, f"an integer number of decimals, 0 to {_MAX_PRECISION}")
    return int(precision)


def _text(value: Any, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise FormatError(name, value, "a string (or None)")
    return value


def _book_value(quantity: Any, unit: Any) -> float:
    """``quantity`` in ``unit`` as a float; FLOPs, parameters, dollars convert as counts.

    The book counts them as plain numbers, so ``fmt(A100_FLOPS_FP16_TENSOR, "TFLOP/s")``
    must work whether the value carries mlsys's FLOP dimension or the book's count.
    """
    try:
        return _in_unit(quantity, unit)[0]
    except FormatUnitError:
        if unit is None or not isinstance(quantity, pint.Quantity):
            raise
        target = to_book_counts(_target_quantity(unit))
        value = to_book_counts(quantity)
        try:
            return _in_unit(value, target.units)[0] / target.magnitude
        except FormatUnitError:
            raise FormatUnitError(
                "unit", unit, f"a unit of the same dimension as {quantity.units:~P}"
            ) from None


def _target_quantity(unit: Any) -> pint.Quantity:
    from mlsys.core.units import Q_

    return Q_(1.0, unit if isinstance(unit, str) else str(unit))


def _fixed(x: float, precision: int, commas: bool, allow_zero: bool, original: Any) -> str:
    """``x`` with ``precision`` decimals; refuses a non-zero value shown as zero."""
    text = f"{x:,.{precision}f}" if commas else f"{x:.{precision}f}"
    if float(text.replace(",", "")) == 0.0:
        if x != 0.0 and not allow_zero:
            raise FormatError(
                "quantity",
                original,
                f"a value that does not round to zero at precision={precision}",
                f"{x!r} would print as {text.lstrip('-')!r}: raise precision, pick a smaller "
                "unit, or pass allow_zero=True if zero is meant.",
            )
        text = text.lstrip("-")  # never print "-0.0"
    return text


def book_fmt(
    quantity: Any,
    unit: str | pint.Unit | None = None,
    precision: int = 1,
    commas: bool = True,
    suffix: str | None = None,
    prefix: str | None = None,
    allow_zero: bool = False,
) -> MarkdownStr:
    """The book's ``fmt``: a bare number with ``precision`` decimals, in ``unit``.

    Parameters
    ----------
    quantity : pint.Quantity, float or int
        The value. A Quantity is converted to ``unit`` first (any unit of the same
        dimension); a plain number is taken to be in ``unit`` already, as in the book.
    unit : str or pint.Unit, optional
        Unit to show the Quantity in (the prose writes it); None keeps its own unit.
    precision : int, default 1
        Decimal places, 0–15 (fixed, trailing zeros kept: ``2039.0`` → "2,039.0").
    commas : bool, default True
        Thousands separators.
    suffix, prefix : str, optional
        Text put after / before the number (``prefix="~"``, ``suffix="%"``), no space added.
    allow_zero : bool, default False
        Accept a non-zero value that rounds to zero at ``precision``.

    Returns
    -------
    MarkdownStr
        The number, e.g. ``"3.4"`` for ``Q_(3.35, "TB/s")`` at precision 1.

    Raises
    ------
    FormatError
        For None, NaN, infinity, a string, a boolean, an array, a bad ``precision``, or a
        non-zero value that would print as zero (unless ``allow_zero``); a
        ``FormatUnitError`` when ``unit`` has another dimension. All are ``ValueError``.

    Examples
    --------
    >>> from mlsys import Q_
    >>> book_fmt(Q_(3.35, "TB/s")), book_fmt(2039.0), book_fmt(1234567.0)
    ('3.4', '2,039.0', '1,234,567.0')
    >>> book_fmt(42.0, precision=0), book_fmt(Q_(2039, "GB/s"), "TB/s")
    ('42', '2.0')
    >>> book_fmt(0.2, precision=1, prefix="~", suffix="%")
    '~0.2%'
    """
    x = _book_value(quantity, unit)
    # flags read strictly: commas="no" means no separators, never a truthy string
    text = _fixed(
        x, _precision(precision), flag("commas", commas), flag("allow_zero", allow_zero), quantity
    )
    return MarkdownStr(f"{_text(prefix, 'prefix')}{text}{_text(suffix, 'suffix')}")
