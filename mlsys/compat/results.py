"""mlsys's results under the field names the textbook's chapters read.

*Machine Learning Systems* (harvard-edge/cs249r_book) reads ``res.kv_cache_size`` from a
serving solve, ``res.dp_communication_latency`` and ``res.node_profile.mfu`` from a
distributed one, ``res.bottleneck`` and ``res.energy`` from a single-node one. Each class
here IS mlsys's result (a subclass with no fields of its own): every book name is a
property read from mlsys's own fields of the same solve, so the physics is the solver's.
:func:`as_book` gives a result its book class; the compat solvers
(:mod:`mlsys.compat.solvers`) return results so marked.
"""

from __future__ import annotations

from typing import Any, ClassVar

from mlsys.core.results import Result
from mlsys.core.solvers.distributed import DistributedResult
from mlsys.core.solvers.memory import MemoryResult
from mlsys.core.solvers.roofline import SingleNodeResult
from mlsys.core.solvers.serving import ServingResult
from mlsys.core.solvers.sustainability import SustainabilityResult

__all__ = [
    "BookDistributedResult",
    "BookServingResult",
    "BookSingleNodeResult",
    "BookSustainabilityResult",
    "BookTrainingMemoryResult",
    "DataResult",
    "NodeProfile",
    "as_book",
]


def _capacity_bytes(hardware: Any) -> Any:
    """Device memory of the accelerator a solve ran on (a Node's accelerator)."""
    acc = getattr(hardware, "accelerator", hardware)
    return acc.memory_capacity


class BookServingResult(ServingResult):
    """:class:`mlsys.core.solvers.serving.ServingResult` with the book's memory fields.

    The book's ServingModel (``mlsysim/engine/solvers/serving.py``) reports the memory a
    replica holds; here each is read from mlsys's per-accelerator fields times the
    replica's ``accelerators`` (``tp_size · pp_size``; 1 for the book's calls).

    Attributes
    ----------
    kv_cache_size : Quantity [byte]
        KV cache of the whole batch, ``kv_cache_bytes_per_accelerator · accelerators``:
        ``2 · layers · kv_heads · head_dim · context · batch · bytes`` (Pope et al. 2023,
        Sec. 2), at mlsys's final context ``prompt_len + output_len`` (the book prices
        its ``seq_len`` alone; the cache a request holds at its last token is larger
        by ``output_len`` tokens).
    model_weights_size : Quantity [byte]
        ``weight_bytes_per_accelerator · accelerators``: parameters × bytes per weight.
    total_memory_required : Quantity [byte]
        ``model_weights_size + kv_cache_size`` (the book's sum: no activations, no
        framework allowance; mlsys's fuller figure is ``memory_per_accelerator``).
    memory_utilization : float
        ``total_memory_required / (accelerators · device memory capacity)``.
    """

    __slots__ = ()

    @property
    def kv_cache_size(self) -> Any:
        """KV cache of the batch over the replica's devices, bytes (see class notes)."""
        return self.kv_cache_bytes_per_accelerator * self.accelerators

    @property
    def model_weights_size(self) -> Any:
        """Weights stored over the replica's devices, bytes."""
        return self.weight_bytes_per_accelerator * self.accelerators

    @property
    def total_memory_required(self) -> Any:
        """Weights plus KV cache, bytes (the book's memory wall)."""
        return self.model_weights_size + self.kv_cache_size

    @property
    def memory_utilization(self) -> float:
        """Share of the replica's device memory the weights and KV cache fill."""
        capacity = _capacity_bytes(self._origin.inputs["hardware"]) * self.accelerators
        return float((self.total_memory_required / capacity).m_as(""))


class NodeProfile(Result):
    """One device's share of a distributed training step (the book's ``node_profile``).

    Attributes
    ----------
    latency : Quantity [s]
        Compute time of the busiest device in one step (no communication, no bubble):
        mlsys's ``compute_time``.
    mfu : float
        Model FLOPs utilisation over that compute time alone:
        ``mfu / scaling_efficiency`` of the distributed result (model FLOPs /
        (compute_time · accelerators · peak); Chowdhery et al. 2022, App. B).
    memory_footprint : Quantity [byte]
        Training state on one device: ``memory_per_accelerator.total``.
    memory_capacity : Quantity [byte]
        Device memory of one accelerator.
    feasible : bool
        Whether the footprint fits.
    """

    _title: ClassVar[str] = "Node profile"
    _units: ClassVar[dict[str, str | None]] = {
        "latency": "s",
        "mfu": None,
        "memory_footprint": "byte",
        "memory_capacity": "byte",
        "feasible": None,
    }


