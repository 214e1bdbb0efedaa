"""Training memory against Megatron-LM's own estimator, its arithmetic written out.

The estimator is ``megatron/training/theoretical_memory_usage.py`` (NVIDIA/Megatron-LM):
``compute_weight_and_optimizer_memory`` charges ``6 + 12/DP`` bytes per parameter of the
most loaded shard with the distributed optimizer (bf16 weights 2, fp32 gradients 4, fp32
master weights and Adam moments 12 sharded over the data-parallel ranks) and
``compute_activation_memory`` (sequence parallelism, selective recomputation) charges
``sbh(18 + 4f/h)`` a layer (Korthikanti et al. 2022, Table 2's ``34 sbh`` at ``f = 4h``)
for ``L`` layers on the first stage, plus the embedding's inputs and dropout mask for ``p``
micro-batches, times the interleaved schedule's ``1 + (p - 1)/(p·v)``, over ``t``.
"""

from __future__ import annotations

import pytest

from mlsys import MemoryModel
from mlsys.core.catalog import Fabrics, Hardware, Nodes
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.types import Fleet, TransformerWorkload

# a small GPT: RoPE, no biases, tied embeddings, so that Megatron's parameter count (which
# has no linear biases and no learned positions) is the model's
L, H, HEADS, F, V, S = 8, 1024, 16, 4096, 51200, 2048
MODEL = TransformerWorkload(
    name="small", layers=L, hidden=H, heads=HEADS, ffn_hidden=F, vocab=V, seq_len=S,
    bias=False, position_embedding="rope", tied_embeddings=True,
)  # fmt: skip


def _megatron_params() -> float:
    """``compute_weight_and_optimizer_memory``'s count: per layer ``2h(f + 2) + 4h²``
    (MLP, two LayerNorms with bias, Q/K/V/O), the final LayerNorm ``2h``, the embedding
    ``Vh`` once (tied)."""
    per_layer = 2 * H * (F + 2) + 2 * H * H * 2
    return per_layer * L + 2 * H + V * H


def test_model_states_are_megatrons_6_plus_12_over_dp_bytes_a_parameter():
    t, dp = 2, 8
    res = MemoryModel().solve(
        MODEL, Hardware.H100, batch_size=dp, dp_size=dp, tp_size=t, zero_stage=1,
        recompute="selective", sequence_parallel=True,
    )  # fmt: skip
    states = res.si("model_state")
    megatron = _megatron_params() / t * (6 + 12 / dp)
    assert states == pytest.approx(megatron, rel=1e-9)


def _megatron_activations(t: int, p: int, v: int) -> float:
    """``compute_activation_memory`` (sequence parallel, selective), micro-batch 1."""
    b = 1
    act = S * b * H * (18 + 4 * F / H) * L
    act += 8 * S * b * p  # the embedding's input token ids (int64), p micro-batches
    act += S * b * H * p  # the embedding's dropout mask, p micro-batches
    penalty = 1 + (p - 1) / (p * v)
    return act * penalty / t


def test_interleaved_activations_match_megatrons_estimator_but_the_token_ids():
    # t = 2, p = 2, v = 2, m = 8 micro-batches (m > p: the penalty applies uncapped),
    # no FlashAttention and selective recomputation: Megatron's 34 sbh a layer. mlsys
    # leaves out the int64 token ids (8 bytes a token) and does not scale the embedding's
    # dropout mask by the interleaving penalty; the rest is the same arithmetic.
    t, p, v, m = 2, 2, 2, 8
    fleet = Fleet(node=Nodes.DGX_H100, count=1, fabric=Fabrics.IB_NDR)
    res = DistributedModel().solve(
        MODEL, fleet, batch_size=16, tp_size=t, pp_size=p, v_stages=v, microbatch_count=m,
        zero_stage=1, recompute="selective", sequence_parallel=True, flash_attention=False,
    )  # fmt: skip
    got = res.memory_per_accelerator.si("activations")
    penalty = 1 + (p - 1) / (p * v)
    left_out = (8 * S * p * penalty + S * H * p * (penalty - 1)) / t
    assert got == pytest.approx(_megatron_activations(t, p, v) - left_out, rel=1e-12)
    assert left_out / got < 0.002


