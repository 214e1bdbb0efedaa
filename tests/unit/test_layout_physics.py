"""The physics of the training layout model (mlsys.core.solvers._layout): GEMMs
by shape, fixed kernel costs, NCCL/NVLS tensor-parallel collectives, TP overlap — each
against a derivation written here from the cited formulas."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from mlsys import DistributedModel, Fabrics, Fleet, Models, Nodes
from mlsys.core.errors import ParameterError
from mlsys.core.formulas.collectives import nccl_ring_time, nvls_allreduce_time
from mlsys.core.formulas.layer_time import (
    gradient_accumulation_bytes,
    linear_gemm_times,
    linear_layers_time,
    ring_attention_merge_bytes,
    rotary_embedding_bytes,
)
from mlsys.core.formulas.memory import optimizer_step_bytes_per_param
from mlsys.core.formulas.overheads import KERNEL_OVERHEAD_S, kernels_per_layer
from mlsys.core.formulas.overlap import bucket_edge_time, userbuffers_exposed_time
from mlsys.core.formulas.parallel import gradient_bucket_count
from mlsys.core.solvers import _layout
from mlsys.core.solvers._layout import build_problem, evaluate

H100_FLEET = Fleet(node=Nodes.DGX_H100, count=8, fabric=Fabrics.IB_NDR)
A100_FLEET = Fleet(node=Nodes.DGX_A100, count=8, fabric=Fabrics.IB_HDR)
GPT3 = Models.GPT3_175B
# tp 8, pp 8, dp 1, 64 micro-batches of one 2048-token sequence, ZeRO-1
LAYOUT = dict(tp=8.0, pp=8.0, ep=1.0, dp=1.0, m=64.0, v=1.0, zero=1.0)


def _eval(P, rc=0.0, sp=0.0, **kw):
    return evaluate(P, **LAYOUT, rc=rc, sp=sp, **kw)


def test_gemm_shape_ratio_is_the_layers_gemm_time_over_its_flops():
    P = build_problem(GPT3, A100_FLEET, 64)
    F, B = P.peak * P.eta_c, P.hbm_bw * P.eta_m
    # GPT-3's four GEMMs at T = 2048 tokens, tp = 8 (linear_layers_time), forward once and
    # backward once, against 3 × 2·T·12·h²/8 FLOPs at 312 TFLOP/s × 0.75.
    args = (2048.0, 12288.0, 96.0, 96.0, 128.0, 49152.0, 0.0, 8.0, F, B, 2.0)
    fwd = linear_layers_time(*args, sm_count=108.0)
    bwd = linear_layers_time(*args, sm_count=108.0, backward=True)
    flops = 2 * 2048 * 12 * 12288**2 / 8
    ratio = (fwd + bwd) * F / (3 * flops)
    assert _layout._linear_shape_ratio(P, 2048.0, 8.0, False, _layout.ScalarOps) == pytest.approx(
        ratio
    )
    # every forward GEMM wastes 1/9 of its waves (linear_layers_time's example), the
    # backward ones no less: the ratio is at least 9/8 of the forward third
    assert ratio > 1.0
    assert fwd == pytest.approx(flops / F * 9 / 8)


def test_fixed_kernel_cost_adds_per_layer_per_pass():
    P = build_problem(GPT3, A100_FLEET, 64)
    free = dataclasses.replace(P, kernel_overhead_s=0.0)
    with_k, without = _eval(P, rc=2.0), _eval(free, rc=2.0)
    # full recompute: forward twice and backward once, 10 + 10 + 15 kernels per layer with
    # FlashAttention, 12 layers per device, 64 micro-batches
    kernels = 2 * kernels_per_layer("forward", True) + kernels_per_layer("backward", True)
    assert kernels == 35
    expected = 64 * 12 * kernels * KERNEL_OVERHEAD_S
    assert with_k["compute_time"] - without["compute_time"] == pytest.approx(expected)


def test_tensor_parallel_all_reduce_uses_nvls_on_nvswitch3():
    P = build_problem(GPT3, H100_FLEET, 64)
    assert P.in_network_reduction and P.scaleup_link == "nvlink"
    # without sequence parallelism: 4 all-reduces of T·h·2 = 50.3 MB per layer; on 8 H100
    # NVLS takes 25 µs + 50.3 MB / 275 GB/s = 208 µs against the ring's 8.4 + 14 × 3.4 µs +
    # 1.75 × 50.3 MB / 370 GB/s = 294 µs
    M = 2048 * 12288 * 2.0
    nvls = nvls_allreduce_time(M, 8, 450e9)
    ring = nccl_ring_time("all_reduce", M, 8, 450e9)
    assert nvls < ring
    out = _eval(P)
    assert out["tp_communication_time"] == pytest.approx(64 * 12 * 4 * nvls)
    # the same node without in-network reduction pays the ring
    ring_only = _eval(dataclasses.replace(P, in_network_reduction=False))
    assert ring_only["tp_communication_time"] == pytest.approx(64 * 12 * 4 * ring)


def test_sequence_parallel_collectives_are_reduce_scatter_plus_all_gather():
    P = build_problem(GPT3, A100_FLEET, 64)
    M = 2048 * 12288 * 2.0
    # NVLink 3 (300 GB/s): a ring reduce-scatter plus a ring all-gather per all-reduce
    per = nccl_ring_time("reduce_scatter", M, 8, 300e9) + nccl_ring_time("all_gather", M, 8, 300e9)
    out = _eval(P, sp=1.0)
    assert out["tp_communication_time"] == pytest.approx(64 * 12 * 4 * per)


def test_tp_comm_overlap_pairs_each_collective_with_its_gemm():
    kw = dict(
        batch_size=64, tp_size=8, pp_size=8, microbatch_count=64, sequence_parallel=True,
        recompute="selective",
    )  # fmt: skip
    plain = DistributedModel().solve(GPT3, H100_FLEET, **kw)
    hidden = DistributedModel().solve(GPT3, H100_FLEET, tp_comm_overlap=True, **kw)
    # 64 micro-batches x 12 layers x 4 all-reduce-equivalents (a reduce-scatter and an
    # all-gather each) of 2048 tokens x 12288 x 2 bytes: one collective is 1/8 of a layer's
    P = build_problem(GPT3, H100_FLEET, 64)
    one = plain.si("tp_communication_time") / (64 * 12 * 8)
    shape = (12288, 96, 96, 128, 49152, False, 8, P.peak * P.eta_c, P.hbm_bw * P.eta_m, 2.0)

    def gemms(tokens, gemm):
        return linear_gemm_times(tokens, *shape, sm_count=P.sm_count, gemm=gemm)

    fwd, data, weight = gemms(2048, "forward"), gemms(2048, "data"), gemms(2048, "weight")
    fwd_8, data_8 = gemms(256, "forward"), gemms(256, "data")
    # the solver prices exactly the pairing formula on the layer's own GEMMs, whole and
    # split into 8 x 256 tokens (selective recompute: no forward rerun)
    per_layer = userbuffers_exposed_time(
        fwd, tuple(8 * x for x in fwd_8), data, tuple(8 * x for x in data_8), weight, one, 8
    )
    assert hidden.si("tp_communication_time") == pytest.approx(64 * 12 * per_layer, rel=1e-9)
    # at 2048 tokens on H100 the output projection's GEMM (T x 1536 by 1536 x 12288) is
    # shorter than its reduce-scatter, so more than the 1/8 chunk of each of the six
    # pipelined collectives shows; everything else hides
    assert fwd[1] < one < min(fwd[0], fwd[2], fwd[3])
    assert 6 * one / 8 < per_layer < 8 * one
    assert hidden.si("step_time") < plain.si("step_time")
    # without sequence parallelism Megatron cannot overlap: no effect, and a note says so
    kw["sequence_parallel"] = False
    a = DistributedModel().solve(GPT3, H100_FLEET, **kw)
    b = DistributedModel().solve(GPT3, H100_FLEET, tp_comm_overlap=True, **kw)
    assert a.si("step_time") == b.si("step_time")
    assert any("tp_comm_overlap" in n for n in b.notes)


def test_tp_comm_overlap_shows_a_collective_longer_than_its_gemm():
    # Llama 3.1 405B FP8 on H100 at TP 8, 4096 tokens a micro-batch (Megatron-Bridge's
    # row): the output projection's forward GEMM (T x 2048 by 2048 x 16384) is shorter
    # than the reduce-scatter of the T x 16384 activation it feeds, so part of that
    # collective shows however long the MLP GEMMs are
    P = build_problem(Models.Llama3_405B, H100_FLEET, 64, "fp8", seq_len=8192)
    shape = (16384, 128, 8, 128, 53248, True, 8, P.peak * P.eta_c, P.hbm_bw * P.eta_m, 2.0)
    fwd = linear_gemm_times(4096, *shape, sm_count=P.sm_count)
    # one reduce-scatter at the NVLink ring's bandwidth, of 4096 x 16384 x 2 bytes
    one = nccl_ring_time("reduce_scatter", 4096 * 16384 * 2.0, 8, P.scaleup_link_Bps, "nvlink")
    assert fwd[1] < one < fwd[2]
    split = linear_gemm_times(512, *shape, sm_count=P.sm_count)
    lay = dict(tp=8.0, pp=1.0, ep=1.0, dp=8.0, m=1.0, v=1.0, zero=1.0, rc=0.0, sp=1.0)
    exposed = evaluate(P, **lay, tp_overlap=True)["tp_communication_time"] / 126
    # at least the output projection's shortfall, against a lumped model's 1/8 chunk
    assert exposed > one - 8 * split[1]
    lumped = evaluate(P, **lay)["tp_communication_time"] / 126 / 8
    assert exposed > lumped


def test_fp8_training_pays_for_its_casts():
    # Llama 3 8B in FP8 on one DGX H100 node, tp 1: per layer and micro-batch of one
    # 8192-token sequence, the forward casts (h + q + h + f)·T = 26,624·8192 elements and
    # the backward ((q + 2kv) + h + 2f + h)·T = 6144 + 4096 + 28672 + 4096 = 43,008·8192,
    # at 6 bytes each, at 3.35 TB/s × 0.85.
    fleet = Fleet(node=Nodes.DGX_H100, count=1, fabric=Fabrics.IB_NDR)
    P = build_problem(Models.Llama3_8B, fleet, 8, "fp8")
    assert P.fp8_cast_bytes_per_element == 6.0
    free = dataclasses.replace(P, fp8_cast_bytes_per_element=0.0)
    lay = dict(tp=1.0, pp=1.0, ep=1.0, dp=8.0, m=1.0, v=1.0, zero=1.0, rc=0.0, sp=0.0)
    extra = evaluate(P, **lay)["compute_time"] - evaluate(free, **lay)["compute_time"]
    per_layer = (26624 + 43008) * 8192 * 6.0 / (3.35e12 * 0.85)
    assert extra == pytest.approx(32 * per_layer)
    # bf16 training has no casts
    assert build_problem(Models.Llama3_8B, fleet, 8, "bf16").fp8_cast_bytes_per_element == 0.0


def test_fused_attention_is_priced_by_the_flash_attention_formula(monkeypatch):
    # With FlashAttention the layout model calls attention_time with the layer's shapes:
    # one micro-batch of one 2048-token sequence, 96/8 = 12 heads per device, 12 KV heads,
    # head dim 128, the bf16 peak — forward and backward — and adds (1 + full) forward
    # passes and one backward pass to the layer's compute.
    calls = []
    real = _layout.attention_time

    def spy(*args, **kw):
        out = real(*args, **kw)
        calls.append((args[:7], kw.get("backward", False), out))
        return out

    monkeypatch.setattr(_layout, "attention_time", spy)
    # a copy of the problem starts with nothing priced (the memoised one may have)
    P = dataclasses.replace(build_problem(GPT3, A100_FLEET, 64))
    _eval(P, rc=2.0)
    shapes = {c[0] for c in calls}
    assert shapes == {(1.0, 2048.0, 2048.0, 12.0, 12.0, 128.0, 312e12)}
    assert sorted(c[1] for c in calls) == [False, True]
    fwd = next(c[2] for c in calls if not c[1])
    # FlashAttention-2's forward: 4·2048²·12·128 / 2 FLOPs at 0.70 of 312 TFLOP/s, an
    # unmasked kernel's rate, times the causal kernel's (16 + 5.1) / (17 + 10.2) at 2k
    assert fwd == pytest.approx(4 * 2048**2 * 12 * 128 / 2 / (0.70 * 312e12 * 21.1 / 27.2))


def test_unfused_gradient_accumulation_adds_one_read_modify_write_per_microbatch():
    # GPT-3 175B on tp 8 × pp 8 in fp16 (fp16 gradient buffer, as Megatron-LM 2021's
    # local DDP): each GPU holds P/64 parameters; every one of the 64 micro-batches adds
    # its fp16 weight gradients into the buffer: read 2 + read 2 + write 2 bytes each,
    # at 2.039 TB/s × 0.85.
    P = build_problem(GPT3, A100_FLEET, 64, "fp16")
    assert (P.e_act, P.g_bytes) == (2.0, 2.0)
    fused = _eval(P, rc=2.0)
    unfused = _eval(P, rc=2.0, grad_accum_fusion=False)
    per_mb = GPT3.total_params / 64 * 6.0 / (2.039e12 * 0.85)
    assert gradient_accumulation_bytes(GPT3.total_params / 64, 2.0, 2.0) == pytest.approx(
        GPT3.total_params / 64 * 6.0
    )
    assert unfused["compute_time"] - fused["compute_time"] == pytest.approx(64 * per_mb)
    # it is device work inside each micro-batch, so the bubble grows with it: (p - 1)/m
    extra_bubble = unfused["pipeline_bubble_time"] - fused["pipeline_bubble_time"]
    assert extra_bubble == pytest.approx(7 / 64 * 64 * per_mb)
    # bf16 with an fp32 buffer moves 2 + 4 + 4 bytes per parameter
    Pb = build_problem(GPT3, A100_FLEET, 64, "bf16")
    bf = _eval(Pb, rc=2.0, grad_accum_fusion=False)["compute_time"]
    assert bf - _eval(Pb, rc=2.0)["compute_time"] == pytest.approx(64 * per_mb * 10 / 6)


def test_unfused_gradient_accumulation_through_the_solver():
    kw = dict(batch_size=64, tp_size=8, pp_size=8, microbatch_count=64, recompute="full")
    a = DistributedModel().solve(GPT3, A100_FLEET, **kw)
    b = DistributedModel().solve(GPT3, A100_FLEET, grad_accumulation_fusion=False, **kw)
    assert b.si("step_time") > a.si("step_time")
    assert b.si("compute_time") - a.si("compute_time") == pytest.approx(
        64 * gradient_accumulation_bytes(GPT3.total_params / 64, 2.0, 4.0) / (2.039e12 * 0.85)
    )


def test_optimizer_step_is_megatrons_mixed_precision_chain():
    # GPT-3 175B, tp 8 × pp 8, ZeRO-1 over dp 1: each GPU updates P/64 parameters.
    # bf16 (fp32 gradient buffer): norm 4 + Adam (4 + 2·12) + write-back (4 + 2) = 38 B;
    # fp16 (fp16 buffer, loss scaling): + copy to fp32 (2 + 4) + unscale (4 + 4) = 52 B.
    for precision, per_param in (("bf16", 38.0), ("fp16", 52.0)):
        P = build_problem(GPT3, A100_FLEET, 64, precision)
        assert P.opt_step_bytes == per_param
        expected = GPT3.total_params / 64 * per_param / (2.039e12 * 0.85)
        assert _eval(P)["optimizer_time"] == pytest.approx(expected)
    # fp32 training keeps no master copy: Adam's 8 bytes of state, the weight read and
    # written, the gradient read twice (norm, update)
    assert optimizer_step_bytes_per_param(8.0, 4.0, 4.0, master_weights=False) == 32.0


def test_block_recompute_reruns_and_frees_only_its_share_of_layers():
    # GPT-3 175B on tp 8 × pp 8 (12 layers per stage, one chunk): recomputing 3 of the 12
    # layers (Megatron's --recompute-method block --recompute-num-layers 3) costs a
    # quarter of full recompute's extra time and keeps three quarters of the activations
    # full recompute frees.
    kw = dict(batch_size=64, tp_size=8, pp_size=8, microbatch_count=64)
    solve = DistributedModel().solve
    none = solve(GPT3, A100_FLEET, recompute="none", **kw)
    full = solve(GPT3, A100_FLEET, recompute="full", **kw)
    part = solve(GPT3, A100_FLEET, recompute="full", recompute_num_layers=3, **kw)
    every = solve(GPT3, A100_FLEET, recompute="full", recompute_num_layers=12, **kw)
    assert every.si("step_time") == full.si("step_time")
    t = [r.si("compute_time") for r in (none, part, full)]
    assert t[1] - t[0] == pytest.approx(0.25 * (t[2] - t[0]), rel=1e-9)
    act = [r.memory_per_accelerator.si("activations") for r in (none, part, full)]
    assert act[0] - act[1] == pytest.approx(0.25 * (act[0] - act[2]), rel=1e-9)
    # the hardware FLOPs count the rerun forward of 3 layers in 12
    extra = [r.hfu * r.si("step_time") - r.mfu * r.si("step_time") for r in (part, full)]
    assert extra[0] == pytest.approx(0.25 * extra[1], rel=1e-9)
    # MemoryModel gives the same activations for the same layout (one memory model)
    from mlsys.core.solvers.memory import MemoryModel

    mem = MemoryModel().solve(
        GPT3, A100_FLEET.node.accelerator, batch_size=64, dp_size=1, tp_size=8, pp_size=8,
        microbatch_count=64, recompute="full", recompute_num_layers=3,
    )  # fmt: skip
    assert mem.si("activations") == pytest.approx(act[1], rel=1e-9)
    assert _layout.block_recompute_fraction(96, 8, 1, 3) == 0.25
    assert _layout.block_recompute_fraction(96, 8, 1, 40) == 1.0
    with pytest.raises(ParameterError):
        _layout.block_recompute_fraction(96, 8, 1, 0)
    # without full recompute it has nothing to act on, and says so
    sel = solve(GPT3, A100_FLEET, recompute="selective", recompute_num_layers=3, **kw)
    assert sel.si("step_time") == solve(GPT3, A100_FLEET, recompute="selective", **kw).si(
        "step_time"
    )
    assert any("recompute_num_layers" in n for n in sel.notes)


def test_rotary_models_pay_for_rotating_queries_and_keys():
    # Llama 3 8B (32 query and 8 KV heads of 128) in bf16 on one DGX H100, tp 1, one
    # 8192-token sequence per micro-batch: each of 32 layers reads and writes Q and K,
    # 2·(4096 + 1024)·2 bytes per token, forward and (for the gradients) backward, at
    # 3.35 TB/s × 0.85. GPT-3's learned positions have no such pass.
    fleet = Fleet(node=Nodes.DGX_H100, count=1, fabric=Fabrics.IB_NDR)
    P = build_problem(Models.Llama3_8B, fleet, 8, "bf16")
    assert P.rotary and not build_problem(GPT3, A100_FLEET, 64).rotary
    plain = dataclasses.replace(P, rotary=False)
    lay = dict(tp=1.0, pp=1.0, ep=1.0, dp=8.0, m=1.0, v=1.0, zero=1.0, sp=0.0)
    for rc, passes in ((0.0, 2.0), (2.0, 3.0)):  # full recompute rotates once more
        extra = (
            evaluate(P, rc=rc, **lay)["compute_time"]
            - evaluate(plain, rc=rc, **lay)["compute_time"]
        )
        per_pass = 2 * (4096 + 1024) * 2.0 * 8192
        assert rotary_embedding_bytes(8192, 32, 8, 128, 1, 2.0) == per_pass
        assert extra == pytest.approx(32 * passes * per_pass / (3.35e12 * 0.85))


def test_ring_attention_merges_by_hand():
    # Llama 3 8B (32 query heads, 8 KV heads of 128), one 8192-token sequence on a ring of
    # two, tp 1: 4096 tokens a rank, Q = 4096 x 4096, K and V = 2 x 4096 x 1024 elements.
    q, kv = 4096 * 4096, 2 * 4096 * 1024
    # forward: the first partial copied (2 passes), the second rescaled and added (3):
    # 5 passes of Q; backward the same for dQ, and dK, dV copied (2) and half of them
    # added (1.5): 5 Q + 3.5 KV; bf16
    assert ring_attention_merge_bytes(q, kv, 2, 2.0) == 2.0 * (5 * q + 5 * q + 3.5 * kv)
    assert ring_attention_merge_bytes(q, kv, 2, 2.0) == 394_264_576
    # four ranks, full recompute: the forward's 2 + 3·3 = 11 passes twice, dQ's once more,
    # dK, dV 2 + 1.5·3 = 6.5
    assert ring_attention_merge_bytes(q, kv, 4, 2.0, 1.0) == 2.0 * (3 * 11 * q + 6.5 * kv)
    # no ring, nothing to merge; arrays element by element
    assert ring_attention_merge_bytes(q, kv, 1, 2.0) == 0.0
    got = ring_attention_merge_bytes(np.array([q, q]), kv, np.array([1.0, 2.0]), 2.0)
    assert got.tolist() == [0.0, 394_264_576.0]


def test_context_parallel_merges_through_the_step():
    # the merges of Llama 3 8B's 32 layers on one DGX H100 (cp 2, dp 4, 4 micro-batches)
    # at 3.35 TB/s x 0.85, once per layer and micro-batch; none without a ring or when
    # K and V are all-gathered (one kernel over the whole sequence)
    fleet = Fleet(node=Nodes.DGX_H100, count=1, fabric=Fabrics.IB_NDR)
    P = build_problem(Models.Llama3_8B, fleet, 16, "bf16")
    lay = dict(tp=1.0, pp=1.0, ep=1.0, dp=4.0, m=4.0, v=1.0, zero=1.0, sp=0.0)
    per_layer = ring_attention_merge_bytes(4096 * 4096, 2 * 4096 * 1024, 2, 2.0)
    for rc, full in ((0.0, 0.0), (2.0, 1.0)):
        got = evaluate(P, rc=rc, cp=2.0, **lay)["term.cp_merge"]
        want = (
            4
            * 32
            * ring_attention_merge_bytes(4096 * 4096, 2 * 4096 * 1024, 2, 2.0, full)
            / (3.35e12 * 0.85)
        )
        assert got == pytest.approx(want, rel=1e-12)
    assert 4 * 32 * per_layer / (3.35e12 * 0.85) == pytest.approx(0.01772, rel=1e-3)
    assert evaluate(P, rc=0.0, cp=1.0, **lay)["term.cp_merge"] == 0.0
    assert evaluate(P, rc=0.0, cp=2.0, cp_all_gather=True, **lay)["term.cp_merge"] == 0.0


def test_one_gradient_bucket_runs_alone():
    # Llama 3 8B on one DGX H100 as dp 8, four 8192-token micro-batches: the backward of
    # the last one (and the next forward) would hide the whole reduce-scatter and
    # all-gather, but Megatron-Core's buckets of max(40 M, 1 M x 8) parameters make
    # ceil(8.03 G / 40 M) = 201 collectives each, and the last reduce-scatter bucket and
    # the first all-gather bucket run alone: (t_rs + t_ag) / 201.
    fleet = Fleet(node=Nodes.DGX_H100, count=1, fabric=Fabrics.IB_NDR)
    P = build_problem(Models.Llama3_8B, fleet, 32, "bf16")
    lay = dict(tp=1.0, pp=1.0, ep=1.0, dp=8.0, m=4.0, v=1.0, zero=1.0, sp=0.0)
    out = evaluate(P, rc=0.0, **lay)
    buckets = gradient_bucket_count(P.params_dense, 8)
    assert buckets == math.ceil(P.params_dense / 40e6) == 201
    assert bucket_edge_time(0.08, 21.0) == pytest.approx(0.08 / 21)
    total = out["dp_communication_total"]
    assert out["term.dp"] == pytest.approx(total / buckets, rel=1e-12)
    # ZeRO-0's all-reduce the same: its last bucket
    out0 = evaluate(P, rc=0.0, **{**lay, "zero": 0.0})
    assert out0["term.dp"] == pytest.approx(out0["dp_communication_total"] / buckets, rel=1e-12)
    # without overlap the whole reduction is exposed, as before
    flat = evaluate(P, rc=0.0, overlap=False, **lay)
    assert flat["term.dp"] == flat["dp_communication_total"]
