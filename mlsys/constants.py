"""Book-facing constants: units, scalars and the numbers chapters print or compute with.

Two kinds of chapter import from here: books written for mlsys (``Q_``, ``BYTES_FP16``,
``OPTIMIZER_STATE_BYTES``), and the open textbook *Machine Learning Systems*
(harvard-edge/cs249r_book), whose chapters import ``second``, ``GB``, ``TFLOPs``,
``BILLION``, ``H100_MEM_BW``, ``MFU_TRAINING_HIGH`` and about 190 more names from a module
of this name. Nothing here is a second copy of a number:

* **Hardware, model and network values** come from mlsys's catalog (``Hardware``,
  ``Models``, ``Fabrics``, ``Nodes``) and its cited formulas, looked up on first use
  (``H100_MEM_BW`` is ``Hardware.H100.memory_bandwidth``; ``GPT3_TRAINING_OPS`` is
  ``training_flops(N, D)`` of the catalog's GPT-3).
* **The book's own assumptions and reference figures** (``MFU_TRAINING_HIGH``,
  ``SCALING_EFF_1024GPU``, ``GPU_MTTF_HOURS``, the Horowitz energies, …) are entries of
  the catalog data file ``book_assumptions.toml``, each with its provenance;
  :func:`provenance` returns it.
* **Units and scalars** (``second``, ``GB``, ``BILLION``, ``SEC_PER_DAY``) are the
  registry's units and exact definitions.

The book's arithmetic. The book counts FLOPs, parameters and dollars as plain numbers;
so do its names here (``flop``, ``param``, ``TFLOPs``, ``USD`` and every value in them
are the dimensionless count units of :func:`mlsys.core.units.to_book_counts`), so
``(GPT3_PARAMS * 4 * byte).m_as(MB)`` works as in the book. These names keep the book's
meaning where it differs from mlsys's: ``mlsys.ureg.flop`` is a dimension of its own and
``Q_(1, "flop") + Q_(1, "byte")`` still raises.

Where mlsys's value *corrects* the book's (80 GiB vs 81,559 MiB, B200 sparse vs dense,
ResNet-50 and MobileNetV2 multiply-adds vs FLOPs, …), mlsys's value is the one served and
:func:`book_differences` says what the book printed and why. Where the two differ only
by *convention*, the book's name keeps the book's meaning and mlsys's own accessor keeps
mlsys's: ``NVLINK_H100_BW`` is 900 GB/s, both directions summed as NVIDIA's datasheet
counts (``2 x Hardware.H100.scaleup_bandwidth``), while ``Hardware.H100.scaleup_bandwidth``
stays 450 GB/s per direction, the figure collective-time formulas need;
:func:`book_conventions` lists these names. One name means something else in mlsys's
formulas:
``HOURS_PER_YEAR`` here is the book's 8,760 (a 365-day year), while
``mlsys.formulas.HOURS_PER_YEAR`` is 8,766 (the Julian year of 365.25 days that
mlsys's economics uses).

Examples
--------
>>> from mlsys.constants import Q_, BYTES_FP16
>>> (Q_(70e9, "parameter") * BYTES_FP16 / Q_(1, "parameter")).to("GB")
<Quantity(140.0, 'gigabyte')>
>>> from mlsys.constants import GPT3_PARAMS, BYTES_FP16, GB
>>> round((GPT3_PARAMS * BYTES_FP16).m_as(GB))
349
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import Any

from mlsys.core.deprecation import deprecated_getattr
from mlsys.core.formulas.memory import OPTIMIZER_STATE_BYTES
from mlsys.core.precision import BYTES_PER_ELEMENT, PRECISIONS
from mlsys.core.units import Q_, _LazyRegistry, get_registry, to_book_counts
from mlsys.core.units import ureg as _registry

# ---------------------------------------------------------------------------------------
# Units: name -> unit expression in mlsys's registry (count units are the book's counts).
# ---------------------------------------------------------------------------------------
_UNITS: dict[str, str] = {
    # The book's own definitions, where the registry reads the name otherwise or not at
    # all; every other unit name is the registry's (``_RULE_UNITS`` and any name on
    # attribute access). "MS" is a millisecond in the book (megasiemens in the registry):
    "MS": "ms",
    # bits per second (the registry reads "Gbps" as gigabaud, a symbol rate)
    "Gbps": "Gbit/s",
    # operations (counted as FLOPs) per second: the book's integer-operation rates
    "OPS": "flop_count / second",
    "KOPS": "kiloflop_count / second",
    "MOPS": "megaflop_count / second",
    "GOPS": "gigaflop_count / second",
    "TOPS": "teraflop_count / second",
    # "B" is the book's billion, not a prefix of the registry
    "Bparam": "gigaparameter_count",
    # the book defines EUR as its dollar count (one currency unit, no exchange rate)
    "EUR": "dollar_count",
}

# Unit names the book's units module exports, so ``from mlsys.constants import *`` binds
# them. Their values are not typed here: each is the unit the registry spells
# (:func:`_registry_unit`), as any other unit name (``kilojoule``) is on attribute access.
_RULE_UNITS: tuple[str, ...] = (
    "bit",
    "byte",
    "KB",
    "MB",
    "GB",
    "TB",
    "PB",
    "KiB",
    "MiB",
    "GiB",
    "TiB",
    "second",
    "NS",
    "US",
    "ms",
    "hour",
    "day",
    "joule",
    "watt",
    "kilowatt",
    "meter",
    "flop",
    "KFLOPs",
    "MFLOPs",
    "GFLOP",
    "GFLOPs",
    "TFLOP",
    "TFLOPs",
    "PFLOPs",
    "ZFLOPs",
    "param",
    "Kparam",
    "Mparam",
    "USD",
    "dollar",
    "count",
    "milliwatt",
    "microsecond",
    "millisecond",
    "nanosecond",
    "MICROSECOND",
    "MILLISECOND",
    "NANOSECOND",
    "PFLOP",
    "EFLOP",
    "EFLOPs",
    "Tparam",
)

# ---------------------------------------------------------------------------------------
# Exact scalars (definitions; the book's 30-day month and 365-day year are its conventions)
# ---------------------------------------------------------------------------------------
THOUSAND = 1e3
MILLION = 1e6
BILLION = 1e9
TRILLION = 1e12
QUADRILLION = 1e15
SECONDS_PER_MINUTE = 60
MINUTES_PER_HOUR = 60
SEC_PER_HOUR = SECONDS_PER_MINUTE * MINUTES_PER_HOUR
HOURS_PER_DAY = 24
SEC_PER_DAY = SEC_PER_HOUR * HOURS_PER_DAY
DAYS_PER_MONTH = 30  # the book's convention for monthly prices
DAYS_PER_YEAR = 365  # the book's convention (no leap day)
HOURS_PER_YEAR = HOURS_PER_DAY * DAYS_PER_YEAR  # 8,760; mlsys.formulas' is 8,766 (Julian)
SEC_PER_YEAR = SEC_PER_DAY * DAYS_PER_YEAR  # the book's 365-day year
SEC_PER_YEAR_LEAP = int(365.25 * SEC_PER_DAY)  # the Julian year, 31,557,600 s
MS_PER_SEC = 1000
US_PER_MS = 1000
NS_PER_US = 1000
NS_PER_MS = NS_PER_US * US_PER_MS
NS_PER_SEC = NS_PER_MS * MS_PER_SEC
HUNDRED = 100
BITS_PER_BYTE = 8
KIB_TO_BYTES = 1024
MIB_TO_BYTES = 1024 * KIB_TO_BYTES
GIB_TO_BYTES = 1024 * MIB_TO_BYTES

# Bit widths and encodings (IEEE 754-2019 binary32; 8-bit integers; AVX-512 registers;
# 8-bit colour channels; RGB)
FP32_BITS = 32
INT8_BITS = 8
SIMD_REGISTER_BITS = 512
COLOR_DEPTH_8BIT = 2**8
IMAGE_CHANNELS_RGB = 3

BYTES_FP64 = Q_(BYTES_PER_ELEMENT["fp64"], "byte")
"""8 bytes per fp64 value."""
BYTES_FP32 = Q_(BYTES_PER_ELEMENT["fp32"], "byte")
"""4 bytes per fp32 value."""
BYTES_TF32 = Q_(BYTES_PER_ELEMENT["tf32"], "byte")
"""4 bytes per tf32 value (stored as fp32)."""
BYTES_BF16 = Q_(BYTES_PER_ELEMENT["bf16"], "byte")
"""2 bytes per bf16 value."""
BYTES_FP16 = Q_(BYTES_PER_ELEMENT["fp16"], "byte")
"""2 bytes per fp16 value."""
BYTES_FP8 = Q_(BYTES_PER_ELEMENT["fp8"], "byte")
"""1 byte per fp8 value."""
BYTES_INT8 = Q_(BYTES_PER_ELEMENT["int8"], "byte")
"""1 byte per int8 value."""
BYTES_FP4 = Q_(BYTES_PER_ELEMENT["fp4"], "byte")
"""Half a byte per fp4 value."""
BYTES_INT4 = Q_(BYTES_PER_ELEMENT["int4"], "byte")
"""Half a byte per int4 value."""
BYTES_INT32 = Q_(32 / BITS_PER_BYTE, "byte")
"""4 bytes per int32 value (32 bits)."""
PRECISION_MAP = {
    name: Q_(BYTES_PER_ELEMENT[name], "byte")
    for name in ("fp32", "tf32", "bf16", "fp16", "fp8", "int8", "int4")
}
"""Precision name -> bytes per element, the book's keys (:data:`BYTES_PER_ELEMENT`)."""


