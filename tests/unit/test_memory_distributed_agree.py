"""MemoryModel and DistributedModel price the same layout's memory identically.

Both take the storage rules (16-bit weights and activations below 32-bit compute,
gradients at :func:`mlsys.core.precision.default_grad_dtype`, an fp32 master copy
unless the compute is 32-bit), the batch split and the Korthikanti et al. (2022)
per-layer activations from one place, so ``MemoryModel().solve(...)`` and
``DistributedModel().solve(...).memory_per_accelerator`` agree field by field.

MemoryModel's training path *is* the layout model's memory
(:func:`mlsys.core.solvers._layout.memory_terms`), so they agree on every layout —
FlashAttention on or off, GPipe or 1F1B, uneven pipelines (the busiest stage's
``ceil(L/(p·v))·v`` layers in both), expert and context parallelism; the property
test in ``tests/property/test_layout_agreement.py`` samples 10^4 layouts. Neither
total carries a framework allowance by default.
"""

from __future__ import annotations

import pytest

from mlsys import Fabrics, Fleet, Models, Nodes
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.solvers.memory import MemoryModel

A100_64 = Fleet(node=Nodes.DGX_A100, count=8, fabric=Fabrics.IB_HDR)
H100_64 = Fleet(node=Nodes.DGX_H100, count=8, fabric=Fabrics.IB_NDR)

# (id, model, fleet, layout keywords shared by both solvers, DistributedModel-only keywords)
LAYOUTS = [
    (
        "gpt3 tp8 pp8 v3 sp selective zero0",
        "GPT3_175B",
        A100_64,
        dict(
            batch_size=64,
            tp_size=8,
            pp_size=8,
            v_stages=3,
            microbatch_count=64,
            sequence_parallel=True,
            recompute="selective",
        ),
        {},
    ),
    (
        "gpt3 tp8 pp2 dp4 full zero1",
        "GPT3_175B",
        A100_64,
        dict(
            batch_size=32, tp_size=8, pp_size=2, microbatch_count=4, zero_stage=1, recompute="full"
        ),
        {},
    ),
    (
        "gpt3 tp8 pp4 dp2 sp selective zero2, m < p",
        "GPT3_175B",
        A100_64,
        dict(
            batch_size=4,
            tp_size=8,
            pp_size=4,
            microbatch_count=2,
            zero_stage=2,
            sequence_parallel=True,
            recompute="selective",
        ),
        {},
    ),
    (
        "gpt3 tp8 dp8 zero3 full",
        "GPT3_175B",
        A100_64,
        dict(batch_size=16, tp_size=8, microbatch_count=2, zero_stage=3, recompute="full"),
        {},
    ),
    (
        "llama3-8b fp8 tp4 pp2 dp8 zero1 selective (GQA, SwiGLU)",
        "Llama3_8B",
        H100_64,
        dict(
            batch_size=64,
            precision="fp8",
            tp_size=4,
            pp_size=2,
            microbatch_count=4,
            zero_stage=1,
            sequence_parallel=True,
            recompute="selective",
        ),
        {},
    ),
    (
        "llama3-8b fp8 dp64 zero3 full",
        "Llama3_8B",
        H100_64,
        dict(batch_size=64, precision="fp8", zero_stage=3, recompute="full", seq_len=4096),
        {},
    ),
    (
        "llama2-70b fp16 tp8 pp4 dp2 zero2 selective",
        "Llama2_70B",
        A100_64,
        dict(
            batch_size=16,
            precision="fp16",
            tp_size=8,
            pp_size=4,
            microbatch_count=8,
            zero_stage=2,
            recompute="selective",
        ),
        {},
    ),
    (
        "llama2-70b bf16 gradients tp8 pp2 dp4 zero1",
        "Llama2_70B",
        A100_64,
        dict(
            batch_size=32,
            grad_dtype="bf16",
            tp_size=8,
            pp_size=2,
            microbatch_count=4,
            zero_stage=1,
            recompute="full",
        ),
        {},
    ),
    (
        "gpt3 tf32 tp8 pp8 zero0 full (no master copy)",
        "GPT3_175B",
        A100_64,
        dict(
            batch_size=8,
            precision="tf32",
            tp_size=8,
            pp_size=8,
            microbatch_count=8,
            recompute="full",
        ),
        {},
    ),
    (
        "gpt3 recompute none, scores materialised",
        "GPT3_175B",
        A100_64,
        dict(
            batch_size=16,
            tp_size=8,
            pp_size=8,
            microbatch_count=16,
            zero_stage=1,
            seq_len=1024,
            flash_attention=False,
        ),
        {},
    ),
    (
        "gpt3 gpipe pp8 m16 (the solvers once said 20.59 vs 10.29 GB)",
        "GPT3_175B",
        A100_64,
        dict(batch_size=16, tp_size=8, pp_size=8, microbatch_count=16, schedule="gpipe"),
        {},
    ),
    (
        "gpt3 uneven pp3 (96 layers: ok) and pp5 (busiest stage 20 layers)",
        "GPT3_175B",
        Fleet(node=Nodes.DGX_A100, count=5, fabric=Fabrics.IB_HDR),
        dict(batch_size=5, tp_size=8, pp_size=5, microbatch_count=5, recompute="selective"),
        {},
    ),
    (
        "mixtral ep8 dp8 zero1 (batch over dp·ep)",
        "Mixtral_8x7B",
        H100_64,
        dict(batch_size=128, ep_size=8, microbatch_count=2, zero_stage=1, seq_len=4096),
        {},
    ),
    (
        "llama3-70b tp8 cp4 dp2 seq 32k",
        "Llama3_70B",
        H100_64,
        dict(
            batch_size=2,
            tp_size=8,
            cp_size=4,
            zero_stage=1,
            recompute="selective",
            sequence_parallel=True,
            seq_len=32768,
        ),
        {},
    ),
    (
        "mixtral ep1 tp8 pp2 dp4 zero2 selective",
        "Mixtral_8x7B",
        H100_64,
        dict(
            batch_size=8,
            tp_size=8,
            pp_size=2,
            microbatch_count=2,
            zero_stage=2,
            recompute="selective",
            seq_len=4096,
        ),
        {},
    ),
]

