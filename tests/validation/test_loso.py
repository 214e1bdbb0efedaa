"""Leave-one-source-out (``mlsys.validation.loso``) on a suite whose answer is derived by hand,
and on the real suite's fitted GEMM fraction."""

from __future__ import annotations

import dataclasses

import pytest

from mlsys.core.formulas import overheads
from mlsys.validation import Case
from mlsys.validation.loso import (
    KINDS,
    OUTSIDE,
    REFITS,
    Refit,
    case_kind,
    leave_one_source_out,
)

_SHIPPED = overheads.KERNEL_OVERHEAD_S
# sources A and B agree with the shipped value, C with 1.5 times it; C has three cases
_BEST = {"A": 1.0, "B": 1.0, "C": 1.5}
_COUNT = {"A": 2, "B": 2, "C": 3}


def _synthetic_suite() -> list[Case]:
    f = overheads.KERNEL_OVERHEAD_S / _SHIPPED  # the value perturbed() put in place
    out = []
    for src, best in _BEST.items():
        for k in range(_COUNT[src]):
            out.append(Case(group="Training: synthetic", name=f"{src}{k}", quantity="t",
                            unit="s", published=1.0, predicted=1.0 + (f - best),
                            tolerance=1.0, basis="prediction", method="performance model",
                            citation=src))  # fmt: skip
    return out


def _kernel_refit(without: float | None = 0.0) -> Refit:
    kernel = next(r for r in REFITS if r.constant.attribute == "KERNEL_OVERHEAD_S")
    return dataclasses.replace(kernel, candidates=(0.5, 1.0, 1.5), without=without)


def test_loso_on_a_suite_derived_by_hand():
    report = leave_one_source_out((_kernel_refit(),), (), suite=_synthetic_suite)
    # in-sample (f = 1): A and B exact, C's three cases -0.5: mean 1.5/7, max 0.5
    s = report.summary()["training"]
    assert s["in_sample_mean"] == pytest.approx(1.5 / 7)
    # without A, f = 1 scores (0 + 0 + 3 x 0.5)/5 = 0.3 and f = 1.5 scores 2 x 0.5/5 = 0.2,
    # so A is predicted at 1.5 (+0.5 each); B likewise; without C, f = 1 (exact for A, B)
    # and C is predicted at 1 (-0.5 each): every case is off by 0.5
    assert s["out_of_sample_mean"] == pytest.approx(0.5)
    assert s["out_of_sample_max"] == pytest.approx(0.5)
    verdict = report.constants[0]
    assert verdict["choices"] == {"A": 1.5, "B": 1.5, "C": 1.0}
    # switched off (f = 0) the errors are -1, -1, -1.5: mean (2 + 2 + 4.5)/7
    assert verdict["without"] == pytest.approx(8.5 / 7)
    assert verdict["decision"] == "passes"
    # nothing leaks: the constant is back at its shipped value
    assert overheads.KERNEL_OVERHEAD_S == _SHIPPED


def test_a_mechanism_that_does_not_lower_the_out_of_sample_error_fails():
    # a suite whose every source is best with the mechanism off (f = 0 for all)
    def suite():
        return [dataclasses.replace(c, predicted=1.0 + overheads.KERNEL_OVERHEAD_S / _SHIPPED)
                for c in _synthetic_suite()]  # fmt: skip

    outside = dataclasses.replace(_kernel_refit(), candidates=())
    report = leave_one_source_out((), (outside,), suite=suite)
    verdict = report.constants[0]
    # an outside constant is not refit: out-of-sample equals in-sample (every case +1)
    assert not verdict["refitted"]
    assert verdict["out_of_sample"] == pytest.approx(verdict["in_sample"]) == pytest.approx(1.0)
    assert verdict["without"] == pytest.approx(0.0)
    assert verdict["decision"] == "fails"


def test_every_case_has_a_kind():
    c = _synthetic_suite()[0]
    assert case_kind(c) == "training dense"
    assert case_kind(dataclasses.replace(c, name="Qwen3-30B-A3B FP8 on 8 B200")) == "training MoE"
    serving = dataclasses.replace(c, group="Serving: latency", quantity="time to first token")
    assert case_kind(serving) == "serving prefill"
    assert set(KINDS) >= {case_kind(serving), "serving decode", "serving throughput"}


