"""Which layout to choose: every parallel layout of a training job, priced at once.

:class:`ParallelismSearch` enumerates every combination of data, tensor, pipeline, expert
and context parallelism, micro-batch count, interleaving, schedule, ZeRO stage,
recomputation and sequence parallelism for a model on a fleet, judges them with the
rules of :class:`~mlsys.core.layout.TrainingLayout` applied to arrays
(:func:`mlsys.core.layout.rejection_codes` — the same rule functions a solve checks),
prices the valid ones in one vectorised call of the model
:class:`~mlsys.core.solvers.distributed.DistributedModel` uses
(:func:`mlsys.core.solvers._layout.evaluate` on numpy arrays), and ranks them by
throughput. Layouts that cannot run are kept with the reason. No pydantic object is
built per layout.
"""

from __future__ import annotations

import itertools
from types import SimpleNamespace
from typing import Any, ClassVar

import numpy as np

from mlsys.core.errors import InfeasibleError, ParameterError
from mlsys.core.layout import (
    RECOMPUTE_NAMES,
    REJECTION_REASONS,
    SCHEDULE_NAMES,
    TOPOLOGY_NAMES,
    Recompute,
    Rejection,
    Schedule,
    TrainingLayout,
    layout_facts,
    rejection_codes,
    training_dropout,
)
from mlsys.core.provenance import record
from mlsys.core.results import Result
from mlsys.core.solvers import _checks, _layout
from mlsys.core.solvers.distributed import DistributedModel, DistributedResult, build_problem

__all__ = ["ParallelismSearch", "SearchResult", "REJECTION_REASONS"]

_RC_NAMES = tuple(RECOMPUTE_NAMES)  # index = Recompute code
_GPIPE = int(Schedule.GPIPE)
_SCHEDULE_LABELS = {Schedule.ONE_F_ONE_B: "1f1b", Schedule.GPIPE: "gpipe"}
_COLUMNS = (
    "tokens_per_second",
    "step_time",
    "mfu",
    "memory_per_accelerator",
    "feasible",
    "dp",
    "tp",
    "pp",
    "ep",
    "cp",
    "microbatch_count",
    "v_stages",
    "zero_stage",
    "recompute",
    "recompute_num_layers",
    "sequence_parallel",
    "reason",
)


_FULL = int(Recompute.FULL)


def _block_recompute_options(options: Any) -> list[int]:
    """``recompute_num_layers`` options as ints, 0 standing for None (every layer)."""
    out: list[int] = []
    for n in options:
        if n is None:
            k = 0
        elif isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 1:
            k = int(n)
        else:
            raise ParameterError(
                "recompute_num_layers", n, "None or a positive whole number of layers"
            )
        if k not in out:
            out.append(k)
    if not out:
        raise ParameterError("recompute_num_layers", options, "at least one option (None)")
    return out


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, int(n**0.5) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def _ranking(tokens: np.ndarray, feasible: np.ndarray) -> np.ndarray:
    """``np.lexsort((-tokens, ~feasible))``: feasible layouts first, each part by
    throughput, ties in index order. With no negative or NaN throughput (the layouts not
    priced hold 0) the zeros of each part are already in order at its end, so only the
    priced ones are sorted."""
    if not (tokens >= 0.0).all():
        return np.lexsort((-tokens, ~feasible))
    parts = []
    for part in (feasible, ~feasible):
        idx = np.flatnonzero(part & (tokens > 0.0))
        parts.append(idx[np.argsort(-tokens[idx], kind="stable")])
        parts.append(np.flatnonzero(part & (tokens == 0.0)))
    return np.concatenate(parts)


