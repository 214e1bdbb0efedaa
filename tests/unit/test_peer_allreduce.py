"""The engines' custom all-reduce (one-shot / two-shot peer reads) and ServingModel's
``tp_allreduce`` option.

The latency constant is derived here from the measured times it cites (vLLM PR 24111,
one-stage kernel on H100, bf16); the solver's all-reduce share is derived from the
formula and the step's count of all-reduces.
"""

from __future__ import annotations

import statistics

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mlsys import ContinuousBatchingModel, Hardware, Models, ServingModel
from mlsys.core.errors import ParameterError
from mlsys.core.formulas.collectives import NVLINK_WIRE_EFFICIENCY, nccl_allreduce_time
from mlsys.core.formulas.peer_allreduce import (
    PEER_ALLREDUCE_LATENCY_MEASURED_S,
    PEER_ALLREDUCE_MAX_BYTES,
    one_shot_allreduce_time,
    peer_allreduce_time,
    peer_allreduce_uses_one_shot,
    two_shot_allreduce_time,
)

H100_NVLINK_BPS = 450e9
MB = 2**20

# vLLM PR 24111, ca_1stage column, H100, bf16: (GPUs, bytes, seconds)
VLLM_ONE_STAGE_H100 = [
    (2, 0.5 * MB, 0.007e-3),
    (4, 0.5 * MB, 0.010e-3),
    (4, 1 * MB, 0.015e-3),
    (4, 2 * MB, 0.022e-3),
    (4, 4 * MB, 0.038e-3),
    (6, 0.5 * MB, 0.013e-3),
    (6, 1 * MB, 0.021e-3),
]


def _implied_latency(n: int, m: float, t: float) -> float:
    return t - (n - 1) * m / (H100_NVLINK_BPS * NVLINK_WIRE_EFFICIENCY)


def test_h100_latency_is_the_mean_implied_by_vllm_measurements_up_to_1mb():
    implied = [_implied_latency(n, m, t) for n, m, t in VLLM_ONE_STAGE_H100 if m <= MB]
    assert statistics.mean(implied) == pytest.approx(6.1e-6, abs=0.05e-6)
    assert PEER_ALLREDUCE_LATENCY_MEASURED_S["NVLINK4"] == pytest.approx(6.0e-6, abs=0.2e-6)


def test_a100_latency_is_h100_plus_the_same_tests_mean_difference():
    # vLLM's custom all-reduce timed eagerly at 4,096 fp32 elements on 2 / 4 / 8 GPUs
    a100 = [11.3e-6, 12.1e-6, 14.2e-6]  # SGLang PR 2688 (A100)
    h100 = [8.8e-6, 8.5e-6, 9.3e-6]  # SGLang PR 2904 (H100)
    extra = statistics.mean(a - h for a, h in zip(a100, h100, strict=True))
    estimate = PEER_ALLREDUCE_LATENCY_MEASURED_S["NVLINK4"] + extra
    assert PEER_ALLREDUCE_LATENCY_MEASURED_S["NVLINK3"] == pytest.approx(estimate, abs=0.05e-6)


def test_one_shot_reproduces_every_measured_size():
    # within 1 us up to 1 MB (the published times have 1 us resolution); 2 us at 4 MB
    a = PEER_ALLREDUCE_LATENCY_MEASURED_S["NVLINK4"]
    for n, m, t in VLLM_ONE_STAGE_H100:
        tol = 1.0e-6 if m <= MB else 2.1e-6
        assert one_shot_allreduce_time(m, n, H100_NVLINK_BPS, a) == pytest.approx(t, abs=tol)


def test_formulas_by_hand():
    bw = H100_NVLINK_BPS * NVLINK_WIRE_EFFICIENCY
    # one-shot: one latency, (n-1) M in; two-shot: two latencies, the ring's bytes
    assert one_shot_allreduce_time(131072, 4, 450e9, 6e-6) == pytest.approx(6e-6 + 3 * 131072 / bw)
    assert two_shot_allreduce_time(MB, 4, 450e9, 6e-6) == pytest.approx(12e-6 + 1.5 * MB / bw)
    assert one_shot_allreduce_time(MB, 1, 450e9, 6e-6) == 0.0
    assert two_shot_allreduce_time(MB, 1, 450e9, 6e-6) == 0.0


