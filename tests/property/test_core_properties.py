"""Physical monotonicity of the core solvers, checked with hypothesis.

* More memory bandwidth is never slower (roofline time is non-increasing in BW).
* A larger batch never lowers throughput (weights are reused across the batch; in the
  memory-bound regime throughput rises, in the compute-bound regime it stays flat).
* Memory per device never rises when a parallel degree grows: data parallelism with
  ZeRO ≥ 1 and tensor parallelism, strictly. For pipeline parallelism (plain 1F1B,
  ``v_stages = 1``) the model states and the transformer-layer activations never rise;
  the first stage does hold one embedding-dropout mask (``sbh/t`` bytes, Korthikanti et
  al. 2022 Sec. 4.3) per in-flight micro-batch, and ``min(p, m)`` grows with ``p``, so
  the total may rise by exactly that much — a real effect, visible when ZeRO-3 has
  made the model states tiny. (Interleaving multiplies the first stage's activations
  by ``1 + (p−1)/(p·v)``, which also grows with ``p``; it is left out here.)
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mlsys import Accelerator, TransformerWorkload
from mlsys.core.solvers.memory import MemoryModel
from mlsys.core.solvers.roofline import SingleNodeModel

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

MODELS = [
    TransformerWorkload(
        name="gpt-1.3b", layers=24, hidden=2048, heads=16, vocab=51200, seq_len=2048
    ),
    TransformerWorkload(
        name="llama-8b",
        layers=32,
        hidden=4096,
        heads=32,
        kv_heads=8,
        ffn_hidden=14336,
        gated_mlp=True,
        vocab=128256,
        seq_len=8192,
        norm="rmsnorm",
        bias=False,
        tied_embeddings=False,
        position_embedding="rope",
    ),
    TransformerWorkload(
        name="moe",
        layers=16,
        hidden=2048,
        heads=16,
        kv_heads=4,
        ffn_hidden=5632,
        gated_mlp=True,
        vocab=32000,
        seq_len=4096,
        norm="rmsnorm",
        bias=False,
        tied_embeddings=False,
        position_embedding="rope",
        experts=8,
        experts_per_token=2,
    ),
]
models = st.sampled_from(MODELS)
phases = st.sampled_from(["prefill", "decode", "training"])


def _device(bandwidth_Bps: float, peak: float = 989.4e12) -> Accelerator:
    return Accelerator(
        name="probe",
        peak_flops={"bf16": peak},
        memory_capacity=80e9,
        memory_bandwidth=bandwidth_Bps,
        tdp=700.0,
    )


@SETTINGS
@given(
    model=models,
    phase=phases,
    batch=st.integers(1, 256),
    seq=st.integers(16, 4096),
    bw=st.floats(1e11, 1e13),
    factor=st.floats(1.0, 10.0),
)
def test_more_bandwidth_is_never_slower(model, phase, batch, seq, bw, factor):
    solver = SingleNodeModel()
    slow = solver.solve(model, _device(bw), batch_size=batch, seq_len=seq, phase=phase)
    fast = solver.solve(model, _device(bw * factor), batch_size=batch, seq_len=seq, phase=phase)
    assert fast.si("latency") <= slow.si("latency") * (1 + 1e-12)


@SETTINGS
@given(
    model=models,
    phase=phases,
    batch=st.integers(1, 512),
    factor=st.integers(2, 8),
    kv=st.integers(0, 8192),
    seq=st.integers(16, 2048),
)
def test_larger_batch_never_lowers_throughput(model, phase, batch, factor, kv, seq):
    # k times the batch: every GEMM's tiles and waves grow at most k-fold
    # (ceil(k·x) <= k·ceil(x)), the streamed weights and fixed kernel costs not at all,
    # so k times the tokens never take more than k times as long. (One more sequence
    # can cost more than its share: 240 -> 260 rows crosses a 256-row tile.)
    solver = SingleNodeModel()
    dev = _device(3.35e12)
    kw = dict(seq_len=seq, phase=phase, kv_cache_len=kv)
    small = solver.solve(model, dev, batch_size=batch, **kw)
    large = solver.solve(model, dev, batch_size=batch * factor, **kw)
    assert large.si("tokens_per_second") >= small.si("tokens_per_second") * (1 - 1e-9)


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


@SETTINGS
@given(
    model=models,
    dp=st.integers(1, 512),
    more=st.integers(2, 8),
    zero=st.integers(1, 3),
    batch=st.integers(1, 8),
    data=st.data(),
)
def test_memory_never_rises_with_dp_under_zero(model, dp, more, zero, batch, data):
    rec = data.draw(st.sampled_from(["none", "selective", "full"]))
    solver = MemoryModel()
    global_batch = batch * dp * more  # splits evenly over both dp and dp·more replicas
    kw = dict(batch_size=global_batch, zero_stage=zero, recompute=rec)
    a = solver.solve(model, _device(3e12), dp_size=dp, **kw)
    b = solver.solve(model, _device(3e12), dp_size=dp * more, **kw)
    assert b.si("total") <= a.si("total") * (1 + 1e-12)
    assert b.si("total") < a.si("total")  # ZeRO ≥ 1 always partitions something


@SETTINGS
@given(
    model=models,
    mode=st.sampled_from(["training", "inference"]),
    sp=st.booleans(),
    batch=st.integers(1, 8),
    data=st.data(),
)
def test_memory_never_rises_with_tp(model, mode, sp, batch, data):
    divisors = _divisors(model.heads)
    i = data.draw(st.integers(0, len(divisors) - 2))
    j = data.draw(st.integers(i + 1, len(divisors) - 1))
    rec = data.draw(st.sampled_from(["none", "selective", "full"]))
    solver = MemoryModel()
    kw = dict(batch_size=batch, mode=mode, sequence_parallel=sp, recompute=rec)
    a = solver.solve(model, _device(3e12), tp_size=divisors[i], **kw)
    b = solver.solve(model, _device(3e12), tp_size=divisors[j], **kw)
    assert b.si("total") <= a.si("total") * (1 + 1e-12)


@SETTINGS
@given(
    model=models,
    mode=st.sampled_from(["training", "inference"]),
    m=st.integers(1, 64),
    batch=st.integers(1, 8),
    zero=st.integers(0, 3),
    data=st.data(),
)
def test_memory_never_rises_with_pp(model, mode, m, batch, zero, data):
    # even splits only: with an uneven one the busiest stage's ceil(L/p) layers times
    # min(p, m) in-flight micro-batches can grow with p (L = 24: 6·4 at p = 4, 5·5 at 5)
    even = [p for p in range(1, model.layers + 1) if model.layers % p == 0]
    i = data.draw(st.integers(0, len(even) - 2))
    p1 = even[i]
    p2 = data.draw(st.sampled_from(even[i + 1 :]))
    rec = data.draw(st.sampled_from(["none", "selective", "full"]))
    solver = MemoryModel()
    kw = dict(
        batch_size=batch * 8 * m,  # m equal micro-batches on each of the 8 replicas
        mode=mode,
        microbatch_count=m,
        zero_stage=zero,
        dp_size=8,
        recompute=rec,
    )
    a = solver.solve(model, _device(3e12), pp_size=p1, **kw)
    b = solver.solve(model, _device(3e12), pp_size=p2, **kw)
    states_a = a.si("weights") + a.si("gradients") + a.si("optimizer_state")
    states_b = b.si("weights") + b.si("gradients") + b.si("optimizer_state")
    assert states_b <= states_a * (1 + 1e-12)
    # embedding dropout masks of the extra in-flight micro-batches (+ fragmentation share)
    s = model.seq_len if mode == "training" else 0
    mb = a.microbatch_size  # sequences per micro-batch (global batch / (dp · m))
    mask_growth = s * mb * model.hidden * (min(p2, m) - min(p1, m)) * 1.05
    assert b.si("total") <= a.si("total") * (1 + 1e-12) + mask_growth
    if mode == "training":
        layers_a = a.si("activations") - s * mb * model.hidden * min(p1, m)
        layers_b = b.si("activations") - s * mb * model.hidden * min(p2, m)
        if p1 > 1:  # p = 1 also holds the output layer (4sbh(1 + v/h)), which p > 1 drops
            assert layers_b <= layers_a * (1 + 1e-12)