def _checked_arguments(**kw: Any) -> SimpleNamespace:
    """The search's arguments checked, in the order a user reads them; sizes as ints."""
    o = SimpleNamespace(**kw)
    o.batch = _checks.positive_int("batch_size", o.batch_size)
    o.seq_len = None if o.seq_len is None else _checks.positive_int("seq_len", o.seq_len)
    for name in ("overlap", "tp_comm_overlap", "grad_accumulation_fusion", "raise_errors"):
        setattr(o, name, _checks.flag(name, getattr(o, name)))
    if o.flash_attention is not None:
        o.flash_attention = _checks.flag("flash_attention", o.flash_attention)
    for name in ("tp_sizes", "pp_sizes", "ep_sizes", "microbatch_counts"):
        values = getattr(o, name)
        setattr(o, name, None if values is None else _checks.positive_ints(name, values))
    o.v_stages = _checks.positive_ints("v_stages", o.v_stages)
    o.cp_sizes = _checks.positive_ints("cp_sizes", o.cp_sizes)
    o.zero_stages = _checks.options("zero_stages", o.zero_stages, "ZeRO stages (0, 1, 2, 3)")
    o.recompute = _checks.options("recompute", o.recompute, "recompute names")
    o.schedules = _checks.options("schedules", o.schedules, "schedule names")
    o.sequence_parallel = [
        _checks.flag("sequence_parallel", sp)
        for sp in _checks.options("sequence_parallel", o.sequence_parallel, "True/False")
    ]
    o.recompute_num_layers = _checks.options(
        "recompute_num_layers", o.recompute_num_layers, "None or positive layer counts"
    )
    return o


def _recompute_codes(recompute: list[Any]) -> list[int]:
    """Each recompute name as its :class:`Recompute` code."""
    codes = []
    for r in recompute:
        code = RECOMPUTE_NAMES.get(r.lower()) if isinstance(r, str) else None
        if code is None:
            raise ParameterError("recompute", r, "one of " + ", ".join(map(repr, RECOMPUTE_NAMES)))
        codes.append(int(code))
    return codes


def _schedule_codes(schedules: list[Any]) -> list[int]:
    """The distinct :class:`Schedule` codes of the schedule names ("interleaved" is 1F1B)."""
    codes: list[int] = []
    for sc in schedules:
        key = sc.lower().replace("-", "").replace("_", "") if isinstance(sc, str) else ""
        if key not in SCHEDULE_NAMES:
            raise ParameterError("schedules", sc, "'1f1b', 'interleaved' or 'gpipe'")
        if int(SCHEDULE_NAMES[key]) not in codes:
            codes.append(int(SCHEDULE_NAMES[key]))
    return codes


def _topology(topology_override: Any) -> str:
    """The data-parallel all-reduce's algorithm name (``"auto"`` for None)."""
    topo = "auto" if topology_override is None else topology_override
    topo = topo.lower() if isinstance(topo, str) else ""
    if topo not in TOPOLOGY_NAMES:
        raise ParameterError(
            "topology_override", topology_override, "None, 'ring', 'tree' or 'hierarchical'"
        )
    return topo


def _option_combinations(
    o: SimpleNamespace, topology_override: Any
) -> tuple[np.ndarray, list[int], list[int], str]:
    """Every (ZeRO, recompute, SP, schedule, block-recompute) combination tried, as rows
    of codes, with the SP options, the block-recompute options and the topology."""
    rc_codes = _recompute_codes(o.recompute)
    rnl_opts = _block_recompute_options(o.recompute_num_layers)
    zero_stages = [_checks.count("zero_stages", z, 0, "0, 1, 2 or 3") for z in o.zero_stages]
    if max(zero_stages) > 3:
        raise ParameterError("zero_stages", max(zero_stages), "0, 1, 2 or 3")
    sched_codes = _schedule_codes(o.schedules)
    topo = _topology(topology_override)
    sp_opts = sorted({1 if s else 0 for s in o.sequence_parallel})
    combos = np.array(
        list(itertools.product(sorted(set(zero_stages)), rc_codes, sp_opts, sched_codes, rnl_opts)),
        dtype=np.int64,
    )
    return combos, sp_opts, rnl_opts, topo


