"""A typed registry of catalog entries with forgiving lookup.

``Hardware.H100``, ``Hardware["h100-sxm"]`` and ``Hardware["H100 SXM"]`` all find the same
entry: names are compared with case, spaces, dashes, underscores and dots removed, and
each entry may list aliases. An unknown name raises :class:`UnknownEntryError` with the
closest names.

Entries are built one at a time, on first access: a registry knows every name and alias
as soon as it is first used, but validates a data row only when that entry is first read
(:class:`Deferred`). Reading ``Hardware.H100`` validates the H100 alone; iterating a
registry, ``items()`` or its Markdown table builds every entry.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from functools import lru_cache
from typing import Any, Generic, TypeVar

from mlsys.core.errors import ParameterError, UnknownEntryError

__all__ = ["Deferred", "Registry", "UnknownEntryAttributeError", "normalize_key"]

T = TypeVar("T")

_STRIP = re.compile(r"[^a-z0-9]")


class UnknownEntryAttributeError(UnknownEntryError, AttributeError):
    """An unknown name asked for as an attribute (``Models.Llama4``).

    Both an :class:`~mlsys.core.errors.UnknownEntryError` (so ``except UnknownEntryError``
    catches it and the message lists the closest names) and an :class:`AttributeError`
    (so ``hasattr(Models, "Llama4")`` is ``False`` and ``getattr(..., default)`` works).
    """


@lru_cache(maxsize=4096)
def normalize_key(name: str) -> str:
    """Lookup form of a name: lower case, letters and digits only.

    Parameters
    ----------
    name : str
        E.g. ``"H100-SXM"``.

    Returns
    -------
    str
        E.g. ``"h100sxm"``.
    """
    # Cached: chapter code and solvers look the same few names up on every call
    # (``Models.GPT3_175B`` inside a loop), and the regex is most of a lookup's time.
    return _STRIP.sub("", name.lower())


class Deferred:
    """An entry still to be built: a registry calls ``build()`` when the entry is first read.

    A loader returns ``Deferred(build)`` in place of an entry to postpone its validation
    (a pydantic model built from a data row) until someone asks for it. If ``build``
    raises, the entry stays deferred and the next access raises again.

    Parameters
    ----------
    build : callable
        Zero-argument function returning the entry.
    """

    __slots__ = ("build",)

    def __init__(self, build: Callable[[], Any]) -> None:
        self.build = build

    def __repr__(self) -> str:
        return "<deferred catalog entry>"


class Registry(Generic[T]):
    """Named entries of one type, loaded lazily from the shipped catalog.

    Parameters
    ----------
    name : str
        Registry name used in messages (``"Hardware"``).
    loader : callable
        Returns ``{key: (entry, aliases)}``, where an entry may be a :class:`Deferred`
        (built on first access); called once, on first use of the registry.
    """

    def __init__(
        self, name: str, loader: Callable[[], dict[str, tuple[T | Deferred, list[str]]]]
    ) -> None:
        self._name = name
        self._loader = loader
        self._entries: dict[str, T | Deferred] | None = None
        self._index: dict[str, str] = {}
        self._groups: dict[str, Callable[[], object]] = {}
        self._group_cache: dict[str, object] = {}
        # One build per entry even if two threads read it first at once (an entry is
        # compared by identity: provenance and the solvers' memo tables rely on it).
        self._lock = threading.RLock()

    # -- loading ------------------------------------------------------------------
    def _load(self) -> dict[str, T | Deferred]:
        """Names, aliases and (possibly deferred) entries; validates nothing itself."""
        if self._entries is None:
            with self._lock:
                if self._entries is None:
                    entries: dict[str, T | Deferred] = {}
                    for key, (entry, aliases) in self._loader().items():
                        entries[key] = entry
                        self._add_index(key, key, aliases)
                    self._entries = entries
        return self._entries

    def _entry(self, key: str) -> T:
        """The entry under a canonical key, built now if it was deferred."""
        entries = self._load()
        entry = entries[key]
        if isinstance(entry, Deferred):
            with self._lock:
                entry = entries[key]
                if isinstance(entry, Deferred):
                    entry = entry.build()
                    entries[key] = entry
        return entry  # type: ignore[return-value]

    def built(self) -> list[str]:
        """Canonical names of the entries built so far (the rest are built when first read).

        Returns
        -------
        list of str
        """
        return [k for k, v in self._load().items() if not isinstance(v, Deferred)]

    def _add_index(self, key: str, canonical: str, aliases: list[str]) -> None:
        for alias in [key, *aliases]:
            norm = normalize_key(alias)
            owner = self._index.get(norm)
            if owner is not None and owner != canonical:
                raise ParameterError(
                    "alias", alias, f"a name not already used by {self._name}.{owner}"
                )
            self._index[norm] = canonical

    # -- lookup -------------------------------------------------------------------
    def get(self, name: str) -> T:
        """Entry by name (case, spaces and separators ignored; aliases accepted).

        Parameters
        ----------
        name : str
            Name or alias.

        Returns
        -------
        entry
            The catalog object.

        Raises
        ------
        UnknownEntryError
            With the closest names when nothing matches.
        """
        self._load()
        if not isinstance(name, str):
            raise UnknownEntryError(self._name, repr(name), [])
        canonical = self._index.get(normalize_key(name))
        if canonical is None:
            raise UnknownEntryError(self._name, name, self.suggest(name))
        return self._entry(canonical)

    def suggest(self, name: str, n: int = 3) -> list[str]:
        """Closest canonical names to ``name``, best first.

        Parameters
        ----------
        name : str
            The misspelt name.
        n : int
            How many suggestions at most.

        Returns
        -------
        list of str
        """
        import difflib  # only a misspelt name needs it: not part of the first lookup

        self._load()
        norm = normalize_key(name)
        close = difflib.get_close_matches(norm, list(self._index), n=n * 3, cutoff=0.5)
        prefix = [k for k in self._index if norm and (k.startswith(norm) or norm in k)]
        out: list[str] = []
        for k in [*prefix, *close]:
            canonical = self._index[k]
            if canonical not in out:
                out.append(canonical)
        return out[:n]

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def __getattr__(self, name: str) -> T:
        if name.startswith("_"):
            raise AttributeError(name)
        groups = self.__dict__.get("_groups", {})
        if name in groups:
            return self._group(name)  # type: ignore[return-value]
        # An attribute name, once found, names the same entry for good (entries are
        # never replaced or removed: register() refuses a name in use), so the hot path
        # ``Models.GPT3_175B`` inside a solver loop is one dict read.
        by_attribute = self.__dict__.setdefault("_by_attribute", {})
        entry = by_attribute.get(name)
        if entry is not None:
            return entry  # type: ignore[no-any-return]
        try:
            entry = self.get(name)
        except UnknownEntryError as exc:
            raise UnknownEntryAttributeError(exc.registry, exc.key, exc.suggestions) from None
        by_attribute[name] = entry
        return entry

    # -- groups -------------------------------------------------------------------
    def add_group(self, name: str, factory: Callable[[], object]) -> None:
        """Hang a named sub-namespace on this registry (``Hardware.Cloud``).

        Groups are how a book's own grouping of the catalog (by deployment tier, by
        model family) is offered without a second copy of the entries: the factory
        builds, on first access, an object whose attributes are views of this
        registry's entries. A group name never shadows an entry name.

        Parameters
        ----------
        name : str
            Attribute name of the group (e.g. ``"Cloud"``).
        factory : callable
            Returns the group object; called once, on first access.
        """
        if not name.isidentifier() or name.startswith("_"):
            raise ParameterError("group name", name, "a public Python identifier")
        self._groups[name] = factory
        self._group_cache.pop(name, None)

    def groups(self) -> list[str]:
        """Names of the groups hung on this registry (``["Cloud", "Edge", ...]``).

        Returns
        -------
        list of str
        """
        return list(self._groups)

    def _group(self, name: str) -> object:
        if name not in self._group_cache:
            self._group_cache[name] = self._groups[name]()
        return self._group_cache[name]

    def __contains__(self, name: object) -> bool:
        self._load()
        return isinstance(name, str) and normalize_key(name) in self._index

    def __iter__(self) -> Iterator[T]:
        # Builds each entry as the iteration reaches it (all of them, if run to the end).
        for key in list(self._load()):
            yield self._entry(key)

    def __len__(self) -> int:
        return len(self._load())

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._load()) | set(self._groups))

    def list(self) -> list[str]:
        """Canonical names of every entry, in catalog order.

        Returns
        -------
        list of str
        """
        return list(self._load())

    def items(self) -> list[tuple[str, T]]:
        """``(name, entry)`` pairs in catalog order (builds every entry).

        Returns
        -------
        list of tuple
        """
        return [(key, self._entry(key)) for key in list(self._load())]

    def register(self, entry: T, *, aliases: list[str] | tuple[str, ...] = ()) -> T:
        """Add a user-defined entry (e.g. a hypothetical accelerator) to this registry.

        Parameters
        ----------
        entry : catalog object
            Must have a ``name`` not already in use.
        aliases : sequence of str
            Further names to find it by.

        Returns
        -------
        entry
            The entry, for chaining.
        """
        entries = self._load()
        key = getattr(entry, "name", None)
        if not isinstance(key, str) or not key:
            raise ParameterError("entry.name", key, "a non-empty name")
        if normalize_key(key) in self._index:
            raise ParameterError("entry.name", key, f"a name not already in {self._name}")
        self._add_index(key, key, list(aliases))
        entries[key] = entry
        return entry

    def __repr__(self) -> str:
        if self._entries is None:
            return f"<{self._name} registry (not loaded yet)>"
        return f"<{self._name} registry: {', '.join(self._entries)}>"

    def _repr_markdown_(self) -> str:
        rows = [f"**{self._name}**", "", "| name | description |", "|---|---|"]
        for key, entry in self.items():
            rows.append(f"| {key} | {getattr(entry, 'label', key)} |")
        return "\n".join(rows)
