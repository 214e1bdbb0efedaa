"""Memory per accelerator: weights, gradients, optimizer state, activations, KV cache.

:class:`MemoryModel` answers "does this model, with this parallel layout, fit on each
device, and what takes the room?" for training and for inference.

Accounting
----------
* **Training of a transformer is the layout model itself.** The memory of a training
  layout is :func:`mlsys.core.solvers._layout.memory_terms` — the function
  :class:`~mlsys.core.solvers.distributed.DistributedModel` and
  :class:`~mlsys.core.solvers.search.ParallelismSearch` evaluate — so the three report
  the same bytes for the same :class:`~mlsys.core.layout.TrainingLayout` (a property
  test samples 10^4 layouts). It calls the cited formulas: ZeRO-partitioned model
  states (Rajbhandari et al. 2020; dense parameters sharded over ``dp·ep·cp`` ranks,
  experts over ``dp·cp``), Korthikanti et al. (2022) Table 2 activations per layer
  (FlashAttention drops the scores; context parallelism gives each rank ``s/cp``
  tokens), the in-flight micro-batches of the schedule (``min(p, m)`` for 1F1B, ``m``
  for GPipe), the interleaving factor ``1 + (p−1)/(p·v)`` and the embedding and
  output-layer buffers of their Sec. 4.3.
* **Uneven pipelines are allowed**: ``pp_size = 3`` with 80 layers puts
  ``⌈80/3⌉ = 27`` layers on the busiest stage, and that stage's activations set the
  memory (model states are split evenly, ``Ψ/(t·p)``).
* **Storage**: training weights and activations are 16-bit for 16-bit and narrower
  compute (an FP8 recipe casts to FP8 per matmul and keeps bf16 parameters) and
  32/64-bit for fp32/tf32/fp64 compute, which needs no separate master copy. Gradients
  are stored at ``grad_dtype``, by default
  :func:`~mlsys.core.precision.default_grad_dtype` (fp32 for bf16, as
  Megatron-LM accumulates them; bf16 for fp8 and fp4, as NeMo's and Megatron-Bridge's
  narrow-format recipes reduce them; fp16 for fp16, the ZeRO paper's convention).
* **Batch**: ``batch_size`` is the global batch in sequences; in training it must split
  evenly over the ``dp_size·ep_size`` data-parallel ranks (expert parallelism is carved
  out of data parallelism) and each rank's share over ``microbatch_count``
  micro-batches — the rules of :data:`mlsys.core.layout.LAYOUT_RULES`.
* **KV cache** (inference): :func:`~mlsys.core.formulas.kv_cache_bytes` (Pope et al.
  2022) at ``kv_precision``, split over pipeline stages and over tensor-parallel ranks
  by KV heads (replicated when ``tp_size`` exceeds the KV heads).
* **Framework allowance**: a fixed amount for the runtime (CUDA context, library
  workspaces, communication buffers) plus a fraction of the allocated bytes for
  allocator fragmentation — :func:`default_framework_overhead` — stated separately.
  Inference includes it by default; training does not (neither does DistributedModel,
  so one layout has one answer): pass ``framework_overhead`` to add it explicitly.
"""

from __future__ import annotations

import functools
from typing import Any, ClassVar, NamedTuple

from mlsys.core.errors import InfeasibleError, ParameterError
from mlsys.core.fmt import _split
from mlsys.core.formulas.memory import (
    OPTIMIZER_STATE_BYTES,
    optimizer_state_bytes_per_param,
    zero_model_state_breakdown,
)
from mlsys.core.formulas.transformer import kv_cache_bytes
from mlsys.core.layout import TrainingLayout, training_dropout
from mlsys.core.precision import BYTES_PER_ELEMENT, default_grad_dtype, normalize_precision
from mlsys.core.provenance import record
from mlsys.core.results import Result
from mlsys.core.solvers import _checks, _layout
from mlsys.core.solvers._explain import memory_tree
from mlsys.core.solvers._layout import training_storage_bytes
from mlsys.core.solvers._memo import identity_memo
from mlsys.core.terms import Term
from mlsys.core.units import as_si

__all__ = [
    "MemoryModel",
    "MemoryResult",
    "RUNTIME_OVERHEAD_BYTES",
    "FRAGMENTATION_FRACTION",
    "default_framework_overhead",
]

