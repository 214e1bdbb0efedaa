"""The book's formatting contract: bare numbers with fixed decimals, for prose that writes the unit.

The open textbook *Machine Learning Systems* (harvard-edge/cs249r_book) formats numbers
with ``fmt(quantity, unit=None, precision=1, commas=True, allow_zero=False)``: the value,
converted to ``unit`` when it is a Quantity, with exactly ``precision`` decimals and no unit
(the sentence around it names the unit). Its newer releases add ``prefix=``/``suffix=``
text, ``fmt_int``, ``fmt_percent``, ``fmt_math``, ``fmt_frac`` and a ``MarkdownStr`` that
Quarto inserts verbatim. This module serves that contract on mlsys's formatting engine,
so a chapter written for the book runs unchanged; :func:`mlsys.core.fmt.fmt` dispatches
here when it is called with ``precision=``, ``commas=``, ``prefix=`` or ``allow_zero=``.

Two refusals are stricter than the book's own package and are on purpose: NaN and
infinity raise (the book printed ``nan``), and so does a non-zero value that rounds to
zero at the requested precision ("false precision"), unless ``allow_zero=True``. Both
raise :class:`mlsys.core.fmt.FormatError`, which is a ``ValueError`` as the book expects.

mlsys's own contract (``fmt(q)`` → "3.35 TB/s", significant digits, unit included) is in
:mod:`mlsys.core.fmt`; the module docstring of :mod:`mlsys.formatting` compares the two.
"""

from __future__ import annotations

import math
from typing import Any

import pint

from mlsys.core.checks import flag
from mlsys.core.fmt import (
    FormatError,
    MarkdownStr,
    _book_value,
    _coerce,
    _exact_int,
    _precision,
    _pretty,
    _target,
    _text,
    book_fmt,
)

__all__ = [
    "MarkdownStr",
    "book_fmt",
    "book_fmt_int",
    "book_fmt_percent",
    "book_sci",
    "book_sci_latex",
    "fmt_math",
    "fmt_frac",
    "fmt_full",
    "fmt_split",
    "fmt_val",
    "fmt_unit",
    "fmt_qty",
    "md",
    "md_frac",
    "md_sci",
    "display_value",
    "display_percent",
    "display_fraction",
]

_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")


def book_fmt_int(
    quantity: Any,
    unit: str | pint.Unit | None = None,
    commas: bool = True,
    prefix: str | None = None,
    suffix: str | None = None,
) -> MarkdownStr:
    """The book's ``fmt_int``: a value rounded to a whole number, halves away from zero.

    Parameters
    ----------
    quantity : pint.Quantity, float or int
        The value (converted to ``unit`` when a Quantity and ``unit`` is given).
    unit : str or pint.Unit, optional
        Unit to show a Quantity in; the prose writes it.
    commas : bool, default True
        Thousands separators.
    prefix, suffix : str, optional
        Text put before / after the number.

    Returns
    -------
    MarkdownStr
        E.g. ``"16,384"``; ``2.5`` gives ``"3"`` (the book rounds halves away from zero).

    Raises
    ------
    FormatError
        As :func:`book_fmt`; also when a non-zero value rounds to 0.

    Notes
    -----
    An ``int`` (or numpy integer) without ``unit`` keeps every digit at any size:
    ``book_fmt_int(2**53 + 1)`` is "9,007,199,254,740,993", never the float's ...992.

    Examples
    --------
    >>> book_fmt_int(16384.4), book_fmt_int(2.5), book_fmt_int(-2.5, commas=False)
    ('16,384', '3', '-3')
    """
    exact = _exact_int(quantity) if unit is None else None
    if exact is not None:  # an int keeps every digit (never through a float)
        whole = x = exact
    else:
        x = _book_value(quantity, unit)
        whole = math.floor(abs(x) + 0.5) * (1 if x >= 0 else -1)
    if whole == 0 and x != 0:
        raise FormatError(
            "quantity",
            quantity,
            "a value that does not round to 0",
            "Use fmt(value, precision=...) with enough decimals, or a smaller unit.",
        )
    text = f"{whole:,d}" if flag("commas", commas) else f"{whole:d}"
    return MarkdownStr(f"{_text(prefix, 'prefix')}{text}{_text(suffix, 'suffix')}")


def _ratio(ratio: Any, name: str = "ratio") -> float:
    if isinstance(ratio, pint.Quantity):
        try:
            return _coerce(ratio.to(""), name)[0]
        except pint.DimensionalityError:
            raise FormatError(name, ratio, "a dimensionless ratio (0.5 for 50 %)") from None
    return _coerce(ratio, name)[0]


