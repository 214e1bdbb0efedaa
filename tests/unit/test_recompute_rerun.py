"""Full recomputation that reruns the whole layer (Megatron-LM, PyTorch) or only the
residuals the backward consumes (JAX): ``DistributedModel.solve(recompute_rerun=)``."""

from __future__ import annotations

import pytest

from mlsys import ParameterError
from mlsys.core.catalog import Fabrics, Nodes
from mlsys.core.formulas.transformer import residual_rerun_share
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.types import Fleet, TransformerWorkload


def test_share_counts_the_inputs_of_the_next_matmuls():
    # GPT layer (MHA, f = 4h, not gated): QKV 3h² and MLP-in 4h² rerun, out-proj h² and
    # MLP-out 4h² not: 7/12 of the layer's 12h²
    assert residual_rerun_share(4096, 4096, 16384) == pytest.approx(7 / 12)
    # SwiGLU with GQA (Llama-2-70B-like: 64 heads of 128, 8 KV heads, f = 28672):
    # (8192 + 2048 + 2 x 28672) / (8192 + 2048 + 8192 + 3 x 28672)
    q, kv, f = 8192, 1024, 28672
    expected = (q + 2 * kv + 2 * f) / (q + 2 * kv + q + 3 * f)
    assert residual_rerun_share(q, kv, f, gated=True) == pytest.approx(expected)


def _solve(model, fleet, **kw):
    base = dict(batch_size=64, zero_stage=1, microbatch_count=1, flash_attention=True)
    return DistributedModel().solve(model, fleet, **{**base, **kw})


MODEL = TransformerWorkload(name="t", layers=24, hidden=4096, heads=32, vocab=32000, bias=False,
                            seq_len=2048)  # fmt: skip
FLEET = Fleet(node=Nodes.DGX_H100, count=8, fabric=Fabrics.IB_NDR)


def test_hardware_flops_drop_by_the_output_projections_share():
    layer = _solve(MODEL, FLEET, tp_size=8, recompute="full")
    resid = _solve(MODEL, FLEET, tp_size=8, recompute="full", recompute_rerun="residuals")
    assert layer.mfu > 0 and resid.mfu > 0
    per_token_model = layer.si("model_flops") / (64 * 2048)
    n_layers = 24 * 12 * 4096**2  # matmul weights of the layers
    skipped = (1 - 7 / 12) * 2 * n_layers  # FLOP per token not rerun
    hw_layer = layer.hfu / layer.mfu * per_token_model
    hw_resid = resid.hfu / resid.mfu * per_token_model
    assert hw_layer - hw_resid == pytest.approx(skipped, rel=1e-9)
    assert resid.si("step_time") < layer.si("step_time")


@pytest.mark.parametrize(("sp", "ratio"), [(True, 6 / 5), (False, 6 / 4)])
def test_tensor_parallel_collectives_rerun_only_the_input_gathers(sp, ratio):
    # per layer: 4 all-reduce equivalents forward + backward, 2 more for a whole rerun;
    # a residual-only rerun repeats the two all-gathers before QKV and the MLP input
    # (1 equivalent) under sequence parallelism, and nothing without it
    kw = dict(tp_size=8, recompute="full", sequence_parallel=sp)
    layer = _solve(MODEL, FLEET, **kw)
    resid = _solve(MODEL, FLEET, **kw, recompute_rerun="residuals")
    assert layer.si("tp_communication_time") / resid.si("tp_communication_time") == (
        pytest.approx(ratio, rel=1e-9)
    )


@pytest.mark.parametrize("recompute", ["none", "selective"])
def test_no_effect_without_full_recompute(recompute):
    layer = _solve(MODEL, FLEET, tp_size=8, recompute=recompute)
    resid = _solve(MODEL, FLEET, tp_size=8, recompute=recompute, recompute_rerun="residuals")
    assert resid.si("step_time") == layer.si("step_time")
    assert any("recompute_rerun" in n for n in resid.notes)


def test_default_is_the_whole_layer_and_bad_values_are_named():
    kw = dict(tp_size=8, recompute="full")
    assert _solve(MODEL, FLEET, **kw, recompute_rerun="layer").si("step_time") == _solve(
        MODEL, FLEET, **kw
    ).si("step_time")
    with pytest.raises(ParameterError, match="recompute_rerun"):
        _solve(MODEL, FLEET, **kw, recompute_rerun="jax")
