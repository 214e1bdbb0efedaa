"""The shipped catalog: accelerators, nodes, fabrics, models, grids and data centres.

Entries are TOML files in ``mlsys/core/catalog/data/`` (they ship in the wheel), loaded
on first use into typed registries:

>>> from mlsys import Hardware, Nodes, Fabrics, Models, Grids, Datacenters
>>> Hardware.H100.memory_bandwidth
<Quantity(3.35, 'terabyte / second')>
>>> Hardware["h100-sxm"] is Hardware.H100
True

Each TOML table is one entry, keyed by its canonical name, with an optional ``aliases``
list and a ``provenance`` table: ``provenance.default`` covers every field without a
``provenance.<field>`` of its own. Entries refer to one another by name (a node's
``accelerator = "H100"``).

When a data row is checked
--------------------------
The first use of a registry (a lookup, ``list()``, ``in``, ``len``) reads its TOML file
and indexes every name and alias; a malformed file raises :class:`CatalogError` then. Each
entry is validated (its pydantic type built, units and ranges checked) when it is **first
read**: ``Hardware.H100`` validates the H100 alone, a node validates the accelerator and
fabric it names, and iterating a registry (``for a in Hardware``, ``items()``) validates
every entry. An invalid row raises :class:`CatalogError` naming the file, the entry and
the field, at the latest on that first read, and again on every later read; the tests
read every entry, so a shipped row cannot be invalid.

Nothing is cached on disk
-------------------------
Every process reads the data files that ship inside the package and validates each
entry it reads: no parsed or validated copy is kept anywhere, so nothing outside the
package can change a catalog value.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import TYPE_CHECKING, Any

from mlsys.core.catalog._tables import CatalogError, load_table
from mlsys.core.catalog.registry import Deferred, Registry, normalize_key
from mlsys.core.errors import MlsysError

if TYPE_CHECKING:
    from mlsys.core.types import (
        Accelerator,
        Datacenter,
        Fabric,
        GridProfile,
        Node,
        TransformerWorkload,
        Workload,
    )

__all__ = [
    "Hardware",
    "Nodes",
    "Fabrics",
    "Models",
    "Grids",
    "Datacenters",
    "Registry",
    "Deferred",
    "normalize_key",
    "load_table",
    "CatalogError",
    "set_workload_view",
]

# Each loader imports its entry type when its registry is first used, not at import: a
# pydantic model class costs about a millisecond to create, and the first number of a
# book needs the accelerators alone (mlsys.core.types creates the others on demand).


def _build(filename: str, make: Any) -> dict[str, tuple[Deferred, list[str]]]:
    """Index a data file: each entry's aliases now, the entry itself when first read."""
    out: dict[str, tuple[Deferred, list[str]]] = {}
    for key, raw in load_table(filename).items():
        aliases = list(raw.get("aliases", []))
        out[key] = (Deferred(lambda key=key, raw=raw: _make(filename, key, raw, make)), aliases)
    return out


def _make(filename: str, key: str, raw: dict[str, Any], make: Any) -> Any:
    data = dict(raw)  # the parsed table is shared (load_table caches it): never change it
    data.pop("aliases", None)
    data.setdefault("name", key)
    try:
        entry = make(data)
    except MlsysError as exc:
        raise CatalogError(f"{filename} [{key}]: {exc}") from None
    return entry


def _accelerators() -> dict[str, tuple[Any, list[str]]]:
    from mlsys.core.types import Accelerator

    return _build("accelerators.toml", lambda d: Accelerator(**d))


def _fabrics() -> dict[str, tuple[Any, list[str]]]:
    from mlsys.core.types import Fabric

    return _build("fabrics.toml", lambda d: Fabric(**d))


def _node(data: dict[str, Any]) -> Node:
    from mlsys.core.types import Node

    data["accelerator"] = Hardware.get(data["accelerator"])
    data["intra_fabric"] = Fabrics.get(data["intra_fabric"])
    return Node(**data)


def _nodes() -> dict[str, tuple[Any, list[str]]]:
    return _build("nodes.toml", _node)


_WORKLOAD_VIEW: list[Callable[[str], Any]] = []  # see set_workload_view


def set_workload_view(view: Callable[[str], Any]) -> None:
    """Serve the textbook's names on every catalog workload through ``view``.

    *Machine Learning Systems* (harvard-edge/cs249r_book) reads
    ``Models.ResNet50.parameters``, ``.inference_flops`` and ``.size_in_bytes()`` on the
    registry's own entries. Those names answer from the object ``view(key)`` returns
    for the entry's key; :mod:`mlsys.compat` installs its ``BookModel`` here when mlsys is
    imported (the catalog imports nothing of the layers above it). mlsys's own fields
    (``params``, ``total_params``, ``flops_per_sample``) are unchanged.

    Parameters
    ----------
    view : callable
        Takes a workload's catalog key, returns an object with ``parameters``,
        ``inference_flops`` and ``size_in_bytes``.
    """
    _WORKLOAD_VIEW[:] = [view]