def test_array_path_matches_scalar_path():
    import numpy as np

    sizes = np.array([4096.0, 65536.0, 2.0 * MB])
    for formula in (one_shot_allreduce_time, two_shot_allreduce_time):
        arr = formula(sizes, 8, 450e9, 6e-6)
        assert list(arr) == pytest.approx([formula(float(s), 8, 450e9, 6e-6) for s in sizes])


def test_vllm_choice_of_kernel():
    # csrc/custom_all_reduce.cuh: 2 GPUs always one-shot; <= 4 below 512 KiB; <= 8 below 256 KiB
    assert peer_allreduce_uses_one_shot(4 * MB, 2)
    assert peer_allreduce_uses_one_shot(511 * 1024, 4)
    assert not peer_allreduce_uses_one_shot(512 * 1024, 4)
    assert peer_allreduce_uses_one_shot(255 * 1024, 8)
    assert not peer_allreduce_uses_one_shot(256 * 1024, 8)
    assert not peer_allreduce_uses_one_shot(300 * 1024, 6)


def test_dispatch_and_nccl_fallback():
    a = 6e-6
    assert peer_allreduce_time(16384, 8, 450e9, a) == one_shot_allreduce_time(16384, 8, 450e9, a)
    assert peer_allreduce_time(MB, 8, 450e9, a) == two_shot_allreduce_time(MB, 8, 450e9, a)
    assert peer_allreduce_time(PEER_ALLREDUCE_MAX_BYTES + 1, 4, 450e9, a) is None
    assert peer_allreduce_time(16384, 16, 450e9, a) is None
    assert peer_allreduce_time(16384, 1, 450e9, a) == 0.0


def test_bad_inputs_raise():
    with pytest.raises(ParameterError):
        one_shot_allreduce_time(-1.0, 4, 450e9, 6e-6)
    with pytest.raises(ParameterError):
        two_shot_allreduce_time(1.0, 4, 0.0, 6e-6)


def test_custom_beats_nccl_at_decode_sizes_and_loses_at_prefill_sizes():
    a = PEER_ALLREDUCE_LATENCY_MEASURED_S["NVLINK4"]
    # 16 KB (one token of an 8192-wide model): one latency against NCCL's LL ring
    small = 16384
    assert peer_allreduce_time(small, 8, 450e9, a) < nccl_allreduce_time(small, 8, 450e9)
    # 8 MiB on 8 GPUs: two-shot's bytes equal the ring's, and the ring is NCCL Simple's
    big = 8 * MB
    two = two_shot_allreduce_time(big, 8, 450e9, a)
    ring = nccl_allreduce_time(big, 8, 450e9)
    assert two < ring  # two latencies instead of fourteen ring steps


# -- ServingModel ------------------------------------------------------------------------


def _solve(**kw):
    return ServingModel().solve(
        Models.Llama3_70B, Hardware.H100, batch_size=8, prompt_len=32, output_len=128,
        tp_size=4, **kw,
    )  # fmt: skip


def test_default_is_nccl_and_unchanged():
    assert _solve().si("itl") == _solve(tp_allreduce="nccl").si("itl")


def test_custom_changes_only_the_all_reduces_of_the_decode_step():
    nccl, custom = _solve(), _solve(tp_allreduce="custom")
    m = 8 * 8192 * 2  # 8 tokens x 8192 bf16 values: 128 KiB, one-shot on 4 GPUs
    per_step = 2 * 80  # two all-reduces per layer, 80 layers
    a = PEER_ALLREDUCE_LATENCY_MEASURED_S["NVLINK4"]
    expected = per_step * one_shot_allreduce_time(m, 4, 450e9, a)
    assert custom.si("tp_communication_time_decode") == pytest.approx(expected, rel=1e-9)
    saved = nccl.si("tp_communication_time_decode") - custom.si("tp_communication_time_decode")
    assert nccl.si("itl") - custom.si("itl") == pytest.approx(saved, rel=1e-9)
    assert saved > 0


def test_long_prefill_stays_on_nccl():
    # a 2048-token prefill at TP 4 reduces 2048 x 8192 x 2 = 32 MiB: beyond 8 MiB, NCCL
    kw = dict(batch_size=1, prompt_len=2048, output_len=2, tp_size=4)
    nccl = ServingModel().solve(Models.Llama3_70B, Hardware.H100, **kw)
    custom = ServingModel().solve(Models.Llama3_70B, Hardware.H100, tp_allreduce="custom", **kw)
    assert custom.si("tp_communication_time_prefill") == nccl.si("tp_communication_time_prefill")


