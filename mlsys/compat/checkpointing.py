"""The textbook's checkpoint model: how big a training checkpoint is and what writing it costs.

*Machine Learning Systems* (harvard-edge/cs249r_book) asks ``CheckpointModel().solve(model,
hardware, optimizer="adam", checkpoint_interval_hours=4.0, n_writers=1,
filesystem_limit_gbs=500.0)`` for the size of a checkpoint, the time to write it and the
share of the interval spent writing. mlsys serves it with its reliability formulas:
:func:`~mlsys.core.formulas.reliability.checkpoint_bytes` (14 bytes per parameter for
mixed-precision Adam, Rajbhandari et al. 2020) and
:func:`~mlsys.core.formulas.reliability.checkpoint_write_time_s` at the aggregate bandwidth
of ``n_writers`` drives, capped by the file system.
"""

from __future__ import annotations

from typing import Any, ClassVar

from mlsys.compat._args import in_si
from mlsys.compat._unwrap import as_catalog
from mlsys.core.errors import ParameterError
from mlsys.core.formulas.reliability import checkpoint_bytes, checkpoint_write_time_s
from mlsys.core.results import Result
from mlsys.core.solvers._checks import one_si

__all__ = ["CheckpointModel", "CheckpointResult"]

#: Checkpointed bytes per parameter: mixed-precision Adam writes 16-bit weights, an fp32
#: master copy and two fp32 moments (2 + 4 + 4 + 4, Rajbhandari et al. 2020, Sec. 3.1);
#: SGD without momentum writes the fp32 weights.
_BYTES_PER_PARAM = {"adam": 14.0, "adamw": 14.0, "sgd": 4.0}

#: A write longer than this stalls training long enough for the book to flag it.
_BOTTLENECK_S = 60.0


class CheckpointResult(Result):
    """What the book's ``CheckpointModel().solve`` returns.

    Attributes
    ----------
    checkpoint_size : Quantity [B]
        ``parameters × bytes per parameter`` (14 for Adam, 4 for SGD).
    write_time_seconds : Quantity [s]
        ``size / min(n_writers × drive bandwidth, file-system limit)``.
    max_bandwidth_required : Quantity [B/s]
        One writer's drive bandwidth (the book's field).
    storage_bottleneck : bool
        The write takes longer than a minute.
    mfu_penalty_pct : float
        Write time over the checkpoint interval (a fraction, as the book computes it).
    """

    _title: ClassVar[str] = "Checkpoint"
    _units: ClassVar[dict[str, str | None]] = {
        "checkpoint_size": "B",
        "write_time_seconds": "s",
        "max_bandwidth_required": "B/s",
        "storage_bottleneck": None,
        "mfu_penalty_pct": None,
    }


def _drive_bandwidth(hardware: Any, storage_bandwidth: Any) -> float:
    """One writer's bandwidth in B/s: given, else the drive the book attaches to the part."""
    if storage_bandwidth is not None:
        return one_si(storage_bandwidth, "B/s", "storage_bandwidth", allow_zero=False)
    drive = getattr(getattr(hardware, "storage", None), "bandwidth", None)
    if drive is None:
        raise ParameterError(
            "storage_bandwidth",
            None,
            "a write bandwidth (e.g. '7 GB/s'): this hardware states no local storage",
        )
    return one_si(drive, "B/s", "hardware.storage.bandwidth", allow_zero=False)


class CheckpointModel:
    """The book's CheckpointModel: checkpoint size, write time and the interval it costs."""

    def solve(
        self,
        model: Any,
        hardware: Any,
        optimizer: str = "adam",
        checkpoint_interval_hours: Any = 4.0,
        n_writers: int = 1,
        filesystem_limit_gbs: Any = 500.0,
        storage_bandwidth: Any = None,
    ) -> CheckpointResult:
        """Size and write time of one checkpoint, and its share of the interval.

        Parameters
        ----------
        model : BookModel or Workload
            The model (a view of the book's registries is accepted).
        hardware : BookAccelerator
            The part whose drive writes (``hardware.storage.bandwidth``, as the book's
            ``Hardware.Cloud.H100``), unless ``storage_bandwidth`` is given.
        optimizer : str
            ``"adam"``/``"adamw"`` (14 bytes per parameter) or ``"sgd"`` (4).
        checkpoint_interval_hours : float or Quantity [time]
            Time between checkpoints (a plain number is hours).
        n_writers : int
            Writers sharing the checkpoint (each at the drive's bandwidth).
        filesystem_limit_gbs : float or Quantity [B/s]
            The file system's aggregate write limit (a plain number is GB/s).
        storage_bandwidth : Quantity [B/s], optional
            One writer's bandwidth, for hardware that states no drive.

        Returns
        -------
        CheckpointResult

        Raises
        ------
        ParameterError
            For an unknown optimizer, a count that is not a whole number of at least 1,
            bandwidths or an interval that are not positive, or hardware without a drive
            and no ``storage_bandwidth``.

        Examples
        --------
        Llama-3 8B with Adam, 8.03e9 × 14 = 112.4 GB, written by one H100 drive at
        7 GB/s: 16.1 s, 0.11% of a 4-hour interval.

        >>> from mlsys import Hardware, Models
        >>> res = CheckpointModel().solve(Models.Language.Llama3_8B, Hardware.Cloud.H100)
        >>> round(res.si("write_time_seconds"), 1), round(res.mfu_penalty_pct * 100, 2)
        (16.1, 0.11)
        """
        from mlsys.core.checks import positive_int

        key = str(optimizer).lower()
        if key not in _BYTES_PER_PARAM:
            raise ParameterError("optimizer", optimizer, f"one of {sorted(_BYTES_PER_PARAM)}")
        writers = positive_int("n_writers", n_writers)
        drive_bps = _drive_bandwidth(hardware, storage_bandwidth)
        limit_bps = in_si(filesystem_limit_gbs, "B/s", 1e9, "filesystem_limit_gbs")
        interval_s = in_si(checkpoint_interval_hours, "s", 3600.0, "checkpoint_interval_hours")
        params = as_catalog(model).parameters.m_as("count")
        size_b = float(checkpoint_bytes(params, _BYTES_PER_PARAM[key]))
        write_s = float(checkpoint_write_time_s(size_b, min(drive_bps * writers, limit_bps)))
        return CheckpointResult(
            checkpoint_size=size_b,
            write_time_seconds=write_s,
            max_bandwidth_required=drive_bps,
            storage_bottleneck=write_s > _BOTTLENECK_S,
            mfu_penalty_pct=write_s / interval_s,
        )
