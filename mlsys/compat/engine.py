"""``Engine.solve``: the textbook's one-call roofline, as an adapter over SingleNodeModel.

*Machine Learning Systems* (harvard-edge/cs249r_book) calls
``Engine.solve(model, hardware, batch_size=, precision=, efficiency=)`` and reads
``.latency``, ``.latency_compute``, ``.bottleneck``, ``.energy``, ``.memory_footprint``,
``.peak_bw_actual`` and ``.peak_flops_actual``. :class:`Engine` passes the catalog entries
behind the book's views to :class:`~mlsys.core.solvers.roofline.SingleNodeModel` (no
second physics) and names its result the book's way; ``from mlsys.engine import
calibration`` reaches :data:`calibration` here.
"""

from __future__ import annotations

import warnings
from functools import cached_property
from typing import Any

from mlsys.compat.solver_rules import book_rule_active
from mlsys.compat.systems import calibration
from mlsys.core.errors import ParameterError
from mlsys.core.units import Q_, to_book_counts

__all__ = ["Engine", "EngineResult", "calibration"]


def _entry(obj: Any, what: str) -> Any:
    from pydantic import BaseModel

    entry = obj if isinstance(obj, BaseModel) else getattr(obj, "entry", obj)
    if entry is None:
        raise ParameterError(
            what, getattr(obj, "book_name", obj), "a catalog entry or a book view of one"
        )
    return entry


