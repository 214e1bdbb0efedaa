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
* Ranks are ordered ``tp → cp → ep → dp → pp`` (Megatron-Core): a tensor-parallel group
  of at most a node's accelerators rides NVLink, anything larger the scale-out fabric;
  the context-parallel ring sits inside the node before data parallelism.
* Gradients are stored and reduced at ``grad_dtype``: by default
  :func:`mlsys.core.precision.default_grad_dtype` — fp32 for bf16 compute
  (Megatron-LM forces fp32 gradient accumulation and all-reduce for bf16), bf16 for fp8
  and fp4 compute (NeMo's and Megatron-Bridge's narrow-format recipes set
  ``grad_reduce_in_fp32 = False``) and fp16 for fp16. Weights and
  activations are 16-bit below 32-bit compute (FP8 casts are made per matmul).
  :class:`~mlsys.core.solvers.memory.MemoryModel`'s training path is the same memory
  function (:func:`mlsys.core.solvers._layout.memory_terms`), so the two solvers
  report the same memory for the same layout (a property test checks 10^4 layouts);
  neither adds a framework allowance by default.
* The layout is one :class:`~mlsys.core.layout.TrainingLayout` (pass ``layout=`` or
  the keywords), checked once against :data:`mlsys.core.layout.LAYOUT_RULES` — the
  rules the search applies to arrays.
* MFU and HFU are computed from the result: model FLOPs (Megatron-LM / Korthikanti
  et al. convention, attention counted over all ``s`` keys) over step time over the
  fleet's dense peak; HFU adds the recomputed FLOPs.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache
from typing import Any, ClassVar

from mlsys.core.errors import InfeasibleError, ParameterError
from mlsys.core.layout import TOPOLOGY_NAMES, Recompute, TrainingLayout, training_dropout
from mlsys.core.provenance import record
from mlsys.core.results import Result
from mlsys.core.solvers import _checks, _layout
from mlsys.core.solvers._explain import memory_tree, step_sensitivity, step_tree
from mlsys.core.solvers._layout import build_problem
from mlsys.core.solvers._memo import identity_memo
from mlsys.core.terms import Term