def test_nemotron4_340b_published_layout_fits_with_its_published_storage():
    # NeMo's Nemotron-4 340B (NeMo-Framework-Launcher conf/training/nemotron/
    # nemotron_340b.yaml: 96 layers, hidden 18432, 96 heads, 8 query groups, ffn 4h,
    # squared ReLU, untied 256k vocabulary, no dropout, optim grad_sync_dtype bf16) on
    # 128 H100 at TP 8, PP 8, VP 12, micro-batch 1, global batch 32, FP8.
    model = TransformerWorkload(
        name="nemotron4_340b", layers=96, hidden=18432, heads=96, kv_heads=8,
        ffn_hidden=73728, vocab=256000, seq_len=4096, bias=False,
        position_embedding="rope", tied_embeddings=False,
    )  # fmt: skip
    fleet = Fleet(node=Nodes.DGX_H100, count=16, fabric=Fabrics.IB_NDR)
    layout = dict(batch_size=32, precision="fp8", tp_size=8, pp_size=8, v_stages=12,
                  microbatch_count=16, zero_stage=1, sequence_parallel=True,
                  tp_comm_overlap=True)  # fmt: skip
    published = DistributedModel().solve(model, fleet, grad_dtype="bf16", dropout=False,
                                         **layout)  # fmt: skip
    mem = published.memory_per_accelerator
    psi = model.total_params / 64  # parameters per GPU, the stages' average
    # 2 bytes of bf16 weights, 2 of bf16 gradients, 12 of fp32 master and moments over DP 2
    states = psi * (2 + 2 + 12 / 2)
    assert mem.si("total") - mem.si("activations") == pytest.approx(states, rel=1e-9)
    # activations: 12 one-layer chunks for p = 8 micro-batches, times 1 + 7/96, each
    # layer at TP 8 with sequence parallelism and FP8 GEMM inputs (no dropout):
    # in sbh, the boundary tensors (2 LayerNorm inputs at 2 bytes, their normalised
    # outputs at 1) over 8, and inside: Q and the attention output (2), K and V (2·8/96)
    # and the fc1 output (4) at 2 bytes, the fc2 input (4) and the output projection's
    # own copy (1) at 1 byte, over 8
    per_sbh = (2 * 2 + 2 * 1) / 8 + ((2 + 2 * 8 / 96 + 4) * 2 + 4 + 1) / 8
    sbh = 4096 * 18432
    # (no dropout: no embedding dropout mask either)
    act = per_sbh * sbh * 12 * 8 * (1 + 7 / 96)
    assert mem.si("activations") == pytest.approx(act, rel=1e-9)
    assert published.feasible and mem.si("total") < 0.9 * mem.si("capacity")
    # the library's defaults for FP8 (bf16 gradient buffers, as NeMo's FP8 recipes reduce
    # them) with dropout's masks: the same states, and per layer the two one-byte masks of
    # the bias-dropout-residual blocks, 2 sbh/t, plus the input embedding's sbh/t for each
    # of the p = 8 micro-batches in flight
    default = DistributedModel().solve(model, fleet, **layout)
    dmem = default.memory_per_accelerator
    assert dmem.si("gradients") == pytest.approx(2 * psi, rel=1e-9)
    masks = 2 / 8 * sbh * 12 * 8 * (1 + 7 / 96) + sbh / 8 * 8
    assert dmem.si("activations") == pytest.approx(act + masks, rel=1e-9)
    assert default.feasible  # 78.0 GB of the 85.5 GB an H100 exposes
    # Megatron-LM's bf16 storage instead (fp32 gradient buffers): refused, and the
    # reason names the storage that fits
    fp32 = DistributedModel().solve(model, fleet, grad_dtype="fp32", **layout)
    assert not fp32.feasible
    assert "grad_dtype='bf16'" in fp32.infeasibility_reason
