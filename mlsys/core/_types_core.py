"""The ground of :mod:`mlsys.core.types`: its errors, field types, base model and Accelerator.

:mod:`mlsys.core.types` re-exports everything here and creates its other types (in
``_types_systems``, ``_types_workloads`` and ``_types_facilities``, which build on this
module) when first asked for, so no module of the types imports one that imports it.
Every class is documented, linked and pickled as ``mlsys.core.types.<name>``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cached_property, lru_cache
from typing import Annotated, Any, Literal

import pint
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from mlsys.core.errors import MlsysError, ParameterError
from mlsys.core.precision import normalize_precision
from mlsys.core.provenance import CatalogOrigin, register_entry
from mlsys.core.traced import TracedFloat, traced, traced_magnitude
from mlsys.core.units import as_quantity, as_si

__all__ = ["ConfigurationError", "Provenance", "QuantityOf", "Accelerator", "RevalidatingCopy"]


class ConfigurationError(MlsysError):
    """A catalog entry or a user-built type failed validation.

    The message lists each offending field, the value given and what was expected.

    Parameters
    ----------
    model : str
        Name of the type being built (e.g. ``"Accelerator"``).
    errors : list of (field, value, message)
        One tuple per problem.
    """

    def __init__(self, model: str, errors: list[tuple[str, Any, str]]) -> None:
        self.model = model
        self.errors = errors
        # One line a person can read: the field, a short form of the value, the rule.
        # (pydantic's own dump of a missing field repeats the whole input: kilobytes.)
        parts = [
            message
            if field == "(model)"  # a rule about several fields: the rule says it all
            else f"{field}: {message}"
            if value is _MISSING
            else f"{field}={_short(value)}: {message}"
            for field, value, message in errors
        ]
        message = f"invalid {model}: " + "; ".join(parts)
        if len(message) > _MAX_MESSAGE:
            message = message[: _MAX_MESSAGE - 1] + "…"
        super().__init__(message)


_MAX_MESSAGE = 300  # characters: an error is read, not scrolled
_MISSING = object()  # a required field that was not given (it has no value to show)


def _short(value: Any) -> str:
    """A value as a person would name it: a catalog entry by its label, else a short repr."""
    label = getattr(value, "label", None)
    if isinstance(label, str):
        return repr(label)
    if hasattr(value, "units") and hasattr(value, "magnitude"):
        return f"'{value:~P}'"
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


@lru_cache(maxsize=1)
def _number_unit() -> re.Pattern[str]:
    """The form of "3.35 TB/s", "1978.9 TFLOP/s", "81559 MiB": a number, a space, a unit.

    Compiled when a row is first validated: 0.3 ms that a process reading its entries from
    the catalog's cache never spends.
    """
    number = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
    return re.compile(rf"^\s*({number})\s+([A-Za-zµ][^\s]*)\s*$")


@lru_cache(maxsize=512)
def _unit_named(text: str) -> Any:
    from mlsys.core.units import get_registry

    return get_registry().Unit(text)


def _parse_quantity(value: str) -> Any:
    """A catalog string such as "3.35 TB/s" as a Quantity, or the string if not that shape.

    pint's expression parser costs ~0.4 ms a string and a catalog holds hundreds: the
    number is read by ``float`` and each unit text parsed once (the first formatted
    catalog number of a book waits for the whole accelerator table to load).
    """
    match = _number_unit().match(value)
    if match is None:
        return value
    try:
        unit = _unit_named(match.group(2))
    except Exception:
        return value  # let pint's full parser say what is wrong
    magnitude = float(match.group(1))
    if magnitude.is_integer() and "." not in match.group(1) and "e" not in match.group(1).lower():
        magnitude = int(magnitude)  # "700 W" stays 700, as pint's parser reads it
    return unit._REGISTRY.Quantity(magnitude, unit)


def _quantity_validator(unit: str):
    def validate(value: Any, info: Any) -> pint.Quantity:
        name = getattr(info, "field_name", None) or "value"
        if isinstance(value, str):
            value = _parse_quantity(value)
        return as_quantity(value, unit, name)

    return validate


def QuantityOf(unit: str, description: str = "") -> Any:
    """Annotated pydantic type of a Quantity with the dimension of ``unit``.

    Parameters
    ----------
    unit : str
        Unit whose dimension the field must have; plain numbers are taken in it.
    description : str
        Field description for the JSON schema.

    Returns
    -------
    typing.Annotated
        A type to use in a pydantic model's field annotation: validated by
        :func:`mlsys.core.units.as_quantity` (a number is taken in ``unit``, a string
        such as ``"3.35 TB/s"`` is parsed), serialised as text (``"3.35 TB/s"``), a
        string in the JSON schema.
    """
    return Annotated[pint.Quantity, _QuantityAnnotation(unit, description)]


class _QuantityAnnotation:
    """What :func:`QuantityOf` annotates a field with, turned into pydantic's own when used.

    The field is pydantic's ``PlainValidator`` + ``PlainSerializer`` + ``WithJsonSchema``
    of the Quantity; they are created when pydantic builds the model's schema (on first
    validation), not when the model class is: importing ``pydantic.functional_serializers``
    alone costs about 2 ms of a fresh interpreter, paid only by a program that
    validates an entry.
    """

    __slots__ = ("description", "unit")

    def __init__(self, unit: str, description: str) -> None:
        self.unit = unit
        self.description = description or f"quantity in {unit}"

    def __repr__(self) -> str:
        return f"QuantityOf({self.unit!r}, {self.description!r})"

    def __get_pydantic_core_schema__(self, source: Any, handler: Any) -> Any:
        from pydantic import PlainSerializer, PlainValidator, WithJsonSchema

        field = Annotated[
            source,
            PlainValidator(_quantity_validator(self.unit)),
            PlainSerializer(_quantity_text, return_type=str),
            WithJsonSchema({"type": "string", "description": self.description}),
        ]
        return handler.generate_schema(field)


def _quantity_text(q: Any) -> str:
    return f"{q:~P}"


Bandwidth = QuantityOf("byte/s", "bytes per second")
Bytes = QuantityOf("byte", "bytes")
FlopRate = QuantityOf("flop/s", "floating-point operations per second")
Power = QuantityOf("W", "watts")
Duration = QuantityOf("s", "seconds")
Money = QuantityOf("USD", "US dollars")
CarbonIntensity = QuantityOf("kgCO2e/kWh", "kg CO2e per kWh")
Carbon = QuantityOf("kgCO2e", "kg CO2e")
WaterIntensity = QuantityOf("L/kWh", "litres per kWh")
EnergyPrice = QuantityOf("USD/kWh", "US dollars per kWh")


class Provenance(BaseModel):
    """Where a catalog value comes from.

    Attributes
    ----------
    kind : {"datasheet", "paper", "estimate", "measurement", "standard", "derived"}
        The nature of the source.
    reference : str
        Human-readable citation (document title, authors, year, table or page).
    url : str or None
        Where the source can be read, if it is public.
    note : str or None
        Conventions or caveats (e.g. "bidirectional 900 GB/s halved").
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    kind: Literal["datasheet", "paper", "estimate", "measurement", "standard", "derived"]
    reference: str
    url: str | None = None
    note: str | None = None


