"""What a fleet does with a training job: step time, MFU and memory of a parallel layout.

:class:`DistributedModel` prices one layout (data, tensor, pipeline and expert
parallelism, micro-batching, interleaving, ZeRO, recomputation, sequence parallelism)
of a transformer on a :class:`~mlsys.core.types.Fleet`. The arithmetic is the private
vectorised model of :mod:`mlsys.core.solvers._layout`, which
:class:`~mlsys.core.solvers.search.ParallelismSearch` evaluates over every layout at
once, so a solve and a search can never disagree.

Conventions
-----------
* ``batch_size`` is the **global** batch in sequences. ``dp = N/(tp·pp·ep)``; the token
  batch is split over ``dp·ep`` ranks (expert parallelism is carved out of data
  parallelism, as in Megatron-Core and DeepSpeed-MoE: attention and dense layers are
  data-parallel over ``dp·ep`` ranks, experts over ``dp``), so the micro-batch is
  ``batch_size/(dp·ep·microbatch_count)`` sequences (``batch_size/(dp·m)`` when
  ``ep = 1``).
* Ranks are ordered ``tp → ep → dp → pp`` (Megatron-Core): a tensor-parallel group of
  at most a node's accelerators rides NVLink, anything larger the scale-out fabric.
* Gradients are stored and reduced at ``grad_dtype``: by default
  :func:`mlsys.core.precision.default_grad_dtype` — fp32 for bf16 and fp8 compute
  (Megatron-LM forces fp32 gradient accumulation and all-reduce for bf16) and fp16 for
  fp16. FP8 compute therefore never shrinks the gradient all-reduce. Weights and
  activations are 16-bit below 32-bit compute (FP8 casts are made per matmul). These
  storage rules are the ones :class:`~mlsys.core.solvers.memory.MemoryModel` uses, so
  the two solvers report the same memory for the same layout.
* MFU and HFU are computed from the result: model FLOPs (Megatron-LM / Korthikanti
  et al. convention, attention counted over all ``s`` keys) over step time over the
  fleet's dense peak; HFU adds the recomputed FLOPs.
"""

from __future__ import annotations

from typing import Any, ClassVar

from mlsys.core.errors import InfeasibleError, ParameterError
from mlsys.core.formulas.memory import optimizer_state_bytes_per_param
from mlsys.core.formulas.transformer import training_flops_per_token
from mlsys.core.precision import normalize_precision
from mlsys.core.results import Result
from mlsys.core.solvers import _checks, _layout
from mlsys.core.solvers.efficiency import resolve_efficiency
from mlsys.core.solvers.memory import _inner_activation_elements, _training_storage_bytes
from mlsys.core.types import Fleet, TransformerWorkload

__all__ = ["DistributedModel", "DistributedResult", "DistributedMemory", "build_problem"]

_NARROW = {"fp8", "int8", "fp6", "fp4", "int4"}


class DistributedMemory(Result):
    """Memory per accelerator of a training layout.

    Attributes
    ----------
    weights : Quantity [byte]
        Parameters held (16-bit, or 32-bit in fp32 training; ZeRO-3 shards them), as
        in :class:`~mlsys.core.solvers.memory.MemoryModel`.
    gradients : Quantity [byte]
        Gradient buffer at ``grad_dtype`` (ZeRO-2 and 3 shard it).
    optimizer : Quantity [byte]
        Optimizer state: fp32 master weights, Adam moments (ZeRO-1+ shard it).
    activations : Quantity [byte]
        Stored activations of the busiest (first) pipeline stage: Korthikanti et al.
        (2022) Table 2 per layer × layers on the device × in-flight micro-batches
        (``min(p, m)`` for 1F1B, ``m`` for GPipe) × the interleaving factor
        ``1 + (p − 1)/(p·v)``, plus embedding and logits buffers.
    total : Quantity [byte]
        Sum of the above.
    capacity : Quantity [byte]
        Memory of one accelerator.
    """

    _units: ClassVar[dict[str, str | None]] = {
        "weights": "byte",
        "gradients": "byte",
        "optimizer": "byte",
        "activations": "byte",
        "total": "byte",
        "capacity": "byte",
    }


