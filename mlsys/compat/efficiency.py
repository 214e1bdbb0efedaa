"""The textbook's efficiency model: the share of peak FLOPs a kind of kernel achieves.

*Machine Learning Systems* (harvard-edge/cs249r_book) calls
``EfficiencyModel().solve(model, hardware, workload_type="ffn", use_flash_attention=False,
precision="fp16", efficiency=0.5)`` and reads ``mfu``, ``achievable_flops`` and
``overhead_breakdown``. Its utilisation figures are the book's estimates, served as such
from its calibration table and literature anchors (each recorded with its source in
``book_systems.toml`` / ``book_assumptions.toml``); they scale with ``efficiency / 0.5``:

* ``ffn`` (dense GEMMs): ``min(MfuHigh · scale, MFU_FFN_CAP)``, 0.5 and 0.60;
* ``attention``: with FlashAttention ``min(MFU_FLASH_ATTENTION · scale,
  MFU_FLASH_ATTENTION_CAP)``, 0.75 and 0.85; without, ``MfuLow · scale`` (0.3);
* ``conv``: ``min((MfuLow + MfuHigh)/2 · scale, MFU_CONV_CAP)``, 0.55;
* anything else: ``MfuLow · scale``.

The achievable rate is that share of the device's catalog peak at ``precision`` (mlsys's
dense peak, Williams et al. 2009's compute roof), and the overhead ``1 − MFU`` splits into
an occupancy loss ``1 − min(efficiency · HFU_MFU_RATIO, 1)`` and the memory stall left.
"""

from __future__ import annotations

from typing import Any, ClassVar

from mlsys.compat._args import fraction
from mlsys.compat._unwrap import as_catalog, book_peak_flops_s
from mlsys.core.errors import ParameterError
from mlsys.core.results import Result

__all__ = ["EfficiencyModel", "EfficiencyResult"]

# The book scales its MFU figures by efficiency relative to this reference.
_REFERENCE_EFFICIENCY = 0.5


class EfficiencyResult(Result):
    """What the book's ``EfficiencyModel().solve`` returns.

    Attributes
    ----------
    mfu : float
        The book's estimate of model FLOPs utilisation for the kernel kind, in [0, 1].
    achievable_flops : Quantity [FLOP/s]
        ``mfu`` times the peak.
    peak_flops : Quantity [FLOP/s]
        The device's catalog peak at ``precision``.
    workload_type : str
        As given.
    use_flash_attention : bool
        As given.
    overhead_breakdown : dict
        ``occupancy_loss`` and ``memory_stall``, fractions of the peak.
    """

    _title: ClassVar[str] = "Efficiency"
    _units: ClassVar[dict[str, str | None]] = {
        "mfu": None,
        "achievable_flops": "flop/s",
        "peak_flops": "flop/s",
        "workload_type": None,
        "use_flash_attention": None,
        "overhead_breakdown": None,
    }


def _book_mfu(workload_type: str, flash: bool, scale: float) -> float:
    """The book's MFU estimate for a kernel kind (its calibration and literature anchors)."""
    from mlsys.compat.systems import Literature
    from mlsys.compat.systems import calibration as cal

    low, high = float(Literature.Training.MfuLow), float(Literature.Training.MfuHigh)
    if workload_type == "attention" and flash:
        eta = min(float(cal.MFU_FLASH_ATTENTION) * scale, float(cal.MFU_FLASH_ATTENTION_CAP))
    elif workload_type == "ffn":
        eta = min(high * scale, float(cal.MFU_FFN_CAP))
    elif workload_type == "conv":
        eta = min((low + high) / 2.0 * scale, float(cal.MFU_CONV_CAP))
    else:  # attention without FlashAttention, and any other kernel
        eta = low * scale
    return max(0.0, min(eta, 1.0))


class EfficiencyModel:
    """The book's EfficiencyModel: its MFU estimate per kernel kind on a catalog peak."""

    def solve(
        self,
        model: Any,
        hardware: Any,
        workload_type: str = "ffn",
        use_flash_attention: bool = False,
        precision: str = "fp16",
        efficiency: float = 0.5,
    ) -> EfficiencyResult:
        """The book's utilisation estimate for a kind of kernel, and the FLOP/s it leaves.

        Parameters
        ----------
        model : BookModel or Workload
            The model (the book's estimate does not depend on it).
        hardware : BookAccelerator or Accelerator
            The device whose peak is scaled.
        workload_type : str
            ``"ffn"``, ``"attention"``, ``"conv"`` or another kind (the book's low MFU).
        use_flash_attention : bool
            FlashAttention for ``"attention"``.
        precision : str
            The peak read; a precision the device does not list reads its 16-bit peak.
        efficiency : float
            In (0, 1]; the book's figures scale by ``efficiency / 0.5``.

        Returns
        -------
        EfficiencyResult

        Raises
        ------
        ParameterError
            For an efficiency outside (0, 1] or a ``workload_type`` that is not a string.

        References
        ----------
        The book's calibration (mlsysim engine/calibration.py at e0fde03), beside
        Chowdhery et al. (2022), "PaLM", Table 3 (46.2% MFU, 57.8% HFU) and Dao (2023),
        "FlashAttention-2" (72% MFU training GPT-style models on A100s).

        Examples
        --------
        Dense feed-forward GEMMs on an H100 at the book's efficiency 0.5: MFU 0.5, 494.7
        of 989.4 TFLOP/s, an occupancy loss of 1 − 0.5 · 1.1 = 0.45 and a memory stall
        of 0.05.

        >>> from mlsys import Hardware, Models
        >>> res = EfficiencyModel().solve(Models.Language.Llama3_8B, Hardware.H100)
        >>> res.mfu, round(res.achievable_flops.m_as("TFLOP/s"), 1)
        (0.5, 494.7)
        """
        accelerator = as_catalog(hardware)
        if not isinstance(workload_type, str):
            raise ParameterError("workload_type", workload_type, "'ffn', 'attention' or 'conv'")
        eff = fraction(efficiency, "efficiency")
        peak = book_peak_flops_s(accelerator, precision)
        eta = _book_mfu(workload_type, bool(use_flash_attention), eff / _REFERENCE_EFFICIENCY)
        from mlsys.compat.systems import calibration as cal

        occupancy = 1.0 - min(eff * float(cal.HFU_MFU_RATIO), 1.0)
        return EfficiencyResult(
            mfu=eta,
            achievable_flops=peak * eta,
            peak_flops=peak,
            workload_type=workload_type,
            use_flash_attention=bool(use_flash_attention),
            overhead_breakdown={
                "occupancy_loss": occupancy,
                "memory_stall": max(0.0, 1.0 - eta - occupancy),
            },
        )