def test_the_fitted_gemm_fraction_survives_leaving_any_source_out():
    """The GPU GEMM fraction was chosen with Korthikanti et al.'s Table 5 in view; refit on
    the grid 0.70 / 0.75 / 0.80 without each source in turn, every source's refit is still
    0.75, so its out-of-sample error is its in-sample error."""
    gemm = dataclasses.replace(REFITS[0], candidates=(0.70 / 0.75, 1.0, 0.80 / 0.75), without=None)
    report = leave_one_source_out((gemm,), ())
    assert set(report.constants[0]["choices"].values()) == {1.0}
    assert report.out_of_sample == report.in_sample
    assert all(not r.refitted for r in OUTSIDE)


def test_the_shipped_error_bands_are_the_suites_out_of_sample_residuals():
    """``mlsys/core/catalog/data/error_bands.toml`` is what a fresh leave-one-source-out
    run gives (regenerate with ``python -m mlsys.validation.loso --bands``)."""
    from mlsys.core.catalog.bands import error_bands

    fresh = leave_one_source_out().by_kind()
    shipped = error_bands()
    stale = "the suite moved: python -m mlsys.validation.loso --bands > " + (
        "mlsys/core/catalog/data/error_bands.toml"
    )
    assert set(shipped) == set(fresh), stale
    for kind, band in shipped.items():
        assert band.fraction == pytest.approx(fresh[kind]["p90"], abs=6e-4), (kind, stale)
        assert band.mean == pytest.approx(fresh[kind]["mean"], abs=6e-4), (kind, stale)
        assert band.cases == fresh[kind]["n"], (kind, stale)


def test_results_report_their_band_and_fmt_prints_it():
    from mlsys import Hardware, Models, ParameterError, ServingModel
    from mlsys.core.catalog.bands import error_bands
    from mlsys.formatting import fmt

    res = ServingModel().solve(Models.Llama2_7B, Hardware.H100)
    decode = error_bands()["serving decode"]
    assert res.error_band == decode.fraction
    assert f"{decode.cases} published serving decode cases" in res.error_band_source
    text = str(fmt(res.itl, band=True))
    assert text.endswith(f" (±{decode.fraction:.0%})") and text.startswith(str(fmt(res.itl)))
    with pytest.raises(ParameterError, match="band"):
        fmt(3.0, band=True)


def test_dense_training_bands_go_by_scale():
    """A dense training result takes the band of the runs of its scale (one node, up to
    256 accelerators, more: ``TRAINING_SCALES``), a MoE result the MoE cases' band; the
    held-out runs count in the bands beside the leave-one-source-out residuals."""
    from mlsys import DistributedModel, Models
    from mlsys.core.catalog import Fabrics, Nodes
    from mlsys.core.catalog.bands import error_band, error_bands, training_kind
    from mlsys.core.types import Fleet

    bands = error_bands()
    for gpus, kind in ((8, "one node"), (64, "9-256 accelerators"),
                       (1024, "over 256 accelerators")):  # fmt: skip
        fleet = Fleet(node=Nodes.DGX_H100, count=gpus // 8, fabric=Fabrics.IB_NDR)
        res = DistributedModel().solve(Models.Llama3_8B, fleet, batch_size=gpus)
        assert res.error_band == bands[f"training dense, {kind}"].fraction
        assert f"training dense, {kind} cases" in res.error_band_source
    assert training_kind(accelerators=256.0) == "training dense, 9-256 accelerators"
    assert training_kind(accelerators=257.0) == "training dense, over 256 accelerators"
    assert error_band("DistributedModel", "step_time", moe=True) == bands["training MoE"]
    # without a scale, the pool of every dense run; each scale's cases are in it
    pooled = error_band("DistributedModel", "step_time")
    assert pooled == bands["training dense"]
    scaled = sum(b.cases for k, b in bands.items() if k.startswith("training dense, "))
    assert pooled.cases == scaled


def test_every_dense_case_is_placed_by_its_scale():
    c = _synthetic_suite()[0]
    on = dataclasses.replace(c, name="GPT-3 5B FP8 on 64 H100, TP 1 (NeMo 24.07)")
    assert case_kind(on) == "training dense, 9-256 accelerators"
    big = dataclasses.replace(c, name="Llama 3 405B on 16,384 H100")
    assert case_kind(big) == "training dense, over 256 accelerators"
    held = dataclasses.replace(on, group="Held-out training runs")
    assert case_kind(held) == "training dense, 9-256 accelerators"
    assert set(KINDS) >= {case_kind(on), case_kind(big), "training dense"}