def test_single_gpu_is_unaffected():
    kw = dict(batch_size=4, prompt_len=128, output_len=64)
    a = ServingModel().solve(Models.Llama3_8B, Hardware.H100, **kw)
    b = ServingModel().solve(Models.Llama3_8B, Hardware.H100, tp_allreduce="custom", **kw)
    assert a.si("itl") == b.si("itl")


def test_bad_value_names_the_choices():
    with pytest.raises(ParameterError, match="tp_allreduce"):
        _solve(tp_allreduce="oneshot")
    with pytest.raises(ParameterError, match="tp_allreduce"):
        _solve(tp_allreduce=None)


def test_continuous_batching_takes_the_option():
    kw = dict(arrival_rate=2.0, prompt_len=256, output_len=128, tp_size=4)
    cb = ContinuousBatchingModel()
    nccl = cb.solve(Models.Llama3_70B, Hardware.H100, **kw)
    custom = cb.solve(Models.Llama3_70B, Hardware.H100, tp_allreduce="custom", **kw)
    assert custom.si("itl") < nccl.si("itl")


def test_only_nvlink_runs_the_custom_kernel():
    # PCIe (L4, H100 PCIe) and TPU ICI have no peer load/store over NVLink: NCCL prices them
    kw = dict(batch_size=8, prompt_len=32, output_len=16, tp_size=2)
    for hw in (Hardware.L4, Hardware.H100_PCIE):
        nccl = ServingModel().solve(Models.Llama3_8B, hw, **kw)
        custom = ServingModel().solve(Models.Llama3_8B, hw, tp_allreduce="custom", **kw)
        assert custom.si("tp_communication_time_decode") == nccl.si("tp_communication_time_decode")


def test_unmeasured_nvlink_generation_takes_the_newest_measured_latency():
    # B200's NVLink 5 has no measurement: NVLink 4's 6 µs, plus its bytes at 900 GB/s
    res = ServingModel().solve(
        Models.Llama3_70B, Hardware.B200, batch_size=8, prompt_len=32, output_len=16,
        tp_size=4, tp_allreduce="custom",
    )  # fmt: skip
    m = 8 * 8192 * 2
    expected = 160 * one_shot_allreduce_time(
        m, 4, 900e9, PEER_ALLREDUCE_LATENCY_MEASURED_S["NVLINK4"]
    )
    assert res.si("tp_communication_time_decode") == pytest.approx(expected, rel=1e-9)


# -- properties ---------------------------------------------------------------------------

_SIZES = st.floats(min_value=0.0, max_value=64 * MB, allow_nan=False)
_RANKS = st.integers(min_value=2, max_value=8)
_LATENCY = st.floats(min_value=0.0, max_value=50e-6, allow_nan=False)


@given(_SIZES, _SIZES, _RANKS, _LATENCY)
def test_more_bytes_never_take_less_time(m1, m2, n, a):
    small, large = sorted((m1, m2))
    for formula in (one_shot_allreduce_time, two_shot_allreduce_time):
        assert formula(small, n, 450e9, a) <= formula(large, n, 450e9, a)


@given(_SIZES, _RANKS, _LATENCY)
def test_two_shot_moves_no_more_bytes_than_one_shot(m, n, a):
    # two-shot's bytes, 2(n-1)/n M, never exceed one-shot's (n-1) M for n >= 2: past its
    # second latency it is never slower
    one = one_shot_allreduce_time(m, n, 450e9, a)
    two = two_shot_allreduce_time(m, n, 450e9, a)
    assert two - 2 * a <= one - a + 1e-15


@given(_SIZES, _RANKS)
def test_one_latency_at_zero_bytes(m, n):
    a = PEER_ALLREDUCE_LATENCY_MEASURED_S["NVLINK4"]
    assert one_shot_allreduce_time(0.0, n, 450e9, a) == pytest.approx(a)
    assert two_shot_allreduce_time(0.0, n, 450e9, a) == pytest.approx(2 * a)
    t = peer_allreduce_time(min(m, PEER_ALLREDUCE_MAX_BYTES), n, 450e9, a)
    assert t is not None and t >= a