class EngineResult:
    """The book's names over a :class:`~mlsys.core.solvers.roofline.SingleNodeResult`.

    Parameters
    ----------
    result : SingleNodeResult
        mlsys's roofline result.
    hardware : Accelerator
        The accelerator solved on.
    efficiency : float or None
        The efficiency passed to the solve (the result records the one applied,
        ``result.compute_efficiency``).
    model : BookModel or Workload, optional
        The model solved, whose ``inference_flops`` figure the book's roofline reads
        while that rule is on (:mod:`mlsys.compat.solver_rules`).

    Attributes
    ----------
    latency : pint.Quantity
        Step time (s).
    latency_compute : pint.Quantity
        Compute-bound time of the step (s): mlsys ``compute_time``.
    latency_memory : pint.Quantity
        Memory-bound time (s): mlsys ``memory_time``. While the book's rule
        ``ENGINE_ACTIVATION_TRAFFIC`` is on (``mlsys migrate --book-figures``), the
        book's roofline instead: weights plus 10% of them per sample at peak bandwidth,
        the model's ``inference_flops`` figure at :attr:`peak_flops_actual`, and
        ``latency``, ``bottleneck`` and ``arithmetic_intensity`` from those two.
    bottleneck : str
        ``"Compute"`` or ``"Memory"`` (mlsys ``bound``, capitalised as the book prints).
    memory_footprint : pint.Quantity
        WEIGHTS only (bytes), the book's meaning: mlsys's ``weights_bytes``. mlsys's own
        ``memory_footprint`` adds the KV cache, activations and framework overhead
        (``result.memory_footprint`` on :attr:`result`).
    energy : pint.Quantity
        Board energy of the step at TDP (J): ``it_energy_J(tdp, latency)``
        (mlsys.core.formulas.sustainability; an upper bound, the book's definition).
    peak_flops_actual : pint.Quantity
        The compute ceiling of the solve: peak FLOP/s at the precision times the compute
        efficiency applied (the efficiency passed, else mlsys's calibrated one), as the
        book's plain count per second: the book's ``peak_flops * efficiency``, so
        ``model.inference_flops / result.peak_flops_actual`` is the compute time. The
        FLOP/s a memory-bound step reaches are lower: ``result.achieved_flops``.
    peak_bw_actual : pint.Quantity
        The accelerator's memory bandwidth (bytes/s), the book's definition: its
        efficiency scales compute only. mlsys's memory time uses the achievable
        fraction of it (``result.memory_efficiency``).
    throughput : pint.Quantity
        Samples per second (batch / latency).
    result : SingleNodeResult
        The full mlsys result.
    """

    def __init__(
        self,
        result: Any,
        hardware: Any,
        batch_size: int,
        efficiency: float | None,
        model: Any = None,
    ) -> None:
        from mlsys.core.formulas.sustainability import it_energy_J

        self.result = result
        self.latency = result.latency
        self.latency_compute = result.compute_time
        self.latency_memory = result.memory_time
        self.bottleneck = str(result.bound).capitalize()
        if book_rule_active("ENGINE_ACTIVATION_TRAFFIC"):
            self._book_roofline(result, hardware, model, batch_size)
        latency_s = self.latency.m_as("s")
        self.memory_footprint = result.weights_bytes
        self.energy = Q_(it_energy_J(hardware.tdp.m_as("W"), latency_s), "J")
        self.peak_flops_actual = to_book_counts(
            hardware.peak_flops_at(result.precision) * result.compute_efficiency
        )
        self.peak_bw_actual = hardware.memory_bandwidth
        self.throughput = Q_(batch_size / latency_s, "1/s")

    def _book_roofline(self, result: Any, hardware: Any, model: Any, batch_size: int) -> None:
        """The book's roofline of the step: its FLOP figure, and weights plus 10% per sample.

        The book's rule (``ENGINE_ACTIVATION_TRAFFIC`` of
        :func:`mlsys.compat.solver_rules.book_rules`): the step moves ``(1 + 0.1 x
        batch_size) x weight bytes`` at the device's peak bandwidth and computes
        ``batch_size x`` the model's ``inference_flops`` figure (a view's, as served; else
        mlsys's count) at :attr:`peak_flops_actual`; its latency is the larger of the two
        (Williams, Waterman & Patterson 2009, "Roofline", CACM 52(4)) and its arithmetic
        intensity their ratio. ResNet-50 at batch 1 in fp16 on an A100: 1.1 x 51.1 MB =
        56.2 MB over 2.039 TB/s, 27.6 us.
        """
        traffic_bytes = result.weights_bytes.m_as("B") * (1.0 + 0.1 * batch_size)
        memory_s = traffic_bytes / hardware.memory_bandwidth.m_as("B/s")
        figure = getattr(model, "inference_flops", None)
        if figure is not None and hasattr(figure, "m_as"):
            flops = batch_size * float(figure.m_as("flop"))
        else:
            flops = result.total_flops.m_as("FLOP")
        peak = hardware.peak_flops_at(result.precision) * result.compute_efficiency
        compute_s = flops / peak.m_as("FLOP/s")
        self.latency_compute = Q_(compute_s, "s")
        self.latency_memory = Q_(memory_s, "s")
        self.latency = Q_(max(compute_s, memory_s), "s")
        self.bottleneck = "Compute" if compute_s >= memory_s else "Memory"
        self.arithmetic_intensity = Q_(flops / traffic_bytes, "FLOP/B")

    def __getattr__(self, item: str) -> Any:
        if item.startswith("_"):
            raise AttributeError(item)
        return getattr(self.__dict__["result"], item)

    def __repr__(self) -> str:
        return f"<EngineResult latency={self.latency:~P} bottleneck={self.bottleneck}>"


# the book's Engine.solve keywords that change nothing at their defaults
_NO_OP_DEFAULTS = {
    "zero_stage": 0,
    "dp_size": 1,
    "is_lora": False,
    "activation_recomputation": False,
}


def _book_keywords(kwargs: dict[str, Any]) -> dict[str, Any]:
    """The book's ``Engine.solve`` keywords as :meth:`SingleNodeModel.solve`'s.

    ``is_training=True`` is ``phase="training"``; ZeRO sharding, LoRA and recomputation
    are the distributed and memory solvers' questions: at their defaults they change
    nothing, otherwise a ParameterError says where to ask.
    """
    from mlsys.core.errors import ParameterError

    kwargs = dict(kwargs)
    if kwargs.pop("is_training", False):
        kwargs.setdefault("phase", "training")
    for name, default in _NO_OP_DEFAULTS.items():
        value = kwargs.pop(name, default)
        if value != default:
            raise ParameterError(
                name,
                value,
                f"{default!r} here; ZeRO, LoRA and recomputation are priced by "
                "mlsys.DistributedModel and mlsys.MemoryModel",
            )
    return kwargs


