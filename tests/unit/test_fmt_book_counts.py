"""A Quantity of the book's counts prints as mlsys's FLOPs, parameters and dollars."""

from __future__ import annotations

import pytest

from mlsys.core.units import Q_, from_book_count_units
from mlsys.formatting import fmt


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (Q_(4.1e9, "flop_count"), "4.1 GFLOP"),  # the book's ResNet-50 multiply-adds
        (Q_(312e12, "flop_count / second"), "312 TFLOP/s"),  # A100 dense FP16
        (Q_(7e9, "parameter_count"), "7 billion parameters"),
        (Q_(5.0, "dollar_count"), "$5"),
    ],
)
def test_book_counts_print_as_mlsys_units(value, text) -> None:
    assert str(fmt(value)) == text
    # the same figure in mlsys's own units prints the same
    ours = Q_(value.magnitude, from_book_count_units(value._units))
    assert str(fmt(ours)) == text


def test_other_units_are_untouched() -> None:
    units = Q_(3.35, "TB/s")._units
    assert from_book_count_units(units) == units
    assert str(fmt(Q_(3.35, "TB/s"))) == "3.35 TB/s"


def test_an_asked_unit_still_converts_as_counts() -> None:
    # the book writes fmt(A100_FLOPS_FP16_TENSOR, "TFLOP/s"): counts convert to FLOPs
    assert str(fmt(Q_(312e12, "flop_count / second"), "TFLOP/s")) == "312 TFLOP/s"
