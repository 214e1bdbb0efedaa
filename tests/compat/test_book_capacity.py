"""The book's ServingCapacityModel and TailLatencyModel, composed from mlsys's solvers."""

from __future__ import annotations

import math

import pytest

from mlsys import ContinuousBatchingModel, Hardware, Models, ServingModel
from mlsys.compat.solvers import ServingCapacityModel, TailLatencyModel
from mlsys.core.errors import ParameterError
from mlsys.core.formulas.queueing import mmc_wait_quantile
from mlsys.core.units import Q_

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


def test_tail_latency_of_one_replica_is_mm1() -> None:
    # λ = 8/s, 100 ms service (μ = 10/s): P99 wait ln(100·0.8)/(μ − λ) = ln(80)/2 s.
    res = TailLatencyModel().solve(8.0, 100.0, 1)
    assert res.si("p99_latency") == pytest.approx(math.log(80.0) / 2.0 + 0.1)
    assert res.queue_utilization == pytest.approx(0.8)
    assert res.is_stable
    # headroom: the P99 wait over five service times
    assert res.slo_headroom_ratio == pytest.approx((math.log(80.0) / 2.0) / 0.5)


def test_tail_latency_takes_quantities_in_any_unit() -> None:
    plain = TailLatencyModel().solve(8.0, 100.0, 1)
    held = TailLatencyModel().solve(Q_(480.0, "1/minute"), Q_(0.1, "s"), 1)
    assert held.si("p99_latency") == pytest.approx(plain.si("p99_latency"), rel=1e-12)


def test_deterministic_service_halves_the_wait() -> None:
    exp = TailLatencyModel().solve(8.0, 100.0, 1)
    det = TailLatencyModel().solve(8.0, 100.0, 1, service_time_cv=0.0)
    assert det.si("p99_latency") - 0.1 == pytest.approx((exp.si("p99_latency") - 0.1) / 2)


def test_unstable_queue() -> None:
    res = TailLatencyModel().solve(30.0, 100.0, 2)  # ρ = 1.5
    assert not res.is_stable and math.isinf(res.si("p99_latency"))
    assert res.slo_headroom_ratio == 1.0


@pytest.mark.parametrize(
    ("args", "name"),
    [
        ((0.0, 100.0, 1), "arrival_rate_qps"),
        ((8.0, -1.0, 1), "service_latency_ms"),
        ((8.0, 100.0, 0), "num_replicas"),
        (([1, 2], 100.0, 1), "arrival_rate_qps"),
        ((8.0, 100.0, 1, Q_(3, "GB")), "service_time_cv"),
        ((8.0, float("nan"), 1), "service_latency_ms"),
    ],
)
def test_tail_latency_refuses_bad_input(args: tuple, name: str) -> None:
    with pytest.raises(ParameterError, match=name):
        TailLatencyModel().solve(*args)


def _plan(**kw):
    args = dict(qps=20.0, target_p99_latency_ms=5000.0, seq_len=512, output_tokens=128)
    return ServingCapacityModel().solve(Models.Llama2_7B, Hardware.H100, **{**args, **kw})


def test_capacity_is_the_fewest_replicas_meeting_the_p99() -> None:
    res = _plan()
    assert res.feasible and res.bottleneck == "Feasible"
    c, mu = res.required_replicas, res.per_replica_qps_capacity
    base = res.si("base_request_latency")
    # c meets the target and c − 1 does not (unstable or too slow in the tail)
    assert base + mmc_wait_quantile(0.99, 20.0, mu, c) <= 5.0
    assert c == 1 or base + mmc_wait_quantile(0.99, 20.0, mu, c - 1) > 5.0
    assert res.si("estimated_p99_latency") == pytest.approx(base + res.si("queue_wait_p99"))
    assert res.utilization == pytest.approx(20.0 / (c * mu))


def test_capacity_parts_are_mlsys_solves() -> None:
    res = _plan()
    sat = ContinuousBatchingModel().solve(
        Models.Llama2_7B,
        Hardware.H100,
        arrival_rate=1.0,
        prompt_len=512,
        output_len=128,
        max_num_seqs=32,
        precision="fp16",
    )
    assert res.per_replica_qps_capacity == pytest.approx(sat.si("max_arrival_rate"), rel=1e-12)
    srv = ServingModel().solve(
        Models.Llama2_7B,
        Hardware.H100,
        batch_size=res.active_batch_size,
        prompt_len=512,
        output_len=128,
        precision="fp16",
    )
    assert res.si("base_request_latency") == pytest.approx(
        srv.si("ttft") + 128 * srv.si("itl"), rel=1e-12
    )


def test_capacity_takes_the_books_views_and_quantities() -> None:
    book = ServingCapacityModel().solve(
        Models.Language.Llama2_7B,
        Hardware.Cloud.H100,
        qps=Q_(1200.0, "1/minute"),
        target_p99_latency_ms=Q_(5.0, "s"),
        seq_len=512,
        output_tokens=128,
    )
    assert book.required_replicas == _plan().required_replicas


def test_a_target_below_the_idle_latency_is_base_latency() -> None:
    res = _plan(target_p99_latency_ms=10.0)
    assert not res.feasible and res.bottleneck == "Base Latency"


def test_too_few_replicas_allowed_is_capacity() -> None:
    res = _plan(qps=500.0, max_replicas=2)
    assert not res.feasible and res.bottleneck == "Capacity"
    assert math.isinf(res.si("queue_wait_p99"))


def test_a_model_that_does_not_fit_is_memory() -> None:
    res = ServingCapacityModel().solve(
        Models.Llama2_70B, Hardware.L4, qps=1.0, target_p99_latency_ms=60_000.0
    )
    assert not res.feasible and res.bottleneck == "Memory"
