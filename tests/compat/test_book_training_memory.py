"""The book's TrainingMemoryModel, served by mlsys's MemoryModel: numbers derived here."""

from __future__ import annotations

import pytest

from mlsys import Hardware, Models
from mlsys.compat.results import BookTrainingMemoryResult
from mlsys.compat.solvers import TrainingMemoryModel
from mlsys.core.errors import MlsysError

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

LLAMA3_8B_PARAMS = 8_030_261_248  # Meta's model card; embeddings and LM head untied
H100_BYTES = 81_559 * 2**20  # H100 SXM: 81,559 MiB of HBM3 (nvidia-smi)


def _solve(**kw):
    args = dict(batch_size=8, seq_len=2048, tp_size=8, activation_checkpointing="full")
    return TrainingMemoryModel().solve(
        Models.Language.Llama3_8B, Hardware.Cloud.H100, **{**args, **kw}
    )


def test_model_states_of_mixed_precision_adam_split_over_tensor_parallel():
    res = _solve()
    assert isinstance(res, BookTrainingMemoryResult)
    per_device = LLAMA3_8B_PARAMS / 8
    # ZeRO Sec. 3.1: 2 bytes of fp16 weights, 2 of gradients, 12 of Adam state per param
    assert res.weights.m_as("B") == pytest.approx(2 * per_device, rel=1e-12)
    assert res.gradients.m_as("B") == pytest.approx(2 * per_device, rel=1e-12)
    assert res.optimizer_state.m_as("B") == pytest.approx(12 * per_device, rel=1e-12)


def test_book_totals_utilization_and_names():
    res = _solve()
    parts = (res.weights, res.gradients, res.optimizer_state, res.activations)
    total = sum(p.m_as("B") for p in parts) + res.communication_buffers.m_as("B")
    assert res.total_memory.m_as("B") == pytest.approx(total, rel=1e-12)
    assert res.available_memory.m_as("B") == H100_BYTES
    assert res.memory_utilization == pytest.approx(total / H100_BYTES, rel=1e-12)
    assert res.parallelism == {"dp": 1, "tp": 8, "pp": 1, "ep": 1}
    assert res.activation_checkpointing == "full"
    assert res.feasible is (total <= H100_BYTES)


def test_zero1_shards_adam_state_over_data_parallel_ranks():
    one = _solve(batch_size=8)
    four = _solve(batch_size=32, dp_size=4, zero_stage=1)
    assert four.optimizer_state.m_as("B") == pytest.approx(
        one.optimizer_state.m_as("B") / 4, rel=1e-12
    )
    assert four.gradients.m_as("B") == pytest.approx(one.gradients.m_as("B"), rel=1e-12)


def test_gradient_accumulation_shrinks_the_microbatch():
    whole = _solve(batch_size=8, activation_checkpointing="none")
    halves = _solve(batch_size=8, activation_checkpointing="none", gradient_accumulation_steps=2)
    # stored activations scale with the micro-batch: 8 sequences at once, then 4
    assert halves.activations.m_as("B") == pytest.approx(whole.activations.m_as("B") / 2, rel=1e-9)


@pytest.mark.parametrize(
    "kw", [{"trainable_fraction": 0.1}, {"communication_buffer_fraction": 0.2}]
)
def test_what_mlsys_does_not_model_is_refused(kw):
    with pytest.raises(MlsysError, match=next(iter(kw))):
        _solve(**kw)
