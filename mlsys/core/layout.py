"""One parallel training layout, validated once, and the rules that say whether it runs.

:class:`TrainingLayout` is the plan of a training step — how the accelerators split the
model and the batch (tensor, pipeline, data, expert and context parallelism), how the
pipeline is scheduled, what is sharded (ZeRO) and what is recomputed. Its own fields are
checked when it is built (positive sizes, known names, a schedule that fits the
interleaving). The rules that need the model and the fleet (heads divisible by ``tp``,
the world size, the batch split, …) are the functions of :data:`LAYOUT_RULES`: each is
plain arithmetic on integers or numpy arrays, so :meth:`TrainingLayout.check` runs them
on one layout and :func:`rejection_codes` on 10^5 layouts of a search at once. A solve
and a search therefore apply the same rulebook and cannot disagree.

Conventions
-----------
* World size ``N = tp·pp·dp·ep·cp``. Expert parallelism is carved out of data
  parallelism (Megatron-Core, DeepSpeed-MoE): attention and dense layers are
  data-parallel over ``dp·ep`` ranks, experts over ``dp``; so the global batch splits
  over ``dp·ep`` replicas, each into ``microbatch_count`` micro-batches.
* Context parallelism splits every sequence into ``cp`` pieces (Megatron-Core
  ``context_parallel_size``; "the total number of GPUs equals TP×CP×PP×DP", NVIDIA
  Megatron-Core docs, "context_parallel package"). Megatron-LM balances the causal
  work by cutting each sequence into ``2·cp`` chunks (``get_batch_on_this_cp_rank``:
  rank ``i`` takes chunks ``i`` and ``2·cp − 1 − i``), so ``seq_len`` must be a
  multiple of ``2·cp``.
* Uneven pipelines are allowed: with ``L`` layers on ``pp·v`` chunks the busiest device
  holds ``⌈L/(pp·v)⌉·v`` layers, and it sets both the memory and the pace.
* Interleaving (``v_stages > 1``) needs a pipeline (``pp > 1``), the 1F1B schedule and
  a micro-batch count that is a multiple of ``pp``, as Megatron-LM requires
  (Narayanan et al. 2021, Sec. 2.2.2; Megatron-LM ``get_forward_backward_func``).

References
----------
Narayanan et al. (2021), "Efficient Large-Scale Language Model Training on GPU Clusters
Using Megatron-LM", SC'21, Sec. 2–3. Korthikanti et al. (2022), "Reducing Activation
Recomputation in Large Transformer Models", arXiv:2205.05198. Rajbhandari et al.
(2020), "ZeRO", SC'20. NVIDIA Megatron-Core documentation, "context_parallel package".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator, model_validator

from mlsys.core._types_core import RevalidatingCopy
from mlsys.core.checks import count, flag, positive_int
from mlsys.core.errors import ParameterError
from mlsys.core.formulas.eager import ELEMENTWISE_KERNELS

__all__ = [
    "TrainingLayout",
    "CUDA_GRAPH_SCOPES",
    "Recompute",
    "Schedule",
    "Topology",
    "Rejection",
    "LayoutFacts",
    "LayoutRule",
    "LAYOUT_RULES",
    "REJECTION_REASONS",
    "layout_facts",
    "rejection_codes",
    "first_violation",
    "training_dropout",
]


def training_dropout(dropout: bool | None, model: Any) -> bool:
    """Whether a training step runs attention and hidden dropout.

    The caller's choice when given; else the model's published training
    (``TransformerWorkload.training_dropout``, a cited catalog fact: Llama 2 and 3,
    Nemotron-4 and Qwen3 train with dropout probability 0); else True, GPT-3-style
    training with p = 0.1 (Brown et al. 2020; Megatron-LM's ``--hidden-dropout`` and
    ``--attention-dropout`` default 0.1). It sets whether dropout's one-byte masks are
    stored (Korthikanti et al. 2022, Table 2's ``sbh`` terms) and its kernels run.

    Parameters
    ----------
    dropout : bool or None
        The run's own setting; None to take the model's.
    model : TransformerWorkload or Workload
        The network (its ``training_dropout``, when it has one).

    Returns
    -------
    bool

    Examples
    --------
    >>> from mlsys import Models
    >>> training_dropout(None, Models.Llama3_70B), training_dropout(None, Models.GPT3_175B)
    (False, True)
    >>> training_dropout(True, Models.Llama3_70B)
    True
    """
    if dropout is not None:
        return dropout
    fact = getattr(model, "training_dropout", None)
    return True if fact is None else fact


class Recompute(IntEnum):
    """Activation recomputation, as the integer code the vectorised model uses."""

    NONE = 0
    SELECTIVE = 1
    FULL = 2
    DOTS = 3


class Schedule(IntEnum):
    """Pipeline schedule: 1F1B (plain or interleaved) or GPipe (all forwards first)."""

    ONE_F_ONE_B = 0
    GPIPE = 1


class Topology(IntEnum):
    """Algorithm of the data-parallel all-reduce (AUTO: hierarchical across nodes)."""

    AUTO = 0
    RING = 1
    TREE = 2
    HIERARCHICAL = 3


class Rejection(IntEnum):
    """Why a layout cannot run (0: it can). The order is the order rules are checked."""

    OK = 0
    MEMORY = 1
    HEADS = 2
    BATCH = 3
    LAYERS = 4
    INTERLEAVE = 5
    WORLD = 6
    EXPERTS = 7
    MICROBATCH = 8
    CONTEXT = 9


RECOMPUTE_NAMES: dict[str, Recompute] = {
    "none": Recompute.NONE,
    "selective": Recompute.SELECTIVE,
    "full": Recompute.FULL,
    "dots": Recompute.DOTS,
}
SCHEDULE_NAMES: dict[str, Schedule] = {
    "1f1b": Schedule.ONE_F_ONE_B,
    "interleaved": Schedule.ONE_F_ONE_B,
    "gpipe": Schedule.GPIPE,
}
CP_COMM_TYPES: tuple[str, ...] = ("p2p", "all_gather")
"""Context-parallel K/V exchanges :class:`TrainingLayout` prices (Megatron-Core's
``--cp-comm-type`` names)."""
CUDA_GRAPH_SCOPES: tuple[str, ...] = ("attn", "moe_router", "moe_preprocess", "full_iteration")
"""Parts of a layer :class:`TrainingLayout` can replay from CUDA graphs (Megatron-Core's
``--cuda-graph-scope`` names)."""
_CHOICES: dict[str, tuple[str, ...]] = {
    "pipeline_p2p": ("megatron", "deepspeed"),
    "recompute_rerun": ("layer", "residuals"),
    "elementwise_kernels": ELEMENTWISE_KERNELS,
}
"""Allowed values of the layout's plain string options, by field (lower-case, ``_`` for
``-``)."""
TOPOLOGY_NAMES: dict[str | None, Topology] = {
    None: Topology.AUTO,
    "auto": Topology.AUTO,
    "ring": Topology.RING,
    "tree": Topology.TREE,
    "hierarchical": Topology.HIERARCHICAL,
}


class TrainingLayout(RevalidatingCopy, BaseModel):
    """A parallel training layout: how a step is split over the accelerators.

    Built once and validated once (frozen, hashable); every training solver and the
    search take it. Rules that need the model and the fleet are applied by
    :meth:`check`.

    Attributes
    ----------
    tp, pp, ep, cp : int
        Tensor-, pipeline-, expert- and context-parallel sizes (counts, ≥ 1).
    dp : int or None
        Data-parallel size; None lets a solver derive it from the fleet as
        ``N/(tp·pp·ep·cp)``.
    microbatch_count : int
        Micro-batches per step on each data-parallel replica (gradient accumulation).
    v_stages : int
        Model chunks per device (interleaved 1F1B when > 1).
    schedule : {"1f1b", "interleaved", "gpipe"}
        Pipeline schedule; ``"interleaved"`` is 1F1B with ``v_stages > 1``.
    zero_stage : {0, 1, 2, 3}
        ZeRO partitioning of optimizer state, gradients and weights over the
        data-parallel group.
    recompute : {"none", "selective", "full", "dots"}
        Activation recomputation: nothing, the attention scores (Korthikanti et al.
        2022), the whole layer from its input, or everything but the weight matmuls'
        outputs (JAX's ``checkpoint_dots_with_no_batch_dims``, MaxText's
        ``remat_policy: minimal``; :data:`mlsys.core.formulas.memory.RECOMPUTE_MODES`).
    sequence_parallel : bool
        Megatron sequence parallelism (no effect with ``tp = 1``).
    flash_attention : bool
        Fused attention that never writes the ``s×s`` scores to memory (default True).
    attention_kernel : {"fused", "flash2", "flash1"}
        Which fused attention kernel (with ``flash_attention``): ``"fused"`` the device's
        best measured one (cuDNN's on Hopper and later, as Transformer Engine calls it;
        FlashAttention-2 on Ampere), ``"flash2"`` FlashAttention-2 or a kernel of its
        generation on any device (eager PyTorch stacks of 2023-24: flash-attn 2),
        ``"flash1"`` FlashAttention(-1) or a kernel of its generation (flash-attn 1,
        MosaicML's Triton port), each priced at its own fractions
        (:func:`mlsys.core.solvers.efficiency.attention_kernel_fractions`).
    elementwise_kernels : {"fused", "eager", "eager_fused_norm"}
        How the layer's element-wise work runs: ``"fused"`` kernels (Megatron-LM,
        Transformer Engine, XLA, ``torch.compile``), ``"eager"``, each operator of the
        model code its own kernel, norms and rotations in fp32 (eager PyTorch:
        :func:`mlsys.core.formulas.eager.eager_elementwise_bytes`), or
        ``"eager_fused_norm"``, eager but for one fused kernel per norm (torchtitan's
        ``fused_rmsnorm``).
    grad_dtype : str or None
        Precision of the gradient buffers and their reduction (None: the default for
        the compute precision).
    tp_comm_overlap : bool
        Overlap the tensor-parallel collectives with the GEMMs that produce or consume
        them (Megatron-LM's ``--tp-comm-overlap``; it needs sequence parallelism and
        ``tp > 1``, otherwise it has no effect).
    cp_comm_type : {"p2p", "all_gather"}
        How context parallelism exchanges keys and values (Megatron-Core's
        ``--cp-comm-type``): ``"p2p"`` passes K, V blocks round a ring, each step hidden
        behind one block's attention (Liu, Zaharia & Abbeel 2023, Sec. 3);
        ``"all_gather"`` all-gathers the whole K, V before the local queries' attention
        and reduce-scatters their gradients backward, exposed on the critical path
        (Dubey et al. 2024, "The Llama 3 Herd of Models", Sec. 3.3.2). No effect with
        ``cp = 1``.
    grad_accumulation_fusion : bool
        The weight-gradient GEMMs accumulate into the gradient buffer themselves
        (Megatron-LM's ``--gradient-accumulation-fusion``, default); False adds each
        micro-batch's weight gradients with a kernel of their own (PyTorch autograd,
        DeepSpeed, Megatron-LM of 2021).
    recompute_num_layers : int or None
        With ``recompute="full"``, recompute only this many layers of each model chunk
        (Megatron-LM's ``--recompute-method block --recompute-num-layers``); None: all.
    recompute_rerun : {"layer", "residuals"}
        What a full recompute reruns: ``"layer"`` the whole forward of each layer
        (Megatron-LM's and PyTorch's checkpointing re-run the layer's function), or
        ``"residuals"`` only the values the backward pass consumes (JAX's
        ``jax.checkpoint``, whose recomputation is dead-code-eliminated: the attention
        and MLP output projections and the collectives that carry only their outputs
        are not rerun; :func:`mlsys.core.formulas.transformer.residual_rerun_share`).
        No effect unless ``recompute="full"``.
    dropout : bool or None
        The attention and hidden dropouts run: a one-byte mask written and the tensor
        read and written again at each block's bias-dropout-residual, and, where the
        scores are materialised, a dropout pass over them. False for runs that train with
        p = 0 (GPT-NeoX-20B's ``attention-dropout: 0``, ``hidden-dropout: 0``), whose
        dropout kernels PyTorch skips. None (default): the model's published training
        (``TransformerWorkload.training_dropout``), True when that is not known
        (GPT-3-style training with p = 0.1; :func:`training_dropout`).
    fsdp_flat_params : bool
        PyTorch (or fairscale) FSDP's flat parameters: each micro-batch's gradients are
        concatenated from the parameters' views into the flat gradient and pre-divided in
        place before the reduce-scatter
        (:func:`mlsys.core.formulas.layer_time.fsdp_flat_gradient_bytes`); under
        ZeRO-2/3 the first all-gathers and last reduce-scatters of each micro-batch (the
        root unit and block 0) are exposed
        (:func:`mlsys.core.formulas.overlap.fsdp_edge_exposed_time`). False (default):
        Megatron's gradient buffers, which need neither pass, and no edge charged.
    fsdp_per_parameter : bool
        PyTorch FSDP2's per-parameter sharding (``fully_shard``): every all-gathered
        parameter is copied out of the all-gather buffer and every micro-batch's
        gradients are copied into the reduce-scatter buffer in the reduce dtype
        (:func:`mlsys.core.formulas.layer_time.fsdp_per_parameter_copy_bytes`); the
        edges of each micro-batch are exposed as with ``fsdp_flat_params`` (blocks and a
        root unit). Not with ``fsdp_flat_params``.
    cuda_graph_scope : tuple of str
        Parts of each layer replayed from CUDA graphs, which removes their host work
        (Megatron-Core's ``--cuda-graph-scope``): any of ``"attn"``, ``"moe_router"``,
        ``"moe_preprocess"`` (Transformer Engine's per-layer graphs; the dropless expert
        dispatch stays eager), or ``("full_iteration",)``, the whole step as one graph
        (a sync-free MoE path). Only MoE layers are priced with their host work: the
        dispatcher's device-to-host wait for the token counts keeps the host from running
        ahead (:func:`mlsys.core.formulas.moe.moe_layer_host_time`). Default ``()``:
        eager.
    pipeline_p2p : {"megatron", "deepspeed"}
        How activations travel between pipeline stages: Megatron-LM's scatter/gather
        split with paired sends (Narayanan et al. 2021, Sec. 4.1), or DeepSpeed's
        pipeline engine, whole tensors in four unpaired transfers per micro-batch
        (``deepspeed/runtime/pipe/schedule.py``, ``TrainSchedule``).

    Examples
    --------
    >>> lay = TrainingLayout(tp=8, pp=8, microbatch_count=64, v_stages=2)
    >>> lay.model_parallel_size
    64
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tp: int = 1
    pp: int = 1
    dp: int | None = None
    ep: int = 1
    cp: int = 1
    microbatch_count: int = 1
    v_stages: int = 1
    schedule: Literal["1f1b", "interleaved", "gpipe"] = "1f1b"
    zero_stage: int = 0
    recompute: Literal["none", "selective", "full", "dots"] = "none"
    sequence_parallel: bool = False
    flash_attention: bool = True
    attention_kernel: Literal["fused", "flash2", "flash1"] = "fused"
    elementwise_kernels: Literal["fused", "eager", "eager_fused_norm"] = "fused"
    grad_dtype: str | None = None
    tp_comm_overlap: bool = False
    cp_comm_type: Literal["p2p", "all_gather"] = "p2p"
    grad_accumulation_fusion: bool = True
    recompute_num_layers: int | None = None
    pipeline_p2p: Literal["megatron", "deepspeed"] = "megatron"
    recompute_rerun: Literal["layer", "residuals"] = "layer"
    fsdp_flat_params: bool = False
    fsdp_per_parameter: bool = False
    dropout: bool | None = None
    cuda_graph_scope: tuple[str, ...] = ()

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as exc:
            # surface the ParameterError a validator raised (name, value, allowed), not
            # pydantic's wrapper; anything else (an unknown field) becomes one too
            for err in exc.errors():
                cause = (err.get("ctx") or {}).get("error")
                if isinstance(cause, ParameterError):
                    raise cause from None
            first = exc.errors()[0]
            name = ".".join(str(p) for p in first.get("loc", ())) or "layout"
            raise ParameterError(name, first.get("input"), first.get("msg", "")) from None

    @field_validator("tp", "pp", "ep", "cp", "microbatch_count", "v_stages", mode="before")
    @classmethod
    def _positive(cls, value: Any, info: Any) -> int:
        return _positive_int(_FIELD_PARAMETER.get(info.field_name, info.field_name), value)

    @field_validator("dp", mode="before")
    @classmethod
    def _dp(cls, value: Any) -> int | None:
        return None if value is None else _positive_int("dp_size", value)

    @field_validator("zero_stage", mode="before")
    @classmethod
    def _zero(cls, value: Any) -> int:
        stage = count("zero_stage", value, 0, "0, 1, 2 or 3")
        if stage > 3:
            raise ParameterError("zero_stage", value, "0, 1, 2 or 3")
        return stage

    @field_validator("recompute", mode="before")
    @classmethod
    def _recompute(cls, value: Any) -> str:
        key = value.lower() if isinstance(value, str) else None
        if key not in RECOMPUTE_NAMES:
            raise ParameterError(
                "recompute", value, "one of " + ", ".join(map(repr, RECOMPUTE_NAMES))
            )
        return key

    @field_validator("schedule", mode="before")
    @classmethod
    def _schedule(cls, value: Any) -> str:
        key = value.lower().replace("-", "").replace("_", "") if isinstance(value, str) else None
        if key not in SCHEDULE_NAMES:
            raise ParameterError("schedule", value, "'1f1b', 'interleaved' or 'gpipe'")
        return key

    @field_validator(
        "sequence_parallel",
        "flash_attention",
        "tp_comm_overlap",
        "grad_accumulation_fusion",
        "fsdp_flat_params",
        "fsdp_per_parameter",
        "dropout",
        mode="before",
    )
    @classmethod
    def _flag(cls, value: Any, info: Any) -> bool | None:
        if value is None and info.field_name == "flash_attention":
            return True
        if value is None and info.field_name == "dropout":
            return None  # the model's published training decides (training_dropout)
        return flag(info.field_name, value)

    @field_validator("attention_kernel", mode="before")
    @classmethod
    def _attention_kernel(cls, value: Any) -> str:
        key = value.lower().replace("-", "").replace("_", "") if isinstance(value, str) else None
        if key not in ("fused", "flash2", "flash1"):
            raise ParameterError("attention_kernel", value, "'fused', 'flash2' or 'flash1'")
        return key

    @field_validator("cp_comm_type", mode="before")
    @classmethod
    def _cp_comm_type(cls, value: Any) -> str:
        key = value.lower().replace("-", "_") if isinstance(value, str) else None
        if key not in CP_COMM_TYPES:
            raise ParameterError("cp_comm_type", value, "'p2p' or 'all_gather'")
        return key

    @field_validator("recompute_num_layers", mode="before")
    @classmethod
    def _recompute_num_layers(cls, value: Any) -> int | None:
        return None if value is None else _positive_int("recompute_num_layers", value)

    @field_validator("pipeline_p2p", "recompute_rerun", "elementwise_kernels", mode="before")
    @classmethod
    def _choice(cls, value: Any, info: Any) -> str:
        allowed = _CHOICES[info.field_name]
        key = value.lower().replace("-", "_") if isinstance(value, str) else None
        if key not in allowed:
            raise ParameterError(info.field_name, value, " or ".join(repr(a) for a in allowed))
        return key

    @field_validator("cuda_graph_scope", mode="before")
    @classmethod
    def _cuda_graph_scope(cls, value: Any) -> tuple[str, ...]:
        if value is None:
            return ()
        items = (value,) if isinstance(value, str) else value
        try:
            keys = tuple(sorted({str(v).lower() for v in items}))
        except TypeError:
            raise ParameterError(
                "cuda_graph_scope", value, "a tuple of " + ", ".join(map(repr, CUDA_GRAPH_SCOPES))
            ) from None
        if any(k not in CUDA_GRAPH_SCOPES for k in keys) or (
            "full_iteration" in keys and len(keys) > 1
        ):
            raise ParameterError(
                "cuda_graph_scope",
                value,
                "'full_iteration' alone, or any of 'attn', 'moe_router', 'moe_preprocess'",
            )
        return keys

    @field_validator("grad_dtype", mode="before")
    @classmethod
    def _grad_dtype(cls, value: Any) -> str | None:
        if value is None:
            return None
        from mlsys.core.precision import normalize_precision

        return normalize_precision(value, "grad_dtype")

    @model_validator(mode="after")
    def _structure(self) -> TrainingLayout:
        if self.v_stages > 1 and self.pp == 1:
            raise ParameterError(
                "v_stages", self.v_stages, "1 when pp_size is 1 (interleaving needs a pipeline)"
            )
        if self.schedule == "gpipe" and self.v_stages > 1:
            raise ParameterError("v_stages", self.v_stages, "1 with schedule='gpipe'")
        if self.fsdp_flat_params and self.fsdp_per_parameter:
            raise ParameterError(
                "fsdp_per_parameter",
                self.fsdp_per_parameter,
                "False with fsdp_flat_params=True (FSDP1's flat parameters or FSDP2's "
                "per-parameter sharding, not both)",
            )
        return self

    # -- derived -----------------------------------------------------------------------
    @property
    def model_parallel_size(self) -> int:
        """``tp·pp·ep·cp``: accelerators one data-parallel replica spans (count)."""
        return self.tp * self.pp * self.ep * self.cp

    @property
    def recompute_code(self) -> Recompute:
        """:class:`Recompute` of ``recompute``."""
        return RECOMPUTE_NAMES[self.recompute]

    @property
    def cp_all_gather(self) -> bool:
        """Whether context parallelism all-gathers K and V (``cp_comm_type``)."""
        return self.cp_comm_type == "all_gather"

    @property
    def schedule_code(self) -> Schedule:
        """:class:`Schedule` of ``schedule``."""
        return SCHEDULE_NAMES[self.schedule]

    def with_dp(self, total_accelerators: int) -> TrainingLayout:
        """This layout with ``dp`` derived from a fleet size when it was left None.

        Parameters
        ----------
        total_accelerators : int
            Accelerators in the fleet (count).

        Returns
        -------
        TrainingLayout
            ``self`` when ``dp`` is set; else a copy with ``dp = N // (tp·pp·ep·cp)``
            (0 when that does not divide, which :meth:`check` then rejects).
        """
        if self.dp is not None:
            return self
        mp = self.model_parallel_size
        dp = total_accelerators // mp if total_accelerators % mp == 0 else 0
        if dp == 0:
            raise ParameterError(
                "tp_size*pp_size*ep_size*cp_size",
                mp,
                f"a divisor of the fleet's {total_accelerators} accelerators",
            )
        return self.model_copy(update={"dp": dp})

    def check(
        self, model: Any, total_accelerators: int | None, batch_size: int, seq_len: int
    ) -> str | None:
        """Apply the rules that need the model and the fleet.

        Parameters
        ----------
        model : TransformerWorkload
            The network (heads, layers, experts).
        total_accelerators : int or None
            Fleet size (count); None skips the world-size rule (a per-device solver).
        batch_size : int
            Global batch, in sequences.
        seq_len : int
            Tokens per sequence.

        Returns
        -------
        str or None
            None when the layout can run, else the reason (the first rule broken).
        """
        rule = self.violation(model, total_accelerators, batch_size, seq_len)
        return (
            None
            if rule is None
            else rule.describe(self, layout_facts(model, batch_size, seq_len, total_accelerators))
        )

    def violation(
        self, model: Any, total_accelerators: int | None, batch_size: int, seq_len: int
    ) -> LayoutRule | None:
        """The first rule of :data:`LAYOUT_RULES` this layout breaks (None if none).

        Parameters
        ----------
        model, total_accelerators, batch_size, seq_len
            As in :meth:`check`.

        Returns
        -------
        LayoutRule or None
        """
        facts = layout_facts(model, batch_size, seq_len, total_accelerators)
        return first_violation(self, facts)

    def require(
        self, model: Any, total_accelerators: int | None, batch_size: int, seq_len: int
    ) -> None:
        """Raise :class:`~mlsys.core.errors.ParameterError` for the first rule broken.

        Parameters
        ----------
        model, total_accelerators, batch_size, seq_len
            As in :meth:`check`.

        Raises
        ------
        ParameterError
            Naming the parameter, its value and what is allowed.
        """
        facts = layout_facts(model, batch_size, seq_len, total_accelerators)
        rule = first_violation(self, facts)
        if rule is not None:
            raise ParameterError(rule.parameter, rule.value(self, facts), rule.allowed(self, facts))


_FIELD_PARAMETER = {
    "tp": "tp_size",
    "pp": "pp_size",
    "ep": "ep_size",
    "cp": "cp_size",
    "microbatch_count": "microbatch_count",
    "v_stages": "v_stages",
}


def _positive_int(name: str, value: Any) -> int:
    return positive_int(name, value)


# -- the rulebook -------------------------------------------------------------------------
@dataclass(frozen=True)
class LayoutFacts:
    """What the rules need of the model, fleet and batch (plain numbers).

    Attributes
    ----------
    heads, layers, experts : int
        Attention heads, transformer layers, routed experts (1 for a dense model).
    is_moe : bool
        Whether the model has routed experts.
    batch : int
        Global batch, in sequences.
    seq_len : int
        Tokens per sequence.
    total : int or None
        Accelerators in the fleet (None: not checked).
    """

    heads: int
    layers: int
    experts: int
    is_moe: bool
    batch: int
    seq_len: int
    total: int | None


def layout_facts(
    model: Any, batch_size: int, seq_len: int, total_accelerators: int | None
) -> LayoutFacts:
    """The :class:`LayoutFacts` of a model, batch and fleet size.

    Parameters
    ----------
    model : TransformerWorkload
        The network.
    batch_size : int
        Global batch, in sequences.
    seq_len : int
        Tokens per sequence.
    total_accelerators : int or None
        Fleet size (count), or None.

    Returns
    -------
    LayoutFacts
    """
    moe = bool(model.is_moe)
    return LayoutFacts(
        heads=int(model.heads),
        layers=int(model.layers),
        experts=int(model.experts) if moe else 1,
        is_moe=moe,
        batch=int(batch_size),
        seq_len=int(seq_len),
        total=None if total_accelerators is None else int(total_accelerators),
    )


@dataclass(frozen=True)
class LayoutRule:
    """One rule of a layout: a vectorisable test, the parameter it blames, the reason.

    ``broken(x, f)`` takes an object with attributes ``tp, pp, dp, ep, cp,
    microbatch_count, v_stages`` — a :class:`TrainingLayout` (ints) or a namespace of
    numpy arrays — and :class:`LayoutFacts`; it returns a bool or a bool array.
    """

    code: Rejection
    parameter: str
    reason: str
    broken: Callable[[Any, LayoutFacts], Any]
    value: Callable[[Any, LayoutFacts], Any]
    allowed: Callable[[Any, LayoutFacts], str]

    def describe(self, x: Any, f: LayoutFacts) -> str:
        """A sentence: parameter, value, what is allowed.

        Parameters
        ----------
        x : TrainingLayout
            The layout.
        f : LayoutFacts
            Model, fleet and batch facts.

        Returns
        -------
        str
        """
        return f"{self.parameter}={self.value(x, f)!r}: expected {self.allowed(x, f)}"


def _world_broken(x: Any, f: LayoutFacts) -> Any:
    if f.total is None:
        return x.tp != x.tp  # never (keeps the array shape)
    return x.tp * x.pp * x.dp * x.ep * x.cp != f.total


def _batch_broken(x: Any, f: LayoutFacts) -> Any:
    return f.batch % (x.dp * x.ep) != 0


def _microbatch_broken(x: Any, f: LayoutFacts) -> Any:
    # evaluated only where the batch rule holds; "//" keeps it an integer there
    return (f.batch // (x.dp * x.ep)) % x.microbatch_count != 0


def _experts_broken(x: Any, f: LayoutFacts) -> Any:
    return (x.ep > 1) & ((not f.is_moe) | (f.experts % x.ep != 0))


def _experts_allowed(x: Any, f: LayoutFacts) -> str:
    if not f.is_moe:
        return "1 for a dense (non-MoE) model"
    return f"a divisor of experts={f.experts}"


LAYOUT_RULES: tuple[LayoutRule, ...] = (
    LayoutRule(
        Rejection.WORLD,
        "tp_size*pp_size*dp_size*ep_size*cp_size",
        "tp·pp·dp·ep·cp is not the fleet size",
        _world_broken,
        lambda x, f: x.tp * x.pp * x.dp * x.ep * x.cp,
        lambda x, f: f"the fleet's {f.total} accelerators",
    ),
    LayoutRule(
        Rejection.HEADS,
        "tp_size",
        "heads not divisible by tp",
        lambda x, f: f.heads % x.tp != 0,
        lambda x, f: x.tp,
        lambda x, f: f"a divisor of heads={f.heads} (tensor parallelism splits the heads)",
    ),
    LayoutRule(
        Rejection.LAYERS,
        "pp_size",
        "more pipeline stages than layers",
        lambda x, f: x.pp > f.layers,
        lambda x, f: x.pp,
        lambda x, f: f"at most layers={f.layers}",
    ),
    LayoutRule(
        Rejection.EXPERTS,
        "ep_size",
        "experts not divisible by ep",
        _experts_broken,
        lambda x, f: x.ep,
        _experts_allowed,
    ),
    LayoutRule(
        Rejection.CONTEXT,
        "cp_size",
        "sequence length not divisible by 2·cp",
        lambda x, f: (x.cp > 1) & (f.seq_len % (2 * x.cp) != 0),
        lambda x, f: x.cp,
        lambda x, f: f"1 or a size with seq_len {f.seq_len} divisible by 2·cp_size",
    ),
    LayoutRule(
        Rejection.BATCH,
        "batch_size",
        "global batch not divisible by the dp·ep data-parallel ranks",
        _batch_broken,
        lambda x, f: f.batch,
        lambda x, f: f"a multiple of dp·ep = {x.dp * x.ep} data-parallel ranks",
    ),
    LayoutRule(
        Rejection.MICROBATCH,
        "microbatch_count",
        "micro-batch count does not divide the per-replica batch",
        _microbatch_broken,
        lambda x, f: x.microbatch_count,
        lambda x, f: f"a divisor of the per-replica batch {f.batch // (x.dp * x.ep)}",
    ),
    LayoutRule(
        Rejection.INTERLEAVE,
        "microbatch_count",
        "interleaving needs the micro-batch count to be a multiple of pp",
        lambda x, f: (x.v_stages > 1) & (x.microbatch_count % x.pp != 0),
        lambda x, f: x.microbatch_count,
        lambda x, f: f"a multiple of pp_size = {x.pp} with v_stages > 1 (Megatron-LM)",
    ),
)
"""Every rule a layout must meet besides its own fields, in the order they are checked."""

REJECTION_REASONS: dict[int, str] = {0: "", int(Rejection.MEMORY): "does not fit in memory"}
REJECTION_REASONS.update({int(r.code): r.reason for r in LAYOUT_RULES})
"""Why a layout was rejected, by :class:`Rejection` code."""


def first_violation(x: Any, f: LayoutFacts) -> LayoutRule | None:
    """The first rule of :data:`LAYOUT_RULES` a single layout breaks.

    Parameters
    ----------
    x : TrainingLayout
        One layout with ``dp`` set.
    f : LayoutFacts
        Model, fleet and batch facts.

    Returns
    -------
    LayoutRule or None
    """
    for rule in LAYOUT_RULES:
        if rule.code == Rejection.MICROBATCH and _batch_broken(x, f):
            continue
        if rule.broken(x, f):
            return rule
    return None


def rejection_codes(x: Any, f: LayoutFacts) -> np.ndarray:
    """The :class:`Rejection` code of each of many layouts (0 where every rule holds).

    Applies the functions of :data:`LAYOUT_RULES` to arrays: the same rules, in the same
    order, as :func:`first_violation` on one layout.

    Parameters
    ----------
    x : object
        Attributes ``tp, pp, dp, ep, cp, microbatch_count, v_stages``: integer numpy
        arrays of one shape.
    f : LayoutFacts
        Model, fleet and batch facts.

    Returns
    -------
    ndarray of int
        One code per layout.
    """
    code = np.zeros(np.shape(x.tp), dtype=np.int64)
    batch_ok = ~np.asarray(_batch_broken(x, f))
    for rule in reversed(LAYOUT_RULES):  # earlier rules overwrite later ones
        broken = np.asarray(rule.broken(x, f), dtype=bool)
        if rule.code == Rejection.MICROBATCH:
            broken = broken & batch_ok
        code = np.where(broken, int(rule.code), code)
    return code
