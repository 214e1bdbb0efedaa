"""A request longer than the model's context window is infeasible, for that reason.

A transformer attends over at most ``max_position_embeddings`` tokens: prompt and output
together. Llama 2 was released with a 4,096-token window (Touvron et al. 2023, Table 1;
``meta-llama/Llama-2-7b-hf`` config.json). Serving it a 17,000-token context used to come
back feasible with no note, and a 1M-token prompt was refused for its weights.
"""

from __future__ import annotations

import pytest

from mlsys import (
    ContinuousBatchingModel,
    Hardware,
    InfeasibleError,
    Models,
    Nodes,
    ServingModel,
    TransformerWorkload,
)

H100 = Hardware.H100
LLAMA2_7B = Models.Llama2_7B


def test_llama2_window_is_4096_from_its_release():
    for model in (Models.Llama2_7B, Models.Llama2_13B, Models.Llama2_70B):
        assert model.context_window == 4096
        assert "4,096" in model.provenance_of("context_window").reference


@pytest.mark.parametrize(
    ("name", "window"),
    [
        ("GPT3_175B", 2048),  # Brown et al. 2020, n_ctx = 2048
        ("GPT2_XL", 1024),  # Radford et al. 2019, 1024-token context
        ("Llama3_8B", 131072),  # Llama 3.1: 128K = 131,072 positions
        ("Mixtral_8x7B", 32768),  # Jiang et al. 2024, Table 1
        ("BERT_Large", 512),  # Devlin et al. 2019
    ],
)
def test_catalog_windows(name, window):
    assert Models[name].context_window == window


def test_17000_token_context_on_llama2_7b_is_infeasible_for_the_window():
    res = ServingModel().solve(LLAMA2_7B, H100, prompt_len=17000, output_len=128)
    assert not res.feasible
    assert "context window of 4,096 tokens" in res.infeasibility_reason
    assert "17,128" in res.infeasibility_reason  # 17,000 + 128


def test_a_million_token_prompt_is_refused_for_the_window_not_the_weights():
    res = ServingModel().solve(LLAMA2_7B, H100, prompt_len=1_000_000, output_len=128)
    assert not res.feasible
    assert "context window" in res.infeasibility_reason
    assert "weights" not in res.infeasibility_reason


def test_the_window_counts_the_output_too():
    # 4,000 + 96 = 4,096 fits exactly; 4,000 + 97 does not
    assert ServingModel().solve(LLAMA2_7B, H100, prompt_len=4000, output_len=96).feasible
    res = ServingModel().solve(LLAMA2_7B, H100, prompt_len=4000, output_len=97)
    assert not res.feasible and "4,097" in res.infeasibility_reason


def test_past_the_window_raises_with_raise_errors():
    with pytest.raises(InfeasibleError, match="context window"):
        ServingModel().solve(LLAMA2_7B, H100, prompt_len=17000, raise_errors=True)


def test_node_with_tensor_parallelism_checks_the_window_too():
    res = ServingModel().solve(
        Models.Llama2_70B, Nodes.DGX_H100, tp_size=8, prompt_len=8192, output_len=1
    )
    assert not res.feasible and "8,193" in res.infeasibility_reason


def test_continuous_batching_checks_the_longest_request():
    res = ContinuousBatchingModel().solve(
        LLAMA2_7B, H100, arrival_rate=0.1, prompt_len=17000, output_len=128
    )
    assert not res.feasible and "context window" in res.infeasibility_reason
    # sampled lengths: the longest prompt (5,000) is past the window though the mean is not
    res = ContinuousBatchingModel().solve(
        LLAMA2_7B, H100, arrival_rate=0.1, prompt_len=[500, 1000, 5000], output_len=64
    )
    assert not res.feasible and "5,000-token prompt" in res.infeasibility_reason


def test_a_model_without_a_known_window_is_not_checked():
    custom = TransformerWorkload(name="custom", layers=4, hidden=256, heads=8, vocab=1000)
    assert custom.context_window is None
    assert ServingModel().solve(custom, H100, prompt_len=17000, output_len=10).feasible


def test_a_custom_window_is_honoured():
    short = TransformerWorkload(
        name="short", layers=4, hidden=256, heads=8, vocab=1000, context_window=1024
    )
    assert ServingModel().solve(short, H100, prompt_len=1000, output_len=24).feasible
    assert not ServingModel().solve(short, H100, prompt_len=1000, output_len=25).feasible
