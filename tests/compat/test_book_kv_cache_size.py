"""``Models.Language.<name>.get_kv_cache_size``: the book's KV-cache bytes on a catalog shape."""

from __future__ import annotations

import pytest

from mlsys import Models
from mlsys.constants import BYTES_FP16, BYTES_INT4, GB
from mlsys.core.errors import ParameterError


def test_llama3_8b_int4_token_and_the_books_72_gb_pool():
    # Llama 3 8B: 32 layers, 8 KV heads of 128 (Meta's config). One INT4 token:
    # 2 x 32 x 8 x 128 x 0.5 B = 32,768 B; 72 GB hold 72e9 / 32,768 = 2,197,265.6 tokens.
    per_token = Models.Language.Llama3_8B.get_kv_cache_size(
        seq_len=1, batch_size=1, precision=BYTES_INT4
    )
    assert per_token.m_as("byte") == 32_768
    tokens = (72 * GB / per_token).m_as("")
    assert tokens == pytest.approx(2_197_265.625)
    assert 2_190_000 <= tokens <= 2_200_000  # the serving chapter's own bounds


def test_llama2_70b_rollout_cache_is_the_rlhf_figure():
    # 2 x 80 layers x 8 KV heads x 128 x 1024 tokens x 256 sequences x 2 B = 85.90 GB
    cache = Models.Language.Llama2_70B.get_kv_cache_size(1024, 256, BYTES_FP16)
    assert cache.m_as("byte") == 2 * 80 * 8 * 128 * 1024 * 256 * 2
    assert cache.m_as(GB) == pytest.approx(85.899345920)


def test_precision_by_name_number_and_default():
    m = Models.Language.Llama3_8B
    fp16 = m.get_kv_cache_size(4096, 1).m_as("byte")
    assert fp16 == 2 * 32 * 8 * 128 * 4096 * 2  # 536,870,912 B: 0.5 GiB per 4k sequence
    assert m.get_kv_cache_size(4096, 1, "fp8").m_as("byte") == fp16 / 2
    assert m.get_kv_cache_size(4096, 1, 2).m_as("byte") == fp16


def test_refuses_a_model_without_attention_and_bad_sizes():
    with pytest.raises(ParameterError, match="model"):
        Models.Vision.ResNet50.get_kv_cache_size(1, 1)
    with pytest.raises(ParameterError, match="seq_len"):
        Models.Language.Llama3_8B.get_kv_cache_size(0, 1)
    with pytest.raises(ParameterError, match="batch_size"):
        Models.Language.Llama3_8B.get_kv_cache_size(1, 2.5)
    with pytest.raises(ParameterError, match="precision"):
        Models.Language.Llama3_8B.get_kv_cache_size(1, 1, -1)