class _BookNames:
    """The textbook's read-only names on every catalog workload (:func:`set_workload_view`)."""

    @property
    def parameters(self) -> Any:
        """Parameter count in the book's counts (see ``mlsys.compat.models.BookModel``)."""
        return self._book_view().parameters

    @property
    def inference_flops(self) -> Any:
        """FLOPs of one forward pass of one sample, a multiply-add = 2 FLOPs (book counts)."""
        return self._book_view().inference_flops

    def size_in_bytes(self, bytes_per_param: Any = None) -> Any:
        """Weight bytes, parameters times bytes per parameter (default 2, fp16/bf16).

        Parameters
        ----------
        bytes_per_param : pint.Quantity or float, optional
            Bytes per parameter.

        Returns
        -------
        pint.Quantity
            Bytes.
        """
        return self._book_view().size_in_bytes(bytes_per_param)

    def _book_view(self) -> Any:
        if not _WORKLOAD_VIEW:
            raise AttributeError(f"{self.name}: the textbook's names are not installed")
        return _WORKLOAD_VIEW[0](self.name)  # type: ignore[attr-defined]


@cache
def _workload_classes() -> tuple[type, type]:
    """``CatalogWorkload`` and ``CatalogTransformerWorkload``, created on first use."""
    from mlsys.core.types import TransformerWorkload, Workload

    class CatalogWorkload(_BookNames, Workload):
        """A catalog :class:`~mlsys.core.types.Workload` that also answers the book's names."""

    class CatalogTransformerWorkload(_BookNames, TransformerWorkload):
        """A catalog :class:`~mlsys.core.types.TransformerWorkload` with the book's names."""

    for cls in (CatalogWorkload, CatalogTransformerWorkload):
        cls.__qualname__ = cls.__name__  # found as mlsys.core.catalog.<name> (pickle)
    return CatalogWorkload, CatalogTransformerWorkload


def __getattr__(name: str) -> Any:
    if name in ("CatalogWorkload", "CatalogTransformerWorkload"):
        workload, transformer = _workload_classes()
        return workload if name == "CatalogWorkload" else transformer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _model(data: dict[str, Any]) -> Workload | TransformerWorkload:
    workload, transformer = _workload_classes()
    kind = data.pop("kind", "transformer")
    if kind == "transformer":
        return transformer(**data)
    return workload(kind=kind, **data)


def _models() -> dict[str, tuple[Any, list[str]]]:
    return _build("models.toml", _model)


def _grids() -> dict[str, tuple[Any, list[str]]]:
    from mlsys.core.types import GridProfile

    return _build("grids.toml", lambda d: GridProfile(**d))


def _datacenter(data: dict[str, Any]) -> Datacenter:
    from mlsys.core.types import Datacenter

    data["grid"] = Grids.get(data["grid"])
    return Datacenter(**data)


def _datacenters() -> dict[str, tuple[Any, list[str]]]:
    return _build("datacenters.toml", _datacenter)


Hardware: Registry[Accelerator] = Registry("Hardware", _accelerators)
"""Accelerators: ``Hardware.H100``, ``Hardware["A100_80GB"]``, ``Hardware.list()``."""

Fabrics: Registry[Fabric] = Registry("Fabrics", _fabrics)
"""Interconnects: ``Fabrics.NVLINK4``, ``Fabrics.IB_NDR``, ``Fabrics.ETH_10G``."""

Nodes: Registry[Node] = Registry("Nodes", _nodes)
"""Servers: ``Nodes.DGX_H100``, ``Nodes.DGX_A100``, ``Nodes.HGX_H200``, ``Nodes.DGX_B200``,
and the export variants ``Nodes.HGX_H800`` and ``Nodes.HGX_A800`` (NVLink cut to 200 GB/s per
direction)."""

Models: Registry[TransformerWorkload | Workload] = Registry("Models", _models)
"""Workloads: ``Models.GPT3_175B``, ``Models.Llama2_70B``, ``Models.ResNet50``."""

Grids: Registry[GridProfile] = Registry("Grids", _grids)
"""Electricity grids: carbon intensity, water intensity and price by region."""

Datacenters: Registry[Datacenter] = Registry("Datacenters", _datacenters)
"""Facilities: PUE, WUE and the grid that feeds them."""


# The textbook's groupings (Hardware.Cloud.H100, Models.Vision.ResNet50, Models.GPT3) are
# views that mlsys.compat hangs on these registries with Registry.add_group when mlsys is
# imported: the catalog itself imports nothing of the layers above it.