class DistributedResult(Result):
    """One training step of a model on a fleet under a parallel layout.

    Attributes
    ----------
    step_time : Quantity [s]
        Wall time of one optimizer step (global batch).
    compute_time : Quantity [s]
        Time the busiest device computes: matmuls, attention, element-wise kernels, the
        LM head and the optimizer update.
    tp_communication_time : Quantity [s]
        Tensor-parallel collectives on the critical path (not overlapped).
    ep_communication_time : Quantity [s]
        Expert-parallel all-to-alls.
    pp_communication_time : Quantity [s]
        Pipeline point-to-point sends.
    pipeline_bubble_time : Quantity [s]
        Idle fill-and-drain time of the pipeline.
    dp_communication_time : Quantity [s]
        Data-parallel (and ZeRO) communication left exposed after overlap.
    dp_communication_total : Quantity [s]
        All data-parallel communication, hidden or not.
    overlap_fraction : float
        Share of ``dp_communication_total`` hidden under compute.
    optimizer_time : Quantity [s]
        The optimizer update (part of ``compute_time``).
    bubble_fraction : float
        ``pipeline_bubble_time / step_time`` (share of the total).
    scaling_efficiency : float
        ``compute_time / step_time``: the share of the step spent computing; the rest
        is communication and bubbles that a single, infinitely large device would not
        pay.
    mfu : float
        Model FLOPs utilisation: model FLOPs / step time / (accelerators × dense peak).
    hfu : float
        Hardware FLOPs utilisation: as MFU with recomputed FLOPs counted.
    achieved_flops_per_accelerator : Quantity [FLOP/s]
        Model FLOPs per second per accelerator.
    tokens_per_second : Quantity [token/s]
        Global batch × sequence length / step time.
    model_flops : Quantity [FLOP]
        Model FLOPs of one step.
    microbatch_size : float
        Sequences per micro-batch.
    layers_per_device : float
        Transformer layers on the busiest device.
    memory_per_accelerator : DistributedMemory
        Weights, gradients, optimizer state, activations, total, capacity.
    feasible : bool
        Whether the layout fits in memory.
    infeasibility_reason : str or None
        Why not.
    parallelism : dict
        ``{"dp", "tp", "pp", "ep"}`` sizes.
    notes : tuple of str
        Assumptions worth knowing for this configuration.
    """

    _units: ClassVar[dict[str, str | None]] = {
        "step_time": "s",
        "compute_time": "s",
        "tp_communication_time": "s",
        "ep_communication_time": "s",
        "pp_communication_time": "s",
        "pipeline_bubble_time": "s",
        "dp_communication_time": "s",
        "dp_communication_total": "s",
        "optimizer_time": "s",
        "overlap_fraction": None,
        "bubble_fraction": None,
        "scaling_efficiency": None,
        "mfu": None,
        "hfu": None,
        "achieved_flops_per_accelerator": "flop/s",
        "tokens_per_second": "token/s",
        "model_flops": "flop",
        "microbatch_size": None,
        "layers_per_device": None,
        "memory_per_accelerator": None,
        "feasible": None,
        "infeasibility_reason": None,
        "parallelism": None,
        "notes": None,
    }
    _aliases: ClassVar[dict[str, str]] = {
        "communication_latency": "dp_communication_time",
        "step_latency_total": "step_time",
        "effective_throughput": "tokens_per_second",
        "pipeline_bubble_latency": "pipeline_bubble_time",
    }


# -- building the layout-independent problem -------------------------------------------------
_CACHE: dict[tuple, tuple[Any, Any, _layout.Problem]] = {}


