"""The textbook's system registries as views: ``Systems``, ``Literature``, ``Monitoring``.

*Machine Learning Systems* (harvard-edge/cs249r_book) reads fabrics, nodes, clusters and
reliability figures as ``Systems.Fabrics.InfiniBand_NDR.latency_us``,
``Systems.Nodes.DGX_H100.accelerators_per_node``,
``Systems.Clusters.Training_10K.total_accelerators`` and
``Systems.Reliability.Gpu.mttf_hours``, and its literature anchors as
``Literature.Training.MfuHigh``. Fabrics and nodes are catalog entries; every number is
either one of the book's assumptions in ``book_assumptions.toml`` (read through
:mod:`mlsys.constants`) or a cited value of ``book_systems.toml``: one source each.
"""

from __future__ import annotations

from typing import Any

from mlsys.compat._data import book_table, field_source, field_value
from mlsys.compat._namespace import Namespace
from mlsys.compat.rules import UnitSuffixed, suffix_attribute
from mlsys.compat.views import (
    Record,
    book_records,
    catalog_members,
    query_group,
    record_group,
)

__all__ = [
    "BookFabric",
    "BookNode",
    "BookCluster",
    "Systems",
    "Literature",
    "Monitoring",
    "Ops",
    "calibration",
    "Scenarios",
    "Platforms",
    "Infrastructure",
    "Datasets",
    "BookGrid",
    "BookDatacenter",
]

_FILE = "book_systems.toml"


class BookFabric:
    """A catalog fabric under the book's names.

    Parameters
    ----------
    book_name : str
        ``"InfiniBand_NDR"``.
    key : str
        Catalog key (``"IB_NDR"``).

    Attributes
    ----------
    bandwidth : pint.Quantity
        Per-accelerator, per-direction bandwidth (bytes/s).
    latency : pint.Quantity
        Per-message latency (a time Quantity).
    latency_us : float
        The same latency as a bare number of microseconds (the book's type).
    entry : mlsys.core.types.Fabric
        The catalog entry.
    """

    def __init__(self, book_name: str, key: str) -> None:
        from mlsys.core.catalog import Fabrics

        entry = Fabrics.get(key)
        self.__dict__.update(
            book_name=book_name,
            key=key,
            entry=entry,
            bandwidth=entry.bandwidth,
            latency=entry.latency,
            latency_us=float(entry.latency.m_as("us")),
        )

    def __getattr__(self, item: str) -> Any:
        if item.startswith("_"):
            raise AttributeError(item)
        entry = self.__dict__["entry"]
        if hasattr(entry, item):
            return getattr(entry, item)
        return suffix_attribute(self, item, f"Systems view {self.book_name}")

    def __repr__(self) -> str:
        return f"<book view {self.book_name} of Fabrics.{self.key}>"


class BookNode:
    """A catalog node under the book's names; attributes may be reassigned locally.

    Parameters
    ----------
    book_name : str
        ``"DGX_H100"``.
    key : str
        Catalog key.

    Attributes
    ----------
    accelerators_per_node : int
        Accelerators in one node.
    accelerator : BookAccelerator
        The node's accelerator under the book's names.
    entry : mlsys.core.types.Node
        The catalog entry (frozen; assigning to this view does not change it).
    """

    def __init__(self, book_name: str, key: str) -> None:
        from mlsys.compat.hardware import BookAccelerator
        from mlsys.core.catalog import Nodes

        entry = Nodes.get(key)
        self.__dict__.update(
            book_name=book_name,
            key=key,
            entry=entry,
            accelerators_per_node=entry.accelerators_per_node,
            accelerator=BookAccelerator(entry.accelerator.name, entry.accelerator.name),
        )

    def __getattr__(self, item: str) -> Any:
        if item.startswith("_"):
            raise AttributeError(item)
        entry = self.__dict__["entry"]
        if hasattr(entry, item):
            return getattr(entry, item)
        return suffix_attribute(self, item, f"Systems view {self.book_name}")

    def __repr__(self) -> str:
        return f"<book view {self.book_name} of Nodes.{self.key}>"


