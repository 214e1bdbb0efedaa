"""The textbook's hardware paths as views of the catalog (``Hardware.Cloud.H100.compute``).

*Machine Learning Systems* (harvard-edge/cs249r_book) reads an accelerator as
``Hardware.Cloud.H100.compute.peak_flops``, ``.memory.bandwidth``, ``.memory.capacity``,
``.nvlink.bandwidth``, ``.ridge_point()`` (its newest era) or ``.peak_flops``,
``.memory_bw``, ``.peak_flops_fp32`` (its older era). :class:`BookAccelerator` offers
those names over an :class:`~mlsys.core.types.Accelerator` of the catalog, so the value
is the catalog's (one source, with its provenance); anything else is the catalog
entry's own attribute. Tiers (``Cloud``, ``Edge``, ``Mobile``, ``Tiny``,
``Workstation``) and technology classes (``Tech.Memory.HBM3.latency``) come from
``book_hardware.toml``.

Where the book's name means something else than mlsys's, the book's name keeps the
book's meaning (each property says how): ``nvlink.bandwidth`` is both directions
summed, ``ridge_point()`` is a Quantity, FLOP rates are the book's plain counts.
"""

from __future__ import annotations

from typing import Any

from mlsys.compat._data import book_table, field_source, field_value
from mlsys.compat._namespace import Namespace
from mlsys.compat.rules import UnitSuffixed, suffix_attribute, unit_suffix_value
from mlsys.core.units import Q_, to_book_counts

__all__ = [
    "BookAccelerator",
    "BookDevice",
    "hardware_group",
    "tech_group",
    "HARDWARE_GROUPS",
]

_FILE = "book_hardware.toml"
HARDWARE_GROUPS: tuple[str, ...] = ("Cloud", "Edge", "Mobile", "Tiny", "Workstation", "Tech")
"""Groups hung on :data:`mlsys.Hardware` (the book's tiers and technology classes)."""
TIER_KINDS: dict[str, tuple[str, ...]] = {
    "Cloud": ("gpu", "tpu"),
    "Edge": ("edge",),
    "Tiny": ("mcu",),
}
"""Catalog accelerator kinds each tier's query selects (datacentre parts are Cloud)."""

# The PCIe generation of each catalog accelerator's host link (datasheets: H100/H200/B200
# SXM "PCIe Gen5", A100 SXM4 "PCIe Gen4", V100 SXM2 "PCIe Gen3" -> nearest catalog Gen4).
_HOST_LINK = {
    "H100": "PCIE5",
    "H100_PCIE": "PCIE5",
    "H200": "PCIE5",
    "B200": "PCIE5",
    "A100_80GB": "PCIE4",
    "A100_40GB": "PCIE4",
    "V100": "PCIE4",
    "L4": "PCIE4",
    "MI300X": "PCIE5",
}


class _Attrs:
    """A small bag of named values (``.compute``, ``.memory``, ``.nvlink``)."""

    def __init__(self, owner: str, **values: Any) -> None:
        self._owner = owner
        self.__dict__.update(values)

    def __getattr__(self, item: str) -> Any:
        if item.startswith("_"):
            raise AttributeError(item)
        try:
            return unit_suffix_value(self, item)
        except AttributeError:
            known = ", ".join(self._known())
            raise AttributeError(f"{self._owner} has no {item!r} (known: {known})") from None

    def _known(self) -> list[str]:
        return [k for k in self.__dict__ if not k.startswith("_")]

    def __repr__(self) -> str:
        return f"<{self._owner}: {', '.join(self._known())}>"


