"""Hover texts of the lab's derived numbers: what was computed, from which solver's result.

A number the lab derives from solver results (a ratio of two throughputs, a month's share
of a yearly cost) is a new float that no longer knows its solver. :func:`derived` names
the arithmetic and the results it used, so the chapter's ``fmt(..., source=...)`` can say
both.
"""

from __future__ import annotations

from typing import Any

from mlsys.core.provenance import MAX_TITLE_CHARS, CatalogOrigin, ResultOrigin, TextOrigin

__all__ = ["derived"]


def derived(what: str, *origins: Any) -> TextOrigin:
    """An origin for a value computed from solver results: ``what``, then each result's origin.

    Parameters
    ----------
    what : str
        The arithmetic in words ("samples/s at 256 GPUs ÷ at 32 GPUs").
    *origins : origin, Result, catalog entry, Track or str
        Where its inputs came from: solver results or their origins, catalog entries (their
        default source), the lab's tracks (their scenario) or texts.

    Returns
    -------
    mlsys.core.provenance.TextOrigin
        ``"what, from: origin; origin"``.

    Examples
    --------
    >>> derived("1 − goodput", "ReliabilityModel(...)").describe()
    '1 − goodput, from ReliabilityModel(...)'
    """
    parts = []
    for origin in origins:
        found = getattr(origin, "origin", origin)  # a Result (or a Track) gives its own
        if isinstance(found, (CatalogOrigin, ResultOrigin, TextOrigin)):
            parts.append(found.describe())
        elif isinstance(found, str):
            parts.append(found)
        elif hasattr(found, "provenance_of"):  # a catalog entry: its default source
            parts.append(CatalogOrigin(found, "default").describe())
    text = f"{what}, from " + "; ".join(parts) if parts else what
    return TextOrigin(_shortened(text))


def _shortened(text: str) -> str:
    """``text`` within the tooltip's length, cut after a whole source rather than mid-word.

    A tooltip longer than :data:`mlsys.core.provenance.MAX_TITLE_CHARS` would be cut
    wherever the limit falls ("… InfiniBand" becoming "… Inf…"); dropping whole trailing
    sources keeps every name whole.
    """
    limit = MAX_TITLE_CHARS - 2
    while len(text) > limit and "; " in text:
        text = text.rsplit("; ", 1)[0]
    if len(text) > limit:
        text = text[:limit].rsplit(" ", 1)[0]
    return text
