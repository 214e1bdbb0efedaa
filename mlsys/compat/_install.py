"""Hang the textbook's views on the catalog registries (run once, when mlsys is imported).

The catalog (:mod:`mlsys.core.catalog`) imports nothing of the layers above it; the
textbook *Machine Learning Systems* (harvard-edge/cs249r_book) still reads
``Hardware.Cloud.H100``, ``Models.Vision.ResNet50``, ``Models.GPT3.training_ops`` and
``Models.ResNet50.parameters`` on the registries themselves. :func:`install` registers
those views with the catalog's own extension points (``Registry.add_group`` and
:func:`mlsys.core.catalog.set_workload_view`); each view's module is imported when the
view is first read, so importing mlsys stays cheap.
"""

from __future__ import annotations

from typing import Any

from mlsys.core.catalog import Hardware, Models, set_workload_view

__all__ = ["install"]

_TIERS = ("Cloud", "Edge", "Mobile", "Tiny", "Workstation")
_FAMILIES = ("Vision", "Language", "Tiny", "Recommendation", "StateSpace", "GenerativeVision")
# The older chapters read three models on the registry with the book's names
# (Models.GPT3.training_ops, Models.GPT2.parameters, Models.DLRM.model_size): book views.
# Item lookup (Models["GPT3"]) still returns the catalog entry itself.
_BOOK_MODELS = (("GPT2", "GPT2_XL"), ("GPT3", "GPT3_175B"), ("DLRM", None))


def _hardware_group(tier: str | None) -> Any:
    from mlsys.compat.hardware import hardware_group, tech_group

    return tech_group() if tier is None else hardware_group(tier)


def _model_group(family: str) -> Any:
    from mlsys.compat.models import model_group

    return model_group(family)


def _book_model(*args: str) -> Any:
    from mlsys.compat.models import BookModel

    return BookModel(*args)


def _workload_view(key: str) -> Any:
    return _book_model(key, key)


def install() -> None:
    """Register the textbook's groups and workload names on the catalog (idempotent)."""
    for tier in _TIERS:
        Hardware.add_group(tier, lambda t=tier: _hardware_group(t))
    Hardware.add_group("Tech", lambda: _hardware_group(None))
    for family in _FAMILIES:
        Models.add_group(family, lambda f=family: _model_group(f))
    for book, key in _BOOK_MODELS:
        args = (book, key) if key else (book,)
        Models.add_group(book, lambda a=args: _book_model(*a))
    set_workload_view(_workload_view)
