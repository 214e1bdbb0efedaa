"""Numbers that remember where they came from, through arithmetic.

A catalog value, a solver's result field and a number an author marks with
:func:`mlsys.core.provenance.sourced` are handed out as a :class:`TracedFloat` or
:class:`TracedInt` (inside a pint Quantity when they have a unit). Each is a ``float``
or ``int`` in every respect that matters to a reader or to Python (equality, hashing,
ordering, ``repr``, ``json``, ``isinstance``) and carries a tuple of origins. Arithmetic
on it returns the same kind of number with the origins of both operands, so
``fmt(res.step_time * 1000)``, ``times(a / b)`` and ``fmt(bw * 8)`` still know their
sources. pint keeps a magnitude's type through its own arithmetic and unit conversions
(it multiplies the magnitude by a factor: ``PlainRegistry._convert`` writes
``value = value * factor``), so a Quantity with a traced magnitude stays traced through
``.to()``, ``.m_as()``, ``to_compact()`` and ``+ − × ÷``.

One order loses them: a plain ``float`` (or a Quantity with a plain magnitude) on the
*left* of a :class:`TracedInt` (``2.5 * n``, ``Q_(4.0, "s") / n``). Python asks the left
operand first, and ``float``'s operators accept any ``int``; only a subclass of the left
type is asked first, and an ``int`` subclass cannot also be a ``float`` one. With the
traced int on the left (``n * 2.5``, ``n * Q_(…)``), or a traced float, nothing is lost.

What strips the origins, on purpose or by Python's design: ``float(x)`` and ``int(x)``
(the solvers' door, :func:`mlsys.core.units.as_si`, calls ``float`` so that inner code
runs on plain floats at full speed), ``math.*`` functions (they return plain floats),
f-strings and ``str()``, and numpy arrays built from traced numbers (an array holds plain
float64 values). numpy *scalar* functions keep them (``np.sqrt(x)`` is traced) through
``__array_ufunc__``. An array field of a recorded result (``curve.scaling_efficiency``)
is a :func:`traced_array`: its elements, slices, ufunc results and reductions
(``curve.mfu[-1]``, ``curve.mfu.max()``) carry the result's origin.

Examples
--------
>>> from mlsys.core.provenance import TextOrigin
>>> x = TracedFloat(3.35e12, (TextOrigin("datasheet"),))
>>> y = x * 8 / 1e12
>>> y == 26.8, type(y).__name__, [o.describe() for o in origins(y)]
(True, 'TracedFloat', ['datasheet'])
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

__all__ = [
    "TracedFloat",
    "TracedInt",
    "MAX_ORIGINS",
    "origins",
    "traced",
    "traced_magnitude",
    "traced_array",
    "merge",
]

MAX_ORIGINS = 24
"""A number derived from more origins than this keeps the first ones: the tooltip that
names them is cut to a few hundred characters anyway (``MAX_TITLE_CHARS``)."""

_EMPTY: tuple[Any, ...] = ()


class TextOrigin:
    """An origin the author states in words (``fmt(x, source="Patterson et al. 2021")``).

    Parameters
    ----------
    text : str
        The origin, as it should appear in the tooltip.
    """

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TextOrigin) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)

    def __repr__(self) -> str:
        return f"TextOrigin({self.text!r})"

    def describe(self) -> str:
        """The text as given.

        Returns
        -------
        str
        """
        return self.text


# Documented, linked and pickled as mlsys.core.provenance.TextOrigin, beside the other
# origins, where users import it from; it lives here because a traced number rebuilds
# its origins as text (__reduce__) and provenance builds on this module.
TextOrigin.__module__ = "mlsys.core.provenance"


def merge(a: tuple[Any, ...], b: tuple[Any, ...]) -> tuple[Any, ...]:
    """The origins of ``a`` followed by those of ``b`` not already in ``a``.

    Parameters
    ----------
    a, b : tuple
        Origin tuples (first-seen order).

    Returns
    -------
    tuple
        At most :data:`MAX_ORIGINS` origins, each once (origins compare by what they
        name, so two reads of the same field count once).
    """
    if a is b or not b:
        return a
    if not a:
        return b
    extra = tuple(o for o in b if o not in a)
    if not extra:
        return a
    out = a + extra
    return out if len(out) <= MAX_ORIGINS else out[:MAX_ORIGINS]


def origins(value: Any) -> tuple[Any, ...]:
    """The origins a number (or a Quantity's magnitude) carries; empty if none.

    Parameters
    ----------
    value : Any
        A number, a pint Quantity or anything else.

    Returns
    -------
    tuple
        Origin objects, first-seen order.
    """
    found = getattr(value, "_origins", None)
    if found is None:
        found = getattr(getattr(value, "_magnitude", None), "_origins", None)
    return _EMPTY if found is None else found


def traced(value: Any, found: tuple[Any, ...]) -> Any:
    """``value`` as a traced number carrying ``found`` (unchanged if it cannot carry them).

    Floats and numpy floating scalars become :class:`TracedFloat`, ints (not bools) and
    numpy integer scalars :class:`TracedInt`; a value that already carries origins gets
    the union. Anything else (arrays, strings, None) is returned as it is.

    Parameters
    ----------
    value : Any
        A plain number.
    found : tuple
        Origin objects.

    Returns
    -------
    TracedFloat, TracedInt or the value unchanged
    """
    if not found:
        return value
    kind = type(value)
    if kind is float or kind is TracedFloat:
        return TracedFloat(value, merge(getattr(value, "_origins", _EMPTY), found))
    if kind is int or kind is TracedInt:
        return TracedInt(value, merge(getattr(value, "_origins", _EMPTY), found))
    if kind is bool:
        return value
    # numpy scalars (np.float64 is a float subclass; np.int64 is not an int one)
    if getattr(value, "shape", None) == () and hasattr(value, "dtype"):
        code = value.dtype.kind
        if code == "f":
            return TracedFloat(float(value), found)
        if code in "iu":
            return TracedInt(int(value), found)
    return value


def traced_magnitude(value: Any, found: tuple[Any, ...]) -> Any:
    """Like :func:`traced`, for a Quantity's magnitude: a whole number becomes a float.

    pint divides a Quantity whose magnitude is an ``int`` by first calling ``float()`` on
    it (``PlainQuantity._truedivide_cast_int``), which would drop the origins; a float
    magnitude formats identically and keeps them.

    Parameters
    ----------
    value : Any
        A magnitude.
    found : tuple
        Origin objects.

    Returns
    -------
    TracedFloat or the value unchanged (arrays)
    """
    kind = type(value)
    if found and (kind is int or kind is TracedInt):
        return TracedFloat(value, merge(getattr(value, "_origins", _EMPTY), found))
    out = traced(value, found)
    if type(out) is TracedInt:
        return TracedFloat(out, out._origins)
    return out


_ARRAY_CLASS: list[type] = []


def _traced_array_class() -> type:
    """The ndarray subclass, built on first use (this module must not import numpy)."""
    if _ARRAY_CLASS:
        return _ARRAY_CLASS[0]
    import numpy as np

    class TracedArray(np.ndarray):
        """An ndarray whose elements, views, ufunc results and reductions carry origins."""

        _origins: tuple[Any, ...] = _EMPTY

        def __array_finalize__(self, obj: Any) -> None:
            if obj is not None:
                self._origins = getattr(obj, "_origins", _EMPTY)

        def __getitem__(self, index: Any) -> Any:
            out = super().__getitem__(index)
            if isinstance(out, np.ndarray):
                return out  # a view: __array_finalize__ gave it the origins
            return traced(out, self._origins)

        def __array_wrap__(
            self, array: Any, context: Any = None, return_scalar: bool = False
        ) -> Any:
            found = self._origins
            if context is not None:  # (ufunc, inputs, output index): every input's origins
                for item in context[1]:
                    found = merge(found, getattr(item, "_origins", None) or _EMPTY)
            out = super().__array_wrap__(array, context, return_scalar)
            if isinstance(out, np.ndarray):
                if return_scalar and out.ndim == 0:  # a reduction (a.max()): a scalar
                    return traced(np.ndarray.__getitem__(out, ()), found)
                out._origins = found
                return out
            return traced(out, found)

        def __reduce__(self) -> Any:
            # Pickled as a plain ndarray: origins refer to live objects (results, entries).
            return np.asarray(self).__reduce__()

    _ARRAY_CLASS.append(TracedArray)
    return TracedArray


def traced_array(value: Any, found: tuple[Any, ...]) -> Any:
    """A view of a numpy array whose elements and derived arrays carry ``found``.

    Parameters
    ----------
    value : numpy.ndarray
        The array (not copied).
    found : tuple
        Origin objects.

    Returns
    -------
    numpy.ndarray
        A subclass view; ``a[i]``, ``a.max()``, ``a * 2`` and ``np.mean(a)`` keep the
        origins. ``a.tolist()``, ``float(a[i])`` and ``list(a)`` of plain arrays do not.
    """
    if not found:
        return value
    out = value.view(_traced_array_class())
    out._origins = merge(getattr(value, "_origins", None) or _EMPTY, found)
    return out


def _is_quantity(other: Any) -> bool:
    # pint's Quantity handles number × Quantity itself (its reflected operators multiply
    # its magnitude, which keeps the origins of both): leave it to pint.
    return hasattr(other, "_magnitude") and hasattr(other, "_units")


def _binary(op: Callable[[Any, Any], Any], name: str) -> tuple[Callable, Callable]:
    """The forward and reflected dunder for one operator."""

    def forward(self: Any, other: Any) -> Any:
        kind = type(other)
        if kind is float or kind is int:  # the common case: a plain number, one lookup less
            return _wrap(op(self._plain(), other), self._origins)
        if _is_quantity(other):
            if isinstance(self, int):
                # pint would multiply its float magnitude by this int, and float's own
                # operator accepts any int, losing the origins: hand pint a traced float,
                # whose reflected operator Python tries first.
                return op(TracedFloat(self._plain(), self._origins), other)
            return NotImplemented
        theirs = getattr(other, "_origins", None)
        if theirs is not None and isinstance(other, _Traced):
            return _wrap(op(self._plain(), other._plain()), merge(self._origins, theirs))
        return traced(op(self._plain(), other), self._origins)

    def reflected(self: Any, other: Any) -> Any:
        kind = type(other)
        if kind is float or kind is int:
            return _wrap(op(other, self._plain()), self._origins)
        if _is_quantity(other):
            return NotImplemented
        return traced(op(other, self._plain()), self._origins)

    forward.__name__ = f"__{name}__"
    reflected.__name__ = f"__r{name}__"
    return forward, reflected


def _wrap(result: Any, found: tuple[Any, ...]) -> Any:
    """A plain float or int result of an operator as a traced one (others via traced)."""
    kind = type(result)
    if kind is float:
        out = _new_float(TracedFloat, result)
        out._origins = found
        return out
    if kind is int:
        out = _new_int(TracedInt, result)
        out._origins = found
        return out
    return traced(result, found)


_new_float = float.__new__
_new_int = int.__new__


def _unary(op: Callable[[Any], Any], name: str) -> Callable:
    def method(self: Any) -> Any:
        return traced(op(self._plain()), self._origins)

    method.__name__ = f"__{name}__"
    return method


def _rebuild(cls: type, value: Any, texts: tuple[str, ...]) -> Any:
    return cls(value, tuple(TextOrigin(t) for t in texts))


class _Traced:
    """Arithmetic shared by :class:`TracedFloat` and :class:`TracedInt`."""

    __slots__ = ()
    _origins: tuple[Any, ...]

    def _plain(self) -> Any:  # overridden: the value as a plain float or int
        raise NotImplementedError

    __add__, __radd__ = _binary(operator.add, "add")
    __sub__, __rsub__ = _binary(operator.sub, "sub")
    __mul__, __rmul__ = _binary(operator.mul, "mul")
    __truediv__, __rtruediv__ = _binary(operator.truediv, "truediv")
    __floordiv__, __rfloordiv__ = _binary(operator.floordiv, "floordiv")
    __mod__, __rmod__ = _binary(operator.mod, "mod")
    _pow, __rpow__ = _binary(operator.pow, "pow")

    def __pow__(self, other: Any, mod: Any = None) -> Any:
        if mod is None:
            return self._pow(other)
        theirs = merge(getattr(other, "_origins", _EMPTY), getattr(mod, "_origins", _EMPTY))
        plain = [getattr(v, "_plain", lambda v=v: v)() for v in (other, mod)]
        return traced(pow(self._plain(), *plain), merge(self._origins, theirs))

    __neg__ = _unary(operator.neg, "neg")
    __pos__ = _unary(operator.pos, "pos")
    __abs__ = _unary(operator.abs, "abs")

    def __divmod__(self, other: Any) -> Any:
        return (self // other, self % other)

    def __rdivmod__(self, other: Any) -> Any:
        return (other // self, other % self)

    def __round__(self, ndigits: int | None = None) -> Any:
        return traced(round(self._plain(), ndigits), self._origins)

    def __trunc__(self) -> Any:
        import math

        return traced(math.trunc(self._plain()), self._origins)

    def __floor__(self) -> Any:
        import math

        return traced(math.floor(self._plain()), self._origins)

    def __ceil__(self) -> Any:
        import math

        return traced(math.ceil(self._plain()), self._origins)

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        # numpy scalars and scalar ufuncs (np.float64(2) * x, np.sqrt(x)) keep the origins;
        # an array result holds plain float64 values and carries none.
        found: tuple[Any, ...] = _EMPTY
        plain = []
        for item in inputs:
            mine = getattr(item, "_origins", None)
            if mine is not None:
                found = merge(found, mine)
                if isinstance(item, _Traced):  # a traced array stays an array
                    item = item._plain()
            plain.append(item)
        result = getattr(ufunc, method)(*plain, **kwargs)
        if isinstance(result, tuple):
            return tuple(traced(r, found) for r in result)
        return traced(result, found)

    def __reduce__(self) -> tuple[Any, ...]:
        # Origins travel as their text: a catalog origin refers to its entry, whose
        # Quantities refer back to the origin, a cycle pickle cannot rebuild.
        texts = tuple(o.describe() for o in self._origins)
        return (_rebuild, (type(self), self._plain(), texts))

    def __copy__(self) -> Any:
        return self

    def __deepcopy__(self, memo: Any) -> Any:
        return self


class TracedFloat(_Traced, float):
    """A ``float`` that carries its origins through arithmetic.

    Parameters
    ----------
    value : float
        The number (any unit: a Quantity holds it as its magnitude).
    origins : tuple
        Origin objects (:class:`~mlsys.core.provenance.CatalogOrigin`,
        :class:`~mlsys.core.provenance.ResultOrigin`,
        :class:`~mlsys.core.provenance.TextOrigin`).

    Notes
    -----
    Equal to, hashed like, ordered like and printed like ``float(value)``. Every
    arithmetic operator (``+ - * / // % **``, reflected too, unary ``- + abs``,
    ``round``, ``math.floor``/``ceil``/``trunc``, ``divmod``) returns a traced number
    with the union of both operands' origins. ``float(x)`` returns a plain float.
    """

    __slots__ = ("_origins",)

    def __new__(cls, value: Any, origins: tuple[Any, ...]) -> TracedFloat:
        self = float.__new__(cls, value)
        self._origins = origins
        return self

    def _plain(self) -> float:
        return float.__float__(self)


class TracedInt(_Traced, int):
    """An ``int`` that carries its origins through arithmetic (see :class:`TracedFloat`).

    Parameters
    ----------
    value : int
        The whole number (a GPU count, a batch size).
    origins : tuple
        Origin objects.

    Notes
    -----
    ``int + int`` stays a :class:`TracedInt`; ``int / int`` becomes a
    :class:`TracedFloat`. ``int(x)`` and ``range(x)`` see a plain int. Python does not
    allow ``__slots__`` with contents on an ``int`` subclass, so the origins live in the
    instance dictionary.
    """

    def __new__(cls, value: Any, origins: tuple[Any, ...]) -> TracedInt:
        self = int.__new__(cls, value)
        self._origins = origins
        return self

    def _plain(self) -> int:
        return int.__int__(self)