class BookDistributedResult(DistributedResult):
    """:class:`mlsys.core.solvers.distributed.DistributedResult` with the book's names.

    The book's DistributedModel (``mlsysim/engine/solvers/distributed.py``) reports each
    parallelism dimension's collective time and the per-device profile.

    Attributes
    ----------
    dp_communication_latency : Quantity [s]
        The whole data-parallel gradient collective, hidden or not:
        ``dp_communication_total`` (the book reports it before overlap).
    tp_communication_latency : Quantity [s]
        Tensor-parallel activation all-reduces: ``tp_communication_time``.
    ep_communication_latency : Quantity [s]
        Expert-parallel all-to-alls: ``ep_communication_time``.
    node_profile : NodeProfile
        One device's compute time, MFU over it, memory footprint and fit.
    """

    __slots__ = ()

    @property
    def dp_communication_latency(self) -> Any:
        """Data-parallel collective of one step, s (``dp_communication_total``)."""
        return self.dp_communication_total

    @property
    def tp_communication_latency(self) -> Any:
        """Tensor-parallel collectives of one step, s (``tp_communication_time``)."""
        return self.tp_communication_time

    @property
    def ep_communication_latency(self) -> Any:
        """Expert-parallel all-to-alls of one step, s (``ep_communication_time``)."""
        return self.ep_communication_time

    @property
    def node_profile(self) -> NodeProfile:
        """The busiest device's share of the step (:class:`NodeProfile`)."""
        memory = self.memory_per_accelerator
        efficiency = self.scaling_efficiency
        return NodeProfile(
            latency=self.compute_time.m_as("s"),
            mfu=float(self.mfu / efficiency) if efficiency > 0 else 0.0,
            memory_footprint=memory.total.m_as("B"),
            memory_capacity=memory.capacity.m_as("B"),
            feasible=bool(self.feasible),
        )


class BookSingleNodeResult(SingleNodeResult):
    """:class:`mlsys.core.solvers.roofline.SingleNodeResult` with the book's names.

    Attributes
    ----------
    bottleneck : str
        ``"Compute"`` or ``"Memory"``: mlsys's ``bound``, spelt as the book's
        ``calc_bottleneck`` (Williams et al. 2009).
    energy : Quantity [J]
        Energy of the step: the device's average power at utilisation ``mfu``, linear
        between idle and TDP (:func:`mlsys.core.formulas.sustainability.utilization_power_W`,
        Fan, Weber & Barroso 2007), times ``latency``
        (:func:`~mlsys.core.formulas.sustainability.it_energy_J`). The idle power is the
        accelerator's catalogued one, else
        :data:`~mlsys.core.solvers.sustainability.DEFAULT_IDLE_FRACTION` of TDP, as
        :class:`~mlsys.core.solvers.sustainability.SustainabilityModel` takes it.
    """

    __slots__ = ()

    @property
    def bottleneck(self) -> str:
        """``"Compute"`` or ``"Memory"``: the roof that limits the step."""
        return str(self.bound).capitalize()

    @property
    def energy(self) -> Any:
        """Energy of one step, J (see class notes)."""
        from mlsys.core.formulas.sustainability import it_energy_J, utilization_power_W
        from mlsys.core.solvers.sustainability import DEFAULT_IDLE_FRACTION
        from mlsys.core.units import Q_

        hardware = self._origin.inputs["hardware"]
        acc = getattr(hardware, "accelerator", hardware)
        idle_W = acc.idle_power_W
        if idle_W is None:
            idle_W = DEFAULT_IDLE_FRACTION * acc.tdp_W
        power_W = utilization_power_W(float(self.mfu), float(acc.tdp_W), float(idle_W))
        return Q_(it_energy_J(power_W, self.latency.m_as("s")), "J")


class BookSustainabilityResult(SustainabilityResult):
    """:class:`mlsys.core.solvers.sustainability.SustainabilityResult` with the book's names.

    Attributes
    ----------
    total_energy_kwh : Quantity [kWh]
        ``energy`` in kWh: the facility energy of the job, IT energy times PUE
        (The Green Grid 2007, "The Green Grid Data Center Power Efficiency Metrics: PUE
        and DCiE", White Paper 6), the figure the book multiplies by a grid's g/kWh.
    """

    __slots__ = ()

    @property
    def total_energy_kwh(self) -> Any:
        """Facility energy of the job, kWh (see class notes)."""
        return self.energy.to("kWh")