class BookAccelerator:
    """A catalog accelerator under the book's attribute names.

    Parameters
    ----------
    book_name : str
        The book's name (``"A100"``).
    key : str
        The catalog key (``"A100_80GB"``).

    Attributes
    ----------
    compute.peak_flops : pint.Quantity
        Dense FP16/BF16 tensor peak, in the book's counts (TFLOPs/s). The book's
        ``peak_flops`` is the 16-bit tensor figure.
    compute.precision_flops : dict of str to pint.Quantity
        Dense peak per precision (``"fp8"``, ``"int8"``, ``"tf32"``, ...), book counts.
    memory.capacity : pint.Quantity
        Memory the device exposes (bytes; catalog ``memory_capacity``).
    memory.bandwidth : pint.Quantity
        HBM bandwidth (bytes/s).
    memory.l2_cache : pint.Quantity
        L2 cache size (bytes), where ``book_hardware.toml`` has it.
    nvlink.bandwidth : pint.Quantity
        Scale-up link bandwidth with BOTH DIRECTIONS SUMMED (bytes/s), as datasheets and
        the book print it: twice the catalog's per-direction ``scaleup_bandwidth``
        (collective-time formulas need the per-direction figure).
    interconnect.bandwidth : pint.Quantity
        Host PCIe link, per direction (bytes/s; catalog fabric ``PCIE4``/``PCIE5``).
    tdp : pint.Quantity
        Board power (W).
    tdp_min, tdp_max : pint.Quantity
        Lowest and highest configurable power modes (W), where ``book_hardware.toml``
        gives them (a Jetson module runs from 15 W to 60 W); absent otherwise.
    peak_flops, peak_flops_fp32, tf32_flops, fp8_flops : pint.Quantity
        The older era's flat names (book counts).
    memory_bw, memory_capacity : pint.Quantity
        The older era's flat names (bytes/s, bytes).
    unit_cost : pint.Quantity or None
        Catalog ``unit_price`` (USD as the book's dollar count).
    entry : mlsys.core.types.Accelerator
        The catalog entry itself.
    """

    def __init__(self, book_name: str, key: str) -> None:
        from mlsys.core.catalog import Fabrics, Hardware

        entry = Hardware.get(key)
        flops = {p: to_book_counts(q) for p, q in entry.peak_flops.items()}
        peak16 = flops.get("fp16", flops.get("bf16"))
        extras = book_table(_FILE).get("extras", {}).get(key, {})
        for precision, spec in extras.get("precision_flops", {}).items():
            flops.setdefault(precision, field_value(spec))  # the catalog's rate wins
        if "fp32" in flops and entry.kind == "gpu":
            # the book's key for a GPU's non-tensor (CUDA-core) FP32 rate: NVIDIA's
            # datasheet "FP32" row, which is the catalog's fp32
            flops.setdefault("fp32_cuda", flops["fp32"])
        memory: dict[str, Any] = {
            "capacity": entry.memory_capacity,
            "bandwidth": entry.memory_bandwidth,
        }
        for field in ("l2_cache", "register_file_per_sm", "shared_memory_per_sm"):
            if field in extras:
                memory[field] = field_value(extras[field])
        self.__dict__.update(
            book_name=book_name,
            key=key,
            entry=entry,
            compute=_Attrs(
                f"{book_name}.compute",
                peak_flops=peak16,
                precision_flops=flops,
                **({"sm_count": entry.sm_count} if entry.sm_count else {}),
            ),
            memory=_Attrs(f"{book_name}.memory", **memory),
            nvlink=_Attrs(f"{book_name}.nvlink", bandwidth=2 * entry.scaleup_bandwidth),
            tdp=entry.tdp,
            peak_flops=peak16,
            peak_flops_fp32=flops.get("fp32"),
            tf32_flops=flops.get("tf32"),
            fp8_flops=flops.get("fp8"),
            memory_bw=entry.memory_bandwidth,
            memory_capacity=entry.memory_capacity,
            unit_cost=None if entry.unit_price is None else to_book_counts(entry.unit_price),
        )
        for field in ("tdp_min", "tdp_max"):  # power modes, only where a source states them
            if field in extras:
                self.__dict__[field] = field_value(extras[field])
        storage = {
            name: field_value(extras[k])
            for k, name in (("storage_capacity", "capacity"), ("storage_bw", "bandwidth"))
            if k in extras
        }
        if storage:  # a drive the book attaches to the part (Hardware.Cloud.H100.storage)
            self.__dict__["storage"] = _Attrs(f"{book_name}.storage", **storage)
        link = _HOST_LINK.get(key)
        if link is not None:
            bw = Fabrics.get(link).bandwidth
            self.__dict__["interconnect"] = _Attrs(f"{book_name}.interconnect", bandwidth=bw)

    def ridge_point(self, precision: str = "fp16") -> Any:
        """Roofline ridge point as a Quantity in FLOP/byte (the book's return type).

        mlsys's own :meth:`~mlsys.core.types.Accelerator.ridge_point` returns the float;
        this is the same cited formula (peak FLOP/s over memory bandwidth, Williams,
        Waterman & Patterson (2009), 'Roofline', Eq. 1) with its unit.

        Parameters
        ----------
        precision : str
            Precision of the peak (default the book's 16-bit tensor figure).

        Returns
        -------
        pint.Quantity
            FLOP/byte as the book counts FLOPs (``.m_as("flop/byte")`` and the book's
            ``.m_as(flop/byte)`` both work).
        """
        return to_book_counts(Q_(self.entry.ridge_point(precision), "flop/byte"))

    def __getattr__(self, item: str) -> Any:
        if item.startswith("_"):
            raise AttributeError(item)
        entry = self.__dict__["entry"]
        if hasattr(entry, item):
            return getattr(entry, item)
        return suffix_attribute(self, item, f"Hardware view {self.book_name}")

    def __repr__(self) -> str:
        return f"<book view {self.book_name} of Hardware.{self.key}>"


def _as_text(q: Any) -> str:
    """``q`` as ``"magnitude unit"`` text in its own unit (for a catalog model's field)."""
    return f"{q.magnitude!r} {q.units}"