RUNTIME_OVERHEAD_BYTES: dict[str, float] = {
    "gpu": 1.0e9,
    "tpu": 0.5e9,
    "npu": 1.0e9,
    "cpu": 0.5e9,
    "edge": 0.3e9,
    "mcu": 0.0,
}
"""Fixed runtime allowance per device kind, bytes (an estimate).

A CUDA context with cuBLAS/cuDNN workspaces takes several hundred MB on a data-centre
GPU (NVIDIA, "CUDA C++ Programming Guide", lazy loading section, notes that module
loading dominates context memory), and NCCL reserves communication buffers of tens to
hundreds of MB; 1 GB covers both. TPU runtimes reserve less; a microcontroller
runtime's footprint is counted in the model's own arena."""

FRAGMENTATION_FRACTION = 0.05
"""Fraction of allocated bytes lost to allocator fragmentation (an estimate).

PyTorch's caching allocator rounds and splits blocks and cannot always reuse freed
ones ("CUDA semantics — memory management", PyTorch documentation); a few percent of
the reserved memory is typical in steady-state training."""

_MODES = ("training", "inference")


# the storage rules live with the layout model (one place); old private name kept
_training_storage_bytes = training_storage_bytes


def default_framework_overhead(accelerator: Any, allocated_bytes: float) -> float:
    """Default allowance for runtime buffers and fragmentation, in bytes.

    ``RUNTIME_OVERHEAD_BYTES[kind] + FRAGMENTATION_FRACTION × allocated_bytes``, where
    ``allocated_bytes`` are the bytes the caching allocator hands out and takes back
    while running. In inference that is the transient activation workspace alone: a
    serving engine allocates its weights and its KV cache once, at start-up, as whole
    tensors sized to the memory it has (vLLM's ``_allocate_kv_cache``, one
    ``torch.zeros`` tensor per KV-cache tensor; TensorRT-LLM's KV-cache pools), so they do
    not fragment, and the inference solvers (MemoryModel, SingleNodeModel, ServingModel,
    ContinuousBatchingModel) pass the workspace.

    Parameters
    ----------
    accelerator : Accelerator or str
        Device (its ``kind`` is used) or a kind string.
    allocated_bytes : float
        Bytes allocated and freed while running: in training the weights, gradients,
        optimizer state and activations; in inference the activation workspace.

    Returns
    -------
    float
        Bytes.

    References
    ----------
    Estimates; see :data:`RUNTIME_OVERHEAD_BYTES` and :data:`FRAGMENTATION_FRACTION`.
    vLLM, ``vllm/v1/worker/gpu_model_runner.py`` (``_allocate_kv_cache``) and
    ``vllm/worker/cache_engine.py`` (V0): the KV cache allocated once as whole tensors.

    Examples
    --------
    A GPU allocating and freeing 60 GB of tensors: 1 GB + 5 % × 60 GB = 4 GB.

    >>> default_framework_overhead("gpu", 60e9) / 1e9
    4.0
    """
    kind = accelerator if isinstance(accelerator, str) else getattr(accelerator, "kind", "gpu")
    return RUNTIME_OVERHEAD_BYTES.get(kind, 1.0e9) + FRAGMENTATION_FRACTION * allocated_bytes


