"""Every book-shaped solver refuses a bad number with a ParameterError naming it.

For each solver of :mod:`mlsys.compat.solvers` that takes plain numbers, each numeric
parameter is given, in turn, text, a bool, None, a list, NaN, infinity and a Quantity of
the wrong dimension: the call must raise :class:`~mlsys.core.errors.ParameterError`
naming that parameter (never a ``TypeError`` or a pint error from deep inside, never a
NaN in the result).
"""

from __future__ import annotations

import inspect
import warnings

import pytest

import mlsys.compat.solvers as S
from mlsys import Hardware, Models, Systems
from mlsys.core.errors import ParameterError
from mlsys.core.units import Q_

pytestmark = pytest.mark.filterwarnings("ignore")

MODEL, DEVICE, FLEET = Models.Language.Llama3_8B, Hardware.Cloud.H100, Systems.Clusters.Research_256

VALID = {
    "ScalingModel": dict(compute_budget=5.76e23),
    "OrchestrationModel": dict(
        fleet=FLEET, arrival_rate_jobs_per_day=2.0, avg_job_duration_days=0.4
    ),
    "TransformationModel": dict(
        batch_size=256, sample_size_bytes=500e3, cpu_throughput=2e9, accelerator_step_time=0.05
    ),
    "InferenceScalingModel": dict(model=MODEL, hardware=DEVICE),
    "BatchingOptimizer": dict(
        model=MODEL,
        hardware=DEVICE,
        seq_len=512,
        sla_latency_ms=5000.0,
        arrival_rate_qps=5.0,
        max_search_batch=8,
    ),
    "SynthesisSolver": dict(model=MODEL, target_latency=Q_(10, "ms")),
    "CheckpointModel": dict(model=MODEL, hardware=DEVICE),
    "ContinuousBatchingModel": dict(model=MODEL, hardware=DEVICE, seq_len=2048, max_batch_size=16),
    "SensitivitySolver": dict(model=MODEL, hardware=DEVICE),
    "NetworkRooflineModel": dict(model=MODEL, fleet=FLEET),
    "TopologyModel": dict(fabric=Systems.Fabrics.InfiniBand_NDR),
    "MoERoutingModel": dict(model=Models.Language.DeepSeek_V3, batch_size=8, seq_len=2048),
    "ServingCapacityModel": dict(
        model=MODEL,
        hardware=DEVICE,
        qps=20.0,
        target_p99_latency_ms=5000.0,
        seq_len=512,
        output_tokens=128,
    ),
    "TailLatencyModel": dict(arrival_rate_qps=8.0, service_latency_ms=100.0),
    "CompressionModel": dict(model=MODEL, hardware=DEVICE, sparsity=0.5),
    "EfficiencyModel": dict(model=MODEL, hardware=DEVICE),
    "WeightStreamingModel": dict(model=MODEL, hardware=Hardware.Cloud.Cerebras_CS3, seq_len=2048),
    "ResponsibleEngineeringModel": dict(base_training_time=Q_(10, "day")),
    "DataModel": dict(workload_data_rate=Q_(2, "GB/s"), hardware=DEVICE),
    "PlacementOptimizer": dict(fleet=FLEET, duration_days=30.0),
}
NOT_NUMBERS = {
    "model",
    "hardware",
    "fleet",
    "fabric",
    "precision",
    "topology",
    "optimizer",
    "method",
    "sparsity_type",
    "workload_type",
    "use_flash_attention",
    "phase",
    "regions",
}
BAD = [
    "7",
    True,
    [1, 2],
    float("nan"),
    float("inf"),
    Q_(3, "kelvin"),
]  # no solver takes a temperature
# None is a documented default of these (mlsys's calibrated value is then used)
NONE_ALLOWED = {"efficiency", "target_model_size", "storage_bandwidth", "mfu", "electricity_price"}


def _cases():
    for cls, valid in VALID.items():
        solve = getattr(S, cls)().solve
        for p in inspect.signature(solve).parameters.values():
            if p.name in NOT_NUMBERS or p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
                continue
            values = BAD if p.name in NONE_ALLOWED else [*BAD, None]
            for bad in values:
                yield pytest.param(cls, p.name, bad, id=f"{cls}-{p.name}-{bad!r}")


@pytest.mark.parametrize(("cls", "name", "bad"), list(_cases()))
def test_a_bad_number_is_a_parameter_error(cls: str, name: str, bad: object) -> None:
    kwargs = {**VALID[cls], name: bad}
    with warnings.catch_warnings(), pytest.raises(ParameterError, match=name.split("_")[0]):
        warnings.simplefilter("ignore")
        getattr(S, cls)().solve(**kwargs)


@pytest.mark.parametrize("cls", list(VALID))
def test_the_valid_call_solves(cls: str) -> None:
    assert getattr(S, cls)().solve(**VALID[cls]) is not None