# ---------------------------------------------------------------------------------------
# Values from the catalog and the cited formulas (looked up on first use)
# ---------------------------------------------------------------------------------------
def _catalog(registry: str, key: str) -> Any:
    import mlsys.core.catalog as catalog

    return getattr(catalog, registry).get(key)


def _hw(key: str, field: str) -> Callable[[], Any]:
    return lambda: getattr(_catalog("Hardware", key), field)


def _both_directions(key: str) -> Callable[[], Any]:
    # NVLink as the book and NVIDIA's datasheets count it: what a GPU sends plus what it
    # receives at once, twice the catalog's per-direction scale-up bandwidth
    return lambda: 2.0 * _catalog("Hardware", key).scaleup_bandwidth


def _flops(key: str, precision: str) -> Callable[[], Any]:
    return lambda: _catalog("Hardware", key).peak_flops[precision]


def _fabric(key: str, field: str, unit: str | None = None) -> Callable[[], Any]:
    def value() -> Any:
        q = getattr(_catalog("Fabrics", key), field)
        return q if unit is None else float(q.m_as(unit))

    return value


def _param_count(model: Any) -> float:
    # a transformer counts its parameters from its shape; other workloads state them
    total = getattr(model, "total_params", None)
    return float(model.params if total is None else total)


def _params(key: str) -> Callable[[], Any]:
    return lambda: Q_(_param_count(_catalog("Models", key)), "parameter")


