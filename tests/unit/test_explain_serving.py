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
