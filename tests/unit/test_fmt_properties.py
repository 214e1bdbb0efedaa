"""Property tests of mlsys.formatting.fmt: what it prints parses back to what it was given.

For any positive magnitude in any of the units below, the text ``fmt`` prints is read back
with pint and must lie within half a unit of its last printed digit of the input; it never
shows float noise ("e+", "0000000001") and never more significant digits than asked (or
than :data:`MAX_CARRIED_DIGITS` by default). A value that carries few digits is printed
exactly (no significant digit rounded away).
"""

from __future__ import annotations

import math
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from mlsys import Q_
from mlsys.formatting import MAX_CARRIED_DIGITS, fmt, pct, sci, times

UNITS = [
    "B",
    "B/s",
    "bit/s",
    "FLOP",
    "FLOP/s",
    "W",
    "J",
    "Wh",
    "s",
    "token/s",
    "parameter",
    "gCO2e",
    "kgCO2e/kWh",
    "J/token",
]

_SUPER = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
_SCI = re.compile(r"^(-?[\d.]+) × 10([⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)(?: (.+))?$")
_POS = re.compile(r"^(-?[\d.]+)(?: (.+)|(/.+))?$")

magnitudes = st.floats(min_value=1e-9, max_value=1e24, allow_nan=False, allow_infinity=False)
digits_or_none = st.none() | st.integers(min_value=1, max_value=8)


_WORDS = {"million": 6, "billion": 9, "trillion": 12}
# How the display policy writes a unit -> how pint reads it.
_DISPLAY_TO_PINT = (
    (" CO₂e", "CO2e"),
    ("m³", "m**3"),
    ("parameters", "parameter"),
    ("tokens", "token"),
)


def _pint_unit(shown: str | None) -> tuple[str | None, int]:
    """A displayed unit as pint reads it, and the power of ten of a word scale."""
    if shown is None:
        return None, 0
    power = 0
    word, _, rest = shown.partition(" ")
    if word in _WORDS:
        power, shown = _WORDS[word], rest
    for display, pint_text in _DISPLAY_TO_PINT:
        shown = shown.replace(display, pint_text)
    if shown.startswith("/"):  # a rate, "7.2/h"
        shown = "1" + shown
    return shown, power


def _parse(text: str) -> tuple[str, int, str | None]:
    """Printed mantissa text, power of ten, unit text (as pint reads it)."""
    mantissa, power, shown = _parse_display(text)
    unit, word_power = _pint_unit(shown)
    return mantissa, power + word_power, unit


def _parse_display(text: str) -> tuple[str, int, str | None]:
    plain = text.replace(",", "")
    match = _SCI.match(plain)
    if match:
        return match.group(1), int(match.group(2).translate(_SUPER)), match.group(3)
    match = _POS.match(plain)
    assert match, f"unreadable output {text!r}"
    return match.group(1), 0, match.group(2) or match.group(3)


def _significant(mantissa: str) -> int:
    """Significant digits printed (leading zeros and trailing integer zeros excluded)."""
    digits = mantissa.lstrip("-").replace(".", "").lstrip("0").rstrip("0")
    return max(1, len(digits))


def _half_ulp(mantissa: str, power: int) -> float:
    """Half a unit in the last significant place printed."""
    value = abs(float(mantissa))
    if value == 0:
        return 0.0
    exponent = math.floor(math.log10(value))
    return 0.5 * 10.0 ** (exponent - _significant(mantissa) + 1 + power)


def _allowed_digits(x: float, digits: int | None) -> int:
    """Significant digits fmt may print: as asked, else 6, else every digit of a whole number."""
    if digits is not None:
        return digits
    if x == int(x) and abs(x) < 1e15:
        return max(MAX_CARRIED_DIGITS, len(str(abs(int(x))).rstrip("0")))
    return MAX_CARRIED_DIGITS


def _check_round_trip(x: float, unit: str, text: str, digits: int | None) -> None:
    assert "e+" not in text and "e-" not in text, text
    mantissa, power, shown_unit = _parse(text)
    assert _significant(mantissa) <= _allowed_digits(x, digits), text
    printed = float(mantissa) * 10.0**power
    # Read the printed text back with pint and express the input in the printed unit.
    expected = Q_(x, unit).to(shown_unit).magnitude if shown_unit else x
    tolerance = _half_ulp(mantissa, power) * (1 + 1e-9) + abs(expected) * 1e-12
    assert abs(printed - expected) <= tolerance, (x, unit, text, expected)


@settings(max_examples=150, deadline=None)
@given(x=magnitudes, unit=st.sampled_from(UNITS), digits=digits_or_none)
def test_fmt_round_trips_within_printed_precision(x, unit, digits):
    text = fmt(Q_(x, unit), digits=digits)
    _check_round_trip(x, unit, text, digits)


@settings(max_examples=100, deadline=None)
@given(x=magnitudes, unit=st.sampled_from(["GB/s", "MWh", "ms", "TFLOP/s", "GiB", "kW"]))
def test_fmt_in_a_given_unit_round_trips(x, unit):
    text = fmt(x, unit)
    assert text.endswith(" " + Q_(1, unit).units.__format__("~P"))
    _check_round_trip(x, unit, text, None)


@settings(max_examples=150, deadline=None)
@given(
    mantissa=st.integers(min_value=1, max_value=10**MAX_CARRIED_DIGITS - 1),
    exponent=st.integers(min_value=-9, max_value=17),
    unit=st.sampled_from(UNITS),
)
def test_values_carrying_few_digits_print_exactly(mantissa, exponent, unit):
    # A datasheet-like value (at most six significant digits) loses none of them, except
    # a duration from 1000 s up, which climbs to min/h/d/yr, and energy in joules from
    # 1 Wh up, written in Wh/kWh/MWh, and counts of tokens or parameters in words from a
    # million up (the display policy): those are checked by the round trip instead.
    x = float(f"{mantissa}e{exponent}")
    text = fmt(Q_(x, unit))
    words = unit in ("token/s", "parameter") and x >= 1e6  # "1.00 million": looks rounded
    if (unit == "s" and x >= 1000) or (unit == "J" and x >= 3600) or words:
        _check_round_trip(x, unit, text, None)
        return
    shown, power, shown_unit = _parse(text)
    printed = float(shown) * 10.0**power
    expected = Q_(x, unit).to(shown_unit).magnitude
    assert math.isclose(printed, expected, rel_tol=1e-9), (x, unit, text)


@settings(max_examples=100, deadline=None)
@given(
    x=st.floats(allow_nan=False, allow_infinity=False, min_value=-1e30, max_value=1e30),
    digits=digits_or_none,
)
def test_plain_numbers_never_show_float_noise(x, digits):
    for text in (fmt(x, digits=digits), times(x, digits=digits), sci(x, digits=digits)):
        assert "e+" not in text and "e-" not in text
        mantissa = re.sub(r"[^\d.]", " ", text.replace(",", "")).split()[0]
        allowed = _allowed_digits(x, digits) if text is not None else 0
        assert _significant(mantissa) <= allowed, text


@settings(max_examples=100, deadline=None)
@given(fraction=st.floats(min_value=0.0, max_value=10.0, allow_nan=False))
def test_pct_is_the_fraction_times_100(fraction):
    text = pct(fraction)
    assert text.endswith("%")
    mantissa, power, _ = _parse(text[:-1])
    printed = float(mantissa) * 10.0**power
    assert abs(printed - 100 * fraction) <= _half_ulp(mantissa, power) * (1 + 1e-9) + 1e-12