def _gpt3_training_flops() -> Any:
    from mlsys.core.formulas.transformer import training_flops

    gpt3 = _catalog("Models", "GPT3_175B")
    return Q_(training_flops(_param_count(gpt3), gpt3.training_tokens), "flop")


def _resnet50_flops() -> Any:
    return Q_(_catalog("Models", "ResNet50").flops_per_sample, "flop")


def _adam_state_bytes() -> Any:
    from mlsys.core.formulas.memory import optimizer_state_bytes_per_param

    # Adam's two fp32 moments, without the master copy of the weights
    return Q_(optimizer_state_bytes_per_param("adam", master_weights=False), "byte")


_CATALOG: dict[str, Callable[[], Any]] = {
    # NVIDIA V100 (SXM2)
    "V100_FLOPS_FP16_TENSOR": _flops("V100", "fp16"),
    "V100_FLOPS_FP32": _flops("V100", "fp32"),
    "V100_MEM_BW": _hw("V100", "memory_bandwidth"),
    "V100_MEM_CAPACITY": _hw("V100", "memory_capacity"),
    "V100_TDP": _hw("V100", "tdp"),
    "NVLINK_V100_BW": _both_directions("V100"),
    # NVIDIA A100 80 GB (SXM)
    "A100_FLOPS_FP16_TENSOR": _flops("A100_80GB", "fp16"),
    "A100_FLOPS_TF32": _flops("A100_80GB", "tf32"),
    "A100_FLOPS_FP32": _flops("A100_80GB", "fp32"),
    "A100_FLOPS_INT8": _flops("A100_80GB", "int8"),
    "A100_MEM_BW": _hw("A100_80GB", "memory_bandwidth"),
    "A100_MEM_CAPACITY": _hw("A100_80GB", "memory_capacity"),
    "A100_TDP": _hw("A100_80GB", "tdp"),
    "NVLINK_A100_BW": _both_directions("A100_80GB"),
    # NVIDIA H100 (SXM)
    "H100_FLOPS_FP16_TENSOR": _flops("H100", "fp16"),
    "H100_FLOPS_FP8_TENSOR": _flops("H100", "fp8"),
    "H100_FLOPS_TF32": _flops("H100", "tf32"),
    "H100_FLOPS_INT8": _flops("H100", "int8"),
    "H100_MEM_BW": _hw("H100", "memory_bandwidth"),
    "H100_MEM_CAPACITY": _hw("H100", "memory_capacity"),
    "H100_TDP": _hw("H100", "tdp"),
    "NVLINK_H100_BW": _both_directions("H100"),
    # NVIDIA B200
    "B200_FLOPS_FP16_TENSOR": _flops("B200", "fp16"),
    "B200_FLOPS_FP8_TENSOR": _flops("B200", "fp8"),
    "B200_MEM_BW": _hw("B200", "memory_bandwidth"),
    "B200_MEM_CAPACITY": _hw("B200", "memory_capacity"),
    "B200_TDP": _hw("B200", "tdp"),
    # Google TPU v4 and v5p
    "TPUV4_FLOPS_BF16": _flops("TPU_V4", "bf16"),
    "TPUV4_MEM_BW": _hw("TPU_V4", "memory_bandwidth"),
    "TPUV5P_FLOPS_BF16": _flops("TPU_V5P", "bf16"),
    "TPUV5P_MEM_BW": _hw("TPU_V5P", "memory_bandwidth"),
    "TPUV5P_MEM_CAPACITY": _hw("TPU_V5P", "memory_capacity"),
    "TPUV5P_ICI_BW": _fabric("TPU_ICI_V5P", "bandwidth"),
    # host and network fabrics
    "PCIE_GEN4_BW": _fabric("PCIE4", "bandwidth"),
    "PCIE_GEN5_BW": _fabric("PCIE5", "bandwidth"),
    "INFINIBAND_HDR_BW": _fabric("IB_HDR", "link_rate"),
    "INFINIBAND_NDR_BW": _fabric("IB_NDR", "link_rate"),
    "INFINIBAND_HDR_BW_GBS": _fabric("IB_HDR", "bandwidth", "GB/s"),
    "INFINIBAND_NDR_BW_GBS": _fabric("IB_NDR", "bandwidth", "GB/s"),
    "INFINIBAND_XDR_BW_GBS": _fabric("IB_XDR", "bandwidth", "GB/s"),
    "ROCE_100G_BW_GBS": _fabric("ROCE_100G", "bandwidth", "GB/s"),
    "ETHERNET_400G_BW_GBS": _fabric("ROCE_400G", "bandwidth", "GB/s"),
    "NETWORK_10G_BW": _fabric("ETH_10G", "link_rate"),
    "NETWORK_100G_BW": _fabric("ETH_100G", "link_rate"),
    "LATENCY_INFINIBAND": _fabric("IB_NDR", "latency"),
    "IB_NDR_LATENCY_US": _fabric("IB_NDR", "latency", "us"),
    "IB_HDR_LATENCY_US": _fabric("IB_HDR", "latency", "us"),
    "ROCE_LATENCY_US": _fabric("ROCE_100G", "latency", "us"),
    "TCP_LATENCY_US": _fabric("ETH_10G", "latency", "us"),
    "GPUS_PER_HOST": lambda: _catalog("Nodes", "DGX_H100").accelerators_per_node,
    # models
    "GPT2_PARAMS": _params("GPT2_XL"),
    "GPT2_LAYERS": lambda: _catalog("Models", "GPT2_XL").layers,
    "GPT2_HIDDEN_DIM": lambda: _catalog("Models", "GPT2_XL").hidden,
    "GPT3_PARAMS": _params("GPT3_175B"),
    "GPT3_TRAINING_OPS": _gpt3_training_flops,
    "RESNET50_PARAMS": _params("ResNet50"),
    "RESNET50_FLOPs": _resnet50_flops,
    # memory formulas
    "BYTES_ADAM_STATE": _adam_state_bytes,
}
"""Book name -> the catalog entry or cited formula that gives its value."""


