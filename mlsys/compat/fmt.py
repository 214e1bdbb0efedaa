"""``mlsysim.fmt`` for migrated chapters: :mod:`mlsys.formatting` with the book's ``fmt_int``.

The book's ``fmt_int(x)`` prints ``x`` rounded to a whole number, keywords or not
(its ``fmt(round(x), precision=0)``). :func:`mlsys.formatting.fmt_int` takes the book's
contract only when a book keyword (``commas=``, ``prefix=``, ``suffix=``) is given and
otherwise refuses a fraction, as mlsys's own whole-number rule does. ``mlsys migrate``
points the book's ``mlsysim.fmt`` imports here, so a chapter's plain ``fmt_int(45.49)``
prints "45" as it did in the book; every other name is :mod:`mlsys.formatting`'s.
"""

from __future__ import annotations

from typing import Any

import pint

import mlsys.formatting as _formatting
from mlsys.formatting import *  # noqa: F403 - this module is mlsys.formatting for the book
from mlsys.formatting import MarkdownStr, book_fmt_int

__all__ = list(_formatting.__all__)


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
    default) documents; NaN, infinities and text are refused.

    Parameters
    ----------
    value : int, float or pint.Quantity
        The count.
    unit : str or pint.Unit, optional
        Unit to express a Quantity in before rounding.
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
    >>> fmt_int(45.49), fmt_int(16384.4, commas=False)
    ('45', '16384')
    """
    return book_fmt_int(value, unit, commas=commas, prefix=prefix, suffix=suffix)
