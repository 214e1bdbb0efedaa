"""What each millisecond of a token is: ServingResult.explain()."""

from __future__ import annotations

import pytest

from mlsys import Hardware, Models, ParameterError
from mlsys.core.solvers.serving import ServingModel, ServingResult


def test_decode_tree_is_the_itl_and_names_its_parts():
    res = ServingModel().solve(Models.Llama2_70B, Hardware.H100, batch_size=16, tp_size=4)
    tree = res.explain()
    assert tree.value == res.si("itl")  # the solver's own sum
    keys = [t.key for t in tree.leaves()]
    assert keys[:2] == ["embedding", "layers"] and "tp" in keys
    # the all-reduces are the result's own decode communication time
    assert tree["tp"].value == res.si("tp_communication_time_decode")
    assert "pp" not in keys  # one stage: no sends


def test_embedding_gather_is_its_memory_traffic_plus_a_kernel():
    # one token's row of h = 4,096 bf16 values read and written (16 kB) at no more than the
    # H100's HBM rate and no less than half of it, plus the kernel's fixed cost
    # (mlsys.core.formulas.overheads.KERNEL_OVERHEAD_S)
    from mlsys.core.formulas.overheads import KERNEL_OVERHEAD_S

    res = ServingModel().solve(Models.Llama2_7B, Hardware.H100, batch_size=1)
    traffic_s = 2 * 4096 * 2 / Hardware.H100.memory_bandwidth_Bps
    value = res.explain()["embedding"].value
    assert KERNEL_OVERHEAD_S + traffic_s <= value <= KERNEL_OVERHEAD_S + 2 * traffic_s


def test_a_synchronous_engine_shows_its_host_work():
    res = ServingModel(engine="vllm-v0").solve(Models.Llama2_7B, Hardware.H100, batch_size=1)
    tree = res.explain()
    assert tree.value == res.si("itl")
    assert tree["host"].value > 0.0  # the loop waits for the host: t = t_dev + t_host


def test_a_result_not_made_by_a_solve_says_so():
    with pytest.raises(ParameterError, match=r"ServingModel\.solve"):
        ServingResult(itl=1.0).explain()


# -- time to first token -------------------------------------------------------------------
M, H = Models, Hardware


@pytest.mark.parametrize(
    ("engine", "model", "hardware", "kwargs"),
    [
        (None, M.Llama2_7B, H.H100, dict(batch_size=1, prompt_len=2048)),
        (None, M.Llama2_70B, H.H100, dict(batch_size=16, tp_size=4, precision="fp8")),
        ("vllm-v0", M.Llama2_70B, H.A100_80GB, dict(batch_size=8, tp_size=4, pp_size=2)),
        ("trtllm-0.9", M.Mixtral_8x7B, H.H100, dict(batch_size=4, tp_size=2, precision="fp8")),
        (None, M.Llama3_8B, H.L4, dict(batch_size=4, precision="int8", batched_prefill=True)),
        ("sglang", M.Llama3_70B, H.H100, dict(batch_size=2, tp_size=8, prompt_len=512)),
    ],
)  # fmt: skip
def test_prefill_tree_leaves_sum_to_the_ttft(engine, model, hardware, kwargs):
    res = ServingModel(engine).solve(model, hardware, **kwargs)
    tree = res.explain("prefill")
    total = 0.0
    for leaf in tree.leaves():  # left to right, the order the solver adds them in
        assert leaf.value > 0.0 and leaf.unit == "s"
        total += leaf.value
    assert total == tree.value == res.si("ttft")  # exactly: the solver's own sum
    keys = [t.key for t in tree.leaves()]
    assert keys[:3] == ["embedding", "layers", "lm_head"]
    tp_s = res.si("tp_communication_time_prefill")
    assert (tree["tp"].value if "tp" in keys else 0.0) == tp_s
    assert ("pp" in keys) == (res.parallelism["pp"] > 1)
    assert ("host" in keys) == (engine == "vllm-v0")  # a synchronous loop waits on the host


def test_prefill_terms_are_the_prompts_matmuls_and_one_row_of_logits():
    # Llama 2 7B, one 2,048-token prompt on an H100 (989.4 dense bf16 TFLOP/s, 3.35 TB/s):
    # the layers' weights are 6,738,415,616 − 2 · 32,000 · 4,096 (embedding and head)
    # = 6.476e9 parameters, 2 FLOP each per token -> at least 26.8 ms at peak; a prefill
    # runs its GEMMs at no less than 40 % of peak, so at most 67 ms (causal attention
    # included). The LM head projects only the last position: its 32,000 x 4,096 bf16
    # weights (262 MB) read once -> at least 78 us, under twice that with its kernel cost.
    res = ServingModel().solve(Models.Llama2_7B, Hardware.H100, batch_size=1, prompt_len=2048)
    tree = res.explain("prefill")
    layer_params = 6_738_415_616 - 2 * 32_000 * 4_096
    at_peak_s = 2 * layer_params * 2048 / 989.4e12
    assert at_peak_s <= tree["layers"].value <= at_peak_s / 0.4
    head_read_s = 32_000 * 4_096 * 2 / Hardware.H100.memory_bandwidth_Bps
    assert head_read_s <= tree["lm_head"].value <= 2 * head_read_s
    assert tree.name == "time to first token" and tree.key == "ttft"
    with pytest.raises(ParameterError, match="phase"):
        res.explain("ttft")
    with pytest.raises(ParameterError, match=r"ServingModel\.solve"):
        ServingResult(ttft=1.0).explain("prefill")