class MemoryResult(Result):
    """Memory needed on each accelerator, by component.

    Attributes
    ----------
    weights : Quantity [byte]
        Parameters resident on the device (after TP/PP/EP split and ZeRO-3 partitioning).
    gradients : Quantity [byte]
        Gradient buffers (zero in inference).
    optimizer_state : Quantity [byte]
        Optimizer state including fp32 master weights (zero in inference).
    activations : Quantity [byte]
        Stored activations of the first pipeline stage (training) or the transient
        working set of one layer (inference).
    kv_cache : Quantity [byte]
        Key/value cache (inference).
    framework_overhead : Quantity [byte]
        Allowance for runtime buffers and allocator fragmentation.
    model_state : Quantity [byte]
        Weights + gradients + optimizer state: the "model states" of Rajbhandari et al.
        (2020), "ZeRO: Memory Optimizations Toward Training Trillion Parameter Models",
        Sec. 3.1 — the part ZeRO partitions.
    total : Quantity [byte]
        Sum of the above (``model_state`` counted once).
    capacity : Quantity [byte]
        Device memory.
    headroom : Quantity [byte]
        ``capacity − total`` (negative when it does not fit).
    utilization : float
        ``total / capacity``.
    feasible : bool
        ``total <= capacity``.
    infeasibility_reason : str or None
        Why it does not fit, with the largest components.
    params_per_device : float
        Parameters each device holds a shard of (before ZeRO).
    optimizer_bytes_per_param : float
        ``K`` used for the optimizer state.
    mode, precision, kv_precision, recompute, optimizer : str
        As solved.
    batch_size, seq_len, microbatch_count, v_stages, kv_cache_len : int
        As solved (``batch_size`` is the global batch, in sequences).
    dp_size, tp_size, pp_size, ep_size, zero_stage : int
        The parallel layout and ZeRO stage, as solved.
    microbatch_size : int
        Sequences per micro-batch on one replica (training) or per replica (inference).
    sequence_parallel, flash_attention : bool
        As solved.
    cp_size : int
        Context-parallel size, as solved.
    schedule : str
        Pipeline schedule, as solved.
    """

    _title: ClassVar[str] = "Memory per accelerator"
    _units: ClassVar[dict[str, str | None]] = {
        "weights": "byte",
        "gradients": "byte",
        "optimizer_state": "byte",
        "activations": "byte",
        "kv_cache": "byte",
        "framework_overhead": "byte",
        "model_state": "byte",
        "total": "byte",
        "capacity": "byte",
        "headroom": "byte",
        "utilization": None,
        "feasible": None,
        "infeasibility_reason": None,
        "params_per_device": None,
        "optimizer_bytes_per_param": None,
        "mode": None,
        "precision": None,
        "kv_precision": None,
        "recompute": None,
        "optimizer": None,
        "batch_size": None,
        "microbatch_size": None,
        "seq_len": None,
        "dp_size": None,
        "tp_size": None,
        "pp_size": None,
        "ep_size": None,
        "zero_stage": None,
        "microbatch_count": None,
        "v_stages": None,
        "kv_cache_len": None,
        "sequence_parallel": None,
        "cp_size": None,
        "flash_attention": None,
        "schedule": None,
    }
    _aliases: ClassVar[dict[str, str]] = {
        "optimizer_bytes": "optimizer_state",
        "activation_bytes": "activations",
        "total_bytes": "total",
    }

    def explain(self) -> Term:
        """What each byte is: the model states (weights, gradients, optimizer state),
        activations, KV cache and framework overhead, each with its formula, summed in
        the solver's order so the root is ``total`` exactly (zero parts left out).

        Returns
        -------
        Term
            Root ``"memory per accelerator"`` in bytes; renders as a Markdown table in a
            Quarto cell or notebook, as aligned text with ``print``.

        Examples
        --------
        >>> from mlsys import Hardware, Models
        >>> res = MemoryModel().solve(Models.Llama2_7B, Hardware.H100, mode="training",
        ...     batch_size=1, seq_len=2048)
        >>> res.explain().value == res.si("total")
        True
        """
        v = self._values
        parts = {
            "weights": v["weights"], "gradients": v["gradients"],
            "optimizer": v["optimizer_state"], "activations": v["activations"],
            "kv_cache": v["kv_cache"], "framework_overhead": v["framework_overhead"],
        }  # fmt: skip
        inputs = {"capacity": f"{v['capacity'] / 1e9:.1f} GB", "mode": str(v["mode"])}
        return memory_tree(parts, inputs)


class _Shape(NamedTuple):
    """A model's sizes as floats (memoised per model)."""

    transformer: bool
    total: float  # parameters
    experts: float  # parameters in routed experts
    layers: float
    hidden: float
    heads: float
    kv_heads: float
    head_dim: float
    ffn_hidden: float
    mlp_matrices_up: float  # 2 for a gated MLP (gate and up), else 1
    vocab: float
    seq_len: float
    expert_count: float
    activation_bytes_per_sample: float  # generic workloads, at 16 bits


