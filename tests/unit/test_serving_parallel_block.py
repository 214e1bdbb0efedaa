"""A parallel attention/MLP block halves a serving pass's tensor-parallel all-reduces.

GPT-J-style layers (GPT-NeoX ``gpt_j_residual``, PaLM's "parallel layers") sum the
attention and MLP outputs before one reduction, so an engine's forward pass issues one
all-reduce per layer instead of Megatron's two
(:func:`mlsys.core.formulas.parallel.tp_forward_reductions_per_layer`); the GEMMs,
KV cache and kernels are the same.
"""

from __future__ import annotations

import pytest

from mlsys import Hardware
from mlsys.core.solvers.serving import ServingModel
from mlsys.core.types import TransformerWorkload


def _neox(parallel: bool) -> TransformerWorkload:
    # GPT-NeoX-20B's shape (Black et al. 2022, Table 1): 44 layers, h = 6144, 64 heads
    return TransformerWorkload(
        name="neox-20b-like", layers=44, hidden=6144, heads=64, vocab=50432,
        seq_len=2048, tied_embeddings=False, parallel_block=parallel,
    )  # fmt: skip


@pytest.mark.parametrize("tp", [2, 4])
def test_parallel_block_halves_the_tp_time_and_nothing_else(tp):
    kw = dict(batch_size=8, prompt_len=512, output_len=64, tp_size=tp)
    seq = ServingModel().solve(_neox(False), Hardware.A100_80GB, **kw)
    par = ServingModel().solve(_neox(True), Hardware.A100_80GB, **kw)
    for field in ("tp_communication_time_prefill", "tp_communication_time_decode"):
        assert par.si(field) == pytest.approx(0.5 * seq.si(field), rel=1e-12)
    # what the all-reduces no longer cost is exactly what the step saves
    saved = seq.si("tp_communication_time_decode") - par.si("tp_communication_time_decode")
    assert seq.si("itl") - par.si("itl") == pytest.approx(saved, rel=1e-9)
    assert saved > 0.0


def test_one_device_has_no_reduction_to_save():
    kw = dict(batch_size=4, prompt_len=256, output_len=32)
    seq = ServingModel().solve(_neox(False), Hardware.A100_80GB, **kw)
    par = ServingModel().solve(_neox(True), Hardware.A100_80GB, **kw)
    assert par.si("itl") == seq.si("itl") and par.si("ttft") == seq.si("ttft")