_BOOK_CLASSES: dict[type, type] = {
    ServingResult: BookServingResult,
    DistributedResult: BookDistributedResult,
    SingleNodeResult: BookSingleNodeResult,
    SustainabilityResult: BookSustainabilityResult,
}


def as_book(result: Any) -> Any:
    """The result as its book class (anything else unchanged).

    Parameters
    ----------
    result : object
        A result of mlsys's ServingModel, DistributedModel, SingleNodeModel,
        SustainabilityModel or MemoryModel.

    Returns
    -------
    object
        A copy of its book class, also answering the book's field names; the values
        (and origin) are the same objects.
    """
    book = _BOOK_CLASSES.get(type(result))
    if book is None:
        return result
    copy = book.__new__(book)  # a copy: a solver's memo may hand the same object out again
    object.__setattr__(copy, "_values", result._values)
    object.__setattr__(copy, "_origin", result._origin)
    copy.__dict__.update(result.__dict__)
    return copy


class BookTrainingMemoryResult(MemoryResult):
    """:class:`mlsys.core.solvers.memory.MemoryResult` with the book's training names.

    The book's TrainingMemoryModel (``mlsysim/engine/solvers/training.py``) reports one
    device's training memory; each name here reads mlsys's field of the same solve.

    Attributes
    ----------
    total_memory : Quantity [byte]
        ``total``: weights, gradients, optimizer state, activations and the framework
        allowance on one device.
    available_memory : Quantity [byte]
        ``capacity``: the device's memory.
    memory_utilization : float
        ``utilization`` = ``total / capacity``.
    communication_buffers : Quantity [byte]
        ``framework_overhead``: mlsys's allowance for runtime buffers (collective
        buckets among them) and allocator fragmentation, where the book sizes a
        gradient bucket and pipeline send/receive buffers.
    activation_checkpointing : str
        ``recompute``: ``"none"``, ``"selective"`` or ``"full"``.
    parallelism : dict
        ``{"dp", "tp", "pp", "ep"}`` sizes.
    """

    __slots__ = ()

    @property
    def total_memory(self) -> Any:
        """Memory one device needs, bytes (``total``)."""
        return self.total

    @property
    def available_memory(self) -> Any:
        """Device memory, bytes (``capacity``)."""
        return self.capacity

    @property
    def memory_utilization(self) -> float:
        """``total / capacity`` (``utilization``)."""
        return self.utilization

    @property
    def communication_buffers(self) -> Any:
        """Runtime-buffer allowance, bytes (``framework_overhead``)."""
        return self.framework_overhead

    @property
    def activation_checkpointing(self) -> str:
        """The recomputation policy solved (``recompute``)."""
        return self.recompute

    @property
    def parallelism(self) -> dict[str, int]:
        """Data-, tensor-, pipeline- and expert-parallel sizes."""
        return {
            "dp": int(self.dp_size),
            "tp": int(self.tp_size),
            "pp": int(self.pp_size),
            "ep": int(self.ep_size),
        }


_BOOK_CLASSES[MemoryResult] = BookTrainingMemoryResult


class DataResult(Result):
    """What the book's ``DataModel().solve`` returns: can storage feed the accelerator?

    Attributes
    ----------
    demand_bw : Quantity [byte/s]
        The ingestion rate the workload needs.
    supply_bw : Quantity [byte/s]
        The slowest described path from storage to the device (local drive, host
        link); 0 when the hardware describes neither.
    bottleneck : str
        ``"Storage"``, ``"Interconnect"`` or ``"Unknown"``: which path ``supply_bw`` is.
    utilization : float
        ``demand_bw / supply_bw`` (inf when nothing is described).
    is_stalled : bool
        ``utilization > 1``: the device waits for data.
    margin : Quantity [byte/s]
        ``supply_bw − demand_bw`` (negative when stalled).
    """

    _title: ClassVar[str] = "Data pipeline"
    _units: ClassVar[dict[str, str | None]] = {
        "demand_bw": "byte/s",
        "supply_bw": "byte/s",
        "bottleneck": None,
        "utilization": None,
        "is_stalled": None,
        "margin": "byte/s",
    }
