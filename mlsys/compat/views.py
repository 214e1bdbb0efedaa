"""Registry views as queries over the catalog and the book's data tables.

A group of the textbook's registries (``Systems.Fabrics``, ``Hardware.Cloud``,
``Models.Language``, ``Infrastructure.Racks``) is not a list typed here: it is

- every catalog entry a query selects (by data file and ``kind``), under its key and each
  alias that is a Python name (``Fabrics.IB_GDR`` is ``Systems.Fabrics.InfiniBand_GXDR``
  through its alias), so an entry added to the catalog appears in the group without a
  change here; and
- the book's own names (a table of ``book_*.toml``), which win where both name one.

Records (``Infrastructure.Racks.AI_High``) and value groups
(``Scenarios.Workloads``) come from the tables of ``book_systems.toml`` the same way:
every table under a heading is a member.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mlsys.compat._data import book_table, field_source, field_value
from mlsys.compat._namespace import Namespace
from mlsys.compat.rules import UnitSuffixed

_LABELS = frozenset({"name", "display_name", "description"})  # text, never a Quantity

__all__ = ["catalog_members", "Record", "record_group", "values_group", "query_group"]


def catalog_members(
    filename: str, make: Callable[[str, str], Any], where: Callable[[dict], bool] | None = None
) -> dict[str, Callable[[], Any]]:
    """Factories for every catalog entry of ``filename`` that ``where`` selects.

    Parameters
    ----------
    filename : str
        A catalog data file (``"fabrics.toml"``).
    make : callable
        ``make(book_name, key)`` builds the view of one entry.
    where : callable, optional
        ``where(row)`` on the entry's raw table; all entries when omitted.

    Returns
    -------
    dict
        Name (the key, and each alias that is a Python identifier) -> factory.
    """
    from mlsys.core.catalog import load_table

    out: dict[str, Callable[[], Any]] = {}
    for key, row in load_table(filename).items():
        if where is not None and not where(row):
            continue
        one = _once(lambda k=key: make(k, k))  # every alias is the same view
        for name in (key, *row.get("aliases", ())):
            if name.isidentifier():
                out.setdefault(name, one)
    return out


def _once(factory: Callable[[], Any]) -> Callable[[], Any]:
    built: list[Any] = []

    def get() -> Any:
        if not built:
            built.append(factory())
        return built[0]

    return get


def query_group(
    path: str, table: dict[str, Callable[[], Any]], queried: dict[str, Callable[[], Any]]
) -> Namespace:
    """A lazy namespace of the book's names over the catalog query's (the book's win).

    Parameters
    ----------
    path : str
        Dotted name for messages (``"Systems.Fabrics"``).
    table : dict
        The book's names -> factories.
    queried : dict
        :func:`catalog_members` of the query.

    Returns
    -------
    Namespace
    """
    return Namespace(path, {**queried, **table}, lazy=True)


class Record(UnitSuffixed):
    """One record of the book's tables: named fields, each with its source.

    Parameters
    ----------
    path : str
        Its registry path (``"Infrastructure.Racks.AI_High"``).
    raw : dict
        The table: field -> spec (see :func:`mlsys.compat._data.field_value`).
    provenance : dict
        The group's provenance table (``_all`` covers every field).

    Attributes
    ----------
    sources : dict
        Field -> provenance.
    """

    def __init__(self, path: str, raw: dict[str, Any], provenance: dict[str, Any]) -> None:
        raw = dict(raw)
        own = raw.pop("provenance", {})
        self.path = path
        self.sources = {}
        for field, spec in raw.items():
            label = field in _LABELS and isinstance(spec, str)
            setattr(self, field, spec if label else field_value(spec))
            prov = own.get(field, own.get("_all", provenance.get(field, provenance.get("_all"))))
            self.sources[field] = field_source(spec, prov)

    def __repr__(self) -> str:
        return f"<{self.path}>"


def record_group(path: str, raw: dict[str, Any]) -> Namespace:
    """Every table of ``raw`` as a :class:`Record` (``Infrastructure.Racks``).

    Parameters
    ----------
    path : str
        Dotted name of the group.
    raw : dict
        Member name -> its table; ``provenance`` covers them all.

    Returns
    -------
    Namespace
    """
    raw = dict(raw)
    prov = raw.pop("provenance", {})
    return Namespace(
        path,
        {n: (lambda n=n, r=r: Record(f"{path}.{n}", r, prov)) for n, r in raw.items()},
        lazy=True,
    )


def values_group(path: str, raw: dict[str, Any]) -> Namespace:
    """Every field of ``raw`` as a value, with ``sources`` (``Scenarios.Workloads``).

    Parameters
    ----------
    path : str
        Dotted name of the group.
    raw : dict
        Name -> spec; ``provenance`` (per name, or ``_all``) gives each source.

    Returns
    -------
    Namespace
    """
    raw = dict(raw)
    prov = raw.pop("provenance", {})
    ns = Namespace(path, {f: field_value(s) for f, s in raw.items()})
    sources = {f: field_source(s, prov.get(f, prov.get("_all"))) for f, s in raw.items()}
    object.__setattr__(ns, "sources", sources)
    return ns


def book_records(group: str) -> dict[str, Any]:
    """The ``[records.GROUP.*]`` tables of ``book_systems.toml``.

    Parameters
    ----------
    group : str
        ``"Racks"``, ``"FacilityCooling"``, ``"Datasets"``.

    Returns
    -------
    dict
    """
    return book_table("book_systems.toml").get("records", {}).get(group, {})