def build_problem(
    model: Any,
    fleet: Any,
    batch_size: int,
    precision: str = "bf16",
    efficiency: Any = None,
    seq_len: int | None = None,
    grad_dtype: str | None = None,
    flash_attention: bool | None = None,
) -> _layout.Problem:
    """Reduce a model, fleet and precision to the floats the layout model needs.

    Parameters
    ----------
    model : TransformerWorkload
        The network.
    fleet : Fleet
        The cluster.
    batch_size : int
        Global batch in sequences.
    precision : str
        Matmul precision (``"bf16"``, ``"fp16"``, ``"fp8"``, ``"fp32"`` ...).
    efficiency : None, float, pair or dict
        See :func:`mlsys.core.solvers.efficiency.resolve_efficiency`.
    seq_len : int, optional
        Tokens per sequence (default the model's).
    grad_dtype : str, optional
        Precision of the gradient buffers and their reduction (default
        :func:`mlsys.core.precision.default_grad_dtype`: fp16 for fp16, else fp32).
    flash_attention : bool, optional
        Fused attention that never writes the scores (default True).

    Returns
    -------
    Problem
        Cached per (model, fleet, arguments).
    """
    key = (
        id(model),
        id(fleet),
        batch_size,
        precision,
        repr(efficiency),
        seq_len,
        grad_dtype,
        flash_attention,
    )
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is model and hit[1] is fleet:
        return hit[2]
    if not isinstance(model, TransformerWorkload):
        raise ParameterError(
            "model",
            getattr(model, "name", model),
            "a TransformerWorkload",
            "DistributedModel prices transformer layouts (tensor/pipeline/expert parallel).",
        )
    if not isinstance(fleet, Fleet):
        raise ParameterError("fleet", fleet, "a Fleet(node=..., count=..., fabric=...)")
    prec = normalize_precision(precision)
    acc = fleet.node.accelerator
    peak = acc.peak_flops_s(prec)
    peak_attn = peak
    if prec in _NARROW:
        for wide in ("bf16", "fp16"):
            if wide in acc.precisions:
                peak_attn = acc.peak_flops_s(wide)
                break
    w_bytes, g_bytes, e_act, master = _training_storage_bytes(prec, grad_dtype)
    opt_bytes = optimizer_state_bytes_per_param("adam", master_weights=master)
    eta_c, eta_m = resolve_efficiency(efficiency, acc, prec)
    s = int(seq_len or model.seq_len)
    bd = model.param_breakdown
    scale = model.total_params / bd["total"]  # honour a given total
    L = float(model.layers)
    d_attn = float(model.heads * model.head_dim)
    n_layers_matmul = float(bd["layers_matmul_active"]) * scale
    n_head = float(model.vocab * model.hidden)
    model_fpt = float(training_flops_per_token(n_layers_matmul, n_head, L, s, d_attn))
    sel_fpt = (
        float(
            training_flops_per_token(n_layers_matmul, n_head, L, s, d_attn, recompute="selective")
        )
        - model_fpt
    )
    full_fpt = (
        float(training_flops_per_token(n_layers_matmul, n_head, L, s, d_attn, recompute="full"))
        - model_fpt
    )
    params_expert = float(bd["mlp_experts"]) * scale if model.is_moe else 0.0
    intra, inter = fleet.node.intra_fabric, fleet.fabric
    eff_up = _layout.NETWORK_EFFICIENCY.get(intra.kind, 0.8)
    eff_out = _layout.NETWORK_EFFICIENCY.get(inter.kind, 0.9)
    problem = _layout.Problem(
        L=L,
        h=float(model.hidden),
        a=float(model.heads),
        kv=float(model.kv_heads),
        d_attn=d_attn,
        ffn=float(model.ffn_hidden),
        V=float(model.vocab),
        s=float(s),
        gated=1.0 if model.gated_mlp else 0.0,
        act_inner=_inner_activation_elements(model),
        moe_layers=float(model.moe_layers),
        experts=float(model.experts),
        topk=float(model.experts_per_token) if model.is_moe else 1.0,
        n_layer=n_layers_matmul / L,
        n_head=n_head,
        params_dense=model.total_params - params_expert,
        params_expert=params_expert,
        model_flops_per_token=model_fpt,
        selective_flops_per_token=sel_fpt,
        full_flops_per_token=full_fpt,
        peak=peak,
        peak_attn=peak_attn,
        hbm_bw=acc.memory_bandwidth_Bps,
        eta_c=eta_c,
        eta_m=eta_m,
        capacity=acc.memory_bytes,
        g=float(fleet.node.accelerators_per_node),
        nodes=float(fleet.count),
        total=float(fleet.total_accelerators),
        intra_bw=intra.effective_bandwidth_Bps * eff_up,
        intra_lat=intra.latency_s,
        inter_bw=inter.effective_bandwidth_Bps * eff_out,
        inter_lat=inter.latency_s,
        e_act=e_act,
        w_bytes=w_bytes,
        g_bytes=g_bytes,
        opt_bytes=opt_bytes,
        batch=float(batch_size),
        flash=True if flash_attention is None else bool(flash_attention),
    )
    if len(_CACHE) > 256:
        _CACHE.clear()
    _CACHE[key] = (model, fleet, problem)
    return problem


