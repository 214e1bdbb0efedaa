"""``mlsys.registry``: the module the textbook's older chapters import ``start_chapter`` from.

*Machine Learning Systems* (harvard-edge/cs249r_book) opens its older chapters with
``from mlsys.registry import start_chapter``; the function lives in
:mod:`mlsys.compat.registry` and is re-exported here so those imports need no rewrite.
"""

from __future__ import annotations

from mlsys.compat.registry import current_chapter, start_chapter

__all__ = ["current_chapter", "start_chapter"]
