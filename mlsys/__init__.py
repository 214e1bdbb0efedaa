"""mlsys: live, unit-checked, cited ML-systems numbers for Quarto books and courses.

The public API is loaded lazily (PEP 562): ``import mlsys`` is cheap, and a name such as
``mlsys.DistributedModel`` imports its module on first use.

Examples
--------
>>> from mlsys import Hardware, Models, SingleNodeModel
>>> res = SingleNodeModel().solve(Models.Llama2_70B, Hardware.H100, batch_size=1)
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from mlsys.core.deprecation import deprecated_getattr

__version__ = "0.1.0"

# public name -> module that defines it
_LAZY: dict[str, str] = {
    # units and errors
    "ureg": "mlsys.core.units",
    "Q_": "mlsys.core.units",
    "MlsysError": "mlsys.core.errors",
    "ParameterError": "mlsys.core.errors",
    "UnitError": "mlsys.core.errors",
    "UnknownEntryError": "mlsys.core.errors",
    "InfeasibleError": "mlsys.core.errors",
    # types
    "Provenance": "mlsys.core.types",
    "Accelerator": "mlsys.core.types",
    "Node": "mlsys.core.types",
    "Fabric": "mlsys.core.types",
    "Fleet": "mlsys.core.types",
    "Workload": "mlsys.core.types",
    "TransformerWorkload": "mlsys.core.types",
    "GridProfile": "mlsys.core.types",
    "Datacenter": "mlsys.core.types",
    # catalog registries
    "Hardware": "mlsys.core.catalog",
    "Nodes": "mlsys.core.catalog",
    "Fabrics": "mlsys.core.catalog",
    "Models": "mlsys.core.catalog",
    "Grids": "mlsys.core.catalog",
    "Datacenters": "mlsys.core.catalog",
    # results base
    "Result": "mlsys.core.results",
    # a chapter's own number, marked with where it comes from (kept through arithmetic)
    "sourced": "mlsys.core.provenance",
    # solvers
    "SingleNodeModel": "mlsys.core.solvers.roofline",
    "SingleNodeResult": "mlsys.core.solvers.roofline",
    "MemoryModel": "mlsys.core.solvers.memory",
    "MemoryResult": "mlsys.core.solvers.memory",
    "DistributedModel": "mlsys.core.solvers.distributed",
    "DistributedResult": "mlsys.core.solvers.distributed",
    "ServingModel": "mlsys.core.solvers.serving",
    "ServingResult": "mlsys.core.solvers.serving",
    "ContinuousBatchingModel": "mlsys.core.solvers.batching",
    "ContinuousBatchingResult": "mlsys.core.solvers.batching",
    "ReliabilityModel": "mlsys.core.solvers.reliability",
    "ReliabilityResult": "mlsys.core.solvers.reliability",
    "SustainabilityModel": "mlsys.core.solvers.sustainability",
    "SustainabilityResult": "mlsys.core.solvers.sustainability",
    "EconomicsModel": "mlsys.core.solvers.economics",
    "EconomicsResult": "mlsys.core.solvers.economics",
    "ParallelismSearch": "mlsys.core.solvers.search",
    "SearchResult": "mlsys.core.solvers.search",
    "SynchronizationModel": "mlsys.core.solvers.synchronization",
    "SynchronizationResult": "mlsys.core.solvers.synchronization",
    "scaling_curve": "mlsys.core.solvers.scaling",
    # the one parallel training layout every training solver and the search take
    "TrainingLayout": "mlsys.core.layout",
    # the textbook's own registries, as views of the catalog (mlsys.compat)
    "Systems": "mlsys.compat.systems",
    "Literature": "mlsys.compat.systems",
    "Monitoring": "mlsys.compat.systems",
    "Ops": "mlsys.compat.systems",
    "Tiers": "mlsys.compat.tiers",
    "Engine": "mlsys.compat.engine",
    "Scenarios": "mlsys.compat.systems",
    "Platforms": "mlsys.compat.systems",
    "Infrastructure": "mlsys.compat.systems",
    "calibration": "mlsys.compat.systems",
    "PlacementOptimizer": "mlsys.compat.placement",
    "ParallelismOptimizer": "mlsys.compat.parallelism",
    "Datasets": "mlsys.compat.systems",
    "Applications": "mlsys.compat.scenarios",
    "Scenario": "mlsys.compat.scenarios",
    "plot_evaluation_scorecard": "mlsys.compat.viz",
    "plot_roofline": "mlsys.compat.viz",
    # the formatter a chapter calls most (`from mlsys import Hardware, fmt`)
    "fmt": "mlsys.formatting",
    # the newest chapters use MarkdownStr after `from mlsysim import *`
    "MarkdownStr": "mlsys.formatting",
    # the book's figure helper module (`from mlsys import viz`; matplotlib on first use)
    "viz": "mlsys.compat",
}

# old public name -> new public name (kept alive with a DeprecationWarning)
_DEPRECATED: dict[str, str] = {
    "SingleNodeSolver": "SingleNodeModel",
    "DistributedSolver": "DistributedModel",
    "ReliabilitySolver": "ReliabilityModel",
    "SustainabilitySolver": "SustainabilityModel",
    "ServingSolver": "ServingModel",
    "EconomicsSolver": "EconomicsModel",
    "MemorySolver": "MemoryModel",
}

__all__ = sorted(_LAZY)


def _lazy(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'mlsys' has no attribute {name!r}")


# Deprecated names warn once per access (mlsys.core.deprecation), then resolve lazily.
__getattr__ = deprecated_getattr(
    "mlsys", _DEPRECATED, lambda old: _lazy(_DEPRECATED[old]), fallback=_lazy
)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


# The textbook's views on the catalog (Hardware.Cloud.H100, Models.Vision.ResNet50,
# Models.ResNet50.parameters) are hung on the registries here, above both layers: the
# catalog imports nothing of mlsys.compat. Each view's module loads when first read.
from mlsys.compat._install import install as _install_book_views  # noqa: E402

_install_book_views()


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from mlsys.core.catalog import Datacenters, Fabrics, Grids, Hardware, Models, Nodes
    from mlsys.core.errors import (
        InfeasibleError,
        MlsysError,
        ParameterError,
        UnitError,
        UnknownEntryError,
    )
    from mlsys.core.provenance import sourced
    from mlsys.core.types import (
        Accelerator,
        Datacenter,
        Fabric,
        Fleet,
        GridProfile,
        Node,
        Provenance,
        TransformerWorkload,
        Workload,
    )
    from mlsys.core.units import Q_, ureg
    from mlsys.formatting import fmt