class BookCluster(UnitSuffixed):
    """One of the book's reference clusters of DGX H100 nodes.

    Parameters
    ----------
    book_name : str
        ``"Training_10K"``.
    raw : dict
        Its ``[clusters.NAME]`` table.

    Attributes
    ----------
    total_accelerators : int
        GPUs in the cluster.
    count : int
        Nodes (GPUs / accelerators per DGX H100 node).
    node : BookNode
        The node type.
    fabric : BookFabric
        The scale-out fabric.
    source : dict
        Provenance of the GPU count.
    """

    def __init__(self, book_name: str, raw: dict[str, Any], provenance: dict[str, Any]) -> None:
        node = BookNode("DGX_H100", "DGX_H100")
        gpus = int(field_value(raw["gpus"]))
        self.__dict__.update(
            book_name=book_name,
            total_accelerators=gpus,
            count=gpus // node.accelerators_per_node,
            node=node,
            fabric=BookFabric(raw["fabric"], raw["fabric"]),
            source=field_source(raw["gpus"], provenance),
        )

    def __repr__(self) -> str:
        return f"<book cluster {self.book_name}: {self.total_accelerators} GPUs>"


class _Component(UnitSuffixed):
    """A reliability component: ``mttf_hours`` and its source."""

    def __init__(self, name: str, spec: Any, provenance: dict[str, Any] | None = None) -> None:
        self.name = name
        self.mttf_hours = field_value(spec)
        self.source = field_source(spec, provenance)

    def __repr__(self) -> str:
        return f"<Systems.Reliability.{self.name}: MTTF {self.mttf_hours} h>"


class _Values(UnitSuffixed):
    """Named values with sources (``Systems.Reliability.Recovery``)."""

    def __init__(self, path: str, raw: dict[str, Any]) -> None:
        raw = dict(raw)
        prov = raw.pop("provenance", {})
        self.path = path
        self.sources = {f: field_source(s, prov.get(f, prov.get("_all"))) for f, s in raw.items()}
        for field, spec in raw.items():
            setattr(self, field, field_value(spec))

    def __repr__(self) -> str:
        return f"<{self.path}>"


def _table(name: str) -> dict[str, Any]:
    return book_table(_FILE)[name]


def _values_ns(path: str, raw: dict[str, Any]) -> Namespace:
    raw = dict(raw)
    prov = raw.pop("provenance", {})
    ns = Namespace(path, {f: field_value(s) for f, s in raw.items()})
    sources = {f: field_source(s, prov.get(f, prov.get("_all"))) for f, s in raw.items()}
    object.__setattr__(ns, "sources", sources)
    return ns


def _fabrics() -> Namespace:
    # the book's names, over every catalog fabric (an alias such as InfiniBand_GXDR names one)
    items = _table("fabrics")
    table = {n: (lambda n=n, k=k: BookFabric(n, k)) for n, k in items.items()}
    return query_group("Systems.Fabrics", table, catalog_members("fabrics.toml", BookFabric))


def _nodes() -> Namespace:
    items = _table("nodes")
    table = {n: (lambda n=n, k=k: BookNode(n, k)) for n, k in items.items()}
    return query_group("Systems.Nodes", table, catalog_members("nodes.toml", BookNode))


def _clusters() -> Namespace:
    items = dict(_table("clusters"))
    prov = items.pop("provenance", {})
    return Namespace(
        "Systems.Clusters",
        {n: (lambda n=n, r=r: BookCluster(n, r, prov)) for n, r in items.items()},
        lazy=True,
    )


def _reliability() -> Namespace:
    raw = dict(_table("reliability"))
    prov = raw.pop("provenance", {})
    members: dict[str, Any] = {
        name: (lambda n=name, s=spec: _Component(n, s, prov.get(n))) for name, spec in raw.items()
    }
    values = _values_ns("Systems.Reliability", _table("reliability_values"))
    for name in values.list():
        members[name] = lambda n=name: getattr(values, n)
    members["Recovery"] = lambda: _Values("Systems.Reliability.Recovery", _table("recovery"))
    return Namespace("Systems.Reliability", members, lazy=True)


class BookPod(UnitSuffixed):
    """A pod of one catalog accelerator: chips and the per-chip figures times chips.

    Parameters
    ----------
    book_name : str
        ``"TPUv4_4096"``.
    raw : dict
        Its ``[pods.NAME]`` table (``accelerator``, ``chips``).

    Attributes
    ----------
    chips : int
        Accelerators in the pod.
    memory : pint.Quantity
        ``chips`` x the catalog's per-chip memory (bytes).
    power : pint.Quantity
        ``chips`` x the catalog's per-chip TDP (W).
    accelerator : mlsys.core.types.Accelerator
        The catalog entry.
    """

    def __init__(self, book_name: str, raw: dict[str, Any]) -> None:
        from mlsys.core.catalog import Hardware

        accel = Hardware.get(raw["accelerator"])
        chips = int(raw["chips"])
        self.book_name = book_name
        self.chips = chips
        self.accelerator = accel
        self.memory = chips * accel.memory_capacity
        self.power = chips * accel.tdp

    def __repr__(self) -> str:
        return f"<book pod {self.book_name}: {self.chips} x {self.accelerator.name}>"


