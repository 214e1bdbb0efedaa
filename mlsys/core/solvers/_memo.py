"""One bounded memo for the per-solve work solvers repeat (private).

Solvers answer in microseconds, so what depends only on the model, the hardware and a
few options (a model's shape as floats, a layout problem) is computed once and reused.
The inputs are frozen pydantic models: hashing one walks every field (slower than the
work saved), so the memo keys them by identity — and keeps a strong reference to each
keyed object inside its entry, so an id can never be reused by another object while the
entry lives (the defect of a bare ``id()`` key). Other arguments are keyed by value
(dicts and lists frozen to tuples). Entries are evicted least-recently-used beyond
``maxsize``.

Usage::

    @identity_memo(objects=2)
    def build(model, fleet, batch, precision): ...
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

__all__ = ["identity_memo", "IdentityMemo", "freeze"]

F = TypeVar("F", bound=Callable[..., Any])

_PLAIN = frozenset({int, float, str, bool, type(None)})

DEFAULT_MAXSIZE = 256
"""Entries each memo keeps (a book builds a few dozen distinct problems)."""


def freeze(value: Any) -> Any:
    """A hashable stand-in for ``value``: dicts, lists and sets become sorted tuples.

    Parameters
    ----------
    value : Any
        An argument.

    Returns
    -------
    Any
        ``value`` itself when hashable, else a frozen copy (``repr`` as the last resort).
    """
    if type(value) in _PLAIN:
        return value
    if isinstance(value, dict):
        return ("__dict__", *tuple(sorted((k, freeze(v)) for k, v in value.items())))
    if isinstance(value, (list, tuple)):
        return ("__seq__", *tuple(freeze(v) for v in value))
    if isinstance(value, (set, frozenset)):
        return ("__set__", *tuple(sorted(freeze(v) for v in value)))
    try:
        hash(value)
    except TypeError:
        return ("__repr__", repr(value))
    return value


class IdentityMemo:
    """A bounded LRU map from (objects by identity, other values) to a result.

    Parameters
    ----------
    maxsize : int
        Entries kept.
    """

    __slots__ = ("_entries", "maxsize")

    def __init__(self, maxsize: int = DEFAULT_MAXSIZE) -> None:
        self._entries: OrderedDict[tuple, tuple[tuple, Any]] = OrderedDict()
        self.maxsize = maxsize

    def get(self, objects: tuple, values: tuple) -> Any:
        """The stored result, or the :data:`MISSING` sentinel.

        Parameters
        ----------
        objects : tuple
            Arguments keyed by identity.
        values : tuple
            Hashable arguments keyed by value.

        Returns
        -------
        Any
        """
        key = (tuple(map(id, objects)), values)
        hit = self._entries.get(key)
        if hit is None:
            return MISSING
        held, result = hit
        for a, b in zip(held, objects, strict=True):
            if a is not b:  # cannot happen while the entry holds them; cheap insurance
                return MISSING
        self._entries.move_to_end(key)
        return result

    def put(self, objects: tuple, values: tuple, result: Any) -> None:
        """Store ``result``, evicting the least recently used entry beyond ``maxsize``.

        Parameters
        ----------
        objects, values : tuple
            As in :meth:`get`.
        result : Any
            The value to keep.
        """
        self._entries[(tuple(map(id, objects)), values)] = (objects, result)
        while len(self._entries) > self.maxsize:
            self._entries.popitem(last=False)

    def clear(self) -> None:
        """Forget every entry."""
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


def _same(a: Any, b: Any) -> bool:
    return a is b


MISSING = object()
"""Returned by :meth:`IdentityMemo.get` when nothing is stored."""


def identity_memo(objects: int = 1, maxsize: int = DEFAULT_MAXSIZE) -> Callable[[F], F]:
    """Memoise a function whose first ``objects`` positional arguments are keyed by identity.

    The remaining positional and keyword arguments are keyed by value and type (``True``
    and ``1`` are different keys) through :func:`freeze`. The wrapped function gains a
    ``memo`` attribute (the :class:`IdentityMemo`, e.g. to ``clear()`` it in a test).

    Parameters
    ----------
    objects : int
        How many leading positional arguments are keyed by identity.
    maxsize : int
        Entries kept.

    Returns
    -------
    callable
        The decorator.
    """

    def decorate(fn: F) -> F:
        memo = IdentityMemo(maxsize)

        entries = memo._entries

        @wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            objs = args[:objects]
            rest = args[objects:]
            if kwargs:
                rest += tuple(sorted((k, type(v), v) for k, v in kwargs.items()))
            # keyed by type too: True == 1 and hash(True) == hash(1), so without the
            # types a refused ``tp_size=True`` would be served the result of ``tp_size=1``
            rest += (tuple(map(type, args[objects:])),)
            key = (tuple(map(id, objs)), rest)
            try:  # the common case: every value argument is hashable as it stands
                hit = entries.get(key)
            except TypeError:  # a dict or list among them: freeze it
                rest = tuple(map(freeze, rest))
                key = (key[0], rest)
                hit = entries.get(key)
            if hit is not None and all(map(_same, hit[0], objs)):
                entries.move_to_end(key)
                return hit[1]
            result = fn(*args, **kwargs)
            memo.put(objs, rest, result)
            return result

        wrapper.memo = memo  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate
