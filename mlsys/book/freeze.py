"""Which chapters Quarto would not execute: its ``freeze`` option and frozen results.

With ``execute: freeze: auto`` in a project, ``quarto render`` re-executes a document only
when its source changed since its results were frozen; with ``freeze: true`` it never
re-executes a document that has frozen results. ``mlsys check --execute`` follows the
same rule (unless ``--no-freeze``), so it runs exactly the chapters the next render would
run, and no others.

Quarto's rule, read from its source (quarto-cli ``src/command/render/freeze.ts``,
functions ``freezeResultFile``, ``defrostExecuteResult`` and ``freezeInputHash``): the
results of ``<project>/<dir>/<name>.qmd`` rendered to a format whose output extension is
``ext`` live in ``<project>/_freeze/<dir>/<name>/execute-results/<ext>.json``, a JSON object
``{"hash": ..., "result": ...}``; ``hash`` is the MD5 hex digest of the source text with
its line endings turned into LF. The frozen results are used when ``freeze`` is true, or
when it is ``auto`` and the stored hash equals the hash of the source now.

What this does not see: a change in mlsys itself does not make a frozen chapter stale
(Quarto does not see it either: delete ``_freeze`` or run ``--no-freeze`` after a change
to the package). The static check still reads every chapter, frozen or not.

Examples
--------
>>> import hashlib
>>> source_hash("x = 1\\r\\n") == hashlib.md5(b"x = 1\\n").hexdigest()
True
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "FrozenChapter",
    "source_hash",
    "project_dir",
    "freeze_setting",
    "frozen_results",
    "frozen_chapter",
    "split_frozen",
]

_PROJECT_FILES = ("_quarto.yml", "_quarto.yaml")
_FREEZE_DIR = "_freeze"  # Quarto's kProjectFreezeDir
_RESULTS_DIR = "execute-results"  # Quarto's kFreezeExecuteResults


@dataclass(frozen=True)
class FrozenChapter:
    """A chapter whose frozen results Quarto would use instead of executing it.

    Attributes
    ----------
    path : Path
        The .qmd file.
    results : tuple of Path
        Its frozen result files (one per output format: ``html.json``, ``tex.json``).
    freeze : bool or str
        The ``freeze`` setting that applies to it (``True`` or ``"auto"``).
    """

    path: Path
    results: tuple[Path, ...]
    freeze: bool | str


def source_hash(text: str) -> str:
    """The hash Quarto stores with frozen results: MD5 of the text with LF line endings.

    Parameters
    ----------
    text : str
        The .qmd source.

    Returns
    -------
    str
        32 hex digits (quarto-cli ``freezeInputHash``).
    """
    lf = text.replace("\r\n", "\n").replace("\r", "\n")
    return hashlib.md5(lf.encode("utf-8")).hexdigest()


def project_dir(path: str | Path) -> Path | None:
    """The Quarto project a file belongs to: the nearest directory with ``_quarto.yml``.

    Parameters
    ----------
    path : str or Path
        A .qmd file.

    Returns
    -------
    Path or None
        None when the file is not inside a project (Quarto freezes only projects).
    """
    for parent in Path(path).resolve().parents:
        if any((parent / name).is_file() for name in _PROJECT_FILES):
            return parent
    return None


def _yaml(path: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    return data if isinstance(data, dict) else {}


def _freeze_in(meta: dict[str, Any]) -> bool | str | None:
    execute = meta.get("execute")
    if isinstance(execute, dict) and "freeze" in execute:
        value = execute["freeze"]
        return value if value in (True, False, "auto") else None
    return None


def freeze_setting(path: str | Path, project: Path | None = None) -> bool | str:
    """The ``execute: freeze`` value Quarto applies to a document.

    Later settings override earlier ones as in Quarto's metadata merge: the project's
    ``_quarto.yml``, then each ``_metadata.yml`` from the project directory down to the
    document's, then the document's front matter.

    Parameters
    ----------
    path : str or Path
        The .qmd file.
    project : Path, optional
        Its project directory (default: :func:`project_dir`).

    Returns
    -------
    bool or str
        ``False`` (always execute), ``True`` (never re-execute) or ``"auto"``.
    """
    from mlsys.book.qmd import read_qmd

    path = Path(path).resolve()
    project = project or project_dir(path)
    if project is None:
        return False
    setting: bool | str = False
    metas = [project / name for name in _PROJECT_FILES]
    directory = project
    for part in path.parent.relative_to(project).parts:
        directory = directory / part
        metas.append(directory / "_metadata.yml")
    metas.insert(len(_PROJECT_FILES), project / "_metadata.yml")
    for meta in metas:
        if meta.is_file():
            value = _freeze_in(_yaml(meta))
            setting = setting if value is None else value
    try:
        own = _freeze_in(read_qmd(path).front_matter)
    except (OSError, UnicodeDecodeError):
        own = None
    return setting if own is None else own


def frozen_results(path: str | Path, project: Path | None = None) -> list[Path]:
    """The frozen result files of a document, one per format it was rendered to.

    Parameters
    ----------
    path : str or Path
        The .qmd file.
    project : Path, optional
        Its project directory (default: :func:`project_dir`).

    Returns
    -------
    list of Path
        ``<project>/_freeze/<dir>/<name>/execute-results/*.json``; empty when none.
    """
    path = Path(path).resolve()
    project = project or project_dir(path)
    if project is None:
        return []
    stem = path.relative_to(project).with_suffix("")
    return sorted((project / _FREEZE_DIR / stem / _RESULTS_DIR).glob("*.json"))


def frozen_chapter(path: str | Path) -> FrozenChapter | None:
    """The chapter's frozen results when ``quarto render`` of its project would use them.

    Parameters
    ----------
    path : str or Path
        The .qmd file.

    Returns
    -------
    FrozenChapter or None
        None when Quarto would execute the chapter: ``freeze`` is false, no frozen
        result exists, or (``freeze: auto``) one of them was frozen from another source
        text than the one on disk now, or cannot be read.
    """
    path = Path(path)
    project = project_dir(path)
    if project is None:
        return None
    setting = freeze_setting(path, project)
    if setting is False:
        return None
    results = frozen_results(path, project)
    if not results:
        return None
    if setting == "auto":
        try:
            now = source_hash(path.read_text(encoding="utf-8"))
            for result in results:
                if json.loads(result.read_text(encoding="utf-8")).get("hash") != now:
                    return None
        except (OSError, ValueError, AttributeError):
            return None
    return FrozenChapter(path=path, results=tuple(results), freeze=setting)


def split_frozen(paths: Sequence[str | Path]) -> tuple[list[Path], list[FrozenChapter]]:
    """Split chapters into those Quarto would execute and those it would take frozen.

    Parameters
    ----------
    paths : sequence of str or Path
        .qmd files.

    Returns
    -------
    tuple of (list of Path, list of FrozenChapter)
        The chapters to execute, in the given order, and the frozen ones.
    """
    run: list[Path] = []
    frozen: list[FrozenChapter] = []
    for p in paths:
        chapter = frozen_chapter(p)
        if chapter is None:
            run.append(Path(p))
        else:
            frozen.append(chapter)
    return run, frozen
