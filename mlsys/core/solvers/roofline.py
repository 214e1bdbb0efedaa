"""Single-accelerator performance: a per-operator roofline of one model step.

:class:`SingleNodeModel` answers "how long does one step of this model take on this
accelerator, and what limits it?" for transformer prefill, decode and training steps
and for generic workloads (a CNN given by FLOPs, parameters and activation bytes).

Model of execution
------------------
A transformer prefill or decode step is priced exactly as
:class:`~mlsys.core.solvers.serving.ServingModel` prices it on one device — one question,
one answer: each layer is a sequence of kernels that wait for one another
(:func:`mlsys.core.formulas.layer_time.transformer_layer_kernel_times`): the four linear
layers as GEMMs by their shapes (tile and wave quantisation, a skinny GEMM's own memory
roofline; :func:`mlsys.core.formulas.gemm.gemm_time`), fused attention
(:func:`mlsys.core.formulas.gemm.attention_time`), the memory-bound element-wise kernels
and a fixed cost per kernel (:mod:`mlsys.core.formulas.overheads`); plus the embedding
gather and the LM head's GEMM. Rates are the library's achievable fractions of peak
(:func:`mlsys.core.solvers.efficiency.default_efficiency`); an FP8 or integer
``precision`` quantises the weights (activations and KV cache stay 16-bit), as in
ServingModel. A training step runs every kernel's forward and backward and an AdamW
update that streams 30 bytes per parameter (bf16 weights read and written, bf16
gradients read, fp32 master, momentum and variance read and written).

The roofline explains the time (Williams, Waterman & Patterson 2009): each operator's
FLOPs and bytes, its arithmetic intensity and the roof (``"compute"`` or ``"memory"``)
its totals meet first at those rates, ``max(F / (η_c·peak), B / (η_m·BW))``. Per layer:

* ``qkv_proj``, ``out_proj``, ``mlp_up`` (gate and up for a gated MLP, with the MoE
  router), ``mlp_down``: GEMMs of ``T`` tokens by the weights. Weights are read once per
  step and reused by every token in the batch, so the arithmetic intensity grows with the
  batch; a mixture of experts reads only the experts its tokens route to (expected
  distinct experts ``E·(1 − (1 − k/E)^T)`` under uniform routing) and computes ``k`` per
  token.
* ``attention_scores`` (``QKᵀ``) and ``attention_context`` (``AV``): one fused
  FlashAttention-style kernel (Dao et al. 2022) that never writes the ``s×s`` scores to
  memory (its time is split evenly between the two products, which do equal FLOPs).
  When decoding, the keys and values are the KV cache: ``2·l·n_kv·d_head·ctx·b`` bytes
  per step (Pope et al. 2022), which is what makes long-context decode memory-bound.
  Prefill and training count causal attention as half the ``s×s`` work.
* ``norms``: two per layer plus the final one, with the residual additions: read and
  write ``T·h`` values (timed as the layer's element-wise kernels).

plus ``embedding`` (gather ``T`` rows), ``lm_head`` (``2·T_out·h·V`` FLOPs; in
inference only the last position of each sequence needs logits, ``T_out = b``) and
``kernel_overhead``, the fixed cost of every kernel (bound ``"overhead"``). Training
counts 3× the forward FLOPs and, approximately, 3× its traffic. A generic workload (a
CNN given by totals) is one roofline per pass.

MFU is computed from the result — model FLOPs (all operators, no recomputation, no
optimizer) over step time over the accelerator's dense peak — never taken from an input.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, NamedTuple

from mlsys.core.errors import InfeasibleError, ParameterError
from mlsys.core.formulas.gemm import gemm_time
from mlsys.core.formulas.memory import activation_bytes_per_layer, embedding_activation_bytes
from mlsys.core.formulas.overheads import KERNEL_OVERHEAD_S
from mlsys.core.formulas.transformer import kv_cache_bytes
from mlsys.core.precision import BYTES_PER_ELEMENT, normalize_precision
from mlsys.core.provenance import record
from mlsys.core.results import Result
from mlsys.core.solvers import _checks
from mlsys.core.solvers import serving as _serving
from mlsys.core.solvers._memo import identity_memo
from mlsys.core.solvers.efficiency import resolve_efficiency
from mlsys.core.solvers.memory import _bytes_text, default_framework_overhead

__all__ = ["SingleNodeModel", "SingleNodeResult"]

_PHASES = ("prefill", "decode", "training", "inference")
_CANONICAL = {name: name for name in BYTES_PER_ELEMENT}  # skip normalising canonical names
_ADAM_BYTES_PER_PARAM_STEP = 30.0  # 2+2 weights r/w, 2 grad r, 3 × (4+4) fp32 states r/w
_ADAM_FLOPS_PER_PARAM = 12.0  # a dozen elementwise operations per parameter update


class SingleNodeResult(Result):
    """Roofline estimate of one step of a model on one accelerator.

    Attributes
    ----------
    latency : Quantity [s]
        Time of one step: a prefill of ``batch_size`` sequences of ``seq_len`` tokens,
        one decode step of ``batch_size`` sequences, or one training step.
    tokens_per_second : Quantity [token/s]
        Tokens processed per second: ``batch_size × seq_len / latency`` for prefill and
        training, ``batch_size / latency`` for decode (samples per second for a generic
        workload).
    tokens_per_step : int
        Tokens (or samples) processed in one step.
    compute_time : Quantity [s]
        Sum over operators of FLOPs / achievable FLOP/s.
    memory_time : Quantity [s]
        Sum over operators of bytes / achievable bandwidth.
    total_flops : Quantity [FLOP]
        FLOPs executed in the step (optimizer update included).
    model_flops : Quantity [FLOP]
        FLOPs of the model's forward (and backward) math, the numerator of MFU.
    total_bytes : Quantity [byte]
        Memory traffic of the step.
    arithmetic_intensity : Quantity [FLOP/byte]
        ``total_flops / total_bytes``.
    ridge_point : Quantity [FLOP/byte]
        Intensity at which the accelerator's achievable roofs meet.
    bound : str
        ``"compute"`` or ``"memory"``: the roof of the operators that take most of the
        step time.
    compute_bound_fraction : float
        Fraction of the step time spent in compute-bound operators.
    operators : dict
        Per operator (``"qkv_proj"``, ``"attention_scores"``, ...): ``flops`` (FLOP),
        ``bytes`` (byte), ``time`` (s), ``intensity`` (FLOP/byte) and ``bound``, plain
        floats in SI units, summed over layers.
    mfu : float
        Model FLOPs utilisation: ``model_flops / latency / peak`` (dense peak at
        ``precision``). Attention is counted as the work a causal kernel does (half the
        ``s×s`` products); Megatron-LM and PaLM count the full square, which gives a
        slightly higher MFU for the same step time at long sequence lengths.
    achieved_flops : Quantity [FLOP/s]
        ``model_flops / latency``.
    memory_footprint : Quantity [byte]
        Bytes the step needs resident: weights, KV cache, activations (and for training
        gradients and optimizer state), plus ``framework_overhead``.
    weights_bytes, kv_cache_bytes, activation_bytes : Quantity [byte]
        Parts of ``memory_footprint``; training adds ``gradient_bytes`` and
        ``optimizer_bytes``.
    gradient_bytes, optimizer_bytes : Quantity [byte]
        Zero for inference.
    framework_overhead : Quantity [byte]
        Runtime buffers and allocator fragmentation,
        :func:`mlsys.core.solvers.memory.default_framework_overhead` (the same allowance
        :class:`~mlsys.core.solvers.memory.MemoryModel` uses).
    memory_capacity : Quantity [byte]
        Device memory of the accelerator.
    feasible : bool
        Whether ``memory_footprint`` fits in ``memory_capacity``.
    infeasibility_reason : str or None
        Why not, when it does not fit.
    phase, precision : str
        As solved.
    batch_size, seq_len, kv_cache_len : int
        As solved (``kv_cache_len``: cached tokens each decoded token attends to).
    compute_efficiency, memory_efficiency : float
        Fractions of peak FLOP/s and bandwidth assumed achievable.
    """

    _title: ClassVar[str] = "Single-node roofline"
    _units: ClassVar[dict[str, str | None]] = {
        "latency": "s",
        "tokens_per_second": "token/s",
        "tokens_per_step": None,
        "compute_time": "s",
        "memory_time": "s",
        "total_flops": "flop",
        "model_flops": "flop",
        "total_bytes": "byte",
        "arithmetic_intensity": "flop/byte",
        "ridge_point": "flop/byte",
        "bound": None,
        "compute_bound_fraction": None,
        "operators": None,
        "mfu": None,
        "achieved_flops": "flop/s",
        "memory_footprint": "byte",
        "weights_bytes": "byte",
        "kv_cache_bytes": "byte",
        "activation_bytes": "byte",
        "gradient_bytes": "byte",
        "optimizer_bytes": "byte",
        "framework_overhead": "byte",
        "memory_capacity": "byte",
        "feasible": None,
        "infeasibility_reason": None,
        "phase": None,
        "precision": None,
        "batch_size": None,
        "seq_len": None,
        "kv_cache_len": None,
        "compute_efficiency": None,
        "memory_efficiency": None,
    }
    _aliases: ClassVar[dict[str, str]] = {"throughput": "tokens_per_second"}


# ------------------------------------------------------------------ per-model constants
@identity_memo(objects=1)
def _shape(model: Any) -> tuple:
    """Per-model float constants, computed once per model object (the one bounded memo
    of :mod:`mlsys.core.solvers._memo`)."""
    if hasattr(model, "hidden"):
        h = float(model.hidden)
        a = float(model.heads)
        hd = float(model.head_dim)
        kv = float(model.kv_heads) * hd
        q = a * hd
        mats_up = 2.0 if model.gated_mlp else 1.0
        E = float(model.experts)
        lm = float(model.moe_layers)
        shape = (
            "transformer",
            float(model.layers),
            h,
            a,
            hd,
            q,
            kv,
            float(model.ffn_hidden),
            float(model.expert_ffn_hidden or model.ffn_hidden),
            mats_up,
            E,
            float(model.experts_per_token) if E > 1 else 1.0,
            float(model.shared_experts) if E > 1 else 0.0,
            lm,
            float(model.layers) - lm,
            float(model.vocab),
            float(model.total_params),
            float(model.seq_len),
        )
    else:
        shape = (
            "generic",
            float(model.params),
            float(model.flops_per_sample),
            float(getattr(model, "activation_bytes_per_sample", 0.0) or 0.0),
        )
    return shape


def _gb(x: float) -> str:
    return _bytes_text(x)


def _accelerator(hardware: Any) -> Any:
    if hasattr(hardware, "peak_flops_s"):  # the common case first: pydantic's
        return hardware  # attribute fallback makes a failed getattr slow
    acc = getattr(hardware, "accelerator", hardware)  # a Node or Fleet: one of its devices
    if not hasattr(acc, "peak_flops_s") or not hasattr(acc, "memory_bandwidth_Bps"):
        raise ParameterError("hardware", hardware, "an Accelerator (e.g. Hardware.H100)")
    return acc


class SingleNodeModel:
    """Roofline model of one step of a workload on one accelerator.

    Examples
    --------
    >>> from mlsys import Hardware, Models, SingleNodeModel
    >>> res = SingleNodeModel().solve(Models.Llama2_70B, Hardware.H100, phase="decode")
    >>> res.bound
    'memory'
    """

    def solve(
        self,
        model: Any,
        hardware: Any,
        batch_size: int = 1,
        seq_len: int | None = None,
        precision: str = "bf16",
        phase: str = "prefill",
        kv_cache_len: int | None = None,
        efficiency: Any = None,
        raise_errors: bool = False,
    ) -> SingleNodeResult:
        """Estimate one step of ``model`` on ``hardware``.

        Parameters
        ----------
        model : TransformerWorkload or Workload
            The network (a catalog entry such as ``Models.Llama2_70B`` or one you build).
        hardware : Accelerator
            The device (``Hardware.H100``); a Node uses one of its accelerators.
        batch_size : int
            Sequences (samples) per step.
        seq_len : int, optional
            Tokens per sequence in prefill and training; default the model's ``seq_len``.
            For decode it is the default context length when ``kv_cache_len`` is None.
        precision : str
            Precision of weights, activations and math (``"bf16"``, ``"fp8"`` ...).
        phase : {"prefill", "decode", "training"}
            What one step is. ``"inference"`` is accepted for generic workloads (a
            forward pass) and means ``"prefill"`` for transformers.
        kv_cache_len : int, optional
            Decode: tokens already cached that the new token attends to (default
            ``seq_len``). Prefill: a cached prefix before the new tokens (default 0).
        efficiency : None, float, pair or dict
            Achievable fractions of peak; ``None`` uses
            :func:`~mlsys.core.solvers.efficiency.default_efficiency`.
        raise_errors : bool
            Raise :class:`~mlsys.InfeasibleError` when the step does not fit in memory
            instead of returning ``feasible=False``.

        Returns
        -------
        SingleNodeResult

        Raises
        ------
        ParameterError
            For a non-positive or non-integral size, an unknown phase or precision, or a
            precision the accelerator has no peak figure for.
        """
        acc = _accelerator(hardware)
        b = _checks.positive_int("batch_size", batch_size)
        raise_errors = _checks.flag("raise_errors", raise_errors)
        phase_key = _checks.choice("phase", phase, _PHASES)
        prec = _CANONICAL.get(precision) if isinstance(precision, str) else None
        if prec is None:
            prec = normalize_precision(precision)
        peak = acc.peak_flops_s(prec)
        step = _step_work(
            model, acc, b, seq_len, prec, peak, phase, phase_key, kv_cache_len, efficiency
        )
        priced = _price_operators(step.ops, step.times, step.pc, step.pm)
        weights, kv_bytes, act, grads, opt = step.mem
        overhead, footprint, feasible, reason = _fit(acc, step.mem, raise_errors)
        latency, model_flops = priced.latency, priced.model_flops
        cb_frac = priced.t_compute_bound / latency if latency > 0 else 0.0
        result = SingleNodeResult(
            latency=latency,
            tokens_per_second=step.tokens / latency if latency > 0 else math.inf,
            tokens_per_step=step.tokens,
            compute_time=priced.t_compute,
            memory_time=priced.t_memory,
            total_flops=priced.flops,
            model_flops=model_flops,
            total_bytes=priced.nbytes,
            arithmetic_intensity=priced.flops / priced.nbytes if priced.nbytes else math.inf,
            ridge_point=step.pc / step.pm,
            bound="compute" if cb_frac >= 0.5 else "memory",
            compute_bound_fraction=cb_frac,
            operators=priced.operators,
            mfu=model_flops / latency / peak if latency > 0 else 0.0,
            achieved_flops=model_flops / latency if latency > 0 else 0.0,
            memory_footprint=footprint,
            weights_bytes=weights,
            kv_cache_bytes=kv_bytes,
            activation_bytes=act,
            gradient_bytes=grads,
            optimizer_bytes=opt,
            framework_overhead=overhead,
            memory_capacity=acc.memory_bytes,
            feasible=feasible,
            infeasibility_reason=reason,
            phase=step.phase,
            precision=prec,
            batch_size=b,
            seq_len=step.seq_len,
            kv_cache_len=step.kv_len,
            compute_efficiency=step.eta_c,
            memory_efficiency=step.eta_m,
        )
        return record(
            result, self, model=model, hardware=hardware, batch_size=batch_size,
            seq_len=seq_len, phase=phase_key, precision=precision,
        )  # fmt: skip


class _StepWork(NamedTuple):
    """What one step does and the rates it runs at: the operators' flops and bytes,
    the memory it holds, the kernel model's times (None for a generic workload), and
    the achieved compute and memory rates (flop/s, B/s) with their fractions of peak."""

    phase: str
    seq_len: int
    kv_len: int
    ops: Any
    mem: tuple[float, float, float, float, float]
    tokens: float
    times: dict[str, float] | None
    pc: float
    pm: float
    eta_c: float
    eta_m: float


def _step_work(
    model: Any,
    acc: Any,
    b: int,
    seq_len: int | None,
    prec: str,
    peak: float,
    phase: str,
    phase_key: str,
    kv_cache_len: int | None,
    efficiency: Any,
) -> _StepWork:
    """The operators, memory and rates of one step of ``model`` on ``acc`` (``peak``
    its flop/s at ``prec``): the
    generic roofline for a :class:`~mlsys.Workload`, ServingModel's plan and kernel
    formulas for a transformer (see :func:`_kernel_times`)."""
    e = BYTES_PER_ELEMENT[prec]
    bw = acc.memory_bandwidth_Bps
    eta_c, eta_m = resolve_efficiency(efficiency, acc, prec)
    shape = _shape(model)
    pc, pm = peak * eta_c, bw * eta_m
    if shape[0] == "generic":
        if phase_key == "decode":
            raise ParameterError(
                "phase", phase, "'inference' or 'training' for a non-transformer Workload"
            )
        s = 1 if seq_len is None else _checks.positive_int("seq_len", seq_len)
        ops, mem = _generic_ops(shape, b, e, phase_key == "training")
        return _StepWork(phase_key, s, 0, ops, mem, b, None, pc, pm, eta_c, eta_m)
    s = int(shape[17]) if seq_len is None else _checks.positive_int("seq_len", seq_len)
    if phase_key == "inference":
        phase_key = "prefill"
    if kv_cache_len is None:
        kv_len = s if phase_key == "decode" else 0
    else:
        kv_len = _checks.nonneg_int("kv_cache_len", kv_cache_len)
    plan = _serving_plan(model, acc, prec, efficiency)
    eta_c, eta_m = plan.gemm_flops / plan.peak_raw, plan.bw / plan.bw_raw
    pc, pm = plan.gemm_flops, plan.bw
    # training stores everything at ``prec``; an inference engine uses serving's
    # weight, activation and KV-cache bytes
    inference_widths = (plan.w_bytes, plan.a_bytes, plan.kv_bytes)
    widths = (e, e, e) if phase_key == "training" else inference_widths
    ops, mem, tokens = _transformer_ops(shape, b, s, kv_len, widths, phase_key)
    times = _kernel_times(plan, b, s, kv_len, phase_key)
    return _StepWork(phase_key, s, kv_len, ops, mem, tokens, times, pc, pm, eta_c, eta_m)


class _Priced(NamedTuple):
    """The operators of a step priced: each one's row, and the sums (s, flop, B)."""

    operators: dict[str, dict[str, Any]]
    latency: float
    t_compute: float
    t_memory: float
    t_compute_bound: float
    flops: float
    nbytes: float
    model_flops: float


