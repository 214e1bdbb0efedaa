"""``mlsysim.fmt`` for migrated chapters: :mod:`mlsys.formatting` with the book's ``fmt_int``.

The book's ``fmt_int(x)`` prints ``x`` rounded to a whole number, keywords or not
(its ``fmt(round(x), precision=0)``). :func:`mlsys.formatting.fmt_int` takes the book's
contract only when a book keyword (``commas=``, ``prefix=``, ``suffix=``) is given and
otherwise refuses a fraction, as mlsys's own whole-number rule does. ``mlsys migrate``
points the book's ``mlsysim.fmt`` imports here, so a chapter's plain ``fmt_int(45.49)``
prints "45" as it did in the book; every other name is :mod:`mlsys.formatting`'s.

The book's ``fmt_int`` also takes the text of a plain number: the training chapter prints
the exponent of ``f"{4.2e22:.1e}"`` with ``fmt_int("4.2e+22".split("e+")[1])``, i.e.
``fmt_int("22")``. That text is read as the number it spells; any other text is refused.
"""

from __future__ import annotations

import re
from typing import Any

import pint

import mlsys.formatting as _formatting
from mlsys.formatting import *  # noqa: F403 - this module is mlsys.formatting for the book
from mlsys.formatting import FormatError, MarkdownStr, book_fmt_int

__all__ = list(_formatting.__all__)

_INTEGER_TEXT = re.compile(r"[+-]?\d+")
_DECIMAL_TEXT = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _number_from_text(text: str) -> int | float:
    """The number a plain numeric string spells: "22" -> 22, "4.5e1" -> 45.0.

    Digits of an integer are kept exactly (``str(2**53 + 1)`` reads back as that int);
    text with a unit, words, ``nan`` or ``inf`` raise :class:`FormatError`.
    """
    stripped = text.strip()
    if _INTEGER_TEXT.fullmatch(stripped):
        return int(stripped)
    if _DECIMAL_TEXT.fullmatch(stripped):
        return float(stripped)
    raise FormatError(
        "value",
        text,
        "a number, a pint Quantity, or the text of a plain number such as '22'",
        "Parse text with a unit first, e.g. Q_('3.35 TB/s').",
    )


def fmt_int(
    value: Any,
    unit: str | pint.Unit | None = None,
    commas: bool = True,
    prefix: str | None = None,
    suffix: str | None = None,
) -> MarkdownStr:
    """The book's ``fmt_int``: ``value`` rounded to a whole number, with separators.

    Halves round away from zero and a value that rounds to zero is refused, as
    :func:`mlsys.core.fmt_book.book_fmt_int` (which this is, with ``commas`` on by
    default) documents; NaN and infinities are refused. Text that spells a plain number
    (``"22"``, ``"4.5e1"``) is read as that number, as the book's ``fmt_int`` does; any
    other text is refused.

    Parameters
    ----------
    value : int, float, str or pint.Quantity
        The count, or the text of a plain number.
    unit : str or pint.Unit, optional
        Unit to express a Quantity in before rounding. A plain number is taken as already
        in its unit and the argument is not read, as the book's ``fmt_int`` does (``if
        isinstance(quantity, Quantity): quantity.to(unit)``): the data-selection chapter's
        ``fmt_int(468.75, -2, commas=False)`` prints "469".
    commas : bool
        Thousands separators (the book's default: on).
    prefix, suffix : str, optional
        Text before / after the number.

    Returns
    -------
    MarkdownStr
        The bare number as the book prints it.

    Examples
    --------
    >>> fmt_int(45.49), fmt_int(16384.4, commas=False), fmt_int("22", commas=False)
    ('45', '16384', '22')
    """
    if isinstance(value, str):
        value = _number_from_text(value)
    if not isinstance(value, pint.Quantity):
        unit = None  # the book converts only a Quantity; a number is already in its unit
    return book_fmt_int(value, unit, commas=commas, prefix=prefix, suffix=suffix)
