"""The shipped catalog: accelerators, nodes, fabrics, models, grids and data centres.

Entries are TOML files in ``mlsys/core/catalog/data/`` (they ship in the wheel), loaded
on first use into typed registries:

>>> from mlsys import Hardware, Nodes, Fabrics, Models, Grids, Datacenters
>>> Hardware.H100.memory_bandwidth        # 3.35 TB/s
>>> Hardware["h100-sxm"] is Hardware.H100
True

Each TOML table is one entry, keyed by its canonical name, with an optional ``aliases``
list and a ``provenance`` table: ``provenance.default`` covers every field without a
``provenance.<field>`` of its own. Entries refer to one another by name (a node's
``accelerator = "H100"``).
"""

from __future__ import annotations

import sys
from functools import cache
from importlib import resources
from typing import Any

from mlsys.core.catalog.registry import Registry, normalize_key
from mlsys.core.errors import MlsysError
from mlsys.core.types import (
    Accelerator,
    Datacenter,
    Fabric,
    GridProfile,
    Node,
    TransformerWorkload,
    Workload,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = [
    "Hardware",
    "Nodes",
    "Fabrics",
    "Models",
    "Grids",
    "Datacenters",
    "Registry",
    "normalize_key",
    "load_table",
    "CatalogError",
]


class CatalogError(MlsysError):
    """A shipped catalog file is malformed (a bug in mlsys, not in the caller's code)."""


@cache
def load_table(filename: str) -> dict[str, dict[str, Any]]:
    """Parse one catalog data file.

    Parameters
    ----------
    filename : str
        File name inside ``mlsys/core/catalog/data`` (e.g. ``"accelerators.toml"``).

    Returns
    -------
    dict
        Entry name to raw table, in file order.
    """
    text = resources.files("mlsys.core.catalog").joinpath("data", filename).read_text("utf-8")
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:  # pragma: no cover - caught by the catalog tests
        raise CatalogError(f"{filename}: {exc}") from None


def _build(filename: str, make: Any) -> dict[str, tuple[Any, list[str]]]:
    out: dict[str, tuple[Any, list[str]]] = {}
    for key, raw in load_table(filename).items():
        data = dict(raw)
        aliases = list(data.pop("aliases", []))
        data.setdefault("name", key)
        try:
            out[key] = (make(data), aliases)
        except MlsysError as exc:
            raise CatalogError(f"{filename} [{key}]: {exc}") from None
    return out


def _accelerators() -> dict[str, tuple[Any, list[str]]]:
    return _build("accelerators.toml", lambda d: Accelerator(**d))


def _fabrics() -> dict[str, tuple[Any, list[str]]]:
    return _build("fabrics.toml", lambda d: Fabric(**d))


def _node(data: dict[str, Any]) -> Node:
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


class CatalogWorkload(_BookNames, Workload):
    """A catalog :class:`~mlsys.core.types.Workload` that also answers the book's names."""


class CatalogTransformerWorkload(_BookNames, TransformerWorkload):
    """A catalog :class:`~mlsys.core.types.TransformerWorkload` with the book's names."""


def _model(data: dict[str, Any]) -> Workload | TransformerWorkload:
    kind = data.pop("kind", "transformer")
    if kind == "transformer":
        return CatalogTransformerWorkload(**data)
    return CatalogWorkload(kind=kind, **data)


def _models() -> dict[str, tuple[Any, list[str]]]:
    return _build("models.toml", _model)


def _grids() -> dict[str, tuple[Any, list[str]]]:
    return _build("grids.toml", lambda d: GridProfile(**d))


def _datacenter(data: dict[str, Any]) -> Datacenter:
    data["grid"] = Grids.get(data["grid"])
    return Datacenter(**data)


def _datacenters() -> dict[str, tuple[Any, list[str]]]:
    return _build("datacenters.toml", _datacenter)


Hardware: Registry[Accelerator] = Registry("Hardware", _accelerators)
"""Accelerators: ``Hardware.H100``, ``Hardware["A100_80GB"]``, ``Hardware.list()``."""

Fabrics: Registry[Fabric] = Registry("Fabrics", _fabrics)
"""Interconnects: ``Fabrics.NVLINK4``, ``Fabrics.IB_NDR``, ``Fabrics.ETH_10G``."""

Nodes: Registry[Node] = Registry("Nodes", _nodes)
"""Servers: ``Nodes.DGX_H100``, ``Nodes.DGX_A100``, ``Nodes.HGX_H200``, ``Nodes.DGX_B200``."""

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
