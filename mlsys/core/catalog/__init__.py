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


class _BookNames:
    """The textbook's read-only names on every catalog workload (issue 15).

    *Machine Learning Systems* (harvard-edge/cs249r_book) reads ``Models.ResNet50.parameters``
    and ``.size_in_bytes()`` on the registry itself; these delegate to
    :class:`mlsys.compat.models.BookModel` (book counts, cited sources). mlsys's own fields
    (``params``, ``total_params``, ``flops_per_sample``) are unchanged.
    """

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
        import importlib

        models = importlib.import_module("mlsys.compat.models")
        return models.BookModel(self.name, self.name)  # type: ignore[attr-defined]


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


# -- the textbook's groupings, as views (issue 15) ---------------------------------------
# The book 'Machine Learning Systems' reads Hardware.Cloud.H100, Models.Vision.ResNet50
# and Models.GPT3.training_ops. Those groups are views built by mlsys.compat from
# compatB's book_*.toml files over the entries above; they are imported only when a group
# is first touched, so the catalog itself loads no compat code.
def _compat_group(module: str, builder: str, *args: str) -> Any:
    import importlib

    return getattr(importlib.import_module(module), builder)(*args)


for _tier in ("Cloud", "Edge", "Mobile", "Tiny", "Workstation"):
    Hardware.add_group(
        _tier, lambda t=_tier: _compat_group("mlsys.compat.hardware", "hardware_group", t)
    )
Hardware.add_group("Tech", lambda: _compat_group("mlsys.compat.hardware", "tech_group"))
for _family in ("Vision", "Language", "Tiny", "Recommendation"):
    Models.add_group(
        _family, lambda f=_family: _compat_group("mlsys.compat.models", "model_group", f)
    )
# The older chapters read three models directly on the registry with the book's names
# (Models.GPT3.training_ops, Models.GPT2.parameters, Models.DLRM.model_size): book views.
# Item lookup (Models["GPT3"]) still returns the catalog entry itself.
for _book, _key in (("GPT2", "GPT2_XL"), ("GPT3", "GPT3_175B"), ("DLRM", None)):
    Models.add_group(
        _book,
        lambda b=_book, k=_key: _compat_group(
            "mlsys.compat.models", "BookModel", b, *([k] if k else [])
        ),
    )
del _tier, _family, _book, _key