def _pods() -> Namespace:
    items = dict(_table("pods"))
    items.pop("provenance", None)
    return Namespace(
        "Systems.Pods", {n: (lambda n=n, r=r: BookPod(n, r)) for n, r in items.items()}, lazy=True
    )


Systems = Namespace(
    "Systems",
    {
        "Fabrics": _fabrics,
        "Nodes": _nodes,
        "Clusters": _clusters,
        "Reliability": _reliability,
        "Pods": _pods,
        "NetworkEnergy": lambda: _values_ns("Systems.NetworkEnergy", _table("network_energy")),
        "SwitchFabric": lambda: _values_ns("Systems.SwitchFabric", _table("switch_fabric")),
        "Orchestration": lambda: _values_ns("Systems.Orchestration", _table("orchestration")),
    },
    lazy=True,
)
"""The book's ``Systems`` registry: ``Fabrics``, ``Nodes``, ``Clusters``, ``Reliability``,
``Pods``, ``NetworkEnergy``, ``SwitchFabric`` and ``Orchestration`` (the scheduling
assumptions: ``target_cluster_utilization``, ``queue_discipline``,
``average_researcher_job_days``)."""

Literature = Namespace(
    "Literature",
    {
        group: (lambda g=group: _values_ns(f"Literature.{g}", _table("literature")[g]))
        for group in _table("literature")
    },
    lazy=True,
)
"""The book's literature anchors: ``Training.MfuHigh``, ``Scaling.Eff256Gpu``,
``Overheads.Checkpoint``, ``Chinchilla.TokensPerParam`` (``book_systems.toml``)."""


def _monitoring() -> Namespace:
    raw = dict(_table("monitoring"))
    prov = raw.pop("provenance", {})
    ns = Namespace("Monitoring", {f: (lambda f=f: field_value(raw[f])) for f in raw}, lazy=True)
    object.__setattr__(ns, "sources", {f: field_source(raw[f], prov.get(f)) for f in raw})
    return ns


Monitoring = _monitoring()
"""The book's monitoring figures (``book_systems.toml``, each with its source in
``Monitoring.sources``): the population stability index bands ``PsiWarnThreshold``
(0.1), ``PsiReviewThreshold`` (0.2) and ``PsiCriticalThreshold`` (0.25) of Siddiqi
(2006); ``KsTestCoefficient``, the two-sample Kolmogorov-Smirnov critical coefficient
c(0.05) = sqrt(ln(40) / 2) (Smirnov 1948), rounded to 1.36; and
``MemoryBitErrorRatePerBit``, the book's illustrative 1e-17 memory bit errors per bit
processed."""

Ops = Namespace("Ops", {"Monitoring": lambda: Monitoring}, lazy=True)
"""The book's ``Ops`` registry: its ``Monitoring`` thresholds (the same view as
:data:`Monitoring`). Its runtime- and training-run overhead tables are not served."""

calibration = Namespace(
    "calibration",
    {
        name: (lambda n=name: field_value(_table("calibration")[n]))
        for name in (
            "REFERENCE_MFU_SUSTAINED",
            "KERNEL_LAUNCH_LATENCY_US",
            "TOKENS_PER_REASONING_STEP",
            "DP_SGD_SLOWDOWN_COEFFICIENT",
            "QUANT_ACCURACY_DELTA_FP8",
            "QUANT_ACCURACY_DELTA_INT8",
            "QUANT_ACCURACY_DELTA_INT4",
            "QUANT_ACCURACY_DELTA_SUB_INT4",
            "PRUNING_ACCURACY_THRESHOLD",
            "PRUNING_MILD_DELTA",
            "PRUNING_STEEP_COEFFICIENT",
            "PRUNING_STEEP_EXPONENT",
            "MFU_FLASH_ATTENTION",
            "MFU_FLASH_ATTENTION_CAP",
            "MFU_FFN_CAP",
            "MFU_CONV_CAP",
            "HFU_MFU_RATIO",
            "FALLBACK_INTERCONNECT_BANDWIDTH_GB_S",
            "WEIGHT_STREAMING_WORKING_SET_FRACTION",
        )
    },
    lazy=True,
)
"""The book's engine calibration: ``REFERENCE_MFU_SUSTAINED`` (sustained MFU, 0.4;
Chowdhery et al. 2022) and ``KERNEL_LAUNCH_LATENCY_US`` (host dispatch per eager kernel
launch, a plain 15.0 microseconds; Gray 2019 measures 9.6 µs per synchronised launch) and
``TOKENS_PER_REASONING_STEP`` (the book's assumed 50 tokens per chain-of-thought step).
The book's estimates behind its trade-off models, each with its source in
``book_systems.toml``: ``DP_SGD_SLOWDOWN_COEFFICIENT`` (2.0, DP-SGD slows training by
1 + 2/ε), the accuracy changes of quantisation (``QUANT_ACCURACY_DELTA_*``) and pruning
(``PRUNING_*``), the MFU caps of ``EfficiencyModel`` (``MFU_*``, ``HFU_MFU_RATIO``) and
``FALLBACK_INTERCONNECT_BANDWIDTH_GB_S`` (100, the weight-injection bandwidth assumed for
a device without an interconnect; Cerebras lists 150 GB/s for a CS-3), and
``WEIGHT_STREAMING_WORKING_SET_FRACTION`` (0.1, the working set the book's
``WeightStreamingModel`` adds to the KV cache)."""


