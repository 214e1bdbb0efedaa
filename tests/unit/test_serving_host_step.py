"""The engine's host work per iteration (``host_time_per_step``, ``host_overlap``).

Every assertion is derived here from the formula ``engine_step_time``: a synchronous
loop adds the host work to each iteration (``t_dev + t_host``), an engine that schedules
one step ahead hides it up to the device step (``max(t_dev, t_host)``).
"""

from __future__ import annotations

import pytest

from mlsys import ContinuousBatchingModel, Hardware, Models, ServingModel
from mlsys.core.errors import ParameterError
from mlsys.core.formulas import serving as serving_formulas
from mlsys.core.formulas.serving import engine_step_time
from mlsys.core.solvers import serving as serving_solver

# vLLM's benchmark_latency shape (batch 8, 32 + 128 tokens, one batched prefill)
_VLLM_SHAPE = dict(batch_size=8, prompt_len=32, output_len=128, batched_prefill=True)


def _llama8b(**kw):
    return ServingModel().solve(Models.Llama3_8B, Hardware.H200, **_VLLM_SHAPE, **kw)


def test_formula_serial_and_overlapped():
    # 5 ms of kernels, 1.5 ms of host work: 6.5 ms in a synchronous loop, 5 ms when the
    # host runs one step ahead, and 7 ms of host work then sets the pace alone
    assert engine_step_time(5e-3, 1.5e-3) == pytest.approx(6.5e-3)
    assert engine_step_time(5e-3, 1.5e-3, overlapped=True) == pytest.approx(5e-3)
    assert engine_step_time(5e-3, 7e-3, overlapped=True) == pytest.approx(7e-3)


def test_default_charges_nothing():
    assert _llama8b().si("itl") == _llama8b(host_time_per_step=0.0).si("itl")


def test_synchronous_loop_adds_the_host_work_to_every_iteration():
    h = 1.5e-3
    base, slow = _llama8b(), _llama8b(host_time_per_step="1.5 ms")
    # each decode step and the one batched prefill pass are one iteration each
    assert slow.si("itl") - base.si("itl") == pytest.approx(h, rel=1e-9)
    assert slow.si("ttft") - base.si("ttft") == pytest.approx(h, rel=1e-9)
    # a static batch of 128 tokens is one prefill and 127 decode steps: 128 iterations
    assert slow.si("e2e_latency") - base.si("e2e_latency") == pytest.approx(128 * h, rel=1e-9)
    # throughput: 8 × 128 tokens over that longer cycle
    assert slow.si("tokens_per_second") == pytest.approx(
        8 * 128 / (base.si("prefill_time") + h + 127 * (base.si("itl") + h)), rel=1e-9
    )


def test_overlapped_engine_hides_host_work_shorter_than_the_step():
    base = _llama8b()
    hidden = _llama8b(host_time_per_step=1.5e-3, host_overlap=True)
    assert hidden.si("itl") == pytest.approx(base.si("itl"), rel=1e-12)
    # host work longer than the device step paces the loop on its own
    pacing = _llama8b(host_time_per_step=0.02, host_overlap=True)
    assert pacing.si("itl") == pytest.approx(0.02, rel=1e-12)


def test_solver_calls_the_formula(monkeypatch):
    calls = []

    def counted(*args, **kwargs):
        calls.append(args)
        return engine_step_time(*args, **kwargs)

    monkeypatch.setattr(serving_solver, "engine_step_time", counted)
    # a plan not solved before (a fresh host figure), so nothing comes from a cache
    res = _llama8b(host_time_per_step=1.234e-3)
    assert calls, "ServingModel did not call engine_step_time"
    assert res.si("itl") == pytest.approx(_llama8b().si("itl") + 1.234e-3, rel=1e-9)
    assert serving_formulas.engine_step_time is engine_step_time


def test_continuous_batching_capacity_follows_the_longer_iterations():
    # deterministic lengths: capacity λ_max = n / ((O − 1)·t_step(n) + n·S) at the KV
    # cap n, so 1/λ_max grows by (O − 1)·h/n + h when every iteration gains h
    kw = dict(arrival_rate=2.0, prompt_len=512, output_len=128)
    h = 1e-3
    base = ContinuousBatchingModel().solve(Models.Llama2_7B, Hardware.H100, **kw)
    slow = ContinuousBatchingModel().solve(
        Models.Llama2_7B, Hardware.H100, **kw, host_time_per_step=h
    )
    n = base.max_concurrency
    assert slow.max_concurrency == pytest.approx(n)  # memory is unchanged
    assert slow.si("prefill_time") - base.si("prefill_time") == pytest.approx(h, rel=1e-9)
    grow = 1.0 / slow.si("max_arrival_rate") - 1.0 / base.si("max_arrival_rate")
    assert grow == pytest.approx(127 * h / n + h, rel=1e-9)


@pytest.mark.parametrize("bad", [-1e-3, float("nan"), "-2 ms", "3 GB"])
def test_bad_host_time_is_rejected(bad):
    with pytest.raises(ParameterError, match="host_time_per_step"):
        _llama8b(host_time_per_step=bad)


def test_overlap_flag_must_be_boolean():
    with pytest.raises(ParameterError, match="host_overlap"):
        _llama8b(host_time_per_step=1e-3, host_overlap=2)


def test_validation_rows_may_carry_the_engines_host_work():
    # the validation loader passes a row's host_time_per_step (a measured engine figure)
    from mlsys.validation.serving import serve_row

    row = dict(model="Llama3_8B", hardware="H200", precision="bf16", tp_size=1, **_VLLM_SHAPE)
    base = serve_row(row).si("itl")
    assert serve_row(dict(row, host_time_per_step=2e-3)).si("itl") == pytest.approx(
        base + 2e-3, rel=1e-9
    )
    assert serve_row(dict(row, host_time_per_step=2e-3, host_overlap=True)).si("itl") == (
        pytest.approx(base, rel=1e-12)
    )