def book_fmt_percent(
    ratio: Any, precision: int = 1, commas: bool = False, suffix: str | None = None
) -> MarkdownStr:
    """The book's ``fmt_percent``: a ratio shown as a percentage number, ``0.123`` → "12.3".

    Parameters
    ----------
    ratio : float or pint.Quantity
        A fraction (0.5 means 50 %); a Quantity must be dimensionless (``flop/flop`` is).
    precision : int, default 1
        Decimal places of the percentage.
    commas : bool, default False
        Thousands separators.
    suffix : str, optional
        Appended text: ``"%"`` or ``" percent"`` (the book's default is none).

    Returns
    -------
    MarkdownStr

    Examples
    --------
    >>> book_fmt_percent(0.1234), book_fmt_percent(0.5, 0, suffix="%")
    ('12.3', '50%')
    """
    return book_fmt(_ratio(ratio) * 100.0, precision=precision, commas=commas, suffix=suffix)


def _mantissa_exponent(value: Any, precision: int) -> tuple[str, int]:
    x, _ = _coerce(value, "val")
    text = f"{x:.{_precision(precision)}e}"
    mantissa, exponent = text.split("e")
    return mantissa, int(exponent)


def book_sci(val: Any, precision: int = 2) -> MarkdownStr:
    """The book's ``sci``: scientific notation with ``precision`` mantissa decimals.

    A Quantity contributes its magnitude in its own unit (the book's behaviour).

    Parameters
    ----------
    val : float or pint.Quantity
        The number.
    precision : int, default 2
        Decimals of the mantissa (kept even when zero: "4.10 × 10⁹").

    Returns
    -------
    MarkdownStr

    Examples
    --------
    >>> book_sci(4.1e9), book_sci(1.2e-5, 1)
    ('4.10 × 10⁹', '1.2 × 10⁻⁵')
    """
    mantissa, exponent = _mantissa_exponent(val, precision)
    return MarkdownStr(f"{mantissa} × 10{str(exponent).translate(_SUPERSCRIPT)}")


def book_sci_latex(val: Any, precision: int = 2) -> MarkdownStr:
    """The book's ``sci_latex``: LaTeX scientific notation with ``precision`` decimals.

    Parameters
    ----------
    val : float or pint.Quantity
        The number (a Quantity's magnitude in its own unit).
    precision : int, default 2
        Decimals of the mantissa, trailing zeros kept.

    Returns
    -------
    MarkdownStr
        Bare LaTeX, no dollar signs, e.g. ``4.10 \\times 10^{9}``.

    Examples
    --------
    >>> print(book_sci_latex(4.1e9))
    4.10 \\times 10^{9}
    >>> print(book_sci_latex(1.2e20, 1))
    1.2 \\times 10^{20}
    """
    mantissa, exponent = _mantissa_exponent(val, precision)
    return MarkdownStr(f"{mantissa} \\times 10^{{{exponent}}}")


def fmt_math(expression: Any) -> MarkdownStr:
    """Wrap a LaTeX expression in ``$...$`` for inline math (the book's ``fmt_math``/``md_math``).

    Parameters
    ----------
    expression : str
        LaTeX without dollar signs, e.g. ``r"T = \\frac{C}{N X}"``.

    Returns
    -------
    MarkdownStr
        ``"$T = \\frac{C}{N X}$"``, inserted unescaped.

    Raises
    ------
    FormatError
        When ``expression`` is not a non-empty string.

    Examples
    --------
    >>> fmt_math("x = 1")
    '$x = 1$'
    """
    if not isinstance(expression, str) or not expression.strip():
        raise FormatError("expression", expression, "a non-empty LaTeX string")
    return MarkdownStr(f"${expression}$")


def fmt_frac(numerator: Any, denominator: Any, result: Any = None, unit: Any = None) -> MarkdownStr:
    """A LaTeX fraction with an optional result and unit (the book's ``fmt_frac``/``md_frac``).

    Parameters
    ----------
    numerator, denominator : str or number
        The two parts, already formatted (they are written as they are).
    result : str or number, optional
        Written after the fraction as `` = result``.
    unit : str, optional
        Written after the result.

    Returns
    -------
    MarkdownStr
        ``$\\frac{num}{den}$ = result unit``.

    Raises
    ------
    FormatError
        When a part given as a number is NaN, infinite, None or not a number (as
        :func:`mlsys.core.fmt.fmt`): a fraction never prints "nan".

    Examples
    --------
    >>> fmt_frac("175", "8", "21.9", "GB")
    '$\\\\frac{175}{8}$ = 21.9 GB'
    """
    numerator = _frac_part(numerator, "numerator")
    denominator = _frac_part(denominator, "denominator")
    text = f"$\\frac{{{numerator}}}{{{denominator}}}$"
    if result is not None:
        text += f" = {_frac_part(result, 'result')}"
    if unit is not None:
        text += f" {unit}"
    return MarkdownStr(text)