def _phone_battery() -> Namespace:
    ns = _values_ns("Scenarios.PhoneBattery", _table("scenarios")["PhoneBattery"])
    # the book's second battery model: capacity x voltage, in joules (11.1 W·h)
    energy = (ns.CapacityMah * ns.VoltageV).to("J")
    sources = dict(ns.sources)
    sources["EnergyJ"] = {
        "formula": "CapacityMah x VoltageV",
        "from": [sources["CapacityMah"], sources["VoltageV"]],
    }
    out = Namespace(
        "Scenarios.PhoneBattery",
        {n: getattr(ns, n) for n in ns.list()} | {"EnergyJ": energy},
    )
    object.__setattr__(out, "sources", sources)
    return out


Scenarios = Namespace(
    "Scenarios",
    {
        **{
            group: (lambda g=group: _values_ns(f"Scenarios.{g}", _table("scenarios")[g]))
            for group in _table("scenarios")
        },
        "PhoneBattery": _phone_battery,
    },
    lazy=True,
)
"""The book's scenario figures: ``PhoneBattery`` (``EnergyWh``, the 15 W·h flagship pack;
``EnergyJ`` = ``CapacityMah`` x ``VoltageV``, a second 11.1 W·h battery the book keeps apart)
``MobilePower`` (``ObjectDetector``, ``MobileNpuTypical`` ... in W), ``Workloads``
(``GoogleSearchesPerDay`` ...), ``AnomalyModel`` and ``EnergyAnchors``: every
``[scenarios.*]`` table of ``book_systems.toml``."""


class _Rate(UnitSuffixed):
    """A price with the book's ``.rate`` attribute."""

    def __init__(self, spec: Any, provenance: dict[str, Any] | None = None) -> None:
        self.rate = field_value(spec)
        self.source = field_source(spec, provenance)

    def __repr__(self) -> str:
        return f"<rate {self.rate}>"


def _prices(group: str) -> Namespace:
    raw = dict(_table("pricing")[group])
    prov = raw.pop("provenance", {})
    return Namespace(
        f"Infrastructure.Pricing.{group}",
        {n: _Rate(spec, prov.get(n, prov.get("_all"))) for n, spec in raw.items()},
    )


class BookGrid(UnitSuffixed):
    """A catalog grid under the book's names (``Infrastructure.Grids.US_Avg``).

    Parameters
    ----------
    book_name : str
        ``"US_Avg"``.
    key : str
        Catalog key (``"US_AVG"``).

    Attributes
    ----------
    carbon_intensity_g_kwh : float
        Grams of CO2e per kWh (the book's plain number; the catalog's
        ``carbon_intensity``).
    entry : mlsys.core.types.GridProfile
        The catalog entry; its other fields (``water_intensity``, ``electricity_price``)
        are read through the view, and ``<field>_<unit>`` of each by the rule.
    """

    def __init__(self, book_name: str, key: str) -> None:
        from mlsys.core.catalog import Grids

        entry = Grids.get(key)
        self.book_name = book_name
        self.entry = entry
        self.name = entry.display_name or key
        self.carbon_intensity = entry.carbon_intensity
        self.carbon_intensity_g_kwh = float(entry.carbon_intensity.m_as("gCO2e/kWh"))

    def __getattr__(self, item: str) -> Any:
        if item.startswith("_"):
            raise AttributeError(item)
        entry = self.__dict__.get("entry")
        if entry is not None and hasattr(entry, item):
            return getattr(entry, item)
        return suffix_attribute(self, item, f"Infrastructure.Grids.{self.book_name}")

    def __repr__(self) -> str:
        return f"<book view {self.book_name} of Grids.{self.entry.name}>"


