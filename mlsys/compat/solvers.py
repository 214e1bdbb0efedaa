"""mlsys's solvers under the textbook's call shapes: they take the book's registry views.

*Machine Learning Systems* (harvard-edge/cs249r_book) calls
``DistributedModel().solve(Models.Language.Llama3_8B, Systems.Clusters.Research_256,
batch_size=1024, ..., overlap_comm=True)`` and ``ServingModel().solve(model, hardware,
seq_len=4096, batch_size=32)``: its arguments are the book's views
(:class:`~mlsys.compat.models.BookModel`, :class:`~mlsys.compat.systems.BookCluster`, ...)
and two keywords have other names in mlsys. Each class here IS mlsys's solver (a
subclass: same physics, same results); its ``solve`` first turns every view into the
catalog object it shows (:func:`as_catalog`) and the book's keywords into mlsys's
(``overlap_comm`` -> ``overlap``; the serving ``seq_len`` -> ``prompt_len``). mlsys's own
arguments pass through unchanged.
"""

from __future__ import annotations

from typing import Any

from mlsys.compat._unwrap import as_catalog
from mlsys.compat.capacity import ServingCapacityModel, TailLatencyModel
from mlsys.compat.checkpointing import CheckpointModel
from mlsys.compat.compression import CompressionModel
from mlsys.compat.continuous import ContinuousBatchingModel
from mlsys.compat.efficiency import EfficiencyModel
from mlsys.compat.inference import BatchingOptimizer, InferenceScalingModel, SynthesisSolver
from mlsys.compat.moe import MoERoutingModel
from mlsys.compat.network import NetworkRooflineModel, TopologyModel
from mlsys.compat.parallelism import ParallelismOptimizer
from mlsys.compat.placement import PlacementOptimizer
from mlsys.compat.planning import OrchestrationModel, ScalingModel, TransformationModel
from mlsys.compat.responsible import ResponsibleEngineeringModel
from mlsys.compat.results import as_book
from mlsys.compat.sensitivity import SensitivitySolver
from mlsys.compat.solver_rules import book_rule_active
from mlsys.compat.wafer import WeightStreamingModel
from mlsys.core.solvers.distributed import DistributedModel as _Distributed
from mlsys.core.solvers.economics import EconomicsModel as _Economics
from mlsys.core.solvers.memory import MemoryModel as _Memory
from mlsys.core.solvers.reliability import ReliabilityModel as _Reliability
from mlsys.core.solvers.roofline import SingleNodeModel as _SingleNode
from mlsys.core.solvers.serving import ServingModel as _Serving
from mlsys.core.solvers.sustainability import SustainabilityModel as _Sustainability

__all__ = [
    "as_catalog",
    "DataModel",
    "DistributedModel",
    "ServingModel",
    "SingleNodeModel",
    "TrainingMemoryModel",
    "ReliabilityModel",
    "SustainabilityModel",
    "EconomicsModel",
    "ServingCapacityModel",
    "TailLatencyModel",
    "ParallelismOptimizer",
    "PlacementOptimizer",
    "ScalingModel",
    "OrchestrationModel",
    "TransformationModel",
    "InferenceScalingModel",
    "BatchingOptimizer",
    "SynthesisSolver",
    "CheckpointModel",
    "ContinuousBatchingModel",
    "SensitivitySolver",
    "NetworkRooflineModel",
    "TopologyModel",
    "MoERoutingModel",
    "ResponsibleEngineeringModel",
    "CompressionModel",
    "EfficiencyModel",
    "WeightStreamingModel",
]


def _catalog_args(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple, dict]:
    return tuple(as_catalog(a) for a in args), {k: as_catalog(v) for k, v in kwargs.items()}


def _renamed(kwargs: dict[str, Any], book: str, ours: str) -> dict[str, Any]:
    if book in kwargs:
        from mlsys.core.errors import ParameterError

        if ours in kwargs:
            raise ParameterError(book, kwargs[book], f"either {book}= or {ours}=, not both")
        kwargs[ours] = kwargs.pop(book)
    return kwargs


class DistributedModel(_Distributed):
    """:class:`mlsys.DistributedModel`, taking the book's views and ``overlap_comm=``."""

    def solve(self, *args: Any, **kwargs: Any) -> Any:
        """Solve as :meth:`mlsys.DistributedModel.solve`.

        Parameters
        ----------
        *args, **kwargs
            As :meth:`mlsys.DistributedModel.solve`; views of the book's registries are
            accepted (:func:`as_catalog`) and ``overlap_comm`` is ``overlap``.

        Returns
        -------
        BookDistributedResult
            mlsys's result, also answering the book's names
            (:class:`~mlsys.compat.results.BookDistributedResult`).
        """
        args, kwargs = _catalog_args(args, _renamed(dict(kwargs), "overlap_comm", "overlap"))
        return as_book(super().solve(*args, **kwargs))


