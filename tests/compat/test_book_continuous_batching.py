"""The book's ContinuousBatchingModel: requests a paged KV cache holds, on mlsys's pieces."""

from __future__ import annotations

import math

import pytest

import mlsys
from mlsys import Hardware, Models
from mlsys.compat.solvers import ContinuousBatchingModel
from mlsys.core.errors import ParameterError

LLAMA = Models.Language.Llama3_8B
PARAMS = 8_030_261_248  # the catalog's Llama 3 8B: 32 layers, 8 KV heads of 128
H100_BYTES = 81_559 * 2**20  # mlsys's usable H100 memory (79.6 GiB)


def _itl_ttft(batch: int, prompt: int) -> tuple[float, float]:
    res = mlsys.ServingModel().solve(
        LLAMA.as_workload(), Hardware.H100, batch_size=batch, prompt_len=prompt,
        precision="fp16", price_infeasible=True,
    )  # fmt: skip
    return res.si("itl"), res.si("ttft")


def test_requests_that_fit_in_whole_pages():
    # 1000 tokens in pages of 16: 63 pages, 1008 slots, 8 empty (0.79%)
    per_seq = 2 * 32 * 8 * 128 * 1008 * 2  # K and V, layers, KV heads, head dim, slots, fp16
    fits = math.floor((H100_BYTES - 2 * PARAMS) / per_seq)
    assert fits > 256  # so a cap of 256 binds
    res = ContinuousBatchingModel().solve(LLAMA, Hardware.H100, seq_len=1000, max_batch_size=256)
    assert res.max_active_requests == 256
    assert res.memory_fragmentation_pct == pytest.approx(8 / 1008 * 100)
    assert res.si("paged_kv_cache_size") == pytest.approx(256 * per_seq)
    uncapped = ContinuousBatchingModel().solve(
        LLAMA, Hardware.H100, seq_len=1000, max_batch_size=10_000
    )
    assert uncapped.max_active_requests == fits


def test_throughput_and_speedup_come_from_mlsys_serving_latencies():
    res = ContinuousBatchingModel().solve(LLAMA, Hardware.H100, seq_len=4000, max_batch_size=64)
    itl, ttft = _itl_ttft(64, 4000)
    assert res.feasible
    assert res.si("itl") == pytest.approx(itl, rel=1e-12)
    assert res.si("ttft") == pytest.approx(ttft, rel=1e-12)
    assert res.throughput_tokens_per_sec == pytest.approx(64 / itl, rel=1e-12)
    static_itl, _ = _itl_ttft(38, 4000)  # a static allocator holds int(0.6 x 64) = 38
    assert res.speedup_vs_static == pytest.approx((64 / itl) / (38 / static_itl), rel=1e-12)
    assert res.speedup_vs_static > 1.0


def test_a_model_that_leaves_no_room_is_infeasible():
    # Llama 3 70B in fp16 is 141 GB of weights: nothing fits on one H100
    res = ContinuousBatchingModel().solve(Models.Language.Llama3_70B, Hardware.H100, seq_len=4000)
    assert not res.feasible and res.max_active_requests == 0
    assert res.throughput_tokens_per_sec == 0.0 and res.ttft is None
    with pytest.raises(ParameterError, match="page_size"):
        ContinuousBatchingModel().solve(LLAMA, Hardware.H100, seq_len=1000, page_size=0)
