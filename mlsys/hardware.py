"""Book-facing hardware names: the catalog registries and one name per device.

``from mlsys.hardware import H100`` gives the same object as ``Hardware.H100``; devices
and nodes are looked up in the shipped catalog on first use.

Examples
--------
>>> from mlsys.hardware import H100, DGX_H100
>>> H100.memory_bandwidth
"""

from __future__ import annotations

from typing import Any

from mlsys.core.catalog import Datacenters, Fabrics, Grids, Hardware, Models, Nodes

_DEVICES = (
    "H100",
    "H100_PCIE",
    "H200",
    "B200",
    "A100",
    "A100_80GB",
    "A100_40GB",
    "V100",
    "MI300X",
    "TPU_V3",
    "TPU_V4",
    "TPU_V5E",
    "TPU_V5P",
    "L4",
    "JETSON_ORIN",
    "CORTEX_M7",
)
_NODES = ("DGX_A100", "DGX_H100", "HGX_H200", "DGX_B200")

__all__ = ["Hardware", "Nodes", "Fabrics", "Models", "Grids", "Datacenters", *_DEVICES, *_NODES]


def __getattr__(name: str) -> Any:
    if name in _DEVICES:
        return Hardware.get(name)
    if name in _NODES:
        return Nodes.get(name)
    raise AttributeError(f"module 'mlsys.hardware' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
