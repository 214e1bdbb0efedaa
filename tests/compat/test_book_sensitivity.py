"""The book's SensitivitySolver: elasticities of mlsys's roofline latency."""

from __future__ import annotations

import pytest

import mlsys
from mlsys import Hardware, Models
from mlsys.compat.solvers import SensitivitySolver
from mlsys.core.errors import ParameterError

H100 = Hardware.H100
WORKLOAD = Models.Language.Llama3_8B.as_workload()


def _solve(accelerator):
    return mlsys.SingleNodeModel().solve(WORKLOAD, accelerator, precision="fp16")


def _scaled(field: str, factor: float):
    fields = {name: getattr(H100, name) for name in type(H100).model_fields}
    if field == "peak_flops":
        fields[field] = {k: v * factor for k, v in H100.peak_flops.items()}
    else:
        fields[field] = fields[field] * factor
    return type(H100)(**fields)


def test_each_sensitivity_is_the_relative_change_of_the_roofline_latency():
    res = SensitivitySolver().solve(Models.Language.Llama3_8B, H100)
    base = _solve(H100)
    assert res.si("baseline_latency") == pytest.approx(base.si("latency"), rel=1e-12)
    faster = _solve(_scaled("peak_flops", 1.1))
    # 10% more peak: the compute term shrinks by 1/1.1, the memory term stays
    assert faster.si("compute_time") == pytest.approx(base.si("compute_time") / 1.1, rel=1e-9)
    assert faster.si("memory_time") == pytest.approx(base.si("memory_time"), rel=1e-12)
    expected = faster.si("latency") / base.si("latency") - 1.0
    assert res.sensitivities["peak_flops"] == pytest.approx(expected, rel=1e-9)
    wider = _solve(_scaled("memory_bandwidth", 1.1))
    assert wider.si("memory_time") == pytest.approx(base.si("memory_time") / 1.1, rel=1e-9)
    expected = wider.si("latency") / base.si("latency") - 1.0
    assert res.sensitivities["memory_bandwidth"] == pytest.approx(expected, rel=1e-9)
    # a model that fits: more capacity does not change a roofline time
    assert res.sensitivities["memory_capacity"] == 0.0
    # a 2,048-token prefill of an 8B model is compute-bound: peak FLOPs bind
    assert res.binding_constraint == "peak_flops"
    assert res.perturbation_pct == 10.0


def test_bad_perturbation_is_refused():
    with pytest.raises(ParameterError, match="perturbation_pct"):
        SensitivitySolver().solve(Models.Language.Llama3_8B, H100, perturbation_pct=0)
