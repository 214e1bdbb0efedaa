"""The helpers that build accuracy-suite cases from their data-file sections."""

from __future__ import annotations

import pytest

from mlsys.validation._case import load_data, prediction_case


def test_prediction_case_takes_what_the_section_states() -> None:
    # PaLM's section in tpu.toml: the case carries its tolerance, citation, url and stated
    # assumptions, and is an out-of-sample performance-model prediction.
    p = load_data("tpu")["palm"]
    case = prediction_case(
        p, group="Training: TPU runs", name="PaLM", quantity="training throughput",
        unit="token/s", published=p["tokens_per_s"], predicted=1.1 * p["tokens_per_s"],
    )  # fmt: skip
    assert case.tolerance == p["tolerance"]
    assert case.citation == p["citation"] and case.url == p["url"]
    assert case.basis == "prediction" and case.method == "performance model"
    assert p["assumed"].rstrip(".") in case.assumptions
    assert case.rel_error == pytest.approx(0.10)
    assert case.passed is (0.10 <= p["tolerance"])


def test_prediction_case_needs_a_tolerance_and_a_citation() -> None:
    with pytest.raises(KeyError):
        prediction_case(
            {"citation": "x"}, group="g", name="n", quantity="q", unit="s",
            published=1.0, predicted=1.0,
        )  # fmt: skip