FIELDS = [
    ("weights", "weights"),
    ("gradients", "gradients"),
    ("optimizer_state", "optimizer"),
    ("activations", "activations"),
    ("total", "total"),
    ("capacity", "capacity"),
]


@pytest.mark.parametrize(
    ("model_key", "fleet", "layout", "dist_only"),
    [case[1:] for case in LAYOUTS],
    ids=[case[0] for case in LAYOUTS],
)
def test_memory_model_equals_distributed_memory(model_key, fleet, layout, dist_only):
    model = Models.get(model_key)
    dist = DistributedModel().solve(model, fleet, **layout, **dist_only)
    dp = dist.parallelism["dp"]
    mem = MemoryModel().solve(
        model,
        fleet.node.accelerator,
        dp_size=dp,
        **layout,
    )
    assert mem.microbatch_size == dist.microbatch_size
    got = dist.memory_per_accelerator
    for mem_field, dist_field in FIELDS:
        assert mem.si(mem_field) == pytest.approx(got.si(dist_field), rel=1e-12), mem_field
    assert mem.si("framework_overhead") == 0.0  # in neither total by default
    assert bool(mem.feasible) == dist.feasible


def test_fp8_training_keeps_16_bit_weights_and_16_bit_gradients():
    # Llama-3-8B on 64 H100s, dp = 64, ZeRO-0: per GPU Ψ = 8.03e9 parameters.
    # FP8 compute: bf16 weights 2 B/param, bf16 gradients 2 B/param (default_grad_dtype,
    # NeMo's FP8 recipes), fp32 master + Adam moments 12 B/param — 16 B/param in both
    # solvers.
    model = Models.Llama3_8B
    psi = model.total_params
    dist = DistributedModel().solve(
        model, H100_64, batch_size=64, precision="fp8", recompute="full", seq_len=2048
    )
    mem = MemoryModel().solve(
        model,
        H100_64.node.accelerator,
        batch_size=64,
        dp_size=64,
        precision="fp8",
        recompute="full",
        seq_len=2048,
    )
    for res, opt in ((mem, "optimizer_state"), (dist.memory_per_accelerator, "optimizer")):
        assert res.si("weights") == pytest.approx(2 * psi)
        assert res.si("gradients") == pytest.approx(2 * psi)
        assert res.si(opt) == pytest.approx(12 * psi)


def test_grad_dtype_changes_gradients_only():
    # bf16 vs fp32 gradients: 2 B instead of 4 B per parameter, nothing else moves.
    model = Models.Llama2_70B
    kw = dict(batch_size=8, tp_size=8, pp_size=8, microbatch_count=8, recompute="full")
    acc = A100_64.node.accelerator
    fp32 = MemoryModel().solve(model, acc, **kw)
    bf16 = MemoryModel().solve(model, acc, grad_dtype="bf16", **kw)
    psi = fp32.si("params_per_device")
    assert fp32.si("gradients") == pytest.approx(4 * psi)
    assert bf16.si("gradients") == pytest.approx(2 * psi)
    for field in ("weights", "optimizer_state", "activations"):
        assert fp32.si(field) == bf16.si(field)
