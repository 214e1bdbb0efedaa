"""Whole numbers print every digit at any size; NaN never reaches the page.

The formatting guide promises "whole numbers: every digit, never silently rounded". An
``int`` is exact at any size, so its digits are printed by integer arithmetic, never
through a float (which holds 53 bits: 2**53 + 1 came out as ...992).
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from mlsys import Q_
from mlsys.core.errors import MlsysError
from mlsys.formatting import (
    FormatError,
    book_fmt_int,
    commas,
    display_fraction,
    fmt,
    fmt_frac,
    fmt_int,
    md_frac,
    sci,
)

# 2**53 + 1 is the first integer a double cannot hold: float(2**53 + 1) == 2**53
TWO_53_PLUS_1 = 2**53 + 1
TWO_53_PLUS_1_TEXT = "9,007,199,254,740,993"


def test_the_float_would_lose_the_last_digit():
    assert float(TWO_53_PLUS_1) == 2**53  # the reason the int path exists


@pytest.mark.parametrize("function", [fmt_int, commas, book_fmt_int, fmt])
def test_two_53_plus_1_every_digit(function):
    assert function(TWO_53_PLUS_1) == TWO_53_PLUS_1_TEXT


def test_fmt_int_negative_and_numpy():
    assert fmt_int(-TWO_53_PLUS_1) == "-" + TWO_53_PLUS_1_TEXT
    # 2**62 + 1 = 4,611,686,018,427,387,905 (a float gives ...904)
    assert fmt_int(np.int64(2**62 + 1)) == "4,611,686,018,427,387,905"


def test_fmt_int_whole_fraction_and_decimal():
    assert fmt_int(Fraction(2**70)) == "1,180,591,620,717,411,303,424"
    assert fmt_int(Decimal(10**20 + 1)) == "100,000,000,000,000,000,001"


def test_fmt_int_quantity_of_an_int_keeps_digits():
    assert fmt_int(Q_(TWO_53_PLUS_1, "token")) == TWO_53_PLUS_1_TEXT + " token"


def test_fmt_of_a_python_int_past_1e15_prints_every_digit():
    # the guide: "whole numbers | every digit, never silently rounded"
    assert fmt(10**15 + 1) == "1,000,000,000,000,001"
    assert fmt(10**16 + 1) == "10,000,000,000,000,001"
    assert fmt(12345678) == "12,345,678"  # the guide's own example is unchanged


def test_fmt_of_an_int_rounds_only_when_asked():
    # the guide: fmt(12345678, digits=3) -> 12,300,000; integer rounding, any size
    assert fmt(12345678, digits=3) == "12,300,000"
    assert fmt(10**20 + 5 * 10**17, digits=2) == "100,000,000,000,000,000,000"


def test_a_float_past_1e15_stays_scientific():
    # a float carries ~16 digits: printing 22 of them would invent the rest
    assert fmt(1e21) == "1 × 10²¹"


def test_fmt_of_10_to_400_never_overflows():
    text = fmt(10**400)
    # 401 digits in 134 groups: 1 followed by 133 groups of "000"
    assert text == "10" + ",000" * 133
    assert text.replace(",", "") == str(10**400)
    assert fmt(-(10**400)).startswith("-10,000,")


def test_fmt_int_of_10_to_400():
    assert fmt_int(10**400).replace(",", "") == "1" + "0" * 400


def test_sci_of_10_to_400_by_integer_arithmetic():
    assert sci(10**400) == "1 × 10⁴⁰⁰"
    # 999 × 10^397 to two digits rounds up a place: 1.0 × 10^400
    assert sci(999 * 10**397, digits=2) == "1 × 10⁴⁰⁰"
    assert sci(12345 * 10**396, digits=3) == "1.23 × 10⁴⁰⁰"


@pytest.mark.parametrize(
    "call",
    [
        lambda: fmt(Q_(10**400, "byte")),
        lambda: fmt(10**400, "GB"),
        lambda: fmt_int(10**400, "GB"),
    ],
    ids=["quantity", "unit", "fmt_int unit"],
)
def test_a_huge_int_with_a_unit_is_a_typed_error(call):
    # a unit conversion needs a float: beyond its range this is an error, not OverflowError
    with pytest.raises(FormatError, match="float range") as info:
        call()
    assert len(str(info.value)) < 300  # the 401-digit value is cut in the message


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, np.float64("nan"), None, [1]])
@pytest.mark.parametrize("function", [fmt_frac, md_frac])
def test_fmt_frac_refuses_nan_like_fmt(function, bad):
    with pytest.raises(FormatError):
        function(bad, 2)
    with pytest.raises(FormatError):
        function(1, bad)
    if bad is not None:  # result=None means "no result"
        with pytest.raises(FormatError):
            function(1, 2, bad)


def test_fmt_frac_nan_is_the_same_error_as_fmt():
    with pytest.raises(MlsysError, match="finite number"):
        fmt(math.nan)
    with pytest.raises(MlsysError, match=r"numerator=nan .* finite number"):
        fmt_frac(math.nan, 2)


def test_fmt_frac_text_and_numbers_unchanged():
    assert fmt_frac("175", "8", "21.9", "GB") == "$\\frac{175}{8}$ = 21.9 GB"
    assert fmt_frac(175, 8, 21.9) == "$\\frac{175}{8}$ = 21.9"


def test_display_fraction_of_nan_raises():
    with pytest.raises(FormatError):
        display_fraction(math.nan, 2.0)


@pytest.mark.parametrize("value", [True, "12", 2.5])
def test_fmt_int_still_refuses_non_whole(value):
    with pytest.raises(FormatError):
        fmt_int(value)
