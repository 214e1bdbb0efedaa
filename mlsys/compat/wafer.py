"""The textbook's weight-streaming model: a wafer that keeps activations and streams weights.

*Machine Learning Systems* (harvard-edge/cs249r_book) calls
``WeightStreamingModel().solve(model, hardware, seq_len, batch_size=1, precision="fp16",
efficiency=0.5, phase="decode")`` for a Cerebras CS-3: the KV cache stays in the wafer's
SRAM and every layer's weights stream in from MemoryX (Lie 2022). mlsys serves it from
physics:

* SRAM: mlsys's KV-cache bytes (:func:`~mlsys.core.formulas.transformer.kv_cache_bytes`)
  plus the book's estimated 10% working set
  (``calibration.WEIGHT_STREAMING_WORKING_SET_FRACTION``) against the device's memory;
* per layer: its ``P/L`` weights' injection time against its compute (the linear layers'
  ``2 p`` FLOPs per token plus attention,
  :func:`~mlsys.core.formulas.transformer.attention_flops_per_token`), the slower binding
  (:func:`~mlsys.core.formulas.roofline.roofline_time` with the injection link as the
  memory, Williams et al. 2009);
* the batch at which the two balance,
  :func:`~mlsys.core.formulas.weights.weight_streaming_balanced_batch`.

The injection bandwidth is the device's scale-up link; a device without one (the CS-3 in
the catalog) streams at the book's assumed 100 GB/s
(``calibration.FALLBACK_INTERCONNECT_BANDWIDTH_GB_S``, its estimate; Cerebras lists the
CS-3's system I/O as 1.2 Tb/s, 150 GB/s). The book's per-layer dispatch tax is not added.
"""

from __future__ import annotations

from typing import Any, ClassVar

from mlsys.compat._args import fraction
from mlsys.compat._unwrap import as_catalog, book_peak_flops_s
from mlsys.core.errors import ParameterError
from mlsys.core.formulas.roofline import roofline_time
from mlsys.core.formulas.transformer import attention_flops_per_token, kv_cache_bytes
from mlsys.core.formulas.weights import weight_streaming_balanced_batch
from mlsys.core.results import Result

__all__ = ["WeightStreamingModel", "WeightStreamingResult"]

_PHASES = ("prefill", "decode")
_COMPUTE_BOUND = "Compute-Bound"
_INJECTION_BOUND = "Interconnect-Bandwidth-Bound"


class WeightStreamingResult(Result):
    """What the book's ``WeightStreamingModel().solve`` returns.

    Attributes
    ----------
    feasible : bool
        Whether the KV cache and working set fit in the device's memory.
    constraint_trace : list of str
        The SRAM check, in words.
    throughput_tokens_per_sec : float
        Tokens per second of the pass (0 when infeasible).
    bottleneck : str
        ``"Compute-Bound"`` or ``"Interconnect-Bandwidth-Bound"``.
    layer_compute_time : Quantity [ms]
        One layer's FLOPs at peak times efficiency.
    layer_injection_time : Quantity [ms]
        One layer's weights over the injection bandwidth.
    optimal_batch_size : int
        The batch at which the two balance (at least 1).
    wafer_memory_utilization : float
        Required over available memory.
    """

    _title: ClassVar[str] = "Weight streaming"
    _units: ClassVar[dict[str, str | None]] = {
        "feasible": None,
        "constraint_trace": None,
        "throughput_tokens_per_sec": None,
        "bottleneck": None,
        "layer_compute_time": "ms",
        "layer_injection_time": "ms",
        "optimal_batch_size": None,
        "wafer_memory_utilization": None,
    }


def _injection_bandwidth_Bps(accelerator: Any) -> float:
    """The bandwidth weights stream in at: the scale-up link, else the book's 100 GB/s.

    Parameters
    ----------
    accelerator : Accelerator
        A catalog accelerator.

    Returns
    -------
    float
        Bytes per second.
    """
    from mlsys.compat.systems import calibration as cal

    link = float(getattr(accelerator, "scaleup_bandwidth_Bps", 0.0) or 0.0)
    return link if link > 0.0 else float(cal.FALLBACK_INTERCONNECT_BANDWIDTH_GB_S) * 1e9


def _layer_flops(workload: Any, layer_params: float, seq_len: int, batch: int, phase: str) -> float:
    d_attn = workload.heads * workload.head_dim
    if phase == "prefill":  # every token of every sequence, causal attention
        attention = seq_len * attention_flops_per_token(1, seq_len, d_attn, causal=True)
        return batch * (2.0 * layer_params * seq_len + attention)
    # one new token per sequence against seq_len cached keys
    attention = attention_flops_per_token(1, seq_len, d_attn, causal=False)
    return batch * (2.0 * layer_params + attention)