@lru_cache(maxsize=1)
def _book_table() -> dict[str, dict[str, Any]]:
    from mlsys.core.catalog import load_table

    return load_table("book_assumptions.toml")


def _assumption(name: str) -> Any:
    value = _book_table()["assumptions"][name]["value"]
    return Q_(value) if isinstance(value, str) else value


def _names_in_file() -> list[str]:
    # read once when the module is imported, so __all__ lists every name (for import *)
    from mlsys.core.catalog import load_table

    return list(load_table("book_assumptions.toml")["assumptions"])


_ASSUMPTIONS: tuple[str, ...] = tuple(_names_in_file())


def provenance(name: str) -> dict[str, Any]:
    """Where the value of a constant comes from, and how it differs from the book's.

    Parameters
    ----------
    name : str
        A name of this module, e.g. ``"MFU_TRAINING_HIGH"`` or ``"H100_MEM_BW"``.

    Returns
    -------
    dict
        ``source`` ("book_assumptions.toml", "catalog" or "definition"); for the data
        file its ``kind``, ``reference`` and ``note``; for catalog values the catalog
        entry's provenance records under ``records`` when known; ``book_value`` and
        ``reason`` when mlsys's value differs from what the book printed; ``convention``
        (the name's meaning here) and ``mlsys_accessor`` (mlsys's own, in its own
        convention) when the two differ by convention only.

    Raises
    ------
    KeyError
        For a name this module does not define.

    Examples
    --------
    >>> provenance("MFU_TRAINING_HIGH")["kind"]
    'estimate'
    >>> provenance("B200_FLOPS_FP16_TENSOR")["book_value"]
    '4500 TFLOPs / s'
    >>> provenance("NVLINK_H100_BW")["mlsys_accessor"][:34]
    'Hardware.H100.scaleup_bandwidth: 4'
    """
    info: dict[str, Any]
    if name in _ASSUMPTIONS:
        entry = dict(_book_table()["assumptions"][name])
        entry.pop("value")
        info = {"source": "book_assumptions.toml", **entry}
    elif name in _CATALOG:
        info = {"source": "catalog"}
    elif name in globals() or name in _UNITS or name in _RULE_UNITS:
        info = {"source": "definition"}
    else:
        raise KeyError(name)
    diff = _book_table()["differences"].get(name)
    if diff:
        info.update(book_value=diff["book"], reason=diff["reason"])
    conv = _book_table().get("conventions", {}).get(name)
    if conv:
        info.update(convention=conv["book"], mlsys_accessor=conv["mlsys"])
    return info