__all__ = ["DistributedModel", "DistributedResult", "DistributedMemory", "build_problem"]


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

    def explain(self) -> Term:
        """What each byte is: weights, gradients and optimizer state (the model states ZeRO
        partitions) and activations, each with its formula, summed in the solver's order
        so the root is ``total`` exactly.

        Returns
        -------
        Term
            Root ``"memory per accelerator"`` in bytes; renders as a Markdown table.

        Examples
        --------
        >>> mem = DistributedMemory(weights=4e9, gradients=8e9, optimizer=24e9,
        ...     activations=12e9, total=48e9, capacity=80e9)
        >>> tree = mem.explain()
        >>> tree.value, round(tree["activations"].share, 2)
        (48000000000.0, 0.25)
        """
        v = self._values
        parts = {k: v[k] for k in ("weights", "gradients", "optimizer", "activations")}
        return memory_tree(parts, {"capacity": f"{v['capacity'] / 1e9:.1f} GB"})


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
    moe_host_time : Quantity [s]
        Host work of the MoE layers on the critical path: their dropless dispatcher waits
        for the token counts every forward pass, so the host cannot run ahead of the
        device (:func:`mlsys.core.formulas.moe.moe_layer_host_time`); 0 for a dense
        model or with ``cuda_graph_scope=("full_iteration",)``.
    pp_communication_time : Quantity [s]
        Pipeline point-to-point sends.
    cp_communication_time : Quantity [s]
        Context-parallel (ring attention) K/V exchange left exposed after overlapping
        each step with one block's attention.
    cp_communication_total : Quantity [s]
        All ring-attention exchange, hidden or not.
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
        ``{"dp", "tp", "pp", "ep"}`` sizes, and ``"cp"`` when ``cp_size > 1``.
    layout : TrainingLayout
        The layout solved, with ``dp`` derived from the fleet.
    notes : tuple of str
        Assumptions worth knowing for this configuration.
    """

    @property
    def error_band(self) -> float | None:
        """Expected relative error of ``step_time`` (a fraction): nine in ten published
        training runs of the same kind (dense or mixture-of-experts) from sources mlsys
        was not tuned on came out within ± this
        (:mod:`mlsys.core.catalog.bands`, from :mod:`mlsys.validation.loso`); ``None``
        where no comparable cases exist. ``fmt(res.step_time, band=True)`` prints it."""
        band = self._band()
        return None if band is None else band.fraction

    @property
    def error_band_source(self) -> str | None:
        """Where :attr:`error_band` comes from: the kind of case, how many, their mean."""
        band = self._band()
        return None if band is None else band.source

    def _band(self) -> Any:
        from mlsys.core.catalog.bands import result_error_band

        return result_error_band(self._origin, "DistributedModel", "step_time")

    _units: ClassVar[dict[str, str | None]] = {
        "step_time": "s",
        "compute_time": "s",
        "tp_communication_time": "s",
        "ep_communication_time": "s",
        "moe_host_time": "s",
        "pp_communication_time": "s",
        "cp_communication_time": "s",
        "cp_communication_total": "s",
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
        "layout": None,
        "notes": None,
    }
    _aliases: ClassVar[dict[str, str]] = {
        "communication_latency": "dp_communication_time",
        "step_latency_total": "step_time",
        "effective_throughput": "tokens_per_second",
        "pipeline_bubble_latency": "pipeline_bubble_time",
    }

    def explain(self, depth: int | None = None) -> Term:
        """Where the step time goes: the solver's own terms as a tree.

        Every term is one the solver added into ``step_time`` (per-layer GEMMs,
        attention, element-wise and kernel overheads, each collective by group and
        fabric, pipeline sends and bubble, the optimizer, the exposed data-parallel
        time and the slowdown its hidden part causes), with its share of the step,
        what it runs beside (and how much of it is hidden there, not counted), the
        formula it comes from and the inputs it used. The terms add up to
        ``step_time`` exactly: they are the numbers the solver summed, grouped as it
        summed them (a flat sum of the leaves in another order agrees to rounding).

        Parameters
        ----------
        depth : int, optional
            Keep levels down to ``depth`` (1: the step's groups), folding the rest into
            their parents. None: every term.

        Returns
        -------
        Term
            Renders as a Markdown table in a Quarto cell or notebook, as aligned text
            with ``print``; ``to_dict()`` gives the data.

        Raises
        ------
        ParameterError
            For a result not made by ``DistributedModel.solve``, or a depth below 1.

        Examples
        --------
        >>> from mlsys import Models, Nodes, Fabrics, Fleet
        >>> fleet = Fleet(node=Nodes.DGX_A100, count=8, fabric=Fabrics.IB_HDR)
        >>> res = DistributedModel().solve(Models.GPT3_175B, fleet, batch_size=64,
        ...     tp_size=8, pp_size=8, microbatch_count=64, recompute="selective",
        ...     sequence_parallel=True)
        >>> tree = res.explain()
        >>> tree.value == res.si("step_time")
        True
        >>> [child.name for child in tree.children]
        ['compute', 'communication, exposed', 'pipeline bubble']
        """
        P, _, out, fleet = self._priced_terms()
        lay = self._values["layout"]
        sizes = {
            "tp": lay.tp, "pp": lay.pp, "dp": lay.dp, "ep": lay.ep, "cp": lay.cp,
            "m": lay.microbatch_count, "v": lay.v_stages, "zero": lay.zero_stage,
        }  # fmt: skip
        intra, inter = _fabric_labels(fleet)
        tree = step_tree(out, P, sizes, intra, inter)
        if depth is None:
            return tree
        if type(depth) is not int or depth < 1:  # True is not a depth
            raise ParameterError("depth", depth, "None or an integer of at least 1")
        return _fold(tree, depth)

    def sensitivity(self, factor: float | None = None) -> dict[str, float]:
        """What each input does to the step time, re-priced by the same model.

        Parameters
        ----------
        factor : float, optional
            None (default): each input's elasticity ``d ln(step) / d ln(input)`` (-0.3:
            1% more of it, 0.3% less step time). A factor: the step time's relative change
            when that input alone is multiplied by it (``factor=2`` with -0.12 for the
            scale-up bandwidth: doubling NVLink bandwidth saves 12% of the step).

        Returns
        -------
        dict of str to float
            Input to elasticity (or relative change), largest effect first: peak
            FLOP/s, HBM bandwidth, scale-up and scale-out bandwidth and latency, kernel
            overhead, MoE host time per operation, each scaled in the problem the solver
            built (a fabric's bandwidth as the collectives and NCCL's protocol model read
            it); inputs the step does not depend on left out.

        Raises
        ------
        ParameterError
            For a factor that is not positive, or a result not made by
            ``DistributedModel.solve``.
        """
        P, args, _, _ = self._priced_terms()
        out = step_sensitivity(P, args, factor)
        return dict(sorted(out.items(), key=lambda kv: -abs(kv[1])))

    def _priced_terms(self) -> tuple[Any, ...]:
        priced = self.__dict__.get("_priced")
        if priced is None:
            raise ParameterError(
                "result", type(self).__name__, "a result of DistributedModel.solve"
            )
        return priced


def _fabric_labels(fleet: Any) -> tuple[str, str]:
    """Short names of a fleet's node fabric and network ("NVLink 3 + NVSwitch")."""

    def short(fabric: Any) -> str:
        label = str(getattr(fabric, "label", None) or getattr(fabric, "name", "fabric"))
        return label.split(" (")[0]

    return short(fleet.node.intra_fabric), short(fleet.fabric)


