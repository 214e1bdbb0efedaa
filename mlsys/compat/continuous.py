"""The textbook's continuous-batching model: how many requests a paged KV cache holds.

*Machine Learning Systems* (harvard-edge/cs249r_book) calls
``ContinuousBatchingModel().solve(model, hardware, seq_len, max_batch_size=1,
page_size=16, precision="fp16")`` and reads ``max_active_requests``,
``throughput_tokens_per_sec``, ``ttft``, ``itl`` and ``speedup_vs_static``. mlsys's own
:class:`mlsys.ContinuousBatchingModel` answers a different question (a Poisson request
stream in steady state), so the book's call shape is served here from mlsys's pieces:

* the requests that fit: the memory left after the weights (mlsys's usable capacity)
  over one sequence's KV cache in whole pages
  (:func:`~mlsys.core.formulas.serving.max_sequences_in_memory`,
  :func:`~mlsys.core.formulas.serving.paged_kv_blocks`,
  :func:`~mlsys.core.formulas.transformer.kv_cache_bytes`), at most ``max_batch_size``;
* the time to first token and the inter-token latency of that batch: mlsys's
  :class:`~mlsys.ServingModel`;
* the speed-up over static batching: the book's reading of Kwon et al. (2023), a static
  allocator holding 60% of the paged batch.
"""

from __future__ import annotations

from typing import Any, ClassVar

from mlsys.compat._args import solve_options
from mlsys.compat._unwrap import as_catalog
from mlsys.core.errors import ParameterError
from mlsys.core.formulas.serving import (
    max_sequences_in_memory,
    paged_kv_blocks,
    paged_kv_waste_fraction,
)
from mlsys.core.formulas.transformer import kv_cache_bytes
from mlsys.core.results import Result

__all__ = ["BookContinuousBatchingResult", "ContinuousBatchingModel"]

#: Batch a static (maximum-length) allocator holds, as a fraction of the paged batch: the
#: book's reading of Kwon et al. (2023), SOSP, Sec. 2.3 and Fig. 2, where existing systems
#: keep only 20-38% of their KV memory for token states against about 96% with paging.
STATIC_BATCH_FRACTION = 0.6


class BookContinuousBatchingResult(Result):
    """What the book's ``ContinuousBatchingModel().solve`` returns.

    Attributes
    ----------
    feasible : bool
        At least one request fits beside the weights.
    max_active_requests : int
        Sequences decoded together: the KV caches that fit, at most ``max_batch_size``.
    throughput_tokens_per_sec : float
        ``max_active_requests / itl``.
    memory_fragmentation_pct : float
        Percent of a sequence's paged KV slots left empty (its last page).
    paged_kv_cache_size : Quantity [B]
        KV bytes of the active requests, whole pages.
    ttft, itl : Quantity [s] or None
        mlsys's serving latencies at that batch (None when nothing fits).
    speedup_vs_static : float
        Throughput over that of a static allocator's batch (60% of the paged one).
    """

    _title: ClassVar[str] = "Continuous batching (paged KV)"
    _units: ClassVar[dict[str, str | None]] = {
        "feasible": None,
        "max_active_requests": None,
        "throughput_tokens_per_sec": None,
        "memory_fragmentation_pct": None,
        "paged_kv_cache_size": "B",
        "ttft": "s",
        "itl": "s",
        "speedup_vs_static": None,
    }


def _serving(model: Any, hardware: Any, seq_len: int, batch: int, options: dict) -> Any:
    from mlsys.core.solvers.serving import ServingModel

    return ServingModel().solve(
        model, hardware, batch_size=batch, prompt_len=seq_len, price_infeasible=True, **options
    )


def _kv_bytes_per_paged_sequence(model: Any, seq_len: int, page: int, precision: str) -> float:
    from mlsys.core.precision import bytes_per_element

    for field in ("layers", "kv_heads", "head_dim"):
        if getattr(model, field, None) is None:
            raise ParameterError("model", model, f"a transformer with {field} in the catalog")
    slots = paged_kv_blocks(seq_len, page) * page
    return float(
        kv_cache_bytes(
            model.layers, model.kv_heads, model.head_dim, slots, 1, bytes_per_element(precision)
        )
    )


class ContinuousBatchingModel:
    """The book's ContinuousBatchingModel: requests a paged KV cache holds, and their speed."""

    def solve(
        self,
        model: Any,
        hardware: Any,
        seq_len: int,
        max_batch_size: int = 1,
        page_size: int = 16,
        precision: str = "fp16",
        efficiency: Any = None,
    ) -> BookContinuousBatchingResult:
        """Concurrent requests, token throughput and latencies under PagedAttention.

        Parameters
        ----------
        model : BookModel or TransformerWorkload
            The served transformer (a view of the book's registries is accepted).
        hardware : BookAccelerator or Accelerator
            One accelerator.
        seq_len : int
            Tokens each request holds (its context).
        max_batch_size : int
            Cap on requests decoded together.
        page_size : int
            Tokens per KV page (vLLM's default 16).
        precision : str
            Weights and KV cache.
        efficiency : float, optional
            As :meth:`mlsys.ServingModel.solve` (default mlsys's calibrated
            efficiencies; the book's own default is a flat 0.5).

        Returns
        -------
        BookContinuousBatchingResult

        Raises
        ------
        ParameterError
            For counts that are not whole numbers of at least 1, a model without its
            attention shape in the catalog, and as the serving solver does.
        """
        from mlsys.core.checks import positive_int
        from mlsys.core.precision import bytes_per_element

        seq = positive_int("seq_len", seq_len)
        cap = positive_int("max_batch_size", max_batch_size)
        page = positive_int("page_size", page_size)
        workload, device = as_catalog(model), as_catalog(hardware)
        weights_b = workload.parameters.m_as("count") * bytes_per_element(precision)
        per_seq_b = _kv_bytes_per_paged_sequence(workload, seq, page, precision)
        fits = int(max_sequences_in_memory(device.memory_bytes - weights_b, per_seq_b, 1))
        active = min(fits, cap)
        waste_pct = float(paged_kv_waste_fraction(seq, page)) * 100.0
        if active < 1:
            return BookContinuousBatchingResult(
                feasible=False,
                max_active_requests=0,
                throughput_tokens_per_sec=0.0,
                memory_fragmentation_pct=waste_pct,
                paged_kv_cache_size=0.0,
                ttft=None,
                itl=None,
                speedup_vs_static=1.0,
            )
        options = solve_options(precision, efficiency)
        paged = _serving(workload, device, seq, active, options)
        throughput = active / paged.si("itl")
        static_batch = max(1, int(active * STATIC_BATCH_FRACTION))
        static = _serving(workload, device, seq, static_batch, options)
        return BookContinuousBatchingResult(
            feasible=True,
            max_active_requests=active,
            throughput_tokens_per_sec=throughput,
            memory_fragmentation_pct=waste_pct,
            paged_kv_cache_size=active * per_seq_b,
            ttft=paged.si("ttft"),
            itl=paged.si("itl"),
            speedup_vs_static=throughput / (static_batch / static.si("itl")),
        )
