"""The textbook's 3D-parallelism optimizer: the best tensor x pipeline x data split.

*Machine Learning Systems* (harvard-edge/cs249r_book) asks
``ParallelismOptimizer().solve(Models.Language.GPT3, Systems.Clusters.Frontier_8K,
batch_size=4096, max_pp=8)`` for the split of a fleet into tensor-, pipeline- and
data-parallel groups that maximises model FLOPs utilization, and reads
``res.best_config["tp"|"pp"|"dp"]`` and ``res.best_mfu``. The book's optimizer sweeps
power-of-two tensor and pipeline degrees, the data-parallel degree taking the rest of the
fleet, on plain 3D parallelism. :class:`ParallelismOptimizer` runs mlsys's
:class:`~mlsys.core.solvers.search.ParallelismSearch` over that same space: no sharded
optimizer states (ZeRO stage 0), no interleaved pipeline stages, no sequence
parallelism; micro-batch counts and activation recomputation stay free, as execution
details of each split. :class:`mlsys.ParallelismSearch` searches the whole space.
"""

from __future__ import annotations

from numbers import Integral
from typing import Any

from mlsys.compat._unwrap import as_catalog

__all__ = ["ParallelismOptimizer", "ParallelismOptimizerResult"]


class ParallelismOptimizerResult:
    """The book's answer: the best split and its utilization.

    Attributes
    ----------
    best_config : dict
        ``{"tp": int, "pp": int, "dp": int}``: tensor-, pipeline- and data-parallel
        degrees of the best split (their product is the fleet's accelerator count).
    best_mfu : float
        Its model FLOPs utilization (fraction of the fleet's peak).
    total_searched : int
        Layouts priced (valid and refused).
    search : SearchResult
        mlsys's whole search result (every layout priced, each refusal with its reason).
    """

    def __init__(self, search: Any) -> None:
        best = search.top(1)[0]
        self.search = search
        self.best_config = {"tp": int(best["tp"]), "pp": int(best["pp"]), "dp": int(best["dp"])}
        self.best_mfu = float(best["mfu"])
        self.total_searched = int(search.candidates)

    def __repr__(self) -> str:
        c = self.best_config
        return (
            f"<ParallelismOptimizerResult tp={c['tp']} pp={c['pp']} dp={c['dp']} "
            f"mfu={self.best_mfu:.1%}>"
        )


def _powers_of_two(limit: int) -> tuple[int, ...]:
    sizes, size = [], 1
    while size <= limit:
        sizes.append(size)
        size *= 2
    return tuple(sizes)


def _degree_limit(value: Any, name: str, default: int) -> int:
    from mlsys.core.errors import ParameterError

    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, Integral) or value < 1:
        raise ParameterError(name, value, "a whole number of at least 1")
    return int(value)


class ParallelismOptimizer:
    """The book's 3D-parallelism optimizer over mlsys's layout search."""

    def solve(
        self,
        model: Any,
        fleet: Any,
        batch_size: int,
        precision: str = "fp16",
        efficiency: Any = None,
        max_tp: int | None = None,
        max_pp: int | None = None,
        overlap_comm: bool = True,
    ) -> ParallelismOptimizerResult:
        """The split of ``fleet`` into TP x PP x DP groups of highest MFU.

        Tensor degrees are the powers of two up to ``max_tp`` (default the accelerators
        of one node, so tensor-parallel all-reduces stay on the node's links), pipeline
        degrees the powers of two up to ``max_pp`` (default the model's layers); every
        split whose degrees divide the fleet and the model is priced by
        :class:`mlsys.DistributedModel`'s physics, in one vectorised pass
        (:class:`mlsys.ParallelismSearch`), and ranked by throughput.

        Parameters
        ----------
        model : BookModel or TransformerWorkload
            ``Models.Language.GPT3`` or a catalog transformer.
        fleet : BookCluster or Fleet
            ``Systems.Clusters.Frontier_8K`` or an mlsys Fleet.
        batch_size : int
            Global batch, in sequences.
        precision : str
            Matmul precision (the book's default ``"fp16"``).
        efficiency : float, optional
            Fraction of peak compute reached; default mlsys's calibrated efficiency.
        max_tp, max_pp : int, optional
            Largest tensor- and pipeline-parallel degrees searched.
        overlap_comm : bool
            Overlap data-parallel gradient reduction with the backward pass.

        Returns
        -------
        ParallelismOptimizerResult

        Raises
        ------
        ParameterError
            For a degree limit that is not a whole number of at least 1.
        InfeasibleError
            When no split fits the fleet's memory.

        References
        ----------
        Narayanan et al. (2021), "Efficient Large-Scale Language Model Training on GPU
        Clusters Using Megatron-LM", SC'21, Sec. 3: tensor parallelism inside a node,
        pipeline parallelism across nodes, data parallelism over the rest.

        Examples
        --------
        GPT-3 (175B) on the book's 8,192-H100 frontier fleet, batch 4,096, pipelines of at
        most 8 stages: tensor parallelism over the node's 8 GPUs, 8 pipeline stages and 128
        data-parallel replicas.

        >>> from mlsys import Models, ParallelismOptimizer, Systems
        >>> res = ParallelismOptimizer().solve(
        ...     Models.Language.GPT3, Systems.Clusters.Frontier_8K, batch_size=4096, max_pp=8
        ... )
        >>> res.best_config
        {'tp': 8, 'pp': 8, 'dp': 128}
        """
        from mlsys.core.errors import InfeasibleError
        from mlsys.core.solvers.search import ParallelismSearch

        workload, catalog_fleet = as_catalog(model), as_catalog(fleet)
        tp_limit = _degree_limit(max_tp, "max_tp", catalog_fleet.node.accelerators_per_node)
        pp_limit = _degree_limit(max_pp, "max_pp", int(getattr(workload, "layers", 1) or 1))
        search = ParallelismSearch().solve(
            workload,
            catalog_fleet,
            batch_size=batch_size,
            precision=precision,
            efficiency=efficiency,
            tp_sizes=_powers_of_two(tp_limit),
            pp_sizes=_powers_of_two(pp_limit),
            v_stages=(1,),
            zero_stages=(0,),
            sequence_parallel=(False,),
            overlap=overlap_comm,
        )
        if not search.feasible_count:
            raise InfeasibleError(
                f"no tensor x pipeline x data split of {getattr(workload, 'name', workload)} "
                f"fits the fleet (tp <= {tp_limit}, pp <= {pp_limit})"
            )
        return ParallelismOptimizerResult(search)
