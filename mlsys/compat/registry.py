"""``mlsys.registry.start_chapter``: the textbook's per-chapter bookkeeping call.

The older chapters of *Machine Learning Systems* (harvard-edge/cs249r_book) open with
``start_chapter("vol1:ml_systems")``. mlsys records the current chapter so tools that
collect a book's numbers can group them; it changes no value.
"""

from __future__ import annotations

__all__ = ["start_chapter", "current_chapter"]

_CURRENT: list[str] = []


def start_chapter(chapter_id: str) -> None:
    """Mark the start of a chapter (the book's call; values are unaffected).

    Parameters
    ----------
    chapter_id : str
        The book's chapter identifier, e.g. ``"vol1:ml_systems"``.

    Raises
    ------
    ParameterError
        When ``chapter_id`` is not a non-empty string.
    """
    from mlsys.core.errors import ParameterError

    if not isinstance(chapter_id, str) or not chapter_id.strip():
        raise ParameterError(
            "chapter_id", chapter_id, 'a non-empty string such as "vol1:ml_systems"'
        )
    _CURRENT[:] = [chapter_id]


def current_chapter() -> str | None:
    """The chapter last passed to :func:`start_chapter`, or ``None``.

    Returns
    -------
    str or None
    """
    return _CURRENT[0] if _CURRENT else None
