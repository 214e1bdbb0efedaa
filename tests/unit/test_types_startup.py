"""mlsys.core.types creates what a fresh interpreter's first number needs, the rest on demand.

Start-up (first formatted catalog number <= 0.3 s): creating a pydantic model class
costs about a millisecond, and importing ``pydantic.functional_serializers`` about two.
``mlsys.core.types`` therefore defines ``Provenance`` and ``Accelerator`` itself and
imports the other types from three small modules when first asked for, and a
``QuantityOf`` field hands pydantic its validator, serialiser and JSON schema when the
model's schema is built. These tests pin that nothing a user sees changes.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Annotated, Any

import pint
import pytest
from pydantic import BaseModel, PlainSerializer, PlainValidator, WithJsonSchema

import mlsys.core.types as types
from mlsys.core.types import ConfigurationError, QuantityOf
from mlsys.core.units import Q_


def _pydantic_quantity(unit: str, description: str) -> Any:
    """What QuantityOf annotated a field with before: pydantic's own helpers."""
    return Annotated[
        pint.Quantity,
        PlainValidator(types._quantity_validator(unit)),
        PlainSerializer(lambda q: f"{q:~P}", return_type=str),
        WithJsonSchema({"type": "string", "description": description}),
    ]


def _errors(exc: Any) -> list[dict[str, Any]]:
    """pydantic's error list, each error object in its context as its text."""
    errors = exc.errors(include_url=False)
    for error in errors:
        if "ctx" in error:
            error["ctx"] = {k: str(v) for k, v in error["ctx"].items()}
    return errors


class _Mine(BaseModel):
    model_config = {"arbitrary_types_allowed": True}
    bandwidth: QuantityOf("byte/s", "bytes per second")  # type: ignore[valid-type]
    price: QuantityOf("USD") | None = None  # type: ignore[valid-type]


class _Pydantics(BaseModel):
    model_config = {"arbitrary_types_allowed": True}
    bandwidth: _pydantic_quantity("byte/s", "bytes per second")  # type: ignore[valid-type]
    price: _pydantic_quantity("USD", "quantity in USD") | None = None  # type: ignore[valid-type]


def test_a_quantity_field_is_pydantics_validator_serialiser_and_schema():
    mine, pydantics = _Mine.model_json_schema(), _Pydantics.model_json_schema()
    mine["title"] = pydantics["title"]
    assert mine == pydantics
    assert mine["properties"]["bandwidth"]["description"] == "bytes per second"
    for data in ({"bandwidth": "3.35 TB/s"}, {"bandwidth": 3.35e12, "price": "30000 USD"}):
        a, b = _Mine(**data), _Pydantics(**data)
        assert a.bandwidth == b.bandwidth and a.bandwidth.m_as("TB/s") == pytest.approx(3.35)
        assert a.model_dump() == b.model_dump()
        assert json.loads(a.model_dump_json()) == json.loads(b.model_dump_json())
    assert _Mine(bandwidth=Q_(1, "GB/s")).model_dump()["bandwidth"] == "1 GB/s"
    for bad in ({"bandwidth": "3.35 TB"}, {"bandwidth": None}, {"bandwidth": 1, "price": "1 W"}):
        with pytest.raises(Exception) as mine_error:
            _Mine(**bad)
        with pytest.raises(Exception) as pydantic_error:
            _Pydantics(**bad)
        assert _errors(mine_error.value) == _errors(pydantic_error.value)


def test_a_catalog_type_names_a_wrong_unit():
    with pytest.raises(ConfigurationError, match=r"memory_bandwidth='3\.35 TB'.*byte/s"):
        types.Accelerator(
            name="X",
            peak_flops={"bf16": 1e15},
            memory_capacity="80 GB",
            memory_bandwidth="3.35 TB",
            tdp=700,
        )


@pytest.mark.parametrize(
    ("name", "module"),
    [
        ("Fabric", "mlsys.core._types_systems"),
        ("Node", "mlsys.core._types_systems"),
        ("Fleet", "mlsys.core._types_systems"),
        ("Workload", "mlsys.core._types_workloads"),
        ("TransformerWorkload", "mlsys.core._types_workloads"),
        ("GridProfile", "mlsys.core._types_facilities"),
        ("Datacenter", "mlsys.core._types_facilities"),
    ],
)
def test_every_type_is_found_in_mlsys_core_types(name, module):
    cls = getattr(types, name)
    assert sys.modules[module].__dict__[name] is cls  # defined there, created on demand
    # and known as mlsys.core.types.<name>, where it is imported from (repr, pickle)
    assert cls.__module__ == "mlsys.core.types" and repr(cls).endswith(f"types.{name}'>")
    assert name in types.__all__ and name in dir(types)
    assert issubclass(cls, types._Model)
    import mlsys

    assert getattr(mlsys, name) is cls


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="NoSuchType"):
        types.NoSuchType


def test_a_fresh_first_number_creates_only_the_types_it_needs():
    code = textwrap.dedent(
        """
        import sys
        from mlsys import Hardware
        from mlsys.formatting import fmt
        fmt(Hardware.H100.memory_bandwidth)._repr_markdown_()
        later = ("mlsys.core._types_systems", "mlsys.core._types_workloads",
                 "mlsys.core._types_facilities", "pydantic.functional_serializers")
        print(*(name in sys.modules for name in later))
        from mlsys import Nodes
        Nodes.DGX_H100
        print("mlsys.core._types_systems" in sys.modules)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    # validating the H100 needs pydantic's serialisers and no other type module; a node
    # creates the systems' types
    assert out == ["False", "False", "False", "True", "True"]