def _price_operators(ops: Any, times: dict[str, float] | None, pc: float, pm: float) -> _Priced:
    """Each operator's time and bound (roofline, Williams et al. 2009): the kernel
    model's time when ``times`` has it, else the larger of flops / ``pc`` and bytes /
    ``pm``; plus the kernels' fixed overhead for a transformer step."""
    operators: dict[str, dict[str, Any]] = {}
    latency = t_compute = t_memory = flops_all = bytes_all = model_flops = 0.0
    t_compute_bound = 0.0
    for name, flops, nbytes, is_model in ops:
        tc = flops / pc
        tm = nbytes / pm
        bound = "compute" if tc >= tm else "memory"
        # the time is the kernel model's (ServingModel's per-layer formulas) for a
        # transformer; the roofline of the operator's totals says what bounds it
        t = times.get(name) if times is not None else None
        if t is None:  # a generic workload's operators and the optimizer update
            t = tc if tc >= tm else tm
        if bound == "compute":
            t_compute_bound += t
        latency += t
        t_compute += tc
        t_memory += tm
        flops_all += flops
        bytes_all += nbytes
        if is_model:
            model_flops += flops
        operators[name] = {
            "flops": flops,
            "bytes": nbytes,
            "time": t,
            "intensity": flops / nbytes if nbytes else math.inf,
            "bound": bound,
        }
    if times is not None:
        # every kernel's fixed launch and synchronisation cost, bound by neither roof
        t = times["kernel_overhead"]
        latency += t
        operators["kernel_overhead"] = {
            "flops": 0.0,
            "bytes": 0.0,
            "time": t,
            "intensity": 0.0,
            "bound": "overhead",
        }
    return _Priced(
        operators, latency, t_compute, t_memory, t_compute_bound, flops_all, bytes_all,
        model_flops,
    )  # fmt: skip