class BookDevice:
    """Hardware the catalog does not hold, from ``book_hardware.toml`` ``[devices]``.

    Parameters
    ----------
    book_name : str
        The book's name (``"iPhone15Pro"``).

    Attributes
    ----------
    compute.peak_flops : pint.Quantity
        The book's single peak rate (book counts), at the precision the file states.
    compute.precision_flops : dict
        ``{precision: peak}``: the stated precision's peak plus any ``precision_flops``.
    memory.capacity, memory.bandwidth : pint.Quantity
        Memory (bytes, bytes/s); also ``sram_*`` and ``flash_*`` where the file has them.
    storage.capacity, storage.bandwidth : pint.Quantity
        Local storage, where the file has it.
    tdp, tdp_min, tdp_max, battery_capacity, unit_cost, unit_cost_max : pint.Quantity
        Power (W), battery energy (W·h) and price, where the file cites them; a figure
        without a source is absent (AttributeError), never a guess.
    dispatch_tax : pint.Quantity
        Fixed latency added to every call on the device (s), where the file cites one
        (the Intel SGX enclave's entry/exit overhead).
    peak_flops, memory_bw : pint.Quantity
        The older era's flat names.
    sources : dict
        Field -> provenance (a book constant's citation or the file's own; a device's
        ``provenance._all`` covers the fields without one of their own).
    """

    _MEMORY = {
        "memory_capacity": "capacity",
        "memory_bw": "bandwidth",
        "sram_capacity": "sram_capacity",
        "sram_bw": "sram_bandwidth",
        "flash_capacity": "flash_capacity",
        "flash_bw": "flash_bandwidth",
    }
    _STORAGE = {"storage_capacity": "capacity", "storage_bw": "bandwidth"}
    _FLAT = (
        "tdp",
        "tdp_min",
        "tdp_max",
        "battery_capacity",
        "unit_cost",
        "unit_cost_max",
        "dispatch_tax",
    )

    def __init__(self, book_name: str) -> None:
        raw = dict(book_table(_FILE)["devices"][book_name])
        prov = raw.pop("provenance", {})
        values: dict[str, Any] = {}
        sources: dict[str, Any] = {}
        for field, spec in raw.items():
            if field in ("display_name", "precision_flops"):
                continue
            values[field] = field_value(spec)
            sources[field] = field_source(spec, prov.get(field, prov.get("_all")))
        peak = values.get("peak_flops")
        precision = raw.get("peak_flops", {}).get("precision", "int8")
        rates = {} if peak is None else {precision: peak}
        for prec, spec in raw.get("precision_flops", {}).items():
            rates[prec] = field_value(spec)
            sources[f"precision_flops.{prec}"] = field_source(
                spec, prov.get("precision_flops", prov.get("_all"))
            )
        # only the figures the file cites exist: a missing one is an AttributeError
        memory = {name: values[k] for k, name in self._MEMORY.items() if k in values}
        storage = {name: values[k] for k, name in self._STORAGE.items() if k in values}
        flat = {k: values[k] for k in (*self._FLAT, "memory_bw") if k in values}
        self.__dict__.update(
            book_name=book_name,
            display_name=raw.get("display_name", book_name),
            sources=sources,
            compute=_Attrs(f"{book_name}.compute", peak_flops=peak, precision_flops=rates),
            memory=_Attrs(f"{book_name}.memory", **memory),
            peak_flops=peak,
            **flat,
        )
        if storage:
            self.__dict__["storage"] = _Attrs(f"{book_name}.storage", **storage)

    def ridge_point(self, precision: str | None = None) -> Any:
        """Roofline ridge point: the device's peak over its memory bandwidth, in FLOP/byte.

        Parameters
        ----------
        precision : str, optional
            A precision the device lists a rate for (``"int8"`` ...); default its
            single peak, as the book's ``HardwareNode.ridge_point``.

        Returns
        -------
        pint.Quantity
            FLOP per byte as the book counts FLOPs.

        Raises
        ------
        ParameterError
            When the device has no peak rate or memory bandwidth in the book's figures,
            or no rate at ``precision``.

        References
        ----------
        Williams, Waterman & Patterson (2009), "Roofline", CACM 52(4), Eq. 1 (the code
        that runs is :func:`mlsys.core.formulas.roofline.ridge_point`).
        """
        from mlsys.core.errors import ParameterError
        from mlsys.core.formulas.roofline import ridge_point

        rates = self.compute.precision_flops
        peak = self.__dict__.get("peak_flops") if precision is None else rates.get(precision)
        bandwidth = self.memory.__dict__.get("bandwidth")
        if peak is None or bandwidth is None:
            allowed = ", ".join(rates) or "none"
            raise ParameterError("precision", precision, f"a listed precision ({allowed})")
        flops = peak.m_as("1/s")
        return to_book_counts(Q_(ridge_point(flops, bandwidth.m_as("byte/s")), "flop/byte"))

    def as_accelerator(self) -> Any:
        """This device as a catalog :class:`~mlsys.core.types.Accelerator`, for solvers.

        The book's solver used the device's single ``peak_flops`` for every precision it
        lists no separate rate for; the accelerator carries that peak under ``fp32``,
        ``fp16``, ``bf16`` and ``int8`` and the listed rates over it, so
        ``Engine.solve(model, Hardware.Mobile.iPhone15Pro)`` computes what the book did.

        Returns
        -------
        Accelerator

        Raises
        ------
        ParameterError
            The device lacks a peak rate, memory capacity, bandwidth or TDP.
        """
        from mlsys.core.errors import ParameterError
        from mlsys.core.types import Accelerator

        need = {
            "peak_flops": self.__dict__.get("peak_flops"),
            "memory.capacity": self.memory.__dict__.get("capacity"),
            "memory.bandwidth": self.memory.__dict__.get("bandwidth"),
            "tdp": self.__dict__.get("tdp"),
        }
        missing = [k for k, v in need.items() if v is None]
        if missing:
            raise ParameterError(
                "hardware",
                self.book_name,
                f"a device with {', '.join(missing)} (the book gives it none)",
            )
        peak = need["peak_flops"].m_as("1/s")
        flops = {p: f"{peak!r} FLOP/s" for p in ("fp32", "fp16", "bf16", "int8")}
        for prec, rate in self.compute.precision_flops.items():
            flops[prec] = f"{rate.m_as('1/s')!r} FLOP/s"
        return Accelerator(
            name=self.book_name,
            display_name=self.display_name,
            kind="edge",
            peak_flops=flops,
            # in the file's own units, so ratios with catalog figures (GB/s) cancel
            memory_capacity=_as_text(need["memory.capacity"]),
            memory_bandwidth=_as_text(need["memory.bandwidth"]),
            tdp=_as_text(need["tdp"]),
        )

    def __getattr__(self, item: str) -> Any:
        if item.startswith("_"):
            raise AttributeError(item)
        return suffix_attribute(self, item, f"{self.book_name} (a book device)")

    def __repr__(self) -> str:
        return f"<book device {self.book_name}: {self.display_name}>"


