"""Held-out serving runs (``mlsys.validation.heldout_serving``): TensorRT-LLM's throughput
tables as updated for v0.6.1, solved with the engine named and nothing else set."""

from __future__ import annotations

import pytest

from mlsys import Models
from mlsys.validation import records
from mlsys.validation.heldout_serving import heldout_serving_cases, heldout_serving_solve

ROWS = records("heldout_serving", "trtllm_061")


def _rate(row, **kw):
    res = heldout_serving_solve(row, "trtllm_061", **kw)
    assert res.feasible, res.infeasibility_reason
    assert res.engine == "trtllm-0.5"
    return res.si("tokens_per_second_per_accelerator")


def test_every_published_batch_fits_and_is_priced():
    cases = heldout_serving_cases()
    assert len(cases) == len(ROWS) == 15
    assert all(c.predicted > 0 for c in cases)


def test_the_a100_batch_of_60_long_sequences_fits():
    # Llama 2 7B, FP16, batch 60 of 128 + 2,048 tokens on one A100 80GB (81,920 MiB): the
    # KV cache is 60 x 2,176 tokens x 32 layers x 2 x 4,096 x 2 B = 68.45 GB beside 13.48
    # GB of weights; TensorRT-LLM allocates both once, so only the runtime's 1 GB and 5 %
    # of the small prefill workspace come on top: 82.9 GB of 85.9 GB
    row = next(r for r in ROWS if r["batch_size"] == 60)
    res = heldout_serving_solve(row, "trtllm_061")
    kv = 60 * 2176 * 32 * 2 * 4096 * 2
    assert res.si("kv_cache_bytes_per_accelerator") == pytest.approx(kv)
    work = res.si("activation_bytes_per_accelerator")
    assert res.si("framework_overhead_per_accelerator") == pytest.approx(1e9 + 0.05 * work)
    assert res.feasible and res.si("memory_per_accelerator") < 81920 * 2**20


@pytest.mark.parametrize("row", [r for r in ROWS if r["model"] == "Llama2_7B"],
                         ids=lambda r: f"{r['hardware']}-b{r['batch_size']}")  # fmt: skip
def test_7b_rows_within_ten_percent_whatever_the_decode_kernel(row):
    # Llama 2 7B has as many KV heads as query heads: one block per query head and one
    # per KV-head group read the cache the same number of times
    assert Models.Llama2_7B.kv_heads == Models.Llama2_7B.heads
    assert _rate(row) == pytest.approx(_rate(row, decode_attention_heads_per_block=None))
    assert _rate(row) == pytest.approx(row["published"], rel=0.10)


@pytest.mark.parametrize("row", [r for r in ROWS if r["model"] == "Llama2_70B"],
                         ids=lambda r: f"{r['hardware']}-b{r['batch_size']}")  # fmt: skip
def test_70b_rows_lie_between_the_two_decode_kernels(row):
    # 8 KV heads for 64 query heads: the masked kernel (one block per query head) reads
    # each KV head 8 times a step and prices the rows pessimistic, a group-sharing kernel
    # reads it once; the measured rate is between them, within 3 % (the A100 batch of 120
    # 2,048-token prompts, whose prefill takes most of the time, is 2.4 % above the faster)
    slow, fast = _rate(row), _rate(row, decode_attention_heads_per_block=None)
    assert slow < fast
    assert slow * 0.97 <= row["published"] <= fast * 1.03
