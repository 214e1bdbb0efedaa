"""The catalog object behind a view of the textbook's registries.

The book passes its registry views (``Models.Language.Llama3_8B``,
``Systems.Clusters.Research_256``, ``Hardware.Cloud.H100``) to its solvers; mlsys's
solvers take catalog objects. :func:`as_catalog` is the one translation, shared by every
compat solver (:mod:`mlsys.compat.solvers`, :mod:`mlsys.compat.capacity`,
:mod:`mlsys.compat.placement`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["as_catalog", "book_peak_flops_s"]


def as_catalog(value: Any) -> Any:
    """The catalog object a view of the book's registries shows (anything else unchanged).

    Parameters
    ----------
    value : object
        A book view: a model (its catalog workload, or a ``Workload`` of its cited
        figures), an accelerator or node (the catalog entry), a book device (its
        :meth:`~mlsys.compat.hardware.BookDevice.as_accelerator`), a cluster (a
        :class:`~mlsys.core.types.Fleet` of its nodes on its fabric), a fabric or grid.

    Returns
    -------
    object
        What mlsys's solvers take.
    """
    from mlsys.compat.hardware import BookAccelerator, BookDevice
    from mlsys.compat.models import BookModel
    from mlsys.compat.systems import BookCluster, BookFabric, BookGrid, BookNode

    if isinstance(value, BookModel):
        return value.as_workload()
    if isinstance(value, BookDevice):
        return value.as_accelerator()
    if isinstance(value, (BookAccelerator, BookNode, BookFabric, BookGrid)):
        return value.entry
    if isinstance(value, BookCluster):
        from mlsys.core.types import Fleet

        return Fleet(node=value.node.entry, count=value.count, fabric=value.fabric.entry)
    return value


def book_peak_flops_s(accelerator: Any, precision: str | None) -> float:
    """The catalog accelerator's peak FLOP/s at ``precision``, else its 16-bit peak.

    The book's solvers read ``compute.precision_flops.get(precision, compute.peak_flops)``:
    a precision the device lists no peak for falls back to the default (16-bit) peak.

    Parameters
    ----------
    accelerator : Accelerator
        A catalog accelerator.
    precision : str or None
        ``"fp16"``, ``"int8"``, ...; None for the default peak.

    Returns
    -------
    float
        FLOP/s.
    """
    peaks = accelerator.peak_flops
    for key in (precision, "fp16", "bf16"):
        if key is not None and key in peaks:
            return float(peaks[key].m_as("flop/s"))
    return float(next(iter(peaks.values())).m_as("flop/s"))
