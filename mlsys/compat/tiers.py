"""``Tiers``: the textbook's four deployment tiers, each the hardware the book puts there.

*Machine Learning Systems* (harvard-edge/cs249r_book) names ``Tiers.Cloud``,
``Tiers.Edge``, ``Tiers.Mobile`` and ``Tiers.Tiny``; each is the matching group of
:data:`mlsys.Hardware` (``Hardware.Cloud`` ...), so a tier lists the same views.
"""

from __future__ import annotations

from mlsys.compat._namespace import Namespace

__all__ = ["Tiers"]


def _tier(name: str) -> object:
    from mlsys.core.catalog import Hardware

    return getattr(Hardware, name)


Tiers = Namespace(
    "Tiers",
    {name: (lambda n=name: _tier(n)) for name in ("Cloud", "Edge", "Mobile", "Tiny")},
    lazy=True,
)
"""Deployment tiers: ``Tiers.Cloud`` is ``Hardware.Cloud`` (a namespace of views)."""
