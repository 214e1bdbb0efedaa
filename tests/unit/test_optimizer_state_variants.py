"""Optimizer state as frameworks store it: Apex/NeMo distributed Adam's param remainders and
bf16 moments (``mlsys.core.formulas.memory.optimizer_state_bytes_per_param``), and
``DistributedModel.solve(optimizer=...)``."""

from __future__ import annotations

import pytest

from mlsys import DistributedModel, ParameterError
from mlsys.core.catalog import Fabrics, Nodes
from mlsys.core.formulas.memory import optimizer_state_bytes_per_param
from mlsys.core.types import Fleet, TransformerWorkload

# NeMo's Nemotron-4 340B configuration (NVIDIA/dgxc-benchmarking,
# nemotron/nemotron4-340b-synth.yaml): 96 layers, hidden 18432, FFN 73728 (squared ReLU,
# not gated), 96 heads with 8 query groups, vocabulary 256000, untied embeddings, no bias;
# 48 nodes of 8 H100, TP 8, PP 8, VP 12, micro-batch 1, global batch 96, sequence 4096,
# sequence parallelism, selective recompute; optim distributed_fused_adam with dtype bf16
# and grad_sync_dtype bf16.
NEMOTRON_340B = TransformerWorkload(
    name="nemotron4_340b", layers=96, hidden=18432, heads=96, kv_heads=8, ffn_hidden=73728,
    gated_mlp=False, vocab=256000, seq_len=4096, tied_embeddings=False, bias=False,
)  # fmt: skip


def test_state_bytes_of_each_storage():
    # fp32 master 4 + moments 4 + 4; the master as a 16-bit remainder of the bf16 weight
    # (2 + 4 + 4); bf16 moments and no master (2 + 2)
    assert optimizer_state_bytes_per_param("adam") == 12.0
    assert optimizer_state_bytes_per_param("adam_param_remainders") == 10.0
    assert optimizer_state_bytes_per_param("adam_bf16") == 4.0
    # pure fp32 training has no separate master: Adam's moments alone
    assert optimizer_state_bytes_per_param("adam_param_remainders", master_weights=False) == 8.0
    with pytest.raises(ParameterError, match="optimizer"):
        optimizer_state_bytes_per_param("adam_fp4_magic")


def _solve(**kw):
    fleet = Fleet(node=Nodes.DGX_H100, count=48, fabric=Fabrics.IB_NDR)
    return DistributedModel().solve(
        NEMOTRON_340B, fleet, batch_size=96, tp_size=8, pp_size=8, v_stages=12,
        microbatch_count=16, zero_stage=1, sequence_parallel=True, recompute="selective",
        dropout=False, **kw,
    )  # fmt: skip


def test_nemos_340b_configuration_holds_what_its_optimizer_stores():
    adam = _solve()
    nemo = _solve(optimizer="adam_bf16", grad_dtype="bf16")
    psi = NEMOTRON_340B.total_params / 64  # parameters per GPU (TP 8 x PP 8)
    dp = 384 // 64
    a, n = adam.memory_per_accelerator, nemo.memory_per_accelerator
    assert a.si("optimizer") == pytest.approx(12.0 * psi / dp, rel=0.02)
    assert n.si("optimizer") == pytest.approx(4.0 * psi / dp, rel=0.02)
    assert n.si("gradients") == pytest.approx(2.0 * psi, rel=0.02)
    assert a.si("weights") == n.si("weights") and a.si("activations") == n.si("activations")
    assert nemo.feasible and n.si("total") < a.si("total")


def test_the_refusal_names_what_would_fit():
    # the same model on 128 GPUs in FP8 (data parallelism of 2) does not fit with
    # Megatron's 12-byte Adam and fp32 gradients; the reason says what stores less
    fleet = Fleet(node=Nodes.DGX_H100, count=16, fabric=Fabrics.IB_NDR)
    kw = dict(batch_size=32, precision="fp8", tp_size=8, pp_size=8, v_stages=12,
              microbatch_count=16, zero_stage=1, sequence_parallel=True,
              grad_dtype="fp32")  # fmt: skip
    res = DistributedModel().solve(NEMOTRON_340B, fleet, **kw)
    assert not res.feasible and "adam_param_remainders" in res.infeasibility_reason
    # the remainders save 2 bytes of each parameter's state: 2·ψ/dp
    rem = DistributedModel().solve(NEMOTRON_340B, fleet, optimizer="adam_param_remainders", **kw)
    saved = res.memory_per_accelerator.si("total") - rem.memory_per_accelerator.si("total")
    assert saved == pytest.approx(2.0 * NEMOTRON_340B.total_params / 64 / 2, rel=0.02)