class ServingModel(_Serving):
    """:class:`mlsys.ServingModel`, taking the book's views and its ``seq_len=``."""

    def solve(self, *args: Any, **kwargs: Any) -> Any:
        """Solve as :meth:`mlsys.ServingModel.solve`.

        The book's serving solver reports ``ttft`` and ``itl`` whether or not the model
        fits (its ``feasible`` says which), and its chapters compare such what-ifs
        (Llama-2 70B on one H100 against one H200), so latencies are priced for a
        configuration that does not fit too (``price_infeasible=True`` unless given);
        ``feasible`` and ``infeasibility_reason`` still say it does not fit.

        Parameters
        ----------
        *args, **kwargs
            As :meth:`mlsys.ServingModel.solve`; views of the book's registries are
            accepted and the book's ``seq_len`` (the context a request brings) is
            ``prompt_len``.

        Returns
        -------
        BookServingResult
            mlsys's result, also answering the book's memory fields
            (:class:`~mlsys.compat.results.BookServingResult`).
        """
        args, kwargs = _catalog_args(args, _renamed(dict(kwargs), "seq_len", "prompt_len"))
        kwargs.setdefault("price_infeasible", True)
        return as_book(super().solve(*args, **kwargs))


def _passing_views(base: type) -> type:
    def solve(self: Any, *args: Any, **kwargs: Any) -> Any:
        args, kwargs = _catalog_args(args, dict(kwargs))
        return as_book(base.solve(self, *args, **kwargs))

    solve.__doc__ = (
        f"Solve as :meth:`mlsys.{base.__name__}.solve`, views of the book's registries "
        "accepted (:func:`as_catalog`).\n\n"
        "Parameters\n----------\n*args, **kwargs\n"
        f"    As :meth:`mlsys.{base.__name__}.solve`.\n\n"
        f"Returns\n-------\nobject\n    The result of :meth:`mlsys.{base.__name__}.solve` "
        "(a single-node one also answers the book's ``bottleneck`` and ``energy``, "
        ":mod:`mlsys.compat.results`).\n"
    )
    doc = f":class:`mlsys.{base.__name__}`, taking the book's registry views."
    return type(base.__name__, (base,), {"solve": solve, "__doc__": doc, "__module__": __name__})


SingleNodeModel = _passing_views(_SingleNode)
ReliabilityModel = _passing_views(_Reliability)
EconomicsModel = _passing_views(_Economics)


class SustainabilityModel(_Sustainability):
    """:class:`mlsys.SustainabilityModel`, taking the book's views and keywords.

    The book's sustainability chapter calls ``SustainabilityModel().solve(fleet=DummyFleet(),
    datacenter=Infrastructure.Grids.US_Avg, duration_days=30, mfu=1.0)`` and reads
    ``res.total_energy_kwh``: its fleet may be any object with ``node.accelerator``,
    ``total_accelerators`` and ``effective_pue``, its ``datacenter`` a grid (which carries
    the book's PUE for its cooling tier), its time in days and its utilisation ``mfu``.
    """

    def solve(  # type: ignore[override]
        self,
        fleet: Any = None,
        duration: Any = None,
        *,
        duration_days: Any = None,
        mfu: Any = None,
        **kwargs: Any,
    ) -> Any:
        """Solve as :meth:`mlsys.SustainabilityModel.solve`, with the book's keywords.

        Facility energy is ``accelerators · P(mfu) · PUE · duration`` with ``P`` linear
        between idle and TDP (Fan, Weber & Barroso 2007), so at ``mfu=1`` it is
        ``accelerators · TDP · PUE · 24 h · days``, the book's own check.

        Parameters
        ----------
        fleet : Fleet, a book cluster view, or a duck-typed fleet, optional
            The cluster. A duck-typed one (an object with ``node.accelerator`` and
            ``total_accelerators``, the book's ``DummyFleet``) is priced as
            ``accelerator=node.accelerator``, ``accelerators=total_accelerators`` with no
            host power (its node declares none; a node with ``host_power`` is refused:
            give an mlsys Fleet); its ``effective_pue``, if any, is the PUE unless
            ``pue=`` is given.
        duration : Quantity [time] or float [s], optional
            Wall-clock time of the job.
        duration_days : float or Quantity [time], optional
            The book's name: the job's length in days (a plain number is days). Give it
            or ``duration``, not both.
        mfu : float, optional
            The book's name for ``utilization``: accelerator activity in (0, 1].
        **kwargs
            As :meth:`mlsys.SustainabilityModel.solve`. A book grid view passed as
            ``datacenter`` is used as the ``grid``, its ``pue`` (the book's cooling tier)
            the PUE unless one is given otherwise.

        Returns
        -------
        BookSustainabilityResult
            mlsys's result, also answering the book's ``total_energy_kwh``.

        Raises
        ------
        ParameterError
            When a book keyword and its mlsys name are both given, on a non-positive
            ``duration_days``, an ``mfu`` outside (0, 1], or a duck-typed fleet whose
            node states a host power.
        """
        duration = _book_duration(duration, duration_days)
        if mfu is not None:
            kwargs = _renamed({**kwargs, "mfu": _book_mfu(mfu)}, "mfu", "utilization")
        fleet, kwargs = _book_fleet(fleet, kwargs)
        kwargs = _book_grid_as_datacenter(kwargs)
        _args, kwargs = _catalog_args((), kwargs)
        return as_book(super().solve(as_catalog(fleet), duration, **kwargs))


