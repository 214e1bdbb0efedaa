"""Book-facing hardware names: the catalog registries and one name per device and node.

``from mlsys.hardware import H100`` gives the same object as ``Hardware.H100``. The names
are not listed by hand: every key of the ``Hardware`` and ``Nodes`` registries is a name
of this module (a device or node added to the catalog appears here at once), plus the
short alias ``A100`` (``A100_80GB``) that earlier books used.

Examples
--------
>>> from mlsys.hardware import H100, DGX_H100
>>> str(H100.memory_bandwidth)
'3.35 TB/s'
"""

from __future__ import annotations

from typing import Any

from mlsys.core.catalog import Datacenters, Fabrics, Grids, Hardware, Models, Nodes

_KEPT_ALIASES = ("A100",)  # exported by earlier releases; resolves through the registry


def _devices() -> tuple[str, ...]:
    return (*Hardware.list(), *_KEPT_ALIASES)


def _nodes() -> tuple[str, ...]:
    return tuple(Nodes.list())


__all__ = ["Hardware", "Nodes", "Fabrics", "Models", "Grids", "Datacenters"]
__all__ += [*_devices(), *_nodes()]


def __getattr__(name: str) -> Any:
    if name in _devices():
        return Hardware.get(name)
    if name in _nodes():
        return Nodes.get(name)
    raise AttributeError(f"module 'mlsys.hardware' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