def _fit(
    acc: Any, mem: tuple[float, float, float, float, float], raise_errors: bool
) -> tuple[float, float, bool, str | None]:
    """Framework overhead, footprint (B), whether it fits ``acc`` and why not;
    raises :class:`~mlsys.InfeasibleError` instead when ``raise_errors``."""
    weights, kv_bytes, act, grads, opt = mem
    allocated = weights + kv_bytes + act + grads + opt
    # inference (no gradients): weights and KV cache are allocated once and do not
    # fragment; training's tensors come and go every step
    overhead = default_framework_overhead(acc, allocated if grads + opt > 0.0 else act)
    footprint = allocated + overhead
    capacity = acc.memory_bytes
    feasible = footprint <= capacity
    reason = None
    if not feasible:
        reason = (
            f"needs {_gb(footprint)} (weights {_gb(weights)}, KV cache {_gb(kv_bytes)}, "
            f"activations {_gb(act)}, gradients + optimizer {_gb(grads + opt)}, "
            f"framework {_gb(overhead)}) but {acc.label} has {_gb(capacity)}"
        )
        if raise_errors:
            raise InfeasibleError(reason)
    return overhead, footprint, feasible, reason


def _serving_plan(model: Any, acc: Any, precision: str, efficiency: Any) -> Any:
    """ServingModel's plan of ``model`` on one ``acc`` (no tensor or pipeline
    parallelism): the rates, byte widths and kernel memo both solvers price a step with."""
    return _serving._plan(model, acc, precision, None, None, 1, 1, efficiency, None, None)