def _book_peak(accel: Any, precision: str) -> Any:
    """``accel`` with a peak at ``precision``: the book's fallback when it lists none.

    The book's ``Engine.solve`` prices a precision its device lists no peak for (INT8 on
    a V100) at the device's default ``peak_flops``, its 16-bit figure, with a
    ``UserWarning`` "Precision ... not in ...", while the weights keep that precision's
    width. mlsys's roofline refuses such a precision, so the accelerator handed to it
    gets the 16-bit peak under that precision, with the same warning; a device with a
    peak for it is returned unchanged.
    """
    from mlsys.core.precision import normalize_precision

    key = normalize_precision(precision)
    default = next((p for p in ("fp16", "bf16") if p in accel.peak_flops), None)
    if key in accel.peak_flops or default is None:
        return accel
    warnings.warn(
        f"Precision {precision!r} not in the {accel.label}'s peak figures "
        f"({', '.join(sorted(accel.peak_flops))}): compute runs at its default "
        f"peak_flops ({default}), the weights at {precision}",
        UserWarning,
        stacklevel=3,
    )
    peaks = {**accel.peak_flops, key: accel.peak_flops[default]}
    copy = accel.model_copy(update={"peak_flops": peaks})
    for klass in type(copy).__mro__:  # figures cached from the old peaks are recomputed
        for name, attr in vars(klass).items():
            if isinstance(attr, cached_property):
                copy.__dict__.pop(name, None)
    return copy


class Engine:
    """The book's single-node performance engine (a facade over SingleNodeModel)."""

    @staticmethod
    def solve(
        model: Any,
        hardware: Any,
        batch_size: int = 1,
        precision: str = "fp16",
        efficiency: float | None = None,
        **kwargs: Any,
    ) -> EngineResult:
        """Roofline estimate of one step, named the book's way.

        Parameters
        ----------
        model : BookModel or Workload
            ``Models.Vision.ResNet50`` (a book-only model through
            :meth:`BookModel.as_workload`) or a catalog workload.
        hardware : BookAccelerator, BookDevice or Accelerator
            ``Hardware.Cloud.A100``, a book device (``Hardware.Mobile.iPhone15Pro``,
            through :meth:`BookDevice.as_accelerator`) or a catalog accelerator.
        batch_size : int
            Samples per step.
        precision : str
            Numeric precision (the book's default ``"fp16"``).
        efficiency : float, optional
            Fraction of peak compute reached (mlsys's ``efficiency``); default mlsys's
            calibrated efficiency.
        **kwargs
            Passed to :meth:`SingleNodeModel.solve` (``seq_len``, ``phase``, ...); the
            book's ``is_training=True`` is ``phase="training"``, and its ``zero_stage``,
            ``dp_size``, ``is_lora`` and ``activation_recomputation`` are accepted at
            their defaults.

        Returns
        -------
        EngineResult

        Raises
        ------
        ParameterError
            For a book keyword away from its no-op default (``zero_stage=3`` ...), or an
            unknown precision.

        Notes
        -----
        A precision the device lists no peak for (``"int8"`` on a V100) is priced as the
        book prices it, with a ``UserWarning``: the compute at the 16-bit ``peak_flops``,
        the weights at that precision's width.
        """
        from mlsys.compat.hardware import BookDevice
        from mlsys.compat.models import BookModel
        from mlsys.core.solvers.roofline import SingleNodeModel

        book_model = isinstance(model, BookModel)
        workload = model.as_workload() if book_model else _entry(model, "model")
        if isinstance(hardware, BookDevice):
            accel = hardware.as_accelerator()
        else:
            accel = _entry(hardware, "hardware")
        kwargs = _book_keywords(kwargs)
        accel = _book_peak(accel, precision)
        res = SingleNodeModel().solve(
            workload,
            accel,
            batch_size=batch_size,
            precision=precision,
            efficiency=efficiency,
            **kwargs,
        )
        return EngineResult(res, accel, batch_size, efficiency, model)