def _member(book_name: str, spec: dict[str, str]) -> Any:
    if "catalog" in spec:
        return BookAccelerator(book_name, spec["catalog"])
    return BookDevice(spec["device"])


def hardware_group(tier: str) -> Namespace:
    """The book's deployment tier as a namespace of views (``Hardware.Cloud``).

    Parameters
    ----------
    tier : str
        ``"Cloud"``, ``"Edge"``, ``"Mobile"``, ``"Tiny"`` or ``"Workstation"``.

    Returns
    -------
    Namespace
        Book name -> :class:`BookAccelerator` or :class:`BookDevice`, built on first use:
        the tier's table in ``book_hardware.toml``, over every catalog accelerator whose
        ``kind`` belongs to the tier (:data:`TIER_KINDS`), under its key and aliases.
    """
    from mlsys.compat.views import catalog_members, query_group

    members = book_table(_FILE)["tiers"].get(tier, {})
    factories = {name: (lambda n=name, s=spec: _member(n, s)) for name, spec in members.items()}
    kinds = TIER_KINDS.get(tier, ())
    queried = catalog_members(
        "accelerators.toml", BookAccelerator, lambda row: row.get("kind") in kinds
    )
    return query_group(f"Hardware.{tier}", factories, queried)


class _TechItem(UnitSuffixed):
    """One technology class (``Tech.Memory.HBM3``): its figures and their sources."""

    def __init__(self, path: str, raw: dict[str, Any]) -> None:
        raw = dict(raw)
        prov = raw.pop("provenance", {})
        self.path = path
        self.sources = {f: field_source(s, prov.get(f)) for f, s in raw.items()}
        for field, spec in raw.items():
            setattr(self, field, field_value(spec))

    def __repr__(self) -> str:
        return f"<{self.path}>"


def tech_group() -> Namespace:
    """``Hardware.Tech``: the book's technology classes (memory, ops, links, storage).

    Returns
    -------
    Namespace
        ``Tech.Memory.HBM3.latency``, ``Tech.Op.FlopFp16.energy``,
        ``Tech.Interconnect.NVLink.latency``, ``Tech.Storage.NvmeGen4.bandwidth``.
    """
    tech = book_table(_FILE)["tech"]
    groups = {
        group: Namespace(
            f"Hardware.Tech.{group}",
            {item: _TechItem(f"Hardware.Tech.{group}.{item}", raw) for item, raw in items.items()},
        )
        for group, items in tech.items()
    }
    return Namespace("Hardware.Tech", groups)