def _kernel_times(plan: Any, b: int, s: int, kv_len: int, phase: str) -> dict[str, float]:
    """Seconds of each operator of one step, summed over layers, from the per-layer
    kernel formulas exactly as :class:`~mlsys.core.solvers.serving.ServingModel` prices
    a prefill pass or a decode step (embedding gather, layers, LM head); a training
    step runs every layer's forward and backward kernels and the LM head's three GEMMs,
    then the optimizer's roofline (filled in by the caller). Remembered in the plan's
    memo, as ServingModel remembers its kernel times: a book asks again."""
    key = ("single-node", phase, b, s, kv_len)
    hit = plan.priced.get(key)
    if hit is None:
        if len(plan.priced) > _serving._PRICED_MAX:
            plan.priced.clear()
        hit = plan.priced[key] = _price_kernels(plan, b, s, kv_len, phase)
    return hit


def _price_kernels(plan: Any, b: int, s: int, kv_len: int, phase: str) -> dict[str, float]:
    shape = plan.shape
    L = shape.layers
    if phase == "decode":
        # one new token per sequence, attending to the cache and itself
        layer = _serving._layer_kernels(plan, float(b), float(b), 1.0, kv_len + 1.0)
        head = _serving._lm_head(plan, float(b))
        embed = _serving._embedding(plan, float(b), 1.0)
    elif phase == "prefill":
        T = float(b * s)
        layer = _serving._layer_kernels(plan, T, float(b), float(s), float(kv_len + s))
        head = _serving._lm_head(plan, float(b))  # logits of the last positions only
        embed = _serving._embedding(plan, T, float(s))
    else:  # training: forward and backward of every kernel, logits of every position
        T = float(b * s)
        fwd = _serving._layer_kernels(plan, T, float(b), float(s), float(s), "forward")
        bwd = _serving._layer_kernels(plan, T, float(b), float(s), float(s), "backward")
        layer = {name: fwd[name] + bwd[name] for name in fwd}
        V, h = shape.vocab, shape.hidden
        rate, bw, e = plan.gemm_flops, plan.bw, plan.a_bytes
        head = (
            _serving._lm_head(plan, T)
            + gemm_time(T, h, V, rate, bw, e, plan.sm_count)  # gradient of the input
            + gemm_time(h, V, T, rate, bw, e, plan.sm_count)  # gradient of the weight
        )
        # the gather forward; backward a scatter-add of the gradient rows (read the
        # gradient and the table rows, write them): three times the traffic, two kernels
        gather = _serving._embedding(plan, T, float(s)) - KERNEL_OVERHEAD_S
        embed = 3.0 * gather + 2.0 * KERNEL_OVERHEAD_S
    half_attention = 0.5 * L * layer["attention"]  # one fused kernel, two equal products
    return {
        "embedding": embed,
        "qkv_proj": L * layer["qkv_proj"],
        "attention_scores": half_attention,
        "attention_context": half_attention,
        "out_proj": L * layer["out_proj"],
        "mlp_up": L * layer["mlp_up"],
        "mlp_down": L * layer["mlp_down"],
        "norms": L * layer["elementwise"],
        "lm_head": head,
        "kernel_overhead": L * layer["kernel_overhead"],
    }