@identity_memo(objects=1)
def _shape(model: Any) -> _Shape:
    if hasattr(model, "hidden"):
        br = model.param_breakdown
        total = float(model.total_params)
        # a given total rescales the derived split between dense and expert parameters
        scale = total / br["total"]
        return _Shape(
            transformer=True,
            total=total,
            experts=br["mlp_experts"] * scale,
            layers=float(model.layers),
            hidden=float(model.hidden),
            heads=float(model.heads),
            kv_heads=float(model.kv_heads),
            head_dim=float(model.head_dim),
            ffn_hidden=float(model.ffn_hidden),
            mlp_matrices_up=2.0 if model.gated_mlp else 1.0,
            vocab=float(model.vocab),
            seq_len=float(model.seq_len),
            expert_count=float(model.experts),
            activation_bytes_per_sample=0.0,
        )
    return _Shape(
        transformer=False,
        total=float(model.params),
        experts=0.0,
        layers=0.0,
        hidden=0.0,
        heads=0.0,
        kv_heads=0.0,
        head_dim=0.0,
        ffn_hidden=0.0,
        mlp_matrices_up=0.0,
        vocab=0.0,
        seq_len=1.0,
        expert_count=0.0,
        activation_bytes_per_sample=float(
            getattr(model, "activation_bytes_per_sample", 0.0) or 0.0
        ),
    )


_NO_EFFICIENCY = 1.0  # memory terms do not depend on compute efficiency
_WIDE = ("fp32", "tf32", "fp64")


def _same_storage_precision(acc: Any, prec: str) -> str:
    """``prec`` if ``acc`` has a peak for it, else one it has that stores training
    weights, gradients and activations with the same bytes (the peak is not used)."""
    have = acc.precisions
    if prec in have:
        return prec
    if prec in _WIDE:
        same = [p for p in _WIDE if p in have and BYTES_PER_ELEMENT[p] == BYTES_PER_ELEMENT[prec]]
    else:  # 16-bit and narrower compute all store 16-bit weights and activations
        same = [p for p in ("bf16", "fp16", "fp8", "int8", "fp4", "int4") if p in have]
    return same[0] if same else prec


@functools.lru_cache(maxsize=1024, typed=True)  # typed: True must not hit 1
def _layout_cached(*args: Any) -> TrainingLayout:
    (dp, tp, pp, ep, cp, zero, rc, sp, m, v, sched, flash, grad_dtype) = args
    return TrainingLayout(
        dp=dp, tp=tp, pp=pp, ep=ep, cp=cp, zero_stage=zero, recompute=rc,
        sequence_parallel=sp, microbatch_count=m, v_stages=v, schedule=sched,
        flash_attention=flash, grad_dtype=grad_dtype,
    )  # fmt: skip


def _memory_layout(*args: Any) -> TrainingLayout:
    """The layout of MemoryModel's keywords, validated once per distinct set."""
    try:
        return _layout_cached(*args)
    except TypeError:  # unhashable: validate (and raise) without the cache
        return _layout_cached.__wrapped__(*args)


def _accelerator(hardware: Any) -> Any:
    """The accelerator of ``hardware`` (an Accelerator, or a Node's)."""
    # test the common case first: a failed getattr on a pydantic model is slow
    acc = (
        hardware
        if hasattr(hardware, "memory_bytes")
        else getattr(hardware, "accelerator", hardware)
    )
    if not hasattr(acc, "memory_bytes"):
        raise ParameterError("hardware", hardware, "an Accelerator (e.g. Hardware.H100)")
    return acc


def _sequence_length(shape: Any, seq_len: Any, ep: int) -> int:
    """Tokens per sample: the model's by default; 1 for a workload without a sequence
    (which has no experts to split)."""
    if shape.transformer:
        return int(shape.seq_len) if seq_len is None else _checks.positive_int("seq_len", seq_len)
    if ep != 1:
        raise ParameterError("ep_size", ep, "1 for a non-MoE workload")
    return 1 if seq_len is None else _checks.positive_int("seq_len", seq_len)


def _overhead(framework_overhead: Any, mode_key: str, acc: Any, transient: float) -> float:
    """Bytes the framework holds beyond the model's: given, else none in training (as in
    DistributedModel: one answer for one layout) and, in inference, the runtime
    allowance the serving solvers also use (fragmentation of the ``transient``
    activation workspace only: weights and KV cache are allocated once)."""
    if framework_overhead is None:
        return 0.0 if mode_key == "training" else default_framework_overhead(acc, transient)
    return as_si(framework_overhead, "byte", "framework_overhead")