def _fold(tree: Term, depth: int, level: int = 0) -> Term:
    """``tree`` with the levels below ``depth`` folded into their parents."""
    if level >= depth:
        return replace(tree, children=())
    return replace(tree, children=tuple(_fold(c, depth, level + 1) for c in tree.children))


# -- the layout: built and validated once per distinct set of keywords --------------------
@lru_cache(maxsize=1024, typed=True)  # typed: True must not hit 1
def _layout_from_keywords(
    tp: Any, pp: Any, ep: Any, cp: Any, v: Any, m: Any, zero: Any, rc: Any, sp: Any,
    sched: Any, flash: Any, grad_dtype: Any, tp_overlap: Any = False,
    cp_comm_type: Any = "p2p", gaf: Any = True, rnl: Any = None, p2p: Any = "megatron",
    attn: Any = "fused", rerun: Any = "layer", ffp: Any = False, drop: Any = None,
    elem: Any = "fused", ffp2: Any = False, graphs: Any = (),
) -> TrainingLayout:  # fmt: skip
    return TrainingLayout(
        tp=tp, pp=pp, ep=ep, cp=cp, v_stages=v, microbatch_count=m, zero_stage=zero,
        recompute=rc, sequence_parallel=sp, schedule=sched, flash_attention=flash,
        grad_dtype=grad_dtype, tp_comm_overlap=tp_overlap, cp_comm_type=cp_comm_type,
        grad_accumulation_fusion=gaf, recompute_num_layers=rnl, pipeline_p2p=p2p,
        attention_kernel=attn, recompute_rerun=rerun, fsdp_flat_params=ffp, dropout=drop,
        elementwise_kernels=elem, fsdp_per_parameter=ffp2, cuda_graph_scope=graphs,
    )  # fmt: skip


def layout_from_arguments(*args: Any) -> TrainingLayout:
    """A :class:`TrainingLayout` from ``solve``'s layout arguments, in the order of
    ``_layout_from_keywords`` (memoised; unhashable values are validated without the memo,
    which raises for them or builds the layout).

    Parameters
    ----------
    *args
        ``tp, pp, ep, cp, v, m, zero, rc, sp, sched, flash, grad_dtype, tp_overlap,
        cp_comm_type, gaf, rnl, p2p, attn, rerun, ffp, drop, elem, ffp2, graphs``:
        :meth:`DistributedModel.solve`'s keywords of the same meaning, positionally (a
        solve's hot path: no keyword dict).

    Returns
    -------
    TrainingLayout
    """
    try:
        return _layout_from_keywords(*args)
    except TypeError:  # an unhashable argument
        return _layout_from_keywords.__wrapped__(*args)


