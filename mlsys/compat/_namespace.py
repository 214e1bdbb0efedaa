"""A read-mostly attribute namespace with the registries' forgiving error.

The book walks paths such as ``Systems.Reliability.Gpu.mttf_hours``; each step is a
:class:`Namespace`. An unknown name raises
:class:`~mlsys.core.catalog.registry.UnknownEntryAttributeError` (an
``UnknownEntryError`` and an ``AttributeError``) with the closest names, as the catalog
registries do.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from typing import Any

from mlsys.core.catalog.registry import UnknownEntryAttributeError

__all__ = ["Namespace"]


class Namespace:
    """Named members, built lazily, reachable as attributes.

    Parameters
    ----------
    name : str
        Dotted name used in messages (``"Hardware.Cloud"``).
    members : dict
        Member name -> value, or -> zero-argument callable building the value on first
        access (``lazy=True``).
    lazy : bool
        Whether member values are factories.
    """

    def __init__(self, name: str, members: dict[str, Any], *, lazy: bool = False) -> None:
        object.__setattr__(self, "_name", name)
        object.__setattr__(self, "_members", dict(members))
        object.__setattr__(self, "_lazy", lazy)
        object.__setattr__(self, "_built", {})

    def __getattr__(self, item: str) -> Any:
        if item.startswith("_"):
            raise AttributeError(item)
        members: dict[str, Any] = self._members
        if item not in members:
            from mlsys.compat.rules import unit_suffix_value

            try:  # the one rule: <field>_<unit> of a member (``ram_gb``)
                return unit_suffix_value(self, item)
            except AttributeError:
                pass
            close = difflib.get_close_matches(item, list(members), n=3, cutoff=0.4)
            raise UnknownEntryAttributeError(self._name, item, close)
        if not self._lazy:
            return members[item]
        built: dict[str, Any] = self._built
        if item not in built:
            factory: Callable[[], Any] = members[item]
            built[item] = factory()
        return built[item]

    def __setattr__(self, item: str, value: Any) -> None:
        # the book assigns to registry paths in a few cells; keep it local to this view
        self._built[item] = value
        self._members.setdefault(item, lambda: value)
        if not self._lazy:
            self._members[item] = value

    def __dir__(self) -> list[str]:
        return sorted(self._members)

    def __iter__(self) -> Iterator[Any]:
        # each entry once, though a catalog entry is reachable by its key and its aliases
        seen: set[Any] = set()
        for name in self._members:
            value = getattr(self, name)
            ident = (type(value).__name__, getattr(value, "key", None) or id(value))
            if ident not in seen:
                seen.add(ident)
                yield value

    def __contains__(self, item: object) -> bool:
        return item in self._members

    def list(self) -> list[str]:
        """Member names, in file order.

        Returns
        -------
        list of str
        """
        return list(self._members)

    def __repr__(self) -> str:
        return f"<{self._name}: {', '.join(self._members)}>"