class MemoryModel:
    """Memory per accelerator of a training or inference configuration.

    Examples
    --------
    >>> from mlsys import Hardware, Models, MemoryModel
    >>> res = MemoryModel().solve(Models.Llama2_70B, Hardware.H100, mode="inference",
    ...                           tp_size=8)
    >>> bool(res.feasible)
    True
    """

    def solve(
        self,
        model: Any,
        hardware: Any,
        batch_size: int | None = None,
        seq_len: int | None = None,
        precision: str = "bf16",
        mode: str = "training",
        optimizer: str = "adam",
        dp_size: int = 1,
        tp_size: int = 1,
        pp_size: int = 1,
        ep_size: int = 1,
        zero_stage: int = 0,
        recompute: str = "none",
        sequence_parallel: bool = False,
        microbatch_count: int = 1,
        v_stages: int = 1,
        kv_cache_len: int | None = None,
        kv_precision: str | None = None,
        framework_overhead: Any = None,
        raise_errors: bool = False,
        *,
        grad_dtype: str | None = None,
        flash_attention: bool = True,
        schedule: str = "1f1b",
        cp_size: int = 1,
        layout: TrainingLayout | None = None,
        recompute_num_layers: int | None = None,
    ) -> MemoryResult:
        """Memory per device of ``model`` on ``hardware`` under a parallel layout.

        Parameters
        ----------
        model : TransformerWorkload or Workload
            The network.
        hardware : Accelerator
            The device (a Node uses its accelerator).
        batch_size : int, optional
            The **global** batch in sequences, as in every mlsys solver. Training: each
            data-parallel replica runs micro-batches of
            ``batch_size / (dp_size × microbatch_count)`` sequences, which must be a
            whole number (as in DistributedModel). Inference: concurrent sequences,
            ``ceil(batch_size / dp_size)`` per replica (the largest replica). Default:
            one sequence per micro-batch on every replica
            (``dp_size × microbatch_count``; ``dp_size`` in inference).
        seq_len : int, optional
            Tokens per sequence (default the model's ``seq_len``).
        precision : str
            Compute precision (``"bf16"``). Training stores weights and activations at
            16 bits below 32-bit compute (fp8 too) and at 32 bits for fp32/tf32, where
            no separate master copy is kept; inference stores weights at
            ``precision``.
        mode : {"training", "inference"}
            Training holds gradients, optimizer state and stored activations;
            inference holds weights, the KV cache and a transient working set.
        optimizer : str
            ``"adam"``/``"adamw"`` (K = 12), ``"sgd_momentum"`` (8), ``"sgd"`` (4),
            ``"adam8bit"`` (6), ``"adafactor"`` (4).
        dp_size, tp_size, pp_size, ep_size : int
            Data-, tensor-, pipeline- and expert-parallel degrees. ``tp_size`` must
            divide the heads; ``ep_size`` the experts; ``pp_size`` may leave an uneven
            split (the busiest stage holds ``⌈L/(p·v)⌉·v`` layers).
        zero_stage : {0, 1, 2, 3}
            ZeRO partitioning over ``dp_size``.
        recompute : {"none", "selective", "full", "dots"}
            Activation recomputation
            (:data:`mlsys.core.formulas.memory.RECOMPUTE_MODES`; ``"dots"`` keeps the
            weight matmuls' outputs, as JAX's ``checkpoint_dots_with_no_batch_dims``).
        sequence_parallel : bool
            Megatron sequence parallelism (with ``tp_size > 1``).
        microbatch_count : int
            Micro-batches per step (the first stage holds ``min(pp_size, m)`` under
            1F1B, ``m`` under GPipe); a multiple of ``pp_size`` when ``v_stages > 1``.
        v_stages : int
            Interleaved model chunks per device (1: plain 1F1B).
        kv_cache_len : int, optional
            Inference: cached tokens per sequence (default ``seq_len``).
        kv_precision : str, optional
            KV-cache precision (default ``precision``).
        framework_overhead : None, float or Quantity
            ``None``: none in training (as DistributedModel), and
            :func:`default_framework_overhead` in inference. A number is bytes, added
            in either mode.
        raise_errors : bool
            Raise :class:`~mlsys.InfeasibleError` instead of returning
            ``feasible=False``.
        grad_dtype : str, optional
            Training: precision of the gradient buffers (default
            :func:`~mlsys.core.precision.default_grad_dtype`: fp32, fp16 for fp16
            training), as in DistributedModel.
        flash_attention : bool
            Training: fused attention that never stores the ``s×s`` scores (default
            True, as in DistributedModel). Pass False for Korthikanti et al.'s
            ``5as/h`` term (2021–22 Megatron-LM).
        schedule : {"1f1b", "interleaved", "gpipe"}
            Training: pipeline schedule (GPipe holds all ``m`` micro-batches).
        cp_size : int
            Training: context-parallel size (each sequence split over ``cp_size``
            ranks; activations divided by it).
        layout : TrainingLayout, optional
            Training: the whole layout at once (``dp`` required); replaces
            ``dp_size``, ``tp_size``, ``pp_size``, ``ep_size``, ``cp_size``,
            ``zero_stage``, ``recompute``, ``sequence_parallel``,
            ``microbatch_count``, ``v_stages``, ``schedule``, ``flash_attention``
            and ``grad_dtype`` (and ``recompute_num_layers`` when that keyword is None).
        recompute_num_layers : int, optional
            Training with ``recompute="full"``: recompute only this many layers of each
            model chunk, the others keeping every activation (Megatron-LM's
            ``--recompute-method block``;
            :func:`mlsys.core.solvers._layout.block_recompute_fraction`). None: all.

        Returns
        -------
        MemoryResult

        Raises
        ------
        ParameterError
            For non-positive sizes, NaN, an unknown precision, optimizer, mode or
            recompute mode, a ZeRO stage outside 0–3, heads not divisible by
            ``tp_size``, experts not divisible by ``ep_size``, or (training) a global
            batch that does not split into ``dp_size × microbatch_count`` equal
            micro-batches.
        """
        acc = _accelerator(hardware)
        mode_key = _checks.choice("mode", mode, _MODES)
        raise_errors = _checks.flag("raise_errors", raise_errors)
        prec = normalize_precision(precision)
        kv_prec = (
            prec if kv_precision is None else normalize_precision(kv_precision, "kv_precision")
        )
        if layout is None:
            dp_size = _checks.positive_int("dp_size", dp_size)  # None would pass the layout
            layout = _memory_layout(
                dp_size, tp_size, pp_size, ep_size, cp_size, zero_stage, recompute,
                sequence_parallel, microbatch_count, v_stages, schedule, flash_attention,
                grad_dtype,
            )  # fmt: skip
        elif not isinstance(layout, TrainingLayout) or layout.dp is None:
            raise ParameterError("layout", layout, "a TrainingLayout with dp set")
        lay = layout
        dp, tp, pp, ep, cp = lay.dp, lay.tp, lay.pp, lay.ep, lay.cp
        m, v, z, rec = lay.microbatch_count, lay.v_stages, lay.zero_stage, lay.recompute
        if batch_size is None:
            b = dp * ep * m if mode_key == "training" else dp
        else:
            b = _checks.positive_int("batch_size", batch_size)
        e = BYTES_PER_ELEMENT[prec]
        e_kv = BYTES_PER_ELEMENT[kv_prec]
        opt_key = str(optimizer).lower()
        shape = _shape(model)
        s = _sequence_length(shape, seq_len, ep)
        psi = (shape.total - shape.experts) / (tp * pp) + shape.experts / (tp * pp * ep)

        if mode_key == "training":
            parts = _training_parts(
                model, acc, lay, shape, prec, optimizer, b, s, psi, recompute_num_layers
            )
        else:
            parts = _inference_parts(model, lay, shape, optimizer, e, e_kv, b, s, psi,
                                     kv_cache_len)  # fmt: skip
        weights, grads, opt, acts, kv_cache, b_local, k_opt, kv_len = parts
        allocated = weights + grads + opt + acts + kv_cache
        overhead = _overhead(framework_overhead, mode_key, acc, acts)
        total_bytes = allocated + overhead
        capacity = acc.memory_bytes
        feasible = total_bytes <= capacity
        reason = None
        if not feasible:
            reason = _infeasibility(acc, total_bytes, capacity, (*parts[:5], overhead))
            if raise_errors:
                raise InfeasibleError(reason)
        result = MemoryResult(
            weights=weights,
            gradients=grads,
            optimizer_state=opt,
            activations=acts,
            kv_cache=kv_cache,
            framework_overhead=overhead,
            model_state=weights + grads + opt,
            total=total_bytes,
            capacity=capacity,
            headroom=capacity - total_bytes,
            utilization=total_bytes / capacity,
            feasible=feasible,
            infeasibility_reason=reason,
            params_per_device=psi,
            optimizer_bytes_per_param=k_opt,
            mode=mode_key,
            precision=prec,
            kv_precision=kv_prec,
            recompute=rec,
            optimizer=opt_key if opt_key in OPTIMIZER_STATE_BYTES else str(optimizer),
            batch_size=b,
            microbatch_size=b_local,
            seq_len=s,
            dp_size=dp,
            tp_size=tp,
            pp_size=pp,
            ep_size=ep,
            zero_stage=z,
            microbatch_count=m,
            v_stages=v,
            kv_cache_len=kv_len,
            sequence_parallel=lay.sequence_parallel,
            cp_size=cp,
            flash_attention=lay.flash_attention,
            schedule=lay.schedule,
        )
        return record(
            result, self, model=model, hardware=hardware, batch_size=batch_size, precision=prec
        )