def _model_parallel_shapes(model: Any, n: int, o: SimpleNamespace) -> list[tuple[int, ...]]:
    """The (tp, pp, ep, cp) shapes whose product divides the fleet (dp derived: the world
    rule holds by construction); every other rule is applied later, vectorised."""
    divs = _divisors(n)
    tps = [t for t in (o.tp_sizes or divs) if n % t == 0 and t <= max(model.heads, 1)]
    experts = model.experts if model.is_moe else 1
    eps_all = list(o.ep_sizes or _divisors(experts))
    shapes = [
        (tp, pp, ep, cp)
        for tp in tps
        for pp in (o.pp_sizes or _divisors(n // tp))
        for ep in eps_all
        for cp in o.cp_sizes
        if n % (tp * pp * ep * cp) == 0
    ]
    if not shapes:
        raise ParameterError(
            "fleet", n, "a fleet whose size admits at least one layout for this model"
        )
    return shapes


def _base_rows(
    shapes: list[tuple[int, ...]],
    n: int,
    batch: int,
    microbatch_counts: list[int] | None,
    v_opts: tuple[int, ...],
) -> SimpleNamespace:
    """One base row (tp, pp, ep, cp, dp, m, v) per shape and (m, v) option, as columns.

    Each shape's (m, v) block depends only on its per-replica batch and whether it has a
    pipeline, so the blocks are built once each and the rows laid out by numpy.
    """
    shape_rows: list[tuple[int, ...]] = []  # (tp, pp, ep, cp, dp)
    blocks: list[np.ndarray] = []  # (m, v) rows of each shape, in order
    one_row = np.ones((1, 2), dtype=np.int64)  # carries the batch rule's rejection
    made: dict[tuple[int, bool], np.ndarray] = {}
    for tp, pp, ep, cp in shapes:
        dp = n // (tp * pp * ep * cp)
        shape_rows.append((tp, pp, ep, cp, dp))
        if batch % (dp * ep):
            blocks.append(one_row)
            continue
        per = batch // (dp * ep)
        block = made.get((per, pp > 1))
        if block is None:
            ms = [mm for mm in (microbatch_counts or _divisors(per)) if per % mm == 0]
            mv = [(mm, v) for mm in ms for v in (v_opts if pp > 1 else (1,))]
            block = made[per, pp > 1] = np.array(mv, dtype=np.int64).reshape(-1, 2)
        blocks.append(block)
    counts = [len(block) for block in blocks]
    base = np.empty((sum(counts), 7), dtype=np.int64)
    base[:, :5] = np.repeat(np.array(shape_rows, dtype=np.int64), counts, axis=0)
    base[:, 5:] = np.concatenate(blocks)
    return SimpleNamespace(
        tp=base[:, 0], pp=base[:, 1], ep=base[:, 2], cp=base[:, 3], dp=base[:, 4],
        microbatch_count=base[:, 5], v_stages=base[:, 6],
    )  # fmt: skip


def _kept_pairs(x: SimpleNamespace, combos: np.ndarray, sp_opts: list[int]) -> np.ndarray:
    """Which (base row, option combination) pairs are distinct layouts, as a grid.

    Every pair in row-major order, as np.repeat(base)/np.tile(combos) would lay them out,
    but judged on the small (rows × combinations) grid and gathered by index: no
    full-size table is built and then masked.
    """
    tp, v = x.tp[:, None], x.v_stages[:, None]
    zero_rc_sp_sched_rnl = combos.T[:, None, :]  # (5, 1, combinations)
    rc, sp, sched, rnl = zero_rc_sp_sched_rnl[1:]
    # sequence parallelism is meaningless at tp = 1 (keep one copy of those layouts);
    # GPipe has no interleaving (keep v = 1 only)
    keep = (~((sp == 1) & (tp == 1)) | (len(sp_opts) == 1)) & ~((sched == _GPIPE) & (v > 1))
    # a layer count for block recompute only where every layer would be recomputed
    keep &= (rnl == 0) | (rc == _FULL)
    return keep


def _price_grid(
    P: Any,
    model: Any,
    x: SimpleNamespace,
    combos: np.ndarray,
    rows_v: np.ndarray,
    grid: np.ndarray,
    rnl_opts: list[int],
    topo: str,
    o: SimpleNamespace,
    stack: TrainingLayout,
) -> dict[str, Any]:
    """Price the valid layouts on a (rows × options) grid in one call of the step model.

    The rows' sizes as a column, the options as a row, broadcast by numpy, so whatever
    depends on the sizes alone (the model states, every collective) is computed once per
    row and whatever depends on the options alone once per option. Every layout's own
    arithmetic is the same element-wise; the grid's kept cells, row by row, are the valid
    layouts in order.
    """
    f = {k: v.astype(float)[rows_v, None] for k, v in vars(x).items()}
    zero, rc, sp, sched = (combos[:, i].astype(float)[None, :] for i in range(4))
    fraction: Any = 1.0
    if any(rnl_opts):  # the share of each chunk's layers rerun, per layout
        per_chunk = (-(-int(model.layers) // (x.pp * x.v_stages)))[rows_v, None]
        rnl = combos[None, :, 4]
        n_rc = np.where(rnl > 0, np.minimum(rnl, per_chunk), per_chunk)
        # cells not kept rerun every layer (1.0): they must not turn on the
        # block-recompute arithmetic the kept layouts do not need
        fraction = np.where(grid, n_rc / per_chunk, 1.0)
    return _layout.evaluate(
        P, f["tp"], f["pp"], f["ep"], f["dp"], f["microbatch_count"], f["v_stages"],
        zero, rc, sp, sched, int(TOPOLOGY_NAMES[topo]), o.overlap, f["cp"],
        o.tp_comm_overlap, stack.cp_all_gather, o.grad_accumulation_fusion, fraction,
        stack.pipeline_p2p == "deepspeed", stack.recompute_rerun == "residuals",
        stack.fsdp_flat_params, training_dropout(stack.dropout, model),
        stack.fsdp_per_parameter, stack.cuda_graph_scope,
    )  # fmt: skip


def _scatter(out: dict[str, Any], grid: np.ndarray, valid: np.ndarray) -> dict[str, np.ndarray]:
    """The grid's priced cells laid out over every layout (unpriced: no throughput,
    infinite step, no memory figure, not fitting)."""
    size = len(valid)
    cols = {
        "tokens_per_second": np.zeros(size),
        "step_time": np.full(size, np.inf),
        "mfu": np.zeros(size),
        "memory_per_accelerator": np.full(size, np.nan),
        "fits": np.zeros(size, dtype=bool),
    }
    for name, key in (
        ("tokens_per_second", "tokens_per_second"),
        ("step_time", "step_time"),
        ("mfu", "mfu"),
        ("memory_per_accelerator", "memory"),
        ("fits", "fits"),
    ):
        cols[name][valid] = np.broadcast_to(out[key], grid.shape)[grid]
    return cols


def _ranked_table(
    cols: dict[str, np.ndarray],
    feasible: np.ndarray,
    code: np.ndarray,
    order: np.ndarray,
    x: SimpleNamespace,
    combos: np.ndarray,
    row: np.ndarray,
    opt: np.ndarray,
    rnl_opts: list[int],
) -> dict[str, np.ndarray]:
    """The search's table, ranked: figures, sizes and options of each layout, its reason."""
    reasons = np.array(
        [REJECTION_REASONS.get(c, "") for c in range(max(REJECTION_REASONS) + 1)], dtype=object
    )
    sched_names = np.array([_SCHEDULE_LABELS[c] for c in Schedule], dtype=object)
    # recompute_num_layers as Python objects (None or an int), one per distinct option
    rnl_keys = np.array(sorted(rnl_opts), dtype=np.int64)
    rnl_objs = np.array([None if k == 0 else int(k) for k in rnl_keys], dtype=object)
    return {
        **{name: values[order] for name, values in cols.items()},
        "feasible": feasible[order],
        "dp": x.dp[row],
        "tp": x.tp[row],
        "pp": x.pp[row],
        "ep": x.ep[row],
        "cp": x.cp[row],
        "microbatch_count": x.microbatch_count[row],
        "v_stages": x.v_stages[row],
        "zero_stage": combos[opt, 0],
        "recompute": np.array(_RC_NAMES, dtype=object)[combos[opt, 1]],
        "recompute_num_layers": rnl_objs[np.searchsorted(rnl_keys, combos[opt, 4])],
        "sequence_parallel": combos[opt, 2] == 1,
        "schedule": sched_names[combos[opt, 3]],
        "reason": reasons[code[order]],
    }


def _best_layout(table: dict[str, np.ndarray]) -> dict[str, Any]:
    """The first row of the ranked table as :meth:`DistributedModel.solve` keywords."""
    return {
        "tp_size": int(table["tp"][0]),
        "pp_size": int(table["pp"][0]),
        "ep_size": int(table["ep"][0]),
        "cp_size": int(table["cp"][0]),
        "microbatch_count": int(table["microbatch_count"][0]),
        "v_stages": int(table["v_stages"][0]),
        "zero_stage": int(table["zero_stage"][0]),
        "recompute": str(table["recompute"][0]),
        "recompute_num_layers": table["recompute_num_layers"][0],
        "sequence_parallel": bool(table["sequence_parallel"][0]),
        "schedule": str(table["schedule"][0]),
    }


class SearchResult(Result):
    """Every layout of a search, ranked by throughput.

    Attributes
    ----------
    best : DistributedResult or None
        The fastest feasible layout, re-solved with :class:`DistributedModel`.
    best_layout : dict or None
        Its parameters (``tp_size``, ``pp_size`` ...), ready to pass to ``solve``.
    candidates : int
        Layouts enumerated (valid and rejected).
    feasible_count : int
        Layouts that run.
    table : dict of str to ndarray
        One array per column (``tokens_per_second`` [token/s], ``step_time`` [s],
        ``mfu``, ``memory_per_accelerator`` [byte], ``feasible``, ``dp``, ``tp``,
        ``pp``, ``ep``, ``cp``, ``microbatch_count``, ``v_stages``, ``zero_stage``,
        ``recompute``, ``recompute_num_layers`` (None: every layer of a chunk),
        ``sequence_parallel``, ``schedule``, ``reason``), rows ranked: feasible layouts
        by throughput first, then the rejected ones.

    Notes
    -----
    ``top(n)`` gives the first ``n`` rows as records; ``to_records()`` all of them;
    ``rejected()`` the rows that cannot run, each with its reason.
    """

    _units: ClassVar[dict[str, str | None]] = {
        "best": None,
        "best_layout": None,
        "candidates": None,
        "feasible_count": None,
        "table": None,
    }

    def _record(self, i: int) -> dict[str, Any]:
        t = self._values["table"]
        rec: dict[str, Any] = {}
        for col in _COLUMNS:
            val = t[col][i]
            rec[col] = val.item() if hasattr(val, "item") else val
        return rec

    def top(self, n: int = 10) -> list[dict[str, Any]]:
        """The ``n`` best layouts as records (feasible ones first).

        Parameters
        ----------
        n : int
            How many.

        Returns
        -------
        list of dict
            Plain floats in SI units (s, token/s, byte).
        """
        return [self._record(i) for i in range(min(n, len(self._values["table"]["tp"])))]

    def to_records(self) -> list[dict[str, Any]]:
        """Every layout as a record, ranked.

        Returns
        -------
        list of dict
        """
        return self.top(len(self._values["table"]["tp"]))

    def rejected(self) -> list[dict[str, Any]]:
        """The layouts that cannot run, each with its ``reason``.

        Returns
        -------
        list of dict
        """
        t = self._values["table"]
        return [self._record(i) for i in np.flatnonzero(~t["feasible"])]

    def _repr_markdown_(self) -> str:
        head = (
            f"**SearchResult**: {self._values['candidates']} layouts, "
            f"{self._values['feasible_count']} feasible\n\n"
            "| rank | tokens/s | step (s) | MFU | GB/dev | dp | tp | pp | ep | m | v | ZeRO "
            "| recompute | SP | note |\n|" + "---|" * 15
        )
        lines = [head]
        for i, r in enumerate(self.top(10), 1):
            lines.append(
                f"| {i} | {r['tokens_per_second']:.4g} | {r['step_time']:.4g} | "
                f"{100 * r['mfu']:.1f}% | {r['memory_per_accelerator'] / 1e9:.1f} | {r['dp']} | "
                f"{r['tp']} | {r['pp']} | {r['ep']} | {r['microbatch_count']} | "
                f"{r['v_stages']} | {r['zero_stage']} | {r['recompute']} | "
                f"{'yes' if r['sequence_parallel'] else 'no'} | {r['reason']} |"
            )
        return "\n".join(lines)


class ParallelismSearch:
    """Enumerate and rank every parallel layout of a training job on a fleet.

    Examples
    --------
    >>> from mlsys import Models, Nodes, Fabrics, Fleet
    >>> fleet = Fleet(node=Nodes.DGX_H100, count=16, fabric=Fabrics.IB_NDR)
    >>> res = ParallelismSearch().solve(Models.Llama3_70B, fleet, batch_size=256)
    >>> res.best.feasible
    True
    """

    def solve(
        self,
        model: Any,
        fleet: Any,
        batch_size: int,
        precision: str = "bf16",
        efficiency: Any = None,
        seq_len: int | None = None,
        tp_sizes: Any = None,
        pp_sizes: Any = None,
        ep_sizes: Any = None,
        microbatch_counts: Any = None,
        v_stages: Any = (1, 2, 3, 4),
        zero_stages: Any = (0, 1, 2, 3),
        recompute: Any = ("none", "selective", "full"),
        sequence_parallel: Any = (False, True),
        overlap: bool = True,
        grad_dtype: str | None = None,
        topology_override: str | None = None,
        flash_attention: bool | None = None,
        raise_errors: bool = False,
        *,
        cp_sizes: Any = (1,),
        schedules: Any = ("1f1b",),
        tp_comm_overlap: bool = False,
        cp_comm_type: str = "p2p",
        grad_accumulation_fusion: bool = True,
        pipeline_p2p: str = "megatron",
        recompute_num_layers: Any = (None,),
        attention_kernel: str = "fused",
        recompute_rerun: str = "layer",
        fsdp_flat_params: bool = False,
        dropout: bool | None = None,
        elementwise_kernels: str = "fused",
        fsdp_per_parameter: bool = False,
        cuda_graph_scope: Any = (),
    ) -> SearchResult:
        """Price every layout and rank them.

        Parameters
        ----------
        model : TransformerWorkload
            The network.
        fleet : Fleet
            The cluster.
        batch_size : int
            Global batch in sequences.
        precision : str
            Matmul precision (``"bf16"``, ``"fp16"``, ``"fp8"`` ...). As in
            :meth:`DistributedModel.solve`.
        efficiency : None, float, (float, float) or dict
            Achievable fractions of peak compute and memory bandwidth; None uses the
            library defaults. As in :meth:`DistributedModel.solve`.
        seq_len : int, optional
            Sequence length, in tokens (default the model's). As in
            :meth:`DistributedModel.solve`.
        overlap : bool
            Overlap data-parallel communication with the backward pass. As in
            :meth:`DistributedModel.solve`.
        grad_dtype : str, optional
            Precision of the gradient buffers and their reduction (default: fp32, fp16
            for fp16 training). As in :meth:`DistributedModel.solve`.
        topology_override : {None, "ring", "tree", "hierarchical"}
            Algorithm of the data-parallel all-reduce; None picks one per layout. As in
            :meth:`DistributedModel.solve`.
        flash_attention : bool, optional
            Fused attention that never writes the ``s×s`` scores (default True). As in
            :meth:`DistributedModel.solve`.
        tp_sizes, pp_sizes, ep_sizes, microbatch_counts : iterable of int, optional
            Restrict the sizes tried (default: every divisor that can work).
        v_stages : iterable of int
            Model chunks per device tried (interleaved 1F1B when > 1; only layouts with
            a pipeline, ``pp > 1``, try more than 1).
        zero_stages : iterable of int
            ZeRO stages tried, each 0, 1, 2 or 3.
        recompute : iterable of str
            Activation recomputation modes tried: any of
            :data:`mlsys.core.formulas.memory.RECOMPUTE_MODES`; the default tries
            Megatron-LM's three, add ``"dots"`` for a JAX stack.
        sequence_parallel : iterable of bool
            Sequence-parallelism settings tried (sequence parallelism only with
            ``tp > 1``).
        raise_errors : bool
            Raise :class:`InfeasibleError` when no layout is feasible.
        cp_sizes : iterable of int
            Context-parallel sizes tried (default 1 only; pass e.g. ``(1, 2, 4, 8)`` for
            long sequences).
        schedules : iterable of str
            Pipeline schedules tried (``"1f1b"``, ``"gpipe"``; default 1F1B, which
            covers interleaving through ``v_stages``).
        tp_comm_overlap : bool
            Price every layout with Megatron's tensor-parallel communication overlap
            (effective where sequence parallelism is on and ``tp > 1``), as
            :meth:`DistributedModel.solve` does.
        cp_comm_type : {"p2p", "all_gather"}
            Context parallelism's K/V exchange for every layout with ``cp > 1``
            (:attr:`mlsys.core.layout.TrainingLayout.cp_comm_type`), as
            :meth:`DistributedModel.solve` prices it.
        grad_accumulation_fusion : bool
            Weight gradients accumulated inside the GEMM (Megatron-LM's
            ``--gradient-accumulation-fusion``) or by a kernel of their own, for every
            layout, as in :meth:`DistributedModel.solve`.
        pipeline_p2p : {"megatron", "deepspeed"}
            The pipeline engine's stage transfers for every layout, as in
            :meth:`DistributedModel.solve`.
        recompute_num_layers : iterable of int or None
            Block recompute options tried with ``recompute="full"`` (Megatron-LM's
            ``--recompute-method block --recompute-num-layers N``: the first ``N``
            layers of each model chunk rerun their forward, the others keep their
            activations; :func:`mlsys.core.solvers._layout.block_recompute_fraction`).
            None recomputes every layer (the default, and the only option of the
            other recompute modes).
        attention_kernel : {"fused", "flash2", "flash1"}
            The software stack every layout runs on: the fused attention kernel's
            generation, as :meth:`DistributedModel.solve` takes it.
        recompute_rerun : {"layer", "residuals"}
            The software stack every layout runs on: what a full recompute reruns
            (``"layer"`` or JAX's ``"residuals"``), as :meth:`DistributedModel.solve`
            takes it.
        fsdp_flat_params : bool
            The software stack every layout runs on: PyTorch/fairscale FSDP's flat
            parameters, as :meth:`DistributedModel.solve` takes it.
        dropout : bool or None
            The software stack every layout runs on: whether dropout runs, as
            :meth:`DistributedModel.solve` takes it (None: the model's published
            training, :func:`mlsys.core.layout.training_dropout`).
        elementwise_kernels : {"fused", "eager", "eager_fused_norm"}
            The software stack every layout runs on: fused or eager element-wise
            kernels, as :meth:`DistributedModel.solve` takes it.
        fsdp_per_parameter : bool
            Every layout on PyTorch FSDP2's per-parameter sharding, as
            :meth:`DistributedModel.solve` prices it.
        cuda_graph_scope : tuple of str
            Parts of each layer replayed from CUDA graphs in every layout, as
            :meth:`DistributedModel.solve` takes it (MoE layers' host work).

        Returns
        -------
        SearchResult
        """
        stack = TrainingLayout(  # validated once, by the rules DistributedModel applies
            cp_comm_type=cp_comm_type, pipeline_p2p=pipeline_p2p,
            attention_kernel=attention_kernel, recompute_rerun=recompute_rerun,
            fsdp_flat_params=fsdp_flat_params, dropout=dropout,
            elementwise_kernels=elementwise_kernels, fsdp_per_parameter=fsdp_per_parameter,
            cuda_graph_scope=cuda_graph_scope,
        )  # fmt: skip
        o = _checked_arguments(
            batch_size=batch_size, seq_len=seq_len, overlap=overlap,
            tp_comm_overlap=tp_comm_overlap, grad_accumulation_fusion=grad_accumulation_fusion,
            raise_errors=raise_errors, flash_attention=flash_attention, tp_sizes=tp_sizes,
            pp_sizes=pp_sizes, ep_sizes=ep_sizes, microbatch_counts=microbatch_counts,
            v_stages=v_stages, cp_sizes=cp_sizes, zero_stages=zero_stages, recompute=recompute,
            schedules=schedules, sequence_parallel=sequence_parallel,
            recompute_num_layers=recompute_num_layers,
        )  # fmt: skip
        P = build_problem(
            model, fleet, o.batch, precision, efficiency, o.seq_len, grad_dtype,
            o.flash_attention, "adam", stack.attention_kernel, stack.elementwise_kernels,
        )  # fmt: skip
        combos, sp_opts, rnl_opts, topo = _option_combinations(o, topology_override)
        n = fleet.total_accelerators
        shapes = _model_parallel_shapes(model, n, o)
        x = _base_rows(shapes, n, o.batch, o.microbatch_counts, tuple(o.v_stages))
        keep = _kept_pairs(x, combos, sp_opts)
        bi, ci = np.nonzero(keep)
        # the same rules TrainingLayout.check applies to one layout, on arrays; they read
        # only the base row's sizes, so each row is judged once, not once per option
        row_code = rejection_codes(x, layout_facts(model, o.batch, int(P.s), n))
        code = row_code[bi]
        valid = code == 0
        rows_v = np.flatnonzero((row_code == 0) & keep.any(axis=1))
        grid = keep[rows_v]
        out = _price_grid(P, model, x, combos, rows_v, grid, rnl_opts, topo, o, stack)
        cols = _scatter(out, grid, valid)
        code = np.where(valid & ~cols.pop("fits"), int(Rejection.MEMORY), code)
        feasible = code == 0
        order = _ranking(cols["tokens_per_second"], feasible)
        table = _ranked_table(
            cols, feasible, code, order, x, combos, bi[order], ci[order], rnl_opts
        )
        n_feasible = int(feasible.sum())
        best: DistributedResult | None = None
        best_layout: dict[str, Any] | None = None
        if n_feasible:
            best_layout = _best_layout(table)
            best = DistributedModel().solve(
                model, fleet, batch_size=o.batch, precision=precision, efficiency=efficiency,
                seq_len=o.seq_len, overlap=o.overlap, grad_dtype=grad_dtype,
                topology_override=topology_override, flash_attention=o.flash_attention,
                tp_comm_overlap=o.tp_comm_overlap, cp_comm_type=cp_comm_type,
                grad_accumulation_fusion=o.grad_accumulation_fusion,
                pipeline_p2p=stack.pipeline_p2p, attention_kernel=stack.attention_kernel,
                recompute_rerun=stack.recompute_rerun, fsdp_flat_params=stack.fsdp_flat_params,
                dropout=stack.dropout, elementwise_kernels=stack.elementwise_kernels,
                fsdp_per_parameter=stack.fsdp_per_parameter,
                cuda_graph_scope=stack.cuda_graph_scope,
                **best_layout,
            )  # fmt: skip
        elif o.raise_errors:
            raise InfeasibleError(
                f"none of the {len(code)} layouts of {model.label} fits on {n} accelerators"
            )
        result = SearchResult(
            best=best,
            best_layout=best_layout,
            candidates=len(code),
            feasible_count=n_feasible,
            table=table,
        )
        return record(
            result, self, model=model, fleet=fleet, batch_size=batch_size,
            precision=precision, seq_len=seq_len,
        )  # fmt: skip

    search = solve