def _generic_ops(shape: tuple, b: int, e: float, training: bool) -> tuple[list, tuple]:
    """One fused 'forward' operator (and backward/optimizer) for a workload given by totals."""
    _, params, flops_sample, act_sample = shape
    # activation_bytes_per_sample is stated at 16-bit precision: scale to e bytes.
    act = act_sample * b * (e / 2.0)
    fwd_flops = flops_sample * b
    fwd_bytes = params * e + act
    if not training:
        return [("forward", fwd_flops, fwd_bytes, True)], (params * e, 0.0, act, 0.0, 0.0)
    ops = [
        ("forward", fwd_flops, fwd_bytes, True),
        ("backward", 2.0 * fwd_flops, 2.0 * fwd_bytes, True),
        ("optimizer", _ADAM_FLOPS_PER_PARAM * params, _ADAM_BYTES_PER_PARAM_STEP * params, False),
    ]
    return ops, (params * e, 0.0, act, params * e, 12.0 * params)


def _transformer_ops(
    shape: tuple, b: int, s: int, kv_len: int, widths: tuple, phase: str
) -> tuple[list, tuple, int]:
    """Per-operator FLOPs and HBM bytes (the roofline explanation) and the memory
    footprint; ``widths`` are the bytes of a weight, an activation and a cached key or
    value element."""
    (_, L, h, a, _hd, q, kv, f, fe, mats_up, E, k, S, Lm, Ld, V, P, _s0) = shape
    ew, e, ekv = widths
    decode = phase == "decode"
    training = phase == "training"
    if decode:
        T = float(b)  # one new token per sequence
        ctx = kv_len + 1.0  # keys each new token attends to (cache plus itself)
        kv_read = b * ctx * kv
        t_out = float(b)
    else:
        T = float(b * s)
        # causal: token i of the new s sees kv_len cached keys and i new ones
        ctx = kv_len + (s + 1) / 2.0
        kv_read = b * (kv_len + s) * kv
        t_out = T if training else float(b)

    # Distinct experts T tokens touch under uniform top-k routing.
    touched = E * (1.0 - (1.0 - k / E) ** T) if E > 1 else 1.0

    # weights read per step (elements), layer-summed
    w_qkv = L * h * (q + 2.0 * kv)
    w_o = L * q * h
    w_up = Ld * h * f * mats_up + Lm * (h * fe * mats_up * (touched + S) + h * E)
    w_down = Ld * f * h + Lm * fe * h * (touched + S)
    w_head = V * h

    # FLOPs (forward)
    f_qkv = 2.0 * T * h * (q + 2.0 * kv) * L
    f_scores = 2.0 * T * ctx * q * L  # QKᵀ: per query, ctx keys × q width
    f_context = f_scores  # AV: same shape
    f_o = 2.0 * T * q * h * L
    f_up = 2.0 * T * h * mats_up * (Ld * f + Lm * fe * (k + S)) + 2.0 * T * h * E * Lm * (E > 1)
    f_down = 2.0 * T * h * (Ld * f + Lm * fe * (k + S))
    n_norms = 2.0 * L + 1.0
    f_norm = 8.0 * T * h * n_norms  # norm (~5 FLOP/element) and residual add
    f_head = 2.0 * t_out * h * V

    # bytes (forward): weights once, activations in and out
    f_eff = Ld * f + Lm * fe * (k + S)  # layer-summed MLP width a token passes through
    b_qkv = ew * w_qkv + e * (L * T * h + L * T * (q + 2.0 * kv))
    b_scores = e * L * T * q + ekv * L * kv_read
    b_context = ekv * L * kv_read + e * L * T * q
    b_o = ew * w_o + e * (L * T * q + L * T * h)
    b_up = ew * w_up + e * (L * T * h + T * f_eff * (mats_up + 1.0))  # gate/up in, act out
    b_down = ew * w_down + e * (T * f_eff + L * T * h)
    b_norm = e * n_norms * 3.0 * T * h  # read x and residual, write y
    b_embed = e * 2.0 * T * h
    # the output head is not quantised below the activations' width (as in serving)
    b_head = max(ew, e) * w_head + e * (t_out * h + t_out * V)

    ops = [
        ("embedding", 0.0, b_embed, True),
        ("qkv_proj", f_qkv, b_qkv, True),
        ("attention_scores", f_scores, b_scores, True),
        ("attention_context", f_context, b_context, True),
        ("out_proj", f_o, b_o, True),
        ("mlp_up", f_up, b_up, True),
        ("mlp_down", f_down, b_down, True),
        ("norms", f_norm, b_norm, True),
        ("lm_head", f_head, b_head, True),
    ]
    weights = P * ew + w_head * (max(ew, e) - ew)  # the head is stored unquantised
    kv_bytes = (
        0.0
        if training
        else kv_cache_bytes(L, kv / _hd, _hd, kv_len + (1.0 if decode else float(s)), float(b), ekv)
    )
    # transient working set of one layer (inference) or stored activations (training)
    if training:
        # Korthikanti et al. (2022) Table 2, no parallelism, scores stored, generalised to
        # the layer's shape; plus the embedding and output-layer buffers of their Sec. 4.3
        per_layer = activation_bytes_per_layer(
            float(s), float(b), h, a, 1.0, False, "none", e,
            ffn_hidden=f_eff / L, kv_heads=kv / _hd, gated_mlp=mats_up == 2.0,
        )  # fmt: skip
        act = L * per_layer + embedding_activation_bytes(
            float(s), float(b), h, V, 1.0, 1.0, inflight_microbatches=1.0
        )
        ops = [(n, 3.0 * fl, 3.0 * by, True) for n, fl, by, _ in ops]
        ops.append(("optimizer", _ADAM_FLOPS_PER_PARAM * P, _ADAM_BYTES_PER_PARAM_STEP * P, False))
        return ops, (weights, 0.0, act, P * e, 12.0 * P), int(T)
    act = e * T * (2.0 * h + (q + 2.0 * kv) + mats_up * max(f, fe * (k + S))) + 4.0 * t_out * V
    return ops, (weights, kv_bytes, act, 0.0, 0.0), int(T)
