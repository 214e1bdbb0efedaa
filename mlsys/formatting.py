"""Book-facing names for rendering numbers in chapter prose: two ``fmt`` contracts.

This module re-exports :mod:`mlsys.core.fmt` (mlsys's own contract) and
:mod:`mlsys.core.fmt_book` (the contract of the textbook *Machine Learning Systems*,
harvard-edge/cs249r_book); it computes nothing itself. Chapter code imports from here::

    from mlsys.formatting import fmt, pct, money, rng, sci, md_math, check

The two contracts, side by side
-------------------------------
========================  ====================================  ==================================
                          mlsys's ``fmt(q, unit, digits)``       the book's ``fmt(q, unit,
                                                                 precision=1, commas=True, ...)``
========================  ====================================  ==================================
selected by               no book keyword                       any of ``precision=``,
                                                                ``commas=``, ``prefix=``,
                                                                ``allow_zero=``
returns                   number **and unit**: "3.35 TB/s"      the **bare number**: "3.4" (the
                                                                sentence writes the unit)
digits                    significant digits the value          exactly ``precision`` decimals,
                          carries ("80 GB", "3.35 TB/s")        zeros kept ("2,039.0")
unit                      prefix chosen for the reader          the Quantity's own unit, or
                          (GB, TB/s, min, h, $4.2M)             ``unit`` if given
extra text                ``suffix="per GPU"`` (after a space)  ``prefix="~"``, ``suffix="%"``
                                                                (no space added)
type                      :class:`Formatted` (escapes ``$``)    :class:`MarkdownStr` (verbatim)
refuses                   None, NaN, infinity, strings,         the same, and a non-zero value
                          booleans, arrays, wrong units         that rounds to zero unless
                                                                ``allow_zero=True``
========================  ====================================  ==================================

Other names of the book keep the book's meaning where it differs from mlsys's:
``fmt_int(x, commas=..., prefix=..., suffix=...)`` rounds halves away from zero and
prints no unit; ``fmt_percent(0.123)`` is "12.3" (no sign; ``pct`` gives "12.3%");
``sci(x, precision=2)`` and ``sci_latex(x, precision=2)`` keep ``precision`` mantissa
decimals ("4.10 × 10⁹"), while mlsys's ``sci(x, digits)`` counts significant digits;
``fmt_math``/``md`` wrap LaTeX, ``fmt_frac``/``md_frac`` build a fraction, ``fmt_full``,
``fmt_split``, ``fmt_val``, ``fmt_unit``, ``fmt_qty`` and ``display_*`` are the book's
table helpers. All of them refuse NaN and infinity.
"""

from __future__ import annotations

from typing import Any

import pint

from mlsys.core.deprecation import deprecated_getattr
from mlsys.core.fmt import (
    COMPUTED_DIGITS,
    MAX_CARRIED_DIGITS,
    BookCheckError,
    FormatError,
    Formatted,
    FormatUnitError,
    Math,
    check,
    commas,
    count,
    fmt,
    latex,
    md_math,
    money,
    multiple,
    pct,
    per,
    rng,
    times,
)
from mlsys.core.fmt import fmt_int as _fmt_int
from mlsys.core.fmt import sci as _sci
from mlsys.core.fmt_book import (
    MarkdownStr,
    book_fmt_int,
    book_fmt_percent,
    book_sci,
    book_sci_latex,
    display_fraction,
    display_percent,
    display_value,
    fmt_frac,
    fmt_full,
    fmt_math,
    fmt_qty,
    fmt_split,
    fmt_unit,
    fmt_val,
    md,
    md_frac,
    md_sci,
)

__all__ = [
    # mlsys's contract
    "fmt",
    "per",
    "rng",
    "fmt_int",
    "commas",
    "count",
    "pct",
    "times",
    "multiple",
    "money",
    "sci",
    "latex",
    "md_math",
    "check",
    "Formatted",
    "Math",
    "FormatError",
    "FormatUnitError",
    "BookCheckError",
    "MAX_CARRIED_DIGITS",
    "COMPUTED_DIGITS",
    # the book's contract (harvard-edge/cs249r_book)
    "MarkdownStr",
    "fmt_percent",
    "fmt_math",
    "fmt_frac",
    "fmt_sci",
    "fmt_full",
    "fmt_split",
    "fmt_val",
    "fmt_unit",
    "fmt_qty",
    "sci_latex",
    "md",
    "md_frac",
    "md_sci",
    "display_value",
    "display_percent",
    "display_fraction",
]

fmt_percent = book_fmt_percent
fmt_sci = book_sci
sci_latex = book_sci_latex


def fmt_int(
    value: Any,
    unit: str | pint.Unit | None = None,
    commas: bool | None = None,
    prefix: str | None = None,
    suffix: str | None = None,
    *,
    sep: str = ",",
    space: str = " ",
) -> Formatted:
    """A whole number: mlsys's ``fmt_int``, or the book's when a book keyword is given.

    Parameters
    ----------
    value : int, float or pint.Quantity
        The count.
    unit : str or pint.Unit, optional
        Display unit of a Quantity (or the unit a plain number is in).
    commas : bool, optional
        Book contract: thousands separators; the result is the bare number, halves
        rounded away from zero (:func:`mlsys.core.fmt_book.book_fmt_int`).
    prefix, suffix : str, optional
        Book contract: text before / after the number.
    sep : str
        mlsys contract: thousands separator.
    space : str
        mlsys contract: the space before the unit.

    Returns
    -------
    Formatted
        mlsys: "16,384" or "2,048 token" (a Quantity keeps its unit); book: "16,384"
        (a :class:`MarkdownStr`, no unit).

    Examples
    --------
    >>> from mlsys import Q_
    >>> fmt_int(16384), fmt_int(Q_(2048, "token"))
    ('16,384', '2,048 token')
    >>> fmt_int(Q_(2048, "token"), commas=False), fmt_int(2.5, prefix="~")
    ('2048', '~3')
    """
    if commas is not None or prefix is not None or suffix is not None:
        return book_fmt_int(
            value, unit, commas=True if commas is None else commas, prefix=prefix, suffix=suffix
        )
    return _fmt_int(value, unit, sep=sep, space=space)


def sci(
    value: Any,
    digits: int | None = None,
    unit: str | pint.Unit | None = None,
    *,
    precision: int | None = None,
) -> Formatted:
    """Scientific notation: mlsys's ``sci`` (significant digits), or the book's with ``precision=``.

    Parameters
    ----------
    value : float or pint.Quantity
        The number.
    digits : int, optional
        mlsys contract: significant digits of the mantissa.
    unit : str or pint.Unit, optional
        mlsys contract: display unit, written after the number.
    precision : int, optional
        Book contract: decimals of the mantissa, zeros kept, no unit
        (:func:`mlsys.core.fmt_book.book_sci`).

    Returns
    -------
    Formatted

    Examples
    --------
    >>> sci(4.1e9), sci(4.1e9, precision=2)
    ('4.1 × 10⁹', '4.10 × 10⁹')
    """
    if precision is not None:
        return book_sci(value, precision)
    return _sci(value, digits, unit)


# old name -> new name; served with one DeprecationWarning per access
# (mlsys.core.deprecation). The book's names above are supported, not deprecated.
_DEPRECATED: dict[str, str] = {}

__getattr__ = deprecated_getattr("mlsys.formatting", _DEPRECATED)


def __dir__() -> list[str]:
    # Deprecated names stay out of dir(), so tools that walk it (doctest, quartodoc,
    # completion) neither warn nor advertise them.
    return sorted(set(globals()) - set(_DEPRECATED))
