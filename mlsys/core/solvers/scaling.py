"""Strong scaling of a training job: throughput per fleet size and the communication wall.

:func:`scaling_curve` prices the same job (global batch, layout within a replica) on
fleets of growing size with :class:`~mlsys.core.solvers.distributed.DistributedModel`
and reports, for each size, the throughput, the scaling efficiency against the
smallest fleet and the *marginal* speed-up of the last step up. Where the marginal
speed-up falls below a threshold (default 0.5: the added accelerators deliver less than
half their share) the job has hit its communication wall: gradient all-reduces no
longer hide behind shrinking per-replica compute, micro-batches run out for the
pipeline, and more hardware buys little.
"""

from __future__ import annotations

from numbers import Real
from typing import Any, ClassVar

import numpy as np

from mlsys.core.errors import MlsysError, ParameterError
from mlsys.core.layout import TrainingLayout
from mlsys.core.precision import normalize_precision
from mlsys.core.provenance import record
from mlsys.core.results import Result
from mlsys.core.solvers import _checks
from mlsys.core.solvers.distributed import DistributedModel
from mlsys.core.types import Fleet

__all__ = ["scaling_curve", "ScalingResult"]


class ScalingResult(Result):
    """Throughput of one job across fleet sizes.

    Attributes
    ----------
    nodes : ndarray
        Fleet sizes in nodes.
    accelerators : ndarray
        Fleet sizes in accelerators.
    step_time : Quantity [s] (array)
        Step time per size (NaN where the layout is invalid or does not fit).
    tokens_per_second : Quantity [token/s] (array)
        Throughput per size.
    tokens_per_second_per_accelerator : Quantity [token/s] (array)
        Throughput per accelerator.
    mfu : ndarray
        Model FLOPs utilisation per size.
    scaling_efficiency : ndarray
        Throughput per accelerator relative to the smallest feasible fleet.
    marginal_speedup : ndarray
        ``(T_i/T_{i−1} − 1)/(N_i/N_{i−1} − 1)``: the share of ideal speed-up the last
        step up delivered (1 linear, 0 nothing; NaN for the first size).
    feasible : ndarray of bool
        Whether the layout runs at that size.
    communication_wall : float or None
        Accelerators at the first size whose marginal speed-up is below the threshold
        (None if the curve never drops that low).
    communication_wall_nodes : float or None
        The same in nodes.
    threshold : float
        The marginal speed-up that defines the wall.
    """

    _units: ClassVar[dict[str, str | None]] = {
        "nodes": None,
        "accelerators": None,
        "step_time": "s",
        "tokens_per_second": "token/s",
        "tokens_per_second_per_accelerator": "token/s",
        "mfu": None,
        "scaling_efficiency": None,
        "marginal_speedup": None,
        "feasible": None,
        "communication_wall": None,
        "communication_wall_nodes": None,
        "threshold": None,
    }