def _check_layout(
    model: TransformerWorkload,
    fleet: Fleet,
    batch_size: int,
    tp: int,
    pp: int,
    ep: int,
    v: int,
    m: int,
    zero_stage: Any,
    schedule: str,
) -> int:
    n = fleet.total_accelerators
    if n % (tp * pp * ep):
        raise ParameterError(
            "tp_size*pp_size*ep_size", tp * pp * ep, f"a divisor of the fleet's {n} accelerators"
        )
    if model.heads % tp:
        raise ParameterError("tp_size", tp, f"a divisor of the model's {model.heads} heads")
    if pp > model.layers:
        raise ParameterError("pp_size", pp, f"at most the model's {model.layers} layers")
    if ep > 1 and (not model.is_moe or model.experts % ep):
        allowed = f"a divisor of the model's {model.experts} experts" if model.is_moe else "1"
        raise ParameterError("ep_size", ep, allowed + " (expert parallelism needs an MoE)")
    if v > 1 and pp == 1:
        raise ParameterError("v_stages", v, "1 when pp_size is 1 (interleaving needs a pipeline)")
    if schedule == "gpipe" and v > 1:
        raise ParameterError("v_stages", v, "1 with schedule='gpipe'")
    if zero_stage not in (0, 1, 2, 3) or isinstance(zero_stage, bool):
        raise ParameterError("zero_stage", zero_stage, "0, 1, 2 or 3")
    dp = n // (tp * pp * ep)
    _checks.microbatch_size(batch_size, dp * ep, m, "dp·ep")
    return dp