def book_differences() -> dict[str, dict[str, str]]:
    """Names whose value here differs from what the book's own package printed.

    Returns
    -------
    dict
        Name -> ``{"book": the book's value, "reason": why mlsys's value is served}``
        (e.g. ``H100_MEM_CAPACITY``: the book's 80 GiB overstates the 81,559 MiB exposed).
        Differences of convention only are not here: see :func:`book_conventions`.

    Examples
    --------
    >>> book_differences()["B200_FLOPS_FP16_TENSOR"]["book"]
    '4500 TFLOPs / s'
    """
    return {name: dict(row) for name, row in _book_table()["differences"].items()}


def book_conventions() -> dict[str, dict[str, str]]:
    """Names that keep the book's convention where mlsys's own accessor keeps another.

    Returns
    -------
    dict
        Name -> ``{"book": what the name means here (its value is the catalog's in that
        convention), "mlsys": the accessor new code uses and its convention}``.

    Examples
    --------
    >>> sorted(book_conventions())
    ['NVLINK_A100_BW', 'NVLINK_H100_BW', 'NVLINK_V100_BW']
    >>> from mlsys.constants import NVLINK_H100_BW
    >>> NVLINK_H100_BW.m_as("GB/s")  # both directions; Hardware.H100 says 450 per direction
    900.0
    """
    return {name: dict(row) for name, row in _book_table().get("conventions", {}).items()}