def scaling_curve(
    model: Any,
    node: Any,
    fabric: Any,
    nodes: Any,
    batch_size: int,
    precision: str = "bf16",
    efficiency: Any = None,
    tp_size: int = 1,
    pp_size: int = 1,
    ep_size: int = 1,
    v_stages: int = 1,
    microbatch_size: int = 1,
    seq_len: int | None = None,
    zero_stage: int = 0,
    recompute: str = "none",
    sequence_parallel: bool = False,
    overlap: bool = True,
    grad_dtype: str | None = None,
    threshold: float = 0.5,
    *,
    cp_size: int = 1,
    layout: TrainingLayout | None = None,
    **options: Any,
) -> ScalingResult:
    """Throughput, scaling efficiency and marginal speed-up of a job across fleet sizes.

    The global batch stays fixed (strong scaling); each size uses
    ``dp = N/(tp·pp·ep·cp)`` replicas and ``batch/(dp·ep·microbatch_size)``
    micro-batches. The layout is one :class:`~mlsys.core.layout.TrainingLayout`,
    validated once; every size is priced by :class:`DistributedModel` through it.

    Parameters
    ----------
    model : TransformerWorkload
        The network.
    node : Node
        Node type of every fleet.
    fabric : Fabric
        Scale-out fabric between nodes.
    nodes : iterable of int
        Fleet sizes, in nodes, increasing.
    batch_size : int
        Global batch in sequences.
    precision : str
        Matmul precision (``"bf16"``, ``"fp16"``, ``"fp8"`` ...). As in
        :meth:`DistributedModel.solve`.
    efficiency : None, float, (float, float) or dict
        Achievable fractions of peak compute and memory bandwidth; None uses the
        library defaults. As in :meth:`DistributedModel.solve`.
    tp_size : int
        Tensor-parallel size. As in :meth:`DistributedModel.solve`.
    pp_size : int
        Pipeline-parallel size. As in :meth:`DistributedModel.solve`.
    ep_size : int
        Expert-parallel size. As in :meth:`DistributedModel.solve`.
    v_stages : int
        Model chunks per device (interleaved 1F1B when > 1). As in
        :meth:`DistributedModel.solve`.
    seq_len : int, optional
        Sequence length, in tokens (default the model's). As in
        :meth:`DistributedModel.solve`.
    zero_stage : {0, 1, 2, 3}
        ZeRO partitioning over the data-parallel group. As in
        :meth:`DistributedModel.solve`.
    recompute : {"none", "selective", "full", "dots"}
        Activation recomputation. As in :meth:`DistributedModel.solve`.
    sequence_parallel : bool
        Megatron sequence parallelism (with ``tp_size > 1``). As in
        :meth:`DistributedModel.solve`.
    overlap : bool
        Overlap data-parallel communication with the backward pass. As in
        :meth:`DistributedModel.solve`.
    grad_dtype : str, optional
        Precision of the gradient buffers and their reduction (default: fp32, fp16 for
        fp16 training). As in :meth:`DistributedModel.solve`.
    microbatch_size : int
        Sequences per micro-batch.
    threshold : float
        Marginal speed-up below which the wall is declared (default 0.5).
    cp_size : int
        Context-parallel size (as in :meth:`DistributedModel.solve`).
    layout : TrainingLayout, optional
        The layout within a replica, at once (replaces ``tp_size`` … ``grad_dtype``
        and the ``schedule``/``flash_attention`` options); its ``dp`` and
        ``microbatch_count`` are derived per fleet size.
    **options
        Further keywords of :meth:`DistributedModel.solve`: the layout's own
        (``schedule``, ``flash_attention``, ``tp_comm_overlap``, ``dropout`` ...), which
        build the layout when ``layout`` is None, and ``topology_override``,
        ``optimizer``. Any other keyword is a ParameterError, never silently ignored.

    Returns
    -------
    ScalingResult

    Raises
    ------
    ParameterError
        For a batch size, sequence length, micro-batch size or node count that is not a
        positive whole number (a batch of 0 would price nothing and fill every array with
        NaN), node counts that do not increase, an unknown precision, a flag that is not
        True or False, or a threshold outside (0, 1]. A size the layout cannot use is not
        an error: its ``feasible`` entry is False and its numbers NaN.

    References
    ----------
    Amdahl (1967), "Validity of the single processor approach to achieving large scale
    computing capabilities", AFIPS (fixed-size speed-up); Narayanan et al. (2021),
    SC'21, Sec. 5 (strong and weak scaling of Megatron-LM).

    Examples
    --------
    >>> from mlsys import Models, Nodes, Fabrics
    >>> res = scaling_curve(Models.Llama3_8B, Nodes.DGX_H100, Fabrics.IB_NDR,
    ...                     nodes=[1, 2, 4, 8], batch_size=512)
    >>> len(res.si("tokens_per_second"))
    4
    """
    sizes = _node_counts(nodes)
    batch_size = _checks.positive_int("batch_size", batch_size)
    seq_len = None if seq_len is None else _checks.positive_int("seq_len", seq_len)
    overlap = _checks.flag("overlap", overlap)
    normalize_precision(precision)  # a bad name would otherwise fail every size alike
    if isinstance(threshold, bool) or not isinstance(threshold, Real) or not 0 < threshold <= 1:
        raise ParameterError("threshold", threshold, "a marginal speed-up in (0, 1]")
    stack = _layout_options(options, layout)
    if layout is None:
        stack.setdefault("schedule", "1f1b")
        layout = TrainingLayout(
            tp=tp_size, pp=pp_size, ep=ep_size, cp=cp_size, v_stages=v_stages,
            zero_stage=zero_stage, recompute=recompute, sequence_parallel=sequence_parallel,
            grad_dtype=grad_dtype, **stack,
        )  # fmt: skip
    elif not isinstance(layout, TrainingLayout):
        raise ParameterError("layout", layout, "a TrainingLayout")
    mb = _checks.positive_int("microbatch_size", microbatch_size)
    solver = DistributedModel()
    g = node.accelerators_per_node
    n_acc = sizes * g
    step = np.full(sizes.shape, np.nan)
    mfu = np.full(sizes.shape, np.nan)
    feasible = np.zeros(sizes.shape, dtype=bool)
    per_replica_size = layout.tp * layout.pp * layout.ep * layout.cp
    for i, count in enumerate(sizes):
        fleet = Fleet(node=node, count=int(count), fabric=fabric)
        n = fleet.total_accelerators
        if n % per_replica_size:
            continue
        replicas = n // (layout.tp * layout.pp * layout.cp)  # dp·ep ranks share the batch
        if batch_size % replicas or (batch_size // replicas) % mb:
            continue
        m = batch_size // replicas // mb
        lay = layout.model_copy(update={"microbatch_count": m, "dp": None})
        try:
            res = solver.solve(
                model, fleet, batch_size=batch_size, precision=precision,
                efficiency=efficiency, seq_len=seq_len, overlap=overlap, layout=lay,
                **options,
            )  # fmt: skip
        except MlsysError:
            continue
        if res.feasible:
            feasible[i] = True
            step[i] = res.si("step_time")
            mfu[i] = res.mfu
    seq = float(seq_len or model.seq_len)
    tokens = batch_size * seq / step
    per_acc = tokens / n_acc
    first = np.flatnonzero(feasible)
    eff = per_acc / per_acc[first[0]] if first.size else np.full(sizes.shape, np.nan)
    marginal = np.full(sizes.shape, np.nan)
    marginal[1:] = (tokens[1:] / tokens[:-1] - 1.0) / (n_acc[1:] / n_acc[:-1] - 1.0)
    below = np.flatnonzero(marginal < threshold)
    wall = float(n_acc[below[0]]) if below.size else None
    result = ScalingResult(
        nodes=sizes,
        accelerators=n_acc,
        step_time=step,
        tokens_per_second=tokens,
        tokens_per_second_per_accelerator=per_acc,
        mfu=mfu,
        scaling_efficiency=eff,
        marginal_speedup=marginal,
        feasible=feasible,
        communication_wall=wall,
        communication_wall_nodes=None if wall is None else wall / g,
        threshold=float(threshold),
    )
    return record(
        result, "scaling_curve", model=model, node=node, fabric=fabric,
        batch_size=batch_size, precision=precision,
    )  # fmt: skip


def _node_counts(nodes: Any) -> np.ndarray:
    """``nodes`` as a strictly increasing float array of whole node counts >= 1."""
    counts = [
        _checks.count("nodes", n, 1, "a list of positive node counts")
        for n in _checks.options("nodes", nodes, "positive node counts")
    ]
    sizes = np.asarray(counts, dtype=float)
    if np.any(np.diff(sizes) <= 0):
        raise ParameterError("nodes", nodes, "strictly increasing node counts")
    return sizes


# the layout's own fields among the keywords (schedule, tp_comm_overlap, dropout ...)
_LAYOUT_KEYS = frozenset(
    {"schedule", "flash_attention", "tp_comm_overlap", "cp_comm_type",
     "grad_accumulation_fusion", "recompute_num_layers", "pipeline_p2p", "attention_kernel",
     "recompute_rerun", "fsdp_flat_params", "dropout", "elementwise_kernels",
     "fsdp_per_parameter", "cuda_graph_scope"}
)  # fmt: skip
_SOLVE_KEYS = frozenset({"topology_override", "optimizer"})


def _layout_options(options: dict[str, Any], layout: Any) -> dict[str, Any]:
    """Split ``**options``: the layout's fields are popped and returned (they build the
    :class:`TrainingLayout`, so a bad value is refused once, not at every size); what is
    left must be a keyword of :meth:`DistributedModel.solve` that is not a layout field."""
    stack = {k: options.pop(k) for k in list(options) if k in _LAYOUT_KEYS}
    if stack and layout is not None:
        raise ParameterError(
            next(iter(stack)), next(iter(stack.values())), "set in the layout= given, not beside it"
        )
    for key in options:
        if key not in _SOLVE_KEYS:
            allowed = ", ".join(sorted(_LAYOUT_KEYS | _SOLVE_KEYS))
            raise ParameterError(key, options[key], f"a keyword of scaling_curve: one of {allowed}")
    topology = options.get("topology_override")
    if topology is not None and not (
        isinstance(topology, str) and topology.lower() in ("auto", "ring", "tree", "hierarchical")
    ):
        raise ParameterError(
            "topology_override", topology, "None, 'ring', 'tree' or 'hierarchical'"
        )
    return stack