class DistributedModel:
    """Step time, utilisation and memory of a parallel training layout on a fleet.

    Examples
    --------
    >>> from mlsys import Models, Nodes, Fabrics, Fleet
    >>> fleet = Fleet(node=Nodes.DGX_A100, count=8, fabric=Fabrics.IB_HDR)
    >>> res = DistributedModel().solve(Models.GPT3_175B, fleet, batch_size=64,
    ...     tp_size=8, pp_size=8, microbatch_count=64, recompute="selective",
    ...     sequence_parallel=True)
    >>> res.feasible
    True
    """

    def solve(
        self,
        model: Any,
        fleet: Any,
        batch_size: int = 1,
        precision: str = "bf16",
        efficiency: Any = None,
        tp_size: int = 1,
        pp_size: int = 1,
        ep_size: int = 1,
        v_stages: int = 1,
        microbatch_count: int = 1,
        topology_override: str | None = None,
        seq_len: int | None = None,
        zero_stage: int = 0,
        recompute: str = "none",
        sequence_parallel: bool = False,
        overlap: bool = True,
        grad_dtype: str | None = None,
        raise_errors: bool = False,
        *,
        schedule: str = "1f1b",
        flash_attention: bool | None = None,
    ) -> DistributedResult:
        """Price one training step of ``model`` on ``fleet`` under a layout.

        Parameters
        ----------
        model : TransformerWorkload
            The network.
        fleet : Fleet
            The cluster (nodes × accelerators, intra-node and scale-out fabrics).
        batch_size : int
            Global batch, in sequences.
        precision : str
            Matmul precision (``"bf16"``, ``"fp16"``, ``"fp8"``, ``"fp32"`` ...).
        efficiency : None, float, (float, float) or dict
            Achievable fractions of peak compute (matmuls) and memory bandwidth; None
            uses :func:`mlsys.core.solvers.efficiency.default_efficiency` (0.75 / 0.85
            on GPUs for bf16). Link efficiencies are
            :data:`mlsys.core.solvers._layout.NETWORK_EFFICIENCY`.
        tp_size, pp_size, ep_size : int
            Tensor, pipeline and expert-parallel sizes; ``dp = N/(tp·pp·ep)``.
        v_stages : int
            Model chunks per device (interleaved 1F1B when > 1).
        microbatch_count : int
            Micro-batches per step on each data-parallel replica (gradient accumulation
            steps); must divide the per-replica batch.
        topology_override : {None, "ring", "tree", "hierarchical"}
            Algorithm of the data-parallel all-reduce; None picks hierarchical when the
            group spans nodes.
        seq_len : int, optional
            Tokens per sequence (default the model's).
        zero_stage : {0, 1, 2, 3}
            ZeRO partitioning over the data-parallel group.
        recompute : {"none", "selective", "full"}
            Activation recomputation.
        sequence_parallel : bool
            Megatron sequence parallelism (with ``tp_size > 1``).
        overlap : bool
            Overlap data-parallel communication with the backward pass.
        grad_dtype : str, optional
            Precision of the gradient buffers and their reduction (default
            :func:`mlsys.core.precision.default_grad_dtype`: fp32, fp16 for fp16
            training).
        raise_errors : bool
            Raise :class:`InfeasibleError` instead of returning ``feasible=False``.
        schedule : {"1f1b", "interleaved", "gpipe"}
            Pipeline schedule (``"interleaved"`` is 1F1B with ``v_stages > 1``).
        flash_attention : bool, optional
            Fused attention that never writes the ``s×s`` scores (default True). Pass
            False for 2021–22 Megatron-LM, whose softmax outputs were materialised.

        Returns
        -------
        DistributedResult

        Raises
        ------
        ParameterError
            For sizes that do not divide the fleet, heads or batch, and unknown names.
        InfeasibleError
            With ``raise_errors=True`` when the layout does not fit in memory.
        """
        tp = _checks.positive_int("tp_size", tp_size)
        pp = _checks.positive_int("pp_size", pp_size)
        ep = _checks.positive_int("ep_size", ep_size)
        v = _checks.positive_int("v_stages", v_stages)
        m = _checks.positive_int("microbatch_count", microbatch_count)
        batch = _checks.positive_int("batch_size", batch_size)
        if seq_len is not None:
            seq_len = _checks.positive_int("seq_len", seq_len)
        rc = _layout.RECOMPUTE_CODES.get(str(recompute).lower())
        if rc is None:
            raise ParameterError("recompute", recompute, "'none', 'selective' or 'full'")
        topo_key = topology_override.lower() if isinstance(topology_override, str) else None
        if topology_override is not None and topo_key not in _layout.TOPOLOGY_CODES:
            raise ParameterError(
                "topology_override", topology_override, "None, 'ring', 'tree' or 'hierarchical'"
            )
        sched = str(schedule).lower().replace("-", "").replace("_", "")
        if sched not in _layout.SCHEDULE_CODES:
            raise ParameterError("schedule", schedule, "'1f1b', 'interleaved' or 'gpipe'")
        P = build_problem(
            model, fleet, batch, precision, efficiency, seq_len, grad_dtype, flash_attention
        )
        dp = _check_layout(model, fleet, batch, tp, pp, ep, v, m, zero_stage, sched)
        out = _layout.evaluate(
            P,
            float(tp),
            float(pp),
            float(ep),
            float(dp),
            float(m),
            float(v),
            float(zero_stage),
            float(rc),
            1.0 if (sequence_parallel and tp > 1) else 0.0,
            _layout.SCHEDULE_CODES[sched],
            _layout.TOPOLOGY_CODES[topo_key],
            bool(overlap),
        )
        notes = []
        if model.layers % (pp * v):
            notes.append(
                f"{model.layers} layers do not divide into pp·v = {pp * v} chunks: the "
                f"heaviest device holds {int(out['layers_per_device'])} layers and sets the pace"
            )
        if sequence_parallel and tp == 1:
            notes.append("sequence_parallel has no effect with tp_size = 1")
        if out["tp_nodes"] > 1:
            notes.append(
                f"the tensor-parallel group of {tp} spans {int(out['tp_nodes'])} nodes: its "
                "collectives ride the scale-out fabric"
            )
        if not P.flash:
            notes.append("attention scores are materialised in HBM (no FlashAttention)")
        memory = DistributedMemory(
            weights=out["weights"],
            gradients=out["gradients"],
            optimizer=out["optimizer"],
            activations=out["activations"],
            total=out["memory"],
            capacity=P.capacity,
        )
        feasible = bool(out["fits"])
        reason = None
        if not feasible:
            reason = (
                f"needs {out['memory'] / 1e9:.1f} GB per accelerator (weights "
                f"{out['weights'] / 1e9:.1f}, gradients {out['gradients'] / 1e9:.1f}, optimizer "
                f"{out['optimizer'] / 1e9:.1f}, activations {out['activations'] / 1e9:.1f}); "
                f"the {fleet.node.accelerator.label} has {P.capacity / 1e9:.0f} GB"
            )
            if raise_errors:
                raise InfeasibleError(reason)
        step = out["step_time"]
        return DistributedResult(
            step_time=step,
            compute_time=out["compute_time"],
            tp_communication_time=out["tp_communication_time"],
            ep_communication_time=out["ep_communication_time"],
            pp_communication_time=out["pp_communication_time"],
            pipeline_bubble_time=out["pipeline_bubble_time"],
            dp_communication_time=out["dp_communication_time"],
            dp_communication_total=out["dp_communication_total"],
            optimizer_time=out["optimizer_time"],
            overlap_fraction=out["overlap_fraction"],
            bubble_fraction=out["bubble_fraction"],
            scaling_efficiency=out["compute_time"] / step,
            mfu=out["mfu"],
            hfu=out["hfu"],
            achieved_flops_per_accelerator=out["model_flops"] / step / P.total,
            tokens_per_second=out["tokens_per_second"],
            model_flops=out["model_flops"],
            microbatch_size=out["microbatch_size"],
            layers_per_device=out["layers_per_device"],
            memory_per_accelerator=memory,
            feasible=feasible,
            infeasibility_reason=reason,
            parallelism={"dp": dp, "tp": tp, "pp": pp, "ep": ep},
            notes=tuple(notes),
        )