def _frac_part(value: Any, name: str) -> Any:
    """A part of :func:`fmt_frac`: text as it is; a number must be finite (NaN and
    infinity raise, as in :func:`mlsys.core.fmt.fmt`, instead of printing "nan")."""
    if isinstance(value, str):
        return value
    _coerce(value, name)  # raises FormatError for None, NaN, infinity, bool, arrays
    return value


def md(latex_str: Any) -> MarkdownStr:
    """Mark text as Markdown so a Quarto inline expression inserts it verbatim (book's ``md``).

    Parameters
    ----------
    latex_str : str
        Markdown or ``$...$`` LaTeX.

    Returns
    -------
    MarkdownStr

    Examples
    --------
    >>> md("$E = mc^2$")._repr_markdown_()
    '$E = mc^2$'
    """
    if not isinstance(latex_str, str):
        raise FormatError("latex_str", latex_str, "a string")
    return MarkdownStr(latex_str)


md_frac = fmt_frac
"""The book's older name of :func:`fmt_frac`."""


def md_sci(val: Any, precision: int = 2) -> MarkdownStr:
    """The book's ``md_sci``: :func:`book_sci_latex` wrapped in ``$...$``.

    Parameters
    ----------
    val : float or pint.Quantity
        The number.
    precision : int, default 2
        Decimals of the mantissa.

    Returns
    -------
    MarkdownStr

    Examples
    --------
    >>> print(md_sci(4.1e9, 1))
    $4.1 \\times 10^{9}$
    """
    return MarkdownStr(f"${book_sci_latex(val, precision)}$")


def _unit_label(quantity: Any) -> str:
    units = _coerce(quantity, "quantity")[1]
    return _pretty(units) if units else ""


def fmt_full(quantity: Any, precision: int = 1, commas: bool = True) -> MarkdownStr:
    """The book's ``fmt_full``: number and the Quantity's own unit, "2,039.0 GB/s".

    Parameters
    ----------
    quantity : pint.Quantity
        The value; its unit is printed as it is (no prefix is chosen).
    precision : int, default 1
        Decimal places.
    commas : bool, default True
        Thousands separators.

    Returns
    -------
    MarkdownStr

    Raises
    ------
    FormatError
        When ``quantity`` is not a Quantity, or as :func:`book_fmt`.

    Examples
    --------
    >>> from mlsys import Q_
    >>> fmt_full(Q_(2039, "GB/s"), 0)
    '2,039 GB/s'
    """
    if not isinstance(quantity, pint.Quantity):
        raise FormatError("quantity", quantity, "a pint Quantity (use fmt for plain numbers)")
    number = book_fmt(quantity, precision=precision, commas=commas)
    label = _unit_label(quantity)
    return MarkdownStr(f"{number} {label}" if label else number)


def fmt_split(quantity: Any, precision: int = 1, commas: bool = True) -> tuple[str, str]:
    """The book's ``fmt_split``: ``(number, unit)`` strings for two table columns.

    Parameters
    ----------
    quantity : pint.Quantity
        The value.
    precision : int, default 1
        Decimal places.
    commas : bool, default True
        Thousands separators.

    Returns
    -------
    tuple of (MarkdownStr, MarkdownStr)

    Examples
    --------
    >>> from mlsys import Q_
    >>> fmt_split(Q_(2039, "GB/s"), 0)
    ('2,039', 'GB/s')
    """
    if not isinstance(quantity, pint.Quantity):
        raise FormatError("quantity", quantity, "a pint Quantity (use fmt for plain numbers)")
    return (
        book_fmt(quantity, precision=precision, commas=commas),
        MarkdownStr(_unit_label(quantity)),
    )


def fmt_val(quantity: Any, default: str = "-") -> MarkdownStr:
    """The book's ``fmt_val``: the magnitude in Python's compact ``g`` format ("80", "2.5").

    Parameters
    ----------
    quantity : pint.Quantity, float or None
        The value; None gives ``default``.
    default : str, default "-"
        Text for a missing value.

    Returns
    -------
    MarkdownStr

    Examples
    --------
    >>> fmt_val(2.0), fmt_val(2.5), fmt_val(None)
    ('2', '2.5', '-')
    """
    if quantity is None:
        return MarkdownStr(default)
    x, _ = _coerce(quantity, "quantity")
    return MarkdownStr(f"{x:g}")


def fmt_unit(quantity: Any, default: str = "-") -> MarkdownStr:
    """The book's ``fmt_unit``: the unit of a Quantity as text ("GB"), or ``default``.

    Parameters
    ----------
    quantity : pint.Quantity or float
        The value.
    default : str, default "-"
        Text for a plain number.

    Returns
    -------
    MarkdownStr

    Examples
    --------
    >>> from mlsys import Q_
    >>> fmt_unit(Q_(80, "GB")), fmt_unit(80)
    ('GB', '-')
    """
    if not isinstance(quantity, pint.Quantity):
        return MarkdownStr(default)
    return MarkdownStr(_unit_label(quantity) or default)


