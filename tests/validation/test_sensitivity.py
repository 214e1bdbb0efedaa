"""mlsys.validation.sensitivity: the calibration table's machinery, checked by derivation.

A synthetic two-case suite whose training prediction is proportional to the default GPU
compute fraction (and 10 % high at the default) moves by a known amount:

* ×1.2: the ratio becomes 1.10 × 1.2 = 1.32, the error +32 %: the training mean rises by
  22 percentage points;
* ×0.8: 1.10 × 0.8 = 0.88, the error −12 %: the mean |error| rises by 2 points;

while its serving case (not reading the constant) stays at −10 % either way.
"""

from __future__ import annotations

import pytest

from mlsys.core.solvers.efficiency import COMPUTE_EFFICIENCY, default_efficiency
from mlsys.validation import Case, run_all
from mlsys.validation.sensitivity import (
    CONSTANTS,
    Constant,
    markdown_table,
    perturbed,
    sensitivity,
    suite_errors,
)

GEMM = next(c for c in CONSTANTS if c.attribute == "COMPUTE_EFFICIENCY")


def _case(group: str, predicted: float) -> Case:
    return Case(group=group, name="synthetic", quantity="q", unit="s", published=100.0,
                predicted=predicted, tolerance=0.5, basis="prediction",
                method="performance model", citation="derivation in this test")  # fmt: skip


def _synthetic_suite() -> list[Case]:
    ratio = default_efficiency("gpu", "bf16") / 0.75  # 1 at the default
    return [_case("Training: synthetic", 110.0 * ratio), _case("Serving: synthetic", 90.0)]


def test_synthetic_suite_moves_as_derived():
    (row,) = sensitivity([GEMM], suite=_synthetic_suite)
    assert row["base"]["training_mean"] == pytest.approx(0.10)
    assert row["moved"][1.2]["training_mean"] == pytest.approx(0.32)
    assert row["moved"][0.8]["training_mean"] == pytest.approx(0.12)
    for factor in (0.8, 1.2):
        assert row["moved"][factor]["serving_mean"] == pytest.approx(0.10)
    table = markdown_table([row])
    assert "+22.0" in table and "+2.0" in table


def test_perturbation_is_undone_and_caches_do_not_leak():
    before = [c.predicted for c in run_all()]
    with perturbed(GEMM, 1.2):
        assert COMPUTE_EFFICIENCY["gpu"] == 0.75  # the dict object itself is untouched
        assert default_efficiency("gpu", "bf16") == pytest.approx(0.9)
        during = [c.predicted for c in run_all()]
    assert default_efficiency("gpu", "bf16") == 0.75
    after = [c.predicted for c in run_all()]
    assert after == before
    assert during != before


def test_a_default_argument_that_captured_the_constant_moves_too():
    # fixed_kernel_time(kernels, overhead_s=KERNEL_OVERHEAD_S): 10 kernels × 4 µs = 40 µs,
    # × 1.2 = 48 µs inside the block, back to 40 µs after.
    from mlsys.core.formulas.overheads import fixed_kernel_time

    kernel = next(c for c in CONSTANTS if c.attribute == "KERNEL_OVERHEAD_S")
    assert fixed_kernel_time(10) == pytest.approx(40e-6)
    with perturbed(kernel, 1.2):
        assert fixed_kernel_time(10) == pytest.approx(48e-6)
    assert fixed_kernel_time(10) == pytest.approx(40e-6)


def test_every_constant_resolves_and_is_cited():
    for c in CONSTANTS:
        value = c.value()
        assert value is not None and c.source, c.name
        assert isinstance(c, Constant)


def test_suite_errors_split_training_and_serving_two_sided_cases():
    cases = [_case("Training: a", 120.0), _case("Serving: b", 95.0)]
    bound = Case(**{**cases[1].__dict__, "bound": "at_most", "predicted": 10.0})
    got = suite_errors([*cases, bound])
    assert got["training_mean"] == pytest.approx(0.20)
    assert got["serving_mean"] == pytest.approx(0.05)  # the one-sided case is left out
    assert got["serving_n"] == 1


def test_reference_ceiling_row_moves_the_device_scaled_default():
    # default = 0.75 × ceiling / REFERENCE_MATMUL_CEILING: raising the reference by 20 %
    # lowers every device with a measured ceiling by 1/1.2 (H100: 0.801 / 0.859 / 1.2)
    from mlsys.core.catalog import Hardware

    ref = next(c for c in CONSTANTS if c.attribute == "REFERENCE_MATMUL_CEILING")
    with perturbed(ref, 1.2):
        assert default_efficiency(Hardware.H100, "bf16") == pytest.approx(
            0.75 * 0.801 / (0.859 * 1.2)
        )
    assert default_efficiency(Hardware.H100, "bf16") == pytest.approx(0.75 * 0.801 / 0.859)


def test_the_vllm_host_row_moves_the_vllm_rows_and_prints_in_ms():
    # the nine vLLM rows add 128 iterations of the figure: at x1.2 each e2e latency grows
    # by 128 x 0.2 x 1.14 ms = 29.2 ms; nothing else reads it
    from mlsys.core.formulas.serving import ENGINE_HOST_TIME_PER_STEP_S

    host = next(c for c in CONSTANTS if c.attribute == "ENGINE_HOST_TIME_PER_STEP_S")
    assert host.key == "vllm_v0" and host.describe() == "1.14 ms"
    before = {c.name: c.predicted for c in run_all()}
    with perturbed(host, 1.2):
        during = {c.name: c.predicted for c in run_all()}
    assert ENGINE_HOST_TIME_PER_STEP_S["vllm_v0"] == 1.14e-3
    moved = {name for name in before if during[name] != before[name]}
    assert len(moved) == 9 and all("vllm-" in name for name in moved)
    for name in moved:
        assert during[name] - before[name] == pytest.approx(128 * 0.2 * 1.14e-3, rel=1e-9)