class RevalidatingCopy:
    """Mixin for frozen pydantic models: ``model_copy(update=...)`` validates the copy.

    Used by every catalog entry and by :class:`~mlsys.core.layout.TrainingLayout`.
    """

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Any:
        """A copy; with ``update``, a new object validated from its fields.

        pydantic's own ``model_copy(update=...)`` neither validates the update nor drops
        what the entry derived from its old fields (the SI floats solvers read, cached
        on first use), so a copy with a new ``peak_flops`` or ``memory_bandwidth`` would
        still be solved with the old one. Here an update builds the entry anew: every
        check runs and every derived figure comes from the new fields.

        Parameters
        ----------
        update : mapping, optional
            Field name -> new value.
        deep : bool
            Without ``update``: copy nested values too (pydantic's meaning).

        Returns
        -------
        object
            An entry of the same class.

        Raises
        ------
        MlsysError
            When the updated fields do not make a valid object (an unknown field, a
            negative bandwidth, a wrong unit ...): the class's own error
            (ConfigurationError for a catalog entry, ParameterError for a layout).
        """
        if not update:
            return super().model_copy(deep=deep)
        fields = {name: getattr(self, name) for name in self.model_fields_set}
        return type(self)(**{**fields, **update})


class _Model(RevalidatingCopy, BaseModel):
    """Common base: frozen, strict about unknown fields, errors as ConfigurationError."""

    model_config = ConfigDict(
        frozen=True,
        extra="forbid",
        arbitrary_types_allowed=True,
        validate_default=True,
        defer_build=True,  # schemas built on first use: reading Hardware builds one, not nine
    )

    name: str = Field(description="Catalog key or user-chosen name.")
    display_name: str | None = Field(None, description="Name as printed in a book.")
    provenance: dict[str, Provenance] = Field(
        default_factory=dict,
        description="Source of each field's value; key 'default' covers fields not listed.",
    )

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            raise _as_configuration_error(type(self).__name__, exc) from None
        if self.provenance:
            # An entry that cites sources lends them to its Quantities: fmt(h100.tdp) can
            # then say "datasheet" on hover (mlsys.core.provenance).
            register_entry(self)

    @property
    def label(self) -> str:
        """Name to print: ``display_name`` if set, else ``name``."""
        return self.display_name or self.name

    def provenance_of(self, field: str) -> Provenance | None:
        """Provenance of one field's value (its own entry, else the entry's default).

        Parameters
        ----------
        field : str
            Field name, e.g. ``"memory_bandwidth"``.

        Returns
        -------
        Provenance or None
        """
        return self.provenance.get(field) or self.provenance.get("default")

    def cite(self, field: str, key: str | None = None) -> Any:
        """A field's value carrying its catalog origin, for a chapter to compute with.

        Quantity fields carry it already (``fmt(h100.memory_bandwidth * 8)`` names the
        datasheet); plain fields (``layers``, ``kv_heads``, ``accelerators_per_node``) are
        bare ints and floats that solvers use at full speed, so a chapter that prints
        one, or a number computed from one, asks for it here:
        ``count(llama70b.cite("layers") * 2)``.

        Parameters
        ----------
        field : str
            Field or property name (``"layers"``, ``"memory_bandwidth"``,
            ``"total_params"``).
        key : str, optional
            Key inside a mapping field (``"bf16"`` of ``peak_flops``).

        Returns
        -------
        TracedInt, TracedFloat or pint.Quantity
            Equal to the value; its origin is this entry's field and the source the
            catalog gives for it (:class:`~mlsys.core.provenance.CatalogOrigin`).

        Raises
        ------
        ParameterError
            When the entry has no such field, or its value is not a number or Quantity.

        Examples
        --------
        >>> from mlsys import Models
        >>> from mlsys.core.provenance import origin_of
        >>> layers = Models.Llama2_70B.cite("layers")
        >>> layers == 80, "Touvron" in origin_of(layers * 2).describe()
        (True, True)
        """
        from mlsys.core.errors import ParameterError

        value = getattr(self, field, None) if not field.startswith("_") else None
        if value is None or callable(value):
            raise ParameterError("field", field, f"a field of {type(self).__name__} with a value")
        if key is not None:
            if not isinstance(value, dict) or key not in value:
                raise ParameterError("key", key, f"a key of {type(self).__name__}.{field}")
            value = value[key]
        origin = CatalogOrigin(self, field, key)
        magnitude = getattr(value, "_magnitude", None)
        if magnitude is not None:
            out = traced_magnitude(_untraced(magnitude), (origin,))
            if out is magnitude or not hasattr(out, "_origins"):
                raise ParameterError("field", field, "a field holding one number")
            return value.__class__(out, value._units)
        out = traced(value, (origin,))
        if out is value:
            raise ParameterError("field", field, "a field holding a number or a Quantity")
        return out

    def __str__(self) -> str:
        return self.label