def fmt_qty(
    quantity: Any,
    display_unit: str | pint.Unit,
    *,
    precision: int = 1,
    commas: bool = False,
    prefix: str | None = None,
    extra_suffix: str | None = None,
) -> MarkdownStr:
    """The book's ``fmt_qty``: the number in ``display_unit`` followed by that unit.

    Parameters
    ----------
    quantity : pint.Quantity or float
        The value (a plain number is taken to be in ``display_unit``).
    display_unit : str or pint.Unit
        Unit to convert to and print.
    precision : int, default 1
        Decimal places.
    commas : bool, default False
        Thousands separators.
    prefix, extra_suffix : str, optional
        Text before the number / after the unit.

    Returns
    -------
    MarkdownStr

    Examples
    --------
    >>> from mlsys import Q_
    >>> fmt_qty(Q_(2.4e6, "B/s"), "MB/s")
    '2.4 MB/s'
    """
    label = _pretty(_target(display_unit))
    suffix = f" {label}{_text(extra_suffix, 'extra_suffix')}"
    return book_fmt(
        quantity, display_unit, precision=precision, commas=commas, prefix=prefix, suffix=suffix
    )


def display_value(
    value: Any, unit: str | pint.Unit | None = None, precision: int = 1, commas: bool = True
) -> dict[str, Any]:
    """The book's ``display_value``: ``{"value": value, "str": fmt(value, ...)}``.

    Parameters
    ----------
    value : pint.Quantity or float
        The value.
    unit : str or pint.Unit, optional
        Unit to show it in.
    precision : int, default 1
        Decimal places.
    commas : bool, default True
        Thousands separators.

    Returns
    -------
    dict
        ``value`` (unchanged) and ``str`` (a MarkdownStr).

    Examples
    --------
    >>> display_value(2039.0)["str"]
    '2,039.0'
    """
    return {"value": value, "str": book_fmt(value, unit, precision=precision, commas=commas)}


def display_percent(ratio: Any, precision: int = 0) -> dict[str, Any]:
    """The book's ``display_percent``: a ratio as a percentage number and as math.

    Parameters
    ----------
    ratio : float or pint.Quantity
        A dimensionless fraction.
    precision : int, default 0
        Decimal places.

    Returns
    -------
    dict
        ``value`` (the ratio), ``str`` ("45") and ``math`` (``$45\\%$``).

    Examples
    --------
    >>> display_percent(0.45)["math"]
    '$45\\\\%$'
    """
    r = _ratio(ratio)
    text = book_fmt(r * 100.0, precision=precision, commas=False, allow_zero=True)
    return {"value": r, "str": text, "math": fmt_math(f"{text}\\%")}


def display_fraction(
    numerator: Any,
    denominator: Any,
    result: Any = None,
    unit: Any = None,
    precision: int = 2,
) -> dict[str, Any]:
    """The book's ``display_fraction``: a quotient with its LaTeX fraction.

    Parameters
    ----------
    numerator, denominator : float or pint.Quantity
        The two parts.
    result : str, optional
        Text of the result; computed with ``precision`` significant digits when None.
    unit : str, optional
        Unit written after the result.
    precision : int, default 2
        Mantissa decimals of the parts, significant digits of a computed result.

    Returns
    -------
    dict
        ``value`` (the quotient), ``str`` and ``frac`` (a MarkdownStr).

    Examples
    --------
    >>> display_fraction(3.0e9, 1.5e9)["frac"]
    '$\\\\frac{3.00 \\\\times 10^{9}}{1.50 \\\\times 10^{9}}$ = 2'
    """
    _coerce(numerator, "numerator")  # a finite number or Quantity, else FormatError
    if _coerce(denominator, "denominator")[0] == 0:
        raise FormatError("denominator", denominator, "a non-zero number")
    try:
        value = numerator / denominator
    except OverflowError:  # two huge ints: their quotient is past a float
        raise FormatError(
            "numerator", numerator, "a quotient within the float range (< 1.8e308)"
        ) from None
    if result is None:
        try:
            ratio = value.to("") if isinstance(value, pint.Quantity) else value
        except pint.DimensionalityError:
            raise FormatError(
                "denominator", denominator, "a quantity of the numerator's dimension"
            ) from None
        x, _ = _coerce(ratio, "result")
        result = f"{x:.{_precision(precision)}g}"
    frac = fmt_frac(
        book_sci_latex(numerator, precision), book_sci_latex(denominator, precision), result, unit
    )
    return {"value": value, "str": result, "frac": frac}