def _resolve(name: str) -> Any:
    if name in _UNITS:
        value = _registry.Unit(_UNITS[name])
    elif name in _CATALOG:
        value = to_book_counts(_CATALOG[name]())
    elif name in _ASSUMPTIONS:
        value = to_book_counts(_assumption(name))
    else:
        value = _registry_unit(name)
    globals()[name] = value  # a constant: later reads skip __getattr__
    return value


def _registry_unit(name: str) -> Any:
    """The rule for unit names: any unit the registry spells (``microsecond``, ``EFLOP``,
    ``Tparam``, ``MILLISECOND``), FLOPs, parameters and dollars as the book's counts."""
    from mlsys.core.unit_names import registry_unit

    unit = registry_unit(name)
    if unit is None:
        raise AttributeError(f"module 'mlsys.constants' has no attribute {name!r}")
    return to_book_counts(Q_(1.0, unit)).units


class _BookUnitRegistry(_LazyRegistry):
    """mlsys's unit registry as the book's code reads its names: ``ureg.KB``, ``ureg.MS``.

    The book's units module defines its names in its registry (``KB = 1e3 * byte``,
    ``MS = 1e-3 * second``, ``US``, ``NS``, ``Gbps = 1e9 * bit / second`` ...), so its
    cells write ``10 * ureg.KB`` and ``ureg.MS``. mlsys's registry lacks some of them
    (``US``, ``NS``) and reads others differently (``MS`` is a megasiemens, ``Gbps`` a
    gigabaud). This view gives those names the unit this module binds to them; any other
    attribute is the registry's own (``ureg.flop`` stays mlsys's ``[compute]`` dimension,
    ``ureg.KB`` its decimal kilobyte), and calls and lookups go to the registry unchanged.

    Examples
    --------
    >>> from mlsys.constants import ureg
    >>> (1.5 * ureg.US).m_as("second")
    1.5e-06
    >>> (5 * ureg.MS).m_as("second")
    0.005
    >>> (400 * ureg.Gbps).m_as("GB/s")
    50.0
    """

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        if name in _UNITS or (name in _RULE_UNITS and name not in get_registry()):
            return _resolve(name)
        return getattr(get_registry(), name)

    def __repr__(self) -> str:
        return "<mlsys unit registry, the book's unit names>"


ureg: Any = _BookUnitRegistry()
"""mlsys's unit registry with the book's unit names (:class:`_BookUnitRegistry`)."""

__all__ = [
    "ureg",
    "Q_",
    "PRECISIONS",
    "BYTES_PER_ELEMENT",
    "OPTIMIZER_STATE_BYTES",
    "BYTES_FP64",
    "BYTES_FP32",
    "BYTES_TF32",
    "BYTES_BF16",
    "BYTES_FP16",
    "BYTES_FP8",
    "BYTES_INT8",
    "BYTES_FP4",
    "BYTES_INT4",
    "BYTES_INT32",
    "THOUSAND",
    "MILLION",
    "BILLION",
    "TRILLION",
    "QUADRILLION",
    "SECONDS_PER_MINUTE",
    "MINUTES_PER_HOUR",
    "SEC_PER_HOUR",
    "HOURS_PER_DAY",
    "SEC_PER_DAY",
    "DAYS_PER_MONTH",
    "DAYS_PER_YEAR",
    "HOURS_PER_YEAR",
    "MS_PER_SEC",
    "BITS_PER_BYTE",
    "KIB_TO_BYTES",
    "SEC_PER_YEAR",
    "SEC_PER_YEAR_LEAP",
    "US_PER_MS",
    "NS_PER_US",
    "NS_PER_MS",
    "NS_PER_SEC",
    "HUNDRED",
    "MIB_TO_BYTES",
    "GIB_TO_BYTES",
    "FP32_BITS",
    "INT8_BITS",
    "SIMD_REGISTER_BITS",
    "COLOR_DEPTH_8BIT",
    "IMAGE_CHANNELS_RGB",
    "PRECISION_MAP",
    "provenance",
    "book_differences",
    "book_conventions",
    *_UNITS,
    *_RULE_UNITS,
    *_CATALOG,
    *_ASSUMPTIONS,
]

# old name -> new name (none yet); served through the one deprecation mechanism
_DEPRECATED: dict[str, str] = {}

__getattr__ = deprecated_getattr("mlsys.constants", _DEPRECATED, fallback=_resolve)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