def _untraced(value: Any) -> Any:
    plain = getattr(value, "_plain", None)
    return value if plain is None else plain()


def _as_configuration_error(model: str, exc: ValidationError) -> ConfigurationError:
    problems = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err.get("loc", ())) or "(model)"
        ctx_error = (err.get("ctx") or {}).get("error")
        message = str(ctx_error) if ctx_error is not None else err.get("msg", "invalid")
        value = err.get("input")
        if err.get("type") == "missing":
            value, message = _MISSING, "required"
        elif isinstance(ctx_error, ParameterError):
            message = f"expected {ctx_error.allowed}"  # the value is already shown once
            if not err.get("loc"):  # raised by a model-wide check: it names its field
                field, value = ctx_error.name, ctx_error.value
        problems.append((field, value, message))
    return ConfigurationError(model, problems)


# ---------------------------------------------------------------------------------
# Hardware
# ---------------------------------------------------------------------------------


class Accelerator(_Model):
    """One accelerator (GPU, TPU chip, NPU, edge SoC or microcontroller).

    Attributes
    ----------
    vendor : str
        Manufacturer.
    kind : {"gpu", "tpu", "npu", "cpu", "edge", "mcu"}
        Device class.
    year : int or None
        Year of introduction.
    peak_flops : dict of str to Quantity [FLOP/s]
        **Dense** peak throughput per precision (``"bf16"``, ``"fp8"`` ...). Integer
        precisions count operations as FLOPs.
    sparsity_speedup : float
        Factor 2:4 structured sparsity multiplies the dense peak by (1 if unsupported).
    memory_capacity : Quantity [byte]
        Device memory (HBM, GDDR, LPDDR or SRAM).
    memory_bandwidth : Quantity [byte/s]
        Peak device-memory bandwidth.
    scaleup_bandwidth : Quantity [byte/s]
        Scale-up link bandwidth (NVLink, Infinity Fabric, ICI), **per direction**.
    tdp : Quantity [W]
        Thermal design power (board power).
    idle_power : Quantity [W] or None
        Power when idle; None means "use a fraction of TDP" in energy models.
    unit_price : Quantity [USD] or None
        Typical purchase price of one device (an estimate unless cited otherwise).
    embodied_carbon : Quantity [kgCO2e] or None
        Manufacturing footprint of one device, if a source exists.
    sm_count : int or None
        Streaming multiprocessors (or compute units) that each run one GEMM tile at a
        time: the size of a "wave" in wave quantisation (A100 108, H100 SXM 132). None:
        wave quantisation is not modelled.
    matmul_ceiling : float or None
        Largest fraction of the dense peak a well-shaped GEMM reaches on this device
        (the measured "maximum achievable matmul FLOPS"). None: the library's default
        for the device kind (:func:`mlsys.core.solvers.efficiency.matmul_ceiling`).
    """

    vendor: str = ""
    kind: Literal["gpu", "tpu", "npu", "cpu", "edge", "mcu"] = "gpu"
    year: int | None = None
    peak_flops: dict[str, FlopRate]
    sparsity_speedup: float = Field(1.0, ge=1.0)
    memory_capacity: Bytes
    memory_bandwidth: Bandwidth
    scaleup_bandwidth: Bandwidth = Field(default_factory=lambda: 0.0)
    tdp: Power
    idle_power: Power | None = None
    unit_price: Money | None = None
    embodied_carbon: Carbon | None = None
    sm_count: int | None = Field(None, ge=1)
    matmul_ceiling: float | None = Field(None, gt=0.0, le=1.0)

    @field_validator("peak_flops", mode="before")
    @classmethod
    def _normalise_precisions(cls, value: Any) -> Any:
        if isinstance(value, dict):
            if not value:
                raise ValueError("at least one precision's peak FLOP/s is required")
            return {normalize_precision(k, "peak_flops key"): v for k, v in value.items()}
        return value

    @model_validator(mode="after")
    def _positive(self) -> Accelerator:
        for field in ("memory_capacity", "memory_bandwidth", "tdp"):
            if getattr(self, field).magnitude <= 0:
                raise ValueError(f"{field} must be positive")
        for precision, q in self.peak_flops.items():
            if q.magnitude <= 0:
                raise ValueError(f"peak_flops[{precision!r}] must be positive")
        return self

    # -- SI floats, computed once --------------------------------------------------
    @cached_property
    def _flops_si(self) -> dict[str, float]:
        return {k: as_si(v, "flop/s", f"peak_flops[{k}]") for k, v in self.peak_flops.items()}

    def peak_flops_at(self, precision: str = "bf16", *, sparse: bool = False) -> pint.Quantity:
        """Peak throughput at a precision, as a Quantity in FLOP/s (for people and books).

        The dense figure is the catalog's own Quantity, so ``fmt`` names its datasheet;
        :meth:`peak_flops_s` is the same number as a bare SI float for solvers.

        Parameters
        ----------
        precision : str
            Precision name (aliases accepted: ``"bfloat16"``).
        sparse : bool
            Apply the 2:4 structured-sparsity speed-up (``sparsity_speedup``).

        Returns
        -------
        pint.Quantity
            FLOP/s, dense unless ``sparse=True``.

        Raises
        ------
        ParameterError
            If the device has no figure for that precision.

        Examples
        --------
        >>> from mlsys import Hardware
        >>> Hardware.H100.peak_flops_at("bf16")
        <Quantity(989.4, 'teraflop / second')>
        """
        self.peak_flops_s(precision)  # validates the precision and names the choices
        dense = self.peak_flops[normalize_precision(precision)]
        if not sparse or self.sparsity_speedup == 1.0:
            return dense
        origin = CatalogOrigin(self, "peak_flops", f"{normalize_precision(precision)}, 2:4 sparse")
        # Its own origin (the dense figure's, with "2:4 sparse"), kept through arithmetic.
        sparse_flops = float(dense.magnitude) * self.sparsity_speedup
        return dense.__class__(TracedFloat(sparse_flops, (origin,)), dense.units)

    def peak_flops_s(self, precision: str = "bf16", *, sparse: bool = False) -> float:
        """Peak FLOP/s at a precision, as a bare SI float (the solvers' hot path).

        For a Quantity with units and provenance use :meth:`peak_flops_at`.

        Parameters
        ----------
        precision : str
            Precision name (aliases accepted).
        sparse : bool
            Apply the 2:4 structured-sparsity speed-up (only where supported).

        Returns
        -------
        float
            FLOP/s (dense unless ``sparse=True``).

        Raises
        ------
        ParameterError
            If the device has no figure for that precision.
        """
        key = normalize_precision(precision)
        try:
            value = self._flops_si[key]
        except KeyError:
            raise ParameterError(
                "precision",
                precision,
                f"one the {self.label} has a peak for: " + ", ".join(sorted(self._flops_si)),
            ) from None
        return value * self.sparsity_speedup if sparse else value

    @property
    def precisions(self) -> tuple[str, ...]:
        """Precisions with a peak FLOP/s figure."""
        return tuple(self._flops_si)

    @cached_property
    def memory_bytes(self) -> float:
        """Device memory in bytes (float)."""
        return as_si(self.memory_capacity, "byte")

    @cached_property
    def memory_bandwidth_Bps(self) -> float:
        """Device-memory bandwidth in bytes per second (float)."""
        return as_si(self.memory_bandwidth, "byte/s")

    @cached_property
    def scaleup_bandwidth_Bps(self) -> float:
        """Scale-up link bandwidth per direction in bytes per second (float)."""
        return as_si(self.scaleup_bandwidth, "byte/s")

    @cached_property
    def tdp_W(self) -> float:
        """Thermal design power in watts (float)."""
        return as_si(self.tdp, "W")

    @cached_property
    def idle_power_W(self) -> float | None:
        """Idle power in watts, or None when the catalog has no figure."""
        return None if self.idle_power is None else as_si(self.idle_power, "W")

    @cached_property
    def unit_price_usd(self) -> float | None:
        """Unit price in US dollars, or None."""
        return None if self.unit_price is None else as_si(self.unit_price, "USD")

    @cached_property
    def embodied_carbon_kg(self) -> float | None:
        """Embodied carbon in kg CO2e, or None."""
        return None if self.embodied_carbon is None else as_si(self.embodied_carbon, "kgCO2e")

    def ridge_point(self, precision: str = "bf16") -> float:
        """Arithmetic intensity (FLOP/byte) where compute and memory time are equal.

        Parameters
        ----------
        precision : str
            Precision whose peak is used.

        Returns
        -------
        float
            FLOP per byte: peak FLOP/s divided by memory bandwidth (Williams et al. 2009,
            :func:`mlsys.core.formulas.roofline.ridge_point`). For a catalog entry the
            float carries the origins of both figures (a
            :class:`~mlsys.core.traced.TracedFloat`), so ``fmt(h100.ridge_point())``
            names the datasheet.
        """
        from mlsys.core.formulas.roofline import ridge_point

        value = float(ridge_point(self.peak_flops_s(precision), self.memory_bandwidth_Bps))
        if not self.provenance:
            return value
        key = normalize_precision(precision)
        origins = (CatalogOrigin(self, "peak_flops", key), CatalogOrigin(self, "memory_bandwidth"))
        return TracedFloat(value, origins)


# Documented, linked and pickled as mlsys.core.types.<name>, where users import them from
for _cls in (ConfigurationError, Provenance, Accelerator):
    _cls.__module__ = "mlsys.core.types"
del _cls