@identity_memo(objects=3)
def resolve_layout(
    layout: TrainingLayout, model: Any, fleet: Any, batch: int, seq_len: int
) -> TrainingLayout:
    """``layout`` with ``dp`` derived from the fleet, checked against every layout rule.

    Parameters
    ----------
    layout : TrainingLayout
        The layout (``dp`` None or the fleet's).
    model : TransformerWorkload
        The network.
    fleet : Fleet
        The cluster.
    batch : int
        Global batch in sequences.
    seq_len : int
        Tokens per sequence.

    Returns
    -------
    TrainingLayout
        With ``dp`` set.

    Raises
    ------
    ParameterError
        Naming the parameter, value and allowed values of the first rule broken
        (:data:`mlsys.core.layout.LAYOUT_RULES`).
    """
    n = fleet.total_accelerators
    lay = layout.with_dp(n)  # memoised: the same layout object comes back for one fleet
    _layout.require_rules(lay, model, n, batch, seq_len)
    return lay


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
        cp_size: int = 1,
        layout: TrainingLayout | None = None,
        tp_comm_overlap: bool = False,
        cp_comm_type: str = "p2p",
        grad_accumulation_fusion: bool = True,
        recompute_num_layers: int | None = None,
        pipeline_p2p: str = "megatron",
        attention_kernel: str = "fused",
        recompute_rerun: str = "layer",
        fsdp_flat_params: bool = False,
        dropout: bool | None = None,
        elementwise_kernels: str = "fused",
        fsdp_per_parameter: bool = False,
        cuda_graph_scope: Any = (),
        optimizer: str = "adam",
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
            :data:`mlsys.core.solvers._layout.NETWORK_EFFICIENCY`, except inside a GPU
            node, where tensor-parallel collectives follow NCCL's protocol model
            (:func:`mlsys.core.formulas.collectives.nccl_allreduce_time`). The GEMMs run
            at the compute fraction less their shapes' tile and wave quantisation
            (:func:`mlsys.core.formulas.layer_time.linear_layers_time`).
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
        recompute : {"none", "selective", "full", "dots"}
            Activation recomputation
            (:data:`mlsys.core.formulas.memory.RECOMPUTE_MODES`; ``"dots"`` keeps the
            weight matmuls' outputs, as JAX's ``checkpoint_dots_with_no_batch_dims``).
        sequence_parallel : bool
            Megatron sequence parallelism (with ``tp_size > 1``).
        overlap : bool
            Overlap data-parallel communication with the backward pass.
        grad_dtype : str, optional
            Precision of the gradient buffers and their reduction (default
            :func:`mlsys.core.precision.default_grad_dtype`: fp32 for bf16, bf16 for
            fp8 and fp4, fp16 for fp16 training). The memory defaults stand for
            Megatron-LM's bf16 training (fp32 gradient buffers, fp32 master weights and
            Adam moments, ``optimizer="adam"``) and for NeMo's and Megatron-Bridge's FP8
            recipes (``grad_reduce_in_fp32 = False``: bf16 gradient buffers). NeMo's
            Nemotron-4 340B layout on 128 H100 (TP 8, PP 8, VP 12, FP8; NeMo 24.07
            performance summary) needs 76.0 GB a GPU with the defaults (bf16
            gradients; no dropout, as the model trained); with fp32 gradient buffers and
            dropout masks it would need 88.6 GB, which no H100 has.
        raise_errors : bool
            Raise :class:`InfeasibleError` instead of returning ``feasible=False``.
        schedule : {"1f1b", "interleaved", "gpipe"}
            Pipeline schedule (``"interleaved"`` is 1F1B with ``v_stages > 1``).
        flash_attention : bool, optional
            Fused attention that never writes the ``s×s`` scores (default True). Pass
            False for 2021–22 Megatron-LM, whose softmax outputs were materialised.
        cp_size : int
            Context-parallel size: each sequence is split over ``cp_size`` ranks (ring
            attention); ``dp = N/(tp·pp·ep·cp)``.
        layout : TrainingLayout, optional
            The whole layout at once; when given it replaces ``tp_size``,
            ``pp_size``, ``ep_size``, ``cp_size``, ``v_stages``, ``microbatch_count``,
            ``zero_stage``, ``recompute``, ``sequence_parallel``, ``schedule``,
            ``flash_attention``, ``grad_dtype``, ``tp_comm_overlap``, ``cp_comm_type``,
            ``grad_accumulation_fusion``, ``recompute_num_layers``, ``pipeline_p2p``,
            ``attention_kernel`` and ``recompute_rerun``.
        tp_comm_overlap : bool
            Overlap each tensor-parallel collective with the GEMM that produces or
            consumes it, as Transformer Engine's userbuffers pair them (Megatron-LM's
            ``--tp-comm-overlap``, which needs sequence parallelism; without it the
            option has no effect): pipelined in ``tp_size`` chunks or in bulk, a
            collective longer than its own GEMM showing through
            (:func:`mlsys.core.formulas.overlap.userbuffers_exposed_time`).
        cp_comm_type : {"p2p", "all_gather"}
            Context parallelism's K/V exchange (Megatron-Core's ``--cp-comm-type``):
            ``"p2p"`` a ring hidden behind the attention blocks (default),
            ``"all_gather"`` an exposed all-gather of K, V and reduce-scatter of their
            gradients, as Llama 3 (Dubey et al. 2024, Sec. 3.3.2).
        grad_accumulation_fusion : bool
            The weight-gradient GEMMs accumulate into the gradient buffer in their
            epilogue (Megatron-LM's ``--gradient-accumulation-fusion``, default since
            2022; Transformer Engine). False prices a separate accumulation kernel per
            micro-batch, ``e + 2·e_g`` bytes per local parameter (Megatron-LM 2021's
            local DDP, DeepSpeed, PyTorch DDP:
            :func:`mlsys.core.formulas.layer_time.gradient_accumulation_bytes`).
        recompute_num_layers : int, optional
            With ``recompute="full"``, recompute only this many layers of each model
            chunk (Megatron-LM's ``--recompute-method block --recompute-num-layers``):
            those keep only their input and rerun their forward; the others keep every
            activation. None: all of them.
        pipeline_p2p : {"megatron", "deepspeed"}
            How activations travel between pipeline stages. ``"megatron"``: each
            tensor-parallel rank sends ``1/tp`` of the ``T·h`` tensor and the receivers
            all-gather it (scatter/gather, Narayanan et al. 2021, Sec. 4.1), each send
            paired with the opposite receive: two transfers per micro-batch and chunk.
            ``"deepspeed"``: DeepSpeed's pipeline engine (Megatron-DeepSpeed runs, e.g.
            MT-NLG, BLOOM) sends the whole tensor from every rank and runs a stage's four
            transfers one after another (``deepspeed/runtime/pipe/schedule.py``,
            ``TrainSchedule``: ``SendGrad``, ``RecvActivation``, ``SendActivation``,
            ``RecvGrad`` as separate blocking commands).
        attention_kernel : {"fused", "flash2", "flash1"}
            Which fused attention kernel prices attention (with ``flash_attention``):
            ``"fused"`` the device's best measured one (cuDNN's on Hopper and later,
            FlashAttention-2 on Ampere:
            :func:`mlsys.core.solvers.efficiency.fused_attention_fractions`),
            ``"flash2"`` FlashAttention-2 or a kernel of its generation on any device
            (eager PyTorch stacks: flash-attn 2), at its own measured fractions (H100:
            370 and 318 of 989 TFLOP/s, Shah et al. 2024, Fig. 5-6), ``"flash1"``
            FlashAttention(-1) or a kernel of its generation (flash-attn 1, MosaicML's
            Triton port), half FlashAttention-2's rate (Dao 2023:
            :func:`mlsys.core.solvers.efficiency.attention_kernel_fractions`).
        recompute_rerun : {"layer", "residuals"}
            What ``recompute="full"`` reruns: ``"layer"`` (default) the whole forward of
            each layer, as Megatron-LM's and PyTorch's checkpointing re-run the layer's
            function; ``"residuals"`` only what the backward pass consumes, as JAX's
            ``jax.checkpoint`` does (its recomputation is dead-code-eliminated): not the
            attention and MLP output projections, whose outputs feed only the residual
            sum (:func:`mlsys.core.formulas.transformer.residual_rerun_share` of the
            layer's matmuls rerun), nor the collectives that carry only those outputs.
        fsdp_flat_params : bool
            PyTorch (or fairscale) FSDP's flat parameters (default False: Megatron's
            gradient buffers): each micro-batch's gradients are concatenated from the
            parameters' views into the flat gradient and pre-divided in place before the
            reduce-scatter, ``4·e`` bytes per locally held parameter
            (:func:`mlsys.core.formulas.layer_time.fsdp_flat_gradient_bytes`); and,
            under ZeRO-2/3, one flat parameter per wrapped block plus the root unit
            (embeddings, output layer): a micro-batch's first all-gathers (root, block 0)
            and last reduce-scatters (block 0, root) run alone, the rest hides behind
            compute (:func:`mlsys.core.formulas.overlap.fsdp_edge_fraction`,
            :func:`mlsys.core.formulas.overlap.fsdp_edge_exposed_time`).
        fsdp_per_parameter : bool
            PyTorch FSDP2's per-parameter sharding (``fully_shard``; torchtitan): every
            all-gathered parameter copied out of the all-gather buffer (twice a
            micro-batch under ZeRO-3, which reshards after the forward) and the
            gradients copied into the reduce-scatter buffer in ``grad_dtype``
            (:func:`mlsys.core.formulas.layer_time.fsdp_per_parameter_copy_bytes`), and
            the same exposed edges as ``fsdp_flat_params`` (blocks wrapped, a root
            unit). Not with ``fsdp_flat_params``.
        dropout : bool or None
            The attention and hidden dropouts run: each block's bias-dropout-residual
            writes a one-byte mask and, without FlashAttention, the materialised scores
            take a dropout pass (read, write and a one-byte mask per score). False for
            runs trained with p = 0 (GPT-NeoX-20B's ``configs/20B.yml``), whose dropout
            kernels PyTorch skips. None (default): the model's published training
            (``TransformerWorkload.training_dropout``: False for Llama 2 and 3,
            Nemotron-4 and Qwen3 in the catalog), True when it is not known (GPT-3-style
            p = 0.1; :func:`mlsys.core.layout.training_dropout`).
        elementwise_kernels : {"fused", "eager", "eager_fused_norm"}
            How the element-wise work runs: ``"fused"`` (default) one kernel per norm,
            residual add and activation (Megatron-LM, Transformer Engine, XLA,
            ``torch.compile``); ``"eager"`` each operator of the model code its own
            kernel, norms and rotary embedding in fp32 (eager PyTorch without a compiler,
            e.g. torchtitan with ``compile = false``): the operator lists of
            :mod:`mlsys.core.formulas.eager`, forward and backward, and their kernels'
            fixed costs; ``"eager_fused_norm"`` the same with one fused kernel per norm
            (torchtitan's ``fused_rmsnorm``). Memory adds what autograd keeps beyond a fused
            layer's tensors (:func:`mlsys.core.formulas.eager.eager_saved_activation_bytes`).
        cuda_graph_scope : tuple of str
            Parts of each layer replayed from CUDA graphs (Megatron-Core's
            ``--cuda-graph-scope``): any of ``"attn"``, ``"moe_router"``,
            ``"moe_preprocess"``, or ``("full_iteration",)``. Default ``()``, eager.
            It matters for MoE layers, whose dropless dispatcher waits on the device for
            the token counts every forward pass, so their host work shows in the step:
            ``moe_host_time`` (:func:`mlsys.core.formulas.moe.moe_layer_host_time`); a
            graphed part's host work is gone.
        optimizer : str
            The optimizer and how it stores its state, for the memory it holds and the
            bytes its step streams
            (:func:`mlsys.core.formulas.memory.optimizer_state_bytes_per_param`). Default
            ``"adam"``: Megatron's fp32 master weights and moments (12 bytes per
            parameter); ``"adam_param_remainders"``: NeMo's distributed Adam for bf16
            models, the master rebuilt from a 16-bit remainder (10 bytes);
            ``"adam_bf16"``: bf16 moments and no master (4 bytes); ``"adam8bit"`` ...

        Returns
        -------
        DistributedResult

        Raises
        ------
        ParameterError
            For a layout that breaks a rule of :data:`mlsys.core.layout.LAYOUT_RULES`
            (sizes that do not divide the fleet, heads, experts, batch or sequence;
            interleaving with a micro-batch count that is not a multiple of
            ``pp_size``) and unknown names.
        InfeasibleError
            With ``raise_errors=True`` when the layout does not fit in memory.
        """
        if layout is None:
            layout = layout_from_arguments(
                tp_size, pp_size, ep_size, cp_size, v_stages, microbatch_count, zero_stage,
                recompute, sequence_parallel, schedule, flash_attention, grad_dtype,
                tp_comm_overlap, cp_comm_type, grad_accumulation_fusion, recompute_num_layers,
                pipeline_p2p, attention_kernel, recompute_rerun, fsdp_flat_params, dropout,
                elementwise_kernels, fsdp_per_parameter, cuda_graph_scope,
            )  # fmt: skip
        elif not isinstance(layout, TrainingLayout):
            raise ParameterError("layout", layout, "a TrainingLayout")
        batch = _checks.positive_int("batch_size", batch_size)
        if seq_len is not None:
            seq_len = _checks.positive_int("seq_len", seq_len)
        overlap = _checks.flag("overlap", overlap)
        raise_errors = _checks.flag("raise_errors", raise_errors)
        topo_key = topology_override.lower() if isinstance(topology_override, str) else ""
        if topology_override is not None and topo_key not in TOPOLOGY_NAMES:
            raise ParameterError(
                "topology_override", topology_override, "None, 'ring', 'tree' or 'hierarchical'"
            )
        # every argument positional: the memo's fast path (no sorted keyword items)
        P = build_problem(
            model, fleet, batch, precision, efficiency, seq_len, layout.grad_dtype,
            layout.flash_attention, optimizer, layout.attention_kernel, layout.elementwise_kernels,
        )  # fmt: skip
        lay = resolve_layout(layout, model, fleet, batch, int(P.s))
        args = _evaluate_args(lay, model, int(TOPOLOGY_NAMES[topo_key or None]), overlap)
        out = _layout.evaluate(P, *args)
        notes = _notes(model, lay, P, out)
        feasible = bool(out["fits"])
        reason = None if feasible else _infeasibility(out, P, fleet, optimizer, lay)
        if reason is not None and raise_errors:
            raise InfeasibleError(reason)
        result = _result(out, P, lay, feasible, reason, notes)
        # what explain() and sensitivity() read: the terms this solve summed, and the
        # problem and layout to price again
        object.__setattr__(result, "_priced", (P, args, out, fleet))
        return record(
            result, self, model=model, fleet=fleet, batch_size=batch_size,
            precision=precision, layout=lay,
        )  # fmt: skip


def _evaluate_args(lay: TrainingLayout, model: Any, topo: int, overlap: bool) -> tuple[Any, ...]:
    """:func:`~mlsys.core.solvers._layout.evaluate`'s arguments after the problem, for one
    layout (every one positional: its fast path)."""
    tp, pp, v = lay.tp, lay.pp, lay.v_stages
    fraction = _layout.block_recompute_fraction(model.layers, pp, v, lay.recompute_num_layers)
    return (
        float(tp), float(pp), float(lay.ep), float(lay.dp), float(lay.microbatch_count),
        float(v), float(lay.zero_stage), float(lay.recompute_code),
        1.0 if (lay.sequence_parallel and tp > 1) else 0.0,
        int(lay.schedule_code), topo, overlap, float(lay.cp), bool(lay.tp_comm_overlap),
        lay.cp_all_gather, lay.grad_accumulation_fusion, fraction,
        lay.pipeline_p2p == "deepspeed", lay.recompute_rerun == "residuals",
        lay.fsdp_flat_params, training_dropout(lay.dropout, model), lay.fsdp_per_parameter,
        lay.cuda_graph_scope,
    )  # fmt: skip


# -- what a solve says beside its numbers --------------------------------------------------
def _notes(model: Any, lay: TrainingLayout, P: Any, out: dict[str, Any]) -> tuple[str, ...]:
    """Assumptions worth knowing for this configuration (options without effect, groups
    that leave the node, uneven pipeline splits)."""
    tp, pp, cp, v = lay.tp, lay.pp, lay.cp, lay.v_stages
    full = lay.recompute_code == Recompute.FULL
    notes = []
    if model.layers % (pp * v):
        notes.append(
            f"{model.layers} layers do not divide into pp·v = {pp * v} chunks: the "
            f"heaviest device holds {int(out['layers_per_device'])} layers and sets the pace"
        )
    if lay.recompute_num_layers is not None and not full:
        notes.append('recompute_num_layers needs recompute="full": no effect')
    if lay.recompute_rerun == "residuals" and not full:
        notes.append('recompute_rerun needs recompute="full": no effect')
    if lay.sequence_parallel and tp == 1:
        notes.append("sequence_parallel has no effect with tp_size = 1")
    if lay.cuda_graph_scope and not P.moe_layers:
        notes.append(
            "cuda_graph_scope has no effect on a dense model: only MoE layers' host work "
            "is priced (their dispatcher keeps the host from running ahead)"
        )
    if lay.tp_comm_overlap and not (lay.sequence_parallel and tp > 1):
        notes.append(
            "tp_comm_overlap needs sequence parallelism and tp_size > 1 (as Megatron's "
            "--tp-comm-overlap): no effect"
        )
    if out["tp_nodes"] > 1:
        notes.append(
            f"the tensor-parallel group of {tp} spans {int(out['tp_nodes'])} nodes: its "
            "collectives ride the scale-out fabric"
        )
    if not P.flash:
        notes.append("attention scores are materialised in HBM (no FlashAttention)")
    if out["cp_nodes"] > 1:
        notes.append(
            f"the context-parallel ring of {cp} spans {int(out['cp_nodes'])} nodes: its "
            "K/V exchange rides the scale-out fabric"
        )
    return tuple(notes)


def _infeasibility(
    out: dict[str, Any], P: Any, fleet: Any, optimizer: str, lay: TrainingLayout
) -> str:
    """Why a layout does not fit: its memory per accelerator, part by part, and the
    storage that would fit."""
    reason = (
        f"needs {out['memory'] / 1e9:.1f} GB per accelerator (weights "
        f"{out['weights'] / 1e9:.1f}, gradients {out['gradients'] / 1e9:.1f}, optimizer "
        f"{out['optimizer'] / 1e9:.1f}, activations {out['activations'] / 1e9:.1f}); "
        f"the {fleet.node.accelerator.label} has {P.capacity / 1e9:.0f} GB"
    )
    ranks = lay.dp * lay.cp  # a dense model's states shard over dp·cp (ep is 1)
    if lay.zero_stage < 3 and ranks > 1 and P.params_expert == 0.0:
        # weights and gradients sharded too (ZeRO-3, PyTorch FSDP): the optimizer state
        # is already sharded from ZeRO-1 on
        k = out["optimizer"] if lay.zero_stage >= 1 else out["optimizer"] / ranks
        sharded = out["activations"] + (out["weights"] + out["gradients"]) / ranks + k
        if sharded <= P.capacity:
            reason += (
                f"; with the model states fully sharded over the {ranks} data-parallel "
                f"ranks (zero_stage=3, as FSDP shards them) it needs {sharded / 1e9:.1f} GB"
            )
    if optimizer == "adam" and out["optimizer"] > 0.0:
        reason += (
            "; an optimizer that stores less (NeMo's distributed Adam: "
            "optimizer='adam_param_remainders', or 'adam_bf16' with bf16 moments) "
            "or grad_dtype='bf16' may fit"
        )
    return reason


def _result(
    out: dict[str, Any], P: Any, lay: TrainingLayout, feasible: bool, reason: str | None,
    notes: tuple[str, ...],
) -> DistributedResult:  # fmt: skip
    """The result of one solve from :func:`~mlsys.core.solvers._layout.evaluate`'s terms."""
    memory = DistributedMemory(
        weights=out["weights"],
        gradients=out["gradients"],
        optimizer=out["optimizer"],
        activations=out["activations"],
        total=out["memory"],
        capacity=P.capacity,
    )
    step = out["step_time"]
    dp, tp, pp, ep, cp = lay.dp, lay.tp, lay.pp, lay.ep, lay.cp
    return DistributedResult(
        step_time=step,
        compute_time=out["compute_time"],
        tp_communication_time=out["tp_communication_time"],
        ep_communication_time=out["ep_communication_time"],
        moe_host_time=out["moe_host_time"],
        pp_communication_time=out["pp_communication_time"],
        cp_communication_time=out["cp_communication_time"],
        cp_communication_total=out["cp_communication_total"],
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
        # "cp" appears once context parallelism is used (the API's four keys otherwise)
        parallelism={"dp": dp, "tp": tp, "pp": pp, "ep": ep, **({"cp": cp} if cp > 1 else {})},
        layout=lay,
        notes=notes,
    )