def _book_duration(duration: Any, duration_days: Any) -> Any:
    """``duration``, or the book's ``duration_days`` as a time Quantity."""
    if duration_days is None:
        return duration
    from mlsys._book_formulas import _number
    from mlsys.core.errors import ParameterError
    from mlsys.core.units import Q_

    if duration is not None:
        raise ParameterError(
            "duration_days", duration_days, "either duration_days= or duration=, not both"
        )
    return Q_(_number(duration_days, "day", "duration_days", allow_zero=False), "day")


def _book_mfu(mfu: Any) -> float:
    from mlsys._book_formulas import _fraction

    return _fraction(mfu, "mfu", allow_zero=False)


def _book_fleet(fleet: Any, kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """A duck-typed book fleet as ``accelerator=`` / ``accelerators=`` (and its PUE)."""
    node = getattr(fleet, "node", None)
    if fleet is None or node is None or _is_catalog_fleet(fleet):
        return fleet, kwargs
    from mlsys.core.errors import ParameterError

    if getattr(node, "host_power", None) is not None:
        raise ParameterError(
            "fleet",
            type(fleet).__name__,
            "a Fleet, or an object whose node states no host power",
            "Give an mlsys Fleet (Systems.Clusters.*) to price host power.",
        )
    kwargs = {
        **kwargs,
        "accelerator": node.accelerator,
        "accelerators": getattr(fleet, "total_accelerators", None),
    }
    pue = getattr(fleet, "effective_pue", None)
    if pue is not None:
        kwargs.setdefault("pue", pue)
    return None, kwargs


def _is_catalog_fleet(fleet: Any) -> bool:
    from mlsys.core.types import Fleet

    return isinstance(as_catalog(fleet), Fleet)


def _book_grid_as_datacenter(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The book's ``datacenter=<grid view>``: the grid, and its PUE unless one is given.

    A catalog grid view becomes ``grid=`` (its carbon and water intensity); a grid the
    book alone lists gives its ``carbon_intensity_g_kwh`` as ``carbon_intensity=``.
    """
    from mlsys.core.errors import ParameterError
    from mlsys.core.units import Q_

    site = kwargs.get("datacenter")
    if site is None or not hasattr(site, "carbon_intensity_g_kwh"):
        return kwargs
    if kwargs.get("grid") is not None:
        raise ParameterError(
            "datacenter",
            getattr(site, "book_name", site),
            "either a grid in datacenter= or grid=, not both",
        )
    kwargs = {k: v for k, v in kwargs.items() if k != "datacenter"}
    if hasattr(site, "entry"):
        kwargs["grid"] = site
    else:
        kwargs.setdefault("carbon_intensity", Q_(site.carbon_intensity_g_kwh, "gCO2e/kWh"))
    if getattr(site, "pue", None) is not None:
        kwargs.setdefault("pue", site.pue)
    return kwargs


class TrainingMemoryModel:
    """The book's TrainingMemoryModel: one device's training memory, by mlsys's MemoryModel.

    ``TrainingMemoryModel().solve(model, hardware, batch_size, seq_len=2048,
    precision="fp16", optimizer="adam", activation_checkpointing="selective", tp_size=1,
    pp_size=1, dp_size=1, ep_size=1, zero_stage=0, gradient_accumulation_steps=1)`` is
    :meth:`mlsys.core.solvers.memory.MemoryModel.solve` in ``mode="training"`` with the
    book's keywords renamed: ``activation_checkpointing`` -> ``recompute``,
    ``gradient_accumulation_steps`` -> ``microbatch_count`` (both divide the global batch
    into the micro-batch one replica holds at once). The accounting is mlsys's: model
    states of Rajbhandari et al. (2020), "ZeRO", Sec. 3.1, sharded by TP·PP·EP then by
    ZeRO stage; activations of Korthikanti et al. (2023), "Reducing Activation
    Recomputation in Large Transformer Models", Sec. 4.
    """

    def solve(
        self,
        model: Any,
        hardware: Any,
        batch_size: int,
        seq_len: int = 2048,
        precision: str = "fp16",
        optimizer: str = "adam",
        activation_checkpointing: str = "selective",
        tp_size: int = 1,
        pp_size: int = 1,
        dp_size: int = 1,
        ep_size: int = 1,
        zero_stage: int = 0,
        gradient_accumulation_steps: int = 1,
        trainable_fraction: float = 1.0,
        communication_buffer_fraction: float = 0.05,
    ) -> Any:
        """Memory per device of training ``model`` on ``hardware``.

        Parameters
        ----------
        model : BookModel or TransformerWorkload
            The network (a view of the book's registries is accepted).
        hardware : BookAccelerator or Accelerator
            The device.
        batch_size : int
            Global batch, sequences.
        seq_len : int
            Tokens per sequence.
        precision : str
            Compute precision (``"fp16"``).
        optimizer : str
            As :meth:`mlsys.core.solvers.memory.MemoryModel.solve` (``"adam"``, ``"sgd"``).
        activation_checkpointing : {"none", "selective", "full"}
            mlsys's ``recompute``.
        tp_size, pp_size, dp_size, ep_size : int
            Parallel degrees.
        zero_stage : {0, 1, 2, 3}
            ZeRO partitioning over ``dp_size``.
        gradient_accumulation_steps : int
            mlsys's ``microbatch_count``: ``batch_size / (dp_size ·
            gradient_accumulation_steps)`` must be whole.
        trainable_fraction : float
            Only 1.0 (every parameter trained): mlsys prices full training.
        communication_buffer_fraction : float
            Only the book's default 0.05: mlsys sizes runtime buffers by its own
            framework allowance (``communication_buffers`` of the result).

        Returns
        -------
        BookTrainingMemoryResult
            mlsys's MemoryResult, also answering the book's names
            (:class:`~mlsys.compat.results.BookTrainingMemoryResult`).

        Raises
        ------
        ParameterError
            For a ``trainable_fraction`` or ``communication_buffer_fraction`` mlsys does
            not model, and as MemoryModel for any other bad input.
        """
        from mlsys.core.errors import ParameterError

        if trainable_fraction != 1.0:
            raise ParameterError(
                "trainable_fraction", trainable_fraction, "1.0 (mlsys prices full training)"
            )
        if communication_buffer_fraction != 0.05:
            raise ParameterError(
                "communication_buffer_fraction",
                communication_buffer_fraction,
                "the default 0.05 (mlsys sizes runtime buffers by its framework allowance)",
            )
        result = _Memory().solve(
            as_catalog(model),
            as_catalog(hardware),
            batch_size=batch_size,
            seq_len=seq_len,
            precision=precision,
            mode="training",
            optimizer=optimizer,
            dp_size=dp_size,
            tp_size=tp_size,
            pp_size=pp_size,
            ep_size=ep_size,
            zero_stage=zero_stage,
            recompute=activation_checkpointing,
            microbatch_count=gradient_accumulation_steps,
        )
        book = as_book(result)
        if book_rule_active("OPTIMIZER_MASTER_COPY"):
            return _with_master_copy(book, optimizer, as_catalog(hardware))
        return book


def _with_master_copy(result: Any, optimizer: str, accel: Any) -> Any:
    """``result`` with the book's optimizer state: the fp32 master copy at every precision.

    The book counts ``K = optimizer_state_bytes_per_param(optimizer, master_weights=True)``
    bytes per parameter (Adam: 12; Rajbhandari et al. 2020, "ZeRO", Sec. 3.1) even in
    pure fp32 training, where mlsys drops the master copy (Adam: 8). The state grows by
    ``K_book - K`` bytes on each parameter it covers on this device (``optimizer_state /
    K``, else the parameters per device, over ``dp_size`` from ZeRO stage 1), and the
    total, headroom and fit with it. A result already at ``K_book`` is returned as is.

    Examples
    --------
    GPT-3 (174.6e9 counted parameters) in fp32 on one A100, Adam: the state grows by
    4 B x 174.6e9 = 698 GB, the total from ~2.95 TB to ~3.65 TB.
    """
    from mlsys.core.formulas.memory import optimizer_state_bytes_per_param

    k_mlsys = float(result.optimizer_bytes_per_param)
    k_book = optimizer_state_bytes_per_param(optimizer, master_weights=True)
    if k_mlsys >= k_book:
        return result
    values = dict(result._values)
    if k_mlsys > 0:
        params = values["optimizer_state"] / k_mlsys
    else:
        shards = values["dp_size"] if values["zero_stage"] >= 1 else 1
        params = values["params_per_device"] / shards
    extra_bytes = (k_book - k_mlsys) * params
    total = values["total"] + extra_bytes
    capacity = values["capacity"]
    values.update(
        optimizer_state=values["optimizer_state"] + extra_bytes,
        model_state=values["model_state"] + extra_bytes,
        total=total,
        headroom=capacity - total,
        utilization=total / capacity,
        feasible=total <= capacity,
        optimizer_bytes_per_param=k_book,
    )
    if total > capacity:
        values["infeasibility_reason"] = (
            f"needs {total / 1e9:,.0f} GB per device but {accel.label} has "
            f"{capacity / 1e9:,.0f} GB (optimizer state with the book's master copy: "
            f"{values['optimizer_state'] / 1e9:,.0f} GB)"
        )
    copy = type(result).__new__(type(result))
    object.__setattr__(copy, "_values", values)
    object.__setattr__(copy, "_origin", result._origin)
    return copy


def _data_paths(hardware: Any) -> list[tuple[str, float]]:
    """(name, bytes/s) of each data path a book device describes, zero ones left out."""
    paths = []
    for name, attr in (("Storage", "storage"), ("Interconnect", "interconnect")):
        part = getattr(hardware, attr, None)
        bandwidth = getattr(part, "bandwidth", None)
        if bandwidth is not None and bandwidth.m_as("B/s") > 0:
            paths.append((name, float(bandwidth.m_as("B/s"))))
    return paths


class DataModel:
    """The book's DataModel: does the storage path feed the device fast enough?

    A pipeline of stages in series delivers at most its slowest stage's rate, so the
    data path's supply is the smaller of the device's local-storage and host-link
    bandwidths, and the accelerator stalls when the workload's ingestion rate exceeds
    it (Mohan et al. 2021, "Analyzing and Mitigating Data Stalls in DNN Training",
    VLDB 14(5), Sec. 3: fetch stalls when storage cannot deliver the samples a GPU
    consumes). A path the hardware does not describe is left out, not taken as 0.
    """

    def solve(self, workload_data_rate: Any, hardware: Any) -> Any:
        """Compare the ingestion rate a workload needs with what the data path supplies.

        Parameters
        ----------
        workload_data_rate : Quantity [byte/s]
            Ingestion rate the workload needs (``Q_(2, "GB/s")``, ``TB/hour``, ...).
        hardware : BookAccelerator
            A book device with ``storage.bandwidth`` and/or ``interconnect.bandwidth``
            (``Hardware.Cloud.H100``).

        Returns
        -------
        DataResult
            ``demand_bw``, ``supply_bw``, ``bottleneck``, ``utilization``,
            ``is_stalled``, ``margin`` (:class:`~mlsys.compat.results.DataResult`).

        Raises
        ------
        ParameterError
            When ``workload_data_rate`` is not one finite, non-negative data rate.
        """
        from mlsys.compat.results import DataResult
        from mlsys.core.solvers._checks import one_si

        demand = one_si(workload_data_rate, "B/s", "workload_data_rate")
        paths = _data_paths(hardware)
        name, supply = min(paths, key=lambda p: p[1]) if paths else ("Unknown", 0.0)
        utilization = demand / supply if supply > 0 else float("inf")
        return DataResult(
            demand_bw=demand,
            supply_bw=supply,
            bottleneck=name,
            utilization=utilization,
            is_stalled=utilization > 1.0,
            margin=supply - demand,
        )