def _trace(feasible: bool, required_b: float, capacity_b: float, name: str) -> str:
    verdict = "Passed" if feasible else "FAILED"
    sign = "<=" if feasible else ">"
    return (
        f"SRAM Wall: {verdict}. Required {required_b / 1e9:.2f} GB (KV cache + working set) "
        f"{sign} Available {capacity_b / 1e9:.2f} GB on {name}."
    )


class WeightStreamingModel:
    """The book's WeightStreamingModel: SRAM fit, injection against compute, balanced batch."""

    def solve(
        self,
        model: Any,
        hardware: Any,
        seq_len: int,
        batch_size: int = 1,
        precision: str = "fp16",
        efficiency: float = 0.5,
        phase: str = "decode",
    ) -> WeightStreamingResult:
        """Throughput of a wafer that streams each layer's weights in and keeps the KV cache.

        Parameters
        ----------
        model : BookModel or TransformerWorkload
            A transformer in the catalog.
        hardware : BookDevice, BookAccelerator or Accelerator
            The device: its memory holds the KV cache, its peak computes, its scale-up
            link (else the book's 100 GB/s) injects weights.
        seq_len : int
            Tokens per sequence (prefilled, or cached when decoding).
        batch_size : int
            Sequences.
        precision : str
            Weights and KV cache precision; the peak read at it (else the 16-bit peak).
        efficiency : float
            Share of peak the layers sustain, in (0, 1].
        phase : str
            ``"decode"`` (one token per sequence) or ``"prefill"`` (all ``seq_len``).

        Returns
        -------
        WeightStreamingResult

        Raises
        ------
        ParameterError
            For a model that is not a transformer, counts that are not whole numbers of
            at least 1, an efficiency outside (0, 1] or an unknown phase.

        References
        ----------
        Lie (2022), "Cerebras Architecture Deep Dive", Hot Chips 34 (weight streaming from
        MemoryX over SwarmX); Williams, Waterman & Patterson (2009), "Roofline", CACM 52(4).

        Examples
        --------
        Llama-3 70B decoding 8 sequences of 8,192 tokens on a CS-3: 21.5 GB of KV cache
        (23.6 GB with the working set) fits its 44 GB; each layer's 1.76 GB of fp16
        weights takes 17.6 ms to stream at 100 GB/s and 0.26 µs to compute, so injection
        binds: 80 layers, 1.41 s per step, 5.7 tokens/s; a batch of 625,000 would balance.

        >>> from mlsys import Hardware, Models
        >>> res = WeightStreamingModel().solve(Models.Language.Llama3_70B,
        ...                                    Hardware.Cloud.Cerebras_CS3, 8192, 8)
        >>> res.bottleneck, res.optimal_batch_size
        ('Interconnect-Bandwidth-Bound', 625000)
        """
        from mlsys.compat.systems import calibration as cal
        from mlsys.core.checks import positive_int
        from mlsys.core.precision import bytes_per_element

        workload, accelerator = as_catalog(model), as_catalog(hardware)
        if not all(getattr(workload, a, None) for a in ("layers", "heads", "head_dim")):
            raise ParameterError("model", model, "a transformer (layers, heads, head_dim)")
        seq, batch = positive_int("seq_len", seq_len), positive_int("batch_size", batch_size)
        if phase not in _PHASES:
            raise ParameterError("phase", phase, f"one of {list(_PHASES)}")
        eff = fraction(efficiency, "efficiency")
        width_b = float(bytes_per_element(precision))
        layers = int(workload.layers)
        kv_heads = workload.kv_heads or workload.heads
        kv_b = float(kv_cache_bytes(layers, kv_heads, workload.head_dim, seq, batch, width_b))
        required_b = kv_b * (1.0 + float(cal.WEIGHT_STREAMING_WORKING_SET_FRACTION))
        capacity_b = float(accelerator.memory_bytes)
        feasible = required_b <= capacity_b

        layer_params = float(workload.parameters.magnitude) / layers
        compute_rate = book_peak_flops_s(accelerator, precision) * eff
        inject_Bps = _injection_bandwidth_Bps(accelerator)
        flops = _layer_flops(workload, layer_params, seq, batch, phase)
        compute_s, inject_s = flops / compute_rate, layer_params * width_b / inject_Bps
        step_s = float(roofline_time(flops, layer_params * width_b, compute_rate, inject_Bps))
        tokens = batch * seq if phase == "prefill" else batch
        balanced = weight_streaming_balanced_batch(width_b, compute_rate, inject_Bps)
        return WeightStreamingResult(
            feasible=feasible,
            constraint_trace=[_trace(feasible, required_b, capacity_b, accelerator.name)],
            throughput_tokens_per_sec=tokens / (step_s * layers) if feasible else 0.0,
            bottleneck=_COMPUTE_BOUND if compute_s >= inject_s else _INJECTION_BOUND,
            layer_compute_time=compute_s * 1e3,
            layer_injection_time=inject_s * 1e3,
            optimal_batch_size=max(1, int(balanced)),
            wafer_memory_utilization=required_b / capacity_b,
        )