class _Parts(NamedTuple):
    """Bytes per device of one solve, part by part, and what they were counted over."""

    weights: float
    gradients: float
    optimizer: float
    activations: float
    kv_cache: float
    microbatch_size: int
    optimizer_bytes_per_param: float
    kv_cache_len: int


def _training_parts(
    model: Any, acc: Any, lay: TrainingLayout, shape: _Shape, prec: str, optimizer: str,
    b: int, s: int, psi: float, recompute_num_layers: int | None,
) -> _Parts:  # fmt: skip
    """Training memory per device: for a transformer the layout evaluation itself
    (:func:`mlsys.core.solvers._layout.memory_terms`, DistributedModel's), else the ZeRO
    model states and per-sample activations held for ``min(p, m)`` micro-batches."""
    dp, tp, pp, ep, cp = lay.dp, lay.tp, lay.pp, lay.ep, lay.cp
    m, v, z = lay.microbatch_count, lay.v_stages, lay.zero_stage
    if not shape.transformer:
        w_bytes, g_bytes, e_act, master = training_storage_bytes(prec, lay.grad_dtype)
        k_opt = optimizer_state_bytes_per_param(optimizer, master_weights=master)
        b_local = _checks.microbatch_size(b, dp, m, "dp_size")
        weights, grads, opt = zero_model_state_breakdown(
            psi, float(dp), float(z), k_opt, w_bytes, g_bytes
        )
        # generic workloads: per-sample bytes at 16 bit, held for min(p, m) micro-batches
        # of 1/p of the network
        acts = shape.activation_bytes_per_sample * b_local * (e_act / 2.0)
        acts *= min(pp, m) / pp
        return _Parts(weights, grads, opt, acts, 0.0, b_local, k_opt, 0)
    _layout.require_rules(lay, model, None, b, s)
    # memory needs the storage rules of `prec`, not its peak: a device without a peak at
    # `prec` (fp8 on an A100) is priced at a precision with the same storage and default
    # gradient dtype
    grad = lay.grad_dtype or default_grad_dtype(prec)
    P = _layout.build_problem(
        model, acc, b, _same_storage_precision(acc, prec), _NO_EFFICIENCY, s,
        grad, lay.flash_attention, optimizer, lay.attention_kernel, lay.elementwise_kernels,
    )  # fmt: skip
    rnl = lay.recompute_num_layers if recompute_num_layers is None else recompute_num_layers
    mem = _layout.memory_terms(
        P, float(tp), float(pp), float(ep), float(dp), float(m), float(v), float(z),
        float(lay.recompute_code), 1.0 if (lay.sequence_parallel and tp > 1) else 0.0,
        int(lay.schedule_code), float(cp),
        _layout.block_recompute_fraction(model.layers, pp, v, rnl),
        training_dropout(lay.dropout, model),
    )  # fmt: skip
    return _Parts(
        mem["weights"], mem["gradients"], mem["optimizer"], mem["activations"], 0.0,
        int(b // (dp * ep * m)), P.opt_bytes, 0,
    )  # fmt: skip


def _inference_parts(
    model: Any, lay: TrainingLayout, shape: _Shape, optimizer: str, e: float, e_kv: float,
    b: int, s: int, psi: float, kv_cache_len: int | None,
) -> _Parts:  # fmt: skip
    """Inference memory per device: the weights, the KV cache
    (:func:`mlsys.core.formulas.transformer.kv_cache_bytes`, KV heads split over tp and
    replicated past them, layers over pp) and one layer's transient working set."""
    dp, tp, pp, ep = lay.dp, lay.tp, lay.pp, lay.ep
    optimizer_state_bytes_per_param(optimizer)  # an unknown name raises here too
    b_local = -(-b // dp)
    weights = psi * e
    if not shape.transformer:
        acts = shape.activation_bytes_per_sample * b_local * (e / 2.0) / pp
        return _Parts(weights, 0.0, 0.0, acts, 0.0, b_local, 0.0, 0)
    if shape.expert_count <= 1 and ep != 1:
        raise ParameterError("ep_size", ep, "1 for a dense (non-MoE) model")
    # heads, layers, experts (a batch of dp·ep·m passes the batch rules)
    _layout.require_rules(lay, model, None, dp * ep * lay.microbatch_count, s)
    kv_len = s if kv_cache_len is None else _checks.nonneg_int("kv_cache_len", kv_cache_len)
    L, h, a, hd = shape.layers, shape.hidden, shape.heads, shape.head_dim
    kvh, f = shape.kv_heads, shape.ffn_hidden
    kv_cache = kv_cache_bytes(L / pp, max(kvh / tp, 1.0), hd, kv_len, b_local, e_kv)
    # one layer's transient working set over the prompt, plus fp32 logits of the last
    # position
    acts = e * b_local * s * (2.0 * h + (a + 2.0 * kvh) * hd / tp + shape.mlp_matrices_up * f / tp)
    acts += 4.0 * b_local * shape.vocab / tp
    return _Parts(weights, 0.0, 0.0, acts, kv_cache, b_local, 0.0, kv_len)


def _infeasibility(acc: Any, total: float, capacity: float, parts: tuple[float, ...]) -> str:
    """Why it does not fit, with the three largest parts (weights, gradients, optimizer
    state, activations, KV cache, framework, in that order in ``parts``)."""
    names = ("weights", "gradients", "optimizer state", "activations", "KV cache", "framework")
    largest = sorted(zip(names, parts, strict=True), key=lambda kv: -kv[1])
    top = ", ".join(f"{n} {_bytes_text(x)}" for n, x in largest[:3] if x > 0)
    return (
        f"needs {_bytes_text(total)} per device but {acc.label} has "
        f"{_bytes_text(capacity)} (largest: {top})"
    )


_BYTE_PREFIXES = ("", "k", "M", "G", "T", "P", "E")


def _bytes_text(x_bytes: float) -> str:
    """A size in a message, as the display policy writes it: three significant digits
    and the SI prefix that suits it ("489 GB", "1.34 TB", never "1.34e+03 GB").

    From 1 B to just under 1,000 EB the text is placed here from ``fmt``'s own rounding
    of the digits (a refusal message names six sizes, and a sweep may refuse thousands of
    layouts: the whole formatter costs ~10 µs a size); it is what
    :func:`mlsys.core.fmt.fmt` prints at ``digits=3`` (a test compares the two), and
    every other size is left to ``fmt`` itself."""
    if x_bytes == 0.0:
        return "0 B"
    if 1.0 <= x_bytes < 1e21:
        digits, exponent = _split(x_bytes, 3)
        power = exponent // 3
        if power < len(_BYTE_PREFIXES):
            e = exponent - 3 * power
            integer, fraction = digits[: e + 1].ljust(e + 1, "0"), digits[e + 1 :]
            return f"{integer}{'.' + fraction if fraction else ''} {_BYTE_PREFIXES[power]}B"
    from mlsys.core.fmt import fmt
    from mlsys.core.units import Q_

    return str(fmt(Q_(x_bytes, "byte"), digits=3))