def _grids() -> Namespace:
    table = {
        n: (lambda n=n, k=k: _with_facility(BookGrid(n, k), n)) for n, k in _table("grids").items()
    }
    book_only = dict(book_records("Grids"))
    prov = book_only.pop("provenance", {})
    for name, raw in book_only.items():
        table.setdefault(
            name,
            lambda n=name, r=raw: _with_facility(Record(f"Infrastructure.Grids.{n}", r, prov), n),
        )
    return query_group("Infrastructure.Grids", table, catalog_members("grids.toml", BookGrid))


def _with_facility(grid: Any, book_name: str) -> Any:
    """The book's pue and wue of a region: those of the cooling tier it pairs with it."""
    tier = _table("grid_cooling").get(book_name)
    if tier is not None:
        cooling = getattr(Infrastructure.FacilityCooling, tier)
        grid.__dict__.update(cooling=tier, pue=cooling.pue, wue=cooling.wue)
    return grid


class BookDatacenter(UnitSuffixed):
    """One of the book's reference sites: a region's grid and its facility.

    Parameters
    ----------
    book_name : str
        ``"Quebec_Hydro"``.
    raw : dict
        Its ``[datacenters]`` row (``name``, ``grid``: a name of ``Infrastructure.Grids``).

    Attributes
    ----------
    grid : BookGrid or Record
        The region (``Infrastructure.Grids.<grid>``).
    pue, wue : float
        The facility's: those of the cooling tier the book pairs with the region.
    """

    def __init__(self, book_name: str, raw: dict[str, Any]) -> None:
        self.book_name = book_name
        self.name = raw["name"]
        self.grid = getattr(Infrastructure.Grids, raw["grid"])
        self.pue = self.grid.pue
        self.wue = self.grid.wue

    def __repr__(self) -> str:
        return f"<book datacenter {self.book_name} on {self.grid!r}>"


Infrastructure = Namespace(
    "Infrastructure",
    {
        "Pricing": lambda: Namespace(
            "Infrastructure.Pricing",
            {g: (lambda g=g: _prices(g)) for g in _table("pricing")},
            lazy=True,
        ),
        "Racks": lambda: record_group("Infrastructure.Racks", book_records("Racks")),
        "FacilityCooling": lambda: record_group(
            "Infrastructure.FacilityCooling", book_records("FacilityCooling")
        ),
        "Grids": _grids,
        "Datacenters": lambda: Namespace(
            "Infrastructure.Datacenters",
            {n: (lambda n=n, r=r: BookDatacenter(n, r)) for n, r in _table("datacenters").items()},
            lazy=True,
        ),
        "AIR_COOLING_LIMIT_KW": lambda: field_value({"ref": "AIR_COOLING_LIMIT_KW"}),
        "Capacity": lambda: _values_ns("Infrastructure.Capacity", _table("capacity")),
    },
    lazy=True,
)
"""The book's infrastructure: ``Pricing`` (every ``[pricing.*]`` group:
``Cloud.GpuTrainingPerHour.rate`` ...), ``Racks``, ``FacilityCooling``, ``Grids`` (the
catalog's grids under the book's names and every catalog key and alias; ``pue`` and ``wue``
those of the cooling tier the book pairs with the region), ``Datacenters`` and
``AIR_COOLING_LIMIT_KW`` and ``Capacity`` (build-out lead times)."""

Datasets = Namespace(
    "Datasets",
    {
        n: (lambda n=n, r=r: Record(f"Datasets.{n}", r, {}))
        for n, r in book_records("Datasets").items()
        if n != "provenance"
    },
    lazy=True,
)
"""The book's datasets (``Datasets.ImageNet.image_width``): ``[records.Datasets.*]``."""


def _platform(name: str) -> Namespace:
    # ranges are text ("3-5"): the book prints them and calls str methods on them;
    # capacities and budgets are Quantities (``ram``, ``typical_latency_budget``)
    ns = _values_ns(f"Platforms.{name}", _table("platforms")[name])
    prov = _table("platforms").get("provenance", {})
    object.__setattr__(ns, "sources", {f: dict(prov) for f in ns.list()})
    object.__setattr__(ns, "name", name)
    return ns


Platforms = Namespace(
    "Platforms",
    {n: (lambda n=n: _platform(n)) for n in ("Cloud", "Edge", "Mobile", "Tiny")},
    lazy=True,
)
"""The book's deployment-tier ranges as text: ``Platforms.Mobile.tdp_range_w`` is ``"3-5"``."""
