"""DistributedModel: fields, conventions, physics checks, errors, agreement with formulas."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from llama_shapes import LLAMA3_8B, llama_style

from mlsys.core.catalog import Fabrics, Models, Nodes
from mlsys.core.errors import InfeasibleError, ParameterError
from mlsys.core.formulas import collectives as C
from mlsys.core.formulas.memory import activation_bytes_per_layer, embedding_activation_bytes
from mlsys.core.formulas.parallel import group_placement
from mlsys.core.solvers import _layout
from mlsys.core.solvers.distributed import DistributedModel, DistributedResult, build_problem
from mlsys.core.types import Fleet, Node, TransformerWorkload

GPT3 = Models.GPT3_175B
FLEET_A100 = Fleet(node=Nodes.DGX_A100, count=8, fabric=Fabrics.IB_HDR)  # 64 GPUs
FLEET_H100 = Fleet(node=Nodes.DGX_H100, count=16, fabric=Fabrics.IB_NDR)  # 128 GPUs
BASE = dict(tp_size=8, pp_size=8, microbatch_count=64, recompute="selective",
            sequence_parallel=True)  # fmt: skip


def solve(model=GPT3, fleet=FLEET_A100, batch_size=64, **kw):
    args = {**BASE, **kw}
    return DistributedModel().solve(model, fleet, batch_size=batch_size, **args)


API_FIELDS = (
    "step_time compute_time dp_communication_time tp_communication_time "
    "pp_communication_time ep_communication_time pipeline_bubble_time bubble_fraction "
    "scaling_efficiency mfu hfu achieved_flops_per_accelerator tokens_per_second "
    "memory_per_accelerator feasible infeasibility_reason parallelism overlap_fraction notes"
).split()


def test_every_api_field_is_present_with_units():
    res = solve()
    assert isinstance(res, DistributedResult)
    for name in API_FIELDS:
        assert name in res, name
    assert res.step_time.to("ms").magnitude == pytest.approx(1e3 * res.si("step_time"))
    assert res.tokens_per_second.to("token/s").magnitude > 0
    assert res.achieved_flops_per_accelerator.to("TFLOP/s").magnitude > 0
    mem = res.memory_per_accelerator
    for part in ("weights", "gradients", "optimizer", "activations", "total"):
        assert mem.si(part) >= 0
    parts = sum(mem.si(p) for p in ("weights", "gradients", "optimizer", "activations"))
    assert mem.si("total") == pytest.approx(parts)
    assert res.parallelism == {"dp": 1, "tp": 8, "pp": 8, "ep": 1}


def test_old_names_are_aliases_that_warn():
    res = solve()
    for old, new in (
        ("communication_latency", "dp_communication_time"),
        ("step_latency_total", "step_time"),
        ("effective_throughput", "tokens_per_second"),
        ("pipeline_bubble_latency", "pipeline_bubble_time"),
    ):
        with pytest.warns(DeprecationWarning):
            assert getattr(res, old) == getattr(res, new)


def test_step_time_is_the_sum_of_its_parts():
    res = solve(fleet=Fleet(node=Nodes.DGX_A100, count=16, fabric=Fabrics.IB_HDR), batch_size=128)
    parts = (
        "compute_time tp_communication_time ep_communication_time pp_communication_time "
        "pipeline_bubble_time dp_communication_time"
    ).split()
    assert res.si("step_time") == pytest.approx(sum(res.si(p) for p in parts))


def test_mfu_is_computed_from_the_result():
    res = solve()
    peak = 64 * 312e12
    assert res.mfu == pytest.approx(res.si("model_flops") / res.si("step_time") / peak)
    # FlashAttention already recomputes the scores: selective recompute adds nothing;
    # with materialised scores it reruns the attention forward (Korthikanti et al. 2022).
    assert res.hfu == pytest.approx(res.mfu)
    unfused = solve(flash_attention=False)
    assert unfused.hfu > unfused.mfu
    full = solve(recompute="full")
    assert full.hfu > full.mfu
    assert res.si("achieved_flops_per_accelerator") == pytest.approx(res.mfu * 312e12)
    assert res.si("tokens_per_second") == pytest.approx(64 * 2048 / res.si("step_time"))


def test_bubble_is_the_megatron_ratio_of_the_ideal_time():
    # pipeline_bubble_time = (p-1)/(v m) x (time of the m micro-batches)
    for v in (1, 3):
        res = solve(v_stages=v)
        ideal = (
            res.si("step_time") - res.si("pipeline_bubble_time")
            - res.si("dp_communication_time") - res.si("optimizer_time")
        )  # fmt: skip
        assert res.si("pipeline_bubble_time") / ideal == pytest.approx(7 / (v * 64))


def test_gpipe_has_the_1f1b_bubble_but_holds_every_microbatch():
    a = solve(microbatch_count=16, batch_size=16)
    g = solve(microbatch_count=16, batch_size=16, schedule="gpipe")
    assert g.si("step_time") == pytest.approx(a.si("step_time"))
    act_a = a.memory_per_accelerator.si("activations")
    act_g = g.memory_per_accelerator.si("activations")
    assert act_g > act_a  # m = 16 in flight instead of min(p, m) = 8


def test_zero3_moves_one_and_a_half_times_the_bytes_of_zero0():
    # dp = 64 across 64 nodes; large buffers so latency is negligible; same dtype for
    # gradients and parameters so the element count is what differs.
    fleet = Fleet(node=Nodes.DGX_A100, count=64, fabric=Fabrics.IB_HDR)
    model = Models.Llama2_7B
    kw = dict(tp_size=8, pp_size=1, microbatch_count=1, recompute="full", grad_dtype="bf16",
              overlap=False, sequence_parallel=True)  # fmt: skip
    z0 = DistributedModel().solve(model, fleet, batch_size=64, zero_stage=0, **kw)
    z3 = DistributedModel().solve(model, fleet, batch_size=64, zero_stage=3, **kw)
    ratio = z3.si("dp_communication_total") / z0.si("dp_communication_total")
    assert ratio == pytest.approx(1.5, rel=0.01)


def test_fp8_compute_alone_does_not_shrink_the_gradient_allreduce():
    kw = dict(tp_size=8, pp_size=1, microbatch_count=1, sequence_parallel=True)
    bf16 = DistributedModel().solve(Models.Llama2_70B, FLEET_H100, batch_size=64, **kw)
    fp8 = DistributedModel().solve(
        Models.Llama2_70B, FLEET_H100, batch_size=64, precision="fp8", grad_dtype="fp32", **kw
    )
    assert fp8.si("dp_communication_total") == pytest.approx(bf16.si("dp_communication_total"))
    assert fp8.si("compute_time") < bf16.si("compute_time")
    # the default gradient dtype of bf16 training is fp32: 4 bytes per parameter in memory
    shard = Models.Llama2_70B.total_params / 8
    assert bf16.memory_per_accelerator.si("gradients") == pytest.approx(4 * shard)
    # FP8 training by default keeps and reduces bf16 gradients (NeMo's FP8 recipes:
    # grad_reduce_in_fp32 = False): 2 bytes per parameter, and a smaller reduction
    fp8_default = DistributedModel().solve(
        Models.Llama2_70B, FLEET_H100, batch_size=64, precision="fp8", **kw
    )
    mem = fp8_default.memory_per_accelerator
    assert mem.si("gradients") == pytest.approx(2 * shard)
    assert fp8_default.si("dp_communication_total") < fp8.si("dp_communication_total")


def test_tp_group_spanning_two_nodes_is_slower_than_inside_one():
    a100 = Nodes.DGX_A100
    half = Node(name="4-GPU node", accelerator=a100.accelerator, accelerators_per_node=4,
                intra_fabric=a100.intra_fabric)  # fmt: skip
    inside = solve(fleet=Fleet(node=a100, count=8, fabric=Fabrics.IB_HDR))
    spanning = solve(fleet=Fleet(node=half, count=16, fabric=Fabrics.IB_HDR))
    assert spanning.si("tp_communication_time") > 1.5 * inside.si("tp_communication_time")
    assert spanning.si("step_time") > inside.si("step_time")
    assert any("spans 2 nodes" in n for n in spanning.notes)


def test_overlap_hides_data_parallel_communication():
    fleet = Fleet(node=Nodes.DGX_H100, count=32, fabric=Fabrics.IB_NDR)
    kw = dict(model=Models.Llama2_13B, fleet=fleet, batch_size=256, tp_size=2, pp_size=1,
              microbatch_count=1, recompute="full", zero_stage=1)  # fmt: skip
    on, off = solve(**kw), solve(**kw, overlap=False)
    assert off.overlap_fraction == 0.0
    assert 0.0 < on.overlap_fraction <= 1.0
    # overlapped, the reduction runs bucket by bucket (Megatron-Core's default bucket:
    # max(40M, 1M x dp) parameters): 6.5e9 / 128e6 -> 51 buckets, each reduce-scatter and
    # all-gather paying NCCL's ring latency again: 96 NVLink steps (3.4 us), 31 network
    # steps (14 us) and the 8.4 us base of the Simple protocol; without overlap, one of each
    per_collective = 96 * 3.4e-6 + 31 * 14e-6 + 8.4e-6
    extra = on.si("dp_communication_total") - off.si("dp_communication_total")
    assert extra == pytest.approx((51 - 1) * 2 * per_collective, rel=1e-6)
    assert on.si("step_time") < off.si("step_time")
    assert off.si("dp_communication_time") == pytest.approx(off.si("dp_communication_total"))


def test_hierarchical_beats_a_flat_ring_across_nodes():
    fleet = Fleet(node=Nodes.DGX_H100, count=16, fabric=Fabrics.IB_NDR)
    kw = dict(model=Models.Llama2_7B, fleet=fleet, batch_size=128, tp_size=1, pp_size=1,
              microbatch_count=1, recompute="full", zero_stage=1, overlap=False)  # fmt: skip
    hier = solve(**kw, topology_override="hierarchical")
    ring = solve(**kw, topology_override="ring")
    assert solve(**kw).si("dp_communication_total") == pytest.approx(
        hier.si("dp_communication_total")
    )
    # ZeRO-1 uses reduce-scatter + all-gather, which are hierarchical either way;
    # plain data parallelism all-reduces, where the flat ring pays the NIC for all 8 GPUs.
    kw["zero_stage"] = 0
    assert solve(**kw, topology_override="ring").si("dp_communication_total") > solve(
        **kw, topology_override="hierarchical"
    ).si("dp_communication_total")
    assert ring.feasible


def test_uneven_layers_give_a_note_not_an_error():
    res = solve(model=Models.Llama3_405B, fleet=Fleet(node=Nodes.DGX_H100, count=256,
                fabric=Fabrics.IB_NDR), batch_size=256, pp_size=16, microbatch_count=16,
                seq_len=8192)  # fmt: skip
    assert res.layers_per_device == 8  # ceil(126 / 16)
    assert any("do not divide" in n for n in res.notes)


def test_infeasible_layout_says_why_and_can_raise():
    small = Fleet(node=Nodes.DGX_A100, count=1, fabric=Fabrics.IB_HDR)
    res = solve(fleet=small, batch_size=8, tp_size=8, pp_size=1, microbatch_count=8)
    assert not res.feasible
    assert "GB per accelerator" in res.infeasibility_reason
    with pytest.raises(InfeasibleError):
        solve(fleet=small, batch_size=8, tp_size=8, pp_size=1, microbatch_count=8,
              raise_errors=True)  # fmt: skip


@pytest.mark.parametrize(
    "kw, name",
    [
        (dict(tp_size=3), "tp_size*pp_size*ep_size*cp_size"),
        (dict(tp_size=64, pp_size=1, microbatch_count=1), "tp_size"),  # 96 heads % 64
        (dict(microbatch_count=7), "microbatch_count"),
        (dict(tp_size=0), "tp_size"),
        (dict(pp_size=-2), "pp_size"),
        (dict(batch_size=0), "batch_size"),
        (dict(batch_size=63, pp_size=1, microbatch_count=1), "batch_size"),
        (dict(precision="fp7"), "precision"),
        (dict(recompute="some"), "recompute"),
        (dict(topology_override="torus"), "topology_override"),
        (dict(zero_stage=4), "zero_stage"),
        (dict(ep_size=2, pp_size=4, microbatch_count=32), "ep_size"),  # dense model
        (dict(pp_size=1, tp_size=8, v_stages=2, microbatch_count=1), "v_stages"),
        (dict(schedule="gpipe", v_stages=2), "v_stages"),
        (dict(schedule="zigzag"), "schedule"),
    ],
)
def test_bad_inputs_name_the_parameter(kw, name):
    with pytest.raises(ParameterError) as err:
        solve(**kw)
    assert err.value.name == name


def test_moe_expert_parallel_all_to_all():
    fleet = Fleet(node=Nodes.DGX_H100, count=4, fabric=Fabrics.IB_NDR)
    kw = dict(model=Models.Mixtral_8x7B, fleet=fleet, batch_size=64, tp_size=1, pp_size=1,
              microbatch_count=1, recompute="full", zero_stage=1, seq_len=4096)  # fmt: skip
    ep8 = solve(**kw, ep_size=8)
    ep1 = solve(**kw, ep_size=1)
    assert ep8.si("ep_communication_time") > 0.0
    assert ep1.si("ep_communication_time") == 0.0
    assert ep8.parallelism == {"dp": 4, "tp": 1, "pp": 1, "ep": 8}
    assert ep8.memory_per_accelerator.si("weights") < ep1.memory_per_accelerator.si("weights")


# -- the layout model's collectives are the public formulas, composed per placement -------
def _problem():
    return build_problem(GPT3, FLEET_H100, 128)


def test_two_level_collectives_compose_the_public_ones():
    # _layout calls the public alpha-beta functions; what it adds is the placement: a
    # group of k ranks per node on n nodes runs the ring inside the node on NVLink, then
    # the 1/k shard across nodes on the NIC. Written out for k = 8, n = 16 and M = 330 MB:
    # intra 7·α_i + 7/8·M/β_i; inter 15·α_o + 15/16·(M/8)/β_o. A reduce-scatter or an
    # all-gather may instead run as NCCL's rings through all 128 ranks, one per NIC, at
    # min(β_i, 8·β_o): 127 steps (15 across nodes) and 127/128·M; the faster is taken.
    P = _problem()
    M = 3.3e8
    intra = 7 * P.intra_lat + 7 / 8 * M / P.intra_bw
    inter = 15 * P.inter_lat + 15 / 16 * (M / 8) / P.inter_bw
    ring = 112 * P.intra_lat + 15 * P.inter_lat + 127 / 128 * M / min(P.intra_bw, 8 * P.inter_bw)
    for fn in (C.reduce_scatter_time, C.allgather_time):
        assert _layout._two_level(fn, M, 8.0, 16.0, P) == pytest.approx(min(intra + inter, ring))
    # an all-to-all reduces nothing on the way: 15/16 of each rank's buffer leaves its
    # node over its own NIC (8·15 remote peers), 7/128 goes over NVLink (not 1/8 of the
    # buffer crossing nodes, as a ring over the nodes would send)
    a2a = 7 * P.intra_lat + 7 / 128 * M / P.intra_bw + 120 * P.inter_lat + 15 / 16 * M / P.inter_bw
    assert C.multinode_alltoall_time(
        M, 8.0, 16.0, P.intra_bw, P.intra_lat, P.inter_bw, P.inter_lat
    ) == pytest.approx(a2a)
    for fn in (C.reduce_scatter_time, C.allgather_time):
        # one node: only the NVLink ring; one rank per node: only the NIC ring
        assert _layout._two_level(fn, M, 8.0, 1.0, P) == pytest.approx(intra)
        assert _layout._two_level(fn, M, 1.0, 16.0, P) == pytest.approx(
            15 * P.inter_lat + 15 / 16 * M / P.inter_bw
        )
    # all-reduce by topology code: 0/3 hierarchical = 2·intra + 2·inter; 1 a flat ring of
    # 128 on the NIC (the slowest link); 2 a double binary tree of 128 on the NIC,
    # 2·⌈log2 128⌉·α_o + 2·M/β_o, and the hierarchical ring inside a single node.
    hier = 2 * intra + 2 * inter
    ring_ar = (
        224 * P.intra_lat + 30 * P.inter_lat + 2 * 127 / 128 * M / min(P.intra_bw, 8 * P.inter_bw)
    )
    assert _layout._allreduce(M, 8.0, 16.0, 0, P) == pytest.approx(min(hier, ring_ar))
    assert _layout._allreduce(M, 8.0, 16.0, 3, P) == pytest.approx(hier)
    assert _layout._allreduce(M, 8.0, 16.0, 1, P) == pytest.approx(
        2 * 127 * P.inter_lat + 2 * 127 / 128 * M / P.inter_bw
    )
    assert _layout._allreduce(M, 8.0, 16.0, 2, P) == pytest.approx(
        2 * 7 * P.inter_lat + 2 * M / P.inter_bw
    )
    assert _layout._allreduce(M, 8.0, 1.0, 2, P) == pytest.approx(2 * intra)
    assert _layout._allreduce(M, 8.0, 1.0, 1, P) == pytest.approx(
        C.ring_allreduce_time(M, 8, P.intra_bw, P.intra_lat)
    )


def test_collectives_on_arrays_equal_the_scalar_path():
    # ParallelismSearch prices layouts as arrays; each element equals the plain-float call.
    P = _problem()
    M = np.array([1e6, 3.3e8, 0.0, 2e9])
    k = np.array([8.0, 4.0, 1.0, 8.0])
    n = np.array([16.0, 1.0, 1.0, 2.0])
    ops = _layout._ArrayOps
    for topo in (0, 1, 2):
        arr = _layout._allreduce(M, k, n, topo, P, ops)
        for i in range(4):
            assert arr[i] == _layout._allreduce(M[i], k[i], n[i], topo, P), (topo, i)
    arr = _layout._two_level(C.reduce_scatter_time, M, k, n, P)
    for i in range(4):
        assert arr[i] == _layout._two_level(C.reduce_scatter_time, M[i], k[i], n[i], P)


def test_private_placement_matches_group_placement():
    size = np.array([1, 2, 8, 16, 64, 16, 4])
    stride = np.array([1, 4, 1, 1, 8, 2, 16])
    ours = _layout._placement(size.astype(float), stride.astype(float), 8.0, _layout._ArrayOps)
    theirs = group_placement(size, stride, 8)
    np.testing.assert_allclose(ours[0], theirs[0])
    np.testing.assert_allclose(ours[1], theirs[1])


@pytest.mark.parametrize("recompute", ["none", "selective", "full"])
@pytest.mark.parametrize("sp", [False, True])
def test_activation_memory_matches_korthikanti_formula(recompute, sp):
    model = TransformerWorkload(name="g", layers=24, hidden=4096, heads=32, vocab=51200)
    fleet = Fleet(node=Nodes.DGX_A100, count=1, fabric=Fabrics.IB_HDR)
    res = DistributedModel().solve(
        model, fleet, batch_size=2, tp_size=8, recompute=recompute, sequence_parallel=sp,
        flash_attention=False,
    )  # fmt: skip
    s, b, h, a = 2048, 2, 4096, 32
    expected = 24 * activation_bytes_per_layer(s, b, h, a, 8, sp, recompute)
    expected += embedding_activation_bytes(s, b, h, 51200, 8, 1)
    assert res.memory_per_accelerator.si("activations") == pytest.approx(float(expected))


def test_solve_is_fast_enough_to_call_in_a_loop():
    # Not a timing test (benchmarks/bench_distributed.py measures speed): the problem is
    # cached, so repeated solves reuse one Problem object.
    assert build_problem(GPT3, FLEET_A100, 64) is build_problem(GPT3, FLEET_A100, 64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        solve()


@pytest.mark.parametrize("recompute", ["none", "selective"])
def test_gqa_swiglu_activations_and_few_microbatches_match_the_formulas(recompute):
    # A Llama-3-8B-like layer (8 of 32 KV heads, SwiGLU f = 14336): the stored tensors
    # inside a layer are Q 1 + K 0.25 + V 0.25 + out 1 + MLP 3·14336/4096 = 13 sbh, not
    # GPT's 12 (activation_bytes_per_layer with the shape). p = 4 stages but m = 2
    # micro-batches: the first stage holds min(p, m) = 2 of them, and 2 embedding masks.
    model = llama_style(name="l3", **LLAMA3_8B)
    fleet = Fleet(node=Nodes.DGX_A100, count=1, fabric=Fabrics.IB_HDR)
    res = DistributedModel().solve(
        model, fleet, batch_size=4, tp_size=2, pp_size=4, microbatch_count=2,
        recompute=recompute, seq_len=4096, flash_attention=False,
    )  # fmt: skip
    s, b, h, a = 4096, 2, 4096, 32  # 4 sequences / 2 micro-batches on the one replica
    per_layer = activation_bytes_per_layer(
        s, b, h, a, 2, False, recompute, ffn_hidden=14336, kv_heads=8, gated_mlp=True
    )
    expected = per_layer * 32 / 4 * 2 + embedding_activation_bytes(s, b, h, 128256, 2, 4, 2)
    assert res.memory_per_accelerator.si("activations") == pytest.approx(float(expected))


def test_default_gradients_are_fp32_for_bf16_and_fp16_for_fp16():
    # GPT-3 on 64 A100s, t = p = 8: Ψ = 174.6e9 / 64 = 2.73e9 per GPU (dp = 1, ZeRO-0).
    # bf16: fp32 gradients, 4 B each = 10.9 GB; fp16: fp16 gradients, 2 B each = 5.46 GB.
    psi = build_problem(GPT3, FLEET_A100, 64).params_dense / 64
    bf16 = solve().memory_per_accelerator.si("gradients")
    fp16 = solve(precision="fp16").memory_per_accelerator.si("gradients")
    assert bf16 == pytest.approx(4 * psi)
    assert fp16 == pytest.approx(2 * psi)
    # the same message as MemoryModel for a batch that does not split into micro-batches
    with pytest.raises(ParameterError, match="a divisor of the per-replica batch 64"):
        solve(microbatch_count=48)


def test_sizes_are_checked_like_memory_model_numpy_integers_accepted():
    # The same count check as MemoryModel (_checks.positive_int): numpy integers from a
    # sweep are sizes like any other; 0, 2.5, True and NaN are not.
    ref = solve()
    res = solve(tp_size=np.int64(8), pp_size=np.int32(8), batch_size=np.int64(64))
    assert res.si("step_time") == ref.si("step_time")
    for bad in (0, 2.5, True, float("nan")):
        with pytest.raises(ParameterError, match="positive integer"):
            solve(tp_size=bad)


def test_deepspeed_pipeline_sends_whole_tensors_four_times_per_microbatch():
    # Megatron's scatter/gather (Narayanan et al. 2021, Sec. 4.1): each of the tp ranks
    # sends T·h·e/tp bytes per stage boundary, each send paired with the opposite
    # receive: two transfer times per micro-batch. DeepSpeed's engine sends all T·h·e and
    # runs RecvActivation, SendActivation, RecvGrad, SendGrad one by one: four. On 64
    # A100 with pp = 8 the boundaries cross nodes (HDR, 90 % of line rate): α + M/β each.
    split = solve()
    whole = solve(pipeline_p2p="deepspeed")
    b = 64 // (1 * 64)  # global batch / (dp · micro-batches): one sequence
    M = b * GPT3.seq_len * GPT3.hidden * 2.0  # bf16 activation
    bw = Fabrics.IB_HDR.effective_bandwidth_Bps * _layout.NETWORK_EFFICIENCY["scale-out"]
    lat = Fabrics.IB_HDR.latency_s
    m = BASE["microbatch_count"]
    assert split.si("pp_communication_time") == pytest.approx(m * 2 * (lat + M / 8 / bw))
    assert whole.si("pp_communication_time") == pytest.approx(m * 4 * (lat + M / bw))
    assert whole.si("step_time") > split.si("step_time")
    # nothing else moves
    assert whole.si("compute_time") == split.si("compute_time")
    assert whole.memory_per_accelerator.si("total") == split.memory_per_accelerator.si("total")
    with pytest.raises(ParameterError, match="pipeline_p2p"):
        solve(pipeline_p2p="gpipe")
