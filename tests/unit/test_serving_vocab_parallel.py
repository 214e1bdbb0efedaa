"""ServingModel's ``vocab_parallel``: the embedding and output head split over the
tensor-parallel GPUs by vocabulary (default) or whole on every GPU (gpt-fast's tp.py).

Assertions derive from the head's shape: Llama-2-7B's head is 32,000 x 4,096 bf16
values (262 MB); a batch-1 decode step streams it as a matrix-vector product.
"""

from __future__ import annotations

import pytest

from mlsys import ContinuousBatchingModel, Hardware, Models, ServingModel
from mlsys.core.errors import ParameterError
from mlsys.core.solvers.efficiency import default_efficiency

HEAD_BYTES = 32_000 * 4_096 * 2  # Llama-2-7B output head, bf16
_KW = dict(batch_size=1, prompt_len=5, output_len=200, tp_size=8)


def _solve(**kw):
    return ServingModel().solve(Models.Llama2_7B, Hardware.A100_80GB, **_KW, **kw)


def test_default_splits_the_vocabulary():
    assert _solve().si("itl") == _solve(vocab_parallel=True).si("itl")


def test_whole_head_streams_seven_eighths_more_of_it_every_step():
    split, whole = _solve(), _solve(vocab_parallel=False)
    hbm = Hardware.A100_80GB.memory_bandwidth_Bps * default_efficiency(
        Hardware.A100_80GB, kind="memory"
    )
    # the GEMV reads V x h instead of V x h / 8: 7/8 of the head more, at the streaming rate
    extra = HEAD_BYTES * 7 / 8 / hbm
    assert whole.si("itl") - split.si("itl") == pytest.approx(extra, rel=0.01)
    # every GPU reads the whole head: seven more copies in the step's bytes
    assert whole.si("decode_bytes_per_step") - split.si("decode_bytes_per_step") == pytest.approx(
        7 * HEAD_BYTES, rel=1e-9
    )


def test_whole_embedding_and_head_are_held_on_every_gpu():
    split, whole = _solve(), _solve(vocab_parallel=False)
    # embedding and head, V x h each, whole instead of an eighth
    extra = 2 * HEAD_BYTES * 7 / 8
    assert whole.si("weight_bytes_per_accelerator") - split.si(
        "weight_bytes_per_accelerator"
    ) == pytest.approx(extra, rel=1e-9)


def test_one_gpu_is_unaffected():
    kw = dict(_KW, tp_size=1)
    a = ServingModel().solve(Models.Llama2_7B, Hardware.A100_80GB, **kw)
    b = ServingModel().solve(Models.Llama2_7B, Hardware.A100_80GB, vocab_parallel=False, **kw)
    assert a.si("itl") == b.si("itl")
    assert a.si("weight_bytes_per_accelerator") == b.si("weight_bytes_per_accelerator")


def test_bad_value():
    with pytest.raises(ParameterError, match="vocab_parallel"):
        _solve(vocab_parallel="sometimes")


def test_continuous_batching_takes_it():
    kw = dict(arrival_rate=1.0, prompt_len=128, output_len=64, tp_size=8)
    cb = ContinuousBatchingModel()
    a = cb.solve(Models.Llama2_7B, Hardware.A100_80GB, **kw)
    b = cb.solve(Models.Llama2_7B, Hardware.A100_80GB, vocab_parallel=False, **kw)
    assert b.si("itl") > a.si("itl")
